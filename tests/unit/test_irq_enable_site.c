/* tests/unit/test_irq_enable_site.c: arch/x86_64/irq_enable_site.c on instruction bytes -- a held-off tick
 * let in right after a popf, or after an sti and the nop in its shadow, is recognised; the idle loop's
 * sti; hlt and every other byte pair are not. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "hal/context.h"
#include "unit_main.h"

static const char *site_after(const uint8_t *code, size_t len) { return irq_enable_before((uintptr_t)(code + len)); }

static void popf_is_a_let_in_site(void **state)
{
    (void)state;
    static const uint8_t code[] = { 0x57, 0x9d }; /* push %rdi; popfq */
    assert_string_equal(site_after(code, sizeof code), "popf");
}

static void sti_then_its_shadow_nop(void **state)
{
    (void)state;
    static const uint8_t code[] = { 0x48, 0xfb, 0x90 }; /* ...; sti; nop */
    assert_string_equal(site_after(code, sizeof code), "sti");
}

static void idle_halt_is_not(void **state)
{
    (void)state;
    static const uint8_t code[] = { 0xfb, 0xf4 }; /* sti; hlt: the CPU was idle, not holding ticks off */
    assert_null(site_after(code, sizeof code));
}

static void ordinary_code_is_not(void **state)
{
    (void)state;
    static const uint8_t code[] = { 0x48, 0x89, 0xe5, 0x90, 0x90, 0xc3, 0xfb, 0x5d };
    for (size_t end = 2; end <= sizeof code; end++)
        if (!(code[end - 1] == 0x9d || (code[end - 2] == 0xfb && code[end - 1] == 0x90)))
            assert_null(site_after(code, end));
}

UNIT_MAIN(NULL, NULL,
          popf_is_a_let_in_site, sti_then_its_shadow_nop, idle_halt_is_not, ordinary_code_is_not)
