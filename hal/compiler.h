/* hal/compiler.h: compiler idioms the portable kernel needs and C cannot say. Not instructions: each expands
 * to nothing in the generated code; it takes away what the optimiser may assume, or says where the linker
 * puts a function. */
#ifndef HAL_COMPILER_H
#define HAL_COMPILER_H

/* The optimiser forgets what it knew of lvalue x's value (it may have changed here), so a computation through
 * x cannot be folded, merged with its neighbours or moved past this point. For code whose shape is the point,
 * such as the known call chain `burn` gives the profiler. Emits no instruction. */
#define OPTIMIZER_HIDE_VALUE(x) __asm__ volatile("" : "+r"(x))

/* The debugger's own code: a function the gdb stub runs while the machine is stopped, or that a CPU runs on
 * its way into the debugger (a trap, an NMI), in a file most of which is not. The linker keeps it with the
 * debugger's whole files (arch/x86_64/linker.ld, between __debugger_text_start and __debugger_text_end), and
 * gdb may plant no breakpoint there: one would fire inside the debugger that has to handle it. */
#ifdef KPROF_HOST
#define DEBUGGER_TEXT
#else
#define DEBUGGER_TEXT __attribute__((section(".text.debugger")))
#endif

/* The NMI path: a function the counter's NMI runs (its claim, its sample), in a file most of which is not. The
 * linker puts it with the debugger's own code (arch/x86_64/linker.ld), where gdb plants no breakpoint: the #BP
 * it would take inside the NMI handler returns with IRET, which ends the CPU's blocking of NMIs while the
 * handler's frame is still live on its stack. */
#ifdef KPROF_HOST
#define NMI_TEXT
#else
#define NMI_TEXT __attribute__((section(".text.nmi")))
#endif

#endif
