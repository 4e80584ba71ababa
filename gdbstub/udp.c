/* gdbstub/udp.c: the gdb UDP transport (gdbstub/udp.h) -- the peer rule, the rules for unproven senders
 * (the hello budget, the opener, reply-looking datagrams, the repeat budget), the receive ring the stub's
 * getc reads, the send buffer flush turns into datagrams, and the memory of the last packet answered that
 * makes repeats harmless. The card, the clock and the allowlist are struct gdb_udp_port's. */
#include <stdatomic.h>

#include "gdbstub/packet.h"
#include "gdbstub/udp.h"
#include "kernel/lib/string.h"
#include "kernel/lib/hex.h"
#include "kernel/net/ratelimit.h"

_Static_assert(GDB_UDP_INNER_MAX + GDB_UDP_SEAL_OVERHEAD <= NETPOLL_UDP_MAX,
               "a sealed datagram of the most gdb bytes must fit one UDP datagram");
_Static_assert(GDB_PACKET_SIZE + 5 <= GDB_UDP_INNER_MAX, "a whole packet of PacketSize, ack in front, fits");

#define CTRL_C 0x03
#define POLL_BUDGET 16

static const struct gdb_udp_port *port;
static bool enabled;
static bool in_session;
static struct netpoll np;
static struct gdb_udp_counts counts;
static atomic_int pending_stop; /* enum gdb_udp_stop */
static unsigned tx_fail_streak; /* datagrams in a row the card did not take */

static struct token_bucket hellos_unproven; /* every sender but the proven peer, together */
static struct token_bucket hellos_peer;     /* the proven peer's own: a forged flood cannot spend it */

static struct {
    bool attached;
    bool proven; /* it showed its session nonce (KPG1); never in the insecure mode */
    uint32_t ip;
    uint16_t port;
    int64_t heard_ns;
} peer;

/* Received gdb bytes; head is published after the bytes are written (the writer may be stopped midway). */
static uint8_t rx_ring[GDB_UDP_RX_RING];
static _Atomic size_t rx_head, rx_tail;

/* What putc gathered since the last flush, and the frame being built. */
static uint8_t tx_buf[GDB_UDP_DATAGRAM_MAX];
static size_t tx_len;
static uint8_t sealed[GDB_UDP_DATAGRAM_MAX + GDB_UDP_SEAL_OVERHEAD];
static uint8_t frame_scratch[NETPOLL_FRAME_MAX];

/* The last packet-bearing datagram the stub was given, and everything it sent since (the ack and reply). */
static struct {
    bool armed;
    size_t len;
    uint8_t bytes[GDB_UDP_INNER_MAX];
    bool answer_whole;  /* answer holds all of it (it did not overflow) */
    bool repeated;      /* its answer has been sent again once: never twice */
    size_t answer_len;
    uint8_t answer[GDB_UDP_INNER_MAX + 16];
} last;

/* netpoll's admission: who may have fragments reassembled. Under KPG1 (every attached peer is proven) nobody:
 * the relay sends datagrams that need no fragmentation (scripts/kprof_gdb_wire.py DATAGRAM_MAX, 1472 bytes of
 * UDP payload), so a fragment with the peer's address is a forger's, and admitting it let one forged fragment
 * cancel the peer's datagram in flight (issue 40; netpoll keeps one set, the newest). In the insecure mode
 * gdb's own `target remote udp:` sends a whole packet of PacketSize (0xff00) in one datagram, which needs
 * fragments: the attached peer, while the allowlist still says yes, has them reassembled. Nothing proves that
 * peer, and a forger with its address can send gdb bytes outright, so cancelling its datagram is no new power. */
static bool may_reassemble(void *arg, uint32_t src)
{
    (void)arg;
    return peer.attached && !peer.proven && src == peer.ip && port->permits(src);
}

void gdb_udp_init(const struct gdb_udp_port *p, const uint8_t mac[6], uint16_t port_number)
{
    port = p;
    netpoll_init(&np, mac, 0, port_number);
    np.admit = may_reassemble;
    memset(&counts, 0, sizeof counts);
    memset(&peer, 0, sizeof peer);
    last.armed = false;
    atomic_store(&rx_head, 0);
    atomic_store(&rx_tail, 0);
    atomic_store(&pending_stop, GDB_UDP_NO_STOP);
    tx_len = 0;
    in_session = false;
    gdb_udp_auth_reset();
    int64_t now = p->now_ns();
    token_bucket_init(&hellos_unproven, GDB_UDP_NEWCOMER_HELLO_RATE, now);
    token_bucket_init(&hellos_peer, GDB_UDP_PEER_HELLO_RATE, now);
    enabled = port_number != 0;
}

bool gdb_udp_enabled(void) { return enabled; }
uint16_t gdb_udp_port_number(void) { return enabled ? np.port : 0; }
void gdb_udp_set_address(uint32_t ip) { np.ip = ip; }
void gdb_udp_set_route(uint32_t netmask, uint32_t gateway)
{
    np.netmask = netmask;
    np.gateway = gateway;
}
uint32_t gdb_udp_address(void) { return np.ip; }

bool gdb_udp_peer(uint32_t *ip, uint16_t *p)
{
    if (!peer.attached)
        return false;
    *ip = peer.ip;
    *p = peer.port;
    return true;
}

void gdb_udp_get_counts(struct gdb_udp_counts *out, struct netpoll_counts *frames)
{
    *out = counts;
    *frames = np.counts;
}

enum gdb_udp_stop gdb_udp_take_stop(void)
{
    return (enum gdb_udp_stop)atomic_exchange(&pending_stop, GDB_UDP_NO_STOP);
}

bool gdb_udp_wants(const uint8_t *frame, size_t len)
{
    return enabled && netpoll_wants(&np, frame, len);
}

bool gdb_udp_wants_arp(const uint8_t *frame, size_t len)
{
    return enabled && netpoll_wants_arp(&np, frame, len);
}

/* ---- sending ------------------------------------------------------------------------------------------ */

static bool emit_frame(void *arg, const uint8_t *frame, size_t len)
{
    (void)arg;
    /* Waiting for room is for the stopped machine; the running one (the network task, the timer tick) does
     * not spin on the card: a lost answer is asked for again. */
    if (!in_session)
        return port->transmit(frame, len);
    int64_t start = port->now_ns();
    while (!port->transmit(frame, len)) {
        if (port->now_ns() - start > GDB_UDP_TX_WAIT_NS)
            return false;
        port->relax();
    }
    return true;
}

/* Where a datagram to ip goes (netpoll_route: learned from ARP answers to our own questions, never a frame's
 * source). False when not known yet: the question is sent (at most one per address per
 * NETPOLL_ARP_RETRY_NS) and the datagram is not -- gdb and the relay retransmit. */
static bool neighbour(uint32_t ip, uint8_t mac[6])
{
    uint8_t request[NETPOLL_FRAME_MIN];
    enum netpoll_route r = netpoll_route(&np, ip, port->now_ns(), mac, request);
    if (r == NETPOLL_ROUTE_ASK || r == NETPOLL_ROUTE_REFRESH)
        port->transmit(request, sizeof request); /* a lost question is asked again */
    if (r == NETPOLL_ROUTE_ASK) /* an answer already in (the host tests' neighbour answers at once); else WAIT */
        r = netpoll_route(&np, ip, port->now_ns(), mac, request);
    return r == NETPOLL_ROUTE_KNOWN || r == NETPOLL_ROUTE_REFRESH;
}

/* One datagram of gdb bytes to the peer. */
static void send_datagram(const uint8_t *bytes, size_t len)
{
    uint8_t mac[6];
    if (!peer.attached || np.ip == 0 || !neighbour(peer.ip, mac))
        return;
    size_t n = gdb_udp_seal(peer.ip, peer.port, bytes, len, sealed, sizeof sealed);
    if (n == 0 && len != 0)
        return;
    if (netpoll_send_udp(&np, mac, peer.ip, peer.port, sealed, n, frame_scratch, emit_frame, 0)) {
        counts.datagrams_out++;
        tx_fail_streak = 0;
    } else {
        counts.tx_failed++;
        tx_fail_streak++;
    }
}

static void remember_answer(const uint8_t *bytes, size_t len)
{
    if (!last.armed || !last.answer_whole)
        return;
    if (len > sizeof last.answer - last.answer_len) {
        last.answer_whole = false;
        return;
    }
    memcpy(last.answer + last.answer_len, bytes, len);
    last.answer_len += len;
}

static void udp_flush(void *ctx)
{
    (void)ctx;
    if (tx_len == 0)
        return;
    remember_answer(tx_buf, tx_len);
    send_datagram(tx_buf, tx_len);
    tx_len = 0;
}

static void udp_putc(void *ctx, char c)
{
    if (tx_len == sizeof tx_buf)
        udp_flush(ctx); /* a reply longer than one datagram goes out in several, in order */
    tx_buf[tx_len++] = (uint8_t)c;
}

static void udp_write(void *ctx, const char *bytes, size_t len)
{
    while (len > 0) {
        if (tx_len == sizeof tx_buf)
            udp_flush(ctx);
        size_t n = sizeof tx_buf - tx_len;
        if (n > len)
            n = len;
        memcpy(tx_buf + tx_len, bytes, n);
        tx_len += n;
        bytes += n;
        len -= n;
    }
}

/* ---- receiving ---------------------------------------------------------------------------------------- */

static bool ring_put(const uint8_t *bytes, size_t len)
{
    size_t head = atomic_load(&rx_head), tail = atomic_load(&rx_tail);
    if (len > GDB_UDP_RX_RING - (head - tail))
        return false;
    for (size_t i = 0; i < len; i++)
        rx_ring[(head + i) % GDB_UDP_RX_RING] = bytes[i];
    atomic_store_explicit(&rx_head, head + len, memory_order_release);
    return true;
}

static bool has_byte(const uint8_t *bytes, size_t len, uint8_t b)
{
    for (size_t i = 0; i < len; i++)
        if (bytes[i] == b)
            return true;
    return false;
}

static size_t skip_acks(const uint8_t *bytes, size_t len)
{
    size_t i = 0;
    while (i < len && (bytes[i] == '+' || bytes[i] == '-'))
        i++;
    return i;
}

/* Whether bytes[from..len) is exactly one packet with a good checksum; its body is then
 * bytes[from + 1 .. from + 1 + *body_len). */
static bool one_good_packet(const uint8_t *bytes, size_t len, size_t from, size_t *body_len)
{
    size_t i = from;
    if (i >= len || bytes[i] != '$')
        return false;
    uint8_t sum = 0;
    for (i++; i < len && bytes[i] != '#'; i++) {
        if (bytes[i] == '$')
            return false;
        sum = (uint8_t)(sum + bytes[i]);
    }
    if (len - i != 3)
        return false;
    int hi = hex_value((char)bytes[i + 1]), lo = hex_value((char)bytes[i + 2]);
    *body_len = i - from - 1;
    return hi >= 0 && lo >= 0 && (uint8_t)(hi << 4 | lo) == sum;
}

/* What a debugger sends first and a stub never sends: `?`, a `q` query (gdb's qSupported), lldb's
 * QStartNoAckMode (a stub's `QC` reply to qC is not one). */
static bool opens_as_a_debugger(const uint8_t *body, size_t len)
{
    static const char no_ack[] = "QStartNoAckMode";
    if (len == 0)
        return false;
    if (body[0] == '?' || body[0] == 'q')
        return true;
    return len == sizeof no_ack - 1 && memcmp(body, no_ack, len) == 0;
}

/* What a datagram to a running machine asks: exactly Ctrl-C (after any acks) interrupts, exactly one packet
 * with a good checksum (after any acks) attaches; anything else nothing. A newcomer nothing proves (the
 * insecure mode) must open as a debugger does: Ctrl-C, or a packet gdb or lldb sends first
 * (opens_as_a_debugger), so that another stub's reply echoed at us opens nothing. */
static enum gdb_udp_stop running_request(const uint8_t *bytes, size_t len, bool opener)
{
    size_t i = skip_acks(bytes, len), body_len;
    if (len - i == 1 && bytes[i] == CTRL_C)
        return GDB_UDP_STOP_INTERRUPT;
    if (!one_good_packet(bytes, len, i, &body_len))
        return GDB_UDP_NO_STOP;
    if (opener && !opens_as_a_debugger(bytes + i + 1, body_len))
        return GDB_UDP_NO_STOP;
    return GDB_UDP_STOP_ATTACH;
}

/* What a stub sends and gdb does not: a lone nak (the stub would send its reply again), `OK`, `Enn` or an
 * empty packet (after any acks). Never answered from an unproven sender: two stubs, or a stub and an echo,
 * would answer each other for ever. (A lone `+` is let through: the stub answers no ack, and gdb's acks are
 * what the stub waits for.) */
static bool looks_like_a_reply(const uint8_t *bytes, size_t len)
{
    size_t i = skip_acks(bytes, len), body_len;
    if (i == len)
        return i > 0 && bytes[len - 1] == '-';
    if (!one_good_packet(bytes, len, i, &body_len))
        return false;
    const uint8_t *body = bytes + i + 1;
    if (body_len == 0 || (body_len == 2 && body[0] == 'O' && body[1] == 'K'))
        return true;
    return body_len == 3 && body[0] == 'E' && hex_value((char)body[1]) >= 0 && hex_value((char)body[2]) >= 0;
}

/* What sending the remembered answer again costs on the wire, as one unproven sender gets it: its datagrams,
 * headers counted. (Unproven senders are the insecure mode's, where sealing adds nothing.) */
static size_t answer_wire_bytes(void)
{
    size_t datagrams = (last.answer_len + GDB_UDP_DATAGRAM_MAX - 1) / GDB_UDP_DATAGRAM_MAX;
    return last.answer_len + (datagrams - 1) * NET_UDP_HEADER_BYTES;
}

/* A repeat of the packet the stub last acknowledged: answered again, not run again -- once, and for an
 * unproven sender only within the 3x budget of the datagram that asked (wire_len, its payload's length).
 * True when handled (answered or dropped). */
static bool repeat_handled(const uint8_t *bytes, size_t len, size_t wire_len, bool proven)
{
    if (!last.armed || len != last.len || memcmp(bytes, last.bytes, len) != 0)
        return false;
    if (last.answer_len == 0) {
        counts.repeats++; /* the first copy is still waiting in the ring: its answer will go out */
        return true;
    }
    if (last.answer[0] != '+' || !last.answer_whole)
        return false; /* it was refused (`-`) or its answer is not all here: this one is a fresh try */
    if (last.repeated || (!proven && !net_reply_within_budget(wire_len, answer_wire_bytes()))) {
        counts.repeats_dropped++;
        return true;
    }
    last.repeated = true;
    counts.repeats++;
    gdb_udp_commit(); /* answered: acted on (a repeat dropped above is not, and moves no floor) */
    for (size_t at = 0; at < last.answer_len; at += GDB_UDP_DATAGRAM_MAX) {
        size_t n = last.answer_len - at;
        send_datagram(last.answer + at, n < GDB_UDP_DATAGRAM_MAX ? n : GDB_UDP_DATAGRAM_MAX);
    }
    return true;
}

static void note_packet(const uint8_t *bytes, size_t len)
{
    if (!has_byte(bytes, len, '$')) {
        last.armed = false; /* gdb's ack of our reply, or noise: the next repeat is a new request */
        return;
    }
    last.armed = len <= sizeof last.bytes;
    if (!last.armed)
        return;
    memcpy(last.bytes, bytes, len);
    last.len = len;
    last.answer_len = 0;
    last.answer_whole = true;
    last.repeated = false;
}

/* A hello's answer costs two HMACs and a datagram: a token first, the proven peer's own or everyone else's
 * shared one, so a flood of forged hellos neither burns more CPU than the newcomers' budget nor starves the
 * peer. True for anything that is not a hello. */
static bool hello_admitted(const struct netpoll_datagram *dg, bool from_peer, int64_t now)
{
    bool peer_hello = from_peer && peer.proven;
    if (!gdb_udp_is_hello(dg->data, dg->len) ||
        token_bucket_take(peer_hello ? &hellos_peer : &hellos_unproven,
                          peer_hello ? GDB_UDP_PEER_HELLO_RATE : GDB_UDP_NEWCOMER_HELLO_RATE, now))
        return true;
    counts.hellos_limited++;
    return false;
}

static void datagram_in(const struct netpoll_datagram *dg, int64_t now)
{
    if (!port->permits(dg->src_ip)) {
        counts.not_allowed++;
        return;
    }
    bool from_peer = peer.attached && peer.ip == dg->src_ip && peer.port == dg->src_port;
    if (!from_peer && peer.attached && now - peer.heard_ns <= GDB_UDP_PEER_IDLE_NS) {
        counts.not_peer++;
        return;
    }
    /* A candidate is judged as a newcomer by gdb_udp_open itself (its address is not the session's): nothing
     * here ends the idle peer's session unless the candidate's datagram is acted on (gdb_udp_commit). */
    uint8_t mac[6];
    if (!hello_admitted(dg, from_peer, now))
        return;
    const uint8_t *inner = 0;
    size_t inner_len = 0;
    enum gdb_udp_verdict verdict = gdb_udp_open(dg->src_ip, dg->src_port, dg->data, dg->len, &inner, &inner_len);
    if (verdict == GDB_UDP_REPLY) {
        /* The nonce answer: to the sender as it is, at the MAC ARP gives for it; no peer claimed, nothing for
         * the stub. */
        if (np.ip != 0 && neighbour(dg->src_ip, mac) &&
            netpoll_send_udp(&np, mac, dg->src_ip, dg->src_port, inner, inner_len, frame_scratch, emit_frame, 0))
            counts.datagrams_out++;
        return;
    }
    if (verdict != GDB_UDP_ACCEPT && verdict != GDB_UDP_ACCEPT_RAW) {
        counts.dropped_open++;
        return;
    }
    bool proven = verdict == GDB_UDP_ACCEPT;
    if (!proven && looks_like_a_reply(inner, inner_len)) {
        counts.reply_looking++;
        return;
    }
    /* While the machine runs, and from a newcomer at any time, only Ctrl-C or one good packet counts: junk
     * neither stops the machine nor makes its sender the peer. */
    enum gdb_udp_stop ask = GDB_UDP_NO_STOP;
    if (!in_session || !from_peer) {
        ask = running_request(inner, inner_len, !from_peer && !proven);
        if (ask == GDB_UDP_NO_STOP) {
            counts.dropped_idle++;
            return;
        }
    }
    /* Asked now (junk asks nothing), so that the stub's answer usually finds where the sender is. */
    neighbour(dg->src_ip, mac);
    counts.datagrams_in++;
    if (!from_peer) {
        peer.attached = true;
        peer.ip = dg->src_ip;
        peer.port = dg->src_port;
        last.armed = false;
        counts.peers++;
    }
    peer.proven = proven;
    peer.heard_ns = now;
    if (repeat_handled(inner, inner_len, dg->len, proven))
        return;
    if (!ring_put(inner, inner_len)) {
        counts.rx_overflow++;
        return;
    }
    gdb_udp_commit(); /* for the stub: its session's floor rises, a newcomer's session starts */
    note_packet(inner, inner_len);
    if (ask != GDB_UDP_NO_STOP && !in_session) {
        int none = GDB_UDP_NO_STOP;
        /* An interrupt outranks an attach already waiting. */
        if (!atomic_compare_exchange_strong(&pending_stop, &none, ask) && ask == GDB_UDP_STOP_INTERRUPT)
            atomic_store(&pending_stop, ask);
        counts.stops++;
    }
}

void gdb_udp_frame(const uint8_t *frame, size_t len)
{
    if (!enabled)
        return;
    int64_t now = port->now_ns();
    struct netpoll_datagram dg;
    uint8_t reply[NETPOLL_FRAME_MIN];
    size_t reply_len = 0;
    switch (netpoll_receive(&np, frame, len, now, &dg, reply, &reply_len)) {
    case NETPOLL_REPLY:
        port->transmit(reply, reply_len); /* a lost ARP reply is asked for again */
        break;
    case NETPOLL_DATAGRAM:
        datagram_in(&dg, now);
        break;
    case NETPOLL_HELD:
    case NETPOLL_IGNORE:
        break;
    }
}

static int udp_getc(void *ctx, int timeout_ms)
{
    (void)ctx;
    if (!enabled)
        return -1; /* gdb.udp= was refused: a session here has no link (it resumes the machine) */
    int64_t start = port->now_ns(), busy_since = 0;
    for (;;) {
        size_t tail = atomic_load(&rx_tail);
        if (tail != atomic_load_explicit(&rx_head, memory_order_acquire)) {
            uint8_t c = rx_ring[tail % GDB_UDP_RX_RING];
            atomic_store(&rx_tail, tail + 1);
            return c;
        }
        int taken = port->poll(POLL_BUDGET);
        if (taken > 0)
            continue;
        int64_t now = port->now_ns();
        if (taken == 0)
            busy_since = 0;
        else if (busy_since == 0)
            busy_since = now;
        if ((busy_since && now - busy_since >= GDB_UDP_CARD_STUCK_NS) ||
            tx_fail_streak >= GDB_UDP_TX_STUCK_DATAGRAMS) {
            counts.card_stuck++;
            tx_fail_streak = 0;
            return -1; /* the stub takes it as the link lost */
        }
        if (timeout_ms >= 0 && port->now_ns() - start >= (int64_t)timeout_ms * 1000000)
            return -1;
        port->relax();
    }
}

/* A session's first reply would find the peer's MAC unknown when the ARP answer to the question asked as its
 * datagram came is still on the card: it is polled for, up to GDB_UDP_ARP_WAIT_NS (asking again every
 * NETPOLL_ARP_RETRY_NS), so that gdb need not retransmit. */
static void await_peer_neighbour(void)
{
    uint8_t mac[6];
    int64_t start = port->now_ns();
    while (peer.attached && !neighbour(peer.ip, mac) && port->now_ns() - start < GDB_UDP_ARP_WAIT_NS) {
        if (port->poll(POLL_BUDGET) <= 0)
            port->relax();
    }
}

static void udp_session(void *ctx, bool begin, bool gone)
{
    (void)ctx;
    in_session = begin;
    atomic_store(&pending_stop, GDB_UDP_NO_STOP);
    if (enabled && port->session)
        port->session(begin);
    if (enabled && begin && np.ip != 0)
        await_peer_neighbour();
    if (!begin && gone) {
        peer.attached = false;
        peer.proven = false;
        last.armed = false;
        /* Whatever the old peer still had queued is not the next one's. */
        atomic_store(&rx_tail, atomic_load(&rx_head));
        gdb_udp_auth_reset();
    }
}

const struct gdb_transport gdb_udp_transport = {
    .getc = udp_getc,
    .putc = udp_putc,
    .write = udp_write,
    .ctx = 0,
    .flush = udp_flush,
    .session = udp_session,
};
