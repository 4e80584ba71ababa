/* arch/x86_64/lapic.c: the local APIC through its xAPIC MMIO window (QEMU's TCG has no x2APIC): enabling it on
 * each CPU, end of interrupt, the timer, and the inter-processor interrupts used to start and stop CPUs. */
#include "hal/compiler.h"
#include "arch/x86_64/arch.h"
#include "arch/x86_64/x86.h"

#define LAPIC_ID 0x020
#define LAPIC_TPR 0x080
#define LAPIC_EOI 0x0B0
#define LAPIC_SVR 0x0F0
#define LAPIC_ICR_LOW 0x300
#define LAPIC_ICR_HIGH 0x310
#define LAPIC_LVT_TIMER 0x320
#define LAPIC_TIMER_INITIAL 0x380
#define LAPIC_TIMER_CURRENT 0x390
#define LAPIC_TIMER_DIVIDE 0x3E0

#define ICR_DELIVERY_PENDING (1u << 12)
#define ICR_LEVEL_ASSERT (1u << 14)
#define ICR_INIT (5u << 8)
#define ICR_STARTUP (6u << 8)
#define ICR_NMI (4u << 8)
#define ICR_ALL_BUT_SELF (3u << 18)
#define LVT_MASKED (1u << 16)
#define LVT_PERIODIC (1u << 17)
#define TIMER_DIVIDE_BY_16 0x3

DEBUGGER_TEXT static volatile uint32_t *lapic_base(void)
{
    return (volatile uint32_t *)(uintptr_t)acpi.lapic_phys;
}

DEBUGGER_TEXT static uint32_t lapic_read(uint32_t reg) { return lapic_base()[reg / 4]; }
DEBUGGER_TEXT static void lapic_write(uint32_t reg, uint32_t value) { lapic_base()[reg / 4] = value; }

void lapic_init(void)
{
    /* Globally enabled in IA32_APIC_BASE, then software-enabled through the spurious vector register. */
    uint64_t base = rdmsr(MSR_APIC_BASE);
    wrmsr(MSR_APIC_BASE, base | (1u << 11));
    lapic_write(LAPIC_TPR, 0);
    lapic_write(LAPIC_SVR, 0x100 | VEC_SPURIOUS);
    lapic_write(LAPIC_LVT_TIMER, LVT_MASKED);
}

uint32_t lapic_id(void) { return lapic_read(LAPIC_ID) >> 24; }

DEBUGGER_TEXT void lapic_eoi(void) { lapic_write(LAPIC_EOI, 0); }

void lapic_timer_calibrate_start(void)
{
    lapic_write(LAPIC_TIMER_DIVIDE, TIMER_DIVIDE_BY_16);
    lapic_write(LAPIC_LVT_TIMER, LVT_MASKED);
    lapic_write(LAPIC_TIMER_INITIAL, 0xFFFFFFFFu);
}

uint32_t lapic_timer_calibrate_read(void)
{
    uint32_t elapsed = 0xFFFFFFFFu - lapic_read(LAPIC_TIMER_CURRENT);
    lapic_write(LAPIC_TIMER_INITIAL, 0);
    return elapsed;
}


void lapic_timer_start(uint32_t ticks_per_period)
{
    lapic_write(LAPIC_TIMER_DIVIDE, TIMER_DIVIDE_BY_16);
    lapic_write(LAPIC_LVT_TIMER, VEC_TIMER | LVT_PERIODIC);
    lapic_write(LAPIC_TIMER_INITIAL, ticks_per_period);
}

DEBUGGER_TEXT bool lapic_wait_icr_idle(void)
{
    for (int i = 0; i < 1000000; i++) {
        if (!(lapic_read(LAPIC_ICR_LOW) & ICR_DELIVERY_PENDING))
            return true;
        pause();
    }
    return false;
}

DEBUGGER_TEXT static void send_ipi(uint32_t apic_id, uint32_t low)
{
    lapic_wait_icr_idle();
    lapic_write(LAPIC_ICR_HIGH, apic_id << 24);
    lapic_write(LAPIC_ICR_LOW, low);
}

void lapic_send_init(uint32_t apic_id)
{
    send_ipi(apic_id, ICR_INIT | ICR_LEVEL_ASSERT);
    lapic_wait_icr_idle();
}

void lapic_send_startup(uint32_t apic_id, uint8_t vector_page)
{
    send_ipi(apic_id, ICR_STARTUP | vector_page);
    lapic_wait_icr_idle();
}

DEBUGGER_TEXT void lapic_send_nmi(uint32_t apic_id)
{
    send_ipi(apic_id, ICR_NMI);
}

DEBUGGER_TEXT void lapic_send_ipi(uint32_t apic_id, uint8_t vector)
{
    send_ipi(apic_id, vector);
}

void lapic_send_nmi_all_but_self(void)
{
    lapic_wait_icr_idle();
    lapic_write(LAPIC_ICR_HIGH, 0);
    lapic_write(LAPIC_ICR_LOW, ICR_NMI | ICR_ALL_BUT_SELF);
}
