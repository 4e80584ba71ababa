"""The host programs the tools' tests drive (tests/host/harnesses.mk), asked of make by name so they are built from
the same objects as the unit tests and only rebuilt when a source changed."""

import os
import subprocess

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def harness(name):
    """build/harness/NAME, made up to date by make; its path."""
    target = os.path.join("build", "harness", name)
    subprocess.run(["make", "-s", "--no-print-directory", target], cwd=TOP, check=True, timeout=600)
    return os.path.join(TOP, target)
