"""scripts/netload sink on the host, against datagrams sent to it from this test: what it counts, and the line it
adds when its own socket's receive queue overflowed (the host kernel's drop count for that socket). The sink is
stopped (SIGSTOP) while a burst larger than its queue arrives, so the overflow is certain and its size is a count:
every datagram sent is either counted or dropped at the socket, none is anywhere else."""

import os
import signal
import socket
import subprocess
import sys
import time

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(TOP, "scripts"))
import kprof_wire  # noqa: E402

NETLOAD = os.path.join(TOP, "scripts", "netload")
SIZE = 1472


def free_udp_port():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def bound(port):
    """True once something has bound UDP port on this host (its row in /proc/net/udp)."""
    with open("/proc/net/udp") as f:
        next(f)
        return any(int(line.split()[1].split(":")[1], 16) == port for line in f)


def run_sink(datagrams, stopped):
    """Starts a sink, sends it `datagrams` (sequence numbers 0..datagrams-1) while it is stopped or running, lets
    it finish, and returns its output."""
    port = free_udp_port()
    sink = subprocess.Popen([NETLOAD, "sink", str(port), "60"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    try:
        deadline = time.monotonic() + 10
        while not bound(port):
            assert sink.poll() is None and time.monotonic() < deadline, "the sink never bound %d" % port
            time.sleep(0.01)
        if stopped:
            sink.send_signal(signal.SIGSTOP)
        tx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        tx.connect(("127.0.0.1", port))
        buf = bytearray(kprof_wire.netload_encode(0, 0, SIZE))
        for seq in range(datagrams):
            kprof_wire.netload_stamp(buf, seq, time.monotonic_ns())
            tx.send(buf)
        tx.close()
        if stopped:
            sink.send_signal(signal.SIGCONT)
        sink.send_signal(signal.SIGUSR1)
        out, err = sink.communicate(timeout=30)
    finally:
        if sink.poll() is None:
            sink.kill()
            sink.wait()
    assert sink.returncode == 0 and err == "", (sink.returncode, err)
    return out


def test_a_sink_that_keeps_up_reports_one_line():
    out = run_sink(50, stopped=False)
    lines = out.rstrip("\n").split("\n")
    assert len(lines) == 1, out
    rx = kprof_wire.parse_rx_report(out)
    assert (rx["packets"], rx["lost"], rx["socket_drops"]) == (50, 0, 0), out


def test_a_stopped_sink_names_what_its_full_socket_dropped():
    # 20000 datagrams of 1472 bytes are about 45 MiB of socket memory; the sink asks for a 4 MiB queue
    sent = 20000
    out = run_sink(sent, stopped=True)
    lines = out.rstrip("\n").split("\n")
    assert len(lines) == 2 and lines[1].startswith("host socket dropped "), out
    rx = kprof_wire.parse_rx_report(out)
    assert rx["socket_drops"] > 0 and rx["packets"] > 0, out
    # every datagram was counted or dropped at the socket; the drops were the tail, after the queue filled
    assert rx["packets"] + rx["socket_drops"] == sent, out
    assert rx["lost"] == 0 and rx["out_of_order"] == 0, out
