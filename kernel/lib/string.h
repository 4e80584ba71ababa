/* kernel/lib/string.h: the freestanding C string and memory functions the kernel provides itself (kernel/lib/string.c).
 * gcc emits calls to memcpy, memmove, memset and memcmp on its own (struct copies, zeroing), so those keep
 * exactly their C names and signatures. Host unit tests build the same kernel sources against the C library:
 * there these names are libc's, and only strlcpy -- which glibc lacks before 2.38 -- comes from the kernel.
 * In kernel/lib: includes only kernel/lib/ and the freestanding C headers (tests/host/test_layering.py). */
#ifndef KERNEL_LIB_STRING_H
#define KERNEL_LIB_STRING_H

#include <stddef.h>

#ifdef KPROF_HOST

#include <string.h>

/* glibc gained strlcpy in 2.38; the other C libraries a host build might meet (musl, the BSDs, macOS) have
 * had it for a long time. When the library has one, the kernel's stays out of the host build so they never
 * clash. */
#if defined(__GLIBC__) && (__GLIBC__ < 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ < 38))
#define KPROF_OWN_STRLCPY 1
#endif

#else /* the kernel */

#define KPROF_OWN_STRLCPY 1

void *memcpy(void *restrict dst, const void *restrict src, size_t n);
void *memmove(void *dst, const void *src, size_t n);
void *memset(void *dst, int value, size_t n);
int memcmp(const void *a, const void *b, size_t n);
size_t strlen(const char *s);
size_t strnlen(const char *s, size_t max);
int strcmp(const char *a, const char *b);
int strncmp(const char *a, const char *b, size_t n);

#endif

#ifdef KPROF_OWN_STRLCPY
/* Copies src into dst (size bytes in all), truncating as needed; dst is always NUL-terminated when
 * size > 0. Returns strlen(src), so a result >= size means the copy was truncated. */
size_t strlcpy(char *dst, const char *src, size_t size);
#endif

#endif
