/* arch/x86_64/serial.c: COM1, the 16550 UART at 0x3F8 that is kprof's main console (QEMU -serial stdio).
 * Output goes through a transmit ring that the UART's THR-empty interrupt drains, 16 bytes (the FIFO) at a
 * time, so a host that reads the console slowly holds bytes back instead of losing them: QEMU keeps the
 * transmitter busy while its side of the line is full, and a polled writer that gave up waiting overwrote the
 * FIFO. Input is interrupt driven too (IRQ 4 through the IOAPIC) and every received byte goes to
 * console_input_char(). Registers and line set-up: arch/x86_64/uart16550.h. */
#include "arch/x86_64/arch.h"
#include "arch/x86_64/uart16550.h"
#include "arch/x86_64/x86.h"
#include "hal/irq.h"
#include "hal/kernel_entry.h"
#include "hal/platform.h"
#include "kernel/lib/format.h"

#include <stdatomic.h>

#define COM1 0x3F8
/* Bytes of console output the line may fall behind by: a report's worth, so a host that stops reading for a
 * while (a loaded machine) costs the writer no wait at all. */
#define TX_RING (64 * 1024)
/* A writer that finds the ring full drains it itself (it may hold the only CPU the interrupt goes to, with
 * interrupts off); it gives up on a line that moved no byte in this many polls -- the bound the old polled
 * writer had per byte -- and counts what it could not send. */
#define TX_STUCK_POLLS 100000

static char tx_ring[TX_RING];
static atomic_uint tx_head;        /* bytes queued, ever: writers, under the console lock */
static atomic_uint tx_tail;        /* bytes handed to the UART, ever: the one drainer at a time */
static atomic_flag tx_draining = ATOMIC_FLAG_INIT;
static atomic_uint tx_lost;        /* bytes dropped since the last note about them */
static atomic_bool tx_stuck;       /* the line moved nothing for TX_STUCK_POLLS, its tail then tx_stuck_tail */
static unsigned tx_stuck_tail;     /* under the console lock */
static atomic_uchar ier_tx;        /* UART_IER_THR_EMPTY once the interrupt is routed: then it drains */

void serial_init(void)
{
    uart16550_setup(COM1, UART_FCR_ENABLE | UART_FCR_CLEAR_BOTH | UART_FCR_TRIGGER_14);
}

/* ---- output --------------------------------------------------------------------------------------------- */

static unsigned tx_queued(void) { return atomic_load(&tx_head) - atomic_load(&tx_tail); }

/* Hands queued bytes to the UART while its FIFO shows empty. One drainer at a time (the interrupt on the boot
 * CPU, or a writer on any CPU); one that finds another at it leaves the bytes to it, and the one leaving looks
 * again, so bytes queued as it left are not stranded. */
static void tx_drain(void)
{
    do {
        if (atomic_flag_test_and_set(&tx_draining))
            return;
        unsigned tail = atomic_load(&tx_tail);
        while (tail != atomic_load(&tx_head) && (inb(COM1 + UART_LSR) & UART_LSR_THR_EMPTY)) {
            for (unsigned n = 0; n < UART_TX_FIFO && tail != atomic_load(&tx_head); n++, tail++)
                outb(COM1 + UART_DATA, (uint8_t)tx_ring[tail % TX_RING]);
            atomic_store(&tx_tail, tail);
        }
        atomic_flag_clear(&tx_draining);
    } while (tx_queued() && (inb(COM1 + UART_LSR) & UART_LSR_THR_EMPTY));
}

/* Waits, draining, until the ring has room for one byte; false when the line moved nothing for
 * TX_STUCK_POLLS polls. A line found stuck is not waited for again until it has moved: a host that stopped
 * reading costs one wait, not one per byte. */
static bool tx_wait_room(void)
{
    unsigned tail = atomic_load(&tx_tail);
    unsigned limit = atomic_load(&tx_stuck) && tail == tx_stuck_tail ? 1 : TX_STUCK_POLLS;
    for (unsigned polls = 0; tx_queued() >= TX_RING; polls++) {
        tx_drain();
        if (atomic_load(&tx_tail) != tail) {
            tail = atomic_load(&tx_tail);
            polls = 0;
            limit = TX_STUCK_POLLS;
        } else if (polls >= limit) {
            tx_stuck_tail = tail;
            atomic_store(&tx_stuck, true);
            return false;
        }
        pause();
    }
    atomic_store(&tx_stuck, false);
    return true;
}

static void tx_put(char c)
{
    if (!tx_wait_room()) {
        atomic_fetch_add(&tx_lost, 1);
        return;
    }
    unsigned head = atomic_load(&tx_head);
    tx_ring[head % TX_RING] = c;
    atomic_store(&tx_head, head + 1);
}

static void tx_put_text(const char *text, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        if (text[i] == '\n')
            tx_put('\r');
        tx_put(text[i]);
    }
}

/* Under the console lock (or a panic's). Bytes lost to a line that did not drain are said, in a line of their
 * own, once there is room again: a reader is told where the console has a gap, never left to guess. */
void serial_write(const char *text, size_t len)
{
    unsigned lost = atomic_load(&tx_lost);
    if (lost && TX_RING - tx_queued() > 256) {
        char note[96];
        size_t n = ksnprintf(note, sizeof note, "\n[console: %u bytes lost: the serial line did not drain]\n", lost);
        atomic_fetch_sub(&tx_lost, lost);
        tx_put_text(note, n);
    }
    tx_put_text(text, len);
    tx_drain();
    /* Before the interrupt drains (early boot), and for a panic that halts next, the writer sends it all. */
    if (!atomic_load(&ier_tx))
        serial_flush(false);
}

void serial_flush(bool others_stopped)
{
    if (others_stopped) /* a panic: a CPU stopped mid-drain holds the drainer's flag for good */
        atomic_flag_clear(&tx_draining);
    while (tx_queued()) {
        unsigned tail = atomic_load(&tx_tail);
        unsigned polls = 0;
        while (atomic_load(&tx_tail) == tail && tx_queued()) {
            tx_drain();
            if (++polls >= TX_STUCK_POLLS)
                return;
            pause();
        }
    }
}

size_t serial_tx_room(void) { return TX_RING - tx_queued(); }

uint64_t serial_tx_sent(void) { return atomic_load(&tx_tail); }

/* ---- input, and the interrupt both share ------------------------------------------------------------------ */

static atomic_bool rx_paused;

/* Reads only while the console has room. When it has none, the receive interrupt is switched off and the bytes
 * stay in the UART, where QEMU's backpressure (or the sender's flow control) holds the rest: a pasted line is
 * delayed, never cut. console_input_resume() switches it back on. */
static void serial_receive(void)
{
    while (inb(COM1 + UART_LSR) & UART_LSR_DATA_READY) {
        if (!console_input_has_room()) {
            outb(COM1 + UART_IER, atomic_load(&ier_tx));
            atomic_store(&rx_paused, true);
            return;
        }
        console_input_char((char)inb(COM1 + UART_DATA));
    }
}

/* IRQ 4 is edge-triggered through the IOAPIC: the handler goes on until IIR says nothing is pending, so the
 * line falls and the next cause raises a new edge -- one left pending would raise none, and input and output
 * would wait for ever. Reading IIR clears a THR-empty cause; the FIFO is then refilled from the ring, and a
 * round with nothing to send or receive leaves nothing pending. The bound, far past what the ring holds (each
 * round moves at least a byte), is only for a UART that never says "none". */
#define SERIAL_IRQ_ROUNDS (1u << 20)

static void serial_irq(void *arg)
{
    (void)arg;
    for (unsigned rounds = 0; rounds < SERIAL_IRQ_ROUNDS && !(inb(COM1 + UART_IIR) & UART_IIR_NONE); rounds++) {
        serial_receive();
        tx_drain();
    }
}

void console_input_resume(void)
{
    if (atomic_exchange(&rx_paused, false))
        outb(COM1 + UART_IER, UART_IER_RX_AVAILABLE | atomic_load(&ier_tx)); /* data waiting: again at once */
}

void serial_enable_input(void)
{
    irq_attach_isa(4, serial_irq, 0);
    atomic_store(&ier_tx, UART_IER_THR_EMPTY);
    outb(COM1 + UART_IER, UART_IER_RX_AVAILABLE | UART_IER_THR_EMPTY);
    serial_receive();            /* bytes that arrived before the IRQ was routed */
    tx_drain();
}
