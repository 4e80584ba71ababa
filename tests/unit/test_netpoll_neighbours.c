/* tests/unit/test_netpoll_neighbours.c: kernel/net/netpoll.c's neighbours (netpoll_route) -- learned only from
 * an ARP reply to our own recent request (never from requests, unasked or late replies, group MACs or a
 * datagram's source), asked for at most once per retry interval, forgotten after NETPOLL_NEIGHBOUR_NS; on the
 * subnet the address's own MAC, off it the gateway's; questions nobody answers give way before known
 * neighbours. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "kernel/net/netpoll.h"
#include "tests/unit/netpoll_addresses.h"
#include "unit_main.h"

static struct netpoll us;

static int setup(void **state)
{
    (void)state;
    netpoll_init(&us, our_mac, OUR_IP, OUR_PORT);
    return 0;
}

static uint8_t frame[NETPOLL_FRAME_MAX];
static size_t frame_len;

static bool keep(void *arg, const uint8_t *f, size_t len)
{
    (void)arg;
    memcpy(frame, f, len);
    frame_len = len;
    return true;
}

#define GATEWAY_IP 0x0a000201      /* 10.0.2.1 */
#define FAR_IP 0x08080808          /* 8.8.8.8: off the subnet */
static const uint8_t gateway_mac[6] = { 0x52, 0x55, 0x0a, 0x00, 0x02, 0x01 };
static const uint8_t forger_mac[6] = { 0x02, 0xde, 0xad, 0xbe, 0xef, 0x01 };

/* An ARP frame of oper from (sender_mac, sender_ip) to us. */
static void arp_to_us(uint8_t *f, uint16_t oper, const uint8_t *sender_mac, uint32_t sender_ip)
{
    memset(f, 0, 60);
    memcpy(f, our_mac, 6);
    memcpy(f + 6, sender_mac, 6);
    f[12] = 0x08, f[13] = 0x06;
    uint8_t *a = f + 14;
    a[1] = 1, a[2] = 0x08, a[4] = 6, a[5] = 4, a[7] = (uint8_t)oper;
    memcpy(a + 8, sender_mac, 6);
    a[14] = (uint8_t)(sender_ip >> 24), a[15] = (uint8_t)(sender_ip >> 16), a[16] = (uint8_t)(sender_ip >> 8);
    a[17] = (uint8_t)sender_ip;
    memcpy(a + 18, our_mac, 6);
    a[24] = 10, a[25] = 0, a[26] = 2, a[27] = 15;
}

static enum netpoll_verdict receive_at(const uint8_t *f, size_t len, int64_t now)
{
    struct netpoll_datagram dg;
    uint8_t reply[NETPOLL_FRAME_MIN];
    size_t rl = 0;
    return netpoll_receive(&us, f, len, now, &dg, reply, &rl);
}

static enum netpoll_route route_at(uint32_t dst, int64_t now, uint8_t mac[6], uint8_t request[NETPOLL_FRAME_MIN])
{
    memset(mac, 0, 6);
    memset(request, 0, NETPOLL_FRAME_MIN);
    return netpoll_route(&us, dst, now, mac, request);
}

/* A one-byte datagram from the peer's address and port with Ethernet source mac, judged. */
static enum netpoll_verdict datagram_from(const uint8_t *mac)
{
    struct netpoll sender;
    netpoll_init(&sender, mac, PEER_IP, PEER_PORT);
    assert_true(netpoll_send_udp(&sender, our_mac, OUR_IP, OUR_PORT, (const uint8_t *)"x", 1, frame, keep, 0));
    return receive_at(frame, frame_len, 0);
}

static void test_unknown_neighbour_is_asked_for_and_the_answer_to_our_request_is_learned(void **state)
{
    (void)state;
    uint8_t mac[6], req[NETPOLL_FRAME_MIN], f[60];
    assert_int_equal(route_at(PEER_IP, 1000, mac, req), NETPOLL_ROUTE_ASK);
    /* a broadcast who-has PEER_IP from our MAC and address */
    static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
    assert_memory_equal(req, bcast, 6);
    assert_memory_equal(req + 6, our_mac, 6);
    assert_int_equal(req[12], 0x08);
    assert_int_equal(req[13], 0x06);
    assert_int_equal(req[14 + 7], 1);
    assert_memory_equal(req + 14 + 8, our_mac, 6);
    static const uint8_t our_ip_bytes[4] = { 10, 0, 2, 15 }, peer_ip_bytes[4] = { 10, 0, 2, 2 };
    assert_memory_equal(req + 14 + 14, our_ip_bytes, 4);
    assert_memory_equal(req + 14 + 24, peer_ip_bytes, 4);
    assert_int_equal(us.counts.arp_requests, 1);
    /* asked again only after the retry interval */
    assert_int_equal(route_at(PEER_IP, 1000 + NETPOLL_ARP_RETRY_NS / 2, mac, req), NETPOLL_ROUTE_WAIT);
    assert_int_equal(us.counts.arp_requests, 1);
    /* netpoll_wants_arp hands the answer to the debugger; the answer teaches the neighbour */
    arp_to_us(f, 2, peer_mac, PEER_IP);
    assert_true(netpoll_wants_arp(&us, f, 60));
    assert_int_equal(receive_at(f, 60, 2000), NETPOLL_IGNORE);
    assert_int_equal(us.counts.neighbours, 1);
    assert_false(netpoll_wants_arp(&us, f, 60)); /* answered: a second reply is not wanted */
    assert_int_equal(route_at(PEER_IP, 3000, mac, req), NETPOLL_ROUTE_KNOWN);
    assert_memory_equal(mac, peer_mac, 6);
    /* a forged second answer changes nothing */
    arp_to_us(f, 2, forger_mac, PEER_IP);
    assert_int_equal(receive_at(f, 60, 4000), NETPOLL_IGNORE);
    assert_int_equal(route_at(PEER_IP, 5000, mac, req), NETPOLL_ROUTE_KNOWN);
    assert_memory_equal(mac, peer_mac, 6);
    assert_int_equal(us.counts.neighbours, 1);
    /* past half its life an entry is still used, and asked about again (once per retry interval); the answer
     * renews it */
    int64_t half = 2000 + NETPOLL_NEIGHBOUR_NS / 2;
    assert_int_equal(route_at(PEER_IP, half, mac, req), NETPOLL_ROUTE_REFRESH);
    assert_memory_equal(mac, peer_mac, 6);
    assert_memory_equal(req + 14 + 24, peer_ip_bytes, 4);
    assert_int_equal(route_at(PEER_IP, half + 1, mac, req), NETPOLL_ROUTE_KNOWN);
    assert_int_equal(us.counts.arp_requests, 2);
    arp_to_us(f, 2, peer_mac, PEER_IP);
    receive_at(f, 60, half + 2);
    assert_int_equal(us.counts.neighbours, 2);
    assert_int_equal(route_at(PEER_IP, 2000 + NETPOLL_NEIGHBOUR_NS + 1, mac, req), NETPOLL_ROUTE_KNOWN);
    /* unanswered, entries expire and are asked for afresh */
    assert_int_equal(route_at(PEER_IP, half + 2 + NETPOLL_NEIGHBOUR_NS / 2, mac, req), NETPOLL_ROUTE_REFRESH);
    assert_int_equal(route_at(PEER_IP, half + 3 + NETPOLL_NEIGHBOUR_NS, mac, req), NETPOLL_ROUTE_ASK);
    assert_int_equal(us.counts.arp_requests, 4);
}

static void test_unasked_arp_replies_requests_and_datagrams_do_not_steer_replies(void **state)
{
    (void)state;
    uint8_t mac[6], req[NETPOLL_FRAME_MIN], f[60];
    /* an unsolicited (gratuitous) reply and a request from the peer's address, and a datagram from its MAC */
    arp_to_us(f, 2, forger_mac, PEER_IP);
    assert_false(netpoll_wants_arp(&us, f, 60));
    assert_int_equal(receive_at(f, 60, 1000), NETPOLL_IGNORE);
    arp_to_us(f, 1, forger_mac, PEER_IP);
    receive_at(f, 60, 1000);
    assert_int_equal(datagram_from(forger_mac), NETPOLL_DATAGRAM);
    assert_int_equal(us.counts.neighbours, 0);
    assert_int_equal(route_at(PEER_IP, 2000, mac, req), NETPOLL_ROUTE_ASK); /* still unknown */
    /* an answer that comes too late after our request, or from a group MAC, is not taken either */
    arp_to_us(f, 2, forger_mac, PEER_IP);
    assert_int_equal(receive_at(f, 60, 2000 + NETPOLL_ARP_ANSWER_NS + 1), NETPOLL_IGNORE);
    static const uint8_t group_mac[6] = { 0x01, 0x00, 0x5e, 0x00, 0x00, 0x01 };
    assert_int_equal(route_at(PEER_IP, 3 * NETPOLL_ARP_ANSWER_NS, mac, req), NETPOLL_ROUTE_ASK);
    arp_to_us(f, 2, group_mac, PEER_IP);
    receive_at(f, 60, 3 * NETPOLL_ARP_ANSWER_NS + 1);
    assert_int_equal(us.counts.neighbours, 0);
    assert_int_equal(route_at(PEER_IP, 3 * NETPOLL_ARP_ANSWER_NS + 2, mac, req), NETPOLL_ROUTE_WAIT);
}

static void test_off_subnet_goes_to_the_gateway_mac(void **state)
{
    (void)state;
    uint8_t mac[6], req[NETPOLL_FRAME_MIN], f[60];
    us.netmask = 0xffffff00;
    assert_int_equal(route_at(FAR_IP, 1000, mac, req), NETPOLL_ROUTE_NONE); /* no gateway: nowhere */
    us.gateway = GATEWAY_IP;
    assert_int_equal(route_at(FAR_IP, 1000, mac, req), NETPOLL_ROUTE_ASK);
    static const uint8_t gw_ip_bytes[4] = { 10, 0, 2, 1 };
    assert_memory_equal(req + 14 + 24, gw_ip_bytes, 4); /* the gateway is asked for, not 8.8.8.8 */
    arp_to_us(f, 2, gateway_mac, GATEWAY_IP);
    receive_at(f, 60, 2000);
    assert_int_equal(route_at(FAR_IP, 3000, mac, req), NETPOLL_ROUTE_KNOWN);
    assert_memory_equal(mac, gateway_mac, 6);
    /* on the subnet: the address's own MAC, not the gateway's */
    assert_int_equal(route_at(PEER_IP, 3000, mac, req), NETPOLL_ROUTE_ASK);
    /* addresses nobody holds go nowhere */
    assert_int_equal(route_at(0x0a0002ff, 3000, mac, req), NETPOLL_ROUTE_NONE);
    assert_int_equal(route_at(0xe0000001, 3000, mac, req), NETPOLL_ROUTE_NONE);
    us.ip = 0;
    assert_int_equal(route_at(PEER_IP, 3000, mac, req), NETPOLL_ROUTE_NONE);
}

static void test_pending_questions_give_way_before_known_neighbours(void **state)
{
    (void)state;
    uint8_t mac[6], req[NETPOLL_FRAME_MIN], f[60];
    route_at(PEER_IP, 1000, mac, req);
    arp_to_us(f, 2, peer_mac, PEER_IP);
    receive_at(f, 60, 1001);
    /* forged senders nobody answers for, many more than the table holds */
    for (uint32_t i = 0; i < 4 * NETPOLL_NEIGHBOURS; i++)
        assert_int_equal(route_at(0x0a000210 + i, 2000 + i, mac, req), NETPOLL_ROUTE_ASK);
    assert_int_equal(route_at(PEER_IP, 3000, mac, req), NETPOLL_ROUTE_KNOWN);
    assert_memory_equal(mac, peer_mac, 6);
}

UNIT_MAIN_EACH(setup, NULL, NULL, NULL,
               test_unknown_neighbour_is_asked_for_and_the_answer_to_our_request_is_learned,
               test_unasked_arp_replies_requests_and_datagrams_do_not_steer_replies,
               test_off_subnet_goes_to_the_gateway_mac, test_pending_questions_give_way_before_known_neighbours)
