/* kernel/shell/commands.h: the shell's commands (kernel/shell/cmd_*.c), the command table they sit in
 * (kernel/shell/command_table.c) and where a line came from (struct shell_origin). Running a line against the table
 * is kernel/shell/shell.h's. Each command takes its words (argv[0] is the command's name), where the line came
 * from, and writes only to the sink it is given, so the console and the UDP shell run the same code. A command
 * checks every argument and answers bad ones with one line, "<cmd>: <reason>" or the table's usage line
 * (shell_usage), and returns non-zero. */
#ifndef KERNEL_SHELL_COMMANDS_H
#define KERNEL_SHELL_COMMANDS_H

#include <stdbool.h>
#include <stdint.h>

#include "kernel/lib/sink.h"

/* Where a line came from: the console, or the UDP shell from ip:port, keyed (its MAC checked out under
 * udpsh.key) or not. Passed down with the line, so a command that decides by it (`profile stream`: where a
 * stream may go, who may stop it) asks nobody. */
struct shell_origin {
    bool udp; /* false: the console, and the rest means nothing */
    bool keyed;
    uint32_t ip; /* host order */
    uint16_t port;
    int64_t until_ns; /* UDP unkeyed: when the token that allowed the line expires (time_ns); 0: no end */
};

typedef int (*command_fn)(int argc, char **argv, struct sink *out, const struct shell_origin *from);

struct shell_command {
    const char *name;  /* the first word; "profile stream" is a sub-command's row, reached through `profile` */
    const char *usage; /* the one usage line, "profile [ms] [pid|all] [chains|raw] [key=value]" */
    const char *help;  /* one line */
    command_fn run;
};

/* The table, in help order, ending with a {NULL} entry. */
extern const struct shell_command shell_commands[];

/* The row named name (a first word, or "profile stream"), or NULL. */
const struct shell_command *shell_find_command(const char *name);
/* Prints "usage: <the table's usage of name>\n" to out and returns 1, what a command returns for bad words. */
int shell_usage(struct sink *out, const char *name);
/* Task context (kernel/shell/start_tasks.c): spawns n tasks named name running entry(arg) -- on the CPU with the
 * fewest tasks, or with round_the_cpus task i on CPU i modulo the count -- printing " PID" for each and then ")\n"
 * (the caller has printed the line's start, "...(pids"), and "NAME: only K of N tasks could be started" when
 * some could not. Returns how many started. */
unsigned shell_start_tasks(struct sink *out, const char *name, void (*entry)(void *arg), void *arg, unsigned n,
                           bool round_the_cpus);

/* Each command, in the cmd_*.c file its name says (cmd_system.c: help, ps, stacks, uptime, mem, cpus, lscpu,
 * selftest, panic, poweroff). */
int cmd_help(int argc, char **argv, struct sink *out, const struct shell_origin *from);
int cmd_ps(int argc, char **argv, struct sink *out, const struct shell_origin *from);
int cmd_stacks(int argc, char **argv, struct sink *out, const struct shell_origin *from);
int cmd_uptime(int argc, char **argv, struct sink *out, const struct shell_origin *from);
int cmd_mem(int argc, char **argv, struct sink *out, const struct shell_origin *from);
int cmd_cpus(int argc, char **argv, struct sink *out, const struct shell_origin *from);
int cmd_burn(int argc, char **argv, struct sink *out, const struct shell_origin *from);
int cmd_work(int argc, char **argv, struct sink *out, const struct shell_origin *from);
int cmd_selftest(int argc, char **argv, struct sink *out, const struct shell_origin *from);
int cmd_panic(int argc, char **argv, struct sink *out, const struct shell_origin *from);
int cmd_poweroff(int argc, char **argv, struct sink *out, const struct shell_origin *from);
int cmd_profile(int argc, char **argv, struct sink *out, const struct shell_origin *from);
/* `profile stream ...`, from cmd_profile (argv[0] "profile", argv[1] "stream") */
int cmd_profile_stream(int argc, char **argv, struct sink *out, const struct shell_origin *from);
/* `profile top ...`, from cmd_profile (argv[0] "profile", argv[1] "top") */
int cmd_profile_top(int argc, char **argv, struct sink *out, const struct shell_origin *from);
int cmd_lscpu(int argc, char **argv, struct sink *out, const struct shell_origin *from);
int cmd_net(int argc, char **argv, struct sink *out, const struct shell_origin *from);
int cmd_netload(int argc, char **argv, struct sink *out, const struct shell_origin *from);
int cmd_label(int argc, char **argv, struct sink *out, const struct shell_origin *from);
int cmd_tasks(int argc, char **argv, struct sink *out, const struct shell_origin *from);
int cmd_locks(int argc, char **argv, struct sink *out, const struct shell_origin *from);
int cmd_lockfight(int argc, char **argv, struct sink *out, const struct shell_origin *from);

#endif
