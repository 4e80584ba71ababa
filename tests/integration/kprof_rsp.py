"""The gdb remote serial protocol's framing, for the integration tests that speak it byte by byte.

Owns checksum() and packet(): a packet is `$payload#cc`, cc the payload's byte sum modulo 256 in two hex digits.
tests/integration/test_gdb.py (COM2), test_gdb_safety.py, test_gdb_forged.py, test_gdb_relay.py, test_gdb_udp.py
and test_gdb_frames.py build their packets with these. Also Rsp, a client of COM2's TCP socket that speaks the
protocol as gdb does (acks, resends on '-', stop replies, monitor commands), with STOP_WAIT, the time a stop
reply may take; test_gdb_safety.py and test_nmi.py drive the stub with it.
"""

import collections
import re
import select
import socket
import time

from kprof_qemu import KprofError

STOP_WAIT = 20.0  # a stop reply after Ctrl-C or a step, under TCG on a loaded machine


def checksum(payload):
    """The two hex digits that end a packet of payload (bytes)."""
    return "%02x" % (sum(payload) & 0xFF)


def packet(payload):
    """payload (str or bytes) framed as one packet: b"$" + payload + b"#" + its checksum."""
    if isinstance(payload, str):
        payload = payload.encode()
    return b"$" + payload + b"#" + checksum(payload).encode()


class Rsp:
    """The remote protocol over COM2's TCP socket, as gdb speaks it (ack mode)."""

    def __init__(self, port):
        self.s = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.buf = b""
        self.naks = 0
        self.t0 = time.monotonic()
        self.log = collections.deque(maxlen=40)    # the last packets each way, for a failure's message

    def _note(self, way, what):
        self.log.append("%8.3f %s %r" % (time.monotonic() - self.t0, way, what[:60]))

    def transcript(self):
        return "\n".join(self.log)

    def _fill(self, deadline, what):
        left = deadline - time.monotonic()
        if left <= 0:
            raise KprofError("COM2: no %s in time; last bytes %r" % (what, self.buf[-200:]))
        r, _, _ = select.select([self.s], [], [], left)
        if r:
            data = self.s.recv(65536)
            if not data:
                raise KprofError("COM2 closed waiting for %s" % what)
            self.buf += data

    def _packet(self, deadline, what):
        """The next $...#cs the stub sends (acks skipped), acknowledged."""
        while True:
            m = re.search(rb"\$([^#$]*)#([0-9a-f]{2})", self.buf)
            if m:
                self.buf = self.buf[m.end():]
                self._note("<-", m.group(1))
                assert checksum(m.group(1)) == m.group(2).decode(), "bad checksum on %r" % m.group(0)
                self.s.sendall(b"+")
                return m.group(1)
            self._fill(deadline, what)

    def _packet_or_nak(self, deadline, what):
        """As _packet, or None when the stub's next byte is '-' (it asks for the packet again, as gdb resends)."""
        while True:
            at = 0
            while at < len(self.buf) and self.buf[at:at + 1] == b"+":
                at += 1
            if self.buf[at:at + 1] == b"-":
                self.buf = self.buf[at + 1:]
                return None
            if re.search(rb"\$([^#$]*)#([0-9a-f]{2})", self.buf[at:]):
                return self._packet(deadline, what)
            self._fill(deadline, what)

    def request(self, payload, timeout=STOP_WAIT):
        """Sends a packet and returns the reply's payload, `O` output packets (monitor text) joined in front.
        A '-' from the stub (a byte of the packet lost on the way, which COM2 does now and then under a loaded
        host) sends it again, as gdb does; such resends are counted in self.naks."""
        raw = packet(payload)
        self._note("->", payload)
        self.s.sendall(raw)
        deadline = time.monotonic() + timeout
        out = b""
        while True:
            reply = self._packet_or_nak(deadline, "reply to %r" % payload[:40])
            if reply is None:
                self.naks += 1
                self.s.sendall(raw)
                continue
            if reply.startswith(b"O") and reply != b"OK" and payload.startswith("qRcmd"):
                out += bytes.fromhex(reply[1:].decode())
                continue
            return out + reply if out else reply

    def resume(self, payload):
        """A packet after which the stub owes a stop reply: only its ack comes now."""
        self._note("->", payload)
        self.s.sendall(packet(payload))
        deadline = time.monotonic() + STOP_WAIT
        while b"+" not in self.buf:
            self._fill(deadline, "ack of %r" % payload)
        self.buf = self.buf[self.buf.index(b"+") + 1:]

    def stop_reply(self, timeout=STOP_WAIT):
        reply = self._packet(time.monotonic() + timeout, "stop reply")
        m = re.match(rb"T([0-9a-f]{2})thread:([0-9a-f]+);", reply)
        assert m, "not a stop reply: %r" % reply
        return int(m.group(1), 16), int(m.group(2), 16)

    def stop_reply_within(self, timeout):
        """A stop reply if one comes within timeout, else None (the machine still runs)."""
        try:
            return self.stop_reply(timeout)
        except KprofError:
            return None

    def pending_bytes(self, wait=1.0):
        """What the stub sent that nothing read yet, after up to `wait` seconds more."""
        try:
            self._fill(time.monotonic() + wait, "anything")
        except KprofError:
            pass
        return self.buf[-200:]

    def interrupt(self):
        self._note("->", "^C")
        self.s.sendall(b"\x03")
        return self.stop_reply()

    def monitor(self, line):
        return self.request("qRcmd," + line.encode().hex()).decode("latin-1")

    def close(self):
        self.s.close()
