/* kernel/profiler/fields.c: the field writer and strict reader (kernel/profiler/fields.h) under the raw and stream codecs. */
#include "kernel/profiler/fields.h"

#include "kernel/lib/hex.h"
#include "kernel/lib/string.h"

/* ---- writing: by hand rather than through ksnprintf, since a line is written per sample or datagram ---- */

void field_writer_init(struct field_writer *w, char *buf, size_t cap)
{
    textbuf_init(&w->text, buf, cap);
    w->overflow = cap == 0;
}

void field_put(struct field_writer *w, const char *text, size_t n)
{
    if (w->overflow || n > textbuf_room(&w->text)) {
        w->overflow = true;
        return;
    }
    textbuf_append(&w->text, text, n);
}

void field_put_str(struct field_writer *w, const char *text)
{
    field_put(w, text, strlen(text));
}

void field_put_u64(struct field_writer *w, uint64_t v)
{
    char digits[20];
    size_t n = 0;
    do {
        digits[sizeof digits - 1 - n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    field_put(w, digits + sizeof digits - n, n);
}

void field_put_i64(struct field_writer *w, int64_t v)
{
    if (v < 0) {
        field_put(w, "-", 1);
        field_put_u64(w, (uint64_t)0 - (uint64_t)v); /* right for INT64_MIN too */
    } else {
        field_put_u64(w, (uint64_t)v);
    }
}

void field_put_hex(struct field_writer *w, uint64_t v)
{
    char digits[18];
    size_t n = 0;
    do {
        digits[sizeof digits - 1 - n++] = hex_lower((unsigned)v);
        v >>= 4;
    } while (v);
    digits[sizeof digits - 1 - n++] = 'x';
    digits[sizeof digits - 1 - n++] = '0';
    field_put(w, digits + sizeof digits - n, n);
}

size_t field_finish(struct field_writer *w)
{
    field_put(w, "\n", 1);
    if (w->overflow) {
        if (w->text.cap > 0)
            w->text.buf[0] = 0;
        return 0;
    }
    return w->text.len;
}

/* ---- reading ---- */

bool field_open(struct field_cursor *c, const char *line, size_t len, bool crlf)
{
    if (len == 0 || line[len - 1] != '\n')
        return false;
    len--;
    if (crlf && len > 0 && line[len - 1] == '\r')
        len--;
    for (size_t i = 0; i < len; i++)
        if (line[i] == '\n' || line[i] == '\r' || line[i] == 0)
            return false;
    c->p = line;
    c->end = line + len;
    return true;
}

bool field_at_end(const struct field_cursor *c)
{
    return c->p == c->end;
}

bool field_end(const struct field_cursor *c)
{
    return c->p == c->end || *c->p == ' ';
}

bool field_literal(struct field_cursor *c, const char *text)
{
    size_t n = strlen(text);
    if ((size_t)(c->end - c->p) < n || memcmp(c->p, text, n) != 0)
        return false;
    c->p += n;
    return true;
}

bool field_u64(struct field_cursor *c, uint64_t max, uint64_t *out)
{
    const char *start = c->p;
    uint64_t v = 0;
    while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
        unsigned d = (unsigned)(*c->p - '0');
        if (v > (UINT64_MAX - d) / 10)
            return false;
        v = v * 10 + d;
        c->p++;
    }
    size_t n = (size_t)(c->p - start);
    if (n == 0 || (n > 1 && *start == '0') || v > max || !field_end(c))
        return false;
    *out = v;
    return true;
}

bool field_u32(struct field_cursor *c, uint32_t *out)
{
    uint64_t v;
    if (!field_u64(c, UINT32_MAX, &v))
        return false;
    *out = (uint32_t)v;
    return true;
}

bool field_i64(struct field_cursor *c, int64_t *out)
{
    bool negative = c->p < c->end && *c->p == '-';
    if (negative)
        c->p++;
    uint64_t v;
    if (!field_u64(c, negative ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX, &v) || (negative && v == 0))
        return false;
    *out = negative ? (int64_t)(0 - v) : (int64_t)v;
    return true;
}

bool field_hex(struct field_cursor *c, uint64_t *out)
{
    if (!field_literal(c, "0x"))
        return false;
    const char *start = c->p;
    uint64_t v = 0;
    while (c->p < c->end) {
        char ch = *c->p;
        unsigned d;
        if (ch >= '0' && ch <= '9')
            d = (unsigned)(ch - '0');
        else if (ch >= 'a' && ch <= 'f')
            d = (unsigned)(ch - 'a' + 10);
        else
            break;
        v = v << 4 | d;
        c->p++;
    }
    size_t n = (size_t)(c->p - start);
    if (n == 0 || n > 16 || (n > 1 && *start == '0') || !field_end(c))
        return false;
    *out = v;
    return true;
}

bool field_word(struct field_cursor *c, char *buf, size_t max)
{
    size_t n = 0;
    while (c->p < c->end && *c->p != ' ') {
        if (n == max)
            return false;
        buf[n++] = *c->p++;
    }
    buf[n] = 0;
    return n > 0;
}

bool field_word_valid(const char *word, size_t max)
{
    size_t n = 0;
    for (; word[n]; n++)
        if (n == max || word[n] <= ' ' || word[n] > '~')
            return false;
    return n > 0;
}

bool field_hex_id_valid(const char *id, size_t max_bytes)
{
    size_t n = 0;
    for (; id[n]; n++)
        if (n == 2 * max_bytes || !((id[n] >= '0' && id[n] <= '9') || (id[n] >= 'a' && id[n] <= 'f')))
            return false;
    return n % 2 == 0;
}
