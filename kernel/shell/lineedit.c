/* kernel/shell/lineedit.c: the console line editor (kernel/shell/lineedit.h). It owns one line being typed: it stores
 * and echoes printable characters, performs erase, kill-line and cancel, and decides on Enter whether the line is
 * delivered or refused as too long. It never writes past buf, whatever arrives. It also draws a line that
 * arrived from elsewhere (a log line) above the prompt and the line being typed, as line editors do. */
#include <stdbool.h>
#include <stddef.h>

#include "kernel/shell/lineedit.h"
#include "kernel/lib/sink.h"

#define KEY_CTRL_C 0x03
#define KEY_BACKSPACE 0x08
#define KEY_CTRL_U 0x15
#define KEY_DELETE 0x7f

static void start_new_line(struct line_editor *ed)
{
    ed->len = 0;
    ed->overflow = false;
    ed->delivered = false;
    ed->buf[0] = '\0';
}

static void erase_last_char(struct line_editor *ed, struct sink *echo)
{
    ed->len--;
    ed->buf[ed->len] = '\0';
    sink_write(echo, "\b \b", 3);
}

void line_editor_init(struct line_editor *ed)
{
    start_new_line(ed);
    ed->last_was_cr = false;
}

enum line_event line_editor_feed(struct line_editor *ed, char c, struct sink *echo)
{
    unsigned char byte = (unsigned char)c;

    /* A terminal sending CRLF for Enter must not produce an extra empty line. The '\n' belongs to the Enter
     * that already delivered the line, so it leaves that line as it is. */
    bool after_cr = ed->last_was_cr;
    ed->last_was_cr = false;
    if (after_cr && byte == '\n')
        return LINE_NONE;

    /* The line handed back at the last Enter stays intact until the next character: the caller reads it. */
    if (ed->delivered)
        start_new_line(ed);

    switch (byte) {
    case '\r':
    case '\n':
        ed->last_was_cr = byte == '\r';
        sink_write(echo, "\n", 1);
        if (ed->overflow) {
            start_new_line(ed);
            return LINE_TOO_LONG;
        }
        ed->delivered = true;
        return LINE_READY;

    case KEY_CTRL_C:
        sink_write(echo, "^C\n", 3);
        start_new_line(ed);
        return LINE_CANCEL;

    case KEY_BACKSPACE:
    case KEY_DELETE:
        /* The overflow stays: characters beyond LINE_MAX were typed but never shown or stored, so erasing
         * visible ones cannot make the line the user typed short enough to run. */
        if (ed->len > 0)
            erase_last_char(ed, echo);
        return LINE_NONE;

    case KEY_CTRL_U:
        while (ed->len > 0)
            erase_last_char(ed, echo);
        /* Unlike backspace, this discards everything typed, hidden characters included, so the refusal goes
         * with it. */
        ed->overflow = false;
        return LINE_NONE;

    default:
        break;
    }

    if (byte < 0x20 || byte >= 0x7f)
        return LINE_NONE; /* escape sequences, other control characters, non-ASCII */

    if (ed->len >= LINE_MAX) {
        ed->overflow = true;
        return LINE_NONE;
    }
    ed->buf[ed->len++] = c;
    ed->buf[ed->len] = '\0';
    sink_write(echo, &c, 1);
    return LINE_NONE;
}

/* The cursor is always at the end of the line (the editor has no cursor keys), so the prompt's row is left by
 * a carriage return and erased to its end; the log line takes that row, and the prompt and the line typed so
 * far are drawn after it as they were. A line just delivered is not shown: the shell is past it. */
void line_editor_redraw_above(const struct line_editor *ed, const char *prompt, const char *text, size_t len,
                              struct sink *out)
{
    sink_write(out, "\r\033[K", 4);
    if (len > 0) {
        sink_write(out, text, len);
        if (text[len - 1] != '\n')
            sink_write(out, "\n", 1);
    }
    sink_puts(out, prompt);
    if (!ed->delivered && ed->len > 0)
        sink_write(out, ed->buf, ed->len);
}
