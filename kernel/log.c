/* kernel/log.c: log_info and log_warn (kernel/log.h) -- one formatted line each, written to the console in one
 * piece, above the shell's prompt when one waits (console_write_log). */
#include "kernel/log.h"

#include <stdarg.h>

#include "kernel/console.h"
#include "kernel/lib/format.h"

/* One line, formatted first and written in one piece, so boot messages from several CPUs stay whole. */
static void log_line(const char *prefix, const char *fmt, va_list ap)
{
    char line[256];
    size_t len = ksnprintf(line, sizeof line, "%s", prefix);
    if (len < sizeof line)
        len += kvsnprintf(line + len, sizeof line - len, fmt, ap);
    if (len > sizeof line - 2)
        len = sizeof line - 2;
    line[len++] = '\n';
    console_write_log(line, len);
}

void log_info(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    log_line("", fmt, ap);
    va_end(ap);
}

void log_warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    log_line("warning: ", fmt, ap);
    va_end(ap);
}
