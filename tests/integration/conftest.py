"""Fixtures for the QEMU integration tests, and the rules that keep a bad run from looking green.

- `kernel`: one booted kprof (4 CPUs, 256 MiB) shared by the tests of a module; they must leave it running.
- `fresh_kernel`: a kprof booted for one test, for tests that end it (panic, poweroff).
- `kprof_factory`: make_kernel(**Kprof options) for tests that need their own options (gdb, UDP, cmdline);
  every kernel it made is killed after the test.
Each module declares the kernels it boots, `BOOTS = N` (with a comment naming the tests that need a fresh one); a
boot past N fails the test that made it, so a module cannot quietly grow boots (a count, which cannot flake;
KPROF_BOOTS_MEASURE=1 counts without failing, to find N for a new module). The
run ends with each module's boots and wall time. Modules run in INTEGRATION_WORKERS processes (pytest-xdist,
--dist loadgroup, each module a group: its tests stay together, in order, in one process): ports are picked
free, variant ISOs are made under a lock, and each kernel's files are its own. The modules that mostly wait on
the wire run in a lane of their own beside the rest (the Makefile's WIRE_MODULES, integration-wire), and the KVM
module in one of its own after both (integration-kvm), so each run saves and clears only its own modules' logs.
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
_module_boots = {}  # module file -> kernels booted so far in this process
_test_boots = {}    # test nodeid -> kernels booted during its setup or call


def _module_of(nodeid):
    return nodeid.split("::")[0]


def _declared_boots(module_file):
    import sys
    name = os.path.splitext(os.path.basename(module_file))[0]
    mod = sys.modules.get(name)
    return getattr(mod, "BOOTS", None) if mod is not None else None


def _count_boot(k):
    """BOOT_LISTENERS: a kernel is starting for the test now set up or run; past its module's BOOTS it fails."""
    nodeid = _current[0]
    if nodeid is None:
        return
    module = _module_of(nodeid)
    n = _module_boots[module] = _module_boots.get(module, 0) + 1
    _test_boots[nodeid] = _test_boots.get(nodeid, 0) + 1
    declared = _declared_boots(module)
    if os.environ.get("KPROF_BOOTS_MEASURE"):  # writing a module: count its boots, fail none (the summary says)
        return
    if declared is None:
        raise kprof_qemu.KprofError("%s boots a kernel and declares no BOOTS (how many kernels the module boots)"
                                    % module)
    if n > declared:
        raise kprof_qemu.KprofError("%s declares BOOTS = %d and this is its boot %d (in %s): share a kernel, or "
                                    "declare the boot and say which test needs it" % (module, declared, n, nodeid))


kprof_qemu.BOOT_LISTENERS.append(_count_boot)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """Under --dist loadgroup (a worker's view: xdist sets config.option.loadgroup), each module is a group of
    its own: its tests stay together, in order, in one process."""
    if not getattr(config.option, "loadgroup", False):
        return
    for item in items:
        item.add_marker(pytest.mark.xdist_group(os.path.basename(_module_of(item.nodeid))))


def pytest_collection_finish(session):
    """The serial logs a last run of these modules saved, removed: what build/test-logs holds after a run is that
    run's. Only these modules' -- another lane (Makefile: integration-wire, integration-cpu, integration-kvm) may
    be saving its own meanwhile."""
    modules = {item.module.__name__ for item in session.items if item.module}
    if os.path.isdir(kprof_qemu.LOG_DIR):
        for f in os.listdir(kprof_qemu.LOG_DIR):
            if f.endswith(".log") and f.split(".", 1)[0] in modules:
                os.unlink(os.path.join(kprof_qemu.LOG_DIR, f))


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    _current[0] = item.nodeid


def pytest_configure(config):
    config.option.reportchars = "fEs"  # name failures, errors and skips in the summary
    # `make integration` (in `make test`) deselects full_only; `make test-full` runs full_only and scaled tests
    # with KPROF_FULL=1 (and the whole breakpoint sweep): the long forms that a short test in `make test` stands for.
    config.addinivalue_line("markers", "full_only: runs only under `make test-full`; a shorter test in `make test` "
                                       "fails on the same broken behaviour")
    config.addinivalue_line("markers", "scaled: shorter in `make test` than under `make test-full` (KPROF_FULL=1), "
                                       "with the same checks")


def pytest_sessionstart(session):
    iso, elf = kprof_qemu.ISO, kprof_qemu.ELF
    if not os.path.isfile(iso) or not os.path.isfile(elf):
        pytest.exit("%s or %s is missing: run `make` first (`make integration` builds it)" % (iso, elf),
                    returncode=3)
    if os.path.getmtime(elf) > os.path.getmtime(iso):
        pytest.exit("%s is older than %s: run `make` to rebuild it" % (iso, elf), returncode=3)


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
        rep.user_properties.append(("kprof_boots", _test_boots.pop(item.nodeid, 0)))
        rep.user_properties.append(("kprof_declared", _declared_boots(_module_of(item.nodeid))))


_module_stats = {}  # module file -> [boots, declared, seconds], from every test's reports (xdist's workers' too)


_test_boot_counts = {}  # test nodeid -> kernels it booted (the module's shared kernel counts for its first user)


def pytest_runtest_logreport(report):
    stats = _module_stats.setdefault(_module_of(report.nodeid), [0, None, 0.0])
    stats[2] += report.duration
    for key, value in report.user_properties:
        if key == "kprof_boots":
            stats[0] += value
            if value:
                _test_boot_counts[report.nodeid] = value
        elif key == "kprof_declared" and value is not None:
            stats[1] = value


def _write_boots_by_test():
    """build/test-logs/boots.txt (boots-LANE.txt for a lane of `make test`, KPROF_LANE): each test that booted
    kernels, and how many, module by module -- what a module's BOOTS comment names."""
    lane = os.environ.get("KPROF_LANE")
    path = os.path.join(kprof_qemu.LOG_DIR, "boots-%s.txt" % lane if lane else "boots.txt")
    os.makedirs(kprof_qemu.LOG_DIR, exist_ok=True)
    with open(path, "w") as f:
        for nodeid in sorted(_test_boot_counts):
            f.write("%d %s\n" % (_test_boot_counts[nodeid], nodeid))
    return path


# The one skip that is not a failure: a test that needs a usable /dev/kvm, on a machine without one. It says so.
KVM_SKIP = "needs KVM: "


def _skip_reason(rep):
    longrepr = getattr(rep, "longrepr", None)
    return longrepr[2] if isinstance(longrepr, tuple) and len(longrepr) == 3 else str(longrepr)


def _bad_skips(stats):
    skipped = [r for r in stats.get("skipped", []) if KVM_SKIP not in _skip_reason(r)]
    return skipped + list(stats.get("xfailed", []))


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if _module_stats:
        terminalreporter.write_line("integration: per module, kernels booted (declared) and wall time:")
        for module, (boots, declared, seconds) in sorted(_module_stats.items(), key=lambda kv: -kv[1][2]):
            terminalreporter.write_line("  %-44s %3d boots (%s) %6.1f s" % (
                os.path.basename(module), boots, "-" if declared is None else declared, seconds))
        terminalreporter.write_line("integration: %d kernels booted in %d modules (by test: %s)" % (
            sum(s[0] for s in _module_stats.values()), len(_module_stats),
            os.path.relpath(_write_boots_by_test(), kprof_qemu.TOP)))
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


def booted_kernel(request, **opts):
    """A fixture's body (`yield from` it): a booted kprof, 4 CPUs and 256 MiB unless opts (Kprof's) say
    otherwise, killed when the fixture ends."""
    k = _new_kernel(request.node.name, **dict(dict(smp=4, mem=256), **opts))
    try:
        k.boot()
        yield k
    finally:
        k.kill()


@pytest.fixture(scope="module")
def kernel(request):
    """A kprof with 4 CPUs and 256 MiB for the whole module."""
    yield from booted_kernel(request)


@pytest.fixture
def fresh_kernel(request):
    """A kprof with 4 CPUs and 256 MiB for this test alone (it may panic or power it off)."""
    yield from booted_kernel(request)


@pytest.fixture
def kprof_factory(request):
    """make_kernel(**Kprof options) -> a booted Kprof (boot=False: only constructed); all killed after."""
    f = _Factory(request)
    try:
        yield f
    finally:
        f.close()
