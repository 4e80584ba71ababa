/* hal/debug.h: the kernel debugger as the portable kernel sees it -- a gdb remote stub the architecture
 * provides (arch/x86_64/gdb_target.c starts it on COM2; gdbstub/stop.c takes panics). The boot sequence starts
 * it; a panic may hand over to it. */
#ifndef HAL_DEBUG_H
#define HAL_DEBUG_H

#include <stdbool.h>

struct context;

/* Boot, after the console is up: finds the debugger's port and, from the kernel command line's gdb= option,
 * "wait" (print `gdb: waiting for gdb on COM2` and stop here until gdb connects and continues), "panic"
 * (panics stop in the debugger instead of halting), both ("wait,panic") or "off" (no debugger at all).
 * Without the option the stub is still there: a gdb that connects at any time stops the machine. */
void gdb_init(void);

/* From a panic, interrupts off, after the report is printed: under gdb=panic, enters the debugger with ctx's
 * registers (NULL: the caller's own) and never returns; otherwise returns at once. */
void gdb_panic_enter(const struct context *ctx);

#endif
