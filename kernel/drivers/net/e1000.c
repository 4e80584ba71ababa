/* kernel/drivers/net/e1000.c: Intel's gigabit cards QEMU emulates, as one netdev driver in two models. The QEMU
 * lines:
 *
 *   e1000    82540EM, 8086:100e   -nic user,model=e1000        (QEMU's default NIC on -M pc: -nic user)
 *   e1000e   82574L,  8086:10d3   -M q35 -nic user,model=e1000e (QEMU's default NIC on -M q35: -nic user)
 *
 * Both are driven the same way, through the 8254x register set both keep: the memory-mapped registers in BAR0,
 * legacy receive and transmit descriptors (kernel/drivers/net/e1000_desc.c judges what the card writes back), one
 * ring of each, 2048-byte buffers, the frame check sequence stripped on receive and inserted on transmit, and for
 * the receive interrupt an MSI where the card has the capability (the 82574L: MSI is preferred to its MSI-X),
 * else the INTx line. The models differ only in how the EEPROM read
 * register (EERD) places its done bit and word address. The layers:
 *
 *   bring-up    reset (CTRL.RST, waited for), interrupts masked, the MAC from the EEPROM -- or, when the EEPROM
 *               does not answer, from receive address 0 as the firmware left it -- written back to RAL0/RAH0,
 *               the multicast table cleared, the link forced up, the rings given, RCTL and TCTL enabled
 *   interrupt   reads ICR (which acknowledges every cause and drops the line) and wakes the network task
 *   receive     poll walks the ring from the next descriptor while the card has written it back, hands up what
 *               is a frame, and gives the descriptors back by moving RDT (one is always held back, as the ring's
 *               head may never catch the tail)
 *   transmit    any task, under the netdev's tx_lock: finished descriptors are reclaimed by their DD bit, the frame
 *               copied into the tail's buffer, TDT moved */
#include "hal/compiler.h"
#include "hal/cpu.h"
#include "hal/irq.h"
#include "hal/pci.h"
#include "kernel/drivers/net/e1000_desc.h"
#include "kernel/heap.h"
#include "kernel/lib/format.h"
#include "kernel/log.h"
#include "kernel/net/netdev.h"
#include "kernel/lib/string.h"

#include <stdatomic.h>

#define INTEL_VENDOR 0x8086
#define ID_82540EM 0x100E
#define ID_82574L 0x10D3

#define REG_CTRL 0x0000
#define REG_STATUS 0x0008
#define REG_EERD 0x0014
#define REG_ICR 0x00C0
#define REG_IMS 0x00D0
#define REG_IMC 0x00D8
#define REG_RCTL 0x0100
#define REG_TCTL 0x0400
#define REG_TIPG 0x0410
#define REG_RDBAL 0x2800
#define REG_RDBAH 0x2804
#define REG_RDLEN 0x2808
#define REG_RDH 0x2810
#define REG_RDT 0x2818
#define REG_RDTR 0x2820
#define REG_TDBAL 0x3800
#define REG_TDBAH 0x3804
#define REG_TDLEN 0x3808
#define REG_TDH 0x3810
#define REG_TDT 0x3818
#define REG_MTA 0x5200 /* 128 dwords */
#define REG_RAL0 0x5400
#define REG_RAH0 0x5404
#define REGS_SPAN 0x6000 /* BAR0 must reach past the receive addresses */

#define CTRL_LRST (1u << 3)
#define CTRL_ASDE (1u << 5)
#define CTRL_SLU (1u << 6)
#define CTRL_ILOS (1u << 7)
#define CTRL_RST (1u << 26)
#define CTRL_VME (1u << 30)
#define CTRL_PHY_RST (1u << 31)
#define STATUS_LU (1u << 1)
#define EERD_START 1u
#define RAH_AV (1u << 31)

#define RCTL_EN (1u << 1)
#define RCTL_BAM (1u << 15)   /* accept broadcast: ARP and DHCP need it */
#define RCTL_SECRC (1u << 26) /* strip the frame check sequence */
/* BSIZE 00 with BSEX 0: 2048-byte buffers */
#define TCTL_EN (1u << 1)
#define TCTL_PSP (1u << 3)
#define TCTL_CT (0x0Fu << 4)
#define TCTL_COLD (0x40u << 12)
#define TIPG_DEFAULT (10u | 8u << 10 | 6u << 20) /* the manual's copper values */

#define INT_TXDW (1u << 0)
#define INT_LSC (1u << 2)
#define INT_RXSEQ (1u << 3)
#define INT_RXDMT0 (1u << 4)
#define INT_RXO (1u << 6)
#define INT_RXT0 (1u << 7)
#define INT_RECEIVE (INT_LSC | INT_RXSEQ | INT_RXDMT0 | INT_RXO | INT_RXT0)

#define RX_RING 64 /* a multiple of 8: RDLEN counts 128-byte units */
#define TX_RING 64
#define BUFFER_SIZE 2048
#define RING_ALIGN 4096
#define SPINS_MAX 100000
#define MAPPED_LIMIT 0x100000000ull

struct model {
    const char *driver, *chip;
    uint32_t eerd_done;       /* EERD's done bit */
    unsigned eerd_addr_shift; /* where EERD takes the word address */
};

static const struct model model_82540em = { "e1000", "82540EM", 1u << 4, 8 };
static const struct model model_82574l = { "e1000e", "82574L", 1u << 1, 2 };

static struct {
    const struct model *model;
    struct pci_bar regs;
    volatile struct e1000_rx_desc *rx;
    volatile struct e1000_tx_desc *tx;
    uint8_t *rx_buffers, *tx_buffers;
    unsigned rx_next; /* the next descriptor the card fills */
    unsigned tx_tail, tx_clean; /* under the netdev's tx_lock: the next to fill, the oldest not yet reclaimed */
    atomic_bool receiving;
} nic;

DEBUGGER_TEXT static uint32_t rd(uint32_t reg) { return pci_bar_read32(&nic.regs, reg); }
DEBUGGER_TEXT static void wr(uint32_t reg, uint32_t v) { pci_bar_write32(&nic.regs, reg, v); }

/* ---- receive ------------------------------------------------------------------------------------------------- */

DEBUGGER_TEXT static int e1000_poll(struct netdev *dev, netdev_deliver_fn deliver, void *arg, int budget)
{
    if (budget <= 0)
        return 0;
    if (atomic_exchange_explicit(&nic.receiving, true, memory_order_acquire))
        return NETDEV_POLL_BUSY;
    int taken = 0;
    unsigned last = RX_RING;
    while (taken < budget) {
        unsigned i = nic.rx_next;
        volatile struct e1000_rx_desc *d = &nic.rx[i];
        size_t len = 0;
        enum e1000_rx_verdict v = e1000_rx_judge(d, BUFFER_SIZE, &len);
        if (v == E1000_RX_NOT_DONE)
            break;
        taken++;
        if (v == E1000_RX_BAD) {
            netdev_count(&dev->counters.rx_errors, 1);
        } else if (!deliver) {
            netdev_count(&dev->counters.rx_dropped, 1);
        } else {
            netdev_count(&dev->counters.rx_packets, 1);
            netdev_count(&dev->counters.rx_bytes, len);
            deliver(arg, nic.rx_buffers + (size_t)i * BUFFER_SIZE, len);
        }
        d->status = 0;
        last = i;
        nic.rx_next = (i + 1) % RX_RING;
    }
    if (last != RX_RING) {
        /* release: the cleared status is written before the card may fill the descriptor again */
        atomic_thread_fence(memory_order_release);
        wr(REG_RDT, last);
    }
    atomic_store_explicit(&nic.receiving, false, memory_order_release);
    return taken;
}

/* The card's interrupt (an MSI, or the INTx line: level-triggered, maybe shared, where a read of 0 was not
 * ours). */
static void e1000_irq(void *arg)
{
    if (rd(REG_ICR)) /* reading acknowledges every cause */
        netdev_interrupt(arg);
}

DEBUGGER_TEXT static void e1000_set_rx_interrupt(struct netdev *dev, bool on)
{
    (void)dev;
    wr(on ? REG_IMS : REG_IMC, INT_RECEIVE);
}

static bool e1000_link_up(struct netdev *dev)
{
    (void)dev;
    return rd(REG_STATUS) & STATUS_LU;
}

/* ---- transmit ------------------------------------------------------------------------------------------------ */

/* Reclaims, fills the next descriptor and starts it; dev->tx_lock held (kernel/net/netdev.c). */
DEBUGGER_TEXT static bool e1000_transmit_locked(struct netdev *dev, const void *frame, size_t len)
{
    (void)dev;
    while (nic.tx_clean != nic.tx_tail && e1000_tx_done(&nic.tx[nic.tx_clean]))
        nic.tx_clean = (nic.tx_clean + 1) % TX_RING;
    unsigned i = nic.tx_tail, next = (i + 1) % TX_RING;
    if (next == nic.tx_clean)
        return false;
    memcpy(nic.tx_buffers + (size_t)i * BUFFER_SIZE, frame, len);
    nic.tx[i].length = (uint16_t)len;
    nic.tx[i].cmd = E1000_TXD_CMD_EOP | E1000_TXD_CMD_IFCS | E1000_TXD_CMD_RS;
    nic.tx[i].status = 0;
    nic.tx_tail = next;
    /* release: the descriptor and the frame are written before the card is told */
    atomic_thread_fence(memory_order_release);
    wr(REG_TDT, next);
    return true;
}

static const struct netdev_ops e1000_ops = {
    .transmit_locked = e1000_transmit_locked,
    .poll = e1000_poll,
    .link_up = e1000_link_up,
    .set_rx_interrupt = e1000_set_rx_interrupt,
};

/* ---- bring-up ------------------------------------------------------------------------------------------------ */

static bool fail(const char *why, bool touched)
{
    if (touched) {
        wr(REG_IMC, 0xFFFFFFFFu);
        wr(REG_RCTL, 0);
        wr(REG_TCTL, 0);
        wr(REG_CTRL, rd(REG_CTRL) | CTRL_RST); /* forget the ring addresses before their memory is freed */
    }
    log_warn("%s: %s -- networking disabled", nic.model->driver, why);
    if (nic.rx)
        kfree((void *)nic.rx);
    if (nic.tx)
        kfree((void *)nic.tx);
    kfree(nic.rx_buffers);
    kfree(nic.tx_buffers);
    nic.rx = 0;
    nic.tx = 0;
    nic.rx_buffers = nic.tx_buffers = 0;
    return false;
}

/* One EEPROM word through EERD; false when the EEPROM never says it is done. */
static bool eeprom_read(unsigned word, uint16_t *out)
{
    wr(REG_EERD, EERD_START | (uint32_t)word << nic.model->eerd_addr_shift);
    for (int spins = 0; spins < SPINS_MAX; spins++) {
        uint32_t v = rd(REG_EERD);
        if (v & nic.model->eerd_done) {
            *out = (uint16_t)(v >> 16);
            return true;
        }
        cpu_relax();
    }
    return false;
}

/* The MAC: EEPROM words 0..2, else receive address 0 if the firmware left it valid, else one of our own.
 * Returns where it came from, for the boot log. */
static const char *read_mac(struct netdev *dev)
{
    uint16_t w[3];
    if (eeprom_read(0, &w[0]) && eeprom_read(1, &w[1]) && eeprom_read(2, &w[2])) {
        for (int i = 0; i < 3; i++) {
            dev->mac[2 * i] = (uint8_t)w[i];
            dev->mac[2 * i + 1] = (uint8_t)(w[i] >> 8);
        }
        return "eeprom";
    }
    uint32_t ral = rd(REG_RAL0), rah = rd(REG_RAH0);
    if (rah & RAH_AV) {
        log_warn("%s: the EEPROM does not answer; the MAC is the one in receive address 0", nic.model->driver);
        for (int i = 0; i < 4; i++)
            dev->mac[i] = (uint8_t)(ral >> (8 * i));
        dev->mac[4] = (uint8_t)rah;
        dev->mac[5] = (uint8_t)(rah >> 8);
        return "receive address 0 (EEPROM unreadable)";
    }
    log_warn("%s: neither the EEPROM nor receive address 0 gives a MAC; making one up", nic.model->driver);
    netdev_make_mac(dev->mac);
    dev->mac_made_up = true;
    return "made up (EEPROM unreadable, receive address 0 empty)";
}

static void *ring_alloc(size_t bytes)
{
    void *p = kmalloc_aligned(bytes, RING_ALIGN);
    if (p)
        memset(p, 0, bytes);
    return p;
}

/* CTRL.RST, waited for (bounded); every interrupt cause masked and the pending ones read away. */
static bool reset_card(void)
{
    wr(REG_IMC, 0xFFFFFFFFu);
    wr(REG_CTRL, rd(REG_CTRL) | CTRL_RST);
    int spins = 0;
    while ((rd(REG_CTRL) & CTRL_RST) && spins < SPINS_MAX) {
        cpu_relax();
        spins++;
    }
    if (rd(REG_CTRL) & CTRL_RST)
        return false;
    wr(REG_IMC, 0xFFFFFFFFu); /* the reset may have left causes pending */
    (void)rd(REG_ICR);
    return true;
}

/* The MAC address read and put in the receive address filter, the multicast table cleared, the link set up;
 * returns where the address came from. */
static const char *set_address_and_link(struct netdev *dev)
{
    const char *mac_from = read_mac(dev);
    const uint8_t *m = dev->mac;
    wr(REG_RAL0, (uint32_t)m[0] | (uint32_t)m[1] << 8 | (uint32_t)m[2] << 16 | (uint32_t)m[3] << 24);
    wr(REG_RAH0, (uint32_t)m[4] | (uint32_t)m[5] << 8 | RAH_AV);
    for (uint32_t i = 0; i < 128; i++)
        wr(REG_MTA + 4 * i, 0);
    wr(REG_CTRL, (rd(REG_CTRL) | CTRL_SLU | CTRL_ASDE) & ~(CTRL_LRST | CTRL_ILOS | CTRL_VME | CTRL_PHY_RST));
    return mac_from;
}

/* Both descriptor rings and their buffers, allocated and handed to the card, and transmit enabled (receive is
 * enabled last, by the probe). False when there is no memory for them. */
static bool rings_init(void)
{
    nic.rx = ring_alloc(sizeof(struct e1000_rx_desc) * RX_RING);
    nic.tx = ring_alloc(sizeof(struct e1000_tx_desc) * TX_RING);
    nic.rx_buffers = kmalloc_aligned((size_t)RX_RING * BUFFER_SIZE, RING_ALIGN);
    nic.tx_buffers = kmalloc_aligned((size_t)TX_RING * BUFFER_SIZE, RING_ALIGN);
    if (!nic.rx || !nic.tx || !nic.rx_buffers || !nic.tx_buffers)
        return false;
    for (unsigned i = 0; i < RX_RING; i++)
        nic.rx[i].addr = pci_dma_address(nic.rx_buffers + (size_t)i * BUFFER_SIZE);
    for (unsigned i = 0; i < TX_RING; i++) {
        nic.tx[i].addr = pci_dma_address(nic.tx_buffers + (size_t)i * BUFFER_SIZE);
        nic.tx[i].status = E1000_TXD_STAT_DD; /* free: nothing handed over yet */
    }
    nic.rx_next = 0;
    nic.tx_tail = nic.tx_clean = 0;

    uint64_t rx_phys = pci_dma_address((const void *)nic.rx), tx_phys = pci_dma_address((const void *)nic.tx);
    wr(REG_RDBAL, (uint32_t)rx_phys);
    wr(REG_RDBAH, (uint32_t)(rx_phys >> 32));
    wr(REG_RDLEN, sizeof(struct e1000_rx_desc) * RX_RING);
    wr(REG_RDH, 0);
    wr(REG_RDT, RX_RING - 1);
    wr(REG_RDTR, 0); /* no receive delay: the interrupt comes with the frame */
    wr(REG_TDBAL, (uint32_t)tx_phys);
    wr(REG_TDBAH, (uint32_t)(tx_phys >> 32));
    wr(REG_TDLEN, sizeof(struct e1000_tx_desc) * TX_RING);
    wr(REG_TDH, 0);
    wr(REG_TDT, 0);
    wr(REG_TIPG, TIPG_DEFAULT);
    wr(REG_TCTL, TCTL_EN | TCTL_PSP | TCTL_CT | TCTL_COLD);
    return true;
}

/* A message first: its own vector, where an INTx line may be shared (q35 puts the e1000e and an xHCI on one);
 * else the ISA line, when the firmware gave one. dev->interrupt says which; false (logged) when neither. */
static bool attach_interrupt(const struct pci_device *pci, struct netdev *dev, bool has_line, uint8_t line)
{
    const char *msi_kind = "";
    unsigned vector = irq_attach_msi(pci, e1000_irq, dev, &msi_kind);
    if (vector) {
        ksnprintf(dev->interrupt, sizeof dev->interrupt, "%s vector 0x%x", msi_kind, vector);
        return true;
    }
    if (!has_line)
        return fail(msi_kind, true);
    if (!irq_attach_isa(line, e1000_irq, dev))
        return fail("no interrupt vector left for it", true);
    ksnprintf(dev->interrupt, sizeof dev->interrupt, "irq %u pin %c", line, 'A' + pci->interrupt_pin - 1);
    return true;
}

static bool e1000_probe(const struct pci_device *pci, struct netdev *dev)
{
    nic.model = pci->device == ID_82574L ? &model_82574l : &model_82540em;
    nic.rx = 0;
    nic.tx = 0;
    nic.rx_buffers = nic.tx_buffers = 0;
    if (!pci_read_bar(pci, 0, &nic.regs))
        return fail("BAR0 is not implemented", false);
    if (nic.regs.is_io)
        return fail("BAR0 is an I/O BAR, not the memory-mapped registers", false);
    if (nic.regs.size < REGS_SPAN)
        return fail("BAR0 is too small for the register set", false);
    if (nic.regs.base + nic.regs.size > MAPPED_LIMIT)
        return fail("BAR0 lies above the 4 GiB the kernel maps", false);
    uint8_t line = pci_interrupt_line(pci);
    bool has_line = pci->interrupt_pin && pci->interrupt_pin <= 4 && line && line < 16;
    if (!has_line && !pci_find_capability(pci, PCI_CAP_ID_MSI) && !pci_find_capability(pci, PCI_CAP_ID_MSIX))
        return fail("the card has neither MSI, MSI-X nor an ISA interrupt line from the firmware", false);
    pci_enable(pci, false, true, true);

    if (!reset_card())
        return fail("the card never finished its reset (CTRL.RST stayed set)", false);
    const char *mac_from = set_address_and_link(dev);
    if (!rings_init())
        return fail("no memory for the rings", true);
    if (!attach_interrupt(pci, dev, has_line, line))
        return false;
    dev->ops = &e1000_ops;
    dev->priv = &nic;
    wr(REG_RCTL, RCTL_EN | RCTL_BAM | RCTL_SECRC);
    wr(REG_IMS, INT_RECEIVE);

    log_info("%s: %s, registers at 0x%llx, %s, mac from %s, link %s, rx %u x %u bytes, tx %u",
             nic.model->driver, nic.model->chip, (unsigned long long)nic.regs.base, dev->interrupt, mac_from,
             rd(REG_STATUS) & STATUS_LU ? "up" : "down", RX_RING, BUFFER_SIZE, TX_RING);
    return true;
}

static bool e1000_matches(const struct pci_device *pci, const char **reason)
{
    if (pci->vendor != INTEL_VENDOR)
        return false;
    if (pci->device == ID_82540EM)
        *reason = "Intel 82540EM";
    else if (pci->device == ID_82574L)
        *reason = "Intel 82574L";
    else
        return false;
    return true;
}

/* One driver in the table for each model, so the boot log names the one it took. */
static bool e1000_only(const struct pci_device *pci, const char **reason)
{
    return pci->device == ID_82540EM && e1000_matches(pci, reason);
}

static bool e1000e_only(const struct pci_device *pci, const char **reason)
{
    return pci->device == ID_82574L && e1000_matches(pci, reason);
}

const struct netdev_driver e1000_driver = {
    .name = "e1000",
    .qemu_line = "-nic user,model=e1000 (-M pc's default)",
    .matches = e1000_only,
    .probe = e1000_probe,
};

const struct netdev_driver e1000e_driver = {
    .name = "e1000e",
    .qemu_line = "-M q35 -nic user,model=e1000e (-M q35's default)",
    .matches = e1000e_only,
    .probe = e1000_probe,
};
