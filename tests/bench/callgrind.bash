# tests/bench/callgrind.bash: what the callgrind benchmarks share, sourced by them (not a benchmark itself: `make
# bench` runs tests/bench/*.sh). Run from the top of the tree.

# callgrind_run NAME CG N FUNCTION... -- ARGS...: the driver build/bench/NAME (built first) under callgrind with
# ARGS, into the file CG, counting only inside the FUNCTIONs; fails (naming NAME and the log) unless the driver
# printed "calls N".
callgrind_run() {
  local name=$1 cg=$2 n=$3 calls toggles=()
  shift 3
  while [ "$1" != "--" ]; do toggles+=("--toggle-collect=$1"); shift; done
  shift
  mkdir -p build/bench
  make -s --no-print-directory "build/bench/$name"
  calls=$(valgrind --tool=callgrind --callgrind-out-file="$cg" "${toggles[@]}" "build/bench/$name" "$@" \
            2>"$cg.log" | sed -n 's/^calls //p')
  if [ "$calls" != "$n" ]; then
    echo "$name: the driver did not run $n calls (see $cg.log)" >&2
    return 1
  fi
}

# inclusive_cost CG N FUNCTION: FUNCTION's instructions a call with its callees, over the N calls of CG (the
# largest of its lines, which callgrind_annotate repeats per source file its code came from).
inclusive_cost() {
  local total
  total=$(callgrind_annotate --threshold=100 --inclusive=yes "$1" 2>/dev/null |
            awk -v fn="$3" '$0 ~ ":" fn "( \\[|$)" { gsub(/,/, "", $1); n = $1 + 0; if (n > max) max = n }
                            END { print max + 0 }')
  echo $(( (total + $2 / 2) / $2 ))
}
