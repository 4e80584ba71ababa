#!/usr/bin/env bash
# tests/bench/wall_cost.sh: what a wall profile (`profile ... wall`) costs. Per sweep -- one CPU's tick, every
# PROFILE_WALL_PERIOD_MS, recording each of its tasks -- at 10, 100 and 1,000 tasks on the CPU, each waiting
# task walked from its blocking call over 6 to 8 frames: the time on this host (the driver's clock, median of
# its sweeps; caches warm, then with the tasks, their stacks and the ring flushed before each sweep) and the
# instructions (callgrind, inside profiler_tick, callees included), and the share of a CPU at the sweep's
# period. Then what the ring does with the sweeps between two drains, and what a context switch gained for
# the profile. The sweep, the walk, the scheduler and its tasks are the kernel's own, built for the host with
# the kernel's compiler and flags (tests/bench/wall_cost.c says what is faked). Run from the top of the tree.
set -euo pipefail

OUT=build/bench
mkdir -p "$OUT"
make -s --no-print-directory "$OUT/wall_cost"
DRIVER=$OUT/wall_cost

# field NAME OUTPUT: the words after "NAME " on the driver's line of that name.
field() { sed -n "s/^$1 //p" <<<"$2"; }

# instructions FUNCTION MODE N: callgrind's count inside FUNCTION (callees included) over the driver's calls,
# rounded to the nearest instruction.
instructions() {
  local fn=$1 mode=$2 n=$3 cg="$OUT/callgrind.wall.$2.$1.out" calls total
  calls=$(valgrind --tool=callgrind --callgrind-out-file="$cg" --toggle-collect="$fn" "$DRIVER" "$mode" "$n" \
            2>"$cg.log" | sed -n 's/^calls //p')
  total=$(sed -n 's/^totals: *\([0-9]*\).*/\1/p' "$cg")
  if [ -z "$calls" ] || [ -z "$total" ] || [ "$calls" -eq 0 ] || [ "$total" -eq 0 ]; then
    echo "wall_cost: no figure for $fn in $mode (see $cg.log)" >&2
    return 1
  fi
  echo $(( (total + calls / 2) / calls ))
}

# share NS: NS as a percentage of the sweep's period (PROFILE_WALL_PERIOD_MS, 10 ms).
share() { awk -v ns="$1" 'BEGIN { printf "%.3f%%", ns / 10000000 * 100 }'; }

# ---- the sweep -----------------------------------------------------------------------------------------------

warm_line="" cold_line="" shares_warm="" shares_cold="" walk_line=""
for tasks in 10 100 1000; do
  sweeps=$(( tasks == 1000 ? 1000 : 5000 ))
  # each run on its own line, so that set -e sees a driver that failed its checks
  out=$("$DRIVER" "sweep$tasks" "$sweeps")
  read -r warm _ <<<"$(field ns "$out")"
  out=$("$DRIVER" "cold$tasks" 500)
  read -r cold _ <<<"$(field ns "$out")"
  ins=$(instructions profiler_tick "sweep$tasks" 100)
  walk=$(instructions stack_walk "sweep$tasks" 100)
  per_task=$(( (ins + tasks / 2) / tasks ))
  sep=$([ "$tasks" = 10 ] && echo "" || echo "; $tasks: ")
  warm_line+="$sep$warm ns ($(( (warm + tasks / 2) / tasks )) per task), $ins instructions ($per_task per task)"
  cold_line+="$sep$cold ns ($(( (cold + tasks / 2) / tasks )) per task)"
  shares_warm+="$([ "$tasks" = 10 ] || echo ", ")$(share "$warm")"
  shares_cold+="$([ "$tasks" = 10 ] || echo ", ")$(share "$cold")"
  [ "$tasks" = 1000 ] && walk_line="$per_task instructions a task, $(( (walk + tasks / 2) / tasks )) of them in the walk from its blocking call's frame (stack_walk; the running task's is stack_trace_from), the rest the record, what the task is doing and the list"
done
echo "wall: sweep of 10 tasks on one cpu: $warm_line; at the 10 ms period that is $shares_warm of a cpu (caches warm: sweeps back to back, medians)"
echo "wall: the same with the tasks, their stacks and the ring flushed from the caches before each sweep: 10: $cold_line; at the 10 ms period $shares_cold of a cpu"
echo "wall: at 1000 tasks, $walk_line"

# ---- the ring between two drains -----------------------------------------------------------------------------

ring1000=$("$DRIVER" ring1000 20)
ring100=$("$DRIVER" ring100 20)
read -r tasks sweeps made kept dropped size _ <<<"$(field ring "$ring1000")"
read -r -a by_sweep <<<"$(field kept_of_sweep "$ring1000")"
read -r _ _ made100 _ dropped100 _ _ <<<"$(field ring "$ring100")"
read -r capture table per_second <<<"$(field capture "$ring1000")"
verdict=$([ "$dropped" -gt 0 ] && echo "it keeps $kept and drops $dropped of them ($(awk -v d="$dropped" -v m="$made" 'BEGIN { printf "%.0f%%", d / m * 100 }'))" || echo "it does not drop")
echo "wall: a $tasks-task cpu makes $made records per 50 ms drain ($sweeps sweeps) against a ring of $size: $verdict; a sweep the ring cannot hold is put off whole and the next one stands for its time (kept of each: ${by_sweep[*]}), so every task keeps its share and loses only resolution; a ring holds $sweeps sweeps of $(( size / sweeps )) tasks a cpu at most (fewer when a drain is late); at 100 tasks $made100 records, $dropped100 dropped"
echo "wall: the window's capture holds $capture records: with the task table full ($table tasks) a wall run fills it in $(awk -v c="$capture" -v t="$table" -v s="$per_second" 'BEGIN { printf "%.2f", c / (t * s) }') s, and a longer window drops the rest"

# ---- a context switch ----------------------------------------------------------------------------------------

out=$("$DRIVER" added 2000000)
read -r bare counter wait both <<<"$(field ps "$out")"
read -r walked <<<"$(field frames "$out")"
out=$("$DRIVER" switch 200000)
read -r cycle_ps <<<"$(field ps_per_cycle "$out")"
cycles=2000
cycle_ins=$(instructions block_switch_wake switch "$cycles")
# The kernel's own task_wait_begin and task_wait_end, callees included (the walk of the blocking call's chain,
# the block table's add; the clock read they each call is the fake's load here, rdtsc and a multiply on the
# machine), over waits whose chains are laid out on the tasks' stacks.
begin_ins=$(instructions task_wait_begin waits "$cycles")
end_ins=$(instructions task_wait_end waits "$cycles")
ns() { awk -v ps="$1" 'BEGIN { printf "%.1f", ps / 1000 }'; }
echo "wall: added per context switch and blocking call: $(ns $((both - bare))) ns (the switch counter alone $(ns $((counter - bare))) ns, task_wait_begin/task_wait_end alone $(ns $((wait - bare))) ns: they overlap); task_wait_begin $begin_ins instructions (what the task waits on, since when, and its first $walked frames walked from the blocking call), task_wait_end $end_ins (the wait added to the block table), each with one clock read; a whole block, switch and wake (kernel/task.c's C, no interrupt entry or register save) $(ns "$cycle_ps") ns and $cycle_ins instructions here"
