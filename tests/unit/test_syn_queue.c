/* tests/unit/test_syn_queue.c: kernel/net/syn_queue.c -- which half-open connection a SYN to a full listener
 * evicts: none while the backlog and lwIP's pool have room, never one that is not half-open for that listener, the
 * quietest of the rest, and on a tie the one lwIP made first (later in its list). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "kernel/net/syn_queue.h"
#include "unit_main.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static void test_nothing_is_evicted_while_the_backlog_has_room(void **state)
{
    (void)state;
    const struct syn_queue_pcb pcbs[] = { { true, 40 }, { true, 30 }, { true, 20 } };
    assert_int_equal(syn_queue_victim(pcbs, N(pcbs), 3, 4, false), -1);
    assert_int_equal(syn_queue_victim(pcbs, N(pcbs), 0, 4, false), -1);
}

static void test_the_quietest_half_open_connection_goes(void **state)
{
    (void)state;
    const struct syn_queue_pcb pcbs[] = { { true, 2 }, { true, 39 }, { true, 7 }, { true, 11 } };
    assert_int_equal(syn_queue_victim(pcbs, N(pcbs), 4, 4, false), 1);
    assert_int_equal(syn_queue_victim(pcbs, N(pcbs), 5, 4, false), 1);
}

static void test_connections_that_are_not_half_open_are_never_taken(void **state)
{
    (void)state;
    /* established, closing, another listener's: older than every half-open one, and still not taken */
    const struct syn_queue_pcb pcbs[] = { { false, 900 }, { true, 3 }, { false, 800 }, { true, 5 }, { false, 700 } };
    assert_int_equal(syn_queue_victim(pcbs, N(pcbs), 4, 4, false), 3);
}

static void test_no_half_open_connection_means_no_victim(void **state)
{
    (void)state;
    const struct syn_queue_pcb pcbs[] = { { false, 900 }, { false, 1 } };
    assert_int_equal(syn_queue_victim(pcbs, N(pcbs), 4, 4, false), -1);
    assert_int_equal(syn_queue_victim(NULL, 0, 4, 4, false), -1);
}

static void test_a_full_pool_evicts_even_with_room_in_the_backlog(void **state)
{
    (void)state;
    /* two forged half-open connections and six parked closes hold all eight of lwIP's pcbs */
    const struct syn_queue_pcb pcbs[] = { { true, 9 }, { false, 50 }, { false, 50 }, { true, 12 }, { false, 50 },
                                          { false, 50 }, { false, 50 }, { false, 50 } };
    assert_int_equal(syn_queue_victim(pcbs, N(pcbs), 2, 4, false), -1);
    assert_int_equal(syn_queue_victim(pcbs, N(pcbs), 2, 4, true), 3);
    const struct syn_queue_pcb closing_only[] = { { false, 50 }, { false, 40 } };
    assert_int_equal(syn_queue_victim(closing_only, N(closing_only), 0, 4, true), -1);
}

static void test_a_tie_takes_the_one_made_first(void **state)
{
    (void)state;
    /* four forged SYNs within one slow-timer tick: lwIP put each new one at the head, so the last is the first */
    const struct syn_queue_pcb pcbs[] = { { true, 6 }, { true, 6 }, { false, 6 }, { true, 6 }, { true, 6 } };
    assert_int_equal(syn_queue_victim(pcbs, N(pcbs), 4, 4, false), 4);
}

UNIT_MAIN(NULL, NULL,
          test_nothing_is_evicted_while_the_backlog_has_room, test_the_quietest_half_open_connection_goes,
          test_connections_that_are_not_half_open_are_never_taken, test_no_half_open_connection_means_no_victim,
          test_a_full_pool_evicts_even_with_room_in_the_backlog, test_a_tie_takes_the_one_made_first)
