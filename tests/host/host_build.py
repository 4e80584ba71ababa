"""The host programs the tools' tests drive (tests/host/harnesses.mk), asked of make by name so they are built from
the same objects as the unit tests and only rebuilt when a source changed.

Also owns what more than one tests/host module builds or runs: PROFEXPORT (scripts/profexport), the kernel_report
fixture (tests/host/kernel_report.c over the kernel's fold and report: send(text) -> its outputs), and Tiny with
its module fixture tiny (a small ELF with a known call chain, its return addresses, build id and symbols); the
fixture tree (a copy of scripts/qemu.sh and mkiso.sh with QEMU and grub-mkrescue faked on PATH) and run (qemu.sh
in it) for test_qemu_sh_key.py and test_qemu_sh_http.py; datagrams(), the receive loop of the fake kernels'
UDP shells.
"""

import os
import re
import shutil
import socket
import subprocess
import sys

import pytest

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(TOP, "scripts"))
import kprof_profile as kp  # noqa: E402

PROFEXPORT = os.path.join(TOP, "scripts", "profexport")


def datagrams(server, sock, every):
    """(data, peer) for each datagram to sock (up to 2048 bytes) until server.closing is set, looked at every
    `every` seconds, or sock is closed: a fake server's receive loop."""
    sock.settimeout(every)
    while not server.closing:
        try:
            got = sock.recvfrom(2048)
        except socket.timeout:
            continue
        except OSError:
            return
        yield got


def harness(name):
    """build/harness/NAME, made up to date by make; its path. Under a lock: the tests run in several processes
    (make host), and two makes of one object at once would write it together."""
    import fcntl
    target = os.path.join("build", "harness", name)
    os.makedirs(os.path.join(TOP, "build"), exist_ok=True)
    with open(os.path.join(TOP, "build", "harness.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        subprocess.run(["make", "-s", "--no-print-directory", target], cwd=TOP, check=True, timeout=600)
    return os.path.join(TOP, target)


@pytest.fixture(scope="module")
def kernel_report(tmp_path_factory):
    """tests/host/kernel_report.c built against the kernel's report, running; send(text) -> its outputs."""
    exe = harness("kernel_report")

    def send(text):
        done = subprocess.run([exe], input=text, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        outs = done.stdout.split("@@end\n")
        assert outs[-1] == ""
        return outs[:-1]
    return send


TINY_C = r"""
__asm__(".text\n.globl __text_start\n__text_start:\n");

__attribute__((noinline)) unsigned long burn_inner(unsigned long x)
{
    for (int i = 0; i < 100; i++) {
        x = x * 3 + 1;
        __asm__ volatile("" : "+r"(x));
    }
    return x;
}

__attribute__((noinline)) unsigned long burn_middle(unsigned long x)
{
    return burn_inner(x) + 1;
}

__attribute__((noinline)) unsigned long burn_outer(unsigned long x)
{
    return burn_middle(x) + 2;
}

static inline __attribute__((always_inline)) unsigned long helper(unsigned long x)
{
    return burn_outer(x) * 5;
}

void _start(void)
{
    volatile unsigned long v = helper(7);
    (void)v;
    for (;;) {
    }
}

__asm__(".text\n.globl __text_end\n__text_end:\n");
"""


class Tiny:
    """An ELF with a known call chain and its return addresses (from objdump), its build id and symbols."""

    def __init__(self, directory):
        src = os.path.join(directory, "tiny.c")
        self.elf = os.path.join(directory, "tiny.elf")
        with open(src, "w") as f:
            f.write(TINY_C)
        subprocess.run(["gcc", "-g", "-O1", "-fno-toplevel-reorder", "-fno-pie", "-no-pie", "-nostdlib", "-static",
                        "-Wl,--build-id=sha1", "-o", self.elf, src], check=True, timeout=60)
        self.build_id = kp.elf_build_id(self.elf)
        self.symtab = kp.Symtab.from_elf(self.elf)
        dis = subprocess.run(["objdump", "-d", "--no-show-raw-insn", self.elf], check=True, capture_output=True,
                             text=True).stdout.splitlines()
        self.ret = {}  # callee -> the return address of its call
        for i, line in enumerate(dis):
            m = re.search(r"call\s+[0-9a-f]+ <(\w+)>", line)
            if m:
                self.ret[m.group(1)] = int(dis[i + 1].split(":")[0], 16)
        self.inner = self.symtab.find("burn_inner")
        # _start's own last instruction: the jump of its endless loop, to itself
        self.loop = next(int(m.group(1), 16) for m in (re.match(r"\s*([0-9a-f]+):\s+jmp\s+([0-9a-f]+) <_start", l)
                                                        for l in dis) if m and m.group(1) == m.group(2))
        self.chain = (self.inner + 4, self.ret["burn_inner"], self.ret["burn_middle"], self.ret["burn_outer"])

    def raw(self, samples, build_id=None, window_ms=1000, origin=None):
        return kp.RawProfile("tick", 10000000, window_ms, 4, build_id or self.build_id, samples, 0, origin)

    def samples(self):
        burn = [kp.Sample(i % 4, 7, i, (("job", "a"),), self.chain) for i in range(30)]
        idle = [kp.Sample(1, 0, i, (), (self.loop,)) for i in range(10)]
        return burn + idle


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return Tiny(str(tmp_path_factory.mktemp("tiny")))


# ---- scripts/qemu.sh over a faked QEMU ----------------------------------------------------------------------
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
