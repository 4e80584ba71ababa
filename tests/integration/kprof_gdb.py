"""The gdb driver the integration tests (and tests/soak) share: real gdb 13 in batch mode against a kernel's stub,
over COM2's TCP port or the UDP transport (`gdb.udp=`).

Owns: Gdb (one `timeout -k 3 N gdb -batch -nx` run; mark() has it print and flush a marker the test waits for,
gate() also holds it there until Gdb.release), UdpGdb (Gdb pointed at `target remote udp:`), Lldb (the same around
`lldb --batch`, with its packet log), REPLY_WAIT_S, run_gdb, threads (`info threads` parsed), assert_running (the
shell answers: the machine is not stopped); the UDP transport's insecure boot (GUEST_PORT, INSECURE_WARNING,
boot_udp), its `net` line and counters (gdb_udp_line, counter) and raw datagram helpers (udp_socket, received,
received_until); WRAPPER, the gdb Python that frames one command's output as `@@begin NAME ok|error ... @@end
NAME` (kp_run). The raw remote protocol (checksums, packets, Rsp) is kprof_rsp.py's.
"""

import os
import re
import select
import signal
import socket
import subprocess
import tempfile
import time

from kprof_qemu import ELF, KprofError, boot_kernel, poll

GDB_TIMEOUT = 60          # the whole gdb run, enforced by timeout(1)
# How long gdb and lldb wait for one reply (gdb's remotetimeout, 2 s by default; lldb's packet-timeout, 5 s) before
# they give up on it: stopping four vCPUs on a host busy with other QEMUs has taken longer, and then gdb goes on
# out of step with the stub's replies and lldb, failing to resync, drops the connection -- without the `k` it
# sends on quitting, so the machine stays stopped (the likely reading of a CI pass where test_gdb_quit's lldb quit
# and all four CPUs stayed parked; the test now shows lldb's packet log when that happens). A hang is still
# bounded by the whole run's timeout. A test's own `pre` commands may set less. gdb over UDP keeps its 2 s (see
# Gdb); lldb, which resends nothing after a timeout, waits this long over either.
REPLY_WAIT_S = 30
MARK_TIMEOUT = 45.0       # gdb start and attach, to a marker
RX_THREAD = re.compile(r"(?m)^[* ] +(\d+) +Thread (\d+) \(cpu (\d+)(?:, task (\S+) \(pid (\d+)\))?\)")


def mark(name):
    """A gdb command that prints @@name and flushes it at once (batch gdb's own output is buffered)."""
    return "python import sys; sys.stdout.write('@@%s\\n'); sys.stdout.flush()" % name


def gate(name):
    """mark(name), then gdb waits for a line on its stdin (Gdb.release) before its next command: the machine
    stays stopped as long as the test needs, however late it read the mark."""
    return mark(name) + "; sys.stdin.readline()"


class Gdb:
    """One `gdb -batch` run against a kernel's COM2: the commands run in order after `target remote`."""

    def __init__(self, k, commands, timeout=GDB_TIMEOUT, pre=(), target=None):
        """pre: commands run before `target remote` (gdb then reads memory from the ELF itself); target: what
        `target remote` is given, COM2's TCP port by default."""
        argv = ["timeout", "-k", "3", str(timeout), "gdb", "-batch", "-nx",
                "-ex", "set pagination off", "-ex", "set confirm off", "-ex", "set width 0"]
        if target is None:  # COM2's TCP loses nothing: a reply is only ever late (over UDP, gdb's resend after
            target = "127.0.0.1:%d" % k.gdb_port  # its default 2 s is how a lost datagram is recovered)
            argv += ["-ex", "set remotetimeout %d" % REPLY_WAIT_S]
        for c in pre:
            argv += ["-ex", c]
        argv += ["-ex", "target remote %s" % target]
        for c in commands:
            argv += ["-ex", c]
        argv.append(ELF)
        self.argv = argv
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT)
        self.out = b""

    def release(self):
        """Lets gdb go on past a gate()."""
        self.proc.stdin.write(b"\n")
        self.proc.stdin.flush()

    def _read(self, timeout):
        r, _, _ = select.select([self.proc.stdout], [], [], max(0.0, timeout))
        if not r:
            return True
        data = os.read(self.proc.stdout.fileno(), 65536)
        self.out += data
        return bool(data)

    @property
    def text(self):
        return self.out.decode("latin-1")

    def wait_mark(self, name, timeout=MARK_TIMEOUT):
        deadline = time.monotonic() + timeout
        token = ("@@%s\n" % name).encode()
        while token not in self.out:
            left = deadline - time.monotonic()
            if left <= 0 or not self._read(left):
                raise KprofError("gdb did not reach @@%s within %.0f s; it said:\n%s" % (name, timeout, self.text))

    def finish(self, timeout=GDB_TIMEOUT + 5, check=True):
        """Waits for gdb to exit; returns everything it printed. Fails if it timed out, or (check) failed; its
        exit status is kept in self.returncode either way."""
        deadline = time.monotonic() + timeout
        while self._read(deadline - time.monotonic()):
            if time.monotonic() > deadline:
                break
        try:
            rc = self.proc.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            self.kill()
            raise KprofError("gdb did not exit; it said:\n%s" % self.text)
        self.proc.stdin.close()
        self.returncode = rc
        assert rc != 124, "gdb timed out; it said:\n%s" % self.text
        assert rc == 0 or not check, "gdb exited with %d (124: timed out); it said:\n%s" % (rc, self.text)
        return self.text

    def gdb_pid(self):
        """The pid of gdb itself (the child of timeout(1))."""
        def child():
            try:
                with open("/proc/%d/task/%d/children" % (self.proc.pid, self.proc.pid)) as f:
                    pids = f.read().split()
            except OSError:
                return None
            return int(pids[0]) if pids else None
        return poll("gdb's pid under timeout %d" % self.proc.pid, child, timeout=10)

    def kill(self):
        """SIGKILL to gdb by its pid (timeout(1) then exits too)."""
        if self.proc.poll() is None:
            try:
                os.kill(self.gdb_pid(), signal.SIGKILL)
            except (ProcessLookupError, KprofError):
                pass
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self.proc.stdin.close()


LLDB_TIMEOUT = 90  # the whole lldb run, enforced by timeout(1)
# Debian 12's lldb looks for its Python module under python3/, which holds nothing (it is under python3.11/):
# PYTHONPATH points there, or lldb prints a traceback for every command (harmless, but noise in a failure's text).
LLDB_PYTHON = "/usr/lib/llvm-14/lib/python3.11/dist-packages"


class Lldb(Gdb):
    """Gdb's reading, waiting and exit check, around `timeout -k 3 N lldb --batch --no-lldbinit` with these
    commands after `connect` (`gdb-remote HOST:PORT`, `process connect udp://HOST:PORT`). lldb's batch mode
    stops at the first command that fails, and quits."""

    def __init__(self, connect, commands, timeout=LLDB_TIMEOUT):
        # lldb's packet log (its own, timestamped), for a failure's message: packets_tail()
        fd, self.packet_log = tempfile.mkstemp(prefix="kprof-lldb-", suffix=".packets")
        os.close(fd)
        argv = ["timeout", "-k", "3", str(timeout), "lldb", "--batch", "--no-lldbinit",
                "-o", "settings set auto-confirm true",
                "-o", "settings set plugin.process.gdb-remote.packet-timeout %d" % REPLY_WAIT_S,
                "-o", "log enable -T -f %s gdb-remote packets process" % self.packet_log,
                "-o", "target create %s" % ELF, "-o", connect]
        for c in commands:
            argv += ["-o", c]
        self.argv = argv
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.STDOUT, env=dict(os.environ, PYTHONPATH=LLDB_PYTHON))
        self.out = b""

    def finish(self, timeout=LLDB_TIMEOUT + 5, check=True):
        """Gdb.finish, and lldb's packet log read (self.packets, the text a failure's message shows) and removed."""
        try:
            return super().finish(timeout, check)
        finally:
            try:
                with open(self.packet_log, errors="replace") as f:
                    self.packets = f.read()
                os.unlink(self.packet_log)
            except OSError as e:
                self.packets = "(no packet log: %s)" % e

    def packets_tail(self, lines=40):
        return "lldb's packet log ends with:\n" + "\n".join(self.packets.splitlines()[-lines:])

    def wait_for(self, pattern, timeout=60):
        deadline = time.monotonic() + timeout
        while not re.search(pattern, self.text):
            left = deadline - time.monotonic()
            if left <= 0 or not self._read(left):
                self.kill()
                raise KprofError("lldb did not print %r within %.0f s; it said:\n%s" % (pattern, timeout, self.text))


def run_gdb(k, commands):
    return Gdb(k, commands).finish()


def threads(text):
    """[(gdb thread number, cpu, task name or None)] from `info threads`."""
    return [(int(m.group(1)), int(m.group(3)), m.group(4)) for m in RX_THREAD.finditer(text)]


def assert_running(k):
    """The shell answers at once: the machine runs (and is not waiting for a debugger)."""
    out = k.cmd("uptime")
    assert re.fullmatch(r"up \d+\.\d{3} s", out.strip()), "uptime said %r" % out


GUEST_PORT = 1234  # the guest's gdb.udp= port


class UdpGdb(Gdb):
    """Gdb with `target remote udp:127.0.0.1:P` in place of COM2's TCP."""

    def __init__(self, k, commands, timeout=GDB_TIMEOUT, pre=()):
        """pre: commands run before `target remote` (gdb then reads memory from the ELF itself)."""
        super().__init__(k, commands, timeout, pre, target="udp:127.0.0.1:%d" % k.gdb_udp_port)


INSECURE_WARNING = ("warning: gdb: gdb.udp.insecure: raw gdb datagrams taken; anyone who can forge an allowlisted "
                    "address, without receiving, controls the machine")


def boot_udp(kprof_factory, cmdline="", **kw):
    # the transport is up once DHCP has given the address
    return boot_kernel("gdb.udp=%d gdb.udp.insecure" % GUEST_PORT, cmdline, make=kprof_factory, gdb_udp=GUEST_PORT,
                       boot_log_has=INSECURE_WARNING, dhcp=True, **kw)


def gdb_udp_line(k, lines=1):
    """`net`'s "gdb udp:" line (lines=2: and the "gdb unproven:" line after it)."""
    m = re.search(r"(?m)^gdb udp: .*$" + (r"\n^gdb unproven: .*$" if lines == 2 else ""), k.cmd("net"))
    assert m, "net has no gdb udp line"
    return m.group(0)


def counter(line, name):
    m = re.search(r"(\d+) %s" % re.escape(name), line)
    assert m, "no %r in %r" % (name, line)
    return int(m.group(1))


def udp_socket():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", 0))
    s.settimeout(0.2)
    return s


def received(s, seconds):
    """Every datagram s gets within seconds, joined."""
    got = b""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            got += s.recv(65536)
        except socket.timeout:
            pass
    return got


def received_until(s, pattern, timeout, what):
    """Every datagram s gets until what they hold, joined, matches the bytes regex pattern (the stub's `+` goes
    out as a datagram of its own, ahead of a reply that may come a while later), at most timeout seconds:
    KprofError then, naming what came."""
    got = b""
    deadline = time.monotonic() + timeout
    while not re.search(pattern, got):
        left = deadline - time.monotonic()
        if left <= 0:
            raise KprofError("no %s within %.0f s; got %r" % (what, timeout, got))
        got += received(s, min(0.5, left))
    return got


WRAPPER = r"""
import sys
def kp_run(name, command):
    try:
        out, status = gdb.execute(command, to_string=True), "ok"
    except gdb.error as e:
        out, status = str(e) + "\n", "error"
    if out and not out.endswith("\n"):
        out += "\n"
    sys.stdout.write("@@begin %s %s\n%s@@end %s\n" % (name, status, out, name))
    sys.stdout.flush()
"""
