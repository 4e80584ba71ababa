/* arch/x86_64/pmu_report.c: what the PMU says about itself, read from pmu.c's state through pmu_report_view and
 * pmu_cpu_view -- the debugger's `monitor pmu` view of one CPU, the register snapshot a report shows for a counter
 * that stopped interrupting, and lscpu's section: the CPU, the APIC's mode, the verdict, which CPUs are armed and
 * how many LVT accesses the counter's NMIs made (an exit each under a hypervisor). Nothing here writes hardware. */
#include "hal/pmu.h"

#include <stdatomic.h>

#include "arch/x86_64/cpu_identity.h"
#include "arch/x86_64/pmu_backend.h"
#include "arch/x86_64/pmu_hw.h"
#include "hal/cpu.h"
#include "kernel/lib/sink.h"
#include "kernel/lib/string.h"

/* ---- the debugger's view of this CPU (monitor pmu) ---------------------------------------------------- */

/* One "  name MSR 0x... = 0x..." line start; false (and the line ended) when the read faulted. */
static bool show_msr(struct sink *out, const char *name, uint32_t msr, uint64_t *v)
{
    if (!rdmsr_safe(msr, v)) {
        sink_printf(out, "  %-14s MSR 0x%08x: #GP on read\n", name, msr);
        return false;
    }
    sink_printf(out, "  %-14s MSR 0x%08x = 0x%016llx", name, msr, (unsigned long long)*v);
    return true;
}

static const char *on_off(bool on) { return on ? "on" : "off"; }

static void describe_msrs(const struct pmu_backend *live, struct sink *out)
{
    uint64_t v;
    uint64_t mask = live->width == 0 || live->width >= 64 ? ~0ull : (1ull << live->width) - 1;
    if (show_msr(out, "counter", live->counter_msr, &v)) {
        sink_printf(out, ": value %llu", (unsigned long long)(v & mask));
        if (live->width)
            sink_printf(out, " of %u bits, %llu counts to overflow", live->width,
                        (unsigned long long)((0 - v) & mask));
        sink_puts(out, "\n");
    }
    if (show_msr(out, "control", live->control_msr, &v))
        sink_printf(out, ": field 0x%llx, counting %s, pmi %s\n", (unsigned long long)(v & live->control_mask),
                    on_off((v & live->control_count) == live->control_count),
                    on_off(live->control_interrupt && (v & live->control_interrupt)));
    if (live->global_ctrl_msr && show_msr(out, "global ctrl", live->global_ctrl_msr, &v))
        sink_printf(out, ": counter %s\n", (v & live->global_bit) ? "enabled" : "disabled");
    if (live->global_status_msr && show_msr(out, "global status", live->global_status_msr, &v))
        sink_printf(out, ": overflow %s\n", (v & live->global_bit) ? "yes" : "no");
    if (live->freeze_msr && show_msr(out, "freeze", live->freeze_msr, &v))
        sink_printf(out, ": freeze on pmi %s\n", on_off(v & live->freeze_bit));
}

void pmu_describe_cpu(struct sink *out)
{
    unsigned cpu = pmu_hw_cpu();
    struct pmu_cpu_view c;
    if (!pmu_cpu_view(cpu, &c))
        return;
    struct pmu_view view;
    pmu_report_view(&view);
    sink_printf(out, "cpu %u: armed %s%s%s%s\n", cpu, c.armed ? "yes" : "no", c.probing ? ", probing" : "",
                c.arm_failed ? ", arming faulted" : "", c.late_pending ? ", late overflow pending" : "");
    if (!view.have_backend)
        sink_printf(out, "  no PMU backend for CPU vendor \"%s\"\n", view.vendor_id);
    else
        describe_msrs(view.live, out);
    uint32_t lvt = pmu_hw_lvtpc_read();
    sink_printf(out, "  %-14s %s = 0x%08x: delivery %s, %s\n", "lvt perfcnt", pmu_hw_lvtpc_name(), lvt,
                (lvt & LVT_DELIVERY_MASK) == LVT_DELIVERY_NMI ? "nmi" : (lvt & LVT_DELIVERY_MASK) ? "other" : "fixed",
                (lvt & LVT_MASK_BIT) ? "masked" : "unmasked");
    sink_printf(out, "  %-14s %llu by the counter's NMIs (%s)\n", "lvt accesses",
                (unsigned long long)c.nmi_lvt_accesses, pmu_hw_lvtpc_name());
}

/* ---- a stopped counter's registers (the report) ------------------------------------------------------- */

static void snap(struct pmu_snapshot *s, const char *name, uint32_t msr, uint64_t *v)
{
    if (!msr || s->count == PMU_SNAPSHOT_REGS)
        return;
    s->regs[s->count].name = name;
    s->regs[s->count].faulted = !rdmsr_safe(msr, &s->regs[s->count].value);
    *v = s->regs[s->count].faulted ? 0 : s->regs[s->count].value;
    s->count++;
}

void pmu_snapshot_this_cpu(struct pmu_snapshot *s)
{
    uint64_t v = 0;
    memset(s, 0, sizeof *s);
    struct pmu_view view;
    pmu_report_view(&view);
    if (!view.have_backend)
        return;
    const struct pmu_backend *live = view.live;
    snap(s, "counter", live->counter_msr, &v);
    snap(s, "control", live->control_msr, &v);
    s->counting = (v & live->control_count) == live->control_count;
    s->pmi_enabled = live->control_interrupt && (v & live->control_interrupt);
    s->globally_enabled = true;
    if (live->global_ctrl_msr) {
        snap(s, "global ctrl", live->global_ctrl_msr, &v);
        s->globally_enabled = (v & live->global_bit) != 0;
    }
    if (live->global_status_msr)
        snap(s, "global status", live->global_status_msr, &v);
    if (live->freeze_msr) {
        snap(s, "freeze", live->freeze_msr, &v);
        s->frozen = (v & live->freeze_bit) != 0;
    }
    uint32_t lvt = pmu_hw_lvtpc_read();
    if (s->count < PMU_SNAPSHOT_REGS) {
        s->regs[s->count].name = "lvt perfcnt";
        s->regs[s->count].value = lvt;
        s->count++;
    }
    s->lvt_masked = (lvt & LVT_MASK_BIT) != 0;
    s->lvt_nmi = (lvt & LVT_DELIVERY_MASK) == LVT_DELIVERY_NMI;
}

/* ---- lscpu -------------------------------------------------------------------------------------------- */

static const char *probe_text(enum pmu_verdict v)
{
    switch (v) {
    case PMU_COUNTS: return "counts";
    case PMU_DOES_NOT_COUNT: return "does not count";
    case PMU_NO_INTERRUPT: return "no interrupt";
    case PMU_FAULTED: return "faulted";
    default: return "not probed";
    }
}

/* Which CPUs have their counter armed now: none outside a run, and none once a run has stopped. Each CPU's
 * flag is its own to write; this only looks. And the LVT accesses every CPU's NMIs made, summed. */
static void describe_cpus(struct sink *out)
{
    unsigned online = cpu_count() < MAX_CPUS ? cpu_count() : MAX_CPUS;
    const char *sep = "armed now:  cpu ";
    uint64_t lvt = 0;
    for (unsigned cpu = 0; cpu < online; cpu++) {
        struct pmu_cpu_view c;
        if (!pmu_cpu_view(cpu, &c))
            continue;
        lvt += c.nmi_lvt_accesses;
        if (c.armed) {
            sink_printf(out, "%s%u", sep, cpu);
            sep = ", ";
        }
    }
    sink_puts(out, *sep == ',' ? "\n" : "armed now:  none\n");
    sink_printf(out, "lvt accesses: %llu (%s) by the counter's NMIs on %u cpus\n", (unsigned long long)lvt,
                pmu_hw_lvtpc_name(), online);
}

void pmu_describe(struct sink *out)
{
    pmu_select(0); /* nothing if boot selected already */
    struct pmu_view view;
    pmu_report_view(&view);
    cpu_identity_describe(out);
    sink_printf(out, "apic:       %s\n", pmu_hw_apic_mode());
    if (view.have_backend)
        view.live->describe(view.live, out);
    if (view.mode_name)
        sink_printf(out, "pmu mode:   %s%s\n", view.mode_name,
                    view.mode_off ? "" : " (CPUID's PMU leaves answered as if the CPU claimed one)");

    enum pmu_verdict v = pmu_verdict() == PMU_NOT_PROBED ? pmu_probe() : pmu_verdict();
    if (v == PMU_DISABLED || v == PMU_NOT_CLAIMED)
        sink_printf(out, "probe:      not probed (%s)\n", pmu_verdict_reason());
    else
        sink_printf(out, "probe:      %s: %s\n", probe_text(v), pmu_verdict_reason());
    if (v == PMU_COUNTS) {
        sink_printf(out, "profile:    %s\n", pmu_source_name());
        /* After the probe, which is what learns it. */
        pmu_report_view(&view);
        sink_puts(out, view.pmi_masks_lvt ? "nmi claim:  overflow status and the LVT mask set by the PMI's delivery "
                                            "(a genuine NMI while an overflow is on its way is told apart)\n"
                                          : "nmi claim:  overflow status only (this machine leaves the LVT entry "
                                            "unmasked on delivery: a genuine NMI while an overflow is on its way is "
                                            "taken for the counter's, and the overflow's own NMI panics instead)\n");
    } else {
        sink_puts(out, "profile:    tick only\n");
    }
    describe_cpus(out);
}
