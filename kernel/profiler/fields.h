/* kernel/profiler/fields.h: one line of space-separated fields, written and read back strictly, as the raw sample
 * format (kernel/profiler/raw.h) and the stream's datagrams (kernel/profiler/stream_codec.h) carry them: every number
 * without leading zeros, exactly one space between fields, nothing after the last. Both formats come back from
 * hosts and fuzzers, so each reader accepts only the one spelling the writer produces. Portable, no state
 * beyond the caller's cursor and writer. */
#ifndef KERNEL_PROFILER_FIELDS_H
#define KERNEL_PROFILER_FIELDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel/lib/textbuf.h"

/* ---- writing ---- */

/* A bounded line writer: when anything does not fit (with the NUL), the whole line is given up, never cut. */
struct field_writer {
    struct textbuf text;
    bool overflow;
};

void field_writer_init(struct field_writer *w, char *buf, size_t cap);
void field_put(struct field_writer *w, const char *text, size_t n);
void field_put_str(struct field_writer *w, const char *text);
void field_put_u64(struct field_writer *w, uint64_t v);
void field_put_i64(struct field_writer *w, int64_t v);
/* "0x" and lowercase hex digits without leading zeros, as field_hex reads it. */
void field_put_hex(struct field_writer *w, uint64_t v);
/* Ends the line with "\n": its length with the NUL written after it, or 0 and an empty buffer when anything
 * did not fit. */
size_t field_finish(struct field_writer *w);

/* ---- reading ---- */

struct field_cursor {
    const char *p;
    const char *end; /* the end of the line's content: its newline stripped */
};

/* The content of a complete line: it ends with "\n" (or "\r\n" when crlf, as a terminal sends it) and holds
 * no other newline, CR or NUL. */
bool field_open(struct field_cursor *c, const char *line, size_t len, bool crlf);
bool field_at_end(const struct field_cursor *c);
/* A field ends at a space or at the end of the line. */
bool field_end(const struct field_cursor *c);
/* Exactly text, which is consumed. */
bool field_literal(struct field_cursor *c, const char *text);
/* Decimal without sign or leading zero (but "0"), at most max, then a field's end. */
bool field_u64(struct field_cursor *c, uint64_t max, uint64_t *out);
bool field_u32(struct field_cursor *c, uint32_t *out);
/* The same with an optional '-' ("-0" is refused), INT64_MIN..INT64_MAX. */
bool field_i64(struct field_cursor *c, int64_t *out);
/* "0x" and 1..16 lowercase hex digits, no leading zero (but 0x0), then a field's end. */
bool field_hex(struct field_cursor *c, uint64_t *out);
/* Characters up to the next space or the end into buf: 1..max of them, NUL-terminated (buf holds max + 1). */
bool field_word(struct field_cursor *c, char *buf, size_t max);

/* A word a format may carry: 1..max printable characters, none of them a space. */
bool field_word_valid(const char *word, size_t max);
/* Lowercase hex of whole bytes, at most max_bytes of them; "" (none) passes. */
bool field_hex_id_valid(const char *id, size_t max_bytes);

#endif
