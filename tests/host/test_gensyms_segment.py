"""scripts/gensyms.py's --text-segment: the text's loadable segment (address, size in the file, file offset) goes
into the generated table as kernel_text_segment, which the kernel's pprof mapping names so go tool pprof can find
an address in build/kprof.elf; a malformed value is refused in one line, and the built kernel's table agrees with
readelf of the built ELF."""

import os
import re
import subprocess
import sys

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GENSYMS = os.path.join(TOP, "scripts", "gensyms.py")
NM = (b"0000000000100000 T __text_start\n0000000000100000 0000000000000010 T kmain\n"
      b"0000000000100010 T __text_end\n")


def gensyms(*args, stdin=NM):
    return subprocess.run([sys.executable, GENSYMS] + list(args), input=stdin, capture_output=True, timeout=30)


def test_segment_is_written_as_given():
    r = gensyms("--text-segment", "0x0000000000100000,0x034280,0x001000")
    assert r.returncode == 0, r.stderr
    assert b"const struct kernel_segment kernel_text_segment = { 0x100000ull, 0x34280ull, 0x1000ull };" in r.stdout


def test_without_segment_it_is_zero():
    for r in (gensyms(), gensyms("--empty", stdin=b"")):
        assert r.returncode == 0, r.stderr
        assert b"kernel_text_segment = { 0x0ull, 0x0ull, 0x0ull };" in r.stdout


def test_malformed_segment_is_refused_in_one_line():
    for bad in ("0x100000,0x10", "0x100000,zz,0x1000", ""):
        r = gensyms("--text-segment", bad)
        assert r.returncode == 1 and r.stdout == b""
        assert re.fullmatch(rb"gensyms: --text-segment '.*': want VADDR,FILESZ,OFFSET in hex\n", r.stderr), r.stderr


def test_built_kernel_names_its_own_text_segment():
    elf = os.path.join(TOP, "build", "kprof.elf")
    if not os.path.isfile(elf):  # `make test` runs the host tests before anything has built the kernel
        subprocess.run(["make", "-s", "build/kprof.elf"], cwd=TOP, check=True, timeout=900)
    tables = sorted((f for f in os.listdir(os.path.join(TOP, "build")) if re.fullmatch(r"syms\.\d+\.c", f)),
                    key=lambda f: int(f.split(".")[1]))
    assert tables, "no build/syms.N.c beside %s" % elf
    with open(os.path.join(TOP, "build", tables[-1])) as f:
        m = re.search(r"kernel_text_segment = \{ (0x[0-9a-f]+)ull, (0x[0-9a-f]+)ull, (0x[0-9a-f]+)ull \};", f.read())
    out = subprocess.run(["readelf", "-lW", elf], capture_output=True, text=True, check=True).stdout
    load = [l.split() for l in out.splitlines() if l.split()[:1] == ["LOAD"] and l.split()[7:8] == ["E"]]
    assert m and load
    assert tuple(int(v, 16) for v in m.groups()) == (int(load[0][2], 16), int(load[0][4], 16), int(load[0][1], 16))
