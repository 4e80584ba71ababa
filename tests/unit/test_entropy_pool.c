/* tests/unit/test_entropy_pool.c: kernel/net/entropy_pool.c over a fake source -- the estimate (nothing for
 * constant or evenly stepping readings, at most 2 bits a reading for wandering ones), the gathering (a working
 * hardware generator is strong and the timings are mixed in as well; a missing one, or one whose carry flag
 * stays clear through every bounded retry, is weak on the timings alone; a few failures then a value are
 * retried through; one that reports success with all zeros, all ones or a value it gave before is refused and
 * says why), the wall clock changing the seed where every other timing repeats (deterministic execution), and
 * run ids that come from the seed and a counter, never the clock. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "fake_hal.h"
#include "kernel/net/entropy_pool.h"
#include "unit_main.h"

/* ---- the fake source ---- */
static bool fake_present;
static int fake_failures_left;   /* hardware reads that clear the carry before one succeeds; <0: always fail */
static unsigned hardware_reads, timing_reads;
static uint64_t hardware_next;
static const uint64_t *hardware_script; /* when set: the values the generator gives, in turn, carry set */
static size_t hardware_script_len, hardware_script_at;
static bool timings_vary;        /* false: every timing reading is the same value */
static uint64_t wallclock;
static uint64_t lcg;

static bool fake_hardware_present(void) { return fake_present; }

static bool fake_hardware_read(uint64_t *out)
{
    hardware_reads++;
    if (fake_failures_left < 0)
        return false;
    if (fake_failures_left > 0) {
        fake_failures_left--;
        return false;
    }
    if (hardware_script) {
        *out = hardware_script[hardware_script_at < hardware_script_len ? hardware_script_at++ : 0];
        return true;
    }
    *out = hardware_next++ * 0x9e3779b97f4a7c15ull;
    return true;
}

static uint64_t next_random(void)
{
    lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
    return lcg >> 33;
}

static size_t fake_timing_read(enum entropy_timing which, uint64_t *out, size_t cap)
{
    timing_reads++;
    if (which == ENTROPY_WALLCLOCK) {
        out[0] = wallclock;
        return 1;
    }
    for (size_t i = 0; i < cap; i++)
        out[i] = timings_vary ? 100000 + (next_random() & 0xfff) : 100000;
    return cap;
}

static const struct entropy_source fake = { fake_hardware_present, fake_hardware_read, fake_timing_read };

static int reset(void **state)
{
    (void)state;
    fake_present = false;
    fake_failures_left = 0;
    hardware_reads = timing_reads = 0;
    hardware_next = 1;
    hardware_script = NULL;
    hardware_script_len = hardware_script_at = 0;
    timings_vary = false;
    wallclock = 0x20261203073000ull;
    lcg = 42;
    fake_time_ns = 0;
    fake_cycles = 0;
    return 0;
}

static void gather(struct entropy_pool *pool)
{
    memset(pool, 0xa5, sizeof *pool);
    entropy_pool_gather(pool, &fake);
}

/* ---- the estimate ---- */
static void test_estimate_credits_nothing_for_constant_or_stepping_readings(void **state)
{
    (void)state;
    uint64_t constant[16], stepping[16], by_one[16];
    for (int i = 0; i < 16; i++) {
        constant[i] = 123456;
        stepping[i] = 1000 + 37 * (uint64_t)i;
        by_one[i] = 5000 + (uint64_t)(i & 1); /* wanders by 1: bit length 1, less one, nothing */
    }
    assert_int_equal(entropy_estimate_bits(constant, 16), 0);
    assert_int_equal(entropy_estimate_bits(stepping, 16), 0);
    assert_int_equal(entropy_estimate_bits(by_one, 16), 0);
    assert_int_equal(entropy_estimate_bits(constant, 2), 0);
}

static void test_estimate_caps_wandering_readings_at_two_bits_each(void **state)
{
    (void)state;
    uint64_t wide[16] = { 10, 5000, 20, 90000, 3, 70000, 100, 400000, 8, 60000, 2, 123456, 9, 99999, 4, 88888 };
    assert_int_equal(entropy_estimate_bits(wide, 16), 2 * 14);
    /* An alternation strays by the same amount each time: its second difference is 0, nothing earned. */
    uint64_t alternating[6] = { 100, 103, 100, 103, 100, 103 };
    assert_int_equal(entropy_estimate_bits(alternating, 6), 0);
    /* Strayings of 3 and 5, differing by 2: 1 bit (bit length 2, less one) at each change. */
    uint64_t narrow[6] = { 100, 103, 100, 105, 100, 103 };
    assert_int_equal(entropy_estimate_bits(narrow, 6), 2);
}

/* ---- gathering ---- */
static void test_no_hardware_and_constant_timings_is_weak_with_nothing_credited(void **state)
{
    (void)state;
    struct entropy_pool pool;
    gather(&pool);
    assert_false(pool.hardware_present);
    assert_false(pool.hardware);
    assert_int_equal(pool.verdict, ENTROPY_HARDWARE_MISSING);
    assert_string_equal(entropy_pool_hardware_why(&pool), "no RDRAND/RDSEED");
    assert_int_equal(pool.estimate_bits, 0);
    assert_true(entropy_pool_weak(&pool));
    assert_int_equal(hardware_reads, 0);
    assert_int_equal(timing_reads, ENTROPY_TIMINGS);
}

static void test_no_hardware_and_varied_timings_is_credited_but_still_weak(void **state)
{
    (void)state;
    timings_vary = true;
    struct entropy_pool pool;
    gather(&pool);
    /* PIT, RTC and ticks each credited (the wall clock never): well above nothing, at most 2 bits a reading */
    assert_true(pool.estimate_bits > 200);
    assert_true(pool.estimate_bits <= 3 * 2 * (ENTROPY_TIMING_READINGS - 2));
    assert_true(entropy_pool_weak(&pool)); /* no hardware generator: weak whatever the timings earned */
}

static void test_working_hardware_is_strong_and_the_timings_are_mixed_in_as_well(void **state)
{
    (void)state;
    fake_present = true;
    struct entropy_pool pool;
    gather(&pool);
    assert_true(pool.hardware);
    assert_int_equal(pool.verdict, ENTROPY_HARDWARE_WORKING);
    assert_string_equal(entropy_pool_hardware_why(&pool), "");
    assert_int_equal(pool.estimate_bits, 64 * ENTROPY_HARDWARE_SAMPLES); /* constant timings earn nothing */
    assert_false(entropy_pool_weak(&pool));
    assert_int_equal(hardware_reads, ENTROPY_HARDWARE_SAMPLES);
    assert_int_equal(timing_reads, ENTROPY_TIMINGS);
    /* and credited: wandering timings add to the generator's bits */
    timings_vary = true;
    gather(&pool);
    assert_true(pool.estimate_bits > 64 * ENTROPY_HARDWARE_SAMPLES + 200);
}

/* A generator that gives the same values every boot is not caught by looking at one boot's values: the timings,
 * mixed in always, still change the seed (here the wall clock). */
static void test_a_working_generator_that_repeats_across_boots_still_gets_a_new_seed(void **state)
{
    (void)state;
    fake_present = true;
    struct entropy_pool a, b;
    gather(&a);
    hardware_next = 1; /* the next boot: the same eight values */
    wallclock++;
    gather(&b);
    assert_true(a.hardware && b.hardware);
    assert_memory_not_equal(a.seed, b.seed, sizeof a.seed);
}

/* pool, gathered from a generator that is present but not used (verdict, why) after reads reads of it: weak on
 * the timings alone, every timing read, and none of the generator's 64 bits a value credited. */
static void assert_timings_only(const struct entropy_pool *pool, enum entropy_hardware_verdict verdict,
                                const char *why, unsigned reads)
{
    assert_true(pool->hardware_present);
    assert_false(pool->hardware);
    assert_int_equal(pool->verdict, verdict);
    assert_string_equal(entropy_pool_hardware_why(pool), why);
    assert_true(entropy_pool_weak(pool));
    assert_int_equal(hardware_reads, reads);
    assert_int_equal(timing_reads, ENTROPY_TIMINGS);
    assert_true(pool->estimate_bits > 0 && pool->estimate_bits <= 3 * 2 * (ENTROPY_TIMING_READINGS - 2));
}

/* The generator answers every read with value and the carry set; it is refused with verdict at its first value
 * (or at the second, for a repeat), weak on the timings alone, and says why. */
static void assert_stuck_generator_refused(uint64_t first, uint64_t value, enum entropy_hardware_verdict verdict,
                                           const char *why, unsigned reads)
{
    uint64_t script[2] = { first, value };
    hardware_script = script;
    hardware_script_len = 2;
    fake_present = true;
    timings_vary = true;
    struct entropy_pool pool;
    gather(&pool);
    assert_timings_only(&pool, verdict, why, reads); /* refused at once: no more read */
}

static void test_a_generator_stuck_at_all_ones_is_refused_and_says_why(void **state)
{
    (void)state;
    /* the AMD parts after a resume: 0xFFFFFFFFFFFFFFFF with the carry set, every time */
    assert_stuck_generator_refused(~0ull, ~0ull, ENTROPY_HARDWARE_ALL_ONES,
                                   "RDRAND/RDSEED refused: it returned all ones", 1);
}

static void test_a_generator_stuck_at_all_zeros_is_refused_and_says_why(void **state)
{
    (void)state;
    assert_stuck_generator_refused(0, 0, ENTROPY_HARDWARE_ALL_ZEROS, "RDRAND/RDSEED refused: it returned all zeros",
                                   1);
}

static void test_a_generator_that_repeats_a_value_is_refused_and_says_why(void **state)
{
    (void)state;
    assert_stuck_generator_refused(0x0123456789abcdefull, 0x0123456789abcdefull, ENTROPY_HARDWARE_REPEATS,
                                   "RDRAND/RDSEED refused: it returned the same value twice", 2);
    /* a repeat of any earlier value, not only the last: six good values, then the second again */
    reset(NULL);
    uint64_t script[7] = { 11, 22, 33, 44, 55, 66, 22 };
    hardware_script = script;
    hardware_script_len = 7;
    fake_present = true;
    struct entropy_pool pool;
    gather(&pool);
    assert_int_equal(pool.verdict, ENTROPY_HARDWARE_REPEATS);
    assert_int_equal(hardware_reads, 7);
    /* a stuck value late in the run refuses it as well */
    reset(NULL);
    uint64_t late[4] = { 11, 22, 33, ~0ull };
    hardware_script = late;
    hardware_script_len = 4;
    fake_present = true;
    gather(&pool);
    assert_int_equal(pool.verdict, ENTROPY_HARDWARE_ALL_ONES);
}

static void test_hardware_whose_carry_stays_clear_falls_back_on_timings(void **state)
{
    (void)state;
    fake_present = true;
    fake_failures_left = -1;
    timings_vary = true;
    struct entropy_pool pool;
    gather(&pool);
    /* bounded: one value's retries, then give up */
    assert_timings_only(&pool, ENTROPY_HARDWARE_FAILING, "RDRAND/RDSEED failing", ENTROPY_HARDWARE_RETRIES);
}

static void test_hardware_that_fails_a_few_times_is_retried_through(void **state)
{
    (void)state;
    fake_present = true;
    fake_failures_left = ENTROPY_HARDWARE_RETRIES - 1;
    struct entropy_pool pool;
    gather(&pool);
    assert_true(pool.hardware);
    assert_false(entropy_pool_weak(&pool));
    assert_int_equal(hardware_reads, ENTROPY_HARDWARE_RETRIES - 1 + ENTROPY_HARDWARE_SAMPLES);
    assert_int_equal(timing_reads, ENTROPY_TIMINGS);
}

/* Under -icount every timing but the RTC repeats from boot to boot: the wall clock alone must change the seed,
 * and with it every secret and run id. */
static void test_the_wall_clock_changes_the_seed_when_all_else_repeats(void **state)
{
    (void)state;
    struct entropy_pool a, b, c;
    gather(&a);
    gather(&b);
    assert_memory_equal(a.seed, b.seed, sizeof a.seed);
    wallclock++;
    gather(&c);
    assert_memory_not_equal(a.seed, c.seed, sizeof a.seed);
    uint8_t sa[SHA256_DIGEST_SIZE], sc[SHA256_DIGEST_SIZE];
    entropy_pool_derive(&a, 7, "", (const uint8_t *)"key", 3, sa);
    entropy_pool_derive(&c, 7, "", (const uint8_t *)"key", 3, sc);
    assert_memory_not_equal(sa, sc, sizeof sa);
}

static void test_derive_keeps_domains_and_keys_apart(void **state)
{
    (void)state;
    struct entropy_pool pool;
    gather(&pool);
    uint8_t a[SHA256_DIGEST_SIZE], b[SHA256_DIGEST_SIZE], c[SHA256_DIGEST_SIZE], d[SHA256_DIGEST_SIZE];
    entropy_pool_derive(&pool, 1, "", (const uint8_t *)"k1", 2, a);
    entropy_pool_derive(&pool, 1, "gdb", (const uint8_t *)"k1", 2, b);
    entropy_pool_derive(&pool, 1, "", (const uint8_t *)"k2", 2, c);
    entropy_pool_derive(&pool, 1, "", (const uint8_t *)"k1", 2, d);
    assert_memory_not_equal(a, b, sizeof a);
    assert_memory_not_equal(a, c, sizeof a);
    assert_memory_equal(a, d, sizeof a);
}

/* ---- run ids ---- */
static void test_run_ids_differ_at_the_same_time_and_come_from_the_seed_alone(void **state)
{
    (void)state;
    struct entropy_pool a, b;
    gather(&a);
    gather(&b); /* the same seed */
    fake_time_ns = 5000000000;
    fake_cycles = 123456789;
    uint32_t first = entropy_pool_run_id(&a), second = entropy_pool_run_id(&a);
    assert_int_not_equal(first, second); /* two streams at the same time */
    /* the other pool, at another time and cycle count: the same ids, so no clock went into them */
    fake_time_ns = 987654321000;
    fake_cycles = 42;
    assert_int_equal(entropy_pool_run_id(&b), first);
    assert_int_equal(entropy_pool_run_id(&b), second);
    /* another seed: other ids */
    wallclock++;
    struct entropy_pool c;
    gather(&c);
    assert_int_not_equal(entropy_pool_run_id(&c), first);
}

UNIT_MAIN_EACH(reset, NULL, NULL, NULL,
               test_estimate_credits_nothing_for_constant_or_stepping_readings,
               test_estimate_caps_wandering_readings_at_two_bits_each,
               test_no_hardware_and_constant_timings_is_weak_with_nothing_credited,
               test_no_hardware_and_varied_timings_is_credited_but_still_weak,
               test_working_hardware_is_strong_and_the_timings_are_mixed_in_as_well,
               test_a_working_generator_that_repeats_across_boots_still_gets_a_new_seed,
               test_a_generator_stuck_at_all_ones_is_refused_and_says_why,
               test_a_generator_stuck_at_all_zeros_is_refused_and_says_why,
               test_a_generator_that_repeats_a_value_is_refused_and_says_why,
               test_hardware_whose_carry_stays_clear_falls_back_on_timings,
               test_hardware_that_fails_a_few_times_is_retried_through,
               test_the_wall_clock_changes_the_seed_when_all_else_repeats, test_derive_keeps_domains_and_keys_apart,
               test_run_ids_differ_at_the_same_time_and_come_from_the_seed_alone)
