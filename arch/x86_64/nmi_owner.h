/* arch/x86_64/nmi_owner.h: whose an NMI is -- the decision interrupts.c's nmi() takes on every NMI, apart from
 * the port I/O, the debugger and the panic that act on it, so that host tests can drive every branch and every
 * coincidence (tests/unit/test_nmi_owner.c). */
#ifndef ARCH_X86_64_NMI_OWNER_H
#define ARCH_X86_64_NMI_OWNER_H

#include <stdbool.h>
#include <stdint.h>

/* What nmi() can ask, in the order nmi_owner() asks it. Each claim consumes what marked the NMI as its own. */
struct nmi_sources {
    bool (*panicking)(void);       /* a CPU has begun to panic: this NMI is its stop */
    bool (*counter)(void *arg);    /* the counter's overflow: acknowledged, re-armed and sampled (profiler_nmi) */
    bool (*selftest)(void *arg);   /* the NMI self-test's own */
    bool (*debugger)(void *arg);   /* the debugger's stop request for this CPU: taken, the CPU stopped (gdb_nmi) */
    uint8_t (*port61)(void);       /* the PC's system control port B: bit 7 parity/system error, bit 6 I/O check */
    bool boot_cpu;                 /* the chipset routes an external NMI to the boot CPU alone */
    void *arg;
};

enum nmi_owner {
    NMI_PANICKING, /* park for the debugger under gdb=panic, else halt */
    NMI_KPROF,     /* the counter's, the self-test's or the debugger's: nothing more to do */
    NMI_KPROF_CHECK_LATER, /* the same, on the boot CPU: an external NMI may have merged with it, and port 0x61
                            * is read at its next tick (nmi_port61_error) rather than on every counter NMI */
    NMI_EXTERNAL,  /* port 0x61 reports an error: panic, naming it */
    NMI_GENUINE,   /* no source claims it: panic with a backtrace */
};

/* Asks src: a panic first (nothing else then), then every kprof source -- the counter before the debugger, so
 * that an overflow merged with a stop request is acknowledged and the counter keeps running while the CPU
 * stops -- and, only when none claims it, port 0x61 on the boot CPU (*port61 is what it read, 0 when not). */
enum nmi_owner nmi_owner(const struct nmi_sources *src, uint8_t *port61);

/* Port 0x61's verdict: NULL when it reports no error, else what it reports. */
const char *nmi_port61_error(uint8_t port61);

#endif
