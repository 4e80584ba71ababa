#!/usr/bin/env bash
# tests/bench/sample_cost.sh: instructions per profiler sample (8-frame chain), per folded sample and per streamed
# sample (`profile stream`'s drain and packing, at the tick's and at profile.hz=1000's records a drain), counted
# exactly by callgrind. The kernel's own sample path (kernel/profiler.c, kernel/stacktrace.c), drain
# (kernel/profiler/run.c) and fold (kernel/profiler/fold.c, kernel/symbols.c) are built for the host with the
# kernel's compiler and flags, driven by tests/bench/sample_cost.c, and callgrind collects only inside
# profiler_sample() or profile_fold_add() (callees included), so the driver's own work is not counted; a third
# count inside stack_trace_from() splits the sample between the frame walk and the profiler's own code. Run
# from the top of the tree.
set -euo pipefail

OUT=build/bench
mkdir -p "$OUT"

# The kernel's own compiler and code-generation flags, asked of the Makefile so the two cannot drift apart
# (frame pointers everywhere, no red zone, no stack protector, -O2 ...), minus dependency files, plus
# KPROF_HOST so the sources use their host fallbacks (the libc string functions, no linker-made symbols).
flags=$(make -s --no-print-directory -f Makefile -f - sample-cost-kflags <<'MK'
sample-cost-kflags: ; @echo '$(KCC) $(KCFLAGS)'
MK
)
read -r KCC KCFLAGS <<<"$flags"
KCFLAGS=$(printf '%s\n' $KCFLAGS | grep -vx -e -MMD -e -MP | tr '\n' ' ')
# DWARF 4: the valgrind of Debian 12 cannot read clang's default DWARF 5 (the code is the same either way).
KCFLAGS="$KCFLAGS -DKPROF_HOST -Itests/unit -gdwarf-4"
HOSTFLAGS="-std=gnu11 -O2 -gdwarf-4 -Wall -Wextra -Werror -DKPROF_HOST -I. -Itests/unit -fno-omit-frame-pointer -fno-pie"

objs=()
for src in kernel/profiler.c kernel/stacktrace.c kernel/profiler/run.c kernel/profiler/fold.c kernel/profiler/report.c \
           kernel/profiler/raw.c kernel/profiler/fields.c kernel/profiler/stream_codec.c kernel/labels.c kernel/lib/parse.c \
           kernel/symbols.c kernel/lib/sink.c \
           kernel/lib/format.c kernel/lib/string.c arch/x86_64/pmu.c arch/x86_64/pmu_intel.c arch/x86_64/pmu_amd.c arch/x86_64/cpu_identity.c; do
  obj="$OUT/$(basename "$src" .c).o"
  # shellcheck disable=SC2086
  $KCC $KCFLAGS -c "$src" -o "$obj"
  objs+=("$obj")
done
# The driver and the fakes of hal/ are host code: the C library's headers, the host's flags.
# shellcheck disable=SC2086
gcc $HOSTFLAGS -c tests/unit/fake_hal.c -o "$OUT/fake_hal.o"
# The profiler asks the PMU layer for its source; the fake CPU (no PMU) answers, so the bench samples on the tick.
# shellcheck disable=SC2086
gcc $HOSTFLAGS -c tests/unit/fake_cpu.c -o "$OUT/fake_cpu.o"
# shellcheck disable=SC2086
gcc $HOSTFLAGS -c tests/unit/fake_cpu_models.c -o "$OUT/fake_cpu_models.o"
# shellcheck disable=SC2086
gcc $HOSTFLAGS -c tests/bench/sample_cost.c -o "$OUT/sample_cost_driver.o"
gcc -no-pie -o "$OUT/sample_cost" "$OUT/sample_cost_driver.o" "$OUT/fake_hal.o" "$OUT/fake_cpu.o" \
    "$OUT/fake_cpu_models.o" "${objs[@]}"

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

sample=$(per_call profiler_sample sample 20000)
walk=$(per_call stack_trace_from sample 20000)
fold=$(per_call profile_fold_add fold 20000)
echo "profiler: $sample instructions per sample (8-frame chain)"
echo "profiler: $walk of them in the frame-pointer walk (stack_trace_from), $((sample - walk)) in the profiler's own code"
drain=$(per_call profile_fold_drain drain 20000)
idle=$(per_call profiler_tick idle 20000)
echo "profiler: $fold instructions per folded sample"
echo "profiler: $drain instructions per record drained during the window (the fold included: $((drain - fold)) of the drain's own)"
echo "profiler: $idle instructions per idle tick after a counter run (no run active: one atomic read and a compare)"
stream_tick=$(per_call profile_streamer_drain stream_tick 20000)
stream_1000=$(per_call profile_streamer_drain stream_1000 20000)
packing=$(sed -n 's/^sample_cost: //p' "$OUT/callgrind.profile_streamer_drain.log" | tail -1)
echo "profiler: stream: $stream_tick instructions per streamed sample drained and packed at the 100 Hz tick (20 a drain on 4 cpus), $stream_1000 at profile.hz=1000 (200 a drain); with the sample itself $((sample + stream_tick)) and $((sample + stream_1000))"
echo "profiler: stream: ($packing; the copy into the network task's queue counted, lwIP's send after it not)"
