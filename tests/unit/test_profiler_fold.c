/* tests/unit/test_profiler_fold.c: the profiler's fold and report (kernel/profiler/fold.c, report.c) over synthetic
 * per-CPU rings and a synthetic symbol table, asserting the exact text of every kind of report line: the
 * header, the leaf by symbol with its offset span, callers by exact return address, ordering and stable ties,
 * percentages, raw addresses, the "more chains" and 128-chain lines, filters, stale records, empty reports,
 * and that the chain table is given back to the heap; the label breakdown line and the label filter; and the
 * raw form of a run (kernel/profiler/raw.c's output), parsed back line by line. */
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

/* ---- a heap that counts, and can be made to fail ---------------------------------------------------- */

static int live_allocations;
static bool allocations_fail;

void *kzalloc(size_t size)
{
    if (allocations_fail)
        return NULL;
    live_allocations++;
    return calloc(1, size);
}

void kfree(void *ptr)
{
    if (ptr) {
        live_allocations--;
        free(ptr);
    }
}

/* ---- a symbol table ---------------------------------------------------------------------------------- */

/* Text is [0x1000, 0x10000); 0x1900 .. 0x2000 is a gap inside text that resolves to nothing. */
static const char names[] = "MemCpy\0NetFrame::Copy\0VirtioNet::Receive\0Spin\0Main\0Filler";
enum { N_MEMCPY = 0, N_COPY = 7, N_RECEIVE = 22, N_SPIN = 41, N_MAIN = 46, N_FILLER = 51 };
static const struct ksym syms[] = {
    { 0x1000, 0x80, N_MEMCPY },
    { 0x1100, 0x100, N_COPY },
    { 0x1200, 0x300, N_RECEIVE },
    { 0x1600, 0x40, N_SPIN },
    { 0x1700, 0x200, N_MAIN },
    { 0x2000, 0x8000, N_FILLER },
};
static const struct symtab tab = { syms, 6, names, 0x1000, 0x10000 };

#define MEMCPY 0x1000u
#define COPY 0x1100u
#define RECEIVE 0x1200u
#define SPIN 0x1600u
#define MAIN 0x1700u
#define FILLER 0x2000u

/* ---- synthetic runs ---------------------------------------------------------------------------------- */

#define NCPUS 4
#define CAP PROFILE_RING_RECORDS
static struct profile_record storage[NCPUS][CAP];
static struct profile_ring rings[NCPUS];
static struct profile_run run;
static char text[1 << 18]; /* a raw report of a full ring and more */
static const struct label_set *next_labels; /* the label set push_record gives its records */

static void new_run(uint32_t number, const char *source)
{
    for (unsigned i = 0; i < NCPUS; i++)
        /* Each ring starts at a different point, two of them just short of the index wrap. */
        profile_ring_init(&rings[i], storage[i], CAP, i & 1 ? UINT32_MAX - 3 * i : 17 * i);
    memset(&run, 0, sizeof run);
    run.rings = rings;
    run.ncpus = NCPUS;
    run.run = number;
    run.source = source;
    run.window_ms = 1000;
    /* A tick run names why it is not on the counter; a counter run states its period. */
    bool tick = strcmp(source, "tick") == 0;
    run.tick_reason = tick ? "a synthetic run" : NULL;
    run.tick_hz = 100;
    run.period_ns = tick ? 10000000 : 1000000;
    run.period_cycles = tick ? 0 : 2000000;
}

static void push_record(unsigned cpu, uint32_t pid, uint32_t number, const uintptr_t *frames, unsigned n)
{
    struct profile_record *rec = profile_ring_reserve(&rings[cpu]);
    if (!rec)
        return; /* full: counted as a drop, like the sampler */
    memset(rec, 0, sizeof *rec);
    rec->pid = pid;
    rec->cpu = (uint16_t)cpu;
    rec->run = number;
    rec->labels = next_labels;
    rec->nframes = (uint16_t)n;
    memcpy(rec->frames, frames, n * sizeof *frames);
    profile_ring_commit(&rings[cpu]);
}

#define FRAMES(...) (const uintptr_t[]){ __VA_ARGS__ }, sizeof((const uintptr_t[]){ __VA_ARGS__ }) / sizeof(uintptr_t)
/* A sample of the current run: PUSH(cpu, pid, leaf, callers...). */
#define PUSH(cpu, pid, ...) push_record((cpu), (pid), run.run, FRAMES(__VA_ARGS__))
#define PUSH_N(times, cpu, pid, ...)                   \
    do {                                               \
        for (int push_i_ = 0; push_i_ < (times); push_i_++) \
            PUSH(cpu, pid, __VA_ARGS__);               \
    } while (0)

/* The header's sample count is the sum of the leaf counts shown, the "... K more chains, M samples" line and
 * the "more than 128 distinct chains: M samples" line; and no more leaf lines than chains asked for. */
static void expect_counts_add_up(const char *out, unsigned chains)
{
    unsigned long long total = 0, sum = 0, n;
    unsigned shown = 0, k;
    const char *line = strchr(out, '\n') + 1;
    assert_int_equal(sscanf(line, "%llu samples on", &total), 1);
    for (line = strchr(line, '\n') + 1; *line; line = strchr(line, '\n') + 1) {
        unsigned whole, tenth;
        if (sscanf(line, "%u.%u%% %llu ", &whole, &tenth, &n) == 3) {
            sum += n;
            shown++;
        } else if (sscanf(line, "... %u more chains, %llu samples", &k, &n) == 2) {
            sum += n;
        } else if (sscanf(line, "more than %u distinct chains: %llu samples", &k, &n) == 2) {
            assert_int_equal(k, PROFILE_CHAIN_TABLE);
            sum += n;
        }
    }
    assert_int_equal(sum, total);
    assert_true(shown <= chains);
}

/* The third line is the per-CPU line, "per cpu: 0:N 1:N/D ...": its samples add up to the header's total and
 * its drops to the header's drops, one entry per CPU in order. It is checked, then cut out, so the tests of
 * the fold compare the rest. */
static void expect_and_cut_per_cpu_line(char *out)
{
    unsigned long long total, dropped;
    char *line = strchr(out, '\n') + 1;
    assert_int_equal(sscanf(line, "%llu samples on %*u cpus, %llu dropped", &total, &dropped), 2);
    line = strchr(line, '\n') + 1;
    assert_memory_equal(line, "per cpu:", 8);
    char *end = strchr(line, '\n');
    unsigned long long sum = 0, drops = 0;
    unsigned expect_cpu = 0;
    for (char *p = line + 8; p < end;) {
        unsigned cpu;
        unsigned long long n, d = 0;
        int used = 0;
        while (*p == ' ')
            p++;
        if (sscanf(p, "%u:%llu%n", &cpu, &n, &used) != 2)
            fail_msg("bad per-CPU entry at: %.20s", p);
        p += used;
        if (*p == '/') {
            assert_int_equal(sscanf(p, "/%llu%n", &d, &used), 1);
            p += used;
        }
        assert_int_equal(cpu, expect_cpu++);
        sum += n;
        drops += d;
    }
    assert_int_equal(expect_cpu, run.ncpus);
    assert_int_equal(sum, total);
    assert_int_equal(drops, dropped);
    memmove(line, end + 1, strlen(end + 1) + 1);
}

static const char *report_filtered(const struct profile_filter *filter, unsigned chains)
{
    struct buffer_sink bs;
    buffer_sink_init(&bs, text, sizeof text);
    assert_int_equal(profile_report(&run, filter, chains, &tab, &bs.sink), 0);
    assert_int_equal(bs.truncated, 0);
    assert_int_equal(live_allocations, 0); /* the chain table went back */
    expect_counts_add_up(text, chains);
    expect_and_cut_per_cpu_line(text);
    return text;
}

static const char *report(unsigned chains)
{
    return report_filtered(NULL, chains);
}

static int setup(void **state)
{
    (void)state;
    live_allocations = 0;
    allocations_fail = false;
    next_labels = NULL;
    new_run(7, "tick");
    return 0;
}

/* ---- the leaf ---------------------------------------------------------------------------------------- */

static void test_leaf_folds_by_symbol_with_span(void **state)
{
    (void)state;
    PUSH(0, 1, MEMCPY + 0x20, COPY + 0x44, RECEIVE + 0x1b2);
    PUSH(0, 1, MEMCPY + 0x3e, COPY + 0x44, RECEIVE + 0x1b2);
    PUSH(0, 1, MEMCPY + 0x1a, COPY + 0x44, RECEIVE + 0x1b2);
    assert_string_equal(report(8),
                        "profiled 1000 ms\n"
                        "3 samples on 1 cpus, 0 dropped, source tick at 100 Hz (a synthetic run)\n"
                        "100.0% 3 MemCpy+0x1a..0x3e\n"
                        "        <- NetFrame::Copy+0x44\n"
                        "        <- VirtioNet::Receive+0x1b2\n");
}

static void test_leaf_on_one_offset_has_no_span(void **state)
{
    (void)state;
    PUSH_N(4, 0, 1, SPIN + 0x1a, MAIN + 0x10);
    assert_string_equal(report(8),
                        "profiled 1000 ms\n"
                        "4 samples on 1 cpus, 0 dropped, source tick at 100 Hz (a synthetic run)\n"
                        "100.0% 4 Spin+0x1a\n"
                        "        <- Main+0x10\n");
}

static void test_leaf_at_symbol_start_and_without_callers(void **state)
{
    (void)state;
    PUSH(0, 1, SPIN);
    assert_string_equal(report(8),
                        "profiled 1000 ms\n"
                        "1 samples on 1 cpus, 0 dropped, source tick at 100 Hz (a synthetic run)\n"
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
                        "profiled 1000 ms\n"
                        "4 samples on 1 cpus, 0 dropped, source tick at 100 Hz (a synthetic run)\n"
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
                        "profiled 1000 ms\n"
                        "6 samples on 1 cpus, 0 dropped, source tick at 100 Hz (a synthetic run)\n"
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
                        "profiled 1000 ms\n"
                        "2 samples on 1 cpus, 0 dropped, source tick at 100 Hz (a synthetic run)\n"
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
                        "profiled 1000 ms\n"
                        "1 samples on 1 cpus, 0 dropped, source tick at 100 Hz (a synthetic run)\n"
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
                        "profiled 1000 ms\n"
                        "1 samples on 1 cpus, 0 dropped, source tick at 100 Hz (a synthetic run)\n"
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
                        "profiled 1000 ms\n"
                        "1 samples on 1 cpus, 0 dropped, source tick at 100 Hz (a synthetic run)\n"
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
                        "profiled 1000 ms\n"
                        "14 samples on 1 cpus, 0 dropped, source tick at 100 Hz (a synthetic run)\n"
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
                        "profiled 1000 ms\n"
                        "12 samples on 1 cpus, 0 dropped, source tick at 100 Hz (a synthetic run)\n"
                        "41.7% 5 Spin+0x1\n"
                        "        <- Main+0xa\n"
                        "25.0% 3 Spin+0x1\n"
                        "        <- Main+0xb\n"
                        "... 2 more chains, 4 samples (33.3%)\n");
    /* Exactly as many chains as asked for: no such line. */
    new_run(8, "tick");
    PUSH(0, 1, SPIN + 1, MAIN + 0xa);
    assert_string_equal(report(1),
                        "profiled 1000 ms\n"
                        "1 samples on 1 cpus, 0 dropped, source tick at 100 Hz (a synthetic run)\n"
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
                        "profiled 1000 ms\n"
                        "1011 samples on 2 cpus, 0 dropped, source tick at 100 Hz (a synthetic run)\n"
                        "98.9% 1000 Main+0x1\n"
                        "1.0% 10 MemCpy+0x1\n"
                        "0.1% 1 Spin+0x1\n");
    new_run(10, "tick");
    PUSH_N(1000, 0, 1, MAIN + 1);
    PUSH_N(1000, 1, 1, MAIN + 2);
    PUSH(2, 1, SPIN + 1);
    /* 1/2001 = 0.04998% -> 0.0% */
    assert_string_equal(report(8),
                        "profiled 1000 ms\n"
                        "2001 samples on 3 cpus, 0 dropped, source tick at 100 Hz (a synthetic run)\n"
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
                        "profiled 1000 ms\n"
                        "131 samples on 4 cpus, 0 dropped, source tick at 100 Hz (a synthetic run)\n"
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
                        "profiled 1000 ms\n"
                        "168 samples on 3 cpus, 0 dropped, source tick at 100 Hz (a synthetic run)\n"
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

/* ---- what is counted ------------------------------------------------------------------------------------ */

static void test_header_counts_cpus_and_drops(void **state)
{
    (void)state;
    /* CPU 0 overfills its ring by 5, CPU 1 by 2; CPU 2 contributes 3; CPU 3 nothing. */
    PUSH_N(CAP + 5, 0, 1, MAIN + 1);
    PUSH_N(CAP + 2, 1, 1, MAIN + 1);
    PUSH_N(3, 2, 1, SPIN + 1);
    assert_string_equal(report(8),
                        "profiled 1000 ms\n"
                        "2051 samples on 3 cpus, 7 dropped, source tick at 100 Hz (a synthetic run)\n"
                        "99.9% 2048 Main+0x1\n"
                        "0.1% 3 Spin+0x1\n");
}

static void test_header_names_window_and_source(void **state)
{
    (void)state;
    new_run(3, "pmu/nmi intel fixed-ctr1");
    run.window_ms = 2003;
    PUSH(1, 1, MAIN + 1);
    assert_string_equal(report(8),
                        "profiled 2003 ms\n"
                        "1 samples on 1 cpus, 0 dropped, source pmu/nmi intel fixed-ctr1 every 2000000 cycles (~1000 Hz)\n"
                        "100.0% 1 Main+0x1\n");
}

static void test_samples_of_other_runs_are_ignored(void **state)
{
    (void)state;
    /* Stragglers: a sample that passed its check in run 6 and committed after run 7 reset the ring. */
    push_record(0, 1, 6, FRAMES(SPIN + 1));
    PUSH(0, 1, MAIN + 1);
    push_record(1, 1, 6, FRAMES(SPIN + 1));
    push_record(0, 1, 8, FRAMES(SPIN + 1));
    assert_string_equal(report(8),
                        "profiled 1000 ms\n"
                        "1 samples on 1 cpus, 0 dropped, source tick at 100 Hz (a synthetic run)\n"
                        "100.0% 1 Main+0x1\n");
}

static void test_pid_filter(void **state)
{
    (void)state;
    PUSH_N(3, 0, 5, SPIN + 1, MAIN + 0x10);
    PUSH_N(4, 1, 6, MEMCPY + 1, MAIN + 0x20);
    PUSH(2, 5, SPIN + 2, MAIN + 0x10);
    PUSH(3, 6, SPIN + 2, MAIN + 0x10);
    struct profile_filter only5 = { .by_pid = true, .pid = 5 };
    assert_string_equal(report_filtered(&only5, 8),
                        "profiled 1000 ms\n"
                        "4 samples on 2 cpus, 0 dropped, source tick at 100 Hz (a synthetic run)\n"
                        "100.0% 4 Spin+0x1..0x2\n"
                        "        <- Main+0x10\n");
}

static void test_filter_for_all(void **state)
{
    (void)state;
    PUSH(0, 5, SPIN + 1);
    PUSH(1, 6, SPIN + 1);
    struct profile_filter all = { .by_pid = false, .pid = 5 };
    assert_string_equal(report_filtered(&all, 8),
                        "profiled 1000 ms\n"
                        "2 samples on 2 cpus, 0 dropped, source tick at 100 Hz (a synthetic run)\n"
                        "100.0% 2 Spin+0x1\n");
}

static void test_report_consumes_the_rings(void **state)
{
    (void)state;
    PUSH(0, 1, SPIN + 1);
    report(8);
    for (unsigned i = 0; i < NCPUS; i++)
        assert_int_equal(profile_ring_count(&rings[i]), 0);
    assert_string_equal(report(8),
                        "profiled 1000 ms\n"
                        "0 samples on 0 cpus, 0 dropped, source tick at 100 Hz (a synthetic run)\n"
                        "no samples: nothing was sampled in the window\n");
}

/* ---- empty reports ----------------------------------------------------------------------------------- */

static void test_empty_report_on_the_tick(void **state)
{
    (void)state;
    assert_string_equal(report(8),
                        "profiled 1000 ms\n"
                        "0 samples on 0 cpus, 0 dropped, source tick at 100 Hz (a synthetic run)\n"
                        "no samples: nothing was sampled in the window\n");
}

static void test_empty_report_on_the_counter(void **state)
{
    (void)state;
    new_run(4, "pmu/nmi amd pmcx076");
    assert_string_equal(report(8),
                        "profiled 1000 ms\n"
                        "0 samples on 0 cpus, 0 dropped, source pmu/nmi amd pmcx076 every 2000000 cycles (~1000 Hz)\n"
                        "no samples: nothing was sampled in the window\n"
                        "idle CPUs contribute nothing on the counter: it counts unhalted cycles\n");
}

static void test_empty_report_for_a_pid(void **state)
{
    (void)state;
    PUSH(0, 5, SPIN + 1);
    struct profile_filter only12 = { .by_pid = true, .pid = 12 };
    assert_string_equal(report_filtered(&only12, 8),
                        "profiled 1000 ms\n"
                        "0 samples on 0 cpus, 0 dropped, source tick at 100 Hz (a synthetic run)\n"
                        "no samples for pid 12: the task may simply have been asleep the whole window\n");
}

static void test_only_stale_samples_is_empty(void **state)
{
    (void)state;
    push_record(0, 1, 6, FRAMES(SPIN + 1));
    assert_string_equal(report(8),
                        "profiled 1000 ms\n"
                        "0 samples on 0 cpus, 0 dropped, source tick at 100 Hz (a synthetic run)\n"
                        "no samples: nothing was sampled in the window\n");
}

static void test_drops_without_samples(void **state)
{
    (void)state;
    /* Every slot of CPU 3 holds a stale record, so this run's samples there were all dropped. */
    for (unsigned i = 0; i < CAP; i++)
        push_record(3, 1, 6, FRAMES(SPIN + 1));
    PUSH_N(2, 3, 1, MAIN + 1);
    assert_string_equal(report(8),
                        "profiled 1000 ms\n"
                        "0 samples on 0 cpus, 2 dropped, source tick at 100 Hz (a synthetic run)\n"
                        "no samples: nothing was sampled in the window\n");
}

/* ---- the heap ---------------------------------------------------------------------------------------- */

static void test_out_of_memory(void **state)
{
    (void)state;
    PUSH(0, 1, SPIN + 1);
    allocations_fail = true;
    struct buffer_sink bs;
    buffer_sink_init(&bs, text, sizeof text);
    assert_int_equal(profile_report(&run, NULL, 8, &tab, &bs.sink), -1);
    assert_string_equal(text, "profile: out of memory\n");
    assert_int_equal(live_allocations, 0);
}

static void test_fold_on_its_own(void **state)
{
    (void)state;
    struct profile_fold *fold = profile_fold_create();
    assert_non_null(fold);
    assert_int_equal(live_allocations, 1);
    struct profile_record rec = { .nframes = 2, .frames = { SPIN + 1, MAIN + 2 } };
    for (int i = 0; i < 300; i++)
        profile_fold_add(fold, &tab, &rec);
    assert_int_equal(profile_fold_samples(fold), 300);
    profile_fold_destroy(fold);
    assert_int_equal(live_allocations, 0);
}

/* ---- labels ------------------------------------------------------------------------------------------ */

static const struct label_set *set_of(const char *a, const char *b)
{
    struct label_pair pairs[2];
    assert_true(label_parse_pair(a, &pairs[0]));
    if (b)
        assert_true(label_parse_pair(b, &pairs[1]));
    const struct label_set *set = label_intern(pairs, b ? 2 : 1, NULL);
    assert_non_null(set);
    return set;
}

static void test_breakdown_line(void **state)
{
    (void)state;
    next_labels = set_of("cmd=profile", NULL);
    PUSH_N(5, 0, 3, SPIN + 1, MAIN + 0x10);
    next_labels = NULL;
    PUSH_N(3, 1, 4, MEMCPY + 1, MAIN + 0x20);
    assert_string_equal(report(8),
                        "profiled 1000 ms\n"
                        "8 samples on 2 cpus, 0 dropped, source tick at 100 Hz (a synthetic run)\n"
                        "labels: 62.5% (5) cmd=profile, 37.5% (3) (none)\n"
                        "62.5% 5 Spin+0x1\n"
                        "        <- Main+0x10\n"
                        "37.5% 3 MemCpy+0x1\n"
                        "        <- Main+0x20\n");
}

static void test_breakdown_hottest_first_ties_first_seen(void **state)
{
    (void)state;
    /* First seen, CPU by CPU: (none), job=b, job=a+netload=sink, job=a. Counts 2, 4, 4, 1. */
    const struct label_set *b = set_of("job=b", NULL), *a_sink = set_of("netload=sink", "job=a"),
                           *a = set_of("job=a", NULL);
    PUSH_N(2, 0, 5, SPIN + 1);
    next_labels = b;
    PUSH_N(4, 1, 6, SPIN + 1);
    next_labels = a_sink;
    PUSH_N(4, 2, 7, SPIN + 1);
    next_labels = a;
    PUSH(3, 8, SPIN + 1);
    assert_string_equal(report(8),
                        "profiled 1000 ms\n"
                        "11 samples on 4 cpus, 0 dropped, source tick at 100 Hz (a synthetic run)\n"
                        "labels: 36.4% (4) job=b, 36.4% (4) job=a,netload=sink, 18.2% (2) (none), 9.1% (1) job=a\n"
                        "100.0% 11 Spin+0x1\n");
}

static void test_breakdown_only_when_some_sample_is_labelled(void **state)
{
    (void)state;
    /* The labelled samples belong to a pid the filter leaves out: no line. */
    next_labels = set_of("job=a", NULL);
    PUSH(0, 5, SPIN + 1);
    next_labels = NULL;
    PUSH(1, 6, SPIN + 1);
    struct profile_filter only6 = { .by_pid = true, .pid = 6 };
    assert_string_equal(report_filtered(&only6, 8),
                        "profiled 1000 ms\n"
                        "1 samples on 1 cpus, 0 dropped, source tick at 100 Hz (a synthetic run)\n"
                        "100.0% 1 Spin+0x1\n");
    /* A stale labelled record of an earlier run does not count either. */
    new_run(8, "tick");
    next_labels = set_of("job=a", NULL);
    push_record(0, 1, 7, FRAMES(SPIN + 1));
    next_labels = NULL;
    PUSH(0, 1, SPIN + 1);
    assert_string_equal(report(8),
                        "profiled 1000 ms\n"
                        "1 samples on 1 cpus, 0 dropped, source tick at 100 Hz (a synthetic run)\n"
                        "100.0% 1 Spin+0x1\n");
}

static void test_breakdown_counts_add_up(void **state)
{
    (void)state;
    /* 3 sets and none over 1001 samples: the counts add up to the total whatever the rounding. */
    const struct label_set *sets[3] = { set_of("k=1", NULL), set_of("k=2", NULL), set_of("k=3", NULL) };
    for (unsigned i = 0; i < 1001; i++) {
        next_labels = i % 7 == 0 ? NULL : sets[i % 3];
        PUSH(i % NCPUS, 1, SPIN + 1 + (i % 5), MAIN + 1);
    }
    const char *out = report(8);
    const char *line = strstr(out, "\nlabels: ");
    assert_non_null(line);
    line += strlen("\nlabels: ");
    unsigned long long sum = 0;
    unsigned shares = 0;
    for (;;) {
        unsigned whole, tenth;
        unsigned long long n;
        int used = 0;
        assert_int_equal(sscanf(line, "%u.%u%% (%llu) %*[^,\n]%n", &whole, &tenth, &n, &used), 3);
        sum += n;
        shares++;
        line += used;
        if (*line == '\n')
            break;
        assert_memory_equal(line, ", ", 2);
        line += 2;
    }
    assert_int_equal(shares, 4);
    assert_int_equal(sum, 1001);
}

static void test_label_filter(void **state)
{
    (void)state;
    const struct label_set *a = set_of("job=a", NULL), *a_cmd = set_of("job=a", "cmd=burn"),
                           *b = set_of("job=b", NULL);
    next_labels = a;
    PUSH_N(3, 0, 5, SPIN + 1, MAIN + 0x10);
    next_labels = b;
    PUSH_N(4, 1, 6, MEMCPY + 1, MAIN + 0x20);
    next_labels = a_cmd;
    PUSH(2, 7, SPIN + 2, MAIN + 0x10);
    next_labels = NULL;
    PUSH_N(2, 3, 8, SPIN + 2, MAIN + 0x10);
    struct profile_filter job_a = { .by_label = true };
    assert_true(label_parse_pair("job=a", &job_a.label));
    assert_string_equal(report_filtered(&job_a, 8),
                        "profiled 1000 ms\n"
                        "4 samples on 2 cpus, 0 dropped, source tick at 100 Hz (a synthetic run)\n"
                        "labels: 75.0% (3) job=a, 25.0% (1) cmd=burn,job=a\n"
                        "100.0% 4 Spin+0x1..0x2\n"
                        "        <- Main+0x10\n");
}

static void test_label_filter_with_pid(void **state)
{
    (void)state;
    next_labels = set_of("job=a", NULL);
    PUSH(0, 5, SPIN + 1);
    PUSH(1, 6, MEMCPY + 1);
    struct profile_filter both = { .by_pid = true, .pid = 6, .by_label = true };
    assert_true(label_parse_pair("job=a", &both.label));
    assert_string_equal(report_filtered(&both, 8),
                        "profiled 1000 ms\n"
                        "1 samples on 1 cpus, 0 dropped, source tick at 100 Hz (a synthetic run)\n"
                        "labels: 100.0% (1) job=a\n"
                        "100.0% 1 MemCpy+0x1\n");
}

static void test_label_filter_empty(void **state)
{
    (void)state;
    next_labels = set_of("job=a", NULL);
    PUSH(0, 5, SPIN + 1);
    next_labels = NULL;
    PUSH(1, 6, SPIN + 1);
    struct profile_filter job_z = { .by_label = true };
    assert_true(label_parse_pair("job=z", &job_z.label));
    assert_string_equal(report_filtered(&job_z, 8),
                        "profiled 1000 ms\n"
                        "0 samples on 0 cpus, 0 dropped, source tick at 100 Hz (a synthetic run)\n"
                        "no samples with label job=z: no task that carried it was sampled in the window\n");
    new_run(8, "tick");
    next_labels = set_of("job=a", NULL);
    PUSH(0, 5, SPIN + 1);
    struct profile_filter pid6 = { .by_pid = true, .pid = 6, .by_label = true };
    assert_true(label_parse_pair("job=a", &pid6.label));
    assert_string_equal(report_filtered(&pid6, 8),
                        "profiled 1000 ms\n"
                        "0 samples on 0 cpus, 0 dropped, source tick at 100 Hz (a synthetic run)\n"
                        "no samples for pid 6 with label job=a: the task may have been asleep, or without that "
                        "label, the whole window\n");
}

/* ---- the raw form ---------------------------------------------------------------------------------------- */

static const char *report_raw(const struct profile_filter *filter, const char *build_id)
{
    struct buffer_sink bs;
    buffer_sink_init(&bs, text, sizeof text);
    assert_int_equal(profile_report_raw(&run, filter, build_id, &bs.sink), 0);
    assert_int_equal(bs.truncated, 0);
    assert_int_equal(live_allocations, 0); /* nothing allocated */
    return text;
}

/* Every line of a raw report parses as its kind, and the trailer counts the sample lines. */
static void expect_raw_parses(const char *out, uint64_t samples, uint64_t dropped)
{
    const char *line = out, *nl = strchr(line, '\n');
    struct profile_raw_header h;
    assert_non_null(nl);
    assert_true(profile_raw_parse_header(line, (size_t)(nl + 1 - line), &h));
    uint64_t lines = 0;
    struct profile_raw_sample s;
    struct profile_raw_trailer t;
    for (line = nl + 1; (nl = strchr(line, '\n')) != NULL; line = nl + 1) {
        size_t len = (size_t)(nl + 1 - line);
        if (profile_raw_parse_sample(line, len, &s)) {
            lines++;
            continue;
        }
        assert_true(profile_raw_parse_trailer(line, len, &t));
        assert_string_equal(nl + 1, ""); /* the trailer is last */
        assert_int_equal(t.samples, lines);
        assert_int_equal(t.samples, samples);
        assert_int_equal(t.dropped, dropped);
        return;
    }
    fail_msg("no trailer in:\n%s", out);
}

static void test_raw_report(void **state)
{
    (void)state;
    run.source_name = "tick";
    run.period_ns = 10000000u;
    run.window_ms = 1003;
    next_labels = set_of("netload=sink", "job=a");
    PUSH(0, 5, SPIN + 1, MAIN + 0x10, 0xffffffff80001234u);
    next_labels = NULL;
    push_record(1, 0, run.run, FRAMES(0xffffffff80000010u));
    push_record(1, 9, 6, FRAMES(SPIN + 1)); /* a straggler of run 6 */
    /* times straight into the records, as the sampler writes them */
    rings[0].records[(atomic_load(&rings[0].head) - 1) & rings[0].mask].time_ns = 5123456789;
    rings[1].records[(atomic_load(&rings[1].head) - 2) & rings[1].mask].time_ns = -20;
    assert_string_equal(report_raw(NULL, "3970b5ac255dc9fffb55e8d81b69e7916c7f2003"),
                        "# kprof raw v1 source=tick period_ns=10000000 window_ms=1003 cpus=4 "
                        "build_id=3970b5ac255dc9fffb55e8d81b69e7916c7f2003\n"
                        "s 0 5 5123456789 job=a,netload=sink 0x1601 0x1710 0xffffffff80001234\n"
                        "s 1 0 -20 - 0xffffffff80000010\n"
                        "# kprof raw end samples=2 dropped=0\n");
    expect_raw_parses(text, 2, 0);
    /* consumed, like the report */
    for (unsigned i = 0; i < NCPUS; i++)
        assert_int_equal(profile_ring_count(&rings[i]), 0);
}

static void test_raw_report_filters_counts_drops_and_names_the_counter(void **state)
{
    (void)state;
    new_run(3, "pmu/nmi intel fixed-ctr1");
    run.source_name = "pmu/nmi intel fixed-ctr1";
    run.period_ns = 1000000;
    run.window_ms = 500;
    next_labels = set_of("job=a", NULL);
    PUSH_N(CAP + 3, 2, 5, SPIN + 1); /* fills CPU 2's ring: 3 dropped */
    next_labels = set_of("job=b", NULL);
    PUSH_N(2, 3, 6, SPIN + 2);
    struct profile_filter job_b = { .by_label = true };
    assert_true(label_parse_pair("job=b", &job_b.label));
    assert_string_equal(report_raw(&job_b, ""),
                        "# kprof raw v1 source=pmu/nmi-intel-fixed-ctr1 period_ns=1000000 window_ms=500 cpus=4 "
                        "build_id=none\n"
                        "s 3 6 0 job=b 0x1602\n"
                        "s 3 6 0 job=b 0x1602\n"
                        "# kprof raw end samples=2 dropped=3\n");
    /* unfiltered, pid filter: every line parses, the trailer counts them */
    new_run(4, "tick");
    run.source_name = "tick";
    run.period_ns = 10000000u;
    next_labels = set_of("job=a", NULL);
    PUSH_N(CAP + 3, 2, 5, SPIN + 1, MAIN + 2, MAIN + 3, MAIN + 4, MAIN + 5, MAIN + 6, MAIN + 7, MAIN + 8);
    next_labels = NULL;
    PUSH_N(10, 0, 6, SPIN + 1);
    expect_raw_parses(report_raw(NULL, "ab"), CAP + 10, 3);
    new_run(5, "tick");
    run.source_name = "tick";
    PUSH_N(10, 0, 6, SPIN + 1);
    PUSH_N(4, 1, 7, SPIN + 1);
    struct profile_filter pid7 = { .by_pid = true, .pid = 7 };
    expect_raw_parses(report_raw(&pid7, "ab"), 4, 0);
    /* an empty run is a header and a trailer */
    new_run(6, "tick");
    run.source_name = "tick";
    run.period_ns = 10000000u;
    assert_string_equal(report_raw(NULL, "00"),
                        "# kprof raw v1 source=tick period_ns=10000000 window_ms=1000 cpus=4 build_id=00\n"
                        "# kprof raw end samples=0 dropped=0\n");
    /* a build id that is not hex is sent as none rather than breaking the header */
    assert_memory_equal(report_raw(NULL, "not hex"), "# kprof raw v1 source=tick period_ns=10000000 window_ms=1000 "
                        "cpus=4 build_id=none\n", 79);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_leaf_folds_by_symbol_with_span, setup),
        cmocka_unit_test_setup(test_leaf_on_one_offset_has_no_span, setup),
        cmocka_unit_test_setup(test_leaf_at_symbol_start_and_without_callers, setup),
        cmocka_unit_test_setup(test_unresolved_leaf_folds_by_exact_address, setup),
        cmocka_unit_test_setup(test_callers_fold_by_exact_address, setup),
        cmocka_unit_test_setup(test_chains_of_different_depth_are_different, setup),
        cmocka_unit_test_setup(test_unresolved_caller_printed_raw, setup),
        cmocka_unit_test_setup(test_caller_after_a_final_call_belongs_to_the_caller, setup),
        cmocka_unit_test_setup(test_eight_frame_chain, setup),
        cmocka_unit_test_setup(test_hottest_first_ties_in_first_seen_order, setup),
        cmocka_unit_test_setup(test_more_chains_line, setup),
        cmocka_unit_test_setup(test_percentages_round_half_up_to_one_decimal, setup),
        cmocka_unit_test_setup(test_small_percentages, setup),
        cmocka_unit_test_setup(test_table_limit_and_its_line, setup),
        cmocka_unit_test_setup(test_table_limit_more_samples_of_untracked_chains, setup),
        cmocka_unit_test_setup(test_table_exactly_full_has_no_limit_line, setup),
        cmocka_unit_test_setup(test_header_counts_cpus_and_drops, setup),
        cmocka_unit_test_setup(test_header_names_window_and_source, setup),
        cmocka_unit_test_setup(test_samples_of_other_runs_are_ignored, setup),
        cmocka_unit_test_setup(test_pid_filter, setup),
        cmocka_unit_test_setup(test_filter_for_all, setup),
        cmocka_unit_test_setup(test_report_consumes_the_rings, setup),
        cmocka_unit_test_setup(test_empty_report_on_the_tick, setup),
        cmocka_unit_test_setup(test_empty_report_on_the_counter, setup),
        cmocka_unit_test_setup(test_empty_report_for_a_pid, setup),
        cmocka_unit_test_setup(test_only_stale_samples_is_empty, setup),
        cmocka_unit_test_setup(test_drops_without_samples, setup),
        cmocka_unit_test_setup(test_out_of_memory, setup),
        cmocka_unit_test_setup(test_fold_on_its_own, setup),
        cmocka_unit_test_setup(test_breakdown_line, setup),
        cmocka_unit_test_setup(test_breakdown_hottest_first_ties_first_seen, setup),
        cmocka_unit_test_setup(test_breakdown_only_when_some_sample_is_labelled, setup),
        cmocka_unit_test_setup(test_breakdown_counts_add_up, setup),
        cmocka_unit_test_setup(test_label_filter, setup),
        cmocka_unit_test_setup(test_label_filter_with_pid, setup),
        cmocka_unit_test_setup(test_label_filter_empty, setup),
        cmocka_unit_test_setup(test_raw_report, setup),
        cmocka_unit_test_setup(test_raw_report_filters_counts_drops_and_names_the_counter, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
