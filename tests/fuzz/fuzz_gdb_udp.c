/* tests/fuzz/fuzz_gdb_udp.c: the gdb UDP transport's frame and packet handling (kernel/net/netpoll.c,
 * gdbstub/udp.c) on arbitrary input. The input is a run of records -- op, two length bytes, that many
 * bytes -- that hand raw frames to the card, send well-formed datagrams (whole or fragmented, in a shuffled
 * order, from one of three senders) while the machine runs or during a session, make the stub write and
 * flush, drain its getc, move the clock, and let the peer's machine answer ARP or not -- in the insecure mode
 * (raw gdb bytes), where the transport alone holds the line. Invariants: every frame the transport sends
 * parses back as an ARP reply, an ARP question, or a checksummed datagram to the peer of at most
 * GDB_UDP_DATAGRAM_MAX bytes of payload -- sent to the MAC the ARP answer gave, never to the senders' own
 * (unless raw frames, which may be such an answer, were given); the stub
 * never reads more bytes than datagrams carried; a running machine is only asked to stop by Ctrl-C or one
 * good packet; netpoll's verdicts stay within the frame and its buffers. */
#include <stdbool.h>
#include <string.h>

#include "fuzz.h"
#include "gdbstub/udp.h"
#include "kernel/net/netpoll.h"
#include "tests/unit/fake_neighbour.h"
#include "tests/unit/gdb_udp_frames.h"
#include "tests/unit/gdb_udp_seam.h"

#define OUR_IP 0x0a00020f
#define GDB_PORT 1234
#define BANNED_IP 0x0a000299

static const uint8_t our_mac[6] = { 0x52, 0x54, 0x00, 0x12, 0x34, 0x56 };
static const uint8_t sender_mac[6] = { 0x02, 0x00, 0x00, 0x00, 0x00, 0x05 };    /* the datagrams' source */
static const uint8_t neighbour_mac[6] = { 0x52, 0x55, 0x0a, 0x00, 0x02, 0x02 }; /* what ARP answers */
static bool neighbour_answers; /* the peer's machine answers our ARP questions (at once) */
static bool raw_frames;        /* raw frames were given: one may have been an ARP answer of its own */
static const uint32_t sender_ips[3] = { 0x0a000202, 0x0a000203, BANNED_IP };

static int64_t clock_ns;
static bool busy;
static size_t bytes_carried, bytes_read;
static struct netpoll checker; /* reads back what the transport sends */

static struct frames card;

static bool fake_transmit(const uint8_t *frame, size_t len)
{
    if (busy)
        return false;
    CHECK(len >= NETPOLL_FRAME_MIN && len <= NETPOLL_FRAME_MAX);
    if (frame[12] == 0x08 && frame[13] == 0x06) {
        CHECK(len == NETPOLL_FRAME_MIN && (frame[14 + 7] == 2 || frame[14 + 7] == 1));
        if (neighbour_answers)
            fake_neighbour_answers(frame, len, neighbour_mac, gdb_udp_frame);
        return true;
    }
    CHECK(raw_frames || memcmp(frame, neighbour_mac, 6) == 0); /* never to a request's source */
    /* Our frames as the peer reads them: reassembled by a netpoll listening on the peer's address. */
    uint32_t dst = (uint32_t)frame[30] << 24 | (uint32_t)frame[31] << 16 | (uint32_t)frame[32] << 8 | frame[33];
    checker.ip = dst;
    uint32_t peer_ip;
    uint16_t peer_port;
    CHECK(gdb_udp_peer(&peer_ip, &peer_port) && peer_ip == dst); /* only ever to the peer */
    checker.port = peer_port;
    struct netpoll_datagram dg;
    uint8_t reply[NETPOLL_FRAME_MIN];
    size_t rl;
    enum netpoll_verdict v = netpoll_receive(&checker, frame, len, clock_ns, &dg, reply, &rl);
    CHECK(v == NETPOLL_HELD || v == NETPOLL_DATAGRAM);
    if (v == NETPOLL_DATAGRAM)
        CHECK(dg.len <= GDB_UDP_DATAGRAM_MAX && dg.src_ip == OUR_IP && dg.src_port == GDB_PORT);
    return true;
}

static int fake_poll(int budget)
{
    return frames_poll(&card, budget);
}

static bool fake_permits(uint32_t ip) { return ip != BANNED_IP; }
static int64_t fake_now(void) { return clock_ns += 1000; }
static void fake_relax(void) { clock_ns += 10000000; }

static const struct gdb_udp_port port = {
    .transmit = fake_transmit, .poll = fake_poll, .permits = fake_permits, .now_ns = fake_now, .relax = fake_relax,
};

static bool queue_frame(void *arg, const uint8_t *frame, size_t len)
{
    (void)arg;
    return frames_push(&card, frame, len);
}

/* The frames queued from first on, in an order the input picks. */
static void shuffle_from(size_t first, uint8_t how)
{
    size_t n = card.count - first;
    for (size_t i = n; i > 1 && how; i--) {
        size_t j = (how * 31u + i) % i;
        uint8_t tmp[NETPOLL_FRAME_MAX];
        size_t a = first + i - 1, b = first + j, tl = card.len[a];
        memcpy(tmp, card.bytes[a], tl);
        memcpy(card.bytes[a], card.bytes[b], card.len[b]);
        card.len[a] = card.len[b];
        memcpy(card.bytes[b], tmp, tl);
        card.len[b] = tl;
    }
}

static bool good_packet(const uint8_t *d, size_t len)
{
    size_t i = 0;
    while (i < len && (d[i] == '+' || d[i] == '-'))
        i++;
    if (len - i == 1 && d[i] == 0x03)
        return true;
    if (i >= len || d[i] != '$')
        return false;
    size_t hash = i + 1;
    while (hash < len && d[hash] != '#' && d[hash] != '$')
        hash++;
    return hash + 3 == len && d[hash] == '#';
}

/* netpoll alone on a raw frame: its verdicts stay inside what it was given. */
static struct netpoll alone;
static void check_netpoll(const uint8_t *frame, size_t len)
{
    struct netpoll_datagram dg;
    uint8_t reply[NETPOLL_FRAME_MIN];
    size_t rl = 0;
    enum netpoll_verdict v = netpoll_receive(&alone, frame, len, clock_ns, &dg, reply, &rl);
    if (v == NETPOLL_REPLY)
        CHECK(rl == NETPOLL_FRAME_MIN);
    if (v == NETPOLL_DATAGRAM) {
        CHECK(dg.len <= NETPOLL_UDP_MAX);
        bool in_frame = dg.data >= frame && dg.data + dg.len <= frame + len;
        bool in_reasm = dg.data >= alone.reasm.data && dg.data + dg.len <= alone.reasm.data + sizeof alone.reasm.data;
        CHECK(in_frame || in_reasm);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    clock_ns = 1000000000;
    busy = false;
    bytes_carried = bytes_read = 0;
    memset(&card, 0, sizeof card);
    static const uint8_t zero[SHA256_DIGEST_SIZE];
    gdb_udp_seam_key(zero, 0, 0);
    gdb_udp_seam_insecure(); /* raw gdb bytes: the transport's rules for senders nothing proves */
    gdb_udp_init(&port, our_mac, GDB_PORT);
    gdb_udp_set_address(OUR_IP);
    netpoll_init(&checker, our_mac, 0, 40000);
    checker.admit = fake_admit_any;
    netpoll_init(&alone, our_mac, OUR_IP, GDB_PORT);
    alone.admit = fake_admit_any;
    neighbour_answers = true;
    raw_frames = false;
    bool in_session = false;
    uint16_t next_id = 1;

    size_t at = 0;
    while (at + 3 <= size) {
        uint8_t op = data[at];
        size_t len = (size_t)data[at + 1] | (size_t)data[at + 2] << 8;
        at += 3;
        if (len > size - at)
            len = size - at;
        const uint8_t *arg = data + at;
        at += len;
        if (card.next == card.count)
            card.next = card.count = 0;
        switch (op % 8) {
        case 0: /* a raw frame on the card */
            check_netpoll(arg, len);
            raw_frames = true;
            if (frames_push(&card, arg, len))
                bytes_carried += len; /* more than any payload it can hold */
            break;
        case 1: { /* a well-formed datagram: sender, port, shuffle in the first two bytes */
            if (len < 2)
                break;
            uint32_t ip = sender_ips[arg[0] % 3];
            uint16_t src_port = (uint16_t)(40000 + (arg[0] >> 2) % 2);
            struct netpoll sender;
            netpoll_init(&sender, sender_mac, ip, src_port);
            sender.next_id = next_id++;
            size_t first = card.count;
            bool only_this = card.next == first; /* nothing older waits on the card */
            if (netpoll_send_udp(&sender, our_mac, OUR_IP, GDB_PORT, arg + 2, len - 2, sender.reasm.data,
                                 queue_frame, 0)) {
                if (fake_permits(ip))
                    bytes_carried += len - 2;
                shuffle_from(first, arg[1]);
            }
            if (!in_session) {
                /* the network task's hand-over, then the stop it may ask for */
                enum gdb_udp_stop stop = frames_hand_over(&card);
                if (stop != GDB_UDP_NO_STOP && only_this)
                    CHECK(good_packet(arg + 2, len - 2));
            }
            break;
        }
        case 2: /* a session begins or ends (gone when the byte says so) */
            in_session = !in_session;
            gdb_udp_transport.session(0, in_session, len > 0 && (arg[0] & 1));
            break;
        case 3: /* the stub writes and flushes */
            if (!in_session)
                break;
            for (size_t i = 0; i < len; i++)
                gdb_udp_transport.putc(0, (char)arg[i]);
            gdb_udp_transport.flush(0);
            break;
        case 4: /* the stub reads what there is */
            if (!in_session)
                break;
            for (int c; (c = gdb_udp_transport.getc(0, 0)) >= 0;)
                bytes_read++;
            CHECK(bytes_read <= bytes_carried);
            break;
        case 5: /* time passes */
            clock_ns += (int64_t)(len ? arg[0] : 1) * 1000000000ll;
            break;
        case 6: /* the card's transmit side is busy, or free again; the peer's machine answers ARP or not */
            busy = len > 0 && (arg[0] & 1);
            neighbour_answers = !(len > 0 && (arg[0] & 2));
            break;
        case 7: /* the address changes (DHCP), or goes; the netmask and gateway with it */
            gdb_udp_set_route(len > 0 && (arg[0] & 2) ? 0xffffff00u : 0, len > 0 && (arg[0] & 4) ? 0x0a000202u : 0);
            gdb_udp_set_address(len > 0 && (arg[0] & 1) ? 0 : OUR_IP);
            break;
        }
    }
    return 0;
}
