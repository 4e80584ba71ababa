#!/usr/bin/env bash
# Boots kprof in QEMU with the console (COM1) and the QEMU monitor multiplexed on this terminal.
#
# usage: scripts/qemu.sh [--iso PATH] [--smp N] [--mem MiB] [--cmdline "..."] [--gdb-port P]
#                        [--udp-port P] [--nic NIC] [--monitor PATH] [--firmware bios|uefi] [--accel tcg|kvm]
#                        [-- extra qemu args]
#
#   --accel A       tcg (default: QEMU's emulator) or kvm (-accel kvm -cpu host,-arch-capabilities: the host's
#                   CPU, less the one MSR QEMU cannot set on these machines' KVM, PVM; under PVM SeaBIOS and
#                   GRUB take about a minute before the kernel's first line)
#   --firmware F    bios (default: QEMU's SeaBIOS) or uefi (Debian's OVMF, /usr/share/ovmf/OVMF.fd as -bios: the
#                   same ISO boots through GRUB's EFI image; firmware and GRUB write to COM1 before the kernel)
#   --iso PATH      the ISO to boot (default build/kprof.iso)
#   --smp N         CPUs (default 4)              --mem MiB   memory (default 256)
#   --cmdline "..." kernel command line: boots a variant ISO, build/kprof-cmdline-HASH.iso, made from
#                   build/kprof.elf by scripts/mkiso.sh (remade when the ELF, grub.cfg or mkiso.sh is newer)
#   --gdb-port P    COM2 as a TCP server on 127.0.0.1:P for gdb (`target remote 127.0.0.1:P`)
#   --udp-port P    a NIC on user networking, host UDP 127.0.0.1:P forwarded to the guest's
#                   port $KPROF_UDP_GUEST_PORT (default 5555)
#   --nic NIC       which NIC, with --udp-port (docs/udp-shell.md): virtio-legacy (default), virtio-modern
#                   (-M q35, on a PCIe root port), e1000 (-M pc's default -nic user), e1000e (-M q35's default)
#   --netload-port P  with --udp-port: also forward host UDP 127.0.0.1:P to the guest's port P (netload sink/echo)
#   --gdb-udp-port P  a NIC (as --udp-port) with host UDP 127.0.0.1:P forwarded to the guest's gdb.udp port
#                   $KPROF_GDB_UDP_GUEST_PORT (default 1234): `target remote udp:127.0.0.1:P`
#   --monitor PATH  a second QEMU monitor on the unix socket PATH (for scripts: `nmi`, `info registers`)
#
# A command line with pprof.http=P (the kernel's HTTP server, docs/http.md) also gets a NIC (as --udp-port) with
# host TCP 127.0.0.1:P forwarded to the guest's port P: `make run CMDLINE=pprof.http=6060`, then
# `curl http://127.0.0.1:6060/debug/pprof/`.
#
# The tests build the same command line in tests/integration/kprof_qemu.py; keep the two in step.
# The script execs QEMU, so its pid is QEMU's. The exit device is always present: `outb(0xf4, v)` from the
# kernel ends QEMU with status (v << 1) | 1; a triple fault ends it with status 0 (-no-reboot).
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
iso="" smp=4 mem=256 cmdline="" gdb_port="" udp_port="" netload_port="" gdb_udp_port="" monitor="" firmware=bios
accel=tcg
nic=virtio-legacy
extra=()

die() { echo "qemu.sh: $*" >&2; exit 2; }
# A key never reaches the terminal (or a log that keeps it): every udpsh.key= value printed becomes <redacted>.
redact() { sed -E 's/(^|[[:space:]])udpsh\.key=[^[:space:]]*/\1udpsh.key=<redacted>/g' <<<"$1"; }
need() { [ $# -ge 2 ] && [ -n "$2" ] || die "$1 needs a value"; }
is_uint() { [[ $1 =~ ^[0-9]+$ ]]; }

while [ $# -gt 0 ]; do
  case $1 in
    --iso)      need "$@"; iso=$2; shift 2 ;;
    --smp)      need "$@"; smp=$2; shift 2 ;;
    --mem)      need "$@"; mem=$2; shift 2 ;;
    --cmdline)  [ $# -ge 2 ] || die "--cmdline needs a value"; cmdline=$2; shift 2 ;;
    --gdb-port) need "$@"; gdb_port=$2; shift 2 ;;
    --udp-port) need "$@"; udp_port=$2; shift 2 ;;
    --netload-port) need "$@"; netload_port=$2; shift 2 ;;
    --gdb-udp-port) need "$@"; gdb_udp_port=$2; shift 2 ;;
    --nic)      need "$@"; nic=$2; shift 2 ;;
    --monitor)  need "$@"; monitor=$2; shift 2 ;;
    --firmware) need "$@"; firmware=$2; shift 2 ;;
    --accel)    need "$@"; accel=$2; shift 2 ;;
    --)         shift; extra=("$@"); break ;;
    -h|--help)  sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *)          die "unknown option: $1 (try --help)" ;;
  esac
done

is_uint "$smp" && [ "$smp" -ge 1 ] || die "--smp wants a CPU count, not '$smp'"
is_uint "$mem" && [ "$mem" -ge 16 ] || die "--mem wants MiB (16 or more), not '$mem'"
for p in "$gdb_port" "$udp_port" "$netload_port" "$gdb_udp_port"; do
  [ -z "$p" ] || { is_uint "$p" && [ "$p" -ge 1 ] && [ "$p" -le 65535 ]; } || die "bad port '$p'"
done

if [ -n "$cmdline" ]; then
  [ -z "$iso" ] || die "--iso and --cmdline together: the command line is baked into an ISO of its own"
  elf=$top/build/kprof.elf
  [ -f "$elf" ] || die "$elf is missing: run make first"
  hash=$(printf '%s' "$cmdline" | sha256sum | cut -c1-12)
  iso=$top/build/kprof-cmdline-$hash.iso
  if [ ! -f "$iso" ] || [ "$elf" -nt "$iso" ] || [ "$top/grub.cfg" -nt "$iso" ] \
     || [ "$top/scripts/mkiso.sh" -nt "$iso" ]; then
    "$top/scripts/mkiso.sh" "$elf" "$iso" "$cmdline"
  fi
  # A keyed ISO holds the key in its grub.cfg: its owner's alone (mkiso.sh makes it so; one made before it did
  # is fixed here).
  case " $cmdline " in *[[:space:]]udpsh.key=*) chmod 600 "$iso" ;; esac
  echo "qemu.sh: kernel command line: $(redact "$cmdline") ($iso)" >&2
fi
# pprof.http=P on the command line: the same port on the host, over TCP (the last such word counts, as the
# kernel's cmdline_get takes it; a value the kernel refuses forwards nothing).
http_port=""
for word in $cmdline; do
  case $word in pprof.http=*) http_port=${word#pprof.http=} ;; esac
done
if [ -n "$http_port" ] && ! { is_uint "$http_port" && [ "$http_port" -ge 1 ] && [ "$http_port" -le 65535 ]; }; then
  echo "qemu.sh: pprof.http=$http_port is not a port: no TCP forward" >&2
  http_port=""
fi
# UEFI: OVMF.fd (code and variables in one image) as -bios rather than the split OVMF_CODE.fd/OVMF_VARS.fd on
# two pflash drives: QEMU maps it read-only, so OVMF keeps its variables in RAM -- nothing to copy per run or to
# clean up, every boot starts from the same state -- and under TCG it reaches the kernel ~0.8 s sooner (3.3 s
# against 4.1 s here), with no pflash writes to emulate. Nothing kprof does needs persistent EFI variables.
OVMF=${KPROF_OVMF:-/usr/share/ovmf/OVMF.fd}
case $firmware in
  bios) fw_args=() ;;
  uefi) [ -f "$OVMF" ] || die "--firmware uefi needs $OVMF (Debian's ovmf package: scripts/deps.sh installs it)"
        fw_args=(-bios "$OVMF") ;;
  *)    die "--firmware wants bios or uefi, not '$firmware'" ;;
esac
case $accel in
  tcg) accel_args=() ;;
  kvm) [ -r /dev/kvm ] && [ -w /dev/kvm ] || die "--accel kvm needs /dev/kvm, readable and writable by you (it is not)"
       accel_args=(-accel kvm -cpu host,-arch-capabilities) ;;
  *)   die "--accel wants tcg or kvm, not '$accel'" ;;
esac
iso=${iso:-$top/build/kprof.iso}
[ -f "$iso" ] || die "$iso is missing: run make first"

# The console: one stdio character device carrying COM1 and the monitor (what -serial mon:stdio gives),
# with signal=off so Ctrl-C goes to the kernel's line editor instead of killing QEMU.
args=(
  -smp "$smp" -m "$mem" -cdrom "$iso" -boot d
  -display none -no-reboot
  -chardev stdio,id=con0,mux=on,signal=off
  -serial chardev:con0 -mon chardev=con0,mode=readline
  -device isa-debug-exit,iobase=0xf4,iosize=0x04
  ${fw_args[@]+"${fw_args[@]}"}
  ${accel_args[@]+"${accel_args[@]}"}
)
# COM2 for the gdb stub; nodelay: each packet is a small write, and Nagle would hold every one back.
[ -z "$gdb_port" ] || args+=(-chardev "socket,id=gdb0,host=127.0.0.1,port=$gdb_port,server=on,wait=off,nodelay=on"
                             -serial chardev:gdb0)
if [ -n "$udp_port" ] || [ -n "$gdb_udp_port" ] || [ -n "$http_port" ]; then
  fwds=()
  [ -z "$http_port" ] || fwds+=("hostfwd=tcp:127.0.0.1:$http_port-:$http_port")
  [ -z "$udp_port" ] || fwds+=("hostfwd=udp:127.0.0.1:$udp_port-:${KPROF_UDP_GUEST_PORT:-5555}")
  [ -z "$udp_port" ] || [ -z "$netload_port" ] || fwds+=("hostfwd=udp:127.0.0.1:$netload_port-:$netload_port")
  [ -z "$gdb_udp_port" ] || fwds+=("hostfwd=udp:127.0.0.1:$gdb_udp_port-:${KPROF_GDB_UDP_GUEST_PORT:-1234}")
  fwd=$(IFS=,; echo "${fwds[*]}")
  case $nic in
    virtio-legacy) args+=(-netdev "user,id=n0,$fwd" -device virtio-net-pci,netdev=n0) ;;
    virtio-modern) args+=(-M q35 -device pcie-root-port,id=rp1,chassis=1 -netdev "user,id=n0,$fwd"
                          -device virtio-net-pci,netdev=n0,bus=rp1) ;;
    e1000)         args+=(-nic "user,$fwd") ;;
    e1000e)        args+=(-M q35 -nic "user,$fwd") ;;
    *) die "--nic $nic: want virtio-legacy, virtio-modern, e1000 or e1000e" ;;
  esac
else
  args+=(-nic none)
fi
[ -z "$monitor" ] || args+=(-monitor "unix:$monitor,server=on,wait=off")

echo "qemu.sh: booting $(basename "$iso") with $smp CPUs and $mem MiB (firmware $firmware, $accel); quit with Ctrl-A X (Ctrl-A C: QEMU monitor)" >&2
[ -z "$gdb_port" ] || echo "qemu.sh: gdb: target remote 127.0.0.1:$gdb_port (COM2)" >&2
[ -z "$gdb_udp_port" ] || echo "qemu.sh: gdb: target remote udp:127.0.0.1:$gdb_udp_port (gdb.udp=)" >&2
[ -z "$http_port" ] || echo "qemu.sh: pprof over HTTP: http://127.0.0.1:$http_port/debug/pprof/" >&2
[ -z "$udp_port" ] || echo "qemu.sh: UDP shell: scripts/udpsh -p $udp_port 127.0.0.1 help${netload_port:+; netload port $netload_port}" >&2
exec qemu-system-x86_64 "${args[@]}" ${extra[@]+"${extra[@]}"}
