/* tests/fuzz/fake_shell_env.c: what the shell's commands call outside the code fuzz_shell fuzzes -- tasks,
 * console, platform, network -- as fakes whose actions do nothing lasting, so any line can run any command:
 * tasks never start (burn says so), a profile window takes three ticks per CPU, netload's window delivers a
 * few datagrams and polls its sender twice, poweroff fails. The label table and netload's session are kernel
 * statics kept for the kernel's life; their sources are included here, unchanged, so that each input can
 * start from them empty and a crash replays alone. */
#include "kernel/labels.c"
#include "kernel/net/netload.c"

#include "fake_hal.h"
#include "fake_shell_env.h"
#include "fuzz.h"
#include "hal/cpu.h"
#include "hal/platform.h"
#include "kernel/console.h"
#include "kernel/net/allowlist.h"
#include "kernel/net/net.h"
#include "kernel/profiler/raw.h"
#include "kernel/profiler/build_id.h"
#include "kernel/profiler.h"
#include "kernel/profiler/stream_codec.h"
#include "kernel/shell/commands.h"
#include "kernel/udpsh/udpsh.h"
#include "kernel/net/boot_secret.h"
#include "kernel/symbols.h"

struct task fake_tasks[FAKE_TASKS];

void fake_shell_env_reset(void)
{
    memset(fake_tasks, 0, sizeof fake_tasks);
    static const char *const names[FAKE_TASKS] = { "shell", "net", "udpsh", "idle" };
    for (unsigned i = 0; i < FAKE_TASKS; i++) {
        fake_tasks[i].pid = i + 1;
        fake_tasks[i].cpu = i % 2;
        fake_tasks[i].stack_size = TASK_STACK_SIZE;
        strlcpy(fake_tasks[i].name, names[i], sizeof fake_tasks[i].name);
    }
    memset(table, 0, sizeof table);
    memset(slots, 0, sizeof slots);
    stats = (struct label_stats){ .capacity = LABEL_TABLE_SETS };
    readers = 0;
    batch = 1;
    closing = 0;
    stage = GRACE_NONE;
    memset(&session, 0, sizeof session);
    bound_count = 0;
    atomic_store(&claimed, false);
}

/* ---- tasks ---- */

struct task *task_current(void) { return &fake_tasks[0]; }
struct task *task_spawn(const char *name, void (*entry)(void *arg), void *arg, int cpu)
{
    (void)name, (void)entry, (void)arg, (void)cpu;
    return NULL;
}

bool task_exists(uint32_t pid) { return pid >= 1 && pid <= FAKE_TASKS; }

bool task_set_labels_by_pid(uint32_t pid, const struct label_set *set)
{
    if (!task_exists(pid))
        return false;
    task_set_labels(&fake_tasks[pid - 1], set);
    return true;
}

bool task_set_span_by_pid(uint32_t pid, uint64_t span)
{
    if (!task_exists(pid))
        return false;
    task_set_span(&fake_tasks[pid - 1], span);
    return true;
}

void task_for_each(void (*fn)(struct task *task, void *arg), void *arg)
{
    for (unsigned i = 0; i < FAKE_TASKS; i++)
        fn(&fake_tasks[i], arg);
}

size_t task_stack_used(const struct task *task) { return task->stack_size / 3; }

static uint64_t stack_words[MAX_CPUS][4];
struct stack_bounds task_stack_bounds(const struct task *task)
{
    struct stack_bounds b = { (uintptr_t)stack_words[task->cpu], (uintptr_t)(stack_words[task->cpu] + 4) };
    return b;
}

/* The profile window: three ticks on each CPU, in the known text, so that the report has chains to fold. The
 * command sleeps its window in drain steps (task_sleep_until), and the stop waits for the CPUs to let go of
 * the run (task_sleep_ms): every sleep brings the ticks. */
static void ticks_on_every_cpu(void)
{
    for (unsigned t = 0; t < 3; t++) {
        for (unsigned cpu = 0; cpu < fake_cpu_count; cpu++) {
            struct context ctx;
            memset(&ctx, 0, sizeof ctx);
            ctx.rip = 0x1000 + 0x10 + t * 0x8 + cpu * 0x100;
            fake_cpu_index = cpu;
            profiler_tick(&ctx);
        }
    }
    fake_cpu_index = 0;
}

void task_sleep_ms(uint32_t ms)
{
    ticks_on_every_cpu();
    fake_time_ns += (int64_t)ms * 1000000;
}

int stack_trace_from(uintptr_t pc, uintptr_t sp, uintptr_t rbp, const struct stack_bounds *stack,
                     const struct text_bounds *text, uintptr_t *out, int max)
{
    (void)sp, (void)rbp, (void)stack, (void)text;
    CHECK(max >= 2);
    out[0] = pc;
    out[1] = 0x1130;
    return 2;
}

void sched_cpu_ticks(unsigned cpu, uint64_t *ticks, uint64_t *busy)
{
    *ticks = 1000 + cpu;
    *busy = 10 * cpu;
}

/* ---- the network ---- */

static net_udp_handler bound_handler;
static void *bound_arg;
static net_poll_fn poller;

bool net_available(void) { return true; }
struct task *net_task_get(void) { return &fake_tasks[1]; }
bool net_udp_bind(uint16_t port, net_udp_handler handler, void *arg)
{
    if (port == PROFILE_STREAM_SRC_PORT)
        return true; /* the stream's port receives nothing; netload's handler stays the one fed */
    bound_handler = handler;
    bound_arg = arg;
    return true;
}
bool net_udp_send(enum net_udp_when_full when_full, uint16_t src_port, uint32_t dst_ip, uint16_t dst_port,
                  const void *data, size_t len)
{
    (void)when_full, (void)src_port, (void)dst_ip, (void)dst_port, (void)data;
    CHECK(len <= NET_UDP_MAX);
    return true;
}
/* `profile stream`: the local subnet allowed; its task never starts (task_spawn). */
bool net_peer_permitted(uint32_t ip) { return (ip >> 8) == 0x0a0002; }
uint32_t boot_secret_run_id(void) { return 0x1234; }
void boot_secret_note(struct sink *out) { (void)out; }
void task_exit(void)
{
    CHECK(!"task_exit: no task was ever started");
    abort();
}

void net_set_poller(net_poll_fn fn, void *arg)
{
    (void)arg;
    poller = fn;
}

/* netload's window: a datagram in order, one out of order, one broken; the sender polled twice. */
void task_sleep_until(int64_t when_ns)
{
    static uint8_t buf[NETLOAD_SIZE_MAX];
    if (bound_handler) {
        static const uint64_t seqs[] = { 0, 2, 1 };
        for (size_t i = 0; i < sizeof seqs / sizeof *seqs; i++) {
            size_t n = netload_encode(buf, sizeof buf, seqs[i], 5, 64);
            bound_handler(bound_arg, 0x0a000202, 40000, buf, n);
        }
        bound_handler(bound_arg, 0x0a000202, 40000, buf, 10);
    }
    if (poller) {
        poller(NULL, fake_time_ns);
        poller(NULL, fake_time_ns + 1000000);
    }
    ticks_on_every_cpu();
    if (when_ns > fake_time_ns)
        fake_time_ns = when_ns;
}

int cmd_net(int argc, char **argv, struct sink *out, const struct shell_origin *from)
{
    (void)argv, (void)from;
    if (argc != 1)
        return shell_usage(out, "net");
    sink_puts(out, "net: the fuzz target has no interface to show\n");
    return 0;
}

/* ---- console and platform ---- */

static void console_sink_write(struct sink *sink, const char *text, size_t len)
{
    (void)sink, (void)text, (void)len;
}
struct sink console_sink = { console_sink_write };
void console_write(const char *text, size_t len) { (void)text, (void)len; }
char console_read_char(void)
{
    CHECK(!"the fuzz target never runs the console shell task");
    return 0;
}

const char *platform_poweroff(void) { return "the fuzz target cannot power off"; }
const char *platform_nmi_selftest(void) { return "ok: the fuzz target has no NMIs to inject"; }
uint32_t cpu_hw_id(unsigned index) { return index * 2; }
bool cpu_online(unsigned index) { return index < fake_cpu_count; }
uint64_t platform_ram_bytes(void) { return 256ull << 20; }
const char *platform_boot_summary(void) { return "BIOS, fuzz target, console serial"; }

/* ---- the kernel image ---- */

static const char names[] = "BurnInner\0BurnTask";
static const struct ksym syms[] = { { 0x1000, 0x100, 0 }, { 0x1100, 0x100, 10 } };
static const struct symtab tab = { syms, 2, names, 0x1000, 0x3000 };
const struct symtab *kernel_symtab(void) { return &tab; }

static const uint32_t build_id_note[] = { 4, 4, 3, 0x00554e47 /* "GNU\0" */, 0xefbeadde };
const void *kernel_build_id_note(size_t *len)
{
    *len = sizeof build_id_note;
    return build_id_note;
}
