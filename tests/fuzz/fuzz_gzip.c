/* tests/fuzz/fuzz_gzip.c: gzip_compress (kernel/lib/gzip.c) on arbitrary bytes, checked against zlib: the output
 * with gzip_bound's room is never larger, inflates to the input exactly (zlib checks the CRC-32 and length in
 * the trailer), and the same input with less room than it needs is refused without a byte written past that
 * room. The first byte picks the shape: the rest as it is, or the rest repeated with a byte changed in each
 * copy up to 16 KiB, so a short input still reaches long matches, runs and repeats. */
#include <string.h>
#include <zlib.h>

#include "fuzz.h"
#include "kernel/lib/gzip.h"

#define GUARD 32
#define EXPANDED_MAX 16384

static uint8_t work[GZIP_WORK_BYTES];
static uint8_t expanded[EXPANDED_MAX];

static void check_round_trip(const uint8_t *in, size_t len, int refusals)
{
    size_t bound = gzip_bound(len);
    uint8_t *out = malloc(bound + GUARD), *back = malloc(len + 1);
    CHECK(out && back);
    memset(out, 0xa5, bound + GUARD);
    size_t n = gzip_compress(in, len, out, bound, work);
    CHECK(n >= 18 && n <= bound);
    for (size_t i = bound; i < bound + GUARD; i++)
        CHECK(out[i] == 0xa5);

    z_stream z;
    memset(&z, 0, sizeof z);
    CHECK(inflateInit2(&z, 16 + MAX_WBITS) == Z_OK);
    z.next_in = out;
    z.avail_in = (uInt)n;
    z.next_out = back;
    z.avail_out = (uInt)(len + 1);
    CHECK(inflate(&z, Z_FINISH) == Z_STREAM_END);
    CHECK(z.avail_in == 0 && z.total_out == len);
    CHECK(len == 0 || memcmp(back, in, len) == 0);
    inflateEnd(&z);

    /* one byte short, and a cap the input picks below that: refused, nothing past the cap touched */
    size_t caps[2] = { n - 1, len ? (size_t)in[0] * (n - 1) / 256 : 0 };
    for (int k = 0; k < refusals; k++) {
        memset(out, 0x5a, caps[k] + GUARD);
        CHECK(gzip_compress(in, len, out, caps[k], work) == 0);
        for (size_t i = caps[k]; i < caps[k] + GUARD; i++)
            CHECK(out[i] == 0x5a);
    }
    free(out);
    free(back);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0 || (data[0] & 15) != 15 || size < 2) {
        check_round_trip(data + (size > 0), size - (size > 0), 2);
        return 0;
    }
    const uint8_t *piece = data + 1;
    size_t plen = size - 1, len = 0, total = 1000 + (size_t)data[0] * (EXPANDED_MAX - 1000) / 255;
    for (unsigned copy = 0; len < total; copy++) {
        size_t n = plen < total - len ? plen : total - len;
        memcpy(expanded + len, piece, n);
        expanded[len + copy % n] ^= (uint8_t)(copy | 1);
        len += n;
    }
    check_round_trip(expanded, len, 1); /* the costly shape: one refusal */
    return 0;
}
