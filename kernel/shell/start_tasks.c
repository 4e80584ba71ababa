/* kernel/shell/start_tasks.c: starting the N tasks of a command's run (`burn`, `lockfight`) -- each spawned and its
 * pid printed, and those that could not start said in one line -- so each command keeps only its run's own state. */
#include "kernel/shell/commands.h"

#include "hal/cpu.h"
#include "kernel/task.h"

unsigned shell_start_tasks(struct sink *out, const char *name, void (*entry)(void *arg), void *arg, unsigned n,
                           bool round_the_cpus)
{
    unsigned started = 0;
    for (unsigned i = 0; i < n; i++) {
        struct task *t = task_spawn(name, entry, arg, round_the_cpus ? (int)(i % cpu_count()) : -1);
        if (!t)
            break;
        started++;
        sink_printf(out, " %u", t->pid);
    }
    sink_puts(out, ")\n");
    if (started < n)
        sink_printf(out, "%s: only %u of %u tasks could be started\n", name, started, n);
    return started;
}
