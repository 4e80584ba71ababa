/* kernel/httpd/http_host.h: which Host a request to the pprof.http= server may name -- the defence against DNS
 * rebinding. A web page from anywhere can point a name it owns at the kernel's address and then read the
 * server through the visitor's browser, which sends that name as Host. So a Host that is a DNS name is refused
 * (421) unless the command line gave it (pprof.host=NAME[,NAME...]); an IP address literal, with or without a
 * port, is always taken, since a rebinding page needs a name and users reach the kernel by address through
 * forwarded ports and NAT. `localhost` is taken too: no page can make a browser send it for its own origin.
 * Pure (no lwIP, no heap), so the unit tests and the fuzzer drive it. */
#ifndef KERNEL_HTTPD_HTTP_HOST_H
#define KERNEL_HTTPD_HTTP_HOST_H

#include <stdbool.h>
#include <stddef.h>

#define HTTP_HOST_MAX 255       /* a Host value: a DNS name's longest, with a port */
#define HTTP_HOST_NAMES 4       /* names pprof.host= may give */
#define HTTP_HOST_NAME_MAX 253  /* a DNS name's longest */
#define HTTP_HOST_ERROR_MAX 96

struct http_host_names {
    unsigned count;
    char name[HTTP_HOST_NAMES][HTTP_HOST_NAME_MAX + 1]; /* lower case, no trailing dot */
};

/* Parses pprof.host='s value: 1..HTTP_HOST_NAMES DNS names separated by commas (letters, digits, '-' and '.',
 * labels of 1..63). False with a one-line reason in error (nothing kept) when it is not that. */
bool http_host_names_parse(const char *value, struct http_host_names *out, char *error, size_t error_cap);

/* Whether a request naming Host host (len bytes, as sent) is this server's: an IPv4 literal a.b.c.d or an IPv6
 * literal in brackets, either with an optional :port; localhost; or a name in names (case and a trailing dot
 * aside), with an optional :port. */
bool http_host_acceptable(const char *host, size_t len, const struct http_host_names *names);

#endif
