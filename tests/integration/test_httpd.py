"""The pprof.http= server in QEMU (docs/http.md), reached through a forwarded host TCP port: the index page's
links each answer (parsed with html.parser, and loaded in headless Chromium), the text pages are the console's
own commands, the command line is redacted, `/` redirects, unknown paths are 404, the request-line refusals have
their statuses and one-line bodies, a Host that names the kernel by a name nobody gave it is 421 (DNS
rebinding) while addresses and pprof.host='s names are answered, every response is framed the same way (HTTP/1.1, Content-Type,
Content-Length, Connection: close, then closed), `net`'s http line counts what was sent, and with udpsh.key=
every request needs the bearer token `scripts/udpsh pprof-token` prints.
What the profile holds, and go tool pprof reading it, is tests/integration/test_pprof_http.py."""

import os
import re
import shutil
import socket
import subprocess
import sys
from urllib.parse import urljoin

import pytest

from conftest import _new_kernel
from kprof_qemu import TOP, poll
import kprof_httpd
from kprof_httpd import (GUEST_PORT, HTTP_TIMEOUT, Links, Response, assert_framed, assert_refused, boot_http, exchange,
                         get, http_counts)

sys.path.insert(0, os.path.join(TOP, "scripts"))
import kprof_wire  # noqa: E402

# Kernels this module boots (conftest.py fails a boot past BOOTS), by the test that boots them -- a module kernel
# counts for the first test that uses it, a test named alone needs a fresh one:
# test_a_bad_option_is_one_boot_line_and_no_server[*] 4, test_a_keyed_kernel_wants_the_token 1,
# test_the_boot_log_says_where_it_listens 1, test_the_cmdline_page_redacts_the_key 1,
# test_a_name_given_with_pprof_host_is_answered 1.
BOOTS = 8

KEY = "5ec7e75ec7e75ec7e75ec7e75ec7e75e"


http_kernel = kprof_httpd.http_kernel  # the module's kernel (a module-scoped fixture)

INDEX_LINKS = {"profile", "lscpu", "cpus", "cmdline", "profile?seconds=5", "/debug/fgprof", "goroutine",
               "goroutine?debug=1", "goroutine?debug=2", "block", "block?debug=1", "mutex", "mutex?debug=1",
               "heap", "heap?debug=1", "allocs", "/debug/flamegraph?seconds=5"}
# pprof protobufs answered at once (a snapshot: every task now, where tasks blocked and CPUs spun since boot, who
# holds the heap)
SNAPSHOTS = {"goroutine", "block", "mutex", "heap", "allocs"}


def test_the_boot_log_says_where_it_listens(http_kernel):
    assert "httpd: pprof.http on TCP port %d (local subnet, no token)" % GUEST_PORT in http_kernel.boot_log


def test_the_index_page_links_each_answer(http_kernel):
    r = get(http_kernel, "/debug/pprof/")
    assert_framed(r, 200)
    assert r.headers["content-type"].startswith("text/html")
    parser = Links()
    parser.feed(r.text())
    assert set(parser.hrefs) == INDEX_LINKS
    # The bare `profile` link is Go's default, 30 s: what it starts, and its client leaving, are the next test's;
    # /debug/fgprof's (30 s too) are test_pprof_wall_http's, the flame graph's test_pprof_http's.
    for href in sorted(set(parser.hrefs) - {"profile", "/debug/fgprof", "/debug/flamegraph?seconds=5"}):
        url = urljoin("/debug/pprof/", href)
        page = get(http_kernel, url)
        if href in SNAPSHOTS:
            assert_framed(page, 200)
            assert page.headers["content-type"] == "application/octet-stream", (href, page.headers)
        elif href.startswith("profile"):
            assert_framed(page, 200)
            assert page.headers["content-type"] == "application/octet-stream"
            assert page.headers["content-disposition"] == 'attachment; filename="profile"'
            assert page.body[:2] == b"\x1f\x8b", "not gzipped: %r" % page.body[:16]
        else:
            assert_framed(page, 200)
            assert page.headers["content-type"].startswith("text/plain")


def test_the_default_profile_is_30_s_and_ends_when_its_client_leaves(http_kernel):
    """The index's bare `profile` link: a profile of Go's default 30 s (the console's busy line counts down from
    it). Its client closing the connection ends it at the window's next drain: nothing is sent, `net` counts it
    cancelled, and the profiler is free again for the console."""
    k = http_kernel
    before = http_counts(k)
    s = socket.create_connection(("127.0.0.1", k.http_port), timeout=HTTP_TIMEOUT)
    try:
        s.sendall(b"GET /debug/pprof/profile HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        poll("the default profile running", lambda: "; running an HTTP profile (/debug/pprof/profile)" in k.cmd("net"),
             timeout=HTTP_TIMEOUT, every=0.2)
        busy = k.cmd("profile 100")
        m = re.fullmatch(r"profile: busy: an HTTP profile \(/debug/pprof/profile\), (\d+) s left", busy)
        # Above 5 s (the index's other profile link) and at most 30: only a host that held this test for 24 s
        # between the two commands could see less.
        assert m and 5 < int(m.group(1)) <= 30, busy
    finally:
        s.close()
    poll("the profile ended", lambda: "; running an HTTP profile" not in k.cmd("net"), timeout=HTTP_TIMEOUT, every=0.2)
    after = poll("the connection closed", lambda: (lambda c: c if c["open"] == 0 else None)(http_counts(k)),
                 timeout=HTTP_TIMEOUT, every=0.2)
    assert after["cancelled"] == before["cancelled"] + 1, (before, after)
    assert after.get(200, 0) == before.get(200, 0), (before, after)
    assert k.cmd("profile 100 all 1").startswith("profiled "), "the profiler is not free again"


def test_the_lscpu_page_is_the_consoles_lscpu(http_kernel):
    r = get(http_kernel, "/debug/pprof/lscpu")
    assert_framed(r, 200)
    assert r.text().rstrip("\n") == http_kernel.cmd("lscpu")


def test_the_cpus_page_is_the_consoles_cpus(http_kernel):
    r = get(http_kernel, "/debug/pprof/cpus")
    assert_framed(r, 200)
    page = r.text().rstrip("\n").split("\n")
    console = http_kernel.cmd_lines("cpus")
    # The tick counts move between the two looks; the table's shape and its first columns do not.
    assert page[0] == console[0] == "CPU APIC ONLINE TICKS BUSY"
    assert [row.split()[:3] for row in page[1:]] == [row.split()[:3] for row in console[1:]]
    assert len(page) == 1 + 4


def test_root_redirects_to_the_index(http_kernel):
    r = get(http_kernel, "/")
    assert_refused(r, 302)
    assert r.headers["location"] == "/debug/pprof/"


def test_refusals_have_their_statuses(http_kernel):
    assert_refused(get(http_kernel, "/nowhere"), 404)
    assert_refused(get(http_kernel, "/debug/pprof"), 404)
    r = get(http_kernel, "/debug/pprof/", method="POST")
    assert_refused(r, 405)
    assert r.headers["allow"] == "GET"
    assert_refused(get(http_kernel, "/debug/pprof/", method="HEAD"), 405)
    assert_refused(get(http_kernel, "/debug/pprof/", version="HTTP/2.0"), 505)
    assert_refused(get(http_kernel, "/debug/pprof/" + "a" * 1100), 414)
    for bad in ("0", "301", "abc", "5x", "-1", ""):
        r = get(http_kernel, "/debug/pprof/profile?seconds=" + bad)
        assert_refused(r, 400)
        assert b"seconds must be" in r.body
    assert_refused(Response(exchange(http_kernel, b"GET / HTTP/1.1\r\n\r\n")), 400)  # 1.1 without Host


def named(k, host, path="/debug/pprof/"):
    """GET path with Host: host (get() always names 127.0.0.1)."""
    return Response(exchange(k, ("GET %s HTTP/1.1\r\nHost: %s\r\n\r\n" % (path, host)).encode()))


def test_a_host_that_is_a_name_not_given_is_misdirected(http_kernel):
    # A DNS rebinding page sends its own name as Host: 421, one line, whatever the path, and counted.
    before = http_counts(http_kernel)
    for host in ("rebind.example", "rebind.example:%d" % http_kernel.http_port, "127.0.0.1.rebind.example"):
        r = named(http_kernel, host)
        assert_refused(r, 421)
        assert b"is not this server's" in r.body, r.body
    assert_refused(named(http_kernel, "rebind.example", "/debug/pprof/profile?seconds=300"), 421)
    assert http_counts(http_kernel).get(421, 0) - before.get(421, 0) == 4
    # What users type: the forwarded port on the host's loopback, the kernel's own address, localhost, HTTP/1.0
    # without a Host.
    for host in ("127.0.0.1:%d" % http_kernel.http_port, "10.0.2.15:%d" % GUEST_PORT, "localhost:%d" % 6060,
                 "[::1]:%d" % http_kernel.http_port):
        assert_framed(named(http_kernel, host), 200)
    assert_framed(Response(exchange(http_kernel, b"GET /debug/pprof/ HTTP/1.0\r\n\r\n")), 200)


def test_a_name_given_with_pprof_host_is_answered(request):
    k = boot_http(request, "pprof.host=kprof.lab.example,box7")
    try:
        assert_framed(named(k, "kprof.lab.example:%d" % k.http_port), 200)
        assert_framed(named(k, "BOX7"), 200)
        assert_framed(named(k, "127.0.0.1"), 200)
        assert_refused(named(k, "lab.example"), 421)
    finally:
        k.kill()


def test_net_counts_what_was_sent(http_kernel):
    before = http_counts(http_kernel)
    get(http_kernel, "/debug/pprof/cmdline")
    get(http_kernel, "/nowhere")
    get(http_kernel, "/nowhere/either")
    get(http_kernel, "/", method="DELETE")
    after = http_counts(http_kernel)
    assert after["accepted"] - before["accepted"] == 4
    for status, n in ((200, 1), (404, 2), (405, 1), (401, 0), (400, 0)):
        assert after.get(status, 0) - before.get(status, 0) == n, (status, before, after)
    assert after["open"] == 0


def test_the_cmdline_page_redacts_the_key(request):
    k = boot_http(request, "udpsh.key=%s profile.hz=250" % KEY)
    try:
        token = kprof_wire.pprof_bearer_token(bytes.fromhex(KEY))
        r = get(k, "/debug/pprof/cmdline", ["Authorization: Bearer " + token])
        assert_framed(r, 200)
        assert r.text() == "pprof.http=%d udpsh.key=<redacted> profile.hz=250\n" % GUEST_PORT
        assert KEY not in r.text()
    finally:
        k.kill()


def test_a_keyed_kernel_wants_the_token(request):
    k = boot_http(request, "udpsh.key=%s" % KEY)
    try:
        assert "(local subnet, bearer token required)" in k.boot_log
        missing = get(k, "/debug/pprof/")
        assert_refused(missing, 401)
        assert missing.headers["www-authenticate"] == "Bearer"
        wrong = get(k, "/debug/pprof/", ["Authorization: Bearer " + "0" * 64])
        assert_refused(wrong, 401)
        assert wrong.headers["www-authenticate"] == "Bearer"
        assert_refused(get(k, "/debug/pprof/", ["Authorization: Basic dXNlcjpwYXNz"]), 401)
        # The token as a user gets it: scripts/udpsh pprof-token, the key from the environment.
        env = dict(os.environ, **{kprof_wire.KEY_ENV: KEY})
        out = subprocess.run([sys.executable, os.path.join(TOP, "scripts", "udpsh"), "pprof-token"], env=env,
                             capture_output=True, text=True, timeout=60, check=True).stdout.strip()
        assert_framed(get(k, "/debug/pprof/", ["Authorization: Bearer " + out]), 200)
        assert_framed(get(k, "/debug/pprof/lscpu", ["authorization: bearer " + out]), 200)
        counts = http_counts(k)
        assert (counts.get(401), counts.get(200)) == (3, 2), counts
        assert KEY not in k.boot_log
    finally:
        k.kill()


def test_the_index_page_loads_in_headless_chromium(http_kernel):
    chromium = shutil.which("chromium")
    if not chromium:
        pytest.skip("no chromium binary (Debian's chromium package; scripts/deps.sh installs it)")
    url = "http://127.0.0.1:%d/debug/pprof/" % http_kernel.http_port
    r = subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom", url],
                       capture_output=True, text=True, timeout=180)
    assert r.returncode == 0, r.stderr[-2000:]
    parser = Links()
    parser.feed(r.stdout)
    assert set(parser.hrefs) == INDEX_LINKS, r.stdout[:2000]


@pytest.mark.parametrize("cmdline, line", [
    ("pprof.http=70000", "httpd: pprof.http=70000 is not a port 1..65535: server off"),
    ("pprof.http=0", "httpd: pprof.http=0 is not a port 1..65535: server off"),
    ("pprof.http=%d udpsh.key=abc" % GUEST_PORT, "httpd: udpsh.key: "),
    ("pprof.http=%d pprof.host=a,,b" % GUEST_PORT, "httpd: pprof.host=: "),
])
def test_a_bad_option_is_one_boot_line_and_no_server(request, cmdline, line):
    k = _new_kernel(request.node.name, cmdline=cmdline, http=GUEST_PORT)
    try:
        k.boot()
        said = [x for x in k.boot_log.split("\n") if "httpd:" in x]
        assert len(said) == 1 and line in said[0] and said[0].endswith("server off"), said
        assert [x for x in k.cmd_lines("net") if x.startswith("http: ")] == ["http: off"]
        assert get(k, "/debug/pprof/", timeout=20).status is None  # nothing listens: no HTTP byte
    finally:
        k.kill()
