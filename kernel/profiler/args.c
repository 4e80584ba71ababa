/* kernel/profiler/args.c: the parser of `profile [ms] [pid|all] [chains|raw] [key=value] [wall]`'s words into a
 * request (kernel/profiler/args.h). Pure: no run is started here, so the host tests can try every bad form. */
#include "kernel/profiler/args.h"

#include "kernel/labels.h"
#include "kernel/lib/parse.h"
#include "kernel/lib/string.h"

bool profile_parse_args(int argc, char **argv, struct profile_request *req)
{
    req->ms = PROFILE_MS_DEFAULT;
    req->filter.by_pid = false;
    req->filter.pid = 0;
    req->chains = PROFILE_CHAINS_DEFAULT;
    req->filter.by_label = false;
    req->raw = false;
    req->wall = false;

    /* The words that are not positional come out first: `raw`, and one filter recognised by its '='. */
    char *pos[3];
    int npos = 0;
    for (int i = 1; i < argc; i++) {
        bool has_eq = false;
        for (const char *p = argv[i]; *p && !has_eq; p++)
            has_eq = *p == '=';
        if (has_eq) {
            if (req->filter.by_label || !label_parse_pair(argv[i], &req->filter.label))
                return false;
            req->filter.by_label = true;
        } else if (strcmp(argv[i], "raw") == 0) {
            if (req->raw)
                return false;
            req->raw = true;
        } else if (strcmp(argv[i], "wall") == 0) {
            if (req->wall)
                return false;
            req->wall = true;
        } else {
            if (npos == 3)
                return false;
            pos[npos++] = argv[i];
        }
    }
    if (req->raw && npos > 2)
        return false; /* raw prints every sample: a chain count means nothing */

    uint64_t value;
    if (npos > 0) {
        if (!parse_u64_range(pos[0], PROFILE_MS_MIN, PROFILE_MS_MAX, &value))
            return false;
        req->ms = (uint32_t)value;
    }
    /* `all` is how a chain count is given without inventing a pid to filter by. */
    if (npos > 1 && strcmp(pos[1], "all") != 0) {
        if (!parse_u64_range(pos[1], 0, UINT32_MAX, &value))
            return false;
        req->filter.by_pid = true;
        req->filter.pid = (uint32_t)value;
    }
    if (npos > 2) {
        if (!parse_u64_range(pos[2], PROFILE_CHAINS_MIN, PROFILE_CHAINS_MAX, &value))
            return false;
        req->chains = (unsigned)value;
    }
    return true;
}
