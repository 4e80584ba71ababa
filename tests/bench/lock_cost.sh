#!/usr/bin/env bash
# tests/bench/lock_cost.sh: what the lock profile costs a spinlock, in instructions counted exactly by callgrind on
# tests/bench/lock_cost.c (the slow path, the walk and the block table built for the host with the kernel's
# compiler and flags). An uncontended spin_lock_irqsave + spin_unlock_irqrestore: the lock's own instructions
# (inline, with the driver's function around them), apart from hal/'s irq_save, irq_restore and cpu_index (fakes
# here). A contended acquisition: spin_lock_contended with its callees, split into the walk of the waiter's chain
# (stack_walk, 4 frames), the add to the lock table (block_table_add: the hash, the probe, the compare, two
# atomic adds) and the slow path's own code (the spin, one relax here, and the calls), apart from the fakes (two
# clock reads, the relax, the current task). Run from the top of the tree.
set -euo pipefail

OUT=build/bench
mkdir -p "$OUT"
make -s --no-print-directory "$OUT/lock_cost"
DRIVER=$OUT/lock_cost
N=1000

# collect FUNCTION MODE: callgrind inside FUNCTION (callees included) over N of the driver's calls; prints the
# output file's name.
collect() {
  local cg="$OUT/callgrind.lock.$2.out" calls
  calls=$(valgrind --tool=callgrind --callgrind-out-file="$cg" --toggle-collect="$1" "$DRIVER" "$2" "$N" \
            2>"$cg.log" | sed -n 's/^calls //p')
  if [ "$calls" != "$N" ]; then
    echo "lock_cost: the driver did not run $N calls of $2 (see $cg.log)" >&2
    return 1
  fi
  echo "$cg"
}

# cost FILE FUNCTION [inclusive]: FUNCTION's instructions a call, from FILE: its own (the sum of its lines, one per
# source file its code came from: the inline lock is hal/spinlock.h's), or with its callees (the largest of its
# lines, which callgrind_annotate repeats per file).
cost() {
  local total
  total=$(callgrind_annotate --threshold=100 ${3:+--inclusive=yes} "$1" 2>/dev/null |
            awk -v fn="$2" -v inclusive="${3:-}" '
              $0 ~ ":" fn "( \\[|$)" { gsub(/,/, "", $1); n = $1 + 0; sum += n; if (n > max) max = n }
              END { print inclusive ? max + 0 : sum + 0 }')
  echo $(( (total + N / 2) / N ))
}

cg=$(collect acquire_release uncontended)
own=$(cost "$cg" acquire_release)
fakes=$(( $(cost "$cg" irq_save) + $(cost "$cg" irq_restore) + $(cost "$cg" cpu_index) ))
if [ "$own" -eq 0 ]; then
  echo "lock_cost: no figure for the uncontended acquisition (see $cg)" >&2
  exit 1
fi
echo "locks: an uncontended spin_lock_irqsave + spin_unlock_irqrestore: $own instructions of the lock's own (the exchange, its test and the branch not taken to the slow path, the owner's stores, the release; the driver's call around them included), besides irq_save, irq_restore and cpu_index ($fakes here in hal/'s fakes: pushf/cli, popf and a %gs load on the machine); nothing of the lock profile runs on it: the wait and its count are out of line, behind the branch"

cg=$(collect spin_lock_contended contended)
all=$(cost "$cg" spin_lock_contended inclusive)
walk=$(cost "$cg" stack_walk inclusive)
add=$(cost "$cg" block_table_add inclusive)
self=$(cost "$cg" spin_lock_contended)
faked=$(( all - walk - add - self ))
if [ "$all" -eq 0 ] || [ "$walk" -eq 0 ] || [ "$add" -eq 0 ]; then
  echo "lock_cost: no figure for the contended acquisition (see $cg)" >&2
  exit 1
fi
echo "locks: a contended acquisition (one relax of spinning, the same chain each time): $(( walk + add + self )) instructions of the kernel's own -- the walk of the waiter's 4 frames $walk, the add to the lock table $add (the hash, the probe, the compare, two atomic adds), the slow path's own $self (the spin and the calls) -- and two clock reads (time_ns) and the current task's stack bounds ($faked here in the fakes and the driver); the recording is paid only by an acquisition that waited anyway, the walk while the lock is still held by another, the add once it is taken"
