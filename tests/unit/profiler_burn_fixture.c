/* tests/unit/profiler_burn_fixture.c: the kernel around a whole profile taken by a command
 * (tests/unit/profiler_burn_fixture.h), for test_cmd_profile.c, test_cmd_profile_stream.c and
 * test_pprof_take.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <cmocka.h>

#include "profiler_burn_fixture.h"

#include "fake_hal.h"
#include "kernel/heap.h"
#include "kernel/profiler.h"
#include "kernel/profiler/build_id.h"
#include "kernel/profiler/session.h"
#include "kernel/symbols.h"
#include "kernel/task.h"

/* ---- the kernel image ---- */

/* The kernel's build-id note: a GNU note of type 3 holding 4 bytes. */
static const uint32_t build_id_note[] = { 4, 4, 3, 0x00554e47 /* "GNU\0" */, 0xefbeadde };
const void *kernel_build_id_note(size_t *len)
{
    *len = sizeof build_id_note;
    return build_id_note;
}

unsigned burn_lookups;
bool __real_symtab_lookup(const struct symtab *tab, uint64_t addr, struct symbol_hit *hit);
bool __real_symtab_lookup_return(const struct symtab *tab, uint64_t addr, struct symbol_hit *hit);
bool __wrap_symtab_lookup(const struct symtab *tab, uint64_t addr, struct symbol_hit *hit)
{
    burn_lookups++;
    return __real_symtab_lookup(tab, addr, hit);
}
bool __wrap_symtab_lookup_return(const struct symtab *tab, uint64_t addr, struct symbol_hit *hit)
{
    burn_lookups++;
    return __real_symtab_lookup_return(tab, addr, hit);
}

/* ---- tasks ---- */

/* A pid exists when a CPU's task has it (the commands check before they start). */
bool task_exists(uint32_t pid)
{
    for (unsigned i = 0; i < MAX_CPUS; i++)
        if (fake_task[i].pid == pid)
            return true;
    return false;
}

/* ---- the window ---- */

int burn_sleeps;
uint32_t burn_slept_ms;
unsigned burn_ticks_per_sleep;

void burn_window_sleep(int64_t when_ns)
{
    burn_sleeps++;
    burn_slept_ms += (uint32_t)((when_ns - fake_time_ns) / 1000000);
    for (unsigned t = 0; t < burn_ticks_per_sleep; t++)
        fake_tick_every_cpu(t);
}

/* ---- the machine ---- */

void burn_expect_profiler_free(void)
{
    struct profile_run run = { 0 };
    assert_int_equal(profiler_start(&run), PROFILER_OK);
    profiler_stop(&run);
    profiler_release();
}

static void drop_record(void *arg, const struct profile_record *rec) { (void)arg, (void)rec; }

void burn_hold_profiler(struct profile_session *held, uint32_t window_ms, const char *holder)
{
    static const struct profile_consumer dropping = { .take = drop_record };
    assert_int_equal(profile_session_start(held, &dropping, NULL, NULL, window_ms, holder), PROFILER_OK);
}

static _Alignas(16) unsigned char heap_region[8 << 20];

void burn_heap_init(size_t bytes)
{
    if (bytes > sizeof heap_region)
        abort();
    heap_init(heap_region, bytes);
}

int burn_setup_group(void **state)
{
    (void)state;
    burn_heap_init(4 << 20);
    return 0;
}

void burn_setup(unsigned caller_step)
{
    fake_cpu_count = 2;
    fake_cpu_index = 0;
    fake_time_ns = 5000000000;
    /* A tick slower than the drain: the fake's ticks, bunched at each step's start, are never late. */
    fake_tick_hz = 10;
    fake_tasks_reset(100);
    for (unsigned i = 0; i < MAX_CPUS; i++)
        fake_stack[i][0] = FAKE_BURN_TASK + 0x30 + i * caller_step;
    fake_tick_hook = NULL;
    fake_sleep_hook = NULL;
    fake_walk_hook = NULL;
    fake_tick_pc = FAKE_BURN_INNER + 0x10;
    fake_tick_rounds = fake_ticks = fake_sleeps = 0;
    burn_lookups = 0;
    burn_sleeps = 0;
    burn_slept_ms = 0;
    burn_ticks_per_sleep = 0;
}
