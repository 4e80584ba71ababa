/* kernel/shell/cmd_work.c: the `work` command -- starts the request-serving workload of kernel/workload/work.h
 * (`work MS N [COMPUTE [PERIOD]]`), reports its run (`work` alone: each task's requests and its split of compute
 * and wait, measured by the task itself, and whether the run still goes), and reads back its span log
 * (`work spans [FROM]`, from the last run's first span unless FROM says otherwise). The command only routes: the
 * words, the run and the report's text are the workload's, so a test or another command reads them the same. */
#include "kernel/shell/commands.h"

#include "kernel/lib/parse.h"
#include "kernel/lib/string.h"
#include "kernel/workload/work.h"

/* `work spans [FROM]`. */
static int print_spans(int argc, char **argv, struct sink *out)
{
    struct work_run_log run;
    uint64_t from = work_last_run(&run) ? run.first_span : 0;
    if (argc > 3 || (argc == 3 && !parse_u64(argv[2], &from)))
        return shell_usage(out, "work");
    work_spans_print(from, out);
    return 0;
}

/* `work` alone. */
static int print_last_run(struct sink *out)
{
    struct work_run_log run;
    if (!work_last_run(&run)) {
        sink_puts(out, "work: no run yet\n");
        return 0;
    }
    work_report(&run, out);
    return 0;
}

int cmd_work(int argc, char **argv, struct sink *out, const struct shell_origin *from)
{
    (void)from;
    if (argc >= 2 && strcmp(argv[1], "spans") == 0)
        return print_spans(argc, argv, out);
    if (argc == 1)
        return print_last_run(out);

    struct work_params params;
    if (!work_params_parse(argc - 1, argv + 1, &params))
        return shell_usage(out, "work");
    uint32_t pids[WORK_MAX_TASKS], started;
    const char *unlabelled_why;
    if (!work_start(&params, pids, &started, &unlabelled_why)) {
        sink_puts(out, "work: busy (a run is in progress)\n");
        return 1;
    }
    sink_puts(out, "work: started ");
    work_describe(&params, params.tasks, out);
    sink_puts(out, " (pids");
    for (uint32_t i = 0; i < started; i++)
        sink_printf(out, " %u", pids[i]);
    sink_puts(out, ")\n");
    if (started < params.tasks)
        sink_printf(out, "work: only %u of %u tasks could be started\n", started, params.tasks);
    if (unlabelled_why)
        sink_printf(out, "work: the tasks run unlabelled: %s\n", unlabelled_why);
    return started ? 0 : 1;
}
