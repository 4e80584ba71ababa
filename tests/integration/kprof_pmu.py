"""The PMU's and the NMI path's console checks, shared by tests/integration/test_pmu.py and test_nmi.py.

Owns: lscpu (the `lscpu` table, its single-valued keys checked) and one(); profile (one `profile` run whose
header and leaf lines are checked; the source and the reason the header names); assert_nmi_panic (after the
QEMU monitor's `nmi`: one panic line, a symbolised backtrace, then silence), with the forms they read
(RX_WINDOW, RX_HEADER, RX_LEAF, RX_LSCPU, RX_FRAME, NMI_PANIC) and their timeouts. The full report's parser is
kprof_report.py's.
"""

import re

from kprof_qemu import KprofError, nm_symbols

PROFILE_TIMEOUT = 30.0    # `profile 300 all 2` echo to prompt under TCG on a loaded machine
PANIC_TIMEOUT = 15.0      # monitor `nmi` to the panic line
RX_WINDOW = re.compile(r"(?m)^profiled (\d+) ms$")
# The source is "tick at N Hz (reason)" here: QEMU's TCG offers no counter.
RX_HEADER = re.compile(r"(?m)^(\d+) samples on (\d+) cpus, (\d+) dropped, source (\S+)(?: at \d+ Hz)?(?: \((.*)\))?$")
RX_LEAF = re.compile(r"(?m)^\d+\.\d% (\d+) \S+(?: \[[a-z0-9., ]+\])?$")
RX_LSCPU = re.compile(r"^([a-z][a-z ]*):\s+(.*)$")
RX_FRAME = re.compile(r"^ {8}<- (?:(\S+)\+0x([0-9a-f]+)|0x[0-9a-f]+)$")
NMI_PANIC = "panic: NMI received: a genuine NMI, not claimed by any kprof source"


def lscpu(k):
    """{key: [values]} from `lscpu` (perfmon may appear more than once)."""
    out = k.cmd("lscpu")
    table = {}
    for line in out.split("\n"):
        if not line.strip():
            continue
        m = RX_LSCPU.match(line)
        if not m:
            raise KprofError("lscpu line %r is not `key: value`; lscpu said:\n%s" % (line, out))
        table.setdefault(m.group(1), []).append(m.group(2).strip())
    for key in ("vendor", "hypervisor", "probe", "profile"):
        if len(table.get(key, [])) != 1:
            raise KprofError("lscpu has %d `%s:` lines; it said:\n%s" % (len(table.get(key, [])), key, out))
    return table, out


def one(table, key):
    return table[key][0]


def profile(k, line="profile 300 all 2"):
    """Runs a profile and returns (samples, cpus, dropped, source, reason, out); checks the report has
    samples and leaf lines that add up."""
    out = k.cmd(line, timeout=PROFILE_TIMEOUT)
    assert RX_WINDOW.search(out), "%r printed no `profiled N ms` line:\n%s" % (line, out)
    m = RX_HEADER.search(out)
    assert m, "%r printed no header line:\n%s" % (line, out)
    samples, cpus, dropped = int(m.group(1)), int(m.group(2)), int(m.group(3))
    source, reason = m.group(4), m.group(5)
    assert samples > 0, "the profile has no samples:\n%s" % out
    leaves = [int(c) for c in RX_LEAF.findall(out)]
    assert leaves, "the profile has no leaf lines:\n%s" % out
    assert sum(leaves) <= samples, "leaf counts %s add up to more than %d samples:\n%s" % (leaves, samples, out)
    return samples, cpus, dropped, source, reason, out


def assert_nmi_panic(k, during=None):
    """After monitor `nmi`: exactly one NMI panic line, symbolised backtrace lines, then silence; during, when
    given, is a regex that must not appear before the panic (the interrupted command finishing)."""
    alt = NMI_PANIC if during is None else "%s|%s" % (re.escape(NMI_PANIC), during)
    m = k.expect(r"(?m)^(?:%s)" % alt, PANIC_TIMEOUT, what="the NMI panic line")
    assert m.group(0) == NMI_PANIC, "%r came before any NMI panic: the NMI was swallowed" % m.group(0)
    k.expect(r"(?m)^ {8}<- \S+\+0x[0-9a-f]+\n", PANIC_TIMEOUT, what="a symbolised backtrace line")
    k.quiet_for(1.0)  # the rest of the backtrace; that it then stays silent is checked below
    text = k.log.replace("\r", "")
    assert text.count("panic:") == 1, "more than one panic line:\n%s" % text[text.index("panic:"):]
    tail = text[text.index(NMI_PANIC):]
    frames = [l for l in tail.split("\n") if "<- " in l]
    syms = nm_symbols()
    named = []
    for line in frames:
        f = RX_FRAME.match(line)
        assert f, "backtrace line %r is not `        <- Symbol+0xoff`" % line
        if f.group(1):
            assert f.group(1) in syms, "backtrace names %r, not a function in build/kprof.elf" % f.group(1)
            named.append(f.group(1))
    assert named, "no symbolised backtrace lines after the panic:\n%s" % tail
    if during is not None:
        assert not re.search(during, tail), "the interrupted command finished after the panic:\n%s" % tail
    k.send("help\r")
    assert k.quiet_for(1.5), "the kernel still answered after the panic:\n%s" % k._tail()
    assert k.alive(), "QEMU exited after the panic (a stopped kernel halts, it does not reset)"
