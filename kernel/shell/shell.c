/* kernel/shell/shell.c: the shell (kernel/shell/shell.h) -- running a line against the command table
 * (kernel/shell/command_table.c), and the console shell task that reads lines with the line editor and prints the
 * prompt. The UDP shell reuses shell_run_line with its own sink and the datagram's origin. */
#include "kernel/shell/shell.h"

#include "hal/cpu.h"
#include "hal/platform.h"
#include "kernel/console.h"
#include "kernel/labels.h"
#include "kernel/lib/parse.h"
#include "kernel/log.h"
#include "kernel/shell/commands.h"
#include "kernel/shell/lineedit.h"
#include "kernel/task.h"

const struct shell_origin shell_console_origin = { .udp = false };

int shell_run_line(char *line, const struct shell_origin *from, struct sink *out)
{
    char *argv[SHELL_MAX_ARGS];
    int argc = split_words(line, argv, SHELL_MAX_ARGS);
    if (argc < 0) {
        sink_printf(out, "too many words (max %d)\n", SHELL_MAX_ARGS);
        return -1;
    }
    if (argc == 0)
        return 0;
    const struct shell_command *cmd = shell_find_command(argv[0]);
    if (!cmd) {
        /* Echo the name back only as printable text: the line may be binary garbage. */
        char shown[33];
        size_t n = 0;
        for (const char *p = argv[0]; *p && n < sizeof shown - 1; p++)
            shown[n++] = (*p >= 0x20 && *p < 0x7F) ? *p : '?';
        shown[n] = 0;
        sink_printf(out, "unknown command: %s (try help)\n", shown);
        return -1;
    }
    /* The task running the command carries cmd=<name> meanwhile, so its samples say what it was doing; its
     * own set comes back afterwards unless something (`label`) changed it meanwhile. The cmd= sets are pinned
     * in the pool at boot (console_start_shell), so a full pool never stops them. */
    struct task *self = task_current();
    const struct label_set *before = self ? task_labels_hold(self) : 0;
    const struct label_set *mine = self ? label_intern_one("cmd", cmd->name, 0) : 0;
    if (mine)
        task_set_labels(self, mine);
    /* Whole lines only: a command that prints a line in pieces would otherwise let another task's log line
     * (DHCP's, say) land inside it on the console. */
    struct line_sink lines;
    line_sink_init(&lines, out);
    int result = cmd->run(argc, argv, &lines.sink, from);
    line_sink_flush(&lines);
    if (mine)
        task_replace_labels(self, mine, before);
    label_release(mine);
    label_release(before);
    return result;
}

#define PROMPT "> "

/* While the prompt waits, a log line (console_write_log) goes above it, and the prompt and the half-typed line
 * are drawn again below. Under the console lock. */
static void redraw_above(void *arg, struct sink *screen, const char *text, size_t len)
{
    line_editor_redraw_above(arg, PROMPT, text, len, screen);
}

/* One key into the editor, its echo and (when it ends the line) the end of the prompt's redraw in one piece
 * under the console lock, so a log line sees the line either before the key or after it, never between. */
static enum line_event feed_key(struct line_editor *editor, char c)
{
    unsigned long flags = console_hold();
    enum line_event event = line_editor_feed(editor, c, &console_held_sink);
    if (event != LINE_NONE)
        console_prompt_hide_held();
    console_release(flags);
    return event;
}

static void console_shell(void *arg)
{
    (void)arg;
    static struct line_editor editor;

    line_editor_init(&editor);
    sink_printf(&console_sink, "ready: %u cpus, %llu MiB, boot %lld ms\n", cpu_count(),
                (unsigned long long)(platform_ram_bytes() >> 20), (long long)(time_ns() / 1000000));
    console_prompt_show(PROMPT, redraw_above, &editor);
    for (;;) {
        char c = console_read_char();
        switch (feed_key(&editor, c)) {
        case LINE_READY:
            shell_run_line(editor.buf, &shell_console_origin, &console_sink);
            break;
        case LINE_TOO_LONG:
            sink_printf(&console_sink, "line too long (max %d characters)\n", LINE_MAX);
            break;
        case LINE_CANCEL:
            break;
        case LINE_NONE:
            continue;
        }
        console_prompt_show(PROMPT, redraw_above, &editor);
    }
}

void console_start_shell(void)
{
    /* Every command's cmd= set, made now and never freed: however full the pool gets, they are there. */
    for (const struct shell_command *c = shell_commands; c->name; c++)
        label_release(label_intern_pinned("cmd", c->name, 0));
    /* A kernel with no shell would boot to nothing: say so where the console's reader can see it. */
    if (!task_spawn("shell", console_shell, 0, 0))
        log_warn("shell: could not start the console shell (no task slot or memory): no prompt");
}
