"""The heap profile (issue 38, part 1): who holds the kernel heap, by allocation chain -- `mem sites` on the shell,
/debug/pprof/heap and /debug/pprof/allocs as Go serves its own (kprof in QEMU with 4 CPUs, pprof.http=6060).

- `mem leak N BYTES` keeps N blocks on purpose, all from one chain (leak_one under cmd_mem): `mem sites` then
  names that chain first with N objects and N * BYTES bytes, and after `mem leak free` the chain holds nothing.
- /debug/pprof/heap is pprof with Go's four sample types (alloc_objects/count, alloc_space/bytes,
  inuse_objects/count, inuse_space/bytes), inuse_space first, period type space/bytes, the kernel's mapping and
  build id; /debug/pprof/allocs is the same table with alloc_space first. `go tool pprof
  -sample_index=inuse_space -top` of a scrape made during the leak has leak_one on top, and `-base` between a
  scrape before the leak and one during it shows the leak's chain and nothing else, with exactly its bytes; a
  scrape after `mem leak free` has no live bytes on it.
- ?debug=1 is Go's legacy text form, which `go tool pprof` reads too; ?gc=1 is accepted; a bad ?debug is 400.
- The index lists heap and allocs.
- Grafana Alloy's pyroscope.scrape with its default profiling_config (every profile it enables by default, none
  turned off): each path with the query Alloy sends -- process_cpu a delta profile (`?seconds=` the interval less
  a second: 1 with `scrape_interval = "2s"`), memory (`/debug/pprof/allocs`), block, goroutine and mutex with none
  -- answers 200 with a profile `go tool pprof` opens (Alloy itself is not installable here).

Counts and content only: the leak's sizes are exact (every allocation is counted, none sampled). The module shares
one kernel; each test that leaks frees its leak before it ends.
"""

import os
import re
import sys

import pytest

from kprof_httpd import GUEST_PORT, Links, assert_framed, assert_refused, get
from kprof_net import booted_with_dhcp
from kprof_pprof import sample_chain as chain, sample_types as types
from kprof_pprof import decode, go_pprof, pb2, strings  # noqa: F401 -- pb2 is a fixture
from kprof_qemu import ELF, TOP, Kprof

sys.path.insert(0, os.path.join(TOP, "scripts"))
import kprof_profile as kp  # noqa: E402

# Kernels this module boots (conftest.py fails a boot past BOOTS): the module's one shared kernel.
BOOTS = 1

LEAK_FRAME = "leak_one"
TYPES = [("alloc_objects", "count"), ("alloc_space", "bytes"), ("inuse_objects", "count"), ("inuse_space", "bytes")]
SITE_ROW = re.compile(r"\s*(\d+)\s+(\d+)\s+(\d+)\s+(\d+)  (.*)")


@pytest.fixture(scope="module")
def k(request):
    yield from booted_with_dhcp(Kprof(smp=4, mem=256, http=GUEST_PORT, cmdline="pprof.http=%d" % GUEST_PORT,
                                      name=request.node.name))


@pytest.fixture
def leak(k):
    """Makes leaks with leak(n, bytes) and frees whatever is left when the test ends."""
    def make(n, size):
        out = k.cmd("mem leak %d %d" % (n, size))
        assert out == "mem: leaked %d blocks of %d bytes on purpose (`mem leak free` gives them back)" % (n, size), out
    yield make
    k.cmd("mem leak free")


def sites(k, n=100):
    """`mem sites N`: (the header line, [(live bytes, objects, allocs, frees, [frame names])])."""
    lines = k.cmd("mem sites %d" % n).split("\n")
    assert lines[1].split() == ["live", "bytes", "objects", "allocs", "frees", "chain", "(call", "site", "first)"], \
        lines
    rows = []
    for line in lines[2:]:
        m = SITE_ROW.fullmatch(line)
        assert m, line
        frames = [f.split("+")[0] for f in m.group(5).split(" <- ")]
        rows.append(tuple(int(m.group(i)) for i in range(1, 5)) + (frames,))
    return lines[0], rows


def fetch_profile(k, pb2, path, tmp_path, name):
    r = get(k, path)
    assert_framed(r, 200)
    f = tmp_path / name
    f.write_bytes(r.body)
    return decode(pb2, r.body), str(f), r




def leak_samples(prof):
    return [s for s in prof.sample if chain(prof, s)[:1] == [LEAK_FRAME]]


def top_rows(text):
    """go tool pprof -top's rows: [(flat, function)] in its order."""
    rows = []
    for line in text.split("\n"):
        f = line.split()
        if len(f) == 6 and f[1].endswith("%") and f[4].endswith("%"):
            rows.append((f[0], f[5]))
    return rows


def test_mem_sites_names_the_leak_first_and_forgets_it_when_freed(k, leak):
    k.cmd("mem leak free")
    header, rows = sites(k)
    assert re.fullmatch(r"heap: \d+ chains hold \d+ bytes in \d+ objects; since boot \d+ allocations, \d+ frees",
                        header), header
    assert not [r for r in rows if r[4][:1] == [LEAK_FRAME]], rows
    leak(48, 16384)  # 768 KiB: more than any chain the boot leaves
    _, rows = sites(k, 1)
    assert len(rows) == 1 and rows[0][:2] == (48 * 16384, 48), rows
    assert rows[0][4][0] == LEAK_FRAME and "cmd_mem" in rows[0][4][1:3] and "shell_run_line" in rows[0][4], rows
    assert rows[0][2] - rows[0][3] == 48, rows
    assert k.cmd("mem leak free") == "mem: freed 48 leaked blocks"
    _, rows = sites(k)
    assert not [r for r in rows if r[4][:1] == [LEAK_FRAME]], rows


def test_heap_is_gos_heap_profile_with_the_leak_on_top_and_base_shows_only_it(k, pb2, leak, tmp_path):
    k.cmd("mem leak free")
    before, before_path, r = fetch_profile(k, pb2, "/debug/pprof/heap", tmp_path, "before.pb.gz")
    assert r.headers["content-disposition"] == 'attachment; filename="heap"', r.headers
    assert types(before) == TYPES and strings(before, before.default_sample_type) == "inuse_space"
    assert (strings(before, before.period_type.type), strings(before, before.period_type.unit), before.period) == \
        ("space", "bytes", 1)
    assert len(before.mapping) == 1 and strings(before, before.mapping[0].build_id) == kp.elf_build_id(ELF)
    assert all(s.value[1] >= s.value[3] and s.value[0] >= s.value[2] for s in before.sample)

    leak(64, 8192)
    during, during_path, _ = fetch_profile(k, pb2, "/debug/pprof/heap", tmp_path, "during.pb.gz")
    mine = leak_samples(during)
    assert len(mine) == 1 and mine[0].value[2:] == [64, 64 * 8192], [list(s.value) for s in mine]
    top = top_rows(go_pprof(during_path, "-sample_index=inuse_space", "-top"))
    assert top and top[0][1] == LEAK_FRAME, top
    # between the two scrapes only the leak changed what is held
    diff = top_rows(go_pprof(during_path, "-sample_index=inuse_space", "-top", "-base", before_path))
    assert [f for f, fn in diff if f not in ("0", "0B")] and {fn for f, fn in diff if f not in ("0", "0B")} == \
        {LEAK_FRAME}, diff
    assert diff[0] == ("512kB", LEAK_FRAME), diff

    assert k.cmd("mem leak free") == "mem: freed 64 leaked blocks"
    after, after_path, _ = fetch_profile(k, pb2, "/debug/pprof/heap", tmp_path, "after.pb.gz")
    gone = leak_samples(after)
    assert len(gone) == 1 and gone[0].value[2:] == [0, 0] and gone[0].value[0] >= 64, [list(s.value) for s in gone]
    assert LEAK_FRAME not in [fn for _, fn in top_rows(go_pprof(after_path, "-sample_index=inuse_space", "-top"))]


def test_allocs_is_the_same_table_alloc_space_first(k, pb2, leak, tmp_path):
    leak(3, 1000)
    prof, path, r = fetch_profile(k, pb2, "/debug/pprof/allocs", tmp_path, "allocs.pb.gz")
    assert r.headers["content-disposition"] == 'attachment; filename="allocs"', r.headers
    assert types(prof) == TYPES and strings(prof, prof.default_sample_type) == "alloc_space"
    mine = leak_samples(prof)
    assert len(mine) == 1 and mine[0].value[2:] == [3, 3000], [list(s.value) for s in mine]
    assert "alloc_space" in go_pprof(path, "-top")


def test_debug_1_is_gos_text_form_and_pprof_reads_it(k, leak, tmp_path):
    leak(5, 4000)
    r = get(k, "/debug/pprof/heap?debug=1&gc=1")
    assert_framed(r, 200)
    assert r.headers["content-type"].startswith("text/plain")
    text = r.text()
    lines = text.split("\n")
    assert re.fullmatch(r"heap profile: \d+: \d+ \[\d+: \d+\] @ heap/1", lines[0]), lines[0]
    at = [i for i, line in enumerate(lines) if re.fullmatch(r"5: 20000 \[\d+: \d+\] @( 0x[0-9a-f]+)+", line)]
    assert len(at) == 1, text[:2000]
    assert re.fullmatch(r"#\t0x[0-9a-f]+\tleak_one\+0x[0-9a-f]+", lines[at[0] + 1]), lines[at[0] + 1]
    f = tmp_path / "heap.txt"
    f.write_text(text)
    assert "inuse_space" in go_pprof(str(f), "-raw")


def test_gc_is_accepted_and_a_bad_debug_is_400(k):
    assert_framed(get(k, "/debug/pprof/heap?gc=1"), 200)
    assert_framed(get(k, "/debug/pprof/allocs?gc=1"), 200)
    r = get(k, "/debug/pprof/heap?debug=7")
    assert_refused(r, 400)
    assert r.text() == "debug must be 0, 1 or 2\n"


def test_the_index_lists_heap_and_allocs(k):
    r = get(k, "/debug/pprof/")
    assert_framed(r, 200)
    links = Links()
    links.feed(r.text())
    assert {"heap", "heap?debug=1", "allocs"} <= set(links.hrefs), links.hrefs


# Grafana Alloy's pyroscope.scrape defaults (its DefaultProfilingConfig): name, path, delta. A delta profile is
# asked with seconds= the scrape interval less one second; the rest with no query at all.
ALLOY_DEFAULTS = [("process_cpu", "/debug/pprof/profile", True), ("memory", "/debug/pprof/allocs", False),
                  ("block", "/debug/pprof/block", False), ("goroutine", "/debug/pprof/goroutine", False),
                  ("mutex", "/debug/pprof/mutex", False)]


def test_every_profile_alloy_scrapes_by_default_answers(k, pb2, tmp_path):
    interval = 2  # scrape_interval = "2s": the shortest Alloy takes with a delta profile
    for name, path, delta in ALLOY_DEFAULTS:
        url = path + ("?seconds=%d" % (interval - 1) if delta else "")
        r = get(k, url, headers=["User-Agent: Alloy", "Accept-Encoding: gzip"])
        assert_framed(r, 200)
        prof = decode(pb2, r.body)
        assert prof.sample_type, (name, url)
        f = tmp_path / ("%s.pb.gz" % name)
        f.write_bytes(r.body)
        raw = go_pprof(str(f), "-raw")
        assert re.search(r"(?m)^PeriodType: ", raw) and re.search(r"(?m)^Samples:$", raw), (name, url, raw[:500])
