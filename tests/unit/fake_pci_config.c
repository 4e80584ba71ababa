/* tests/unit/fake_pci_config.c: the fake configuration mechanism #1 and its one function (fake_pci_config.h),
 * and pci_map_bar for BARs that point into fake_pci_bar_memory. */
#include "fake_pci_config.h"

#include <stdlib.h>
#include <string.h>

#include "hal/pci.h"

#define CONFIG_ADDRESS 0xCF8
#define CONFIG_DATA 0xCFC
#define CONFIG_ENABLE 0x80000000u

uint8_t fake_pci_config[256];
uint32_t fake_pci_bar_mask[6];
void (*fake_pci_read_hook)(uint16_t offset);
_Alignas(FAKE_PCI_BAR_MEMORY_SIZE) uint8_t fake_pci_bar_memory[FAKE_PCI_BAR_MEMORY_SIZE];

static uint32_t address_register;

void fake_pci_reset(void)
{
    memset(fake_pci_config, 0, sizeof fake_pci_config);
    memset(fake_pci_bar_mask, 0, sizeof fake_pci_bar_mask);
    memset(fake_pci_bar_memory, 0, sizeof fake_pci_bar_memory);
    fake_pci_read_hook = NULL;
    address_register = 0;
}

/* Whether the address register selects the fake function; the dword it selects goes to *reg. */
static bool selected(unsigned *reg)
{
    unsigned bus = (address_register >> 16) & 0xFF, slot = (address_register >> 11) & 31;
    unsigned func = (address_register >> 8) & 7;
    *reg = address_register & 0xFC;
    return (address_register & CONFIG_ENABLE) && bus == FAKE_PCI_BUS && slot == FAKE_PCI_SLOT && func == 0;
}

uint32_t fake_pci_port_in(uint16_t port, unsigned bytes)
{
    if (port == CONFIG_ADDRESS && bytes == 4)
        return address_register;
    unsigned reg;
    if (port < CONFIG_DATA || port + bytes > CONFIG_DATA + 4 || !selected(&reg))
        return bytes == 4 ? 0xFFFFFFFFu : (1u << (8 * bytes)) - 1;
    unsigned offset = reg + (port - CONFIG_DATA);
    uint32_t value = 0;
    for (unsigned i = 0; i < bytes; i++)
        value |= (uint32_t)fake_pci_config[offset + i] << (8 * i);
    if (fake_pci_read_hook)
        fake_pci_read_hook((uint16_t)offset);
    return value;
}

static uint32_t dword_at(unsigned reg)
{
    return (uint32_t)fake_pci_config[reg] | (uint32_t)fake_pci_config[reg + 1] << 8 |
           (uint32_t)fake_pci_config[reg + 2] << 16 | (uint32_t)fake_pci_config[reg + 3] << 24;
}

void fake_pci_port_out(uint16_t port, uint32_t value, unsigned bytes)
{
    if (port == CONFIG_ADDRESS && bytes == 4) {
        address_register = value;
        return;
    }
    unsigned reg;
    if (port < CONFIG_DATA || port + bytes > CONFIG_DATA + 4 || !selected(&reg))
        return;
    unsigned shift = 8 * (port - CONFIG_DATA);
    uint32_t lanes = (bytes == 4 ? 0xFFFFFFFFu : (1u << (8 * bytes)) - 1) << shift;
    uint32_t old = dword_at(reg);
    uint32_t merged = (old & ~lanes) | ((value << shift) & lanes);
    if (reg >= PCI_BAR0 && reg < PCI_BAR0 + 24) {
        uint32_t mask = fake_pci_bar_mask[(reg - PCI_BAR0) / 4];
        merged = (merged & mask) | (old & ~mask);
    }
    for (unsigned i = 0; i < 4; i++)
        fake_pci_config[reg + i] = (uint8_t)(merged >> (8 * i));
}

bool pci_map_bar(const struct pci_bar *bar, const char **why)
{
    uintptr_t memory = (uintptr_t)fake_pci_bar_memory;
    if (bar->is_io || bar->base < memory || bar->size > FAKE_PCI_BAR_MEMORY_SIZE ||
        bar->base - memory > FAKE_PCI_BAR_MEMORY_SIZE - bar->size) {
        *why = "the fake maps only BARs inside fake_pci_bar_memory";
        return false;
    }
    return true;
}
