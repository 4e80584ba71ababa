/* tests/unit/udpsh_fixture.h: the UDP shell's admission (kernel/udpsh/auth.c) as its unit tests
 * (test_udpsh_auth.c, test_udpsh_order.c) drive it: one struct udpsh_auth under a fixed secret and key, the last
 * judgement, and datagrams judged as a client sends them. */
#ifndef TESTS_UNIT_UDPSH_FIXTURE_H
#define TESTS_UNIT_UDPSH_FIXTURE_H

#include <stdbool.h>
#include <stdint.h>

#include "kernel/udpsh/auth.h"

extern struct udpsh_auth auth;
extern struct udpsh_judgement j; /* the last judge()'s */
extern uint8_t secret[32];       /* 0, 1, ... 31 */
extern uint8_t key[16];          /* 0x10, 0x11, ... 0x1f */
extern struct udpsh_remembered *running_request; /* what judge() passes as the request still running (NULL) */

/* auth initialised afresh under secret, with key when keyed (else unkeyed); no request running. */
void udpsh_fixture_init(bool keyed);
/* Judges datagram (a C string) from ip:port at now into j. */
void judge(uint32_t ip, uint16_t port, const char *datagram, int64_t now);
/* Judges a keyed request built the way a client builds it: line behind ip:port's token of now's window,
 * counter and the MAC under key. */
void keyed(uint32_t ip, uint16_t port, uint64_t counter, const char *line, int64_t now);

#endif
