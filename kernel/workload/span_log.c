/* kernel/workload/span_log.c: span ids and the lock-free span logs of the known workloads (span_log.h). Writers
 * claim an index with one atomic add and publish the entry with its sequence word; readers copy an entry and
 * keep it only if the sequence word says it was whole before and after the copy -- the same entry may be
 * overwritten meanwhile by a writer a whole ring ahead, and the reader must then stop rather than print a mix. */
#include "kernel/workload/span_log.h"

#include <stdbool.h>

static atomic_ullong next_span = 1; /* span ids, unique since boot across every workload */

uint64_t span_new(void)
{
    return atomic_fetch_add(&next_span, 1);
}

uint64_t span_log_next(struct span_log *log)
{
    return atomic_load(&log->next);
}

void span_log_add(struct span_log *log, uint32_t pid, uint64_t span, int64_t ns0, int64_t ns1)
{
    uint64_t i = atomic_fetch_add(&log->next, 1);
    struct span_entry *e = &log->entries[i % log->capacity];
    /* Mark it unwhole before touching the fields, and order that mark before them: a reader that copies the
     * fields in the middle then sees the word change under it and drops the copy. */
    atomic_store_explicit(&e->seq, 0, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
    e->pid = pid;
    e->span = span;
    e->ns[0] = ns0;
    e->ns[1] = ns1;
    atomic_store_explicit(&e->seq, i + 1, memory_order_release);
}

/* Entry i copied whole into *copy, or false when it is not whole now (being written, or already overwritten). */
static bool read_entry(struct span_log *log, uint64_t i, struct span_entry *copy)
{
    struct span_entry *e = &log->entries[i % log->capacity];
    if (atomic_load_explicit(&e->seq, memory_order_acquire) != i + 1)
        return false;
    copy->pid = e->pid;
    copy->span = e->span;
    copy->ns[0] = e->ns[0];
    copy->ns[1] = e->ns[1];
    atomic_thread_fence(memory_order_acquire);
    return atomic_load_explicit(&e->seq, memory_order_relaxed) == i + 1;
}

void span_log_print(struct span_log *log, uint64_t from, const char *name, struct sink *out)
{
    uint64_t next = atomic_load(&log->next);
    uint64_t readable = log->capacity - SPAN_LOG_PER_READ;
    uint64_t lost = 0;
    if (from > next)
        from = next;
    if (next - from > readable) {
        lost = next - from - readable;
        from += lost;
    }
    uint64_t i = from;
    for (; i < next && i - from < SPAN_LOG_PER_READ; i++) {
        struct span_entry copy;
        if (!read_entry(log, i, &copy))
            break; /* still being written: the next read starts here */
        sink_printf(out, "span %u %llu %lld %lld\n", copy.pid, (unsigned long long)copy.span,
                    (long long)copy.ns[0], (long long)copy.ns[1]);
    }
    sink_printf(out, "%s spans: next %llu lost %llu\n", name, (unsigned long long)i, (unsigned long long)lost);
}
