/* kernel/lib/format.c: the kernel's printf engine (kernel/lib/format.h). format_v parses the format once and streams
 * every piece -- literal runs, padding, digits -- straight to the caller's emit callback, so it needs no
 * output buffer, allocates nothing and takes no locks; kvsnprintf and ksnprintf are a bounded-buffer emit on
 * top. Integers only: the kernel is built -mgeneral-regs-only, so there is no floating point to print. */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel/lib/hex.h"
#include "kernel/lib/format.h"
#include "kernel/lib/string.h"
#include "kernel/lib/textbuf.h"

enum format_flag {
    FLAG_LEFT = 1u << 0,  /* '-': pad on the right */
    FLAG_ZERO = 1u << 1,  /* '0': pad numbers with zeros after the sign */
    FLAG_SPACE = 1u << 2, /* ' ': a space where a plus sign would go */
    FLAG_PLUS = 1u << 3,  /* '+': always print a sign on signed conversions */
    FLAG_ALT = 1u << 4,   /* '#': 0x/0X prefix on hex, a leading 0 on octal */
};

enum length_modifier { LENGTH_NONE, LENGTH_HH, LENGTH_H, LENGTH_L, LENGTH_LL, LENGTH_Z, LENGTH_T, LENGTH_J };

struct conversion {
    unsigned flags;
    size_t width;
    bool has_precision;
    size_t precision;
    enum length_modifier length;
};

/* Widths and precisions saturate here, as in C where they are ints; the clamp only keeps the digit parser
 * from overflowing on absurd formats. */
#define FORMAT_COUNT_MAX 0x7fffffffu

/* Enough for a 64-bit value in octal (22 digits), the longest base printed. */
#define MAX_DIGITS 24

struct output {
    format_emit_fn emit;
    void *arg;
    size_t count;
};

/* The callback never sees an empty piece, so emitters need not special-case len == 0. */
static void put(struct output *out, const char *text, size_t len)
{
    if (len == 0)
        return;
    out->emit(out->arg, text, len);
    out->count += len;
}

static void put_char(struct output *out, char c)
{
    put(out, &c, 1);
}

/* Padding goes out in chunks from a small stack array, so a huge width costs calls, not memory. */
static void put_repeated(struct output *out, char c, size_t count)
{
    char chunk[32];
    size_t fill = count < sizeof chunk ? count : sizeof chunk;
    for (size_t i = 0; i < fill; i++)
        chunk[i] = c;
    while (count > 0) {
        size_t piece = count < sizeof chunk ? count : sizeof chunk;
        put(out, chunk, piece);
        count -= piece;
    }
}

static unsigned flag_for(char c)
{
    switch (c) {
    case '-': return FLAG_LEFT;
    case '0': return FLAG_ZERO;
    case ' ': return FLAG_SPACE;
    case '+': return FLAG_PLUS;
    case '#': return FLAG_ALT;
    default: return 0;
    }
}

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static size_t read_count(const char **cursor)
{
    const char *p = *cursor;
    size_t value = 0;
    while (is_digit(*p)) {
        value = value * 10 + (size_t)(*p - '0');
        if (value > FORMAT_COUNT_MAX)
            value = FORMAT_COUNT_MAX;
        p++;
    }
    *cursor = p;
    return value;
}

static enum length_modifier read_length(const char **cursor)
{
    const char *p = *cursor;
    enum length_modifier length = LENGTH_NONE;
    switch (*p) {
    case 'h':
        if (p[1] == 'h') {
            length = LENGTH_HH;
            p++;
        } else {
            length = LENGTH_H;
        }
        p++;
        break;
    case 'l':
        if (p[1] == 'l') {
            length = LENGTH_LL;
            p++;
        } else {
            length = LENGTH_L;
        }
        p++;
        break;
    case 'z': length = LENGTH_Z; p++; break;
    case 't': length = LENGTH_T; p++; break;
    case 'j': length = LENGTH_J; p++; break;
    default: break;
    }
    *cursor = p;
    return length;
}

/* Reads a signed argument of the promoted type the length modifier names, narrowing hh and h back to the
 * char and short the caller meant. %zd takes the signed type of size_t's width, which is ptrdiff_t's. */
static int64_t fetch_signed(va_list *args, enum length_modifier length)
{
    switch (length) {
    case LENGTH_HH: return (signed char)va_arg(*args, int);
    case LENGTH_H: return (short)va_arg(*args, int);
    case LENGTH_L: return va_arg(*args, long);
    case LENGTH_LL: return va_arg(*args, long long);
    case LENGTH_Z: return va_arg(*args, ptrdiff_t);
    case LENGTH_T: return va_arg(*args, ptrdiff_t);
    case LENGTH_J: return va_arg(*args, intmax_t);
    case LENGTH_NONE: break;
    }
    return va_arg(*args, int);
}

/* The unsigned counterpart; %tu/%tx take the unsigned type of ptrdiff_t's width, which is size_t's. */
static uint64_t fetch_unsigned(va_list *args, enum length_modifier length)
{
    switch (length) {
    case LENGTH_HH: return (unsigned char)va_arg(*args, unsigned int);
    case LENGTH_H: return (unsigned short)va_arg(*args, unsigned int);
    case LENGTH_L: return va_arg(*args, unsigned long);
    case LENGTH_LL: return va_arg(*args, unsigned long long);
    case LENGTH_Z: return va_arg(*args, size_t);
    case LENGTH_T: return va_arg(*args, size_t);
    case LENGTH_J: return va_arg(*args, uintmax_t);
    case LENGTH_NONE: break;
    }
    return va_arg(*args, unsigned int);
}

/* Writes value's digits right-aligned ending at end; returns how many. */
static size_t render_digits(uint64_t value, unsigned base, bool upper, char *end)
{
    const char *digit_chars = upper ? "0123456789ABCDEF" : "0123456789abcdef";
    size_t count = 0;
    do {
        *--end = digit_chars[value % base];
        value /= base;
        count++;
    } while (value != 0);
    return count;
}

/* Lays out [padding][sign][prefix][precision zeros][digits][padding] the way C's printf does. The sign is
 * passed separately from the magnitude so INT64_MIN needs no negation of a signed value. */
static void put_integer(struct output *out, const struct conversion *conv, uint64_t magnitude, bool negative,
                        bool is_signed, unsigned base, bool upper)
{
    char digits[MAX_DIGITS];
    size_t digit_count = 0;
    /* C: a zero value with precision 0 prints no digits at all. */
    if (!(conv->has_precision && conv->precision == 0 && magnitude == 0))
        digit_count = render_digits(magnitude, base, upper, digits + sizeof digits);
    const char *digit_start = digits + sizeof digits - digit_count;

    char sign = 0;
    if (is_signed) {
        if (negative)
            sign = '-';
        else if (conv->flags & FLAG_PLUS)
            sign = '+';
        else if (conv->flags & FLAG_SPACE)
            sign = ' ';
    }

    size_t precision_zeros = 0;
    if (conv->has_precision && conv->precision > digit_count)
        precision_zeros = conv->precision - digit_count;

    const char *prefix = "";
    size_t prefix_len = 0;
    if (conv->flags & FLAG_ALT) {
        if (base == 16 && magnitude != 0) {
            prefix = upper ? "0X" : "0x";
            prefix_len = 2;
        }
        /* '#' on octal makes the first digit a 0, unless it already is one. */
        if (base == 8 && precision_zeros == 0 && (digit_count == 0 || magnitude != 0))
            precision_zeros = 1;
    }

    size_t body = (sign ? 1 : 0) + prefix_len + precision_zeros + digit_count;
    size_t padding = conv->width > body ? conv->width - body : 0;
    /* An explicit precision overrides the '0' flag, as in C. */
    bool zero_pad = (conv->flags & FLAG_ZERO) && !(conv->flags & FLAG_LEFT) && !conv->has_precision;

    if (!(conv->flags & FLAG_LEFT) && !zero_pad)
        put_repeated(out, ' ', padding);
    if (sign)
        put_char(out, sign);
    put(out, prefix, prefix_len);
    put_repeated(out, '0', precision_zeros + (zero_pad ? padding : 0));
    put(out, digit_start, digit_count);
    if (conv->flags & FLAG_LEFT)
        put_repeated(out, ' ', padding);
}

/* Text (%c, %s, %p) pads with spaces only; '0' applies to numbers. */
static void put_padded_text(struct output *out, const struct conversion *conv, const char *text, size_t len)
{
    size_t padding = conv->width > len ? conv->width - len : 0;
    if (!(conv->flags & FLAG_LEFT))
        put_repeated(out, ' ', padding);
    put(out, text, len);
    if (conv->flags & FLAG_LEFT)
        put_repeated(out, ' ', padding);
}

/* %s reads at most precision bytes, so a precision may bound a buffer that has no NUL. */
static size_t bounded_length(const char *text, const struct conversion *conv)
{
    size_t len = 0;
    while ((!conv->has_precision || len < conv->precision) && text[len])
        len++;
    return len;
}

/* The flags, width, precision and length of one conversion, read from just after its '%'; '*' takes its
 * value from the arguments, as in C. Leaves *cursor on the specifier character. */
static struct conversion read_conversion(const char **cursor, va_list *args)
{
    const char *p = *cursor;
    struct conversion conv = { 0, 0, false, 0, LENGTH_NONE };

    for (unsigned flag; (flag = flag_for(*p)) != 0; p++)
        conv.flags |= flag;

    if (*p == '*') {
        int width = va_arg(*args, int);
        p++;
        if (width < 0) {
            /* C: a negative '*' width is the '-' flag and its magnitude; computed unsigned for INT_MIN. */
            conv.flags |= FLAG_LEFT;
            conv.width = 0u - (unsigned)width;
        } else {
            conv.width = (size_t)width;
        }
    } else {
        conv.width = read_count(&p);
    }

    if (*p == '.') {
        p++;
        conv.has_precision = true;
        if (*p == '*') {
            int precision = va_arg(*args, int);
            p++;
            /* C: a negative '*' precision is as if none were given. */
            if (precision < 0)
                conv.has_precision = false;
            else
                conv.precision = (size_t)precision;
        } else {
            conv.precision = read_count(&p);
        }
    }

    conv.length = read_length(&p);
    *cursor = p;
    return conv;
}

/* %d %i %u %x %X %o; false if specifier is none of them, with no argument taken. */
static bool put_integer_conversion(struct output *out, const struct conversion *conv, char specifier,
                                   va_list *args)
{
    switch (specifier) {
    case 'd':
    case 'i': {
        int64_t value = fetch_signed(args, conv->length);
        uint64_t magnitude = value < 0 ? 0u - (uint64_t)value : (uint64_t)value;
        put_integer(out, conv, magnitude, value < 0, true, 10, false);
        return true;
    }
    case 'u':
        put_integer(out, conv, fetch_unsigned(args, conv->length), false, false, 10, false);
        return true;
    case 'x':
        put_integer(out, conv, fetch_unsigned(args, conv->length), false, false, 16, false);
        return true;
    case 'X':
        put_integer(out, conv, fetch_unsigned(args, conv->length), false, false, 16, true);
        return true;
    case 'o':
        put_integer(out, conv, fetch_unsigned(args, conv->length), false, false, 8, false);
        return true;
    default:
        return false;
    }
}

/* Always the full 64-bit width, so addresses line up in tables and backtraces. */
static void put_pointer(struct output *out, const struct conversion *conv, const void *pointer)
{
    uint64_t address = (uint64_t)(uintptr_t)pointer;
    char text[2 + 16];
    text[0] = '0';
    text[1] = 'x';
    for (int i = 0; i < 16; i++)
        text[2 + i] = hex_lower((unsigned)(address >> (60 - 4 * i)));
    put_padded_text(out, conv, text, sizeof text);
}

/* %c %s %p %%; false if specifier is none of them, with no argument taken. Length modifiers belong to the
 * integer conversions; %lc and %ls would be wide characters, which the kernel does not print, so with a
 * modifier these are unknown too. */
static bool put_text_conversion(struct output *out, const struct conversion *conv, char specifier, va_list *args)
{
    if (conv->length != LENGTH_NONE)
        return false;
    switch (specifier) {
    case 'c': {
        char c = (char)(unsigned char)va_arg(*args, int);
        put_padded_text(out, conv, &c, 1);
        return true;
    }
    case 's': {
        const char *text = va_arg(*args, const char *);
        if (text == NULL)
            text = "(null)";
        put_padded_text(out, conv, text, bounded_length(text, conv));
        return true;
    }
    case 'p':
        put_pointer(out, conv, va_arg(*args, void *));
        return true;
    case '%':
        put_char(out, '%');
        return true;
    default:
        return false;
    }
}

size_t format_v(format_emit_fn emit, void *arg, const char *fmt, va_list ap)
{
    struct output out = { emit, arg, 0 };
    va_list args;
    va_copy(args, ap);

    const char *p = fmt;
    while (*p) {
        if (*p != '%') {
            const char *run = p;
            while (*p && *p != '%')
                p++;
            put(&out, run, (size_t)(p - run));
            continue;
        }

        const char *spec_start = p++;
        struct conversion conv = read_conversion(&p, &args);

        char specifier = *p;
        if (specifier == '\0') {
            /* The format ends inside a conversion: print what there is and stop at the NUL. */
            put(&out, spec_start, (size_t)(p - spec_start));
            break;
        }
        p++;

        if (put_integer_conversion(&out, &conv, specifier, &args) ||
            put_text_conversion(&out, &conv, specifier, &args))
            continue;

        /* Unknown conversion: print it exactly as written, through the specifier character. */
        put(&out, spec_start, (size_t)(p - spec_start));
    }

    va_end(args);
    return out.count;
}

static void bounded_emit(void *arg, const char *text, size_t len)
{
    textbuf_append(arg, text, len); /* snprintf: what does not fit is cut, and only counted by format_v */
}

size_t kvsnprintf(char *buf, size_t n, const char *fmt, va_list ap)
{
    struct textbuf tb;
    textbuf_init(&tb, buf, n);
    return format_v(bounded_emit, &tb, fmt, ap);
}

size_t ksnprintf(char *buf, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    size_t total = kvsnprintf(buf, n, fmt, ap);
    va_end(ap);
    return total;
}

struct ipv4_text ipv4_text(uint32_t ip)
{
    struct ipv4_text t;
    ksnprintf(t.s, sizeof t.s, "%u.%u.%u.%u", (unsigned)(ip >> 24), (unsigned)(ip >> 16 & 255),
              (unsigned)(ip >> 8 & 255), (unsigned)(ip & 255));
    return t;
}
