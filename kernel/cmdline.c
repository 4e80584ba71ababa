/* kernel/cmdline.c: parsing the kernel command line into key=value options, checking keys against the ones
 * kprof knows, so a typo is reported at boot instead of silently doing nothing; and which known keys a command
 * line that could not be taken whole named, in the part taken or not. */
#include "kernel/cmdline.h"

#include <stdint.h>

#include "kernel/lib/parse.h"
#include "kernel/lib/string.h"

/* Every option some part of the kernel reads. */
static const char *const known_keys[] = {
    "pmu", "apic", "gdb", "gdb.udp", "ip", "gw", "udpsh.port", "udpsh.allow", "udpsh.rate", "udpsh.key", "netload.port",
    "udpsh.token_window_ms", /* a test knob: tokens that expire in seconds (kernel/udpsh/auth.h) */
    "quiet", "profile.hz", "profile.stream_slow_ms", "profile.ring_records", "pprof.http",
    "pprof.host", "console.stall_ms", /* a test knob: how long writers wait on a stalled console */
    "gdb.udp.insecure", /* a bare flag: raw gdb datagrams (gdbstub/udp_key.c) */
};

static char storage[CMDLINE_MAX];
static struct {
    const char *key;
    const char *value;
} options[CMDLINE_MAX_OPTIONS];
static int option_count;
static bool cut;                /* the last line parsed: over CMDLINE_MAX - 1 characters or CMDLINE_MAX_OPTIONS words */
static uint32_t named_anywhere; /* bit i: some word of the whole line has known_keys[i] as its key */

_Static_assert(sizeof known_keys / sizeof known_keys[0] <= 32, "named_anywhere has a bit per known key");

static bool known(const char *key)
{
    for (size_t i = 0; i < sizeof known_keys / sizeof known_keys[0]; i++)
        if (strcmp(known_keys[i], key) == 0)
            return true;
    return false;
}

static void shown(const char *word, char *out, size_t cap)
{
    size_t n = 0;
    for (; *word && n + 1 < cap; word++)
        out[n++] = (*word >= 0x20 && *word < 0x7F) ? *word : '?';
    out[n] = 0;
}

static bool separator(char c) { return c == ' ' || c == '\t'; } /* as split_words splits */

static int known_index(const char *key, size_t len)
{
    for (size_t i = 0; i < sizeof known_keys / sizeof known_keys[0]; i++)
        if (strlen(known_keys[i]) == len && strncmp(known_keys[i], key, len) == 0)
            return (int)i;
    return -1;
}

/* The known keys the words of the whole of text name, however long it is: what the cut part held is read here,
 * before anything is dropped. */
static uint32_t keys_named(const char *text)
{
    uint32_t named = 0;
    while (*text) {
        while (separator(*text))
            text++;
        const char *key = text;
        while (*text && !separator(*text) && *text != '=')
            text++;
        int i = known_index(key, (size_t)(text - key));
        if (i >= 0)
            named |= 1u << i;
        while (*text && !separator(*text))
            text++;
    }
    return named;
}

int cmdline_parse(const char *text, struct sink *report)
{
    int problems = 0;
    char safe[48];
    option_count = 0;
    named_anywhere = keys_named(text);
    cut = false;
    if (strlen(text) >= sizeof storage) {
        sink_printf(report, "cmdline: longer than %d characters, ignored\n", CMDLINE_MAX - 1);
        storage[0] = 0;
        cut = true;
        return 1;
    }
    strlcpy(storage, text, sizeof storage);

    char *words[CMDLINE_MAX_OPTIONS + 1];
    int n = split_words(storage, words, CMDLINE_MAX_OPTIONS + 1);
    if (n < 0 || n > CMDLINE_MAX_OPTIONS) {
        sink_printf(report, "cmdline: more than %d options; the rest are ignored\n", CMDLINE_MAX_OPTIONS);
        problems++;
        n = CMDLINE_MAX_OPTIONS;
        cut = true;
    }
    for (int i = 0; i < n; i++) {
        char *word = words[i], *eq = word;
        while (*eq && *eq != '=')
            eq++;
        const char *value = "";
        if (*eq) {
            *eq = 0;
            value = eq + 1;
        }
        if (!known(word)) {
            shown(word, safe, sizeof safe);
            sink_printf(report, "cmdline: unknown option '%s' ignored\n", safe);
            problems++;
            continue;
        }
        if (cmdline_get(word)) {
            shown(word, safe, sizeof safe);
            sink_printf(report, "cmdline: option '%s' given twice; the first is used\n", safe);
            problems++;
            continue;
        }
        options[option_count].key = word;
        options[option_count].value = value;
        option_count++;
    }
    return problems;
}

const char *cmdline_get(const char *key)
{
    for (int i = 0; i < option_count; i++)
        if (strcmp(options[i].key, key) == 0)
            return options[i].value;
    return 0;
}

bool cmdline_cut_names(const char *key)
{
    int i = known_index(key, strlen(key));
    return cut && i >= 0 && (named_anywhere & (1u << i));
}
