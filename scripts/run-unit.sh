#!/usr/bin/env bash
# Runs every host unit-test binary given, UNIT_JOBS at a time (one per core by default), prints each one's cmocka
# summary in the order given, and fails if any test failed or if no test ran at all (a suite that silently ran
# nothing must not look green).
set -u
jobs_max=${UNIT_JOBS:-$(nproc 2>/dev/null || echo 1)}
out_dir=$(mktemp -d "${TMPDIR:-/tmp}/kprof-unit.XXXXXX")
trap 'rm -rf "$out_dir"' EXIT

# One binary: its whole output in out_dir/N.out and its exit status in out_dir/N.rc.
i=0
for bin in "$@"; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do wait -n; done
  ( "$bin" >"$out_dir/$i.out" 2>&1; echo $? >"$out_dir/$i.rc" ) &
  i=$((i + 1))
done
wait

total=0 failed_bins=0 i=0
for bin in "$@"; do
  out=$(cat "$out_dir/$i.out"); rc=$(cat "$out_dir/$i.rc")
  i=$((i + 1))
  ran=$(printf '%s\n' "$out" | sed -n 's/^\[==========\] \([0-9]*\) test(s) run\./\1/p' | awk '{s+=$1} END {print s+0}')
  total=$((total + ran))
  if [ "$rc" -ne 0 ] || [ "$ran" -eq 0 ]; then
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
