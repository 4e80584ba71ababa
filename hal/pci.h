/* hal/pci.h: the PCI bus as a portable driver sees it -- the devices found by one scan of every bus reachable
 * from the host bridge, their configuration space, their base address registers (BARs), the command bits a
 * DMA driver needs, the legacy interrupt line, and register access through a BAR whichever kind it is. The
 * architecture implements it (arch/x86_64/pci.c: configuration mechanism #1, ports 0xCF8/0xCFC). Task context
 * only, except pci_bar_read and pci_bar_write, which take no lock and are safe in an interrupt handler. */
#ifndef HAL_PCI_H
#define HAL_PCI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Standard configuration-space header offsets (type 0 unless noted). */
#define PCI_VENDOR_ID 0x00
#define PCI_DEVICE_ID 0x02
#define PCI_COMMAND 0x04
#define PCI_STATUS 0x06
#define PCI_REVISION 0x08
#define PCI_PROG_IF 0x09
#define PCI_SUBCLASS 0x0A
#define PCI_CLASS 0x0B
#define PCI_HEADER_TYPE 0x0E
#define PCI_BAR0 0x10
#define PCI_SECONDARY_BUS 0x19 /* type 1 (PCI-to-PCI bridge) */
#define PCI_SUBSYSTEM_VENDOR_ID 0x2C
#define PCI_SUBSYSTEM_ID 0x2E
#define PCI_CAP_POINTER 0x34 /* types 0 and 1: the first capability's offset, when PCI_STATUS_CAP_LIST */
#define PCI_INTERRUPT_LINE 0x3C
#define PCI_INTERRUPT_PIN 0x3D

#define PCI_COMMAND_IO (1u << 0)
#define PCI_COMMAND_MEMORY (1u << 1)
#define PCI_COMMAND_BUS_MASTER (1u << 2)
#define PCI_COMMAND_INTX_DISABLE (1u << 10)
#define PCI_STATUS_CAP_LIST (1u << 4)

#define PCI_CAP_ID_MSI 0x05
#define PCI_CAP_ID_MSIX 0x11

#define PCI_MAX_DEVICES 64 /* functions remembered by the scan; more are counted and logged, not kept */

/* One function, as the scan found it. */
struct pci_device {
    uint8_t bus, slot, func;
    uint16_t vendor, device;
    uint16_t subsystem_vendor, subsystem;
    uint8_t class_code, subclass, prog_if, revision;
    uint8_t header_type;    /* without the multifunction bit: 0 device, 1 PCI-to-PCI bridge, 2 CardBus */
    uint8_t interrupt_pin;  /* 0 none, 1..4 INTA#..INTD# */
    uint8_t interrupt_line; /* what the firmware routed it to (an ISA IRQ on a PC); 0xFF unknown */
};

/* One base address register, decoded and sized. */
struct pci_bar {
    bool present;      /* implemented and non-zero in size */
    bool is_io;        /* I/O space (ports) rather than memory */
    bool is_64bit;     /* a memory BAR that takes this register and the next */
    bool prefetchable;
    uint64_t base;     /* port number or physical address */
    uint64_t size;     /* bytes decoded */
};

/* The scan happens once, on the first call of any of these three; the list is then fixed. */
unsigned pci_device_count(void);
const struct pci_device *pci_device_at(unsigned index); /* NULL past the end */
/* The first function with this vendor and device id, in bus/slot/function order; NULL when none. */
const struct pci_device *pci_find(uint16_t vendor, uint16_t device);

uint8_t pci_config_read8(const struct pci_device *dev, uint16_t offset);
uint16_t pci_config_read16(const struct pci_device *dev, uint16_t offset); /* offset 2-byte aligned */
uint32_t pci_config_read32(const struct pci_device *dev, uint16_t offset); /* offset 4-byte aligned */
void pci_config_write8(const struct pci_device *dev, uint16_t offset, uint8_t value);
void pci_config_write16(const struct pci_device *dev, uint16_t offset, uint16_t value);
void pci_config_write32(const struct pci_device *dev, uint16_t offset, uint32_t value);

/* BAR index 0..5 of a type 0 header (0..1 of a bridge), sized by the all-ones probe with decoding switched off
 * for the moment it takes. False, and *bar marked absent, when the index is out of range or unimplemented. */
bool pci_read_bar(const struct pci_device *dev, unsigned index, struct pci_bar *bar);
/* Sets the command register's I/O-space, memory-space and bus-master bits that are asked for (others are
 * left as they are) and clears INTx-disable, so the device can decode, DMA and raise its interrupt pin. */
void pci_enable(const struct pci_device *dev, bool io, bool memory, bool bus_master);
/* The firmware's interrupt line register (0xFF or 0 when it routed nothing). */
uint8_t pci_interrupt_line(const struct pci_device *dev);

/* The offset of the function's first capability with this id (PCI_CAP_ID_*), 0 when it has none. The list is
 * device input, walked bounded: a broken one (a loop, a pointer out of 0x40..0xFC or unaligned, too many
 * entries) is one warning and counts as no capability. So is an MSI or MSI-X capability whose registers would
 * end past the 256 bytes of configuration space (one at 0xF0..0xFC may claim them): refused, one warning, and
 * the function goes on as if it had none -- to MSI-X, or to INTx. Each warning is said once for a function the
 * scan found, however often it is looked up. Task context. */
uint8_t pci_find_capability(const struct pci_device *dev, uint8_t id);
/* Programs the function's MSI capability to send one message (Multiple Message Enable 0, per-vector mask, if
 * any, cleared), address and data as given, enables it and disables INTx (the command register's bit 10) so
 * the pin stays quiet while MSI is on. False with *why, changing nothing, when the function has no MSI
 * capability (or one refused, as above, also when its control word changes to a refused one between the lookup
 * and the enable) or its 32-bit variant cannot hold the address. Called by the architecture's irq_attach_msi,
 * which composes the message; task context. */
bool pci_msi_enable(const struct pci_device *dev, uint64_t address, uint16_t data, const char **why);
/* The same through the MSI-X capability: its table's BAR mapped, entry 0 given the message and unmasked (the
 * others stay masked, as reset leaves them), MSI-X enabled, INTx disabled. False with *why, changing nothing,
 * when there is no MSI-X capability or its table cannot be reached. Task context, before the device runs:
 * sizing the table's BAR turns its decoding off for a moment. */
bool pci_msix_enable(const struct pci_device *dev, uint64_t address, uint16_t data, const char **why);

/* Register access at offset bytes into a BAR: port I/O for an I/O BAR, a volatile load or store for a memory
 * BAR (which must be mapped: below 4 GiB, or through pci_map_bar). No lock; safe in interrupt context. */
uint8_t pci_bar_read8(const struct pci_bar *bar, uint32_t offset);
uint16_t pci_bar_read16(const struct pci_bar *bar, uint32_t offset);
uint32_t pci_bar_read32(const struct pci_bar *bar, uint32_t offset);
void pci_bar_write8(const struct pci_bar *bar, uint32_t offset, uint8_t value);
void pci_bar_write16(const struct pci_bar *bar, uint32_t offset, uint16_t value);
void pci_bar_write32(const struct pci_bar *bar, uint32_t offset, uint32_t value);

/* Makes a memory BAR reachable by pci_bar_read/write and plain loads at its base address: nothing to do below
 * 4 GiB; above, the architecture maps it uncached (arch/x86_64/mmio_map.c). False with *why when it cannot.
 * Task context. */
bool pci_map_bar(const struct pci_bar *bar, const char **why);

/* The bus address a device must be given for kernel memory at ptr (the identity map: the same number). */
uint64_t pci_dma_address(const void *ptr);

#endif
