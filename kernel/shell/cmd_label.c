/* kernel/shell/cmd_label.c: the `label PID key=value ...` / `label PID -` shell command -- sets or clears any task's
 * label set (kernel/labels.h), which every profiler sample of that task then carries. The pairs are checked
 * before anything is interned, and the pid before the set is, so a refused line leaves the table as it was. */
#include "kernel/shell/commands.h"
#include "kernel/labels.h"
#include "kernel/lib/parse.h"
#include "kernel/lib/string.h"
#include "kernel/task.h"

int cmd_label(int argc, char **argv, struct sink *out, const struct shell_origin *from)
{
    (void)from;
    uint64_t pid;
    if (argc < 3 || !parse_u64_range(argv[1], 0, UINT32_MAX, &pid))
        return shell_usage(out, "label");
    bool clear = strcmp(argv[2], "-") == 0;
    unsigned n = (unsigned)(argc - 2);
    struct label_pair pairs[LABEL_MAX_PAIRS];
    if (clear ? argc != 3 : n > LABEL_MAX_PAIRS)
        return shell_usage(out, "label");
    for (unsigned i = 0; !clear && i < n; i++) {
        bool ok = label_parse_pair(argv[2 + i], &pairs[i]);
        for (unsigned j = 0; ok && j < i; j++)
            ok = strcmp(pairs[j].key, pairs[i].key) != 0; /* a key twice is a bad form, not a full table */
        if (!ok)
            return shell_usage(out, "label");
    }
    if (!task_exists((uint32_t)pid)) {
        sink_printf(out, "label: no task with pid %u\n", (uint32_t)pid);
        return 1;
    }
    const struct label_set *set = 0;
    if (!clear) {
        const char *why = "cannot intern the label set";
        set = label_intern(pairs, n, &why);
        if (!set) {
            sink_printf(out, "label: %s\n", why);
            return 1;
        }
    }
    /* The task may have exited since the check above. */
    if (!task_set_labels_by_pid((uint32_t)pid, set)) {
        sink_printf(out, "label: no task with pid %u\n", (uint32_t)pid);
        return 1;
    }
    char text[LABEL_SET_TEXT_MAX];
    label_set_format(set, text, sizeof text);
    sink_printf(out, "pid %u labels %s\n", (uint32_t)pid, text);
    return 0;
}
