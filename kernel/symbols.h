/* kernel/symbols.h: the kernel's own symbol table, baked into the image by the multi-pass link
 * (scripts/link.sh, scripts/gensyms.py), and the lookup that turns a text address into name + offset.
 * Lookup is for task context (reports, panics); nothing resolves symbols in an interrupt or NMI handler. */
#ifndef KERNEL_SYMBOLS_H
#define KERNEL_SYMBOLS_H

#include <stdbool.h>
#include <stdint.h>

/* One function symbol; the table is sorted by addr, no two entries share an address. */
struct ksym {
    uint64_t addr;
    uint32_t size;        /* from nm -S; 0 when unknown (assembly): then it reaches to the next symbol */
    uint32_t name_offset; /* into the names blob */
};

struct symtab {
    const struct ksym *syms;
    uint32_t count;
    const char *names;
    uint64_t text_start; /* [text_start, text_end): the only addresses that can resolve */
    uint64_t text_end;
};

struct symbol_hit {
    const char *name;
    uint64_t start;  /* the symbol's address: what the profiler folds a leaf by */
    uint64_t offset; /* addr - start */
};

/* Where the loadable segment holding the text is: its address, its size in the file, and its offset in the ELF
 * file (build/kprof.elf) -- what a pprof mapping names so a host tool can find an address in the file. */
struct kernel_segment {
    uint64_t vaddr;
    uint64_t filesz;
    uint64_t file_offset;
};

/* Generated per link pass (build/syms.N.c). */
extern const struct kernel_segment kernel_text_segment;
extern const struct ksym kernel_symbols[];
extern const uint32_t kernel_symbol_count;
extern const char kernel_symbol_names[];

/* The table of the running kernel. */
const struct symtab *kernel_symtab(void);

/* Finds the symbol containing addr: the last symbol at or below addr, if addr is inside the text range and
 * inside that symbol (below addr + size when the size is known). False for gaps and anything outside. */
bool symtab_lookup(const struct symtab *tab, uint64_t addr, struct symbol_hit *hit);
bool symbol_resolve(uint64_t addr, struct symbol_hit *hit);

/* For a return address: the symbol holding the call instruction, found by addr - 1 (a call to a noreturn
 * function can be a function's last instruction, leaving the return address past its end), with
 * hit->offset = addr - start, the offset a backtrace prints. */
bool symtab_lookup_return(const struct symtab *tab, uint64_t addr, struct symbol_hit *hit);

/* Finds a symbol's address by exact name (for tests and the shell); false when absent. */
bool symtab_find(const struct symtab *tab, const char *name, uint64_t *addr);

struct sink;
/* "Symbol+0xoff" for a return address, resolved as one (symtab_lookup_return) in tab, or "0xaddr" when it does not
 * resolve: how every chain the kernel prints names a caller. */
void symbol_print_return(struct sink *out, const struct symtab *tab, uint64_t addr);
/* The frame line of Go's text profiles (goroutine, heap, block and mutex with ?debug=1): "#\t0xaddr\tSymbol+0xoff",
 * addr resolved as code for a leaf and as a return address otherwise, or "#\t0xaddr" when it does not resolve. */
void symbol_print_go_frame(struct sink *out, const struct symtab *tab, uint64_t addr, bool leaf);
/* Prints one "        <- Symbol+0xoff" line per return address, resolved in the running kernel's table (a raw
 * address when it does not resolve): the lines of a panic's backtrace and of `tasks`, which read as the
 * profiler report's callers do. */
void backtrace_print(struct sink *out, const uintptr_t *addrs, int count);
/* One "        at Symbol+0xoff" line: where an interrupted task was (pc resolved as code, not as a return). */
void backtrace_print_pc(struct sink *out, uintptr_t pc);

#endif
