/* tests/unit/test_keyed_cmdline.c: a command line that names udpsh.key= and could not be taken whole (over 511
 * characters, or over 16 words) -- with the key in the part cut or the part taken -- makes every keyed service
 * refuse everything, as a key that does not parse does: udpsh.key= as they read it (keyed_key_from_cmdline,
 * the HTTP server's), the set-up the UDP shell and the debugger draw (keyed_boot_draw), the shell's admission
 * refusing a request MAC'd under the key that was written, and the debugger taking no datagram, with its one
 * warning. A cut line that does not name the key, or a word only like it, changes nothing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "fake_hal.h"
#include "fake_kernel.h"
#include "gdbstub/udp_auth.h"
#include "kernel/cmdline.h"
#include "kernel/lib/sink.h"
#include "kernel/net/boot_secret.h"
#include "udpsh_requests.h"
#include "unit_main.h"

#define KEY_HEX "000102030405060708090a0b0c0d0e0f"
#define CUT_ERROR "named on a command line over 511 characters or 16 words, not taken whole"
#define IP 0x0a000202u
#define PORT 40000
#define NOW (3 * UDPSH_TOKEN_WINDOW_NS)

static char line[2048];
static char report[1024];

static void parse(const char *text)
{
    struct buffer_sink bs;
    buffer_sink_init(&bs, report, sizeof report);
    cmdline_parse(text, &bs.sink);
}

/* "udpsh.rate=" with a value of filler characters past character 511, the key before or after it. */
static const char *over_long(bool key_first)
{
    char filler[600];
    memset(filler, '7', sizeof filler - 1);
    filler[sizeof filler - 1] = 0;
    snprintf(line, sizeof line, key_first ? "udpsh.key=" KEY_HEX " udpsh.rate=%s" : "udpsh.rate=%s udpsh.key=" KEY_HEX,
             filler);
    assert_true(strlen(line) > CMDLINE_MAX);
    return line;
}

/* 16 words, then the key as the 17th (or the key first and 16 more). */
static const char *too_many_words(bool key_first)
{
    line[0] = 0;
    if (key_first)
        strcat(line, "udpsh.key=" KEY_HEX " ");
    for (int i = 0; i < CMDLINE_MAX_OPTIONS; i++)
        strcat(line, "quiet ");
    if (!key_first)
        strcat(line, "udpsh.key=" KEY_HEX);
    assert_true(strlen(line) < CMDLINE_MAX);
    return line;
}

/* The UDP shell's admission set up as kernel/udpsh/udpsh.c sets it up from keyed_boot_draw. */
static struct udpsh_auth shell;

static void shell_from_boot(const struct keyed_boot *boot)
{
    udpsh_auth_init(&shell, boot->secret, boot->key_len ? boot->key : 0, boot->key_len);
    shell.key_refused = boot->key_refused;
}

/* A request MAC'd as a client with the written key makes it, and a reading one without a MAC: both refused. */
static void assert_shell_refuses(const char *request_line)
{
    static const uint8_t key[16] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15 };
    char datagram[700];
    struct udpsh_judgement j;
    udpsh_keyed_datagram(&shell, key, sizeof key, IP, PORT, NOW / UDPSH_TOKEN_WINDOW_NS, 1, request_line, datagram,
                         sizeof datagram);
    udpsh_auth_judge(&shell, IP, PORT, (const uint8_t *)datagram, strlen(datagram), NOW, NULL, &j);
    assert_int_equal(j.verdict, UDPSH_REPLY);
    assert_string_equal(j.reply, UDPSH_REPLY_KEY_REFUSED);
    char tok[UDPSH_TOKEN_HEX + 1];
    udpsh_token_hex(&shell, IP, PORT + 1, NOW / UDPSH_TOKEN_WINDOW_NS, tok);
    snprintf(datagram, sizeof datagram, "token=%s %s", tok, request_line);
    udpsh_auth_judge(&shell, IP, PORT + 1, (const uint8_t *)datagram, strlen(datagram), NOW, NULL, &j);
    assert_int_equal(j.verdict, UDPSH_REPLY);
    assert_string_equal(j.reply, UDPSH_REPLY_KEY_REFUSED);
}

static void assert_every_keyed_service_refuses(const char *text)
{
    parse(text);
    /* the HTTP server's reading: refused, and why (it logs "httpd: udpsh.key: <why>: server off") */
    uint8_t key[KEYED_KEY_MAX_BYTES];
    size_t key_len = 99;
    char error[KEYED_KEY_ERROR_MAX];
    assert_false(keyed_key_from_cmdline(key, &key_len, error, sizeof error));
    assert_int_equal(key_len, 0);
    assert_string_equal(error, CUT_ERROR);
    /* the shell's and the debugger's set-up */
    struct keyed_boot boot;
    keyed_boot_draw("", &boot);
    assert_true(boot.key_refused);
    assert_int_equal(boot.key_len, 0);
    assert_string_equal(boot.key_error, CUT_ERROR);
    shell_from_boot(&boot);
    static const char *const lines[] = { "help", "uptime", "poweroff", "netload send 10.0.2.2 9 1" };
    for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++)
        assert_shell_refuses(lines[i]);
}

static void test_an_over_long_keyed_command_line_refuses_every_keyed_request(void **state)
{
    (void)state;
    assert_every_keyed_service_refuses(over_long(false)); /* the key past character 511 */
    assert_every_keyed_service_refuses(over_long(true));  /* the key within the first 511: all of it ignored too */
}

static void test_a_keyed_command_line_of_too_many_words_refuses_every_keyed_request(void **state)
{
    (void)state;
    assert_every_keyed_service_refuses(too_many_words(false)); /* the key the 17th word: cut */
    assert_every_keyed_service_refuses(too_many_words(true));  /* taken, but from a line not taken whole */
    assert_string_equal(cmdline_get("udpsh.key"), KEY_HEX);
}

static void test_the_debugger_takes_no_datagram_from_a_cut_keyed_command_line(void **state)
{
    (void)state;
    parse(too_many_words(false));
    boot_secret_run_id(); /* the pool gathered, its entropy line said: what follows is the debugger's alone */
    fake_log_reset();
    gdb_udp_auth_start();
    assert_int_equal(fake_log_lines, 1);
    assert_string_equal(fake_log_text, "warning: gdb: udpsh.key: " CUT_ERROR "; the UDP debugger takes no datagram "
                                       "(fix the key)\n");
    const uint8_t *inner = NULL;
    size_t inner_len = 0;
    static const uint8_t datagram[] = "$qSupported#37";
    assert_int_equal(gdb_udp_open(IP, PORT, datagram, sizeof datagram - 1, &inner, &inner_len), GDB_UDP_DROP);
    char out[256];
    struct buffer_sink bs;
    buffer_sink_init(&bs, out, sizeof out);
    gdb_udp_auth_report(&bs.sink);
    assert_string_equal(out, "gdb udp auth: refusing every datagram (udpsh.key= cannot be used)\n");
}

static void test_a_cut_command_line_without_the_key_or_a_whole_keyed_one_changes_nothing(void **state)
{
    (void)state;
    uint8_t key[KEYED_KEY_MAX_BYTES];
    size_t key_len = 99;
    char error[KEYED_KEY_ERROR_MAX];
    /* cut, no key: unkeyed as before */
    char text[700];
    memset(text, 'x', 600);
    memcpy(text, "udpsh.rate=", 11);
    text[600] = 0;
    parse(text);
    assert_true(keyed_key_from_cmdline(key, &key_len, error, sizeof error));
    assert_int_equal(key_len, 0);
    /* cut (16 words and these), with words only like the key's: a longer key, a prefix, the key in a value */
    strcpy(text, too_many_words(false));
    strcpy(strrchr(text, ' ') + 1, "udpsh.keyx=" KEY_HEX " xudpsh.key=1 gdb.udp.insecure=udpsh.key=" KEY_HEX);
    parse(text);
    assert_false(cmdline_cut_names("udpsh.key"));
    assert_true(keyed_key_from_cmdline(key, &key_len, error, sizeof error));
    assert_int_equal(key_len, 0);
    /* whole and keyed: the key */
    parse("quiet udpsh.key=" KEY_HEX " udpsh.port=4444");
    assert_true(keyed_key_from_cmdline(key, &key_len, error, sizeof error));
    assert_int_equal(key_len, 16);
    struct keyed_boot boot;
    keyed_boot_draw("", &boot);
    assert_false(boot.key_refused);
    assert_int_equal(boot.key_len, 16);
}

UNIT_MAIN(NULL, NULL, test_an_over_long_keyed_command_line_refuses_every_keyed_request,
          test_a_keyed_command_line_of_too_many_words_refuses_every_keyed_request,
          test_the_debugger_takes_no_datagram_from_a_cut_keyed_command_line,
          test_a_cut_command_line_without_the_key_or_a_whole_keyed_one_changes_nothing)
