/* arch/x86_64/multiboot.c: reads the multiboot2 information GRUB left in memory -- the command line, the
 * memory map and the ACPI RSDP -- and copies what the kernel needs into boot_info before anything can
 * overwrite GRUB's structures (the AP trampoline, the heap). */
#include "arch/x86_64/arch.h"
#include "kernel/string.h"

#define MB2_TAG_END 0
#define MB2_TAG_CMDLINE 1
#define MB2_TAG_MMAP 6
#define MB2_TAG_ACPI_OLD 14
#define MB2_TAG_ACPI_NEW 15
#define MB2_MEMORY_AVAILABLE 1

struct boot_info boot_info;

struct mb2_tag {
    uint32_t type;
    uint32_t size;
};

struct mb2_mmap_entry {
    uint64_t base;
    uint64_t length;
    uint32_t type;
    uint32_t reserved;
};

void multiboot_parse(uintptr_t info_phys)
{
    uint32_t total = *(const uint32_t *)info_phys;
    uintptr_t end = info_phys + total;
    uintptr_t at = info_phys + 8;

    while (at + sizeof(struct mb2_tag) <= end) {
        const struct mb2_tag *tag = (const struct mb2_tag *)at;
        if (tag->type == MB2_TAG_END || tag->size < 8)
            break;
        switch (tag->type) {
        case MB2_TAG_CMDLINE:
            strlcpy(boot_info.cmdline, (const char *)(at + 8), sizeof boot_info.cmdline);
            break;
        case MB2_TAG_MMAP: {
            uint32_t entry_size = *(const uint32_t *)(at + 8);
            if (entry_size < sizeof(struct mb2_mmap_entry))
                break;
            for (uintptr_t e = at + 16; e + entry_size <= at + tag->size; e += entry_size) {
                const struct mb2_mmap_entry *m = (const struct mb2_mmap_entry *)e;
                if (m->type == MB2_MEMORY_AVAILABLE && boot_info.usable_count < BOOT_MAX_RANGES)
                    boot_info.usable[boot_info.usable_count++] = (struct mem_range){ m->base, m->length };
            }
            break;
        }
        case MB2_TAG_ACPI_NEW:
        case MB2_TAG_ACPI_OLD: {
            /* A v2 RSDP wins over the v1 copy. */
            uint32_t len = tag->size - 8;
            if (len > sizeof boot_info.rsdp)
                len = sizeof boot_info.rsdp;
            if (tag->type == MB2_TAG_ACPI_NEW || boot_info.rsdp_len == 0) {
                memcpy(boot_info.rsdp, (const void *)(at + 8), len);
                boot_info.rsdp_len = len;
            }
            break;
        }
        default:
            break;
        }
        at += (tag->size + 7) & ~7u;
    }
}
