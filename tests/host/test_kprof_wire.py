"""scripts/kprof_wire.receive_reply on the host, against a fake kernel on a local UDP socket: a whole reply, one
whose end marker overtook its last datagram, one that never completes (given up a straggler wait after the end
marker, or at the timeout without one), a refusal, and an ICMP "port unreachable" left to the caller."""

import os
import socket
import sys
import time

import pytest

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(TOP, "scripts"))
import kprof_wire  # noqa: E402

TEXT = b"".join(b"line %d of a reply long enough for several datagrams\n" % i for i in range(80))


@pytest.fixture
def pair():
    """(kernel, client): two connected UDP sockets on 127.0.0.1."""
    kernel = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    client = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    kernel.bind(("127.0.0.1", 0))
    client.bind(("127.0.0.1", 0))
    kernel.connect(client.getsockname())
    client.connect(kernel.getsockname())
    yield kernel, client
    kernel.close()
    client.close()


def test_whole_reply(pair):
    kernel, client = pair
    datagrams = kprof_wire.reply_datagrams(7, TEXT)
    assert len(datagrams) > 2
    for d in datagrams:
        kernel.send(d)
    reply = kprof_wire.receive_reply(client, 5.0)
    assert reply.problem() is None and reply.text == TEXT and reply.trailer.seq == 7


def test_end_marker_overtaking_the_last_datagram(pair):
    kernel, client = pair
    *text, end = kprof_wire.reply_datagrams(1, TEXT)
    for d in text[:-1] + [end, text[-1]]:
        kernel.send(d)
    reply = kprof_wire.receive_reply(client, 5.0, straggler_wait=kprof_wire.STRAGGLER_WAIT)
    assert reply.problem() is None and reply.text == TEXT


def test_missing_datagram_given_up_a_straggler_wait_after_the_end(pair):
    kernel, client = pair
    *text, end = kprof_wire.reply_datagrams(1, TEXT)
    for d in text[1:] + [end]:
        kernel.send(d)
    t0 = time.monotonic()
    reply = kprof_wire.receive_reply(client, 10.0, straggler_wait=0.2)
    elapsed = time.monotonic() - t0
    assert reply.problem().startswith("incomplete reply"), reply.problem()
    assert 0.2 <= elapsed < 2.0, elapsed


def test_without_a_straggler_wait_it_waits_to_the_timeout(pair):
    kernel, client = pair
    *text, end = kprof_wire.reply_datagrams(1, TEXT)
    for d in text[1:] + [end]:
        kernel.send(d)
    t0 = time.monotonic()
    reply = kprof_wire.receive_reply(client, 0.5)
    assert time.monotonic() - t0 >= 0.5
    assert reply.problem().startswith("incomplete reply"), reply.problem()


def test_refusal_and_given_reply(pair):
    kernel, client = pair
    kernel.send(b"# udpsh busy: another command is running\n")
    reply = kprof_wire.Reply()
    assert kprof_wire.receive_reply(client, 5.0, reply) is reply
    assert reply.refusal is not None and reply.problem() == "# udpsh busy: another command is running"


def test_port_unreachable_is_the_callers(pair):
    kernel, client = pair
    kernel.close()  # nothing listens at the client's peer any more: the send earns an ICMP port unreachable
    client.send(b"help\n")
    with pytest.raises(ConnectionRefusedError):
        kprof_wire.receive_reply(client, 2.0)
