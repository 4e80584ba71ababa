/* kernel/udpsh/udpsh.h: the UDP shell (kernel/udpsh/udpsh.c) as the rest of the kernel sees it -- started after
 * the network, reported by `net`. */
#ifndef KERNEL_UDPSH_UDPSH_H
#define KERNEL_UDPSH_UDPSH_H

#include <stdbool.h>
#include <stdint.h>

struct sink;

/* From kmain, after net_init: binds the UDP shell's port (udpsh.port=, 5555 by default). */
void udpsh_init(void);
/* The UDP shell's line of `net`: its port and what became of the requests (run, busy, refused, over the rate). */

#endif
