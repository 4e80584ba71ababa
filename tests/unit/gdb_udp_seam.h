/* tests/unit/gdb_udp_seam.h: the host tests' gdb_udp_auth seam (tests/unit/gdb_udp_seam.c): key it, see it. */
#ifndef TESTS_UNIT_GDB_UDP_SEAM_H
#define TESTS_UNIT_GDB_UDP_SEAM_H

#include "gdbstub/udp_auth.h"

/* key NULL: plain KPG1 again (as the kernel without udpsh.key=). */
void gdb_udp_seam_key(const uint8_t secret[SHA256_DIGEST_SIZE], const uint8_t *key, size_t key_len);
/* As gdb.udp.insecure does (after gdb_udp_seam_key without a key): raw gdb bytes. */
void gdb_udp_seam_insecure(void);
struct gdb_udp_auth *gdb_udp_seam_auth(void);

#endif
