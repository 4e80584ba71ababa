/* tests/host/kernel_report.c: the kernel's own report and raw form (kernel/profiler_report.c) as a filter, so
 * tests/host/test_kprof_profile.py can hold scripts/kprof_profile.py's fold and format against the real thing
 * on the same records. Built on the host by that test, against tests/unit/fake_hal.c.
 *
 * Reads commands from standard input, one per line, and writes each report followed by a line "@@end":
 *   sym ADDR SIZE NAME           a symbol (hex address, decimal size); in address order
 *   text START END               the text range (hex); ends the symbol table
 *   label ID K=V[,K=V...]        interns a label set under the number ID
 *   case RUN WINDOW_MS SOURCE... empties the rings (their indexes just short of the 2^32 wrap) for run RUN
 *   rec CPU PID RUN LABEL F...   one record (LABEL: a label ID or -; F: hex frames, leaf first)
 *   report CHAINS PID|- K=V|-    the report of the case's records (consuming them), with the filters
 *   raw BUILD_ID                 the raw form of the case's records (consuming them)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_hal.h"
#include "kernel/heap.h"
#include "kernel/labels.h"
#include "kernel/profiler_report.h"
#include "kernel/sink.h"
#include "kernel/symbols.h"

#define NCPUS 4
#define MAX_SYMS 4096
#define MAX_LABELS 64

void *kzalloc(size_t size) { return calloc(1, size); }
void kfree(void *ptr) { free(ptr); }

static struct ksym syms[MAX_SYMS];
static char names[MAX_SYMS * 64];
static size_t names_len;
static struct symtab tab = { syms, 0, names, 0, 0 };

static const struct label_set *label_sets[MAX_LABELS];
static struct profile_record storage[NCPUS][PROFILE_RING_RECORDS];
static struct profile_ring rings[NCPUS];
static struct profile_run run;
static char source[256];
static char out[1 << 20];

static void die(const char *what, const char *line)
{
    fprintf(stderr, "kernel_report: %s: %s", what, line);
    exit(2);
}

static void flush_sink(struct buffer_sink *bs, const char *line)
{
    if (bs->truncated)
        die("output too long", line);
    fputs(out, stdout);
    fputs("@@end\n", stdout);
    fflush(stdout);
}

static void do_label(char *args, const char *line)
{
    unsigned id;
    char text[256];
    if (sscanf(args, "%u %255s", &id, text) != 2 || id >= MAX_LABELS)
        die("bad label", line);
    struct label_pair pairs[LABEL_MAX_PAIRS];
    unsigned n = 0;
    for (char *word = strtok(text, ","); word; word = strtok(NULL, ",")) {
        if (n == LABEL_MAX_PAIRS || !label_parse_pair(word, &pairs[n]))
            die("bad label pair", line);
        n++;
    }
    const char *why = NULL;
    label_sets[id] = label_intern(pairs, n, &why);
    if (!label_sets[id])
        die(why ? why : "label refused", line);
}

static void do_case(char *args, const char *line)
{
    unsigned number, window;
    int used = 0;
    if (sscanf(args, "%u %u %n", &number, &window, &used) != 2 || used == 0)
        die("bad case", line);
    snprintf(source, sizeof source, "%s", args + used);
    source[strcspn(source, "\n")] = 0;
    for (unsigned i = 0; i < NCPUS; i++)
        profile_ring_init(&rings[i], storage[i], PROFILE_RING_RECORDS, UINT32_MAX - 5 - 100 * i);
    memset(&run, 0, sizeof run);
    run.rings = rings;
    run.ncpus = NCPUS;
    run.run = number;
    run.source = source;
    run.source_name = source;
    run.period_ns = PROFILE_TICK_PERIOD_NS;
    run.window_ms = window;
}

static void do_rec(char *args, const char *line)
{
    char *save = NULL;
    char *word[4 + PROFILE_MAX_FRAMES + 1];
    unsigned n = 0;
    for (char *w = strtok_r(args, " \n", &save); w; w = strtok_r(NULL, " \n", &save)) {
        if (n == sizeof word / sizeof word[0])
            die("too many fields", line);
        word[n++] = w;
    }
    if (n < 5)
        die("short rec", line);
    unsigned cpu = (unsigned)strtoul(word[0], NULL, 10);
    if (cpu >= NCPUS)
        die("bad cpu", line);
    struct profile_record *rec = profile_ring_reserve(&rings[cpu]);
    if (!rec)
        return; /* full: a drop, as in the sampler */
    memset(rec, 0, sizeof *rec);
    rec->cpu = (uint16_t)cpu;
    rec->pid = (uint32_t)strtoul(word[1], NULL, 10);
    rec->run = (uint32_t)strtoul(word[2], NULL, 10);
    rec->labels = strcmp(word[3], "-") == 0 ? NULL : label_sets[strtoul(word[3], NULL, 10) % MAX_LABELS];
    rec->nframes = (uint16_t)(n - 4);
    for (unsigned i = 4; i < n; i++)
        rec->frames[i - 4] = (uintptr_t)strtoull(word[i], NULL, 16);
    profile_ring_commit(&rings[cpu]);
}

static void do_report(char *args, const char *line)
{
    unsigned chains;
    char pid[32], label[64];
    if (sscanf(args, "%u %31s %63s", &chains, pid, label) != 3)
        die("bad report", line);
    struct profile_filter filter = { 0 };
    if (strcmp(pid, "-") != 0) {
        filter.by_pid = true;
        filter.pid = (uint32_t)strtoul(pid, NULL, 10);
    }
    if (strcmp(label, "-") != 0) {
        if (!label_parse_pair(label, &filter.label))
            die("bad label filter", line);
        filter.by_label = true;
    }
    struct buffer_sink bs;
    buffer_sink_init(&bs, out, sizeof out);
    if (profile_report(&run, &filter, chains, &tab, &bs.sink) != 0)
        die("report failed", line);
    flush_sink(&bs, line);
}

static void do_raw(char *args, const char *line)
{
    char build_id[80];
    if (sscanf(args, "%79s", build_id) != 1)
        die("bad raw", line);
    struct buffer_sink bs;
    buffer_sink_init(&bs, out, sizeof out);
    profile_report_raw(&run, NULL, build_id, &bs.sink);
    flush_sink(&bs, line);
}

int main(void)
{
    static char line[4096];
    fake_cpu_count = NCPUS;
    while (fgets(line, sizeof line, stdin)) {
        char copy[sizeof line];
        memcpy(copy, line, sizeof line);
        char *args = strchr(copy, ' ');
        args = args ? args + 1 : copy + strlen(copy);
        if (strncmp(line, "sym ", 4) == 0) {
            unsigned long long addr;
            unsigned size;
            char name[64];
            if (tab.count == MAX_SYMS || sscanf(args, "%llx %u %63s", &addr, &size, name) != 3)
                die("bad sym", line);
            syms[tab.count].addr = addr;
            syms[tab.count].size = size;
            syms[tab.count].name_offset = (uint32_t)names_len;
            memcpy(names + names_len, name, strlen(name) + 1);
            names_len += strlen(name) + 1;
            tab.count++;
        } else if (strncmp(line, "text ", 5) == 0) {
            unsigned long long start, end;
            if (sscanf(args, "%llx %llx", &start, &end) != 2)
                die("bad text", line);
            tab.text_start = start;
            tab.text_end = end;
        } else if (strncmp(line, "label ", 6) == 0) {
            do_label(args, line);
        } else if (strncmp(line, "case ", 5) == 0) {
            do_case(args, line);
        } else if (strncmp(line, "rec ", 4) == 0) {
            do_rec(args, line);
        } else if (strncmp(line, "report ", 7) == 0) {
            do_report(args, line);
        } else if (strncmp(line, "raw ", 4) == 0) {
            do_raw(args, line);
        } else {
            die("unknown command", line);
        }
    }
    return 0;
}
