/* kernel/net/lwip/sys_arch.c: the operating-system services lwIP's mainloop mode (NO_SYS) asks of its port -- the
 * millisecond clock its timers run on, random numbers and a place for diagnostics. */
#include <stdarg.h>
#include <stdint.h>

#include "hal/cpu.h"
#include "kernel/console.h"
#include "kernel/lib/format.h"
#include "lwip/arch.h"
#include "lwip/sys.h"

/* Milliseconds from the kernel's one clock. lwIP keeps 32-bit times and compares them as differences, so the
 * wrap after 49.7 days is harmless. */
u32_t sys_now(void)
{
    return (u32_t)(time_ns() / 1000000);
}

/* xorshift64* seeded from the TSC on first use: not cryptographic, only different from boot to boot, which is
 * all DHCP transaction ids need. Only the network task calls it. */
uint32_t lwip_port_rand(void)
{
    static uint64_t state;
    if (state == 0) {
        /* splitmix64's finaliser spreads the TSC's few changing low bits over the whole seed */
        uint64_t z = cycles() + 0x9E3779B97F4A7C15ull;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        state = (z ^ (z >> 31)) | 1;
    }
    state ^= state >> 12;
    state ^= state << 25;
    state ^= state >> 27;
    return (uint32_t)((state * 0x2545F4914F6CDD1Dull) >> 32);
}

static void emit_console(void *arg, const char *text, size_t len)
{
    (void)arg;
    console_write(text, len);
}

/* LWIP_PLATFORM_DIAG: lwIP's messages carry their own newlines and may come in pieces, so they go to the
 * console as written, not through log_info (which ends every call with a newline). */
void lwip_port_diag(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    format_v(emit_console, 0, fmt, ap);
    va_end(ap);
}
