/* gdbstub/setup.c: the debugger's start at boot (gdb_init, hal/debug.h) -- the gdb= option (wait, panic,
 * wait,panic, off), the choice of the transport the first session talks on (the architecture's UART, or
 * gdb.udp= when there is no UART), and the boot log lines that say so. What it starts with comes from the
 * architecture through hal/debug.h alone: its machine (gdb_arch_target, gdb_arch_ops) and its UART
 * (gdb_arch_uart). Task context, once, from kernel/main.c. */
#include <stdbool.h>
#include <stddef.h>

#include "gdbstub/stop.h"
#include "gdbstub/target.h"
#include "gdbstub/udp.h"
#include "hal/debug.h"
#include "kernel/cmdline.h"
#include "kernel/lib/string.h"
#include "kernel/log.h"

/* Whether word is one of list's comma-separated words. */
static bool word_in(const char *list, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = list; *p;) {
        const char *end = p;
        while (*end && *end != ',')
            end++;
        if ((size_t)(end - p) == n && strncmp(p, word, n) == 0)
            return true;
        p = *end ? end + 1 : end;
    }
    return false;
}

void gdb_init(void)
{
    const char *opt = cmdline_get("gdb");
    bool wait = false, stop_on_panic = false, off = false;
    if (opt) {
        wait = word_in(opt, "wait");
        stop_on_panic = word_in(opt, "panic");
        off = word_in(opt, "off");
        if (!wait && !stop_on_panic && !off)
            log_warn("gdb: unknown gdb=%.32s (wait, panic, wait,panic or off): ignored", opt);
    }
    if (off)
        return;
    const struct gdb_arch_uart *uart = gdb_arch_uart();
    /* gdb.udp= (gdbstub/udp_nic.c, once the network is up) is a transport of its own: without the UART the
     * debugger still starts for it. */
    bool udp = cmdline_get("gdb.udp") != 0;
    bool have_uart = uart->init();
    if (!have_uart) {
        if ((wait || stop_on_panic) && !udp)
            log_warn("gdb: no UART at %s (%s): no debugger", uart->name, uart->address);
        if (!udp)
            return;
        if (wait) {
            log_warn("gdb: gdb=wait needs %s (%s): over gdb.udp attach once the network is up", uart->name,
                     uart->address);
            wait = false;
        }
    }
    gdb_stop_init(gdb_arch_ops(), gdb_arch_target(), have_uart ? uart->transport : &gdb_udp_transport,
                  stop_on_panic);
    if (have_uart)
        uart->irq_enable(0);
    if (wait) {
        log_info("gdb: waiting for gdb on %s", uart->name);
        gdb_stop_wait_for_gdb();
    }
}
