"""The boot secret (issue 24 item 4): where the processor has no hardware generator the kernel says so at boot
and, keyed, on `net` and `lscpu`; where it has one (TCG's -cpu max offers RDRAND and RDSEED) it says neither.
And the secret differs from boot to boot even under deterministic execution (-icount), where the cycle counter
and the PIT repeat exactly: a keyed request recorded on one boot, replayed byte for byte from the same address
and port on the next boot of the same key, gets a token (its token is no longer this boot's), never the
command's output. (On this machine the secret of the kernel before this change did not repeat under -icount
either -- the CD-ROM's reads complete in host time, so the cycle count at the draw differed by ~0.1 % between
two boots -- so this test guards the property rather than telling the two apart; tests/unit/test_entropy_pool.c
shows the wall clock alone changing the seed when every other timing repeats.)
"""

import os
import re
import socket
import sys

from kprof_qemu import TOP, free_port, poll
from kprof_net import run_udpsh

sys.path.insert(0, os.path.join(TOP, "scripts"))
import kprof_wire as wire  # noqa: E402

# Kernels this module boots (conftest.py fails a boot past BOOTS), by the test that boots them -- a module kernel
# counts for the first test that uses it, a test named alone needs a fresh one:
# test_a_keyed_request_recorded_on_one_boot_is_refused_on_the_next 2,
# test_cpu_max_has_a_hardware_generator_and_no_warning 1, test_default_cpu_unkeyed_warns_but_says_nothing_on_net 1,
# test_default_cpu_warns_at_boot_and_keyed_says_so_on_net_and_lscpu 1.
BOOTS = 5

KEY = "b007b007b007b007b007b007b007b007"
WEAK = re.compile(r"entropy: no RDRAND/RDSEED; the boot secret comes from timing, about (\d+) bits: weak")
NOTE = "secret: keyed, but the boot secret is weak (no RDRAND/RDSEED; about %s bits from timing)"
ICOUNT_BOOT_TIMEOUT = 240.0  # -icount runs single-threaded and some 4x slower; the machine is shared


def wait_for_shell(k):
    poll("the UDP shell answering", lambda: run_udpsh(k.udp_port, "uptime", env_key=KEY, timeout=2).returncode == 0,
         timeout=120, every=0.5)


def test_default_cpu_warns_at_boot_and_keyed_says_so_on_net_and_lscpu(kprof_factory):
    k = kprof_factory(smp=2, mem=256, cmdline="udpsh.key=%s" % KEY, udp=True)
    m = WEAK.search(k.boot_log)
    assert m, k.boot_log
    assert len(WEAK.findall(k.boot_log)) == 1, k.boot_log  # one pool a boot, however many services draw on it
    note = NOTE % m.group(1)
    assert note in k.cmd("net").split("\n")
    assert note in k.cmd("lscpu").split("\n")


def test_default_cpu_unkeyed_warns_but_says_nothing_on_net(kprof_factory):
    k = kprof_factory(smp=2, mem=256, udp=True)
    assert WEAK.search(k.boot_log), k.boot_log
    assert "secret:" not in k.cmd("net")
    assert "secret:" not in k.cmd("lscpu")


def test_cpu_max_has_a_hardware_generator_and_no_warning(kprof_factory):
    k = kprof_factory(smp=2, mem=256, cmdline="udpsh.key=%s" % KEY, udp=True, extra_args=["-cpu", "max"])
    assert re.search(r"entropy: the boot secret comes from RDSEED/RDRAND and timing, about \d+ bits", k.boot_log), k.boot_log
    assert "weak" not in k.boot_log, k.boot_log
    assert "secret:" not in k.cmd("net")
    assert "secret:" not in k.cmd("lscpu")


def keyed_boot(kprof_factory):
    # a static address: no DHCP exchange whose timing the host decides; sleep=off: idle time is not host time
    k = kprof_factory(boot=False, smp=1, mem=256, cmdline="ip=10.0.2.15/24 gw=10.0.2.2 udpsh.key=%s" % KEY,
                      udp=True, extra_args=["-icount", "shift=0,sleep=off"])
    k.start()
    k.wait_ready(ICOUNT_BOOT_TIMEOUT)
    wait_for_shell(k)  # from other ports: DHCP done, the host's address in the ARP cache
    return k


def test_a_keyed_request_recorded_on_one_boot_is_refused_on_the_next(kprof_factory):
    source_port = free_port(socket.SOCK_DGRAM)
    key = bytes.fromhex(KEY)

    first = keyed_boot(kprof_factory)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", source_port))
        s.connect(("127.0.0.1", first.udp_port))
        s.send(b"uptime")
        token = wire.receive_reply(s, 15).token
        assert token is not None
        recorded = wire.request_datagram(b"uptime", token, key)
        s.send(recorded)
        answer = wire.receive_reply(s, 15)
    assert answer.problem() is None and answer.text.startswith(b"up "), (answer.problem(), answer.text)
    first.kill()

    second = keyed_boot(kprof_factory)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", source_port))
        s.connect(("127.0.0.1", second.udp_port))
        s.send(recorded)
        replayed = wire.receive_reply(s, 15)
    # refused: a token (the recorded one is not this boot's) or an error; never the command's output
    assert replayed.token is not None or replayed.refusal is not None, (replayed.text, replayed.refusal)
    assert not (replayed.text or b"").startswith(b"up "), replayed.text
