/* tests/bench/sample_cost.c: the driver that tests/bench/sample_cost.sh runs under callgrind to count the
 * instructions of the profiler's two per-sample paths, built for the host from the kernel's own sources:
 *   sample -- profiler_nmi() for each overflow of the (fake Intel v2) counter, armed on a counter run, on an
 *             interrupted context whose frame-pointer chain is 8 frames deep or more, so every sample walks the
 *             full PROFILE_MAX_FRAMES (sample_cost.sh takes the claim, pmu_nmi_is_mine(), out of the figure);
 *   fold   -- profile_fold_add() of such records against a symbol table the size of a real kernel's;
 *   drain  -- profile_fold_drain() taking such records out of a ring and folding them, per record (what the
 *             window's drains did before cfee67c; now the fold after the stop);
 *   capture -- profile_capture_drain() copying such records out of a ring into the window's capture while a
 *             run goes on, per record: all the window's drains do now;
 *   idle   -- profiler_tick() with no run active, after a run on the (fake Intel) counter: the cost of every
 *             tick of an idle profiler, which the spec puts at one atomic read;
 *   stream_tick, stream_1000 -- profile_streamer_drain() (`profile stream`) taking such records, labelled,
 *             out of the ring and packing them into datagrams, per record, with as many records a drain as
 *             4 CPUs make in PROFILE_DRAIN_MS at the 100 Hz tick (20) and at profile.hz=1000 (200); the send
 *             is the copy into the network task's queue (what net_udp_send does), not lwIP's send after it;
 *   armed_intel, armed_amd -- profiler_tick() of a busy CPU whose counter is armed (Intel v2, AMD Zen 2),
 *             three overflows between two ticks (their NMIs are not what is counted);
 *   tick   -- profiler_tick() of a CPU sampling on the tick (no PMU), each tick a period after the last;
 *   nmi_intel, nmi_amd -- profiler_nmi() for each overflow of an armed counter: the claim and the sample;
 *   pprof_drain -- pprof_fold_drain() (/debug/pprof/profile's window) taking such records, labelled, 200 a
 *             drain, out of the ring into the pprof fold, per record;
 *   pprof_encode -- encode_one_profile(): one profile of N such records encoded and gzipped, as after the
 *             stop; it also prints "pprof N KEYS ENCODED GZIPPED" (records, distinct keys, bytes).
 * Every mode that needs records in a ring (sample, drain, capture, stream_*, pprof_*) takes them as the kernel
 * does: the counter's NMI, delivered by the fake CPU to profiler_nmi() on the context the driver chose.
 * It does the work; callgrind's --toggle-collect on the one function does the counting. Prints the number of
 * calls made, so the script can divide, and checks the work was real (every sample 8 frames, none dropped).
 * The last five also print "hw" and the hardware those calls touched in all, as the fakes count it: clock
 * reads (RDTSC: time_ns, cycles), MMIO reads (the LAPIC timer's count, which the tick read before 415dec8),
 * MSR reads and writes and LVT writes (tests/unit/fake_cpu.c). tests/bench/sample_cost.sh builds this driver
 * against an older tree's kernel too, so the same modes measure both. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake_cpu.h"
#include "fake_hal.h"
#include "fake_kernel.h"
#include "arch/x86_64/pmu_backend.h"
#include "hal/pmu.h"
#include "kernel/heap.h"
#include "kernel/labels.h"
#include "kernel/profiler/capture.h"
#include "kernel/profiler/report.h"
#include "kernel/profiler/pprof_encode.h"
#include "kernel/profiler/pprof_fold.h"
#include "kernel/profiler/stream_codec.h"
#include "kernel/profiler/stream_packer.h"
#include "kernel/profiler/stream_request.h"
#include "kernel/stacktrace.h"
#include "kernel/symbols.h"
#include "kernel/task.h"
#include "tests/bench/bench_hw.h"
#include "tests/bench/bench_image.h"

/* ---- a kernel's worth of text and symbols ------------------------------------------------------------- */

#define NSYMS 2048
#define SYM_BYTES 64
/* "Text": instruction bytes the walk may read at pc. Filled with a plausible function body -- push %rbp;
 * mov %rsp,%rbp; then nops -- and samples land in the body, past the prologue, as most samples do. */
static struct bench_image image;

static void build_symbols(void)
{
    bench_image_build(&image, NSYMS, SYM_BYTES);
    /* kernel_symtab()'s */
    fake_image(&image.tab, image.syms, NSYMS, image.names, image.text, (size_t)NSYMS * SYM_BYTES);
}

static uintptr_t code(unsigned fn, unsigned offset) { return bench_image_code(&image, fn, offset); }

/* ---- a task with a deep frame-pointer chain --------------------------------------------------------------- */

#define DEPTH 12 /* frames on the stack: more than the walk takes, so it always stops at its limit */
/* The task is the fake kernel's on CPU 0 (tests/unit/fake_kernel.c), its stack fake_stack[0]. */

/* Frame i lives at fake_stack[0][16 + 8 * i]: [saved rbp of frame i+1][return address into its caller]. The return
 * addresses vary with variant, so folding sees a handful of distinct chains, as a real profile does. */
static void build_stack(unsigned variant)
{
    for (unsigned i = 0; i < DEPTH; i++) {
        uint64_t *frame = &fake_stack[0][16 + 8 * i];
        frame[0] = i + 1 < DEPTH ? (uint64_t)(uintptr_t)&fake_stack[0][16 + 8 * (i + 1)] : 0;
        frame[1] = code(100 + 37 * i + (i == 2 ? variant % 4 : 0), 0x10 + (i == 1 ? variant % 3 : 0) * 5);
    }
}

static void make_context(struct context *ctx, unsigned variant)
{
    memset(ctx, 0, sizeof *ctx);
    ctx->rip = code(7 * (variant % 5), 0x8 + (variant * 4) % 48); /* inside a body, never its first bytes */
    ctx->rbp = (uintptr_t)&fake_stack[0][16];
    ctx->rsp = (uintptr_t)&fake_stack[0][8];
}

/* ---- the heap, from the C library ------------------------------------------------------------------------ */

void *kmalloc(size_t size) { return malloc(size); }
void *kzalloc(size_t size) { return calloc(1, size); }
void kfree(void *ptr) { free(ptr); }

/* ---- the counter ----------------------------------------------------------------------------------------- */

/* A run on model (its log off, NMIs to nmi), started on the counter -- and armed by its first tick -- or on the
 * tick, as on_counter says, over the deep stack with *ctx in it. */
static void start_on(void (*model)(void), bool on_counter, bool (*nmi)(void), struct profile_run *run,
                     struct context *ctx)
{
    model();
    fake.log_off = true;
    pmu_reset_for_tests();
    pmu_select(NULL);
    fake.nmi_handler = nmi;
    build_stack(0);
    make_context(ctx, 0);
    if (profiler_start(run) != PROFILER_OK || !run->tick_reason != on_counter) {
        fprintf(stderr, "sample_cost: the run did not start on the %s\n", on_counter ? "counter" : "tick");
        exit(1);
    }
    if (!on_counter)
        return;
    profiler_tick(ctx); /* arms */
    if (!pmu_armed_this_cpu())
        exit(1);
}

/* A counter run on model, armed by its first tick; every NMI the fake delivers goes through counter_nmi, on
 * *nmi_ctx when it is set (nmi_sample), else on a context of its own that varies with its count. */
static struct hw nmi_hw;
static unsigned long nmi_calls;
static const struct context *nmi_ctx;

static bool counter_nmi(void)
{
    struct context own;
    const struct context *ctx = nmi_ctx;
    if (!ctx) {
        make_context(&own, (unsigned)nmi_calls);
        ctx = &own;
    }
    struct hw before = hw_now();
    bool mine = profiler_nmi(ctx, cycles()); /* cycles(): the entry time arch's nmi() reads */
    hw_add_since(&nmi_hw, before);
    nmi_calls++;
    return mine;
}

/* One counter period on this CPU: one overflow, one NMI. */
static void one_period(void)
{
    fake_advance(pmu_period_cycles());
    fake_cycles += pmu_period_cycles();
}

/* The counter's sample of ctx, as the kernel takes it: one period of the armed counter, its overflow's NMI
 * through profiler_nmi() on ctx. */
static void nmi_sample(const struct context *ctx)
{
    unsigned long calls = nmi_calls;
    nmi_ctx = ctx;
    one_period();
    nmi_ctx = NULL;
    if (nmi_calls != calls + 1 || fake.nmis_genuine) {
        fprintf(stderr, "sample_cost: a counter period raised %lu NMIs of the counter's\n", nmi_calls - calls);
        exit(1);
    }
}

/* A run on the fake Intel v2 counter, CPU 0's counter armed by its first tick, over the deep stack: the run the
 * modes that need records take them in, with nmi_sample. */
static void start_on_the_counter(struct profile_run *run)
{
    struct context ctx;
    start_on(fake_model_intel_v2, true, counter_nmi, run, &ctx);
}

static void check_ring(struct profile_ring *ring, unsigned long expected)
{
    if (profile_ring_count(ring) != expected || profile_ring_drops(ring) != 0) {
        fprintf(stderr, "sample_cost: %u records, %u drops, expected %lu\n", profile_ring_count(ring),
                profile_ring_drops(ring), expected);
        exit(1);
    }
    for (const struct profile_record *rec; (rec = profile_ring_peek(ring)); profile_ring_advance(ring))
        if (rec->nframes != PROFILE_MAX_FRAMES) {
            fprintf(stderr, "sample_cost: a sample of %u frames\n", rec->nframes);
            exit(1);
        }
}

/* ---- the two paths ---------------------------------------------------------------------------------------- */

#define BATCH 1000 /* samples between two emptyings of the ring: fewer than it holds, so none is dropped */

/* The counter's NMI samples, in one run on the armed counter; the ring is emptied after each batch. */
static void run_samples(unsigned long n)
{
    struct context ctx;
    struct profile_run run = { 0 };
    start_on_the_counter(&run);
    make_context(&ctx, 0);
    unsigned long done = 0;
    while (done < n) {
        unsigned long batch = n - done < BATCH ? n - done : BATCH;
        for (unsigned long i = 0; i < batch; i++)
            nmi_sample(&ctx);
        struct profile_ring *ring = &run.rings[0];
        if (profile_ring_count(ring) != batch || profile_ring_drops(ring) != 0) {
            fprintf(stderr, "sample_cost: %u records, %u drops for %lu samples\n", profile_ring_count(ring),
                    profile_ring_drops(ring), batch);
            exit(1);
        }
        for (const struct profile_record *rec; (rec = profile_ring_peek(ring)); profile_ring_advance(ring)) {
            if (rec->nframes != PROFILE_MAX_FRAMES || rec->frames[0] != ctx.rip) {
                fprintf(stderr, "sample_cost: a sample of %u frames, expected %d\n", rec->nframes,
                        PROFILE_MAX_FRAMES);
                exit(1);
            }
        }
        done += batch;
    }
    profiler_stop(&run);
    profiler_release();
    printf("calls %lu\n", n);
}

static void run_folds(unsigned long n)
{
    /* Records as the sampler makes them: 60 variants of leaf and callers, 8 frames each. */
    enum { VARIANTS = 60 };
    static struct profile_record recs[VARIANTS];
    for (unsigned v = 0; v < VARIANTS; v++) {
        struct context ctx;
        build_stack(v);
        make_context(&ctx, v);
        struct stack_bounds sb = task_stack_bounds(&fake_task[0]);
        struct text_bounds tb = { (uintptr_t)image.tab.text_start, (uintptr_t)image.tab.text_end };
        recs[v].nframes = (uint16_t)stack_trace_from(ctx.rip, ctx.rsp, ctx.rbp, &sb, &tb, recs[v].frames,
                                                     PROFILE_MAX_FRAMES);
        if (recs[v].nframes != PROFILE_MAX_FRAMES) {
            fprintf(stderr, "sample_cost: a chain of %u frames, expected %d\n", recs[v].nframes,
                    PROFILE_MAX_FRAMES);
            exit(1);
        }
    }
    struct profile_fold *fold = profile_fold_create();
    if (!fold)
        exit(1);
    for (unsigned long i = 0; i < n; i++)
        profile_fold_add(fold, &image.tab, &recs[(i * 7) % VARIANTS]);
    if (profile_fold_samples(fold) != n) {
        fprintf(stderr, "sample_cost: folded %llu of %lu\n", (unsigned long long)profile_fold_samples(fold), n);
        exit(1);
    }
    profile_fold_destroy(fold);
    printf("calls %lu\n", n);
}

/* The stop waits for the CPU to let go of the run on its next tick (the fake kernel's sleep, which ticks each
 * CPU through this hook): here, the tick comes at once. */
static void tick_at_once(unsigned cpu)
{
    (void)cpu;
    struct context ctx;
    make_context(&ctx, 0);
    profiler_tick(&ctx);
}

static void run_drains(unsigned long n)
{
    struct context ctx;
    build_stack(0);
    unsigned long done = 0;
    struct profile_fold *fold = profile_fold_create();
    struct profile_run run = { 0 };
    if (!fold)
        exit(1);
    start_on_the_counter(&run);
    while (done < n) {
        unsigned long batch = n - done < BATCH ? n - done : BATCH;
        for (unsigned long i = 0; i < batch; i++) {
            make_context(&ctx, (unsigned)i);
            nmi_sample(&ctx);
        }
        profile_fold_drain(fold, &run, NULL, &image.tab);
        done += batch;
    }
    profiler_stop(&run);
    if (profile_fold_samples(fold) != n || profile_ring_drops(&run.rings[0]) != 0) {
        fprintf(stderr, "sample_cost: drained %llu of %lu\n", (unsigned long long)profile_fold_samples(fold), n);
        exit(1);
    }
    profiler_release();
    profile_fold_destroy(fold);
    printf("calls %lu\n", n); /* records drained: the figure is per record */
}

/* Weak: a tree from before cfee67c has no capture (its driver is only run for the tick and NMI modes). */
#pragma weak profile_capture_create
#pragma weak profile_capture_drain
#pragma weak profile_capture_destroy

static void run_captures(unsigned long n)
{
    struct context ctx;
    build_stack(0);
    struct profile_capture cap;
    struct profile_run run = { 0 };
    if (!profile_capture_create || !profile_capture_create(&cap, 2000))
        exit(1);
    start_on_the_counter(&run);
    unsigned long done = 0;
    while (done < n) {
        unsigned long batch = n - done < BATCH ? n - done : BATCH;
        for (unsigned long i = 0; i < batch; i++) {
            make_context(&ctx, (unsigned)i);
            nmi_sample(&ctx);
        }
        profile_capture_drain(&cap, &run, NULL);
        done += batch;
        if (profile_ring_count(&cap.ring) + BATCH > cap.ring.mask + 1)
            profile_ring_reset(&cap.ring); /* read after the stop in the kernel; here only emptied */
    }
    profiler_stop(&run);
    if (cap.dropped || profile_ring_drops(&run.rings[0]) != 0) {
        fprintf(stderr, "sample_cost: %llu records found the capture full\n", (unsigned long long)cap.dropped);
        exit(1);
    }
    profiler_release();
    profile_capture_destroy(&cap);
    printf("calls %lu\n", n);
}

static void run_idle_ticks(unsigned long n)
{
    struct context ctx;
    struct profile_run run = { 0 };
    start_on(fake_model_intel_v2, true, NULL, &run, &ctx);
    profiler_stop(&run); /* its tick disarms */
    profiler_release();
    if (pmu_armed_this_cpu())
        exit(1);
    unsigned msr = fake.msr_accesses;
    struct hw before = hw_now(), ticks = { 0, 0, 0, 0, 0 };
    for (unsigned long i = 0; i < n; i++)
        profiler_tick(&ctx);
    hw_add_since(&ticks, before);
    if (fake.msr_accesses != msr) {
        fprintf(stderr, "sample_cost: an idle tick touched the PMU\n");
        exit(1);
    }
    print_hw(n, &ticks);
}

static void run_armed_ticks(unsigned long n, void (*model)(void))
{
    struct profile_run run = { 0 };
    struct context ctx;
    start_on(model, true, counter_nmi, &run, &ctx);
    struct hw ticks = { 0, 0, 0, 0, 0 };
    for (unsigned long i = 0; i < n; i++) {
        for (int p = 0; p < 3; p++)
            one_period();
        fake_time_ns += 10000000;
        struct hw before = hw_now();
        profiler_tick(&ctx);
        hw_add_since(&ticks, before);
        check_ring(&run.rings[0], 3);
    }
    if (run.cpu[0].source != PROFILER_CPU_COUNTER || run.cpu[0].throttled) {
        fprintf(stderr, "sample_cost: the counter was found stopped or throttled\n");
        exit(1);
    }
    profiler_stop(&run);
    profiler_release();
    print_hw(n, &ticks);
}

static void run_nmis(unsigned long n, void (*model)(void))
{
    struct profile_run run = { 0 };
    struct context ctx;
    start_on(model, true, counter_nmi, &run, &ctx);
    nmi_calls = 0;
    nmi_hw = (struct hw){ 0, 0, 0, 0, 0 };
    for (unsigned long i = 0; i < n; i++) {
        one_period();
        if (i % 100 == 99)
            check_ring(&run.rings[0], 100);
    }
    if (nmi_calls != n || fake.nmis_genuine) {
        fprintf(stderr, "sample_cost: %lu NMIs for %lu periods\n", nmi_calls, n);
        exit(1);
    }
    profiler_stop(&run);
    profiler_release();
    print_hw(n, &nmi_hw);
}

static void run_sampling_ticks(unsigned long n)
{
    struct context ctx;
    struct profile_run run = { 0 };
    start_on(fake_model_no_pmu, false, NULL, &run, &ctx);
    struct hw ticks = { 0, 0, 0, 0, 0 };
    for (unsigned long i = 0; i < n; i++) {
        fake_time_ns += 10000000;
        struct hw before = hw_now();
        profiler_tick(&ctx);
        hw_add_since(&ticks, before);
        check_ring(&run.rings[0], 1);
    }
    profiler_stop(&run);
    profiler_release();
    print_hw(n, &ticks);
}

/* The send: the datagram copied into a queue slot, as net_udp_send hands it to the network task. */
static unsigned char queue_slot[PROFILE_STREAM_DATAGRAM_MAX];
static unsigned long datagrams, streamed_bytes;

static bool copy_to_queue(void *arg, const char *data, size_t len)
{
    (void)arg;
    memcpy(queue_slot, data, len);
    datagrams++;
    streamed_bytes += len;
    return true;
}

static void run_stream(unsigned long n, unsigned per_drain)
{
    struct context ctx;
    build_stack(0);
    const struct label_set *labels = label_intern_one("job", "bench", NULL);
    if (!labels)
        exit(1);
    task_set_labels(&fake_task[0], labels);
    struct profile_run run = { 0 };
    start_on_the_counter(&run);
    static struct profile_streamer s;
    profile_streamer_init(&s, 0x1234abcd, &run, "43e78e68e5f92dac2debd9a86d0e9970aae625d5", copy_to_queue, NULL, 0);
    unsigned long done = 0;
    int64_t now = 0;
    while (done < n) {
        unsigned long batch = n - done < per_drain ? n - done : per_drain;
        for (unsigned long i = 0; i < batch; i++) {
            make_context(&ctx, (unsigned)(done + i));
            nmi_sample(&ctx);
        }
        now += (int64_t)PROFILE_DRAIN_MS * 1000000;
        profile_streamer_drain(&s, &run, NULL, now);
        done += batch;
    }
    profiler_stop(&run);
    if (s.sent != n || s.drained != n || s.unsent || s.ring_dropped) {
        fprintf(stderr, "sample_cost: streamed %llu of %lu\n", (unsigned long long)s.sent, n);
        exit(1);
    }
    profiler_release();
    fprintf(stderr, "sample_cost: %lu records in %lu datagrams, %.1f a datagram, %.0f bytes a record\n", n,
            datagrams, (double)n / (double)datagrams, (double)streamed_bytes / (double)n);
    printf("calls %lu\n", n);
}

/* ---- the pprof profile (/debug/pprof/profile) ------------------------------------------------------------ */

/* Weak: an older tree has no pprof (its driver is only run for the tick and NMI modes). */
#pragma weak pprof_fold_create
#pragma weak pprof_fold_drain
#pragma weak pprof_fold_destroy
#pragma weak pprof_encode
#pragma weak pprof_gzip

/* Records as profile stream's modes make them (labelled, in batches a drain's size at profile.hz=1000 on 4
 * CPUs), drained into the pprof fold as the HTTP profile's window does: per record. */
static struct pprof_fold *run_pprof_drains(unsigned long n, bool report)
{
    struct context ctx;
    build_stack(0);
    const struct label_set *labels = label_intern_one("job", "bench", NULL);
    struct pprof_fold *fold = pprof_fold_create ? pprof_fold_create() : NULL;
    struct profile_run run = { 0 };
    if (!labels || !fold)
        exit(1);
    start_on_the_counter(&run);
    task_set_labels(&fake_task[0], labels);
    unsigned long done = 0, per_drain = 4 * 1000 * PROFILE_DRAIN_MS / 1000;
    while (done < n) {
        unsigned long batch = n - done < per_drain ? n - done : per_drain;
        for (unsigned long i = 0; i < batch; i++) {
            build_stack((unsigned)(done + i) % 7);
            make_context(&ctx, (unsigned)(done + i));
            nmi_sample(&ctx);
        }
        pprof_fold_drain(fold, &run, NULL);
        done += batch;
    }
    profiler_stop(&run);
    if (fold->samples != n || profile_ring_drops(&run.rings[0]) != 0) {
        fprintf(stderr, "sample_cost: pprof folded %llu of %lu\n", (unsigned long long)fold->samples, n);
        exit(1);
    }
    profiler_release();
    if (report)
        printf("calls %lu\n", n);
    return fold;
}

/* One profile out of a fold of n records: encoded and gzipped, as pprof_profile_take does after the stop. */
static size_t pprof_bytes, pprof_raw_bytes;

__attribute__((noinline)) void encode_one_profile(const struct pprof_fold *fold)
{
    struct pprof_run_info info = { .source = "tick", .period = 1000000, .window_ms = 1000, .ncpus = 4,
                                   .build_id = "43e78e68e5f92dac2debd9a86d0e9970aae625d5",
                                   .memory_start = image.tab.text_start, .memory_limit = image.tab.text_end };
    uint8_t *data;
    size_t len;
    if (!pprof_encode(fold, &info, &image.tab, &data, &len))
        exit(1);
    pprof_raw_bytes = len;
    pprof_gzip(&data, &len);
    pprof_bytes = len;
    kfree(data);
}

static void run_pprof_encode(unsigned long n)
{
    struct pprof_fold *fold = run_pprof_drains(n, false);
    encode_one_profile(fold);
    fprintf(stderr, "sample_cost: pprof: %lu records in %u keys: %zu bytes encoded, %zu gzipped\n", n, fold->used,
            pprof_raw_bytes, pprof_bytes);
    printf("pprof %lu %u %zu %zu\n", n, fold->used, pprof_raw_bytes, pprof_bytes);
    pprof_fold_destroy(fold);
    printf("calls 1\n");
}

/* The modes whose run takes more than the count, as the table below calls them. */
static void run_stream_tick(unsigned long n) { run_stream(n, 4 * 100 * PROFILE_DRAIN_MS / 1000); }
static void run_stream_1000(unsigned long n) { run_stream(n, 4 * 1000 * PROFILE_DRAIN_MS / 1000); }
static void run_pprof_drain(unsigned long n) { pprof_fold_destroy(run_pprof_drains(n, true)); }
static void run_armed_intel(unsigned long n) { run_armed_ticks(n, fake_model_intel_v2); }
static void run_armed_amd(unsigned long n) { run_armed_ticks(n, fake_model_amd_zen2); }
static void run_nmi_intel(unsigned long n) { run_nmis(n, fake_model_intel_v2); }
static void run_nmi_amd(unsigned long n) { run_nmis(n, fake_model_amd_zen2); }

/* Each mode by its name on the command line, in the usage's order. */
static const struct mode {
    const char *name;
    void (*run)(unsigned long n);
} modes[] = {
    { "sample", run_samples }, { "fold", run_folds }, { "drain", run_drains }, { "capture", run_captures },
    { "idle", run_idle_ticks }, { "stream_tick", run_stream_tick }, { "stream_1000", run_stream_1000 },
    { "armed_intel", run_armed_intel }, { "armed_amd", run_armed_amd }, { "tick", run_sampling_ticks },
    { "nmi_intel", run_nmi_intel }, { "nmi_amd", run_nmi_amd },
    { "pprof_drain", run_pprof_drain }, { "pprof_encode", run_pprof_encode },
};

int main(int argc, char **argv)
{
    const struct mode *mode = NULL;
    for (size_t i = 0; argc == 3 && i < sizeof modes / sizeof modes[0]; i++)
        if (strcmp(argv[1], modes[i].name) == 0)
            mode = &modes[i];
    if (!mode) {
        fprintf(stderr, "usage: sample_cost ");
        for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++)
            fprintf(stderr, "%s%s", i ? "|" : "", modes[i].name);
        fprintf(stderr, " N\n");
        return 2;
    }
    unsigned long n = strtoul(argv[2], NULL, 10);
    build_symbols();
    fake_cpu_count = 1;
    fake_cpu_index = 0;
    fake_tick_hook = tick_at_once;
    fake_task[0].pid = 42;
    mode->run(n);
    return 0;
}
