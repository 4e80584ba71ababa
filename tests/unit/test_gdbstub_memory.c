/* tests/unit/test_gdbstub_memory.c: memory and breakpoints through a gdb stub session (gdbstub/commands.c,
 * breakpoints.c) -- m reads and their refusals (unmapped, non-canonical, malformed), M and X writes up to the
 * largest packet, software breakpoints (kept across a continue), hardware breakpoints, watchpoints and the
 * address a watchpoint stop reports, a full breakpoint table, and memory under a breakpoint as gdb sees it.
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
    play_then_continue(GDB_STOP_ATTACH, 0);
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
    play_then_continue(GDB_STOP_ATTACH, 0);
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
    play_then_continue(GDB_STOP_ATTACH, 0);
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
    play(GDB_STOP_WATCH, 1, GDB_END_LINK_LOST);
    fake_link_reset();
    gdb_break_note_watch_hit(&(struct gdb_hw_slot){ .type = GDB_WATCH_ACCESS, .addr = HIGH(0x10), .len = 8 });
    fake_exchange("?", "T05thread:1;awatch:ffffffff80000010;");
    play(GDB_STOP_WATCH, 0, GDB_END_LINK_LOST);
    /* Another kind of stop says nothing of a watchpoint. */
    fake_link_reset();
    gdb_break_note_watch_hit(0);
    fake_exchange("?", "T05thread:1;");
    play(GDB_STOP_STEP, 0, GDB_END_LINK_LOST);
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
    play(GDB_STOP_ATTACH, 0, GDB_END_DETACH);
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

UNIT_MAIN_EACH(setup, teardown, NULL, NULL,
               test_read_memory, test_read_memory_refusals, test_write_memory_hex, test_write_memory_largest_packet,
               test_write_memory_binary, test_software_breakpoints, test_software_breakpoints_stay_across_a_continue,
               test_hardware_breakpoints, test_watchpoints, test_a_watchpoint_stop_reports_its_address,
               test_breakpoint_table_full, test_memory_under_a_breakpoint)
