/* tests/bench/bench_image.h: a kernel's worth of text and symbols for the benchmarks' frame walks -- function
 * bodies the walk can read (push %rbp; mov %rsp,%rbp; nops; ret) and a symbol for each, named f0, f1, ... */
#ifndef TESTS_BENCH_BENCH_IMAGE_H
#define TESTS_BENCH_BENCH_IMAGE_H

#include <stdint.h>

#include "kernel/symbols.h"

/* n functions of sym_bytes each: their text (n * sym_bytes bytes), their symbols and names, and the table over
 * them (tab: its text bounds are the text's). */
struct bench_image {
    unsigned char *text;
    struct ksym *syms;
    char *names;
    unsigned n, sym_bytes;
    struct symtab tab;
};

/* img made an image of n functions of sym_bytes each, in memory of its own (the program exits if there is
 * none). */
void bench_image_build(struct bench_image *img, unsigned n, unsigned sym_bytes);

/* An address inside function fn's body (fn taken modulo the image's count), offset bytes in: past the prologue,
 * as a return address or an interrupted pc is, when offset is 4 or more. */
static inline uintptr_t bench_image_code(const struct bench_image *img, unsigned fn, unsigned offset)
{
    return (uintptr_t)&img->text[(fn % img->n) * img->sym_bytes + offset];
}

#endif
