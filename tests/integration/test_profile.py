"""The profiler in QEMU: `profile [ms] [pid|all] [chains]` on a known load (burn_task -> burn_outer ->
burn_middle -> burn_inner), with a pid filter, on a sleeping task, with every bad argument, over 200 start/stop
cycles, and every report it prints checked line by line against the spec's format ("The report",
shared/seeds/profiler-spec.txt) and for counts that add up.

One kernel for the module (4 CPUs, the tick at 100 Hz per CPU). Windows and sample counts are compared with the
kernel's own figures (the window it prints), never with host timings. `profile: busy` needs a second shell (the
UDP shell, a later issue); the unit tests cover it, so it is not faked here.

The window and sample-count checks hold only while QEMU gets the host's CPUs: on a host busy with other QEMUs a
vCPU thread can go unscheduled for hundreds of milliseconds, its timer ticks are lost, and a 500 ms window comes
back as 780 ms with a quarter of its samples. So a check that fails is retried (see `unstarved`) only when the
kernel's own tick counters (`cpus`) show that some CPU ticked well below 100 Hz of host time meanwhile; a failure
while every CPU got its ticks fails at once, and starvation on every attempt fails too.
"""

import re
import subprocess
import time

import pytest

from kprof_qemu import ELF, KprofError, cpus_table, poll, ps_table

CPUS = 4
TICK_MS = 10              # 100 Hz per CPU
# The window printed may overshoot the one asked for (the tick rounds a sleep up, and under TCG on a loaded
# 2-core host a vCPU can be descheduled for tens of ms), never undershoot.
WINDOW_SLACK_MS = 150
MAX_CALLERS = 7           # 8 frames: the leaf and up to 7 return addresses
CHAIN_TABLE = 128
USAGE = "usage: profile [ms] [pid|all] [chains|raw] [key=value]"
IDLE_LEAF = "sched_idle_loop"
BURN_CALLERS = ["burn_middle", "burn_outer", "burn_task"]  # burn_inner's callers, innermost first

# The report's lines (the spec's "The report"; a leaf or caller outside the kernel's symbols prints raw).
RX_WINDOW = re.compile(r"profiled (\d+) ms")
RX_HEADER = re.compile(r"(\d+) samples on (\d+) cpus, (\d+) dropped, source (\S.*)")
RX_TICK_SOURCE = re.compile(r"tick at (\d+) Hz \((\S[^\n]*)\)")
# A leaf may carry a mark: what its samples interrupted, when not ordinary code with interrupts on.
MARK = r"(?: \[(irqs off|in irq|in irq, irqs off|let in after \d+\.\d ms irqs off)\])?"
RX_LEAF = re.compile(r"^(\d+\.\d)% (\d+) (?:(\S+)\+0x([0-9a-f]+)(?:\.\.0x([0-9a-f]+))?|0x([0-9a-f]+))" + MARK + "$")
RX_LEAF_SPEC = re.compile(r"^\d+\.\d% \d+ \S+\+0x[0-9a-f]+(\.\.0x[0-9a-f]+)?" + MARK + "$")
RX_LEAF_RAW = re.compile(r"^\d+\.\d% \d+ 0x[0-9a-f]+" + MARK + "$")
RX_CALLER = re.compile(r"^        <- (?:(\S+)\+0x([0-9a-f]+)|0x([0-9a-f]+))$")
RX_CALLER_SPEC = re.compile(r"^        <- \S+$")
RX_MORE = re.compile(r"^\.\.\. (\d+) more chains, (\d+) samples \((\d+\.\d)%\)$")
RX_TABLE_FULL = re.compile(r"^more than %d distinct chains: (\d+) samples in chains not shown$" % CHAIN_TABLE)
RX_ASLEEP = re.compile(r"^no samples for pid (\d+): the task may simply have been asleep the whole window$")
RX_NOTHING = re.compile(r"^no samples: nothing was sampled in the window$")
# After the header when some sample carried a label set (the shell labels the task running a command):
# share, count and set per label set, hottest first. Parsed and checked in parse_labels (test_labels.py uses it).
RX_LABELS = re.compile(r"^labels: \d+\.\d% \(\d+\) \S+(?:, \d+\.\d% \(\d+\) \S+)*$")
RX_LABEL_SHARE = re.compile(r"(\d+\.\d)% \((\d+)\) (\S+?)(?:, |$)")
# The per-CPU line after the header: samples per CPU, "/drops" where there were any; wrapped at 100 columns.
RX_PER_CPU = re.compile(r"^per cpu:(?: \d+:\d+(?:/\d+)?)+$")
RX_PER_CPU_MORE = re.compile(r"^         (?: \d+:\d+(?:/\d+)?)+$")
RX_PER_CPU_ENTRY = re.compile(r"(\d+):(\d+)(?:/(\d+))?")
# How long the tick was held off by interrupts-off code, per CPU, and where it was let in; late ticks elsewhere.
RX_HELD_OFF = re.compile(r"^tick held off by interrupts-off code:((?:,? cpu \d+ \d+ ms \(\d+%\))+)"
                         r"(?:; let in at (\S+)\+0x[0-9a-f]+ \((sti|popf|\?)\))?$")
RX_HELD_CPU = re.compile(r"cpu (\d+) (\d+) ms \((\d+)%\)")
RX_LATE = re.compile(r"^ticks late elsewhere \(the cpu was taken away, not held off\):(?:,? cpu \d+ \d+ ms \(\d+%\))+$")


class Chain:
    def __init__(self, percent, count, leaf, lo, hi, raw):
        self.percent, self.count = percent, count
        self.leaf, self.lo, self.hi, self.raw = leaf, lo, hi, raw  # leaf None: raw address
        self.callers = []   # [(symbol or None, offset or raw address)], innermost first
        self.mark = None    # "irqs off", "in irq", "in irq, irqs off", "let in after N.N ms irqs off"

    def caller_names(self):
        return [name for name, _ in self.callers]

    def symbols(self):
        return [self.leaf] + self.caller_names()

    def __repr__(self):
        return "%d %s <- %s" % (self.count, self.leaf or hex(self.raw), " <- ".join(map(str, self.caller_names())))


class Report:
    def __init__(self, text):
        self.text = text
        self.window = self.samples = self.cpus = self.dropped = None
        self.source = None
        self.chains = []
        self.more = None        # (chains, samples, percent) of `... K more chains, M samples (P%)`
        self.not_tracked = 0    # M of `more than 128 distinct chains: M samples ...`
        self.asleep_pid = None
        self.nothing = False
        self.labels = None      # [(percent, count, set text)] of the labels: line, None without one
        self.hz = None          # the tick's rate, from the header
        self.per_cpu = {}       # cpu -> (samples, drops), from the per-CPU line
        self.held_off = {}      # cpu -> (ms, percent of the window) held off by interrupts-off code
        self.let_in_at = None   # the symbol where the held-off ticks were let in
        self.late_elsewhere = False

    def by_leaf(self, name):
        return [c for c in self.chains if c.leaf == name]


def _fail(text, why):
    raise KprofError("%s; the report:\n%s" % (why, text))


def _check_percent(text, shown, count, total):
    # one decimal, rounded: within half a tenth of the exact figure
    exact = 100.0 * count / total
    assert abs(float(shown) - exact) <= 0.05 + 1e-9, \
        "%s%% for %d of %d samples (exactly %.3f%%); the report:\n%s" % (shown, count, total, exact, text)


SPEC_LINES = [RX_WINDOW, RX_HEADER, RX_LABELS, RX_LEAF_SPEC, RX_LEAF_RAW, RX_CALLER_SPEC, RX_MORE, RX_TABLE_FULL,
              RX_ASLEEP, RX_NOTHING, RX_PER_CPU, RX_PER_CPU_MORE, RX_HELD_OFF, RX_LATE]


def parse_labels(text, line, samples):
    """The shares of a `labels:` line, checked: hottest first, each percentage right for its count, no set
    twice, and the counts adding up to the header's sample count."""
    shares = [(m.group(1), int(m.group(2)), m.group(3)) for m in RX_LABEL_SHARE.finditer(line[len("labels: "):])]
    assert shares, "an empty labels line:\n%s" % text
    counts = [n for _, n, _ in shares]
    assert counts == sorted(counts, reverse=True), "label sets not hottest first:\n%s" % text
    assert len({s for _, _, s in shares}) == len(shares), "a label set twice:\n%s" % text
    for percent, n, _ in shares:
        assert n > 0, "a label set with no samples:\n%s" % text
        _check_percent(text, percent, n, samples)
    assert sum(counts) == samples, "label set counts add up to %d, the header says %d:\n%s" \
        % (sum(counts), samples, text)
    assert any(s != "(none)" for _, _, s in shares), "a labels line with no label set:\n%s" % text
    return shares


def assert_spec_lines(text):
    """Every line of a report has one of the spec's forms, matched whole."""
    for line in text.split("\n"):
        assert any(rx.fullmatch(line) for rx in SPEC_LINES), "line %r has none of the report's forms:\n%s" \
            % (line, text)


def parse_report(text, ms, chains, pid=None):
    """Checks every line of a `profile ms pid chains` report against the spec's format, and that its figures
    agree with each other; returns it parsed. pid None: `all`."""
    assert_spec_lines(text)
    lines = text.split("\n")
    r = Report(text)
    if len(lines) < 3:
        _fail(text, "a report is a window line, a header line and at least one more")
    m = RX_WINDOW.fullmatch(lines[0])
    if not m:
        _fail(text, "the first line is not `profiled N ms`")
    r.window = int(m.group(1))
    assert ms <= r.window <= ms + WINDOW_SLACK_MS, "window %d ms for a %d ms request (want %d..%d):\n%s" \
        % (r.window, ms, ms, ms + WINDOW_SLACK_MS, text)
    m = RX_HEADER.fullmatch(lines[1])
    if not m:
        _fail(text, "the second line is not `S samples on C cpus, D dropped, source X`")
    r.samples, r.cpus, r.dropped, r.source = int(m.group(1)), int(m.group(2)), int(m.group(3)), m.group(4)
    # QEMU's TCG CPUs have no usable PMU, so the tick: `tick at N Hz`, with the reason the PMU was not used
    m = RX_TICK_SOURCE.fullmatch(r.source)
    assert m, "source %r, want the tick:\n%s" % (r.source, text)
    r.hz = int(m.group(1))
    assert r.cpus <= CPUS, "%d cpus contributed on a %d-CPU machine:\n%s" % (r.cpus, CPUS, text)
    # The window is drained while it runs: no rate the tick reaches fills a ring.
    assert r.dropped == 0, "samples dropped at the tick rate:\n%s" % text
    # No CPU ticks more than once per tick period, and each contributing CPU gave at least one sample.
    assert r.cpus <= r.samples <= r.cpus * (r.window * r.hz // 1000 + 2), \
        "%d samples on %d cpus in %d ms at %d Hz:\n%s" % (r.samples, r.cpus, r.window, r.hz, text)

    # The per-CPU line: every CPU in order, adding up to the header's samples, drops and contributing CPUs.
    if len(lines) < 3 or not RX_PER_CPU.fullmatch(lines[2]):
        _fail(text, "the third line is not the per-CPU line")
    per_cpu_text = lines[2][len("per cpu:"):]
    rest = lines[3:]
    while rest and RX_PER_CPU_MORE.fullmatch(rest[0]):
        per_cpu_text += rest[0]
        rest = rest[1:]
    entries = [(int(a), int(b), int(c or 0)) for a, b, c in RX_PER_CPU_ENTRY.findall(per_cpu_text)]
    assert [e[0] for e in entries] == list(range(len(entries))), "per-CPU entries out of order:\n%s" % text
    r.per_cpu = {cpu: (n, d) for cpu, n, d in entries}
    assert sum(n for n, _ in r.per_cpu.values()) == r.samples, "per-CPU samples do not add up:\n%s" % text
    assert sum(d for _, d in r.per_cpu.values()) == r.dropped, "per-CPU drops do not add up:\n%s" % text
    assert sum(1 for n, _ in r.per_cpu.values() if n) == r.cpus, "per-CPU line and header disagree:\n%s" % text
    if rest and RX_HELD_OFF.fullmatch(rest[0]):
        m = RX_HELD_OFF.fullmatch(rest[0])
        r.held_off = {int(c): (int(ms), int(pc)) for c, ms, pc in RX_HELD_CPU.findall(m.group(1))}
        r.let_in_at = m.group(2)
        rest = rest[1:]
    if rest and RX_LATE.fullmatch(rest[0]):
        r.late_elsewhere = True
        rest = rest[1:]
    if rest and RX_LABELS.fullmatch(rest[0]):
        r.labels = parse_labels(text, rest[0], r.samples)
        rest = rest[1:]
    if r.samples == 0:
        assert r.cpus == 0, "no samples but %d cpus contributed:\n%s" % (r.cpus, text)
        assert len(rest) == 1, "an empty report says why in one line:\n%s" % text
        if pid is not None:
            m = RX_ASLEEP.fullmatch(rest[0])
            if not m or int(m.group(1)) != pid:
                _fail(text, "an empty report for pid %d does not say the task may have been asleep" % pid)
            r.asleep_pid = pid
        else:
            if not RX_NOTHING.fullmatch(rest[0]):
                _fail(text, "an empty report for all does not say nothing was sampled")
            r.nothing = True
        return r

    i = 0
    while i < len(rest) and RX_LEAF.match(rest[i]):
        line = rest[i]
        if not (RX_LEAF_SPEC.match(line) or RX_LEAF_RAW.match(line)):
            _fail(text, "leaf line %r does not match the spec's form" % line)
        m = RX_LEAF.match(line)
        if m.group(3) is not None:
            lo = int(m.group(4), 16)
            hi = int(m.group(5), 16) if m.group(5) is not None else lo
            assert lo < hi or m.group(5) is None, "span %r is not low..high:\n%s" % (line, text)
            c = Chain(m.group(1), int(m.group(2)), m.group(3), lo, hi, None)
        else:
            c = Chain(m.group(1), int(m.group(2)), None, None, None, int(m.group(6), 16))
        c.mark = m.group(7)
        assert c.count > 0, "a chain with no samples:\n%s" % text
        _check_percent(text, c.percent, c.count, r.samples)
        i += 1
        while i < len(rest) and rest[i].startswith("        <- "):
            if not RX_CALLER_SPEC.match(rest[i]):
                _fail(text, "caller line %r does not match the spec's form" % rest[i])
            m = RX_CALLER.match(rest[i])
            if not m:
                _fail(text, "caller line %r is neither Sym+0xoff nor a raw 0x address" % rest[i])
            c.callers.append((m.group(1), int(m.group(2), 16)) if m.group(1) else (None, int(m.group(3), 16)))
            i += 1
        assert len(c.callers) <= MAX_CALLERS, "more than %d callers in one chain:\n%s" % (MAX_CALLERS, text)
        r.chains.append(c)
    if i < len(rest):
        m = RX_MORE.fullmatch(rest[i])
        if m:
            r.more = (int(m.group(1)), int(m.group(2)), m.group(3))
            i += 1
    if i < len(rest):
        m = RX_TABLE_FULL.fullmatch(rest[i])
        if m:
            r.not_tracked = int(m.group(1))
            assert r.not_tracked > 0, "the table-full line counts no samples:\n%s" % text
            i += 1
    if i < len(rest):
        _fail(text, "line %r is not part of a report" % rest[i])

    assert r.chains, "samples but no chains:\n%s" % text
    assert len(r.chains) <= chains, "%d chains shown, %d asked for:\n%s" % (len(r.chains), chains, text)
    counts = [c.count for c in r.chains]
    assert counts == sorted(counts, reverse=True), "chains not hottest first:\n%s" % text
    shown = sum(counts)
    more_samples = 0
    if r.more:
        k, more_samples, percent = r.more
        assert k > 0 and more_samples >= k, "`... %d more chains, %d samples`:\n%s" % (k, more_samples, text)
        assert len(r.chains) == chains, "chains left out while fewer than asked for were shown:\n%s" % text
        # every chain left out is no hotter than the coldest shown
        assert more_samples <= k * counts[-1], "a chain left out is hotter than one shown:\n%s" % text
        _check_percent(text, percent, more_samples, r.samples)
        assert len(r.chains) + k <= CHAIN_TABLE, "more chains than the table holds:\n%s" % text
    if r.not_tracked:
        assert len(r.chains) + (r.more[0] if r.more else 0) == CHAIN_TABLE, \
            "samples outside the table while the table was not full:\n%s" % text
    assert r.samples == shown + more_samples + r.not_tracked, \
        "header says %d samples; chains shown %d + not shown %d + outside the table %d = %d:\n%s" \
        % (r.samples, shown, more_samples, r.not_tracked, shown + more_samples + r.not_tracked, text)
    return r


def profile(k, ms, who="all", chains=None):
    """Runs `profile ms who [chains]` and returns the report, checked and parsed."""
    line = "profile %d %s" % (ms, who) + ("" if chains is None else " %d" % chains)
    out = k.cmd(line, timeout=30 + ms / 1000.0)
    return parse_report(out, ms, 8 if chains is None else chains, None if who == "all" else int(who))


def burn_pids(out):
    m = re.fullmatch(r"burn: started (\d+) tasks for (\d+) ms \(pids((?: \d+)*)\)", out)
    assert m, "burn said:\n%s" % out
    pids = [int(p) for p in m.group(3).split()]
    assert len(pids) == int(m.group(1)), "burn said:\n%s" % out
    return pids


def wait_burn_done(k):
    """Until the last burn run has finished and its tasks are gone from ps."""
    poll("the burn run finished", lambda: k.cmd("burn").startswith("burn: last run"), timeout=30, every=0.1)
    wait_no_burn(k)


def wait_no_burn(k):
    """Until no burn run is going and no burn task is left in ps."""
    poll("no burn run going", lambda: "running" not in k.cmd("burn"), timeout=30, every=0.1)
    poll("the burn tasks reaped", lambda: not [t for t in ps_table(k) if t[3] == "burn"], timeout=15, every=0.1)


def mem_used_blocks(k):
    out = k.cmd("mem")
    m = re.search(r"(?m)^heap: used (\d+) bytes in (\d+) blocks,", out)
    if not m:
        raise KprofError("mem said:\n%s" % out)
    return int(m.group(1)), int(m.group(2))


def is_burn_chain(c):
    """A chain of a burn task: it runs from task_entry_trampoline through burn_task."""
    names = c.symbols()
    return len(names) >= 2 and names[-1] == "task_entry_trampoline" and names[-2] == "burn_task"


def static_callees(root, elf=ELF):
    """Every function root can reach by direct calls in the kernel ELF (root included): the leaves a
    sample of a task running root can land in."""
    dis = subprocess.run(["objdump", "-d", "--no-show-raw-insn", elf], check=True, capture_output=True,
                         text=True, timeout=120).stdout
    calls, fn = {}, None
    for line in dis.splitlines():
        m = re.match(r"^[0-9a-f]+ <([^>]+)>:$", line)
        if m:
            fn = m.group(1)
            calls.setdefault(fn, set())
            continue
        m = re.search(r"\scall\s+[0-9a-f]+ <([^>+]+)>", line)
        if m and fn:
            calls[fn].add(m.group(1))
    assert root in calls, "%s is not in %s" % (root, elf)
    seen, todo = set(), [root]
    while todo:
        f = todo.pop()
        if f not in seen:
            seen.add(f)
            todo.extend(calls.get(f, ()))
    return seen


def cpu_ticks(k):
    """(host time, {cpu: TICKS}) from `cpus`, the host time taken halfway through the command."""
    t0 = time.monotonic()
    table = cpus_table(k)
    return (t0 + time.monotonic()) / 2, {cpu: row[2] for cpu, row in table.items()}


def lost_ticks(k, since, hz=1000 // TICK_MS):
    """{cpu: (ticks, expected)} for each CPU that ticked well below hz (the tick's rate) of host time since
    `since`."""
    t1, now = cpu_ticks(k)
    t0, then = since
    expected = (t1 - t0) * hz
    return {c: (now[c] - then.get(c, 0), round(expected)) for c in now if now[c] - then.get(c, 0) < 0.9 * expected - 2}


ATTEMPTS = 4


def unstarved(k, attempt, what):
    """attempt()'s result; an attempt whose checks failed is retried only when some CPU lost ticks meanwhile
    (the host starved QEMU, so nothing about timing can be judged), up to ATTEMPTS in all."""
    starved = []
    for _ in range(ATTEMPTS):
        since = cpu_ticks(k)
        try:
            return attempt()
        except AssertionError as e:
            lost = lost_ticks(k, since)
            if not lost:
                raise
            note = "%s failed while the host starved QEMU (CPU: (ticks, expected) %s): %s" \
                % (what, lost, str(e).split("\n")[0])
            print(note)  # shown with the test's output if it fails in the end
            starved.append(note)
    raise KprofError("the host starved QEMU of its ticks on all %d attempts, so the checks could not be judged:\n%s"
                     % (ATTEMPTS, "\n".join(starved)))


# ---- (a) a known load: its chain, in order, holds its share ----------------------------------------------------
def test_burn_is_the_hottest_chain_with_its_callers_in_order(kernel):
    def attempt():
        wait_no_burn(kernel)
        pids = burn_pids(kernel.cmd("burn 1500 2"))
        assert len(pids) == 2
        r = profile(kernel, 1000, "all", 3)
        assert r.cpus == CPUS, "not every CPU contributed to a 1 s profile of all:\n%s" % r.text
        # 4 CPUs at 100 Hz: ~400 samples in a second; a CPU whose tick went missing would show here
        expected = CPUS * r.window / TICK_MS
        assert r.samples >= 0.9 * expected, "%d samples in %d ms on %d CPUs (~%d expected):\n%s" \
            % (r.samples, r.window, CPUS, expected, r.text)

        non_idle = [c for c in r.chains if c.leaf != IDLE_LEAF]
        assert non_idle, "only idle chains while two burn tasks ran:\n%s" % r.text
        top = non_idle[0]
        assert top.leaf == "burn_inner", "the hottest non-idle chain is not burn_inner's:\n%s" % r.text
        assert top.caller_names() == BURN_CALLERS + ["task_entry_trampoline"], \
            "burn_inner's callers are %s, want %s <- task_entry_trampoline:\n%s" \
            % (top.caller_names(), " <- ".join(BURN_CALLERS), r.text)
        # burn_inner is reached from one call site of each caller: one chain, not several
        assert len(r.by_leaf("burn_inner")) == 1, "burn_inner split into several chains:\n%s" % r.text

        burn = sum(c.count for c in r.chains if is_burn_chain(c))
        idle = sum(c.count for c in r.chains if c.leaf == IDLE_LEAF)
        # what is not shown counts against burn: it may be anything
        assert burn > 0.8 * (r.samples - idle), \
            "burn chains hold %d of %d non-idle samples:\n%s" % (burn, r.samples - idle, r.text)
        # two burners on four CPUs: about half of every sample
        assert burn > 0.35 * r.samples, "burn chains hold %d of %d samples:\n%s" % (burn, r.samples, r.text)
        wait_burn_done(kernel)

    unstarved(kernel, attempt, "burn 1500 2, profile 1000 all 3")


# ---- (b) a pid filter: only that task, and an empty report for a sleeping one ------------------------------
def test_pid_filter_shows_only_that_burn_task(kernel):
    reachable = static_callees("burn_task")

    def attempt():
        wait_no_burn(kernel)
        pids = burn_pids(kernel.cmd("burn 1500 2"))
        r = profile(kernel, 500, str(pids[0]), 8)
        # one busy task, mostly alone on a CPU: it is sampled at nearly every tick of one CPU
        assert r.samples >= 0.5 * r.window / TICK_MS, \
            "%d samples of a busy task in %d ms:\n%s" % (r.samples, r.window, r.text)
        for c in r.chains:
            assert is_burn_chain(c) or (c.leaf == "burn_task" and c.caller_names() == ["task_entry_trampoline"]), \
                "chain %r is not the burn task's:\n%s" % (c, r.text)
            assert c.leaf in reachable, "leaf %s is not reachable from burn_task:\n%s" % (c.leaf, r.text)
            for name in c.caller_names():
                assert name == "task_entry_trampoline" or name.startswith("burn_"), \
                    "caller %s in a burn task's chain:\n%s" % (name, r.text)
        assert r.chains[0].leaf == "burn_inner", "the burn task's hottest leaf is not burn_inner:\n%s" % r.text
        assert r.chains[0].caller_names() == BURN_CALLERS + ["task_entry_trampoline"], \
            "the burn task's hottest chain:\n%s" % r.text
        wait_burn_done(kernel)

    unstarved(kernel, attempt, "burn 1500 2, profile 500 PID")


def test_pid_filter_on_a_sleeping_task_says_it_may_have_been_asleep(kernel):
    wait_no_burn(kernel)
    reapers = [t for t in ps_table(kernel) if t[3] == "reaper"]
    assert len(reapers) == 1, "ps shows reapers %s" % reapers
    pid, _, state, _ = reapers[0]
    assert state == "blocked", "the reaper is %s, not blocked, with nothing to reap" % state
    r = unstarved(kernel, lambda: profile(kernel, 300, str(pid), 8), "profile 300 REAPER")
    assert r.asleep_pid == pid and r.samples == 0 and r.cpus == 0, r.text


def test_unknown_and_finished_pids_are_refused(kernel):
    assert kernel.cmd("profile 100 99999") == "profile: no task with pid 99999"
    assert kernel.cmd("profile 100 4294967295") == "profile: no task with pid 4294967295"
    wait_no_burn(kernel)
    pids = burn_pids(kernel.cmd("burn 50 1"))
    wait_burn_done(kernel)
    assert kernel.cmd("profile 100 %d" % pids[0]) == "profile: no task with pid %d" % pids[0]
    unstarved(kernel, lambda: profile(kernel, 100), "profile 100 all")  # nothing was left started


# ---- (c) defaults, and counts that add up ------------------------------------------------------------------
def test_default_arguments_profile_all_for_a_second_with_8_chains(kernel):
    for line, ms in [("profile", 1000), ("profile 200", 200), ("profile 200 all", 200)]:
        def attempt():
            r = parse_report(kernel.cmd(line, timeout=30), ms, 8)
            assert r.cpus == CPUS, "not every CPU contributed:\n%s" % r.text
        unstarved(kernel, attempt, line)


def test_counts_add_up_under_load_with_every_chain_limit(kernel):
    # burn keeps two CPUs busy; with the idle CPUs they give several chains to fold and cut off
    def attempt():
        wait_no_burn(kernel)
        burn_pids(kernel.cmd("burn 2000 2"))
        reports = [profile(kernel, 300, "all", chains) for chains in (1, 2, 128)]
        assert any(r.more for r in reports[:2]), \
            "no report cut its chains off: the `... more chains` line went untested"
        wait_burn_done(kernel)

    unstarved(kernel, attempt, "burn 2000 2, profile 300 all 1|2|128")


# ---- (d) bad arguments ---------------------------------------------------------------------------------------
BAD_ARGS = ["profile 0", "profile 2001", "profile -5", "profile abc", "profile 12x", "profile 1.5",
            "profile 99999999999999999999", "profile 100 all 3 extra", "profile 100 all 0", "profile 100 all 129",
            "profile 100 all -1", "profile 100 all 3x", "profile 100 abc", "profile 100 -5", "profile 100 12x",
            "profile 100 4294967296", "profile 100 ALL"]


@pytest.mark.parametrize("line", BAD_ARGS)
def test_bad_arguments_get_the_usage_line_and_start_nothing(kernel, line):
    assert kernel.cmd(line) == USAGE, "%r answered otherwise" % line
    # nothing was started or left holding the profiler: the next profile runs (not `profile: busy`)
    unstarved(kernel, lambda: profile(kernel, 100, "all", 8), "profile 100 all 8 after %r" % line)


# ---- (e) start/stop cycles leave the heap at its baseline ----------------------------------------------------
def test_200_start_stop_cycles_leave_mem_at_baseline(kernel):
    wait_no_burn(kernel)  # a burn task's stack is freed when it is reaped: none may be pending
    # warm-up: the rings are allocated at the first start and kept
    unstarved(kernel, lambda: profile(kernel, 1, "all", 1), "profile 1 all 1")
    baseline = mem_used_blocks(kernel)
    for _ in range(200):
        unstarved(kernel, lambda: profile(kernel, 1, "all", 1), "profile 1 all 1")
    poll("heap back to %d bytes in %d blocks" % baseline, lambda: mem_used_blocks(kernel) == baseline,
         timeout=10)
