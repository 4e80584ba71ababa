/* kernel/shell/cmd_tasks.c: the `tasks` command -- every live task in pid order, what it is doing and the call
 * chain it is in, as Linux's sysrq-t and Go's goroutine?debug=2 print theirs. The copy and the lines are the
 * task dump's (kernel/profiler/task_dump.h, which states the format; docs/profiler.md, "Where every task is"),
 * shared with /debug/pprof/goroutine; the task running the command shows its chain from cmd_tasks up. */
#include "kernel/shell/commands.h"
#include "kernel/profiler/task_dump.h"

int cmd_tasks(int argc, char **argv, struct sink *out, const struct shell_origin *from)
{
    (void)argv, (void)from;
    if (argc != 1)
        return shell_usage(out, "tasks");
    struct task_dump d;
    if (!task_dump_take(&d)) {
        sink_puts(out, "tasks: no memory for a copy of the task table\n");
        return 1;
    }
    task_dump_print(out, &d);
    task_dump_free(&d);
    return 0;
}
