/* kernel/profiler/pb_writer.c: the protocol-buffers writer (kernel/profiler/pb_writer.h): a buffer that
 * doubles on the heap up to its limit, varints, keys, length-delimited fields, nested messages whose length
 * is put in front of the body once the body is written. */
#include "kernel/profiler/pb_writer.h"

#include "kernel/heap.h"
#include "kernel/lib/string.h"

void pb_init(struct pb_buf *b, size_t limit)
{
    b->data = NULL;
    b->len = b->cap = 0;
    b->limit = limit;
    b->failed = false;
}

void pb_free(struct pb_buf *b)
{
    kfree(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

uint8_t *pb_take(struct pb_buf *b, size_t *len)
{
    uint8_t *data = b->failed ? NULL : b->data;
    *len = data ? b->len : 0;
    if (!data)
        kfree(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
    return data;
}

/* Room for more bytes past len; false (and failed) when the heap or the limit says no. */
static bool reserve(struct pb_buf *b, size_t more)
{
    if (b->failed)
        return false;
    if (more > b->limit || b->len > b->limit - more) {
        b->failed = true;
        return false;
    }
    size_t need = b->len + more;
    if (need <= b->cap)
        return true;
    size_t cap = b->cap ? b->cap : 256;
    while (cap < need)
        cap = cap > b->limit / 2 ? b->limit : cap * 2;
    uint8_t *data = kzalloc(cap);
    if (!data) {
        b->failed = true;
        return false;
    }
    if (b->len)
        memcpy(data, b->data, b->len);
    kfree(b->data);
    b->data = data;
    b->cap = cap;
    return true;
}

size_t pb_varint_size(uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

/* The varint of v at p (room for PB_VARINT_MAX); its length. */
static size_t encode_varint(uint8_t *p, uint64_t v)
{
    size_t n = 0;
    while (v >= 0x80) {
        p[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (uint8_t)v;
    return n;
}

void pb_put_varint(struct pb_buf *b, uint64_t v)
{
    if (reserve(b, PB_VARINT_MAX))
        b->len += encode_varint(b->data + b->len, v);
}

void pb_put_bytes(struct pb_buf *b, const void *data, size_t len)
{
    if (len && reserve(b, len)) {
        memcpy(b->data + b->len, data, len);
        b->len += len;
    }
}

void pb_put_key(struct pb_buf *b, uint32_t field, unsigned wire)
{
    pb_put_varint(b, (uint64_t)field << 3 | wire);
}

void pb_uint(struct pb_buf *b, uint32_t field, uint64_t v)
{
    pb_put_key(b, field, PB_WIRE_VARINT);
    pb_put_varint(b, v);
}

void pb_bytes(struct pb_buf *b, uint32_t field, const void *data, size_t len)
{
    pb_put_key(b, field, PB_WIRE_LEN);
    pb_put_varint(b, len);
    pb_put_bytes(b, data, len);
}

void pb_string(struct pb_buf *b, uint32_t field, const char *s)
{
    pb_bytes(b, field, s, strlen(s));
}

pb_mark pb_begin(struct pb_buf *b, uint32_t field)
{
    pb_put_key(b, field, PB_WIRE_LEN);
    return b->len;
}

void pb_end(struct pb_buf *b, pb_mark mark)
{
    if (b->failed)
        return;
    size_t body = b->len - mark;
    size_t n = pb_varint_size(body);
    if (!reserve(b, n))
        return;
    memmove(b->data + mark + n, b->data + mark, body);
    encode_varint(b->data + mark, body);
    b->len += n;
}

void pb_packed(struct pb_buf *b, uint32_t field, const uint64_t *v, size_t n)
{
    if (n == 0)
        return;
    pb_mark m = pb_begin(b, field);
    for (size_t i = 0; i < n; i++)
        pb_put_varint(b, v[i]);
    pb_end(b, m);
}
