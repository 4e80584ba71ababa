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
#include "kernel/heap.h"
#include "kernel/labels.h"
#include "kernel/profiler/pprof_encode.h"
#include "kernel/profiler/pprof_fold.h"
#include "kernel/symbols.h"

#define NCPUS 16
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
static char source[128], build_id[80];

static void die(const char *what, const char *line)
{
    fprintf(stderr, "pprof_harness: %s: %s", what, line);
    exit(2);
}

static const struct label_set *parse_set(char *text, const char *line)
{
    struct label_pair pairs[LABEL_MAX_PAIRS];
    unsigned n = 0;
    for (char *word = strtok(text, ","); word; word = strtok(NULL, ",")) {
        if (n == LABEL_MAX_PAIRS || !label_parse_pair(word, &pairs[n++]))
            die("bad label set", line);
    }
    const struct label_set *set = label_intern(pairs, n, NULL);
    if (!set)
        die("label set refused", line);
    return set;
}

int main(void)
{
    char line[4096];
    struct pprof_run_info info;
    memset(&info, 0, sizeof info);
    info.source = source;
    info.build_id = build_id;
    for (unsigned i = 0; i < NCPUS; i++)
        profile_ring_init(&rings[i], storage[i], PROFILE_RING_RECORDS, UINT32_MAX - 5);
    run.rings = rings;
    run.ncpus = NCPUS;
    run.run = 1;
    struct pprof_fold *fold = pprof_fold_create();
    while (fgets(line, sizeof line, stdin)) {
        char copy[4096];
        strcpy(copy, line);
        char *cmd = strtok(copy, " \n");
        if (!cmd)
            continue;
        if (strcmp(cmd, "sym") == 0) {
            struct ksym *s = &syms[tab.count++];
            s->addr = strtoull(strtok(NULL, " \n"), NULL, 16);
            s->size = (uint32_t)strtoul(strtok(NULL, " \n"), NULL, 10);
            const char *name = strtok(NULL, "\n");
            s->name_offset = (uint32_t)names_len;
            strcpy(names + names_len, name);
            names_len += strlen(name) + 1;
        } else if (strcmp(cmd, "text") == 0) {
            tab.text_start = strtoull(strtok(NULL, " \n"), NULL, 16);
            tab.text_end = strtoull(strtok(NULL, " \n"), NULL, 16);
        } else if (strcmp(cmd, "label") == 0) {
            unsigned id = (unsigned)atoi(strtok(NULL, " \n"));
            if (id >= MAX_LABELS)
                die("label id", line);
            label_sets[id] = parse_set(strtok(NULL, " \n"), line);
        } else if (strcmp(cmd, "info") == 0) {
            snprintf(source, sizeof source, "%s", strtok(NULL, " \n"));
            info.cycles = atoi(strtok(NULL, " \n")) != 0;
            info.period = strtoull(strtok(NULL, " \n"), NULL, 10);
            info.window_ms = (uint32_t)strtoul(strtok(NULL, " \n"), NULL, 10);
            info.ncpus = (unsigned)atoi(strtok(NULL, " \n"));
            info.ring_drops = strtoull(strtok(NULL, " \n"), NULL, 10);
            const char *id = strtok(NULL, " \n");
            snprintf(build_id, sizeof build_id, "%s", strcmp(id, "-") == 0 ? "" : id);
            info.memory_start = strtoull(strtok(NULL, " \n"), NULL, 16);
            info.memory_limit = strtoull(strtok(NULL, " \n"), NULL, 16);
            info.file_offset = strtoull(strtok(NULL, " \n"), NULL, 16);
            info.time_nanos = strtoll(strtok(NULL, " \n"), NULL, 10);
        } else if (strcmp(cmd, "rec") == 0) {
            unsigned cpu = (unsigned)atoi(strtok(NULL, " \n"));
            if (cpu >= NCPUS)
                die("cpu", line);
            if (profile_ring_count(&rings[cpu]) == PROFILE_RING_RECORDS)
                pprof_fold_drain(fold, &run, NULL); /* as the window drains, before a ring fills */
            struct profile_record *rec = profile_ring_reserve(&rings[cpu]);
            memset(rec, 0, sizeof *rec);
            rec->run = run.run;
            rec->cpu = (uint16_t)cpu;
            rec->pid = (uint32_t)strtoul(strtok(NULL, " \n"), NULL, 10);
            const char *label = strtok(NULL, " \n");
            rec->labels = strcmp(label, "-") == 0 ? NULL : label_sets[atoi(label)];
            rec->span = strtoull(strtok(NULL, " \n"), NULL, 10);
            rec->flags = (uint8_t)atoi(strtok(NULL, " \n"));
            rec->held_off_us = (uint32_t)strtoul(strtok(NULL, " \n"), NULL, 10);
            rec->period = (uint32_t)strtoul(strtok(NULL, " \n"), NULL, 10);
            for (char *f = strtok(NULL, " \n"); f && rec->nframes < PROFILE_MAX_FRAMES; f = strtok(NULL, " \n"))
                rec->frames[rec->nframes++] = (uintptr_t)strtoull(f, NULL, 16);
            profile_ring_commit(&rings[cpu]);
        } else if (strcmp(cmd, "encode") == 0) {
            pprof_fold_drain(fold, &run, NULL);
            uint8_t *data;
            size_t len;
            if (!pprof_encode(fold, &info, &tab, &data, &len)) {
                printf("failed\n");
                continue;
            }
            const char *path = strtok(NULL, " \n");
            const char *gzip = strtok(NULL, " \n");
            bool gzipped = gzip && strcmp(gzip, "gzip") == 0 && pprof_gzip(&data, &len);
            FILE *out = fopen(path, "wb");
            if (!out || fwrite(data, 1, len, out) != len || fclose(out) != 0)
                die("cannot write", line);
            kfree(data);
            printf("ok %zu %u%s\n", len, fold->used, gzipped ? " gzipped" : "");
        } else {
            die("unknown command", line);
        }
    }
    pprof_fold_destroy(fold);
    return 0;
}
