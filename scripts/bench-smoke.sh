#!/usr/bin/env bash
# Runs each benchmark driver given (build/bench/NAME, tests/bench/drivers.mk) once in every mode its usage line
# names, on a small input, without valgrind: the figures are `make bench`'s, not judged here; this only proves
# that every driver still builds, links and runs to its end, so a bench cannot rot unseen. The usage line is
# the driver's own ("usage: NAME mode|mode|... N"), so a mode added to a driver is run here without a change.
set -u
n=200 failed=0 runs=0
for bin in "$@"; do
  usage=$("$bin" 2>&1 >/dev/null)
  modes=$(sed -n 's/^usage: [^ ]* \([a-z0-9_|]*\) N$/\1/p' <<<"$usage" | tr '|' ' ')
  if [ -z "$modes" ]; then
    echo "bench-smoke: FAILED $bin: no usage line naming its modes (got: $usage)"
    failed=$((failed + 1))
    continue
  fi
  for mode in $modes; do
    runs=$((runs + 1))
    if ! out=$("$bin" "$mode" "$n" 2>&1); then
      echo "$out" | tail -5
      echo "bench-smoke: FAILED $(basename "$bin") $mode $n"
      failed=$((failed + 1))
    fi
  done
done
echo "bench-smoke: $((runs - failed)) passed, $failed failed"
[ "$runs" -gt 0 ] && [ "$failed" -eq 0 ]
