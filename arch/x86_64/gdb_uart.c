/* arch/x86_64/gdb_uart.c: COM2, the 16550 UART at 0x2F8 that carries the gdb remote protocol (QEMU:
 * `-serial tcp:127.0.0.1:PORT,server=on,wait=off` after COM1's -serial). While the machine is stopped the stub
 * polls it: getc waits on the data-ready bit for at most a TSC-measured timeout (with none, it sleeps in HLT
 * until the UART interrupts), putc on the transmit-holding-register-empty bit. While the machine runs, the
 * receive interrupt (IRQ 3) is on: a packet's '$' (a new connection's first) or Ctrl-C asks for a stop;
 * the rest stays in the FIFO for the stub, and QEMU holds back what does not fit, so nothing gdb sends is lost.
 * The debugger's set-up (gdbstub/setup.c) finds it as hal/debug.h's gdb_arch_uart; registers and line set-up:
 * arch/x86_64/uart16550.h. */
#include <stdatomic.h>

#include "arch/x86_64/arch.h"
#include "arch/x86_64/gdb.h"
#include "arch/x86_64/uart16550.h"
#include "arch/x86_64/x86.h"
#include "hal/cpu.h"
#include "hal/debug.h"
#include "hal/irq.h"

#define COM2 0x2F8
#define COM2_IRQ 3
#define GDB_CTRL_C_BYTE 0x03

/* How long putc waits for room before writing anyway: far longer than one character at 115200 baud
 * (87 us); QEMU's UART is ready at once unless its socket backs up. */
#define PUTC_WAIT_US 2000

static int presence = -1; /* -1 not probed, 0 absent, 1 present */
static bool irq_routed;
static bool rx_wakes; /* stopped: the receive interrupt only wakes the stub's CPU (wait_for_rx) */

bool gdb_uart_present(void)
{
    if (presence < 0) {
        /* Without a UART the I/O ports float and read 0xFF: the scratch register must keep two patterns. */
        outb(COM2 + UART_SCRATCH, 0x5A);
        bool a = inb(COM2 + UART_SCRATCH) == 0x5A;
        outb(COM2 + UART_SCRATCH, 0xA5);
        bool b = inb(COM2 + UART_SCRATCH) == 0xA5;
        presence = a && b && inb(COM2 + UART_LSR) != 0xFF;
    }
    return presence == 1;
}

/* The receive interrupt took a packet's '$' out of the FIFO: the stub reads it first. Set by the interrupt on
 * the CPU that took it, taken by the stub on the CPU that stopped, which may be another: atomic. (A flag, not
 * the byte: '$' is the only one kept.) */
static atomic_bool packet_start_taken;

/* The receive interrupt: only ever on while the machine runs. What gdb sends to a running machine is Ctrl-C,
 * or -- a gdb connecting -- a packet's '$': either stops the machine, the first reported as an interrupt, the
 * second as an attach, with the '$' kept for the stub. Anything else is line noise, dropped, and the machine
 * runs on -- an ack '+' too: a connecting gdb's comes just before its '$', and one on its own is lldb's for
 * the X09 that answered its `k` after the machine was let go (gdbstub/threads.c), which must not stop it
 * again for a debugger that has quit. Once a stop is requested the interrupt is off (or it would fire again
 * at once); the debugger switches it back on when the machine resumes. */
static void com2_irq(void *arg)
{
    (void)arg;
    while (inb(COM2 + UART_LSR) & UART_LSR_DATA_READY) {
        uint8_t c = inb(COM2 + UART_DATA);
        if (c == GDB_CTRL_C_BYTE || c == '$') {
            if (c == '$')
                atomic_store(&packet_start_taken, true);
            outb(COM2 + UART_IER, 0x00);
            gdb_request_stop(&gdb_uart_transport, c == GDB_CTRL_C_BYTE);
            return;
        }
    }
}

bool gdb_uart_init(void)
{
    if (!gdb_uart_present())
        return false;
    uart16550_setup(COM2, UART_FCR_ENABLE | UART_FCR_CLEAR_BOTH | UART_FCR_TRIGGER_1);
    if (!irq_routed)
        irq_routed = irq_attach_isa(COM2_IRQ, com2_irq, 0);
    return true;
}

/* The receive FIFO's trigger level follows the interrupt. Running, it is 1: the first byte of an attach or
 * a lone Ctrl-C must raise the interrupt at once. Stopped, the stub polls and the level only decides how
 * many bytes the UART takes in at a time -- QEMU's 16550 offers its backend room up to the trigger level,
 * one turn of QEMU's main loop per batch, so at 1 byte a 4096-byte write (8 KiB of hex) crawled at ~5 KB/s,
 * 30 times slower than a read; at 14 it takes about twice a read on a quiet host (QEMU's main loop must
 * get a host CPU for each batch, so a busy host slows writes more than reads). Neither change clears the FIFO. */
void gdb_uart_irq_enable(unsigned cpu)
{
    if (!irq_routed)
        return;
    rx_wakes = false;
    outb(COM2 + UART_IER, 0x00);
    irq_isa_deliver_to(COM2_IRQ, cpu, false);
    outb(COM2 + UART_FCR, UART_FCR_ENABLE | UART_FCR_TRIGGER_1);
    outb(COM2 + UART_IER, UART_IER_RX_AVAILABLE); /* bytes already waiting raise it at once */
}

void gdb_uart_irq_disable(void)
{
    if (presence != 1)
        return;
    outb(COM2 + UART_IER, 0x00);
    outb(COM2 + UART_FCR, UART_FCR_ENABLE | UART_FCR_TRIGGER_14);
    if (irq_routed) {
        /* A CPU the I/O APIC cannot name (APIC id above 254) polls instead of sleeping for the wake. */
        rx_wakes = irq_isa_deliver_to(COM2_IRQ, cpu_index(), true);
    }
}

/* Stopped, with the receive FIFO empty and no deadline: this CPU sleeps in HLT until the UART has bytes --
 * its interrupt, sent as VEC_GDB_WAKE while stopped, arrives at the trigger level or after a few quiet
 * character times (the FIFO's timeout) -- rather than spinning on LSR. Under QEMU a spinning vCPU takes host
 * CPU and the lock from the main loop that refills the FIFO, 14 bytes a turn; on a busy host writes then
 * crawled. Sleeps the way a parked CPU does (gdb_nmi.c): CR8 holds back everything below VEC_GDB_WAKE, and
 * on the NMI stack it does not sleep at all. */
static void wait_for_rx(void)
{
    uint64_t tpr;
    bool sleep = gdb_x86_park_begin(&tpr);
    if (sleep) {
        outb(COM2 + UART_IER, UART_IER_RX_AVAILABLE);
        if (!(inb(COM2 + UART_LSR) & UART_LSR_DATA_READY))
            gdb_x86_park_idle(true, 0);
        outb(COM2 + UART_IER, 0x00);
    }
    gdb_x86_park_end(sleep, tpr);
}

static int uart_getc(void *ctx, int timeout_ms)
{
    (void)ctx;
    if (atomic_load(&packet_start_taken)) { /* the interrupt is off while stopped: nothing sets it meanwhile */
        atomic_store(&packet_start_taken, false);
        return '$';
    }
    uint64_t start = rdtsc();
    uint64_t limit = timeout_ms < 0 ? 0 : (uint64_t)timeout_ms * cycles_per_ms();
    for (;;) {
        if (inb(COM2 + UART_LSR) & UART_LSR_DATA_READY)
            return inb(COM2 + UART_DATA);
        if (timeout_ms >= 0 && rdtsc() - start >= limit)
            return -1;
        if (timeout_ms < 0 && rx_wakes)
            wait_for_rx(); /* at once: polling on (up to 300 us tried) only slowed writes down */
        else
            pause();
    }
}

/* Bytes that may still be written before the next look at LSR: the transmit FIFO holds 16, all free once
 * THR-empty shows, so LSR is read once per 16 bytes (under TCG each port access is an exit into QEMU). */
static unsigned tx_room;

static void uart_putc(void *ctx, char c)
{
    (void)ctx;
    if (tx_room == 0) {
        uint64_t start = rdtsc();
        uint64_t limit = PUTC_WAIT_US * cycles_per_ms() / 1000;
        while (!(inb(COM2 + UART_LSR) & UART_LSR_THR_EMPTY) && rdtsc() - start < limit)
            pause();
        tx_room = UART_TX_FIFO;
    }
    tx_room--;
    outb(COM2 + UART_DATA, (uint8_t)c);
}

const struct gdb_transport gdb_uart_transport = {
    .getc = uart_getc,
    .putc = uart_putc,
    .ctx = 0,
};

static const struct gdb_arch_uart com2 = {
    .name = "COM2",
    .address = "0x2f8",
    .init = gdb_uart_init,
    .irq_enable = gdb_uart_irq_enable,
    .transport = &gdb_uart_transport,
};

const struct gdb_arch_uart *gdb_arch_uart(void) { return &com2; }
