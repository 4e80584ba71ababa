/* tests/host/kernel_stream.c: the kernel's own stream packer and accounting (kernel/profiler/stream_codec.c) as a
 * filter, so tests/host/test_profexport_stream.py can hold scripts/kprof_stream.py's parser and accounting
 * against the datagrams the kernel really builds. Built on the host by that test, against tests/unit/fake_hal.c.
 *
 * Reads commands from standard input, one per line:
 *   init RUN CPUS PERIOD BUILD_ID|- SOURCE      begins a stream (RUN hex) of a run on CPUS CPUs: a tick run
 *                                              (PERIOD in ns) when SOURCE is "tick", else a counter run
 *                                              (PERIOD in cycles)
 *   label ID K=V[,K=V...]                      interns a label set under the number ID
 *   rec NOW CPU PID TIME LABEL|- FLAGS HELD_US PERIOD F...
 *                                              packs one record at kernel time NOW (LABEL: an ID or -; FLAGS:
 *                                              PROFILE_REC_* in decimal; F hex)
 *   dropped N                                  the rings' drop count, as the drain reads it
 *   fail N                                     the next N sends fail
 *   flush NOW | heartbeat NOW                  profile_streamer_flush / _heartbeat
 *   finish stopped|time|error NOW              profile_streamer_finish
 * and writes every datagram handed to the send hook as a line "@@datagram LEN OK|FAIL" then its LEN bytes, and
 * at the finish a line "@@end PRODUCED SENT UNSENT". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/labels.h"
#include "kernel/profiler/stream_codec.h"

#define LABEL_IDS 16

static const struct label_set *label_ids[LABEL_IDS];
static unsigned failing;

static bool send_out(void *arg, const char *data, size_t len)
{
    (void)arg;
    bool ok = failing == 0;
    if (failing)
        failing--;
    printf("@@datagram %zu %s\n", len, ok ? "OK" : "FAIL");
    fwrite(data, 1, len, stdout);
    return ok;
}

static const struct label_set *intern(char *text)
{
    struct label_pair pairs[LABEL_MAX_PAIRS];
    unsigned n = 0;
    for (char *pair = strtok(text, ","); pair && n < LABEL_MAX_PAIRS; pair = strtok(NULL, ","), n++) {
        char *eq = strchr(pair, '=');
        if (!eq)
            return NULL;
        *eq = 0;
        snprintf(pairs[n].key, sizeof pairs[n].key, "%s", pair);
        snprintf(pairs[n].value, sizeof pairs[n].value, "%s", eq + 1);
    }
    return label_intern(pairs, n, NULL);
}

static enum profile_stream_reason reason_of(const char *word)
{
    if (strcmp(word, "time") == 0)
        return PROFILE_STREAM_TIME;
    if (strcmp(word, "error") == 0)
        return PROFILE_STREAM_ERROR;
    return PROFILE_STREAM_STOPPED;
}

int main(void)
{
    static struct profile_streamer s;
    static char line[4096];
    struct profile_run run;
    memset(&run, 0, sizeof run);
    while (fgets(line, sizeof line, stdin)) {
        line[strcspn(line, "\n")] = 0;
        char *word = strtok(line, " ");
        if (!word)
            continue;
        if (strcmp(word, "init") == 0) {
            uint32_t id = (uint32_t)strtoul(strtok(NULL, " "), NULL, 16);
            run.ncpus = (unsigned)strtoul(strtok(NULL, " "), NULL, 10);
            uint64_t period = strtoull(strtok(NULL, " "), NULL, 10);
            char *build_id = strtok(NULL, " ");
            static char source[64];
            snprintf(source, sizeof source, "%s", strtok(NULL, ""));
            run.source = run.source_name = source;
            bool tick = strcmp(source, "tick") == 0;
            run.tick_reason = tick ? "a synthetic run" : NULL;
            run.period_ns = tick ? period : 0;
            run.period_cycles = tick ? 0 : period;
            profile_streamer_init(&s, id, &run, strcmp(build_id, "-") ? build_id : "", send_out, NULL, 0);
        } else if (strcmp(word, "label") == 0) {
            unsigned id = (unsigned)strtoul(strtok(NULL, " "), NULL, 10);
            if (id >= LABEL_IDS || !(label_ids[id] = intern(strtok(NULL, " ")))) {
                fprintf(stderr, "bad label line\n");
                return 1;
            }
        } else if (strcmp(word, "rec") == 0) {
            int64_t now = strtoll(strtok(NULL, " "), NULL, 10);
            struct profile_record rec;
            memset(&rec, 0, sizeof rec);
            rec.cpu = (uint16_t)strtoul(strtok(NULL, " "), NULL, 10);
            rec.pid = (uint32_t)strtoul(strtok(NULL, " "), NULL, 10);
            rec.time_ns = strtoll(strtok(NULL, " "), NULL, 10);
            char *label = strtok(NULL, " ");
            rec.labels = strcmp(label, "-") ? label_ids[strtoul(label, NULL, 10) % LABEL_IDS] : NULL;
            rec.flags = (uint8_t)strtoul(strtok(NULL, " "), NULL, 10);
            rec.held_off_us = (uint32_t)strtoul(strtok(NULL, " "), NULL, 10);
            rec.period = (uint32_t)strtoul(strtok(NULL, " "), NULL, 10);
            for (char *f = strtok(NULL, " "); f && rec.nframes < PROFILE_MAX_FRAMES; f = strtok(NULL, " "))
                rec.frames[rec.nframes++] = (uintptr_t)strtoull(f, NULL, 16);
            profile_streamer_add(&s, &rec, now);
        } else if (strcmp(word, "dropped") == 0) {
            s.ring_dropped = strtoull(strtok(NULL, " "), NULL, 10);
        } else if (strcmp(word, "fail") == 0) {
            failing = (unsigned)strtoul(strtok(NULL, " "), NULL, 10);
        } else if (strcmp(word, "flush") == 0) {
            profile_streamer_flush(&s, strtoll(strtok(NULL, " "), NULL, 10));
        } else if (strcmp(word, "heartbeat") == 0) {
            profile_streamer_heartbeat(&s, strtoll(strtok(NULL, " "), NULL, 10));
        } else if (strcmp(word, "finish") == 0) {
            enum profile_stream_reason reason = reason_of(strtok(NULL, " "));
            struct profile_stream_end end;
            profile_streamer_finish(&s, reason, strtoll(strtok(NULL, " "), NULL, 10), &end);
            printf("@@end %llu %llu %llu\n", (unsigned long long)end.produced, (unsigned long long)s.sent,
                   (unsigned long long)s.unsent);
        } else {
            fprintf(stderr, "unknown command %s\n", word);
            return 1;
        }
    }
    return 0;
}
