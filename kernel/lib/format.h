/* kernel/lib/format.h: the kernel's printf engine. One formatter, streaming through a callback, serves
 * ksnprintf, sink_printf and the panic path; it allocates nothing and takes no locks.
 *
 * Conversions: %d %i %u %x %X %o %c %s %p %%, with flags '-' '0' ' ' '+' '#', a width and a precision
 * (digits or '*'), and the length modifiers hh h l ll z t j. %p prints 0x and 16 hex digits.
 * A NULL %s prints "(null)". An unknown conversion is printed as written, never read past.
 * In kernel/lib: includes only kernel/lib/ and the freestanding C headers (tests/host/test_layering.py). */
#ifndef KERNEL_LIB_FORMAT_H
#define KERNEL_LIB_FORMAT_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

typedef void (*format_emit_fn)(void *arg, const char *text, size_t len);

/* Returns the number of characters emitted. */
size_t format_v(format_emit_fn emit, void *arg, const char *fmt, va_list ap);

/* snprintf semantics: returns the length the full output would have had; writes at most n-1 characters
 * and a NUL when n > 0. */
size_t kvsnprintf(char *buf, size_t n, const char *fmt, va_list ap);
size_t ksnprintf(char *buf, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* An IPv4 address, host order (10.0.2.15 is 0x0a00020f), as dotted-quad text: the one writer of the form, so
 * `sink_printf(out, "%s:%u", ipv4_text(ip).s, port)` prints it in place (the value lives to the end of the
 * full expression, C11 6.2.4). */
#define IPV4_TEXT_MAX 16 /* "255.255.255.255" and its NUL */
struct ipv4_text {
    char s[IPV4_TEXT_MAX];
};
struct ipv4_text ipv4_text(uint32_t ip);

#endif
