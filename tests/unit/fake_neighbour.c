/* tests/unit/fake_neighbour.c: the host tests' instant ARP neighbour (tests/unit/fake_neighbour.h). */
#include <string.h>

#include "tests/unit/fake_neighbour.h"

#define ARP_FRAME 60

bool fake_neighbour_answers(const uint8_t *frame, size_t len, const uint8_t mac[6],
                            void (*deliver)(const uint8_t *frame, size_t len))
{
    if (len < 42 || frame[12] != 0x08 || frame[13] != 0x06 || frame[14 + 6] != 0 || frame[14 + 7] != 1)
        return false;
    const uint8_t *q = frame + 14;
    uint8_t answer[ARP_FRAME] = { 0 };
    memcpy(answer, q + 8, 6);          /* to the asker */
    memcpy(answer + 6, mac, 6);
    answer[12] = 0x08, answer[13] = 0x06;
    uint8_t *a = answer + 14;
    memcpy(a, q, 6);                   /* hardware and protocol types and lengths, as asked */
    a[6] = 0, a[7] = 2;
    memcpy(a + 8, mac, 6);
    memcpy(a + 14, q + 24, 4);         /* the address asked about is ours */
    memcpy(a + 18, q + 8, 10);         /* the asker's hardware and protocol addresses */
    deliver(answer, sizeof answer);
    return true;
}

bool fake_admit_any(void *arg, uint32_t src)
{
    (void)arg;
    (void)src;
    return true;
}
