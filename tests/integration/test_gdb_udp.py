"""The gdb stub over UDP (issue 15 items 1 and 3): `gdb.udp=1234 gdb.udp.insecure` forwarded from a free host
port, and gdb 13's own `target remote udp:127.0.0.1:P` -- which cannot repeat a nonce, so it works only in the
insecure mode (issue 24; without the flag, test_gdb_relay.py and test_gdb_forged.py).

- The insecure mode's boot-log warning says what it means.
- `net` over the (unkeyed) UDP shell says "peer hidden" while the console names the peer.

- gdb over UDP sees one thread per CPU, a symbolised `bt`, a breakpoint hit from the console, a `stepi`,
  `detach`, and the console answers after.
- `source scripts/prof.py` + `prof report` over UDP is byte for byte the console's `profile` report.
- With the network task wedged on purpose (`net wedge MS`), gdb still attaches (the tick's fallback poll).
- A second sender is ignored while gdb is attached, and can attach once gdb has detached.
- Garbage datagrams to the port change nothing: the machine never stops, nobody becomes the peer.
- COM2 keeps working beside it: a COM2 session, then a UDP one, on the same boot.
- Every network card (virtio legacy and modern, e1000, e1000e) carries a session, and 512 KiB of the kernel's
  text read over UDP (replies of many datagrams, each of several fragments) equals the ELF's bytes.
- Bad gdb.udp= values: one boot-log line each, the option ignored.

gdb runs as `timeout -k 3 N gdb -batch -nx` (kprof_gdb.py's UdpGdb: its Gdb pointed at the UDP target).
"""

import os
import re
import subprocess

import pytest

from kprof_qemu import NICS, TOP, poll
from kprof_rsp import packet
from kprof_gdb import (WRAPPER, UdpGdb, assert_running, boot_udp, counter, gdb_udp_line, gate, mark, received,
                       received_until, run_gdb, threads, udp_socket)
from kprof_report import burn_labelled, console_report, wait_no_burn

# Kernels this module boots (conftest.py fails a boot past BOOTS), by the test that boots them -- a module kernel
# counts for the first test that uses it, a test named alone needs a fresh one:
# test_a_second_peer_is_ignored_while_the_first_is_attached 1, test_a_write_larger_than_a_frame_is_reassembled 1,
# test_attach_while_the_network_task_is_wedged 1, test_bad_gdb_udp_values_are_one_line_and_ignored[*] 3,
# test_com2_and_udp_sessions_on_one_boot 1, test_every_card_carries_a_session_and_reads_are_exact[*] 4,
# test_garbage_to_the_port_changes_nothing 1, test_net_hides_the_peer_from_unkeyed_udp_readers 1,
# test_net_wedge_refuses_bad_times 1, test_prof_report_over_udp_is_the_consoles 1,
# test_threads_bt_breakpoint_step_detach_over_udp 1.
BOOTS = 16

PROF_PY = os.path.join(TOP, "scripts", "prof.py")
UDPSH = os.path.join(TOP, "scripts", "udpsh")


def test_threads_bt_breakpoint_step_detach_over_udp(kprof_factory):
    k = boot_udp(kprof_factory)
    g = UdpGdb(k, ["info threads", "bt", "break cmd_uptime", mark("resuming"), "continue", "bt",
                   "print $pc", "stepi", "print $pc", "delete", "detach"])
    g.wait_mark("resuming")
    k.send("uptime\r")
    text = g.finish()
    ts = threads(text)
    assert [t[1] for t in ts] == [0, 1, 2, 3], "info threads did not list CPUs 0-3:\n%s" % text
    assert re.search(r"(?m)^#1 +0x[0-9a-f]+ in [A-Za-z_]\w* \(", text), "bt is not symbolised:\n%s" % text
    assert re.search(r"Thread \d+ hit Breakpoint 1, cmd_uptime \(", text), "no breakpoint hit:\n%s" % text
    assert re.search(r"(?m)^#1 +0x[0-9a-f]+ in shell_run_line \(", text), "bt lacks the shell:\n%s" % text
    pcs = [int(v, 16) for v in re.findall(r"(?m)^\$\d+ = \(void \(\*\)\(\)\) (0x[0-9a-f]+)", text)]
    assert len(pcs) == 2 and pcs[1] != pcs[0], "stepi did not move the pc:\n%s" % text
    assert "detached" in text, text
    k.expect(r"up \d+\.\d{3} s\n", what="the uptime that hit the breakpoint, finished after detach")
    assert_running(k)
    line = gdb_udp_line(k)
    assert "no peer" in line, line          # detached: forgotten
    assert counter(line, "stops") >= 1, line


def test_prof_report_over_udp_is_the_consoles(kprof_factory, tmp_path):
    k = boot_udp(kprof_factory)
    wait_no_burn(k)
    burn_labelled(k, 2000, 2)
    console = console_report(k, "profile 300 all 3")
    wrapper = tmp_path / "kp_run.py"
    wrapper.write_text(WRAPPER)
    g = UdpGdb(k, ["source %s" % PROF_PY, "source %s" % wrapper, "python kp_run('report', 'prof report')",
                   "detach"])
    text = g.finish()
    m = re.search(r"(?ms)^@@begin report (ok|error)\n(.*?)^@@end report\n", text)
    assert m and m.group(1) == "ok", "prof report over UDP failed:\n%s" % text
    assert m.group(2) == console, "prof report over UDP is not the console's:\n%s\n--- the console's:\n%s" \
        % (m.group(2), console)
    assert_running(k)


def test_attach_while_the_network_task_is_wedged(kprof_factory):
    k = boot_udp(kprof_factory)
    assert k.cmd("net wedge 20000") == "net: the network task sleeps 20000 ms without polling the card"
    g = UdpGdb(k, ["info threads", "detach"])
    text = g.finish(timeout=40)
    ts = threads(text)
    assert len(ts) == 4, "no threads over UDP with the network task wedged:\n%s" % text
    assert_running(k)
    line = gdb_udp_line(k)
    assert counter(line, "tick polls") > 0, line


def test_net_wedge_refuses_bad_times(kprof_factory):
    k = boot_udp(kprof_factory)
    for bad in ("0", "60001", "x", "-1"):
        assert k.cmd("net wedge %s" % bad) == "net wedge: '%s' is not a time 1..60000 ms" % bad
    assert k.cmd("net wedge").startswith("usage: net | net wedge MS")


def test_a_second_peer_is_ignored_while_the_first_is_attached(kprof_factory):
    k = boot_udp(kprof_factory)
    g = UdpGdb(k, ["info threads", gate("attached"), "detach"])
    g.wait_mark("attached")
    other = udp_socket()
    other.sendto(packet("?"), ("127.0.0.1", k.gdb_udp_port))
    assert received(other, 2.0) == b"", "the second sender was answered while gdb was attached"
    g.release()
    text = g.finish()
    assert len(threads(text)) == 4, text
    assert_running(k)
    # gdb detached: the other sender may attach now, and detach in turn
    other.sendto(packet("?"), ("127.0.0.1", k.gdb_udp_port))
    got = received_until(other, rb"\$[ST]05", 20, "stop reply to the second sender")
    assert got.startswith(b"+"), got
    other.sendto(b"+", ("127.0.0.1", k.gdb_udp_port))
    other.sendto(packet("D"), ("127.0.0.1", k.gdb_udp_port))
    received_until(other, rb"\$OK#9a", 20, "OK to D")
    other.sendto(b"+", ("127.0.0.1", k.gdb_udp_port))  # as gdb acks it: the stub waits for that
    assert_running(k)
    assert "no peer" in gdb_udp_line(k)


def test_net_hides_the_peer_from_unkeyed_udp_readers(kprof_factory):
    k = boot_udp(kprof_factory, udp=True)
    s = udp_socket()
    to = ("127.0.0.1", k.gdb_udp_port)
    s.sendto(packet("?"), to)
    received_until(s, rb"\$[ST]05", 20, "stop reply")
    s.sendto(b"+", to)
    s.sendto(packet("c"), to)  # running again; the peer stays until it detaches or goes quiet for 60 s
    poll("the machine running", lambda: re.fullmatch(r"up \d+\.\d+ s", k.cmd("uptime")) is not None, timeout=20)
    assert re.search(r"gdb udp: port 1234 at \S+, peer 10\.0\.2\.2:\d+,", k.cmd("net")), "the console names it"
    env = {n: v for n, v in os.environ.items() if n != "KPROF_UDPSH_KEY"}
    over_udp = poll("net over the UDP shell", lambda: (lambda r: r.stdout if r.returncode == 0 else None)(
        subprocess.run([UDPSH, "-t", "5", "-p", str(k.udp_port), "127.0.0.1", "net"], capture_output=True,
                       text=True, env=env, timeout=30)), timeout=30)
    assert re.search(r"gdb udp: port 1234 at \S+, peer hidden,", over_udp), over_udp
    assert "10.0.2.2:" not in over_udp.split("gdb udp:")[1].split("\n")[0], over_udp


def test_garbage_to_the_port_changes_nothing(kprof_factory):
    k = boot_udp(kprof_factory)
    s = udp_socket()
    junk = [b"hello", b"$g#00", b"$g#6", b"+", b"-", b"\x03\x03", b"$$#00", b"#67", bytes(range(256)),
            b"$" + b"y" * 20000 + b"#00", b"", b"$qSupported#00"]  # (20000 x would sum to 00: a good packet)
    for j in junk:
        s.sendto(j, ("127.0.0.1", k.gdb_udp_port))
    assert received(s, 1.5) == b"", "the kernel answered junk"
    assert_running(k)
    line = poll("the junk counted", lambda: (lambda l: l if counter(l, "idle junk") + counter(
        l, "reply-looking dropped") >= len(junk) - 1 else None)(gdb_udp_line(k, lines=2)), timeout=10)
    assert "no peer" in line and counter(line, "stops") == 0, line
    assert_running(k)


def test_com2_and_udp_sessions_on_one_boot(kprof_factory):
    k = boot_udp(kprof_factory, gdb=True)
    text = run_gdb(k, ["info threads", "detach"])
    assert len(threads(text)) == 4, "COM2:\n%s" % text
    text = UdpGdb(k, ["info threads", "detach"]).finish()
    assert len(threads(text)) == 4, "UDP after COM2:\n%s" % text
    text = run_gdb(k, ["info threads", "detach"])
    assert len(threads(text)) == 4, "COM2 after UDP:\n%s" % text
    assert_running(k)


@pytest.mark.parametrize("value", ["0", "65536", "12x"])
def test_bad_gdb_udp_values_are_one_line_and_ignored(kprof_factory, value):
    k = kprof_factory(cmdline="gdb.udp=%s" % value, udp=True)
    lines = [l for l in k.boot_log.splitlines() if "gdb.udp" in l]
    assert lines == ["warning: gdb: gdb.udp=%s is not a UDP port 1..65535: ignored" % value], k.boot_log
    assert "gdb udp:" not in k.cmd("net")
    assert_running(k)


# Before `target remote` gdb reads memory from the ELF file; after it, from the machine: the kernel's text,
# which nothing writes while it runs (no breakpoint is set), must be the same bytes.
READ_TEXT = ("python import hashlib, time; a = lambda n: int(gdb.parse_and_eval('(long)&' + n)); "
             "t, e = a('__text_start'), a('__text_end'); t0 = time.time(); "
             "d = bytes(gdb.selected_inferior().read_memory(t, e - t)); "
             "print('@@{tag} %d %s %.3f' % (len(d), hashlib.sha256(d).hexdigest(), time.time() - t0))")


@pytest.mark.parametrize("nic", sorted(NICS))
def test_every_card_carries_a_session_and_reads_are_exact(kprof_factory, nic):
    k = boot_udp(kprof_factory, nic=nic)
    g = UdpGdb(k, ["info threads", READ_TEXT.format(tag="target"), "detach"], pre=[READ_TEXT.format(tag="file")])
    text = g.finish()
    assert len(threads(text)) == 4, "%s: no session:\n%s" % (nic, text)
    from_file = re.search(r"@@file (\d+) (\w+)", text)
    from_target = re.search(r"@@target (\d+) (\w+) ([\d.]+)", text)
    assert from_file and from_target, text
    assert int(from_file.group(1)) > 100000, text       # far more than one packet's worth
    assert from_target.group(1, 2) == from_file.group(1, 2), "%s: the text read over UDP is not the ELF's" % nic
    assert_running(k)
    assert counter(gdb_udp_line(k), "out") > 8, gdb_udp_line(k)


# A large write (gdb's binary X packet of 32 KiB: one datagram of about 33 KB, over 20 fragments into the
# kernel), of the bytes already there -- the machine is stopped, so nothing changes -- then read back.
WRITE_BACK = ("python import hashlib; b = int(gdb.parse_and_eval('(long)&__bss_start')); i = gdb.selected_inferior(); "
              "d = bytes(i.read_memory(b, 32768)); i.write_memory(b, d); "
              "print('@@same %s' % (bytes(i.read_memory(b, 32768)) == d))")


def test_a_write_larger_than_a_frame_is_reassembled(kprof_factory):
    k = boot_udp(kprof_factory)
    text = UdpGdb(k, [WRITE_BACK, "detach"]).finish()
    assert "@@same True" in text, text
    assert_running(k)
    frames = re.search(r"(?m)^gdb frames: .*$", k.cmd("net")).group(0)
    assert counter(frames, "reassembled") >= 1 and counter(frames, "fragments") >= 20, frames
