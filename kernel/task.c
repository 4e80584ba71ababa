/* kernel/task.c: tasks and the scheduler. Every task belongs to one CPU for its whole life and only that CPU
 * runs it, so a task's stack is never in use on two CPUs at once and the scheduler -- which runs in the timer
 * and yield interrupts -- takes no lock. Other CPUs reach a CPU's scheduler only through lock-free hand-off
 * lists: new tasks pushed onto its `incoming` list, and dead tasks pushed by it onto the reaper's list. The
 * global task table (for pids, `ps` and `stacks`) is locked, and used only from task context. */
#include "hal/compiler.h"
#include "kernel/task.h"

#include "hal/cpu.h"
#include "kernel/heap.h"
#include "kernel/labels.h"
#include "kernel/panic.h"
#include "kernel/lib/string.h"

#define MAX_TASKS (MAX_CPUS + 1024) /* every CPU's idle task, and as many more */

struct sched_cpu {
    struct task *current;
    struct task *idle;
    struct task *list;                 /* this CPU's tasks except idle; touched only by this CPU */
    _Atomic(struct task *) incoming;   /* pushed by task_spawn on any CPU */
    atomic_uint placed;                /* live tasks spawned with "any CPU", for placement */
    uint64_t ticks;                    /* timer ticks */
    uint64_t busy_ticks;               /* ticks that found a non-idle task running */
    uint64_t idle_waits;               /* times the idle task halted: the profiler's "was it idle" */
    /* Time the idle task was current, for the profiler's rate per busy second (sched_cpu_idle_ns): written by
     * this CPU when it switches to or from idle, read by any CPU, so the pair is guarded by a sequence
     * number, odd while it changes. */
    _Atomic uint32_t idle_seq;
    uint64_t idle_ns;                  /* idle time up to idle_since */
    int64_t idle_since;                /* when idle last became current; 0 while another task is */
};

static struct sched_cpu sched_cpus[MAX_CPUS];
static spinlock_t table_lock = SPINLOCK_INIT;
static struct task *task_table[MAX_TASKS];
static uint32_t next_pid = 1;
static _Atomic(struct task *) dead_list;
static struct task *reaper_task;

static void push_handoff(_Atomic(struct task *) *head, struct task *task)
{
    struct task *old = atomic_load(head);
    do {
        task->next_handoff = old;
    } while (!atomic_compare_exchange_weak(head, &old, task));
}

static void paint(void *lo, void *hi)
{
    for (uint32_t *w = lo; (void *)(w + 1) <= hi; w++)
        *w = STACK_PAINT;
}

static bool table_insert(struct task *task)
{
    unsigned long flags = spin_lock_irqsave(&table_lock);
    for (unsigned i = 0; i < MAX_TASKS; i++) {
        if (!task_table[i]) {
            task->pid = next_pid++;
            task_table[i] = task;
            spin_unlock_irqrestore(&table_lock, flags);
            return true;
        }
    }
    spin_unlock_irqrestore(&table_lock, flags);
    return false;
}

DEBUGGER_TEXT struct task *task_current(void) { return sched_cpus[cpu_index()].current; }

NMI_TEXT struct stack_bounds task_stack_bounds(const struct task *task)
{
    return (struct stack_bounds){ (uintptr_t)task->stack, (uintptr_t)task->stack + task->stack_size };
}

size_t task_stack_used(const struct task *task)
{
    const uint32_t *w = task->stack, *end = (const uint32_t *)((const char *)task->stack + task->stack_size);
    while (w < end && *w == STACK_PAINT)
        w++;
    return (size_t)((const char *)end - (const char *)w);
}

void sched_init_cpu(void *stack_lo, void *stack_hi)
{
    struct sched_cpu *sc = &sched_cpus[cpu_index()];
    struct task *idle = kzalloc(sizeof *idle);
    if (!idle)
        panic("sched_init_cpu: no memory for the idle task");
    strlcpy(idle->name, "idle", sizeof idle->name);
    idle->cpu = cpu_index();
    idle->is_idle = true;
    idle->stack = stack_lo;
    idle->stack_size = (size_t)((char *)stack_hi - (char *)stack_lo);
    atomic_store(&idle->state, TASK_RUNNING);
    /* The boot stack is in use above us: paint only what lies well below the current frame. */
    char *below = (char *)__builtin_frame_address(0) - 512;
    if (below > (char *)stack_lo)
        paint(stack_lo, below);
    if (!table_insert(idle))
        panic("sched_init_cpu: task table full");
    sc->idle = idle;
    sc->current = idle;
    sc->idle_since = time_ns();
}

/* A switch to or from the idle task at now: the idle time it ends, or where the idle time begins. */
static void account_idle(struct sched_cpu *sc, bool from_idle, bool to_idle, int64_t now)
{
    atomic_fetch_add_explicit(&sc->idle_seq, 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
    if (from_idle && sc->idle_since && now > sc->idle_since)
        sc->idle_ns += (uint64_t)(now - sc->idle_since);
    sc->idle_since = to_idle ? now : 0;
    atomic_fetch_add_explicit(&sc->idle_seq, 1, memory_order_release);
}

uint64_t sched_cpu_idle_ns(unsigned cpu)
{
    const struct sched_cpu *sc = &sched_cpus[cpu];
    for (;;) {
        uint32_t seq = atomic_load_explicit(&sc->idle_seq, memory_order_acquire);
        uint64_t ns = sc->idle_ns;
        int64_t since = sc->idle_since;
        atomic_thread_fence(memory_order_acquire);
        if (seq & 1 || atomic_load_explicit(&sc->idle_seq, memory_order_relaxed) != seq)
            continue; /* the CPU was switching meanwhile: a few instructions, read again */
        int64_t now = time_ns();
        return ns + (since && now > since ? (uint64_t)(now - since) : 0);
    }
}

static void task_entry_trampoline(struct task *self)
{
    self->entry(self->arg);
    task_exit();
}

/* For "any CPU": the CPU with the fewest such tasks, ties going to the highest index, so the boot CPU -- where
 * the shell and the other pinned system tasks live -- is chosen last and a command stays responsive. */
static unsigned pick_cpu(void)
{
    unsigned n = cpu_count(), best = n - 1;
    for (unsigned i = n - 1; i-- > 0;)
        if (atomic_load(&sched_cpus[i].placed) < atomic_load(&sched_cpus[best].placed))
            best = i;
    return best;
}

struct task *task_spawn(const char *name, void (*entry)(void *arg), void *arg, int cpu)
{
    if (cpu >= (int)cpu_count())
        return 0;
    struct task *task = kzalloc(sizeof *task);
    void *stack = kmalloc_aligned(TASK_STACK_SIZE, 16);
    if (!task || !stack) {
        kfree(task);
        kfree(stack);
        return 0;
    }
    strlcpy(task->name, name, sizeof task->name);
    task->stack = stack;
    task->stack_size = TASK_STACK_SIZE;
    task->entry = entry;
    task->arg = arg;
    paint(stack, (char *)stack + TASK_STACK_SIZE);

    /* The first switch to the task "returns" into the trampoline through this frame, with an ABI-aligned
     * stack (rsp = 8 mod 16 at function entry) and rbp 0, which ends every backtrace. */
    uintptr_t top = ((uintptr_t)stack + TASK_STACK_SIZE) & ~(uintptr_t)15;
    struct context *ctx = (struct context *)(top - 16 - sizeof *ctx);
    memset(ctx, 0, sizeof *ctx);
    ctx->rip = (uintptr_t)task_entry_trampoline;
    ctx->cs = 0x08;
    ctx->ss = 0x10;
    ctx->rflags = 0x202;
    ctx->rsp = top - 8;
    *(uint64_t *)(top - 8) = 0; /* the trampoline's "return address": a zero ends stack walks */
    ctx->rdi = (uintptr_t)task;
    task->ctx = ctx;
    atomic_store(&task->state, TASK_READY);

    unsigned target = cpu < 0 ? pick_cpu() : (unsigned)cpu;
    task->cpu = target;
    if (cpu < 0) {
        task->placed = true;
        atomic_fetch_add(&sched_cpus[target].placed, 1);
    }
    if (!table_insert(task)) {
        if (cpu < 0)
            atomic_fetch_sub(&sched_cpus[target].placed, 1);
        kfree(stack);
        kfree(task);
        return 0;
    }
    push_handoff(&sched_cpus[target].incoming, task);
    return task;
}

/* Adopts tasks other CPUs spawned for this one, in the order they were spawned. */
static void adopt_incoming(struct sched_cpu *sc)
{
    struct task *batch = atomic_exchange(&sc->incoming, 0), *reversed = 0;
    while (batch) {
        struct task *next = batch->next_handoff;
        batch->next_handoff = reversed;
        reversed = batch;
        batch = next;
    }
    struct task **tail = &sc->list;
    while (*tail)
        tail = &(*tail)->next_on_cpu;
    for (; reversed; reversed = reversed->next_handoff) {
        reversed->next_on_cpu = 0;
        *tail = reversed;
        tail = &reversed->next_on_cpu;
    }
}

static bool runnable(struct task *task, int64_t now)
{
    int state = atomic_load(&task->state);
    if (state == TASK_READY || state == TASK_RUNNING)
        return true;
    if (state == TASK_SLEEPING && now - task->wake_at_ns >= 0) {
        int expected = TASK_SLEEPING;
        return atomic_compare_exchange_strong(&task->state, &expected, TASK_READY) || expected == TASK_READY;
    }
    if (state == TASK_BLOCKED && task->block_has_deadline && now - task->wake_at_ns >= 0) {
        int expected = TASK_BLOCKED;
        return atomic_compare_exchange_strong(&task->state, &expected, TASK_READY) || expected == TASK_READY;
    }
    return false;
}

/* Round robin over this CPU's list, starting after the current task; dead tasks that are no longer running
 * on their stack are handed to the reaper on the way. */
static struct context *schedule(struct sched_cpu *sc, struct context *ctx)
{
    struct task *prev = sc->current;
    prev->ctx = ctx;
    int64_t now = time_ns();

    adopt_incoming(sc);

    bool reaped = false;
    for (struct task **link = &sc->list; *link;) {
        struct task *t = *link;
        if (t != prev && atomic_load(&t->state) == TASK_DEAD) {
            *link = t->next_on_cpu;
            push_handoff(&dead_list, t);
            reaped = true;
            continue;
        }
        link = &t->next_on_cpu;
    }
    if (reaped && reaper_task)
        task_wake(reaper_task);

    struct task *start = (prev->is_idle || atomic_load(&prev->state) == TASK_DEAD) ? sc->list : prev->next_on_cpu;
    struct task *next = 0;
    for (struct task *t = start; t; t = t->next_on_cpu)
        if (t != prev && runnable(t, now)) { next = t; break; }
    if (!next)
        for (struct task *t = sc->list; t && t != start; t = t->next_on_cpu)
            if (t != prev && runnable(t, now)) { next = t; break; }
    if (!next && !prev->is_idle && runnable(prev, now))
        next = prev;
    if (!next)
        next = sc->idle;

    if (prev != next) {
        int running = TASK_RUNNING;
        atomic_compare_exchange_strong(&prev->state, &running, TASK_READY);
        if (prev->is_idle || next->is_idle)
            account_idle(sc, prev->is_idle, next->is_idle, now);
    }
    if (prev != next)
        atomic_fetch_add_explicit(&next->switches, 1, memory_order_relaxed);
    atomic_store(&next->state, TASK_RUNNING);
    sc->current = next;
    return next->ctx;
}

struct context *sched_tick(struct context *ctx)
{
    struct sched_cpu *sc = &sched_cpus[cpu_index()];
    sc->ticks++;
    sc->current->ticks++;
    if (!sc->current->is_idle)
        sc->busy_ticks++;
    return schedule(sc, ctx);
}

struct context *sched_switch(struct context *ctx) { return schedule(&sched_cpus[cpu_index()], ctx); }

struct context *sched_after_irq(struct context *ctx)
{
    /* A device interrupt that woke a task on an idle CPU switches to it now rather than at the next tick,
     * 10 ms later: console echo and UDP replies should not wait for the timer. */
    struct sched_cpu *sc = &sched_cpus[cpu_index()];
    return sc->current->is_idle ? schedule(sc, ctx) : ctx;
}

void task_yield(void) { cpu_yield(); }

/* ---- waiting -------------------------------------------------------------------------------------------
 * Each blocking call says what it waits on and keeps its own frame in the task while it waits: the walk from
 * that frame starts at the caller's call site (its return address), which is what a wall profile and `tasks`
 * show, rather than the scheduler's own frames. The calls are noinline so that frame is theirs.
 *
 * Every wait is also counted where it began, in the block table (kernel/profiler/block_sites.h): its first frames are
 * walked as it begins (a walk of BLOCK_SITE_FRAMES frames inside the task's own stack: a few dozen
 * instructions, docs/profiler.md) and, as it ends, the task itself adds the wait and its length with two
 * atomic adds -- no lock, nothing another task or CPU waits for. */

__attribute__((noinline)) void task_wait_begin(struct task *self, enum task_wait why, void *frame)
{
    self->wait_chain_frames = (uint8_t)task_chain_from_frame(self, frame, self->wait_chain, BLOCK_SITE_FRAMES);
    self->waiting_on = (uint8_t)why;
    self->wait_since_ns = time_ns();
    atomic_store_explicit(&self->wait_frame, (uintptr_t)frame, memory_order_release);
}

__attribute__((noinline)) void task_wait_end(struct task *self)
{
    atomic_store_explicit(&self->wait_frame, 0, memory_order_release);
    block_table_add(&block_sites, self->wait_chain, self->wait_chain_frames, self->waiting_on,
                    time_ns() - self->wait_since_ns);
    self->waiting_on = TASK_WAIT_NONE;
}

static void sleep_until(int64_t when_ns, enum task_wait why, void *frame)
{
    struct task *self = task_current();
    task_wait_begin(self, why, frame);
    self->wake_at_ns = when_ns;
    atomic_store(&self->state, TASK_SLEEPING);
    task_yield();
    task_wait_end(self);
}

__attribute__((noinline)) void task_sleep_until(int64_t when_ns)
{
    sleep_until(when_ns, TASK_WAIT_TIMER, __builtin_frame_address(0));
}

__attribute__((noinline)) void task_sleep_ms(uint32_t ms)
{
    sleep_until(time_ns() + (int64_t)ms * 1000000, TASK_WAIT_TIMER, __builtin_frame_address(0));
}

__attribute__((noinline)) void task_wait_until(int64_t when_ns, enum task_wait why)
{
    sleep_until(when_ns, why, __builtin_frame_address(0));
}

static void block(bool has_deadline, int64_t deadline_ns, enum task_wait why, void *frame)
{
    struct task *self = task_current();
    task_wait_begin(self, why, frame);
    self->wake_at_ns = deadline_ns;
    self->block_has_deadline = has_deadline;
    atomic_store(&self->state, TASK_BLOCKED);
    if (atomic_exchange(&self->wake_pending, 0)) {
        int blocked = TASK_BLOCKED;
        atomic_compare_exchange_strong(&self->state, &blocked, TASK_RUNNING);
    } else {
        task_yield();
        atomic_store(&self->wake_pending, 0);
    }
    self->block_has_deadline = false;
    task_wait_end(self);
}

__attribute__((noinline)) void task_block_until(int64_t deadline_ns, enum task_wait why)
{
    block(true, deadline_ns, why, __builtin_frame_address(0));
}

__attribute__((noinline)) void task_block(enum task_wait why) { block(false, 0, why, __builtin_frame_address(0)); }

int task_chain_off_cpu(const struct task *task, const struct text_bounds *text, uintptr_t *out, int max)
{
    struct stack_bounds stack = task_stack_bounds(task);
    uintptr_t frame = atomic_load_explicit(&task->wait_frame, memory_order_acquire);
    if (frame)
        return stack_walk(frame, &stack, out, max);
    const struct context *ctx = task->ctx;
    if (!ctx || max < 1)
        return 0;
    return stack_trace_from(context_pc(ctx), context_sp(ctx), context_fp(ctx), &stack, text, out, max);
}

void sched_for_each_other_here(void (*fn)(struct task *task, void *arg), void *arg)
{
    struct sched_cpu *sc = &sched_cpus[cpu_index()];
    for (struct task *t = sc->list; t; t = t->next_on_cpu)
        if (t != sc->current && atomic_load(&t->state) != TASK_DEAD)
            fn(t, arg);
}

void task_wake(struct task *task)
{
    atomic_store(&task->wake_pending, 1);
    int blocked = TASK_BLOCKED;
    atomic_compare_exchange_strong(&task->state, &blocked, TASK_READY);
}

void task_exit(void)
{
    struct task *self = task_current();
    atomic_store(&self->state, TASK_DEAD);
    for (;;)
        task_yield();
}

static void table_remove(struct task *task)
{
    unsigned long flags = spin_lock_irqsave(&table_lock);
    for (unsigned i = 0; i < MAX_TASKS; i++)
        if (task_table[i] == task)
            task_table[i] = 0;
    spin_unlock_irqrestore(&table_lock, flags);
}

/* Frees what dead tasks leave: their table slot, stack and struct. Runs as a task because kfree takes the
 * heap lock, which the scheduler (in an interrupt) must not. */
static void reaper(void *arg)
{
    (void)arg;
    for (;;) {
        struct task *dead = atomic_exchange(&dead_list, 0);
        while (dead) {
            struct task *next = dead->next_handoff;
            table_remove(dead);
            if (dead->placed)
                atomic_fetch_sub(&sched_cpus[dead->cpu].placed, 1);
            task_set_labels(dead, 0); /* its reference to its label set goes back */
            kfree(dead->stack);
            kfree(dead);
            dead = next;
        }
        task_block(TASK_WAIT_TASK); /* tasks exiting */
    }
}

void task_start_reaper(void)
{
    reaper_task = task_spawn("reaper", reaper, 0, 0);
    if (!reaper_task)
        panic("task_start_reaper: cannot spawn the reaper");
}

void task_for_each(void (*fn)(struct task *task, void *arg), void *arg)
{
    /* The table is in slot order; pids only grow, so sort on the way out. */
    unsigned long flags = spin_lock_irqsave(&table_lock);
    uint32_t last = 0;
    for (;;) {
        struct task *best = 0;
        for (unsigned i = 0; i < MAX_TASKS; i++) {
            struct task *t = task_table[i];
            if (t && t->pid > last && (!best || t->pid < best->pid))
                best = t;
        }
        if (!best)
            break;
        fn(best, arg);
        last = best->pid;
    }
    spin_unlock_irqrestore(&table_lock, flags);
}

/* The live task pid, NULL when there is none. Under the table lock, which keeps it from being freed. */
static struct task *live_task_locked(uint32_t pid)
{
    for (unsigned i = 0; i < MAX_TASKS; i++)
        if (task_table[i] && task_table[i]->pid == pid && atomic_load(&task_table[i]->state) != TASK_DEAD)
            return task_table[i];
    return 0;
}

bool task_exists(uint32_t pid)
{
    unsigned long flags = spin_lock_irqsave(&table_lock);
    bool found = live_task_locked(pid) != 0;
    spin_unlock_irqrestore(&table_lock, flags);
    return found;
}

bool task_set_span_by_pid(uint32_t pid, uint64_t span)
{
    unsigned long flags = spin_lock_irqsave(&table_lock);
    struct task *t = live_task_locked(pid);
    if (t)
        task_set_span(t, span);
    spin_unlock_irqrestore(&table_lock, flags);
    return t != 0;
}

bool task_set_labels_by_pid(uint32_t pid, const struct label_set *set)
{
    unsigned long flags = spin_lock_irqsave(&table_lock);
    struct task *t = live_task_locked(pid);
    if (t)
        task_set_labels(t, set);
    spin_unlock_irqrestore(&table_lock, flags);
    return t != 0;
}

void sched_cpu_ticks(unsigned cpu, uint64_t *ticks, uint64_t *busy)
{
    *ticks = sched_cpus[cpu].ticks;
    *busy = sched_cpus[cpu].busy_ticks;
}

uint64_t sched_idle_waits(void) { return sched_cpus[cpu_index()].idle_waits; }

void sched_idle_loop(void)
{
    for (;;) {
        sched_cpus[cpu_index()].idle_waits++;
        cpu_wait_for_interrupt();
    }
}
