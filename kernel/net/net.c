/* kernel/net/net.c: the network task and everything lwIP touches. One task owns lwIP (NO_SYS): it polls the
 * network card (kernel/net/netdev.h; the receive interrupt only wakes it) for received frames, feeds them to
 * lwIP, runs lwIP's timers, creates the UDP bindings other tasks ask for and sends the datagrams they queue.
 * Other tasks never call lwIP; they go through net_udp_send / net_udp_bind. The `net` command, which prints
 * what net_get_stats gathers, is kernel/shell/cmd_net.c. */
#include "hal/compiler.h"
#include "kernel/net/net.h"

#include "hal/cpu.h"
#include "hal/spinlock.h"
#include "kernel/cmdline.h"
#include "kernel/log.h"
#include "gdbstub/udp_nic.h"
#include "kernel/net/lwip/lwip_port.h"
#include "kernel/net/netdev.h"
#include "kernel/lib/parse.h"
#include "kernel/lib/string.h"
#include "kernel/task.h"
#include "lwip/dhcp.h"
#include "lwip/etharp.h"
#include "lwip/init.h"
#include "lwip/ip4_addr.h"
#include "lwip/netif.h"
#include "lwip/pbuf.h"
#include "lwip/stats.h"
#include "lwip/timeouts.h"
#include "lwip/udp.h"
#include "netif/ethernet.h"

#define TX_QUEUE_SLOTS 32
#define MAX_BINDINGS 8
#define RX_BUDGET 64
#define MAX_IDLE_NS 100000000 /* wake at least every 100 ms even with no lwIP timer due */

#define TX_RETRY_PASSES 1000 /* a queued datagram the device refuses this often is dropped (and counted) */

struct tx_slot {
    uint16_t attempts;
    uint16_t src_port, dst_port, len;
    uint32_t dst_ip;
    uint8_t data[NET_UDP_MAX];
};

struct binding {
    uint16_t port;
    net_udp_handler handler;
    void *arg;
    struct udp_pcb *pcb; /* made by the network task */
    bool tried;          /* the network task has tried to make pcb */
};

static struct netif netif;
static struct netdev *nic;
static bool available;
static bool use_dhcp;
static struct task *net_task;
static spinlock_t queue_lock = SPINLOCK_INIT;
static struct tx_slot tx_queue[TX_QUEUE_SLOTS];
static unsigned tx_head, tx_tail; /* under queue_lock */
static struct binding bindings[MAX_BINDINGS];
static unsigned binding_count; /* under queue_lock */
static net_poll_fn poller;
static void *poller_arg;
static net_poll_fn service; /* net_set_service */
static void *service_arg;
static struct {
    uint64_t udp_in, udp_out, udp_out_failed, rx_no_pbuf;
    uint64_t queue_waits, queue_wait_ns; /* by the waiting senders: atomic adds */
    uint64_t tx_passes, tx_sent, tx_ns;  /* by the network task alone */
} counters;

bool net_available(void) { return available; }
const struct netdev *net_device(void) { return available ? nic : 0; }
struct task *net_task_get(void) { return available ? net_task : 0; }
DEBUGGER_TEXT uint32_t net_address(void) { return lwip_ntohl(ip4_addr_get_u32(netif_ip4_addr(&netif))); }
DEBUGGER_TEXT uint32_t net_netmask(void) { return lwip_ntohl(ip4_addr_get_u32(netif_ip4_netmask(&netif))); }

void net_kick(void)
{
    if (net_task)
        task_wake(net_task);
}

/* ---- lwIP's side of the interface ---------------------------------------------------------------------- */

/* Network task: the device's ring refused a frame since the NOW-mode send that cleared it (net_udp_send). */
static bool link_refused;
static bool last_refused_by_ring;

static err_t link_output(struct netif *nif, struct pbuf *p)
{
    (void)nif;
    static uint8_t frame[NETDEV_FRAME_MAX];
    if (p->tot_len > sizeof frame)
        return ERR_BUF;
    pbuf_copy_partial(p, frame, p->tot_len, 0);
    if (netdev_transmit(nic, frame, p->tot_len))
        return ERR_OK;
    link_refused = true;
    return ERR_MEM;
}

static err_t netif_setup(struct netif *nif)
{
    nif->name[0] = 'e';
    nif->name[1] = 'n';
    nif->output = etharp_output;
    nif->linkoutput = link_output;
    nif->mtu = 1500;
    nif->hwaddr_len = 6;
    memcpy(nif->hwaddr, nic->mac, 6);
    nif->flags = NETIF_FLAG_BROADCAST | NETIF_FLAG_ETHARP | NETIF_FLAG_ETHERNET | NETIF_FLAG_LINK_UP;
    return ERR_OK;
}

static void address_changed(struct netif *nif)
{
    gdb_udp_nic_set_address(lwip_ntohl(ip4_addr_get_u32(netif_ip4_addr(nif))),
                            lwip_ntohl(ip4_addr_get_u32(netif_ip4_netmask(nif))),
                            lwip_ntohl(ip4_addr_get_u32(netif_ip4_gw(nif))));
    if (ip4_addr_isany_val(*netif_ip4_addr(nif)))
        return;
    char ip[16], gw[16];
    ip4addr_ntoa_r(netif_ip4_addr(nif), ip, sizeof ip);
    ip4addr_ntoa_r(netif_ip4_gw(nif), gw, sizeof gw);
    uint32_t mask = lwip_ntohl(ip4_addr_get_u32(netif_ip4_netmask(nif)));
    unsigned prefix = 0;
    while (prefix < 32 && (mask & (0x80000000u >> prefix)))
        prefix++;
    log_info("net: address %s/%u gateway %s (%s)", ip, prefix, gw, use_dhcp ? "dhcp" : "static");
}

static void deliver_frame(void *arg, const uint8_t *frame, size_t len)
{
    (void)arg;
    if (gdb_udp_nic_claim(frame, len))
        return; /* gdb's (gdb.udp=): the debugger's transport, never lwIP's */
    struct pbuf *p = pbuf_alloc(PBUF_RAW, (u16_t)len, PBUF_POOL);
    if (!p) {
        counters.rx_no_pbuf++;
        return;
    }
    pbuf_take(p, frame, (u16_t)len);
    if (netif.input(p, &netif) != ERR_OK)
        pbuf_free(p);
}

/* ---- UDP ----------------------------------------------------------------------------------------------- */

static void udp_received(void *arg, struct udp_pcb *pcb, struct pbuf *p, const ip_addr_t *addr, u16_t port)
{
    (void)pcb;
    struct binding *b = arg;
    static uint8_t data[65536];
    counters.udp_in++;
    u16_t len = pbuf_copy_partial(p, data, p->tot_len, 0);
    uint32_t src = lwip_ntohl(ip4_addr_get_u32(ip_2_ip4(addr)));
    pbuf_free(p);
    b->handler(b->arg, src, port, data, len);
}

static struct udp_pcb *pcb_for(uint16_t port)
{
    for (unsigned i = 0; i < binding_count; i++)
        if (bindings[i].port == port && bindings[i].pcb)
            return bindings[i].pcb;
    return 0;
}

/* ERR_OK, ERR_VAL for what can never be sent (no binding, too long), or lwIP's error -- ERR_MEM when the
 * device's transmit ring is full, which a later try may get past. Counts nothing. */
static err_t udp_send_once(uint16_t src_port, uint32_t dst_ip, uint16_t dst_port, const void *data, size_t len)
{
    struct udp_pcb *pcb = pcb_for(src_port);
    if (!pcb || len > NET_UDP_MAX)
        return ERR_VAL;
    struct pbuf *p = pbuf_alloc(PBUF_TRANSPORT, (u16_t)len, PBUF_RAM);
    if (!p)
        return ERR_MEM;
    pbuf_take(p, data, (u16_t)len);
    ip_addr_t dst;
    ip_addr_set_ip4_u32(&dst, lwip_htonl(dst_ip));
    err_t err = udp_sendto(pcb, p, &dst, dst_port);
    pbuf_free(p);
    return err;
}

bool net_udp_bind(uint16_t port, net_udp_handler handler, void *arg)
{
    unsigned long flags = spin_lock_irqsave(&queue_lock);
    bool ok = binding_count < MAX_BINDINGS;
    for (unsigned i = 0; ok && i < binding_count; i++)
        if (bindings[i].port == port)
            ok = false;
    if (ok)
    {
        bindings[binding_count] = (struct binding){ port, handler, arg, 0, false };
        /* release: the network task reads the count without the lock, then the entry */
        __atomic_store_n(&binding_count, binding_count + 1, __ATOMIC_RELEASE);
    }
    spin_unlock_irqrestore(&queue_lock, flags);
    net_kick();
    return ok;
}

/* Puts a datagram on the send queue the network task drains; false, touching nothing, when the queue holds
 * limit datagrams or more (TX_QUEUE_SLOTS: full). */
static bool enqueue_below(unsigned limit, uint16_t src_port, uint32_t dst_ip, uint16_t dst_port, const void *data,
                          size_t len)
{
    unsigned long flags = spin_lock_irqsave(&queue_lock);
    if (tx_head - tx_tail >= limit) {
        spin_unlock_irqrestore(&queue_lock, flags);
        return false;
    }
    struct tx_slot *slot = &tx_queue[tx_head % TX_QUEUE_SLOTS];
    slot->src_port = src_port;
    slot->dst_ip = dst_ip;
    slot->dst_port = dst_port;
    slot->len = (uint16_t)len;
    slot->attempts = 0;
    memcpy(slot->data, data, len);
    tx_head++;
    spin_unlock_irqrestore(&queue_lock, flags);
    return true;
}

static bool enqueue(uint16_t src_port, uint32_t dst_ip, uint16_t dst_port, const void *data, size_t len)
{
    return enqueue_below(TX_QUEUE_SLOTS, src_port, dst_ip, dst_port, data, len);
}

bool net_udp_send(enum net_udp_when_full when_full, uint16_t src_port, uint32_t dst_ip, uint16_t dst_port,
                  const void *data, size_t len)
{
    switch (when_full) {
    case NET_UDP_WAIT:
    case NET_UDP_WAIT_SHARED:
        if (!available || len > NET_UDP_MAX)
            return false;
        unsigned limit = when_full == NET_UDP_WAIT ? TX_QUEUE_SLOTS : TX_QUEUE_SLOTS / 2;
        if (!enqueue_below(limit, src_port, dst_ip, dst_port, data, len)) {
            int64_t from = time_ns();
            do {
                net_kick();
                task_sleep_ms(1); /* the network task drains the queue; wait for room */
            } while (!enqueue_below(limit, src_port, dst_ip, dst_port, data, len));
            __atomic_fetch_add(&counters.queue_waits, 1, __ATOMIC_RELAXED);
            __atomic_fetch_add(&counters.queue_wait_ns, (uint64_t)(time_ns() - from), __ATOMIC_RELAXED);
        }
        net_kick();
        return true;
    case NET_UDP_QUEUE_OR_FAIL:
        /* The network task itself calls this, so it must not wait for room in a queue only it drains; it sends
         * what it queued later in the same pass (drain_tx_queue runs after the receive handlers). */
        if (!available || len > NET_UDP_MAX || !enqueue(src_port, dst_ip, dst_port, data, len)) {
            counters.udp_out_failed++;
            return false;
        }
        return true;
    case NET_UDP_NOW_OR_FAIL:
    case NET_UDP_NOW_OR_RETRY:
        link_refused = false;
        if (udp_send_once(src_port, dst_ip, dst_port, data, len) != ERR_OK) {
            last_refused_by_ring = link_refused;
            /* A caller that keeps the datagram and retries has lost nothing yet. */
            if (when_full == NET_UDP_NOW_OR_FAIL)
                counters.udp_out_failed++;
            return false;
        }
        counters.udp_out++;
        return true;
    }
    return false;
}

bool net_udp_refused_by_ring(void) { return last_refused_by_ring; }

static uint64_t loop_passes; /* network-loop passes completed, each after its call of the poller */
static unsigned wedge_ms; /* `net wedge MS`: the next pass sleeps this long first */

void net_wedge(unsigned ms)
{
    __atomic_store_n(&wedge_ms, ms, __ATOMIC_RELEASE);
    net_kick();
}

void net_set_poller(net_poll_fn fn, void *arg)
{
    uint64_t pass = __atomic_load_n(&loop_passes, __ATOMIC_ACQUIRE);
    poller_arg = arg;
    __atomic_store_n(&poller, fn, __ATOMIC_RELEASE);
    net_kick();
    /* Removing the poller waits for the pass that may still be inside it, so the caller can read what it
     * counted knowing nothing more will be added. */
    if (!fn && net_task && task_current() != net_task)
        while (__atomic_load_n(&loop_passes, __ATOMIC_ACQUIRE) == pass) {
            net_kick();
            task_sleep_ms(1);
        }
}

void net_set_service(net_poll_fn fn, void *arg)
{
    service_arg = arg;
    __atomic_store_n(&service, fn, __ATOMIC_RELEASE);
    net_kick();
}

/* Makes the pcbs for bindings other tasks asked for. */
static void bind_pending(void)
{
    for (unsigned i = 0; i < __atomic_load_n(&binding_count, __ATOMIC_ACQUIRE); i++) {
        struct binding *b = &bindings[i];
        if (b->tried)
            continue;
        b->tried = true;
        struct udp_pcb *pcb = udp_new();
        if (!pcb || udp_bind(pcb, IP_ANY_TYPE, b->port) != ERR_OK) {
            log_warn("net: cannot bind UDP port %u", b->port);
            if (pcb)
                udp_remove(pcb);
            continue;
        }
        udp_recv(pcb, udp_received, b);
        b->pcb = pcb;
    }
}

/* Sends what is queued, in order, as far as the device takes it; true when the queue is empty afterwards. */
static bool drain_tx_queue_timed(void);

static bool drain_tx_queue(void)
{
    if (__atomic_load_n(&tx_head, __ATOMIC_RELAXED) == __atomic_load_n(&tx_tail, __ATOMIC_RELAXED))
        return true;
    int64_t from = time_ns();
    uint64_t before = counters.udp_out;
    bool empty = drain_tx_queue_timed();
    counters.tx_passes++;
    counters.tx_sent += counters.udp_out - before;
    counters.tx_ns += (uint64_t)(time_ns() - from);
    return empty;
}

static bool drain_tx_queue_timed(void)
{
    for (;;) {
        unsigned long flags = spin_lock_irqsave(&queue_lock);
        if (tx_tail == tx_head) {
            spin_unlock_irqrestore(&queue_lock, flags);
            return true;
        }
        struct tx_slot *slot = &tx_queue[tx_tail % TX_QUEUE_SLOTS];
        spin_unlock_irqrestore(&queue_lock, flags);
        /* A full transmit ring (netload sending flat out) is no reason to lose a shell reply: leave it queued
         * and try again on the next pass, in order. */
        err_t err = udp_send_once(slot->src_port, slot->dst_ip, slot->dst_port, slot->data, slot->len);
        if (err == ERR_OK) {
            counters.udp_out++;
        } else if (err != ERR_VAL && ++slot->attempts < TX_RETRY_PASSES) {
            return false;
        } else {
            counters.udp_out_failed++;
        }
        flags = spin_lock_irqsave(&queue_lock);
        tx_tail++;
        spin_unlock_irqrestore(&queue_lock, flags);
    }
}

/* ---- addressing ---------------------------------------------------------------------------------------- */

/* ip=ADDR/PREFIX and gw=ADDR from the command line; false (with a message) when absent or malformed. */
static bool static_address(ip4_addr_t *ip, ip4_addr_t *mask, ip4_addr_t *gw)
{
    const char *ip_opt = cmdline_get("ip");
    if (!ip_opt)
        return false;
    char text[40];
    strlcpy(text, ip_opt, sizeof text);
    char *slash = text;
    while (*slash && *slash != '/')
        slash++;
    uint64_t prefix = 24;
    if (*slash) {
        *slash = 0;
        if (!parse_u64_range(slash + 1, 0, 32, &prefix)) {
            log_warn("net: ip=%s: the prefix must be 0..32; using DHCP", ip_opt);
            return false;
        }
    }
    if (!ip4addr_aton(text, ip)) {
        log_warn("net: ip=%s is not an IPv4 address; using DHCP", ip_opt);
        return false;
    }
    ip4_addr_set_u32(mask, lwip_htonl(prefix ? 0xFFFFFFFFu << (32 - prefix) : 0));
    const char *gw_opt = cmdline_get("gw");
    ip4_addr_set_zero(gw);
    if (gw_opt && !ip4addr_aton(gw_opt, gw)) {
        log_warn("net: gw=%s is not an IPv4 address; no gateway", gw_opt);
        ip4_addr_set_zero(gw);
    }
    return true;
}

/* ---- the task ------------------------------------------------------------------------------------------ */

static void network_task(void *arg)
{
    (void)arg;
    net_stack_init();
    ip4_addr_t ip, mask, gw;
    use_dhcp = !static_address(&ip, &mask, &gw);
    if (use_dhcp) {
        ip4_addr_set_zero(&ip);
        ip4_addr_set_zero(&mask);
        ip4_addr_set_zero(&gw);
    }
    netif_add(&netif, &ip, &mask, &gw, 0, netif_setup, ethernet_input);
    netif_set_status_callback(&netif, address_changed);
    netif_set_default(&netif);
    netif_set_up(&netif);
    if (use_dhcp)
        dhcp_start(&netif);
    /* A static address is announced by netif_set_up's status callback; DHCP's when the lease arrives. */
    netdev_set_waiter(nic, task_current());

    for (;;) {
        unsigned wedge = __atomic_exchange_n(&wedge_ms, 0, __ATOMIC_ACQ_REL);
        if (wedge)
            task_sleep_ms(wedge); /* on purpose: frames pile up on the card, lwIP's timers stand still */
        /* Ports asked for are bound before the card's frames are taken: a service logs that it listens when it
         * asks, and a datagram that came in meanwhile is its, not refused with port unreachable. */
        bind_pending();
        int work = nic->ops->poll(nic, deliver_frame, 0, RX_BUDGET);
        gdb_udp_nic_task_polled();
        bool queue_empty = drain_tx_queue();
        int64_t now = time_ns();
        net_poll_fn fn = __atomic_load_n(&poller, __ATOMIC_ACQUIRE);
        /* While queued datagrams (shell replies, refusals) wait for room in the transmit ring, the poller --
         * netload sending flat out -- does not get to fill the room the device frees: it would win every
         * race for it, and a reply retried TX_RETRY_PASSES times in a few milliseconds would be dropped. The
         * sender just comes back on the next pass. */
        int64_t wanted = !fn ? 0 : queue_empty ? fn(poller_arg, now) : now;
        net_poll_fn svc = __atomic_load_n(&service, __ATOMIC_ACQUIRE);
        int64_t service_wants = svc ? svc(service_arg, now) : 0;
        if (service_wants && (!wanted || service_wants - wanted < 0))
            wanted = service_wants;
        __atomic_store_n(&loop_passes, loop_passes + 1, __ATOMIC_RELEASE);
        sys_check_timeouts();
        if (work >= RX_BUDGET)
            continue; /* more frames may be waiting: do not sleep */
        uint32_t sleep_ms = sys_timeouts_sleeptime();
        int64_t deadline = now + (sleep_ms < MAX_IDLE_NS / 1000000 ? (int64_t)sleep_ms * 1000000 : MAX_IDLE_NS);
        if (wanted && wanted - deadline < 0)
            deadline = wanted;
        if (deadline - time_ns() > 0)
            task_block_until(deadline, TASK_WAIT_NET);
    }
}

void net_init(void)
{
    nic = netdev_probe();
    if (!nic)
        return;
    gdb_udp_nic_init(nic);
    net_task = task_spawn("net", network_task, 0, 0);
    if (!net_task) {
        log_warn("net: cannot start the network task: networking disabled");
        return;
    }
    available = true;
}

void net_get_stats(struct net_stats *st)
{
    st->use_dhcp = use_dhcp;
    st->udp_in = counters.udp_in;
    st->udp_out = counters.udp_out;
    st->udp_out_failed = counters.udp_out_failed;
    st->rx_no_pbuf = counters.rx_no_pbuf;
    st->queue_waits = __atomic_load_n(&counters.queue_waits, __ATOMIC_RELAXED);
    st->queue_wait_ns = __atomic_load_n(&counters.queue_wait_ns, __ATOMIC_RELAXED);
    st->tx_passes = counters.tx_passes;
    st->tx_sent = counters.tx_sent;
    st->tx_ns = counters.tx_ns;
    st->lwip_heap_used = lwip_stats.mem.used;
    st->lwip_heap_avail = lwip_stats.mem.avail;
    /* The pool's statistics exist once the network task has run lwip_init(): a `net` typed before that (under
     * a slow hypervisor, well after ready:) finds none, and reads zeros. */
    const struct stats_mem *pbufs = lwip_stats.memp[MEMP_PBUF_POOL];
    st->lwip_pbufs_used = pbufs ? pbufs->used : 0;
    st->lwip_pbufs_avail = pbufs ? pbufs->avail : 0;
}
