"""tests/integration/stream_rx.py: a host receiver for `profile stream` (the wire format is kernel/profiler/stream_codec.h)
for the integration tests and the soak: a UDP socket on 127.0.0.1 (the guest's 10.0.2.2 under QEMU's user
network) read by a thread, every datagram parsed strictly, and the run's accounting kept -- sample indexes seen
(so gaps are lost samples), datagram sequence numbers (the end line's three copies counted once), heartbeats,
and each sample's time, pid and label set for the label checks. Each datagram is first read by
scripts/kprof_stream.py's parse_datagram (the decoder profexport uses), then checked against this module's own
exact grammar."""

import os
import re
import socket
import sys
import threading
import time

SCRIPTS = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "scripts")
if SCRIPTS not in sys.path:
    sys.path.insert(0, SCRIPTS)
import kprof_stream  # noqa: E402

HEADER = re.compile(
    r"# kprof stream v2 run=([0-9a-f]{8}) seq=(0|[1-9]\d*) first=(0|[1-9]\d*) samples=(0|[1-9]\d?) "
    r"ring_dropped=(0|[1-9]\d*) unsent=(0|[1-9]\d*) time_ns=(0|-?[1-9]\d*) source=([!-~]{1,63}) "
    r"period=(0|[1-9]\d*) unit=(ns|cycles) cpus=(0|[1-9]\d*) build_id=(none|(?:[0-9a-f]{2}){1,32})\Z")
END = re.compile(
    r"# kprof stream end run=([0-9a-f]{8}) seq=(0|[1-9]\d*) produced=(0|[1-9]\d*) ring_dropped=(0|[1-9]\d*) "
    r"unsent=(0|[1-9]\d*) reason=(stopped|time|error)\Z")
# the raw v2 sample line: cpu, pid, time, labels, period, context (kernel/profiler/raw.h: the marks, or a wall
# sample's state), frames
SAMPLE = re.compile(r"s (0|[1-9]\d*) (0|[1-9]\d*) (0|-?[1-9]\d*) (\S+) (?:0|[1-9]\d*) "
                    r"(?P<context>-|running|runnable|waiting=(?:sleep|input|net|task|device)"
                    r"|(?:irqs-off|in-irq|let-in=(?:0|[1-9]\d*))(?:,(?:in-irq|let-in=(?:0|[1-9]\d*)))*)"
                    r"(?P<frames>(?: 0x(?:0|[1-9a-f][0-9a-f]{0,15})){1,8})\Z")


class StreamProblem(AssertionError):
    pass


# Each CPU's ring (kernel/profiler_ring.h) and the window's drain step (kernel/profiler/run.h).
RING_RECORDS, DRAIN_MS = 1024, 50
END_COPIES = 3  # a run's end line, sent this many times


def stream_task_cpu_behind(status, ticks_before, ticks_after):
    """The kernel's own evidence for a stream's ring drops: how many ticks fewer the CPU its task runs on (the
    status's `of cpu N`) took than the busiest CPU between two `cpus` readings ({cpu: ticks}). A vCPU the host
    did not run while the others filled their rings falls behind; a stream task late on a CPU that ticked is the
    kernel's own fault. None when the status names no CPU."""
    m = re.search(r"task \d+\.\d% of cpu (\d+)", status)
    if not m:
        return None
    took = {cpu: ticks_after[cpu] - ticks_before[cpu] for cpu in ticks_after}
    return max(took.values()) - took[int(m.group(1))]


def stream_starved_by_the_host(status, ticks_before, ticks_after, hz, slowed_ms=0):
    """Whether a stream's ring drops are the host's doing: the stream task's CPU took a ring's worth of ticks, less
    two drains' (and the drains deliberately slowed by slowed_ms), fewer than the busiest CPU between the two
    `cpus` readings (stream_task_cpu_behind). Otherwise they are the kernel's and fail."""
    behind = stream_task_cpu_behind(status, ticks_before, ticks_after)
    return behind is not None and behind >= RING_RECORDS - (slowed_ms + 2 * DRAIN_MS) * hz // 1000


class Run:
    """What arrived of one stream run."""

    def __init__(self, run):
        self.run = run
        self.header = None          # the first data header's fields (source, period, unit, cpus, build_id)
        self.seqs = set()
        self.datagrams = 0          # distinct datagrams (the end's copies once)
        self.end_copies = 0
        self.indexes = set()        # sample indexes received
        self.samples = []           # (index, cpu, pid, time_ns, labels, frames)
        self.contexts = {}          # index -> the sample's context word, for those not "-" (the report's marks)
        self.heartbeats = []        # host time.monotonic() of each samples=0 datagram
        self.arrivals = []          # (host time.monotonic(), samples) per data datagram
        self.last_ring_dropped = 0
        self.last_unsent = 0
        self.end = None             # dict of the end line

    @property
    def received(self):
        return len(self.indexes)

    def gaps(self):
        """Sample indexes below the highest `first + samples` seen that never arrived."""
        top = max(self.indexes) + 1 if self.indexes else 0
        if self.end is not None:
            top = self.end["produced"] - self.end["ring_dropped"]
        return top - len(self.indexes)


class Receiver:
    """Listens on 127.0.0.1:port (port 0: any free one) until close(); every datagram is parsed, and a malformed
    one is kept in problems (never silently skipped)."""

    def __init__(self, port=0):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16 << 20)
        self.sock.bind(("127.0.0.1", port))
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.runs = {}
        self.problems = []
        self.bytes = 0
        self._lock = threading.Lock()
        self._stop = False
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def close(self):
        self._stop = True
        self._thread.join(5)
        self.sock.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _loop(self):
        while not self._stop:
            try:
                data = self.sock.recv(65536)
            except socket.timeout:
                continue
            except OSError:
                return
            with self._lock:
                self.bytes += len(data)
                try:
                    self._take(data, time.monotonic())
                except StreamProblem as e:
                    self.problems.append("%s: %r" % (e, data[:200]))

    def _take(self, data, now):
        try:
            kprof_stream.parse_datagram(data)  # its size, ASCII, the newline, the header's fields, the samples
        except kprof_stream.StreamError as e:
            raise StreamProblem(str(e)) from None
        lines = data.decode("ascii")[:-1].split("\n")
        m = END.match(lines[0])
        if m:
            if len(lines) != 1:
                raise StreamProblem("an end line with more after it")
            run = self._run(m.group(1))
            end = dict(seq=int(m.group(2)), produced=int(m.group(3)), ring_dropped=int(m.group(4)),
                       unsent=int(m.group(5)), reason=m.group(6))
            run.end_copies += 1
            if run.end is not None:
                if run.end != end:
                    raise StreamProblem("two different end lines for one run")
                return
            run.end = end
            self._seq(run, end["seq"])
            return
        m = HEADER.match(lines[0])
        if not m:
            raise StreamProblem("first line is neither a header nor an end line")
        run = self._run(m.group(1))
        seq, first, count = int(m.group(2)), int(m.group(3)), int(m.group(4))
        fixed = dict(source=m.group(8), period=int(m.group(9)), unit=m.group(10), cpus=int(m.group(11)),
                     build_id=m.group(12))
        if run.header is None:
            run.header = fixed
        elif run.header != fixed:
            raise StreamProblem("the run's fixed fields changed: %s then %s" % (run.header, fixed))
        if len(lines) != 1 + count:
            raise StreamProblem("header says %d samples, %d lines follow" % (count, len(lines) - 1))
        if seq in run.seqs:
            raise StreamProblem("seq %d twice" % seq)
        self._seq(run, seq)
        run.last_ring_dropped = max(run.last_ring_dropped, int(m.group(5)))
        run.last_unsent = max(run.last_unsent, int(m.group(6)))
        if count == 0:
            run.heartbeats.append(now)
        run.arrivals.append((now, count))
        for i, line in enumerate(lines[1:]):
            s = SAMPLE.match(line)
            if not s:
                raise StreamProblem("bad sample line %r" % line)
            index = first + i
            if index in run.indexes:
                raise StreamProblem("sample index %d twice" % index)
            run.indexes.add(index)
            frames = tuple(int(f, 16) for f in s.group("frames").split())
            if s.group("context") != "-":
                run.contexts[index] = s.group("context")
            run.samples.append((index, int(s.group(1)), int(s.group(2)), int(s.group(3)), s.group(4), frames))

    def _run(self, run_id):
        run = self.runs.get(run_id)
        if run is None:
            run = self.runs[run_id] = Run(run_id)
        return run

    @staticmethod
    def _seq(run, seq):
        run.seqs.add(seq)
        run.datagrams += 1

    # ---- for the tests ----
    def run(self, run_id):
        with self._lock:
            return self.runs.get(run_id)

    def wait_end(self, run_id, timeout):
        """The run once its end line arrived, and its copies (the kernel sends three: END_COPIES) or 5 s more for
        them (a lost copy is UDP's); StreamProblem at the deadline."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._lock:
                run = self.runs.get(run_id)
                if run is not None and run.end is not None:
                    break
            time.sleep(0.05)
        else:
            raise StreamProblem("no end line of run %s within %.0f s (runs seen: %s)"
                                % (run_id, timeout, sorted(self.runs)))
        copies_by = time.monotonic() + 5
        while time.monotonic() < copies_by:
            with self._lock:
                if run.end_copies >= END_COPIES:
                    break
            time.sleep(0.05)
        return run

    def check_accounted(self, run):
        """Every sample accounted for: received + ring_dropped + unsent == produced, no index beyond what was
        drained, no seq missing. Returns (received, ring_dropped, unsent, produced)."""
        end = run.end
        drained = end["produced"] - end["ring_dropped"]
        if run.indexes and max(run.indexes) >= drained:
            raise StreamProblem("a sample index %d at or beyond the %d drained" % (max(run.indexes), drained))
        missing_seqs = set(range(end["seq"] + 1)) - run.seqs
        if run.received + end["ring_dropped"] + end["unsent"] != end["produced"]:
            raise StreamProblem("received %d + ring_dropped %d + unsent %d != produced %d (%d datagrams missing: "
                                "%s)" % (run.received, end["ring_dropped"], end["unsent"], end["produced"],
                                         len(missing_seqs), sorted(missing_seqs)[:10]))
        return run.received, end["ring_dropped"], end["unsent"], end["produced"]
