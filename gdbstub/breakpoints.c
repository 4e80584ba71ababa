/* gdbstub/breakpoints.c: the breakpoint table (gdbstub/breakpoints.h). Changed only during a session, on
 * the CPU that runs it, with every other CPU stopped; read by any CPU that traps, which is why an entry's
 * `used` is set last on insert and cleared first on remove. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gdbstub/breakpoints.h"
#include "kernel/lib/string.h"

struct breakpoint {
    bool used;
    enum gdb_break_type type;
    uint64_t addr;
    uint8_t saved;      /* software: the byte the breakpoint instruction replaced */
    bool suspended;     /* software: the original byte is back until the machine resumes */
    unsigned slot;      /* hardware and watchpoints: the debug register */
    unsigned len;       /* watchpoints: 1, 2, 4 or 8 */
};

static bool uses_slot(enum gdb_break_type type) { return type != GDB_BREAK_SW; }
static bool is_watch(enum gdb_break_type type) { return type == GDB_WATCH_WRITE || type == GDB_WATCH_ACCESS; }

static struct gdb_hw_slot watch_hit;
static bool watch_hit_noted;

static struct breakpoint table[GDB_MAX_BREAKPOINTS];

static struct breakpoint *find(enum gdb_break_type type, uint64_t addr)
{
    for (size_t i = 0; i < GDB_MAX_BREAKPOINTS; i++)
        if (table[i].used && table[i].type == type && table[i].addr == addr)
            return &table[i];
    return NULL;
}

/* The lowest debug-register slot no hardware breakpoint or watchpoint holds, or `slots` when all are taken. */
static unsigned free_hw_slot(unsigned slots)
{
    for (unsigned slot = 0; slot < slots; slot++) {
        bool taken = false;
        for (size_t i = 0; i < GDB_MAX_BREAKPOINTS && !taken; i++)
            taken = table[i].used && uses_slot(table[i].type) && table[i].slot == slot;
        if (!taken)
            return slot;
    }
    return slots;
}

bool gdb_break_in_debugger(const struct gdb_target *target, uint64_t addr)
{
    uint64_t start, end;
    target->debugger_code(&start, &end);
    return addr >= start && addr < end;
}

/* A debug register watches 1, 2, 4 or 8 bytes at an address aligned to their number. */
static bool watch_shape_ok(uint64_t addr, uint64_t len)
{
    return (len == 1 || len == 2 || len == 4 || len == 8) && (addr & (len - 1)) == 0;
}

enum gdb_break_result gdb_break_insert(const struct gdb_target *target, enum gdb_break_type type,
                                       uint64_t addr, uint64_t len)
{
    if (is_watch(type)) {
        if (!watch_shape_ok(addr, len))
            return GDB_BREAK_REFUSED;
        if (gdb_break_in_debugger(target, addr) || (target->debugger_data && target->debugger_data(addr, len)))
            return GDB_BREAK_DEBUGGER;
    } else {
        len = 1;
        if (gdb_break_in_debugger(target, addr))
            return GDB_BREAK_DEBUGGER;
    }
    struct breakpoint *found = find(type, addr);
    if (found != NULL && found->len == len)
        return GDB_BREAK_OK;
    if (found != NULL)
        return GDB_BREAK_FULL; /* the same address watched over another length: gdb removes before it changes */
    struct breakpoint *bp = NULL;
    for (size_t i = 0; i < GDB_MAX_BREAKPOINTS && bp == NULL; i++)
        if (!table[i].used)
            bp = &table[i];
    if (bp == NULL)
        return GDB_BREAK_FULL;
    struct breakpoint b = { .type = type, .addr = addr, .len = (unsigned)len };
    if (type == GDB_BREAK_SW) {
        if (!target->sw_break_plant(addr, &b.saved))
            return GDB_BREAK_REFUSED;
    } else {
        b.slot = free_hw_slot(target->hw_break_slots);
        if (b.slot == target->hw_break_slots || !target->hw_break_valid(addr))
            return GDB_BREAK_FULL;
    }
    *bp = b;
    bp->used = true;
    return GDB_BREAK_OK;
}

static bool remove_one(const struct gdb_target *target, struct breakpoint *bp)
{
    if (bp->type == GDB_BREAK_SW && !bp->suspended && !target->sw_break_unplant(bp->addr, bp->saved))
        return false;
    bp->used = false;
    return true;
}

bool gdb_break_remove(const struct gdb_target *target, enum gdb_break_type type, uint64_t addr)
{
    struct breakpoint *bp = find(type, addr);
    return bp == NULL || remove_one(target, bp);
}

void gdb_break_remove_all(const struct gdb_target *target)
{
    for (size_t i = 0; i < GDB_MAX_BREAKPOINTS; i++) {
        if (table[i].used)
            remove_one(target, &table[i]);
        table[i].used = false;
    }
}

void gdb_break_reset(void)
{
    memset(table, 0, sizeof table);
    watch_hit_noted = false;
}

bool gdb_break_at(enum gdb_break_type type, uint64_t addr)
{
    return find(type, addr) != NULL;
}

bool gdb_break_hw_slot(unsigned slot, struct gdb_hw_slot *out)
{
    for (size_t i = 0; i < GDB_MAX_BREAKPOINTS; i++) {
        if (table[i].used && uses_slot(table[i].type) && table[i].slot == slot) {
            *out = (struct gdb_hw_slot){ .type = table[i].type, .addr = table[i].addr, .len = table[i].len };
            return true;
        }
    }
    return false;
}

void gdb_break_note_watch_hit(const struct gdb_hw_slot *hit)
{
    watch_hit_noted = hit != NULL;
    if (hit)
        watch_hit = *hit;
}

bool gdb_break_watch_hit(struct gdb_hw_slot *out)
{
    if (watch_hit_noted)
        *out = watch_hit;
    return watch_hit_noted;
}

void gdb_break_suspend(const struct gdb_target *target, uint64_t addr)
{
    struct breakpoint *bp = find(GDB_BREAK_SW, addr);
    if (bp != NULL && !bp->suspended && target->sw_break_unplant(addr, bp->saved))
        bp->suspended = true;
}

void gdb_break_rearm(const struct gdb_target *target)
{
    /* Planting reads the byte afresh: it is the original, or what gdb wrote there meanwhile. */
    for (size_t i = 0; i < GDB_MAX_BREAKPOINTS; i++) {
        struct breakpoint *bp = &table[i];
        if (bp->used && bp->type == GDB_BREAK_SW && bp->suspended && target->sw_break_plant(bp->addr, &bp->saved))
            bp->suspended = false;
    }
}

/* Whether addr lies in [start, start + len). */
static bool within(uint64_t addr, uint64_t start, size_t len)
{
    return addr >= start && addr - start < len;
}

void gdb_break_hide(uint64_t addr, void *buf, size_t len)
{
    uint8_t *bytes = buf;
    for (size_t i = 0; i < GDB_MAX_BREAKPOINTS; i++) {
        const struct breakpoint *bp = &table[i];
        if (bp->used && bp->type == GDB_BREAK_SW && !bp->suspended && within(bp->addr, addr, len))
            bytes[bp->addr - addr] = bp->saved;
    }
}

void gdb_break_written(const struct gdb_target *target, uint64_t addr, size_t len)
{
    for (size_t i = 0; i < GDB_MAX_BREAKPOINTS; i++) {
        struct breakpoint *bp = &table[i];
        if (!bp->used || bp->type != GDB_BREAK_SW || bp->suspended || !within(bp->addr, addr, len))
            continue;
        /* The write replaced the breakpoint instruction; a page that no longer takes one loses it. */
        if (!target->sw_break_plant(bp->addr, &bp->saved))
            bp->used = false;
    }
}
