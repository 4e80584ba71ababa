#!/usr/bin/env bash
# Runs libFuzzer targets (build/fuzz/fuzz_NAME) and prints one line per target: executions, executions per
# second, corpus size, crashes. Fails if any target crashed, or ran nothing (a run that silently did nothing
# must not look green).
#
#   run-fuzz.sh fuzz SECONDS BIN...   fuzz each for SECONDS; what it learns stays in build/fuzz/corpus/NAME
#   run-fuzz.sh regress RUNS BIN...   replay the committed seeds and regressions, then RUNS executions from a
#                                     fixed seed (-seed=1), into a scratch corpus emptied first: deterministic;
#                                     BIN@N runs that target N executions instead (one whose inputs are slow)
#
# Targets run FUZZ_JOBS at a time (one per core by default). Seeds are tests/fuzz/corpus/NAME, inputs that once crashed tests/fuzz/regressions/NAME; libFuzzer writes
# new inputs only into its first directory, which is always under build/. A crash leaves its input in
# build/fuzz/crashes/NAME/ and the target's whole log in build/fuzz/log/.
set -u
mode=$1 amount=$2
shift 2
root="$(cd "$(dirname "$0")/.." && pwd)"
build="$root/build/fuzz"
mkdir -p "$build/log"

# Without address-space randomisation a regression run is the same run every time: libFuzzer's comparison
# tracing sees pointer values, so with ASLR the same seed explores differently from one run to the next.
fixed=()
if [ "$mode" = regress ] && setarch "$(uname -m)" -R true 2>/dev/null; then
  fixed=(setarch "$(uname -m)" -R)
fi

# One target: its run, then its line in $build/log/NAME.MODE.line and, when it failed, the end of its log after
# it. Several run at once (FUZZ_JOBS, default one per core); their lines are printed in the order given, so the
# output does not depend on which finished first.
run_one() {
  local bin=${1%@*} amount=$amount
  [ "$bin" != "$1" ] && amount=${1##*@}
  local name=${bin##*/fuzz_}
  local dirs=() d
  for d in "$root/tests/fuzz/corpus/$name" "$root/tests/fuzz/regressions/$name"; do
    [ -d "$d" ] && dirs+=("$d")
  done
  local crashes_dir="$build/crashes/$name" work args
  mkdir -p "$crashes_dir"
  if [ "$mode" = fuzz ]; then
    work="$build/corpus/$name"
    mkdir -p "$work"
    args=(-max_total_time="$amount")
  else
    work="$build/regress/$name"
    rm -rf "$work"
    mkdir -p "$work"
    args=(-runs="$amount" -seed=1 -reload=0) # reload: a timed re-read of the corpus would vary the run
  fi
  local log="$build/log/$name.$mode.log" line="$build/log/$name.$mode.line"
  local before t0 rc elapsed_ns crashes execs rate corpus
  before=$(find "$crashes_dir" -type f | wc -l)
  t0=$(date +%s%N)
  # -timeout: an input that takes 10 s is a hang; the targets take microseconds.
  "${fixed[@]}" "$bin" "${args[@]}" -timeout=10 -print_final_stats=1 -artifact_prefix="$crashes_dir/" \
    "$work" "${dirs[@]}" >"$log" 2>&1
  rc=$?
  elapsed_ns=$(( $(date +%s%N) - t0 ))
  crashes=$(( $(find "$crashes_dir" -type f | wc -l) - before ))
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  # from this script's own clock: libFuzzer's average_exec_per_sec divides by whole seconds, so a short
  # regression run shows 0
  rate='?'
  [ -n "$execs" ] && rate=$(( execs * 1000000000 / (elapsed_ns > 0 ? elapsed_ns : 1) ))
  corpus=$(sed -n 's/.* corp: \([0-9]*\)\/.*/\1/p' "$log" | tail -n 1)
  printf '%-16s %10s %8s %7s %8s\n' "$name" "${execs:-?}" "${rate:-?}" "${corpus:-?}" "$crashes" >"$line"
  if [ $rc -ne 0 ] || [ "${execs:-0}" -eq 0 ]; then
    { echo "fuzz: FAILED $name (exit $rc); the end of $log:"; tail -n 40 "$log"; } >>"$line"
    return 1
  fi
  return 0
}

jobs_max=${FUZZ_JOBS:-$(nproc 2>/dev/null || echo 1)}
start=$(date +%s)
declare -A pid_of
for bin in "$@"; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do
    wait -n
  done
  run_one "$bin" &
  pid_of[$bin]=$!
done
failed=0
printf '%-16s %10s %8s %7s %8s\n' target execs exec/s corpus crashes
for bin in "$@"; do
  wait "${pid_of[$bin]}" || failed=$((failed + 1))
  name=${bin%@*}
  cat "$build/log/${name##*/fuzz_}.$mode.line"
done
echo "make fuzz$([ "$mode" = fuzz ] || echo -regress): $# targets in $(( $(date +%s) - start )) s, $failed failed"
[ $failed -eq 0 ]
