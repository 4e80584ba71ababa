/* kernel/shell/cmd_net.c: the `net` shell command -- the interface's address, the card and its driver's counters,
 * the UDP and lwIP figures the network task gathers (kernel/net/net.c) and the lines each running service adds
 * (kernel/net/net_report.h); `net wedge MS` stalls the network task on purpose. */
#include "kernel/shell/commands.h"
#include "kernel/net/net.h"
#include "kernel/net/net_report.h"
#include "kernel/net/netdev.h"
#include "kernel/lib/format.h"
#include "kernel/lib/parse.h"
#include "kernel/lib/string.h"

int cmd_net(int argc, char **argv, struct sink *out, const struct shell_origin *from)
{
    if (argc != 1 && !(argc == 3 && strcmp(argv[1], "wedge") == 0))
        return shell_usage(out, "net");
    if (!net_available()) {
        sink_puts(out, "net: no network interface (start QEMU with -nic user: see the boot log's net: lines)\n");
        return 1;
    }
    if (argc == 3) {
        uint64_t ms;
        if (!parse_u64_range(argv[2], 1, NET_WEDGE_MAX_MS, &ms)) {
            sink_printf(out, "net wedge: '%.32s' is not a time 1..%u ms\n", argv[2], NET_WEDGE_MAX_MS);
            return 1;
        }
        net_wedge((unsigned)ms);
        sink_printf(out, "net: the network task sleeps %llu ms without polling the card\n", (unsigned long long)ms);
        return 0;
    }
    struct net_stats st;
    net_get_stats(&st);
    const struct netdev *dev = net_device();
    const uint8_t *mac = dev->mac;
    uint32_t a = net_address(), m = net_netmask();
    unsigned prefix = 0;
    while (prefix < 32 && (m & (0x80000000u >> prefix)))
        prefix++;
    sink_printf(out, "eth0: mac %02x:%02x:%02x:%02x:%02x:%02x, address %s/%u (%s)\n", mac[0], mac[1], mac[2],
                mac[3], mac[4], mac[5], ipv4_text(a).s, prefix, st.use_dhcp ? "dhcp" : "static");
    struct netdev_stats s;
    netdev_get_stats(dev, &s);
    sink_printf(out, "card: %s %04x:%04x at %02x:%02x.%x, link %s, %llu interrupts%s%s\n", dev->driver,
                dev->vendor, dev->device, dev->bus, dev->slot, dev->func,
                dev->ops->link_up((struct netdev *)dev) ? "up" : "down", (unsigned long long)s.interrupts,
                dev->interrupt[0] ? " by " : "", dev->interrupt);
    sink_printf(out, "rx: %llu packets, %llu bytes, %llu errors, %llu dropped\n", (unsigned long long)s.rx_packets,
                (unsigned long long)s.rx_bytes, (unsigned long long)s.rx_errors,
                (unsigned long long)(s.rx_dropped + st.rx_no_pbuf));
    /* "ring full" is how often the card refused a frame for want of a free buffer, not a loss: netload's sender
     * and the send queue wait and try again. What was really given up is the udp line's "send failures". */
    sink_printf(out, "tx: %llu packets, %llu bytes, %llu errors, %llu ring full\n", (unsigned long long)s.tx_packets,
                (unsigned long long)s.tx_bytes, (unsigned long long)s.tx_errors, (unsigned long long)s.tx_ring_full);
    sink_printf(out, "udp: %llu in, %llu out, %llu send failures\n", (unsigned long long)st.udp_in,
                (unsigned long long)st.udp_out, (unsigned long long)st.udp_out_failed);
    /* Where a sender's time goes: waiting for room in the send queue, and the network task's sending. */
    sink_printf(out, "queue: %llu waits for room, %llu ms waited; %llu passes sent %llu datagrams in %llu us\n",
                (unsigned long long)st.queue_waits, (unsigned long long)(st.queue_wait_ns / 1000000),
                (unsigned long long)st.tx_passes, (unsigned long long)st.tx_sent,
                (unsigned long long)(st.tx_ns / 1000));
    /* lwIP has its own heap and pools: a leak there would not show in `mem`. */
    sink_printf(out, "lwip: heap used %llu of %llu bytes, pbufs in use %llu of %llu\n",
                (unsigned long long)st.lwip_heap_used, (unsigned long long)st.lwip_heap_avail,
                (unsigned long long)st.lwip_pbufs_used, (unsigned long long)st.lwip_pbufs_avail);
    /* The services' own lines (kernel/net/net_report.h). The debugger's peer is whom a forger would imitate:
     * only the console and keyed UDP readers are trusted with it. */
    net_report_print(out, !from || !from->udp || from->keyed);
    return 0;
}
