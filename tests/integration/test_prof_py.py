"""scripts/prof.py in gdb 13 against a running kprof, through kprof's own stub on COM2 and through QEMU's
gdbstub on the same boot (issue 6: `prof buffers`, `prof report`, `prof state`, `prof pmu`; issue 7: `prof
export`).

- Before any profile: `prof state` says so, `prof report` refuses.
- While a profile records (the machine stopped mid-window, issue 13): `prof report` says in its first line
  that this is a partial view, then folds exactly the run's records the rings hold (drained or waiting), in
  the kernel's format: header, per-CPU line (each ring's count), chains.
- `profile 300 all 3` on the console, then `prof report`: byte for byte the console's report (issue 13; only
  \r\n normalised), through both stubs; with interrupts-off burn running the marks and held-off line too.
- After a `profile` run with labelled burn tasks: `prof report` prints the kernel's own report, `prof report
  3` that report cut to 3 chains; `prof buffers` shows every one of those samples with its pid, labels and
  resolved frames; `prof export` writes a pprof profile with the same samples, burn_inner on top.
- `prof pmu` shows every CPU's PMU MSRs through kprof's stub, and through QEMU's says MSRs are not available.
- User errors are gdb errors, one line each.

Each gdb runs as `timeout -k 3 60 gdb -batch -nx`; the commands run through a small Python wrapper that frames
each one's output (`@@begin NAME ok|error` ... `@@end NAME`), since batch gdb buffers and interleaves.
"""

import gzip
import os
import re
import subprocess
import sys
import time

import pytest

from kprof_pprof import go_pprof
from kprof_qemu import ELF, TOP, Kprof, booted, free_port, poll
from kprof_report import burn_labelled, console_report, wait_no_burn
from kprof_gdb import WRAPPER

sys.path.insert(0, os.path.join(TOP, "scripts"))
import kprof_profile as kp  # noqa: E402

# Kernels this module boots (conftest.py fails a boot past BOOTS), by the test that boots them -- a module kernel
# counts for the first test that uses it, a test named alone needs a fresh one: test_before_any_profile 1.
BOOTS = 1

PROF_PY = os.path.join(TOP, "scripts", "prof.py")
GDB_TIMEOUT = 60
BURN_CALLERS = ["burn_middle", "burn_outer", "burn_task", "task_entry_trampoline"]

GATE = "@@gate"


def gdb_prof(port, commands, tmp_path, before_attach=None):
    """Runs [(name, command)] in one batch gdb attached to 127.0.0.1:port with prof.py loaded; returns
    {name: (status, text)}. Fails when gdb fails or a framed command is missing. before_attach: called once gdb
    has started and loaded the ELF, and gdb attaches the moment it returns -- for a state that lasts a bounded
    time (a window of at most 2000 ms), which gdb's own start-up on a loaded host could outlast."""
    wrapper = tmp_path / "kp_run.py"
    wrapper.write_text(WRAPPER)
    argv = ["timeout", "-k", "3", str(GDB_TIMEOUT), "gdb", "-batch", "-nx", "-ex", "set pagination off",
            "-ex", "set confirm off", "-ex", "set width 0"]
    if before_attach:
        argv += ["-ex", "python import sys; print(%r, flush=True); sys.stdin.readline()" % GATE]
    argv += ["-ex", "target remote 127.0.0.1:%d" % port, "-ex", "source %s" % PROF_PY, "-ex", "source %s" % wrapper]
    for name, command in commands:
        argv += ["-ex", "python kp_run(%r, %r)" % (name, command)]
    argv += ["-ex", "detach", ELF]
    if before_attach is None:
        done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, errors="replace",
                              timeout=GDB_TIMEOUT + 10)
        returncode, text, err = done.returncode, done.stdout, done.stderr
    else:
        p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             errors="replace")
        try:
            head = ""
            while GATE not in head:
                line = p.stdout.readline()  # gdb's own timeout ends this wait with EOF
                if not line:
                    break
                head += line
            if GATE in head:
                before_attach()
            try:
                p.stdin.write("\n")
                p.stdin.flush()
            except BrokenPipeError:
                pass  # gdb is gone: its exit status says why
            out, err = p.communicate(timeout=GDB_TIMEOUT + 10)
        finally:
            if p.poll() is None:
                p.kill()
                p.communicate()
        returncode, text = p.returncode, head + out
        assert GATE in head, "gdb never reached the gate:\n%s\n%s" % (text, err)
    assert returncode == 0, "gdb exited %d (124: timed out):\n%s\n%s" % (returncode, text, err)
    got = {}
    for m in re.finditer(r"(?ms)^@@begin (\S+) (ok|error)\n(.*?)^@@end \1\n", text):
        got[m.group(1)] = (m.group(2), m.group(3).rstrip("\n"))
    missing = [n for n, _ in commands if n not in got]
    assert not missing, "gdb ran no %s:\n%s\n%s" % (missing, text, err)
    return got


def ok(results, name):
    status, text = results[name]
    assert status == "ok", "%s failed: %s" % (name, text)
    return text


def other_free_port(*taken):
    return poll("a free port besides %s" % (taken,), lambda: (lambda p: p if p not in taken else None)(free_port()))


@pytest.fixture(scope="module")
def both(request):
    """One kprof (4 CPUs) with kprof's stub on COM2 (k.gdb_port) and QEMU's gdbstub (k.qemu_gdb_port)."""
    k = Kprof(smp=4, mem=256, gdb=True, name=request.node.name)
    k.qemu_gdb_port = other_free_port(k.gdb_port)
    k.extra_args += ["-gdb", "tcp:127.0.0.1:%d" % k.qemu_gdb_port]
    yield from booted(k)


def test_before_any_profile(both, tmp_path):
    r = gdb_prof(both.qemu_gdb_port, [("state", "prof state"), ("report", "prof report"),
                                      ("buffers", "prof buffers"), ("buffers0", "prof buffers 0")], tmp_path)
    state = ok(r, "state")
    assert state.split("\n")[0] == "profiler: no run yet; active_run 0, last_run 0, claim free", state
    assert "rings: none yet (allocated by the first run)" in state, state
    assert r["report"] == ("error", "the profiler has not run yet: nothing to report")
    assert ok(r, "buffers").split("\n")[1:] == ["no rings: the profiler has never run"]
    assert r["buffers0"] == ("error", "no CPU has a ring yet: the profiler has never run")


def test_a_recording_run_seen_mid_window(both, tmp_path):
    """The machine stopped while `profile 2000` records and read through QEMU's gdbstub: the run is active, the
    profile command has drained its rings as it ran, and `prof report` says it is a partial view, then folds
    exactly the run's records the rings hold, in the kernel's format.

    QEMU's `stop` (QMP) stops the machine a moment into the window, and its clocks with it, so the window waits
    for gdb however long gdb takes to start (attaching first let a loaded host's gdb start-up outlast the 2 s
    window); detaching resumes it. Retry rule: when QEMU's stop missed the window -- the rings held no record of
    the run yet (the host ran no vCPU through a tick in that moment), or the run had already finished (the host
    took the whole window to deliver the echo and the stop) -- the run is let finish and the whole is tried
    again, 5 times in all. A stop inside the window that finds anything else fails at once."""
    attempts = 5
    for attempt in range(attempts):
        wait_no_burn(both)
        burn_labelled(both, 4000, 2)
        both.send_line("profile 2000 all")
        both.expect(r"profile 2000 all\n", what="the echo of the profile command")
        time.sleep(0.3)
        both.qmp("stop")
        r = gdb_prof(both.qemu_gdb_port, [("state", "prof state"), ("report", "prof report 128"),
                                          ("buffers", "prof buffers")], tmp_path)
        state = ok(r, "state")
        m = re.match(r"profiler: run (\d+) \(recording\); active_run \1, last_run \1, claim held", state)
        if not m and re.match(r"profiler: run (\d+) \(finished\); active_run 0, last_run \1, claim free", state) \
                and attempt + 1 < attempts:
            print("attempt %d: the run had finished when QEMU stopped the machine:\n%s" % (attempt + 1, state))
            both.expect(r"\n> ", what="the prompt after the finished run")
            continue
        assert m, "the profile was not recording when QEMU stopped the machine:\n%s" % state
        run = m.group(1)
        buffers = ok(r, "buffers")
        per_ring = [int(n) for n in re.findall(r"(?m)^cpu \d: (\d+) records of run %s; ring head" % run, buffers)]
        assert len(per_ring) == 4, buffers[:2000]
        if sum(per_ring) > 0:
            break
        print("attempt %d: no record of run %s in the rings yet when QEMU stopped it" % (attempt + 1, run))
        both.expect(r"(?m)^\d+ samples on \d+ cpus", timeout=30, what="the report of the recording run")
        both.expect(r"\n> ", what="the prompt after the recording run")
    assert sum(per_ring) > 0, "%d attempts, and no record in the rings when QEMU stopped the machine:\n%s" \
        % (attempts, buffers[:2000])
    report = ok(r, "report").split("\n")
    assert re.fullmatch(r"partial view: run %s is in progress; this folds the %d records of it the rings hold, "
                        r"every one of the run's so far, up to the newest \(\d+ ms into the run\); samples already "
                        r"drained into the report's own fold, and the window asked for, are not in memory gdb can "
                        r"read" % (run, sum(per_ring)), report[0]), report[0]
    assert re.fullmatch(r"profiled \d+ ms", report[1]), report
    header = re.fullmatch(r"(\d+) samples on (\d+) cpus, 0 dropped, source tick at 100 Hz \(.+\)", report[2])
    assert header and int(header.group(1)) == sum(per_ring), "report of %d records:\n%s" \
        % (sum(per_ring), "\n".join(report))
    assert report[3] == "per cpu: " + " ".join("%d:%d" % (i, n) for i, n in enumerate(per_ring)), report
    leaves = [l for l in report if re.match(r"\d+\.\d% \d+ ", l)]
    assert sum(int(l.split()[1]) for l in leaves) == sum(per_ring), "all 128 chains shown add up to the header"
    # the run goes on after detach, and the kernel's report has at least what was seen
    m = both.expect(r"(?m)^(\d+) samples on \d+ cpus", timeout=30, what="the report of the recording run")
    assert int(m.group(1)) >= sum(per_ring)
    both.expect(r"\n> ", what="the prompt after the recording run")


def test_prof_report_prints_the_console_report_byte_for_byte(both, tmp_path):
    """`profile 300 all 3` on the console, then `prof report` through both stubs: the same bytes."""
    wait_no_burn(both)
    burn_labelled(both, 2000, 2)
    console = console_report(both, "profile 300 all 3")
    assert re.match(r"profiled \d+ ms\n\d+ samples on \d+ cpus, 0 dropped, source tick at 100 Hz \(.+\)\n"
                    r"per cpu: 0:\d+ 1:\d+ 2:\d+ 3:\d+\n", console), console
    for port in (both.gdb_port, both.qemu_gdb_port):
        r = gdb_prof(port, [("report", "prof report")], tmp_path)
        assert r["report"][0] == "ok", r
        assert r["report"][1] + "\n" == console, "prof report is not the console's:\n%s\n--- the console's:\n%s" \
            % (r["report"][1], console)


def test_a_raw_profile_is_not_reported_so_prof_report_is_partial(both, tmp_path):
    """`profile ... raw` prints no report, so the kept one is an earlier run's: `prof report` says the last
    run was not reported and folds its records, whose count is the raw trailer's."""
    raw = kp.parse_raw(both.cmd("profile 200 all raw", timeout=30) + "\n")
    r = gdb_prof(both.gdb_port, [("report", "prof report"), ("state", "prof state")], tmp_path)
    run = re.match(r"profiler: run (\d+) \(finished\)", ok(r, "state")).group(1)
    report = ok(r, "report").split("\n")
    assert report[0].startswith("partial view: run %s was not reported (a raw profile, or the machine stopped "
                                "before its report); this folds the %d records" % (run, len(raw.samples))), report
    assert report[2].startswith("%d samples on " % len(raw.samples)), report


def test_prof_report_shows_interrupts_off_code_as_the_console_does(both, tmp_path):
    """With `burn ... irqsoff` running the console's report says the tick was held off and marks the let-in
    chains; `prof report` prints it as it is."""
    wait_no_burn(both)
    out = both.cmd("burn 1500 2 irqsoff")
    assert out.startswith("burn: started 2 tasks"), out
    console = console_report(both, "profile 500 all 3")
    assert re.search(r"(?m)^tick held off by interrupts-off code: cpu \d \d+ ms \(\d+%\)", console), console
    assert re.search(r"(?m) \[let in after \d+\.\d ms irqs off\]$", console), console
    r = gdb_prof(both.gdb_port, [("report", "prof report")], tmp_path)
    assert ok(r, "report") + "\n" == console


def test_prof_report_is_the_kernels_report(both, tmp_path):
    wait_no_burn(both)
    # 3 of 4 CPUs busy: burn_inner on top, and idle chains too. gdb starts first (on a loaded host that takes
    # seconds); then the burn, the profile, and gdb attached the moment it is over, so that the burn outlives
    # gdb's reading of the rings: a burn task that had exited would have given up its label set, which the pool
    # may have freed since (prof buffers then says so, `set=0x...(gone)`).
    pids, kernel = [], []

    def profile():
        pids.extend(burn_labelled(both, 6000, 3))
        kernel.extend(both.cmd("profile 1000 all 128", timeout=30).split("\n"))
    pprof = str(tmp_path / "gdb.pb.gz")
    commands = [("report", "prof report 128"), ("report3", "prof report 3"), ("buffers", "prof buffers"),
                ("buffers2", "prof buffers 2"), ("state", "prof state"), ("export", "prof export %s" % pprof)]
    ours = gdb_prof(both.gdb_port, commands, tmp_path, before_attach=profile)
    samples = int(re.match(r"(\d+) samples on", kernel[1]).group(1))
    assert samples > 100 and kernel[2].startswith("per cpu: ") and \
        any(l.startswith("labels: ") for l in kernel[3:]), "\n".join(kernel)
    qemus = gdb_prof(both.qemu_gdb_port, commands[:2], tmp_path)

    for r, stub in ((ours, "kprof's stub"), (qemus, "QEMU's gdbstub")):
        report = ok(r, "report").split("\n")
        assert report == kernel, "prof report through %s is not the kernel's:\n%s\n--- the kernel's:\n%s" \
            % (stub, "\n".join(report), "\n".join(kernel))
        # the 3 hottest: the kernel's first three chains, then the line for the rest when there is a rest
        short = ok(r, "report3").split("\n")
        leaves = [i for i, line in enumerate(kernel) if re.match(r"\d+\.\d% ", line)]
        if len(leaves) > 3:
            assert short[:-1] == kernel[:leaves[3]], short
            rest = sum(int(kernel[i].split()[1]) for i in leaves[3:])
            assert short[-1] == "... %d more chains, %d samples (%s)" % (len(leaves) - 3, rest,
                                                                         kp.percent(rest, samples)), short
        else:
            assert short == kernel, short

    # prof buffers: every sample of the report, with its pid, labels and frames resolved by gdb
    buffers = ok(ours, "buffers")
    recs = re.findall(r"(?m)^  cpu (\d) pid (\d+) t \d+\.\d{9} s labels (\S+) period (\d+)( \[.*\])?$", buffers)
    assert len(recs) == samples, "prof buffers shows %d records, the report %d samples" % (len(recs), samples)
    # each record's period: the tick's at 100 Hz, and no mark in a run where nothing held the tick off
    assert {(period, mark) for _, _, _, period, mark in recs} == {("10000000", "")}, recs[:5]
    per_cpu = [int(n) for n in re.findall(r"(?m)^cpu \d: (\d+) records of run \d+; ring head", buffers)]
    assert sum(per_cpu) == samples and len(per_cpu) == 4, buffers[:2000]
    labels = {int(pid): lab for _, pid, lab, _, _ in recs}
    burning = [p for p in pids if p in labels]
    assert burning and all(labels[p] == ("job=a" if p == pids[0] else "job=b") for p in burning), labels
    assert re.search(r"(?m)^    0x[0-9a-f]{16} burn_inner\+0x[0-9a-f]+ at kernel/shell/cmd_burn\.c:\d+$", buffers)
    for caller in BURN_CALLERS[:3]:
        assert re.search(r"(?m)^    <- 0x[0-9a-f]{16} %s\+0x[0-9a-f]+ at kernel/shell/cmd_burn\.c:\d+$" % caller, buffers), \
            caller
    only2 = ok(ours, "buffers2")
    assert re.findall(r"(?m)^cpu (\d):", only2) == ["2"] and set(re.findall(r"(?m)^  cpu (\d) ", only2)) == {"2"}

    state = ok(ours, "state")
    reason = re.search(r"(?m)^source: tick \((.+)\)$", state)
    assert reason and kernel[1].endswith("source tick at 100 Hz (%s)" % reason.group(1)), state
    assert len(re.findall(r"(?m)^\d +\d+ +\d+ +0 +0  not armed", state)) == 4, state

    # prof export: a pprof profile of the same samples
    # (the rings hold the whole of a 1000 ms run at 100 Hz: no "only part of the run" line)
    assert re.fullmatch(r"prof export: %d samples of run \d+ \(finished\) \(0 dropped\) -> %s"
                        % (samples, re.escape(pprof)), ok(ours, "export"))
    pb2 = kp.load_profile_pb2()
    prof = pb2.Profile.FromString(gzip.decompress(open(pprof, "rb").read()))
    assert sum(s.value[0] for s in prof.sample) == samples
    assert prof.period == 10000000 and prof.string_table[prof.mapping[0].build_id] == kp.elf_build_id(ELF)
    top = go_pprof(pprof, "-top")
    first = [l.split() for l in top.splitlines() if re.match(r"\s+\d", l)][0]
    assert first[-1] == "burn_inner", top


def test_prof_pmu_through_kprofs_stub_and_qemus(both, tmp_path):
    ours = gdb_prof(both.gdb_port, [("pmu", "prof pmu"), ("rdmsr", "monitor rdmsr cpu 2 0x1b")], tmp_path)
    pmu = ok(ours, "pmu")
    assert pmu.startswith("pmu: "), pmu
    # every CPU, decoded -- or, as the stub reports a CPU that did not park within its wait (a vCPU the host
    # did not schedule), said to be unreadable; the CPU that owns the session always parks
    cpus = re.findall(r"(?m)^cpu (\d): (armed (?:no|yes)|not stopped, its MSRs cannot be read)", pmu)
    assert [c for c, _ in cpus] == ["0", "1", "2", "3"], pmu
    decoded = sum(1 for _, what in cpus if what.startswith("armed"))
    assert decoded >= 1 and len(re.findall(r"(?m)^  lvt perfcnt +LAPIC 0x340 = 0x[0-9a-f]{8}: delivery", pmu)) \
        == decoded, pmu
    assert len(re.findall(r"(?m)^  counter +MSR 0x[0-9a-f]+ = 0x[0-9a-f]{16}: value \d+", pmu)) == decoded, pmu
    assert re.fullmatch(r"cpu 2 msr 0x1b = 0x[0-9a-f]{16}", ok(ours, "rdmsr")), ours["rdmsr"]
    qemus = gdb_prof(both.qemu_gdb_port, [("pmu", "prof pmu"), ("state", "prof state")], tmp_path)
    status, text = qemus["pmu"]
    assert status == "error" and text.startswith("prof pmu: MSRs are not available through this gdbstub"), text
    assert ok(qemus, "state").startswith("profiler: "), "memory-only commands work through QEMU's gdbstub"


def test_prof_heap_reads_the_console_mem_sites_from_memory(both, tmp_path):
    """`prof heap` through QEMU's gdbstub prints the heap's chains as `mem sites` does: a leak made on purpose is
    the same line in both, and the console's totals line and columns are the same lines."""
    both.cmd("mem leak free")
    # The module's earlier burns: their tasks gone and freed first (the reaper frees a task's stack and struct
    # after ps stops listing it), or a free between the two reads below is a difference that is no one's.
    wait_no_burn(both)
    poll("the burn tasks' memory freed", lambda: not [
        line for line in both.cmd("mem sites 100").split("\n")[2:]
        if "cmd_burn" in line and line.split()[1] != "0"], timeout=15, every=0.1)
    assert both.cmd("mem leak 12 3000").startswith("mem: leaked 12 blocks of 3000 bytes")
    try:
        console = both.cmd("mem sites 100").split("\n")
        gdbs = ok(gdb_prof(both.qemu_gdb_port, [("heap", "prof heap 100")], tmp_path), "heap").split("\n")
    finally:
        both.cmd("mem leak free")
    leak = [line for line in console if " leak_one+0x" in line]
    assert len(leak) == 1 and leak[0].split()[:4] == ["36000", "12", "12", "0"], console
    assert leak[0] in gdbs, "\n".join(gdbs)
    assert gdbs[1] == console[1]
    assert re.fullmatch(r"heap: \d+ chains hold \d+ bytes in \d+ objects; since boot \d+ allocations, \d+ frees",
                        gdbs[0]), gdbs[0]
    # every chain the console named holds the same in memory (the machine was idle between the two)
    assert set(console[2:]) == set(gdbs[2:]), (console, gdbs)


@pytest.mark.parametrize("command, message", [
    ("prof report 0", "CHAINS must be a number 1..128, not '0'"),
    ("prof report 129", "CHAINS must be a number 1..128, not '129'"),
    ("prof report many", "CHAINS must be a number 1..128, not 'many'"),
    ("prof report 1 2", "usage: prof report [CHAINS]"),
    ("prof buffers 4", "CPU must be a number 0..3, not '4'"),
    ("prof buffers 0 1", "usage: prof buffers [CPU]"),
    ("prof state now", "usage: prof state"),
    ("prof pmu all", "usage: prof pmu"),
    ("prof export", "usage: prof export FILE"),
    ("prof heap 0", "N must be a number 1..100, not '0'"),
    ("prof heap 1 2", "usage: prof heap [N]"),
    ("prof export /nonexistent-dir/x.pb.gz", "/nonexistent-dir/x.pb.gz: No such file or directory"),
])
def test_user_errors(both, tmp_path, command, message):
    if not getattr(both, "profiled", False):
        both.cmd("profile 10 all 1", timeout=30)   # rings exist, so the CPU range is the rings'
        both.profiled = True
    r = gdb_prof(both.qemu_gdb_port, [("cmd", command)], tmp_path)
    assert r["cmd"] == ("error", message)


def test_the_let_in_marks_reach_every_export(both, tmp_path):
    """Issue 23: what the console report marks on the tick path -- a tick held off by `burn ... irqsoff` and let
    in just after its sti -- is carried by the raw lines (let-in=US), `prof buffers` (the same mark as the
    report's), `prof export` and profexport's pprof (context=let-in with held_off_us; `go tool pprof
    -tagfocus=context=let-in` keeps exactly those chains) and profexport's folded stacks (the mark a frame past
    the leaf)."""
    wait_no_burn(both)
    out = both.cmd("burn 1500 2 irqsoff")
    assert out.startswith("burn: started 2 tasks"), out
    text = both.cmd("profile 500 all raw", timeout=30) + "\n"
    raw = kp.parse_raw(text)
    let_in = [s for s in raw.samples if s.flags & kp.REC_LET_IN]
    assert let_in and all(s.held_off_us > 0 and s.flags == kp.REC_LET_IN for s in let_in), text[-2000:]
    assert not any(s.flags & ~kp.REC_LET_IN for s in raw.samples), "the tick never lands in interrupts-off code"
    # a tick weighs its period; one let in weighs every tick it stood for: its own and one per whole period held
    assert raw.unit == "ns" and all(s.period == raw.period for s in raw.samples if not s.flags & kp.REC_LET_IN)
    assert all(s.period == raw.period * (1 + s.held_off_us * 1000 // raw.period) for s in let_in), \
        [(s.period, s.held_off_us) for s in let_in]
    st = kp.Symtab.from_elf(ELF)
    assert any(any(st.caller_text(a).startswith("burn_irqsoff_slice+") for a in s.frames[1:]) for s in let_in), \
        [[st.caller_text(a) for a in s.frames] for s in let_in]

    pprof = str(tmp_path / "gdb.pb.gz")
    r = gdb_prof(both.gdb_port, [("buffers", "prof buffers"), ("export", "prof export %s" % pprof)], tmp_path)
    marks = re.findall(r"(?m)^  cpu \d pid \d+ t \S+ s labels \S+ period (\d+) \[let in after (\d+)\.(\d) ms irqs "
                       r"off\]$", ok(r, "buffers"))
    assert sorted((int(ms) * 1000 + int(tenth) * 100) for _, ms, tenth in marks) == \
        sorted(s.held_off_us // 100 * 100 for s in let_in), ok(r, "buffers")[:3000]
    exported = kp.load_profile_pb2().Profile.FromString(gzip.decompress(open(pprof, "rb").read()))
    est = exported.string_table
    context = [s for s in exported.sample if any(est[lb.key] == "context" for lb in s.label)]
    assert sum(s.value[0] for s in context) == len(let_in)
    assert all({(est[lb.key], est[lb.str]) for lb in s.label if est[lb.key] == "context"} == {("context", "let-in")}
               and any(est[lb.key] == "held_off_us" and est[lb.num_unit] == "microseconds" and lb.num > 0
                       for lb in s.label) for s in context)

    rawfile = tmp_path / "irqsoff.raw"
    rawfile.write_text(text)
    profexport = os.path.join(TOP, "scripts", "profexport")
    done = subprocess.run([profexport, "--elf", ELF, "--folded", str(rawfile)], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    marked = [l for l in done.stdout.splitlines() if re.search(r";\[let in after \d+\.\d ms irqs off\] \d+$", l)]
    assert any(";burn_irqsoff_slice;" in l for l in marked), done.stdout
    assert sum(int(l.rsplit(" ", 1)[1]) for l in marked) == sum(s.period // raw.period for s in let_in), done.stdout
    out = str(tmp_path / "irqsoff.pb.gz")
    done = subprocess.run([profexport, "--elf", ELF, "-o", out, str(rawfile)], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    env = dict(os.environ, HOME=str(tmp_path), GOFLAGS="", PPROF_TMPDIR=str(tmp_path))
    done = subprocess.run(["go", "tool", "pprof", "-symbolize=none", "-tagfocus=context=let-in",
                           "-sample_index=samples", "-traces", out], capture_output=True, text=True, timeout=120,
                          env=env)
    assert done.returncode == 0, done.stderr
    blocks = [b for b in done.stdout.split("-----------+")[1:] if b.strip("- \n")]
    assert blocks and all("let-in" in b for b in blocks) and any("burn_irqsoff_slice" in b for b in blocks), \
        done.stdout
    assert sum(int(re.search(r"(?m)^\s+(\d+)\s+\S", b.split("context:")[1].split("\n", 1)[1]).group(1))
               for b in blocks) == len(let_in), done.stdout
