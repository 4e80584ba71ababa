#!/usr/bin/env bash
# tests/bench/heap_cost.sh: what the heap profile costs an allocation and a free, in instructions counted exactly
# by callgrind on tests/bench/heap_cost.c (the heap, its table of chains and the walk built for the host with the
# kernel's compiler and flags): a kmalloc with its callees, and of that the profile's part -- the walk of the
# caller's 8 frames (stack_walk), finding the chain's site (heap_sites_find) and counting it (heap_sites_alloc)
# -- and a kfree, and of that heap_sites_free. The current task and its stack bounds are the driver's (two calls
# here, a load and two adds in the kernel). Run from the top of the tree.
set -euo pipefail
. tests/bench/callgrind.bash
N=1000
cg=build/bench/callgrind.heap.out
callgrind_run heap_cost "$cg" "$N" kmalloc kfree -- alloc "$N"
cost() { inclusive_cost "$cg" "$N" "$1"; }

alloc=$(cost kmalloc)
walk=$(cost stack_walk)
find=$(cost heap_sites_find)
count=$(cost heap_sites_alloc)
free=$(cost kfree)
give_back=$(cost heap_sites_free)
if [ "$alloc" -eq 0 ] || [ "$walk" -eq 0 ] || [ "$find" -eq 0 ] || [ "$free" -eq 0 ] || [ "$give_back" -eq 0 ]; then
  echo "heap_cost: no figure (see $cg)" >&2
  exit 1
fi
profile=$(( walk + find + count ))
echo "heap: a kmalloc(64) from a chain of 8 frames or more: $alloc instructions, of which the heap profile's $profile ($(( profile * 100 / alloc ))%): the walk of the caller's 8 frames $walk, finding its site $find (the hash, the probe, the compare of 8 frames), counting it $count; every allocation counted, none sampled"
echo "heap: a kfree: $free instructions, of which the heap profile's $give_back (the bytes given back to the block's site)"
