/* kernel/shell/commands.h: the shell's commands (kernel/cmd_*.c) and the row of the command table they sit in (the
 * table and running a line: kernel/shell/shell.h). Each takes its words (argv[0] is the command's name) and writes
 * only to the sink it is given, so the console and the UDP shell run the same code. A command checks every
 * argument and answers bad ones with one line, "usage: ..." or "<cmd>: <reason>", and returns non-zero. */
#ifndef KERNEL_SHELL_COMMANDS_H
#define KERNEL_SHELL_COMMANDS_H

#include "kernel/lib/sink.h"

typedef int (*command_fn)(int argc, char **argv, struct sink *out);

struct shell_command {
    const char *name;
    const char *usage; /* "profile [ms] [pid|all] [chains]" */
    const char *help;  /* one line */
    command_fn run;
};

/* Each command, in the cmd_*.c file its name says (cmd_system.c: help, ps, stacks, uptime, mem, cpus, lscpu,
 * panic, poweroff). */
int cmd_help(int argc, char **argv, struct sink *out);
int cmd_ps(int argc, char **argv, struct sink *out);
int cmd_stacks(int argc, char **argv, struct sink *out);
int cmd_uptime(int argc, char **argv, struct sink *out);
int cmd_mem(int argc, char **argv, struct sink *out);
int cmd_cpus(int argc, char **argv, struct sink *out);
int cmd_burn(int argc, char **argv, struct sink *out);
int cmd_selftest(int argc, char **argv, struct sink *out);
int cmd_panic(int argc, char **argv, struct sink *out);
int cmd_poweroff(int argc, char **argv, struct sink *out);
int cmd_profile(int argc, char **argv, struct sink *out);
int cmd_profile_stream(int argc, char **argv, struct sink *out); /* `profile stream ...`, from cmd_profile */
int cmd_lscpu(int argc, char **argv, struct sink *out);
int cmd_net(int argc, char **argv, struct sink *out);
int cmd_netload(int argc, char **argv, struct sink *out);
int cmd_label(int argc, char **argv, struct sink *out);

/* kernel/udpsh/udpsh.c still finds shell_run_line through this header; once it includes kernel/shell/shell.h itself,
 * this goes. */
#include "kernel/shell/shell.h"

#endif
