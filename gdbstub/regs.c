/* gdbstub/regs.c: the register table (gdbstub/regs.h) and everything generated from it -- the target
 * description gdb reads at connection, and the little-endian hex of g/G and p/P. The table is the only place
 * that says which gdb register is which target register: a wrong row here shows up in gdb as a wrong value
 * under a right name, so tests/unit/test_gdb_regs.c sends a distinct value through every row both ways. */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gdbstub/packet.h"
#include "gdbstub/regs.h"
#include "kernel/lib/format.h"
#include "kernel/lib/string.h"

enum { FEATURE_CORE, FEATURE_SEGMENTS, FEATURE_COUNT };

static const char *const feature_names[FEATURE_COUNT] = {
    [FEATURE_CORE] = "org.gnu.gdb.i386.core",
    [FEATURE_SEGMENTS] = "org.gnu.gdb.i386.segments",
};

#define GPR(n, gnum, treg, t) { n, gnum, 8, 64, t, NULL, FEATURE_CORE, treg }
#define SEG(n, gnum, treg) { n, gnum, 4, 32, "int32", NULL, FEATURE_CORE, treg }
#define X87_ST(n, gnum) { n, gnum, 10, 80, "i387_ext", NULL, FEATURE_CORE, GDB_REG_NONE }
#define X87_CTL(n, gnum) { n, gnum, 4, 32, "int", "float", FEATURE_CORE, GDB_REG_NONE }

const struct gdb_reg_desc gdb_regs[GDB_DESC_REGS] = {
    GPR("rax", 0, GDB_RAX, "int64"),
    GPR("rbx", 1, GDB_RBX, "int64"),
    GPR("rcx", 2, GDB_RCX, "int64"),
    GPR("rdx", 3, GDB_RDX, "int64"),
    GPR("rsi", 4, GDB_RSI, "int64"),
    GPR("rdi", 5, GDB_RDI, "int64"),
    GPR("rbp", 6, GDB_RBP, "data_ptr"),
    GPR("rsp", 7, GDB_RSP, "data_ptr"),
    GPR("r8", 8, GDB_R8, "int64"),
    GPR("r9", 9, GDB_R9, "int64"),
    GPR("r10", 10, GDB_R10, "int64"),
    GPR("r11", 11, GDB_R11, "int64"),
    GPR("r12", 12, GDB_R12, "int64"),
    GPR("r13", 13, GDB_R13, "int64"),
    GPR("r14", 14, GDB_R14, "int64"),
    GPR("r15", 15, GDB_R15, "int64"),
    GPR("rip", 16, GDB_RIP, "code_ptr"),
    { "eflags", 17, 4, 32, "i386_eflags", NULL, FEATURE_CORE, GDB_EFLAGS },
    SEG("cs", 18, GDB_CS),
    SEG("ss", 19, GDB_SS),
    SEG("ds", 20, GDB_DS),
    SEG("es", 21, GDB_ES),
    SEG("fs", 22, GDB_FS),
    SEG("gs", 23, GDB_GS),
    X87_ST("st0", 24),
    X87_ST("st1", 25),
    X87_ST("st2", 26),
    X87_ST("st3", 27),
    X87_ST("st4", 28),
    X87_ST("st5", 29),
    X87_ST("st6", 30),
    X87_ST("st7", 31),
    X87_CTL("fctrl", 32),
    X87_CTL("fstat", 33),
    X87_CTL("ftag", 34),
    X87_CTL("fiseg", 35),
    X87_CTL("fioff", 36),
    X87_CTL("foseg", 37),
    X87_CTL("fooff", 38),
    X87_CTL("fop", 39),
    { "fs_base", 40, 8, 64, "int", NULL, FEATURE_SEGMENTS, GDB_FS_BASE },
    { "gs_base", 41, 8, 64, "int", NULL, FEATURE_SEGMENTS, GDB_GS_BASE },
};

/* The flag bits of EFLAGS, for the i386_eflags type the core feature defines. */
static const struct {
    const char *name;
    unsigned bit;
} eflags_bits[] = {
    { "CF", 0 },  { "PF", 2 },  { "AF", 4 },  { "ZF", 6 },  { "SF", 7 },   { "TF", 8 },
    { "IF", 9 },  { "DF", 10 }, { "OF", 11 }, { "NT", 14 }, { "RF", 16 },  { "VM", 17 },
    { "AC", 18 }, { "VIF", 19 }, { "VIP", 20 }, { "ID", 21 },
};

const struct gdb_reg_desc *gdb_reg_by_regnum(uint64_t regnum)
{
    return regnum < GDB_DESC_REGS ? &gdb_regs[regnum] : NULL;
}

const struct gdb_reg_desc *gdb_reg_for_target(enum gdb_reg reg)
{
    for (size_t i = 0; i < GDB_DESC_REGS; i++)
        if (gdb_regs[i].target_reg == (int)reg)
            return &gdb_regs[i];
    return NULL;
}

size_t gdb_reg_encode(const struct gdb_target *target, unsigned cpu, const struct gdb_reg_desc *reg,
                      char *dst)
{
    uint64_t value;
    if (reg->target_reg == GDB_REG_NONE || !target->reg_read(cpu, (enum gdb_reg)reg->target_reg, &value)) {
        memset(dst, 'x', 2 * reg->size);
        return 2 * reg->size;
    }
    for (unsigned i = 0; i < reg->size; i++) {
        uint8_t byte = (uint8_t)(value >> (8 * i));
        dst[2 * i] = hex_lower(byte >> 4);
        dst[2 * i + 1] = hex_lower(byte);
    }
    return 2 * reg->size;
}

bool gdb_reg_decode(const struct gdb_reg_desc *reg, const char *src, uint64_t *value)
{
    uint8_t bytes[GDB_REG_MAX_SIZE];
    if (!hex_decode(bytes, src, reg->size))
        return false;
    uint64_t v = 0;
    if (reg->target_reg != GDB_REG_NONE)
        for (unsigned i = 0; i < reg->size; i++)
            v |= (uint64_t)bytes[i] << (8 * i);
    *value = v;
    return true;
}

size_t gdb_regs_encode_all(const struct gdb_target *target, unsigned cpu, char *dst)
{
    size_t n = 0;
    for (size_t i = 0; i < GDB_DESC_REGS; i++)
        n += gdb_reg_encode(target, cpu, &gdb_regs[i], dst + n);
    return n;
}

enum gdb_regs_result gdb_regs_decode_all(const struct gdb_target *target, unsigned cpu, const char *src,
                                         size_t len)
{
    if (len != 2 * GDB_G_BYTES)
        return GDB_REGS_MALFORMED;
    for (size_t i = 0; i < len; i++)
        if (hex_value(src[i]) < 0)
            return GDB_REGS_MALFORMED;

    bool all_written = true;
    size_t offset = 0;
    for (size_t i = 0; i < GDB_DESC_REGS; i++) {
        const struct gdb_reg_desc *reg = &gdb_regs[i];
        uint64_t value;
        gdb_reg_decode(reg, src + offset, &value);
        offset += 2 * reg->size;
        if (reg->target_reg != GDB_REG_NONE && !target->reg_write(cpu, (enum gdb_reg)reg->target_reg, value))
            all_written = false;
    }
    return all_written ? GDB_REGS_OK : GDB_REGS_REFUSED;
}

/* ---- the target description ---- */

/* The description is generated whole on every request and only the asked-for window of it kept, so it needs
 * no buffer of its own; it is a few kilobytes, read once per connection. */
struct xml_window {
    char *buf;
    size_t offset; /* first byte of the description wanted */
    size_t len;    /* bytes wanted */
    size_t pos;    /* bytes of the description generated so far */
    size_t copied;
};

static void xml_text(struct xml_window *w, const char *text)
{
    for (; *text != '\0'; text++, w->pos++)
        if (w->pos >= w->offset && w->pos - w->offset < w->len)
            w->buf[w->copied++] = *text;
}

static void xml_printf(struct xml_window *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void xml_printf(struct xml_window *w, const char *fmt, ...)
{
    /* Every line generated is a short tag with names from the tables above; 160 bytes hold the longest
     * with room to spare, and test_gdb_regs checks the description's every tag is whole. */
    char line[160];
    va_list ap;
    va_start(ap, fmt);
    kvsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    xml_text(w, line);
}

static void xml_generate(struct xml_window *w)
{
    xml_text(w, "<?xml version=\"1.0\"?>\n"
                "<!DOCTYPE target SYSTEM \"gdb-target.dtd\">\n"
                "<target version=\"1.0\">\n"
                "<architecture>i386:x86-64</architecture>\n");
    unsigned open = FEATURE_COUNT;
    for (size_t i = 0; i < GDB_DESC_REGS; i++) {
        const struct gdb_reg_desc *reg = &gdb_regs[i];
        if (reg->feature != open) {
            if (open != FEATURE_COUNT)
                xml_text(w, "</feature>\n");
            open = reg->feature;
            xml_printf(w, "<feature name=\"%s\">\n", feature_names[open]);
            if (open == FEATURE_CORE) {
                xml_text(w, "<flags id=\"i386_eflags\" size=\"4\">\n");
                for (size_t b = 0; b < sizeof eflags_bits / sizeof eflags_bits[0]; b++)
                    xml_printf(w, "<field name=\"%s\" start=\"%u\" end=\"%u\"/>\n", eflags_bits[b].name,
                               eflags_bits[b].bit, eflags_bits[b].bit);
                xml_text(w, "</flags>\n");
            }
        }
        xml_printf(w, "<reg name=\"%s\" bitsize=\"%u\" type=\"%s\" regnum=\"%u\"", reg->name, reg->bitsize,
                   reg->type, reg->regnum);
        if (reg->group != NULL)
            xml_printf(w, " group=\"%s\"", reg->group);
        xml_text(w, "/>\n");
    }
    xml_text(w, "</feature>\n</target>\n");
}

size_t gdb_target_xml_read(size_t offset, char *buf, size_t len)
{
    struct xml_window w = { .buf = buf, .offset = offset, .len = len };
    xml_generate(&w);
    return w.copied;
}

size_t gdb_target_xml_length(void)
{
    struct xml_window w = { .buf = NULL, .offset = 0, .len = 0 };
    xml_generate(&w);
    return w.pos;
}
