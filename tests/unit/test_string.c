/* tests/unit/test_string.c: kernel/lib/string.c's strlcpy, the one function of kernel/lib/string.h that the host
 * C library (glibc before 2.38) does not supply; the other names are libc's in a host build. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "kernel/lib/string.h"
#include "unit_main.h"

static void test_strlcpy_fits(void **state)
{
    (void)state;
    char dst[8];
    memset(dst, 'X', sizeof dst);
    assert_int_equal(strlcpy(dst, "abc", sizeof dst), 3);
    assert_memory_equal(dst, "abc\0XXXX", 8);
}

static void test_strlcpy_exactly_full(void **state)
{
    (void)state;
    char dst[4];
    assert_int_equal(strlcpy(dst, "abc", sizeof dst), 3);
    assert_string_equal(dst, "abc");
}

static void test_strlcpy_truncates_and_reports_source_length(void **state)
{
    (void)state;
    char dst[8];
    memset(dst, 'X', sizeof dst);
    assert_int_equal(strlcpy(dst, "abcd", 4), 4);
    assert_memory_equal(dst, "abc\0XXXX", 8);

    assert_int_equal(strlcpy(dst, "a much longer source", sizeof dst), 20);
    assert_string_equal(dst, "a much ");
}

static void test_strlcpy_size_one_and_zero(void **state)
{
    (void)state;
    char dst[2] = { 'X', 'Y' };
    assert_int_equal(strlcpy(dst, "abc", 1), 3);
    assert_int_equal(dst[0], '\0');
    assert_int_equal(dst[1], 'Y');

    /* Size 0 writes nothing at all, so dst may even be NULL; it still measures the source. */
    assert_int_equal(strlcpy(NULL, "hello", 0), 5);
    dst[0] = 'X';
    assert_int_equal(strlcpy(dst, "hello", 0), 5);
    assert_int_equal(dst[0], 'X');
}

static void test_strlcpy_empty_source(void **state)
{
    (void)state;
    char dst[4] = { 'X', 'X', 'X', 'X' };
    assert_int_equal(strlcpy(dst, "", sizeof dst), 0);
    assert_memory_equal(dst, "\0XXX", 4);
}

/* Exact-size heap blocks: AddressSanitizer (in the san build) reports any byte read or written outside. */
static void test_strlcpy_stays_inside_both_buffers(void **state)
{
    (void)state;
    char *src = malloc(6);
    char *dst = malloc(3);
    assert_non_null(src);
    assert_non_null(dst);
    memcpy(src, "hello", 6);
    assert_int_equal(strlcpy(dst, src, 3), 5);
    assert_string_equal(dst, "he");
    free(src);
    free(dst);
}

UNIT_MAIN(NULL, NULL,
          test_strlcpy_fits, test_strlcpy_exactly_full, test_strlcpy_truncates_and_reports_source_length,
          test_strlcpy_size_one_and_zero, test_strlcpy_empty_source, test_strlcpy_stays_inside_both_buffers)
