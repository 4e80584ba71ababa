/* kernel/shell/cmd_locks.c: the `locks` command -- where CPUs spun on spinlocks since boot, the most contended call
 * sites first: for each, the acquisitions that had to wait, the time they spun in all and on average, and the call
 * chain (the call site that took the lock, then its callers) as `tasks` prints chains. The counts are the lock
 * table's (kernel/profiler/lock_sites.h), the copy and its order the block profile's (block_snapshot_take,
 * block_snapshot_sort), so `locks` and /debug/pprof/mutex read the same table the same way. */
#include "kernel/shell/commands.h"

#include "kernel/lib/parse.h"
#include "kernel/profiler/block_profile.h"
#include "kernel/profiler/lock_sites.h"
#include "kernel/symbols.h"

#define LOCKS_SHOWN_DEFAULT 10

/* ns as milliseconds with three decimals: spins are micro- to milliseconds. */
static void print_ms(struct sink *out, uint64_t ns)
{
    sink_printf(out, "%llu.%03llu ms", (unsigned long long)(ns / 1000000), (unsigned long long)(ns / 1000 % 1000));
}

static void print_counts(struct sink *out, const struct block_row *r)
{
    sink_printf(out, "%llu waits, ", (unsigned long long)r->count);
    print_ms(out, r->delay_ns);
    sink_puts(out, " spun (");
    print_ms(out, r->count ? r->delay_ns / r->count : 0);
    sink_puts(out, " each)\n");
}

static void print_site(struct sink *out, const struct block_row *r)
{
    print_counts(out, r);
    if (r->nframes)
        backtrace_print(out, r->frames, r->nframes);
    else
        sink_puts(out, "        " BLOCK_PROFILE_NO_FRAMES " (a cpu with no task yet)\n");
}

int cmd_locks(int argc, char **argv, struct sink *out, const struct shell_origin *from)
{
    (void)from;
    uint64_t shown = LOCKS_SHOWN_DEFAULT;
    if (argc > 2 || (argc == 2 && !parse_u64_range(argv[1], 1, BLOCK_SITES, &shown)))
        return shell_usage(out, "locks");
    struct block_snapshot s;
    if (!block_snapshot_take(&lock_sites, &s)) {
        sink_puts(out, "locks: no memory for a copy of the lock table\n");
        return 1;
    }
    block_snapshot_sort(&s);
    uint64_t waits = s.other.count, spun = s.other.delay_ns;
    for (unsigned i = 0; i < s.count; i++) {
        waits += s.rows[i].count;
        spun += s.rows[i].delay_ns;
    }
    if (!waits) {
        sink_puts(out, "locks: no contention since boot: no spinlock acquisition had to wait\n");
        block_snapshot_free(&s);
        return 0;
    }
    unsigned n = s.count < shown ? s.count : (unsigned)shown;
    sink_printf(out, "locks: %llu contended acquisitions since boot at %u call site%s, ", (unsigned long long)waits,
                s.count, s.count == 1 ? "" : "s");
    print_ms(out, spun);
    sink_printf(out, " spun; the %u that spun longest:\n", n);
    for (unsigned i = 0; i < n; i++)
        print_site(out, &s.rows[i]);
    if (s.other.count) {
        sink_printf(out, "other call sites (past the table's %u): ", BLOCK_SITES);
        print_counts(out, &s.other);
    }
    block_snapshot_free(&s);
    return 0;
}
