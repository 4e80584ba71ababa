/* kernel/shell/shell.h: the shell (kernel/shell/shell.c) -- running a line against the command table
 * (kernel/shell/commands.h; the console and the UDP shell both do), and the console shell task that reads console
 * lines. */
#ifndef KERNEL_SHELL_SHELL_H
#define KERNEL_SHELL_SHELL_H

#include "kernel/lib/sink.h"

struct shell_origin;

/* Splits a line and runs it as from says it came (the console: shell_console_origin); prints "unknown command: X
 * (try help)" for unknown names. Returns the command's result, or -1. */
int shell_run_line(char *line, const struct shell_origin *from, struct sink *out);

/* What the console's lines come from. */
extern const struct shell_origin shell_console_origin;

/* Starts the console shell task, which prints `ready:` and the first prompt (from kmain, once). */
void console_start_shell(void);

#endif
