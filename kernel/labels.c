/* kernel/labels.c: the label-set table and the task's label pointer (kernel/labels.h). The table is a fixed
 * array filled from the front under a spinlock and never emptied: an entry, once its slot is counted in
 * `used` (stored with release after the entry is written), is never written again, so any reader that holds
 * a pointer to it -- a sample in a ring, a task, a report -- reads a complete, unchanging set without a lock.
 * Portable: the host tests build it as it is. */
#include "kernel/labels.h"

#include <stdatomic.h>
#include <stdint.h>

#include "hal/spinlock.h"
#include "kernel/lib/string.h"
#include "kernel/task.h"

static struct label_set table[LABEL_TABLE_SETS];
static _Atomic unsigned used; /* entries [0, used) are published; written only under lock */
static spinlock_t lock = SPINLOCK_INIT;

static const char why_count[] = "a label set holds 1 to 4 key=value pairs";
static const char why_key[] = "a key is 1 to 15 characters of a-z 0-9 _ . -";
static const char why_value[] = "a value is 1 to 23 printable characters other than space, ',' and '='";
static const char why_twice[] = "a key appears twice in one label set";
static const char why_full[] = "label set table full (64 sets, never freed)";

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

const struct label_set *label_intern(const struct label_pair *pairs, unsigned n, const char **why)
{
    const char *reason = 0;
    struct label_set want;
    const struct label_set *found = 0;
    if (canonical(pairs, n, &want, &reason)) {
        unsigned long flags = spin_lock_irqsave(&lock);
        unsigned count = atomic_load_explicit(&used, memory_order_relaxed);
        for (unsigned i = 0; i < count && !found; i++)
            if (same_set(&table[i], &want))
                found = &table[i];
        if (!found && count == LABEL_TABLE_SETS)
            reason = why_full;
        if (!found && !reason) {
            table[count] = want;
            /* release: the entry is complete before anyone can count it as published */
            atomic_store_explicit(&used, count + 1, memory_order_release);
            found = &table[count];
        }
        spin_unlock_irqrestore(&lock, flags);
    }
    if (!found && why)
        *why = reason;
    return found;
}

const struct label_set *label_intern_one(const char *key, const char *value, const char **why)
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
    return label_intern(&pair, 1, why);
}

unsigned label_sets_used(void)
{
    return atomic_load_explicit(&used, memory_order_acquire);
}

bool label_set_interned(const struct label_set *set)
{
    uintptr_t p = (uintptr_t)set, base = (uintptr_t)table;
    if (p < base || p >= base + sizeof table || (p - base) % sizeof table[0] != 0)
        return false;
    return (p - base) / sizeof table[0] < label_sets_used();
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

void task_set_labels(struct task *task, const struct label_set *set)
{
    atomic_store_explicit(&task->labels, set, memory_order_release);
}

bool task_replace_labels(struct task *task, const struct label_set *expected, const struct label_set *set)
{
    return atomic_compare_exchange_strong_explicit(&task->labels, &expected, set, memory_order_acq_rel,
                                                   memory_order_acquire);
}
