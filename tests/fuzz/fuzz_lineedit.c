/* tests/fuzz/fuzz_lineedit.c: the console line editor (kernel/shell/lineedit.c) fed arbitrary console bytes --
 * escape sequences, control characters, bytes >= 0x80, lines far past LINE_MAX. Its echo is played on a
 * model terminal, and after every byte what the terminal shows up to its cursor is the line the editor
 * holds; the line stays within buf, NUL-terminated and printable; a delivered line is what was on screen
 * when Enter came. */
#include <stdbool.h>
#include <string.h>

#include "fuzz.h"
#include "kernel/shell/lineedit.h"
#include "kernel/lib/sink.h"

/* The terminal: one line of screen, a cursor; '\b' moves left, '\n' starts a new line. */
static struct {
    char cells[LINE_MAX + 8];
    size_t cursor;
    char last_line[LINE_MAX + 8]; /* the line ended by the last '\n', up to the cursor */
    size_t last_len;
} term;

static void term_write(struct sink *sink, const char *text, size_t len)
{
    (void)sink;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)text[i];
        if (c == '\b') {
            CHECK(term.cursor > 0);
            term.cursor--;
        } else if (c == '\n') {
            memcpy(term.last_line, term.cells, term.cursor);
            term.last_len = term.cursor;
            term.cursor = 0;
        } else {
            CHECK(c >= 0x20 && c < 0x7f); /* nothing else reaches the terminal */
            CHECK(term.cursor < sizeof term.cells);
            term.cells[term.cursor++] = (char)c;
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct line_editor ed;
    struct sink echo = { .write = term_write };
    memset(&term, 0, sizeof term);
    memset(&ed, 0x5a, sizeof ed);
    line_editor_init(&ed);

    for (size_t i = 0; i < size; i++) {
        enum line_event ev = line_editor_feed(&ed, (char)data[i], &echo);
        CHECK(ed.len <= LINE_MAX);
        CHECK(ed.buf[ed.len] == '\0' && strlen(ed.buf) == ed.len);
        for (size_t k = 0; k < ed.len; k++)
            CHECK(ed.buf[k] >= 0x20 && ed.buf[k] < 0x7f);
        switch (ev) {
        case LINE_READY:
            CHECK(data[i] == '\r' || data[i] == '\n');
            CHECK(ed.delivered && term.cursor == 0);
            CHECK(term.last_len == ed.len && memcmp(term.last_line, ed.buf, ed.len) == 0);
            break;
        case LINE_TOO_LONG:
            CHECK(data[i] == '\r' || data[i] == '\n');
            CHECK(ed.len == 0 && term.cursor == 0);
            break;
        case LINE_CANCEL:
            CHECK(data[i] == 0x03 && ed.len == 0 && term.cursor == 0);
            CHECK(term.last_len >= 2 && memcmp(term.last_line + term.last_len - 2, "^C", 2) == 0);
            break;
        case LINE_NONE:
            break;
        default:
            CHECK(!"an event line_editor_feed does not declare");
        }
        /* While a line is being typed, the screen up to the cursor is that line. */
        if (!ed.delivered) {
            CHECK(term.cursor == ed.len);
            CHECK(memcmp(term.cells, ed.buf, ed.len) == 0);
        }
    }
    return 0;
}
