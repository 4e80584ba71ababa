/* kernel/shell/cmd_system.c: the shell commands that show the machine -- help (the command table), ps, stacks, cpus,
 * uptime, lscpu -- and the two that end it on purpose, panic and poweroff. Each writes only to its sink. */
#include "hal/cpu.h"
#include "hal/platform.h"
#include "hal/pmu.h"
#include "kernel/shell/commands.h"
#include "kernel/labels.h"
#include "kernel/panic.h"
#include "kernel/lib/string.h"
#include "kernel/net/boot_secret.h"
#include "kernel/task.h"

static const char *const state_names[] = { "ready", "running", "sleeping", "blocked", "dead" };

static bool no_arguments(int argc, char **argv, struct sink *out)
{
    if (argc == 1)
        return true;
    shell_usage(out, argv[0]);
    return false;
}

int cmd_help(int argc, char **argv, struct sink *out, const struct shell_origin *from)
{
    (void)from;
    if (!no_arguments(argc, argv, out))
        return 1;
    for (const struct shell_command *c = shell_commands; c->name; c++)
        sink_printf(out, "%-34s %s\n", c->usage, c->help);
    return 0;
}

/* LABELS comes last, "-" when the task has none, so the columns before it read as they always did. */
static void ps_row(struct task *t, void *arg)
{
    int state = atomic_load(&t->state);
    char labels[TASK_LABELS_TEXT_MAX];
    task_labels_text(t, labels, sizeof labels);
    sink_printf(arg, "%5u %3u %-8s %-15s %s\n", t->pid, t->cpu,
                state >= 0 && state <= TASK_DEAD ? state_names[state] : "?", t->name, labels);
}

int cmd_ps(int argc, char **argv, struct sink *out, const struct shell_origin *from)
{
    (void)from;
    if (!no_arguments(argc, argv, out))
        return 1;
    sink_puts(out, "  PID CPU STATE    NAME            LABELS\n");
    task_for_each(ps_row, out);
    return 0;
}

static void stacks_row(struct task *t, void *arg)
{
    size_t used = task_stack_used(t);
    sink_printf(arg, "%5u %-16s %6zu %6zu %6zu\n", t->pid, t->name, t->stack_size, used, t->stack_size - used);
}

int cmd_stacks(int argc, char **argv, struct sink *out, const struct shell_origin *from)
{
    (void)from;
    if (!no_arguments(argc, argv, out))
        return 1;
    sink_puts(out, "  PID NAME             SIZE   USED HEADROOM\n");
    task_for_each(stacks_row, out);
    return 0;
}

int cmd_cpus(int argc, char **argv, struct sink *out, const struct shell_origin *from)
{
    (void)from;
    if (!no_arguments(argc, argv, out))
        return 1;
    sink_puts(out, "CPU APIC ONLINE TICKS BUSY\n");
    for (unsigned i = 0; i < cpu_count(); i++) {
        uint64_t ticks, busy;
        sched_cpu_ticks(i, &ticks, &busy);
        sink_printf(out, "%3u %4u %-6s %llu %llu\n", i, cpu_hw_id(i), cpu_online(i) ? "yes" : "no",
                    (unsigned long long)ticks, (unsigned long long)busy);
    }
    return 0;
}

int cmd_uptime(int argc, char **argv, struct sink *out, const struct shell_origin *from)
{
    (void)from;
    if (!no_arguments(argc, argv, out))
        return 1;
    int64_t ms = time_ns() / 1000000;
    sink_printf(out, "up %lld.%03lld s\n", (long long)(ms / 1000), (long long)(ms % 1000));
    return 0;
}

int cmd_lscpu(int argc, char **argv, struct sink *out, const struct shell_origin *from)
{
    (void)from;
    if (!no_arguments(argc, argv, out))
        return 1;
    pmu_describe(out);
    sink_printf(out, "boot: %s\n", platform_boot_summary());
    boot_secret_note(out); /* keyed under a weak boot secret: say so */
    return 0;
}

int cmd_panic(int argc, char **argv, struct sink *out, const struct shell_origin *from)
{
    (void)from;
    if (!no_arguments(argc, argv, out))
        return 1;
    panic("requested from the shell");
}

int cmd_poweroff(int argc, char **argv, struct sink *out, const struct shell_origin *from)
{
    (void)from;
    if (!no_arguments(argc, argv, out))
        return 1;
    sink_puts(out, "poweroff: ACPI S5\n");
    const char *why = platform_poweroff();
    sink_printf(out, "poweroff: failed: %s\n", why);
    return 1;
}

int cmd_selftest(int argc, char **argv, struct sink *out, const struct shell_origin *from)
{
    (void)from;
    if (argc != 2 || strcmp(argv[1], "nmi") != 0)
        return shell_usage(out, "selftest");
    const char *result = platform_nmi_selftest();
    sink_printf(out, "selftest nmi: %s\n", result);
    return strncmp(result, "ok", 2) == 0 ? 0 : 1;
}
