/* arch/x86_64/pci_msi.h: the PCI capability list walk and the MSI capability -- where its registers sit and the
 * message an x86 device must write to interrupt a CPU -- as pure functions over a configuration-space reader,
 * so that host tests can feed them hostile config spaces (tests/unit/test_pci_msi.c). arch/x86_64/pci.c does
 * the I/O; arch/x86_64/interrupts.c chooses the vector and the CPU. */
#ifndef ARCH_X86_64_PCI_MSI_H
#define ARCH_X86_64_PCI_MSI_H

#include <stdbool.h>
#include <stdint.h>

#include "hal/pci.h"

#define PCI_CAP_MAX_WALK 48          /* (256 - 64) / 4: more entries than that is a loop */
#define PCI_CONFIG_SPACE_SIZE 0x100  /* what configuration mechanism #1 reaches: offsets 0..0xFF */

#define MSI_CONTROL_ENABLE (1u << 0)
#define MSI_CONTROL_MME_MASK (7u << 4) /* Multiple Message Enable: 0 asks for one message */
#define MSI_CONTROL_64BIT (1u << 7)
#define MSI_CONTROL_PER_VECTOR_MASK (1u << 8)

#define MSI_ADDRESS_BASE 0xFEE00000u /* the local APICs' message window */

/* Reads one byte of a function's configuration space at offset (0..0xFF). */
typedef uint8_t (*pci_cfg_read8_fn)(void *ctx, uint16_t offset);

/* The offset of the first capability with this id, or 0 when there is none or the list is broken: a pointer
 * below 0x40 or not dword-aligned (other than the 0 that ends the list), a pointer seen before, or more than
 * PCI_CAP_MAX_WALK entries. *why (when not NULL) says which when the list is broken, NULL when it is fine. */
uint8_t pci_cap_find(pci_cfg_read8_fn read8, void *ctx, uint8_t id, const char **why);

/* Where the registers of an MSI capability at cap sit, for its Message Control word. */
struct msi_layout {
    uint16_t control;      /* Message Control (16 bits) */
    uint16_t address_low;  /* Message Address (32 bits) */
    uint16_t address_high; /* Message Upper Address (32 bits); 0 for the 32-bit variant */
    uint16_t data;         /* Message Data (16 bits) */
    uint16_t mask;         /* Mask Bits (32 bits); 0 when the function has no per-vector masking */
    uint16_t end;          /* one past the capability's last register (Pending Bits, when it masks) */
};
struct msi_layout msi_layout(uint8_t cap, uint16_t control);

/* Whether the MSI capability at cap, with this Message Control word, ends inside the configuration space. A
 * capability at 0xF0..0xFC can claim registers at 0x100 and beyond, which no configuration access reaches: such
 * a capability is broken device input, to be treated as absent. False with *why then. */
bool msi_fits(uint8_t cap, uint16_t control, const char **why);

/* MSI-X: the Message Control word's fields and where the table is. */
#define MSIX_CONTROL_TABLE_SIZE 0x07FFu /* entries minus one */
#define MSIX_CONTROL_FUNCTION_MASK (1u << 14)
#define MSIX_CONTROL_ENABLE (1u << 15)
#define MSIX_CAP_SIZE 12 /* header and control, Table Offset/BIR, PBA Offset/BIR, whatever the control says */
#define MSIX_ENTRY_SIZE 16
#define MSIX_ENTRY_ADDRESS_LOW 0
#define MSIX_ENTRY_ADDRESS_HIGH 4
#define MSIX_ENTRY_DATA 8
#define MSIX_ENTRY_VECTOR_CONTROL 12 /* bit 0: masked */

/* Where the MSI-X table lies, from the capability's Message Control word and its Table Offset/BIR dword (cap + 4),
 * judged against the size of the BAR it names (bar_size 0: that BAR is absent or not memory): the BAR index
 * 0..5 and the table inside it, 8-byte aligned. False with *why when it cannot be used. */
struct msix_place {
    unsigned bar;     /* BAR index */
    uint32_t offset;  /* the table's offset in it */
    unsigned entries;
};
bool msix_place(uint16_t control, uint32_t table_reg, uint64_t bar_size, struct msix_place *p, const char **why);

/* msi_fits for the MSI-X capability at cap: its MSIX_CAP_SIZE bytes must end by PCI_CONFIG_SPACE_SIZE. */
bool msix_fits(uint8_t cap, const char **why);

/* The message for a fixed, edge-triggered interrupt at vector on the local APIC with this id, physical
 * destination mode (no interrupt remapping: the id is 8 bits). False when the id is above 254 (0xFF is the
 * broadcast) or the vector is one of the exceptions' (below 0x10 a local APIC refuses it). */
struct msi_message {
    uint64_t address;
    uint16_t data;
};
bool msi_compose(uint8_t vector, uint32_t apic_id, struct msi_message *msg);

#endif
