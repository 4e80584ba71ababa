/* kernel/profiler/pprof.c: a profile of every CPU as pprof's profile.proto (kernel/profiler/pprof.h) -- the
 * fold allocated before the window opens (so its first touch of the heap is not in the profile), the run
 * claimed and started, the window drained into the fold (kernel/profiler/pprof_fold.c) every
 * PROFILE_DRAIN_MS with the caller's hook after each drain, the stop and the last drain, the profiler given
 * back, then the encoding (kernel/profiler/pprof_encode.c) against the baked symbols, with the kernel's text
 * segment as its mapping and its build id, gzipped when that makes it smaller. Task context. */
#include "kernel/profiler/pprof.h"

#include "kernel/heap.h"
#include "kernel/labels.h"
#include "kernel/lib/format.h"
#include "kernel/profiler.h"
#include "kernel/profiler/build_id.h"
#include "kernel/profiler/pprof_encode.h"
#include "kernel/profiler/pprof_fold.h"
#include "kernel/profiler/raw.h"
#include "kernel/profiler/run.h"
#include "kernel/profiler/stream_task.h"
#include "kernel/symbols.h"

/* The kernel's mapping is the loadable segment that holds its text, from its first byte to the end of the
 * text, at that segment's offset in kprof.elf (kernel_text_segment, which the link writes from readelf of the
 * image itself: kernel/symbols.h) -- as scripts/profexport maps it. pprof finds the segment a mapping is of by
 * its file offset and derives the ELF's load bias from its start: `go tool pprof build/kprof.elf URL` names
 * the right source lines only when both are the segment's own (a mapping that starts at the text, a page
 * further in, gets every address named a page off). tests/host/test_pprof_encode.py checks the built ELF. */

/* The window's state: the fold it drains into and the caller's hook. */
struct pprof_window {
    struct profile_run *run;
    struct pprof_fold *fold;
    pprof_window_hook hook;
    void *hook_arg;
    bool cancelled;
};

static bool window_should_stop(void *arg, bool window_over)
{
    struct pprof_window *w = arg;
    return window_over || w->cancelled;
}

/* One step: the rings into the fold (words compared, nothing resolved), then the caller's turn. */
static void window_step(void *arg)
{
    struct pprof_window *w = arg;
    pprof_fold_drain(w->fold, w->run, NULL);
    if (w->hook && w->hook(w->hook_arg))
        w->cancelled = true;
}

static void describe_busy(char *busy_text, size_t busy_cap)
{
    if (!busy_text || !busy_cap)
        return;
    char stream_text[64];
    if (profile_stream_describe(stream_text, sizeof stream_text))
        ksnprintf(busy_text, busy_cap, "profile: busy: %s (profile stream stop ends it)", stream_text);
    else
        ksnprintf(busy_text, busy_cap, "profile: busy");
}

/* What the encoder says about the run besides the fold. source_word is the caller's buffer for the source as
 * one word, build_id for the build id's hex. */
static void run_info(const struct profile_run *run, char *source_word, size_t source_cap, char *build_id,
                     size_t build_id_cap, struct pprof_run_info *info)
{
    profile_raw_source_word(run->source_name ? run->source_name : run->source, source_word, source_cap);
    size_t note_len;
    const void *note = kernel_build_id_note(&note_len);
    if (!profile_build_id_hex(note, note_len, build_id, build_id_cap))
        build_id[0] = 0;
    const struct symtab *tab = kernel_symtab();
    *info = (struct pprof_run_info){
        .source = source_word,
        .cycles = profile_run_unit(run) == PROFILE_UNIT_CYCLES,
        .period = profile_run_period(run),
        .window_ms = run->window_ms,
        .ncpus = run->ncpus,
        .ring_drops = profiler_drops(run),
        .build_id = build_id,
        .time_nanos = 0, /* the kernel keeps no wall clock, only time since boot */
        .memory_start = kernel_text_segment.vaddr,
        .memory_limit = tab->text_end,
        .file_offset = kernel_text_segment.file_offset,
    };
}

int pprof_profile_take(uint32_t seconds, pprof_window_hook hook, void *hook_arg, struct pprof_body *out,
                       char *busy_text, size_t busy_cap)
{
    out->data = NULL;
    out->len = 0;
    out->gzipped = false;
    if (busy_text && busy_cap)
        busy_text[0] = 0;
    if (seconds == 0)
        seconds = 1;
    if (seconds > PPROF_SECONDS_MAX)
        seconds = PPROF_SECONDS_MAX;

    struct pprof_fold *fold = pprof_fold_create();
    if (!fold)
        return PPROF_NO_MEMORY;
    struct label_stats labels_before;
    label_stats(&labels_before);
    struct profile_run run;
    int status = profiler_start(&run);
    if (status != PROFILER_OK) {
        pprof_fold_destroy(fold);
        if (status == PROFILER_BUSY) {
            describe_busy(busy_text, busy_cap);
            return PPROF_BUSY;
        }
        return PPROF_NO_MEMORY;
    }
    struct pprof_window w = { &run, fold, hook, hook_arg, false };
    profiler_holder_set("an HTTP profile (/debug/pprof/profile)", run.start_ns + (int64_t)seconds * 1000000000);
    profiler_window(&run, seconds * 1000, window_should_stop, window_step, &w);
    profiler_stop(&run);
    profiler_holder_set(NULL, 0);
    pprof_fold_drain(fold, &run, NULL);
    struct label_stats labels_after;
    label_stats(&labels_after);
    fold->labels_dropped = labels_after.dropped - labels_before.dropped;
    char source_word[PROFILE_RAW_SOURCE_MAX];
    char build_id[2 * PROFILE_BUILD_ID_MAX + 1];
    struct pprof_run_info info;
    run_info(&run, source_word, sizeof source_word, build_id, sizeof build_id, &info);
    /* Everything is out of the rings: the profiler is free for the next profile while this one encodes. */
    profiler_release();
    if (w.cancelled) {
        pprof_fold_destroy(fold);
        return PPROF_CANCELLED;
    }
    bool ok = pprof_encode(fold, &info, kernel_symtab(), &out->data, &out->len);
    pprof_fold_destroy(fold);
    if (!ok)
        return PPROF_NO_MEMORY;
    out->gzipped = pprof_gzip(&out->data, &out->len);
    return PPROF_OK;
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
