/* tests/unit/test_http_closing.c: kernel/httpd/http_closing.c -- the table of closed connections: a close is
 * remembered in its pcb's old entry, a free one or the oldest's; it is reset only once HTTP_CLOSING_NS have passed
 * and only while lwIP still holds it closing; it is forgotten the moment it is not; and when the next is due. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "kernel/httpd/http_closing.h"
#include "unit_main.h"

#define S 1000000000ll
#define PEER 0x0a000242u

static char pcbs[HTTP_CLOSING_MAX + 2]; /* stand-ins: only their addresses are compared */

static unsigned used(const struct http_closing *t)
{
    unsigned n = 0;
    for (unsigned i = 0; i < HTTP_CLOSING_MAX; i++)
        n += t->entries[i].pcb != NULL;
    return n;
}

static const struct http_closing_entry *entry_of(const struct http_closing *t, const void *pcb)
{
    for (unsigned i = 0; i < HTTP_CLOSING_MAX; i++)
        if (t->entries[i].pcb == pcb)
            return &t->entries[i];
    return NULL;
}

static void test_a_close_is_remembered_with_its_peer(void **state)
{
    (void)state;
    struct http_closing t = { 0 };
    http_closing_remember(&t, &pcbs[0], PEER, 40000, 5 * S);
    const struct http_closing_entry *e = entry_of(&t, &pcbs[0]);
    assert_non_null(e);
    assert_int_equal(e->peer_ip, PEER);
    assert_int_equal(e->peer_port, 40000);
    assert_int_equal(e->closed_ns, 5 * S);
    assert_int_equal(used(&t), 1);
}

static void test_a_reused_pcb_takes_its_old_entry(void **state)
{
    (void)state;
    struct http_closing t = { 0 };
    http_closing_remember(&t, &pcbs[0], PEER, 40000, 1 * S);
    http_closing_remember(&t, &pcbs[1], PEER, 40001, 2 * S);
    http_closing_remember(&t, &pcbs[0], PEER, 40002, 3 * S);
    assert_int_equal(used(&t), 2);
    assert_int_equal(entry_of(&t, &pcbs[0])->peer_port, 40002);
    assert_int_equal(entry_of(&t, &pcbs[0])->closed_ns, 3 * S);
}

static void test_a_full_table_gives_up_its_oldest_close(void **state)
{
    (void)state;
    struct http_closing t = { 0 };
    for (unsigned i = 0; i < HTTP_CLOSING_MAX; i++)  /* the oldest lands in the middle of the table */
        http_closing_remember(&t, &pcbs[i], PEER, (uint16_t)(40000 + i), (int64_t)((i + 5) % HTTP_CLOSING_MAX + 1) * S);
    const void *oldest = &pcbs[3]; /* (3 + 5) % 8 + 1 = 1 s */
    http_closing_remember(&t, &pcbs[HTTP_CLOSING_MAX], PEER, 41000, 20 * S);
    assert_int_equal(used(&t), HTTP_CLOSING_MAX);
    assert_null(entry_of(&t, oldest));
    assert_non_null(entry_of(&t, &pcbs[HTTP_CLOSING_MAX]));
}

static void test_reset_only_when_still_closing_after_the_delay(void **state)
{
    (void)state;
    struct http_closing_entry e = { &pcbs[0], PEER, 40000, 10 * S };
    assert_int_equal(http_closing_judge(&e, true, 10 * S), HTTP_CLOSING_WAIT);
    assert_int_equal(http_closing_judge(&e, true, 10 * S + HTTP_CLOSING_NS - 1), HTTP_CLOSING_WAIT);
    assert_int_equal(http_closing_judge(&e, true, 10 * S + HTTP_CLOSING_NS), HTTP_CLOSING_RESET);
    assert_int_equal(http_closing_judge(&e, true, 1000 * S), HTTP_CLOSING_RESET);
}

static void test_forgotten_as_soon_as_lwip_is_done(void **state)
{
    (void)state;
    struct http_closing_entry e = { &pcbs[0], PEER, 40000, 10 * S };
    assert_int_equal(http_closing_judge(&e, false, 10 * S), HTTP_CLOSING_FORGET);
    assert_int_equal(http_closing_judge(&e, false, 10 * S + HTTP_CLOSING_NS), HTTP_CLOSING_FORGET);
}

static void test_an_unused_entry_is_left_alone(void **state)
{
    (void)state;
    struct http_closing_entry e = { 0 };
    assert_int_equal(http_closing_judge(&e, true, 1000 * S), HTTP_CLOSING_WAIT);
    assert_int_equal(http_closing_judge(&e, false, 1000 * S), HTTP_CLOSING_WAIT);
}

static void test_the_reset_delay_is_seconds(void **state)
{
    (void)state;
    /* long enough for a client that acknowledges the FIN at all, short against lwIP's minutes of retransmitting */
    assert_true(HTTP_CLOSING_NS >= 1 * S && HTTP_CLOSING_NS <= 5 * S);
}

static void test_next_due_is_the_earliest_close_plus_the_delay(void **state)
{
    (void)state;
    struct http_closing t = { 0 };
    assert_int_equal(http_closing_next_due(&t), 0);
    http_closing_remember(&t, &pcbs[0], PEER, 40000, 7 * S);
    http_closing_remember(&t, &pcbs[1], PEER, 40001, 4 * S);
    http_closing_remember(&t, &pcbs[2], PEER, 40002, 9 * S);
    assert_int_equal(http_closing_next_due(&t), 4 * S + HTTP_CLOSING_NS + 1);
}

UNIT_MAIN(NULL, NULL,
          test_a_close_is_remembered_with_its_peer, test_a_reused_pcb_takes_its_old_entry,
          test_a_full_table_gives_up_its_oldest_close, test_reset_only_when_still_closing_after_the_delay,
          test_forgotten_as_soon_as_lwip_is_done, test_an_unused_entry_is_left_alone, test_the_reset_delay_is_seconds,
          test_next_due_is_the_earliest_close_plus_the_delay)
