/* hal/boot.h: the boot steps kernel/main.c takes in order, each implemented by the architecture. */
#ifndef HAL_BOOT_H
#define HAL_BOOT_H

#include <stddef.h>
#include <stdint.h>

/* This CPU's descriptor tables and per-CPU data, the console UART, the boot loader's information. */
void arch_early_init(uintptr_t boot_info);
/* The largest usable RAM range above the kernel image, for the heap. */
void arch_heap_range(uintptr_t *base, size_t *size);
/* Firmware tables, interrupt controllers, the calibrated clock. */
void arch_platform_init(void);
/* Brings up the other CPUs; each ends in its idle loop with its tick running. */
void arch_start_cpus(void);
/* Console inputs (serial and keyboard interrupts), the display. */
void arch_console_init(void);
/* This CPU's tick. */
void arch_start_tick(void);

#endif
