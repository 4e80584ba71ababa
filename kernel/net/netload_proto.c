/* kernel/net/netload_proto.c: netload's datagram codec and receiver accounting (kernel/net/netload_proto.h).
 * Pure: the `netload` command moves the datagrams, this file only writes, reads and counts them. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel/net/netload_proto.h"
#include "kernel/lib/sink.h"
#include "kernel/lib/string.h"

#define NS_PER_S 1000000000ull

static void put_be32(unsigned char *p, uint32_t v)
{
    for (int i = 3; i >= 0; i--) {
        p[i] = (unsigned char)v;
        v >>= 8;
    }
}

static void put_be64(unsigned char *p, uint64_t v)
{
    for (int i = 7; i >= 0; i--) {
        p[i] = (unsigned char)v;
        v >>= 8;
    }
}

static uint32_t get_be32(const unsigned char *p)
{
    uint32_t v = 0;
    for (int i = 0; i < 4; i++)
        v = v << 8 | p[i];
    return v;
}

static uint64_t get_be64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = v << 8 | p[i];
    return v;
}

size_t netload_encode(void *buf, size_t cap, uint64_t seq, uint64_t send_ns, uint32_t size)
{
    if (size < NETLOAD_HEADER_SIZE || size > cap)
        return 0;
    unsigned char *p = buf;
    memcpy(p, NETLOAD_MAGIC, 4);
    put_be32(p + 4, NETLOAD_VERSION);
    put_be64(p + 8, seq);
    put_be64(p + 16, send_ns);
    put_be32(p + 24, size);
    for (uint32_t i = NETLOAD_HEADER_SIZE; i < size; i++)
        p[i] = (unsigned char)i;
    return size;
}

void netload_stamp(void *buf, uint64_t seq, uint64_t send_ns)
{
    unsigned char *p = buf;
    put_be64(p + 8, seq);
    put_be64(p + 16, send_ns);
}

enum netload_decode_result netload_decode(const void *buf, size_t len, struct netload_header *out)
{
    const unsigned char *p = buf;
    if (len < NETLOAD_HEADER_SIZE)
        return NETLOAD_SHORT;
    if (memcmp(p, NETLOAD_MAGIC, 4) != 0)
        return NETLOAD_BAD_MAGIC;
    if (get_be32(p + 4) != NETLOAD_VERSION)
        return NETLOAD_BAD_VERSION;
    uint32_t size = get_be32(p + 24);
    if (size != len)
        return NETLOAD_BAD_SIZE;
    out->seq = get_be64(p + 8);
    out->send_ns = get_be64(p + 16);
    out->size = size;
    return NETLOAD_OK;
}

void netload_rx_init(struct netload_rx_stats *s)
{
    memset(s, 0, sizeof *s);
    s->highest = UINT64_MAX;
}

static bool seen_test(const struct netload_rx_stats *s, uint64_t seq)
{
    unsigned bit = (unsigned)(seq % NETLOAD_WINDOW);
    return (s->seen[bit / 64] >> (bit % 64)) & 1;
}

static void seen_set(struct netload_rx_stats *s, uint64_t seq, bool value)
{
    unsigned bit = (unsigned)(seq % NETLOAD_WINDOW);
    uint64_t mask = 1ull << (bit % 64);
    if (value)
        s->seen[bit / 64] |= mask;
    else
        s->seen[bit / 64] &= ~mask;
}

void netload_rx_account(struct netload_rx_stats *s, uint64_t seq, size_t len)
{
    s->packets++;
    s->bytes += len;
    uint64_t ahead = seq - s->highest;
    if (ahead != 0 && ahead < (1ull << 63)) {
        uint64_t skipped = ahead - 1;
        s->lost += skipped;
        /* The skipped numbers take over the window slots of numbers now too old to remember. */
        if (skipped >= NETLOAD_WINDOW)
            memset(s->seen, 0, sizeof s->seen);
        else
            for (uint64_t n = s->highest + 1; n != seq; n++)
                seen_set(s, n, false);
        seen_set(s, seq, true);
        s->highest = seq;
        return;
    }
    uint64_t behind = s->highest - seq;
    if (behind < NETLOAD_WINDOW && seen_test(s, seq)) {
        s->duplicates++;
        return;
    }
    s->out_of_order++;
    if (behind >= NETLOAD_WINDOW) {
        s->late++;
        return;
    }
    seen_set(s, seq, true);
    /* Below the highest and not seen: it was counted lost when the highest passed it. */
    if (s->lost > 0)
        s->lost--;
}

void netload_rx_invalid(struct netload_rx_stats *s)
{
    s->invalid++;
}

uint64_t netload_per_second(uint64_t count, int64_t elapsed_ns)
{
    if (elapsed_ns <= 0)
        return 0;
    uint64_t ns = (uint64_t)elapsed_ns;
    if (count <= UINT64_MAX / NS_PER_S)
        return count * NS_PER_S / ns;
    uint64_t ms = ns / 1000000;
    if (ms == 0)
        ms = 1;
    uint64_t per_ms = count / ms;
    return per_ms > UINT64_MAX / 1000 ? UINT64_MAX : per_ms * 1000;
}

void netload_report_rx(struct sink *out, const struct netload_rx_stats *s, int64_t elapsed_ns)
{
    sink_printf(out, "packets %llu (%llu/s), bytes %llu (%llu/s), lost %llu, out of order %llu, duplicates %llu, "
                     "invalid %llu\n",
                (unsigned long long)s->packets, (unsigned long long)netload_per_second(s->packets, elapsed_ns),
                (unsigned long long)s->bytes, (unsigned long long)netload_per_second(s->bytes, elapsed_ns),
                (unsigned long long)s->lost, (unsigned long long)s->out_of_order,
                (unsigned long long)s->duplicates, (unsigned long long)s->invalid);
}

void netload_report_tx(struct sink *out, uint64_t packets, uint64_t bytes, int64_t elapsed_ns)
{
    sink_printf(out, "sent packets %llu (%llu/s), bytes %llu (%llu/s)\n", (unsigned long long)packets,
                (unsigned long long)netload_per_second(packets, elapsed_ns), (unsigned long long)bytes,
                (unsigned long long)netload_per_second(bytes, elapsed_ns));
}
