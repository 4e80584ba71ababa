/* tests/unit/test_net_report.c: the services' `net` lines (kernel/net/net_report.c): printed in rank order
 * whatever order the services started in, ties in the order they were added, one entry added twice printed
 * once, and the reader's trust handed to every report. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "kernel/lib/sink.h"
#include "kernel/net/net_report.h"
#include "unit_main.h"

static void shell_lines(struct sink *out, bool trusted)
{
    sink_printf(out, "shell%s\n", trusted ? "+" : "");
}

static void http_lines(struct sink *out, bool trusted)
{
    sink_printf(out, "http%s\n", trusted ? "+" : "");
}

static void secret_lines(struct sink *out, bool trusted)
{
    (void)trusted;
    sink_puts(out, "secret\n");
}

static void debugger_lines(struct sink *out, bool trusted)
{
    sink_printf(out, "gdb peer %s\n", trusted ? "10.0.2.2:1234" : "hidden");
}

static void debugger_second_lines(struct sink *out, bool trusted)
{
    (void)trusted;
    sink_puts(out, "gdb frames\n");
}

static const char *printed(bool trusted)
{
    static char text[512];
    struct buffer_sink bs;
    buffer_sink_init(&bs, text, sizeof text);
    net_report_print(&bs.sink, trusted);
    return text;
}

/* One test: the list is the kernel's one static list, so the steps build on each other in order. */
static void test_reports_print_by_rank_once_each_with_the_readers_trust(void **state)
{
    (void)state;
    static struct net_report debugger = { debugger_lines, NET_REPORT_DEBUGGER, NULL };
    static struct net_report debugger_second = { debugger_second_lines, NET_REPORT_DEBUGGER, NULL };
    static struct net_report shell = { shell_lines, NET_REPORT_SHELL, NULL };
    static struct net_report secret = { secret_lines, NET_REPORT_SECRET, NULL };
    static struct net_report http = { http_lines, NET_REPORT_HTTP, NULL };

    assert_string_equal(printed(true), "");
    /* the kernel starts the debugger's transport (net_init) before the shell and the server */
    net_report_add(&debugger);
    net_report_add(&shell);
    net_report_add(&debugger_second);
    net_report_add(&secret);
    net_report_add(&http);
    assert_string_equal(printed(true), "shell+\nhttp+\nsecret\ngdb peer 10.0.2.2:1234\ngdb frames\n");
    assert_string_equal(printed(false), "shell\nhttp\nsecret\ngdb peer hidden\ngdb frames\n");
    /* a service whose init runs twice (or two keyed services drawing the secret) adds nothing new */
    net_report_add(&secret);
    net_report_add(&shell);
    net_report_add(&debugger_second);
    assert_string_equal(printed(false), "shell\nhttp\nsecret\ngdb peer hidden\ngdb frames\n");
}

UNIT_MAIN(NULL, NULL, test_reports_print_by_rank_once_each_with_the_readers_trust)
