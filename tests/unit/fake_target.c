/* tests/unit/fake_target.c: the fake machine and scripted transport of fake_target.h. The machine is plain
 * arrays with the same refusals the real target makes (unmapped or non-canonical memory, faulting MSRs, no
 * free debug register); the transport compares the stub's output with the script at each point where the
 * stub stops to read, so a failure names the step it happened at. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "fake_target.h"
#include "gdbstub/breakpoints.h"
#include "kernel/lib/sink.h"

/* ---- memory ---- */

static uint8_t low_mem[FAKE_LOW_SIZE];
/* The addresses where the stub's int3s are planted (see the breakpoints below). */
static uint64_t sw_slots[FAKE_SW_SLOTS];
static bool sw_used[FAKE_SW_SLOTS];
static uint8_t high_mem[FAKE_HIGH_SIZE];
static uint8_t big_mem[FAKE_BIG_SIZE];

uint8_t fake_memory_pattern(size_t offset)
{
    return (uint8_t)(offset * 7 + 3);
}

/* The backing bytes of [addr, addr + len), or NULL when any of it is unmapped. */
static uint8_t *mapped(uint64_t addr, size_t len)
{
    if (len == 0)
        return NULL;
    if (addr >= FAKE_LOW_BASE && addr - FAKE_LOW_BASE < FAKE_LOW_SIZE && len <= FAKE_LOW_SIZE - (addr - FAKE_LOW_BASE))
        return low_mem + (addr - FAKE_LOW_BASE);
    if (addr >= FAKE_HIGH_BASE && addr - FAKE_HIGH_BASE < FAKE_HIGH_SIZE &&
        len <= FAKE_HIGH_SIZE - (addr - FAKE_HIGH_BASE))
        return high_mem + (addr - FAKE_HIGH_BASE);
    if (addr >= FAKE_BIG_BASE && addr - FAKE_BIG_BASE < FAKE_BIG_SIZE && len <= FAKE_BIG_SIZE - (addr - FAKE_BIG_BASE))
        return big_mem + (addr - FAKE_BIG_BASE);
    return NULL;
}

uint8_t fake_memory_byte(uint64_t addr)
{
    uint8_t *p = mapped(addr, 1);
    if (p == NULL)
        fail_msg("fake_memory_byte: 0x%llx is not mapped", (unsigned long long)addr);
    return *p;
}

static bool fake_mem_read(uint64_t addr, void *buf, size_t len)
{
    uint8_t *p = mapped(addr, len);
    if (p == NULL)
        return false;
    memcpy(buf, p, len);
    return true;
}

static bool remove_slot(const uint64_t *slots, bool *used, size_t n, uint64_t addr);

static bool fake_mem_write(uint64_t addr, const void *buf, size_t len)
{
    uint8_t *p = mapped(addr, len);
    if (p == NULL)
        return false;
    memcpy(p, buf, len);
    /* A planted int3 written over is gone: planting there again is not planting twice. */
    for (size_t i = 0; i < len; i++)
        remove_slot(sw_slots, sw_used, FAKE_SW_SLOTS, addr + i);
    return true;
}

/* ---- registers ---- */

uint64_t fake_regs[FAKE_CPUS][GDB_REG_COUNT];
int fake_unreadable_reg;
int fake_readonly_reg;

static unsigned fake_cpu_count_fn(void)
{
    return FAKE_CPUS;
}

static void fake_cpu_describe(unsigned cpu, char *buf, size_t cap)
{
    snprintf(buf, cap, "cpu %u, task %s (pid %u)", cpu, cpu == 0 ? "shell" : "idle", cpu == 0 ? 1u : 0u);
}

static bool fake_reg_read(unsigned cpu, enum gdb_reg reg, uint64_t *value)
{
    if (cpu >= FAKE_CPUS || reg >= GDB_REG_COUNT || (int)reg == fake_unreadable_reg)
        return false;
    *value = fake_regs[cpu][reg];
    return true;
}

static bool fake_reg_write(unsigned cpu, enum gdb_reg reg, uint64_t value)
{
    if (cpu >= FAKE_CPUS || reg >= GDB_REG_COUNT || (int)reg == fake_readonly_reg)
        return false;
    fake_regs[cpu][reg] = value;
    return true;
}

/* ---- breakpoints ---- */

unsigned fake_break_insert_calls;

static int find_slot(const uint64_t *slots, const bool *used, size_t n, uint64_t addr)
{
    for (size_t i = 0; i < n; i++)
        if (used[i] && slots[i] == addr)
            return (int)i;
    return -1;
}

static bool insert_slot(uint64_t *slots, bool *used, size_t n, uint64_t addr)
{
    if (find_slot(slots, used, n, addr) >= 0)
        fail_msg("fake target: breakpoint at 0x%llx inserted twice", (unsigned long long)addr);
    for (size_t i = 0; i < n; i++) {
        if (!used[i]) {
            used[i] = true;
            slots[i] = addr;
            return true;
        }
    }
    return false;
}

static bool remove_slot(const uint64_t *slots, bool *used, size_t n, uint64_t addr)
{
    int i = find_slot(slots, used, n, addr);
    if (i < 0)
        return false;
    used[i] = false;
    return true;
}

static unsigned count_slots(const bool *used, size_t n)
{
    unsigned count = 0;
    for (size_t i = 0; i < n; i++)
        count += used[i];
    return count;
}

/* The machine's side of a software breakpoint: a real int3 byte in the fake memory. The slots only catch a
 * stub that plants twice at one address without removing in between. */
static bool fake_sw_break_plant(uint64_t addr, uint8_t *saved)
{
    fake_break_insert_calls++;
    uint8_t *p = mapped(addr, 1);
    if (p == NULL || !insert_slot(sw_slots, sw_used, FAKE_SW_SLOTS, addr))
        return false;
    *saved = *p;
    *p = FAKE_BREAK_INSN;
    return true;
}

static bool fake_sw_break_unplant(uint64_t addr, uint8_t saved)
{
    uint8_t *p = mapped(addr, 1);
    if (p == NULL || !remove_slot(sw_slots, sw_used, FAKE_SW_SLOTS, addr))
        return false;
    *p = saved;
    return true;
}

static bool canonical(uint64_t addr)
{
    return addr < 0x0000800000000000ull || addr >= 0xffff800000000000ull;
}

static bool fake_hw_break_valid(uint64_t addr)
{
    fake_break_insert_calls++;
    return canonical(addr);
}

static void fake_debugger_code(uint64_t *start, uint64_t *end)
{
    *start = FAKE_DEBUGGER_START;
    *end = FAKE_DEBUGGER_END;
}

static bool fake_debugger_data(uint64_t addr, uint64_t len)
{
    return addr < FAKE_DEBUGGER_DATA_END && addr + len > FAKE_DEBUGGER_DATA_START;
}

bool fake_sw_break_at(uint64_t addr)
{
    return find_slot(sw_slots, sw_used, FAKE_SW_SLOTS, addr) >= 0;
}

/* The debug registers a CPU would load as it resumes: what the stub's table holds in each slot. */
bool fake_hw_break_at(uint64_t addr)
{
    struct gdb_hw_slot h;
    for (unsigned slot = 0; slot < FAKE_HW_SLOTS; slot++)
        if (gdb_break_hw_slot(slot, &h) && h.addr == addr)
            return true;
    return false;
}

unsigned fake_sw_break_count(void)
{
    return count_slots(sw_used, FAKE_SW_SLOTS);
}

unsigned fake_hw_break_count(void)
{
    struct gdb_hw_slot h;
    unsigned count = 0;
    for (unsigned slot = 0; slot < FAKE_HW_SLOTS; slot++)
        count += gdb_break_hw_slot(slot, &h);
    return count;
}

/* ---- resume, poweroff ---- */

unsigned fake_resume_calls;
int fake_resume_step_cpu;
bool fake_resume_step;
bool fake_resume_others_stay;
unsigned fake_poweroff_calls;
size_t fake_poweroff_sent;

static void fake_resume(int cpu, bool step, bool others_stay)
{
    fake_resume_calls++;
    fake_resume_step_cpu = cpu;
    fake_resume_step = step;
    fake_resume_others_stay = others_stay;
}

/* The fake machine cannot be powered off: it says so, as a machine without ACPI S5 would. */
static const char *fake_poweroff(void)
{
    fake_poweroff_calls++;
    (void)fake_link_output(&fake_poweroff_sent);
    return "the fake machine has no power to cut";
}

/* ---- MSRs and the PMU ---- */

static uint64_t msr_a[FAKE_CPUS];
static uint64_t msr_b[FAKE_CPUS];

static uint64_t *msr_slot(unsigned cpu, uint32_t msr)
{
    if (cpu >= FAKE_CPUS)
        return NULL;
    if (msr == FAKE_MSR_A)
        return &msr_a[cpu];
    if (msr == FAKE_MSR_B)
        return &msr_b[cpu];
    return NULL;
}

uint64_t fake_msr_value(unsigned cpu, uint32_t msr)
{
    uint64_t *slot = msr_slot(cpu, msr);
    if (slot == NULL)
        fail_msg("fake_msr_value: no MSR 0x%x on cpu %u", msr, cpu);
    return *slot;
}

static bool fake_msr_read(unsigned cpu, uint32_t msr, uint64_t *value)
{
    uint64_t *slot = msr_slot(cpu, msr);
    if (slot == NULL)
        return false;
    *value = *slot;
    return true;
}

static bool fake_msr_write(unsigned cpu, uint32_t msr, uint64_t value)
{
    uint64_t *slot = msr_slot(cpu, msr);
    if (slot == NULL)
        return false;
    *slot = value;
    return true;
}

const char *fake_pmu_text;
size_t fake_pmu_piece;

static void fake_pmu_report(struct sink *out)
{
    size_t len = strlen(fake_pmu_text);
    for (size_t at = 0; at < len; at += fake_pmu_piece) {
        size_t n = len - at < fake_pmu_piece ? len - at : fake_pmu_piece;
        sink_write(out, fake_pmu_text + at, n);
    }
}

const struct gdb_target fake_target = {
    .cpu_count = fake_cpu_count_fn,
    .cpu_describe = fake_cpu_describe,
    .reg_read = fake_reg_read,
    .reg_write = fake_reg_write,
    .mem_read = fake_mem_read,
    .mem_write = fake_mem_write,
    .sw_break_plant = fake_sw_break_plant,
    .sw_break_unplant = fake_sw_break_unplant,
    .hw_break_slots = FAKE_HW_SLOTS,
    .hw_break_valid = fake_hw_break_valid,
    .debugger_code = fake_debugger_code,
    .debugger_data = fake_debugger_data,
    .resume = fake_resume,
    .msr_read = fake_msr_read,
    .msr_write = fake_msr_write,
    .pmu_report = fake_pmu_report,
    .poweroff = fake_poweroff,
};

void fake_target_reset(void)
{
    for (size_t i = 0; i < FAKE_LOW_SIZE; i++)
        low_mem[i] = fake_memory_pattern(i);
    for (size_t i = 0; i < FAKE_HIGH_SIZE; i++)
        high_mem[i] = fake_memory_pattern(i);
    for (size_t i = 0; i < FAKE_BIG_SIZE; i++)
        big_mem[i] = fake_memory_pattern(i);
    memset(fake_regs, 0, sizeof fake_regs);
    fake_unreadable_reg = -1;
    fake_readonly_reg = -1;
    memset(sw_used, 0, sizeof sw_used);
    fake_break_insert_calls = 0;
    fake_resume_calls = 0;
    fake_resume_step_cpu = -2;
    fake_resume_step = false;
    fake_resume_others_stay = false;
    fake_poweroff_calls = 0;
    fake_poweroff_sent = 0;
    for (unsigned cpu = 0; cpu < FAKE_CPUS; cpu++) {
        msr_a[cpu] = 1000 + cpu;
        msr_b[cpu] = 0x70000000full;
    }
    fake_pmu_text = "";
    fake_pmu_piece = 16;
}

int fake_target_fixture(void **state)
{
    (void)state;
    fake_target_reset();
    return 0;
}

/* ---- the scripted transport ---- */

enum step_kind { STEP_SEND, STEP_EXPECT };

struct step {
    enum step_kind kind;
    char *bytes;
    size_t len;
};

static struct step *steps;
static size_t step_count, step_cap;
static size_t step_at;    /* the step being played */
static size_t byte_at;    /* within a STEP_SEND */
static char *output;
static size_t output_len, output_cap;
static size_t output_checked; /* output before this was matched against an expectation */
static unsigned lost_reads;
static char mismatch[512];

char *fake_frame(const void *payload, size_t len, size_t *framed_len)
{
    char *f = malloc(len + 5);
    assert_non_null(f);
    uint8_t sum = 0;
    f[0] = '$';
    memcpy(f + 1, payload, len);
    for (size_t i = 0; i < len; i++)
        sum = (uint8_t)(sum + ((const uint8_t *)payload)[i]);
    snprintf(f + 1 + len, 4, "#%02x", sum);
    *framed_len = len + 4;
    return f;
}

static void add_step(enum step_kind kind, const void *bytes, size_t len)
{
    if (step_count == step_cap) {
        step_cap = step_cap ? 2 * step_cap : 64;
        steps = realloc(steps, step_cap * sizeof *steps);
        assert_non_null(steps);
    }
    char *copy = malloc(len + 1);
    assert_non_null(copy);
    memcpy(copy, bytes, len);
    copy[len] = '\0';
    steps[step_count++] = (struct step){ kind, copy, len };
}

void fake_link_reset(void)
{
    for (size_t i = 0; i < step_count; i++)
        free(steps[i].bytes);
    free(steps);
    steps = NULL;
    step_count = step_cap = step_at = byte_at = 0;
    free(output);
    output = NULL;
    output_len = output_cap = output_checked = 0;
    lost_reads = 0;
    mismatch[0] = '\0';
}

int fake_link_fixture(void **state)
{
    (void)state;
    fake_link_reset();
    return 0;
}

void fake_send_raw(const void *bytes, size_t len)
{
    add_step(STEP_SEND, bytes, len);
}

void fake_send_packet(const void *payload, size_t len)
{
    size_t framed_len;
    char *framed = fake_frame(payload, len, &framed_len);
    add_step(STEP_SEND, framed, framed_len);
    free(framed);
}

void fake_expect_raw(const void *bytes, size_t len)
{
    add_step(STEP_EXPECT, bytes, len);
}

static void expect_framed(const char *reply, bool ack_first)
{
    size_t framed_len;
    char *framed = fake_frame(reply, strlen(reply), &framed_len);
    char *with_ack = malloc(framed_len + 2);
    assert_non_null(with_ack);
    size_t n = 0;
    if (ack_first)
        with_ack[n++] = '+';
    memcpy(with_ack + n, framed, framed_len);
    add_step(STEP_EXPECT, with_ack, n + framed_len);
    free(framed);
    free(with_ack);
}

void fake_expect_ack_reply(const char *reply)
{
    expect_framed(reply, true);
}

void fake_expect_reply(const char *reply)
{
    expect_framed(reply, false);
}

void fake_exchange(const char *packet, const char *reply)
{
    fake_send_packet(packet, strlen(packet));
    fake_expect_ack_reply(reply);
    fake_send_raw("+", 1);
}

/* Matches the output not yet checked against the STEP_EXPECT steps at the current position. */
static void check_expectations(void)
{
    while (step_at < step_count && steps[step_at].kind == STEP_EXPECT) {
        const struct step *e = &steps[step_at];
        size_t have = output_len - output_checked;
        const char *got = output + output_checked;
        if (mismatch[0] == '\0' && (have < e->len || memcmp(got, e->bytes, e->len) != 0)) {
            snprintf(mismatch, sizeof mismatch, "step %zu: expected \"%.200s\", stub wrote \"%.*s\"", step_at,
                     e->bytes, (int)(have > 200 ? 200 : have), got);
        }
        output_checked += have < e->len ? have : e->len;
        step_at++;
    }
    if (mismatch[0] == '\0' && output_checked != output_len) {
        snprintf(mismatch, sizeof mismatch, "step %zu: stub wrote unexpected \"%.*s\"", step_at,
                 (int)(output_len - output_checked > 200 ? 200 : output_len - output_checked),
                 output + output_checked);
        output_checked = output_len;
    }
}

static int fake_getc(void *ctx, int timeout_ms)
{
    (void)ctx;
    (void)timeout_ms;
    check_expectations();
    if (step_at >= step_count) {
        /* The link is lost. A stub that keeps reading a lost link forever would hang the test. */
        if (++lost_reads > 1000)
            fail_msg("the stub kept reading a lost link");
        return -1;
    }
    const struct step *s = &steps[step_at];
    unsigned char c = (unsigned char)s->bytes[byte_at++];
    if (byte_at == s->len) {
        step_at++;
        byte_at = 0;
    }
    return c;
}

static void fake_putc(void *ctx, char c)
{
    (void)ctx;
    if (output_len + 1 >= output_cap) {
        output_cap = output_cap ? 2 * output_cap : 4096;
        output = realloc(output, output_cap);
        assert_non_null(output);
    }
    output[output_len++] = c;
    output[output_len] = '\0';
}

const struct gdb_transport fake_transport = {
    .getc = fake_getc,
    .putc = fake_putc,
    .ctx = NULL,
};

const char *fake_link_finish(void)
{
    check_expectations();
    if (mismatch[0] == '\0' && step_at < step_count)
        snprintf(mismatch, sizeof mismatch, "step %zu of %zu never played: \"%.200s\"", step_at, step_count,
                 steps[step_at].bytes);
    return mismatch[0] != '\0' ? mismatch : NULL;
}

const char *fake_link_output(size_t *len)
{
    *len = output_len;
    return output != NULL ? output : "";
}

void refuse_vconts(void (*exchange)(const char *packet, const char *reply))
{
    static const char *const malformed[] = {
        "vCont;",                /* no action */
        "vCont;s",               /* every CPU stepping */
        "vCont;s:-1",            /* the same */
        "vCont;s:1;s:2",         /* two CPUs stepping */
        "vCont;c:1;c:2;c:3",     /* one left out */
        "vCont;c:1;c:1;c:2;c:3", /* CPU 4 left out */
        "vCont;c:1;c:2",         /* two running, two held */
        "vCont;s:1;c:2",         /* one stepping, one running, two held */
        "vCont;t",               /* stop: not offered */
        "vCont;t:1",
        "vCont;r1000,2000",      /* range step: not offered */
        "vCont;x",
        "vCont;C",               /* signal missing */
        "vCont;c:",
        "vCont;c:zz",
        "vCont;c;",
        "vCont;cc",
        "vCont;s:1x",
    };
    for (size_t i = 0; i < sizeof malformed / sizeof malformed[0]; i++)
        exchange(malformed[i], "E22");
    exchange("vCont;c:9", "E03");
    exchange("vCont;s:5;c", "E03");
}
