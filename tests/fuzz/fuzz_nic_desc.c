/* tests/fuzz/fuzz_nic_desc.c: what a network card writes back into its rings, as arbitrary bytes
 * (kernel/drivers/net/virtio_net_desc.c, kernel/drivers/net/e1000_desc.c). The input is a run of 16-byte records, each
 * read two ways: as a virtio used element (id, len) with a slot count and header length the record also picks,
 * and as an e1000 legacy receive and transmit descriptor. Whatever the bytes, a frame is only ever accepted
 * when its slot is one the driver posted and its length fits that slot and is at least an Ethernet header, and
 * every verdict matches a model written from the descriptor formats. */
#include <stdbool.h>
#include <string.h>

#include "fuzz.h"
#include "kernel/drivers/net/e1000_desc.h"
#include "kernel/drivers/net/virtio_net_desc.h"
#include "kernel/net/netdev.h"

#define SLOT_SIZE 2048

static uint32_t le32(const uint8_t *p)
{
    return p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void check_virtio(const uint8_t *r)
{
    uint32_t id = le32(r), len = le32(r + 4);
    unsigned slots = r[8] % 129;                 /* 0..128: a ring of any size up to twice the driver's */
    size_t hdr = (r[9] & 1) ? 12 : 10;
    unsigned slot = 0xDEAD;
    size_t frame = 0xDEAD;
    enum virtio_rx_verdict v = virtio_net_rx_judge(id, len, slots, hdr, SLOT_SIZE, &slot, &frame);
    bool ours = !(id & 1) && id / 2 < slots;
    if (!ours) {
        CHECK(v == VIRTIO_RX_BAD_ID);
        CHECK(slot == 0xDEAD && frame == 0xDEAD);
    } else {
        CHECK(slot == id / 2 && slot < slots);
        bool fits = len >= hdr + NETDEV_FRAME_MIN && len <= SLOT_SIZE;
        CHECK(v == (fits ? VIRTIO_RX_FRAME : VIRTIO_RX_BAD_LEN));
        if (v == VIRTIO_RX_FRAME)
            CHECK(frame == len - hdr && frame >= NETDEV_FRAME_MIN && hdr + frame <= SLOT_SIZE);
        else
            CHECK(frame == 0xDEAD);
    }

    bool in_flight[128];
    for (unsigned i = 0; i < 128; i++)
        in_flight[i] = (r[10 + i % 6] >> (i / 6 % 8)) & 1;
    unsigned tx_slot = 0xDEAD;
    bool ok = virtio_net_tx_judge(id, slots, in_flight, &tx_slot);
    CHECK(ok == (ours && in_flight[id / 2]));
    CHECK(ok ? tx_slot == id / 2 : tx_slot == 0xDEAD);
}

static void check_e1000(const uint8_t *r, size_t buffer)
{
    struct e1000_rx_desc d;
    memcpy(&d, r, sizeof d);
    size_t frame = 0xDEAD;
    enum e1000_rx_verdict v = e1000_rx_judge(&d, buffer, &frame);
    if (!(d.status & E1000_RXD_STAT_DD)) {
        CHECK(v == E1000_RX_NOT_DONE && frame == 0xDEAD);
    } else {
        bool whole = (d.status & E1000_RXD_STAT_EOP) && !(d.errors & E1000_RXD_ERR_FRAME);
        bool fits = d.length >= NETDEV_FRAME_MIN && d.length <= buffer && d.length <= NETDEV_FRAME_MAX;
        CHECK(v == (whole && fits ? E1000_RX_FRAME : E1000_RX_BAD));
        CHECK(v == E1000_RX_FRAME ? frame == d.length : frame == 0xDEAD);
    }
    struct e1000_tx_desc t;
    memcpy(&t, r, sizeof t);
    CHECK(e1000_tx_done(&t) == (bool)(t.status & E1000_TXD_STAT_DD));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* the last byte, when there is one past the records, picks the e1000 buffer size (0..4080 in steps of 16) */
    size_t buffer = size % 16 ? (size_t)data[size - 1] * 16 : SLOT_SIZE;
    for (size_t off = 0; off + 16 <= size; off += 16) {
        check_virtio(data + off);
        check_e1000(data + off, buffer);
    }
    return 0;
}
