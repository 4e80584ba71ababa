/* arch/x86_64/multiboot.c: reads the multiboot2 information GRUB left in memory -- the command line, the
 * memory map, the ACPI RSDP, the loader's name, the framebuffer and whether the firmware was UEFI -- and
 * copies what the kernel needs into boot_info before anything can overwrite GRUB's structures (the AP
 * trampoline, the heap). */
#include "arch/x86_64/arch.h"
#include "kernel/lib/string.h"

#define MB2_TAG_END 0
#define MB2_TAG_CMDLINE 1
#define MB2_TAG_LOADER_NAME 2
#define MB2_TAG_MMAP 6
#define MB2_TAG_FRAMEBUFFER 8
#define MB2_TAG_EFI32 11          /* EFI 32-bit system table pointer */
#define MB2_TAG_EFI64 12          /* EFI 64-bit system table pointer */
#define MB2_TAG_ACPI_OLD 14
#define MB2_TAG_ACPI_NEW 15
#define MB2_TAG_EFI_BS 18         /* boot services left running (only if the image asks; ours does not) */
#define MB2_TAG_EFI32_IH 19       /* EFI image handles */
#define MB2_TAG_EFI64_IH 20
#define MB2_MEMORY_AVAILABLE 1

struct boot_info boot_info;

struct mb2_tag {
    uint32_t type;
    uint32_t size;
};

/* The framebuffer tag up to its colour information (multiboot2 spec 3.6.12). */
struct mb2_framebuffer {
    uint32_t type, size;
    uint64_t addr;
    uint32_t pitch, width, height;
    uint8_t bpp, fb_type;
    uint16_t reserved;
    uint8_t red_pos, red_size, green_pos, green_size, blue_pos, blue_size; /* fb_type 1 (RGB) only */
} __attribute__((packed));

struct mb2_mmap_entry {
    uint64_t base;
    uint64_t length;
    uint32_t type;
    uint32_t reserved;
};

/* A string tag's text: GRUB NUL-terminates it, but it is never read past the tag's end. */
static void copy_tag_string(char *dst, size_t size, uintptr_t at, uint32_t tag_size)
{
    const char *src = (const char *)(at + 8);
    size_t len = strnlen(src, tag_size - 8);
    if (len >= size)
        len = size - 1;
    memcpy(dst, src, len);
    dst[len] = 0;
}

/* The memory map tag: every available range, up to BOOT_MAX_RANGES. */
static void read_mmap(uintptr_t at, uint32_t tag_size)
{
    if (tag_size < 16)
        return;
    uint32_t entry_size = *(const uint32_t *)(at + 8);
    if (entry_size < sizeof(struct mb2_mmap_entry))
        return;
    /* Copied out, not cast: an entry size that is not a multiple of 8 leaves entries misaligned. */
    for (uintptr_t e = at + 16; e + entry_size <= at + tag_size; e += entry_size) {
        struct mb2_mmap_entry m;
        memcpy(&m, (const void *)e, sizeof m);
        if (m.type == MB2_MEMORY_AVAILABLE && boot_info.usable_count < BOOT_MAX_RANGES)
            boot_info.usable[boot_info.usable_count++] = (struct mem_range){ m.base, m.length };
    }
}

/* The framebuffer tag: its geometry, and the colour layout only where the tag is RGB and long enough. */
static void read_framebuffer(uintptr_t at, uint32_t tag_size)
{
    const struct mb2_framebuffer *fb = (const struct mb2_framebuffer *)at;
    if (tag_size < offsetof(struct mb2_framebuffer, red_pos))
        return;
    boot_info.fb.present = true;
    boot_info.fb.type = fb->fb_type;
    boot_info.fb.addr = fb->addr;
    boot_info.fb.pitch = fb->pitch;
    boot_info.fb.width = fb->width;
    boot_info.fb.height = fb->height;
    boot_info.fb.bpp = fb->bpp;
    if (fb->fb_type == BOOT_FB_RGB && tag_size >= sizeof *fb) {
        boot_info.fb.red_pos = fb->red_pos;
        boot_info.fb.green_pos = fb->green_pos;
        boot_info.fb.blue_pos = fb->blue_pos;
        boot_info.fb.red_size = fb->red_size;
        boot_info.fb.green_size = fb->green_size;
        boot_info.fb.blue_size = fb->blue_size;
    }
}

/* An ACPI tag's copy of the RSDP: a v2 RSDP wins over the v1 copy. */
static void read_rsdp(uintptr_t at, uint32_t tag_type, uint32_t tag_size)
{
    uint32_t len = tag_size - 8;
    if (len > sizeof boot_info.rsdp)
        len = sizeof boot_info.rsdp;
    if (tag_type == MB2_TAG_ACPI_NEW || boot_info.rsdp_len == 0) {
        memcpy(boot_info.rsdp, (const void *)(at + 8), len);
        boot_info.rsdp_len = len;
    }
}

void multiboot_parse(uintptr_t info_phys)
{
    uint32_t total = *(const uint32_t *)info_phys;
    uintptr_t end = info_phys + total;
    uintptr_t at = info_phys + 8;

    while (at + sizeof(struct mb2_tag) <= end) {
        const struct mb2_tag *tag = (const struct mb2_tag *)at;
        if (tag->type == MB2_TAG_END || tag->size < 8 || tag->size > end - at)
            break;
        switch (tag->type) {
        case MB2_TAG_CMDLINE:
            copy_tag_string(boot_info.cmdline, sizeof boot_info.cmdline, at, tag->size);
            break;
        case MB2_TAG_MMAP:
            read_mmap(at, tag->size);
            break;
        case MB2_TAG_LOADER_NAME:
            copy_tag_string(boot_info.loader, sizeof boot_info.loader, at, tag->size);
            break;
        case MB2_TAG_FRAMEBUFFER:
            read_framebuffer(at, tag->size);
            break;
        /* Only a loader started by UEFI firmware hands over a system table or an image handle: that is how
         * the kernel knows which firmware booted it (the BIOS path has no tag of its own). */
        case MB2_TAG_EFI32:
        case MB2_TAG_EFI32_IH:
            boot_info.efi = boot_info.efi ? boot_info.efi : 32;
            break;
        case MB2_TAG_EFI64:
            boot_info.efi = 64;
            if (tag->size >= 16)
                boot_info.efi_system_table = *(const uint64_t *)(at + 8);
            break;
        case MB2_TAG_EFI64_IH:
            boot_info.efi = 64;
            break;
        case MB2_TAG_EFI_BS:
            boot_info.efi_boot_services = true;
            break;
        case MB2_TAG_ACPI_NEW:
        case MB2_TAG_ACPI_OLD:
            read_rsdp(at, tag->type, tag->size);
            break;
        default:
            break;
        }
        at += (tag->size + 7) & ~7u;
    }
}

bool boot_ram_usable(uint64_t base, uint64_t length)
{
    for (unsigned i = 0; i < boot_info.usable_count; i++) {
        const struct mem_range *r = &boot_info.usable[i];
        /* Offsets within the range, never sums: base + length can wrap past 2^64 and pass for a small end
         * (found by tests/fuzz/fuzz_multiboot.c). */
        if (base >= r->base && length <= r->length && base - r->base <= r->length - length)
            return true;
    }
    return false;
}
