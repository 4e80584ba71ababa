"""scripts/kprof_stream.py: the kernel's sample stream (`profile stream`) on the host -- its datagrams parsed
strictly, one kernel's run accounted (duplicates, gaps, drops, the end), and the samples cut into intervals of
the kernel's own clock -- for scripts/profexport --every and its tests.

The wire format is the kernel's (kernel/profiler/stream_codec.h, docs/profiler.md). Each datagram is text lines, the
first a header, then its sample lines in the raw v2 grammar (kprof_profile.parse_raw's):

    # kprof stream v2 run=<8 hex> seq=<n> first=<i> samples=<k> ring_dropped=<D> unsent=<U> time_ns=<t>
      source=<word> period=<p> unit=<ns|cycles> cpus=<c> build_id=<hex|none>      (one line)
    s <cpu> <pid> <time_ns> <labels> <period> <context> <frames...>             (k of them)

and the last datagram of a run (sent three times) is one line:

    # kprof stream end run=<8 hex> seq=<n> produced=<P> ring_dropped=<D> unsent=<U> reason=<stopped|time|error>

`first` numbers the samples the kernel drained this run, so the samples missing on the way are exactly the
gaps between the index ranges that arrived; ring_dropped (samples the rings dropped) and unsent (drained but
not sent: their indexes are a gap too) are cumulative; produced = drained + ring_dropped. A stream is read
live from a kernel of the same build (its build id is checked), so only the kernel's version is read; v1 (before
each sample carried its period and context) is refused by name. Standard library only.
"""

import collections
import math
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)
import kprof_profile as kp  # noqa: E402

DATAGRAM_MAX = 1472          # one Ethernet frame's UDP payload: no IP fragments
VERSION = "v2"
HEADER_KEYS = ("run", "seq", "first", "samples", "ring_dropped", "unsent", "time_ns", "source", "period", "unit",
               "cpus", "build_id")
END_KEYS = ("run", "seq", "produced", "ring_dropped", "unsent", "reason")
END_REASONS = ("stopped", "time", "error")
SEQ_WINDOW = 65536           # how many sequence numbers back duplicates are still told from late datagrams
SETTLE_NS = 500000000        # a gap is taken for lost once a datagram built this long after it arrived
HOLD_NS = 60 * 1000000000    # gaps older than this are only counted: a datagram that late is not waited for

_HEADER = re.compile(r"# kprof stream (\S+)((?: \S+=\S*)*)")
_END = re.compile(r"# kprof stream end((?: \S+=\S*)*)")
_RUN = re.compile(r"[0-9a-f]{8}")
_NUM = re.compile(r"0|[1-9]\d*")
_SNUM = re.compile(r"-?(?:0|[1-9]\d*)")

Data = collections.namedtuple("Data", "run seq first ring_dropped unsent time_ns source period unit cpus "
                                      "build_id samples")
End = collections.namedtuple("End", "run seq produced ring_dropped unsent reason")


class StreamError(kp.ProfileError):
    """A datagram that is not a well-formed stream datagram; the message is one line."""


def _fields(text, keys, what):
    fields = {}
    for kv in text.split():
        k, _, v = kv.partition("=")
        if k in fields:
            raise StreamError("%s: %s= twice" % (what, k))
        fields[k] = v
    missing = [k for k in keys if k not in fields]
    if missing:
        raise StreamError("%s lacks %s" % (what, ", ".join(missing)))
    return fields


def _num(fields, key, what, signed=False):
    v = fields[key]
    if not (_SNUM if signed else _NUM).fullmatch(v) or len(v) > 20:
        raise StreamError("%s: bad %s=%s" % (what, key, v[:40]))
    return int(v)


def _run(fields, what):
    if not _RUN.fullmatch(fields["run"]):
        raise StreamError("%s: bad run=%s (want 8 lowercase hex digits)" % (what, fields["run"][:40]))
    return fields["run"]


def parse_datagram(data):
    """A Data or End for one datagram (bytes); StreamError when it is anything else or is broken anywhere: every
    line ends with its newline, the header's sample count matches the sample lines, every sample parses."""
    if len(data) > DATAGRAM_MAX:
        raise StreamError("a %d-byte datagram (the stream's are at most %d)" % (len(data), DATAGRAM_MAX))
    try:
        text = data.decode("ascii")
    except UnicodeDecodeError:
        raise StreamError("a datagram that is not ASCII text") from None
    if not text.endswith("\n"):
        raise StreamError("a datagram whose last line has no newline (cut short?)")
    lines = text[:-1].split("\n")
    m = _END.fullmatch(lines[0])
    if m:
        if len(lines) != 1:
            raise StreamError("an end datagram with more than its one line")
        what = "the end line"
        f = _fields(m.group(1), END_KEYS, what)
        if f["reason"] not in END_REASONS:
            raise StreamError("%s: bad reason=%s" % (what, f["reason"][:40]))
        return End(_run(f, what), _num(f, "seq", what), _num(f, "produced", what), _num(f, "ring_dropped", what),
                   _num(f, "unsent", what), f["reason"])
    m = _HEADER.fullmatch(lines[0])
    if not m or m.group(1) == "end":
        raise StreamError("not a stream datagram: %r" % lines[0][:60])
    if m.group(1) != VERSION:
        raise StreamError("stream format %s, this reads %s" % (m.group(1)[:20], VERSION))
    what = "the stream header"
    f = _fields(m.group(2), HEADER_KEYS, what)
    run = _run(f, what)
    seq, first, count = _num(f, "seq", what), _num(f, "first", what), _num(f, "samples", what)
    period, cpus = _num(f, "period", what), _num(f, "cpus", what)
    if period == 0 or cpus == 0:
        raise StreamError("%s: impossible period=%d cpus=%d" % (what, period, cpus))
    if f["unit"] not in kp.UNITS:
        raise StreamError("%s: bad unit=%s" % (what, f["unit"][:20]))
    build_id = f["build_id"]
    if not re.fullmatch(r"[0-9a-f]{2,64}|none", build_id):
        raise StreamError("%s: bad build_id=%s" % (what, build_id[:70]))
    if not re.fullmatch(r"[!-~]{1,63}", f["source"]):
        raise StreamError("%s: bad source=%s" % (what, f["source"][:70]))
    if len(lines) - 1 != count:
        raise StreamError("the header says %d samples, %d sample lines arrived" % (count, len(lines) - 1))
    where = "stream run %s seq %d" % (run, seq)
    try:
        samples = [kp.parse_sample(line.rstrip("\r"), where, cpus) for line in lines[1:]]
    except kp.ProfileError as e:
        raise StreamError(str(e)) from None
    return Data(run, seq, first, _num(f, "ring_dropped", what), _num(f, "unsent", what),
                _num(f, "time_ns", what, signed=True), f["source"], period, f["unit"], cpus, build_id, samples)


# ---- building datagrams (the fake kernels of the tests, and a reference for the format) ----------------------

sample_line = kp.sample_line


def header_line(run, seq, first, count, ring_dropped, unsent, time_ns, source, period, cpus, build_id, unit="ns"):
    return ("# kprof stream v2 run=%s seq=%d first=%d samples=%d ring_dropped=%d unsent=%d time_ns=%d source=%s "
            "period=%d unit=%s cpus=%d build_id=%s" % (run, seq, first, count, ring_dropped, unsent, time_ns,
                                                       source, period, unit, cpus, build_id))


def end_line(run, seq, produced, ring_dropped, unsent, reason):
    return "# kprof stream end run=%s seq=%d produced=%d ring_dropped=%d unsent=%d reason=%s" % (
        run, seq, produced, ring_dropped, unsent, reason)


def pack(samples, first, make_header):
    """The sample lines of samples (from index first) cut into datagrams of at most DATAGRAM_MAX bytes;
    make_header(first, count) gives each one's header line. Returns [(bytes, first, count)]."""
    out = []
    lines = [sample_line(s) + "\n" for s in samples]
    i = 0
    while i < len(lines):
        size = len(make_header(first + i, 0)) + 1 + 4   # the count's digits may grow: leave room
        j = i
        while j < len(lines) and size + len(lines[j]) <= DATAGRAM_MAX:
            size += len(lines[j])
            j += 1
        if j == i:
            raise ValueError("a sample line of %d bytes does not fit a datagram" % len(lines[i]))
        body = make_header(first + i, j - i) + "\n" + "".join(lines[i:j])
        assert len(body) <= DATAGRAM_MAX
        out.append((body.encode(), first + i, j - i))
        i = j
    return out


# ---- one kernel's run ----------------------------------------------------------------------------------------

class RunAccount:
    """What arrived of one run: duplicates told by sequence number, samples counted by their indexes, the
    kernel's cumulative drops, the end."""

    def __init__(self, run):
        self.run = run
        self.received = 0
        self.duplicates = 0
        self.late = 0              # a sequence number too far behind to tell duplicate from late: not counted
        self.highest_index = 0     # one past the highest sample index that arrived
        self.ring_dropped = 0
        self.unsent = 0
        self.end = None
        self.datagrams = 0
        self.first_header = None
        self.last_time_ns = None
        self._seen = set()
        self._top_seq = -1
        self._holes = []           # (first, end, time_ns of the datagram that opened it): indexes not yet here
        self._old_holes = 0

    def take(self, d):
        """Accounts a Data or End; returns False when it is a duplicate (or too late to tell) and adds nothing."""
        if d.seq in self._seen:
            if isinstance(d, Data):   # the end is sent three times on purpose
                self.duplicates += 1
            return False
        if d.seq <= self._top_seq - SEQ_WINDOW:
            self.late += 1
            return False
        self._seen.add(d.seq)
        if d.seq > self._top_seq:
            self._top_seq = d.seq
            if len(self._seen) > 2 * SEQ_WINDOW:
                self._seen = {s for s in self._seen if s > self._top_seq - SEQ_WINDOW}
        self.ring_dropped = max(self.ring_dropped, d.ring_dropped)
        self.unsent = max(self.unsent, d.unsent)
        if isinstance(d, End):
            self.end = d
            return True
        self.datagrams += 1
        if self.first_header is None:
            self.first_header = d
        self.last_time_ns = d.time_ns if self.last_time_ns is None else max(self.last_time_ns, d.time_ns)
        self.received += len(d.samples)
        lo, hi = d.first, d.first + len(d.samples)
        if lo > self.highest_index:
            self._holes.append((self.highest_index, lo, d.time_ns))
        elif lo < self.highest_index:
            self._fill(lo, hi)
        self.highest_index = max(self.highest_index, hi)
        return True

    def _fill(self, lo, hi):
        holes = []
        for a, b, t in self._holes:
            if b <= lo or a >= hi:
                holes.append((a, b, t))
                continue
            if a < lo:
                holes.append((a, lo, t))
            if hi < b:
                holes.append((hi, b, t))
        self._holes = holes

    def settled_gaps(self):
        """The gaps taken for lost by now: those a datagram built SETTLE_NS after them has passed (a gap just
        below the newest datagram is more likely one overtaken on the way); after the end, every gap."""
        if self.end is not None:
            return self.gaps
        now = self.last_time_ns if self.last_time_ns is not None else 0
        keep = []
        for a, b, t in self._holes:
            if t + HOLD_NS <= now:
                self._old_holes += b - a
            else:
                keep.append((a, b, t))
        self._holes = keep
        return self._old_holes + sum(b - a for a, b, t in keep if t + SETTLE_NS <= now)

    @property
    def gaps(self):
        """Samples whose indexes did not arrive, below the highest that did (unsent ones among them); after the
        end, up to the number drained, since the datagrams after the last one that arrived may be lost too."""
        top = self.highest_index
        if self.end is not None:
            top = max(top, self.end.produced - self.end.ring_dropped)
        return top - self.received

    def balance(self):
        """produced - (received + gaps + ring_dropped) after the end: 0 when every sample is accounted for."""
        return self.end.produced - (self.received + self.gaps + self.ring_dropped)


# ---- intervals -----------------------------------------------------------------------------------------------

class HostIntervals:
    """One host's samples cut into intervals of its own clock: interval n holds the samples taken in
    [t0 + n*every, t0 + (n+1)*every), t0 being the run's first sample: the earliest in the datagram that starts
    at index 0 (or, when that one is lost, in what arrived within SETTLE_NS of the first datagram; until then
    samples wait). With a known number of intervals (--for), a sample beyond the last is kept in the last: the
    kernel's own timer ended the run at its own moment, a tick after the host's idea of the end is still the
    run's."""

    SETTLE_NS = 500000000

    def __init__(self, every_ns, count=None):
        self.every_ns = every_ns
        self.count = count
        self.t0 = None
        self.pending = collections.defaultdict(list)
        self.written_below = 0     # every interval below this one has been handed out
        self.late = 0              # samples that arrived after their interval was written: put in the next one
        self._early = []           # before t0 is known
        self._first_time = None
        self._earliest = None

    def offer(self, d):
        """Takes the samples of one (new) datagram."""
        if self.t0 is not None:
            self.add(d.samples)
            return
        if self._first_time is None:
            self._first_time = d.time_ns
        times = [s.time_ns for s in d.samples] + ([d.time_ns] if d.first == 0 and not d.samples else [])
        if times:
            self._earliest = min(times + ([self._earliest] if self._earliest is not None else []))
        self._early.extend(d.samples)
        if d.first == 0 or d.time_ns - self._first_time >= self.SETTLE_NS:
            self.settle()

    def settle(self):
        """Fixes t0 from what has arrived (at the latest when the run ends)."""
        if self.t0 is not None:
            return
        self.t0 = self._earliest if self._earliest is not None else self._first_time
        if self.t0 is None:
            return
        early, self._early = self._early, []
        self.add(early)

    def index(self, time_ns):
        n = max(0, (time_ns - self.t0) // self.every_ns)
        return n if self.count is None else min(n, self.count - 1)

    def add(self, samples):
        for s in samples:
            n = self.index(s.time_ns)
            if n < self.written_below:
                self.late += 1
                n = self.written_below
            self.pending[n].append(s)

    def bounds(self, n):
        return self.t0 + n * self.every_ns, self.t0 + (n + 1) * self.every_ns

    def take(self, n):
        """The samples of interval n (written from now on: later ones go to n + 1)."""
        self.written_below = max(self.written_below, n + 1)
        return self.pending.pop(n, [])

    def last_index(self):
        return max(self.pending, default=self.written_below - 1)


def interval_count(for_s, every_s):
    """How many intervals a run of for_s seconds has, of every_s seconds each (the last may be shorter)."""
    return max(1, math.ceil(for_s / every_s - 1e-9))
