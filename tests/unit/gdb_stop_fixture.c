/* tests/unit/gdb_stop_fixture.c: gdb's side of the stop/resume tests (see gdb_stop_fixture.h) -- the byte pipe
 * to the stub, framing, acks and stop replies, the target the sessions run against (registers of the stopped
 * CPUs, MSRs through the mailbox), starting and stopping the machine, and the checks the cases share. */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "arch/x86_64/gdb_regs.h"
#include "fake_hal.h"
#include "fake_target.h"
#include "gdb_stop_fixture.h"
#include "gdbstub/breakpoints.h"
#include "gdbstub/packet.h"
#include "gdbstub/stop.h"
#include "gdbstub/stub.h"
#include "hal/debug.h"

/* ---- the byte pipe between gdb (this test) and the stub ---------------------------------------------------- */

struct byte_pipe {
    pthread_mutex_t lock;
    pthread_cond_t more;
    unsigned char buf[1 << 16];
    size_t head, tail; /* bytes [tail, head) are waiting, indexes modulo the buffer */
    bool hung_up;
};

static struct byte_pipe to_stub, from_stub;

static void pipe_init(struct byte_pipe *p)
{
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->more, NULL);
    p->head = p->tail = 0;
    p->hung_up = false;
}

static void pipe_put(struct byte_pipe *p, const void *data, size_t len)
{
    pthread_mutex_lock(&p->lock);
    for (size_t i = 0; i < len; i++) {
        if (p->head - p->tail == sizeof p->buf)
            fail_msg("pipe overflow");
        p->buf[p->head++ % sizeof p->buf] = ((const unsigned char *)data)[i];
    }
    pthread_cond_broadcast(&p->more);
    pthread_mutex_unlock(&p->lock);
}

/* The next byte, or -1 after timeout_ms (never, for -1) or once hung up and empty. */
static int pipe_get(struct byte_pipe *p, int timeout_ms)
{
    struct timespec until;
    clock_gettime(CLOCK_REALTIME, &until);
    if (timeout_ms >= 0) {
        until.tv_sec += timeout_ms / 1000;
        until.tv_nsec += (long)(timeout_ms % 1000) * 1000000;
        if (until.tv_nsec >= 1000000000) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000;
        }
    }
    pthread_mutex_lock(&p->lock);
    int c = -1;
    for (;;) {
        if (p->head != p->tail) {
            c = p->buf[p->tail++ % sizeof p->buf];
            break;
        }
        if (p->hung_up)
            break;
        if (timeout_ms < 0)
            pthread_cond_wait(&p->more, &p->lock);
        else if (pthread_cond_timedwait(&p->more, &p->lock, &until) != 0)
            break;
    }
    pthread_mutex_unlock(&p->lock);
    return c;
}

static void pipe_hang_up(struct byte_pipe *p)
{
    pthread_mutex_lock(&p->lock);
    p->hung_up = true;
    pthread_cond_broadcast(&p->more);
    pthread_mutex_unlock(&p->lock);
}

static int stub_getc(void *ctx, int timeout_ms)
{
    (void)ctx;
    return pipe_get(&to_stub, timeout_ms);
}

static void stub_putc(void *ctx, char c)
{
    (void)ctx;
    pipe_put(&from_stub, &c, 1);
}

static const struct gdb_transport pipe_transport = { .getc = stub_getc, .putc = stub_putc, .ctx = NULL };

/* ---- gdb's side --------------------------------------------------------------------------------------------- */

static int gdb_getc(void)
{
    int c = pipe_get(&from_stub, GDB_WAIT_MS);
    if (c < 0 && getenv("GDB_STOP_TRACE"))
        dump_cpus();
    if (c < 0)
        fail_msg("gdb: nothing from the stub for %d ms", GDB_WAIT_MS);
    return c;
}

void gdb_send(const char *payload)
{
    if (getenv("GDB_STOP_TRACE"))
        fprintf(stderr, "gdb> %s\n", payload);
    size_t framed_len;
    char *framed = fake_frame(payload, strlen(payload), &framed_len);
    pipe_put(&to_stub, framed, framed_len);
    free(framed);
    int ack = gdb_getc();
    if (ack != '+')
        fail_msg("gdb: sent %s, the stub answered '%c' instead of its ack", payload, ack);
}

/* The stub's next packet, acknowledged; its payload in a static buffer. */
const char *gdb_receive(void)
{
    static char payload[2 * GDB_PACKET_SIZE];
    int c;
    while ((c = gdb_getc()) != '$')
        if (c != '+')
            fail_msg("gdb: stray byte '%c' from the stub", c);
    size_t n = 0;
    while ((c = gdb_getc()) != '#') {
        assert_true(n + 1 < sizeof payload);
        payload[n++] = (char)c;
    }
    payload[n] = '\0';
    gdb_getc();
    gdb_getc();
    pipe_put(&to_stub, "+", 1);
    return payload;
}

void gdb_exchange(const char *packet, const char *reply)
{
    gdb_send(packet);
    const char *got = gdb_receive();
    if (strcmp(got, reply) != 0)
        fail_msg("gdb: %s answered \"%s\", expected \"%s\"", packet, got, reply);
}

/* A stop reply: its thread (CPU + 1); the rest of it must be `rest`. */
unsigned gdb_stop_reply(const char *signal, const char *rest)
{
    const char *got = gdb_receive();
    unsigned thread = 0;
    char tail[64] = "";
    char want_head[8];
    snprintf(want_head, sizeof want_head, "T%s", signal);
    if (strncmp(got, want_head, 3) != 0 || sscanf(got + 3, "thread:%x;%63s", &thread, tail) < 1 ||
        strcmp(tail, rest) != 0)
        fail_msg("gdb: stop reply \"%s\", expected T%sthread:N;%s", got, signal, rest);
    return thread;
}

/* ---- the target the sessions run against ---------------------------------------------------------------- */

static void t_cpu_describe(unsigned cpu, char *buf, size_t cap)
{
    snprintf(buf, cap, gdb_stopped_context(cpu) ? "cpu %u, stopped" : "cpu %u, not stopped", cpu);
}

static bool t_reg_read(unsigned cpu, enum gdb_reg reg, uint64_t *value)
{
    struct context *ctx = gdb_stopped_context(cpu);
    return ctx && gdb_x86_reg_read(ctx, &states[cpu], reg, value);
}

static bool t_reg_write(unsigned cpu, enum gdb_reg reg, uint64_t value)
{
    struct context *ctx = gdb_stopped_context(cpu);
    return ctx && gdb_x86_reg_write(ctx, &states[cpu], reg, value);
}

uint64_t suspend_addr;
struct msr_job job;

static void msr_here(void *arg)
{
    struct msr_job *j = arg;
    j->ran_on = this_cpu_id;
    if (j->msr == SUSPEND_MSR) {
        struct context inside = { .rip = suspend_addr + 1, .rflags = 0x2 };
        j->trap_taken = gdb_stop_breakpoint_insn(&inside, suspend_addr);
        j->ok = inside.rip == suspend_addr && fetch(suspend_addr) != INT3;
        j->value = (uint64_t)j->ran_on;
        return;
    }
    j->ok = fake_target.msr_read(j->cpu, j->msr, &j->value);
}

static bool t_msr_read(unsigned cpu, uint32_t msr, uint64_t *value)
{
    job = (struct msr_job){ .cpu = cpu, .msr = msr, .ran_on = -1 };
    if (!gdb_on_cpu(cpu, msr_here, &job) || job.ran_on != (int)cpu || !job.ok)
        return false;
    *value = job.value;
    return true;
}

static struct gdb_target stop_target;

/* ---- the machine ---------------------------------------------------------------------------------------- */

void machine_start(bool stop_on_panic, bool wait_for_gdb)
{
    fake_target_reset();
    gdb_stub_reset();
    fake_time_ns = 0;
    pipe_init(&to_stub);
    pipe_init(&from_stub);
    pthread_barrier_init(&rendezvous, NULL, 2);
    stop_target = fake_target;
    stop_target.cpu_describe = t_cpu_describe;
    stop_target.reg_read = t_reg_read;
    stop_target.reg_write = t_reg_write;
    stop_target.resume = gdb_stop_resume;
    stop_target.msr_read = t_msr_read;
    memset(states, 0, sizeof states);
    gdb_stop_init(&fake_arch, &stop_target, &pipe_transport, stop_on_panic);
    for (unsigned n = 0; n < FAKE_CPUS; n++) {
        uint8_t nops[WINDOW_SIZE];
        memset(nops, NOP, sizeof nops);
        assert_true(fake_target.mem_write(WINDOW(n), nops, sizeof nops));
        struct fake_cpu *f = &fcpu[n];
        memset(f, 0, sizeof *f);
        f->index = n;
        f->ctx = (struct context){ .rip = WINDOW(n), .rflags = 0x202, .cs = 0x8, .ss = 0x10 };
        f->wait_for_gdb = wait_for_gdb && n == 0;
        f->detour_to = &f->saved;
    }
    for (unsigned n = 0; n < FAKE_CPUS; n++)
        assert_int_equal(pthread_create(&fcpu[n].thread, NULL, cpu_main, &fcpu[n]), 0);
}

/* gdb goes away: any session ends with the link lost, which removes the breakpoints and lets every CPU
 * run; then the CPUs stop for good. */
void machine_stop(void)
{
    pipe_hang_up(&to_stub);
    for (unsigned n = 0; n < FAKE_CPUS; n++)
        atomic_store(&fcpu[n].quit, true);
    for (unsigned n = 0; n < FAKE_CPUS; n++)
        pthread_join(fcpu[n].thread, NULL);
    for (unsigned n = 0; n < FAKE_CPUS; n++) {
        assert_int_equal(atomic_load(&fcpu[n].saved_elsewhere), 0);
        assert_int_equal(fcpu[n].priority, 0); /* every park undone on the way out */
    }
    pthread_barrier_destroy(&rendezvous);
}

int setup(void **state)
{
    (void)state;
    machine_start(false, false);
    return 0;
}

int teardown(void **state)
{
    (void)state;
    machine_stop();
    return 0;
}

unsigned long executed(unsigned cpu) { return atomic_load(&fcpu[cpu].executed); }

void snapshot(unsigned long counts[FAKE_CPUS])
{
    for (unsigned n = 0; n < FAKE_CPUS; n++)
        counts[n] = executed(n);
}

/* Waits until every CPU in `which` (a bit per CPU) has run past its count in `since`. */
void wait_running(unsigned which, const unsigned long since[FAKE_CPUS])
{
    for (int tries = 0; tries < 20000; tries++) {
        bool all = true;
        for (unsigned n = 0; n < FAKE_CPUS; n++)
            if ((which >> n & 1) && executed(n) <= since[n])
                all = false;
        if (all)
            return;
        usleep(500);
    }
    fail_msg("the CPUs in mask 0x%x did not run", which);
}

const char *thread_info(unsigned cpu)
{
    char packet[32];
    snprintf(packet, sizeof packet, "qThreadExtraInfo,%x", cpu + 1);
    gdb_send(packet);
    static char text[128];
    const char *hex = gdb_receive();
    size_t n = strlen(hex) / 2;
    assert_true(n < sizeof text && hex_decode(text, hex, n));
    text[n] = '\0';
    return text;
}

/* Every CPU stopped, as the stub sees it, and none moves. */
void expect_all_stopped(void)
{
    unsigned long before[FAKE_CPUS];
    snapshot(before);
    for (unsigned n = 0; n < FAKE_CPUS; n++) {
        char want[32];
        snprintf(want, sizeof want, "cpu %u, stopped", n);
        assert_string_equal(thread_info(n), want);
    }
    usleep(2000);
    for (unsigned n = 0; n < FAKE_CPUS; n++)
        assert_int_equal(executed(n), before[n]);
}

/* A register of a CPU, through Hg and p. */
uint64_t read_reg(unsigned cpu, unsigned regnum)
{
    char packet[32];
    snprintf(packet, sizeof packet, "Hg%x", cpu + 1);
    gdb_exchange(packet, "OK");
    snprintf(packet, sizeof packet, "p%x", regnum);
    gdb_send(packet);
    const char *hex = gdb_receive();
    uint8_t bytes[8] = { 0 };
    size_t n = strlen(hex) / 2;
    assert_true(n <= 8 && hex_decode(bytes, hex, n));
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++)
        v |= (uint64_t)bytes[i] << (8 * i);
    return v;
}

/* What a new gdb sends first, then `?`: stopped by an attach on cpu 0 (thread 1). */
void attach(void)
{
    atomic_store(&fcpu[0].irq, 1);
    gdb_exchange("qSupported:swbreak+;hwbreak+",
                 "PacketSize=ff00;qXfer:features:read+;vContSupported+;swbreak+;hwbreak+");
    gdb_exchange("?", "T05thread:1;");
    assert_false(atomic_load(&transport_irq_on));
}

/* Ctrl-C while the machine runs: the transport's interrupt, on the CPU it goes to (cpu 0 unless one CPU
 * runs alone). */
unsigned interrupt(void)
{
    int cpu = atomic_load(&transport_irq_cpu);
    atomic_store(&fcpu[cpu < 0 ? 0 : cpu].irq, 2);
    return gdb_stop_reply("02", "");
}

/* Steps `cpu` with `packet`: its stop reply names it, it executed exactly one instruction (its rip moved on
 * by one, interrupts as they were) and, when others_stay, nobody else moved. */
void expect_step(const char *packet, unsigned cpu, bool others_stay)
{
    unsigned long before[FAKE_CPUS];
    uint64_t rip = read_reg(cpu, REGNUM_RIP);
    uint64_t eflags = read_reg(cpu, REGNUM_EFLAGS);
    snapshot(before);
    gdb_send(packet);
    unsigned thread = gdb_stop_reply("05", "");
    if (thread != cpu + 1)
        fail_msg("%s: the stop reply names thread %u, not %u", packet, thread, cpu + 1);
    assert_int_equal(executed(cpu), before[cpu] + 1);
    assert_int_equal(read_reg(cpu, REGNUM_RIP), next_pc(&fcpu[cpu], rip));
    assert_int_equal(read_reg(cpu, REGNUM_EFLAGS), eflags);
    if (others_stay)
        for (unsigned n = 0; n < FAKE_CPUS; n++)
            if (n != cpu && executed(n) != before[n])
                fail_msg("%s: cpu %u ran while cpu %u stepped", packet, n, cpu);
    expect_all_stopped();
}

/* Continues with `packet`; every CPU runs, and Ctrl-C stops them again. */
void expect_continue(const char *packet)
{
    unsigned long before[FAKE_CPUS];
    snapshot(before);
    gdb_send(packet);
    wait_running(0xf, before);
    assert_int_equal(interrupt(), 1);
    expect_all_stopped();
}

/* `c`, and the machine keeps running with no stop reply: nothing stale stops it again. */
void expect_continue_runs_on(void)
{
    unsigned long before[FAKE_CPUS];
    snapshot(before);
    gdb_send("c");
    wait_running(0xf, before);
    usleep(20000);
    snapshot(before);
    wait_running(0xf, before);
    assert_int_equal(pipe_get(&from_stub, 0), -1);
}
