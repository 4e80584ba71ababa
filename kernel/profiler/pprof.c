/* kernel/profiler/pprof.c: a profile of every CPU, or of every task's wall time, as pprof's profile.proto
 * (kernel/profiler/pprof.h) -- one code with two consumers, told apart only by the consumer's wall flag (which
 * makes the session's run a wall run) and the holder's words: the fold allocated before the window opens (so
 * its first touch of the heap is not in the profile), a session (kernel/profiler/session.h) whose consumer folds
 * every drain (kernel/profiler/pprof_fold.c) and ends early when the caller says its client is gone, in its own
 * task or the caller's, the profiler given back, then the encoding (kernel/profiler/pprof_encode.c) against the
 * baked symbols, with the kernel's text segment as its mapping and its build id, gzipped when that makes it
 * smaller. Task context. */
#include "kernel/profiler/pprof.h"

#include "kernel/heap.h"
#include "kernel/labels.h"
#include "kernel/lib/format.h"
#include "kernel/lib/string.h"
#include "kernel/profiler.h"
#include "kernel/profiler/build_id.h"
#include "kernel/profiler/flame.h"
#include "kernel/profiler/pprof_encode.h"
#include "kernel/profiler/pprof_fold.h"
#include "kernel/profiler/raw.h"
#include "kernel/profiler/run.h"
#include "kernel/symbols.h"

/* The kernel's mapping is the loadable segment that holds its text, from its first byte to the end of the
 * text, at that segment's offset in kprof.elf (kernel_text_segment, which the link writes from readelf of the
 * image itself: kernel/symbols.h) -- as scripts/profexport maps it. pprof finds the segment a mapping is of by
 * its file offset and derives the ELF's load bias from its start: `go tool pprof build/kprof.elf URL` names
 * the right source lines only when both are the segment's own (a mapping that starts at the text, a page
 * further in, gets every address named a page off). tests/host/test_pprof_encode.py checks the built ELF. */

/* ---- the HTTP profile's consumer -------------------------------------------------------------------- */

static void take(void *arg, const struct profile_record *rec)
{
    struct pprof_profile *p = arg;
    pprof_fold_add(p->fold, rec); /* words compared, nothing resolved */
}

static bool should_stop(struct profile_session *s, bool window_over)
{
    struct pprof_profile *p = s->arg;
    if (!window_over && p->cancelled && p->cancelled(p->arg))
        p->was_cancelled = true;
    return window_over || p->was_cancelled;
}

/* What the encoder says about the run besides the fold, taken while the session still holds the rings. */
static void finish(struct profile_session *s)
{
    struct pprof_profile *p = s->arg;
    const struct profile_run *run = &s->run;
    p->fold->labels_dropped = s->labels_dropped;
    profile_raw_source_word(run->source_name ? run->source_name : run->source, p->source_word,
                            sizeof p->source_word);
    const struct symtab *tab = kernel_symtab();
    bool wall = p->kind == PPROF_WALL;
    p->info = (struct pprof_run_info){
        .source = p->source_word,
        .cycles = !wall && profile_run_unit(run) == PROFILE_UNIT_CYCLES,
        .wall = wall,
        .period = wall ? run->wall_period_ns : profile_run_period(run),
        .window_ms = run->window_ms,
        .ncpus = run->ncpus,
        .ring_drops = profiler_drops(run),
        .build_id = s->build_id,
        .time_nanos = 0, /* the kernel keeps no wall clock, only time since boot */
        .memory_start = kernel_text_segment.vaddr,
        .memory_limit = tab->text_end,
        .file_offset = kernel_text_segment.file_offset,
    };
}

static const struct profile_consumer pprof_consumer = {
    .take = take,
    .should_stop = should_stop,
    .finish = finish,
};

/* The same consumer of a wall run's records: every task every PROFILE_WALL_PERIOD_MS, folded by state too. */
static const struct profile_consumer pprof_wall_consumer = {
    .take = take,
    .should_stop = should_stop,
    .finish = finish,
    .wall = true,
};

/* What each kind is: its consumer, who holds the profiler while it runs, its task's name. */
static const struct {
    const struct profile_consumer *consumer;
    const char *holder;
    const char *task;
} kinds[] = {
    [PPROF_CPU] = { &pprof_consumer, "an HTTP profile (/debug/pprof/profile)", "pprof" },
    [PPROF_WALL] = { &pprof_wall_consumer, "an HTTP wall profile (/debug/fgprof)", "fgprof" },
};
static const char flame_holder[] = "an HTTP flame graph (/debug/flamegraph)";

/* A flame graph's two bodies of the one fold: the SVG into out, the pprof into p->kept (gzipped when that pays). */
static int encode_flame(struct pprof_profile *p, struct pprof_body *out)
{
    const struct flame_facts facts = { &p->info, p->ask.tag[0] ? p->ask.tag : NULL, p->ask.run };
    if (!flame_render(p->fold, &facts, kernel_symtab(), &out->data, &out->len))
        return PPROF_NO_MEMORY;
    if (!pprof_encode(p->fold, &p->info, kernel_symtab(), &p->kept.data, &p->kept.len)) {
        pprof_body_free(out);
        return PPROF_NO_MEMORY;
    }
    p->kept.gzipped = pprof_gzip(&p->kept.data, &p->kept.len);
    return PPROF_OK;
}

/* The profiler given back (the next profile may start while this one encodes): the body, and the fold freed. */
static int encode(struct pprof_profile *p, struct pprof_body *out)
{
    out->data = NULL;
    out->len = 0;
    out->gzipped = false;
    p->kept = (struct pprof_body){ NULL, 0, false };
    int status = PPROF_CANCELLED;
    if (!p->was_cancelled && p->flame) {
        status = encode_flame(p, out);
        pprof_fold_destroy(p->fold);
        p->fold = NULL;
        return status;
    }
    if (!p->was_cancelled)
        status = pprof_encode(p->fold, &p->info, kernel_symtab(), &out->data, &out->len) ? PPROF_OK
                                                                                          : PPROF_NO_MEMORY;
    pprof_fold_destroy(p->fold);
    p->fold = NULL;
    if (status == PPROF_OK)
        out->gzipped = pprof_gzip(&out->data, &out->len);
    return status;
}

static void session_done(struct profile_session *s)
{
    struct pprof_profile *p = s->arg;
    struct pprof_body body;
    int status = encode(p, &body);
    p->done(p, status, &body); /* last: p may be the caller's again from here */
}

/* The fold allocated before the window opens (its first touch of the heap is not in the profile), the session
 * started. */
static int begin(struct pprof_profile *p, enum pprof_kind kind, uint32_t seconds, const struct pprof_flame_ask *ask,
                 bool (*cancelled)(void *arg), void *arg, char *busy_text, size_t busy_cap)
{
    p->flame = ask != NULL;
    if (ask)
        p->ask = *ask;
    if (busy_text && busy_cap)
        busy_text[0] = 0;
    if (seconds == 0)
        seconds = 1;
    if (seconds > PPROF_SECONDS_MAX)
        seconds = PPROF_SECONDS_MAX;
    p->kind = kind == PPROF_WALL ? PPROF_WALL : PPROF_CPU;
    p->cancelled = cancelled;
    p->arg = arg;
    p->was_cancelled = false;
    if (!(p->fold = pprof_fold_create()))
        return PPROF_NO_MEMORY;
    int status = profile_session_start(&p->session, kinds[p->kind].consumer, p, ask ? &p->ask.filter : NULL,
                                       seconds * 1000, ask ? flame_holder : kinds[p->kind].holder);
    if (status == PROFILER_OK)
        return PPROF_OK;
    pprof_fold_destroy(p->fold);
    p->fold = NULL;
    if (status != PROFILER_BUSY)
        return PPROF_NO_MEMORY;
    if (busy_text && busy_cap)
        profile_session_busy_line("profile", busy_text, busy_cap);
    return PPROF_BUSY;
}

/* Begins either: started in its own task, done called last there. */
static int begin_spawned(struct pprof_profile *p, enum pprof_kind kind, uint32_t seconds,
                         const struct pprof_flame_ask *ask, bool (*cancelled)(void *arg),
                         void (*done)(struct pprof_profile *p, int status, struct pprof_body *body), void *arg,
                         char *busy_text, size_t busy_cap)
{
    int status = begin(p, kind, seconds, ask, cancelled, arg, busy_text, busy_cap);
    if (status != PPROF_OK)
        return status;
    p->done = done;
    if (profile_session_spawn(&p->session, kinds[p->kind].task, session_done))
        return PPROF_OK;
    pprof_fold_destroy(p->fold);
    p->fold = NULL;
    return PPROF_NO_MEMORY;
}

int pprof_profile_begin(struct pprof_profile *p, enum pprof_kind kind, uint32_t seconds, bool (*cancelled)(void *arg),
                        void (*done)(struct pprof_profile *p, int status, struct pprof_body *body), void *arg,
                        char *busy_text, size_t busy_cap)
{
    return begin_spawned(p, kind, seconds, NULL, cancelled, done, arg, busy_text, busy_cap);
}

int pprof_flame_begin(struct pprof_profile *p, enum pprof_kind kind, uint32_t seconds,
                      const struct pprof_flame_ask *ask, bool (*cancelled)(void *arg),
                      void (*done)(struct pprof_profile *p, int status, struct pprof_body *body), void *arg,
                      char *busy_text, size_t busy_cap)
{
    return begin_spawned(p, kind, seconds, ask, cancelled, done, arg, busy_text, busy_cap);
}

int pprof_profile_take(struct pprof_profile *p, enum pprof_kind kind, uint32_t seconds, bool (*cancelled)(void *arg),
                       void *arg, struct pprof_body *out, char *busy_text, size_t busy_cap)
{
    out->data = NULL;
    out->len = 0;
    out->gzipped = false;
    int status = begin(p, kind, seconds, NULL, cancelled, arg, busy_text, busy_cap);
    if (status != PPROF_OK)
        return status;
    profile_session_run(&p->session);
    return encode(p, out);
}

bool pprof_flame_tag(const char *key_colon_value, struct pprof_flame_ask *ask)
{
    char pair[sizeof ask->tag];
    size_t n = 0, colon = sizeof pair;
    for (; key_colon_value[n] && n < sizeof pair - 1; n++) {
        pair[n] = key_colon_value[n];
        if (pair[n] == ':' && colon == sizeof pair)
            colon = n;
    }
    pair[n] = 0;
    if (key_colon_value[n] || colon == sizeof pair)
        return false; /* too long for a pair, or no ':' */
    pair[colon] = '=';
    struct label_pair label;
    if (!label_parse_pair(pair, &label))
        return false;
    ask->filter.by_label = true;
    ask->filter.label = label;
    memcpy(ask->tag, pair, sizeof pair);
    return true;
}

void pprof_kernel_mapping(struct pprof_mapping *m, char *build_id, size_t cap)
{
    size_t note_len;
    const void *note = kernel_build_id_note(&note_len);
    if (!profile_build_id_hex(note, note_len, build_id, cap))
        build_id[0] = 0;
    *m = (struct pprof_mapping){ kernel_text_segment.vaddr, kernel_symtab()->text_end,
                                 kernel_text_segment.file_offset, build_id };
}

void pprof_body_free(struct pprof_body *body)
{
    if (!body)
        return;
    kfree(body->data);
    body->data = NULL;
    body->len = 0;
    body->gzipped = false;
}
