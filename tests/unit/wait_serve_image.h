/* tests/unit/wait_serve_image.h: the small image the tests of the goroutine and block profiles
 * (tests/unit/test_goroutine.c, tests/unit/test_block_profile.c) lay their chains over -- Wait at 0x1000, Serve at
 * 0x1100 (which calls Wait), Loop at 0x1200, each 0x100 long, in text [0x1000, 0x2000). Each includer has its own
 * copy. */
#ifndef TESTS_UNIT_WAIT_SERVE_IMAGE_H
#define TESTS_UNIT_WAIT_SERVE_IMAGE_H

#include "kernel/symbols.h"

#define WAIT 0x1000
#define SERVE 0x1100
#define LOOP 0x1200
static const struct ksym syms[] = { { WAIT, 0x100, 0 }, { SERVE, 0x100, 5 }, { LOOP, 0x100, 11 } };
static const char names[] = "Wait\0Serve\0Loop";
static const struct symtab tab = { syms, 3, names, 0x1000, 0x2000 };

#endif
