/* tests/unit/unit_main.h: the one way a unit test binary writes its main(). The tests are listed by name,
 * several to a line, in the order they run; each keeps cmocka's usual name (its function's name, as
 * cmocka_unit_test() gives it) and the group is "tests", as cmocka_run_group_tests(tests, ...) names it.
 *
 *   UNIT_MAIN(group_setup, group_teardown, test_a, test_b, ...)
 *       every test bare, as cmocka_unit_test(test_a);
 *   UNIT_MAIN_EACH(setup, teardown, group_setup, group_teardown, test_a, test_b, ...)
 *       every test with the same fixture, as cmocka_unit_test_setup_teardown(test_a, setup, teardown).
 *
 * Any of the fixtures may be NULL. A file whose tests need different fixtures writes its table itself. */
#ifndef UNIT_MAIN_H
#define UNIT_MAIN_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

/* Runs fns[0..n) as one group; names is the list as the preprocessor spelled it, "test_a, test_b, ...". */
static inline int unit_main_run(const char *names, const CMUnitTestFunction *fns, size_t n, CMFixtureFunction setup,
                                CMFixtureFunction teardown, CMFixtureFunction group_setup,
                                CMFixtureFunction group_teardown)
{
    char list[strlen(names) + 1];
    struct CMUnitTest tests[n];
    memcpy(list, names, sizeof list);
    char *next = list;
    for (size_t i = 0; i < n; i++) {
        char *name = next + strspn(next, " ");
        next = name + strcspn(name, ",") + 1;
        name[strcspn(name, ", ")] = '\0';
        tests[i] = (struct CMUnitTest){
            .name = name, .test_func = fns[i], .setup_func = setup, .teardown_func = teardown};
    }
    return cmocka_run_group_tests_name("tests", tests, group_setup, group_teardown);
}

#define UNIT_MAIN_EACH(setup, teardown, group_setup, group_teardown, ...)                                          \
    int main(void)                                                                                                 \
    {                                                                                                              \
        static const CMUnitTestFunction fns[] = {__VA_ARGS__};                                                     \
        return unit_main_run(#__VA_ARGS__, fns, sizeof fns / sizeof fns[0], setup, teardown, group_setup,          \
                             group_teardown);                                                                      \
    }

#define UNIT_MAIN(group_setup, group_teardown, ...) UNIT_MAIN_EACH(NULL, NULL, group_setup, group_teardown, __VA_ARGS__)

#endif
