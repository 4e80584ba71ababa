"""Label sets in QEMU: `label PID key=value ...` / `label PID -` on live tasks, `ps` showing them, the shell's
own cmd=<name> label, `profile ... key=value` keeping only one label's samples, the `labels:` breakdown line
adding up, `profile MS all raw` over the console parsed back in full (header, one line per sample, trailer),
the table filling up with a clear one-line error, and netload labelling the network task for its session.

The breakdown line is `labels: P% (N) SET, P% (N) SET, ...`: share, sample count and set (`(none)` for samples
without one), hottest first; the counts add up to the header's sample count (checked by
kprof_report.parse_labels, which every parsed report goes through).

Timing-sensitive checks go through kprof_qemu.unstarved: retried only when the host starved QEMU's ticks.
"""

import bisect
import os
import re
import subprocess

import pytest

from kprof_net import wait_dhcp
from kprof_qemu import ELF, TOP, HostStarved, elf_build_id, nm_symbols, ps_rows, unstarved
from span_check import label_pool as pool
from kprof_report import (CPUS, TICK_MS, WINDOW_SLACK_MS, burn_pids, finished_pid, is_burn_chain, parse_report,
                           wait_burn_done, wait_no_burn)

# Kernels this module boots (conftest.py fails a boot past BOOTS), by the test that boots them -- a module kernel
# counts for the first test that uses it, a test named alone needs a fresh one:
# test_netload_labels_the_network_task_for_its_session 1, test_ps_shows_labels_and_the_shell_labels_its_command 1.
BOOTS = 2

LABEL_USAGE = "usage: label [PID key=value ... [span=N] | PID -]"

UDPSH = os.path.join(TOP, "scripts", "udpsh")

RX_RAW_HEADER = re.compile(r"# kprof raw v2 source=(\S+) period=(\d+) unit=ns window_ms=(\d+) cpus=(\d+) "
                           r"build_id=([0-9a-f]+|none)")
RX_RAW_SAMPLE = re.compile(r"s (\d+) (\d+) (-?\d+) (-|[a-z0-9_.-]{1,15}=[!-+\--<>-~]{1,23}"
                           r"(?:,[a-z0-9_.-]{1,15}=[!-+\--<>-~]{1,23}){0,3}) \d+ (?:-|let-in=\d+) "
                           r"(0x[0-9a-f]+(?: 0x[0-9a-f]+){0,7})")
RX_RAW_TRAILER = re.compile(r"# kprof raw end samples=(\d+) dropped=(\d+)")


class RawProfile:
    def __init__(self, text):
        self.text = text
        self.source = self.period_ns = self.window_ms = self.cpus = self.build_id = None
        self.samples = []   # [(cpu, pid, time_ns, labels text, [addresses])]
        self.trailer_samples = self.dropped = None

    def silences_ms(self, longer_than_ms):
        """{cpu: its longest stretch without a sample, in ms} for each CPU that went longer than longer_than_ms
        without one inside the run: a CPU the host took away (its ticks coalesce when it comes back)."""
        times = {}
        for cpu, _, t, _, _ in self.samples:
            times.setdefault(cpu, []).append(t)
        longest = {cpu: max((b - a for a, b in zip(ts, ts[1:])), default=0) / 1e6 for cpu, ts in times.items()}
        return {cpu: round(ms) for cpu, ms in longest.items() if ms > longer_than_ms}


def parse_raw(text, ms):
    """A `profile ms ... raw` answer checked line by line: the header first, then only sample lines, the
    trailer last with the number of sample lines; each CPU's samples in time order within the window."""
    lines = text.split("\n")
    assert len(lines) >= 2, "a raw profile is at least a header and a trailer:\n%s" % text
    r = RawProfile(text)
    m = RX_RAW_HEADER.fullmatch(lines[0])
    assert m, "the first line is not the raw header: %r" % lines[0]
    r.source, r.period_ns, r.window_ms, r.cpus, r.build_id = \
        m.group(1), int(m.group(2)), int(m.group(3)), int(m.group(4)), m.group(5)
    assert ms <= r.window_ms <= ms + WINDOW_SLACK_MS, "window %d ms for %d ms:\n%s" % (r.window_ms, ms, lines[0])
    for line in lines[1:-1]:
        m = RX_RAW_SAMPLE.fullmatch(line)
        assert m, "line %r is not a sample line" % line
        pairs = m.group(4).split(",") if m.group(4) != "-" else []
        assert [p.split("=")[0] for p in pairs] == sorted(p.split("=")[0] for p in pairs), \
            "labels not sorted by key in %r" % line
        r.samples.append((int(m.group(1)), int(m.group(2)), int(m.group(3)), m.group(4),
                          [int(a, 16) for a in m.group(5).split()]))
    m = RX_RAW_TRAILER.fullmatch(lines[-1])
    assert m, "the last line is not the raw trailer: %r" % lines[-1]
    r.trailer_samples, r.dropped = int(m.group(1)), int(m.group(2))
    assert r.trailer_samples == len(r.samples), "the trailer says %d samples, %d lines came" \
        % (r.trailer_samples, len(r.samples))
    by_cpu = {}
    for cpu, _, t, _, _ in r.samples:
        assert cpu < r.cpus, "a sample from CPU %d of %d" % (cpu, r.cpus)
        by_cpu.setdefault(cpu, []).append(t)
    for cpu, times in by_cpu.items():
        assert times == sorted(times), "CPU %d's samples are not in time order" % cpu
        # one clock: every sample of the run inside its window. The raw header states the window asked for (it is
        # printed before the window runs, the samples drained as they come), which the run may overshoot by as
        # much as any window may (WINDOW_SLACK_MS), and a tick.
        assert times[-1] - times[0] <= (r.window_ms + WINDOW_SLACK_MS + TICK_MS) * 1000000, \
            "CPU %d's samples span %d ns in a %d ms window" % (cpu, times[-1] - times[0], r.window_ms)
    return r


class Symbols:
    """Address -> function name from the ELF's text symbols."""

    def __init__(self, elf=ELF):
        syms = sorted((addr, size, name) for name, (addr, size) in nm_symbols(elf).items())
        self.starts = [s[0] for s in syms]
        self.syms = syms

    def name(self, addr):
        i = bisect.bisect_right(self.starts, addr) - 1
        if i < 0:
            return None
        start, size, name = self.syms[i]
        return name if size == 0 or addr < start + size else None


def labels_of(k):
    """{pid: labels text} and {name: [labels]} from ps."""
    rows = ps_rows(k)
    return {r[0]: r[4] for r in rows}, {r[3]: [x[4] for x in rows if x[3] == r[3]] for r in rows}


def label(k, pid, *pairs):
    out = k.cmd("label %d %s" % (pid, " ".join(pairs)))
    shown = ",".join(sorted(pairs, key=lambda p: p.split("=")[0])) if pairs != ("-",) else "(none)"
    assert out == "pid %d labels %s" % (pid, shown), "label %d %s said: %r" % (pid, " ".join(pairs), out)


def labelled_burners(k):
    """Starts `burn 2000 2` and labels the two tasks job=a and job=b; their pids."""
    wait_no_burn(k)
    pids = burn_pids(k.cmd("burn 2000 2"))
    assert len(pids) == 2
    label(k, pids[0], "job=a")
    label(k, pids[1], "job=b")
    return pids


# ---- label and ps ------------------------------------------------------------------------------------------------
def test_ps_shows_labels_and_the_shell_labels_its_command(kernel):
    by_pid, by_name = labels_of(kernel)
    # the console shell runs `ps` as cmd=ps; tasks nobody labelled show "-"
    assert by_name["shell"] == ["cmd=ps"], "the shell's labels while it runs ps: %s" % by_name["shell"]
    assert set(by_name["idle"]) == {"-"} and by_name["reaper"] == ["-"], by_name
    pids = labelled_burners(kernel)
    by_pid, _ = labels_of(kernel)
    assert by_pid[pids[0]] == "job=a" and by_pid[pids[1]] == "job=b", by_pid
    # several pairs, given in any order, shown sorted by key; then cleared
    label(kernel, pids[0], "zone=7", "job=a", "cmd.sub=x-y")
    assert labels_of(kernel)[0][pids[0]] == "cmd.sub=x-y,job=a,zone=7"
    label(kernel, pids[0], "-")
    assert labels_of(kernel)[0][pids[0]] == "-"
    wait_burn_done(kernel)


BAD_LABEL = ["label 3", "label 3 span=x", "label 3 span=1 span=2", "label x job=a", "label -1 job=a", "label 4294967296 job=a", "label 3 job",
             "label 3 job=", "label 3 =a", "label 3 Job=a", "label 3 - job=a", "label 3 job=a -", "label 3 job=a job=b",
             "label 3 a=1 b=1 c=1 d=1 e=1", "label 3 job=a,b", "label 3 job=a=b", "label 3 0123456789abcdef=1",
             "label 3 k=ABCDEFGHIJKLMNOPQRSTUVWX", "label 3x job=a", "label 3 job=a b"]


@pytest.mark.parametrize("line", BAD_LABEL)
def test_label_bad_forms_get_the_usage_line(kernel, line):
    before = labels_of(kernel)[0]
    assert kernel.cmd(line) == LABEL_USAGE, "%r answered otherwise" % line
    after = labels_of(kernel)[0]
    assert {p: v for p, v in after.items() if p in before} == before, "%r changed some task's labels" % line


def test_label_unknown_and_finished_pids(kernel):
    assert kernel.cmd("label 99999 job=a") == "label: no task with pid 99999"
    assert kernel.cmd("label 4294967295 -") == "label: no task with pid 4294967295"
    pid = finished_pid(kernel)
    assert kernel.cmd("label %d job=a" % pid) == "label: no task with pid %d" % pid


# ---- the label filter and the breakdown ------------------------------------------------------------------------------
def test_label_filter_shows_only_that_task(kernel):
    def attempt():
        pids = labelled_burners(kernel)
        r = parse_report(kernel.cmd("profile 1000 all 3 job=a", timeout=30), 1000, 3)
        # one busy task, mostly alone on a CPU: sampled at nearly every tick of one CPU
        assert r.samples >= 0.5 * r.window / TICK_MS, "%d samples of job=a in %d ms:\n%s" \
            % (r.samples, r.window, r.text)
        assert r.labels == [("100.0", r.samples, "job=a")], "the breakdown of a job=a profile:\n%s" % r.text
        for c in r.chains:
            assert is_burn_chain(c) or (c.leaf == "burn_task" and c.caller_names() == ["task_entry_trampoline"]), \
                "chain %r is not a burn task's:\n%s" % (c, r.text)
        assert r.chains[0].leaf == "burn_inner", "job=a's hottest leaf is not burn_inner:\n%s" % r.text
        wait_burn_done(kernel)
        return pids

    unstarved(kernel, attempt, "burn 2000 2, label, profile 1000 all 3 job=a")


def test_unfiltered_breakdown_adds_up(kernel):
    def attempt():
        labelled_burners(kernel)
        r = parse_report(kernel.cmd("profile 1000 all 8", timeout=30), 1000, 8)
        assert r.labels, "no labels line while two labelled tasks ran:\n%s" % r.text
        shares = {s: (float(p), n) for p, n, s in r.labels}
        # parse_labels has checked: counts sum to the header, each percentage right for its count
        assert sum(n for _, n in shares.values()) == r.samples
        assert abs(sum(p for p, _ in shares.values()) - 100.0) <= 0.05 * len(shares) + 1e-9, \
            "the shares add up to %.1f%%:\n%s" % (sum(p for p, _ in shares.values()), r.text)
        for s in ("job=a", "job=b", "(none)"):
            assert s in shares, "no %s share while both burners and idle CPUs ran:\n%s" % (s, r.text)
        # two burners on four CPUs: each about a quarter of the samples
        for s in ("job=a", "job=b"):
            assert shares[s][1] >= 0.15 * r.samples, "%s holds %d of %d samples:\n%s" \
                % (s, shares[s][1], r.samples, r.text)
        wait_burn_done(kernel)

    unstarved(kernel, attempt, "burn 2000 2, label, profile 1000 all 8")


def test_label_filter_that_matches_nothing(kernel):
    wait_no_burn(kernel)
    text = kernel.cmd("profile 200 all 3 job=nobody", timeout=30)
    lines = text.split("\n")
    # a host that took QEMU's CPUs away meanwhile adds the report's line that says so, after `per cpu:`
    if len(lines) == 5 and lines[3].startswith("ticks late elsewhere (the cpu was taken away, not held off): cpu "):
        del lines[3]
    assert len(lines) == 4 and re.fullmatch(r"profiled \d+ ms", lines[0]), text
    assert re.fullmatch(r"0 samples on 0 cpus, 0 dropped, source tick.*", lines[1]), text
    assert lines[2] == "per cpu: 0:0 1:0 2:0 3:0", text
    assert lines[3] == "no samples with label job=nobody: no task that carried it was sampled in the window", text


def test_profile_samples_carry_cmd_profile_in_raw(kernel):
    # the shell runs `profile` labelled cmd=profile: its own samples (few: it sleeps the window) carry it,
    # and a filter on it keeps only the shell's pid
    shell_pid = [r[0] for r in ps_rows(kernel) if r[3] == "shell"][0]
    raw = parse_raw(kernel.cmd("profile 300 all raw cmd=profile", timeout=30), 300)
    assert all(pid == shell_pid and lab == "cmd=profile" for _, pid, _, lab, _ in raw.samples), raw.text


# ---- raw ----------------------------------------------------------------------------------------------------------
def test_raw_over_the_console_parses_back(kernel):
    build_id = elf_build_id()
    syms = Symbols()

    def attempt():
        wait_no_burn(kernel)
        raw = parse_raw(kernel.cmd("profile 500 all raw", timeout=60), 500)
        assert raw.source == "tick" and raw.period_ns == 10000000, raw.text.split("\n")[0]
        assert raw.cpus == CPUS and raw.dropped == 0, raw.text.split("\n")[0]
        assert raw.build_id == build_id, "build id %s in the header, %s in %s" % (raw.build_id, build_id, ELF)
        # 4 CPUs at 100 Hz for the window: about 200 samples, every CPU contributing. Too few, and a CPU whose
        # samples stop for more than 3 periods was taken away by the host: starved, retried. A sampler that
        # skips ticks on time leaves shorter holes, and fails at once.
        if len(raw.samples) < 0.9 * CPUS * raw.window_ms / TICK_MS:
            what = "%d samples in %d ms on %d CPUs" % (len(raw.samples), raw.window_ms, CPUS)
            silent = raw.silences_ms(3 * TICK_MS)
            if silent:
                raise HostStarved("%s; the longest silences (cpu: ms) %s" % (what, silent))
            raise AssertionError(what)
        assert {s[0] for s in raw.samples} == set(range(CPUS)), "not every CPU sampled"
        # leaves resolve in the kernel's text; mostly the idle loop on an idle machine
        leaves = [syms.name(s[4][0]) for s in raw.samples]
        assert leaves.count("sched_idle_loop") >= 0.5 * len(leaves), "idle leaves: %d of %d" \
            % (leaves.count("sched_idle_loop"), len(leaves))
        return raw

    unstarved(kernel, attempt, "profile 500 all raw")


def test_raw_with_a_label_filter_is_that_task_alone(kernel):
    syms = Symbols()

    def attempt():
        pids = labelled_burners(kernel)
        for wanted, pid in (("job=a", pids[0]), ("job=b", pids[1])):
            raw = parse_raw(kernel.cmd("profile 300 all raw %s" % wanted, timeout=60), 300)
            assert len(raw.samples) >= 0.5 * raw.window_ms / TICK_MS, \
                "%d samples of %s in %d ms" % (len(raw.samples), wanted, raw.window_ms)
            for cpu, p, _, lab, addrs in raw.samples:
                assert p == pid and lab == wanted, "a %s profile has a sample of pid %d labelled %s" \
                    % (wanted, p, lab)
                # burn_task is on every chain: the leaf, or a caller (a return address: look up addr - 1)
                names = [syms.name(addrs[0])] + [syms.name(a - 1) for a in addrs[1:]]
                assert "burn_task" in names, "a %s sample outside burn_task: %s" % (wanted, names)
        wait_burn_done(kernel)

    unstarved(kernel, attempt, "burn 2000 2, label, profile 300 all raw job=a|job=b")


# ---- the pool: sets freed and reused ----------------------------------------------------------------------------
def test_more_sets_than_the_pool_holds_one_after_another(kernel):
    # each set replaces the last on one task: the last reference to the old one goes, and its slot is reused, so
    # 300 distinct sets in a row (more than the 255 the pool holds) are all accepted, none dropped
    reaper = [r[0] for r in ps_rows(kernel) if r[3] == "reaper"][0]
    before = pool(kernel)
    for i in range(300):
        assert kernel.cmd("label %d fill=%d" % (reaper, i)) == "pid %d labels fill=%d" % (reaper, i)
    assert labels_of(kernel)[0][reaper] == "fill=299"
    label(kernel, reaper, "-")
    after = pool(kernel)
    assert after["used"] == before["used"] and after["waiting"] == 0, (before, after)
    assert after["made"] - before["made"] == 300 and after["freed"] - before["freed"] == 300, (before, after)
    assert after["dropped"] == before["dropped"] == 0, (before, after)


# ---- netload labels the network task -------------------------------------------------------------------------------
def udp_ps(port):
    out = subprocess.run([UDPSH, "-t", "10", "-p", str(port), "127.0.0.1", "ps"], capture_output=True,
                         timeout=40)
    assert out.returncode == 0, "scripts/udpsh ps: exit %d, %r" % (out.returncode, out.stderr)
    rows = [l.split() for l in out.stdout.decode("ascii").split("\n")[1:] if l.strip()]
    return {r[3]: r[-1] for r in rows if r[3] in ("net", "shell", "udpsh")}


def test_netload_labels_the_network_task_for_its_session(kprof_factory):
    k = kprof_factory(udp=True, netload=True)
    wait_dhcp(k)
    assert labels_of(k)[1]["net"] == ["-"]
    # seen from the UDP shell while the console is idle: the shell has no set between commands ...
    assert udp_ps(k.udp_port) == {"net": "-", "shell": "-", "udpsh": "cmd=ps"}
    # ... and keeps one that `label` gave it while it ran `label` (the command's restore does not undo it)
    shell_pid = [r[0] for r in ps_rows(k) if r[3] == "shell"][0]
    label(k, shell_pid, "who=me")
    assert udp_ps(k.udp_port) == {"net": "-", "shell": "who=me", "udpsh": "cmd=ps"}
    line = "netload sink %d 4" % k.netload_port
    k.drain()
    k.send_line(line)
    k.expect(re.escape(line) + r"\n", what="the echo of %r" % line)
    try:
        k.expect(r"netload: sink on UDP port \d+ for 4 s\n", what="netload's start line")
        during = udp_ps(k.udp_port)
    finally:
        k.expect(r"\n> ", timeout=30, what="the prompt after %r" % line)
    # the shell's who=me is replaced by cmd=netload for the command, and given back after
    assert during == {"net": "netload=sink", "shell": "cmd=netload", "udpsh": "cmd=ps"}, during
    # over: the network task's set is given back, and the shell's own
    by_name = labels_of(k)[1]
    assert by_name["net"] == ["-"] and by_name["shell"] == ["cmd=ps"], by_name
    assert udp_ps(k.udp_port) == {"net": "-", "shell": "who=me", "udpsh": "cmd=ps"}
