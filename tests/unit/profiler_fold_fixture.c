/* tests/unit/profiler_fold_fixture.c: the counting heap, symbol table, synthetic runs and checked report
 * wrappers the fold and report tests share (see profiler_fold_fixture.h). */
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

/* The counting heap is counting_heap.c's. */

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
const struct symtab tab = { syms, 6, names, 0x1000, 0x10000 };

/* ---- synthetic runs ---------------------------------------------------------------------------------- */

static struct profile_record storage[NCPUS][CAP];
struct profile_ring rings[NCPUS];
struct profile_run run;
char text[1 << 18]; /* a raw report of a full ring and more */
const struct label_set *next_labels; /* the label set push_record gives its records */

void new_run(uint32_t number, const char *source)
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

void push_record(unsigned cpu, uint32_t pid, uint32_t number, const uintptr_t *frames, unsigned n)
{
    struct profile_record *rec = profile_ring_reserve(&rings[cpu]);
    if (!rec)
        return; /* full: counted as a drop, like the sampler */
    memset(rec, 0, sizeof *rec);
    rec->pid = pid;
    rec->cpu = (uint16_t)cpu;
    rec->run = number;
    rec->labels = next_labels;
    rec->labels_generation = next_labels ? next_labels->generation : 0;
    rec->nframes = (uint16_t)n;
    memcpy(rec->frames, frames, n * sizeof *frames);
    profile_ring_commit(&rings[cpu]);
}


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

const char *report_filtered(const struct profile_filter *filter, unsigned chains)
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

const char *report(unsigned chains)
{
    return report_filtered(NULL, chains);
}

int setup(void **state)
{
    (void)state;
    counting_heap_reset();
    next_labels = NULL;
    new_run(7, "tick");
    return 0;
}

const struct label_set *set_of(const char *a, const char *b)
{
    struct label_pair pairs[2];
    assert_true(label_parse_pair(a, &pairs[0]));
    if (b)
        assert_true(label_parse_pair(b, &pairs[1]));
    const struct label_set *set = label_intern(pairs, b ? 2 : 1, NULL);
    assert_non_null(set);
    return set;
}
