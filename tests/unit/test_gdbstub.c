/* tests/unit/test_gdbstub.c: the gdb stub's sessions (gdbstub/stub.c, commands.c over packet.c and regs.c)
 * against a fake machine, as scripts of {packet gdb sends, reply expected} -- every packet the stub knows, the
 * bad ones (bad checksums, oversized packets, junk, unknown commands, unmapped and non-canonical memory,
 * malformed arguments, a link that dies mid-packet), and a round trip of every register through g/G and
 * p/P with values that tell each register, each byte and each CPU apart. */
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

#define HIGH(off) (FAKE_HIGH_BASE + (off))

static int setup(void **state)
{
    (void)state;
    fake_target_reset();
    fake_link_reset();
    gdb_stub_reset();
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    fake_link_reset();
    return 0;
}

static enum gdb_session_end run(enum stop_reason reason, unsigned cpu)
{
    return gdb_stub_session(&fake_target, &fake_transport, reason, cpu);
}

#define SCRIPT_PLAYED()                              \
    do {                                             \
        const char *mismatch_ = fake_link_finish();  \
        if (mismatch_ != NULL)                       \
            fail_msg("%s", mismatch_);               \
    } while (0)

/* A session that answers the script and then loses the link, as most tests end. */
static void run_to_link_loss(void)
{
    assert_int_equal(run(GDB_STOP_ATTACH, 0), GDB_END_LINK_LOST);
    SCRIPT_PLAYED();
}

/* Plays the script so far in a session that gdb ends with `c`, which keeps the breakpoints in. */
static void continue_session(void)
{
    fake_send_packet("c", 1);
    fake_expect_raw("+", 1);
    assert_int_equal(run(GDB_STOP_ATTACH, 0), GDB_END_CONTINUE);
    SCRIPT_PLAYED();
    fake_link_reset();
}

static char scratch[4 * GDB_PACKET_SIZE];

static const char *hex_of(const char *text)
{
    static char buf[4096];
    size_t len = strlen(text);
    assert_true(2 * len < sizeof buf);
    hex_encode(buf, text, len);
    buf[2 * len] = '\0';
    return buf;
}

/* The hex of the fake's memory at [addr, addr + len). */
static const char *memory_hex(uint64_t addr, size_t len)
{
    assert_true(2 * len < sizeof scratch);
    for (size_t i = 0; i < len; i++) {
        uint8_t b = fake_memory_byte(addr + i);
        scratch[2 * i] = hex_lower(b >> 4);
        scratch[2 * i + 1] = hex_lower(b);
    }
    scratch[2 * len] = '\0';
    return scratch;
}

/* ---- framing ---- */

static void test_bad_checksum_is_refused_then_retransmission_answered(void **state)
{
    (void)state;
    fake_send_raw("$qC#00", 6);
    fake_expect_raw("-", 1);
    fake_exchange("qC", "QC1");
    /* Checksum digits that are not hex, and a packet cut short by a new `$`. */
    fake_send_raw("$qC#zz", 6);
    fake_expect_raw("-", 1);
    fake_send_raw("$qAtt$qC#b4", 11);
    fake_expect_ack_reply("QC1");
    fake_send_raw("+", 1);
    run_to_link_loss();
}

static void test_nak_of_a_reply_retransmits_it(void **state)
{
    (void)state;
    fake_send_packet("qC", 2);
    fake_expect_ack_reply("QC1");
    fake_send_raw("-", 1);
    fake_expect_reply("QC1");
    fake_send_raw("-", 1);
    fake_expect_reply("QC1");
    fake_send_raw("+", 1);
    fake_exchange("qAttached", "1");
    run_to_link_loss();
}

static void test_lost_ack_then_next_packet(void **state)
{
    (void)state;
    /* gdb's `+` never arrives; its next packet does, and is answered. */
    fake_send_packet("qC", 2);
    fake_expect_ack_reply("QC1");
    fake_exchange("qAttached", "1");
    run_to_link_loss();
}

static void test_junk_between_packets_is_ignored(void **state)
{
    (void)state;
    fake_send_raw("hello\r\n+-#00", 12);
    fake_exchange("qC", "QC1");
    fake_send_raw("\xff\x00 }*", 5);
    fake_exchange("qAttached", "1");
    /* Ctrl-C while stopped has nothing to interrupt. */
    fake_send_raw("\x03", 1);
    fake_exchange("qC", "QC1");
    run_to_link_loss();
}

static void test_packet_longer_than_advertised(void **state)
{
    (void)state;
    char *big = malloc(GDB_PACKET_SIZE + 100);
    assert_non_null(big);
    memset(big, 'a', GDB_PACKET_SIZE + 100);
    big[0] = 'q';
    /* One byte too long: acknowledged (the checksum is right), answered E07, nothing overflowed. */
    fake_send_packet(big, GDB_PACKET_SIZE + 1);
    fake_expect_ack_reply("E07");
    fake_send_raw("+", 1);
    /* Much too long with a wrong checksum: refused. */
    fake_send_raw("$", 1);
    fake_send_raw(big, GDB_PACKET_SIZE + 100);
    fake_send_raw("#00", 3);
    fake_expect_raw("-", 1);
    /* Exactly the advertised size is accepted (an unknown query: the empty reply). */
    fake_send_packet(big, GDB_PACKET_SIZE);
    fake_expect_ack_reply("");
    fake_send_raw("+", 1);
    fake_exchange("qC", "QC1");
    run_to_link_loss();
    free(big);
}

static void test_empty_packet_and_unknown_commands(void **state)
{
    (void)state;
    fake_send_raw("$#00", 4);
    fake_expect_ack_reply("");
    fake_send_raw("+", 1);
    const char *unknown[] = { "vMustReplyEmpty", "qOffsets", "qTStatus", "!", "QStartNoAckMode", "bc", "i",
                              "qSymbol::", "qXfer:threads:read::0,fff", "vKill;1", "vContX", "y", "qCRC:1000,4",
                              "qSupportedX" };
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++)
        fake_exchange(unknown[i], "");
    run_to_link_loss();
}

static void test_disconnect_mid_packet_ends_the_session(void **state)
{
    (void)state;
    fake_exchange("Z0,ffffffff80000010,1", "OK");
    fake_exchange("Z1,ffffffff80000020,1", "OK");
    fake_send_raw("$m10", 4);
    assert_int_equal(run(GDB_STOP_ATTACH, 1), GDB_END_LINK_LOST);
    SCRIPT_PLAYED();
    /* Nothing is left to stop the machine for a debugger that is gone, and the machine runs. */
    assert_int_equal(fake_sw_break_count(), 0);
    assert_int_equal(fake_hw_break_count(), 0);
    assert_int_equal(fake_resume_calls, 1);
    assert_int_equal(fake_resume_step_cpu, -1);
    assert_false(fake_resume_others_stay);
}

static void test_disconnect_waiting_for_an_ack(void **state)
{
    (void)state;
    fake_send_packet("qC", 2);
    fake_expect_ack_reply("QC1");
    assert_int_equal(run(GDB_STOP_ATTACH, 0), GDB_END_LINK_LOST);
    SCRIPT_PLAYED();
    assert_int_equal(fake_resume_calls, 1);
}

static void test_disconnect_in_checksum(void **state)
{
    (void)state;
    fake_send_raw("$qC#b", 5);
    run_to_link_loss();
}

/* ---- stop replies ---- */

static void test_question_mark_reports_the_stop(void **state)
{
    (void)state;
    struct {
        enum stop_reason reason;
        unsigned cpu;
        const char *reply;
    } cases[] = {
        { GDB_STOP_ATTACH, 0, "T05thread:1;" },
        { GDB_STOP_ATTACH, 2, "T05thread:3;" },
        { GDB_STOP_INTERRUPT, 3, "T02thread:4;" },
        { GDB_STOP_STEP, 1, "T05thread:2;" },
        { GDB_STOP_TRAP, 0, "T05thread:1;" },
        { GDB_STOP_PANIC, 0, "T06thread:1;" },
        /* gdb has not said it understands swbreak/hwbreak, so they are not sent. */
        { GDB_STOP_SW_BREAK, 0, "T05thread:1;" },
        { GDB_STOP_HW_BREAK, 0, "T05thread:1;" },
        /* A CPU number beyond the machine is taken as CPU 0. */
        { GDB_STOP_ATTACH, 7, "T05thread:1;" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        fake_link_reset();
        fake_exchange("?", cases[i].reply);
        fake_exchange("?x", "E22");
        assert_int_equal(run(cases[i].reason, cases[i].cpu), GDB_END_LINK_LOST);
        SCRIPT_PLAYED();
    }
}

static void test_swbreak_and_hwbreak_once_gdb_supports_them(void **state)
{
    (void)state;
    fake_exchange("qSupported:multiprocess+;swbreak+;hwbreak+;xmlRegisters=i386",
                  "PacketSize=ff00;qXfer:features:read+;vContSupported+;swbreak+;hwbreak+");
    fake_exchange("?", "T05thread:2;swbreak:;");
    assert_int_equal(run(GDB_STOP_SW_BREAK, 1), GDB_END_LINK_LOST);
    SCRIPT_PLAYED();

    fake_link_reset();
    fake_exchange("?", "T05thread:1;hwbreak:;");
    assert_int_equal(run(GDB_STOP_HW_BREAK, 0), GDB_END_LINK_LOST);
    SCRIPT_PLAYED();

    /* A gdb that lists only one of them gets only that one. */
    fake_link_reset();
    fake_exchange("qSupported:hwbreak+", "PacketSize=ff00;qXfer:features:read+;vContSupported+;swbreak+;hwbreak+");
    fake_exchange("?", "T05thread:1;");
    assert_int_equal(run(GDB_STOP_SW_BREAK, 0), GDB_END_LINK_LOST);
    SCRIPT_PLAYED();
}

static void test_stop_reply_sent_when_gdb_waits_for_it(void **state)
{
    (void)state;
    fake_exchange("qSupported:swbreak+", "PacketSize=ff00;qXfer:features:read+;vContSupported+;swbreak+;hwbreak+");
    fake_send_packet("c", 1);
    fake_expect_raw("+", 1);
    assert_int_equal(run(GDB_STOP_ATTACH, 0), GDB_END_CONTINUE);
    SCRIPT_PLAYED();

    /* The breakpoint is hit: gdb hears of it unasked. */
    fake_link_reset();
    fake_expect_reply("T05thread:3;swbreak:;");
    fake_send_raw("+", 1);
    fake_send_packet("vCont;s:3;c", 11);
    fake_expect_raw("+", 1);
    assert_int_equal(run(GDB_STOP_SW_BREAK, 2), GDB_END_STEP);
    SCRIPT_PLAYED();

    /* The step completes. A NAK of the stop reply gets it again. */
    fake_link_reset();
    fake_expect_reply("T05thread:3;");
    fake_send_raw("-", 1);
    fake_expect_reply("T05thread:3;");
    fake_send_raw("+", 1);
    fake_send_packet("c", 1);
    fake_expect_raw("+", 1);
    assert_int_equal(run(GDB_STOP_STEP, 2), GDB_END_CONTINUE);
    SCRIPT_PLAYED();

    /* Ctrl-C. */
    fake_link_reset();
    fake_expect_reply("T02thread:1;");
    fake_send_raw("+", 1);
    fake_exchange("D", "OK");
    assert_int_equal(run(GDB_STOP_INTERRUPT, 0), GDB_END_DETACH);
    SCRIPT_PLAYED();

    /* After a detach nobody waits: the next stop says nothing until asked. */
    fake_link_reset();
    fake_exchange("?", "T05thread:1;swbreak:;");
    assert_int_equal(run(GDB_STOP_SW_BREAK, 0), GDB_END_LINK_LOST);
    SCRIPT_PLAYED();
}

static void test_no_stop_reply_to_a_new_debugger(void **state)
{
    (void)state;
    fake_send_packet("c", 1);
    fake_expect_raw("+", 1);
    assert_int_equal(run(GDB_STOP_ATTACH, 0), GDB_END_CONTINUE);
    SCRIPT_PLAYED();
    /* That gdb went away; a new one attaches by sending a packet while the machine runs. */
    fake_link_reset();
    fake_exchange("qSupported", "PacketSize=ff00;qXfer:features:read+;vContSupported+;swbreak+;hwbreak+");
    fake_exchange("?", "T05thread:1;");
    run_to_link_loss();
}

/* ---- queries and threads ---- */

static void test_supported_and_attached(void **state)
{
    (void)state;
    fake_exchange("qSupported:multiprocess+;swbreak+;hwbreak+;qRelocInsn+;fork-events+;vContSupported+",
                  "PacketSize=ff00;qXfer:features:read+;vContSupported+;swbreak+;hwbreak+");
    fake_exchange("qAttached", "1");
    fake_exchange("qAttached:1", "1");
    run_to_link_loss();
}

static void test_supported_forgets_breakpoints_of_a_previous_debugger(void **state)
{
    (void)state;
    fake_exchange("Z0,1000,1", "OK");
    fake_exchange("Z1,2000,1", "OK");
    fake_send_packet("c", 1);
    fake_expect_raw("+", 1);
    assert_int_equal(run(GDB_STOP_ATTACH, 0), GDB_END_CONTINUE);
    SCRIPT_PLAYED();
    assert_int_equal(fake_sw_break_count(), 1);
    assert_int_equal(fake_hw_break_count(), 1);

    fake_link_reset();
    fake_exchange("qSupported:swbreak+", "PacketSize=ff00;qXfer:features:read+;vContSupported+;swbreak+;hwbreak+");
    run_to_link_loss();
    assert_int_equal(fake_sw_break_count(), 0);
    assert_int_equal(fake_hw_break_count(), 0);
}

static void test_threads_are_cpus(void **state)
{
    (void)state;
    fake_exchange("qC", "QC3");
    fake_exchange("qfThreadInfo", "m1,2,3,4");
    fake_exchange("qsThreadInfo", "l");
    fake_exchange("qsThreadInfo", "l");
    fake_exchange("qfThreadInfo", "m1,2,3,4");
    fake_exchange("qThreadExtraInfo,1", hex_of("cpu 0, task shell (pid 1)"));
    fake_exchange("qThreadExtraInfo,4", hex_of("cpu 3, task idle (pid 0)"));
    fake_exchange("qThreadExtraInfo,5", "E03");
    fake_exchange("qThreadExtraInfo,0", "E03");
    fake_exchange("qThreadExtraInfo,-1", "E03");
    fake_exchange("qThreadExtraInfo,", "E22");
    fake_exchange("qThreadExtraInfo,2x", "E22");
    fake_exchange("qThreadExtraInfo,ffffffffffffffffff", "E22");
    for (unsigned t = 1; t <= FAKE_CPUS; t++) {
        char packet[16];
        snprintf(packet, sizeof packet, "T%x", t);
        fake_exchange(packet, "OK");
    }
    fake_exchange("T5", "E03");
    fake_exchange("T0", "E03");
    fake_exchange("T-1", "E03");
    fake_exchange("Tfffffffff", "E03");
    fake_exchange("T", "E22");
    fake_exchange("Tz", "E22");
    fake_exchange("T1,", "E22");
    assert_int_equal(run(GDB_STOP_ATTACH, 2), GDB_END_LINK_LOST);
    SCRIPT_PLAYED();
}

static void test_select_thread(void **state)
{
    (void)state;
    fake_regs[0][GDB_RAX] = 0x10;
    fake_regs[1][GDB_RAX] = 0x11;
    fake_regs[2][GDB_RAX] = 0x12;
    fake_exchange("p0", "1000000000000000");
    fake_exchange("qC", "QC1");
    fake_exchange("Hg2", "OK");
    fake_exchange("p0", "1100000000000000");
    fake_exchange("qC", "QC2"); /* the current thread is the one Hg chose */
    fake_exchange("Hg3", "OK");
    fake_exchange("p0", "1200000000000000");
    fake_exchange("Hc4", "OK");
    fake_exchange("qC", "QC3"); /* Hc is for resuming, not the current thread */
    fake_exchange("Hc-1", "OK");
    fake_exchange("Hg0", "OK"); /* any: the CPU that stopped */
    fake_exchange("p0", "1000000000000000");
    fake_exchange("qC", "QC1");
    fake_exchange("Hg3", "OK");
    fake_exchange("Hg-1", "OK");
    fake_exchange("p0", "1000000000000000");
    fake_exchange("Hg5", "E03");
    fake_exchange("Hgz", "E22");
    fake_exchange("Hg", "E22");
    fake_exchange("Hg1x", "E22");
    fake_exchange("Hx1", "E22");
    fake_exchange("H", "E22");
    fake_exchange("Hc-1", "OK");
    fake_exchange("Hc0", "OK");
    fake_exchange("Hc4", "OK");
    fake_exchange("Hc9", "E03");
    run_to_link_loss();
}

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
    fill_registers(0);
    uint64_t before[FAKE_CPUS][GDB_REG_COUNT];
    memcpy(before, fake_regs, sizeof before);

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
        assert_int_equal(run(GDB_STOP_ATTACH, 0), GDB_END_LINK_LOST);
        SCRIPT_PLAYED();

        for (size_t r = 0; r < LAYOUT_REGS; r++)
            if (layout[r].target >= 0)
                before[cpu][layout[r].target] = distinct_value(cpu, (unsigned)r, 1, layout[r].size);
        /* This CPU has exactly the new values; the others are untouched. */
        assert_memory_equal(fake_regs, before, sizeof before);

        fake_link_reset();
        fake_exchange(select, "OK");
        fake_exchange("g", expected_g(cpu));
        assert_int_equal(run(GDB_STOP_ATTACH, 0), GDB_END_LINK_LOST);
        SCRIPT_PLAYED();
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
        assert_int_equal(run(GDB_STOP_ATTACH, 0), GDB_END_LINK_LOST);
        SCRIPT_PLAYED();
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
    fill_registers(0);
    uint64_t before[FAKE_CPUS][GDB_REG_COUNT];
    memcpy(before, fake_regs, sizeof before);
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
    assert_int_equal(run(GDB_STOP_ATTACH, 0), GDB_END_LINK_LOST);
    SCRIPT_PLAYED();
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

/* ---- memory ---- */

static void test_read_memory(void **state)
{
    (void)state;
    char packet[64];
    fake_exchange("m1000,10", memory_hex(0x1000, 0x10));
    fake_exchange("m1ff0,20", memory_hex(0x1ff0, 0x20));
    snprintf(packet, sizeof packet, "m%llx,8", (unsigned long long)HIGH(0x2ff8));
    fake_exchange(packet, memory_hex(HIGH(0x2ff8), 8));
    /* Leading zeros, and capital hex digits. */
    fake_exchange("m00001A00,2", memory_hex(0x1a00, 2));
    /* Running off the end of the mapping returns the bytes before the gap. */
    fake_exchange("m2ff8,10", memory_hex(0x2ff8, 8));
    snprintf(packet, sizeof packet, "m%llx,2000", (unsigned long long)HIGH(0x2000));
    fake_exchange(packet, memory_hex(HIGH(0x2000), 0x1000));
    /* A read larger than a packet holds is answered with as much as fits. */
    _Static_assert(FAKE_BIG_SIZE > GDB_PACKET_SIZE / 2, "the big region outgrows a packet");
    fake_exchange("m100000,100000", memory_hex(FAKE_BIG_BASE, GDB_PACKET_SIZE / 2));
    run_to_link_loss();
}

static void test_read_memory_refusals(void **state)
{
    (void)state;
    fake_exchange("m0,1", "E14");
    fake_exchange("m3000,4", "E14");                 /* the gap above the low region */
    fake_exchange("m800000000000,8", "E14");         /* non-canonical */
    fake_exchange("m7ffffffffff8,10", "E14");        /* into the canonical hole */
    fake_exchange("mffffffff80003000,1", "E14");     /* just past the high region */
    fake_exchange("mffffffffffffffff,2", "E14");     /* wraps */
    fake_exchange("mfffffffffffffff0,100000", "E14");
    fake_exchange("m1000", "E22");
    fake_exchange("m1000,", "E22");
    fake_exchange("m,10", "E22");
    fake_exchange("m1000,0", "E22");
    fake_exchange("mzz,1", "E22");
    fake_exchange("m1000,1x", "E22");
    fake_exchange("m1000;1", "E22");
    fake_exchange("m10000000000000000,1", "E22"); /* 17 digits */
    fake_exchange("m1000,10000000000000000", "E22");
    run_to_link_loss();
}

static void test_write_memory_hex(void **state)
{
    (void)state;
    fake_exchange("M1000,4:deadBEEF", "OK");
    /* Four bytes written, the fifth still the pattern. */
    char expect[16];
    snprintf(expect, sizeof expect, "deadbeef%02x", fake_memory_pattern(4));
    fake_exchange("m1000,5", expect);
    fake_exchange("M1000,0:", "OK");
    fake_exchange("M1000,4:dead", "E22");
    fake_exchange("M1000,2:dead00", "E22");
    fake_exchange("M1000,2:zzzz", "E22");
    fake_exchange("M1000,2:abc", "E22");
    fake_exchange("M1000,2abcd", "E22");
    fake_exchange("M3000,1:00", "E14");
    fake_exchange("M2fff,2:0000", "E14");
    fake_exchange("M800000000000,1:00", "E14");
    fake_exchange("Mffffffffffffffff,2:0000", "E14"); /* wraps past the top of the address space */
    run_to_link_loss();
    assert_int_equal(fake_memory_byte(0x1000), 0xde);
    assert_int_equal(fake_memory_byte(0x1003), 0xef);
    assert_int_equal(fake_memory_byte(0x2fff), fake_memory_pattern(0x1fff));
}

static void test_write_memory_largest_packet(void **state)
{
    (void)state;
    /* M1000,1ffa: and 0x1ffa bytes of hex: 16383 characters, just inside the packet size. */
    size_t n = 0x1ffa;
    char *packet = malloc(32 + 2 * n);
    assert_non_null(packet);
    int head = snprintf(packet, 32, "M1000,%zx:", n);
    for (size_t i = 0; i < n; i++) {
        packet[head + 2 * i] = hex_lower((unsigned)(0xa5 ^ i) >> 4);
        packet[head + 2 * i + 1] = hex_lower((unsigned)(0xa5 ^ i));
    }
    packet[head + 2 * n] = '\0';
    assert_true(strlen(packet) <= GDB_PACKET_SIZE);
    fake_exchange(packet, "OK");
    run_to_link_loss();
    for (size_t i = 0; i < n; i++)
        assert_int_equal(fake_memory_byte(0x1000 + i), (uint8_t)(0xa5 ^ i));
    free(packet);
}

static void test_write_memory_binary(void **state)
{
    (void)state;
    /* X support probe. */
    fake_exchange("X1000,0:", "OK");
    /* Bytes 0x00, '#', '$', '}', '*', 0x03, 0xff: the four gdb escapes ('}' then the byte ^ 0x20). */
    static const char packet[] = "X1000,7:\x00}\x03}\x04}]}\x0a\x03\xff";
    fake_send_packet(packet, sizeof packet - 1);
    fake_expect_ack_reply("OK");
    fake_send_raw("+", 1);
    fake_exchange("m1000,7", "0023247d2a03ff");
    /* An escape with nothing after it, a length that does not match, unmapped. */
    static const char dangling[] = "X1000,1:}";
    fake_send_packet(dangling, sizeof dangling - 1);
    fake_expect_ack_reply("E22");
    fake_send_raw("+", 1);
    fake_exchange("X1000,2:a", "E22");
    fake_exchange("X1000,1:ab", "E22");
    fake_exchange("X3000,1:a", "E14");
    fake_exchange("Xffffffff80002fff,2:ab", "E14");
    fake_exchange("X1000,1", "E22");
    fake_exchange("X,1:a", "E22");
    run_to_link_loss();
}

/* ---- breakpoints ---- */

static void test_software_breakpoints(void **state)
{
    (void)state;
    fake_exchange("Z0,ffffffff80001000,1", "OK");
    /* Idempotent both ways. */
    fake_exchange("Z0,ffffffff80001000,1", "OK");
    fake_exchange("Z0,1010,1", "OK");
    fake_exchange("z0,ffffffff80001000,1", "OK");
    fake_exchange("z0,ffffffff80001000,1", "OK");
    fake_exchange("z0,5000,1", "OK");
    /* Unmapped, non-canonical. */
    fake_exchange("Z0,3000,1", "E14");
    fake_exchange("Z0,800000000000,1", "E14");
    fake_exchange("Z0,0,1", "E14");
    /* Malformed. */
    fake_exchange("Z0,1000", "E22");
    fake_exchange("Z0,1000,", "E22");
    fake_exchange("Z0,zz,1", "E22");
    fake_exchange("Z0,1000,1;X1,0f", "E22");
    fake_exchange("Z", "E22");
    fake_exchange("Z0", "E22");
    fake_exchange("z0,", "E22");
    fake_exchange("Zq,1000,1", "E22");
    /* Types past the access watchpoint's are not gdb's: the empty reply. */
    fake_exchange("Z5,1000,4", "");
    fake_exchange("Z9,1000,4", "");
    run_to_link_loss();
    /* The session ended with the link lost: gdb's breakpoints went with it. */
    assert_int_equal(fake_sw_break_count(), 0);
    assert_int_equal(fake_break_insert_calls, 2 + 3);
}

static void test_software_breakpoints_stay_across_a_continue(void **state)
{
    (void)state;
    fake_exchange("Z0,ffffffff80001000,1", "OK");
    fake_exchange("Z0,1010,1", "OK");
    fake_exchange("z0,1010,1", "OK");
    fake_send_packet("c", 1);
    fake_expect_raw("+", 1);
    assert_int_equal(run(GDB_STOP_ATTACH, 0), GDB_END_CONTINUE);
    SCRIPT_PLAYED();
    assert_true(fake_sw_break_at(HIGH(0x1000)));
    assert_false(fake_sw_break_at(0x1010));
    assert_int_equal(fake_sw_break_count(), 1);
}

static void test_hardware_breakpoints(void **state)
{
    (void)state;
    fake_exchange("Z1,ffffffff80001000,1", "OK");
    fake_exchange("Z1,ffffffff80001000,1", "OK");
    /* Hardware breakpoints need no mapping; there are four debug registers. */
    fake_exchange("Z1,3000,1", "OK");
    fake_exchange("Z1,4000,1", "OK");
    fake_exchange("Z1,5000,1", "OK");
    fake_exchange("Z1,6000,1", "E28");
    fake_exchange("Z1,800000000000,1", "E28");
    fake_exchange("z1,5000,1", "OK");
    fake_exchange("Z1,6000,1", "OK");
    /* Software and hardware breakpoints at one address are two different things. */
    fake_exchange("Z0,ffffffff80001000,1", "OK");
    fake_exchange("z1,ffffffff80001000,1", "OK");
    fake_send_packet("c", 1);
    fake_expect_raw("+", 1);
    assert_int_equal(run(GDB_STOP_ATTACH, 0), GDB_END_CONTINUE);
    SCRIPT_PLAYED();
    assert_true(fake_sw_break_at(HIGH(0x1000)));
    assert_false(fake_hw_break_at(HIGH(0x1000)));
    assert_true(fake_hw_break_at(0x3000));
    assert_true(fake_hw_break_at(0x6000));
    assert_int_equal(fake_hw_break_count(), 3);
}

static void test_watchpoints(void **state)
{
    (void)state;
    fake_exchange("Z2,1000,4", "OK");
    fake_exchange("Z2,1000,4", "OK"); /* idempotent */
    fake_exchange("Z4,2008,8", "OK");
    /* No read-only watchpoint, and none a debug register cannot be: refused, not left to look supported. */
    fake_exchange("Z3,1000,4", "E95");
    fake_exchange("z3,1000,4", "OK");
    fake_exchange("Z2,1001,4", "E95");
    fake_exchange("Z2,1000,3", "E95");
    fake_exchange("Z2,1000,10", "E95");
    fake_exchange("Z4,1000,0", "E95");
    fake_exchange("Z2,1000,8", "E28"); /* the same address over another length: removed first, as gdb does */
    /* Never on the debugger's own data or code. */
    fake_exchange("Z2,ffffffff80002800,4", "E01");
    fake_exchange("Z4,ffffffff800028f8,8", "E01");
    fake_exchange("Z4,ffffffff800027f8,8", "OK"); /* just before it */
    fake_exchange("z4,ffffffff800027f8,8", "OK");
    fake_exchange("Z2,ffffffff80002000,1", "E01");
    fake_exchange("Z2,ffffffff80002900,4", "OK");
    /* They share the four debug registers with the hardware breakpoints. */
    fake_exchange("Z1,3000,1", "OK");
    fake_exchange("Z2,4000,2", "E28");
    fake_exchange("z4,2008,8", "OK");
    fake_exchange("Z2,4000,2", "OK");
    fake_exchange("Z4,5000,1", "E28");
    fake_send_packet("c", 1);
    fake_expect_raw("+", 1);
    assert_int_equal(run(GDB_STOP_ATTACH, 0), GDB_END_CONTINUE);
    SCRIPT_PLAYED();
    struct gdb_hw_slot h[4];
    for (unsigned i = 0; i < 4; i++)
        assert_true(gdb_break_hw_slot(i, &h[i]));
    const struct gdb_hw_slot want[4] = {
        { GDB_WATCH_WRITE, 0x1000, 4 },
        { GDB_WATCH_WRITE, 0x4000, 2 },
        { GDB_WATCH_WRITE, HIGH(0x2900), 4 },
        { GDB_BREAK_HW, 0x3000, 1 },
    };
    for (unsigned i = 0; i < 4; i++) {
        assert_int_equal(h[i].type, want[i].type);
        assert_int_equal(h[i].addr, want[i].addr);
        assert_int_equal(h[i].len, want[i].len);
    }
}

static void test_a_watchpoint_stop_reports_its_address(void **state)
{
    (void)state;
    gdb_break_note_watch_hit(&(struct gdb_hw_slot){ .type = GDB_WATCH_WRITE, .addr = 0x1000, .len = 4 });
    fake_exchange("?", "T05thread:2;watch:1000;");
    assert_int_equal(run(GDB_STOP_WATCH, 1), GDB_END_LINK_LOST);
    SCRIPT_PLAYED();
    fake_link_reset();
    gdb_break_note_watch_hit(&(struct gdb_hw_slot){ .type = GDB_WATCH_ACCESS, .addr = HIGH(0x10), .len = 8 });
    fake_exchange("?", "T05thread:1;awatch:ffffffff80000010;");
    assert_int_equal(run(GDB_STOP_WATCH, 0), GDB_END_LINK_LOST);
    SCRIPT_PLAYED();
    /* Another kind of stop says nothing of a watchpoint. */
    fake_link_reset();
    gdb_break_note_watch_hit(0);
    fake_exchange("?", "T05thread:1;");
    assert_int_equal(run(GDB_STOP_STEP, 0), GDB_END_LINK_LOST);
    SCRIPT_PLAYED();
}

static void test_breakpoint_table_full(void **state)
{
    (void)state;
    char packet[48];
    for (unsigned i = 0; i < GDB_MAX_BREAKPOINTS; i++) {
        snprintf(packet, sizeof packet, "Z0,%x,1", 0x1000 + i);
        fake_exchange(packet, "OK");
    }
    snprintf(packet, sizeof packet, "Z0,%x,1", 0x1000 + GDB_MAX_BREAKPOINTS);
    fake_exchange(packet, "E28");
    fake_exchange("z0,1000,1", "OK");
    fake_exchange(packet, "OK");
    fake_exchange("D", "OK");
    assert_int_equal(run(GDB_STOP_ATTACH, 0), GDB_END_DETACH);
    SCRIPT_PLAYED();
    assert_int_equal(fake_sw_break_count(), 0);
}

/* gdb reads the code, not the int3 standing in for it; a write under a breakpoint lands in the code with the
 * breakpoint kept over it, and removing the breakpoint leaves what gdb wrote. */
static void test_memory_under_a_breakpoint(void **state)
{
    (void)state;
    char original[16];
    snprintf(original, sizeof original, "%02x%02x%02x%02x", fake_memory_pattern(0xe), fake_memory_pattern(0xf),
             fake_memory_pattern(0x10), fake_memory_pattern(0x11));
    fake_exchange("Z0,1010,1", "OK");
    fake_exchange("m100e,4", original);
    fake_exchange("M100f,3:aabbdd", "OK");
    fake_exchange("m100f,3", "aabbdd");
    continue_session();
    assert_int_equal(fake_memory_byte(0x100f), 0xaa);
    assert_int_equal(fake_memory_byte(0x1010), FAKE_BREAK_INSN);
    assert_int_equal(fake_memory_byte(0x1011), 0xdd);
    fake_exchange("z0,1010,1", "OK");
    continue_session();
    assert_int_equal(fake_memory_byte(0x1010), 0xbb);

    /* gdb may write the int3 byte itself; what it wrote is what stays. */
    fake_exchange("Z0,1010,1", "OK");
    fake_exchange("M1010,1:cc", "OK");
    fake_exchange("m1010,1", "cc");
    fake_exchange("z0,1010,1", "OK");
    fake_exchange("m1010,1", "cc");
    fake_exchange("Z0,1010,1", "OK");
    fake_exchange("M1010,1:01", "OK");
    continue_session();
    assert_int_equal(fake_memory_byte(0x1010), FAKE_BREAK_INSN);
    fake_exchange("m1010,1", "01");
    run_to_link_loss();
    assert_int_equal(fake_memory_byte(0x1010), 0x01);
}

/* ---- resuming ---- */

/* Plays one resume packet and checks what was resumed. */
static void expect_resume(const char *before1, const char *before2, const char *packet, enum gdb_session_end end,
                          int step_cpu, bool others_stay)
{
    fake_target_reset();
    fake_link_reset();
    gdb_stub_reset();
    if (before1 != NULL)
        fake_exchange(before1, "OK");
    if (before2 != NULL)
        fake_exchange(before2, "OK");
    fake_send_packet(packet, strlen(packet));
    fake_expect_raw("+", 1);
    assert_int_equal(run(GDB_STOP_SW_BREAK, 1), end);
    const char *mismatch = fake_link_finish();
    if (mismatch != NULL)
        fail_msg("%s: %s", packet, mismatch);
    bool step = end == GDB_END_STEP;
    if (fake_resume_calls != 1 || fake_resume_step_cpu != step_cpu || fake_resume_others_stay != others_stay ||
        fake_resume_step != step)
        fail_msg("%s: resume called %u times, last (%d, step %d, stay %d); expected (%d, %d, %d)", packet,
                 fake_resume_calls, fake_resume_step_cpu, fake_resume_step, fake_resume_others_stay, step_cpu,
                 step, others_stay);
}

static void test_continue_and_step(void **state)
{
    (void)state;
    expect_resume(NULL, NULL, "c", GDB_END_CONTINUE, -1, false);
    expect_resume(NULL, NULL, "C05", GDB_END_CONTINUE, -1, false);
    /* s steps gdb's current CPU (the one that stopped, or Hg's) while the others run... */
    expect_resume(NULL, NULL, "s", GDB_END_STEP, 1, false);
    expect_resume("Hg4", NULL, "s", GDB_END_STEP, 3, false);
    expect_resume(NULL, NULL, "S05", GDB_END_STEP, 1, false);
    /* ...or the CPU Hc names, alone. */
    expect_resume("Hc3", NULL, "s", GDB_END_STEP, 2, true);
    expect_resume("Hc3", "Hc-1", "s", GDB_END_STEP, 1, false);
    expect_resume("Hc1", "Hc0", "s", GDB_END_STEP, 1, false);
}

static void test_continue_at_an_address(void **state)
{
    (void)state;
    expect_resume(NULL, NULL, "cffffffff80001234", GDB_END_CONTINUE, -1, false);
    assert_int_equal(fake_regs[1][GDB_RIP], 0xffffffff80001234ull);
    expect_resume("Hg3", NULL, "s1000", GDB_END_STEP, 2, false);
    assert_int_equal(fake_regs[2][GDB_RIP], 0x1000);
    assert_int_equal(fake_regs[1][GDB_RIP], 0);
    expect_resume(NULL, NULL, "C05;2000", GDB_END_CONTINUE, -1, false);
    assert_int_equal(fake_regs[1][GDB_RIP], 0x2000);
}

static void test_malformed_resume_packets(void **state)
{
    (void)state;
    fake_exchange("cz", "E22");
    fake_exchange("c1000x", "E22");
    fake_exchange("C", "E22");
    fake_exchange("C05;", "E22");
    fake_exchange("C05x", "E22");
    fake_exchange("Sxx", "E22");
    fake_exchange("s;", "E22");
    fake_readonly_reg = GDB_RIP;
    fake_exchange("c1000", "E05");
    run_to_link_loss();
    /* None of them resumed anything but the final loss of the link. */
    assert_int_equal(fake_resume_calls, 1);
}

static void test_vcont(void **state)
{
    (void)state;
    fake_exchange("vCont?", "vCont;c;C;s;S");
    run_to_link_loss();

    expect_resume(NULL, NULL, "vCont;c", GDB_END_CONTINUE, -1, false);
    expect_resume(NULL, NULL, "vCont;c:-1", GDB_END_CONTINUE, -1, false);
    expect_resume(NULL, NULL, "vCont;C05", GDB_END_CONTINUE, -1, false);
    expect_resume(NULL, NULL, "vCont;s:2;c", GDB_END_STEP, 1, false);
    expect_resume(NULL, NULL, "vCont;S05:3;C05", GDB_END_STEP, 2, false);
    expect_resume(NULL, NULL, "vCont;s:2", GDB_END_STEP, 1, true);
    expect_resume(NULL, NULL, "vCont;s:4", GDB_END_STEP, 3, true);
    expect_resume("Hg3", NULL, "vCont;s:0;c", GDB_END_STEP, 2, false);
    /* The leftmost action for a thread wins: CPU 2 continues, and with the default so does everyone. */
    expect_resume(NULL, NULL, "vCont;c:2;s:2;c", GDB_END_CONTINUE, -1, false);
    /* A step for a thread after the default is never reached. */
    expect_resume(NULL, NULL, "vCont;c;s:2", GDB_END_CONTINUE, -1, false);
    /* Naming every other CPU is the same as the default. */
    expect_resume(NULL, NULL, "vCont;s:1;c:2;c:3;c:4", GDB_END_STEP, 0, false);
    expect_resume(NULL, NULL, "vCont;c:1;c:2;c:3;c:4", GDB_END_CONTINUE, -1, false);
    expect_resume(NULL, NULL, "vCont;s:1;s:1;c", GDB_END_STEP, 0, false);
    /* One CPU running alone, the others held (gdb's scheduler-locking); the leftmost rule decides it too. */
    expect_resume(NULL, NULL, "vCont;c:1", GDB_END_CONTINUE, 0, true);
    expect_resume(NULL, NULL, "vCont;C05:3", GDB_END_CONTINUE, 2, true);
    expect_resume("Hg4", NULL, "vCont;c:0", GDB_END_CONTINUE, 3, true);
    expect_resume(NULL, NULL, "vCont;c:2;s:2", GDB_END_CONTINUE, 1, true);
}

static void test_vcont_refusals(void **state)
{
    (void)state;
    const char *refused[] = {
        "vCont;",             /* no action */
        "vCont;s",            /* every CPU stepping */
        "vCont;s:-1",         /* the same */
        "vCont;s:1;s:2",      /* two CPUs stepping */
        "vCont;c:1;c:1;c:2;c:3", /* CPU 4 left out */
        "vCont;c:1;c:2",      /* two running, two held */
        "vCont;s:1;c:2",      /* one stepping, one running, two held */
        "vCont;t",            /* stop: not offered */
        "vCont;r1000,2000",   /* range step: not offered */
        "vCont;x",
        "vCont;C",            /* signal missing */
        "vCont;c:",
        "vCont;c:zz",
        "vCont;c;",
        "vCont;cc",
        "vCont;s:1x",
    };
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++)
        fake_exchange(refused[i], "E22");
    fake_exchange("vCont;c:9", "E03");
    fake_exchange("vCont;s:5;c", "E03");
    run_to_link_loss();
    assert_int_equal(fake_resume_calls, 1); /* only the final loss of the link */
}

static void test_detach(void **state)
{
    (void)state;
    fake_exchange("Z0,1000,1", "OK");
    fake_exchange("Z1,2000,1", "OK");
    fake_exchange("Dx", "E22");
    fake_exchange("D;", "E22");
    fake_exchange("D;1", "OK");
    assert_int_equal(run(GDB_STOP_ATTACH, 0), GDB_END_DETACH);
    SCRIPT_PLAYED();
    assert_int_equal(fake_sw_break_count(), 0);
    assert_int_equal(fake_hw_break_count(), 0);
    assert_int_equal(fake_resume_calls, 1);
    assert_int_equal(fake_resume_step_cpu, -1);
    assert_false(fake_resume_others_stay);

    /* Detach whose OK is never acknowledged: the machine resumes all the same. */
    fake_target_reset();
    fake_link_reset();
    fake_send_packet("D", 1);
    fake_expect_ack_reply("OK");
    assert_int_equal(run(GDB_STOP_ATTACH, 0), GDB_END_DETACH);
    SCRIPT_PLAYED();
    assert_int_equal(fake_resume_calls, 1);
}

static void test_kill(void **state)
{
    (void)state;
    fake_exchange("Z0,1000,1", "OK");
    fake_exchange("kx", "E22");
    fake_send_packet("k", 1);
    fake_expect_raw("+", 1);
    assert_int_equal(run(GDB_STOP_ATTACH, 0), GDB_END_KILL);
    SCRIPT_PLAYED();
    assert_int_equal(fake_kill_calls, 1);
    assert_int_equal(fake_resume_calls, 0);
    assert_int_equal(fake_sw_break_count(), 0);
}

/* ---- target description ---- */

static void test_target_xml_whole_and_in_parts(void **state)
{
    (void)state;
    size_t total = gdb_target_xml_length();
    assert_true(total > 0 && total < GDB_PACKET_SIZE - 1);
    char *xml = malloc(total + 1);
    assert_non_null(xml);
    assert_int_equal(gdb_target_xml_read(0, xml, total), total);
    xml[total] = '\0';
    char *reply = malloc(total + 2);
    assert_non_null(reply);

    /* All at once, as gdb asks. */
    snprintf(reply, total + 2, "l%s", xml);
    fake_exchange("qXfer:features:read:target.xml:0,3ffb", reply);
    /* In 0x100-byte parts. */
    for (size_t off = 0; off < total; off += 0x100) {
        char packet[64];
        snprintf(packet, sizeof packet, "qXfer:features:read:target.xml:%zx,100", off);
        size_t n = total - off < 0x100 ? total - off : 0x100;
        snprintf(reply, total + 2, "%c%.*s", off + n < total ? 'm' : 'l', (int)n, xml + off);
        fake_exchange(packet, reply);
    }
    char packet[64];
    snprintf(packet, sizeof packet, "qXfer:features:read:target.xml:%zx,100", total);
    fake_exchange(packet, "l");
    snprintf(packet, sizeof packet, "qXfer:features:read:target.xml:%zx,100", total + 1);
    fake_exchange(packet, "E22");
    /* Nothing asked for: `l` alone -- gdb refuses an `m` without data. */
    fake_exchange("qXfer:features:read:target.xml:0,0", "l");
    fake_exchange("qXfer:features:read:target.xml:10,0", "l");
    fake_exchange("qXfer:features:read:other.xml:0,100", "E22");
    fake_exchange("qXfer:features:read:target.xml:0", "E22");
    fake_exchange("qXfer:features:read:target.xml:,100", "E22");
    fake_exchange("qXfer:features:read:target.xml:0,100,", "E22");
    fake_exchange("qXfer:features:read:target.xml:ffffffffffffffff,ffffffffffffffff", "E22");
    run_to_link_loss();
    free(reply);
    free(xml);
}

/* ---- monitor commands ---- */

/* gdb sends `monitor <command>`; the stub answers with `O` packets of output and then OK. */
static void expect_monitor(const char *command, const char *const outputs[], size_t n)
{
    char packet[1024];
    int len = snprintf(packet, sizeof packet, "qRcmd,%s", hex_of(command));
    assert_true(len > 0 && (size_t)len < sizeof packet);
    fake_send_packet(packet, (size_t)len);
    for (size_t i = 0; i < n; i++) {
        static char reply[2 * GDB_MONITOR_OUT + 2];
        snprintf(reply, sizeof reply, "O%s", hex_of(outputs[i]));
        if (i == 0)
            fake_expect_ack_reply(reply);
        else
            fake_expect_reply(reply);
        fake_send_raw("+", 1);
    }
    fake_expect_reply("OK");
    fake_send_raw("+", 1);
}

static void expect_monitor_line(const char *command, const char *output)
{
    const char *outputs[] = { output };
    expect_monitor(command, outputs, 1);
}

/* The debugger's own code takes no breakpoint of either kind (mapped memory, so only that refuses it): E01,
 * the machine not asked, nothing planted; its edges are exact; `monitor nobreak` says where it is. */
static void test_no_breakpoint_in_the_debugger_s_own_code(void **state)
{
    (void)state;
    fake_exchange("Z0,ffffffff80002000,1", "E01");
    fake_exchange("Z0,ffffffff80002123,1", "E01");
    fake_exchange("Z0,ffffffff800023ff,1", "E01");
    fake_exchange("Z1,ffffffff80002000,1", "E01");
    fake_exchange("Z1,ffffffff800023ff,1", "E01");
    assert_int_equal(fake_break_insert_calls, 0);
    fake_exchange("Z0,ffffffff80001fff,1", "OK");
    fake_exchange("Z0,ffffffff80002400,1", "OK");
    fake_exchange("Z1,ffffffff80002400,1", "OK");
    /* Removing one that cannot be there is a no-op, as for any address without a breakpoint. */
    fake_exchange("z0,ffffffff80002000,1", "OK");
    expect_monitor_line("nobreak", "no breakpoints in the debugger's own code, 0xffffffff80002000-0xffffffff80002400 "
                                   "(Z answers E01): the stub, the stop/resume path and the trap, NMI and interrupt "
                                   "entry run there\n");
    fake_send_packet("c", 1);
    fake_expect_raw("+", 1);
    assert_int_equal(run(GDB_STOP_ATTACH, 0), GDB_END_CONTINUE);
    SCRIPT_PLAYED();
    assert_false(fake_sw_break_at(HIGH(0x2000)));
    assert_false(fake_hw_break_at(HIGH(0x2000)));
    assert_true(fake_sw_break_at(HIGH(0x1fff)));
    assert_true(fake_sw_break_at(HIGH(0x2400)));
    assert_int_equal(fake_sw_break_count(), 2);
    assert_int_equal(fake_hw_break_count(), 1);
}

static void test_monitor_rdmsr(void **state)
{
    (void)state;
    expect_monitor_line("rdmsr 0x10", "cpu 1 msr 0x10 = 0x00000000000003e9\n");
    expect_monitor_line("rdmsr 16", "cpu 1 msr 0x10 = 0x00000000000003e9\n");
    expect_monitor_line("rdmsr cpu 3 0x10", "cpu 3 msr 0x10 = 0x00000000000003eb\n");
    expect_monitor_line("  rdmsr\tcpu 0   0x38F ", "cpu 0 msr 0x38f = 0x000000070000000f\n");
    fake_exchange("Hg1", "OK");
    expect_monitor_line("rdmsr 0x10", "cpu 0 msr 0x10 = 0x00000000000003e8\n");
    /* A faulting MSR is an error line, not a crash. */
    expect_monitor_line("rdmsr 0xdead", "error: cpu 0 msr 0xdead: rdmsr faulted\n");
    expect_monitor_line("rdmsr cpu 2 0xffffffff", "error: cpu 2 msr 0xffffffff: rdmsr faulted\n");
    expect_monitor_line("rdmsr", "usage: rdmsr [cpu N] MSR\n");
    expect_monitor_line("rdmsr 0x10 0x11", "usage: rdmsr [cpu N] MSR\n");
    expect_monitor_line("rdmsr cpu 1", "usage: rdmsr [cpu N] MSR\n");
    expect_monitor_line("rdmsr cpu 4 0x10", "error: no cpu '4' (there are 4)\n");
    expect_monitor_line("rdmsr cpu x 0x10", "error: no cpu 'x' (there are 4)\n");
    expect_monitor_line("rdmsr cpu", "error: no cpu '' (there are 4)\n");
    expect_monitor_line("rdmsr 0x100000000", "error: bad MSR number '0x100000000'\nusage: rdmsr [cpu N] MSR\n");
    expect_monitor_line("rdmsr 38f", "error: bad MSR number '38f'\nusage: rdmsr [cpu N] MSR\n");
    assert_int_equal(run(GDB_STOP_ATTACH, 1), GDB_END_LINK_LOST);
    SCRIPT_PLAYED();
}

static void test_monitor_wrmsr(void **state)
{
    (void)state;
    expect_monitor_line("wrmsr cpu 2 0x38f 0x1", "cpu 2 msr 0x38f <- 0x0000000000000001\n");
    expect_monitor_line("wrmsr 0x10 12345", "cpu 0 msr 0x10 <- 0x0000000000003039\n");
    expect_monitor_line("wrmsr 0xc0de 1", "error: cpu 0 msr 0xc0de: wrmsr faulted\n");
    expect_monitor_line("wrmsr 0x38f", "usage: wrmsr [cpu N] MSR VALUE\n");
    expect_monitor_line("wrmsr 0x38f 1 2", "usage: wrmsr [cpu N] MSR VALUE\n");
    expect_monitor_line("wrmsr 0x38f -1", "error: bad value '-1'\nusage: wrmsr [cpu N] MSR VALUE\n");
    expect_monitor_line("wrmsr 0x38f 0x10000000000000000",
                        "error: bad value '0x10000000000000000'\nusage: wrmsr [cpu N] MSR VALUE\n");
    run_to_link_loss();
    assert_int_equal(fake_msr_value(2, FAKE_MSR_B), 1);
    assert_int_equal(fake_msr_value(1, FAKE_MSR_B), 0x70000000full);
    assert_int_equal(fake_msr_value(0, FAKE_MSR_A), 12345);
    assert_int_equal(fake_msr_value(0, FAKE_MSR_B), 0x70000000full);
}

static void test_monitor_pmu_in_several_packets(void **state)
{
    (void)state;
    /* More than one O packet's worth, delivered by the target in small pieces. */
    static char text[3000];
    size_t at = 0;
    for (unsigned line = 0; at + 80 < sizeof text; line++)
        at += (size_t)snprintf(text + at, sizeof text - at, "cpu %u: armed=%u ctr=0x%012x status=0x%x lvt=0x%x\n",
                               line % 4, line % 2, line * 0x1234567u, line, 0x400 | line);
    fake_pmu_text = text;
    fake_pmu_piece = 37;
    static char parts[3][GDB_MONITOR_OUT + 1];
    const char *outputs[3];
    size_t n = 0;
    for (size_t off = 0; off < at; off += GDB_MONITOR_OUT) {
        snprintf(parts[n], sizeof parts[n], "%.*s", GDB_MONITOR_OUT, text + off);
        outputs[n] = parts[n];
        n++;
    }
    assert_int_equal(n, 3);
    expect_monitor("pmu", outputs, n);
    expect_monitor_line("pmu now", "usage: pmu\n");
    run_to_link_loss();
}

static void test_monitor_help_unknown_and_malformed(void **state)
{
    (void)state;
    /* The help text is one O packet naming every command (gdb then vanishes before acknowledging it). */
    fake_send_packet("qRcmd,68656c70", 14);
    assert_int_equal(run(GDB_STOP_ATTACH, 0), GDB_END_LINK_LOST);
    size_t len;
    const char *out = fake_link_output(&len);
    assert_true(len > 4 && memcmp(out, "+$O", 3) == 0);
    const char *end = memchr(out, '#', len);
    assert_non_null(end);
    static char help[2048];
    size_t hex_len = (size_t)(end - (out + 3));
    assert_true(hex_len % 2 == 0 && hex_len / 2 < sizeof help);
    assert_true(hex_decode(help, out + 3, hex_len / 2));
    help[hex_len / 2] = '\0';
    assert_non_null(strstr(help, "help"));
    assert_non_null(strstr(help, "rdmsr [cpu N] MSR"));
    assert_non_null(strstr(help, "wrmsr [cpu N] MSR VALUE"));
    assert_non_null(strstr(help, "pmu"));

    fake_link_reset();
    expect_monitor_line("frob 1", "error: unknown command 'frob'; try 'monitor help'\n");
    expect_monitor_line("a b c d e f g h i j k l m n o p q", "error: too many words\n");
    char longer[GDB_MONITOR_LINE + 2];
    memset(longer, 'r', sizeof longer - 1);
    longer[sizeof longer - 1] = '\0';
    expect_monitor_line(longer, "error: command longer than 256 characters\n");
    fake_exchange("qRcmd,6", "E22");
    fake_exchange("qRcmd,7a7", "E22");
    fake_exchange("qRcmd,zz", "E22");
    run_to_link_loss();
}

static void test_monitor_empty_line_is_help(void **state)
{
    (void)state;
    fake_send_packet("qRcmd,", 6);
    assert_int_equal(run(GDB_STOP_ATTACH, 0), GDB_END_LINK_LOST);
    size_t len;
    const char *out = fake_link_output(&len);
    assert_true(len > 3 && memcmp(out, "+$O", 3) == 0);
}

static void test_link_lost_during_monitor_output(void **state)
{
    (void)state;
    static char text[2500];
    memset(text, 'p', sizeof text - 1);
    text[sizeof text - 1] = '\0';
    fake_pmu_text = text;
    char packet[64];
    snprintf(packet, sizeof packet, "qRcmd,%s", hex_of("pmu"));
    fake_send_packet(packet, strlen(packet));
    /* gdb takes the first O packet and vanishes. */
    static char first[2 * GDB_MONITOR_OUT + 2];
    static char chunk[GDB_MONITOR_OUT + 1];
    memset(chunk, 'p', GDB_MONITOR_OUT);
    snprintf(first, sizeof first, "O%s", hex_of(chunk));
    fake_expect_ack_reply(first);
    fake_send_raw("+", 1);
    assert_int_equal(run(GDB_STOP_ATTACH, 0), GDB_END_LINK_LOST);
    /* The second O packet went out unanswered; the session ended there. */
    const char *mismatch = fake_link_finish();
    assert_non_null(mismatch);
    assert_non_null(strstr(mismatch, "unexpected \"$O70707070"));
    assert_int_equal(fake_resume_calls, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_bad_checksum_is_refused_then_retransmission_answered, setup, teardown),
        cmocka_unit_test_setup_teardown(test_nak_of_a_reply_retransmits_it, setup, teardown),
        cmocka_unit_test_setup_teardown(test_lost_ack_then_next_packet, setup, teardown),
        cmocka_unit_test_setup_teardown(test_junk_between_packets_is_ignored, setup, teardown),
        cmocka_unit_test_setup_teardown(test_packet_longer_than_advertised, setup, teardown),
        cmocka_unit_test_setup_teardown(test_empty_packet_and_unknown_commands, setup, teardown),
        cmocka_unit_test_setup_teardown(test_disconnect_mid_packet_ends_the_session, setup, teardown),
        cmocka_unit_test_setup_teardown(test_disconnect_waiting_for_an_ack, setup, teardown),
        cmocka_unit_test_setup_teardown(test_disconnect_in_checksum, setup, teardown),
        cmocka_unit_test_setup_teardown(test_question_mark_reports_the_stop, setup, teardown),
        cmocka_unit_test_setup_teardown(test_swbreak_and_hwbreak_once_gdb_supports_them, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stop_reply_sent_when_gdb_waits_for_it, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_stop_reply_to_a_new_debugger, setup, teardown),
        cmocka_unit_test_setup_teardown(test_supported_and_attached, setup, teardown),
        cmocka_unit_test_setup_teardown(test_supported_forgets_breakpoints_of_a_previous_debugger, setup, teardown),
        cmocka_unit_test_setup_teardown(test_threads_are_cpus, setup, teardown),
        cmocka_unit_test_setup_teardown(test_select_thread, setup, teardown),
        cmocka_unit_test_setup_teardown(test_g_reads_every_register_of_every_cpu, setup, teardown),
        cmocka_unit_test_setup_teardown(test_G_writes_every_register_and_g_reads_it_back, setup, teardown),
        cmocka_unit_test_setup_teardown(test_p_and_P_round_trip_every_register, setup, teardown),
        cmocka_unit_test_setup_teardown(test_register_failures, setup, teardown),
        cmocka_unit_test_setup_teardown(test_G_malformed_or_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_read_memory, setup, teardown),
        cmocka_unit_test_setup_teardown(test_read_memory_refusals, setup, teardown),
        cmocka_unit_test_setup_teardown(test_write_memory_hex, setup, teardown),
        cmocka_unit_test_setup_teardown(test_write_memory_largest_packet, setup, teardown),
        cmocka_unit_test_setup_teardown(test_write_memory_binary, setup, teardown),
        cmocka_unit_test_setup_teardown(test_software_breakpoints, setup, teardown),
        cmocka_unit_test_setup_teardown(test_software_breakpoints_stay_across_a_continue, setup, teardown),
        cmocka_unit_test_setup_teardown(test_hardware_breakpoints, setup, teardown),
        cmocka_unit_test_setup_teardown(test_watchpoints, setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_watchpoint_stop_reports_its_address, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_breakpoint_in_the_debugger_s_own_code, setup, teardown),
        cmocka_unit_test_setup_teardown(test_breakpoint_table_full, setup, teardown),
        cmocka_unit_test_setup_teardown(test_memory_under_a_breakpoint, setup, teardown),
        cmocka_unit_test_setup_teardown(test_continue_and_step, setup, teardown),
        cmocka_unit_test_setup_teardown(test_continue_at_an_address, setup, teardown),
        cmocka_unit_test_setup_teardown(test_malformed_resume_packets, setup, teardown),
        cmocka_unit_test_setup_teardown(test_vcont, setup, teardown),
        cmocka_unit_test_setup_teardown(test_vcont_refusals, setup, teardown),
        cmocka_unit_test_setup_teardown(test_detach, setup, teardown),
        cmocka_unit_test_setup_teardown(test_kill, setup, teardown),
        cmocka_unit_test_setup_teardown(test_target_xml_whole_and_in_parts, setup, teardown),
        cmocka_unit_test_setup_teardown(test_monitor_rdmsr, setup, teardown),
        cmocka_unit_test_setup_teardown(test_monitor_wrmsr, setup, teardown),
        cmocka_unit_test_setup_teardown(test_monitor_pmu_in_several_packets, setup, teardown),
        cmocka_unit_test_setup_teardown(test_monitor_help_unknown_and_malformed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_monitor_empty_line_is_help, setup, teardown),
        cmocka_unit_test_setup_teardown(test_link_lost_during_monitor_output, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
