/* kernel/net/lwip/tcp_isn.h: TCP initial sequence numbers as RFC 6528 gives them -- a clock that ticks every 4
 * microseconds plus a keyed hash of the connection's four numbers, so a blind forger who cannot see our
 * segments cannot guess the number a handshake with a forged source address would need. Pure (no clock, no
 * secret of its own): kernel/net/lwip/lwip_hooks.c calls it with the boot's and the unit tests drive it. */
#ifndef KERNEL_NET_LWIP_TCP_ISN_H
#define KERNEL_NET_LWIP_TCP_ISN_H

#include <stdint.h>

#include "kernel/lib/sha256.h"

/* ISN = now_ns / 4000 (the 4-microsecond clock, wrapping at 32 bits) + the first 32 bits, big-endian, of
 * HMAC-SHA256(secret, local ip, local port, remote ip, remote port) -- each in network byte order, 12 bytes.
 * Addresses and ports are in host order. */
uint32_t tcp_isn(const uint8_t secret[SHA256_DIGEST_SIZE], uint32_t local_ip, uint16_t local_port,
                 uint32_t remote_ip, uint16_t remote_port, uint64_t now_ns);

#endif
