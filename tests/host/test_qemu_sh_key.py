"""scripts/qemu.sh and scripts/mkiso.sh keep a udpsh.key= out of sight (issue 24 item 6): the command line they
print shows `udpsh.key=<redacted>` wherever the key stood, and an ISO made for a keyed command line (whose
grub.cfg holds the key) is readable by its owner only (0600), even one made earlier with wider permissions,
while an unkeyed one keeps the ordinary umask's. Run over a copy of the two scripts with QEMU and grub-mkrescue
faked on PATH: nothing boots, nothing under build/ is touched."""

import os
import shutil
import stat
import subprocess

import pytest

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
KEY = "5ec7e75ec7e75ec7e75ec7e75ec7e75e"

FAKE_QEMU = """#!/bin/sh
printf '%s\\n' "$@" > "$FAKE_LOG"
"""
# grub-mkrescue -o OUT STAGE: the ISO is the staged grub.cfg, so a test can read what went in.
FAKE_MKRESCUE = """#!/bin/sh
out=$2 stage=$3
cat "$stage/boot/grub/grub.cfg" > "$out"
"""


@pytest.fixture
def tree(tmp_path):
    top = tmp_path / "top"
    (top / "scripts").mkdir(parents=True)
    (top / "build").mkdir()
    for name in ("qemu.sh", "mkiso.sh"):
        shutil.copy(os.path.join(TOP, "scripts", name), top / "scripts" / name)
    shutil.copy(os.path.join(TOP, "grub.cfg"), top / "grub.cfg")
    (top / "build" / "kprof.elf").write_bytes(b"\x7fELF not really")
    (top / "build" / "kprof.iso").write_bytes(b"iso")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, text in (("qemu-system-x86_64", FAKE_QEMU), ("grub-mkrescue", FAKE_MKRESCUE)):
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    return top, bin_dir, tmp_path / "qemu-args"


def run(tree, *args):
    top, bin_dir, log = tree
    env = dict(os.environ, PATH="%s:%s" % (bin_dir, os.environ["PATH"]), FAKE_LOG=str(log))
    return subprocess.run([str(top / "scripts" / "qemu.sh")] + list(args), env=env, capture_output=True,
                          text=True, timeout=60, preexec_fn=lambda: os.umask(0o022))


def isos(top):
    return sorted((top / "build").glob("kprof-cmdline-*.iso"))


@pytest.mark.parametrize("cmdline", [
    "udpsh.key=%s" % KEY,
    "gdb.udp=1234 udpsh.key=%s profile.hz=250" % KEY,
    "udpsh.key=%s udpsh.key=%s" % (KEY, KEY[::-1]),
])
def test_the_key_is_redacted_and_the_keyed_iso_is_the_owners_alone(tree, cmdline):
    top = tree[0]
    r = run(tree, "--cmdline", cmdline)
    assert r.returncode == 0, r.stderr
    printed = r.stdout + r.stderr
    assert KEY not in printed and KEY[::-1] not in printed, printed
    line = [x for x in r.stderr.split("\n") if x.startswith("qemu.sh: kernel command line: ")]
    want = " ".join("udpsh.key=<redacted>" if w.startswith("udpsh.key=") else w for w in cmdline.split())
    assert len(line) == 1 and line[0].startswith("qemu.sh: kernel command line: %s (" % want), r.stderr
    (iso,) = isos(top)
    assert KEY in iso.read_text()  # the key is in it: that is why it is the owner's alone
    assert stat.S_IMODE(iso.stat().st_mode) == 0o600


def test_an_unkeyed_iso_keeps_the_umask_and_its_command_line_is_printed_whole(tree):
    top = tree[0]
    r = run(tree, "--cmdline", "profile.hz=250 udpsh.port=5556")
    assert r.returncode == 0, r.stderr
    assert "qemu.sh: kernel command line: profile.hz=250 udpsh.port=5556 (" in r.stderr
    (iso,) = isos(top)
    assert stat.S_IMODE(iso.stat().st_mode) == 0o644


def test_a_keyed_iso_made_world_readable_before_is_made_the_owners(tree):
    top = tree[0]
    assert run(tree, "--cmdline", "udpsh.key=%s" % KEY).returncode == 0
    (iso,) = isos(top)
    iso.chmod(0o644)  # as the scripts left it before they knew better; newer than its inputs, so not remade
    r = run(tree, "--cmdline", "udpsh.key=%s" % KEY)
    assert r.returncode == 0, r.stderr
    assert stat.S_IMODE(iso.stat().st_mode) == 0o600


def test_mkiso_refusal_does_not_print_the_key(tree):
    r = run(tree, "--cmdline", "udpsh.key=%s bad;char" % KEY)
    assert r.returncode == 2
    assert KEY not in r.stderr
    assert "mkiso: bad character in command line: udpsh.key=<redacted> bad;char" in r.stderr, r.stderr
