/* tests/unit/test_pci_config.c: arch/x86_64/pci.c's capability lookup and MSI/MSI-X programming over a fake
 * configuration space (fake_pci_config.h) -- an MSI or MSI-X capability at 0xF0..0xFC whose registers would end
 * past 0x100 is refused with one log line and counts as absent, so the function falls back (to MSI-X, or to
 * INTx); the ones that fit there are programmed; a capability list that loops or points below 0x40 ends the
 * lookup; a control word that changes between two reads is caught. None of it may panic (pci.c panics on a
 * configuration access past 0xFF, so a capability it trusted too far would). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <setjmp.h>
#include <cmocka.h>

#include "arch/x86_64/pci_msi.h"
#include "fake_hal.h"
#include "fake_kernel.h"
#include "fake_pci_config.h"
#include "hal/pci.h"
#include "unit_main.h"

#define MESSAGE_ADDRESS 0xFEE00000u
#define MESSAGE_DATA 0x41
#define CAP_ID_POWER_MANAGEMENT 0x01

/* What the lookup and the two enables made of a function, each tried once, MSI first as irq_attach_msi does. */
struct attempt {
    const struct pci_device *dev;
    bool enables_only; /* no lookups of the test's own first: the enables' own lookups are the first reads */
    uint8_t msi_at, msix_at;
    bool msi_enabled, msix_enabled;
    const char *msi_why, *msix_why;
};

static void attempt_step(void *arg)
{
    struct attempt *a = arg;
    if (!a->enables_only) {
        a->msi_at = pci_find_capability(a->dev, PCI_CAP_ID_MSI);
        a->msix_at = pci_find_capability(a->dev, PCI_CAP_ID_MSIX);
    }
    a->msi_enabled = pci_msi_enable(a->dev, MESSAGE_ADDRESS, MESSAGE_DATA, &a->msi_why);
    if (!a->msi_enabled)
        a->msix_enabled = pci_msix_enable(a->dev, MESSAGE_ADDRESS, MESSAGE_DATA, &a->msix_why);
}

/* The attempt, which must return: a panic (pci.c's, at a configuration access past 0xFF) fails the test. The
 * setjmp is here, in a frame of its own, so no caller's variable lives across it. */
static struct attempt attempt_with(const struct pci_device *dev, bool enables_only)
{
    static struct attempt a;
    a = (struct attempt){ .dev = dev, .enables_only = enables_only };
    fake_panic_armed = true;
    if (setjmp(fake_panic_jump) == 0) {
        attempt_step(&a);
        fake_panic_armed = false;
        return a;
    }
    fake_panic_armed = false;
    fail_msg("panicked: %s", fake_panic_message);
    return a;
}

static struct attempt attempt(const struct pci_device *dev) { return attempt_with(dev, false); }

/* A function made up here rather than found by the scan: its warnings are said at every lookup. */
static const struct pci_device function = { .bus = FAKE_PCI_BUS, .slot = FAKE_PCI_SLOT, .header_type = 0 };

static void put16(unsigned offset, uint16_t v)
{
    fake_pci_config[offset] = (uint8_t)v;
    fake_pci_config[offset + 1] = (uint8_t)(v >> 8);
}

static void put32(unsigned offset, uint32_t v)
{
    put16(offset, (uint16_t)v);
    put16(offset + 2, (uint16_t)(v >> 16));
}

static uint16_t get16(unsigned offset)
{
    return (uint16_t)(fake_pci_config[offset] | fake_pci_config[offset + 1] << 8);
}

static uint32_t get32(unsigned offset) { return get16(offset) | (uint32_t)get16(offset + 2) << 16; }

/* A present function with a capability list: a power management capability at 0x40 pointing to first. */
static void present_with_list(uint8_t first)
{
    fake_pci_reset();
    put16(PCI_VENDOR_ID, 0x1234);
    put16(PCI_DEVICE_ID, 0x5678);
    put16(PCI_STATUS, PCI_STATUS_CAP_LIST);
    fake_pci_config[PCI_CAP_POINTER] = 0x40;
    fake_pci_config[0x40] = CAP_ID_POWER_MANAGEMENT;
    fake_pci_config[0x41] = first;
    fake_log_reset();
}

static void capability(uint8_t at, uint8_t id, uint8_t next, uint16_t control)
{
    fake_pci_config[at] = id;
    fake_pci_config[at + 1] = next;
    if (at + 3 < 256)
        put16(at + 2u, control);
}

/* BAR0 a 64-bit memory BAR of FAKE_PCI_BAR_MEMORY_SIZE bytes over fake_pci_bar_memory. */
static void bar0_over_fake_memory(void)
{
    uint64_t base = (uintptr_t)fake_pci_bar_memory;
    put32(PCI_BAR0, (uint32_t)base | 0x4); /* type 2: 64-bit */
    put32(PCI_BAR0 + 4, (uint32_t)(base >> 32));
    fake_pci_bar_mask[0] = ~(uint32_t)(FAKE_PCI_BAR_MEMORY_SIZE - 1) & ~0xFu;
    fake_pci_bar_mask[1] = 0xFFFFFFFFu;
}

static void expect_log_has(const char *words)
{
    if (!strstr(fake_log_text, words))
        fail_msg("the log \"%s\" does not say \"%s\"", fake_log_text, words);
}

/* The four MSI variants and how many bytes each takes (Pending Bits follow Mask Bits), from the PCI spec. */
static const struct {
    uint16_t control;
    unsigned bytes;
} msi_variants[] = {
    { 0, 10 },
    { MSI_CONTROL_64BIT, 14 },
    { MSI_CONTROL_PER_VECTOR_MASK, 20 },
    { MSI_CONTROL_64BIT | MSI_CONTROL_PER_VECTOR_MASK, 24 },
};

/* The kind ("MSI" or "MSI-X") of capability at at was refused: not found (found_at 0), not enabled, the driver told
 * it has none, the boot log says why, and INTx is still on. */
static void assert_refused_at(unsigned at, const char *kind, unsigned found_at, bool enabled, const char *why)
{
    assert_int_equal(found_at, 0);
    assert_false(enabled);
    char text[96];
    snprintf(text, sizeof text, "no %s capability", kind);
    assert_non_null(strstr(why, text));
    snprintf(text, sizeof text, "pci 00:03.0: %s capability at 0x%02x refused: its registers run past", kind, at);
    expect_log_has(text);
    assert_false(get16(PCI_COMMAND) & PCI_COMMAND_INTX_DISABLE);
}

static void test_msi_near_the_end(void **state)
{
    (void)state;
    unsigned refused = 0;
    for (unsigned at = 0xF0; at <= 0xFC; at += 4) {
        for (size_t v = 0; v < sizeof msi_variants / sizeof msi_variants[0]; v++) {
            uint16_t control = msi_variants[v].control;
            present_with_list((uint8_t)at);
            capability((uint8_t)at, PCI_CAP_ID_MSI, 0, control);
            struct attempt a = attempt(&function);
            if (at + msi_variants[v].bytes <= 0x100) {
                assert_int_equal(a.msi_at, at);
                assert_true(a.msi_enabled);
                assert_int_equal(get32(at + 4), MESSAGE_ADDRESS);
                assert_true(get16(at + 2) & MSI_CONTROL_ENABLE);
                continue;
            }
            refused++;
            assert_refused_at(at, "MSI", a.msi_at, a.msi_enabled, a.msi_why);
            assert_int_equal(get16(at + 2), control); /* nothing of it was written */
        }
    }
    assert_int_equal(refused, 13); /* all but 32- and 64-bit without masking at 0xF0, and 32-bit at 0xF4 */
}

static void test_msix_near_the_end(void **state)
{
    (void)state;
    for (unsigned at = 0xF0; at <= 0xFC; at += 4) {
        present_with_list((uint8_t)at);
        capability((uint8_t)at, PCI_CAP_ID_MSIX, 0, 0); /* one entry; Table Offset/BIR 0: offset 0 of BAR0 */
        bar0_over_fake_memory();
        struct attempt a = attempt(&function);
        if (at + 12 <= 0x100) {
            assert_int_equal(a.msix_at, at);
            assert_true(a.msix_enabled);
            uint32_t entry_address, entry_data;
            memcpy(&entry_address, fake_pci_bar_memory + MSIX_ENTRY_ADDRESS_LOW, 4);
            memcpy(&entry_data, fake_pci_bar_memory + MSIX_ENTRY_DATA, 4);
            assert_int_equal(entry_address, MESSAGE_ADDRESS);
            assert_int_equal(entry_data, MESSAGE_DATA);
            assert_true(get16(at + 2) & MSIX_CONTROL_ENABLE);
            continue;
        }
        assert_refused_at(at, "MSI-X", a.msix_at, a.msix_enabled, a.msix_why);
        assert_false(get16(at + 2) & MSIX_CONTROL_ENABLE);
    }
}

/* A refused MSI capability is as good as none: the MSI-X one further down the list is the function's message. */
static void test_refused_msi_falls_back_to_msix(void **state)
{
    (void)state;
    present_with_list(0x80);
    capability(0x80, PCI_CAP_ID_MSIX, 0xFC, 0);
    capability(0xFC, PCI_CAP_ID_MSI, 0, MSI_CONTROL_64BIT);
    bar0_over_fake_memory();
    struct attempt a = attempt(&function);
    assert_int_equal(a.msi_at, 0);
    assert_false(a.msi_enabled);
    assert_int_equal(a.msix_at, 0x80);
    assert_true(a.msix_enabled);
}

/* Neither capability usable: both refused, the function keeps INTx (the command register's disable bit clear). */
static void test_both_refused_leave_intx(void **state)
{
    (void)state;
    present_with_list(0xF8);
    capability(0xF8, PCI_CAP_ID_MSIX, 0xFC, 0);
    capability(0xFC, PCI_CAP_ID_MSI, 0, 0);
    bar0_over_fake_memory();
    struct attempt a = attempt(&function);
    assert_false(a.msi_enabled);
    assert_false(a.msix_enabled);
    assert_false(get16(PCI_COMMAND) & PCI_COMMAND_INTX_DISABLE);
    expect_log_has("MSI capability at 0xfc refused");
    expect_log_has("MSI-X capability at 0xf8 refused");
}

/* A function the scan found says what is wrong with its capabilities once, however often it is looked at. */
static void test_refusal_said_once(void **state)
{
    (void)state;
    present_with_list(0xFC);
    capability(0xFC, PCI_CAP_ID_MSI, 0, 0);
    const struct pci_device *scanned = pci_device_at(0);
    assert_non_null(scanned);
    assert_int_equal(scanned->slot, FAKE_PCI_SLOT);
    fake_log_reset();
    for (int i = 0; i < 3; i++)
        assert_false(attempt(scanned).msi_enabled);
    assert_int_equal(fake_log_lines, 1);
    expect_log_has("pci 00:03.0: MSI capability at 0xfc refused: its registers run past the 256 bytes of "
                   "configuration space; the function goes on as if it had none");

    /* a list that loops is its own fault, also said once */
    capability(0x40, CAP_ID_POWER_MANAGEMENT, 0x40, 0);
    for (int i = 0; i < 3; i++)
        assert_int_equal(attempt(scanned).msix_at, 0);
    assert_int_equal(fake_log_lines, 2);
    expect_log_has("a capability list that loops: its capabilities are not used");
}

static void test_looping_and_low_lists_end(void **state)
{
    (void)state;
    present_with_list(0x50);
    capability(0x50, CAP_ID_POWER_MANAGEMENT, 0x40, 0); /* back to the first */
    struct attempt a = attempt(&function);
    assert_false(a.msi_enabled || a.msix_enabled);
    expect_log_has("loops");

    present_with_list(0x08); /* into the header, where the class code would be taken for a capability */
    fake_pci_config[0x08] = PCI_CAP_ID_MSIX;
    a = attempt(&function);
    assert_false(a.msi_enabled || a.msix_enabled);
    expect_log_has("outside 0x40..0xFC");

    present_with_list(0xFE); /* unaligned, with MSI-X registers from 0x100 on */
    fake_pci_config[0xFE] = PCI_CAP_ID_MSIX;
    a = attempt(&function);
    assert_false(a.msi_enabled || a.msix_enabled);
    expect_log_has("dword-aligned");
}

/* A device whose MSI control word says "32-bit, no masking" to the lookup and "64-bit, masking" after: its
 * registers would then end at 0x108. pci_msi_enable judges the word it reads itself. */
static unsigned control_reads;
static void control_changes_after_first_read(uint16_t offset)
{
    if (offset == 0xF2 && ++control_reads == 1)
        put16(0xF2, MSI_CONTROL_64BIT | MSI_CONTROL_PER_VECTOR_MASK);
}

static void test_control_changing_between_reads(void **state)
{
    (void)state;
    present_with_list(0xF0);
    capability(0xF0, PCI_CAP_ID_MSI, 0, 0);
    control_reads = 0;
    fake_pci_read_hook = control_changes_after_first_read;
    struct attempt a = attempt_with(&function, true);
    fake_pci_read_hook = NULL;
    assert_int_equal(control_reads, 2); /* the enable's lookup, then the enable */
    assert_false(a.msi_enabled);
    assert_non_null(strstr(a.msi_why, "changed"));
    assert_false(get16(PCI_COMMAND) & PCI_COMMAND_INTX_DISABLE);
}

UNIT_MAIN(NULL, NULL,
          test_msi_near_the_end, test_msix_near_the_end, test_refused_msi_falls_back_to_msix,
          test_both_refused_leave_intx, test_refusal_said_once, test_looping_and_low_lists_end,
          test_control_changing_between_reads)
