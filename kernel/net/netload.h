/* kernel/net/netload.h: netload's sessions (kernel/net/netload.c) -- one UDP load test at a time, sending,
 * counting or echoing sequence-numbered datagrams from the network task. The `netload` command
 * (kernel/shell/cmd_netload.c) parses its words into a request, starts the session and prints what it returns. */
#ifndef KERNEL_NET_NETLOAD_H
#define KERNEL_NET_NETLOAD_H

#include <stdint.h>

#include "kernel/net/netload_proto.h"

#define NETLOAD_MAX_SECONDS 600
#define NETLOAD_PPS_MAX 1000000
#define NETLOAD_SEND_PORT 40000 /* the local port `send` uses; echoes that come back are counted */

enum netload_mode { NETLOAD_SEND, NETLOAD_SINK, NETLOAD_ECHO };

struct netload_request {
    enum netload_mode mode;
    uint32_t host;     /* send: the destination */
    uint16_t port;     /* sink/echo: the port listened on; send: the destination port */
    uint32_t seconds;  /* 1..NETLOAD_MAX_SECONDS */
    uint32_t size;     /* send: NETLOAD_HEADER_SIZE..NETLOAD_SIZE_MAX */
    uint32_t pps;      /* send: 0 (flat out)..NETLOAD_PPS_MAX */
    int64_t until_ns;  /* send: when the token that allowed an unkeyed UDP request expires (0: no end but seconds) */
};

enum netload_start_result {
    NETLOAD_STARTED,
    NETLOAD_NO_NETWORK,
    NETLOAD_BUSY,          /* another session runs */
    NETLOAD_CANNOT_LISTEN, /* the local port is in use, or netload already holds every port it may */
};

struct netload_result {
    int64_t elapsed_ns;
    uint64_t sent, sent_bytes;
    uint64_t send_failed; /* passes that found the transmit ring full (the datagram waited, not lost) */
    uint64_t send_held;   /* passes lwIP refused before the ring: the host's address being resolved (waited) */
    uint64_t echoed;
    struct netload_rx_stats rx; /* send: the echoes that came back; sink/echo: what arrived */
    bool token_expired;   /* send: it stopped before its seconds, when the token that allowed it expired */
};

/* "send", "sink" or "echo": the word the command takes and the value of the network task's netload label. */
const char *netload_mode_name(enum netload_mode mode);

/* Task context. Claims the one session, listens on its local port, labels the network task netload=<mode>
 * and starts the work in the network task. When the label table refuses, the session runs anyway and
 * *unlabelled_why says why (NULL otherwise). Anything but NETLOAD_STARTED changed nothing. */
enum netload_start_result netload_start(const struct netload_request *req, const char **unlabelled_why);

/* Task context, after NETLOAD_STARTED: sleeps until the session's end, stops it, gives the network task back
 * the label set it had (unless something changed it meanwhile), fills *out and frees the session. */
void netload_finish(struct netload_result *out);

/* Sends stopped early because the token of the unkeyed request that started them expired (for `net`). */
uint64_t netload_token_stops(void);

#endif
