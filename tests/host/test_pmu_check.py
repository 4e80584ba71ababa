"""tests/pmu_check.py's refusals on the host (`make pmu-check` itself needs KVM and a counter): without a
usable KVM device it prints one line saying so and exits 77, never 0, and boots nothing."""

import os
import subprocess
import sys

import pytest

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PMU_CHECK = os.path.join(TOP, "tests", "pmu_check.py")


@pytest.mark.parametrize("device, why", [
    ("/nonexistent/kvm", "/nonexistent/kvm: No such file or directory"),
    ("/dev/null", "/dev/null does not answer KVM_GET_API_VERSION: Inappropriate ioctl for device"),
])
def test_no_usable_kvm_is_one_line_and_status_77(device, why):
    done = subprocess.run([sys.executable, PMU_CHECK], env=dict(os.environ, KPROF_KVM_DEVICE=device),
                          capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout, done.stderr) == \
        (77, "pmu-check: no counter to check here: %s\n" % why, "")
