#!/usr/bin/env bash
# tests/bench/newcomer_cost.sh: what the gdb UDP transport spends on one newcomer's hello, in instructions counted
# exactly by callgrind on tests/bench/newcomer_cost.c (gdbstub/udp_auth.c and HMAC-SHA256 built for the host with
# the kernel's compiler and flags): gdb_udp_auth_open with its callees -- the session nonce and the answer's MAC
# -- and of that the two HMACs. The newcomers' budget (GDB_UDP_NEWCOMER_HELLO_RATE in gdbstub/udp.h) times this is
# the most a flood of forged hellos can make the kernel compute a second; the datagram each answer costs
# (netpoll's frame and the card) comes on top. Run from the top of the tree.
set -euo pipefail
. tests/bench/callgrind.bash
N=1000
cg=build/bench/callgrind.newcomer.out
callgrind_run newcomer_cost "$cg" "$N" gdb_udp_auth_open -- hello "$N"
cost() { inclusive_cost "$cg" "$N" "$1"; }

answer=$(cost gdb_udp_auth_open)
hmacs=$(cost hmac_sha256) # both calls: the count is per hello
rate=$(sed -n 's/^#define GDB_UDP_NEWCOMER_HELLO_RATE \([0-9]*\).*/\1/p' gdbstub/udp.h)
if [ "$answer" -eq 0 ] || [ "$hmacs" -eq 0 ] || [ -z "$rate" ]; then
  echo "newcomer_cost: no figure (see $cg)" >&2
  exit 1
fi
echo "gdb udp: a newcomer's hello answered: $answer instructions, of which the two HMAC-SHA256s $hmacs; at the newcomers' budget of $rate a second a flood of forged hellos buys at most $(( answer * rate / 1000 )) thousand instructions a second, and $rate datagrams of $(( 42 + 85 )) bytes (each within 3x of the hello that asked)"
