/* tests/unit/fake_net.c: the fakes of tests/unit/fake_net.h -- the network, the allowlist (net_peer_permitted),
 * and the boot secret's run id (boot_secret_run_id: always FAKE_RUN_ID). */
#include "fake_net.h"

#include <string.h>

#include "kernel/net/boot_secret.h"
#include "kernel/net/allowlist.h"
#include "kernel/net/net.h"
#include "kernel/udpsh/udpsh.h"

bool fake_net_up;
unsigned fake_net_binds;
unsigned fake_net_nsent;
unsigned fake_net_fail_from = UINT32_MAX;
struct fake_net_datagram fake_net_sent[FAKE_NET_SENT_MAX];

void fake_net_reset(void)
{
    fake_net_up = true;
    fake_net_binds = 0;
    fake_net_nsent = 0;
    fake_net_fail_from = UINT32_MAX;
}

bool net_available(void) { return fake_net_up; }

bool net_udp_bind(uint16_t port, net_udp_handler handler, void *arg)
{
    (void)port, (void)handler, (void)arg;
    fake_net_binds++;
    return true;
}

bool net_udp_send(enum net_udp_when_full when_full, uint16_t src_port, uint32_t dst_ip, uint16_t dst_port,
                  const void *data, size_t len)
{
    (void)when_full;
    if (!fake_net_up || len > NET_UDP_MAX || fake_net_nsent >= FAKE_NET_SENT_MAX)
        return false;
    struct fake_net_datagram *d = &fake_net_sent[fake_net_nsent];
    bool ok = fake_net_nsent < fake_net_fail_from;
    fake_net_nsent++;
    d->src_port = src_port;
    d->dst_ip = dst_ip;
    d->dst_port = dst_port;
    d->len = len;
    memcpy(d->data, data, len);
    d->data[len] = 0;
    return ok;
}

bool net_peer_permitted(uint32_t ip) { return (ip >> 8) == 0x0a0002; }

uint32_t boot_secret_run_id(void) { return FAKE_RUN_ID; }
