"""kprof under this machine's KVM (issue 14): `-accel kvm -cpu host,-arch-capabilities`, as `make run ACCEL=kvm`
boots it. On these machines /dev/kvm is PVM -- software virtualisation with shadow paging that runs the guest
deprivileged, no virtual PMU -- which cannot emulate INT n in long mode: the kernel's yield builds its interrupt
frame by hand instead (arch/x86_64/cpu_inline.h). One boot (SeaBIOS and GRUB take about a minute under PVM),
then: ready, a profile of a known load (its samples spread over the loop body rather than one offset a
translated block; guest code is slow here -- about 0.5 M instructions a second measured under PVM, so nothing
that needs CPU, such as a busy stream, is asserted), the UDP shell, gdb on COM2, and poweroff. Where /dev/kvm is
not usable every test here is skipped, saying why -- the one skip the suite accepts (conftest.KVM_SKIP).
"""

import re

import pytest

from conftest import KVM_SKIP
from kprof_qemu import kvm_usable
from test_profile import parse_report, burn_pids, wait_no_burn
from test_net import udp_cmd, wait_dhcp
from test_gdb import run_gdb, threads

KVM_BOOT_TIMEOUT = 300  # SeaBIOS and GRUB are emulated slowly under PVM: about 60 s here

why_not = kvm_usable()
pytestmark = pytest.mark.skipif(why_not is not None, reason=KVM_SKIP + (why_not or ""))


@pytest.fixture(scope="module")
def kvm_kernel(request):
    from conftest import _new_kernel
    k = _new_kernel(request.node.name, smp=2, mem=256, accel="kvm", udp=True, gdb=True)
    try:
        k.boot(timeout=KVM_BOOT_TIMEOUT)
        wait_dhcp(k)  # its log lines would otherwise land inside a report
        yield k
    finally:
        k.kill()


def test_boots_to_ready_with_every_cpu(kvm_kernel):
    assert kvm_kernel.cpus == 2, kvm_kernel.ready_line
    assert "smp: 2 cpus online" in kvm_kernel.boot_log, kvm_kernel.boot_log


def test_profile_of_burn(kvm_kernel):
    wait_no_burn(kvm_kernel)
    # long enough to outlast the console's round trips, which are slow here (every byte is an exit)
    assert len(burn_pids(kvm_kernel.cmd("burn 6000 2"))) == 2
    r = parse_report(kvm_kernel.cmd("profile 1000 all 3", timeout=30), 1000, 3)
    assert r.samples > 100, r.text
    hot = r.chains[0]
    assert hot.leaf == "burn_inner" and hot.caller_names()[:3] == ["burn_middle", "burn_outer", "burn_task"], r.text
    # native speed: the samples spread over the loop body, where TCG puts them all on one block's first byte
    assert hot.lo < hot.hi, r.text
    wait_no_burn(kvm_kernel)


def test_yield_is_survived_many_times(kvm_kernel):
    # every sleep and every blocked wait yields: a few hundred profile windows' worth of them
    for _ in range(20):
        assert parse_report(kvm_kernel.cmd("profile 20", timeout=30), 20, 8).samples >= 0


def test_udp_shell_answers(kvm_kernel):
    assert udp_cmd(kvm_kernel.udp_port, "uptime", timeout=20).startswith("up ")


def test_gdb_sees_both_cpus_and_the_machine_goes_on(kvm_kernel):
    out = run_gdb(kvm_kernel, ["info threads"])
    assert len(threads(out)) == 2, out
    assert kvm_kernel.cmd("uptime").startswith("up ")


def test_poweroff(kvm_kernel):
    kvm_kernel.send_line("poweroff")
    kvm_kernel.expect(r"(?m)^poweroff: ACPI S5\n", what="the poweroff line")
    after = kvm_kernel.expect_eof(timeout=30)
    assert "panic" not in after.lower(), "output after poweroff:\n%s" % after
    assert kvm_kernel.wait_exit(timeout=30) == 0
