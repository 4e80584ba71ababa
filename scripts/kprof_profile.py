"""scripts/kprof_profile.py: the profiler's samples on the host -- shared by scripts/prof.py (gdb, a paused
machine's rings), scripts/profexport (raw samples from a file or the UDP shell) and their tests.

Layers, each usable on its own:
  - the kernel's symbol table, rebuilt from the ELF exactly as the link baked it (scripts/gensyms.py over
    `nm -n -S --defined-only`), with the kernel's lookups: a leaf at its address, a return address at addr - 1;
  - the fold and the report, exactly kernel/profiler/fold.c and report.c: leaf by symbol with its span of offsets, callers
    by exact return address, a table of 128 chains, hottest first with ties in first-seen order, percentages in
    tenths rounded half up;
  - the rings of a paused kernel, for scripts/prof.py: records decoded by the layout gdb reads from DWARF, and
    a run's records found walking back from each ring's head (the kernel's report consumed them, but they
    stay in memory);
  - the raw sample format of `profile MS [pid|all] raw` (docs/profiler.md), parsed and validated: truncated or
    malformed input, and input from another build (its build id against the ELF's, from `readelf -n`), is
    refused;
  - source file:line and inlined frames from the ELF's DWARF, through binutils' addr2line;
  - the outputs: folded stacks (`root;...;leaf count`) and a pprof profile (gzipped profile.proto, through the
    Python module protoc generates from pprof's own profile.proto: plain `make` builds it, or it is built
    here when missing);
  - one UDP shell command with its reply checked complete (scripts/kprof_wire.py).
Standard library and binutils only, except the pprof output, which needs python3-protobuf.
"""

import bisect
import collections
import fractions
import gzip
import importlib
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
if HERE not in sys.path:
    sys.path.insert(0, HERE)
import gensyms  # noqa: E402
import kprof_wire  # noqa: E402

# kernel/profiler.h
MAX_FRAMES = 8
CHAIN_TABLE = 128
CHAINS_MIN = 1
CHAINS_MAX = CHAIN_TABLE
CHAINS_DEFAULT = 8

DEFAULT_ELF = os.path.join(TOP, "build", "kprof.elf")
PB2_DIR = os.path.join(TOP, "build", "pprof")
PPROF_PROTO_DIR = "/usr/share/gocode/src/github.com/google/pprof/proto"   # the Makefile's, from Debian


class ProfileError(Exception):
    """Input refused or a tool failed; the message is one line for the user."""


# ---- the ELF ------------------------------------------------------------------------------------------------

def _run_tool(argv, stdin=None):
    try:
        done = subprocess.run(argv, input=stdin, capture_output=True, timeout=120)
    except FileNotFoundError:
        raise ProfileError("%s is not installed (scripts/deps.sh installs it)" % argv[0]) from None
    if done.returncode != 0:
        raise ProfileError("%s failed: %s" % (" ".join(argv), done.stderr.decode(errors="replace").strip()))
    return done.stdout


def elf_build_id(elf):
    """The ELF's GNU build id as lowercase hex, from `readelf -n`; ProfileError when it has none."""
    if not os.path.isfile(elf):
        raise ProfileError("%s: no such file" % elf)
    out = _run_tool(["readelf", "-n", "-W", elf]).decode(errors="replace")
    m = re.search(r"Build ID:\s*([0-9a-fA-F]+)", out)
    if not m:
        raise ProfileError("%s has no GNU build id note" % elf)
    return m.group(1).lower()


def elf_exec_segment(elf, addr):
    """(vaddr, memsz, offset) of the executable PT_LOAD segment holding addr, from `readelf -lW`; None when no
    segment holds it."""
    out = _run_tool(["readelf", "-l", "-W", elf]).decode(errors="replace")
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 8 and f[0] == "LOAD":
            offset, vaddr, memsz = int(f[1], 16), int(f[2], 16), int(f[5], 16)
            if vaddr <= addr < vaddr + memsz:
                return vaddr, memsz, offset
    return None


# ---- the kernel's symbol table and its lookups (kernel/symbols.c) --------------------------------------------

Hit = collections.namedtuple("Hit", "name start offset")


class Symtab:
    """The function symbols the kernel bakes into itself, chosen by scripts/gensyms.py from the same nm output,
    so a lookup here answers what the kernel's own lookup answers."""

    def __init__(self, symbols, text_start, text_end):
        # symbols: [(addr, size, name bytes)] sorted by address, one per address (gensyms.select_symbols)
        self.addrs = [a for a, _, _ in symbols]
        self.sizes = [s for _, s, _ in symbols]
        self.names = [n.decode("latin-1") for _, _, n in symbols]
        self.text_start = text_start
        self.text_end = text_end

    @classmethod
    def from_nm_output(cls, data):
        try:
            entries = gensyms.parse_nm(data)
            start, end = gensyms.text_range(entries)
            return cls(gensyms.select_symbols(entries), start, end)
        except gensyms.NmError as e:
            raise ProfileError("symbols: %s" % e) from None

    @classmethod
    def from_elf(cls, elf):
        if not os.path.isfile(elf):
            raise ProfileError("%s: no such file" % elf)
        return cls.from_nm_output(_run_tool(["nm", "-n", "-S", "--defined-only", elf]))

    def lookup(self, addr):
        """symtab_lookup: the symbol holding addr, or None (outside the text, in a gap, past a known size)."""
        if not self.addrs or not self.text_start <= addr < self.text_end:
            return None
        i = bisect.bisect_right(self.addrs, addr)
        if i == 0:
            return None
        start, size = self.addrs[i - 1], self.sizes[i - 1]
        if size != 0 and addr - start >= size:
            return None
        return Hit(self.names[i - 1], start, addr - start)

    def lookup_return(self, addr):
        """symtab_lookup_return: the symbol of the call before return address addr (found at addr - 1), with
        the offset of addr itself; None for 0 or when addr - 1 does not resolve."""
        if addr == 0:
            return None
        hit = self.lookup(addr - 1)
        return Hit(hit.name, hit.start, addr - hit.start) if hit else None

    def find(self, name):
        """The address of the symbol called name, or None."""
        for a, n in zip(self.addrs, self.names):
            if n == name:
                return a
        return None

    def leaf_text(self, addr):
        hit = self.lookup(addr)
        return "%s+0x%x" % (hit.name, hit.offset) if hit else "0x%x" % addr

    def caller_text(self, addr):
        hit = self.lookup_return(addr)
        return "%s+0x%x" % (hit.name, hit.offset) if hit else "0x%x" % addr


# ---- samples ------------------------------------------------------------------------------------------------

# labels: a tuple of (key, value) pairs, () for none; frames: leaf first, then return addresses.
# flags: PROFILE_REC_* (interrupts off, in an interrupt, let in); held_off_us: how late a let-in tick was;
# period: what the sample stands for in its run's unit (cycles of the counter's event, or nanoseconds), 0 when
# unknown (raw v1, an old kernel): it then weighs as one.
# state: a wall sample's context word -- "running", "runnable" or "waiting=WAIT" -- and "" for a CPU sample.
Sample = collections.namedtuple("Sample", "cpu pid time_ns labels frames flags held_off_us period state",
                                defaults=(0, 0, 0, ""))


def sample_weight(s):
    """What a sample weighs in the fold and the exports (profile_record_weight): its period, 1 when unknown."""
    return s.period or 1


def labels_text(labels, none="-"):
    """A label set as the raw format writes it: k=v,k=v, or - (none) for no set."""
    return ",".join("%s=%s" % kv for kv in labels) if labels else none


# ---- the rings in a paused kernel's memory (kernel/profiler.h) --------------------------------------------

RingRecord = collections.namedtuple("RingRecord", "labels time_ns pid run cpu nframes frames flags held_off_us "
                                    "period labels_generation", defaults=(0, 0, 0, 0))
RECORD_FIELDS = ("labels", "time_ns", "pid", "run", "cpu", "nframes", "frames")
# kernels before issues 13, 23 and 35 lack them: read as 0
RECORD_OPTIONAL = ("flags", "held_off_us", "period", "labels_generation")
_SIGNED = {"time_ns"}


class RecordLayout:
    """struct profile_record as the debug info lays it out: size, and per field (offset, element size, count)
    -- count is the array length of frames, 1 for the others. Decodes records from little-endian bytes."""

    def __init__(self, size, fields):
        missing = [f for f in RECORD_FIELDS if f not in fields]
        if missing:
            raise ProfileError("struct profile_record has no %s: scripts/prof.py does not know this layout"
                               % ", ".join(missing))
        self.size = size
        self.fields = dict(fields)

    def _int(self, buf, base, name, index=0):
        if name not in self.fields:
            return 0
        off, size, _count = self.fields[name]
        start = base + off + index * size
        return int.from_bytes(buf[start:start + size], "little", signed=name in _SIGNED)

    PROBED = ("time_ns", "run", "cpu")

    def probe_span(self):
        """(offset, length) of the bytes of a record that hold its time, run and cpu fields, for a probe."""
        spans = [(self.fields[f][0], self.fields[f][0] + self.fields[f][1]) for f in self.PROBED]
        lo = min(a for a, _ in spans)
        return lo, max(b for _, b in spans) - lo

    def probed(self, buf, offset):
        """(time_ns, run, cpu) from the bytes of probe_span(), which began at record offset `offset`."""
        out = []
        for f in self.PROBED:
            off, size, _ = self.fields[f]
            out.append(int.from_bytes(buf[off - offset:off - offset + size], "little", signed=f in _SIGNED))
        return tuple(out)

    def decode(self, buf, i):
        """Record i of buf (records packed back to back). nframes is clamped to the array, as the fold does."""
        base = i * self.size
        nframes = self._int(buf, base, "nframes")
        count = self.fields["frames"][2]
        frames = tuple(self._int(buf, base, "frames", k) for k in range(min(nframes, count)))
        return RingRecord(self._int(buf, base, "labels"), self._int(buf, base, "time_ns"),
                          self._int(buf, base, "pid"), self._int(buf, base, "run"), self._int(buf, base, "cpu"),
                          nframes, frames, self._int(buf, base, "flags"), self._int(buf, base, "held_off_us"),
                          self._int(buf, base, "period"), self._int(buf, base, "labels_generation"))


def record_labels(pointer, generation, read_set):
    """A ring record's label set (kernel/labels.h) as ((key, value), ...), () for none (a NULL pointer).
    read_set(pointer) says what is at the pointer now: (the set's generation, None when the kernel keeps none;
    its pairs, or None for a freed slot, or (("set", "0x...(why)"),) when it cannot be read). A drained record
    (or one committed after its run's last drain) may point at a set the pool has freed since, and at a slot it
    has given to a new set: a generation that is not the record's, or a freed slot, reads as
    (("set", "0x...(gone)"),) -- never as the new set's labels, nor as no labels."""
    if pointer == 0:
        return ()
    set_generation, pairs = read_set(pointer)
    if pairs is None or (set_generation is not None and set_generation != generation):
        return (("set", "0x%x(gone)" % pointer),)
    return pairs


def ring_run_records(read_slots, head, mask, run, cpu, chunk=128, first=None):
    """The records of run in one CPU's ring, oldest first: the report's selection without its consumption.

    One CPU fills its ring in order, in time order, and the run it reads at each sample only moves forward
    (R-1, none, R): a run's records are one block ending at head (a straggler of the run before, committed
    after this run started, sits just below it). The report advances the tail past them but leaves them where
    they are. So they are found walking back from head, a chunk of slots at a time (read_slots(first_index,
    count) -> [RingRecord], indexes free-running), for at most the ring's capacity, while each record is the
    run's: its run, this ring's cpu, a frame count the sampler can write, and a time no later than the record
    after it. The walk stops at the first that is not -- an older run, or a slot never written since the
    rings were allocated, whose leftover bytes cannot pass all four.

    first (a free-running index, from run_block_first): the record just below it is known not to be the
    run's, so the walk goes no lower -- with chunk at least head - first, one read_slots call reads exactly
    the slots the walk examines."""
    capacity = mask + 1
    limit = capacity if first is None else min(capacity, (head - first) & 0xFFFFFFFF)
    got = []
    pos = head
    later = None  # time of the record after the one examined
    while len(got) < limit:
        n = min(chunk, limit - len(got))
        first = (pos - n) & 0xFFFFFFFF
        recs = read_slots(first, n)
        taken = 0
        for r in reversed(recs):
            if r.run != run or r.cpu != cpu or not 1 <= r.nframes <= MAX_FRAMES or \
                    (later is not None and r.time_ns > later):
                break
            later = r.time_ns
            taken += 1
        if taken:
            got[:0] = recs[n - taken:]
        if taken < n:
            break
        pos = first
    return got


def run_block_first(probe, head, capacity, time_of=None, start_ns=None, stride=16, floor=None):
    """Where a run's block in one CPU's ring may begin, found by reading only a few slots' time, run and cpu:
    probe(index) (free-running, masked by the caller) says whether that slot carries the run and this ring's
    cpu. Returns a free-running index b such that the slot below b fails the probe, or b = head - capacity
    (the whole ring); head when the newest slot already fails. So ring_run_records(..., first=b) then reads
    only [b, head): the slot below b fails the very checks the walk makes first, so the walk would have
    stopped there, and the records found are the walk's over the whole ring, whatever the leftover slots hold.

    With time_of(index) (the time of a slot probe has read) and the run's start: records are in time order
    and none of the run is older than its start, so the search interpolates -- the lowest slot of the run
    found so far and the newest give this CPU's rate of records, which back to the start says where the
    block begins (the first pair: the newest and the one `stride` below it). A CPU whose ticks came evenly
    costs about 5 probes. After 2 log2(capacity) such steps a plain bisection takes over, so uneven times
    (or leftover slots' garbage) cost at most about three times a binary search. Without times: the oldest
    slot (a ring full of the run: 2 probes), then a binary search, about log2(capacity) probes.

    floor (free-running): where the ring's writing began, when it has not yet gone round (the kernel starts
    every ring at index 0): the slot below it is probed first, and when it fails the search stays above it.
    One probe that saves the search over slots never written."""
    mask = 0xFFFFFFFF
    if capacity == 0 or not probe((head - 1) & mask):
        return head
    lowest = head - capacity
    good, bad = head - 1, lowest - 1  # probe(good) holds; bad fails, or is below the ring; unwrapped integers
    timed = time_of is not None and start_ns is not None
    if floor is not None:
        f = head - ((head - floor) & mask)  # unwrapped, at or below head
        if lowest < f < head and not probe((f - 1) & mask):
            bad = lowest = f - 1
    if not timed:
        if probe(lowest & mask):
            return lowest & mask
        bad = lowest
    newest_t = time_of((head - 1) & mask) if timed else None
    good_t = newest_t
    guided = 2 * capacity.bit_length()  # interpolating steps allowed before plain bisection takes over
    refuted = 0  # the next upward step after failed probes (doubling)
    while good - bad > 1:
        width = good - bad
        x = None
        if timed and guided > 0:
            guided -= 1
            if good == head - 1:
                x = max(head - 1 - stride, bad + 1)  # a second point, for the rate
            elif newest_t > good_t >= start_ns:
                # records between the start and good at the rate seen: the first comes up to a period late
                ahead = (good_t - start_ns) * (head - 1 - good) // (newest_t - good_t)
                boundary = good - ahead
                if boundary <= bad + 1:
                    # at or below a slot that failed (or the ring's oldest): just above it, galloping up
                    # after each further failure
                    x = bad + (refuted or 1)
                elif good == head - 1 - stride and ahead > 2:
                    # a rate from a few records only: aim a little inside the block, for a good point near
                    # its start and from it a rate over (nearly) all of it
                    x = boundary + max(1, ahead // 16)
                else:
                    x = boundary - 1  # the slot below the estimated start decides
        if x is None or not bad < x < good:
            x = bad + width // 2
        if probe(x & mask):
            good = x
            refuted = 0
            if timed:
                good_t = time_of(x & mask)
        else:
            bad = x
            refuted = 2 * refuted or 1
    return good & mask


def split_at_tail(block, head, tail):
    """(the records of a run's block that the kernel's report folds, those committed after it read the ring).
    A report takes what is in the ring when it reads it and advances the tail past it; a straggler of the run
    committed after that (a CPU that was past its check of the run when it stopped) stays waiting, left for
    the next start. So a tail inside the block marks where the report stopped; a tail at or below the block
    (the run is recording, or its report has not run yet) means the report folds, or will fold, all of it."""
    waiting = (head - tail) & 0xFFFFFFFF
    if waiting < len(block):
        cut = len(block) - waiting
        return block[:cut], block[cut:]
    return block, []


# ---- the gdb stub and the build id --------------------------------------------------------------------------

def is_monitor_pmu_answer(text):
    """Whether text is kprof's stub answering `monitor pmu` (its first line `pmu: ...`, then a line per CPU);
    QEMU's gdbstub hands monitor commands to its own monitor, which knows no `pmu`."""
    lines = text.splitlines()
    return bool(lines) and lines[0].startswith("pmu: ") and any(l.startswith("cpu ") for l in lines[1:])


NT_GNU_BUILD_ID = 3
NOTE_BODY_MAX = 256  # a build id note's name and descriptor; anything longer is not one


def note_body_size(header):
    """Bytes after the 12-byte ELF note header: the name and the descriptor, each padded to 4."""
    namesz = int.from_bytes(header[0:4], "little")
    descsz = int.from_bytes(header[4:8], "little")
    return ((namesz + 3) & ~3) + ((descsz + 3) & ~3)


def build_id_from_note(note):
    """The build id (hex) of an ELF note holding NT_GNU_BUILD_ID, "GNU"; None when it is not one."""
    if len(note) < 12:
        return None
    namesz = int.from_bytes(note[0:4], "little")
    descsz = int.from_bytes(note[4:8], "little")
    ntype = int.from_bytes(note[8:12], "little")
    name = note[12:12 + namesz]
    desc_at = 12 + ((namesz + 3) & ~3)
    if ntype != NT_GNU_BUILD_ID or name.rstrip(b"\0") != b"GNU" or len(note) < desc_at + descsz or descsz == 0:
        return None
    return note[desc_at:desc_at + descsz].hex()


def source_word(name):
    """The source name as the raw header's one word (profile_raw_source_word): spaces become '-',
    anything unprintable '?'."""
    return "".join("-" if c == " " else c if "!" <= c <= "~" else "?" for c in name)


# ---- the fold and the report (kernel/profiler/fold.c, report.c) -----------------------------------------------

# kernel/profiler.h: what a record knows about the context it interrupted (profile_record.flags)
REC_IRQS_OFF = 0x01
REC_IN_IRQ = 0x02
REC_LET_IN = 0x04
REC_FLAGS = REC_IRQS_OFF | REC_IN_IRQ | REC_LET_IN

# enum profiler_cpu_source, and the words the report gives each
CPU_ABSENT, CPU_TICK, CPU_COUNTER, CPU_TICK_ARM_FAULT, CPU_TICK_STOPPED = range(5)
CPU_SOURCE_WORDS = {CPU_ABSENT: "-", CPU_TICK: "tick", CPU_COUNTER: "counter",
                    CPU_TICK_ARM_FAULT: "tick (arm faulted)", CPU_TICK_STOPPED: "tick (counter stopped)"}
NMI_BUDGET_PERCENT = 25  # PROFILE_NMI_BUDGET_PERCENT
PER_CPU_WIDTH = 100      # the per-CPU line wraps before this column


class Chain:
    __slots__ = ("leaf", "name", "min_offset", "max_offset", "callers", "count", "weight", "flags", "held_off_us")

    def __init__(self, leaf, name, offset, callers, flags=0, held_off_us=0, weight=1):
        self.leaf = leaf            # the leaf's symbol start, or its raw address when it does not resolve
        self.name = name            # the leaf's symbol, None when unresolved
        self.min_offset = self.max_offset = offset
        self.callers = callers      # exact return addresses, innermost first
        self.count = 1
        self.weight = weight        # the periods its samples stand for: what its percentage is of
        self.flags = flags          # REC_*: part of the chain's identity, as in the kernel
        self.held_off_us = held_off_us  # let-in chains: summed over their samples


class Fold:
    """Chains in first-seen order in a table of CHAIN_TABLE; a chain that finds the table full is counted in
    not_tracked only, as the kernel does. cpu_samples: samples folded per CPU."""

    def __init__(self, symtab):
        self.symtab = symtab
        self.chains = []
        self._index = {}
        self.samples = 0
        self.not_tracked = 0
        self.weight = 0
        self.shares = {}  # label set -> [samples, weight], in first-seen order
        self.cpu_samples = collections.Counter()

    def add(self, frames, labels=(), cpu=0, flags=0, held_off_us=0, weight=1):
        share = self.shares.setdefault(labels, [0, 0])
        share[0] += 1
        share[1] += weight
        frames = tuple(frames[:MAX_FRAMES])
        pc = frames[0] if frames else 0
        callers = frames[1:]
        hit = self.symtab.lookup(pc)
        flags &= REC_FLAGS
        key = (hit.start if hit else pc, hit is not None, callers, flags)
        self.samples += 1
        self.weight += weight
        self.cpu_samples[cpu] += 1
        c = self._index.get(key)
        if c is not None:
            c.count += 1
            c.weight += weight
            c.held_off_us += held_off_us
            if hit:
                c.min_offset = min(c.min_offset, hit.offset)
                c.max_offset = max(c.max_offset, hit.offset)
            return
        if len(self.chains) == CHAIN_TABLE:
            self.not_tracked += 1
            return
        c = Chain(key[0], hit.name if hit else None, hit.offset if hit else 0, callers, flags, held_off_us, weight)
        self.chains.append(c)
        self._index[key] = c

    def hottest(self):
        """Hottest (by weight) first; equal weights keep first-seen order (Python's sort is stable, like the
        kernel's)."""
        return sorted(self.chains, key=lambda c: -c.weight)


def percent(part, whole):
    """part/whole in tenths of a percent rounded half up, integers only, as the kernel prints it."""
    tenths = (part * 1000 + whole // 2) // whole if whole else 0
    return "%d.%d%%" % (tenths // 10, tenths % 10)


def chain_marks(c):
    """What the chain's samples interrupted when it was not ordinary code with interrupts on (print_marks)."""
    if c.flags & REC_LET_IN:
        avg_us = c.held_off_us // c.count if c.count else 0
        return " [let in after %d.%d ms irqs off]" % (avg_us // 1000, avg_us % 1000 // 100)
    if c.flags & REC_IN_IRQ and c.flags & REC_IRQS_OFF:
        return " [in irq, irqs off]"
    if c.flags & REC_IN_IRQ:
        return " [in irq]"
    if c.flags & REC_IRQS_OFF:
        return " [irqs off]"
    return ""


def chain_lines(fold, max_chains):
    """The report's chain section: the max_chains hottest chains, then the lines for the rest."""
    out = []
    symtab = fold.symtab
    order = fold.hottest()
    shown = min(len(order), max_chains)
    for c in order[:shown]:
        if c.name is None:
            leaf = "0x%x" % c.leaf
        elif c.min_offset == c.max_offset:
            leaf = "%s+0x%x" % (c.name, c.min_offset)
        else:
            leaf = "%s+0x%x..0x%x" % (c.name, c.min_offset, c.max_offset)
        out.append("%s %d %s%s" % (percent(c.weight, fold.weight), c.count, leaf, chain_marks(c)))
        out += ["        <- " + symtab.caller_text(a) for a in c.callers]
    if len(order) > shown:
        rest = sum(c.count for c in order[shown:])
        rest_weight = sum(c.weight for c in order[shown:])
        out.append("... %d more chains, %d samples (%s)" % (len(order) - shown, rest,
                                                            percent(rest_weight, fold.weight)))
    if fold.not_tracked:
        out.append("more than %d distinct chains: %d samples in chains not shown" % (CHAIN_TABLE, fold.not_tracked))
    return out


def label_share_line(fold):
    """The breakdown by label set, "labels: 62.5% (250) cmd=profile, 37.5% (150) (none)": hottest first, ties
    in first-seen order; None when no sample carried a set (the kernel then prints no such line)."""
    if not any(fold.shares):
        return None
    order = sorted(fold.shares.items(), key=lambda kv: -kv[1][1])
    return "labels: " + ", ".join("%s (%d) %s" % (percent(w, fold.weight), n, labels_text(labels, "(none)"))
                                  for labels, (n, w) in order)


# pmu_snapshot (hal/pmu.h): regs [(name, value, faulted)] and what they decode to
Snapshot = collections.namedtuple("Snapshot", "regs counting pmi_enabled globally_enabled frozen lvt_masked "
                                              "lvt_nmi")


class CpuAccount:
    """One CPU's account of a run (struct profiler_cpu_run): the fields the report reads."""

    def __init__(self, run, source, throttled=False, period_cycles=0, stopped_ns=0, stopped_msrs=None,
                 held_off_ns=0, let_in_pc=0, late_elsewhere_ns=0, ticks=0, nmis=0, late_ticks=0, let_in_ticks=0):
        self.run = run
        self.source = source
        self.throttled = throttled
        self.period_cycles = period_cycles
        self.stopped_ns = stopped_ns
        self.stopped_msrs = stopped_msrs or Snapshot((), False, False, False, False, False, False)
        self.held_off_ns = held_off_ns
        self.let_in_pc = let_in_pc
        self.late_elsewhere_ns = late_elsewhere_ns
        self.ticks, self.nmis, self.late_ticks, self.let_in_ticks = ticks, nmis, late_ticks, let_in_ticks


class RunInfo:
    """What the report says about a run besides its samples (struct profile_run, and the rings' drops):
    the window, the source (tick_reason None on a counter run), the rates, each ring's drops and each CPU's
    account (None, or an account of another run, where it has none). irq_enable_site(pc) answers the kernel's
    irq_enable_before() -- "sti", "popf" or None -- from the bytes before pc."""

    def __init__(self, run, window_ms, ncpus, source, tick_reason, tick_hz, period_ns, period_cycles=0,
                 drops=None, cpus=None, irq_enable_site=None, busy_ns=None):
        self.run = run
        self.window_ms = window_ms
        self.ncpus = ncpus
        self.source = source
        self.tick_reason = tick_reason
        self.tick_hz = tick_hz
        self.period_ns = period_ns
        self.period_cycles = period_cycles
        self.drops = list(drops) if drops is not None else [0] * ncpus
        self.cpus = list(cpus) if cpus is not None else [None] * ncpus
        self.irq_enable_site = irq_enable_site or (lambda pc: None)
        self.busy_ns = busy_ns  # per CPU: the window less its idle time; None when not measured

    def account(self, cpu):
        c = self.cpus[cpu] if cpu < len(self.cpus) else None
        return c if c is not None and c.run == self.run else None


def _c_div(a, b):
    """C's integer division (toward zero), for signed nanoseconds."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def source_line(run):
    """print_source: "source tick at 100 Hz (reason)", "source pmu/... every P cycles (~H Hz)", mixed."""
    on_counter = on_tick = 0
    for cpu in range(run.ncpus):
        c = run.account(cpu)
        if c is None:
            continue
        if c.source == CPU_COUNTER:
            on_counter += 1
        elif c.source != CPU_ABSENT:
            on_tick += 1
    if run.tick_reason is None and on_tick and on_counter:
        return "source mixed: %s every %d cycles on %d cpus, tick at %d Hz on %d" % (
            run.source, run.period_cycles, on_counter, run.tick_hz, on_tick)
    if run.tick_reason is None and on_tick:
        return "source tick at %d Hz (no cpu kept its counter)" % run.tick_hz
    if run.tick_reason is None:
        return "source %s every %d cycles" % (run.source, run.period_cycles)
    return "source tick at %d Hz (%s)" % (run.tick_hz, run.tick_reason)


def per_cpu_lines(run, fold):
    """print_per_cpu: "per cpu: 0:1380 1:1391 2:1370/12 3:345 (throttled: every 8400000 cycles)", wrapped
    before column 100."""
    text = "per cpu:"
    column = 8
    for cpu in range(run.ncpus):
        drops = run.drops[cpu]
        n = fold.cpu_samples[cpu]
        item = " %d:%d/%d" % (cpu, n, drops) if drops else " %d:%d" % (cpu, n)
        c = run.account(cpu)
        if c is not None and c.throttled:
            item += " (throttled: every %d cycles)" % c.period_cycles
        if column + len(item) > PER_CPU_WIDTH:
            text += "\n         "
            column = 8
        text += item
        column += len(item)
    return text.split("\n")


def rate_lines(run, fold):
    """print_rates: on the counter, "rate per busy second: 0:1002 1:- ...", each CPU's samples per second of
    its busy time, wrapped before column 100; nothing on the tick or when busy time was not measured."""
    if run.tick_reason is not None or run.busy_ns is None:
        return []
    text = "rate per busy second:"
    column = 21
    for cpu in range(run.ncpus):
        c = run.account(cpu)
        busy = run.busy_ns[cpu]
        if c is not None and c.source == CPU_COUNTER and busy:
            item = " %d:%d" % (cpu, (fold.cpu_samples[cpu] * 1000000000 + busy // 2) // busy)
        else:
            item = " %d:-" % cpu
        if column + len(item) > PER_CPU_WIDTH:
            text += "\n" + " " * 21
            column = 21
        text += item
        column += len(item)
    return text.split("\n")


def _ms_share(ns, window_ms):
    ms = ns // 1000000
    return "%d ms" % ms + (" (%d%%)" % (ms * 100 // window_ms) if window_ms else "")


def _snapshot_text(snap):
    regs = ", ".join("%s #GP" % name if faulted else "%s 0x%x" % (name, value) for name, value, faulted in snap.regs)
    return [regs, "        counting %s, pmi %s, enabled %s, frozen %s, lvt %s%s" % (
        "on" if snap.counting else "off", "on" if snap.pmi_enabled else "off",
        "yes" if snap.globally_enabled else "no", "yes" if snap.frozen else "no",
        "masked" if snap.lvt_masked else "unmasked", "" if snap.lvt_nmi else ", not nmi")]


def cpu_note_lines(run, symtab):
    """print_cpu_notes: a CPU whose source is not the run's, a stopped counter and its registers, throttling,
    how long the tick was held off and where it was let in, ticks late for other reasons."""
    out = []
    counter_run = run.tick_reason is None
    on_counter = on_tick = throttled = False
    held_total = elsewhere_total = 0
    for cpu in range(run.ncpus):
        c = run.account(cpu)
        if c is None:
            continue
        on_counter |= c.source == CPU_COUNTER
        on_tick |= c.source not in (CPU_COUNTER, CPU_ABSENT)
        throttled |= bool(c.throttled)
        if counter_run and c.source != CPU_COUNTER:
            out.append("cpu %d: %s" % (cpu, CPU_SOURCE_WORDS.get(c.source, "?")))
        if c.source == CPU_TICK_STOPPED:
            regs, decoded = _snapshot_text(c.stopped_msrs)
            stopped_ms = _c_div(c.stopped_ns, 1000000) & (2**64 - 1)  # (unsigned long long) of an int64_t
            out.append("cpu %d: its counter stopped interrupting %d ms into the run (no overflow in a busy "
                       "stretch); on the tick since. It showed: %s" % (cpu, stopped_ms, regs))
            out.append(decoded)
        if c.throttled:
            out.append("cpu %d: throttled: its NMIs took over %d%% of the cpu, period doubled to %d cycles"
                       % (cpu, NMI_BUDGET_PERCENT, c.period_cycles))
        held_total += c.held_off_ns
        elsewhere_total += c.late_elsewhere_ns
    if held_total:
        parts, site = [], 0
        for cpu in range(run.ncpus):
            c = run.account(cpu)
            if c is None or not c.held_off_ns:
                continue
            parts.append(" cpu %d %s" % (cpu, _ms_share(c.held_off_ns, run.window_ms)))
            site = c.let_in_pc
        line = "tick held off by interrupts-off code:" + ",".join(parts)
        hit = symtab.lookup(site) if site else None
        if hit:
            line += "; let in at %s+0x%x (%s)" % (hit.name, hit.offset, run.irq_enable_site(site) or "?")
        out.append(line)
    if elsewhere_total * 100 > run.window_ms * 1000000 * run.ncpus * 5:
        parts = [" cpu %d %s" % (cpu, _ms_share(run.account(cpu).late_elsewhere_ns, run.window_ms))
                 for cpu in range(run.ncpus) if run.account(cpu) is not None and run.account(cpu).late_elsewhere_ns]
        out.append("ticks late elsewhere (the cpu was taken away, not held off):" + ",".join(parts))
    reasons = []
    if counter_run and on_counter and on_tick:
        reasons.append("the counter's samples weigh core cycles, the tick's TSC cycles")
    if throttled:
        reasons.append("a throttled cpu's samples weigh its longer period")
    if held_total:
        reasons.append("a held-off tick weighs the ticks it stood for")
    if reasons:
        out.append("percentages are of weight, not of sample counts: " + "; ".join(reasons))
    return out


def report_lines(run, fold, max_chains, pid=None, label=None):
    """A whole report, line by line, as kernel/profiler/report.c's profile_report_print writes it: the window,
    the totals and the source, the per-CPU line and notes, the label breakdown when samples carried labels,
    then the chains or the line saying why there are none. run: a RunInfo; pid and label ((key, value)): the
    filters, if any."""
    cpus = sum(1 for cpu in range(run.ncpus) if fold.cpu_samples[cpu])
    dropped = sum(run.drops[:run.ncpus])
    out = ["profiled %d ms" % run.window_ms,
           "%d samples on %d cpus, %d dropped, %s" % (fold.samples, cpus, dropped, source_line(run))]
    if dropped and (pid is not None or label is not None):
        out.append("dropped: the %d are of every task's samples: a full ring drops before the filter" % dropped)
    out += per_cpu_lines(run, fold)
    out += rate_lines(run, fold)
    out += cpu_note_lines(run, fold.symtab)
    shares = label_share_line(fold)
    if shares:
        out.append(shares)
    if fold.samples == 0:
        if label is not None and pid is not None:
            out.append("no samples for pid %d with label %s=%s: the task may have been asleep, or without that "
                       "label, the whole window" % (pid, label[0], label[1]))
        elif label is not None:
            out.append("no samples with label %s=%s: no task that carried it was sampled in the window" % label)
        elif pid is not None:
            out.append("no samples for pid %d: the task may simply have been asleep the whole window" % pid)
        else:
            out.append("no samples: nothing was sampled in the window")
            if run.tick_reason is None:
                out.append("idle CPUs contribute nothing on the counter: it counts unhalted cycles")
    else:
        out += chain_lines(fold, max_chains if max_chains else 1)
    return out


def fold_samples(samples, symtab, pid=None, label=None):
    """(Fold, cpus that contributed) over samples in their order, keeping those of pid and with the pair
    label ((key, value)) when they are given, as the kernel's report filters."""
    fold = Fold(symtab)
    for s in samples:
        if pid is not None and s.pid != pid:
            continue
        if label is not None and tuple(label) not in s.labels:
            continue
        fold.add(s.frames, s.labels, s.cpu, s.flags, s.held_off_us, sample_weight(s))
    return fold, sum(1 for n in fold.cpu_samples.values() if n)


_RX_CHAIN_LEAF = re.compile(r"(\d+)\.(\d)% (\d+) \S.*")
_RX_CHAIN_MORE = re.compile(r"\.\.\. (\d+) more chains, (\d+) samples \((\d+)\.(\d)%\)")


def cut_report(text, chains):
    """(a report's text as the kernel would have printed it with `chains` chains, a note or None): what gdb
    does with the console's kept report when asked for fewer chains. The chains past the first `chains` are
    summed into the `... N more chains` line, with the samples the report already summed there; asked for
    more than it shows, the text stays as it is and the note says so. The line's share is exact when every
    sample weighed the same (each percentage is its count's); when they did not (a throttled CPU), the text
    does not hold the weights, so it is the sum of the cut lines' rounded percentages, and the note says so."""
    lines = text.split("\n")
    header = re.match(r"(\d+) samples on", lines[1]) if len(lines) > 1 else None
    first = next((i for i, l in enumerate(lines) if i > 1 and _RX_CHAIN_LEAF.fullmatch(l)), None)
    if header is None or first is None:
        return text, None
    total = int(header.group(1))
    blocks, i = [], first
    while i < len(lines) and _RX_CHAIN_LEAF.fullmatch(lines[i]):
        j = i + 1
        while j < len(lines) and lines[j].startswith("        <- "):
            j += 1
        m = _RX_CHAIN_LEAF.fullmatch(lines[i])
        blocks.append((int(m.group(3)), int(m.group(1)) * 10 + int(m.group(2)), lines[i:j]))
        i = j
    more = _RX_CHAIN_MORE.fullmatch(lines[i]) if i < len(lines) else None
    tail = lines[i + 1:] if more else lines[i:]
    if chains >= len(blocks):
        note = "the console's report shows %d chains; the rest only as its `... more chains` line" \
            % len(blocks) if more and chains > len(blocks) else None
        return text, note
    rest_chains = len(blocks) - chains + (int(more.group(1)) if more else 0)
    rest = sum(n for n, _, _ in blocks[chains:]) + (int(more.group(2)) if more else 0)
    out = lines[:first] + [l for _, _, b in blocks[:chains] for l in b]
    more_tenths = int(more.group(3)) * 10 + int(more.group(4)) if more else None
    uniform = all(percent(n, total) == "%d.%d%%" % (t // 10, t % 10) for n, t, _ in blocks) and \
        (more is None or percent(int(more.group(2)), total) == "%d.%d%%" % (more_tenths // 10, more_tenths % 10))
    note = None
    if uniform:
        share = percent(rest, total)
    else:
        tenths = sum(t for _, t, _ in blocks[chains:]) + (more_tenths or 0)
        share = "%d.%d%%" % (tenths // 10, tenths % 10)
        note = "the samples weighed differently (a throttled cpu): the cut chains' share is the sum of their " \
               "rounded percentages"
    out.append("... %d more chains, %d samples (%s)" % (rest_chains, rest, share))
    return "\n".join(out + tail), note


def tick_run(window_ms, ncpus=4, reason="no usable PMU", hz=100, drops=None, run=1):
    """A RunInfo of a tick run with no per-CPU accounts: the simplest report there is (tests, tools)."""
    return RunInfo(run, window_ms, ncpus, "tick", reason, hz, 1000000000 // hz, 0, drops,
                   [CpuAccount(run, CPU_TICK) for _ in range(ncpus)])


# ---- the raw sample format -----------------------------------------------------------------------------------

RAW_VERSION = "v2"          # what the kernel writes (kernel/profiler/raw.h); v1 is still read
RAW_VERSIONS = ("v1", "v2")
RAW_HEADER_KEYS = {"v1": ("source", "period_ns", "window_ms", "cpus", "build_id"),
                   "v2": ("source", "period", "unit", "window_ms", "cpus", "build_id")}
UNITS = ("ns", "cycles")   # enum profile_unit's words: the tick's nanoseconds, the counter event's cycles
_RAW_HEADER = re.compile(r"# kprof raw (\S+)((?: \S+=\S*)*)")
_RAW_END = re.compile(r"# kprof raw end samples=(\d+) dropped=(\d+)")
_HEX = re.compile(r"0x[0-9a-fA-F]{1,16}")
_DEC = re.compile(r"-?\d+")
_LABEL = re.compile(r"([^=,\s]+)=([^,\s]*)")


# The context marks of a sample line, in the order the kernel writes them (kernel/profiler/raw.c)
CONTEXT_MARKS = (("irqs-off", 0x01), ("in-irq", 0x02), ("let-in=", 0x04))


def context_word(flags, held_off_us):
    """The raw line's context field: "-", or the marks of flags in order, let-in with its microseconds."""
    words = [w + ("%d" % held_off_us if bit == REC_LET_IN else "") for w, bit in CONTEXT_MARKS if flags & bit]
    return ",".join(words) or "-"


# A wall sample's context (kernel/profiler/raw.c): what its task was doing, and on what it waited; a wall run
# sweeps every task every WALL_PERIOD_NS (PROFILE_WALL_PERIOD_MS).
WALL_PERIOD_NS = 10000000
WALL_STATES = ("running", "runnable")
WAIT_NAMES = ("sleep", "input", "net", "task", "device")


def is_wall_state(word):
    return word in WALL_STATES or (word.startswith("waiting=") and word[len("waiting="):] in WAIT_NAMES)


def parse_context(word):
    """(flags, held_off_us) of a context field, or None when it is not one the kernel writes. A wall sample's
    word is not a mark: parse_sample takes it as the sample's state."""
    if word == "-":
        return 0, 0
    flags = held = 0
    rest = word.split(",")
    for w, bit in CONTEXT_MARKS:
        if not rest:
            break
        if bit == REC_LET_IN:
            if not rest[0].startswith(w) or not re.fullmatch(r"0|[1-9]\d{0,9}", rest[0][len(w):]) or \
                    int(rest[0][len(w):]) > 0xFFFFFFFF:
                continue
            held = int(rest[0][len(w):])
        elif rest[0] != w:
            continue
        flags |= bit
        rest = rest[1:]
    return (flags, held) if not rest else None


class RawProfile:
    """One `profile ... raw` reply: its header fields, samples in the kernel's order, the trailer's totals.
    period is the run's nominal period in unit: "ns" (the tick) or "cycles" (the counter's event)."""

    def __init__(self, source, period, window_ms, cpus, build_id, samples, dropped, origin=None, unit="ns"):
        self.source = source
        self.period = period
        self.unit = unit
        self.window_ms = window_ms
        self.cpus = cpus
        self.build_id = build_id
        self.samples = samples
        self.dropped = dropped
        self.origin = origin  # the host it came from, for the `host` label; None for a file

    @property
    def period_ns(self):
        """The period in nanoseconds where the source counts time (the tick); None on the counter, whose
        cycles are no exact number of nanoseconds."""
        return self.period if self.unit == "ns" else None

    def header_line(self):
        return "# kprof raw %s source=%s period=%d unit=%s window_ms=%d cpus=%d build_id=%s" % (
            RAW_VERSION, self.source, self.period, self.unit, self.window_ms, self.cpus, self.build_id)

    def text(self):
        """The raw text of this profile (what the kernel prints for it)."""
        lines = [self.header_line()]
        for s in self.samples:
            lines.append(sample_line(s))
        lines.append("# kprof raw end samples=%d dropped=%d" % (len(self.samples), self.dropped))
        return "\n".join(lines) + "\n"


def _parse_labels(field, where):
    if field == "-":
        return ()
    pairs = []
    for part in field.split(","):
        m = _LABEL.fullmatch(part)
        if not m:
            raise ProfileError("%s: bad label set %r (want k=v,k=v or -)" % (where, field))
        pairs.append((m.group(1), m.group(2)))
    return tuple(pairs)


def sample_line(s):
    """A Sample as the raw format's line (kernel/profiler/raw.c, v2), without its newline."""
    flags = s.flags & REC_FLAGS
    context = s.state or context_word(flags, s.held_off_us if flags & REC_LET_IN else 0)
    return "s %d %d %d %s %d %s %s" % (s.cpu, s.pid, s.time_ns, labels_text(s.labels), s.period, context,
                                       " ".join("0x%x" % a for a in s.frames))


def parse_sample(line, where, ncpus, version=RAW_VERSION):
    """One sample line of the raw format (the stream's datagrams carry the same lines); where names it in
    the error. Version 1 lines have no period and no context: they weigh one and carry no marks."""
    f = line.split(" ")
    period, flags, held, state = 0, 0, 0, ""
    if version != "v1" and len(f) >= 8 and f[0] == "s":
        if not re.fullmatch(r"0|[1-9]\d{0,9}", f[5]) or int(f[5]) > 0xFFFFFFFF:
            raise ProfileError("%s: bad period in %r" % (where, line))
        if is_wall_state(f[6]):
            state = f[6]
            context = (0, 0)
        else:
            context = parse_context(f[6])
        if context is None:
            raise ProfileError("%s: bad context %r in %r" % (where, f[6], line))
        period = int(f[5])
        flags, held = context
        f = f[:5] + f[7:]
    elif version != "v1":
        raise ProfileError("%s: not a sample line: %r" % (where, line))
    if len(f) < 6 or f[0] != "s":
        raise ProfileError("%s: not a sample line: %r" % (where, line))
    if not all(_DEC.fullmatch(x) for x in f[1:4]) or f[1].startswith("-") or f[2].startswith("-"):
        raise ProfileError("%s: bad cpu, pid or time in %r" % (where, line))
    cpu, pid, time_ns = int(f[1]), int(f[2]), int(f[3])
    if cpu >= ncpus:
        raise ProfileError("%s: cpu %d, but the header says %d cpus" % (where, cpu, ncpus))
    labels = _parse_labels(f[4], where)
    addrs = f[5:]
    if len(addrs) > MAX_FRAMES:
        raise ProfileError("%s: %d frames, at most %d" % (where, len(addrs), MAX_FRAMES))
    if not all(_HEX.fullmatch(a) for a in addrs):
        raise ProfileError("%s: bad address in %r" % (where, line))
    return Sample(cpu, pid, time_ns, labels, tuple(int(a, 16) for a in addrs), flags, held, period, state)


def parse_raw(text, origin=None):
    """Parses the whole text of one `profile ... raw` reply (str or bytes). Every line ends with a newline,
    everything between the header and the end line must be sample lines, and the end line's count must match:
    a reply cut short anywhere is refused, never read as a smaller profile."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    name = origin or "raw input"
    if text and not text.endswith("\n"):
        # every line ends with its newline: one without it was cut short, whatever it looks like
        last = text.rsplit("\n", 1)[-1]
        raise ProfileError("%s is truncated: its last line has no newline: %r" % (name, last[:80]))
    lines = [l.rstrip("\r") for l in text.split("\n")]
    while lines and not lines[-1].strip():
        lines.pop()
    first = 0
    while first < len(lines) and not lines[first].strip():
        first += 1
    if first == len(lines):
        raise ProfileError("%s is empty" % name)
    m = _RAW_HEADER.fullmatch(lines[first])
    if not m:
        raise ProfileError("%s: line %d is not a `# kprof raw v2 ...` header: %r" % (name, first + 1, lines[first]))
    version = m.group(1)
    if version not in RAW_VERSIONS:
        raise ProfileError("%s: raw format %s, this reads %s" % (name, version, " and ".join(RAW_VERSIONS)))
    fields = dict(kv.split("=", 1) for kv in m.group(2).split())
    missing = [k for k in RAW_HEADER_KEYS[version] if k not in fields]
    if missing:
        raise ProfileError("%s: the header lacks %s" % (name, ", ".join(missing)))
    unit = fields.get("unit", "ns")
    if unit not in UNITS:
        raise ProfileError("%s: unit %r is neither ns nor cycles" % (name, unit))
    try:
        period = int(fields["period_ns" if version == "v1" else "period"])
        window_ms, ncpus = int(fields["window_ms"]), int(fields["cpus"])
    except ValueError:
        raise ProfileError("%s: bad number in the header %r" % (name, lines[first])) from None
    build_id = fields["build_id"].lower()
    if not re.fullmatch(r"[0-9a-f]+|none", build_id):
        raise ProfileError("%s: bad build id %r" % (name, fields["build_id"]))
    if period <= 0 or window_ms < 0 or ncpus <= 0:
        raise ProfileError("%s: impossible header %r" % (name, lines[first]))

    samples = []
    end = None
    for i in range(first + 1, len(lines)):
        line = lines[i]
        where = "%s line %d" % (name, i + 1)
        if end is not None:
            raise ProfileError("%s: text after the end line: %r" % (where, line))
        e = _RAW_END.fullmatch(line)
        if e:
            end = (int(e.group(1)), int(e.group(2)))
            continue
        if line.startswith("#"):
            raise ProfileError("%s: unexpected line %r" % (where, line))
        samples.append(parse_sample(line, where, ncpus, version))
    if end is None:
        raise ProfileError("%s is truncated: no `# kprof raw end` line after %d samples" % (name, len(samples)))
    if end[0] != len(samples):
        raise ProfileError("%s is truncated: the end line says %d samples, %d arrived" % (name, end[0], len(samples)))
    return RawProfile(fields["source"], period, window_ms, ncpus, build_id, samples, end[1], origin, unit)


def period_text(period, unit, rate=False):
    """A run's nominal period for a comment: "period_ns=10000000" (with rate, "... rate_hz=100") on the tick,
    "period=2100000 unit=cycles" on the counter, whose cycles make no exact rate."""
    if unit != "ns":
        return "period=%d unit=%s" % (period, unit)
    return "period_ns=%d" % period + (" rate_hz=%d" % round(1e9 / period) if rate else "")


def check_build_id(raw, elf_id, elf_path):
    """Refuses raw samples that do not come from the build of elf_path (build id elf_id)."""
    if raw.build_id == "none":
        raise ProfileError("%s carries no build id (build_id=none): nothing says it comes from %s"
                           % (raw.origin or "the raw input", elf_path))
    if raw.build_id != elf_id:
        raise ProfileError("%s comes from another build: build id %s, but %s has %s"
                           % (raw.origin or "the raw input", raw.build_id, elf_path, elf_id))


# ---- source lines and inlined frames (addr2line) ------------------------------------------------------------

Frame = collections.namedtuple("Frame", "function file line")


class Lines:
    """Function, file and line of code addresses from the ELF's DWARF, inlined frames included (innermost
    first, the function that holds the code last), through one `addr2line -a -f -i` per batch. Where DWARF
    has no function (assembly), the kernel's symbol table names it; where nothing does, the address does."""

    def __init__(self, elf, symtab):
        self.elf = elf
        self.symtab = symtab
        self._cache = {}

    def _addr2line(self, addrs):
        query = "".join("0x%x\n" % a for a in addrs).encode()
        out = _run_tool(["addr2line", "-a", "-f", "-i", "-e", self.elf], stdin=query).decode(errors="replace")
        got = {}
        cur = None
        lines = out.split("\n")
        i = 0
        while i < len(lines):
            line = lines[i]
            if re.fullmatch(r"0x[0-9a-f]+", line):
                cur = int(line, 16)
                got[cur] = []
                i += 1
                continue
            if cur is None or i + 1 >= len(lines):
                break
            func, loc = line, lines[i + 1]
            loc = re.sub(r" \(discriminator \d+\)$", "", loc)
            path, _, num = loc.rpartition(":")
            got[cur].append((func, path, int(num) if num.isdigit() else 0))
            i += 2
        return got

    def resolve(self, addrs):
        """Fills the cache for every address in addrs (code addresses: a return address minus one)."""
        todo = sorted({a for a in addrs if a not in self._cache})
        if not todo:
            return
        got = self._addr2line(todo)
        for a in todo:
            self._cache[a] = self._frames(a, got.get(a, []))

    def _frames(self, addr, pairs):
        hit = self.symtab.lookup(addr)
        frames = []
        for func, path, line in pairs:
            if path in ("??", ""):
                path = ""
            if func == "??":
                func = hit.name if hit else None
            if func is None:
                continue
            frames.append(Frame(func, path, line))
        if not frames:
            frames.append(Frame(hit.name if hit else "0x%x" % addr, "", 0))
        return tuple(frames)

    def frames(self, addr):
        if addr not in self._cache:
            self.resolve([addr])
        return self._cache[addr]


def code_address(addr, is_leaf):
    """Where the code of a frame is: the leaf's own address; for a return address, the call before it."""
    return addr if is_leaf or addr == 0 else addr - 1


def sample_frames(sample, lines):
    """The frames of a sample, leaf first, inlined frames expanded (innermost first)."""
    out = []
    for i, a in enumerate(sample.frames):
        out.extend(lines.frames(code_address(a, i == 0)))
    return out


def resolve_all(profiles, lines):
    lines.resolve(code_address(a, i == 0) for p in profiles for s in p.samples for i, a in enumerate(s.frames))


# ---- folded stacks ------------------------------------------------------------------------------------------

def context_marks(flags):
    """The report's mark for a sample's flags, without the let-in's time ("" for ordinary code): print_marks."""
    if flags & REC_LET_IN:
        return "let in"
    if flags & REC_IN_IRQ and flags & REC_IRQS_OFF:
        return "in irq, irqs off"
    if flags & REC_IN_IRQ:
        return "in irq"
    if flags & REC_IRQS_OFF:
        return "irqs off"
    return ""


def sample_mark(s):
    """A sample's mark as the report prints a chain's (" [irqs off]", " [let in after 19.4 ms irqs off]"), ""
    for ordinary code."""
    mark = context_marks(s.flags)
    if mark == "let in":
        mark = "let in after %d.%d ms irqs off" % (s.held_off_us // 1000, s.held_off_us % 1000 // 100)
    return " [%s]" % mark if mark else ""


def folded(profiles, lines):
    """Folded stacks, one `root;...;leaf count` line per distinct stack, sorted. A sample the console report
    marks gets the mark as one more frame past its leaf -- `...;burn_inner;[irqs off]`, `[in irq]`, `[in irq,
    irqs off]`, `[let in after 19.4 ms irqs off]` (the stack's average, as the report prints a chain's) -- so
    the flame graph keeps the code's own tree (a function is as wide as all its time) and the mark sits on
    the code it applies to, as wide as its share. A count is what the stack's samples weigh in their run's
    nominal periods (each sample's period over its header's, rounded half up; a stack sampled at all counts
    at least 1): the number of samples when nothing was throttled."""
    resolve_all(profiles, lines)
    weights = collections.defaultdict(fractions.Fraction)
    held = collections.Counter()
    taken = collections.Counter()
    for p in profiles:
        for s in p.samples:
            names = [f.function.replace(";", ":").replace(" ", "_") for f in reversed(sample_frames(s, lines))]
            mark = context_marks(s.flags)
            key = (";".join(names), mark)
            weights[key] += fractions.Fraction(s.period, p.period) if s.period and p.period else 1
            taken[key] += 1
            held[key] += s.held_off_us if s.flags & REC_LET_IN else 0
    out = collections.Counter()
    for (stack, mark), w in weights.items():
        if mark == "let in":
            avg_us = held[(stack, mark)] // taken[(stack, mark)]
            mark = "let in after %d.%d ms irqs off" % (avg_us // 1000, avg_us % 1000 // 100)
        out[stack + (";[%s]" % mark if mark else "")] += max(1, int(w + fractions.Fraction(1, 2)))
    return "".join("%s %d\n" % (stack, n) for stack, n in sorted(out.items()))


# ---- pprof --------------------------------------------------------------------------------------------------

def build_profile_pb2(pb2_dir=PB2_DIR, proto_dir=PPROF_PROTO_DIR):
    """Generates pb2_dir/profile_pb2.py from pprof's profile.proto with protoc, as the Makefile does (written
    whole or not at all: protoc writes into a fresh directory, which then replaces the file)."""
    proto = os.path.join(proto_dir, "profile.proto")
    if not os.path.isfile(proto):
        raise ProfileError("%s is missing: pprof's schema comes with golang-github-google-pprof-dev "
                           "(scripts/deps.sh installs it)" % proto)
    os.makedirs(pb2_dir, exist_ok=True)
    scratch = tempfile.mkdtemp(prefix=".profile_pb2.", dir=pb2_dir)
    try:
        _run_tool(["protoc", "--proto_path=" + proto_dir, "--python_out=" + scratch, proto])
        os.replace(os.path.join(scratch, "profile_pb2.py"), os.path.join(pb2_dir, "profile_pb2.py"))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def load_profile_pb2(pb2_dir=PB2_DIR, proto_dir=PPROF_PROTO_DIR):
    """The module protoc generates from pprof's profile.proto (build/pprof/profile_pb2.py, which plain `make`
    builds); generated here first when it is missing."""
    if not os.path.isfile(os.path.join(pb2_dir, "profile_pb2.py")):
        build_profile_pb2(pb2_dir, proto_dir)
    if pb2_dir not in sys.path:
        sys.path.insert(0, pb2_dir)
    try:
        return importlib.import_module("profile_pb2")
    except ImportError as e:
        raise ProfileError("cannot load the pprof schema module: %s (is python3-protobuf installed?)" % e) from None


class _Strings:
    def __init__(self, table):
        self.table = table
        self.index = {}
        self("")

    def __call__(self, s):
        i = self.index.get(s)
        if i is None:
            i = self.index[s] = len(self.table)
            self.table.append(s)
        return i


# pprof's value type for each unit of a run's period: (type, unit)
PPROF_VALUE_TYPES = {"ns": ("cpu", "nanoseconds"), "cycles": ("cycles", "count")}
# pprof's `context` label for each mark the report prints (kernel/profiler/report.c's print_marks)
PPROF_CONTEXT = ((REC_IRQS_OFF, "irqs-off"), (REC_IN_IRQ, "in-irq"), (REC_LET_IN, "let-in"))


def pprof_context(flags):
    """The `context` label values of a sample: "let-in" alone for a let-in tick (as the report marks it),
    else "irqs-off" and/or "in-irq"; none for ordinary code."""
    if flags & REC_LET_IN:
        return ("let-in",)
    return tuple(word for bit, word in PPROF_CONTEXT if flags & bit and bit != REC_LET_IN)


def build_pprof(profiles, symtab, lines, elf, build_id, pb2, host_label=False, comments=()):
    """A perftools.profiles.Profile message of the samples of profiles (RawProfile-like objects, with a period
    and its unit): sample types samples/count and the run's own -- cpu/nanoseconds on the tick, cycles/count
    on the counter, each sample weighing its own period (a throttled CPU's doubled one) -- with the nominal
    period as period_type/period; one mapping for the kernel with its build id, a location per distinct frame
    address with its lines (inlined frames included), a function per name and file, and the samples' labels
    as string labels, with cpu and pid (and `host` when host_label) as labels too, and what the console report
    marks as `context` (irqs-off, in-irq, let-in) with the let-in's `held_off_us` as a number in
    microseconds. Wall samples (a state each) make a wall profile instead: wall/nanoseconds every 10 ms, each
    sample's state and what it waited on as labels `state` and `waiting_on`, fgprof's way."""
    resolve_all(profiles, lines)
    units = {getattr(p, "unit", "ns") for p in profiles}
    if len(units) > 1:
        raise ProfileError("the profiles count in different units (%s): one pprof has one period type"
                           % " and ".join(sorted(units)))
    unit = units.pop() if units else "ns"
    value_type, value_unit = PPROF_VALUE_TYPES[unit]
    # A wall run's samples (their context word a state): wall/nanoseconds every WALL_PERIOD_NS, as fgprof's.
    kinds = {bool(s.state) for p in profiles for s in p.samples}
    if len(kinds) > 1:
        raise ProfileError("wall samples and CPU samples in one pprof: they measure different things")
    wall = kinds == {True}
    if wall:
        value_type, value_unit = "wall", "nanoseconds"
    prof = pb2.Profile()
    st = _Strings(prof.string_table)

    for typ, vunit in (("samples", "count"), (value_type, value_unit)):
        vt = prof.sample_type.add()
        vt.type, vt.unit = st(typ), st(vunit)
    prof.period_type.type, prof.period_type.unit = st(value_type), st(value_unit)
    prof.period = WALL_PERIOD_NS if wall else profiles[0].period if profiles else 0
    prof.duration_nanos = max((p.window_ms for p in profiles), default=0) * 1000000
    prof.time_nanos = time.time_ns()
    prof.default_sample_type = st(value_type)
    for c in comments:
        prof.comment.append(st(c))

    seg = elf_exec_segment(elf, symtab.text_start)
    m = prof.mapping.add()
    m.id = 1
    if seg:
        m.memory_start, m.memory_limit, m.file_offset = seg[0], seg[0] + seg[1], seg[2]
    else:
        m.memory_start, m.memory_limit = symtab.text_start, symtab.text_end
    m.filename = st(os.path.abspath(elf))
    m.build_id = st(build_id)
    m.has_functions = m.has_filenames = m.has_line_numbers = m.has_inline_frames = True

    functions = {}
    locations = {}

    def function_id(frame):
        key = (frame.function, frame.file)
        fid = functions.get(key)
        if fid is None:
            fid = functions[key] = len(functions) + 1
            f = prof.function.add()
            f.id = fid
            f.name = f.system_name = st(frame.function)
            f.filename = st(frame.file)
        return fid

    def location_id(addr, is_leaf):
        key = (addr, is_leaf)
        lid = locations.get(key)
        if lid is None:
            lid = locations[key] = len(locations) + 1
            loc = prof.location.add()
            loc.id = lid
            if m.memory_start <= addr < m.memory_limit:
                loc.mapping_id = m.id
            loc.address = addr
            for fr in lines.frames(code_address(addr, is_leaf)):
                ln = loc.line.add()
                ln.function_id = function_id(fr)
                ln.line = fr.line
        return lid

    aggregate = collections.OrderedDict()
    for p in profiles:
        for s in p.samples:
            locs = tuple(location_id(a, i == 0) for i, a in enumerate(s.frames))
            labels = list(s.labels)
            if host_label and p.origin is not None:
                labels.append(("host", p.origin))
            held = s.held_off_us if s.flags & REC_LET_IN else None
            if s.state:
                # "running", "runnable", or "waiting=net": state, and what a waiting task waited on
                state, _, waiting_on = s.state.partition("=")
                labels.append(("state", state))
                if waiting_on:
                    labels.append(("waiting_on", waiting_on))
            key = (locs, tuple(labels), s.cpu, s.pid, pprof_context(s.flags), held)
            n, w = aggregate.get(key, (0, 0))
            aggregate[key] = (n + 1, w + (s.period or p.period))

    for (locs, labels, cpu, pid, context, held), (n, weight) in aggregate.items():
        smp = prof.sample.add()
        smp.location_id.extend(locs)
        smp.value.extend([n, weight])
        for k, v in labels:
            lb = smp.label.add()
            lb.key, lb.str = st(k), st(v)
        for word in context:
            lb = smp.label.add()
            lb.key, lb.str = st("context"), st(word)
        if held is not None:
            lb = smp.label.add()
            lb.key, lb.num, lb.num_unit = st("held_off_us"), held, st("microseconds")
        # strings, not numbers: pprof reads a numeric label of 0 without a unit as no label at all
        for k, v in (("cpu", cpu), ("pid", pid)):
            lb = smp.label.add()
            lb.key, lb.str = st(k), st(str(v))
    return prof


def pprof_bytes(prof):
    """The message serialised and gzipped, as pprof reads it (mtime 0: the same profile, the same bytes)."""
    return gzip.compress(prof.SerializeToString(), mtime=0)


# ---- the UDP shell ------------------------------------------------------------------------------------------

def parse_host(spec):
    """HOST[:PORT] -> (host, port)."""
    host, sep, port = spec.rpartition(":")
    if not sep:
        return spec, kprof_wire.UDPSH_PORT
    if not host or not port.isdigit() or not 1 <= int(port) <= 65535:
        raise ProfileError("bad host %r (want HOST or HOST:PORT)" % spec)
    return host, int(port)


def udp_command(host, port, command, timeout, key=None):
    """Runs one command over the UDP shell (the token round trip included; with key, a keyed request) and
    returns its text (bytes) once the reply is complete by its end marker; ProfileError when it is refused,
    damaged, incomplete or late."""
    try:
        addr = socket.getaddrinfo(host, port, socket.AF_INET, socket.SOCK_DGRAM)[0][4]
    except socket.gaierror as e:
        raise ProfileError("%s: %s" % (host, e.strerror)) from None
    where = "%s:%d" % addr
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.connect(addr)
        try:
            reply = kprof_wire.exchange(sock, command.encode() + b"\n", timeout, key=key,
                                        straggler_wait=kprof_wire.STRAGGLER_WAIT)
        except ConnectionRefusedError:
            raise ProfileError("%s refused the datagram (is the kernel up, is the port right?)" % where) from None
    problem = reply.problem()
    if problem is not None:
        raise ProfileError("%s: %s%s" % (where, problem, "" if reply.trailer or reply.refusal or reply.token
                                         else " (waited %gs)" % timeout))
    if reply.trailer.status:
        raise ProfileError("%s: `%s` failed: %s" % (where, command, reply.text.decode(errors="replace").strip()))
    return reply.text
