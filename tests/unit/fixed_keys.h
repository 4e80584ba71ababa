/* tests/unit/fixed_keys.h: the secret and key the unit tests of the keyed services run under -- the UDP shell's
 * admission (tests/unit/udpsh_fixture.c) and the gdb stub's keyed datagram (test_gdb_udp_auth.c), whose bytes
 * are pinned against Python's: the secret bytes(range(32)), the key bytes(range(16, 32)). */
#ifndef TESTS_UNIT_FIXED_KEYS_H
#define TESTS_UNIT_FIXED_KEYS_H

#include <stdint.h>

/* secret made 0, 1, ... 31 and key 0x10, 0x11, ... 0x1f. */
static inline void fixed_keys_fill(uint8_t secret[32], uint8_t key[16])
{
    for (int i = 0; i < 32; i++)
        secret[i] = (uint8_t)i;
    for (int i = 0; i < 16; i++)
        key[i] = (uint8_t)(0x10 + i);
}

#endif
