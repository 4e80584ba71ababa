"""The gdb remote stub on COM2, driven by the real gdb 13 in batch mode (issue 6, "Integration"): attaching to
a running kernel stops every CPU, `info threads` shows the 4 CPUs with their tasks, `bt` is symbolised, a
breakpoint on the function a shell command runs is hit when the command is typed and is stepped, continue
and detach leave the shell working; `monitor rdmsr`/`wrmsr`/`pmu` answer, a faulting MSR access answers an
error; gdb=wait and gdb=panic; and the bad input -- unmapped and non-canonical memory, breakpoints where
none can be planted, junk bytes, bad checksums, over-long packets, gdb killed mid-session -- leaves the
kernel running or waiting for a debugger, never crashed.

gdb runs as `timeout -k 3 60 gdb -batch -nx ...` (gdb 13 can spin on a stub that stops answering), with its
stdin a pipe held open: at end-of-file on stdin gdb abandons a `continue`. Batch gdb buffers its output, so
a test that must act while gdb waits (type a shell command, kill gdb) has gdb print and flush a marker
first, through its Python (`mark`). Each test boots its own kernel with COM2 on a free TCP port.
"""

import os
import pathlib
import re
import signal
import select
import socket
import time

from kprof_qemu import KprofError, poll
from kprof_rsp import checksum, packet
from kprof_gdb import Gdb, assert_running, gate, mark, run_gdb, threads

# Kernels this module boots (conftest.py fails a boot past BOOTS), by the test that boots them -- a module kernel
# counts for the first test that uses it, a test named alone needs a fresh one:
# test_attach_stops_every_cpu_shows_4_threads_and_a_symbolised_backtrace 1, test_breakpoint_every_cpu_hits_at_once
# 1, test_breakpoint_on_cmd_uptime_is_hit_from_the_console_and_stepped 1, test_ctrl_c_stops_a_running_kernel 1,
# test_ctrl_c_50_times_during_profiles_of_a_burn_never_panics 1,
# test_gdb_killed_mid_session_leaves_the_kernel_waiting_for_the_next 1,
# test_gdb_panic_stops_in_the_debugger_with_every_cpu 1, test_gdb_wait_stops_boot_until_gdb_continues 1,
# test_hardware_breakpoint_and_stepping_another_cpu 1,
# test_junk_bad_checksums_and_long_packets_leave_the_kernel_running_or_waiting 1,
# test_monitor_rdmsr_wrmsr_and_pmu_answer_and_faults_are_errors 1,
# test_unmapped_and_noncanonical_memory_and_breakpoints_are_errors 1,
# test_watchpoints_stop_after_the_access_and_refuse_the_debuggers_data 1.
BOOTS = 13

class Wire:
    """A raw TCP connection to COM2, for bytes gdb would never send."""

    def __init__(self, k):
        self.s = socket.create_connection(("127.0.0.1", k.gdb_port), timeout=10)
        self.buf = b""

    def send(self, data):
        self.s.sendall(data)

    def expect(self, rx, timeout=15.0):
        rx = re.compile(rx)
        deadline = time.monotonic() + timeout
        while True:
            m = rx.search(self.buf)
            if m:
                self.buf = self.buf[m.end():]
                return m
            left = deadline - time.monotonic()
            if left <= 0:
                raise KprofError("COM2 did not send %r within %.0f s; got %r" % (rx.pattern, timeout, self.buf[-300:]))
            r, _, _ = select.select([self.s], [], [], left)
            if r:
                data = self.s.recv(65536)
                if not data:
                    raise KprofError("COM2 closed; got %r" % self.buf[-300:])
                self.buf += data

    def request(self, payload, timeout=15.0):
        """Sends a packet, acknowledges the reply, returns its payload."""
        self.send(packet(payload))
        m = self.expect(rb"\+\$([^#]*)#([0-9a-f]{2})", timeout)
        assert checksum(m.group(1)) == m.group(2).decode(), "bad checksum on %r" % m.group(0)
        self.send(b"+")
        return m.group(1)

    def close(self):
        self.s.close()


# ---- attaching ------------------------------------------------------------------------------------------------

def test_attach_stops_every_cpu_shows_4_threads_and_a_symbolised_backtrace(kprof_factory):
    k = kprof_factory(gdb=True)
    g = Gdb(k, ["info threads", "bt", "thread 3", "bt 2", gate("stopped"), "detach"])
    g.wait_mark("stopped")
    # Attached: no CPU runs, so the shell does not even echo a line until gdb detaches.
    k.send("uptime\r")
    assert k.quiet_for(1.0), "the kernel answered while gdb had it stopped:\n%s" % k.log[-500:]
    g.release()
    text = g.finish()
    k.expect(r"up \d+\.\d{3} s\n", what="the uptime typed while stopped, answered after detach")
    ts = threads(text)
    assert [t[1] for t in ts] == [0, 1, 2, 3], "info threads did not list CPUs 0-3:\n%s" % text
    assert all(t[2] for t in ts), "a CPU without its task in info threads:\n%s" % text
    assert re.search(r"(?m)^#0 +(0x[0-9a-f]+ in )?[A-Za-z_]\w* \(", text), "bt is not symbolised:\n%s" % text
    assert re.search(r"(?m)^#1 +0x[0-9a-f]+ in [A-Za-z_]\w* \(", text), "bt has no symbolised caller:\n%s" % text
    assert "[Switching to thread 3 (Thread 3)]" in text, text
    assert "detached" in text, text
    assert_running(k)


# ---- breakpoints and stepping ---------------------------------------------------------------------------------

def function_lines(path, name):
    """The line numbers of a C function's definition in a source file, from its signature to its closing brace
    (read from the source, so that moving the function does not break the test)."""
    lines = (pathlib.Path(__file__).resolve().parents[2] / path).read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if re.match(r"\w.*\b%s\(" % name, line))
    end = next(i for i in range(start, len(lines)) if lines[i].startswith("}"))
    return range(start + 1, end + 2)


def finish_over_uptime(g, k):
    """Once gdb is at its `resuming` mark, runs `uptime` on the console (into cmd_uptime); all gdb said."""
    g.wait_mark("resuming")
    k.send("uptime\r")
    return g.finish()


def test_breakpoint_on_cmd_uptime_is_hit_from_the_console_and_stepped(kprof_factory):
    k = kprof_factory(gdb=True)
    g = Gdb(k, ["break cmd_uptime", mark("resuming"), "continue", "bt",
                "print $pc", "stepi", "print $pc", "next", "next", "info threads",
                "delete", "detach"])
    text = finish_over_uptime(g, k)
    assert re.search(r"Thread \d+ hit Breakpoint 1, cmd_uptime \(", text), "no breakpoint hit:\n%s" % text
    assert re.search(r"(?m)^#1 +0x[0-9a-f]+ in shell_run_line \(", text), "bt lacks the shell:\n%s" % text
    pcs = [int(v, 16) for v in re.findall(r"(?m)^\$\d+ = \(void \(\*\)\(\)\) (0x[0-9a-f]+)", text)]
    assert len(pcs) == 2 and pcs[1] != pcs[0], "stepi did not move the pc:\n%s" % text
    body = function_lines("kernel/shell/cmd_system.c", "cmd_uptime")
    nexted = [int(n) for n in re.findall(r"(?m)^(\d+)\t", text)]
    assert any(n in body for n in nexted), "next printed no source line of cmd_uptime (%s):\n%s" % (body, text)
    assert re.search(r"Thread \d+ \(cpu \d+, task shell \(pid \d+\)\)", text), "the shell's CPU:\n%s" % text
    k.expect(r"up \d+\.\d{3} s\n", what="the uptime that hit the breakpoint, finished after detach")
    assert_running(k)


def test_ctrl_c_stops_a_running_kernel(kprof_factory):
    k = kprof_factory(gdb=True)
    g = Gdb(k, [mark("continuing"), "continue", "info threads", "detach"])
    g.wait_mark("continuing")
    # gdb is in `continue`: the kernel runs until gdb's Ctrl-C (SIGINT to gdb sends it 0x03).
    poll("the shell running under `continue`", lambda: "up " in k.cmd("uptime"), timeout=30)
    os.kill(g.gdb_pid(), signal.SIGINT)
    text = g.finish()
    assert re.search(r"Thread \d+ received signal SIGINT, Interrupt\.", text), text
    assert len(threads(text)) == 4, text
    assert_running(k)


def test_ctrl_c_50_times_during_profiles_of_a_burn_never_panics(kprof_factory):
    """Issue 37 on the tick path: gdb's interrupt -- the 0x03 byte gdb sends on Ctrl-C -- 50 times in a row,
    at seeded moments, while `profile 2000` runs on the console (again as each ends) over `burn` on two CPUs:
    each answered by a stop reply with every CPU stopped and its threads listed, each `c` resuming them; no
    panic, every report that came out whole, and the shell answering after. The stop is an NMI to each CPU,
    landing anywhere in the tick's sample path; the counter's share of the coincidences is the fake CPU's
    (tests/unit/test_nmi_owner.c)."""
    import random
    from kprof_qemu import KprofTimeout
    from kprof_report import parse_report
    k = kprof_factory(gdb=True)
    # two busy CPUs of four: every CPU still stopped each time, while the host keeps a core for the other
    # worker's kernel (four busy vCPUs starved it in CI)
    assert k.cmd("burn 30000 2").startswith("burn: started 2 tasks"), "burn did not start"
    report = re.compile(r"(profiled \d+ ms\n(?:.*\n)*?)> ")
    reports = []

    def take_report(timeout):
        try:
            m = k.expect(report, timeout=timeout)
        except KprofTimeout:
            return False
        text = m.group(1).rstrip("\n")
        # the window is kernel time, and every CPU's stops are in it: it runs past 2000 ms by what they took
        window = int(re.match(r"profiled (\d+) ms", text).group(1))
        assert window >= 2000, text
        reports.append(parse_report(text, window, 8))
        return True

    w = Wire(k)
    rng = random.Random(37)
    # attach as gdb does (a packet stops every CPU), and continue: an interrupt is answered while a `c` runs
    assert re.match(rb"[ST][0-9a-f]{2}", w.request("?")), "no stop reply to ?"
    w.send(packet("c"))
    w.expect(rb"\+", timeout=15)
    k.send("profile 2000\r")
    for _ in range(50):
        k.quiet_for(rng.uniform(0.02, 0.3))  # the machine runs; the console's output is read meanwhile
        w.send(b"\x03")
        m = w.expect(rb"\$([ST]02[^#]*)#([0-9a-f]{2})", timeout=30)
        assert checksum(m.group(1)) == m.group(2).decode(), m.group(0)
        w.send(b"+")
        assert w.request("qfThreadInfo").startswith(b"m"), "no thread list while stopped"
        w.send(packet("c"))
        w.expect(rb"\+", timeout=15)
        if take_report(0.01):
            k.send("profile 2000\r")
    w.send(b"\x03")
    w.expect(rb"\$[ST]02[^#]*#[0-9a-f]{2}", timeout=30)
    w.send(b"+")
    assert w.request("D") == b"OK"
    w.close()
    assert take_report(60), "the last profile's report did not come"
    assert "panic" not in k.log, k.log[-3000:]
    assert k.cmd("uptime").startswith("up ")
    print("50 stops over %d profiles, each report whole" % len(reports))


def test_hardware_breakpoint_and_stepping_another_cpu(kprof_factory):
    k = kprof_factory(gdb=True)
    g = Gdb(k, ["hbreak cmd_uptime", "set debug remote 1", mark("resuming"), "continue", "set debug remote 0",
                "delete", "thread 2", "print $pc", "stepi", "print $pc", "info threads", "thread 1",
                "set scheduler-locking step", "set debug remote 1", "stepi", "set debug remote 0",
                "set scheduler-locking off", "detach"])
    text = finish_over_uptime(g, k)
    # A debug-register breakpoint (Z1), reported as one (hwbreak in the stop reply), hit by the shell.
    assert re.search(r"Sending packet: \$Z1,[0-9a-f]+,1#", text), "gdb planted no hardware breakpoint:\n%s" % text
    assert re.search(r"Packet received: T05[^\n]*hwbreak:", text), "the stop was not a hwbreak:\n%s" % text
    assert re.search(r"hit Breakpoint 1, .*?cmd_uptime ?\(", text, re.S), "no breakpoint hit:\n%s" % text
    # Stepping CPU 1 with the others running, then CPU 0 with the others held (vCont;s:1 alone).
    assert "[Switching to thread 2 (Thread 2)]" in text, text
    pcs = re.findall(r"(?m)^\$\d+ = \(void \(\*\)\(\)\) (0x[0-9a-f]+)", text)
    assert len(pcs) == 2 and pcs[0] != pcs[1], "stepi on thread 2 did not move its pc:\n%s" % text
    assert re.search(r"Sending packet: \$vCont;s:1#", text), "no step of thread 1 alone:\n%s" % text
    assert len(threads(text)) == 4, text
    assert "Cannot" not in text and "E0" not in text, text
    k.expect(r"up \d+\.\d{3} s\n", what="the uptime that hit the hardware breakpoint")
    assert_running(k)


def test_watchpoints_stop_after_the_access_and_refuse_the_debuggers_data(kprof_factory):
    """`watch` and `awatch` are the debug registers' (Z2, Z4): the console's reader writes input_tail as it takes
    a typed byte, and gdb shows the old and new value where it happened. A read-only watchpoint (rwatch: x86
    has none), one on the debugger's own data (the COM2 transport's flag for a '$' it took) and one on what every trap
    touches before the debugger runs (a CPU's interrupt depth in percpu_area: armed, the machine hung in the
    first interrupt's #DB and its #DB's; an AP's NMI stack, allocated apart from it) are refused at the continue,
    and the machine stays stopped for gdb to go on."""
    k = kprof_factory(gdb=True)
    g = Gdb(k, ["awatch packet_start_taken", "continue", "delete", "rwatch input_head", "continue", "delete",
                "watch percpu_area[1].irq_depth", "continue", "delete",
                "watch -location *(long *)percpu_area[1].ist_stacks[0]", "continue", "delete",
                "print input_tail", "watch input_tail", mark("resuming"), "continue", "bt 2",
                "awatch input_tail", "delete 5", mark("again"), "continue", "delete", "detach"])
    g.wait_mark("resuming")
    time.sleep(0.5)
    k.send("u")
    g.wait_mark("again")
    time.sleep(0.5)
    k.send("ptime\r")
    text = g.finish()
    assert text.count("Could not insert hardware watchpoint") == 4, "all four refusals:\n%s" % text
    before = int(re.search(r"(?m)^\$1 = (\d+)", text).group(1))
    m = re.search(r"hit Hardware watchpoint 5: input_tail\s+Old value = (\d+)\s+New value = (\d+)", text)
    assert m and (int(m.group(1)), int(m.group(2))) == (before, before + 1), "no write stop:\n%s" % text
    assert re.search(r"(?m)^#0 +(0x[0-9a-f]+ in )?console_read_char \(", text), "not where it was written:\n%s" % text
    assert re.search(r"hit Hardware access \(read/write\) watchpoint 6: input_tail\s+Value = %d" % (before + 1),
                     text), "no access stop:\n%s" % text
    k.expect(r"up \d+\.\d{3} s\n", what="the uptime typed around the two stops")
    assert_running(k)


def test_breakpoint_every_cpu_hits_at_once(kprof_factory):
    # Four busy tasks run burn_middle on all CPUs: each continue finds several CPUs at the breakpoint at once,
    # one reports it and the others wait stopped; stepping and a debug-register breakpoint work under load.
    k = kprof_factory(gdb=True)
    assert "started 4 tasks" in k.cmd("burn 30000 4")
    continues = 6
    text = run_gdb(k, ["break burn_middle"] + ["continue", "info threads"] * continues +
                   ["stepi", "next", "delete", "hbreak burn_inner", "continue", "continue", "delete", "detach"])
    # (`next` may stop early too: another CPU reaching burn_middle while it runs.)
    hits = re.findall(r"Thread (\d+) hit Breakpoint 1, burn_middle \(", text)
    assert continues <= len(hits) <= continues + 1, "expected %d hits of burn_middle:\n%s" % (continues, text)
    assert len(re.findall(r"Thread \d+ hit Breakpoint 2, burn_inner \(", text)) == 2, text
    listed = [threads(block) for block in text.split("Target Id")[1:]]
    assert len(listed) == continues and all(len(t) == 4 for t in listed), "info threads:\n%s" % text
    assert all(name == "burn" for t in listed for _, _, name in t), "not every CPU was in burn:\n%s" % text
    assert_running(k)
    assert re.search(r"burn: (4 tasks running|last run 4 tasks)", k.cmd("burn")), "burn was lost"


# ---- monitor commands -------------------------------------------------------------------------------------------

def test_monitor_rdmsr_wrmsr_and_pmu_answer_and_faults_are_errors(kprof_factory):
    k = kprof_factory(gdb=True)
    text = run_gdb(k, ["monitor help", "monitor rdmsr 0x1b", "monitor rdmsr cpu 3 0x1b",
                       # IA32_PKRS takes 32 bits: QEMU raises #GP for more, on any CPU.
                       "monitor wrmsr 0x6e1 0xffffffff00000000", "monitor wrmsr cpu 2 0x6e1 0x100000000",
                       "monitor rdmsr cpu 9 0x1b", "monitor pmu", "detach"])
    # IA32_APIC_BASE: bit 11 (enabled) everywhere, bit 8 (BSP) on CPU 0 only.
    v0 = int(re.search(r"cpu 0 msr 0x1b = (0x[0-9a-f]+)", text).group(1), 16)
    v3 = int(re.search(r"cpu 3 msr 0x1b = (0x[0-9a-f]+)", text).group(1), 16)
    assert v0 & 0x800 and v0 & 0x100, text
    assert v3 & 0x800 and not v3 & 0x100, text
    assert "error: cpu 0 msr 0x6e1: wrmsr faulted" in text, text
    assert "error: cpu 2 msr 0x6e1: wrmsr faulted" in text, text
    assert "error: no cpu '9'" in text, text
    for cpu in range(4):
        assert re.search(r"(?m)^cpu %d: armed (yes|no)" % cpu, text), "monitor pmu lacks cpu %d:\n%s" % (cpu, text)
    assert re.search(r"(?m)^  counter +MSR 0x[0-9a-f]+ = 0x[0-9a-f]+", text), text
    assert re.search(r"(?m)^  lvt perfcnt +LAPIC 0x340 = 0x[0-9a-f]+: delivery \w+, (un)?masked", text), text
    assert_running(k)


# ---- bad input ----------------------------------------------------------------------------------------------

def test_unmapped_and_noncanonical_memory_and_breakpoints_are_errors(kprof_factory):
    k = kprof_factory(gdb=True)
    text = run_gdb(k, ["x/4x 0x0", "x/4x 0x8000000000000000", "x/4x 0xffff800000000000", "x/4x 0x100000000",
                       "x/2x 0xfffffffffffffffc", "set {int}0 = 1", "set {int}0x8000000000000000 = 1",
                       "print sizeof(int)", "break *0x8000000000000000", mark("planted"), "continue",
                       "delete", "info threads", "detach"])
    for addr in ("0x0", "0x8000000000000000", "0xffff800000000000", "0x100000000", "0xfffffffffffffffc"):
        assert "Cannot access memory at address %s" % addr in text, "%s:\n%s" % (addr, text)
    assert text.count("Cannot access memory at address") >= 7, text
    assert re.search(r"Cannot insert breakpoint 1\.|Cannot access memory at address 0x8000000000000000\n.*"
                     r"breakpoint", text, re.S), "planting at a non-canonical address did not fail:\n%s" % text
    assert len(threads(text)) == 4, text
    assert_running(k)


def test_junk_bad_checksums_and_long_packets_leave_the_kernel_running_or_waiting(kprof_factory):
    k = kprof_factory(gdb=True)
    w = Wire(k)
    # Line noise while the machine runs (no '$' or Ctrl-C; acks '+' nothing waits for among it): dropped, the
    # machine runs on.
    w.send(bytes(b for b in range(256) if b not in b"$\x03") * 4)
    assert_running(k)
    # A packet start stops it; a bad checksum is refused with '-', junk between packets skipped.
    w.send(b"$qSupported#00")
    w.expect(rb"-")
    w.send(b"\x00\xff garbage \x7f")
    assert k.quiet_for(1.0), "the kernel runs after a '$' arrived"
    reply = w.request("?")
    assert re.match(rb"[ST][0-9a-f]{2}", reply), reply
    # Longer than the advertised PacketSize: an error reply, the session goes on.
    # (70 KB in: up to ~15 s over COM2 while its receive FIFO triggers at one byte)
    assert w.request("m" + "1" * 70000, timeout=60).startswith(b"E"), "an over-long packet was not refused"
    assert w.request("m0,4").startswith(b"E"), "reading page 0 did not fail"
    assert w.request("m8000000000000000,4").startswith(b"E"), "a non-canonical read did not fail"
    assert w.request("M0,1:00").startswith(b"E"), "writing page 0 did not fail"
    assert w.request("Z0,8000000000000000,1").startswith(b"E"), "a non-canonical breakpoint was planted"
    assert w.request("Z0,0,1").startswith(b"E"), "a breakpoint on page 0 was planted"
    assert w.request("vNoSuchPacket") == b"", "an unknown packet did not get the empty reply"
    assert w.request("D") == b"OK"
    w.close()
    assert_running(k)


def test_gdb_killed_mid_session_leaves_the_kernel_waiting_for_the_next(kprof_factory):
    k = kprof_factory(gdb=True)
    g = Gdb(k, ["info threads", mark("attached"), "python import time; time.sleep(50)"])
    g.wait_mark("attached")
    g.kill()
    # Nobody detached: the kernel waits, stopped, for a debugger -- alive, not crashed.
    k.send("uptime\r")
    assert k.quiet_for(1.5), "the kernel ran on without a detach:\n%s" % k.log[-500:]
    # gdb killed while the machine runs (after a continue) leaves it running.
    g = Gdb(k, ["info threads", mark("continued"), "continue &", "python import time; time.sleep(50)"])
    g.wait_mark("continued")
    k.expect(r"up \d+\.\d{3} s\n", what="the uptime typed while stopped, answered once gdb continued")
    g.kill()
    assert_running(k)
    text = run_gdb(k, ["info threads", "detach"])
    assert len(threads(text)) == 4, text
    assert_running(k)


# ---- gdb=wait, gdb=panic -----------------------------------------------------------------------------------

def test_gdb_wait_stops_boot_until_gdb_continues(kprof_factory):
    k = kprof_factory(gdb=True, cmdline="gdb=wait", boot=False)
    k.start()
    k.expect(r"(?m)^gdb: waiting for gdb on COM2\n", 60, what="the gdb=wait line")
    assert k.quiet_for(1.0), "the kernel went on booting without gdb"
    text = run_gdb(k, ["info threads", "bt", "detach"])
    assert len(threads(text)) == 4, text
    assert re.search(r"in kmain \(", text), "bt does not reach kmain:\n%s" % text
    k.wait_ready()
    assert_running(k)


def test_gdb_panic_stops_in_the_debugger_with_every_cpu(kprof_factory):
    k = kprof_factory(gdb=True, cmdline="gdb=panic")
    k.send("panic\r")
    k.expect(r"(?m)^panic: requested from the shell\n", what="the panic line")
    text = run_gdb(k, ["info threads", "bt", "continue", "kill"])
    assert len(threads(text)) == 4, text
    assert re.search(r"(?m)^#\d+ +0x[0-9a-f]+ in cmd_panic \(", text), "bt does not reach cmd_panic:\n%s" % text
    assert "received signal SIGABRT" in text, "a continue after a panic did not stop again:\n%s" % text
    # `kill` only detaches: a panicked machine cannot run, so it waits, stopped, for the next debugger ...
    assert k.alive(), "QEMU exited on gdb's kill"
    k.send("uptime\r")
    assert k.quiet_for(1.5), "the panicked kernel ran on after gdb's kill:\n%s" % k.log[-500:]
    # ... which finds it stopped at the panic, and `monitor poweroff` powers it off.
    g = Gdb(k, ["info threads", "monitor poweroff"])
    text = g.finish(check=False)  # the power goes before the command's OK: gdb sees its connection close
    assert len(threads(text)) == 4, text
    assert re.search(r"(?m)^poweroff: powering the machine off$", text), "monitor poweroff said nothing:\n%s" % text
    k.expect_eof(60)
