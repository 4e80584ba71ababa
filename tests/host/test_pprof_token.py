"""The pprof.http= bearer token on the host (scripts/kprof_wire.py's pprof_bearer_token, `scripts/udpsh
pprof-token`): the same vectors tests/unit/test_http_token.c checks the kernel's derivation against, the key
taken from a file or the environment as udpsh takes it, and a clear refusal without one."""

import os
import subprocess
import sys

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(TOP, "scripts"))

import kprof_wire  # noqa: E402

KEY = "00112233445566778899aabbccddeeff"
TOKEN = "050dd94326c1fd9a53beee2007147a0a4488733bf7082375cf3882df805c9234"


def udpsh(*args, env_key=None):
    env = {k: v for k, v in os.environ.items() if k != kprof_wire.KEY_ENV}
    if env_key is not None:
        env[kprof_wire.KEY_ENV] = env_key
    return subprocess.run([sys.executable, os.path.join(TOP, "scripts", "udpsh")] + list(args), env=env,
                          capture_output=True, text=True, timeout=60)


def test_the_token_is_the_kernels():
    assert kprof_wire.pprof_bearer_token(bytes.fromhex(KEY)) == TOKEN
    assert kprof_wire.pprof_bearer_token(bytes(range(64))) == \
        "c12e64041264793e5b07ee441ca0490ce2d266ca7b4cb7ed3f7d260f1cae30c0"


def test_udpsh_prints_it_from_a_key_file(tmp_path):
    path = tmp_path / "key"
    path.write_text(KEY + "\n")
    r = udpsh("--key-file", str(path), "pprof-token")
    assert (r.returncode, r.stdout, r.stderr) == (0, TOKEN + "\n", "")


def test_udpsh_prints_it_from_the_environment():
    r = udpsh("pprof-token", env_key=KEY)
    assert (r.returncode, r.stdout) == (0, TOKEN + "\n")


def test_without_a_key_it_says_so_in_one_line():
    r = udpsh("pprof-token")
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.count("\n") == 1 and "needs the key" in r.stderr


def test_a_bad_key_is_refused_without_echoing_it():
    r = udpsh("pprof-token", env_key="00112233")
    assert r.returncode == 2 and r.stdout == "" and "00112233" not in r.stderr
