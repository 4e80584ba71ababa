/* tests/unit/gdbstub_fixture.c: the setup, sessions and hex helpers the stub's session tests share (see
 * gdbstub_fixture.h). */
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
#include "gdbstub/packet.h"
#include "gdbstub/stub.h"
#include "gdbstub_fixture.h"

int setup(void **state)
{
    (void)state;
    fake_target_reset();
    fake_link_reset();
    gdb_stub_reset();
    return 0;
}

int teardown(void **state)
{
    return fake_link_fixture(state);
}

enum gdb_session_end run(enum stop_reason reason, unsigned cpu)
{
    return gdb_stub_session(&fake_target, &fake_transport, reason, cpu);
}

void play(enum stop_reason reason, unsigned cpu, enum gdb_session_end end)
{
    assert_int_equal(run(reason, cpu), end);
    SCRIPT_PLAYED();
}

/* A session that answers the script and then loses the link, as most tests end. */
void run_to_link_loss(void)
{
    play(GDB_STOP_ATTACH, 0, GDB_END_LINK_LOST);
}

void play_then_continue(enum stop_reason reason, unsigned cpu)
{
    fake_send_packet("c", 1);
    fake_expect_raw("+", 1);
    play(reason, cpu, GDB_END_CONTINUE);
}

/* Plays the script so far in a session that gdb ends with `c`, which keeps the breakpoints in. */
void continue_session(void)
{
    play_then_continue(GDB_STOP_ATTACH, 0);
    fake_link_reset();
}

void expect_resumed_clean(void)
{
    assert_int_equal(fake_sw_break_count(), 0);
    assert_int_equal(fake_hw_break_count(), 0);
    assert_int_equal(fake_resume_calls, 1);
    assert_int_equal(fake_resume_step_cpu, -1);
    assert_false(fake_resume_others_stay);
}

static char scratch[4 * GDB_PACKET_SIZE];

const char *hex_of(const char *text)
{
    static char buf[4096];
    size_t len = strlen(text);
    assert_true(2 * len < sizeof buf);
    hex_encode(buf, text, len);
    buf[2 * len] = '\0';
    return buf;
}

/* The hex of the fake's memory at [addr, addr + len). */
const char *memory_hex(uint64_t addr, size_t len)
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
