#!/usr/bin/env bash
# Builds a bootable ISO from the kernel ELF and the top-level grub.cfg, with an optional kernel command line.
# usage: scripts/mkiso.sh KERNEL.elf OUT.iso [CMDLINE]
set -euo pipefail
elf=$1 out=$2 cmdline=${3:-}
top=$(cd "$(dirname "$0")/.." && pwd)
stage=$(mktemp -d "${TMPDIR:-/tmp}/kprof-iso.XXXXXX")
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/boot/grub"
cp "$elf" "$stage/boot/kprof.elf"
# The command line is data for GRUB: refuse characters that would end or change the menu entry.
case "$cmdline" in *[\;\&\|\$\`\"\'\\{}]*|*$'\n'*)
  shown=$(sed -E 's/(^|[[:space:]])udpsh\.key=[^[:space:]]*/\1udpsh.key=<redacted>/g' <<<"$cmdline") # no key shown
  echo "mkiso: bad character in command line: $shown" >&2
  exit 2;; esac
# A keyed command line puts the key in grub.cfg and so in the ISO: then the ISO is its owner's alone (0600), as
# is the staging directory the grub.cfg copy is written in (mktemp -d makes it 0700).
case " $cmdline " in *[[:space:]]udpsh.key=*) umask 077 ;; esac
sed "s|^\(\s*multiboot2 /boot/kprof.elf\).*|\1 ${cmdline//|/\\|}|" "$top/grub.cfg" > "$stage/boot/grub/grub.cfg"
# grub-mkrescue puts in a boot image for each GRUB platform installed: BIOS from grub-pc-bin, UEFI from
# grub-efi-amd64-bin (with mtools for its EFI system partition). Without the latter the ISO silently boots from
# a BIOS only; say so rather than let `--firmware uefi` fail later at the firmware's boot menu.
[ -d /usr/lib/grub/x86_64-efi ] || echo "mkiso: grub-efi-amd64-bin is not installed: $out will not boot under UEFI (scripts/deps.sh installs it)" >&2
grub-mkrescue -o "$out.tmp" "$stage" >/dev/null 2>&1 || { grub-mkrescue -o "$out.tmp" "$stage"; exit 1; }
case " $cmdline " in *[[:space:]]udpsh.key=*) chmod 600 "$out.tmp" ;; esac
mv "$out.tmp" "$out"
