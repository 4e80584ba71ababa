"""scripts/profexport on a real kprof (issue 7): raw samples from the console into a file, and from the UDP shell
by profexport itself, turned into a pprof profile that `go tool pprof` reads -- burn's innermost function on
top, its callers in -traces, the labels in -tags -- and into folded stacks that add up to the sample count; a
raw file from another build is refused.

One kernel for the module (4 CPUs, the UDP shell forwarded from a free host port), with labelled burn tasks
as the known load (burn_task -> burn_outer -> burn_middle -> burn_inner).
"""

import os
import re
import subprocess
import sys

import pytest

from kprof_pprof import go_pprof, pb2  # noqa: F401 -- pb2 is a fixture
from kprof_net import wait_dhcp
from kprof_qemu import ELF, TOP, Kprof, poll, unstarved
from kprof_report import burn_labelled

sys.path.insert(0, os.path.join(TOP, "scripts"))
import kprof_profile as kp  # noqa: E402

# Kernels this module boots (conftest.py fails a boot past BOOTS), by the test that boots them -- a module kernel
# counts for the first test that uses it, a test named alone needs a fresh one:
# test_console_raw_parses_with_this_builds_id 1.
BOOTS = 1

PROFEXPORT = os.path.join(TOP, "scripts", "profexport")
UDPSH = os.path.join(TOP, "scripts", "udpsh")
BURN_STACK = "task_entry_trampoline;burn_task;burn_outer;burn_middle;burn_inner"


@pytest.fixture(scope="module")
def kernel_udp(request):
    k = Kprof(smp=4, mem=256, udp=True, name=request.node.name)
    try:
        k.boot()
        # DHCP logs its address on the console when it binds: before any command whose output is kept
        wait_dhcp(k)
        k.cmd("uptime")
        yield k
    finally:
        k.kill()


def profexport(*args):
    return subprocess.run([PROFEXPORT] + list(args), capture_output=True, timeout=120)


def folded_counts(text):
    counts = {}
    for line in text.splitlines():
        stack, _, n = line.rpartition(" ")
        assert stack and n.isdigit(), "not a folded line: %r" % line
        counts[stack] = int(n)
    return counts


@pytest.fixture(scope="module")
def console_raw(kernel_udp, tmp_path_factory):
    """`profile 1000 all raw` over the console, with three labelled burn tasks, saved to a file."""
    burn_labelled(kernel_udp, 6000, 3, wait_idle=True)  # a loaded host takes seconds over the labels
    text = kernel_udp.cmd("profile 1000 all raw", timeout=60) + "\n"
    path = str(tmp_path_factory.mktemp("raw") / "console.raw")
    with open(path, "w") as f:
        f.write(text)
    return path, kp.parse_raw(text, origin=path)


def test_console_raw_parses_with_this_builds_id(console_raw):
    _, raw = console_raw
    assert raw.build_id == kp.elf_build_id(ELF)
    assert raw.source == "tick" and raw.period_ns == 10000000 and raw.cpus == 4
    assert 1000 <= raw.window_ms and len(raw.samples) > 200 and raw.dropped == 0
    assert {s.cpu for s in raw.samples} == {0, 1, 2, 3}
    assert {("job", "a")} in [set(s.labels) for s in raw.samples]


def test_pprof_opens_in_go_tool_pprof(console_raw, pb2, tmp_path):
    path, raw = console_raw
    out = str(tmp_path / "kprof.pb.gz")
    r = profexport("-o", out, path)
    assert r.returncode == 0, r.stderr
    assert r.stderr.decode() == "profexport: %d samples (0 dropped in the kernel) from %s -> %s\n" \
        % (len(raw.samples), path, out)

    top = go_pprof(out, "-top")
    rows = [l.split() for l in top.splitlines() if re.match(r"\s+\d", l)]
    assert rows[0][-1] == "burn_inner", "burn_inner is not on top:\n%s" % top
    total = re.search(r"Total samples = ([\d.]+)(ms|s)\b", top)
    assert total and round(float(total.group(1)) * (1 if total.group(2) == "ms" else 1000)) == \
        len(raw.samples) * 10, "not %d samples of 10 ms:\n%s" % (len(raw.samples), top)

    traces = go_pprof(out, "-traces")
    burn = [b for b in traces.split("-----------+") if re.search(r"\bburn_inner\n", b)]
    assert burn, traces
    assert any(re.search(r"burn_inner\s+burn_middle\s+burn_outer\s+burn_task\s+task_entry_trampoline\s", b)
               for b in burn), "-traces does not show burn_inner's callers in order:\n%s" % traces

    tags = go_pprof(out, "-tags")
    job = re.search(r"(?m)^ job: Total (\S+)\n((?:\s+\S+ \(\s*[\d.]+%\): \S+\n)+)", tags)
    assert job and {l.split()[-1] for l in job.group(2).splitlines()} == {"a", "b"}, tags
    assert re.search(r"(?m)^ cpu: Total ", tags) and re.search(r"(?m)^ pid: Total ", tags), tags

    lines = go_pprof(out, "-top", "-lines")
    assert re.search(r"burn_inner \S*kernel/shell/cmd_burn\.c:\d+", lines), "no source line for burn_inner:\n%s" % lines


def test_folded_sums_to_the_sample_count(console_raw):
    path, raw = console_raw
    r = profexport("--folded", path)
    assert r.returncode == 0, r.stderr
    counts = folded_counts(r.stdout.decode())
    assert sum(counts.values()) == len(raw.samples)
    assert max(counts, key=counts.get) == BURN_STACK, counts


def test_raw_from_another_build_is_refused(console_raw, tmp_path):
    path, raw = console_raw
    with open(path) as f:
        text = f.read()
    other = "f" * len(raw.build_id)
    moved = tmp_path / "other.raw"
    moved.write_text(text.replace("build_id=%s" % raw.build_id, "build_id=%s" % other, 1))
    r = profexport("-o", str(tmp_path / "x.pb.gz"), str(moved))
    assert r.returncode == 1 and not os.path.exists(str(tmp_path / "x.pb.gz"))
    assert r.stderr.decode() == "profexport: %s comes from another build: build id %s, but %s has %s\n" \
        % (moved, other, kp.DEFAULT_ELF, raw.build_id)
    cut = tmp_path / "cut.raw"
    cut.write_text(text[:len(text) // 2])
    r = profexport("--folded", str(cut))
    assert r.returncode == 1 and b"truncated" in r.stderr and r.stdout == b""


def test_udp_profile_by_profexport_itself(kernel_udp, pb2, tmp_path):
    k = kernel_udp
    # the UDP shell answers once DHCP is done (a short reply also settles ARP for the host's address)
    poll("the UDP shell answering", lambda: subprocess.run(
        [UDPSH, "-t", "1", "-p", str(k.udp_port), "127.0.0.1", "help"], capture_output=True).returncode == 0,
        timeout=30, every=0.2)
    spec = "127.0.0.1:%d" % k.udp_port
    out = str(tmp_path / "udp.pb.gz")

    def attempt():
        burn_labelled(k, 6000, 3, wait_idle=True)  # a loaded host takes seconds over the labels
        r = profexport("-o", out, "--ms", "600", "--udp", spec)
        assert r.returncode == 0, r.stderr
        m = re.fullmatch(r"profexport: (\d+) samples \(0 dropped in the kernel\) from %s -> %s\n"
                         % (re.escape(spec), re.escape(out)), r.stderr.decode())
        # 4 CPUs at 100 Hz for 600 ms: ~240, unless the host starved QEMU of its ticks (the retry rule)
        assert m and int(m.group(1)) > 100, r.stderr
    unstarved(k, attempt, "profexport --ms 600 over UDP")
    tags = go_pprof(out, "-tags")
    assert re.search(r"(?m)^ host: Total \S+\n\s+\S+ \(\s*100%%\): %s$" % re.escape(spec), tags), tags
    rows = [l.split() for l in go_pprof(out, "-top").splitlines() if re.match(r"\s+\d", l)]
    assert rows[0][-1] == "burn_inner", rows
