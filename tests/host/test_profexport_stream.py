"""scripts/profexport --every against fake streaming kernels, and scripts/kprof_stream.py's parser and accounting,
without QEMU -- the latter also against the kernel's own packer (kernel/profiler/stream_codec.c, built here with
tests/host/kernel_stream.c): its datagrams, failed sends and ring drops included, parse and add up here.

A FakeStreamKernel answers the UDP shell (the token round trip, a key's MAC checked) and, on `profile stream PORT
SECONDS all`, streams as the kernel's format says (kernel/profiler/stream_codec.h): every 50 ms the samples of four
CPUs at 100 Hz since the last drain, packed into datagrams of at most 1472 bytes, a heartbeat when there are
none, the end three times. Its clock is this machine's, so its intervals are real seconds; its samples carry
the label phase=N, N the interval of the run it was taken in, so a sample filed in the wrong interval shows.
It can lose, duplicate and reorder datagrams, drop samples in its rings, fail to send some (unsent), send from
another build, and share its address with another host.

Needs gcc, binutils, protoc and golang-go (scripts/deps.sh), like test_kprof_profile.py.
"""

import os
import random
import re
import signal
import socket
import subprocess
import sys
import threading
import time

import pytest

import host_build  # noqa: E402
from host_build import PROFEXPORT, TOP, Tiny  # noqa: E402

sys.path.insert(0, os.path.join(TOP, "scripts"))
import kprof_profile as kp  # noqa: E402
import kprof_stream as ks  # noqa: E402
import kprof_wire  # noqa: E402
sys.path.insert(0, os.path.join(TOP, "tests", "integration"))
from kprof_pprof import go_pprof, pprof_schema  # noqa: E402

PERIOD_NS = 10000000
CPUS = 4
DRAIN_S = 0.05


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return Tiny(str(tmp_path_factory.mktemp("tiny")))


@pytest.fixture(scope="module", autouse=True)
def pb2():
    return pprof_schema()


# ---- the format --------------------------------------------------------------------------------------------------

def header(**over):
    f = dict(run="0a1b2c3d", seq=0, first=0, count=0, ring_dropped=0, unsent=0, time_ns=5, source="tick",
             period=PERIOD_NS, cpus=CPUS, build_id="ab" * 20)
    f.update(over)
    return ks.header_line(**f)


def test_datagrams_parse_back():
    smp = [kp.Sample(1, 7, 123, (("job", "a"),), (0x1000, 0x2000), kp.REC_IRQS_OFF | kp.REC_IN_IRQ, 0, 2100000),
           kp.Sample(3, 0, 130, (), (0x10,), kp.REC_LET_IN, 19400, 10000000), kp.Sample(2, 5, 131, (), (0x20,))]
    ((data, first, count),) = ks.pack(smp, 5, lambda f, k: header(first=f, count=k, seq=9, ring_dropped=2,
                                                                    unsent=1, time_ns=140))
    assert (first, count) == (5, 3)
    d = ks.parse_datagram(data)
    assert (d.run, d.seq, d.first, d.ring_dropped, d.unsent, d.time_ns) == ("0a1b2c3d", 9, 5, 2, 1, 140)
    assert (d.source, d.period, d.unit, d.cpus, d.build_id) == ("tick", PERIOD_NS, "ns", CPUS, "ab" * 20)
    assert d.samples == smp
    cycles = ks.parse_datagram((header(period=2100000, unit="cycles", source="pmu/nmi-x") + "\n").encode())
    assert (cycles.period, cycles.unit) == (2100000, "cycles")
    e = ks.parse_datagram((ks.end_line("0a1b2c3d", 10, 100, 2, 1, "time") + "\n").encode())
    assert e == ks.End("0a1b2c3d", 10, 100, 2, 1, "time")
    heartbeat = ks.parse_datagram((header(time_ns=-3) + "\n").encode())
    assert heartbeat.samples == [] and heartbeat.time_ns == -3


def test_packing_never_passes_1472_bytes():
    frames = tuple(0xffffffff80000000 + i * 0x1111 for i in range(8))
    smp = [kp.Sample(i % 64, 100000 + i, 10 ** 15 + i, (("service", "x" * 20), ("k", "v" * 20)), frames)
           for i in range(500)]
    packed = ks.pack(smp, 0, lambda f, k: header(first=f, count=k, seq=10 ** 6, time_ns=10 ** 18, cpus=64))
    assert len(packed) > 1 and all(len(d) <= ks.DATAGRAM_MAX for d, _, _ in packed)
    assert max(len(d) for d, _, _ in packed) > ks.DATAGRAM_MAX - 250, "the datagrams are filled"
    back = [s for d, _, _ in packed for s in ks.parse_datagram(d).samples]
    assert back == smp
    assert [f for _, f, _ in packed] == [sum(k for _, _, k in packed[:i]) for i in range(len(packed))]


@pytest.mark.parametrize("data, why", [
    (b"", "no newline"),
    (b"# kprof stream v1 run=0a1b2c3d seq=0", "no newline"),
    (b"# kprof stream v1 run=0a1b2c3d\n", "stream format v1, this reads v2"),
    (b"hello\n", "not a stream datagram"),
    (("#" * 1473).encode(), "a 1473-byte datagram"),
    (b"\xff\n", "not ASCII"),
    ((header(count=1) + "\n").encode(), "the header says 1 samples, 0 sample lines arrived"),
    ((header() + "\ns 0 1 2 - 1 - 0x10\n").encode(), "the header says 0 samples, 1 sample lines arrived"),
    ((header(count=1) + "\ns 9 1 2 - 1 - 0x10\n").encode(), "cpu 9, but the header says 4 cpus"),
    ((header(count=1) + "\ns 0 1 2 - 1 - zz\n").encode(), "bad address"),
    ((header(count=1) + "\ns 0 1 2 - 0x10\n").encode(), "not a sample line"),
    ((header(count=1) + "\ns 0 1 2 - 1 irqs_off 0x10\n").encode(), "bad context"),
    ((header(unit="s") + "\n").encode(), "bad unit=s"),
    ((header(run="0A1B2C3D") + "\n").encode(), "bad run=0A1B2C3D"),
    ((header().replace("seq=0", "seq=01") + "\n").encode(), "bad seq=01"),
    ((header(period=0) + "\n").encode(), "impossible period=0"),
    ((header(build_id="xyz") + "\n").encode(), "bad build_id=xyz"),
    ((header().replace(" cpus=4", "") + "\n").encode(), "lacks cpus"),
    ((header() + " seq=1\n").encode(), "seq= twice"),
    (b"# kprof stream end run=0a1b2c3d seq=1 produced=1 ring_dropped=0 unsent=0 reason=bored\n", "bad reason"),
    (b"# kprof stream end run=0a1b2c3d seq=1 produced=1 ring_dropped=0 unsent=0 reason=time\nx\n", "more than"),
])
def test_broken_datagrams_are_refused(data, why):
    with pytest.raises(ks.StreamError, match=re.escape(why)):
        ks.parse_datagram(data)


def data(seq, first, n, **over):
    smp = [kp.Sample(0, 1, first + i, (), (0x10,)) for i in range(n)]
    f = dict(run="0a1b2c3d", seq=seq, first=first, ring_dropped=0, unsent=0, time_ns=first + n, source="tick",
             period=PERIOD_NS, unit="ns", cpus=CPUS, build_id="ab" * 20, samples=smp)
    f.update(over)
    return ks.Data(**f)


def test_the_account_counts_duplicates_once_and_gaps_exactly():
    a = ks.RunAccount("0a1b2c3d")
    assert a.take(data(0, 0, 10))
    assert not a.take(data(0, 0, 10)), "a duplicate adds nothing"
    assert a.take(data(2, 20, 5, ring_dropped=3, unsent=4))      # 10..19: seq 1 lost or late
    assert (a.received, a.gaps, a.duplicates, a.ring_dropped, a.unsent) == (15, 10, 1, 3, 4)
    assert a.settled_gaps() == 0, "a gap just below the newest datagram may be one overtaken"
    assert a.take(data(1, 10, 4, ring_dropped=1))                 # late, not lost: cumulative counts never fall
    assert (a.received, a.gaps, a.ring_dropped) == (19, 6, 3)
    assert a.take(data(5, 30, 1, time_ns=26 + ks.SETTLE_NS))      # 25..29 missing too, but only just
    assert (a.gaps, a.settled_gaps()) == (11, 6), "14..19 settled, 25..29 not yet"
    assert a.take(data(3, 14, 6))                                 # very late after all
    assert (a.received, a.gaps, a.settled_gaps()) == (26, 5, 0)
    assert a.take(data(4, 25, 5))
    assert (a.received, a.gaps, a.settled_gaps()) == (31, 0, 0)
    assert a.take(ks.End("0a1b2c3d", 6, 45, 5, 4, "stopped"))
    # indexes 31..39 never came: the end's produced says so (45 - 5 dropped = 40 drained)
    assert (a.gaps, a.settled_gaps(), a.balance()) == (9, 9, 0)
    assert not a.take(ks.End("0a1b2c3d", 6, 45, 5, 4, "stopped")), "the end's repeats"
    assert a.duplicates == 1, "the end's repeats are not duplicates"


def test_intervals_follow_the_kernel_clock():
    iv = ks.HostIntervals(100, count=3)
    iv.offer(data(1, 60, 1))                   # not the run's first datagram: t0 waits
    assert iv.t0 is None
    iv.offer(data(0, 0, 1)._replace(samples=[kp.Sample(0, 1, 50, (), (0x10,))]))
    assert iv.t0 == 50, "t0 is the first sample of the datagram that starts at index 0"
    assert [s.time_ns for s in iv.pending[0]] == [60, 50]
    iv.pending.clear()
    iv.add([kp.Sample(0, 1, t, (), (0x10,)) for t in (40, 50, 149, 150, 349, 999)])
    assert [s.time_ns for s in iv.take(0)] == [40, 50, 149], "before t0: the first interval"
    assert [s.time_ns for s in iv.take(1)] == [150]
    iv.add([kp.Sample(0, 1, 60, (), (0x10,))])
    assert iv.late == 1
    assert [s.time_ns for s in iv.take(2)] == [349, 999, 60], "past the last: the last (and a late one)"
    lost_first = ks.HostIntervals(100)
    lost_first.offer(data(1, 70, 1))
    lost_first.offer(data(2, 71, 1, time_ns=71 + ks.HostIntervals.SETTLE_NS))
    assert lost_first.t0 == 70, "index 0 never came: the earliest that arrived in time"
    assert ks.interval_count(30, 10) == 3 and ks.interval_count(31, 10) == 4 and ks.interval_count(0.5, 1) == 1


# ---- the kernel's own packer, parsed here --------------------------------------------------------------------



@pytest.fixture(scope="module")
def kernel_stream(tmp_path_factory):
    """tests/host/kernel_stream.c built against the kernel's packer; run(script) -> ([(bytes, ok)], end)."""
    exe = host_build.harness("kernel_stream")

    def run(script):
        done = subprocess.run([exe], input="\n".join(script).encode() + b"\n", capture_output=True, timeout=60)
        assert done.returncode == 0, done.stderr
        out, datagrams, end = done.stdout, [], None
        while out:
            head, _, out = out.partition(b"\n")
            m = re.fullmatch(rb"@@datagram (\d+) (OK|FAIL)", head)
            if m:
                n = int(m.group(1))
                datagrams.append((out[:n], m.group(2) == b"OK"))
                out = out[n:]
                continue
            m = re.fullmatch(rb"@@end (\d+) (\d+) (\d+)", head)
            assert m, head
            end = tuple(int(x) for x in m.groups())
        return datagrams, end
    return run


def test_the_kernels_datagrams_parse_and_add_up_here(kernel_stream):
    rng = random.Random(17)
    labels = [(("job", "a"),), (("cmd", "x"), ("job", "b")), (("k" * 15, "v" * 23),)]
    script = ["init 0a1b2c3d 4 1000000 %s tick" % ("ab" * 20),
              "label 0 job=a", "label 1 job=b,cmd=x", "label 2 %s=%s" % ("k" * 15, "v" * 23)]
    records, now, dropped = [], 1000, 0
    for i in range(3000):
        now += rng.randrange(0, 3000)
        frames = [0xffffffff80000000 + rng.randrange(1 << 20) for _ in range(rng.randint(1, 8))]
        label = rng.choice([None, 0, 1, 2])
        cpu, pid = rng.randrange(4), rng.randrange(50)
        flags = rng.choice([0, 0, 0, kp.REC_IRQS_OFF, kp.REC_IN_IRQ, kp.REC_IRQS_OFF | kp.REC_IN_IRQ, kp.REC_LET_IN])
        held = rng.randrange(1 << 32) if flags & kp.REC_LET_IN else 0
        period = rng.choice([1000000, 1000000, 2000000, 64000000, 0, 0xFFFFFFFF])
        records.append(kp.Sample(cpu, pid, now - 500, () if label is None else labels[label], tuple(frames), flags,
                                 held, period))
        script.append("rec %d %d %d %d %s %d %d %d %s" % (now, cpu, pid, now - 500, "-" if label is None else label,
                                                          flags, held, period, " ".join("%x" % f for f in frames)))
        if i % 400 == 399:
            dropped += rng.randrange(5)
            script += ["dropped %d" % dropped, "fail %d" % rng.randrange(3), "flush %d" % now]
        if i == 1500:
            script.append("heartbeat %d" % (now + 2 * 10 ** 9))
    script.append("finish time %d" % (now + 10))
    datagrams, (produced, sent, unsent) = kernel_stream(script)
    assert unsent > 0 and dropped > 0, "the script made sends fail and rings drop"
    account = ks.RunAccount("0a1b2c3d")
    got = []
    index = 0
    for data, ok in datagrams:
        assert len(data) <= ks.DATAGRAM_MAX
        d = ks.parse_datagram(data)
        if isinstance(d, ks.Data):
            assert d.first == index, "first follows on, through failed sends too"
            index += len(d.samples)
            assert (d.source, d.period, d.unit, d.cpus, d.build_id) == ("tick", 1000000, "ns", 4, "ab" * 20)
        if ok:
            account.take(d)
            if isinstance(d, ks.Data):
                got.extend(d.samples)
    assert sum(1 for data, _ in datagrams if data.startswith(b"# kprof stream end ")) == 3
    assert [s for s in records if s in got] == got, "what arrived is the records, in order"
    assert len(got) == sent == account.received
    assert account.end == ks.End("0a1b2c3d", account.end.seq, produced, dropped, unsent, "time")
    assert produced == len(records) + dropped
    assert account.gaps == unsent and account.balance() == 0


# ---- a fake streaming kernel -----------------------------------------------------------------------------------

class FakeStreamKernel:
    """A UDP shell that starts and stops a stream; see the module's comment. Options:
    run_in_reply  the start reply names the run (else the host learns it from the first datagram);
    lose, dup     sets of datagram numbers (in sending order) not sent / sent twice;
    reorder       every batch of datagrams is sent last first;
    ring_drop     every Nth drain, that drain's first sample is dropped in the ring instead (no index);
    unsent        every Nth datagram fails to send: its samples count as unsent, their indexes a gap;
    build_id      what the datagrams say (default: the ELF's)."""

    def __init__(self, build_id, frames, every_s, key=None, run_in_reply=True, lose=(), dup=(), reorder=False,
                 ring_drop=0, unsent=0, send_from=None, mute_after=None):
        self.build_id, self.frames, self.every_ns, self.key = build_id, frames, int(every_s * 1e9), key
        self.run_in_reply, self.lose, self.dup, self.reorder = run_in_reply, set(lose), set(dup), reorder
        self.ring_drop_every, self.unsent_every = ring_drop, unsent
        self.mute_after_ns = None if mute_after is None else int(mute_after * 1e9)
        self.run = "%08x" % random.getrandbits(32)
        self.shell = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.shell.bind(("127.0.0.1", 0))
        self.port = self.shell.getsockname()[1]
        self.out = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)   # another port, as the kernel's task sends
        self.out.bind((send_from or "127.0.0.1", 0))
        self.token = b"%032x" % random.getrandbits(128)
        self.requests = []
        self.sent_samples = 0       # unique samples that left
        self.drained = self.ring_dropped = self.unsent = self.datagrams = self.seq = self.attempts = 0
        self.streaming = threading.Event()
        self.stop_event = threading.Event()
        self.ended = None
        self.sender = None
        self.closing = False
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    @property
    def spec(self):
        return "127.0.0.1:%d" % self.port

    # -- the shell
    def serve(self):
        for req, peer in host_build.datagrams(self, self.shell, 0.2):
            line = self.authenticate(req)
            if line is None:
                self.shell.sendto(b"# udpsh token=%s\n" % self.token, peer)
                continue
            self.requests.append(line)
            text, status = self.command(line, peer)
            for d in kprof_wire.reply_datagrams(len(self.requests), text.encode(), status):
                self.shell.sendto(d, peer)

    def authenticate(self, req):
        m = re.fullmatch(rb"token=([0-9a-f]{32}) (?:id=\d+ )?(?:counter=(\d+) mac=([0-9a-f]{64}) )?(.*\n)", req, re.S)
        if not m or m.group(1) != self.token:
            return None
        line = m.group(4)
        if self.key is not None:
            assert m.group(2), "a keyed kernel got an unkeyed request"
            want = kprof_wire.request_mac(self.key, self.token, int(m.group(2)), line)
            assert want == m.group(3), "bad MAC"
        return line.decode().rstrip("\n")

    def command(self, line, peer):
        m = re.fullmatch(r"profile stream (\d+) (\d+) all", line)
        if m:
            if self.sender is not None:
                return "profile stream: busy (a stream to %s:%s)\n" % peer, 1
            self.dest = (peer[0], int(m.group(1)))
            self.seconds = int(m.group(2))
            self.sender = threading.Thread(target=self.stream, daemon=True)
            self.sender.start()
            self.streaming.wait(5)
            run = " run=%s" % self.run if self.run_in_reply else ""
            return "profile stream: to %s:%d for %ds%s\n" % (self.dest[0], self.dest[1], self.seconds, run), 0
        if line == "profile stream stop":
            self.stop_event.set()
            if self.sender:
                self.sender.join(5)
            return "profile stream: stopped\n", 0
        return "usage: profile stream ...\n", 1

    # -- the stream
    def label(self, t):
        return (("phase", str((t - self.start_ns) // self.every_ns)),)

    def muted(self):
        return self.mute_after_ns is not None and time.monotonic_ns() - self.start_ns >= self.mute_after_ns

    def send(self, datagram):
        n = self.datagrams
        self.datagrams += 1
        if n in self.lose or self.muted():
            return
        self.out.sendto(datagram, self.dest)
        if n in self.dup:
            self.out.sendto(datagram, self.dest)

    def stream(self):
        self.start_ns = time.monotonic_ns()
        next_tick = [self.start_ns] * CPUS
        stop_ns = self.start_ns + self.seconds * 1000000000 if self.seconds else None
        drains = 0
        last_sent = 0
        self.streaming.set()
        reason = "stopped"
        while True:
            if self.stop_event.wait(DRAIN_S):
                break
            now = time.monotonic_ns()
            if stop_ns is not None and now >= stop_ns:
                now, reason = stop_ns, "time"
            batch = []
            for cpu in range(CPUS):
                while next_tick[cpu] < now:
                    t = next_tick[cpu]
                    batch.append(kp.Sample(cpu, 10 + cpu, t, self.label(t), self.frames))
                    next_tick[cpu] += PERIOD_NS
            batch.sort(key=lambda s: s.time_ns)
            drains += 1
            if self.ring_drop_every and drains % self.ring_drop_every == 0 and batch:
                batch.pop(0)
                self.ring_dropped += 1
            packed = []
            first = self.drained
            self.drained += len(batch)
            if batch:
                def head(f, k):   # sized for the longest sequence number and count this test can reach
                    return ks.header_line(self.run, 99999999, f, k, self.ring_dropped + 9999, self.unsent + 9999,
                                          now, "tick", PERIOD_NS, CPUS, self.build_id)
                packed = ks.pack(batch, first, head)
            elif now - last_sent >= 500000000:
                packed = [(b"", self.drained, 0)]
            datagrams = []
            for _, f, k in packed:
                self.attempts += 1
                if self.unsent_every and k and self.attempts % self.unsent_every == 0:
                    self.unsent += k
                    continue
                body = ks.header_line(self.run, self.seq, f, k, self.ring_dropped, self.unsent, now, "tick",
                                      PERIOD_NS, CPUS, self.build_id) + "\n"
                body += "".join(ks.sample_line(s) + "\n" for s in batch[f - first:f - first + k])
                assert len(body) <= ks.DATAGRAM_MAX
                datagrams.append((body.encode(), k))
                self.seq += 1
            if self.reorder:
                datagrams.reverse()
            for d, k in datagrams:
                n = self.datagrams
                if n not in self.lose and not self.muted():
                    self.sent_samples += k
                self.send(d)
                last_sent = now
            if reason == "time":
                break
        self.ended = reason
        end = (ks.end_line(self.run, self.seq, self.drained + self.ring_dropped, self.ring_dropped, self.unsent,
                           reason) + "\n").encode()
        for _ in range(3):
            if not self.muted():
                self.out.sendto(end, self.dest)

    def close(self):
        self.stop_event.set()
        self.closing = True
        self.thread.join(5)
        self.shell.close()
        self.out.close()


# ---- profexport --every ------------------------------------------------------------------------------------------

def start(tiny, outdir, kernels, *extra, env=None):
    args = [PROFEXPORT, "--elf", tiny.elf, "-o", str(outdir), "--udp"] + [k.spec for k in kernels] + list(extra)
    return subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)


def run(tiny, outdir, kernels, *extra, env=None, timeout=60):
    p = start(tiny, outdir, kernels, *extra, env=env)
    out, err = p.communicate(timeout=timeout)
    return p.returncode, out, err.decode()


def interval_files(outdir):
    names = sorted(os.listdir(str(outdir)))
    pbs = [n for n in names if n.endswith(".pb.gz")]
    for n in pbs:
        assert re.fullmatch(r"kprof-\d{4}-\d{8}T\d{6}Z\.pb\.gz", n), n
        assert n[:-len(".pb.gz")] + ".folded" in names
    assert [int(n[6:10]) for n in pbs] == list(range(1, len(pbs) + 1))
    assert not [n for n in names if n.endswith(".tmp")]
    return [os.path.join(str(outdir), n[:-len(".pb.gz")]) for n in pbs]


def raw_samples(path):
    """(count, {label key: {values}}, comments, duration_ns) of a pprof file, from `go tool pprof -raw`."""
    text = go_pprof(path, "-raw")
    comments = re.findall(r"(?m)^Comment: (.*)$", text)
    samples = text.split("Samples:", 1)[1].split("Locations", 1)[0]
    count = 0
    labels = {}
    for m in re.finditer(r"(?m)^\s+(\d+)\s+(\d+): [\d ]+\n((?:\s+\w+:\[.*\]\n)*)", samples):
        count += int(m.group(1))
        for k, v in re.findall(r"(\w+):\[([^\]]*)\]", m.group(3)):
            labels.setdefault(k, set()).add(v)
    duration = re.search(r"(?m)^Duration: (\S+)", text)
    return count, labels, comments, duration.group(1) if duration else None


def folded_total(path):
    with open(path + ".folded") as f:
        return sum(int(line.rsplit(" ", 1)[1]) for line in f)


def end_line_figures(err, spec):
    m = re.search(r"(?m)^profexport: %s run ([0-9a-f]{8}) ended \((\w+)\): produced (\d+) = received (\d+) \+ lost "
                  r"(\d+) \((\d+) unsent\) \+ ring drops (\d+)$" % re.escape(spec), err)
    assert m, err
    return m.group(1), m.group(2), [int(x) for x in m.groups()[2:]]


def test_every_writes_an_interval_per_period_with_its_labels(tiny, tmp_path):
    k = FakeStreamKernel(tiny.build_id, tiny.chain, 1)
    try:
        rc, out, err = run(tiny, tmp_path / "out", [k], "--every", "1", "--for", "3")
    finally:
        k.close()
    assert rc == 0, err
    assert k.requests == ["profile stream %d 3 all" % int(re.search(r"to 127\.0\.0\.1:(\d+)",
                                                                      "to %s:%d" % k.dest).group(1))]
    assert k.ended == "time", "the kernel ended the run itself: profexport sent no stop"
    files = interval_files(tmp_path / "out")
    assert len(files) == 3, err
    total = 0
    for n, base in enumerate(files):
        count, labels, comments, duration = raw_samples(base + ".pb.gz")
        assert labels["phase"] == {str(n)}, "interval %d holds samples of another: %s" % (n + 1, labels["phase"])
        assert labels["host"] == {k.spec} and labels["cpu"] == {"0", "1", "2", "3"}
        assert 300 <= count <= 400, "4 cpus at 100 Hz for 1 s: %d" % count
        assert folded_total(base) == count
        assert duration == "1s", duration
        assert re.fullmatch(r"kprof interval %d: start \S+Z duration_ns=1000000000 every_ns=1000000000" % (n + 1),
                            comments[0]), comments
        assert re.fullmatch(r"kprof %s interval %d: run=%s source=tick period_ns=10000000 rate_hz=100 cpus=4 "
                            r"samples=%d lost=0 unsent=0 ring_dropped=0 duplicates=0 late=0 kernel_ns=(\d+)\.\.(\d+)"
                            % (re.escape(k.spec), n + 1, k.run, count), comments[1]), comments
        bounds = [int(x) for x in re.search(r"kernel_ns=(\d+)\.\.(\d+)", comments[1]).groups()]
        assert bounds == [k.start_ns + n * 1000000000, k.start_ns + (n + 1) * 1000000000], "t0: the first sample"
        assert re.search(r"(?m)^profexport: interval %d \(1\.00 s\) -> %s\.pb\.gz: %s %d samples, lost 0 \(0 unsent\), "
                         r"ring drops 0$" % (n + 1, re.escape(base), re.escape(k.spec), count), err), err
        total += count
    run_id, reason, (produced, received, lost, unsent, ring) = end_line_figures(err, k.spec)
    assert (run_id, reason) == (k.run, "time")
    assert (produced, received, lost, unsent, ring) == (k.drained, total, 0, 0, 0)
    top = go_pprof(files[0] + ".pb.gz", "-top")
    assert [l.split() for l in top.splitlines() if re.match(r"\s+\d", l)][0][-1] == "burn_inner", top


def test_loss_duplicates_reordering_drops_and_unsent_are_all_counted(tiny, tmp_path):
    k = FakeStreamKernel(tiny.build_id, tiny.chain, 1, run_in_reply=False, lose={3, 17, 40}, dup={5, 6, 30},
                         reorder=True, ring_drop=4, unsent=11)
    try:
        rc, out, err = run(tiny, tmp_path / "out", [k], "--every", "1", "--for", "3")
    finally:
        k.close()
    assert rc == 0, err
    files = interval_files(tmp_path / "out")
    assert len(files) == 3
    counts = []
    lost_sum = unsent_sum = ring_sum = dup_sum = 0
    for n, base in enumerate(files):
        count, labels, comments, _ = raw_samples(base + ".pb.gz")
        assert labels["phase"] == {str(n)}, "reordered samples filed by their own time"
        m = re.fullmatch(r"kprof \S+ interval \d: run=\S+ source=tick period_ns=10000000 rate_hz=100 cpus=4 "
                         r"samples=(\d+) lost=(\d+) unsent=(\d+) ring_dropped=(\d+) duplicates=(\d+) late=0 kernel_ns=\S+",
                         comments[1])
        assert m and int(m.group(1)) == count, comments
        lost_sum += int(m.group(2))
        unsent_sum += int(m.group(3))
        ring_sum += int(m.group(4))
        dup_sum += int(m.group(5))
        counts.append(count)
    assert sum(counts) == k.sent_samples, "each sample once, duplicates not counted twice"
    assert dup_sum == 3
    _, _, (produced, received, lost, unsent, ring) = end_line_figures(err, k.spec)
    assert produced == k.drained + k.ring_dropped and received == k.sent_samples
    assert unsent == k.unsent > 0 and ring == k.ring_dropped > 0
    assert lost == k.drained - k.sent_samples and lost > unsent, "the three lost datagrams are a gap too"
    assert (lost_sum, unsent_sum, ring_sum) == (lost, unsent, ring), "the intervals add up to the run"
    assert received + lost + ring == produced


@pytest.mark.parametrize("run_in_reply", [True, False])
def test_two_hosts_merged_with_host_labels_keyed(tiny, tmp_path, run_in_reply):
    key = bytes(range(32))
    # one address for both; without the run in the start's reply, the first datagram from the address names it
    ks_ = [FakeStreamKernel(tiny.build_id, tiny.chain, 1, key=key, run_in_reply=run_in_reply) for _ in range(2)]
    env = dict(os.environ, KPROF_UDPSH_KEY=key.hex())
    try:
        rc, out, err = run(tiny, tmp_path / "out", ks_, "--every", "1", "--for", "2", env=env)
    finally:
        for k in ks_:
            k.close()
    assert rc == 0, err
    files = interval_files(tmp_path / "out")
    assert len(files) == 2
    for base in files:
        count, labels, comments, _ = raw_samples(base + ".pb.gz")
        assert labels["host"] == {k.spec for k in ks_}
        assert len(comments) == 3 and all(k.run in " ".join(comments) for k in ks_), comments
    totals = [sum(int(re.search(r"samples=(\d+)", c).group(1)) for base in files
                  for c in raw_samples(base + ".pb.gz")[2][1:] if k.spec in c) for k in ks_]
    for k, total in zip(ks_, totals):
        _, reason, (produced, received, lost, unsent, ring) = end_line_figures(err, k.spec)
        assert (reason, produced, received, lost) == ("time", k.drained, total, 0)


def test_a_silent_host_does_not_hold_up_the_others(tiny, tmp_path):
    live = FakeStreamKernel(tiny.build_id, tiny.chain, 1)
    mute = FakeStreamKernel(tiny.build_id, (0x10,), 1, mute_after=1.5)
    try:
        rc, out, err = run(tiny, tmp_path / "out", [live, mute], "--every", "1", "--for", "14", timeout=90)
    finally:
        live.close()
        mute.close()
    assert rc == 0, err
    assert "profexport: %s: nothing arrived for 10s: its intervals are written without it\n" % mute.spec in err
    files = interval_files(tmp_path / "out")
    assert len(files) == 14, err
    for n, base in enumerate(files):
        count, labels, _, _ = raw_samples(base + ".pb.gz")
        assert labels["host"] == ({live.spec, mute.spec} if n < 1 else {live.spec}) or n == 1, (n, labels["host"])
        assert labels["phase"] >= {str(n)}
    _, reason, (produced, received, lost, _, _) = end_line_figures(err, live.spec)
    assert (reason, lost, received) == ("time", 0, live.drained)
    assert re.search(r"(?m)^profexport: %s run %s: no end datagram arrived: received %d, " % (
        re.escape(mute.spec), mute.run, mute.sent_samples), err), err
    assert mute.requests[-1] == "profile stream stop", "the silent one is stopped"


def test_strangers_and_other_runs_are_ignored(tiny, tmp_path):
    k = FakeStreamKernel(tiny.build_id, tiny.chain, 1)
    # another kernel on the same address streaming a run nobody started here, and one at an address not asked
    same_ip = FakeStreamKernel(tiny.build_id, (0x10,), 1)
    stranger = FakeStreamKernel(tiny.build_id, (0x10,), 1, send_from="127.0.0.2")
    try:
        p = start(tiny, tmp_path / "out", [k], "--every", "1", "--for", "2")
        port = None
        deadline = time.monotonic() + 10
        while port is None and time.monotonic() < deadline:
            if k.requests:
                port = int(k.requests[0].split()[2])
            time.sleep(0.02)
        for other in (same_ip, stranger):
            other.dest, other.seconds = ("127.0.0.1", port), 2
            other.sender = threading.Thread(target=other.stream, daemon=True)
            other.sender.start()
        out, err = p.communicate(timeout=60)
        err = err.decode()
    finally:
        for x in (k, same_ip, stranger):
            x.close()
    assert p.returncode == 0, err
    files = interval_files(tmp_path / "out")
    total = sum(raw_samples(b + ".pb.gz")[0] for b in files)
    assert total == k.sent_samples, "only the host asked"
    assert re.search(r"(?m)^profexport: (\d+) datagrams ignored \(not from the hosts asked, or of no run started "
                     r"here\)$", err), err


def test_another_build_is_refused(tiny, tmp_path):
    k = FakeStreamKernel("cd" * 20, tiny.chain, 1)
    try:
        rc, out, err = run(tiny, tmp_path / "out", [k], "--every", "1", "--for", "3")
    finally:
        k.close()
    assert rc == 1, err
    assert err.endswith("profexport: %s streams another build: build id %s, but %s has %s (its datagrams are "
                        "refused)\n" % (k.spec, "cd" * 20, tiny.elf, tiny.build_id)), err
    assert k.requests[-1] == "profile stream stop", "the stream is stopped"
    assert interval_files(tmp_path / "out") == []


def test_ctrl_c_stops_the_stream_and_writes_the_partial_interval(tiny, tmp_path):
    k = FakeStreamKernel(tiny.build_id, tiny.chain, 1)
    outdir = tmp_path / "out"
    try:
        p = start(tiny, outdir, [k], "--every", "1")
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and not (outdir.exists() and any(n.endswith(".pb.gz")
                                                                            for n in os.listdir(str(outdir)))):
            time.sleep(0.05)
        time.sleep(0.1)                              # the first is written 0.5 s into the second interval
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=30)
        err = err.decode()
    finally:
        k.close()
    assert p.returncode == 0, err
    assert k.requests[0].endswith(" 0 all"), "no --for: until stopped"
    assert k.requests[-1] == "profile stream stop" and k.ended == "stopped"
    assert "profexport: interrupted: stopping the streams, writing the partial interval\n" in err
    files = interval_files(outdir)
    assert len(files) >= 2, err
    for n, base in enumerate(files[:-1]):
        assert raw_samples(base + ".pb.gz")[3] == "1s", "only the last is partial"
    count, labels, comments, duration = raw_samples(files[-1] + ".pb.gz")
    assert labels["phase"] == {str(len(files) - 1)} and 0 < count < 400, count
    partial = int(re.search(r"duration_ns=(\d+)", comments[0]).group(1))
    assert 100000000 < partial < 1000000000, comments[0]
    _, reason, (produced, received, lost, unsent, ring) = end_line_figures(err, k.spec)
    assert reason == "stopped" and lost == 0 and received == produced == k.drained
    assert received == sum(raw_samples(b + ".pb.gz")[0] for b in files)


def test_a_host_that_does_not_start_fails_cleanly(tiny, tmp_path):
    dead = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    dead.bind(("127.0.0.1", 0))
    try:
        p = subprocess.run([PROFEXPORT, "--elf", tiny.elf, "-o", str(tmp_path / "o"), "--udp",
                            "127.0.0.1:%d" % dead.getsockname()[1], "--every", "1"], capture_output=True, timeout=60)
    finally:
        dead.close()
    assert p.returncode == 4
    assert re.fullmatch(rb"profexport: 127\.0\.0\.1:\d+: the stream did not start: 127\.0\.0\.1:\d+: no reply "
                        rb"\(waited 10s\)\n", p.stderr), p.stderr


@pytest.mark.parametrize("args", [
    ["--every", "1"],                                   # no -o
    ["--every", "1", "-o", "d", "--ms", "5"],
    ["--every", "1", "-o", "d", "--folded"],
    ["--every", "0", "-o", "d"],
    ["--every", "1", "-o", "d", "--for", "0"],
    ["--for", "3", "-o", "d"],
])
def test_bad_every_arguments(tiny, args):
    p = subprocess.run([PROFEXPORT, "--elf", tiny.elf, "--udp", "127.0.0.1:1"] + args, capture_output=True,
                       timeout=30)
    assert p.returncode == 2 and p.stderr.count(b"\n") >= 1 and b"error:" in p.stderr, p.stderr
