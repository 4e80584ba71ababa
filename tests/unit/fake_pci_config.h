/* tests/unit/fake_pci_config.h: one PCI function behind a fake configuration mechanism #1, so arch/x86_64/pci.c
 * runs on the host over a configuration space a test or a fuzz target writes (tests/unit/fake_pci_config.c).
 * Force-included (-include) ahead of everything, it stands in for arch/x86_64/x86.h's port I/O: the address
 * register at 0xCF8 and the data window at 0xCFC..0xCFF reach fake_pci_config when they select
 * FAKE_PCI_BUS:FAKE_PCI_SLOT.0; every other function answers all ones, as an empty slot does. */
#ifndef TESTS_UNIT_FAKE_PCI_CONFIG_H
#define TESTS_UNIT_FAKE_PCI_CONFIG_H

#include <stdbool.h>
#include <stdint.h>

#define ARCH_X86_64_X86_H /* the real port I/O would fault on the host */

#define FAKE_PCI_BUS 0
#define FAKE_PCI_SLOT 3

/* The function's 256 bytes, as the device presents them. A write through the data window lands here, except
 * that a BAR (0x10..0x27) keeps the bits fake_pci_bar_mask leaves out: its type bits and its size. */
extern uint8_t fake_pci_config[256];
extern uint32_t fake_pci_bar_mask[6]; /* 0: the BAR is not implemented and reads as written at reset */
/* Called after each read through the data window with the offset read, when set: a device that answers one
 * thing at a first look and another at the next. */
extern void (*fake_pci_read_hook)(uint16_t offset);

/* Memory a memory BAR may point at (its base set to this address in the BAR registers): pci_map_bar accepts a
 * BAR inside it and refuses any other, so no fake BAR reaches the host's memory elsewhere. */
#define FAKE_PCI_BAR_MEMORY_SIZE 0x4000
extern uint8_t fake_pci_bar_memory[FAKE_PCI_BAR_MEMORY_SIZE];

/* Zeroes the function, the BAR masks and the hook. */
void fake_pci_reset(void);

uint32_t fake_pci_port_in(uint16_t port, unsigned bytes);
void fake_pci_port_out(uint16_t port, uint32_t value, unsigned bytes);

static inline void outb(uint16_t port, uint8_t v) { fake_pci_port_out(port, v, 1); }
static inline void outw(uint16_t port, uint16_t v) { fake_pci_port_out(port, v, 2); }
static inline void outl(uint16_t port, uint32_t v) { fake_pci_port_out(port, v, 4); }
static inline uint8_t inb(uint16_t port) { return (uint8_t)fake_pci_port_in(port, 1); }
static inline uint16_t inw(uint16_t port) { return (uint16_t)fake_pci_port_in(port, 2); }
static inline uint32_t inl(uint16_t port) { return fake_pci_port_in(port, 4); }

#endif
