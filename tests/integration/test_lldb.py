"""LLDB as the debugger client (issue 15 item 3): lldb 14's `gdb-remote` over COM2 and its `udp://` connection
over `gdb.udp=`, against the same stub gdb uses.

Each session, in one `lldb --batch`: attach, one thread per CPU, a symbolised `bt`, registers, 32 bytes of
cmd_uptime's code equal to the ELF's (as gdb reads them from the file alone), a breakpoint on cmd_uptime hit
when the console types `uptime`, a `thread step-inst` that moves the pc, `process detach`, and the console
finishes the command and answers after.

lldb runs as kprof_gdb.Lldb: `timeout -k 3 N lldb --batch --no-lldbinit`.
"""

import re
import subprocess
import time

from kprof_qemu import ELF
from kprof_gdb import LLDB_TIMEOUT, Lldb, assert_running, boot_udp

# Kernels this module boots (conftest.py fails a boot past BOOTS), by the test that boots them -- a module kernel
# counts for the first test that uses it, a test named alone needs a fresh one: test_lldb_gdb_remote_over_com2 1,
# test_lldb_over_udp 1.
BOOTS = 2

CPUS = 4


def elf_bytes(symbol, count):
    """count bytes at symbol, read by gdb from the ELF file with no target."""
    out = subprocess.run(["gdb", "-batch", "-nx", "-ex", "x/%dxb %s" % (count, symbol), ELF],
                         capture_output=True, text=True, timeout=60).stdout
    values = [int(b, 16) for line in out.splitlines() if ":" in line
              for b in re.findall(r"\b0x([0-9a-f]{2})\b", line.split(":", 1)[1])]
    assert len(values) == count, "gdb read %d bytes of %s from the ELF:\n%s" % (len(values), symbol, out)
    return bytes(values)


def lldb_bytes(text):
    """The bytes of `memory read -f x -s 1` lines (0xADDR: 0x.. 0x.. ...)."""
    return bytes(int(b, 16) for line in re.findall(r"(?m)^0x[0-9a-f]+: ((?:0x[0-9a-f]{2} ?)+)$", text)
                 for b in line.split())


def session(k, connect):
    code = elf_bytes("cmd_uptime", 32)
    s = Lldb(connect, ["thread list", "bt", "register read rip rsp", "memory read -f x -s 1 -c 32 cmd_uptime",
                       "breakpoint set -n cmd_uptime", "continue", "bt", "register read rip",
                       "thread step-inst", "register read rip", "breakpoint delete", "process detach"])
    s.wait_for(r"\(lldb\) continue")
    time.sleep(0.5)  # lldb has sent the continue (or is about to): the breakpoint is in
    k.send("uptime\r")
    text = s.finish(LLDB_TIMEOUT + 5)
    attach = text.split("(lldb) breakpoint set", 1)[0]
    tids = re.findall(r"(?m)^[* ] thread #(\d+): tid = 0x([0-9a-f]+)", attach)
    assert len(tids) == CPUS, "lldb lists %d threads, not one per CPU:\n%s" % (len(tids), text)
    assert re.search(r"frame #1: 0x[0-9a-f]+ kprof\.elf`\w+", attach), "no symbolised bt:\n%s" % text
    assert re.search(r"rip = 0x[0-9a-f]+ +kprof\.elf`", attach), "no rip:\n%s" % text
    assert lldb_bytes(attach) == code, "cmd_uptime's bytes over the stub differ from the ELF's:\n%s" % text
    assert re.search(r"stop reason = breakpoint 1\.1", text), "the breakpoint was not hit:\n%s" % text
    hit = text.split("(lldb) continue", 1)[1]
    assert re.search(r"frame #0: 0x[0-9a-f]+ kprof\.elf`cmd_uptime", hit), "not stopped in cmd_uptime:\n%s" % text
    assert re.search(r"frame #\d+: 0x[0-9a-f]+ kprof\.elf`shell_run_line", hit), "bt lacks the shell:\n%s" % text
    rips = [int(v, 16) for v in re.findall(r"(?m)^ +rip = (0x[0-9a-f]+)", hit)]
    assert len(rips) == 2 and rips[0] != rips[1], "step-inst did not move the pc:\n%s" % text
    assert re.search(r"Process \d+ detached", text), "no detach:\n%s" % text
    k.expect(r"up \d+\.\d{3} s\n", what="the uptime that hit the breakpoint, finished after detach")
    assert_running(k)


def test_lldb_gdb_remote_over_com2(kprof_factory):
    k = kprof_factory(gdb=True, smp=CPUS)
    session(k, "gdb-remote 127.0.0.1:%d" % k.gdb_port)


def test_lldb_over_udp(kprof_factory):
    k = boot_udp(kprof_factory, smp=CPUS)
    session(k, "process connect udp://127.0.0.1:%d" % k.gdb_udp_port)
