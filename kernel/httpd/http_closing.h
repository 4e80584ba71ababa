/* kernel/httpd/http_closing.h: the connections the HTTP server has closed and lwIP may still hold, a small fixed
 * table with the pure rules of when one is reset. The server closes a connection only once every byte of its answer
 * is acknowledged; what lwIP keeps after that is its FIN, which a client that never acknowledges it would keep in
 * FIN_WAIT_1 (or CLOSING, LAST_ACK) for minutes of retransmissions -- holding one of lwIP's few connections, so that
 * eight such clients shut the port. kernel/httpd/httpd.c remembers each close here and resets what is still
 * closing HTTP_CLOSING_NS later. */
#ifndef KERNEL_HTTPD_HTTP_CLOSING_H
#define KERNEL_HTTPD_HTTP_CLOSING_H

#include <stdbool.h>
#include <stdint.h>

#define HTTP_CLOSING_MAX 8                   /* as many as lwIP has TCP connections (MEMP_NUM_TCP_PCB) */
#define HTTP_CLOSING_NS (2 * 1000000000ll)   /* a close whose FIN is unacknowledged this long is reset */

/* One close: the pcb it was (only compared, never followed), its peer, and when. pcb NULL: an unused entry. */
struct http_closing_entry {
    const void *pcb;
    uint32_t peer_ip;
    uint16_t peer_port;
    int64_t closed_ns;
};

struct http_closing {
    struct http_closing_entry entries[HTTP_CLOSING_MAX];
};

/* Remembers a close: in the entry of the same pcb (lwIP reused it), else a free one, else the oldest close's. */
void http_closing_remember(struct http_closing *t, const void *pcb, uint32_t peer_ip, uint16_t peer_port,
                           int64_t now);

enum http_closing_verdict { HTTP_CLOSING_WAIT, HTTP_CLOSING_FORGET, HTTP_CLOSING_RESET };

/* What to do with e now: FORGET when lwIP no longer holds its pcb closing with its peer (still_closing false: the
 * FIN was acknowledged, or the pcb is gone or serves another connection), RESET when it does HTTP_CLOSING_NS after
 * the close, else WAIT. An unused entry is always WAIT. */
enum http_closing_verdict http_closing_judge(const struct http_closing_entry *e, bool still_closing, int64_t now);

/* When the earliest entry in use comes due (its close + HTTP_CLOSING_NS + 1), or 0 when none is in use. */
int64_t http_closing_next_due(const struct http_closing *t);

#endif
