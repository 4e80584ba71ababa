/* tests/fuzz/fake_shell_env.c: what the shell's commands call outside the code fuzz_shell fuzzes -- tasks,
 * console, platform, network -- as fakes whose actions do nothing lasting, so any line can run any command
 * (the current task, the sleep, the stacks and their walk, the symbol table and the log's console are the
 * fake kernel's, tests/unit/fake_kernel.c): tasks never start (burn says so), a profile window takes three
 * ticks per CPU, netload's window delivers a few datagrams and polls its sender twice, poweroff fails. The
 * label table and netload's session are kernel statics kept for the kernel's life; their sources are included
 * here, unchanged, so that each input can start from them empty and a crash replays alone. */
#include "kernel/labels.c"
#include "kernel/net/netload.c"

#include "fake_hal.h"
#include "fake_kernel.h"
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
#include "kernel/profiler/stream_packer.h"
#include "kernel/profiler/stream_request.h"
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
    /* The fake kernel's: the shell is the current task on every CPU, and its stack holds one caller,
     * BurnTask+0x30, so each sample has a chain of two to fold. */
    fake_current = &fake_tasks[0];
    fake_stack[0][0] = FAKE_BURN_TASK + 0x30;
}

/* ---- tasks ---- */

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

/* The profile window: three rounds of ticks on every CPU (the fake kernel's, in its image's BurnInner), so
 * that the report has chains to fold. The command sleeps its window in drain steps (task_sleep_until), and the
 * stop waits for the CPUs to let go of the run (the fake kernel's task_sleep_ms, a round of its own). */
static void ticks_on_every_cpu(void)
{
    for (unsigned t = 0; t < 3; t++)
        fake_tick_every_cpu(t);
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
bool net_udp_refused_by_ring(void) { return true; }
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

/* netload's wait for its session, and any other wait on a time: the same window. */
void task_wait_until(int64_t when_ns, enum task_wait why)
{
    (void)why;
    task_sleep_until(when_ns);
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
struct sink console_sink = { .write = console_sink_write };
/* console_write is the fake kernel's (what the log writes is kept, cut at its buffer's end). */
/* The fuzz target never runs the console shell task: the one reader is `profile top` taking the key that
 * stopped it (fuzz_shell.c leaves one waiting for each console line). */
char console_read_char(void)
{
    CHECK(fake_console_keys > 0);
    fake_console_keys--;
    return fake_console_key;
}
/* The console shell's prompt and lock (shell.c links them; the fuzz target never runs its task). */
static void held_write(struct sink *sink, const char *text, size_t len)
{
    (void)sink, (void)text, (void)len;
}
struct sink console_held_sink = { .write = held_write };
unsigned long console_hold(void) { return 0; }
void console_release(unsigned long flags) { (void)flags; }
void console_prompt_hide_held(void) {}
void console_prompt_show(const char *prompt, console_redraw_fn redraw, void *arg)
{
    (void)prompt, (void)redraw, (void)arg;
}

const char *platform_poweroff(void) { return "the fuzz target cannot power off"; }
const char *platform_nmi_selftest(void) { return "ok: the fuzz target has no NMIs to inject"; }
uint32_t cpu_hw_id(unsigned index) { return index * 2; }
bool cpu_online(unsigned index) { return index < fake_cpu_count; }
uint64_t platform_ram_bytes(void) { return 256ull << 20; }
const char *platform_boot_summary(void) { return "BIOS, fuzz target, console serial"; }

/* ---- the kernel image ---- */

/* The symbol table is the fake kernel's default image: BurnInner, called from BurnTask. */

static const uint32_t build_id_note[] = { 4, 4, 3, 0x00554e47 /* "GNU\0" */, 0xefbeadde };
const void *kernel_build_id_note(size_t *len)
{
    *len = sizeof build_id_note;
    return build_id_note;
}
