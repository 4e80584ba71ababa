/* tests/unit/test_nic_desc.c: what a network card writes back into its rings, judged before the driver uses
 * it (kernel/drivers/net/virtio_net_desc.c, kernel/drivers/net/e1000_desc.c): every good element is a frame of the
 * right length in the right slot, and every impossible id, length or status bit -- a chain we never posted, a
 * length past the slot or under an Ethernet header, a frame split over buffers, a card's error bit, a
 * descriptor not yet done -- is refused, whatever else the element says. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "kernel/drivers/net/e1000_desc.h"
#include "kernel/drivers/net/virtio_net_desc.h"
#include "kernel/net/netdev.h"
#include "unit_main.h"

#define SLOTS 32
#define SLOT 2048
#define HDR 12

/* ---- virtio-net -------------------------------------------------------------------------------------------- */

static void test_virtio_rx_good_frames_name_their_slot_and_length(void **state)
{
    (void)state;
    for (unsigned slot = 0; slot < SLOTS; slot++) {
        unsigned got_slot = 99;
        size_t len = 0;
        assert_int_equal(virtio_net_rx_judge(2 * slot, HDR + 60, SLOTS, HDR, SLOT, &got_slot, &len),
                         VIRTIO_RX_FRAME);
        assert_int_equal(got_slot, slot);
        assert_int_equal(len, 60);
    }
    unsigned s;
    size_t len;
    /* the extremes: an Ethernet header alone, and a slot filled to its last byte */
    assert_int_equal(virtio_net_rx_judge(0, HDR + NETDEV_FRAME_MIN, SLOTS, HDR, SLOT, &s, &len), VIRTIO_RX_FRAME);
    assert_int_equal(len, NETDEV_FRAME_MIN);
    assert_int_equal(virtio_net_rx_judge(0, SLOT, SLOTS, HDR, SLOT, &s, &len), VIRTIO_RX_FRAME);
    assert_int_equal(len, SLOT - HDR);
}

static void test_virtio_rx_ids_we_never_posted_are_bad_ids(void **state)
{
    (void)state;
    const uint32_t ids[] = { 1, 3, 2 * SLOTS - 1, 2 * SLOTS, 2 * SLOTS + 2, 0xFFFF, 0x10000, 0xFFFFFFFEu,
                             0xFFFFFFFFu };
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
        unsigned s = 77;
        size_t len = 77;
        assert_int_equal(virtio_net_rx_judge(ids[i], HDR + 60, SLOTS, HDR, SLOT, &s, &len), VIRTIO_RX_BAD_ID);
        assert_int_equal(s, 77); /* nothing to give back */
        assert_int_equal(len, 77);
    }
    /* with no slots at all, nothing is ours */
    unsigned s;
    size_t len;
    assert_int_equal(virtio_net_rx_judge(0, HDR + 60, 0, HDR, SLOT, &s, &len), VIRTIO_RX_BAD_ID);
}

static void test_virtio_rx_impossible_lengths_give_the_slot_back(void **state)
{
    (void)state;
    const uint32_t lens[] = { 0, 1, HDR - 1, HDR, HDR + NETDEV_FRAME_MIN - 1, SLOT + 1, 65536, 0xFFFFFFFFu };
    for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
        unsigned s = 77;
        size_t len = 77;
        assert_int_equal(virtio_net_rx_judge(6, lens[i], SLOTS, HDR, SLOT, &s, &len), VIRTIO_RX_BAD_LEN);
        assert_int_equal(s, 3); /* the slot goes back to the card */
        assert_int_equal(len, 77);
    }
}

static void test_virtio_tx_completions_must_be_chains_in_flight(void **state)
{
    (void)state;
    bool in_flight[SLOTS] = { false };
    in_flight[5] = true;
    unsigned s = 0;
    assert_true(virtio_net_tx_judge(10, SLOTS, in_flight, &s));
    assert_int_equal(s, 5);
    s = 77;
    assert_false(virtio_net_tx_judge(12, SLOTS, in_flight, &s)); /* a slot not with the card */
    assert_false(virtio_net_tx_judge(11, SLOTS, in_flight, &s)); /* not a chain head */
    assert_false(virtio_net_tx_judge(2 * SLOTS, SLOTS, in_flight, &s));
    assert_false(virtio_net_tx_judge(0xFFFFFFFEu, SLOTS, in_flight, &s));
    assert_int_equal(s, 77);
}

/* ---- e1000 ------------------------------------------------------------------------------------------------- */

static struct e1000_rx_desc rx(uint16_t length, uint8_t status, uint8_t errors)
{
    struct e1000_rx_desc d;
    memset(&d, 0xA5, sizeof d);
    d.length = length;
    d.status = status;
    d.errors = errors;
    return d;
}

#define DONE (E1000_RXD_STAT_DD | E1000_RXD_STAT_EOP)

static void test_e1000_rx_whole_frames(void **state)
{
    (void)state;
    const uint16_t lens[] = { NETDEV_FRAME_MIN, 60, 64, 1514, NETDEV_FRAME_MAX };
    for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++) {
        struct e1000_rx_desc d = rx(lens[i], DONE, 0);
        size_t len = 0;
        assert_int_equal(e1000_rx_judge(&d, SLOT, &len), E1000_RX_FRAME);
        assert_int_equal(len, lens[i]);
    }
    /* the checksum-offload bits are not errors (RXCSUM is off: they mean nothing) and other status bits are
     * the card's business */
    struct e1000_rx_desc d = rx(100, DONE | 0xFC, 0x60);
    size_t len = 0;
    assert_int_equal(e1000_rx_judge(&d, SLOT, &len), E1000_RX_FRAME);
    assert_int_equal(len, 100);
}

static void test_e1000_rx_not_done_is_still_the_cards(void **state)
{
    (void)state;
    /* without DD nothing else counts: not even an error bit or a wild length */
    const uint8_t statuses[] = { 0, E1000_RXD_STAT_EOP, 0xFE };
    for (size_t i = 0; i < sizeof statuses; i++) {
        struct e1000_rx_desc d = rx(0xFFFF, statuses[i], 0xFF);
        size_t len = 77;
        assert_int_equal(e1000_rx_judge(&d, SLOT, &len), E1000_RX_NOT_DONE);
        assert_int_equal(len, 77);
    }
}

static void test_e1000_rx_damaged_split_or_impossible_is_bad(void **state)
{
    (void)state;
    struct { uint16_t length; uint8_t status, errors; } cases[] = {
        { 100, E1000_RXD_STAT_DD, 0 },      /* no EOP: a frame split over buffers */
        { 100, DONE, 0x01 },                /* CRC error */
        { 100, DONE, 0x02 },                /* symbol error */
        { 100, DONE, 0x04 },                /* sequence error */
        { 100, DONE, 0x10 },                /* carrier extension error */
        { 100, DONE, 0x80 },                /* RX data error */
        { 0, DONE, 0 },
        { NETDEV_FRAME_MIN - 1, DONE, 0 },
        { NETDEV_FRAME_MAX + 1, DONE, 0 },
        { SLOT, DONE, 0 },
        { 0xFFFF, DONE, 0 },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct e1000_rx_desc d = rx(cases[i].length, cases[i].status, cases[i].errors);
        size_t len = 77;
        assert_int_equal(e1000_rx_judge(&d, SLOT, &len), E1000_RX_BAD);
        assert_int_equal(len, 77);
    }
    /* a length that would fit a frame but not this buffer */
    struct e1000_rx_desc d = rx(1000, DONE, 0);
    size_t len = 77;
    assert_int_equal(e1000_rx_judge(&d, 512, &len), E1000_RX_BAD);
}

static void test_e1000_tx_done_is_the_dd_bit(void **state)
{
    (void)state;
    struct e1000_tx_desc d;
    memset(&d, 0, sizeof d);
    assert_false(e1000_tx_done(&d));
    d.status = 0xFE;
    assert_false(e1000_tx_done(&d));
    d.status = E1000_TXD_STAT_DD;
    assert_true(e1000_tx_done(&d));
}

UNIT_MAIN(NULL, NULL,
          test_virtio_rx_good_frames_name_their_slot_and_length, test_virtio_rx_ids_we_never_posted_are_bad_ids,
          test_virtio_rx_impossible_lengths_give_the_slot_back, test_virtio_tx_completions_must_be_chains_in_flight,
          test_e1000_rx_whole_frames, test_e1000_rx_not_done_is_still_the_cards,
          test_e1000_rx_damaged_split_or_impossible_is_bad, test_e1000_tx_done_is_the_dd_bit)
