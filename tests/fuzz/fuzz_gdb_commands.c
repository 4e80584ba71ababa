/* tests/fuzz/fuzz_gdb_commands.c: the gdb stub's command handling (gdbstub/commands.c, stub.c, regs.c) on
 * arbitrary packets, against the fake machine of tests/unit/fake_target.c. The input is packets one per line;
 * each is framed with a right checksum (so every packet reaches its handler) and followed by gdb's ack, and
 * sessions run until the script is used up -- a packet that resumes the machine ends one session and the
 * next packet starts another, as when the machine stops again. Checked: every frame the stub writes is whole,
 * with a right checksum and a payload within GDB_PACKET_SIZE; every error reply is one commands.h documents;
 * the fake machine's own checks hold (a breakpoint never inserted twice, a lost link never read forever);
 * and when the link is finally lost no breakpoint is left in the machine. */
#include <stdbool.h>
#include <string.h>

#include "kernel/lib/hex.h"
#include "fake_target.h"
#include "fuzz.h"
#include "gdbstub/packet.h"
#include "gdbstub/stub.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    /* The fake machine reports a broken rule with cmocka's fail_msg; outside a cmocka test that must abort,
     * which libFuzzer reports as a crash with its input. */
    setenv("CMOCKA_TEST_ABORT", "1", 1);
    return 0;
}

static void check_reply(const char *payload, size_t len)
{
    if (len == 3 && payload[0] == 'E') {
        /* E01: a breakpoint in the debugger's own code (the fake machine's FAKE_DEBUGGER_START..END), or a
         * watchpoint on its code or data; E95: a watchpoint no debug register can be. */
        static const char *const documented[] = { "E01", "E03", "E05", "E07", "E14", "E22", "E28", "E95" };
        bool known = false;
        for (size_t i = 0; i < sizeof documented / sizeof *documented; i++)
            known |= memcmp(payload, documented[i], 3) == 0;
        CHECK(known);
    }
}

/* The stub's whole output: acks, NAKs and frames, nothing else. */
static void check_output(void)
{
    size_t len;
    const char *o = fake_link_output(&len);
    for (size_t i = 0; i < len;) {
        if (o[i] == '+' || o[i] == '-') {
            i++;
            continue;
        }
        CHECK(o[i] == '$');
        const char *hash = memchr(o + i + 1, '#', len - i - 1);
        CHECK(hash != NULL && hash + 2 < o + len);
        const char *payload = o + i + 1;
        size_t n = (size_t)(hash - payload);
        CHECK(n <= GDB_PACKET_SIZE && memchr(payload, '$', n) == NULL);
        uint8_t sum = 0;
        for (size_t k = 0; k < n; k++)
            sum = (uint8_t)(sum + (uint8_t)payload[k]);
        CHECK(hash[1] == hex_lower(sum >> 4) && hash[2] == hex_lower(sum));
        check_reply(payload, n);
        i += n + 4;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fake_target_reset();
    fake_link_reset();
    gdb_stub_reset();
    fake_pmu_text = "cpu 0: IA32_PERF_GLOBAL_CTRL 0x70000000f\ncpu 1: IA32_PERF_GLOBAL_CTRL 0x0\n";
    fake_pmu_piece = 7;

    for (size_t at = 0; at < size;) {
        const uint8_t *end = memchr(data + at, '\n', size - at);
        size_t n = end ? (size_t)(end - (data + at)) : size - at;
        fake_send_packet(data + at, n);
        fake_send_raw("+", 1);
        at += n + 1;
    }

    /* The stop that starts each session: taken from the input, so every kind of stop reply is sent. */
    enum stop_reason reason = size > 0 ? (enum stop_reason)(data[0] % (GDB_STOP_PANIC + 1)) : GDB_STOP_ATTACH;
    unsigned cpu = size > 1 ? data[1] % (FAKE_CPUS + 1) : 0;
    enum gdb_session_end end = GDB_END_CONTINUE;
    for (int sessions = 0; sessions < 4096 && end != GDB_END_LINK_LOST; sessions++)
        end = gdb_stub_session(&fake_target, &fake_transport, reason, cpu);
    CHECK(end == GDB_END_LINK_LOST);
    CHECK(fake_sw_break_count() == 0 && fake_hw_break_count() == 0);
    check_output();
    return 0;
}
