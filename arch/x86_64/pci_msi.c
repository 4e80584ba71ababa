/* arch/x86_64/pci_msi.c: the capability list walk and the MSI capability's layout and message (pci_msi.h). The
 * configuration space is device input: the walk trusts no pointer it is given, and an MSI or MSI-X capability
 * is judged to fit in the space before any of its registers is touched. */
#include "arch/x86_64/pci_msi.h"

#include <stddef.h>

#include "arch/x86_64/lapic_regs.h"

uint8_t pci_cap_find(pci_cfg_read8_fn read8, void *ctx, uint8_t id, const char **why)
{
    uint64_t seen = 0; /* one bit per dword of 0x40..0xFF */
    const char *broken = NULL;
    uint8_t found = 0;
    uint8_t at = read8(ctx, PCI_CAP_POINTER);
    for (unsigned entries = 0; at; entries++) {
        if (at < 0x40 || (at & 3)) {
            broken = "a capability pointer outside 0x40..0xFC or not dword-aligned";
            break;
        }
        if (entries == PCI_CAP_MAX_WALK) {
            broken = "more capabilities than the configuration space holds";
            break;
        }
        uint64_t bit = 1ull << ((at - 0x40) / 4);
        if (seen & bit) {
            broken = "a capability list that loops";
            break;
        }
        seen |= bit;
        if (read8(ctx, at) == id) {
            found = at;
            break;
        }
        at = read8(ctx, (uint16_t)(at + 1));
    }
    if (why)
        *why = broken;
    return broken ? 0 : found;
}

struct msi_layout msi_layout(uint8_t cap, uint16_t control)
{
    bool wide = control & MSI_CONTROL_64BIT;
    struct msi_layout l = {
        .control = (uint16_t)(cap + 2),
        .address_low = (uint16_t)(cap + 4),
        .address_high = wide ? (uint16_t)(cap + 8) : 0,
        .data = (uint16_t)(cap + (wide ? 12 : 8)),
    };
    l.end = (uint16_t)(l.data + 2);
    if (control & MSI_CONTROL_PER_VECTOR_MASK) {
        l.mask = (uint16_t)(cap + (wide ? 16 : 12));
        l.end = (uint16_t)(l.mask + 8); /* Mask Bits, then Pending Bits: 32 bits each */
    }
    return l;
}

bool msi_fits(uint8_t cap, uint16_t control, const char **why)
{
    if (msi_layout(cap, control).end <= PCI_CONFIG_SPACE_SIZE)
        return true;
    *why = "its registers run past the 256 bytes of configuration space";
    return false;
}

bool msix_place(uint16_t control, uint32_t table_reg, uint64_t bar_size, struct msix_place *p, const char **why)
{
    p->bar = table_reg & 7;
    p->offset = table_reg & ~7u;
    p->entries = (control & MSIX_CONTROL_TABLE_SIZE) + 1u;
    if (p->bar > 5) {
        *why = "its MSI-X table names a BAR that does not exist";
        return false;
    }
    if (!bar_size) {
        *why = "its MSI-X table's BAR is not an implemented memory BAR";
        return false;
    }
    /* Entry 0 is the one used; the whole table must still fit, or the device described a table it lacks. */
    if ((uint64_t)p->offset + (uint64_t)p->entries * MSIX_ENTRY_SIZE > bar_size) {
        *why = "its MSI-X table runs past the end of its BAR";
        return false;
    }
    return true;
}

bool msix_fits(uint8_t cap, const char **why)
{
    if (cap + MSIX_CAP_SIZE <= PCI_CONFIG_SPACE_SIZE)
        return true;
    *why = "its registers run past the 256 bytes of configuration space";
    return false;
}

bool msi_compose(uint8_t vector, uint32_t apic_id, struct msi_message *msg)
{
    if (apic_id > XAPIC_MAX_ID || vector < 0x10)
        return false;
    /* Address bits 19:12 the destination, bit 3 (redirection hint) 0 and bit 2 (destination mode) 0: physical.
     * Data bits 7:0 the vector, 10:8 delivery mode 000 fixed, bit 15 trigger mode 0 edge. */
    msg->address = MSI_ADDRESS_BASE | apic_id << 12;
    msg->data = vector;
    return true;
}
