fuzz_gdb_packet_SRCS := gdbstub/packet.c
