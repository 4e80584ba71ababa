/* arch/x86_64/arch.h: the interfaces between the files of arch/x86_64 -- boot information, ACPI tables,
 * the local and I/O APICs, timekeeping, SMP start, console devices, interrupt vectors. */
#ifndef ARCH_X86_64_ARCH_H
#define ARCH_X86_64_ARCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "arch/x86_64/context.h"

/* Interrupt vectors. */
/* The tick sits above every device vector: the LAPIC delivers the higher priority class first, and a tick that
 * waited behind a device interrupt would sample the task that interrupt woke instead of what was running. */
#define VEC_TIMER 0xE0
/* The profiler's stop asking a CPU to let go of the run (cpu_send_profiler_stop): below VEC_GDB_WAKE's class, so a
 * CPU the debugger parked takes it as it is released, before it runs anything else. */
#define VEC_PROFILER_STOP 0xE8
#define VEC_PIC_BASE 0x30      /* the 8259s, remapped here and masked: only spurious ones arrive */
#define VEC_DEVICE_BASE 0x40   /* device interrupts (IOAPIC-routed or MSI), allocated upwards */
#define VEC_DEVICE_LAST 0x7F
#define VEC_YIELD 0x81         /* int $0x81: a task gives up the CPU */
#define VEC_GDB_WAKE 0xF0      /* wakes a CPU the debugger stopped (gdb_nmi.c); above any TPR it parks at */
#define VEC_SPURIOUS 0xFF

/* multiboot.c: what GRUB told us, copied out of its structures early. */
struct mem_range {
    uint64_t base;
    uint64_t length;
};
#define BOOT_MAX_RANGES 32
struct boot_info {
    char cmdline[512];
    struct mem_range usable[BOOT_MAX_RANGES];
    unsigned usable_count;
    uint8_t rsdp[36];   /* GRUB's copy of the RSDP (v1: first 20 bytes) */
    unsigned rsdp_len;  /* 0 when GRUB gave no ACPI tag */
    char loader[64];    /* the boot loader's name ("GRUB 2.06-13+deb12u2"); "" when it gave none */
    unsigned efi;       /* 0: BIOS; 32 or 64: the UEFI firmware's word size, from GRUB's EFI tags */
    uint64_t efi_system_table;
    bool efi_boot_services; /* GRUB left EFI boot services running (we never ask it to) */
    struct boot_fb {
        bool present;   /* GRUB gave a framebuffer tag */
        uint8_t type;   /* BOOT_FB_* */
        uint64_t addr;
        uint32_t pitch, width, height;
        uint8_t bpp;
        uint8_t red_pos, red_size, green_pos, green_size, blue_pos, blue_size;
    } fb;
};
#define BOOT_FB_INDEXED 0
#define BOOT_FB_RGB 1
#define BOOT_FB_EGA_TEXT 2
extern struct boot_info boot_info;
void multiboot_parse(uintptr_t info_phys);
/* True when [base, base + length) lies inside one range the memory map calls usable RAM. */
bool boot_ram_usable(uint64_t base, uint64_t length);

/* acpi.c */
#define ACPI_MAX_IOAPICS 4
#define ACPI_MAX_CPUS 512 /* processor entries remembered; more are counted (the kernel starts MAX_CPUS) */
struct acpi_info {
    uint32_t lapic_phys;
    unsigned cpu_count;                      /* CPUs the MADT lists (enabled or online capable), all of them */
    uint32_t cpu_apic_ids[ACPI_MAX_CPUS];    /* the first ACPI_MAX_CPUS of them */
    unsigned ioapic_count;
    struct { uint32_t id, phys, gsi_base; } ioapics[ACPI_MAX_IOAPICS];
    struct { uint32_t gsi; uint16_t flags; bool present; } isa_override[16];
    uint16_t pm1a_cnt, pm1b_cnt;
    uint16_t pm_timer_port;                  /* the ACPI PM timer's I/O port, 0 if the FADT names none */
    bool pm_timer_32bit;                     /* TMR_VAL_EXT: 32 bits wide, else 24 */
    uint16_t slp_typ_s5_a, slp_typ_s5_b;
    bool s5_known;
};
extern struct acpi_info acpi;
void acpi_init(void);

/* lapic.c */
/* Boot CPU, once, before lapic_init anywhere: x2APIC where CPUID offers it, unless option (the kernel command
 * line's apic=, NULL when absent) is "xapic"; any value but auto or xapic is reported and taken as auto. Logs
 * the mode in one line ("apic: x2APIC"). */
void lapic_select_mode(const char *option);
bool lapic_x2apic_mode(void);
const char *lapic_mode_text(void);     /* "x2APIC", "xAPIC (no x2APIC in CPUID)", "xAPIC (apic=xapic)" */
void lapic_init(void);                 /* this CPU, in the chosen mode */
uint32_t lapic_id(void);               /* 32 bits in x2APIC mode */
/* This CPU's LVT performance-counter entry (NMI-safe), and the register's name in the chosen mode. */
uint32_t lapic_lvt_perfcnt_read(void);
void lapic_lvt_perfcnt_write(uint32_t value);
const char *lapic_lvt_perfcnt_name(void); /* "x2APIC MSR 0x834" or "LAPIC 0x340" */
void lapic_eoi(void);
void lapic_timer_calibrate_start(void);
uint32_t lapic_timer_calibrate_read(void);
void lapic_timer_start(uint32_t ticks_per_period);
void lapic_send_init(uint32_t apic_id);
void lapic_send_startup(uint32_t apic_id, uint8_t vector_page);
void lapic_send_nmi(uint32_t apic_id);
void lapic_send_ipi(uint32_t apic_id, uint8_t vector);  /* fixed delivery */
void lapic_send_nmi_all_but_self(void);
bool lapic_wait_icr_idle(void);

/* ioapic.c */
void ioapic_init(void);
void ioapic_route(uint32_t gsi, uint8_t vector, bool level, bool active_low, uint32_t dest_apic);
/* An ISA IRQ attached with irq_attach_isa goes to CPU `cpu` from now on (attached, it goes to CPU 0): at its
 * own vector, or as_wake at VEC_GDB_WAKE, which only wakes the CPU from HLT (the debugger's, while stopped).
 * Device interrupts are routed to the boot CPU, whose APIC id must be <= 254 (the I/O APIC's destination field
 * is 8 bits); false when cpu's APIC id is above that: the IRQ then goes to the boot CPU at its own vector. */
bool irq_isa_deliver_to(unsigned isa_irq, unsigned cpu, bool as_wake);

/* time.c */
void time_init(void);                  /* boot CPU: TSC and LAPIC timer calibrated (PIT, else ACPI PM timer, else CPUID) */
void time_start_tick(void);            /* each CPU: the LAPIC timer at tick_hz() */
void pit2_arm(uint32_t count);          /* PIT channel 2 as a one-shot of count 1.193182 MHz periods, started */
bool pit2_expired(void);               /* ... and whether it has run out (OUT2 high) */
bool pit2_present(void);               /* whether PIT channel 2 ran out as armed at calibration */
/* Cycles until over(ctx) says a reference's window is over, or 0 once deadline_cycles pass without it: every wait
 * on a clock that may be dead (the calibration's, the entropy readings') goes through this one loop. */
uint64_t reference_window_cycles(bool (*over)(void *ctx), void *ctx, uint64_t deadline_cycles);
bool pit2_over(void *ctx);             /* pit2_expired() as reference_window_cycles asks it */
/* The ACPI PM timer (acpi.pm_timer_port must be set): its count, and a window of `counts` from `start`. */
struct pm_timer_window { uint32_t start, counts; };
uint32_t pm_timer_read(void);
bool pm_timer_over(void *window);      /* a struct pm_timer_window's counts have passed */
size_t entropy_tick_intervals(uint64_t *out, size_t cap); /* entropy.c: cycles between the pooled ticks */
void delay_us(uint64_t us);

/* interrupts.c */
void idt_init(void);                   /* once */
void idt_load(void);                   /* each CPU */
void pic_disable(void);
struct context *interrupt_dispatch(struct context *ctx);
void idt_bounds(uint64_t *start, uint64_t *end);

/* smp.c */
void smp_start_aps(void);

/* serial.c, vga.c, fbcon.c, ps2kbd.c */
void serial_init(void);
void serial_enable_input(void);
void serial_write(const char *text, size_t len);
/* Sends what the transmit ring holds before returning, unless the line moves nothing for a while;
 * others_stopped: a panic, whose stopped CPUs will never finish a drain they began. */
void serial_flush(bool others_stopped);
/* Bytes the transmit ring can take now, and bytes handed to the UART since boot (progress, for a waiter). */
size_t serial_tx_room(void);
uint64_t serial_tx_sent(void);
void vga_init(void);
void vga_write(const char *text, size_t len);
/* fbcon.c: false (and why) when the framebuffer in boot_info cannot carry text. */
bool fbcon_init(char *why, size_t size);
void fbcon_size(uint32_t *cols, uint32_t *rows);
void fbcon_write(const char *text, size_t len);
void ps2kbd_init(void);

/* power */
const char *acpi_poweroff(void);

#endif
