/* gdbstub/target.h: what the gdb remote protocol layer (gdbstub/ files) needs from the machine it debugs. The
 * protocol code is portable and host-tested against a fake target; arch/x86_64/gdb_target.c assembles it
 * for real. All calls happen while every CPU is stopped, on the CPU that runs the stub. */
#ifndef GDBSTUB_TARGET_H
#define GDBSTUB_TARGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct sink;

/* The x86-64 registers in gdb's order for the amd64 target description (rax..r15, rip, eflags, cs, ss, ds,
 * es, fs, gs, fs_base, gs_base; then nothing else: no FPU/SSE, the kernel is general-regs-only). */
enum gdb_reg {
    GDB_RAX, GDB_RBX, GDB_RCX, GDB_RDX, GDB_RSI, GDB_RDI, GDB_RBP, GDB_RSP,
    GDB_R8, GDB_R9, GDB_R10, GDB_R11, GDB_R12, GDB_R13, GDB_R14, GDB_R15,
    GDB_RIP, GDB_EFLAGS, GDB_CS, GDB_SS, GDB_DS, GDB_ES, GDB_FS, GDB_GS,
    GDB_FS_BASE, GDB_GS_BASE,
    GDB_REG_COUNT
};

/* Byte transport (COM2 on x86, or UDP: gdbstub/udp.h). */
struct gdb_transport {
    /* Blocks until a byte arrives or timeout_ms passes (-1: forever); returns the byte or -1 on timeout. */
    int (*getc)(void *ctx, int timeout_ms);
    void (*putc)(void *ctx, char c);
    /* len bytes as putc would send them one by one; a reply's payload goes this way in one call, which spares
     * a call per byte (kilobytes a packet). NULL: putc for each. */
    void (*write)(void *ctx, const char *bytes, size_t len);
    void *ctx;
    /* The end of a packet or an ack (gdbstub/packet.c): what putc gathered goes out now, as one unit (a UDP
     * datagram). NULL: putc sends each byte at once (COM2). */
    void (*flush)(void *ctx);
    /* A session on this transport begins (begin true) or ends (false; gone: gdb detached, with D or k, or the
     * link was lost, so whoever was attached is forgotten). NULL: nothing to do. */
    void (*session)(void *ctx, bool begin, bool gone);
};

struct gdb_target {
    unsigned (*cpu_count)(void);
    /* One line for qThreadExtraInfo: "cpu 2, task burn (pid 7)". */
    void (*cpu_describe)(unsigned cpu, char *buf, size_t cap);
    /* Registers of a stopped CPU; sizes: 8 bytes for rax..rip and the two bases, 4 for eflags and segments. */
    bool (*reg_read)(unsigned cpu, enum gdb_reg reg, uint64_t *value);
    bool (*reg_write)(unsigned cpu, enum gdb_reg reg, uint64_t value);
    /* Memory that cannot fault the kernel: false (and nothing written) for unmapped or non-canonical ranges. */
    bool (*mem_read)(uint64_t addr, void *buf, size_t len);
    bool (*mem_write)(uint64_t addr, const void *buf, size_t len);
    /* Software breakpoints: plants the breakpoint instruction (x86: int3) at addr, handing back the byte it
     * replaced -- false, nothing changed, where no code is mapped -- and puts a byte back. Where the
     * breakpoints are is the stub's table (gdbstub/breakpoints.h), not the target's. */
    bool (*sw_break_plant)(uint64_t addr, uint8_t *saved);
    bool (*sw_break_unplant)(uint64_t addr, uint8_t saved);
    /* Hardware execution breakpoints and watchpoints: the debug registers there are, and whether one can hold
     * addr. Each CPU loads the table's (gdb_break_hw_slot) into its own as it resumes, and disarms its own as
     * it stops, so that nothing the debugger does while stopped matches one. */
    unsigned hw_break_slots;
    bool (*hw_break_valid)(uint64_t addr);
    /* The debugger's own code, [*start, *end): what the stub, the stop/resume state machine and the trap,
     * NMI and interrupt paths into them run. No breakpoint of either kind may go there: it would fire
     * inside the debugger that has to handle it. */
    void (*debugger_code)(uint64_t *start, uint64_t *end);
    /* Whether [addr, addr + len) touches the debugger's own data -- what the same paths read and write while
     * the machine runs, where a watchpoint would fire inside them. NULL: none is known. */
    bool (*debugger_data)(uint64_t addr, uint64_t len);
    /* Resume, recorded for the session's end: cpu (-1: none named) steps one instruction when step, or
     * runs; every other CPU runs too unless others_stay (vCont;s:N, or vCont;c:N under gdb's
     * scheduler-locking). cpu -1 with step false: every CPU runs. */
    void (*resume)(int cpu, bool step, bool others_stay);
    /* MSRs, read or written on the CPU that owns them; false on #GP. */
    bool (*msr_read)(unsigned cpu, uint32_t msr, uint64_t *value);
    bool (*msr_write)(unsigned cpu, uint32_t msr, uint64_t value);
    /* `monitor pmu`: every PMU MSR of the chosen backend, per CPU, decoded, written to out. */
    void (*pmu_report)(struct sink *out);
    /* `monitor poweroff`: power the machine off. Returns only where it could not, saying why; the machine is
     * then as it was, stopped. (gdb's `k` does not come here: a debugger that quits without detaching sends
     * it, so it detaches -- gdbstub/threads.c.) */
    const char *(*poweroff)(void);
};

#endif
