"""The resending clients on the host -- scripts/kprof_wire.exchange, scripts/udpsh and the UDP request path of
profexport (kprof_profile.udp_command) -- against a fake lossy kernel on a local UDP socket that does what the
kernel does with tokens, request ids (id=N unkeyed, the counter keyed) and remembered answers: the first
datagrams it receives are lost (as QEMU's user network loses what arrives before the guest answered ARP), or
the first answer it sends is. Every client must get its answer and the command must run exactly once."""

import os
import re
import socket
import subprocess
import sys
import threading

import pytest

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(TOP, "scripts"))
import kprof_wire  # noqa: E402
import kprof_profile  # noqa: E402
from host_build import datagrams  # noqa: E402

KEY = bytes(range(16, 48))


class LossyKernel:
    """lose_in: how many datagrams received are dropped unread first; lose_request: how many token-bearing
    requests are dropped; lose_answer: how many whole answers go unsent (after running, so the answer is
    remembered). runs counts each command run, token_requests each request without a token, repeats each
    repeat answered from memory."""

    def __init__(self, lose_in=0, lose_request=0, lose_answer=0, key=None, text=b"uptime: 12 s\n"):
        self.lose_in, self.lose_request, self.lose_answer = lose_in, lose_request, lose_answer
        self.key, self.text = key, text
        self.token = b"%032x" % 0x1234
        self.runs, self.token_requests, self.repeats, self.received = [], 0, 0, 0
        self.remembered = {}
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.closing = False
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self):
        for data, peer in datagrams(self, self.sock, 0.1):
            self.received += 1
            if self.lose_in:
                self.lose_in -= 1
                continue
            self.handle(data, peer)

    def handle(self, data, peer):
        m = re.fullmatch(rb"token=([0-9a-f]{32}) (?:id=(\d+) )?(?:counter=(\d+) mac=([0-9a-f]{64}) )?(.*\n)", data,
                         re.S)
        if not m or m.group(1) != self.token:
            self.token_requests += 1
            self.sock.sendto(b"# udpsh token=%s\n" % self.token, peer)
            return
        if self.lose_request:
            self.lose_request -= 1
            return
        line = m.group(5)   # the MAC covers it as sent, newline and all
        if self.key is not None:
            assert m.group(3), "a keyed kernel got an unkeyed request"
            assert kprof_wire.request_mac(self.key, self.token, int(m.group(3)), line) == m.group(4)
            rid = ("keyed", int(m.group(3)))
        else:
            assert m.group(2), "the client sent no request id"
            rid = ("unkeyed", int(m.group(2)))
        answer = self.remembered.get((peer, rid))
        if answer is not None:
            self.repeats += 1
        else:
            self.runs.append(line.rstrip(b"\n"))
            answer = kprof_wire.reply_datagrams(len(self.runs), self.text)
            self.remembered[(peer, rid)] = answer
            if self.lose_answer:
                self.lose_answer -= 1
                return
        for d in answer:
            self.sock.sendto(d, peer)

    def close(self):
        self.closing = True
        self.thread.join(5)
        self.sock.close()


@pytest.fixture
def fast_resend(monkeypatch):
    monkeypatch.setattr(kprof_wire, "RESEND_FIRST", 0.2)


def exchange(k, line=b"uptime\n", key=None, timeout=20.0):
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.connect(("127.0.0.1", k.port))
        return kprof_wire.exchange(sock, line, timeout, key=key, straggler_wait=kprof_wire.STRAGGLER_WAIT)


# (what is lost, datagrams the kernel receives in all, repeats it answers from memory)
LOSSES = {
    "token requests": (dict(lose_in=3), 5, 0),
    "requests": (dict(lose_request=2), 4, 0),
    "an answer": (dict(lose_answer=1), 3, 1),
}


@pytest.mark.parametrize("loss", sorted(LOSSES))
@pytest.mark.parametrize("key", [None, KEY], ids=["unkeyed", "keyed"])
def test_what_is_lost_is_resent_and_runs_once(fast_resend, key, loss):
    lose, received, repeats = LOSSES[loss]
    k = LossyKernel(key=key, **lose)
    try:
        reply = exchange(k, key=key)
    finally:
        k.close()
    assert reply.problem() is None and reply.text == b"uptime: 12 s\n"
    assert k.runs == [b"uptime"] and k.token_requests == 1
    assert (k.received, k.repeats) == (received, repeats)


def test_nothing_is_resent_once_the_answer_came(fast_resend):
    k = LossyKernel()
    try:
        reply = exchange(k)
    finally:
        k.close()
    assert reply.problem() is None and k.received == 2 and k.runs == [b"uptime"]


def test_a_session_keeps_its_token(fast_resend):
    k = LossyKernel()
    session = kprof_wire.Session()
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
            sock.connect(("127.0.0.1", k.port))
            for _ in range(3):
                reply = kprof_wire.exchange(sock, b"uptime\n", 20.0, session=session)
                assert reply.problem() is None
    finally:
        k.close()
    assert k.token_requests == 1 and len(k.runs) == 3 and k.received == 4


def test_the_deadline_still_holds(fast_resend):
    k = LossyKernel(lose_in=10 ** 6)
    try:
        reply = exchange(k, timeout=1.5)
    finally:
        k.close()
    assert reply.problem() == "no reply" and k.runs == []
    assert 2 <= k.received <= 5   # resent with backoff (0.2, 0.4, 0.8 s), not in a loop


def test_udpsh_resends(tmp_path):
    k = LossyKernel(lose_in=1, lose_request=1)
    try:
        r = subprocess.run([sys.executable, os.path.join(TOP, "scripts", "udpsh"), "-p", str(k.port), "-t", "30",
                            "127.0.0.1", "uptime"], capture_output=True, timeout=60)
    finally:
        k.close()
    assert r.returncode == 0, r.stderr
    assert r.stdout == b"uptime: 12 s\n" and k.runs == [b"uptime"]


def test_profexport_request_path_resends(fast_resend):
    k = LossyKernel(lose_in=2, lose_answer=1, text=b"raw profile text\n")
    try:
        text = kprof_profile.udp_command("127.0.0.1", k.port, "profile 800 all raw", 20.0)
    finally:
        k.close()
    assert text == b"raw profile text\n"
    assert k.runs == [b"profile 800 all raw"] and k.repeats == 1
