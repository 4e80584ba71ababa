"""The ISO booted as a PC boots it once `dd` has written it to a USB stick (docs/pc.md): no CD-ROM drive at all, the
image's bytes on a USB mass-storage device behind an xHCI controller on q35 (Kprof(media="usb-stick")), under OVMF
and under SeaBIOS; and the same bytes as a plain hard disk (virtio-blk, IDE), which is how firmware that takes the
stick for a disk sees it. What makes this work is the layout grub-mkrescue writes (scripts/mkiso.sh): a protective
MBR with GRUB's BIOS boot code and a GPT whose EFI system partition holds GRUB's bootx64.efi, beside the El Torito
entries the CD-ROM boot uses. Each boot must reach `ready:` with every CPU, say which firmware booted it and what
the console is drawn on, and answer a command.
"""

import re

import pytest

from kprof_qemu import boot_kernel

# Kernels this module boots (conftest.py fails a boot past BOOTS), by the test that boots them -- a module kernel
# counts for the first test that uses it, a test named alone needs a fresh one: test_iso_boots_as_a_raw_hard_disk[*]
# 3, test_iso_boots_from_a_usb_stick_on_xhci[*] 2.
BOOTS = 5

CPUS = 2
UEFI_BOOT_TIMEOUT = 240  # OVMF enumerates the USB bus before GRUB starts: seconds under TCG on a loaded machine
RX_BOOT = re.compile(r"(?m)^boot: (UEFI \(64-bit\)|BIOS), GRUB [^,\n]+, console serial \+ ([^\n]*)$")


def _boot(kprof_factory, firmware, media):
    k = boot_kernel(make=kprof_factory, boot=False, smp=CPUS, mem=256, firmware=firmware, media=media,
                    timeout=UEFI_BOOT_TIMEOUT if firmware == "uefi" else 60)
    argv = k.command_line.split(" ")  # the QEMU line it was started with
    assert "-cdrom" not in argv, "a %s boot must not have a CD-ROM: %s" % (media, " ".join(argv))
    return k, " ".join(argv)


def _check_booted(k, firmware, qemu_line):
    assert k.cpus == CPUS, "ready line %r (QEMU: %s)" % (k.ready_line, qemu_line)
    log = k.boot_log
    assert "panic" not in log.lower(), log
    m = RX_BOOT.search(log)
    assert m, "no boot: line in the boot log:\n%s" % log
    if firmware == "uefi":
        assert m.group(1) == "UEFI (64-bit)" and m.group(2).startswith("framebuffer "), m.group(0)
    else:
        assert m.group(1) == "BIOS" and m.group(2) == "VGA text", m.group(0)
    assert k.cmd("uptime").startswith("up "), "the console does not answer"


@pytest.mark.parametrize("firmware", ["uefi", "bios"])
def test_iso_boots_from_a_usb_stick_on_xhci(kprof_factory, firmware):
    k, line = _boot(kprof_factory, firmware, "usb-stick")
    assert "usb-storage,bus=xhci.0" in line and "-M q35" in line, line
    # The xHCI task finds the stick it booted from, says it is no keyboard and leaves it alone -- before `ready:`
    # or after it, as the task's enumeration and the boot race.
    k.wait_log_line(r"(?m)^usb: port \d+: device [0-9a-f]{4}:[0-9a-f]{4} \(class 00\) is not a boot keyboard: "
                    r"left alone", timeout=60, what="the xHCI driver leaving the USB stick alone")
    _check_booted(k, firmware, line)


@pytest.mark.parametrize("firmware,media", [("bios", "virtio-disk"), ("uefi", "virtio-disk"), ("bios", "ide-disk")])
def test_iso_boots_as_a_raw_hard_disk(kprof_factory, firmware, media):
    k, line = _boot(kprof_factory, firmware, media)
    _check_booted(k, firmware, line)
