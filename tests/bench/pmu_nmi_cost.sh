#!/usr/bin/env bash
# tests/bench/pmu_nmi_cost.sh: instructions per PMU NMI -- pmu_nmi_is_mine() claiming an overflow,
# acknowledging it, reloading the counter and unmasking the LVT entry -- on the fake Intel v2 and AMD Zen 2
# CPUs, counted exactly by callgrind. arch/x86_64/pmu*.c are built for the host with the kernel's
# compiler and code-generation flags and driven by tests/bench/pmu_nmi_cost.c against tests/unit/fake_cpu.c; callgrind
# collects only inside pmu_nmi_is_mine(). The figure is the self cost of the kernel's own PMU code there
# (arch/x86_64/pmu*.c), not of the fake hardware it calls -- each pmu_hw_* of the fake models counters, status
# bits and NMI delivery, which on a real part is one RDMSR, WRMSR or MMIO store. Those accesses are printed
# beside it: on real parts each RDMSR/WRMSR costs far more than the instructions around it.
# Run from the top of the tree.
set -euo pipefail

OUT=build/bench
mkdir -p "$OUT"
# The driver is a make target (tests/bench/drivers.mk): the PMU code in the kernel's own code generation, the
# driver and fakes as host code.
make -s --no-print-directory "$OUT/pmu_nmi_cost"

# measure MODEL N NAME: runs N NMIs of MODEL under callgrind and prints the two lines for NAME.
measure() {
  local model=$1 n=$2 name=$3 cg="$OUT/callgrind.pmu_$1.out" out calls hw own
  out=$(valgrind --tool=callgrind --callgrind-out-file="$cg" --toggle-collect=pmu_nmi_is_mine \
          "$OUT/pmu_nmi_cost" "$model" "$n" 2>"$OUT/callgrind.pmu_$model.log")
  calls=$(printf '%s\n' "$out" | sed -n 's/^calls //p')
  hw=$(printf '%s\n' "$out" | sed -n 's/^hw //p')
  # Self cost of every function of arch/x86_64/pmu*.c, as callgrind_annotate lists it ("N (p%)  file:fn [obj]").
  own=$(callgrind_annotate --threshold=100 --auto=no "$cg" |
          awk '$0 ~ /^ *[0-9,]+ .* arch\/x86_64\/pmu[a-z_]*\.c:/ { gsub(",", "", $1); s += $1 } END { print s + 0 }')
  if [ -z "$calls" ] || [ -z "$hw" ] || [ "$calls" -eq 0 ] || [ "$own" -eq 0 ]; then
    echo "pmu_nmi_cost: no figure for $model (see $OUT/callgrind.pmu_$model.log)" >&2
    return 1
  fi
  read -r reads writes lvt lvt_reads <<< "$hw"
  # rounded to the nearest instruction
  echo "pmu: $(( (own + calls / 2) / calls )) instructions per NMI ($name fake)"
  echo "pmu: each NMI ($name) also makes MSR reads: $reads, MSR writes: $writes, LVT reads: $lvt_reads, LVT writes: $lvt ($((reads + writes + lvt_reads + lvt)) accesses; Linux's Intel handler makes about 7)"
}

measure intel 2000 intel
measure amd 2000 "amd zen2"

# The probe's longest stretch with interrupts off, on a counter that counts but never interrupts (whose NMI it
# waits 10 ms for, with interrupts on), in the fake TSC's time.
read -r longest per_ms <<< "$("$OUT/pmu_nmi_cost" probe 20 | sed -n 's/^probe //p')"
ns=$(( longest * 1000000 / per_ms ))
echo "pmu: the probe holds interrupts off at most $((ns / 1000)).$((ns % 1000 / 100)) us (a counter that counts but never interrupts: its 10 ms wait for the NMI has interrupts on)"

# Port 0x61 on the boot CPU (a VM exit under a hypervisor): read in the NMI only for one no kprof source claims,
# and at a tick only when an NMI was claimed since (nmi_owner.c's owed mark), counted over a counter run of
# one overflow a ms at the default tick rate and at 1 kHz, then with the counter off.
out=$("$OUT/pmu_nmi_cost" port61 5000)
while read -r _ hz reads ticks nmis; do
  if [ "$hz" = off ]; then
    echo "pmu: port 0x61 with the counter off: $reads reads in $ticks ticks of cpu 0"
  else
    echo "pmu: port 0x61 during a counter run (one NMI a ms): $reads reads in $ticks ticks of cpu 0 at $hz Hz, $nmis NMIs claimed ($(( reads * 100 / ticks ))% of ticks; one read per $(( nmis / (reads ? reads : 1) )) NMIs)"
  fi
done <<< "$out"
