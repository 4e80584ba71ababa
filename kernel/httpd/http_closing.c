/* kernel/httpd/http_closing.c: the table of closed connections and when each is reset
 * (kernel/httpd/http_closing.h). Pure: the network task (kernel/httpd/httpd.c) asks lwIP. */
#include "kernel/httpd/http_closing.h"

#include <stddef.h>

void http_closing_remember(struct http_closing *t, const void *pcb, uint32_t peer_ip, uint16_t peer_port,
                           int64_t now)
{
    struct http_closing_entry *slot = NULL;
    for (unsigned i = 0; i < HTTP_CLOSING_MAX && !slot; i++)
        if (t->entries[i].pcb == pcb)
            slot = &t->entries[i];
    for (unsigned i = 0; i < HTTP_CLOSING_MAX && !slot; i++)
        if (!t->entries[i].pcb)
            slot = &t->entries[i];
    if (!slot) { /* lwIP has no more connections than entries: the oldest close is most likely long gone */
        slot = &t->entries[0];
        for (unsigned i = 1; i < HTTP_CLOSING_MAX; i++)
            if (t->entries[i].closed_ns < slot->closed_ns)
                slot = &t->entries[i];
    }
    *slot = (struct http_closing_entry){ pcb, peer_ip, peer_port, now };
}

enum http_closing_verdict http_closing_judge(const struct http_closing_entry *e, bool still_closing, int64_t now)
{
    if (!e->pcb)
        return HTTP_CLOSING_WAIT;
    if (!still_closing)
        return HTTP_CLOSING_FORGET;
    return now - e->closed_ns >= HTTP_CLOSING_NS ? HTTP_CLOSING_RESET : HTTP_CLOSING_WAIT;
}

int64_t http_closing_next_due(const struct http_closing *t)
{
    int64_t next = 0;
    for (unsigned i = 0; i < HTTP_CLOSING_MAX; i++) {
        const struct http_closing_entry *e = &t->entries[i];
        if (e->pcb && (!next || e->closed_ns + HTTP_CLOSING_NS + 1 < next))
            next = e->closed_ns + HTTP_CLOSING_NS + 1;
    }
    return next;
}
