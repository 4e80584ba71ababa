/* kernel/httpd/http_request.c: the HTTP/1.x request head, read byte by byte as it arrives and judged line by
 * line (kernel/httpd/http_request.h says what is refused and with which status). Taking each byte on its own
 * is what makes any split of the same bytes give the same answer. */
#include "kernel/httpd/http_request.h"

#include <stdarg.h>

#include "kernel/lib/format.h"
#include "kernel/lib/hex.h"
#include "kernel/lib/string.h"

void http_request_init(struct http_request *r)
{
    /* Everything but the line buffer, which line_len bounds. */
    memset(r, 0, offsetof(struct http_request, line));
}

__attribute__((format(printf, 3, 4))) static enum http_parse refuse(struct http_request *r, int status,
                                                                    const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    kvsnprintf(r->reason, sizeof r->reason, fmt, ap);
    va_end(ap);
    r->status = status;
    r->state = HTTP_PARSE_REFUSED;
    return r->state;
}

static char lower(char c)
{
    return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

/* RFC 9110's tchar: what a method or a header name may hold. */
static bool is_tchar(char c)
{
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))
        return true;
    for (const char *p = "!#$%&'*+-.^_`|~"; *p; p++)
        if (c == *p)
            return true;
    return false;
}

static bool all_tchars(const char *s, size_t len)
{
    if (len == 0)
        return false;
    for (size_t i = 0; i < len; i++)
        if (!is_tchar(s[i]))
            return false;
    return true;
}

static bool equal_nocase(const char *a, size_t len, const char *b)
{
    size_t i = 0;
    for (; i < len && b[i]; i++)
        if (lower(a[i]) != lower(b[i]))
            return false;
    return i == len && !b[i];
}

/* Every %-escape of the query is two hex digits. */
static bool query_escapes_good(const char *q, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (q[i] == '%' && (i + 2 >= len || hex_value(q[i + 1]) < 0 || hex_value(q[i + 2]) < 0))
            return false;
    return true;
}

static enum http_parse request_line(struct http_request *r, const char *s, size_t len)
{
    size_t sp1 = 0;
    while (sp1 < len && s[sp1] != ' ')
        sp1++;
    size_t sp2 = sp1 + 1;
    while (sp2 < len && s[sp2] != ' ')
        sp2++;
    size_t sp3 = sp2 + 1;
    while (sp3 < len && s[sp3] != ' ')
        sp3++;
    if (sp1 >= len || sp2 >= len || sp3 < len)
        return refuse(r, 400, "request line is not METHOD TARGET VERSION");
    const char *method = s, *target = s + sp1 + 1, *version = s + sp2 + 1;
    size_t method_len = sp1, target_len = sp2 - sp1 - 1, version_len = len - sp2 - 1;
    if (!all_tchars(method, method_len))
        return refuse(r, 400, "method is not a token");
    if (version_len != 8 || memcmp(version, "HTTP/", 5) != 0 || version[5] < '0' || version[5] > '9' ||
        version[6] != '.' || version[7] < '0' || version[7] > '9')
        return refuse(r, 400, "version is not HTTP/x.y");
    if (version[5] != '1' || (version[7] != '0' && version[7] != '1'))
        return refuse(r, 505, "HTTP/%c.%c not supported: HTTP/1.0 or HTTP/1.1 only", version[5], version[7]);
    r->version_minor = version[7] - '0';
    if (method_len != 3 || memcmp(method, "GET", 3) != 0)
        return refuse(r, 405, "method %.*s not allowed: GET only", (int)(method_len < 16 ? method_len : 16),
                      method);
    if (target_len > HTTP_TARGET_MAX)
        return refuse(r, 414, "target over %u bytes", HTTP_TARGET_MAX);
    if (target_len == 0 || target[0] != '/')
        return refuse(r, 400, "target does not start with /");
    for (size_t i = 0; i < target_len; i++)
        if ((unsigned char)target[i] > 0x7e)
            return refuse(r, 400, "target holds a byte outside ASCII");
    memcpy(r->target, target, target_len);
    r->target[target_len] = 0;
    size_t path_len = 0;
    while (path_len < target_len && target[path_len] != '?')
        path_len++;
    r->path_len = path_len;
    if (path_len < target_len && !query_escapes_good(target + path_len + 1, target_len - path_len - 1))
        return refuse(r, 400, "query has a bad %%-escape");
    return HTTP_PARSE_MORE;
}

static void take_bearer(struct http_request *r, const char *v, size_t len)
{
    if (len < 7 || !equal_nocase(v, 6, "bearer") || v[6] != ' ')
        return; /* another scheme: no bearer token, refused as missing */
    size_t i = 7;
    while (i < len && v[i] == ' ')
        i++;
    r->bearer_present = true;
    if (len - i > HTTP_BEARER_MAX) {
        r->bearer_too_long = true;
        return;
    }
    memcpy(r->bearer, v + i, len - i);
    r->bearer[len - i] = 0;
}

static enum http_parse header_line(struct http_request *r, const char *s, size_t len)
{
    if (len == 0) {
        if (r->version_minor == 1 && !r->has_host)
            return refuse(r, 400, "HTTP/1.1 request without Host");
        r->state = HTTP_PARSE_DONE;
        return r->state;
    }
    if (s[0] == ' ' || s[0] == '\t')
        return refuse(r, 400, "folded header line");
    size_t colon = 0;
    while (colon < len && s[colon] != ':')
        colon++;
    if (colon == len || !all_tchars(s, colon))
        return refuse(r, 400, "header line is not NAME: VALUE");
    const char *v = s + colon + 1;
    size_t vlen = len - colon - 1;
    while (vlen && (*v == ' ' || *v == '\t'))
        v++, vlen--;
    while (vlen && (v[vlen - 1] == ' ' || v[vlen - 1] == '\t'))
        vlen--;
    if (equal_nocase(s, colon, "content-length")) {
        bool digits = vlen > 0;
        bool zero = true;
        for (size_t i = 0; i < vlen; i++) {
            digits = digits && v[i] >= '0' && v[i] <= '9';
            zero = zero && v[i] == '0';
        }
        if (!digits)
            return refuse(r, 400, "Content-Length is not a number");
        if (!zero)
            return refuse(r, 400, "a GET has no body (Content-Length)");
    } else if (equal_nocase(s, colon, "transfer-encoding")) {
        return refuse(r, 400, "a GET has no body (Transfer-Encoding)");
    } else if (equal_nocase(s, colon, "host")) {
        if (r->has_host)
            return refuse(r, 400, "two Host headers");
        if (vlen > HTTP_HOST_MAX)
            return refuse(r, 400, "Host over %u bytes", HTTP_HOST_MAX);
        r->has_host = true;
        memcpy(r->host, v, vlen);
        r->host[vlen] = 0;
        r->host_len = vlen;
    } else if (equal_nocase(s, colon, "authorization")) {
        if (r->has_auth)
            return refuse(r, 400, "two Authorization headers");
        r->has_auth = true;
        take_bearer(r, v, vlen);
    }
    return HTTP_PARSE_MORE;
}

static enum http_parse line_ended(struct http_request *r)
{
    size_t len = r->line_len;
    r->line_len = 0;
    if (len && r->line[len - 1] == '\r')
        len--;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)r->line[i];
        if ((c < 0x20 && c != '\t') || c == 0x7f)
            return refuse(r, 400, "control byte in the %s", r->lines ? "headers" : "request line");
    }
    if (r->lines == 0 && len == 0)
        return HTTP_PARSE_MORE; /* RFC 9112 2.2: empty lines before the request line are ignored */
    r->lines++;
    return r->lines == 1 ? request_line(r, r->line, len) : header_line(r, r->line, len);
}

enum http_parse http_request_feed(struct http_request *r, const uint8_t *data, size_t len, size_t *used)
{
    size_t i = 0;
    for (; i < len && r->state == HTTP_PARSE_MORE; i++) {
        if (r->head_bytes == HTTP_HEAD_MAX) {
            if (r->lines == 0)
                refuse(r, 414, "request line over %u bytes", HTTP_HEAD_MAX);
            else
                refuse(r, 431, "request line and headers over %u bytes", HTTP_HEAD_MAX);
            break;
        }
        r->head_bytes++;
        if (data[i] == '\n')
            line_ended(r);
        else
            r->line[r->line_len++] = (char)data[i];
    }
    if (used)
        *used = i;
    return r->state;
}

bool http_request_path_is(const struct http_request *r, const char *path)
{
    return r->state == HTTP_PARSE_DONE && strlen(path) == r->path_len && memcmp(r->target, path, r->path_len) == 0;
}

/* Decodes [s, s + len) into out; false when it does not fit. The escapes were checked in request_line. */
static bool decode(const char *s, size_t len, char *out, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (c == '+') {
            c = ' ';
        } else if (c == '%') {
            c = (char)(hex_value(s[i + 1]) << 4 | hex_value(s[i + 2]));
            i += 2;
        }
        if (n + 1 >= cap)
            return false;
        out[n++] = c;
    }
    if (cap == 0)
        return false;
    out[n] = 0;
    return true;
}

int http_request_query(const struct http_request *r, const char *name, char *out, size_t cap)
{
    if (r->state != HTTP_PARSE_DONE || r->target[r->path_len] != '?')
        return 0;
    const char *q = r->target + r->path_len + 1;
    size_t name_len = strlen(name);
    while (*q) {
        size_t len = 0;
        while (q[len] && q[len] != '&')
            len++;
        size_t eq = 0;
        while (eq < len && q[eq] != '=')
            eq++;
        char key[64];
        if (decode(q, eq, key, sizeof key) && strlen(key) == name_len && memcmp(key, name, name_len) == 0)
            return decode(q + (eq < len ? eq + 1 : len), eq < len ? len - eq - 1 : 0, out, cap) ? 1 : -1;
        q += len;
        if (*q == '&')
            q++;
    }
    return 0;
}
