#!/usr/bin/env bash
# tests/bench/flame_cost.sh: what the kernel's flame graph costs, in instructions counted exactly by callgrind on
# tests/bench/flame_cost.c (kernel/profiler/flame.c and flame_svg.c built for the host with the kernel's compiler
# and flags): one flame_render of a full pprof fold (4,096 keys of 8 frames), and of that the tree (the lookups,
# the merge, the sort, the layout: flame_tree_build) and the rest, the SVG written; and the bytes it writes. The
# heap is the unit test's counting heap over the C library's (calloc and free are counted in). Run from the top
# of the tree.
set -euo pipefail

OUT=build/bench
mkdir -p "$OUT"
make -s --no-print-directory "$OUT/flame_cost"
N=10
cg="$OUT/callgrind.flame.out"
out=$(valgrind --tool=callgrind --callgrind-out-file="$cg" --toggle-collect=flame_render \
        "$OUT/flame_cost" render "$N" 2>"$cg.log")
calls=$(sed -n 's/^calls //p' <<<"$out")
if [ "$calls" != "$N" ]; then
  echo "flame_cost: the driver did not render $N times (see $cg.log)" >&2
  exit 1
fi
read -r bytes boxes nodes < <(sed -n 's/^bytes \([0-9]*\) boxes \([0-9]*\) nodes \([0-9]*\)$/\1 \2 \3/p' <<<"$out")

# cost FUNCTION: FUNCTION's instructions a call with its callees (the largest of its lines, which
# callgrind_annotate repeats per source file its code came from).
cost() {
  local total
  total=$(callgrind_annotate --threshold=100 --inclusive=yes "$cg" 2>/dev/null |
            awk -v fn="$1" '$0 ~ ":" fn "( \\[|$)" { gsub(/,/, "", $1); n = $1 + 0; if (n > max) max = n }
                            END { print max + 0 }')
  echo $(( (total + N / 2) / N ))
}

render=$(cost flame_render)
tree=$(cost flame_tree_build)
if [ "$render" -eq 0 ] || [ "$tree" -eq 0 ] || [ -z "${bytes:-}" ]; then
  echo "flame_cost: no figure (see $cg)" >&2
  exit 1
fi
echo "flame: a flame graph of 4096 keys (8 frames each, $nodes nodes, $boxes boxes a pixel or wider): $bytes bytes of SVG, $render instructions to render ($(( render / bytes )) a byte), of which the tree $tree (lookups, merge, sort, layout) and the SVG written $(( render - tree ))"
