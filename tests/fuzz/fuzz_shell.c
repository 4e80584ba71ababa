/* tests/fuzz/fuzz_shell.c: the shell (kernel/shell/shell.c) running arbitrary lines -- its word splitting and
 * dispatch, and the argument parsing of every command in its table, each the kernel's own code; only what the
 * commands act on is faked (tests/fuzz/fake_shell_env.c). The input is lines, one per '\n', run in order
 * against one machine, every other one as the UDP shell runs a request (kernel/udpsh/udpsh.c's path: the
 * datagram checked by udpsh_request_line, the output cut by the reply chunker) when it would accept it, the
 * rest as the console runs them. After each line: a known result, output NUL-terminated and printable, a
 * usage refusal on one line, over UDP datagrams within their size and a trailer that counts them, the shell
 * task's label set given back, the profiler free for the next run, and the heap whole and no bigger than
 * before. `panic` alone is the one line allowed to panic. */
#include <setjmp.h>
#include <stdbool.h>
#include <string.h>

#include "fake_hal.h"
#include "fake_kernel.h"
#include "fake_shell_env.h"
#include "fuzz.h"
#include "kernel/shell/commands.h"
#include "kernel/shell/shell.h"
#include "kernel/heap.h"
#include "kernel/labels.h"
#include "kernel/udpsh/wire.h"
#include "kernel/lib/parse.h"
#include "kernel/profiler.h"
#include "kernel/profiler/top.h"
#include "kernel/lib/string.h"
#include "kernel/lib/sink.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);

static _Alignas(16) unsigned char heap_region[4 << 20];
static char output[1 << 18];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    heap_init(heap_region, sizeof heap_region);
    fake_cpu_count = 2;
    /* The profiler's rings are allocated by its first run and kept: from here on a line leaves the heap as
     * it found it. */
    struct profile_run run = { 0 };
    CHECK(profiler_start(&run) == PROFILER_OK);
    profiler_stop(&run);
    profiler_release();
    return 0;
}

/* The first word of line, as the shell will see it. */
static void first_word(const char *line, char *word, size_t cap)
{
    char copy[1024];
    char *argv[SHELL_MAX_ARGS];
    strlcpy(copy, line, sizeof copy);
    int argc = split_words(copy, argv, SHELL_MAX_ARGS);
    strlcpy(word, argc > 0 ? argv[0] : "", cap);
}

/* The UDP shell's reply: the text datagrams gathered into output; the last datagram emitted is the trailer. */
static struct {
    size_t len, datagrams, last_start, last_len;
} reply;

static void udp_emit(void *arg, const char *data, size_t len)
{
    (void)arg;
    CHECK(reply.len + len < sizeof output);
    memcpy(output + reply.len, data, len);
    reply.last_start = reply.len;
    reply.last_len = len;
    reply.len += len;
    reply.datagrams++;
    CHECK(len <= UDPSH_DATAGRAM_MAX);
}

/* Runs line as the UDP shell task does, a keyed request from 10.0.2.2 (so every command runs, as every line here
 * does); the text of the reply is left in output, NUL-terminated. */
static int run_over_udp(char *line, uint64_t seq, size_t *text_len)
{
    static struct reply_chunker chunker;
    static const struct shell_origin from = { .udp = true, .keyed = true, .ip = 0x0a000202, .port = 40000 };
    memset(&reply, 0, sizeof reply);
    chunker_init(&chunker, seq, udp_emit, NULL);
    int result = shell_run_line(line, &from, chunker_sink(&chunker));
    chunker_finish(&chunker, result);

    CHECK(reply.datagrams >= 1 && reply.last_len < UDPSH_TRAILER_MAX);
    char trailer[UDPSH_TRAILER_MAX];
    memcpy(trailer, output + reply.last_start, reply.last_len);
    trailer[reply.last_len] = '\0';
    size_t len = reply.last_start;
    output[len] = '\0';
    const char *t = trailer;
    bool newline_first = len > 0 && output[len - 1] != '\n';
    if (newline_first)
        CHECK(*t++ == '\n');
    unsigned long long got_seq, datagrams, bytes;
    unsigned crc;
    int status, end = 0;
    CHECK(sscanf(t, "# udpsh end seq=%llu datagrams=%llu bytes=%llu crc32=%8x status=%d\n%n", &got_seq, &datagrams,
                 &bytes, &crc, &status, &end) == 5);
    CHECK(t[end] == '\0' && t[end - 1] == '\n');
    CHECK(got_seq == seq && datagrams == reply.datagrams - 1 && bytes == len);
    CHECK(crc == udpsh_crc32(0, output, len) && status == (result != 0));
    *text_len = len;
    return result;
}

static uint64_t next_seq; /* the UDP shell's request number */

static void run_line(char *line, bool udp)
{
    char name[64];
    first_word(line, name, sizeof name);
    struct task *self = task_current();
    const struct label_set *before = task_labels(self);
    struct heap_stats heap_before, heap_after;
    heap_get_stats(&heap_before);

    struct buffer_sink bs;
    buffer_sink_init(&bs, output, sizeof output);
    char request[UDPSH_LINE_MAX + 1];
    udp = udp && udpsh_request_line(line, strlen(line), request) == NULL;
    volatile int result = 0;
    fake_panic_armed = true;
    if (setjmp(fake_panic_jump) == 0) {
        if (udp) {
            CHECK(strcmp(request, line) == 0);
            result = run_over_udp(request, ++next_seq, &bs.len);
        } else {
            fake_console_keys = 1; /* a key waits: `profile top` on the console ends after its first frame */
            result = shell_run_line(line, &shell_console_origin, &bs.sink);
            fake_console_keys = 0;
        }
        fake_panic_armed = false;
    } else {
        fake_panic_armed = false;
        CHECK(strcmp(name, "panic") == 0 && strcmp(fake_panic_message, "requested from the shell") == 0);
        task_set_labels(self, before); /* the panic left the command's cmd= set in place */
        return;
    }

    CHECK(result == -1 || result == 0 || result == 1);
    CHECK(bs.truncated == 0 && output[bs.len] == '\0' && strlen(output) == bs.len);
    /* Text only, but for the one control sequence a command writes on purpose: `profile top`'s frame start, on
     * the console (its bad words are quoted with '?' for a byte that is not text). */
    for (size_t i = 0; i < bs.len; i++) {
        if (!udp && strncmp(output + i, PROFILE_TOP_CLEAR, sizeof PROFILE_TOP_CLEAR - 1) == 0) {
            i += sizeof PROFILE_TOP_CLEAR - 2;
            continue;
        }
        CHECK((output[i] >= 0x20 && output[i] < 0x7f) || output[i] == '\n');
    }
    CHECK(bs.len == 0 || output[bs.len - 1] == '\n');
    if (strncmp(output, "usage: ", 7) == 0)
        CHECK(result != 0 && strchr(output, '\n') == output + bs.len - 1);
    if (strcmp(name, "label") != 0)
        CHECK(task_labels(self) == before);

    struct profile_run run = { 0 };
    CHECK(profiler_start(&run) == PROFILER_OK);
    profiler_stop(&run);
    profiler_release();
    /* No sample inside and the rings just reset: every retired label set is free again, none waits. */
    struct label_stats labels;
    label_stats(&labels);
    CHECK(labels.waiting == 0 && labels.used == labels.live);
    if (strcmp(name, "mem") == 0) {
        /* `mem leak` keeps blocks on purpose: given back first, so the balance below holds the line to the rest */
        char free_line[] = "mem leak free", scratch[128];
        struct buffer_sink freed;
        buffer_sink_init(&freed, scratch, sizeof scratch);
        CHECK(shell_run_line(free_line, &shell_console_origin, &freed.sink) == 0);
    }
    const char *why = NULL;
    CHECK(heap_check(&why));
    heap_get_stats(&heap_after);
    CHECK(heap_after.used_bytes == heap_before.used_bytes && heap_after.live_blocks == heap_before.live_blocks);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char line[1024];
    fake_shell_env_reset();
    fake_cpu_index = 0;
    next_seq = 0;
    bool udp = false;
    for (size_t at = 0; at < size; udp = !udp) {
        const uint8_t *end = memchr(data + at, '\n', size - at);
        size_t n = end ? (size_t)(end - (data + at)) : size - at;
        if (n < sizeof line) {
            memcpy(line, data + at, n);
            line[n] = '\0';
            run_line(line, udp);
        }
        at += n + 1;
    }
    return 0;
}
