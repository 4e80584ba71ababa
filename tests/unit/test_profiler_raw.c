/* tests/unit/test_profiler_raw.c: the raw sample format's codec (kernel/profiler/raw.c) -- the exact text of
 * each kind of line, round trips over the extremes of every field, every truncation of a line refused, a long
 * list of garbled lines refused, lines that do not fit refused rather than cut, and the GNU build-id note
 * reader over well-formed, foreign and broken note sections. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "fake_hal.h"
#include "kernel/profiler/raw.h"
#include "unit_main.h"

static char line[PROFILE_RAW_LINE_MAX];

static struct profile_raw_sample sample(uint32_t cpu, uint32_t pid, int64_t t, const char *labels, unsigned n,
                                        const uint64_t *frames)
{
    struct profile_raw_sample s;
    memset(&s, 0, sizeof s);
    s.cpu = cpu;
    s.pid = pid;
    s.time_ns = t;
    if (labels) {
        /* "k=v,k=v" */
        char copy[LABEL_SET_TEXT_MAX];
        strcpy(copy, labels);
        for (char *word = strtok(copy, ","); word; word = strtok(NULL, ","))
            assert_true(label_parse_pair(word, &s.labels.pairs[s.labels.npairs++]));
    }
    s.period = 1;
    s.nframes = n;
    memcpy(s.frames, frames, n * sizeof *frames);
    return s;
}

static void expect_same_sample(const struct profile_raw_sample *a, const struct profile_raw_sample *b)
{
    assert_int_equal(a->cpu, b->cpu);
    assert_int_equal(a->pid, b->pid);
    assert_int_equal(a->time_ns, b->time_ns);
    assert_int_equal(a->labels.npairs, b->labels.npairs);
    for (unsigned i = 0; i < a->labels.npairs; i++) {
        assert_string_equal(a->labels.pairs[i].key, b->labels.pairs[i].key);
        assert_string_equal(a->labels.pairs[i].value, b->labels.pairs[i].value);
    }
    assert_int_equal(a->span, b->span);
    assert_int_equal(a->period, b->period);
    assert_int_equal(a->flags, b->flags);
    assert_int_equal(a->held_off_us, b->held_off_us);
    assert_int_equal(a->nframes, b->nframes);
    for (unsigned i = 0; i < a->nframes; i++)
        assert_int_equal(a->frames[i], b->frames[i]);
}

/* Formats s, checks the text, parses it back, and checks that every proper prefix is refused. */
static void round_trip(const struct profile_raw_sample *s, const char *expected)
{
    size_t n = profile_raw_format_sample(s, line, sizeof line);
    assert_int_equal(n, strlen(expected));
    assert_string_equal(line, expected);
    struct profile_raw_sample back;
    assert_true(profile_raw_parse_sample(line, n, &back));
    expect_same_sample(s, &back);
    for (size_t k = 0; k < n; k++)
        if (profile_raw_parse_sample(line, k, &back))
            fail_msg("the first %zu of %zu bytes of \"%s\" parsed as a sample", k, n, expected);
    /* a terminal's line ending too */
    char crlf[PROFILE_RAW_LINE_MAX + 2];
    int m = snprintf(crlf, sizeof crlf, "%.*s\r\n", (int)n - 1, line);
    assert_int_equal(m, n + 1);
    assert_true(profile_raw_parse_sample(crlf, (size_t)m, &back));
    expect_same_sample(s, &back);
}

/* ---- samples -------------------------------------------------------------------------------------------- */

static void test_sample_text_and_round_trip(void **state)
{
    (void)state;
    struct profile_raw_sample s =
        sample(2, 17, 5123456789, "job=a,netload=sink", 3,
               (const uint64_t[]){ 0xffffffff80012345u, 0xffffffff80011000u, 0x100018 });
    round_trip(&s, "s 2 17 5123456789 job=a,netload=sink 1 - 0xffffffff80012345 0xffffffff80011000 0x100018\n");
    s = sample(0, 0, 0, NULL, 1, (const uint64_t[]){ 0 });
    round_trip(&s, "s 0 0 0 - 1 - 0x0\n");
}

static void test_sample_extremes(void **state)
{
    (void)state;
    uint64_t eight[PROFILE_MAX_FRAMES] = { UINT64_MAX, 1, 0x10, 0xabcdef, 0, 0x8000000000000000u, 2, 3 };
    struct profile_raw_sample s =
        sample(UINT32_MAX, UINT32_MAX, INT64_MAX,
               "aaaaaaaaaaaaaaa=!#$%&()*+-./:;<>?@[]^_`,b=B,c.d-e_f=x,zzzzzzzzzzzzzzz=ABCDEFGHIJKLMNOPQRSTUVW", 8,
               eight);
    round_trip(&s, "s 4294967295 4294967295 9223372036854775807 "
                   "aaaaaaaaaaaaaaa=!#$%&()*+-./:;<>?@[]^_`,b=B,c.d-e_f=x,zzzzzzzzzzzzzzz=ABCDEFGHIJKLMNOPQRSTUVW "
                   "1 - 0xffffffffffffffff 0x1 0x10 0xabcdef 0x0 0x8000000000000000 0x2 0x3\n");
    s = sample(1, 2, INT64_MIN, "k=v", 1, (const uint64_t[]){ 0xfff });
    round_trip(&s, "s 1 2 -9223372036854775808 k=v 1 - 0xfff\n");
    s = sample(1, 2, -1, NULL, 1, (const uint64_t[]){ 0x1 });
    round_trip(&s, "s 1 2 -1 - 1 - 0x1\n");
}

/* A key may begin with '-' ([a-z0-9_.-]): "-x=a" is a pair, not the "-" of no labels with junk after it.
 * Found by tests/fuzz/fuzz_profiler_raw.c: the formatter wrote such lines and the parser refused them. */
static void test_label_key_starting_with_dash(void **state)
{
    (void)state;
    struct profile_raw_sample s = sample(0, 1, 2, "-=!,aaa1aa=!", 1, (const uint64_t[]){ 0x2a });
    round_trip(&s, "s 0 1 2 -=!,aaa1aa=! 1 - 0x2a\n");
    s = sample(0, 1, 2, "-x=a", 1, (const uint64_t[]){ 0x2a });
    round_trip(&s, "s 0 1 2 -x=a 1 - 0x2a\n");
    struct profile_raw_sample back;
    assert_false(profile_raw_parse_sample("s 0 1 2 -x 1 - 0x2a\n", 20, &back));
    assert_false(profile_raw_parse_sample("s 0 1 2 -= 1 - 0x2a\n", 20, &back));
    assert_false(profile_raw_parse_sample("s 0 1 2 -- 1 - 0x2a\n", 20, &back));
}

/* The period and the context: every mark the report prints, alone and together, round trips; the context is
 * written in one order, each mark once, let-in with its microseconds. */
static void test_sample_period_and_context(void **state)
{
    (void)state;
    static const struct {
        uint8_t flags;
        uint32_t held_off_us;
        const char *text;
    } cases[] = {
        { 0, 0, "s 1 2 3 - 2100000 - 0x1\n" },
        { PROFILE_REC_IRQS_OFF, 0, "s 1 2 3 - 2100000 irqs-off 0x1\n" },
        { PROFILE_REC_IN_IRQ, 0, "s 1 2 3 - 2100000 in-irq 0x1\n" },
        { PROFILE_REC_IRQS_OFF | PROFILE_REC_IN_IRQ, 0, "s 1 2 3 - 2100000 irqs-off,in-irq 0x1\n" },
        { PROFILE_REC_LET_IN, 19400, "s 1 2 3 - 2100000 let-in=19400 0x1\n" },
        { PROFILE_REC_LET_IN, 0, "s 1 2 3 - 2100000 let-in=0 0x1\n" },
        { PROFILE_REC_LET_IN | PROFILE_REC_IRQS_OFF | PROFILE_REC_IN_IRQ, UINT32_MAX,
          "s 1 2 3 - 2100000 irqs-off,in-irq,let-in=4294967295 0x1\n" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        struct profile_raw_sample s = sample(1, 2, 3, NULL, 1, (const uint64_t[]){ 0x1 });
        s.period = 2100000;
        s.flags = cases[i].flags;
        s.held_off_us = cases[i].held_off_us;
        round_trip(&s, cases[i].text);
    }
    struct profile_raw_sample s = sample(1, 2, 3, NULL, 1, (const uint64_t[]){ 0x1 });
    s.period = UINT32_MAX;
    round_trip(&s, "s 1 2 3 - 4294967295 - 0x1\n");
    s.period = 0;
    round_trip(&s, "s 1 2 3 - 0 - 0x1\n");
}

/* A record's line carries its period and exactly the marks the report prints: the three flags it folds by,
 * held_off_us only with let-in, and no other bit. */
static void test_record_line_carries_period_and_marks(void **state)
{
    (void)state;
    struct profile_record rec = { .cpu = 3, .pid = 9, .time_ns = 77, .nframes = 2, .frames = { 0x1000, 0x2000 },
                                  .period = 8400000, .flags = PROFILE_REC_IRQS_OFF | 0x80,
                                  .held_off_us = 12 /* not a let-in: not carried */ };
    size_t n = profile_raw_record_line(&rec, line, sizeof line);
    assert_string_equal(line, "s 3 9 77 - 8400000 irqs-off 0x1000 0x2000\n");
    assert_int_equal(n, strlen(line));
    rec.flags = PROFILE_REC_LET_IN;
    rec.period = 10000000;
    profile_raw_record_line(&rec, line, sizeof line);
    assert_string_equal(line, "s 3 9 77 - 10000000 let-in=12 0x1000 0x2000\n");
    rec.flags = PROFILE_REC_IN_IRQ;
    profile_raw_record_line(&rec, line, sizeof line);
    assert_string_equal(line, "s 3 9 77 - 10000000 in-irq 0x1000 0x2000\n");
}

static void test_garbled_samples_refused(void **state)
{
    (void)state;
    static const char *bad[] = {
        "",
        "\n",
        "s\n",
        "s 1 2 3 -\n",                        /* no frames */
        "s 1 2 3 - \n",                       /* a space, then nothing */
        "s 1 2 3 - 1 - 0x1 \n",                   /* trailing space */
        "s  1 2 3 - 1 - 0x1\n",                   /* two spaces */
        "s 1 2 3  - 1 - 0x1\n",
        " s 1 2 3 - 1 - 0x1\n",
        "S 1 2 3 - 1 - 0x1\n",
        "x 1 2 3 - 1 - 0x1\n",
        "s 1 2 3 - 1 - 0x1",                      /* no newline: cut short */
        "s 1 2 3 - 1 - 0x1\r",
        "s 1 2 3 - 1 - 0x1\n\n",
        "s 1 2 3 - 1 - 0x1\nx\n",
        "s 1 2 3 - 1 - 0x1\r\r\n",
        "s 1\t2 3 - 1 - 0x1\n",
        "s 01 2 3 - 1 - 0x1\n",                   /* leading zeros */
        "s 1 02 3 - 1 - 0x1\n",
        "s 1 2 03 - 1 - 0x1\n",
        "s 1 2 3 - 1 - 0x01\n",
        "s 1 2 3 - 1 - 0x\n",
        "s 1 2 3 - 1\n",                      /* no 0x */
        "s 1 2 3 - 0X1\n",
        "s 1 2 3 - 1 - 0xABC\n",                  /* upper case */
        "s 1 2 3 - 1 - 0xg\n",
        "s 1 2 3 - 1 - 0x1g\n",
        "s 1 2 3 - 1 - 0x10000000000000000\n",    /* 17 digits */
        "s 4294967296 2 3 - 1 - 0x1\n",           /* out of range */
        "s 1 4294967296 3 - 1 - 0x1\n",
        "s 1 2 9223372036854775808 - 1 - 0x1\n",
        "s 1 2 -9223372036854775809 - 1 - 0x1\n",
        "s 1 2 99999999999999999999999 - 1 - 0x1\n",
        "s 1 2 -0 - 1 - 0x1\n",
        "s 1 2 +3 - 1 - 0x1\n",
        "s -1 2 3 - 1 - 0x1\n",
        "s 1 2 3 -- 1 - 0x1\n",
        "s 1 2 3 -x 1 - 0x1\n",
        "s 1 2 3 job 1 - 0x1\n",                  /* labels */
        "s 1 2 3 job= 1 - 0x1\n",
        "s 1 2 3 =a 1 - 0x1\n",
        "s 1 2 3 Job=a 1 - 0x1\n",
        "s 1 2 3 job=a, 1 - 0x1\n",
        "s 1 2 3 ,job=a 1 - 0x1\n",
        "s 1 2 3 job=a,,k=b 1 - 0x1\n",
        "s 1 2 3 job=a=b 1 - 0x1\n",
        "s 1 2 3 k=b,job=a 1 - 0x1\n",            /* not sorted */
        "s 1 2 3 job=a,job=b 1 - 0x1\n",          /* a key twice */
        "s 1 2 3 a=1,b=1,c=1,d=1,e=1 1 - 0x1\n",  /* five pairs */
        "s 1 2 3 0123456789abcdef=1 1 - 0x1\n",
        "s 1 2 3 k=ABCDEFGHIJKLMNOPQRSTUVWX 1 - 0x1\n",
        "s 1 2 3 1 - 0x1\n",                      /* labels missing */
        "s 1 2 - 1 - 0x1\n",                      /* a field missing */
        "s 1 2 3 - 1 - 0x1 0x2 0x3 0x4 0x5 0x6 0x7 0x8 0x9\n", /* nine frames */
        "s 1 2 3 - 01 - 0x1\n",                  /* the period */
        "s 1 2 3 - 4294967296 - 0x1\n",
        "s 1 2 3 - -1 - 0x1\n",
        "s 1 2 3 - - 0x1\n",
        "s 1 2 3 - 1 0x1\n",                     /* the context missing */
        "s 1 2 3 - 1 -- 0x1\n",                  /* the context */
        "s 1 2 3 - 1 irqs_off 0x1\n",
        "s 1 2 3 - 1 in-irq,irqs-off 0x1\n",     /* out of order */
        "s 1 2 3 - 1 irqs-off,irqs-off 0x1\n",   /* twice */
        "s 1 2 3 - 1 irqs-off, 0x1\n",
        "s 1 2 3 - 1 ,irqs-off 0x1\n",
        "s 1 2 3 - 1 let-in 0x1\n",              /* let-in without its time */
        "s 1 2 3 - 1 let-in= 0x1\n",
        "s 1 2 3 - 1 let-in=01 0x1\n",
        "s 1 2 3 - 1 let-in=4294967296 0x1\n",
        "s 1 2 3 - 1 let-in=5,irqs-off 0x1\n",
        "s 1 2 3 - 1 irqs-offx 0x1\n",
        "s 1 2 3 - 1 irqs-off,in-irq,let-in=1,x 0x1\n",
        "# kprof raw end samples=1 dropped=0\n",
    };
    struct profile_raw_sample s;
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        if (profile_raw_parse_sample(bad[i], strlen(bad[i]), &s))
            fail_msg("\"%s\" parsed as a sample", bad[i]);
    /* a NUL inside the line */
    static const char nul[] = "s 1 2 3 - 1 - 0x1\0 0x2\n";
    assert_false(profile_raw_parse_sample(nul, sizeof nul - 1, &s));
    /* and the good line they are variations of */
    assert_true(profile_raw_parse_sample("s 1 2 3 - 1 - 0x1\n", 18, &s));
}

static void test_sample_that_cannot_be_written(void **state)
{
    (void)state;
    struct profile_raw_sample s = sample(1, 2, 3, "job=a", 1, (const uint64_t[]){ 0x1 });
    const char *text = "s 1 2 3 job=a 1 - 0x1\n";
    /* exactly enough room (the NUL too), and one byte less: nothing, not a cut line */
    char small[32];
    assert_int_equal(profile_raw_format_sample(&s, small, strlen(text) + 1), strlen(text));
    assert_string_equal(small, text);
    assert_int_equal(profile_raw_format_sample(&s, small, strlen(text)), 0);
    assert_string_equal(small, "");
    assert_int_equal(profile_raw_format_sample(&s, small, 0), 0);
    /* no frames, too many, or labels that break the rules */
    s.nframes = 0;
    assert_int_equal(profile_raw_format_sample(&s, line, sizeof line), 0);
    s.nframes = PROFILE_MAX_FRAMES + 1;
    assert_int_equal(profile_raw_format_sample(&s, line, sizeof line), 0);
    s = sample(1, 2, 3, "k=b,job=a", 1, (const uint64_t[]){ 0x1 }); /* unsorted */
    assert_int_equal(profile_raw_format_sample(&s, line, sizeof line), 0);
    s = sample(1, 2, 3, "job=a", 1, (const uint64_t[]){ 0x1 });
    strcpy(s.labels.pairs[0].value, "a b");
    assert_int_equal(profile_raw_format_sample(&s, line, sizeof line), 0);
    s.labels.npairs = LABEL_MAX_PAIRS + 1;
    assert_int_equal(profile_raw_format_sample(&s, line, sizeof line), 0);
}

/* ---- header and trailer ----------------------------------------------------------------------------- */

static void test_header(void **state)
{
    (void)state;
    struct profile_raw_header h, back;
    memset(&h, 0, sizeof h);
    strcpy(h.source, "tick");
    h.period = 10000000;
    h.unit = PROFILE_UNIT_NS;
    h.window_ms = 1003;
    h.cpus = 4;
    strcpy(h.build_id, "3970b5ac255dc9fffb55e8d81b69e7916c7f2003");
    const char *text = "# kprof raw v2 source=tick period=10000000 unit=ns window_ms=1003 cpus=4 "
                       "build_id=3970b5ac255dc9fffb55e8d81b69e7916c7f2003\n";
    size_t n = profile_raw_format_header(&h, line, sizeof line);
    assert_string_equal(line, text);
    assert_int_equal(n, strlen(text));
    assert_true(profile_raw_parse_header(line, n, &back));
    assert_string_equal(back.source, "tick");
    assert_int_equal(back.period, 10000000);
    assert_int_equal(back.unit, PROFILE_UNIT_NS);
    assert_int_equal(back.window_ms, 1003);
    assert_int_equal(back.cpus, 4);
    assert_string_equal(back.build_id, h.build_id);
    for (size_t k = 0; k < n; k++)
        assert_false(profile_raw_parse_header(line, k, &back));

    /* no build id; the counter's source word */
    profile_raw_source_word("pmu/nmi intel fixed-ctr1", h.source, sizeof h.source);
    assert_string_equal(h.source, "pmu/nmi-intel-fixed-ctr1");
    h.build_id[0] = 0;
    h.period = 2100000;
    h.unit = PROFILE_UNIT_CYCLES;
    n = profile_raw_format_header(&h, line, sizeof line);
    assert_string_equal(line, "# kprof raw v2 source=pmu/nmi-intel-fixed-ctr1 period=2100000 unit=cycles "
                              "window_ms=1003 cpus=4 build_id=none\n");
    assert_true(profile_raw_parse_header(line, n, &back));
    assert_int_equal(back.period, 2100000);
    assert_int_equal(back.unit, PROFILE_UNIT_CYCLES);
    assert_string_equal(back.source, "pmu/nmi-intel-fixed-ctr1");
    assert_string_equal(back.build_id, "");

    /* what cannot be a header */
    strcpy(h.source, "two words");
    assert_int_equal(profile_raw_format_header(&h, line, sizeof line), 0);
    strcpy(h.source, "tick");
    strcpy(h.build_id, "abc"); /* odd */
    assert_int_equal(profile_raw_format_header(&h, line, sizeof line), 0);
    strcpy(h.build_id, "ABCD");
    assert_int_equal(profile_raw_format_header(&h, line, sizeof line), 0);

    static const char *bad[] = {
        "# kprof raw v1 source=tick period=1 unit=ns window_ms=1 cpus=1 build_id=none\n",
        "# kprof raw v3 source=tick period=1 unit=ns window_ms=1 cpus=1 build_id=none\n",
        "# kprof raw v2 source=tick period_ns=1 window_ms=1 cpus=1 build_id=none\n", /* v1's header */
        "# kprof raw v2 source=tick period=1 window_ms=1 cpus=1 build_id=none\n",
        "# kprof raw v2 source=tick period=1 unit=s window_ms=1 cpus=1 build_id=none\n",
        "# kprof raw v2 source=tick period=1 unit=nsx window_ms=1 cpus=1 build_id=none\n",
        "# kprof raw v2 source=tick period=1 unit=cycle window_ms=1 cpus=1 build_id=none\n",
        "# kprof raw v2 source= period=1 unit=ns window_ms=1 cpus=1 build_id=none\n",
        "# kprof raw v2 source=tick window_ms=1 period=1 unit=ns cpus=1 build_id=none\n",
        "# kprof raw v2 source=tick period=1 unit=ns window_ms=1 cpus=1\n",
        "# kprof raw v2 source=tick period=1 unit=ns window_ms=1 cpus=1 build_id=\n",
        "# kprof raw v2 source=tick period=1 unit=ns window_ms=1 cpus=1 build_id=abc\n",
        "# kprof raw v2 source=tick period=1 unit=ns window_ms=1 cpus=1 build_id=ABCD\n",
        "# kprof raw v2 source=tick period=1 unit=ns window_ms=1 cpus=1 build_id=nonexx\n",
        "# kprof raw v2 source=tick period=1 unit=ns window_ms=4294967296 cpus=1 build_id=none\n",
        "# kprof raw v2 source=tick period=1 unit=ns window_ms=1 cpus=1 build_id=none extra=1\n",
        "# kprof raw v2 source=tick period=1 unit=ns window_ms=1 cpus=1 build_id=none",
        "# kprof raw v2 source=tick period=01 unit=ns window_ms=1 cpus=1 build_id=none\n",
        "# kprof raw v2 source=tick\x01 period=1 unit=ns window_ms=1 cpus=1 build_id=none\n",
        "# kprof raw v2 source=tick period=1 unit=ns window_ms=1 cpus=1 build_id="
        "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff00\n", /* 33 bytes */
        "# kprof raw end samples=1 dropped=0\n",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        if (profile_raw_parse_header(bad[i], strlen(bad[i]), &back))
            fail_msg("\"%s\" parsed as a header", bad[i]);
}

static void test_trailer(void **state)
{
    (void)state;
    struct profile_raw_trailer t = { 812, 3 }, back;
    size_t n = profile_raw_format_trailer(&t, line, sizeof line);
    assert_string_equal(line, "# kprof raw end samples=812 dropped=3\n");
    assert_true(profile_raw_parse_trailer(line, n, &back));
    assert_int_equal(back.samples, 812);
    assert_int_equal(back.dropped, 3);
    for (size_t k = 0; k < n; k++)
        assert_false(profile_raw_parse_trailer(line, k, &back));
    t.samples = UINT64_MAX;
    t.dropped = 0;
    n = profile_raw_format_trailer(&t, line, sizeof line);
    assert_true(profile_raw_parse_trailer(line, n, &back));
    assert_int_equal(back.samples, UINT64_MAX);
    static const char *bad[] = {
        "# kprof raw end samples=1\n", "# kprof raw end samples=1 dropped=0 \n", "# kprof raw end samples=x dropped=0\n",
        "# kprof raw end samples=18446744073709551616 dropped=0\n", "# kprof raw end dropped=0 samples=1\n",
        "# kprof raw end samples=1 dropped=0", "s 1 2 3 - 0x1\n",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        if (profile_raw_parse_trailer(bad[i], strlen(bad[i]), &back))
            fail_msg("\"%s\" parsed as a trailer", bad[i]);
}

/* ---- the build id note -------------------------------------------------------------------------------- */

/* Appends one note (namesz, descsz, type, name padded, desc padded) at *len. */
static void add_note(unsigned char *buf, size_t *len, uint32_t type, const char *name, size_t namesz,
                     const unsigned char *desc, uint32_t descsz)
{
    uint32_t words[3] = { (uint32_t)namesz, descsz, type };
    memcpy(buf + *len, words, sizeof words);
    *len += sizeof words;
    memset(buf + *len, 0, (namesz + 3) & ~3u);
    memcpy(buf + *len, name, namesz);
    *len += (namesz + 3) & ~3u;
    memset(buf + *len, 0, (descsz + 3) & ~3u);
    memcpy(buf + *len, desc, descsz);
    *len += (descsz + 3) & ~3u;
}

static void test_build_id_note(void **state)
{
    (void)state;
    static const unsigned char sha1[20] = { 0x39, 0x70, 0xb5, 0xac, 0x25, 0x5d, 0xc9, 0xff, 0xfb, 0x55,
                                            0xe8, 0xd8, 0x1b, 0x69, 0xe7, 0x91, 0x6c, 0x7f, 0x20, 0x03 };
    unsigned char notes[256];
    size_t len = 0;
    char hex[2 * PROFILE_BUILD_ID_MAX + 1];
    add_note(notes, &len, 3, "GNU", 4, sha1, sizeof sha1);
    assert_int_equal(len, 36);
    assert_true(profile_build_id_hex(notes, len, hex, sizeof hex));
    assert_string_equal(hex, "3970b5ac255dc9fffb55e8d81b69e7916c7f2003");
    /* not enough room for the hex and its NUL */
    assert_false(profile_build_id_hex(notes, len, hex, 40));
    /* truncated sections */
    for (size_t k = 0; k < len; k++)
        assert_false(profile_build_id_hex(notes, k, hex, sizeof hex));

    /* other notes first: another owner, another type; then an odd-sized desc */
    len = 0;
    add_note(notes, &len, 3, "Xen", 4, sha1, 8);
    add_note(notes, &len, 1, "GNU", 4, sha1, 16); /* NT_GNU_ABI_TAG */
    static const unsigned char odd[5] = { 0xde, 0xad, 0xbe, 0xef, 0x01 };
    add_note(notes, &len, 3, "GNU", 4, odd, sizeof odd);
    assert_true(profile_build_id_hex(notes, len, hex, sizeof hex));
    assert_string_equal(hex, "deadbeef01");

    /* no build id at all, an empty one, and sizes that run past the end */
    len = 0;
    add_note(notes, &len, 1, "GNU", 4, sha1, 16);
    assert_false(profile_build_id_hex(notes, len, hex, sizeof hex));
    len = 0;
    add_note(notes, &len, 3, "GNU", 4, sha1, 0);
    assert_false(profile_build_id_hex(notes, len, hex, sizeof hex));
    len = 0;
    add_note(notes, &len, 3, "GNU", 4, sha1, 20);
    uint32_t huge = 0xfffffffdu;
    memcpy(notes + 4, &huge, 4);
    assert_false(profile_build_id_hex(notes, len, hex, sizeof hex));
    memcpy(notes, &huge, 4);
    assert_false(profile_build_id_hex(notes, len, hex, sizeof hex));
    assert_false(profile_build_id_hex(notes, 0, hex, sizeof hex));
}

/* The span rides as one more pair, span=N, in its place among the keys; it is never a pair of the set, is never
 * 0 or written with a leading zero, and comes once. */
static void test_span_as_a_label(void **state)
{
    (void)state;
    static const uint64_t f[] = { 0xffffffff80001000ull };
    struct profile_raw_sample s = sample(1, 7, 50, NULL, 1, f);
    s.span = 42;
    round_trip(&s, "s 1 7 50 span=42 1 - 0xffffffff80001000\n");
    s = sample(1, 7, 50, "job=a,zone=b", 1, f);
    s.span = 18446744073709551615ull;
    round_trip(&s, "s 1 7 50 job=a,span=18446744073709551615,zone=b 1 - 0xffffffff80001000\n");
    s = sample(1, 7, 50, "a=1,b=2,c=3,d=4", 1, f); /* four pairs and the span: five in the line */
    s.span = 9;
    round_trip(&s, "s 1 7 50 a=1,b=2,c=3,d=4,span=9 1 - 0xffffffff80001000\n");
    struct profile_raw_sample back;
    static const char *const bad[] = {
        "s 1 7 50 span=0 1 - 0x1\n", "s 1 7 50 span=042 1 - 0x1\n", "s 1 7 50 span=x 1 - 0x1\n",
        "s 1 7 50 span=18446744073709551616 1 - 0x1\n", "s 1 7 50 span=1,span=2 1 - 0x1\n",
        "s 1 7 50 zone=a,span=1 1 - 0x1\n",
        "s 1 7 50 a=1,b=2,c=3,d=4,e=5,span=1 1 - 0x1\n",
    };
    for (unsigned i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (profile_raw_parse_sample(bad[i], strlen(bad[i]), &back))
            fail_msg("accepted %s", bad[i]);
    /* a set never carries the key span: the writer refuses one that does */
    s = sample(1, 7, 50, NULL, 1, f);
    s.labels.npairs = 1;
    strcpy(s.labels.pairs[0].key, "span");
    strcpy(s.labels.pairs[0].value, "3");
    assert_int_equal(profile_raw_format_sample(&s, line, sizeof line), 0);
}

UNIT_MAIN(NULL, NULL,
          test_sample_text_and_round_trip, test_sample_extremes, test_label_key_starting_with_dash,
          test_sample_period_and_context, test_record_line_carries_period_and_marks, test_garbled_samples_refused,
          test_sample_that_cannot_be_written, test_header, test_trailer, test_build_id_note, test_span_as_a_label)
