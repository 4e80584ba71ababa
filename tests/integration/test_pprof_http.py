"""/debug/pprof/profile over HTTP from the kernel (issue 25), with the clients people already use: `go tool pprof`
on the URL while `burn` runs on 4 CPUs (burn on top, the samples what the CPUs took, label sets and marks as
sample labels, the same shape as a console `profile` of the same load), `-symbolize=force` with the ELF giving
source lines, three kernels scraped at once by three clients while their consoles answer, a second profile while
one runs answered 429, and headless Chromium on the index page following its link to a profile go tool pprof
opens. And /debug/flamegraph (issue 39): the kernel's SVG of a window, well-formed, its boxes' widths adding up,
burn the widest tower, its chains and weights those of the pprof of the same window (profile?run=N) as
go tool pprof -raw reads them, Chromium drawing it (a screenshot in build/test-logs/) and its search lighting
burn_inner; refused as profiles are.

Each kernel is booted with pprof.http=6060, QEMU forwarding a free host TCP port to it.
"""

import os
import re
import subprocess
import sys
import threading
import urllib.error
import urllib.parse
import urllib.request
import xml.etree.ElementTree as ET

import pytest

from kprof_qemu import ELF, TOP, KprofError, boot_kernel, cpu_ticks, poll
from kprof_pprof import comment_fields, decode, go_pprof, pb2, strings  # noqa: F401 -- pb2 is a fixture
from kprof_httpd import Links  # the index page's <a href> collector

sys.path.insert(0, os.path.join(TOP, "scripts"))
import kprof_profile as kp  # noqa: E402

# Kernels this module boots (conftest.py fails a boot past BOOTS), by the test that boots them -- a module kernel
# counts for the first test that uses it, a test named alone needs a fresh one:
# test_a_kernel_scraped_while_its_console_answers 1, test_flamegraph_is_refused_as_profiles_are 1;
# test_three_kernels_scraped_at_once 3 (make test-full only).
BOOTS = 5

GUEST_PORT = 6060
BURN_LEAF = "burn_inner"
BURN_CALLERS = ["burn_middle", "burn_outer", "burn_task"]


def boot(request, name, cmdline=""):
    return boot_kernel("pprof.http=%d" % GUEST_PORT, cmdline, smp=4, mem=256, http=GUEST_PORT, name=name, dhcp=True)


@pytest.fixture(scope="module")
def kernel(request):
    k = boot(request, request.node.name)
    try:
        yield k
    finally:
        k.kill()


def url(k, path):
    return "http://127.0.0.1:%d%s" % (k.http_port, path)


def burn(k, ms, tasks, how=""):
    poll("no burn run going", lambda: "running" not in k.cmd("burn"), timeout=60, every=0.1)
    out = k.cmd(("burn %d %d %s" % (ms, tasks, how)).strip())
    m = re.fullmatch(r"burn: started (\d+) tasks for \d+ ms(?: [^(]+)? \(pids((?: \d+)*)\)", out)
    assert m, "burn said %r" % out
    return [int(p) for p in m.group(2).split()]


def label_jobs(k, pids):
    for i, pid in enumerate(pids):
        k.cmd("label %d job=%s" % (pid, "a" if i == 0 else "b"))


def fetch_into(tmp):
    """go_pprof's options here: pprof's home and the profiles it fetches in tmp, its own symbolization, 180 s;
    it returns (stdout, the profiles saved)."""
    return dict(home=tmp, symbolize=None, timeout=180, fetched=True)


def load(pb2, path):
    with open(path, "rb") as f:
        return decode(pb2, f.read())


def sample_labels(prof, s):
    """{key: [values]} of a sample: strings as they are, numbers as ints."""
    out = {}
    for lb in s.label:
        out.setdefault(strings(prof, lb.key), []).append(strings(prof, lb.str) if lb.str else lb.num)
    return out


def leaf_names(prof, s):
    """The function names of a sample's frames, leaf first (None for a location without a line)."""
    locs = {l.id: l for l in prof.location}
    funcs = {f.id: strings(prof, f.name) for f in prof.function}
    names = []
    for lid in s.location_id:
        loc = locs[lid]
        names.append(funcs[loc.line[0].function_id] if loc.line else None)
    return names


def top_rows(text):
    """-top's rows: [(flat, flat%, name)]."""
    rows = []
    for line in text.splitlines():
        f = line.split()
        if len(f) >= 6 and re.fullmatch(r"[\d.]+%", f[1] or ""):
            rows.append((f[0], f[1], f[-1]))
    return rows


# ---- /debug/flamegraph (issue 39): the kernel's own SVG of a window, and the pprof of that very window ----------

SVG_NS = "{http://www.w3.org/2000/svg}"
FLAME_CLASSES = {"plain", "irqs-off", "in-irq", "in-irq-irqs-off", "let-in", "idle", "runnable", "waiting"}
TITLE = re.compile(r"(.*?)(?:\+0x[0-9a-f]+(?:\.\.0x[0-9a-f]+)?)? \((\d+) samples, [\d.]+%\)")


def flame_boxes(root):
    """The flame graph's boxes, {id: {...}}: parent id (None for the root), depth, weight, count, name (from the
    tooltip), classes, and the rect's x and width, from each <g class="f CLASS"> of the SVG (or of Chromium's DOM)."""
    boxes = {}
    for g in root.iter(SVG_NS + "g"):
        classes = g.get("class", "").split()
        if "f" not in classes:
            continue
        title = TITLE.fullmatch(g.find(SVG_NS + "title").text.split(" [")[0])
        assert title, g.find(SVG_NS + "title").text
        rect = g.find(SVG_NS + "rect")
        boxes[int(g.get("data-id"))] = dict(
            parent=int(g.get("data-p")) if g.get("data-p") else None, depth=int(g.get("data-d")),
            weight=int(g.get("data-w")), count=int(g.get("data-n")), name=title.group(1), classes=set(classes),
            x=float(rect.get("x")), width=float(rect.get("width")))
        assert int(title.group(2)) == boxes[int(g.get("data-id"))]["count"]
    return boxes


def flame_chains(boxes):
    """{chain of names, outermost first: [self count, self weight]} -- what each box holds less its children."""
    chains, kids = {}, {}
    for i, b in boxes.items():
        if b["parent"] is not None:
            kids.setdefault(b["parent"], []).append(i)
    for i, b in boxes.items():
        path, j = [], i
        while boxes[j]["parent"] is not None:
            path.append(boxes[j]["name"])
            j = boxes[j]["parent"]
        count = b["count"] - sum(boxes[c]["count"] for c in kids.get(i, []))
        weight = b["weight"] - sum(boxes[c]["weight"] for c in kids.get(i, []))
        if count:
            row = chains.setdefault(tuple(reversed(path)), [0, 0])
            row[0] += count
            row[1] += weight
    return chains


def raw_chains(raw):
    """The same of `go tool pprof -raw`'s text: each sample's locations named by their function (0xADDR when a
    location has none), outermost first, with its two values summed."""
    samples, _, locations = raw.partition("\nLocations\n")
    locations = locations.partition("\nMappings\n")[0]
    names = {}
    for line in locations.splitlines():
        m = re.fullmatch(r"\s*(\d+): 0x([0-9a-f]+)(?: M=\d+)?(.*)", line)
        if m:
            name = re.sub(r"\s*:\d+ s=\d+\s*$", "", m.group(3)).strip()
            names[m.group(1)] = name or "0x" + m.group(2)
    chains = {}
    for m in re.finditer(r"(?m)^\s+(\d+)\s+(\d+): ([\d ]+?)\s*$", samples.partition("\nSamples:\n")[2]):
        row = chains.setdefault(tuple(reversed([names[i] for i in m.group(3).split()])), [0, 0])
        row[0] += int(m.group(1))
        row[1] += int(m.group(2))
    return chains


def chromium(*args, timeout=180):
    r = subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu"] + list(args), capture_output=True,
                       timeout=timeout)
    assert r.returncode == 0, r.stderr[-2000:]
    return r.stdout


@pytest.fixture
def flame_burn(kernel):
    """Each flame graph test's load: a burn of 30 s on 4 CPUs (the first task labelled job=a, the others job=b),
    longer than any of these tests takes however slow the host, so no window of theirs outlives it; stopped with
    `burn stop` when the test is done, so the next test waits out nothing. These tests come first in the module,
    on its fresh kernel."""
    label_jobs(kernel, burn(kernel, 30000, 4))
    yield
    assert kernel.cmd("burn stop") == "burn: stopping 4 tasks"
    poll("the burn stopped", lambda: kernel.cmd("burn").startswith("burn: last run 4 tasks"), timeout=30, every=0.1)
    assert kernel.cmd("burn stop") == "burn: no run going"


def test_flamegraph_is_refused_as_profiles_are(kernel, flame_burn):
    from kprof_httpd import Response, exchange, fetching, get
    # the index links it; a bad parameter is one line of 400 and starts nothing; a DNS name the server was not
    # given is 421; a run no flame graph kept is 404
    with urllib.request.urlopen(url(kernel, "/debug/pprof/"), timeout=60) as r:
        assert b'href="/debug/flamegraph?seconds=5"' in r.read()
    for query, said in (("seconds=0", "seconds must be a whole number 1..300\n"),
                        ("kind=heap", "kind must be cpu or wall\n"),
                        ("tag=job", "tag must be key:value, a label pair as the console's profile key=value filter "
                                    "takes\n")):
        r = get(kernel, "/debug/flamegraph?" + query)
        assert (r.status, r.text()) == (400, said)
    assert "running an HTTP" not in kernel.cmd("net")
    assert Response(exchange(kernel, b"GET /debug/flamegraph?seconds=1 HTTP/1.1\r\nHost: evil.example\r\n\r\n")).status \
        == 421
    assert get(kernel, "/debug/pprof/profile?run=999999").status == 404
    # one profile at a time: a flame graph while a profile runs is 429 with the busy line, and the other way round
    with fetching(kernel, "/debug/flamegraph?seconds=3&tag=job:a", "flame graph (/debug/flamegraph)") as first:
        r = get(kernel, "/debug/pprof/profile?seconds=1")
        assert r.status == 429 and re.fullmatch(r"profile: busy: an HTTP flame graph \(/debug/flamegraph\), \d+ s "
                                                r"left\n", r.text()), r.raw
        assert get(kernel, "/debug/flamegraph?seconds=1").status == 429
    r = first["r"]
    assert r.status == 200 and b"tag=job=a" in r.body
    # the filter kept only the samples labelled job=a: one burning task's, of the four
    boxes = flame_boxes(ET.fromstring(r.body))
    assert 0 < boxes[0]["count"] <= 3 * 100 + 5, boxes[0]


def test_flamegraph_is_the_kernels_svg_of_the_window_its_pprof_has(kernel, flame_burn, tmp_path):
    with urllib.request.urlopen(url(kernel, "/debug/flamegraph?seconds=2"), timeout=120) as r:
        assert r.status == 200 and r.headers["Content-Type"].startswith("image/svg+xml")
        svg = r.read()
    root = ET.fromstring(svg)  # well-formed XML
    assert root.tag == SVG_NS + "svg" and root.get("width") == "1200"
    facts = " ".join(t.text or "" for t in root.iter(SVG_NS + "text") if t.get("id") in ("facts", "facts2"))
    for fact in ("cpu profile", "source=tick", "period_ns=10000000", "cpus=4", "dropped=0", "tag=none",
                 "build_id=" + kp.elf_build_id(ELF)):
        assert fact in facts, facts
    assert FLAME_CLASSES <= {r.get("class") for r in root.iter(SVG_NS + "rect")}, "the legend"
    boxes = flame_boxes(root)
    top = boxes[0]
    assert top["parent"] is None and top["width"] == 1200.0
    assert top["count"] == int(re.search(r"samples=(\d+)", facts).group(1))
    for i, b in boxes.items():
        kids = [c for c in boxes.values() if c["parent"] == i]
        # side by side from the parent's left edge, their widths adding up to the parent's less its own time
        assert sum(c["weight"] for c in kids) <= b["weight"]
        if kids and sum(c["weight"] for c in kids) == b["weight"]:
            assert round(sum(c["width"] for c in kids), 2) == b["width"], (b, kids)
        assert all(b["x"] - 0.01 <= c["x"] and c["x"] + c["width"] <= b["x"] + b["width"] + 0.01 for c in kids)
        assert all(c["depth"] == b["depth"] + 1 for c in kids)
    # the widest tower is burn's: the widest child at every level, from the root up to its leaf
    tower, i = [], 0
    while any(c["parent"] == i for c in boxes.values()):
        i = max((j for j, c in boxes.items() if c["parent"] == i), key=lambda j: boxes[j]["weight"])
        tower.append(boxes[i]["name"])
    assert tower[-4:] == list(reversed(BURN_CALLERS)) + [BURN_LEAF], tower
    # its numbers are the pprof profile's of the same window, as go tool pprof reads it
    run = re.search(r"run=(\d+)", facts).group(1)
    raw, saved = go_pprof(url(kernel, "/debug/pprof/profile?run=" + run), "-raw", **fetch_into(tmp_path))
    assert len(saved) == 1
    assert flame_chains(boxes) == raw_chains(raw), (flame_chains(boxes), raw)


def test_flamegraph_in_chromium_searches_and_draws(kernel, flame_burn):
    from kprof_qemu import LOG_DIR
    os.makedirs(LOG_DIR, exist_ok=True)
    png = os.path.join(LOG_DIR, "test_pprof_http.flamegraph.png")
    if os.path.exists(png):
        os.unlink(png)
    # one window: drawn (the screenshot) and its DOM once its script has run the search the URL's fragment presets
    dom = chromium("--screenshot=" + png, "--window-size=1200,400", "--dump-dom",
                   url(kernel, "/debug/flamegraph?seconds=2#search=" + BURN_LEAF))
    with open(png, "rb") as f:
        head = f.read()
    assert head[:8] == b"\x89PNG\r\n\x1a\n" and len(head) > 2000, len(head)
    # burn_inner's boxes, and only they, lit
    boxes = flame_boxes(ET.fromstring(dom))
    lit = {i for i, b in boxes.items() if "hit" in b["classes"]}
    assert lit and lit == {i for i, b in boxes.items() if BURN_LEAF in b["name"]}, boxes
    assert re.search(rb">matched %d boxes<" % len(lit), dom), dom[-3000:]
    assert max(boxes[i]["weight"] for i in lit) * 2 > boxes[0]["weight"], "burn_inner is most of 4 burning CPUs"


@pytest.fixture(scope="module")
def burn_profile(kernel, pb2, tmp_path_factory):
    """`go tool pprof -raw` on profile?seconds=5 while burn runs on 4 CPUs (the first task labelled job=a, the
    others job=b), with `cpus` read before and after; the profile go tool pprof saved, decoded."""
    tmp = tmp_path_factory.mktemp("burn")
    label_jobs(kernel, burn(kernel, 20000, 4))
    before = cpu_ticks(kernel)[1]  # {cpu: ticks so far}
    raw, saved = go_pprof(url(kernel, "/debug/pprof/profile?seconds=5"), "-raw", **fetch_into(tmp))
    after = cpu_ticks(kernel)[1]
    assert len(saved) == 1, saved
    return dict(raw=raw, path=saved[0], prof=load(pb2, saved[0]), before=before, after=after, tmp=tmp)


def test_go_tool_pprof_raw_reads_every_cpus_samples(burn_profile):
    prof, raw = burn_profile["prof"], burn_profile["raw"]
    assert [(strings(prof, t.type), strings(prof, t.unit)) for t in prof.sample_type] == \
        [("samples", "count"), ("cpu", "nanoseconds")]
    assert re.search(r"(?m)^PeriodType: cpu nanoseconds$", raw) and re.search(r"(?m)^Period: 10000000$", raw), raw[:400]
    fields = comment_fields(prof)
    assert fields["source"] == "tick" and fields["dropped"] == "0" and fields["cpus"] == "4", fields
    total = sum(s.value[0] for s in prof.sample)
    assert total == int(fields["samples"]), (total, fields)
    # each sample weighs its period, a tick let in after interrupts-off code every period it stood for
    for s in prof.sample:
        let_in = "let-in" in sample_labels(prof, s).get("context", [])
        assert s.value[1] % 10000000 == 0 and (s.value[1] >= s.value[0] * 10000000 if let_in else
                                               s.value[1] == s.value[0] * 10000000), (s.value, let_in)
    per_cpu = {}
    for s in prof.sample:
        cpu = int(sample_labels(prof, s)["cpu"][0])
        per_cpu[cpu] = per_cpu.get(cpu, 0) + s.value[0]
    assert set(per_cpu) == {0, 1, 2, 3}, per_cpu
    for cpu, n in per_cpu.items():
        # every sample is one of that CPU's ticks, all taken between the two `cpus` reads
        assert 0 < n <= burn_profile["after"][cpu] - burn_profile["before"][cpu], (cpu, n, burn_profile)
    assert prof.duration_nanos == int(fields["window_ms"]) * 1000000 and prof.duration_nanos >= 5000000000
    # the kernel is the mapping, with this build's id
    assert len(prof.mapping) == 1 and strings(prof, prof.mapping[0].build_id) == kp.elf_build_id(ELF)


def test_burn_is_on_top_with_its_callers(burn_profile):
    top, _ = go_pprof(burn_profile["path"], "-top", **fetch_into(burn_profile["tmp"]))
    rows = top_rows(top)
    assert rows and rows[0][2] == BURN_LEAF, top
    prof = burn_profile["prof"]
    chains = [leaf_names(prof, s) for s in prof.sample if leaf_names(prof, s)[:1] == [BURN_LEAF]]
    assert any(c[1:4] == BURN_CALLERS for c in chains), chains[:5]


def test_label_sets_are_sample_labels(burn_profile):
    prof = burn_profile["prof"]
    jobs = {}
    for s in prof.sample:
        labels = sample_labels(prof, s)
        if leaf_names(prof, s)[:1] == [BURN_LEAF]:
            assert len(labels.get("job", [])) == 1, labels
            jobs[labels["job"][0]] = jobs.get(labels["job"][0], 0) + s.value[0]
    assert set(jobs) == {"a", "b"}, jobs
    tags, _ = go_pprof(burn_profile["path"], "-tags", **fetch_into(burn_profile["tmp"]))
    assert re.search(r"(?m)^ job: Total ", tags) and re.search(r"(?m)^ cpu: Total ", tags), tags


def test_the_shape_is_the_console_profiles(kernel, burn_profile):
    """The same load profiled on the console after the HTTP profile: burn_inner on top in both, and the
    functions of the load each gives a tenth of its samples to are the same."""
    poll("no burn run going", lambda: "running" not in kernel.cmd("burn"), timeout=60, every=0.2)
    label_jobs(kernel, burn(kernel, 8000, 4))
    text = kernel.cmd("profile 2000", timeout=60)
    console = {}
    for line in text.splitlines():
        m = re.match(r"\s*([\d.]+)%\s+(\d+)\s+(\S+?)(?:\+0x[0-9a-f]+)?(?:\s|$)", line)
        if m:
                name = m.group(3).split("+")[0]
                console[name] = console.get(name, 0) + float(m.group(1))
    prof = burn_profile["prof"]
    total = sum(s.value[0] for s in prof.sample)
    http = {}
    for s in prof.sample:
        leaf = leaf_names(prof, s)[0]
        http[leaf] = http.get(leaf, 0) + 100.0 * s.value[0] / total
    assert max(console, key=console.get) == BURN_LEAF == max(http, key=http.get), (console, http)
    # The idle loop's share is how much of each window the burn tasks were not yet (or no longer) running, which
    # a loaded host moves from one window to the other; the functions of the load are what must agree.
    busy = lambda shares: {f for f, p in shares.items() if p >= 10 and f != "sched_idle_loop"}  # noqa: E731
    assert busy(console) == busy(http), (console, http)


def test_the_elf_gives_source_lines(kernel, tmp_path):
    """`go tool pprof build/kprof.elf URL`: the kernel's mapping is not marked symbolised, so pprof symbolises
    it with the ELF, and -lines shows burn_inner's file and line."""
    burn(kernel, 8000, 4)
    top, _ = go_pprof(url(kernel, "/debug/pprof/profile?seconds=2"), "-lines", "-top", ELF, **fetch_into(tmp_path))
    assert re.search(r"burn_inner \S*kernel/shell/cmd_burn\.c:\d+", top), top


def test_interrupts_off_time_is_marked(kernel, pb2, tmp_path):
    """burn's irqsoff slices hold the tick off: those samples carry context=let-in and held_off_us."""
    burn(kernel, 8000, 2, "irqsoff")
    _, saved = go_pprof(url(kernel, "/debug/pprof/profile?seconds=3"), "-raw", **fetch_into(tmp_path))
    prof = load(pb2, saved[0])
    marked = [sample_labels(prof, s) for s in prof.sample if "context" in sample_labels(prof, s)]
    assert any(l["context"] == ["let-in"] and l.get("held_off_us", [0])[0] > 0 for l in marked), marked[:5]


def test_a_second_profile_while_one_runs_is_429_and_pages_still_answer(kernel, tmp_path):
    # 12 s: the four requests below, each a second or two on a loaded host, fit in it with room to spare once the
    # profile is seen running
    burn(kernel, 17000, 4)
    first = {}

    def fetch():
        try:
            with urllib.request.urlopen(url(kernel, "/debug/pprof/profile?seconds=12"), timeout=300) as r:
                first["status"], first["body"] = r.status, r.read()
        except Exception as e:  # reported below
            first["error"] = e

    t = threading.Thread(target=fetch)
    t.start()
    try:
        poll("the first profile running", lambda: "; running an HTTP profile (/debug/pprof/profile)" in kernel.cmd("net"),
             timeout=60, every=0.2)
        assert re.fullmatch(r"profile: busy: an HTTP profile \(/debug/pprof/profile\), \d+ s left",
                            kernel.cmd("profile 100"))
        with pytest.raises(urllib.error.HTTPError) as busy:
            urllib.request.urlopen(url(kernel, "/debug/pprof/profile?seconds=1"), timeout=60)
        assert busy.value.code == 429 and int(busy.value.headers["Retry-After"]) >= 1
        # the one busy line, as the console says it; the seconds are those Retry-After gives
        said = busy.value.read().decode()
        assert re.fullmatch(r"profile: busy: an HTTP profile \(/debug/pprof/profile\), (\d+) s left\n", said), said
        # the worker answers by itself meanwhile: it is not held by the profile
        with urllib.request.urlopen(url(kernel, "/debug/pprof/"), timeout=60) as r:
            assert r.status == 200 and b"profile?seconds=" in r.read()
        with urllib.request.urlopen(url(kernel, "/debug/pprof/lscpu"), timeout=60) as r:
            assert r.status == 200 and r.read()
        assert kernel.cmd("uptime").startswith("up ")
    finally:
        t.join(300)
    assert first.get("status") == 200 and first["body"][:2] == b"\x1f\x8b", first


@pytest.mark.full_only
def test_three_kernels_scraped_at_once(request, tmp_path):
    """Three kernels, each burning, each profiled by its own go tool pprof at the same time for 20 s; every
    console answers while they run (`make test-full`; `make test` scrapes one kernel, below)."""
    scraped_at_once(request, tmp_path, 3, profile_s=20)


def test_a_kernel_scraped_while_its_console_answers(request, tmp_path):
    """One kernel burning, profiled by go tool pprof for 8 s; its console answers while the profile runs and the
    profile's top is the burn: what the three kernels of `make test-full` each do."""
    scraped_at_once(request, tmp_path, 1, profile_s=8)


def scraped_at_once(request, tmp_path, count, profile_s):
    """count kernels, each burning, each profiled by its own go tool pprof at the same time; every console
    answers while they run.

    The consoles are asked in turn, round and round, until each has said its profile is running: asking one
    kernel until it answers and only then the next let a short profile on the third end before it was asked
    (a loaded host takes seconds per command). Each profile lasts profile_s seconds of the kernel's clock, so
    only count commands taking that long in all could miss one, and then the message says so."""
    kernels, procs, seen = [], [], set()
    try:
        for i in range(count):
            kernels.append(boot(request, "%s-%d" % (request.node.name, i)))
        for k in kernels:
            burn(k, 25000 + 1000 * profile_s, 4)
        for i, k in enumerate(kernels):
            d = tmp_path / ("k%d" % i)
            d.mkdir()
            env = dict(os.environ, HOME=str(d), PPROF_TMPDIR=str(d))
            # -timeout: go tool pprof waits for the headers only 1.5 times the seconds asked by default, and the
            # kernel sends them when its window ends, after a loaded host has stretched it
            procs.append(subprocess.Popen(["go", "tool", "pprof", "-top", "-timeout", str(profile_s + 120),
                                           url(k, "/debug/pprof/profile?seconds=%d" % profile_s)],
                                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env))

        def each_seen_running():
            for i, k in enumerate(kernels):
                if i in seen:
                    continue
                if "; running an HTTP profile" in k.cmd("net"):
                    assert k.cmd("uptime").startswith("up ")
                    seen.add(i)
                elif procs[i].poll() is not None:
                    out, err = procs[i].communicate()
                    raise KprofError("kernel %d: its go tool pprof ended (exit %d) before its console was seen "
                                     "answering during the profile:\n%s%s" % (i, procs[i].returncode, out, err))
            return len(seen) == len(kernels)
        poll("each console answering while its profile runs", each_seen_running, timeout=120, every=0.3)
        for p in procs:
            out, err = p.communicate(timeout=300)
            assert p.returncode == 0, err
            rows = top_rows(out)
            assert rows and rows[0][2] == BURN_LEAF, out
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.communicate()
        for k in kernels:
            k.kill()


def test_the_index_in_chromium_leads_to_a_profile_go_tool_pprof_opens(kernel, tmp_path):
    index = url(kernel, "/debug/pprof/")
    r = subprocess.run(["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom", index],
                       capture_output=True, text=True, timeout=180)
    assert r.returncode == 0, r.stderr[-2000:]
    links = Links()
    links.feed(r.stdout)
    short = [h for h in links.hrefs if re.fullmatch(r"profile\?seconds=\d+", h)]
    assert short, r.stdout[:2000]
    burn(kernel, 15000, 4)
    top, _ = go_pprof(urllib.parse.urljoin(index, short[0]), "-top", **fetch_into(tmp_path))
    assert top_rows(top)[0][2] == BURN_LEAF, top
