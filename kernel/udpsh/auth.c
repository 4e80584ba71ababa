/* kernel/udpsh/auth.c: the UDP shell's trust decisions (kernel/udpsh/auth.h) -- the stateless
 * address token, the request grammar in front of a command line, the rate buckets in their order (unvalidated
 * apart from validated), the keyed MAC and its counter, the amplification budget, repeats and their remembered
 * answers, and which commands an unkeyed request may run. The key and the token secret are a
 * struct keyed_service (kernel/net/keyed_service.h), as the gdb transport's are. */
#include "kernel/udpsh/auth.h"

#include "kernel/lib/hex.h"
#include "kernel/lib/hmac.h"
#include "kernel/lib/parse.h"
#include "kernel/lib/string.h"
#include "kernel/net/keyed_service.h"
#include "kernel/udpsh/wire.h"

_Static_assert(UDPSH_TOKEN_REPLY_LEN + NET_UDP_HEADER_BYTES <= NET_UDP_AMPLIFICATION * NET_UDP_HEADER_BYTES,
               "the token reply keeps to the budget even for an empty datagram");

void udpsh_auth_init(struct udpsh_auth *a, const uint8_t secret[SHA256_DIGEST_SIZE], const uint8_t *key,
                     size_t key_len)
{
    memset(a, 0, sizeof *a);
    keyed_service_init(&a->service, secret, key, key_len);
    a->token_window_ns = UDPSH_TOKEN_WINDOW_NS;
}

bool udpsh_auth_set_token_window_ms(struct udpsh_auth *a, uint64_t ms)
{
    if (ms < UDPSH_TOKEN_WINDOW_MS_MIN || ms > UDPSH_TOKEN_WINDOW_MS_MAX)
        return false;
    a->token_window_ns = (int64_t)ms * 1000000;
    return true;
}

bool udpsh_looks_like_reply(const uint8_t *data, size_t len)
{
    static const char mark[] = "# udpsh ";
    if (len > 0 && data[0] == '\n') {
        data++;
        len--;
    }
    return len >= sizeof mark - 1 && memcmp(data, mark, sizeof mark - 1) == 0;
}

void udpsh_token(const struct udpsh_auth *a, uint32_t ip, uint16_t port, int64_t window,
                 uint8_t token[UDPSH_TOKEN_BYTES])
{
    uint8_t message[4 + 2 + 8];
    for (int i = 0; i < 4; i++)
        message[i] = (uint8_t)(ip >> (24 - 8 * i));
    message[4] = (uint8_t)(port >> 8);
    message[5] = (uint8_t)port;
    for (int i = 0; i < 8; i++)
        message[6 + i] = (uint8_t)((uint64_t)window >> (56 - 8 * i));
    uint8_t mac[SHA256_DIGEST_SIZE];
    hmac_sha256(a->service.secret, sizeof a->service.secret, message, sizeof message, mac);
    memcpy(token, mac, UDPSH_TOKEN_BYTES);
}

/* Lowercase hex only, so that one token or MAC has one spelling and the MAC's input is unambiguous. */
static bool read_hex(const uint8_t *data, size_t len, size_t at, uint8_t *out, size_t bytes)
{
    if (len - at < 2 * bytes)
        return false;
    for (size_t i = 0; i < bytes; i++) {
        unsigned char hi = data[at + 2 * i], lo = data[at + 2 * i + 1];
        if (hi >= 'A' && hi <= 'F')
            return false;
        if (lo >= 'A' && lo <= 'F')
            return false;
        int h = hex_value(hi), l = hex_value(lo);
        if (h < 0 || l < 0)
            return false;
        out[i] = (uint8_t)(h << 4 | l);
    }
    return true;
}

static bool starts_with(const uint8_t *data, size_t len, size_t at, const char *word)
{
    size_t n = strlen(word);
    return len - at >= n && memcmp(data + at, word, n) == 0;
}

/* A field ends with one space, which is consumed, or where the line ends (the end of the datagram or its
 * trailing newline), which is not. */
static bool field_end(const uint8_t *data, size_t len, size_t *at)
{
    if (*at == len || data[*at] == '\n' || data[*at] == '\r')
        return true;
    if (data[*at] == ' ') {
        (*at)++;
        return true;
    }
    return false;
}

/* Decimal digits at *at, at least one, up to UINT64_MAX; the number in *n and where they end in *at. */
static bool read_decimal(const uint8_t *data, size_t len, size_t *at, uint64_t *n)
{
    size_t start = *at;
    *n = 0;
    while (*at < len && data[*at] >= '0' && data[*at] <= '9') {
        unsigned digit = data[*at] - '0';
        if (*n > (UINT64_MAX - digit) / 10)
            return false;
        *n = *n * 10 + digit;
        (*at)++;
    }
    return *at > start;
}

bool udpsh_prefix_parse(const uint8_t *data, size_t len, struct udpsh_request_prefix *p)
{
    memset(p, 0, sizeof *p);
    size_t at = 0;
    if (!starts_with(data, len, at, "token="))
        return true;
    at += 6;
    if (!read_hex(data, len, at, p->token, UDPSH_TOKEN_BYTES))
        return false;
    at += UDPSH_TOKEN_HEX;
    if (!field_end(data, len, &at))
        return false;
    p->has_token = true;
    if (starts_with(data, len, at, "id=")) {
        at += 3;
        if (!read_decimal(data, len, &at, &p->id) || !field_end(data, len, &at))
            return false;
        p->has_id = true;
    } else if (starts_with(data, len, at, "counter=")) {
        at += 8;
        p->counter_at = at;
        uint64_t n;
        if (!read_decimal(data, len, &at, &n))
            return false;
        p->counter_len = at - p->counter_at;
        if (at == len || data[at] != ' ')
            return false;
        at++;
        if (!starts_with(data, len, at, "mac="))
            return false;
        at += 4;
        if (!read_hex(data, len, at, p->mac, SHA256_DIGEST_SIZE))
            return false;
        at += UDPSH_MAC_HEX;
        if (!field_end(data, len, &at))
            return false;
        p->counter = n;
        p->has_mac = true;
    }
    p->line_at = at;
    return true;
}

static int64_t window_of(const struct udpsh_auth *a, int64_t now_ns)
{
    int64_t w = a->token_window_ns;
    return now_ns >= 0 ? now_ns / w : -((-now_ns - 1) / w) - 1;
}

/* Whether token is ip:port's in now_ns's window or the one before; *expires_ns is then when it stops being
 * good (the end of the window after the one it was made in). */
static bool token_good(const struct udpsh_auth *a, uint32_t ip, uint16_t port, const uint8_t token[UDPSH_TOKEN_BYTES],
                       int64_t now_ns, int64_t *expires_ns)
{
    int64_t window = window_of(a, now_ns);
    uint8_t want[UDPSH_TOKEN_BYTES];
    udpsh_token(a, ip, port, window, want);
    bool current = equal_in_constant_time(want, token, UDPSH_TOKEN_BYTES);
    udpsh_token(a, ip, port, window - 1, want);
    bool previous = equal_in_constant_time(want, token, UDPSH_TOKEN_BYTES);
    *expires_ns = (window + (current ? 2 : 1)) * a->token_window_ns;
    return current | previous;
}

static void give_token(struct udpsh_auth *a, uint32_t ip, uint16_t port, size_t received_len, int64_t now_ns,
                       struct udpsh_judgement *j)
{
    uint8_t token[UDPSH_TOKEN_BYTES];
    udpsh_token(a, ip, port, window_of(a, now_ns), token);
    char *out = j->token_reply;
    size_t n = sizeof UDPSH_TOKEN_PREFIX - 1;
    memcpy(out, UDPSH_TOKEN_PREFIX, n);
    for (int i = 0; i < UDPSH_TOKEN_BYTES; i++) {
        out[n++] = hex_lower(token[i] >> 4);
        out[n++] = hex_lower(token[i]);
    }
    out[n++] = '\n';
    out[n] = '\0';
    if (!net_reply_within_budget(received_len, n)) {
        a->counts.over_budget++;
        j->verdict = UDPSH_DROP;
        return;
    }
    a->counts.tokens_sent++;
    j->verdict = UDPSH_REPLY;
    j->reply = out;
    j->reply_len = n;
}

static void refuse(struct udpsh_judgement *j, const char *reply, uint64_t *counter)
{
    (*counter)++;
    j->verdict = UDPSH_REPLY;
    j->reply = reply;
    j->reply_len = strlen(reply);
}

static bool mac_good(const struct udpsh_auth *a, const uint8_t *data, size_t len, const struct udpsh_request_prefix *p)
{
    struct hmac_sha256 h;
    uint8_t mac[SHA256_DIGEST_SIZE];
    hmac_sha256_init(&h, a->service.key, a->service.key_len);
    hmac_sha256_update(&h, data + 6, UDPSH_TOKEN_HEX); /* the token as sent, after "token=" */
    hmac_sha256_update(&h, " ", 1);
    hmac_sha256_update(&h, data + p->counter_at, p->counter_len);
    hmac_sha256_update(&h, " ", 1);
    hmac_sha256_update(&h, data + p->line_at, len - p->line_at);
    hmac_sha256_final(&h, mac);
    return equal_in_constant_time(mac, p->mac, sizeof mac);
}

/* The counter check and its memory. A sender can be forgotten safely once its last acceptance is two token
 * windows old: every request it made carries a token that has expired since, so none can be replayed. */
static const char *accept_counter(struct udpsh_auth *a, uint32_t ip, uint64_t counter, int64_t now_ns)
{
    struct udpsh_keyed_sender *slot = 0;
    for (unsigned i = 0; i < UDPSH_KEYED_SENDERS; i++) {
        struct udpsh_keyed_sender *s = &a->senders[i];
        if (s->used && s->ip == ip) {
            if (counter <= s->counter) {
                a->counts.replayed++;
                return UDPSH_REPLY_REPLAYED;
            }
            slot = s;
            break;
        }
    }
    for (unsigned i = 0; !slot && i < UDPSH_KEYED_SENDERS; i++) {
        struct udpsh_keyed_sender *s = &a->senders[i];
        if (!s->used || now_ns - s->last_ns > 2 * a->token_window_ns)
            slot = s;
    }
    if (!slot) {
        a->counts.senders_full++;
        return UDPSH_REPLY_SENDERS_FULL;
    }
    *slot = (struct udpsh_keyed_sender){ .ip = ip, .used = true, .counter = counter, .last_ns = now_ns };
    return 0;
}

/* The remembered answer to ip:port's request id, or NULL. */
static struct udpsh_remembered *remembered_for(struct udpsh_auth *a, uint32_t ip, uint16_t port, bool keyed,
                                               uint64_t id)
{
    for (unsigned i = 0; i < UDPSH_REMEMBERED; i++) {
        struct udpsh_remembered *r = &a->remembered[i];
        if (r->used && r->ip == ip && r->port == port && r->keyed == keyed && r->id == id)
            return r;
    }
    return 0;
}

static void repeat(struct udpsh_judgement *j, struct udpsh_remembered *r)
{
    j->verdict = UDPSH_REPEAT;
    j->remembered = r;
}

/* Whether the parsed request names running's request: same sender, same counter (keyed) or id. */
static bool names_running(const struct udpsh_auth *a, uint32_t ip, uint16_t port, const struct udpsh_request_prefix *p,
                          const struct udpsh_remembered *running)
{
    if (!running || running->ip != ip || running->port != port)
        return false;
    if (a->service.keyed)
        return running->keyed && p->has_mac && p->counter == running->id;
    return !running->keyed && p->has_id && p->id == running->id;
}

/* A request that has shown its sender: under a key, its MAC and its counter (a repeat of a remembered one, a
 * counter taken, or a refusal), else its id if it has one (a repeat, or a new id). Judges *j and returns true
 * when that settles it (a refusal or a repeat); false when the request runs, with j's id fields set. */
static bool judge_request_id(struct udpsh_auth *a, uint32_t ip, uint16_t port, const uint8_t *data, size_t len,
                             const struct udpsh_request_prefix *p, int64_t now_ns, struct udpsh_judgement *j)
{
    if (a->service.keyed) {
        if (!p->has_mac) {
            refuse(j, UDPSH_REPLY_NEEDS_MAC, &a->counts.no_mac);
            return true;
        }
        if (!mac_good(a, data, len, p)) {
            refuse(j, UDPSH_REPLY_BAD_MAC, &a->counts.bad_mac);
            return true;
        }
        struct udpsh_remembered *r = remembered_for(a, ip, port, true, p->counter);
        if (r) {
            repeat(j, r);
            return true;
        }
        const char *refusal = accept_counter(a, ip, p->counter, now_ns);
        if (refusal) {
            j->verdict = UDPSH_REPLY;
            j->reply = refusal;
            j->reply_len = strlen(refusal);
            return true;
        }
        j->keyed = true;
        j->has_id = true;
        j->id = p->counter;
    } else if (p->has_id) {
        struct udpsh_remembered *r = remembered_for(a, ip, port, false, p->id);
        if (r) {
            repeat(j, r);
            return true;
        }
        j->has_id = true;
        j->id = p->id;
    }
    return false;
}

void udpsh_auth_judge(struct udpsh_auth *a, uint32_t ip, uint16_t port, const uint8_t *data, size_t len,
                      int64_t now_ns, struct udpsh_remembered *running, struct udpsh_judgement *j)
{
    memset(j, 0, sizeof *j);
    if (udpsh_looks_like_reply(data, len)) {
        a->counts.replies_ignored++;
        j->verdict = UDPSH_DROP;
        return;
    }
    /* The prefix parse reads at most the fields' fixed widths, and the token costs one HMAC over 14 bytes
     * whatever the datagram's length. */
    struct udpsh_request_prefix p;
    int64_t expires_ns = 0;
    bool parsed = udpsh_prefix_parse(data, len, &p);
    if (!parsed || !p.has_token || !token_good(a, ip, port, p.token, now_ns, &expires_ns)) {
        if (parsed && p.has_token && names_running(a, ip, port, &p, running)) {
            repeat(j, running);
            return;
        }
        /* Unvalidated: whoever it is may spend only the one shared bucket, and only on token answers. */
        if (!ratelimit_allow_unvalidated(&a->rate, now_ns)) {
            a->counts.unvalidated_limited++;
            j->verdict = UDPSH_DROP;
            return;
        }
        give_token(a, ip, port, len, now_ns, j);
        return;
    }
    /* From here on the sender has shown that it receives at ip:port: refusals are ordinary answers, paid from
     * its own bucket. */
    if (!ratelimit_allow(&a->rate, ip, port, now_ns)) {
        a->counts.validated_limited++;
        j->verdict = UDPSH_DROP;
        return;
    }
    if (len > UDPSH_REQUEST_MAX || len - p.line_at > UDPSH_LINE_MAX + 2) {
        refuse(j, UDPSH_REPLY_TOO_LONG, &a->counts.too_long);
        return;
    }
    if (a->key_refused) {
        refuse(j, UDPSH_REPLY_KEY_REFUSED, &a->counts.key_refused);
        return;
    }
    if (judge_request_id(a, ip, port, data, len, &p, now_ns, j))
        return;
    /* Without a key a MAC proves nothing, so a keyed client's request to an unkeyed shell runs unkeyed. */
    j->verdict = UDPSH_RUN;
    j->token_expires_ns = expires_ns;
    j->line = data + p.line_at;
    j->line_len = len - p.line_at;
}

struct udpsh_remembered *udpsh_remember_start(struct udpsh_auth *a, uint32_t ip, uint16_t port,
                                             const struct udpsh_judgement *j, int64_t now_ns)
{
    if (j->verdict != UDPSH_RUN || !j->has_id)
        return 0;
    struct udpsh_remembered *slot = 0;
    for (unsigned i = 0; i < UDPSH_REMEMBERED; i++) {
        struct udpsh_remembered *r = &a->remembered[i];
        if (r->used && r->ip == ip && r->port == port) {
            slot = r;
            break;
        }
        if (!slot || (slot->used && (!r->used || r->last_ns < slot->last_ns)))
            slot = r;
    }
    slot->used = true;
    slot->ip = ip;
    slot->port = port;
    slot->keyed = j->keyed;
    slot->id = j->id;
    slot->last_ns = now_ns;
    slot->too_long = false;
    slot->datagrams = 0;
    slot->used_bytes = 0;
    return slot;
}

void udpsh_remember_datagram(struct udpsh_remembered *r, const char *data, size_t len)
{
    if (!r || r->too_long)
        return;
    if (r->datagrams == UDPSH_REMEMBERED_DATAGRAMS || len > UDPSH_REMEMBERED_BYTES - r->used_bytes) {
        r->too_long = true;
        return;
    }
    memcpy(r->bytes + r->used_bytes, data, len);
    r->lens[r->datagrams++] = (uint16_t)len;
    r->used_bytes += len;
}

void udpsh_remembered_replay(const struct udpsh_remembered *r, void (*emit)(void *arg, const char *data, size_t len),
                             void *arg)
{
    if (r->too_long) {
        emit(arg, UDPSH_REPLY_NOT_REMEMBERED, sizeof UDPSH_REPLY_NOT_REMEMBERED - 1);
        return;
    }
    size_t at = 0;
    for (unsigned i = 0; i < r->datagrams; i++) {
        emit(arg, r->bytes + at, r->lens[i]);
        at += r->lens[i];
    }
}

static bool is_reading_command(const char *name)
{
    static const char *const reading[] = { "help", "profile", "lscpu", "ps", "stacks", "tasks", "cpus", "net",
                                           "mem", "uptime" };
    for (size_t i = 0; i < sizeof reading / sizeof reading[0]; i++)
        if (strcmp(name, reading[i]) == 0)
            return true;
    return false;
}

/* `profile stream TARGET ...` unkeyed: TARGET `stop` (the command itself refuses to stop a stream to another
 * address), a bare PORT (to the requester), or HOST:PORT with HOST the requester's own address. */
static bool stream_target_allowed(const char *target, uint32_t src_ip)
{
    if (strcmp(target, "stop") == 0)
        return true;
    const char *colon = target;
    while (*colon && *colon != ':')
        colon++;
    if (!*colon)
        return true;
    char host[16];
    size_t n = (size_t)(colon - target);
    if (n >= sizeof host)
        return false;
    memcpy(host, target, n);
    host[n] = 0;
    uint32_t ip;
    return parse_ipv4(host, &ip) && ip == src_ip;
}

bool udpsh_unkeyed_allows(const char *line, uint32_t src_ip, bool (*is_command)(const char *name))
{
    char copy[UDPSH_LINE_MAX + 1];
    if (strlcpy(copy, line, sizeof copy) >= sizeof copy)
        return false;
    char *argv[SHELL_MAX_ARGS];
    int argc = split_words(copy, argv, SHELL_MAX_ARGS);
    if (argc == 0)
        return true;
    if (argc < 0)
        return !is_command(argv[0]) || is_reading_command(argv[0]);
    /* `net wedge MS` stops the network task: the only `net` that changes anything. */
    if (strcmp(argv[0], "net") == 0 && argc >= 2 && strcmp(argv[1], "wedge") == 0)
        return false;
    /* a stream sends for as long as it runs: only to the proven address that asked, as netload send */
    if (strcmp(argv[0], "profile") == 0 && argc >= 3 && strcmp(argv[1], "stream") == 0)
        return stream_target_allowed(argv[2], src_ip);
    if (is_reading_command(argv[0]) || !is_command(argv[0]))
        return true;
    if (strcmp(argv[0], "netload") == 0 && argc >= 2) {
        if (strcmp(argv[1], "sink") == 0)
            return true;
        uint32_t host;
        if (strcmp(argv[1], "send") == 0 && argc >= 3 && parse_ipv4(argv[2], &host) && host == src_ip)
            return true;
    }
    return false;
}
