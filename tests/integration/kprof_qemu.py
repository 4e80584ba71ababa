"""Drives kprof in QEMU for the integration tests and the benchmarks.

One Kprof is one QEMU process with the kernel's console (COM1) on a pty that pexpect reads. The command line
follows scripts/qemu.sh (same defaults and devices), except that the console carries COM1 alone: the QEMU
monitor is off, or on a unix socket when asked for, so every byte a test sends reaches the kernel.

    k = Kprof(smp=4, mem=256)       # firmware="uefi" boots the same ISO under OVMF
    k.boot()                        # spawn, then wait for `ready:` and the first prompt
    out = k.cmd("ps")               # the output between the echoed line and the next prompt
    k.kill()                        # by pid

Every wait has a deadline and raises KprofTimeout (or KprofEOF when QEMU is gone) naming what it waited for
and the last output seen; nothing sleeps for a fixed time. The whole serial stream is kept (`k.log`) so
conftest.py can save it when a test fails. Output is matched with carriage returns removed (the kernel may
end lines with "\\r\\n", and the pty adds its own), and a log line the console drew over the waiting prompt
read as a line of its own (REDRAW); `k.log` keeps the raw bytes, and as_screen() renders them as a terminal would.
"""

import bisect
import hashlib
import json
import os
import re
import select
import shutil
import signal
import socket
import subprocess
import tempfile
import time

import pexpect

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD = os.path.join(TOP, "build")
ISO = os.path.join(BUILD, "kprof.iso")
ELF = os.path.join(BUILD, "kprof.elf")
VARIANT_DIR = os.path.join(BUILD, "test-iso")
LOG_DIR = os.path.join(BUILD, "test-logs")

PROMPT = "> "
LINE_MAX = 255          # the longest line the shell takes; longer ones are refused
BOOT_TIMEOUT = 60.0     # QEMU start to `ready:` under TCG on a loaded machine (a quiet one needs ~1 s)
CMD_TIMEOUT = 15.0      # one shell command, echo to prompt
UDP_GUEST_PORT = 5555   # the guest port --udp-port forwards to, as in scripts/qemu.sh
# firmware="uefi": Debian's OVMF as -bios, as scripts/qemu.sh --firmware uefi (which says why not pflash).
# OVMF and GRUB-EFI write to COM1 before the kernel does (screen control sequences, GRUB's messages); all of it
# lands in boot_log. Under TCG OVMF adds ~3 s before GRUB starts: BOOT_TIMEOUT has room for it.
OVMF = os.environ.get("KPROF_OVMF", "/usr/share/ovmf/OVMF.fd")
FIRMWARES = ("bios", "uefi")
# nic=: the network card QEMU gives the kernel, as the QEMU line a user would write (docs/udp-shell.md lists
# them). NETDEV stands for "-netdev user,id=n0" plus the forwards; "-nic user" takes the forwards directly.
NICS = {
    "virtio-legacy": ["-netdev", "NETDEV", "-device", "virtio-net-pci,netdev=n0"],
    "virtio-modern": ["-M", "q35", "-device", "pcie-root-port,id=rp1,chassis=1", "-netdev", "NETDEV",
                      "-device", "virtio-net-pci,netdev=n0,bus=rp1"],
    "e1000": ["-nic", "NIC"],                  # -M pc's default NIC: the 82540EM
    "e1000e": ["-M", "q35", "-nic", "NIC"],    # -M q35's default NIC: the 82574L
}
# The driver the kernel should name for each (its `net: DRIVER (...)` boot line and `net`'s card: line).
NIC_DRIVERS = {"virtio-legacy": "virtio-net-legacy", "virtio-modern": "virtio-net-modern", "e1000": "e1000",
               "e1000e": "e1000e"}

# media=: how the ISO reaches the firmware. "cdrom" is what `make run` does; the others are the same bytes as a
# disk, which is what `dd` of the hybrid ISO to a USB stick gives a PC: a USB mass-storage stick on an xHCI
# controller (q35, as a PC of today), or a hard disk on virtio-blk or IDE (firmware that takes the stick for a
# disk). Each boots a private copy of the ISO (IMAGE below), so a rebuild or another QEMU never shares it.
MEDIA = {
    "cdrom": ["-cdrom", "IMAGE", "-boot", "d"],
    "usb-stick": ["-M", "q35", "-device", "qemu-xhci,id=xhci",
                  "-drive", "if=none,id=stick,format=raw,readonly=on,file=IMAGE",
                  "-device", "usb-storage,bus=xhci.0,drive=stick,bootindex=0"],
    "virtio-disk": ["-drive", "if=none,id=disk0,format=raw,readonly=on,file=IMAGE",
                    "-device", "virtio-blk-pci,drive=disk0,bootindex=0"],
    "ide-disk": ["-drive", "if=none,id=disk0,format=raw,file=IMAGE",  # IDE takes no read-only disk: a copy
                 "-device", "ide-hd,drive=disk0,bootindex=0"],
}

# The console's redraw when a log line arrives while the prompt waits (kernel/shell/lineedit.c): back to the
# prompt's row and erase it, then the log line, the prompt and the half-typed line again.
REDRAW = "\r\x1b[K"


def as_screen(text):
    """The console's text as a terminal leaves it on screen after each REDRAW: the erased row's text gone (the
    log line takes its place). Carriage returns elsewhere are dropped, as the waits drop them."""
    out = ""
    for i, part in enumerate(text.split(REDRAW)):
        if i:
            out = out[:out.rfind("\n") + 1]
        out += part.replace("\r", "")
    return out


# Everything written to the serial port is latin-1 on our side: each byte is one character, both ways, so
# binary garbage goes out and comes back unchanged.
ENCODING = "latin-1"


# Called with each Kprof as its QEMU is started: tests/integration/conftest.py counts a module's boots here.
BOOT_LISTENERS = []


class KprofError(AssertionError):
    """The kernel did not do what a test waited for (an AssertionError so pytest reports it as a failure)."""


class KprofTimeout(KprofError):
    pass


class HostStarved(AssertionError):
    """An attempt's checks failed, and the attempt's own window shows why: the host took QEMU's CPUs away in it
    (the kernel's report says its ticks came late elsewhere, or a CPU's raw samples stop for several periods).
    unstarved() retries it as it retries an attempt the tick counters show starved."""


class KprofEOF(KprofError):
    pass


# What QEMU says when a host port it was given is taken (a hostfwd's, or a socket chardev's listening port).
PORT_CLASH = re.compile(r"Could not set up host forwarding rule|Failed to bind socket|Address already in use")
PORT_CLASH_RETRIES = 3


def free_port(kind=socket.SOCK_STREAM):
    """A port on 127.0.0.1 that nothing listens on now: bind to port 0 and let the kernel choose."""
    with socket.socket(socket.AF_INET, kind) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def variant_iso(cmdline, elf=ELF, out_dir=VARIANT_DIR):
    """An ISO of elf with the kernel command line baked into grub.cfg, made by scripts/mkiso.sh and kept
    under build/test-iso/ by a hash of the command line; remade when the ELF or its inputs are newer."""
    os.makedirs(out_dir, exist_ok=True)
    digest = hashlib.sha256(cmdline.encode()).hexdigest()[:12]
    iso = os.path.join(out_dir, "kprof-%s.iso" % digest)
    inputs = [elf, os.path.join(TOP, "grub.cfg"), os.path.join(TOP, "scripts", "mkiso.sh")]
    def stale():
        return not os.path.exists(iso) or any(os.path.getmtime(p) > os.path.getmtime(iso) for p in inputs)
    if stale():
        # Tests run in several processes at once: one makes it under a lock, into a file of its own that is then
        # renamed into place, so no QEMU ever opens half an ISO.
        import fcntl
        with open(iso + ".lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if stale():
                part = "%s.%d.part" % (iso, os.getpid())
                subprocess.run([os.path.join(TOP, "scripts", "mkiso.sh"), elf, part, cmdline],
                               check=True, timeout=120)
                os.replace(part, iso)
    return iso


def _printable(text):
    return all(" " <= c <= "~" for c in text)


def host_steal_ticks():
    """Time the hypervisor under this machine ran something else while this machine had work to run (the
    eighth figure of /proc/stat's cpu line: USER_HZ ticks, summed over its CPUs). This machine is itself a
    VM, and when its host steals time QEMU's threads stall however idle this machine looks."""
    with open("/proc/stat") as f:
        fields = f.readline().split()
    return int(fields[8]) if len(fields) > 8 else 0


def run_queue_wait_ns(pid):
    """Nanoseconds the threads of process pid have waited on this machine's run queues, runnable and not
    running (the second figure of each thread's /proc/PID/task/TID/schedstat), summed. A QEMU whose main loop
    and vCPU threads hand work to each other waits there whenever other processes hold both cores -- another
    QEMU, a build -- and that, unlike steal, this machine's /proc/stat does not show as lost."""
    total = 0
    try:
        tids = os.listdir("/proc/%d/task" % pid)
    except FileNotFoundError:
        return 0
    for tid in tids:
        try:
            with open("/proc/%d/task/%s/schedstat" % (pid, tid)) as f:
                total += int(f.read().split()[1])
        except (FileNotFoundError, ProcessLookupError, IndexError, ValueError):
            pass  # a thread that ended meanwhile
    return total


def kvm_usable():
    """None when QEMU can run a guest under KVM here (/dev/kvm opens read-write and takes KVM_CREATE_VM), else
    the reason it cannot, in a few words."""
    import fcntl
    try:
        fd = os.open("/dev/kvm", os.O_RDWR | os.O_CLOEXEC)
    except OSError as e:
        return "/dev/kvm: %s" % e.strerror
    try:
        vm = fcntl.ioctl(fd, 0xAE01, 0)  # KVM_CREATE_VM
        os.close(vm)
    except OSError as e:
        return "KVM_CREATE_VM: %s" % e.strerror
    finally:
        os.close(fd)
    return None


class Kprof:
    """One QEMU running kprof. Options that later tests need (gdb on COM2, the UDP shell, a monitor socket for
    `nmi`, other CPU models through extra_args) are constructor arguments; ports are picked free."""

    def __init__(self, smp=4, mem=256, cmdline="", iso=None, extra_args=(), gdb=False, udp=False,
                 udp_guest_port=UDP_GUEST_PORT, monitor=False, name="kprof", netload=False, firmware="bios",
                 nic=None, accel="tcg", gdb_udp=None, http=None, media="cdrom", qmp=False):
        if firmware not in FIRMWARES:
            raise ValueError("firmware %r: want one of %s" % (firmware, ", ".join(FIRMWARES)))
        if media not in MEDIA:
            raise ValueError("media %r: want one of %s" % (media, ", ".join(MEDIA)))
        self.media = media
        if nic is not None and nic not in NICS:
            raise ValueError("nic %r: want one of %s" % (nic, ", ".join(NICS)))
        # gdb_udp=GUEST_PORT: the gdb stub's UDP port (the kernel's gdb.udp=, which the caller puts on the
        # command line), forwarded from a free host port (gdb_udp_host_port) -- gdb's `target remote udp:`.
        self.gdb_udp_guest_port = gdb_udp
        self.gdb_udp_port = free_port(socket.SOCK_DGRAM) if gdb_udp else None
        # http=GUEST_PORT: the pprof.http= server's TCP port (the caller puts pprof.http= on the command line),
        # forwarded from a free host TCP port (http_port): http://127.0.0.1:<http_port>/debug/pprof/.
        self.http_guest_port = http
        self.http_port = free_port(socket.SOCK_STREAM) if http else None
        # without a NIC named, the UDP shell gets virtio-net (as scripts/qemu.sh) and no UDP means no NIC
        self.nic = nic if nic is not None else ("virtio-legacy" if (udp or gdb_udp or http) else None)
        self.firmware = firmware
        if accel not in ("tcg", "kvm"):
            raise ValueError("accel %r: want tcg or kvm" % accel)
        self.accel = accel
        self.smp = smp
        self.mem = mem
        self.cmdline = cmdline
        self.iso = iso
        self.extra_args = list(extra_args)
        self.name = name
        self.gdb_port = free_port(socket.SOCK_STREAM) if gdb else None
        self.udp_port = free_port(socket.SOCK_DGRAM) if udp else None
        self.udp_guest_port = udp_guest_port
        # netload: a second forward, host port P to the guest's port P, for `netload sink P` / `echo P`.
        self.netload_port = free_port(socket.SOCK_DGRAM) if (udp and netload) else None
        self._tmpdir = None
        self.monitor_path = None
        self.qmp_path = None
        self._tmpdir = tempfile.mkdtemp(prefix="kprof-mon-")
        if monitor:
            self.monitor_path = os.path.join(self._tmpdir, "monitor.sock")
        # QEMU's machine protocol on a unix socket of its own (qmp()): always there, so that a command whose
        # prompt never comes can say where each vCPU was (whereabouts()); qmp=True says a test drives it.
        self.qmp_wanted = qmp
        self.qmp_path = os.path.join(self._tmpdir, "qmp.sock")
        self.child = None
        self.pid = None
        self.t_spawn = None       # time.monotonic() just before QEMU was started
        self.t_ready = None       # when the `ready:` line was read
        self.ready_line = None
        self.cpus = None          # the CPU count the ready line gives
        self.boot_log = None      # everything before the ready line
        self.unsolicited = []     # output that arrived while no command was running
        self.before_prompt = ""   # logged after `ready:`, before the first prompt
        self._raw = []            # the serial stream as read, for the log
        self._buf = ""            # read, carriage returns removed, not yet consumed by a wait
        self._held = ""           # the start of a REDRAW cut by a read's end, put before the next read
        self._eof = False
        self.exit_status = None

    # ---- starting ---------------------------------------------------------------------------------------
    def argv(self):
        iso = self.iso
        if iso is None:
            iso = variant_iso(self.cmdline) if self.cmdline else ISO
        args = ["qemu-system-x86_64",
                "-smp", str(self.smp), "-m", str(self.mem)] + self._media_args(iso) + [
                "-display", "none", "-no-reboot",
                "-chardev", "stdio,id=con0,signal=off", "-serial", "chardev:con0",
                "-device", "isa-debug-exit,iobase=0xf4,iosize=0x04"]
        if self.firmware == "uefi":
            if not os.path.isfile(OVMF):
                raise KprofError("firmware uefi needs %s (Debian's ovmf; scripts/deps.sh installs it)" % OVMF)
            args += ["-bios", OVMF]
        if self.accel == "kvm":
            # the host's CPU less the MSR QEMU cannot set under this machine's KVM (PVM); see kvm_usable()
            args += ["-accel", "kvm", "-cpu", "host,-arch-capabilities"]
        if self.gdb_port:
            # COM2 for the gdb stub; nodelay: each packet is a small write, and Nagle would hold every one back.
            args += ["-chardev", "socket,id=gdb0,host=127.0.0.1,port=%d,server=on,wait=off,nodelay=on" % self.gdb_port,
                     "-serial", "chardev:gdb0"]
        if self.nic:
            fwd = []
            if self.udp_port:
                fwd.append("hostfwd=udp:127.0.0.1:%d-:%d" % (self.udp_port, self.udp_guest_port))
            if self.gdb_udp_port:
                fwd.append("hostfwd=udp:127.0.0.1:%d-:%d" % (self.gdb_udp_port, self.gdb_udp_guest_port))
            if self.netload_port:
                fwd.append("hostfwd=udp:127.0.0.1:%d-:%d" % (self.netload_port, self.netload_port))
            if self.http_port:
                fwd.append("hostfwd=tcp:127.0.0.1:%d-:%d" % (self.http_port, self.http_guest_port))
            subst = {"NETDEV": ",".join(["user,id=n0"] + fwd), "NIC": ",".join(["user"] + fwd)}
            args += [subst.get(a, a) for a in NICS[self.nic]]
        else:
            args += ["-nic", "none"]
        if self.monitor_path:
            args += ["-monitor", "unix:%s,server=on,wait=off" % self.monitor_path]
        else:
            args += ["-monitor", "none"]
        if self.qmp_path:
            args += ["-qmp", "unix:%s,server=on,wait=off" % self.qmp_path]
        return args + self.extra_args

    def _media_args(self, iso):
        """The QEMU arguments that give the firmware the ISO as self.media says; all but "cdrom" boot a copy made
        in this Kprof's own temporary directory (kill() removes it)."""
        if self.media == "cdrom":
            return [iso if a == "IMAGE" else a for a in MEDIA["cdrom"]]
        if self._tmpdir is None:
            self._tmpdir = tempfile.mkdtemp(prefix="kprof-media-")
        image = os.path.join(self._tmpdir, "stick.img")
        if not os.path.exists(image):  # once: argv() may be asked again while QEMU runs from it
            shutil.copyfile(iso, image)
        return [a.replace("IMAGE", image) for a in MEDIA[self.media]]

    def start(self):
        for listener in BOOT_LISTENERS:
            listener(self)
        self._spawn()
        return self

    def _spawn(self):
        argv = self.argv()
        self.command_line = " ".join(argv)
        self.t_spawn = time.monotonic()
        self.child = pexpect.spawn(argv[0], argv[1:], cwd=TOP, encoding=ENCODING, echo=False,
                                   timeout=None, maxread=65536, dimensions=(50, 200))
        self.pid = self.child.pid

    def _respawned_after_a_port_clash(self):
        """True when QEMU exited because a host port picked free was taken before it could bind it -- free_port
        is a guess: any process's socket (another lane's client, its ephemeral port) can take the port in
        between -- and QEMU has been started again on ports picked anew (the same boot: counted once)."""
        if not (self._eof and PORT_CLASH.search("".join(self._raw))):
            return False
        for attr, kind in (("gdb_port", socket.SOCK_STREAM), ("http_port", socket.SOCK_STREAM),
                           ("udp_port", socket.SOCK_DGRAM), ("gdb_udp_port", socket.SOCK_DGRAM),
                           ("netload_port", socket.SOCK_DGRAM)):
            if getattr(self, attr):
                setattr(self, attr, free_port(kind))
        self._raw, self._buf, self._held, self._eof, self.exit_status = [], "", "", False, None
        self._spawn()
        return True

    def boot(self, timeout=BOOT_TIMEOUT):
        self.start()
        self.wait_ready(timeout)
        return self

    def wait_ready(self, timeout=BOOT_TIMEOUT):
        """Waits for the `ready:` line and the first prompt; returns the ready line. QEMU that could not bind a
        host port is started again on other ports (PORT_CLASH_RETRIES times)."""
        for clashes in range(PORT_CLASH_RETRIES + 1):
            try:
                m = self.expect(r"(?m)^ready:[^\n]*\n", timeout, what="the ready: line")
                break
            except KprofEOF:
                if clashes == PORT_CLASH_RETRIES or not self._respawned_after_a_port_clash():
                    raise
        self.t_ready = time.monotonic()
        self.boot_log = m.before
        self.ready_line = m.group(0).strip()
        c = re.search(r"\b(\d+) cpus?\b", self.ready_line)
        self.cpus = int(c.group(1)) if c else None
        # what a task logged between `ready:` and the prompt (the USB keyboard's line, DHCP's) is kept: a test
        # waiting for such a line looks here before it waits (boot_log_and_after)
        p = self.expect(r"(?m)^%s" % re.escape(PROMPT), CMD_TIMEOUT, what="the first prompt after ready:")
        self.before_prompt = p.before
        return self.ready_line

    @property
    def boot_log_and_after(self):
        """The boot log, and what came after `ready:` before the first prompt."""
        return self.boot_log + "\n" + self.before_prompt

    @property
    def boot_seconds(self):
        """Host time from starting QEMU to reading the ready: line."""
        return self.t_ready - self.t_spawn

    # ---- reading ----------------------------------------------------------------------------------------
    def _read(self, timeout):
        """Reads what QEMU wrote within timeout into the buffers; False on timeout; KprofEOF when it is gone."""
        if self._eof:
            raise KprofEOF("QEMU has exited (%s)" % self._status_text())
        try:
            data = self.child.read_nonblocking(65536, timeout=max(0.0, timeout))
        except pexpect.TIMEOUT:
            return False
        except pexpect.EOF:
            self._eof = True
            self._reap(5.0)
            raise KprofEOF("QEMU exited (%s)" % self._status_text())
        self._raw.append(data)
        self._buf += self._lines_of(data)
        return True

    def _lines_of(self, data):
        """data as the waits read it: carriage returns removed, and the console's redraw of a log line over a
        waiting prompt (REDRAW) read as a line break -- the prompt's line ends there, the log line is a line of
        its own, then the prompt again -- so a log line still begins a line (`^net: address`), and a prompt
        already shown is still there for a wait that wants it. A REDRAW cut by the read's end waits for the rest."""
        data = self._held + data
        self._held = ""
        for n in range(len(REDRAW) - 1, 0, -1):
            if data.endswith(REDRAW[:n]):
                data, self._held = data[:-n], data[-n:]
                break
        return data.replace(REDRAW, "\n").replace("\r", "")

    def drain(self):
        """Reads whatever is waiting now, without waiting, into the unconsumed output."""
        try:
            while self._read(0):
                pass
        except KprofEOF:
            pass

    def wait_log_line(self, pattern, timeout=CMD_TIMEOUT, what=None):
        """A log line that may have come before `ready:` (then it is in the boot log) or after it, as a device
        found by a task (a USB device, DHCP's address) comes when it comes. Returns the text it was found in; after
        it, the console's output holds no such line to trip a command's echo check."""
        rx = re.compile(pattern) if isinstance(pattern, str) else pattern
        if rx.search(self.boot_log_and_after):
            return self.boot_log_and_after
        m = self.expect(rx, timeout=timeout, what=what)
        return m.before + m.group(0)

    def expect(self, pattern, timeout=CMD_TIMEOUT, what=None):
        """Waits until pattern (a regex, searched in the unconsumed output with carriage returns removed)
        matches, consumes the output up to the end of the match and returns the match; its `before` is the
        text between the previous consumption and the match."""
        rx = re.compile(pattern) if isinstance(pattern, str) else pattern
        deadline = time.monotonic() + timeout
        while True:
            m = rx.search(self._buf)
            if m:
                before = self._buf[:m.start()]
                self._buf = self._buf[m.end():]
                return _Match(m, before)
            left = deadline - time.monotonic()
            if left <= 0:
                raise KprofTimeout("no %s within %.1f s; unconsumed output ends with:\n%s"
                                   % (what or repr(rx.pattern), timeout, self._tail()))
            try:
                self._read(left)
            except KprofEOF as e:
                raise KprofEOF("%s while waiting for %s; output ends with:\n%s"
                               % (e, what or repr(rx.pattern), self._tail())) from None

    def expect_eof(self, timeout=CMD_TIMEOUT):
        """Waits until QEMU closes the console (exits); returns the output that came before."""
        deadline = time.monotonic() + timeout
        start = len(self._buf)
        while not self._eof:
            left = deadline - time.monotonic()
            if left <= 0:
                raise KprofTimeout("QEMU still running %.1f s later; output ends with:\n%s"
                                   % (timeout, self._tail()))
            try:
                self._read(left)
            except KprofEOF:
                break
        return self._buf[start:]

    def quiet_for(self, seconds):
        """True when nothing at all arrives for `seconds` (for checking that a halted kernel stays silent)."""
        start = len(self._buf)
        deadline = time.monotonic() + seconds
        try:
            while time.monotonic() < deadline:
                self._read(deadline - time.monotonic())
        except KprofEOF:
            pass
        return len(self._buf) == start

    # ---- writing ----------------------------------------------------------------------------------------
    def send(self, text, timeout=CMD_TIMEOUT):
        """Writes text (latin-1: one character per byte) to COM1 a byte at a time as the pty has room, reading
        the kernel's output between bytes so neither side can block the other (the kernel echoes)."""
        data = text.encode(ENCODING)
        fd = self.child.child_fd
        deadline = time.monotonic() + timeout
        i = 0
        while i < len(data):
            left = deadline - time.monotonic()
            if left <= 0:
                raise KprofTimeout("the kernel took no more input after %d of %d bytes in %.1f s; output "
                                   "ends with:\n%s" % (i, len(data), timeout, self._tail()))
            readable, writable, _ = select.select([fd], [fd], [], left)
            if readable:
                self._read(0)
            if writable:
                i += os.write(fd, data[i:i + 1])

    def send_line(self, line, timeout=CMD_TIMEOUT):
        self.send(line + "\r", timeout)

    def cmd(self, line, timeout=CMD_TIMEOUT):
        """Runs one shell line: sends it with a carriage return, waits for the next prompt, and returns the
        output between the echoed line and that prompt (lines joined by "\\n", no trailing newline). For a
        printable line the shell accepts it also checks that the kernel echoed it."""
        self.drain()
        if self._buf:  # printed while no command ran (kept in the log and in unsolicited)
            self.unsolicited.append(self._buf)
            self._buf = ""
        self.send_line(line, timeout)
        deadline = time.monotonic() + timeout
        checks_echo = _printable(line) and line.strip() and len(line) <= LINE_MAX
        while True:
            try:
                m = self.expect(r"\n%s" % re.escape(PROMPT), deadline - time.monotonic(),
                                what="the prompt after %r" % _short(line))
            except KprofTimeout as e:
                raise KprofTimeout("%s\n%s" % (e, self.whereabouts())) from None
            echo, _, out = m.before.partition("\n")
            if not checks_echo or line in echo:
                return out
            # A log line a task printed as the line was sent (a device found late, a first interrupt) comes before
            # the echo: whole lines before it are unsolicited output, kept as such. Drawn above a prompt that had
            # not echoed the line yet, it is followed by that prompt again, which is not the command's: until the
            # echo comes, what came is unsolicited and the wait goes on (a wrong echo runs into the timeout).
            lines = m.before.split("\n")
            at = next((i for i, text in enumerate(lines[:-1]) if text.endswith(line)), None)
            if at is not None:
                self.unsolicited.append("\n".join(lines[:at]) + "\n")
                return "\n".join(lines[at + 1:])
            self.unsolicited.append(m.before + "\n" + PROMPT)

    def cmd_lines(self, line, timeout=CMD_TIMEOUT):
        out = self.cmd(line, timeout)
        return out.split("\n") if out else []

    def sync(self, timeout=CMD_TIMEOUT, kill_line=True):
        """Brings the shell to a known state after arbitrary input: Ctrl-U (kill line; kill_line=False leaves
        it out), then a unique unknown command whose answer ends the wait. Returns the output that came
        before that answer."""
        marker = "sync%d" % int(time.monotonic() * 1e6)
        self.send(("\x15" if kill_line else "") + marker + "\r", timeout)
        m = self.expect(r"(?m)^unknown command: %s \(try help\)\n%s" % (marker, re.escape(PROMPT)), timeout,
                        what="the answer to the sync line %s" % marker)
        return m.before

    # ---- the QEMU monitor (monitor=True) ----------------------------------------------------------------
    def monitor(self, command, timeout=CMD_TIMEOUT):
        """Runs one QEMU monitor command on the unix socket and returns its output."""
        if not self.monitor_path:
            raise KprofError("this Kprof was started without monitor=True")
        deadline = time.monotonic() + timeout
        with _connect_unix(self.monitor_path, deadline, "QEMU monitor") as s:
            got = _recv_until(s, b"(qemu) ", deadline)
            s.sendall(command.encode() + b"\n")
            got = _recv_until(s, b"(qemu) ", deadline)
        text = re.sub(r"\x1b\[[0-9;]*[A-Za-z]|\r", "", got.decode(errors="replace"))
        lines = text.split("\n")
        return "\n".join(lines[1:-1]) if len(lines) > 1 else ""

    # ---- QMP ------------------------------------------------------------------------------------------------
    def whereabouts(self):
        """One line for a failure's message: QEMU's run state and each vCPU's instruction pointer with the kernel
        symbol it falls in (a machine parked in the debugger, spinning, or halted shows here); a line saying why
        not when QEMU cannot be asked."""
        try:
            status = self.qmp("query-status", timeout=5).get("status")
            regs = self.qmp("human-monitor-command", {"command-line": "info registers -a"}, timeout=10)
        except (KprofError, OSError, ValueError) as e:
            return "QEMU could not be asked where its vCPUs are: %s" % e
        syms = sorted((addr, size, name) for name, (addr, size) in nm_symbols().items())
        where = []
        for cpu, rip in re.findall(r"(?ms)^CPU#(\d+).*?RIP=([0-9a-f]+)", regs):
            pc = int(rip, 16)
            i = bisect.bisect_right(syms, (pc, float("inf"), "")) - 1
            name = "%s+%#x" % (syms[i][2], pc - syms[i][0]) if i >= 0 and pc < syms[i][0] + max(syms[i][1], 1) \
                else "?"
            where.append("cpu %s %s (%s)" % (cpu, rip, name))
        return "QEMU: %s; %s" % (status, ", ".join(where) or "no CPU in `info registers -a`")
    def qmp(self, command, args=None, timeout=CMD_TIMEOUT):
        """Runs one QMP command on its own connection (greeting, qmp_capabilities, the command) and returns its
        "return" value; a QMP "error" raises KprofError. Events that arrive meanwhile are skipped."""
        deadline = time.monotonic() + timeout
        with _connect_unix(self.qmp_path, deadline, "QMP socket") as s:
            pending = [b""]

            def reply():
                while True:
                    while b"\n" not in pending[0]:
                        pending[0] += _recv_until(s, b"\n", deadline)
                    line, pending[0] = pending[0].split(b"\n", 1)
                    msg = json.loads(line)
                    if "event" not in msg:
                        return msg

            reply()  # the greeting
            for cmd, cmd_args in (("qmp_capabilities", None), (command, args)):
                req = {"execute": cmd}
                if cmd_args is not None:
                    req["arguments"] = cmd_args
                s.sendall(json.dumps(req).encode() + b"\n")
                msg = reply()
                if "error" in msg:
                    raise KprofError("QMP %s: %s" % (cmd, msg["error"].get("desc", msg["error"])))
        return msg.get("return")

    # ---- ending -----------------------------------------------------------------------------------------
    def _reap(self, timeout):
        deadline = time.monotonic() + timeout
        while self.child is not None and self.child.isalive():
            if time.monotonic() > deadline:
                return False
            select.select([], [], [], 0.02)
        if self.child is not None:
            self.exit_status = self.child.exitstatus if self.child.exitstatus is not None \
                else -(self.child.signalstatus or 0)
        return True

    def wait_exit(self, timeout=CMD_TIMEOUT):
        """Waits for QEMU to exit (after EOF); returns its exit status (negative: killed by that signal)."""
        if not self._reap(timeout):
            raise KprofTimeout("QEMU (pid %d) did not exit within %.1f s" % (self.pid, timeout))
        return self.exit_status

    def alive(self):
        return self.child is not None and self.child.isalive()

    def kill(self):
        """Ends QEMU by its pid: SIGTERM, then SIGKILL if it has not gone within 5 s."""
        if self.child is None:
            self._remove_tmpdir()
            return
        for sig in (signal.SIGTERM, signal.SIGKILL):
            if not self.child.isalive():
                break
            try:
                os.kill(self.pid, sig)
            except ProcessLookupError:
                break
            if self._reap(5.0):
                break
        try:
            self.drain()
        except Exception:
            pass
        self._reap(1.0)
        self.child.close(force=False)
        self._remove_tmpdir()

    def _remove_tmpdir(self):
        if self._tmpdir:
            shutil.rmtree(self._tmpdir, ignore_errors=True)
            self._tmpdir = None

    def _status_text(self):
        if self.child is None or self.child.isalive():
            return "still running"
        self._reap(0)
        return "status %s" % self.exit_status

    # ---- the log ----------------------------------------------------------------------------------------
    @property
    def log(self):
        """The whole serial stream so far, as read (carriage returns kept)."""
        return "".join(self._raw)

    def save_log(self, path):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(("# %s\n# %s\n" % (self.name, getattr(self, "command_line", ""))).encode())
            f.write(self.log.encode(ENCODING))
        return path

    def _tail(self, n=1200):
        text = self._buf[-n:] if self._buf else "".join(self._raw)[-n:].replace("\r", "")
        return text if text else "(nothing)"


class TerminalKprof(Kprof):
    """kprof as `make run` starts it -- scripts/qemu.sh with make run's options, its console (COM1 and the QEMU
    monitor multiplexed) on a terminal -- inside a tmux session of its own (a private socket), so a test sees what a
    user sees: screen() is `tmux capture-pane -p` (the screen as the terminal drew it, control sequences already
    acted on), raw() every byte the pane received (tmux pipe-pane), type() keys as typed. QEMU starts paused
    (-S) with a second monitor on a unix socket, so a test can change the machine (`set_link`) before the kernel
    runs; start() then lets it go. Kill by QEMU's pid (the pane's: qemu.sh execs QEMU), then the tmux server by
    its own socket."""

    def __init__(self, cols=100, rows=40, name="kprof-terminal", before_start=()):
        super().__init__(smp=4, mem=256, udp=True, netload=True, monitor=True, name=name)
        self.cols, self.rows = cols, rows
        self.before_start = list(before_start)  # monitor commands run while QEMU is paused
        self.tmux_socket = os.path.join(self._tmpdir, "tmux.sock")
        self.raw_path = os.path.join(self._tmpdir, "pane.raw")
        self.tmux_pid = None

    def _tmux(self, *args, timeout=CMD_TIMEOUT):
        return subprocess.run(["tmux", "-S", self.tmux_socket] + list(args), check=True, capture_output=True,
                              text=True, timeout=timeout).stdout

    def argv(self):
        """make run's command line (the Makefile's `run` target), less make, plus the test's monitor and -S."""
        return [os.path.join(TOP, "scripts", "qemu.sh"), "--smp", "4", "--mem", "256", "--cmdline", "",
                "--udp-port", str(self.udp_port), "--netload-port", str(self.netload_port),
                "--nic", "virtio-legacy", "--firmware", "bios", "--accel", "tcg",
                "--monitor", self.monitor_path, "--", "-S"]

    def start(self):
        if shutil.which("tmux") is None:
            raise KprofError("tmux is missing (scripts/deps.sh installs it)")
        argv = self.argv()
        for listener in BOOT_LISTENERS:
            listener(self)
        self.command_line = " ".join(argv)
        self.t_spawn = time.monotonic()
        # -x/-y: the terminal's size; TERM inside is tmux's own, as a user's make run would have
        self._tmux("new-session", "-d", "-x", str(self.cols), "-y", str(self.rows), "-c", TOP,
                   "exec " + " ".join(_shell_quote(a) for a in argv))  # exec: the pane's pid is QEMU's
        self._tmux("set-option", "-t", "0", "remain-on-exit", "on")
        self.tmux_pid = int(self._tmux("display-message", "-p", "#{pid}").strip())
        self.pid = int(self._tmux("display-message", "-p", "-t", "0", "#{pane_pid}").strip())
        self._tmux("pipe-pane", "-o", "-t", "0", "cat >> %s" % _shell_quote(self.raw_path))
        for command in self.before_start:
            self.monitor(command)
        self.monitor("cont")
        return self

    def wait_ready(self, timeout=BOOT_TIMEOUT):
        m = self.wait_screen(r"(?m)^ready:[^\n]*$", timeout, what="the ready: line on the screen")
        self.t_ready = time.monotonic()
        self.ready_line = m.group(0)
        self.wait_screen(lambda scr: last_line(scr) == PROMPT.rstrip(), CMD_TIMEOUT, what="the first prompt")
        return self.ready_line

    def screen(self):
        """The pane as plain text (what is on the screen now), trailing blanks of each line dropped."""
        return "\n".join(l.rstrip() for l in self._tmux("capture-pane", "-p", "-t", "0").split("\n"))

    def raw(self):
        """Every byte the pane received since start(), as the kernel and QEMU wrote them (latin-1)."""
        try:
            with open(self.raw_path, "rb") as f:
                return f.read().decode(ENCODING)
        except FileNotFoundError:
            return ""

    def type(self, text):
        """Types text as keys, literally ("\\r" is Enter), in one tmux command: the terminal gets it in one piece,
        so two lines typed at once reach the kernel back to back however slow the host is to start a process."""
        self._tmux("send-keys", "-t", "0", "-l", text)

    def _wait(self, source, test, timeout, what):
        rx = re.compile(test) if isinstance(test, str) else None
        def check():
            text = source()
            if rx is not None:
                return rx.search(text)
            return text if test(text) else None
        try:
            return poll(what or repr(test), check, timeout=timeout, every=0.05)
        except KprofError as e:
            raise KprofTimeout("%s; the screen:\n%s" % (e, self.screen())) from None

    def wait_screen(self, test, timeout=CMD_TIMEOUT, what=None):
        """Until the screen matches test (a regex: the match; or a predicate of the text: the text)."""
        return self._wait(self.screen, test, timeout, what)

    def wait_raw(self, test, timeout=CMD_TIMEOUT, what=None):
        """Until the bytes received match test (as wait_screen)."""
        return self._wait(self.raw, test, timeout, what)

    def alive(self):
        try:
            os.kill(self.pid, 0)
            return True
        except (ProcessLookupError, TypeError):
            return False

    def kill(self):
        """QEMU by its pid, then the tmux server by its pid; both were started here."""
        for pid in (self.pid, self.tmux_pid):
            if pid is None:
                continue
            for sig in (signal.SIGTERM, signal.SIGKILL):
                try:
                    os.kill(pid, sig)
                except ProcessLookupError:
                    break
                deadline = time.monotonic() + 5.0
                while time.monotonic() < deadline and self._exists(pid):
                    select.select([], [], [], 0.02)
                if not self._exists(pid):
                    break
        self._raw = [self.raw()]
        self._remove_tmpdir()

    @staticmethod
    def _exists(pid):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        try:  # a zombie of ours (tmux's server is a daemon, QEMU tmux's child): gone as far as we care
            with open("/proc/%d/stat" % pid) as f:
                return f.read().split(")")[-1].split()[0] != "Z"
        except OSError:
            return False

    @property
    def log(self):
        return self.raw() if self._tmpdir else "".join(self._raw)


def _shell_quote(arg):
    return "'" + arg.replace("'", "'\\''") + "'" if arg == "" or re.search(r"[^\w@%+=:,./-]", arg) else arg


def last_line(screen):
    """The last line of a screen capture that is not blank (a prompt "> " is ">" once trailing blanks go)."""
    lines = [l for l in screen.split("\n") if l.strip()]
    return lines[-1] if lines else ""


class _Match:
    """A re.Match plus the text before it."""

    def __init__(self, m, before):
        self.m = m
        self.before = before

    def group(self, *a):
        return self.m.group(*a)

    def groups(self):
        return self.m.groups()


def _short(line, n=60):
    return line if len(line) <= n else line[:n] + "...(%d chars)" % len(line)


def _connect_unix(path, deadline, what):
    """A connected unix stream socket to one of QEMU's servers; the socket appears as QEMU starts: poll for it."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    while True:
        try:
            s.connect(path)
            return s
        except (FileNotFoundError, ConnectionRefusedError):
            if time.monotonic() > deadline:
                s.close()
                raise KprofTimeout("no %s at %s" % (what, path))
            select.select([], [], [], 0.05)


def _recv_until(s, token, deadline):
    got = b""
    while not got.endswith(token):
        left = deadline - time.monotonic()
        if left <= 0:
            raise KprofTimeout("the QEMU monitor did not answer; got %r" % got[-200:])
        r, _, _ = select.select([s], [], [], left)
        if r:
            chunk = s.recv(4096)
            if not chunk:
                raise KprofEOF("the QEMU monitor closed; got %r" % got[-200:])
            got += chunk
    return got


# ---- parsing the shell's tables ----------------------------------------------------------------------------
def parse_table(out, header_words):
    """Splits a command's output into rows of whitespace-separated fields after the header line, which must
    contain header_words in order. Returns a list of lists of strings."""
    lines = [l for l in out.split("\n") if l.strip()]
    if not lines or lines[0].split() != list(header_words):
        raise KprofError("expected the header %r, got:\n%s" % (" ".join(header_words), out))
    return [l.split() for l in lines[1:]]


def nm_symbols(elf=ELF):
    """{name: (address, size)} for the text symbols of the kernel ELF, from `nm -S`."""
    out = subprocess.run(["nm", "-S", "--defined-only", elf], check=True, capture_output=True, text=True,
                         timeout=60).stdout
    syms = {}
    for line in out.splitlines():
        f = line.split()
        if len(f) == 4 and f[2] in "Tt":
            syms[f[3]] = (int(f[0], 16), int(f[1], 16))
        elif len(f) == 3 and f[1] in "Tt":
            syms.setdefault(f[2], (int(f[0], 16), 0))
    return syms


# ---- the shell's answers, parsed -----------------------------------------------------------------------------
def poll(what, fn, timeout=15.0, every=0.05):
    """Calls fn until it returns a true value or the deadline passes (then fails naming `what`)."""
    deadline = time.monotonic() + timeout
    while True:
        got = fn()
        if got:
            return got
        if time.monotonic() > deadline:
            raise KprofError("%s: not within %.1f s" % (what, timeout))
        select.select([], [], [], every)  # pace the polling; the deadline bounds it


def cpus_table(k):
    """{cpu: (apic, online, ticks, busy)} from `cpus`."""
    rows = parse_table(k.cmd("cpus"), ["CPU", "APIC", "ONLINE", "TICKS", "BUSY"])
    table = {}
    for r in rows:
        if len(r) != 5:
            raise KprofError("bad cpus row %r" % r)
        table[int(r[0])] = (int(r[1]), r[2], int(r[3]), int(r[4]))
    return table


def ps_table(k):
    """[(pid, cpu, state, name)] from `ps` (its last column, LABELS, is left out: ps_labels has it)."""
    return [row[:4] for row in ps_rows(k)]


def ps_rows(k):
    """[(pid, cpu, state, name, labels)] from `ps`; labels is "-" for a task without a label set (a set has no
    spaces, so it is always the last field)."""
    rows = parse_table(k.cmd("ps"), ["PID", "CPU", "STATE", "NAME", "LABELS"])
    out = []
    for r in rows:
        if len(r) < 5:
            raise KprofError("bad ps row %r" % r)
        out.append((int(r[0]), int(r[1]), r[2], " ".join(r[3:-1]), r[-1]))
    return out


def uptime(k):
    """Seconds since boot from `uptime`."""
    out = k.cmd("uptime")
    m = re.fullmatch(r"up (\d+)\.(\d{3}) s", out.strip())
    if not m:
        raise KprofError("uptime said %r" % out)
    return int(m.group(1)) + int(m.group(2)) / 1000.0


def heap_used(k):
    """The heap's used bytes from `mem`."""
    out = k.cmd("mem")
    m = re.search(r"(?m)^heap: used (\d+) bytes", out)
    if not m:
        raise KprofError("mem said:\n%s" % out)
    return int(m.group(1))


# ---- the starved-QEMU retry rule ------------------------------------------------------------------------------
TICK_HZ = 100   # the kernel's tick, per CPU, on the kernels the integration tests boot (no profile.hz=)
ATTEMPTS = 5    # unstarved's attempts in all
# After a starved attempt unstarved waits before the next, longer each time (STARVED_PAUSE_S, doubling, at most
# STARVED_PAUSE_MAX_S): a host's busy stretch -- another lane's QEMU booting under PVM, a flood -- outlasts a
# few back-to-back attempts (a loaded pass: test_profile starved on all 4, each at 65-85% of its ticks), and
# a test that waits it out is judged on a window the host gave it. Nothing waits when nothing starved.
STARVED_PAUSE_S = 5
STARVED_PAUSE_MAX_S = 30


def cpu_ticks(k):
    """(host time, {cpu: TICKS}) from `cpus`, the host time taken halfway through the command."""
    t0 = time.monotonic()
    table = cpus_table(k)
    return (t0 + time.monotonic()) / 2, {cpu: row[2] for cpu, row in table.items()}


def lost_ticks(k, since, hz=TICK_HZ):
    """{cpu: (ticks, expected)} for each CPU that ticked well below hz (the tick's rate) of host time since
    `since` (a cpu_ticks() answer)."""
    t1, now = cpu_ticks(k)
    t0, then = since
    expected = (t1 - t0) * hz
    return {c: (now[c] - then.get(c, 0), round(expected)) for c in now if now[c] - then.get(c, 0) < 0.9 * expected - 2}


def unstarved(k, attempt, what, hz=TICK_HZ, attempts=ATTEMPTS):
    """attempt()'s result, under the starved-QEMU retry rule.

    Checks of windows, sample counts and rates hold only while QEMU gets the host's CPUs: on a host busy with
    other QEMUs a vCPU thread can go unscheduled for hundreds of milliseconds, its timer ticks are lost, and a
    500 ms window comes back as 780 ms with a quarter of its samples. So an attempt whose checks failed (an
    AssertionError) is retried only when the kernel's own tick counters (`cpus`) show that some CPU ticked well
    below hz of host time meanwhile (lost_ticks: under 90% of the ticks host time gives, less 2), or when the
    attempt raised HostStarved, its own window's evidence (a starved stretch of a window is diluted in the counters
    by the seconds a long answer takes over the console), up to attempts in all, each after a pause that grows
    (STARVED_PAUSE_S) so that a busy stretch of the host can pass. k=None: a machine stopped under
    a debugger, whose console cannot answer `cpus`; only HostStarved is evidence then. A failure while every CPU got its ticks fails at once, and starvation on every attempt fails too
    (KprofError, naming each attempt's loss)."""
    starved = []
    for _ in range(attempts):
        since = cpu_ticks(k) if k is not None else None
        try:
            return attempt()
        except AssertionError as e:
            lost = lost_ticks(k, since, hz) if k is not None else {}
            if not lost and not isinstance(e, HostStarved):
                raise
            evidence = "CPU: (ticks, expected) %s" % lost if lost else "in its own window"
            note = "%s failed while the host starved QEMU (%s): %s" % (what, evidence, str(e).split("\n")[0])
            print(note)  # shown with the test's output if it fails in the end
            starved.append(note)
            if len(starved) < attempts:
                time.sleep(min(STARVED_PAUSE_S * 2 ** (len(starved) - 1), STARVED_PAUSE_MAX_S))
    raise KprofError("the host starved QEMU of its ticks on all %d attempts, so the checks could not be judged:\n%s"
                     % (attempts, "\n".join(starved)))


# ---- booting a kernel for a test ------------------------------------------------------------------------------
def boot_kernel(*cmdline_words, make=Kprof, timeout=BOOT_TIMEOUT, boot_log_has=(), dhcp=False, **opts):
    """One kernel booted for a test, returned running. make(cmdline=..., **opts) constructs it, the command line
    being the non-empty cmdline_words joined by spaces: Kprof (the default), or conftest's kprof_factory or
    _new_kernel so that the test owns it (its log saved when it fails); a kernel make returns already started
    (kprof_factory without boot=False) is not started again. It is then started and waited for (`ready:` and the
    first prompt) for timeout seconds. boot_log_has: text (or texts) the boot log must hold, asserted before any
    command. dhcp=True: then waits for the DHCP address (kprof_net.wait_dhcp: the kernel's log line, no command
    polled meanwhile, then `net`). A Kprof made here is killed when any of this fails."""
    k = make(cmdline=" ".join(w for w in cmdline_words if w), **opts)
    try:
        if k.child is None:
            k.start()
            k.wait_ready(timeout)
        for text in [boot_log_has] if isinstance(boot_log_has, str) else boot_log_has:
            assert text in k.boot_log, "the boot log has no %r:\n%s" % (text, k.boot_log)
        if dhcp:
            from kprof_net import wait_dhcp  # imported here: kprof_net imports this module
            wait_dhcp(k)
    except BaseException:
        if make is Kprof:
            k.kill()
        raise
    return k


# ---- checks more than one module makes -------------------------------------------------------------------------
def elf_build_id(elf=ELF):
    """The ELF's GNU build id as readelf prints it (hex), independent of scripts/kprof_profile.py's reading."""
    out = subprocess.run(["readelf", "-n", elf], check=True, capture_output=True, text=True, timeout=60).stdout
    m = re.search(r"Build ID: ([0-9a-f]+)", out)
    assert m, "no build id in %s:\n%s" % (elf, out)
    return m.group(1)


def booted(k):
    """A generator for module fixtures: boots k, yields it and kills it afterwards (also when the boot fails)."""
    try:
        k.boot()
        yield k
    finally:
        k.kill()


def assert_uptime_keeps_pace(k, cpus):
    """Over a rise of `uptime` by 1 s, the guest's clock keeps pace with the host's (bounded by each command's round
    trip) and each of CPUs 0..cpus-1 ticks at 100 Hz (75..125) -- under the starved-QEMU rule (unstarved): a loaded
    pass saw uptime rise 1.05 s while 1.38 s passed on a host that had QEMU's CPUs elsewhere."""
    unstarved(k, lambda: _uptime_keeps_pace(k, cpus), "uptime keeping pace with the host")


def _uptime_keeps_pace(k, cpus):
    t0 = time.monotonic()
    u0 = uptime(k)
    t1 = time.monotonic()
    ticks0 = cpus_table(k)
    state = {}

    def advanced():
        state["t2"] = time.monotonic()
        state["u"] = uptime(k)
        state["t3"] = time.monotonic()
        return state["u"] - u0 >= 1.0

    poll("uptime rising by 1 s", advanced, timeout=20, every=0.1)
    ticks1 = cpus_table(k)
    du = state["u"] - u0
    # The guest read its clock somewhere inside each command's round trip.
    lo, hi = state["t2"] - t1, state["t3"] - t0
    assert 0.9 * lo - 0.05 <= du <= 1.1 * hi + 0.05, \
        "uptime rose %.3f s while %.3f..%.3f s passed on the host" % (du, lo, hi)
    for c in range(cpus):
        rate = (ticks1[c][2] - ticks0[c][2]) / du
        assert 75 <= rate <= 125, "CPU %d ticked at %.0f Hz, want 100" % (c, rate)


def assert_poweroff_ends_qemu(k, where=""):
    """`poweroff` prints its ACPI S5 line, nothing panics after it, and QEMU exits 0 (the debug-exit device would
    give an odd status); where: words for the messages (" under UEFI")."""
    k.send_line("poweroff")
    k.expect(r"(?m)^poweroff: ACPI S5\n", what="the poweroff line%s" % where)
    after = k.expect_eof(timeout=15)
    assert "panic" not in after.lower(), "output after poweroff%s:\n%s" % (where, after)
    status = k.wait_exit(timeout=10)
    assert status == 0, "QEMU exit status %s after poweroff%s" % (status, where)
