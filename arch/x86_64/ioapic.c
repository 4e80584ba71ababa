/* arch/x86_64/ioapic.c: the I/O APICs the MADT listed, through their index/data register pair. Every line
 * starts masked; ioapic_route() programs one redirection entry to a vector on one CPU (an 8-bit APIC id: device
 * interrupts go to the boot CPU, which must have an id below 255 even in x2APIC mode). */
#include "arch/x86_64/arch.h"
#include "arch/x86_64/percpu.h"
#include "hal/compiler.h"
#include "kernel/log.h"

#define IOREGSEL 0x00
#define IOWIN 0x10
#define IOAPIC_VER 0x01
#define IOAPIC_REDTBL 0x10
#define RED_MASKED (1u << 16)
#define RED_LEVEL (1u << 15)
#define RED_ACTIVE_LOW (1u << 13)

DEBUGGER_TEXT static uint32_t ioapic_read(uint32_t phys, uint32_t reg)
{
    volatile uint32_t *base = (volatile uint32_t *)(uintptr_t)phys;
    base[IOREGSEL / 4] = reg;
    return base[IOWIN / 4];
}

DEBUGGER_TEXT static void ioapic_write(uint32_t phys, uint32_t reg, uint32_t value)
{
    volatile uint32_t *base = (volatile uint32_t *)(uintptr_t)phys;
    base[IOREGSEL / 4] = reg;
    base[IOWIN / 4] = value;
}

DEBUGGER_TEXT static unsigned ioapic_lines(uint32_t phys) { return ((ioapic_read(phys, IOAPIC_VER) >> 16) & 0xFF) + 1; }

void ioapic_init(void)
{
    /* Device interrupts go to the boot CPU, named in the redirection entry's 8-bit destination. */
    if (percpu_area[0].apic_id > 0xFE)
        log_warn("ioapic: the boot cpu's APIC id %u does not fit the 8-bit destination: device interrupts "
                 "will not arrive", percpu_area[0].apic_id);
    for (unsigned i = 0; i < acpi.ioapic_count; i++) {
        uint32_t phys = acpi.ioapics[i].phys;
        for (unsigned line = 0; line < ioapic_lines(phys); line++) {
            ioapic_write(phys, IOAPIC_REDTBL + 2 * line, RED_MASKED);
            ioapic_write(phys, IOAPIC_REDTBL + 2 * line + 1, 0);
        }
    }
}

DEBUGGER_TEXT void ioapic_route(uint32_t gsi, uint8_t vector, bool level, bool active_low, uint32_t dest_apic)
{
    for (unsigned i = 0; i < acpi.ioapic_count; i++) {
        uint32_t phys = acpi.ioapics[i].phys;
        uint32_t base = acpi.ioapics[i].gsi_base;
        if (gsi < base || gsi >= base + ioapic_lines(phys))
            continue;
        uint32_t line = gsi - base;
        uint32_t low = vector | (level ? RED_LEVEL : 0) | (active_low ? RED_ACTIVE_LOW : 0);
        ioapic_write(phys, IOAPIC_REDTBL + 2 * line + 1, (dest_apic & 0xFF) << 24); /* 8 bits: callers check */
        ioapic_write(phys, IOAPIC_REDTBL + 2 * line, low);
        return;
    }
}
