/* kernel/lib/parse.c: word splitting and strict number parsing (kernel/lib/parse.h) for every parser of outside input
 * -- shell lines, the kernel command line, UDP shell requests. Strict means a number is all digits and fits:
 * anything else is refused rather than read as far as it makes sense. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel/lib/parse.h"

static bool is_word_separator(char c)
{
    return c == ' ' || c == '\t';
}

int split_words(char *line, char *argv[], int max_args)
{
    int count = 0;
    char *p = line;
    for (;;) {
        while (is_word_separator(*p))
            p++;
        if (*p == '\0')
            return count;
        if (count == max_args)
            return -1;
        argv[count++] = p;
        while (*p != '\0' && !is_word_separator(*p))
            p++;
        if (*p == '\0')
            return count;
        *p++ = '\0';
    }
}

/* The value of c as a digit in base, or -1 when it is not one. */
static int digit_value(char c, unsigned base)
{
    int value;
    if (c >= '0' && c <= '9')
        value = c - '0';
    else if (c >= 'a' && c <= 'f')
        value = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F')
        value = c - 'A' + 10;
    else
        return -1;
    return (unsigned)value < base ? value : -1;
}

bool parse_u64(const char *text, uint64_t *out)
{
    if (text == NULL)
        return false;
    unsigned base = 10;
    const char *p = text;
    if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
        base = 16;
        p += 2;
    }
    /* At least one digit: rejects "" and a bare "0x". */
    if (*p == '\0')
        return false;

    uint64_t value = 0;
    for (; *p != '\0'; p++) {
        int digit = digit_value(*p, base);
        if (digit < 0)
            return false;
        if (value > (UINT64_MAX - (uint64_t)digit) / base)
            return false;
        value = value * base + (uint64_t)digit;
    }
    *out = value;
    return true;
}

bool parse_u64_range(const char *text, uint64_t lo, uint64_t hi, uint64_t *out)
{
    uint64_t value;
    if (!parse_u64(text, &value) || value < lo || value > hi)
        return false;
    *out = value;
    return true;
}

bool parse_ipv4(const char *text, uint32_t *out)
{
    if (!text)
        return false;
    uint32_t addr = 0;
    for (int part = 0; part < 4; part++) {
        unsigned value = 0, digits = 0;
        while (*text >= '0' && *text <= '9') {
            value = value * 10 + (unsigned)(*text++ - '0');
            if (++digits > 3 || value > 255)
                return false;
        }
        if (digits == 0 || *text != (part < 3 ? '.' : '\0'))
            return false;
        text += part < 3;
        addr = addr << 8 | value;
    }
    *out = addr;
    return true;
}
