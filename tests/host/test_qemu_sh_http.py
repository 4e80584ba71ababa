"""scripts/qemu.sh forwards the pprof.http= server's port: a command line with pprof.http=P gets a NIC and
host TCP 127.0.0.1:P forwarded to the guest's P (as `make run CMDLINE=pprof.http=6060` promises), beside any
UDP forwards; without it, or with a value that is no port, no TCP forward. Over the faked QEMU of
host_build.py's tree: nothing boots."""

import host_build
from host_build import run

tree = host_build.tree  # the fixture: qemu.sh over a faked QEMU


def qemu_args(tree):  # noqa: F811
    return tree[2].read_text().split("\n")


def test_pprof_http_forwards_its_tcp_port(tree):  # noqa: F811
    r = run(tree, "--cmdline", "profile.hz=250 pprof.http=6060")
    assert r.returncode == 0, r.stderr
    args = qemu_args(tree)
    assert "user,id=n0,hostfwd=tcp:127.0.0.1:6060-:6060" in args
    assert "http://127.0.0.1:6060/debug/pprof/" in r.stderr


def test_beside_the_udp_shell(tree):  # noqa: F811
    r = run(tree, "--udp-port", "5556", "--cmdline", "pprof.http=8080")
    assert r.returncode == 0, r.stderr
    assert "user,id=n0,hostfwd=tcp:127.0.0.1:8080-:8080,hostfwd=udp:127.0.0.1:5556-:5555" in qemu_args(tree)


def test_no_forward_without_it_or_for_a_bad_port(tree):  # noqa: F811
    r = run(tree, "--cmdline", "profile.hz=250")
    assert r.returncode == 0, r.stderr
    assert "-nic" in qemu_args(tree) and "none" in qemu_args(tree)
    r = run(tree, "--cmdline", "pprof.http=70000")
    assert r.returncode == 0, r.stderr
    assert not any("hostfwd=tcp" in a for a in qemu_args(tree))
    assert "pprof.http=70000 is not a port" in r.stderr
