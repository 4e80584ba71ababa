/* tests/unit/test_http_token.c: kernel/httpd/http_token.c -- the bearer token against vectors Python's hmac
 * module computed (hmac.new(key, b"kprof pprof.http bearer v1", hashlib.sha256).hexdigest()), and its check
 * taking exactly the token. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "kernel/httpd/http_token.h"
#include "unit_main.h"

static void test_the_token_matches_python(void **state)
{
    (void)state;
    const uint8_t key16[16] = { 0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77,
                                0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff };
    char token[HTTP_TOKEN_HEX + 1];
    http_token_derive(key16, sizeof key16, token);
    assert_string_equal(token, "050dd94326c1fd9a53beee2007147a0a4488733bf7082375cf3882df805c9234");
    uint8_t key64[64];
    for (int i = 0; i < 64; i++)
        key64[i] = (uint8_t)i;
    http_token_derive(key64, sizeof key64, token);
    assert_string_equal(token, "c12e64041264793e5b07ee441ca0490ce2d266ca7b4cb7ed3f7d260f1cae30c0");
}

static void test_only_the_token_matches(void **state)
{
    (void)state;
    const char *t = "050dd94326c1fd9a53beee2007147a0a4488733bf7082375cf3882df805c9234";
    assert_true(http_token_matches(t, t));
    assert_false(http_token_matches(t, "050DD94326C1FD9A53BEEE2007147A0A4488733BF7082375CF3882DF805C9234"));
    assert_false(http_token_matches(t, "050dd94326c1fd9a53beee2007147a0a4488733bf7082375cf3882df805c9235"));
    assert_false(http_token_matches(t, "050dd94326c1fd9a53beee2007147a0a4488733bf7082375cf3882df805c923"));
    assert_false(http_token_matches(t, "050dd94326c1fd9a53beee2007147a0a4488733bf7082375cf3882df805c92345"));
    assert_false(http_token_matches(t, ""));
}

UNIT_MAIN(NULL, NULL,
          test_the_token_matches_python, test_only_the_token_matches)
