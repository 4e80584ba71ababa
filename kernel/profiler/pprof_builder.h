/* kernel/profiler/pprof_builder.h: the pprof profile builder (kernel/profiler/pprof_builder.c) -- what every
 * profile kprof serves as profile.proto shares, whatever feeds it: the string table (each string written once,
 * index 0 ""), a location per distinct frame address with the function the baked symbols name, locations of a
 * name of their own for what has no address ("[not tracked]"), the header (sample types, period, duration, the
 * kernel as the one mapping with its build id), comments, and samples with their labels. The CPU and wall
 * profiles (kernel/profiler/pprof_encode.c), the task dump's goroutine profile (kernel/profiler/goroutine.c)
 * and the block profile (kernel/profiler/block_profile.c) are this builder fed by different sources, as Go's
 * runtime/pprof feeds one profileBuilder from its CPU, goroutine and block records.
 *
 * Every table is sized when the builder is made, from the most the caller will ask of it, so nothing grows
 * but the two output buffers; a bound that turns out wrong makes the build fail rather than overrun. Task
 * context (the heap). */
#ifndef KERNEL_PROFILER_PPROF_BUILDER_H
#define KERNEL_PROFILER_PPROF_BUILDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "kernel/profiler/pb_writer.h"
#include "kernel/symbols.h"

#define PPROF_ENCODE_LIMIT (32u << 20) /* the most a profile may take: 4096 keys come nowhere near it */
#define PPROF_MAX_SAMPLE_TYPES 4 /* the heap profile's four, as Go's */

/* An open-addressed table of u64 keys to ids (1..), sized once. */
struct pprof_id_slot {
    uint64_t key;
    uint32_t id; /* 0: empty */
};
struct pprof_id_table {
    struct pprof_id_slot *slots;
    uint32_t mask;
};

struct pprof_string_ref {
    uint32_t offset; /* of the bytes in the strings buffer */
    uint32_t len;
};

struct pprof_builder {
    const struct symtab *tab;      /* addresses resolve through it (NULL: none resolve) */
    uint64_t memory_start, memory_limit; /* the kernel's mapping: locations inside it name it */
    struct pb_buf out;             /* the profile, less its string table */
    struct pb_buf strings;         /* string_table fields, in index order */
    struct pprof_string_ref *refs;
    uint32_t nstrings, max_strings;
    uint32_t *string_slots;        /* index + 1; 0 empty */
    uint32_t string_mask;
    struct pprof_id_table locations; /* key: address << 1 | leaf (kernel addresses below 2^63) */
    struct pprof_id_table functions; /* key: symbol start */
    uint32_t nlocations, nfunctions;
    bool full;                     /* a table bound was wrong: give up rather than overrun */
};

/* The kernel as a profile's one mapping: where its text runs, the file offset of memory_start in kprof.elf, its
 * build id in lowercase hex ("" for none). kernel/profiler/pprof.h has the running kernel's. */
struct pprof_mapping {
    uint64_t memory_start, memory_limit, file_offset;
    const char *build_id;
};

/* What the profile says about itself: its sample types (type, unit), the period's type and the period, the
 * default sample type, the time and duration, and the mapping. */
struct pprof_header {
    const char *sample_types[PPROF_MAX_SAMPLE_TYPES][2];
    unsigned ntypes;
    const char *period_type[2];
    uint64_t period;
    const char *default_type;
    int64_t time_nanos;   /* 0: left out (the kernel keeps no wall clock) */
    uint64_t duration_nanos;
    struct pprof_mapping mapping;
};

/* Room for max_frames distinct frame addresses (and as many functions) and max_strings strings; false (nothing
 * held) when the heap says no. */
bool pprof_builder_init(struct pprof_builder *b, const struct symtab *tab, uint32_t max_frames,
                        uint32_t max_strings);
/* The string table appended, the whole profile handed over in *data (kfree gives it back), *len bytes, and
 * everything else the builder held given back: true, or false (nothing handed over) when a bound or the heap
 * failed on the way. */
bool pprof_builder_finish(struct pprof_builder *b, uint8_t **data, size_t *len);

/* The string table index of s, added when new. */
uint32_t pprof_intern(struct pprof_builder *b, const char *s);
uint32_t pprof_intern_u64(struct pprof_builder *b, uint64_t v);

/* "" as index 0, the sample and period types, the period, time and duration, the default type, the mapping: the
 * first thing written. The period's type is interned before the sample types, so a profile's strings begin
 * "", its period's type and unit, then the rest. */
void pprof_write_header(struct pprof_builder *b, const struct pprof_header *h);
void pprof_comment(struct pprof_builder *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The location of one frame, written when first met: a leaf's own address (its function at the address), or a
 * caller's return address (its function found at address - 1, as the call before it). 0 when a bound failed. */
uint64_t pprof_location(struct pprof_builder *b, uint64_t addr, bool leaf);
/* A location of a function named name of its own, outside the mapping, with no address: what samples that
 * have no frames stand on ("[not tracked]", "[running on another cpu]"). Written when first asked for. */
uint64_t pprof_named_location(struct pprof_builder *b, const char *name);

/* One sample: its locations (leaf first) and values (one per sample type), then its labels, then the end. */
pb_mark pprof_sample_begin(struct pprof_builder *b, const uint64_t *locs, size_t nlocs, const uint64_t *values,
                           size_t nvalues);
void pprof_label(struct pprof_builder *b, const char *key, const char *value);
void pprof_label_ids(struct pprof_builder *b, uint32_t key, uint32_t value);
void pprof_label_num(struct pprof_builder *b, const char *key, uint64_t num, const char *unit);
void pprof_sample_end(struct pprof_builder *b, pb_mark m);

/* The encoded profile gzipped (kernel/lib/gzip.h) in place of *data, *len when that is smaller: true then (the
 * old buffer given back); false, and *data untouched, when it would not be smaller or the scratch could not be
 * allocated -- the profile goes uncompressed, which pprof reads as well. */
bool pprof_gzip(uint8_t **data, size_t *len);

#endif
