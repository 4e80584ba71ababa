/* tests/bench/bench_hw.h: the hardware a benchmarked call touched, as the fakes count it -- clock reads (RDTSC),
 * MMIO reads (the LAPIC timer's count, which the tick read before 415dec8), MSR reads and writes and LVT writes
 * (tests/unit/fake_cpu.c) -- for tests/bench/sample_cost.c's "hw" lines. */
#ifndef TESTS_BENCH_BENCH_HW_H
#define TESTS_BENCH_BENCH_HW_H

struct hw {
    unsigned long clock, mmio, msr_reads, msr_writes, lvt;
};

/* The counts now. */
struct hw hw_now(void);
/* Adds to *sum what was touched since before. */
void hw_add_since(struct hw *sum, struct hw before);
/* "calls N" and "hw CLOCK MMIO MSR_READS MSR_WRITES LVT", what sample_cost.sh reads. */
void print_hw(unsigned long calls, const struct hw *sum);

#endif
