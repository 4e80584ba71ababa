/* tests/bench/bench_image.h: a kernel's worth of text and symbols for the benchmarks' frame walks -- function
 * bodies the walk can read (push %rbp; mov %rsp,%rbp; nops; ret) and a symbol for each, named f0, f1, ... */
#ifndef TESTS_BENCH_BENCH_IMAGE_H
#define TESTS_BENCH_BENCH_IMAGE_H

#include "kernel/symbols.h"

/* Fills n functions of sym_bytes each into text (n * sym_bytes bytes), their symbols into syms (n) and their
 * names into names (n * 8 bytes). */
void bench_image_fill(unsigned char *text, struct ksym *syms, char *names, unsigned n, unsigned sym_bytes);

#endif
