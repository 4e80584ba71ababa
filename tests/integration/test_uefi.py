"""The same ISO booted by UEFI firmware (Debian's OVMF, Kprof(firmware="uefi")) instead of SeaBIOS: GRUB-EFI
loads the kernel through multiboot2 and exits boot services; the kernel must say it was booted by UEFI, keep
off the VGA text screen that is not there (the console is serial only), and everything else must work as
under the BIOS -- all 4 CPUs (the AP trampoline in low memory the EFI map calls free), the calibrated tick and
`profile`, virtio-net and the UDP shell through QEMU's hostfwd, the gdb stub on COM2, ACPI poweroff.

One kernel for the whole module (OVMF adds seconds to every boot under TCG); the poweroff test ends it, so it
comes last. The BIOS boot's own account (`boot: BIOS ...`, VGA text) is checked in test_boot.py.
"""

import re

import pytest

from kprof_qemu import Kprof, cpus_table, poll
from test_gdb import assert_running, run_gdb, threads
from test_net import DHCP_ADDRESS, net_status, udp_cmd, wait_dhcp
from test_profile import parse_report

CPUS = 4
RX_BOOT = re.compile(r"(?m)^boot: (?P<firmware>UEFI \(64-bit\)|BIOS), (?P<loader>[^,\n]+), (?P<console>[^\n]*)$")


@pytest.fixture(scope="module")
def uefi(request):
    """kprof under OVMF: 4 CPUs, 256 MiB, the UDP shell forwarded from a free port, COM2 for gdb."""
    k = Kprof(smp=CPUS, mem=256, firmware="uefi", udp=True, gdb=True, name=request.node.name + "-uefi")
    try:
        k.boot()
        yield k
    finally:
        k.kill()


def test_uefi_boot_reaches_ready_with_4_cpus_and_says_uefi_serial_console(uefi):
    assert uefi.cpus == CPUS, "ready line %r does not say %d cpus" % (uefi.ready_line, CPUS)
    log = uefi.boot_log
    assert "panic" not in log.lower(), "the boot log mentions a panic:\n%s" % log
    assert "smp: %d cpus online" % CPUS in log, "not every CPU started under UEFI:\n%s" % log
    m = RX_BOOT.search(log)
    assert m, "no `boot:` line in the boot log:\n%s" % log
    assert m.group("firmware") == "UEFI (64-bit)", "booted by OVMF, but the kernel says %r" % m.group(0)
    assert m.group("loader").startswith("GRUB"), "the loader is not GRUB: %r" % m.group(0)
    # No VGA text mode under UEFI: the console is COM1 alone, and the kernel says why.
    assert m.group("console").startswith("console serial only (no VGA text mode"), \
        "the console under UEFI should be serial only: %r" % m.group(0)
    # lscpu gives the same account.
    lscpu = uefi.cmd("lscpu")
    assert "boot: " + m.group(0)[len("boot: "):] in lscpu.split("\n"), "lscpu lacks the boot line:\n%s" % lscpu
    print("UEFI boot to ready: %.2f s" % uefi.boot_seconds)


def test_uefi_help_and_cpus_all_online_and_ticking(uefi):
    names = [l.split()[0] for l in uefi.cmd("help").split("\n") if l.strip()]
    for want in ("help", "profile", "lscpu", "cpus", "net", "poweroff"):
        assert want in names, "help does not list %s: %s" % (want, names)
    first = cpus_table(uefi)
    assert sorted(first) == list(range(CPUS)), "cpus lists %s" % sorted(first)
    assert all(row[1] == "yes" for row in first.values()), "not every CPU online: %s" % first
    assert len({row[0] for row in first.values()}) == CPUS, "APIC ids not distinct: %s" % first
    poll("every CPU's TICKS rising", lambda: all(row[2] > first[c][2] for c, row in cpus_table(uefi).items()))


def test_uefi_profile_500_reports_samples(uefi):
    # The tick was calibrated against the PIT under OVMF too: parse_report checks the window and that the
    # sample count fits 100 Hz per CPU.
    r = parse_report(uefi.cmd("profile 500"), 500, 8)
    assert r.samples > 0, "profile 500 under UEFI has no samples"


def test_uefi_udp_shell_answers_over_virtio_net(uefi):
    wait_dhcp(uefi)
    out = udp_cmd(uefi.udp_port, "uptime")
    assert re.fullmatch(r"up \d+\.\d{3} s", out), "uptime over UDP said %r" % out
    n = net_status(uefi)
    assert n["address"] == DHCP_ADDRESS and n["rx_packets"] > 0 and n["tx_packets"] > 0, n
    assert n["requests"] >= 1, "the UDP shell counted no request: %s" % n


def test_uefi_gdb_stub_on_com2_stops_every_cpu_and_detaches(uefi):
    text = run_gdb(uefi, ["info threads", "bt", "detach"])
    assert [t[1] for t in threads(text)] == list(range(CPUS)), "info threads under UEFI:\n%s" % text
    assert re.search(r"(?m)^#0 +(0x[0-9a-f]+ in )?[A-Za-z_]\w* \(", text), "bt is not symbolised:\n%s" % text
    assert "detached" in text, text
    assert_running(uefi)


def test_uefi_poweroff_ends_qemu(uefi):
    """Last: it ends the module's kernel."""
    uefi.send_line("poweroff")
    uefi.expect(r"(?m)^poweroff: ACPI S5\n", what="the poweroff line")
    after = uefi.expect_eof(timeout=15)
    assert "panic" not in after.lower(), "output after poweroff:\n%s" % after
    status = uefi.wait_exit(timeout=10)
    assert status == 0, "QEMU exit status %s after poweroff under UEFI" % status
