/* tests/unit/gdb_udp_fake_card.c: the fake machine of the gdb UDP transport's host tests
 * (tests/unit/gdb_udp_fake_card.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "gdbstub/udp.h"
#include "kernel/net/netpoll.h"
#include "tests/unit/fake_neighbour.h"
#include "tests/unit/gdb_udp_fake_card.h"
#include "tests/unit/gdb_udp_seam.h"

const uint8_t our_mac[6] = { 0x52, 0x54, 0x00, 0x12, 0x34, 0x56 };
const uint8_t gdb_mac[6] = { 0x52, 0x55, 0x0a, 0x00, 0x02, 0x02 };

/* ---- the fake card ---- */

struct frames to_card, from_card; /* frames waiting for poll; frames transmitted */
int64_t clock_ns;
bool card_busy;
int64_t rx_busy_until; /* poll says NETDEV_POLL_BUSY until then (someone stopped inside it) */
bool neighbour_silent;  /* gdb's machine does not answer ARP */

static bool push(struct frames *q, const uint8_t *frame, size_t len)
{
    assert_true(frames_push(q, frame, len));
    return true;
}

static bool fake_transmit(const uint8_t *frame, size_t len)
{
    if (card_busy)
        return false;
    if (!neighbour_silent && fake_neighbour_answers(frame, len, gdb_mac, gdb_udp_frame))
        return true; /* gdb's machine knows its address at once */
    return push(&from_card, frame, len);
}

static int fake_poll(int budget)
{
    if (clock_ns < rx_busy_until)
        return -1;
    return frames_poll(&to_card, budget);
}

static bool fake_permits(uint32_t ip) { return ip != BANNED_IP; }
int rx_interrupt_off; /* sessions the card's receive interrupt is off for */
static void fake_session(bool begin) { rx_interrupt_off += begin ? 1 : -1; }
static int64_t fake_now(void) { return clock_ns += 1000; }
static void fake_relax(void) { clock_ns += 1000000; }

const struct gdb_udp_port fake_port = {
    .transmit = fake_transmit, .poll = fake_poll, .permits = fake_permits, .now_ns = fake_now, .relax = fake_relax,
    .session = fake_session,
};

/* ---- gdb's side ---- */

struct netpoll gdb_side;
static uint8_t scratch[NETPOLL_FRAME_MAX];

static bool to_card_emit(void *arg, const uint8_t *frame, size_t len)
{
    (void)arg;
    return push(&to_card, frame, len);
}

/* A datagram from ip:port to the stub's port, queued on the card. */
void gdb_sends_from(uint32_t ip, uint16_t port, const char *bytes, size_t len)
{
    struct netpoll np;
    netpoll_init(&np, gdb_mac, ip, port);
    np.next_id = gdb_side.next_id++;
    assert_true(netpoll_send_udp(&np, our_mac, OUR_IP, GDB_PORT, (const uint8_t *)bytes, len, scratch,
                                 to_card_emit, 0));
}

void gdb_sends(const char *text)
{
    gdb_sends_from(GDB_IP, 40000, text, strlen(text));
}

/* The next datagram the stub sent, as gdb receives it; NULL when there is none. */
char got[GDB_UDP_INNER_MAX + 1];
size_t got_len;
const char *next_reply(void)
{
    while (from_card.next < from_card.count) {
        size_t i = from_card.next++;
        struct netpoll_datagram dg;
        uint8_t reply[NETPOLL_FRAME_MIN];
        size_t rl;
        if (netpoll_receive(&gdb_side, from_card.bytes[i], from_card.len[i], 0, &dg, reply, &rl) ==
            NETPOLL_DATAGRAM) {
            memcpy(got, dg.data, dg.len);
            got[dg.len] = 0;
            got_len = dg.len;
            return got;
        }
    }
    return NULL;
}

/* Everything the stub's getc gives now (polling the card once dry), as a string. */
static char read_buf[GDB_UDP_RX_RING + 1];
const char *read_all(void)
{
    size_t n = 0;
    int c;
    while ((c = gdb_udp_transport.getc(0, 0)) >= 0)
        read_buf[n++] = (char)c;
    read_buf[n] = 0;
    return read_buf;
}

void stub_writes(const char *text)
{
    for (const char *p = text; *p; p++)
        gdb_udp_transport.putc(0, *p);
    gdb_udp_transport.flush(0);
}

void fake_card_start(const uint8_t secret[SHA256_DIGEST_SIZE], const uint8_t *key, size_t key_len, bool insecure)
{
    memset(&to_card, 0, sizeof to_card);
    memset(&from_card, 0, sizeof from_card);
    clock_ns = 1000000000;
    card_busy = false;
    rx_busy_until = 0;
    rx_interrupt_off = 0;
    neighbour_silent = false;
    gdb_udp_seam_key(secret, key, key_len);
    if (insecure)
        gdb_udp_seam_insecure();
    gdb_udp_init(&fake_port, our_mac, GDB_PORT);
    gdb_udp_set_address(OUR_IP);
    netpoll_init(&gdb_side, gdb_mac, GDB_IP, 40000);
    gdb_side.admit = fake_admit_any;
}

int setup(void **state)
{
    (void)state;
    static const uint8_t zero[SHA256_DIGEST_SIZE];
    fake_card_start(zero, NULL, 0, true); /* gdb's raw bytes: what most tests drive the transport with */
    return 0;
}

/* The network task's view while the machine runs: frames handed over, then the stop they asked for. */
enum gdb_udp_stop running_delivers(void)
{
    return frames_hand_over(&to_card);
}

void begin(void) { gdb_udp_transport.session(0, true, false); }
void end(bool gone) { gdb_udp_transport.session(0, false, gone); }

enum gdb_udp_stop running_delivers_from(uint32_t ip, const char *text)
{
    gdb_sends_from(ip, 40000, text, strlen(text));
    return running_delivers();
}

struct gdb_udp_counts udp_counts(void)
{
    struct gdb_udp_counts c;
    struct netpoll_counts f;
    gdb_udp_get_counts(&c, &f);
    return c;
}

uint32_t peer_ip(uint16_t *port)
{
    uint32_t ip;
    uint16_t p;
    if (!gdb_udp_peer(&ip, &p))
        return 0;
    assert_int_not_equal(ip, 0); /* 0 stands for nobody: no test's peer may have it */
    if (port != NULL)
        *port = p;
    return ip;
}

void drain_replies(void)
{
    while (next_reply() != NULL)
        ;
}

void gdb_sends_and_stub_reads(const char *text)
{
    gdb_sends(text);
    assert_string_equal(read_all(), text);
}

/* gdb opens (`?`) and the machine stops for it: a session, the opener read. */
void attach(void)
{
    gdb_sends("$?#3f");
    running_delivers();
    begin();
    read_all();
}

/* attach, and the stub answers the opener; gdb's ack of that answer waits on the card. */
void attach_and_answer(void)
{
    attach();
    stub_writes("+");
    stub_writes("$S05#b8");
    gdb_sends("+");
}
