/* arch/x86_64/gdb_regs.h: where each register gdb sees (enum gdb_reg, gdbstub/target.h) lives on a stopped
 * x86-64 CPU -- one {name, size, home, offset} row per register: the general registers, rip and rflags in
 * the saved struct context, and the segment selectors and bases that are not in it in the CPU's saved
 * struct gdb_x86_cpu_state. Plain C, no CPU access: tests/unit/test_gdb_x86_regs.c runs it on the host. */
#ifndef ARCH_X86_64_GDB_REGS_H
#define ARCH_X86_64_GDB_REGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch/x86_64/context.h"
#include "gdbstub/target.h"

/* What gdb may read of a stopped CPU besides its context, saved by the CPU itself as it stops. */
struct gdb_x86_cpu_state {
    uint64_t ds, es, fs, gs;  /* selectors */
    uint64_t fs_base;         /* IA32_FS_BASE */
    uint64_t gs_base;         /* the CPU's struct percpu, which GS addresses */
};

enum gdb_x86_home { GDB_X86_IN_CONTEXT, GDB_X86_IN_CPU_STATE };

/* How a register is read and written. */
enum gdb_x86_kind {
    GDB_X86_FREE,     /* 64 bits, written as given */
    GDB_X86_ADDRESS,  /* rip, rsp: 64 bits, canonical only -- IRET to a non-canonical rip or rsp raises #GP */
    GDB_X86_FLAGS,    /* the low 32 bits of rflags: only the bits gdb may set (RFLAGS_GDB_MAY_SET in
                         gdb_regs.c), bit 1 kept set; IOPL, NT, VM or a reserved bit is refused */
    GDB_X86_FIXED,    /* the kernel's own (selectors, bases): a write that changes nothing is accepted, any
                         other refused -- a wrong CS or GS base would crash the CPU on resume */
};

struct gdb_x86_reg {
    const char *name;        /* gdb's name, as in gdbstub/regs.c */
    unsigned size;           /* bytes gdb sees: 8, or 4 for eflags and the selectors */
    unsigned bits;           /* significant bits of the stored quadword: 64, 32 (eflags) or 16 (selectors) */
    enum gdb_x86_home home;
    size_t offset;           /* of the uint64_t in struct context or struct gdb_x86_cpu_state */
    enum gdb_x86_kind kind;
};

/* Indexed by enum gdb_reg. */
extern const struct gdb_x86_reg gdb_x86_regs[GDB_REG_COUNT];

bool gdb_x86_reg_read(const struct context *ctx, const struct gdb_x86_cpu_state *cpu, enum gdb_reg reg,
                      uint64_t *value);
/* False, nothing changed, when the CPU could not resume with value: a fixed register changed, a
 * non-canonical rip or rsp, flags it must not have. */
bool gdb_x86_reg_write(struct context *ctx, const struct gdb_x86_cpu_state *cpu, enum gdb_reg reg,
                       uint64_t value);
/* Whether addr is canonical: bits 63..47 all equal. */
bool gdb_x86_canonical(uint64_t addr);

#endif
