/* tests/fuzz/fuzz_netload_proto.c: netload's datagram codec and receiver accounting
 * (kernel/net/netload_proto.c). Arbitrary bytes as a datagram: decoded only when the header is what
 * netload_encode writes for the fields it reports, refused with the reason the format names otherwise. The
 * same bytes as a stream of sequence numbers, from a start the input picks (so 64-bit wrap-around is
 * crossed): the counters match a model that remembers every number exactly. And the per-second rate
 * against 128-bit arithmetic. */
#include <stdbool.h>
#include <string.h>

#include "fuzz.h"
#include "kernel/net/netload_proto.h"
#include "kernel/lib/sink.h"

static void check_decode(const uint8_t *data, size_t size)
{
    struct netload_header h;
    enum netload_decode_result r = netload_decode(data, size, &h);
    enum netload_decode_result want = NETLOAD_OK;
    if (size < NETLOAD_HEADER_SIZE)
        want = NETLOAD_SHORT;
    else if (memcmp(data, "KPNL", 4) != 0)
        want = NETLOAD_BAD_MAGIC;
    else if (memcmp(data + 4, "\0\0\0\1", 4) != 0)
        want = NETLOAD_BAD_VERSION;
    else if (((uint32_t)data[24] << 24 | (uint32_t)data[25] << 16 | (uint32_t)data[26] << 8 | data[27]) != size)
        want = NETLOAD_BAD_SIZE;
    CHECK(r == want);
    if (r != NETLOAD_OK)
        return;
    CHECK(h.size == size);
    static uint8_t again[1 << 16];
    if (size > sizeof again)
        return;
    CHECK(netload_encode(again, sizeof again, h.seq, h.send_ns, h.size) == size);
    CHECK(memcmp(again, data, NETLOAD_HEADER_SIZE) == 0);
    for (size_t i = NETLOAD_HEADER_SIZE; i < size; i++)
        CHECK(again[i] == (uint8_t)i);
    /* Stamping new numbers and decoding gives them back. */
    netload_stamp(again, h.seq + 1, ~h.send_ns);
    struct netload_header h2;
    CHECK(netload_decode(again, size, &h2) == NETLOAD_OK && h2.seq == h.seq + 1 && h2.send_ns == ~h.send_ns);
}

/* The model's sequence numbers are offsets from the run's start: 0 .. 2^16 - 1. */
#define SPAN (1u << 16)

static void check_accounting(const uint8_t *data, size_t size)
{
    static struct netload_rx_stats s;
    static bool seen[SPAN];
    if (size < 8)
        return;
    uint64_t start;
    memcpy(&start, data, 8);
    data += 8;
    size -= 8;
    netload_rx_init(&s);
    s.highest = start - 1; /* as if the run's first number were start (netload_rx_init: 0 - 1 for 0) */
    memset(seen, 0, sizeof seen);
    int64_t highest = -1;
    uint64_t packets = 0, bytes = 0, lost = 0, out_of_order = 0, duplicates = 0, late = 0;

    for (size_t i = 0; i + 2 <= size; i += 2) {
        uint32_t offset = (uint32_t)data[i] << 8 | data[i + 1];
        size_t len = NETLOAD_HEADER_SIZE + data[i] % 64;
        netload_rx_account(&s, start + offset, len);
        packets++;
        bytes += len;
        if ((int64_t)offset > highest) {
            lost += (uint64_t)((int64_t)offset - highest - 1);
            highest = offset;
            seen[offset] = true;
        } else if ((uint64_t)(highest - offset) < NETLOAD_WINDOW && seen[offset]) {
            duplicates++;
        } else {
            out_of_order++;
            if ((uint64_t)(highest - offset) >= NETLOAD_WINDOW) {
                late++;
            } else {
                seen[offset] = true;
                if (lost > 0)
                    lost--;
            }
        }
        CHECK(s.packets == packets && s.bytes == bytes && s.lost == lost && s.out_of_order == out_of_order);
        CHECK(s.duplicates == duplicates && s.late == late && s.highest == start + (uint64_t)highest);
    }

    char line[512];
    struct buffer_sink bs;
    buffer_sink_init(&bs, line, sizeof line);
    netload_report_rx(&bs.sink, &s, (int64_t)(start >> 1));
    CHECK(bs.truncated == 0 && strchr(line, '\n') == line + strlen(line) - 1);
}

static void check_rate(const uint8_t *data, size_t size)
{
    if (size < 16)
        return;
    uint64_t count;
    int64_t ns;
    memcpy(&count, data, 8);
    memcpy(&ns, data + 8, 8);
    uint64_t got = netload_per_second(count, ns);
    if (ns <= 0) {
        CHECK(got == 0);
        return;
    }
    unsigned __int128 exact = (unsigned __int128)count * 1000000000u / (uint64_t)ns;
    if (count <= UINT64_MAX / 1000000000u)
        CHECK(got == (uint64_t)exact);
    else {
        /* Beyond that, the time is taken in whole milliseconds (at least one). */
        uint64_t ms = (uint64_t)ns / 1000000 ? (uint64_t)ns / 1000000 : 1;
        unsigned __int128 coarse = (unsigned __int128)(count / ms) * 1000;
        CHECK(got == (coarse > UINT64_MAX ? UINT64_MAX : (uint64_t)coarse));
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    check_decode(data, size);
    check_accounting(data, size);
    check_rate(data, size);
    return 0;
}
