/* tests/unit/test_profile_top.c: `profile top`'s table and words (kernel/profiler/top.c) -- the functions summed by
 * leaf symbol across their chains, their shares of the last interval and since the start, the order (the last
 * interval's share, then the share since the start, then first seen), the row limit, the rest when the table
 * is full, and every bad argument's one line. Folds are made from records written by hand, over the fold
 * fixture's symbol table (MemCpy, NetFrame::Copy, ...) and its synthetic tick run. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "profiler_fold_fixture.h"
#include "shell_line.h"
#include "unit_main.h"
#include "kernel/profiler/fold.h"
#include "kernel/profiler/top.h"

static struct profile_top top;
static char out[8192];

/* n samples of leaf (an address) called from caller, into fold. */
static void add(struct profile_fold *fold, uintptr_t leaf, uintptr_t caller, unsigned n)
{
    struct profile_record rec;
    memset(&rec, 0, sizeof rec);
    rec.nframes = 2;
    rec.frames[0] = leaf;
    rec.frames[1] = caller;
    for (unsigned i = 0; i < n; i++)
        profile_fold_add(fold, &tab, &rec);
}

struct samples {
    uintptr_t leaf, caller;
    unsigned n;
};

/* One interval of top: a fold of count sample sets, added and destroyed. */
static void interval(const struct samples *sets, size_t count)
{
    struct profile_fold *fold = profile_fold_create();
    for (size_t i = 0; i < count; i++)
        add(fold, sets[i].leaf, sets[i].caller, sets[i].n);
    profile_top_add(&top, fold);
    profile_fold_destroy(fold);
}
#define INTERVAL(...) \
    interval((const struct samples[]){ __VA_ARGS__ }, \
             sizeof((const struct samples[]){ __VA_ARGS__ }) / sizeof(struct samples))

static const char *print(uint32_t of, unsigned rows)
{
    struct buffer_sink b;
    buffer_sink_init(&b, out, sizeof out);
    profile_top_print(&top, &run, 500, of, rows, &b.sink);
    return out;
}

static int top_setup(void **state)
{
    setup(state);
    profile_top_init(&top);
    return 0;
}

/* Two chains of one function are one row (leaf by symbol, whatever the offset or the caller); the shares are of
 * the interval's samples, hottest first. */
static void test_one_interval_sums_by_leaf_symbol(void **state)
{
    (void)state;
    INTERVAL({ MEMCPY + 0x10, MAIN + 4, 30 },
             { MEMCPY + 0x20, COPY + 8, 20 }, /* another chain, the same function */
             { SPIN + 4, MAIN + 8, 40 },
             { 0x1950, MAIN + 8, 10 });       /* in the gap: no symbol */
    assert_string_equal(print(5, 10),
                        "top 1/5: 500 ms, 100 samples (100 since start)\n"
                        "source tick at 100 Hz (a synthetic run)\n"
                        "   last  since  function\n"
                        "  50.0%  50.0%  MemCpy\n"
                        "  40.0%  40.0%  Spin\n"
                        "  10.0%  10.0%  0x1950\n");
}

/* The last interval orders the rows; since-start shares add up every interval; a function absent from the last
 * interval stays, at 0.0%, below those in it; equal last shares go by since start, then first seen. */
static void test_order_and_shares_across_intervals(void **state)
{
    (void)state;
    INTERVAL({ COPY + 1, MAIN + 4, 60 }, { RECEIVE + 1, MAIN + 4, 20 }, { SPIN + 1, MAIN + 4, 20 });
    INTERVAL({ MAIN + 0x10, FILLER + 4, 50 }, { SPIN + 1, MAIN + 4, 25 }, { RECEIVE + 1, MAIN + 4, 25 });
    /* Spin and Receive tie at 25.0% last and 22.5% since: first seen (Receive) first */
    assert_string_equal(print(0, 10),
                        "top 2: 500 ms, 100 samples (200 since start)\n"
                        "source tick at 100 Hz (a synthetic run)\n"
                        "   last  since  function\n"
                        "  50.0%  25.0%  Main\n"
                        "  25.0%  22.5%  VirtioNet::Receive\n"
                        "  25.0%  22.5%  Spin\n"
                        "   0.0%  30.0%  NetFrame::Copy\n");
}

/* rows is a limit: the hottest rows only, in the same order. */
static void test_rows_limit(void **state)
{
    (void)state;
    INTERVAL({ MEMCPY, MAIN + 4, 1 }, { COPY, MAIN + 4, 4 }, { RECEIVE, MAIN + 4, 3 }, { SPIN, MAIN + 4, 2 });
    assert_string_equal(print(1, 2),
                        "top 1/1: 500 ms, 10 samples (10 since start)\n"
                        "source tick at 100 Hz (a synthetic run)\n"
                        "   last  since  function\n"
                        "  40.0%  40.0%  NetFrame::Copy\n"
                        "  30.0%  30.0%  VirtioNet::Receive\n");
}

/* More leaves than the table holds: the first PROFILE_TOP_FUNCS keep their rows, the rest is one line. */
static void test_a_full_table_sums_the_rest(void **state)
{
    (void)state;
    for (unsigned i = 0; i < PROFILE_TOP_FUNCS + 4; i++)
        INTERVAL({ 0x1900 + i, MAIN + 4, i < PROFILE_TOP_FUNCS ? 1 : 2 }); /* unresolved: one leaf each */
    assert_int_equal(top.used, PROFILE_TOP_FUNCS);
    const char *text = print(0, 1);
    assert_non_null(strstr(text, " 100.0%   3.0%  (the rest: more functions than the table holds)\n"));
}

/* An interval without samples says so rather than print an empty table. */
static void test_no_samples(void **state)
{
    (void)state;
    interval(NULL, 0);
    assert_string_equal(print(3, 10), "top 1/3: 500 ms, 0 samples (0 since start)\n"
                                      "source tick at 100 Hz (a synthetic run)\n"
                                      "   last  since  function\n"
                                      "no samples yet\n");
}

static const char *parse(const char *line, bool udp, struct profile_top_request *req)
{
    static char why[160];
    char *argv[SHELL_LINE_WORDS];
    int argc = shell_line_split(line, argv);
    why[0] = 0;
    return profile_top_parse_args(argc, argv, udp, req, why, sizeof why) ? NULL : why;
}

static void test_arguments(void **state)
{
    (void)state;
    struct profile_top_request req;
    assert_null(parse("profile top", false, &req));
    assert_int_equal(req.ms, 1000);
    assert_int_equal(req.intervals, 0); /* the console: until a key */
    assert_null(parse("profile top", true, &req));
    assert_int_equal(req.intervals, PROFILE_TOP_UDP_INTERVALS); /* UDP: a fixed count */
    assert_null(parse("profile top 500 5", false, &req));
    assert_int_equal(req.ms, 500);
    assert_int_equal(req.intervals, 5);
    assert_null(parse("profile top 100 1000", false, &req));
    assert_null(parse("profile top 10000 3", true, &req)); /* 30 s in all: the UDP limit, inclusive */

    static const struct {
        const char *line;
        bool udp;
        const char *why;
    } bad[] = {
        { "profile top 99", false, "profile top: the interval must be 100..10000 ms, not 99" },
        { "profile top 10001", false, "profile top: the interval must be 100..10000 ms, not 10001" },
        { "profile top 5x", false, "profile top: the interval must be 100..10000 ms, not 5x" },
        { "profile top -1", false, "profile top: the interval must be 100..10000 ms, not -1" },
        { "profile top 500 0", false, "profile top: the number of intervals must be 1..1000, not 0" },
        { "profile top 500 1001", false, "profile top: the number of intervals must be 1..1000, not 1001" },
        { "profile top 500 five", false, "profile top: the number of intervals must be 1..1000, not five" },
        /* a byte that is not text is quoted as '?' (a datagram or the fuzzer's line may hold any), and a long
         * word cut at 20 */
        { "profile top al\x90\x1b", false, "profile top: the interval must be 100..10000 ms, not al??" },
        { "profile top 500 123456789012345678901234", false,
          "profile top: the number of intervals must be 1..1000, not 12345678901234567890" },
        { "profile top 500 5 5", false, "usage: profile top [ms] [N]" },
        { "profile top 10000 4", true, "profile top: over UDP at most 30000 ms in all (ms x N), not 40000" },
        { "profile top 7000", true, "profile top: over UDP at most 30000 ms in all (ms x N), not 35000" },
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        const char *why = parse(bad[i].line, bad[i].udp, &req);
        assert_non_null(why);
        assert_string_equal(why, bad[i].why);
    }
}

UNIT_MAIN_EACH(top_setup, NULL, NULL, NULL, test_one_interval_sums_by_leaf_symbol,
               test_order_and_shares_across_intervals, test_rows_limit, test_a_full_table_sums_the_rest,
               test_no_samples, test_arguments)
