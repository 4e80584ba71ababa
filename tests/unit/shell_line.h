/* tests/unit/shell_line.h: a command line as the shell hands it to a command -- split at spaces into argv --
 * for the tests that run commands (the profile and label commands) or their parsers without the shell. */
#ifndef TESTS_UNIT_SHELL_LINE_H
#define TESTS_UNIT_SHELL_LINE_H

#include <stddef.h>
#include <string.h>

#include "kernel/lib/sink.h"
#include "kernel/shell/commands.h"

#define SHELL_LINE_WORDS 16

/* The words of line in argv (at most SHELL_LINE_WORDS), pointing into copy[cap] (line copied there, cut to
 * fit); returns their number. */
static inline int shell_line_words(char *copy, size_t cap, const char *line, char **argv)
{
    int argc = 0;
    strncpy(copy, line, cap - 1);
    copy[cap - 1] = '\0';
    for (char *word = strtok(copy, " "); word && argc < SHELL_LINE_WORDS; word = strtok(NULL, " "))
        argv[argc++] = word;
    return argc;
}

/* The same, into a copy that lasts until the next call, as the shell's own buffer does (what the parser keeps
 * may point into it). */
static inline int shell_line_split(const char *line, char **argv)
{
    static char copy[256];
    return shell_line_words(copy, sizeof copy, line, argv);
}

/* Runs line through cmd as from says, its output in out[cap]; returns what the command returned. The words
 * are the call's own, so a command run from inside another's (a second console) leaves the first's alone. */
static inline int shell_line_run(int (*cmd)(int argc, char **argv, struct sink *out, const struct shell_origin *from),
                                 const char *line, char *out, size_t cap, const struct shell_origin *from)
{
    char copy[256];
    char *argv[SHELL_LINE_WORDS];
    int argc = shell_line_words(copy, sizeof copy, line, argv);
    struct buffer_sink bs;
    buffer_sink_init(&bs, out, cap);
    return cmd(argc, argv, &bs.sink, from);
}

#endif
