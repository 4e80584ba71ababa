/* kernel/profiler/pb_writer.h: a small protocol-buffers writer (kernel/profiler/pb_writer.c) -- varints,
 * length-delimited fields and nested messages, packed repeated varints -- into a (zeroed) heap buffer that grows up to
 * a stated limit, so the pprof encoder (kernel/profiler/pprof_encode.h) writes profile.proto without a
 * generated library. Only what profile.proto needs: wire types 0 (varint) and 2 (length-delimited); no
 * zigzag, no fixed-width fields. Task context (kmalloc). */
#ifndef KERNEL_PROFILER_PB_WRITER_H
#define KERNEL_PROFILER_PB_WRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PB_WIRE_VARINT 0
#define PB_WIRE_LEN 2
#define PB_VARINT_MAX 10 /* bytes of the longest varint (a 64-bit value) */

/* A growing buffer. Once anything fails (out of memory, past limit) failed is set, every later write does
 * nothing, and the caller finds out once, at the end. */
struct pb_buf {
    uint8_t *data;
    size_t len;
    size_t cap;
    size_t limit; /* the most it may grow to */
    bool failed;
};

/* A nested message or packed field being written: where its body began. */
typedef size_t pb_mark;

/* Empty, allocating nothing yet. */
void pb_init(struct pb_buf *b, size_t limit);
/* Gives the storage back (NULL-safe), leaving b empty. */
void pb_free(struct pb_buf *b);
/* Hands the bytes over to the caller (kfree gives them back) and leaves b empty; NULL when it failed or is
 * empty. */
uint8_t *pb_take(struct pb_buf *b, size_t *len);

/* The bytes of v as a varint: 1 .. PB_VARINT_MAX. */
size_t pb_varint_size(uint64_t v);
/* The raw pieces. */
void pb_put_varint(struct pb_buf *b, uint64_t v);
void pb_put_bytes(struct pb_buf *b, const void *data, size_t len);
void pb_put_key(struct pb_buf *b, uint32_t field, unsigned wire);

/* Fields. pb_uint writes even 0 (the caller leaves out what it wants absent); pb_string/pb_bytes write a
 * length-delimited field. */
void pb_uint(struct pb_buf *b, uint32_t field, uint64_t v);
void pb_bytes(struct pb_buf *b, uint32_t field, const void *data, size_t len);
void pb_string(struct pb_buf *b, uint32_t field, const char *s);

/* A nested message (or a packed repeated field, whose body is its varints one after another): begin writes
 * the key and returns the mark; the body follows; end puts its length in front of it. Nest freely: the length
 * is put in by moving the body up by its varint's size, so each level costs one move of its own body. */
pb_mark pb_begin(struct pb_buf *b, uint32_t field);
void pb_end(struct pb_buf *b, pb_mark mark);

/* A packed repeated varint field of n values (nothing when n is 0). */
void pb_packed(struct pb_buf *b, uint32_t field, const uint64_t *v, size_t n);

#endif
