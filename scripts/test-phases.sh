#!/usr/bin/env bash
# `make test`: every suite, one phase after another, each phase's whole output shown as it runs and kept in
# build/test-phases/NAME.log. At the end: each phase's wall time, then each runner's own summary lines
# (cmocka's total, the fuzzers', the benchmark drivers', the soak's, pytest's), so the last lines say what ran.
# Every phase runs even when an earlier one failed (a red unit suite should not hide a red integration suite);
# the exit status is 1 if any failed. KPROF_DEPS_SECONDS: the deps phase's time when .ci/run ran it before make.
set -u
cd "$(dirname "$0")/.."
make_="${MAKE:-make} --no-print-directory -j${JOBS:-$(nproc 2>/dev/null || echo 2)}"
logs=build/test-phases
mkdir -p "$logs"

# phase NAME SUMMARY-REGEX COMMAND...: runs COMMAND with its output shown and logged; remembers its time, its
# status and the lines of its log that match SUMMARY-REGEX (the runner's summary).
names=() times=() states=() summaries=()
run_start=$(date +%s)
failed=0
phase() {
  local name=$1 summary=$2 log="$logs/$1.log" start rc
  shift 2
  echo "==== $name: $*"
  start=$(date +%s)
  "$@" 2>&1 | tee "$log"
  rc=${PIPESTATUS[0]}
  names+=("$name")
  times+=($(( $(date +%s) - start )))
  if [ "$rc" -eq 0 ]; then states+=(ok); else states+=("FAILED (exit $rc)"); failed=1; fi
  summaries+=("$(grep -E "$summary" "$log" | tail -n 3)")
}

if [ -n "${KPROF_DEPS_SECONDS:-}" ]; then
  names+=(deps); times+=("$KPROF_DEPS_SECONDS"); states+=("ok (.ci/run)"); summaries+=("")
else
  phase deps '^deps:' scripts/deps.sh
fi
# The kernel, the ISO and what the host tools' tests build, first: the host tests then build nothing while the
# unit and fuzz phases compile beside them.
phase build '^make(\[[0-9]+\])?: \*\*\*' $make_ all harnesses build/pprof/profile_pb2.py
# The host tools' tests spend their time waiting out the tools' own timeouts, not on the CPU: they run beside the
# unit and fuzz phases (their output kept and shown after those), which the CPU does bound.
host_log="$logs/host.log"
host_start=$(date +%s)
( $make_ host >"$host_log" 2>&1; echo $? >"$logs/host.rc"; echo $(( $(date +%s) - host_start )) >"$logs/host.seconds" ) &
host_pid=$!
phase unit '^unit: ' $make_ unit
phase fuzz-regress '^make fuzz-regress: ' $make_ fuzz-regress
wait "$host_pid"
echo "==== host (ran beside unit and fuzz-regress): $make_ host"
cat "$host_log"
names+=(host); times+=("$(cat "$logs/host.seconds")")
if [ "$(cat "$logs/host.rc")" -eq 0 ]; then states+=("ok (beside unit and fuzz-regress)")
else states+=("FAILED (exit $(cat "$logs/host.rc"); beside unit and fuzz-regress)"); failed=1; fi
summaries+=("$(grep -E '^(=+ )?[0-9]+ (passed|failed|errors?|skipped|deselected)[^=]* in [0-9.]+s' "$host_log" | tail -n 1)")
phase bench-smoke '^bench-smoke: ' $make_ bench-smoke
# The integration suite's two lanes side by side (the Makefile's integration-wire and integration-cpu): the wire
# lane's modules mostly wait on the wire, so they share the two cores with the CPU lane's workers instead of
# taking one of them; its output is kept and shown after the CPU lane's.
pytest_summary='^integration: [0-9]+ kernels booted|^integration: [0-9]+ KVM|^(=+ )?[0-9]+ (passed|failed|errors?|skipped|deselected)[^=]* in [0-9.]+s'
wire_log="$logs/integration-wire.log"
wire_start=$(date +%s)
( $make_ integration-wire >"$wire_log" 2>&1; echo $? >"$logs/integration-wire.rc"
  echo $(( $(date +%s) - wire_start )) >"$logs/integration-wire.seconds" ) &
wire_pid=$!
phase integration "$pytest_summary" $make_ integration-cpu
wait "$wire_pid"
echo "==== integration-wire (ran beside integration): $make_ integration-wire"
cat "$wire_log"
names+=(integration-wire); times+=("$(cat "$logs/integration-wire.seconds")")
if [ "$(cat "$logs/integration-wire.rc")" -eq 0 ]; then states+=("ok (beside integration)")
else states+=("FAILED (exit $(cat "$logs/integration-wire.rc"); beside integration)"); failed=1; fi
summaries+=("$(grep -E "$pytest_summary" "$wire_log" | tail -n 3)")
# test_kvm's PVM boots keep a host CPU busy for minutes: alone, after both lanes, so no tick window shares the host.
phase integration-kvm "$pytest_summary" $make_ integration-kvm
phase soak '^(stream )?soak: (PASS|FAIL)' $make_ soak-short

echo
echo "==== phase times"
total=0
for i in "${!names[@]}"; do
  printf '%-16s %5d s  %s\n' "${names[$i]}" "${times[$i]}" "${states[$i]}"
  case ${states[$i]} in *beside*) ;; *) total=$((total + times[i])) ;; esac
done
printf '%-16s %5d s  (the phases one after another; wall time of make test: %d s)\n' total "$total" \
  $(( $(date +%s) - run_start ))
echo "==== summaries"
# pytest's integration summary last: the line a reader (and CI) looks at first.
for i in "${!names[@]}"; do
  case ${names[$i]} in integration*) continue ;; esac
  [ -n "${summaries[$i]}" ] && printf '%s\n' "${summaries[$i]}"
done
for i in "${!names[@]}"; do
  case ${names[$i]} in integration*) [ -n "${summaries[$i]}" ] && printf '%s\n' "${summaries[$i]}" ;; esac
done
exit $failed
