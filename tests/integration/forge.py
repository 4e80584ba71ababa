"""Raw Ethernet on a QEMU socket segment, for the tests that forge (test_udpsh_forged.py) and the bench.

QEMU's `-netdev socket,id=n0,udp=127.0.0.1:A,localaddr=127.0.0.1:B` carries raw frames as UDP datagrams on the
loopback: every frame the guest sends arrives at port A, and every datagram sent to port B enters the guest as a
frame (docs: /work/shared/QEMU-FACTS.md). A Segment binds A, so it sees every frame the kernel sends and can
count them; it injects frames built here (Ethernet II, IPv4, UDP or TCP, any source address and MAC); and it answers
the kernel's ARP requests for the addresses it is told to, so that a reply to a forged address really goes
out and can be counted -- or not, to see what an address nobody holds costs. All traffic stays on 127.0.0.1;
the 10.x addresses exist only inside the frames.

A Relay joins two kernels' segments (each frame one sends is delivered to the other, and counted), so two
kprof machines can talk as if on one wire.
"""

import socket
import struct
import threading
import time
from collections import namedtuple

BROADCAST = b"\xff" * 6
ETH_IPV4, ETH_ARP = 0x0800, 0x0806
IP_TCP, IP_UDP = 6, 17
TCP_FIN, TCP_SYN, TCP_RST, TCP_PSH, TCP_ACK = 0x01, 0x02, 0x04, 0x08, 0x10
GUEST_MAC = bytes.fromhex("525400123456")  # QEMU's first NIC


def mac_of(text):
    return bytes.fromhex(text.replace(":", ""))


def ip_bytes(text):
    return socket.inet_aton(text)


def ip_text(raw):
    return socket.inet_ntoa(raw)


def checksum(data):
    if len(data) % 2:
        data += b"\0"
    total = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def udp_datagram(src_ip, dst_ip, src_port, dst_port, payload, udp_checksum=True):
    """The UDP header and payload; udp_checksum False: the checksum field 0 ("none")."""
    udp_len = 8 + len(payload)
    pseudo = ip_bytes(src_ip) + ip_bytes(dst_ip) + struct.pack("!BBH", 0, 17, udp_len)
    udp = struct.pack("!HHHH", src_port, dst_port, udp_len, 0) + payload
    csum = (checksum(pseudo + udp) or 0xFFFF) if udp_checksum else 0
    return udp[:6] + struct.pack("!H", csum) + udp[8:]


def ipv4_frame(src_mac, dst_mac, src_ip, dst_ip, body, ident=0x1234, offset=0, more=False, proto=IP_UDP):
    """One Ethernet II frame holding an IPv4 header (protocol UDP unless told, checksum right) and body: a whole
    UDP datagram (or TCP segment), or the piece of one at byte offset (a multiple of 8) with `more` fragments to
    follow."""
    flags = (0x2000 if more else 0) | (offset // 8)
    header = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(body), ident, flags, 64, proto, 0, ip_bytes(src_ip),
                         ip_bytes(dst_ip))
    header = header[:10] + struct.pack("!H", checksum(header)) + header[12:]
    return dst_mac + src_mac + struct.pack("!H", ETH_IPV4) + header + body


def udp_frame(src_mac, dst_mac, src_ip, dst_ip, src_port, dst_port, payload, udp_checksum=True, ident=0x1234):
    """One Ethernet II frame holding an IPv4 UDP datagram, both checksums right (or the UDP one "none")."""
    udp = udp_datagram(src_ip, dst_ip, src_port, dst_port, payload, udp_checksum)
    return ipv4_frame(src_mac, dst_mac, src_ip, dst_ip, udp, ident)


def udp_fragments(src_mac, dst_mac, src_ip, dst_ip, src_port, dst_port, payload, ident, piece=1480):
    """The frames of one UDP datagram split by IPv4 fragmentation into pieces of `piece` bytes (a multiple of
    8) of the IPv4 payload, in order."""
    assert piece % 8 == 0
    udp = udp_datagram(src_ip, dst_ip, src_port, dst_port, payload)
    return [ipv4_frame(src_mac, dst_mac, src_ip, dst_ip, udp[at:at + piece], ident, at, at + piece < len(udp))
            for at in range(0, len(udp), piece)]


def tcp_frame(src_mac, dst_mac, src_ip, dst_ip, src_port, dst_port, seq, ack, flags, payload=b"", window=65535):
    """One Ethernet II frame holding an IPv4 TCP segment with no options (so a SYN asks for no MSS: the peer
    assumes 536), both checksums right; flags a sum of TCP_SYN, TCP_ACK, ..."""
    header = struct.pack("!HHIIBBHHH", src_port, dst_port, seq & 0xFFFFFFFF, ack & 0xFFFFFFFF, 5 << 4, flags,
                         window, 0, 0)
    pseudo = ip_bytes(src_ip) + ip_bytes(dst_ip) + struct.pack("!BBH", 0, IP_TCP, len(header) + len(payload))
    segment = header[:16] + struct.pack("!H", checksum(pseudo + header + payload)) + header[18:] + payload
    return ipv4_frame(src_mac, dst_mac, src_ip, dst_ip, segment, proto=IP_TCP)


def arp_frame(op, sender_mac, sender_ip, target_mac, target_ip, dst_mac):
    body = struct.pack("!HHBBH6s4s6s4s", 1, ETH_IPV4, 6, 4, op, sender_mac, ip_bytes(sender_ip), target_mac,
                       ip_bytes(target_ip))
    return dst_mac + sender_mac + struct.pack("!H", ETH_ARP) + body


# One frame as the kernel sent it: kind "arp" (op, sender ip, target ip), "udp" (addresses, ports, payload) or
# "tcp" (as udp, and seq, ack and tcp_flags), "ip" for other IPv4, "other"; frame_len the whole frame, ip_len the
# IPv4 datagram (0 for ARP); dst_mac the Ethernet destination.
Frame = namedtuple("Frame", "t kind frame_len ip_len src dst sport dport payload arp_op dst_mac seq ack tcp_flags")
Frame.__new__.__defaults__ = (None,) * 4


def parse_frame(frame, t=0.0):
    return parse_frame_body(frame, t)._replace(dst_mac=bytes(frame[:6]) if len(frame) >= 6 else None)


def parse_frame_body(frame, t):
    if len(frame) < 14:
        return Frame(t, "other", len(frame), 0, None, None, None, None, b"", None)
    ethertype = struct.unpack("!H", frame[12:14])[0]
    if ethertype == ETH_ARP and len(frame) >= 42:
        op = struct.unpack("!H", frame[20:22])[0]
        return Frame(t, "arp", len(frame), 0, ip_text(frame[28:32]), ip_text(frame[38:42]), None, None, frame[22:28],
                     op)
    if ethertype == ETH_IPV4 and len(frame) >= 34:
        ihl = (frame[14] & 15) * 4
        total = struct.unpack("!H", frame[16:18])[0]
        proto = frame[23]
        src, dst = ip_text(frame[26:30]), ip_text(frame[30:34])
        if proto == IP_UDP and len(frame) >= 14 + ihl + 8:
            u = 14 + ihl
            sport, dport, ulen = struct.unpack("!HHH", frame[u:u + 6])
            return Frame(t, "udp", len(frame), total, src, dst, sport, dport, frame[u + 8:u + ulen], None)
        if proto == IP_TCP and len(frame) >= 14 + ihl + 20:
            u = 14 + ihl
            sport, dport, seq, ack, offset, flags = struct.unpack("!HHIIBB", frame[u:u + 14])
            # the IPv4 total length, not the frame's: Ethernet pads short frames
            return Frame(t, "tcp", len(frame), total, src, dst, sport, dport, frame[u + (offset >> 4) * 4:14 + total],
                         None, None, seq, ack, flags)
        return Frame(t, "ip", len(frame), total, src, dst, None, None, b"", None)
    return Frame(t, "other", len(frame), 0, None, None, None, None, b"", None)


def free_udp_port():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Segment:
    """The host's end of one kernel's socket netdev: sees every frame it sends, injects frames, answers ARP for
    the addresses in `answers_arp` (ip text -> MAC bytes)."""

    def __init__(self):
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)
        self.sock.bind(("127.0.0.1", 0))
        self.capture_port = self.sock.getsockname()[1]  # A: the guest's frames arrive here
        self.inject_port = free_udp_port()               # B: QEMU listens here for frames into the guest
        self.frames = []
        self.answers_arp = {}
        self.forward = None  # a callable(frame bytes) that also gets every frame (a Relay)
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def netdev_args(self, mac=None):
        dev = "virtio-net-pci,netdev=n0" + (",mac=%s" % mac if mac else "")
        return ["-netdev", "socket,id=n0,udp=127.0.0.1:%d,localaddr=127.0.0.1:%d" % (self.capture_port,
                                                                                     self.inject_port),
                "-device", dev]

    def _run(self):
        while True:
            try:
                frame = self.sock.recv(65536)
            except OSError:
                return
            f = parse_frame(frame, time.monotonic())
            with self.lock:
                self.frames.append(f)
            if f.kind == "arp" and f.arp_op == 1 and f.dst in self.answers_arp:
                mac = self.answers_arp[f.dst]
                self.inject(arp_frame(2, mac, f.dst, f.payload, f.src, f.payload))
            if self.forward:
                self.forward(frame)

    def inject(self, frame):
        self.sock.sendto(frame, ("127.0.0.1", self.inject_port))

    def forge_udp(self, src_ip, src_port, dst_ip, dst_port, payload, src_mac, dst_mac=GUEST_MAC):
        """Injects one UDP datagram from src_ip:src_port (any address: nothing checks it); returns the frame."""
        frame = udp_frame(src_mac, dst_mac, src_ip, dst_ip, src_port, dst_port, payload)
        self.inject(frame)
        return frame

    def mark(self):
        with self.lock:
            return len(self.frames)

    def since(self, mark):
        with self.lock:
            return list(self.frames[mark:])

    def wait_announced(self, ip, timeout=30.0):
        """Waits for the kernel's one announcement of its address ip -- lwIP's gratuitous ARP (who-has ip, from
        ip) when its link comes up, about when the prompt does, and after it on a loaded host -- so that no
        test counts it among the frames its own request caused."""
        self.wait_until(0, lambda frames: any(f.kind == "arp" and f.arp_op == 1 and f.src == ip and f.dst == ip
                                              for f in frames), "announcement of %s" % ip, timeout)

    def wait_until(self, mark, done, what, timeout=30.0):
        """Waits until done(the frames since mark) holds -- for the answers a test knows are coming: a quiet
        window alone ends early when the host has not run QEMU for that long, and the answer then lands in the
        next step's frames -- or fails after timeout."""
        deadline = time.monotonic() + timeout
        while not done(self.since(mark)):
            if time.monotonic() > deadline:
                raise AssertionError("no %s within %.0f s: %s" % (what, timeout, self.since(mark)))
            time.sleep(0.05)

    def wait_for_ip(self, mark, ip, count, timeout=30.0):
        """wait_until `count` IP frames to ip have arrived since mark."""
        self.wait_until(mark, lambda frames: len([f for f in frames if f.kind in ("udp", "ip") and f.dst == ip])
                        >= count, "%d frames to %s" % (count, ip), timeout)

    def wait_quiet(self, quiet=1.0, timeout=30.0):
        """Returns once no frame has arrived for `quiet` seconds since the call or the last frame (a bounded
        wait for anything the kernel might still send), or fails after timeout."""
        start = time.monotonic()
        deadline = start + timeout
        while True:
            with self.lock:
                last = max(start, self.frames[-1].t if self.frames else 0.0)
            now = time.monotonic()
            if now - last >= quiet:
                return
            if now > deadline:
                raise AssertionError("the kernel kept sending for %.0f s" % timeout)
            time.sleep(min(0.1, quiet - (now - last)))  # the quiet window itself is the bound

    def close(self):
        self.sock.close()


def answering_segment(answers):
    """A module fixture's body (`yield from` it): a Segment that answers ARP for `answers` (ip text -> MAC
    bytes), closed when the fixture ends."""
    s = Segment()
    s.answers_arp.update(answers)
    yield s
    s.close()


class Flood:
    """`rate` forged frames a second into a segment's kernel, from a thread, for as long as its `with` lasts: the
    nth injected by send(segment, n), paced by the clock. Counts what it injected (sent)."""

    def __init__(self, segment, send, rate=1000):
        self.segment, self.send, self.rate, self.sent, self.stopping = segment, send, rate, 0, False
        self.thread = threading.Thread(target=self.run, daemon=True)

    def run(self):
        start = time.monotonic()
        while not self.stopping:
            due = int((time.monotonic() - start) * self.rate)
            while self.sent < due and not self.stopping:
                self.send(self.segment, self.sent)
                self.sent += 1
            time.sleep(0.005)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stopping = True
        self.thread.join(10)


class Relay:
    """Delivers each frame one segment's kernel sends into the other's (like one wire), counting them."""

    def __init__(self, a, b):
        self.a, self.b = a, b
        a.forward = b.inject
        b.forward = a.inject
