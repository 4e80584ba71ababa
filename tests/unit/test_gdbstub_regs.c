/* tests/unit/test_gdbstub_regs.c: registers through a gdb stub session (gdbstub/commands.c, regs.c) -- a round
 * trip of every register of every CPU through g/G and p/P with values that tell each register, each byte and
 * each CPU apart, and the refusals: unreadable registers, malformed or refused G packets.
 * Scripts of {packet gdb sends, reply expected} against the fake machine: gdbstub_fixture.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "kernel/lib/hex.h"
#include "fake_target.h"
#include "gdbstub/commands.h"
#include "gdbstub/monitor.h"
#include "gdbstub/packet.h"
#include "gdbstub/regs.h"
#include "gdbstub/stub.h"
#include "gdbstub_fixture.h"
#include "unit_main.h"

/* ---- registers ---- */

/* gdb's x86-64 register layout, written out here independently of gdbstub/regs.c. */
static const struct {
    const char *name;
    int target;
    unsigned size;
} layout[] = {
    { "rax", GDB_RAX, 8 },    { "rbx", GDB_RBX, 8 },     { "rcx", GDB_RCX, 8 },     { "rdx", GDB_RDX, 8 },
    { "rsi", GDB_RSI, 8 },    { "rdi", GDB_RDI, 8 },     { "rbp", GDB_RBP, 8 },     { "rsp", GDB_RSP, 8 },
    { "r8", GDB_R8, 8 },      { "r9", GDB_R9, 8 },       { "r10", GDB_R10, 8 },     { "r11", GDB_R11, 8 },
    { "r12", GDB_R12, 8 },    { "r13", GDB_R13, 8 },     { "r14", GDB_R14, 8 },     { "r15", GDB_R15, 8 },
    { "rip", GDB_RIP, 8 },    { "eflags", GDB_EFLAGS, 4 }, { "cs", GDB_CS, 4 },     { "ss", GDB_SS, 4 },
    { "ds", GDB_DS, 4 },      { "es", GDB_ES, 4 },       { "fs", GDB_FS, 4 },       { "gs", GDB_GS, 4 },
    { "st0", -1, 10 },        { "st1", -1, 10 },         { "st2", -1, 10 },         { "st3", -1, 10 },
    { "st4", -1, 10 },        { "st5", -1, 10 },         { "st6", -1, 10 },         { "st7", -1, 10 },
    { "fctrl", -1, 4 },       { "fstat", -1, 4 },        { "ftag", -1, 4 },         { "fiseg", -1, 4 },
    { "fioff", -1, 4 },       { "foseg", -1, 4 },        { "fooff", -1, 4 },        { "fop", -1, 4 },
    { "fs_base", GDB_FS_BASE, 8 }, { "gs_base", GDB_GS_BASE, 8 },
};
#define LAYOUT_REGS (sizeof layout / sizeof layout[0])

/* A value with every byte different, and different for each register, CPU and generation, that fits. */
static uint64_t distinct_value(unsigned cpu, unsigned reg, unsigned generation, unsigned size)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < size && i < 8; i++)
        v |= (uint64_t)(uint8_t)(i * 0x11 + reg * 3 + cpu * 0x40 + generation * 0x80 + 1) << (8 * i);
    return v;
}

static void le_hex(char *dst, uint64_t value, unsigned size)
{
    for (unsigned i = 0; i < size; i++) {
        uint8_t b = (uint8_t)(value >> (8 * i));
        dst[2 * i] = hex_lower(b >> 4);
        dst[2 * i + 1] = hex_lower(b);
    }
    dst[2 * size] = '\0';
}

/* The g reply for cpu from the fake's registers, built from the layout above. */
static char *expected_g(unsigned cpu)
{
    static char g[2 * GDB_G_BYTES + 1];
    size_t at = 0;
    for (size_t r = 0; r < LAYOUT_REGS; r++) {
        if (layout[r].target < 0 || layout[r].target == fake_unreadable_reg)
            memset(g + at, 'x', 2 * layout[r].size);
        else
            le_hex(g + at, fake_regs[cpu][layout[r].target], layout[r].size);
        at += 2 * layout[r].size;
    }
    g[at] = '\0';
    return g;
}

static void fill_registers(unsigned generation)
{
    for (unsigned cpu = 0; cpu < FAKE_CPUS; cpu++)
        for (size_t r = 0; r < LAYOUT_REGS; r++)
            if (layout[r].target >= 0)
                fake_regs[cpu][layout[r].target] = distinct_value(cpu, (unsigned)r, generation, layout[r].size);
}

/* The registers as fill_registers(0) left them, for what a test expects them to be after. */
static uint64_t before[FAKE_CPUS][GDB_REG_COUNT];

static void fill_registers_kept(void)
{
    fill_registers(0);
    memcpy(before, fake_regs, sizeof before);
}

static void test_g_reads_every_register_of_every_cpu(void **state)
{
    (void)state;
    assert_int_equal(LAYOUT_REGS, GDB_DESC_REGS);
    fill_registers(0);
    for (unsigned cpu = 0; cpu < FAKE_CPUS; cpu++) {
        char packet[16];
        snprintf(packet, sizeof packet, "Hg%x", cpu + 1);
        fake_exchange(packet, "OK");
        fake_exchange("g", expected_g(cpu));
    }
    fake_exchange("gg", "E22");
    run_to_link_loss();
}

static void test_G_writes_every_register_and_g_reads_it_back(void **state)
{
    (void)state;
    fill_registers_kept();

    for (unsigned cpu = 0; cpu < FAKE_CPUS; cpu++) {
        /* G for this CPU with generation-1 values; the x87 bytes gdb sends along are ignored. */
        static char packet[2 * GDB_G_BYTES + 2];
        size_t at = 0;
        packet[at++] = 'G';
        for (size_t r = 0; r < LAYOUT_REGS; r++) {
            if (layout[r].target >= 0)
                le_hex(packet + at, distinct_value(cpu, (unsigned)r, 1, layout[r].size), layout[r].size);
            else
                memset(packet + at, '7', 2 * layout[r].size);
            at += 2 * layout[r].size;
        }
        packet[at] = '\0';

        fake_link_reset();
        char select[16];
        snprintf(select, sizeof select, "Hg%x", cpu + 1);
        fake_exchange(select, "OK");
        fake_exchange(packet, "OK");
        play(GDB_STOP_ATTACH, 0, GDB_END_LINK_LOST);

        for (size_t r = 0; r < LAYOUT_REGS; r++)
            if (layout[r].target >= 0)
                before[cpu][layout[r].target] = distinct_value(cpu, (unsigned)r, 1, layout[r].size);
        /* This CPU has exactly the new values; the others are untouched. */
        assert_memory_equal(fake_regs, before, sizeof before);

        fake_link_reset();
        fake_exchange(select, "OK");
        fake_exchange("g", expected_g(cpu));
        play(GDB_STOP_ATTACH, 0, GDB_END_LINK_LOST);
    }
}

static void test_p_and_P_round_trip_every_register(void **state)
{
    (void)state;
    fill_registers(0);
    for (unsigned cpu = 0; cpu < FAKE_CPUS; cpu++) {
        fake_link_reset();
        char select[16];
        snprintf(select, sizeof select, "Hg%x", cpu + 1);
        fake_exchange(select, "OK");
        uint64_t want[GDB_REG_COUNT];
        memcpy(want, fake_regs[cpu], sizeof want);
        for (size_t r = 0; r < LAYOUT_REGS; r++) {
            char packet[64], reply[32];
            unsigned size = layout[r].size;
            /* p reads the value the fake holds now. */
            snprintf(packet, sizeof packet, "p%zx", r);
            if (layout[r].target >= 0)
                le_hex(reply, fake_regs[cpu][layout[r].target], size);
            else
                memset(reply, 'x', 2 * size), reply[2 * size] = '\0';
            fake_exchange(packet, reply);
            /* P writes a new one, and p reads it back. */
            uint64_t value = distinct_value(cpu, (unsigned)r, 1, size);
            int n = snprintf(packet, sizeof packet, "P%zx=", r);
            if (layout[r].target >= 0) {
                le_hex(packet + n, value, size);
                fake_exchange(packet, "OK");
                le_hex(reply, value, size);
                snprintf(packet, sizeof packet, "p%zx", r);
                fake_exchange(packet, reply);
                want[layout[r].target] = value;
            } else {
                memset(packet + n, '0', 2 * size);
                packet[n + 2 * size] = '\0';
                fake_exchange(packet, "E05");
            }
        }
        play(GDB_STOP_ATTACH, 0, GDB_END_LINK_LOST);
        assert_memory_equal(fake_regs[cpu], want, sizeof want);
    }
}

static void test_register_failures(void **state)
{
    (void)state;
    fill_registers(0);
    fake_unreadable_reg = GDB_RSI;
    fake_readonly_reg = GDB_CS;
    fake_exchange("g", expected_g(0));
    fake_exchange("p4", "xxxxxxxxxxxxxxxx");
    fake_exchange("P12=10000000", "E05"); /* cs refuses */
    fake_exchange("P12=1000", "E22");     /* short */
    fake_exchange("P12=100000000", "E22"); /* long */
    fake_exchange("P0=zz00000000000000", "E22");
    fake_exchange("P2a=00000000", "E22"); /* no register 42 */
    fake_exchange("P0", "E22");
    fake_exchange("P=00", "E22");
    fake_exchange("p2a", "E22");
    fake_exchange("pffffffffffffffffff", "E22");
    fake_exchange("p", "E22");
    fake_exchange("pz", "E22");
    fake_exchange("p1,", "E22");
    fake_exchange("G00", "E22");
    run_to_link_loss();
}

static void test_G_malformed_or_refused(void **state)
{
    (void)state;
    fill_registers_kept();
    static char packet[2 * GDB_G_BYTES + 4];
    packet[0] = 'G';
    memset(packet + 1, '0', 2 * GDB_G_BYTES);
    packet[1 + 2 * GDB_G_BYTES] = '\0';

    /* One digit short, one too many, one not hex: nothing written. */
    packet[2 * GDB_G_BYTES] = '\0';
    fake_exchange(packet, "E22");
    packet[2 * GDB_G_BYTES] = '0';
    packet[1 + 2 * GDB_G_BYTES] = '0';
    packet[2 + 2 * GDB_G_BYTES] = '\0';
    fake_exchange(packet, "E22");
    packet[1 + 2 * GDB_G_BYTES] = '\0';
    packet[100] = 'q';
    fake_exchange(packet, "E22");
    play(GDB_STOP_ATTACH, 0, GDB_END_LINK_LOST);
    assert_memory_equal(fake_regs, before, sizeof before);

    /* A register the target refuses: E05, the others written. */
    fake_link_reset();
    packet[100] = '0';
    fake_readonly_reg = GDB_SS;
    fake_exchange(packet, "E05");
    run_to_link_loss();
    assert_int_equal(fake_regs[0][GDB_RAX], 0);
    assert_int_equal(fake_regs[0][GDB_SS], before[0][GDB_SS]);
    assert_int_equal(fake_regs[0][GDB_GS_BASE], 0);
}

UNIT_MAIN_EACH(setup, teardown, NULL, NULL,
               test_g_reads_every_register_of_every_cpu, test_G_writes_every_register_and_g_reads_it_back,
               test_p_and_P_round_trip_every_register, test_register_failures, test_G_malformed_or_refused)
