/* hal/compiler.h: compiler idioms the portable kernel needs and C cannot say. Not instructions: each expands
 * to nothing in the generated code, it only takes away what the optimiser may assume. */
#ifndef HAL_COMPILER_H
#define HAL_COMPILER_H

/* The optimiser forgets what it knew of lvalue x's value (it may have changed here), so a computation through
 * x cannot be folded, merged with its neighbours or moved past this point. For code whose shape is the point,
 * such as the known call chain `burn` gives the profiler. Emits no instruction. */
#define OPTIMIZER_HIDE_VALUE(x) __asm__ volatile("" : "+r"(x))

#endif
