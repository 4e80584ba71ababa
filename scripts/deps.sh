#!/usr/bin/env bash
# Installs every Debian package kprof needs to build, run and test, and nothing when all is already there.
# Called first by `make run`, `make test` and .ci/run, so a fresh Debian 12 machine needs nothing by hand.
set -euo pipefail

# package -> a file that proves it is installed (dpkg -s is slow per package; a file test is instant)
packages=(
  gcc clang make binutils python3
  grub-pc-bin grub-common xorriso mtools
  qemu-system-x86 gdb
  python3-pytest python3-pexpect
  libcmocka-dev valgrind
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
