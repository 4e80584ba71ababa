/* kernel/lib/gzip.h: a buffer compressed as one gzip member (RFC 1952) holding DEFLATE data (RFC 1951): LZ77
 * matches over a 32 KiB window found through hash chains, coded with Huffman codes (kernel/lib/gzip.c), and
 * the CRC-32 gzip's trailer carries. What the HTTP server sends a pprof profile in: pprof's own files are
 * gzipped protobuf, and `go tool pprof`, Parca and Pyroscope all read them so. Pure: no allocation (the caller
 * hands in the scratch), no clock, no locks, so the host tests drive it against zlib. */
#ifndef KERNEL_LIB_GZIP_H
#define KERNEL_LIB_GZIP_H

#include <stddef.h>
#include <stdint.h>

/* The scratch gzip_compress needs, in bytes; the caller allocates it, at any alignment: 32768 hash heads and
 * 32768 chain links over the window (192 KiB) and one block's 16384 symbols with its Huffman tables (the rest).
 * kernel/lib/gzip.c checks at compile time that what it uses fits. */
#define GZIP_WORK_BYTES (256u * 1024u)

/* The CRC-32 of gzip, zlib and Ethernet (reflected polynomial 0xEDB88320), continued from crc over len more
 * bytes: crc32_update(0, data, len) is the checksum of data. */
uint32_t crc32_update(uint32_t crc, const void *data, size_t len);

/* Compresses in[0..len) into out[0..cap) as one gzip member and returns its length, or 0 when it does not fit
 * in cap (out's contents are then unspecified; nothing past out + cap is written). work is GZIP_WORK_BYTES of
 * scratch, any contents, its own for the call (two calls at once need two). len may be 0. The output is a valid
 * gzip member whatever the input, the same for the same input; it is never larger than len plus 5 bytes per
 * 65535 of input plus 18, because blocks that would not shrink are stored, and if coding blocks one by one
 * still comes out larger, the whole input is. Task context: time grows linearly with len, with a bounded
 * search per byte, and it takes no locks. */
size_t gzip_compress(const uint8_t *in, size_t len, uint8_t *out, size_t cap, void *work);

/* The most gzip_compress can write for len bytes of input: room for it never makes it fail. */
static inline size_t gzip_bound(size_t len)
{
    return len + 5 * (len / 65535 + 1) + 18;
}

#endif
