/* tests/unit/test_netpoll.c: kernel/net/netpoll.c -- ARP answered for our address only, IPv4/UDP parsed and
 * built (checksums both ways, against a second netpoll playing the peer; no checksum refused), fragments
 * reassembled in every order and with duplicates, overlaps with other bytes, oversize and inconsistent sets
 * refused, only from an admitted source, wrong address and port ignored, hostile sources dropped, and every
 * truncation of a good frame refused without reading past it. Neighbours: test_netpoll_neighbours.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "kernel/net/netpoll.h"
#include "tests/unit/netpoll_addresses.h"
#include "unit_main.h"

static struct netpoll us, peer;
static uint32_t admitted_ip; /* the one source the owner lets reassemble */

static bool admit_one(void *arg, uint32_t src)
{
    (void)arg;
    return src == admitted_ip;
}

/* Frames a send produced, in order. */
#define FRAMES_MAX 64
static struct {
    size_t count;
    size_t len[FRAMES_MAX];
    uint8_t bytes[FRAMES_MAX][NETPOLL_FRAME_MAX];
} sent;
static uint8_t scratch[NETPOLL_FRAME_MAX];

static bool capture(void *arg, const uint8_t *frame, size_t len)
{
    (void)arg;
    assert_true(sent.count < FRAMES_MAX);
    assert_true(len <= NETPOLL_FRAME_MAX);
    memcpy(sent.bytes[sent.count], frame, len);
    sent.len[sent.count++] = len;
    return true;
}

static int setup(void **state)
{
    (void)state;
    netpoll_init(&us, our_mac, OUR_IP, OUR_PORT);
    netpoll_init(&peer, peer_mac, PEER_IP, PEER_PORT);
    admitted_ip = PEER_IP;
    us.admit = admit_one;
    memset(&sent, 0, sizeof sent);
    return 0;
}

static void fill(uint8_t *data, size_t len, unsigned seed)
{
    for (size_t i = 0; i < len; i++)
        data[i] = (uint8_t)(i * 7 + seed + (i >> 8));
}

/* The peer sends len bytes to us; the frames land in `sent`. */
static void peer_sends(const uint8_t *data, size_t len)
{
    sent.count = 0;
    assert_true(netpoll_send_udp(&peer, our_mac, OUR_IP, OUR_PORT, data, len, scratch, capture, 0));
}

static enum netpoll_verdict give(size_t i, struct netpoll_datagram *dg)
{
    uint8_t reply[NETPOLL_FRAME_MIN];
    size_t reply_len = 0;
    return netpoll_receive(&us, sent.bytes[i], sent.len[i], 0, dg, reply, &reply_len);
}

static void assert_datagram(const struct netpoll_datagram *dg, const uint8_t *data, size_t len)
{
    assert_int_equal(dg->src_ip, PEER_IP);
    assert_int_equal(dg->src_port, PEER_PORT);
    assert_memory_equal(dg->src_mac, peer_mac, 6);
    assert_int_equal(dg->len, len);
    if (len)
        assert_memory_equal(dg->data, data, len);
}

/* ---- ARP ---------------------------------------------------------------------------------------------- */

static size_t arp_request(uint8_t *f, uint16_t oper, uint32_t target_ip)
{
    memset(f, 0, 60);
    memset(f, 0xff, 6);
    memcpy(f + 6, peer_mac, 6);
    f[12] = 0x08, f[13] = 0x06;
    uint8_t *a = f + 14;
    a[0] = 0, a[1] = 1, a[2] = 0x08, a[3] = 0, a[4] = 6, a[5] = 4, a[6] = 0, a[7] = (uint8_t)oper;
    memcpy(a + 8, peer_mac, 6);
    a[14] = PEER_IP >> 24, a[15] = (PEER_IP >> 16) & 255, a[16] = (PEER_IP >> 8) & 255, a[17] = PEER_IP & 255;
    a[24] = (uint8_t)(target_ip >> 24), a[25] = (uint8_t)(target_ip >> 16), a[26] = (uint8_t)(target_ip >> 8);
    a[27] = (uint8_t)target_ip;
    return 42;
}

static void test_arp_request_for_our_address_is_answered_to_the_sender(void **state)
{
    (void)state;
    uint8_t f[60], reply[NETPOLL_FRAME_MIN];
    size_t len = arp_request(f, 1, OUR_IP), reply_len = 0;
    struct netpoll_datagram dg;
    assert_int_equal(netpoll_receive(&us, f, len, 0, &dg, reply, &reply_len), NETPOLL_REPLY);
    assert_int_equal(reply_len, 60);
    assert_memory_equal(reply, peer_mac, 6);
    assert_memory_equal(reply + 6, our_mac, 6);
    assert_int_equal(reply[12], 0x08);
    assert_int_equal(reply[13], 0x06);
    const uint8_t *a = reply + 14;
    assert_int_equal(a[7], 2); /* a reply */
    assert_memory_equal(a + 8, our_mac, 6);
    static const uint8_t our_ip_bytes[4] = { 10, 0, 2, 15 }, peer_ip_bytes[4] = { 10, 0, 2, 2 };
    assert_memory_equal(a + 14, our_ip_bytes, 4);
    assert_memory_equal(a + 18, peer_mac, 6);
    assert_memory_equal(a + 24, peer_ip_bytes, 4);
    assert_int_equal(us.counts.arp_replies, 1);
}

static void test_arp_for_others_replies_and_without_address_are_ignored(void **state)
{
    (void)state;
    uint8_t f[60], reply[NETPOLL_FRAME_MIN];
    size_t reply_len = 0;
    struct netpoll_datagram dg;
    size_t len = arp_request(f, 1, OUR_IP + 1);
    assert_int_equal(netpoll_receive(&us, f, len, 0, &dg, reply, &reply_len), NETPOLL_IGNORE);
    len = arp_request(f, 2, OUR_IP);
    assert_int_equal(netpoll_receive(&us, f, len, 0, &dg, reply, &reply_len), NETPOLL_IGNORE);
    len = arp_request(f, 1, OUR_IP);
    f[14 + 4] = 8; /* hardware address length */
    assert_int_equal(netpoll_receive(&us, f, len, 0, &dg, reply, &reply_len), NETPOLL_IGNORE);
    len = arp_request(f, 1, OUR_IP);
    for (size_t cut = 0; cut < len; cut++)
        assert_int_equal(netpoll_receive(&us, f, cut, 0, &dg, reply, &reply_len), NETPOLL_IGNORE);
    us.ip = 0; /* before DHCP */
    len = arp_request(f, 1, 0);
    assert_int_equal(netpoll_receive(&us, f, len, 0, &dg, reply, &reply_len), NETPOLL_IGNORE);
    assert_int_equal(us.counts.arp_replies, 0);
}

/* ---- whole datagrams ---------------------------------------------------------------------------------- */

static void test_small_datagram_round_trips_with_checksums(void **state)
{
    (void)state;
    static const uint8_t msg[] = "$qSupported:multiprocess+#c6";
    peer_sends(msg, sizeof msg - 1);
    assert_int_equal(sent.count, 1);
    assert_int_equal(sent.len[0], 14 + 20 + 8 + sizeof msg - 1);
    /* the IPv4 header's own checksum holds, and the UDP checksum is not left out */
    assert_int_equal(netpoll_fold(netpoll_sum(0, sent.bytes[0] + 14, 20)), 0);
    assert_true(sent.bytes[0][14 + 20 + 6] != 0 || sent.bytes[0][14 + 20 + 7] != 0);
    struct netpoll_datagram dg;
    assert_int_equal(give(0, &dg), NETPOLL_DATAGRAM);
    assert_datagram(&dg, msg, sizeof msg - 1);
    assert_int_equal(us.counts.datagrams, 1);
}

static void test_short_datagram_is_padded_and_padding_is_not_payload(void **state)
{
    (void)state;
    static const uint8_t ack[] = "+";
    peer_sends(ack, 1);
    assert_int_equal(sent.len[0], 60);
    struct netpoll_datagram dg;
    assert_int_equal(give(0, &dg), NETPOLL_DATAGRAM);
    assert_datagram(&dg, ack, 1);
    /* an empty datagram too */
    peer_sends(ack, 0);
    assert_int_equal(give(0, &dg), NETPOLL_DATAGRAM);
    assert_int_equal(dg.len, 0);
}

static void test_bad_checksums_and_no_udp_checksum_are_refused(void **state)
{
    (void)state;
    uint8_t msg[100];
    fill(msg, sizeof msg, 3);
    struct netpoll_datagram dg;
    peer_sends(msg, sizeof msg);
    sent.bytes[0][14 + 20 + 8 + 50] ^= 1; /* payload */
    assert_int_equal(give(0, &dg), NETPOLL_IGNORE);
    assert_int_equal(us.counts.bad_checksum, 1);
    peer_sends(msg, sizeof msg);
    sent.bytes[0][14 + 8] ^= 1; /* TTL: only the header checksum covers it */
    assert_int_equal(give(0, &dg), NETPOLL_IGNORE);
    assert_int_equal(us.counts.bad_checksum, 2);
    peer_sends(msg, sizeof msg);
    sent.bytes[0][14 + 20 + 6] = 0;
    sent.bytes[0][14 + 20 + 7] = 0;
    /* "no checksum" is refused even when the bytes are right: it would let fragments of two datagrams be
     * spliced into one nobody sent */
    assert_int_equal(give(0, &dg), NETPOLL_IGNORE);
    assert_int_equal(us.counts.bad_checksum, 3);
    assert_int_equal(us.counts.datagrams, 0);
}

static void test_wrong_address_port_protocol_and_type_are_not_ours(void **state)
{
    (void)state;
    uint8_t msg[10] = "$g#67";
    struct netpoll_datagram dg;
    uint8_t reply[NETPOLL_FRAME_MIN];
    size_t rl;

    sent.count = 0;
    assert_true(netpoll_send_udp(&peer, our_mac, OUR_IP + 1, OUR_PORT, msg, 5, scratch, capture, 0));
    assert_int_equal(give(0, &dg), NETPOLL_IGNORE);
    assert_false(netpoll_wants(&us, sent.bytes[0], sent.len[0]));
    sent.count = 0;
    assert_true(netpoll_send_udp(&peer, our_mac, OUR_IP, OUR_PORT + 1, msg, 5, scratch, capture, 0));
    assert_int_equal(give(0, &dg), NETPOLL_IGNORE);
    assert_false(netpoll_wants(&us, sent.bytes[0], sent.len[0]));
    peer_sends(msg, 5);
    assert_true(netpoll_wants(&us, sent.bytes[0], sent.len[0]));
    uint8_t f[NETPOLL_FRAME_MAX];
    memcpy(f, sent.bytes[0], sent.len[0]);
    f[14 + 9] = 6; /* TCP */
    f[14 + 10] = f[14 + 11] = 0;
    uint16_t c = netpoll_fold(netpoll_sum(0, f + 14, 20));
    f[14 + 10] = (uint8_t)(c >> 8), f[14 + 11] = (uint8_t)c;
    assert_int_equal(netpoll_receive(&us, f, sent.len[0], 0, &dg, reply, &rl), NETPOLL_IGNORE);
    assert_false(netpoll_wants(&us, f, sent.len[0]));
    memcpy(f, sent.bytes[0], sent.len[0]);
    f[12] = 0x86, f[13] = 0xdd; /* IPv6 */
    assert_int_equal(netpoll_receive(&us, f, sent.len[0], 0, &dg, reply, &rl), NETPOLL_IGNORE);
    us.ip = 0;
    assert_int_equal(give(0, &dg), NETPOLL_IGNORE);
    assert_false(netpoll_wants(&us, sent.bytes[0], sent.len[0]));
    assert_int_equal(us.counts.datagrams, 0);
    assert_int_equal(us.counts.not_ours, 5);
}

static void test_every_truncation_and_bad_length_is_refused(void **state)
{
    (void)state;
    uint8_t msg[200];
    fill(msg, sizeof msg, 9);
    peer_sends(msg, sizeof msg);
    struct netpoll_datagram dg;
    uint8_t reply[NETPOLL_FRAME_MIN];
    size_t rl;
    for (size_t cut = 0; cut < sent.len[0]; cut++) {
        /* a copy of exactly cut bytes on the heap: ASan catches any read past it */
        uint8_t *f = malloc(cut ? cut : 1);
        memcpy(f, sent.bytes[0], cut);
        assert_int_equal(netpoll_receive(&us, f, cut, 0, &dg, reply, &rl), NETPOLL_IGNORE);
        netpoll_wants(&us, f, cut);
        free(f);
    }
    /* a UDP length past the IPv4 payload, and one under its own header */
    uint8_t f[NETPOLL_FRAME_MAX];
    memcpy(f, sent.bytes[0], sent.len[0]);
    f[14 + 20 + 4] = 0x10;
    assert_int_equal(netpoll_receive(&us, f, sent.len[0], 0, &dg, reply, &rl), NETPOLL_IGNORE);
    f[14 + 20 + 4] = 0, f[14 + 20 + 5] = 4;
    assert_int_equal(netpoll_receive(&us, f, sent.len[0], 0, &dg, reply, &rl), NETPOLL_IGNORE);
    /* an IPv4 header length under 20 and over the total */
    memcpy(f, sent.bytes[0], sent.len[0]);
    f[14] = 0x44;
    assert_int_equal(netpoll_receive(&us, f, sent.len[0], 0, &dg, reply, &rl), NETPOLL_IGNORE);
    f[14] = 0x4f;
    f[14 + 2] = 0, f[14 + 3] = 40;
    assert_int_equal(netpoll_receive(&us, f, sent.len[0], 0, &dg, reply, &rl), NETPOLL_IGNORE);
    assert_int_equal(us.counts.datagrams, 0);
    assert_true(us.counts.malformed >= sent.len[0]);
}

/* ---- fragments ---------------------------------------------------------------------------------------- */

static uint8_t big[NETPOLL_UDP_MAX];

static void test_large_datagram_is_fragmented_and_reassembled_in_order(void **state)
{
    (void)state;
    size_t len = 5000;
    fill(big, len, 1);
    peer_sends(big, len);
    assert_int_equal(sent.count, 4); /* 5008 bytes of UDP in pieces of 1480 */
    for (size_t i = 0; i < sent.count; i++)
        assert_true(sent.len[i] <= NETPOLL_FRAME_MAX);
    struct netpoll_datagram dg;
    for (size_t i = 0; i + 1 < sent.count; i++)
        assert_int_equal(give(i, &dg), NETPOLL_HELD);
    assert_true(netpoll_wants(&us, sent.bytes[3], sent.len[3])); /* a later fragment of the set in progress */
    assert_int_equal(give(3, &dg), NETPOLL_DATAGRAM);
    assert_datagram(&dg, big, len);
    assert_int_equal(us.counts.reassembled, 1);
}

static void shuffle(size_t *order, size_t n, unsigned *seed)
{
    for (size_t i = n; i > 1; i--) {
        *seed = *seed * 1103515245u + 12345u;
        size_t j = (*seed >> 8) % i;
        size_t t = order[i - 1];
        order[i - 1] = order[j];
        order[j] = t;
    }
}

static void test_fragments_in_every_order_and_with_duplicates_give_one_datagram(void **state)
{
    (void)state;
    size_t len = NETPOLL_UDP_MAX; /* the largest: 45 fragments */
    fill(big, len, 5);
    unsigned seed = 1;
    for (int round = 0; round < 100; round++) {
        peer_sends(big, len);
        size_t n = sent.count, order[2 * FRAMES_MAX];
        for (size_t i = 0; i < n; i++)
            order[i] = i;
        shuffle(order, n, &seed);
        /* some rounds repeat a few fragments (a duplicating network) before the set is complete */
        size_t total = n;
        if (round % 3 == 1)
            for (size_t d = 0; d < 3; d++)
                order[total++] = order[d];
        if (round % 3 == 1) {
            /* the duplicates go before the last new one */
            size_t last = order[n - 1];
            order[n - 1] = order[total - 1];
            order[total - 1] = last;
        }
        int datagrams = 0;
        struct netpoll_datagram dg;
        for (size_t i = 0; i < total; i++) {
            enum netpoll_verdict v = give(order[i], &dg);
            if (v == NETPOLL_DATAGRAM) {
                datagrams++;
                assert_int_equal(i, total - 1);
                assert_datagram(&dg, big, len);
            } else {
                assert_int_equal(v, NETPOLL_HELD);
            }
        }
        assert_int_equal(datagrams, 1);
    }
    assert_int_equal(us.counts.reassembled, 100);
    assert_int_equal(us.counts.reassembly_dropped, 0);
}

static void test_overlap_with_other_bytes_drops_the_set(void **state)
{
    (void)state;
    fill(big, 4000, 2);
    peer_sends(big, 4000);
    size_t n = sent.count;
    struct netpoll_datagram dg;
    assert_int_equal(give(0, &dg), NETPOLL_HELD);
    /* fragment 1 again with one byte changed (checksum of the IPv4 header fixed up: only the payload lies) */
    uint8_t f[NETPOLL_FRAME_MAX];
    memcpy(f, sent.bytes[1], sent.len[1]);
    f[14 + 20 + 100] ^= 0x40;
    uint8_t reply[NETPOLL_FRAME_MIN];
    size_t rl;
    assert_int_equal(give(1, &dg), NETPOLL_HELD);
    assert_int_equal(netpoll_receive(&us, f, sent.len[1], 0, &dg, reply, &rl), NETPOLL_IGNORE);
    assert_int_equal(us.counts.reassembly_dropped, 1);
    /* what remains of the set cannot complete a datagram now */
    for (size_t i = 2; i < n; i++)
        assert_int_not_equal(give(i, &dg), NETPOLL_DATAGRAM);
}

static void test_partial_overlap_with_the_same_bytes_is_accepted(void **state)
{
    (void)state;
    fill(big, 3000, 4);
    peer_sends(big, 3000);
    assert_int_equal(sent.count, 3);
    /* Fragment 0 re-cut to end 16 bytes into fragment 1's range (same bytes): a different cut of one
     * datagram, as a router that refragments could produce. */
    uint8_t f[NETPOLL_FRAME_MAX + 16]; /* a jumbo frame: netpoll reads what the card hands it */
    size_t extra = 16;
    memcpy(f, sent.bytes[0], sent.len[0]);
    memcpy(f + sent.len[0], sent.bytes[1] + 34, extra);
    size_t ip_total = sent.len[0] - 14 + extra;
    f[14 + 2] = (uint8_t)(ip_total >> 8), f[14 + 3] = (uint8_t)ip_total;
    f[14 + 10] = f[14 + 11] = 0;
    uint16_t c = netpoll_fold(netpoll_sum(0, f + 14, 20));
    f[14 + 10] = (uint8_t)(c >> 8), f[14 + 11] = (uint8_t)c;
    struct netpoll_datagram dg;
    uint8_t reply[NETPOLL_FRAME_MIN];
    size_t rl;
    assert_int_equal(give(1, &dg), NETPOLL_HELD);
    assert_int_equal(netpoll_receive(&us, f, sent.len[0] + extra, 0, &dg, reply, &rl), NETPOLL_HELD);
    assert_int_equal(give(2, &dg), NETPOLL_DATAGRAM);
    assert_datagram(&dg, big, 3000);
}

static void set_fragment_field(uint8_t *f, uint16_t flags_offset)
{
    f[14 + 6] = (uint8_t)(flags_offset >> 8), f[14 + 7] = (uint8_t)flags_offset;
    f[14 + 10] = f[14 + 11] = 0;
    uint16_t c = netpoll_fold(netpoll_sum(0, f + 14, 20));
    f[14 + 10] = (uint8_t)(c >> 8), f[14 + 11] = (uint8_t)c;
}

static void test_oversize_and_inconsistent_sets_are_refused(void **state)
{
    (void)state;
    fill(big, 3000, 6);
    peer_sends(big, 3000);
    struct netpoll_datagram dg;
    uint8_t reply[NETPOLL_FRAME_MIN];
    size_t rl;
    uint8_t f[NETPOLL_FRAME_MAX];
    /* a fragment whose end lies past the reassembly buffer */
    memcpy(f, sent.bytes[1], sent.len[1]);
    set_fragment_field(f, 0x2000 | 0x1fff);
    assert_int_equal(netpoll_receive(&us, f, sent.len[1], 0, &dg, reply, &rl), NETPOLL_IGNORE);
    /* a middle fragment whose length is no multiple of 8 */
    peer_sends(big, 3000);
    memcpy(f, sent.bytes[1], sent.len[1]);
    size_t odd = sent.len[1] - 3, ip_total = odd - 14;
    f[14 + 2] = (uint8_t)(ip_total >> 8), f[14 + 3] = (uint8_t)ip_total;
    set_fragment_field(f, (uint16_t)(f[14 + 6] << 8 | f[14 + 7]));
    assert_int_equal(netpoll_receive(&us, f, odd, 0, &dg, reply, &rl), NETPOLL_IGNORE);
    /* two different "last" fragments of one set */
    peer_sends(big, 3000);
    assert_int_equal(give(2, &dg), NETPOLL_HELD);
    memcpy(f, sent.bytes[1], sent.len[1]);
    set_fragment_field(f, (uint16_t)(((f[14 + 6] << 8) | f[14 + 7]) & 0x1fff)); /* MF cleared */
    assert_int_equal(netpoll_receive(&us, f, sent.len[1], 0, &dg, reply, &rl), NETPOLL_IGNORE);
    assert_int_not_equal(give(0, &dg), NETPOLL_DATAGRAM);
    assert_int_equal(us.counts.reassembled, 0);
    assert_true(us.counts.malformed >= 3);
}

/* The three fragments of a 3000-byte datagram (filled from seed) the peer sent, kept aside from `sent`. */
struct fragments {
    uint8_t bytes[3][NETPOLL_FRAME_MAX];
    size_t len[3];
};

static void peer_sends_kept(struct fragments *kept, unsigned seed)
{
    fill(big, 3000, seed);
    peer_sends(big, 3000);
    for (int i = 0; i < 3; i++)
        memcpy(kept->bytes[i], sent.bytes[i], kept->len[i] = sent.len[i]);
}

static void test_a_newer_set_replaces_an_older_one_and_stale_sets_time_out(void **state)
{
    (void)state;
    struct fragments first;
    peer_sends_kept(&first, 7);
    struct netpoll_datagram dg;
    uint8_t reply[NETPOLL_FRAME_MIN];
    size_t rl;
    assert_int_equal(netpoll_receive(&us, first.bytes[0], first.len[0], 0, &dg, reply, &rl), NETPOLL_HELD);
    peer_sends(big, 3000); /* a new identification */
    assert_int_equal(give(0, &dg), NETPOLL_HELD);
    assert_int_equal(us.counts.reassembly_dropped, 1);
    assert_int_equal(give(1, &dg), NETPOLL_HELD);
    assert_int_equal(give(2, &dg), NETPOLL_DATAGRAM);
    /* a set whose rest comes too late starts again */
    assert_int_equal(netpoll_receive(&us, first.bytes[0], first.len[0], 0, &dg, reply, &rl), NETPOLL_HELD);
    assert_int_equal(netpoll_receive(&us, first.bytes[1], first.len[1], NETPOLL_REASSEMBLY_NS + 1, &dg, reply, &rl),
                     NETPOLL_HELD);
    assert_int_equal(netpoll_receive(&us, first.bytes[2], first.len[2], NETPOLL_REASSEMBLY_NS + 2, &dg, reply, &rl),
                     NETPOLL_HELD);
    assert_int_equal(us.counts.reassembly_dropped, 2);
}

/* ---- hostile sources, admission (neighbours: test_netpoll_neighbours.c) ------------------------------- */

static const uint8_t forger_mac[6] = { 0x02, 0xde, 0xad, 0xbe, 0xef, 0x01 };

static enum netpoll_verdict receive_at(const uint8_t *f, size_t len, int64_t now)
{
    struct netpoll_datagram dg;
    uint8_t reply[NETPOLL_FRAME_MIN];
    size_t rl = 0;
    return netpoll_receive(&us, f, len, now, &dg, reply, &rl);
}

/* The peer's one datagram with its IPv4 source (and the checksums made right again), or its Ethernet source. */
static void resource(uint32_t src, const uint8_t *src_mac)
{
    struct netpoll forger;
    netpoll_init(&forger, src_mac ? src_mac : peer_mac, src, PEER_PORT);
    sent.count = 0;
    assert_true(netpoll_send_udp(&forger, our_mac, OUR_IP, OUR_PORT, (const uint8_t *)"$g#67", 5, scratch,
                                 capture, 0));
}

static void test_hostile_sources_are_dropped(void **state)
{
    (void)state;
    us.netmask = 0xffffff00;
    static const uint32_t hostile[] = {
        0,          /* 0.0.0.0 */
        0xffffffff, /* limited broadcast */
        0xe0000001, /* multicast */
        0xefffffff,
        0xf0000001, /* class E */
        0x7f000001, /* loopback */
        OUR_IP,     /* ourselves */
        0x0a0002ff, /* the subnet's broadcast */
    };
    struct netpoll_datagram dg;
    for (size_t i = 0; i < sizeof hostile / sizeof hostile[0]; i++) {
        resource(hostile[i], 0);
        assert_int_equal(give(0, &dg), NETPOLL_IGNORE);
        assert_int_equal(us.counts.hostile_source, i + 1);
    }
    /* a group (multicast or broadcast) Ethernet source, from an otherwise good address */
    static const uint8_t group[2][6] = { { 0x01, 0x00, 0x5e, 0x00, 0x00, 0x01 }, { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff } };
    for (int i = 0; i < 2; i++) {
        resource(PEER_IP, group[i]);
        assert_int_equal(give(0, &dg), NETPOLL_IGNORE);
    }
    assert_int_equal(us.counts.hostile_source, sizeof hostile / sizeof hostile[0] + 2);
    assert_int_equal(us.counts.datagrams, 0);
    /* and the same sender from a good address gets through */
    resource(PEER_IP, 0);
    assert_int_equal(give(0, &dg), NETPOLL_DATAGRAM);
    /* a /31 has no broadcast address; without a netmask there is none either */
    assert_false(netpoll_source_refused(0x0a000203, 0x0a000202, 0xfffffffe));
    assert_false(netpoll_source_refused(0x0a0002ff, OUR_IP, 0));
    assert_true(netpoll_source_refused(0x0a0003ff, 0x0a00020f, 0xfffffc00));
}

static void test_unadmitted_fragments_neither_start_nor_cancel_the_peers_reassembly(void **state)
{
    (void)state;
    struct fragments mine;
    peer_sends_kept(&mine, 9);
    assert_int_equal(receive_at(mine.bytes[0], mine.len[0], 0), NETPOLL_HELD);
    /* another (allowlisted, even) address sends fragments: a first one, a middle one with the peer's id */
    struct netpoll other;
    netpoll_init(&other, forger_mac, PEER_IP + 1, PEER_PORT);
    other.next_id = peer.next_id - 1;
    sent.count = 0;
    assert_true(netpoll_send_udp(&other, our_mac, OUR_IP, OUR_PORT, big, 3000, scratch, capture, 0));
    for (size_t i = 0; i < sent.count; i++)
        assert_int_equal(receive_at(sent.bytes[i], sent.len[i], 0), NETPOLL_IGNORE);
    assert_int_equal(us.counts.not_admitted, sent.count);
    assert_int_equal(us.counts.reassembly_dropped, 0);
    assert_false(netpoll_wants(&us, sent.bytes[1], sent.len[1])); /* not the set being reassembled */
    struct netpoll_datagram dg;
    assert_int_equal(receive_at(mine.bytes[1], mine.len[1], 0), NETPOLL_HELD);
    uint8_t reply[NETPOLL_FRAME_MIN];
    size_t rl;
    assert_int_equal(netpoll_receive(&us, mine.bytes[2], mine.len[2], 0, &dg, reply, &rl), NETPOLL_DATAGRAM);
    assert_datagram(&dg, big, 3000);
    /* no admission at all (no owner's answer): nobody reassembles */
    us.admit = 0;
    peer_sends(big, 3000);
    assert_int_equal(give(0, &dg), NETPOLL_IGNORE);
    assert_int_equal(us.counts.not_admitted, 4);
}

static void test_too_long_to_send_is_refused(void **state)
{
    (void)state;
    sent.count = 0;
    assert_false(netpoll_send_udp(&peer, our_mac, OUR_IP, OUR_PORT, big, NETPOLL_UDP_MAX + 1, scratch, capture, 0));
    assert_int_equal(sent.count, 0);
}

UNIT_MAIN_EACH(setup, NULL, NULL, NULL,
               test_arp_request_for_our_address_is_answered_to_the_sender,
               test_arp_for_others_replies_and_without_address_are_ignored,
               test_small_datagram_round_trips_with_checksums, test_short_datagram_is_padded_and_padding_is_not_payload,
               test_bad_checksums_and_no_udp_checksum_are_refused,
               test_wrong_address_port_protocol_and_type_are_not_ours, test_every_truncation_and_bad_length_is_refused,
               test_large_datagram_is_fragmented_and_reassembled_in_order,
               test_fragments_in_every_order_and_with_duplicates_give_one_datagram,
               test_overlap_with_other_bytes_drops_the_set, test_partial_overlap_with_the_same_bytes_is_accepted,
               test_oversize_and_inconsistent_sets_are_refused,
               test_a_newer_set_replaces_an_older_one_and_stale_sets_time_out, test_hostile_sources_are_dropped,
               test_unadmitted_fragments_neither_start_nor_cancel_the_peers_reassembly,
               test_too_long_to_send_is_refused)
