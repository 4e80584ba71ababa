/* arch/x86_64/gdb_regs.c: the register table of a stopped x86-64 CPU (arch/x86_64/gdb_regs.h). One row per
 * register, offsetof into where it is kept, so that a register cannot be read from one field and written to
 * another; tests/unit/test_gdb_x86_regs.c sends a distinct value through every row, both ways. */
#include <stddef.h>

#include "arch/x86_64/gdb_regs.h"

/* The rflags bits gdb may set: CF, PF, AF, ZF, SF, TF, IF, DF, OF, RF, AC, VIF, VIP, ID. Not IOPL (the
 * kernel runs at 0), NT (IRET in 64-bit mode with NT set raises #GP), VM, nor a reserved bit. */
#define RFLAGS_GDB_MAY_SET 0x3D0FD5ull
#define RFLAGS_ALWAYS_ONE 0x2ull

#define CTX(reg, field) [reg] = { #field, 8, 64, GDB_X86_IN_CONTEXT, offsetof(struct context, field), GDB_X86_FREE }
#define ADDR_CTX(reg, field) [reg] = { #field, 8, 64, GDB_X86_IN_CONTEXT, offsetof(struct context, field), GDB_X86_ADDRESS }
#define SEL_CTX(reg, field) [reg] = { #field, 4, 16, GDB_X86_IN_CONTEXT, offsetof(struct context, field), GDB_X86_FIXED }
#define SEL_CPU(reg, field) [reg] = { #field, 4, 16, GDB_X86_IN_CPU_STATE, offsetof(struct gdb_x86_cpu_state, field), GDB_X86_FIXED }
#define BASE_CPU(reg, field) [reg] = { #field, 8, 64, GDB_X86_IN_CPU_STATE, offsetof(struct gdb_x86_cpu_state, field), GDB_X86_FIXED }

const struct gdb_x86_reg gdb_x86_regs[GDB_REG_COUNT] = {
    CTX(GDB_RAX, rax), CTX(GDB_RBX, rbx), CTX(GDB_RCX, rcx), CTX(GDB_RDX, rdx),
    CTX(GDB_RSI, rsi), CTX(GDB_RDI, rdi), CTX(GDB_RBP, rbp), ADDR_CTX(GDB_RSP, rsp),
    CTX(GDB_R8, r8),   CTX(GDB_R9, r9),   CTX(GDB_R10, r10), CTX(GDB_R11, r11),
    CTX(GDB_R12, r12), CTX(GDB_R13, r13), CTX(GDB_R14, r14), CTX(GDB_R15, r15),
    ADDR_CTX(GDB_RIP, rip),
    [GDB_EFLAGS] = { "eflags", 4, 32, GDB_X86_IN_CONTEXT, offsetof(struct context, rflags), GDB_X86_FLAGS },
    SEL_CTX(GDB_CS, cs), SEL_CTX(GDB_SS, ss),
    SEL_CPU(GDB_DS, ds), SEL_CPU(GDB_ES, es), SEL_CPU(GDB_FS, fs), SEL_CPU(GDB_GS, gs),
    BASE_CPU(GDB_FS_BASE, fs_base), BASE_CPU(GDB_GS_BASE, gs_base),
};

bool gdb_x86_canonical(uint64_t addr)
{
    return (uint64_t)((int64_t)(addr << 16) >> 16) == addr;
}

static uint64_t *slot(const struct gdb_x86_reg *r, const struct context *ctx, const struct gdb_x86_cpu_state *cpu)
{
    const char *base = r->home == GDB_X86_IN_CONTEXT ? (const char *)ctx : (const char *)cpu;
    return (uint64_t *)(uintptr_t)(base + r->offset);
}

static uint64_t significant(const struct gdb_x86_reg *r, uint64_t value)
{
    return r->bits == 64 ? value : value & ((1ull << r->bits) - 1);
}

bool gdb_x86_reg_read(const struct context *ctx, const struct gdb_x86_cpu_state *cpu, enum gdb_reg reg,
                      uint64_t *value)
{
    if ((unsigned)reg >= GDB_REG_COUNT)
        return false;
    const struct gdb_x86_reg *r = &gdb_x86_regs[reg];
    *value = significant(r, *slot(r, ctx, cpu));
    return true;
}

bool gdb_x86_reg_write(struct context *ctx, const struct gdb_x86_cpu_state *cpu, enum gdb_reg reg,
                       uint64_t value)
{
    if ((unsigned)reg >= GDB_REG_COUNT)
        return false;
    const struct gdb_x86_reg *r = &gdb_x86_regs[reg];
    uint64_t *p = slot(r, ctx, cpu);
    switch (r->kind) {
    case GDB_X86_FREE:
        *p = value;
        return true;
    case GDB_X86_ADDRESS:
        if (!gdb_x86_canonical(value))
            return false;
        *p = value;
        return true;
    case GDB_X86_FLAGS:
        if (value & ~(RFLAGS_GDB_MAY_SET | RFLAGS_ALWAYS_ONE))
            return false;
        *p = value | RFLAGS_ALWAYS_ONE;
        return true;
    case GDB_X86_FIXED:
        break;
    }
    return value == significant(r, *p);
}
