/* tests/bench/wall_cost.c: the driver tests/bench/wall_cost.sh runs to measure what a wall profile
 * (`profile ... wall`) costs, built for the host from the kernel's own sources in the kernel's code generation:
 *   sweep10, sweep100, sweep1000 -- one CPU's tick in a wall run (profiler_tick; at the 100 Hz tick every tick
 *             sweeps) with that many tasks on the CPU: the running one, walked from the interrupted context,
 *             and every other waiting inside a blocking call, walked from that call's frame (6 to 8 frames);
 *             back to back, so the caches hold what the last sweep left in them;
 *   cold10, cold100, cold1000 -- the same with the tasks, their stacks' frames and the ring flushed from the
 *             caches before each sweep, as 10 ms of other work between two sweeps may leave them;
 *   ring100, ring1000 -- the sweeps between two of the window's drains (PROFILE_DRAIN_MS over
 *             PROFILE_WALL_PERIOD_MS: 5) into a ring of profiler_ring_records(), then the drain: what was made,
 *             kept and dropped, and which sweeps the kept records came from;
 *   switch  -- a task blocking (task_block), the switch to the next ready one (sched_switch) and its wake
 *             (task_wake): the whole path a context switch takes, 10 tasks on the CPU;
 *   added   -- what a context switch and a blocking call gained for the wall and block profiles, alone:
 *             schedule()'s counter (a relaxed atomic add) and the kernel's task_wait_begin/task_wait_end (the
 *             walk of the blocking call's chain, two clock reads, the block table's add), timed in a loop
 *             against the same loop without them, over tasks whose stacks hold a blocking call's chain;
 *   waits   -- task_wait_begin/task_wait_end's loop alone, once, for callgrind to count each in.
 * The tasks, the CPU's list and each task's walk are the kernel's own (kernel/task.c: task_spawn, schedule,
 * sched_for_each_other_here, task_chain_off_cpu, over kernel/stacktrace.c), and so are the sweep
 * (kernel/profiler.c) and what a task is doing (kernel/task_wait.c). Only the stacks' contents are laid out
 * here -- nothing runs on a task's stack on the host -- as the calls would leave them; the CPU and the clock
 * are hal/'s fakes (tests/unit/fake_hal.c: the clock a load, where the machine reads the TSC).
 * Prints "calls N" (sweeps, drains, cycles or loop iterations) for the script to divide callgrind's count by,
 * and what it timed itself; checks that the work was real (every task's record, with its activity and its
 * frames; nothing dropped where the ring holds a sweep; every cycle a switch) and exits non-zero if not. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fake_cpu.h"
#include "fake_hal.h"
#include "arch/x86_64/pmu_backend.h"
#include "hal/cpu.h"
#include "hal/kernel_entry.h"
#include "hal/pmu.h"
#include "kernel/console.h"
#include "kernel/heap.h"
#include "kernel/labels.h"
#include "kernel/profiler.h"
#include "kernel/profiler/block_sites.h"
#include "kernel/profiler/capture.h"
#include "kernel/symbols.h"
#include "kernel/task.h"
#include "tests/bench/bench_image.h"

static void fail(const char *what)
{
    fprintf(stderr, "wall_cost: %s\n", what);
    exit(1);
}

/* ---- what the kernel around the sweep needs on the host --------------------------------------------------- */

void *kmalloc(size_t size) { return malloc(size); }
void *kzalloc(size_t size) { return calloc(1, size); }
void *kmalloc_aligned(size_t size, size_t align) { return aligned_alloc(align, (size + align - 1) / align * align); }
void kfree(void *ptr) { free(ptr); }

/* kernel/log.c's lines (the fake CPU's PMU report) are read by no one here. */
void console_write(const char *text, size_t len) { (void)text, (void)len; }
void console_write_log(const char *text, size_t len) { (void)text, (void)len; }
/* tests/unit/fake_cpu.c resets the fake kernel's console with its machine; this program links the real
 * scheduler in the fake kernel's place, and has no console to reset. */
void fake_log_reset(void) {}

/* The stop's request to a CPU that began the run (an IPI on the machine), taken at once on that CPU, so the
 * stop never waits out its deadline for a tick that does not come. */
void cpu_send_profiler_stop(unsigned cpu)
{
    unsigned caller = fake_cpu_index;
    fake_cpu_index = cpu;
    profiler_stop_request();
    fake_cpu_index = caller;
}

/* ---- a kernel's text and symbols ---------------------------------------------------------------------- */

#define NSYMS 1024
#define SYM_BYTES 64
/* Function bodies the frames' return addresses point into: push %rbp; mov %rsp,%rbp; nops; ret. */
static struct bench_image image;

static void build_symbols(void) { bench_image_build(&image, NSYMS, SYM_BYTES); }

/* Overrides kernel/symbols.c's weak host table: the profiler takes the text's bounds from it at its start. */
const struct symtab *kernel_symtab(void) { return &image.tab; }

/* An address inside function fn's body, past its prologue, as a return address or an interrupted pc is. */
static uintptr_t code(unsigned fn, unsigned offset) { return bench_image_code(&image, fn, offset); }

/* ---- one CPU and its tasks ------------------------------------------------------------------------------ */

#define MOST_TASKS 1000
static struct task *tasks[MOST_TASKS]; /* in spawn order, the CPU's list order; tasks[0] runs */
static unsigned ntasks;

/* Never called: nothing runs on a task on the host. */
static void never_runs(void *arg)
{
    (void)arg;
    abort();
}

/* The top of task's stack, where task_spawn put its first frame. */
static uintptr_t stack_top(const struct task *task)
{
    return ((uintptr_t)task->stack + task->stack_size) & ~(uintptr_t)15;
}

/* A chain of depth calls at the top of task's stack, as they leave it: each frame [saved rbp][return address],
 * its caller's frame 32 to 272 bytes above it (locals and saved registers), each return address inside its
 * caller's body; the outermost frame is the task's entry, called by the trampoline, whose own frame (rbp 0 and
 * a return address of 0, as task_spawn lays it out) ends every walk. Returns the innermost frame: a blocking
 * call's own, whose return address is its call site. */
static uintptr_t lay_out_chain(struct task *task, unsigned depth, unsigned seed)
{
    uintptr_t frame = stack_top(task) - 16;
    ((uint64_t *)frame)[0] = 0;
    ((uint64_t *)frame)[1] = 0;
    for (unsigned i = 0; i < depth; i++) {
        uintptr_t callee = frame - 32 - 16 * ((seed * 7 + i * 13) % 16);
        ((uint64_t *)callee)[0] = frame;
        ((uint64_t *)callee)[1] = code(seed * 31 + i * 17, 0x10 + 4 * (i % 8));
        frame = callee;
    }
    return frame;
}

/* The innermost return address lay_out_chain(task, depth, seed) writes: the blocking call's call site. */
static uintptr_t call_site(unsigned depth, unsigned seed)
{
    return code(seed * 31 + (depth - 1) * 17, 0x10 + 4 * ((depth - 1) % 8));
}

/* What task i's chain holds: 6, 7 or 8 frames. */
static unsigned waiting_depth(unsigned i) { return 6 + i % 3; }

/* Task i inside a blocking call since a while ago, as wait_begin and sleep_until or block leave it: one in
 * five asleep on the timer, the others blocked on the network, input or another task, some with a deadline;
 * none due within any run here. */
static void wait_in_blocking_call(struct task *task, unsigned i, int64_t now)
{
    static const enum task_wait kinds[] = { TASK_WAIT_TIMER, TASK_WAIT_NET, TASK_WAIT_INPUT, TASK_WAIT_TASK,
                                            TASK_WAIT_NET };
    uintptr_t frame = lay_out_chain(task, waiting_depth(i), i);
    task->waiting_on = (uint8_t)kinds[i % 5];
    task->wait_since_ns = now - (int64_t)(i % 50) * 1000000;
    task->wake_at_ns = now + 1000000000000ll;
    task->block_has_deadline = i % 5 == 4;
    atomic_store_explicit(&task->wait_frame, frame, memory_order_release);
    atomic_store(&task->state, i % 5 == 0 ? TASK_SLEEPING : TASK_BLOCKED);
}

/* CPU 0 brought up with n tasks, labelled as a workload's are: the first running (the scheduler's first
 * switch picks it), the others waiting unless all_ready; *ctx the running one's interrupted context, in a
 * function body 8 frames deep. idle_lo..idle_hi is the boot stack the idle task keeps: it must lie above the
 * caller's frame, as a boot stack does, or sched_init_cpu paints from it up to the frame. */
static void boot_cpu(unsigned n, bool all_ready, char *idle_lo, char *idle_hi, struct context *ctx)
{
    fake_cpu_count = 1;
    fake_cpu_index = 0;
    fake_time_ns = 5000000000;
    tick_set_hz(TICK_HZ_DEFAULT);
    build_symbols();
    sched_init_cpu(idle_lo, idle_hi);
    const struct label_set *serve = label_intern_one("work", "serve", NULL);
    if (!serve)
        fail("no label set");
    for (ntasks = 0; ntasks < n; ntasks++) {
        char name[TASK_NAME_MAX];
        snprintf(name, sizeof name, "serve%u", ntasks);
        tasks[ntasks] = task_spawn(name, never_runs, NULL, 0);
        if (!tasks[ntasks])
            fail("task_spawn failed");
        task_set_labels(tasks[ntasks], serve);
    }
    memset(ctx, 0, sizeof *ctx);
    sched_switch(ctx); /* from idle: adopts the new tasks and runs the first */
    if (task_current() != tasks[0])
        fail("the first switch did not pick the first task");
    uintptr_t frame = lay_out_chain(tasks[0], PROFILE_MAX_FRAMES - 1, 0);
    ctx->rip = code(3, 0x18);
    ctx->rbp = frame;
    ctx->rsp = frame - 32;
    for (unsigned i = 1; i < n && !all_ready; i++)
        wait_in_blocking_call(tasks[i], i, fake_time_ns);
}

/* ---- the sweep ----------------------------------------------------------------------------------------- */

static int64_t host_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int by_value(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* What two host_ns() calls back to back cost: taken off every timed sweep. */
static int64_t clock_cost(void)
{
    int64_t pairs[1001];
    for (unsigned i = 0; i < 1001; i++) {
        int64_t t0 = host_ns();
        pairs[i] = host_ns() - t0;
    }
    qsort(pairs, 1001, sizeof pairs[0], by_value);
    return pairs[500];
}

/* A wall run started on a machine of tasks_here tasks (boot_cpu), its first tick -- which begins the run on the
 * CPU and sweeps -- taken and drained. */
static void start_wall_run(unsigned tasks_here, struct profile_run *run, struct context *ctx, char *idle_lo,
                           char *idle_hi)
{
    boot_cpu(tasks_here, false, idle_lo, idle_hi, ctx);
    fake_model_no_pmu();
    pmu_reset_for_tests();
    pmu_select(NULL);
    memset(run, 0, sizeof *run);
    run->wall = true;
    if (profiler_start(run) != PROFILER_OK || run->wall_period_ns != PROFILE_WALL_PERIOD_MS * 1000000ull)
        fail("the wall run did not start, or not at its period");
    profiler_tick(ctx);
    profile_ring_reset(&run->rings[0]);
}

static void stop_run(struct profile_run *run)
{
    profiler_stop(run);
    profiler_release();
}

/* Takes one sweep's records out of the ring, checking each is its task's: in list order, the running one from
 * its interrupted context, the others waiting, each with its whole chain. */
static void take_sweep(struct profile_ring *ring, const struct context *ctx)
{
    if (profile_ring_count(ring) != ntasks || profile_ring_drops(ring) != 0) {
        fprintf(stderr, "wall_cost: a sweep of %u tasks left %u records, %u dropped\n", ntasks,
                profile_ring_count(ring), profile_ring_drops(ring));
        exit(1);
    }
    for (unsigned i = 0; i < ntasks; i++, profile_ring_advance(ring)) {
        const struct profile_record *rec = profile_ring_peek(ring);
        bool running = i == 0;
        unsigned want_frames = running ? PROFILE_MAX_FRAMES : waiting_depth(i);
        uintptr_t want_leaf = running ? ctx->rip : call_site(waiting_depth(i), i);
        if (rec->pid != tasks[i]->pid || !(rec->flags & PROFILE_REC_WALL) || rec->nframes != want_frames ||
            rec->frames[0] != want_leaf ||
            rec->wall.activity != (running ? TASK_ACT_RUNNING : TASK_ACT_WAITING) || !rec->labels) {
            fprintf(stderr, "wall_cost: task %u's record: pid %u, %u frames from %#lx, activity %u\n", i,
                    rec->pid, rec->nframes, (unsigned long)rec->frames[0], rec->wall.activity);
            exit(1);
        }
    }
}

/* Every line of memory a sweep reads or writes that this program can reach, flushed from the caches: the
 * tasks, the frames on their stacks, the ring. (The CPU's list head and the profiler's own words are static
 * in their files; a few lines.) */
static void flush_sweep_memory(const struct profile_ring *ring, const struct context *ctx)
{
    for (unsigned i = 0; i < ntasks; i++) {
        const struct task *t = tasks[i];
        uintptr_t frames = i == 0 ? ctx->rsp : atomic_load(&t->wait_frame);
        for (uintptr_t p = (uintptr_t)t & ~(uintptr_t)63; p < (uintptr_t)(t + 1); p += 64)
            __builtin_ia32_clflush((const void *)p);
        for (uintptr_t p = frames & ~(uintptr_t)63; p < stack_top(t); p += 64)
            __builtin_ia32_clflush((const void *)p);
    }
    const char *records = (const char *)ring->records;
    for (size_t at = 0; at < (size_t)(ring->mask + 1) * sizeof *ring->records; at += 64)
        __builtin_ia32_clflush(records + at);
    __builtin_ia32_mfence();
}

static void run_sweeps(unsigned tasks_here, unsigned long n, bool cold, char *idle_lo, char *idle_hi)
{
    struct profile_run run;
    struct context ctx;
    start_wall_run(tasks_here, &run, &ctx, idle_lo, idle_hi);
    struct profile_ring *ring = &run.rings[0];
    int64_t overhead = clock_cost();
    int64_t *ns = malloc(n * sizeof *ns);
    if (!ns || n == 0)
        fail("nothing to time");
    for (unsigned long i = 0; i < n; i++) {
        fake_time_ns += PROFILE_WALL_PERIOD_MS * 1000000ll; /* a sweep falls due: the period is in time */
        if (cold)
            flush_sweep_memory(ring, &ctx);
        int64_t t0 = host_ns();
        profiler_tick(&ctx);
        ns[i] = host_ns() - t0 - overhead;
        take_sweep(ring, &ctx);
    }
    stop_run(&run);
    qsort(ns, n, sizeof *ns, by_value);
    printf("tasks %u\n", tasks_here);
    printf("ns %lld %lld\n", (long long)ns[n / 2], (long long)ns[0]); /* median, fastest */
    printf("calls %lu\n", n);
    free(ns);
}

/* ---- the ring between two drains ------------------------------------------------------------------------ */

#define SWEEPS_A_DRAIN (PROFILE_DRAIN_MS / PROFILE_WALL_PERIOD_MS)

static void run_drains(unsigned tasks_here, unsigned long n, char *idle_lo, char *idle_hi)
{
    struct profile_run run;
    struct context ctx;
    start_wall_run(tasks_here, &run, &ctx, idle_lo, idle_hi);
    struct profile_ring *ring = &run.rings[0];
    unsigned kept_of_sweep[SWEEPS_A_DRAIN];
    unsigned long made = 0, kept = 0, dropped = 0;
    for (unsigned long d = 0; d < n; d++) {
        uint32_t drops_before = profile_ring_drops(ring);
        int64_t first = 0;
        for (unsigned s = 0; s < SWEEPS_A_DRAIN; s++) {
            fake_time_ns += PROFILE_WALL_PERIOD_MS * 1000000ll;
            if (s == 0)
                first = fake_time_ns;
            profiler_tick(&ctx);
        }
        memset(kept_of_sweep, 0, sizeof kept_of_sweep);
        unsigned here = 0;
        for (const struct profile_record *rec; (rec = profile_ring_peek(ring)); profile_ring_advance(ring), here++) {
            int64_t sweep = (rec->time_ns - first) / (PROFILE_WALL_PERIOD_MS * 1000000ll);
            if (sweep < 0 || sweep >= SWEEPS_A_DRAIN)
                fail("a record from no sweep of this drain");
            kept_of_sweep[sweep]++;
        }
        uint32_t lost = profile_ring_drops(ring) - drops_before;
        if (here + lost != SWEEPS_A_DRAIN * tasks_here)
            fail("records kept and dropped do not add up to the sweeps' tasks");
        made += SWEEPS_A_DRAIN * tasks_here;
        kept += here;
        dropped += lost;
    }
    stop_run(&run);
    /* How many tasks the machine can have at all (the task table's room, beside the idle tasks), against the
     * most records the window's capture of the rings holds: how long a wall window of them can be. */
    unsigned table = ntasks;
    while (task_spawn("more", never_runs, NULL, 0))
        table++;
    /* per drain: tasks, sweeps, records made, kept, dropped; the ring's size and profiler_ring_records() */
    printf("ring %u %u %lu %lu %lu %u %u\n", tasks_here, SWEEPS_A_DRAIN, made / n, kept / n, dropped / n,
           ring->mask + 1, profiler_ring_records());
    printf("kept_of_sweep");
    for (unsigned s = 0; s < SWEEPS_A_DRAIN; s++)
        printf(" %u", kept_of_sweep[s]); /* the last drain's */
    printf("\ncapture %u %u %u\n", PROFILE_CAPTURE_MAX_RECORDS, table, 1000 / PROFILE_WALL_PERIOD_MS);
    printf("calls %lu\n", n);
}

/* ---- a context switch ------------------------------------------------------------------------------------ */

#define SWITCH_TASKS 10

/* The running task blocks on the network, the CPU switches to the next ready task, and the first is woken, as
 * a datagram's arrival would: each kernel/task.c's own. On the machine the block's yield is the switch and the
 * wake comes while it is away; on the host the yield returns at once (tests/unit/fake_hal.c), so the switch is
 * made here after it, and the wake_pending store block() makes on its return from the yield -- before the wake
 * on the host -- is made again after it: one store more than the machine. Not static, never inlined:
 * tests/bench/wall_cost.sh counts inside it by name. */
__attribute__((noinline)) struct context *block_switch_wake(struct context *ctx)
{
    struct task *self = task_current();
    task_block(TASK_WAIT_NET);
    struct context *next = sched_switch(ctx);
    task_wake(self);
    atomic_store(&self->wake_pending, 0);
    return next;
}

static void run_switches(unsigned long n, char *idle_lo, char *idle_hi)
{
    struct context boot;
    boot_cpu(SWITCH_TASKS, true, idle_lo, idle_hi, &boot);
    uint64_t switches = 0;
    for (unsigned i = 0; i < ntasks; i++)
        switches += atomic_load(&tasks[i]->switches);
    struct context *ctx = tasks[0]->ctx;
    int64_t best = INT64_MAX;
    unsigned long done = 0;
    /* Timed in batches (a cycle is shorter than the clock's own cost): the fastest batch, the least disturbed. */
    for (unsigned long batch = n / 5 ? n / 5 : 1; done < n; done += batch) {
        if (batch > n - done)
            batch = n - done;
        int64_t t0 = host_ns();
        for (unsigned long i = 0; i < batch; i++) {
            struct task *before = task_current();
            ctx = block_switch_wake(ctx);
            if (task_current() == before || atomic_load(&before->state) != TASK_READY)
                fail("a cycle that did not switch, or left its task unwoken");
        }
        int64_t per = (host_ns() - t0) * 1000 / (int64_t)batch;
        if (per < best)
            best = per;
    }
    uint64_t after = 0;
    for (unsigned i = 0; i < ntasks; i++)
        after += atomic_load(&tasks[i]->switches);
    if (after - switches != n)
        fail("the switch counters did not count every switch");
    printf("ps_per_cycle %lld\n", (long long)best);
    printf("calls %lu\n", n);
}

/* ---- what the wall profile added to a switch ------------------------------------------------------------- */

/* A task and the frame of the blocking call it makes: a chain laid out on its own stack, so that
 * task_wait_begin's walk reads real frames, as it does on the machine. */
struct waiter {
    struct task *task;
    void *frame;
};

/* The loops' parts, inlined into each (so every loop's code is as if written out in it). The next of the k
 * waiters ws, one after another as the switches take them: ws[*j], and *j moved on. */
static inline __attribute__((always_inline)) struct waiter *next_waiter(struct waiter *ws, unsigned k, unsigned *j)
{
    struct waiter *w = &ws[*j];
    *j = *j + 1 == k ? 0 : *j + 1;
    __asm__ volatile("" : : "r"(w) : "memory");
    return w;
}

/* schedule()'s count of the switch to t (kernel/task.c: one relaxed atomic add, inside schedule, which cannot
 * be called alone). */
static inline __attribute__((always_inline)) void count_switch(struct task *t)
{
    atomic_fetch_add_explicit(&t->switches, 1, memory_order_relaxed);
}

/* w's blocking call's bookkeeping, the kernel's own (kernel/task.c): its chain walked and its wait begun, then
 * the wait ended and added to the block table. */
static inline __attribute__((always_inline)) void wait_begin_end(struct waiter *w)
{
    task_wait_begin(w->task, TASK_WAIT_NET, w->frame);
    task_wait_end(w->task);
}

/* The loop alone: one task after another, as the switches take them. Each loop is its own function, never
 * inlined, so the compiler cannot mix one's work into another's timing. */
static __attribute__((noinline)) void switch_loop_bare(struct waiter *ws, unsigned k, unsigned long n)
{
    unsigned j = 0;
    for (unsigned long i = 0; i < n; i++)
        next_waiter(ws, k, &j);
}

/* The same loop with what each switch and blocking call gained: the count of the switch to the task, and its
 * blocking call's task_wait_begin and task_wait_end. */
static __attribute__((noinline)) void switch_loop_added(struct waiter *ws, unsigned k, unsigned long n)
{
    unsigned j = 0;
    for (unsigned long i = 0; i < n; i++) {
        struct waiter *w = next_waiter(ws, k, &j);
        count_switch(w->task);
        wait_begin_end(w);
    }
}

/* The counter alone and the wait's bookkeeping alone, to say which costs what. */
static __attribute__((noinline)) void switch_loop_counter(struct waiter *ws, unsigned k, unsigned long n)
{
    unsigned j = 0;
    for (unsigned long i = 0; i < n; i++)
        count_switch(next_waiter(ws, k, &j)->task);
}

static __attribute__((noinline)) void switch_loop_wait(struct waiter *ws, unsigned k, unsigned long n)
{
    unsigned j = 0;
    for (unsigned long i = 0; i < n; i++)
        wait_begin_end(next_waiter(ws, k, &j));
}

enum { LOOP_BARE, LOOP_COUNTER, LOOP_WAIT, LOOP_ADDED, LOOPS };

/* Picoseconds an iteration of loop, the fastest of rounds rounds of n. */
static int64_t time_loop(int loop, struct waiter *ws, unsigned k, unsigned long n, int rounds)
{
    int64_t best = INT64_MAX;
    for (int round = 0; round < rounds; round++) {
        int64_t t0 = host_ns();
        switch (loop) {
        case LOOP_BARE: switch_loop_bare(ws, k, n); break;
        case LOOP_COUNTER: switch_loop_counter(ws, k, n); break;
        case LOOP_WAIT: switch_loop_wait(ws, k, n); break;
        default: switch_loop_added(ws, k, n); break;
        }
        int64_t per = (host_ns() - t0) * 1000 / (int64_t)n;
        if (per < best)
            best = per;
    }
    return best;
}

/* Every wait the kernel's block table has counted. */
static uint64_t block_sites_total_waits(void)
{
    uint64_t n = atomic_load(&block_sites.other_count);
    for (unsigned i = 0; i < BLOCK_SITES; i++)
        n += atomic_load(&block_sites.sites[i].count);
    return n;
}

/* mode "added": the four loops timed, 7 rounds each; mode "waits": the bookkeeping's loop alone, once, for
 * callgrind to count task_wait_begin and task_wait_end in. Over SWITCH_TASKS of the kernel's tasks, each with a
 * blocking call's chain of 6 to 8 frames on its stack. */
static void run_added(unsigned long n, bool timed, char *idle_lo, char *idle_hi)
{
    struct context boot;
    boot_cpu(SWITCH_TASKS, true, idle_lo, idle_hi, &boot);
    struct waiter ws[SWITCH_TASKS];
    uint64_t switches = 0;
    for (unsigned i = 0; i < SWITCH_TASKS; i++) {
        ws[i].task = tasks[i];
        ws[i].frame = (void *)lay_out_chain(tasks[i], waiting_depth(i), i);
        switches += atomic_load(&tasks[i]->switches);
    }
    if (n == 0)
        fail("nothing to time");
    uint64_t waits_before = block_sites_total_waits();
    int rounds = timed ? 7 : 1;
    int64_t ps[LOOPS] = { 0 };
    for (int loop = timed ? 0 : LOOP_WAIT; loop < (timed ? LOOPS : LOOP_WAIT + 1); loop++)
        ps[loop] = time_loop(loop, ws, SWITCH_TASKS, n, rounds);
    uint64_t counted = 0;
    for (unsigned i = 0; i < SWITCH_TASKS; i++)
        counted += atomic_load(&tasks[i]->switches);
    uint64_t wait_loops = timed ? 2 : 1, counter_loops = timed ? 2 : 0;
    if (counted - switches != counter_loops * (uint64_t)rounds * n ||
        block_sites_total_waits() - waits_before != wait_loops * (uint64_t)rounds * n)
        fail("the loops did not do their work");
    for (unsigned i = 0; i < SWITCH_TASKS; i++)
        if (tasks[i]->wait_chain_frames != BLOCK_SITE_FRAMES ||
            tasks[i]->wait_chain[0] != call_site(waiting_depth(i), i))
            fail("a wait's chain was not walked from its blocking call");
    if (timed)
        /* picoseconds an iteration: the bare loop, the counter's, the wait's bookkeeping, both */
        printf("ps %lld %lld %lld %lld\n", (long long)ps[LOOP_BARE], (long long)ps[LOOP_COUNTER],
               (long long)ps[LOOP_WAIT], (long long)ps[LOOP_ADDED]);
    printf("frames %u\n", (unsigned)BLOCK_SITE_FRAMES);
    printf("calls %lu\n", n);
}

int main(int argc, char **argv)
{
    static const char *const modes[] = { "sweep10", "sweep100", "sweep1000", "cold10",  "cold100",
                                         "cold1000", "ring100", "ring1000", "switch", "added", "waits" };
    bool known = false;
    for (size_t i = 0; argc == 3 && i < sizeof modes / sizeof modes[0]; i++)
        known |= strcmp(argv[1], modes[i]) == 0;
    if (!known) {
        fprintf(stderr, "usage: wall_cost sweep10|sweep100|sweep1000|cold10|cold100|cold1000|ring100|ring1000|"
                        "switch|added|waits N\n");
        return 2;
    }
    unsigned long n = strtoul(argv[2], NULL, 10);
    /* The idle task's boot stack: in main's frame, above every frame the scheduler's calls make. */
    char idle_stack[4096];
    char *lo = idle_stack, *hi = idle_stack + sizeof idle_stack;
    const char *mode = argv[1];
    if (strncmp(mode, "sweep", 5) == 0)
        run_sweeps((unsigned)strtoul(mode + 5, NULL, 10), n, false, lo, hi);
    else if (strncmp(mode, "cold", 4) == 0)
        run_sweeps((unsigned)strtoul(mode + 4, NULL, 10), n, true, lo, hi);
    else if (strncmp(mode, "ring", 4) == 0)
        run_drains((unsigned)strtoul(mode + 4, NULL, 10), n, lo, hi);
    else if (strcmp(mode, "switch") == 0)
        run_switches(n, lo, hi);
    else
        run_added(n, strcmp(mode, "added") == 0, lo, hi);
    return 0;
}
