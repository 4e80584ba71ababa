/* arch/x86_64/nmi_owner.c: whose an NMI is (arch/x86_64/nmi_owner.h). An NMI can stand for two sources at once:
 * the CPU latches one NMI while it handles another, and two raised together are one. So every kprof source is
 * asked -- each consumes only its own mark (the counter its overflow status, the self-test its stage, the
 * debugger its stop request) -- and a claim does not end the search for the others. What cannot be told apart
 * is a genuine NMI that merged with one a kprof source claims; of those, the external ones leave a record in
 * port 0x61, which the boot CPU reads at its next tick. In the NMI path: no locks, no printing. */
#include "arch/x86_64/nmi_owner.h"

#include <stddef.h>

#define PORT61_PARITY_ERROR 0x80   /* memory parity or system error (SERR#) */
#define PORT61_CHANNEL_CHECK 0x40  /* I/O channel check (IOCHK#) */

enum nmi_owner nmi_owner(const struct nmi_sources *src, uint8_t *port61)
{
    *port61 = 0;
    if (src->panicking())
        return NMI_PANICKING;
    bool counter = src->counter(src->arg);
    bool selftest = src->selftest(src->arg);
    bool debugger = src->debugger(src->arg);
    if (counter || selftest || debugger)
        return src->boot_cpu ? NMI_KPROF_CHECK_LATER : NMI_KPROF;
    if (src->boot_cpu) {
        *port61 = src->port61();
        if (nmi_port61_error(*port61))
            return NMI_EXTERNAL;
    }
    return NMI_GENUINE;
}

const char *nmi_port61_error(uint8_t port61)
{
    if (port61 & PORT61_PARITY_ERROR)
        return "memory parity/system error";
    if (port61 & PORT61_CHANNEL_CHECK)
        return "I/O channel check";
    return NULL;
}
