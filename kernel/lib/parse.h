/* kernel/lib/parse.h: splitting a shell line into words and reading numbers out of them, strictly. Every
 * parser of outside input in the kernel (shell, kernel command line, UDP shell) is built from these.
 * In kernel/lib: includes only kernel/lib/ and the freestanding C headers (tests/host/test_layering.py). */
#ifndef KERNEL_LIB_PARSE_H
#define KERNEL_LIB_PARSE_H

#include <stdbool.h>
#include <stdint.h>

#define SHELL_MAX_ARGS 16

/* Splits line in place on spaces and tabs into argv (NUL-terminating each word). Returns the number of words,
 * or -1 when there are more than max_args (argv then holds the first max_args). */
int split_words(char *line, char *argv[], int max_args);

/* Decimal, or hex with a 0x prefix; no sign, no spaces, no trailing characters; fails on overflow. */
bool parse_u64(const char *text, uint64_t *out);
/* parse_u64 plus lo <= value <= hi. */
bool parse_u64_range(const char *text, uint64_t lo, uint64_t hi, uint64_t *out);

/* A dotted-quad IPv4 address, "a.b.c.d" with each part 0..255 in decimal, nothing else; host byte order. */
bool parse_ipv4(const char *text, uint32_t *out);

#endif
