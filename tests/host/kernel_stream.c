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

#include "harness_input.h"
#include "kernel/labels.h"
#include "kernel/profiler/stream_codec.h"
#include "kernel/profiler/stream_packer.h"
#include "kernel/profiler/stream_request.h"

static struct profile_streamer s;
static struct profile_run run;
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

/* The one word that follows a command. */
static const char *word_of(char *args, const char *line)
{
    char *word[1];
    if (harness_words(args, word, 1, line) != 1)
        harness_die("one word", line);
    return word[0];
}

static void do_init(char *args, const char *line)
{
    static char source[64];
    unsigned id, ncpus;
    unsigned long long period;
    char build_id[80];
    int used = 0;
    if (sscanf(args, "%x %u %llu %79s %n", &id, &ncpus, &period, build_id, &used) != 4 || used == 0)
        harness_die("bad init", line);
    snprintf(source, sizeof source, "%s", args + used);
    bool tick = strcmp(source, "tick") == 0;
    run = (struct profile_run){ .ncpus = ncpus, .source = source, .source_name = source,
                                .tick_reason = tick ? "a synthetic run" : NULL, .period_ns = tick ? period : 0,
                                .period_cycles = tick ? 0 : period };
    profile_streamer_init(&s, id, &run, strcmp(build_id, "-") ? build_id : "", send_out, NULL, 0);
}

static void do_rec(char *args, const char *line)
{
    char *word[5 + 3 + PROFILE_MAX_FRAMES];
    unsigned n = harness_words(args, word, sizeof word / sizeof word[0], line);
    if (n < 8)
        harness_die("short rec", line);
    struct profile_record rec;
    memset(&rec, 0, sizeof rec);
    rec.cpu = (uint16_t)strtoul(word[1], NULL, 10);
    rec.pid = (uint32_t)strtoul(word[2], NULL, 10);
    rec.time_ns = strtoll(word[3], NULL, 10);
    rec.labels = harness_label_set(word[4], line);
    harness_record_tail(&rec, word + 5, n - 5, line);
    profile_streamer_add(&s, &rec, strtoll(word[0], NULL, 10));
}

static void do_dropped(char *args, const char *line)
{
    s.ring_dropped = strtoull(word_of(args, line), NULL, 10);
}

static void do_fail(char *args, const char *line)
{
    failing = (unsigned)strtoul(word_of(args, line), NULL, 10);
}

static void do_flush(char *args, const char *line)
{
    profile_streamer_flush(&s, strtoll(word_of(args, line), NULL, 10));
}

static void do_heartbeat(char *args, const char *line)
{
    profile_streamer_heartbeat(&s, strtoll(word_of(args, line), NULL, 10));
}

static void do_finish(char *args, const char *line)
{
    char *word[2];
    if (harness_words(args, word, 2, line) != 2)
        harness_die("bad finish", line);
    enum profile_stream_reason reason = strcmp(word[0], "time") == 0    ? PROFILE_STREAM_TIME
                                        : strcmp(word[0], "error") == 0 ? PROFILE_STREAM_ERROR
                                                                        : PROFILE_STREAM_STOPPED;
    struct profile_stream_end end;
    profile_streamer_finish(&s, reason, strtoll(word[1], NULL, 10), &end);
    printf("@@end %llu %llu %llu\n", (unsigned long long)end.produced, (unsigned long long)s.sent,
           (unsigned long long)s.unsent);
}

int main(void)
{
    static const struct harness_command commands[] = {
        { "init", do_init },   { "rec", do_rec },             { "dropped", do_dropped }, { "fail", do_fail },
        { "flush", do_flush }, { "heartbeat", do_heartbeat }, { "finish", do_finish },
    };
    harness_run("kernel_stream", commands, sizeof commands / sizeof commands[0]);
    return 0;
}
