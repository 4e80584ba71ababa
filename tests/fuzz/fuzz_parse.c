/* tests/fuzz/fuzz_parse.c: the word splitter and strict number parsers every parser of outside input is
 * built from (kernel/lib/parse.c), against models written here another way (parse_u64's through the C
 * library): split_words keeps every byte of every word and nothing else, refuses exactly when there are too
 * many words; parse_u64 takes exactly decimal or 0x-hex that fits in 64 bits; parse_ipv4 exactly four
 * dot-separated decimal parts of 1 to 3 digits, each at most 255. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fuzz.h"
#include "kernel/lib/parse.h"

static char text[1024], copy[1024];

static bool model_u64(const char *s, uint64_t *out)
{
    bool hex = strncasecmp(s, "0x", 2) == 0;
    const char *digits = hex ? s + 2 : s;
    if (*digits == '\0' || digits[strspn(digits, hex ? "0123456789abcdefABCDEF" : "0123456789")] != '\0')
        return false;
    errno = 0;
    unsigned long long v = strtoull(digits, NULL, hex ? 16 : 10); /* digits alone: no sign, no space */
    if (errno == ERANGE)
        return false;
    *out = v;
    return true;
}

static bool model_ipv4(const char *s, uint32_t *out)
{
    uint32_t addr = 0;
    for (int part = 0; part < 4; part++) {
        size_t n = 0;
        unsigned v = 0;
        while (s[n] >= '0' && s[n] <= '9' && n < 4)
            v = v * 10 + (unsigned)(s[n++] - '0');
        if (n == 0 || n > 3 || v > 255)
            return false;
        s += n;
        if (*s != (part < 3 ? '.' : '\0'))
            return false;
        s += part < 3;
        addr = addr << 8 | v;
    }
    *out = addr;
    return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0 || size >= sizeof text)
        return 0;
    int max_args = data[0] % (SHELL_MAX_ARGS + 1);
    memcpy(text, data + 1, size - 1);
    text[size - 1] = '\0';
    size_t len = strlen(text);

    /* split_words: the words are the maximal runs of anything but space and tab, in order. */
    memcpy(copy, text, len + 1);
    char *argv[SHELL_MAX_ARGS];
    int argc = split_words(copy, argv, max_args);
    int words = 0, taken = 0;
    for (size_t i = 0; i < len;) {
        while (i < len && (text[i] == ' ' || text[i] == '\t'))
            i++;
        if (i == len)
            break;
        size_t start = i;
        while (i < len && text[i] != ' ' && text[i] != '\t')
            i++;
        if (words < max_args) {
            CHECK(argv[words] == copy + start);
            CHECK(strlen(argv[words]) == i - start);
            CHECK(memcmp(argv[words], text + start, i - start) == 0);
            taken++;
        }
        words++;
    }
    CHECK(argc == (words > max_args ? -1 : words));
    CHECK(taken == (words > max_args ? max_args : words));

    /* The numbers, on the whole text and on each word. */
    for (int w = -1; w < taken; w++) {
        const char *s = w < 0 ? text : argv[w];
        uint64_t got = 0, want = 0;
        bool ok = parse_u64(s, &got);
        CHECK(ok == model_u64(s, &want));
        CHECK(!ok || got == want);
        uint64_t in_range;
        bool ranged = parse_u64_range(s, 1, 2000, &in_range);
        CHECK(ranged == (ok && got >= 1 && got <= 2000));
        CHECK(!ranged || in_range == got);
        uint32_t ip = 0, want_ip = 0;
        bool ip_ok = parse_ipv4(s, &ip);
        CHECK(ip_ok == model_ipv4(s, &want_ip));
        CHECK(!ip_ok || ip == want_ip);
    }
    return 0;
}
