"""The wire formats of kprof's UDP shell and of netload, for scripts/udpsh, scripts/netload and the tests.

They mirror kernel/udpsh/wire.h and kernel/net/netload_proto.h; docs/udp-shell.md is the reference.

UDP shell: a request is one datagram holding one command line. The reply is the command's text in datagrams of
at most 1400 bytes, then one final datagram, a line of its own:

    # udpsh end seq=<n> datagrams=<d> bytes=<b> crc32=<8 hex> status=<0|1>

(with one newline before it when the text did not end with one). d and b count the text datagrams and bytes
before it, crc32 is zlib.crc32 of the text. Instead of running anything the kernel may answer with one datagram
"# udpsh busy: ..." or "# udpsh error: ...".

Until a request repeats the token the kernel gave its address and port, the only answer is one datagram
"# udpsh token=<32 hex>"; the request is then sent again as "token=<hex> id=<N> LINE", or, to a kernel booted
with udpsh.key=, "token=<hex> counter=<N> mac=<hex> LINE" where the MAC is HMAC-SHA-256(key, b"<hex> <N> LINE")
and N rises with every request. The id (or counter) makes a resent request a repeat, which the kernel answers
from the answer it remembers instead of running it again. exchange() does that round trip, resending with
backoff what is safe to resend; the key comes from a file or KPROF_UDPSH_KEY (load_key), never from a command
line.

netload: every datagram starts with a 28-byte big-endian header -- magic b"KPNL", version u32 (1), sequence
number u64, send time ns u64 (the sender's clock), size u32 (the whole datagram) -- followed by filler, the byte at
offset i being i & 0xff. Standard library only.
"""

import hashlib
import hmac
import os
import re
import socket
import struct
import time
import zlib
from collections import namedtuple

# ---- UDP shell ----------------------------------------------------------------------------------------------

UDPSH_PORT = 5555
DATAGRAM_MAX = 1400
LINE_MAX = 255

_TRAILER = re.compile(
    rb"\A\n?# udpsh end seq=(\d+) datagrams=(\d+) bytes=(\d+) crc32=([0-9a-f]{8}) status=([01])\n\Z")
_REFUSAL = re.compile(rb"\A# udpsh (busy|error)(?:: ([^\n]*))?\n\Z")

_TOKEN = re.compile(rb"\A# udpsh token=([0-9a-f]{32})\n\Z")
REPLAYED = "# udpsh error: counter not above the last one accepted (a replay?)"
KEY_ENV = "KPROF_UDPSH_KEY"
KEY_MIN_BYTES, KEY_MAX_BYTES = 16, 64

Trailer = namedtuple("Trailer", "seq datagrams bytes crc32 status")


def parse_token(datagram):
    """The token (bytes, 32 lowercase hex digits) a token datagram holds, or None when it is not one."""
    m = _TOKEN.match(datagram)
    return m.group(1) if m else None


class KeyProblem(ValueError):
    pass


def parse_key(text):
    """The key (bytes) written as hex: 16 to 64 bytes, as udpsh.key= takes it. KeyProblem when it is not."""
    text = text.strip()
    try:
        key = bytes.fromhex(text)
    except ValueError:
        raise KeyProblem("the key is not hex digits") from None
    if not KEY_MIN_BYTES <= len(key) <= KEY_MAX_BYTES:
        raise KeyProblem("the key has %d bits; udpsh.key= takes %d to %d" % (
            len(key) * 8, KEY_MIN_BYTES * 8, KEY_MAX_BYTES * 8))
    return key


def load_key(key_file=None, environ=None):
    """The UDP shell key from key_file (its hex, whitespace around it ignored) when given, else from the
    environment's KPROF_UDPSH_KEY, else None. KeyProblem when what is there is unreadable."""
    environ = os.environ if environ is None else environ
    if key_file is not None:
        try:
            with open(key_file) as f:
                text = f.read()
        except OSError as e:
            raise KeyProblem("%s: %s" % (key_file, e.strerror)) from None
        except UnicodeDecodeError:
            raise KeyProblem("%s: the key is not hex digits" % key_file) from None
        try:
            return parse_key(text)
        except KeyProblem as e:
            raise KeyProblem("%s: %s" % (key_file, e)) from None
    text = environ.get(KEY_ENV)
    if not text:
        return None
    try:
        return parse_key(text)
    except KeyProblem as e:
        raise KeyProblem("%s: %s" % (KEY_ENV, e)) from None


# The pprof.http= server's bearer token (kernel/httpd/http_token.h): what a scraper sends as
# `Authorization: Bearer TOKEN` to a kernel booted with udpsh.key=.
PPROF_TOKEN_LABEL = b"kprof pprof.http bearer v1"


def pprof_bearer_token(key):
    """The lowercase hex of HMAC-SHA256(key, PPROF_TOKEN_LABEL), as the kernel derives it."""
    return hmac.new(key, PPROF_TOKEN_LABEL, hashlib.sha256).hexdigest()


_last_counter = [0]


def next_counter():
    """A request counter above every one this process used before: the wall clock in nanoseconds, so that
    separate runs of a client (and separate clients on one host) keep rising too."""
    _last_counter[0] = max(time.time_ns(), _last_counter[0] + 1)
    return _last_counter[0]


def request_mac(key, token, counter, line):
    """HMAC-SHA-256(key, b"<token> <counter> <line>") in hex (bytes)."""
    return hmac.new(key, b"%s %d %s" % (token, counter, line), hashlib.sha256).hexdigest().encode()


def request_datagram(line, token=None, key=None, counter=None, rid=None):
    """The request for line (bytes): as it is without a token; with one, the token in front, and with rid (unkeyed)
    the request id after it; with a key too, the counter and the MAC (the counter is the keyed request's id)."""
    if token is None:
        return line
    if key is None:
        if rid is None:
            return b"token=%s %s" % (token, line)
        return b"token=%s id=%d %s" % (token, rid, line)
    counter = next_counter() if counter is None else counter
    return b"token=%s counter=%d mac=%s %s" % (token, counter, request_mac(key, token, counter, line), line)


def parse_trailer(datagram):
    """The Trailer a datagram holds, or None when it is not one."""
    m = _TRAILER.match(datagram)
    if not m:
        return None
    return Trailer(int(m.group(1)), int(m.group(2)), int(m.group(3)), int(m.group(4), 16), int(m.group(5)))


def parse_refusal(datagram):
    """("busy" or "error", the whole line without its newline) for a refusal datagram, else None."""
    m = _REFUSAL.match(datagram)
    if not m:
        return None
    return m.group(1).decode(), datagram[:-1].decode("ascii", "replace")


def format_trailer(seq, text, datagrams, status):
    """The trailer the kernel sends after text (bytes) cut into datagrams pieces; for tests and fake servers."""
    lead = b"\n" if text and not text.endswith(b"\n") else b""
    return lead + b"# udpsh end seq=%d datagrams=%d bytes=%d crc32=%08x status=%d\n" % (
        seq, datagrams, len(text), zlib.crc32(text), 1 if status else 0)


def chunk_text(text):
    """text (bytes) cut the way the kernel's chunker cuts it: at the last newline within 1400 bytes, or at 1400
    bytes when a line is longer."""
    out = []
    while len(text) > DATAGRAM_MAX:
        cut = text.rfind(b"\n", 0, DATAGRAM_MAX) + 1 or DATAGRAM_MAX
        out.append(text[:cut])
        text = text[cut:]
    if text:
        out.append(text)
    return out


def reply_datagrams(seq, text, status=0):
    """Every datagram of a reply to a command that printed text (bytes)."""
    chunks = chunk_text(text)
    return chunks + [format_trailer(seq, text, len(chunks), status)]


class Reply:
    """One reply, collected a datagram at a time. Datagrams may keep arriving after the trailer (reordered on
    the way); problem() says what, if anything, is missing."""

    def __init__(self):
        self.chunks = []
        self.trailer = None
        self.refusal = None
        self.token = None
        self.extra_finals = 0

    def add(self, datagram):
        """Takes one datagram; returns True once the reply is complete or refused, or it is a token."""
        if self.trailer is None and self.refusal is None and not self.chunks and self.token is None:
            token = parse_token(datagram)
            if token is not None:
                self.token = token
                return True
        if self.trailer is None and self.refusal is None:
            trailer = parse_trailer(datagram)
            if trailer is not None:
                self.trailer = trailer
                return self.finished()
            refusal = parse_refusal(datagram)
            if refusal is not None:
                self.refusal = refusal
                return True
        elif parse_trailer(datagram) is not None or parse_refusal(datagram) is not None:
            self.extra_finals += 1
            return self.finished()
        self.chunks.append(datagram)
        return self.finished()

    def finished(self):
        return self.token is not None or self.refusal is not None or (self.trailer is not None and self.problem() is None)

    @property
    def text(self):
        return b"".join(self.chunks)

    def problem(self):
        """None for a complete reply; otherwise one line saying what is wrong with it."""
        if self.refusal is not None:
            return self.refusal[1]
        got_d, got_b = len(self.chunks), sum(len(c) for c in self.chunks)
        t = self.trailer
        if t is None:
            if self.token is not None:
                return "the kernel answered with a token, not a reply"
            if not self.chunks:
                return "no reply"
            return "no end marker after %d datagrams, %d bytes" % (got_d, got_b)
        if got_d < t.datagrams or got_b < t.bytes:
            return "incomplete reply: %d of %d datagrams, %d of %d bytes arrived" % (
                got_d, t.datagrams, got_b, t.bytes)
        if got_d > t.datagrams or got_b > t.bytes or self.extra_finals:
            return "reply mixed with another: %d datagrams, %d bytes, but the end marker says %d, %d" % (
                got_d, got_b, t.datagrams, t.bytes)
        if zlib.crc32(self.text) != t.crc32:
            return "reply damaged or reordered: crc32 %08x, the end marker says %08x" % (
                zlib.crc32(self.text), t.crc32)
        return None


# After the end marker, how long a client waits for datagrams it says are still missing (they may have been
# overtaken by it on the way).
STRAGGLER_WAIT = 0.3


def receive_reply(sock, timeout, reply=None, straggler_wait=None):
    """Reads datagrams from sock (connected to the kernel, the request already sent) into reply (a new Reply
    when None) until it is complete or refused, or timeout seconds have passed; with straggler_wait, at most that
    long after the end marker arrived. Returns the reply. ConnectionRefusedError (an ICMP port unreachable on a
    connected socket) is the caller's to handle."""
    reply = Reply() if reply is None else reply
    deadline = time.monotonic() + timeout
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        sock.settimeout(left)
        try:
            datagram = sock.recv(65535)
        except socket.timeout:
            break
        if reply.add(datagram):
            break
        if straggler_wait is not None and reply.trailer is not None:
            deadline = min(deadline, time.monotonic() + straggler_wait)
            straggler_wait = None
    return reply


# How long a client waits for the first datagram of an answer before it sends the same datagram again; the wait
# doubles after each resend, up to RESEND_MAX, until the client's deadline. Only what is safe to send twice is
# resent: the token request (it runs nothing) and a request with an id or counter, which the kernel recognises as
# a repeat -- it answers it from the answer it remembers, or not at all while the first still runs, and never
# runs it twice.
RESEND_FIRST = 1.0
RESEND_MAX = 8.0


class Session:
    """What a client keeps between requests over one socket: the token the kernel gave its address and port.
    exchange() fills it in and renews it when the kernel answers with a new one."""

    def __init__(self):
        self.token = None


def _recv(sock, wait):
    """One datagram within wait seconds, or None."""
    if wait <= 0:
        return None
    sock.settimeout(wait)
    try:
        return sock.recv(65535)
    except socket.timeout:
        return None


def _collect(sock, request, token, deadline, straggler_wait):
    """Sends request and collects its answer, resending the same datagram with backoff while nothing at all has
    come back. Returns (Reply, new token or None): a token other than ours (token None: any token) means ours is
    no longer good (it expired, or the kernel rebooted) and the request did not run. The token request is the
    line without a token, which a kernel answers with a token and nothing else; should a kernel run it instead,
    its answer is collected like any other and the line is not sent again."""
    reply = Reply()
    wait = RESEND_FIRST
    resent = False
    busy = None
    sock.send(request)
    resend_at = time.monotonic() + wait
    while True:
        now = time.monotonic()
        if now >= deadline:
            break
        heard = reply.chunks or reply.trailer is not None
        datagram = _recv(sock, deadline - now if heard else min(resend_at, deadline) - now)
        if datagram is None:
            if heard or time.monotonic() >= deadline:
                break
            sock.send(request)
            resent = True
            wait = min(2 * wait, RESEND_MAX)
            resend_at = time.monotonic() + wait
            continue
        new_token = parse_token(datagram)
        if new_token is not None and not heard:
            if new_token == token:
                continue  # a second answer to a token request we resent
            return reply, new_token
        refusal = parse_refusal(datagram) if not heard else None
        if refusal is not None and refusal[0] == "busy" and resent:
            # Another client's command, or (from a kernel that knows no ids) our own first request still
            # running: keep listening for the answer until the deadline.
            busy = datagram
            continue
        if reply.add(datagram):
            break
        if straggler_wait is not None and reply.trailer is not None:
            deadline = min(deadline, time.monotonic() + straggler_wait)
            straggler_wait = None
    if busy is not None and reply.trailer is None and reply.refusal is None and not reply.chunks:
        reply.add(busy)
    return reply, None


def exchange(sock, line, timeout, key=None, straggler_wait=None, session=None):
    """Sends the request line (bytes) over sock (connected to the kernel) and collects its reply as
    receive_reply does, doing the token round trip on the way: the token request (the line as it is) is resent
    with backoff until a token comes; then the line goes with the token in front, an id (unkeyed) or a fresh
    counter and the MAC (with key), and is resent unchanged with backoff while no answer at all comes, until the
    deadline -- the kernel answers a repeat without running it twice. A new token answered to the request (the
    old one expired, or the kernel rebooted), or a replay refusal (another client from this host used a higher
    counter at the same moment), starts the request afresh, twice at most. With session (a Session, for a
    socket that sends several requests) its token is used and kept. Returns the last Reply."""
    deadline = time.monotonic() + timeout
    token = session.token if session is not None else None
    reply = Reply()
    for attempt in range(3):
        if token is None:
            reply, token = _collect(sock, line, None, deadline, straggler_wait)
            if token is None:
                return reply
        rid = next_counter()
        request = request_datagram(line, token, key, counter=rid, rid=rid)
        reply, new_token = _collect(sock, request, token, deadline, straggler_wait)
        if session is not None:
            session.token = new_token if new_token is not None else token
        if new_token is not None:
            token = new_token
            reply = Reply()
            reply.token = new_token
            continue
        replayed = key is not None and reply.refusal is not None and reply.refusal[1] == REPLAYED
        if not replayed or time.monotonic() >= deadline:
            return reply
    return reply


# ---- netload ------------------------------------------------------------------------------------------------

NETLOAD_MAGIC = b"KPNL"
NETLOAD_VERSION = 1
NETLOAD_HEADER = struct.Struct("!4sIQQI")
NETLOAD_HEADER_SIZE = NETLOAD_HEADER.size  # 28
NETLOAD_SIZE_MAX = 1472
NETLOAD_SIZE_DEFAULT = 1024
NETLOAD_PPS_DEFAULT = 10000
NETLOAD_WINDOW = 1024
UDP_MAX = 65507

_FILLER = bytes(i & 0xFF for i in range(UDP_MAX))

NetloadHeader = namedtuple("NetloadHeader", "seq send_ns size")


def netload_encode(seq, send_ns, size):
    """One whole datagram of size bytes."""
    if not NETLOAD_HEADER_SIZE <= size <= UDP_MAX:
        raise ValueError("netload datagram size %d outside %d..%d" % (size, NETLOAD_HEADER_SIZE, UDP_MAX))
    return NETLOAD_HEADER.pack(NETLOAD_MAGIC, NETLOAD_VERSION, seq, send_ns, size) + _FILLER[NETLOAD_HEADER_SIZE:size]


def netload_stamp(buf, seq, send_ns):
    """Rewrites the sequence number and send time of an encoded datagram in a bytearray."""
    struct.pack_into("!QQ", buf, 8, seq, send_ns)


def netload_decode(datagram):
    """(NetloadHeader, None) for a valid datagram, else (None, reason): short, bad magic, bad version, bad size."""
    if len(datagram) < NETLOAD_HEADER_SIZE:
        return None, "short"
    magic, version, seq, send_ns, size = NETLOAD_HEADER.unpack_from(datagram)
    if magic != NETLOAD_MAGIC:
        return None, "bad magic"
    if version != NETLOAD_VERSION:
        return None, "bad version"
    if size != len(datagram):
        return None, "bad size"
    return NetloadHeader(seq, send_ns, size), None


_U64 = (1 << 64) - 1


class RxStats:
    """The receiver's accounting, exactly as kernel/net/netload_proto.c does it: each datagram is judged against
    the highest sequence number seen (serial arithmetic, so it runs on across a wrap); skipped numbers are
    lost until they arrive late; the last NETLOAD_WINDOW numbers are remembered to tell duplicates."""

    def __init__(self):
        self.packets = self.bytes = self.lost = self.out_of_order = 0
        self.duplicates = self.late = self.invalid = 0
        self.highest = _U64
        self._seen = [False] * NETLOAD_WINDOW

    def account(self, seq, length):
        self.packets += 1
        self.bytes += length
        ahead = (seq - self.highest) & _U64
        if 0 < ahead < (1 << 63):
            skipped = ahead - 1
            self.lost += skipped
            if skipped >= NETLOAD_WINDOW:
                self._seen = [False] * NETLOAD_WINDOW
            else:
                for n in range(1, ahead):
                    self._seen[(self.highest + n) % NETLOAD_WINDOW] = False
            self._seen[seq % NETLOAD_WINDOW] = True
            self.highest = seq
            return
        behind = (self.highest - seq) & _U64
        if behind < NETLOAD_WINDOW and self._seen[seq % NETLOAD_WINDOW]:
            self.duplicates += 1
            return
        self.out_of_order += 1
        if behind >= NETLOAD_WINDOW:
            self.late += 1
            return
        self._seen[seq % NETLOAD_WINDOW] = True
        if self.lost > 0:
            self.lost -= 1

    def account_invalid(self):
        self.invalid += 1


def per_second(count, elapsed_ns):
    return count * 1000000000 // elapsed_ns if elapsed_ns > 0 else 0


def format_rx_report(stats, elapsed_ns):
    """The receiver's line, as the kernel prints it (no newline)."""
    return "packets %d (%d/s), bytes %d (%d/s), lost %d, out of order %d, duplicates %d, invalid %d" % (
        stats.packets, per_second(stats.packets, elapsed_ns), stats.bytes, per_second(stats.bytes, elapsed_ns),
        stats.lost, stats.out_of_order, stats.duplicates, stats.invalid)


def format_socket_drops(dropped):
    """A host receiver's line when its socket's receive queue overflowed (no newline)."""
    return "host socket dropped %d (its receive queue was full: the receiver did not run)" % dropped


def format_tx_report(packets, nbytes, elapsed_ns):
    """The sender's line, as the kernel prints it (no newline)."""
    return "sent packets %d (%d/s), bytes %d (%d/s)" % (
        packets, per_second(packets, elapsed_ns), nbytes, per_second(nbytes, elapsed_ns))


_RX_REPORT = re.compile(r"packets (\d+) \((\d+)/s\), bytes (\d+) \((\d+)/s\), lost (\d+), out of order (\d+), "
                        r"duplicates (\d+), invalid (\d+)")
_SOCKET_DROPS = re.compile(r"^host socket dropped (\d+) ", re.M)
_TX_REPORT = re.compile(r"sent packets (\d+) \((\d+)/s\), bytes (\d+) \((\d+)/s\)")


def parse_rx_report(text):
    """The figures of the first receiver line in text, as a dict, or None; socket_drops is the host socket's
    drop count from the line a host receiver adds after it (0 without one)."""
    m = _RX_REPORT.search(text)
    if not m:
        return None
    keys = ("packets", "packets_per_s", "bytes", "bytes_per_s", "lost", "out_of_order", "duplicates", "invalid")
    report = dict(zip(keys, map(int, m.groups())))
    drops = _SOCKET_DROPS.search(text, m.end())
    report["socket_drops"] = int(drops.group(1)) if drops else 0
    return report


def parse_tx_report(text):
    """The figures of the first sender line in text, as a dict, or None."""
    m = _TX_REPORT.search(text)
    if not m:
        return None
    return dict(zip(("packets", "packets_per_s", "bytes", "bytes_per_s"), map(int, m.groups())))
