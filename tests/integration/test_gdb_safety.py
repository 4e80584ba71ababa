"""The gdb stub safe from its user (issue 15 item 5): a breakpoint anywhere, then continue, stepi, a memory read
and Ctrl-C, and the machine stays up with its console answering.

Which functions: every function symbol of the debugger's own code -- between __debugger_text_start and
__debugger_text_end in the ELF, never a hand list -- where Z0 and Z1 must be refused (E01); and a sample of the
rest of the kernel: the functions the debugger's code calls directly that lie outside it (read from the
disassembly: the edge of the section, where a missing function would show), plus functions drawn with a fixed
seed from the whole text. For each, over one connection: Z0, continue (to the hit, or Ctrl-C after a moment),
the breakpoint removed as gdb removes it before stepping, stepi, a memory read of the function's first bytes
(which must be the ELF's, never a planted int3), continue, the console answers, Ctrl-C. Under TCG a boot is
costly, so many functions share one boot; a failure boots a fresh kernel for the rest, and every failure is
reported at the end.

The short sweep (part of `make test`) takes a seeded sample through the whole cycle: two of the debugger's own
functions, two of the edge and one other; KPROF_GDB_SWEEP=full (`make gdb-sweep`, several minutes) takes every own
function, the whole edge and sixty others. The full form asks every own function's Z0 and Z1 (and is refused); the
short form asks the eight functions at each end of the section and a seeded forty of the rest, and checks that the
nearest function outside each end takes a breakpoint.

Also here: a 4096-byte write (X, and M held to 3x) takes no more than twice a 4096-byte read (m), each at its best
of 11 interleaved rounds on one boot (the medians are printed: on a loaded host they mostly measure the host).
"""

import os
import random
import re
import statistics
import struct
import subprocess
import time

import pytest

from kprof_qemu import ELF, HostStarved, KprofError, host_steal_ticks, nm_symbols, run_queue_wait_ns, unstarved
from kprof_rsp import Rsp

# Kernels this module boots (conftest.py fails a boot past BOOTS), by the test that boots them -- a module kernel
# counts for the first test that uses it, a test named alone needs a fresh one:
# test_a_4096_byte_write_takes_at_most_twice_a_read 1,
# test_every_own_function_refuses_breakpoints_and_a_sample_survives_the_cycle 2,
# test_register_writes_that_would_crash_the_cpu_are_refused 1,
# test_scheduler_locking_continue_runs_one_cpu_and_ctrl_c_stops_it 1, test_the_issues_reproductions 1.
BOOTS = 6

FULL = os.environ.get("KPROF_GDB_SWEEP") == "full" or bool(os.environ.get("KPROF_FULL"))
SEED = 15                           # issue 15: the sample is the same on every run
# What goes through the whole cycle (breakpoint, continue, stepi, read, console, Ctrl-C), about 3 s a function
# under TCG. `make gdb-sweep` (FULL): every function of the debugger's own code, every function its code calls
# outside its section (the edge: what a breakpoint can really break), and 60 others. `make test` (short): a seeded
# sample of each kind, so a cycle that breaks the machine for every function, or for the edge, fails here too.
OTHERS_SAMPLED = 60 if FULL else 1
OWN_CYCLED = None if FULL else 2    # own functions taken through the whole cycle (None: all)
EDGE_CYCLED = None if FULL else 2   # edge callees taken through it (None: all)
# Whose Z0 and Z1 are asked (a request each, ~0.1 s over COM2 under TCG): every own function in the full form; in
# the short, the eight at each end of the section (where an off-by-one in its bounds would show) and a seeded 40
# of the rest, beside the nearest function outside each end, which must take a breakpoint.
OWN_ASKED = None if FULL else 40
HIT_WAIT = 0.6                      # how long a continue may run before Ctrl-C stops it
RW_ROUNDS = 11                      # reads and writes interleaved, each judged at its best round
RW_BUDGET_S = 20                    # per attempt, for quiet rounds while the host keeps disturbing them
QUIET_SHARE = 0.05                  # of a round lost to steal and run-queue waits, below which it is quiet


# ---- what to break on ---------------------------------------------------------------------------------------

def debugger_range(syms_all):
    out = subprocess.run(["nm", "--defined-only", ELF], check=True, capture_output=True, text=True).stdout
    marks = {}
    for line in out.splitlines():
        f = line.split()
        if len(f) == 3 and f[2] in ("__debugger_text_start", "__debugger_text_end", "__text_start", "__text_end"):
            marks[f[2]] = int(f[0], 16)
    return marks


def function_sets():
    """(own, others): [(name, addr)] of the debugger's own functions and of the rest of the text."""
    syms = nm_symbols()
    marks = debugger_range(syms)
    lo, hi = marks["__debugger_text_start"], marks["__debugger_text_end"]
    text_lo, text_hi = marks["__text_start"], marks["__text_end"]
    own, others = [], []
    for name, (addr, _size) in sorted(syms.items(), key=lambda kv: kv[1][0]):
        if name.startswith("__") or not text_lo <= addr < text_hi:
            continue
        (own if lo <= addr < hi else others).append((name, addr))
    return own, others, lo, hi


def edge_callees(lo, hi):
    """Functions outside [lo, hi) that code inside it calls directly: the edge of the debugger's code."""
    dis = subprocess.run(["objdump", "-d", "--no-show-raw-insn", "--start-address=%#x" % lo,
                          "--stop-address=%#x" % hi, ELF], check=True, capture_output=True, text=True).stdout
    names = set()
    for m in re.finditer(r"\bcall\s+([0-9a-f]+) <([A-Za-z_][\w.]*)>", dis):
        if not lo <= int(m.group(1), 16) < hi:
            names.add(m.group(2))
    return sorted(names)


_TEXT = []


def elf_bytes(addr, n):
    """n bytes of the kernel image at a text address, from the ELF's .text section (what memory must show).
    Read from the section headers, not objdump's dump: its first line from an unaligned address holds five
    groups, and a parse of four lost the last byte of isr_common."""
    if not _TEXT:
        with open(ELF, "rb") as f:
            elf = f.read()
        shoff, = struct.unpack_from("<Q", elf, 0x28)
        shentsize, shnum, shstrndx = struct.unpack_from("<HHH", elf, 0x3A)
        def header(i):
            return struct.unpack_from("<IIQQQQ", elf, shoff + i * shentsize)  # name, type, flags, addr, off, size
        names_off = header(shstrndx)[4]
        for i in range(shnum):
            name, _, _, sh_addr, sh_off, sh_size = header(i)
            if elf[names_off + name:elf.index(b"\0", names_off + name)] == b".text":
                _TEXT.append((sh_addr, elf[sh_off:sh_off + sh_size]))
    base, text = _TEXT[0]
    assert base <= addr and addr + n <= base + len(text), "%#x is not in .text" % addr
    return text[addr - base:addr - base + n]


# ---- one function through the cycle -------------------------------------------------------------------------

def assert_console(k):
    out = k.cmd("uptime")
    assert re.fullmatch(r"up \d+\.\d{3} s", out.strip()), "uptime said %r" % out


def assert_console_after_continue(k, rsp):
    """The console answers once gdb has continued; if not, the error says whether the machine stopped again on
    its own, with a stop reply waiting on COM2 for an ack (what a stale stop request did)."""
    try:
        assert_console(k)
    except KprofError as e:
        pending = rsp.pending_bytes()
        where = ""
        if re.search(rb"\$T[0-9a-f]{2}thread:", pending):
            try:
                _sig, thread = rsp.stop_reply(1.0)
                rip = rsp.request("Hg%x" % thread) == b"OK" and rsp.request("p10")
                where = "; thread %d stopped at rip %s" % (thread, rip and rip.decode())
            except (KprofError, AssertionError, OSError) as e2:
                where = "; asking where it stopped: %s" % e2
        raise KprofError("%s; COM2 meanwhile: %r%s; the packets before:\n%s"
                         % (e, pending, where, rsp.transcript()))


def cycle(k, rsp, name, addr, own):
    """Breakpoint, continue, stepi, read, continue, console, Ctrl-C: the machine is stopped at the start and
    at the end."""
    for z in ("Z0", "Z1"):
        reply = rsp.request("%s,%x,1" % (z, addr))
        if own:
            assert reply == b"E01", "%s %s (the debugger's own) answered %r, not E01" % (z, name, reply)
        elif z == "Z0":
            assert reply == b"OK", "Z0 %s answered %r" % (name, reply)
    if not own:
        rsp.request("z1,%x,1" % addr)
    rsp.resume("c")
    stop = rsp.stop_reply_within(HIT_WAIT)
    if stop is None:
        stop = rsp.interrupt()
    _sig, thread = stop
    # gdb takes its breakpoints out before a step and puts them back after.
    if not own:
        assert rsp.request("z0,%x,1" % addr) == b"OK"
    rsp.resume("vCont;s:%x;c" % thread)
    sig, _ = rsp.stop_reply()
    assert sig == 5, "stepi on thread %d after %s: signal %d" % (thread, name, sig)
    got = rsp.request("m%x,10" % addr)
    want = elf_bytes(addr, 16)
    assert bytes.fromhex(got.decode()) == want, "memory at %s reads %r, the ELF has %s" % (name, got, want.hex())
    rsp.resume("c")
    assert_console_after_continue(k, rsp)
    rsp.interrupt()
    assert rsp.request("m%x,4" % addr).decode() == want[:4].hex()


def _ends(text, head=300, tail=1500):
    """A failure's beginning (what was awaited) and its end (the console's last output, COM2's bytes)."""
    return text if len(text) <= head + tail else text[:head] + "\n[...]\n" + text[-tail:]


def sweep(kprof_factory, functions):
    """Runs every (name, addr, own) through cycle(), a fresh boot after a failure; returns the failures."""
    failures = []
    todo = list(functions)
    while todo:
        k = kprof_factory(gdb=True)
        rsp = Rsp(k.gdb_port)
        rsp.request("qSupported:swbreak+;hwbreak+")
        assert rsp.request("?").startswith(b"T")
        while todo:
            name, addr, own = todo.pop(0)
            try:
                cycle(k, rsp, name, addr, own)
            except (KprofError, AssertionError, OSError) as e:
                failures.append("%s (%#x%s): %s" % (name, addr, ", own" if own else "", _ends(str(e))))
                break
        rsp.close()
        if todo or k.alive():
            k.kill()
    return failures


def chosen():
    own, others, lo, hi = function_sets()
    rng = random.Random(SEED)
    callees = set(edge_callees(lo, hi))  # one disassembly (in the comprehension it ran once per function: 42 s)
    edge = [(n, a) for n, a in others if n in callees]
    rest = [f for f in others if f not in edge]
    edge_cycled = edge if EDGE_CYCLED is None else rng.sample(edge, EDGE_CYCLED)
    sample = edge_cycled + rng.sample(rest, OTHERS_SAMPLED)
    cycled = own if OWN_CYCLED is None else rng.sample(own, OWN_CYCLED)
    return own, cycled, sample


def test_the_section_holds_the_stubs_path():
    """The functions the issue found killing the machine are in the section, and so is nothing that is not
    the debugger's: a breakpoint on the timer's and scheduler's own code stays possible."""
    own, others, _lo, _hi = function_sets()
    names = {n for n, _ in own}
    for fn in ("cpu_index", "page_lookup", "interrupt_dispatch", "gdb_exception", "park", "enter", "session",
               "memcpy", "isr_common", "gdb_nmi", "time_ns", "task_current", "panic_active",
               # gdb over UDP: the polled transport, its frames, the drivers' polled paths
               "udp_getc", "gdb_udp_frame", "netpoll_receive", "virtio_net_poll", "e1000_poll",
               "netdev_transmit_polled", "virtio_net_transmit_locked", "e1000_transmit_locked", "net_peer_permitted",
               "irq_save"):
        assert fn in names, "%s is not in the debugger's section" % fn
    other_names = {n for n, _ in others}
    for fn in ("sched_tick", "profiler_tick", "cmd_uptime", "burn_inner"):
        assert fn in other_names, "%s should be outside the debugger's section" % fn


@pytest.mark.scaled
def asked_for_refusal(own):
    """The own functions whose Z0/Z1 refusal is asked: all (full), or both ends of the section and a sample."""
    if OWN_ASKED is None:
        return own
    ends = own[:8] + own[-8:]
    middle = [f for f in own if f not in ends]
    return ends + random.Random(SEED).sample(middle, OWN_ASKED)


def test_every_own_function_refuses_breakpoints_and_a_sample_survives_the_cycle(kprof_factory):
    own, cycled, sample = chosen()
    _own, others, lo, hi = function_sets()
    k = kprof_factory(gdb=True)
    rsp = Rsp(k.gdb_port)
    rsp.request("qSupported:swbreak+;hwbreak+")
    for name, addr in asked_for_refusal(own):
        for z in ("Z0", "Z1"):
            reply = rsp.request("%s,%x,1" % (z, addr))
            assert reply == b"E01", "%s on %s (the debugger's own, %#x) answered %r" % (z, name, addr, reply)
    # the nearest function outside each end of the section (where the text has one) takes a breakpoint: the
    # bounds are not too wide
    below = [f for f in others if f[1] < lo][-1:]
    above = [f for f in others if f[1] >= hi][:1]
    assert below + above, "no function outside the debugger's section %#x-%#x" % (lo, hi)
    for name, addr in below + above:
        assert rsp.request("Z0,%x,1" % addr) == b"OK", "Z0 on %s (%#x), outside the debugger's code" % (name, addr)
        assert rsp.request("z0,%x,1" % addr) == b"OK"
    text = rsp.monitor("nobreak")
    assert re.search(r"no breakpoints in the debugger's own code, 0x%x-0x[0-9a-f]+" % own[0][1], text), text
    assert rsp.request("D") == b"OK"
    rsp.close()
    assert_console(k)
    k.kill()

    functions = [(n, a, True) for n, a in cycled] + [(n, a, False) for n, a in sample]
    failures = sweep(kprof_factory, functions)
    assert not failures, "%d of %d functions failed:\n%s" % (len(failures), len(functions), "\n".join(failures))


def test_the_issues_reproductions(kprof_factory):
    """Each reproduction of issue 15's "Why", on one boot: refused now, and the rest of its sequence harmless."""
    k = kprof_factory(gdb=True)
    rsp = Rsp(k.gdb_port)
    rsp.request("qSupported:swbreak+;hwbreak+")
    syms = nm_symbols()
    for name in ("cpu_index", "page_lookup", "interrupt_dispatch", "gdb_exception", "park", "enter", "session"):
        addr = syms[name][0]
        assert rsp.request("Z0,%x,1" % addr) == b"E01", name
        assert rsp.request("g")[:2] != b"E"
        assert len(rsp.request("m100000,10")) == 32
        rsp.resume("vCont;s:1;c")
        assert rsp.stop_reply()[0] == 5
        rsp.resume("c")
        assert_console(k)
        rsp.interrupt()
    assert rsp.request("D") == b"OK"
    assert_console(k)


def test_register_writes_that_would_crash_the_cpu_are_refused(kprof_factory):
    """rsp = 0 then continue gave #DF, a non-canonical rip then stepi #GP: refused now (E05), the register as
    it was, and the step and continue that follow run normally."""
    k = kprof_factory(gdb=True)
    rsp = Rsp(k.gdb_port)
    rsp.request("qSupported:swbreak+;hwbreak+")
    rip_before, rsp_before, flags_before = rsp.request("p10"), rsp.request("p7"), rsp.request("p11")
    for write in ("P7=0000000000000000",        # rsp = 0: the next interrupt's frame has nowhere to go
                  "P7=0000000002000000",        # rsp = 8 GiB: unmapped (the map ends at 4)
                  "P7=0000000000800000",        # non-canonical
                  "P10=0000000000800000",       # rip non-canonical
                  "P10=0000000001000000",       # rip unmapped
                  "P11=46420000",               # NT: IRET raises #GP
                  "P11=46020200"):              # VM
        assert rsp.request(write) == b"E05", "%s was not refused" % write
    assert (rsp.request("p10"), rsp.request("p7"), rsp.request("p11")) == (rip_before, rsp_before, flags_before)
    rsp.resume("vCont;s:1;c")
    assert rsp.stop_reply()[0] == 5
    rsp.resume("c")
    assert_console_after_continue(k, rsp)
    rsp.interrupt()
    assert rsp.request("D") == b"OK"
    assert_console(k)


def test_scheduler_locking_continue_runs_one_cpu_and_ctrl_c_stops_it(kprof_factory):
    """vCont;c:N (gdb's `set scheduler-locking on`, then continue): CPU N runs alone, every other CPU stays
    where it stopped, and Ctrl-C reaches the running one -- COM2's interrupt is sent to it."""
    k = kprof_factory(gdb=True)
    rsp = Rsp(k.gdb_port)
    rsp.request("qSupported:swbreak+;hwbreak+")

    def rips():
        out = {}
        for thread in range(1, 5):
            assert rsp.request("Hg%x" % thread) == b"OK"
            out[thread] = rsp.request("p10")
        return out

    for thread in (2, 4, 1):
        before = rips()
        assert rsp.request("Hg%x" % thread) == b"OK"
        assert rsp.request("qC") == b"QC%x" % thread
        rsp.resume("vCont;c:%x" % thread)
        assert rsp.stop_reply_within(0.5) is None, "a stop came while CPU %d ran alone" % (thread - 1)
        sig, stopped = rsp.interrupt()
        assert (sig, stopped) == (2, thread), "Ctrl-C stopped thread %d with signal %d" % (stopped, sig)
        after = rips()
        for other in before:
            if other != thread:
                assert after[other] == before[other], "thread %d moved while thread %d ran alone" % (other, thread)
    rsp.resume("c")
    assert_console_after_continue(k, rsp)
    rsp.interrupt()
    assert rsp.request("D") == b"OK"
    assert_console(k)


def scratch_page():
    """A page-aligned address inside the largest zero-initialised object of the kernel: writable memory a
    write of the bytes just read there leaves as it was."""
    out = subprocess.run(["nm", "-S", "--size-sort", "--defined-only", ELF], check=True, capture_output=True,
                         text=True).stdout
    best = max((int(f[1], 16), int(f[0], 16)) for f in (l.split() for l in out.splitlines())
               if len(f) == 4 and f[2] in "bB")
    size, addr = best
    page = (addr + 4095) & ~4095
    assert page + 4096 <= addr + size, "no whole page in the largest object (%#x bytes)" % size
    return page


def escape_binary(data):
    """X's payload escaping: '#', '$', '}' and '*' go as '}' then the byte xor 0x20."""
    out = bytearray()
    for b in data:
        if b in b"#$}*":
            out += bytes([0x7D, b ^ 0x20])
        else:
            out.append(b)
    return bytes(out)


def test_a_4096_byte_write_takes_at_most_twice_a_read(kprof_factory):
    """gdb writes memory with X (binary) once the stub takes it -- it probes with an empty X first -- so that is
    the write a user waits for; M (hex, twice the bytes) is timed too and held to 3x, since QEMU's 16550 takes in
    at most its trigger level (14 bytes) per main-loop turn however fast the stub drains it.

    A write waits on QEMU's main loop once per 14 bytes (about 300 hand-offs between QEMU's threads, by futex
    and eventfd), a read on none, so anything that keeps QEMU's threads from a host CPU slows writes far more
    than reads. Two things do, and each round measures both: time the hypervisor under this machine steals
    (/proc/stat; in 12 quiet boots, rounds losing 1-6 % of the CPUs to it wrote at best in 66-73 ms, those
    losing 18-27 % in 77-163 ms, reads at 50-70 ms throughout), and time QEMU's threads wait on this machine's
    run queues while other processes hold both cores (run_queue_wait_ns: a CI run beside another worker's QEMU,
    steal 0 throughout, wrote in 99-118 ms against reads of 41-48). A round is quiet when together they come
    to under QUIET_SHARE of the round. The figures are judged on the RW_ROUNDS least disturbed rounds (judge());
    judged on rounds that were not all quiet, a failure is the host's, retried under the harness's starved-QEMU
    rule (kprof_qemu.unstarved); on quiet rounds it fails at once."""
    k = kprof_factory(gdb=True)
    rsp = Rsp(k.gdb_port)
    rsp.request("qSupported:swbreak+;hwbreak+")
    addr = scratch_page()
    assert rsp.request("X%x,0:" % addr) == b"OK", "the stub does not take X, which gdb writes with"
    first = rsp.request("m%x,1000" % addr).decode()

    def round_trip():
        """(share of the round lost to the host, read, X, M) for one read and the two writes of what it read."""
        steal, waited, t0 = host_steal_ticks(), run_queue_wait_ns(k.pid), time.monotonic()
        data = rsp.request("m%x,1000" % addr).decode()
        t1 = time.monotonic()
        assert len(data) == 8192, "a 4096-byte read answered %d hex digits" % len(data)
        assert rsp.request(b"X%x,1000:" % addr + escape_binary(bytes.fromhex(data))) == b"OK"
        t2 = time.monotonic()
        assert rsp.request("M%x,1000:%s" % (addr, data)) == b"OK"
        t3 = time.monotonic()
        lost = (host_steal_ticks() - steal) / os.sysconf("SC_CLK_TCK") + (run_queue_wait_ns(k.pid) - waited) / 1e9
        return max(lost, 0.0) / (t3 - t0), t1 - t0, t2 - t1, t3 - t2

    def verdict(rounds):
        """None when the writes of the RW_ROUNDS least disturbed rounds keep to their bounds, else why not.
        Writes at their best, against the read at its median: one read in a run can come back in half the time
        of all the others (a CI run: reads 68-119 ms and one of 33, X writes 76-96), and a write held to twice
        that one outlier fails although every write beat most reads. The median of the same rounds is the read
        as this run's machine does it; what the ratio exists to catch, a write crawling at the FIFO's 1-byte
        trigger level (~30x a read), still fails by far."""
        judged = sorted(rounds, key=lambda r: r[0])[:RW_ROUNDS]
        typical_read = statistics.median(r[1] for r in judged)
        for name, i, bound in (("X", 2, 2), ("M", 3, 3)):
            best = min(r[i] for r in judged)
            if best > bound * typical_read:
                return "a 4096-byte %s write took %.0f ms at best, a read %.0f ms (median)" % (
                    name, best * 1e3, typical_read * 1e3)
        return None

    def judge():
        """Rounds until the bounds hold on the least disturbed -- host disturbance only slows the writes, so a
        pass on disturbed rounds stands -- or until RW_ROUNDS quiet rounds fail them (the stub's failure), or
        the budget runs out on disturbed rounds that fail them (the host's, HostStarved)."""
        rounds = []
        deadline = time.monotonic() + RW_BUDGET_S
        failure = "no rounds"
        while time.monotonic() < deadline:
            rounds.append(round_trip())
            if len(rounds) < RW_ROUNDS:
                continue
            failure = verdict(rounds)
            if failure is None or sum(1 for r in rounds if r[0] < QUIET_SHARE) >= RW_ROUNDS:
                break
        judged = sorted(rounds, key=lambda r: r[0])[:RW_ROUNDS]
        print("4096 bytes over COM2, the %d least disturbed of %d rounds (%% of each lost to the host: %s): read %s "
              "ms, X %s, M %s; %d resent on a NAK" % (
                  len(judged), len(rounds), [round(r[0] * 100) for r in judged],
                  *([round(r[i] * 1e3) for r in judged] for i in (1, 2, 3)), rsp.naks))
        if failure and judged[-1][0] >= QUIET_SHARE:
            raise HostStarved("%s, on rounds the host took up to %.0f%% of" % (failure, 100 * judged[-1][0]))
        assert failure is None, failure

    unstarved(None, judge, "the write/read timing")
    assert rsp.request("m%x,1000" % addr).decode() == first, "writing the bytes read changed them"
    assert rsp.request("D") == b"OK"
    assert_console(k)
