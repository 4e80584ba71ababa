/* tests/host/harness_input.h: what the host harnesses (kernel_report.c, pprof_harness.c, kernel_stream.c) share in
 * reading their commands from standard input, one a line: the loop that hands each line to its command, a line's
 * words, the symbol table ("sym", "text"), label sets by number ("label") and a record's trailing fields. */
#ifndef TESTS_HOST_HARNESS_INPUT_H
#define TESTS_HOST_HARNESS_INPUT_H

#include <stddef.h>

#include "kernel/labels.h"
#include "kernel/profiler_ring.h"
#include "kernel/symbols.h"

#define HARNESS_MAX_LABELS 64

/* A command: the line's first word and what runs it, given the rest of the line (its newline cut, the caller's to
 * cut up) and the whole line as read (for harness_die). */
struct harness_command {
    const char *name;
    void (*run)(char *args, const char *line);
};

/* Reads standard input to its end, running each line's command: those of table, or the shared ones
 *   sym ADDR SIZE NAME       a symbol (hex address, decimal size) into harness_symtab; in address order
 *   text START END          the text range (hex); ends the symbol table
 *   label ID K=V[,K=V...]   interns a label set under the number ID
 * A blank line is passed over; an unknown command is fatal. name prefixes what harness_die writes. */
void harness_run(const char *name, const struct harness_command *table, size_t count);

/* Writes "NAME: what: line" to standard error and exits with 2. */
_Noreturn void harness_die(const char *what, const char *line);

/* Splits text at spaces into word[] (its words cut in place): how many; more than max is fatal. */
unsigned harness_words(char *text, char **word, unsigned max, const char *line);

/* The label set a record names: "-" none, else the one interned under that number (an unknown one is fatal). */
const struct label_set *harness_label_set(const char *word, const char *line);

/* A record's fields that end every harness's "rec": FLAGS HELD_US PERIOD F... (FLAGS: PROFILE_REC_* in decimal;
 * F: hex frames, leaf first), from word[0 .. n). */
void harness_record_tail(struct profile_record *rec, char **word, unsigned n, const char *line);

/* What "sym" and "text" built. */
extern struct symtab harness_symtab;

#endif
