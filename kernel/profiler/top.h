/* kernel/profiler/top.h: `profile top`'s table (kernel/profiler/top.c) -- the hottest functions of a run of
 * intervals, each a leaf symbol with its share of the last interval and of every interval since the start, fed
 * one interval's fold (kernel/profiler/fold.h) at a time -- and the parser of its words. Pure apart from the
 * sink, so the host tests check the order, the shares, the row limit and every bad argument. The command that
 * runs the intervals and redraws the table is kernel/shell/cmd_profile_top.c. */
#ifndef KERNEL_PROFILER_TOP_H
#define KERNEL_PROFILER_TOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel/lib/sink.h"
#include "kernel/profiler/fold.h"
#include "kernel/profiler/run.h"

#define PROFILE_TOP_MS_MIN 100      /* an interval shorter holds too few ticks (100 Hz) to rank anything */
#define PROFILE_TOP_MS_MAX 10000
#define PROFILE_TOP_MS_DEFAULT 1000
#define PROFILE_TOP_INTERVALS_MAX 1000
#define PROFILE_TOP_UDP_INTERVALS 5 /* over UDP no key can stop it: a fixed count when none is given */
#define PROFILE_TOP_UDP_MS_MAX 30000 /* over UDP, ms x N at most: a token lives at least 30 s */
#define PROFILE_TOP_ROWS 10         /* functions a redraw shows: with its 4 other lines, one 25-line screen */
#define PROFILE_TOP_FUNCS 256       /* distinct leaves kept since the start; more are summed as the rest */
/* What starts each frame on a console (not over UDP): cursor home, then erase everything below it. The only
 * control bytes a command writes to the shell's output. */
#define PROFILE_TOP_CLEAR "\033[H\033[J"

struct profile_top_request {
    uint32_t ms;        /* each interval's window */
    uint32_t intervals; /* how many; 0: until a key is pressed (the console only) */
};

/* `profile top [ms] [N]` (argv[0] "profile", argv[1] "top"). udp: the UDP shell's, where N defaults to
 * PROFILE_TOP_UDP_INTERVALS and ms x N is at most PROFILE_TOP_UDP_MS_MAX. False, with one line (no newline)
 * saying what is wrong in why, for anything malformed, out of range or extra; *req is then unspecified. */
bool profile_top_parse_args(int argc, char **argv, bool udp, struct profile_top_request *req, char *why,
                            size_t cap);

/* One function: a leaf symbol (its start), or an address that resolved to none (name NULL). */
struct profile_top_func {
    uint64_t leaf;
    const char *name;
    uint64_t last;  /* weight in the last interval */
    uint64_t total; /* weight in every interval so far */
};

struct profile_top {
    struct profile_top_func funcs[PROFILE_TOP_FUNCS]; /* first-seen order, which breaks ties */
    uint32_t used;
    uint32_t intervals;                 /* intervals added */
    uint64_t last_weight, total_weight; /* every sample's weight: what the shares are of */
    uint64_t last_samples, total_samples;
    uint64_t rest_last, rest_total;     /* weights of leaves that found funcs full */
};

void profile_top_init(struct profile_top *top);
/* A new interval: the last one's shares are cleared, then every chain fold holds is added by its leaf. */
void profile_top_add(struct profile_top *top, const struct profile_fold *fold);
/* The frame of one redraw: "top 3/5: 500 ms, 212 samples (1034 since start)" ("top 3:" without an end), the
 * run's source line as the report words it, the column heads, and the `rows` hottest functions by their share
 * of the last interval (equal ones by their share since the start, then first seen), then "(rest)" when leaves
 * found the table full. run: the last interval's. */
void profile_top_print(const struct profile_top *top, const struct profile_run *run, uint32_t ms,
                       uint32_t of_intervals, unsigned rows, struct sink *out);

#endif
