"""`work`'s own log, read over the console and checked line by line (kernel/workload/work.h has the formats): the
ground truth a wall-clock profile is held to. `work MS N [COMPUTE [PERIOD]]` starts N tasks labelled work=serve
that serve a request every PERIOD ms on average, each request a span of its own that computes COMPUTE% of its
period and waits on the timer for the rest; each task measures both phases itself.

- start_work(k, ms, n, ...) starts a run and returns its pids;
- wait_work_done(k) waits for the run to finish and its tasks to be reaped, and returns its report;
  wait_no_work(k) the same whether or not a run was ever started;
- parse_work(text) reads `work`'s report: a WorkRun with each task's requests, compute and wait in ms;
- read_work_spans(k) reads the span log back a page at a time: (pid, span, compute_ns, wait_ns) per request,
  in the order the requests ended, and how many entries were lost (overwritten before they were read);
  read_work_spans_to_end(k, start) the same from any index since boot, and the index to go on from.

Standard library only; used by tests/integration/test_work.py, the soak's wall leg, and by the wall profile's tests to compare a
profile's running and waiting shares with what each task really did."""

import re

from kprof_qemu import poll, ps_table

RX_STARTED = re.compile(r"work: started (\d+) tasks for (\d+) ms, a request every (\d+) ms computing (\d+)% of it "
                        r"\(pids((?: \d+)*)\)")
RX_HEADER = re.compile(r"work: (\d+) tasks for (\d+) ms, a request every (\d+) ms computing (\d+)% of it: "
                       r"(running|finished in (\d+) ms)")
RX_TASK = re.compile(r"pid (\d+): (\d+) requests, compute (\d+) ms, wait (\d+) ms \((\d+)% computing\)")
RX_TOTAL = re.compile(r"total: (\d+) requests, compute (\d+) ms, wait (\d+) ms \((\d+)% computing\)")
RX_SPAN = re.compile(r"span (\d+) (\d+) (\d+) (\d+)")
RX_NEXT = re.compile(r"work spans: next (\d+) lost (\d+)")


class WorkTask:
    def __init__(self, pid, requests, compute_ms, wait_ms, pct):
        self.pid, self.requests, self.compute_ms, self.wait_ms, self.pct = pid, requests, compute_ms, wait_ms, pct

    def share(self):
        """compute / (compute + wait), from the whole milliseconds (0 for a task that served nothing)."""
        total = self.compute_ms + self.wait_ms
        return self.compute_ms / total if total else 0.0

    def __repr__(self):
        return "pid %d: %d requests, compute %d ms, wait %d ms (%d%%)" % (
            self.pid, self.requests, self.compute_ms, self.wait_ms, self.pct)


class WorkRun:
    def __init__(self, text):
        self.text = text
        self.tasks = self.ms = self.period_ms = self.compute_pct = None
        self.running = None
        self.elapsed_ms = None  # finished runs only
        self.by_pid = {}        # pid -> WorkTask, in the report's order (the order the tasks were started)
        self.total = None       # WorkTask with pid None


def _percent_of(compute_ms, wait_ms, pct, line, text):
    """The printed share is the nearest percent of the nanoseconds; from whole ms it may be one off."""
    total = compute_ms + wait_ms
    want = 100.0 * compute_ms / total if total else 0.0
    assert abs(pct - want) <= 1.0 + 100.0 * 2 / max(total, 1), "%r: %d%% of %d/%d ms:\n%s" % (
        line, pct, compute_ms, total, text)


def parse_work(text):
    """`work`'s report checked line by line: the header, one line per task, the total (the sum of the tasks:
    requests exactly, milliseconds within the one each task's truncation may lose)."""
    lines = text.split("\n")
    m = RX_HEADER.fullmatch(lines[0])
    assert m, "the first line is not work's header:\n%s" % text
    r = WorkRun(text)
    r.tasks, r.ms, r.period_ms, r.compute_pct = (int(g) for g in m.groups()[:4])
    r.running = m.group(5) == "running"
    r.elapsed_ms = None if r.running else int(m.group(6))
    assert len(lines) == r.tasks + 2, "%d task lines for %d tasks:\n%s" % (len(lines) - 2, r.tasks, text)
    for line in lines[1:-1]:
        t = RX_TASK.fullmatch(line)
        assert t, "line %r is not a task's:\n%s" % (line, text)
        task = WorkTask(*(int(g) for g in t.groups()))
        assert task.pid not in r.by_pid, "pid %d twice:\n%s" % (task.pid, text)
        _percent_of(task.compute_ms, task.wait_ms, task.pct, line, text)
        r.by_pid[task.pid] = task
    t = RX_TOTAL.fullmatch(lines[-1])
    assert t, "the last line is not the total:\n%s" % text
    r.total = WorkTask(None, *(int(g) for g in t.groups()))
    tasks = r.by_pid.values()
    assert r.total.requests == sum(x.requests for x in tasks), text
    for field in ("compute_ms", "wait_ms"):
        parts = sum(getattr(x, field) for x in tasks)
        assert parts <= getattr(r.total, field) <= parts + len(r.by_pid), "the total's %s:\n%s" % (field, text)
    _percent_of(r.total.compute_ms, r.total.wait_ms, r.total.pct, lines[-1], text)
    return r


def start_work(k, ms, n, compute=None, period=None):
    """Starts `work MS N [COMPUTE [PERIOD]]`; its pids, in the order they were started."""
    words = [str(ms), str(n)] + ([str(compute)] if compute is not None else []) + \
        ([str(period)] if period is not None else [])
    out = k.cmd("work " + " ".join(words))
    m = RX_STARTED.fullmatch(out)
    assert m, "work said: %r" % out
    assert (int(m.group(1)), int(m.group(2))) == (n, ms), out
    assert int(m.group(3)) == (period if period is not None else 100), out
    assert int(m.group(4)) == (compute if compute is not None else 30), out
    pids = [int(p) for p in m.group(5).split()]
    assert len(pids) == n, out
    return pids


def work_report(k):
    return parse_work(k.cmd("work"))


def wait_work_done(k, timeout=60):
    """Until the run has finished and its tasks are gone from ps; the finished run's report."""
    run = poll("the work run finished", lambda: (lambda r: r if not r.running else None)(work_report(k)),
               timeout=timeout, every=0.1)
    poll("the work tasks reaped", lambda: not [t for t in ps_table(k) if t[3] == "work"], timeout=15, every=0.1)
    return run


def wait_no_work(k, timeout=60):
    """Until no run is going (or none was ever started) and no work task is left in ps."""
    poll("no work run going", lambda: not k.cmd("work").split("\n")[0].endswith(": running"), timeout=timeout,
         every=0.1)
    poll("the work tasks reaped", lambda: not [t for t in ps_table(k) if t[3] == "work"], timeout=15, every=0.1)


def read_work_spans_to_end(k, start=None, pages=100):
    """The span log from start (default: the last run's first span) to its end: ([(pid, span, compute_ns,
    wait_ns)], entries lost, the index to read from next time)."""
    spans, lost = [], 0
    at = start
    for _ in range(pages):
        out = k.cmd("work spans" if at is None else "work spans %d" % at).split("\n")
        m = RX_NEXT.fullmatch(out[-1])
        assert m, "work spans said:\n%s" % "\n".join(out)
        for line in out[:-1]:
            s = RX_SPAN.fullmatch(line)
            assert s, "work spans line %r" % line
            spans.append(tuple(int(g) for g in s.groups()))
        lost += int(m.group(2))
        if at is not None and int(m.group(1)) == at:
            return spans, lost, at
        at = int(m.group(1))
    raise AssertionError("the span log did not end within %d pages" % pages)


def read_work_spans(k, start=None, pages=100):
    """The span log from start (default: the last run's first span) to its end: ([(pid, span, compute_ns,
    wait_ns)], entries lost)."""
    spans, lost, _ = read_work_spans_to_end(k, start, pages)
    return spans, lost
