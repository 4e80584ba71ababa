/* kernel/labels.h: label sets -- a few key=value pairs saying what a task is doing (`cmd=profile`,
 * `netload=sink`, `job=a`), carried by the task and copied (as a pointer) into every profiler sample taken
 * while it runs -- and the task's span, a number (`span=N`) it changes as often as it likes without
 * interning anything. The rules are docs/profiler.md's "Labels": a set is immutable once published and
 * interned in a fixed pool (the same pairs, in any order, give the same pointer); it is counted by reference
 * (each task whose current set it is, and any task-context holder such as a fold), and a set whose last
 * reference goes is retired, then returned to the pool only once no sample can still be holding it: every
 * sampler that was inside a sample has left it, and every ring record written by then has been drained
 * (struct label_readers, which the profiler provides). A task's current set is one pointer, swapped
 * atomically and loaded by the sampler; the pool takes a spinlock and runs in task context only. */
#ifndef KERNEL_LABELS_H
#define KERNEL_LABELS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LABEL_MAX_PAIRS 4
#define LABEL_KEY_MAX 15   /* characters of [a-z0-9_.-] */
#define LABEL_VALUE_MAX 23 /* printable ASCII other than space, ',' and '=' */
#define LABEL_TABLE_SETS 255 /* sets in the pool at once: live, waiting to be freed, and the pinned cmd= sets */
#define LABEL_SPAN_KEY "span" /* the numeric label: a task's span word, never an interned pair */
#define LABEL_READER_MARKS 520 /* words of struct label_readers' marks (the profiler's: 2 per CPU, and a count) */
/* The longest formatted set, "k=v,k=v,k=v,k=v", and its NUL. */
#define LABEL_SET_TEXT_MAX (LABEL_MAX_PAIRS * (LABEL_KEY_MAX + 1 + LABEL_VALUE_MAX) + LABEL_MAX_PAIRS - 1 + 1)
/* The longest task_labels_text: a set, ",span=" and a 64-bit span in decimal. */
#define TASK_LABELS_TEXT_MAX (LABEL_SET_TEXT_MAX + 6 + 20)

struct label_pair {
    char key[LABEL_KEY_MAX + 1];
    char value[LABEL_VALUE_MAX + 1];
};

/* An interned set: 1..LABEL_MAX_PAIRS pairs sorted by key, no key twice, never the key "span". Read-only from
 * the moment it is published until it is returned to the pool. */
struct label_set {
    unsigned npairs;
    struct label_pair pairs[LABEL_MAX_PAIRS];
    /* How many times its pool slot has been freed before: a record keeps the generation it saw beside the
     * pointer, so a reader that comes after the set was freed (and its slot perhaps given to a new set) can
     * tell. Wraps after 2^32 frees of one slot, far beyond any record's time in a ring. */
    uint32_t generation;
};

struct task;

bool label_key_valid(const char *key);
bool label_value_valid(const char *value);
/* Both strings end inside their arrays, and the key and value are valid. */
bool label_pair_valid(const struct label_pair *pair);
/* "key=value" into *pair: split at the first '=', both sides valid. False (and *pair unspecified) otherwise. */
bool label_parse_pair(const char *word, struct label_pair *pair);

/* Task context. The interned set of the n pairs (in any order), interning it if it is new, with one reference
 * that is the caller's (label_release gives it back). NULL when the pairs are refused or the pool is full;
 * *why (when why is not NULL) is then one line saying which, e.g. "label set table full (255 sets in use or
 * waiting to be freed)", and a full pool counts the refusal (struct label_stats.dropped). A refusal changes
 * nothing in the pool. */
const struct label_set *label_intern(const struct label_pair *pairs, unsigned n, const char **why);
/* label_intern of the single pair key=value. */
const struct label_set *label_intern_one(const char *key, const char *value, const char **why);
/* label_intern_one, and the set is never freed: the shell's cmd=<name> sets, made at boot, so a command's
 * label never finds the pool full. */
const struct label_set *label_intern_pinned(const char *key, const char *value, const char **why);

/* Task context. Another reference to a set the caller holds (or that an undrained record holds), and giving
 * one back. NULL is ignored. The last reference retires the set; it goes back to the pool once
 * label_reclaim finds that no sample can hold it. */
void label_hold(const struct label_set *set);
void label_release(const struct label_set *set);

/* Who may hold a set's pointer without a reference: the profiler's sample path and its rings. marks is
 * LABEL_READER_MARKS words the pool keeps between the calls. samplers_mark notes every sampler inside a
 * sample now (it runs after a sequentially consistent fence that follows the swaps that retired the sets);
 * samplers_passed says whether each of those has left. records_mark then notes where each ring's records
 * end, and records_passed whether the consumer has drained up to there. Each is called under the pool's
 * lock, in task context. */
struct label_readers {
    void (*samplers_mark)(uint32_t *marks);
    bool (*samplers_passed)(const uint32_t *marks);
    void (*records_mark)(uint32_t *marks);
    bool (*records_passed)(const uint32_t *marks);
};
/* Task context: the readers to wait for from now on (the profiler's, at its first start: before it no sample
 * was ever taken). NULL: none. */
void label_set_readers(const struct label_readers *readers);
/* Task context: frees every retired set that no sample can hold any more, taking the grace periods as far as
 * they have come (it never waits). Interning and the profiler's drain call it; so does label_stats. */
void label_reclaim(void);

struct label_stats {
    unsigned capacity; /* LABEL_TABLE_SETS */
    unsigned live;     /* sets with a reference (the pinned ones among them) */
    unsigned pinned;   /* cmd= sets, never freed */
    unsigned waiting;  /* retired, not yet free: a sample may still hold them */
    unsigned used;     /* live + waiting: the pool's slots taken */
    uint64_t made;     /* sets interned since boot */
    uint64_t freed;    /* sets returned to the pool since boot */
    uint64_t dropped;  /* interning refused because the pool was full, since boot */
};
/* Task context: label_reclaim, then the pool's figures. */
void label_stats(struct label_stats *out);
/* "label sets: 12 of 255 in use (10 live, 8 of them pinned cmd= sets, 2 waiting to be freed), 40 made, 28
 * freed, 0 dropped (table full)" into buf, without a newline. */
void label_stats_format(const struct label_stats *s, char *buf, size_t cap);

/* Sets in the pool (live or waiting), and whether set is one of them (NULL is not). Task context. */
unsigned label_sets_used(void);
bool label_set_interned(const struct label_set *set);

/* "job=a,netload=sink", or "(none)" for NULL, into buf (always NUL-terminated when cap > 0). Returns the
 * length of the whole text, so a result >= cap means it was cut short. */
size_t label_set_format(const struct label_set *set, char *buf, size_t cap);
/* Whether set has the pair key=value (false for NULL). */
bool label_set_has(const struct label_set *set, const char *key, const char *value);

/* The task's current set (acquire: the set it points to is complete), NULL when it has none. The pointer is
 * only an identity: to read the set, hold it (task_labels_hold) or format it (task_labels_format). */
const struct label_set *task_labels(const struct task *task);
/* Task context: the task's current set with a reference the caller gives back (label_release); NULL for none. */
const struct label_set *task_labels_hold(const struct task *task);
/* Task context: the task's current set as label_set_format writes it, read under the pool's lock. */
size_t task_labels_format(const struct task *task, char *buf, size_t cap);
/* Task context: a task's labels as `ps` and `tasks` print them -- its set, then ",span=N" when it has a span
 * ("span=N" alone without a set), "-" when it has neither. Returns the length as label_set_format does. */
size_t task_labels_text(const struct task *task, char *buf, size_t cap);
/* Task context. Publishes set (NULL clears) as the task's current set, one atomic exchange; the task takes
 * its own reference to set and gives back the one it had to its old set. The caller keeps its reference. */
void task_set_labels(struct task *task, const struct label_set *set);
/* Task context. Publishes set only if the task's current set is still expected (one compare-and-swap), the
 * references moving as in task_set_labels: how a command gives back the set it replaced without undoing a
 * change someone else made meanwhile. */
bool task_replace_labels(struct task *task, const struct label_set *expected, const struct label_set *set);

/* The task's span (0: none): a number it changes as often as it likes, with one atomic store and nothing
 * interned; every sample carries the value it had, shown as the label span=N. Any context. */
uint64_t task_span(const struct task *task);
void task_set_span(struct task *task, uint64_t span);

#endif
