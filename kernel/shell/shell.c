/* kernel/shell/shell.c: the shell (kernel/shell/shell.h) -- the one command table, running a line against it, and the
 * console shell task that reads lines with the line editor and prints the prompt. The UDP shell reuses
 * shell_run_line with its own sink. */
#include "kernel/shell/shell.h"

#include "hal/cpu.h"
#include "hal/platform.h"
#include "kernel/console.h"
#include "kernel/labels.h"
#include "kernel/shell/lineedit.h"
#include "kernel/lib/parse.h"
#include "kernel/profiler/stream_codec.h"
#include "kernel/lib/string.h"
#include "kernel/task.h"

const struct shell_command shell_commands[] = {
    { "help", "help", "list the commands", cmd_help },
    { "profile", "profile [ms] [pid|all] [chains|raw] [key=value] | " PROFILE_STREAM_USAGE,
      "sample where the CPUs spend their time, fold by call chain (raw: every sample; key=value: only those; "
      "stream: send every sample as UDP datagrams in the background until stopped or SECONDS)",
      cmd_profile },
    { "lscpu", "lscpu", "the CPU, what it claims about its PMU, and the source profile would use", cmd_lscpu },
    { "ps", "ps", "tasks: pid, cpu, state, name, labels", cmd_ps },
    { "label", "label PID key=value ... | label PID -", "set (up to 4 pairs) or clear a task's label set",
      cmd_label },
    { "stacks", "stacks", "per task: stack size, deepest use, headroom", cmd_stacks },
    { "cpus", "cpus", "each CPU: APIC id, online, ticks, busy ticks", cmd_cpus },
    { "net", "net", "the network interface: address, MAC, packets and errors in and out, the UDP shell", cmd_net },
    { "netload", "netload send HOST PORT SECONDS [SIZE] [PPS] | sink PORT SECONDS | echo PORT SECONDS",
      "UDP load from this end: send, count (sink) or reflect (echo) sequence-numbered datagrams", cmd_netload },
    { "mem", "mem", "heap statistics", cmd_mem },
    { "uptime", "uptime", "time since boot", cmd_uptime },
    { "burn", "burn [MS [N [irqsoff]]]",
      "start N busy tasks for MS ms (a known call chain; irqsoff: in slices with interrupts off); alone: the last run",
      cmd_burn },
    { "selftest", "selftest nmi", "an exception inside the NMI handler must not re-open NMIs: tried on this cpu",
      cmd_selftest },
    { "panic", "panic", "panic on purpose (to see the backtrace)", cmd_panic },
    { "poweroff", "poweroff", "power the machine off (ACPI S5)", cmd_poweroff },
    { 0, 0, 0, 0 },
};

const struct shell_command *shell_find_command(const char *name)
{
    for (const struct shell_command *c = shell_commands; c->name; c++)
        if (strcmp(c->name, name) == 0)
            return c;
    return 0;
}

int shell_run_line(char *line, struct sink *out)
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
     * own set comes back afterwards unless something (`label`) changed it meanwhile. With the label table
     * full the command runs with the set it had. */
    struct task *self = task_current();
    const struct label_set *before = self ? task_labels(self) : 0;
    const struct label_set *mine = self ? label_intern_one("cmd", cmd->name, 0) : 0;
    if (mine)
        task_set_labels(self, mine);
    /* Whole lines only: a command that prints a line in pieces would otherwise let another task's log line
     * (DHCP's, say) land inside it on the console. */
    struct line_sink lines;
    line_sink_init(&lines, out);
    int result = cmd->run(argc, argv, &lines.sink);
    line_sink_flush(&lines);
    if (mine)
        task_replace_labels(self, mine, before);
    return result;
}

static void echo_write(struct sink *sink, const char *text, size_t len)
{
    (void)sink;
    console_write(text, len);
}

static void console_shell(void *arg)
{
    (void)arg;
    static struct line_editor editor;
    struct sink echo = { echo_write };

    line_editor_init(&editor);
    sink_printf(&console_sink, "ready: %u cpus, %llu MiB, boot %lld ms\n", cpu_count(),
                (unsigned long long)(platform_ram_bytes() >> 20), (long long)(time_ns() / 1000000));
    sink_puts(&console_sink, "> ");
    for (;;) {
        char c = console_read_char();
        switch (line_editor_feed(&editor, c, &echo)) {
        case LINE_READY:
            shell_run_line(editor.buf, &console_sink);
            break;
        case LINE_TOO_LONG:
            sink_printf(&console_sink, "line too long (max %d characters)\n", LINE_MAX);
            break;
        case LINE_CANCEL:
            break;
        case LINE_NONE:
            continue;
        }
        sink_puts(&console_sink, "> ");
    }
}

void console_start_shell(void)
{
    task_spawn("shell", console_shell, 0, 0);
}
