/* kernel/httpd/pages.c: what the pprof.http= server says that is not a profile -- the framing every response
 * shares (status line, Content-Type, Content-Length, Connection: close), the one-line refusals, the HTML index
 * of /debug/pprof/ (Go's net/http/pprof's, in kprof's terms), and the text pages, which are the shell's own
 * commands (`lscpu`, `cpus`) run into a buffer. */
#include "kernel/httpd/httpd_conn.h"

#include "hal/platform.h"
#include "kernel/heap.h"
#include "kernel/lib/format.h"
#include "kernel/lib/sink.h"
#include "kernel/lib/string.h"
#include "kernel/profiler/pprof.h"
#include "kernel/shell/commands.h"

#define PAGE_MAX 16384 /* a text page: lscpu's and cpus' output at 64 CPUs fits with room to spare */

const char *httpd_status_text(int status)
{
    switch (status) {
    case 200: return "OK";
    case 302: return "Found";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 414: return "URI Too Long";
    case 421: return "Misdirected Request";
    case 429: return "Too Many Requests";
    case 431: return "Request Header Fields Too Large";
    case 503: return "Service Unavailable";
    case 505: return "HTTP Version Not Supported";
    default: return "Internal Server Error";
    }
}

bool httpd_response_make(struct httpd_response *out, int status, const char *content_type, const char *extra,
                         const void *body, size_t body_len)
{
    char head[512];
    size_t head_len = ksnprintf(head, sizeof head,
                                "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n%sConnection: close\r\n\r\n",
                                status, httpd_status_text(status), content_type, body_len, extra ? extra : "");
    if (head_len >= sizeof head)
        head_len = sizeof head - 1; /* never: every head this file makes is short */
    out->status = status;
    out->len = head_len + body_len;
    out->data = kmalloc(out->len);
    if (!out->data) {
        out->len = 0;
        return false;
    }
    memcpy(out->data, head, head_len);
    if (body_len)
        memcpy(out->data + head_len, body, body_len);
    return true;
}

bool httpd_response_text(struct httpd_response *out, int status, const char *extra, const char *line)
{
    char body[160];
    size_t len = ksnprintf(body, sizeof body, "%s\n", line);
    if (len >= sizeof body)
        len = sizeof body - 1;
    return httpd_response_make(out, status, "text/plain; charset=utf-8", extra, body, len);
}

/* What /debug/pprof/ lists: path (relative to it, or absolute: fgprof is where Go's fgprof serves it), what it is. */
static const struct {
    const char *path, *name, *what;
} served[] = {
    { "/debug/flamegraph?seconds=5", "flamegraph", "a flame graph of every CPU, drawn by the kernel as SVG for a "
                                                   "browser: hover for counts, click to zoom, search. ?seconds=N "
                                                   "(default 30), &kind=wall, &tag=key:value; its window's pprof at "
                                                   "profile?run=N" },
    { "profile", "profile", "CPU profile of every CPU, as pprof protobuf. ?seconds=N (1..300, default 30)" },
    { "/debug/fgprof", "fgprof", "wall-clock profile of every task every 10 ms, running or waiting (labels state and "
                                 "waiting_on), as pprof protobuf. ?seconds=N (1..300, default 30)" },
    { "goroutine", "goroutine", "every task now, counted by call chain, state and labels, as pprof protobuf; "
                                "<a href=\"goroutine?debug=1\">?debug=1</a> as text, "
                                "<a href=\"goroutine?debug=2\">?debug=2</a> every task as the shell's tasks "
                                "prints it" },
    { "block", "block", "where tasks blocked: waits (contentions) and their time (delay) by call chain since boot, "
                        "as pprof protobuf; <a href=\"block?debug=1\">?debug=1</a> as text. ?seconds=N: over the "
                        "next N seconds" },
    { "mutex", "mutex", "where CPUs spun on spinlocks: contended acquisitions (contentions) and the time they spun "
                        "(delay) by call chain since boot, as pprof protobuf; <a href=\"mutex?debug=1\">?debug=1</a> "
                        "as text. ?seconds=N: over the next N seconds" },
    { "heap", "heap", "who holds the kernel heap: live objects and bytes (inuse) and every allocation since boot "
                      "(alloc) by call chain, as pprof protobuf; <a href=\"heap?debug=1\">?debug=1</a> as text" },
    { "allocs", "allocs", "the same as heap, alloc_space first: every allocation since boot by call chain" },
    { "lscpu", "lscpu", "the processors, the sample source and the boot, as the shell's lscpu prints them" },
    { "cpus", "cpus", "per-CPU state: APIC id, online, ticks and busy ticks, as the shell's cpus prints them" },
    { "cmdline", "cmdline", "the kernel command line (udpsh.key= redacted)" },
};

static void index_page(struct sink *out)
{
    sink_puts(out, "<!DOCTYPE html>\n<html>\n<head>\n<meta charset=\"utf-8\">\n<title>/debug/pprof/</title>\n"
                   "<style>td { padding: 0 1em; }</style>\n</head>\n<body>\n/debug/pprof/\n"
                   "<p>kprof kernel profiles, served as Go's net/http/pprof serves them.</p>\n"
                   "<table>\n<thead><tr><th>Profile</th><th>Description</th></tr></thead>\n<tbody>\n");
    for (size_t i = 0; i < sizeof served / sizeof served[0]; i++)
        sink_printf(out, "<tr><td><a href=\"%s\">%s</a></td><td>%s</td></tr>\n", served[i].path, served[i].name,
                    served[i].what);
    sink_printf(out, "</tbody>\n</table>\n<p>Profile for <a href=\"profile?seconds=5\">5 seconds</a>, or the "
                     "default <a href=\"profile\">%u seconds</a>; then <code>go tool pprof build/kprof.elf "
                     "profile</code>.</p>\n</body>\n</html>\n", PPROF_SECONDS_DEFAULT);
}

/* The command line with every udpsh.key= value replaced, as scripts/qemu.sh prints it. */
static void cmdline_page(struct sink *out)
{
    const char *s = platform_cmdline();
    static const char key[] = "udpsh.key=";
    while (s && *s) {
        size_t gap = 0;
        while (s[gap] == ' ' || s[gap] == '\t')
            gap++;
        sink_write(out, s, gap);
        s += gap;
        size_t word = 0;
        while (s[word] && s[word] != ' ' && s[word] != '\t')
            word++;
        if (word >= sizeof key - 1 && memcmp(s, key, sizeof key - 1) == 0)
            sink_puts(out, "udpsh.key=<redacted>");
        else
            sink_write(out, s, word);
        s += word;
    }
    sink_puts(out, "\n");
}

bool httpd_page(const struct http_request *req, struct httpd_response *out)
{
    const char *html = "text/html; charset=utf-8", *text = "text/plain; charset=utf-8";
    const char *type = text;
    char *argv[2] = { 0, 0 };
    command_fn command = 0;
    if (http_request_path_is(req, "/")) {
        httpd_response_text(out, 302, "Location: /debug/pprof/\r\n", "see /debug/pprof/");
        return true;
    } else if (http_request_path_is(req, "/debug/pprof/lscpu")) {
        command = cmd_lscpu;
        argv[0] = "lscpu";
    } else if (http_request_path_is(req, "/debug/pprof/cpus")) {
        command = cmd_cpus;
        argv[0] = "cpus";
    } else if (!http_request_path_is(req, "/debug/pprof/") && !http_request_path_is(req, "/debug/pprof/cmdline")) {
        return false;
    }
    char *buf = kmalloc(PAGE_MAX);
    if (!buf) {
        out->data = 0;
        return true;
    }
    struct buffer_sink bs;
    buffer_sink_init(&bs, buf, PAGE_MAX);
    if (command) {
        command(1, argv, &bs.sink, 0);
    } else if (http_request_path_is(req, "/debug/pprof/cmdline")) {
        cmdline_page(&bs.sink);
    } else {
        type = html;
        index_page(&bs.sink);
    }
    httpd_response_make(out, 200, type, 0, buf, bs.len);
    kfree(buf);
    return true;
}
