/* tests/fuzz/fuzz_multiboot.c: the multiboot2 information parser (arch/x86_64/multiboot.c) on arbitrary tag
 * lists -- the bytes a boot loader leaves in memory, the first outside input the kernel reads. The input is
 * the information structure itself, its total_size set to the input's length and copied into an 8-aligned
 * buffer of exactly that size (as GRUB aligns it), so AddressSanitizer catches any read past the end. After
 * the walk: both strings are NUL-terminated inside their arrays, the map and RSDP counts are within their
 * arrays, every usable range was copied from an available entry really present in the input, and
 * boot_ram_usable agrees with a model that cannot overflow. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "arch/x86_64/arch.h"
#include "fuzz.h"

/* The model: [base, base + length) inside one usable range, in 128-bit arithmetic. */
static bool model_usable(uint64_t base, uint64_t length)
{
    for (unsigned i = 0; i < boot_info.usable_count; i++) {
        const struct mem_range *r = &boot_info.usable[i];
        unsigned __int128 end = (unsigned __int128)base + length;
        unsigned __int128 r_end = (unsigned __int128)r->base + r->length;
        if (base >= r->base && end <= r_end)
            return true;
    }
    return false;
}

/* True when the 16 bytes of (base, length) followed by a type of 1 appear somewhere in the input (entries of an
 * odd size sit at any offset). */
static bool range_in_input(const uint8_t *info, size_t size, const struct mem_range *r)
{
    for (size_t at = 8; at + 20 <= size; at++) {
        uint64_t base, length;
        uint32_t type;
        memcpy(&base, info + at, 8);
        memcpy(&length, info + at + 8, 8);
        memcpy(&type, info + at + 16, 4);
        if (base == r->base && length == r->length && type == 1)
            return true;
    }
    return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 8 || size > 1 << 16)
        return 0;
    uint8_t *info = aligned_alloc(8, (size + 7) & ~(size_t)7);
    memcpy(info, data, size);
    uint32_t total = (uint32_t)size;
    memcpy(info, &total, 4);

    memset(&boot_info, 0, sizeof boot_info);
    multiboot_parse((uintptr_t)info);

    CHECK(memchr(boot_info.cmdline, 0, sizeof boot_info.cmdline) != NULL);
    CHECK(memchr(boot_info.loader, 0, sizeof boot_info.loader) != NULL);
    CHECK(boot_info.usable_count <= BOOT_MAX_RANGES);
    CHECK(boot_info.rsdp_len <= sizeof boot_info.rsdp);
    CHECK(boot_info.efi == 0 || boot_info.efi == 32 || boot_info.efi == 64);
    for (unsigned i = 0; i < boot_info.usable_count; i++)
        CHECK(range_in_input(info, size, &boot_info.usable[i]));

    /* The AP trampoline's page, the heap's typical start, and ranges at the top of the address space. */
    static const uint64_t probes[][2] = {
        { 0x8000, 4096 }, { 0x100000, 1 << 20 }, { 0, 1 }, { UINT64_MAX - 4095, 4096 }, { UINT64_MAX, 2 },
        { 1ull << 63, 1ull << 63 },
    };
    for (size_t i = 0; i < sizeof probes / sizeof probes[0]; i++)
        CHECK(boot_ram_usable(probes[i][0], probes[i][1]) == model_usable(probes[i][0], probes[i][1]));
    for (unsigned i = 0; i < boot_info.usable_count; i++) {
        const struct mem_range *r = &boot_info.usable[i];
        CHECK(boot_ram_usable(r->base, r->length / 2) == model_usable(r->base, r->length / 2));
    }
    free(info);
    return 0;
}
