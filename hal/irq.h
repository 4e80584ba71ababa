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
/* The function's own vector, delivered by a Message Signalled Interrupt (one message, edge, to the boot CPU)
 * through its MSI capability, or failing that entry 0 of its MSI-X table: no interrupt line, so no sharing
 * and no firmware routing needed. The vector, with *kind "MSI" or "MSI-X" (for the log); or 0 with *kind
 * saying why not -- the function has neither capability, the boot CPU cannot be named in a message, no vector
 * is left, the MSI-X table cannot be reached -- and the driver takes its INTx path. Call it after pci_enable,
 * which would turn INTx back on, and before the device runs. Task context. */
unsigned irq_attach_msi(const struct pci_device *dev, irq_handler_fn handler, void *arg, const char **kind);

#endif
