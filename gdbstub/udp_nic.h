/* gdbstub/udp_nic.h: the gdb UDP transport (gdbstub/udp.h) on the real card -- gdb.udp=PORT, and
 * the three ways a datagram from gdb gets in: polled by the stub while the machine is stopped, handed over by
 * the network task before lwIP sees it, or, when the network task has not polled for GDB_UDP_TASK_LATE_NS
 * (wedged, or lwIP out of memory and stuck), polled off the card on CPU 0's timer tick (debugger_timer_poll,
 * hal/kernel_entry.h, defined in gdbstub/udp_nic.c). */
#ifndef GDBSTUB_UDP_NIC_H
#define GDBSTUB_UDP_NIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct netdev;
struct sink;

#define GDB_UDP_TASK_LATE_NS (250 * 1000000ll)

/* From net_init once the card is up: reads gdb.udp= (1..65535; anything else: one boot-log line, ignored). */
void gdb_udp_nic_init(struct netdev *nic);
/* The network task's receive path, for every frame before lwIP: true when the frame was the debugger's (it
 * has been handled and lwIP must not see it). */
bool gdb_udp_nic_claim(const uint8_t *frame, size_t len);
/* The network task after each poll of the card: notes that it is alive, and stops the machine here (in the
 * task) when a datagram from gdb asked for it. */
void gdb_udp_nic_task_polled(void);
/* The network task, whenever the interface's address changes (DHCP, ip=): the transport's own, its netmask
 * and gateway (where off-subnet replies go), host order; address 0 while there is none (not up). */
void gdb_udp_nic_set_address(uint32_t address, uint32_t netmask, uint32_t gateway);

#endif
