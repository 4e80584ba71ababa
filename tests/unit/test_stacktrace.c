/* tests/unit/test_stacktrace.c: stack_walk and stack_trace_from (kernel/stacktrace.c) over synthetic stacks
 * built in arrays and a synthetic text buffer, plus one walk of a real frame chain on a thread whose stack
 * bounds are known exactly. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "fake_hal.h"
#include "kernel/stacktrace.h"

#define WORDS 64
#define SENTINEL ((uintptr_t)0x5e5e5e5e5e5e5e5eull)

static _Alignas(16) uintptr_t stack[WORDS];
static struct stack_bounds bounds;
static uintptr_t out[16];

static uintptr_t at(int word)
{
    return (uintptr_t)&stack[word];
}

/* A frame at word i: saved rbp (the caller's frame), then the return address. */
static void frame(int i, uintptr_t saved_rbp, uintptr_t return_address)
{
    stack[i] = saved_rbp;
    stack[i + 1] = return_address;
}

static int setup(void **state)
{
    (void)state;
    memset(stack, 0, sizeof stack);
    for (int i = 0; i < 16; i++)
        out[i] = SENTINEL;
    bounds.lo = at(0);
    bounds.hi = at(WORDS);
    return 0;
}

/* The usual chain: frames at words 4, 10 and 20; the outermost has saved rbp 0. */
/* The walk from rbp within b (into out, room for 16) finds exactly the n return addresses of want, and
 * writes nothing past them. */
static void expect_walk(uintptr_t rbp, const struct stack_bounds *b, const uintptr_t *want, int n)
{
    assert_int_equal(stack_walk(rbp, b, out, 16), n);
    for (int i = 0; i < n; i++)
        assert_int_equal(out[i], want[i]);
    assert_int_equal(out[n], SENTINEL);
}

static void three_frames(void)
{
    frame(4, at(10), 0xa1);
    frame(10, at(20), 0xa2);
    frame(20, 0, 0xa3);
}

static void test_normal_chain(void **state)
{
    (void)state;
    three_frames();
    expect_walk(at(4), &bounds, (const uintptr_t[]){ 0xa1, 0xa2, 0xa3 }, 3);
}

static void test_zero_return_address_ends_walk(void **state)
{
    (void)state;
    frame(4, at(10), 0xa1);
    frame(10, at(20), 0);
    frame(20, 0, 0xa3);
    expect_walk(at(4), &bounds, (const uintptr_t[]){ 0xa1 }, 1);
}

static void test_frame_pointing_to_itself(void **state)
{
    (void)state;
    frame(4, at(10), 0xa1);
    frame(10, at(10), 0xa2);
    expect_walk(at(4), &bounds, (const uintptr_t[]){ 0xa1, 0xa2 }, 2);
}

static void test_frame_pointing_back_down(void **state)
{
    (void)state;
    frame(4, at(10), 0xa1);
    frame(10, at(20), 0xa2);
    frame(20, at(4), 0xa3); /* a loop through lower frames */
    assert_int_equal(stack_walk(at(4), &bounds, out, 16), 3);
    assert_int_equal(out[2], 0xa3);
    assert_int_equal(out[3], SENTINEL);
}

static void test_misaligned_rbp(void **state)
{
    (void)state;
    three_frames();
    assert_int_equal(stack_walk(at(4) + 4, &bounds, out, 16), 0);
    assert_int_equal(stack_walk(at(4) + 1, &bounds, out, 16), 0);
    assert_int_equal(out[0], SENTINEL);
    /* A misaligned saved rbp in the middle ends the walk after that frame. */
    stack[10] = at(20) + 2;
    assert_int_equal(stack_walk(at(4), &bounds, out, 16), 2);
    assert_int_equal(out[1], 0xa2);
    assert_int_equal(out[2], SENTINEL);
}

static void test_non_canonical_rbp(void **state)
{
    (void)state;
    /* Bounds covering the whole address space: only the canonical check stands between the walk and a
     * faulting read, so reaching the assertions proves it held. */
    const struct stack_bounds everything = { 0, UINTPTR_MAX };
    assert_int_equal(stack_walk((uintptr_t)0x0000800000000000ull, &everything, out, 16), 0);
    assert_int_equal(stack_walk((uintptr_t)0x8000000000000000ull, &everything, out, 16), 0);
    assert_int_equal(stack_walk((uintptr_t)0xffff7ffffffffff0ull, &everything, out, 16), 0);
    assert_int_equal(stack_walk((uintptr_t)0x7fff000000000000ull, &everything, out, 16), 0);
    assert_int_equal(out[0], SENTINEL);
    /* A chain leading to a non-canonical frame stops before reading it. */
    frame(4, (uintptr_t)0x0001000000000000ull, 0xa1);
    assert_int_equal(stack_walk(at(4), &everything, out, 16), 1);
    assert_int_equal(out[0], 0xa1);
}

static void test_rbp_outside_stack(void **state)
{
    (void)state;
    three_frames();
    struct stack_bounds narrow = { at(8), at(WORDS) };
    assert_int_equal(stack_walk(at(4), &narrow, out, 16), 0); /* below lo */
    assert_int_equal(stack_walk(at(WORDS), &bounds, out, 16), 0); /* at hi */
    assert_int_equal(stack_walk(at(WORDS - 1), &bounds, out, 16), 0); /* frame would straddle hi */
    struct stack_bounds low_half = { at(0), at(30) };
    frame(29, 0, 0xbad); /* its return address word lies at hi: outside */
    assert_int_equal(stack_walk(at(29), &low_half, out, 16), 0);
    assert_int_equal(stack_walk(0, &bounds, out, 16), 0);
    assert_int_equal(out[0], SENTINEL);
    /* The last two words still make a whole frame. */
    frame(WORDS - 2, 0, 0xb1);
    assert_int_equal(stack_walk(at(WORDS - 2), &bounds, out, 16), 1);
    assert_int_equal(out[0], 0xb1);
    /* A chain that leaves the stack ends there. */
    struct stack_bounds short_stack = { at(0), at(20) };
    assert_int_equal(stack_walk(at(4), &short_stack, out, 16), 2);
    assert_int_equal(out[1], 0xa2);
    assert_int_equal(out[2], SENTINEL);
    /* Degenerate bounds never read. */
    struct stack_bounds tiny = { 0, 8 };
    assert_int_equal(stack_walk(0, &tiny, out, 16), 0);
}

static void test_max_frames(void **state)
{
    (void)state;
    for (int i = 0; i < 10; i++)
        frame(4 + 4 * i, i == 9 ? 0 : at(8 + 4 * i), 0xc0 + (uintptr_t)i);
    assert_int_equal(stack_walk(at(4), &bounds, out, 16), 10);
    assert_int_equal(out[9], 0xc9);
    for (int i = 0; i < 16; i++)
        out[i] = SENTINEL;
    assert_int_equal(stack_walk(at(4), &bounds, out, 3), 3);
    assert_int_equal(out[0], 0xc0);
    assert_int_equal(out[2], 0xc2);
    assert_int_equal(out[3], SENTINEL);
    assert_int_equal(stack_walk(at(4), &bounds, out, 0), 0);
    assert_int_equal(stack_walk(at(4), &bounds, out, -1), 0);
}

/* The per-frame check of a caller's frame is a single comparison (kernel/stacktrace.c): each thing it folds
 * together still ends the walk on its own. */
static void test_caller_frame_one_word_up_is_followed(void **state)
{
    (void)state;
    /* Frames overlap but rise: [4] -> [5] -> [6]. */
    stack[4] = at(5);
    stack[5] = at(6); /* frame 4's return address, and frame 5's saved rbp */
    stack[6] = 0xa2;  /* frame 5's return address */
    expect_walk(at(4), &bounds, (const uintptr_t[]){ at(6), 0xa2 }, 2);
}

static void test_every_misalignment_of_a_caller_frame_ends_walk(void **state)
{
    (void)state;
    for (uintptr_t off = 1; off < 8; off++) {
        three_frames();
        stack[10] = at(20) + off;
        out[2] = SENTINEL;
        assert_int_equal(stack_walk(at(4), &bounds, out, 16), 2);
        assert_int_equal(out[1], 0xa2);
        assert_int_equal(out[2], SENTINEL);
    }
}

/* Within b, the innermost frame's caller at word w (returning to ret) is followed, and at w + 1 it is not. */
static void expect_top_frame(const struct stack_bounds *b, int w, uintptr_t ret)
{
    frame(4, at(w), 0xa1);
    frame(w, 0, ret);
    assert_int_equal(stack_walk(at(4), b, out, 16), 2);
    assert_int_equal(out[1], ret);
    out[1] = SENTINEL;
    frame(4, at(w + 1), 0xa1);
    assert_int_equal(stack_walk(at(4), b, out, 16), 1);
    assert_int_equal(out[1], SENTINEL);
}

static void test_caller_frame_at_the_top_of_the_stack(void **state)
{
    (void)state;
    /* The last two words make a whole frame: followed; one word higher it would straddle hi: not. */
    expect_top_frame(&bounds, WORDS - 2, 0xb1);
    /* hi not a multiple of 8: a frame at the last whole pair of words below it still counts, none above. */
    struct stack_bounds ragged = { at(0), at(WORDS) - 1 };
    expect_top_frame(&ragged, WORDS - 3, 0xb2);
    assert_int_equal(stack_walk(at(WORDS - 2), &ragged, out, 16), 0);
}

static void test_caller_frame_below_lo_is_impossible_and_far_above_ends_walk(void **state)
{
    (void)state;
    /* A saved rbp of 0 (below the frame) and one of all ones (above any stack) both end the walk. */
    frame(4, 0, 0xa1);
    assert_int_equal(stack_walk(at(4), &bounds, out, 16), 1);
    frame(4, UINTPTR_MAX & ~(uintptr_t)7, 0xa1);
    assert_int_equal(stack_walk(at(4), &bounds, out, 16), 1);
    const struct stack_bounds everything = { 0, UINTPTR_MAX };
    assert_int_equal(stack_walk(at(4), &everything, out, 16), 1);
    /* The first non-canonical address above the low half, with bounds that include it. */
    frame(4, (uintptr_t)0x0000800000000000ull, 0xa1);
    assert_int_equal(stack_walk(at(4), &everything, out, 16), 1);
    struct stack_bounds across_the_hole = { at(0), (uintptr_t)0xffff800000001000ull };
    assert_int_equal(stack_walk(at(4), &across_the_hole, out, 16), 1);
    assert_int_equal(out[0], 0xa1);
}

/* Synthetic text: push %rbp at 0, mov %rsp,%rbp at 1, a nop at 4, ret at 8; at 30 a mov cut off by text_end
 * (at 32) after two bytes. */
static uint8_t code[64];
static struct text_bounds text;
#define CALLER_AT_SP 0xc1
#define CALLER_AT_SP8 0xc2

static int setup_trace(void **state)
{
    setup(state);
    memset(code, 0x90, sizeof code);
    code[0] = 0x55;
    code[1] = 0x48;
    code[2] = 0x89;
    code[3] = 0xe5;
    code[8] = 0xc3;
    code[30] = 0x48;
    code[31] = 0x89;
    code[32] = 0xe5;
    text.lo = (uintptr_t)&code[0];
    text.hi = (uintptr_t)&code[32];
    /* sp is word 2: [sp] and [sp+8] hold what each case must pick; rbp is the caller's frame at word 4. */
    stack[2] = CALLER_AT_SP;
    stack[3] = CALLER_AT_SP8;
    three_frames();
    return 0;
}

static int trace(int pc_offset, int max)
{
    return stack_trace_from((uintptr_t)&code[pc_offset], at(2), at(4), &bounds, &text, out, max);
}

static void expect_chain(int count, uintptr_t pc, uintptr_t direct_caller)
{
    int i = 0;
    assert_int_equal(out[i++], pc);
    if (direct_caller != 0)
        assert_int_equal(out[i++], direct_caller);
    assert_int_equal(out[i++], 0xa1);
    assert_int_equal(out[i++], 0xa2);
    assert_int_equal(out[i++], 0xa3);
    assert_int_equal(count, i);
    assert_int_equal(out[i], SENTINEL);
}

static void test_trace_at_push_rbp_takes_caller_from_sp(void **state)
{
    (void)state;
    expect_chain(trace(0, 16), (uintptr_t)&code[0], CALLER_AT_SP);
}

static void test_trace_at_mov_rsp_rbp_takes_caller_above_saved_rbp(void **state)
{
    (void)state;
    expect_chain(trace(1, 16), (uintptr_t)&code[1], CALLER_AT_SP8);
}

static void test_trace_at_ret_takes_caller_from_sp(void **state)
{
    (void)state;
    expect_chain(trace(8, 16), (uintptr_t)&code[8], CALLER_AT_SP);
}

static void test_trace_in_function_body_walks_frames_only(void **state)
{
    (void)state;
    expect_chain(trace(4, 16), (uintptr_t)&code[4], 0);
    /* The bytes of a mov, but starting one byte in: not an instruction start the prologue has. */
    expect_chain(trace(2, 16), (uintptr_t)&code[2], 0);
}

static void test_trace_other_rex_w_instruction_not_recognised(void **state)
{
    (void)state;
    /* 48 89 e6 is mov %rsp,%rsi, 48 8b ec is mov %rsp,%rbp in its other encoding (not what compilers emit
     * in a prologue), 48 83 ec is a sub from rsp: none is the prologue's mov. */
    static const uint8_t others[][3] = { { 0x48, 0x89, 0xe6 }, { 0x48, 0x8b, 0xec }, { 0x48, 0x83, 0xec } };
    for (unsigned i = 0; i < sizeof others / sizeof others[0]; i++) {
        memcpy(&code[12], others[i], 3);
        for (int j = 0; j < 16; j++)
            out[j] = SENTINEL;
        expect_chain(trace(12, 16), (uintptr_t)&code[12], 0);
    }
}

static void test_trace_recognised_pc_with_bad_frame_chain(void **state)
{
    (void)state;
    /* The direct caller comes from sp even when rbp leads nowhere; the walk then adds nothing. */
    int n = stack_trace_from((uintptr_t)&code[0], at(2), at(4) + 3, &bounds, &text, out, 16);
    assert_int_equal(n, 2);
    assert_int_equal(out[1], CALLER_AT_SP);
    assert_int_equal(out[2], SENTINEL);
    n = stack_trace_from((uintptr_t)&code[1], at(2), 0, &bounds, &text, out, 16);
    assert_int_equal(n, 2);
    assert_int_equal(out[1], CALLER_AT_SP8);
}

static void test_trace_mov_cut_by_text_end_not_recognised(void **state)
{
    (void)state;
    expect_chain(trace(30, 16), (uintptr_t)&code[30], 0);
}

static void test_trace_pc_outside_text_reads_no_bytes(void **state)
{
    (void)state;
    /* pc 1 is unmapped: reading it would crash the test. */
    int n = stack_trace_from(1, at(2), at(4), &bounds, &text, out, 16);
    expect_chain(n, 1, 0);
    /* A push %rbp byte just below text_start is not looked at. */
    struct text_bounds above = { (uintptr_t)&code[1], (uintptr_t)&code[32] };
    for (int i = 0; i < 16; i++)
        out[i] = SENTINEL;
    n = stack_trace_from((uintptr_t)&code[0], at(2), at(4), &bounds, &above, out, 16);
    expect_chain(n, (uintptr_t)&code[0], 0);
    /* Nor is the ret byte at text_end. */
    code[32] = 0xc3;
    for (int i = 0; i < 16; i++)
        out[i] = SENTINEL;
    n = stack_trace_from((uintptr_t)&code[32], at(2), at(4), &bounds, &text, out, 16);
    expect_chain(n, (uintptr_t)&code[32], 0);
    /* Without text bounds nothing is read either. */
    for (int i = 0; i < 16; i++)
        out[i] = SENTINEL;
    n = stack_trace_from(1, at(2), at(4), &bounds, NULL, out, 16);
    expect_chain(n, 1, 0);
}

static void test_trace_sp_outside_stack_skips_direct_caller(void **state)
{
    (void)state;
    struct stack_bounds from_word_3 = { at(3), at(WORDS) };
    int n = stack_trace_from((uintptr_t)&code[0], at(2), at(4), &from_word_3, &text, out, 16);
    expect_chain(n, (uintptr_t)&code[0], 0);
    /* Misaligned sp. */
    for (int i = 0; i < 16; i++)
        out[i] = SENTINEL;
    n = stack_trace_from((uintptr_t)&code[8], at(2) + 4, at(4), &bounds, &text, out, 16);
    expect_chain(n, (uintptr_t)&code[8], 0);
    /* sp on the last word: the mov case's [sp+8] would be past hi. */
    stack[WORDS - 1] = 0xdd;
    for (int i = 0; i < 16; i++)
        out[i] = SENTINEL;
    n = stack_trace_from((uintptr_t)&code[1], at(WORDS - 1), at(4), &bounds, &text, out, 16);
    expect_chain(n, (uintptr_t)&code[1], 0);
    /* ...while the push case may read it. */
    for (int i = 0; i < 16; i++)
        out[i] = SENTINEL;
    n = stack_trace_from((uintptr_t)&code[0], at(WORDS - 1), at(4), &bounds, &text, out, 16);
    expect_chain(n, (uintptr_t)&code[0], 0xdd);
}

static void test_trace_zero_caller_is_not_reported(void **state)
{
    (void)state;
    stack[2] = 0;
    expect_chain(trace(0, 16), (uintptr_t)&code[0], 0);
}

static void test_trace_respects_max(void **state)
{
    (void)state;
    assert_int_equal(trace(0, 0), 0);
    assert_int_equal(out[0], SENTINEL);
    assert_int_equal(trace(0, 1), 1);
    assert_int_equal(out[0], (uintptr_t)&code[0]);
    assert_int_equal(out[1], SENTINEL);
    assert_int_equal(trace(0, 2), 2);
    assert_int_equal(out[1], CALLER_AT_SP);
    assert_int_equal(out[2], SENTINEL);
    assert_int_equal(trace(0, 3), 3);
    assert_int_equal(out[2], 0xa1);
    assert_int_equal(out[3], SENTINEL);
    assert_int_equal(trace(4, 2), 2);
    assert_int_equal(out[1], 0xa1);
}

/* A real frame chain: nested non-inlined calls on a thread whose stack is a known buffer. Each level
 * records where it will return to; the walk from the innermost frame must list exactly those. */
static _Alignas(16) unsigned char thread_stack[256 * 1024];
static uintptr_t expected_returns[3];
static uintptr_t walked[8];
static int walked_count;

__attribute__((noinline)) static void level3(void)
{
    expected_returns[0] = (uintptr_t)__builtin_return_address(0);
    struct stack_bounds b = { (uintptr_t)thread_stack, (uintptr_t)thread_stack + sizeof thread_stack };
    walked_count = stack_walk((uintptr_t)__builtin_frame_address(0), &b, walked, 8);
    __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void level2(void)
{
    expected_returns[1] = (uintptr_t)__builtin_return_address(0);
    level3();
    __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void level1(void)
{
    expected_returns[2] = (uintptr_t)__builtin_return_address(0);
    level2();
    __asm__ volatile("" ::: "memory");
}

static void *thread_main(void *arg)
{
    (void)arg;
    level1();
    return NULL;
}

static void test_walk_real_frames(void **state)
{
    (void)state;
    pthread_attr_t attr;
    pthread_t thread;
    assert_int_equal(pthread_attr_init(&attr), 0);
    assert_int_equal(pthread_attr_setstack(&attr, thread_stack, sizeof thread_stack), 0);
    assert_int_equal(pthread_create(&thread, &attr, thread_main, NULL), 0);
    assert_int_equal(pthread_join(thread, NULL), 0);
    pthread_attr_destroy(&attr);
    assert_true(walked_count >= 3);
    assert_int_equal(walked[0], expected_returns[0]);
    assert_int_equal(walked[1], expected_returns[1]);
    assert_int_equal(walked[2], expected_returns[2]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_normal_chain, setup),
        cmocka_unit_test_setup(test_zero_return_address_ends_walk, setup),
        cmocka_unit_test_setup(test_frame_pointing_to_itself, setup),
        cmocka_unit_test_setup(test_frame_pointing_back_down, setup),
        cmocka_unit_test_setup(test_misaligned_rbp, setup),
        cmocka_unit_test_setup(test_non_canonical_rbp, setup),
        cmocka_unit_test_setup(test_rbp_outside_stack, setup),
        cmocka_unit_test_setup(test_max_frames, setup),
        cmocka_unit_test_setup(test_caller_frame_one_word_up_is_followed, setup),
        cmocka_unit_test_setup(test_every_misalignment_of_a_caller_frame_ends_walk, setup),
        cmocka_unit_test_setup(test_caller_frame_at_the_top_of_the_stack, setup),
        cmocka_unit_test_setup(test_caller_frame_below_lo_is_impossible_and_far_above_ends_walk, setup),
        cmocka_unit_test_setup(test_trace_at_push_rbp_takes_caller_from_sp, setup_trace),
        cmocka_unit_test_setup(test_trace_at_mov_rsp_rbp_takes_caller_above_saved_rbp, setup_trace),
        cmocka_unit_test_setup(test_trace_at_ret_takes_caller_from_sp, setup_trace),
        cmocka_unit_test_setup(test_trace_in_function_body_walks_frames_only, setup_trace),
        cmocka_unit_test_setup(test_trace_mov_cut_by_text_end_not_recognised, setup_trace),
        cmocka_unit_test_setup(test_trace_other_rex_w_instruction_not_recognised, setup_trace),
        cmocka_unit_test_setup(test_trace_recognised_pc_with_bad_frame_chain, setup_trace),
        cmocka_unit_test_setup(test_trace_pc_outside_text_reads_no_bytes, setup_trace),
        cmocka_unit_test_setup(test_trace_sp_outside_stack_skips_direct_caller, setup_trace),
        cmocka_unit_test_setup(test_trace_zero_caller_is_not_reported, setup_trace),
        cmocka_unit_test_setup(test_trace_respects_max, setup_trace),
        cmocka_unit_test(test_walk_real_frames),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
