/* kernel/net/net_report.c: the list of services' `net` lines (kernel/net/net_report.h), kept sorted by rank.
 * Insertion happens at start-up in task context, one service at a time; a reader may walk the list meanwhile,
 * so an entry is linked in only once its next pointer is set (release), and readers follow with acquire. */
#include "kernel/net/net_report.h"

#include <stddef.h>

static struct net_report *reports;

void net_report_add(struct net_report *r)
{
    struct net_report **at = &reports;
    for (struct net_report *p = *at; p; at = &p->next, p = *at) {
        if (p == r)
            return;
    }
    at = &reports;
    while (*at && (*at)->rank <= r->rank)
        at = &(*at)->next;
    r->next = *at;
    __atomic_store_n(at, r, __ATOMIC_RELEASE);
}

void net_report_print(struct sink *out, bool trusted)
{
    for (struct net_report *p = __atomic_load_n(&reports, __ATOMIC_ACQUIRE); p;
         p = __atomic_load_n(&p->next, __ATOMIC_ACQUIRE))
        p->print(out, trusted);
}
