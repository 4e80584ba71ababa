/* hal/irq.h: device interrupts as the portable kernel sees them -- attach a handler to an ISA IRQ, a global
 * system interrupt or a PCI function's MSI; the architecture picks a vector and routes it (IOAPIC here) or has
 * the device send it (MSI). Handlers run with interrupts
 * off on the CPU the line is routed to: no locks, no allocation, no printing. */
#ifndef HAL_IRQ_H
#define HAL_IRQ_H

#include <stdbool.h>

typedef void (*irq_handler_fn)(void *arg);

/* ISA IRQ 0..15 (the MADT's overrides are applied). Returns false when no vector is free. */
bool irq_attach_isa(unsigned isa_irq, irq_handler_fn handler, void *arg);
/* A PCI-style line: level-triggered, active low, on this global system interrupt. */
bool irq_attach_gsi_level(unsigned gsi, irq_handler_fn handler, void *arg);

struct pci_device;
/* The function's own vector, delivered by Message Signalled Interrupts (one message, edge, to the boot CPU):
 * no interrupt line, so no sharing and no firmware routing needed. The vector (for the log), or 0 with *why
 * when the function has no MSI capability, the boot CPU cannot be named in a message or no vector is left; the
 * driver then takes its INTx path. Call it after pci_enable, which would turn INTx back on. Task context. */
unsigned irq_attach_msi(const struct pci_device *dev, irq_handler_fn handler, void *arg, const char **why);

#endif
