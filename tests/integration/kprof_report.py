"""The `profile` command's report, parsed and checked, and the profile helpers the integration modules share.

Owns: the report's line forms (the RX_* regexes, the spec's "The report", shared/seeds/profiler-spec.txt),
parse_report (every line checked against its form and every figure against the others; a Report of Chains),
parse_labels, profile() (run one `profile` and parse it), the burn load's helpers (burn_pids, wait_no_burn,
wait_burn_done, is_burn_chain, static_callees, burn_labelled), console_report (a command's output as the serial
line carried it), mem_used_blocks, and the figures of the standard test kernel
(CPUS, TICK_MS, WINDOW_SLACK_MS). tests/integration/test_profile.py tests the command with these; the other
integration modules, tests/soak and tests/bench import them from here. The starved-QEMU retry rule (unstarved)
is kprof_qemu's.
"""

import re
import subprocess

from kprof_qemu import ELF, TICK_HZ, HostStarved, KprofError, poll, ps_table

CPUS = 4
TICK_MS = 1000 // TICK_HZ  # 100 Hz per CPU
# The window printed may overshoot the one asked for (the tick rounds a sleep up, and under TCG on a loaded
# 2-core host a vCPU can be descheduled for tens of ms), never undershoot.
WINDOW_SLACK_MS = 150
MAX_CALLERS = 7           # 8 frames: the leaf and up to 7 return addresses
CHAIN_TABLE = 128
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
# Why the percentages are not the counts' shares, when they are not (a held-off tick, under QEMU).
RX_WEIGHTED = re.compile(r"^percentages are of weight, not of sample counts: (.+)$")


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
        self.late_elsewhere_ms = {}  # cpu -> ms its ticks came late while the host had taken the CPU away

    def by_leaf(self, name):
        return [c for c in self.chains if c.leaf == name]

    def ticks_accounted(self):
        """The samples plus the tick periods the kernel says the host took (its `ticks late elsewhere` line): what
        a window's worth of ticks should come to when no tick went missing unaccounted. The report names that time
        only past 5% of the CPUs' window, so below that the samples alone stand."""
        return self.samples + sum(self.late_elsewhere_ms.values()) * self.hz // 1000


def _fail(text, why):
    raise KprofError("%s; the report:\n%s" % (why, text))


def _check_percent(text, shown, count, total):
    # one decimal, rounded: within half a tenth of the exact figure
    exact = 100.0 * count / total
    assert abs(float(shown) - exact) <= 0.05 + 1e-9, \
        "%s%% for %d of %d samples (exactly %.3f%%); the report:\n%s" % (shown, count, total, exact, text)


SPEC_LINES = [RX_WINDOW, RX_HEADER, RX_LABELS, RX_LEAF_SPEC, RX_LEAF_RAW, RX_CALLER_SPEC, RX_MORE, RX_TABLE_FULL,
              RX_ASLEEP, RX_NOTHING, RX_PER_CPU, RX_PER_CPU_MORE, RX_HELD_OFF, RX_LATE, RX_WEIGHTED]


def parse_labels(text, line, samples, weighted=False):
    """The shares of a `labels:` line, checked: hottest first, each percentage right for its count, no set
    twice, and the counts adding up to the header's sample count."""
    shares = [(m.group(1), int(m.group(2)), m.group(3)) for m in RX_LABEL_SHARE.finditer(line[len("labels: "):])]
    assert shares, "an empty labels line:\n%s" % text
    counts = [n for _, n, _ in shares]
    hotness = [float(p) for p, _, _ in shares] if weighted else counts
    assert hotness == sorted(hotness, reverse=True), "label sets not hottest first:\n%s" % text
    assert len({s for _, _, s in shares}) == len(shares), "a label set twice:\n%s" % text
    for percent, n, _ in shares:
        assert n > 0, "a label set with no samples:\n%s" % text
        if not weighted:  # let-in ticks weigh more than one: percentages are of weight
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


def parse_report(text, ms, chains, pid=None, cpus=CPUS):
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
    over = r.window - ms - WINDOW_SLACK_MS
    late = [int(taken) for line in lines if RX_LATE.fullmatch(line) for _, taken, _ in RX_HELD_CPU.findall(line)]
    if over > 0 and late and max(late) >= over:
        # the report itself says the host took a CPU away for longer than the overshoot: the shell's wake at
        # the window's end may have waited on it (the retry rule's evidence, kprof_qemu.unstarved)
        raise HostStarved("window %d ms for a %d ms request, and the host took a CPU away for %d ms in it:\n%s"
                          % (r.window, ms, max(late), text))
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
    assert r.cpus <= cpus, "%d cpus contributed on a %d-CPU machine:\n%s" % (r.cpus, cpus, text)
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
        r.late_elsewhere_ms = {int(c): int(ms) for c, ms, _ in RX_HELD_CPU.findall(rest[0])}
        rest = rest[1:]
    # said exactly when a tick was held off (no counter, so neither throttled nor mixed, under QEMU)
    weighted = bool(rest) and RX_WEIGHTED.fullmatch(rest[0])
    assert bool(weighted) == bool(r.held_off), "the weighted-percentages line and the held-off line disagree:\n%s" \
        % text
    if weighted:
        assert weighted.group(1) == "a held-off tick weighs the ticks it stood for", text
        rest = rest[1:]
    if rest and RX_LABELS.fullmatch(rest[0]):
        r.labels = parse_labels(text, rest[0], r.samples, weighted=bool(r.held_off))
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
        if not r.held_off:  # a let-in tick weighs every tick it stood for: percentages are of weight, not count
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
    hotness = [float(c.percent) for c in r.chains] if r.held_off else counts  # weighted: by share, not count
    assert hotness == sorted(hotness, reverse=True), "chains not hottest first:\n%s" % text
    shown = sum(counts)
    more_samples = 0
    if r.more:
        k, more_samples, percent = r.more
        assert k > 0 and more_samples >= k, "`... %d more chains, %d samples`:\n%s" % (k, more_samples, text)
        assert len(r.chains) == chains, "chains left out while fewer than asked for were shown:\n%s" % text
        # every chain left out is no hotter than the coldest shown (by weight when weighted: not countable here)
        assert r.held_off or more_samples <= k * counts[-1], "a chain left out is hotter than one shown:\n%s" % text
        if not r.held_off:
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


def finished_pid(k):
    """The pid of a burn task that ran and is gone (no such task any more): for commands that must refuse it."""
    wait_no_burn(k)
    pids = burn_pids(k.cmd("burn 50 1"))
    wait_burn_done(k)
    return pids[0]


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


def burn_labelled(k, ms, tasks, wait_idle=False):
    """Starts burn tasks, labels the first job=a and the others job=b (each `label` answer checked); returns their
    pids. wait_idle: first waits (30 s at most) until `burn` says no run is going."""
    if wait_idle:
        poll("no burn run going", lambda: "running" not in k.cmd("burn"), timeout=30, every=0.1)
    out = k.cmd("burn %d %d" % (ms, tasks))
    m = re.fullmatch(r"burn: started (\d+) tasks for \d+ ms \(pids((?: \d+)*)\)", out)
    assert m, "burn said %r" % out
    pids = [int(p) for p in m.group(2).split()]
    for i, pid in enumerate(pids):
        assert k.cmd("label %d job=%s" % (pid, "a" if i == 0 else "b")) == "pid %d labels job=%s" \
            % (pid, "a" if i == 0 else "b")
    return pids


def console_report(k, line, timeout=30):
    """Runs one shell line and returns the console's output between its echo and the next prompt exactly as
    the serial line carried it, only its line ends made \n (kprof_qemu's cmd() drops every \r and the last
    newline). The console ends each line with \r\n, and the pty QEMU's serial is read through adds a \r of
    its own: \r\r\n; no other \r may be left."""
    k.cmd("")                       # the unconsumed output is the prompt's: the next bytes are the line's
    start = len(k._raw)
    k.cmd(line, timeout=timeout)
    raw = "".join(k._raw[start:]).replace("\r\r\n", "\n").replace("\r\n", "\n")
    assert "\r" not in raw, "a carriage return that is not a line end: %r" % raw
    echo = raw.index(line + "\n") + len(line) + 1
    end = raw.rindex("\n> ") + 1
    return raw[echo:end]
