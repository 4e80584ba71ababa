"""pprof for the tests: the profile schema and `go tool pprof`, shared by the integration tests, tests/host and
tests/bench/run.py (tests/host and tests/bench put tests/integration on sys.path to import it).

Owns pprof_schema() (build/pprof/profile_pb2.py made by make, then imported through scripts/kprof_profile.py),
the module-scoped `pb2` fixture that returns it (a test module imports the fixture by name), go_pprof(), the
one way the tests run `go tool pprof`, and the readers of a decoded profile the HTTP tests share (decode,
strings, comment_fields).
"""

import gzip
import os
import shutil
import subprocess
import sys

import pytest

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(TOP, "scripts"))
import kprof_profile as kp  # noqa: E402


def pprof_schema():
    """pprof's profile.proto as a Python module (Profile, Sample, ...): `make build/pprof/profile_pb2.py`
    first, so a stale or missing one is (re)built, then kprof_profile.load_profile_pb2()."""
    subprocess.run(["make", "-s", "build/pprof/profile_pb2.py"], cwd=TOP, check=True, timeout=120)
    return kp.load_profile_pb2()


@pytest.fixture(scope="module")
def pb2():
    """pprof_schema(), once per module."""
    return pprof_schema()


def decode(pb2, data):
    """A profile from its bytes, gzipped (as the kernel and pprof write it) or not."""
    prof = pb2.Profile()
    prof.ParseFromString(gzip.decompress(data) if data[:2] == b"\x1f\x8b" else data)
    return prof


def strings(prof, i):
    return prof.string_table[i]


def sample_types(prof):
    """[(type, unit)] of a profile's sample types, in order."""
    return [(strings(prof, t.type), strings(prof, t.unit)) for t in prof.sample_type]


def sample_chain(prof, s):
    """The function names of a sample's locations, leaf (or call site) first; None for one without a line."""
    locs = {loc.id: loc for loc in prof.location}
    funcs = {f.id: strings(prof, f.name) for f in prof.function}
    return [funcs[locs[i].line[0].function_id] if locs[i].line else None for i in s.location_id]


def comment_fields(prof):
    """key=value words of the profile's comments."""
    fields = {}
    for i in prof.comment:
        for word in strings(prof, i).split():
            key, sep, value = word.partition("=")
            if sep:
                fields[key] = value
    return fields


def go_pprof(source, *flags, symbolize="none", home=None, timeout=120, fetched=False):
    """Runs `go tool pprof [-symbolize=SYMBOLIZE] FLAGS... SOURCE` (source: a profile file or a URL) and returns
    its stdout; a non-zero exit fails with its stderr. symbolize=None passes no -symbolize flag. pprof's HOME and
    PPROF_TMPDIR are home (default: the source file's directory), GOFLAGS is empty. fetched=True returns
    (stdout, [the profiles pprof fetched and saved into home, sorted]) instead."""
    go = shutil.which("go")
    assert go, "golang-go is not installed (scripts/deps.sh installs it)"
    home = str(home) if home is not None else os.path.dirname(source)
    env = dict(os.environ, HOME=home, GOFLAGS="", PPROF_TMPDIR=home)
    before = set(os.listdir(home)) if fetched else set()
    argv = [go, "tool", "pprof"] + ([] if symbolize is None else ["-symbolize=" + symbolize]) + list(flags) + [source]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=env)
    assert done.returncode == 0, "go tool pprof %s:\n%s" % (" ".join(argv[3:]), done.stderr)
    if not fetched:
        return done.stdout
    saved = sorted(os.path.join(home, f) for f in set(os.listdir(home)) - before if f.endswith(".pb.gz"))
    return done.stdout, saved
