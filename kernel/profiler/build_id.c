/* kernel/profiler/build_id.c: the running kernel's GNU build-id note (kernel/profiler/build_id.h), as the linker script
 * brackets it. Kernel only: host tests that need a note supply their own kernel_build_id_note(). */
#include "kernel/profiler/build_id.h"

/* Defined by arch/x86_64/linker.ld around the .note.gnu.build-id section (ld --build-id, scripts/link.sh). */
extern const unsigned char __build_id_note[], __build_id_note_end[];

const void *kernel_build_id_note(size_t *len)
{
    *len = (size_t)(__build_id_note_end - __build_id_note);
    return __build_id_note;
}
