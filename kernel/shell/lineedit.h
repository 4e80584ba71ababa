/* kernel/shell/lineedit.h: the console line editor. It takes one input character at a time (from the serial port
 * or the keyboard), echoes through a sink, and hands back a finished line. It never overflows: a line longer
 * than LINE_MAX is refused as a whole when Enter comes, and the editor is ready for the next one. */
#ifndef KERNEL_SHELL_LINEEDIT_H
#define KERNEL_SHELL_LINEEDIT_H

#include <stdbool.h>
#include <stddef.h>
#include "kernel/lib/sink.h"

#define LINE_MAX 255

enum line_event {
    LINE_NONE,     /* character consumed, line not finished */
    LINE_READY,    /* Enter: the line is in editor->buf, NUL-terminated, length editor->len */
    LINE_TOO_LONG, /* Enter after more than LINE_MAX characters: the line was dropped */
    LINE_CANCEL,   /* Ctrl-C: the line was abandoned */
};

struct line_editor {
    char buf[LINE_MAX + 1];
    size_t len;
    bool overflow;     /* more than LINE_MAX characters were typed since the last Enter */
    bool last_was_cr;  /* a '\n' right after '\r' is the same Enter, not an empty line */
    bool delivered;    /* buf holds the line handed back at the last Enter; the next character starts anew */
};

void line_editor_init(struct line_editor *ed);

/* Handles: printable ASCII (appended, echoed), backspace 0x08 and DEL 0x7f (erase one, echo "\b \b"),
 * Ctrl-U 0x15 (erase the line on screen), Ctrl-C 0x03 (echo "^C\n", LINE_CANCEL), '\r' and '\n' (echo "\n",
 * LINE_READY or LINE_TOO_LONG). Anything else -- escape sequences, other control characters, bytes >= 0x80 --
 * is ignored. After LINE_READY the caller uses buf/len, and the next character starts a new line. */
enum line_event line_editor_feed(struct line_editor *ed, char c, struct sink *echo);

/* A line from elsewhere (text, len: a log line, its newline included or added) shown while the prompt waits:
 * writes "\r\033[K" (back to the start of the prompt's row and erase it), the text, then prompt and the line
 * typed so far, so the prompt stays the last line and typing goes on where it was. The cursor is always at the
 * end of the line (no cursor keys), so nothing moves it back into the line. */
void line_editor_redraw_above(const struct line_editor *ed, const char *prompt, const char *text, size_t len,
                              struct sink *out);

#endif
