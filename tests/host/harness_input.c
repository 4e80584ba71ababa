/* tests/host/harness_input.c: the command reading the host harnesses share (harness_input.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness_input.h"

#define MAX_SYMS 4096
#define NAME_CHARS 128 /* a symbol's name, its NUL included */

static const char *harness_name = "harness";
static struct ksym syms[MAX_SYMS];
static char names[MAX_SYMS * 64];
static size_t names_len;
struct symtab harness_symtab = { syms, 0, names, 0, 0 };
static const struct label_set *label_sets[HARNESS_MAX_LABELS];

_Noreturn void harness_die(const char *what, const char *line)
{
    fprintf(stderr, "%s: %s: %s", harness_name, what, line);
    exit(2);
}

unsigned harness_words(char *text, char **word, unsigned max, const char *line)
{
    char *save = NULL;
    unsigned n = 0;
    for (char *w = strtok_r(text, " \n", &save); w; w = strtok_r(NULL, " \n", &save)) {
        if (n == max)
            harness_die("too many fields", line);
        word[n++] = w;
    }
    return n;
}

static void do_sym(char *args, const char *line)
{
    unsigned long long addr;
    unsigned size;
    char name[NAME_CHARS];
    if (harness_symtab.count == MAX_SYMS || sscanf(args, "%llx %u %127s", &addr, &size, name) != 3
        || names_len + strlen(name) + 1 > sizeof names)
        harness_die("bad sym", line);
    syms[harness_symtab.count] = (struct ksym){ addr, size, (uint32_t)names_len };
    memcpy(names + names_len, name, strlen(name) + 1);
    names_len += strlen(name) + 1;
    harness_symtab.count++;
}

static void do_text(char *args, const char *line)
{
    unsigned long long start, end;
    if (sscanf(args, "%llx %llx", &start, &end) != 2)
        harness_die("bad text", line);
    harness_symtab.text_start = start;
    harness_symtab.text_end = end;
}

static void do_label(char *args, const char *line)
{
    unsigned id;
    char text[256];
    if (sscanf(args, "%u %255s", &id, text) != 2 || id >= HARNESS_MAX_LABELS)
        harness_die("bad label", line);
    struct label_pair pairs[LABEL_MAX_PAIRS];
    unsigned n = 0;
    char *save = NULL;
    for (char *word = strtok_r(text, ",", &save); word; word = strtok_r(NULL, ",", &save)) {
        if (n == LABEL_MAX_PAIRS || !label_parse_pair(word, &pairs[n]))
            harness_die("bad label pair", line);
        n++;
    }
    const char *why = NULL;
    label_sets[id] = label_intern(pairs, n, &why);
    if (!label_sets[id])
        harness_die(why ? why : "label refused", line);
}

const struct label_set *harness_label_set(const char *word, const char *line)
{
    if (strcmp(word, "-") == 0)
        return NULL;
    char *end;
    unsigned long id = strtoul(word, &end, 10);
    if (*end || id >= HARNESS_MAX_LABELS || !label_sets[id])
        harness_die("unknown label set", line);
    return label_sets[id];
}

void harness_record_tail(struct profile_record *rec, char **word, unsigned n, const char *line)
{
    if (n < 3 || n - 3 > PROFILE_MAX_FRAMES)
        harness_die("a record's flags, held-off time, period and frames", line);
    rec->flags = (uint8_t)strtoul(word[0], NULL, 10);
    rec->held_off_us = (uint32_t)strtoul(word[1], NULL, 10);
    rec->period = (uint32_t)strtoul(word[2], NULL, 10);
    rec->nframes = (uint8_t)(n - 3);
    for (unsigned i = 3; i < n; i++)
        rec->frames[i - 3] = (uintptr_t)strtoull(word[i], NULL, 16);
}

void harness_run(const char *name, const struct harness_command *table, size_t count)
{
    static const struct harness_command shared[] = { { "sym", do_sym }, { "text", do_text }, { "label", do_label } };
    static char line[4096], copy[4096];
    harness_name = name;
    while (fgets(line, sizeof line, stdin)) {
        memcpy(copy, line, sizeof line);
        copy[strcspn(copy, "\n")] = 0;
        size_t cmd_len = strcspn(copy, " ");
        if (cmd_len == 0 && copy[0] == 0)
            continue;
        char *args = copy[cmd_len] ? copy + cmd_len + 1 : copy + cmd_len;
        copy[cmd_len] = 0;
        const struct harness_command *found = NULL;
        for (size_t i = 0; i < count && !found; i++)
            if (strcmp(copy, table[i].name) == 0)
                found = &table[i];
        for (size_t i = 0; i < sizeof shared / sizeof shared[0] && !found; i++)
            if (strcmp(copy, shared[i].name) == 0)
                found = &shared[i];
        if (!found)
            harness_die("unknown command", line);
        found->run(args, line);
    }
}
