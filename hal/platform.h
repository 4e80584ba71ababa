/* hal/platform.h: machine-wide services the portable kernel asks of the architecture -- stopping the other
 * CPUs, powering off, the identity of each CPU, the console hardware and the boot information. */
#ifndef HAL_PLATFORM_H
#define HAL_PLATFORM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Stops every other CPU with an NMI; they halt for good. Safe from any context, once. */
void platform_stop_other_cpus(void);
/* Halts this CPU for good, interrupts off. */
__attribute__((noreturn)) void platform_halt_forever(void);
/* The bounds of the interrupt stack (NMI, double fault, machine check) that contains sp; false if none. */
bool platform_interrupt_stack_bounds(uintptr_t sp, uintptr_t *lo, uintptr_t *hi);
/* The NMI self-test, on this CPU: an NMI whose handler sends a second NMI and then takes an exception the fixup
 * table answers; passes when the second waited for the first handler's return (no nesting). One line. */
const char *platform_nmi_selftest(void);
/* ACPI S5. Returns only when it failed, with the reason. */
const char *platform_poweroff(void);

/* The hardware id of CPU index i (APIC id on x86) and whether it is online. */
uint32_t cpu_hw_id(unsigned index);
bool cpu_online(unsigned index);

/* Console hardware: every output device (COM1, and VGA text or a framebuffer text console). Takes no lock:
 * the console layer serialises. */
void console_hw_write(const char *text, size_t len);
/* Bytes the console hardware takes now without its writer waiting (COM1's transmit ring), and a count that
 * grows as it sends: where the line is slow, the console layer waits for room beforehand, as a task with
 * interrupts on, not in console_hw_write under its lock. */
size_t console_hw_room(void);
uint64_t console_hw_sent(void);
/* Sends everything queued before returning: a panic, the other CPUs stopped. */
void console_hw_flush_panic(void);

/* Total usable RAM found in the memory map, in bytes. */
uint64_t platform_ram_bytes(void);
/* How the machine was booted, one line for the boot log and lscpu: firmware (BIOS or UEFI), boot loader,
 * and which console devices are in use (e.g. "BIOS, GRUB 2.06-13+deb12u2, console serial + VGA text"). */
const char *platform_boot_summary(void);
/* The kernel command line GRUB passed ("" when none). */
const char *platform_cmdline(void);

/* Console input arrives through console_input_char() (hal/kernel_entry.h). The console layer calls this after
 * it consumed input: a driver that paused because the ring was full resumes (arch/x86_64/serial.c), so pasted
 * text is held back by the UART, never lost. */
void console_input_resume(void);

#endif
