"""The debugger's frames under forgery (issue 24 items 1 and 5): `gdb.udp=1234` on a QEMU socket segment the test
owns (tests/integration/forge.py), raw gdb bytes forged from any address and MAC, every frame the kernel sends
seen.

- Replies go to the MAC the segment answers ARP with for the sender's address, never to the Ethernet source of
  the request.
- A datagram from the subnet's broadcast address, and one from a multicast Ethernet source, is not answered and
  stops nothing; `net` counts them as hostile sources.
- A datagram without a UDP checksum is not answered and stops nothing.
- A peer's `M` write split by IPv4 fragmentation reaches the stub whole although another allowlisted address
  sends fragments in the middle of it (one of its own datagram, one with the peer's IPv4 identification).
- A peer off the subnet (allowed by udpsh.allow=) is answered through the gateway: to the MAC the gateway's
  address has in ARP, not the request's Ethernet source.
- gdb's own `target remote udp:` over QEMU's user network still attaches: its user network answers the
  kernel's ARP question for the host's address; and a client's first packet, sent once and never again, gets
  its answer (the session's start waits for the ARP answer).

The kernel here is unkeyed and takes raw gdb bytes.
"""

import re
import subprocess
import time

import pytest

import forge
from kprof_qemu import ELF, boot_kernel, poll
from kprof_rsp import packet
from kprof_gdb import (UdpGdb, assert_running, boot_udp, counter, gdb_udp_line, received_until, threads,
                       udp_socket)

# Kernels this module boots (conftest.py fails a boot past BOOTS), by the test that boots them -- a module kernel
# counts for the first test that uses it, a test named alone needs a fresh one:
# test_a_first_packet_sent_once_is_answered_over_the_user_network 1,
# test_a_peer_off_the_subnet_is_answered_through_the_gateways_mac 1, test_gdb_attaches_over_the_user_network 1,
# test_replies_go_to_the_arp_answer_not_the_frames_source 1.
BOOTS = 4

KERNEL_IP, PORT = "10.0.2.15", 1234
PEER_IP, PEER_MAC = "10.0.2.66", forge.mac_of("02:00:00:00:00:66")       # answers ARP
OTHER_IP, OTHER_MAC = "10.0.2.67", forge.mac_of("02:00:00:00:00:67")     # allowlisted, answers ARP
GROUP_IP = "10.0.2.68"                                                     # answers ARP, sends from a group MAC
GROUP_MAC = forge.mac_of("01:00:5e:00:00:44")
SUBNET_BROADCAST = "10.0.2.255"
STEERED_MAC = forge.mac_of("02:00:00:00:00:bb")   # the Ethernet source forged on the peer's requests
GATEWAY_IP, GATEWAY_MAC = "10.0.2.2", forge.mac_of("02:00:00:00:00:02")   # answers ARP
FAR_IP = "192.168.7.9"                                                      # off the subnet
PEER_PORT = 40000
WAIT = 30.0


@pytest.fixture(scope="module")
def segment():
    yield from forge.answering_segment({PEER_IP: PEER_MAC, OTHER_IP: OTHER_MAC,
                                        GROUP_IP: forge.mac_of("02:00:00:00:00:68")})


@pytest.fixture(scope="module")
def kernel(request, segment):
    k = None
    try:
        k = boot_on(segment, request)
        yield k
    finally:
        if k:
            k.kill()


def frames_line(k):
    m = re.search(r"(?m)^gdb frames: .*$", k.cmd("net"))
    assert m, "net has no gdb frames line"
    return m.group(0)


def boot_on(segment, request, cmdline=""):
    # gdb.udp.insecure: these tests drive the port with gdb's raw bytes (the frames' rules hold in every mode)
    return boot_kernel("ip=%s/24 gw=%s gdb.udp=%d gdb.udp.insecure" % (KERNEL_IP, GATEWAY_IP, PORT), cmdline, smp=2,
                       mem=256, extra_args=segment.netdev_args(), name=request.node.name + "-frames")


def replies(segment, mark, ip):
    """The UDP frames the kernel sent to ip since mark."""
    return [f for f in segment.since(mark) if f.kind == "udp" and f.dst == ip and f.sport == PORT]


def forge_gdb(segment, payload, src_ip=PEER_IP, src_mac=STEERED_MAC, **kw):
    segment.inject(forge.udp_frame(src_mac, forge.GUEST_MAC, src_ip, KERNEL_IP, PEER_PORT, PORT, payload, **kw))


def exchange(segment, send, want, what, peer=PEER_IP):
    """Calls send() (as gdb retransmits: every 2 s) until the joined payloads the peer got since the first
    call match the pattern want; returns (the match, the frames)."""
    mark = segment.mark()
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        send()
        until = time.monotonic() + 2.0
        while time.monotonic() < until:
            got = replies(segment, mark, peer)
            m = re.search(want, b"".join(f.payload for f in got))
            if m:
                return m, got
            time.sleep(0.05)
    raise AssertionError("no %s within %.0f s" % (what, WAIT))


def attach(segment):
    return exchange(segment, lambda: forge_gdb(segment, packet("?")), rb"\$[ST]05", "stop reply")


def detach(segment, k):
    forge_gdb(segment, b"+")
    exchange(segment, lambda: forge_gdb(segment, packet("D")), rb"\$OK#9a", "OK to D")
    forge_gdb(segment, b"+")  # as gdb acks it: the stub waits for that
    poll("the machine running again", lambda: k.cmd("uptime").startswith("up "), timeout=WAIT)
    assert_running(k)


def assert_unanswered(segment, k, send, ip):
    mark = segment.mark()
    send()
    segment.wait_quiet(2.0)
    assert replies(segment, mark, ip) == [], "the kernel answered"
    assert_running(k)


def test_replies_go_to_the_arp_answer_not_the_frames_source(segment, kernel):
    _, got = attach(segment)
    try:
        assert got
        assert {f.dst_mac for f in got} == {PEER_MAC}, [f.dst_mac.hex() for f in got]
    finally:
        detach(segment, kernel)
    line = frames_line(kernel)
    assert counter(line, "neighbours") >= 1 and counter(line, "arp requests sent") >= 1, line


def test_broadcast_and_multicast_sources_are_not_answered(segment, kernel):
    before = counter(frames_line(kernel), "hostile source")
    assert_unanswered(segment, kernel, lambda: forge_gdb(segment, packet("?"), src_ip=SUBNET_BROADCAST),
                      SUBNET_BROADCAST)
    assert_unanswered(segment, kernel, lambda: forge_gdb(segment, packet("?"), src_ip=GROUP_IP, src_mac=GROUP_MAC),
                      GROUP_IP)
    line = frames_line(kernel)
    assert counter(line, "hostile source") == before + 2, line
    assert "no peer" in kernel.cmd("net")


def test_a_datagram_without_a_udp_checksum_is_not_answered(segment, kernel):
    before = counter(frames_line(kernel), "bad checksum")
    assert_unanswered(segment, kernel, lambda: forge_gdb(segment, packet("?"), udp_checksum=False), PEER_IP)
    assert counter(frames_line(kernel), "bad checksum") == before + 1
    assert "no peer" in kernel.cmd("net")


def bss_start():
    out = subprocess.run(["nm", ELF], check=True, capture_output=True, text=True).stdout
    return int(re.search(r"(?m)^([0-9a-f]+) \w __bss_start$", out).group(1), 16)


def test_another_senders_fragments_do_not_break_the_peers(segment, kernel):
    addr, size = bss_start(), 1200
    attach(segment)
    try:
        forge_gdb(segment, b"+")
        # Read in halves, so that each answer fits one frame (the segment does not reassemble).
        hexes = b""
        for at in (addr, addr + size // 2):
            read = "m%x,%x" % (at, size // 2)
            m, _ = exchange(segment, lambda: forge_gdb(segment, packet(read)), rb"\$([0-9a-f]{%d})#" % size,
                            "memory read")
            hexes += m.group(1)
            forge_gdb(segment, b"+")
        # The same bytes written back (the machine is stopped: nothing changes them), in three fragments.
        write = packet(b"M%x,%x:" % (addr, size) + hexes)
        ident = [0x5100]

        def send_write():
            ident[0] += 1
            mine = forge.udp_fragments(STEERED_MAC, forge.GUEST_MAC, PEER_IP, KERNEL_IP, PEER_PORT, PORT, write,
                                       ident[0], piece=1000)
            assert len(mine) == 3
            theirs = forge.udp_fragments(OTHER_MAC, forge.GUEST_MAC, OTHER_IP, KERNEL_IP, PEER_PORT, PORT,
                                         b"$" + b"x" * 2500, ident[0] + 0x100, piece=1000)
            segment.inject(mine[0])
            segment.inject(theirs[0])          # a datagram of its own: once, the newest replaced the peer's
            segment.inject(forge.ipv4_frame(OTHER_MAC, forge.GUEST_MAC, OTHER_IP, KERNEL_IP, b"y" * 1000,
                                            ident[0], 1000, True))  # the peer's identification, from elsewhere
            segment.inject(mine[1])
            segment.inject(mine[2])

        exchange(segment, send_write, rb"\$OK#9a", "OK to the fragmented M")
        forge_gdb(segment, b"+")
    finally:
        detach(segment, kernel)
    line = frames_line(kernel)
    assert counter(line, "not admitted") >= 2 and counter(line, "reassembled") >= 1, line


def test_a_peer_off_the_subnet_is_answered_through_the_gateways_mac(request):
    s = forge.Segment()
    s.answers_arp.update({GATEWAY_IP: GATEWAY_MAC, FAR_IP: forge.mac_of("02:00:00:00:00:99")})
    k = None
    try:
        k = boot_on(s, request, "udpsh.allow=%s" % FAR_IP)
        _, got = exchange(s, lambda: forge_gdb(s, packet("?"), src_ip=FAR_IP), rb"\$[ST]05", "stop reply",
                          peer=FAR_IP)
        assert {f.dst_mac for f in got} == {GATEWAY_MAC}, [f.dst_mac.hex() for f in got]
        asked = [f for f in s.since(0) if f.kind == "arp" and f.arp_op == 1 and f.src == KERNEL_IP]
        assert FAR_IP not in {f.dst for f in asked}, "the kernel asked ARP for an address off its subnet"
        forge_gdb(s, b"+", src_ip=FAR_IP)
        exchange(s, lambda: forge_gdb(s, packet("D"), src_ip=FAR_IP), rb"\$OK#9a", "OK to D", peer=FAR_IP)
        forge_gdb(s, b"+", src_ip=FAR_IP)
        poll("the machine running again", lambda: k.cmd("uptime").startswith("up "), timeout=WAIT)
    finally:
        if k:
            k.kill()
        s.close()


def test_gdb_attaches_over_the_user_network(kprof_factory):
    k = boot_udp(kprof_factory, smp=2)
    text = UdpGdb(k, ["info threads", "detach"]).finish()
    assert len(threads(text)) == 2 and "detached" in text, text
    assert_running(k)
    line = gdb_udp_line(k) + frames_line(k)
    assert counter(line, "neighbours") >= 1 and "no peer" in line, line


def test_a_first_packet_sent_once_is_answered_over_the_user_network(kprof_factory):
    k = boot_udp(kprof_factory, smp=2)
    s = udp_socket()
    s.sendto(packet("?"), ("127.0.0.1", k.gdb_udp_port))  # once: like a client that never retransmits
    got = received_until(s, rb"\$[ST]05", WAIT, "stop reply to the one packet")
    assert got.startswith(b"+"), got
    s.sendto(b"+", ("127.0.0.1", k.gdb_udp_port))
    s.sendto(packet("D"), ("127.0.0.1", k.gdb_udp_port))
    received_until(s, rb"\$OK#9a", WAIT, "OK to D")
    s.sendto(b"+", ("127.0.0.1", k.gdb_udp_port))
    poll("the machine running again", lambda: k.cmd("uptime").startswith("up "), timeout=WAIT)
    assert "no peer" in gdb_udp_line(k)
