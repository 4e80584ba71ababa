/* tests/fuzz/fuzz_cmdline.c: the kernel command-line parser (kernel/cmdline.c) on arbitrary text, checked
 * against a small model of its rules: words split on spaces and tabs, at most CMDLINE_MAX_OPTIONS of them,
 * key=value or a bare key, the first of a known key wins, every problem reported on one printable line, and a
 * line not taken whole still known to name udpsh.key= wherever its word was. */
#include <stdbool.h>
#include <string.h>

#include "fuzz.h"
#include "kernel/cmdline.h"
#include "kernel/lib/sink.h"

static char text[4096];
static char report[16384];

/* Whether the kernel knows key: an option "key=" alone parses without a problem. */
static bool known(const char *key, size_t len)
{
    char probe[CMDLINE_MAX];
    if (len + 2 > sizeof probe)
        return false;
    memcpy(probe, key, len);
    probe[len] = '=';
    probe[len + 1] = '\0';
    struct buffer_sink bs;
    buffer_sink_init(&bs, report, sizeof report);
    return cmdline_parse(probe, &bs.sink) == 0;
}

static bool separator(char c)
{
    return c == ' ' || c == '\t';
}

/* Whether some word of the whole text, however long, has udpsh.key as its key. */
static bool names_the_key(const char *s)
{
    static const char key[] = "udpsh.key";
    while (*s) {
        while (separator(*s))
            s++;
        const char *start = s;
        while (*s && !separator(*s) && *s != '=')
            s++;
        if ((size_t)(s - start) == sizeof key - 1 && memcmp(start, key, sizeof key - 1) == 0)
            return true;
        while (*s && !separator(*s))
            s++;
    }
    return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size >= sizeof text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';
    size_t len = strlen(text);

    /* The model: the words, each one's key and value, and which are taken. */
    struct {
        const char *key, *value;
        size_t key_len, value_len;
        bool taken;
    } words[CMDLINE_MAX_OPTIONS];
    int n = 0, expected = 0;
    bool too_many = false;
    for (size_t i = 0; i < len;) {
        while (i < len && separator(text[i]))
            i++;
        if (i == len)
            break;
        size_t start = i;
        while (i < len && !separator(text[i]))
            i++;
        if (n == CMDLINE_MAX_OPTIONS) {
            too_many = true;
            break;
        }
        size_t eq = start;
        while (eq < i && text[eq] != '=')
            eq++;
        words[n].key = text + start;
        words[n].key_len = eq - start;
        words[n].value = eq < i ? text + eq + 1 : "";
        words[n].value_len = eq < i ? i - eq - 1 : 0;
        n++;
    }
    bool cut = too_many || len >= CMDLINE_MAX;
    if (len >= CMDLINE_MAX) {
        n = 0;
        too_many = false;
        expected = 1;
    }
    expected += too_many;
    for (int i = 0; i < n; i++) {
        words[i].taken = false;
        if (!known(words[i].key, words[i].key_len)) {
            expected++;
            continue;
        }
        bool twice = false;
        for (int j = 0; j < i && !twice; j++)
            twice = words[j].taken && words[j].key_len == words[i].key_len &&
                    memcmp(words[j].key, words[i].key, words[i].key_len) == 0;
        expected += twice;
        words[i].taken = !twice;
    }

    struct buffer_sink bs;
    buffer_sink_init(&bs, report, sizeof report);
    int problems = cmdline_parse(text, &bs.sink);
    CHECK(problems == expected);
    CHECK(bs.truncated == 0);

    /* One line per problem, each "cmdline: ..." and printable. */
    int lines = 0;
    for (const char *line = report; *line; lines++) {
        CHECK(strncmp(line, "cmdline: ", 9) == 0);
        const char *end = strchr(line, '\n');
        CHECK(end != NULL);
        for (const char *p = line; p < end; p++)
            CHECK(*p >= 0x20 && *p < 0x7f);
        line = end + 1;
    }
    CHECK(lines == problems);
    CHECK(cmdline_cut_names("udpsh.key") == (cut && names_the_key(text)));

    /* Every taken word's value is what cmdline_get answers for its key. */
    for (int i = 0; i < n; i++) {
        if (!words[i].taken)
            continue;
        char key[CMDLINE_MAX];
        memcpy(key, words[i].key, words[i].key_len);
        key[words[i].key_len] = '\0';
        const char *value = cmdline_get(key);
        CHECK(value != NULL);
        CHECK(strlen(value) == words[i].value_len && memcmp(value, words[i].value, words[i].value_len) == 0);
    }
    return 0;
}
