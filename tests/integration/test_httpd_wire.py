"""The pprof.http= server's TCP door seen on the wire (docs/http.md, "Who may connect"): two kernels, each on a
socket segment the test owns (tests/integration/forge.py), static 10.0.2.15, `pprof.http=6060` and an allowlist
naming one peer, 10.0.2.66; raw TCP segments forged from that peer and from a stranger, every frame the kernels
send captured and parsed.

- A SYN from the peer gets a SYN-ACK; eight SYNs from consecutive source ports get eight ISNs that are not in
  step (a counter's or a clock's would differ by small steps).
- The two boots answer the SAME eight 4-tuples with ISNs whose differences, port by port, scatter over the 32-bit
  space: with one secret for both boots they would differ by the clocks' offset alone, nearly one number.
- SYNs from the stranger (answering ARP, so any reply would really go out) get no frame at all back, not an ARP
  request for it, no SYN-ACK, no RST, and `net`'s `segments refused` counts each one -- to the server's port and
  to a port nothing listens on (where the peer is answered a RST).
- A blind forger's handshake (the ACK guessing the new ISN from the previous SYN-ACK's) completes nothing: no HTTP
  byte comes back and `accepted` does not move; the same exchange with the ISN the SYN-ACK really carried is
  answered (so the forged frames are right, and only the number stops them).

"Nothing came back" is bounded by order, not by a sleep: the network task takes frames in turn, so once a SYN
sent AFTER the probe has its SYN-ACK, the probe was handled; then a quiet second for anything in flight.
"""

import time

import pytest

import forge
from conftest import _new_kernel
from kprof_httpd import http_counts

# Kernels this module boots (conftest.py fails a boot past BOOTS), by the test that boots them -- a module kernel
# counts for the first test that uses it, a test named alone needs a fresh one:
# test_isns_of_consecutive_ports_are_not_in_step 2.
BOOTS = 2

KERNEL_IP = "10.0.2.15"
PEER_IP, PEER_MAC = "10.0.2.66", forge.mac_of("02:00:00:00:00:66")          # allowlisted, answers ARP
STRANGER_IP, STRANGER_MAC = "10.0.2.77", forge.mac_of("02:00:00:00:00:77")  # off the list, answers ARP
PORT = 6060
CMDLINE = "ip=%s/24 gw=10.0.2.2 pprof.http=%d udpsh.allow=%s/32" % (KERNEL_IP, PORT, PEER_IP)
TIMEOUT = 60.0  # generous: three sessions share two cores under TCG
MOD = 1 << 32
CLIENT_ISN = 0x1000  # the peer's own sequence numbers: any will do


class Wire:
    """One kernel and the segment it is on; TCP from forged addresses, answers found in the capture."""

    def __init__(self, request, name):
        self.segment = forge.Segment()
        self.segment.answers_arp.update({PEER_IP: PEER_MAC, STRANGER_IP: STRANGER_MAC})
        self.k = _new_kernel(request.node.name + "-" + name, smp=2, mem=256, cmdline=CMDLINE,
                             extra_args=self.segment.netdev_args())

    def send(self, sport, seq, ack, flags, payload=b"", src=(PEER_IP, PEER_MAC)):
        self.segment.inject(forge.tcp_frame(src[1], forge.GUEST_MAC, src[0], KERNEL_IP, sport, PORT, seq, ack, flags,
                                            payload))

    def wait_for(self, mark, want, what):
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            for f in self.segment.since(mark):
                if want(f):
                    return f
            time.sleep(0.02)
        raise AssertionError("no %s within %.0f s; the kernel sent %r" % (what, TIMEOUT, self.segment.since(mark)))

    def syn_ack(self, sport, mark=None):
        """Sends the peer's SYN from sport; returns the kernel's SYN-ACK (its seq is the ISN)."""
        mark = self.segment.mark() if mark is None else mark
        self.send(sport, CLIENT_ISN, 0, forge.TCP_SYN)
        f = self.wait_for(mark, lambda f: tcp_to(f, PEER_IP, sport) and f.tcp_flags & forge.TCP_SYN,
                          "SYN-ACK to port %d" % sport)
        assert f.tcp_flags & (forge.TCP_SYN | forge.TCP_ACK | forge.TCP_RST) == forge.TCP_SYN | forge.TCP_ACK, f
        assert f.ack == CLIENT_ISN + 1, f
        return f

    def reset(self, sport, seq=CLIENT_ISN + 1):
        """The peer's RST at the next sequence number it owes: the half-open connection goes (it would hold one
        of the listener's backlog of 4, and retransmit its SYN-ACK)."""
        self.send(sport, seq, 0, forge.TCP_RST)

    def isn(self, sport):
        f = self.syn_ack(sport)
        self.reset(sport)
        return f.seq

    def handled(self, mark, sport, quiet=1.0):
        """Returns once everything injected before now has been handled (a SYN sent now is answered, in turn);
        then the frames sent since mark, after `quiet` seconds without one (for what an ARP answer releases)."""
        self.isn(sport)
        self.segment.wait_quiet(quiet, timeout=TIMEOUT)
        return self.segment.since(mark)

    def close(self):
        self.k.kill()
        self.segment.close()


def tcp_to(f, ip, dport):
    return f.kind == "tcp" and f.dst == ip and f.sport == PORT and f.dport == dport


def near(d, limit):
    """d (mod 2^32) within limit of 0 in either direction."""
    d %= MOD
    return min(d, MOD - d) < limit


def spread(values):
    """The shortest arc of the 2^32 circle holding every value."""
    v = sorted(x % MOD for x in values)
    gaps = [b - a for a, b in zip(v, v[1:])] + [v[0] + MOD - v[-1]]
    return MOD - max(gaps)


@pytest.fixture(scope="module")
def wires(request):
    """Two boots of the same command line on two segments; each draws its own boot secret."""
    pair = [Wire(request, "a"), Wire(request, "b")]
    try:
        for w in pair:
            w.k.start()
        for w in pair:
            w.k.wait_ready()
            assert "httpd: pprof.http on TCP port %d" % PORT in w.k.boot_log, w.k.boot_log
        yield pair
    finally:
        for w in pair:
            w.close()


def test_isns_of_consecutive_ports_are_not_in_step(wires):
    """Eight SYNs from ports p..p+7 each get a SYN-ACK; the steps between consecutive ISNs are not all equal, and
    at most two of the seven fall within 2^20 of 0 either way (for unrelated numbers each does with odds 2^-11;
    a counter or the 4-microsecond clock alone would put all seven there)."""
    w = wires[0]
    isns = [w.isn(port) for port in range(41000, 41008)]
    steps = [(b - a) % MOD for a, b in zip(isns, isns[1:])]
    print("ISNs of ports 41000..41007:", " ".join("%08x" % x for x in isns))
    assert len(set(isns)) == 8, ["%08x" % x for x in isns]
    assert len(set(steps)) > 1, ["%08x" % x for x in isns]
    assert sum(near(d, 1 << 20) for d in steps) <= 2, ["%08x" % x for x in isns]


def test_two_boots_give_one_tuple_different_isns(wires):
    """The same eight 4-tuples asked of both boots, port by port and boot after boot. With one secret the ISNs
    would differ by 250000 x (the difference between the boots' clocks) alone: eight differences within the
    few hundred thousand that the time between a port's two SYNs adds -- well within an arc of 2^24 (67 s of
    that clock). Two secrets scatter them: eight unrelated 32-bit numbers fall in an arc of 2^24 with odds
    about 8 x 2^-56. And no tuple gets the same ISN from both."""
    a, b = wires
    pairs = []
    for port in range(42000, 42008):
        pairs.append((a.isn(port), b.isn(port)))
    diffs = [(x - y) % MOD for x, y in pairs]
    shown = ["%08x/%08x" % p for p in pairs]
    print("ISNs of ports 42000..42007, boot a/boot b:", " ".join(shown))
    assert all(d != 0 for d in diffs), shown
    assert spread(diffs) > 1 << 24, shown


def test_a_stranger_gets_nothing_and_is_counted(wires):
    """Three SYNs from an address off the allowlist (which answers ARP, so a reply would go out), and an ACK as
    if to finish a handshake: not one frame to it or about it -- no ARP request, no SYN-ACK, no RST -- and
    `segments refused` counts four; nothing is accepted. Then the peer's SYN is answered, so the kernel was
    listening all along."""
    w = wires[0]
    before = http_counts(w.k)
    mark = w.segment.mark()
    for port in (43000, 43001, 43002):
        w.send(port, CLIENT_ISN, 0, forge.TCP_SYN, src=(STRANGER_IP, STRANGER_MAC))
    w.send(43000, CLIENT_ISN + 1, 1, forge.TCP_ACK, src=(STRANGER_IP, STRANGER_MAC))
    frames = w.handled(mark, 43100, quiet=3.0)
    stranger = [f for f in frames if f.dst == STRANGER_IP or f.dst_mac == STRANGER_MAC]
    assert stranger == [], stranger
    after = http_counts(w.k)
    assert after["refused_segments"] - before["refused_segments"] == 4, (before, after)
    assert (after["accepted"], after["not_allowed"]) == (before["accepted"], before["not_allowed"]), (before, after)


def test_a_stranger_gets_nothing_from_a_closed_port_either(wires):
    """A SYN to a port nothing listens on: the peer is answered a RST, as TCP wants; the stranger gets nothing (no
    ARP request, no RST -- lwIP asks its TCP hook only when a pcb matches, so the door is at IPv4 input) and
    `segments refused` counts it."""
    w = wires[0]
    before = http_counts(w.k)
    mark = w.segment.mark()
    for port, src in ((43200, (STRANGER_IP, STRANGER_MAC)), (43201, (PEER_IP, PEER_MAC))):
        w.segment.inject(forge.tcp_frame(src[1], forge.GUEST_MAC, src[0], KERNEL_IP, port, PORT + 1, CLIENT_ISN, 0,
                                         forge.TCP_SYN))
    frames = w.handled(mark, 43300, quiet=3.0)
    rst = [f for f in frames if f.kind == "tcp" and f.dst == PEER_IP and f.sport == PORT + 1 and f.dport == 43201]
    assert len(rst) == 1 and rst[0].tcp_flags & forge.TCP_RST and rst[0].ack == CLIENT_ISN + 1, frames
    stranger = [f for f in frames if f.dst == STRANGER_IP or f.dst_mac == STRANGER_MAC]
    assert stranger == [], stranger
    after = http_counts(w.k)
    assert after["refused_segments"] - before["refused_segments"] == 1, (before, after)


GET = b"GET /debug/pprof/cmdline HTTP/1.1\r\nHost: 10.0.2.15\r\n\r\n"


def handshake_and_get(w, sport, ack):
    """The peer's third handshake segment acknowledging `ack` - 1 as the kernel's ISN, then a GET in the same
    breath, as a blind forger sends them; returns the capture's mark from before the ACK."""
    mark = w.segment.mark()
    w.send(sport, CLIENT_ISN + 1, ack, forge.TCP_ACK)
    w.send(sport, CLIENT_ISN + 1, ack, forge.TCP_ACK | forge.TCP_PSH, GET)
    return mark


def test_the_real_isn_completes_the_handshake(wires):
    """The control for the blind forger: the ACK carrying the ISN the SYN-ACK really had completes the handshake
    and the GET is answered, so the forged frames themselves are right."""
    w = wires[0]
    before = http_counts(w.k)
    f = w.syn_ack(44000)
    mark = handshake_and_get(w, 44000, f.seq + 1)
    answer = w.wait_for(mark, lambda f: tcp_to(f, PEER_IP, 44000) and f.payload, "HTTP answer")
    assert answer.payload.startswith(b"HTTP/1.1 200 "), answer.payload[:200]
    w.reset(44000, CLIENT_ISN + 1 + len(GET))
    assert http_counts(w.k)["accepted"] == before["accepted"] + 1


def test_a_blind_forger_completes_no_handshake(wires):
    """A forger who saw one SYN-ACK guesses the next connection's ISN from it (previous ISN + 1 as the ACK
    number, the guess that defeats a fixed or slow counter), for a new port: the handshake does not complete,
    no HTTP byte comes back, `accepted` does not move."""
    w = wires[0]
    before = http_counts(w.k)
    seen = w.isn(45000)
    mark = w.segment.mark()
    w.send(45001, CLIENT_ISN, 0, forge.TCP_SYN)   # its SYN-ACK goes to the address's owner: unseen
    handshake_and_get(w, 45001, seen + 1)
    frames = w.handled(mark, 45100)
    w.reset(45001)
    answered = [f for f in frames if tcp_to(f, PEER_IP, 45001) and f.payload]
    assert answered == [], answered
    after = http_counts(w.k)
    assert after["accepted"] == before["accepted"], (before, after)
    assert {k: v for k, v in after.items() if isinstance(k, int)} == \
           {k: v for k, v in before.items() if isinstance(k, int)}, (before, after)


def test_a_strangers_udp_to_a_closed_port_gets_nothing(wires):
    """UDP to a port nothing is bound to: the peer is answered an ICMP port unreachable, as IP wants; the stranger
    gets nothing -- no ARP request for it, no ICMP -- so a forged source address buys no reflection (the door is
    at IPv4 input: kernel/net/lwip/lwip_hooks.c)."""
    w = wires[0]
    mark = w.segment.mark()
    for sport, src in ((45000, (STRANGER_IP, STRANGER_MAC)), (45001, (PEER_IP, PEER_MAC))):
        w.segment.inject(forge.udp_frame(src[1], forge.GUEST_MAC, src[0], KERNEL_IP, sport, 9999, b"anyone there?"))
    frames = w.handled(mark, 45100, quiet=3.0)
    to_peer = [f for f in frames if f.dst == PEER_IP and f.kind in ("ip", "udp")]
    assert len(to_peer) == 1 and to_peer[0].kind == "ip", frames  # the ICMP port unreachable
    stranger = [f for f in frames if f.dst == STRANGER_IP or f.dst_mac == STRANGER_MAC]
    assert stranger == [], stranger
