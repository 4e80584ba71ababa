/* gdbstub/breakpoints.h: the one breakpoint table -- every software and hardware breakpoint and every watchpoint gdb
 * has inserted, where it is, the instruction byte a software one replaced, and which debug-register slot a hardware
 * breakpoint or a watchpoint holds (they share the slots). The packet handlers change it (Z/z, detach, a new gdb);
 * the stop/resume state machine (gdbstub/stop.c) asks it whether a trap was one of gdb's; the machine asks it what
 * to show for memory under a breakpoint and which addresses to load into its debug registers. The machine keeps no
 * table of its own: it only plants and removes the breakpoint instruction (struct gdb_target). */
#ifndef GDBSTUB_BREAKPOINTS_H
#define GDBSTUB_BREAKPOINTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gdbstub/target.h"

#define GDB_MAX_BREAKPOINTS 64

/* gdb's Z types. No read-only watchpoint (Z3): x86's debug registers watch writes, or reads and writes. */
enum gdb_break_type { GDB_BREAK_SW = 0, GDB_BREAK_HW = 1, GDB_WATCH_WRITE = 2, GDB_WATCH_ACCESS = 4 };

/* What a debug-register slot holds: an execution breakpoint (len 1) or a watchpoint of len 1, 2, 4 or 8
 * bytes at an address aligned to it. */
struct gdb_hw_slot {
    enum gdb_break_type type;
    uint64_t addr;
    unsigned len;
};

enum gdb_break_result {
    GDB_BREAK_OK,        /* inserted, or already there */
    GDB_BREAK_FULL,      /* the table, or every hardware slot, is in use */
    GDB_BREAK_REFUSED,   /* the machine cannot break there (unmapped, non-canonical), or a watchpoint's length
                          * or alignment is one no debug register takes */
    GDB_BREAK_DEBUGGER,  /* the debugger's own code (target->debugger_code), or for a watchpoint its own data
                          * (target->debugger_data) */
};

/* Z: idempotent -- a breakpoint already there is OK, and the machine is not asked again. Never in the
 * debugger's own code; a watchpoint never on its code or data. len: a watchpoint's bytes (ignored for the
 * breakpoint types). */
enum gdb_break_result gdb_break_insert(const struct gdb_target *target, enum gdb_break_type type,
                                       uint64_t addr, uint64_t len);
/* z: idempotent -- true when none is there. False, the breakpoint kept, when the machine could not put
 * the original byte back. */
bool gdb_break_remove(const struct gdb_target *target, enum gdb_break_type type, uint64_t addr);
/* Detach, a lost link, a new gdb: every breakpoint goes. One that cannot be removed now (its page went
 * away) is forgotten all the same: nothing could ever remove it later either. */
void gdb_break_remove_all(const struct gdb_target *target);
/* Forgets the table without calling the machine (host tests, whose fake machine was reset under it). */
void gdb_break_reset(void);

/* Whether addr lies in the debugger's own code, where no breakpoint goes. */
bool gdb_break_in_debugger(const struct gdb_target *target, uint64_t addr);
/* Whether gdb has a breakpoint of this type at addr (a suspended one included). */
bool gdb_break_at(enum gdb_break_type type, uint64_t addr);
/* What debug-register slot `slot` (0 .. target->hw_break_slots - 1) holds, or false when it is free. */
bool gdb_break_hw_slot(unsigned slot, struct gdb_hw_slot *out);

/* The watchpoint whose match stopped the machine, as the stop reply reports it: noted by the stop/resume
 * state machine for the session it starts (one session at a time), read by the stop reply. */
void gdb_break_note_watch_hit(const struct gdb_hw_slot *hit);
bool gdb_break_watch_hit(struct gdb_hw_slot *out);

/* The debugger's own code (a parked CPU's mailbox work, the stub) ran into the software breakpoint at
 * addr: its original byte goes back until gdb_break_rearm, so that the debugger can run on. */
void gdb_break_suspend(const struct gdb_target *target, uint64_t addr);
/* As the machine resumes: every suspended breakpoint is planted again. */
void gdb_break_rearm(const struct gdb_target *target);

/* Memory as gdb must see it: the bytes of [addr, addr + len) that buf holds as read from the machine,
 * with each planted breakpoint's instruction replaced by the byte it stands for. */
void gdb_break_hide(uint64_t addr, void *buf, size_t len);
/* After gdb wrote [addr, addr + len) -- over any planted breakpoint there -- the breakpoints in it are
 * planted again over the new bytes, which become the bytes they stand for. */
void gdb_break_written(const struct gdb_target *target, uint64_t addr, size_t len);

#endif
