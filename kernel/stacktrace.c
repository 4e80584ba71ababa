/* kernel/stacktrace.c: return addresses from the frame-pointer chain, and the call chain of an interrupted
 * context (stack_trace_from), which also recovers the direct caller when the interrupt hit a function's
 * prologue or its ret. Owns no state: callable from any context, including NMI. Every read is checked against
 * the bounds the caller gave, because the stack being walked may be corrupt. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel/stacktrace.h"

#define OPCODE_PUSH_RBP 0x55
#define OPCODE_RET 0xc3
/* mov %rsp,%rbp: REX.W 89 /r with ModRM 0xe5. */
static const uint8_t MOV_RSP_RBP[3] = { 0x48, 0x89, 0xe5 };

/* x86_64 canonical addresses have bits 63..47 all equal; anything else would fault on dereference. */
static bool canonical(uintptr_t addr)
{
    uintptr_t top = addr >> 47;
    return top == 0 || top == (UINTPTR_MAX >> 47);
}

/* A frame is two words, [saved rbp][return address], wholly inside the stack. */
static bool frame_readable(uintptr_t frame, const struct stack_bounds *stack)
{
    return frame % 8 == 0 && canonical(frame) && stack->hi >= 16 && frame >= stack->lo &&
           frame <= stack->hi - 16;
}

/* One word at slot, wholly inside the stack. */
static bool slot_readable(uintptr_t slot, const struct stack_bounds *stack)
{
    return slot % 8 == 0 && canonical(slot) && stack->hi >= 8 && slot >= stack->lo && slot <= stack->hi - 8;
}

int stack_walk(uintptr_t rbp, const struct stack_bounds *stack, uintptr_t *out, int max)
{
    int count = 0;
    uintptr_t frame = rbp;
    while (count < max && frame_readable(frame, stack)) {
        const uintptr_t *words = (const uintptr_t *)frame;
        uintptr_t return_address = words[1];
        if (return_address == 0) /* the bottom frame of a task or of the boot stack */
            break;
        out[count++] = return_address;
        uintptr_t caller_frame = words[0];
        /* Stacks grow down, so callers' frames lie strictly higher; anything else is a loop or garbage. */
        if (caller_frame <= frame)
            break;
        frame = caller_frame;
    }
    return count;
}

/* The stack slot holding the interrupted function's return address when pc sits where the function's own
 * frame is not linked into the chain: on the push %rbp (not yet pushed: [sp]), on the mov %rsp,%rbp right
 * after it (rbp pushed: [sp+8]), or on the ret (frame already popped: [sp]). Zero when pc is anywhere else. */
static uintptr_t unlinked_return_slot(uintptr_t pc, uintptr_t sp, const struct text_bounds *text)
{
    if (text == NULL || pc < text->lo || pc >= text->hi)
        return 0; /* never read instruction bytes outside text */
    const uint8_t *code = (const uint8_t *)pc;
    if (code[0] == OPCODE_PUSH_RBP || code[0] == OPCODE_RET)
        return sp;
    if (text->hi - pc >= sizeof MOV_RSP_RBP && code[0] == MOV_RSP_RBP[0] && code[1] == MOV_RSP_RBP[1] &&
        code[2] == MOV_RSP_RBP[2])
        return sp + 8;
    return 0;
}

int stack_trace_from(uintptr_t pc, uintptr_t sp, uintptr_t rbp, const struct stack_bounds *stack,
                     const struct text_bounds *text, uintptr_t *out, int max)
{
    if (max <= 0)
        return 0;
    int count = 0;
    out[count++] = pc;
    if (count == max)
        return count;

    /* In all three recognised spots rbp still holds the caller's frame, so walking from it yields the
     * caller's caller onwards: the direct caller has to come from the stack pointer. */
    uintptr_t slot = unlinked_return_slot(pc, sp, text);
    if (slot != 0 && slot_readable(sp, stack) && slot_readable(slot, stack)) {
        uintptr_t caller = *(const uintptr_t *)slot;
        if (caller != 0)
            out[count++] = caller;
    }

    return count + stack_walk(rbp, stack, out + count, max - count);
}
