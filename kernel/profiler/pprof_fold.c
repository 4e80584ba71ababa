/* kernel/profiler/pprof_fold.c: the fold of a pprof profile (kernel/profiler/pprof_fold.h) -- records folded
 * by exact frames, label set, span, pid, marks (a wall sample's: its state) and CPU into a fixed table on the
 * heap, as a take callback of profiler_drain. It runs inside the window it profiles, so it looks nothing up and
 * allocates nothing once created: a hash, a probe and a compare of words per sample. Pure apart from kzalloc and
 * the label pool's references, so the unit tests drive it over synthetic rings. */
#include "kernel/profiler/pprof_fold.h"

#include "kernel/heap.h"
#include "kernel/profiler/fold.h" /* profile_record_weight: one weight for both folds */

_Static_assert((PPROF_FOLD_SLOTS & (PPROF_FOLD_SLOTS - 1)) == 0, "the index is masked: a power of two");
_Static_assert(PPROF_FOLD_ENTRIES < 65536, "index slots hold an entry number + 1 in 16 bits");

struct pprof_fold *pprof_fold_create(void)
{
    return kzalloc(sizeof(struct pprof_fold));
}

void pprof_fold_destroy(struct pprof_fold *fold)
{
    if (!fold)
        return;
    for (uint32_t i = 0; i < fold->used; i++)
        label_release(fold->entries[i].labels);
    kfree(fold);
}

/* What keeps two samples of one chain apart besides their task and labels: their marks, and a wall sample's
 * state and wait (0 for a CPU sample). */
struct key_marks {
    uint8_t flags;
    uint8_t activity;
    uint8_t waiting_on;
};

static struct key_marks record_marks(const struct profile_record *rec)
{
    if (rec->flags & PROFILE_REC_WALL)
        return (struct key_marks){ PROFILE_REC_WALL, rec->wall.activity, rec->wall.waiting_on };
    return (struct key_marks){ rec->flags & (PROFILE_REC_IRQS_OFF | PROFILE_REC_IN_IRQ | PROFILE_REC_LET_IN), 0, 0 };
}

/* Multiplicative hashing, word by word; the top half of the product is where the input bits have spread. */
static uint32_t key_hash(const struct profile_record *rec, uint32_t nframes, struct key_marks marks)
{
    const uint64_t k = 0x9e3779b97f4a7c15ull; /* 2^64 / golden ratio */
    uint64_t h = ((uint64_t)nframes | (uint64_t)marks.flags << 8 | (uint64_t)rec->cpu << 16 |
                  (uint64_t)rec->pid << 32) * k;
    h = (h ^ ((uint64_t)marks.activity | (uint64_t)marks.waiting_on << 8)) * k;
    h = (h ^ (uint64_t)(uintptr_t)profile_record_labels(rec)) * k;
    h = (h ^ rec->span) * k;
    for (uint32_t i = 0; i < nframes; i++)
        h = (h ^ rec->frames[i]) * k;
    return (uint32_t)(h >> 32);
}

static bool key_matches(const struct pprof_fold_entry *e, const struct profile_record *rec, uint32_t nframes,
                        struct key_marks marks)
{
    if (e->nframes != nframes || e->flags != marks.flags || e->activity != marks.activity ||
        e->waiting_on != marks.waiting_on || e->cpu != rec->cpu || e->pid != rec->pid ||
        e->labels != profile_record_labels(rec) || e->span != rec->span)
        return false;
    for (uint32_t i = 0; i < nframes; i++)
        if (e->frames[i] != rec->frames[i])
            return false;
    return true;
}

void pprof_fold_add(struct pprof_fold *fold, const struct profile_record *rec)
{
    uint32_t nframes = rec->nframes > PROFILE_MAX_FRAMES ? PROFILE_MAX_FRAMES : rec->nframes;
    struct key_marks marks = record_marks(rec);
    /* a wall record's word is its state, not a lateness */
    uint32_t held_off_us = marks.flags & PROFILE_REC_LET_IN ? rec->held_off_us : 0;
    uint64_t weight = profile_record_weight(rec);
    fold->samples++;
    fold->weight += weight;
    uint32_t slot = key_hash(rec, nframes, marks) & (PPROF_FOLD_SLOTS - 1);
    for (;;) {
        uint32_t entry = fold->index[slot];
        if (entry == 0)
            break;
        struct pprof_fold_entry *e = &fold->entries[entry - 1];
        if (key_matches(e, rec, nframes, marks)) {
            e->count++;
            e->weight += weight;
            e->held_off_us += held_off_us;
            return;
        }
        slot = (slot + 1) & (PPROF_FOLD_SLOTS - 1);
    }
    if (fold->used == PPROF_FOLD_ENTRIES) {
        fold->not_tracked++;
        fold->not_tracked_weight += weight;
        return;
    }
    struct pprof_fold_entry *e = &fold->entries[fold->used];
    for (uint32_t i = 0; i < nframes; i++)
        e->frames[i] = rec->frames[i];
    /* The record's set is valid only until it is drained; the entry keeps it until the encoder has read it. */
    e->labels = profile_record_labels(rec);
    label_hold(e->labels);
    e->span = rec->span;
    e->pid = rec->pid;
    e->cpu = rec->cpu;
    e->nframes = (uint8_t)nframes;
    e->flags = marks.flags;
    e->activity = marks.activity;
    e->waiting_on = marks.waiting_on;
    e->count = 1;
    e->weight = weight;
    e->held_off_us = held_off_us;
    fold->used++;
    fold->index[slot] = (uint16_t)fold->used;
}

static void take_into_pprof_fold(void *arg, const struct profile_record *rec)
{
    pprof_fold_add(arg, rec);
}

void pprof_fold_drain(struct pprof_fold *fold, struct profile_run *run, const struct profile_filter *filter)
{
    profiler_drain(run, filter, take_into_pprof_fold, fold);
}
