/* arch/x86_64/gdb_target.c: the x86_64 machine assembled for the debugger -- the struct gdb_target the stub
 * answers gdb's packets against, the struct gdb_arch_ops the stop/resume state machine (gdbstub/stop.c)
 * stops and parks CPUs through, and what each CPU saves of itself as it stops; both handed to the debugger's
 * set-up (gdbstub/setup.c) through hal/debug.h. The pieces are in the files arch/x86_64/gdb.h lists; this one
 * only wires them up. */
#include "arch/x86_64/arch.h"
#include "arch/x86_64/gdb.h"
#include "arch/x86_64/gdb_regs.h"
#include "arch/x86_64/percpu.h"
#include "arch/x86_64/msr.h"
#include "gdbstub/stop.h"
#include "gdbstub/target.h"
#include "hal/cpu.h"
#include "hal/debug.h"
#include "hal/platform.h"
#include "hal/pmu.h"
#include "kernel/lib/format.h"
#include "kernel/lib/sink.h"
#include "kernel/task.h"

#define IA32_FS_BASE 0xC0000100u

/* What a stopped CPU saved of itself beside its context: the registers that are not in the frame, and the
 * task it was running. */
static struct gdb_x86_cpu_state cpu_state[MAX_CPUS];
static struct task *cpu_task[MAX_CPUS];

static uint16_t selector(int which)
{
    uint16_t v = 0;
    switch (which) {
    case 0: __asm__ volatile("mov %%ds, %0" : "=r"(v)); break;
    case 1: __asm__ volatile("mov %%es, %0" : "=r"(v)); break;
    case 2: __asm__ volatile("mov %%fs, %0" : "=r"(v)); break;
    default: __asm__ volatile("mov %%gs, %0" : "=r"(v)); break;
    }
    return v;
}

static void save_cpu_state(unsigned cpu, struct context *ctx)
{
    (void)ctx;
    gdb_x86_disarm_debug_regs();
    struct gdb_x86_cpu_state *s = &cpu_state[cpu];
    cpu_task[cpu] = task_current();
    if (!rdmsr_safe(IA32_FS_BASE, &s->fs_base))
        s->fs_base = 0;
    s->gs_base = (uint64_t)(uintptr_t)&percpu_area[cpu];
    s->ds = selector(0);
    s->es = selector(1);
    s->fs = selector(2);
    s->gs = selector(3);
}

/* ---- the target ------------------------------------------------------------------------------------------- */

static unsigned t_cpu_count(void) { return cpu_count(); }

static void t_cpu_describe(unsigned cpu, char *buf, size_t cap)
{
    struct context *ctx = gdb_stopped_context(cpu);
    struct task *task = ctx ? cpu_task[cpu] : 0;
    if (!ctx)
        ksnprintf(buf, cap, "cpu %u, not stopped", cpu);
    else if (task)
        ksnprintf(buf, cap, "cpu %u, task %s (pid %u)", cpu, task->name, task->pid);
    else
        ksnprintf(buf, cap, "cpu %u", cpu);
}

static bool t_reg_read(unsigned cpu, enum gdb_reg reg, uint64_t *value)
{
    struct context *ctx = gdb_stopped_context(cpu);
    return ctx && gdb_x86_reg_read(ctx, &cpu_state[cpu], reg, value);
}

/* Room a resumed CPU needs below its stack pointer at once: an interrupt's frame and the register frame the
 * entry path pushes. A stack pointer without it mapped and writable turns the next interrupt into a double
 * fault (rsp = 0 did). */
#define STACK_ROOM (sizeof(struct context) + 64)

/* Beyond the register table's own checks (canonical rip and rsp, flags): where the CPU would go. rip must
 * be mapped, the stack below rsp mapped writable; the value a register already holds is always taken back. */
static bool resumable(const struct context *ctx, enum gdb_reg reg, uint64_t value)
{
    if (reg == GDB_RIP)
        return value == ctx->rip || gdb_x86_range_ok(value, 1, false);
    if (reg == GDB_RSP)
        return value == ctx->rsp || (value >= STACK_ROOM && gdb_x86_range_ok(value - STACK_ROOM, STACK_ROOM, true));
    return true;
}

static bool t_reg_write(unsigned cpu, enum gdb_reg reg, uint64_t value)
{
    struct context *ctx = gdb_stopped_context(cpu);
    return ctx && resumable(ctx, reg, value) && gdb_x86_reg_write(ctx, &cpu_state[cpu], reg, value);
}

/* An MSR access run on the CPU that owns the MSR. In static storage, one per CPU: a CPU that answers after
 * the leader gave up on it writes here, not into a stack frame long gone. */
struct msr_access {
    uint32_t msr;
    bool write;
    uint64_t value;
    bool ok;
};
static struct msr_access msr_access[MAX_CPUS];

static void msr_access_here(void *arg)
{
    struct msr_access *a = arg;
    a->ok = a->write ? wrmsr_safe(a->msr, a->value) : rdmsr_safe(a->msr, &a->value);
}

static bool msr_on(unsigned cpu, uint32_t msr, bool write, uint64_t *value)
{
    if (cpu >= MAX_CPUS)
        return false;
    struct msr_access *a = &msr_access[cpu];
    *a = (struct msr_access){ .msr = msr, .write = write, .value = *value };
    if (!gdb_on_cpu(cpu, msr_access_here, a) || !a->ok)
        return false;
    *value = a->value;
    return true;
}

static bool t_msr_read(unsigned cpu, uint32_t msr, uint64_t *value)
{
    *value = 0;
    return msr_on(cpu, msr, false, value);
}

static bool t_msr_write(unsigned cpu, uint32_t msr, uint64_t value) { return msr_on(cpu, msr, true, &value); }

static void describe_pmu_here(void *arg) { pmu_describe_cpu(arg); }

static void t_pmu_report(struct sink *out)
{
    /* Static for the same reason as msr_access. */
    static char buf[1536];
    static struct buffer_sink bs;
    const char *source = pmu_source_name();
    sink_printf(out, "pmu: %s; %s\n", source ? source : "profile samples on the tick", pmu_verdict_reason());
    for (unsigned cpu = 0; cpu < cpu_count(); cpu++) {
        /* Written by that CPU into a buffer here, then passed on: only this CPU talks to gdb. */
        buffer_sink_init(&bs, buf, sizeof buf);
        if (!gdb_on_cpu(cpu, describe_pmu_here, &bs.sink))
            sink_printf(&bs.sink, "cpu %u: not stopped, its MSRs cannot be read\n", cpu);
        sink_write(out, buf, bs.len);
    }
}

/* `monitor poweroff`: ACPI S5, as the shell's poweroff. Where ACPI cannot, the reason goes back to gdb and the
 * machine stays stopped for it to detach. (No console message: a parked CPU may hold the console lock.) */
static const char *t_poweroff(void)
{
    return platform_poweroff();
}

/* The debugger's own code: arch/x86_64/linker.ld's section. */
extern const char __debugger_text_start[], __debugger_text_end[];
extern const char __debugger_data_start[], __debugger_data_end[], __debugger_bss_start[], __debugger_bss_end[];

static void t_debugger_code(uint64_t *start, uint64_t *end)
{
    *start = (uint64_t)(uintptr_t)__debugger_text_start;
    *end = (uint64_t)(uintptr_t)__debugger_text_end;
}

/* The debugger's own data -- the .data and .bss of the objects whose code is the debugger's (linker.ld) -- and
 * what every interrupt and exception touches on its way in, before the debugger can disarm the debug
 * registers: the IDT, each CPU's percpu_area (its GDT and TSS, the depth interrupt_dispatch counts in) and its
 * IST stacks (apart from percpu_area: an AP's are allocated as it starts). A watchpoint there fires inside the very entry that would report it, and
 * again in that entry's entry, until the stack runs out -- Linux refuses its cpu_entry_area the same way. */
static bool t_debugger_data(uint64_t addr, uint64_t len)
{
    uint64_t ranges[4][2] = {
        { (uint64_t)(uintptr_t)__debugger_data_start, (uint64_t)(uintptr_t)__debugger_data_end },
        { (uint64_t)(uintptr_t)__debugger_bss_start, (uint64_t)(uintptr_t)__debugger_bss_end },
        { (uint64_t)(uintptr_t)percpu_area, (uint64_t)(uintptr_t)percpu_area + sizeof percpu_area },
        { 0, 0 },
    };
    idt_bounds(&ranges[3][0], &ranges[3][1]);
    for (unsigned i = 0; i < 4; i++)
        if (addr < ranges[i][1] && addr + len > ranges[i][0])
            return true;
    return percpu_ist_overlaps((uintptr_t)addr, (uintptr_t)(addr + len));
}

static const struct gdb_target target = {
    .cpu_count = t_cpu_count,
    .cpu_describe = t_cpu_describe,
    .reg_read = t_reg_read,
    .reg_write = t_reg_write,
    .mem_read = gdb_x86_mem_read,
    .mem_write = gdb_x86_mem_write,
    .sw_break_plant = gdb_x86_sw_break_plant,
    .sw_break_unplant = gdb_x86_sw_break_unplant,
    .hw_break_slots = GDB_X86_HW_BREAKS,
    .hw_break_valid = gdb_x86_hw_break_valid,
    .debugger_code = t_debugger_code,
    .debugger_data = t_debugger_data,
    .resume = gdb_stop_resume,
    .msr_read = t_msr_read,
    .msr_write = t_msr_write,
    .pmu_report = t_pmu_report,
    .poweroff = t_poweroff,
};

/* ---- the state machine's hooks ------------------------------------------------------------------------------ */

static void transport_irq(bool on, int cpu)
{
    if (on)
        gdb_uart_irq_enable(cpu < 0 ? 0 : (unsigned)cpu);
    else
        gdb_uart_irq_disable();
}

static const struct gdb_arch_ops arch_ops = {
    .this_cpu = cpu_index,
    .cpu_count = cpu_count,
    .cpu_online = cpu_online,
    .stop_cpu = gdb_x86_stop_cpu,
    .wake_cpu = gdb_x86_wake_cpu,
    .save_cpu_state = save_cpu_state,
    .park_begin = gdb_x86_park_begin,
    .park_idle = gdb_x86_park_idle,
    .park_end = gdb_x86_park_end,
    .leave_nmi = gdb_x86_leave_nmi,
    .step_begin = gdb_x86_step_begin,
    .step_end = gdb_x86_step_end,
    .skip_hw_break = gdb_x86_skip_hw_break,
    .load_debug_regs = gdb_x86_load_debug_regs,
    .set_pc = gdb_x86_set_pc,
    .break_insn_at = gdb_x86_break_insn_at,
    .trap = gdb_x86_trap,
    .transport_irq = transport_irq,
    .relax = cpu_relax,
};

/* ---- what the debugger's set-up asks for (hal/debug.h) ------------------------------------------------------- */

const struct gdb_target *gdb_arch_target(void) { return &target; }

const struct gdb_arch_ops *gdb_arch_ops(void) { return &arch_ops; }
