"""The gdb UDP transport's datagrams, host side: scripts/kprof-gdb-relay and the tests use them.

gdbstub/udp_auth.h is the reference (and docs/gdb.md "Who can attach"). KPG1 both keyed (the kernel was
booted with udpsh.key=, the relay has the same key) and plain (no key: the MAC is under the empty key, and
the session nonce, which only a sender receiving at its address learns, is what gets it in). Only a kernel
booted with gdb.udp.insecure takes raw gdb bytes (raw=True here, or gdb's own `target remote udp:`).
Integers big-endian, MAC = HMAC-SHA-256(key, every byte before it):

    hello  relay -> kernel  b"KPG1h" client_nonce[16]
    nonce  kernel -> relay  b"KPG1n" client_nonce[16] session_nonce[16] rx_floor u64 tx_from u64 MAC
    data   relay -> kernel  b"KPG1d" session_nonce[16] counter u64 gdb-bytes MAC
    reply  kernel -> relay  b"KPG1r" session_nonce[16] counter u64 gdb-bytes MAC

The relay's counters rise above rx_floor (it takes them from its clock, as scripts/udpsh does); the kernel's
replies are taken only above tx_from and above each other. The session nonce and rx_floor are a session's: when
the kernel forgets the relay's session (or reboots) its datagrams stop opening, and the relay asks again.
Standard library only.
"""

import hashlib
import hmac
import os
import struct
import time

MAGIC = b"KPG1"
NONCE_BYTES = 16
MAC_BYTES = 32
HEAD = len(MAGIC) + 1 + NONCE_BYTES + 8
OVERHEAD = HEAD + MAC_BYTES
HELLO_LEN = len(MAGIC) + 1 + NONCE_BYTES
NONCE_LEN = len(MAGIC) + 1 + 2 * NONCE_BYTES + 16 + MAC_BYTES
INNER_MAX = 65344  # gdbstub/udp_auth.h GDB_UDP_INNER_MAX
# The most UDP payload a datagram carries without IPv4 fragmentation on a 1500-byte MTU: 1500 less the IPv4
# header (20, no options) and the UDP header (8). Every sealed datagram the relay sends fits it (Session.datagrams):
# under KPG1 the stub reassembles no fragments, for one forged fragment with the relay's address used to cancel a
# large datagram in flight (issue 40, docs/gdb.md).
DATAGRAM_MAX = 1472
COUNTER_MAX = 2**64 - 1


def mac(key, data):
    return hmac.new(key, data, hashlib.sha256).digest()


def split_units(buf):
    """(units, rest): gdb's byte stream cut into what one datagram each carries -- an ack or nak, a Ctrl-C
    (0x03), or one whole packet `$...#xx` -- and the bytes of a packet not yet complete. gdb escapes `#`
    inside binary packets, so the first `#` and two digits end one. Bytes outside a packet that are none of
    those are passed on one datagram each too: the stub ignores them as it does on COM2."""
    units = []
    i = 0
    n = len(buf)
    while i < n:
        c = buf[i:i + 1]
        if c == b"$":
            end = buf.find(b"#", i + 1)
            if end < 0 or end + 3 > n:
                break
            units.append(bytes(buf[i:end + 3]))
            i = end + 3
        else:
            units.append(bytes(c))
            i += 1
    return units, bytes(buf[i:])


def cut(data, most):
    """data in pieces of at most `most` bytes, in order (an empty data: one empty piece)."""
    return [bytes(data[at:at + most]) for at in range(0, len(data), most)] or [b""]


def unit_needs_answer(unit):
    """Whether a unit is one the relay sends again until the kernel answers something: a packet or a Ctrl-C
    (a lost ack or nak is recovered by gdb itself)."""
    return unit.startswith(b"$") or unit == b"\x03"


def unit_wants_reply(unit):
    """Whether the answer to a packet or Ctrl-C is a reply packet (that the relay waits for) rather than its
    ack alone: a packet that resumes the machine (c, C, s, S, vCont;..., k) is answered later, by a stop, or
    never; a Ctrl-C by the stop it causes."""
    if unit == b"\x03":
        return True
    body = unit[1:unit.find(b"#")] if unit.startswith(b"$") else b""
    return not (body[:1] in (b"c", b"C", b"s", b"S") or body.startswith(b"vCont;") or body == b"k")


class Rejected(ValueError):
    """A datagram from the kernel's address that is not a genuine, fresh one: dropped."""


class Session:
    """The relay's half of a session: its hello, the nonce answer checked, data sealed, replies opened.
    key None: plain KPG1 (the empty key). raw: the insecure mode, every datagram passes as it is."""

    def __init__(self, key, clock_ns=time.time_ns, random_bytes=os.urandom, raw=False):
        self.key = key
        self.raw = raw
        self.clock_ns = clock_ns
        self.random_bytes = random_bytes
        self.nonce = None
        self.client_nonce = None
        self.tx = 0          # the last counter this relay used
        self.rx = 0          # the last counter of a reply taken
        self.rejected = 0

    @property
    def keyed(self):
        return self.key is not None

    @property
    def mac_key(self):
        return self.key if self.key is not None else b""

    @property
    def ready(self):
        return self.raw or self.nonce is not None

    def hello(self):
        self.client_nonce = self.random_bytes(NONCE_BYTES)
        return MAGIC + b"h" + self.client_nonce

    def take_nonce(self, datagram):
        """Takes the kernel's answer to the last hello; Rejected when it is not that, MACed under the key."""
        if len(datagram) != NONCE_LEN or not datagram.startswith(MAGIC + b"n"):
            raise Rejected("not a nonce answer")
        body, got = datagram[:-MAC_BYTES], datagram[-MAC_BYTES:]
        if not hmac.compare_digest(mac(self.mac_key, body), got):
            raise Rejected("nonce answer with a bad MAC (another key?)")
        client = body[5:5 + NONCE_BYTES]
        if self.client_nonce is None or client != self.client_nonce:
            raise Rejected("nonce answer to another hello")
        nonce = body[5 + NONCE_BYTES:5 + 2 * NONCE_BYTES]
        rx_floor, tx_from = struct.unpack(">QQ", body[5 + 2 * NONCE_BYTES:])
        if rx_floor >= COUNTER_MAX:
            # Our session's floor at the top (a datagram with the last counter was acted on): nothing can rise
            # above it until the kernel ends that session (gdbstub/udp_auth.h).
            raise Rejected("this address's session takes no higher counter: it must end first (60 s idle)")
        if nonce != self.nonce or tx_from < self.rx:
            # A new session nonce: a new boot, or a new session of this one (the kernel forgot ours). Or --
            # should a boot's secret repeat -- a kernel whose replies so far number fewer than we took. Its
            # reply counters go on from tx_from; the last boot's must not make every reply look replayed.
            self.rx = tx_from
        else:
            self.rx = max(self.rx, tx_from)
        self.nonce = nonce
        self.tx = max(self.tx, rx_floor)
        return self.nonce

    def seal(self, inner):
        """The datagram that carries inner (gdb's bytes) to the kernel."""
        if self.raw:
            return bytes(inner)
        if self.nonce is None:
            raise RuntimeError("seal before the nonce")
        self.tx = max(self.tx + 1, self.clock_ns())
        body = MAGIC + b"d" + self.nonce + struct.pack(">Q", self.tx) + bytes(inner)
        return body + mac(self.mac_key, body)

    def datagrams(self, unit):
        """The datagrams that carry unit (an ack, a Ctrl-C, one packet) to the kernel. Sealed, the unit is cut so
        that each datagram, overhead included, is at most DATAGRAM_MAX bytes: a packet spans several, each
        under its own rising counter, in order; the stub's receive ring joins them and its packet layer reads a
        packet to its `#` and checksum whatever datagrams brought it (a lost or reordered piece fails the
        checksum: a nak, and the packet is sent again). Raw (the insecure mode) the unit goes whole, as gdb's
        own `target remote udp:` sends it: the stub reassembles an insecure peer's fragments, and a piece of
        binary data made only of `+` and `-` bytes would be dropped there as looking like a stub's reply."""
        if self.raw:
            return [bytes(unit)]
        return [self.seal(piece) for piece in cut(unit, DATAGRAM_MAX - OVERHEAD)]

    def open(self, datagram):
        """gdb's bytes in a datagram from the kernel; Rejected when it is forged, stale or replayed."""
        if self.raw:
            return bytes(datagram)
        if len(datagram) < OVERHEAD or not datagram.startswith(MAGIC + b"r"):
            raise Rejected("not a sealed reply")
        body, got = datagram[:-MAC_BYTES], datagram[-MAC_BYTES:]
        if self.nonce is None or body[5:5 + NONCE_BYTES] != self.nonce:
            raise Rejected("a reply in another session")
        if not hmac.compare_digest(mac(self.mac_key, body), got):
            raise Rejected("a reply with a bad MAC")
        counter = struct.unpack(">Q", body[5 + NONCE_BYTES:HEAD])[0]
        if counter <= self.rx:
            raise Rejected("a replayed reply (counter %d, last %d)" % (counter, self.rx))
        self.rx = counter
        return body[HEAD:]
