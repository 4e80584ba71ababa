/* kernel/profiler/build_id.h: where the running kernel's build-id note is (kernel/profiler/build_id.c), so the raw profile can
 * name the build it came from and a host tool can refuse to symbolise against another. */
#ifndef KERNEL_PROFILER_BUILD_ID_H
#define KERNEL_PROFILER_BUILD_ID_H

#include <stddef.h>

/* The kernel's build-id note section (linker symbols __build_id_note and __build_id_note_end in
 * arch/x86_64/linker.ld) and its length in *len. */
const void *kernel_build_id_note(size_t *len);

#endif
