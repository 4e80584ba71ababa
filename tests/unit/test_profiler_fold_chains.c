/* tests/unit/test_profiler_fold_chains.c: how the profiler's fold (kernel/profiler/fold.c) turns stacks into
 * report lines (kernel/profiler/report.c), asserting their exact text over synthetic rings and symbols: the leaf
 * by symbol with its offset span, unresolved leaves and callers by exact address, chains of different depth,
 * ordering with stable ties, percentages, and the "more chains" and 128-chain limit lines. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "fake_hal.h"
#include "kernel/heap.h"
#include "kernel/labels.h"
#include "kernel/profiler/raw.h"
#include "kernel/profiler/report.h"
#include "kernel/lib/sink.h"
#include "kernel/symbols.h"
#include "profiler_fold_fixture.h"
#include "unit_main.h"

/* ---- the leaf ---------------------------------------------------------------------------------------- */

static void test_leaf_folds_by_symbol_with_span(void **state)
{
    (void)state;
    PUSH(0, 1, MEMCPY + 0x20, COPY + 0x44, RECEIVE + 0x1b2);
    PUSH(0, 1, MEMCPY + 0x3e, COPY + 0x44, RECEIVE + 0x1b2);
    PUSH(0, 1, MEMCPY + 0x1a, COPY + 0x44, RECEIVE + 0x1b2);
    assert_string_equal(report(8),
                        TICK_RUN_HEADER(3, 1, 0)
                        "100.0% 3 MemCpy+0x1a..0x3e\n"
                        "        <- NetFrame::Copy+0x44\n"
                        "        <- VirtioNet::Receive+0x1b2\n");
}

static void test_leaf_on_one_offset_has_no_span(void **state)
{
    (void)state;
    PUSH_N(4, 0, 1, SPIN + 0x1a, MAIN + 0x10);
    assert_string_equal(report(8),
                        TICK_RUN_HEADER(4, 1, 0)
                        "100.0% 4 Spin+0x1a\n"
                        "        <- Main+0x10\n");
}

static void test_leaf_at_symbol_start_and_without_callers(void **state)
{
    (void)state;
    PUSH(0, 1, SPIN);
    assert_string_equal(report(8),
                        TICK_RUN_HEADER(1, 1, 0)
                        "100.0% 1 Spin+0x0\n");
}

static void test_unresolved_leaf_folds_by_exact_address(void **state)
{
    (void)state;
    /* Outside text, and inside text but in the gap between symbols: raw, and never merged by symbol. */
    PUSH_N(2, 0, 1, 0xffffffff80001234u, MAIN + 0x20);
    PUSH(0, 1, 0xffffffff80001238u, MAIN + 0x20);
    PUSH(0, 1, 0x1900, MAIN + 0x20);
    assert_string_equal(report(8),
                        TICK_RUN_HEADER(4, 1, 0)
                        "50.0% 2 0xffffffff80001234\n"
                        "        <- Main+0x20\n"
                        "25.0% 1 0xffffffff80001238\n"
                        "        <- Main+0x20\n"
                        "25.0% 1 0x1900\n"
                        "        <- Main+0x20\n");
}

/* ---- callers ----------------------------------------------------------------------------------------- */

static void test_callers_fold_by_exact_address(void **state)
{
    (void)state;
    /* Two call sites of NetFrame::Copy (+0x44 and +0x80) are two paths: two chains, though every function
     * on them is the same. */
    PUSH_N(3, 0, 1, MEMCPY + 0x10, COPY + 0x44, RECEIVE + 0x1b2);
    PUSH_N(2, 0, 1, MEMCPY + 0x10, COPY + 0x80, RECEIVE + 0x1b2);
    PUSH(0, 1, MEMCPY + 0x12, COPY + 0x44, RECEIVE + 0x1b2);
    assert_string_equal(report(8),
                        TICK_RUN_HEADER(6, 1, 0)
                        "66.7% 4 MemCpy+0x10..0x12\n"
                        "        <- NetFrame::Copy+0x44\n"
                        "        <- VirtioNet::Receive+0x1b2\n"
                        "33.3% 2 MemCpy+0x10\n"
                        "        <- NetFrame::Copy+0x80\n"
                        "        <- VirtioNet::Receive+0x1b2\n");
}

static void test_chains_of_different_depth_are_different(void **state)
{
    (void)state;
    PUSH(0, 1, MEMCPY + 0x10, COPY + 0x44);
    PUSH(0, 1, MEMCPY + 0x10, COPY + 0x44, RECEIVE + 0x1b2);
    assert_string_equal(report(8),
                        TICK_RUN_HEADER(2, 1, 0)
                        "50.0% 1 MemCpy+0x10\n"
                        "        <- NetFrame::Copy+0x44\n"
                        "50.0% 1 MemCpy+0x10\n"
                        "        <- NetFrame::Copy+0x44\n"
                        "        <- VirtioNet::Receive+0x1b2\n");
}

static void test_unresolved_caller_printed_raw(void **state)
{
    (void)state;
    PUSH(0, 1, SPIN + 4, 0xffffffff8badf00du, 0x1950, MAIN + 0x1ff);
    assert_string_equal(report(8),
                        TICK_RUN_HEADER(1, 1, 0)
                        "100.0% 1 Spin+0x4\n"
                        "        <- 0xffffffff8badf00d\n"
                        "        <- 0x1950\n"
                        "        <- Main+0x1ff\n");
}

static void test_caller_after_a_final_call_belongs_to_the_caller(void **state)
{
    (void)state;
    /* MemCpy is [0x1000, 0x1080): a return address of 0x1080 follows a call that ends MemCpy (to a function
     * that does not return), so it is MemCpy's, not the gap's. 0x1600 is where Spin starts, but the byte
     * before it is in the gap after VirtioNet::Receive (which ends at 0x1500), so no call there can have
     * returned to it: it stays raw rather than being blamed on Spin. */
    PUSH(0, 1, SPIN + 4, MEMCPY + 0x80, 0x1600, MAIN + 1);
    assert_string_equal(report(8),
                        TICK_RUN_HEADER(1, 1, 0)
                        "100.0% 1 Spin+0x4\n"
                        "        <- MemCpy+0x80\n"
                        "        <- 0x1600\n"
                        "        <- Main+0x1\n");
}

static void test_eight_frame_chain(void **state)
{
    (void)state;
    PUSH(0, 1, MEMCPY + 1, COPY + 1, COPY + 2, COPY + 3, RECEIVE + 4, RECEIVE + 5, MAIN + 6, MAIN + 7);
    assert_string_equal(report(8),
                        TICK_RUN_HEADER(1, 1, 0)
                        "100.0% 1 MemCpy+0x1\n"
                        "        <- NetFrame::Copy+0x1\n"
                        "        <- NetFrame::Copy+0x2\n"
                        "        <- NetFrame::Copy+0x3\n"
                        "        <- VirtioNet::Receive+0x4\n"
                        "        <- VirtioNet::Receive+0x5\n"
                        "        <- Main+0x6\n"
                        "        <- Main+0x7\n");
}

/* ---- ordering, percentages, limits ------------------------------------------------------------------- */

static void test_hottest_first_ties_in_first_seen_order(void **state)
{
    (void)state;
    /* First seen: A, B, C, D. Counts: A 2, B 5, C 2, D 5 -> B, D, A, C. Interleaved, so "first seen" is not
     * "most recently counted". */
    for (int i = 0; i < 5; i++) {
        if (i < 2)
            PUSH(0, 1, SPIN + 1, MAIN + 0xa);
        PUSH(0, 1, SPIN + 1, MAIN + 0xb);
        if (i < 2)
            PUSH(0, 1, SPIN + 1, MAIN + 0xc);
        PUSH(0, 1, SPIN + 1, MAIN + 0xd);
    }
    assert_string_equal(report(8),
                        TICK_RUN_HEADER(14, 1, 0)
                        "35.7% 5 Spin+0x1\n"
                        "        <- Main+0xb\n"
                        "35.7% 5 Spin+0x1\n"
                        "        <- Main+0xd\n"
                        "14.3% 2 Spin+0x1\n"
                        "        <- Main+0xa\n"
                        "14.3% 2 Spin+0x1\n"
                        "        <- Main+0xc\n");
}

static void test_more_chains_line(void **state)
{
    (void)state;
    PUSH_N(5, 0, 1, SPIN + 1, MAIN + 0xa);
    PUSH_N(3, 0, 1, SPIN + 1, MAIN + 0xb);
    PUSH_N(1, 0, 1, SPIN + 1, MAIN + 0xc);
    PUSH_N(3, 0, 1, SPIN + 1, MAIN + 0xd);
    assert_string_equal(report(2),
                        TICK_RUN_HEADER(12, 1, 0)
                        "41.7% 5 Spin+0x1\n"
                        "        <- Main+0xa\n"
                        "25.0% 3 Spin+0x1\n"
                        "        <- Main+0xb\n"
                        "... 2 more chains, 4 samples (33.3%)\n");
    /* Exactly as many chains as asked for: no such line. */
    new_run(8, "tick");
    PUSH(0, 1, SPIN + 1, MAIN + 0xa);
    assert_string_equal(report(1),
                        TICK_RUN_HEADER(1, 1, 0)
                        "100.0% 1 Spin+0x1\n"
                        "        <- Main+0xa\n");
}

/* The percentage of one chain of count out of total, from the report's leaf line. */
static void expect_percent(unsigned count, unsigned total, const char *expected_line)
{
    new_run(9, "tick");
    for (unsigned i = 0; i < count; i++)
        PUSH(i % NCPUS, 1, SPIN + 1);
    for (unsigned i = count; i < total; i++)
        PUSH(i % NCPUS, 1, MAIN + 1);
    const char *out = report(1);
    const char *third = strchr(strchr(out, '\n') + 1, '\n') + 1;
    assert_memory_equal(third, expected_line, strlen(expected_line));
}

static void test_percentages_round_half_up_to_one_decimal(void **state)
{
    (void)state;
    expect_percent(2, 3, "66.7% 2 Spin+0x1\n");
    expect_percent(3, 4, "75.0% 3 Spin+0x1\n");
    expect_percent(15, 16, "93.8% 15 Spin+0x1\n");   /* 93.75 rounds up */
    expect_percent(9, 16, "56.3% 9 Spin+0x1\n");     /* 56.25 rounds up */
    expect_percent(5, 8, "62.5% 5 Spin+0x1\n");
    expect_percent(999, 1000, "99.9% 999 Spin+0x1\n");
    expect_percent(1000, 1000, "100.0% 1000 Spin+0x1\n");
    expect_percent(1000, 1001, "99.9% 1000 Spin+0x1\n");  /* 99.90 */
    expect_percent(1019, 1020, "99.9% 1019 Spin+0x1\n");  /* 99.902 */
    expect_percent(600, 1001, "59.9% 600 Spin+0x1\n");    /* 59.94 rounds down */
}

static void test_small_percentages(void **state)
{
    (void)state;
    new_run(9, "tick");
    PUSH_N(1000, 0, 1, MAIN + 1);
    PUSH(1, 1, SPIN + 1);
    PUSH_N(10, 1, 1, MEMCPY + 1);
    /* 1/1011 = 0.099% -> 0.1%; 10/1011 = 0.989% -> 1.0%. */
    assert_string_equal(report(8),
                        TICK_RUN_HEADER(1011, 2, 0)
                        "98.9% 1000 Main+0x1\n"
                        "1.0% 10 MemCpy+0x1\n"
                        "0.1% 1 Spin+0x1\n");
    new_run(10, "tick");
    PUSH_N(1000, 0, 1, MAIN + 1);
    PUSH_N(1000, 1, 1, MAIN + 2);
    PUSH(2, 1, SPIN + 1);
    /* 1/2001 = 0.04998% -> 0.0% */
    assert_string_equal(report(8),
                        TICK_RUN_HEADER(2001, 3, 0)
                        "100.0% 2000 Main+0x1..0x2\n"
                        "0.0% 1 Spin+0x1\n");
}

static void test_table_limit_and_its_line(void **state)
{
    (void)state;
    /* 130 distinct chains, one sample each, then the first again: the table holds 128 chains, and the last
     * two to be folded find it full. Rings are folded CPU by CPU, so that is the order "first seen" means:
     * CPU 0 holds chains 0, 4, 8, ... and CPU 3 holds the last two folded, 123 and 127. */
    for (unsigned i = 0; i < 130; i++)
        PUSH(i % NCPUS, 1, MEMCPY + 8, FILLER + 1 + 4 * i);
    PUSH(0, 1, MEMCPY + 8, FILLER + 1);
    const char *out = report(3);
    assert_string_equal(out,
                        TICK_RUN_HEADER(131, 4, 0)
                        "1.5% 2 MemCpy+0x8\n"
                        "        <- Filler+0x1\n"
                        "0.8% 1 MemCpy+0x8\n"
                        "        <- Filler+0x11\n"
                        "0.8% 1 MemCpy+0x8\n"
                        "        <- Filler+0x21\n"
                        "... 125 more chains, 125 samples (95.4%)\n"
                        "more than 128 distinct chains: 2 samples in chains not shown\n");
}

static void test_table_limit_more_samples_of_untracked_chains(void **state)
{
    (void)state;
    /* A chain seen only after the table filled stays untracked however often it recurs. */
    for (unsigned i = 0; i < PROFILE_CHAIN_TABLE; i++)
        PUSH(i % 2, 1, SPIN + 2, FILLER + 1 + 8 * i);
    PUSH_N(40, 3, 1, MAIN + 3);
    assert_string_equal(report(1),
                        TICK_RUN_HEADER(168, 3, 0)
                        "0.6% 1 Spin+0x2\n"
                        "        <- Filler+0x1\n"
                        "... 127 more chains, 127 samples (75.6%)\n"
                        "more than 128 distinct chains: 40 samples in chains not shown\n");
}

static void test_table_exactly_full_has_no_limit_line(void **state)
{
    (void)state;
    for (unsigned i = 0; i < PROFILE_CHAIN_TABLE; i++)
        PUSH(i % NCPUS, 1, SPIN + 2, FILLER + 1 + 8 * i);
    const char *out = report(PROFILE_CHAIN_TABLE);
    assert_null(strstr(out, "more"));
    /* Every chain shown: 128 leaf lines and 128 caller lines after the header. */
    int lines = 0;
    for (const char *p = out; *p; p++)
        lines += *p == '\n';
    assert_int_equal(lines, 2 + 2 * PROFILE_CHAIN_TABLE);
}

UNIT_MAIN_EACH(setup, NULL, NULL, NULL,
               test_leaf_folds_by_symbol_with_span, test_leaf_on_one_offset_has_no_span,
               test_leaf_at_symbol_start_and_without_callers, test_unresolved_leaf_folds_by_exact_address,
               test_callers_fold_by_exact_address, test_chains_of_different_depth_are_different,
               test_unresolved_caller_printed_raw, test_caller_after_a_final_call_belongs_to_the_caller,
               test_eight_frame_chain, test_hottest_first_ties_in_first_seen_order, test_more_chains_line,
               test_percentages_round_half_up_to_one_decimal, test_small_percentages, test_table_limit_and_its_line,
               test_table_limit_more_samples_of_untracked_chains, test_table_exactly_full_has_no_limit_line)
