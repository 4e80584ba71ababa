"""The same ISO booted by UEFI firmware (Debian's OVMF, Kprof(firmware="uefi")) instead of SeaBIOS: GRUB-EFI
loads the kernel through multiboot2 and exits boot services. The kernel must say it was booted by UEFI and
keep off the VGA text screen that is not there, drawing the console on the GOP framebuffer GRUB hands over
instead (read back through QEMU's `screendump`, cell by cell against the kernel's own font,
arch/x86_64/font8x16.c); and everything else must work as under the BIOS -- all 4 CPUs (the AP trampoline in
low memory the EFI map calls free), the PIT-calibrated tick and `profile`, virtio-net and the UDP shell through
QEMU's hostfwd, the gdb stub on COM2, the PS/2 keyboard, ACPI poweroff.

One kernel for the whole module (OVMF adds seconds to every boot under TCG); the poweroff test ends it, so it
comes last. The BIOS boot's own account (`boot: BIOS ...`, VGA text) is checked in test_boot.py.
"""

import os
import re
import tempfile

import pytest

from kprof_qemu import TOP, Kprof, KprofError, cpus_table, poll
from test_gdb import assert_running, run_gdb, threads
from test_net import DHCP_ADDRESS, net_status, udp_cmd, wait_dhcp
from test_profile import parse_report

CPUS = 4
RX_BOOT = re.compile(r"(?m)^boot: (?P<firmware>UEFI \(64-bit\)|BIOS), (?P<loader>[^,\n]+), (?P<console>[^\n]*)$")


@pytest.fixture(scope="module")
def uefi(request):
    """kprof under OVMF: 4 CPUs, 256 MiB, the UDP shell forwarded from a free port, COM2 for gdb, a monitor
    socket for screendump."""
    k = Kprof(smp=CPUS, mem=256, firmware="uefi", udp=True, gdb=True, monitor=True,
              name=request.node.name + "-uefi")
    try:
        k.boot()
        # DHCP finishes after ready: and logs its address line then; wait for it first, so that line cannot
        # land in the middle of a command's output.
        wait_dhcp(k)
        yield k
    finally:
        k.kill()


def test_uefi_boot_reaches_ready_with_4_cpus_and_says_uefi_serial_console(uefi):
    assert uefi.cpus == CPUS, "ready line %r does not say %d cpus" % (uefi.ready_line, CPUS)
    log = uefi.boot_log
    assert "panic" not in log.lower(), "the boot log mentions a panic:\n%s" % log
    assert "smp: %d cpus online" % CPUS in log, "not every CPU started under UEFI:\n%s" % log
    m = RX_BOOT.search(log)
    assert m, "no `boot:` line in the boot log:\n%s" % log
    assert m.group("firmware") == "UEFI (64-bit)", "booted by OVMF, but the kernel says %r" % m.group(0)
    assert m.group("loader").startswith("GRUB"), "the loader is not GRUB: %r" % m.group(0)
    # No VGA text mode under UEFI: the console is COM1 and a text console on GRUB's GOP framebuffer, and the
    # kernel says that VGA text mode is absent.
    assert re.fullmatch(r"console serial \+ framebuffer \d+x\d+ text on \d+x\d+ RGB at 0x[0-9a-f]+ "
                        r"\(no VGA text mode\)", m.group("console")), \
        "the console under UEFI should be serial + framebuffer, no VGA text: %r" % m.group(0)
    # lscpu gives the same account.
    lscpu = uefi.cmd("lscpu")
    assert "boot: " + m.group(0)[len("boot: "):] in lscpu.split("\n"), "lscpu lacks the boot line:\n%s" % lscpu
    print("UEFI boot to ready: %.2f s" % uefi.boot_seconds)


# ---- the framebuffer console, read back ------------------------------------------------------------------------
def load_font():
    """{16 row bytes: character} from arch/x86_64/font8x16.c."""
    with open(os.path.join(TOP, "arch", "x86_64", "font8x16.c")) as f:
        src = f.read()
    font = {}
    for data, code in re.findall(r"\{ ((?:0x[0-9a-f]{2}, ){15}0x[0-9a-f]{2}) \}, /\* 0x([0-9a-f]{2})", src):
        font[bytes(int(b, 16) for b in data.split(", "))] = chr(int(code, 16))
    assert len(font) == 95, "font8x16.c has %d distinct glyphs, want 95" % len(font)
    return font


def screen_text(k, font):
    """The screen as text lines: QEMU's screendump (PPM), each 8x16 cell looked up in the font ('?' for a cell
    that is no glyph: the cursor). Also checks that every pixel is the background or the one text colour."""
    d = tempfile.mkdtemp(prefix="kprof-shot-")
    path = os.path.join(d, "screen.ppm")
    try:
        k.monitor("screendump %s" % path)
        data = poll("the screendump file", lambda: os.path.isfile(path) and open(path, "rb").read())
    finally:
        if os.path.exists(path):
            os.unlink(path)
        os.rmdir(d)
    m = re.match(rb"P6\s+(\d+)\s+(\d+)\s+255\s", data)
    assert m, "screendump is not a PPM: %r" % data[:20]
    w, h = int(m.group(1)), int(m.group(2))
    px = data[m.end():]
    assert len(px) == w * h * 3, "screendump has %d bytes of pixels for %dx%d" % (len(px), w, h)
    colours = {px[i:i + 3] for i in range(0, len(px), 3)}
    assert colours <= {b"\0\0\0", b"\xaa\xaa\xaa"}, "pixels other than black and the text grey: %s" % colours
    lines = []
    for row in range(h // 16):
        line = []
        for col in range(w // 8):
            cell = bytes(sum(0x80 >> x for x in range(8) if px[((row * 16 + y) * w + col * 8 + x) * 3])
                         for y in range(16))
            line.append(font.get(cell, "?"))
        lines.append("".join(line).rstrip())
    return lines


def console_since_boot_line(k, cols):
    """The console's lines from the kernel's `boot:` line on (the first the framebuffer shows), as COM1 carried
    them, each cut into screen rows of cols characters."""
    text = k.log.replace("\r", "")
    text = text[text.index("\nboot: ") + 1:]
    rows = []
    for line in text.split("\n"):
        rows += [line[i:i + cols].rstrip() for i in range(0, max(len(line), 1), cols)]
    return rows


def assert_screen_is_the_console(k, font, timeout=5.0):
    """The framebuffer shows the newest lines of the console, the same as COM1, and the cursor after the prompt.
    COM1 gets each piece of output before the framebuffer does, so the screen is read again until it agrees
    (or the deadline passes)."""
    want = console_since_boot_line(k, COLS)
    assert want[-1] == ">", "COM1 does not end with the prompt: %r" % want[-3:]  # ("> ", right-stripped)
    last = {}

    def agrees():
        screen = screen_text(k, font)
        while screen and not screen[-1]:
            screen.pop()
        last["screen"] = screen
        return screen and screen[-1] == "> ?" and screen[:-1] == want[-len(screen):-1] and screen

    try:
        return poll("the screen showing the console", agrees, timeout=timeout, every=0.2)
    except KprofError as e:
        raise KprofError("%s\n--- screen (the cursor cell reads ?)\n%s\n--- COM1\n%s"
                         % (e, "\n".join(last["screen"]), "\n".join(want[-len(last["screen"]) or -1:]))) from None


COLS, ROWS = 160, 50   # OVMF's 1280x800 GOP mode in 8x16 cells


def test_uefi_console_text_is_drawn_on_the_framebuffer(uefi):
    font = load_font()
    assert "%dx%d text on 1280x800" % (COLS, ROWS) in uefi.boot_log, "not the 1280x800 mode this test expects"
    uefi.cmd("uptime")
    assert_screen_is_the_console(uefi, font)
    # Enough lines to pass the bottom (again: the fixture's DHCP polling may have scrolled it already): the lower
    # half moves up, more than once, and the text stays in order.
    for _ in range(4):
        uefi.cmd("help")
    uefi.cmd("uptime")
    screen = assert_screen_is_the_console(uefi, font)
    assert not screen[0].startswith("boot: "), "the screen never scrolled"
    assert ROWS // 2 <= len(screen) <= ROWS, "%d rows of text on a %d-row screen after scrolling" % (len(screen), ROWS)


def test_uefi_help_and_cpus_all_online_and_ticking(uefi):
    names = [l.split()[0] for l in uefi.cmd("help").split("\n") if l.strip()]
    for want in ("help", "profile", "lscpu", "cpus", "net", "poweroff"):
        assert want in names, "help does not list %s: %s" % (want, names)
    first = cpus_table(uefi)
    assert sorted(first) == list(range(CPUS)), "cpus lists %s" % sorted(first)
    assert all(row[1] == "yes" for row in first.values()), "not every CPU online: %s" % first
    assert len({row[0] for row in first.values()}) == CPUS, "APIC ids not distinct: %s" % first
    poll("every CPU's TICKS rising", lambda: all(row[2] > first[c][2] for c, row in cpus_table(uefi).items()))


def test_uefi_profile_500_reports_samples(uefi):
    # The tick was calibrated against the PIT under OVMF too: parse_report checks the window and that the
    # sample count fits 100 Hz per CPU.
    r = parse_report(uefi.cmd("profile 500"), 500, 8)
    assert r.samples > 0, "profile 500 under UEFI has no samples"


def test_uefi_udp_shell_answers_over_virtio_net(uefi):
    out = udp_cmd(uefi.udp_port, "uptime")
    assert re.fullmatch(r"up \d+\.\d{3} s", out), "uptime over UDP said %r" % out
    n = net_status(uefi)
    assert n["address"] == DHCP_ADDRESS and n["rx_packets"] > 0 and n["tx_packets"] > 0, n
    assert n["requests"] >= 1, "the UDP shell counted no request: %s" % n


def test_uefi_gdb_stub_on_com2_stops_every_cpu_and_detaches(uefi):
    text = run_gdb(uefi, ["info threads", "bt", "detach"])
    assert [t[1] for t in threads(text)] == list(range(CPUS)), "info threads under UEFI:\n%s" % text
    assert re.search(r"(?m)^#0 +(0x[0-9a-f]+ in )?[A-Za-z_]\w* \(", text), "bt is not symbolised:\n%s" % text
    assert "detached" in text, text
    assert_running(uefi)


def test_uefi_ps2_keyboard_types_a_command(uefi):
    # OVMF leaves the i8042 to the kernel as SeaBIOS does: keys pressed through QEMU's monitor arrive as scan
    # code set 1 on IRQ 1 and reach the shell.
    uefi.sync()
    for key in "uptime":
        uefi.monitor("sendkey " + key)
    uefi.monitor("sendkey ret")
    uefi.expect(r"(?m)^uptime\nup \d+\.\d{3} s\n", what="uptime typed on the PS/2 keyboard, and its answer")
    uefi.expect(r"(?m)^%s" % re.escape("> "), what="the prompt after the typed uptime")


def test_uefi_poweroff_ends_qemu(uefi):
    """Last: it ends the module's kernel."""
    uefi.send_line("poweroff")
    uefi.expect(r"(?m)^poweroff: ACPI S5\n", what="the poweroff line")
    after = uefi.expect_eof(timeout=15)
    assert "panic" not in after.lower(), "output after poweroff:\n%s" % after
    status = uefi.wait_exit(timeout=10)
    assert status == 0, "QEMU exit status %s after poweroff under UEFI" % status
