/* kernel/shell.h: the console shell (kernel/shell.c) -- the task that reads console lines and runs them
 * through the command table (kernel/commands.h). */
#ifndef KERNEL_SHELL_H
#define KERNEL_SHELL_H

/* Starts the console shell task, which prints `ready:` and the first prompt (from kmain, once). */
void console_start_shell(void);

#endif
