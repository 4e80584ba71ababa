/* tests/unit/gzip_reader.c: the DEFLATE block reader of gzip_reader.h: bits first-bit-first, canonical Huffman
 * codes decoded by counting codes per length (RFC 1951 3.2.2), the dynamic header (3.2.7) and the fixed codes
 * (3.2.6). Slow and simple: it reads test inputs of a few hundred kilobytes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "gzip_reader.h"

struct bits {
    const uint8_t *p;
    size_t n, at;
};

struct code {
    uint16_t count[16];  /* codes of each length */
    uint16_t symbol[320]; /* symbols by length, then value: the order of their canonical codes */
};

static unsigned get_bits(struct bits *b, unsigned k)
{
    unsigned v = 0;
    for (unsigned i = 0; i < k; i++, b->at++) {
        assert_true(b->at / 8 < b->n);
        v |= (unsigned)((b->p[b->at / 8] >> (b->at % 8)) & 1u) << i;
    }
    return v;
}

static void make_code(struct code *c, const uint8_t *len, unsigned n)
{
    uint16_t offset[16];
    for (unsigned l = 0; l < 16; l++)
        c->count[l] = 0;
    for (unsigned s = 0; s < n; s++)
        c->count[len[s]]++;
    offset[1] = 0;
    for (unsigned l = 1; l < 15; l++)
        offset[l + 1] = (uint16_t)(offset[l] + c->count[l]);
    for (unsigned s = 0; s < n; s++)
        if (len[s])
            c->symbol[offset[len[s]]++] = (uint16_t)s;
}

/* Codes of one length are consecutive numbers, in symbol order, following the shorter ones doubled. */
static unsigned get_symbol(struct bits *b, const struct code *c)
{
    unsigned code = 0, first = 0, index = 0;
    for (unsigned l = 1; l < 16; l++) {
        code |= get_bits(b, 1);
        if (code - first < c->count[l])
            return c->symbol[index + code - first];
        index += c->count[l];
        first = (first + c->count[l]) << 1;
        code <<= 1;
    }
    fail_msg("no code matches the bits");
    return 0;
}

static const uint16_t length_base[29] = { 3,  4,  5,  6,  7,  8,  9,  10, 11,  13,  15,  17,  19,  23, 27,
                                          31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258 };
static const uint16_t dist_base[30] = { 1,   2,   3,   4,   5,   7,    9,    13,   17,   25,   33,    49,    65,    97,    129,
                                        193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577 };

static unsigned length_extra(unsigned i)
{
    return i < 8 || i == 28 ? 0 : (i - 4) / 4;
}

static unsigned dist_extra(unsigned i)
{
    return i < 4 ? 0 : i / 2 - 1;
}

/* The dynamic header's code lengths into lens[0..hlit + hdist). */
static void read_dynamic_lengths(struct bits *b, uint8_t *lens, unsigned *hlit, unsigned *hdist)
{
    static const uint8_t order[19] = { 16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15 };
    *hlit = get_bits(b, 5) + 257;
    *hdist = get_bits(b, 5) + 1;
    unsigned hclen = get_bits(b, 4) + 4, total = *hlit + *hdist;
    uint8_t cl_lens[19] = { 0 };
    for (unsigned i = 0; i < hclen; i++)
        cl_lens[order[i]] = (uint8_t)get_bits(b, 3);
    struct code cl;
    make_code(&cl, cl_lens, 19);
    for (unsigned i = 0; i < total;) {
        unsigned s = get_symbol(b, &cl), rep = 1, v = s;
        if (s == 16) {
            assert_true(i > 0);
            v = lens[i - 1];
            rep = 3 + get_bits(b, 2);
        } else if (s == 17) {
            v = 0;
            rep = 3 + get_bits(b, 3);
        } else if (s == 18) {
            v = 0;
            rep = 11 + get_bits(b, 7);
        }
        assert_true(i + rep <= total);
        while (rep--)
            lens[i++] = (uint8_t)v;
    }
}

void read_first_coded_block(const uint8_t *gz, size_t n, struct deflate_block *blk, struct deflate_token *tokens,
                            size_t max)
{
    assert_true(n > 10);
    struct bits b = { gz + 10, n - 10, 0 };
    for (;;) {
        get_bits(&b, 1);
        blk->type = get_bits(&b, 2);
        if (blk->type != 0)
            break;
        b.at = (b.at + 7) / 8 * 8;
        unsigned len = get_bits(&b, 16);
        assert_int_equal(get_bits(&b, 16), len ^ 0xffffu);
        b.at += 8 * (size_t)len;
    }
    assert_true(blk->type == 1 || blk->type == 2);
    uint8_t lens[320] = { 0 };
    unsigned hlit = 288, hdist = 30;
    if (blk->type == 2) {
        read_dynamic_lengths(&b, lens, &hlit, &hdist);
    } else {
        for (unsigned s = 0; s < 288; s++)
            lens[s] = s < 144 ? 8 : s < 256 ? 9 : s < 280 ? 7 : 8;
        for (unsigned s = 0; s < 30; s++)
            lens[288 + s] = 5;
    }
    struct code lit, dist;
    make_code(&lit, lens, hlit);
    make_code(&dist, lens + hlit, hdist);
    blk->longest_litlen = 0;
    for (unsigned s = 0; s < hlit; s++)
        blk->longest_litlen = lens[s] > blk->longest_litlen ? lens[s] : blk->longest_litlen;
    blk->ntokens = 0;
    for (;;) {
        unsigned s = get_symbol(&b, &lit);
        if (s == 256)
            break;
        struct deflate_token t = { s, 0 };
        if (s > 256) {
            assert_true(s - 257 < 29);
            t.value = length_base[s - 257] + get_bits(&b, length_extra(s - 257));
            unsigned d = get_symbol(&b, &dist);
            assert_true(d < 30);
            t.dist = dist_base[d] + get_bits(&b, dist_extra(d));
        }
        if (blk->ntokens < max)
            tokens[blk->ntokens] = t;
        blk->ntokens++;
    }
}
