"""scripts/kprof_tasks.py on the host: the header and frame lines are the kernel's (tests/unit/test_cmd_tasks.c
pins the kernel's side of the same lines); a dump parses back, and lines out of the format are refused.
"""

import os
import sys

import pytest

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(TOP, "scripts"))
import kprof_tasks as kt  # noqa: E402
from kprof_profile import Symtab  # noqa: E402

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

