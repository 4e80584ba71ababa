/* tests/fuzz/fuzz_pci_caps.c: a PCI function's capability list as arbitrary bytes, through arch/x86_64/pci.c's
 * lookup and MSI/MSI-X programming (with arch/x86_64/pci_msi.c) over the fake configuration mechanism
 * (tests/unit/fake_pci_config.h). The input's first 256 bytes are the configuration space (shorter inputs are
 * padded with zeros; the capability-list bit of the status register is always set, BAR0 always a 16 KiB memory
 * BAR over fake_pci_bar_memory so an MSI-X table in it is really written); the bytes after them, in pairs
 * (offset, xor), change the space one pair after each configuration read, as a device that answers differently
 * from one look to the next. Whatever the bytes, nothing panics (pci.c panics on a configuration access past
 * 0xFF, and the fake panic aborts), a capability found is at a dword-aligned 0x40..0xFC, and, while the space
 * holds still, an MSI or MSI-X capability found ends by 0x100 and an enable succeeds only through one found. */
#include <stdbool.h>
#include <string.h>

#include "arch/x86_64/pci_msi.h"
#include "fake_kernel.h"
#include "fake_pci_config.h"
#include "fuzz.h"
#include "hal/pci.h"

static const uint8_t *drift;
static size_t drift_left;

static void drift_after_read(uint16_t offset)
{
    (void)offset;
    if (drift_left < 2)
        return;
    fake_pci_config[drift[0]] ^= drift[1];
    drift += 2;
    drift_left -= 2;
}

static void bar0_over_fake_memory(void)
{
    uint64_t base = (uintptr_t)fake_pci_bar_memory;
    uint32_t low = (uint32_t)base | 0x4, high = (uint32_t)(base >> 32); /* type 2: 64-bit */
    memcpy(&fake_pci_config[PCI_BAR0], &low, 4);
    memcpy(&fake_pci_config[PCI_BAR0 + 4], &high, 4);
    fake_pci_bar_mask[0] = ~(uint32_t)(FAKE_PCI_BAR_MEMORY_SIZE - 1) & ~0xFu;
    fake_pci_bar_mask[1] = 0xFFFFFFFFu;
}

static uint16_t config16(unsigned offset)
{
    return (uint16_t)(fake_pci_config[offset] | fake_pci_config[offset + 1] << 8);
}

static void check_found(uint8_t at, uint8_t id, bool still)
{
    if (!at)
        return;
    CHECK(at >= 0x40 && at <= 0xFC && !(at & 3));
    if (!still)
        return;
    CHECK(fake_pci_config[at] == id);
    if (id == PCI_CAP_ID_MSI)
        CHECK(msi_layout(at, config16(at + 2u)).end <= PCI_CONFIG_SPACE_SIZE);
    if (id == PCI_CAP_ID_MSIX)
        CHECK(at + MSIX_CAP_SIZE <= PCI_CONFIG_SPACE_SIZE);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fake_pci_reset();
    fake_log_reset();
    size_t space = size < sizeof fake_pci_config ? size : sizeof fake_pci_config;
    memcpy(fake_pci_config, data, space);
    fake_pci_config[PCI_STATUS] |= PCI_STATUS_CAP_LIST;
    bar0_over_fake_memory();
    drift = data + space;
    drift_left = size - space;
    bool still = drift_left < 2;
    fake_pci_read_hook = drift_after_read;
    struct pci_device dev = { .bus = FAKE_PCI_BUS, .slot = FAKE_PCI_SLOT, .header_type = fake_pci_config[0x0E] & 1 };

    uint8_t msi = pci_find_capability(&dev, PCI_CAP_ID_MSI);
    check_found(msi, PCI_CAP_ID_MSI, still);
    uint8_t msix = pci_find_capability(&dev, PCI_CAP_ID_MSIX);
    check_found(msix, PCI_CAP_ID_MSIX, still);
    uint8_t other_id = fake_pci_config[PCI_INTERRUPT_PIN + 1]; /* any id the input names */
    check_found(pci_find_capability(&dev, other_id), other_id, still);

    const char *why = NULL;
    bool msi_enabled = pci_msi_enable(&dev, MSI_ADDRESS_BASE, 0x41, &why);
    CHECK(msi_enabled || why);
    CHECK(!still || !msi_enabled || msi);
    why = NULL;
    bool msix_enabled = pci_msix_enable(&dev, MSI_ADDRESS_BASE, 0x41, &why);
    CHECK(msix_enabled || why);
    CHECK(!still || !msix_enabled || msix);
    fake_pci_read_hook = NULL;
    return 0;
}
