/* kernel/lib/hex.h: one hex digit each way -- the lowercase digit of four bits, and the value of a digit of
 * either case -- for every writer and parser of hex text (the gdb protocol, the UDP shell's key and tokens,
 * the raw and stream formats, ksnprintf's %p).
 * In kernel/lib: includes only kernel/lib/ and the freestanding C headers (tests/host/test_layering.py). */
#ifndef KERNEL_LIB_HEX_H
#define KERNEL_LIB_HEX_H

/* The lowercase hex digit of v's low four bits. */
static inline char hex_lower(unsigned v) { return "0123456789abcdef"[v & 15]; }

/* 0..15 for a hex digit (either case), -1 for anything else. */
static inline int hex_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

#endif
