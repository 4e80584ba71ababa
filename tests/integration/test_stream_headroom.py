"""The stream's two profiles of headroom (issue 23, item 8) on a running kernel: the start line states how long the
stream may take to pack and send one interval while the rings record the next (the ring at 1 kHz a CPU), and a
stream whose sender is slowed on purpose -- `profile.stream_slow_ms=600`, the stream's task waiting 600 ms before
each drain's packing, so every interval it packs is twelve times the usual 50 ms -- on 4 CPUs kept busy at
profile.hz=1000 drops nothing: every sample produced is received, none dropped by a ring, none unsent, and the
status line shows the drains were slowed. Counts only; the boundary itself (one record past a ring drops) is
tests/unit/test_profiler_stream_headroom.c's. Under the starved-QEMU retry rule: ring drops are the host's doing
only when the stream task's CPU fell behind the busiest by the ring's margin over a slowed drain (the kernel's
own tick counts), else they fail."""

import re

import pytest

from kprof_qemu import HostStarved, Kprof, cpus_table, unstarved
from stream_rx import Receiver, stream_starved_by_the_host, stream_task_cpu_behind
from kprof_net import HOST_INSIDE, wait_dhcp
from kprof_report import burn_pids, wait_no_burn

# Kernels this module boots (conftest.py fails a boot past BOOTS), by the test that boots them -- a module kernel
# counts for the first test that uses it, a test named alone needs a fresh one: test_a_slowed_sender_drops_nothing
# 1.
BOOTS = 1

HZ = 1000
CPUS = 4
SLOW_MS = 600
SECONDS = 8


@pytest.fixture(scope="module")
def k():
    kp = Kprof(smp=CPUS, udp=True, cmdline="profile.hz=%d profile.stream_slow_ms=%d" % (HZ, SLOW_MS),
               name="stream-headroom")
    try:
        kp.boot()
        wait_dhcp(kp)
        yield kp
    finally:
        kp.kill()


def test_a_slowed_sender_drops_nothing(k):
    unstarved(k, lambda: slowed_stream(k), "a slowed stream of %d busy CPUs at %d Hz" % (CPUS, HZ), hz=HZ)


def slowed_stream(k):
    wait_no_burn(k)
    with Receiver() as rx:
        burn_pids(k.cmd("burn %d %d" % ((SECONDS + 4) * 1000, CPUS)))
        ticks_before = {cpu: row[2] for cpu, row in cpus_table(k).items()}
        out = k.cmd("profile stream %s:%d %d" % (HOST_INSIDE, rx.port, SECONDS))
        m = re.fullmatch(r"profile stream: run ([0-9a-f]{8}) to \S+ for %d s, source tick, headroom 1\.0 s at 1 kHz "
                         r"per cpu" % SECONDS, out)
        assert m, out
        run_id = m.group(1)
        run = rx.wait_end(run_id, 60)
        ticks_after = {cpu: row[2] for cpu, row in cpus_table(k).items()}
        assert not rx.problems, rx.problems[:5]
        received, dropped, unsent, produced = rx.check_accounted(run)
        status = k.cmd("profile stream")
        behind = stream_task_cpu_behind(status, ticks_before, ticks_after)
        if dropped and stream_starved_by_the_host(status, ticks_before, ticks_after, HZ, SLOW_MS):
            raise HostStarved("%d ring drops while the stream task's CPU ticked %d behind the busiest: %s"
                              % (dropped, behind, status))
        assert dropped == 0 and unsent == 0 and run.gaps() == 0, (received, dropped, unsent, produced, behind)
        assert received == produced > 0
        s = re.search(r", slowed (\d+) drains by %d ms" % SLOW_MS, status)
        assert s and int(s.group(1)) >= 3, status
    wait_no_burn(k)
