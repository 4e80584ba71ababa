#!/usr/bin/env bash
# tests/bench/sample_cost.sh: instructions per profiler sample (8-frame chain), per folded sample and per streamed
# sample (`profile stream`'s drain and packing, at the tick's and at profile.hz=1000's records a drain), counted
# exactly by callgrind. The kernel's own sample path (kernel/profiler.c, kernel/stacktrace.c), drain
# (kernel/profiler/run.c) and fold (kernel/profiler/fold.c, kernel/symbols.c) are built for the host with the
# kernel's compiler and flags, driven by tests/bench/sample_cost.c, and callgrind collects only inside
# profiler_nmi() or profile_fold_add() (callees included), so the driver's own work is not counted. The sample
# is the counter's NMI as the kernel takes it (profiler_nmi() on an armed counter run, the fake Intel v2 CPU),
# less the claim before it: a second count inside pmu_nmi_is_mine() (the fake CPU's MSR and LVT emulation
# included) is taken out; a third inside stack_trace_from() splits the sample between the frame walk and the
# profiler's own code.
#
# Then what a tick and a counter NMI cost, in the kernel's own instructions (callgrind's self cost of the
# functions of kernel/ and arch/, not of the fakes they call) and in the hardware they touch as the fakes count
# it (clock reads, MMIO reads, MSR reads and writes, LVT writes): an idle tick, an armed CPU's tick, a sampling
# tick and an NMI, on the fake Intel v2 and AMD Zen 2 CPUs. Each is measured on this tree and, in the same run,
# on BASE (9d06c9e by default, or $KPROF_BENCH_BASE; git archive of its kernel/, arch/ and hal/ built with this
# tree's driver and fakes), and printed side by side. Run from the top of the tree.
set -euo pipefail

OUT=build/bench
mkdir -p "$OUT"

# The driver over this tree is a make target (tests/bench/drivers.mk), linked from the objects the unit tests'
# lists share, in the kernel's own compiler and code generation; `make test` builds and runs it once too.
make -s --no-print-directory "$OUT/sample_cost"

# build_base_driver ROOT DIR: the driver at DIR/sample_cost over the kernel sources of the tree at ROOT (its
# headers first), from the same list (asked of make), with this tree's driver and fakes; the same flags.
build_base_driver() {
  local root=$1 dir=$2 objs=() src obj flags kcc kcflags hostflags
  flags=$(make -s --no-print-directory bench-flags)
  kcc=$(sed -n 's/^kernel: \([^ ]*\) .*/\1/p' <<<"$flags")
  kcflags=$(sed -n 's/^kernel: [^ ]* //p' <<<"$flags")
  hostflags=$(sed -n 's/^host: //p' <<<"$flags")
  mkdir -p "$dir"
  for src in $(make -s --no-print-directory bench-srcs-sample_cost) tests/bench/sample_cost.c; do
    obj="$dir/$(echo "$src" | tr / _ | sed 's/\.c$/.o/')"
    case $src in
      tests/*)
        # shellcheck disable=SC2086
        gcc -I"$root" $hostflags -c "$src" -o "$obj" ;;
      *)
        [ -f "$root/$src" ] || continue # a file an older tree does not have yet
        # shellcheck disable=SC2086
        $kcc -I"$root" $kcflags -c "$root/$src" -o "$obj" ;;
    esac
    objs+=("$obj")
  done
  gcc -no-pie -o "$dir/sample_cost" "${objs[@]}"
}

# per_call FUNCTION MODE N: callgrind's collected instruction total over the driver's count of calls.
per_call() {
  local fn=$1 mode=$2 n=$3 cg="$OUT/callgrind.$1.$2.out" calls total
  calls=$(valgrind --tool=callgrind --callgrind-out-file="$cg" --toggle-collect="$fn" \
            "$OUT/sample_cost" "$mode" "$n" 2>"$OUT/callgrind.$fn.log" | sed -n 's/^calls //p')
  total=$(sed -n 's/^totals: *\([0-9]*\).*/\1/p' "$cg")
  if [ -z "$calls" ] || [ -z "$total" ] || [ "$calls" -eq 0 ] || [ "$total" -eq 0 ]; then
    echo "sample_cost: no figure for $fn (see $OUT/callgrind.$fn.log)" >&2
    return 1
  fi
  # rounded to the nearest instruction
  echo $(( (total + calls / 2) / calls ))
}

nmi=$(per_call profiler_nmi sample 20000)
claim=$(per_call pmu_nmi_is_mine sample 20000)
sample=$((nmi - claim))
walk=$(per_call stack_trace_from sample 20000)
fold=$(per_call profile_fold_add fold 20000)
echo "profiler: $sample instructions per sample (8-frame chain)"
echo "profiler: (the counter's NMI, profiler_nmi: $nmi instructions with its claim, pmu_nmi_is_mine, which takes $claim on the fake Intel v2 CPU, its MSR and LVT emulation included)"
echo "profiler: $walk of them in the frame-pointer walk (stack_trace_from), $((sample - walk)) in the profiler's own code"
drain=$(per_call profile_fold_drain drain 20000)
idle=$(per_call profiler_tick idle 20000)
echo "profiler: $fold instructions per folded sample"
capture=$(per_call profile_capture_drain capture 20000)
echo "profiler: $capture instructions per record copied during the window (all its drains do now); $drain per record drained and folded (the fold included: $((drain - fold)) of the drain's own), which the window did before cfee67c and the fold does after the stop now"
echo "profiler: $idle instructions per idle tick after a counter run (no run active: one atomic read and a compare)"
stream_tick=$(per_call profile_streamer_drain stream_tick 20000)
stream_1000=$(per_call profile_streamer_drain stream_1000 20000)
packing=$(sed -n 's/^sample_cost: //p' "$OUT/callgrind.profile_streamer_drain.log" | tail -1)
echo "profiler: stream: $stream_tick instructions per streamed sample drained and packed at the 100 Hz tick (20 a drain on 4 cpus), $stream_1000 at profile.hz=1000 (200 a drain); with the sample itself $((sample + stream_tick)) and $((sample + stream_1000))"
echo "profiler: stream: ($packing; the copy into the network task's queue counted, lwIP's send after it not)"
# /debug/pprof/profile: a record folded in the window, then one encode and gzip per profile. Against the stream
# on the same records: the stream pays per sample for ever; the profile pays its fold per sample and its
# encoding per distinct key.
pprof_drain=$(per_call pprof_fold_drain pprof_drain 20000)
for records in 20000 200000; do
  encode=$(per_call encode_one_profile pprof_encode "$records")
  read -r _ n keys raw gz < <(valgrind --tool=none "$OUT/sample_cost" pprof_encode "$records" 2>/dev/null | grep '^pprof ')
  stream_total=$((records * stream_1000))
  pprof_total=$((records * pprof_drain + encode))
  echo "profiler: pprof: $records samples ($keys distinct keys): $pprof_drain instructions a sample folded in the window + $encode to encode and gzip the profile = $pprof_total, against $stream_total streamed ($stream_1000 a sample): ratio $(awk -v a="$pprof_total" -v b="$stream_total" 'BEGIN { printf "%.3f", a / b }')"
  echo "profiler: pprof: $records samples: $gz bytes gzipped ($raw encoded), $(awk -v g="$gz" -v n="$records" 'BEGIN { printf "%.2f", g / n }') bytes a sample"
done

# ---- a tick and an NMI, here and on BASE ----------------------------------------------------------------------

BASE=${KPROF_BENCH_BASE:-9d06c9e}
base_dir="$OUT/base"
have_base=0
if git rev-parse --verify -q "$BASE^{commit}" >/dev/null; then
  rm -rf "$base_dir/src"
  mkdir -p "$base_dir/src"
  git archive "$BASE" kernel arch hal | tar -x -C "$base_dir/src"
  if build_base_driver "$base_dir/src" "$base_dir" 2>"$base_dir/build.log"; then
    have_base=1
  else
    echo "profiler: tick and NMI: $BASE did not build with this tree's driver (see $base_dir/build.log)" >&2
  fi
else
  echo "profiler: tick and NMI: no commit $BASE here to compare with" >&2
fi

# own_cost DRIVER FUNCTION MODE N: "instructions clock mmio msr_reads msr_writes lvt" per call: callgrind's self
# cost of the kernel's functions (kernel/, arch/; not the fakes of tests/) under FUNCTION, and the driver's count
# of the hardware they touched, each over the driver's count of calls, to one decimal.
own_cost() {
  local driver=$1 fn=$2 mode=$3 n=$4 cg out calls own
  cg="$(dirname "$driver")/callgrind.own.$mode.out"
  out=$(valgrind --tool=callgrind --callgrind-out-file="$cg" --toggle-collect="$fn" "$driver" "$mode" "$n" \
          2>"$cg.log")
  calls=$(printf '%s\n' "$out" | sed -n 's/^calls //p')
  own=$(callgrind_annotate --threshold=100 --auto=no "$cg" |
          awk '$0 ~ /^ *[0-9,]+ / && $0 ~ /(kernel|arch)\/[^ ]*\.[ch]:/ && $0 !~ /tests\// { gsub(",", "", $1); s += $1 }
               END { print s + 0 }')
  if [ -z "$calls" ] || [ "$calls" -eq 0 ] || [ "$own" -eq 0 ]; then
    echo "sample_cost: no figure for $mode of $driver (see $cg.log)" >&2
    return 1
  fi
  printf '%s\n' "$out" | sed -n 's/^hw //p' |
    awk -v own="$own" -v n="$calls" '{ printf "%.0f %.1f %.1f %.1f %.1f %.1f\n", own / n, $1 / n, $2 / n, $3 / n, $4 / n, $5 / n }'
}

# describe "instructions clock mmio msr_reads msr_writes lvt"
describe() {
  read -r ins clock mmio rd wr lvt <<< "$1"
  printf '%s instructions, clock reads %s, MMIO reads %s, MSR reads %s, MSR writes %s, LVT writes %s' \
    "$ins" "$clock" "$mmio" "$rd" "$wr" "$lvt"
}

# row LABEL FUNCTION MODE N: one line per measurement, BASE's beside this tree's.
row() {
  local label=$1 fn=$2 mode=$3 n=$4 now base
  now=$(own_cost "$OUT/sample_cost" "$fn" "$mode" "$n")
  if [ "$have_base" -eq 1 ]; then
    base=$(own_cost "$base_dir/sample_cost" "$fn" "$mode" "$n")
    echo "profiler: $label: $(describe "$now") (at $BASE: $(describe "$base"))"
  else
    echo "profiler: $label: $(describe "$now")"
  fi
}

echo "profiler: per tick and per NMI, the kernel's own instructions (not the fakes' or the hardware's) and what it touched; no port is touched on either path (hal/ gives portable code no port I/O; cpu 0's port 0x61 reads are the NMI owner's, counted by pmu_nmi_cost)"
row "idle tick (no run, after a counter run)" profiler_tick idle 20000
row "armed tick, busy (intel v2 fake)" profiler_tick armed_intel 5000
row "armed tick, busy (amd zen 2 fake)" profiler_tick armed_amd 5000
row "sampling tick (tick source, 8 frames)" profiler_tick tick 5000
row "counter NMI, claim and sample (intel v2 fake)" profiler_nmi nmi_intel 5000
row "counter NMI, claim and sample (amd zen 2 fake)" profiler_nmi nmi_amd 5000
