"""scripts/kprof-gdb-relay and scripts/kprof_gdb_wire.py on the host: gdb's byte stream cut into one unit per
datagram; the keyed datagrams pinned to the same bytes tests/unit/test_gdb_udp_auth.c pins the kernel's side
to; forged, replayed, other-session and other-hello datagrams rejected; and the relay itself, run as gdb runs
it (a child on pipes), against a fake kernel on a local UDP socket: the handshake, a packet carried both ways,
a lost datagram sent again, forged and replayed replies dropped, and a relay that gets no nonce giving up; a
64 KiB write (X and M packets) in sealed datagrams that each fit 1472 bytes (no IPv4 fragments: issue 40);
without a key the same datagrams under the empty key (plain), raw only with --insecure; the hello sent again
until answered; and a kernel that reboots (new nonce, counters from the start) handshaken with again."""

import contextlib
import hashlib
import hmac
import os
import socket
import struct
import subprocess
import sys
import time

import pytest

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(TOP, "scripts"))
import kprof_gdb_wire as wire  # noqa: E402

RELAY = os.path.join(TOP, "scripts", "kprof-gdb-relay")
SECRET = bytes(range(32))
KEY = bytes(range(0x10, 0x20))
IP, PORT = 0x0a000242, 40000
NONCE = bytes.fromhex("b98073a46e9dbd77c3fd4f4b39e1ba06")     # the unit test's, for 10.0.2.66:40000
MAC_7_G = "16778e7ac78595aa235cbe529185fefd3f774287af12a45e15304f231e3dfb20"
ANSWER_MAC = "b738fc6508a8ff6091eb10202dc702aa2188e7e0dbeeb87db1945d824b94002f"
REPLY_1_MAC = "c1418e0edded9d99715eda3485f6395a542d44b27a21bc7d49ade749ca1b7620"
CLIENT_NONCE = bytes(range(0xa0, 0xb0))


def test_units_are_acks_ctrl_c_and_whole_packets():
    units, rest = wire.split_units(b"+$qSupported:multiprocess+#c9-\x03$m10,4#5")
    assert units == [b"+", b"$qSupported:multiprocess+#c9", b"-", b"\x03"] and rest == b"$m10,4#5"
    units, rest = wire.split_units(rest + b"9$g#6")
    assert units == [b"$m10,4#59"] and rest == b"$g#6"
    assert wire.split_units(b"") == ([], b"")
    # a binary packet escapes `#` (as }\x03), so its first `#` is its end
    units, _ = wire.split_units(b"$X10,2:}\x03}]#ab+")
    assert units == [b"$X10,2:}\x03}]#ab", b"+"]
    assert [wire.unit_needs_answer(u) for u in (b"+", b"-", b"\x03", b"$g#67")] == [False, False, True, True]


def session(clock=7):
    return wire.Session(KEY, clock_ns=lambda: clock, random_bytes=lambda n: CLIENT_NONCE[:n])


def answer(client=CLIENT_NONCE, nonce=NONCE, rx_floor=0, tx_from=0, key=KEY):
    body = b"KPG1n" + client + nonce + struct.pack(">QQ", rx_floor, tx_from)
    return body + hmac.new(key, body, hashlib.sha256).digest()


def reply(counter, inner, nonce=NONCE, key=KEY):
    body = b"KPG1r" + nonce + struct.pack(">Q", counter) + inner
    return body + hmac.new(key, body, hashlib.sha256).digest()


def test_keyed_bytes_are_the_kernels():
    s = session()
    assert s.hello() == b"KPG1h" + CLIENT_NONCE and len(s.hello()) == wire.HELLO_LEN
    a = answer()
    assert a[-32:].hex() == ANSWER_MAC, "the nonce answer the kernel's unit test pins"
    assert s.take_nonce(a) == NONCE
    d = s.seal(b"$g#67")
    assert d[:5] == b"KPG1d" and d[5:21] == NONCE and d[21:29] == struct.pack(">Q", 7)
    assert d[29:-32] == b"$g#67" and d[-32:].hex() == MAC_7_G
    assert reply(1, b"+$OK#9a")[-32:].hex() == REPLY_1_MAC
    assert s.open(reply(1, b"+$OK#9a")) == b"+$OK#9a"


def test_counters_rise_above_the_kernels_floor_and_clock():
    s = session(clock=5)
    s.hello()
    s.take_nonce(answer(rx_floor=100, tx_from=40))
    assert struct.unpack(">Q", s.seal(b"+")[21:29])[0] == 101
    assert struct.unpack(">Q", s.seal(b"+")[21:29])[0] == 102
    with pytest.raises(wire.Rejected, match="replayed"):
        s.open(reply(40, b"$OK#9a"))           # not above tx_from: from before this session
    assert s.open(reply(41, b"$OK#9a")) == b"$OK#9a"
    with pytest.raises(wire.Rejected, match="replayed"):
        s.open(reply(41, b"$OK#9a"))
    assert s.open(reply(50, b"+")) == b"+"
    with pytest.raises(wire.Rejected, match="replayed"):
        s.open(reply(45, b"+"))                # overtaken: dropped, gdb's ack recovers


def test_forged_and_foreign_datagrams_rejected():
    s = session()
    s.hello()
    for bad in (answer(key=b"\x33" * 16), answer(client=bytes(16)), answer()[:-1], b"+", b""):
        with pytest.raises(wire.Rejected):
            s.take_nonce(bad)
    assert s.nonce is None
    s.take_nonce(answer())
    good = reply(3, b"$OK#9a")
    for bad in (reply(3, b"$OK#9a", key=b"\x33" * 16), reply(3, b"$OK#9a", nonce=bytes(16)),
                good[:-1], good[:wire.OVERHEAD - 1], b"$OK#9a", b"KPG1d" + good[5:], answer()):
        with pytest.raises(wire.Rejected):
            s.open(bad)
    flipped = bytearray(good)
    for i in range(len(good)):
        flipped[i] ^= 1
        with pytest.raises(wire.Rejected):
            s.open(bytes(flipped))
        flipped[i] ^= 1
    assert s.open(good) == b"$OK#9a", "nothing above moved the reply counter"


def test_a_floor_at_the_top_is_refused_not_a_crash():
    """A session whose floor is 2^64-1 takes no counter at all: the answer saying so is refused (the relay then
    asks again) rather than the next seal failing to pack its counter."""
    s = session()
    s.hello()
    with pytest.raises(wire.Rejected):
        s.take_nonce(answer(rx_floor=2**64 - 1))
    s.take_nonce(answer(rx_floor=2**64 - 2))
    assert struct.unpack(">Q", s.seal(b"+")[21:29])[0] == 2**64 - 1


def test_raw_passes_bytes_as_they_are_plain_is_kpg1_under_the_empty_key():
    s = wire.Session(None, raw=True)
    assert s.ready and s.seal(b"$g#67") == b"$g#67" and s.open(b"+$OK#9a") == b"+$OK#9a"
    s = wire.Session(None, clock_ns=lambda: 7, random_bytes=lambda n: CLIENT_NONCE[:n])
    assert not s.ready
    with pytest.raises(RuntimeError):
        s.seal(b"$g#67")
    s.hello()
    with pytest.raises(wire.Rejected):
        s.take_nonce(answer())  # MACed under a key: not the plain kernel's
    s.take_nonce(answer(key=b""))
    d = s.seal(b"$g#67")
    assert d[:5] == b"KPG1d" and d[5:21] == NONCE
    assert d[-32:] == hmac.new(b"", d[:-32], hashlib.sha256).digest()
    assert s.open(reply(1, b"+$OK#9a", key=b"")) == b"+$OK#9a"
    with pytest.raises(wire.Rejected):
        s.open(b"+$OK#9a")  # raw bytes from the kernel's address: not a reply


def test_a_new_boots_nonce_restarts_the_reply_counter():
    """After a reboot the kernel's replies count from its new tx_from: the old boot's counter must not make
    every one of them look replayed (the relay never recovered before)."""
    s = session()
    s.hello()
    s.take_nonce(answer(tx_from=0))
    assert s.open(reply(500, b"+")) == b"+"
    other = bytes(16 - len(b"boot2")) + b"boot2"
    s.hello()
    s.take_nonce(answer(nonce=other, tx_from=3))
    assert s.open(reply(4, b"+", nonce=other)) == b"+"
    with pytest.raises(wire.Rejected):
        s.open(reply(4, b"+", nonce=other))  # replays still refused
    s.hello()
    s.take_nonce(answer(nonce=other, tx_from=4))  # the same boot asked again: its counter kept
    with pytest.raises(wire.Rejected):
        s.open(reply(4, b"+", nonce=other))
    assert s.open(reply(5, b"+", nonce=other)) == b"+"
    # a boot whose secret repeated (no entropy): the same nonce, but it has sent fewer replies than we took
    s.hello()
    s.take_nonce(answer(nonce=other, tx_from=0))
    assert s.open(reply(1, b"+", nonce=other)) == b"+"


# ---- the relay as a child process, against a fake kernel ---------------------------------------------------

class FakeKernel:
    """The kernel's side of the KPG1 format (as gdbstub/udp_auth.c does it), on a local UDP socket; key b""
    is the plain mode. reboot(): a new boot secret, counters from nothing, hellos unanswered until `ignore`
    of them have come (the first datagrams after a boot are lost)."""

    def __init__(self, key=KEY):
        self.key = key
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.settimeout(10)
        self.port = self.sock.getsockname()[1]
        self.rx_floor = 0
        self.tx = 0
        self.peer = None
        self.secret = SECRET
        self.ignore_hellos = 0
        self.hellos = 0
        self.stale = 0  # data datagrams under another boot's nonce, dropped as the kernel drops them
        self.generation = 0  # the session's (gdbstub/udp_auth.h): mixed into the nonce
        self.sizes = []  # the length of every genuine data datagram taken

    def reboot(self, ignore_hellos=0):
        self.secret = bytes(reversed(SECRET))
        self.rx_floor = self.tx = 0
        self.ignore_hellos = ignore_hellos

    def end_session(self):
        """The peer forgotten (gdbstub/udp_auth.h): its nonce and floor go; the reply counters run on."""
        self.generation += 1
        self.rx_floor = 0

    def nonce_of(self, addr):
        ip = struct.unpack(">I", socket.inet_aton(addr[0]))[0]
        message = b"gdb" + struct.pack(">IHQ", ip, addr[1], self.generation)
        return hmac.new(self.secret, message, hashlib.sha256).digest()[:16]

    def recv_inner(self):
        """The next genuine data datagram's gdb bytes (answering hellos on the way)."""
        while True:
            d, addr = self.sock.recvfrom(65536)
            self.peer = addr
            if d.startswith(b"KPG1h") and len(d) == 21:
                self.hellos += 1
                if self.ignore_hellos:
                    self.ignore_hellos -= 1
                    continue
                body = b"KPG1n" + d[5:] + self.nonce_of(addr) + struct.pack(">QQ", self.rx_floor, self.tx)
                self.sock.sendto(body + hmac.new(self.key, body, hashlib.sha256).digest(), addr)
                continue
            body, mac = d[:-32], d[-32:]
            assert d.startswith(b"KPG1d")
            if body[5:21] != self.nonce_of(addr):
                self.stale += 1
                continue
            assert hmac.compare_digest(hmac.new(self.key, body, hashlib.sha256).digest(), mac)
            counter = struct.unpack(">Q", body[21:29])[0]
            assert counter > self.rx_floor
            self.rx_floor = counter
            self.sizes.append(len(d))
            return body[29:]

    def recv_packet(self):
        """The gdb bytes of the next genuine data datagrams up to a packet's `#` and checksum, joined."""
        inner = b""
        while not (b"#" in inner and len(inner) >= inner.index(b"#") + 3):
            inner += self.recv_inner()
        return inner

    def sealed(self, inner, counter=None):
        if counter is None:
            self.tx += 1
            counter = self.tx
        body = b"KPG1r" + self.nonce_of(self.peer) + struct.pack(">Q", counter) + inner
        return body + hmac.new(self.key, body, hashlib.sha256).digest()

    def send(self, datagram):
        self.sock.sendto(datagram, self.peer)


def relay(port, key_hex=KEY.hex(), extra=(), verbose=True):
    env = dict(os.environ)
    env.pop("KPROF_UDPSH_KEY", None)
    if key_hex:
        env["KPROF_UDPSH_KEY"] = key_hex
    return subprocess.Popen([sys.executable, RELAY, "127.0.0.1:%d" % port] + ["-v"] * verbose + list(extra),
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)


@contextlib.contextmanager
def relaying(k=None, wait=5, **kw):
    """A FakeKernel (k, or a new one) and a relay(**kw) to it, as (k, p); at the end the relay's stdin is closed
    (gdb gone) and its exit waited for."""
    k = FakeKernel() if k is None else k
    p = relay(k.port, **kw)
    try:
        yield k, p
    finally:
        p.stdin.close()
        p.wait(timeout=wait)


def gdb_sends(p, data):
    p.stdin.write(data)
    p.stdin.flush()


def read_exactly(pipe, n, timeout=5):
    os.set_blocking(pipe.fileno(), False)
    out = b""
    deadline = time.monotonic() + timeout
    while len(out) < n and time.monotonic() < deadline:
        try:
            got = pipe.read(n - len(out))
        except BlockingIOError:
            got = None
        if got:
            out += got
        else:
            time.sleep(0.01)
    return out


def test_relay_carries_gdb_both_ways_resends_and_drops_forgeries():
    with relaying() as (k, p):
        gdb_sends(p, b"+$qSupported#37")
        assert k.recv_inner() == b"+"
        assert k.recv_inner() == b"$qSupported#37"
        # forged (wrong key), replayed and a plain reply come first: gdb must see none of them
        k.send(k.sealed(b"+$FORGED#00", counter=99)[:-32] + bytes(32))
        first = k.sealed(b"+")
        k.send(first)
        k.send(first)
        k.send(b"+$PLAIN#00")
        k.send(k.sealed(b"$PacketSize=4000#00"))
        assert read_exactly(p.stdout, len(b"+$PacketSize=4000#00")) == b"+$PacketSize=4000#00"
        # a lost datagram: the kernel "loses" the next packet, the relay sends it again with a higher counter
        gdb_sends(p, b"+$g#67")
        assert k.recv_inner() == b"+"
        assert k.recv_inner() == b"$g#67"
        floor = k.rx_floor
        assert k.recv_inner() == b"$g#67", "sent again after the retransmission time"
        assert k.rx_floor > floor
        k.send(k.sealed(b"+$0011#00"))
        assert read_exactly(p.stdout, 9) == b"+$0011#00"
    assert p.returncode == 0, "stdin's end ends the relay"
    err = p.stderr.read().decode()
    assert err.count("dropped:") == 3, err
    assert "bad MAC" in err and "replayed" in err and "sending again" in err


def test_relay_insecure_is_raw():
    with relaying(key_hex=None, extra=["--insecure"]) as (k, p):
        gdb_sends(p, b"$g#67")
        d, k.peer = k.sock.recvfrom(65536)
        assert d == b"$g#67"
        k.send(b"+$00#60")
        assert read_exactly(p.stdout, 7) == b"+$00#60"


def test_relay_plain_without_a_key_resends_its_hello_and_rehandshakes_after_a_reboot():
    k = FakeKernel(key=b"")
    k.ignore_hellos = 2  # lost before the guest answered ARP: sent again with backoff
    with relaying(k, wait=10, key_hex=None) as (k, p):
        gdb_sends(p, b"$g#67")
        assert k.recv_inner() == b"$g#67"
        assert k.hellos == 3
        k.send(k.sealed(b"+$0011#00"))
        assert read_exactly(p.stdout, 9) == b"+$0011#00"
        gdb_sends(p, b"+")
        assert k.recv_inner() == b"+"
        k.reboot(ignore_hellos=1)
        gdb_sends(p, b"$m0,4#fd")
        # the old session's datagrams go unanswered; the relay asks for a nonce again and resends
        assert k.recv_inner() == b"$m0,4#fd"
        assert k.stale >= 1 and k.hellos >= 5
        k.send(k.sealed(b"+$00000000#80"))  # counter 1 of the new boot: taken
        assert read_exactly(p.stdout, 14, timeout=10) == b"+$00000000#80"
    err = p.stderr.read().decode()
    assert "asking for a nonce again" in err, err


def test_relay_rehandshakes_when_its_session_ends_and_goes_on():
    """The kernel forgot the relay's session (issue 40: a session's nonce and floor end with it): the relay's
    datagrams go unanswered under the old nonce, it asks for a nonce again as after a reboot, and carries on
    from the fresh floor with the reply counters that ran on."""
    k = FakeKernel(key=b"")
    with relaying(k, wait=10, key_hex=None) as (k, p):
        gdb_sends(p, b"$g#67")
        assert k.recv_inner() == b"$g#67"
        k.send(k.sealed(b"+$0011#00"))
        assert read_exactly(p.stdout, 9) == b"+$0011#00"
        hellos = k.hellos
        k.end_session()
        gdb_sends(p, b"$m0,4#fd")
        assert k.recv_inner() == b"$m0,4#fd"
        assert k.stale >= 1 and k.hellos == hellos + 1
        k.send(k.sealed(b"+$00000000#80"))  # reply counter 2: above what the relay took
        assert read_exactly(p.stdout, 14, timeout=10) == b"+$00000000#80"
    err = p.stderr.read().decode()
    assert "asking for a nonce again" in err, err


def test_relay_lets_its_stderr_go_once_the_session_is_up():
    """gdb's `target remote |` reads the command's stderr after every byte it takes until that reaches end of
    file (a syscall a byte: a 38 KB reply took 23 ms instead of under 1): without -v the relay closes it once
    its handshake is done, and still carries gdb's bytes."""
    with relaying(verbose=False) as (k, p):
        gdb_sends(p, b"$g#67")
        assert k.recv_inner() == b"$g#67"  # the hello answered on the way
        deadline = time.monotonic() + 10
        os.set_blocking(p.stderr.fileno(), False)
        closed = False
        while not closed and time.monotonic() < deadline:
            try:
                closed = p.stderr.read() == b""
            except BlockingIOError:
                time.sleep(0.01)
        assert closed and p.poll() is None, "the relay's stderr is still open (or it exited: %r)" % p.poll()
        k.send(k.sealed(b"+$00#60"))
        assert read_exactly(p.stdout, 7) == b"+$00#60"


def test_relay_without_an_answer_gives_up_and_refuses_bad_keys(tmp_path):
    silent = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    silent.bind(("127.0.0.1", 0))
    env = dict(os.environ, KPROF_UDPSH_KEY=KEY.hex())
    done = subprocess.run([sys.executable, RELAY, "127.0.0.1:%d" % silent.getsockname()[1], "--wait", "1"],
                          stdin=subprocess.PIPE, capture_output=True, env=env, timeout=20)
    assert done.returncode == 1 and b"no nonce answer" in done.stderr, done.stderr
    bad = tmp_path / "key"
    bad.write_text("abc")
    done = subprocess.run([sys.executable, RELAY, "127.0.0.1:1", "--key-file", str(bad)], capture_output=True,
                          timeout=10)
    assert done.returncode == 2 and b"not hex digits" in done.stderr, done.stderr
    done = subprocess.run([sys.executable, RELAY, "nohostport"], capture_output=True, timeout=10)
    assert done.returncode == 2 and b"HOST:PORT" in done.stderr


def test_which_units_wait_for_a_reply():
    assert wire.unit_wants_reply(b"$g#67") and wire.unit_wants_reply(b"$m10,4#59") and wire.unit_wants_reply(b"\x03")
    assert wire.unit_wants_reply(b"$qC#b4") and wire.unit_wants_reply(b"$vCont?#49")
    for resume in (b"$c#63", b"$s#73", b"$C05#a8", b"$S05#b8", b"$vCont;c#a8", b"$vCont;s:1#00", b"$k#6b"):
        assert not wire.unit_wants_reply(resume), resume


def no_datagram_within(k, seconds):
    k.sock.settimeout(seconds)
    try:
        k.sock.recvfrom(65536)
    except socket.timeout:
        return True
    finally:
        k.sock.settimeout(5)
    return False


def test_relay_resends_until_the_reply_is_whole_and_hands_gdb_whole_units():
    with relaying() as (k, p):
        gdb_sends(p, b"$g#67")
        assert k.recv_inner() == b"$g#67"
        k.send(k.sealed(b"+"))                    # the ack, then the reply's first part, then nothing
        k.send(k.sealed(b"$0011"))
        assert read_exactly(p.stdout, 1) == b"+"
        assert k.recv_inner() == b"$g#67", "acknowledged but not answered whole: sent again"
        k.send(k.sealed(b"+$0011#62"))            # the transport's answer to a repeat: all of it again
        assert read_exactly(p.stdout, 9) == b"+$0011#62", "the first part held back, never doubled"
        assert read_exactly(p.stdout, 1, timeout=0.5) == b""
        # a resume is answered by its ack: nothing sent again however long the stop takes
        gdb_sends(p, b"+$c#63")
        assert k.recv_inner() == b"+"
        assert k.recv_inner() == b"$c#63"
        k.send(k.sealed(b"+"))
        assert no_datagram_within(k, 1.0)
        k.send(k.sealed(b"$T05thread:1;#00"))
        assert read_exactly(p.stdout, len(b"+$T05thread:1;#00")) == b"+$T05thread:1;#00"


def test_a_late_answer_and_its_repeats_answer_reach_gdb_once():
    """Under a loaded host the kernel answers after the relay has sent the packet again: its answer, then its
    answer to the repeat, which may come after gdb's next packet has gone. gdb gets the first only; the next
    packet's own answer still reaches it, and one that happens to be the same bytes as well."""
    with relaying() as (k, p):
        gdb_sends(p, b"$qsThreadInfo#c8")
        assert k.recv_inner() == b"$qsThreadInfo#c8"
        assert k.recv_inner() == b"$qsThreadInfo#c8", "no answer within the retransmission time: sent again"
        k.send(k.sealed(b"+$l#6c"))                 # the late answer to the first copy
        assert read_exactly(p.stdout, 6) == b"+$l#6c"
        gdb_sends(p, b"+$qAttached#8f")              # gdb's ack and its next packet go before the repeat's answer
        assert k.recv_inner() == b"+"
        assert k.recv_inner() == b"$qAttached#8f"
        k.send(k.sealed(b"+$l#6c"))                 # the answer to the repeat: not passed on
        k.send(k.sealed(b"+$1#31"))                 # qAttached's own
        assert read_exactly(p.stdout, 7) == b"++$1#31", "the second answer's packet held back, its ack harmless"
        assert read_exactly(p.stdout, 1, timeout=0.5) == b""
        # a packet sent again whose repeat is never answered, then one whose answer is the same bytes: held
        # back once as a possible second answer, it is asked for again and passed on
        gdb_sends(p, b"+$Hg0#df")
        assert k.recv_inner() == b"+"
        assert k.recv_inner() == b"$Hg0#df"
        assert k.recv_inner() == b"$Hg0#df"
        k.send(k.sealed(b"+$OK#9a"))
        assert read_exactly(p.stdout, 7) == b"+$OK#9a"
        gdb_sends(p, b"+$Hc-1#09")
        assert k.recv_inner() == b"+"
        assert k.recv_inner() == b"$Hc-1#09"
        k.send(k.sealed(b"+$OK#9a"))
        assert k.recv_inner() == b"$Hc-1#09", "held back as a second answer: asked for again"
        k.send(k.sealed(b"+$OK#9a"))
        assert read_exactly(p.stdout, 8) == b"++$OK#9a"
    err = p.stderr.read().decode()
    assert err.count("dropped: the kernel's second answer") == 2, err


# ---- no datagram needs IPv4 fragments (issue 40) -------------------------------------------------------------

def escape_binary(data):
    """X's payload escaping, as gdb does it: '#', '$', '}' and '*' go as '}' then the byte xor 0x20."""
    out = bytearray()
    for b in data:
        out += bytes([0x7D, b ^ 0x20]) if b in b"#$}*" else bytes([b])
    return bytes(out)


def gdb_packet(body):
    return b"$" + body + b"#%02x" % (sum(body) & 0xFF)


def writes_of_64k():
    """The packets of a 64 KiB memory write as gdb sends them under the stub's PacketSize (0xff00): X with
    binary data (every byte value, the escaped ones too), then M with hex."""
    data = bytes(range(256)) * 256
    room = 0xFF00 - 64
    units = []
    at = 0
    while at < len(data):
        n = min(len(data) - at, room // 2)
        units.append(gdb_packet(b"X%x,%x:" % (0x200000 + at, n) + escape_binary(data[at:at + n])))
        at += n
    for at in range(0, len(data), room // 2 // 2):
        piece = data[at:at + room // 2 // 2]
        units.append(gdb_packet(b"M%x,%x:" % (0x200000 + at, len(piece)) + piece.hex().encode()))
    return units


@pytest.mark.parametrize("key", [KEY, None], ids=["keyed", "plain"])
def test_a_64k_write_goes_in_datagrams_that_need_no_fragments(key):
    """Every sealed datagram of a 64 KiB write is at most 1472 bytes (a 1500-byte MTU less the IPv4 and UDP
    headers), the pieces rejoin to the packet in order, and each has a counter above the last: the stub, which
    reassembles no fragments under KPG1, takes them all."""
    s = wire.Session(key, random_bytes=lambda n: CLIENT_NONCE[:n])
    s.hello()
    s.take_nonce(answer(key=key if key else b""))
    assert wire.DATAGRAM_MAX == 1500 - 20 - 8
    last = 0
    sizes = []
    for unit in writes_of_64k() + [b"+", b"\x03", gdb_packet(b"g")]:
        joined = b""
        for d in s.datagrams(unit):
            sizes.append(len(d))
            assert len(d) <= wire.DATAGRAM_MAX, "a datagram of %d bytes needs IPv4 fragments" % len(d)
            assert d[:5] == b"KPG1d" and d[-32:] == hmac.new(key or b"", d[:-32], hashlib.sha256).digest()
            counter = struct.unpack(">Q", d[21:29])[0]
            assert counter > last
            last = counter
            joined += d[29:-32]
        assert joined == unit
    assert max(sizes) == wire.DATAGRAM_MAX, "full pieces fill the datagram"
    assert len(sizes) >= 2 * 65536 // wire.DATAGRAM_MAX, "X and M both cut"
    # the insecure mode sends a unit whole, as gdb's own `target remote udp:` does (the stub reassembles then)
    raw = wire.Session(None, raw=True)
    assert raw.datagrams(writes_of_64k()[0]) == [writes_of_64k()[0]]


def test_relay_cuts_a_large_packet_and_sends_all_of_it_again():
    """The relay itself: gdb's 64 KiB of X reach the kernel in datagrams of at most 1472 bytes, joined in order;
    unanswered, the whole packet goes again (each piece under a fresh counter), and the answer reaches gdb."""
    unit = writes_of_64k()[0]
    with relaying(k=FakeKernel(key=b""), key_hex=None) as (k, p):
        gdb_sends(p, unit)
        assert k.recv_packet() == unit
        first = len(k.sizes)
        assert first >= len(unit) // wire.DATAGRAM_MAX and max(k.sizes) <= wire.DATAGRAM_MAX, k.sizes
        assert k.recv_packet() == unit, "sent again, whole, after the retransmission time"
        assert len(k.sizes) == 2 * first and max(k.sizes) <= wire.DATAGRAM_MAX
        k.send(k.sealed(b"+$OK#9a"))
        assert read_exactly(p.stdout, 7) == b"+$OK#9a"
