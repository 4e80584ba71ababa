/* tests/unit/test_ansi.c: the console screens' control-sequence parser (kernel/lib/ansi.c) -- what each sequence
 * the kernel sends does (home, a position, erase below, the screen, the line), that every byte of any sequence
 * is swallowed and never printed, that text around sequences passes, and that garbage or a cut sequence never
 * leaves the parser swallowing text. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "kernel/lib/ansi.h"
#include "unit_main.h"

/* Feeds text; returns the bytes passed as text (in printed[]) and the last action that was not text or
 * swallowed (in *action, ANSI_TEXT when none), with its position. */
static const char *feed(struct ansi_parser *p, const char *text, enum ansi_action *action, unsigned *row,
                        unsigned *col)
{
    static char printed[256];
    size_t n = 0;
    *action = ANSI_TEXT;
    for (const char *c = text; *c; c++) {
        unsigned r = 99, k = 99;
        enum ansi_action a = ansi_feed(p, *c, &r, &k);
        if (a == ANSI_TEXT)
            printed[n++] = *c;
        else if (a != ANSI_SWALLOWED) {
            *action = a;
            *row = r;
            *col = k;
        }
    }
    printed[n] = 0;
    return printed;
}

static void test_what_each_sequence_does(void **state)
{
    (void)state;
    static const struct {
        const char *in;
        enum ansi_action action;
        unsigned row, col; /* for ANSI_MOVE */
    } cases[] = {
        { "\033[H", ANSI_MOVE, 0, 0 },        { "\033[5;12H", ANSI_MOVE, 4, 11 },
        { "\033[0;0H", ANSI_MOVE, 0, 0 },     { "\033[;7H", ANSI_MOVE, 0, 6 },
        { "\033[3f", ANSI_MOVE, 2, 0 },       { "\033[J", ANSI_ERASE_BELOW, 0, 0 },
        { "\033[0J", ANSI_ERASE_BELOW, 0, 0 }, { "\033[2J", ANSI_ERASE_SCREEN, 0, 0 },
        { "\033[K", ANSI_ERASE_LINE, 0, 0 },  { "\033[0K", ANSI_ERASE_LINE, 0, 0 },
        { "\033[1K", ANSI_TEXT, 0, 0 },       /* erase to the start: swallowed, not acted on */
        { "\033[?25l", ANSI_TEXT, 0, 0 },     /* hide the cursor (GRUB, OVMF): swallowed */
        { "\033[31m", ANSI_TEXT, 0, 0 },      /* a colour: swallowed */
        { "\0337", ANSI_TEXT, 0, 0 },         /* not a CSI: ESC and its byte swallowed */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        struct ansi_parser p;
        ansi_init(&p);
        enum ansi_action a;
        unsigned row = 0, col = 0;
        assert_string_equal(feed(&p, cases[i].in, &a, &row, &col), "");
        assert_int_equal(a, cases[i].action);
        if (a == ANSI_MOVE) {
            assert_int_equal(row, cases[i].row);
            assert_int_equal(col, cases[i].col);
        }
    }
}

/* Text around sequences passes whole; a redraw's bytes leave only the text. */
static void test_text_around_sequences(void **state)
{
    (void)state;
    struct ansi_parser p;
    ansi_init(&p);
    enum ansi_action a;
    unsigned row, col;
    assert_string_equal(feed(&p, "\r\033[Knet: up\n> upti", &a, &row, &col), "\rnet: up\n> upti");
    assert_int_equal(a, ANSI_ERASE_LINE);
    assert_string_equal(feed(&p, "\033[H\033[Jtop 1/5\n\033[1;31mhot\033[0m", &a, &row, &col), "top 1/5\nhot");
}

/* A sequence cut by a control byte or garbage ends there: the parser is back to text, never stuck; a huge
 * parameter saturates instead of wrapping. */
static void test_cut_and_garbage(void **state)
{
    (void)state;
    struct ansi_parser p;
    ansi_init(&p);
    enum ansi_action a;
    unsigned row = 0, col = 0;
    assert_string_equal(feed(&p, "\033[12\nok", &a, &row, &col), "ok");
    assert_string_equal(feed(&p, "\033[99999999999999;1H", &a, &row, &col), "");
    assert_int_equal(a, ANSI_MOVE);
    assert_int_equal(row, 999);
    assert_string_equal(feed(&p, "\033[1;2;3;4;5;6H", &a, &row, &col), "");
    assert_int_equal(a, ANSI_MOVE);
    assert_string_equal(feed(&p, "after", &a, &row, &col), "after");
}

UNIT_MAIN(NULL, NULL, test_what_each_sequence_does, test_text_around_sequences, test_cut_and_garbage)
