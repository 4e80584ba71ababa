/* kernel/shell/shell.h: the shell (kernel/shell/shell.c) -- the one command table, running a line against it (the console
 * and the UDP shell both do), and the console shell task that reads console lines. */
#ifndef KERNEL_SHELL_SHELL_H
#define KERNEL_SHELL_SHELL_H

#include "kernel/shell/commands.h"

/* The table, in help order, ending with a {NULL} entry. */
extern const struct shell_command shell_commands[];

const struct shell_command *shell_find_command(const char *name);
/* Splits a line and runs it; prints "unknown command: X (try help)" for unknown names. Returns the
 * command's result, or -1. */
int shell_run_line(char *line, struct sink *out);

/* Starts the console shell task, which prints `ready:` and the first prompt (from kmain, once). */
void console_start_shell(void);

#endif
