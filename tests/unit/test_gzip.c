/* tests/unit/test_gzip.c: kernel/lib/gzip.c against zlib: every output inflates (gzip framing, CRC-32 and
 * length checked by zlib) to the input exactly, over inputs that reach each path of the coder -- empty, tiny,
 * text, a pprof-like protobuf, incompressible bytes, runs, matches at the window's edge, block boundaries,
 * codes that need the 15-bit limit; its size never over gzip_bound nor past cap; and crc32_update against
 * known values and zlib's crc32. Ends by printing the ratio and time for a 200 KB pprof-like buffer, for the
 * record only. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>
#include <zlib.h>

#include "gzip_reader.h"
#include "kernel/lib/gzip.h"
#include "unit_main.h"

#define GUARD 64

static uint8_t work[GZIP_WORK_BYTES];
static uint64_t rng_state = 0x2545F4914F6CDD1Dull;

static uint32_t rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state >> 11);
}

static void fill_random(uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)rng();
}

/* n bytes in which no 3 consecutive bytes occur twice and no byte equals its neighbour: the match finder finds
 * nothing in them, and a copy of a piece of them matches only that piece. */
static void fill_unique_trigrams(uint8_t *p, size_t n)
{
    static uint8_t seen[1u << 21];
    assert_true(n >= 2 && n < (1u << 24) / 2);
    memset(seen, 0, sizeof seen);
    p[0] = (uint8_t)rng();
    p[1] = (uint8_t)(p[0] + 1);
    for (size_t i = 2; i < n; i++) {
        uint32_t gram;
        do {
            p[i] = (uint8_t)rng();
            gram = (uint32_t)p[i - 2] << 16 | (uint32_t)p[i - 1] << 8 | p[i];
        } while (p[i] == p[i - 1] || (seen[gram / 8] >> (gram % 8) & 1));
        seen[gram / 8] |= (uint8_t)(1u << (gram % 8));
    }
}

/* Inflates a whole gzip member with zlib into a fresh buffer of want bytes (plus one, to see any excess), and
 * checks it ends exactly where the member does. */
static void assert_inflates_to(const uint8_t *gz, size_t n, const uint8_t *want, size_t want_len)
{
    uint8_t *back = malloc(want_len + 1);
    assert_non_null(back);
    z_stream z = { 0 };
    assert_int_equal(inflateInit2(&z, 16 + MAX_WBITS), Z_OK);
    z.next_in = (Bytef *)gz;
    z.avail_in = (uInt)n;
    z.next_out = back;
    z.avail_out = (uInt)(want_len + 1);
    int rc = inflate(&z, Z_FINISH);
    if (rc != Z_STREAM_END)
        fail_msg("inflate: %d (%s)", rc, z.msg ? z.msg : "");
    assert_int_equal(z.avail_in, 0);
    assert_int_equal(z.total_out, want_len);
    assert_memory_equal(back, want, want_len);
    inflateEnd(&z);
    free(back);
}

/* gzip_compress of in with exactly gzip_bound's room: checks the header, the bound, the guard after the room,
 * and that zlib gives in back. Returns the compressed bytes (caller frees) and their length. */
static uint8_t *compress_checked(const uint8_t *in, size_t len, size_t *n_out)
{
    size_t bound = gzip_bound(len);
    uint8_t *out = malloc(bound + GUARD);
    assert_non_null(out);
    memset(out, 0xa5, bound + GUARD);
    size_t n = gzip_compress(in, len, out, bound, work);
    assert_true(n > 0);
    assert_true(n <= bound);
    for (size_t i = bound; i < bound + GUARD; i++)
        assert_int_equal(out[i], 0xa5);
    static const uint8_t header[10] = { 0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255 };
    assert_memory_equal(out, header, sizeof header);
    assert_inflates_to(out, n, in, len);
    *n_out = n;
    return out;
}

static size_t round_trip(const uint8_t *in, size_t len)
{
    size_t n;
    free(compress_checked(in, len, &n));
    return n;
}

/* The BTYPE of the first DEFLATE block: 0 stored, 1 fixed, 2 dynamic. */
static unsigned first_btype(const uint8_t *gz)
{
    return (gz[10] >> 1) & 3u;
}

static size_t text(uint8_t *buf, size_t cap)
{
    static const char *words[] = { "the", "profiler", "samples", "every", "CPU", "at", "a", "fixed", "rate,",
                                   "folds", "stacks", "into", "counts", "and", "sends", "them", "to", "host." };
    size_t n = 0;
    while (n < cap) {
        const char *w = words[rng() % (sizeof words / sizeof words[0])];
        for (size_t i = 0; w[i] && n < cap; i++)
            buf[n++] = (uint8_t)w[i];
        if (n < cap)
            buf[n++] = rng() % 11 ? ' ' : '\n';
    }
    return n;
}

static size_t put_varint(uint8_t *p, uint64_t v)
{
    size_t n = 0;
    do {
        p[n++] = (uint8_t)((v & 0x7f) | (v >= 0x80 ? 0x80 : 0));
        v >>= 7;
    } while (v);
    return n;
}

/* Something shaped like a pprof Profile: a string table of function and file names, functions and locations
 * with addresses, then samples with packed stacks of location ids drawn with a skew, values and a label. */
static size_t pprof_like(uint8_t *buf, size_t cap)
{
    size_t n = 0;
    uint8_t tmp[128];
    for (unsigned i = 0; n + 200 < cap && i < 400; i++) {
        int len = snprintf((char *)tmp, sizeof tmp, "%s_%u", i % 3 ? "kernel/profiler/fold.c:fold_stack" :
                           "arch/x86_64/pmu.c:pmu_nmi_handler", i);
        buf[n++] = 6 << 3 | 2;
        n += put_varint(buf + n, (uint64_t)len);
        memcpy(buf + n, tmp, (size_t)len);
        n += (size_t)len;
    }
    for (unsigned id = 1; n + 200 < cap && id < 2000; id++) {
        uint8_t loc[32];
        size_t m = 0;
        loc[m++] = 1 << 3;
        m += put_varint(loc + m, id);
        loc[m++] = 3 << 3;
        m += put_varint(loc + m, 0xffffffff80100000ull + id * 37u);
        buf[n++] = 4 << 3 | 2;
        n += put_varint(buf + n, m);
        memcpy(buf + n, loc, m);
        n += m;
    }
    while (n + 200 < cap) {
        uint8_t stack[64], sample[128];
        size_t s = 0, m = 0;
        unsigned which = (rng() % 60) * (rng() % 60) / 12; /* a few hot stacks, a long tail */
        unsigned depth = 4 + which % 16;
        for (unsigned d = 0; d < depth; d++)
            s += put_varint(stack + s, 1 + (which * 7 + d * 13) % 1999);
        sample[m++] = 1 << 3 | 2;
        m += put_varint(sample + m, s);
        memcpy(sample + m, stack, s);
        m += s;
        uint8_t values[16];
        unsigned count = 1 + rng() % 3;
        size_t v = put_varint(values, count);
        v += put_varint(values + v, count * 1000000u);
        sample[m++] = 2 << 3 | 2;
        sample[m++] = (uint8_t)v;
        memcpy(sample + m, values, v);
        m += v;
        sample[m++] = 3 << 3 | 2;
        sample[m++] = 4;
        sample[m++] = 1 << 3;
        sample[m++] = (uint8_t)(rng() % 8);
        sample[m++] = 2 << 3;
        sample[m++] = 7;
        buf[n++] = 2 << 3 | 2;
        n += put_varint(buf + n, m);
        memcpy(buf + n, sample, m);
        n += m;
    }
    return n;
}

/* ---- round trips ---------------------------------------------------------------------------------------- */

static void test_empty_and_one_byte(void **state)
{
    (void)state;
    size_t n;
    uint8_t *gz = compress_checked(NULL, 0, &n);
    assert_inflates_to(gz, n, (const uint8_t *)"", 0);
    free(gz);
    const uint8_t one = 'x';
    gz = compress_checked(&one, 1, &n);
    assert_int_equal(first_btype(gz), 1); /* a dynamic header or a stored block would be bigger */
    free(gz);
}

static void test_text_uses_a_dynamic_block_and_halves_at_least(void **state)
{
    (void)state;
    static uint8_t buf[100000];
    size_t len = text(buf, sizeof buf), n;
    uint8_t *gz = compress_checked(buf, len, &n);
    assert_int_equal(first_btype(gz), 2);
    assert_true(n < len / 2);
    free(gz);
}

static void test_pprof_like(void **state)
{
    (void)state;
    static uint8_t buf[300000];
    size_t len = pprof_like(buf, sizeof buf);
    assert_true(round_trip(buf, len) < len / 2);
}

static void test_random_mebibyte_goes_stored_within_the_bound(void **state)
{
    (void)state;
    size_t len = 1u << 20, n;
    uint8_t *buf = malloc(len);
    assert_non_null(buf);
    fill_random(buf, len);
    uint8_t *gz = compress_checked(buf, len, &n);
    assert_int_equal(first_btype(gz), 0);
    assert_true(n >= len);
    free(gz);
    /* Bytes of 252 values: each block coded saves a little on its own stored form, but 64 blocks saving less
     * than 5 bytes each, against stored blocks of 65535, end up over the bound; all of it goes out stored. */
    for (size_t i = 0; i < len; i++)
        buf[i] = (uint8_t)(rng() % 252);
    gz = compress_checked(buf, len, &n);
    assert_int_equal(n, gzip_bound(len));
    assert_int_equal(first_btype(gz), 0);
    free(gz);
    free(buf);
}

static void test_runs(void **state)
{
    (void)state;
    size_t len = 1u << 20;
    uint8_t *buf = calloc(1, len);
    assert_non_null(buf);
    assert_true(round_trip(buf, len) < len / 200); /* every match at distance 1, 258 long */
    for (size_t i = 0; i < len; i++)
        buf[i] = (uint8_t)"ab"[i % 2];
    assert_true(round_trip(buf, len) < len / 200);
    for (size_t i = 0; i < len; i++)
        buf[i] = (uint8_t)(i / 1000); /* runs of 1000 */
    round_trip(buf, len);
    /* one run: a literal, then the longest matches at distance 1 */
    memset(buf, 'z', 1000);
    size_t n;
    uint8_t *gz = compress_checked(buf, 1000, &n);
    struct deflate_token tokens[8];
    struct deflate_block blk;
    read_first_coded_block(gz, n, &blk, tokens, 8);
    assert_int_equal(blk.ntokens, 5);
    static const struct deflate_token want[5] = { { 'z', 0 }, { 258, 1 }, { 258, 1 }, { 258, 1 }, { 225, 1 } };
    for (size_t i = 0; i < 5; i++) {
        assert_int_equal(tokens[i].value, want[i].value);
        assert_int_equal(tokens[i].dist, want[i].dist);
    }
    free(gz);
    free(buf);
}

/* Bytes repeated at a period: 32768 is the farthest DEFLATE reaches, and every match there is taken at that
 * distance; at 32769, just past it, nothing matches (a match found there would make zlib refuse the stream).
 * The first 32768 bytes are two blocks of literals (stored), so the first coded block is the repeat. */
static void test_window_edge(void **state)
{
    (void)state;
    size_t len = 2 * 32769, n;
    uint8_t *buf = malloc(len);
    assert_non_null(buf);
    fill_unique_trigrams(buf, 32768);
    for (size_t i = 32768; i < len; i++)
        buf[i] = buf[i - 32768];
    uint8_t *gz = compress_checked(buf, len, &n);
    static struct deflate_token tokens[200];
    struct deflate_block blk;
    read_first_coded_block(gz, n, &blk, tokens, 200);
    assert_true(blk.ntokens > 127 && blk.ntokens < 200);
    size_t covered = 0;
    for (size_t i = 0; i < blk.ntokens; i++) {
        if (tokens[i].dist) {
            assert_int_equal(tokens[i].dist, 32768);
            covered += tokens[i].value;
        }
    }
    assert_true(covered >= 32768);
    free(gz);

    fill_unique_trigrams(buf, 32769);
    for (size_t i = 32769; i < len; i++)
        buf[i] = buf[i - 32769];
    gz = compress_checked(buf, len, &n);
    assert_int_equal(n, gzip_bound(len)); /* nothing matched: all stored */
    free(gz);
    free(buf);
}

/* One byte of lookahead: at the second "abc" the longest match is "abc" (3 bytes), but one byte on,
 * "bcdefghijk" (10) starts, so the "a" goes out as a literal and the 10 bytes as one match. */
static void test_lazy_match_prefers_the_longer_one_a_byte_on(void **state)
{
    (void)state;
    static const char in[] = "1abc2bcdefghijk3abcdefghijk";
    size_t n;
    uint8_t *gz = compress_checked((const uint8_t *)in, sizeof in - 1, &n);
    struct deflate_token tokens[32];
    struct deflate_block blk;
    read_first_coded_block(gz, n, &blk, tokens, 32);
    assert_int_equal(blk.ntokens, 18);
    for (size_t i = 0; i < 17; i++) {
        assert_int_equal(tokens[i].dist, 0);
        assert_int_equal(tokens[i].value, (unsigned char)in[i]);
    }
    assert_int_equal(tokens[17].value, 10);
    assert_int_equal(tokens[17].dist, 12);
    free(gz);
}

/* Sizes around the block split (16384 symbols) and the stored block's 65535, in literal-only, matching and
 * mixed inputs, so blocks of each kind follow blocks of each other kind. */
static void test_block_boundaries(void **state)
{
    (void)state;
    static uint8_t buf[3 * 65536 + 8];
    static const size_t sizes[] = { 16383, 16384, 16385, 32768, 65534, 65535, 65536, 65537, 131070, 131071 };
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        fill_random(buf, sizes[i]);
        round_trip(buf, sizes[i]);
        text(buf, sizes[i]);
        round_trip(buf, sizes[i]);
    }
    /* random, text, random, text: stored and coded blocks alternate */
    size_t n = 0;
    for (int k = 0; k < 4; k++) {
        size_t part = 40000 + k * 3001;
        if (k % 2)
            text(buf + n, part);
        else
            fill_random(buf + n, part);
        n += part;
    }
    size_t text_len = 43001 + 49003, z;
    uint8_t *gz = compress_checked(buf, n, &z);
    assert_int_equal(first_btype(gz), 0);
    assert_true(z < n - text_len / 2); /* the text parts were coded, not stored with the rest */
    free(gz);
}

/* ---- what the blocks hold ------------------------------------------------------------------------------ */

/* A block of matches whose length codes have Fibonacci counts (1, 2, 3, 5, ... 1597, the rarest the longest):
 * with the end-of-block code (count 1) no two weights tie where Huffman pairs them, so its own code is a chain
 * 16 deep, and the block is only valid if the lengths were cut to 15; the longest is then exactly 15. The input is 32768 bytes in which no 3 bytes
 * repeat and no byte repeats its neighbour (two blocks of literals, stored), then copies of its pieces in
 * order, one byte skipped between pieces: each copy's only earlier occurrence is its piece, which is followed
 * by a byte the next copy does not start with, so each copy is one match of exactly its length. */
static void test_lengths_limited_to_15_bits(void **state)
{
    (void)state;
    static const unsigned base[16] = { 3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31 };
    static unsigned plan[4179];
    unsigned np = 0, a = 1597, b = 987;
    for (unsigned k = 0; k < 16; k++) {
        for (unsigned i = 0; i < a; i++)
            plan[np++] = base[k];
        unsigned c = a - b;
        a = b;
        b = c;
    }
    assert_int_equal(np, 4179);
    for (unsigned i = np - 1; i > 0; i--) {
        unsigned j = rng() % (i + 1), t = plan[i];
        plan[i] = plan[j];
        plan[j] = t;
    }
    uint8_t *buf = malloc(2 * 32768);
    assert_non_null(buf);
    fill_unique_trigrams(buf, 32768);
    size_t len = 32768, from = 0;
    for (unsigned i = 0; i < np; i++) {
        memcpy(buf + len, buf + from, plan[i]);
        len += plan[i];
        from += plan[i] + 1;
    }
    assert_true(from <= 32768);
    size_t n;
    uint8_t *gz = compress_checked(buf, len, &n);
    struct deflate_block blk;
    read_first_coded_block(gz, n, &blk, NULL, 0);
    assert_int_equal(blk.type, 2);
    assert_int_equal(blk.longest_litlen, 15);
    free(gz);
    free(buf);
}

/* ---- cap, work, CRC -------------------------------------------------------------------------------------- */

static void expect_refused(const uint8_t *in, size_t len, size_t cap)
{
    uint8_t *out = malloc(cap + GUARD);
    assert_non_null(out);
    memset(out, 0x5a, cap + GUARD);
    assert_int_equal(gzip_compress(in, len, out, cap, work), 0);
    for (size_t i = cap; i < cap + GUARD; i++)
        assert_int_equal(out[i], 0x5a);
    free(out);
}

static void test_cap_too_small_writes_nothing_past_it(void **state)
{
    (void)state;
    static uint8_t buf[70000];
    size_t len = text(buf, sizeof buf), n;
    free(compress_checked(buf, len, &n));
    static const size_t caps[] = { 0, 1, 9, 10, 11, 17, 18, 100 };
    for (size_t i = 0; i < sizeof caps / sizeof caps[0]; i++)
        expect_refused(buf, len, caps[i]);
    expect_refused(buf, len, n - 1);
    expect_refused(buf, len, n / 2);
    uint8_t *exact = malloc(n);
    assert_non_null(exact);
    assert_int_equal(gzip_compress(buf, len, exact, n, work), n);
    assert_inflates_to(exact, n, buf, len);
    free(exact);

    fill_random(buf, sizeof buf); /* the stored path, first tried coded */
    free(compress_checked(buf, sizeof buf, &n));
    expect_refused(buf, sizeof buf, n - 1);
    expect_refused(buf, sizeof buf, 65535);
    expect_refused(NULL, 0, 19);
}

static void test_output_does_not_depend_on_the_work_area(void **state)
{
    (void)state;
    static uint8_t buf[50000], first[60000], second[60000];
    size_t len = pprof_like(buf, sizeof buf);
    memset(work, 0, sizeof work);
    size_t n1 = gzip_compress(buf, len, first, sizeof first, work);
    memset(work, 0xff, sizeof work);
    size_t n2 = gzip_compress(buf, len, second, sizeof second, work);
    assert_true(n1 > 0);
    assert_int_equal(n1, n2);
    assert_memory_equal(first, second, n1);
}

static void test_crc32(void **state)
{
    (void)state;
    assert_int_equal(crc32_update(0, "123456789", 9), 0xCBF43926u);
    assert_int_equal(crc32_update(0, "", 0), 0);
    assert_int_equal(crc32_update(0, "a", 1), 0xE8B7BE43u);
    static uint8_t buf[10000];
    fill_random(buf, sizeof buf);
    uint32_t mine = 0;
    uLong theirs = crc32(0, Z_NULL, 0);
    for (size_t at = 0; at < sizeof buf;) {
        size_t step = rng() % 700;
        step = step < sizeof buf - at ? step : sizeof buf - at;
        mine = crc32_update(mine, buf + at, step);
        theirs = crc32(theirs, buf + at, (uInt)step);
        assert_int_equal(mine, theirs);
        at += step;
    }
}

/* ---- the figure for the record --------------------------------------------------------------------------- */

static void test_print_pprof_figure(void **state)
{
    (void)state;
    static uint8_t buf[200000], out[210000];
    size_t len = pprof_like(buf, sizeof buf);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    size_t n = gzip_compress(buf, len, out, sizeof out, work);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    assert_true(n > 0);
    uLongf zn = compressBound(len);
    uint8_t *z = malloc(zn);
    assert_non_null(z);
    assert_int_equal(compress2(z, &zn, buf, len, 6), Z_OK);
    print_message("gzip: pprof-like %zu bytes -> %zu (%.1f%%; zlib -6: %lu), %.2f ms on this host\n", len, n,
                  100.0 * (double)n / (double)len, (unsigned long)zn,
                  (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6);
    free(z);
}

UNIT_MAIN(NULL, NULL,
          test_empty_and_one_byte, test_text_uses_a_dynamic_block_and_halves_at_least, test_pprof_like,
          test_random_mebibyte_goes_stored_within_the_bound, test_runs, test_window_edge,
          test_lazy_match_prefers_the_longer_one_a_byte_on, test_block_boundaries, test_lengths_limited_to_15_bits,
          test_cap_too_small_writes_nothing_past_it, test_output_does_not_depend_on_the_work_area, test_crc32,
          test_print_pprof_figure)
