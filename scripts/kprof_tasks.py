"""scripts/kprof_tasks.py: the task dump's format and its stack walk, for `prof tasks` in gdb (scripts/prof_tasks.py)
and for the tests that read the console's `tasks` (kernel/shell/cmd_tasks.c). No gdb here: memory comes in through
the functions the caller passes, so the walk runs on the host against a synthetic stack too.

The format, as the kernel prints it (docs/profiler.md, "Where every task is"):

    task pid=5 cpu=0 name=shell activity=waiting wait=input wait_ms=1234 labels=-
            <- console_read_char+0x3a
            <- console_shell+0xa5
            <- task_entry_trampoline+0x14

a header of key=value fields in that order (idle=yes after the name for an idle task; wait= and wait_ms= for a
waiting task only), then one line per frame -- `at SYM+0xOFF` where a preempted or stopped task is, `<- SYM+0xOFF`
for each return address, a bare 0x address where nothing resolves -- or one line in parentheses instead of the
frames: `(running on cpu N)`, `(ran meanwhile)`, `(no frames)`.
"""

import collections
import re

# kernel/task.h's enums by their enumerators' names, as DWARF gives them, to the words the kernel prints
# (task_wait_name, task_activity_name): read by name, so a reordered enum still reads right.
WAIT_NAMES = {"TASK_WAIT_NONE": "none", "TASK_WAIT_TIMER": "sleep", "TASK_WAIT_INPUT": "input",
              "TASK_WAIT_NET": "net", "TASK_WAIT_TASK": "task", "TASK_WAIT_DEVICE": "device"}

# stacktrace.c's limits: x86_64's canonical halves, and the frames a dump shows (cmd_tasks.c's TASKS_MAX_FRAMES)
CANONICAL_LOW_END = 1 << 47
CANONICAL_HIGH_START = (1 << 64) - CANONICAL_LOW_END
MAX_FRAMES = 16
PUSH_RBP, RET, REX_W = 0x55, 0xC3, 0x48
MOV_RSP_RBP = bytes([0x48, 0x89, 0xE5])
INDENT = " " * 8

Task = collections.namedtuple("Task", "pid cpu name idle activity wait wait_ms labels frames note")
# frames: [(kind, text)] with kind "at" or "<-" and text "SYM+0xOFF" or "0xADDR"; note: the parenthesised line's
# words ("running on cpu 1", "ran meanwhile", "no frames") or None


def activity(state, current, now_ns, wake_at_ns, has_deadline):
    """task_activity_now (kernel/task.h): what a task is doing, from its state's enumerator name (TASK_READY
    ...) and whether it is current on its CPU. A sleeper past its wake time still waits until its CPU's tick wakes
    it, so the clock, the wake time and the deadline do not change the answer (kept for the callers). None for an
    exited task."""
    del now_ns, wake_at_ns, has_deadline
    if current or state == "TASK_RUNNING":
        return "running"
    if state == "TASK_READY":
        return "runnable"
    if state in ("TASK_SLEEPING", "TASK_BLOCKED"):
        return "waiting"
    return None


def header(pid, cpu, name, idle, act, wait=None, wait_ms=None, labels="-"):
    """The header line; wait_ms None prints `?` (a clock that could not be read)."""
    line = "task pid=%d cpu=%d name=%s%s activity=%s" % (pid, cpu, name, " idle=yes" if idle else "", act)
    if act == "waiting":
        line += " wait=%s wait_ms=%s" % (wait, "?" if wait_ms is None else max(0, wait_ms))
    return line + " labels=%s" % labels


def chain_lines(frames, first_is_pc, symtab):
    """The frame lines of a chain (return addresses, or the pc first when first_is_pc), resolved as the kernel
    resolves them (scripts/kprof_profile.py's Symtab: the kernel's own table, from the same ELF)."""
    if not frames:
        return [INDENT + "(no frames)"]
    out = []
    for i, addr in enumerate(frames):
        if i == 0 and first_is_pc:
            out.append(INDENT + "at " + symtab.leaf_text(addr))
        else:
            out.append(INDENT + "<- " + symtab.caller_text(addr))
    return out


def note_line(words):
    return INDENT + "(%s)" % words


# ---- the walk: kernel/stacktrace.c's, over memory read through callbacks -------------------------------------

def walk(frame, lo, hi, read_words, limit=MAX_FRAMES):
    """stack_walk: the return addresses of the frame chain from frame, each frame [saved rbp][return address]
    wholly inside [lo, hi), every caller's frame strictly above the last, stopping at a zero return address.
    read_words(addr) gives the two words at addr."""
    top = min(hi, CANONICAL_LOW_END) if frame < CANONICAL_LOW_END else hi
    if CANONICAL_LOW_END <= frame < CANONICAL_HIGH_START:
        return []
    if limit <= 0 or frame % 8 or frame < lo or top < 16 or frame > top - 16:
        return []
    last = (top - 16) & ~7
    out = []
    while True:
        saved, ret = read_words(frame)
        if ret == 0:
            break
        out.append(ret)
        if len(out) == limit:
            break
        if saved % 8 or not frame < saved <= last:
            break
        frame = saved
    return out


def trace_from(pc, sp, fp, lo, hi, text, read_words, read_code, limit=MAX_FRAMES):
    """stack_trace_from: pc, then its callers. On a function's push %rbp or a ret the direct caller is at [sp],
    on the mov %rsp,%rbp right after the push at [sp+8]: that frame is not on the chain, so the caller is taken
    from the stack before walking from fp. text is (lo, hi) of the kernel's code; read_code(addr, n) its bytes."""
    if limit <= 0:
        return []
    out = [pc]
    slot = None
    if text[0] <= pc < text[1]:
        first = read_code(pc, 1)[0]
        if first in (PUSH_RBP, RET):
            slot = sp
        elif first == REX_W and text[1] - pc >= 3 and read_code(pc, 3) == MOV_RSP_RBP:
            slot = sp + 8
    if slot is not None and len(out) < limit and _slot_readable(sp, lo, hi) and _slot_readable(slot, lo, hi):
        caller = read_words(slot)[0]
        if caller:
            out.append(caller)
    return out + walk(fp, lo, hi, read_words, limit - len(out))


def _slot_readable(slot, lo, hi):
    canonical = slot < CANONICAL_LOW_END or slot >= CANONICAL_HIGH_START
    return slot % 8 == 0 and canonical and hi >= 8 and lo <= slot <= hi - 8


# ---- reading a dump back --------------------------------------------------------------------------------------

RX_HEADER = re.compile(r"task pid=(\d+) cpu=(\d+) name=(\S+)( idle=yes)? activity=(running|runnable|waiting)"
                       r"(?: wait=([a-z]+) wait_ms=(\d+|\?))? labels=(\S+)")
RX_FRAME = re.compile(r" {8}(at|<-) ((?:[A-Za-z_.$][\w.$]*)\+0x[0-9a-f]+|0x[0-9a-f]+)")
RX_NOTE = re.compile(r" {8}\((running on cpu \d+|ran meanwhile|no frames)\)")


class DumpError(ValueError):
    pass


def parse(text):
    """The tasks of a dump, in its order; DumpError for any line out of the format (a header without a chain, a
    frame or note outside a task, a wait on a task that is not waiting, a frame after a note)."""
    tasks = []
    cur = None
    for n, line in enumerate(text.split("\n"), 1):
        if not line:
            continue
        m = RX_HEADER.fullmatch(line)
        if m:
            if cur is not None:
                tasks.append(_finish(cur, n))
            waiting = m.group(5) == "waiting"
            if waiting != (m.group(6) is not None):
                raise DumpError("line %d: wait= goes with a waiting task, and only with one: %r" % (n, line))
            wait_ms = m.group(7)
            cur = dict(pid=int(m.group(1)), cpu=int(m.group(2)), name=m.group(3), idle=bool(m.group(4)),
                       activity=m.group(5), wait=m.group(6),
                       wait_ms=None if wait_ms in (None, "?") else int(wait_ms), labels=m.group(8), frames=[],
                       note=None)
            continue
        m = RX_FRAME.fullmatch(line)
        note = RX_NOTE.fullmatch(line)
        if cur is None or not (m or note) or cur["note"] is not None or (note and cur["frames"]):
            raise DumpError("line %d is not in the task dump's format here: %r" % (n, line))
        if m:
            if m.group(1) == "at" and cur["frames"]:
                raise DumpError("line %d: `at` is a chain's first frame only: %r" % (n, line))
            cur["frames"].append((m.group(1), m.group(2)))
        else:
            cur["note"] = note.group(1)
    if cur is not None:
        tasks.append(_finish(cur, "the end"))
    return tasks


def _finish(cur, where):
    if not cur["frames"] and cur["note"] is None:
        raise DumpError("task %d has no chain line before %s" % (cur["pid"], where))
    return Task(**cur)


def symbols(task):
    """The function names of a task's frames, innermost first (a bare address as itself)."""
    return [text.split("+", 1)[0] for _, text in task.frames]
