/* arch/x86_64/nmi_owner.h: whose an NMI is -- the decision interrupts.c's nmi() takes on every NMI, apart from
 * the port I/O, the debugger and the panic that act on it, so that host tests can drive every branch and every
 * coincidence (tests/unit/test_nmi_owner.c). */
#ifndef ARCH_X86_64_NMI_OWNER_H
#define ARCH_X86_64_NMI_OWNER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/* One CPU's memory of its NMIs, for the next; written only by that CPU's NMI handler. An NMI claimed by more
 * than one source took the mark of an NMI that is not itself, and that NMI may still come, finding nothing: the
 * debugger's stop NMI sent while the counter's NMI ran (the counter's NMI took the request), a PMI on its way
 * when the stop NMI took its overflow (where the local APIC leaves the LVT entry unmasked), the self-test's NMI
 * when an overflow's NMI came between the self-test's mark and its send. Each such NMI is owed: it comes back
 * to back (latched while the handler ran, taken at the very instruction the handler returned to) or within
 * microseconds (a send a few instructions after the return, a PMI the local APIC is delivering). */
struct nmi_history {
    uint32_t owed;           /* claims beyond one per NMI, whose own NMIs have not come */
    uint64_t resumed_at;     /* the instruction the last NMI returned to (where the debugger left it) */
    uint64_t resumed_cycles; /* and when */
    uint64_t late;           /* NMIs taken for an owed one */
};

/* What nmi() can ask, in the order nmi_owner() asks it. Each claim consumes what marked the NMI as its own. */
struct nmi_sources {
    bool (*panicking)(void);       /* a CPU has begun to panic: this NMI is its stop */
    bool (*counter)(void *arg);    /* the counter's overflow: acknowledged, re-armed and sampled (profiler_nmi) */
    bool (*selftest)(void *arg);   /* the NMI self-test's own */
    bool (*debugger)(void *arg);   /* the debugger's stop request for this CPU: taken, the CPU stopped (gdb_nmi) */
    uint8_t (*port61)(void);       /* the PC's system control port B: bit 7 parity/system error, bit 6 I/O check */
    bool boot_cpu;                 /* the chipset routes an external NMI to the boot CPU alone */
    atomic_bool *port61_owed;      /* the boot CPU's: set when it claims an NMI (nmi_port61_owed_check) */
    void *arg;
    uint64_t at;                   /* the instruction this NMI interrupted */
    uint64_t now;                  /* its entry, in cycles */
    uint64_t late_window;          /* how long after the last NMI's return an owed NMI may come, in cycles */
    struct nmi_history *history;   /* this CPU's; NULL: no memory, every unclaimed NMI is genuine */
};

enum nmi_owner {
    NMI_PANICKING, /* park for the debugger under gdb=panic, else halt */
    NMI_KPROF,     /* the counter's, the self-test's or the debugger's: nothing more to do */
    NMI_KPROF_CHECK_LATER, /* the same, on the boot CPU: an external NMI may have merged with it, so port 0x61
                            * is owed a read (*port61_owed set), at its next tick rather than on every NMI */
    NMI_EXTERNAL,  /* port 0x61 reports an error: panic, naming it */
    NMI_GENUINE,   /* no source claims it: panic with a backtrace */
};

/* Asks src: a panic first (nothing else then), then every kprof source -- the counter before the debugger, so
 * that an overflow merged with a stop request is acknowledged and the counter keeps running while the CPU
 * stops. The rule when none claims it: while an NMI is owed (struct nmi_history), one that comes back to back
 * with the last (at the instruction it returned to) or within late_window of its return is that owed NMI,
 * kprof's -- one per owed claim, never more; any other is genuine, after port 0x61 on the boot CPU (*port61 is
 * what it read, 0 when not). A claimed NMI pays no debt (an owed NMI that merged with it never comes), and an
 * unclaimed one outside the window clears it. What cannot be told apart: a genuine NMI that merges with an owed
 * one, or comes within the window while one is owed -- a few microseconds after an NMI that several sources
 * claimed; an external one among them still leaves its record in port 0x61 for the boot CPU's tick. */
enum nmi_owner nmi_owner(const struct nmi_sources *src, uint8_t *port61);

/* Where and when the NMI just handled returns, for the next NMI's rule (called last in the handler). */
void nmi_returning(struct nmi_history *history, uint64_t rip, uint64_t now);

/* Port 0x61's verdict: NULL when it reports no error, else what it reports. */
const char *nmi_port61_error(uint8_t port61);

/* The boot CPU's tick: when an NMI was claimed since the last check (*owed), takes the mark and reads port 0x61
 * once through read_port61; else reads nothing, so a tick with no claimed NMI since costs one load of the CPU's
 * own line and no port access (a VM exit under a hypervisor). Returns nmi_port61_error of what it read (NULL
 * when nothing was read); *port61 is the value read, 0 when none. */
const char *nmi_port61_owed_check(atomic_bool *owed, uint8_t (*read_port61)(void), uint8_t *port61);

#endif
