#!/usr/bin/python3
"""tests/soak/stream_soak.py: the soak's stream leg (issues 17 and 23) -- one kprof at profile.hz=1000 on 4 CPUs
kept busy by `burn ... spans` (each task a new request with a new span every 100 ms, logged), streaming every
sample to a receiver on the host (tests/integration/stream_rx.py) for --seconds, while the shell is used: the
console and the UDP shell run reading commands, `label` gives the burn tasks new sets never seen before (so the
label pool frees and reuses sets while the stream carries them), `profile` (answered busy, naming the stream),
the stream's status line and a refused second start, in an order drawn from one seeded RNG, and the span log is
read as it grows. Then it checks what a long stream must keep: every sample accounted for (received +
ring_dropped + unsent == produced, no index twice, no datagram malformed), the end line with reason time, every
burn sample's span the one current when it was taken (tests/integration/span_check.py), the label pool and the
heap back to their baselines (`label`; `mem`: bytes, blocks and the largest free block), the shell answering.
Then the wall leg (issue 36), on the same kernel: a wall stream (`profile stream ... all wall`: every task every
10 ms, whatever it does) for --wall-seconds while the burn runs beside `work` (4 tasks serving a request every
100 ms, each a span of its own that computes 30% of it and sleeps the rest, logged by the task), the shell used
the same way. Its checks: every sample accounted for, every sample with its task's state (running, runnable or
what it waits on), the work tasks' samples running and waiting on sleep and the console's shell waiting on input,
every burn sample's span current when taken, every work sample's span one its own task logged, the label pool
and the heap back to their baselines.

`make soak` runs each leg for 600 s (SOAK_STREAM_SECONDS, SOAK_WALL_SECONDS), `make soak-short` (part of `make
test`) for 15 and 10 s. It prints its figures and exits non-zero on any failure."""

import os
import random
import re
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(TOP, "tests", "integration"))
sys.path.insert(0, os.path.join(TOP, "scripts"))

from kprof_qemu import LOG_DIR, Kprof, KprofError, poll, uptime  # noqa: E402
from span_check import SpanLog, check_samples, label_pool, span_burn, span_of  # noqa: E402
from stream_rx import Receiver, StreamProblem  # noqa: E402
from kprof_net import HOST_INSIDE, udp_cmd, wait_dhcp  # noqa: E402
from kprof_report import wait_no_burn  # noqa: E402
from work_check import read_work_spans_to_end, start_work, wait_no_work  # noqa: E402
from soak_args import soak_args  # noqa: E402

CPUS = 4
HZ = 1000
BURN_MS = 20000
WORK_MS, WORK_TASKS = 20000, 4  # the wall leg's `work` runs (at most): 4 tasks, a request every 100 ms computing
                                # 30% of it
READING = ["uptime", "ps", "mem", "cpus", "net", "stacks", "lscpu", "profile stream"]
RX_STARTED = re.compile(r"profile stream: run ([0-9a-f]{8}) to \S+ for \d+ s, source \S+, headroom 1\.0 s at 1 kHz "
                        r"per cpu")
RX_STARTED_WALL = re.compile(r"profile stream: run ([0-9a-f]{8}) to \S+ for \d+ s, wall \(every task every 10 ms\), "
                             r"source \S+, headroom 1\.0 s at 1 kHz per cpu")
RX_STATUS = re.compile(r"profile stream: run ([0-9a-f]{8}) to \S+, \d+\.\d s, (\d+) samples/s, sent (\d+), ring "
                       r"dropped (\d+), unsent (\d+), (\d+) datagrams, task (\d+\.\d)% of cpu \d+")


class Failure(Exception):
    pass


def heap(k):
    out = k.cmd("mem")
    m = re.search(r"heap: used (\d+) bytes in (\d+) blocks, peak \d+, free \d+, largest free (\d+)", out)
    if not m:
        raise Failure("mem said:\n%s" % out)
    return tuple(int(g) for g in m.groups())


def burning(k):
    return "running" in k.cmd("burn")


class WorkSpans:
    """`work`'s span log read as it grows (it keeps 2048 entries, 51 s of 4 tasks): every request's span by
    the task that served it, and how many entries were lost before they were read."""

    def __init__(self, k):
        self.k, self.at, self.lost, self.by_span = k, None, 0, {}

    def read(self):
        spans, lost, self.at = read_work_spans_to_end(self.k, self.at)
        self.lost += lost
        for pid, span, _compute, _wait in spans:
            if self.by_span.setdefault(span, pid) != pid:
                raise Failure("work span %d logged by pids %d and %d" % (span, self.by_span[span], pid))


def baselines(k):
    """The heap once it stops moving (bytes, blocks, largest free), and the label pool."""
    base = None
    for _ in range(20):
        now = heap(k)
        if now == base:
            break
        base = now
        time.sleep(0.3)
    return base, label_pool(k)


def back_to_baselines(k, base, pool_base):
    """Waits for the label pool and the heap to come back to their baselines; the pool's figures."""
    last_pool = [None]

    def pool_back():
        last_pool[0] = label_pool(k)
        return last_pool[0]["used"] == pool_base["used"] and last_pool[0]["waiting"] == 0
    try:
        poll("the label pool back to its baseline", pool_back, timeout=20, every=0.3)
    except KprofError:
        raise Failure("label pool %s, baseline %s" % (last_pool[0], pool_base)) from None
    if last_pool[0]["dropped"] != pool_base["dropped"]:
        raise Failure("label sets dropped: %s, baseline %s" % (last_pool[0], pool_base))
    last = [None]

    def back():
        last[0] = heap(k)
        return last[0] == base
    try:
        poll("the heap back to its baseline", back, timeout=20, every=0.3)
    except KprofError:
        raise Failure("heap (bytes, blocks, largest free) %s, baseline %s" % (last[0], base)) from None
    return last_pool[0]


def use_the_shell(k, rng, rx, run_id, wall, pids, figures, shares):
    """One thing a user does while the stream runs, drawn from rng: a reading command on the console or over UDP,
    a label set never given before on a burn task, a `profile` answered busy, or a refused second stream."""
    kind = "wall run" if wall else "run"
    busy_line = re.compile(r"profile: busy: streaming %s %s to %s:%d \(profile stream stop ends it\), "
                           r"\d+ s left" % (kind, run_id, re.escape(HOST_INSIDE), rx.port))
    what = rng.random()
    if what < 0.35:
        line = rng.choice(READING)
        out = k.cmd(line)
        figures["console"] += 1
        if line == "profile stream":
            s = RX_STATUS.fullmatch(out)
            if not s or s.group(1) != run_id:
                raise Failure("the status line said: %s" % out)
            shares.append(float(s.group(7)))
            figures["statuses"] += 1
    elif what < 0.55:
        # UDP may lose a datagram on a loaded host: one miss is counted and retried, two in a row fail the soak
        line = rng.choice(READING)
        try:
            udp_cmd(k.udp_port, line, timeout=20)
        except AssertionError:
            figures["udp_missed"] += 1
            udp_cmd(k.udp_port, line, timeout=20)
        figures["udp"] += 1
    elif what < 0.75:
        # a set never given before: high cardinality, freed once the stream has drained past it
        pid = rng.choice(pids)
        value = figures["labels"]
        out = k.cmd("label %d soak=%s" % (pid, value))
        if out not in ("pid %d labels soak=%s" % (pid, value), "label: no task with pid %d" % pid):
            raise Failure("label said: %s" % out)
        figures["labels"] += 1
    elif what < 0.9:
        out = k.cmd("profile %d" % rng.choice([50, 200, 1000]))
        if not busy_line.fullmatch(out):
            raise Failure("profile during the stream said: %s" % out)
        figures["busy"] += 1
    else:
        out = k.cmd("profile stream %s:%d 5" % (HOST_INSIDE, rx.port + 1))
        if not out.startswith("profile stream: busy: streaming %s %s" % (kind, run_id)):
            raise Failure("a second start said: %s" % out)
        figures["busy"] += 1


def stream_leg(k, rng, seconds, log, wall, verbose):
    """One stream of seconds (wall: a wall stream, with `work` tasks serving requests beside the burn) while the
    shell is used; every sample accounted for, every burn sample's span current when taken, every work sample's
    span one its own task logged. Prints the leg's figures."""
    name = "wall leg" if wall else "stream soak"
    figures = dict(console=0, udp=0, udp_missed=0, labels=0, busy=0, statuses=0, burns=0, span_reads=0, works=0)
    work_log = WorkSpans(k) if wall else None
    work_pids = set()
    # a short leg does not wait out a long run
    burn_ms, work_ms = min(BURN_MS, (seconds + 2) * 1000), min(WORK_MS, (seconds + 2) * 1000)
    with Receiver() as rx:
        pids = span_burn(k, burn_ms, CPUS)
        figures["burns"] += 1
        if wall:
            work_pids.update(start_work(k, work_ms, WORK_TASKS))
            figures["works"] += 1
        out = k.cmd("profile stream %s:%d %d%s" % (HOST_INSIDE, rx.port, seconds, " all wall" if wall else ""))
        m = (RX_STARTED_WALL if wall else RX_STARTED).fullmatch(out)
        if not m:
            raise Failure("profile stream said: %s" % out)
        run_id = m.group(1)
        t_end = time.monotonic() + seconds
        shares = []
        last_read = last_work_read = time.monotonic()
        while time.monotonic() < t_end - 1:
            if not burning(k):
                pids = span_burn(k, burn_ms, CPUS)
                figures["burns"] += 1
            if wall and k.cmd("work").split("\n")[0].endswith("ms"):  # finished: another run
                work_log.read()
                wait_no_work(k)
                work_pids.update(start_work(k, work_ms, WORK_TASKS))
                figures["works"] += 1
            if time.monotonic() - last_read > 10:  # the kernel keeps 8192 entries, 200 s of 4 tasks
                log.read()
                last_read = time.monotonic()
                figures["span_reads"] += 1
            if wall and time.monotonic() - last_work_read > 5:  # 2048 kept, 51 s of 4 tasks
                work_log.read()
                last_work_read = time.monotonic()
            use_the_shell(k, rng, rx, run_id, wall, pids, figures, shares)
            time.sleep(rng.uniform(0.05, 0.6))
            if verbose and rng.random() < 0.05:
                r = rx.run(run_id)
                print("%s: %.0f s left, %d samples received" % (name, t_end - time.monotonic(),
                                                                r.received if r else 0), flush=True)
        run = rx.wait_end(run_id, 60 + seconds * 0.05)
        if rx.problems:
            raise Failure("malformed datagrams: %s" % rx.problems[:5])
        received, dropped, unsent, produced = rx.check_accounted(run)
        if run.end["reason"] != "time":
            raise Failure("the stream ended with reason %s" % run.end["reason"])
        if received == 0:
            raise Failure("no samples received")
        status = k.cmd("profile stream")
        if not status.startswith("profile stream: idle; last run %s" % run_id):
            raise Failure("after the stream the status said: %s" % status)
        arrivals = [t for t, _ in run.arrivals]
        longest_silence = max((b - a for a, b in zip(arrivals, arrivals[1:])), default=0.0)
    if wall:
        # the runs go on after the stream: their log read as it grows until they end
        def work_ended():
            work_log.read()
            return k.cmd("work").split("\n")[0].endswith("ms")
        poll("the work run ended", work_ended, timeout=work_ms / 1000 + 30, every=2)
    wait_no_burn(k)
    log.read()
    if log.lost:
        raise Failure("the span log overwrote %d entries before they were read" % log.lost)
    burn_pids_seen = set(log.by_pid)
    samples = [(pid, t, labels) for _, _, pid, t, labels, _ in run.samples]
    checked, problems = check_samples(log, samples)
    if problems:
        raise Failure("samples whose span was not current when taken: %s" % problems)
    spans = {span_of(labels) for pid, _, labels in samples if pid in burn_pids_seen} - {0}
    if checked == 0 or not spans:
        raise Failure("no burn sample carried a span (%d checked)" % checked)
    wall_note = ""
    if wall:
        wait_no_work(k)
        work_log.read()
        if work_log.lost:
            raise Failure("the work span log overwrote %d entries before they were read" % work_log.lost)
        states, work_spans, foreign = {}, set(), []
        for index, _cpu, pid, _t, labels, _frames in run.samples:
            state = run.contexts.get(index)
            if state is None:
                raise Failure("a wall sample of pid %d without its state" % pid)
            states.setdefault(state, 0)
            states[state] += 1
            if pid in work_pids:
                span = span_of(labels)
                if span:
                    work_spans.add(span)
                    # the request running when the stream ended may be unlogged: its task is the only one left
                    if work_log.by_span.get(span, pid) != pid:
                        foreign.append((pid, span, work_log.by_span[span]))
        if foreign:
            raise Failure("work samples whose span another task logged (pid, span, logged by): %s" % foreign[:5])
        logged = sum(1 for span in work_spans if span in work_log.by_span)
        if logged < len(work_spans) - WORK_TASKS or logged == 0:
            raise Failure("%d of %d work spans sampled were in the log" % (logged, len(work_spans)))
        for state in ("running", "waiting=sleep", "waiting=input"):
            if not states.get(state):
                raise Failure("no wall sample %s: %s" % (state, states))
        wall_note = "; states %s; %d work spans sampled, each its own task's (%d runs, %d spans logged)" % (
            ", ".join("%s %d" % kv for kv in sorted(states.items())), len(work_spans), figures["works"],
            len(work_log.by_span))
    print("%s: run %s, %d s: produced %d, received %d, ring dropped %d, unsent %d, lost in between %d; "
          "%d datagrams, %d heartbeats, longest silence %.2f s; %.0f samples/s received; stream task %s%% of its "
          "cpu (median of %d status lines)%s"
          % (name, run_id, seconds, produced, received, dropped, unsent, run.gaps() - unsent, run.datagrams,
             len(run.heartbeats), longest_silence, received / seconds,
             "%.1f" % sorted(shares)[len(shares) // 2] if shares else "?", len(shares), wall_note), flush=True)
    print("%s: spans: %d burn samples each carried the span current when taken (%d distinct spans, %d span log "
          "entries read in %d reads)" % (name, checked, len(spans), log.entries(), figures["span_reads"]),
          flush=True)
    figures["summary"] = "%s run %s, %d s: produced %d, received %d, ring dropped %d, unsent %d" % (
        "wall" if wall else "stream", run_id, seconds, produced, received, dropped, unsent)
    return figures


def soak(seconds, wall_seconds, seed, verbose):
    rng = random.Random(seed)
    k = Kprof(smp=CPUS, udp=True, cmdline="profile.hz=%d" % HZ, name="stream-soak")
    ok = False
    try:
        k.boot()
        wait_dhcp(k)
        k.cmd("profile 50")  # the rings: allocated at the first run and kept for the kernel's life
        udp_cmd(k.udp_port, "uptime")  # the UDP shell's first request settles what it keeps
        base, pool_base = baselines(k)
        print("stream soak: seed %d, %d s of stream then %d s of wall stream at profile.hz=%d on %d busy CPUs; "
              "heap baseline %d bytes in %d blocks, largest free %d"
              % ((seed, seconds, wall_seconds, HZ, CPUS) + base), flush=True)
        log = SpanLog(k)
        log.read()
        summaries = []
        for leg_seconds, wall in ((seconds, False), (wall_seconds, True)):
            if not leg_seconds:
                continue
            figures = stream_leg(k, rng, leg_seconds, log, wall, verbose)
            summaries.append(figures["summary"])
            pool = back_to_baselines(k, base, pool_base)
            up = uptime(k)
            print("%s: label sets: %d made and %d freed since boot, pool back to %d in use, 0 waiting, %d dropped; "
                  "shell used meanwhile: %d console commands, %d over UDP (%d missed once and retried), %d label "
                  "changes, %d busy answers, %d burns; heap back to %d bytes in %d blocks; uptime %.1f s"
                  % ("wall leg" if wall else "stream soak", pool["made"] - pool_base["made"],
                     pool["freed"] - pool_base["freed"], pool["used"], pool["dropped"], figures["console"],
                     figures["udp"], figures["udp_missed"], figures["labels"], figures["busy"], figures["burns"],
                     base[0], base[1], up), flush=True)
        print("stream soak: PASS: %s; heap and label pool back to their baselines after each" % "; ".join(summaries),
              flush=True)
        ok = True
    except (Failure, StreamProblem, KprofError, AssertionError) as e:
        print("stream soak: FAIL (seed %d): %s" % (seed, e), flush=True)
        try:
            path = k.save_log(os.path.join(LOG_DIR, "stream-soak-%d.log" % seed))
            print("stream soak: serial log %s" % os.path.relpath(path, TOP), flush=True)
        except Exception:  # the log is a help, not the verdict
            pass
    finally:
        k.kill()
    return ok


def main():
    seconds, seed, verbose, wall_seconds = soak_args(__doc__, "seconds", "SOAK_STREAM_SECONDS", 600,
                                                     also=("wall-seconds", "SOAK_WALL_SECONDS", 600))
    return 0 if soak(seconds, wall_seconds, seed, verbose) else 1


if __name__ == "__main__":
    sys.exit(main())
