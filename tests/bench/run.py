#!/usr/bin/python3
"""kprof's benchmarks: figures, not pass/fail timings. `make bench` runs them all; `run.py NAME...` runs some.

A benchmark is a function decorated with @bench that prints its own lines (`name: figure ...`) and raises
if it could not measure. Ratios that compare two configurations should be measured in the same run.
Any tests/bench/*.sh script (sample_cost.sh, ...) is run after them and its lines printed as they are.
"""

import os
import re
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "integration"))

from kprof_qemu import TOP, Kprof, poll  # noqa: E402

BENCHES = []


def bench(fn):
    BENCHES.append(fn)
    return fn


@bench
def boot(boots=5):
    """QEMU process start to the kernel's `ready:` line, 4 CPUs and 256 MiB, as `make run` boots it."""
    times = []
    for _ in range(boots):
        k = Kprof(smp=4, mem=256, name="bench-boot")
        try:
            k.boot()
            times.append(k.boot_seconds)
        finally:
            k.kill()
    print("boot: median %.2f s to ready: over %d boots (min %.2f s, max %.2f s)"
          % (statistics.median(times), len(times), min(times), max(times)), flush=True)


def _burn_run(k, ms, tasks, profile_line=None):
    """One `burn ms tasks` run, with profile_line run right after it starts when given; returns the run's
    iterations per second as the kernel measured them (iterations over its own elapsed time)."""
    out = k.cmd("burn %d %d" % (ms, tasks))
    if not re.fullmatch(r"burn: started %d tasks for %d ms \(pids( \d+){%d}\)" % (tasks, ms, tasks), out):
        raise RuntimeError("burn said: %s" % out)
    if profile_line:
        report = k.cmd(profile_line, timeout=60)
        if not report.startswith("profiled "):
            raise RuntimeError("%s said: %s" % (profile_line, report))
    # Polled slowly: each poll is shell work on a CPU the burners want, in both configurations alike.
    last = poll("the burn run of %d ms to finish" % ms, lambda: _burn_last(k), timeout=60 + ms / 1000.0, every=0.25)
    runs, iterations, elapsed_ms = last
    if runs != tasks or elapsed_ms < ms:
        raise RuntimeError("burn reported %d tasks in %d ms for a run of %d tasks for %d ms"
                           % (runs, elapsed_ms, tasks, ms))
    return iterations * 1000.0 / elapsed_ms


def _burn_last(k):
    out = k.cmd("burn")
    m = re.fullmatch(r"burn: last run (\d+) tasks, (\d+) iterations in (\d+) ms, \d+ iterations/s", out)
    return tuple(int(g) for g in m.groups()) if m else None


def _overhead_runs(extra_args, name, rounds, ms, tasks, window):
    """In one boot: `burn ms tasks` alone and with `profile window all 1` started right after it, rounds times
    each, alternating (off/on, on/off, ...) so drift falls on both alike. Returns (off rates, on rates)."""
    k = Kprof(smp=4, mem=256, extra_args=extra_args, name=name)
    try:
        k.boot()
        k.cmd("profile 1 all 1")  # the rings are allocated at the first start: not inside a measured run
        off, on = [], []
        for i in range(rounds):
            for profiled in ([False, True] if i % 2 == 0 else [True, False]):
                line = "profile %d all 1" % window if profiled else None
                (on if profiled else off).append(_burn_run(k, ms, tasks, line))
    finally:
        k.kill()
    return off, on


def _spread(rates):
    return 100.0 * (max(rates) - min(rates)) / statistics.mean(rates)


@bench
def profiler_overhead(rounds=3, ms=3000, tasks=4, window=2000):
    """Profiler overhead on burn throughput: the kernel's own iterations/s of `burn 3000 4`, alone and with
    `profile 2000 all 1` started right after it, averaged per configuration.

    Measured twice. First with QEMU's -icount (shift=0): guest time is then counted in instructions executed,
    so burn's iterations per guest second drop by exactly the share of instructions the profiler took; that is
    the figure against the goal. Then as `make run` runs it (MTTCG, the TSC on host time), where 4 busy vCPUs
    share the host's cores and host scheduling moves the throughput by far more than 1% from run to run: that
    line carries the spread of its off runs, the noise its overhead figure sits in."""
    off, on = _overhead_runs(["-icount", "shift=0"], "bench-profiler-overhead-icount", rounds, ms, tasks, window)
    r_off, r_on = statistics.mean(off), statistics.mean(on)
    overhead = 100.0 * (r_off - r_on) / r_off
    print("profiler: burn throughput profile off %.0f it/s, on %.0f it/s, overhead %.3f%% (goal <= 1%%)"
          % (r_off, r_on, overhead), flush=True)
    print("profiler: (QEMU -icount shift=0, instruction-counted guest time; burn %d ms x %d tasks, %d runs each, "
          "%d ms of each 'on' run profiled, so %.3f%% while profiling; off %s, on %s it/s)"
          % (ms, tasks, rounds, window, overhead * ms / window, " ".join("%.0f" % r for r in off),
             " ".join("%.0f" % r for r in on)), flush=True)

    off, on = _overhead_runs([], "bench-profiler-overhead-mttcg", rounds, ms, tasks, window)
    r_off, r_on = statistics.mean(off), statistics.mean(on)
    print("profiler: burn throughput under MTTCG (host time) profile off %.0f it/s, on %.0f it/s, overhead %.2f%%; "
          "run-to-run spread off %.1f%%, on %.1f%% (host scheduling noise, larger than the goal)"
          % (r_off, r_on, 100.0 * (r_off - r_on) / r_off, _spread(off), _spread(on)), flush=True)


def scripts():
    """tests/bench/*.sh, each run from the top of the tree with its output passed through."""
    names = sorted(f for f in os.listdir(HERE) if f.endswith(".sh"))
    ok = True
    for name in names:
        try:
            r = subprocess.run(["bash", os.path.join(HERE, name)], cwd=TOP, capture_output=True, text=True,
                               timeout=1800)
        except subprocess.TimeoutExpired:
            print("%s: timed out" % name, flush=True)
            ok = False
            continue
        sys.stdout.write(r.stdout)
        if r.returncode != 0:
            sys.stdout.write(r.stderr)
            print("%s: failed (exit %d)" % (name, r.returncode), flush=True)
            ok = False
    return ok


def main(argv):
    wanted = argv[1:]
    known = {f.__name__ for f in BENCHES}
    unknown = [w for w in wanted if w not in known and w != "scripts"]
    if unknown:
        print("bench: unknown benchmark %s (have: %s, scripts)" % (" ".join(unknown), " ".join(sorted(known))))
        return 2
    failed = 0
    t0 = time.monotonic()
    for f in BENCHES:
        if wanted and f.__name__ not in wanted:
            continue
        try:
            f()
        except Exception as e:  # one broken benchmark must not hide the others' figures
            print("%s: failed: %s" % (f.__name__, str(e).splitlines()[0] if str(e) else type(e).__name__),
                  flush=True)
            failed += 1
    if not wanted or "scripts" in wanted:
        failed += 0 if scripts() else 1
    print("bench: done in %.0f s, %d failed" % (time.monotonic() - t0, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
