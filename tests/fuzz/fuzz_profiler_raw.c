/* tests/fuzz/fuzz_profiler_raw.c: the raw sample codec (kernel/profiler/raw.c). Arbitrary bytes as a line of
 * each kind: at most one kind takes it, and a line taken is in the one form the formatter writes, so
 * formatting what was parsed gives back the very bytes ("\r\n" read as "\n"). The other way round, fields
 * built from the input are formatted and parsed back equal. And the build-id note reader on arbitrary
 * notes. */
#include <stdbool.h>
#include <string.h>

#include "fuzz.h"
#include "kernel/labels.h"
#include "kernel/profiler/raw.h"

/* The input as a stream of numbers for the formatting half; zeros once it runs out. */
struct bytes {
    const uint8_t *p;
    size_t left;
};

static uint64_t take(struct bytes *b, unsigned n)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < n; i++) {
        v = v << 8;
        if (b->left > 0) {
            v |= *b->p++;
            b->left--;
        }
    }
    return v;
}

/* The line the formatter would write for an accepted input: the input with a final "\r\n" as "\n". */
static void check_canonical(const uint8_t *data, size_t size, const char *formatted, size_t len)
{
    size_t want = size;
    if (size >= 2 && data[size - 2] == '\r')
        want--;
    CHECK(len == want);
    CHECK(memcmp(formatted, data, len - 1) == 0);
    CHECK(formatted[len - 1] == '\n' && formatted[len] == '\0');
}

static void parse_arbitrary(const uint8_t *data, size_t size)
{
    const char *line = (const char *)data;
    char out[PROFILE_RAW_LINE_MAX];
    struct profile_raw_header h;
    struct profile_raw_sample s;
    struct profile_raw_trailer t;
    bool is_header = profile_raw_parse_header(line, size, &h);
    bool is_sample = profile_raw_parse_sample(line, size, &s);
    bool is_trailer = profile_raw_parse_trailer(line, size, &t);
    CHECK(is_header + is_sample + is_trailer <= 1);
    if (is_header) {
        CHECK(memchr(h.source, 0, sizeof h.source) && memchr(h.build_id, 0, sizeof h.build_id));
        check_canonical(data, size, out, profile_raw_format_header(&h, out, sizeof out));
    }
    if (is_sample) {
        CHECK(s.nframes >= 1 && s.nframes <= PROFILE_MAX_FRAMES && s.labels.npairs <= LABEL_MAX_PAIRS);
        for (unsigned i = 0; i < s.labels.npairs; i++)
            CHECK(label_pair_valid(&s.labels.pairs[i]));
        check_canonical(data, size, out, profile_raw_format_sample(&s, out, sizeof out));
    }
    if (is_trailer)
        check_canonical(data, size, out, profile_raw_format_trailer(&t, out, sizeof out));
}

/* 1..max characters of alphabet, chosen by the input. */
static void take_word(struct bytes *b, const char *alphabet, size_t max, char *out)
{
    size_t n = 1 + take(b, 1) % max, k = strlen(alphabet);
    for (size_t i = 0; i < n; i++)
        out[i] = alphabet[take(b, 1) % k];
    out[n] = '\0';
}

static void round_trip_fields(const uint8_t *data, size_t size)
{
    static const char key_chars[] = "abcdefghijklmnopqrstuvwxyz0123456789_.-";
    static const char value_chars[] = "!\"#$%&'()*+-./0123456789:;<>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`az{|}~";
    static const char source_chars[] = "abcdefghijklmnopqrstuvwxyz0123456789-/=?";
    static const char hex_chars[] = "0123456789abcdef";
    struct bytes b = { data, size };
    char line[PROFILE_RAW_LINE_MAX];

    struct profile_raw_sample s, back;
    memset(&s, 0, sizeof s);
    s.cpu = (uint32_t)take(&b, 4);
    s.pid = (uint32_t)take(&b, 4);
    s.time_ns = (int64_t)take(&b, 8);
    s.nframes = 1 + (unsigned)(take(&b, 1) % PROFILE_MAX_FRAMES);
    for (unsigned i = 0; i < s.nframes; i++)
        s.frames[i] = take(&b, 1) & 1 ? take(&b, 8) : take(&b, 1);
    /* Labels as the table holds them: valid pairs, sorted by key, no key twice. */
    unsigned want = (unsigned)(take(&b, 1) % (LABEL_MAX_PAIRS + 1));
    for (unsigned i = 0; i < want; i++) {
        struct label_pair p;
        take_word(&b, key_chars, LABEL_KEY_MAX, p.key);
        take_word(&b, value_chars, LABEL_VALUE_MAX, p.value);
        unsigned j = s.labels.npairs;
        bool twice = false;
        for (unsigned k = 0; k < j; k++)
            twice |= strcmp(s.labels.pairs[k].key, p.key) == 0;
        if (twice)
            continue;
        while (j > 0 && strcmp(s.labels.pairs[j - 1].key, p.key) > 0) {
            s.labels.pairs[j] = s.labels.pairs[j - 1];
            j--;
        }
        s.labels.pairs[j] = p;
        s.labels.npairs++;
    }
    s.period = (uint32_t)take(&b, 4);
    s.flags = (uint8_t)(take(&b, 1) & (PROFILE_REC_IRQS_OFF | PROFILE_REC_IN_IRQ | PROFILE_REC_LET_IN));
    s.held_off_us = (s.flags & PROFILE_REC_LET_IN) ? (uint32_t)take(&b, 4) : 0;
    size_t len = profile_raw_format_sample(&s, line, sizeof line);
    CHECK(len > 0 && len < sizeof line && line[len - 1] == '\n' && strlen(line) == len);
    CHECK(profile_raw_parse_sample(line, len, &back));
    CHECK(back.cpu == s.cpu && back.pid == s.pid && back.time_ns == s.time_ns && back.nframes == s.nframes);
    CHECK(memcmp(back.frames, s.frames, sizeof s.frames) == 0);
    CHECK(back.period == s.period && back.flags == s.flags && back.held_off_us == s.held_off_us);
    CHECK(back.labels.npairs == s.labels.npairs);
    for (unsigned i = 0; i < s.labels.npairs; i++)
        CHECK(strcmp(back.labels.pairs[i].key, s.labels.pairs[i].key) == 0 &&
              strcmp(back.labels.pairs[i].value, s.labels.pairs[i].value) == 0);

    struct profile_raw_header h, hback;
    memset(&h, 0, sizeof h);
    take_word(&b, source_chars, PROFILE_RAW_SOURCE_MAX - 1, h.source);
    h.period = take(&b, 8);
    h.unit = take(&b, 1) & 1 ? PROFILE_UNIT_CYCLES : PROFILE_UNIT_NS;
    h.window_ms = (uint32_t)take(&b, 4);
    h.cpus = (uint32_t)take(&b, 4);
    size_t id_bytes = take(&b, 1) % (PROFILE_BUILD_ID_MAX + 1);
    for (size_t i = 0; i < 2 * id_bytes; i++)
        h.build_id[i] = hex_chars[take(&b, 1) % 16];
    len = profile_raw_format_header(&h, line, sizeof line);
    CHECK(len > 0 && line[len - 1] == '\n' && strlen(line) == len);
    CHECK(profile_raw_parse_header(line, len, &hback));
    CHECK(strcmp(hback.source, h.source) == 0 && strcmp(hback.build_id, h.build_id) == 0);
    CHECK(hback.period == h.period && hback.unit == h.unit && hback.window_ms == h.window_ms && hback.cpus == h.cpus);

    struct profile_raw_trailer t = { take(&b, 8), take(&b, 8) }, tback;
    len = profile_raw_format_trailer(&t, line, sizeof line);
    CHECK(len > 0 && profile_raw_parse_trailer(line, len, &tback));
    CHECK(tback.samples == t.samples && tback.dropped == t.dropped);

    /* A line cut short anywhere is refused, and a buffer one byte short refuses the whole line. */
    size_t cut = (size_t)take(&b, 2) % len;
    CHECK(!profile_raw_parse_trailer(line, cut, &tback));
    char small[PROFILE_RAW_LINE_MAX];
    CHECK(profile_raw_format_trailer(&t, small, len) == 0 && small[0] == '\0');
}

static void build_id(const uint8_t *data, size_t size)
{
    char hex[2 * PROFILE_BUILD_ID_MAX + 1];
    size_t cap = size > 0 ? data[0] % (sizeof hex + 1) : sizeof hex;
    memset(hex, 0x5a, sizeof hex);
    if (profile_build_id_hex(data, size, hex, cap)) {
        size_t n = strnlen(hex, cap);
        CHECK(n < cap && n > 0 && n % 2 == 0 && n <= 2 * PROFILE_BUILD_ID_MAX);
        CHECK(strspn(hex, "0123456789abcdef") == n);
    }
    char word[16];
    char name[64];
    size_t n = size < sizeof name - 1 ? size : sizeof name - 1;
    memcpy(name, data, n);
    name[n] = '\0';
    profile_raw_source_word(name, word, sizeof word);
    CHECK(strlen(word) == (strlen(name) < sizeof word ? strlen(name) : sizeof word - 1));
    for (const char *p = word; *p; p++)
        CHECK(*p > ' ' && *p <= '~');
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    parse_arbitrary(data, size);
    round_trip_fields(data, size);
    build_id(data, size);
    return 0;
}
