/* tests/unit/test_gdb_regs.c: gdbstub/regs.c -- the register table against gdb's x86-64 register names and
 * sizes written out here, every target register present exactly once, each register's value through
 * encode and decode, and the target description: well-formed, the registers in order with their numbers,
 * the same bytes however it is read in parts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "fake_target.h"
#include "gdbstub/regs.h"
#include "unit_main.h"

/* gdb's amd64 core registers in order (24 general, 16 x87), then the segments feature. */
static const char *const gdb_names[] = {
    "rax", "rbx", "rcx", "rdx", "rsi", "rdi", "rbp", "rsp", "r8", "r9", "r10", "r11", "r12", "r13",
    "r14", "r15", "rip", "eflags", "cs", "ss", "ds", "es", "fs", "gs",
    "st0", "st1", "st2", "st3", "st4", "st5", "st6", "st7",
    "fctrl", "fstat", "ftag", "fiseg", "fioff", "foseg", "fooff", "fop",
    "fs_base", "gs_base",
};

static void test_table_matches_gdb(void **state)
{
    (void)state;
    assert_int_equal(sizeof gdb_names / sizeof gdb_names[0], GDB_DESC_REGS);
    unsigned g_bytes = 0;
    for (unsigned i = 0; i < GDB_DESC_REGS; i++) {
        const struct gdb_reg_desc *r = &gdb_regs[i];
        assert_string_equal(r->name, gdb_names[i]);
        assert_int_equal(r->regnum, i);
        assert_ptr_equal(gdb_reg_by_regnum(i), r);
        assert_int_equal(r->size * 8, r->bitsize);
        assert_true(r->size <= GDB_REG_MAX_SIZE);
        if (r->target_reg != GDB_REG_NONE)
            assert_true(r->size == 4 || r->size == 8);
        /* 0..39 are the core feature, 40 and 41 the segments feature. */
        assert_int_equal(r->feature, i < 40 ? 0 : 1);
        g_bytes += r->size;
    }
    assert_int_equal(g_bytes, GDB_G_BYTES);
    assert_null(gdb_reg_by_regnum(GDB_DESC_REGS));
    assert_null(gdb_reg_by_regnum(UINT64_MAX));
    assert_null(gdb_reg_by_regnum(1ull << 32));
}

static void test_every_target_register_exactly_once(void **state)
{
    (void)state;
    /* target.h's order is gdb's for the first 24 and then fs_base, gs_base. */
    static const char *const target_names[GDB_REG_COUNT] = {
        [GDB_RAX] = "rax", [GDB_RBX] = "rbx", [GDB_RCX] = "rcx", [GDB_RDX] = "rdx", [GDB_RSI] = "rsi",
        [GDB_RDI] = "rdi", [GDB_RBP] = "rbp", [GDB_RSP] = "rsp", [GDB_R8] = "r8",   [GDB_R9] = "r9",
        [GDB_R10] = "r10", [GDB_R11] = "r11", [GDB_R12] = "r12", [GDB_R13] = "r13", [GDB_R14] = "r14",
        [GDB_R15] = "r15", [GDB_RIP] = "rip", [GDB_EFLAGS] = "eflags", [GDB_CS] = "cs", [GDB_SS] = "ss",
        [GDB_DS] = "ds",   [GDB_ES] = "es",   [GDB_FS] = "fs",   [GDB_GS] = "gs",   [GDB_FS_BASE] = "fs_base",
        [GDB_GS_BASE] = "gs_base",
    };
    unsigned seen[GDB_REG_COUNT] = { 0 };
    unsigned none = 0;
    for (unsigned i = 0; i < GDB_DESC_REGS; i++) {
        int t = gdb_regs[i].target_reg;
        if (t == GDB_REG_NONE) {
            none++;
            continue;
        }
        assert_true(t >= 0 && t < GDB_REG_COUNT);
        seen[t]++;
        assert_string_equal(gdb_regs[i].name, target_names[t]);
    }
    for (int t = 0; t < GDB_REG_COUNT; t++) {
        assert_int_equal(seen[t], 1);
        const struct gdb_reg_desc *r = gdb_reg_for_target((enum gdb_reg)t);
        assert_non_null(r);
        assert_int_equal(r->target_reg, t);
    }
    assert_int_equal(none, 16);
}

static void test_encode_decode_every_register(void **state)
{
    (void)state;
    for (unsigned cpu = 0; cpu < FAKE_CPUS; cpu++)
        for (int t = 0; t < GDB_REG_COUNT; t++)
            fake_regs[cpu][t] = 0x0102030405060708ull * (uint64_t)(t + 1) + cpu;

    char hex[2 * GDB_REG_MAX_SIZE + 1];
    for (unsigned cpu = 0; cpu < FAKE_CPUS; cpu++) {
        for (unsigned i = 0; i < GDB_DESC_REGS; i++) {
            const struct gdb_reg_desc *r = &gdb_regs[i];
            memset(hex, '?', sizeof hex);
            assert_int_equal(gdb_reg_encode(&fake_target, cpu, r, hex), 2 * r->size);
            assert_int_equal(hex[2 * r->size], '?');
            uint64_t value = 1;
            assert_true(gdb_reg_decode(r, hex, &value) || r->target_reg == GDB_REG_NONE);
            if (r->target_reg == GDB_REG_NONE) {
                for (unsigned k = 0; k < 2 * r->size; k++)
                    assert_int_equal(hex[k], 'x');
                continue;
            }
            uint64_t mask = r->size == 8 ? UINT64_MAX : (1ull << (8 * r->size)) - 1;
            assert_int_equal(value, fake_regs[cpu][r->target_reg] & mask);
            /* Little-endian: the first two digits are the low byte. */
            char low[3];
            snprintf(low, sizeof low, "%02x", (unsigned)(fake_regs[cpu][r->target_reg] & 0xff));
            assert_memory_equal(hex, low, 2);
        }
    }
    /* A register the target cannot read is unavailable, not zero. */
    fake_unreadable_reg = GDB_R12;
    memset(hex, 0, sizeof hex);
    gdb_reg_encode(&fake_target, 0, gdb_reg_for_target(GDB_R12), hex);
    assert_string_equal(hex, "xxxxxxxxxxxxxxxx");
    uint64_t value;
    assert_false(gdb_reg_decode(gdb_reg_for_target(GDB_R12), hex, &value));
}

static void test_encode_all_decode_all(void **state)
{
    (void)state;
    static char g[2 * GDB_G_BYTES + 1];
    for (int t = 0; t < GDB_REG_COUNT; t++)
        fake_regs[2][t] = 0x1111111111111111ull * (uint64_t)(t % 15 + 1);
    uint64_t want[GDB_REG_COUNT];
    memcpy(want, fake_regs[2], sizeof want);
    for (int t = GDB_EFLAGS; t <= GDB_GS; t++)
        want[t] &= 0xffffffffu;
    assert_int_equal(gdb_regs_encode_all(&fake_target, 2, g), 2 * GDB_G_BYTES);
    /* The x87 bytes come back as x; G carries digits there. */
    for (size_t i = 0; i < 2 * GDB_G_BYTES; i++)
        if (g[i] == 'x')
            g[i] = '0';
    memset(fake_regs[2], 0, sizeof fake_regs[2]);
    assert_int_equal(gdb_regs_decode_all(&fake_target, 2, g, 2 * GDB_G_BYTES), GDB_REGS_OK);
    assert_memory_equal(fake_regs[2], want, sizeof want);
    assert_int_equal(gdb_regs_decode_all(&fake_target, 2, g, 2 * GDB_G_BYTES - 1), GDB_REGS_MALFORMED);
    g[7] = 'x';
    assert_int_equal(gdb_regs_decode_all(&fake_target, 2, g, 2 * GDB_G_BYTES), GDB_REGS_MALFORMED);
}

/* ---- the target description ---- */

static char *whole_xml(void)
{
    size_t total = gdb_target_xml_length();
    char *xml = malloc(total + 1);
    assert_non_null(xml);
    assert_int_equal(gdb_target_xml_read(0, xml, total + 100), total);
    xml[total] = '\0';
    return xml;
}

/* Every tag closed, nested properly, every attribute value quoted: the part of well-formedness a generator
 * can get wrong. */
static void check_well_formed(const char *xml)
{
    char stack[16][64];
    int depth = 0;
    const char *p = xml;
    while ((p = strchr(p, '<')) != NULL) {
        const char *end = strchr(p, '>');
        assert_non_null(end);
        assert_null(memchr(p + 1, '<', (size_t)(end - p - 1)));
        size_t quotes = 0;
        for (const char *q = p; q < end; q++)
            quotes += *q == '"';
        assert_int_equal(quotes % 2, 0);
        if (p[1] == '?' || p[1] == '!') {
            /* declaration or doctype */
        } else if (p[1] == '/') {
            assert_true(depth > 0);
            depth--;
            size_t n = strlen(stack[depth]);
            assert_int_equal((size_t)(end - p - 2), n);
            assert_memory_equal(p + 2, stack[depth], n);
        } else if (end[-1] != '/') {
            size_t n = strcspn(p + 1, " >");
            assert_true(depth < 16 && n < 64);
            memcpy(stack[depth], p + 1, n);
            stack[depth][n] = '\0';
            depth++;
        }
        p = end + 1;
    }
    assert_int_equal(depth, 0);
}

static void test_xml_is_well_formed_with_the_registers_in_order(void **state)
{
    (void)state;
    char *xml = whole_xml();
    check_well_formed(xml);
    assert_memory_equal(xml, "<?xml version=\"1.0\"?>", 21);
    assert_non_null(strstr(xml, "<target version=\"1.0\">"));
    assert_non_null(strstr(xml, "<architecture>i386:x86-64</architecture>"));
    /* Nothing gdb would need escaped in a qXfer reply. */
    assert_null(strpbrk(xml, "$#}*"));

    const char *core = strstr(xml, "<feature name=\"org.gnu.gdb.i386.core\">");
    const char *segments = strstr(xml, "<feature name=\"org.gnu.gdb.i386.segments\">");
    assert_non_null(core);
    assert_non_null(segments);
    assert_true(core < segments);
    const char *flags = strstr(xml, "<flags id=\"i386_eflags\" size=\"4\">");
    assert_true(flags != NULL && flags > core && flags < segments);
    assert_non_null(strstr(flags, "<field name=\"CF\" start=\"0\" end=\"0\"/>"));
    assert_non_null(strstr(flags, "<field name=\"TF\" start=\"8\" end=\"8\"/>"));
    assert_non_null(strstr(flags, "<field name=\"ID\" start=\"21\" end=\"21\"/>"));

    /* Every register, in order, with its number; the x87 control registers in the float group. */
    const char *at = xml;
    for (unsigned i = 0; i < GDB_DESC_REGS; i++) {
        char tag[128];
        snprintf(tag, sizeof tag, "<reg name=\"%s\" bitsize=\"%u\"", gdb_names[i], gdb_regs[i].bitsize);
        const char *found = strstr(at, tag);
        if (found == NULL)
            fail_msg("register %u (%s) missing or out of order", i, gdb_names[i]);
        const char *end = strchr(found, '>');
        char regnum[32];
        snprintf(regnum, sizeof regnum, " regnum=\"%u\"", i);
        const char *r = strstr(found, regnum);
        assert_true(r != NULL && r < end);
        assert_true((found < segments) == (i < 40));
        at = end;
    }
    assert_null(strstr(at, "<reg "));
    assert_non_null(strstr(xml, "<reg name=\"eflags\" bitsize=\"32\" type=\"i386_eflags\" regnum=\"17\"/>"));
    assert_non_null(strstr(xml, "<reg name=\"rip\" bitsize=\"64\" type=\"code_ptr\" regnum=\"16\"/>"));
    assert_non_null(strstr(xml, "<reg name=\"cs\" bitsize=\"32\" type=\"int32\" regnum=\"18\"/>"));
    assert_non_null(strstr(xml, "<reg name=\"st7\" bitsize=\"80\" type=\"i387_ext\" regnum=\"31\"/>"));
    assert_non_null(strstr(xml, "<reg name=\"fop\" bitsize=\"32\" type=\"int\" regnum=\"39\" group=\"float\"/>"));
    assert_non_null(strstr(xml, "<reg name=\"gs_base\" bitsize=\"64\" type=\"int\" regnum=\"41\"/>"));
    free(xml);
}

static void test_xml_read_in_parts(void **state)
{
    (void)state;
    char *xml = whole_xml();
    size_t total = strlen(xml);
    char *copy = malloc(total + 1);
    assert_non_null(copy);
    for (size_t part = 1; part <= 257; part += (part < 8 ? 1 : 31)) {
        memset(copy, 0, total + 1);
        size_t at = 0;
        while (at < total) {
            size_t n = gdb_target_xml_read(at, copy + at, part);
            assert_int_equal(n, total - at < part ? total - at : part);
            at += n;
        }
        assert_string_equal(copy, xml);
    }
    char byte = '?';
    assert_int_equal(gdb_target_xml_read(total, &byte, 1), 0);
    assert_int_equal(gdb_target_xml_read(total + 1000, &byte, 1), 0);
    assert_int_equal(gdb_target_xml_read(0, &byte, 0), 0);
    assert_int_equal(byte, '?');
    free(copy);
    free(xml);
}

UNIT_MAIN_EACH(fake_target_fixture, NULL, NULL, NULL,
               test_table_matches_gdb, test_every_target_register_exactly_once, test_encode_decode_every_register,
               test_encode_all_decode_all, test_xml_is_well_formed_with_the_registers_in_order, test_xml_read_in_parts)
