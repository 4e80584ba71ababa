"""The PMU decision in QEMU (issue 4, "Integration in QEMU"): TCG has no counters, so on every CPU model the
profiler must say why it samples on the tick, in `lscpu` and in the profile header; with `pmu=claim-intel` /
`pmu=claim-amd` CPUID claims a PMU but the MSRs swallow writes, so the probe must conclude "does not count" and
`profile` must still work on the tick; `pmu=off` and an unknown `pmu=` value fall back to the tick; and a genuine
NMI (the QEMU monitor's `nmi`, sent to every CPU) must panic with a backtrace, idle or while profiling — a
profiler that swallows NMIs it did not cause hides real faults.

Each test boots its own kernel (its own CPU model or command line) through kprof_factory.
"""

import re

import pytest

from kprof_qemu import KprofError, nm_symbols

PROFILE_TIMEOUT = 30.0    # `profile 300 all 2` echo to prompt under TCG on a loaded machine
PANIC_TIMEOUT = 15.0      # monitor `nmi` to the panic line
RX_WINDOW = re.compile(r"(?m)^profiled (\d+) ms$")
# The source is "tick at N Hz (reason)" here: QEMU's TCG offers no counter.
RX_HEADER = re.compile(r"(?m)^(\d+) samples on (\d+) cpus, (\d+) dropped, source (\S+)(?: at \d+ Hz)?(?: \((.*)\))?$")
RX_LEAF = re.compile(r"(?m)^\d+\.\d% (\d+) \S+(?: \[[a-z0-9., ]+\])?$")
RX_LSCPU = re.compile(r"^([a-z][a-z ]*):\s+(.*)$")
RX_FRAME = re.compile(r"^ {8}<- (?:(\S+)\+0x([0-9a-f]+)|0x[0-9a-f]+)$")
NMI_PANIC = "panic: NMI received: a genuine NMI, not claimed by any kprof source"


def lscpu(k):
    """{key: [values]} from `lscpu` (perfmon may appear more than once)."""
    out = k.cmd("lscpu")
    table = {}
    for line in out.split("\n"):
        if not line.strip():
            continue
        m = RX_LSCPU.match(line)
        if not m:
            raise KprofError("lscpu line %r is not `key: value`; lscpu said:\n%s" % (line, out))
        table.setdefault(m.group(1), []).append(m.group(2).strip())
    for key in ("vendor", "hypervisor", "probe", "profile"):
        if len(table.get(key, [])) != 1:
            raise KprofError("lscpu has %d `%s:` lines; it said:\n%s" % (len(table.get(key, [])), key, out))
    return table, out


def one(table, key):
    return table[key][0]


def profile(k, line="profile 300 all 2"):
    """Runs a profile and returns (samples, cpus, dropped, source, reason, out); checks the report has
    samples and leaf lines that add up."""
    out = k.cmd(line, timeout=PROFILE_TIMEOUT)
    assert RX_WINDOW.search(out), "%r printed no `profiled N ms` line:\n%s" % (line, out)
    m = RX_HEADER.search(out)
    assert m, "%r printed no header line:\n%s" % (line, out)
    samples, cpus, dropped = int(m.group(1)), int(m.group(2)), int(m.group(3))
    source, reason = m.group(4), m.group(5)
    assert samples > 0, "the profile has no samples:\n%s" % out
    leaves = [int(c) for c in RX_LEAF.findall(out)]
    assert leaves, "the profile has no leaf lines:\n%s" % out
    assert sum(leaves) <= samples, "leaf counts %s add up to more than %d samples:\n%s" % (leaves, samples, out)
    return samples, cpus, dropped, source, reason, out


def pmu_boot_lines(k):
    return [l for l in k.boot_log.replace("\r", "").split("\n") if "pmu" in l]


def assert_not_probed_tick_only(table, out):
    probe = one(table, "probe")
    m = re.fullmatch(r"not probed \((.+)\)", probe)
    assert m, "lscpu's probe line is %r, expected `not probed (<why>)`:\n%s" % (probe, out)
    assert one(table, "profile") == "tick only", "lscpu does not say tick only:\n%s" % out
    return m.group(1)


def test_lscpu_on_max_amd_without_pmu_says_tick_only_and_why(kprof_factory):
    k = kprof_factory(extra_args=["-cpu", "max"])
    boot = pmu_boot_lines(k)
    assert any(l.startswith("pmu: no usable PMU: ") for l in boot), "boot log pmu lines: %s" % boot
    table, out = lscpu(k)
    assert one(table, "vendor") == "AuthenticAMD", out
    assert one(table, "hypervisor") == "TCGTCGTCGTCG", out
    perfmon = table.get("perfmon", [])
    assert "PerfCtrExtCore no" in perfmon, "lscpu does not say PerfCtrExtCore no:\n%s" % out
    v2 = [p for p in perfmon if p.startswith("PerfMonV2")]
    assert len(v2) == 1 and v2[0].startswith("PerfMonV2 not reported ("), \
        "lscpu believes PerfMonV2 on -cpu max (or says nothing of it):\n%s" % out
    assert re.search(r"maximum extended leaf 0x[0-9a-f]+ < 0x80000022", v2[0]), out
    why = assert_not_probed_tick_only(table, out)
    assert "PerfCtrExtCore" in why, "the reason does not name PerfCtrExtCore: %r" % why

    samples, cpus, dropped, source, reason, rep = profile(k)
    assert source == "tick", "source %r on a CPU without a PMU:\n%s" % (source, rep)
    assert reason == why, "the header's reason %r differs from lscpu's %r" % (reason, why)


def test_lscpu_on_skylake_intel_without_pmu_says_tick_only_and_why(kprof_factory):
    k = kprof_factory(extra_args=["-cpu", "Skylake-Client"])
    boot = pmu_boot_lines(k)
    assert any(l.startswith("pmu: no PMU: ") for l in boot), "boot log pmu lines: %s" % boot
    table, out = lscpu(k)
    assert one(table, "vendor") == "GenuineIntel", out
    assert one(table, "hypervisor") == "TCGTCGTCGTCG", out
    perfmon = table.get("perfmon", [])
    assert perfmon and all(p.startswith("none") for p in perfmon) and "0xA" in perfmon[0], \
        "lscpu's perfmon lines on a CPU whose leaf 0xA is version 0: %s\n%s" % (perfmon, out)
    why = assert_not_probed_tick_only(table, out)
    assert "0xA" in why and "version 0" in why, "the reason does not name leaf 0xA version 0: %r" % why

    samples, cpus, dropped, source, reason, rep = profile(k)
    assert source == "tick", "source %r on a CPU without a PMU:\n%s" % (source, rep)
    assert reason == why, "the header's reason %r differs from lscpu's %r" % (reason, why)


@pytest.mark.parametrize("mode,cpu", [("claim-intel", "Skylake-Client"), ("claim-amd", "max")])
def test_claimed_pmu_that_does_not_count_falls_back_to_the_tick(kprof_factory, mode, cpu):
    k = kprof_factory(cmdline="pmu=%s" % mode, extra_args=["-cpu", cpu])
    boot = pmu_boot_lines(k)
    assert any("claimed under pmu=%s" % mode in l for l in boot), "boot log pmu lines: %s" % boot

    samples, cpus, dropped, source, reason, rep = profile(k)
    assert source == "tick", "source %r: a counter that swallows writes was used:\n%s" % (source, rep)
    assert reason and "does not count" in reason, "the header's reason is %r:\n%s" % (reason, rep)
    assert "pmu=%s" % mode in reason, "the header's reason does not name pmu=%s: %r" % (mode, reason)
    assert cpus == 4, "samples on %d cpus, 4 expected:\n%s" % (cpus, rep)

    table, out = lscpu(k)
    assert one(table, "pmu mode").startswith(mode), "lscpu's pmu mode:\n%s" % out
    assert one(table, "probe").startswith("does not count"), "lscpu's probe line after profile:\n%s" % out
    assert one(table, "profile") == "tick only", "lscpu does not say tick only:\n%s" % out
    # A second profile keeps the verdict (the probe's result sticks, no counter comes alive).
    samples2, _, _, source2, reason2, rep2 = profile(k)
    assert (source2, reason2) == (source, reason), "second profile header changed:\n%s" % rep2


def test_pmu_off_profiles_on_the_tick(kprof_factory):
    k = kprof_factory(cmdline="pmu=off")
    boot = pmu_boot_lines(k)
    assert any(l.startswith("pmu: off") for l in boot), "boot log pmu lines: %s" % boot
    table, out = lscpu(k)
    assert one(table, "pmu mode") == "off", out
    why = assert_not_probed_tick_only(table, out)
    assert "pmu=off" in why, "the reason does not name pmu=off: %r" % why
    samples, cpus, dropped, source, reason, rep = profile(k)
    assert source == "tick" and reason and "pmu=off" in reason, "header under pmu=off:\n%s" % rep


def test_unknown_pmu_value_is_reported_and_profiles_on_the_tick(kprof_factory):
    k = kprof_factory(cmdline="pmu=bogus")
    boot = pmu_boot_lines(k)
    warn = [l for l in boot if "pmu=bogus" in l]
    assert len(warn) == 1 and "unknown" in warn[0], "the boot log does not report pmu=bogus: %s" % boot
    assert any(l.startswith("pmu: no usable PMU: ") for l in boot), "boot log pmu lines: %s" % boot
    samples, cpus, dropped, source, reason, rep = profile(k)
    assert source == "tick" and reason, "header under pmu=bogus:\n%s" % rep


def assert_nmi_panic(k, during=None):
    """After monitor `nmi`: exactly one NMI panic line, symbolised backtrace lines, then silence; during, when
    given, is a regex that must not appear before the panic (the interrupted command finishing)."""
    alt = NMI_PANIC if during is None else "%s|%s" % (re.escape(NMI_PANIC), during)
    m = k.expect(r"(?m)^(?:%s)" % alt, PANIC_TIMEOUT, what="the NMI panic line")
    assert m.group(0) == NMI_PANIC, "%r came before any NMI panic: the NMI was swallowed" % m.group(0)
    k.expect(r"(?m)^ {8}<- \S+\+0x[0-9a-f]+\n", PANIC_TIMEOUT, what="a symbolised backtrace line")
    k.quiet_for(1.0)  # the rest of the backtrace; that it then stays silent is checked below
    text = k.log.replace("\r", "")
    assert text.count("panic:") == 1, "more than one panic line:\n%s" % text[text.index("panic:"):]
    tail = text[text.index(NMI_PANIC):]
    frames = [l for l in tail.split("\n") if "<- " in l]
    syms = nm_symbols()
    named = []
    for line in frames:
        f = RX_FRAME.match(line)
        assert f, "backtrace line %r is not `        <- Symbol+0xoff`" % line
        if f.group(1):
            assert f.group(1) in syms, "backtrace names %r, not a function in build/kprof.elf" % f.group(1)
            named.append(f.group(1))
    assert named, "no symbolised backtrace lines after the panic:\n%s" % tail
    if during is not None:
        assert not re.search(during, tail), "the interrupted command finished after the panic:\n%s" % tail
    k.send("help\r")
    assert k.quiet_for(1.5), "the kernel still answered after the panic:\n%s" % k._tail()
    assert k.alive(), "QEMU exited after the panic (a stopped kernel halts, it does not reset)"


def test_monitor_nmi_while_idle_panics_with_backtrace(kprof_factory):
    k = kprof_factory(monitor=True)
    assert k.cmd("uptime").startswith("up "), "the shell does not answer"
    k.monitor("nmi")
    assert_nmi_panic(k)


def test_monitor_nmi_while_profiling_panics_with_backtrace(kprof_factory):
    k = kprof_factory(monitor=True)
    k.send_line("profile 2000")
    k.expect(r"(?m)^[^\n]*profile 2000\n", what="the echo of profile 2000")
    k.monitor("nmi")
    assert_nmi_panic(k, during=r"profiled \d+ ms|\d+ samples on \d+ cpus")
