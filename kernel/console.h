/* kernel/console.h: the console -- output to every console device under one lock, as a sink commands can
 * write to, and line input from the serial port and the keyboard for the console shell. */
#ifndef KERNEL_CONSOLE_H
#define KERNEL_CONSOLE_H

#include <stddef.h>
#include "kernel/lib/sink.h"

/* The console as an output sink (task context). */
extern struct sink console_sink;

void console_write(const char *text, size_t len);
/* For panics: no lock (the CPU that held it may be stopped for good). */
void console_write_unlocked(const char *text, size_t len);

/* Reads one input character, blocking the calling task until there is one. Only the console shell reads. */
char console_read_char(void);

#endif
