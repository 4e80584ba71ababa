/* tests/unit/profiler_burn_fixture.h: the kernel around a whole profile taken by a command -- `profile`
 * (test_cmd_profile.c), `profile stream` (test_cmd_profile_stream.c) and the pprof take (test_pprof_take.c)
 * -- over the fake kernel's default image (tests/unit/fake_kernel.h: BurnInner, called from BurnTask). Two
 * CPUs on a tick slower than the drain; a task per CPU, pids 100 and up, each interrupted in BurnInner with a
 * caller in BurnTask; the window's sleeps, each bringing burn_ticks_per_sleep rounds of ticks; the kernel's
 * build-id note; the kernel's own heap over a static region; and every symbol lookup counted on its way to
 * kernel/symbols.c (the program's .mk wraps symtab_lookup and symtab_lookup_return). Defined once in
 * profiler_burn_fixture.c. */
#ifndef TESTS_UNIT_PROFILER_BURN_FIXTURE_H
#define TESTS_UNIT_PROFILER_BURN_FIXTURE_H

#include <stddef.h>
#include <stdint.h>

#include "fake_kernel.h"

/* Symbol lookups made (the fold's, the report's) since the test last zeroed it. */
extern unsigned burn_lookups;

/* The window's sleeps (task_sleep_until): burn_sleeps counts them, burn_slept_ms adds up how long each was
 * (to its end); each gives every CPU burn_ticks_per_sleep ticks, at BurnInner+0x10, +0x18 and +0x20 in turn. */
extern int burn_sleeps;
extern uint32_t burn_slept_ms;
extern unsigned burn_ticks_per_sleep;
/* One of the window's sleeps until when_ns, counted and ticked as above; the caller moves the clock. */
void burn_window_sleep(int64_t when_ns);

/* The heap (the kernel's, kernel/heap.c) over bytes of a static region (at most 8 MB); once, in a group's
 * setup -- burn_setup_group's, over 4 MB, unless the program needs more. */
void burn_heap_init(size_t bytes);
int burn_setup_group(void **state);

/* The profiler is free: a run starts, and stops and is released at once. */
void burn_expect_profiler_free(void);

/* The profiler held by a session of holder's (as an HTTP profile or a stream holds it) with a window of window_ms
 * (0: none), its records dropped; asserted started. The test stops and releases it. */
struct profile_session;
void burn_hold_profiler(struct profile_session *held, uint32_t window_ms, const char *holder);

/* Each test's machine: CPUs 0 and 1 online, on CPU 0, the clock at 5 s, the tick at 10 Hz; the tasks reset
 * (fake_tasks_reset(100)) and each CPU's task called from BurnTask+0x30 + cpu * caller_step; the counters above,
 * the fake kernel's sleeps and ticks zeroed, no hooks. */
void burn_setup(unsigned caller_step);

#endif
