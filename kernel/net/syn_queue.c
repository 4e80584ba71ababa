/* kernel/net/syn_queue.c: the choice of the half-open connection a SYN to a full listener evicts
 * (kernel/net/syn_queue.h). */
#include "kernel/net/syn_queue.h"

int syn_queue_victim(const struct syn_queue_pcb *pcbs, size_t n, unsigned pending, unsigned backlog, bool pool_full)
{
    if (pending < backlog && !pool_full)
        return -1;
    int victim = -1;
    for (size_t i = 0; i < n; i++)
        if (pcbs[i].half_open && (victim < 0 || pcbs[i].quiet_ticks >= pcbs[victim].quiet_ticks))
            victim = (int)i;
    return victim;
}
