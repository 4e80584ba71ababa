/* kernel/profiler_ring.h: one profiler sample (struct profile_record: raw addresses, nothing resolved) and the
 * per-CPU single-producer single-consumer ring it is written into, inline because its producer is an interrupt
 * or an NMI. kernel/profiler.c produces, kernel/profiler/run.c's profiler_drain consumes. */
#ifndef KERNEL_PROFILER_RING_H
#define KERNEL_PROFILER_RING_H

#include <stdatomic.h>
#include <stdint.h>

#define PROFILE_MAX_FRAMES 8       /* frame 0 is the interrupted instruction, then up to 7 callers */
#define PROFILE_RING_RECORDS 1024  /* per CPU: one second at the counter rate, ten at the tick rate; the profile
                                    * command drains them while its window runs (PROFILE_DRAIN_MS) */

struct label_set;

/* What a record knows about the context it interrupted (profile_record.flags). */
#define PROFILE_REC_IRQS_OFF 0x01 /* interrupts were disabled there: only the counter's NMI can land there */
#define PROFILE_REC_IN_IRQ 0x02   /* it was an interrupt handler */
#define PROFILE_REC_LET_IN 0x04   /* a tick held off by code running with interrupts disabled, taken just
                                   * after the sti/popf that re-enabled them; held_off_us says how long */
#define PROFILE_REC_WALL 0x08     /* a wall sample: one task at one moment, whatever it was doing (wall says
                                   * what); its frames are the task's chain, from where it waits when it waits */

/* One sample. Nothing in it is resolved: addresses keep, and a lookup has no business in an interrupt. */
struct profile_record {
    const struct label_set *labels; /* the task's label set when the sample was taken; NULL when it had none.
                                     * Valid until the record is drained (kernel/labels.h) */
    uint64_t span;                  /* the task's span then (kernel/labels.h), 0 for none */
    int64_t time_ns;
    uint32_t pid;
    uint32_t run;     /* the run that took it: the report ignores a straggler from an earlier run */
    uint16_t cpu;
    uint8_t nframes;      /* 1 .. PROFILE_MAX_FRAMES */
    uint8_t flags;        /* PROFILE_REC_* */
    union {
        uint32_t held_off_us; /* PROFILE_REC_LET_IN: how late the tick was */
        struct {
            uint8_t activity;   /* enum task_activity (kernel/task.h) */
            uint8_t waiting_on; /* enum task_wait, when waiting */
            uint16_t unused;
        } wall;               /* PROFILE_REC_WALL: no tick is late for a sweep, so it shares the word */
    };
    uint32_t period;      /* what one sample stands for, in the run's unit: the counter's period in its event's
                           * cycles at the time (throttling doubles it), the tick's in nanoseconds (in TSC
                           * cycles on a counter run's tick, so one run has one unit); 0 weighs as 1 */
    uint32_t labels_generation; /* labels' generation when the sample was taken: after the drain the pool may
                                 * free the set and give its slot to a new one, whose generation differs (a
                                 * reader that finds another says the labels are gone: profile_record_labels).
                                 * Here, not beside labels, because here it fills what was padding */
    uintptr_t frames[PROFILE_MAX_FRAMES];
};

_Static_assert(sizeof(struct profile_record) == 112, "the gdb scripts and the stream's readers know its size");

/* A single-producer single-consumer ring of records. The producer is the owning CPU's interrupt (or NMI); the
 * consumer is the report, in task context. head and tail run freely and wrap at 2^32; their difference is the
 * fill, so the capacity must be a power of two. */
struct profile_ring {
    struct profile_record *records; /* NULL until the first start allocates it; then kept for the kernel's life */
    uint32_t mask;                  /* capacity - 1 */
    _Atomic uint32_t head;          /* next slot the producer fills; stored with release on commit */
    _Atomic uint32_t tail;          /* next slot the consumer reads */
    _Atomic uint32_t drops;         /* records refused because the ring was full */
};

/* Hands storage of capacity records (a power of two) to ring, with both indexes at start: any start is
 * valid, which is how the tests put the wrap at UINT32_MAX. */
static inline void profile_ring_init(struct profile_ring *ring, struct profile_record *storage,
                                     uint32_t capacity, uint32_t start)
{
    ring->records = storage;
    ring->mask = capacity - 1;
    atomic_store_explicit(&ring->head, start, memory_order_relaxed);
    atomic_store_explicit(&ring->tail, start, memory_order_relaxed);
    atomic_store_explicit(&ring->drops, 0, memory_order_relaxed);
}

/* Producer. The slot to fill, or NULL: when the ring has no storage (not counted) or is full (counted as a
 * drop). The slot is invisible to the consumer until profile_ring_commit(). */
static inline struct profile_record *profile_ring_reserve(struct profile_ring *ring)
{
    if (!ring->records)
        return 0;
    uint32_t head = atomic_load_explicit(&ring->head, memory_order_relaxed);
    /* acquire: the consumer has finished reading every slot below tail before we write over it */
    uint32_t tail = atomic_load_explicit(&ring->tail, memory_order_acquire);
    if (head - tail > ring->mask) {
        atomic_fetch_add_explicit(&ring->drops, 1, memory_order_relaxed);
        return 0;
    }
    return &ring->records[head & ring->mask];
}

/* Producer: publishes the slot profile_ring_reserve() returned. */
static inline void profile_ring_commit(struct profile_ring *ring)
{
    uint32_t head = atomic_load_explicit(&ring->head, memory_order_relaxed);
    atomic_store_explicit(&ring->head, head + 1, memory_order_release);
}

/* Consumer: records waiting. Unsigned wrap-around makes head - tail right across 2^32. */
static inline uint32_t profile_ring_count(const struct profile_ring *ring)
{
    /* acquire: every record below head has been written in full */
    uint32_t head = atomic_load_explicit(&ring->head, memory_order_acquire);
    return head - atomic_load_explicit(&ring->tail, memory_order_relaxed);
}

/* Consumer: the oldest waiting record, NULL when there is none; valid until profile_ring_advance(). */
static inline const struct profile_record *profile_ring_peek(const struct profile_ring *ring)
{
    if (!ring->records || profile_ring_count(ring) == 0)
        return 0;
    uint32_t tail = atomic_load_explicit(&ring->tail, memory_order_relaxed);
    return &ring->records[tail & ring->mask];
}

/* Consumer: done with the oldest record. */
static inline void profile_ring_advance(struct profile_ring *ring)
{
    uint32_t tail = atomic_load_explicit(&ring->tail, memory_order_relaxed);
    /* release: our reads of the slot are done before the producer may reuse it */
    atomic_store_explicit(&ring->tail, tail + 1, memory_order_release);
}

/* Consumer: forgets every waiting record and zeroes the drop count (a run's start). */
static inline void profile_ring_reset(struct profile_ring *ring)
{
    uint32_t head = atomic_load_explicit(&ring->head, memory_order_acquire);
    atomic_store_explicit(&ring->tail, head, memory_order_release);
    atomic_store_explicit(&ring->drops, 0, memory_order_relaxed);
}

static inline uint32_t profile_ring_drops(const struct profile_ring *ring)
{
    return atomic_load_explicit(&ring->drops, memory_order_relaxed);
}

#endif
