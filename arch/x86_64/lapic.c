/* arch/x86_64/lapic.c: the local APIC -- enabling it on each CPU, end of interrupt, the timer, the performance
 * counter's LVT entry, and the inter-processor interrupts used to start and stop CPUs. It owns the one choice of
 * mode, made on the boot CPU before any CPU uses its APIC: x2APIC (its registers are MSRs, and APIC ids are 32
 * bits) where CPUID offers it and apic=xapic does not refuse it, else the xAPIC MMIO window (QEMU's TCG has no
 * x2APIC). Every other file reaches the APIC through the functions here, which work in either mode. */
#include "hal/compiler.h"
#include "arch/x86_64/arch.h"
#include "arch/x86_64/lapic_regs.h"
#include "arch/x86_64/x86.h"
#include "kernel/lib/string.h"
#include "kernel/log.h"

#define ICR_DELIVERY_PENDING (1u << 12)
#define ICR_LEVEL_ASSERT (1u << 14)
#define ICR_INIT (5u << 8)
#define ICR_STARTUP (6u << 8)
#define ICR_NMI (4u << 8)
#define ICR_ALL_BUT_SELF (3u << 18)
#define LVT_MASKED (1u << 16)
#define LVT_PERIODIC (1u << 17)
#define TIMER_DIVIDE_BY_16 0x3

/* Written once by lapic_select_mode on the boot CPU before any CPU starts; read-only afterwards (the APs read it
 * after the boot CPU's writes to the trampoline, which their start orders after this). */
static bool x2apic;
static const char *mode_text = "xAPIC (not chosen yet)";

DEBUGGER_TEXT static volatile uint32_t *lapic_base(void)
{
    return (volatile uint32_t *)(uintptr_t)acpi.lapic_phys;
}

DEBUGGER_TEXT static uint32_t lapic_read(uint32_t reg)
{
    if (x2apic)
        return (uint32_t)rdmsr(lapic_x2apic_msr(reg));
    return lapic_base()[reg / 4];
}

DEBUGGER_TEXT static void lapic_write(uint32_t reg, uint32_t value)
{
    if (x2apic)
        wrmsr(lapic_x2apic_msr(reg), value);
    else
        lapic_base()[reg / 4] = value;
}

void lapic_select_mode(const char *option)
{
    uint32_t r[4];
    cpuid(1, 0, r);
    bool offered = (r[2] & CPUID1_ECX_X2APIC) != 0;
    bool refused = false;
    if (option && strcmp(option, "xapic") == 0)
        refused = true;
    else if (option && strcmp(option, "auto") != 0)
        log_warn("apic: unknown apic=%.32s (auto or xapic): using auto", option);
    x2apic = offered && !refused;
    mode_text = x2apic ? "x2APIC" : refused ? "xAPIC (apic=xapic)" : "xAPIC (no x2APIC in CPUID)";
    log_info("apic: %s", mode_text);
}

bool lapic_x2apic_mode(void) { return x2apic; }
const char *lapic_mode_text(void) { return mode_text; }

void lapic_init(void)
{
    /* Globally enabled in IA32_APIC_BASE (with EXTD in x2APIC mode), then software-enabled through the spurious
     * vector register. Firmware may have left x2APIC on; the only way from there back to xAPIC is through
     * disabled (the SDM's "x2APIC State Transitions"), which resets the APIC. */
    uint64_t base = rdmsr(MSR_APIC_BASE);
    if (x2apic) {
        wrmsr(MSR_APIC_BASE, base | APIC_BASE_ENABLE | APIC_BASE_EXTD);
    } else {
        if (base & APIC_BASE_EXTD) {
            base &= ~(uint64_t)(APIC_BASE_ENABLE | APIC_BASE_EXTD);
            wrmsr(MSR_APIC_BASE, base);
        }
        wrmsr(MSR_APIC_BASE, base | APIC_BASE_ENABLE);
    }
    lapic_write(LAPIC_TPR, 0);
    lapic_write(LAPIC_SVR, 0x100 | VEC_SPURIOUS);
    lapic_write(LAPIC_LVT_TIMER, LVT_MASKED);
}

uint32_t lapic_id(void) { return lapic_id_of(lapic_read(LAPIC_ID), x2apic); }

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

NMI_TEXT uint32_t lapic_lvt_perfcnt_read(void) { return lapic_read(LAPIC_LVT_PERFCNT); }
NMI_TEXT void lapic_lvt_perfcnt_write(uint32_t value) { lapic_write(LAPIC_LVT_PERFCNT, value); }
const char *lapic_lvt_perfcnt_name(void) { return x2apic ? "x2APIC MSR 0x834" : "LAPIC 0x340"; }

/* x2APIC has no delivery-pending bit: the WRMSR is the send. */
DEBUGGER_TEXT bool lapic_wait_icr_idle(void)
{
    if (x2apic)
        return true;
    for (int i = 0; i < 1000000; i++) {
        if (!(lapic_read(LAPIC_ICR_LOW) & ICR_DELIVERY_PENDING))
            return true;
        pause();
    }
    return false;
}

DEBUGGER_TEXT static void send_ipi(uint32_t apic_id, uint32_t low)
{
    if (x2apic) {
        wrmsr(lapic_x2apic_msr(LAPIC_ICR_LOW), lapic_x2apic_icr(apic_id, low));
        return;
    }
    lapic_wait_icr_idle();
    lapic_write(LAPIC_ICR_HIGH, lapic_xapic_icr_high(apic_id));
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
    send_ipi(0, ICR_NMI | ICR_ALL_BUT_SELF);
}
