/* tests/unit/test_profiler_options.c: the profiler's boot options (kernel/profiler/options.c) -- profile.hz= sets
 * the tick's rate and says so, profile.ring_records= (a test knob) takes a power of two 64..1024 and says so;
 * anything else is one warning line and changes nothing; absent, nothing is said. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "fake_hal.h"
#include "fake_kernel.h"
#include "hal/cpu.h"
#include "kernel/profiler.h"
#include "unit_main.h"

static void test_ring_records(void **state)
{
    (void)state;
    fake_log_reset();
    assert_true(profiler_set_ring_records(NULL));
    assert_int_equal(profiler_ring_records(), PROFILE_RING_RECORDS);
    assert_int_equal(fake_log_lines, 0);
    const char *bad[] = { "0", "32", "100", "2048", "256x", "", "-256", "99999999999999999999" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        fake_log_reset();
        assert_false(profiler_set_ring_records(bad[i]));
        assert_int_equal(profiler_ring_records(), PROFILE_RING_RECORDS);
        assert_int_equal(fake_log_lines, 1);
        assert_non_null(strstr(fake_log_text, "is not a power of two 64..1024; each ring holds 1024 records"));
    }
    fake_log_reset();
    assert_true(profiler_set_ring_records("256"));
    assert_int_equal(profiler_ring_records(), 256);
    assert_non_null(strstr(fake_log_text, "profile: each CPU's ring holds 256 records (profile.ring_records=, a test "
                                          "knob)"));
    assert_true(profiler_set_ring_records("64"));
    assert_int_equal(profiler_ring_records(), 64);
    assert_false(profiler_set_ring_records("3"));
    assert_int_equal(profiler_ring_records(), 64); /* a bad value keeps what was set */
}

static void test_tick_rate(void **state)
{
    (void)state;
    fake_log_reset();
    profiler_set_tick_rate(NULL);
    assert_int_equal(fake_tick_hz, TICK_HZ_DEFAULT);
    assert_int_equal(fake_log_lines, 0);
    profiler_set_tick_rate("4001");
    assert_int_equal(fake_tick_hz, TICK_HZ_DEFAULT);
    assert_non_null(
        strstr(fake_log_text, "profile: profile.hz=4001 is not a rate 10..4000 Hz; the tick stays at 100 Hz"));
    fake_log_reset();
    profiler_set_tick_rate("1000");
    assert_int_equal(fake_tick_hz, 1000);
    assert_non_null(strstr(fake_log_text, "profile: the tick samples at 1000 Hz (profile.hz=)"));
    fake_tick_hz = TICK_HZ_DEFAULT;
}

UNIT_MAIN(NULL, NULL, test_ring_records, test_tick_rate)
