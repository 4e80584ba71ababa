/* tests/bench/bench_image.c: the benchmarks' text and symbols (tests/bench/bench_image.h). */
#include "tests/bench/bench_image.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* n functions of sym_bytes each into text (n * sym_bytes bytes), their symbols into syms (n) and their names into
 * names (n * 8 bytes). */
static void fill(unsigned char *text, struct ksym *syms, char *names, unsigned n, unsigned sym_bytes)
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

void bench_image_build(struct bench_image *img, unsigned n, unsigned sym_bytes)
{
    size_t len = (size_t)n * sym_bytes;
    img->text = malloc(len);
    img->syms = calloc(n, sizeof *img->syms);
    img->names = malloc((size_t)n * 8);
    if (!img->text || !img->syms || !img->names) {
        fprintf(stderr, "bench_image: no memory for %u functions\n", n);
        exit(1);
    }
    img->n = n;
    img->sym_bytes = sym_bytes;
    fill(img->text, img->syms, img->names, n, sym_bytes);
    img->tab = (struct symtab){ img->syms, n, img->names, (uintptr_t)img->text, (uintptr_t)img->text + len };
}
