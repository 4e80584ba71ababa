/* tests/fuzz/fuzz.h: what every fuzz target shares -- the libFuzzer entry point's prototype and CHECK, an
 * invariant that aborts with its text and place (libFuzzer then saves the input that broke it). */
#ifndef TESTS_FUZZ_FUZZ_H
#define TESTS_FUZZ_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                                             \
    do {                                                                                        \
        if (!(cond)) {                                                                          \
            fprintf(stderr, "%s:%d: invariant broken: %s\n", __FILE__, __LINE__, #cond);        \
            abort();                                                                            \
        }                                                                                       \
    } while (0)

#endif
