/* gdbstub/threads.c: gdb's threads, which are the CPUs (thread id N is CPU N-1), and the packets that say
 * which of them gdb looks at and which run: the stop reply, H, T, the thread list and its extra info; then the
 * packets that end a session -- c, C, s, S and vCont resume the machine, D and k detach. Like every
 * handler (gdbstub/commands.c) each parses through a cursor bounded by the payload and checks its arguments
 * completely before touching the target; gdbstub/handlers.h holds what they share. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gdbstub/commands.h"
#include "gdbstub/handlers.h"
#include "gdbstub/packet.h"
#include "kernel/lib/string.h"

enum { SIGNAL_INT = 2, SIGNAL_TRAP = 5, SIGNAL_ABRT = 6 };

/* ---- threads ---- */

enum thread_kind { THREAD_ALL, THREAD_ANY, THREAD_ONE, THREAD_UNKNOWN, THREAD_BAD };

/* A thread id: -1 (all), 0 (any) or a hex id; THREAD_ONE sets *cpu. */
static enum thread_kind take_thread(const struct gdb_session *s, struct gdb_cursor *c, unsigned *cpu)
{
    if (cursor_take_str(c, "-1"))
        return THREAD_ALL;
    uint64_t id;
    if (!cursor_hex(c, &id))
        return THREAD_BAD;
    if (id == 0)
        return THREAD_ANY;
    if (id > s->cpus)
        return THREAD_UNKNOWN;
    *cpu = (unsigned)(id - 1);
    return THREAD_ONE;
}

/* ---- the stop reply and the thread packets ---- */

bool gdb_send_stop_reply(struct gdb_session *s)
{
    unsigned signal = SIGNAL_TRAP;
    if (s->reason == GDB_STOP_INTERRUPT)
        signal = SIGNAL_INT;
    else if (s->reason == GDB_STOP_PANIC)
        signal = SIGNAL_ABRT;

    struct gdb_link *link = s->link;
    gdb_out_reset(link);
    gdb_out_char(link, 'T');
    gdb_out_char(link, hex_lower(signal >> 4));
    gdb_out_char(link, hex_lower(signal));
    gdb_out_str(link, "thread:");
    gdb_out_hex_u64(link, s->stopped_cpu + 1u);
    gdb_out_char(link, ';');
    if (s->reason == GDB_STOP_SW_BREAK && s->keep->gdb_swbreak)
        gdb_out_str(link, "swbreak:;");
    if (s->reason == GDB_STOP_HW_BREAK && s->keep->gdb_hwbreak)
        gdb_out_str(link, "hwbreak:;");
    struct gdb_hw_slot hit;
    if (s->reason == GDB_STOP_WATCH && gdb_break_watch_hit(&hit)) {
        gdb_out_str(link, hit.type == GDB_WATCH_ACCESS ? "awatch:" : "watch:");
        gdb_out_hex_u64(link, hit.addr);
        gdb_out_char(link, ';');
    }
    return send_reply(s);
}

bool gdb_handle_set_thread(struct gdb_session *s)
{
    struct gdb_cursor c = payload_from(s, 1);
    bool general = cursor_take(&c, 'g');
    if (!general && !cursor_take(&c, 'c'))
        return reply_error(s, ERR_MALFORMED);
    unsigned cpu = 0;
    enum thread_kind kind = take_thread(s, &c, &cpu);
    if (kind == THREAD_BAD || !cursor_at_end(&c))
        return reply_error(s, ERR_MALFORMED);
    if (kind == THREAD_UNKNOWN)
        return reply_error(s, ERR_NO_THREAD);
    if (general)
        s->g_cpu = kind == THREAD_ONE ? cpu : s->stopped_cpu;
    else
        s->c_cpu = kind == THREAD_ONE ? (int)cpu : -1;
    return reply_ok(s);
}

bool gdb_handle_thread_alive(struct gdb_session *s)
{
    struct gdb_cursor c = payload_from(s, 1);
    unsigned cpu;
    enum thread_kind kind = take_thread(s, &c, &cpu);
    if (kind == THREAD_BAD || !cursor_at_end(&c))
        return reply_error(s, ERR_MALFORMED);
    return kind == THREAD_ONE ? reply_ok(s) : reply_error(s, ERR_NO_THREAD);
}

/* qfThreadInfo (from the first CPU) and qsThreadInfo (from where the last reply stopped): as many ids as fit,
 * then `l` once all were listed. */
bool gdb_handle_thread_list(struct gdb_session *s, bool first)
{
    if (first)
        s->next_thread = 0;
    struct gdb_link *link = s->link;
    gdb_out_reset(link);
    if (s->next_thread >= s->cpus) {
        gdb_out_char(link, 'l');
        return send_reply(s);
    }
    gdb_out_char(link, 'm');
    /* An id is at most 8 hex digits and a comma. */
    while (s->next_thread < s->cpus && gdb_out_room(link) >= 9) {
        if (link->out_len > 1)
            gdb_out_char(link, ',');
        gdb_out_hex_u64(link, s->next_thread + 1u);
        s->next_thread++;
    }
    return send_reply(s);
}

bool gdb_handle_thread_extra_info(struct gdb_session *s)
{
    struct gdb_cursor c = payload_from(s, strlen("qThreadExtraInfo,"));
    unsigned cpu;
    enum thread_kind kind = take_thread(s, &c, &cpu);
    if (kind == THREAD_BAD || !cursor_at_end(&c))
        return reply_error(s, ERR_MALFORMED);
    if (kind != THREAD_ONE)
        return reply_error(s, ERR_NO_THREAD);
    char text[128];
    memset(text, 0, sizeof text);
    s->target->cpu_describe(cpu, text, sizeof text);
    text[sizeof text - 1] = '\0';
    gdb_out_reset(s->link);
    gdb_out_hex_bytes(s->link, text, strlen(text));
    return send_reply(s);
}

/* ---- resuming ---- */

static void end_session(struct gdb_session *s, enum gdb_session_end end)
{
    s->ended = true;
    s->end = end;
}

static void resume(struct gdb_session *s, int cpu, bool step, bool others_stay)
{
    s->target->resume(cpu, step, others_stay);
    s->keep->stop_reply_owed = true;
    end_session(s, step ? GDB_END_STEP : GDB_END_CONTINUE);
}

/* c[addr], s[addr], C sig[;addr], S sig[;addr]. The signal is dropped: a kernel has no signals to deliver.
 * A plain s steps the CPU Hc named (and only it runs), or else gdb's current CPU (and the others run). */
bool gdb_handle_legacy_resume(struct gdb_session *s)
{
    char op = s->link->in[0];
    bool step = op == 's' || op == 'S';
    struct gdb_cursor c = payload_from(s, 1);
    uint64_t signal, addr;
    bool has_addr = false;
    if (op == 'C' || op == 'S') {
        if (!cursor_hex(&c, &signal))
            return reply_error(s, ERR_MALFORMED);
        if (cursor_take(&c, ';')) {
            if (!cursor_hex(&c, &addr))
                return reply_error(s, ERR_MALFORMED);
            has_addr = true;
        }
    } else if (!cursor_at_end(&c)) {
        if (!cursor_hex(&c, &addr))
            return reply_error(s, ERR_MALFORMED);
        has_addr = true;
    }
    if (!cursor_at_end(&c))
        return reply_error(s, ERR_MALFORMED);

    unsigned cpu = s->c_cpu >= 0 ? (unsigned)s->c_cpu : s->g_cpu;
    if (has_addr && !s->target->reg_write(cpu, GDB_RIP, addr))
        return reply_error(s, ERR_TARGET);
    if (step)
        resume(s, (int)cpu, true, s->c_cpu >= 0);
    else
        resume(s, -1, false, false);
    return true;
}

/* One vCont action, `;` op [signal] [`:` thread]. A thread of 0 ("any") means gdb's current CPU. */
struct vcont_action {
    char op;
    enum thread_kind kind;
    unsigned cpu;
};

static bool take_vcont_action(const struct gdb_session *s, struct gdb_cursor *c, struct vcont_action *a)
{
    if (!cursor_take(c, ';') || cursor_at_end(c))
        return false;
    a->op = *c->p++;
    uint64_t signal;
    if ((a->op == 'C' || a->op == 'S') && !cursor_hex(c, &signal))
        return false;
    if (a->op != 'c' && a->op != 'C' && a->op != 's' && a->op != 'S')
        return false;
    a->kind = THREAD_ALL;
    a->cpu = 0;
    if (cursor_take(c, ':')) {
        a->kind = take_thread(s, c, &a->cpu);
        if (a->kind == THREAD_ANY) {
            a->kind = THREAD_ONE;
            a->cpu = s->g_cpu;
        }
    }
    return a->kind != THREAD_BAD;
}

/* What vCont does with cpu: the op of the leftmost action that applies to it -- one naming it, or one
 * without a thread; 0 when none does and it stays. The list was checked whole before. */
static char vcont_op_for(const struct gdb_session *s, struct gdb_cursor list, unsigned cpu)
{
    struct vcont_action a;
    while (!cursor_at_end(&list) && take_vcont_action(s, &list, &a))
        if (a.kind == THREAD_ALL || (a.kind == THREAD_ONE && a.cpu == cpu))
            return a.op == 'C' ? 'c' : a.op == 'S' ? 's' : a.op;
    return 0;
}

/* vCont;action[:thread]... -- the leftmost action that names a thread, or names none, applies to it. The machine
 * resumes every CPU; or one CPU steps while the others all run or all stay; or one CPU runs while the others stay
 * (gdb's `set scheduler-locking on`). Anything else is refused with E22 rather than approximated. */
bool gdb_handle_vcont(struct gdb_session *s)
{
    const struct gdb_cursor list = payload_from(s, strlen("vCont"));
    struct gdb_cursor c = list;
    struct vcont_action a;
    while (!cursor_at_end(&c)) {
        if (!take_vcont_action(s, &c, &a))
            return reply_error(s, ERR_MALFORMED);
        if (a.kind == THREAD_UNKNOWN)
            return reply_error(s, ERR_NO_THREAD);
    }

    int stepping = -1, running = -1;
    unsigned steps = 0, runs = 0;
    for (unsigned cpu = 0; cpu < s->cpus; cpu++) {
        char op = vcont_op_for(s, list, cpu);
        if (op == 's') {
            steps++;
            stepping = (int)cpu;
        } else if (op == 'c') {
            runs++;
            running = (int)cpu;
        }
    }
    if (steps > 1 || steps + runs == 0)
        return reply_error(s, ERR_MALFORMED); /* several CPUs stepping, or nothing to do */
    unsigned others = s->cpus - 1u;
    if (steps == 1 && (runs == others || runs == 0))
        resume(s, stepping, true, runs == 0);
    else if (steps == 0 && runs == s->cpus)
        resume(s, -1, false, false);
    else if (steps == 0 && runs == 1)
        resume(s, running, false, true);
    else
        return reply_error(s, ERR_MALFORMED); /* some CPUs running, others held */
    return true;
}

/* The debugger leaves: every CPU runs, and nothing may stop the machine for it any more -- gdb has normally
 * removed its breakpoints already; any left were removed (gdb_break_remove_all) before the reply, so that a
 * debugger told OK finds them gone. */
static void leave(struct gdb_session *s, enum gdb_session_end end)
{
    s->target->resume(-1, false, false);
    s->keep->stop_reply_owed = false;
    end_session(s, end);
}

/* D and D;pid. */
bool gdb_handle_detach(struct gdb_session *s)
{
    struct gdb_cursor c = payload_from(s, 1);
    uint64_t pid;
    if (cursor_take(&c, ';') && !cursor_hex(&c, &pid))
        return reply_error(s, ERR_MALFORMED);
    if (!cursor_at_end(&c))
        return reply_error(s, ERR_MALFORMED);
    gdb_break_remove_all(s->target);
    bool link_held = reply_ok(s);
    leave(s, GDB_END_DETACH);
    return link_held;
}

/* k is a detach, as Linux's kgdb takes it: a debugger that quits without detaching sends it (lldb's batch mode
 * on the first command that fails, gdb's `kill`), and that must not take the machine away. Powering off is
 * the explicit `monitor poweroff`. The protocol gives k no reply and gdb reads none, but lldb waits for one --
 * X (the process is gone), as lldb-server answers -- and without it sends qC after a while, which the
 * running machine takes for a debugger attaching, and stops. So X09 goes out, once: gdb would never ack it. */
bool gdb_handle_kill(struct gdb_session *s)
{
    gdb_break_remove_all(s->target);
    leave(s, GDB_END_KILL);
    gdb_out_reset(s->link);
    gdb_out_str(s->link, "X09");
    gdb_link_send_once(s->link);
    return true;
}
