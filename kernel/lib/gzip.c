/* kernel/lib/gzip.c: gzip_compress and crc32_update (kernel/lib/gzip.h). Three layers, bottom up: the CRC-32 of
 * the trailer; LZ77 over the whole input in memory, matches found through hash chains over 3-byte prefixes
 * within a 32 KiB window (one byte of lazy lookahead, as zlib's middle levels do), its literals and matches
 * handed to the block coder (kernel/lib/deflate_blocks.c), which codes each block as Huffman or stored bytes;
 * and the gzip member around the blocks. Everything lives in the caller's work area; the stack holds a few
 * scalars. Task context only: it is long-running and takes no locks. */
#include "kernel/lib/gzip.h"

#include <stdatomic.h>
#include <stdbool.h>

#include "kernel/lib/deflate_blocks.h"
#include "kernel/lib/string.h"

#define WSIZE 32768u /* DEFLATE's largest distance */
#define WMASK (WSIZE - 1u)
#define HASH_BITS 15u
#define MAX_CHAIN 64u   /* candidates tried per position: bounds the time a pathological input costs */
#define NICE_MATCH 128u /* a match this long ends the search: longer ones rarely pay for the time */
#define LAZY_MATCH 16u  /* a match this long is taken without looking whether the next byte starts a longer */

/* ---- CRC-32 ---------------------------------------------------------------------------------------------- */

/* The table is built by the first caller. Two CPUs may call at once: the one that wins the exchange builds it,
 * and the other goes bit by bit meanwhile instead of waiting, so there is neither a lock nor a racing write. */
static uint32_t crc_table[256];
static atomic_int crc_table_state; /* 0 not built, 1 being built, 2 ready */

static uint32_t crc_shift8(uint32_t c)
{
    for (int k = 0; k < 8; k++)
        c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
    return c;
}

static bool crc_table_ready(void)
{
    int state = atomic_load_explicit(&crc_table_state, memory_order_acquire);
    if (state == 2)
        return true;
    int expected = 0;
    if (state != 0 || !atomic_compare_exchange_strong_explicit(&crc_table_state, &expected, 1,
                                                               memory_order_acquire, memory_order_acquire))
        return false;
    for (uint32_t i = 0; i < 256; i++)
        crc_table[i] = crc_shift8(i);
    atomic_store_explicit(&crc_table_state, 2, memory_order_release);
    return true;
}

uint32_t crc32_update(uint32_t crc, const void *data, size_t len)
{
    const uint8_t *p = data;
    uint32_t c = ~crc;
    if (crc_table_ready()) {
        for (size_t i = 0; i < len; i++)
            c = crc_table[(c ^ p[i]) & 0xffu] ^ (c >> 8);
    } else {
        for (size_t i = 0; i < len; i++)
            c = crc_shift8(c ^ p[i]);
    }
    return ~c;
}

/* ---- the work area ---------------------------------------------------------------------------------------- */

struct gz {
    /* head[h]: the last position whose 3 bytes hash to h, plus 1 (0: none), modulo 2^32. prev[p % WSIZE]: the
     * distance from p back to the previous position with p's hash (0: none within the window). A stale entry
     * (an input over 4 GiB wrapping the positions) only costs a candidate: every match is compared byte by
     * byte before it is used. */
    uint32_t head[1u << HASH_BITS];
    uint16_t prev[WSIZE];
    const uint8_t *in;
    size_t len;
    struct block_coder block;
};

_Static_assert(sizeof(struct gz) + _Alignof(struct gz) <= GZIP_WORK_BYTES, "GZIP_WORK_BYTES is too small");

/* ---- LZ77 ------------------------------------------------------------------------------------------------- */

static uint32_t hash3(const uint8_t *p)
{
    uint32_t v = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16;
    return (v * 0x9E3779B1u) >> (32 - HASH_BITS);
}

/* Enters pos, which has 3 bytes of input from it, at the front of its hash chain. */
static void insert(struct gz *g, size_t pos)
{
    uint32_t h = hash3(g->in + pos), tag = (uint32_t)pos + 1, d = tag - g->head[h];
    g->prev[pos & WMASK] = (uint16_t)(g->head[h] && d <= WSIZE ? d : 0);
    g->head[h] = tag;
}

/* The longest match for in[pos...] among the positions before pos in its hash chain (0 if none reaches
 * MIN_MATCH), and its distance. */
static unsigned find_match(const struct gz *g, size_t pos, unsigned *dist)
{
    size_t avail = g->len - pos;
    if (avail < MIN_MATCH)
        return 0;
    unsigned max = avail < MAX_MATCH ? (unsigned)avail : MAX_MATCH, best = MIN_MATCH - 1, chain = MAX_CHAIN;
    const uint8_t *cur = g->in + pos;
    uint32_t tag = g->head[hash3(cur)];
    if (!tag)
        return 0;
    for (uint32_t d = (uint32_t)pos + 1 - tag; d && d <= WSIZE && d <= pos;) {
        const uint8_t *cand = cur - d;
        if (cand[best] == cur[best]) {
            unsigned n = 0;
            while (n < max && cand[n] == cur[n])
                n++;
            if (n > best) {
                best = n;
                *dist = d;
                if (n >= NICE_MATCH || n == max)
                    break;
            }
        }
        uint16_t step = g->prev[(pos - d) & WMASK];
        if (--chain == 0 || !step)
            break;
        d += step;
    }
    return best >= MIN_MATCH ? best : 0;
}

static void insert_range(struct gz *g, size_t from, size_t to)
{
    for (size_t p = from; p < to && p + MIN_MATCH <= g->len; p++)
        insert(g, p);
}

/* The whole input as DEFLATE blocks. A match shorter than LAZY_MATCH is dropped for a literal when the next
 * position starts a longer one. */
static void deflate(struct gz *g)
{
    size_t pos = 0, block_start = 0, len = g->len;
    unsigned cur_len = 0, cur_dist = 0;
    bool cached = false; /* cur_len and cur_dist are pos's already (looked up as the lookahead) */
    while (pos < len && !g->block.w.full) {
        if (g->block.nsym == BLOCK_SYMS) {
            block_coder_flush(&g->block, block_start, pos, false);
            block_start = pos;
        }
        if (!cached) {
            cur_len = find_match(g, pos, &cur_dist);
            insert_range(g, pos, pos + 1);
        }
        cached = false;
        if (!cur_len) {
            block_coder_literal(&g->block, g->in[pos++]);
            continue;
        }
        size_t inserted = pos + 1;
        if (cur_len < LAZY_MATCH) {
            unsigned next_dist = 0, next_len = find_match(g, pos + 1, &next_dist);
            insert_range(g, pos + 1, pos + 2);
            inserted = pos + 2;
            if (next_len > cur_len) {
                block_coder_literal(&g->block, g->in[pos++]);
                cur_len = next_len;
                cur_dist = next_dist;
                cached = true;
                continue;
            }
        }
        block_coder_match(&g->block, cur_len, cur_dist);
        insert_range(g, inserted, pos + cur_len);
        pos += cur_len;
    }
    block_coder_flush(&g->block, block_start, len, true);
}

/* ---- gzip ------------------------------------------------------------------------------------------------- */

static void write_header(struct bit_writer *w)
{
    static const uint8_t header[10] = { 0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255 }; /* deflate, no flags, mtime 0 */
    for (unsigned i = 0; i < sizeof header; i++)
        put_byte(w, header[i]);
}

size_t gzip_compress(const uint8_t *in, size_t len, uint8_t *out, size_t cap, void *work)
{
    if (!out || !work || (!in && len) || len > SIZE_MAX / 2)
        return 0;
    uintptr_t aligned = ((uintptr_t)work + _Alignof(struct gz) - 1) & ~(uintptr_t)(_Alignof(struct gz) - 1);
    struct gz *g = (struct gz *)aligned;
    struct bit_writer *w = &g->block.w;
    size_t bound = gzip_bound(len);
    memset(g->head, 0, sizeof g->head);
    g->in = in;
    g->len = len;
    block_coder_start(&g->block, in, out, cap < bound ? cap : bound);

    uint32_t crc = crc32_update(0, in, len);
    write_header(w);
    deflate(g);
    align_byte(w);
    put_le32(w, crc);
    put_le32(w, (uint32_t)len);
    if (!w->full)
        return w->n;

    /* Compressed, it does not fit in cap or exceeds the bound (blocks each a little bigger stored than coded,
     * but more than the bound in all): all of it stored fits the bound by construction. */
    *w = (struct bit_writer){ .out = out, .cap = cap < bound ? cap : bound };
    write_header(w);
    block_coder_stored(&g->block, 0, len, true);
    put_le32(w, crc);
    put_le32(w, (uint32_t)len);
    return w->full ? 0 : w->n;
}
