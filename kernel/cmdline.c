/* kernel/cmdline.c: parsing the kernel command line into key=value options, checking keys against the ones
 * kprof knows, so a typo is reported at boot instead of silently doing nothing. */
#include "kernel/cmdline.h"

#include "kernel/lib/parse.h"
#include "kernel/lib/string.h"

/* Every option some part of the kernel reads. */
static const char *const known_keys[] = {
    "pmu", "apic", "gdb", "gdb.udp", "ip", "gw", "udpsh.port", "udpsh.allow", "udpsh.rate", "udpsh.key", "netload.port",
    "udpsh.token_window_ms", /* a test knob: tokens that expire in seconds (kernel/udpsh/auth.h) */
    "quiet", "profile.hz", "profile.stream_slow_ms", "profile.ring_records", "pprof.http",
    "pprof.host",
    "gdb.udp.insecure", /* a bare flag: raw gdb datagrams (gdbstub/udp_key.c) */
};

static char storage[CMDLINE_MAX];
static struct {
    const char *key;
    const char *value;
} options[CMDLINE_MAX_OPTIONS];
static int option_count;

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

int cmdline_parse(const char *text, struct sink *report)
{
    int problems = 0;
    char safe[48];
    option_count = 0;
    if (strlen(text) >= sizeof storage) {
        sink_printf(report, "cmdline: longer than %d characters, ignored\n", CMDLINE_MAX - 1);
        storage[0] = 0;
        return 1;
    }
    strlcpy(storage, text, sizeof storage);

    char *words[CMDLINE_MAX_OPTIONS + 1];
    int n = split_words(storage, words, CMDLINE_MAX_OPTIONS + 1);
    if (n < 0 || n > CMDLINE_MAX_OPTIONS) {
        sink_printf(report, "cmdline: more than %d options; the rest are ignored\n", CMDLINE_MAX_OPTIONS);
        problems++;
        n = CMDLINE_MAX_OPTIONS;
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
