/* tests/bench/bench_hw.c: the hardware a benchmarked call touched, as the fakes count it (tests/bench/bench_hw.h). */
#include "tests/bench/bench_hw.h"

#include <stdio.h>

#include "fake_cpu.h"
#include "fake_hal.h"

/* The LAPIC timer's current count, which the tick read for its lateness before 415dec8 (an MMIO read on the
 * machine, a VM exit under a hypervisor): counted. Weak, so an older tree's kernel, whose hal/cpu.h still
 * declares it, links this one; today's kernel does not call it. */
static unsigned long mmio_reads;
__attribute__((weak)) int64_t tick_lateness_ns(void)
{
    mmio_reads++;
    return 0;
}

struct hw hw_now(void)
{
    struct hw h = { fake_clock_reads, mmio_reads, fake.msr_accesses - fake.msr_writes, fake.msr_writes,
                    fake.lvt_writes };
    return h;
}

void hw_add_since(struct hw *sum, struct hw before)
{
    struct hw now = hw_now();
    sum->clock += now.clock - before.clock;
    sum->mmio += now.mmio - before.mmio;
    sum->msr_reads += now.msr_reads - before.msr_reads;
    sum->msr_writes += now.msr_writes - before.msr_writes;
    sum->lvt += now.lvt - before.lvt;
}

void print_hw(unsigned long calls, const struct hw *sum)
{
    printf("calls %lu\n", calls);
    printf("hw %lu %lu %lu %lu %lu\n", sum->clock, sum->mmio, sum->msr_reads, sum->msr_writes, sum->lvt);
}
