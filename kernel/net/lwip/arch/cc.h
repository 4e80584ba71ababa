/* kernel/net/lwip/arch/cc.h: what lwIP needs to know about this compiler and kernel, where it differs from lwIP's
 * defaults (src/include/lwip/arch.h). lwIP is compiled freestanding, without the host's C library. */
#ifndef KPROF_LWIP_ARCH_CC_H
#define KPROF_LWIP_ARCH_CC_H

#include <stdint.h>
#include "kernel/lib/format.h"
#include "kernel/panic.h"

/* Diagnostics go to the console (only LWIP_DEBUG builds print any); a failed assertion is a broken invariant. */
void lwip_port_diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
#define LWIP_PLATFORM_DIAG(x) do { lwip_port_diag x; } while (0)
#define LWIP_PLATFORM_ASSERT(x) panic("lwip: assertion \"%s\" failed at %s:%d", x, __FILE__, __LINE__)
/* The guard-byte check of pools and heap (MEMP_OVERFLOW_CHECK) words its message with snprintf. */
#define snprintf ksnprintf

/* No <inttypes.h> or <ctype.h> without a C library: lwIP uses its own character tests, and these are the
 * printf formats of its types for our formatter (u32_t is unsigned int on x86_64). */
#define LWIP_NO_INTTYPES_H 1
#define LWIP_NO_CTYPE_H 1
#define X8_F "02hhx"
#define U16_F "hu"
#define S16_F "hd"
#define X16_F "hx"
#define U32_F "u"
#define S32_F "d"
#define X32_F "x"
#define SZT_F "zu"

/* x86_64 is little-endian, lwIP's default byte order; the swaps become single instructions instead of calls
 * into lwIP's portable versions. */
#define lwip_htons(x) ((u16_t)__builtin_bswap16((u16_t)(x)))
#define lwip_htonl(x) ((u32_t)__builtin_bswap32((u32_t)(x)))

/* DHCP transaction ids: a xorshift generator seeded from the TSC (kernel/net/lwip/sys_arch.c). */
uint32_t lwip_port_rand(void);
#define LWIP_RAND() lwip_port_rand()

#endif
