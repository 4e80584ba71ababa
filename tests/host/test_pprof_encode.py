"""The kernel's pprof fold and encoder (kernel/profiler/pprof_fold.c, pprof_encode.c, pb_writer.c), run on the
host through tests/host/pprof_harness.c over synthetic runs with known chains, labels, marks and CPUs, and read
back with pprof's own schema (build/pprof/profile_pb2.py, python3-protobuf) and `go tool pprof -raw` / `-top`:
every field checked, values adding up to the records, the "[not tracked]" sample of a full fold, and the
kernel's mapping as kernel/profiler/pprof.c states it symbolising the real build/kprof.elf to source lines.

Runs with /usr/bin/python3; needs gcc, protoc, python3-protobuf and golang-go (scripts/deps.sh).
"""

import collections
import gzip
import os
import re
import subprocess
import sys

import pytest

import host_build  # noqa: E402

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(TOP, "scripts"))
import kprof_profile as kp  # noqa: E402
sys.path.insert(0, os.path.join(TOP, "tests", "integration"))
from kprof_pprof import go_pprof, pb2  # noqa: E402,F401 -- pb2 is a fixture


IRQS_OFF, IN_IRQ, LET_IN = 1, 2, 4
MS = 1000000


@pytest.fixture(scope="module")
def harness(tmp_path_factory):
    """The harness built (under the sanitizers), running: run(lines) -> its output."""
    exe = host_build.harness("pprof_harness")

    def run(lines):
        done = subprocess.run([exe], input="".join(l + "\n" for l in lines), capture_output=True, text=True,
                              timeout=120)
        assert done.returncode == 0, done.stderr
        return done.stdout
    return run


# ---- a synthetic run ---------------------------------------------------------------------------------------

SYMBOLS = [(0x100000, 0x80, "burn_inner"), (0x100100, 0x100, "burn_loop"), (0x100200, 0x200, "cmd_burn"),
           (0x100400, 0x40, "idle_loop"), (0x100500, 0x100, "memcpy")]
TEXT = (0x100000, 0x110000)
GAP = 0x100480  # between idle_loop and memcpy: resolves to nothing
BUILD_ID = "5e1f00d0c0ffee0123456789abcdef0123456789"
LABELS = ["label 0 job=a,cmd=burn", "label 1 netload=sink"]
Rec = collections.namedtuple("Rec", "cpu pid label span flags held period frames")

RECORDS = (
    [Rec(0, 5, 0, 0, 0, 0, 10 * MS, (0x100010, 0x100120, 0x100230))] * 7 +
    [Rec(1, 5, 0, 0, 0, 0, 10 * MS, (0x100010, 0x100120, 0x100230))] * 5 +
    [Rec(2, 6, 1, 77, IRQS_OFF, 0, 10 * MS, (0x100404, 0x100240))] * 3 +
    [Rec(3, 7, None, 0, LET_IN, 25, 20 * MS, (0x100508,))] * 2 +
    [Rec(1, 5, None, 0, IN_IRQ, 0, 0, (GAP, 0x100120))]
)
# What each key's sample must be: leaf-first function names ("" unresolved), labels, count, weight.
EXPECTED = {
    (("burn_inner", "burn_loop", "cmd_burn"), (("cmd", "burn"), ("job", "a"), ("cpu", "0"), ("pid", "5"))): (7, 70 * MS),
    (("burn_inner", "burn_loop", "cmd_burn"), (("cmd", "burn"), ("job", "a"), ("cpu", "1"), ("pid", "5"))): (5, 50 * MS),
    (("idle_loop", "cmd_burn"), (("netload", "sink"), ("span", "77"), ("context", "irqs-off"), ("cpu", "2"),
                                 ("pid", "6"))): (3, 30 * MS),
    (("memcpy",), (("context", "let-in"), ("held_off_us", 50), ("cpu", "3"), ("pid", "7"))): (2, 40 * MS),
    (("", "burn_loop"), (("context", "in-irq"), ("cpu", "1"), ("pid", "5"))): (1, 1),
}


def run_lines(path, records=RECORDS, cycles=False, period=10 * MS, drops=2, build_id=BUILD_ID,
              mapping=(0x100000, 0x110000, 0x1000), symbols=SYMBOLS, text=TEXT, time_nanos=0, gzip=False):
    lines = ["sym %x %d %s" % s for s in symbols] + ["text %x %x" % text] + LABELS
    lines.append("info %s %d %d 1500 4 %d %s %x %x %x %d" % ("pmu/nmi-intel-fixed-ctr1" if cycles else "tick",
                                                             cycles, period, drops, build_id or "-", *mapping,
                                                             time_nanos))
    for r in records:
        lines.append("rec %d %d %s %d %d %d %d %s" % (r.cpu, r.pid, "-" if r.label is None else r.label, r.span,
                                                      r.flags, r.held, r.period, " ".join("%x" % f for f in r.frames)))
    lines.append("encode " + path + (" gzip" if gzip else ""))
    return lines


def decode(pb2, path):
    prof = pb2.Profile()
    with open(path, "rb") as f:
        data = f.read()
    prof.ParseFromString(gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data)
    return prof


def view(prof):
    """{(function names leaf first, labels): (count, weight)} of the profile's samples."""
    st = prof.string_table
    functions = {f.id: st[f.name] for f in prof.function}
    locations = {l.id: l for l in prof.location}
    out = {}
    for s in prof.sample:
        names = tuple(functions[locations[i].line[0].function_id] if locations[i].line else ""
                      for i in s.location_id)
        labels = tuple((st[l.key], st[l.str] if l.str else l.num) for l in s.label)
        assert (names, labels) not in out, "one key, one sample"
        out[(names, labels)] = tuple(s.value)
    return out


# ---- the tests -------------------------------------------------------------------------------------------

def test_every_field(harness, pb2, tmp_path):
    path = str(tmp_path / "tick.pb")
    assert harness(run_lines(path)) == "ok %d 5\n" % os.path.getsize(path)
    prof = decode(pb2, path)
    st = list(prof.string_table)
    assert st[0] == "" and len(set(st)) == len(st), "index 0 is \"\", no string twice"
    assert [(st[t.type], st[t.unit]) for t in prof.sample_type] == [("samples", "count"), ("cpu", "nanoseconds")]
    assert (st[prof.period_type.type], st[prof.period_type.unit]) == ("cpu", "nanoseconds")
    assert st[prof.default_sample_type] == "cpu"
    assert prof.period == 10 * MS
    assert prof.duration_nanos == 1500 * MS
    assert prof.time_nanos == 0
    [m] = prof.mapping
    assert (m.id, m.memory_start, m.memory_limit, m.file_offset) == (1, 0x100000, 0x110000, 0x1000)
    # not symbolised by the mapping's own account, so go tool pprof given the ELF adds source lines
    assert (st[m.filename], st[m.build_id], m.has_functions) == ("kprof.elf", BUILD_ID, False)

    assert view(prof) == EXPECTED
    assert sum(s.value[0] for s in prof.sample) == len(RECORDS)
    assert sum(s.value[1] for s in prof.sample) == sum(r.period or 1 for r in RECORDS)

    # A location per distinct address and role: the leaf's own address, a caller's exact return address (its
    # function found at address - 1); all inside the kernel's mapping.
    addresses = collections.Counter(l.address for l in prof.location)
    assert set(addresses) == {0x100010, 0x100120, 0x100230, 0x100404, 0x100240, 0x100508, GAP}
    assert all(n == 1 for n in addresses.values())
    assert all(l.mapping_id == 1 for l in prof.location)
    assert sorted(st[f.name] for f in prof.function) == ["burn_inner", "burn_loop", "cmd_burn", "idle_loop",
                                                          "memcpy"]
    assert all(f.name == f.system_name for f in prof.function)
    assert [st[c] for c in prof.comment] == [
        "kprof kernel: source=tick period_ns=10000000 window_ms=1500 cpus=4 samples=18 dropped=2",
        "kprof kernel: folded 5 keys of 4096, not_tracked=0 (samples of keys past a full table)",
        "kprof kernel: labels_dropped=0 (label sets the pool refused, full)",
        "kprof kernel: build_id=" + BUILD_ID]
    held = [l for s in prof.sample for l in s.label if st[l.key] == "held_off_us"]
    assert [(h.num, st[h.num_unit]) for h in held] == [(50, "microseconds")]


def test_go_tool_pprof_reads_it(harness, tmp_path):
    path = str(tmp_path / "tick.pb")
    harness(run_lines(path))
    raw = go_pprof(path, "-raw")
    assert "PeriodType: cpu nanoseconds" in raw and "Period: 10000000" in raw
    assert "kprof kernel: source=tick period_ns=10000000" in raw
    for word in ("burn_inner", "burn_loop", "cmd_burn", "idle_loop", "memcpy", "job:[a]", "cmd:[burn]",
                 "netload:[sink]", "span:[77]", "context:[irqs-off]", "context:[let-in]", "context:[in-irq]",
                 "cpu:[3]", "pid:[7]", "held_off_us:[50 microseconds]", BUILD_ID):
        assert word in raw, word
    assert re.search(r"^\s+7\s+70000000: \d+ \d+ \d+ $", raw, re.M), raw
    top = go_pprof(path, "-top", "-sample_index=samples", "-nodecount=10")
    rows = [l.split() for l in top.splitlines() if re.match(r"^\s+\d+\s+\d+\.\d+%", l)]
    assert rows[0][0] == "12" and rows[0][-1] == "burn_inner", top
    flat = {r[-1]: int(r[0]) for r in rows}
    assert flat["idle_loop"] == 3 and flat["memcpy"] == 2
    assert "18 total" in top


def test_gzipped_when_it_pays(harness, pb2, tmp_path):
    """The same run gzipped: smaller, a gzip member that inflates to the very profile, which go tool pprof
    reads as it is."""
    plain, packed = str(tmp_path / "plain.pb"), str(tmp_path / "packed.pb.gz")
    records = RECORDS + [Rec(i % 4, 9, None, 0, 0, 0, 10 * MS, (0x100010 + i % 0x60, 0x100120, 0x100230))
                         for i in range(300)]
    assert not harness(run_lines(plain, records)).endswith(" gzipped\n")
    out = harness(run_lines(packed, records, gzip=True))
    assert out.endswith(" gzipped\n"), out
    with open(plain, "rb") as f, open(packed, "rb") as g:
        raw, gz = f.read(), g.read()
    assert gz[:2] == b"\x1f\x8b" and len(gz) < len(raw)
    assert gzip.decompress(gz) == raw
    assert decode(pb2, packed) == decode(pb2, plain)
    top = go_pprof(packed, "-top", "-sample_index=samples")
    assert re.search(r"^\s+\d+\s+\d+\.\d+%.*burn_inner$", top, re.M), top
    assert "%d total" % len(records) in top


def test_counter_run(harness, pb2, tmp_path):
    path = str(tmp_path / "counter.pb")
    records = [r._replace(period=2100000) for r in RECORDS]
    harness(run_lines(path, records, cycles=True, period=2100000, build_id=None, time_nanos=1234))
    prof = decode(pb2, path)
    st = prof.string_table
    assert [(st[t.type], st[t.unit]) for t in prof.sample_type] == [("samples", "count"), ("cycles", "count")]
    assert (st[prof.period_type.type], st[prof.period_type.unit], prof.period) == ("cycles", "count", 2100000)
    assert prof.time_nanos == 1234
    assert prof.mapping[0].build_id == 0
    assert st[prof.comment[0]] == ("kprof kernel: source=pmu/nmi-intel-fixed-ctr1 period=2100000 unit=cycles "
                                   "window_ms=1500 cpus=4 samples=18 dropped=2")
    assert st[prof.comment[3]] == "kprof kernel: build_id=none"
    assert sum(s.value[1] for s in prof.sample) == 18 * 2100000


def test_full_fold_is_one_not_tracked_sample(harness, pb2, tmp_path):
    """4096 keys fill the fold; the samples of 10 more are one "[not tracked]" sample, outside the mapping,
    that go tool pprof shows too, and every sample is counted."""
    path = str(tmp_path / "full.pb")
    records = [Rec(i % 4, 1, None, 0, 0, 0, 3, (0x101000 + i,)) for i in range(4096 + 10)]
    symbols = SYMBOLS + [(0x101000, 0x2000, "filler")]
    assert harness(run_lines(path, records, symbols=symbols)).startswith("ok ")
    prof = decode(pb2, path)
    st = prof.string_table
    functions = {f.id: st[f.name] for f in prof.function}
    locations = {l.id: l for l in prof.location}
    by_name = collections.Counter()
    for smp in prof.sample:
        [loc] = smp.location_id
        by_name[functions[locations[loc].line[0].function_id]] += smp.value[0]
    assert by_name == {"filler": 4096, "[not tracked]": 10}
    assert len(prof.sample) == 4097
    [nt] = prof.sample[-1].location_id
    assert functions[locations[nt].line[0].function_id] == "[not tracked]"
    assert (list(prof.sample[-1].value), list(prof.sample[-1].label)) == ([10, 30], [])
    assert locations[nt].mapping_id == 0 and locations[nt].address == 0
    assert "not_tracked=10" in st[prof.comment[1]]
    top = go_pprof(path, "-top", "-sample_index=samples", "-nodecount=3", "-nodefraction=0")
    assert re.search(r"^\s+4096\s+99\.76%.*filler$", top, re.M), top
    assert re.search(r"^\s+10\s+0\.24%.*\[not tracked\]$", top, re.M), top


def _elf_symbol(elf, name):
    out = subprocess.run(["nm", elf], capture_output=True, text=True, check=True).stdout
    m = re.search(r"^([0-9a-f]+) \w %s$" % re.escape(name), out, re.M)
    assert m, name
    return int(m.group(1), 16)


def _built_text_segment():
    """kernel_text_segment as the link wrote it into the built kernel's table (build/syms.N.c, the last pass)."""
    build = os.path.join(TOP, "build")
    tables = sorted((f for f in os.listdir(build) if re.fullmatch(r"syms\.\d+\.c", f)), key=lambda f: int(f.split(".")[1]))
    with open(os.path.join(build, tables[-1])) as f:
        m = re.search(r"kernel_text_segment = \{ (0x[0-9a-f]+)ull, (0x[0-9a-f]+)ull, (0x[0-9a-f]+)ull \};", f.read())
    return tuple(int(v, 16) for v in m.groups())


def test_kernel_mapping_symbolises_the_built_elf(harness, tmp_path):
    """The mapping kernel/profiler/pprof.c gives (the text's segment, kernel_text_segment, from its start to
    __text_end at its file offset) is the built ELF's, so `go tool pprof build/kprof.elf FILE` -- with its
    default symbolisation, not only -symbolize=force -- names each address's own function with its source line."""
    elf = os.path.join(TOP, "build", "kprof.elf")
    if not os.path.exists(elf):
        subprocess.run(["make", "-s", "build/kprof.elf"], cwd=TOP, check=True, timeout=600)
    start, _, offset = _built_text_segment()
    end = _elf_symbol(elf, "__text_end")
    seg = kp.elf_exec_segment(elf, _elf_symbol(elf, "__text_start"))
    assert seg and (seg[0], seg[2]) == (start, offset), "the table's segment is not the ELF's text segment"
    burn, cmd = _elf_symbol(elf, "burn_inner"), _elf_symbol(elf, "cmd_burn")
    path = str(tmp_path / "real.pb")
    records = [Rec(0, 1, None, 0, 0, 0, 1, (burn + 4, cmd + 0x10))]
    harness(run_lines(path, records, symbols=[(burn, 0x20, "burn_inner"), (cmd, 0x100, "cmd_burn")],
                      text=(_elf_symbol(elf, "__text_start"), end), mapping=(start, end, offset)))
    raw = go_pprof(os.path.abspath(path), "-raw", "-lines", elf, symbolize="local")
    locations = raw[raw.index("Locations"):]
    assert re.search(r"0x%x M=1 burn_inner \S*kernel/shell/cmd_burn\.c:\d+" % (burn + 4), locations), locations
    assert re.search(r"0x%x M=1 cmd_burn \S*kernel/shell/cmd_burn\.c:\d+" % (cmd + 0x10), locations), locations
