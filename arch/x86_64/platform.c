/* arch/x86_64/platform.c: the x86_64 side of hal/boot.h and hal/platform.h -- the boot steps kmain takes,
 * stopping CPUs, powering off, the console hardware (COM1, plus the VGA mirror where the machine really is
 * in VGA text mode) and the one-line account of how the machine was booted. */
#include "arch/x86_64/arch.h"
#include "arch/x86_64/percpu.h"
#include "arch/x86_64/x86.h"
#include "hal/boot.h"
#include "hal/platform.h"
#include "kernel/format.h"
#include "kernel/log.h"
#include "kernel/string.h"
#include "kernel/task.h"

extern char __kernel_start[], __kernel_end[];
extern char boot_stack_bottom[], boot_stack_top[];

static bool vga_ready;
static char boot_summary[192];

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
    lapic_init();
    percpu_area[0].apic_id = lapic_id();
    percpu_mark_online(0);
    ioapic_init();
    time_init();
    sched_init_cpu(boot_stack_bottom, boot_stack_top);
}

void arch_start_cpus(void) { smp_start_aps(); }

/* Whether the legacy VGA text screen (80x25 at 0xB8000) is really there; if not, *why says what is instead.
 * GRUB describes the display it leaves in its framebuffer tag: EGA text (type 2) on a BIOS boot in text mode.
 * A BIOS boot without the tag is still in the BIOS's text mode. Under UEFI there is no text mode at all --
 * GRUB leaves a GOP framebuffer (RGB) or no display -- and 0xB8000 may be anything, so nothing is written
 * there. */
static bool vga_text_present(char *why, size_t size)
{
    const struct boot_fb *fb = &boot_info.fb;
    if (!fb->present) {
        if (boot_info.efi) {
            ksnprintf(why, size, "no VGA text mode under UEFI, and no framebuffer");
            return false;
        }
        return true;
    }
    if (fb->type == BOOT_FB_EGA_TEXT && fb->addr == 0xB8000 && fb->width == 80 && fb->height == 25)
        return true;
    if (fb->type == BOOT_FB_EGA_TEXT)
        ksnprintf(why, size, "EGA text %ux%u at 0x%llx, not the 80x25 at 0xB8000 this kernel draws", fb->width,
                  fb->height, (unsigned long long)fb->addr);
    else
        ksnprintf(why, size, "no VGA text mode: %s framebuffer %ux%u %u bpp at 0x%llx, not drawn on",
                  fb->type == BOOT_FB_RGB ? "RGB" : "indexed", fb->width, fb->height, fb->bpp,
                  (unsigned long long)fb->addr);
    return false;
}

static void describe_boot(bool vga, const char *no_vga)
{
    size_t n = 0;
    if (boot_info.efi)
        n = ksnprintf(boot_summary, sizeof boot_summary, "UEFI (%u-bit)", boot_info.efi);
    else
        n = ksnprintf(boot_summary, sizeof boot_summary, "BIOS");
    if (n < sizeof boot_summary)
        n += ksnprintf(boot_summary + n, sizeof boot_summary - n, ", %s",
                       boot_info.loader[0] ? boot_info.loader : "unnamed multiboot2 loader");
    if (n < sizeof boot_summary) {
        if (vga)
            ksnprintf(boot_summary + n, sizeof boot_summary - n, ", console serial + VGA text");
        else
            ksnprintf(boot_summary + n, sizeof boot_summary - n, ", console serial only (%s)", no_vga);
    }
}

const char *platform_boot_summary(void) { return boot_summary[0] ? boot_summary : "not described yet"; }

void arch_console_init(void)
{
    char no_vga[112] = "";
    bool vga = vga_text_present(no_vga, sizeof no_vga);
    describe_boot(vga, no_vga);
    log_info("boot: %s", boot_summary);
    if (boot_info.efi_boot_services)
        log_warn("boot: GRUB left EFI boot services running; kprof does not use them");
    if (vga) {
        vga_init();
        vga_ready = true;
    }
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

const char *platform_poweroff(void) { return acpi_poweroff(); }

void console_hw_write(const char *text, size_t len)
{
    serial_write(text, len);
    if (vga_ready)
        vga_write(text, len);
}

bool platform_interrupt_stack_bounds(uintptr_t sp, uintptr_t *lo, uintptr_t *hi)
{
    return percpu_ist_bounds(sp, lo, hi);
}
