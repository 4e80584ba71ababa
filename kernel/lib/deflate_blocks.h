/* kernel/lib/deflate_blocks.h: what gzip's two halves share, and for them alone (the public face is
 * kernel/lib/gzip.h): the bit writer both write through, and the block coder of kernel/lib/deflate_blocks.c that
 * kernel/lib/gzip.c's LZ77 feeds with literals and matches and its gzip member closes with stored bytes. */
#ifndef KERNEL_LIB_DEFLATE_BLOCKS_H
#define KERNEL_LIB_DEFLATE_BLOCKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MIN_MATCH 3u
#define MAX_MATCH 258u
#define BLOCK_SYMS 16384u
#define LITLEN_SYMS 286u
#define FIXED_LITLEN_SYMS 288u
#define DIST_SYMS 30u
#define CL_SYMS 19u

/* ---- bits out --------------------------------------------------------------------------------------------- */

struct bit_writer {
    uint8_t *out;
    size_t cap, n;
    uint64_t bits;
    unsigned count;
    bool full; /* something did not fit: the rest is dropped and the caller learns it once at the end */
};

static inline void put_byte(struct bit_writer *w, uint8_t b)
{
    if (w->n < w->cap)
        w->out[w->n++] = b;
    else
        w->full = true;
}

/* value's low nbits (at most 32), first bit first */
static inline void put_bits(struct bit_writer *w, uint32_t value, unsigned nbits)
{
    w->bits |= (uint64_t)value << w->count;
    w->count += nbits;
    while (w->count >= 8) {
        put_byte(w, (uint8_t)w->bits);
        w->bits >>= 8;
        w->count -= 8;
    }
}

static inline void align_byte(struct bit_writer *w)
{
    if (w->count)
        put_bits(w, 0, 8 - w->count);
}

static inline void put_le32(struct bit_writer *w, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        put_byte(w, (uint8_t)(v >> (8 * i)));
}

/* ---- the block coder -------------------------------------------------------------------------------------- */

struct huff {
    uint16_t code[FIXED_LITLEN_SYMS]; /* bit-reversed, as DEFLATE sends codes from their first bit */
    uint8_t len[FIXED_LITLEN_SYMS];
};

/* One block's symbols and the tables that code them; it lives in gzip's work area. */
struct block_coder {
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
    struct bit_writer w;
};

/* An empty block over in, written into out[0..cap). */
void block_coder_start(struct block_coder *bc, const uint8_t *in, uint8_t *out, size_t cap);
/* The block's next symbol: a byte, or a match of length MIN_MATCH..MAX_MATCH at distance 1..32768. The block
 * holds BLOCK_SYMS of them: flush it first when nsym has reached that. */
void block_coder_literal(struct block_coder *bc, uint8_t byte);
void block_coder_match(struct block_coder *bc, unsigned length, unsigned dist);
/* Codes the block's symbols, which are in[from..to), as the smallest of a dynamic block, a fixed block and
 * stored bytes (the last deferred, to be merged with stored neighbours), and starts a new block. */
void block_coder_flush(struct block_coder *bc, size_t from, size_t to, bool final);
/* in[from..to) as stored blocks of at most 65535 bytes; the last is final when final is set. */
void block_coder_stored(struct block_coder *bc, size_t from, size_t to, bool final);

#endif
