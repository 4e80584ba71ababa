/* tests/bench/bench_image.c: the benchmarks' text and symbols (tests/bench/bench_image.h). */
#include "tests/bench/bench_image.h"

#include <stdio.h>
#include <string.h>

void bench_image_fill(unsigned char *text, struct ksym *syms, char *names, unsigned n, unsigned sym_bytes)
{
    size_t at = 0;
    for (unsigned i = 0; i < n; i++) {
        unsigned char *fn = &text[i * sym_bytes];
        memset(fn, 0x90, sym_bytes);               /* nops */
        fn[0] = 0x55;                              /* push %rbp */
        fn[1] = 0x48, fn[2] = 0x89, fn[3] = 0xe5;  /* mov %rsp,%rbp */
        fn[sym_bytes - 1] = 0xc3;                  /* ret */
        syms[i].addr = (uintptr_t)fn;
        syms[i].size = sym_bytes;
        syms[i].name_offset = (uint32_t)at;
        at += (size_t)sprintf(&names[at], "f%u", i) + 1;
    }
}
