"""Boot, CPUs, tasks, stacks and the ways a kernel ends: kprof in QEMU with 4 CPUs and 256 MiB.

The module shares one booted kernel (`kernel`); the panic and poweroff tests boot their own (`fresh_kernel`).
Time windows are measured with the kernel's own counters and compared as ratios within one run, never
against fixed host timings.
"""

import re
import socket

from kprof_qemu import (HostStarved, assert_poweroff_ends_qemu, assert_uptime_keeps_pace, cpus_table, nm_symbols, poll,
                        ps_table, unstarved)

# Kernels this module boots (conftest.py fails a boot past BOOTS), by the test that boots them -- a module kernel
# counts for the first test that uses it, a test named alone needs a fresh one: test_boot_reaches_ready_with_4_cpus
# 1, test_panic_prints_a_symbolised_backtrace_and_stops 1, test_poweroff_ends_qemu 1,
# test_a_host_port_taken_before_qemu_binds_it_is_picked_again 1.
BOOTS = 4

CPUS = 4


def test_boot_reaches_ready_with_4_cpus(kernel):
    assert kernel.ready_line.startswith("ready:")
    assert kernel.cpus == CPUS, "ready line %r does not say %d cpus" % (kernel.ready_line, CPUS)
    assert "panic" not in kernel.boot_log.lower(), "the boot log mentions a panic"


def test_boot_log_says_bios_and_vga_text(kernel):
    # The BIOS boot (SeaBIOS, GRUB's i386-pc image) keeps VGA text mode, so the console is mirrored there;
    # test_uefi.py checks the UEFI boot's account of the same ISO.
    m = re.search(r"(?m)^boot: (.*)$", kernel.boot_log)
    assert m, "no `boot:` line in the boot log:\n%s" % kernel.boot_log
    assert re.fullmatch(r"BIOS, GRUB [^,]+, console serial \+ VGA text", m.group(1)), \
        "the BIOS boot says %r" % m.group(0)


def test_cpus_shows_all_online_with_ticking_timers(kernel):
    first = cpus_table(kernel)
    assert sorted(first) == list(range(CPUS)), "cpus lists %s" % sorted(first)
    assert all(row[1] == "yes" for row in first.values()), "not every CPU online: %s" % first
    apics = [row[0] for row in first.values()]
    assert len(set(apics)) == CPUS, "APIC ids not distinct: %s" % apics
    # Every CPU's own LAPIC timer ticks: all four counts rise.
    poll("every CPU's TICKS rising",
         lambda: all(row[2] > first[c][2] for c, row in cpus_table(kernel).items()))


def test_ps_shows_an_idle_task_per_cpu_and_the_shell(kernel):
    tasks = ps_table(kernel)
    pids = [t[0] for t in tasks]
    assert len(pids) == len(set(pids)), "duplicate pids: %s" % tasks
    idle_cpus = sorted(t[1] for t in tasks if t[3] == "idle")
    assert idle_cpus == list(range(CPUS)), "idle tasks on cpus %s, want one on each of 0..%d" % (idle_cpus, CPUS - 1)
    shells = [t for t in tasks if t[3] == "shell"]
    assert len(shells) == 1, "shell tasks: %s" % shells
    assert shells[0][2].lower().startswith("run"), "the shell runs ps but ps says %r" % (shells[0],)
    assert all(0 <= t[1] < CPUS for t in tasks), "a task on a CPU that does not exist: %s" % tasks


def test_uptime_rises_with_host_time(kernel):
    assert_uptime_keeps_pace(kernel, CPUS)


def test_burn_500_4_keeps_all_four_cpus_busy(kernel):
    def window(most, least, every):
        """`cpus` before and after a window that ends once the fastest CPU has ticked `most` times and the
        slowest `least` times (vCPUs are host threads; one can fall behind): {cpu: (dticks, dbusy)}."""
        a = cpus_table(kernel)
        box = {}

        def long_enough():
            box["b"] = b = cpus_table(kernel)
            d = [b[c][2] - a[c][2] for c in range(CPUS)]
            return max(d) >= most and min(d) >= least

        poll("a window of %d ticks" % most, long_enough, timeout=20, every=every)
        b = box["b"]
        return {c: (b[c][2] - a[c][2], b[c][3] - a[c][3]) for c in range(CPUS)}

    def burn_ran():
        """`burn` once the last run has finished: its line."""
        return poll("`burn` reporting the finished run",
                    lambda: (lambda o: o if o.startswith("burn: last run") else None)(kernel.cmd("burn").strip()))

    def attempt():
        idle = window(30, 30, 0.1)
        out = kernel.cmd("burn 500 4")
        m = re.fullmatch(r"burn: started 4 tasks for 500 ms \(pids ((?:\d+ ?){4})\)", out.strip())
        assert m, "burn 500 4 said %r" % out
        pids = sorted(int(p) for p in m.group(1).split())
        busy = window(20, 5, 0)
        burners = sorted(t[0] for t in ps_table(kernel) if t[3] == "burn")
        report = "\n".join("cpu %d: idle window %d/%d ticks busy, burn window %d/%d ticks busy"
                           % (c, idle[c][1], idle[c][0], busy[c][1], busy[c][0]) for c in range(CPUS))
        # The window must lie inside the 500 ms (50 ticks) the tasks run, or idle ticks after it would count: a
        # window that outlasted it is a host too slow to measure in (HostStarved: tried again once the run ended).
        longest = max(busy[c][0] for c in range(CPUS))
        if longest > 45:
            burn_ran()
            raise HostStarved("the measuring window outlasted the burn (%d ticks; the host is too slow to "
                              "measure):\n%s" % (longest, report))
        for c in range(CPUS):
            idle_frac = idle[c][1] / idle[c][0]
            burn_frac = busy[c][1] / busy[c][0]
            assert burn_frac >= 0.75 and burn_frac >= idle_frac + 0.5, \
                "CPU %d not kept busy by burn 500 4:\n%s" % (c, report)
        return pids, burners

    pids, burners = unstarved(kernel, attempt, "burn 500 4 measured in a window of its ticks")

    # The run finishes, says what it did, and its tasks are gone.
    last = burn_ran()
    m = re.fullmatch(r"burn: last run 4 tasks, (\d+) iterations in (\d+) ms, (\d+) iterations/s", last)
    assert m, "burn said %r" % last
    iterations, ms, rate = map(int, m.groups())
    assert iterations > 0 and 500 <= ms <= 2000, "burn 500 4 ran %d iterations in %d ms" % (iterations, ms)
    assert abs(rate - iterations * 1000 / ms) <= 0.02 * rate + 1, "burn said %r" % last
    assert set(burners) <= set(pids), "ps showed burn pids %s, burn started %s" % (burners, pids)
    poll("the burn tasks leaving ps", lambda: not [t for t in ps_table(kernel) if t[3] == "burn"])


def test_stacks_reports_headroom_for_every_task(kernel):
    lines = [l for l in kernel.cmd("stacks").split("\n") if l.strip()]
    assert lines and lines[0].split() == ["PID", "NAME", "SIZE", "USED", "HEADROOM"], "stacks said:\n%s" % lines
    rows = []
    for l in lines[1:]:
        f = l.split()
        assert len(f) >= 5, "bad stacks row %r" % l
        rows.append((int(f[0]), " ".join(f[1:-3]), int(f[-3]), int(f[-2]), int(f[-1])))
    for pid, name, size, used, headroom in rows:
        assert size > 0 and 0 < used <= size, "pid %d (%s): size %d used %d" % (pid, name, size, used)
        assert headroom > 0, "pid %d (%s) has no stack headroom left (used %d of %d)" % (pid, name, used, size)
        assert used + headroom <= size, "pid %d (%s): used %d + headroom %d > size %d" % (pid, name, used, headroom, size)
    ps_pids = sorted(t[0] for t in ps_table(kernel))
    assert sorted(r[0] for r in rows) == ps_pids, "stacks lists %s, ps lists %s" % ([r[0] for r in rows], ps_pids)


BACKTRACE = re.compile(r"^ {8}<- (\S+)\+0x([0-9a-f]+)$")


def test_panic_prints_a_symbolised_backtrace_and_stops(fresh_kernel):
    k = fresh_kernel
    k.send_line("panic")
    k.expect(r"(?m)^panic: requested from the shell\n", what="the panic line")
    k.expect(r"(?m)^ {8}<- shell_run_line\+0x[0-9a-f]+\n", what="a backtrace line for shell_run_line")
    k.quiet_for(1.0)  # the rest of the backtrace, then silence
    text = k.log.replace("\r", "")
    tail = text[text.index("panic: requested from the shell"):]
    frames = [l for l in tail.split("\n") if "<- " in l]
    assert frames, "no backtrace lines after the panic line"

    syms = nm_symbols()
    names = []
    for line in frames:
        m = BACKTRACE.match(line)
        assert m, "backtrace line %r is not `        <- Symbol+0xoff`" % line
        name, off = m.group(1), int(m.group(2), 16)
        assert name in syms, "backtrace names %r, which is not a function in build/kprof.elf" % name
        size = syms[name][1]
        assert off > 0 and (size == 0 or off <= size), \
            "%s+0x%x is outside %s (size 0x%x)" % (name, off, name, size)
        names.append(name)
    assert "cmd_panic" in names and "shell_run_line" in names, "backtrace: %s" % names
    assert names.index("cmd_panic") < names.index("shell_run_line"), "frames out of order: %s" % names

    # Stopped: the shell neither echoes nor answers, and QEMU has not reset or exited.
    k.send("help\r")
    assert k.quiet_for(1.5), "the kernel still answered after the panic:\n%s" % k._tail()
    assert k.alive(), "QEMU exited after the panic (a stopped kernel halts, it does not reset)"


def test_poweroff_ends_qemu(fresh_kernel):
    # ACPI S5 makes QEMU exit 0; the debug-exit device would give an odd status.
    assert_poweroff_ends_qemu(fresh_kernel)


def test_a_host_port_taken_before_qemu_binds_it_is_picked_again(kprof_factory):
    """The harness's own free ports are a guess (another lane's socket can take one between the pick and QEMU's
    bind, as a loaded run saw): a QEMU that could not bind its forwards is started again on new ones, and the
    boot is counted once (conftest's BOOTS)."""
    k = kprof_factory(smp=1, mem=128, udp=True, gdb=True, boot=False)
    taken = (k.udp_port, k.gdb_port)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp, socket.socket() as tcp:
        udp.bind(("127.0.0.1", k.udp_port))
        tcp.bind(("127.0.0.1", k.gdb_port))
        tcp.listen()
        k.start()
        k.wait_ready()
    assert k.udp_port not in taken and k.gdb_port not in taken, (taken, k.udp_port, k.gdb_port)
    assert re.fullmatch(r"up \d+\.\d{3} s", k.cmd("uptime"))
