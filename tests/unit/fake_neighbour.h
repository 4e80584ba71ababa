/* tests/unit/fake_neighbour.h: a neighbour for the host tests of the gdb UDP transport -- answers the ARP
 * question a transport sends at once (as the peer would, a moment later), so that tests about other things
 * find the peer's MAC known; tests about resolution itself leave it out. And the admission a test's own
 * netpoll, playing the peer, reassembles under: anyone. */
#ifndef TESTS_UNIT_FAKE_NEIGHBOUR_H
#define TESTS_UNIT_FAKE_NEIGHBOUR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* When frame is an ARP request, hands deliver the answer from mac for the address asked about, and returns
 * true; false (nothing done) for any other frame. */
bool fake_neighbour_answers(const uint8_t *frame, size_t len, const uint8_t mac[6],
                            void (*deliver)(const uint8_t *frame, size_t len));

/* A netpoll_admit_fn that admits every source. */
bool fake_admit_any(void *arg, uint32_t src);

#endif
