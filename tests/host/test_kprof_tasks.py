"""scripts/kprof_tasks.py on the host: the stack walk `prof tasks` does in gdb, over a synthetic stack, keeps
kernel/stacktrace.c's rules (inside the stack, strictly rising, a zero return address ends it, the caller of a
function caught on its push %rbp, its mov %rsp,%rbp or its ret taken from the stack); the header and frame lines
are the kernel's (tests/unit/test_cmd_tasks.c pins the kernel's side of the same lines); a dump parses back, and
lines out of the format are refused.
"""

import os
import sys

import pytest

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(TOP, "scripts"))
import kprof_tasks as kt  # noqa: E402
from kprof_profile import Symtab  # noqa: E402

LO, HI = 0x10000, 0x10100  # a 256-byte stack
TEXT = (0x1000, 0x3000)


class Memory:
    """Words of a synthetic stack and bytes of synthetic code; reads outside them fail the test."""

    def __init__(self, words, code=None):
        self.words_at = dict(words)
        self.code_at = code or {}

    def words(self, addr):
        assert LO <= addr and addr + 16 <= HI + 8, "read outside the stack at 0x%x" % addr
        return self.words_at.get(addr, 0), self.words_at.get(addr + 8, 0)

    def code(self, addr, n):
        return bytes(self.code_at.get(addr + i, 0x90) for i in range(n))


def chain(*frames):
    """A frame chain from LO + 0x20 upwards: each frame [saved rbp][return address], 0x20 apart."""
    words = {}
    at = LO + 0x20
    for i, ret in enumerate(frames):
        words[at] = at + 0x20 if i + 1 < len(frames) else 0
        words[at + 8] = ret
        at += 0x20
    return words


def test_walk_follows_the_chain_to_the_zero_return_address():
    m = Memory(chain(0x1010, 0x1120, 0x1230, 0))
    assert kt.walk(LO + 0x20, LO, HI, m.words) == [0x1010, 0x1120, 0x1230]


def test_walk_stops_at_a_frame_that_does_not_rise_or_leaves_the_stack():
    words = chain(0x1010, 0x1120)
    words[LO + 0x20] = LO + 0x10  # points down: a loop or garbage
    assert kt.walk(LO + 0x20, LO, HI, Memory(words).words) == [0x1010]
    words[LO + 0x20] = HI  # past the stack's last whole frame
    assert kt.walk(LO + 0x20, LO, HI, Memory(words).words) == [0x1010]
    words[LO + 0x20] = LO + 0x44  # not 8-aligned
    assert kt.walk(LO + 0x20, LO, HI, Memory(words).words) == [0x1010]
    for bad in (LO - 0x10, HI - 8, LO + 0x21, 1 << 50):
        assert kt.walk(bad, LO, HI, Memory({}).words) == []


def test_walk_stops_at_the_limit():
    m = Memory(chain(*range(0x1010, 0x1010 + 20 * 0x10, 0x10)))
    assert len(kt.walk(LO + 0x20, LO, HI, m.words, limit=4)) == 4


@pytest.mark.parametrize("code,slot", [({0x1500: kt.PUSH_RBP}, 0), ({0x1500: kt.RET}, 0),
                                       ({0x1500: 0x48, 0x1501: 0x89, 0x1502: 0xE5}, 8)])
def test_trace_from_takes_the_caller_from_the_stack_where_the_frame_is_not_linked(code, slot):
    sp = LO + 0x10
    words = chain(0x1230, 0)
    words[sp + slot] = 0x1120  # the direct caller, which rbp's chain (from the caller's frame) skips
    m = Memory(words, code)
    assert kt.trace_from(0x1500, sp, LO + 0x20, LO, HI, TEXT, m.words, m.code) == [0x1500, 0x1120, 0x1230]


def test_trace_from_walks_from_rbp_anywhere_else():
    m = Memory(chain(0x1120, 0x1230, 0), {0x1500: 0x48, 0x1501: 0x8B})  # a REX.W that is not the mov
    assert kt.trace_from(0x1500, LO + 0x10, LO + 0x20, LO, HI, TEXT, m.words, m.code) == [0x1500, 0x1120, 0x1230]
    # outside the text the code is not read at all
    assert kt.trace_from(0x9000, LO + 0x10, LO + 0x20, LO, HI, TEXT, m.words, None) == [0x9000, 0x1120, 0x1230]


SYMTAB = Symtab([(0x1000, 0x100, b"burn_inner"), (0x1100, 0x100, b"burn_task")], 0x1000, 0x3000)


def test_lines_are_the_kernels():
    assert kt.header(5, 0, "shell", False, "waiting", "input", 1234, "-") == \
        "task pid=5 cpu=0 name=shell activity=waiting wait=input wait_ms=1234 labels=-"
    assert kt.header(1, 1, "idle", True, "running") == "task pid=1 cpu=1 name=idle idle=yes activity=running labels=-"
    assert kt.header(3, 0, "net", False, "waiting", "net", None, "span=9").endswith(" wait=net wait_ms=? labels=span=9")
    assert kt.chain_lines([0x1010, 0x1130, 0x9000], True, SYMTAB) == \
        ["        at burn_inner+0x10", "        <- burn_task+0x30", "        <- 0x9000"]
    assert kt.chain_lines([0x1100], False, SYMTAB) == ["        <- burn_inner+0x100"]  # a call that ends its function
    assert kt.chain_lines([], False, SYMTAB) == ["        (no frames)"]


def test_a_dump_parses_back():
    text = "\n".join([kt.header(1, 0, "idle", True, "runnable")] + kt.chain_lines([0x1010], True, SYMTAB) +
                     [kt.header(2, 1, "burn", False, "running", labels="job=a,span=5"),
                      kt.note_line("running on cpu 1"), kt.header(3, 0, "net", False, "waiting", "net", None)] +
                     kt.chain_lines([0x1130], False, SYMTAB))
    tasks = kt.parse(text + "\n")
    assert [(t.pid, t.name, t.idle, t.activity, t.wait, t.wait_ms, t.labels, t.note) for t in tasks] == [
        (1, "idle", True, "runnable", None, None, "-", None),
        (2, "burn", False, "running", None, None, "job=a,span=5", "running on cpu 1"),
        (3, "net", False, "waiting", "net", None, "-", None)]
    assert tasks[0].frames == [("at", "burn_inner+0x10")] and kt.symbols(tasks[2]) == ["burn_task"]


@pytest.mark.parametrize("text", [
    "task pid=1 cpu=0 name=a activity=running labels=-",  # no chain
    "        <- burn_task+0x30",  # a frame outside a task
    "task pid=1 cpu=0 name=a activity=running wait=net wait_ms=3 labels=-\n        (no frames)",  # wait, not waiting
    "task pid=1 cpu=0 name=a activity=waiting labels=-\n        (no frames)",  # waiting on nothing
    "task pid=1 cpu=0 name=a activity=running labels=-\n        (ran meanwhile)\n        <- burn_task+0x30",
    "task pid=1 cpu=0 name=a activity=running labels=-\n        <- burn_task+0x30\n        at burn_inner+0x10",
    "task pid=1 cpu=0 name=a activity=sleeping labels=-\n        (no frames)",
])
def test_lines_out_of_the_format_are_refused(text):
    with pytest.raises(kt.DumpError):
        kt.parse(text)

