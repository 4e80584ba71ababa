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

from kprof_pmu import assert_nmi_panic, lscpu, one, profile

# Kernels this module boots (conftest.py fails a boot past BOOTS), by the test that boots them -- a module kernel
# counts for the first test that uses it, a test named alone needs a fresh one:
# test_claimed_pmu_that_does_not_count_falls_back_to_the_tick[*] 2,
# test_lscpu_on_max_amd_without_pmu_says_tick_only_and_why 1,
# test_lscpu_on_skylake_intel_without_pmu_says_tick_only_and_why 1,
# test_monitor_nmi_while_idle_panics_with_backtrace 1, test_monitor_nmi_while_profiling_panics_with_backtrace 1,
# test_pmu_off_profiles_on_the_tick 1, test_unknown_pmu_value_is_reported_and_profiles_on_the_tick 1.
BOOTS = 8


def pmu_boot_lines(k):
    return [l for l in k.boot_log.replace("\r", "").split("\n") if "pmu" in l]


def assert_not_probed_tick_only(table, out):
    probe = one(table, "probe")
    m = re.fullmatch(r"not probed \((.+)\)", probe)
    assert m, "lscpu's probe line is %r, expected `not probed (<why>)`:\n%s" % (probe, out)
    assert one(table, "profile") == "tick only", "lscpu does not say tick only:\n%s" % out
    return m.group(1)


def boot_without_pmu(kprof_factory, cpu, boot_line, vendor):
    """Boots on `-cpu cpu`; checks a boot-log pmu line starts with boot_line and lscpu names vendor and TCG; returns
    (k, lscpu's table, its text)."""
    k = kprof_factory(extra_args=["-cpu", cpu])
    boot = pmu_boot_lines(k)
    assert any(l.startswith(boot_line) for l in boot), "-cpu %s: boot log pmu lines: %s" % (cpu, boot)
    table, out = lscpu(k)
    assert one(table, "vendor") == vendor, "-cpu %s: lscpu's vendor is not %s:\n%s" % (cpu, vendor, out)
    assert one(table, "hypervisor") == "TCGTCGTCGTCG", "-cpu %s: lscpu's hypervisor is not TCG's:\n%s" % (cpu, out)
    return k, table, out


def assert_profiles_on_the_tick_for(k, cpu, why):
    """A profile on `-cpu cpu` samples on the tick, its header giving lscpu's reason why."""
    samples, cpus, dropped, source, reason, rep = profile(k)
    assert source == "tick", "-cpu %s: source %r on a CPU without a PMU:\n%s" % (cpu, source, rep)
    assert reason == why, "-cpu %s: the header's reason %r differs from lscpu's %r" % (cpu, reason, why)


def test_lscpu_on_max_amd_without_pmu_says_tick_only_and_why(kprof_factory):
    k, table, out = boot_without_pmu(kprof_factory, "max", "pmu: no usable PMU: ", "AuthenticAMD")
    perfmon = table.get("perfmon", [])
    assert "PerfCtrExtCore no" in perfmon, "lscpu does not say PerfCtrExtCore no:\n%s" % out
    v2 = [p for p in perfmon if p.startswith("PerfMonV2")]
    assert len(v2) == 1 and v2[0].startswith("PerfMonV2 not reported ("), \
        "lscpu believes PerfMonV2 on -cpu max (or says nothing of it):\n%s" % out
    assert re.search(r"maximum extended leaf 0x[0-9a-f]+ < 0x80000022", v2[0]), out
    why = assert_not_probed_tick_only(table, out)
    assert "PerfCtrExtCore" in why, "the reason does not name PerfCtrExtCore: %r" % why
    assert_profiles_on_the_tick_for(k, "max", why)


def test_lscpu_on_skylake_intel_without_pmu_says_tick_only_and_why(kprof_factory):
    k, table, out = boot_without_pmu(kprof_factory, "Skylake-Client", "pmu: no PMU: ", "GenuineIntel")
    perfmon = table.get("perfmon", [])
    assert perfmon and all(p.startswith("none") for p in perfmon) and "0xA" in perfmon[0], \
        "lscpu's perfmon lines on a CPU whose leaf 0xA is version 0: %s\n%s" % (perfmon, out)
    why = assert_not_probed_tick_only(table, out)
    assert "0xA" in why and "version 0" in why, "the reason does not name leaf 0xA version 0: %r" % why
    assert_profiles_on_the_tick_for(k, "Skylake-Client", why)


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
