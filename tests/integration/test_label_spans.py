"""Label sets per request (issue 23, item 7) on a running kernel: a stream at profile.hz=1000 on 4 CPUs kept busy by
`burn ... spans`, whose tasks start a new request with a new span every 100 ms and log it, while the console gives
one burn task a new text label set (`req=N`, never the same twice) as fast as it answers, so sets are freed and
their slots reused (the pool takes the first free slot) while records and the stream still carry them. Every
streamed sample of a burn task carries the span that was current when it was taken (tests/integration/
span_check.py holds it to the task's own log), every req=N set is one contiguous stretch of that task's samples
and whole, and afterwards the label pool and the heap are back to their baselines. The soak's stream leg
(tests/soak/stream_soak.py, `make soak`) does the same for 10 minutes; this is the short version in `make test`
(12 s; 30 s under `make test-full`).
Also: `label` alone shows the pool, and the span form sets a task's span without interning a set."""

import os
import re

import pytest

from kprof_qemu import Kprof, poll, ps_rows
from span_check import SpanLog, check_samples, label_pool as pool, span_burn, span_of
from stream_rx import Receiver
from kprof_net import HOST_INSIDE, wait_dhcp
from kprof_report import wait_no_burn

# Kernels this module boots (conftest.py fails a boot past BOOTS), by the test that boots them -- a module kernel
# counts for the first test that uses it, a test named alone needs a fresh one:
# test_the_pool_is_shown_and_cmd_sets_are_pinned 1.
BOOTS = 1

HZ = 1000
CPUS = 4
# `make test` streams 12 s; KPROF_FULL=1 (`make test-full`) 30 s, and the soak's stream leg (`make soak`) 10 minutes.
# The label pool reuses the first free slot, so sets are freed and reused within the short run too.
SECONDS = 30 if os.environ.get("KPROF_FULL") else 12


@pytest.fixture(scope="module")
def k():
    kp = Kprof(smp=CPUS, udp=True, cmdline="profile.hz=%d" % HZ, name="label-spans")
    try:
        kp.boot()
        wait_dhcp(kp)
        kp.cmd("profile 50")  # the rings: allocated at the first run and kept
        yield kp
    finally:
        kp.kill()


def heap(k):
    m = re.search(r"heap: used (\d+) bytes in (\d+) blocks", k.cmd("mem"))
    return int(m.group(1)), int(m.group(2))


def test_the_pool_is_shown_and_cmd_sets_are_pinned(k):
    p = pool(k)
    # every command's cmd= set is made at boot and pinned: the shell's label never finds the pool full
    commands = len({row.split()[0] for row in k.cmd("help").split("\n")})  # `profile stream` runs as cmd=profile
    assert p["pinned"] == commands and p["live"] >= p["pinned"] and p["dropped"] == 0, (p, commands)
    assert p["used"] == p["live"] + p["waiting"], p


def test_span_form_sets_the_span_without_a_set(k):
    wait_no_burn(k)
    reaper = [r[0] for r in ps_rows(k) if r[3] == "reaper"][0]
    made = pool(k)["made"]
    assert k.cmd("label %d span=77" % reaper) == "pid %d span 77" % reaper
    assert [r[4] for r in ps_rows(k) if r[0] == reaper] == ["span=77"]
    assert pool(k)["made"] == made  # nothing interned
    assert k.cmd("label %d job=x span=78" % reaper) == "pid %d labels job=x span 78" % reaper
    assert [r[4] for r in ps_rows(k) if r[0] == reaper] == ["job=x,span=78"]
    assert k.cmd("label %d -" % reaper) == "pid %d labels (none)" % reaper
    assert [r[4] for r in ps_rows(k) if r[0] == reaper] == ["-"]


@pytest.mark.scaled
def test_every_sample_carries_the_span_current_when_it_was_taken(k):
    wait_no_burn(k)
    base_heap = heap(k)
    base_pool = pool(k)
    log = SpanLog(k)
    log.read()
    with Receiver() as rx:
        pids = span_burn(k, (SECONDS + 5) * 1000, CPUS)
        assert len(pids) == CPUS
        out = k.cmd("profile stream %s:%d %d" % (HOST_INSIDE, rx.port, SECONDS))
        m = re.fullmatch(r"profile stream: run ([0-9a-f]{8}) to \S+ for %d s, source tick.*" % SECONDS, out)
        assert m, out
        run_id = m.group(1)
        # a new text set on one burn task as fast as the console answers, the span log read between
        changes = 0
        while rx.run(run_id) is None or rx.run(run_id).end is None:
            answer = k.cmd("label %d req=%d" % (pids[0], changes))
            if answer == "label: no task with pid %d" % pids[0]:
                break
            assert answer == "pid %d labels req=%d" % (pids[0], changes), answer
            changes += 1
            if changes % 8 == 0:
                log.read()
        run = rx.wait_end(run_id, 60)
        received, dropped, unsent, produced = rx.check_accounted(run)
        assert not rx.problems, rx.problems[:5]
    wait_no_burn(k)
    log.read()
    assert log.lost == 0, "the span log overwrote %d entries before they were read" % log.lost
    assert set(pids) <= set(log.by_pid), (pids, sorted(log.by_pid))

    samples = [(pid, t, labels) for _, _, pid, t, labels, _ in run.samples]
    checked, problems = check_samples(log, samples)
    assert not problems, problems
    burn_samples = [s for s in samples if s[0] in pids]
    assert checked == len(burn_samples) and checked > 0, (checked, len(burn_samples))
    spans = {span_of(labels) for pid, _, labels in burn_samples} - {0}
    assert len(spans) >= 2 * CPUS, "only %d distinct spans in %d samples" % (len(spans), checked)

    # the text sets: each req=N a contiguous stretch of pids[0]'s samples, in the order they were given
    order = [labels for _, labels in sorted((t, labels) for pid, t, labels in samples if pid == pids[0])]
    reqs = []
    for labels in order:
        req = [p for p in labels.split(",") if p.startswith("req=")]
        if req and (not reqs or reqs[-1] != req[0]):
            reqs.append(req[0])
    numbers = [int(r[4:]) for r in reqs]
    assert numbers == sorted(set(numbers)), "a req set came back after the next: %s" % numbers[:40]
    assert changes > 0 and all(0 <= n < changes for n in numbers), (changes, numbers[-5:])

    # afterwards: every set the stream carried is free again, and the heap is as it was
    def pool_back():
        p = pool(k)
        return p["used"] == base_pool["used"] and p["waiting"] == 0
    poll("the label pool back to its baseline", pool_back, timeout=10, every=0.2)
    after = pool(k)
    assert after["freed"] - base_pool["freed"] >= changes - 1 and after["dropped"] == base_pool["dropped"], \
        (base_pool, after, changes)
    poll("the heap back to its baseline", lambda: heap(k) == base_heap, timeout=10)
    print("label spans: %d samples (%d of burn tasks, %d distinct spans), %d span log entries, %d text sets "
          "given, %d sets freed; produced %d, received %d, ring dropped %d, unsent %d"
          % (len(samples), checked, len(spans), log.entries(), changes, after["freed"] - base_pool["freed"],
             produced, received, dropped, unsent))
