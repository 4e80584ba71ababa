"""Message Signalled Interrupts (hal/irq.h irq_attach_msi; arch/x86_64/pci.c pci_msi_enable, pci_msix_enable):
on q35, whose default NIC (the e1000e, an 82574L) and an xHCI share INTx line 11, each takes a message of its
own -- the e1000e by MSI, QEMU's qemu-xhci by MSI-X (the only one it offers), its nec-usb-xhci by MSI -- and the
boot log and `net` say so, the network answers over the UDP shell and the USB keyboard types, with neither
polled. An xHCI with both switched off (msi=off,msix=off) falls back to its INTx line or the poll and the log
says which and why; -M pc's e1000 (an 82540EM, neither capability) keeps its INTx line. Five boots (one under
OVMF); nothing here asserts a duration."""

import re

import pytest

from kprof_qemu import boot_kernel
from kprof_net import DHCP_LOGGED, net_status, udp_cmd, wait_dhcp
from kprof_usb import type_line

# Kernels this module boots (conftest.py fails a boot past BOOTS), by the test that boots them -- a module kernel
# counts for the first test that uses it, a test named alone needs a fresh one:
# test_pc_e1000_has_no_msi_and_keeps_its_line 1, test_q35_nic_and_xhci_each_take_a_message[*] 3,
# test_xhci_without_messages_falls_back_and_says_why 1.
BOOTS = 5

CPUS = 2
KBD = ["-device", "usb-kbd,id=kbd,bus=xhci.0"]
# xHCI device line -> (PCI id, what the boot log must say of its event ring's interrupt)
XHCIS = {
    "qemu-xhci": ("1b36:000d", r"interrupt on MSI-X vector (0x[0-9a-f]+)"),
    "nec-usb-xhci": ("1033:0194", r"interrupt on MSI vector (0x[0-9a-f]+)"),
}
NO_MESSAGE = "no MSI: it has neither the MSI nor the MSI-X capability"


def rx_xhci(pci_id):
    return r"usb: xHCI %s: 8 ports, \d+ slots, event ring ([^\n]*)\n" % pci_id


def rx_first_interrupt(pci_id):
    return r"usb: xHCI %s: first event ring interrupt taken\n" % pci_id


def rx_keyboard(pci_id):
    return r"usb: xHCI %s: port (\d+): keyboard 0627:0001 \(boot protocol\), slot (\d+)\n" % pci_id


def boot(name, nic, extra, firmware="bios"):
    return boot_kernel(smp=CPUS, mem=256, udp=True, nic=nic, qmp=bool(extra), extra_args=extra, name=name,
                       firmware=firmware)


def log_lines(k, *rxs):
    """Waits, running no command (whose output a log line could land in), until each of rxs has been logged,
    in whatever order; then the DHCP line wait_dhcp wants is where it looks. Returns the log text."""
    seen = ""
    for rx in rxs:
        if not re.search(rx, k.boot_log_and_after + seen):
            m = k.expect(rx, timeout=60.0, what=rx)
            seen += m.before + m.group(0)
    k.unsolicited.append(seen)
    wait_dhcp(k)
    return (k.boot_log_and_after + seen).replace("\r", "")


def card_line(log, driver):
    lines = re.findall(r"(?m)^%s: [^,]+, registers at 0x[0-9a-f]+, ([^,]+), mac from" % driver, log)
    assert len(lines) == 1, "want one %s bring-up line:\n%s" % (driver, log)
    return lines[0]


# OVMF puts qemu-xhci's 64-bit BAR, and with it the MSI-X table, above 4 GiB
@pytest.mark.parametrize("xhci,firmware", [("qemu-xhci", "bios"), ("qemu-xhci", "uefi"), ("nec-usb-xhci", "bios")])
def test_q35_nic_and_xhci_each_take_a_message(request, xhci, firmware):
    pci_id, want = XHCIS[xhci]
    k = boot(request.node.name, "e1000e", ["-M", "q35,i8042=off", "-device", xhci + ",id=xhci"] + KBD, firmware)
    try:
        # the first interrupt's line: the message is delivered, not only programmed (the task's once-a-second
        # safety net would type without it)
        log = log_lines(k, rx_xhci(pci_id), rx_keyboard(pci_id), rx_first_interrupt(pci_id), DHCP_LOGGED)
        nic_how = card_line(log, "e1000e")
        assert re.fullmatch(r"MSI vector 0x[0-9a-f]+", nic_how), nic_how
        how = re.search(rx_xhci(pci_id), log).group(1)
        m = re.fullmatch(want, how)
        assert m, how
        assert m.group(1) != nic_how.split()[-1], "two functions on one vector: %s, %s" % (how, nic_how)
        # the USB keyboard types a command, its output read back on COM1
        out = type_line(k, "uptime")
        assert out.startswith("up"), out
        # the network answers, and the card's interrupts came as its message (INTx is disabled while MSI is on)
        assert udp_cmd(k.udp_port, "uptime").startswith("up")
        n = net_status(k)
        assert n["interrupt_by"] == nic_how and n["interrupts"] >= 1, n
    finally:
        k.kill()


def test_xhci_without_messages_falls_back_and_says_why(request):
    pci_id = XHCIS["nec-usb-xhci"][0]
    k = boot(request.node.name, "e1000e",
             ["-M", "q35,i8042=off", "-device", "nec-usb-xhci,id=xhci,msi=off,msix=off"] + KBD)
    try:
        log = log_lines(k, rx_xhci(pci_id), rx_keyboard(pci_id), DHCP_LOGGED)
        how = re.search(rx_xhci(pci_id), log).group(1)
        # its line 11 is also the e1000e's: the poll; were it alone on a line, that line
        assert re.fullmatch(r"polled every 10 ms \(%s; .+\)|interrupt on irq \d+ \(%s\)"
                            % (NO_MESSAGE, NO_MESSAGE), how), how
        assert type_line(k, "uptime").startswith("up")
        # the NIC beside it still has its own message
        assert re.fullmatch(r"MSI vector 0x[0-9a-f]+", card_line(log, "e1000e"))
    finally:
        k.kill()


def test_pc_e1000_has_no_msi_and_keeps_its_line(request):
    k = boot(request.node.name, "e1000", [])
    try:
        how = card_line(log_lines(k, DHCP_LOGGED), "e1000")
        assert re.fullmatch(r"irq \d+ pin A", how), how
        assert udp_cmd(k.udp_port, "uptime").startswith("up")
        n = net_status(k)
        assert n["interrupt_by"] == how and n["interrupts"] >= 1, n
    finally:
        k.kill()
