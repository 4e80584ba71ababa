/* arch/x86_64/fixup.h: instructions allowed to fault. Code that may fault on purpose (an RDMSR of an MSR
 * that might not exist) records its instruction's address and a landing address in the __ex_table section,
 * with EX_TABLE_ENTRY in its inline assembly; the #GP/#PF handler asks exception_fixup() before panicking. */
#ifndef ARCH_X86_64_FIXUP_H
#define ARCH_X86_64_FIXUP_H

#include <stdbool.h>
#include <stdint.h>

struct context;

/* One entry: a faulting instruction's address and where execution resumes instead. The landing code tells
 * its caller that the fault happened (msr.c: the landing skips the instruction that clears the error
 * flag), so the handler needs to know nothing about registers. */
struct ex_entry {
    uint64_t insn;
    uint64_t landing;
};

/* Inline-assembly text adding one entry {insn_label, landing_label} (local labels such as 1b, 2b). */
#define EX_TABLE_ENTRY(insn, landing)          \
    ".pushsection __ex_table, \"a\"\n\t"       \
    ".balign 8\n\t"                            \
    ".quad " insn ", " landing "\n\t"          \
    ".popsection\n\t"

/* For #GP and #PF in kernel mode: when ctx->rip is a registered instruction, moves ctx->rip to its landing
 * address and returns true (the fault is handled, resume ctx); false otherwise. */
bool exception_fixup(struct context *ctx);

#endif
