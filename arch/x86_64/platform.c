/* arch/x86_64/platform.c: the x86_64 side of hal/boot.h and hal/platform.h -- the boot steps kmain takes,
 * stopping CPUs, powering off, and the console hardware (COM1 plus the VGA mirror). */
#include "arch/x86_64/arch.h"
#include "arch/x86_64/percpu.h"
#include "arch/x86_64/x86.h"
#include "hal/boot.h"
#include "hal/platform.h"
#include "kernel/log.h"
#include "kernel/string.h"
#include "kernel/task.h"

extern char __kernel_start[], __kernel_end[];
extern char boot_stack_bottom[], boot_stack_top[];

static bool vga_ready;

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

void arch_console_init(void)
{
    vga_init();
    vga_ready = true;
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
