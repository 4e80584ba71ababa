/* gdbstub/commands.c: one handler per packet gdb sends (gdbstub/commands.h), against struct gdb_target only.
 *
 * Every handler parses its arguments through a cursor bounded by the payload's length, checks them completely
 * before touching the target, and answers an error for anything it cannot do -- never a guess. The thread
 * packets and the ones that resume or end a session are gdbstub/threads.c's (threads are CPUs), dispatched from
 * here; gdbstub/handlers.h holds what the two share. Memory goes through target->mem_read/mem_write, which refuse
 * unmapped and non-canonical addresses instead of faulting. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gdbstub/commands.h"
#include "gdbstub/handlers.h"
#include "gdbstub/monitor.h"
#include "gdbstub/packet.h"
#include "gdbstub/regs.h"
#include "kernel/lib/string.h"

/* Memory reads are split at multiples of this, so that a read running into an unmapped page still returns
 * the bytes before it (gdb accepts a shorter m reply). Any mapping granule at least this large works. */
#define READ_PIECE 4096u

bool gdb_reply_too_long(struct gdb_session *s)
{
    return reply_error(s, ERR_TOO_LONG);
}

/* ---- arguments ---- */

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
        return gdb_handle_thread_list(s, true);
    if (payload_is(s, "qsThreadInfo"))
        return gdb_handle_thread_list(s, false);
    if (payload_starts(s, "qThreadExtraInfo,"))
        return gdb_handle_thread_extra_info(s);
    if (payload_starts(s, "qRcmd,"))
        return gdb_monitor_packet(s);
    return reply_empty(s);
}

static bool handle_v(struct gdb_session *s)
{
    if (payload_is(s, "vCont?"))
        return reply_str(s, "vCont;c;C;s;S");
    if (payload_starts(s, "vCont;"))
        return gdb_handle_vcont(s);
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
        return gdb_handle_set_thread(s);
    case 'T':
        return gdb_handle_thread_alive(s);
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
        return gdb_handle_legacy_resume(s);
    case 'D':
        return gdb_handle_detach(s);
    case 'k':
        return payload_is(s, "k") ? gdb_handle_kill(s) : reply_error(s, ERR_MALFORMED);
    default:
        return reply_empty(s);
    }
}
