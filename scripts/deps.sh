#!/usr/bin/env bash
# Installs every Debian package kprof needs to build, run and test, and nothing when all is already there.
# Called first by `make run`, `make test` and .ci/run, so a fresh Debian 12 machine needs nothing by hand.
set -euo pipefail

# grub-pc-bin and grub-efi-amd64-bin together make grub-mkrescue write a hybrid ISO that boots from a BIOS and
# from UEFI (mtools builds its EFI system partition image); ovmf is the UEFI firmware QEMU boots it with
# (scripts/qemu.sh --firmware uefi). lldb is the second debugger client the stub is tested against
# (tests/integration/test_lldb.py); python3-lldb-14 quiets the traceback lldb prints without its module.
# python3-pytest-xdist runs the integration modules in two processes (make integration).
# zlib1g-dev: zlib is the reference the gzip unit test and fuzz target check kernel/lib/gzip.c against.
# tmux is the terminal tests/integration/test_console_screen.py runs `make run`'s QEMU in: its capture-pane shows
# the screen as a user's terminal draws it (cursor moves and erases acted on), which a byte stream cannot.
packages=(
  gcc clang make binutils python3 dpkg-dev
  grub-pc-bin grub-efi-amd64-bin grub-common xorriso mtools
  qemu-system-x86 ovmf gdb lldb python3-lldb-14
  python3-pytest python3-pytest-xdist python3-pexpect
  libcmocka-dev zlib1g-dev valgrind libclang-rt-14-dev
  protobuf-compiler python3-protobuf golang-go golang-github-google-pprof-dev
  chromium tmux
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
done

if [ ${#missing[@]} -gt 0 ]; then
  echo "deps: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# ---- lwIP source --------------------------------------------------------------------------------------------
# lwIP is compiled from Debian's source package `lwip` (the Makefile's lwIP section), unpacked into
# build/lwip-src and never committed. Fetching a source package needs deb-src entries: when the machine has none,
# they are derived from its own deb entries (same mirrors, suites, components and keys), so no host name is ever
# written here.
root="$(cd "$(dirname "$0")/.." && pwd)"
lwip_src="$root/build/lwip-src"
deb_src_file=/etc/apt/sources.list.d/kprof-deb-src.sources

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

# Prints one deb-src stanza (deb822) per enabled deb entry in the machine's apt sources: from deb822 .sources
# files every field but Types is kept as written (continuation lines too); one-line entries of sources.list and
# *.list have their [options] turned into the matching deb822 fields.
derive_deb_src() {
  local f
  for f in /etc/apt/sources.list.d/*.sources; do
    if [ ! -f "$f" ] || [ "$f" = "$deb_src_file" ]; then continue; fi
    awk '
      function flush() {
        if (n && is_deb && enabled) { print "Types: deb-src"; for (i = 1; i <= n; i++) print kept[i]; print "" }
        n = 0; is_deb = 0; enabled = 1; keep = 0
      }
      BEGIN { flush() }
      /^[ \t]*#/ { next }
      /^[ \t]*$/ { flush(); next }
      /^[ \t]/ { if (keep) kept[++n] = $0; next }
      {
        field = tolower($1); keep = 1
        if (field == "types:") { keep = 0; for (i = 2; i <= NF; i++) if ($i == "deb") is_deb = 1 }
        else if (field == "enabled:") { keep = 0; if (tolower($2) == "no") enabled = 0 }
        if (keep) kept[++n] = $0
      }
      END { flush() }
    ' "$f"
  done
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -f "$f" ] || continue
    awk '
      $1 != "deb" { next }
      {
        i = 2; opts = ""
        if ($2 ~ /^\[/) {                                   # [key=value ...], possibly over several words
          for (; i <= NF; i++) { opts = opts " " $i; if ($i ~ /\]$/) { i++; break } }
          gsub(/[\[\]]/, "", opts)
        }
        print "Types: deb-src"
        print "URIs: " $i
        print "Suites: " $(i + 1)
        comps = ""; for (j = i + 2; j <= NF && $j !~ /^#/; j++) comps = comps " " $j
        if (comps != "") print "Components:" comps
        m = split(opts, kv, " ")
        for (j = 1; j <= m; j++) {
          eq = index(kv[j], "="); if (!eq) continue
          key = substr(kv[j], 1, eq - 1); val = substr(kv[j], eq + 1); gsub(/,/, " ", val)
          if (key == "arch") key = "Architectures"
          else if (key == "lang") key = "Languages"
          else if (key == "target") key = "Targets"
          else if (key == "signed-by") key = "Signed-By"
          else if (key == "trusted") key = "Trusted"
          print key ": " val
        }
        print ""
      }
    ' "$f"
  done
}

# grep reads all its input (no -q): quitting early could kill the writer with SIGPIPE and, under pipefail,
# turn a match into a failure.
deb_src_enabled() {
  # shellcheck disable=SC2016 # $(CREATED_BY) is apt's field syntax, not the shell's
  apt-get indextargets --format '$(CREATED_BY)' 2>/dev/null | grep -x Sources >/dev/null
}

lwip_known() {
  apt-cache showsrc --only-source lwip 2>/dev/null | grep '^Package: lwip$' >/dev/null
}

if [ ! -d "$lwip_src/src/core" ]; then
  echo "deps: fetching the lwIP source package into build/lwip-src"
  if ! deb_src_enabled; then
    stanzas="$(derive_deb_src)"
    if [ -z "$stanzas" ]; then
      echo "deps: no enabled deb entry in /etc/apt/sources.list{,.d} to derive a deb-src entry from" >&2
      exit 1
    fi
    printf '# Written by kprof scripts/deps.sh: deb-src twins of this machine'"'"'s deb entries.\n%s\n' "$stanzas" |
      as_root tee "$deb_src_file" >/dev/null
  fi
  lwip_known || as_root apt-get update -qq
  # Downloaded to a scratch directory first and unpacked under a temporary name, so an interrupted fetch never
  # leaves a tree that looks complete. apt checks every file against the signed Sources index; dpkg-source
  # therefore skips its own signature check (Debian's keyring is not installed here to do it).
  dl="$root/build/lwip-dl"
  rm -rf "$dl" "$lwip_src.tmp"
  mkdir -p "$dl"
  # The download runs as the calling user: apt's default sandbox user could not write into this directory.
  (cd "$dl" && apt-get source -qq --download-only -o APT::Sandbox::User="$(id -un)" lwip)
  dpkg-source --no-check --no-copy -x "$dl"/lwip_*.dsc "$lwip_src.tmp" >/dev/null
  mv "$lwip_src.tmp" "$lwip_src"
  rm -rf "$dl"
fi
