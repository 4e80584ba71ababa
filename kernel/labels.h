/* kernel/labels.h: label sets -- a few key=value pairs saying what a task is doing (`cmd=profile`,
 * `netload=sink`, `job=a`), carried by the task and copied (as a pointer) into every profiler sample taken
 * while it runs. The rules are docs/profiler.md's "Labels": a set is immutable once published, interned in a
 * fixed table (the same pairs, in any order, give the same pointer) and never freed, so a pointer a sample
 * holds stays valid for the life of the kernel; a task's current set is one pointer, swapped atomically with
 * release and loaded by the sampler with acquire. Interning takes a spinlock and runs in task context only;
 * nothing here is for the sample path except the one acquire load (kernel/profiler.c does it inline). */
#ifndef KERNEL_LABELS_H
#define KERNEL_LABELS_H

#include <stdbool.h>
#include <stddef.h>

#define LABEL_MAX_PAIRS 4
#define LABEL_KEY_MAX 15   /* characters of [a-z0-9_.-] */
#define LABEL_VALUE_MAX 23 /* printable ASCII other than space, ',' and '=' */
#define LABEL_TABLE_SETS 64
/* The longest formatted set, "k=v,k=v,k=v,k=v", and its NUL. */
#define LABEL_SET_TEXT_MAX (LABEL_MAX_PAIRS * (LABEL_KEY_MAX + 1 + LABEL_VALUE_MAX) + LABEL_MAX_PAIRS - 1 + 1)

struct label_pair {
    char key[LABEL_KEY_MAX + 1];
    char value[LABEL_VALUE_MAX + 1];
};

/* An interned set: 1..LABEL_MAX_PAIRS pairs sorted by key, no key twice. Read-only once published. */
struct label_set {
    unsigned npairs;
    struct label_pair pairs[LABEL_MAX_PAIRS];
};

struct task;

bool label_key_valid(const char *key);
bool label_value_valid(const char *value);
/* Both strings end inside their arrays, and the key and value are valid. */
bool label_pair_valid(const struct label_pair *pair);
/* "key=value" into *pair: split at the first '=', both sides valid. False (and *pair unspecified) otherwise. */
bool label_parse_pair(const char *word, struct label_pair *pair);

/* Task context. The interned set of the n pairs (in any order), interning it if it is new. NULL when the
 * pairs are refused or the table is full; *why (when why is not NULL) is then one line saying which, e.g.
 * "label set table full (64 sets, never freed)". A refusal changes nothing in the table. */
const struct label_set *label_intern(const struct label_pair *pairs, unsigned n, const char **why);
/* label_intern of the single pair key=value. */
const struct label_set *label_intern_one(const char *key, const char *value, const char **why);

/* Sets interned so far, and whether set is one of them (NULL is not). Any context. */
unsigned label_sets_used(void);
bool label_set_interned(const struct label_set *set);

/* "job=a,netload=sink", or "(none)" for NULL, into buf (always NUL-terminated when cap > 0). Returns the
 * length of the whole text, so a result >= cap means it was cut short. */
size_t label_set_format(const struct label_set *set, char *buf, size_t cap);
/* Whether set has the pair key=value (false for NULL). */
bool label_set_has(const struct label_set *set, const char *key, const char *value);

/* The task's current set (acquire: the set it points to is complete), NULL when it has none. */
const struct label_set *task_labels(const struct task *task);
/* Publishes set (NULL clears) as the task's current set: one atomic pointer store with release. */
void task_set_labels(struct task *task, const struct label_set *set);
/* Publishes set only if the task's current set is still expected (one compare-and-swap): how a command
 * gives back the set it replaced without undoing a change someone else made meanwhile. */
bool task_replace_labels(struct task *task, const struct label_set *expected, const struct label_set *set);

#endif
