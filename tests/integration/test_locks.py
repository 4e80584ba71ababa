"""The lock profile (issue 38, lock contention): `locks` on the shell and /debug/pprof/mutex over HTTP, from the
lock table the spinlock's slow path counts into (kprof in QEMU with 4 CPUs, pprof.http=6060).

- `lockfight 3000 4` makes 4 tasks on 4 CPUs take one spinlock over and over at one call site (lockfight_round,
  called from lockfight_task): after it, `locks` puts that chain first; /debug/pprof/mutex since boot has the
  sample types contentions/count and delay/nanoseconds, the kernel's mapping, and that chain as its sample with
  the most delay, which `go tool pprof -sample_index=delay -top` puts on top; ?debug=1 is Go's text form of a
  contention profile ("--- mutex:") with that chain first, which `go tool pprof` reads as a delay profile.
- With no lockfight, a fresh window (/debug/pprof/mutex?seconds=2, after the run ended) has no lockfight chain,
  though the table since boot still has it; a second window meanwhile is refused 429 with its one busy line.
- Bad words for `locks` and `lockfight` get the usage line and start nothing.
- The index lists mutex and its text form.

Counts, order and content are asserted, never a duration: the delays are the kernel's own. The module shares one
kernel: every test reads, or runs the fight that ends by itself and is waited for.
"""

import re
import threading

import pytest

from kprof_httpd import Links, assert_framed, boot_http, get
from kprof_pprof import sample_chain as chain, sample_types as types
from kprof_pprof import decode, go_pprof, pb2, strings  # noqa: F401 -- pb2 is a fixture
from kprof_qemu import poll, ps_rows

# Kernels this module boots (conftest.py fails a boot past BOOTS): the module's one shared kernel.
BOOTS = 1

FIGHT_MS = 3000
FIGHT_TASKS = 4
FIGHT_CHAIN = ["lockfight_round", "lockfight_task"]


@pytest.fixture(scope="module")
def k(request):
    k = boot_http(request, smp=4, mem=256, dhcp=True)
    try:
        yield k
    finally:
        k.kill()




def locks_sites(out):
    """`locks`'s call sites in its order: [(waits, [function names of the chain])]."""
    sites = []
    for line in out.split("\n"):
        m = re.fullmatch(r"(\d+) waits, \d+\.\d{3} ms spun \(\d+\.\d{3} ms each\)", line)
        if m:
            sites.append((int(m.group(1)), []))
            continue
        m = re.fullmatch(r" +<- (\S+?)(?:\+0x[0-9a-f]+)?", line)
        if m and sites:
            sites[-1][1].append(m.group(1))
    return sites


def last_fight(k):
    out = k.cmd("lockfight")
    m = re.fullmatch(r"lockfight: last run (\d+) tasks, (\d+) rounds in (\d+) ms", out)
    return m and (int(m.group(1)), int(m.group(2)))


@pytest.fixture(scope="module")
def fought(k, pb2, tmp_path_factory):
    """`locks` before, the fight, then `locks`, /debug/pprof/mutex (pprof and text) since boot after it."""
    seen = {"before": k.cmd("locks")}
    out = k.cmd("lockfight %d %d" % (FIGHT_MS, FIGHT_TASKS))
    assert re.fullmatch(r"lockfight: started %d tasks for %d ms on one spinlock \(pids( \d+){%d}\)"
                        % (FIGHT_TASKS, FIGHT_MS, FIGHT_TASKS), out), out
    seen["run"] = poll("the lockfight run to end", lambda: last_fight(k), timeout=60 + FIGHT_MS / 1000, every=0.5)
    seen["locks"] = k.cmd("locks 5")
    r = get(k, "/debug/pprof/mutex")
    assert_framed(r, 200)
    seen["pprof"] = r
    path = tmp_path_factory.mktemp("mutex") / "mutex.pb.gz"
    path.write_bytes(r.body)
    seen["path"] = str(path)
    r = get(k, "/debug/pprof/mutex?debug=1")
    assert_framed(r, 200)
    seen["text"] = r.text()
    seen["text_path"] = str(path.with_name("mutex.txt"))
    path.with_name("mutex.txt").write_text(seen["text"])
    return seen


def test_locks_puts_the_fight_first(fought):
    assert FIGHT_CHAIN[0] not in fought["before"], fought["before"]
    assert fought["run"][0] == FIGHT_TASKS and fought["run"][1] > 0, fought["run"]
    out = fought["locks"]
    assert re.match(r"locks: \d+ contended acquisitions since boot at \d+ call sites?, \d+\.\d{3} ms spun; "
                    r"the \d+ that spun longest:\n", out), out
    sites = locks_sites(out)
    assert sites and sites[0][1][:2] == FIGHT_CHAIN and sites[0][0] >= 1, out
    assert [s for s in sites if s[1][:1] == FIGHT_CHAIN[:1]] == [sites[0]], out  # one chain for the one call site


def test_mutex_profile_has_the_fight_as_its_top_chain(fought, pb2):
    r = fought["pprof"]
    assert r.headers["content-disposition"] == 'attachment; filename="mutex"', r.headers
    prof = decode(pb2, r.body)
    assert types(prof) == [("contentions", "count"), ("delay", "nanoseconds")]
    assert (strings(prof, prof.period_type.type), prof.period) == ("contentions", 1)
    assert len(prof.mapping) == 1 and strings(prof, prof.mapping[0].filename) == "kprof.elf", prof.mapping
    top = max(prof.sample, key=lambda s: s.value[1])
    assert chain(prof, top)[:2] == FIGHT_CHAIN and top.value[0] >= 1 and top.value[1] > 0, \
        [(chain(prof, s), list(s.value)) for s in prof.sample]
    assert not top.label, "the lock profile labels nothing"
    # `locks` read the same table a moment earlier: the chain's count only grew since
    sites = locks_sites(fought["locks"])
    assert top.value[0] >= sites[0][0]


def test_go_tool_pprof_puts_the_fight_on_top(fought):
    out = go_pprof(fought["path"], "-sample_index=delay", "-top")
    rows = [f for f in (line.split() for line in out.splitlines()) if len(f) >= 6 and re.fullmatch(r"[\d.]+%", f[1])]
    assert rows and rows[0][-1] == FIGHT_CHAIN[0], out


def test_debug_1_is_gos_text_with_the_fight_first(fought):
    text = fought["text"]
    head = "--- mutex:\ncycles/second=1000000000\nsampling period=1\n"
    assert text.startswith(head), text[:200]
    records = re.split(r"\n(?=\d+ \d+ @)", text[len(head):].strip("\n"))
    first = records[0].split("\n")
    assert re.fullmatch(r"\d+ \d+ @( 0x[0-9a-f]+)+", first[0]), first
    frames = [re.fullmatch(r"#\t0x[0-9a-f]+\t(\S+)\+0x[0-9a-f]+", line) for line in first[1:]]
    assert all(frames) and [f.group(1) for f in frames][:2] == FIGHT_CHAIN, first
    delays = [int(r.split(" ", 1)[0]) for r in records]
    assert delays == sorted(delays, reverse=True), delays
    # pprof reads Go's legacy text too: a delay profile, cycles at 1 GHz being nanoseconds
    out = go_pprof(fought["text_path"], "-top")
    assert "Type: delay" in out, out


def test_a_fresh_window_without_a_fight_has_no_fight_chain(k, fought, pb2):
    """After the fight, the table since boot still has its chain; a window over 2 idle seconds has not. A second
    window meanwhile is refused with the one busy line."""
    assert last_fight(k), "the fight has ended (fought waited for it)"
    window = {}
    t = threading.Thread(target=lambda: window.update(r=get(k, "/debug/pprof/mutex?seconds=2")))
    t.start()
    try:
        poll("the mutex window running", lambda: any(row[3] == "mutex" for row in ps_rows(k)), timeout=60, every=0.2)
        busy = get(k, "/debug/pprof/mutex?seconds=1")
    finally:
        t.join(120)
    r = window["r"]
    assert_framed(r, 200)
    prof = decode(pb2, r.body)
    assert types(prof) == [("contentions", "count"), ("delay", "nanoseconds")]
    assert prof.duration_nanos >= 2000000000, prof.duration_nanos
    assert [chain(prof, s) for s in prof.sample if FIGHT_CHAIN[0] in chain(prof, s)] == [], \
        [chain(prof, s) for s in prof.sample]
    assert_framed(busy, 429)
    assert int(busy.headers["retry-after"]) >= 1
    assert re.fullmatch(r"mutex: busy: a mutex profile \(/debug/pprof/mutex\?seconds=2\), \d+ s left\n",
                        busy.text()), busy.text()
    since_boot = decode(pb2, get(k, "/debug/pprof/mutex").body)
    assert any(chain(since_boot, s)[:2] == FIGHT_CHAIN for s in since_boot.sample)


@pytest.mark.parametrize("line", ["locks 0", "locks 257", "locks x", "locks 1 2", "lockfight 0 4",
                                  "lockfight 100 1", "lockfight 100 17", "lockfight 100", "lockfight x 4",
                                  "lockfight 100 4 5"])
def test_bad_words_get_the_usage_line_and_start_nothing(k, fought, line):
    before = k.cmd("lockfight")
    out = k.cmd(line)
    name = line.split()[0]
    usage = {"locks": "locks [N] (N 1..256, default 10)", "lockfight": "lockfight [MS N] (MS 1..60000, N 2..16)"}
    assert out == "usage: " + usage[name], out
    assert not any(row[3] == "lockfight" for row in ps_rows(k))
    assert k.cmd("lockfight") == before


def test_the_index_lists_mutex(k):
    r = get(k, "/debug/pprof/")
    assert_framed(r, 200)
    links = Links()
    links.feed(r.text())
    assert {"mutex", "mutex?debug=1", "block"} <= set(links.hrefs), links.hrefs
