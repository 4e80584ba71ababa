/* kernel/lib/deflate_blocks.c: DEFLATE's block coder, the lower half of gzip_compress (kernel/lib/gzip.c feeds
 * it). It owns one block's symbols -- up to BLOCK_SYMS literals and matches, as kernel/lib/gzip.c's LZ77 found
 * them -- and writes them as whichever of a dynamic Huffman block, a fixed Huffman block or stored bytes is
 * smallest (RFC 1951 3.2.3-3.2.7), merging neighbouring stored blocks. Bottom up: DEFLATE's length and distance
 * codes, Huffman code lengths cut to 15 bits and their canonical codes, then the blocks. Everything lives in
 * struct block_coder (kernel/lib/deflate_blocks.h), inside the caller's work area. */
#include "kernel/lib/deflate_blocks.h"

#include "kernel/lib/string.h"

#define STORED_MAX 65535u
#define MAX_BITS 15u   /* longest litlen or distance code the format can describe */
#define CL_MAX_BITS 7u /* longest code-length code: its lengths are sent in 3 bits */
#define END_OF_BLOCK 256u

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
static void build_lengths(struct block_coder *bc, const uint32_t *freq, unsigned n, unsigned limit, uint8_t *len)
{
    uint32_t *a = bc->weight;
    uint16_t *order = bc->order;
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

static void make_fixed_codes(struct block_coder *bc)
{
    for (unsigned s = 0; s < FIXED_LITLEN_SYMS; s++)
        bc->fixed_lit.len[s] = s < 144 ? 8 : s < 256 ? 9 : s < 280 ? 7 : 8;
    make_codes(&bc->fixed_lit, FIXED_LITLEN_SYMS);
    for (unsigned s = 0; s < DIST_SYMS; s++)
        bc->fixed_dist.len[s] = 5;
    make_codes(&bc->fixed_dist, DIST_SYMS);
}

/* ---- blocks ----------------------------------------------------------------------------------------------- */

static void add_cl(struct block_coder *bc, unsigned sym, unsigned extra)
{
    bc->cl_sym[bc->ncl] = (uint8_t)sym;
    bc->cl_extra[bc->ncl++] = (uint8_t)extra;
    bc->cl_freq[sym]++;
}

/* The litlen and distance code lengths as one sequence in the code-length alphabet: 16 repeats the previous
 * length 3-6 times, 17 and 18 give 3-10 and 11-138 zeros (RFC 1951 3.2.7). */
static void code_length_sequence(struct block_coder *bc, unsigned hlit, unsigned hdist)
{
    unsigned total = hlit + hdist;
    memcpy(bc->lens, bc->lit.len, hlit);
    memcpy(bc->lens + hlit, bc->dist.len, hdist);
    memset(bc->cl_freq, 0, sizeof bc->cl_freq);
    bc->ncl = 0;
    for (unsigned i = 0; i < total;) {
        unsigned v = bc->lens[i], run = 1;
        while (i + run < total && bc->lens[i + run] == v)
            run++;
        i += run;
        if (v == 0) {
            for (; run >= 11; run -= run < 138 ? run : 138)
                add_cl(bc, 18, (run < 138 ? run : 138) - 11);
            if (run >= 3) {
                add_cl(bc, 17, run - 3);
                run = 0;
            }
        } else {
            add_cl(bc, v, 0);
            run--;
            for (; run >= 3; run -= run < 6 ? run : 6)
                add_cl(bc, 16, (run < 6 ? run : 6) - 3);
        }
        for (; run; run--)
            add_cl(bc, v, 0);
    }
}

static const uint8_t cl_order[CL_SYMS] = { 16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15 };

static unsigned cl_extra_bits(unsigned sym)
{
    return sym == 16 ? 2 : sym == 17 ? 3 : sym == 18 ? 7 : 0;
}

/* The bits the block's symbols take under the codes lit and dist, end of block included. */
static uint64_t symbol_bits(const struct block_coder *bc, const struct huff *lit, const struct huff *dist)
{
    uint64_t bits = 0;
    for (unsigned s = 0; s < LITLEN_SYMS; s++)
        bits += (uint64_t)bc->lit_freq[s] * (lit->len[s] + (s > END_OF_BLOCK ? length_extra_bits(s - 257) : 0));
    for (unsigned s = 0; s < DIST_SYMS; s++)
        bits += (uint64_t)bc->dist_freq[s] * (dist->len[s] + dist_extra_bits(s));
    return bits;
}

static void write_symbols(struct block_coder *bc, const struct huff *lit, const struct huff *dist)
{
    struct bit_writer *w = &bc->w;
    for (unsigned i = 0; i < bc->nsym && !w->full; i++) {
        unsigned lc = bc->sym_lc[i], d = bc->sym_dist[i], eb, ev;
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
void block_coder_stored(struct block_coder *bc, size_t from, size_t to, bool final)
{
    struct bit_writer *w = &bc->w;
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
            memcpy(w->out + w->n, bc->in + from, n);
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
void block_coder_flush(struct block_coder *bc, size_t from, size_t to, bool final)
{
    bc->lit_freq[END_OF_BLOCK] = 1;
    build_lengths(bc, bc->lit_freq, LITLEN_SYMS, MAX_BITS, bc->lit.len);
    build_lengths(bc, bc->dist_freq, DIST_SYMS, MAX_BITS, bc->dist.len);
    make_codes(&bc->lit, LITLEN_SYMS);
    make_codes(&bc->dist, DIST_SYMS);
    unsigned hlit = LITLEN_SYMS, hdist = DIST_SYMS, hclen = CL_SYMS;
    while (hlit > 257 && !bc->lit.len[hlit - 1])
        hlit--;
    while (hdist > 1 && !bc->dist.len[hdist - 1])
        hdist--;
    code_length_sequence(bc, hlit, hdist);
    build_lengths(bc, bc->cl_freq, CL_SYMS, CL_MAX_BITS, bc->cl.len);
    make_codes(&bc->cl, CL_SYMS);
    while (hclen > 4 && !bc->cl.len[cl_order[hclen - 1]])
        hclen--;

    uint64_t dynamic = 3 + 5 + 5 + 4 + 3 * hclen + symbol_bits(bc, &bc->lit, &bc->dist);
    for (unsigned i = 0; i < bc->ncl; i++)
        dynamic += bc->cl.len[bc->cl_sym[i]] + cl_extra_bits(bc->cl_sym[i]);
    uint64_t fixed = 3 + symbol_bits(bc, &bc->fixed_lit, &bc->fixed_dist);
    uint64_t best = dynamic < fixed ? dynamic : fixed;
    struct bit_writer *w = &bc->w;

    if (stored_bits(to - from) < best) {
        if (!bc->stored_pending) {
            bc->stored_pending = true;
            bc->stored_from = from;
        }
        if (final)
            block_coder_stored(bc, bc->stored_from, to, true);
    } else {
        if (bc->stored_pending)
            block_coder_stored(bc, bc->stored_from, from, false);
        bc->stored_pending = false;
        put_bits(w, final, 1);
        if (dynamic < fixed) {
            put_bits(w, 2, 2);
            put_bits(w, hlit - 257, 5);
            put_bits(w, hdist - 1, 5);
            put_bits(w, hclen - 4, 4);
            for (unsigned i = 0; i < hclen; i++)
                put_bits(w, bc->cl.len[cl_order[i]], 3);
            for (unsigned i = 0; i < bc->ncl; i++) {
                unsigned s = bc->cl_sym[i];
                put_bits(w, bc->cl.code[s], bc->cl.len[s]);
                put_bits(w, bc->cl_extra[i], cl_extra_bits(s));
            }
            write_symbols(bc, &bc->lit, &bc->dist);
        } else {
            put_bits(w, 1, 2);
            write_symbols(bc, &bc->fixed_lit, &bc->fixed_dist);
        }
    }
    bc->nsym = 0;
    memset(bc->lit_freq, 0, sizeof bc->lit_freq);
    memset(bc->dist_freq, 0, sizeof bc->dist_freq);
}
/* ---- the block's symbols in ------------------------------------------------------------------------------- */

void block_coder_start(struct block_coder *bc, const uint8_t *in, uint8_t *out, size_t cap)
{
    memset(bc->lit_freq, 0, sizeof bc->lit_freq);
    memset(bc->dist_freq, 0, sizeof bc->dist_freq);
    bc->nsym = 0;
    bc->stored_pending = false;
    bc->in = in;
    bc->w = (struct bit_writer){ .out = out, .cap = cap };
    make_fixed_codes(bc);
}

void block_coder_literal(struct block_coder *bc, uint8_t byte)
{
    bc->sym_lc[bc->nsym] = byte;
    bc->sym_dist[bc->nsym++] = 0;
    bc->lit_freq[byte]++;
}

void block_coder_match(struct block_coder *bc, unsigned length, unsigned dist)
{
    unsigned eb, ev;
    bc->sym_lc[bc->nsym] = (uint8_t)(length - MIN_MATCH);
    bc->sym_dist[bc->nsym++] = (uint16_t)dist;
    bc->lit_freq[257 + length_code(length, &eb, &ev)]++;
    bc->dist_freq[dist_code(dist, &eb, &ev)]++;
}
