"""The scrapers' other profiles over HTTP (issue 36, part 4): /debug/fgprof (every task's wall time),
/debug/pprof/goroutine (every task now) and /debug/pprof/block (where tasks blocked), each a pprof that `go tool
pprof` opens, with the kernel's mapping and build id (kprof in QEMU with 4 CPUs, pprof.http=6060, the UDP shell
and netload).

- `work 4000 4` computes 30% and sleeps 70% of each 100 ms request on 4 tasks: /debug/fgprof?seconds=2 of it has
  sample types samples/count and wall/nanoseconds (period 10 ms), a `state` label on every sample, the work
  tasks' waiting chain through work_wait labelled state=waiting waiting_on=sleep work=serve and their running
  chain through work_compute, and `go tool pprof -sample_index=wall -tagfocus=state=waiting -top` puts work_wait
  on top. While it runs, /debug/pprof/profile is refused 429 with the one busy line naming the wall profile.
- The console running `netload sink PORT 10`: /debug/pprof/goroutine?debug=2 shows the console's shell waiting on
  the network in netload_finish under cmd_netload, as `tasks` prints it, and the HTTP worker running the dump
  (pprof_goroutine under httpd_goroutine); ?debug=1 counts it in Go's text form, and the pprof form counts every
  task, the shell's group labelled task=shell state=waiting waiting_on=net. A /debug/pprof/block?seconds=2
  meanwhile answers for its window (a second one 429); after the sink ended, /debug/pprof/block since boot names
  netload_finish's call site, waiting on the network, with at least 9 s of delay -- the sink's 10 s by the
  kernel's clock, which is what a delay is.
- The index lists fgprof, goroutine and block.

Counts and content are asserted, never a duration on the host's clock: the window and the delays are the
kernel's own. The module shares one kernel: every test reads, or starts work that ends by itself and waits for
it to end.
"""

import os
import re
import sys
import threading

import pytest

from kprof_httpd import GUEST_PORT, Links, assert_framed, fetching, get
from kprof_net import UdpShell, booted_with_dhcp, console_command
from kprof_pprof import sample_chain as chain, sample_types as types
from kprof_pprof import comment_fields, decode, go_pprof, pb2, strings  # noqa: F401 -- pb2 is a fixture
from kprof_qemu import ELF, TOP, Kprof, poll, ps_rows
from work_check import start_work, wait_no_work, wait_work_done

sys.path.insert(0, os.path.join(TOP, "scripts"))
import kprof_profile as kp  # noqa: E402
import kprof_tasks as kt  # noqa: E402

# Kernels this module boots (conftest.py fails a boot past BOOTS): the module's one shared kernel.
BOOTS = 1

WALL_NS = 10000000
SINK_S = 10


@pytest.fixture(scope="module")
def k(request):
    yield from booted_with_dhcp(Kprof(smp=4, mem=256, udp=True, netload=True, http=GUEST_PORT,
                                      cmdline="pprof.http=%d" % GUEST_PORT, name=request.node.name))


def fetch(k, path, status=200):
    r = get(k, path)
    assert_framed(r, status)
    return r



def labels(prof, s):
    """{key: value} of a sample's string labels (each key once in these profiles)."""
    out = {}
    for lb in s.label:
        key = strings(prof, lb.key)
        assert key not in out, "label %s twice" % key
        out[key] = strings(prof, lb.str)
    return out



def assert_kernel_mapping(prof):
    assert len(prof.mapping) == 1 and strings(prof, prof.mapping[0].filename) == "kprof.elf", prof.mapping
    assert strings(prof, prof.mapping[0].build_id) == kp.elf_build_id(ELF)


# ---- /debug/fgprof ----------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def work_wall(k, pb2, tmp_path_factory):
    """/debug/fgprof?seconds=2 while `work 4000 4` runs, saved to a file; with what /debug/pprof/profile said while
    it ran."""
    wait_no_work(k)
    start_work(k, 4000, 4)
    try:
        with fetching(k, "/debug/fgprof?seconds=2", "wall profile (/debug/fgprof)") as got:
            busy = get(k, "/debug/pprof/profile?seconds=1")
    finally:
        wait_work_done(k)
    r = got["r"]
    assert_framed(r, 200)
    assert r.headers["content-disposition"] == 'attachment; filename="fgprof"', r.headers
    path = tmp_path_factory.mktemp("fgprof") / "fgprof.pb.gz"
    path.write_bytes(r.body)
    return dict(prof=decode(pb2, r.body), path=str(path), busy=busy)


def test_fgprof_is_a_wall_profile_of_every_task(work_wall):
    prof = work_wall["prof"]
    assert types(prof) == [("samples", "count"), ("wall", "nanoseconds")]
    assert (strings(prof, prof.period_type.type), strings(prof, prof.period_type.unit)) == ("wall", "nanoseconds")
    assert prof.period == WALL_NS and strings(prof, prof.default_sample_type) == "wall"
    assert_kernel_mapping(prof)
    fields = comment_fields(prof)
    assert fields["source"] == "tick" and fields["period_ns"] == str(WALL_NS), fields
    assert prof.duration_nanos >= 2000000000 and prof.duration_nanos == int(fields["window_ms"]) * 1000000
    assert sum(s.value[0] for s in prof.sample) == int(fields["samples"]), fields
    states = set()
    for s in prof.sample:
        lb = labels(prof, s)
        states.add(lb["state"])
        assert lb["state"] in ("running", "runnable", "waiting"), lb
        assert ("waiting_on" in lb) == (lb["state"] == "waiting"), lb
        # each sample stands for the time since its CPU's last sweep: a period, less half a tick at most
        assert s.value[1] >= s.value[0] * (WALL_NS - 5000000), (s.value, lb)
    assert {"running", "waiting"} <= states, states


def test_fgprof_has_the_work_tasks_waiting_and_running(work_wall):
    prof = work_wall["prof"]
    waiting = [s for s in prof.sample if chain(prof, s)[:2] == ["work_wait", "work_serve_request"]]
    assert waiting, [chain(prof, s) for s in prof.sample][:20]
    for s in waiting:
        lb = labels(prof, s)
        assert lb["state"] == "waiting" and lb["waiting_on"] == "sleep" and lb["work"] == "serve", lb
        assert int(lb["span"]) > 0 and "cpu" in lb and "pid" in lb, lb
    running = [s for s in prof.sample if "work_compute" in chain(prof, s)
               and labels(prof, s)["state"] == "running"]
    assert running, [(chain(prof, s), labels(prof, s)) for s in prof.sample][:20]
    assert {labels(prof, s)["pid"] for s in waiting} == {labels(prof, s)["pid"] for s in running}
    assert len({labels(prof, s)["pid"] for s in waiting}) == 4


def test_go_tool_pprof_puts_work_wait_on_top_of_the_waiting(work_wall):
    out = go_pprof(work_wall["path"], "-sample_index=wall", "-tagfocus=state=waiting", "-top")
    rows = [f for f in (line.split() for line in out.splitlines()) if len(f) >= 6 and re.fullmatch(r"[\d.]+%", f[1])]
    assert rows and rows[0][-1] == "work_wait", out


def test_a_cpu_profile_meanwhile_is_429_with_the_one_busy_line(work_wall):
    busy = work_wall["busy"]
    assert_framed(busy, 429)
    assert int(busy.headers["retry-after"]) >= 1
    assert re.fullmatch(r"profile: busy: an HTTP wall profile \(/debug/fgprof\), \d+ s left\n", busy.text()), \
        busy.text()


# ---- /debug/pprof/goroutine and /debug/pprof/block --------------------------------------------------------------

NETLOAD_CHAIN = ["netload_finish", "cmd_netload", "shell_run_line", "console_shell", "task_entry_trampoline"]
# Tasks every kernel here has (with pprof.http=, the UDP shell): an idle task per CPU, and these.
SYSTEM_TASKS = {"idle", "reaper", "net", "udpsh", "httpd", "shell"}


@pytest.fixture(scope="module")
def sink(k, pb2):
    """goroutine?debug=2, ?debug=1, the pprof form and a block window of 2 s (with a second refused meanwhile)
    while the console's shell waits out `netload sink PORT 10`; then the block profile since boot."""
    wait_no_work(k)
    seen = {}
    with console_command(k, "netload sink %d %d" % (k.netload_port, SINK_S), SINK_S):
        k.expect(r"netload: sink on UDP port %d for %d s\n" % (k.netload_port, SINK_S), what="netload's start line")
        seen["debug2"] = fetch(k, "/debug/pprof/goroutine?debug=2").text()
        seen["debug1"] = fetch(k, "/debug/pprof/goroutine?debug=1").text()
        seen["pprof"] = fetch(k, "/debug/pprof/goroutine")
        window = {}
        t = threading.Thread(target=lambda: window.update(r=get(k, "/debug/pprof/block?seconds=2")))
        t.start()
        try:
            # the console is the sink's: ask the UDP shell
            poll("the block window running", lambda: any(row[3] == "block" for row in ps_rows(UdpShell(k.udp_port))),
                 timeout=60, every=0.2)
            seen["block_busy"] = get(k, "/debug/pprof/block?seconds=1")
        finally:
            t.join(120)
        seen["block_window"] = window["r"]
        k.expect(r"netload sink: [^\n]*\n> ", timeout=SINK_S + 40, what="the sink's report and the prompt")
    seen["block"] = fetch(k, "/debug/pprof/block")
    return seen


def test_goroutine_debug_2_is_the_task_dump(sink):
    tasks = kt.parse(sink["debug2"])
    pids = [t.pid for t in tasks]
    assert pids == sorted(set(pids)), sink["debug2"]
    assert SYSTEM_TASKS <= {t.name for t in tasks} and sum(t.idle for t in tasks) == 4, sink["debug2"]
    shell = [t for t in tasks if t.name == "shell"]
    assert len(shell) == 1 and shell[0].activity == "waiting" and shell[0].wait == "net", shell
    assert kt.symbols(shell[0]) == NETLOAD_CHAIN, shell[0]
    worker = [t for t in tasks if t.name == "httpd"]
    assert len(worker) == 1 and worker[0].activity == "running", worker
    assert kt.symbols(worker[0])[:2] == ["pprof_goroutine", "httpd_goroutine"], worker[0]


def test_goroutine_debug_1_counts_by_chain(sink):
    text = sink["debug1"]
    m = re.match(r"goroutine profile: total (\d+)\n", text)
    assert m and int(m.group(1)) >= len(SYSTEM_TASKS) + 3, text[:300]
    paragraphs = [p for p in text[m.end():].split("\n\n") if p.strip()]
    counted = 0
    shell = None
    for p in paragraphs:
        lines = p.strip("\n").split("\n")
        head = re.fullmatch(r"(\d+) @((?: 0x[0-9a-f]+)*)", lines[0])
        assert head, p
        counted += int(head.group(1))
        assert lines[1].startswith("# labels: {"), p
        if '"task":"shell"' in lines[1]:
            shell = lines
    assert counted == int(m.group(1)), text
    assert shell and shell[0].startswith("1 @ "), shell
    assert '"state":"waiting"' in shell[1] and '"waiting_on":"net"' in shell[1], shell
    frames = [re.fullmatch(r"#\t0x[0-9a-f]+\t(\S+)\+0x[0-9a-f]+", line) for line in shell[2:]]
    assert all(frames) and [f.group(1) for f in frames] == NETLOAD_CHAIN, shell


def test_goroutine_pprof_counts_every_task(sink, pb2):
    r = sink["pprof"]
    assert r.headers["content-disposition"] == 'attachment; filename="goroutine"', r.headers
    prof = decode(pb2, r.body)
    assert types(prof) == [("goroutine", "count")] and prof.period == 1
    assert_kernel_mapping(prof)
    total = sum(s.value[0] for s in prof.sample)
    assert total == int(comment_fields(prof)["tasks"]), total
    assert SYSTEM_TASKS <= {labels(prof, s)["task"] for s in prof.sample}, [labels(prof, s) for s in prof.sample]
    shell = [s for s in prof.sample if labels(prof, s).get("task") == "shell"]
    assert len(shell) == 1 and shell[0].value[0] == 1, shell
    assert labels(prof, shell[0]) == {"cmd": "netload", "state": "waiting", "task": "shell", "waiting_on": "net"}
    assert chain(prof, shell[0]) == NETLOAD_CHAIN


def test_a_block_window_answers_for_its_seconds_and_one_at_a_time(sink, pb2):
    r = sink["block_window"]
    assert_framed(r, 200)
    prof = decode(pb2, r.body)
    assert types(prof) == [("contentions", "count"), ("delay", "nanoseconds")]
    assert prof.duration_nanos >= 2000000000, prof.duration_nanos
    busy = sink["block_busy"]
    assert_framed(busy, 429)
    assert int(busy.headers["retry-after"]) >= 1
    assert re.fullmatch(r"block: busy: a block profile \(/debug/pprof/block\?seconds=2\), \d+ s left\n",
                        busy.text()), busy.text()


def test_block_names_the_sinks_call_site_and_its_delay(sink, pb2):
    r = sink["block"]
    assert r.headers["content-disposition"] == 'attachment; filename="block"', r.headers
    prof = decode(pb2, r.body)
    assert types(prof) == [("contentions", "count"), ("delay", "nanoseconds")]
    assert (strings(prof, prof.period_type.type), prof.period) == ("contentions", 1)
    assert_kernel_mapping(prof)
    sites = [s for s in prof.sample if chain(prof, s)[:1] == ["netload_finish"]]
    assert len(sites) == 1, [chain(prof, s) for s in prof.sample]
    s = sites[0]
    assert chain(prof, s) == NETLOAD_CHAIN[:4] and labels(prof, s) == {"waiting_on": "net"}, chain(prof, s)
    assert s.value[0] >= 1 and s.value[1] >= (SINK_S - 1) * 1000000000, s.value
    # the call site's own address is a return address into netload_finish
    loc = {l.id: l for l in prof.location}[s.location_id[0]]
    assert loc.mapping_id == prof.mapping[0].id and loc.address > 0


def test_the_index_lists_them(k):
    r = fetch(k, "/debug/pprof/")
    links = Links()
    links.feed(r.text())
    assert {"/debug/fgprof", "goroutine", "goroutine?debug=1", "goroutine?debug=2", "block"} <= set(links.hrefs), \
        links.hrefs
