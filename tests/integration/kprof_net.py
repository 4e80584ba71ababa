"""The `net` command and the network's DHCP address, for the integration tests, tests/soak and tests/bench.

Owns: the addresses of QEMU's user network (DHCP_ADDRESS, HOST_INSIDE), `net`'s lines (NET_LINES, WEAK_SECRET;
parse_net, net_status), the DHCP wait (DHCP_LOGGED, wait_dhcp: the kernel's own log line, no command polled
meanwhile, then one `net` to confirm) and booted_with_dhcp for module fixtures. Also the host's side of the UDP
shell (UDPSH; udpsh, run_udpsh, udp_cmd, UdpShell; exchange, token_for, drain_late_tokens, start_request for raw
datagrams, TOKENED_PREFIX/TOKENED_MAX) and of netload (NETLOAD; host_netload, start_host_sink, finish_host_sink,
kernel_send_to_host_sink, and the two judged with the host's part told apart: host_send_into_kernel_sink,
judge_kernel_send; udp_port_bound, RX_TX_LINE/RX_RX_LINE) and a console command left running
(start_console, console_command). tests/integration/test_net.py tests the network with these.
"""

import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
import time

from kprof_qemu import TOP, HostStarved, KprofError, free_port, poll

SCRIPTS = os.path.join(TOP, "scripts")
sys.path.insert(0, SCRIPTS)
import kprof_wire as wire  # noqa: E402

UDPSH = os.path.join(SCRIPTS, "udpsh")
NETLOAD = os.path.join(SCRIPTS, "netload")

DHCP_ADDRESS = "10.0.2.15"
HOST_INSIDE = "10.0.2.2"   # the host as the guest sees it under QEMU's user network


# ---- the `net` command -------------------------------------------------------------------------------------
NET_LINES = [
    ("iface", re.compile(r"eth0: mac (?P<mac>[0-9a-f]{2}(?::[0-9a-f]{2}){5}), address "
                         r"(?P<address>\d+\.\d+\.\d+\.\d+)/(?P<prefix>\d+) \((?P<how>dhcp|static)\)")),
    ("card", re.compile(r"card: (?P<driver>[a-z0-9-]+) (?P<pci_id>[0-9a-f]{4}:[0-9a-f]{4}) at "
                        r"(?P<pci_at>[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]), link (?P<link>up|down), "
                        r"(?P<interrupts>\d+) interrupts(?: by (?P<interrupt_by>MSI(?:-X)? vector 0x[0-9a-f]+|"
                        r"irq \d+ pin [A-D]))?")),
    ("rx", re.compile(r"rx: (?P<rx_packets>\d+) packets, (?P<rx_bytes>\d+) bytes, (?P<rx_errors>\d+) errors, "
                      r"(?P<rx_dropped>\d+) dropped")),
    ("tx", re.compile(r"tx: (?P<tx_packets>\d+) packets, (?P<tx_bytes>\d+) bytes, (?P<tx_errors>\d+) errors, "
                      r"(?P<tx_ring_full>\d+) ring full")),
    ("udp", re.compile(r"udp: (?P<udp_in>\d+) in, (?P<udp_out>\d+) out, (?P<udp_failed>\d+) send failures")),
    ("queue", re.compile(r"queue: (?P<queue_waits>\d+) waits for room, (?P<queue_wait_ms>\d+) ms waited; "
                         r"(?P<tx_passes>\d+) passes sent (?P<tx_sent>\d+) datagrams in (?P<tx_us>\d+) us")),
    ("lwip", re.compile(r"lwip: heap used (?P<lwip_heap>\d+) of (?P<lwip_heap_total>\d+) bytes, pbufs in use "
                        r"(?P<pbufs>\d+) of (?P<pbufs_total>\d+)")),
    ("udpsh", re.compile(r"udpsh: port (?P<port>\d+), (?P<requests>\d+) requests, (?P<busy>\d+) busy, "
                         r"(?P<refused>\d+) refused, (?P<not_allowed>\d+) not allowed, "
                         r"(?:(?P<over_rate>\d+) over (?P<rate>\d+)/s|no rate limit)")),
    ("udpsh auth", re.compile(r"udpsh auth: (?P<key>keyed|unkeyed|refusing all \(bad udpsh\.key\)), (?P<tokens>\d+) "
                              r"tokens sent, (?P<over_budget>\d+) over budget, (?P<replies_ignored>\d+) replies "
                              r"ignored, (?P<no_mac>\d+) no mac, (?P<bad_mac>\d+) bad mac, (?P<replayed>\d+) "
                              r"replayed, (?P<senders_full>\d+) senders full, (?P<needs_key>\d+) need a key")),
    ("udpsh door", re.compile(r"udpsh door: (?P<unvalidated_limited>\d+) unvalidated over \d+/s, "
                              r"(?P<key_refused>\d+) key refused, (?P<repeats>\d+) repeats answered, "
                              r"(?P<repeats_running>\d+) repeats while running, (?P<repeats_lost>\d+) repeats too "
                              r"long to keep, (?P<token_stops>\d+) token expiry stops")),
    # The pprof.http= server's line (docs/http.md): "http: off" on these kernels; test_httpd.py reads it whole.
    ("http", re.compile(r"http: (?P<http>off|port \d+, .*)")),
]


# When keyed under a weak boot secret (no RDRAND/RDSEED), one more line says so (kernel/net/boot_secret.h).
WEAK_SECRET = re.compile(r"secret: keyed, but the boot secret is weak \((?P<weak_why>[^)]*)\)")


def parse_net(out):
    """`net`'s lines, each matched whole, as one dict (numbers as ints); the weak-secret line when it is there."""
    lines = out.split("\n")
    got = {"weak_why": None}
    secret = [line for line in lines if line.startswith("secret: ")]
    if secret:
        lines.remove(secret[0])
        m = WEAK_SECRET.fullmatch(secret[0])
        if not m:
            raise KprofError("net's secret line is not in its form:\n%s" % out)
        got["weak_why"] = m.group("weak_why")
    if len(lines) != len(NET_LINES):
        raise KprofError("net printed %d lines, want %d:\n%s" % (len(lines), len(NET_LINES), out))
    for line, (what, rx) in zip(lines, NET_LINES):
        m = rx.fullmatch(line)
        if not m:
            raise KprofError("net's %s line %r is not in its form:\n%s" % (what, line, out))
        for key, value in m.groupdict().items():
            got[key] = int(value) if value and value.isdigit() else value
    return got


def net_status(k):
    return parse_net(k.cmd("net"))


# The line kernel/net/net.c logs when the address is set: for DHCP whenever the lease comes, before or after ready:.
DHCP_LOGGED = re.compile(r"(?m)^net: address %s/24 gateway \S+ \(dhcp\)\n" % re.escape(DHCP_ADDRESS))


def wait_dhcp(k, timeout=30):
    """Waits for the DHCP address by reading the console for the kernel's log line, running no command
    meanwhile: a `net` polled while DHCP runs could have that line land in the middle of its output. Then one
    `net` confirms the address."""
    # in the boot log, between `ready:` and the first prompt, or since
    seen = DHCP_LOGGED.search(getattr(k, "boot_log_and_after", k.boot_log or "")) or \
        any(DHCP_LOGGED.search(u) for u in k.unsolicited)
    if not seen:
        m = k.expect(DHCP_LOGGED, timeout, what="the log line of the DHCP address %s/24" % DHCP_ADDRESS)
        k.unsolicited.append(m.before + m.group(0))  # printed while no command ran, as cmd() would keep it
    # only net's eth0 line is judged: a kernel with more services (gdb.udp=, pprof.http=) prints more lines
    out = k.cmd("net")
    iface = [m for m in (dict(NET_LINES)["iface"].fullmatch(line) for line in out.split("\n")) if m]
    assert len(iface) == 1, "net after the DHCP log line has no eth0 line in its form:\n%s" % out
    n = iface[0].groupdict()
    assert n["address"] == DHCP_ADDRESS and n["how"] == "dhcp", "net after the DHCP log line: %s" % out


def booted_with_dhcp(k):
    """A generator for module fixtures: boots k, waits for its DHCP address (which DHCP logs after ready:, so a
    command before it could have that line land in its output), yields k and kills it afterwards."""
    try:
        k.boot()
        wait_dhcp(k)
        yield k
    finally:
        k.kill()


# ---- talking to the UDP shell --------------------------------------------------------------------------------
def udpsh(port, *words, timeout=10.0):
    """scripts/udpsh -t timeout -p port 127.0.0.1 words...; the CompletedProcess (stdout bytes, stderr text)."""
    argv = [UDPSH, "-t", "%g" % timeout, "-p", str(port), "127.0.0.1"] + list(words)
    r = subprocess.run(argv, capture_output=True, timeout=timeout + 30)
    r.stderr = r.stderr.decode("utf-8", "replace")
    return r


def udp_cmd(port, line, timeout=10.0):
    """One command over UDP through scripts/udpsh that must succeed; its text without the last newline (as
    Kprof.cmd returns console output)."""
    r = udpsh(port, *line.split(), timeout=timeout)
    assert r.returncode == 0 and r.stderr == "", "scripts/udpsh %r exited %d: %s\n%r" \
        % (line, r.returncode, r.stderr, r.stdout[-2000:])
    text = r.stdout.decode("ascii")
    assert text.endswith("\n"), "the reply to %r does not end with a newline: %r" % (line, text[-200:])
    return text[:-1]


def run_udpsh(port, *words, env_key=None, key_file=None, timeout=10.0):
    """As udpsh(), with the key only as given: env_key (else no KPROF_UDPSH_KEY in its environment) or key_file."""
    env = {k: v for k, v in os.environ.items() if k != wire.KEY_ENV}
    if env_key is not None:
        env[wire.KEY_ENV] = env_key
    argv = [UDPSH, "-t", "%g" % timeout, "-p", str(port)] + (["--key-file", key_file] if key_file else []) + \
        ["127.0.0.1"] + list(words)
    r = subprocess.run(argv, capture_output=True, timeout=timeout + 30, env=env)
    r.stderr = r.stderr.decode("utf-8", "replace")
    return r


class UdpShell:
    """A kernel's shell as seen over UDP, for helpers that take something with cmd() (cpus_table, unstarved)
    while the console is busy."""

    def __init__(self, port):
        self.port = port

    def cmd(self, line, timeout=10.0):
        return udp_cmd(self.port, line, timeout)


def exchange(port, data, timeout=10.0, sock=None, key=None):
    """Sends one raw datagram from a fresh socket (or sock) -- with the token round trip first, as any client
    does (kprof_wire.exchange) -- and collects the reply: a kprof_wire.Reply, complete, refused, or whatever
    arrived before the deadline. data None: only collects (the request went out before). key: keyed requests,
    for a kernel booted with udpsh.key=."""
    own = sock is None
    if own:
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        sock.connect(("127.0.0.1", port))
    try:
        if data is not None:
            return wire.exchange(sock, data, timeout, key=key)
        return wire.receive_reply(sock, timeout)
    finally:
        if own:
            sock.close()


# The largest request a client can send once the token is in front of it: a UDP datagram holds 65507 bytes.
# (the clients put a request id after the token: the wall clock in ns, 19 digits)
TOKENED_PREFIX = len(b"token=%s id=%d " % (b"0" * 32, time.time_ns()))
TOKENED_MAX = 65507 - TOKENED_PREFIX


TOKEN_ASKS = 3


def token_for(sock, timeout=5.0):
    """Asks the kernel for sock's token (an empty datagram earns one); the token (bytes). As any UDP client
    must, it asks again when no answer comes: a token reply can be lost on the way like any datagram (the soak
    saw one lost while the kernel's own `netload send` flooded QEMU's user network), up to TOKEN_ASKS times,
    timeout/2 each. An answer to an earlier ask that arrives after a later one's is the same token, and is
    drained here so that it cannot be read as the answer to the request that follows."""
    reply = None
    for ask in range(TOKEN_ASKS):
        sock.send(b"")
        reply = wire.receive_reply(sock, timeout / 2)
        if reply.token is not None:
            if ask > 0:
                drain_late_tokens(sock, reply.token)
            return reply.token
    raise AssertionError("no token for an empty datagram, asked %d times: %r (%s)"
                         % (TOKEN_ASKS, reply.text[:200], reply.problem()))


def drain_late_tokens(sock, token, wait=0.5):
    """Reads, for wait seconds, the late answers to earlier asks for token (the same token reply again)."""
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        sock.settimeout(max(0.01, deadline - time.monotonic()))
        try:
            datagram = sock.recv(65535)
        except socket.timeout:
            return
        late = wire.Reply()
        late.add(datagram)
        assert late.token == token, "while draining late token replies: %r" % datagram[:200]


def start_request(sock, data, timeout=5.0, key=None):
    """Sends data from sock (connected to the kernel) with its token (and with key, keyed), without waiting for
    the reply."""
    sock.send(wire.request_datagram(data, token_for(sock, timeout), key))


# ---- netload ---------------------------------------------------------------------------------------------------
def udp_port_bound(port):
    """True when some host socket is bound to UDP port (from /proc/net/udp)."""
    with open("/proc/net/udp") as f:
        next(f)
        return any(int(line.split()[1].split(":")[1], 16) == port for line in f)


def start_console(k, line):
    """Sends line to the console and consumes its echo; the command goes on running."""
    k.drain()
    k.send_line(line)
    k.expect(re.escape(line) + r"\n", what="the echo of %r" % line)


@contextlib.contextmanager
def console_command(k, line, seconds):
    """start_console(k, line) for a command that runs about `seconds`; the block reads its output through to
    the prompt. A block that fails still waits for that prompt (so the next test finds the console free)."""
    start_console(k, line)
    try:
        yield
    except BaseException:
        try:
            k.expect(r"\n> ", timeout=seconds + 30, what="the prompt after %r" % line)
        except KprofError:
            pass
        raise


# The lines a `netload send` report adds when sending waited: the ring's count (a group), then lwIP's, each optional.
NETLOAD_RING_FULL = r"netload: the transmit ring was full (\d+) times \(sending waited\)"
NETLOAD_HELD = r"netload: lwIP held sending \d+ times while it resolved the host's address \(sending waited\)"
NETLOAD_SEND_WAITS = r"(?:%s\n)?(?:%s\n)?" % (NETLOAD_RING_FULL, NETLOAD_HELD)


def netload_send_waits(lines):
    """True when lines, those of a `netload send` report after its first, are its wait lines: the ring's, then
    lwIP's, each at most once (none when it never waited)."""
    return re.fullmatch(NETLOAD_SEND_WAITS, "".join(line + "\n" for line in lines)) is not None

RX_TX_LINE = re.compile(r"sent packets \d+ \(\d+/s\), bytes \d+ \(\d+/s\)")
RX_RX_LINE = re.compile(r"packets \d+ \(\d+/s\), bytes \d+ \(\d+/s\), lost \d+, out of order \d+, "
                        r"duplicates \d+, invalid \d+")
RX_SOCKET_DROPS = re.compile(r"host socket dropped [1-9]\d* \(its receive queue was full: the receiver did not run\)")


def host_netload(*args, timeout=60):
    r = subprocess.run([NETLOAD] + [str(a) for a in args], capture_output=True, text=True, timeout=timeout)
    assert r.returncode == 0 and r.stderr == "", "netload %s: exit %d, %s" % (args, r.returncode, r.stderr)
    return r.stdout


def host_udp_drops():
    """The host kernel's count of UDP datagrams it dropped because a socket's receive buffer was full (/proc/net/snmp,
    Udp: RcvbufErrors), system-wide: what a starved receiver (a QEMU whose main loop did not run, a sink script)
    lost, which is the host's doing, not the receiver's."""
    with open("/proc/net/snmp") as f:
        rows = [line.split() for line in f if line.startswith("Udp:")]
    return int(rows[1][rows[0].index("RcvbufErrors")])


def short_by_the_host(received, sent, drops_before):
    """Why a receiver that counted `received` of `sent` datagrams may have come up short through no fault of its
    own: the host dropped datagrams at a full socket buffer meanwhile (host_udp_drops moved on from drops_before),
    or the receiver's report has every datagram it got in order with none missing between (received are the
    first ones: the rest came after its window closed). None when it is not short, or when neither holds."""
    if received["packets"] >= sent:
        return None
    if host_udp_drops() > drops_before:
        return "the host dropped datagrams at a full socket buffer meanwhile"
    if (received["lost"], received["out_of_order"], received["duplicates"]) == (0, 0, 0):
        return "every datagram it got came in order, none missing between: the rest came after its window"
    return None


def start_host_sink(port, seconds):
    """scripts/netload sink on the host, returned once it is listening. It runs until finish_host_sink says the
    sender is done (SIGUSR1: it then reports once nothing has arrived for half a second), at most seconds + 60:
    what QEMU still holds for it when the kernel's send ends is counted however loaded the host is."""
    sink = subprocess.Popen([NETLOAD, "sink", str(port), str(seconds + 60)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        poll("the host sink listening on %d" % port, lambda: udp_port_bound(port) or sink.poll() is not None,
             timeout=10, every=0.02)
    except BaseException:
        sink.kill()
        sink.wait()
        raise
    assert sink.poll() is None, "the host sink exited at once: %s" % (sink.communicate(),)
    return sink


def kill_host_sink(sink):
    """Kills a host sink that is still running, and reaps it."""
    if sink.poll() is None:
        sink.kill()
        sink.wait()


def expect_netload_send_report(k, seconds):
    """The console's report of a `netload send` of `seconds` started there (and the lines of its waits, when it
    waited), through to the prompt: the match (group 1 the report, group 2 the ring-full count or None)."""
    return k.expect(r"netload send: ([^\n]*)\n" + NETLOAD_SEND_WAITS + "> ",
                    timeout=seconds + 30, what="the kernel's netload send report")


def finish_host_sink(sink, timeout):
    """The sink's report, once the sender is done (call it then): SIGUSR1 ends the sink at the first half second
    in which nothing arrives. Its socket_drops are the datagrams the host dropped at the sink's own full socket:
    they reached the host, and a sink starved of CPU lost them."""
    try:
        if sink.poll() is None:
            sink.send_signal(signal.SIGUSR1)
        out, err = sink.communicate(timeout=timeout)
    finally:
        kill_host_sink(sink)
    assert sink.returncode == 0 and err == "", "host sink: exit %s, %s" % (sink.returncode, err)
    lines = out.rstrip("\n").split("\n")
    assert RX_RX_LINE.fullmatch(lines[0]) and out.count("\n") == len(lines) and \
        (len(lines) == 1 or (len(lines) == 2 and RX_SOCKET_DROPS.fullmatch(lines[1]))), "the host sink said:\n%s" % out
    return wire.parse_rx_report(out)


def kernel_send_to_host_sink(k, seconds, size, pps):
    """`netload send` from the kernel to a host sink on a free port, seconds at pps datagrams of size bytes:
    (the kernel's answer, the sink's report)."""
    host_port = free_port(socket.SOCK_DGRAM)
    sink = start_host_sink(host_port, seconds + 3)
    try:
        out = k.cmd("netload send %s %d %d %d %d" % (HOST_INSIDE, host_port, seconds, size, pps), timeout=30)
        host = finish_host_sink(sink, 30)
    finally:
        kill_host_sink(sink)
    return out, host


def host_send_into_kernel_sink(k, port, sink_seconds, send_seconds, size, pps):
    """The host's `netload send` (send_seconds at pps datagrams of size bytes to 127.0.0.1:port, QEMU's forward)
    into the kernel's `netload sink` on port for sink_seconds, with the host's part judged: (the kernel's report
    parsed, its line, the host's report parsed). The host's sender is a Python process paced by the host's clock:
    it catches up after a delay but stops at its end, so a host that takes its CPU away sends fewer (a CI pass:
    727 of 1000 in its second, while the other lane's QEMUs ran). Fewer than half raises HostStarved (the retry
    rule, kprof_qemu.unstarved), any count from there is what the kernel is judged against, more than the pace
    allows fails. A kernel short by the host's doing (short_by_the_host) raises HostStarved too."""
    drops = host_udp_drops()
    with console_command(k, "netload sink %d %d" % (port, sink_seconds), sink_seconds):
        k.expect(r"netload: sink on UDP port %d for %d s\n" % (port, sink_seconds), timeout=5)
        host = host_netload("send", "127.0.0.1", port, send_seconds, size, pps)
        m = k.expect(r"netload sink: ([^\n]*)\n> ", timeout=sink_seconds + 15, what="the sink's report")
    assert RX_TX_LINE.fullmatch(host.rstrip("\n")) and host.count("\n") == 1, "host netload send said:\n%s" % host
    assert RX_RX_LINE.fullmatch(m.group(1)), "the kernel's sink said %r" % m.group(1)
    kernel, tx = wire.parse_rx_report(m.group(1)), wire.parse_tx_report(host)
    paced = send_seconds * pps
    assert tx["packets"] <= paced + pps // 100 and tx["bytes"] == tx["packets"] * size, host
    if tx["packets"] < paced // 2:
        raise HostStarved("the host's sender sent %d of %d in its %d s: %s" % (tx["packets"], paced, send_seconds,
                                                                               host.rstrip("\n")))
    why = short_by_the_host(kernel, tx["packets"], drops)
    if why:
        raise HostStarved("the host sent %d, the kernel's sink took %d: %s" % (tx["packets"], kernel["packets"], why))
    return kernel, m.group(1), tx


def judge_kernel_send(k, seconds, size, pps):
    """The kernel's `netload send` to a host sink (kernel_send_to_host_sink), judged: its report's lines (a full
    transmit ring is a wait, not a loss: said on a line of its own), no more than its pace allows, and every
    datagram it counts as sent at the host, in order, once. The kernel paces itself by its clock, so a vCPU left
    unscheduled for tens of milliseconds sends that much less (a loaded pass: 981 at 969/s), and a starved sink
    drops datagrams at its full socket: both raise HostStarved (the retry rule; short every time fails).
    Returns (the kernel's answer, its report parsed, the sink's report)."""
    out, host = kernel_send_to_host_sink(k, seconds, size, pps)
    lines = out.split("\n")
    assert lines[0].startswith("netload send: ") and RX_TX_LINE.fullmatch(lines[0][len("netload send: "):]) and \
        netload_send_waits(lines[1:]), "the kernel's netload send said:\n%s" % out
    kernel = wire.parse_tx_report(lines[0])
    assert kernel["packets"] <= seconds * pps + pps // 100 and kernel["bytes"] == kernel["packets"] * size, out
    if kernel["packets"] < seconds * pps - pps // 100:
        raise HostStarved("the kernel sent %d of %d in its %d s: %s" % (kernel["packets"], seconds * pps, seconds, out))
    if host["socket_drops"]:
        raise HostStarved("the host dropped %d datagrams at the sink's full socket" % host["socket_drops"])
    assert (host["packets"], host["bytes"], host["lost"], host["out_of_order"], host["duplicates"], host["invalid"]) \
        == (kernel["packets"], kernel["bytes"], 0, 0, 0, 0), "the kernel sent %s, the host took %s" % (out, host)
    return out, kernel, host
