/* tests/unit/test_multiboot.c: arch/x86_64/multiboot.c on multiboot2 information built here the way GRUB lays
 * it out -- a BIOS boot (EGA text framebuffer, no EFI tag) and a UEFI boot (EFI64 system table and image handle,
 * an RGB framebuffer) -- and on information no loader should write: a name without its NUL, a tag running past
 * the end, a truncated framebuffer tag, a memory map with a zero entry size. Each buffer is allocated to its
 * exact size, so under AddressSanitizer a read past it fails the test. Also boot_ram_usable(), which the AP
 * trampoline's placement is checked with. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "arch/x86_64/arch.h"
#include "unit_main.h"

/* ---- building an information structure ----------------------------------------------------------------- */
struct info {
    uint8_t bytes[4096];
    size_t len;
};

static void info_begin(struct info *b)
{
    memset(b, 0, sizeof *b);
    b->len = 8; /* total_size, reserved */
}

/* Appends a tag: type, size (8 + n, or size_override when non-zero), then n bytes; pads to 8. */
static void tag(struct info *b, uint32_t type, const void *data, uint32_t n, uint32_t size_override)
{
    uint32_t size = size_override ? size_override : 8 + n;
    memcpy(b->bytes + b->len, &type, 4);
    memcpy(b->bytes + b->len + 4, &size, 4);
    memcpy(b->bytes + b->len + 8, data, n);
    b->len += (8 + n + 7) & ~(size_t)7;
}

/* The finished structure (end tag, total_size) in a buffer of exactly its size; free() it. */
static uint8_t *info_end(struct info *b)
{
    tag(b, 0, "", 0, 0);
    uint32_t total = (uint32_t)b->len;
    memcpy(b->bytes, &total, 4);
    uint8_t *exact = malloc(b->len);
    memcpy(exact, b->bytes, b->len);
    return exact;
}

/* Finishes the structure, has multiboot_parse read it, and frees it: what every test does once it is built. */
static void info_end_and_parse(struct info *b)
{
    uint8_t *info = info_end(b);
    multiboot_parse((uintptr_t)info);
    free(info);
}

static void mmap_tag(struct info *b, const uint64_t (*ranges)[3], unsigned count)
{
    uint8_t data[8 + 24 * 8];
    uint32_t entry_size = 24, version = 0;
    memcpy(data, &entry_size, 4);
    memcpy(data + 4, &version, 4);
    for (unsigned i = 0; i < count; i++) {
        uint32_t type = (uint32_t)ranges[i][2], zero = 0;
        memcpy(data + 8 + 24 * i, &ranges[i][0], 8);
        memcpy(data + 8 + 24 * i + 8, &ranges[i][1], 8);
        memcpy(data + 8 + 24 * i + 16, &type, 4);
        memcpy(data + 8 + 24 * i + 20, &zero, 4);
    }
    tag(b, 6, data, 8 + 24 * count, 0);
}

/* The framebuffer tag: common part, then RGB field positions and sizes. */
static void fb_tag(struct info *b, uint64_t addr, uint32_t pitch, uint32_t w, uint32_t h, uint8_t bpp, uint8_t type,
                   uint32_t size_override)
{
    uint8_t data[30] = { 0 };
    memcpy(data, &addr, 8);
    memcpy(data + 8, &pitch, 4);
    memcpy(data + 12, &w, 4);
    memcpy(data + 16, &h, 4);
    data[20] = bpp;
    data[21] = type;
    const uint8_t rgb[6] = { 16, 8, 8, 8, 0, 8 }; /* red at 16, green at 8, blue at 0: OVMF's GOP layout */
    memcpy(data + 24, rgb, 6);
    tag(b, 8, data, type == BOOT_FB_RGB ? 30 : 24, size_override);
}

static int reset(void **state)
{
    (void)state;
    memset(&boot_info, 0, sizeof boot_info);
    return 0;
}

static const uint64_t bios_map[][3] = {
    { 0x0, 0x9fc00, 1 }, { 0x9fc00, 0x400, 2 }, { 0xf0000, 0x10000, 2 }, { 0x100000, 0xfee0000, 1 },
};

/* ---- the tests ------------------------------------------------------------------------------------------ */
/* A structure holding nothing but the BIOS memory map, parsed. */
static void parse_bios_map_only(void)
{
    struct info b;
    info_begin(&b);
    mmap_tag(&b, bios_map, 4);
    info_end_and_parse(&b);
}

static void test_bios_boot(void **state)
{
    (void)state;
    struct info b;
    info_begin(&b);
    tag(&b, 1, "pmu=off", 8, 0);
    tag(&b, 2, "GRUB 2.06-13+deb12u2", 21, 0);
    mmap_tag(&b, bios_map, 4);
    fb_tag(&b, 0xB8000, 160, 80, 25, 16, BOOT_FB_EGA_TEXT, 0);
    uint8_t rsdp[36] = "RSD PTR ";
    rsdp[15] = 2;
    tag(&b, 15, rsdp, 36, 0);
    info_end_and_parse(&b);

    assert_string_equal(boot_info.cmdline, "pmu=off");
    assert_string_equal(boot_info.loader, "GRUB 2.06-13+deb12u2");
    assert_int_equal(boot_info.efi, 0);
    assert_int_equal(boot_info.usable_count, 2);
    assert_true(boot_info.fb.present);
    assert_int_equal(boot_info.fb.type, BOOT_FB_EGA_TEXT);
    assert_int_equal(boot_info.fb.addr, 0xB8000);
    assert_int_equal(boot_info.fb.width, 80);
    assert_int_equal(boot_info.fb.height, 25);
    assert_int_equal(boot_info.rsdp_len, 36);
    assert_memory_equal(boot_info.rsdp, "RSD PTR ", 8);
}

static void test_uefi_boot(void **state)
{
    (void)state;
    struct info b;
    info_begin(&b);
    tag(&b, 2, "GRUB 2.06-13+deb12u2", 21, 0);
    uint64_t system_table = 0xfe0e018, image_handle = 0xe3d1b98;
    tag(&b, 12, &system_table, 8, 0);
    tag(&b, 20, &image_handle, 8, 0);
    static const uint64_t efi_map[][3] = { { 0x0, 0xa0000, 1 }, { 0x100000, 0x700000, 1 }, { 0x800000, 0x8000, 4 } };
    mmap_tag(&b, efi_map, 3);
    fb_tag(&b, 0x80000000u, 5120, 1280, 800, 32, BOOT_FB_RGB, 0);
    info_end_and_parse(&b);

    assert_int_equal(boot_info.efi, 64);
    assert_int_equal(boot_info.efi_system_table, system_table);
    assert_false(boot_info.efi_boot_services);
    assert_true(boot_info.fb.present);
    assert_int_equal(boot_info.fb.type, BOOT_FB_RGB);
    assert_int_equal(boot_info.fb.addr, 0x80000000u);
    assert_int_equal(boot_info.fb.pitch, 5120);
    assert_int_equal(boot_info.fb.width, 1280);
    assert_int_equal(boot_info.fb.height, 800);
    assert_int_equal(boot_info.fb.bpp, 32);
    assert_int_equal(boot_info.fb.red_pos, 16);
    assert_int_equal(boot_info.fb.green_pos, 8);
    assert_int_equal(boot_info.fb.blue_pos, 0);
    assert_int_equal(boot_info.fb.red_size, 8);
    assert_int_equal(boot_info.fb.blue_size, 8);
    assert_int_equal(boot_info.usable_count, 2); /* ACPI NVS (type 4) is not usable */
}

static void test_efi32_tags_say_uefi_32(void **state)
{
    (void)state;
    struct info b;
    info_begin(&b);
    uint32_t table = 0x7f000000;
    tag(&b, 11, &table, 4, 0);
    tag(&b, 18, "", 0, 0); /* boot services left running */
    info_end_and_parse(&b);
    assert_int_equal(boot_info.efi, 32);
    assert_true(boot_info.efi_boot_services);
    assert_false(boot_info.fb.present);
}

static void test_boot_ram_usable(void **state)
{
    (void)state;
    parse_bios_map_only();
    assert_true(boot_ram_usable(0x8000, 0x1000));       /* the AP trampoline's page */
    assert_true(boot_ram_usable(0x9ec00, 0x1000));      /* ends exactly where the range does */
    assert_false(boot_ram_usable(0x9f000, 0x1000));     /* runs into the EBDA */
    assert_false(boot_ram_usable(0xf0000, 0x100));      /* reserved */
    assert_false(boot_ram_usable(0xfff00, 0x200));      /* straddles two ranges */
    assert_true(boot_ram_usable(0x100000, 0xfee0000));
}

/* A query near the top of the address space: base + length wraps past 2^64 and, compared as a sum, would
 * look like a small end inside a usable range (found by tests/fuzz/fuzz_multiboot.c). */
static void test_boot_ram_usable_never_wraps(void **state)
{
    (void)state;
    parse_bios_map_only();
    assert_false(boot_ram_usable(UINT64_MAX, 2));
    assert_false(boot_ram_usable(UINT64_MAX - 0xfff, 0x2000));
    assert_false(boot_ram_usable(0x100000, UINT64_MAX));
    assert_true(boot_ram_usable(0x100000, 0));
}

/* The spec lets entry_size exceed 24 (later versions may add fields); one that is not a multiple of 8 leaves
 * entries misaligned, and they must still be read (under UBSan a cast-and-dereference fails this test). */
static void test_memory_map_entries_of_an_odd_size_are_read(void **state)
{
    (void)state;
    struct info b;
    info_begin(&b);
    uint8_t data[8 + 3 * 25] = { 0 };
    uint32_t entry_size = 25;
    memcpy(data, &entry_size, 4);
    for (unsigned i = 0; i < 3; i++) {
        uint64_t base = 0x100000ull * (i + 1), length = 0x1000ull * (i + 1);
        uint32_t type = i == 1 ? 2 : 1;
        memcpy(data + 8 + 25 * i, &base, 8);
        memcpy(data + 8 + 25 * i + 8, &length, 8);
        memcpy(data + 8 + 25 * i + 16, &type, 4);
    }
    tag(&b, 6, data, sizeof data, 0);
    info_end_and_parse(&b);
    assert_int_equal(boot_info.usable_count, 2);
    assert_int_equal(boot_info.usable[0].base, 0x100000);
    assert_int_equal(boot_info.usable[0].length, 0x1000);
    assert_int_equal(boot_info.usable[1].base, 0x300000);
    assert_int_equal(boot_info.usable[1].length, 0x3000);
}

static void test_unterminated_name_is_bounded_by_its_tag(void **state)
{
    (void)state;
    struct info b;
    info_begin(&b);
    tag(&b, 2, "GRUBGRUB", 8, 0); /* no NUL inside the tag; the next tag's type (1) follows at once */
    tag(&b, 1, "x", 2, 0);
    info_end_and_parse(&b);
    assert_string_equal(boot_info.loader, "GRUBGRUB");
    assert_string_equal(boot_info.cmdline, "x");
}

static void test_long_command_line_is_truncated(void **state)
{
    (void)state;
    char line[700];
    memset(line, 'x', sizeof line - 1);
    line[sizeof line - 1] = 0;
    struct info b;
    info_begin(&b);
    tag(&b, 1, line, sizeof line, 0);
    info_end_and_parse(&b);
    assert_int_equal(strlen(boot_info.cmdline), sizeof boot_info.cmdline - 1);
}

static void test_tag_running_past_the_end_stops_the_walk(void **state)
{
    (void)state;
    struct info b;
    info_begin(&b);
    tag(&b, 2, "GRUB", 5, 0);
    uint64_t table = 0x1234;
    tag(&b, 12, &table, 8, 4000); /* claims 4000 bytes: past the end of the structure */
    info_end_and_parse(&b);
    assert_string_equal(boot_info.loader, "GRUB");
    assert_int_equal(boot_info.efi, 0);
}

static void test_truncated_framebuffer_tag_is_ignored(void **state)
{
    (void)state;
    struct info b;
    info_begin(&b);
    fb_tag(&b, 0x80000000u, 5120, 1280, 800, 32, BOOT_FB_RGB, 24); /* shorter than the common part */
    info_end_and_parse(&b);
    assert_false(boot_info.fb.present);
}

static void test_rgb_framebuffer_without_colour_info_keeps_zero_fields(void **state)
{
    (void)state;
    struct info b;
    info_begin(&b);
    fb_tag(&b, 0x80000000u, 5120, 1280, 800, 32, BOOT_FB_RGB, 32); /* common part only */
    info_end_and_parse(&b);
    assert_true(boot_info.fb.present);
    assert_int_equal(boot_info.fb.red_size, 0);
    assert_int_equal(boot_info.fb.green_size, 0);
}

static void test_memory_map_with_zero_entry_size_is_ignored(void **state)
{
    (void)state;
    struct info b;
    info_begin(&b);
    uint8_t data[8] = { 0 };
    tag(&b, 6, data, 8, 0);
    tag(&b, 6, data, 0, 8); /* too short to hold even the entry size */
    info_end_and_parse(&b);
    assert_int_equal(boot_info.usable_count, 0);
}

UNIT_MAIN_EACH(reset, NULL, NULL, NULL,
               test_bios_boot, test_uefi_boot, test_efi32_tags_say_uefi_32, test_boot_ram_usable,
               test_boot_ram_usable_never_wraps, test_memory_map_entries_of_an_odd_size_are_read,
               test_unterminated_name_is_bounded_by_its_tag, test_long_command_line_is_truncated,
               test_tag_running_past_the_end_stops_the_walk, test_truncated_framebuffer_tag_is_ignored,
               test_rgb_framebuffer_without_colour_info_keeps_zero_fields,
               test_memory_map_with_zero_entry_size_is_ignored)
