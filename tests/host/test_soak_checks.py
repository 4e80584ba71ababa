"""The soak's own checks (tests/soak/soak.py) on the host, so a soak that passes means something: check_report
accepts every report the kernel prints (made here by scripts/kprof_profile.py's report_lines, which
test_kprof_profile.py proves prints the kernel's text) and refuses each kind of inconsistent count; check_raw
refuses a raw profile whose trailer disagrees; the models of the line editor and of the UDP shell's refusals
predict what docs/udp-shell.md and kernel/shell/lineedit.c say.
"""

import os
import random
import re
import sys

import pytest

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(TOP, "scripts"))
sys.path.insert(0, os.path.join(TOP, "tests", "soak"))
import kprof_profile as kp  # noqa: E402
import soak  # noqa: E402

SYMS = [(0x1000, 0x80, b"MemCpy"), (0x1100, 0x100, b"Copy"), (0x1200, 0x300, b"Receive"), (0x1600, 0x40, b"Spin"),
        (0x1700, 0x200, b"Main")]


def random_report(rng, chains, pid=None, label=None):
    tab = kp.Symtab(SYMS, 0x1000, 0x10000)
    samples = []
    for _ in range(rng.randint(0, 400)):
        leaf = rng.choice(SYMS)
        frames = [leaf[0] + rng.randrange(0x40)] + [rng.choice(SYMS)[0] + rng.randrange(1, 0x10)
                                                    for _ in range(rng.randint(0, 7))]
        labels = rng.choice([(), (("job", "a"),), (("job", "b"), ("soak", "c"))])
        samples.append(kp.Sample(rng.randrange(4), rng.choice([1, 2, 3]), 0, labels, tuple(frames)))
    fold, _ = kp.fold_samples(samples, tab, pid=pid, label=label)
    lines = kp.report_lines(kp.tick_run(300), fold, chains, pid, label)
    return "\n".join(lines), fold.samples


@pytest.mark.parametrize("seed", range(40))
def test_check_report_accepts_the_kernels_reports(seed):
    rng = random.Random(seed)
    chains = rng.choice([1, 2, 8, 128])
    pid = rng.choice([None, 2])
    label = rng.choice([None, ("job", "a"), ("soak", "c")])
    text, samples = random_report(rng, chains, pid, label)
    assert soak.check_report(text, 300, chains, pid, label) == samples


def tampered(text):
    """Each way of making a report's counts disagree, one at a time."""
    lines = text.split("\n")
    out = []
    header = lines[1].split(" ", 1)
    out.append(("header total + 1", "\n".join(lines[:1] + ["%d %s" % (int(header[0]) + 1, header[1])] + lines[2:])))
    for i, line in enumerate(lines):
        if soak.RX_LEAF.fullmatch(line):
            pct, count, rest = line.split(" ", 2)
            out.append(("a chain count + 1", "\n".join(lines[:i] + ["%s %d %s" % (pct, int(count) + 1, rest)]
                                                        + lines[i + 1:])))
            break
    more = [i for i, l in enumerate(lines) if l.startswith("... ")]
    if more:
        out.append(("the more-chains line dropped", "\n".join(lines[:more[0]] + lines[more[0] + 1:])))
    if lines[3].startswith("labels: "):
        out.append(("a label share changed", "\n".join(lines[:3] + [lines[3].replace("(", "(1", 1)] + lines[4:])))
    more_on_0 = re.sub(r" 0:(\d+)", lambda m: " 0:%d" % (int(m.group(1)) + 1), lines[2])
    out.append(("a per-CPU count + 1", "\n".join(lines[:2] + [more_on_0] + lines[3:])))
    out.append(("window shorter than asked", text.replace("profiled 300 ms", "profiled 299 ms", 1)))
    return out


def test_check_report_refuses_counts_that_disagree():
    rng = random.Random(7)
    tried = set()
    for _ in range(30):
        text, samples = random_report(rng, 2)
        if samples == 0:
            continue
        for what, bad in tampered(text):
            tried.add(what)
            with pytest.raises(soak.SoakFailure):
                soak.check_report(bad, 300, 2)
    assert tried >= {"header total + 1", "a chain count + 1", "the more-chains line dropped", "a per-CPU count + 1",
                     "a label share changed", "window shorter than asked"}, tried


def test_check_report_refuses_too_many_chains_and_a_wrong_empty_reason():
    text, _ = random_report(random.Random(3), 8)
    with pytest.raises(soak.SoakFailure):
        soak.check_report(text, 300, 1)
    empty = ("profiled 300 ms\n0 samples on 0 cpus, 0 dropped, source tick at 100 Hz (no usable PMU)\n"
             "per cpu: 0:0 1:0 2:0 3:0\nno samples: nothing was sampled in the window")
    assert soak.check_report(empty, 300, 8) == 0
    with pytest.raises(soak.SoakFailure):
        soak.check_report(empty, 300, 8, pid=5)


def test_check_raw_refuses_a_trailer_that_disagrees(monkeypatch):
    monkeypatch.setattr(soak, "_build_id", ["ab12"])
    head = "# kprof raw v1 source=tick period_ns=10000000 window_ms=300 cpus=4 build_id=ab12\n"
    body = "s 0 5 100 job=a 0x1000 0x1105\ns 1 5 200 - 0x1200\n"
    assert soak.check_raw(head + body + "# kprof raw end samples=2 dropped=0", 300) == 2
    assert soak.check_raw(head + body + "# kprof raw end samples=2 dropped=0", 300, pid=5) == 2
    for bad, kw in [(head + body + "# kprof raw end samples=3 dropped=0", {}),
                    (head + body + "# kprof raw end samples=2 dropped=1", {}),
                    (head + body + "# kprof raw end samples=2 dropped=0", {"pid": 6}),
                    (head + body + "# kprof raw end samples=2 dropped=0", {"label": ("job", "a")}),
                    (head.replace("ab12", "cd34") + body + "# kprof raw end samples=2 dropped=0", {}),
                    (head + "s 0 5 300 - 0x1000\n" + body + "# kprof raw end samples=3 dropped=0", {})]:
        with pytest.raises(soak.SoakFailure):
            soak.check_raw(bad, 300, **kw)


def test_line_editor_model():
    assert soak.line_editor("ab\x08c") == ("ac", False, 0)
    assert soak.line_editor("junk\x03ps\x15xy\x1b[A") == ("xy[A", False, 1)
    assert soak.line_editor("x" * 256) == ("x" * 255, True, 0)
    assert soak.line_editor("x" * 300 + "\x08" * 100) == ("x" * 155, True, 0)
    assert soak.line_editor("x" * 300 + "\x15ok") == ("ok", False, 0)
    assert soak.shell_answer("  ") is None
    assert soak.shell_answer("frob now") == "unknown command: frob (try help)"
    assert soak.shell_answer(" ".join("w" * 17)) == "too many words (max 16)"
    with pytest.raises(ValueError):
        soak.shell_answer("ps x")


def test_udp_answer_model():
    assert soak.udp_answer(b"x" * 256) == soak.UDP_TOO_LONG
    assert soak.udp_answer(b"x" * 255 + b"\r\n") == ("reply", "unknown command: %s (try help)\n" % ("x" * 32), 1)
    assert soak.udp_answer(b"help\x00") == soak.UDP_NOT_TEXT
    assert soak.udp_answer(b"help\nps\n") == soak.UDP_MULTILINE
    assert soak.udp_answer(b"") == ("reply", "", 0)
    assert soak.udp_answer(b"\t \n") == ("reply", "", 0)
    with pytest.raises(ValueError):
        soak.udp_answer(b"help")
    rng = random.Random(1)
    for _ in range(200):
        w = soak.junk_word(rng)
        assert "=" not in w and w not in ("all", "raw", "-") and not w.isdigit()


# ---- the heap's chains, for a heap that did not come back ----------------------------------------------------

SITES_BEFORE = """heap: 3 chains hold 300 bytes in 3 objects; since boot 9 allocations, 6 frees
  live bytes  objects   allocs    frees  chain (call site first)
         200        2        5        3  net_rx+0x10 <- net_task+0x20
         100        1        4        3  task_spawn+0x44 <- kmain+0xe7"""

SITES_AFTER = """heap: 4 chains hold 8592 bytes in 6 objects; since boot 14 allocations, 8 frees
  live bytes  objects   allocs    frees  chain (call site first)
        8192        2        2        0  leak_one+0x1d <- cmd_mem+0x91 <- shell_run_line+0x5e
         200        2        6        4  net_rx+0x10 <- net_task+0x20
         100        1        4        3  task_spawn+0x44 <- kmain+0xe7
         100        1        2        1  [other]"""


def test_the_chains_that_grew_are_named_biggest_first():
    before, after = soak.parse_heap_sites(SITES_BEFORE), soak.parse_heap_sites(SITES_AFTER)
    assert before == {"net_rx+0x10 <- net_task+0x20": (200, 2), "task_spawn+0x44 <- kmain+0xe7": (100, 1)}
    assert soak.grown_chains(before, after) == [
        (8192, 2, "leak_one+0x1d <- cmd_mem+0x91 <- shell_run_line+0x5e"), (100, 1, "[other]")]
    assert soak.grown_chains(after, after) == []
    assert soak.grown_chains(after, before) == []


def test_heap_sites_refuses_what_is_not_mem_sites():
    assert soak.parse_heap_sites("usage: mem [sites [N] | leak N BYTES | leak free]") is None
    assert soak.parse_heap_sites(SITES_BEFORE + "\nmem sites: out of memory") is None
