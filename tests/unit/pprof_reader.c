/* tests/unit/pprof_reader.c: the protobuf reader of the pprof encoders' unit tests (tests/unit/pprof_reader.h):
 * varints and length-delimited fields, wire types 0 and 2 only, every length checked against its message. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "pprof_reader.h"

struct field {
    uint32_t num;
    unsigned wire;
    uint64_t v;          /* wire 0 */
    const uint8_t *body; /* wire 2 */
    size_t len;
};

static uint64_t read_varint(const uint8_t **p, const uint8_t *end)
{
    uint64_t v = 0;
    for (unsigned shift = 0;; shift += 7) {
        assert_true(*p < end && shift < 64);
        uint8_t byte = *(*p)++;
        v |= (uint64_t)(byte & 0x7f) << shift;
        if (!(byte & 0x80))
            return v;
    }
}

/* The next field of [*p, end); false at the end. Only wire types 0 and 2 are expected. */
static bool next_field(const uint8_t **p, const uint8_t *end, struct field *f)
{
    if (*p == end)
        return false;
    uint64_t key = read_varint(p, end);
    f->num = (uint32_t)(key >> 3);
    f->wire = key & 7;
    if (f->wire == 0) {
        f->v = read_varint(p, end);
    } else {
        assert_int_equal(f->wire, 2);
        f->len = read_varint(p, end);
        assert_true(f->len <= (size_t)(end - *p));
        f->body = *p;
        *p += f->len;
    }
    return true;
}

static void read_pair(const struct field *f, uint64_t out[2])
{
    const uint8_t *p = f->body, *end = p + f->len;
    struct field g;
    while (next_field(&p, end, &g))
        out[g.num - 1] = g.v;
}

static void read_packed(const struct field *f, uint64_t *out, unsigned *n, unsigned cap)
{
    const uint8_t *p = f->body, *end = p + f->len;
    while (p < end) {
        assert_true(*n < cap);
        out[(*n)++] = read_varint(&p, end);
    }
}

static void read_sample(const struct field *f, struct sample_read *s)
{
    const uint8_t *p = f->body, *end = p + f->len;
    struct field g;
    memset(s, 0, sizeof *s);
    while (next_field(&p, end, &g)) {
        if (g.num == 1)
            read_packed(&g, s->locs, &s->nlocs, PPROF_READ_MAX_LOCS);
        else if (g.num == 2)
            read_packed(&g, s->values, &s->nvalues, 4);
        else if (g.num == 3) {
            assert_true(s->nlabels < 16);
            struct label_read *l = &s->labels[s->nlabels++];
            const uint8_t *q = g.body, *qend = q + g.len;
            struct field h;
            while (next_field(&q, qend, &h))
                (&l->key)[h.num - 1] = h.v;
        }
    }
}

static void read_location(const struct field *f, struct location_read *l)
{
    const uint8_t *p = f->body, *end = p + f->len;
    struct field g;
    memset(l, 0, sizeof *l);
    while (next_field(&p, end, &g)) {
        if (g.num == 4) {
            const uint8_t *q = g.body, *qend = q + g.len;
            struct field h;
            while (next_field(&q, qend, &h))
                if (h.num == 1)
                    l->function = h.v;
        } else if (g.num <= 3) {
            (&l->id)[g.num - 1] = g.v;
        }
    }
}

void pprof_read(const uint8_t *data, size_t len, struct profile_read *r)
{
    memset(r, 0, sizeof *r);
    const uint8_t *p = data, *end = data + len;
    struct field f;
    while (next_field(&p, end, &f)) {
        switch (f.num) {
        case 1: assert_true(r->ntypes < 4); read_pair(&f, r->types[r->ntypes++]); break;
        case 2: assert_true(r->nsamples < MAX_ITEMS); read_sample(&f, &r->samples[r->nsamples++]); break;
        case 3: {
            r->nmappings++;
            const uint8_t *q = f.body, *qend = q + f.len;
            struct field g;
            while (next_field(&q, qend, &g))
                if (g.num <= 7)
                    r->mapping[g.num] = g.v;
            break;
        }
        case 4: assert_true(r->nlocations < MAX_ITEMS); read_location(&f, &r->locations[r->nlocations++]); break;
        case 5: {
            assert_true(r->nfunctions < MAX_ITEMS);
            struct function_read *fn = &r->functions[r->nfunctions++];
            const uint8_t *q = f.body, *qend = q + f.len;
            struct field g;
            while (next_field(&q, qend, &g))
                if (g.num <= 3)
                    (&fn->id)[g.num - 1] = g.v;
            break;
        }
        case 6:
            assert_true(r->nstrings < MAX_STR && f.len < MAX_STR_LEN);
            memcpy(r->strings[r->nstrings], f.body, f.len);
            r->strings[r->nstrings++][f.len] = 0;
            break;
        case 9: r->time = f.v; break;
        case 10: r->duration = f.v; break;
        case 11: read_pair(&f, r->period_type); break;
        case 12: r->period = f.v; break;
        case 13: assert_true(r->ncomments < 8); r->comments[r->ncomments++] = f.v; break;
        case 14: r->default_type = f.v; break;
        default: fail_msg("unexpected field %u", f.num);
        }
    }
}

const char *pprof_str(const struct profile_read *r, uint64_t i)
{
    assert_true(i < r->nstrings);
    return r->strings[i];
}

const struct location_read *pprof_location_of(const struct profile_read *r, uint64_t id)
{
    for (unsigned i = 0; i < r->nlocations; i++)
        if (r->locations[i].id == id)
            return &r->locations[i];
    fail_msg("no location %llu", (unsigned long long)id);
    return NULL;
}

/* The name of the function a location's line names, "" when it has none. */
const char *pprof_function_of(const struct profile_read *r, uint64_t location_id)
{
    const struct location_read *l = pprof_location_of(r, location_id);
    if (!l->function)
        return "";
    for (unsigned i = 0; i < r->nfunctions; i++)
        if (r->functions[i].id == l->function) {
            assert_int_equal(r->functions[i].name, r->functions[i].system_name);
            return pprof_str(r, r->functions[i].name);
        }
    fail_msg("no function %llu", (unsigned long long)l->function);
    return NULL;
}

/* The sample's label key=value (numbers as "key=N unit") joined by spaces, in order. */
const char *pprof_functions_of(const struct profile_read *r, const struct sample_read *s, char *buf, size_t cap)
{
    size_t n = 0;
    buf[0] = 0;
    for (unsigned i = 0; i < s->nlocs; i++)
        n += (size_t)snprintf(buf + n, cap - n, "%s%s", i ? " <- " : "", pprof_function_of(r, s->locs[i]));
    return buf;
}

const char *pprof_labels_of(const struct profile_read *r, const struct sample_read *s, char *buf, size_t cap)
{
    size_t n = 0;
    buf[0] = 0;
    for (unsigned i = 0; i < s->nlabels; i++) {
        const struct label_read *l = &s->labels[i];
        if (l->str || !l->num_unit)
            n += (size_t)snprintf(buf + n, cap - n, "%s%s=%s", i ? " " : "", pprof_str(r, l->key),
                                  pprof_str(r, l->str));
        else
            n += (size_t)snprintf(buf + n, cap - n, "%s%s=%llu %s", i ? " " : "", pprof_str(r, l->key),
                                  (unsigned long long)l->num, pprof_str(r, l->num_unit));
    }
    return buf;
}

