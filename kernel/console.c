/* kernel/console.c: the console. Output goes to every console device (hal's console_hw_write: COM1 and the
 * VGA or framebuffer mirror) under one lock so lines from different CPUs do not interleave mid-line; input
 * characters arrive from interrupt handlers into a single-producer ring, and the one task reading them (the
 * console shell) blocks until there is one. While the shell's prompt waits, a log line is not written after
 * it: the shell's redraw (kernel/shell/lineedit.h) puts the line above, then the prompt and the half-typed line
 * below, all under the lock, so no keystroke's echo lands between. Task context only (log lines are never
 * printed from interrupts), so the lock is the only guard the prompt's state needs. A slow serial line is waited
 * for before the lock, as a task with interrupts on (console_hw_room), never under it. */
#include "kernel/console.h"

#include <stdatomic.h>

#include "hal/cpu.h"
#include "hal/kernel_entry.h"
#include "hal/platform.h"
#include "hal/spinlock.h"
#include "kernel/lib/parse.h"
#include "kernel/lib/string.h"
#include "kernel/task.h"

#define INPUT_RING 256

static spinlock_t console_lock = SPINLOCK_INIT;
static char input_ring[INPUT_RING];
static atomic_uint input_head; /* written by the interrupt handler */
static atomic_uint input_tail; /* written by the reader */
static atomic_uint input_dropped;
static struct task *_Atomic input_reader;

/* Output is written CONSOLE_CHUNK bytes at a time, each after waiting for room for it: a long report does not
 * hold the lock, with interrupts off, while the line drains. Room asked for: twice the bytes (a newline goes
 * out as two), plus a prompt's redraw and a note of bytes lost. */
#define CONSOLE_CHUNK 1024
#define CONSOLE_ROOM(len) (2 * (len) + 1024)
/* A line that moved no byte for this long (console.stall_ms=, a test knob) is given up on until it moves again:
 * writers then no longer wait (what does not fit is lost, and the console says how much), so a console nobody
 * reads slows a task once. */
#define CONSOLE_STALL_MS_DEFAULT 10000
#define CONSOLE_STALL_MS_MIN 100
#define CONSOLE_STALL_MS_MAX 60000
#define CONSOLE_POLL_NS (2 * 1000000LL)

static int64_t stall_ns = CONSOLE_STALL_MS_DEFAULT * 1000000LL;
static atomic_bool line_stalled;
static _Atomic uint64_t stalled_at_sent;

/* Sleeps, waiting on the device, until the hardware can take len bytes without its writer spinning. Only a
 * task with interrupts on waits (boot, panics and spinlock holders write as before). */
static void wait_for_room(size_t len)
{
    if (!irq_enabled() || !task_current())
        return;
    uint64_t sent = console_hw_sent();
    if (atomic_load(&line_stalled)) {
        if (sent == atomic_load(&stalled_at_sent))
            return;
        atomic_store(&line_stalled, false);
    }
    int64_t deadline = time_ns() + stall_ns;
    while (console_hw_room() < CONSOLE_ROOM(len)) {
        task_wait_until(time_ns() + CONSOLE_POLL_NS, TASK_WAIT_DEVICE);
        uint64_t now_sent = console_hw_sent();
        if (now_sent != sent) {
            sent = now_sent;
            deadline = time_ns() + stall_ns;
        } else if (time_ns() - deadline > 0) {
            atomic_store(&stalled_at_sent, sent);
            atomic_store(&line_stalled, true);
            return;
        }
    }
}

void console_set_stall(const char *ms_option, struct sink *out)
{
    uint64_t ms;
    if (!ms_option)
        return;
    if (!parse_u64_range(ms_option, CONSOLE_STALL_MS_MIN, CONSOLE_STALL_MS_MAX, &ms)) {
        sink_printf(out, "warning: console: console.stall_ms=%s is not %u..%u ms; writers wait %u ms on a stalled "
                    "line\n", ms_option, CONSOLE_STALL_MS_MIN, CONSOLE_STALL_MS_MAX, CONSOLE_STALL_MS_DEFAULT);
        return;
    }
    stall_ns = (int64_t)ms * 1000000LL;
    sink_printf(out, "console: writers wait %u ms on a stalled line (console.stall_ms=, a test knob)\n", (unsigned)ms);
}

void console_write(const char *text, size_t len)
{
    do {
        size_t n = len < CONSOLE_CHUNK ? len : CONSOLE_CHUNK;
        wait_for_room(n);
        unsigned long flags = spin_lock_irqsave(&console_lock);
        console_hw_write(text, n);
        spin_unlock_irqrestore(&console_lock, flags);
        text += n;
        len -= n;
    } while (len);
}

void console_write_unlocked(const char *text, size_t len)
{
    console_hw_write(text, len);
    console_hw_flush_panic();
}

/* ---- the prompt and the log lines that arrive while it waits ----------------------------------------- */

static console_redraw_fn prompt_redraw; /* set while the shell's prompt waits; under console_lock */
static void *prompt_arg;

static void held_write(struct sink *sink, const char *text, size_t len)
{
    (void)sink;
    console_hw_write(text, len);
}

struct sink console_held_sink = { .write = held_write };

unsigned long console_hold(void) { return spin_lock_irqsave(&console_lock); }

void console_release(unsigned long flags) { spin_unlock_irqrestore(&console_lock, flags); }

void console_prompt_show(const char *prompt, console_redraw_fn redraw, void *arg)
{
    wait_for_room(strlen(prompt));
    unsigned long flags = spin_lock_irqsave(&console_lock);
    console_hw_write(prompt, strlen(prompt));
    prompt_redraw = redraw;
    prompt_arg = arg;
    spin_unlock_irqrestore(&console_lock, flags);
}

void console_prompt_hide_held(void)
{
    prompt_redraw = 0;
    prompt_arg = 0;
}

void console_write_log(const char *text, size_t len)
{
    wait_for_room(len);
    unsigned long flags = spin_lock_irqsave(&console_lock);
    if (prompt_redraw)
        prompt_redraw(prompt_arg, &console_held_sink, text, len);
    else
        console_hw_write(text, len);
    spin_unlock_irqrestore(&console_lock, flags);
}

static void console_sink_write(struct sink *sink, const char *text, size_t len)
{
    (void)sink;
    console_write(text, len);
}

struct sink console_sink = { .write = console_sink_write };

bool console_input_pending(void)
{
    return console_input_peek() >= 0;
}

int console_input_peek(void)
{
    unsigned tail = atomic_load_explicit(&input_tail, memory_order_relaxed);
    if (atomic_load_explicit(&input_head, memory_order_acquire) == tail)
        return -1;
    return (unsigned char)input_ring[tail % INPUT_RING];
}

bool console_input_has_room(void)
{
    return atomic_load_explicit(&input_head, memory_order_relaxed) -
               atomic_load_explicit(&input_tail, memory_order_acquire) < INPUT_RING;
}

/* Interrupt context (serial and keyboard IRQs, both routed to the boot CPU, never nested). */
bool console_input_char(char c)
{
    unsigned head = atomic_load_explicit(&input_head, memory_order_relaxed);
    if (head - atomic_load_explicit(&input_tail, memory_order_acquire) >= INPUT_RING) {
        atomic_fetch_add_explicit(&input_dropped, 1, memory_order_relaxed);
        return false;
    }
    input_ring[head % INPUT_RING] = c;
    atomic_store_explicit(&input_head, head + 1, memory_order_release);
    struct task *reader = atomic_load(&input_reader);
    if (reader)
        task_wake(reader);
    return true;
}

char console_read_char(void)
{
    atomic_store(&input_reader, task_current());
    for (;;) {
        unsigned tail = atomic_load_explicit(&input_tail, memory_order_relaxed);
        if (atomic_load_explicit(&input_head, memory_order_acquire) != tail) {
            char c = input_ring[tail % INPUT_RING];
            atomic_store_explicit(&input_tail, tail + 1, memory_order_release);
            console_input_resume();
            return c;
        }
        task_block(TASK_WAIT_INPUT);
    }
}
