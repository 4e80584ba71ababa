/* arch/x86_64/acpi.c: the ACPI tables kprof needs, found from the RSDP GRUB handed over: the MADT (which
 * CPUs exist, where the local APIC and the I/O APICs are, how ISA IRQs map to global interrupts) and the
 * FADT with the DSDT's \_S5 object, which together say how to power off. Tables are checksummed; a bad one
 * is ignored with a message rather than trusted. */
#include "arch/x86_64/arch.h"
#include "arch/x86_64/x86.h"
#include "kernel/log.h"
#include "kernel/lib/string.h"

struct acpi_info acpi;

struct sdt_header {
    char signature[4];
    uint32_t length;
    uint8_t revision;
    uint8_t checksum;
    char oem_id[6];
    char oem_table_id[8];
    uint32_t oem_revision;
    uint32_t creator_id;
    uint32_t creator_revision;
} __attribute__((packed));

static bool checksum_ok(const void *p, uint32_t len)
{
    uint8_t sum = 0;
    for (uint32_t i = 0; i < len; i++)
        sum += ((const uint8_t *)p)[i];
    return sum == 0;
}

static const struct sdt_header *table_at(uint64_t phys)
{
    /* Only the identity-mapped first 4 GiB are reachable. */
    if (phys == 0 || phys >= 0x100000000ull)
        return 0;
    const struct sdt_header *h = (const struct sdt_header *)(uintptr_t)phys;
    if (h->length < sizeof *h || h->length > 0x100000 || !checksum_ok(h, h->length))
        return 0;
    return h;
}

static const struct sdt_header *find_table(const char sig[4])
{
    const uint8_t *rsdp = boot_info.rsdp;
    uint8_t revision = rsdp[15];
    uint32_t rsdt = *(const uint32_t *)(rsdp + 16);
    uint64_t xsdt = revision >= 2 && boot_info.rsdp_len >= 32 ? *(const uint64_t *)(rsdp + 24) : 0;

    const struct sdt_header *root = xsdt ? table_at(xsdt) : table_at(rsdt);
    if (!root)
        return 0;
    unsigned entry_size = xsdt ? 8 : 4;
    unsigned entries = (root->length - sizeof *root) / entry_size;
    const uint8_t *p = (const uint8_t *)(root + 1);
    for (unsigned i = 0; i < entries; i++) {
        uint64_t phys = entry_size == 8 ? *(const uint64_t *)(p + 8 * i) : *(const uint32_t *)(p + 4 * i);
        const struct sdt_header *t = table_at(phys);
        if (t && memcmp(t->signature, sig, 4) == 0)
            return t;
    }
    return 0;
}

static void parse_madt(const struct sdt_header *madt)
{
    const uint8_t *p = (const uint8_t *)madt;
    acpi.lapic_phys = *(const uint32_t *)(p + 36);
    const uint8_t *at = p + 44, *end = p + madt->length;
    while (at + 2 <= end && at[1] >= 2 && at + at[1] <= end) {
        switch (at[0]) {
        case 0: { /* processor local APIC: enabled (bit 0) or online capable (bit 1) */
            uint32_t flags = *(const uint32_t *)(at + 4);
            if (flags & 3) {
                if (acpi.cpu_count < ACPI_MAX_CPUS)
                    acpi.cpu_apic_ids[acpi.cpu_count] = at[3];
                acpi.cpu_count++;
            }
            break;
        }
        case 9: { /* processor local x2APIC (APIC ids above 254): the same flags, a 32-bit id */
            if (at[1] < 16)
                break;
            uint32_t id = *(const uint32_t *)(at + 4), flags = *(const uint32_t *)(at + 8);
            if (flags & 3) {
                if (acpi.cpu_count < ACPI_MAX_CPUS)
                    acpi.cpu_apic_ids[acpi.cpu_count] = id;
                acpi.cpu_count++;
            }
            break;
        }
        case 1: /* I/O APIC */
            if (acpi.ioapic_count < ACPI_MAX_IOAPICS) {
                acpi.ioapics[acpi.ioapic_count].id = at[2];
                acpi.ioapics[acpi.ioapic_count].phys = *(const uint32_t *)(at + 4);
                acpi.ioapics[acpi.ioapic_count].gsi_base = *(const uint32_t *)(at + 8);
                acpi.ioapic_count++;
            }
            break;
        case 2: { /* interrupt source override */
            uint8_t irq = at[3];
            if (irq < 16) {
                acpi.isa_override[irq].gsi = *(const uint32_t *)(at + 4);
                acpi.isa_override[irq].flags = *(const uint16_t *)(at + 8);
                acpi.isa_override[irq].present = true;
            }
            break;
        }
        case 5: /* 64-bit local APIC address override */
            acpi.lapic_phys = (uint32_t) * (const uint64_t *)(at + 4);
            break;
        default:
            break;
        }
        at += at[1];
    }
}

/* \_S5 in the DSDT's AML: NameOp "_S5_" PackageOp PkgLength NumElements, then SLP_TYPa and SLP_TYPb as
 * BytePrefix+byte or the ZeroOp/OneOp constants. Enough of AML for this one object, as every small kernel does. */
static int aml_small_int(const uint8_t **p, const uint8_t *end)
{
    if (*p >= end)
        return -1;
    uint8_t op = **p;
    if (op == 0x0A && *p + 1 < end) { *p += 2; return (*p)[-1]; }
    if (op == 0x00 || op == 0x01) { *p += 1; return op; }
    return -1;
}

static void parse_s5(const struct sdt_header *dsdt)
{
    const uint8_t *p = (const uint8_t *)(dsdt + 1), *end = (const uint8_t *)dsdt + dsdt->length;
    for (; p + 8 < end; p++) {
        if (memcmp(p, "_S5_", 4) != 0 || p[4] != 0x12)
            continue;
        const uint8_t *q = p + 5;
        q += ((*q >> 6) & 3) + 1; /* PkgLength: lead byte plus 0..3 more */
        q += 1;                   /* NumElements */
        int a = aml_small_int(&q, end), b = aml_small_int(&q, end);
        if (a < 0)
            return;
        acpi.slp_typ_s5_a = (uint16_t)a;
        acpi.slp_typ_s5_b = (uint16_t)(b < 0 ? 0 : b);
        acpi.s5_known = true;
        return;
    }
}

/* The PM timer: X_PM_TMR_BLK (a generic address at 208) when it is in I/O space, else PM_TMR_BLK (76); the width
 * from the flags' TMR_VAL_EXT (bit 8 at 112). A hardware-reduced FADT names none (both zero). */
static void parse_pm_timer(const uint8_t *f, uint32_t length)
{
    uint64_t port = length >= 80 ? *(const uint32_t *)(f + 76) : 0;
    if (length >= 220 && f[208] == 1 /* system I/O space */ && *(const uint64_t *)(f + 212) != 0)
        port = *(const uint64_t *)(f + 212);
    acpi.pm_timer_port = port <= 0xFFFC ? (uint16_t)port : 0;
    acpi.pm_timer_32bit = length >= 116 && (*(const uint32_t *)(f + 112) & (1u << 8));
}

void acpi_init(void)
{
    acpi.lapic_phys = 0xFEE00000u;
    if (boot_info.rsdp_len < 20 || memcmp(boot_info.rsdp, "RSD PTR ", 8) != 0) {
        log_warn("acpi: no RSDP from the boot loader: assuming one CPU and the standard APIC addresses");
    } else {
        const struct sdt_header *madt = find_table("APIC");
        if (madt)
            parse_madt(madt);
        else
            log_warn("acpi: no MADT: assuming one CPU");
        const struct sdt_header *fadt = find_table("FACP");
        if (fadt && fadt->length >= 72) {
            const uint8_t *f = (const uint8_t *)fadt;
            acpi.pm1a_cnt = (uint16_t) * (const uint32_t *)(f + 64);
            acpi.pm1b_cnt = (uint16_t) * (const uint32_t *)(f + 68);
            parse_pm_timer(f, fadt->length);
            const struct sdt_header *dsdt = table_at(*(const uint32_t *)(f + 40));
            if (dsdt)
                parse_s5(dsdt);
        }
    }
    if (acpi.cpu_count == 0) {
        acpi.cpu_count = 1;
        acpi.cpu_apic_ids[0] = 0;
    }
    if (acpi.ioapic_count == 0) {
        acpi.ioapic_count = 1;
        acpi.ioapics[0].phys = 0xFEC00000u;
    }
    log_info("acpi: %u cpus, %u ioapics, lapic at 0x%x, poweroff %s", acpi.cpu_count, acpi.ioapic_count,
             acpi.lapic_phys, acpi.s5_known ? "via \\_S5" : "unknown");
}

const char *acpi_poweroff(void)
{
    if (!acpi.s5_known || !acpi.pm1a_cnt)
        return "no ACPI \\_S5 object or PM1a control block";
    outw(acpi.pm1a_cnt, (uint16_t)((acpi.slp_typ_s5_a << 10) | (1u << 13)));
    if (acpi.pm1b_cnt)
        outw(acpi.pm1b_cnt, (uint16_t)((acpi.slp_typ_s5_b << 10) | (1u << 13)));
    delay_us(100000);
    return "the machine did not power off after SLP_EN";
}
