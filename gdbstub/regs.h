/* gdbstub/regs.h: the x86-64 register table as gdb sees it -- the target description XML served through
 * qXfer:features:read, and the g/G and p/P encodings, all generated from one table.
 *
 * gdb 13 accepts an x86-64 description only when its org.gnu.gdb.i386.core feature has all 40 core
 * registers: rax..gs and the x87 registers st0..st7, fctrl..fop (amd64 sets num_core_regs to 24 general +
 * 16 x87, and each must be present by name). The kernel is built without FPU use and the target has no x87
 * state to offer, so those 16 are described but always unavailable: `x` digits in g and p, refused by P.
 * fs_base and gs_base come in the org.gnu.gdb.i386.segments feature, after the core ones. gdb numbers the
 * registers in the order of the description, so fs_base is gdb's register 40 and gs_base 41, while they are
 * GDB_FS_BASE (24) and GDB_GS_BASE (25) in target.h; every entry says both numbers. */
#ifndef GDBSTUB_REGS_H
#define GDBSTUB_REGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gdbstub/target.h"

/* A register the target does not have (target_reg of the x87 entries). */
#define GDB_REG_NONE (-1)

/* Registers in the description, bytes they take in g/G. */
#define GDB_DESC_REGS 42
#define GDB_G_BYTES 292
/* The widest register, in bytes (st0..st7). */
#define GDB_REG_MAX_SIZE 10

struct gdb_reg_desc {
    const char *name;
    unsigned regnum;    /* gdb's number: the p/P argument, the regnum attribute in the XML, the g/G order */
    unsigned size;      /* bytes in g/G and p/P; bitsize / 8 */
    unsigned bitsize;
    const char *type;   /* target-description type */
    const char *group;  /* register group, or NULL for gdb's default for the type */
    unsigned feature;   /* index into the description's features */
    int target_reg;     /* enum gdb_reg, or GDB_REG_NONE */
};

/* In gdb's order: gdb_regs[i].regnum == i. */
extern const struct gdb_reg_desc gdb_regs[GDB_DESC_REGS];

/* The entry for gdb's register regnum, or NULL. */
const struct gdb_reg_desc *gdb_reg_by_regnum(uint64_t regnum);
/* The entry for a target register. */
const struct gdb_reg_desc *gdb_reg_for_target(enum gdb_reg reg);

/* Writes 2*size hex digits of the register's value, little-endian, into dst -- or 2*size `x`s when the
 * target has no such register or cannot read it. Returns 2*size. */
size_t gdb_reg_encode(const struct gdb_target *target, unsigned cpu, const struct gdb_reg_desc *reg,
                      char *dst);
/* Reads 2*size hex digits, little-endian, from src. False when one is not hex. For a register the target
 * has, *value is the register's value (size <= 8); for one it lacks the digits are only checked. */
bool gdb_reg_decode(const struct gdb_reg_desc *reg, const char *src, uint64_t *value);

/* The g reply: every register of cpu in gdb's order, 2 * GDB_G_BYTES characters into dst. Returns that. */
size_t gdb_regs_encode_all(const struct gdb_target *target, unsigned cpu, char *dst);
enum gdb_regs_result { GDB_REGS_OK, GDB_REGS_MALFORMED, GDB_REGS_REFUSED };
/* The G packet's data: exactly 2 * GDB_G_BYTES hex digits. Checks all of it first, then writes each register
 * the target has: MALFORMED, with nothing written, when the length or a digit is wrong; REFUSED when the
 * target refused a write (the other registers are still written). */
enum gdb_regs_result gdb_regs_decode_all(const struct gdb_target *target, unsigned cpu, const char *src,
                                         size_t len);

/* The target description (target.xml), generated from the table. Copies bytes [offset, offset + len) of it
 * into buf (fewer at its end) and returns how many. */
size_t gdb_target_xml_read(size_t offset, char *buf, size_t len);
size_t gdb_target_xml_length(void);

#endif
