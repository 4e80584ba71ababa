"""`work`, the request-serving workload with a known split of compute and wait, on a running kernel: the ground
truth the wall-clock profile is checked against (tests/integration/work_check.py reads its log).

Before any run `work` says so, and every bad word gives the usage line and starts nothing. `work 2000 4` starts
4 tasks labelled work=serve, a second run is refused while it goes, and when it has finished each task reports
about 20 requests (10 to 25: one arrives every 100 ms on average, and a task that fell behind serves its queue
before the deadline) with its own split, 20% to 40% computing; its compute + wait fits in the run. Its span log
has one entry per request served: distinct spans, each of one of the 4 tasks, in the order each task served
them; a task's spans add up to its report to the millisecond; every request but a task's last (cut at the
deadline) computed at least 30% of the shortest period the jitter allows; and a task's typical request lasts
its period's scale. The label set is given back when the run ends.

Why 20% to 40%: the share is the tasks' own measurement on the kernel's clock, never the host's. A compute phase
is timed, not counted in work, so a slow vCPU does not lengthen it: it ends one compute step past its planned
end, and a wait ends up to a tick late, which the next request's wait gives back. With QEMU given its CPUs four
tasks on 4 CPUs compute 31% to 35% here. What moves it further is the host taking a vCPU away for hundreds of
milliseconds: the phase whose end the stall crosses lasts that much longer (seen on this 2-core host beside
another kernel streaming at 1 kHz: one request computing 336 ms, its task 55%). So the checks that depend on
the host's scheduling -- the shares, the requests' typical length, how many were served -- run under
kprof_qemu.unstarved: an attempt that fails is retried only when the kernel's own tick counts show the host
starved it. The structural checks (the log against the report, the spans, the minimum compute of a request)
hold on any host.
"""

import statistics

from kprof_qemu import poll, ps_rows, ps_table, unstarved
from span_check import label_pool
from work_check import read_work_spans, start_work, wait_no_work, wait_work_done, work_report

# Kernels this module boots (conftest.py fails a boot past BOOTS): the module's kernel alone, shared by every
# test here (each waits for the run before it to be over).
BOOTS = 1

USAGE = ("usage: work [MS N [COMPUTE [PERIOD]]] (MS 1..60000, N 1..16, COMPUTE 0..100 percent, PERIOD 1..10000 ms) | "
         "work spans [FROM]")
MS_PER_NS = 1000000
# A request computes COMPUTE% of its period; its period is at least 80% of PERIOD (the jitter is +-10% about
# the grid), and the compute phase ends only once the kernel's clock has passed its planned end.
MIN_COMPUTE_NS = 100 * MS_PER_NS * 80 // 100 * 30 // 100


def work_tasks(k):
    return [t for t in ps_table(k) if t[3] == "work"]


def test_before_any_run_and_bad_words_start_nothing(kernel):
    assert kernel.cmd("work") == "work: no run yet"
    assert kernel.cmd("work spans") == "work spans: next 0 lost 0"
    for words in ("work 2000", "work 0 4", "work 60001 4", "work 2000 0", "work 2000 17", "work 2000 4 101",
                  "work 2000 4 30 0", "work 2000 4 30 10001", "work 2000 4 30 100 1", "work two 4", "work 2000 4x",
                  "work -1 4", "work spans x", "work spans 1 2"):
        assert kernel.cmd(words) == USAGE, words
    assert kernel.cmd("work") == "work: no run yet"
    assert work_tasks(kernel) == []


def check_spans(run, pids, spans, lost):
    """The span log of a finished run, against its report."""
    assert lost == 0, "the span log lost %d entries of %d" % (lost, len(spans))
    assert len(spans) == run.total.requests, (len(spans), run.total.requests)
    assert len({s[1] for s in spans}) == len(spans), "a span served twice"
    assert {s[0] for s in spans} <= set(pids), ({s[0] for s in spans}, pids)
    for pid in pids:
        mine = [s for s in spans if s[0] == pid]
        task = run.by_pid[pid]
        assert len(mine) == task.requests, (pid, len(mine), task)
        # a task takes each new span after the one before: in the order it served them
        assert [s[1] for s in mine] == sorted(s[1] for s in mine), (pid, [s[1] for s in mine])
        # the report is the sum of the spans, truncated to whole ms
        assert sum(s[2] for s in mine) // MS_PER_NS == task.compute_ms, (pid, task)
        assert sum(s[3] for s in mine) // MS_PER_NS == task.wait_ms, (pid, task)
    return {pid: [s for s in spans if s[0] == pid] for pid in pids}


def test_four_tasks_serve_their_requests(kernel):
    base_pool = label_pool(kernel)

    def attempt():
        wait_no_work(kernel)  # an attempt the host starved may have failed while its run went on
        pids = start_work(kernel, 2000, 4)
        assert kernel.cmd("work 2000 4") == "work: busy (a run is in progress)"
        going = work_report(kernel)
        assert going.running and list(going.by_pid) == pids, going.text
        # every task labelled while it serves (the span shows beside it in ps while a request is on)
        poll("the work tasks labelled", lambda: sorted(r[0] for r in ps_rows(kernel) if r[3] == "work"
                                                       and "work=serve" in r[4].split(",")) == sorted(pids))

        run = wait_work_done(kernel)
        assert (run.tasks, run.ms, run.period_ms, run.compute_pct) == (4, 2000, 100, 30), run.text
        assert list(run.by_pid) == pids, run.text
        for task in run.by_pid.values():
            assert 10 <= task.requests <= 25, "pid %d: %d requests\n%s" % (task.pid, task.requests, run.text)
            # the task's loop lies inside the run: it began after the run did and ended with its last task
            assert task.compute_ms + task.wait_ms <= run.elapsed_ms + 1, "pid %d outlasted the run\n%s" % (
                task.pid, run.text)
            # timed phases: 30% planned, a phase's overshoot (one compute step, the tick's wake-up) and a
            # late request's catching up move it little; a host stall of a few hundred ms inside one phase can
            # move it past these, and unstarved judges that
            assert 0.20 <= task.share() <= 0.40, "pid %d computed %.0f%%\n%s" % (task.pid, 100 * task.share(),
                                                                                   run.text)

        by_pid = check_spans(run, pids, *read_work_spans(kernel))
        for pid, mine in by_pid.items():
            for s in mine[:-1]:  # a task's last request may be cut at the deadline
                assert s[2] >= MIN_COMPUTE_NS, "pid %d span %d computed %d ns" % (pid, s[1], s[2])
            lengths = [(s[2] + s[3]) / MS_PER_NS for s in mine[:-1]]
            assert 60 <= statistics.median(lengths) <= 140, "pid %d: requests of a median %.0f ms: %s" % (
                pid, statistics.median(lengths), lengths)
        return run

    unstarved(kernel, attempt, "work 2000 4")
    # the run's label set went back when its last task left (nothing samples here, so it is freed at once)
    poll("the label pool back to its baseline", lambda: label_pool(kernel)["used"] == base_pool["used"])


def test_work_spans_start_at_the_last_run(kernel):
    first = work_report(kernel)
    assert not first.running, first.text

    def attempt():
        wait_no_work(kernel)
        pids = start_work(kernel, 500, 2, 100, 50)
        run = wait_work_done(kernel)
        assert list(run.by_pid) == pids and not set(pids) & set(first.by_pid), (run.text, first.text)
        # without FROM the log starts at this run's first span: none of the run before
        by_pid = check_spans(run, pids, *read_work_spans(kernel))
        for task in run.by_pid.values():
            # 10 arrivals in 500 ms; computing all of each period keeps up but for each phase's overshoot
            assert task.requests >= 5, "pid %d: %d requests\n%s" % (task.pid, task.requests, run.text)
            # computing all the time: what waits is the task's own overhead
            assert task.share() >= 0.9, "pid %d computed %.0f%%\n%s" % (task.pid, 100 * task.share(), run.text)
        assert all(len(mine) == run.by_pid[pid].requests for pid, mine in by_pid.items())

    unstarved(kernel, attempt, "work 500 2 100 50")
    assert work_tasks(kernel) == []
