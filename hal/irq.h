/* hal/irq.h: device interrupts as the portable kernel sees them -- attach a handler to an ISA IRQ or a global
 * system interrupt; the architecture picks a vector and routes it (IOAPIC here). Handlers run with interrupts
 * off on the CPU the line is routed to: no locks, no allocation, no printing. */
#ifndef HAL_IRQ_H
#define HAL_IRQ_H

#include <stdbool.h>

typedef void (*irq_handler_fn)(void *arg);

/* ISA IRQ 0..15 (the MADT's overrides are applied). Returns false when no vector is free. */
bool irq_attach_isa(unsigned isa_irq, irq_handler_fn handler, void *arg);
/* A PCI-style line: level-triggered, active low, on this global system interrupt. */
bool irq_attach_gsi_level(unsigned gsi, irq_handler_fn handler, void *arg);

#endif
