"""More CPUs than a laptop has (issue 14): the kernel starts up to MAX_CPUS (64), sizes its per-CPU state, rings
and report for them, and says in the boot log how many CPUs the firmware listed, how many it started and which it
left in their reset state, and why. The per-CPU line of a report still fits a screen at 64 CPUs.
"""

import re

from test_profile import parse_report

MAX_CPUS = 64


def smp_lines(k):
    return [l for l in k.boot_log.replace("\r", "").split("\n") if l.startswith(("smp:", "warning: smp:"))]


def test_64_cpus_all_start_and_all_are_profiled(kprof_factory):
    k = kprof_factory(smp=64, mem=512)
    assert k.cpus == 64, k.ready_line
    assert "smp: the firmware listed 64 cpus; all 64 started" in smp_lines(k), smp_lines(k)
    r = parse_report(k.cmd("profile 500 all 2", timeout=60), 500, 2, cpus=64)
    assert r.cpus == 64 and sorted(r.per_cpu) == list(range(64)), r.text
    assert all(n > 0 for n, _ in r.per_cpu.values()), r.text
    per_cpu_lines = [l for l in r.text.split("\n") if l.startswith(("per cpu:", "         "))]
    assert 1 < len(per_cpu_lines) <= 6 and all(len(l) <= 100 for l in per_cpu_lines), r.text


def test_80_cpus_say_which_16_were_left_and_why(kprof_factory):
    k = kprof_factory(smp=80, mem=512)
    assert k.cpus == MAX_CPUS, k.ready_line
    lines = smp_lines(k)
    assert "smp: the firmware listed 80 cpus; 64 started, 0 did not start, 16 left over MAX_CPUS (64)" in lines, lines
    assert "warning: smp: left in their reset state: APIC ids 64-79 (this kernel starts at most MAX_CPUS=64 cpus)" \
        in lines, lines
    assert k.cmd("uptime").startswith("up ")
