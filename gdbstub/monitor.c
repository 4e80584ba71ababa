/* gdbstub/monitor.c: the monitor (gdbstub/monitor.h) -- a small command interpreter of its own beside the
 * packet handlers, for what gdb has no packet for: the MSRs of each CPU, the PMU's state, and powering the
 * machine off (gdb's `k` does not: it detaches, gdbstub/threads.c). Each command
 * writes to a struct sink like a shell command; the sink here gathers the text and sends it as `O`
 * packets (hex of the text), so a report of any length reaches gdb in pieces it shows as they come. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gdbstub/commands.h"
#include "gdbstub/monitor.h"
#include "gdbstub/packet.h"
#include "kernel/lib/parse.h"
#include "kernel/lib/sink.h"
#include "kernel/lib/string.h"

/* The sink the commands write to: output gathered up to GDB_MONITOR_OUT bytes, then sent. Static, like the
 * session's other buffers: the stack of a stopped CPU is not the place for a kilobyte. */
struct monitor_sink {
    struct sink sink;
    struct gdb_session *s;
    size_t len;
    bool lost; /* the link went while sending: the rest of the output is dropped */
    char out[GDB_MONITOR_OUT];
};

static struct monitor_sink monitor;
static char monitor_line[GDB_MONITOR_LINE + 1];

static void monitor_flush(struct monitor_sink *m)
{
    if (m->len == 0 || m->lost)
        return;
    struct gdb_link *link = m->s->link;
    gdb_out_reset(link);
    gdb_out_char(link, 'O');
    gdb_out_hex_bytes(link, m->out, m->len);
    m->len = 0;
    if (!gdb_link_send(link))
        m->lost = true;
}

static void monitor_write(struct sink *sink, const char *text, size_t len)
{
    /* sink is the first member of struct monitor_sink. */
    struct monitor_sink *m = (struct monitor_sink *)sink;
    for (size_t i = 0; i < len; i++) {
        if (m->len == sizeof m->out)
            monitor_flush(m);
        if (m->lost)
            return;
        m->out[m->len++] = text[i];
    }
}

static void monitor_help(struct sink *out)
{
    sink_puts(out, "monitor commands:\n"
                   "  help                          this list\n"
                   "  rdmsr [cpu N] MSR             read an MSR on CPU N (default: the current thread's)\n"
                   "  wrmsr [cpu N] MSR VALUE       write an MSR on CPU N\n"
                   "  pmu                           every PMU MSR of the profiler's backend, per CPU, decoded\n"
                   "  nobreak                       where breakpoints are refused: the debugger's own code\n"
                   "  poweroff                      power the machine off (gdb's kill only detaches)\n"
                   "numbers are decimal or 0x-prefixed hex; thread N in gdb is CPU N-1\n");
}

/* rdmsr [cpu N] MSR / wrmsr [cpu N] MSR VALUE, on gdb's current CPU unless one is named. */
static void monitor_msr(struct gdb_session *s, struct sink *out, int argc, char **argv, bool write)
{
    const char *usage = write ? "usage: wrmsr [cpu N] MSR VALUE\n" : "usage: rdmsr [cpu N] MSR\n";
    int arg = 1;
    unsigned cpu = s->g_cpu;
    if (arg < argc && strcmp(argv[arg], "cpu") == 0) {
        uint64_t n;
        if (arg + 1 >= argc || !parse_u64_range(argv[arg + 1], 0, s->cpus - 1u, &n)) {
            sink_printf(out, "error: no cpu '%s' (there are %u)\n", arg + 1 < argc ? argv[arg + 1] : "", s->cpus);
            return;
        }
        cpu = (unsigned)n;
        arg += 2;
    }
    uint64_t msr, value = 0;
    if (argc != arg + (write ? 2 : 1)) {
        sink_puts(out, usage);
        return;
    }
    if (!parse_u64_range(argv[arg], 0, UINT32_MAX, &msr)) {
        sink_printf(out, "error: bad MSR number '%s'\n%s", argv[arg], usage);
        return;
    }
    if (write && !parse_u64(argv[arg + 1], &value)) {
        sink_printf(out, "error: bad value '%s'\n%s", argv[arg + 1], usage);
        return;
    }
    if (write) {
        if (s->target->msr_write(cpu, (uint32_t)msr, value))
            sink_printf(out, "cpu %u msr 0x%llx <- 0x%016llx\n", cpu, (unsigned long long)msr,
                        (unsigned long long)value);
        else
            sink_printf(out, "error: cpu %u msr 0x%llx: wrmsr faulted\n", cpu, (unsigned long long)msr);
    } else {
        if (s->target->msr_read(cpu, (uint32_t)msr, &value))
            sink_printf(out, "cpu %u msr 0x%llx = 0x%016llx\n", cpu, (unsigned long long)msr,
                        (unsigned long long)value);
        else
            sink_printf(out, "error: cpu %u msr 0x%llx: rdmsr faulted\n", cpu, (unsigned long long)msr);
    }
}

static void monitor_nobreak(struct gdb_session *s, struct sink *out)
{
    uint64_t start, end;
    s->target->debugger_code(&start, &end);
    sink_printf(out, "no breakpoints in the debugger's own code, 0x%llx-0x%llx (Z answers E01): the stub, the "
                     "stop/resume path and the trap, NMI and interrupt entry run there\n",
                (unsigned long long)start, (unsigned long long)end);
}

/* The line goes to gdb before the power does, and gdb gets no OK: the machine is gone. Only where it could not
 * go does the command finish, with why, and the machine stays stopped. */
static void monitor_poweroff(struct gdb_session *s, struct sink *out)
{
    sink_puts(out, "poweroff: powering the machine off\n");
    monitor_flush(&monitor);
    const char *why = s->target->poweroff();
    sink_printf(out, "poweroff: failed: %s\n", why ? why : "no reason given");
}

static void monitor_run(struct gdb_session *s, struct sink *out, char *line)
{
    char *argv[SHELL_MAX_ARGS];
    int argc = split_words(line, argv, SHELL_MAX_ARGS);
    if (argc < 0) {
        sink_puts(out, "error: too many words\n");
        return;
    }
    if (argc == 0 || strcmp(argv[0], "help") == 0)
        monitor_help(out);
    else if (strcmp(argv[0], "rdmsr") == 0)
        monitor_msr(s, out, argc, argv, false);
    else if (strcmp(argv[0], "wrmsr") == 0)
        monitor_msr(s, out, argc, argv, true);
    else if (strcmp(argv[0], "pmu") == 0 && argc == 1)
        s->target->pmu_report(out);
    else if (strcmp(argv[0], "pmu") == 0)
        sink_puts(out, "usage: pmu\n");
    else if (strcmp(argv[0], "nobreak") == 0)
        monitor_nobreak(s, out);
    else if (strcmp(argv[0], "poweroff") == 0 && argc == 1)
        monitor_poweroff(s, out);
    else if (strcmp(argv[0], "poweroff") == 0)
        sink_puts(out, "usage: poweroff\n");
    else
        sink_printf(out, "error: unknown command '%s'; try 'monitor help'\n", argv[0]);
}

static bool reply(struct gdb_session *s, const char *text)
{
    gdb_out_reset(s->link);
    gdb_out_str(s->link, text);
    return gdb_link_send(s->link);
}

bool gdb_monitor_packet(struct gdb_session *s)
{
    const char *hex = s->link->in + strlen("qRcmd,");
    size_t digits = s->link->in_len - strlen("qRcmd,");
    if (digits % 2 != 0)
        return reply(s, "E22");
    struct monitor_sink *m = &monitor;
    *m = (struct monitor_sink){ .sink = { .write = monitor_write }, .s = s };
    if (digits / 2 > GDB_MONITOR_LINE) {
        sink_printf(&m->sink, "error: command longer than %u characters\n", GDB_MONITOR_LINE);
    } else {
        if (!hex_decode(monitor_line, hex, digits / 2))
            return reply(s, "E22");
        monitor_line[digits / 2] = '\0';
        monitor_run(s, &m->sink, monitor_line);
    }
    monitor_flush(m);
    if (m->lost)
        return false;
    return reply(s, "OK");
}
