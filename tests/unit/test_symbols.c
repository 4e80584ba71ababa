/* tests/unit/test_symbols.c: symtab_lookup, symtab_find and symbol_resolve (kernel/symbols.c) over small
 * hand-made tables whose every edge -- symbol starts, ends, gaps, text bounds -- is probed by address. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "fake_hal.h"
#include "fake_kernel.h"
#include "kernel/symbols.h"
#include "unit_main.h"

/* Text is [0x1000, 0x2000). The first symbol starts above text_start so "in text, below every symbol" exists;
 * "sized" ends at 0x1040 leaving a gap up to "asm_stub", whose size 0 reaches "after_gap"; "last" has size 0
 * and reaches text_end. */
static const char names[] = "first\0sized\0asm_stub\0after_gap\0last";
enum { NAME_FIRST = 0, NAME_SIZED = 6, NAME_ASM = 12, NAME_AFTER = 21, NAME_LAST = 31 };
static const struct ksym syms[] = {
    { 0x1010, 0x20, NAME_FIRST },
    { 0x1030, 0x10, NAME_SIZED },
    { 0x1080, 0, NAME_ASM },
    { 0x10c0, 0x40, NAME_AFTER },
    { 0x1f00, 0, NAME_LAST },
};
static const struct symtab table = { syms, 5, names, 0x1000, 0x2000 };

static void expect_hit(const struct symtab *tab, uint64_t addr, const char *name, uint64_t start,
                       uint64_t offset)
{
    struct symbol_hit hit = { NULL, 0xdead, 0xdead };
    assert_true(symtab_lookup(tab, addr, &hit));
    assert_string_equal(hit.name, name);
    assert_int_equal(hit.start, start);
    assert_int_equal(hit.offset, offset);
}

static void expect_miss(const struct symtab *tab, uint64_t addr)
{
    struct symbol_hit hit = { NULL, 0xdead, 0xdead };
    assert_false(symtab_lookup(tab, addr, &hit));
}

/* A lookup and what it must find: expect_hit's arguments. */
struct hit {
    uint64_t addr;
    const char *name;
    uint64_t start, offset;
};

/* Each of the n hits found in tab, as expect_hit checks one; a failure names the address. */
static void expect_hits(const struct symtab *tab, const struct hit *h, size_t n)
{
    for (; n--; h++) {
        struct symbol_hit got = { NULL, 0xdead, 0xdead };
        if (!symtab_lookup(tab, h->addr, &got))
            fail_msg("0x%llx: no symbol, want %s", (unsigned long long)h->addr, h->name);
        if (!got.name || strcmp(got.name, h->name) != 0 || got.start != h->start || got.offset != h->offset)
            fail_msg("0x%llx: %s at 0x%llx + 0x%llx, want %s at 0x%llx + 0x%llx", (unsigned long long)h->addr,
                     got.name ? got.name : "(null)", (unsigned long long)got.start, (unsigned long long)got.offset,
                     h->name, (unsigned long long)h->start, (unsigned long long)h->offset);
    }
}
#define EXPECT_HITS(tab, ...)                                                                                  \
    expect_hits(tab, (const struct hit[]){ __VA_ARGS__ },                                                      \
                sizeof((const struct hit[]){ __VA_ARGS__ }) / sizeof(struct hit))

static void test_first_symbol(void **state)
{
    (void)state;
    EXPECT_HITS(&table, { 0x1010, "first", 0x1010, 0 }, { 0x1011, "first", 0x1010, 1 },
                { 0x102f, "first", 0x1010, 0x1f });
}

static void test_exact_start_of_each_symbol(void **state)
{
    (void)state;
    EXPECT_HITS(&table, { 0x1030, "sized", 0x1030, 0 }, { 0x1080, "asm_stub", 0x1080, 0 },
                { 0x10c0, "after_gap", 0x10c0, 0 }, { 0x1f00, "last", 0x1f00, 0 });
}

static void test_inside_symbol(void **state)
{
    (void)state;
    EXPECT_HITS(&table, { 0x1037, "sized", 0x1030, 7 }, { 0x103f, "sized", 0x1030, 0xf },
                { 0x10ff, "after_gap", 0x10c0, 0x3f });
}

static void test_gap_after_sized_symbol(void **state)
{
    (void)state;
    expect_miss(&table, 0x1040); /* one past "sized" */
    expect_miss(&table, 0x107f); /* last byte before "asm_stub" */
    expect_miss(&table, 0x1100); /* one past "after_gap", far below "last" */
    expect_miss(&table, 0x1eff);
}

static void test_size_zero_reaches_next_symbol(void **state)
{
    (void)state;
    EXPECT_HITS(&table, { 0x10bf, "asm_stub", 0x1080, 0x3f }, { 0x10c0, "after_gap", 0x10c0, 0 });
}

static void test_last_symbol_reaches_text_end(void **state)
{
    (void)state;
    expect_hit(&table, 0x1fff, "last", 0x1f00, 0xff);
    expect_miss(&table, 0x2000); /* text_end itself is outside */
    expect_miss(&table, 0x2001);
    expect_miss(&table, UINT64_MAX);
}

static void test_below_text_and_below_first_symbol(void **state)
{
    (void)state;
    expect_miss(&table, 0);
    expect_miss(&table, 0xfff);
    expect_miss(&table, 0x1000); /* in text, but no symbol starts at or below it */
    expect_miss(&table, 0x100f);
}

static void test_symbol_below_text_start_does_not_resolve(void **state)
{
    (void)state;
    /* The same table with text starting inside "first": addresses before text_start miss even though
     * "first" covers them. */
    const struct symtab narrow = { syms, 5, names, 0x1020, 0x1f80 };
    expect_miss(&narrow, 0x101f);
    expect_hit(&narrow, 0x1020, "first", 0x1010, 0x10);
    expect_hit(&narrow, 0x1f7f, "last", 0x1f00, 0x7f);
    expect_miss(&narrow, 0x1f80);
}

static void test_empty_table(void **state)
{
    (void)state;
    const struct symtab empty = { syms, 0, names, 0x1000, 0x2000 };
    expect_miss(&empty, 0x1010);
    expect_miss(&empty, 0x1f00);
    uint64_t addr = 77;
    assert_false(symtab_find(&empty, "first", &addr));
    assert_int_equal(addr, 77);
    assert_false(symtab_lookup(NULL, 0x1010, NULL));
}

static void test_single_symbol(void **state)
{
    (void)state;
    const struct symtab one = { &syms[1], 1, names, 0x1000, 0x2000 };
    expect_miss(&one, 0x102f);
    expect_hit(&one, 0x1030, "sized", 0x1030, 0);
    expect_hit(&one, 0x103f, "sized", 0x1030, 0xf);
    expect_miss(&one, 0x1040);
}

static void test_lookup_without_hit_record(void **state)
{
    (void)state;
    assert_true(symtab_lookup(&table, 0x1030, NULL));
    assert_false(symtab_lookup(&table, 0x1040, NULL));
}

/* A large table of adjacent sized symbols, each probed at its start, middle and last byte, and the gaps
 * between them: the binary search must agree with a linear scan everywhere. */
static void test_large_table_matches_linear_scan(void **state)
{
    (void)state;
    enum { N = 1000 };
    static struct ksym big[N];
    static char big_names[N * 16];
    uint32_t offset = 0;
    uint64_t addr = 0x100000;
    for (int i = 0; i < N; i++) {
        big[i].addr = addr;
        big[i].size = (uint32_t)(16 + (i % 7) * 16);
        big[i].name_offset = offset;
        offset += (uint32_t)snprintf(big_names + offset, sizeof big_names - offset, "f%d", i) + 1;
        addr += big[i].size + (i % 3 == 0 ? 16 : 0); /* every third symbol is followed by a 16-byte gap */
    }
    const struct symtab tab = { big, N, big_names, 0x100000, addr };
    for (int i = 0; i < N; i++) {
        char name[16];
        snprintf(name, sizeof name, "f%d", i);
        expect_hit(&tab, big[i].addr, name, big[i].addr, 0);
        expect_hit(&tab, big[i].addr + big[i].size / 2, name, big[i].addr, big[i].size / 2);
        expect_hit(&tab, big[i].addr + big[i].size - 1, name, big[i].addr, big[i].size - 1);
        if (i % 3 == 0) {
            expect_miss(&tab, big[i].addr + big[i].size);
            expect_miss(&tab, big[i].addr + big[i].size + 15);
        }
    }
}

static void test_find_by_name(void **state)
{
    (void)state;
    uint64_t addr = 0;
    assert_true(symtab_find(&table, "first", &addr));
    assert_int_equal(addr, 0x1010);
    assert_true(symtab_find(&table, "asm_stub", &addr));
    assert_int_equal(addr, 0x1080);
    assert_true(symtab_find(&table, "last", &addr));
    assert_int_equal(addr, 0x1f00);
    addr = 5;
    assert_false(symtab_find(&table, "missing", &addr));
    assert_false(symtab_find(&table, "firs", &addr));   /* a prefix is not a match */
    assert_false(symtab_find(&table, "first_", &addr)); /* nor an extension */
    assert_false(symtab_find(&table, "", &addr));
    assert_int_equal(addr, 5);
    assert_true(symtab_find(&table, "after_gap", NULL));
}

/* A call to a noreturn function as a function's last instruction leaves the return address one past its end:
 * it still belongs to the caller, with the offset of the return address itself. */
static void test_return_address_just_past_a_sized_symbol(void **state)
{
    (void)state;
    struct symbol_hit hit;
    assert_true(symtab_lookup_return(&table, 0x1040, &hit)); /* "sized" is [0x1030, 0x1040) */
    assert_string_equal(hit.name, "sized");
    assert_int_equal(hit.start, 0x1030);
    assert_int_equal(hit.offset, 0x10);
    assert_true(symtab_lookup_return(&table, 0x1031, &hit)); /* addr - 1 is the symbol's first byte */
    assert_string_equal(hit.name, "sized");
    assert_int_equal(hit.offset, 1);
    expect_miss(&table, 0x1040);                              /* a plain lookup calls it a gap */
    assert_false(symtab_lookup_return(&table, 0x1041, &hit)); /* one further is in the gap */
    assert_false(symtab_lookup_return(&table, 0, &hit));
    assert_false(symtab_lookup_return(&table, 0x1010, &hit)); /* 0x100f is below every symbol */
}

/* symbol_resolve() goes through kernel_symtab(): the fake kernel's (tests/unit/fake_kernel.c), pointed here. */
static void test_symbol_resolve_uses_kernel_symtab(void **state)
{
    (void)state;
    fake_symtab = &table;
    struct symbol_hit hit;
    assert_true(symbol_resolve(0x10c5, &hit));
    assert_string_equal(hit.name, "after_gap");
    assert_int_equal(hit.start, 0x10c0);
    assert_int_equal(hit.offset, 5);
    assert_false(symbol_resolve(0x1040, &hit));
}

UNIT_MAIN(NULL, NULL,
          test_first_symbol, test_exact_start_of_each_symbol, test_inside_symbol, test_gap_after_sized_symbol,
          test_size_zero_reaches_next_symbol, test_last_symbol_reaches_text_end, test_below_text_and_below_first_symbol,
          test_symbol_below_text_start_does_not_resolve, test_empty_table, test_single_symbol,
          test_lookup_without_hit_record, test_large_table_matches_linear_scan, test_find_by_name,
          test_symbol_resolve_uses_kernel_symtab, test_return_address_just_past_a_sized_symbol)
