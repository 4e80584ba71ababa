/* kernel/httpd/http_host.c: the Host a request may name (kernel/httpd/http_host.h says which and why). */
#include "kernel/httpd/http_host.h"

#include "kernel/lib/format.h"
#include "kernel/lib/string.h"

static char lower(char c)
{
    return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static bool is_hex(char c)
{
    return is_digit(c) || (lower(c) >= 'a' && lower(c) <= 'f');
}

/* s[0..len) is a port: 1 to 5 digits (its value is the transport's business, not the Host check's). */
static bool is_port(const char *s, size_t len)
{
    if (len == 0 || len > 5)
        return false;
    for (size_t i = 0; i < len; i++)
        if (!is_digit(s[i]))
            return false;
    return true;
}

/* s[0..len) is a dotted quad, each part 0..255 in at most 3 digits. */
static bool is_ipv4(const char *s, size_t len)
{
    unsigned parts = 0;
    size_t i = 0;
    while (parts < 4) {
        size_t digits = 0;
        unsigned value = 0;
        while (i < len && is_digit(s[i]) && digits < 4)
            value = value * 10 + (unsigned)(s[i++] - '0'), digits++;
        if (digits == 0 || digits > 3 || value > 255)
            return false;
        parts++;
        if (parts < 4 && (i >= len || s[i++] != '.'))
            return false;
    }
    return i == len;
}

/* s[0..len) is an IPv6 literal's inside: hex digits, colons and dots (an embedded IPv4), at least two colons. The
 * shape is enough: no name can look like it, and a wrong address is lwIP's to not reach, not a rebinding. */
static bool is_ipv6_inside(const char *s, size_t len)
{
    unsigned colons = 0;
    if (len < 2 || len > 45)
        return false;
    for (size_t i = 0; i < len; i++) {
        if (s[i] == ':')
            colons++;
        else if (!is_hex(s[i]) && s[i] != '.')
            return false;
    }
    return colons >= 2;
}

/* host[0..len) without its port: the length of what comes before ":port", or len when there is none; -1 when
 * what follows a colon is not a port. Bracketed IPv6 keeps its colons. */
static long without_port(const char *host, size_t len)
{
    size_t end = len;
    if (len && host[0] == '[') {
        end = 0;
        while (end < len && host[end] != ']')
            end++;
        if (end == len)
            return -1;
        end++; /* past ']' */
    } else {
        while (end > 0 && host[end - 1] != ':')
            end--;
        end = end ? end - 1 : len;
    }
    if (end == len)
        return (long)len;
    if (host[end] != ':' || !is_port(host + end + 1, len - end - 1))
        return -1;
    return (long)end;
}

static bool is_name_char(char c)
{
    return is_digit(c) || (lower(c) >= 'a' && lower(c) <= 'z') || c == '-' || c == '.';
}

/* s[0..len) equals name (lower case), ignoring case and one trailing dot on s. */
static bool names_equal(const char *s, size_t len, const char *name)
{
    if (len && s[len - 1] == '.')
        len--;
    size_t n = strlen(name);
    if (n != len)
        return false;
    for (size_t i = 0; i < len; i++)
        if (lower(s[i]) != name[i])
            return false;
    return true;
}

bool http_host_acceptable(const char *host, size_t len, const struct http_host_names *names)
{
    long end = without_port(host, len);
    if (end <= 0)
        return false;
    size_t n = (size_t)end;
    if (host[0] == '[')
        return host[n - 1] == ']' && is_ipv6_inside(host + 1, n - 2);
    if (is_ipv4(host, n) || names_equal(host, n, "localhost"))
        return true;
    for (size_t i = 0; i < n; i++)
        if (!is_name_char(host[i]))
            return false;
    for (unsigned i = 0; names && i < names->count; i++)
        if (names_equal(host, n, names->name[i]))
            return true;
    return false;
}

/* One name of pprof.host=: labels of 1..63 name characters, no empty label, at most HTTP_HOST_NAME_MAX. */
static bool take_name(const char *s, size_t len, char *out, char *error, size_t error_cap)
{
    if (len && s[len - 1] == '.')
        len--;
    if (len == 0 || len > HTTP_HOST_NAME_MAX) {
        ksnprintf(error, error_cap, "a name of %u bytes (1..%u)", (unsigned)len, HTTP_HOST_NAME_MAX);
        return false;
    }
    size_t label = 0;
    for (size_t i = 0; i < len; i++) {
        bool good = s[i] == '.' ? label > 0 : is_name_char(s[i]) && label < 63;
        if (!good) {
            ksnprintf(error, error_cap, "'%.*s' is not a DNS name", (int)(len < 40 ? len : 40), s);
            return false;
        }
        label = s[i] == '.' ? 0 : label + 1;
        out[i] = lower(s[i]);
    }
    out[len] = 0;
    return true;
}

bool http_host_names_parse(const char *value, struct http_host_names *out, char *error, size_t error_cap)
{
    struct http_host_names names = { 0 };
    const char *at = value;
    for (;;) {
        const char *comma = at;
        while (*comma && *comma != ',')
            comma++;
        if (names.count == HTTP_HOST_NAMES) {
            ksnprintf(error, error_cap, "more than %u names", HTTP_HOST_NAMES);
            return false;
        }
        if (!take_name(at, (size_t)(comma - at), names.name[names.count], error, error_cap))
            return false;
        names.count++;
        if (!*comma)
            break;
        at = comma + 1;
    }
    *out = names;
    return true;
}
