/* kernel/profiler/fold.c: the fold (kernel/profiler/fold.h) -- a run's samples folded by call chain into a
 * fixed table of PROFILE_CHAIN_TABLE chains, counted per CPU and per label set, as a take callback of
 * profiler_drain. Task context only: this is where the chain table is allocated and where leaves are resolved
 * to symbols, neither of which the sample path may do. Pure apart from kmalloc, so the host tests drive it with
 * synthetic rings and symbols; the report (kernel/profiler/report.c) prints what it holds. */
#include "kernel/profiler/fold.h"

#include "kernel/heap.h"

_Static_assert((PROFILE_FOLD_INDEX_SLOTS & (PROFILE_FOLD_INDEX_SLOTS - 1)) == 0,
               "the index is masked, so its size is a power of two");
_Static_assert(PROFILE_CHAIN_TABLE < 256, "index slots hold an entry number + 1 in a byte");
_Static_assert((PROFILE_FOLD_TASK_SLOTS & (PROFILE_FOLD_TASK_SLOTS - 1)) == 0, "the task table is masked");

struct profile_fold *profile_fold_create(void)
{
    struct profile_fold *fold = kzalloc(sizeof *fold);
    return fold;
}

void profile_fold_destroy(struct profile_fold *fold)
{
    if (!fold)
        return;
    for (uint32_t i = 0; i < fold->nshares; i++)
        label_release(fold->shares[i].set);
    kfree(fold);
}

uint64_t profile_fold_samples(const struct profile_fold *fold)
{
    return fold->samples;
}

/* Multiplicative hashing, word by word; the top half of the product is where the input bits have spread. */
static uint32_t chain_hash(uint64_t leaf, const uintptr_t *callers, uint32_t ncallers, uint32_t identity)
{
    const uint64_t k = 0x9e3779b97f4a7c15ull; /* 2^64 / golden ratio */
    uint64_t h = (leaf ^ ncallers ^ ((uint64_t)identity << 40)) * k;
    for (uint32_t i = 0; i < ncallers; i++)
        h = (h ^ callers[i]) * k;
    return (uint32_t)(h >> 32);
}

/* What keeps two samples of one chain apart: their marks, and a wall sample's activity and wait. */
static uint32_t chain_identity(uint8_t flags, uint8_t activity, uint8_t waiting_on)
{
    return (uint32_t)flags | (uint32_t)activity << 8 | (uint32_t)waiting_on << 16;
}

static bool chain_matches(const struct profile_chain *c, uint64_t leaf, bool resolved, const uintptr_t *callers,
                          uint32_t ncallers, uint32_t identity)
{
    if (c->leaf != leaf || (c->name != NULL) != resolved || c->ncallers != ncallers ||
        chain_identity(c->flags, c->activity, c->waiting_on) != identity)
        return false;
    for (uint32_t i = 0; i < ncallers; i++)
        if (c->callers[i] != callers[i])
            return false;
    return true;
}

/* A wall sample's weight into the split, and into its task's row (a task that finds the table full is left
 * out of the rows, not of the split). */
static void tally_wall(struct profile_fold *fold, uint32_t pid, uint8_t activity, uint8_t waiting_on,
                       uint64_t weight)
{
    fold->wall = true;
    fold->activity_weight[activity] += weight;
    if (activity == TASK_ACT_WAITING)
        fold->waiting_weight[waiting_on] += weight;
    if (pid == 0)
        return;
    uint32_t slot = (uint32_t)(pid * 0x9e3779b1u) & (PROFILE_FOLD_TASK_SLOTS - 1);
    for (uint32_t probes = 0; probes < PROFILE_FOLD_TASK_SLOTS; probes++) {
        struct profile_task_share *t = &fold->tasks[slot];
        if (t->pid == 0) {
            t->pid = pid;
            fold->ntasks++;
        }
        if (t->pid == pid) {
            t->weight[activity] += weight;
            return;
        }
        slot = (slot + 1) & (PROFILE_FOLD_TASK_SLOTS - 1);
    }
}

void profile_fold_add(struct profile_fold *fold, const struct symtab *tab, const struct profile_record *rec)
{
    uint32_t nframes = rec->nframes;
    if (nframes > PROFILE_MAX_FRAMES)
        nframes = PROFILE_MAX_FRAMES;
    /* The sampler always writes frame 0; a record without it is folded as a leaf of address 0. */
    uint64_t pc = nframes > 0 ? rec->frames[0] : 0;
    const uintptr_t *callers = &rec->frames[1];
    uint32_t ncallers = nframes > 0 ? nframes - 1 : 0;

    struct symbol_hit hit;
    bool resolved = symtab_lookup(tab, pc, &hit);
    uint64_t leaf = resolved ? hit.start : pc;

    /* The marks keep interrupts-off and in-interrupt samples apart from the same chain running normally; a
     * wall sample's activity and wait keep a chain waiting apart from the same chain running. */
    uint8_t flags = rec->flags & (PROFILE_REC_IRQS_OFF | PROFILE_REC_IN_IRQ | PROFILE_REC_LET_IN);
    uint8_t activity = 0, waiting_on = 0;
    uint64_t weight = profile_record_weight(rec);
    if (rec->flags & PROFILE_REC_WALL) {
        flags = 0; /* the word the marks' lateness would use is the wall's */
        activity = rec->wall.activity <= TASK_ACT_WAITING ? rec->wall.activity : TASK_ACT_NONE;
        waiting_on = activity == TASK_ACT_WAITING && rec->wall.waiting_on < TASK_WAIT_KINDS ? rec->wall.waiting_on
                                                                                          : TASK_WAIT_NONE;
        tally_wall(fold, rec->pid, activity, waiting_on, weight);
    }
    uint32_t identity = chain_identity(flags, activity, waiting_on);
    uint32_t held_off_us = flags & PROFILE_REC_LET_IN ? rec->held_off_us : 0;
    fold->samples++;
    fold->weight += weight;
    if (rec->cpu < MAX_CPUS)
        fold->cpu_samples[rec->cpu]++;
    uint32_t slot = chain_hash(leaf, callers, ncallers, identity) & (PROFILE_FOLD_INDEX_SLOTS - 1);
    for (;;) {
        uint32_t entry = fold->index[slot];
        if (entry == 0)
            break;
        struct profile_chain *c = &fold->chains[entry - 1];
        if (chain_matches(c, leaf, resolved, callers, ncallers, identity)) {
            c->count++;
            c->weight += weight;
            c->held_off_us += held_off_us;
            if (resolved) {
                if (hit.offset < c->min_offset)
                    c->min_offset = hit.offset;
                if (hit.offset > c->max_offset)
                    c->max_offset = hit.offset;
            }
            return;
        }
        slot = (slot + 1) & (PROFILE_FOLD_INDEX_SLOTS - 1);
    }

    if (fold->used == PROFILE_CHAIN_TABLE) {
        fold->not_tracked++;
        return;
    }
    struct profile_chain *c = &fold->chains[fold->used];
    c->leaf = leaf;
    c->name = resolved ? hit.name : NULL;
    c->min_offset = c->max_offset = resolved ? hit.offset : 0;
    for (uint32_t i = 0; i < ncallers; i++)
        c->callers[i] = callers[i];
    c->ncallers = ncallers;
    c->count = 1;
    c->weight = weight;
    c->flags = flags;
    c->activity = activity;
    c->waiting_on = waiting_on;
    c->held_off_us = held_off_us;
    fold->used++;
    fold->index[slot] = (uint8_t)fold->used;
}

/* Counts rec's label set (the report's breakdown). */
static void tally_labels(struct profile_fold *fold, const struct label_set *set, uint64_t weight)
{
    if (set)
        fold->labelled = true;
    for (uint32_t i = 0; i < fold->nshares; i++) {
        if (fold->shares[i].set == set) {
            fold->shares[i].count++;
            fold->shares[i].weight += weight;
            return;
        }
    }
    /* The fold holds a reference to each set it counts, so the report can print it after the drain and the
     * pointer stays its identity (no set it holds is freed and reused meanwhile). So it never counts more
     * sets than the pool holds at once, and NULL: a new one always fits. */
    if (fold->nshares < LABEL_TABLE_SETS + 1) {
        label_hold(set);
        fold->shares[fold->nshares++] = (struct profile_label_share){ set, 1, weight };
    }
}

void profile_fold_take(void *arg, const struct profile_record *rec)
{
    struct profile_fold_into *into = arg;
    profile_fold_add(into->fold, into->tab, rec);
    tally_labels(into->fold, profile_record_labels(rec), profile_record_weight(rec));
}

void profile_fold_drain(struct profile_fold *fold, struct profile_run *run, const struct profile_filter *filter,
                        const struct symtab *tab)
{
    struct profile_fold_into into = { fold, tab };
    profiler_drain(run, filter, profile_fold_take, &into);
}
