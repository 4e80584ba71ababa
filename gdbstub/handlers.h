/* gdbstub/handlers.h: inside the packet handlers (gdbstub/commands.h is their face), what gdbstub/commands.c
 * and gdbstub/threads.c share: the error numbers, the reply and payload helpers every handler answers through,
 * and threads.c's handlers for the dispatch in commands.c. Nothing else includes this. */
#ifndef GDBSTUB_HANDLERS_H
#define GDBSTUB_HANDLERS_H

#include <stdbool.h>
#include <stddef.h>

#include "gdbstub/commands.h"
#include "gdbstub/packet.h"

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

/* ---- replies ---- */

static inline bool send_reply(struct gdb_session *s)
{
    return gdb_link_send(s->link);
}

static inline bool reply_str(struct gdb_session *s, const char *text)
{
    gdb_out_reset(s->link);
    gdb_out_str(s->link, text);
    return send_reply(s);
}

static inline bool reply_ok(struct gdb_session *s)
{
    return reply_str(s, "OK");
}

static inline bool reply_empty(struct gdb_session *s)
{
    return reply_str(s, "");
}

static inline bool reply_error(struct gdb_session *s, unsigned code)
{
    char text[4] = { 'E', (char)('0' + code / 10 % 10), (char)('0' + code % 10), '\0' };
    return reply_str(s, text);
}

/* The packet's arguments, from skip bytes in to its end. */
static inline struct gdb_cursor payload_from(const struct gdb_session *s, size_t skip)
{
    struct gdb_cursor c = { s->link->in + skip, s->link->in + s->link->in_len };
    return c;
}

/* ---- threads.c's handlers, by packet ---- */

bool gdb_handle_set_thread(struct gdb_session *s);                /* Hg, Hc */
bool gdb_handle_thread_alive(struct gdb_session *s);              /* T */
bool gdb_handle_thread_list(struct gdb_session *s, bool first);   /* qfThreadInfo, qsThreadInfo */
bool gdb_handle_thread_extra_info(struct gdb_session *s);         /* qThreadExtraInfo */
bool gdb_handle_legacy_resume(struct gdb_session *s);             /* c, C, s, S */
bool gdb_handle_vcont(struct gdb_session *s);                     /* vCont;... */
bool gdb_handle_detach(struct gdb_session *s);                    /* D */
bool gdb_handle_kill(struct gdb_session *s);                      /* k */

#endif
