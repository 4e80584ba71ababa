/* tests/unit/test_flame.c: the flame graph's tree and SVG (kernel/profiler/flame.c, flame_svg.c) over folds built
 * by hand and a symbol table of this file's own: each box's weight its keys' summed up the tree, children side by
 * side from their parent's left edge and their widths adding up to it, siblings in name order (unresolved
 * addresses last) after their parent, symbol names and the tag XML-escaped, the colour class of each mark, of the
 * idle loop and of a wall sample's state, a wall box's span, the output within its bound and growing with keys,
 * never samples, boxes under a pixel left out, and the heap given back on success and on every failure. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "counting_heap.h"
#include "kernel/heap.h"
#include "kernel/profiler/flame.h"
#include "kernel/task.h"
#include "unit_main.h"

/* ---- the symbols: text [0x1000, 0x10000), every function 0x100 long ---- */
static const char names[] = "outer\0mid\0leaf\0op<&>\"'\0sched_idle_loop\0halt\0alpha\0beta\0gamma";
enum { OUTER = 0x1000, MID = 0x1100, LEAF = 0x1200, OP = 0x1300, IDLE = 0x1400, HALT = 0x1500, ALPHA = 0x1600,
       BETA = 0x1700, GAMMA = 0x1800 };
static const struct ksym syms[] = {
    { OUTER, 0x100, 0 },  { MID, 0x100, 6 },    { LEAF, 0x100, 10 }, { OP, 0x100, 15 },   { IDLE, 0x100, 23 },
    { HALT, 0x100, 39 },  { ALPHA, 0x100, 44 }, { BETA, 0x100, 50 }, { GAMMA, 0x100, 55 },
};
static const struct symtab symbols = { syms, 9, names, 0x1000, 0x10000 };
/* A caller's frame is its return address, a little into the function; the leaf is its own pc. */
#define CALL(f) ((f) + 0x10)
#define AT(f) ((f) + 0x4)

static struct pprof_fold fold;

/* One key: frames leaf first, its marks and what its samples add up to. */
static uint64_t next_span; /* the span the next key's samples had (0: none) */

static void key(const uintptr_t *frames, unsigned n, uint8_t flags, uint8_t activity, uint32_t count, uint64_t weight)
{
    struct pprof_fold_entry *e = &fold.entries[fold.used++];
    memset(e, 0, sizeof *e);
    memcpy(e->frames, frames, n * sizeof *frames);
    e->nframes = (uint8_t)n;
    e->flags = flags;
    e->activity = activity;
    e->count = count;
    e->weight = weight;
    e->span = next_span;
    fold.samples += count;
    fold.weight += weight;
}
#define KEY(flags, activity, count, weight, ...)                                                            \
    key((const uintptr_t[]){ __VA_ARGS__ }, sizeof((const uintptr_t[]){ __VA_ARGS__ }) / sizeof(uintptr_t), \
        (flags), (activity), (count), (weight))

static const struct pprof_run_info info = { .source = "tick", .period = 10000000, .window_ms = 2000, .ncpus = 4,
                                            .ring_drops = 3, .build_id = "0123abcd" };
static const char *tag;

/* The SVG of the fold, NUL-terminated (free it). */
static char *render(size_t *len_out)
{
    const struct flame_facts facts = { &info, tag, 7 };
    uint8_t *data;
    size_t len;
    assert_true(flame_render(&fold, &facts, &symbols, &data, &len));
    char *svg = malloc(len + 1);
    memcpy(svg, data, len);
    svg[len] = 0;
    kfree(data);
    assert_int_equal(strlen(svg), len);
    if (len_out)
        *len_out = len;
    return svg;
}

/* One drawn box as the SVG gives it: ids, weight, count, position in hundredths of a pixel, class, name. */
struct box {
    unsigned id, parent, depth;
    unsigned long long weight, count, x, width;
    char cls[24], name[96];
};

static unsigned long long hundredths(const char *s)
{
    unsigned long long whole, frac;
    assert_int_equal(sscanf(s, "%llu.%2llu", &whole, &frac), 2);
    return whole * 100 + frac;
}

static unsigned boxes_of(const char *svg, struct box *out, unsigned max)
{
    unsigned n = 0;
    for (const char *p = strstr(svg, "<g class=\"f "); p; p = strstr(p + 1, "<g class=\"f ")) {
        assert_true(n < max);
        struct box *b = &out[n++];
        memset(b, 0, sizeof *b);
        int parent_given = sscanf(p, "<g class=\"f %23[^\"]\" data-id=\"%u\" data-p=\"%u\"", b->cls, &b->id,
                                  &b->parent);
        if (parent_given < 3)
            b->parent = ~0u; /* the root's data-p is empty */
        assert_true(sscanf(strstr(p, "data-d="), "data-d=\"%u\" data-w=\"%llu\" data-n=\"%llu\"><title>%95[^ <(]",
                           &b->depth, &b->weight, &b->count, b->name) == 4);
        char *plus = strstr(b->name, "+0x");
        if (plus)
            *plus = 0;
        b->x = hundredths(strstr(p, "<rect x=\"") + 9);
        b->width = hundredths(strstr(p, " width=\"") + 8);
    }
    return n;
}

static const struct box *find(const struct box *b, unsigned n, const char *name, const char *cls)
{
    for (unsigned i = 0; i < n; i++)
        if (strcmp(b[i].name, name) == 0 && (!cls || strcmp(b[i].cls, cls) == 0))
            return &b[i];
    fail_msg("no box %s (%s)", name, cls ? cls : "any class");
    return NULL;
}

static int setup(void **state)
{
    (void)state;
    counting_heap_reset();
    memset(&fold, 0, sizeof fold);
    tag = NULL;
    next_span = 0;
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    assert_int_equal(live_allocations, 0);
    return 0;
}

static struct box boxes[40000];

/* Weights add up the tree; children sit side by side from their parent's left edge, their widths its own when it
 * has no time of its own, less than it when it has. */
static void test_children_add_up_to_their_parent(void **state)
{
    (void)state;
    KEY(0, 0, 3, 30, AT(LEAF), CALL(MID), CALL(OUTER));
    KEY(0, 0, 2, 20, AT(BETA), CALL(MID), CALL(OUTER));
    KEY(0, 0, 1, 10, AT(MID), CALL(OUTER));
    KEY(0, 0, 4, 40, AT(GAMMA));
    char *svg = render(NULL);
    unsigned n = boxes_of(svg, boxes, 40);
    assert_int_equal(n, 6);
    const struct box *root = find(boxes, n, "all", NULL), *outer = find(boxes, n, "outer", NULL),
                     *mid = find(boxes, n, "mid", NULL), *leaf = find(boxes, n, "leaf", NULL),
                     *beta = find(boxes, n, "beta", NULL), *gamma = find(boxes, n, "gamma", NULL);
    assert_int_equal(root->weight, 100);
    assert_int_equal(root->count, 10);
    assert_int_equal(root->width, 120000);
    assert_int_equal(outer->weight, 60);
    assert_int_equal(mid->weight, 60);
    assert_int_equal(mid->count, 6);
    assert_int_equal(gamma->x, 0); /* gamma before outer, by name */
    assert_int_equal(gamma->width + outer->width, root->width);
    assert_int_equal(outer->x, gamma->width);
    assert_int_equal(mid->x, outer->x);
    assert_int_equal(mid->width, outer->width); /* outer has no time of its own */
    assert_int_equal(beta->x, mid->x);          /* beta before leaf */
    assert_int_equal(leaf->x, beta->x + beta->width);
    assert_int_equal(beta->width + leaf->width, 60000); /* mid's 10 of its own stay bare at its right */
    assert_true(beta->width + leaf->width < mid->width);
    assert_int_equal(leaf->width, 36000);
    assert_int_equal(leaf->depth, 3);
    assert_int_equal(leaf->parent, mid->id);
    assert_int_equal(mid->parent, outer->id);
    /* the tooltip: the function, its offset, samples and share */
    assert_non_null(strstr(svg, "<title>leaf+0x4 (3 samples, 30.00%)</title>"));
    assert_non_null(strstr(svg, "<title>mid+0x4..0x10 (6 samples, 60.00%)</title>"));
    free(svg);
}

/* Widths telescope: however many children and whatever their weights, theirs add up to their parent's exactly. */
static void test_many_children_widths_are_exact(void **state)
{
    (void)state;
    for (unsigned i = 0; i < 7; i++)
        KEY(0, 0, 1, 1000 + 337 * i, 0x20000 + i * 16, CALL(OUTER)); /* unresolved leaves: one box each */
    char *svg = render(NULL);
    unsigned n = boxes_of(svg, boxes, 40);
    const struct box *outer = find(boxes, n, "outer", NULL);
    unsigned long long sum = 0, next_x = outer->x;
    for (unsigned i = 0; i < n; i++) {
        if (boxes[i].parent != outer->id)
            continue;
        assert_int_equal(boxes[i].x, next_x);
        next_x += boxes[i].width;
        sum += boxes[i].width;
    }
    assert_int_equal(sum, outer->width);
    free(svg);
}

/* Names and the tag are escaped wherever they are written: tooltip, box text, the head. */
static void test_xml_special_characters_are_escaped(void **state)
{
    (void)state;
    KEY(0, 0, 5, 50, AT(OP), CALL(OUTER));
    tag = "job=<a&b>";
    char *svg = render(NULL);
    static const char *const escaped[] = { "<title>op&lt;&amp;&gt;&quot;&apos;+0x4 (5 samples, 100.00%)</title>",
                                           ">op&lt;&amp;&gt;&quot;&apos;</text>", "tag=job=&lt;a&amp;b&gt; run=7" };
    for (size_t i = 0; i < sizeof escaped / sizeof escaped[0]; i++)
        if (!strstr(svg, escaped[i]))
            fail_msg("the SVG has no %s", escaped[i]);
    assert_null(strstr(svg, "op<"));
    assert_null(strstr(svg, "<a&"));
    free(svg);
}

/* Siblings in name order whatever order they were seen in, unresolved addresses after names; every box after its
 * parent. */
static void test_boxes_are_in_name_order_after_their_parent(void **state)
{
    (void)state;
    KEY(0, 0, 1, 10, 0x30000, CALL(MID));
    KEY(0, 0, 1, 10, AT(GAMMA), CALL(MID));
    KEY(0, 0, 1, 10, AT(BETA), CALL(MID));
    KEY(0, 0, 1, 10, AT(ALPHA), CALL(MID));
    KEY(0, 0, 1, 10, AT(HALT));
    char *svg = render(NULL);
    unsigned n = boxes_of(svg, boxes, 40);
    assert_int_equal(n, 7);
    static const char *const order[] = { "all", "halt", "mid", "alpha", "beta", "gamma", "0x30000" };
    for (unsigned i = 0; i < n; i++) {
        assert_string_equal(boxes[i].name, order[i]);
        assert_int_equal(boxes[i].id, i);
        assert_true(i == 0 || boxes[i].parent < i);
    }
    assert_true(find(boxes, n, "alpha", NULL)->x < find(boxes, n, "beta", NULL)->x);
    assert_true(find(boxes, n, "gamma", NULL)->x < find(boxes, n, "0x30000", NULL)->x);
    free(svg);
}

/* Each mark a class of its own (a marked leaf apart from the same function unmarked), the idle loop and all it
 * calls idle, a wall sample's state; and the legend names every class. */
static void test_marks_idle_and_states_have_their_classes(void **state)
{
    (void)state;
    KEY(PROFILE_REC_IRQS_OFF, 0, 1, 10, AT(LEAF), CALL(MID));
    KEY(0, 0, 1, 10, AT(LEAF), CALL(MID));
    KEY(PROFILE_REC_IN_IRQ, 0, 1, 10, AT(ALPHA));
    KEY(PROFILE_REC_IN_IRQ | PROFILE_REC_IRQS_OFF, 0, 1, 10, AT(BETA));
    KEY(PROFILE_REC_LET_IN | PROFILE_REC_IRQS_OFF, 0, 1, 10, AT(GAMMA));
    KEY(0, 0, 1, 10, AT(HALT), CALL(IDLE), CALL(OUTER));
    KEY(PROFILE_REC_WALL, TASK_ACT_WAITING, 1, 10, AT(OP));
    KEY(PROFILE_REC_WALL, TASK_ACT_RUNNABLE, 1, 10, AT(GAMMA), CALL(MID));
    KEY(PROFILE_REC_WALL, TASK_ACT_RUNNING, 1, 10, AT(BETA), CALL(MID));
    char *svg = render(NULL);
    unsigned n = boxes_of(svg, boxes, 40);
    const struct box *off = find(boxes, n, "leaf", "irqs-off"), *plain = find(boxes, n, "leaf", "plain");
    assert_int_equal(off->parent, plain->parent);
    find(boxes, n, "alpha", "in-irq");
    find(boxes, n, "beta", "in-irq-irqs-off");
    find(boxes, n, "gamma", "let-in");
    assert_int_equal(find(boxes, n, "outer", NULL)->cls[0], 'p'); /* plain: below the idle loop */
    find(boxes, n, "sched_idle_loop", "idle");
    find(boxes, n, "halt", "idle");
    assert_non_null(strstr(svg, "[idle]</title>"));
    assert_non_null(strstr(svg, "[irqs off]</title>"));
    find(boxes, n, "op&lt;&amp;&gt;&quot;&apos;", "waiting");
    assert_int_equal(find(boxes, n, "gamma", "runnable")->parent, find(boxes, n, "mid", NULL)->id);
    find(boxes, n, "beta", "plain");
    for (unsigned m = 0; m < FLAME_MARKS; m++) {
        char legend[64];
        snprintf(legend, sizeof legend, "<rect class=\"%s\"", flame_mark_class[m]);
        assert_non_null(strstr(svg, legend));
    }
    free(svg);
}

/* A wall run's request spans: a box whose samples all had one names it, one of several says so, none says nothing. */
static void test_a_wall_box_names_its_span(void **state)
{
    (void)state;
    next_span = 42;
    KEY(PROFILE_REC_WALL, TASK_ACT_RUNNING, 2, 20, AT(LEAF), CALL(OUTER));
    next_span = 43;
    KEY(PROFILE_REC_WALL, TASK_ACT_RUNNING, 1, 10, AT(BETA), CALL(OUTER));
    next_span = 0;
    KEY(PROFILE_REC_WALL, TASK_ACT_RUNNING, 1, 10, AT(GAMMA));
    char *svg = render(NULL);
    assert_non_null(strstr(svg, "<title>leaf+0x4 (2 samples, 50.00%) [span 42]</title>"));
    assert_non_null(strstr(svg, "<title>beta+0x4 (1 samples, 25.00%) [span 43]</title>"));
    assert_non_null(strstr(svg, "<title>outer+0x10 (3 samples, 75.00%) [several spans]</title>"));
    assert_non_null(strstr(svg, "<title>gamma+0x4 (1 samples, 25.00%)</title>"));
    free(svg);
}

static void fill_distinct_keys(unsigned keys, uint32_t count)
{
    memset(&fold, 0, sizeof fold);
    for (unsigned i = 0; i < keys; i++) {
        uintptr_t frames[PROFILE_MAX_FRAMES];
        for (unsigned f = 0; f < PROFILE_MAX_FRAMES; f++)
            frames[f] = 0x100000 + (uintptr_t)i * 0x100 + f * 0x10; /* unresolved: every frame a box of its own */
        key(frames, PROFILE_MAX_FRAMES, 0, 0, count, (uint64_t)count * 10000000);
    }
}

/* What it writes is within its bound and grows with the keys, not the samples; a box under a pixel is left out
 * (its weight still its parent's). */
static void test_the_size_grows_with_keys_not_samples(void **state)
{
    (void)state;
    fill_distinct_keys(PPROF_FOLD_ENTRIES, 1);
    struct flame_tree t;
    assert_true(flame_tree_build(&t, &fold, &symbols));
    assert_int_equal(t.used, PPROF_FOLD_ENTRIES * PROFILE_MAX_FRAMES + 1);
    size_t bound = flame_svg_bound(&t);
    flame_tree_free(&t);
    size_t few, many;
    char *svg = render(&few);
    assert_true(few <= bound);
    unsigned n = boxes_of(svg, boxes, 40000);
    /* 4096 keys of one sample each: each under a third of a pixel, so only the root is drawn */
    assert_int_equal(n, 1);
    assert_int_equal(boxes[0].count, PPROF_FOLD_ENTRIES);
    free(svg);
    fill_distinct_keys(PPROF_FOLD_ENTRIES, 1000000);
    free(render(&many));
    assert_true(many - few <= 64); /* the root's figures are longer; nothing else is */

    /* keys wide enough to draw: every box, and the bytes a box takes bounded */
    fill_distinct_keys(600, 1);
    assert_true(flame_tree_build(&t, &fold, &symbols));
    bound = flame_svg_bound(&t);
    flame_tree_free(&t);
    svg = render(&few);
    n = boxes_of(svg, boxes, 40000);
    assert_int_equal(n, 600 * PROFILE_MAX_FRAMES + 1);
    assert_true(few <= bound);
    assert_true(few < FLAME_FIXED_BYTES + (size_t)n * 420);
    free(svg);
    fill_distinct_keys(600, 50000);
    free(render(&many));
    assert_true(many - few <= (size_t)n * 2 * 8); /* data-w and data-n a few digits longer */
}

/* One wide key and a hundred narrow ones: the narrow ones are not drawn, their samples still the root's. */
static void test_boxes_under_a_pixel_are_left_out(void **state)
{
    (void)state;
    KEY(0, 0, 100000, 1000000, AT(LEAF), CALL(OUTER));
    for (unsigned i = 0; i < 100; i++)
        KEY(0, 0, 1, 10, 0x40000 + i * 16);
    char *svg = render(NULL);
    unsigned n = boxes_of(svg, boxes, 40);
    assert_int_equal(n, 3);
    assert_int_equal(boxes[0].count, 100100);
    assert_false(flame_drawn(10, 1001000));
    assert_true(flame_drawn(1001000 / 1200 + 1, 1001000));
    free(svg);
}

static bool render_for_heap(const void *ctx, uint8_t **data, size_t *len)
{
    (void)ctx;
    const struct flame_facts facts = { &info, NULL, 0 };
    return flame_render(&fold, &facts, &symbols, data, len);
}

/* Every allocation refused in turn: nothing handed over, nothing left held. */
static void test_the_heap_is_given_back_on_every_path(void **state)
{
    (void)state;
    KEY(0, 0, 3, 30, AT(LEAF), CALL(MID), CALL(OUTER));
    KEY(0, 0, 1, 10, AT(GAMMA));
    assert_true(counting_heap_first_success(render_for_heap, NULL, 10) > 0);
}

UNIT_MAIN_EACH(setup, teardown, NULL, NULL,
               test_children_add_up_to_their_parent, test_many_children_widths_are_exact,
               test_xml_special_characters_are_escaped, test_boxes_are_in_name_order_after_their_parent,
               test_marks_idle_and_states_have_their_classes, test_a_wall_box_names_its_span,
               test_the_size_grows_with_keys_not_samples,
               test_boxes_under_a_pixel_are_left_out, test_the_heap_is_given_back_on_every_path)
