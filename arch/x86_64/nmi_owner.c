/* arch/x86_64/nmi_owner.c: whose an NMI is (arch/x86_64/nmi_owner.h). An NMI can stand for two sources at once:
 * the CPU latches one NMI while it handles another, and two raised together are one. So every kprof source is
 * asked -- each consumes only its own mark (the counter its overflow status, the self-test its stage, the
 * debugger its stop request) -- and a claim does not end the search for the others. What cannot be told apart
 * is a genuine NMI that merged with one a kprof source claims; of those, the external ones leave a record in
 * port 0x61, which the boot CPU reads at its next tick. And a claim can take the mark of an NMI still latched
 * behind the one being handled: that NMI, finding nothing, is recognised by when it comes (nmi_owner.h's rule).
 * In the NMI path: no locks, no printing. */
#include "arch/x86_64/nmi_owner.h"

#include <stddef.h>

#define PORT61_PARITY_ERROR 0x80   /* memory parity or system error (SERR#) */
#define PORT61_CHANNEL_CHECK 0x40  /* I/O channel check (IOCHK#) */

enum nmi_owner nmi_owner(const struct nmi_sources *src, uint8_t *port61)
{
    *port61 = 0;
    if (src->panicking())
        return NMI_PANICKING;
    unsigned claims = src->counter(src->arg);
    claims += src->selftest(src->arg);
    claims += src->debugger(src->arg);
    struct nmi_history *h = src->history;
    bool late = false;
    if (h && claims) {
        h->owed += claims - 1;
    } else if (h && h->owed) {
        late = src->at == h->resumed_at || src->now - h->resumed_cycles <= src->late_window;
        h->owed = late ? h->owed - 1 : 0; /* outside the window: whatever was owed merged or is lost */
        h->late += late;
    }
    if (claims || late) {
        if (!src->boot_cpu)
            return NMI_KPROF;
        if (src->port61_owed)
            atomic_store_explicit(src->port61_owed, true, memory_order_relaxed);
        return NMI_KPROF_CHECK_LATER;
    }
    if (src->boot_cpu) {
        *port61 = src->port61();
        if (nmi_port61_error(*port61))
            return NMI_EXTERNAL;
    }
    return NMI_GENUINE;
}

void nmi_returning(struct nmi_history *history, uint64_t rip, uint64_t now)
{
    history->resumed_at = rip;
    history->resumed_cycles = now;
}

const char *nmi_port61_owed_check(atomic_bool *owed, uint8_t (*read_port61)(void), uint8_t *port61)
{
    *port61 = 0;
    /* the load first: the exchange would write the line on every tick */
    if (!atomic_load_explicit(owed, memory_order_relaxed) ||
        !atomic_exchange_explicit(owed, false, memory_order_relaxed))
        return NULL;
    *port61 = read_port61();
    return nmi_port61_error(*port61);
}

const char *nmi_port61_error(uint8_t port61)
{
    if (port61 & PORT61_PARITY_ERROR)
        return "memory parity/system error";
    if (port61 & PORT61_CHANNEL_CHECK)
        return "I/O channel check";
    return NULL;
}
