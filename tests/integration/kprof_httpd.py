"""The client side of the pprof.http= server (docs/http.md), shared by tests/integration/test_httpd.py,
test_httpd_abuse.py, test_httpd_wire.py and test_pprof_http.py.

Owns: the guest's port (GUEST_PORT) and the client's patience (HTTP_TIMEOUT); one request over the forwarded
host port (exchange, get) and its parsed answer (Response); the framing every answer must have (assert_framed,
assert_refused); `net`'s http line (http_counts); the kernel booted with the server (boot_http, and the module
fixture http_kernel); Links, the index page's <a href> collector.
"""

import contextlib
import re
import select
import socket
import threading
from html.parser import HTMLParser

import pytest

from conftest import _new_kernel
from kprof_qemu import boot_kernel, poll

GUEST_PORT = 6060
HTTP_TIMEOUT = 120.0  # generous: three helpers share two cores under TCG


class Response:
    def __init__(self, raw):
        self.raw = raw
        head, sep, self.body = raw.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        m = re.match(r"HTTP/1\.1 (\d{3}) ", lines[0]) if sep else None
        self.status = int(m.group(1)) if m else None
        self.headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            self.headers[name.strip().lower()] = value.strip()

    def text(self):
        return self.body.decode("utf-8")


def exchange(k, data, timeout=HTTP_TIMEOUT, drip=None):
    """Sends data (bytes) to the kernel's forwarded port and reads until the server closes. drip: seconds
    between single bytes. Returns the raw bytes received (b"" when closed or reset before any)."""
    s = socket.create_connection(("127.0.0.1", k.http_port), timeout=timeout)
    got = b""
    try:
        s.settimeout(timeout)
        if drip is None:
            s.sendall(data)
        else:
            # A slow client reads what comes back between its bytes, and stops sending once the server answers
            # (more bytes to a closed connection would be reset, and a reset may discard the answer unread).
            for i in range(len(data)):
                s.sendall(data[i:i + 1])
                if select.select([s], [], [], drip)[0]:
                    break
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            got += chunk
    except (ConnectionResetError, BrokenPipeError):
        pass
    finally:
        s.close()
    return got


def get(k, path, headers=(), timeout=HTTP_TIMEOUT, method="GET", version="HTTP/1.1"):
    lines = ["%s %s %s" % (method, path, version), "Host: 127.0.0.1"] + list(headers)
    return Response(exchange(k, ("\r\n".join(lines) + "\r\n\r\n").encode(), timeout))


@contextlib.contextmanager
def fetching(k, path, running):
    """GET path in a thread of its own, entered once `net` says the server is running an HTTP `running` (its
    busy line's words, say "flame graph (/debug/flamegraph)"); the response is the yielded dict's "r" once the
    with has ended."""
    got = {}
    t = threading.Thread(target=lambda: got.update(r=get(k, path)))
    t.start()
    try:
        poll("the %s running" % running, lambda: "; running an HTTP %s" % running in k.cmd("net"), timeout=60,
             every=0.2)
        yield got
    finally:
        t.join(300)


def assert_framed(r, status):
    """Every response: HTTP/1.1 and the status, Content-Type, a Content-Length that is the body's, closed."""
    assert r.status == status, r.raw[:300]
    assert r.headers.get("connection") == "close", r.raw[:300]
    assert "content-type" in r.headers, r.raw[:300]
    assert int(r.headers["content-length"]) == len(r.body), r.raw[:300]


def assert_refused(r, status):
    """A refusal: framed, plain text, one line."""
    assert_framed(r, status)
    assert r.headers["content-type"].startswith("text/plain")
    assert r.body.endswith(b"\n") and r.body.count(b"\n") == 1, r.body


def http_counts(k):
    """net's http line as {"open": n, "accepted": n, ..., 200: n, 404: n, ...}."""
    line = [x for x in k.cmd_lines("net") if x.startswith("http: ")]
    assert len(line) == 1, line
    m = re.match(r"http: port (\d+), (\d+) open, (\d+) accepted, (\d+) not allowed, (\d+) segments refused, "
                 r"(\d+) no slot, (\d+) cancelled, (\d+) stalled, (\d+) half-open evicted, (\d+) closes reset, "
                 r"answered(.*)$", line[0])
    assert m, line[0]
    names = ["port", "open", "accepted", "not_allowed", "refused_segments", "no_slot", "cancelled", "stalled",
             "evicted", "closes_reset"]
    counts = dict(zip(names, (int(g) for g in m.groups()[:10])))
    for pair in m.group(11).partition(";")[0].split():  # "; running an HTTP profile ..." while one runs
        if pair != "none":
            status, n = pair.split(":")
            counts[int(status)] = int(n)
    return counts


def boot_http(request, cmdline="", **opts):
    return boot_kernel("pprof.http=%d" % GUEST_PORT, cmdline, make=_new_kernel, name=request.node.name, http=GUEST_PORT,
                       **opts)


@pytest.fixture(scope="module")
def http_kernel(request):
    k = boot_http(request)
    try:
        yield k
    finally:
        k.kill()


class Links(HTMLParser):
    def __init__(self):
        super().__init__()
        self.hrefs = []

    def handle_starttag(self, tag, attrs):
        if tag == "a":
            self.hrefs += [v for n, v in attrs if n == "href"]
