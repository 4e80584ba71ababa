/* kernel/lib/string.c: the kernel's own memcpy, memmove, memset, memcmp, strlen, strnlen, strcmp, strncmp and
 * strlcpy (kernel/lib/string.h). In a host unit-test build the C library supplies all but strlcpy, so only that
 * one is compiled there (and only when the library lacks it). */
#include <stddef.h>
#include <stdint.h>

#include "kernel/lib/string.h"

#ifndef KPROF_HOST

/* gcc recognises byte loops as memcpy/memset patterns and may replace them with calls to memcpy/memset --
 * which, inside memcpy and memset themselves, would be endless recursion. Switch that rewrite off here. */
#if defined(__clang__)
/* clang: -ffreestanding implies -fno-builtin, which already keeps loop-idiom recognition from forming calls. */
#define NO_LIBCALL_REWRITE
#else
#define NO_LIBCALL_REWRITE __attribute__((optimize("no-tree-loop-distribute-patterns")))
#endif

/* Eight bytes at a time where the length allows: under TCG each guest instruction costs, and the gdb stub's
 * replies (kilobytes a packet) go through here several times; under this machine's KVM (PVM), about 0.5M guest
 * instructions a second were measured, and byte loops made each streamed datagram cost tens of ms. A may_alias
 * word type makes the wide loads and stores legal on any object; x86 takes them unaligned. */
typedef uint64_t __attribute__((may_alias, aligned(1))) any_word;

NO_LIBCALL_REWRITE void *memcpy(void *restrict dst, const void *restrict src, size_t n)
{
    unsigned char *to = dst;
    const unsigned char *from = src;
    for (; n >= sizeof(any_word); n -= sizeof(any_word), to += sizeof(any_word), from += sizeof(any_word))
        *(any_word *)to = *(const any_word *)from;
    while (n--)
        *to++ = *from++;
    return dst;
}

NO_LIBCALL_REWRITE void *memmove(void *dst, const void *src, size_t n)
{
    unsigned char *to = dst;
    const unsigned char *from = src;
    /* Copy upward when the destination starts below the source, downward otherwise, so an overlapping
     * region is read before it is overwritten. Comparing as integers avoids relational comparison of
     * pointers into different objects. */
    if ((uintptr_t)to <= (uintptr_t)from) {
        while (n--)
            *to++ = *from++;
    } else {
        to += n;
        from += n;
        while (n--)
            *--to = *--from;
    }
    return dst;
}

NO_LIBCALL_REWRITE void *memset(void *dst, int value, size_t n)
{
    unsigned char *to = dst;
    any_word pattern = 0x0101010101010101ull * (unsigned char)value;
    for (; n >= sizeof(any_word); n -= sizeof(any_word), to += sizeof(any_word))
        *(any_word *)to = pattern;
    while (n--)
        *to++ = (unsigned char)value;
    return dst;
}

int memcmp(const void *a, const void *b, size_t n)
{
    const unsigned char *left = a;
    const unsigned char *right = b;
    for (size_t i = 0; i < n; i++) {
        if (left[i] != right[i])
            return left[i] < right[i] ? -1 : 1;
    }
    return 0;
}

size_t strlen(const char *s)
{
    size_t len = 0;
    while (s[len])
        len++;
    return len;
}

size_t strnlen(const char *s, size_t max)
{
    size_t len = 0;
    while (len < max && s[len])
        len++;
    return len;
}

/* Characters compare as unsigned char, as the C standard requires, so bytes >= 0x80 sort after ASCII. */
int strcmp(const char *a, const char *b)
{
    const unsigned char *left = (const unsigned char *)a;
    const unsigned char *right = (const unsigned char *)b;
    while (*left && *left == *right) {
        left++;
        right++;
    }
    return (*left > *right) - (*left < *right);
}

int strncmp(const char *a, const char *b, size_t n)
{
    const unsigned char *left = (const unsigned char *)a;
    const unsigned char *right = (const unsigned char *)b;
    for (size_t i = 0; i < n; i++) {
        if (left[i] != right[i])
            return left[i] < right[i] ? -1 : 1;
        if (left[i] == 0)
            return 0;
    }
    return 0;
}

#endif /* !KPROF_HOST */

#ifdef KPROF_OWN_STRLCPY
size_t strlcpy(char *dst, const char *src, size_t size)
{
    size_t src_len = 0;
    while (src[src_len])
        src_len++;
    if (size > 0) {
        size_t copy = src_len < size - 1 ? src_len : size - 1;
        for (size_t i = 0; i < copy; i++)
            dst[i] = src[i];
        dst[copy] = '\0';
    }
    return src_len;
}
#endif
