"""Fixtures for the QEMU integration tests, and the rules that keep a bad run from looking green.

- `kernel`: one booted kprof (4 CPUs, 256 MiB) shared by the tests of a module; they must leave it running.
- `fresh_kernel`: a kprof booted for one test, for tests that end it (panic, poweroff).
- `kprof_factory`: make_kernel(**Kprof options) for tests that need their own options (gdb, UDP, cmdline);
  every kernel it made is killed after the test.
Every QEMU is killed by its pid after use. When a test fails, the serial log of every kernel it used is
saved to build/test-logs/<module>.<test>.log. A missing or stale build/kprof.iso stops the run at once, and a
skipped test fails the run: a suite that quietly ran less than it claims must not pass.
"""

import os
import re

import pytest

import kprof_qemu
from kprof_qemu import Kprof

_owned = {}        # test nodeid -> kernels started during that test's setup or call
_current = [None]  # nodeid of the test being set up or run


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    _current[0] = item.nodeid


def pytest_configure(config):
    config.option.reportchars = "fEs"  # name failures, errors and skips in the summary


def pytest_sessionstart(session):
    iso, elf = kprof_qemu.ISO, kprof_qemu.ELF
    if not os.path.isfile(iso) or not os.path.isfile(elf):
        pytest.exit("%s or %s is missing: run `make` first (`make integration` builds it)" % (iso, elf),
                    returncode=3)
    if os.path.getmtime(elf) > os.path.getmtime(iso):
        pytest.exit("%s is older than %s: run `make` to rebuild it" % (iso, elf), returncode=3)
    if os.path.isdir(kprof_qemu.LOG_DIR):
        for f in os.listdir(kprof_qemu.LOG_DIR):
            if f.endswith(".log"):
                os.unlink(os.path.join(kprof_qemu.LOG_DIR, f))


def _log_name(item):
    module = item.module.__name__ if item.module else "tests"
    return re.sub(r"[^A-Za-z0-9_.=-]+", "_", "%s.%s" % (module, item.name))


def _kernels_of(item):
    seen = []
    for value in list(item.funcargs.values()) + _owned.get(item.nodeid, []):
        kernels = value.kernels if isinstance(value, _Factory) else [value]
        for k in kernels:
            if isinstance(k, Kprof) and all(k is not s for s in seen):
                seen.append(k)
    return seen


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    if rep.failed and rep.when in ("setup", "call"):
        for i, k in enumerate(_kernels_of(item)):
            suffix = "" if i == 0 else "-%d" % (i + 1)
            path = os.path.join(kprof_qemu.LOG_DIR, _log_name(item) + suffix + ".log")
            k.save_log(path)
            rep.sections.append(("serial log", "saved to %s" % os.path.relpath(path, kprof_qemu.TOP)))
    if rep.when == "teardown":
        _owned.pop(item.nodeid, None)


# The one skip that is not a failure: a test that needs a usable /dev/kvm, on a machine without one. It says so.
KVM_SKIP = "needs KVM: "


def _skip_reason(rep):
    longrepr = getattr(rep, "longrepr", None)
    return longrepr[2] if isinstance(longrepr, tuple) and len(longrepr) == 3 else str(longrepr)


def _bad_skips(stats):
    skipped = [r for r in stats.get("skipped", []) if KVM_SKIP not in _skip_reason(r)]
    return skipped + list(stats.get("xfailed", []))


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    kvm = [r for r in terminalreporter.stats.get("skipped", []) if KVM_SKIP in _skip_reason(r)]
    if kvm:
        terminalreporter.write_line("integration: %d KVM tests skipped: %s" % (len(kvm), _skip_reason(kvm[0])))
    bad = _bad_skips(terminalreporter.stats)
    if bad:
        terminalreporter.write_line("integration: %d tests skipped or xfailed; that counts as a failure" % len(bad))


def pytest_sessionfinish(session, exitstatus):
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None and exitstatus == 0:
        if _bad_skips(reporter.stats):
            session.exitstatus = 1


def _new_kernel(name, **opts):
    """A Kprof owned by the test being set up or run now, so its log is saved if that test fails."""
    k = Kprof(name=name, **opts)
    _owned.setdefault(_current[0], []).append(k)
    return k


class _Factory:
    def __init__(self, request):
        self.request = request
        self.kernels = []

    def __call__(self, boot=True, **opts):
        k = _new_kernel(opts.pop("name", self.request.node.name), **opts)
        self.kernels.append(k)
        if boot:
            k.boot()
        return k

    def close(self):
        for k in self.kernels:
            k.kill()


@pytest.fixture(scope="module")
def kernel(request):
    """A kprof with 4 CPUs and 256 MiB for the whole module."""
    k = _new_kernel(request.node.name, smp=4, mem=256)
    try:
        k.boot()
        yield k
    finally:
        k.kill()


@pytest.fixture
def fresh_kernel(request):
    """A kprof with 4 CPUs and 256 MiB for this test alone (it may panic or power it off)."""
    k = _new_kernel(request.node.name, smp=4, mem=256)
    try:
        k.boot()
        yield k
    finally:
        k.kill()


@pytest.fixture
def kprof_factory(request):
    """make_kernel(**Kprof options) -> a booted Kprof (boot=False: only constructed); all killed after."""
    f = _Factory(request)
    try:
        yield f
    finally:
        f.close()
