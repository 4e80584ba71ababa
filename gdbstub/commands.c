/* gdbstub/commands.c: one handler per packet gdb sends (gdbstub/commands.h), against struct gdb_target only.
 *
 * Threads are CPUs: thread id N is CPU N-1. Every handler parses its arguments through a cursor bounded by
 * the payload's length, checks them completely before touching the target, and answers an error for
 * anything it cannot do -- never a guess. Memory goes through target->mem_read/mem_write, which refuse
 * unmapped and non-canonical addresses instead of faulting. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gdbstub/commands.h"
#include "gdbstub/monitor.h"
#include "gdbstub/packet.h"
#include "gdbstub/regs.h"
#include "kernel/lib/string.h"

enum {
    ERR_DEBUGGER_CODE = 1, /* EPERM: a breakpoint in the debugger's own code (`monitor nobreak` says where) */
    ERR_NO_THREAD = 3,
    ERR_TARGET = 5,
    ERR_TOO_LONG = 7,
    ERR_ADDRESS = 14,
    ERR_MALFORMED = 22,
    ERR_NO_ROOM = 28,
    ERR_UNSUPPORTED = 95, /* EOPNOTSUPP: a watchpoint no debug register can be (a read-only one, a bad shape) */
};

enum { SIGNAL_INT = 2, SIGNAL_TRAP = 5, SIGNAL_ABRT = 6 };

/* Memory reads are split at multiples of this, so that a read running into an unmapped page still returns
 * the bytes before it (gdb accepts a shorter m reply). Any mapping granule at least this large works. */
#define READ_PIECE 4096u

/* ---- replies ---- */

static bool send_reply(struct gdb_session *s)
{
    return gdb_link_send(s->link);
}

static bool reply_str(struct gdb_session *s, const char *text)
{
    gdb_out_reset(s->link);
    gdb_out_str(s->link, text);
    return send_reply(s);
}

static bool reply_ok(struct gdb_session *s)
{
    return reply_str(s, "OK");
}

static bool reply_empty(struct gdb_session *s)
{
    return reply_str(s, "");
}

static bool reply_error(struct gdb_session *s, unsigned code)
{
    char text[4] = { 'E', (char)('0' + code / 10 % 10), (char)('0' + code % 10), '\0' };
    return reply_str(s, text);
}

bool gdb_reply_too_long(struct gdb_session *s)
{
    return reply_error(s, ERR_TOO_LONG);
}

/* ---- arguments ---- */

static struct gdb_cursor payload_from(const struct gdb_session *s, size_t skip)
{
    struct gdb_cursor c = { s->link->in + skip, s->link->in + s->link->in_len };
    return c;
}

static bool payload_is(const struct gdb_session *s, const char *text)
{
    size_t len = strlen(text);
    return s->link->in_len == len && memcmp(s->link->in, text, len) == 0;
}

static bool payload_starts(const struct gdb_session *s, const char *text)
{
    size_t len = strlen(text);
    return s->link->in_len >= len && memcmp(s->link->in, text, len) == 0;
}

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

/* addr,len -- both hex. */
static bool take_range(struct gdb_cursor *c, uint64_t *addr, uint64_t *len)
{
    return cursor_hex(c, addr) && cursor_take(c, ',') && cursor_hex(c, len);
}

/* Whether [addr, addr + len) stays below 2^64; len > 0. */
static bool range_fits(uint64_t addr, uint64_t len)
{
    return addr + (len - 1) >= addr;
}

/* ---- stop replies and threads ---- */

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

static bool handle_set_thread(struct gdb_session *s)
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

static bool handle_thread_alive(struct gdb_session *s)
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
static bool handle_thread_list(struct gdb_session *s, bool first)
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

static bool handle_thread_extra_info(struct gdb_session *s)
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

/* ---- qSupported and the target description ---- */

/* Whether the ;-separated feature list in c names feature exactly. */
static bool lists_feature(struct gdb_cursor c, const char *feature)
{
    size_t want = strlen(feature);
    while (!cursor_at_end(&c)) {
        const char *start = c.p;
        while (c.p < c.end && *c.p != ';')
            c.p++;
        if ((size_t)(c.p - start) == want && memcmp(start, feature, want) == 0)
            return true;
        cursor_take(&c, ';');
    }
    return false;
}

/* qSupported starts every connection: a debugger that connects now knows nothing of breakpoints a previous
 * one left behind, so they are removed. */
static bool handle_supported(struct gdb_session *s)
{
    struct gdb_cursor c = payload_from(s, strlen("qSupported"));
    struct gdb_cursor features = c;
    if (cursor_take(&features, ':')) {
        s->keep->gdb_swbreak = lists_feature(features, "swbreak+");
        s->keep->gdb_hwbreak = lists_feature(features, "hwbreak+");
    } else if (cursor_at_end(&c)) {
        s->keep->gdb_swbreak = false;
        s->keep->gdb_hwbreak = false;
    } else {
        return reply_empty(s); /* qSupportedSomethingElse: not this packet */
    }
    gdb_break_remove_all(s->target);
    s->g_cpu = s->stopped_cpu;
    s->c_cpu = -1;

    struct gdb_link *link = s->link;
    gdb_out_reset(link);
    gdb_out_str(link, "PacketSize=");
    gdb_out_hex_u64(link, GDB_PACKET_SIZE);
    gdb_out_str(link, ";qXfer:features:read+;vContSupported+;swbreak+;hwbreak+");
    return send_reply(s);
}

/* qXfer:features:read:target.xml:offset,length -- `m` and a part, or `l` and the rest (or nothing). */
static bool handle_xfer_features(struct gdb_session *s)
{
    struct gdb_cursor c = payload_from(s, strlen("qXfer:features:read:"));
    uint64_t offset, len;
    if (!cursor_take_str(&c, "target.xml:") || !take_range(&c, &offset, &len) || !cursor_at_end(&c))
        return reply_error(s, ERR_MALFORMED);
    size_t total = gdb_target_xml_length();
    if (offset > total)
        return reply_error(s, ERR_MALFORMED);

    uint64_t want = total - offset < len ? total - offset : len;
    struct gdb_link *link = s->link;
    gdb_out_reset(link);
    gdb_out_char(link, 'l');
    /* Nothing asked for (length 0): `l` alone. gdb refuses an `m` that carries no data ("Remote qXfer reply
     * contained no data"), and a short reply is what the protocol allows. */
    if (want == 0)
        return send_reply(s);
    uint64_t sent = 0;
    while (sent < want) {
        char piece[256];
        size_t n = want - sent < sizeof piece ? (size_t)(want - sent) : sizeof piece;
        n = gdb_target_xml_read((size_t)(offset + sent), piece, n);
        size_t took = gdb_out_binary(link, piece, n);
        sent += took;
        if (took < n || n == 0)
            break;
    }
    if (offset + sent < total)
        link->out[0] = 'm';
    return send_reply(s);
}

/* ---- registers ---- */

static bool handle_read_registers(struct gdb_session *s)
{
    gdb_out_reset(s->link);
    char *dst = gdb_out_claim(s->link, 2 * GDB_G_BYTES);
    if (dst != NULL)
        gdb_regs_encode_all(s->target, s->g_cpu, dst);
    return send_reply(s);
}

static bool handle_write_registers(struct gdb_session *s)
{
    switch (gdb_regs_decode_all(s->target, s->g_cpu, s->link->in + 1, s->link->in_len - 1)) {
    case GDB_REGS_OK:
        return reply_ok(s);
    case GDB_REGS_MALFORMED:
        return reply_error(s, ERR_MALFORMED);
    case GDB_REGS_REFUSED:
        break;
    }
    return reply_error(s, ERR_TARGET);
}

static bool handle_read_register(struct gdb_session *s)
{
    struct gdb_cursor c = payload_from(s, 1);
    uint64_t regnum;
    if (!cursor_hex(&c, &regnum) || !cursor_at_end(&c))
        return reply_error(s, ERR_MALFORMED);
    const struct gdb_reg_desc *reg = gdb_reg_by_regnum(regnum);
    if (reg == NULL)
        return reply_error(s, ERR_MALFORMED);
    gdb_out_reset(s->link);
    char *dst = gdb_out_claim(s->link, 2 * reg->size);
    if (dst != NULL)
        gdb_reg_encode(s->target, s->g_cpu, reg, dst);
    return send_reply(s);
}

static bool handle_write_register(struct gdb_session *s)
{
    struct gdb_cursor c = payload_from(s, 1);
    uint64_t regnum, value;
    if (!cursor_hex(&c, &regnum) || !cursor_take(&c, '='))
        return reply_error(s, ERR_MALFORMED);
    const struct gdb_reg_desc *reg = gdb_reg_by_regnum(regnum);
    if (reg == NULL || cursor_left(&c) != 2 * reg->size || !gdb_reg_decode(reg, c.p, &value))
        return reply_error(s, ERR_MALFORMED);
    if (reg->target_reg == GDB_REG_NONE ||
        !s->target->reg_write(s->g_cpu, (enum gdb_reg)reg->target_reg, value))
        return reply_error(s, ERR_TARGET);
    return reply_ok(s);
}

/* ---- memory ---- */

static bool handle_read_memory(struct gdb_session *s)
{
    struct gdb_cursor c = payload_from(s, 1);
    uint64_t addr, len;
    if (!take_range(&c, &addr, &len) || !cursor_at_end(&c) || len == 0)
        return reply_error(s, ERR_MALFORMED);
    if (len > GDB_PACKET_SIZE / 2)
        len = GDB_PACKET_SIZE / 2;
    if (!range_fits(addr, len))
        return reply_error(s, ERR_ADDRESS);

    /* The bytes are read into the reply's own buffer and then widened to hex where they lie. */
    gdb_out_reset(s->link);
    char *dst = gdb_out_claim(s->link, 2 * len);
    if (dst == NULL)
        return send_reply(s);
    uint64_t done = 0;
    while (done < len) {
        uint64_t at = addr + done;
        uint64_t piece = READ_PIECE - at % READ_PIECE;
        if (piece > len - done)
            piece = len - done;
        if (!s->target->mem_read(at, dst + done, (size_t)piece))
            break;
        gdb_break_hide(at, dst + done, (size_t)piece); /* gdb sees its code, not the breakpoints in it */
        done += piece;
    }
    if (done == 0)
        return reply_error(s, ERR_ADDRESS);
    hex_expand_in_place(dst, (size_t)done);
    s->link->out_len = 2 * (size_t)done;
    return send_reply(s);
}

/* M addr,len:hex and X addr,len:binary. The data is decoded in place in the receive buffer, which it only
 * shrinks. */
static bool handle_write_memory(struct gdb_session *s, bool binary)
{
    struct gdb_cursor c = payload_from(s, 1);
    uint64_t addr, len;
    if (!take_range(&c, &addr, &len) || !cursor_take(&c, ':'))
        return reply_error(s, ERR_MALFORMED);
    char *data = s->link->in + (c.p - s->link->in);
    size_t have;
    if (binary) {
        char *w = data;
        for (const char *r = data; r < c.end; r++) {
            if (*r == '}') {
                if (r + 1 == c.end)
                    return reply_error(s, ERR_MALFORMED);
                r++;
                *w++ = (char)(*r ^ 0x20);
            } else {
                *w++ = *r;
            }
        }
        have = (size_t)(w - data);
    } else {
        if (cursor_left(&c) % 2 != 0 || !hex_decode(data, data, cursor_left(&c) / 2))
            return reply_error(s, ERR_MALFORMED);
        have = cursor_left(&c) / 2;
    }
    if (have != len)
        return reply_error(s, ERR_MALFORMED);
    if (len == 0)
        return reply_ok(s); /* gdb's probe for X support */
    if (!range_fits(addr, len) || !s->target->mem_write(addr, data, (size_t)len))
        return reply_error(s, ERR_ADDRESS);
    gdb_break_written(s->target, addr, (size_t)len);
    return reply_ok(s);
}

/* ---- breakpoints ---- */

/* Z and z: 0 software, 1 hardware, 2 write and 4 access watchpoints; idempotent both ways, as gdb asks. E01:
 * the debugger's own code (or data, for a watchpoint); E28: no register free. E95: a read watchpoint (Z3) or
 * a shape no debug register takes -- the empty reply would have gdb resume without it, silently. */
static bool handle_breakpoint(struct gdb_session *s, bool insert)
{
    struct gdb_cursor c = payload_from(s, 1);
    uint64_t type, addr, kind;
    if (!cursor_hex(&c, &type) || !cursor_take(&c, ','))
        return reply_error(s, ERR_MALFORMED);
    if (type > 4)
        return reply_empty(s);
    if (!take_range(&c, &addr, &kind) || !cursor_at_end(&c))
        return reply_error(s, ERR_MALFORMED);
    if (type == 3)
        return insert ? reply_error(s, ERR_UNSUPPORTED) : reply_ok(s);

    enum gdb_break_type bt = (enum gdb_break_type)type;
    if (!insert)
        return gdb_break_remove(s->target, bt, addr) ? reply_ok(s) : reply_error(s, ERR_TARGET);
    switch (gdb_break_insert(s->target, bt, addr, kind)) {
    case GDB_BREAK_OK:
        return reply_ok(s);
    case GDB_BREAK_FULL:
        return reply_error(s, ERR_NO_ROOM);
    case GDB_BREAK_DEBUGGER:
        return reply_error(s, ERR_DEBUGGER_CODE);
    case GDB_BREAK_REFUSED:
        break;
    }
    return reply_error(s, bt == GDB_BREAK_SW || bt == GDB_BREAK_HW ? ERR_ADDRESS : ERR_UNSUPPORTED);
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
static bool handle_legacy_resume(struct gdb_session *s)
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
static bool handle_vcont(struct gdb_session *s)
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

/* D and D;pid. gdb has normally removed its breakpoints already; any left are removed so that nothing stops
 * the machine for a debugger no longer there. */
static bool handle_detach(struct gdb_session *s)
{
    struct gdb_cursor c = payload_from(s, 1);
    uint64_t pid;
    if (cursor_take(&c, ';') && !cursor_hex(&c, &pid))
        return reply_error(s, ERR_MALFORMED);
    if (!cursor_at_end(&c))
        return reply_error(s, ERR_MALFORMED);
    gdb_break_remove_all(s->target);
    bool link_held = reply_ok(s);
    s->target->resume(-1, false, false);
    s->keep->stop_reply_owed = false;
    end_session(s, GDB_END_DETACH);
    return link_held;
}

static bool handle_kill(struct gdb_session *s)
{
    gdb_break_remove_all(s->target);
    s->keep->stop_reply_owed = false;
    end_session(s, GDB_END_KILL);
    s->target->kill();
    return true;
}

/* ---- dispatch ---- */

static bool handle_query(struct gdb_session *s)
{
    if (payload_starts(s, "qSupported"))
        return handle_supported(s);
    if (payload_starts(s, "qXfer:features:read:"))
        return handle_xfer_features(s);
    if (payload_is(s, "qAttached") || payload_starts(s, "qAttached:"))
        return reply_str(s, "1");
    if (payload_is(s, "qC")) { /* the current thread: the one Hg chose, else the one that stopped */
        gdb_out_reset(s->link);
        gdb_out_str(s->link, "QC");
        gdb_out_hex_u64(s->link, s->g_cpu + 1u);
        return send_reply(s);
    }
    if (payload_is(s, "qfThreadInfo"))
        return handle_thread_list(s, true);
    if (payload_is(s, "qsThreadInfo"))
        return handle_thread_list(s, false);
    if (payload_starts(s, "qThreadExtraInfo,"))
        return handle_thread_extra_info(s);
    if (payload_starts(s, "qRcmd,"))
        return gdb_monitor_packet(s);
    return reply_empty(s);
}

static bool handle_v(struct gdb_session *s)
{
    if (payload_is(s, "vCont?"))
        return reply_str(s, "vCont;c;C;s;S");
    if (payload_starts(s, "vCont;"))
        return handle_vcont(s);
    return reply_empty(s);
}

bool gdb_handle_packet(struct gdb_session *s)
{
    if (s->link->in_len == 0)
        return reply_empty(s);
    switch (s->link->in[0]) {
    case '?':
        return payload_is(s, "?") ? gdb_send_stop_reply(s) : reply_error(s, ERR_MALFORMED);
    case 'q':
        return handle_query(s);
    case 'v':
        return handle_v(s);
    case 'H':
        return handle_set_thread(s);
    case 'T':
        return handle_thread_alive(s);
    case 'g':
        return payload_is(s, "g") ? handle_read_registers(s) : reply_error(s, ERR_MALFORMED);
    case 'G':
        return handle_write_registers(s);
    case 'p':
        return handle_read_register(s);
    case 'P':
        return handle_write_register(s);
    case 'm':
        return handle_read_memory(s);
    case 'M':
        return handle_write_memory(s, false);
    case 'X':
        return handle_write_memory(s, true);
    case 'Z':
        return handle_breakpoint(s, true);
    case 'z':
        return handle_breakpoint(s, false);
    case 'c':
    case 'C':
    case 's':
    case 'S':
        return handle_legacy_resume(s);
    case 'D':
        return handle_detach(s);
    case 'k':
        return payload_is(s, "k") ? handle_kill(s) : reply_error(s, ERR_MALFORMED);
    default:
        return reply_empty(s);
    }
}
