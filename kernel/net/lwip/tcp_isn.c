/* kernel/net/lwip/tcp_isn.c: RFC 6528's initial sequence numbers (kernel/net/lwip/tcp_isn.h), a pure function. */
#include "kernel/net/lwip/tcp_isn.h"

#include "kernel/lib/hmac.h"

static void put_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

uint32_t tcp_isn(const uint8_t secret[SHA256_DIGEST_SIZE], uint32_t local_ip, uint16_t local_port,
                 uint32_t remote_ip, uint16_t remote_port, uint64_t now_ns)
{
    uint8_t tuple[12];
    put_be32(tuple, local_ip);
    tuple[4] = (uint8_t)(local_port >> 8);
    tuple[5] = (uint8_t)local_port;
    put_be32(tuple + 6, remote_ip);
    tuple[10] = (uint8_t)(remote_port >> 8);
    tuple[11] = (uint8_t)remote_port;
    uint8_t mac[SHA256_DIGEST_SIZE];
    hmac_sha256(secret, SHA256_DIGEST_SIZE, tuple, sizeof tuple, mac);
    uint32_t f = (uint32_t)mac[0] << 24 | (uint32_t)mac[1] << 16 | (uint32_t)mac[2] << 8 | mac[3];
    /* RFC 6528's M: the 4-microsecond timer keeps numbers of successive connections of one 4-tuple rising, so a
     * segment of an old incarnation is not taken for one of the new. */
    return (uint32_t)(now_ns / 4000) + f;
}
