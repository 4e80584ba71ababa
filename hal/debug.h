/* hal/debug.h: the kernel debugger's contract, both ways. The portable kernel starts the debugger and hands
 * it panics (gdb_init, gdbstub/setup.c; gdb_panic_enter, gdbstub/stop.c). The architecture gives the debugger
 * its machine and its UART, and nothing else: the machine is what gdb reads and writes (struct gdb_target,
 * gdbstub/target.h) and how every CPU is stopped, parked and stepped (struct gdb_arch_ops, gdbstub/stop.h);
 * the UART is the byte transport gdb talks on unless gdb.udp= (gdbstub/udp_nic.c) is the only one. What gdb=
 * means and which transport a session starts on is the debugger's own (gdbstub/setup.c); the x86_64 side is
 * arch/x86_64/gdb_target.c and gdb_uart.c (COM2). */
#ifndef HAL_DEBUG_H
#define HAL_DEBUG_H

#include <stdbool.h>

struct context;
struct gdb_arch_ops;
struct gdb_target;
struct gdb_transport;

/* ---- the kernel's side ---------------------------------------------------------------------------------- */

/* Boot (kernel/main.c), after the console is up and before the network: finds the debugger's UART and, from
 * the kernel command line's gdb= option, "wait" (print `gdb: waiting for gdb on COM2` and stop here until gdb
 * connects and continues), "panic" (panics stop in the debugger instead of halting), both ("wait,panic") or
 * "off" (no debugger at all). Without the option the stub is still there: a gdb that connects at any time
 * stops the machine. Without a UART it still starts when gdb.udp= is given, on that transport. */
void gdb_init(void);

/* From a panic, interrupts off, after the report is printed: under gdb=panic, enters the debugger with ctx's
 * registers (NULL: the caller's own) and never returns; otherwise returns at once. */
void gdb_panic_enter(const struct context *ctx);

/* ---- the architecture's side: what gdb_init asks for, once, at boot ------------------------------------ */

/* The machine sessions run against, and the stop/park/step hooks of the state machine (static, for good). */
const struct gdb_target *gdb_arch_target(void);
const struct gdb_arch_ops *gdb_arch_ops(void);

/* The debugger's UART. */
struct gdb_arch_uart {
    const char *name;    /* as the boot log names it: "COM2" */
    const char *address; /* where it was looked for, for the boot log: "0x2f8" */
    /* Probes (once) and programs it; false when no UART answers there. */
    bool (*init)(void);
    /* From now on gdb's bytes raise its interrupt on cpu while the machine runs (a stop request). */
    void (*irq_enable)(unsigned cpu);
    /* The polled byte transport a session talks on; valid once init has returned true. */
    const struct gdb_transport *transport;
};
const struct gdb_arch_uart *gdb_arch_uart(void);

#endif
