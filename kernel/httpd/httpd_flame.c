/* kernel/httpd/httpd_flame.c: the pprof.http= server's flame graph (/debug/flamegraph?seconds=N&kind=cpu|wall&
 * tag=key:value) -- its query read into a profile's request, started through the worker's one door for profiles
 * (httpd_profile_start: the same one-at-a-time slot, 429 and busy line as /debug/pprof/profile), answered by the
 * profile's task as SVG (kernel/profiler/flame.h) -- and the pprof of the same window: each flame graph is
 * numbered, its head names its number, and the last one's pprof profile, encoded from the very fold the picture
 * was drawn from, is kept here until the next flame graph replaces it, for /debug/pprof/profile?run=N. The kept
 * body is written only by the profile's task while it holds the slot and read only by the worker while no
 * profile holds it, so it needs no lock. */
#include "kernel/httpd/httpd_conn.h"

#include "kernel/lib/format.h"
#include "kernel/lib/parse.h"
#include "kernel/lib/string.h"

static struct pprof_body kept;   /* the last flame graph's pprof, on the heap; data NULL before the first */
static uint32_t kept_run;        /* its number */
static enum pprof_kind kept_kind;
static uint32_t last_run;        /* the worker's: the number the last flame graph started took */

static void bad(struct httpd_response *out, const char *line)
{
    httpd_response_text(out, 400, 0, line);
}

/* ?kind=cpu|wall (absent: cpu); false when bad (out answered 400). */
static bool query_kind(const struct http_request *req, enum pprof_kind *kind, struct httpd_response *out)
{
    char value[8];
    int found = http_request_query(req, "kind", value, sizeof value);
    *kind = PPROF_CPU;
    if (found == 0 || (found > 0 && strcmp(value, "cpu") == 0))
        return true;
    if (found > 0 && strcmp(value, "wall") == 0) {
        *kind = PPROF_WALL;
        return true;
    }
    bad(out, "kind must be cpu or wall");
    return false;
}

/* ?tag=key:value, the console's key=value filter (span:N a span); absent: every sample. False when bad. */
static bool query_tag(const struct http_request *req, struct pprof_flame_ask *ask, struct httpd_response *out)
{
    char value[sizeof ask->tag];
    int found = http_request_query(req, "tag", value, sizeof value);
    if (found == 0 || (found > 0 && pprof_flame_tag(value, ask)))
        return true;
    bad(out, "tag must be key:value, a label pair as the console's profile key=value filter takes");
    return false;
}

bool httpd_flamegraph(struct httpd_conn *c, struct httpd_response *out)
{
    uint32_t seconds;
    enum pprof_kind kind;
    struct pprof_flame_ask ask;
    memset(&ask, 0, sizeof ask);
    if (httpd_query_seconds(&c->req, &seconds, out) < 0 || !query_kind(&c->req, &kind, out) ||
        !query_tag(&c->req, &ask, out))
        return false; /* nothing started, nothing changed */
    ask.run = last_run + 1;
    if (!httpd_profile_start(c, out, kind, seconds, &ask))
        return false;
    last_run = ask.run;
    return true;
}

void httpd_flame_keep(struct pprof_body *body, uint32_t run, enum pprof_kind kind)
{
    pprof_body_free(&kept);
    kept = *body;
    kept_run = run;
    kept_kind = kind;
    *body = (struct pprof_body){ NULL, 0, false };
}

bool httpd_flame_kept(struct httpd_conn *c, struct httpd_response *out)
{
    char value[12];
    uint64_t run = 0;
    int found = http_request_query(&c->req, "run", value, sizeof value);
    if (found < 0 || !parse_u64_range(value, 1, UINT32_MAX, &run)) {
        bad(out, "run must be a flame graph's number 1..4294967295");
        return false;
    }
    if (httpd_profile_held(out))
        return false; /* the kept body may be being replaced */
    if (!kept.data || kept_run != run) {
        char line[96];
        if (kept.data)
            ksnprintf(line, sizeof line, "run %u is not kept: only the last flame graph's pprof is (run %u)",
                      (uint32_t)run, kept_run);
        else
            ksnprintf(line, sizeof line, "run %u is not kept: no flame graph has been drawn", (uint32_t)run);
        httpd_response_text(out, 404, 0, line);
        return false;
    }
    httpd_response_profile(out, kept_kind == PPROF_WALL ? "fgprof" : "profile", &kept);
    return false;
}
