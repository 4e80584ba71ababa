/* kernel/net/lwip/lwip_port.h: starting lwIP. The task that calls net_stack_init() becomes the only task allowed
 * to call lwIP (lwipopts.h explains why); kernel/net/net.c does it at the top of the network task. */
#ifndef KERNEL_NET_LWIP_PORT_H
#define KERNEL_NET_LWIP_PORT_H

/* Initialises lwIP (lwip_init) and makes the calling task its owner. Once per boot. */
void net_stack_init(void);

#endif
