/* arch/x86_64/fixup.c: the exception-fixup lookup. The linker gathers every EX_TABLE_ENTRY into the __ex_table
 * section, bracketed by __start___ex_table and __stop___ex_table; a fault at one of those instructions resumes
 * at its landing address instead of panicking. The table is a handful of entries, so a linear search is
 * both the simplest and fast enough for a path that runs only when something faulted. */
#include "arch/x86_64/fixup.h"

#include "arch/x86_64/context.h"

extern const struct ex_entry __start___ex_table[];
extern const struct ex_entry __stop___ex_table[];

bool exception_fixup(struct context *ctx)
{
    /* Only faults: they report the address of the instruction that did not complete, which is what the
     * table holds. (A trap would report the next instruction.) */
    if (ctx->vector != 13 && ctx->vector != 14)
        return false;
    for (const struct ex_entry *e = __start___ex_table; e < __stop___ex_table; e++) {
        if (e->insn == ctx->rip) {
            ctx->rip = e->landing;
            return true;
        }
    }
    return false;
}
