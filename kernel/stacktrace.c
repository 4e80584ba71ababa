/* kernel/stacktrace.c: return addresses from the frame-pointer chain, and the call chain of an interrupted
 * context (stack_trace_from), which also recovers the direct caller when the interrupt hit a function's
 * prologue or its ret. Owns no state: callable from any context, including NMI. Every read is checked against
 * the bounds the caller gave, because the stack being walked may be corrupt.
 *
 * stack_trace_from is most of the profiler's cost per sample (tests/bench/sample_cost.sh), so what holds for
 * a whole chain is checked once, before the walk, and the rare cases are kept out of line. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel/stacktrace.h"

/* x86_64 canonical addresses have bits 63..47 all equal: the low half ends at 2^47, the high half starts at
 * 2^64 - 2^47. Anything in between would fault on dereference. */
#define CANONICAL_LOW_END ((uintptr_t)1 << 47)
#define CANONICAL_HIGH_START ((uintptr_t)0 - CANONICAL_LOW_END)

static inline bool canonical(uintptr_t addr)
{
    return addr < CANONICAL_LOW_END || addr >= CANONICAL_HIGH_START;
}

/* x >> 3 for a multiple of 8; for anything else a value >= 2^61, with a low bit rotated to the top. */
static inline uintptr_t rotate_right_3(uintptr_t x)
{
    return x >> 3 | x << 61;
}

/* The walk. A frame is two words, [saved rbp][return address], wholly inside the stack.
 *
 * Only the first frame is checked in full: 8-aligned, canonical, inside [lo, hi). Every later frame must lie
 * strictly above the one before, so it can fall neither below lo nor into non-canonical space from below; and
 * as the canonical low half ends at 2^47 while the high half runs to the top of the address space, the only
 * way out of canonical space is up past 2^47 -- so for a chain in the low half the upper limit is clamped
 * there, once. What is left to check per frame is one range and the alignment: see below. */
static inline __attribute__((always_inline)) int walk_frames(uintptr_t frame, const struct stack_bounds *stack,
                                                             uintptr_t *out, int max)
{
    uintptr_t top = stack->hi;
    if (frame < CANONICAL_LOW_END) {
        if (top > CANONICAL_LOW_END)
            top = CANONICAL_LOW_END;
    } else if (frame < CANONICAL_HIGH_START) {
        return 0;
    }
    if (max <= 0 || frame % 8 != 0 || frame < stack->lo || top < 16 || frame > top - 16)
        return 0;
    /* The highest address a whole frame may start at, rounded down to 8 so that the distances below are
     * multiples of 8 exactly when the frame pointer is aligned. */
    const uintptr_t last = (top - 16) & ~(uintptr_t)7;

    /* A caller's frame is acceptable when it is 8-aligned and in (frame, last]. Measured as a distance down
     * from last, in words, that is: below = (last - caller) / 8 is less than room = (last - frame) / 8. One
     * unsigned compare does it all: a caller above last makes last - caller wrap to a huge value, one at or
     * below frame gives below >= room, and a misaligned one has a low bit rotated to the top. */
    uintptr_t room = (last - frame) >> 3;
    int count = 0;
    for (;;) {
        const uintptr_t *words = (const uintptr_t *)frame;
        uintptr_t return_address = words[1];
        if (return_address == 0) /* the bottom frame of a task or of the boot stack */
            break;
        out[count++] = return_address;
        if (count == max)
            break; /* the caller's frame is not even read */
        uintptr_t caller_frame = words[0];
        uintptr_t below = rotate_right_3(last - caller_frame);
        if (below >= room) /* stacks grow down: anything not strictly higher is a loop or garbage */
            break;
        room = below;
        frame = caller_frame;
    }
    return count;
}

int stack_walk(uintptr_t rbp, const struct stack_bounds *stack, uintptr_t *out, int max)
{
    return walk_frames(rbp, stack, out, max);
}

/* One word at slot, wholly inside the stack. */
static bool slot_readable(uintptr_t slot, const struct stack_bounds *stack)
{
    return slot % 8 == 0 && canonical(slot) && stack->hi >= 8 && slot >= stack->lo && slot <= stack->hi - 8;
}

/* What the byte at pc says about the interrupted function's frame. A table rather than a chain of compares:
 * nearly every sample lands on some other byte, and one load rules those out. */
enum first_byte {
    FRAME_LINKED = 0, /* any other byte: the frame (if the function has one) is on the chain */
    CALLER_AT_SP,     /* push %rbp (not yet pushed) or ret (frame already popped): return address at [sp] */
    MAYBE_MOV,        /* 0x48, perhaps the REX.W of mov %rsp,%rbp (rbp pushed, not yet moved): at [sp+8] */
};
static const uint8_t first_byte_kind[256] = {
    [0x55] = CALLER_AT_SP, /* push %rbp */
    [0xc3] = CALLER_AT_SP, /* ret */
    [0x48] = MAYBE_MOV,    /* mov %rsp,%rbp is 48 89 e5 */
};

/* The trace when pc is inside text, on a byte first_byte_kind marks. In all three recognised spots rbp still
 * holds the caller's frame, so walking from it yields the caller's caller onwards: the direct caller has to
 * come from the stack pointer. Out of line and finishing the trace itself, so that the common path makes no
 * call it has to keep registers across. */
static __attribute__((noinline, cold)) int trace_unlinked(uintptr_t pc, uintptr_t sp, uintptr_t rbp,
                                                          const struct stack_bounds *stack,
                                                          const struct text_bounds *text, uintptr_t *out,
                                                          int max)
{
    const uint8_t *code = (const uint8_t *)pc;
    uintptr_t slot = sp;
    bool recognised = true;
    if (first_byte_kind[code[0]] == MAYBE_MOV) {
        /* all three bytes inside text */
        recognised = text->hi - pc >= 3 && code[1] == 0x89 && code[2] == 0xe5;
        slot = sp + 8;
    }
    int count = 1; /* out[0] = pc is written */
    if (recognised && count < max && slot_readable(sp, stack) && slot_readable(slot, stack)) {
        uintptr_t caller = *(const uintptr_t *)slot;
        if (caller != 0)
            out[count++] = caller;
    }
    return count + walk_frames(rbp, stack, out + count, max - count);
}

int stack_trace_from(uintptr_t pc, uintptr_t sp, uintptr_t rbp, const struct stack_bounds *stack,
                     const struct text_bounds *text, uintptr_t *out, int max)
{
    if (max <= 0)
        return 0;
    out[0] = pc;
    /* pc's bytes are read only inside text */
    if (text != NULL && pc >= text->lo && pc < text->hi && first_byte_kind[*(const uint8_t *)pc] != FRAME_LINKED)
        return trace_unlinked(pc, sp, rbp, stack, text, out, max);
    return 1 + walk_frames(rbp, stack, out + 1, max - 1);
}
