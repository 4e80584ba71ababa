"""The network in QEMU: the virtio-net driver and lwIP (DHCP and a static address, the `net` command), the UDP
shell (the same text as the console, `busy` on overlap, every bad input of issue 5 followed by a normal answer
and the kernel heap and lwIP's heap and pbufs back at their baseline, the allowlist, scripts/udpsh's timeout),
and netload both ways with scripts/netload at the other end, plus a profile under network load that shows the
driver or lwIP.

Two kernels: one with DHCP, the UDP shell forwarded from a free host port and a netload port forwarded the same
number (Kprof(udp=True, netload=True)) shared by most tests; and one with `ip=10.0.2.20/24 gw=10.0.2.2
udpsh.allow=10.9.9.0/24`, its UDP shell forwarded to 10.0.2.20, where the host (10.0.2.2 inside) is a stranger.

The profile under load uses the kernel's own flat-out `netload send`, not a sink the host feeds: under QEMU's
TCG the frames and the tick come from QEMU's main loop together, so a tick profile hardly ever lands in the
receive path at any rate the host can feed (see test_profile_under_netload_shows_the_driver_or_lwip).

Host and kernel are compared by the kernel's own counters (`net`) and reports, never by host timings alone;
every wait is a poll with a deadline.
"""

import glob
import os
import re
import socket
import subprocess
import sys
import time

import pytest

from kprof_qemu import (BUILD, TOP, HostStarved, Kprof, KprofError, boot_kernel, booted, free_port, poll, unstarved,
                        uptime)
from kprof_report import WINDOW_SLACK_MS, mem_used_blocks, parse_report
from kprof_net import (DHCP_ADDRESS, HOST_INSIDE, NETLOAD_SEND_WAITS, RX_TX_LINE, TOKENED_MAX, TOKENED_PREFIX,
                       UdpShell, booted_with_dhcp, console_command, exchange, expect_netload_send_report,
                       finish_host_sink, host_netload, host_send_into_kernel_sink, judge_kernel_send, kill_host_sink,
                       net_status, parse_net, start_host_sink, start_request, token_for, udp_cmd, udpsh)

SCRIPTS = os.path.join(TOP, "scripts")
sys.path.insert(0, SCRIPTS)
import kprof_wire as wire  # noqa: E402

# Kernels this module boots (conftest.py fails a boot past BOOTS), by the test that boots them -- a module kernel
# counts for the first test that uses it, a test named alone needs a fresh one:
# test_dhcp_gives_the_user_network_address 1, test_over_the_rate_gets_nothing_until_the_bucket_refills 1,
# test_rate_option_zero_is_no_limit_and_a_bad_one_keeps_the_default 2, test_static_address_from_the_command_line 1,
# test_datagrams_waiting_on_the_card_when_a_port_is_asked_for_are_the_ports 1.
BOOTS = 6


STATIC_ADDRESS = "10.0.2.20"
STATIC_CMDLINE = "ip=%s/24 gw=10.0.2.2 udpsh.allow=10.9.9.0/24" % STATIC_ADDRESS

BUSY = b"# udpsh busy: another command is running\n"
TOO_LONG = b"# udpsh error: line too long (max 255 characters)\n"
NOT_TEXT = b"# udpsh error: request is not text\n"
MULTILINE = b"# udpsh error: one command line per request\n"
NETLOAD_USAGE = ("usage: netload send HOST PORT SECONDS [SIZE] [PPS] | netload sink PORT SECONDS | "
                 "netload echo PORT SECONDS")
NETLOAD_BUSY = "netload: busy (another netload is running)"


def shell_handled(n):
    """Requests the UDP shell has answered, refused or dropped (stranger, over the rate, a reply, one without
    its token), by the `net` counters."""
    return n["requests"] + n["busy"] + n["refused"] + n["not_allowed"] + (n["over_rate"] or 0) + n["tokens"] + \
        n["over_budget"] + n["replies_ignored"] + n["needs_key"] + n["unvalidated_limited"] + n["key_refused"] + \
        n["repeats"] + n["repeats_running"] + n["repeats_lost"]


# ---- baselines -----------------------------------------------------------------------------------------------
def baseline(k):
    """(heap used bytes, heap blocks, lwIP heap used, pbufs in use). The profiler's rings are allocated at its
    first start and kept: a profile first, so they are in the baseline."""
    if not getattr(k, "profiled_once", False):
        k.cmd("profile 1 all 1")
        k.profiled_once = True
    n = net_status(k)
    return mem_used_blocks(k) + (n["lwip_heap"], n["pbufs"])


def assert_recovered(k, base, console_help):
    """The UDP shell answers `help` normally (the console's text, exit 0), and the kernel heap, lwIP's heap and
    its pbufs are back at base."""
    r = udpsh(k.udp_port, "help")
    assert r.returncode == 0 and r.stderr == "", "help over UDP afterwards: exit %d, %s" % (r.returncode, r.stderr)
    assert r.stdout.decode("ascii") == console_help + "\n", "help over UDP afterwards:\n%s" % r.stdout
    last = [None]

    def back():
        n = net_status(k)
        last[0] = mem_used_blocks(k) + (n["lwip_heap"], n["pbufs"])
        return last[0] == base

    try:
        poll("heap, lwIP heap and pbufs back to %s" % (base,), back, timeout=10, every=0.1)
    except KprofError as e:
        raise KprofError("%s; (heap bytes, heap blocks, lwIP heap, pbufs) now %s" % (e, last[0])) from None


# ---- fixtures ----------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def kernel_net(request):
    """DHCP, the UDP shell on a free host port, a netload port forwarded host -> guest as the same number."""
    yield from booted_with_dhcp(Kprof(smp=4, mem=256, udp=True, netload=True, name=request.node.name + "-dhcp"))


@pytest.fixture(scope="module")
def console_help(kernel_net):
    return kernel_net.cmd("help")


@pytest.fixture(scope="module")
def kernel_static(request):
    """ip=10.0.2.20/24 gw=10.0.2.2 udpsh.allow=10.9.9.0/24; its UDP shell forwarded from k.static_port to
    10.0.2.20:5555 (QEMU's hostfwd goes to 10.0.2.15 unless told)."""
    port = free_port(socket.SOCK_DGRAM)
    k = Kprof(smp=4, mem=256, cmdline=STATIC_CMDLINE, name=request.node.name + "-static",
              extra_args=["-netdev", "user,id=n0,hostfwd=udp:127.0.0.1:%d-%s:5555" % (port, STATIC_ADDRESS),
                          "-device", "virtio-net-pci,netdev=n0"])
    k.static_port = port
    yield from booted(k)


# ---- addressing and `net` ------------------------------------------------------------------------------------
def test_dhcp_gives_the_user_network_address(kernel_net):
    n = net_status(kernel_net)
    assert (n["address"], n["prefix"], n["how"]) == (DHCP_ADDRESS, 24, "dhcp"), n
    assert n["mac"] == "52:54:00:12:34:56", "QEMU's first NIC has the MAC 52:54:00:12:34:56: %s" % n["mac"]
    assert n["port"] == 5555 and n["rx_errors"] == 0 and n["tx_errors"] == 0, n
    assert n["lwip_heap_total"] > 0 and n["pbufs_total"] > 0 and n["pbufs"] <= n["pbufs_total"], n
    # DHCP took a DISCOVER/OFFER/REQUEST/ACK at least: frames went both ways
    assert n["rx_packets"] >= 2 and n["tx_packets"] >= 2, n
    lines = re.findall(r"net: address [^\n]*", kernel_net.log.replace("\r", ""))
    assert lines == ["net: address 10.0.2.15/24 gateway 10.0.2.2 (dhcp)"], \
        "the boot log should give the DHCP address once; it has %s" % lines


def test_static_address_from_the_command_line(kernel_static):
    n = net_status(kernel_static)
    assert (n["address"], n["prefix"], n["how"]) == (STATIC_ADDRESS, 24, "static"), n
    lines = re.findall(r"net: address [^\n]*", kernel_static.log.replace("\r", ""))
    assert lines == ["net: address 10.0.2.20/24 gateway 10.0.2.2 (static)"], \
        "the boot log should give the static address once; it has %s" % lines
    assert "udpsh: listening on UDP port 5555 (udpsh.allow)" in kernel_static.boot_log, kernel_static.boot_log


# ---- the same text as the console ----------------------------------------------------------------------------
def test_help_over_udp_is_the_consoles(kernel_net, console_help):
    assert console_help.startswith("help ") and "netload" in console_help, console_help
    r = udpsh(kernel_net.udp_port, "help")
    assert r.returncode == 0 and r.stderr == "", "exit %d: %s" % (r.returncode, r.stderr)
    assert r.stdout.decode("ascii") == console_help + "\n", \
        "help over UDP:\n%s\nhelp on the console:\n%s" % (r.stdout.decode("ascii", "replace"), console_help)


def test_profile_over_udp_has_the_consoles_format(kernel_net):
    k = kernel_net

    def attempt():
        console = parse_report(k.cmd("profile 500 all 3", timeout=30), 500, 3)
        udp = parse_report(udp_cmd(k.udp_port, "profile 500 all 3", timeout=30), 500, 3)
        for where, r in (("console", console), ("UDP", udp)):
            assert r.cpus == 4, "not every CPU contributed to the %s profile:\n%s" % (where, r.text)
        assert "\r" not in udp.text and "# udpsh" not in udp.text, udp.text
        assert udp.source == console.source, (udp.source, console.source)

    unstarved(k, attempt, "profile 500 all 3 on the console and over UDP")


# ---- one command at a time -----------------------------------------------------------------------------------
def refused_meanwhile(k):
    """While a UDP command runs: the UDP shell refuses a raw request with exactly the busy line and
    scripts/udpsh exits 3 saying so, and the console's `profile` gets the one busy line naming the UDP profile."""
    refusal = exchange(k.udp_port, b"help\n", timeout=5)
    assert refusal.refusal is not None and refusal.chunks == [] and refusal.trailer is None, \
        "a request during the UDP profile got %r (%s)" % (refusal.text, refusal.problem())
    assert refusal.refusal[1].encode() + b"\n" == BUSY, refusal.refusal
    r = udpsh(k.udp_port, "help")
    assert r.returncode == 3 and r.stdout == b"" \
        and r.stderr == "udpsh: busy: another command is running\n", \
        "scripts/udpsh during the UDP profile: exit %d, %r, %r" % (r.returncode, r.stdout, r.stderr)
    # the console has its own shell, but the profiler is one
    busy = k.cmd("profile 1000")
    assert re.fullmatch(r"profile: busy: profile \d+ ms from the UDP shell, \d+ s left", busy), busy


def test_busy_while_a_udp_profile_runs(kernel_net):
    """The checks must land inside the UDP profile's 2000 ms window. One that fails once the kernel's clock has
    passed the moment the request was sent plus 2 s (the window may be over: a host slow enough to take that
    long over a few requests) is the host's doing (HostStarved), and retried after the profile's reply."""
    k = kernel_net

    def attempt():
        before = net_status(k)
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as first:
            first.connect(("127.0.0.1", k.udp_port))
            sent_at = uptime(k)
            start_request(first, b"profile 2000 all 3\n")
            # the kernel took it (and is now running it) once its request counter moved
            poll("the UDP profile accepted",
                 lambda: net_status(k)["requests"] == before["requests"] + 1, timeout=10)
            try:
                refused_meanwhile(k)
            except AssertionError as e:
                if uptime(k) - sent_at < 2.0:
                    raise
                exchange(k.udp_port, None, timeout=30, sock=first)  # the profile's reply: the shell is free again
                raise HostStarved("the checks ran past the window's end in the kernel's time: %s"
                                  % str(e).split("\n")[0]) from e
            reply = exchange(k.udp_port, None, timeout=30, sock=first)
        assert reply.problem() is None and reply.trailer.status == 0, \
            "the UDP profile's reply: %s\n%r" % (reply.problem(), reply.text[-2000:])
        text = reply.text.decode("ascii")
        parse_report(text[:-1] if text.endswith("\n") else text, 2000, 3)
        after = net_status(k)
        assert after["busy"] == before["busy"] + 2 and after["requests"] == before["requests"] + 1, \
            (before, after)

    unstarved(k, attempt, "profile 2000 over UDP with requests meanwhile")
    # and the profiler is free again
    assert k.cmd("profile 1 all 1").startswith("profiled ")


# ---- bad input -------------------------------------------------------------------------------------------------
GARBAGE = bytes([0x00, 0xFF, 0x1B, 0x5B, 0x32, 0x4A, 0x80, 0x7F]) + b"help" + bytes(range(0x80, 0x90))

# (name, datagram, what comes back: a refusal line, or "console:<line>" = the console's text for that line)
BAD_INPUT = [
    ("empty", b"", "console:"),
    ("65468 bytes", b"a" * TOKENED_MAX, TOO_LONG),
    ("65468 bytes of binary", bytes(i * 7 & 0xFF for i in range(TOKENED_MAX)), TOO_LONG),
    ("256 characters", b"x" * 256, TOO_LONG),
    ("255 characters", b"x" * 255, "console:" + "x" * 255),
    ("binary garbage", GARBAGE, NOT_TEXT),
    ("a NUL", b"help\x00", NOT_TEXT),
    ("two lines", b"help\nps\n", MULTILINE),
    ("a bare carriage return", b"help\rps", MULTILINE),
    ("no newline", b"help", "console:help"),
    ("CR LF", b"help\r\n", "console:help"),
    ("tabs between words", b"profile\t1\tall\t1", "profile"),
]


@pytest.mark.parametrize("name,datagram,expect", BAD_INPUT, ids=[c[0] for c in BAD_INPUT])
def test_bad_request(kernel_net, console_help, name, datagram, expect):
    k = kernel_net
    base = baseline(k)
    before = net_status(k)
    reply = exchange(k.udp_port, datagram, timeout=15)
    after = net_status(k)
    if isinstance(expect, bytes):
        assert reply.refusal is not None and reply.chunks == [] and reply.trailer is None, \
            "%s: want the refusal %r, got %r (%s)" % (name, expect, reply.text[:300], reply.problem())
        assert reply.refusal[1].encode() + b"\n" == expect, "%s: %r" % (name, reply.refusal)
        assert after["refused"] == before["refused"] + 1 and after["requests"] == before["requests"], \
            (before, after)
    else:
        assert reply.problem() is None, "%s: %s; text %r" % (name, reply.problem(), reply.text[:300])
        assert after["requests"] == before["requests"] + 1 and after["refused"] == before["refused"], \
            (before, after)
        text = reply.text.decode("ascii")
        if expect == "profile":
            assert reply.trailer.status == 0, text
            parse_report(text[:-1], 1, 1)
        else:
            line = expect[len("console:"):]
            want = k.cmd(line) if line else ""
            assert text == (want + "\n" if want else ""), "%s: over UDP %r, on the console %r" % (name, text, want)
            if not line:
                assert reply.trailer.datagrams == 0 and reply.trailer.bytes == 0 and reply.trailer.status == 0, \
                    reply.trailer
    assert_recovered(k, base, console_help)


def test_flood_of_10000_datagrams_while_a_console_profile_runs(kernel_net, console_help):
    k = kernel_net
    base = baseline(k)
    mix = [b"help", b"", GARBAGE, b"x" * 300, b"help\nps", b"bogus\n", b"y" * 1400]
    stats = {}

    def attempt():
        before = net_status(k)
        line = "profile 2000 all 8"
        k.drain()
        k.send_line(line)
        k.expect(re.escape(line) + r"\n", what="the echo of %r" % line)
        # the other way round from the busy test: a UDP profile while the console's runs gets the profiler's busy
        r = udpsh(k.udp_port, "profile", "500")
        assert r.returncode == 1 and r.stderr == "" and \
            re.fullmatch(rb"profile: busy: profile 2000 ms from the console, \d+ s left\n", r.stdout), \
            "UDP profile during the console's: exit %d, %r, %r" % (r.returncode, r.stdout, r.stderr)
        sent = 0
        t0 = time.monotonic()
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 16)
            s.connect(("127.0.0.1", k.udp_port))
            # with the token, so that the flood reaches the shell itself, not just the token layer
            token = token_for(s)
            tokened = [wire.request_datagram(m, token) for m in mix]
            for i in range(10000):
                try:
                    s.send(tokened[i % len(tokened)])
                    sent += 1
                except (BlockingIOError, ConnectionRefusedError):
                    pass
        flood_s = time.monotonic() - t0
        m = k.expect(r"\n> ", timeout=60, what="the prompt after the console's profile 2000")
        report = parse_report(m.before, 2000, 8)
        assert report.cpus == 4, "not every CPU contributed:\n%s" % report.text
        # the network task must have taken its share: the UDP shell saw (at least some of) the flood
        after = poll("the kernel done with the flood", lambda: _settled(k), timeout=30, every=0.2)
        handled = shell_handled(after) - shell_handled(before) - 3  # the UDP profile and its token; the flood's token
        assert sent == 10000, "only %d of 10000 datagrams left the host" % sent
        assert 0 < handled <= sent, "the UDP shell counted %d requests for %d datagrams sent" % (handled, sent)
        assert after["rx_errors"] == before["rx_errors"], (before, after)
        # 10000 datagrams in well under a second are far over the default limit (100 a second from one sender)
        over = after["over_rate"] - before["over_rate"]
        assert after["rate"] == 100 and 0 < over < handled, (before, after)
        stats.update(sent=sent, handled=handled, flood_s=flood_s, over=over,
                     dropped=after["rx_dropped"] - before["rx_dropped"])

    unstarved(k, attempt, "profile 2000 on the console under a flood")
    print("flood: %(sent)d datagrams in %(flood_s).2f s, the UDP shell took in %(handled)d (%(over)d of them "
          "over the rate, dropped unanswered), the driver dropped %(dropped)d" % stats)
    # the flood is over: requests get through again (busy only while a flood `help` still runs)
    poll("UDP help answered after the flood", lambda: udpsh(k.udp_port, "help").returncode == 0, timeout=15)
    assert_recovered(k, base, console_help)


def _settled(k):
    """`net` once two readings a moment apart agree on the shell's counters and the packets received (the
    flood has been taken in)."""
    a = net_status(k)
    b = net_status(k)
    keys = ("rx_packets", "rx_dropped", "requests", "busy", "refused")
    return b if all(a[x] == b[x] for x in keys) else None


def test_strangers_get_no_answer(kernel_static, kernel_net, console_help):
    k = kernel_static
    base = baseline(k)
    before = net_status(k)
    assert before["not_allowed"] == 0, before
    # scripts/udpsh: nothing comes back, so it times out and says so
    t0 = time.monotonic()
    r = udpsh(k.static_port, "help", timeout=2)
    elapsed = time.monotonic() - t0
    assert (r.returncode, r.stdout, r.stderr) == (4, b"", "udpsh: timed out after 2s: no reply\n"), \
        "a request from outside the allowlist: exit %d, %r, %r" % (r.returncode, r.stdout, r.stderr)
    assert elapsed >= 2.0, "scripts/udpsh gave up after %.2f s of a 2 s timeout" % elapsed
    # raw datagrams of every kind: no refusal either, not even busy or an error
    for datagram in (b"help\n", b"", GARBAGE, b"a" * 65507):
        reply = exchange(k.static_port, datagram, timeout=1)
        assert reply.chunks == [] and reply.trailer is None and reply.refusal is None, \
            "a stranger's %r got %r" % (datagram[:20], reply.text[:200])
    # each reached the shell at 10.0.2.20 and was counted as not allowed, nothing else: the four datagrams, and
    # scripts/udpsh's request and its one resend (after 1 s, within its 2 s)
    after = poll("six requests counted as not allowed",
                 lambda: (lambda n: n if n["not_allowed"] >= 6 else None)(net_status(k)), timeout=10)
    assert after["not_allowed"] == 6, after
    for key in ("requests", "busy", "refused"):
        assert after[key] == before[key] == 0, (before, after)
    assert after["udp_out"] == before["udp_out"], "the kernel sent something: %s -> %s" % (before, after)
    # the console still answers, nothing leaked
    base_now = baseline(k)
    assert base_now == base, "heap or lwIP use moved: %s -> %s" % (base, base_now)
    # and a kernel that allows the host answers it
    r = udpsh(kernel_net.udp_port, "help")
    assert r.returncode == 0 and r.stdout.decode("ascii") == console_help + "\n", r


# ---- the rate limit -------------------------------------------------------------------------------------------
RATE = 5


@pytest.fixture(scope="module")
def kernel_rate(request):
    """udpsh.rate=5: five requests a second from one sender, in bursts of up to five."""
    yield from booted_with_dhcp(Kprof(smp=2, mem=256, cmdline="udpsh.rate=%d" % RATE, udp=True,
                                      name=request.node.name + "-rate"))


def test_over_the_rate_gets_nothing_until_the_bucket_refills(kernel_rate):
    k = kernel_rate
    before = net_status(k)
    assert before["rate"] == RATE and before["over_rate"] == 0, before
    # 20 requests that each earn a one-datagram refusal, sent back to back: the burst (5) is answered, the rest
    # dropped unanswered; at 5 a second, one more can be earned only if the kernel took them in over 200 ms
    sent = 20
    answers = []
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.connect(("127.0.0.1", k.udp_port))
        # the token costs a request too: take it, then wait for the bucket to be full again
        request = wire.request_datagram(b"\x01", token_for(s))
        time.sleep(1.1)  # the bucket refills to its burst in a second; nothing to poll for
        before = net_status(k)
        for _ in range(sent):
            s.send(request)
        deadline = time.monotonic() + 3.0
        while time.monotonic() < deadline:
            s.settimeout(deadline - time.monotonic())
            try:
                answers.append(s.recv(65535))
            except socket.timeout:
                break
    assert all(a == b"# udpsh error: request is not text\n" for a in answers), answers
    assert RATE <= len(answers) <= RATE + 1, "%d of %d answered at %d/s" % (len(answers), sent, RATE)
    after = poll("all 20 counted", lambda: (lambda n: n if shell_handled(n) - shell_handled(before) >= sent
                                            else None)(net_status(k)), timeout=10)
    assert after["refused"] - before["refused"] == len(answers), (before, after)
    assert after["over_rate"] - before["over_rate"] == sent - len(answers), (before, after)
    # the console never waits on the limit; and once a token is earned (200 ms), a request is answered again
    assert k.cmd("uptime").startswith("up ")
    poll("help answered again", lambda: udpsh(k.udp_port, "help", timeout=1).returncode == 0, timeout=10, every=0.2)


def test_rate_option_zero_is_no_limit_and_a_bad_one_keeps_the_default(kprof_factory):
    k = kprof_factory(smp=1, mem=256, cmdline="udpsh.rate=0", udp=True)
    n = net_status(k)
    assert n["rate"] is None and n["over_rate"] is None, n
    assert [l for l in k.cmd("net").split("\n") if l.startswith("udpsh: port ")][0].endswith(", no rate limit")
    bad = kprof_factory(smp=1, mem=256, cmdline="udpsh.rate=-3", udp=True)
    assert "udpsh: udpsh.rate=-3 is not a rate 0..100000; using 100" in bad.boot_log, bad.boot_log
    assert net_status(bad)["rate"] == 100


# ---- scripts/udpsh on its own ----------------------------------------------------------------------------------
def test_udpsh_times_out_when_nobody_answers():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as silent:
        silent.bind(("127.0.0.1", 0))  # takes the datagram, never answers
        port = silent.getsockname()[1]
        t0 = time.monotonic()
        r = udpsh(port, "help", timeout=1)
        elapsed = time.monotonic() - t0
        silent.settimeout(5)
        assert silent.recv(65535) == b"help\n", "scripts/udpsh did not send the command line"
    assert (r.returncode, r.stdout, r.stderr) == (4, b"", "udpsh: timed out after 1s: no reply\n"), \
        "exit %d, %r, %r" % (r.returncode, r.stdout, r.stderr)
    assert elapsed >= 1.0, "gave up after %.2f s of a 1 s timeout" % elapsed


def test_udpsh_says_when_nothing_listens():
    port = free_port(socket.SOCK_DGRAM)
    r = udpsh(port, "help", timeout=5)
    assert r.returncode == 4 and r.stdout == b"" and "refused the datagram" in r.stderr \
        and r.stderr.startswith("udpsh: 127.0.0.1:%d " % port) and r.stderr.count("\n") == 1, \
        "exit %d, %r, %r" % (r.returncode, r.stdout, r.stderr)


# ---- netload ---------------------------------------------------------------------------------------------------
BAD_NETLOAD = ["netload", "netload sink", "netload sink 6000", "netload sink 6000 3 4", "netload sink 0 3",
               "netload sink 65536 3", "netload sink 6000 0", "netload sink 6000 601", "netload sink x 3",
               "netload sink 6000 1.5", "netload SINK 6000 3", "netload echo 6000", "netload bogus 6000 3",
               "netload send", "netload send 10.0.2.2 6000", "netload send 10.0.2 6000 1",
               "netload send 10.0.2.256 6000 1", "netload send host 6000 1", "netload send 10.0.2.2 0 1",
               "netload send 10.0.2.2 6000 0", "netload send 10.0.2.2 6000 1 27", "netload send 10.0.2.2 6000 1 1473",
               "netload send 10.0.2.2 6000 1 512 1000001", "netload send 10.0.2.2 6000 1 512 -1",
               "netload send 10.0.2.2 6000 1 512 100 9"]


def test_bad_netload_arguments_get_the_usage_line(kernel_net):
    k = kernel_net
    for line in BAD_NETLOAD:
        assert k.cmd(line) == NETLOAD_USAGE, "%r answered otherwise" % line
    r = udpsh(k.udp_port, "netload", "sink", "0", "3")
    assert (r.returncode, r.stdout, r.stderr) == (1, (NETLOAD_USAGE + "\n").encode(), ""), r
    # nothing was started or left claimed: a short sink runs and reports nothing received
    out = k.cmd("netload sink %d 1" % k.netload_port, timeout=15)
    assert out == ("netload: sink on UDP port %d for 1 s\nnetload sink: packets 0 (0/s), bytes 0 (0/s), lost 0, "
                   "out of order 0, duplicates 0, invalid 0" % k.netload_port), out


def test_datagrams_waiting_on_the_card_when_a_port_is_asked_for_are_the_ports(kprof_factory):
    """A service says it listens when it asks the network task for its port (`udpsh: listening`, `netload: sink
    on`), so the task binds what was asked before it takes the card's frames: a datagram that came meanwhile is
    the service's, not refused with port unreachable. With the task wedged on purpose (`net wedge`: frames pile
    up on the card), a sink asks for a port never bound and the host sends 50 datagrams to it; when the task
    runs again the sink takes all 50. (Binding after the frames were taken, as before, it took none.)"""
    k = boot_kernel(make=kprof_factory, smp=2, udp=True, netload=True, dhcp=True)
    port, wedge_ms, seconds = k.netload_port, 5000, 12
    assert k.cmd("net wedge %d" % wedge_ms) == "net: the network task sleeps %d ms without polling the card" % wedge_ms
    with console_command(k, "netload sink %d %d" % (port, seconds), seconds):
        k.expect(r"netload: sink on UDP port %d for %d s\n" % (port, seconds), timeout=5)
        host = host_netload("send", "127.0.0.1", port, 1, 64, 50)
        m = k.expect(r"netload sink: ([^\n]*)\n> ", timeout=seconds + 15, what="the sink's report")
    tx, rx = wire.parse_tx_report(host), wire.parse_rx_report(m.group(1))
    assert tx["packets"] == 50, host
    assert (rx["packets"], rx["lost"], rx["out_of_order"], rx["duplicates"]) == (50, 0, 0, 0), (m.group(1), host)


def test_kernel_sink_fed_by_host_send(kernel_net):
    k = kernel_net
    port, seconds, size, pps = k.netload_port, 3, 512, 2000
    base_pbufs = net_status(k)["pbufs"]

    def attempt():
        # every datagram inside the sink's 3 s of kernel time: a host that starves QEMU can hold the last ones past
        # it, or drop them at QEMU's full socket, which the retry rule tells apart (short_by_the_host, unstarved)
        kernel, line, tx = host_send_into_kernel_sink(k, port, seconds, 2, size, pps)
        # a modest rate: everything arrives, in order, once
        assert (kernel["lost"], kernel["out_of_order"], kernel["duplicates"], kernel["invalid"]) == (0, 0, 0, 0), \
            line
        assert kernel["packets"] == tx["packets"], "host sent %d, kernel took %d: %s" \
            % (tx["packets"], kernel["packets"], line)
        assert kernel["bytes"] == kernel["packets"] * size, line
        # the kernel's rates are over its whole window, SECONDS (a little more: it wakes at the tick)
        assert kernel["packets"] // (seconds + 1) <= kernel["packets_per_s"] <= kernel["packets"] // seconds, \
            line
    unstarved(k, attempt, "netload sink of 4000 datagrams from the host")
    poll("pbufs back to %d" % base_pbufs, lambda: net_status(k)["pbufs"] == base_pbufs, timeout=10)


def test_kernel_send_to_host_sink(kernel_net):
    k = kernel_net
    seconds, size, pps = 2, 512, 2000

    def attempt():
        # a full ring makes the sender wait, and on a loaded host QEMU drains it late: nothing is lost
        out, kernel, _ = judge_kernel_send(k, seconds, size, pps)
        # the rate is over the run until the shell woke after its end: late by a window's slack at most
        assert kernel["packets"] * 1000 // (seconds * 1000 + WINDOW_SLACK_MS) <= kernel["packets_per_s"] <= pps, out
    unstarved(k, attempt, "netload send of 4000 datagrams to the host")


def net_symbols():
    """The text symbols of the virtio-net driver (with its virtqueues) and of lwIP, from their object files."""
    drivers = os.path.join(BUILD, "k", "kernel", "drivers", "net")
    objs = [os.path.join(drivers, f) for f in ("virtio_net.c.o", "virtqueue.c.o")] + \
        glob.glob(os.path.join(BUILD, "lwip", "**", "*.o"), recursive=True)
    assert len(objs) > 5 and all(os.path.isfile(o) for o in objs), objs
    out = subprocess.run(["nm", "--defined-only"] + objs, check=True, capture_output=True, text=True,
                         timeout=60).stdout
    names = {f[2] for f in (line.split() for line in out.splitlines()) if len(f) == 3 and f[1] in "Tt"}
    for name in ("virtio_net_poll", "virtq_next_used", "ethernet_input", "udp_input", "pbuf_alloc", "ip4_input"):
        assert name in names, "%s is not among the driver's and lwIP's symbols" % name
    return names


def test_profile_under_netload_shows_the_driver_or_lwip(kernel_net):
    """The kernel's `netload send` as fast as it can (its network task never waits), a profile over UDP
    meanwhile. A load the host paces (the kernel's sink) is no good here under QEMU's TCG: frames and the tick
    arrive from QEMU's main loop together, so the tick lands before the network task's work and hardly ever in
    it (1 sample in 400 at 5000 datagrams/s); the kernel's own flat-out sender is sampled anywhere in its loop."""
    k = kernel_net
    names = net_symbols()
    # each attempt is a send of its own, 12 s, with one profile in it: a retry under the starved-QEMU rule then
    # never finds the load over. An attempt whose profile came after its send ended (a host so slow that a few
    # requests took the send's 12 s) is the host's doing, retried as starved.
    seconds, size, pps = 12, 1472, 1000000
    udp = UdpShell(k.udp_port)
    line = "netload send %s %%d %d %d %d" % (HOST_INSIDE, seconds, size, pps)

    def kernel_s():
        m = re.fullmatch(r"up (\d+\.\d{3}) s", udp.cmd("uptime"))
        assert m, "uptime over UDP said something else"
        return float(m.group(1))

    def attempt():
        host_port = free_port(socket.SOCK_DGRAM)
        tx0 = parse_net(udp.cmd("net"))["tx_packets"]
        sink = start_host_sink(host_port, seconds + 2)
        try:
            started = kernel_s()
            with console_command(k, line % host_port, seconds):
                poll("the kernel sending", lambda: parse_net(udp.cmd("net"))["tx_packets"] >= tx0 + 1000,
                     timeout=10, every=0.1)
                # one netload at a time, whichever shell asks -- while the send lasts, in the kernel's time: a
                # sink that ran once the send's seconds had passed met a host too slow to ask in time
                r = udpsh(k.udp_port, "netload", "sink", str(k.netload_port), "1")
                if r.returncode == 0 and kernel_s() - started >= seconds:
                    raise HostStarved("the second netload came after the send's %d s" % seconds)
                assert (r.returncode, r.stdout, r.stderr) == (1, (NETLOAD_BUSY + "\n").encode(), ""), r
                # Up to three profiles in the send: the sender's batches fall due on the tick, and a batch that
                # ends before the next tick is never under one (the tick samples before it schedules the sender),
                # so a window can find every CPU idle while frames went out; one in three windows without the
                # driver's or lwIP's chains would be a broken profiler, not that.
                for _ in range(3):
                    before = parse_net(udp.cmd("net"))
                    rep = parse_report(udp.cmd("profile 1000 all 16", timeout=30), 1000, 16)
                    after = parse_net(udp.cmd("net"))
                    sent = after["tx_packets"] - before["tx_packets"]
                    waited_ms = after["queue_wait_ms"] - before["queue_wait_ms"]
                    if sent < 1000 or any(any(s in names for s in c.symbols()) for c in rep.chains):
                        break
                m = expect_netload_send_report(k, seconds)
            host = finish_host_sink(sink, seconds + 30)
        finally:
            kill_host_sink(sink)
        if sent < 1000:
            raise HostStarved("only %d frames went out around the profile: the load was over" % sent)
        net_chains = [c for c in rep.chains if any(s in names for s in c.symbols())]
        if not net_chains and waited_ms >= rep.window // 2:
            # the sender slept most of the window waiting for room in the send queue, behind a card the host did
            # not drain (QEMU's side of the network runs in its main loop): nothing of it to sample
            raise HostStarved("the sender waited %d ms of the %d ms window for room: no driver or lwIP chain"
                              % (waited_ms, rep.window))
        assert net_chains, "no chain of the driver or lwIP in a profile while the kernel sent %d frames (it waited " \
            "%d ms for room):\n%s" % (sent, waited_ms, rep.text)
        return net_chains, m, host

    # a retry only when the host starved QEMU; `cpus` goes over UDP, the console is in netload
    found, m, host = unstarved(udp, attempt, "profile 1000 all 5 under netload send")
    print("driver/lwIP chains under netload send: %s" % found)
    kernel = wire.parse_tx_report(m.group(1))
    assert RX_TX_LINE.fullmatch(m.group(1)) and kernel["packets"] > 0, m.group(0)
    assert kernel["bytes"] <= kernel["packets"] * size, m.group(0)
    assert host["invalid"] == 0 and host["duplicates"] == 0 and 0 < host["packets"] <= kernel["packets"], \
        (m.group(0), host)


def test_netload_send_at_20000_per_second_gets_them_out_and_leaves_the_udp_shell_usable(kernel_net, console_help):
    """The kernel's `netload send` at 20000 datagrams/s of 512 bytes -- 10 MB/s, well under what the same
    kernel sends flat out -- must get its datagrams out, report what it sent consistently, and leave the UDP
    shell usable (its replies share the transmit path). A reply may be lost (UDP; the client can tell), so each
    request may be sent three times, but each must get a whole reply in the end. The host's end never counts a
    full send queue as sent: it waits for room (scripts/netload)."""
    k = kernel_net
    host_port, seconds, size, pps = free_port(socket.SOCK_DGRAM), 6, 512, 20000
    before = net_status(k)
    sink = start_host_sink(host_port, seconds + 4)
    outcomes = []
    try:
        # the kernel starts sending as it takes the line: the requests go out at once (5 s at most)
        with console_command(k, "netload send %s %d %d %d %d" % (HOST_INSIDE, host_port, seconds, size, pps),
                             seconds):
            # requests one after another while at least 3 s of the send are left (a request's three tries of
            # 1 s fit): each try waits long enough that a QEMU the host did not run for a second still answers
            # it (0.4 s once was the whole budget), and how many requests fit is the host's business
            last_start = time.monotonic() + seconds - 3  # every request starts while the kernel sends
            while time.monotonic() < last_start or not outcomes:
                tries = []
                for _ in range(3):
                    reply = exchange(k.udp_port, b"help", timeout=1.0)
                    tries.append(reply.problem())
                    if reply.problem() is None:
                        assert reply.text.decode("ascii") == console_help + "\n"
                        break
                outcomes.append(tries)
            m = expect_netload_send_report(k, seconds)
        host = finish_host_sink(sink, seconds + 30)
    finally:
        kill_host_sink(sink)
    print("tries of each UDP request during netload send: %s" % outcomes)
    n = net_status(k)
    kernel = wire.parse_tx_report(m.group(1))
    failed = int(m.group(2) or 0)
    facts = "kernel: %s; host: %d received, %d lost; net: UDP shell requests taken %d, tx ring full %d, udp send " \
        "failures %d" % (m.group(0).replace("\n", " | "), host["packets"], host["lost"],
                         n["requests"] - before["requests"], n["tx_ring_full"] - before["tx_ring_full"],
                         n["udp_failed"] - before["udp_failed"])
    problems = []
    if not all(t[-1] is None for t in outcomes):
        problems.append("UDP shell requests got no whole reply in three tries: the tries of each: %s" % outcomes)
    # A full transmit ring makes the sender wait (the datagram keeps its sequence number), so it is never loss:
    # every datagram the kernel counts as sent must reach the host. Reaching it includes the ones the host dropped
    # at the sink's own full socket (a sink starved of CPU on a loaded host, the tail of the run included, which
    # no gap below the highest sequence number shows); those overlap lost, so the larger of the two is counted.
    reached = host["packets"] + max(host["lost"], host["socket_drops"])
    if reached < kernel["packets"] * 99 // 100:
        problems.append("the host saw %d of the %d datagrams the kernel sent, %d missing below the highest and %d "
                        "dropped at its socket (ring full %d times)"
                        % (host["packets"], kernel["packets"], host["lost"], host["socket_drops"], failed))
    if kernel["bytes"] != kernel["packets"] * size:
        problems.append("the kernel counts %d packets sent but %d bytes (%d packets' worth)"
                        % (kernel["packets"], kernel["bytes"], kernel["bytes"] // size))
    # and `net` agrees: a full ring was waited out, so the card refused frames but nothing was given up
    if failed and n["tx_ring_full"] - before["tx_ring_full"] < failed:
        problems.append("netload waited on a full ring %d times but `net` counts %d" % (failed, n["tx_ring_full"] -
                                                                                       before["tx_ring_full"]))
    # netload's waits are not failures: at most the shell replies that had to be asked for again were given up
    retries = sum(len(t) - 1 for t in outcomes)
    if n["udp_failed"] - before["udp_failed"] > retries:
        problems.append("`net` counts %d UDP send failures, but only %d replies were asked for again"
                        % (n["udp_failed"] - before["udp_failed"], retries))
    assert not problems, "netload send %d %d: %s\n(%s)" % (size, pps, "; ".join(problems), facts)


def test_answers_arrive_while_netload_sends_flat_out(kernel_net):
    """Answers must not be lost to a full transmit ring. While the kernel's `netload send` runs flat out (PPS 0)
    the ring is full much of the time. Refusals used to go straight to the device and were dropped when it was,
    and queued datagrams lost every race for a freed slot to the sender, so after TX_RETRY_PASSES quick passes
    they were dropped too: the soak (tests/soak) saw 10 of a burst of 60 junk datagrams go unanswered though
    the kernel counted all 60. Now refusals are queued and the queue goes before the sender: every answer
    arrives, but for a rare one (1 in 120 in one run of five here, cause not pinned down; before the fix 10 to
    13 of 120 were lost in every run), so at most 2 may be missing. Each burst is an unknown command (the shell
    runs it) and refusals of every kind -- busy while it runs -- 24 in all, under the 32 slots of the send
    queue. The bursts are paced (a pause of 0.3 s before each) to stay under the UDP shell's rate limit of 100
    requests a second, and the test checks that none went over it: a datagram the limit dropped would be missing
    on purpose, not lost."""
    k = kernel_net
    host_port, seconds = free_port(socket.SOCK_DGRAM), 8
    refusals = [b"help\x00", b"y" * 300, b"help\nps", b"\xff\xfe"]
    # Every datagram goes from a socket of its own with its token; the tokens are taken before the load (they
    # last 30 s at least), in paced bursts like the rest, so that the bursts below cost what they did before.
    bursts = []
    for burst in range(5):
        time.sleep(0.3)
        socks = []
        for i in range(24):
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s.connect(("127.0.0.1", k.udp_port))
            data = b"frob%d" % burst if i == 0 else refusals[i % len(refusals)]
            socks.append((s, wire.request_datagram(data, token_for(s))))
        bursts.append(socks)
    over_before = net_status(k)["over_rate"]
    sink = start_host_sink(host_port, seconds + 4)
    answered = total = 0
    missing = []
    try:
        with console_command(k, "netload send %s %d %d 1472 0" % (HOST_INSIDE, host_port, seconds), seconds):
            udp = UdpShell(k.udp_port)
            poll("the kernel sending flat out", lambda: parse_net(udp.cmd("net"))["tx_ring_full"] > 0,
                 timeout=10, every=0.1)
            t0 = time.monotonic()
            for burst, socks in enumerate(bursts):
                time.sleep(0.3)  # 30 requests' worth of the rate limit's refill, for a burst of 24
                try:
                    for s, data in socks:
                        s.send(data)
                    for s, data in socks:
                        r = exchange(k.udp_port, None, timeout=2, sock=s)
                        total += 1
                        if r.refusal is not None or r.problem() is None:
                            answered += 1
                        else:
                            missing.append((burst, data[TOKENED_PREFIX:TOKENED_PREFIX + 8], r.problem()))
                finally:
                    for s, _ in socks:
                        s.close()
            elapsed = time.monotonic() - t0
            k.expect(r"netload send: [^\n]*\n" + NETLOAD_SEND_WAITS + "> ", timeout=seconds + 30,
                     what="the kernel's netload send report")
        finish_host_sink(sink, seconds + 30)
    finally:
        if sink.poll() is None:
            sink.kill()
            sink.wait()
    over = net_status(k)["over_rate"] - over_before
    assert over == 0, "%d of the requests went over the rate limit: the pacing is wrong" % over
    assert answered >= total - 2, "%d of %d datagrams got no whole answer during a flat-out netload send: %s" \
        % (total - answered, total, missing[:10])
    assert elapsed < seconds, "the bursts outlasted the flat-out send (%.1f s), so they tested nothing" % elapsed
