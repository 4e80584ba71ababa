"""What the console report marks -- interrupts off, in an interrupt, a tick let in after being held off -- and
what each sample weighs (the period it was taken at, doubled on a throttled CPU), carried by every export (issue
23, items 3 and 6). The records go through the kernel's own fold, report and raw output (tests/host/
kernel_report.c over kernel/profiler/*.c), the raw text through scripts/profexport into pprof -- read back by
the real `go tool pprof`: -tagfocus=context=irqs-off keeps the interrupts-off chains, -tags counts the marks and
the held-off time -- and into folded stacks, where a mark is one more frame past the leaf. The addresses are a
tiny ELF's (tests/host/host_build.py's Tiny), so every frame resolves with its lines.
"""

import os
import re
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import host_build  # noqa: E402
from host_build import PROFEXPORT, TOP  # noqa: E402
sys.path.insert(0, os.path.join(TOP, "tests", "integration"))
import kprof_pprof  # noqa: E402
from kprof_pprof import go_pprof  # noqa: E402

import kprof_profile as kp  # noqa: E402

kernel_report = host_build.kernel_report  # module fixtures (host_build.py)
tiny = host_build.tiny
pb2 = kprof_pprof.pb2  # a fixture (kprof_pprof.py)

CYCLES = 2100000  # the counter's nominal period in the counter case
TICK_NS = 1000000  # the tick's period (1000 Hz) in the tick case


def symbol_lines(t):
    return ["sym %x %d %s" % (a, s, n) for a, s, n in zip(t.symtab.addrs, t.symtab.sizes, t.symtab.names)] + \
        ["text %x %x" % (t.symtab.text_start, t.symtab.text_end)]


def rec(cpu, flags, held, period, frames, n):
    return ["rec %d 7 %d - %d %d %d %s" % (cpu, RUN, flags, held, period, " ".join("%x" % f for f in frames))] * n


RUN = 3


def counter_case(t):
    """A counter run: plain burn samples on cpu 0, interrupts-off ones on cpu 1, in-interrupt ones on cpu 2 --
    throttled to four times the period, so each weighs four -- and the idle loop in an interrupt with
    interrupts off on cpu 3."""
    return (["case %d 1003 4 100 1000000 %d pmu/nmi intel fixed-ctr1" % (RUN, CYCLES), "site -"] +
            ["cpu %d %d 2 %d %d 0 0 0 0" % (c, RUN, c == 2, 4 * CYCLES if c == 2 else CYCLES) for c in range(4)] +
            rec(0, 0, 0, CYCLES, t.chain, 20) + rec(1, kp.REC_IRQS_OFF, 0, CYCLES, t.chain, 10) +
            rec(2, kp.REC_IN_IRQ, 0, 4 * CYCLES, t.chain, 5) +
            rec(3, kp.REC_IN_IRQ | kp.REC_IRQS_OFF, 0, CYCLES, (t.loop,), 3))


def tick_case(t):
    """A tick run: the burn chain's ticks let in after 19.4 ms and 19.6 ms with interrupts off (19.5 on average),
    the idle loop's on time."""
    return (["case %d 1003 4 1000 %d 0 tick" % (RUN, TICK_NS), "reason no usable PMU", "site sti"] +
            rec(0, kp.REC_LET_IN, 19400, TICK_NS, t.chain, 4) + rec(0, kp.REC_LET_IN, 19600, TICK_NS, t.chain, 4) +
            rec(1, 0, 0, TICK_NS, (t.loop,), 13))


def kernel_outputs(kernel_report, t, case):
    """(the console report, the raw text) the kernel writes for case's records."""
    report, raw = kernel_report("\n".join(symbol_lines(t) + case(t) + ["report 8 - -"] + case(t) +
                                          ["raw %s" % t.build_id]) + "\n")
    return report, raw


def profexport(*args):
    done = subprocess.run([PROFEXPORT] + list(args), capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.decode()


def exported(kernel_report, tiny, tmp_path_factory, case, name):
    """A case's (report, raw text, path of the raw file NAME.raw)."""
    report, raw = kernel_outputs(kernel_report, tiny, case)
    path = tmp_path_factory.mktemp(name) / (name + ".raw")
    path.write_text(raw)
    return report, raw, str(path)


@pytest.fixture(scope="module")
def counter(kernel_report, tiny, tmp_path_factory):
    return exported(kernel_report, tiny, tmp_path_factory, counter_case, "counter")


@pytest.fixture(scope="module")
def ticks(kernel_report, tiny, tmp_path_factory):
    return exported(kernel_report, tiny, tmp_path_factory, tick_case, "ticks")


def test_the_console_report_marks_and_weighs(counter, ticks, tiny):
    report, _, _ = counter
    lines = report.split("\n")
    assert lines[1] == "38 samples on 4 cpus, 0 dropped, source pmu/nmi intel fixed-ctr1 every 2100000 cycles"
    assert lines[2] == "per cpu: 0:20 1:10 2:5 (throttled: every 8400000 cycles) 3:3"
    chains = [l for l in lines if re.match(r"\d+\.\d% ", l)]
    # weighed: the 5 in-interrupt samples of the throttled cpu weigh as much as the 20 plain ones
    assert chains == ["37.7% 20 burn_inner+0x4", "37.7% 5 burn_inner+0x4 [in irq]",
                      "18.9% 10 burn_inner+0x4 [irqs off]",
                      "5.7%% 3 _start+0x%x [in irq, irqs off]" % (tiny.loop - tiny.symtab.find("_start"))]
    report, _, _ = ticks
    assert "61.9%% 13 _start+0x%x" % (tiny.loop - tiny.symtab.find("_start")) in report
    assert "38.1% 8 burn_inner+0x4 [let in after 19.5 ms irqs off]" in report


def test_the_raw_lines_carry_the_marks_and_periods(counter, ticks, tiny):
    _, raw, _ = counter
    assert raw.startswith("# kprof raw v2 source=pmu/nmi-intel-fixed-ctr1 period=2100000 unit=cycles ")
    chain = " ".join("0x%x" % f for f in tiny.chain)
    body = raw.split("\n")[1:-2]
    assert body.count("s 0 7 0 - 2100000 - %s" % chain) == 20
    assert body.count("s 1 7 0 - 2100000 irqs-off %s" % chain) == 10
    assert body.count("s 2 7 0 - 8400000 in-irq %s" % chain) == 5
    assert body.count("s 3 7 0 - 2100000 irqs-off,in-irq 0x%x" % tiny.loop) == 3
    _, raw, _ = ticks
    assert raw.startswith("# kprof raw v2 source=tick period=1000000 unit=ns ")
    assert raw.count(" 1000000 let-in=19400 %s\n" % chain) == 4
    assert raw.count(" 1000000 let-in=19600 %s\n" % chain) == 4
    parsed = kp.parse_raw(raw)
    assert sorted({(s.flags, s.held_off_us) for s in parsed.samples}) == [(0, 0), (4, 19400), (4, 19600)]


def test_folded_stacks_end_in_the_mark_and_count_nominal_periods(counter, ticks, tiny):
    stack = "_start;helper;burn_outer;burn_middle;burn_inner"
    _, _, path = counter
    assert profexport("--elf", tiny.elf, "--folded", path) == (
        "_start;[in irq, irqs off] 3\n" + stack + " 20\n" + stack + ";[in irq] 20\n" + stack + ";[irqs off] 10\n")
    _, _, path = ticks
    assert profexport("--elf", tiny.elf, "--folded", path) == (
        "_start 13\n" + stack + ";[let in after 19.5 ms irqs off] 8\n")


def test_pprof_labels_the_marks_and_weighs_in_the_events_unit(counter, ticks, tiny, pb2, tmp_path):
    _, _, path = counter
    out = str(tmp_path / "counter.pb.gz")
    profexport("--elf", tiny.elf, "-o", out, path)
    prof = pb2.Profile.FromString(__import__("gzip").decompress(open(out, "rb").read()))
    st = prof.string_table
    assert [(st[t.type], st[t.unit]) for t in prof.sample_type] == [("samples", "count"), ("cycles", "count")]
    assert (st[prof.period_type.type], st[prof.period_type.unit], prof.period) == ("cycles", "count", CYCLES)
    assert sum(s.value[1] for s in prof.sample) == (20 + 10 + 4 * 5 + 3) * CYCLES

    # -tagfocus=context=irqs-off: only the chains that ran with interrupts off, the idle loop's in an interrupt too
    traces = go_pprof(out, "-tagfocus=context=irqs-off", "-traces")
    blocks = [b for b in traces.split("-----------+")[1:] if b.strip("- \n")]
    assert len(blocks) == 2, traces
    assert all("irqs-off" in b for b in blocks), traces
    assert sum("burn_inner" in b for b in blocks) == 1 and sum("in-irq" in b for b in blocks) == 1, traces
    top = go_pprof(out, "-tagfocus=context=irqs-off", "-sample_index=samples", "-top")
    assert "Showing nodes accounting for 13, 34.21% of 38 total" in top, top
    assert re.search(r"(?m)^\s+10\s+26\.32%.*burn_inner$", top) and re.search(r"(?m)^\s+3\s+7\.89%.*_start$", top), top
    tags = go_pprof(out, "-sample_index=samples", "-tags")
    assert re.search(r"context: Total 21\.0\s+13\.0 \(61\.90%\): irqs-off\s+8\.0 \(38\.10%\): in-irq\n\n", tags), tags
    # weighed: by cycles the throttled cpu's 5 samples count four times
    cycles = go_pprof(out, "-tagfocus=context=in-irq", "-top")
    assert "Showing nodes accounting for %d, 43.40%% of %d total" % ((4 * 5 + 3) * CYCLES, 53 * CYCLES) in cycles, \
        cycles

    _, _, path = ticks
    out = str(tmp_path / "ticks.pb.gz")
    profexport("--elf", tiny.elf, "-o", out, path)
    prof = pb2.Profile.FromString(__import__("gzip").decompress(open(out, "rb").read()))
    st = prof.string_table
    assert (st[prof.period_type.type], st[prof.period_type.unit], prof.period) == ("cpu", "nanoseconds", TICK_NS)
    tags = go_pprof(out, "-sample_index=samples", "-tags")
    assert re.search(r"context: Total 8\.0\s+8\.0 \(\s*100%\): let-in\n\n", tags), tags
    assert re.search(r"held_off_us: Total 8\.0\s+4\.0 \(50\.00%\): 19\.40ms\s+4\.0 \(50\.00%\): 19\.60ms", tags), tags
    let_in = go_pprof(out, "-tagfocus=context=let-in", "-sample_index=samples", "-top")
    assert "Showing nodes accounting for 8, 38.10% of 21 total" in let_in, let_in
    assert re.search(r"(?m)^\s+8\s+38\.10%.*burn_inner$", let_in), let_in


def test_prof_py_reads_the_period_and_marks_from_the_rings():
    """scripts/prof.py's side, without gdb: a record decoded from a paused kernel's ring by the layout DWARF
    gives (here written out by hand in the shape of struct profile_record on x86_64) keeps its flags, held-off
    time and period, and `prof buffers` marks it as the console report marks its chain."""
    fields = {"labels": (0, 8, 1), "time_ns": (8, 8, 1), "pid": (16, 4, 1), "run": (20, 4, 1), "cpu": (24, 2, 1),
              "nframes": (26, 1, 1), "flags": (27, 1, 1), "held_off_us": (28, 4, 1), "period": (32, 4, 1),
              "frames": (40, 8, 8)}
    layout = kp.RecordLayout(104, fields)
    rec = bytearray(104)
    rec[16:20] = (7).to_bytes(4, "little")
    rec[20:24] = (3).to_bytes(4, "little")
    rec[26] = 1
    rec[27] = kp.REC_IRQS_OFF | kp.REC_IN_IRQ
    rec[32:36] = (8400000).to_bytes(4, "little")
    rec[40:48] = (0x1234).to_bytes(8, "little")
    r = layout.decode(bytes(rec), 0)
    assert (r.flags, r.held_off_us, r.period, r.frames) == (3, 0, 8400000, (0x1234,))
    s = kp.Sample(r.cpu, r.pid, r.time_ns, (), r.frames, r.flags, r.held_off_us, r.period)
    assert kp.sample_mark(s) == " [in irq, irqs off]"
    assert kp.sample_mark(s._replace(flags=kp.REC_IRQS_OFF)) == " [irqs off]"
    assert kp.sample_mark(s._replace(flags=kp.REC_IN_IRQ)) == " [in irq]"
    assert kp.sample_mark(s._replace(flags=kp.REC_LET_IN, held_off_us=19449)) == " [let in after 19.4 ms irqs off]"
    assert kp.sample_mark(s._replace(flags=0)) == ""
    assert kp.pprof_context(3) == ("irqs-off", "in-irq") and kp.pprof_context(kp.REC_LET_IN) == ("let-in",)
