/* tests/fuzz/fuzz_allowlist.c: the UDP services' allowlist parser (kernel/net/allowlist.c) on arbitrary
 * `udpsh.allow=` text: a refusal leaves the list untouched and names the problem in one printable,
 * NUL-terminated line that fits any buffer it is given; a list it accepts is written back in the option's
 * syntax, and that text parses to the same list and writes back the same; the local-subnet default fails
 * closed. */
#include <stdbool.h>
#include <string.h>

#include "fuzz.h"
#include "kernel/cmdline.h"
#include "kernel/log.h"
#include "kernel/net/allowlist.h"
#include "kernel/net/net.h"
#include "kernel/lib/sink.h"

static char text[1024];

/* What net_peer_permitted and net_peers_init read, which this target does not call. */
const char *cmdline_get(const char *key)
{
    (void)key;
    return NULL;
}
uint32_t net_address(void) { return 0; }
uint32_t net_netmask(void) { return 0; }
void log_info(const char *fmt, ...) { (void)fmt; }
void log_warn(const char *fmt, ...) { (void)fmt; }

static bool lists_equal(const struct allowlist *a, const struct allowlist *b)
{
    if (a->count != b->count)
        return false;
    for (unsigned i = 0; i < a->count; i++)
        if (a->entries[i].net != b->entries[i].net || a->entries[i].mask != b->entries[i].mask ||
            a->entries[i].prefix != b->entries[i].prefix)
            return false;
    return true;
}

static void check_error(const char *error, size_t cap)
{
    size_t len = strnlen(error, cap);
    CHECK(len < cap);
    for (size_t i = 0; i < len; i++)
        CHECK(error[i] >= 0x20 && error[i] < 0x7f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size >= sizeof text)
        return 0;
    memcpy(text, data, size);
    text[size] = '\0';

    struct allowlist list, untouched;
    memset(&list, 0x5a, sizeof list);
    untouched = list;
    char error[ALLOWLIST_ERROR_MAX];
    memset(error, 0x5a, sizeof error);
    if (!allowlist_parse(text, &list, error, sizeof error)) {
        CHECK(memcmp(&list, &untouched, sizeof list) == 0);
        check_error(error, sizeof error);
        CHECK(error[0] != '\0');
        /* A smaller buffer gets the same line, cut short and still terminated. */
        char small[13];
        memset(small, 0x5a, sizeof small);
        CHECK(!allowlist_parse(text, &list, small, sizeof small));
        check_error(small, sizeof small);
        CHECK(strncmp(small, error, strlen(small)) == 0);
    } else {
        CHECK(list.count >= 1 && list.count <= ALLOWLIST_MAX);
        for (unsigned i = 0; i < list.count; i++) {
            const struct allow_entry *e = &list.entries[i];
            CHECK(e->prefix <= 32);
            CHECK(e->mask == (e->prefix == 0 ? 0 : 0xffffffffu << (32 - e->prefix)));
            CHECK((e->net & ~e->mask) == 0);
            CHECK(allowlist_permits(&list, e->net));
            CHECK(allowlist_permits(&list, e->net | ~e->mask));
        }
        char written[512], again[512];
        struct buffer_sink bs;
        buffer_sink_init(&bs, written, sizeof written);
        allowlist_format(&list, &bs.sink);
        CHECK(bs.truncated == 0);
        struct allowlist reparsed;
        CHECK(allowlist_parse(written, &reparsed, error, sizeof error));
        CHECK(lists_equal(&list, &reparsed));
        buffer_sink_init(&bs, again, sizeof again);
        allowlist_format(&reparsed, &bs.sink);
        CHECK(strcmp(written, again) == 0);
    }

    /* The default from an address and netmask taken from the input. */
    if (size >= 8) {
        uint32_t addr, mask;
        memcpy(&addr, data, 4);
        memcpy(&mask, data + 4, 4);
        struct allowlist local;
        bool ok = allowlist_local_subnet(&local, addr, mask);
        if (ok) {
            CHECK(local.count == 1 && addr != 0 && mask != 0);
            CHECK(local.entries[0].mask == mask);
            CHECK(allowlist_permits(&local, addr));
        } else {
            CHECK(local.count == 0 && !allowlist_permits(&local, addr));
        }
    }
    return 0;
}
