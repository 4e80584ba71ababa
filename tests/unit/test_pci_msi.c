/* tests/unit/test_pci_msi.c: arch/x86_64/pci_msi.c over fake configuration spaces -- the capability walk
 * finds what a well-formed list holds and stops, finding nothing, at a loop, a pointer below 0x40, an
 * unaligned pointer or a list longer than 256 bytes can hold; the MSI register layout of the 32- and 64-bit
 * variants, with and without per-vector masking, and whether a capability near the end of the space fits in it
 * (MSI and MSI-X at 0xF0..0xFC); where an MSI-X table lies and when it cannot be used; and the
 * x86 message for a vector and an APIC id. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <setjmp.h>
#include <cmocka.h>

#include "arch/x86_64/pci_msi.h"
#include "unit_main.h"

struct fake_config {
    uint8_t bytes[256];
    unsigned reads;
};

static uint8_t fake_read8(void *ctx, uint16_t offset)
{
    struct fake_config *c = ctx;
    c->reads++;
    assert_true(offset < 256);
    return c->bytes[offset];
}

/* A capability with this id at offset at, pointing to next. */
static void cap(struct fake_config *c, uint8_t at, uint8_t id, uint8_t next)
{
    c->bytes[at] = id;
    c->bytes[at + 1] = next;
}

static void test_normal_list(void **state)
{
    (void)state;
    struct fake_config c = { 0 };
    c.bytes[PCI_CAP_POINTER] = 0x40;
    cap(&c, 0x40, 0x01, 0x70); /* power management */
    cap(&c, 0x70, PCI_CAP_ID_MSI, 0x90);
    cap(&c, 0x90, 0x11, 0xA0); /* MSI-X */
    cap(&c, 0xA0, 0x10, 0x00); /* PCI Express, last */
    const char *why = "unset";
    assert_int_equal(pci_cap_find(fake_read8, &c, PCI_CAP_ID_MSI, &why), 0x70);
    assert_null(why);
    assert_int_equal(pci_cap_find(fake_read8, &c, 0x10, &why), 0xA0);
    assert_null(why);
    assert_int_equal(pci_cap_find(fake_read8, &c, 0x09, &why), 0); /* absent: the list ends cleanly */
    assert_null(why);
}

/* pci_cap_find must find no MSI capability in c and say why, in words containing why_has (unless NULL). */
static void expect_no_msi(struct fake_config *c, const char *why_has)
{
    const char *why = NULL;
    assert_int_equal(pci_cap_find(fake_read8, c, PCI_CAP_ID_MSI, &why), 0);
    assert_non_null(why);
    if (why_has != NULL && strstr(why, why_has) == NULL)
        fail_msg("the reason \"%s\" does not say \"%s\"", why, why_has);
}

static void test_empty_list(void **state)
{
    (void)state;
    struct fake_config c = { 0 };
    const char *why = "unset";
    assert_int_equal(pci_cap_find(fake_read8, &c, PCI_CAP_ID_MSI, &why), 0);
    assert_null(why);
}

static void test_loop_stops(void **state)
{
    (void)state;
    struct fake_config c = { 0 };
    c.bytes[PCI_CAP_POINTER] = 0x40;
    cap(&c, 0x40, 0x01, 0x50);
    cap(&c, 0x50, 0x01, 0x40); /* back to the first */
    expect_no_msi(&c, "loops");
    assert_true(c.reads < 16); /* stopped at the second visit, not at the entry limit */

    /* a capability pointing at itself */
    memset(&c, 0, sizeof c);
    c.bytes[PCI_CAP_POINTER] = 0xFC;
    cap(&c, 0xFC, 0x01, 0xFC);
    expect_no_msi(&c, "loops");
}

static void test_pointer_below_0x40_stops(void **state)
{
    (void)state;
    struct fake_config c = { 0 };
    c.bytes[PCI_CAP_POINTER] = 0x40;
    cap(&c, 0x40, 0x01, 0x10); /* into the header */
    c.bytes[0x10] = PCI_CAP_ID_MSI; /* what the header holds there must not be taken for a capability */
    expect_no_msi(&c, "0x40..0xFC");

    memset(&c, 0, sizeof c);
    c.bytes[PCI_CAP_POINTER] = 0x3C; /* the first pointer itself */
    c.bytes[0x3C] = PCI_CAP_ID_MSI;
    expect_no_msi(&c, NULL);
}

static void test_unaligned_pointer_stops(void **state)
{
    (void)state;
    struct fake_config c = { 0 };
    c.bytes[PCI_CAP_POINTER] = 0x40;
    cap(&c, 0x40, 0x01, 0x62);
    c.bytes[0x62] = PCI_CAP_ID_MSI;
    expect_no_msi(&c, "dword-aligned");
}

static void test_more_than_48_entries_stops(void **state)
{
    (void)state;
    /* A list that never loops back on itself cannot be longer than 48 entries (0x40..0xFC); to exceed it
     * without a loop the reader must answer differently on a second read, as a device may. */
    struct fake_config c = { 0 };
    c.bytes[PCI_CAP_POINTER] = 0x40;
    for (unsigned at = 0x40; at < 0xFC; at += 4)
        cap(&c, (uint8_t)at, 0x01, (uint8_t)(at + 4));
    cap(&c, 0xFC, 0x01, 0x00);
    const char *why = "unset";
    /* 48 entries exactly, none of them MSI: the walk goes to the end and says nothing is wrong */
    assert_int_equal(pci_cap_find(fake_read8, &c, PCI_CAP_ID_MSI, &why), 0);
    assert_null(why);
    /* the last one is MSI: found, at the 48th entry */
    cap(&c, 0xFC, PCI_CAP_ID_MSI, 0x00);
    assert_int_equal(pci_cap_find(fake_read8, &c, PCI_CAP_ID_MSI, &why), 0xFC);
    assert_null(why);
}

/* A device whose list runs on: every read of a next pointer gives a fresh dword, as if the space were larger
 * than it is (the seen-set cannot catch it: the fake forgets it pointed there before). */
struct endless {
    unsigned next_reads;
};
static uint8_t endless_read8(void *ctx, uint16_t offset)
{
    struct endless *e = ctx;
    if (offset == PCI_CAP_POINTER)
        return 0x40;
    if (offset & 1) { /* a next pointer: 0x44, 0x48, ... wrapping within 0x40..0xFC, all different for 48 reads */
        e->next_reads++;
        return (uint8_t)(0x40 + (e->next_reads % 48) * 4);
    }
    return 0x01;
}

static void test_endless_list_stops_at_48(void **state)
{
    (void)state;
    struct endless e = { 0 };
    const char *why = NULL;
    assert_int_equal(pci_cap_find(endless_read8, &e, PCI_CAP_ID_MSI, &why), 0);
    assert_non_null(why);
    assert_true(e.next_reads <= PCI_CAP_MAX_WALK);
}

static void test_layout_32_and_64_bit(void **state)
{
    (void)state;
    struct msi_layout l = msi_layout(0x50, 0x0000); /* 32-bit, no masking */
    assert_int_equal(l.control, 0x52);
    assert_int_equal(l.address_low, 0x54);
    assert_int_equal(l.address_high, 0);
    assert_int_equal(l.data, 0x58);
    assert_int_equal(l.mask, 0);

    l = msi_layout(0x70, MSI_CONTROL_64BIT | (4u << 1)); /* 64-bit, 16 messages capable */
    assert_int_equal(l.control, 0x72);
    assert_int_equal(l.address_low, 0x74);
    assert_int_equal(l.address_high, 0x78);
    assert_int_equal(l.data, 0x7C);
    assert_int_equal(l.mask, 0);

    l = msi_layout(0x50, MSI_CONTROL_PER_VECTOR_MASK);
    assert_int_equal(l.data, 0x58);
    assert_int_equal(l.mask, 0x5C);
    l = msi_layout(0xD0, MSI_CONTROL_64BIT | MSI_CONTROL_PER_VECTOR_MASK);
    assert_int_equal(l.data, 0xDC);
    assert_int_equal(l.mask, 0xE0);
}

/* Where an MSI capability ends: Message Data's end, or Pending Bits' when it masks. */
static void test_layout_end(void **state)
{
    (void)state;
    assert_int_equal(msi_layout(0x50, 0).end, 0x5A);
    assert_int_equal(msi_layout(0x50, MSI_CONTROL_64BIT).end, 0x5E);
    assert_int_equal(msi_layout(0x50, MSI_CONTROL_PER_VECTOR_MASK).end, 0x64);
    assert_int_equal(msi_layout(0x50, MSI_CONTROL_64BIT | MSI_CONTROL_PER_VECTOR_MASK).end, 0x68);
}

/* At 0xF0..0xFC a capability fits only if its last register ends by 0x100; each variant's last offset that fits,
 * and the next one, refused with a reason. */
static void test_fits_at_the_end(void **state)
{
    (void)state;
    static const struct {
        uint16_t control;
        uint8_t last_fitting;
    } variants[] = {
        { 0, 0xF4 },                                                   /* 10 bytes */
        { MSI_CONTROL_64BIT, 0xF0 },                                   /* 14 */
        { MSI_CONTROL_PER_VECTOR_MASK, 0xEC },                         /* 20 */
        { MSI_CONTROL_64BIT | MSI_CONTROL_PER_VECTOR_MASK, 0xE8 },     /* 24 */
    };
    for (size_t v = 0; v < sizeof variants / sizeof variants[0]; v++) {
        for (unsigned at = 0x40; at <= 0xFC; at += 4) {
            const char *why = NULL;
            bool fits = msi_fits((uint8_t)at, variants[v].control, &why);
            if (at <= variants[v].last_fitting) {
                assert_true(fits);
                continue;
            }
            if (fits)
                fail_msg("MSI with control 0x%x at 0x%x taken, though it runs past 0x100", variants[v].control, at);
            assert_non_null(strstr(why, "past the 256 bytes"));
        }
    }
    const char *why = NULL;
    assert_true(msix_fits(0xF0, &why));
    assert_true(msix_fits(0xF4, &why)); /* 12 bytes: exactly to 0x100 */
    assert_null(why);
    assert_false(msix_fits(0xF8, &why));
    assert_non_null(strstr(why, "past the 256 bytes"));
    why = NULL;
    assert_false(msix_fits(0xFC, &why));
    assert_non_null(why);
}

static void test_msix_table_place(void **state)
{
    (void)state;
    struct msix_place p;
    const char *why = NULL;
    /* qemu-xhci: 16 entries (size field 15), the table at 0x3000 in BAR0 of 16 KiB */
    assert_true(msix_place(15, 0x3000, 0x4000, &p, &why));
    assert_int_equal(p.bar, 0);
    assert_int_equal(p.offset, 0x3000);
    assert_int_equal(p.entries, 16);
    /* BIR 3, offset 0x800 */
    assert_true(msix_place(0, 0x803, 0x1000, &p, &why));
    assert_int_equal(p.bar, 3);
    assert_int_equal(p.offset, 0x800);
    assert_int_equal(p.entries, 1);
    /* the control word's enable and mask bits are not part of the size */
    assert_true(msix_place(MSIX_CONTROL_ENABLE | MSIX_CONTROL_FUNCTION_MASK | 1, 0, 0x20, &p, &why));
    assert_int_equal(p.entries, 2);
    /* a table that ends exactly at the BAR's end fits; one byte further does not */
    assert_true(msix_place(15, 0x3F00, 0x4000, &p, &why));
    why = NULL;
    assert_false(msix_place(15, 0x3F08, 0x4000, &p, &why));
    assert_non_null(strstr(why, "past the end"));
    /* an offset near 4 GiB must not wrap */
    why = NULL;
    assert_false(msix_place(0, 0xFFFFFFF8u, 0x4000, &p, &why)); /* 32-bit sum: 0x8, "fits" */
    assert_non_null(why);
    /* BIR 6 and 7 are reserved */
    why = NULL;
    assert_false(msix_place(0, 0x006, 0x4000, &p, &why));
    assert_non_null(strstr(why, "does not exist"));
    /* the BAR it names is absent or not memory */
    why = NULL;
    assert_false(msix_place(0, 0x000, 0, &p, &why));
    assert_non_null(strstr(why, "not an implemented memory BAR"));
}

static void test_message(void **state)
{
    (void)state;
    struct msi_message m;
    assert_true(msi_compose(0x41, 0, &m));
    assert_int_equal(m.address, 0xFEE00000u);
    assert_int_equal(m.data, 0x41); /* fixed delivery, edge: only the vector */
    assert_true(msi_compose(0x7F, 3, &m));
    assert_int_equal(m.address, 0xFEE03000u);
    assert_int_equal(m.data, 0x7F);
    assert_true(msi_compose(0x40, 0xFE, &m));
    assert_int_equal(m.address, 0xFEEFE000u);
    /* 0xFF is the broadcast, and above is past the 8 bits a message names without interrupt remapping */
    assert_false(msi_compose(0x40, 0xFF, &m));
    assert_false(msi_compose(0x40, 0x100, &m));
    /* an exception's vector is no device's */
    assert_false(msi_compose(0x0E, 0, &m));
}

UNIT_MAIN(NULL, NULL,
          test_normal_list, test_empty_list, test_loop_stops, test_pointer_below_0x40_stops,
          test_unaligned_pointer_stops, test_more_than_48_entries_stops, test_endless_list_stops_at_48,
          test_layout_32_and_64_bit, test_layout_end, test_fits_at_the_end, test_msix_table_place, test_message)
