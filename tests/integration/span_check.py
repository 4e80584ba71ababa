"""The span check (issue 23, item 7): `burn MS N spans` tasks start a new request every 100 ms, each with a new span
(the numeric label span=N, set without interning anything) and log it -- the span, and the kernel clock just
before and just after the task's span word changed; span 0 when the task is done. SpanLog reads that log back
with `burn spans FROM` (a page at a time, never losing an entry: the kernel says how many it overwrote), and
check_samples holds every streamed sample of a burn task to it: the span it carries is the one that was current
when it was taken -- taken after that span's change began and before the next one's ended. Standard library
only; used by tests/integration/test_label_spans.py and the soak's stream leg."""

import bisect
import re

RX_BURN = re.compile(r"burn: started (\d+) tasks for (\d+) ms with a new span every 100 ms \(pids((?: \d+)*)\)")
RX_POOL = re.compile(r"label sets: (\d+) of 255 in use \((\d+) live, (\d+) of them pinned cmd= sets, (\d+) waiting to "
                     r"be freed\), (\d+) made, (\d+) freed, (\d+) dropped \(table full\)")
RX_SPAN = re.compile(r"span (\d+) (\d+) (-?\d+) (-?\d+)")
RX_NEXT = re.compile(r"burn spans: next (\d+) lost (\d+)")


def span_burn(k, ms, n):
    """Starts `burn MS N spans`; its pids."""
    out = k.cmd("burn %d %d spans" % (ms, n))
    m = RX_BURN.fullmatch(out)
    assert m and int(m.group(1)) == n and int(m.group(2)) == ms, "burn said: %r" % out
    return [int(p) for p in m.group(3).split()]


def label_pool(k):
    """`label` alone: the pool's figures as a dict."""
    out = k.cmd("label")
    m = RX_POOL.fullmatch(out)
    assert m, "label said: %r" % out
    return dict(zip(("used", "live", "pinned", "waiting", "made", "freed", "dropped"), (int(g) for g in m.groups())))


class SpanLog:
    def __init__(self, k):
        self.k = k
        self.next = 0
        self.lost = 0
        self.by_pid = {}  # pid -> [(before_ns, after_ns, span)] in log order

    def read(self, pages=1000):
        """Reads on from where the last read stopped, until the kernel has nothing newer (or pages run out)."""
        for _ in range(pages):
            out = self.k.cmd("burn spans %d" % self.next).split("\n")
            m = RX_NEXT.fullmatch(out[-1])
            assert m, "burn spans said:\n%s" % "\n".join(out)
            for line in out[:-1]:
                s = RX_SPAN.fullmatch(line)
                assert s, "burn spans line %r" % line
                pid, span, before, after = (int(g) for g in s.groups())
                assert before <= after, line
                self.by_pid.setdefault(pid, []).append((before, after, span))
            self.lost += int(m.group(2))
            got = int(m.group(1)) - self.next
            self.next = int(m.group(1))
            if got == 0:
                return

    def entries(self):
        return sum(len(v) for v in self.by_pid.values())


def span_of(labels):
    """The span a sample's labels text carries (span=N), 0 for none."""
    for pair in labels.split(","):
        if pair.startswith("span="):
            return int(pair[5:])
    return 0


def check_samples(log, samples):
    """samples: (pid, time_ns, labels text) of the stream. Returns (checked, problems): every sample of a task in
    the log is held to it; problems lists the first few that break it."""
    problems = []
    checked = 0
    index = {}  # pid -> ([before_ns], {span: position})
    for pid, entries in log.by_pid.items():
        entries.sort()
        index[pid] = ([e[0] for e in entries], {e[2]: i for i, e in enumerate(entries) if e[2]})
    for pid, t, labels in samples:
        if pid not in index:
            continue
        entries = log.by_pid[pid]
        befores, where = index[pid]
        span = span_of(labels)
        checked += 1
        if span == 0:
            # before the task's first request, or after its last (its span cleared as it finished)
            if t <= entries[0][1] or (entries[-1][2] == 0 and t >= entries[-1][0]):
                continue
            # or while a span 0 entry is current (the task finished, its pid taken by no other)
            i = bisect.bisect_right(befores, t) - 1
            if i >= 0 and entries[i][2] == 0:
                continue
            problems.append("pid %d at %d: no span, but the log has one current" % (pid, t))
        elif span not in where:
            problems.append("pid %d at %d: span %d, never that task's" % (pid, t, span))
        else:
            i = where[span]
            begun = entries[i][0]
            ended = entries[i + 1][1] if i + 1 < len(entries) else None
            if t < begun or (ended is not None and t > ended):
                problems.append("pid %d at %d: span %d, current only from %d to %s" % (pid, t, span, begun, ended))
        if len(problems) >= 5:
            break
    return checked, problems
