#!/usr/bin/env bash
# scripts/link.sh: links BUILD_DIR/kprof.elf with a symbol table that describes the image it sits in.
# The table is generated from nm of a linked image, but linking it in could move the code it describes, so
# the link repeats: pass 1 links an empty table; each later pass links the table made from the pass before
# it, until two consecutive passes yield the same table (then the last image carries its own description).
#
# usage: KCC=gcc KCFLAGS="..." scripts/link.sh BUILD_DIR OBJ...
# Writes BUILD_DIR/syms.N.c (the table each pass links) and keeps every intermediate under BUILD_DIR/link/.
set -euo pipefail

MAX_PASSES=5

if [ $# -lt 2 ]; then
  echo "usage: KCC=cc KCFLAGS='...' $0 BUILD_DIR OBJ..." >&2
  exit 2
fi
: "${KCC:?link: KCC must name the kernel C compiler}"
: "${KCFLAGS:?link: KCFLAGS must hold the kernel compile flags}"

build=$1
shift
objs=("$@")
gensyms="$(dirname "$0")/gensyms.py"
work="$build/link"
final="$build/kprof.elf"

# A failed link must not leave an older kprof.elf behind looking current.
rm -f "$final"
rm -rf "$work"
rm -f "$build"/syms.*.c
mkdir -p "$work"

# KCFLAGS is a list of flags in one string; splitting it into words is the point.
read -r -a kcflags <<< "$KCFLAGS"

compile_table() { # N: compiles BUILD/syms.N.c
  "$KCC" "${kcflags[@]}" -c "$build/syms.$1.c" -o "$work/syms.$1.o"
}

link_pass() { # N: links pass N with the table of pass N-1
  ld -nostdlib -z max-page-size=0x1000 --build-id=sha1 -T arch/x86_64/linker.ld \
     -o "$work/kprof.$1.elf" "${objs[@]}" "$work/syms.$(($1 - 1)).o"
}

# The loadable segment holding the text (flags R E), as VADDR,FILESZ,OFFSET for gensyms' --text-segment.
text_segment_of() { # N
  readelf -lW "$work/kprof.$1.elf" | awk '$1 == "LOAD" && $8 == "E" { print $3 "," $5 "," $2; exit }'
}

table_of() { # N: writes BUILD/syms.N.c describing the image of pass N
  nm -n -S --defined-only "$work/kprof.$1.elf" > "$work/nm.$1.txt"
  local segment
  segment=$(text_segment_of "$1")
  if [ -z "$segment" ]; then
    echo "link: pass $1 has no loadable R E segment (readelf -lW $work/kprof.$1.elf)" >&2
    exit 1
  fi
  python3 "$gensyms" --text-segment "$segment" < "$work/nm.$1.txt" > "$build/syms.$1.c"
}

python3 "$gensyms" --empty > "$build/syms.0.c"
compile_table 0
link_pass 1
table_of 1

# Comparing whole generated tables (addresses, sizes and names of every kept symbol) is stricter than
# comparing text addresses alone: equality means the table linked into pass N is exactly what describes it.
pass=1
while :; do
  pass=$((pass + 1))
  if [ "$pass" -gt "$MAX_PASSES" ]; then
    echo "link: FAILED: symbol table still changing after $MAX_PASSES passes" >&2
    echo "link: compare $build/syms.$((pass - 2)).c and $build/syms.$((pass - 1)).c to see what moves" >&2
    exit 1
  fi
  compile_table $((pass - 1))
  link_pass "$pass"
  table_of "$pass"
  if cmp -s "$build/syms.$((pass - 1)).c" "$build/syms.$pass.c"; then
    break
  fi
done

count=$(sed -n 's/^const uint32_t kernel_symbol_count = \([0-9]*\)u*;$/\1/p' "$build/syms.$pass.c")
cp "$work/kprof.$pass.elf" "$final.tmp"
mv "$final.tmp" "$final"
echo "link: symbol table stable after $pass passes (${count:-?} symbols)"
