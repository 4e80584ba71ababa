"""scripts/kprof_profile.py and scripts/profexport on the host, without QEMU.

- The fold and the report against hand-computed expectations, and against the kernel's own
  kernel/profiler/fold.c and report.c (built here with tests/host/kernel_report.c) on randomised runs: the same text.
- The symbol table and its lookups (a return address at addr - 1), as scripts/gensyms.py selects symbols.
- The raw format: the kernel's raw output parses back to the records it was made of, and prints back to the
  same text; every kind of truncated or malformed input, and input from another build, is refused.
- Ring selection for scripts/prof.py: records decoded by layout, the run's block found walking back.
- Folded stacks and pprof over a small ELF built here (functions, an inlined frame, a build id): the counts
  add up, the protobuf reads back, and `go tool pprof` shows the leaf on top, the callers and the labels.
- scripts/profexport end to end: a file, a build id mismatch, truncation, and --udp against fake kernels.

Runs with /usr/bin/python3 (python3-protobuf); needs gcc, binutils, protoc and golang-go (scripts/deps.sh).
"""

import gzip
import os
import random
import re
import socket
import struct
import subprocess
import sys
import threading

import pytest

import host_build  # noqa: E402
from host_build import PROFEXPORT  # noqa: E402

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(TOP, "scripts"))
import kprof_profile as kp  # noqa: E402
sys.path.insert(0, os.path.join(TOP, "tests", "integration"))
from kprof_pprof import go_pprof, pb2  # noqa: E402,F401 -- pb2 is a fixture
import kprof_wire  # noqa: E402

kernel_report = host_build.kernel_report  # module fixtures (host_build.py): the kernel's report as a program
tiny = host_build.tiny                    # and a small ELF



# ---- a synthetic symbol table ----------------------------------------------------------------------------------

# Text [0x1000, 0x10000); 0x1900..0x2000 is a gap; Filler has size 0 (assembly) and reaches text_end.
SYMS = [(0x1000, 0x80, b"MemCpy"), (0x1100, 0x100, b"NetFrame::Copy"), (0x1200, 0x300, b"VirtioNet::Receive"),
        (0x1600, 0x40, b"Spin"), (0x1700, 0x200, b"Main"), (0x2000, 0, b"Filler")]
MEMCPY, COPY, RECEIVE, SPIN, MAIN, FILLER = (a for a, _, _ in SYMS)


@pytest.fixture
def tab():
    return kp.Symtab(SYMS, 0x1000, 0x10000)


def sample(frames, cpu=0, pid=1, labels=()):
    return kp.Sample(cpu, pid, 0, labels, tuple(frames))


TICK = "source tick at 100 Hz (no usable PMU)\n"


def report(tab, samples, chains=8, run=None, pid=None, label=None):
    fold, _ = kp.fold_samples(samples, tab, pid=pid, label=label)
    run = run or kp.tick_run(1000)
    return "\n".join(kp.report_lines(run, fold, chains, pid, label)) + "\n"


# ---- the symbol table ------------------------------------------------------------------------------------------

NM = b"""\
0000000000000800 D some_data
0000000000001000 T __text_start
0000000000001000 0000000000000080 T MemCpy
0000000000001000 0000000000000080 t memcpy_alias
0000000000001080 t .Lloop
0000000000001100 0000000000000100 W weak_in_text
0000000000001100 0000000000000100 t local_twin
0000000000001200 t asm_no_size
0000000000001300 0000000000000010 T sized
0000000000001400 T __text_end
0000000000001500 0000000000000010 W weak_outside
"""


def test_symtab_selects_as_gensyms_does():
    t = kp.Symtab.from_nm_output(NM)
    assert (t.text_start, t.text_end) == (0x1000, 0x1400)
    # one symbol per address (a global over a local, a strong over a weak), no local labels, no data, no
    # markers, no weak symbol outside the text
    assert t.names == ["MemCpy", "weak_in_text", "asm_no_size", "sized"]
    assert t.lookup(0x1000) == kp.Hit("MemCpy", 0x1000, 0)
    assert t.lookup(0x107f) == kp.Hit("MemCpy", 0x1000, 0x7f)
    assert t.lookup(0x1080) is None, "past MemCpy's size: the gap is no one's"
    assert t.lookup(0x12ff) == kp.Hit("asm_no_size", 0x1200, 0xff), "size 0 reaches the next symbol"
    assert t.lookup(0x1310) is None
    assert t.lookup(0x0fff) is None and t.lookup(0x1400) is None, "outside [text_start, text_end)"
    assert t.find("sized") == 0x1300 and t.find("memcpy_alias") is None


def test_symtab_refuses_nm_output_without_text_markers():
    with pytest.raises(kp.ProfileError, match="__text_end"):
        kp.Symtab.from_nm_output(b"0000000000001000 T __text_start\n0000000000001000 0000000000000010 T f\n")


def test_return_address_resolves_at_addr_minus_one(tab):
    # a call that ends NetFrame::Copy (to a function that does not return) leaves a return address at its
    # end, which is VirtioNet::Receive's start: it is Copy's call, printed with the return address's offset
    assert tab.lookup_return(RECEIVE) == kp.Hit("NetFrame::Copy", COPY, 0x100)
    assert tab.caller_text(RECEIVE) == "NetFrame::Copy+0x100"
    assert tab.leaf_text(RECEIVE) == "VirtioNet::Receive+0x0"
    assert tab.caller_text(MAIN) == "0x1700", "Main - 1 is past Spin's size: no one's"
    assert tab.lookup_return(0) is None and tab.caller_text(0) == "0x0"
    assert tab.caller_text(0x1000) == "0x1000", "0xfff is below the text"
    assert tab.caller_text(0x1950) == "0x1950", "in the gap"


# ---- the fold and the report, by hand --------------------------------------------------------------------------

def test_leaf_folds_by_symbol_with_its_span(tab):
    s = [sample([MEMCPY + off, COPY + 0x44, RECEIVE + 0x1b2]) for off in (0x20, 0x3e, 0x1a)]
    assert report(tab, s) == (
        "profiled 1000 ms\n"
        "3 samples on 1 cpus, 0 dropped, " + TICK +
        "per cpu: 0:3 1:0 2:0 3:0\n"
        "100.0% 3 MemCpy+0x1a..0x3e\n"
        "        <- NetFrame::Copy+0x44\n"
        "        <- VirtioNet::Receive+0x1b2\n")


def test_callers_fold_by_exact_return_address_and_ties_keep_first_seen_order(tab):
    s = [sample([SPIN + 0x1a, MAIN + 0x10], cpu=1),
         sample([SPIN + 0x1a, MAIN + 0x30], cpu=2),   # another call site: another chain
         sample([SPIN + 0x1c, MAIN + 0x10], cpu=1),
         sample([SPIN + 0x1a, MAIN + 0x30], cpu=0),
         sample([MEMCPY, COPY + 0x10])]
    assert report(tab, s) == (
        "profiled 1000 ms\n"
        "5 samples on 3 cpus, 0 dropped, " + TICK +
        "per cpu: 0:2 1:2 2:1 3:0\n"
        "40.0% 2 Spin+0x1a..0x1c\n"
        "        <- Main+0x10\n"
        "40.0% 2 Spin+0x1a\n"
        "        <- Main+0x30\n"
        "20.0% 1 MemCpy+0x0\n"
        "        <- NetFrame::Copy+0x10\n")


def test_unresolved_addresses_print_raw(tab):
    s = [sample([0x1950, 0x0fff0000, MAIN + 0x20]), sample([0x1960, 0x0fff0000, MAIN + 0x20]),
         sample([0x20000])]
    assert report(tab, s) == (
        "profiled 1000 ms\n"
        "3 samples on 1 cpus, 0 dropped, " + TICK +
        "per cpu: 0:3 1:0 2:0 3:0\n"
        "33.3% 1 0x1950\n"            # an unresolved leaf folds by its exact address
        "        <- 0xfff0000\n"
        "        <- Main+0x20\n"
        "33.3% 1 0x1960\n"
        "        <- 0xfff0000\n"
        "        <- Main+0x20\n"
        "33.3% 1 0x20000\n")


def test_percentages_round_half_up_in_tenths():
    assert [kp.percent(p, w) for p, w in [(1, 8), (1, 3), (2, 3), (1, 16), (1, 2000), (1, 2001), (0, 5),
                                          (5, 5), (1, 0), (999, 1000), (19999, 20000)]] == \
        ["12.5%", "33.3%", "66.7%", "6.3%", "0.1%", "0.0%", "0.0%", "100.0%", "0.0%", "99.9%", "100.0%"]


def test_more_chains_and_the_128_chain_table(tab):
    s = []
    for i in range(130):                 # 130 distinct chains, hotter first
        s += [sample([MEMCPY, FILLER + 0x1000 + i])] * (2 if i < 3 else 1)
    text = report(tab, s, chains=2)
    assert text.split("\n")[1] == "133 samples on 1 cpus, 0 dropped, source tick at 100 Hz (no usable PMU)"
    assert text.split("\n")[3:] == [
        "1.5% 2 MemCpy+0x0", "        <- Filler+0x1000",
        "1.5% 2 MemCpy+0x0", "        <- Filler+0x1001",
        "... 126 more chains, 127 samples (95.5%)",
        "more than 128 distinct chains: 2 samples in chains not shown", ""]


def test_a_chain_already_in_a_full_table_still_counts(tab):
    s = [sample([MEMCPY, FILLER + i]) for i in range(128)] + [sample([MEMCPY, FILLER + 999])] + \
        [sample([MEMCPY, FILLER + 5])] * 3
    fold, _ = kp.fold_samples(s, tab)
    assert (fold.samples, fold.not_tracked, len(fold.chains)) == (132, 1, 128)
    assert fold.hottest()[0].callers == (FILLER + 5,) and fold.hottest()[0].count == 4


def test_label_breakdown_and_filters(tab):
    a, b = (("job", "a"),), (("cmd", "x"), ("job", "b"))
    s = [sample([SPIN], labels=a), sample([SPIN], labels=b), sample([SPIN], labels=b), sample([SPIN], pid=2)]
    assert report(tab, s).split("\n")[3] == "labels: 50.0% (2) cmd=x,job=b, 25.0% (1) job=a, 25.0% (1) (none)"
    assert report(tab, s, label=("job", "b")).split("\n")[1:4] == [
        "2 samples on 1 cpus, 0 dropped, source tick at 100 Hz (no usable PMU)", "per cpu: 0:2 1:0 2:0 3:0",
        "labels: 100.0% (2) cmd=x,job=b"]
    assert "labels:" not in report(tab, [sample([SPIN])]), "no line when no sample carried a set"


def test_empty_reports_say_why(tab):
    s = [sample([SPIN], pid=1)]
    assert report(tab, s, pid=9).split("\n")[3] == \
        "no samples for pid 9: the task may simply have been asleep the whole window"
    assert report(tab, s, label=("job", "z")).split("\n")[3] == \
        "no samples with label job=z: no task that carried it was sampled in the window"
    assert report(tab, s, pid=9, label=("job", "z")).split("\n")[3] == \
        "no samples for pid 9 with label job=z: the task may have been asleep, or without that label, " \
        "the whole window"
    assert report(tab, []).split("\n")[1:] == [
        "0 samples on 0 cpus, 0 dropped, source tick at 100 Hz (no usable PMU)", "per cpu: 0:0 1:0 2:0 3:0",
        "no samples: nothing was sampled in the window", ""]
    counter = kp.RunInfo(1, 1000, 4, "pmu/nmi intel fixed-ctr1", None, 100, 1000000, 2100000,
                         cpus=[kp.CpuAccount(1, kp.CPU_COUNTER) for _ in range(4)])
    assert report(tab, [], run=counter).split("\n")[1:5] == [
        "0 samples on 0 cpus, 0 dropped, source pmu/nmi intel fixed-ctr1 every 2100000 cycles",
        "per cpu: 0:0 1:0 2:0 3:0", "no samples: nothing was sampled in the window",
        "idle CPUs contribute nothing on the counter: it counts unhalted cycles"]


# ---- the fold and the report, against the kernel's ------------------------------------------------------------

LABEL_SETS = [(("job", "a"),), (("cmd", "x"), ("job", "b")), (("aa", "2"), ("mm", "3"), ("zz", "1"))]
LABEL_DECLS = ["label 0 job=a", "label 1 job=b,cmd=x", "label 2 zz=1,aa=2,mm=3"]  # interned sorted by key


def random_symbols(rng):
    syms, addr = [], 0x100000
    for i in range(60):
        addr += rng.choice([0, 0, 0x10, 0x40])           # sometimes a gap between functions
        size = rng.choice([0, 0x20, 0x31, 0x80, 0x200]) if i % 7 else 0
        syms.append((addr, size, b"fn_%d" % i))
        addr += size or rng.choice([0x30, 0x50])
    return syms, 0x100000 - 0x10, addr + 0x40          # text starts below the first symbol


def random_address(rng, syms, text_end):
    a, size, _ = rng.choice(syms)
    kind = rng.random()
    if kind < 0.6:
        return a + rng.randrange(max(size, 1))
    if kind < 0.75:
        return a                                       # a function's start: as a return address, the one before
    if kind < 0.85:
        return a + size + rng.randrange(0x10)          # past a sized function: a gap, or the next one
    return rng.choice([0, 0x1234, text_end - 1, text_end, text_end + 0x100, 0xffffffff80000000])


def random_case(rng, syms, text_end, run, ncpus=4):
    pool = [[random_address(rng, syms, text_end) for _ in range(rng.randint(1, kp.MAX_FRAMES))]
            for _ in range(rng.choice([3, 20, 150]))]
    marked = rng.random() < 0.5      # half the cases carry interrupts-off, in-interrupt and let-in records
    weighted = rng.random() < 0.5
    recs = []
    for _ in range(rng.randint(0, 600)):
        frames = rng.choice(pool) if rng.random() < 0.8 else \
            [random_address(rng, syms, text_end) for _ in range(rng.randint(1, kp.MAX_FRAMES))]
        flags = rng.choice([0, 0, 0, 1, 2, 3, 4, 5, 7, 0x80]) if marked else 0  # 0x80: no flag the fold keeps
        held = rng.choice([0, 1, 99, 150, 9800, 12345678]) if flags & kp.REC_LET_IN else rng.choice([0, 0, 7])
        # half the cases weigh their records by the period they were taken at: a throttled CPU's doubled ones,
        # the tick's in a counter run, a record that does not say (0, weighs 1)
        period = rng.choice([2100000, 2100000, 2100000, 4200000, 134400000, 10000000, 0]) if weighted else 0
        recs.append((rng.randrange(ncpus), rng.choice([1, 2, 3]), run if rng.random() < 0.95 else run - 1,
                     rng.choice([None, None, 0, 1, 2]), tuple(frames), flags, held, period))
    return recs


REG_NAMES = ["counter", "control", "global_ctrl", "global_status", "freeze", "lvt_perfcnt"]


def random_run(rng, syms, run, window_ms, ncpus=4, counter=None):
    """A RunInfo (drops filled in later) and its lines of the kernel_report language: a tick run or a counter
    run, every CPU with an account of some source (or of another run), throttling, a stopped counter with its
    registers, held-off and late ticks, the let-in site's instruction."""
    counter = rng.random() < 0.5 if counter is None else counter
    hz = rng.choice([100, 1000, 250])
    cycles = rng.choice([2100000, 1000000, 12345]) if counter else 0
    period = (cycles * 1000000 // 2100000 or 1) if counter else 1000000000 // hz
    source = rng.choice(["pmu/nmi intel fixed-ctr1", "pmu/nmi amd pmc0 ev0x76"]) if counter else "tick"
    reason = None if counter else rng.choice(["no usable PMU: reasons", "the counter does not count (x)"])
    site = rng.choice(["sti", "popf", None])
    lines = ["case %d %d %d %d %d %d %s" % (run, window_ms, ncpus, hz, period, cycles, source)]
    if reason:
        lines.append("reason " + reason)
    lines.append("site " + (site or "-"))
    accounts = []
    for cpu in range(ncpus):
        if rng.random() < 0.1:
            accounts.append(None)
            continue
        if counter:
            src = rng.choice([kp.CPU_COUNTER] * 5 + [kp.CPU_TICK_ARM_FAULT, kp.CPU_TICK_STOPPED, kp.CPU_TICK])
        else:
            src = kp.CPU_TICK
        acct_run = run if rng.random() < 0.9 else run - 1
        throttled = counter and rng.random() < 0.2
        held = rng.choice([0, 0, 0, 1900000000, 3000000, 999999])
        elsewhere = rng.choice([0, 0, 400000000, 10000000, 1])
        let_in = random_address(rng, syms, syms[-1][0] + 0x100) if held else 0
        stopped_ns = rng.choice([0, 5000000, 1234567890])
        c = kp.CpuAccount(acct_run, src, throttled, cycles * 2 if throttled else cycles, stopped_ns, None, held,
                          let_in, elsewhere)
        lines.append("cpu %d %d %d %d %d %d %d %x %d" % (cpu, acct_run, src, throttled, c.period_cycles,
                                                         stopped_ns, held, let_in, elsewhere))
        if src == kp.CPU_TICK_STOPPED:
            regs = [(n, rng.choice([0, 0x1, 0xffff800000001234]), rng.random() < 0.2)
                    for n in REG_NAMES[:rng.randint(0, 6)]]
            bits = [rng.random() < 0.5 for _ in range(6)]
            c.stopped_msrs = kp.Snapshot(tuple((n.replace("_", " "), 0 if f else v, f) for n, v, f in regs), *bits)
            lines.append("snap %d %s %s" % (cpu, " ".join("1" if b else "0" for b in bits),
                                           " ".join("%s=%s" % (n, "#GP" if f else "%x" % v) for n, v, f in regs)))
        accounts.append(c)
    busy = None
    if rng.random() < 0.6:
        # each CPU's busy time: the whole window, part of it, none (never busy), or an odd figure
        busy = [rng.choice([window_ms * 1000000 or 1000000000, window_ms * 400000 or 7654321, 123456789, 0])
                for _ in range(ncpus)]
        lines.append("busy " + " ".join("%d" % b for b in busy))
    info = kp.RunInfo(run, window_ms, ncpus, source, reason, hz, period, cycles, None, accounts,
                      irq_enable_site=lambda pc: site, busy_ns=busy)
    return info, lines


def case_lines(recs):
    out = []
    for cpu, pid, r, label, frames, flags, held, *period in recs:
        out.append("rec %d %d %d %s %d %d %d %s" % (cpu, pid, r, "-" if label is None else label, flags, held,
                                                    period[0] if period else 0, " ".join("%x" % f for f in frames)))
    return out


def python_side(recs, run, capacity=1024, ncpus=4):
    """What the rings hold for the report, in its order: per CPU, the first `capacity` records pushed (the rest
    dropped), those of the run; and the drops per CPU."""
    per_cpu = {c: [r for r in recs if r[0] == c] for c in range(ncpus)}
    kept = [r for c in range(ncpus) for r in per_cpu[c][:capacity] if r[2] == run]
    drops = [max(0, len(per_cpu[c]) - capacity) for c in range(ncpus)]
    return [kp.Sample(c, pid, 0, () if lab is None else LABEL_SETS[lab], f, flags, held, period[0] if period else 0)
            for c, pid, _, lab, f, flags, held, *period in kept], drops


def test_report_is_the_kernels_on_random_runs(kernel_report):
    rng = random.Random(20261129)
    syms, text_start, text_end = random_symbols(rng)
    tab = kp.Symtab(syms, text_start, text_end)
    script = ["sym %x %d %s" % (a, s, n.decode()) for a, s, n in syms] + ["text %x %x" % (text_start, text_end)]
    script += LABEL_DECLS
    expected = []
    for i in range(160):
        run = 5 + i
        window = rng.choice([1003, 2000, 0, 300])
        ncpus = rng.choice([4, 4, 4, 1, 2, 16])
        info, lines = random_run(rng, syms, run, window, ncpus, counter=True if i == 9 else None)
        recs = random_case(rng, syms, text_end, run, ncpus)
        if i == 9:
            recs = []                                                       # says why
        if i == 11:
            recs = [(rng.randrange(ncpus), 1, run, None, (syms[j % 60][0] + 1, 0x100000 + j), 0, 0)
                    for j in range(300)]
        if i in (7, 8):
            recs += [(0, 1, run, None, (syms[3][0] + 1,), 0, 0)] * 1100    # CPU 0 overflows: drops
        if ncpus == 16 and i % 2 and i != 9:
            # every CPU overflows: drops everywhere, and the per-CPU line wraps
            recs += [(c, 1, run, None, (syms[3][0],), 0, 0) for c in range(16) for _ in range(1030)]
        chains = rng.choice([1, 2, 8, 50, 128])
        pid = rng.choice([None, None, 2, 7]) if i not in (9, 11) else None
        label = rng.choice([None, None, ("job", "b"), ("aa", "2")]) if i not in (9, 11) else None
        script += lines + case_lines(recs)
        script.append("report %d %s %s" % (chains, "-" if pid is None else pid,
                                          "-" if label is None else "%s=%s" % label))
        samples, info.drops = python_side(recs, run, ncpus=ncpus)
        fold, _ = kp.fold_samples(samples, tab, pid=pid, label=label)
        expected.append("\n".join(kp.report_lines(info, fold, chains, pid, label)) + "\n")
    got = kernel_report("\n".join(script) + "\n")
    assert len(got) == len(expected)
    for i, (g, e) in enumerate(zip(got, expected)):
        assert g == e, "case %d differs from the kernel's report" % i
    # the random cases reached every kind of line
    text = "".join(got)
    for pattern in [r"(?m)^\.\.\. \d+ more chains", r"(?m)^more than 128 distinct", r"(?m)^labels: ",
                    r"(?m)^no samples", r"(?m)^idle CPUs", r"\+0x[0-9a-f]+\.\.0x", r"<- 0x",
                    r"(?m)^\d+ samples on \d+ cpus, \d+ dropped, source mixed: ",
                    r"(?m)^\d+ samples on \d+ cpus, \d+ dropped, source tick at \d+ Hz \(no cpu kept its counter\)$",
                    r"(?m)^\d+ samples on \d+ cpus, \d+ dropped, source pmu/nmi \S+ \S+ every \d+ cycles$",
                    r"(?m)^rate per busy second: 0:\d+ .*\d:-", r"(?m)^rate per busy second: .{60,}\n {21} \d+:",
                    r"(?m)^\d+ samples on \d+ cpus, [1-9]\d* dropped, source tick at \d+ Hz \(",
                    r"(?m)^per cpu: 0:\d+/\d+ ", r"(?m)^per cpu: .{80,}\n {9} \d+:\d+/\d+",
                    r"(?m)^per cpu: .* \d+:\d+(/\d+)? \(throttled: every \d+ cycles\)",
                    r"(?m)^cpu \d: tick \(arm faulted\)$",
                    r"(?m)^cpu \d: tick \(counter stopped\)$", r"(?m)^cpu \d: its counter stopped interrupting .*#GP",
                    r"(?m)^        counting (on|off), pmi .*, not nmi$", r"(?m)^cpu \d: throttled: ",
                    r"(?m)^tick held off by interrupts-off code: cpu \d \d+ ms \(\d+%\).*; let in at \S+ \(sti\)$",
                    r"(?m)\(popf\)$", r"(?m)\(\?\)$", 
                    r"(?m)^tick held off by interrupts-off code: cpu \d \d+ ms(,|;|$)",
                    r"(?m)^tick held off by interrupts-off code: [^;]*$",
                    r"(?m)^ticks late elsewhere \(the cpu was taken away, not held off\): cpu \d",
                    r"(?m) \[irqs off\]$", r"(?m) \[in irq\]$", r"(?m) \[in irq, irqs off\]$",
                    r"(?m) \[let in after \d+\.\d ms irqs off\]$"]:
        assert re.search(pattern, text), "no random case printed %r" % pattern


def test_a_kept_report_cut_to_fewer_chains_is_the_report_with_fewer(tab):
    """What prof.py does with the console's kept report for `prof report CHAINS`: the text the kernel would have
    printed asked for CHAINS chains, from the text alone."""
    rng = random.Random(11)
    syms, text_start, text_end = random_symbols(rng)
    tab = kp.Symtab(syms, text_start, text_end)
    tried = weighted_cuts = 0
    for i in range(60):
        info, _ = random_run(rng, syms, 3, 1000)
        samples, info.drops = python_side(random_case(rng, syms, text_end, 3), 3)
        fold, _ = kp.fold_samples(samples, tab)
        base = rng.choice([8, 50, 128])
        kept = "\n".join(kp.report_lines(info, fold, base)) + "\n"
        uniform = len({kp.sample_weight(s) for s in samples}) <= 1
        for chains in (1, 2, 7, base, 128):
            want = "\n".join(kp.report_lines(info, fold, min(chains, base))) + "\n"
            got, note = kp.cut_report(kept, chains)
            cut = chains < min(base, len(fold.chains))
            if uniform or not cut:
                assert got == want, (i, base, chains)
                assert (note is not None) == (chains > base and len(fold.chains) > base), (i, base, chains)
            else:
                # weighed differently: all but the share of the cut chains is exact, and the note says so
                g, w = got.rstrip("\n").split("\n"), want.rstrip("\n").split("\n")
                k = next(j for j, line in enumerate(w) if line.startswith("... "))
                assert g[:k] == w[:k] and g[k + 1:] == w[k + 1:], (i, base, chains)
                assert g[k].split(" (")[0] == w[k].split(" (")[0], (i, base, chains)
                assert "weighed differently" in note
                weighted_cuts += 1
            tried += cut
    assert tried > 50 and weighted_cuts > 10


def test_kernel_raw_output_parses_back_to_its_records(kernel_report):
    rng = random.Random(7)
    syms, text_start, text_end = random_symbols(rng)
    script = ["sym %x %d %s" % (a, s, n.decode()) for a, s, n in syms] + ["text %x %x" % (text_start, text_end)]
    script += LABEL_DECLS
    recs = random_case(rng, syms, text_end, 3) + [(2, 4, 3, 2, (0xffffffff80001234, 0x1), 0, 0)]
    while not any(r[5] & kp.REC_LET_IN for r in recs) or not any(r[7] for r in recs if len(r) > 7):
        recs += random_case(rng, syms, text_end, 3)
    script += ["case 3 1003 4 100 1000000 2100000 pmu/nmi intel fixed-ctr1"] + case_lines(recs) + ["raw 0123456789abcdef"]
    (text,) = kernel_report("\n".join(script) + "\n")
    raw = kp.parse_raw(text)
    samples, drops = python_side(recs, 3)
    # the raw line carries the period and exactly the marks the report prints: the three flags the fold keeps,
    # held_off_us with let-in only
    want = [s._replace(flags=s.flags & kp.REC_FLAGS, held_off_us=s.held_off_us if s.flags & kp.REC_LET_IN else 0)
            for s in samples]
    assert raw.samples == want and raw.dropped == sum(drops)
    assert any(s.flags & kp.REC_LET_IN and s.held_off_us for s in raw.samples)
    assert any(s.flags == kp.REC_IRQS_OFF | kp.REC_IN_IRQ for s in raw.samples)
    assert len({s.period for s in raw.samples}) > 2
    assert (raw.source, raw.period, raw.unit, raw.window_ms, raw.cpus, raw.build_id) == \
        ("pmu/nmi-intel-fixed-ctr1", 2100000, "cycles", 1003, 4, "0123456789abcdef")
    assert raw.period_ns is None, "a counter's period is in cycles, never stated as nanoseconds"
    assert raw.text() == text, "the raw writer here is not the kernel's codec"
    assert kp.source_word("pmu/nmi intel fixed-ctr1") == raw.source


# ---- the raw format: refusals ----------------------------------------------------------------------------------

BID = "00112233445566778899aabbccddeeff00112233"
GOOD = ("# kprof raw v1 source=tick period_ns=10000000 window_ms=1003 cpus=4 build_id=%s\n"
        "s 0 7 1000 job=a 0x1020 0x1144\n"
        "s 3 0 2000 - 0x1600\n"
        "# kprof raw end samples=2 dropped=5\n" % BID)


GOOD2 = ("# kprof raw v2 source=pmu/nmi-intel-fixed-ctr1 period=2100000 unit=cycles window_ms=1003 cpus=4 "
         "build_id=%s\n"
         "s 0 7 1000 job=a 2100000 irqs-off,in-irq 0x1020 0x1144\n"
         "s 3 0 2000 - 8400000 - 0x1600\n"
         "s 1 5 3000 - 10000000 let-in=19400 0x1700\n"
         "# kprof raw end samples=3 dropped=0\n" % BID)


def good2_first_sample(period_context):
    """GOOD2 with its first sample's period and context (" 2100000 irqs-off,in-irq ") as given."""
    return GOOD2.replace(" 2100000 irqs-off,in-irq ", period_context)


def test_raw_v2_carries_period_and_marks():
    raw = kp.parse_raw(GOOD2)
    assert (raw.period, raw.unit, raw.period_ns) == (2100000, "cycles", None)
    assert raw.samples == [kp.Sample(0, 7, 1000, (("job", "a"),), (0x1020, 0x1144), 3, 0, 2100000),
                           kp.Sample(3, 0, 2000, (), (0x1600,), 0, 0, 8400000),
                           kp.Sample(1, 5, 3000, (), (0x1700,), kp.REC_LET_IN, 19400, 10000000)]
    assert raw.text() == GOOD2, "written back as the kernel writes it"
    # a v1 profile is still read: no period (it weighs one) and no marks, the period in nanoseconds
    old = kp.parse_raw(GOOD)
    assert (old.period, old.unit, old.period_ns) == (10000000, "ns", 10000000)
    assert [(s.period, s.flags, s.held_off_us) for s in old.samples] == [(0, 0, 0), (0, 0, 0)]


def test_raw_parses():
    raw = kp.parse_raw(GOOD)
    assert raw.samples == [kp.Sample(0, 7, 1000, (("job", "a"),), (0x1020, 0x1144)),
                           kp.Sample(3, 0, 2000, (), (0x1600,))]
    assert (raw.dropped, raw.build_id, raw.window_ms) == (5, BID, 1003)
    assert kp.parse_raw(GOOD.replace("\n", "\r\n")).samples == raw.samples, "a terminal's line ends"
    assert kp.parse_raw(GOOD.encode()).samples == raw.samples


@pytest.mark.parametrize("text, message", [
    ("", "empty"),
    (GOOD[:-1], "truncated: its last line has no newline"),
    (GOOD[:GOOD.index("s 3")], "truncated: no `# kprof raw end` line after 1 samples"),
    (GOOD[:GOOD.index("s 3") + 9], "truncated: its last line has no newline"),
    (GOOD.replace("s 3 0 2000 - 0x1600\n", ""), "truncated: the end line says 2 samples, 1 arrived"),
    (GOOD.replace("v1", "v3"), "raw format v3, this reads v1 and v2"),
    (GOOD.replace("v1", "v2"), "lacks period, unit"),
    (GOOD2.replace("unit=cycles", "unit=us"), "unit 'us' is neither ns nor cycles"),
    (good2_first_sample(" 2100000 in-irq,irqs-off "), "bad context"),
    (good2_first_sample(" 2100000 irqs-off,irqs-off "), "bad context"),
    (GOOD2.replace("let-in=19400", "let-in=x"), "bad context"),
    (GOOD2.replace("let-in=19400", "let-in"), "bad context"),
    (good2_first_sample(" -1 irqs-off,in-irq "), "bad period"),
    (good2_first_sample(" 4294967296 irqs-off,in-irq "), "bad period"),
    (good2_first_sample(" "), "not a sample line"),
    (GOOD.replace(" cpus=4", ""), "lacks cpus"),
    (GOOD.replace("build_id=%s" % BID, "build_id=xyz"), "bad build id"),
    ("junk\n" + GOOD, "not a `# kprof raw v2 ...` header"),
    (GOOD.replace("job=a", "job"), "bad label set"),
    (GOOD.replace("s 3 0", "s 4 0"), "cpu 4, but the header says 4 cpus"),
    (GOOD.replace("s 3 0 2000 - 0x1600", "s 3 0 2000 -"), "not a sample line"),
    (GOOD.replace("0x1600", " ".join(["0x1600"] * 9)), "9 frames, at most 8"),
    (GOOD.replace("0x1600", "1600"), "bad address"),
    (GOOD.replace("s 3 0 2000", "s 3 0  2000"), "bad"),
    (GOOD.replace("s 3 0", "t 3 0"), "not a sample line"),
    (GOOD + "s 1 1 1 - 0x1\n", "text after the end line"),
    (GOOD.replace("s 3 0", "# note\ns 3 0"), "unexpected line"),
])
def test_raw_refuses(text, message):
    with pytest.raises(kp.ProfileError, match=re.escape(message)):
        kp.parse_raw(text, origin="t.raw")


def test_raw_from_another_build_is_refused():
    raw = kp.parse_raw(GOOD, origin="t.raw")
    kp.check_build_id(raw, BID, "k.elf")
    with pytest.raises(kp.ProfileError, match="t.raw comes from another build: build id %s, but k.elf has ff" % BID):
        kp.check_build_id(raw, "ff", "k.elf")
    none = kp.parse_raw(GOOD.replace(BID, "none"), origin="n.raw")
    with pytest.raises(kp.ProfileError, match="carries no build id"):
        kp.check_build_id(none, BID, "k.elf")


# ---- ring selection (scripts/prof.py) ---------------------------------------------------------------------------

# struct profile_record on x86_64: labels, time_ns, pid, run, cpu, nframes, 4 bytes of padding, frames[8]
LAYOUT = kp.RecordLayout(96, {"labels": (0, 8, 1), "time_ns": (8, 8, 1), "pid": (16, 4, 1), "run": (20, 4, 1),
                              "cpu": (24, 2, 1), "nframes": (26, 2, 1), "frames": (32, 8, 8)})


def pack(labels, time_ns, pid, run, cpu, frames, nframes=None):
    f = list(frames) + [0xdead] * (8 - len(frames))
    return struct.pack("<QqIIHH4x8Q", labels, time_ns, pid, run, cpu,
                       len(frames) if nframes is None else nframes, *f)


def test_record_layout_decodes():
    buf = pack(0xffff800000001000, -5, 9, 3, 2, [0x10, 0x20]) + pack(0, 7, 1, 3, 2, [0x30] * 8)
    assert LAYOUT.decode(buf, 0) == kp.RingRecord(0xffff800000001000, -5, 9, 3, 2, 2, (0x10, 0x20))
    assert LAYOUT.decode(buf, 1).frames == (0x30,) * 8
    assert LAYOUT.decode(pack(0, 0, 0, 0, 0, [1], nframes=40), 0).frames == (1,) + (0xdead,) * 7, \
        "a frame count past the array is clamped to it"
    with pytest.raises(kp.ProfileError, match="no nframes"):
        kp.RecordLayout(96, {k: v for k, v in LAYOUT.fields.items() if k != "nframes"})


# ---- a record's labels once its set may be gone (issue 35) ------------------------------------------------------

# struct profile_record as the kernel lays it out now (112 bytes): the set's generation fills what was padding.
GEN_LAYOUT = kp.RecordLayout(112, {"labels": (0, 8, 1), "time_ns": (16, 8, 1), "pid": (24, 4, 1), "run": (28, 4, 1),
                                   "cpu": (32, 2, 1), "nframes": (34, 1, 1), "flags": (35, 1, 1),
                                   "held_off_us": (36, 4, 1), "period": (40, 4, 1), "labels_generation": (44, 4, 1),
                                   "frames": (48, 8, 8)})


def pack_gen(labels, generation, time_ns, frames=(0x1000,)):
    f = list(frames) + [0] * (8 - len(frames))
    return struct.pack("<QQqIIHBBIII8Q", labels, 0, time_ns, 7, 1, 1, len(frames), 0, 0, 0, generation, *f)


def test_a_reused_label_slot_never_shows_its_new_labels_on_an_old_record():
    # A ring dumped from a kernel: two records of job=a (generation 4 of slot 0x1000), drained; the pool then
    # freed job=a and gave its slot to job=c (generation 5), and a third record carries job=c. Another slot was
    # freed and not reused; a record of no labels.
    ring = pack_gen(0x1000, 4, 10) + pack_gen(0x1000, 4, 20) + pack_gen(0x1000, 5, 30) + pack_gen(0x2000, 1, 40) \
        + pack_gen(0, 0, 50)
    memory = {0x1000: (5, (("job", "c"),)), 0x2000: (2, None)}
    reads = []

    def read_set(pointer):
        reads.append(pointer)
        return memory[pointer]

    recs = [GEN_LAYOUT.decode(ring, i) for i in range(5)]
    assert [r.labels_generation for r in recs] == [4, 4, 5, 1, 0]
    got = [kp.record_labels(r.labels, r.labels_generation, read_set) for r in recs]
    assert got == [(("set", "0x1000(gone)"),), (("set", "0x1000(gone)"),), (("job", "c"),),
                   (("set", "0x2000(gone)"),), ()]
    assert [kp.labels_text(g) for g in got] == ["set=0x1000(gone)", "set=0x1000(gone)", "job=c", "set=0x2000(gone)",
                                                "-"]
    assert 0 not in reads, "a NULL set is not read"


def test_a_kernel_without_generations_shows_the_set_as_it_is():
    # an older kernel's record and set carry no generation: the set's pairs as read, a freed slot as gone
    rec = LAYOUT.decode(pack(0x1000, 5, 9, 3, 2, [0x10]), 0)
    assert rec.labels_generation == 0
    assert kp.record_labels(rec.labels, rec.labels_generation, lambda p: (None, (("job", "a"),))) == (("job", "a"),)
    assert kp.record_labels(rec.labels, rec.labels_generation, lambda p: (None, None)) == (("set", "0x1000(gone)"),)


class FakeRing:
    def __init__(self, capacity, cpu=1):
        self.capacity, self.cpu = capacity, cpu
        self.slots = [pack(0, 0, 0, 0, 0, [], nframes=0)] * capacity   # never written: zeroes
        self.head = 0
        self.reads = 0

    def push(self, run, time_ns, cpu=None, frames=(0x1000,)):
        self.slots[self.head % self.capacity] = pack(0, time_ns, 1, run, self.cpu if cpu is None else cpu, frames)
        self.head = (self.head + 1) & 0xFFFFFFFF

    def push_all(self, run, times):
        """A record of run at each time in times, in turn."""
        for time_ns in times:
            self.push(run, time_ns)

    def read_slots(self, first, count):
        self.reads += 1
        return [LAYOUT.decode(self.slots[(first + i) % self.capacity], 0) for i in range(count)]

    def select(self, run, chunk=4):
        return kp.ring_run_records(self.read_slots, self.head, self.capacity - 1, run, self.cpu, chunk)


def test_ring_selection_finds_the_runs_block():
    ring = FakeRing(16)
    ring.push_all(1, range(5))
    ring.push_all(2, range(5, 8))
    got = ring.select(2)
    assert [r.time_ns for r in got] == [5, 6, 7] and all(r.run == 2 for r in got)
    assert [r.time_ns for r in ring.select(1)] == [], "run 1 is not at the head: it is not the run in view"
    ring.push(1, 8)                                 # a straggler of run 1 would sit below run 2's block, not here
    assert ring.select(2) == []


def test_ring_selection_stops_at_a_straggler_and_at_unwritten_slots():
    ring = FakeRing(16)
    ring.push(3, 10)
    ring.push(2, 11)                                # committed by a CPU that read run 2 before the stop
    ring.push_all(3, range(12, 15))
    assert [r.time_ns for r in ring.select(3)] == [12, 13, 14]
    fresh = FakeRing(16)
    fresh.slots = [pack(0, 0, 1, 4, 1, [0x1000])] * 16   # leftover bytes that look like run 4 ...
    fresh.push_all(4, (100, 101))
    # ... but time goes backwards into them only if they are earlier: make them later, and they are refused
    fresh.slots = [s if i < 2 else pack(0, 999, 1, 4, 1, [0x1000]) for i, s in enumerate(fresh.slots)]
    assert [r.time_ns for r in fresh.select(4)] == [100, 101]


def test_ring_selection_across_the_index_wrap_and_a_full_ring():
    ring = FakeRing(8)
    ring.head = 0xFFFFFFFD
    ring.push_all(6, range(20))                     # the ring wraps twice and its indexes pass 2^32
    assert [r.time_ns for r in ring.select(6, chunk=3)] == list(range(12, 20)), "a full ring: its capacity"
    ring.push(6, 20, cpu=0)                         # another CPU's record cannot be in this ring's run
    assert ring.select(6) == []


def _probe_of(ring, run, probes):
    def probe(index):
        probes.append(index)
        r = LAYOUT.decode(ring.slots[index % ring.capacity], 0)
        return (r.run, r.cpu) == (run, ring.cpu)
    return probe


def select_reading_the_block(ring, run, start_ns=None, floor=None):
    """The records prof.py finds the way it reads now: probes (interpolating on time when start_ns is given),
    then the block in one read_slots call."""
    probes = []
    probe = _probe_of(ring, run, probes)

    def time_of(index):
        assert index in [p & 0xFFFFFFFF for p in probes], "a time asked of a slot not probed"
        return LAYOUT.decode(ring.slots[index % ring.capacity], 0).time_ns
    first = kp.run_block_first(probe, ring.head, ring.capacity, time_of if start_ns is not None else None,
                               start_ns, floor=floor)
    count = (ring.head - first) & 0xFFFFFFFF
    reads_before = ring.reads
    got = kp.ring_run_records(ring.read_slots, ring.head, ring.capacity - 1, run, ring.cpu, max(count, 1),
                              first=first)
    return got, count, ring.reads - reads_before, probes


def test_ring_block_read_finds_what_the_walk_finds_reading_only_the_block():
    """Random rings (runs, stragglers of other CPUs and runs, leftover slots that look like the run, uneven
    times, wraps of the free-running index): probing then reading [first, head) gives the same records as
    the old walk over the whole ring, reads at most the block and in one read call, and probes about
    log2(capacity) slots blind, at most about three times that interpolating on any start time, however wrong."""
    import random
    rnd = random.Random(15)
    for case in range(400):
        capacity = rnd.choice([8, 16, 64, 1024])
        ring = FakeRing(capacity)
        if rnd.random() < 0.3:   # leftover bytes that pass the run and cpu checks
            ring.slots = [pack(0, rnd.randrange(1 << 40), 1, 5, 1, [0x1000]) if rnd.random() < 0.5 else s
                          for s in ring.slots]
        ring.head = rnd.choice([0, 5, 0xFFFFFFFF - rnd.randrange(3 * capacity)])
        t = 0
        for _ in range(rnd.randrange(3 * capacity)):
            t += rnd.randrange(3)
            run = rnd.choice([4, 5, 5, 5])
            ring.push(run, t, cpu=ring.cpu if rnd.random() < 0.97 else 0)
        start = t + 1
        if rnd.random() < 0.5:   # the run's own block at the head, its ticks even or not
            t += 1000
            for _ in range(rnd.randrange(capacity + 2)):
                t += rnd.choice([10, 10, 10, 20, 200]) if rnd.random() < 0.5 else 10
                ring.push(5, t)
        want = ring.select(5, chunk=rnd.choice([1, 3, 128]))
        floors = [None, rnd.randrange(1 << 32), ring.head - rnd.randrange(capacity + 1)]
        for start_ns in (None, start, start + rnd.randrange(-2000, 2000), 0, 1 << 62):
            got, count, reads, probes = select_reading_the_block(ring, 5, start_ns, rnd.choice(floors))
            assert got == want, "case %d start %s" % (case, start_ns)
            assert len(got) <= count <= capacity
            assert reads <= 1, "one read_slots call for the block (it cuts at the ring's end itself)"
            limit = capacity.bit_length() + 3 if start_ns is None else 3 * capacity.bit_length() + 5
            assert len(probes) <= limit, (case, start_ns, len(probes))


def test_ring_block_read_of_a_full_ring_and_an_empty_one():
    ring = FakeRing(1024)
    ring.push_all(6, range(3000))
    got, count, reads, probes = select_reading_the_block(ring, 6)
    assert [r.time_ns for r in got] == list(range(3000 - 1024, 3000)) and count == 1024
    assert len(probes) == 2, "the newest and the oldest slot: the ring is all the run's"
    got, count, reads, probes = select_reading_the_block(ring, 6, start_ns=0)
    assert count == 1024 and len(got) == 1024 and len(probes) == 3, "interpolating: the oldest third"
    ring.push(7, 3000)
    got, count, reads, probes = select_reading_the_block(ring, 6)
    assert got == [] and count == 0 and reads == 0 and len(probes) == 1, "the newest is not the run's: nothing read"
    got, count, _, probes = select_reading_the_block(ring, 7)
    assert [r.time_ns for r in got] == [3000] and count == 1


def test_ring_block_read_of_a_ring_not_yet_round_stays_above_its_start():
    """The first run after boot: 90 records from index 0 of a 1024 ring. With the floor, one probe of the
    slot below it (never written, failing) and the search stays above: a handful of probes. Leftovers there
    that pass every check make the floor's probe pass too, and the result is the old walk's."""
    clean = FakeRing(1024)
    clean.push_all(1, (10000 + 10 * i for i in range(90)))
    got, count, _, probes = select_reading_the_block(clean, 1, start_ns=9990, floor=0)
    assert len(got) == 90 == count and len(probes) <= 5, probes
    ring = FakeRing(1024)
    ring.slots = [pack(0, 5, 1, 1, 1, [0x1000])] * 1024
    ring.push_all(1, (10000 + 10 * i for i in range(90)))
    got, count, _, probes = select_reading_the_block(ring, 1, start_ns=9990, floor=0)
    assert got == ring.select(1) and len(got) == 1024


def test_ring_block_read_interpolating_on_even_ticks_takes_few_probes():
    """300 records of run 2 at a tick every 10 ns after 600 of run 1: about 5 probes interpolating on the
    times, against about 10 blind; ticks that came unevenly (every fifth 50 ns late) a few more."""
    ring = FakeRing(1024)
    ring.push_all(1, range(600))
    ring.push_all(2, (10000 + 10 * i for i in range(300)))
    got, count, _, probes = select_reading_the_block(ring, 2, start_ns=9995)
    assert len(got) == 300 and count == 300 and len(probes) <= 5, probes
    _, _, _, blind = select_reading_the_block(ring, 2)
    assert len(blind) >= 10, "without times: a search over the whole ring"
    uneven = FakeRing(1024)
    t = 0
    uneven.push_all(1, range(700))
    for i in range(200):
        t += 60 if i % 5 == 0 else 10
        uneven.push(2, 10000 + t)
    got, count, _, probes = select_reading_the_block(uneven, 2, start_ns=10000)
    assert len(got) == 200 and count == 200 and len(probes) <= 7, probes


def test_ring_block_read_holds_the_record_count_to_the_block():
    """The walk given first reads exactly head - first slots: a run of 300 records in a 1024 ring reads 300."""
    ring = FakeRing(1024)
    ring.push_all(1, range(500))
    ring.push_all(2, range(500, 800))
    asked = []
    real = ring.read_slots
    ring.read_slots = lambda first, count: asked.append(count) or real(first, count)
    got, count, _, _ = select_reading_the_block(ring, 2)
    assert len(got) == 300 and asked == [300]


# ---- the stub's answers and the build id note ------------------------------------------------------------------

def test_monitor_pmu_answer_is_told_from_qemus():
    ours = "pmu: profile samples on the tick; no usable PMU\ncpu 0: armed no\n  counter ...\n"
    assert kp.is_monitor_pmu_answer(ours)
    assert not kp.is_monitor_pmu_answer("unknown command: 'pmu'\n")
    assert not kp.is_monitor_pmu_answer("")


def test_build_id_note_decodes():
    desc = bytes.fromhex(BID)
    note = struct.pack("<III", 4, len(desc), 3) + b"GNU\0" + desc
    assert kp.note_body_size(note[:12]) == 4 + 20
    assert kp.build_id_from_note(note) == BID
    assert kp.build_id_from_note(struct.pack("<III", 4, 20, 1) + b"GNU\0" + desc) is None
    assert kp.build_id_from_note(note[:20]) is None


# ---- a small ELF: folded stacks and pprof ----------------------------------------------------------------------

def test_plain_make_builds_the_pprof_schema(tmp_path):
    """`make` alone (the all target) builds build/pprof/profile_pb2.py: profexport works after it."""
    build = str(tmp_path / "build")
    done = subprocess.run(["make", "-n", "BUILD=" + build, "all"], cwd=TOP, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert re.search(r"(?m)^protoc .*--python_out=%s/pprof/ .*profile\.proto$" % re.escape(build), done.stdout), \
        done.stdout[-2000:]


def test_a_missing_schema_module_is_built_on_demand(tmp_path):
    pb2_dir = str(tmp_path / "pprof")
    done = subprocess.run([sys.executable, "-c", "import sys; sys.path.insert(0, %r); import kprof_profile as kp; "
                           "m = kp.load_profile_pb2(%r); print(m.Profile.DESCRIPTOR.full_name)"
                           % (os.path.join(TOP, "scripts"), pb2_dir)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "perftools.profiles.Profile\n"
    assert os.listdir(pb2_dir) == ["profile_pb2.py"], "protoc's scratch directory is left behind"
    with pytest.raises(kp.ProfileError, match=r"nowhere/profile\.proto is missing: pprof's schema comes with "
                       r"golang-github-google-pprof-dev"):
        kp.load_profile_pb2(str(tmp_path / "other"), proto_dir=str(tmp_path / "nowhere"))


def test_lines_come_from_dwarf_with_inlined_frames(tiny):
    lines = kp.Lines(tiny.elf, tiny.symtab)
    leaf = lines.frames(tiny.chain[0])
    assert [f.function for f in leaf] == ["burn_inner"] and leaf[0].file.endswith("tiny.c") and leaf[0].line > 0
    outer_call = lines.frames(kp.code_address(tiny.ret["burn_outer"], False))
    assert [f.function for f in outer_call] == ["helper", "_start"], "the inlined frame, innermost first"
    nowhere = lines.frames(0x10)
    assert nowhere == (kp.Frame("0x10", "", 0),)


def test_folded_stacks_sum_to_the_samples(tiny):
    text = kp.folded([tiny.raw(tiny.samples())], kp.Lines(tiny.elf, tiny.symtab))
    assert text == "_start 10\n_start;helper;burn_outer;burn_middle;burn_inner 30\n"
    assert sum(int(line.rsplit(" ", 1)[1]) for line in text.splitlines()) == 40


def test_pprof_reads_back(tiny, pb2, tmp_path):
    prof = kp.build_pprof([tiny.raw(tiny.samples())], tiny.symtab, kp.Lines(tiny.elf, tiny.symtab), tiny.elf,
                          tiny.build_id, pb2)
    data = kp.pprof_bytes(prof)
    back = pb2.Profile.FromString(gzip.decompress(data))
    st = back.string_table
    assert st[0] == ""
    assert [(st[t.type], st[t.unit]) for t in back.sample_type] == [("samples", "count"), ("cpu", "nanoseconds")]
    assert (st[back.period_type.type], st[back.period_type.unit], back.period) == ("cpu", "nanoseconds", 10000000)
    assert back.duration_nanos == 1000 * 1000000
    (m,) = back.mapping
    assert st[m.build_id] == tiny.build_id and m.has_functions and m.has_line_numbers and m.has_inline_frames
    assert m.memory_start <= tiny.inner < m.memory_limit
    assert sum(s.value[0] for s in back.sample) == 40
    assert all(s.value[1] == s.value[0] * 10000000 for s in back.sample)
    funcs = {f.id: f for f in back.function}
    locs = {l.id: l for l in back.location}
    burn = [s for s in back.sample if any(st[lb.key] == "job" for lb in s.label)]
    names = [[st[funcs[ln.function_id].name] for ln in locs[i].line] for i in burn[0].location_id]
    assert names == [["burn_inner"], ["burn_middle"], ["burn_outer"], ["helper", "_start"]]
    assert locs[burn[0].location_id[0]].address == tiny.chain[0]
    assert all(st[funcs[ln.function_id].filename].endswith("tiny.c") and ln.line > 0
               for i in burn[0].location_id for ln in locs[i].line)
    assert {(st[lb.key], st[lb.str]) for lb in burn[0].label} >= {("job", "a"), ("pid", "7")}
    assert kp.pprof_bytes(prof) == data, "the same profile gives the same bytes"


def test_go_tool_pprof_reads_it(tiny, pb2, tmp_path):
    prof = kp.build_pprof([tiny.raw(tiny.samples())], tiny.symtab, kp.Lines(tiny.elf, tiny.symtab), tiny.elf,
                          tiny.build_id, pb2)
    path = str(tmp_path / "p.pb.gz")
    with open(path, "wb") as f:
        f.write(kp.pprof_bytes(prof))
    top = go_pprof(path, "-top")
    rows = [l.split() for l in top.splitlines() if re.match(r"\s+\d", l)]
    assert rows[0][-1] == "burn_inner" and rows[0][1] == "75.00%", top
    assert "Total samples = 400ms" in top, top
    traces = go_pprof(path, "-traces")
    block = traces.split("-----------+")[1]
    assert re.search(r"burn_inner\s+burn_middle\s+burn_outer\s+helper \(inline\)\s+_start", block), traces
    tags = go_pprof(path, "-tags")
    assert re.search(r"job: Total 300\.0ms\s+300\.0ms \(\s*100%\): a", tags), tags
    assert re.search(r"cpu: Total 400\.0ms", tags), tags


# ---- scripts/profexport ----------------------------------------------------------------------------------------

def profexport(*args, stdin=None):
    return subprocess.run([PROFEXPORT] + list(args), capture_output=True, timeout=120, input=stdin)


def test_profexport_file_to_pprof_and_folded(tiny, pb2, tmp_path):
    rawfile = tmp_path / "r.raw"
    rawfile.write_text(tiny.raw(tiny.samples()).text())
    out = tmp_path / "o.pb.gz"
    r = profexport("--elf", tiny.elf, "-o", str(out), str(rawfile))
    assert r.returncode == 0, r.stderr
    assert r.stderr.decode() == "profexport: 40 samples (0 dropped in the kernel) from %s -> %s\n" % (rawfile, out)
    assert go_pprof(str(out), "-top").count("burn_inner") == 1
    r = profexport("--elf", tiny.elf, "--folded", str(rawfile))
    assert r.returncode == 0 and r.stdout == b"_start 10\n_start;helper;burn_outer;burn_middle;burn_inner 30\n"
    r = profexport("--elf", tiny.elf, "--folded", "-", stdin=rawfile.read_bytes())
    assert r.returncode == 0 and r.stdout.count(b"\n") == 2


def test_profexport_refuses(tiny, pb2, tmp_path):
    other = tmp_path / "other.raw"
    other.write_text(tiny.raw(tiny.samples(), build_id="ab" * 20).text())
    r = profexport("--elf", tiny.elf, "-o", str(tmp_path / "x.pb.gz"), str(other))
    assert r.returncode == 1 and not (tmp_path / "x.pb.gz").exists()
    assert r.stderr.decode() == "profexport: %s comes from another build: build id %s, but %s has %s\n" % (
        other, "ab" * 20, tiny.elf, tiny.build_id)
    cut = tmp_path / "cut.raw"
    cut.write_text(tiny.raw(tiny.samples()).text()[:-30])
    r = profexport("--elf", tiny.elf, "--folded", str(cut))
    assert r.returncode == 1 and b"truncated" in r.stderr and r.stdout == b""
    r = profexport("--elf", tiny.elf, "--folded", str(tmp_path / "missing.raw"))
    assert r.returncode == 1 and b"No such file" in r.stderr
    for args in (["--folded"], ["--folded", str(cut), "--udp", "h"], ["--folded", "--ms", "5", str(cut)],
                 ["--folded", "--udp", "h", "--ms", "0"]):
        assert profexport(*args).returncode == 2, args


class FakeKernel:
    """A UDP shell that answers `profile MS all raw` with a raw profile, cut into datagrams as the kernel cuts
    them; lose=N drops the Nth datagram."""

    def __init__(self, text, lose=None):
        self.text, self.lose = text.encode(), lose
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.requests = []
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self):
        self.sock.settimeout(30)
        try:
            data, peer = self.sock.recvfrom(2048)
        except socket.timeout:
            return
        self.requests.append(data)
        for i, d in enumerate(kprof_wire.reply_datagrams(1, self.text)):
            if i != self.lose:
                self.sock.sendto(d, peer)

    def close(self):
        self.thread.join(5)
        self.sock.close()


def test_profexport_udp_merges_hosts(tiny, pb2, tmp_path):
    many = [kp.Sample(0, 3, i, (), tiny.chain) for i in range(300)]   # several datagrams
    kernels = [FakeKernel(tiny.raw(tiny.samples()).text()), FakeKernel(tiny.raw(many, window_ms=500).text())]
    try:
        out = tmp_path / "u.pb.gz"
        specs = ["127.0.0.1:%d" % k.port for k in kernels]
        r = profexport("--elf", tiny.elf, "-o", str(out), "--ms", "500", "--udp", *specs)
        assert r.returncode == 0, r.stderr
    finally:
        for k in kernels:
            k.close()
    assert [k.requests for k in kernels] == [[b"profile 500 all raw\n"]] * 2
    tags = go_pprof(str(out), "-tags")
    assert re.search(r"host: Total 3\.4s\s+3\.0s \(\s*88\.24%%\): %s\s+400\.0ms \(\s*11\.76%%\): %s"
                     % (re.escape(specs[1]), re.escape(specs[0])), tags), tags


def test_profexport_udp_incomplete_reply(tiny, tmp_path):
    many = [kp.Sample(0, 3, i, (), tiny.chain) for i in range(300)]
    k = FakeKernel(tiny.raw(many).text(), lose=1)
    try:
        r = profexport("--elf", tiny.elf, "--folded", "--udp", "127.0.0.1:%d" % k.port, "--ms", "1")
    finally:
        k.close()
    assert r.returncode == 4 and r.stdout == b""
    assert re.search(rb"127\.0\.0\.1:\d+: incomplete reply: \d+ of \d+ datagrams", r.stderr), r.stderr


def test_split_at_tail_takes_what_the_report_took():
    block = list(range(10))
    # recording, or stopped before its report: the tail is at (or below) the block's start
    assert kp.split_at_tail(block, head=110, tail=100) == (block, [])
    assert kp.split_at_tail(block, head=110, tail=97) == (block, [])
    # reported: the tail at the head, or just below it when a straggler committed after the report
    assert kp.split_at_tail(block, head=110, tail=110) == (block, [])
    assert kp.split_at_tail(block, head=110, tail=109) == (block[:9], [9])
    # across the index wrap
    assert kp.split_at_tail(block, head=3, tail=0xFFFFFFFF) == (block[:6], block[6:])
