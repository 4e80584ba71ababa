"""The debugger's UDP transport keyed by the UDP shell's key (issue 15 item 4), and plain (no key: KPG1 under
the empty key, issue 24), in QEMU.

- Keyed: `net` over the keyed UDP shell names the gdb peer (a keyed reader may see it).
- Plain: real gdb through the relay without a key attaches, reads memory, continues and detaches; after the
  kernel reboots (the `reboot` command: a new boot secret, counters from nothing) the same relay, still
  attached, says hello again and gdb works on; raw gdb bytes (`target remote udp:`) get no answer. Another
  allowlisted host that holds its own nonce sends a valid datagram with counter 2^64-1 (issue 40): the floor
  is a session's and moves only for what the transport acts on, so gdb then attaches through the relay.

- Through scripts/kprof-gdb-relay (user networking, the kernel's gdb.udp port forwarded): gdb sees one
  thread per CPU, reads memory (the same bytes as the ELF), `bt`, prof.py's `prof state`, detaches; the
  console answers after; `net` counts the hello and the accepted datagrams.
- On a socket segment the test owns (tests/integration/forge.py), frames injected from 10.0.2.66: a plain gdb
  packet and a plain Ctrl-C stop nothing, claim no peer and get no answer; a hello gets one 85-byte nonce
  answer (within 3x, MACed under the key); a datagram sealed with that nonce attaches and gets sealed answers,
  and that datagram replayed in the session is dropped, and `D` lets the machine go; then that same datagram
  replayed (its session ended), one under another key, one sent from another address, and the kernel's own
  sealed reply reflected back each change nothing -- no stop, no peer, no frame back -- and are counted on
  `net`'s "gdb udp auth:" line. gdb's `restore` of 64 KiB through the real relay, bridged onto the segment as
  10.0.2.66 (issue 40): every datagram the relay sends fits 1472 bytes, the memory equals the file, and forged
  fragments from 10.0.2.66 between its pieces change nothing and are counted as not admitted (the same kernel: no boot).
  And on the same kernel: ten relays, one after another, attach and detach while a thousand forged hellos a
  second arrive from addresses nobody holds -- at least nine must.
"""

import os
import re
import socket
import struct
import subprocess
import sys
import threading
import time

import pytest

import forge
from kprof_gdb import REPLY_WAIT_S
from kprof_qemu import ELF, TOP, Kprof, boot_kernel, poll
from kprof_rsp import packet

sys.path.insert(0, os.path.join(TOP, "scripts"))
import kprof_gdb_wire as gw  # noqa: E402

# Kernels this module boots (conftest.py fails a boot past BOOTS), by the test that boots them -- a module kernel
# counts for the first test that uses it, a test named alone needs a fresh one:
# test_forged_and_replayed_datagrams_change_nothing 1, test_gdb_through_the_keyed_relay 1,
# test_plain_relay_attaches_reads_continues_and_survives_a_reboot 2,
# test_a_max_counter_from_another_host_locks_no_relay_out 1.
BOOTS = 5

KEY = "6b70726f662d6764622d7564702d6b6579"  # 17 bytes
RELAY = os.path.join(TOP, "scripts", "kprof-gdb-relay")
UDPSH = os.path.join(TOP, "scripts", "udpsh")
PROF_PY = os.path.join(TOP, "scripts", "prof.py")
GDB_GUEST_PORT = 1234
KERNEL_IP = "10.0.2.15"
FORGED_IP, FORGED_MAC = "10.0.2.66", forge.mac_of("02:00:00:00:00:66")
OTHER_IP, OTHER_MAC = "10.0.2.77", forge.mac_of("02:00:00:00:00:77")
FORGED_PORT = 40000


def auth_line(k):
    out = k.cmd("net")
    m = re.search(r"(?m)^gdb udp auth: (keyed|plain|insecure), (\d+) accepted, (\d+) hellos answered, (\d+) plain or "
                  r"malformed, (\d+) bad nonce, (\d+) bad mac, (\d+) replayed$", out)
    assert m, "net has no gdb udp auth line:\n%s" % out
    got = dict(zip(("accepted", "hellos", "plain", "bad_nonce", "bad_mac", "replayed"), map(int, m.groups()[1:])))
    got["mode"] = m.group(1)
    peer = re.search(r"(?m)^gdb udp: port \d+(?: at \S+)?, (no peer|peer hidden|peer \S+), \d+ in, \d+ out, "
                     r"(\d+) stops", out)
    assert peer, out
    got["peer"], got["stops"] = peer.group(1), int(peer.group(2))
    return got


# ---- through the relay --------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def keyed(request):
    # the transport is up once DHCP has given the address
    k = boot_kernel("gdb.udp=%d udpsh.key=%s" % (GDB_GUEST_PORT, KEY), smp=4, mem=256, gdb_udp=GDB_GUEST_PORT, udp=True,
                    name=request.node.name,
                    boot_log_has="gdb: udp keyed (udpsh.key): attach through scripts/kprof-gdb-relay", dhcp=True)
    try:
        yield k
    finally:
        k.kill()


def gdb_batch(commands, target=None, env=None, timeout=60, remotetimeout=None):
    """gdb -batch running commands after target; remotetimeout: gdb's wait for each reply (default 2 s), for
    transfers a loaded host's relay and forged traffic may slow past that."""
    argv = ["timeout", "-k", "3", str(timeout), "gdb", "-batch", "-nx", "-ex", "set pagination off",
            "-ex", "set width 0"]
    if remotetimeout:
        argv += ["-ex", "set remotetimeout %d" % remotetimeout]
    if target:
        argv += ["-ex", target]
    for c in commands:
        argv += ["-ex", c]
    argv.append(ELF)
    return subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, errors="replace",
                          timeout=timeout + 10, env=env)


def test_gdb_through_the_keyed_relay(keyed, tmp_path):
    key_file = tmp_path / "key"
    key_file.write_text(KEY + "\n")
    env = dict(os.environ)
    env.pop("KPROF_UDPSH_KEY", None)
    before = auth_line(keyed)
    assert before["mode"] == "keyed" and before["peer"] == "no peer"
    target = "target remote | %s 127.0.0.1:%d --key-file %s" % (RELAY, keyed.gdb_udp_port, key_file)
    done = gdb_batch(["info threads", "x/16xb cmd_uptime", "bt 3", "source %s" % PROF_PY, "prof state", "detach"],
                     target=target, env=env)
    out = done.stdout
    assert done.returncode == 0, "gdb exited %d:\n%s\n%s" % (done.returncode, out, done.stderr)
    threads = re.findall(r"(?m)^\*?\s+(\d+)\s+Thread \d+ \(cpu (\d+)", out)
    assert sorted(int(c) for _, c in threads) == [0, 1, 2, 3], out
    live = re.findall(r"(?m)^0x[0-9a-f]+ <cmd_uptime(?:\+\d+)?>:((?:\s+0x[0-9a-f]{2})+)$", out)
    assert live, out
    offline = gdb_batch(["x/16xb cmd_uptime"])          # the same bytes read from the ELF, no target
    assert re.findall(r"(?m)^0x[0-9a-f]+ <cmd_uptime(?:\+\d+)?>:((?:\s+0x[0-9a-f]{2})+)$", offline.stdout) == live
    assert re.search(r"(?m)^#0 ", out), out
    assert "profiler: no run yet" in out, out
    assert "[Inferior 1 (Remote target) detached]" in out
    assert re.fullmatch(r"up \d+\.\d+ s", keyed.cmd("uptime")), "the console answers after the detach"
    after = auth_line(keyed)
    assert after["hellos"] >= before["hellos"] + 1 and after["accepted"] > before["accepted"] + 10, after
    assert after["stops"] == before["stops"] + 1, after


def test_keyed_readers_see_the_gdb_peer(keyed):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.connect(("127.0.0.1", keyed.gdb_udp_port))
    s.settimeout(1.0)
    session = gw.Session(bytes.fromhex(KEY))

    def exchange(unit, want):
        """Sends unit sealed (again until answered); returns the opened answer once it holds want."""
        got = b""
        for _ in range(20):
            if not got:
                s.send(session.seal(unit))
            try:
                got += session.open(s.recv(65536))
            except (socket.timeout, gw.Rejected):
                continue
            if want in got:
                return got
        raise AssertionError("no %r in the answer to %r: %r" % (want, unit, got))

    for _ in range(20):
        s.send(session.hello())
        try:
            session.take_nonce(s.recv(65536))
            break
        except (socket.timeout, gw.Rejected):
            pass
    exchange(packet(b"?"), b"#")
    s.send(session.seal(b"+"))
    exchange(packet(b"c"), b"+")  # running again, the peer kept
    try:
        env = dict(os.environ, KPROF_UDPSH_KEY=KEY)
        r = poll("net over the keyed UDP shell", lambda: (lambda r: r if r.returncode == 0 else None)(
            subprocess.run([UDPSH, "-t", "5", "-p", str(keyed.udp_port), "127.0.0.1", "net"], capture_output=True,
                           text=True, env=env, timeout=30)), timeout=30)
        assert re.search(r"gdb udp: port \d+ at \S+, peer 10\.0\.2\.2:\d+,", r.stdout), r.stdout
    finally:
        exchange(b"\x03", b"#")  # the stop, then detach: the module's kernel is left as it was
        s.send(session.seal(b"+"))
        exchange(packet(b"D"), b"OK")
        s.send(session.seal(b"+"))
        poll("no peer", lambda: auth_line(keyed)["peer"] == "no peer", timeout=20)


def test_relay_with_another_key_gets_no_session(keyed, tmp_path):
    env = dict(os.environ, KPROF_UDPSH_KEY="00" * 16)
    before = auth_line(keyed)
    done = subprocess.run([sys.executable, RELAY, "-v", "--wait", "3", "127.0.0.1:%d" % keyed.gdb_udp_port],
                          stdin=subprocess.PIPE, capture_output=True, env=env, timeout=30)
    assert done.returncode == 1 and b"no nonce answer" in done.stderr, done.stderr
    assert b"bad MAC (another key?)" in done.stderr, "the kernel answered, and its answer did not verify"
    after = auth_line(keyed)
    assert after["peer"] == "no peer" and after["stops"] == before["stops"] and after["accepted"] == before["accepted"]


# ---- plain (no key), through the relay, across a reboot ------------------------------------------------------

def boot_plain(name, host_port=None):
    def make(**opts):
        k = Kprof(**opts)
        if host_port:
            k.gdb_udp_port = host_port  # the relay's target stays where it was: the machine rebooted
        return k
    return boot_kernel("gdb.udp=%d" % GDB_GUEST_PORT, make=make, smp=2, mem=256, gdb_udp=GDB_GUEST_PORT, name=name,
                       boot_log_has="gdb: udp plain KPG1 (no key): attach through scripts/kprof-gdb-relay", dhcp=True)


def test_plain_relay_attaches_reads_continues_and_survives_a_reboot(request, tmp_path):
    from kprof_gdb import Gdb, mark
    k = boot_plain(request.node.name)
    env = dict(os.environ)
    env.pop("KPROF_UDPSH_KEY", None)
    rebooted = tmp_path / "rebooted"
    wait_rebooted = ("python import os, time; [time.sleep(0.2) for _ in iter(lambda: os.path.exists(%r), True)]"
                     % str(rebooted))
    try:
        # gdb's own `target remote udp:` sends raw bytes: without gdb.udp.insecure nothing answers them
        # (gdb gives up after its remote timeout, 1 s here, a few times over: nothing is lost by not waiting 2 s)
        raw = gdb_batch(["set remotetimeout 1", "target remote udp:127.0.0.1:%d" % k.gdb_udp_port, "info threads"],
                        timeout=20)
        assert "Thread" not in raw.stdout, raw.stdout
        assert auth_line(k)["stops"] == 0
        g = Gdb.__new__(Gdb)
        commands = ["set pagination off", "set width 0", "set remotetimeout 60",
                    "target remote | %s -v 127.0.0.1:%d --wait 120" % (RELAY, k.gdb_udp_port),
                    "x/4xb cmd_uptime", "break cmd_uptime", mark("resuming"), "continue", "delete",
                    mark("rebooting"), wait_rebooted, "x/4xb cmd_uptime", "detach"]
        g.argv = ["timeout", "-k", "3", "300", "gdb", "-batch", "-nx"]
        for c in commands:
            g.argv += ["-ex", c]
        g.argv.append(ELF)
        g.proc = subprocess.Popen(g.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                  env=env)
        g.out = b""
        g.wait_mark("resuming", timeout=120)
        k.send("uptime\r")
        g.wait_mark("rebooting", timeout=60)
        # the machine reboots under gdb (a new boot: new secret, counters from nothing); gdb, still attached
        # through the same relay, reads again: the relay hears nothing, says hello again, and carries on
        port = k.gdb_udp_port
        k.kill()
        k = boot_plain(request.node.name + "-rebooted", host_port=port)
        rebooted.write_text("yes")
        text = g.finish(timeout=280)
        assert re.fullmatch(r"up \d+\.\d+ s", k.cmd("uptime")), "the rebooted machine runs after the detach"
    finally:
        k.kill()
    assert "asking for a nonce again" in text, text
    gdb_said = re.sub(r"kprof-gdb-relay: [^\n]*\n", "", text)  # the relay's -v lines land inside gdb's
    assert re.search(r"Breakpoint 1, cmd_uptime \(", gdb_said), text
    reads = re.findall(r"(?m)^0x[0-9a-f]+ <cmd_uptime(?:\+\d+)?>:((?:\s+0x[0-9a-f]{2})+)$", gdb_said)
    assert len(reads) == 2 and reads[0] == reads[1], text
    assert "detached" in gdb_said, text


def test_a_max_counter_from_another_host_locks_no_relay_out(request):
    """Issue 40: one datagram used to lock the UDP debugger out for the boot. This test is an allowlisted host
    (10.0.2.2, as QEMU's user networking shows it, a port of its own) that receives: it says hello, takes its
    nonce, and sends a valid plain KPG1 datagram with counter 2^64-1 -- an ack, which a running machine does
    not act on. The replay floor it used to raise for every sender is now a session's, raised only for what the
    transport acts on: gdb then attaches through the relay normally."""
    k = boot_plain(request.node.name)
    env = dict(os.environ)
    env.pop("KPROF_UDPSH_KEY", None)
    try:
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.connect(("127.0.0.1", k.gdb_udp_port))
        s.settimeout(1.0)
        other = gw.Session(None)
        for _ in range(30):
            s.send(other.hello())
            try:
                other.take_nonce(s.recv(65536))
                break
            except (socket.timeout, gw.Rejected, ConnectionRefusedError):
                pass
        assert other.nonce is not None, "no nonce answer"
        before = auth_line(k)
        other.tx = 2**64 - 2  # seal() takes the next: 2^64-1
        top = other.seal(b"+")
        assert struct.unpack(">Q", top[gw.HEAD - 8:gw.HEAD])[0] == 2**64 - 1
        s.send(top)
        a = poll("the datagram opened", lambda: (lambda a: a if a["accepted"] == before["accepted"] + 1 else None)(
            auth_line(k)), timeout=10)
        assert a["peer"] == "no peer" and a["stops"] == before["stops"] and a["replayed"] == before["replayed"], a
        s.close()
        target = "target remote | %s -v 127.0.0.1:%d --wait 60" % (RELAY, k.gdb_udp_port)
        done = gdb_batch(["x/4xb cmd_uptime", "detach"], target=target, env=env, timeout=90)
        out = done.stdout
        assert done.returncode == 0, "gdb exited %d:\n%s\n%s" % (done.returncode, out, done.stderr)
        assert re.search(r"(?m)^0x[0-9a-f]+ <cmd_uptime(?:\+\d+)?>:(\s+0x[0-9a-f]{2}){4}$", out), out + done.stderr
        assert "[Inferior 1 (Remote target) detached]" in out, out
        after = auth_line(k)
        assert after["stops"] == before["stops"] + 1 and after["replayed"] == before["replayed"], after
        assert re.fullmatch(r"up \d+\.\d+ s", k.cmd("uptime")), "the console answers after the detach"
    finally:
        k.kill()


# ---- forged frames on a segment --------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def segment():
    yield from forge.answering_segment({FORGED_IP: FORGED_MAC, OTHER_IP: OTHER_MAC})


@pytest.fixture(scope="module")
def on_wire(request, segment):
    k = Kprof(smp=2, mem=256, cmdline="ip=%s/24 gw=10.0.2.2 gdb.udp=%d udpsh.key=%s" % (KERNEL_IP, GDB_GUEST_PORT,
                                                                                      KEY),
              extra_args=segment.netdev_args(), name=request.node.name + "-wire")
    try:
        k.boot()
        yield k
    finally:
        k.kill()


def inject(segment, payload, src_ip=FORGED_IP, src_mac=FORGED_MAC, quiet=1.0):
    """One datagram to the gdb port from src_ip:40000; every UDP datagram the kernel sent from its gdb port
    until it had been quiet for `quiet` seconds."""
    mark = segment.mark()
    segment.forge_udp(src_ip, FORGED_PORT, KERNEL_IP, GDB_GUEST_PORT, payload, src_mac)
    segment.wait_quiet(quiet)
    return [f for f in segment.since(mark) if f.kind == "udp" and f.sport == GDB_GUEST_PORT]


def running(k):
    """The console answers at once: no CPU is stopped in the debugger."""
    t = time.monotonic()
    assert re.fullmatch(r"up \d+\.\d+ s", k.cmd("uptime", timeout=5))
    return time.monotonic() - t


def test_forged_and_replayed_datagrams_change_nothing(on_wire, segment):
    key = bytes.fromhex(KEY)
    base = auth_line(on_wire)
    assert base["mode"] == "keyed"

    # plain gdb: no stop, no peer, no answer
    for plain in (packet(b"qSupported:multiprocess+"), b"\x03", packet(b"D")):
        assert inject(segment, plain) == [], plain
    running(on_wire)
    a = auth_line(on_wire)
    assert a["plain"] == base["plain"] + 3 and a["peer"] == "no peer" and a["stops"] == base["stops"], a

    # a hello: one answer, within 3x, MACed under the key
    relay = gw.Session(key)
    hello = relay.hello()
    # the first finds 10.0.2.66's MAC unknown: the kernel asks ARP and answers nothing; the relay resends
    assert inject(segment, hello) == []
    answers = inject(segment, hello)
    assert len(answers) == 1 and answers[0].dst == FORGED_IP and answers[0].dport == FORGED_PORT, answers
    assert len(answers[0].payload) == gw.NONCE_LEN == 85
    assert answers[0].ip_len <= 3 * (len(hello) + 28), "an IPv4 datagram of %d bytes for %d" % (
        answers[0].ip_len, len(hello) + 28)
    relay.take_nonce(answers[0].payload)  # raises when forged
    running(on_wire)
    assert auth_line(on_wire)["peer"] == "no peer", "a hello claims nothing"

    # sealed with the nonce: attaches; answers sealed; D lets the machine go
    attach = relay.seal(packet(b"qSupported:multiprocess+"))
    got = b"".join(relay.open(f.payload) for f in inject(segment, attach))
    assert got.startswith(b"+$") and b"PacketSize=" in got, got
    inject(segment, relay.seal(b"+"), quiet=0.3)
    assert inject(segment, attach, quiet=0.3) == [], "the attach replayed in its own session"
    replies = inject(segment, relay.seal(packet(b"D")))
    reflected = replies[0].payload
    assert b"".join(relay.open(f.payload) for f in replies) == b"+" + packet(b"OK")
    inject(segment, relay.seal(b"+"), quiet=0.3)      # gdb's ack of the OK: the stub waits for it
    running(on_wire)
    a = auth_line(on_wire)
    assert a["stops"] == base["stops"] + 1 and a["accepted"] == base["accepted"] + 4, a
    assert a["replayed"] == base["replayed"] + 1, a   # the attach replayed in its session (the console waits
    # while the machine is stopped: counted here)

    # now nothing that is not new and genuine from 10.0.2.66 has any effect. Its session ended with `D`: its
    # nonce with it (the next one's is asked for, so that what follows is judged past the nonce check)
    old_nonce = relay.nonce
    answers = inject(segment, relay.hello())
    assert len(answers) == 1
    relay.take_nonce(answers[0].payload)
    assert relay.nonce != old_nonce, "a session's nonce ends with it"
    forged_key = gw.Session(b"\x33" * 16)
    forged_key.nonce, forged_key.tx = relay.nonce, relay.tx + 10
    tries = [("the attach replayed, its session ended", attach, FORGED_IP, FORGED_MAC),
             ("another key", forged_key.seal(packet(b"qSupported:multiprocess+")), FORGED_IP, FORGED_MAC),
             ("from another address", relay.seal(packet(b"qSupported:multiprocess+")), OTHER_IP, OTHER_MAC),
             ("the kernel's reply reflected", reflected, FORGED_IP, FORGED_MAC),
             ("a Ctrl-C under the attach's MAC", relay.seal(b"\x03")[:gw.HEAD] + b"\x03" + attach[-32:], FORGED_IP,
              FORGED_MAC)]
    for what, datagram, ip, mac in tries:
        assert inject(segment, datagram, src_ip=ip, src_mac=mac) == [], what
        running(on_wire)
    a2 = auth_line(on_wire)
    assert a2["peer"] == "no peer" and a2["stops"] == a["stops"] and a2["accepted"] == a["accepted"], a2
    assert a2["replayed"] == a["replayed"], a2
    assert a2["bad_mac"] == a["bad_mac"] + 2, a2      # another key; the Ctrl-C under the attach's MAC
    assert a2["bad_nonce"] == a["bad_nonce"] + 2, a2  # the ended session's attach; another address
    assert a2["plain"] == a["plain"] + 1, a2          # a reply ('r') is no request


# ---- the newcomers' hello budget under a flood (issue 40) ------------------------------------------------------
FLOOD_HELLOS_PER_S = 1000
FLOOD_SOURCES = 50  # 10.0.2.100-149: nobody holds them, nobody answers their ARP


def forged_hello(segment, n):
    """The nth forged KPG1 hello of a flood (forge.Flood): from one of FLOOD_SOURCES rotating addresses and a port
    of its own, a fresh client nonce each."""
    last = 100 + n % FLOOD_SOURCES
    segment.forge_udp("10.0.2.%d" % last, 1024 + n % 50000, KERNEL_IP, GDB_GUEST_PORT, gw.Session(None).hello(),
                      forge.mac_of("02:00:00:00:02:%02x" % last))


def kernel_answers(segment, mark, port, relay, want, timeout):
    """The gdb bytes the kernel's sealed answers to 10.0.2.66:port since mark opened to, once they hold want (or
    what they hold when timeout runs out)."""
    deadline = time.monotonic() + timeout
    got = b""
    seen = mark
    while True:
        frames = segment.since(seen)
        seen += len(frames)
        for f in frames:
            if f.kind == "udp" and f.sport == GDB_GUEST_PORT and f.dst == FORGED_IP and f.dport == port:
                try:
                    got += relay.open(f.payload)
                except gw.Rejected:
                    pass
        if want in got or time.monotonic() > deadline:
            return got
        time.sleep(0.02)


def relay_attaches(segment, key, port, deadline):
    """One relay at 10.0.2.66:port, as scripts/kprof-gdb-relay goes about it: hellos, backing off from 0.25 s
    to 2 s, until a nonce answer comes; then gdb's first packet sealed (sent again, as gdb would, while no
    answer comes), its ack, `D` and the ack of its OK. True when all of it was answered before deadline."""
    relay, wait = gw.Session(key), 0.25
    while relay.nonce is None:
        if time.monotonic() > deadline:
            return False
        mark = segment.mark()
        segment.forge_udp(FORGED_IP, port, KERNEL_IP, GDB_GUEST_PORT, relay.hello(), FORGED_MAC)
        end = time.monotonic() + wait
        while relay.nonce is None and time.monotonic() < end:
            for f in segment.since(mark):
                if f.kind == "udp" and f.sport == GDB_GUEST_PORT and f.dst == FORGED_IP and f.dport == port:
                    try:
                        relay.take_nonce(f.payload)
                    except gw.Rejected:
                        pass
            time.sleep(0.02)
        wait = min(2 * wait, 2.0)
    for request, want in ((packet(b"qSupported:multiprocess+"), b"PacketSize="), (packet(b"D"), packet(b"OK"))):
        while True:
            if time.monotonic() > deadline:
                return False
            mark = segment.mark()
            segment.forge_udp(FORGED_IP, port, KERNEL_IP, GDB_GUEST_PORT, relay.seal(request), FORGED_MAC)
            if want in kernel_answers(segment, mark, port, relay, want, 1.0):
                break
        segment.forge_udp(FORGED_IP, port, KERNEL_IP, GDB_GUEST_PORT, relay.seal(b"+"), FORGED_MAC)
    return True


def test_ten_relays_attach_under_a_thousand_forged_hellos_a_second(on_wire, segment):
    """Issue 40: blind forgers spent the newcomers' hello budget (8 answers a second, shared): at 100 forged hellos
    a second 8 of 20 relays got a nonce within 30 s. Ten relays, one after another, each on a port of its own at
    10.0.2.66 (which answers ARP), while FLOOD_HELLOS_PER_S forged hellos a second arrive from addresses nobody
    holds: at least 9 of 10 attach, read the stub's features and detach within 30 s each; the machine runs after
    every one, and `net` counts the forged hellos the kernel took (answered, or waiting on an ARP answer that
    never comes) with every relay's."""
    key = bytes.fromhex(KEY)
    before = auth_line(on_wire)
    attached = 0
    with forge.Flood(segment, forged_hello, FLOOD_HELLOS_PER_S) as flood:
        time.sleep(1.0)  # past the first design's burst
        for i in range(10):
            attached += relay_attaches(segment, key, 43000 + i, time.monotonic() + 30)
        forged = flood.sent
    segment.wait_quiet(0.5)
    running(on_wire)
    after = auth_line(on_wire)
    print("%d of 10 relays attached under %d forged hellos; hellos answered %d" % (
        attached, forged, after["hellos"] - before["hellos"]))
    assert attached >= 9, "%d of 10 relays attached under %d forged hellos" % (attached, forged)
    assert after["stops"] - before["stops"] == attached, (before, after)
    assert after["peer"] == "no peer", after


# ---- a 64 KiB restore through the relay, bridged onto the segment, under forged fragments (issue 40) ----------

BRIDGE_PORT = FORGED_PORT + 1  # the relay's source port as the kernel sees it, at 10.0.2.66


def frame_counts(k):
    """`net`'s `gdb frames:` counters, by name."""
    line = re.search(r"(?m)^gdb frames: .*$", k.cmd("net"))
    assert line, "net has no gdb frames line"
    return {name: int(n) for n, name in re.findall(r"(\d+) ([a-z ]+?)(?=,|$)", line.group(0))}


class Bridge:
    """Puts the real scripts/kprof-gdb-relay on the segment as 10.0.2.66:BRIDGE_PORT: each datagram the relay sends
    to this local socket enters the segment as a frame to the kernel's gdb port -- in IPv4 fragments, as the host
    would cut it, when it is longer than wire.DATAGRAM_MAX -- and each datagram the kernel sends there (its
    fragments joined) goes back to the relay. And the forger: after each piece of a large packet (a datagram of
    over 1000 bytes: only a write's, with the machine stopped) one forged IPv4 fragment with the relay's address
    and port goes to the gdb port, a first fragment (a UDP header, more to come) and a last one (54 bytes on the
    wire) in turn -- what used to cancel the peer's large datagram in flight."""

    def __init__(self, segment):
        self.segment = segment
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.relay = None
        self.sizes = []       # every datagram the relay sent
        self.forged = 0       # forged fragments sent
        self.partial = {}     # IPv4 id -> ({offset: bytes}, end or None): the kernel's fragments so far
        self.ident = 0x7000
        segment.forward = self.from_kernel
        threading.Thread(target=self.from_relay, daemon=True).start()

    def from_relay(self):
        while True:
            try:
                d, self.relay = self.sock.recvfrom(65536)
            except OSError:
                return
            self.sizes.append(len(d))
            self.ident += 1
            if len(d) <= gw.DATAGRAM_MAX:
                self.segment.inject(forge.udp_frame(FORGED_MAC, forge.GUEST_MAC, FORGED_IP, KERNEL_IP, BRIDGE_PORT,
                                                    GDB_GUEST_PORT, d, ident=self.ident))
            else:
                for f in forge.udp_fragments(FORGED_MAC, forge.GUEST_MAC, FORGED_IP, KERNEL_IP, BRIDGE_PORT,
                                             GDB_GUEST_PORT, d, self.ident):
                    self.segment.inject(f)
            if len(d) > 1000:
                self.forge_fragment()

    def forge_fragment(self):
        self.ident += 1
        if self.forged % 2 == 0:
            body = struct.pack("!HHHH", BRIDGE_PORT, GDB_GUEST_PORT, 3000, 0x1234) + b"forged!!"
            f = forge.ipv4_frame(FORGED_MAC, forge.GUEST_MAC, FORGED_IP, KERNEL_IP, body, self.ident, 0, True)
        else:
            f = forge.ipv4_frame(FORGED_MAC, forge.GUEST_MAC, FORGED_IP, KERNEL_IP, b"forged" * 3 + b"!!", self.ident,
                                 1480, False)
        self.segment.inject(f)
        self.forged += 1

    def from_kernel(self, frame):
        if len(frame) < 34 or frame[12:14] != b"\x08\x00" or frame[23] != forge.IP_UDP or \
                frame[26:30] != forge.ip_bytes(KERNEL_IP) or frame[30:34] != forge.ip_bytes(FORGED_IP):
            return
        ihl = (frame[14] & 15) * 4
        total = struct.unpack("!H", frame[16:18])[0]
        ident, flags = struct.unpack("!HH", frame[18:22])
        body = bytes(frame[14 + ihl:14 + total])
        pieces, end = self.partial.pop(ident, ({}, None))
        pieces[(flags & 0x1FFF) * 8] = body
        if not flags & 0x2000:
            end = (flags & 0x1FFF) * 8 + len(body)
        udp = b"".join(pieces[at] for at in sorted(pieces))
        if end is None or len(udp) != end:
            self.partial[ident] = (pieces, end)
            return
        sport, dport, ulen = struct.unpack("!HHH", udp[:6])
        if sport == GDB_GUEST_PORT and dport == BRIDGE_PORT and self.relay:
            self.sock.sendto(udp[8:ulen], self.relay)

    def close(self):
        self.segment.forward = None
        self.sock.close()


def scratch_64k():
    """A zero-initialised object of 64 KiB or more that no part of a gdb session touches (the `burn` and workload
    span logs): the test writes there with the machine stopped and puts the bytes back before it detaches."""
    out = subprocess.run(["nm", "-S", "--defined-only", ELF], check=True, capture_output=True, text=True).stdout
    spans = sorted(int(f[0], 16) for f in (l.split() for l in out.splitlines())
                   if len(f) == 4 and f[2] in "bB" and f[3] == "span_entries" and int(f[1], 16) >= 0x10000)
    assert spans, "no span log of 64 KiB in the kernel"
    return spans[0]


def test_a_64k_restore_through_the_relay_under_forged_fragments(on_wire, segment, tmp_path):
    """Issue 40: the relay cuts gdb's bytes into datagrams that need no IPv4 fragments, and the stub reassembles
    none under KPG1, so a forged fragment with the peer's address cancels nothing: gdb's `restore` of 64 KiB
    through the real relay (keyed, bridged onto the segment as 10.0.2.66) arrives whole with a forged fragment from
    10.0.2.66 after every piece of it, and `net` counts each as not admitted."""
    key_file = tmp_path / "key"
    key_file.write_text(KEY + "\n")
    env = dict(os.environ)
    env.pop("KPROF_UDPSH_KEY", None)
    addr = scratch_64k()
    data = os.urandom(0x10000)
    (tmp_path / "new.bin").write_bytes(data)
    files = {name: str(tmp_path / (name + ".bin")) for name in ("new", "orig", "back", "after")}
    span = "0x%x 0x%x" % (addr, addr + len(data))
    before = frame_counts(on_wire)
    bridge = Bridge(segment)
    try:
        done = gdb_batch(["dump binary memory %s %s" % (files["orig"], span),
                          "restore %s binary 0x%x" % (files["new"], addr),
                          "dump binary memory %s %s" % (files["back"], span),
                          "restore %s binary 0x%x" % (files["orig"], addr),
                          "dump binary memory %s %s" % (files["after"], span), "detach"],
                         target="target remote | %s 127.0.0.1:%d --key-file %s" % (RELAY, bridge.port, key_file),
                         env=env, timeout=90, remotetimeout=REPLY_WAIT_S)
    finally:
        bridge.close()
    out = done.stdout + done.stderr
    assert done.returncode == 0 and "[Inferior 1 (Remote target) detached]" in out, out
    assert "Restoring binary file" in out, out
    missing = [f for f in files.values() if not os.path.exists(f)]
    assert not missing, "gdb wrote no %s:\n%s" % (", ".join(missing), out)
    assert open(files["back"], "rb").read() == data, "the memory after the restore is not the file"
    assert open(files["after"], "rb").read() == open(files["orig"], "rb").read(), "the original bytes put back"
    assert max(bridge.sizes) <= gw.DATAGRAM_MAX, "the relay sent a datagram of %d bytes" % max(bridge.sizes)
    assert len(bridge.sizes) > 2 * len(data) // gw.DATAGRAM_MAX, "the restores went through the relay"
    running(on_wire)
    after = frame_counts(on_wire)
    assert after["fragments"] == before["fragments"] and after["reassembled"] == before["reassembled"], after
    # each forged fragment came while the machine was stopped (the stub polls the card: every frame reaches it)
    assert bridge.forged > 2 * len(data) // gw.DATAGRAM_MAX, bridge.forged
    assert after["not admitted"] - before["not admitted"] == bridge.forged, (before, after, bridge.forged)
