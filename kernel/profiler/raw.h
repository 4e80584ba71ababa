/* kernel/profiler/raw.h: the raw sample format of `profile MS [pid|all] raw` -- every sample as one text line
 * instead of a folded report, for tools on the host (scripts/profexport) -- its codec: each kind of line
 * formatted, and parsed back strictly; and a run's raw output into a sink (kernel/profiler/raw.c). Portable:
 * the host tests round-trip it and feed it broken lines.
 *
 * A raw profile is a header line, one line per sample, and a trailer line:
 *
 *   # kprof raw v2 source=tick period=10000000 unit=ns window_ms=1003 cpus=4 build_id=9f0c...e1
 *   s 2 17 5123456789 job=a,netload=sink 10000000 - 0xffffffff80012345 0xffffffff80011000 ...
 *   s 3 9 5123457789 - 10000000 let-in=19400 0xffffffff80013456 ...
 *   # kprof raw end samples=812 dropped=0
 *
 * Header: source is the sample source's name as one word (spaces become '-': "tick",
 * "pmu/nmi-intel-fixed-ctr1"); period and unit the nominal period in what the source counts: on the counter
 * its event's cycles (unit=cycles: unhalted core cycles, "every 2100000 cycles"), on the tick nanoseconds
 * (unit=ns: 10000000 for the 100 Hz tick) -- never a conversion of one into the other stated as exact;
 * window_ms the measured window; cpus the number of CPUs that were sampling; build_id the lowercase hex of the
 * kernel ELF's GNU build-id note ("none" when the image has none), so a tool can refuse to symbolise against
 * another build.
 * Sample: "s", the CPU, the pid (0: no task), the kernel clock when it was taken (time_ns(), nanoseconds since
 * boot, signed decimal), the task's label set and its span as one more pair span=N ("k=v,span=7" sorted by
 * key, or "-"), the sample's own period in the header's unit (its weight: a throttled CPU's counter samples
 * stand for a doubled period; the tick's samples of a counter run are in TSC cycles; 0: unknown, weighs as 1),
 * its context -- "-", or what the report marks, comma-separated in this order: "irqs-off" (interrupts were
 * disabled there), "in-irq" (an interrupt handler), "let-in=US" (a tick held off US microseconds by
 * interrupts-off code, let in just after the instruction that re-enabled them) -- then the addresses, leaf
 * first: frame 0 is the interrupted instruction, the rest return addresses (lowercase hex with 0x, 1 to 8 in
 * all). A wall run's sample (`profile ... raw wall`: one task at one moment, whatever it was doing) has instead
 * one context word for what the task was doing: "running", "runnable" or "waiting=WAIT" (WAIT: sleep, input,
 * net, task, device), and its frames start at the call the task waits in (a return address) when it waits.
 * Trailer: the number of sample lines sent and the samples dropped because a per-CPU ring was full; a
 * receiver that counted a different number of sample lines lost some. Version 1 (before the period and the
 * context) had period_ns= in the header and neither field in a sample; the host's readers still take it.
 *
 * Every number is written without leading zeros and every field is separated by exactly one space; the parser
 * accepts only that, and only a line that ends with its newline ("\n", or "\r\n" from a terminal): a line
 * cut short anywhere lacks it, so truncation is never mistaken for a shorter valid line. */
#ifndef KERNEL_PROFILER_RAW_H
#define KERNEL_PROFILER_RAW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "kernel/labels.h"
#include "kernel/lib/sink.h"
#include "kernel/profiler.h"
#include "kernel/profiler/run.h"
#include "kernel/profiler_ring.h"

#define PROFILE_RAW_VERSION 2
#define PROFILE_RAW_CONTEXT_MAX 40 /* "irqs-off,in-irq,let-in=4294967295" and more */

/* The unit of a run's periods: what its source counts. */
enum profile_unit {
    PROFILE_UNIT_NS,     /* "ns": the tick */
    PROFILE_UNIT_CYCLES, /* "cycles": the counter's event */
};
#define PROFILE_RAW_LINE_MAX 512   /* longer than the longest line any of the three kinds can be */
#define PROFILE_RAW_SOURCE_MAX 64  /* the source word and its NUL */
#define PROFILE_BUILD_ID_MAX 32    /* bytes of build id (sha1 is 20) */

struct profile_raw_header {
    char source[PROFILE_RAW_SOURCE_MAX];          /* 1..63 printable characters, no space */
    uint64_t period;                              /* the nominal period, in unit */
    enum profile_unit unit;
    uint32_t window_ms;
    uint32_t cpus;
    char build_id[2 * PROFILE_BUILD_ID_MAX + 1];  /* lowercase hex of 1..32 bytes, or "" for none */
};

struct profile_raw_sample {
    uint32_t cpu;
    uint32_t pid;
    int64_t time_ns;
    struct label_set labels;  /* npairs 0: no labels ("-") */
    uint64_t span;            /* the task's span, 0 for none: written as the pair span=N among the labels */
    uint32_t period;          /* in the header's unit */
    uint8_t flags;            /* PROFILE_REC_IRQS_OFF, _IN_IRQ, _LET_IN; or PROFILE_REC_WALL alone */
    uint32_t held_off_us;     /* with PROFILE_REC_LET_IN; 0 otherwise */
    uint8_t activity;         /* PROFILE_REC_WALL: enum task_activity (running, runnable, waiting) ... */
    uint8_t waiting_on;       /* ... and when waiting, on what (enum task_wait) */
    unsigned nframes;         /* 1 .. PROFILE_MAX_FRAMES */
    uint64_t frames[PROFILE_MAX_FRAMES];
};

struct profile_raw_trailer {
    uint64_t samples;
    uint64_t dropped;
};

/* Each writes its whole line, newline included, into buf and returns its length; 0 when the line does not
 * fit in cap (with its NUL) or the fields cannot be written as a valid line (a bad source word or build id,
 * no frames or too many, a label that breaks the label rules). */
size_t profile_raw_format_header(const struct profile_raw_header *h, char *buf, size_t cap);
size_t profile_raw_format_sample(const struct profile_raw_sample *s, char *buf, size_t cap);
size_t profile_raw_format_trailer(const struct profile_raw_trailer *t, char *buf, size_t cap);

/* Each parses the len bytes at line (no NUL needed) as one complete line of its kind; false for anything
 * else: another kind, a missing newline, a field out of range or malformed, extra or missing spaces. *out is
 * unspecified after false. */
bool profile_raw_parse_header(const char *line, size_t len, struct profile_raw_header *out);
bool profile_raw_parse_sample(const char *line, size_t len, struct profile_raw_sample *out);
bool profile_raw_parse_trailer(const char *line, size_t len, struct profile_raw_trailer *out);

/* The unit's header word: "ns" or "cycles". */
const char *profile_unit_word(enum profile_unit unit);
/* The unit a header word names; false for anything but "ns" and "cycles". */
bool profile_unit_from_word(const char *word, enum profile_unit *unit);
/* A run's unit: cycles on a counter run, ns on a tick run. */
enum profile_unit profile_run_unit(const struct profile_run *run);
/* A run's nominal period in its unit. */
uint64_t profile_run_period(const struct profile_run *run);

/* The source name as one header word into buf: spaces become '-', anything unprintable '?'. */
void profile_raw_source_word(const char *name, char *buf, size_t cap);

/* The lowercase hex of the desc of the first GNU build-id note (type 3, name "GNU") among the ELF notes in
 * [notes, notes + len), into hex; false when there is none, a note runs past the end, or it does not fit. */
bool profile_build_id_hex(const void *notes, size_t len, char *hex, size_t cap);

/* ---- the raw output of a run -------------------------------------------------------------------------- */

/* The raw sample line of rec into line; its length, 0 if it cannot be written (it always can in
 * PROFILE_RAW_LINE_MAX: frames are clamped to 1..8 and labels come from interned sets). */
size_t profile_raw_record_line(const struct profile_record *rec, char *line, size_t cap);

/* The raw form of run: a header naming build_id (hex, "" for none), every record that passes filter as one
 * line (consuming them), and a trailer with the number of lines and drops. Task context; allocates nothing.
 * Returns 0. */
int profile_report_raw(struct profile_run *run, const struct profile_filter *filter, const char *build_id,
                       struct sink *out);

/* The same in steps, for a window drained while it runs (the profile command): the header, the records now
 * in the rings that pass filter as lines (profiler_drain, consuming them; counted into *t), and the trailer,
 * whose dropped= is profiler_drops added to what t->dropped already held (the caller's own losses: the
 * window's copy full). */
void profile_raw_begin(const struct profile_run *run, const char *build_id, struct sink *out);
/* A drain's take (profiler_take_fn) as raw lines: each wanted record a line into out, counted in trailer. */
struct profile_raw_into {
    struct sink *out;
    struct profile_raw_trailer *trailer;
};
void profile_raw_take(void *into, const struct profile_record *rec);
void profile_raw_drain(struct profile_run *run, const struct profile_filter *filter, struct sink *out,
                       struct profile_raw_trailer *t);
void profile_raw_end(const struct profile_run *run, struct profile_raw_trailer *t, struct sink *out);

#endif
