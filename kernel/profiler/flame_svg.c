/* kernel/profiler/flame_svg.c: a flame graph written as SVG (kernel/profiler/flame.h) -- the tree of
 * kernel/profiler/flame.c drawn root at the bottom, one <g> a box (a <rect> its weight's share wide, a <title>
 * the browser's tooltip, a name when it fits), under the run's facts as the pprof profile's comments state them,
 * a legend of the colour classes and a search box; the few lines of script only search and zoom, so the picture
 * reads without them. Written into one buffer allocated at the bound of what the boxes can write, which grows
 * with the drawn boxes (never more than the tree's nodes, nor than a pixel's box each row), not with samples. */
#include "kernel/profiler/flame.h"

#include "kernel/heap.h"
#include "kernel/lib/format.h"
#include "kernel/lib/sink.h"
#include "kernel/lib/string.h"

/* A box's bytes less its name twice escaped: tags, numbers of 20 digits, an address for a name, offsets, span,
 * colour, mark. */
#define BOX_FIXED 560
#define PX_PER_CHAR 7 /* a 12 px monospace character's advance, rounded down: how many fit a box */

static const char style[] =
    "<style>\n"
    "text { font-family: monospace; font-size: 12px; fill: #000; }\n"
    "g.f text { pointer-events: none; }\n"
    "g.f:hover rect { stroke: #000; stroke-width: 0.5; }\n"
    ".irqs-off rect, rect.irqs-off { fill: #6fa8dc; }\n"
    ".in-irq rect, rect.in-irq { fill: #b4a7d6; }\n"
    ".in-irq-irqs-off rect, rect.in-irq-irqs-off { fill: #8e7cc3; }\n"
    ".let-in rect, rect.let-in { fill: #e06666; }\n"
    ".idle rect, rect.idle { fill: #cccccc; }\n"
    ".runnable rect, rect.runnable { fill: #93c47d; }\n"
    ".waiting rect, rect.waiting { fill: #76a5af; }\n"
    "rect.plain { fill: #f0a050; }\n"
    ".hit rect { fill: #ff00ff; }\n"
    "</style>\n";

/* Search (the box from the URL's #search=WORD too) and click-to-zoom; no box depends on it. */
static const char script[] =
    "<script type=\"text/ecmascript\"><![CDATA[\n"
    "var W = 1200, boxes = [].slice.call(document.querySelectorAll('g.f'));\n"
    "boxes.forEach(function (g) { var r = g.querySelector('rect'); g.x0 = +r.getAttribute('x');\n"
    "  g.w0 = +r.getAttribute('width'); g.name = g.querySelector('title').textContent.split(' (')[0]; });\n"
    "function flameZoom(z) {\n"
    "  var x = z ? z.x0 : 0, w = z ? z.w0 : W;\n"
    "  boxes.forEach(function (g) {\n"
    "    var r = g.querySelector('rect'), t = g.querySelector('text'), out = g.x0 + g.w0 <= x + 0.001 ||\n"
    "      g.x0 >= x + w - 0.001;\n"
    "    g.style.display = out ? 'none' : '';\n"
    "    var nx = Math.max(0, (g.x0 - x) * W / w), nw = Math.min(W, g.w0 * W / w);\n"
    "    r.setAttribute('x', nx.toFixed(2)); r.setAttribute('width', nw.toFixed(2));\n"
    "    if (t) { t.setAttribute('x', (nx + 3).toFixed(2)); t.style.display = nw < 30 ? 'none' : ''; }\n"
    "  });\n"
    "}\n"
    "function flameSearch(q) {\n"
    "  var n = 0;\n"
    "  boxes.forEach(function (g) { var hit = !!q && g.name.indexOf(q) >= 0; g.classList.toggle('hit', hit);\n"
    "    if (hit) n++; });\n"
    "  document.getElementById('matched').textContent = q ? 'matched ' + n + ' boxes' : '';\n"
    "}\n"
    "document.getElementById('frames').addEventListener('click', function (e) {\n"
    "  var g = e.target.closest('g.f'); flameZoom(g && g.getAttribute('data-p') !== '' ? g : null); });\n"
    "var m = /search=([^&]*)/.exec(location.hash);\n"
    "if (m) { var q = decodeURIComponent(m[1]); document.getElementById('search').value = q; flameSearch(q); }\n"
    "]]></script>\n";

/* s's first max bytes, XML-escaped; the bytes that takes. */
static size_t escaped_len(const char *s, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; s[i] && i < max; i++)
        n += s[i] == '&' ? 5 : s[i] == '<' || s[i] == '>' ? 4 : s[i] == '"' || s[i] == '\'' ? 6 : 1;
    return n;
}

static void put_escaped(struct sink *out, const char *s, size_t max)
{
    for (size_t i = 0; s[i] && i < max; i++) {
        switch (s[i]) {
        case '&': sink_puts(out, "&amp;"); break;
        case '<': sink_puts(out, "&lt;"); break;
        case '>': sink_puts(out, "&gt;"); break;
        case '"': sink_puts(out, "&quot;"); break;
        case '\'': sink_puts(out, "&apos;"); break;
        default: sink_write(out, &s[i], 1); /* the tables' names are ASCII: no byte to refuse */
        }
    }
}

static void put_name(struct sink *out, const struct flame_node *n, size_t max)
{
    if (!n->name) {
        sink_printf(out, "0x%llx", (unsigned long long)n->func);
        return;
    }
    put_escaped(out, n->name, max);
    if (strlen(n->name) > max)
        sink_puts(out, "..");
}

size_t flame_svg_bound(const struct flame_tree *t)
{
    size_t bytes = FLAME_FIXED_BYTES;
    uint64_t total = t->nodes[0].weight;
    for (uint32_t i = 0; i < t->used; i++)
        if (i == 0 || flame_drawn(t->nodes[i].weight, total))
            bytes += BOX_FIXED + 2 * (t->nodes[i].name ? escaped_len(t->nodes[i].name, FLAME_NAME_MAX) : 0);
    return bytes;
}

/* A hundredths-of-a-pixel figure as "12.34". */
static void put_px(struct sink *out, const char *attr, uint64_t v)
{
    sink_printf(out, " %s=\"%llu.%02llu\"", attr, (unsigned long long)(v / 100), (unsigned long long)(v % 100));
}

/* A plain box's fill from its name: warm shades, the same function always the same one. */
static void put_fill(struct sink *out, const struct flame_node *n)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (const char *s = n->name ? n->name : ""; *s; s++)
        h = (h ^ (uint8_t)*s) * 16777619u;
    if (!n->name)
        h ^= (uint32_t)n->func;
    sink_printf(out, " fill=\"rgb(%u,%u,%u)\"", 205 + h % 50, 80 + (h >> 8) % 140, (h >> 16) % 60);
}

/* " (N samples, P.PP%)": the tooltip's count and share of the whole. */
static void put_share(struct sink *out, const struct flame_node *n, uint64_t total)
{
    uint64_t bp = total ? flame_pos(n->weight, total) * 10000 / FLAME_SCALE : 0; /* basis points */
    sink_printf(out, " (%llu samples, %llu.%02llu%%)", (unsigned long long)n->count, (unsigned long long)(bp / 100),
                (unsigned long long)(bp % 100));
}

static const char *const mark_words[FLAME_MARKS] = {
    [FLAME_IRQS_OFF] = " [irqs off]", [FLAME_IN_IRQ] = " [in irq]", [FLAME_IN_IRQ_IRQS_OFF] = " [in irq, irqs off]",
    [FLAME_LET_IN] = " [let in]", [FLAME_IDLE] = " [idle]", [FLAME_RUNNABLE] = " [runnable]",
    [FLAME_WAITING] = " [waiting]",
};

static void put_box(struct sink *out, const struct flame_tree *t, uint32_t i, uint32_t height)
{
    const struct flame_node *n = &t->nodes[i];
    uint64_t total = t->nodes[0].weight;
    uint64_t x = flame_pos(n->x, total), w = flame_pos(n->x + n->weight, total) - x;
    sink_printf(out, "<g class=\"f %s\" data-id=\"%u\"", flame_mark_class[n->mark], i);
    if (i)
        sink_printf(out, " data-p=\"%u\"", n->parent);
    else
        sink_puts(out, " data-p=\"\"");
    sink_printf(out, " data-d=\"%u\" data-w=\"%llu\" data-n=\"%llu\"><title>", n->depth,
                (unsigned long long)n->weight, (unsigned long long)n->count);
    put_name(out, n, FLAME_NAME_MAX);
    if (n->offsets && n->min_off == n->max_off)
        sink_printf(out, "+0x%llx", (unsigned long long)n->min_off);
    else if (n->offsets)
        sink_printf(out, "+0x%llx..0x%llx", (unsigned long long)n->min_off, (unsigned long long)n->max_off);
    put_share(out, n, total);
    if (n->spans)
        sink_puts(out, " [several spans]");
    else if (n->span)
        sink_printf(out, " [span %llu]", (unsigned long long)n->span);
    sink_printf(out, "%s</title><rect", mark_words[n->mark] ? mark_words[n->mark] : "");
    put_px(out, "x", x);
    sink_printf(out, " y=\"%u\"", height - (n->depth + 1) * FLAME_ROW);
    put_px(out, "width", w);
    sink_printf(out, " height=\"%u\"", FLAME_ROW - 1);
    put_fill(out, n);
    sink_puts(out, "/>");
    size_t fits = w / 100 / PX_PER_CHAR;
    if (fits >= 3) {
        put_px(out, "<text x", x + 300);
        sink_printf(out, " y=\"%u\">", height - n->depth * FLAME_ROW - 4);
        put_name(out, n, fits - 2 < FLAME_NAME_MAX ? fits - 2 : FLAME_NAME_MAX);
        sink_puts(out, "</text>");
    }
    sink_puts(out, "</g>\n");
}

/* The facts, as the pprof profile's comments give them, in two lines at the top. */
static void put_facts(struct sink *out, const struct pprof_fold *fold, const struct flame_facts *f)
{
    const struct pprof_run_info *info = f->info;
    sink_printf(out, "<text id=\"facts\" x=\"10\" y=\"18\">kprof flame graph: %s profile, source=%s ",
                info->wall ? "wall" : "cpu", info->source ? info->source : "?");
    if (info->cycles && !info->wall)
        sink_printf(out, "period=%llu unit=cycles", (unsigned long long)info->period);
    else
        sink_printf(out, "period_ns=%llu", (unsigned long long)info->period);
    sink_printf(out, " window_ms=%u cpus=%u samples=%llu dropped=%llu</text>\n", info->window_ms, info->ncpus,
                (unsigned long long)fold->samples, (unsigned long long)info->ring_drops);
    sink_printf(out, "<text id=\"facts2\" x=\"10\" y=\"36\">keys=%u of %u not_tracked=%llu labels_dropped=%llu "
                     "build_id=%s tag=", fold->used, PPROF_FOLD_ENTRIES, (unsigned long long)fold->not_tracked,
                (unsigned long long)fold->labels_dropped,
                info->build_id && info->build_id[0] ? info->build_id : "none");
    put_escaped(out, f->tag ? f->tag : "none", 64);
    if (f->run)
        sink_printf(out, " run=%u (its pprof: /debug/pprof/profile?run=%u)", f->run, f->run);
    sink_puts(out, "</text>\n");
}

static void put_legend(struct sink *out)
{
    uint32_t x = 10;
    for (unsigned m = 0; m < FLAME_MARKS; m++) {
        sink_printf(out, "<rect class=\"%s\" x=\"%u\" y=\"46\" width=\"12\" height=\"12\"/>"
                         "<text x=\"%u\" y=\"57\">%s</text>\n", flame_mark_class[m], x, x + 16, flame_mark_class[m]);
        x += 24 + 7 * (uint32_t)strlen(flame_mark_class[m]);
    }
    sink_puts(out, "<foreignObject x=\"10\" y=\"64\" width=\"300\" height=\"26\"><input xmlns=\"http://www.w3.org/"
                   "1999/xhtml\" id=\"search\" placeholder=\"search (click a box to zoom)\" "
                   "oninput=\"flameSearch(this.value)\"/></foreignObject><text id=\"matched\" x=\"320\" "
                   "y=\"82\"></text>\n");
}

bool flame_render(const struct pprof_fold *fold, const struct flame_facts *facts, const struct symtab *tab,
                  uint8_t **data, size_t *len)
{
    *data = NULL;
    *len = 0;
    struct flame_tree t;
    if (!flame_tree_build(&t, fold, tab))
        return false;
    size_t cap = flame_svg_bound(&t);
    char *buf = kzalloc(cap);
    if (!buf) {
        flame_tree_free(&t);
        return false;
    }
    struct buffer_sink bs;
    buffer_sink_init(&bs, buf, cap);
    uint32_t height = FLAME_TOP + (t.depth + 1) * FLAME_ROW;
    sink_printf(&bs.sink, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" "
                          "width=\"%u\" height=\"%u\" viewBox=\"0 0 %u %u\">\n", FLAME_WIDTH, height, FLAME_WIDTH,
                height);
    sink_puts(&bs.sink, style);
    put_facts(&bs.sink, fold, facts);
    put_legend(&bs.sink);
    sink_puts(&bs.sink, "<g id=\"frames\">\n");
    uint64_t total = t.nodes[0].weight;
    for (uint32_t i = 0; i < t.used; i++)
        if (i == 0 || flame_drawn(t.nodes[i].weight, total)) /* a parent is at least as wide as its child */
            put_box(&bs.sink, &t, i, height);
    sink_puts(&bs.sink, "</g>\n");
    sink_puts(&bs.sink, script);
    sink_puts(&bs.sink, "</svg>\n");
    flame_tree_free(&t);
    if (bs.truncated) { /* never: the bound holds every box */
        kfree(buf);
        return false;
    }
    *data = (uint8_t *)buf;
    *len = bs.len;
    return true;
}
