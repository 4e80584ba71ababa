"""`make bench`'s kvm_vs_tcg on the host (the benchmark itself needs KVM and two boots): where /dev/kvm is not
usable it prints one line saying why and boots nothing; the host-side counts are read from `perf stat`'s CSV
lines for the kvm tracepoints, and where perf gives none the reason comes back instead of numbers."""

import os
import stat
import sys

import pytest

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(TOP, "tests", "bench"))

import run as bench  # noqa: E402  (tests/bench/run.py)


def fake_perf(tmp_path, monkeypatch, stderr, status=0):
    """A `perf` first on PATH that writes stderr as perf stat would and exits with status."""
    script = tmp_path / "perf"
    script.write_text("#!/bin/sh\ncat >&2 <<'EOF'\n%sEOF\nexit %d\n" % (stderr, status))
    script.chmod(script.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", "%s%s%s" % (tmp_path, os.pathsep, os.environ.get("PATH", "")))


def test_counts_are_read_from_perf_stat_csv(tmp_path, monkeypatch):
    fake_perf(tmp_path, monkeypatch, "libtraceevent: No such file or directory\n"
              "2597706,,kvm:kvm_emulate_insn,2002422289,100.00,,\n"
              "0,,kvm:kvm_entry,2002426885,100.00,,\n"
              "3,,kvm:kvm_exit,2002420315,100.00,,\n")
    assert bench._kvm_emulated(12345, seconds=1) == {
        "kvm:kvm_emulate_insn": 2597706, "kvm:kvm_entry": 0, "kvm:kvm_exit": 3}


def test_no_counts_is_a_reason_not_numbers(tmp_path, monkeypatch):
    fake_perf(tmp_path, monkeypatch, "<not supported>,,kvm:kvm_emulate_insn,0,100.00,,\n"
              "event syntax error: 'kvm:kvm_entry'\n", status=129)
    got = bench._kvm_emulated(12345, seconds=1)
    assert isinstance(got, str) and "exit 129" in got and "event syntax error" in got, got


def test_unusable_kvm_is_one_line_and_no_boot(monkeypatch, capsys):
    import kprof_qemu

    monkeypatch.setattr(kprof_qemu, "kvm_usable", lambda: "/dev/kvm: No such file or directory")

    def no_boot(*a, **k):
        raise AssertionError("kvm_vs_tcg booted a kernel without a usable /dev/kvm")

    monkeypatch.setattr(bench, "Kprof", no_boot)
    bench.kvm_vs_tcg()
    assert capsys.readouterr().out == \
        "kvm: skipped: /dev/kvm is not usable here (/dev/kvm: No such file or directory)\n"
