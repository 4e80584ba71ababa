/* arch/x86_64/pci.c: hal/pci.h on a PC -- configuration mechanism #1 (the address register at 0xCF8 selects
 * bus, slot, function and dword; the data window at 0xCFC..0xCFF reads or writes it), one lock for that
 * two-step, and one scan that walks every bus reachable from the host bridge:
 *
 *   host bridges   00:00.0, and when it is multifunction each of its functions f is the host bridge of bus f
 *   bus            slots 0..31; function 0 answers or the slot is empty; functions 1..7 only if function 0's
 *                  header type has the multifunction bit
 *   bridges        a PCI-to-PCI bridge (header type 1) adds its secondary bus to the list, each bus once
 *
 * QEMU's pc machine has one host bridge and everything on bus 0; the walk still covers all 256 buses a tree
 * of bridges can number. */
#include "hal/compiler.h"
#include "arch/x86_64/x86.h"
#include "hal/pci.h"
#include "arch/x86_64/pci_msi.h"
#include "hal/spinlock.h"
#include "kernel/log.h"
#include "hal/kernel_entry.h"

#include <stdatomic.h>

#define CONFIG_ADDRESS 0xCF8
#define CONFIG_DATA 0xCFC
#define CONFIG_ENABLE 0x80000000u
#define HEADER_MULTIFUNCTION 0x80
#define HEADER_TYPE_MASK 0x7F
#define CLASS_BRIDGE 0x06
#define SUBCLASS_PCI_BRIDGE 0x04
#define NO_VENDOR 0xFFFF

/* The address/data pair is one shared two-step: every configuration access holds this lock across both. */
static spinlock_t config_lock = SPINLOCK_INIT;

static struct pci_device devices[PCI_MAX_DEVICES];
static unsigned device_count;
static unsigned devices_not_kept;
/* 0 not scanned, 1 a scan is under way, 2 devices[] is final. */
static atomic_int scan_state;

/* ---- raw configuration access (config_lock held) --------------------------------------------------------- */

static void select_dword(uint8_t bus, uint8_t slot, uint8_t func, uint16_t offset)
{
    outl(CONFIG_ADDRESS, CONFIG_ENABLE | (uint32_t)bus << 16 | (uint32_t)(slot & 31) << 11 |
                             (uint32_t)(func & 7) << 8 | (offset & 0xFC));
}

static uint8_t raw_read8(uint8_t bus, uint8_t slot, uint8_t func, uint16_t offset)
{
    select_dword(bus, slot, func, offset);
    return inb(CONFIG_DATA + (offset & 3));
}

static uint16_t raw_read16(uint8_t bus, uint8_t slot, uint8_t func, uint16_t offset)
{
    select_dword(bus, slot, func, offset);
    return inw(CONFIG_DATA + (offset & 2));
}

static uint32_t raw_read32(uint8_t bus, uint8_t slot, uint8_t func, uint16_t offset)
{
    select_dword(bus, slot, func, offset);
    return inl(CONFIG_DATA);
}

static void raw_write16(uint8_t bus, uint8_t slot, uint8_t func, uint16_t offset, uint16_t value)
{
    select_dword(bus, slot, func, offset);
    outw(CONFIG_DATA + (offset & 2), value);
}

static void raw_write32(uint8_t bus, uint8_t slot, uint8_t func, uint16_t offset, uint32_t value)
{
    select_dword(bus, slot, func, offset);
    outl(CONFIG_DATA, value);
}

/* ---- the public accessors -------------------------------------------------------------------------------- */

static void check_offset(const char *fn, uint16_t offset, unsigned width)
{
    /* Mechanism #1 reaches the first 256 bytes; a misaligned access would straddle two dwords. */
    if (offset > 0x100 - width || (offset & (width - 1)))
        panic("%s: configuration offset 0x%x is not a %u-byte register", fn, offset, width);
}

uint8_t pci_config_read8(const struct pci_device *dev, uint16_t offset)
{
    check_offset(__func__, offset, 1);
    unsigned long flags = spin_lock_irqsave(&config_lock);
    uint8_t v = raw_read8(dev->bus, dev->slot, dev->func, offset);
    spin_unlock_irqrestore(&config_lock, flags);
    return v;
}

uint16_t pci_config_read16(const struct pci_device *dev, uint16_t offset)
{
    check_offset(__func__, offset, 2);
    unsigned long flags = spin_lock_irqsave(&config_lock);
    uint16_t v = raw_read16(dev->bus, dev->slot, dev->func, offset);
    spin_unlock_irqrestore(&config_lock, flags);
    return v;
}

uint32_t pci_config_read32(const struct pci_device *dev, uint16_t offset)
{
    check_offset(__func__, offset, 4);
    unsigned long flags = spin_lock_irqsave(&config_lock);
    uint32_t v = raw_read32(dev->bus, dev->slot, dev->func, offset);
    spin_unlock_irqrestore(&config_lock, flags);
    return v;
}

void pci_config_write8(const struct pci_device *dev, uint16_t offset, uint8_t value)
{
    check_offset(__func__, offset, 1);
    unsigned long flags = spin_lock_irqsave(&config_lock);
    select_dword(dev->bus, dev->slot, dev->func, offset);
    outb(CONFIG_DATA + (offset & 3), value);
    spin_unlock_irqrestore(&config_lock, flags);
}

void pci_config_write16(const struct pci_device *dev, uint16_t offset, uint16_t value)
{
    check_offset(__func__, offset, 2);
    unsigned long flags = spin_lock_irqsave(&config_lock);
    raw_write16(dev->bus, dev->slot, dev->func, offset, value);
    spin_unlock_irqrestore(&config_lock, flags);
}

void pci_config_write32(const struct pci_device *dev, uint16_t offset, uint32_t value)
{
    check_offset(__func__, offset, 4);
    unsigned long flags = spin_lock_irqsave(&config_lock);
    raw_write32(dev->bus, dev->slot, dev->func, offset, value);
    spin_unlock_irqrestore(&config_lock, flags);
}

/* ---- the scan -------------------------------------------------------------------------------------------- */

struct bus_walk {
    uint8_t queue[256]; /* buses still to scan, each entered once */
    unsigned head, tail;
    uint8_t seen[256 / 8];
    unsigned buses;
};

static void walk_add_bus(struct bus_walk *walk, unsigned bus)
{
    if (walk->seen[bus / 8] & (1u << (bus % 8)))
        return; /* a misprogrammed bridge pointing back up the tree must not loop the scan */
    walk->seen[bus / 8] |= (uint8_t)(1u << (bus % 8));
    walk->queue[walk->tail++] = (uint8_t)bus;
}

static void scan_function(struct bus_walk *walk, uint8_t bus, uint8_t slot, uint8_t func)
{
    unsigned long flags = spin_lock_irqsave(&config_lock);
    struct pci_device d = {
        .bus = bus,
        .slot = slot,
        .func = func,
        .vendor = raw_read16(bus, slot, func, PCI_VENDOR_ID),
        .device = raw_read16(bus, slot, func, PCI_DEVICE_ID),
        .revision = raw_read8(bus, slot, func, PCI_REVISION),
        .prog_if = raw_read8(bus, slot, func, PCI_PROG_IF),
        .subclass = raw_read8(bus, slot, func, PCI_SUBCLASS),
        .class_code = raw_read8(bus, slot, func, PCI_CLASS),
        .header_type = raw_read8(bus, slot, func, PCI_HEADER_TYPE) & HEADER_TYPE_MASK,
        .interrupt_line = raw_read8(bus, slot, func, PCI_INTERRUPT_LINE),
        .interrupt_pin = raw_read8(bus, slot, func, PCI_INTERRUPT_PIN),
    };
    uint8_t secondary = 0;
    if (d.header_type == 0) {
        d.subsystem_vendor = raw_read16(bus, slot, func, PCI_SUBSYSTEM_VENDOR_ID);
        d.subsystem = raw_read16(bus, slot, func, PCI_SUBSYSTEM_ID);
    } else if (d.header_type == 1) {
        secondary = raw_read8(bus, slot, func, PCI_SECONDARY_BUS);
    }
    spin_unlock_irqrestore(&config_lock, flags);

    if (device_count < PCI_MAX_DEVICES)
        devices[device_count++] = d;
    else
        devices_not_kept++;
    /* Secondary bus 0 is a bridge the firmware never numbered: nothing behind it is reachable. */
    if (d.header_type == 1 && d.class_code == CLASS_BRIDGE && d.subclass == SUBCLASS_PCI_BRIDGE && secondary)
        walk_add_bus(walk, secondary);
}

static uint16_t vendor_at(uint8_t bus, uint8_t slot, uint8_t func)
{
    unsigned long flags = spin_lock_irqsave(&config_lock);
    uint16_t vendor = raw_read16(bus, slot, func, PCI_VENDOR_ID);
    spin_unlock_irqrestore(&config_lock, flags);
    return vendor;
}

static uint8_t header_type_at(uint8_t bus, uint8_t slot, uint8_t func)
{
    unsigned long flags = spin_lock_irqsave(&config_lock);
    uint8_t type = raw_read8(bus, slot, func, PCI_HEADER_TYPE);
    spin_unlock_irqrestore(&config_lock, flags);
    return type;
}

static void scan_bus(struct bus_walk *walk, uint8_t bus)
{
    walk->buses++;
    for (uint8_t slot = 0; slot < 32; slot++) {
        if (vendor_at(bus, slot, 0) == NO_VENDOR)
            continue;
        scan_function(walk, bus, slot, 0);
        if (!(header_type_at(bus, slot, 0) & HEADER_MULTIFUNCTION))
            continue;
        for (uint8_t func = 1; func < 8; func++)
            if (vendor_at(bus, slot, func) != NO_VENDOR)
                scan_function(walk, bus, slot, func);
    }
}

static void scan_all(void)
{
    static struct bus_walk walk; /* 300 bytes off the task stack; only the scan winner uses it, once */
    if (vendor_at(0, 0, 0) != NO_VENDOR && (header_type_at(0, 0, 0) & HEADER_MULTIFUNCTION)) {
        for (uint8_t func = 0; func < 8; func++)
            if (vendor_at(0, 0, func) != NO_VENDOR)
                walk_add_bus(&walk, func);
    } else {
        walk_add_bus(&walk, 0);
    }
    while (walk.head < walk.tail)
        scan_bus(&walk, walk.queue[walk.head++]);

    log_info("pci: %u functions on %u bus%s", device_count + devices_not_kept, walk.buses,
             walk.buses == 1 ? "" : "es");
    if (devices_not_kept)
        log_warn("pci: only the first %u functions are kept; %u more are invisible to drivers", PCI_MAX_DEVICES,
                 devices_not_kept);
}

static void ensure_scanned(void)
{
    int state = atomic_load_explicit(&scan_state, memory_order_acquire);
    if (state == 2)
        return;
    int expected = 0;
    if (atomic_compare_exchange_strong(&scan_state, &expected, 1)) {
        scan_all();
        atomic_store_explicit(&scan_state, 2, memory_order_release);
        return;
    }
    /* Another task is scanning: the list is complete when it says so. */
    while (atomic_load_explicit(&scan_state, memory_order_acquire) != 2)
        cpu_relax();
}

unsigned pci_device_count(void)
{
    ensure_scanned();
    return device_count;
}

const struct pci_device *pci_device_at(unsigned index)
{
    ensure_scanned();
    return index < device_count ? &devices[index] : 0;
}

const struct pci_device *pci_find(uint16_t vendor, uint16_t device)
{
    ensure_scanned();
    for (unsigned i = 0; i < device_count; i++)
        if (devices[i].vendor == vendor && devices[i].device == device)
            return &devices[i];
    return 0;
}

/* ---- BARs, command, interrupt line ----------------------------------------------------------------------- */

static unsigned bar_count(const struct pci_device *dev)
{
    switch (dev->header_type) {
    case 0: return 6;
    case 1: return 2;
    case 2: return 1;
    default: return 0;
    }
}

bool pci_read_bar(const struct pci_device *dev, unsigned index, struct pci_bar *bar)
{
    *bar = (struct pci_bar){ 0 };
    if (index >= bar_count(dev))
        return false;
    uint8_t b = dev->bus, s = dev->slot, f = dev->func;
    uint16_t reg = (uint16_t)(PCI_BAR0 + 4 * index);

    unsigned long flags = spin_lock_irqsave(&config_lock);
    uint16_t command = raw_read16(b, s, f, PCI_COMMAND);
    /* Decoding off while the register holds all ones, or the device would answer at a bogus address. */
    raw_write16(b, s, f, PCI_COMMAND, command & (uint16_t)~(PCI_COMMAND_IO | PCI_COMMAND_MEMORY));

    uint32_t low = raw_read32(b, s, f, reg);
    raw_write32(b, s, f, reg, 0xFFFFFFFFu);
    uint32_t low_mask = raw_read32(b, s, f, reg);
    raw_write32(b, s, f, reg, low);

    if (low & 1) {
        bar->is_io = true;
        uint32_t mask = low_mask & ~3u;
        if (mask && !(mask & 0xFFFF0000u))
            mask |= 0xFFFF0000u; /* a 16-bit port decoder reads its upper half as zero */
        bar->base = low & ~3u;
        bar->size = mask ? (uint32_t)(~mask + 1) : 0;
    } else {
        unsigned type = (low >> 1) & 3;
        bar->prefetchable = (low >> 3) & 1;
        uint64_t base = low & ~0xFu;
        uint64_t mask = low_mask & ~0xFu;
        bool implemented = mask != 0;
        if (type == 2 && index + 1 < bar_count(dev)) {
            bar->is_64bit = true;
            uint16_t hreg = (uint16_t)(reg + 4);
            uint32_t high = raw_read32(b, s, f, hreg);
            raw_write32(b, s, f, hreg, 0xFFFFFFFFu);
            uint32_t high_mask = raw_read32(b, s, f, hreg);
            raw_write32(b, s, f, hreg, high);
            base |= (uint64_t)high << 32;
            mask |= (uint64_t)high_mask << 32;
            implemented = mask != 0; /* a BAR of 4 GiB or more has no size bits in its low half */
        } else {
            mask |= 0xFFFFFFFF00000000ull;
        }
        bar->base = base;
        bar->size = implemented ? ~mask + 1 : 0;
    }

    raw_write16(b, s, f, PCI_COMMAND, command);
    spin_unlock_irqrestore(&config_lock, flags);
    bar->present = bar->size != 0;
    return bar->present;
}

void pci_enable(const struct pci_device *dev, bool io, bool memory, bool bus_master)
{
    unsigned long flags = spin_lock_irqsave(&config_lock);
    uint16_t command = raw_read16(dev->bus, dev->slot, dev->func, PCI_COMMAND);
    command |= (io ? PCI_COMMAND_IO : 0) | (memory ? PCI_COMMAND_MEMORY : 0) |
               (bus_master ? PCI_COMMAND_BUS_MASTER : 0);
    command &= (uint16_t)~PCI_COMMAND_INTX_DISABLE;
    raw_write16(dev->bus, dev->slot, dev->func, PCI_COMMAND, command);
    spin_unlock_irqrestore(&config_lock, flags);
}

uint8_t pci_interrupt_line(const struct pci_device *dev) { return pci_config_read8(dev, PCI_INTERRUPT_LINE); }

/* ---- capabilities and MSI -------------------------------------------------------------------------------- */

static uint8_t cap_read8(void *ctx, uint16_t offset) { return pci_config_read8(ctx, offset); }

/* What is wrong with a function's capabilities is said once, not at every lookup (a driver's probe and the irq
 * layer each look): one bit per kind of fault for each function the scan kept. */
#define CAP_FAULT_LIST 1u
#define CAP_FAULT_MSI 2u
#define CAP_FAULT_MSIX 4u
static atomic_uchar cap_faults_told[PCI_MAX_DEVICES];

static bool first_telling(const struct pci_device *dev, unsigned fault)
{
    uintptr_t at = (uintptr_t)dev, first = (uintptr_t)devices;
    if (at < first || at >= (uintptr_t)(devices + device_count))
        return true; /* not one of the scan's functions: nowhere to remember it was said */
    return !(atomic_fetch_or(&cap_faults_told[(at - first) / sizeof *dev], fault) & fault);
}

/* An MSI or MSI-X capability must end inside the configuration space before anything reads its registers;
 * whatever the others hold, only their two header bytes are read here. */
static bool cap_fits(const struct pci_device *dev, uint8_t id, uint8_t at, const char **why)
{
    if (id == PCI_CAP_ID_MSI)
        return msi_fits(at, pci_config_read16(dev, (uint16_t)(at + 2)), why); /* at <= 0xFC: control <= 0xFE */
    if (id == PCI_CAP_ID_MSIX)
        return msix_fits(at, why);
    return true;
}

uint8_t pci_find_capability(const struct pci_device *dev, uint8_t id)
{
    if (!(pci_config_read16(dev, PCI_STATUS) & PCI_STATUS_CAP_LIST) || dev->header_type > 1)
        return 0; /* no list (a CardBus header keeps its pointer elsewhere, and no driver here wants one) */
    const char *why;
    uint8_t at = pci_cap_find(cap_read8, (void *)dev, id, &why);
    if (why) {
        if (first_telling(dev, CAP_FAULT_LIST))
            log_warn("pci %02x:%02x.%u: %s: its capabilities are not used", dev->bus, dev->slot, dev->func, why);
        return 0;
    }
    if (at && !cap_fits(dev, id, at, &why)) {
        bool msi = id == PCI_CAP_ID_MSI;
        if (first_telling(dev, msi ? CAP_FAULT_MSI : CAP_FAULT_MSIX))
            log_warn("pci %02x:%02x.%u: %s capability at 0x%02x refused: %s; the function goes on as if it had none",
                     dev->bus, dev->slot, dev->func, msi ? "MSI" : "MSI-X", at, why);
        return 0;
    }
    return at;
}

bool pci_msi_enable(const struct pci_device *dev, uint64_t address, uint16_t data, const char **why)
{
    uint8_t cap = pci_find_capability(dev, PCI_CAP_ID_MSI);
    if (!cap) {
        *why = "it has no MSI capability";
        return false;
    }
    uint16_t control = pci_config_read16(dev, (uint16_t)(cap + 2));
    const char *unused;
    if (!msi_fits(cap, control, &unused)) {
        *why = "its MSI capability's control word changed to one whose registers run past the configuration space";
        return false;
    }
    struct msi_layout l = msi_layout(cap, control);
    if (!l.address_high && address >> 32) {
        *why = "its MSI capability has 32-bit addresses only";
        return false;
    }
    /* Off while the message changes, so no half-written message is ever sent. */
    control &= (uint16_t)~(MSI_CONTROL_ENABLE | MSI_CONTROL_MME_MASK);
    pci_config_write16(dev, l.control, control);
    pci_config_write32(dev, l.address_low, (uint32_t)address);
    if (l.address_high)
        pci_config_write32(dev, l.address_high, (uint32_t)(address >> 32));
    pci_config_write16(dev, l.data, data);
    if (l.mask)
        pci_config_write32(dev, l.mask, pci_config_read32(dev, l.mask) & ~1u); /* message 0 unmasked */
    pci_config_write16(dev, PCI_COMMAND, pci_config_read16(dev, PCI_COMMAND) | PCI_COMMAND_INTX_DISABLE);
    pci_config_write16(dev, l.control, control | MSI_CONTROL_ENABLE);
    return true;
}

bool pci_msix_enable(const struct pci_device *dev, uint64_t address, uint16_t data, const char **why)
{
    uint8_t cap = pci_find_capability(dev, PCI_CAP_ID_MSIX);
    if (!cap) {
        *why = "it has no MSI-X capability";
        return false;
    }
    uint16_t control = pci_config_read16(dev, (uint16_t)(cap + 2));
    uint32_t table = pci_config_read32(dev, (uint16_t)(cap + 4));
    struct pci_bar bar;
    bool usable = (table & 7) <= 5 && pci_read_bar(dev, table & 7, &bar) && !bar.is_io;
    struct msix_place place;
    if (!msix_place(control, table, usable ? bar.size : 0, &place, why) || !pci_map_bar(&bar, why))
        return false;
    /* Enabled with the function masked while entry 0 is written: nothing is sent from a half-written entry. */
    control &= (uint16_t)~MSIX_CONTROL_ENABLE;
    pci_config_write16(dev, (uint16_t)(cap + 2), control | MSIX_CONTROL_ENABLE | MSIX_CONTROL_FUNCTION_MASK);
    pci_bar_write32(&bar, place.offset + MSIX_ENTRY_ADDRESS_LOW, (uint32_t)address);
    pci_bar_write32(&bar, place.offset + MSIX_ENTRY_ADDRESS_HIGH, (uint32_t)(address >> 32));
    pci_bar_write32(&bar, place.offset + MSIX_ENTRY_DATA, data);
    pci_bar_write32(&bar, place.offset + MSIX_ENTRY_VECTOR_CONTROL,
                    pci_bar_read32(&bar, place.offset + MSIX_ENTRY_VECTOR_CONTROL) & ~1u);
    pci_config_write16(dev, PCI_COMMAND, pci_config_read16(dev, PCI_COMMAND) | PCI_COMMAND_INTX_DISABLE);
    pci_config_write16(dev, (uint16_t)(cap + 2),
                       (uint16_t)((control | MSIX_CONTROL_ENABLE) & ~MSIX_CONTROL_FUNCTION_MASK));
    return true;
}

/* ---- BAR register access --------------------------------------------------------------------------------- */

static volatile void *mmio(const struct pci_bar *bar, uint32_t offset)
{
    return (volatile void *)(uintptr_t)(bar->base + offset);
}

DEBUGGER_TEXT uint8_t pci_bar_read8(const struct pci_bar *bar, uint32_t offset)
{
    return bar->is_io ? inb((uint16_t)(bar->base + offset)) : *(volatile uint8_t *)mmio(bar, offset);
}

DEBUGGER_TEXT uint16_t pci_bar_read16(const struct pci_bar *bar, uint32_t offset)
{
    return bar->is_io ? inw((uint16_t)(bar->base + offset)) : *(volatile uint16_t *)mmio(bar, offset);
}

DEBUGGER_TEXT uint32_t pci_bar_read32(const struct pci_bar *bar, uint32_t offset)
{
    return bar->is_io ? inl((uint16_t)(bar->base + offset)) : *(volatile uint32_t *)mmio(bar, offset);
}

DEBUGGER_TEXT void pci_bar_write8(const struct pci_bar *bar, uint32_t offset, uint8_t value)
{
    if (bar->is_io)
        outb((uint16_t)(bar->base + offset), value);
    else
        *(volatile uint8_t *)mmio(bar, offset) = value;
}

DEBUGGER_TEXT void pci_bar_write16(const struct pci_bar *bar, uint32_t offset, uint16_t value)
{
    if (bar->is_io)
        outw((uint16_t)(bar->base + offset), value);
    else
        *(volatile uint16_t *)mmio(bar, offset) = value;
}

DEBUGGER_TEXT void pci_bar_write32(const struct pci_bar *bar, uint32_t offset, uint32_t value)
{
    if (bar->is_io)
        outl((uint16_t)(bar->base + offset), value);
    else
        *(volatile uint32_t *)mmio(bar, offset) = value;
}

uint64_t pci_dma_address(const void *ptr) { return (uint64_t)(uintptr_t)ptr; }
