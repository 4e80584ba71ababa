/* kernel/labels.c: the label-set pool and the task's label pointer and span (kernel/labels.h). The pool is a
 * fixed array of sets with a reference count each, under a spinlock, task context only. A set whose last
 * reference goes is retired, not freed: a sampler may have loaded it from a task a moment before the swap,
 * and records in the rings carry it until they are drained. Retired sets are freed in batches, each batch
 * through two grace periods that label_reclaim advances without waiting (struct label_readers): every sampler
 * that was inside a sample when the batch closed has left it, and then every ring record written by then has
 * been drained. The proof is docs/profiler.md's "Labels". Portable: the host tests build it as it is. */
#include "kernel/labels.h"

#include <stdatomic.h>
#include <stdint.h>

#include "hal/spinlock.h"
#include "kernel/lib/format.h"
#include "kernel/lib/string.h"
#include "kernel/task.h"

/* A slot of the pool: free, live (referenced), or retired (no reference, waiting out its grace periods). */
enum slot_state { SLOT_FREE, SLOT_LIVE, SLOT_RETIRED };
struct slot {
    uint32_t refs;
    uint8_t state; /* enum slot_state */
    bool pinned;
    uint64_t retired_in; /* the batch it was retired into */
};

static struct label_set table[LABEL_TABLE_SETS];
static struct slot slots[LABEL_TABLE_SETS];
static spinlock_t lock = SPINLOCK_INIT;
static struct label_stats stats = { .capacity = LABEL_TABLE_SETS };

/* Reclamation: sets retired now join batch `batch`; a batch closes when reclaim starts its grace periods,
 * and its sets are freed when both have passed. One batch is in its grace periods at a time. */
enum grace_stage { GRACE_NONE, GRACE_SAMPLERS, GRACE_RECORDS };
static const struct label_readers *readers;
static uint64_t batch = 1;
static uint64_t closing; /* the batch in its grace periods */
static enum grace_stage stage;
static uint32_t marks[LABEL_READER_MARKS];

static const char why_count[] = "a label set holds 1 to 4 key=value pairs";
static const char why_key[] = "a key is 1 to 15 characters of a-z 0-9 _ . -";
static const char why_value[] = "a value is 1 to 23 printable characters other than space, ',' and '='";
static const char why_twice[] = "a key appears twice in one label set";
static const char why_span[] = "span is the numeric label: span=N sets a task's span, it is never part of a set";
static const char why_full[] = "label set table full (255 sets in use or waiting to be freed)";

static bool key_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';
}

static bool value_char(char c)
{
    return c > ' ' && c <= '~' && c != ',' && c != '=';
}

bool label_key_valid(const char *key)
{
    size_t n = 0;
    for (; key[n]; n++)
        if (n == LABEL_KEY_MAX || !key_char(key[n]))
            return false;
    return n > 0;
}

bool label_value_valid(const char *value)
{
    size_t n = 0;
    for (; value[n]; n++)
        if (n == LABEL_VALUE_MAX || !value_char(value[n]))
            return false;
    return n > 0;
}

bool label_parse_pair(const char *word, struct label_pair *pair)
{
    size_t eq = 0;
    while (word[eq] && word[eq] != '=')
        eq++;
    if (word[eq] != '=' || eq == 0 || eq > LABEL_KEY_MAX)
        return false;
    memcpy(pair->key, word, eq);
    pair->key[eq] = 0;
    const char *value = word + eq + 1;
    size_t vlen = strlen(value);
    if (vlen == 0 || vlen > LABEL_VALUE_MAX)
        return false;
    memcpy(pair->value, value, vlen + 1);
    return label_key_valid(pair->key) && label_value_valid(pair->value);
}

/* Whether text has its NUL within its cap bytes. */
static bool terminated(const char *text, size_t cap)
{
    for (size_t i = 0; i < cap; i++)
        if (!text[i])
            return true;
    return false;
}

/* label_pair_valid, saying which half is wrong. */
static bool pair_valid(const struct label_pair *p, const char **why)
{
    if (!terminated(p->key, sizeof p->key) || !label_key_valid(p->key)) {
        *why = why_key;
        return false;
    }
    if (!terminated(p->value, sizeof p->value) || !label_value_valid(p->value)) {
        *why = why_value;
        return false;
    }
    return true;
}

bool label_pair_valid(const struct label_pair *pair)
{
    const char *why;
    return pair_valid(pair, &why);
}

static bool same_set(const struct label_set *a, const struct label_set *b)
{
    if (a->npairs != b->npairs)
        return false;
    for (unsigned i = 0; i < a->npairs; i++)
        if (strcmp(a->pairs[i].key, b->pairs[i].key) != 0 || strcmp(a->pairs[i].value, b->pairs[i].value) != 0)
            return false;
    return true;
}

/* The canonical form of pairs into *set: validated, sorted by key, zero-filled around the strings. */
static bool canonical(const struct label_pair *pairs, unsigned n, struct label_set *set, const char **why)
{
    memset(set, 0, sizeof *set);
    if (n == 0 || n > LABEL_MAX_PAIRS) {
        *why = why_count;
        return false;
    }
    for (unsigned i = 0; i < n; i++) {
        if (!pair_valid(&pairs[i], why))
            return false;
        if (strcmp(pairs[i].key, LABEL_SPAN_KEY) == 0) {
            *why = why_span;
            return false;
        }
        /* insertion by key */
        unsigned j = set->npairs;
        while (j > 0) {
            int order = strcmp(set->pairs[j - 1].key, pairs[i].key);
            if (order == 0) {
                *why = why_twice;
                return false;
            }
            if (order < 0)
                break;
            set->pairs[j] = set->pairs[j - 1];
            j--;
        }
        memset(&set->pairs[j], 0, sizeof set->pairs[j]);
        strlcpy(set->pairs[j].key, pairs[i].key, sizeof set->pairs[j].key);
        strlcpy(set->pairs[j].value, pairs[i].value, sizeof set->pairs[j].value);
        set->npairs++;
    }
    return true;
}

/* ---- the pool (under the lock) ------------------------------------------------------------------------ */

static unsigned slot_of(const struct label_set *set)
{
    return (unsigned)(set - table);
}

static void hold_locked(unsigned i)
{
    if (slots[i].state == SLOT_RETIRED) {
        /* Revived before its grace periods ended: it was never freed, so it is still the same set. */
        slots[i].state = SLOT_LIVE;
        stats.waiting--;
        stats.live++;
    }
    slots[i].refs++;
}

static void release_locked(unsigned i)
{
    if (slots[i].state != SLOT_LIVE || slots[i].refs == 0)
        return; /* not a reference anyone holds: nothing to give back */
    if (--slots[i].refs > 0 || slots[i].pinned)
        return;
    slots[i].state = SLOT_RETIRED;
    slots[i].retired_in = batch;
    stats.live--;
    stats.waiting++;
}

static void free_batch_locked(uint64_t done)
{
    for (unsigned i = 0; i < LABEL_TABLE_SETS; i++) {
        if (slots[i].state == SLOT_RETIRED && slots[i].retired_in <= done) {
            slots[i].state = SLOT_FREE;
            /* A record that kept the pointer sees another generation from now on: the freed slot's, then its
             * next set's. */
            uint32_t generation = table[i].generation + 1;
            memset(&table[i], 0, sizeof table[i]);
            table[i].generation = generation;
            stats.waiting--;
            stats.used--;
            stats.freed++;
        }
    }
}

/* Takes the grace periods as far as they have come, and frees what they cover. Never waits. */
static void reclaim_locked(void)
{
    for (int round = 0; round < 2 && stats.waiting; round++) {
        if (stage == GRACE_NONE) {
            closing = batch++;
            /* Every swap that retired a set in the batch came before this fence, so a sampler that enters after
             * the marks are read finds the new pointers (docs/profiler.md, "Labels": the proof). */
            atomic_thread_fence(memory_order_seq_cst);
            if (readers)
                readers->samplers_mark(marks);
            stage = GRACE_SAMPLERS;
        }
        if (stage == GRACE_SAMPLERS) {
            if (readers && !readers->samplers_passed(marks))
                return;
            if (readers)
                readers->records_mark(marks);
            stage = GRACE_RECORDS;
        }
        if (readers && !readers->records_passed(marks))
            return;
        stage = GRACE_NONE;
        free_batch_locked(closing);
    }
}

static int find_locked(const struct label_set *want)
{
    for (unsigned i = 0; i < LABEL_TABLE_SETS; i++)
        if (slots[i].state != SLOT_FREE && same_set(&table[i], want))
            return (int)i;
    return -1;
}

static int free_slot_locked(void)
{
    for (unsigned i = 0; i < LABEL_TABLE_SETS; i++)
        if (slots[i].state == SLOT_FREE)
            return (int)i;
    return -1;
}

static const struct label_set *intern(const struct label_pair *pairs, unsigned n, bool pin, const char **why)
{
    const char *reason = 0;
    struct label_set want;
    const struct label_set *found = 0;
    if (canonical(pairs, n, &want, &reason)) {
        unsigned long flags = spin_lock_irqsave(&lock);
        reclaim_locked();
        int i = find_locked(&want);
        if (i < 0 && (i = free_slot_locked()) >= 0) {
            uint32_t generation = table[i].generation;
            table[i] = want;
            table[i].generation = generation;
            slots[i] = (struct slot){ 0, SLOT_LIVE, false, 0 };
            stats.live++;
            stats.used++;
            stats.made++;
        }
        if (i < 0) {
            reason = why_full;
            stats.dropped++;
        } else {
            hold_locked((unsigned)i);
            if (pin && !slots[i].pinned) {
                slots[i].pinned = true;
                stats.pinned++;
            }
            found = &table[i];
        }
        spin_unlock_irqrestore(&lock, flags);
    }
    if (!found && why)
        *why = reason;
    return found;
}

const struct label_set *label_intern(const struct label_pair *pairs, unsigned n, const char **why)
{
    return intern(pairs, n, false, why);
}

static const struct label_set *intern_one(const char *key, const char *value, bool pin, const char **why)
{
    struct label_pair pair;
    memset(&pair, 0, sizeof pair);
    if (strlen(key) > LABEL_KEY_MAX || strlen(value) > LABEL_VALUE_MAX) {
        if (why)
            *why = strlen(key) > LABEL_KEY_MAX ? why_key : why_value;
        return 0;
    }
    strlcpy(pair.key, key, sizeof pair.key);
    strlcpy(pair.value, value, sizeof pair.value);
    return intern(&pair, 1, pin, why);
}

const struct label_set *label_intern_one(const char *key, const char *value, const char **why)
{
    return intern_one(key, value, false, why);
}

const struct label_set *label_intern_pinned(const char *key, const char *value, const char **why)
{
    return intern_one(key, value, true, why);
}

/* Whether set points at a slot of the pool. */
static bool in_pool(const struct label_set *set)
{
    uintptr_t p = (uintptr_t)set, base = (uintptr_t)table;
    return p >= base && p < base + sizeof table && (p - base) % sizeof table[0] == 0;
}

void label_hold(const struct label_set *set)
{
    if (!in_pool(set))
        return;
    unsigned long flags = spin_lock_irqsave(&lock);
    if (slots[slot_of(set)].state != SLOT_FREE)
        hold_locked(slot_of(set));
    spin_unlock_irqrestore(&lock, flags);
}

void label_release(const struct label_set *set)
{
    if (!in_pool(set))
        return;
    unsigned long flags = spin_lock_irqsave(&lock);
    release_locked(slot_of(set));
    reclaim_locked();
    spin_unlock_irqrestore(&lock, flags);
}

void label_set_readers(const struct label_readers *r)
{
    unsigned long flags = spin_lock_irqsave(&lock);
    readers = r;
    spin_unlock_irqrestore(&lock, flags);
}

void label_reclaim(void)
{
    unsigned long flags = spin_lock_irqsave(&lock);
    reclaim_locked();
    spin_unlock_irqrestore(&lock, flags);
}

void label_stats(struct label_stats *out)
{
    unsigned long flags = spin_lock_irqsave(&lock);
    reclaim_locked();
    *out = stats;
    spin_unlock_irqrestore(&lock, flags);
}

void label_stats_format(const struct label_stats *s, char *buf, size_t cap)
{
    ksnprintf(buf, cap,
              "label sets: %u of %u in use (%u live, %u of them pinned cmd= sets, %u waiting to be freed), %llu made, "
              "%llu freed, %llu dropped (table full)",
              s->used, s->capacity, s->live, s->pinned, s->waiting, (unsigned long long)s->made,
              (unsigned long long)s->freed, (unsigned long long)s->dropped);
}

unsigned label_sets_used(void)
{
    unsigned long flags = spin_lock_irqsave(&lock);
    unsigned used = stats.used;
    spin_unlock_irqrestore(&lock, flags);
    return used;
}

bool label_set_interned(const struct label_set *set)
{
    if (!in_pool(set))
        return false;
    unsigned long flags = spin_lock_irqsave(&lock);
    bool yes = slots[slot_of(set)].state != SLOT_FREE;
    spin_unlock_irqrestore(&lock, flags);
    return yes;
}

/* Appends text to buf at *len, as much as fits below cap - 1; *len counts all of it. */
static void append(char *buf, size_t cap, size_t *len, const char *text)
{
    for (; *text; text++, (*len)++)
        if (*len + 1 < cap)
            buf[*len] = *text;
}

size_t label_set_format(const struct label_set *set, char *buf, size_t cap)
{
    size_t len = 0;
    if (!set) {
        append(buf, cap, &len, "(none)");
    } else {
        for (unsigned i = 0; i < set->npairs; i++) {
            if (i)
                append(buf, cap, &len, ",");
            append(buf, cap, &len, set->pairs[i].key);
            append(buf, cap, &len, "=");
            append(buf, cap, &len, set->pairs[i].value);
        }
    }
    if (cap > 0)
        buf[len < cap ? len : cap - 1] = 0;
    return len;
}

bool label_set_has(const struct label_set *set, const char *key, const char *value)
{
    if (!set)
        return false;
    for (unsigned i = 0; i < set->npairs; i++)
        if (strcmp(set->pairs[i].key, key) == 0)
            return strcmp(set->pairs[i].value, value) == 0;
    return false;
}

const struct label_set *task_labels(const struct task *task)
{
    return atomic_load_explicit(&task->labels, memory_order_acquire);
}

const struct label_set *task_labels_hold(const struct task *task)
{
    /* Under the lock: the set cannot lose the task's reference, and be retired and freed, between the load and
     * the hold, since giving a reference back takes the lock too. */
    unsigned long flags = spin_lock_irqsave(&lock);
    const struct label_set *set = atomic_load_explicit(&task->labels, memory_order_acquire);
    if (in_pool(set) && slots[slot_of(set)].state != SLOT_FREE)
        hold_locked(slot_of(set));
    spin_unlock_irqrestore(&lock, flags);
    return set;
}

size_t task_labels_format(const struct task *task, char *buf, size_t cap)
{
    unsigned long flags = spin_lock_irqsave(&lock);
    size_t n = label_set_format(atomic_load_explicit(&task->labels, memory_order_acquire), buf, cap);
    spin_unlock_irqrestore(&lock, flags);
    return n;
}

size_t task_labels_text(const struct task *task, char *buf, size_t cap)
{
    size_t len = 0;
    unsigned long flags = spin_lock_irqsave(&lock);
    const struct label_set *set = atomic_load_explicit(&task->labels, memory_order_acquire);
    if (set)
        len = label_set_format(set, buf, cap);
    spin_unlock_irqrestore(&lock, flags);
    uint64_t span = task_span(task);
    if (span) {
        char number[24];
        ksnprintf(number, sizeof number, "%sspan=%llu", len ? "," : "", (unsigned long long)span);
        append(buf, cap, &len, number);
    }
    if (len == 0)
        append(buf, cap, &len, "-");
    if (cap > 0)
        buf[len < cap ? len : cap - 1] = 0;
    return len;
}

void task_set_labels(struct task *task, const struct label_set *set)
{
    label_hold(set);
    /* seq_cst: the retiring release below, and the grace period that follows it, come after this exchange */
    const struct label_set *old = atomic_exchange_explicit(&task->labels, set, memory_order_seq_cst);
    label_release(old);
}

bool task_replace_labels(struct task *task, const struct label_set *expected, const struct label_set *set)
{
    label_hold(set);
    bool swapped = atomic_compare_exchange_strong_explicit(&task->labels, &expected, set, memory_order_seq_cst,
                                                           memory_order_acquire);
    label_release(swapped ? expected : set);
    return swapped;
}

uint64_t task_span(const struct task *task)
{
    return atomic_load_explicit(&task->span, memory_order_relaxed);
}

void task_set_span(struct task *task, uint64_t span)
{
    atomic_store_explicit(&task->span, span, memory_order_relaxed);
}
