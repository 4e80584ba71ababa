/* tests/fuzz/fuzz_profiler_stream.c: the stream's datagram parser (kernel/profiler/stream_codec.c) on arbitrary
 * bytes. A datagram taken is in the one form the kernel writes: its header (or end line) formatted again gives
 * back its first line byte for byte, it holds exactly the samples its header counts, each a valid raw line, and
 * it is never over one frame. Each line parser is tried alone too: at most one kind takes a line. */
#include <stdbool.h>
#include <string.h>

#include "fuzz.h"
#include "kernel/labels.h"
#include "kernel/profiler/stream_codec.h"

struct counted {
    uint32_t samples;
};

static void count_sample(void *arg, const struct profile_raw_sample *s)
{
    struct counted *c = arg;
    CHECK(s->nframes >= 1 && s->nframes <= PROFILE_MAX_FRAMES && s->labels.npairs <= LABEL_MAX_PAIRS);
    c->samples++;
}

static size_t first_line(const uint8_t *data, size_t size)
{
    const uint8_t *nl = memchr(data, '\n', size);
    return nl ? (size_t)(nl - data) + 1 : 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *text = (const char *)data;
    char out[PROFILE_STREAM_HEADER_MAX];
    struct profile_stream_datagram d;
    struct counted c = { 0 };
    if (profile_stream_parse_datagram(text, size, &d, count_sample, &c)) {
        CHECK(size <= PROFILE_STREAM_DATAGRAM_MAX);
        size_t n = first_line(data, size);
        CHECK(n > 0);
        size_t len = d.is_end ? profile_stream_format_end(&d.end, out, sizeof out)
                              : profile_stream_format_header(&d.header, out, sizeof out);
        CHECK(len == n && memcmp(out, data, n) == 0);
        if (d.is_end)
            CHECK(n == size && c.samples == 0);
        else
            CHECK(c.samples == d.header.samples);
    }
    struct profile_stream_header h;
    struct profile_stream_end e;
    bool is_header = profile_stream_parse_header(text, size, &h);
    bool is_end = profile_stream_parse_end(text, size, &e);
    CHECK(is_header + is_end <= 1);
    if (is_header) {
        CHECK(memchr(h.source, 0, sizeof h.source) && memchr(h.build_id, 0, sizeof h.build_id));
        CHECK(profile_stream_format_header(&h, out, sizeof out) == size && memcmp(out, data, size) == 0);
    }
    if (is_end)
        CHECK(profile_stream_format_end(&e, out, sizeof out) == size && memcmp(out, data, size) == 0);
    return 0;
}
