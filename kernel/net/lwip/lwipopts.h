/* kernel/net/lwip/lwipopts.h: the lwIP configuration (lwIP's src/include/lwip/opt.h holds every option and its
 * default; only what we change is here). lwIP runs in mainloop mode (NO_SYS) inside one network task, which
 * feeds it received frames and calls sys_check_timeouts(); no interrupt handler ever calls it. It speaks IPv4
 * only: ARP, ICMP (answers pings), UDP, DHCP and TCP (for the pprof.http= server, kernel/httpd/), with IP
 * fragmentation and reassembly. No sequential or socket API. */
#ifndef KPROF_LWIPOPTS_H
#define KPROF_LWIPOPTS_H

/* ---- system: mainloop mode in one task ---- */
#define NO_SYS 1
/* No locks inside lwIP: correct because exactly one task calls it and no interrupt does. lwIP checks the
 * first half at each API entry through LWIP_ASSERT_CORE_LOCKED, which kernel/net/lwip/lwip_port.c turns into a
 * panic when any other task calls in. */
#define SYS_LIGHTWEIGHT_PROT 0
void lwip_port_assert_core_locked(void);
#define LWIP_ASSERT_CORE_LOCKED() lwip_port_assert_core_locked()
#define LWIP_NETCONN 0
#define LWIP_SOCKET 0

/* ---- protocols ---- */
#define LWIP_IPV4 1
#define LWIP_IPV6 0
#define LWIP_ARP 1
#define LWIP_ICMP 1
#define LWIP_UDP 1
#define LWIP_DHCP 1
#define LWIP_TCP 1
/* lwIP's hooks (kernel/net/lwip/lwip_hooks.h): TCP initial sequence numbers from the boot secret (RFC 6528),
 * and segments from addresses net_peer_permitted refuses dropped before lwIP answers them. */
#define LWIP_HOOK_FILENAME "kernel/net/lwip/lwip_hooks.h"
#define IP_REASSEMBLY 1
#define IP_FRAG 1
/* A 65507-byte datagram arrives as 45 fragments of 1480 bytes. */
#define IP_REASS_MAX_PBUFS 64
/* A frame sent to a peer whose MAC is not yet known waits for the ARP reply instead of replacing the
 * previous one (netload's first burst and a UDP shell reply to a new client would lose all but the last). */
#define ARP_QUEUEING 1
/* Datagrams held per peer while its address is being resolved: a UDP shell reply of several datagrams to a new
 * peer must not lose all but the first three (lwIP's default). */
#define ARP_QUEUE_LEN 32

/* The address, from DHCP or the command line, is logged from the netif status callback. */
#define LWIP_NETIF_STATUS_CALLBACK 1

/* The virtio-net driver negotiates no checksum offload: lwIP computes every outgoing checksum and checks
 * every incoming one (lwIP's defaults, stated because the driver relies on them). */
#define CHECKSUM_GEN_IP 1
#define CHECKSUM_GEN_UDP 1
#define CHECKSUM_GEN_ICMP 1
#define CHECKSUM_CHECK_IP 1
#define CHECKSUM_CHECK_UDP 1
#define CHECKSUM_CHECK_ICMP 1

/* ---- memory ----
 * lwIP's own heap (mem.c over a static array) rather than MEM_LIBC_MALLOC over kmalloc: a flood or a leak in
 * the network path then runs out of lwIP's MEM_SIZE -- pbuf_alloc fails, the frame is counted as dropped --
 * instead of starving the kernel heap the shell and the profiler allocate from; its use and failures are in
 * lwip_stats.mem for `net`; and mem_trim() can shrink a pbuf in place, which it cannot over a libc-style
 * malloc. The heap holds PBUF_RAM pbufs: outgoing datagrams, DHCP messages, a frame waiting for ARP, and the
 * reply to a ping of up to 64 KiB. */
#define MEM_ALIGNMENT 8
#define MEM_SIZE (256 * 1024)
/* Received frames are copied into pool pbufs by the network task and go through lwIP synchronously, so the
 * pool holds what lwIP keeps past one frame -- fragments waiting for reassembly (IP_REASS_MAX_PBUFS) -- plus a
 * burst of frames in flight; a burst the pool cannot take waits in the virtio receive ring. One pool pbuf
 * holds one whole Ethernet frame (1514 bytes, 1518 with a VLAN tag). */
#define PBUF_POOL_SIZE 256
#define PBUF_POOL_BUFSIZE 1536
/* PBUF_REF/PBUF_ROM pbufs, and the references IP fragmentation makes to a datagram it splits (45 for the
 * largest UDP datagram). */
#define MEMP_NUM_PBUF 32
#define MEMP_NUM_FRAG_PBUF 64
/* The UDP shell, netload's sockets and DHCP, with room to spare. */
#define MEMP_NUM_UDP_PCB 12
/* Every pool element and heap block carries guard bytes checked when it is freed: a driver writing past a
 * buffer panics at the next free instead of corrupting a neighbour silently. */
#define MEMP_OVERFLOW_CHECK 1
#define MEM_OVERFLOW_CHECK 1

/* ---- TCP: one small HTTP server (pprof.http=), never a client ----
 * One listening pcb, and at most MEMP_NUM_TCP_PCB connections at once, TIME_WAIT ones included: lwIP reuses
 * the oldest TIME_WAIT pcb when a new connection finds none free, so a flood of connections costs the pool,
 * not the heap. The server keeps as many connection slots as there are pcbs (kernel/httpd/httpd.c). */
#define MEMP_NUM_TCP_PCB 8
#define MEMP_NUM_TCP_PCB_LISTEN 1
/* Ethernet's 1500-byte MTU less 40 bytes of IPv4 and TCP headers. */
#define TCP_MSS 1460
/* Eight segments each way: a whole request head (at most 8 KiB, kernel/httpd/http_request.h) fits in one
 * receive window, and a response goes out eight segments per round trip. Sent data is copied into lwIP's heap
 * (MEM_SIZE) until acknowledged: at most 8 connections x 11680 bytes = 93 KiB of it. */
#define TCP_WND (8 * TCP_MSS)
#define TCP_SND_BUF (8 * TCP_MSS)
/* Segments queued for sending (lwIP's default TCP_SND_QUEUELEN is 4 x TCP_SND_BUF / TCP_MSS = 32 for one
 * connection); 64 lets two connections fill their send buffers at once -- a quick page served while a profile
 * is sent -- and a third's tcp_write waits for a tcp_sent (ERR_MEM is retried, not fatal). */
#define MEMP_NUM_TCP_SEG 64
/* A listening pcb takes one connection at a time off the SYN queue: the server refuses what it cannot hold. */
#define TCP_LISTEN_BACKLOG 1
#define TCP_DEFAULT_LISTEN_BACKLOG 4

/* ---- statistics for `net` ---- */
#define LWIP_STATS 1
/* 32-bit counters: the default 16-bit ones wrap after 65535 packets, a few seconds of netload. */
#define LWIP_STATS_LARGE 1
#define LWIP_STATS_DISPLAY 0

#endif
