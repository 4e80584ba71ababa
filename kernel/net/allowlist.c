/* kernel/net/allowlist.c: who may talk to us over UDP (kernel/net/allowlist.h) -- a strict parser for
 * `udpsh.allow=`, the local-subnet default, and net_peer_permitted, the check every datagram to a UDP service
 * (the UDP shell, the gdb transport) and every `profile stream` destination passes before anything else --
 * hostile source classes (netpoll_source_refused) first, whatever the list says. The
 * whole object is the debugger's (arch/x86_64/linker.ld): the stopped stub asks net_peer_permitted. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "hal/compiler.h"
#include "kernel/cmdline.h"
#include "kernel/lib/format.h"
#include "kernel/lib/sink.h"
#include "kernel/log.h"
#include "kernel/net/allowlist.h"
#include "kernel/net/net.h"
#include "kernel/net/netpoll.h"

/* An error quotes at most this much of the bad entry. */
#define QUOTE_MAX 40

static uint32_t prefix_mask(unsigned prefix)
{
    return prefix == 0 ? 0 : 0xffffffffu << (32 - prefix);
}

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* Reads the run of decimal digits at p. The value stops growing once it passes 999, so a long run reads as
 * too big rather than wrapping. Returns the number of digits; *leading_zero when there are two or more and the
 * first is '0'. */
static size_t read_decimal(const char *p, const char *end, unsigned *value, bool *leading_zero)
{
    size_t n = 0;
    unsigned v = 0;
    while (p + n < end && is_digit(p[n])) {
        if (v < 1000)
            v = v * 10 + (unsigned)(p[n] - '0');
        n++;
    }
    *value = v;
    *leading_zero = n > 1 && p[0] == '0';
    return n;
}

/* What is wrong with the character at p, for an entry that has something other than what it needed there. */
static void describe_unexpected(const char *p, char *reason, size_t cap)
{
    unsigned char c = (unsigned char)*p;
    if (c > 0x20 && c < 0x7f)
        ksnprintf(reason, cap, "unexpected '%c'", c);
    else
        ksnprintf(reason, cap, "unexpected byte 0x%02x", c);
}

/* Parses [p, end) as one entry. Returns true, or false with the reason in reason. */
static bool parse_entry(const char *p, const char *end, struct allow_entry *entry, char *reason, size_t cap)
{
    uint32_t addr = 0;
    for (int i = 0; i < 4; i++) {
        if (i > 0) {
            if (p == end || *p == '/') {
                ksnprintf(reason, cap, "address needs four octets");
                return false;
            }
            if (*p != '.') {
                describe_unexpected(p, reason, cap);
                return false;
            }
            p++;
        }
        unsigned octet;
        bool leading_zero;
        size_t digits = read_decimal(p, end, &octet, &leading_zero);
        if (digits == 0) {
            if (p == end || *p == '.' || *p == '/')
                ksnprintf(reason, cap, "address needs four octets");
            else
                describe_unexpected(p, reason, cap);
            return false;
        }
        if (octet > 255) {
            ksnprintf(reason, cap, "octet above 255");
            return false;
        }
        if (leading_zero) {
            ksnprintf(reason, cap, "leading zero");
            return false;
        }
        addr = addr << 8 | octet;
        p += digits;
    }

    unsigned prefix = 32;
    if (p < end) {
        if (*p != '/') {
            describe_unexpected(p, reason, cap);
            return false;
        }
        p++;
        bool leading_zero;
        size_t digits = read_decimal(p, end, &prefix, &leading_zero);
        if (digits == 0) {
            if (p == end)
                ksnprintf(reason, cap, "missing prefix");
            else
                describe_unexpected(p, reason, cap);
            return false;
        }
        if (prefix > 32) {
            ksnprintf(reason, cap, "prefix above 32");
            return false;
        }
        if (leading_zero) {
            ksnprintf(reason, cap, "leading zero");
            return false;
        }
        p += digits;
        if (p < end) {
            describe_unexpected(p, reason, cap);
            return false;
        }
    }
    entry->mask = prefix_mask(prefix);
    entry->net = addr & entry->mask;
    entry->prefix = prefix;
    return true;
}

/* The entry is outside input and the error one console line: a byte that is not printable ASCII is quoted as
 * '?' (as the shell and the command line show unknown words), so a newline or an escape sequence in the option
 * cannot break the line or drive the terminal. The reason names the byte itself. */
static void quote_error(char *error, size_t cap, const char *entry, size_t len, const char *reason)
{
    char shown[QUOTE_MAX + 1];
    bool cut = len > QUOTE_MAX;
    size_t n = cut ? QUOTE_MAX : len;
    for (size_t i = 0; i < n; i++)
        shown[i] = entry[i] >= 0x20 && entry[i] < 0x7f ? entry[i] : '?';
    shown[n] = '\0';
    ksnprintf(error, cap, "'%s%s': %s", shown, cut ? "..." : "", reason);
}

bool allowlist_parse(const char *text, struct allowlist *out, char *error, size_t error_cap)
{
    if (text[0] == '\0') {
        ksnprintf(error, error_cap, "empty list");
        return false;
    }
    struct allowlist list;
    list.count = 0;
    const char *p = text;
    for (unsigned index = 1;; index++) {
        const char *end = p;
        while (*end != '\0' && *end != ',')
            end++;
        size_t len = (size_t)(end - p);
        if (len == 0) {
            ksnprintf(error, error_cap, "entry %u is empty", index);
            return false;
        }
        if (list.count == ALLOWLIST_MAX) {
            quote_error(error, error_cap, p, len, "more than 8 entries");
            return false;
        }
        char reason[40];
        if (!parse_entry(p, end, &list.entries[list.count], reason, sizeof reason)) {
            quote_error(error, error_cap, p, len, reason);
            return false;
        }
        list.count++;
        if (*end == '\0')
            break;
        p = end + 1;
    }
    *out = list;
    return true;
}

bool allowlist_local_subnet(struct allowlist *out, uint32_t addr, uint32_t netmask)
{
    out->count = 0;
    unsigned prefix = 0;
    while (prefix < 32 && (netmask & (0x80000000u >> prefix)))
        prefix++;
    if (addr == 0 || prefix == 0 || netmask != prefix_mask(prefix))
        return false;
    out->entries[0].mask = netmask;
    out->entries[0].net = addr & netmask;
    out->entries[0].prefix = prefix;
    out->count = 1;
    return true;
}

bool allowlist_permits(const struct allowlist *list, uint32_t addr)
{
    for (unsigned i = 0; i < list->count; i++) {
        if ((addr & list->entries[i].mask) == list->entries[i].net)
            return true;
    }
    return false;
}

void allowlist_format(const struct allowlist *list, struct sink *out)
{
    if (list->count == 0) {
        sink_puts(out, "nobody");
        return;
    }
    for (unsigned i = 0; i < list->count; i++) {
        uint32_t net = list->entries[i].net;
        sink_printf(out, "%s%s/%u", i > 0 ? "," : "", ipv4_text(net).s, list->entries[i].prefix);
    }
}

/* ---- every UDP service's allowlist ------------------------------------------------------------------------- */

static struct allowlist from_option;
static bool allow_from_cmdline; /* else: the local subnet, known once the address is */

void net_peers_init(void)
{
    const char *allow_opt = cmdline_get("udpsh.allow");
    allow_from_cmdline = false; /* once at boot; the host tests read it afresh */
    if (!allow_opt)
        return;
    char error[ALLOWLIST_ERROR_MAX];
    if (allowlist_parse(allow_opt, &from_option, error, sizeof error))
        allow_from_cmdline = true;
    else
        log_warn("udpsh: udpsh.allow: %s; allowing the local subnet", error);
}

const char *net_peers_rule(void)
{
    return allow_from_cmdline ? "udpsh.allow" : "local subnet";
}

DEBUGGER_TEXT bool net_peer_permitted(uint32_t ip)
{
    /* Addresses no sender holds (broadcast, multicast, loopback, ourselves...) are a forger's, whatever the
     * list says: a "udpsh.allow=0.0.0.0/0" must not make the subnet's broadcast address a peer. */
    if (netpoll_source_refused(ip, net_address(), net_netmask()))
        return false;
    if (allow_from_cmdline)
        return allowlist_permits(&from_option, ip);
    struct allowlist local;
    return allowlist_local_subnet(&local, net_address(), net_netmask()) && allowlist_permits(&local, ip);
}
