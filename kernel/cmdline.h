/* kernel/cmdline.h: the kernel command line GRUB passes (`make run CMDLINE="..."`): words of the form
 * key=value or key. Unknown keys and malformed words are reported once at boot and otherwise ignored; a
 * consumer asks for its key's value and validates it itself, falling back to its default with a message. */
#ifndef KERNEL_CMDLINE_H
#define KERNEL_CMDLINE_H

#include <stdbool.h>
#include <stddef.h>
#include "kernel/lib/sink.h"

#define CMDLINE_MAX 512
#define CMDLINE_MAX_OPTIONS 16

/* Parses text (copied). Problems are written to report, one line each; returns how many there were. */
int cmdline_parse(const char *text, struct sink *report);

/* The value of key ("" for a bare word), or NULL when absent. */
const char *cmdline_get(const char *key);

/* Whether the command line could not be taken whole (over CMDLINE_MAX - 1 characters: all of it ignored; over
 * CMDLINE_MAX_OPTIONS words: the rest ignored) and one of its words, taken or not, has key (a known one) as its
 * key. A consumer whose option must not be silently lost (udpsh.key=: kernel/net/boot_secret.h) refuses rather
 * than run as if it were absent. */
bool cmdline_cut_names(const char *key);

#endif
