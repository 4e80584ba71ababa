/* kernel/profiler/flame.h: a flame graph of a pprof fold (kernel/profiler/pprof_fold.h), rendered by the kernel as
 * one SVG -- what /debug/flamegraph?seconds=N answers. The fold's keys are merged into a tree by function from the
 * outermost frame to the leaf (kernel/profiler/flame.c), a leaf's marks (irqs off, in irq, let in; a wall
 * sample's runnable or waiting) keeping it apart from the same function unmarked, the idle loop and all above it
 * told apart by name; then written as one <g> per box (kernel/profiler/flame_svg.c): a <rect> whose width is its
 * weight's share, root at the bottom, a <title> the browser shows as a tooltip, the run's facts at the top, a
 * legend, and a few lines of script for search and click-to-zoom (the picture is whole without it). What it
 * costs grows with the fold's keys, never with its samples: at most PROFILE_MAX_FRAMES nodes a key, boxes
 * narrower than a pixel left out (their weight stays in their parent's), each box's bytes bounded. */
#ifndef KERNEL_PROFILER_FLAME_H
#define KERNEL_PROFILER_FLAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel/profiler/pprof_encode.h"
#include "kernel/profiler/pprof_fold.h"
#include "kernel/symbols.h"

#define FLAME_WIDTH 1200     /* px: the picture's width, the root box's */
#define FLAME_ROW 17         /* px a frame's row is high */
#define FLAME_TOP 96         /* px above the tallest tower: facts, legend, search */
#define FLAME_NAME_MAX 80    /* bytes of a symbol's name a box shows; longer names end in ".." */
#define FLAME_BOX_BYTES 720  /* the most one box can write, its name escaped (6 bytes a char) included */
#define FLAME_FIXED_BYTES 6144 /* the head, style, script, facts and legend: all but the boxes */
#define FLAME_SCALE (FLAME_WIDTH * 100) /* positions are kept in hundredths of a pixel */

/* What a box is besides its function: the colour class it is drawn in (the words pprof's `context` and
 * `state` labels use). */
enum flame_mark {
    FLAME_PLAIN,
    FLAME_IRQS_OFF,
    FLAME_IN_IRQ,
    FLAME_IN_IRQ_IRQS_OFF,
    FLAME_LET_IN,
    FLAME_IDLE,
    FLAME_RUNNABLE,
    FLAME_WAITING,
    FLAME_MARKS,
};
extern const char *const flame_mark_class[FLAME_MARKS];

/* One box: a function at a depth under its parent, with what its subtree's samples add up to. */
struct flame_node {
    uint64_t func;        /* the symbol's start, or the frame's address when it did not resolve; 0 the root */
    const char *name;     /* NULL: unresolved (printed 0xADDR), or a named node's text */
    uint64_t min_off, max_off; /* the offsets in the function its samples were at (leaf) or called from */
    uint64_t weight, count;
    uint64_t x;           /* its left edge, in weight from the root's */
    uint64_t span;        /* the span its samples' tasks had (a wall run's requests), 0 none */
    bool spans;           /* more than one span among them: span is the first's */
    uint32_t parent;
    uint16_t depth;       /* 0 the root */
    uint8_t mark;         /* enum flame_mark */
    bool offsets;         /* min_off/max_off mean something */
};

/* The tree of a fold: nodes[0] the root ("all"), the rest in drawing order (by parent, then name, then mark)
 * once flame_tree_build has returned. */
struct flame_tree {
    struct flame_node *nodes;
    uint32_t used, cap;
    uint32_t *slots; /* the index: (parent, function, mark) -> node number + 1 */
    uint32_t nslots;
    uint16_t depth;  /* the deepest node's */
};

/* Task context. The fold's keys as a tree, resolved against tab; false when the heap has no room (nothing held). */
bool flame_tree_build(struct flame_tree *t, const struct pprof_fold *fold, const struct symtab *tab);
void flame_tree_free(struct flame_tree *t);
/* Whether a node of weight w is drawn in a tree of total weight: at least a pixel wide. */
bool flame_drawn(uint64_t w, uint64_t total);
/* Position v (a weight from the root's left edge) in hundredths of a pixel. */
uint64_t flame_pos(uint64_t v, uint64_t total);

/* The facts the picture's head states: the run as the pprof encoder is told it, and the request's. */
struct flame_facts {
    const struct pprof_run_info *info;
    const char *tag;  /* the label filter, "key=value", or NULL */
    uint32_t run;     /* the number /debug/pprof/profile?run=N gives its pprof by, 0 none */
};

/* The most bytes flame_render can write for t: what its buffer is allocated at. */
size_t flame_svg_bound(const struct flame_tree *t);
/* Task context. The whole SVG of fold into a heap buffer (*data, *len; kfree it); false when the heap has no
 * room. */
bool flame_render(const struct pprof_fold *fold, const struct flame_facts *facts, const struct symtab *tab,
                  uint8_t **data, size_t *len);

#endif
