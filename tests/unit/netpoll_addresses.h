/* tests/unit/netpoll_addresses.h: the addresses netpoll's host tests (test_netpoll.c,
 * test_netpoll_neighbours.c) put us and the peer at: QEMU's user network, the guest 10.0.2.15. */
#ifndef TESTS_UNIT_NETPOLL_ADDRESSES_H
#define TESTS_UNIT_NETPOLL_ADDRESSES_H

#include <stdint.h>

#define OUR_IP 0x0a00020f   /* 10.0.2.15 */
#define PEER_IP 0x0a000202  /* 10.0.2.2 */
#define OUR_PORT 1234
#define PEER_PORT 40000

static const uint8_t our_mac[6] = { 0x52, 0x54, 0x00, 0x12, 0x34, 0x56 };
static const uint8_t peer_mac[6] = { 0x52, 0x55, 0x0a, 0x00, 0x02, 0x02 };

#endif
