/* tests/unit/test_fixup.c: the fault-tolerant MSR accessors of arch/x86_64/msr.c and the exception-fixup
 * lookup of arch/x86_64/fixup.c, for real: on the host, RDMSR and WRMSR in user mode raise #GP, which Linux
 * delivers as SIGSEGV; the handler plays the kernel's #GP handler -- it hands the faulting context to
 * exception_fixup() and resumes where that says. So the inline assembly, its __ex_table entries (as the linker
 * gathers them) and the lookup are exercised together, and an access reports false instead of crashing. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <ucontext.h>
#include <cmocka.h>

#include "arch/x86_64/context.h"
#include "arch/x86_64/fixup.h"
#include "arch/x86_64/msr.h"
#include "unit_main.h"

extern const struct ex_entry __start___ex_table[], __stop___ex_table[];

static int faults, fixed;

static void on_segv(int sig, siginfo_t *info, void *uctx)
{
    (void)sig;
    (void)info;
    ucontext_t *uc = uctx;
    struct context ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.vector = 13; /* #GP */
    ctx.rip = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
    faults++;
    if (!exception_fixup(&ctx)) {
        /* Not ours to fix: die as the kernel would panic. */
        signal(SIGSEGV, SIG_DFL);
        return;
    }
    fixed++;
    uc->uc_mcontext.gregs[REG_RIP] = (greg_t)ctx.rip;
}

/* Called at the start of each test body: cmocka installs its own SIGSEGV handler around every test, after
 * any setup function has run. */
static void catch_gp(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_segv;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    assert_int_equal(sigaction(SIGSEGV, &sa, NULL), 0);
    faults = fixed = 0;
}

static void rdmsr_fault_returns_false(void **state)
{
    (void)state;
    catch_gp();
    uint64_t v = 0x1234;
    assert_false(rdmsr_safe(0x1D9, &v));
    assert_int_equal(v, 0x1234); /* left alone */
    assert_int_equal(faults, 1);
    assert_int_equal(fixed, 1);
    assert_false(rdmsr_safe(0xC0010201u, &v));
    assert_int_equal(fixed, 2);
}

static void wrmsr_fault_returns_false(void **state)
{
    (void)state;
    catch_gp();
    assert_false(wrmsr_safe(0x38F, 1ull << 33));
    assert_false(wrmsr_safe(0xC0010200u, 0x530076));
    assert_int_equal(fixed, 2);
}

static void table_holds_both_accessors(void **state)
{
    (void)state;
    /* Each entry names an instruction and a landing just past the instruction that clears the error flag:
     * inside the accessor, a few bytes on. */
    size_t n = (size_t)(__stop___ex_table - __start___ex_table);
    assert_true(n >= 2);
    for (const struct ex_entry *e = __start___ex_table; e < __stop___ex_table; e++) {
        assert_true(e->landing > e->insn);
        assert_true(e->landing - e->insn <= 8);
    }
}

static void lookup_refuses_what_is_not_registered(void **state)
{
    (void)state;
    struct context ctx;
    memset(&ctx, 0, sizeof ctx);
    ctx.vector = 13;
    ctx.rip = (uint64_t)(uintptr_t)&lookup_refuses_what_is_not_registered;
    assert_false(exception_fixup(&ctx));
    assert_int_equal(ctx.rip, (uint64_t)(uintptr_t)&lookup_refuses_what_is_not_registered);

    /* A registered instruction, but not a fault the table is for (#UD): not fixed either. */
    ctx.rip = __start___ex_table[0].insn;
    ctx.vector = 6;
    assert_false(exception_fixup(&ctx));
    assert_int_equal(ctx.rip, __start___ex_table[0].insn);
    /* #PF is. */
    ctx.vector = 14;
    assert_true(exception_fixup(&ctx));
    assert_int_equal(ctx.rip, __start___ex_table[0].landing);
}

UNIT_MAIN(NULL, NULL,
          rdmsr_fault_returns_false, wrmsr_fault_returns_false, table_holds_both_accessors,
          lookup_refuses_what_is_not_registered)
