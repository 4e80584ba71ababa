/* kernel/shell/command_table.c: the one command table (kernel/shell/commands.h) -- each command's name, its usage
 * line and its help line, written here only: `help` prints the table, and a command given bad words prints its
 * row's usage through shell_usage. Finding a command by name is here too; running a line is kernel/shell/shell.c. */
#include "kernel/shell/commands.h"

#include "kernel/lib/string.h"

const struct shell_command shell_commands[] = {
    { "help", "help", "list the commands", cmd_help },
    { "profile", "profile [ms] [pid|all] [chains|raw] [key=value] [wall]",
      "sample where the CPUs spend their time, fold by call chain (raw: every sample; key=value: only those; "
      "wall: every task every 10 ms, running or waiting)",
      cmd_profile },
    { "profile stream", "profile stream [HOST:PORT|PORT [SECONDS] [pid|all] [wall] | stop]",
      "send every sample as UDP datagrams in the background until stopped or SECONDS", cmd_profile_stream },
    { "profile top", "profile top [ms] [N]",
      "the hottest functions, redrawn every ms (100-10000, default 1000) until a key or N intervals (1-1000)",
      cmd_profile_top },
    { "lscpu", "lscpu", "the CPU, what it claims about its PMU, and the source profile would use", cmd_lscpu },
    { "ps", "ps", "tasks: pid, cpu, state, name, labels", cmd_ps },
    { "label", "label [PID key=value ... [span=N] | PID -]",
      "set (up to 4 pairs, and a numeric span) or clear a task's labels; alone: the label pool", cmd_label },
    { "stacks", "stacks", "per task: stack size, deepest use, headroom", cmd_stacks },
    { "tasks", "tasks", "every task: what it does or waits on, for how long, its labels and its call chain", cmd_tasks },
    { "locks", "locks [N] (N 1..256, default 10)",
      "where CPUs spun on spinlocks since boot: the N call sites that spun longest, their waits and time",
      cmd_locks },
    { "cpus", "cpus", "each CPU: APIC id, online, ticks, busy ticks", cmd_cpus },
    { "net", "net | net wedge MS",
      "the network interface: address, MAC, packets and errors in and out, the UDP shell; wedge: the network task "
      "stops polling the card for MS ms",
      cmd_net },
    { "netload", "netload send HOST PORT SECONDS [SIZE] [PPS] | netload sink PORT SECONDS | netload echo PORT SECONDS",
      "UDP load from this end: send, count (sink) or reflect (echo) sequence-numbered datagrams", cmd_netload },
    { "mem", "mem [sites [N] | leak N BYTES | leak free] (N 1..100 sites, 1..4096 blocks; BYTES 16..1048576)",
      "heap statistics; sites: the N call chains holding the most heap (default 10); leak: keep N blocks on purpose, "
      "to find them in sites and /debug/pprof/heap",
      cmd_mem },
    { "uptime", "uptime", "time since boot", cmd_uptime },
    { "burn", "burn [MS [N [irqsoff|spans]]] (MS 1..60000, N 1..16) | burn spans [FROM] | burn stop",
      "start N busy tasks for MS ms (a known call chain; irqsoff: in slices with interrupts off); alone: the last run",
      cmd_burn },
    { "work",
      "work [MS N [COMPUTE [PERIOD]]] (MS 1..60000, N 1..16, COMPUTE 0..100 percent, PERIOD 1..10000 ms) | "
      "work spans [FROM]",
      "start N tasks serving a request every PERIOD ms (default 100), each a span computing COMPUTE% (default 30) and "
      "waiting the rest; alone: the run's own log of compute and wait per task",
      cmd_work },
    { "lockfight", "lockfight [MS N] (MS 1..60000, N 2..16)",
      "start N tasks on different CPUs fighting for MS ms over one spinlock (a load for `locks`); alone: the last run",
      cmd_lockfight },
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

int shell_usage(struct sink *out, const char *name)
{
    const struct shell_command *c = shell_find_command(name);
    sink_printf(out, "usage: %s\n", c ? c->usage : name);
    return 1;
}
