"""The counter's path as QEMU can run it (issue 13): TCG has no PMU, so the tick carries it, raised to the
counter's rate with `profile.hz=1000` -- the same drain, rings and report the counter feeds.

- A 2000 ms profile of 4 busy CPUs at 2 kHz (twice the counter's rate) with rings of 512 records
  (`profile.ring_records=512`, a test knob, so that a host that gives QEMU only a seventh of its ticks still
  fills more than a ring) samples every tick its CPUs took, reports more samples than the rings hold (every CPU
  over 512) and drops none: the profile command drains the rings while its window runs.
- `burn MS N irqsoff` holds the tick off on its CPUs: the report says for how long (most of the window) and
  where it was let in (irq_restore, just after its sti), with those ticks' chain marked, apart from the rest.
- `profile.hz=` takes TICK_HZ_MIN..TICK_HZ_MAX; anything else is one warning line at boot and the default rate.
- `burn` refuses a fourth word that is not `irqsoff`.

How many of the 8000 ticks TCG delivers to 4 vCPUs over this machine's 2 cores is the host's doing: 70-77 %
when issue 13 was written (hence its "at least 5,000"), 55-65 % on quieter days since (4790-5263 samples). So
the drain is judged against the ticks the kernel's own counters (`cpus`) say each CPU took around the window:
a sample for every one of them but those the moments outside the window could hold (kernel time, `uptime`
around the counters, less the window the report states), none dropped, and more than a ring holds on every CPU. A run whose CPUs the host starved below a ring's worth is tried again, as kprof_qemu.unstarved
does. CI's runs beside two busy loops gave some CPUs 750-900 of the 4000 ticks: under the 1024 of a full-size
ring on all three attempts, hence smaller rings (not too small: a ring must still outlast a drain whose own CPU
the host took away for a while, 256 ms at 2 kHz), and five attempts.
"""

import re

import pytest

from kprof_qemu import cpu_ticks, unstarved, uptime
from kprof_report import burn_pids, parse_report, wait_no_burn

# Kernels this module boots (conftest.py fails a boot past BOOTS), by the test that boots them -- a module kernel
# counts for the first test that uses it, a test named alone needs a fresh one:
# test_2000_ms_on_4_busy_cpus_at_2khz_drops_nothing 1, test_bad_profile_hz_is_one_warning_and_the_default[*] 6,
# test_boot_states_the_tick_rate 1.
BOOTS = 8

HZ = 1000
RING_RECORDS = 512  # profile.ring_records= on the drain test's kernel
ATTEMPTS = 3
DRAIN_ATTEMPTS = 5  # the drain test's: a quarter of a loaded host's attempts starve it
# The drain test's rate: a window is at most 2000 ms (PROFILE_MS_MAX), and at 1 kHz a CPU must then be given
# more than half its ticks to outrun its ring -- CI's loaded runs gave 50-60 %, starving all three attempts.
# At 2 kHz a quarter of them is enough.
DRAIN_HZ = 2000


def tick_kernel(request, hz, extra=""):
    """A 4-CPU kernel booted with profile.hz=hz (and extra) for the module's tests, killed after them."""
    from conftest import booted_kernel
    yield from booted_kernel(request, cmdline=("profile.hz=%d %s" % (hz, extra)).strip())


@pytest.fixture(scope="module")
def fast_tick(request):
    yield from tick_kernel(request, HZ)


@pytest.fixture(scope="module")
def faster_tick(request):
    yield from tick_kernel(request, DRAIN_HZ, "profile.ring_records=%d" % RING_RECORDS)


def profile_at(k, line, ms, chains):
    out = k.cmd(line, timeout=60)
    return parse_report(out, ms, chains)


def retried(k, what, attempt):
    """attempt()'s result, tried again only when the host starved QEMU of its 1 kHz ticks meanwhile."""
    return unstarved(k, attempt, what, hz=HZ, attempts=ATTEMPTS)


def test_boot_states_the_tick_rate(fast_tick):
    assert "profile: the tick samples at 1000 Hz (profile.hz=)" in fast_tick.boot_log, fast_tick.boot_log


def test_boot_states_the_ring_size(faster_tick):
    assert "profile: each CPU's ring holds 512 records (profile.ring_records=, a test knob)" in faster_tick.boot_log, \
        faster_tick.boot_log


def test_2000_ms_on_4_busy_cpus_at_2khz_drops_nothing(faster_tick):
    def attempt():
        wait_no_burn(faster_tick)
        assert len(burn_pids(faster_tick.cmd("burn 3000 4"))) == 4
        t0 = uptime(faster_tick)
        _, before = cpu_ticks(faster_tick)
        r = profile_at(faster_tick, "profile 2000 all 3", 2000, 3)
        _, after = cpu_ticks(faster_tick)
        outside_ms = max(0, round((uptime(faster_tick) - t0) * 1000) + 1 - r.window)
        assert r.hz == DRAIN_HZ, r.text
        assert r.dropped == 0, r.text
        took = {cpu: after[cpu] - before[cpu] for cpu in range(4)}
        # the ticks a CPU took in the window: those around it, less the most the moments outside it (kernel time)
        # can hold at DRAIN_HZ, less one at each end for the arming and the letting go
        at_least = {cpu: took[cpu] - outside_ms * DRAIN_HZ // 1000 - 2 for cpu in range(4)}
        print("samples per CPU %s of the ticks each took %s, at least %s in the window (%d ms outside it)"
              % ({c: n for c, (n, _) in r.per_cpu.items()}, took, at_least, outside_ms))
        for cpu in range(4):
            assert r.per_cpu[cpu][0] >= at_least[cpu], "cpu %d: %d samples, of the %d ticks it took at least %d in " \
                "the window:\n%s" % (cpu, r.per_cpu[cpu][0], took[cpu], at_least[cpu], r.text)
            assert r.per_cpu[cpu][0] > RING_RECORDS, "cpu %d took %d samples, its ring holds %d:\n%s" \
                % (cpu, r.per_cpu[cpu][0], RING_RECORDS, r.text)
        assert r.chains[0].leaf == "burn_inner", r.text
        return r
    unstarved(faster_tick, attempt, "profile 2000 all 3 under burn 3000 4", hz=DRAIN_HZ, attempts=DRAIN_ATTEMPTS)


def test_irqsoff_burn_holds_the_tick_off_and_says_where_it_was_let_in(fast_tick):
    def attempt():
        wait_no_burn(fast_tick)
        out = fast_tick.cmd("burn 3000 2 irqsoff")
        m = re.fullmatch(r"burn: started 2 tasks for 3000 ms with interrupts off \(pids (\d+) (\d+)\)", out)
        assert m, out
        r = profile_at(fast_tick, "profile 2000 all 3", 2000, 3)
        # two CPUs ran the burn, interrupts off for most of every 20 ms slice
        held = {cpu: pc for cpu, (_, pc) in r.held_off.items() if pc >= 50}
        assert len(held) == 2, "held-off figures %s, want two CPUs held off most of the window:\n%s" \
            % (r.held_off, r.text)
        assert r.let_in_at == "irq_restore", r.text
        marked = [c for c in r.chains if "let in after" in (c.mark or "")]
        assert marked and marked[0].callers and "burn_irqsoff_slice" in marked[0].caller_names(), r.text
        return r
    retried(fast_tick, "profile 2000 under burn 3000 2 irqsoff", attempt)
    # the console kept answering meanwhile, and does now
    assert fast_tick.cmd("uptime").startswith("up ")


def test_burn_refuses_a_bad_fourth_word(fast_tick):
    wait_no_burn(fast_tick)
    usage = "usage: burn [MS [N [irqsoff|spans]]] (MS 1..60000, N 1..16) | burn spans [FROM] | burn stop"
    assert fast_tick.cmd("burn 100 1 irqson") == usage
    assert fast_tick.cmd("burn 100 1 irqsoff extra") == usage
    assert "running" not in fast_tick.cmd("burn")


@pytest.mark.parametrize("value", ["0", "9", "4001", "fast", "1000x", ""])
def test_bad_profile_hz_is_one_warning_and_the_default(kprof_factory, value):
    k = kprof_factory(cmdline="profile.hz=%s" % value)
    warned = [l for l in k.boot_log.replace("\r", "").split("\n") if "profile.hz" in l]
    assert warned == ["warning: profile: profile.hz=%s is not a rate 10..4000 Hz; the tick stays at 100 Hz" % value], \
        k.boot_log
    r = unstarved(k, lambda: parse_report(k.cmd("profile 200", timeout=30), 200, 8), "profile 200")
    assert r.hz == 100, r.text
