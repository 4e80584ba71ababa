/* tests/unit/gdbstub_fixture.h: what the stub's session tests (test_gdbstub_*.c) share over the fake machine and
 * scripted link of tests/unit/fake_target.c: each test writes a script of {packet gdb sends, reply expected},
 * runs a session of gdbstub/stub.c against it and checks the whole script was played. Defined once in
 * gdbstub_fixture.c. */
#ifndef TESTS_UNIT_GDBSTUB_FIXTURE_H
#define TESTS_UNIT_GDBSTUB_FIXTURE_H

#include <stddef.h>
#include <stdint.h>

#include "fake_target.h"
#include "gdbstub/stub.h"

/* An address in the fake machine's high (kernel) mapping. */
#define HIGH(off) (FAKE_HIGH_BASE + (off))

/* cmocka setup and teardown: a fresh machine, link and stub; the link reset after. */
int setup(void **state);
int teardown(void **state);

/* One session of the stub on the fake machine and link, stopped for `reason` on `cpu`. */
enum gdb_session_end run(enum stop_reason reason, unsigned cpu);

/* A session stopped for `reason` on `cpu` that must end as `end` having played the whole script. */
void play(enum stop_reason reason, unsigned cpu, enum gdb_session_end end);
/* A session that answers the script and then loses the link, as most tests end. */
void run_to_link_loss(void);
/* The script so far, then gdb's `c` (acknowledged), in a session stopped for `reason` on `cpu`; the link's
 * output is kept for the test to read. */
void play_then_continue(enum stop_reason reason, unsigned cpu);
/* Plays the script so far in a session that gdb ends with `c`, which keeps the breakpoints in. */
void continue_session(void);

/* The machine was resumed once, whole and running (no CPU stepping, none held), with no breakpoint left. */
void expect_resumed_clean(void);

/* The hex of a string, in a static buffer. */
const char *hex_of(const char *text);
/* The hex of the fake's memory at [addr, addr + len). */
const char *memory_hex(uint64_t addr, size_t len);

#endif
