/* kernel/profiler/goroutine.c: the goroutine profile (kernel/profiler/goroutine.h) -- a task dump's rows grouped
 * by chain, state, name and labels, then written through the pprof builder (kernel/profiler/pprof_builder.h) or
 * as Go's debug=1 text. The grouping compares rows pairwise: a dump has as many rows as tasks, and it runs once
 * per request, in the HTTP worker, never in the profiler's window. */
#include "kernel/profiler/goroutine.h"

#include "kernel/heap.h"
#include "kernel/labels.h"
#include "kernel/lib/sink.h"
#include "kernel/lib/string.h"

#define STRINGS_FIXED 64 /* types, label keys, states, waits, the named locations, comments */
#define STRINGS_PER_GROUP (TASK_DUMP_MAX_FRAMES + 2 * (LABEL_MAX_PAIRS + 4))
#define GROUP_LABELS (LABEL_MAX_PAIRS + 4) /* the task's pairs, its span, state, waiting_on, task */

struct group {
    const struct task_dump_row *row; /* the first task of the group: its chain, state, name and labels */
    uint32_t count;
};

struct text_label {
    char key[LABEL_KEY_MAX + 1];
    char value[LABEL_VALUE_MAX + 1]; /* a label's value; a span's 20 digits and a task's name fit too */
};

/* What a row waits on, for a row that waits: a runnable task just woken still names its wait. */
static uint8_t wait_of(const struct task_dump_row *r)
{
    return r->activity == TASK_ACT_WAITING ? r->waiting_on : TASK_WAIT_NONE;
}

static bool has_chain(const struct task_dump_row *r)
{
    return (r->chain == TASK_CHAIN_CALLERS || r->chain == TASK_CHAIN_INTERRUPTED) && r->nframes > 0;
}

static bool same_group(const struct task_dump_row *a, const struct task_dump_row *b)
{
    if (a->chain != b->chain || a->nframes != b->nframes || a->activity != b->activity ||
        wait_of(a) != wait_of(b) || strcmp(a->name, b->name) != 0 || strcmp(a->labels, b->labels) != 0)
        return false;
    if (has_chain(a))
        for (unsigned i = 0; i < a->nframes; i++)
            if (a->frames[i] != b->frames[i])
                return false;
    return true;
}

/* The groups of d, most tasks first (in dump order among equals), on the heap; NULL when it has no room. */
static struct group *group_rows(const struct task_dump *d, unsigned *ngroups)
{
    struct group *groups = kzalloc((d->count ? d->count : 1) * sizeof *groups);
    *ngroups = 0;
    if (!groups)
        return NULL;
    for (unsigned i = 0; i < d->count; i++) {
        unsigned g = 0;
        while (g < *ngroups && !same_group(groups[g].row, &d->rows[i]))
            g++;
        if (g == *ngroups)
            groups[(*ngroups)++].row = &d->rows[i];
        groups[g].count++;
    }
    for (unsigned i = 1; i < *ngroups; i++) { /* insertion sort: stable, and the groups are few */
        struct group g = groups[i];
        unsigned j = i;
        for (; j > 0 && groups[j - 1].count < g.count; j--)
            groups[j] = groups[j - 1];
        groups[j] = g;
    }
    return groups;
}

static void put(struct text_label *l, const char *key, size_t key_len, const char *value, size_t value_len)
{
    if (key_len > LABEL_KEY_MAX)
        key_len = LABEL_KEY_MAX;
    if (value_len > LABEL_VALUE_MAX)
        value_len = LABEL_VALUE_MAX;
    memcpy(l->key, key, key_len);
    l->key[key_len] = 0;
    memcpy(l->value, value, value_len);
    l->value[value_len] = 0;
}

/* A row's labels sorted by key, as Go prints a goroutine's: its own pairs and span (from the text `ps` prints,
 * "job=a,span=5", whose values hold neither ',' nor '='), its state, what it waits on, its name. */
static unsigned row_labels(const struct task_dump_row *r, struct text_label *out)
{
    unsigned n = 0;
    const char *s = r->labels;
    if (strcmp(s, "-") != 0) {
        while (*s && n < LABEL_MAX_PAIRS + 1) {
            size_t len = 0, eq = 0;
            while (s[len] && s[len] != ',')
                len++;
            while (eq < len && s[eq] != '=')
                eq++;
            if (eq < len)
                put(&out[n++], s, eq, s + eq + 1, len - eq - 1);
            s += len + (s[len] == ',');
        }
    }
    const char *state = task_activity_name(r->activity);
    put(&out[n++], "state", 5, state, strlen(state));
    if (r->activity == TASK_ACT_WAITING) {
        const char *wait = task_wait_name(r->waiting_on);
        put(&out[n++], "waiting_on", 10, wait, strlen(wait));
    }
    put(&out[n++], "task", 4, r->name, strlen(r->name));
    for (unsigned i = 1; i < n; i++) {
        struct text_label l = out[i];
        unsigned j = i;
        for (; j > 0 && strcmp(out[j - 1].key, l.key) > 0; j--)
            out[j] = out[j - 1];
        out[j] = l;
    }
    return n;
}

/* The location a chainless group stands on. */
static const char *no_chain_name(const struct task_dump_row *r)
{
    switch (r->chain) {
    case TASK_CHAIN_ON_CPU: return GOROUTINE_ON_CPU;
    case TASK_CHAIN_RAN_MEANWHILE: return GOROUTINE_RAN_MEANWHILE;
    default: return GOROUTINE_NO_FRAMES;
    }
}

/* ---- pprof ------------------------------------------------------------------------------------------------ */

static void write_group(struct pprof_builder *b, const struct group *g)
{
    const struct task_dump_row *r = g->row;
    uint64_t locs[TASK_DUMP_MAX_FRAMES];
    unsigned nlocs = 0;
    if (!has_chain(r))
        locs[nlocs++] = pprof_named_location(b, no_chain_name(r));
    else
        for (; nlocs < r->nframes; nlocs++)
            locs[nlocs] = pprof_location(b, r->frames[nlocs], nlocs == 0 && r->chain == TASK_CHAIN_INTERRUPTED);
    uint64_t value = g->count;
    pb_mark m = pprof_sample_begin(b, locs, nlocs, &value, 1);
    struct text_label labels[GROUP_LABELS];
    unsigned n = row_labels(r, labels);
    for (unsigned i = 0; i < n; i++)
        pprof_label(b, labels[i].key, labels[i].value);
    pprof_sample_end(b, m);
}

bool goroutine_encode(const struct task_dump *d, const struct symtab *tab, const struct pprof_mapping *mapping,
                      uint8_t **data, size_t *len)
{
    *data = NULL;
    *len = 0;
    unsigned ngroups;
    struct group *groups = group_rows(d, &ngroups);
    if (!groups)
        return false;
    struct pprof_builder b;
    bool ok = pprof_builder_init(&b, tab, ngroups * TASK_DUMP_MAX_FRAMES + 3,
                                 STRINGS_FIXED + ngroups * STRINGS_PER_GROUP);
    if (ok) {
        pprof_write_header(&b, &(struct pprof_header){
            .sample_types = { { "goroutine", "count" } },
            .ntypes = 1,
            .period_type = { "goroutine", "count" },
            .period = 1,
            .default_type = "goroutine",
            .mapping = *mapping,
        });
        pprof_comment(&b, "kprof kernel: tasks=%u (every live task at one moment, counted by chain, state, name "
                          "and labels), missed=%u (started while the table was read)", d->count, d->missed);
        pprof_comment(&b, "kprof kernel: build_id=%s", mapping->build_id[0] ? mapping->build_id : "none");
        for (unsigned i = 0; i < ngroups; i++)
            write_group(&b, &groups[i]);
        ok = pprof_builder_finish(&b, data, len);
    }
    kfree(groups);
    return ok;
}

/* ---- debug=1 ---------------------------------------------------------------------------------------------- */

bool goroutine_text(struct sink *out, const struct task_dump *d, const struct symtab *tab)
{
    unsigned ngroups;
    struct group *groups = group_rows(d, &ngroups);
    if (!groups)
        return false;
    sink_printf(out, "goroutine profile: total %u\n", d->count);
    for (unsigned i = 0; i < ngroups; i++) {
        const struct task_dump_row *r = groups[i].row;
        bool chain = has_chain(r);
        sink_printf(out, "%u @", groups[i].count);
        for (unsigned f = 0; chain && f < r->nframes; f++)
            sink_printf(out, " %#lx", (unsigned long)r->frames[f]);
        struct text_label labels[GROUP_LABELS];
        unsigned n = row_labels(r, labels);
        sink_puts(out, "\n# labels: {");
        for (unsigned l = 0; l < n; l++)
            sink_printf(out, "%s\"%s\":\"%s\"", l ? ", " : "", labels[l].key, labels[l].value);
        sink_puts(out, "}\n");
        if (!chain)
            sink_printf(out, "#\t%s\n", no_chain_name(r));
        for (unsigned f = 0; chain && f < r->nframes; f++)
            symbol_print_go_frame(out, tab, r->frames[f], f == 0 && r->chain == TASK_CHAIN_INTERRUPTED);
        sink_puts(out, "\n");
    }
    if (d->missed)
        sink_printf(out, "# %u more tasks started while the table was read, not counted\n", d->missed);
    kfree(groups);
    return true;
}
