"""scripts/prof.py: the profiler of a paused kprof, from gdb -- `source scripts/prof.py`, then `help prof`.

    prof buffers [CPU]   the records of the current (or last) run in each CPU's ring: pid, labels, frames
    prof report [CHAINS] the console's report of the last run, word for word; of a run in progress, a partial one
    prof state          run control, the source, each ring's indexes and drops, each CPU's PMU armed flag
    prof pmu            every PMU MSR of every CPU, decoded, through kprof's stub (`monitor pmu`)
    prof export FILE    the rings' records as a pprof profile (gzipped profile.proto), as scripts/profexport writes
    prof tasks          every task as the console's `tasks` prints it: what it does or waits on, its call chain
                        (scripts/prof_tasks.py)

Everything but `prof pmu` reads memory only, so it works through kprof's own stub on COM2 (`make debug`) and
through QEMU's gdbstub (`-s`) alike; QEMU's cannot read MSRs, and `prof pmu` says so.

Which samples. The profile command drains every CPU's ring while its window runs (kernel/shell/cmd_profile.c), so
the rings never hold a whole run: each keeps the last 1024 records written into it, drained or not, and every
record carries its run number. A run's records are found walking each ring back from its head. The kernel
keeps the text of the last report it printed (profile_kept_report): for a finished, reported run `prof
report` prints that, so gdb shows exactly what the console showed; for a run in progress (or one never
reported: `profile raw`, a machine stopped at the wrong moment) it folds what the rings hold, in the kernel's
format, after one line saying that it is a partial view.

Structure: the reading of kernel memory (statics found by file, the record layout from DWARF) and gdb's own
symbolisation live here; the fold, the report's format and the pprof output are scripts/kprof_profile.py,
shared with scripts/profexport. Each command is a plain function with a thin gdb.Command around it; mistakes
of the user raise gdb.GdbError. Types and symbols are cached and forgotten when gdb loads new object files.
"""

import os
import re
import sys

import gdb

_here = os.path.dirname(os.path.abspath(__file__))
if _here not in sys.path:
    sys.path.insert(0, _here)
import kprof_profile as kp  # noqa: E402

U32 = 0xFFFFFFFF
RUN_STOPPING = 0x80000000       # kernel/profiler.c: the active word's stopping flag ...
RUN_NUMBER = 0x7FFFFFFF         # ... and its run number
OP_POPF, OP_STI, OP_NOP = 0x9D, 0xFB, 0x90  # arch/x86_64/irq_enable_site.c


# ---- what is cached, and its reset ----------------------------------------------------------------------------

class _Cache:
    def __init__(self):
        self.clear()

    def clear(self):
        self.layout = None
        self.symtab = None
        self.symtab_elf = None
        self.statics = {}
        self.frames = {}
        self.label_sets = {}
        self.build_id = None


_cache = _Cache()


def _on_new_objfile(_event):
    _cache.clear()


gdb.events.new_objfile.connect(_on_new_objfile)
if hasattr(gdb.events, "clear_objfiles"):
    gdb.events.clear_objfiles.connect(_on_new_objfile)


# ---- reading the kernel ---------------------------------------------------------------------------------------

def kernel_elf():
    """The file gdb debugs (the kernel ELF)."""
    name = gdb.current_progspace().filename
    if not name:
        raise gdb.GdbError("no kernel loaded: `file build/kprof.elf` first")
    return name


def elf_build_id():
    elf = kernel_elf()
    if _cache.build_id is None or _cache.build_id[0] != elf:
        try:
            _cache.build_id = (elf, kp.elf_build_id(elf))
        except kp.ProfileError as e:
            raise gdb.GdbError(str(e)) from None
    return _cache.build_id[1]


def symtab():
    """The kernel's own symbol table (scripts/kprof_profile.py), from the ELF gdb debugs."""
    elf = kernel_elf()
    if _cache.symtab is None or _cache.symtab_elf != elf:
        try:
            _cache.symtab = kp.Symtab.from_elf(elf)
        except kp.ProfileError as e:
            raise gdb.GdbError(str(e)) from None
        _cache.symtab_elf = elf
    return _cache.symtab


def static(name, source_file):
    """The value of the variable `name` defined in source_file (e.g. kernel/profiler.c): statics of the same
    name exist in several files (last_run, cpus), so each is found by its file. None when there is none."""
    key = (name, source_file)
    if key not in _cache.statics:
        found = None
        candidates = list(gdb.lookup_static_symbols(name)) if hasattr(gdb, "lookup_static_symbols") else []
        sym = gdb.lookup_global_symbol(name)
        if sym is not None:
            candidates.append(sym)
        for sym in candidates:
            if sym.symtab is not None and sym.symtab.filename.endswith(source_file) and sym.is_variable:
                found = sym
                break
        _cache.statics[key] = found
    sym = _cache.statics[key]
    return sym.value() if sym is not None else None


def need_static(name, source_file):
    v = static(name, source_file)
    if v is None:
        raise gdb.GdbError("no variable %s in %s: is this the kprof ELF, built with -g?" % (name, source_file))
    return v


def read_memory(addr, length):
    try:
        return bytes(gdb.selected_inferior().read_memory(addr, length))
    except gdb.MemoryError as e:
        raise gdb.GdbError("cannot read %d bytes at 0x%x: %s" % (length, addr, e)) from None


def c_string(value):
    """A char array (up to its NUL or its end) or a char pointer (up to its NUL) as a Python string; '' for
    NULL."""
    t = value.type.strip_typedefs()
    try:
        if t.code == gdb.TYPE_CODE_PTR and int(value) == 0:
            return ""
        return value.string(length=-1)
    except (gdb.MemoryError, gdb.error, UnicodeDecodeError) as e:
        return "<unreadable string: %s>" % e


def record_layout():
    """struct profile_record as DWARF lays it out."""
    if _cache.layout is None:
        try:
            t = gdb.lookup_type("struct profile_record").strip_typedefs()
        except gdb.error:
            raise gdb.GdbError("no struct profile_record in the debug info: is this the kprof ELF?") from None
        fields = {}
        members = []
        for f in t.fields():
            if not f.name:
                # an anonymous union (held_off_us shares its word with a wall sample's state): its members
                # stand in the record as they would by name
                members += [(sub.name, f.bitpos + sub.bitpos, sub) for sub in f.type.strip_typedefs().fields()]
            else:
                members.append((f.name, f.bitpos, f))
        for name, bitpos, f in members:
            ft = f.type.strip_typedefs()
            if name == "frames":
                elem = ft.target().strip_typedefs()
                lo, hi = ft.range()
                fields[name] = (bitpos // 8, elem.sizeof, hi - lo + 1)
            else:
                fields[name] = (bitpos // 8, ft.sizeof, 1)
        try:
            _cache.layout = kp.RecordLayout(t.sizeof, fields)
        except kp.ProfileError as e:
            raise gdb.GdbError(str(e)) from None
    return _cache.layout


class Ring:
    """One CPU's ring as it is in memory now, and the records of one run in it."""

    def __init__(self, cpu, value):
        self.cpu = cpu
        self.records = int(value["records"])
        self.mask = int(value["mask"]) & U32
        self.head = int(value["head"]) & U32
        self.tail = int(value["tail"]) & U32
        self.drops = int(value["drops"]) & U32

    @property
    def capacity(self):
        return self.mask + 1 if self.records else 0

    @property
    def waiting(self):
        return (self.head - self.tail) & U32

    def read_slots(self, first, count):
        """Records of ring indexes first .. first+count-1 (free-running indexes, masked here)."""
        layout = record_layout()
        out = []
        while count > 0:
            slot = first & self.mask
            n = min(count, self.capacity - slot)
            buf = read_memory(self.records + slot * layout.size, n * layout.size)
            out += [layout.decode(buf, i) for i in range(n)]
            first = (first + n) & U32
            count -= n
        return out

    def holds_run(self, run):
        """probe(index) for kp.run_block_first: whether that slot carries run and this CPU, from the few
        bytes of its time, run and cpu fields alone (each slot read once; probe.times keeps the times)."""
        layout = record_layout()
        offset, length = layout.probe_span()
        seen = {}

        def probe(index):
            index &= self.mask
            if index not in seen:
                at = self.records + index * layout.size + offset
                seen[index] = layout.probed(read_memory(at, length), offset)
            t, r, c = seen[index]
            probe.times[index] = t
            return (r, c) == (run, self.cpu)
        probe.times = {}
        return probe

    def run_records(self, run, whole=False, start_ns=None):
        """(the run's records in the ring, those committed after its report read the ring). whole: a run that
        is still recording, whose drained records are as much its own as those waiting.

        Only what the ring holds of the run is read: a few probes find where its block begins, then the
        block is read whole (two reads where it wraps the ring's end), which gdb cuts into packets of the
        stub's PacketSize. The probes interpolate on the records' times back to the run's start (start_ns)."""
        if not self.records or run == 0:
            return [], []
        probe = self.holds_run(run)
        # the kernel starts each ring at index 0 (profile_ring_init): below it, until it has gone round, nothing
        first = kp.run_block_first(probe, self.head, self.capacity, lambda i: probe.times[i & self.mask],
                                   start_ns, floor=0 if self.head < self.capacity else None)
        count = (self.head - first) & U32
        block = kp.ring_run_records(self.read_slots, self.head, self.mask, run, self.cpu, max(count, 1),
                                    first=first)
        return (block, []) if whole else kp.split_at_tail(block, self.head, self.tail)


class Profiler:
    """The profiler's state (kernel/profiler.c) read from a paused kernel."""

    def __init__(self):
        check_running_build_id(elf_build_id())
        _cache.label_sets = {}  # for this stop only: the kernel frees and reuses sets (kernel/labels.h)
        word = int(need_static("active_word", "kernel/profiler.c")) & U32
        self.active_run = word & RUN_NUMBER
        self.stopping = bool(word & RUN_STOPPING)
        self.last_run = int(need_static("last_run", "kernel/profiler.c")) & U32
        busy = static("busy", "kernel/profiler.c")
        self.busy = int(busy) if busy is not None else None
        self.rings_ready = int(need_static("rings_ready", "kernel/profiler.c"))
        rings = need_static("rings", "kernel/profiler.c")
        lo, hi = rings.type.strip_typedefs().range()
        self.max_cpus = hi - lo + 1
        n = min(self.rings_ready, self.max_cpus)
        in_use = leading(rings, n)  # one read for the rings in use, not one per field nor all MAX_CPUS
        self.rings = [Ring(i, in_use[i]) for i in range(n)]
        counter = static("counter_run", "kernel/profiler.c")
        self.counter_run = bool(int(counter)) if counter is not None else False
        self.source_name, self.tick_reason = self._source()
        self.source = self.source_name if self.tick_reason is None else \
            "tick" + (" (%s)" % self.tick_reason if self.tick_reason else "")

    @property
    def run(self):
        """The run whose records are shown: the active one, else the last one (0: none yet)."""
        return self.active_run or self.last_run

    def _source(self):
        """(the source's name, the tick's reason -- None on a counter run), as profiler_start set them."""
        if self.counter_run:
            live = static("live", "arch/x86_64/pmu.c")
            name = c_string(live["source"]) if live is not None else ""
            return name or "pmu", None
        reason = static("tick_reason", "kernel/profiler.c")
        return "tick", c_string(reason) if reason is not None else ""

    def samples(self, cpu=None):
        """(ring, [kp.Sample], late) for each ring (or only cpu's), oldest first: the run's records in the ring
        -- while it records, all of them (drained or not); once over, those its report took, and how many of
        the run's records came after it read that ring."""
        out = []
        start_ns = self.run_start_ns()
        for ring in self.rings:
            if cpu is not None and ring.cpu != cpu:
                continue
            recs, late = ring.run_records(self.run, whole=bool(self.active_run), start_ns=start_ns)
            out.append((ring, [kp.Sample(r.cpu, r.pid, r.time_ns, labels_of(r.labels, r.labels_generation), r.frames, r.flags,
                                         r.held_off_us, r.period) for r in recs], len(late)))
        return out

    def run_start_ns(self):
        v = static("run_start_ns", "kernel/profiler.c")
        return int(v) if v is not None else None

    def sample_period(self):
        """(the run's nominal period, its unit) as the raw header states it: the counter's cycles on a counter
        run, the tick's nanoseconds on a tick run."""
        if self.counter_run:
            cycles = static("period_cycles", "arch/x86_64/pmu.c")
            if cycles is not None:
                return int(cycles), "cycles"
        return sample_period_ns(self), "ns"

    def run_info(self, window_ms):
        """The run as kernel/profiler/report.c reads struct profile_run: a kp.RunInfo with each CPU's account
        (cpu_runs) and each ring's drops."""
        hz_v = static("hz", "arch/x86_64/time.c")
        hz = int(hz_v) if hz_v is not None else 0
        cycles_v = static("period_cycles", "arch/x86_64/pmu.c") if self.counter_run else None
        cycles = int(cycles_v) if cycles_v is not None else 0
        return kp.RunInfo(self.run, window_ms, len(self.rings), self.source_name, self.tick_reason, hz,
                          sample_period_ns(self), cycles,
                          [r.drops for r in self.rings], cpu_accounts(len(self.rings)), irq_enable_site)


def leading(array, n):
    """The first n elements of a static array (a gdb.Value), fetched in one read of just those: a remote stub
    pays per byte and per packet, and MAX_CPUS is far above the CPUs in use. n 0 gives an empty list."""
    if n <= 0:
        return []
    elem = array.type.strip_typedefs().target()
    part = array.address.cast(elem.array(n - 1).pointer()).dereference()
    part.fetch_lazy()
    return [part[i] for i in range(n)]


def cpu_accounts(n):
    """Each CPU's struct profiler_cpu_run (kernel/profiler.c's cpu_runs) as a kp.CpuAccount."""
    runs = static("cpu_runs", "kernel/profiler.c")
    if runs is None:
        return [None] * n
    lo, hi = runs.type.strip_typedefs().range()
    runs = leading(runs, min(n, hi - lo + 1))
    out = []
    for i in range(n):
        c = runs[i]
        snap = c["stopped_msrs"]
        regs = []
        for k in range(min(int(snap["count"]), 6)):
            r = snap["regs"][k]
            regs.append((c_string(r["name"]), int(r["value"]) & (2**64 - 1), bool(int(r["faulted"]))))
        snapshot = kp.Snapshot(tuple(regs), *(bool(int(snap[f])) for f in (
            "counting", "pmi_enabled", "globally_enabled", "frozen", "lvt_masked", "lvt_nmi")))
        out.append(kp.CpuAccount(int(c["run"]) & U32, int(c["source"]), bool(int(c["throttled"])),
                                 int(c["period_cycles"]), int(c["stopped_ns"]), snapshot, int(c["held_off_ns"]),
                                 int(c["let_in_pc"]), int(c["late_elsewhere_ns"]), int(c["ticks"]),
                                 int(c["nmis"]), int(c["late_ticks"]), int(c["let_in_ticks"])))
    return out


def irq_enable_site(pc):
    """arch/x86_64/irq_enable_site.c's irq_enable_before() on the kernel's bytes before pc."""
    try:
        b = bytes(gdb.selected_inferior().read_memory(pc - 2, 2))
    except gdb.MemoryError:
        return None
    if b[1] == OP_POPF:
        return "popf"
    if b[0] == OP_STI and b[1] == OP_NOP:
        return "sti"
    return None


# ---- label sets -------------------------------------------------------------------------------------------------

def labels_of(pointer, generation):
    """A record's label set as ((key, value), ...), () for NULL: kp.record_labels over the set in the paused
    kernel's memory, each set read once per stop (the kernel frees and reuses them while it runs)."""
    return kp.record_labels(pointer, generation, _label_set_now)


def _label_set_now(pointer):
    got = _cache.label_sets.get(pointer)
    if got is None:
        got = _cache.label_sets[pointer] = _read_label_set(pointer)
    return got


def _read_label_set(pointer):
    """(generation or None, pairs or None) of the set at pointer now, as kp.record_labels takes it."""
    try:
        t = gdb.lookup_type("struct label_set").strip_typedefs()
        names = [f.name for f in t.fields()]
    except gdb.error:
        names = []
    if "npairs" not in names or "pairs" not in names:
        return None, (("set", "0x%x" % pointer),)
    try:
        s = gdb.Value(pointer).cast(t.pointer()).dereference()
        s.fetch_lazy()
        generation = int(s["generation"]) & U32 if "generation" in names else None
        pairs = s["pairs"]
        lo, hi = pairs.type.strip_typedefs().range()
        n = int(s["npairs"])
        if n == 0:
            return generation, None  # the pool holds no empty set (no labels is NULL): a freed slot
        if not 0 <= n <= hi - lo + 1:
            return generation, (("set", "0x%x(npairs %d)" % (pointer, n)),)
        return generation, tuple((c_string(pairs[i]["key"]), c_string(pairs[i]["value"])) for i in range(n))
    except (gdb.error, gdb.MemoryError) as e:
        return None, (("set", "0x%x(%s)" % (pointer, e)),)


# ---- frames, resolved by gdb ----------------------------------------------------------------------------------

def frame_text(addr, is_leaf):
    """`name+0xoff at file:line` for a frame: gdb's function and line of the code (a return address at
    addr - 1, the call before it), the offset from addr itself as the kernel prints it; the kernel's own
    symbol table where gdb knows no function (assembly), the bare address where nothing does."""
    key = (addr, is_leaf)
    text = _cache.frames.get(key)
    if text is not None:
        return text
    code = kp.code_address(addr, is_leaf)
    name = start = None
    try:
        block = gdb.block_for_pc(code)
    except RuntimeError:
        block = None
    # the outermost function block: inlined functions are blocks with a function of their own inside it
    while block is not None:
        if block.function is not None:
            name, start = block.function.print_name, block.function.value().address
        block = block.superblock
    if name is not None:
        start = int(start)
    else:
        hit = symtab().lookup(code)
        if hit:
            name, start = hit.name, hit.start
    text = "%s+0x%x" % (name, addr - start) if name is not None else "0x%x" % addr
    sal = gdb.find_pc_line(code)
    if sal.symtab is not None and sal.line:
        text += " at %s:%d" % (sal.symtab.filename, sal.line)
    _cache.frames[key] = text
    return text


# ---- the commands' logic ----------------------------------------------------------------------------------------

def parse_number(word, what, lo, hi):
    try:
        n = int(word, 0)
    except ValueError:
        n = None
    if n is None or not lo <= n <= hi:
        raise gdb.GdbError("%s must be a number %d..%d, not %r" % (what, lo, hi, word))
    return n


def run_words(p):
    if p.run == 0:
        return "no run yet"
    return "run %d (%s)" % (p.run, ("stopping" if p.stopping else "recording") if p.active_run else "finished")


def buffers(arg):
    words = gdb.string_to_argv(arg)
    if len(words) > 1:
        raise gdb.GdbError("usage: prof buffers [CPU]")
    p = Profiler()
    cpu = None
    if words:
        if not p.rings:
            raise gdb.GdbError("no CPU has a ring yet: the profiler has never run")
        cpu = parse_number(words[0], "CPU", 0, len(p.rings) - 1)
    out = ["%s, source %s" % (run_words(p), p.source)]
    if not p.rings:
        out.append("no rings: the profiler has never run")
    for ring, samples, late in p.samples(cpu):
        out.append("cpu %d: %d records of %s; ring head %d tail %d (%d waiting), %d dropped"
                   % (ring.cpu, len(samples), "run %d" % p.run if p.run else "any run", ring.head, ring.tail,
                      ring.waiting, ring.drops))
        if late:
            out.append("  (and %d of the run committed after the kernel's report read this ring: left for the "
                       "next start)" % late)
        for s in samples:
            out.append("  cpu %d pid %d t %d.%09d s labels %s period %d%s"
                       % (s.cpu, s.pid, s.time_ns // 1000000000, s.time_ns % 1000000000, kp.labels_text(s.labels),
                          s.period, kp.sample_mark(s)))
            for i, a in enumerate(s.frames):
                out.append("    %s0x%016x %s" % ("" if i == 0 else "<- ", a, frame_text(a, i == 0)))
    return "\n".join(out)


def report(arg):
    """(the report's text, a note for stderr or None)."""
    words = gdb.string_to_argv(arg)
    if len(words) > 1:
        raise gdb.GdbError("usage: prof report [CHAINS]")
    chains = None
    if words:
        chains = parse_number(words[0], "CHAINS", kp.CHAINS_MIN, kp.CHAINS_MAX)
    p = Profiler()
    if p.run == 0:
        raise gdb.GdbError("the profiler has not run yet: nothing to report")
    kept = kept_report(p)
    if kept is not None:
        text, length = kept
        notes = []
        if length > len(text):
            notes.append("prof report: the kernel's report was %d bytes; it keeps the first %d, shown above"
                         % (length, len(text)))
        if chains is not None:
            text, note = kp.cut_report(text, chains)
            if note:
                notes.append("prof report: " + note)
        return text, "\n".join(notes) or None
    return partial_report(p, chains or kp.CHAINS_DEFAULT), None


def kept_report(p):
    """(the text, its length before truncation) of the console's report when it is the report of p.run and
    no run is active; None otherwise (a run in progress, a run never reported, a kernel that keeps none)."""
    kept_run = static("profile_kept_run", "kernel/profiler/report.c")
    if kept_run is None or p.active_run or int(kept_run) & U32 != p.last_run:
        return None
    buf = need_static("profile_kept_report", "kernel/profiler/report.c")
    length = int(need_static("profile_kept_length", "kernel/profiler/report.c")) & U32
    size = buf.type.strip_typedefs().sizeof
    data = read_memory(int(buf.address), min(length, size - 1))
    return data.split(b"\0", 1)[0].decode("utf-8", "replace"), length


def partial_report(p, chains):
    """The rings' records of p.run folded in the kernel's format, after one line saying what this is."""
    rings = p.samples()
    samples = [s for _, ss, _ in rings for s in ss]
    start = p.run_start_ns()
    newest = max((s.time_ns for s in samples), default=start or 0)
    window_ms = max(0, (newest - start + 500000) // 1000000) if start is not None else 0
    full = [r.cpu for r, ss, _ in rings if r.capacity and len(ss) >= r.capacity]
    what = "run %d is in progress" % p.run if p.active_run else \
        "run %d was not reported (a raw profile, or the machine stopped before its report)" % p.run
    first = ("partial view: %s; this folds the %d records of it the rings hold, %s, up to the newest (%d ms "
             "into the run); samples already drained into the report's own fold, and the window asked for, "
             "are not in memory gdb can read" % (
                 what, len(samples), "the last %d of cpu %s" % (p.rings[0].capacity, ",".join(map(str, full)))
                 if full else "every one of the run's so far", window_ms))
    fold, _ = kp.fold_samples(samples, symtab())
    return "\n".join([first] + kp.report_lines(p.run_info(window_ms), fold, chains))


def state(arg):
    if gdb.string_to_argv(arg):
        raise gdb.GdbError("usage: prof state")
    p = Profiler()
    out = ["profiler: %s; active_run %d, last_run %d, claim %s"
           % (run_words(p), p.active_run, p.last_run,
              "unknown" if p.busy is None else ("held" if p.busy else "free")),
           "source: %s" % p.source]
    if p.rings:
        out.append("rings: %d of %d CPUs, %d records each" % (len(p.rings), p.max_cpus, p.rings[0].capacity))
    else:
        out.append("rings: none yet (allocated by the first run)")
    out += pmu_state_lines()
    armed = pmu_armed_flags()
    out.append("%-4s %10s %10s %8s %8s  %s" % ("CPU", "HEAD", "TAIL", "WAITING", "DROPS", "PMU"))
    ncpu = max(len(p.rings), len(armed))
    for cpu in range(ncpu):
        ring = p.rings[cpu] if cpu < len(p.rings) else None
        cols = ("%10d %10d %8d %8d" % (ring.head, ring.tail, ring.waiting, ring.drops)) if ring \
            else "%10s %10s %8s %8s" % ("-", "-", "-", "-")
        out.append("%-4d %s  %s" % (cpu, cols, armed[cpu] if cpu < len(armed) else "unknown"))
    return "\n".join(out)


def online_cpus():
    n = static("online_count", "arch/x86_64/percpu.c")
    return int(n) if n is not None else None


def pmu_state_lines():
    """The PMU's verdict and reason (arch/x86_64/pmu.c statics), or why they cannot be shown."""
    verdict = static("verdict", "arch/x86_64/pmu.c")
    if verdict is None:
        return ["pmu: unknown (no verdict in arch/x86_64/pmu.c)"]
    reason = static("reason", "arch/x86_64/pmu.c")
    line = "pmu: %s" % enum_name("enum pmu_verdict", int(verdict))
    text = c_string(reason) if reason is not None else ""
    return [line + (" (%s)" % text if text else "")]


def enum_name(type_name, value):
    """The enumerator of type_name whose value is value (the variable may be a plain int), or the number."""
    try:
        for f in gdb.lookup_type(type_name).strip_typedefs().fields():
            if f.enumval == value:
                return f.name
    except gdb.error:
        pass
    return str(value)


def pmu_armed_flags():
    """Per online CPU, its pmu_cpu flags as words ("armed", "not armed, arming faulted", ...)."""
    cpus = static("cpus", "arch/x86_64/pmu.c")
    n = online_cpus()
    if cpus is None or n is None:
        return []
    lo, hi = cpus.type.strip_typedefs().range()
    out = []
    for c in leading(cpus, min(n, hi - lo + 1)):
        names = [f.name for f in c.type.strip_typedefs().fields()]
        words = ["armed" if "armed" in names and int(c["armed"]) else "not armed"]
        for field, word in (("probing", "probing"), ("arm_failed", "arming faulted"),
                            ("late_pending", "late overflow pending")):
            if field in names and int(c[field]):
                words.append(word)
        out.append(", ".join(words))
    return out


MSR_UNAVAILABLE = ("prof pmu: MSRs are not available through this gdbstub (it does not answer `monitor pmu`; "
                   "QEMU's own cannot read MSRs): connect to kprof's stub on COM2 (`make debug`, docs/gdb.md)")


def pmu(arg):
    if gdb.string_to_argv(arg):
        raise gdb.GdbError("usage: prof pmu")
    try:
        text = gdb.execute("monitor pmu", to_string=True)
    except gdb.error as e:
        raise gdb.GdbError("%s\n(the stub said: %s)" % (MSR_UNAVAILABLE, e)) from None
    if not kp.is_monitor_pmu_answer(text):
        raise gdb.GdbError(MSR_UNAVAILABLE)
    return text.rstrip("\n")


def export(arg):
    words = gdb.string_to_argv(arg)
    if len(words) != 1:
        raise gdb.GdbError("usage: prof export FILE")
    path = words[0]
    elf = kernel_elf()
    try:
        pb2 = kp.load_profile_pb2()
    except kp.ProfileError as e:
        raise gdb.GdbError(str(e)) from None
    build_id = elf_build_id()
    p = Profiler()
    if p.run == 0:
        raise gdb.GdbError("the profiler has not run yet: nothing to export")
    rings = p.samples()
    samples = [s for _, ss, _ in rings for s in ss]
    period, unit = p.sample_period()
    span_ms = (max(s.time_ns for s in samples) - min(s.time_ns for s in samples)) // 1000000 if samples else 0
    raw = kp.RawProfile(kp.source_word(p.source_name), period, span_ms, len(p.rings), build_id, samples,
                        sum(r.drops for r in p.rings), origin=None, unit=unit)
    st = symtab()
    try:
        prof = kp.build_pprof([raw], st, kp.Lines(elf, st), elf, build_id, pb2,
                              comments=["kprof gdb export: %s, source %s, %s, %d samples, %d dropped"
                                        % (run_words(p), p.source, kp.period_text(period, unit), len(samples),
                                           raw.dropped)])
        data = kp.pprof_bytes(prof)
    except kp.ProfileError as e:
        raise gdb.GdbError(str(e)) from None
    try:
        with open(path + ".tmp", "wb") as f:
            f.write(data)
        os.replace(path + ".tmp", path)
    except OSError as e:
        raise gdb.GdbError("%s: %s" % (path, e.strerror)) from None
    out = "prof export: %d samples of %s (%d dropped) -> %s" % (len(samples), run_words(p), raw.dropped, path)
    part = part_of_run(p, rings, len(samples))
    return out + ("\nprof export: only part of the run: %s" % part if part else "")


def part_of_run(p, rings, nsamples):
    """Why the rings hold only part of p.run (None when they hold all of it): the profile command drains the
    rings while it runs, so each keeps only the last records written into it."""
    why = []
    if p.active_run:
        why.append("it is still recording")
    full = [str(r.cpu) for r, ss, _ in rings if r.capacity and len(ss) >= r.capacity]
    if full:
        why.append("the rings keep the last %d records of each CPU, and cpu %s filled theirs"
                   % (p.rings[0].capacity, ",".join(full)))
    kept = kept_report(p)
    if kept is not None:
        m = re.match(r"profiled \d+ ms\n(\d+) samples on", kept[0])
        if m and int(m.group(1)) > nsamples:
            why.append("the kernel's report counted %s samples" % m.group(1))
    return "; ".join(why) or None


def check_running_build_id(elf_id):
    """Refuses when the kernel in memory is another build than the ELF gdb has: its build id note (which the
    linker script brackets with __build_id_note) must be there and match. Says nothing for an ELF without
    that symbol."""
    try:
        addr = int(gdb.parse_and_eval("(unsigned long)&__build_id_note"))
    except gdb.error:
        return
    running = None
    try:
        header = bytes(gdb.selected_inferior().read_memory(addr, 12))
        size = kp.note_body_size(header)
        if size <= kp.NOTE_BODY_MAX:
            running = kp.build_id_from_note(header + bytes(gdb.selected_inferior().read_memory(addr + 12, size)))
    except gdb.MemoryError:
        pass
    if running != elf_id:
        raise gdb.GdbError("the running kernel is not %s (build %s): %s; load the ELF it was booted from"
                           % (kernel_elf(), elf_id, "its build id is %s" % running if running else
                              "no build id note where this ELF has one"))


def sample_period_ns(p):
    """The run's sampling period as the kernel stated it for the raw header: profiler_start keeps the last
    run's in last_period_ns (kernel/profiler.c), so nothing here repeats how it is computed."""
    return int(need_static("last_period_ns", "kernel/profiler.c"))


# ---- gdb commands -----------------------------------------------------------------------------------------------

class _ProfPrefix(gdb.Command):
    """The profiler of a paused kprof: prof buffers [CPU], prof report [CHAINS], prof state, prof pmu,
prof export FILE, prof tasks, prof heap [N]. Memory only (all but prof pmu): works through QEMU's gdbstub too."""

    def __init__(self):
        super().__init__("prof", gdb.COMMAND_DATA, gdb.COMPLETE_NONE, True)


class _ProfCommand(gdb.Command):
    def __init__(self, name, fn, complete=gdb.COMPLETE_NONE):
        super().__init__("prof " + name, gdb.COMMAND_DATA, complete)
        self.fn = fn

    def invoke(self, arg, from_tty):
        out = self.fn(arg)
        text, note = out if isinstance(out, tuple) else (out, None)
        gdb.write(text if text.endswith("\n") else text + "\n")
        if note:
            gdb.write(note + "\n", gdb.STDERR)


class _ProfBuffers(_ProfCommand):
    """Records of the current (or last) run in each CPU's ring, or only CPU's: cpu, pid, labels, frames.
Usage: prof buffers [CPU]"""

    def __init__(self):
        super().__init__("buffers", buffers)


class _ProfReport(_ProfCommand):
    """The console's report of the last run, word for word (with CHAINS: cut to the CHAINS hottest chains);
of a run in progress or never reported, the rings' records folded in the same format, after a line saying
it is a partial view. Usage: prof report [CHAINS]"""

    def __init__(self):
        super().__init__("report", report)


class _ProfState(_ProfCommand):
    """Run control, the sample source, each CPU's ring indexes and drops, and its PMU armed flag.
Usage: prof state"""

    def __init__(self):
        super().__init__("state", state)


class _ProfPmu(_ProfCommand):
    """Every PMU MSR of every CPU, decoded, through kprof's stub (`monitor pmu`).
Usage: prof pmu"""

    def __init__(self):
        super().__init__("pmu", pmu)


class _ProfExport(_ProfCommand):
    """Writes the run's samples as a pprof profile (gzipped profile.proto), as scripts/profexport does.
Usage: prof export FILE"""

    def __init__(self):
        super().__init__("export", export, gdb.COMPLETE_FILENAME)


_ProfPrefix()
_ProfBuffers()
_ProfReport()
_ProfState()
_ProfPmu()
_ProfExport()
import prof_tasks  # noqa: E402  (`prof tasks`, a module of its own; it uses the readers above)
prof_tasks.register(sys.modules[__name__])
import prof_heap  # noqa: E402  (`prof heap`, the same)
prof_heap.register(sys.modules[__name__])
