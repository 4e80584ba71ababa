/* tests/unit/pprof_reader.h: a protobuf reader, just enough for profile.proto (tests/unit/pprof_reader.c) --
 * what the unit tests of the kernel's pprof encoders (the CPU and wall profiles, the goroutine and block
 * profiles) read their output back with: the string table, sample and period types, samples with their
 * locations, values and labels, locations, functions, the mapping and the comments. A field it does not know, or
 * more items than it holds, fails the test (cmocka). */
#ifndef TESTS_UNIT_PPROF_READER_H
#define TESTS_UNIT_PPROF_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PPROF_READ_MAX_LOCS 17 /* the deepest chain an encoder writes (the task dump's 16) and one more */

/* The profile, read. */
#define MAX_STR 256     /* strings */
#define MAX_STR_LEN 256 /* bytes of each, its NUL included */
#define MAX_ITEMS 64  /* samples, locations, functions */
struct label_read { uint64_t key, str, num, num_unit; };
struct sample_read {
    uint64_t locs[PPROF_READ_MAX_LOCS];
    unsigned nlocs;
    uint64_t values[4];
    unsigned nvalues;
    struct label_read labels[16];
    unsigned nlabels;
};
struct location_read { uint64_t id, mapping, address, function; };
struct function_read { uint64_t id, name, system_name; };
struct profile_read {
    char strings[MAX_STR][MAX_STR_LEN];
    unsigned nstrings;
    uint64_t types[4][2], period_type[2], period, duration, time, default_type;
    unsigned ntypes;
    struct sample_read samples[MAX_ITEMS];
    unsigned nsamples;
    struct location_read locations[MAX_ITEMS];
    unsigned nlocations;
    struct function_read functions[MAX_ITEMS];
    unsigned nfunctions;
    uint64_t mapping[8]; /* fields 1..7 */
    unsigned nmappings;
    uint64_t comments[8];
    unsigned ncomments;
};

/* The profile of len bytes at data, read into r. */
void pprof_read(const uint8_t *data, size_t len, struct profile_read *r);
/* String i of the table. */
const char *pprof_str(const struct profile_read *r, uint64_t i);
const struct location_read *pprof_location_of(const struct profile_read *r, uint64_t id);
/* The name of the function a location's line names, "" when it has none. */
const char *pprof_function_of(const struct profile_read *r, uint64_t location_id);
/* The names of the functions of the sample's locations (pprof_function_of), leaf first, joined by " <- ", into
 * buf. */
const char *pprof_functions_of(const struct profile_read *r, const struct sample_read *s, char *buf, size_t cap);
/* The sample's label key=value (numbers as "key=N unit") joined by spaces, in order, into buf. */
const char *pprof_labels_of(const struct profile_read *r, const struct sample_read *s, char *buf, size_t cap);

#endif
