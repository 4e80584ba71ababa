"""The clock's reference on a PC without a PIT (issue 26): the TSC and the LAPIC timer are calibrated over a window
of PIT channel 2, and where no PIT drives port 0x61's OUT2 -- QEMU's `-M q35,pit=off`, a board with the 8254's
clock gated off -- over the ACPI PM timer the FADT names. Before, an OUT2 that read high at once made a window of
nothing: the kernel booted with a clock 60 times too fast (`boot 117366 ms` in a boot of 2 s) and a boot secret
of 16 bits. Now the boot log says which reference was used and why, the guest's uptime keeps pace with the host's
clock (test_boot's check, which bounds the guest's reading by each command's round trip), and the entropy the
PIT's one-shots gave comes from PM timer windows instead.
"""

import re

import pytest

from kprof_qemu import assert_uptime_keeps_pace, booted

# Kernels this module boots (conftest.py fails a boot past BOOTS), by the test that boots them -- a module kernel
# counts for the first test that uses it, a test named alone needs a fresh one:
# test_with_a_pit_the_tsc_is_measured_against_it 1,
# test_without_a_pit_the_acpi_pm_timer_is_the_reference_and_the_log_says_why 1.
BOOTS = 2

CPUS = 4  # as test_boot.py's kernel

RX_TIME = re.compile(r"(?m)^(?:warning: )?time: (?P<why>.*?)(?:: )?TSC (?P<mhz>\d+) MHz, measured against (?P<ref>[^\n]+)$")
RX_ENTROPY_BITS = re.compile(r"about (\d+) bits")


def time_line(k):
    m = RX_TIME.search(k.boot_log.replace("\r", ""))
    assert m, "no time: line in the boot log:\n%s" % k.boot_log
    return m


@pytest.fixture(scope="module")
def no_pit(request):
    from conftest import _new_kernel
    yield from booted(_new_kernel(request.node.name, smp=CPUS, udp=True, extra_args=["-M", "q35,pit=off"]))


def test_with_a_pit_the_tsc_is_measured_against_it(kernel):
    m = time_line(kernel)
    assert m.group("ref") == "PIT channel 2" and m.group("why") == "", m.group(0)
    assert int(m.group("mhz")) > 0


def test_without_a_pit_the_acpi_pm_timer_is_the_reference_and_the_log_says_why(no_pit):
    m = time_line(no_pit)
    assert m.group(0).startswith("warning: time: PIT channel 2 is not there (OUT2 is high as it is armed)"), m.group(0)
    assert m.group("ref") == "the ACPI PM timer", m.group(0)


def test_without_a_pit_uptime_keeps_pace_with_the_host(no_pit):
    assert_uptime_keeps_pace(no_pit, CPUS)


def test_without_a_pit_the_boot_secret_still_gets_timing_entropy(no_pit):
    # A NIC draws the boot secret (udp=True). Without RDRAND (TCG's default CPU) it comes from timings; with the
    # PIT's readings lost and nothing in their place it was 16 bits. PM timer windows stand in for the one-shots.
    line = next((l for l in no_pit.boot_log.split("\n") if "entropy:" in l), "")
    m = RX_ENTROPY_BITS.search(line)
    if not m:
        pytest.skip("this CPU has RDRAND/RDSEED: the timing sources are not the secret's: %r" % line)
    assert int(m.group(1)) >= 64, line
