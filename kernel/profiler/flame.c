/* kernel/profiler/flame.c: a flame graph's tree (kernel/profiler/flame.h) -- a pprof fold's keys merged by
 * function from the outermost frame inwards, in a node table sized from the fold (PROFILE_MAX_FRAMES nodes a
 * key, the root and "[not tracked]"), found through an open-addressed index; then put in drawing order and laid
 * out, each node's children side by side from its left edge, in order of name. Task context, after the window:
 * the symbol lookups happen here, never in the fold. Pure apart from kmalloc, so the unit tests drive it with
 * synthetic folds and symbols. */
#include "kernel/profiler/flame.h"

#include "kernel/heap.h"
#include "kernel/lib/string.h"
#include "kernel/profiler_ring.h"
#include "kernel/task.h"

const char *const flame_mark_class[FLAME_MARKS] = {
    [FLAME_PLAIN] = "plain",     [FLAME_IRQS_OFF] = "irqs-off", [FLAME_IN_IRQ] = "in-irq",
    [FLAME_IN_IRQ_IRQS_OFF] = "in-irq-irqs-off", [FLAME_LET_IN] = "let-in", [FLAME_IDLE] = "idle",
    [FLAME_RUNNABLE] = "runnable", [FLAME_WAITING] = "waiting",
};

#define IDLE_LOOP "sched_idle_loop" /* the scheduler's idle task (kernel/task.c): what an idle CPU runs */

void flame_tree_free(struct flame_tree *t)
{
    kfree(t->nodes);
    kfree(t->slots);
    t->nodes = NULL;
    t->slots = NULL;
    t->used = t->cap = 0;
}

/* A key's leaf mark, as the console report and the pprof `context` label name it: let-in alone, else irqs off
 * and/or in irq; a wall sample's state when it is not running. */
static uint8_t entry_mark(const struct pprof_fold_entry *e)
{
    if (e->flags & PROFILE_REC_WALL)
        return e->activity == TASK_ACT_WAITING ? FLAME_WAITING
               : e->activity == TASK_ACT_RUNNABLE ? FLAME_RUNNABLE : FLAME_PLAIN;
    if (e->flags & PROFILE_REC_LET_IN)
        return FLAME_LET_IN;
    bool off = e->flags & PROFILE_REC_IRQS_OFF, irq = e->flags & PROFILE_REC_IN_IRQ;
    return off && irq ? FLAME_IN_IRQ_IRQS_OFF : irq ? FLAME_IN_IRQ : off ? FLAME_IRQS_OFF : FLAME_PLAIN;
}

static uint32_t slot_of(const struct flame_tree *t, uint32_t parent, uint64_t func, uint8_t mark)
{
    const uint64_t k = 0x9e3779b97f4a7c15ull; /* 2^64 / golden ratio, as the folds hash */
    uint64_t h = ((uint64_t)parent << 8 | mark) * k;
    h = (h ^ func) * k;
    return (uint32_t)(h >> 32) & (t->nslots - 1);
}

/* The child of parent that is func with mark, made when new; name NULL for an unresolved address. */
static uint32_t child(struct flame_tree *t, uint32_t parent, uint64_t func, const char *name, uint8_t mark)
{
    /* the idle loop and everything it calls: an idle CPU's time, whatever it was doing in there */
    if (mark == FLAME_PLAIN && (t->nodes[parent].mark == FLAME_IDLE || (name && strcmp(name, IDLE_LOOP) == 0)))
        mark = FLAME_IDLE;
    uint32_t slot = slot_of(t, parent, func, mark);
    for (;; slot = (slot + 1) & (t->nslots - 1)) {
        uint32_t n = t->slots[slot];
        if (n == 0)
            break;
        struct flame_node *c = &t->nodes[n - 1];
        if (c->parent == parent && c->func == func && c->mark == mark && (c->name == NULL) == (name == NULL))
            return n - 1;
    }
    struct flame_node *c = &t->nodes[t->used];
    *c = (struct flame_node){ .func = func, .name = name, .parent = parent, .mark = mark,
                              .depth = (uint16_t)(t->nodes[parent].depth + 1) };
    if (c->depth > t->depth)
        t->depth = c->depth;
    t->slots[slot] = ++t->used;
    return t->used - 1;
}

static void add_weight(struct flame_tree *t, uint32_t n, uint64_t count, uint64_t weight)
{
    for (;;) {
        t->nodes[n].count += count;
        t->nodes[n].weight += weight;
        if (n == 0)
            return;
        n = t->nodes[n].parent;
    }
}

/* One key: its frames from the outermost in, each resolved as pprof resolves it (the leaf as code, a caller as
 * the call before its return address), the leaf carrying the key's mark. */
static void add_entry(struct flame_tree *t, const struct pprof_fold_entry *e, const struct symtab *tab)
{
    uint32_t n = 0;
    for (uint32_t i = e->nframes; i-- > 0;) {
        struct symbol_hit hit;
        bool leaf = i == 0;
        bool resolved = leaf ? symtab_lookup(tab, e->frames[i], &hit) : symtab_lookup_return(tab, e->frames[i], &hit);
        uint64_t func = resolved ? hit.start : e->frames[i];
        n = child(t, n, func, resolved ? hit.name : NULL, leaf ? entry_mark(e) : FLAME_PLAIN);
        struct flame_node *c = &t->nodes[n];
        if (resolved && (!c->offsets || hit.offset < c->min_off))
            c->min_off = hit.offset;
        if (resolved && (!c->offsets || hit.offset > c->max_off))
            c->max_off = hit.offset;
        c->offsets |= resolved;
        if (e->span && c->span && c->span != e->span)
            c->spans = true;
        else if (e->span)
            c->span = e->span;
    }
    add_weight(t, n, e->count, e->weight);
}

/* ---- drawing order ----------------------------------------------------------------------------------- */

static const char *node_name(const struct flame_node *n) { return n->name ? n->name : ""; }

/* Siblings by name (unresolved addresses last, by address), then mark: the order flame graphs read in. */
static bool before(const struct flame_tree *t, uint32_t a, uint32_t b)
{
    const struct flame_node *x = &t->nodes[a], *y = &t->nodes[b];
    if (x->parent != y->parent)
        return x->parent < y->parent;
    if ((x->name == NULL) != (y->name == NULL))
        return x->name != NULL;
    int c = strcmp(node_name(x), node_name(y));
    if (c)
        return c < 0;
    if (x->func != y->func)
        return x->func < y->func;
    return x->mark < y->mark;
}

/* Heapsort of order[0..n): no recursion, no second buffer. */
static void sift(const struct flame_tree *t, uint32_t *order, uint32_t root, uint32_t n)
{
    for (uint32_t c; (c = 2 * root + 1) < n; root = c) {
        if (c + 1 < n && before(t, order[c], order[c + 1]))
            c++;
        if (!before(t, order[root], order[c]))
            return;
        uint32_t tmp = order[root];
        order[root] = order[c];
        order[c] = tmp;
    }
}

static void sort_nodes(const struct flame_tree *t, uint32_t *order, uint32_t n)
{
    for (uint32_t i = n / 2; i-- > 0;)
        sift(t, order, i, n);
    for (uint32_t end = n; end-- > 1;) {
        uint32_t tmp = order[0];
        order[0] = order[end];
        order[end] = tmp;
        sift(t, order, 0, end);
    }
}

/* The nodes rewritten in drawing order (a parent's number is below its children's, as it was when made, so
 * sorting by parent keeps it so), parents renumbered, and each child's left edge its parent's plus the siblings'
 * before it. order and renumber are scratch of t->cap words each; sorted takes the nodes. */
static void lay_out(struct flame_tree *t, uint32_t *order, uint32_t *renumber, struct flame_node *sorted)
{
    for (uint32_t i = 0; i < t->used - 1; i++)
        order[i] = i + 1;
    sort_nodes(t, order, t->used - 1);
    sorted[0] = t->nodes[0];
    renumber[0] = 0;
    for (uint32_t i = 0; i < t->used - 1; i++) {
        sorted[i + 1] = t->nodes[order[i]];
        renumber[order[i]] = i + 1;
    }
    /* where each node's next child starts: in the index's words, done with (nslots >= 2 * cap of them) */
    uint64_t *next = (uint64_t *)(void *)t->slots;
    next[0] = 0;
    for (uint32_t i = 1; i < t->used; i++) {
        struct flame_node *c = &sorted[i];
        c->parent = renumber[c->parent];
        c->x = next[c->parent];
        next[c->parent] += c->weight;
        next[i] = c->x;
    }
}

bool flame_tree_build(struct flame_tree *t, const struct pprof_fold *fold, const struct symtab *tab)
{
    *t = (struct flame_tree){ 0 };
    t->cap = fold->used * PROFILE_MAX_FRAMES + 2; /* the root, "[not tracked]" */
    for (t->nslots = 16; t->nslots < 2 * t->cap; t->nslots *= 2)
        ;
    t->nodes = kzalloc((size_t)t->cap * sizeof *t->nodes);
    /* the index, later the layout's cursor per node (two words a node: nslots >= 2 * cap) */
    t->slots = kzalloc((size_t)t->nslots * sizeof *t->slots);
    uint32_t *scratch = kzalloc((size_t)t->cap * 2 * sizeof *scratch);
    struct flame_node *sorted = kzalloc((size_t)t->cap * sizeof *sorted);
    if (!t->nodes || !t->slots || !scratch || !sorted) {
        kfree(scratch);
        kfree(sorted);
        flame_tree_free(t);
        return false;
    }
    t->nodes[0] = (struct flame_node){ .name = "all" };
    t->used = 1;
    for (uint32_t i = 0; i < fold->used; i++)
        add_entry(t, &fold->entries[i], tab);
    if (fold->not_tracked)
        add_weight(t, child(t, 0, 0, PPROF_NOT_TRACKED, FLAME_PLAIN), fold->not_tracked, fold->not_tracked_weight);
    lay_out(t, scratch, scratch + t->cap, sorted);
    kfree(scratch);
    kfree(t->nodes);
    t->nodes = sorted;
    return true;
}

bool flame_drawn(uint64_t w, uint64_t total)
{
    return w && flame_pos(w, total) >= 100;
}

uint64_t flame_pos(uint64_t v, uint64_t total)
{
    /* v <= total; both shifted until v * FLAME_SCALE cannot overflow 64 bits (loses only what a pixel cannot
     * show) */
    while (total >= (1ull << 44)) {
        v >>= 1;
        total >>= 1;
    }
    return total ? v * FLAME_SCALE / total : 0;
}
