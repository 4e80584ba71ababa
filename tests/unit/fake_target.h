/* tests/unit/fake_target.h: a machine for the gdb stub to debug on the host (tests/unit/fake_target.c) -- four
 * CPUs with register files and MSRs, a sparse memory map with holes, breakpoint tables, a PMU report -- and
 * a byte transport that plays a script of gdb's side of the conversation and checks the stub's side. */
#ifndef TESTS_UNIT_FAKE_TARGET_H
#define TESTS_UNIT_FAKE_TARGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gdbstub/target.h"

#define FAKE_CPUS 4

/* ---- the machine ---- */

/* Mapped memory: [FAKE_LOW_BASE, +FAKE_LOW_SIZE) and [FAKE_HIGH_BASE, +FAKE_HIGH_SIZE); everything else,
 * including the canonical hole and the gap just above each region, is unmapped. After a reset byte i of a
 * region holds fake_memory_pattern(i). */
#define FAKE_LOW_BASE 0x1000ull
#define FAKE_LOW_SIZE 0x2000ull
#define FAKE_HIGH_BASE 0xffffffff80000000ull
#define FAKE_HIGH_SIZE 0x3000ull
/* A third region larger than any packet's worth of memory (GDB_PACKET_SIZE / 2): reads that a packet cuts. */
#define FAKE_BIG_BASE 0x100000ull
#define FAKE_BIG_SIZE 0x10000ull
uint8_t fake_memory_pattern(size_t offset);
/* The byte at a mapped address (the test must know it is mapped). */
uint8_t fake_memory_byte(uint64_t addr);

extern uint64_t fake_regs[FAKE_CPUS][GDB_REG_COUNT];
/* A register whose read fails (-1: none), and one whose writes are refused (-1: none). */
extern int fake_unreadable_reg;
extern int fake_readonly_reg;

/* Breakpoints: a software one is the byte FAKE_BREAK_INSN planted in mapped memory (at most FAKE_SW_SLOTS
 * at once); the four debug registers (FAKE_HW_SLOTS) hold what the stub's table (gdbstub/breakpoints.h)
 * puts in each slot. fake_break_insert_calls counts the plants and the hardware address checks. */
#define FAKE_SW_SLOTS 128
#define FAKE_HW_SLOTS 4
#define FAKE_BREAK_INSN 0xCC
/* The debugger's own code (target->debugger_code): mapped, so only that refuses breakpoints there. */
#define FAKE_DEBUGGER_START (FAKE_HIGH_BASE + 0x2000ull)
#define FAKE_DEBUGGER_END (FAKE_HIGH_BASE + 0x2400ull)
/* The debugger's own data, where no watchpoint goes. */
#define FAKE_DEBUGGER_DATA_START (FAKE_HIGH_BASE + 0x2800ull)
#define FAKE_DEBUGGER_DATA_END (FAKE_HIGH_BASE + 0x2900ull)
bool fake_sw_break_at(uint64_t addr);
bool fake_hw_break_at(uint64_t addr);
unsigned fake_sw_break_count(void);
unsigned fake_hw_break_count(void);
extern unsigned fake_break_insert_calls;

/* MSRs: FAKE_MSR_A (0x10) and FAKE_MSR_B (0x38f) exist on every CPU, readable and writable; every other
 * number faults. After a reset MSR A of cpu N holds 1000 + N, MSR B holds 0x70000000f. */
#define FAKE_MSR_A 0x10u
#define FAKE_MSR_B 0x38fu
uint64_t fake_msr_value(unsigned cpu, uint32_t msr);

/* resume() and poweroff() calls, the arguments of the last resume (its cpu, whether it steps), and how many bytes
 * the stub had sent on the link when poweroff() was called (what gdb was shown before the power went). */
extern unsigned fake_resume_calls;
extern int fake_resume_step_cpu;
extern bool fake_resume_step;
extern bool fake_resume_others_stay;
extern unsigned fake_poweroff_calls;
extern size_t fake_poweroff_sent;

/* pmu_report writes fake_pmu_text in pieces of fake_pmu_piece characters. */
extern const char *fake_pmu_text;
extern size_t fake_pmu_piece;

extern const struct gdb_target fake_target;
void fake_target_reset(void);
/* The same as a cmocka fixture (setup or teardown). */
int fake_target_fixture(void **state);

/* ---- the transport ---- */

/* The script is a list of steps, played as the stub reads: bytes gdb sends, and the bytes the stub must
 * have written by the time it next reads (or by fake_link_finish). When the script is used up the link
 * is lost: getc returns -1 from then on. */
void fake_link_reset(void);
/* The same as a cmocka fixture (setup or teardown). */
int fake_link_fixture(void **state);
/* gdb sends raw bytes. */
void fake_send_raw(const void *bytes, size_t len);
/* gdb sends $payload#checksum. */
void fake_send_packet(const void *payload, size_t len);
/* The stub must have written exactly these bytes since the last check. */
void fake_expect_raw(const void *bytes, size_t len);
/* The stub must have written `+` (its ack) and then $reply#checksum. */
void fake_expect_ack_reply(const char *reply);
/* The stub must have written $reply#checksum (no ack before it). */
void fake_expect_reply(const char *reply);

/* The usual exchange: gdb sends the packet, the stub acknowledges it and replies, gdb acknowledges that. */
void fake_exchange(const char *packet, const char *reply);

/* Plays the vCont packets the stub must refuse on FAKE_CPUS CPUs through exchange (the fixture's own exchange of
 * a packet and its reply): E22 for a malformed one or one asking what the stub does not offer, E03 for a thread
 * there is not. */
void refuse_vconts(void (*exchange)(const char *packet, const char *reply));

extern const struct gdb_transport fake_transport;

/* Checks the output written after the last read against what remains of the script, and that the whole
 * script was played. Returns NULL when all matched, or a description of the first mismatch. */
const char *fake_link_finish(void);
/* Fails the (cmocka) test unless the link played the script to its end. */
#define SCRIPT_PLAYED()                              \
    do {                                             \
        const char *mismatch_ = fake_link_finish();  \
        if (mismatch_ != NULL)                       \
            fail_msg("%s", mismatch_);               \
    } while (0)
/* Everything the stub wrote, for tests that look at it themselves. */
const char *fake_link_output(size_t *len);

/* Frames a payload: $payload#cs, NUL-terminated, in a buffer the caller frees. */
char *fake_frame(const void *payload, size_t len, size_t *framed_len);

#endif
