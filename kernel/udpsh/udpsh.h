/* kernel/udpsh/udpsh.h: the UDP shell (kernel/udpsh/udpsh.c) as the rest of the kernel sees it -- started after
 * the network, reported by `net`. */
#ifndef KERNEL_UDPSH_UDPSH_H
#define KERNEL_UDPSH_UDPSH_H

#include <stdbool.h>
#include <stdint.h>

struct sink;

/* From kmain, after net_init: binds the UDP shell's port (udpsh.port=, 5555 by default). */
void udpsh_init(void);
/* Whether the allowlist (udpsh.allow=, or the local subnet) permits ip: the shell answers only such senders,
 * and `profile stream` sends only to such addresses. */
bool udpsh_permits(uint32_t ip);
/* The UDP shell's line of `net`: its port and what became of the requests (run, busy, refused, over the rate). */
void udpsh_report(struct sink *out);
/* Whether src (host order) is on the UDP shell's allowlist (udpsh.allow=, or the local subnet once there is an
 * address): the gdb UDP transport admits the same senders. Reads only; safe with interrupts off. */
bool udpsh_permits(uint32_t src);

#endif
