"""A debugger that quits without detaching leaves the machine running (issue 40): the stub takes gdb's `k` as a
detach, as Linux's kgdb does, and powering off is the one explicit `monitor poweroff`.

- `lldb --batch` stops at the first command that fails and quits, which sends `k`: over COM2 and over UDP the
  console answers after, and over UDP the session is over (a new gdb from another port attaches at once, not
  after the transport's 60 s).
- `gdb -batch` that ends without `detach`, and gdb's own `kill`, leave the console answering; a new gdb then
  attaches and sees every CPU.
- `monitor poweroff` powers the machine off: QEMU exits.

gdb and lldb are kprof_gdb's Gdb and Lldb; each test boots its own kernel, for each one ends a session in a way
the next must not depend on.
"""

import re

from kprof_gdb import Gdb, Lldb, UdpGdb, assert_running, boot_udp, run_gdb, threads
from kprof_qemu import KprofError

# Kernels this module boots (conftest.py fails a boot past BOOTS), by the test that boots them -- a test named
# alone needs a fresh one: test_lldb_batch_quitting_on_a_failing_command_leaves_the_console_answering 1,
# test_lldb_over_udp_quitting_on_a_failing_command_ends_the_session_and_the_machine_runs 1,
# test_gdb_batch_without_detach_and_gdb_kill_leave_the_console_answering 1,
# test_monitor_poweroff_powers_the_machine_off 1.
BOOTS = 4

CPUS = 4
# A `memory read` whose expression names nothing: lldb says error and its batch stops there.
FAILING = "memory read &no_such_symbol_in_kprof"
NEVER_RUN = "register read rip"


def lldb_quits_on_the_failing_command(k, connect):
    """lldb --batch: attach, list the threads, run FAILING, and (never) NEVER_RUN; then QEMU runs on and the
    console answers (a failure names the packets lldb sent last: did its `k` go?). Returns what lldb printed."""
    s = Lldb(connect, ["thread list", FAILING, NEVER_RUN])
    text = s.finish(check=False)
    assert s.returncode != 0, "lldb did not fail on %r:\n%s" % (FAILING, text)
    listed = re.findall(r"(?m)^[* ] thread #(\d+): tid = 0x[0-9a-f]+", text)
    assert len(listed) == CPUS, "lldb lists %d threads, not one per CPU:\n%s" % (len(listed), text)
    assert re.search(r"(?m)^error: .*no_such_symbol_in_kprof", text), "no error for %r:\n%s" % (FAILING, text)
    assert "(lldb) %s" % NEVER_RUN not in text, "lldb went on after the failing command:\n%s" % text
    assert k.alive(), "QEMU exited when lldb quit"
    try:
        assert_running(k)
    except KprofError as e:
        raise KprofError("%s\n%s" % (e, s.packets_tail())) from None
    return text


def every_cpu_then_running(k, text):
    """A debugger's output listed every CPU as a thread, and the machine answers its console after it left."""
    assert len(threads(text)) == CPUS, text
    assert k.alive(), "QEMU exited when the debugger left:\n%s" % text
    assert_running(k)
    return text


def test_lldb_batch_quitting_on_a_failing_command_leaves_the_console_answering(kprof_factory):
    k = kprof_factory(gdb=True, smp=CPUS)
    lldb_quits_on_the_failing_command(k, "gdb-remote 127.0.0.1:%d" % k.gdb_port)
    # The stub waits for the next debugger as before.
    every_cpu_then_running(k, run_gdb(k, ["info threads", "detach"]))


def test_lldb_over_udp_quitting_on_a_failing_command_ends_the_session_and_the_machine_runs(kprof_factory):
    k = boot_udp(kprof_factory, smp=CPUS)
    lldb_quits_on_the_failing_command(k, "process connect udp://127.0.0.1:%d" % k.gdb_udp_port)
    # lldb's peer is forgotten: gdb, from another port, is taken at once (a peer kept would shut it out for 60 s,
    # past this gdb's whole run); and its `kill` over UDP ends its session the same way.
    every_cpu_then_running(k, UdpGdb(k, ["info threads", "kill"]).finish())
    every_cpu_then_running(k, UdpGdb(k, ["info threads", "detach"]).finish())


def test_gdb_batch_without_detach_and_gdb_kill_leave_the_console_answering(kprof_factory):
    k = kprof_factory(gdb=True, smp=CPUS)
    # gdb -batch reaching the end of its commands still attached: it leaves as it sees fit.
    every_cpu_then_running(k, run_gdb(k, ["info threads"]))
    # gdb's `kill` sends `k`.
    text = every_cpu_then_running(k, run_gdb(k, ["info threads", "kill"]))
    assert re.search(r"\[Inferior 1 \(Remote target\) killed\]", text), "gdb did not kill:\n%s" % text
    every_cpu_then_running(k, run_gdb(k, ["info threads", "detach"]))


def test_monitor_poweroff_powers_the_machine_off(kprof_factory):
    k = kprof_factory(gdb=True, smp=CPUS)
    g = Gdb(k, ["info threads", "monitor poweroff"])
    text = g.finish(check=False)  # the power goes before the command's OK: gdb sees its connection close
    assert len(threads(text)) == CPUS, text
    assert re.search(r"(?m)^poweroff: powering the machine off$", text), "monitor poweroff said nothing:\n%s" % text
    k.expect_eof(60)
