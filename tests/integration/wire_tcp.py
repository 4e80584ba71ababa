"""A host TCP port whose connections reach a kernel on a socket segment (tests/integration/forge.py) as raw TCP
frames from an address on that segment: a real client (`go tool pprof`, curl) connects to 127.0.0.1:port, and
each of its connections is carried by a small TCP of our own -- handshake (the SYN sent again every second until
answered), the client's bytes sent and sent again until acknowledged, the kernel's bytes taken in order and
acknowledged, FINs both ways, a RST ends it. Enough TCP for one request and its answer on a lossless local
segment; no congestion control, a fixed window.

For a test that forges frames on the same segment the real client must reach the kernel there too: QEMU's user
network joined to the segment by a hub would see every frame and answer the forged connections' segments with
RSTs of its own.
"""

import random
import socket
import threading
import time

import forge

MOD = 1 << 32
CHUNK = 1400       # the most of the client's bytes one frame carries
RETRY_S = 1.0      # a SYN, data or FIN not answered this long is sent again
GIVE_UP_S = 60.0   # a connection that gets nowhere for this long is dropped


class WireRelay:
    """Listens on 127.0.0.1:port; carries each connection to kernel_ip:kernel_port as ip/mac on the segment
    (the segment must answer ARP for ip). close() stops it."""

    def __init__(self, segment, ip, mac, kernel_ip, kernel_port, first_port=30000):
        self.segment, self.ip, self.mac = segment, ip, mac
        self.kernel_ip, self.kernel_port = kernel_ip, kernel_port
        self.next_port = first_port
        self.conns = {}
        self.lock = threading.Lock()
        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(8)
        self.port = self.listener.getsockname()[1]
        segment.forward = self._frame
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                host, _ = self.listener.accept()
            except OSError:
                return
            with self.lock:
                sport = self.next_port
                self.next_port += 1
                conn = self.conns[sport] = WireConn(self, host, sport)
            threading.Thread(target=conn.run, daemon=True).start()

    def _frame(self, raw):
        f = forge.parse_frame(raw, time.monotonic())
        if f.kind != "tcp" or f.src != self.kernel_ip or f.dst != self.ip or f.sport != self.kernel_port:
            return
        with self.lock:
            conn = self.conns.get(f.dport)
        if conn:
            conn.arrived(f)

    def send(self, sport, seq, ack, flags, payload=b""):
        try:
            self.segment.inject(forge.tcp_frame(self.mac, forge.GUEST_MAC, self.ip, self.kernel_ip, sport,
                                                self.kernel_port, seq % MOD, ack % MOD, flags, payload))
        except OSError:
            pass  # the segment closed under a connection still going: the test is over

    def close(self):
        self.listener.close()


class WireConn:
    def __init__(self, relay, host, sport):
        self.relay, self.host, self.sport = relay, host, sport
        self.lock = threading.Lock()
        self.isn = random.randrange(MOD)
        self.snd_una = self.snd_nxt = (self.isn + 1) % MOD
        self.unacked = b""          # the client's bytes from snd_una on, not yet acknowledged
        self.rcv_nxt = None
        self.established = threading.Event()
        self.fin_sent = False       # our FIN (at snd_nxt - 1)
        self.fin_acked = False
        self.kernel_fin = False
        self.reset = False

    def _ack(self):
        self.relay.send(self.sport, self.snd_nxt, self.rcv_nxt, forge.TCP_ACK)

    def arrived(self, f):
        with self.lock:
            if f.tcp_flags & forge.TCP_RST:
                self.reset = True
                self.established.set()
                return
            if f.tcp_flags & forge.TCP_SYN:
                if f.ack == self.snd_una and self.rcv_nxt is None:
                    self.rcv_nxt = (f.seq + 1) % MOD
                if self.rcv_nxt is not None:
                    self._ack()  # a SYN-ACK sent again: our ACK was lost
                    self.established.set()
                return
            if self.rcv_nxt is None:
                return
            if f.tcp_flags & forge.TCP_ACK:
                acked = (f.ack - self.snd_una) % MOD
                if 0 < acked <= len(self.unacked) + (1 if self.fin_sent else 0):
                    self.fin_acked = self.fin_sent and acked == len(self.unacked) + 1
                    self.unacked = self.unacked[acked:]
                    self.snd_una = f.ack
            if f.payload and f.seq == self.rcv_nxt:
                try:
                    self.host.sendall(f.payload)
                except OSError:
                    pass
                self.rcv_nxt = (self.rcv_nxt + len(f.payload)) % MOD
            if f.tcp_flags & forge.TCP_FIN and (f.seq + len(f.payload)) % MOD == self.rcv_nxt:
                self.rcv_nxt = (self.rcv_nxt + 1) % MOD
                if not self.kernel_fin:
                    self.kernel_fin = True
                    try:
                        self.host.shutdown(socket.SHUT_WR)
                    except OSError:
                        pass
            if f.payload or f.tcp_flags & forge.TCP_FIN:
                self._ack()

    def run(self):
        try:
            self._run()
        finally:
            self.host.close()
            with self.relay.lock:
                self.relay.conns.pop(self.sport, None)

    def _run(self):
        deadline = time.monotonic() + GIVE_UP_S
        while True:
            self.relay.send(self.sport, self.isn, 0, forge.TCP_SYN)
            if self.established.wait(RETRY_S):
                break
            if time.monotonic() > deadline:
                return
        self.host.settimeout(0.2)
        last_sent = time.monotonic()
        host_open = True
        while not self.reset and time.monotonic() < deadline:
            data = None
            if host_open:
                try:
                    data = self.host.recv(CHUNK)
                except socket.timeout:
                    data = None
                except OSError:
                    data = b""
            else:
                time.sleep(0.05)
            with self.lock:
                if data:
                    self.relay.send(self.sport, self.snd_nxt, self.rcv_nxt, forge.TCP_ACK | forge.TCP_PSH, data)
                    self.unacked += data
                    self.snd_nxt = (self.snd_nxt + len(data)) % MOD
                    last_sent = time.monotonic()
                elif data == b"" and host_open:
                    host_open = False
                    self.relay.send(self.sport, self.snd_nxt, self.rcv_nxt, forge.TCP_FIN | forge.TCP_ACK)
                    self.fin_sent = True
                    self.snd_nxt = (self.snd_nxt + 1) % MOD
                    last_sent = time.monotonic()
                if self.fin_acked and self.kernel_fin:
                    return
                if time.monotonic() - last_sent > RETRY_S and (self.unacked or (self.fin_sent and not self.fin_acked)):
                    # everything from snd_una again, in CHUNKs, then the FIN if it is ours to send
                    seq = self.snd_una
                    for i in range(0, len(self.unacked), CHUNK):
                        piece = self.unacked[i:i + CHUNK]
                        self.relay.send(self.sport, seq, self.rcv_nxt, forge.TCP_ACK | forge.TCP_PSH, piece)
                        seq = (seq + len(piece)) % MOD
                    if self.fin_sent:
                        self.relay.send(self.sport, seq, self.rcv_nxt, forge.TCP_FIN | forge.TCP_ACK)
                    last_sent = time.monotonic()
