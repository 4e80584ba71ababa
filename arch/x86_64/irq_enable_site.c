/* arch/x86_64/irq_enable_site.c: where an interrupt held off by code running with interrupts disabled is let
 * in. A tick that arrives while IF is clear waits in the LAPIC and is taken at the first instruction boundary
 * after IF is set again: right after a POPF that restored it, or one instruction after an STI (STI delays
 * interrupts by one instruction, its shadow). So the bytes just before the interrupted rip say whether this
 * tick was let in by code re-enabling interrupts -- the trace interrupts-off code leaves on the tick, which
 * cannot sample it -- or simply came late (the CPU was taken away). Pure: host tests feed it bytes. */
#include "hal/context.h"

#define OP_POPF 0x9D
#define OP_STI 0xFB
#define OP_NOP 0x90

const char *irq_enable_before(uintptr_t pc)
{
    const uint8_t *p = (const uint8_t *)pc;
    if (p[-1] == OP_POPF)
        return "popf";
    /* sti, then the nop that fills its one-instruction shadow (arch/x86_64/x86.h). Not "sti; hlt": a tick that
     * wakes the idle loop late found the CPU idle, not holding interrupts off. */
    if (p[-2] == OP_STI && p[-1] == OP_NOP)
        return "sti";
    return 0;
}
