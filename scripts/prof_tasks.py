"""scripts/prof_tasks.py: `prof tasks` in gdb -- the console's `tasks` (kernel/shell/cmd_tasks.c) for a machine gdb
has stopped: every task in the kernel's task table, in pid order, with the same header line and chain lines
(scripts/kprof_tasks.py has the format and the walk). scripts/prof.py loads it and hands it its readers
(register()).

Where each chain comes from. A task current on a CPU is walked from that CPU's stopped registers (gdb's thread N
is CPU N-1, with kprof's stub and with QEMU's): pc first, then the frame chain from rbp, as the profiler walks an
interrupted context. Any other task from its blocking call's frame (wait_frame) when it is inside one, else from
its saved context (ctx), as task_chain_off_cpu does. The machine is stopped, so nothing runs meanwhile: no walk is
retried, and a task running on another CPU, which the console can only name, has its chain here.

How it can differ from a `tasks` the console printed just before the stop: the tasks that were waiting show the
same chains while they still wait (their frames above the blocking call do not change); a running one was
somewhere else a moment later, and the task that ran `tasks` itself has gone back to its wait. A CPU stopped inside
an interrupt handler has its stack pointer on the interrupt's stack, outside its task's, so that task's chain is
the pc alone. wait_ms is measured to the moment kprof's stub stopped the machine (stop_time_ns): how long each
had waited then, however long gdb looks; through QEMU's gdbstub, which stops the machine behind the kernel's back,
it is `?`, and a sleeper past its wake time counts as waiting. Reads memory only.
"""

import struct

import gdb

import kprof_tasks as kt


def register(prof):
    """Adds `prof tasks` to prof.py's command family; prof is prof.py's namespace (its readers and commands)."""

    class _ProfTasks(prof._ProfCommand):
        """Every task of the stopped kernel as the console's `tasks` prints it: a header (pid, cpu, name, what it
does, what it waits on and for how long, its labels) and its call chain -- from the CPU's registers for a task
current on one, else from its blocking call's frame or its saved context. Usage: prof tasks"""

        def __init__(self):
            super().__init__("tasks", lambda arg: tasks(prof, arg))

    _ProfTasks()


def tasks(prof, arg):
    if gdb.string_to_argv(arg):
        raise gdb.GdbError("usage: prof tasks")
    prof.check_running_build_id(prof.elf_build_id())
    prof._cache.label_sets = {}  # for this stop only: the kernel frees and reuses sets
    table = prof.need_static("task_table", "kernel/task.c")
    pointers = _pointers(prof, table)
    task_type = gdb.lookup_type("struct task")
    found = []
    for p in pointers:
        t = gdb.Value(p).cast(task_type.pointer()).dereference()
        t.fetch_lazy()
        found.append((int(t["pid"]), p, t))
    found.sort(key=lambda f: f[0])
    current = _current_tasks(prof)
    now_ns = _now_ns(prof)
    symtab = prof.symtab()
    reader = _Reader()
    out = []
    for _, pointer, t in found:
        state = prof.enum_name("enum task_state", int(t["state"]))
        if state == "TASK_DEAD":
            continue  # exited, waiting for the reaper: the console leaves it out too
        out += _task_lines(prof, t, state, current.get(pointer), now_ns, symtab, reader)
    return "\n".join(out) if out else "no tasks in the task table"


def _pointers(prof, table):
    """The non-NULL entries of the task table (struct task *[MAX_TASKS]), in one read of the whole array."""
    size = table.type.strip_typedefs().sizeof
    data = prof.read_memory(int(table.address), size)
    return [p for p in struct.unpack("<%dQ" % (size // 8), data) if p]


def _current_tasks(prof):
    """{struct task address: cpu} for the task each online CPU's scheduler has current (sched_cpus)."""
    cpus = prof.need_static("sched_cpus", "kernel/task.c")
    n = prof.online_cpus() or 1
    lo, hi = cpus.type.strip_typedefs().range()
    return {int(c["current"]): i for i, c in enumerate(prof.leading(cpus, min(n, hi - lo + 1))) if int(c["current"])}


def _now_ns(prof):
    """The kernel's time when kprof's stub stopped the machine (stop_time_ns, gdbstub/stop.c), while one of its
    sessions holds it (stop_owner); None otherwise -- QEMU's gdbstub stops the machine without the kernel knowing,
    and the TSC it would be read from is not among the registers gdb sees."""
    owner = prof.static("stop_owner", "gdbstub/stop.c")
    when = prof.static("stop_time_ns", "gdbstub/stop.c")
    if owner is None or when is None or int(owner) < 0:
        return None
    return int(when)


def _labels(prof, t):
    """The task's labels as `ps` prints them: its set, then span=N, or -."""
    pointer = int(t["labels"])
    text = ""
    if pointer:
        _, pairs = prof._label_set_now(pointer)
        text = _set_text(pairs, pointer)
    span = int(t["span"])
    if span:
        text += ("," if text else "") + "span=%d" % span
    return text or "-"


def _set_text(pairs, pointer):
    """A live set's pairs as label_set_format writes them; a set gdb could not read names its address."""
    if pairs is None:
        return "set=0x%x(freed)" % pointer
    return ",".join("%s=%s" % kv for kv in pairs)


def _task_lines(prof, t, state, on_cpu, now_ns, symtab, reader):
    pid, cpu = int(t["pid"]), int(t["cpu"])
    name = prof.c_string(t["name"])
    act = kt.activity(state, on_cpu is not None, now_ns, int(t["wake_at_ns"]), bool(int(t["block_has_deadline"])))
    wait = wait_ms = None
    if act == "waiting":
        wait = kt.WAIT_NAMES.get(prof.enum_name("enum task_wait", int(t["waiting_on"])), "?")
        if now_ns is not None:
            wait_ms = (now_ns - int(t["wait_since_ns"])) // 1000000
    lines = [kt.header(pid, cpu, name, bool(int(t["is_idle"])), act, wait, wait_ms, _labels(prof, t))]
    lo = int(t["stack"])
    hi = lo + int(t["stack_size"])
    text = (symtab.text_start, symtab.text_end)
    if on_cpu is not None:
        pc, sp, fp = _registers(on_cpu)
        if pc is None:
            return lines + [kt.note_line("cpu %d's registers cannot be read" % on_cpu)]
        frames = kt.trace_from(pc, sp, fp, lo, hi, text, reader.words, reader.code)
        return lines + kt.chain_lines(frames, True, symtab)
    wait_frame = int(t["wait_frame"])
    if wait_frame:
        return lines + kt.chain_lines(kt.walk(wait_frame, lo, hi, reader.words), False, symtab)
    ctx = int(t["ctx"])
    if not ctx:
        return lines + kt.chain_lines([], False, symtab)
    c = gdb.Value(ctx).cast(gdb.lookup_type("struct context").pointer()).dereference()
    frames = kt.trace_from(int(c["rip"]), int(c["rsp"]), int(c["rbp"]), lo, hi, text, reader.words, reader.code)
    return lines + kt.chain_lines(frames, True, symtab)


def _registers(cpu):
    """(pc, sp, fp) of the CPU's thread as the stub reports it stopped, or Nones; gdb's selection is restored."""
    selected = gdb.selected_thread()
    try:
        for th in gdb.selected_inferior().threads():
            if (th.ptid[1] or th.ptid[2]) != cpu + 1:
                continue
            th.switch()
            frame = gdb.newest_frame()
            return tuple(int(frame.read_register(r)) & (2**64 - 1) for r in ("rip", "rsp", "rbp"))
        return None, None, None
    except gdb.error:
        return None, None, None
    finally:
        if selected is not None and selected.is_valid():
            selected.switch()


class _Reader:
    """Memory for the walk, two words or a few code bytes at a time, each address read once per command; what
    cannot be read reads as zeros, which ends a walk as a bottom frame does."""

    def __init__(self):
        self.seen = {}

    def _bytes(self, addr, n):
        key = (addr, n)
        if key not in self.seen:
            try:
                self.seen[key] = bytes(gdb.selected_inferior().read_memory(addr, n))
            except gdb.MemoryError:
                self.seen[key] = bytes(n)
        return self.seen[key]

    def words(self, addr):
        return struct.unpack("<QQ", self._bytes(addr, 16))

    def code(self, addr, n):
        return self._bytes(addr, n)
