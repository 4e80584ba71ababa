/* tests/unit/test_boot_secret.c: the boot's entropy line (kernel/net/boot_secret.c) over fake_hal's generator
 * stuck at all ones with the carry set (the AMD parts after a resume): the generator is refused, the boot log
 * says so and why in one warning line, and a keyed `net` says the secret is weak. One pool a process, as one a
 * boot: the pool is gathered at the first draw. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "fake_hal.h"
#include "fake_kernel.h"
#include "kernel/cmdline.h"
#include "kernel/lib/sink.h"
#include "kernel/net/boot_secret.h"
#include "unit_main.h"

static void test_a_generator_stuck_at_all_ones_is_refused_with_one_warning_line(void **state)
{
    (void)state;
    static const uint64_t all_ones[] = { 0xffffffffffffffffull };
    fake_entropy_present = true;
    fake_entropy_script = all_ones;
    fake_entropy_script_len = 1;
    char report[256];
    struct buffer_sink bs;
    buffer_sink_init(&bs, report, sizeof report);
    assert_int_equal(cmdline_parse("udpsh.key=000102030405060708090a0b0c0d0e0f", &bs.sink), 0);
    fake_log_reset();

    struct keyed_boot boot;
    keyed_boot_draw("", &boot);
    assert_int_equal(boot.key_len, 16);
    assert_int_equal(fake_entropy_reads, 1); /* refused at its first value */
    assert_int_equal(fake_log_lines, 1);
    unsigned bits = 0;
    char rest[64] = "";
    int got = sscanf(fake_log_text,
                     "warning: entropy: RDRAND/RDSEED refused: it returned all ones; the boot secret comes from "
                     "timing, about %u bits: %63[^\n]", &bits, rest);
    assert_int_equal(got, 2);
    assert_string_equal(rest, "weak");
    assert_true(bits > 0); /* the fake's wandering timings, credited */

    /* one pool a boot: a second service's draw says nothing more and reads the generator no more */
    keyed_boot_draw("gdb", &boot);
    assert_int_equal(fake_log_lines, 1);
    assert_int_equal(fake_entropy_reads, 1);

    /* keyed, `net` and `lscpu` say why as well */
    char note[256], expected[256];
    buffer_sink_init(&bs, note, sizeof note);
    boot_secret_note(&bs.sink);
    snprintf(expected, sizeof expected,
             "secret: keyed, but the boot secret is weak (RDRAND/RDSEED refused: it returned all ones; about %u bits "
             "from timing)\n", bits);
    assert_string_equal(note, expected);
}

UNIT_MAIN(NULL, NULL, test_a_generator_stuck_at_all_ones_is_refused_with_one_warning_line)
