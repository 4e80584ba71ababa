/* kernel/httpd/http_request.h: an HTTP/1.x request head read as its bytes arrive, in pieces of any size -- the
 * request line and headers of the pprof.http= server (kernel/httpd/httpd.c), judged strictly: the first refusal
 * ends it with its status and a one-line reason, and a complete head is a GET with its path, its query and its
 * bearer token. Pure (no lwIP, no heap, no clock), so the unit tests and the fuzzer drive it.
 *
 * What is refused, and with what (checked as each line ends, in this order for the request line):
 *   431  the request line and headers together over HTTP_HEAD_MAX bytes (a request line alone that long: 414)
 *   400  a request line not METHOD SP TARGET SP HTTP/x.y; a version not HTTP/<digit>.<digit>
 *   505  HTTP/x.y other than 1.0 and 1.1
 *   405  a method other than GET (the server's answer adds `Allow: GET`)
 *   414  a target over HTTP_TARGET_MAX bytes
 *   400  a target not starting with '/', or with bytes outside printable ASCII, or a query whose %-escapes are
 *        bad; a header line that is not NAME: VALUE (a token, a colon, no space before it), a folded line, a
 *        control byte or a stray CR; Content-Length other than 0, any Transfer-Encoding (a GET has no body);
 *        two Authorization or Host headers; HTTP/1.1 without Host; a Host over HTTP_HOST_MAX bytes.
 * Whether the Host is this server's is kernel/httpd/http_host.h's question, asked of a complete head. */
#ifndef KERNEL_HTTPD_HTTP_REQUEST_H
#define KERNEL_HTTPD_HTTP_REQUEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel/httpd/http_host.h"

#define HTTP_HEAD_MAX 8192   /* the request line and every header line, their line ends included */
#define HTTP_TARGET_MAX 1024 /* the request target: path and query */
#define HTTP_BEARER_MAX 128  /* a longer token is kept as "too long", which matches no token */
#define HTTP_REASON_MAX 80

enum http_parse {
    HTTP_PARSE_MORE = 0,  /* the head is not complete yet */
    HTTP_PARSE_DONE = 1,  /* a complete, acceptable GET */
    HTTP_PARSE_REFUSED = 2, /* status and reason say why; nothing more is read */
};

struct http_request {
    enum http_parse state;
    int status;                     /* REFUSED: the status to answer with */
    char reason[HTTP_REASON_MAX];   /* REFUSED: one line, no newline */
    size_t head_bytes;              /* bytes of the head taken so far */
    unsigned lines;                 /* lines ended so far (0: still in the request line) */
    int version_minor;              /* 0 or 1 */
    bool has_host, has_auth;
    bool bearer_present;            /* Authorization: Bearer <token> was sent */
    bool bearer_too_long;
    char bearer[HTTP_BEARER_MAX + 1];
    char host[HTTP_HOST_MAX + 1];   /* the Host header's value, trimmed, NUL-terminated; "" without one */
    size_t host_len;
    char target[HTTP_TARGET_MAX + 1]; /* NUL-terminated */
    size_t path_len;                /* target[0 .. path_len) is the path; a query follows after '?' */
    size_t line_len;
    char line[HTTP_HEAD_MAX];       /* the line being read */
};

void http_request_init(struct http_request *r);

/* Takes len bytes. Returns the state after them, and how many were used in *used (fewer than len only when the
 * head ended or was refused within them: what follows a GET's head is not the head's). Taking the same bytes
 * in any split gives the same result. */
enum http_parse http_request_feed(struct http_request *r, const uint8_t *data, size_t len, size_t *used);

/* DONE requests: the path ("/debug/pprof/"), without the query. */
bool http_request_path_is(const struct http_request *r, const char *path);

/* DONE requests: the value of query parameter name, %-decoded ('+' is a space) into out (cap bytes, NUL
 * included). 1 found, 0 absent, -1 too long for out. The first of several with one name counts. */
int http_request_query(const struct http_request *r, const char *name, char *out, size_t cap);

#endif
