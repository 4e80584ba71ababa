/* tests/host/kernel_report.c: the kernel's own fold, report and raw form (kernel/profiler/fold.c, report.c,
 * raw.c, drained by run.c) as a filter, so tests/host/test_kprof_profile.py can hold scripts/kprof_profile.py's
 * fold and format against the real thing on the same records. Built on the host by that test, against
 * tests/unit/fake_hal.c.
 *
 * Reads commands from standard input, one per line, and writes each report followed by a line "@@end":
 *   sym ADDR SIZE NAME           a symbol (hex address, decimal size); in address order
 *   text START END               the text range (hex); ends the symbol table
 *   label ID K=V[,K=V...]        interns a label set under the number ID
 *   case RUN WINDOW_MS NCPUS HZ PERIOD_NS CYCLES SOURCE...
 *                                empties the rings (their indexes just short of the 2^32 wrap) and the CPUs'
 *                                accounts for run RUN on NCPUS CPUs: the tick's rate, the period, the
 *                                counter's period in cycles and the source's name; a counter run unless
 *                                `reason` follows
 *   reason TEXT...               the case is a tick run, for this reason (run->tick_reason)
 *   cpu N RUN SOURCE THROTTLED PERIOD_CYCLES STOPPED_NS HELD_NS LET_IN_PC ELSEWHERE_NS
 *                                CPU N's account (struct profiler_cpu_run; SOURCE as enum profiler_cpu_source,
 *                                LET_IN_PC hex): the per-CPU notes
 *   snap N COUNTING PMI ENABLED FROZEN MASKED NMI REG=VALUE...
 *                                what CPU N's stopped counter showed (flags 0/1; VALUE hex or #GP; '_' in a
 *                                register's name stands for a space)
 *   site WORD|-                  what irq_enable_before() answers for every pc ("sti", "popf", - for none)
 *   busy NS...                   each CPU's busy time in the window (run->busy_ns), one per CPU of the case
 *   rec CPU PID RUN LABEL FLAGS HELD_US PERIOD F...
 *                                one record (LABEL: a label ID or -; FLAGS: PROFILE_REC_* in decimal; HELD_US:
 *                                held_off_us; PERIOD: its period, its weight; F: hex frames, leaf first)
 *   report CHAINS PID|- K=V|-    the report of the case's records (consuming them), with the filters
 *   raw BUILD_ID                 the raw form of the case's records (consuming them)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_hal.h"
#include "harness_input.h"
#include "kernel/heap.h"
#include "kernel/labels.h"
#include "kernel/profiler/raw.h"
#include "kernel/profiler/report.h"
#include "kernel/lib/sink.h"
#include "kernel/symbols.h"

#define NCPUS 16 /* at most; each case says how many */

void *kzalloc(size_t size) { return calloc(1, size); }
void kfree(void *ptr) { free(ptr); }

static struct profile_record storage[NCPUS][PROFILE_RING_RECORDS];
static struct profile_ring rings[NCPUS];
static struct profile_run run;
static struct profiler_cpu_run cpu_runs[NCPUS];
static char source[256];
static char reason[256];
static char site[16];
static char reg_names[NCPUS][PMU_SNAPSHOT_REGS][32];
static char out[1 << 20];

static void flush_sink(struct buffer_sink *bs, const char *line)
{
    if (bs->truncated)
        harness_die("output too long", line);
    fputs(out, stdout);
    fputs("@@end\n", stdout);
    fflush(stdout);
}

static void do_case(char *args, const char *line)
{
    unsigned number, window, ncpus, hz;
    unsigned long long period_ns, cycles;
    int used = 0;
    if (sscanf(args, "%u %u %u %u %llu %llu %n", &number, &window, &ncpus, &hz, &period_ns, &cycles, &used) != 6
        || used == 0 || ncpus == 0 || ncpus > NCPUS)
        harness_die("bad case", line);
    snprintf(source, sizeof source, "%s", args + used);
    source[strcspn(source, "\n")] = 0;
    for (unsigned i = 0; i < NCPUS; i++)
        profile_ring_init(&rings[i], storage[i], PROFILE_RING_RECORDS, UINT32_MAX - 5 - 100 * i);
    memset(cpu_runs, 0, sizeof cpu_runs);
    run = (struct profile_run){ .rings = rings, .ncpus = ncpus, .run = number, .source = source,
                                .source_name = source, .tick_reason = NULL, .tick_hz = hz, .period_ns = period_ns,
                                .period_cycles = cycles, .window_ms = window, .cpu = cpu_runs };
}

static void do_reason(char *args, const char *line)
{
    (void)line;
    snprintf(reason, sizeof reason, "%s", args);
    reason[strcspn(reason, "\n")] = 0;
    run.tick_reason = reason;
}

static void do_cpu(char *args, const char *line)
{
    unsigned n, number, src, throttled;
    unsigned long long period, held, elsewhere, pc;
    long long stopped;
    if (sscanf(args, "%u %u %u %u %llu %lld %llu %llx %llu", &n, &number, &src, &throttled, &period, &stopped,
               &held, &pc, &elsewhere) != 9 || n >= run.ncpus || src > PROFILER_CPU_TICK_STOPPED)
        harness_die("bad cpu", line);
    struct profiler_cpu_run *c = &cpu_runs[n];
    c->run = number;
    c->source = (uint8_t)src;
    c->throttled = throttled != 0;
    c->period_cycles = period;
    c->stopped_ns = stopped;
    c->held_off_ns = held;
    c->let_in_pc = (uintptr_t)pc;
    c->late_elsewhere_ns = elsewhere;
}

static void do_snap(char *args, const char *line)
{
    char *word[7 + PMU_SNAPSHOT_REGS];
    unsigned n = harness_words(args, word, sizeof word / sizeof word[0], line);
    if (n < 7)
        harness_die("short snap", line);
    unsigned cpu = (unsigned)strtoul(word[0], NULL, 10);
    if (cpu >= NCPUS)
        harness_die("bad cpu", line);
    struct pmu_snapshot *snap = &cpu_runs[cpu].stopped_msrs;
    memset(snap, 0, sizeof *snap);
    bool *flags[] = { &snap->counting, &snap->pmi_enabled, &snap->globally_enabled, &snap->frozen,
                      &snap->lvt_masked, &snap->lvt_nmi };
    for (unsigned i = 0; i < 6; i++)
        *flags[i] = strcmp(word[1 + i], "1") == 0;
    for (unsigned i = 7; i < n; i++) {
        char *eq = strchr(word[i], '=');
        if (!eq || eq - word[i] >= 32)
            harness_die("bad register", line);
        char *name = reg_names[cpu][snap->count];
        memcpy(name, word[i], (size_t)(eq - word[i]));
        name[eq - word[i]] = 0;
        for (char *p = name; *p; p++)
            if (*p == '_')
                *p = ' ';
        snap->regs[snap->count].name = name;
        snap->regs[snap->count].faulted = strcmp(eq + 1, "#GP") == 0;
        snap->regs[snap->count].value = snap->regs[snap->count].faulted ? 0 : strtoull(eq + 1, NULL, 16);
        snap->count++;
    }
}

static uint64_t busy[NCPUS];

static void do_busy(char *args, const char *line)
{
    char *save = NULL;
    unsigned n = 0;
    for (char *w = strtok_r(args, " \n", &save); w; w = strtok_r(NULL, " \n", &save)) {
        if (n == NCPUS)
            harness_die("too many busy times", line);
        busy[n++] = strtoull(w, NULL, 10);
    }
    if (n != run.ncpus)
        harness_die("a busy time per cpu", line);
    run.busy_ns = busy;
}

static void do_site(char *args, const char *line)
{
    (void)line;
    snprintf(site, sizeof site, "%s", args);
    site[strcspn(site, "\n")] = 0;
    fake_irq_enable_site = strcmp(site, "-") == 0 ? NULL : site;
}

static void do_rec(char *args, const char *line)
{
    char *word[4 + 3 + PROFILE_MAX_FRAMES];
    unsigned n = harness_words(args, word, sizeof word / sizeof word[0], line);
    if (n < 8)
        harness_die("short rec", line);
    unsigned cpu = (unsigned)strtoul(word[0], NULL, 10);
    if (cpu >= run.ncpus)
        harness_die("bad cpu", line);
    struct profile_record *rec = profile_ring_reserve(&rings[cpu]);
    if (!rec)
        return; /* full: a drop, as in the sampler */
    memset(rec, 0, sizeof *rec);
    rec->cpu = (uint16_t)cpu;
    rec->pid = (uint32_t)strtoul(word[1], NULL, 10);
    rec->run = (uint32_t)strtoul(word[2], NULL, 10);
    rec->labels = harness_label_set(word[3], line);
    harness_record_tail(rec, word + 4, n - 4, line);
    profile_ring_commit(&rings[cpu]);
}

static void do_report(char *args, const char *line)
{
    unsigned chains;
    char pid[32], label[64];
    if (sscanf(args, "%u %31s %63s", &chains, pid, label) != 3)
        harness_die("bad report", line);
    struct profile_filter filter = { 0 };
    if (strcmp(pid, "-") != 0) {
        filter.by_pid = true;
        filter.pid = (uint32_t)strtoul(pid, NULL, 10);
    }
    if (strcmp(label, "-") != 0) {
        if (!label_parse_pair(label, &filter.label))
            harness_die("bad label filter", line);
        filter.by_label = true;
    }
    struct buffer_sink bs;
    buffer_sink_init(&bs, out, sizeof out);
    if (profile_report(&run, &filter, chains, &harness_symtab, &bs.sink) != 0)
        harness_die("report failed", line);
    flush_sink(&bs, line);
}

static void do_raw(char *args, const char *line)
{
    char build_id[80];
    if (sscanf(args, "%79s", build_id) != 1)
        harness_die("bad raw", line);
    struct buffer_sink bs;
    buffer_sink_init(&bs, out, sizeof out);
    profile_report_raw(&run, NULL, build_id, &bs.sink);
    flush_sink(&bs, line);
}

int main(void)
{
    static const struct harness_command commands[] = {
        { "case", do_case }, { "reason", do_reason }, { "cpu", do_cpu },       { "snap", do_snap },
        { "busy", do_busy }, { "site", do_site },     { "rec", do_rec },       { "report", do_report },
        { "raw", do_raw },
    };
    fake_cpu_count = NCPUS;
    harness_run("kernel_report", commands, sizeof commands / sizeof commands[0]);
    return 0;
}
