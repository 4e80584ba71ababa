/* kernel/console.h: the console -- output to every console device under one lock, as a sink commands can
 * write to, and line input from the serial port and the keyboard for the console shell. */
#ifndef KERNEL_CONSOLE_H
#define KERNEL_CONSOLE_H

#include <stdbool.h>
#include <stddef.h>
#include "kernel/lib/sink.h"

/* The console as an output sink (task context). */
extern struct sink console_sink;

void console_write(const char *text, size_t len);
/* console.stall_ms= (NULL: absent): how long a task waits on a serial line that moves nothing before writers stop
 * waiting (100..60000 ms, default 10000). A bad value keeps the default; either way one line to out. At boot. */
void console_set_stall(const char *ms_option, struct sink *out);
/* For panics: no lock (the CPU that held it may be stopped for good), and sent before it returns. */
void console_write_unlocked(const char *text, size_t len);

/* A log line (kernel/log.c), whole, newline included: written as console_write does, or, while the shell's
 * prompt waits, through the shell's redraw, which puts it above the prompt and draws the prompt and the line
 * being typed again below it. Task context. */
void console_write_log(const char *text, size_t len);

/* The shell's redraw: writes text (a whole log line) to screen so that it stands above the prompt, and then
 * the prompt and what is typed after it. Called under the console lock: it only writes to screen. */
typedef void (*console_redraw_fn)(void *arg, struct sink *screen, const char *text, size_t len);
/* Task context, the console shell only. Writes prompt, and from then on log lines go through redraw(arg, ...)
 * until console_prompt_hide_held; the two happen under the lock at once, so no log line falls between. */
void console_prompt_show(const char *prompt, console_redraw_fn redraw, void *arg);
/* The console lock, for the shell to feed a key to its line editor and echo it (through console_held_sink,
 * which writes without taking the lock) in one piece, and, when the key ended the line, to stop the redraw
 * (console_prompt_hide_held) before a log line can see the prompt's line as finished but still shown. */
unsigned long console_hold(void);
void console_release(unsigned long flags);
extern struct sink console_held_sink;
void console_prompt_hide_held(void);

/* True when an input character waits (a key pressed while a command runs: `profile top` stops on it). */
bool console_input_pending(void);
/* The next input character (0..255) without taking it, or -1 when none waits. The console shell's reader only. */
int console_input_peek(void);

/* Reads one input character, blocking the calling task until there is one. Only the console shell reads. */
char console_read_char(void);

#endif
