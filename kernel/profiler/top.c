/* kernel/profiler/top.c: `profile top`'s table (kernel/profiler/top.h). Each interval is an ordinary run folded
 * by the fold (kernel/profiler/fold.c); this only sums its chains by leaf symbol -- `top` answers "which
 * function", not "which call chain" -- into a table kept across intervals, and prints it with the report's own
 * source line and percentages (kernel/profiler/report.h). Pure apart from the sink, so the host tests drive it
 * with folds made from synthetic records. */
#include "kernel/profiler/top.h"

#include "kernel/lib/format.h"
#include "kernel/lib/parse.h"
#include "kernel/profiler/report.h"

/* ---- the words ------------------------------------------------------------------------------------- */

/* word as a refusal may quote it: its first 20 bytes, each byte that is not printable ASCII shown as '?' (a
 * UDP datagram or a fuzzer's line may hold any byte, and a reply must stay text). */
static const char *quoted(const char *word, char shown[21])
{
    size_t n = 0;
    for (; word[n] && n < 20; n++)
        shown[n] = word[n] >= 0x20 && word[n] < 0x7f ? word[n] : '?';
    shown[n] = '\0';
    return shown;
}

bool profile_top_parse_args(int argc, char **argv, bool udp, struct profile_top_request *req, char *why,
                            size_t cap)
{
    char shown[21];
    req->ms = PROFILE_TOP_MS_DEFAULT;
    req->intervals = udp ? PROFILE_TOP_UDP_INTERVALS : 0;
    if (argc > 4) {
        ksnprintf(why, cap, "usage: profile top [ms] [N]");
        return false;
    }
    uint64_t v;
    if (argc > 2) {
        if (!parse_u64_range(argv[2], PROFILE_TOP_MS_MIN, PROFILE_TOP_MS_MAX, &v)) {
            ksnprintf(why, cap, "profile top: the interval must be %u..%u ms, not %s", PROFILE_TOP_MS_MIN,
                      PROFILE_TOP_MS_MAX, quoted(argv[2], shown));
            return false;
        }
        req->ms = (uint32_t)v;
    }
    if (argc > 3) {
        if (!parse_u64_range(argv[3], 1, PROFILE_TOP_INTERVALS_MAX, &v)) {
            ksnprintf(why, cap, "profile top: the number of intervals must be 1..%u, not %s",
                      PROFILE_TOP_INTERVALS_MAX, quoted(argv[3], shown));
            return false;
        }
        req->intervals = (uint32_t)v;
    }
    if (udp && (uint64_t)req->ms * req->intervals > PROFILE_TOP_UDP_MS_MAX) {
        ksnprintf(why, cap, "profile top: over UDP at most %u ms in all (ms x N), not %llu", PROFILE_TOP_UDP_MS_MAX,
                  (unsigned long long)req->ms * req->intervals);
        return false;
    }
    return true;
}

/* ---- the table ------------------------------------------------------------------------------------- */

void profile_top_init(struct profile_top *top)
{
    top->used = 0;
    top->intervals = 0;
    top->last_weight = top->total_weight = 0;
    top->last_samples = top->total_samples = 0;
    top->rest_last = top->rest_total = 0;
}

/* The row of leaf (resolved or not), made when new; NULL when the table is full. A linear search: a few
 * hundred rows, a hundred-odd chains an interval, once a second. */
static struct profile_top_func *func_of(struct profile_top *top, const struct profile_chain *c)
{
    for (uint32_t i = 0; i < top->used; i++) {
        struct profile_top_func *f = &top->funcs[i];
        if (f->leaf == c->leaf && (f->name != NULL) == (c->name != NULL))
            return f;
    }
    if (top->used == PROFILE_TOP_FUNCS)
        return NULL;
    struct profile_top_func *f = &top->funcs[top->used++];
    *f = (struct profile_top_func){ .leaf = c->leaf, .name = c->name };
    return f;
}

void profile_top_add(struct profile_top *top, const struct profile_fold *fold)
{
    for (uint32_t i = 0; i < top->used; i++)
        top->funcs[i].last = 0;
    top->rest_last = 0;
    top->intervals++;
    top->last_weight = fold->weight;
    top->total_weight += fold->weight;
    top->last_samples = fold->samples;
    top->total_samples += fold->samples;
    for (uint32_t i = 0; i < fold->used; i++) {
        const struct profile_chain *c = &fold->chains[i];
        struct profile_top_func *f = func_of(top, c);
        if (f) {
            f->last += c->weight;
            f->total += c->weight;
        } else {
            top->rest_last += c->weight;
            top->rest_total += c->weight;
        }
    }
}

/* Hottest in the last interval first; then since the start; then first seen (insertion sort is stable). */
static bool hotter(const struct profile_top_func *a, const struct profile_top_func *b)
{
    return a->last != b->last ? a->last > b->last : a->total > b->total;
}

static void sort_hottest(const struct profile_top *top, uint16_t *order)
{
    for (uint32_t i = 0; i < top->used; i++) {
        uint32_t j = i;
        while (j > 0 && hotter(&top->funcs[i], &top->funcs[order[j - 1]])) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = (uint16_t)i;
    }
}

/* A share right-aligned in 7 columns, as the report words it ("62.5%"). */
static void print_share(struct sink *out, uint64_t part, uint64_t whole)
{
    char text[16];
    struct buffer_sink b;
    buffer_sink_init(&b, text, sizeof text);
    profile_report_print_percent(&b.sink, part, whole);
    sink_printf(out, "%*s", 7, text);
}

static void print_row(struct sink *out, const struct profile_top *top, uint64_t last, uint64_t total,
                      const struct profile_top_func *f)
{
    print_share(out, last, top->last_weight);
    print_share(out, total, top->total_weight);
    if (!f)
        sink_puts(out, "  (the rest: more functions than the table holds)\n");
    else if (f->name)
        sink_printf(out, "  %s\n", f->name);
    else
        sink_printf(out, "  0x%llx\n", (unsigned long long)f->leaf);
}

void profile_top_print(const struct profile_top *top, const struct profile_run *run, uint32_t ms,
                       uint32_t of_intervals, unsigned rows, struct sink *out)
{
    if (of_intervals)
        sink_printf(out, "top %u/%u: ", top->intervals, of_intervals);
    else
        sink_printf(out, "top %u: ", top->intervals);
    sink_printf(out, "%u ms, %llu samples (%llu since start)\n", ms, (unsigned long long)top->last_samples,
                (unsigned long long)top->total_samples);
    profile_report_print_source(out, run);
    sink_puts(out, "   last  since  function\n");
    uint16_t order[PROFILE_TOP_FUNCS];
    sort_hottest(top, order);
    uint32_t shown = top->used < rows ? top->used : rows;
    for (uint32_t i = 0; i < shown; i++) {
        const struct profile_top_func *f = &top->funcs[order[i]];
        print_row(out, top, f->last, f->total, f);
    }
    if (top->rest_total)
        print_row(out, top, top->rest_last, top->rest_total, NULL);
    if (top->total_samples == 0)
        sink_puts(out, "no samples yet\n");
}
