/* arch/x86_64/platform.c: the x86_64 side of hal/boot.h and hal/platform.h -- the boot steps kmain takes,
 * stopping CPUs, powering off, the console hardware (COM1, plus the VGA mirror where the machine really is
 * in VGA text mode, or else a text console on the framebuffer GRUB handed over) and the one-line account of
 * how the machine was booted. */
#include "arch/x86_64/arch.h"
#include "arch/x86_64/percpu.h"
#include "arch/x86_64/x86.h"
#include "hal/boot.h"
#include "hal/platform.h"
#include "kernel/cmdline.h"
#include "kernel/lib/format.h"
#include "kernel/log.h"
#include "kernel/lib/string.h"
#include "hal/kernel_entry.h"

extern char __kernel_start[], __kernel_end[];
extern char boot_stack_bottom[], boot_stack_top[];

static bool vga_ready, fb_ready;
static char boot_summary[224];

void arch_early_init(uintptr_t info)
{
    percpu_install(0, 0);
    serial_init();
    multiboot_parse(info);
    idt_init();
    idt_load();
}

void arch_heap_range(uintptr_t *base, size_t *size)
{
    uintptr_t kernel_end = (uintptr_t)__kernel_end;
    *base = 0;
    *size = 0;
    for (unsigned i = 0; i < boot_info.usable_count; i++) {
        uint64_t lo = boot_info.usable[i].base, hi = lo + boot_info.usable[i].length;
        if (hi > 0x100000000ull)
            hi = 0x100000000ull; /* only the first 4 GiB are mapped */
        if (lo < kernel_end)
            lo = kernel_end;
        if (hi > lo && hi - lo > *size) {
            *base = (uintptr_t)lo;
            *size = (size_t)(hi - lo);
        }
    }
}

uint64_t platform_ram_bytes(void)
{
    uint64_t total = 0;
    for (unsigned i = 0; i < boot_info.usable_count; i++)
        total += boot_info.usable[i].length;
    return total;
}

const char *platform_cmdline(void) { return boot_info.cmdline; }

void arch_platform_init(void)
{
    acpi_init();
    pic_disable();
    lapic_select_mode(cmdline_get("apic")); /* x2APIC or xAPIC, once, before any CPU enables its APIC */
    lapic_init();
    percpu_area[0].apic_id = lapic_id();
    percpu_mark_online(0);
    ioapic_init();
    time_init();
    sched_init_cpu(boot_stack_bottom, boot_stack_top);
}

void arch_start_cpus(void) { smp_start_aps(); }

/* Whether the legacy VGA text screen (80x25 at 0xB8000) is really there. GRUB describes the display it leaves
 * in its framebuffer tag: EGA text (type 2) on a BIOS boot in text mode (grub.cfg asks for it). A BIOS boot
 * without the tag is still in the BIOS's text mode. Under UEFI there is no text mode at all -- GRUB leaves the
 * GOP framebuffer (RGB) or no display -- and 0xB8000 may be anything, so nothing is written there. */
static bool vga_text_present(void)
{
    const struct boot_fb *f = &boot_info.fb;
    if (!f->present)
        return !boot_info.efi;
    return f->type == BOOT_FB_EGA_TEXT && f->addr == 0xB8000 && f->width == 80 && f->height == 25;
}

/* Picks the console's display -- VGA text, else a text console on the framebuffer, else none (COM1 only) --
 * and writes the console part of the boot summary. */
static void console_display_init(char *out, size_t size)
{
    const struct boot_fb *f = &boot_info.fb;
    char why[112];
    if (vga_text_present()) {
        vga_init();
        vga_ready = true;
        ksnprintf(out, size, "console serial + VGA text");
    } else if (!f->present) {
        ksnprintf(out, size, "console serial only (no VGA text mode under UEFI, and no framebuffer)");
    } else if (f->type == BOOT_FB_EGA_TEXT) {
        ksnprintf(out, size, "console serial only (EGA text %ux%u at 0x%llx, not the 80x25 at 0xB8000 drawn here)",
                  f->width, f->height, (unsigned long long)f->addr);
    } else if (fbcon_init(why, sizeof why)) {
        uint32_t cols, rows;
        fbcon_size(&cols, &rows);
        fb_ready = true;
        ksnprintf(out, size, "console serial + framebuffer %ux%u text on %ux%u RGB at 0x%llx (no VGA text mode)",
                  cols, rows, f->width, f->height, (unsigned long long)f->addr);
    } else {
        ksnprintf(out, size, "console serial only (no VGA text mode; %s)", why);
    }
}

const char *platform_boot_summary(void) { return boot_summary[0] ? boot_summary : "not described yet"; }

/* The console's display and inputs, and the boot summary: the firmware (from GRUB's EFI tags), the loader (its
 * name tag) and the console devices, logged once. */
void arch_console_init(void)
{
    size_t n;
    if (boot_info.efi)
        n = ksnprintf(boot_summary, sizeof boot_summary, "UEFI (%u-bit), ", boot_info.efi);
    else
        n = ksnprintf(boot_summary, sizeof boot_summary, "BIOS, ");
    if (n < sizeof boot_summary)
        n += ksnprintf(boot_summary + n, sizeof boot_summary - n, "%s, ",
                       boot_info.loader[0] ? boot_info.loader : "unnamed multiboot2 loader");
    if (n < sizeof boot_summary)
        console_display_init(boot_summary + n, sizeof boot_summary - n);
    log_info("boot: %s", boot_summary);
    if (boot_info.efi_boot_services)
        log_warn("boot: GRUB left EFI boot services running; kprof does not use them");
    serial_enable_input();
    ps2kbd_init();
}

void arch_start_tick(void) { time_start_tick(); }

void platform_stop_other_cpus(void)
{
    if (cpu_count() > 1)
        lapic_send_nmi_all_but_self();
    delay_us(1000);
}

void platform_halt_forever(void)
{
    for (;;) {
        cli();
        hlt();
    }
}

const char *platform_poweroff(void)
{
    serial_flush(false); /* the console's last lines, before QEMU (or the machine) goes away */
    return acpi_poweroff();
}

void console_hw_write(const char *text, size_t len)
{
    serial_write(text, len);
    if (vga_ready)
        vga_write(text, len);
    if (fb_ready)
        fbcon_write(text, len);
}

size_t console_hw_room(void) { return serial_tx_room(); }

uint64_t console_hw_sent(void) { return serial_tx_sent(); }

void console_hw_flush_panic(void) { serial_flush(true); }

bool platform_interrupt_stack_bounds(uintptr_t sp, uintptr_t *lo, uintptr_t *hi)
{
    return percpu_ist_bounds(sp, lo, hi);
}
