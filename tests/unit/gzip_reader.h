/* tests/unit/gzip_reader.h: a reader of the first coded DEFLATE block in a gzip member, written plainly for the
 * tests (tests/unit/gzip_reader.c): zlib says whether a stream is valid, this says how it was coded -- which
 * block type, how long the codes, and which literals and matches, so a test can check the match finder chose
 * what it should. */
#ifndef TESTS_UNIT_GZIP_READER_H
#define TESTS_UNIT_GZIP_READER_H

#include <stddef.h>
#include <stdint.h>

/* A literal (dist 0, value the byte) or a match (value its length, dist its distance). */
struct deflate_token {
    unsigned value, dist;
};

struct deflate_block {
    unsigned type;           /* 1 fixed, 2 dynamic */
    unsigned longest_litlen; /* the longest literal/length code, in bits */
    size_t ntokens;          /* all of the block's tokens, even those past the array's end */
};

/* Skips the stored blocks at the start of the member gz[0..n) and reads the first coded one, storing up to max
 * of its tokens. Fails the running test if the stream is malformed. */
void read_first_coded_block(const uint8_t *gz, size_t n, struct deflate_block *blk, struct deflate_token *tokens,
                            size_t max);

#endif
