"""The task dump in QEMU: `tasks` on the console and over the UDP shell, and `prof tasks` in gdb on the stopped
machine (kprof in QEMU with 2 CPUs, the UDP shell and kprof's gdb stub on COM2).

- Every live task once, in pid order, the same tasks `ps` lists, each with a chain: an idle task per CPU marked
  idle=yes; the task running `tasks` running, its chain from cmd_tasks through the shell that ran it; the reaper
  and the UDP shell waiting (on a task, on the network) in their loops.
- Typed over the UDP shell, the console's shell waits on input in console_read_char; while the console runs
  `netload sink PORT 10` it waits on the network in netload_finish, under cmd_netload.
- `burn 3000 2` on 2 CPUs puts a burn task on each: the one on the CPU running `tasks` is runnable and its chain
  runs through the burn loop (burn_task, task_entry_trampoline), the other runs on its CPU and says so -- or, if
  it was between ticks, shows the same loop. A `label PID job=a span=5` shows in its header as `ps` prints it.
- gdb stopped mid-burn (`prof tasks`, scripts/prof_tasks.py): the same tasks, pids and names, as a `tasks` the
  console printed just before; the tasks waiting in both show the same chains; the burn tasks, running on their
  CPUs, have their chains from the stopped registers.

Only content and order are asserted, never durations (wait_ms is a number, nothing more). The module shares one
kernel: every test reads, or starts work that ends by itself (burn, netload), and waits for it to end.
"""

import os
import sys

import pytest

from kprof_gdb import WRAPPER, Gdb, assert_running, mark
from kprof_net import booted_with_dhcp, console_command, udp_cmd
from kprof_qemu import TOP, Kprof, poll, ps_rows
from kprof_report import burn_pids, wait_burn_done, wait_no_burn

sys.path.insert(0, os.path.join(TOP, "scripts"))
import kprof_tasks as kt  # noqa: E402

# Kernels this module boots (conftest.py fails a boot past BOOTS): the module's one shared kernel.
BOOTS = 1

CPUS = 2
PROF_PY = os.path.join(TOP, "scripts", "prof.py")
BURN_LOOP = ["burn_middle", "burn_outer", "burn_task", "task_entry_trampoline"]  # callers, innermost first


@pytest.fixture(scope="module")
def k(request):
    yield from booted_with_dhcp(Kprof(smp=CPUS, mem=256, udp=True, netload=True, gdb=True, name=request.node.name))


def dump(text):
    """The parsed tasks of a dump (kprof_tasks.parse checks every line's form), in pid order with no pid twice."""
    tasks = kt.parse(text)
    pids = [t.pid for t in tasks]
    assert pids == sorted(set(pids)), "tasks not in pid order, or a pid twice: %s\n%s" % (pids, text)
    return tasks


def named(tasks, name):
    found = [t for t in tasks if t.name == name]
    assert len(found) == 1, "want one task %s, found %d" % (name, len(found))
    return found[0]


def callers(t):
    """The return addresses' functions of a chain, innermost first."""
    return [text.split("+", 1)[0] for kind, text in t.frames if kind == "<-"]


def assert_shell_chain(t, shell_loop):
    """A task running `tasks`: running, its chain from cmd_tasks through shell_run_line and its shell's loop."""
    assert t.activity == "running" and t.labels == "cmd=tasks", t
    assert [kind for kind, _ in t.frames] == ["<-"] * len(t.frames), t
    assert kt.symbols(t) == ["cmd_tasks", "shell_run_line", shell_loop, "task_entry_trampoline"], t


def assert_waits(t, wait, chain):
    assert t.activity == "waiting" and t.wait == wait and t.wait_ms is not None, t
    assert kt.symbols(t) == chain, t


def test_tasks_lists_every_task_in_pid_order_with_its_chain(k):
    before = [(pid, name) for pid, _, _, name, _ in ps_rows(k)]
    tasks = dump(k.cmd("tasks"))
    assert [(t.pid, t.name) for t in tasks] == before, "tasks and ps list different tasks"
    idle = [t for t in tasks if t.idle]
    assert sorted(t.cpu for t in idle) == list(range(CPUS)) and {t.name for t in idle} == {"idle"}, idle
    assert not any(t.idle for t in tasks if t.name != "idle")
    assert_shell_chain(named(tasks, "shell"), "console_shell")
    assert_waits(named(tasks, "reaper"), "task", ["reaper", "task_entry_trampoline"])
    assert_waits(named(tasks, "udpsh"), "net", ["udp_shell", "task_entry_trampoline"])
    for t in tasks:
        if t.note is not None:  # only a task running on another CPU has no chain here
            assert t.activity == "running" and t.note == "running on cpu %d" % t.cpu and t.cpu != 0, t


def test_over_udp_the_console_shell_waits_on_input(k):
    tasks = dump(udp_cmd(k.udp_port, "tasks"))
    assert_waits(named(tasks, "shell"), "input", ["console_read_char", "console_shell", "task_entry_trampoline"])
    assert_shell_chain(named(tasks, "udpsh"), "udp_shell")


def test_burn_tasks_show_the_burn_loop_and_their_labels(k):
    wait_no_burn(k)
    pids = burn_pids(k.cmd("burn 3000 %d" % CPUS))
    try:
        assert k.cmd("label %d job=a span=5" % pids[0]) == "pid %d labels job=a span 5" % pids[0]
        # Between the burn's start and its task's first turn on its CPU, the chain is the trampoline's alone:
        # look again until the burn task on the shell's CPU has run
        seen = {}

        def burns_ran():
            seen["tasks"] = dump(k.cmd("tasks"))
            return all(len(t.frames) > 1 for t in seen["tasks"] if t.pid in pids and t.note is None)
        poll("the burn tasks' first turn", burns_ran, timeout=10, every=0.1)
        tasks = seen["tasks"]
        burns = [t for t in tasks if t.pid in pids]
        assert [t.pid for t in burns] == pids and {t.name for t in burns} == {"burn"}, burns
        assert sorted(t.cpu for t in burns) == list(range(CPUS)), "one burn task per CPU: %s" % burns
        for t in burns:
            if t.note is not None:
                assert t.activity == "running" and t.note == "running on cpu %d" % t.cpu, t
            else:
                assert t.activity in ("running", "runnable") and t.frames[0][0] == "at", t
                rest = callers(t)
                assert rest == BURN_LOOP[len(BURN_LOOP) - len(rest):] and len(rest) >= 2, \
                    "not the burn loop's chain: %s" % (t,)
        here = [t for t in burns if t.cpu == 0]  # the shell's CPU, busy with `tasks`: its burn waits its turn
        assert here[0].activity == "runnable" and here[0].note is None, here
        labels = {pid: labels for pid, _, _, _, labels in ps_rows(k)}
        assert burns[0].labels == "job=a,span=5" == labels[pids[0]], (burns[0], labels)
        assert burns[1].labels == "-" == labels[pids[1]], (burns[1], labels)
    finally:
        wait_burn_done(k)


def test_a_netload_sink_waits_on_the_network(k):
    line = "netload sink %d 10" % k.netload_port
    with console_command(k, line, 10):
        k.expect(r"netload: sink on UDP port %d for 10 s\n" % k.netload_port, what="netload's start line")
        tasks = dump(udp_cmd(k.udp_port, "tasks"))
        k.expect(r"netload sink: [^\n]*\n> ", timeout=40, what="the sink's report and the prompt")
    shell = named(tasks, "shell")
    assert_waits(shell, "net", ["netload_finish", "cmd_netload", "shell_run_line", "console_shell",
                                "task_entry_trampoline"])
    assert shell.labels == "cmd=netload", shell
    assert_shell_chain(named(tasks, "udpsh"), "udp_shell")


def gdb_prof_tasks(k, tmp_path, before_attach):
    """`prof tasks` from a batch gdb on COM2; before_attach() runs once gdb has started and loaded the ELF, and
    gdb attaches (stopping the machine) the moment it returns. The dump's text."""
    wrapper = tmp_path / "kp_run.py"
    wrapper.write_text(WRAPPER)
    g = Gdb(k, ["source %s" % PROF_PY, "source %s" % wrapper, "python kp_run('tasks', 'prof tasks')", "detach"],
            pre=[mark("gate") + "; sys.stdin.readline()"])
    try:
        g.wait_mark("gate")
        before_attach()
        g.proc.stdin.write(b"\n")
        g.proc.stdin.flush()
        text = g.finish()
    finally:
        g.kill()
    begin = text.find("@@begin tasks ")
    end = text.find("@@end tasks\n")
    assert 0 <= begin < end, "gdb ran no prof tasks:\n%s" % text
    status, _, body = text[begin + len("@@begin tasks "):end].partition("\n")
    assert status == "ok", "prof tasks failed:\n%s" % body
    return body


def test_prof_tasks_in_gdb_matches_the_console_on_a_stopped_machine(k, tmp_path):
    """How the running tasks may differ: the console names a task running on another CPU and cannot walk it,
    and the one it walks on its own CPU is wherever its last tick left it; gdb walks each CPU's current task from
    its stopped registers, a moment later. The task that ran `tasks` has gone back to its wait by then. The tasks
    that wait in both dumps have not moved: their chains are compared whole."""
    wait_no_burn(k)
    seen = {}

    def burn_and_dump():
        seen["pids"] = burn_pids(k.cmd("burn 8000 %d" % CPUS))
        seen["console"] = dump(k.cmd("tasks"))
        # The prompt reaches the host while the shell may still be in its write path (the VGA mirror after
        # COM1): gdb stops the machine only once the shell is back in its wait, as the UDP shell sees it.
        poll("the console's shell back waiting for input",
             lambda: named(dump(udp_cmd(k.udp_port, "tasks")), "shell").activity == "waiting", timeout=10,
             every=0.05)
    try:
        stopped = dump(gdb_prof_tasks(k, tmp_path, burn_and_dump))
        assert_running(k)
        console, pids = seen["console"], seen["pids"]
        assert [(t.pid, t.name) for t in stopped] == [(t.pid, t.name) for t in console], \
            "gdb and the console list different tasks"
        compared = 0
        for c, g in zip(console, stopped):
            assert (g.cpu, g.idle) == (c.cpu, c.idle), (c, g)
            if c.activity == g.activity == "waiting":
                assert (g.wait, g.frames, g.labels) == (c.wait, c.frames, c.labels), (c, g)
                assert g.wait_ms is not None, g  # kprof's stub keeps the time it stopped the machine
                compared += 1
        assert compared >= 2, "fewer than two tasks waited in both dumps:\n%s\n%s" % (console, stopped)
        assert_waits(named(stopped, "shell"), "input", ["console_read_char", "console_shell",
                                                        "task_entry_trampoline"])
        for g in (t for t in stopped if t.pid in pids):
            assert g.note is None and g.frames[0][0] == "at", g  # from its registers, or its saved context
            # stopped in the burn loop's code, the chain is the loop's; a CPU stopped inside an interrupt
            # handler shows the handler's chain instead
            leaf = kt.symbols(g)[0]
            if leaf in ("burn_inner", "burn_middle", "burn_outer", "burn_task"):
                # stopped in burn_task's own code (a loaded pass: burn_task+0x81), burn_task is the leaf
                want = ["task_entry_trampoline"] if leaf == "burn_task" else ["burn_task", "task_entry_trampoline"]
                assert callers(g)[-len(want):] == want, g
    finally:
        wait_burn_done(k)
