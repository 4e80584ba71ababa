/* tests/host/pprof_harness.c: the kernel's pprof fold and encoder (kernel/profiler/pprof_fold.c,
 * pprof_encode.c, pb_writer.c, drained by run.c) as a filter, so tests/host/test_pprof_encode.py can read what
 * they write with pprof's own schema and `go tool pprof`. Built on the host by that test, against
 * tests/unit/fake_hal.c.
 *
 * Reads commands from standard input, one per line:
 *   sym ADDR SIZE NAME       a symbol (hex address, decimal size); in address order
 *   text START END          the text range (hex); ends the symbol table
 *   label ID K=V[,K=V...]   interns a label set under the number ID
 *   info SOURCE CYCLES PERIOD WINDOW_MS NCPUS DROPS BUILD_ID|- MAP_START MAP_LIMIT MAP_OFFSET TIME_NANOS
 *                           the run (CYCLES 0: the tick's unit, 1: the counter's; the mapping in hex)
 *   rec CPU PID LABEL|- SPAN FLAGS HELD_US PERIOD F...
 *                           one record of the run into CPU's ring (FLAGS: PROFILE_REC_* in decimal; F: hex
 *                           frames, leaf first); the rings are drained into the fold as they fill
 *   encode FILE [gzip]      the rest drained, the profile encoded into FILE (gzipped when that is smaller, with
 *                           gzip); prints "ok LEN KEYS" (and " gzipped" when it was) or "failed"
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_hal.h"
#include "harness_input.h"
#include "kernel/heap.h"
#include "kernel/labels.h"
#include "kernel/profiler/pprof_encode.h"
#include "kernel/profiler/pprof_fold.h"
#include "kernel/symbols.h"

#define NCPUS 16

void *kzalloc(size_t size) { return calloc(1, size); }
void kfree(void *ptr) { free(ptr); }

static struct profile_record storage[NCPUS][PROFILE_RING_RECORDS];
static struct profile_ring rings[NCPUS];
static struct profile_run run;
static struct pprof_fold *fold;
static struct pprof_run_info info;
static char source[128], build_id[80];

static void do_info(char *args, const char *line)
{
    char *word[11];
    if (harness_words(args, word, 11, line) != 11)
        harness_die("bad info", line);
    snprintf(source, sizeof source, "%s", word[0]);
    info.cycles = atoi(word[1]) != 0;
    info.period = strtoull(word[2], NULL, 10);
    info.window_ms = (uint32_t)strtoul(word[3], NULL, 10);
    info.ncpus = (unsigned)atoi(word[4]);
    info.ring_drops = strtoull(word[5], NULL, 10);
    snprintf(build_id, sizeof build_id, "%s", strcmp(word[6], "-") == 0 ? "" : word[6]);
    info.memory_start = strtoull(word[7], NULL, 16);
    info.memory_limit = strtoull(word[8], NULL, 16);
    info.file_offset = strtoull(word[9], NULL, 16);
    info.time_nanos = strtoll(word[10], NULL, 10);
}

static void do_rec(char *args, const char *line)
{
    char *word[4 + 3 + PROFILE_MAX_FRAMES];
    unsigned n = harness_words(args, word, sizeof word / sizeof word[0], line);
    if (n < 7)
        harness_die("short rec", line);
    unsigned cpu = (unsigned)atoi(word[0]);
    if (cpu >= NCPUS)
        harness_die("cpu", line);
    if (profile_ring_count(&rings[cpu]) == PROFILE_RING_RECORDS)
        pprof_fold_drain(fold, &run, NULL); /* as the window drains, before a ring fills */
    struct profile_record *rec = profile_ring_reserve(&rings[cpu]);
    memset(rec, 0, sizeof *rec);
    rec->run = run.run;
    rec->cpu = (uint16_t)cpu;
    rec->pid = (uint32_t)strtoul(word[1], NULL, 10);
    rec->labels = harness_label_set(word[2], line);
    rec->span = strtoull(word[3], NULL, 10);
    harness_record_tail(rec, word + 4, n - 4, line);
    profile_ring_commit(&rings[cpu]);
}

static void do_encode(char *args, const char *line)
{
    pprof_fold_drain(fold, &run, NULL);
    uint8_t *data;
    size_t len;
    if (!pprof_encode(fold, &info, &harness_symtab, &data, &len)) {
        printf("failed\n");
        return;
    }
    char *word[2];
    unsigned n = harness_words(args, word, 2, line);
    if (n == 0)
        harness_die("no file", line);
    bool gzipped = n == 2 && strcmp(word[1], "gzip") == 0 && pprof_gzip(&data, &len);
    FILE *out = fopen(word[0], "wb");
    if (!out || fwrite(data, 1, len, out) != len || fclose(out) != 0)
        harness_die("cannot write", line);
    kfree(data);
    printf("ok %zu %u%s\n", len, fold->used, gzipped ? " gzipped" : "");
}

int main(void)
{
    static const struct harness_command commands[] = { { "info", do_info }, { "rec", do_rec },
                                                       { "encode", do_encode } };
    info.source = source;
    info.build_id = build_id;
    for (unsigned i = 0; i < NCPUS; i++)
        profile_ring_init(&rings[i], storage[i], PROFILE_RING_RECORDS, UINT32_MAX - 5);
    run.rings = rings;
    run.ncpus = NCPUS;
    run.run = 1;
    fold = pprof_fold_create();
    harness_run("pprof_harness", commands, sizeof commands / sizeof commands[0]);
    pprof_fold_destroy(fold);
    return 0;
}
