/* tests/unit/fake_net.h: the network and the UDP shell as `profile stream` sees them (kernel/net/net.h,
 * kernel/net/allowlist.h), faked for the host tests of the command: whether the network is up, what the
 * allowlist permits (10.0.2.0/24), and every datagram sent, kept. */
#ifndef TESTS_UNIT_FAKE_NET_H
#define TESTS_UNIT_FAKE_NET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FAKE_NET_SENT_MAX 4096
#define FAKE_NET_DATAGRAM_MAX 1472
#define FAKE_RUN_ID 0x00c0ffeeu /* what boot_secret_run_id gives every stream */

struct fake_net_datagram {
    uint16_t src_port, dst_port;
    uint32_t dst_ip;
    size_t len;
    char data[FAKE_NET_DATAGRAM_MAX + 1];
};

extern bool fake_net_up;
extern unsigned fake_net_binds;
extern unsigned fake_net_nsent;
extern unsigned fake_net_fail_from; /* sends from this one on fail (UINT32_MAX: none) */
extern struct fake_net_datagram fake_net_sent[FAKE_NET_SENT_MAX];

void fake_net_reset(void);

#endif
