"""The USB keyboard on xHCI (kernel/drivers/usb/xhci.c, docs/usb.md) on a PC as it is today: q35 with no i8042,
a qemu-xhci controller and a usb-kbd on its root port, under OVMF (which puts the controller's 64-bit BAR above
4 GiB and drives it before us) and under SeaBIOS (which drives it too). Keys are pressed on the USB keyboard
through QMP's input-send-event -- never on COM1 -- and what they type is read back from COM1, where the console
still writes: a `profile 300 all 3` typed there runs and reports; a held key repeats while it is held; unplugging
the keyboard (device_del) and plugging another in (device_add) are each one log line and typing still works.
Behind QEMU's usb-hub (one on a root port and a second tier behind it) the same: a keyboard behind it types a
profile, is unplugged and replaced behind the second tier, and the second hub unplugged takes its keyboard with it.
Without an xHCI controller the boot log says so and COM1 is the console. Nothing here asserts a duration: the
repeat is seen as a second copy of a held key's character, waited for generously.

One kernel per firmware for the module (an OVMF boot under TCG takes seconds); the unplug test runs last in it.
"""

import re

import pytest

from kprof_qemu import Kprof, unstarved
from kprof_usb import WAIT, key_event, type_line
from kprof_report import parse_report

# Kernels this module boots (conftest.py fails a boot past BOOTS), by the test that boots them -- a module kernel
# counts for the first test that uses it, a test named alone needs a fresh one:
# test_keyboard_behind_a_hub_types_a_profile_that_runs[*] 2,
# test_keyboard_five_hubs_deep_types_and_goes_with_the_first_hub 1, test_no_xhci_controller_says_so_and_com1_works
# 1, test_usb_keyboard_types_a_profile_that_runs[*] 2.
BOOTS = 6

CPUS = 2
XHCI_ARGS = ["-M", "q35,i8042=off", "-device", "qemu-xhci,id=xhci", "-device", "usb-kbd,id=kbd,bus=xhci.0"]
RX_KEYBOARD = r"usb: xHCI 1b36:000d: port (\d+): keyboard 0627:0001 \(boot protocol\), slot (\d+)\n"
@pytest.fixture(scope="module", params=["uefi", "bios"])
def usb(request):
    k = Kprof(smp=CPUS, mem=256, firmware=request.param, qmp=True, extra_args=XHCI_ARGS,
              name="%s-%s" % (request.node.name, request.param))
    try:
        k.boot()
        k.usb_log = k.wait_log_line(RX_KEYBOARD, timeout=WAIT, what="the USB keyboard's enumeration line")
        yield k
    finally:
        k.kill()


def typed_report(k):
    """`profile 300 all 3` typed on the USB keyboard, its report parsed (a window's checks: under the retry
    rule)."""
    return parse_report(type_line(k, "profile 300 all 3").strip("\n"), 300, 3, cpus=CPUS)


def test_usb_keyboard_types_a_profile_that_runs(usb):
    assert "ps2kbd: no i8042 controller" in usb.boot_log, usb.boot_log
    # the controller's line says how its event ring is served: its interrupt, or a poll and why (in the boot
    # log, or after `ready:` with the keyboard's line when the task came late)
    log = usb.boot_log + "\n" + usb.usb_log
    # qemu-xhci offers MSI-X alone (test_msi.py covers MSI, INTx and the poll)
    assert re.search(r"usb: xHCI 1b36:000d: 8 ports, \d+ slots, event ring interrupt on MSI-X vector 0x[0-9a-f]+\n",
                     log), log
    r = unstarved(usb, lambda: typed_report(usb), "profile 300 typed")
    assert r.samples > 0, r.text
    # COM1 is still the console beside it
    assert usb.cmd("uptime").startswith("up")


def test_held_key_repeats_until_released(usb):
    usb.drain()
    usb._buf = ""
    key_event(usb, "x", True)
    try:
        usb.expect("x", timeout=WAIT, what="the held key's first character")
        usb.expect("x", timeout=WAIT, what="a repeat of the held key")
    finally:
        key_event(usb, "x", False)
    usb.sync()
    # released: nothing else types, so a line typed now is exactly what it says
    out = type_line(usb, "uptime")
    assert out.strip().startswith("up"), out


def test_unplug_and_plug_keyboard_console_keeps_working(usb):
    usb.qmp("device_del", {"id": "kbd"})
    usb.expect(r"usb: port (\d+): keyboard unplugged, slot (\d+) disabled\n", timeout=WAIT,
               what="the unplug line")
    assert usb.cmd("uptime").startswith("up")  # COM1 meanwhile
    usb.qmp("device_add", {"driver": "usb-kbd", "id": "kbd2", "bus": "xhci.0"})
    usb.expect(RX_KEYBOARD, timeout=WAIT, what="the new keyboard's enumeration line")
    out = type_line(usb, "uptime")
    assert out.strip().startswith("up"), out


def test_no_xhci_controller_says_so_and_com1_works(kprof_factory):
    k = kprof_factory(smp=CPUS, mem=256, extra_args=["-M", "q35"])
    assert re.search(r"(?m)^usb: no xHCI controller: ", k.boot_log), k.boot_log
    assert k.cmd("uptime").startswith("up")


HUB_ARGS = ["-M", "q35,i8042=off", "-device", "qemu-xhci,id=xhci",
            "-device", "usb-hub,id=hub1,bus=xhci.0,port=1",
            "-device", "usb-hub,id=hub2,bus=xhci.0,port=1.3",
            "-device", "usb-kbd,id=kbd,bus=xhci.0,port=1.1",
            "-device", "usb-tablet,id=tab,bus=xhci.0,port=2"]
RX_HUB_KEYBOARD = (r"usb: xHCI 1b36:000d: port (\d+)\.(\d+) \(behind hub 0409:55aa\): keyboard 0627:0001 "
                   r"\(boot protocol\), slot (\d+)\n")

RX_TABLET = r"usb: port \d+: device 0627:0001 \(class 00\) is not a boot keyboard: left alone\n"


def wait_all(k, rxs, what):
    """Log lines that come in an order enumeration decides, before `ready:` or after it: the text they were all
    found in."""
    text = k.boot_log_and_after
    while not all(re.search(rx, text) for rx in rxs):
        m = k.expect(r"usb: [^\n]*\n", timeout=WAIT, what=what)
        text += m.before + m.group(0)
    return text


@pytest.fixture(scope="module", params=["bios", "uefi"])
def hubbed(request):
    """QEMU's full-speed 8-port usb-hub on root port 1 with a keyboard on its port 1 and a second hub on its
    port 3; a tablet on root port 2. QEMU's bus port 1 is an xHCI USB 2 port whose number follows the USB 3
    ones (5 on qemu-xhci): k.root is that number as the boot log names it."""
    k = Kprof(smp=CPUS, mem=256, firmware=request.param, qmp=True, extra_args=HUB_ARGS,
              name="%s-%s" % (request.node.name, request.param))
    try:
        k.boot()
        k.usb_log = wait_all(k, [r"usb: xHCI 1b36:000d: port (\d+): hub 0409:55aa, 8 ports, slot \d+\n",
                                 r"usb: xHCI 1b36:000d: port \d+\.3 \(behind hub 0409:55aa\): hub 0409:55aa, "
                                 r"8 ports, slot \d+\n", RX_HUB_KEYBOARD, RX_TABLET],
                             "the hubs', the keyboard's and the tablet's lines")
        k.root = re.search(r"port (\d+): hub 0409:55aa", k.usb_log).group(1)
        yield k
    finally:
        k.kill()


def plug_behind_hub_and_type(k, kid, port):
    """A usb-kbd plugged at QEMU bus port `port` ("1.3.2"): its line names the root port as the boot log does,
    then the hub ports; and it types."""
    k.qmp("device_add", {"driver": "usb-kbd", "id": kid, "bus": "xhci.0", "port": port})
    path = re.escape(k.root + "." + port.split(".", 1)[1])
    k.expect(r"usb: xHCI 1b36:000d: port " + path + r" \(behind hub 0409:55aa\): keyboard 0627:0001 "
             r"\(boot protocol\), slot \d+\n", timeout=WAIT, what="the line of the keyboard plugged at " + port)
    out = type_line(k, "uptime")
    assert out.strip().startswith("up"), out


def test_keyboard_behind_a_hub_types_a_profile_that_runs(hubbed):
    assert re.search(RX_HUB_KEYBOARD, hubbed.usb_log).groups()[:2] == (hubbed.root, "1"), hubbed.usb_log
    r = unstarved(hubbed, lambda: typed_report(hubbed), "profile 300 typed behind a hub")
    assert r.samples > 0, r.text
    # the tablet on a root port is still one line and left alone
    assert re.search(RX_TABLET, hubbed.usb_log), hubbed.usb_log
    assert hubbed.cmd("uptime").startswith("up")


def test_keyboard_behind_two_hubs_replaces_one_unplugged(hubbed):
    """Unplugged behind the first hub: one line; plugged behind the second-tier hub (port 1.3.2): enumerated
    with a two-tier path and typing works."""
    hubbed.qmp("device_del", {"id": "kbd"})
    hubbed.expect(r"usb: port " + hubbed.root + r"\.1: keyboard unplugged, slot \d+ disabled\n", timeout=WAIT,
                  what="the unplug line")
    assert hubbed.cmd("uptime").startswith("up")  # COM1 meanwhile
    plug_behind_hub_and_type(hubbed, "kbd2", "1.3.2")


def test_hub_unplugged_disables_everything_behind_it(hubbed):
    """The second-tier hub, with the keyboard on it, unplugged: both slots disabled, the keyboard's first; a
    keyboard plugged back behind the first hub types again."""
    hubbed.qmp("device_del", {"id": "hub2"})
    m = hubbed.expect(r"usb: port " + hubbed.root + r"\.3: hub unplugged, slot \d+ disabled\n", timeout=WAIT,
                      what="the hub's unplug line")
    gone = r"usb: port " + hubbed.root + r"\.3\.2: keyboard unplugged, slot \d+ disabled\n"
    assert re.search(gone, m.before), m.before
    plug_behind_hub_and_type(hubbed, "kbd3", "1.2")


def test_keyboard_five_hubs_deep_types_and_goes_with_the_first_hub(kprof_factory):
    """Five of QEMU's hubs in a chain (as deep as QEMU nests them, and as deep as a route string names a
    device): the keyboard at the end, port R.1.1.1.1.1, types; the first hub unplugged disables all six slots
    behind and on it, deepest first, one line each."""
    args = ["-M", "q35,i8042=off", "-device", "qemu-xhci,id=xhci"]
    path = "1"
    for i in range(5):
        args += ["-device", "usb-hub,id=chain%d,bus=xhci.0,port=%s" % (i, path)]
        path += ".1"
    args += ["-device", "usb-kbd,id=kbd,bus=xhci.0,port=" + path]
    k = kprof_factory(smp=CPUS, mem=256, qmp=True, extra_args=args)
    rx = (r"usb: xHCI 1b36:000d: port (\d+)\.1\.1\.1\.1\.1 \(behind hub 0409:55aa\): keyboard 0627:0001 "
          r"\(boot protocol\), slot \d+\n")
    log = wait_all(k, [rx], "the keyboard five hubs deep")
    root = re.search(rx, log).group(1)
    out = type_line(k, "uptime")
    assert out.strip().startswith("up"), out
    k.qmp("device_del", {"id": "chain0"})
    m = k.expect(r"usb: port " + root + r": hub unplugged, slot \d+ disabled\n", timeout=WAIT,
                 what="the first hub's unplug line")
    gone = re.findall(r"usb: port ([\d.]+): (hub|keyboard) unplugged, slot \d+ disabled\n", m.before)
    assert gone == [(root + ".1" * 5, "keyboard")] + [(root + ".1" * t, "hub") for t in range(4, 0, -1)], m.before
    assert k.cmd("uptime").startswith("up")  # COM1 still the console
