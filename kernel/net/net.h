/* kernel/net/net.h: the network as the rest of the kernel sees it -- one virtio-net interface run by lwIP in
 * one network task (lwIP is never called from an interrupt or from another task), an address from DHCP or
 * the kernel command line, and a queue through which other tasks hand UDP datagrams to that task. */
#ifndef KERNEL_NET_NET_H
#define KERNEL_NET_NET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NET_UDP_MAX 1472 /* the largest UDP payload that fits one Ethernet frame without fragments */

/* Probes the NIC and starts the network task (from kmain). Without a NIC, networking stays off, loudly. */
void net_init(void);
bool net_available(void);
/* The interface's IPv4 address and netmask in host byte order; 0 while DHCP has not answered. */
uint32_t net_address(void);
uint32_t net_netmask(void);

/* Hands a datagram to the network task for sending from local port src_port (which a receiver bound with
 * net_udp_bind). Task context; waits while the queue is full. False when networking is off or len is too
 * large. */
bool net_udp_send(uint16_t src_port, uint32_t dst_ip, uint16_t dst_port, const void *data, size_t len);

/* Runs in the network task for every datagram arriving on port (data valid only during the call). */
typedef void (*net_udp_handler)(void *arg, uint32_t src_ip, uint16_t src_port, const uint8_t *data, size_t len);
/* Binds port to handler (from any task); the binding is made by the network task. */
bool net_udp_bind(uint16_t port, net_udp_handler handler, void *arg);
/* Called in the network task: send at once, without the queue. Fails (counted as a send failure: the datagram
 * is lost) when the device's transmit ring is full, as it stays while netload sends flat out. */
bool net_udp_send_now(uint16_t src_port, uint32_t dst_ip, uint16_t dst_port, const void *data, size_t len);
/* The same for a caller that keeps the datagram and tries again on a later pass (netload's sender): a refusal
 * is a wait, not a loss, so it is not counted as a send failure. */
bool net_udp_try_send(uint16_t src_port, uint32_t dst_ip, uint16_t dst_port, const void *data, size_t len);
/* Called in the network task: queue like net_udp_send, so a full transmit ring is retried as for any queued
 * datagram, but never wait -- false (counted) when the queue itself is full. For answers that must not be lost
 * to a busy ring. */
bool net_udp_queue(uint16_t src_port, uint32_t dst_ip, uint16_t dst_port, const void *data, size_t len);

/* Work the network task runs on each pass of its loop (netload's sender); returns the time it next wants
 * to run, in time_ns(), or 0 for none. */
typedef int64_t (*net_poll_fn)(void *arg, int64_t now_ns);
void net_set_poller(net_poll_fn fn, void *arg);
/* Wakes the network task (another task queued work for it). */
void net_kick(void);
/* The network task, NULL while networking is off (netload labels it for the length of a session). */
struct task;
struct task *net_task_get(void);

#endif
