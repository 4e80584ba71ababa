/* tests/unit/test_gdb_x86_regs.c: the x86-64 register table (arch/x86_64/gdb_regs.c) under the whole stub --
 * for every register gdb knows, a distinct value written through P (and through G) must land in the field
 * of struct context or struct gdb_x86_cpu_state this file says, by name, that it lives in, touching no
 * other field, and read back through p and g. The expected homes are written out here independently of
 * the table, so a row that points at the wrong field (a kgdb once mapped si to dx) fails by name. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "arch/x86_64/gdb_regs.h"
#include "fake_target.h"
#include "gdbstub/packet.h"
#include "gdbstub/regs.h"
#include "gdbstub/stub.h"
#include "unit_main.h"

enum home { NONE, CTX, CPU };
enum rule { FREE, ADDR, FLAGS, FIXED };

struct expect {
    const char *name;
    unsigned size;  /* bytes in g/p */
    enum home home;
    size_t offset;
    enum rule rule;
    unsigned bits;  /* significant bits gdb sees */
};

#define C(n) { #n, 8, CTX, offsetof(struct context, n), FREE, 64 }
#define C_ADDR(n) { #n, 8, CTX, offsetof(struct context, n), ADDR, 64 }
#define SEG_C(n) { #n, 4, CTX, offsetof(struct context, n), FIXED, 16 }
#define SEG_S(n) { #n, 4, CPU, offsetof(struct gdb_x86_cpu_state, n), FIXED, 16 }
#define X87(n, s) { n, s, NONE, 0, FIXED, 0 }

/* gdb's amd64 registers in its order, and where each must live. */
static const struct expect expect[GDB_DESC_REGS] = {
    C(rax), C(rbx), C(rcx), C(rdx), C(rsi), C(rdi), C(rbp), C_ADDR(rsp),
    C(r8), C(r9), C(r10), C(r11), C(r12), C(r13), C(r14), C(r15),
    C_ADDR(rip),
    { "eflags", 4, CTX, offsetof(struct context, rflags), FLAGS, 32 },
    SEG_C(cs), SEG_C(ss), SEG_S(ds), SEG_S(es), SEG_S(fs), SEG_S(gs),
    X87("st0", 10), X87("st1", 10), X87("st2", 10), X87("st3", 10),
    X87("st4", 10), X87("st5", 10), X87("st6", 10), X87("st7", 10),
    X87("fctrl", 4), X87("fstat", 4), X87("ftag", 4), X87("fiseg", 4),
    X87("fioff", 4), X87("foseg", 4), X87("fooff", 4), X87("fop", 4),
    { "fs_base", 8, CPU, offsetof(struct gdb_x86_cpu_state, fs_base), FIXED, 64 },
    { "gs_base", 8, CPU, offsetof(struct gdb_x86_cpu_state, gs_base), FIXED, 64 },
};

/* The stopped CPUs: their contexts and saved state, behind a target that reads them through the table. */
static struct context ctxs[FAKE_CPUS];
static struct gdb_x86_cpu_state states[FAKE_CPUS];
static struct gdb_target x86_target;

static bool x86_reg_read(unsigned cpu, enum gdb_reg reg, uint64_t *value)
{
    return cpu < FAKE_CPUS && gdb_x86_reg_read(&ctxs[cpu], &states[cpu], reg, value);
}

static bool x86_reg_write(unsigned cpu, enum gdb_reg reg, uint64_t value)
{
    return cpu < FAKE_CPUS && gdb_x86_reg_write(&ctxs[cpu], &states[cpu], reg, value);
}

static int setup(void **state)
{
    (void)state;
    fake_target_reset();
    fake_link_reset();
    gdb_stub_reset();
    x86_target = fake_target;
    x86_target.reg_read = x86_reg_read;
    x86_target.reg_write = x86_reg_write;
    memset(ctxs, 0, sizeof ctxs);
    memset(states, 0, sizeof states);
    return 0;
}

static void run_to_link_loss(void)
{
    assert_int_equal(gdb_stub_session(&x86_target, &fake_transport, GDB_STOP_ATTACH, 0), GDB_END_LINK_LOST);
    SCRIPT_PLAYED();
    fake_link_reset();
}

static uint64_t *field(unsigned cpu, const struct expect *e)
{
    char *base = e->home == CTX ? (char *)&ctxs[cpu] : (char *)&states[cpu];
    return (uint64_t *)(void *)(base + e->offset);
}

static uint64_t visible(const struct expect *e, uint64_t value)
{
    return e->bits == 64 ? value : value & ((1ull << e->bits) - 1);
}

/* A value no other register, byte or CPU has, in the bits gdb sees. */
static uint64_t distinct(unsigned cpu, unsigned regnum, unsigned generation)
{
    uint64_t v = 0;
    for (unsigned b = 0; b < 8; b++)
        v |= (uint64_t)((regnum * 8 + b + 1 + 64 * cpu + 17 * generation) & 0xff) << (8 * b);
    return v ^ ((uint64_t)regnum << 8);
}

/* A distinct value made one the register takes: canonical for rip and rsp (sign-extended from bit 47), for
 * eflags only the bits gdb may set (the arithmetic flags, TF, IF, DF, OF, RF, AC, VIF, VIP, ID) and bit 1. */
static uint64_t writable(const struct expect *e, uint64_t value)
{
    if (e->rule == ADDR)
        return (uint64_t)((int64_t)(value << 16) >> 16);
    if (e->rule == FLAGS)
        return (value & 0x3D0FD5ull) | 2;
    return value;
}

/* Every field of every CPU with its distinct value of this generation. */
static void fill(unsigned generation)
{
    for (unsigned cpu = 0; cpu < FAKE_CPUS; cpu++)
        for (unsigned r = 0; r < GDB_DESC_REGS; r++)
            if (expect[r].home != NONE)
                *field(cpu, &expect[r]) = distinct(cpu, r, generation);
}

static void le_hex(char *out, uint64_t value, unsigned size)
{
    for (unsigned i = 0; i < size; i++)
        snprintf(out + 2 * i, 3, "%02x", i < 8 ? (unsigned)((value >> (8 * i)) & 0xff) : 0u);
}

/* What p answers for register r of cpu: the field's visible bits, or x's for the x87 registers. */
static void expected_p(char *out, unsigned cpu, unsigned r)
{
    const struct expect *e = &expect[r];
    if (e->home == NONE) {
        memset(out, 'x', 2 * e->size);
        out[2 * e->size] = '\0';
    } else {
        le_hex(out, visible(e, *field(cpu, e)), e->size);
    }
}

static const char *expected_g(unsigned cpu)
{
    static char g[2 * GDB_G_BYTES + 1];
    size_t at = 0;
    for (unsigned r = 0; r < GDB_DESC_REGS; r++) {
        expected_p(g + at, cpu, r);
        at += 2 * expect[r].size;
    }
    assert_int_equal(at, 2 * GDB_G_BYTES);
    return g;
}

static void select_cpu(unsigned cpu)
{
    char packet[16];
    snprintf(packet, sizeof packet, "Hg%x", cpu + 1);
    fake_exchange(packet, "OK");
}

static void test_rows_agree_with_the_description_and_each_other(void **state)
{
    (void)state;
    for (int t = 0; t < GDB_REG_COUNT; t++) {
        const struct gdb_reg_desc *d = gdb_reg_for_target((enum gdb_reg)t);
        assert_non_null(d);
        assert_string_equal(gdb_x86_regs[t].name, d->name);
        assert_int_equal(gdb_x86_regs[t].size, d->size);
        assert_string_equal(expect[d->regnum].name, d->name);
        /* Rows never share a field. */
        for (int u = 0; u < t; u++)
            assert_false(gdb_x86_regs[u].home == gdb_x86_regs[t].home &&
                         gdb_x86_regs[u].offset == gdb_x86_regs[t].offset);
    }
    assert_false(gdb_x86_reg_write(&ctxs[0], &states[0], GDB_REG_COUNT, 0));
    uint64_t v;
    assert_false(gdb_x86_reg_read(&ctxs[0], &states[0], GDB_REG_COUNT, &v));
}

/* Every field except the one register r of cpu holds its generation-0 value. */
static void others_untouched(unsigned cpu, unsigned r)
{
    for (unsigned c = 0; c < FAKE_CPUS; c++)
        for (unsigned o = 0; o < GDB_DESC_REGS; o++)
            if (expect[o].home != NONE && !(c == cpu && o == r) && *field(c, &expect[o]) != distinct(c, o, 0))
                fail_msg("writing %s of cpu %u changed %s of cpu %u", expect[r].name, cpu, expect[o].name, c);
}

static void test_every_register_through_P_p_and_the_context(void **state)
{
    (void)state;
    char packet[64], reply[32];
    for (unsigned cpu = 0; cpu < FAKE_CPUS; cpu++) {
        for (unsigned r = 0; r < GDB_DESC_REGS; r++) {
            const struct expect *e = &expect[r];
            fill(0);
            select_cpu(cpu);
            snprintf(packet, sizeof packet, "p%x", r);
            expected_p(reply, cpu, r);
            fake_exchange(packet, reply);

            int n = snprintf(packet, sizeof packet, "P%x=", r);
            uint64_t value = visible(e, writable(e, distinct(cpu, r, 1)));
            if (e->home == NONE) {
                memset(packet + n, '0', 2 * e->size);
                packet[n + 2 * e->size] = '\0';
                fake_exchange(packet, "E05");
                run_to_link_loss();
                others_untouched(cpu, r);
                continue;
            }
            uint64_t before = *field(cpu, e);
            le_hex(packet + n, value, e->size);
            if (e->rule == FIXED) {
                /* The kernel's own: another value is refused, the same one accepted. */
                fake_exchange(packet, "E05");
                le_hex(packet + n, visible(e, before), e->size);
                fake_exchange(packet, "OK");
                snprintf(packet, sizeof packet, "p%x", r);
                expected_p(reply, cpu, r);
                fake_exchange(packet, reply);
                run_to_link_loss();
                assert_int_equal(*field(cpu, e), before);
            } else {
                fake_exchange(packet, "OK");
                uint64_t stored = value;
                snprintf(packet, sizeof packet, "p%x", r);
                le_hex(reply, stored, e->size);
                fake_exchange(packet, reply);
                run_to_link_loss();
                if (*field(cpu, e) != stored)
                    fail_msg("P %s of cpu %u: its field holds 0x%llx, not 0x%llx", e->name, cpu,
                             (unsigned long long)*field(cpu, e), (unsigned long long)stored);
            }
            others_untouched(cpu, r);
        }
    }
}

/* What the CPU could not resume with is refused, the register unchanged: eflags with IOPL, NT (IRET in 64-bit
 * mode raises #GP), VM or a reserved bit; a non-canonical rip or rsp, by P and by G. */

/* A G packet of cpu 0's registers as freshly filled (gdb's unknown 'x' digits as 0) but for rax, which it sets
 * to 1: the base of the tests of a G that is partly refused. In a static buffer the caller may change. */
static char *g_packet_setting_rax_to_1(void)
{
    fill(0);
    static char packet[2 * GDB_G_BYTES + 2];
    snprintf(packet, sizeof packet, "G%s", expected_g(0));
    for (char *p = packet; *p; p++)
        if (*p == 'x')
            *p = '0';
    memcpy(packet + 1, "0100000000000000", 16);
    return packet;
}
static void test_values_the_cpu_cannot_resume_with_are_refused(void **state)
{
    (void)state;
    ctxs[0].rflags = 0x246;
    fake_exchange("P11=ffffffff", "E05");
    fake_exchange("P11=46420000", "E05"); /* NT */
    fake_exchange("P11=46020200", "E05"); /* VM */
    fake_exchange("P11=46320000", "E05"); /* IOPL 3 */
    fake_exchange("P11=4e020000", "E05"); /* bit 3, reserved */
    fake_exchange("P11=46024000", "E05"); /* bit 22, reserved */
    fake_exchange("p11", "46020000");
    fake_exchange("P11=00000000", "OK");
    fake_exchange("p11", "02000000"); /* bit 1 is always one */
    fake_exchange("P11=d50f3d00", "OK"); /* every bit gdb may set */
    fake_exchange("p11", "d70f3d00");
    run_to_link_loss();
    assert_int_equal(ctxs[0].rflags, 0x3D0FD7);

    ctxs[0].rip = 0xffffffff80001000ull;
    ctxs[0].rsp = 0x200000ull;
    fake_exchange("P10=0000000000800000", "E05"); /* 0x0000800000000000 */
    fake_exchange("P10=ffffffffff7fffff", "E05"); /* 0xffff7fffffffffff */
    fake_exchange("P7=0000000000800000", "E05");
    fake_exchange("P7=0000000000000080", "E05"); /* 0x8000000000000000 */
    fake_exchange("p10", "00100080ffffffff");
    fake_exchange("p7", "0000200000000000");
    fake_exchange("P10=000000000080ffff", "OK"); /* 0xffff800000000000: canonical */
    fake_exchange("P7=ffffffffff7f0000", "OK");  /* 0x00007fffffffffff */
    run_to_link_loss();
    assert_int_equal(ctxs[0].rip, 0xffff800000000000ull);
    assert_int_equal(ctxs[0].rsp, 0x00007fffffffffffull);

    /* G with a non-canonical rip: refused, rip kept, the rest written (as for a fixed register). */
    char *packet = g_packet_setting_rax_to_1();
    /* rsp and eflags as they are made writable; rip (register 16, at byte 16 * 8) non-canonical. */
    char hex[17];
    le_hex(hex, writable(&expect[7], ctxs[0].rsp), 8);
    memcpy(packet + 1 + 2 * 7 * 8, hex, 16);
    le_hex(hex, writable(&expect[17], ctxs[0].rflags), 4);
    memcpy(packet + 1 + 2 * 17 * 8, hex, 8);
    memcpy(packet + 1 + 2 * 16 * 8, "0000000000800000", 16);
    uint64_t rip_before = ctxs[0].rip;
    fake_exchange(packet, "E05");
    run_to_link_loss();
    assert_int_equal(ctxs[0].rax, 1);
    assert_int_equal(ctxs[0].rip, rip_before);
}

static void test_G_and_g_round_trip_every_register(void **state)
{
    (void)state;
    for (unsigned cpu = 0; cpu < FAKE_CPUS; cpu++) {
        fill(0);
        select_cpu(cpu);
        fake_exchange("g", expected_g(cpu));
        /* G with new values for what gdb may change, the current ones for the kernel's own. */
        static char packet[2 * GDB_G_BYTES + 2];
        uint64_t want[GDB_DESC_REGS];
        size_t at = 0;
        packet[at++] = 'G';
        for (unsigned r = 0; r < GDB_DESC_REGS; r++) {
            const struct expect *e = &expect[r];
            uint64_t value = 0;
            if (e->home != NONE) {
                value = e->rule == FIXED ? visible(e, *field(cpu, e)) : visible(e, writable(e, distinct(cpu, r, 2)));
                want[r] = e->rule == FIXED ? *field(cpu, e) : value;
            }
            le_hex(packet + at, value, e->size);
            at += 2 * e->size;
        }
        packet[at] = '\0';
        fake_exchange(packet, "OK");
        run_to_link_loss();
        for (unsigned r = 0; r < GDB_DESC_REGS; r++)
            if (expect[r].home != NONE && *field(cpu, &expect[r]) != want[r])
                fail_msg("G: %s of cpu %u holds 0x%llx, not 0x%llx", expect[r].name, cpu,
                         (unsigned long long)*field(cpu, &expect[r]), (unsigned long long)want[r]);
        for (unsigned c = 0; c < FAKE_CPUS; c++)
            for (unsigned r = 0; c != cpu && r < GDB_DESC_REGS; r++)
                if (expect[r].home != NONE)
                    assert_int_equal(*field(c, &expect[r]), distinct(c, r, 0));
        select_cpu(cpu);
        fake_exchange("g", expected_g(cpu));
        run_to_link_loss();
    }
}

static void test_G_changing_a_fixed_register_is_refused_but_writes_the_rest(void **state)
{
    (void)state;
    /* rax becomes 1; cs (gdb's register 18, at byte 8 * 17 + 4) a value it is not. */
    char *packet = g_packet_setting_rax_to_1();
    size_t cs_at = 1 + 2 * (17 * 8 + 4);
    memcpy(packet + cs_at, packet[cs_at] == 'f' ? "0e" : "ff", 2);
    uint64_t cs_before = ctxs[0].cs;
    fake_exchange(packet, "E05");
    run_to_link_loss();
    assert_int_equal(ctxs[0].rax, 1);
    assert_int_equal(ctxs[0].cs, cs_before);
}

UNIT_MAIN_EACH(setup, fake_link_fixture, NULL, NULL,
               test_rows_agree_with_the_description_and_each_other, test_every_register_through_P_p_and_the_context,
               test_values_the_cpu_cannot_resume_with_are_refused, test_G_and_g_round_trip_every_register,
               test_G_changing_a_fixed_register_is_refused_but_writes_the_rest)
