/* kernel/shell/cmd_label.c: the `label` shell command -- `label PID key=value ... [span=N]` sets any task's
 * label set (kernel/labels.h) and, with span=N, its numeric span, which every profiler sample of that task then
 * carries; `label PID -` clears both; `label` alone shows the pool (sets in use, waiting to be freed, dropped).
 * The pairs are checked before anything is interned, and the pid before the set is, so a refused line leaves
 * the pool as it was. span=N alone interns nothing: it is the cheap form for a value that changes often. */
#include "kernel/shell/commands.h"
#include "kernel/labels.h"
#include "kernel/lib/parse.h"
#include "kernel/lib/string.h"
#include "kernel/task.h"

/* How long a `label` waits for retired sets to be freed when the pool is full: a few of the profiler's 50 ms
 * drains, after which the sets it has drained past are free. */
#define LABEL_FULL_WAIT_MS 200

static int show_pool(struct sink *out)
{
    struct label_stats stats;
    char line[200];
    label_stats(&stats);
    label_stats_format(&stats, line, sizeof line);
    sink_printf(out, "%s\n", line);
    return 0;
}

/* label_intern, waiting a little while sets a drain will free hold the pool full. */
static const struct label_set *intern_waiting(const struct label_pair *pairs, unsigned n, const char **why)
{
    for (unsigned waited = 0;; waited += 10) {
        const struct label_set *set = label_intern(pairs, n, why);
        struct label_stats stats;
        label_stats(&stats);
        if (set || waited >= LABEL_FULL_WAIT_MS || stats.waiting == 0 || stats.used < stats.capacity)
            return set;
        task_sleep_ms(10);
    }
}

int cmd_label(int argc, char **argv, struct sink *out, const struct shell_origin *from)
{
    (void)from;
    uint64_t pid;
    if (argc == 1)
        return show_pool(out);
    if (argc < 3 || !parse_u64_range(argv[1], 0, UINT32_MAX, &pid))
        return shell_usage(out, "label");
    bool clear = strcmp(argv[2], "-") == 0;
    struct label_pair pairs[LABEL_MAX_PAIRS + 1];
    unsigned n = 0;
    bool has_span = false;
    uint64_t span = 0;
    if (clear ? argc != 3 : (unsigned)(argc - 2) > LABEL_MAX_PAIRS + 1)
        return shell_usage(out, "label");
    for (int w = 2; !clear && w < argc; w++) {
        struct label_pair p;
        bool ok = label_parse_pair(argv[w], &p);
        if (ok && strcmp(p.key, LABEL_SPAN_KEY) == 0) {
            /* the span: a decimal number, 0 clearing it */
            ok = !has_span && parse_u64(p.value, &span);
            has_span = true;
        } else if (ok) {
            for (unsigned j = 0; ok && j < n; j++)
                ok = strcmp(pairs[j].key, p.key) != 0; /* a key twice is a bad form, not a full table */
            ok = ok && n < LABEL_MAX_PAIRS;
            if (ok)
                pairs[n++] = p;
        }
        if (!ok)
            return shell_usage(out, "label");
    }
    if (!task_exists((uint32_t)pid)) {
        sink_printf(out, "label: no task with pid %u\n", (uint32_t)pid);
        return 1;
    }
    const struct label_set *set = 0;
    if (n > 0) {
        const char *why = "cannot intern the label set";
        set = intern_waiting(pairs, n, &why);
        if (!set) {
            struct label_stats stats;
            label_stats(&stats);
            sink_printf(out, "label: %s; %llu dropped so far\n", why, (unsigned long long)stats.dropped);
            return 1;
        }
    }
    /* The task may have exited since the check above. */
    bool found = (n == 0 && !clear) || task_set_labels_by_pid((uint32_t)pid, set);
    if (found && (has_span || clear))
        found = task_set_span_by_pid((uint32_t)pid, clear ? 0 : span);
    label_release(set);
    if (!found) {
        sink_printf(out, "label: no task with pid %u\n", (uint32_t)pid);
        return 1;
    }
    char text[LABEL_SET_TEXT_MAX];
    if (n > 0 || clear) {
        label_set_format(set, text, sizeof text);
        sink_printf(out, "pid %u labels %s", (uint32_t)pid, text);
        if (has_span)
            sink_printf(out, " span %llu", (unsigned long long)span);
        sink_puts(out, "\n");
    } else {
        sink_printf(out, "pid %u span %llu\n", (uint32_t)pid, (unsigned long long)span);
    }
    return 0;
}
