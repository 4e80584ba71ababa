/* kernel/lib/gzip.c: gzip_compress and crc32_update (kernel/lib/gzip.h). Three layers, bottom up: the CRC-32 of
 * the trailer; LZ77 over the whole input in memory, matches found through hash chains over 3-byte prefixes
 * within a 32 KiB window (one byte of lazy lookahead, as zlib's middle levels do); and a block coder that takes
 * the symbols of up to BLOCK_SYMS matches and literals and writes them as whichever of a dynamic Huffman block,
 * a fixed Huffman block or stored bytes is smallest (RFC 1951 3.2.3-3.2.7). Everything lives in the caller's
 * work area; the stack holds a few scalars. Task context only: it is long-running and takes no locks. */
#include "kernel/lib/gzip.h"

#include <stdatomic.h>
#include <stdbool.h>

#include "kernel/lib/string.h"

#define WSIZE 32768u /* DEFLATE's largest distance */
#define WMASK (WSIZE - 1u)
#define HASH_BITS 15u
#define MIN_MATCH 3u
#define MAX_MATCH 258u
#define MAX_CHAIN 64u   /* candidates tried per position: bounds the time a pathological input costs */
#define NICE_MATCH 128u /* a match this long ends the search: longer ones rarely pay for the time */
#define LAZY_MATCH 16u  /* a match this long is taken without looking whether the next byte starts a longer */
#define BLOCK_SYMS 16384u
#define STORED_MAX 65535u
#define LITLEN_SYMS 286u
#define FIXED_LITLEN_SYMS 288u
#define DIST_SYMS 30u
#define CL_SYMS 19u
#define MAX_BITS 15u   /* longest litlen or distance code the format can describe */
#define CL_MAX_BITS 7u /* longest code-length code: its lengths are sent in 3 bits */
#define END_OF_BLOCK 256u

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

struct huff {
    uint16_t code[FIXED_LITLEN_SYMS]; /* bit-reversed, as DEFLATE sends codes from their first bit */
    uint8_t len[FIXED_LITLEN_SYMS];
};

struct bit_writer {
    uint8_t *out;
    size_t cap, n;
    uint64_t bits;
    unsigned count;
    bool full; /* something did not fit: the rest is dropped and the caller learns it once at the end */
};

struct gz {
    /* head[h]: the last position whose 3 bytes hash to h, plus 1 (0: none), modulo 2^32. prev[p % WSIZE]: the
     * distance from p back to the previous position with p's hash (0: none within the window). A stale entry
     * (an input over 4 GiB wrapping the positions) only costs a candidate: every match is compared byte by
     * byte before it is used. */
    uint32_t head[1u << HASH_BITS];
    uint16_t prev[WSIZE];
    /* the block's symbols: a literal is (byte, 0), a match (length - 3, distance) */
    uint16_t sym_dist[BLOCK_SYMS];
    uint8_t sym_lc[BLOCK_SYMS];
    unsigned nsym;
    uint32_t lit_freq[LITLEN_SYMS], dist_freq[DIST_SYMS], cl_freq[CL_SYMS];
    struct huff lit, dist, cl, fixed_lit, fixed_dist;
    /* the code lengths of a dynamic header, run-length coded (RFC 1951 3.2.7) */
    uint8_t lens[LITLEN_SYMS + DIST_SYMS];
    uint8_t cl_sym[LITLEN_SYMS + DIST_SYMS], cl_extra[LITLEN_SYMS + DIST_SYMS];
    unsigned ncl;
    /* scratch of build_lengths */
    uint32_t weight[LITLEN_SYMS];
    uint16_t order[LITLEN_SYMS];
    /* input already chosen to go out stored but not yet written, from stored_from to the current block:
     * consecutive stored blocks are merged, so incompressible input costs 5 bytes per 65535 and no more */
    bool stored_pending;
    size_t stored_from;
    const uint8_t *in;
    size_t len;
    struct bit_writer w;
};

_Static_assert(sizeof(struct gz) + _Alignof(struct gz) <= GZIP_WORK_BYTES, "GZIP_WORK_BYTES is too small");

/* ---- bits out --------------------------------------------------------------------------------------------- */

static void put_byte(struct bit_writer *w, uint8_t b)
{
    if (w->n < w->cap)
        w->out[w->n++] = b;
    else
        w->full = true;
}

/* value's low nbits (at most 32), first bit first */
static void put_bits(struct bit_writer *w, uint32_t value, unsigned nbits)
{
    w->bits |= (uint64_t)value << w->count;
    w->count += nbits;
    while (w->count >= 8) {
        put_byte(w, (uint8_t)w->bits);
        w->bits >>= 8;
        w->count -= 8;
    }
}

static void align_byte(struct bit_writer *w)
{
    if (w->count)
        put_bits(w, 0, 8 - w->count);
}

static void put_le32(struct bit_writer *w, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        put_byte(w, (uint8_t)(v >> (8 * i)));
}

/* ---- DEFLATE's symbols ------------------------------------------------------------------------------------ */

static unsigned top_bit(uint32_t v)
{
    return 31u - (unsigned)__builtin_clz(v);
}

/* The length code (0 for 257 ... 28 for 285) of a match length 3..258, and its extra bits. */
static unsigned length_code(unsigned length, unsigned *extra_bits, unsigned *extra)
{
    unsigned v = length - MIN_MATCH;
    *extra_bits = 0;
    *extra = 0;
    if (length == MAX_MATCH)
        return 28;
    if (v < 8)
        return v;
    unsigned b = top_bit(v), low = (v >> (b - 2)) & 3u;
    *extra_bits = b - 2;
    *extra = v - ((4u | low) << (b - 2));
    return 4 * (b - 1) + low;
}

static unsigned length_extra_bits(unsigned code)
{
    return code < 8 || code == 28 ? 0 : (code - 4) / 4;
}

/* The distance code (0..29) of a distance 1..32768, and its extra bits. */
static unsigned dist_code(unsigned dist, unsigned *extra_bits, unsigned *extra)
{
    unsigned v = dist - 1;
    *extra_bits = 0;
    *extra = 0;
    if (v < 4)
        return v;
    unsigned b = top_bit(v), low = (v >> (b - 1)) & 1u;
    *extra_bits = b - 1;
    *extra = v - ((2u | low) << (b - 1));
    return 2 * b + low;
}

static unsigned dist_extra_bits(unsigned code)
{
    return code < 4 ? 0 : code / 2 - 1;
}

/* ---- Huffman codes ---------------------------------------------------------------------------------------- */

/* Clears len[0..n) and puts the used symbols of freq[0..n) in order[], lightest first (an insertion sort,
 * stable, so equal weights keep their symbol order); returns how many are used. */
static int sort_used(const uint32_t *freq, unsigned n, uint16_t *order, uint8_t *len)
{
    int used = 0;
    for (unsigned s = 0; s < n; s++) {
        len[s] = 0;
        if (!freq[s])
            continue;
        int i = used++;
        for (; i > 0 && freq[order[i - 1]] > freq[s]; i--)
            order[i] = order[i - 1];
        order[i] = (uint16_t)s;
    }
    return used;
}

/* Huffman's tree over the ascending weights a[0..used), used >= 2, computed in place: a[i] becomes the depth
 * of the i-th lightest leaf, so the lengths come out longest first. */
static void huffman_depths(uint32_t *a, int used)
{
    /* pair the two lightest of the leaves and the internal nodes made so far; an internal node's slot holds
     * its weight until it is used, then its parent's index */
    int root = 0, leaf = 2;
    a[0] += a[1];
    for (int next = 1; next < used - 1; next++) {
        if (leaf >= used || a[root] < a[leaf]) {
            a[next] = a[root];
            a[root++] = (uint32_t)next;
        } else {
            a[next] = a[leaf++];
        }
        if (leaf >= used || (root < next && a[root] < a[leaf])) {
            a[next] += a[root];
            a[root++] = (uint32_t)next;
        } else {
            a[next] += a[leaf++];
        }
    }
    /* each internal node's depth from its parent's */
    a[used - 2] = 0;
    for (int next = used - 3; next >= 0; next--)
        a[next] = a[a[next]] + 1;
    /* the leaves' depths, level by level: the free slots at a depth not taken by internal nodes are leaves */
    int avail = 1, internal = 0, next = used - 1;
    uint32_t depth = 0;
    root = used - 2;
    while (avail > 0) {
        while (root >= 0 && a[root] == depth) {
            internal++;
            root--;
        }
        while (avail > internal) {
            a[next--] = depth;
            avail--;
        }
        avail = 2 * internal;
        depth++;
        internal = 0;
    }
}

/* depth[i], the length of order[i] (longest first), cut at limit; the code is made whole again by moving
 * leaves from shorter lengths one level down, and the lengths handed out again, the longest to the rarest. */
static void limit_lengths(const uint32_t *depth, const uint16_t *order, int used, unsigned limit, uint8_t *len)
{
    uint32_t count[MAX_BITS + 1] = { 0 };
    for (int i = 0; i < used; i++)
        count[depth[i] < limit ? depth[i] : limit]++;
    uint32_t kraft = 0; /* the code's Kraft sum, in units of 2^-limit: exactly 2^limit when whole */
    for (unsigned l = 1; l <= limit; l++)
        kraft += count[l] << (limit - l);
    while (kraft > (1u << limit)) {
        count[limit]--;
        for (unsigned l = limit - 1; l > 0; l--) {
            if (count[l]) {
                count[l]--;
                count[l + 1] += 2;
                break;
            }
        }
        kraft--;
    }
    /* the rarest symbols take the longest codes */
    int i = 0;
    for (unsigned l = limit; l > 0; l--)
        for (uint32_t k = 0; k < count[l]; k++)
            len[order[i++]] = (uint8_t)l;
}

/* Code lengths for freq[0..n), none longer than limit, 0 for unused symbols. At least two symbols get a code
 * even when fewer are used, so every code is complete: zlib refuses incomplete ones but for a single code. The
 * lengths come from Huffman's tree computed in place over the weights sorted ascending (Moffat and
 * Katajainen's method: no tree nodes to allocate), then are cut to the limit. */
static void build_lengths(struct gz *g, const uint32_t *freq, unsigned n, unsigned limit, uint8_t *len)
{
    uint32_t *a = g->weight;
    uint16_t *order = g->order;
    int used = sort_used(freq, n, order, len);
    if (used < 2) {
        unsigned one = used ? order[0] : 0;
        len[one] = 1;
        len[one == 0 ? 1 : 0] = 1;
        return;
    }
    for (int i = 0; i < used; i++)
        a[i] = freq[order[i]];
    huffman_depths(a, used);
    limit_lengths(a, order, used, limit, len);
}

/* The canonical codes of RFC 1951 3.2.2 for h->len[0..n), bit-reversed for sending. */
static void make_codes(struct huff *h, unsigned n)
{
    unsigned count[MAX_BITS + 1] = { 0 }, next[MAX_BITS + 1];
    for (unsigned s = 0; s < n; s++)
        count[h->len[s]]++;
    count[0] = 0;
    unsigned code = 0;
    for (unsigned bits = 1; bits <= MAX_BITS; bits++) {
        code = (code + count[bits - 1]) << 1;
        next[bits] = code;
    }
    for (unsigned s = 0; s < n; s++) {
        unsigned l = h->len[s];
        if (!l)
            continue;
        unsigned c = next[l]++, r = 0;
        for (unsigned k = 0; k < l; k++, c >>= 1)
            r = (r << 1) | (c & 1u);
        h->code[s] = (uint16_t)r;
    }
}

static void make_fixed_codes(struct gz *g)
{
    for (unsigned s = 0; s < FIXED_LITLEN_SYMS; s++)
        g->fixed_lit.len[s] = s < 144 ? 8 : s < 256 ? 9 : s < 280 ? 7 : 8;
    make_codes(&g->fixed_lit, FIXED_LITLEN_SYMS);
    for (unsigned s = 0; s < DIST_SYMS; s++)
        g->fixed_dist.len[s] = 5;
    make_codes(&g->fixed_dist, DIST_SYMS);
}

/* ---- blocks ----------------------------------------------------------------------------------------------- */

static void add_cl(struct gz *g, unsigned sym, unsigned extra)
{
    g->cl_sym[g->ncl] = (uint8_t)sym;
    g->cl_extra[g->ncl++] = (uint8_t)extra;
    g->cl_freq[sym]++;
}

/* The litlen and distance code lengths as one sequence in the code-length alphabet: 16 repeats the previous
 * length 3-6 times, 17 and 18 give 3-10 and 11-138 zeros (RFC 1951 3.2.7). */
static void code_length_sequence(struct gz *g, unsigned hlit, unsigned hdist)
{
    unsigned total = hlit + hdist;
    memcpy(g->lens, g->lit.len, hlit);
    memcpy(g->lens + hlit, g->dist.len, hdist);
    memset(g->cl_freq, 0, sizeof g->cl_freq);
    g->ncl = 0;
    for (unsigned i = 0; i < total;) {
        unsigned v = g->lens[i], run = 1;
        while (i + run < total && g->lens[i + run] == v)
            run++;
        i += run;
        if (v == 0) {
            for (; run >= 11; run -= run < 138 ? run : 138)
                add_cl(g, 18, (run < 138 ? run : 138) - 11);
            if (run >= 3) {
                add_cl(g, 17, run - 3);
                run = 0;
            }
        } else {
            add_cl(g, v, 0);
            run--;
            for (; run >= 3; run -= run < 6 ? run : 6)
                add_cl(g, 16, (run < 6 ? run : 6) - 3);
        }
        for (; run; run--)
            add_cl(g, v, 0);
    }
}

static const uint8_t cl_order[CL_SYMS] = { 16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15 };

static unsigned cl_extra_bits(unsigned sym)
{
    return sym == 16 ? 2 : sym == 17 ? 3 : sym == 18 ? 7 : 0;
}

/* The bits the block's symbols take under the codes lit and dist, end of block included. */
static uint64_t symbol_bits(const struct gz *g, const struct huff *lit, const struct huff *dist)
{
    uint64_t bits = 0;
    for (unsigned s = 0; s < LITLEN_SYMS; s++)
        bits += (uint64_t)g->lit_freq[s] * (lit->len[s] + (s > END_OF_BLOCK ? length_extra_bits(s - 257) : 0));
    for (unsigned s = 0; s < DIST_SYMS; s++)
        bits += (uint64_t)g->dist_freq[s] * (dist->len[s] + dist_extra_bits(s));
    return bits;
}

static void write_symbols(struct gz *g, const struct huff *lit, const struct huff *dist)
{
    struct bit_writer *w = &g->w;
    for (unsigned i = 0; i < g->nsym && !w->full; i++) {
        unsigned lc = g->sym_lc[i], d = g->sym_dist[i], eb, ev;
        if (!d) {
            put_bits(w, lit->code[lc], lit->len[lc]);
            continue;
        }
        unsigned c = 257 + length_code(lc + MIN_MATCH, &eb, &ev);
        put_bits(w, lit->code[c], lit->len[c]);
        put_bits(w, ev, eb);
        c = dist_code(d, &eb, &ev);
        put_bits(w, dist->code[c], dist->len[c]);
        put_bits(w, ev, eb);
    }
    put_bits(w, lit->code[END_OF_BLOCK], lit->len[END_OF_BLOCK]);
}

/* in[from..to) as stored blocks of at most 65535 bytes; the last is final when final is set. */
static void write_stored(struct gz *g, size_t from, size_t to, bool final)
{
    struct bit_writer *w = &g->w;
    do {
        size_t n = to - from < STORED_MAX ? to - from : STORED_MAX;
        put_bits(w, final && from + n == to, 1);
        put_bits(w, 0, 2);
        align_byte(w);
        put_bits(w, (uint32_t)n, 16);
        put_bits(w, (uint32_t)n ^ 0xffffu, 16);
        if (w->cap - w->n < n) {
            w->full = true;
            return;
        }
        if (n)
            memcpy(w->out + w->n, g->in + from, n);
        w->n += n;
        from += n;
    } while (from < to);
}

static uint64_t stored_bits(size_t n)
{
    return 8 * (uint64_t)n + 40 * (uint64_t)(n ? (n + STORED_MAX - 1) / STORED_MAX : 1);
}

/* Codes the block's symbols, which are in[from..to), as the smallest of a dynamic block, a fixed block and
 * stored bytes (the last deferred, to be merged with stored neighbours), and starts a new block. */
static void flush_block(struct gz *g, size_t from, size_t to, bool final)
{
    g->lit_freq[END_OF_BLOCK] = 1;
    build_lengths(g, g->lit_freq, LITLEN_SYMS, MAX_BITS, g->lit.len);
    build_lengths(g, g->dist_freq, DIST_SYMS, MAX_BITS, g->dist.len);
    make_codes(&g->lit, LITLEN_SYMS);
    make_codes(&g->dist, DIST_SYMS);
    unsigned hlit = LITLEN_SYMS, hdist = DIST_SYMS, hclen = CL_SYMS;
    while (hlit > 257 && !g->lit.len[hlit - 1])
        hlit--;
    while (hdist > 1 && !g->dist.len[hdist - 1])
        hdist--;
    code_length_sequence(g, hlit, hdist);
    build_lengths(g, g->cl_freq, CL_SYMS, CL_MAX_BITS, g->cl.len);
    make_codes(&g->cl, CL_SYMS);
    while (hclen > 4 && !g->cl.len[cl_order[hclen - 1]])
        hclen--;

    uint64_t dynamic = 3 + 5 + 5 + 4 + 3 * hclen + symbol_bits(g, &g->lit, &g->dist);
    for (unsigned i = 0; i < g->ncl; i++)
        dynamic += g->cl.len[g->cl_sym[i]] + cl_extra_bits(g->cl_sym[i]);
    uint64_t fixed = 3 + symbol_bits(g, &g->fixed_lit, &g->fixed_dist);
    uint64_t best = dynamic < fixed ? dynamic : fixed;
    struct bit_writer *w = &g->w;

    if (stored_bits(to - from) < best) {
        if (!g->stored_pending) {
            g->stored_pending = true;
            g->stored_from = from;
        }
        if (final)
            write_stored(g, g->stored_from, to, true);
    } else {
        if (g->stored_pending)
            write_stored(g, g->stored_from, from, false);
        g->stored_pending = false;
        put_bits(w, final, 1);
        if (dynamic < fixed) {
            put_bits(w, 2, 2);
            put_bits(w, hlit - 257, 5);
            put_bits(w, hdist - 1, 5);
            put_bits(w, hclen - 4, 4);
            for (unsigned i = 0; i < hclen; i++)
                put_bits(w, g->cl.len[cl_order[i]], 3);
            for (unsigned i = 0; i < g->ncl; i++) {
                unsigned s = g->cl_sym[i];
                put_bits(w, g->cl.code[s], g->cl.len[s]);
                put_bits(w, g->cl_extra[i], cl_extra_bits(s));
            }
            write_symbols(g, &g->lit, &g->dist);
        } else {
            put_bits(w, 1, 2);
            write_symbols(g, &g->fixed_lit, &g->fixed_dist);
        }
    }
    g->nsym = 0;
    memset(g->lit_freq, 0, sizeof g->lit_freq);
    memset(g->dist_freq, 0, sizeof g->dist_freq);
}

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

static void add_literal(struct gz *g, uint8_t b)
{
    g->sym_lc[g->nsym] = b;
    g->sym_dist[g->nsym++] = 0;
    g->lit_freq[b]++;
}

static void add_match(struct gz *g, unsigned length, unsigned dist)
{
    unsigned eb, ev;
    g->sym_lc[g->nsym] = (uint8_t)(length - MIN_MATCH);
    g->sym_dist[g->nsym++] = (uint16_t)dist;
    g->lit_freq[257 + length_code(length, &eb, &ev)]++;
    g->dist_freq[dist_code(dist, &eb, &ev)]++;
}

/* The whole input as DEFLATE blocks. A match shorter than LAZY_MATCH is dropped for a literal when the next
 * position starts a longer one. */
static void deflate(struct gz *g)
{
    size_t pos = 0, block_start = 0, len = g->len;
    unsigned cur_len = 0, cur_dist = 0;
    bool cached = false; /* cur_len and cur_dist are pos's already (looked up as the lookahead) */
    while (pos < len && !g->w.full) {
        if (g->nsym == BLOCK_SYMS) {
            flush_block(g, block_start, pos, false);
            block_start = pos;
        }
        if (!cached) {
            cur_len = find_match(g, pos, &cur_dist);
            insert_range(g, pos, pos + 1);
        }
        cached = false;
        if (!cur_len) {
            add_literal(g, g->in[pos++]);
            continue;
        }
        size_t inserted = pos + 1;
        if (cur_len < LAZY_MATCH) {
            unsigned next_dist = 0, next_len = find_match(g, pos + 1, &next_dist);
            insert_range(g, pos + 1, pos + 2);
            inserted = pos + 2;
            if (next_len > cur_len) {
                add_literal(g, g->in[pos++]);
                cur_len = next_len;
                cur_dist = next_dist;
                cached = true;
                continue;
            }
        }
        add_match(g, cur_len, cur_dist);
        insert_range(g, inserted, pos + cur_len);
        pos += cur_len;
    }
    flush_block(g, block_start, len, true);
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
    size_t bound = gzip_bound(len);
    memset(g->head, 0, sizeof g->head);
    memset(g->lit_freq, 0, sizeof g->lit_freq);
    memset(g->dist_freq, 0, sizeof g->dist_freq);
    g->nsym = 0;
    g->stored_pending = false;
    g->in = in;
    g->len = len;
    g->w = (struct bit_writer){ .out = out, .cap = cap < bound ? cap : bound };
    make_fixed_codes(g);

    uint32_t crc = crc32_update(0, in, len);
    write_header(&g->w);
    deflate(g);
    align_byte(&g->w);
    put_le32(&g->w, crc);
    put_le32(&g->w, (uint32_t)len);
    if (!g->w.full)
        return g->w.n;

    /* Compressed, it does not fit in cap or exceeds the bound (blocks each a little bigger stored than coded,
     * but more than the bound in all): all of it stored fits the bound by construction. */
    g->w = (struct bit_writer){ .out = out, .cap = cap < bound ? cap : bound };
    write_header(&g->w);
    write_stored(g, 0, len, true);
    put_le32(&g->w, crc);
    put_le32(&g->w, (uint32_t)len);
    return g->w.full ? 0 : g->w.n;
}
