#!/usr/bin/env bash
# Runs every host unit-test binary given, prints each one's cmocka summary, and fails if any test failed or
# if no test ran at all (a suite that silently ran nothing must not look green).
set -u
total=0 failed_bins=0
for bin in "$@"; do
  out=$("$bin" 2>&1); rc=$?
  ran=$(printf '%s\n' "$out" | sed -n 's/^\[==========\] \([0-9]*\) test(s) run\./\1/p' | awk '{s+=$1} END {print s+0}')
  total=$((total + ran))
  if [ $rc -ne 0 ] || [ "$ran" -eq 0 ]; then
    failed_bins=$((failed_bins + 1))
    printf '%s\n' "$out"
    echo "unit: FAILED $bin (exit $rc, $ran tests run)"
  else
    printf '%s\n' "$out" | grep -E '^\[  PASSED  \]' | sed "s|^|$(basename "$(dirname "$bin")")/$(basename "$bin"): |"
  fi
done
if [ "$total" -eq 0 ]; then echo "unit: no tests ran"; exit 1; fi
echo "unit: $total tests in $# binaries, $failed_bins binaries failed"
[ $failed_bins -eq 0 ]
