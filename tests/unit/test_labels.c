/* tests/unit/test_labels.c: label sets (kernel/labels.c) and the `label` command (kernel/shell/cmd_label.c) --
 * the key and value rules, pair parsing, interning (the same pairs in any order give the same pointer, sorted
 * inside; refusals leave the table as it was), formatting, lookup, the task's pointer, the span form of the
 * command, and the pool filling up: a clear error, counted, the command's one line, every earlier set intact
 * and still found, and room again once a set's last reference goes. No profiler runs here, so a retired set is
 * freed at once (tests/unit/test_labels_pool.c waits for readers). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "fake_hal.h"
#include "shell_line.h"
#include "kernel/shell/commands.h"
#include "kernel/labels.h"
#include "kernel/lib/sink.h"
#include "kernel/task.h"

static struct label_pair pair(const char *key, const char *value)
{
    struct label_pair p;
    memset(&p, 0x5a, sizeof p); /* garbage after the strings must not matter */
    strcpy(p.key, key);
    strcpy(p.value, value);
    return p;
}

static const char *text_of(const struct label_set *set)
{
    static char buf[LABEL_SET_TEXT_MAX];
    size_t n = label_set_format(set, buf, sizeof buf);
    assert_int_equal(n, strlen(buf));
    return buf;
}

/* ---- the rules ------------------------------------------------------------------------------------------ */

/* check says want of each of the texts (a NULL-ended list); a failure names the text. */
static void expect_validity(bool (*check)(const char *), const char *what, bool want, const char *const *texts)
{
    for (; *texts; texts++)
        if (check(*texts) != want)
            fail_msg("%s(\"%s\") is %s", what, *texts, want ? "false" : "true");
}
#define EXPECT_VALID(check, ...) expect_validity(check, #check, true, (const char *const[]){ __VA_ARGS__, NULL })
#define EXPECT_INVALID(check, ...) expect_validity(check, #check, false, (const char *const[]){ __VA_ARGS__, NULL })

static void test_keys(void **state)
{
    (void)state;
    EXPECT_VALID(label_key_valid, "cmd", "a", "net_load.v2-x", "0123456789abcde" /* 15 */);
    EXPECT_INVALID(label_key_valid, "", "0123456789abcdef" /* 16 */, "Job", "a b", "a=b", "a,b", "a/b", "\xc3\xa9");
}

static void test_values(void **state)
{
    (void)state;
    EXPECT_VALID(label_value_valid, "x", "!#$%&()*+-./:;<>?@[]^_`" /* 23 characters of punctuation */,
                 "{|}~\"'\\Sink/UDP:5556", "ABCDEFGHIJKLMNOPQRSTUVW" /* 23 */);
    EXPECT_INVALID(label_value_valid, "ABCDEFGHIJKLMNOPQRSTUVWX" /* 24 */, "", "a b", "a,b", "a=b", "a\tb", "a\x7f",
                   "\x80");
}

static void test_parse_pair(void **state)
{
    (void)state;
    struct label_pair p;
    assert_true(label_parse_pair("job=a", &p));
    assert_string_equal(p.key, "job");
    assert_string_equal(p.value, "a");
    assert_true(label_parse_pair("netload=sink", &p));
    assert_string_equal(p.value, "sink");
    assert_true(label_parse_pair("0123456789abcde=ABCDEFGHIJKLMNOPQRSTUVW", &p));
    static const char *bad[] = {
        "", "=", "job", "job=", "=a", "job=a=b", "Job=a", "job=a b", "job=a,b", "0123456789abcdef=a",
        "job=ABCDEFGHIJKLMNOPQRSTUVWX", "j b=a", "job==a",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        if (label_parse_pair(bad[i], &p))
            fail_msg("\"%s\" was accepted", bad[i]);
}

/* ---- interning ------------------------------------------------------------------------------------------ */

static void test_same_pairs_same_set_in_any_order(void **state)
{
    (void)state;
    struct label_pair abc[] = { pair("job", "a"), pair("cmd", "profile"), pair("zz", "9") };
    struct label_pair cab[] = { pair("zz", "9"), pair("job", "a"), pair("cmd", "profile") };
    struct label_pair bca[] = { pair("cmd", "profile"), pair("zz", "9"), pair("job", "a") };
    unsigned before = label_sets_used();
    const struct label_set *s1 = label_intern(abc, 3, NULL);
    assert_non_null(s1);
    assert_int_equal(label_sets_used(), before + 1);
    assert_ptr_equal(label_intern(cab, 3, NULL), s1);
    assert_ptr_equal(label_intern(bca, 3, NULL), s1);
    assert_int_equal(label_sets_used(), before + 1);
    assert_true(label_set_interned(s1));
    /* sorted by key inside */
    assert_int_equal(s1->npairs, 3);
    assert_string_equal(s1->pairs[0].key, "cmd");
    assert_string_equal(s1->pairs[1].key, "job");
    assert_string_equal(s1->pairs[2].key, "zz");
    assert_string_equal(text_of(s1), "cmd=profile,job=a,zz=9");

    /* a different value, or a subset, is a different set */
    struct label_pair other[] = { pair("job", "b"), pair("cmd", "profile"), pair("zz", "9") };
    const struct label_set *s2 = label_intern(other, 3, NULL);
    assert_non_null(s2);
    assert_ptr_not_equal(s2, s1);
    const struct label_set *s3 = label_intern(abc, 2, NULL);
    assert_ptr_not_equal(s3, s1);
    assert_string_equal(text_of(s3), "cmd=profile,job=a");
    assert_ptr_equal(label_intern_one("job", "a", NULL), label_intern_one("job", "a", NULL));
    assert_ptr_not_equal(label_intern_one("job", "a", NULL), s3);
}

static void test_refusals_change_nothing(void **state)
{
    (void)state;
    unsigned before = label_sets_used();
    const char *why = NULL;
    struct label_pair five[] = { pair("a", "1"), pair("b", "1"), pair("c", "1"), pair("d", "1"), pair("e", "1") };
    assert_null(label_intern(five, 5, &why));
    assert_string_equal(why, "a label set holds 1 to 4 key=value pairs");
    why = NULL;
    assert_null(label_intern(five, 0, &why));
    assert_string_equal(why, "a label set holds 1 to 4 key=value pairs");
    struct label_pair badkey[] = { pair("ok", "1"), pair("Bad", "1") };
    assert_null(label_intern(badkey, 2, &why));
    assert_string_equal(why, "a key is 1 to 15 characters of a-z 0-9 _ . -");
    struct label_pair badvalue[] = { pair("ok", "with space") };
    assert_null(label_intern(badvalue, 1, &why));
    assert_string_equal(why, "a value is 1 to 23 printable characters other than space, ',' and '='");
    struct label_pair empty[] = { pair("ok", "") };
    assert_null(label_intern(empty, 1, &why));
    struct label_pair twice[] = { pair("job", "a"), pair("x", "1"), pair("job", "b") };
    assert_null(label_intern(twice, 3, &why));
    assert_string_equal(why, "a key appears twice in one label set");
    /* strings that fill their arrays without a NUL */
    struct label_pair unterminated;
    memset(&unterminated, 'a', sizeof unterminated);
    assert_null(label_intern(&unterminated, 1, &why));
    assert_string_equal(why, "a key is 1 to 15 characters of a-z 0-9 _ . -");
    memset(unterminated.value, 'a', sizeof unterminated.value);
    strcpy(unterminated.key, "k");
    assert_null(label_intern(&unterminated, 1, &why));
    assert_null(label_intern_one("0123456789abcdefg", "a", &why));
    assert_null(label_intern_one("k", "ABCDEFGHIJKLMNOPQRSTUVWXYZ", &why));
    assert_int_equal(label_sets_used(), before);
}

/* ---- formatting and lookup ------------------------------------------------------------------------------ */

static void test_format(void **state)
{
    (void)state;
    assert_string_equal(text_of(NULL), "(none)");
    struct label_pair two[] = { pair("netload", "sink"), pair("job", "a") };
    const struct label_set *set = label_intern(two, 2, NULL);
    assert_string_equal(text_of(set), "job=a,netload=sink");
    /* cut short: NUL-terminated inside cap, and the whole length returned */
    char small[8];
    memset(small, 'x', sizeof small);
    assert_int_equal(label_set_format(set, small, sizeof small), strlen("job=a,netload=sink"));
    assert_string_equal(small, "job=a,n");
    assert_int_equal(label_set_format(NULL, small, 3), 6);
    assert_string_equal(small, "(n");
    assert_int_equal(label_set_format(set, NULL, 0), strlen("job=a,netload=sink"));
    /* the longest set fits LABEL_SET_TEXT_MAX exactly */
    struct label_pair longest[] = {
        pair("aaaaaaaaaaaaaaa", "AAAAAAAAAAAAAAAAAAAAAAA"), pair("bbbbbbbbbbbbbbb", "BBBBBBBBBBBBBBBBBBBBBBB"),
        pair("ccccccccccccccc", "CCCCCCCCCCCCCCCCCCCCCCC"), pair("ddddddddddddddd", "DDDDDDDDDDDDDDDDDDDDDDD"),
    };
    const struct label_set *big = label_intern(longest, 4, NULL);
    assert_non_null(big);
    char buf[LABEL_SET_TEXT_MAX];
    assert_int_equal(label_set_format(big, buf, sizeof buf), LABEL_SET_TEXT_MAX - 1);
    assert_int_equal(strlen(buf), LABEL_SET_TEXT_MAX - 1);
}

static void test_has(void **state)
{
    (void)state;
    struct label_pair two[] = { pair("netload", "sink"), pair("job", "a") };
    const struct label_set *set = label_intern(two, 2, NULL);
    assert_true(label_set_has(set, "job", "a"));
    assert_true(label_set_has(set, "netload", "sink"));
    assert_false(label_set_has(set, "job", "b"));
    assert_false(label_set_has(set, "job", "aa"));
    assert_false(label_set_has(set, "jo", "a"));
    assert_false(label_set_has(set, "cmd", "a"));
    assert_false(label_set_has(NULL, "job", "a"));
}

static void test_task_pointer(void **state)
{
    (void)state;
    struct task t;
    memset(&t, 0, sizeof t);
    assert_null(task_labels(&t));
    const struct label_set *a = label_intern_one("job", "a", NULL), *b = label_intern_one("job", "b", NULL);
    task_set_labels(&t, a);
    assert_ptr_equal(task_labels(&t), a);
    /* replace only if still what the caller set */
    assert_false(task_replace_labels(&t, b, NULL));
    assert_ptr_equal(task_labels(&t), a);
    assert_true(task_replace_labels(&t, a, b));
    assert_ptr_equal(task_labels(&t), b);
    task_set_labels(&t, NULL);
    assert_null(task_labels(&t));
    assert_false(label_set_interned(NULL));
    assert_false(label_set_interned((const struct label_set *)((const char *)a + 1)));
}

/* ---- the command ---------------------------------------------------------------------------------------- */

/* Three live tasks, pids 3, 4 and 9. */
static struct task tasks[3];

bool task_exists(uint32_t pid)
{
    for (unsigned i = 0; i < 3; i++)
        if (tasks[i].pid == pid)
            return true;
    return false;
}

static uint64_t spans[3];

bool task_set_span_by_pid(uint32_t pid, uint64_t span)
{
    for (unsigned i = 0; i < 3; i++) {
        if (tasks[i].pid == pid) {
            spans[i] = span;
            return true;
        }
    }
    return false;
}

bool task_set_labels_by_pid(uint32_t pid, const struct label_set *set)
{
    for (unsigned i = 0; i < 3; i++) {
        if (tasks[i].pid == pid) {
            task_set_labels(&tasks[i], set);
            return true;
        }
    }
    return false;
}

static char output[512];

static int run_line(const char *line)
{
    static const struct shell_origin console = { 0 };
    return shell_line_run(cmd_label, line, output, sizeof output, &console);
}

static int setup_tasks(void **state)
{
    (void)state;
    for (unsigned i = 0; i < 3; i++)
        task_set_labels(&tasks[i], NULL);
    memset(tasks, 0, sizeof tasks);
    memset(spans, 0, sizeof spans);
    tasks[0].pid = 3;
    tasks[1].pid = 4;
    tasks[2].pid = 9;
    return 0;
}

static void test_label_command(void **state)
{
    (void)state;
    assert_int_equal(run_line("label 4 job=a"), 0);
    assert_string_equal(output, "pid 4 labels job=a\n");
    assert_ptr_equal(task_labels(&tasks[1]), label_intern_one("job", "a", NULL));
    assert_int_equal(run_line("label 9 zz=1 job=b cmd=x"), 0);
    assert_string_equal(output, "pid 9 labels cmd=x,job=b,zz=1\n");
    assert_string_equal(text_of(task_labels(&tasks[2])), "cmd=x,job=b,zz=1");
    assert_null(task_labels(&tasks[0]));
    assert_int_equal(run_line("label 0x4 -"), 0);
    assert_string_equal(output, "pid 4 labels (none)\n");
    assert_null(task_labels(&tasks[1]));
}

static void test_label_bad_forms(void **state)
{
    (void)state;
    static const char *bad[] = {
        "label 4", "label 4 span=x", "label 4 span=1 span=2", "label 4 span=-1", "label 4 span=",
        "label 4 a=1 b=1 c=1 d=1 e=1 span=3", "label 4 span=18446744073709551616", "label x job=a", "label -1 job=a", "label 4294967296 job=a", "label 4 job",
        "label 4 job=", "label 4 =a", "label 4 Job=a", "label 4 - job=a", "label 4 job=a -", "label 4 - -",
        "label 4 job=a job=b", "label 4 a=1 b=1 c=1 d=1 e=1", "label 4 job=a,b", "label 4 job=a=b",
        "label 4 k=ABCDEFGHIJKLMNOPQRSTUVWX", "label 4x job=a",
    };
    unsigned before = label_sets_used();
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        assert_int_equal(run_line(bad[i]), 1);
        if (strcmp(output, "usage: label [PID key=value ... [span=N] | PID -]\n") != 0)
            fail_msg("\"%s\" answered \"%s\"", bad[i], output);
    }
    assert_int_equal(label_sets_used(), before);
    for (unsigned i = 0; i < 3; i++)
        assert_null(task_labels(&tasks[i]));
}

/* span=N sets the task's span and interns nothing; with pairs it sets both; `-` clears both. */
static void test_label_span(void **state)
{
    (void)state;
    unsigned before = label_sets_used();
    assert_int_equal(run_line("label 4 span=12345678901234"), 0);
    assert_string_equal(output, "pid 4 span 12345678901234\n");
    assert_int_equal(spans[1], 12345678901234ull);
    assert_null(task_labels(&tasks[1]));
    assert_int_equal(label_sets_used(), before);
    assert_int_equal(run_line("label 4 span=7 job=a"), 0);
    assert_string_equal(output, "pid 4 labels job=a span 7\n");
    assert_int_equal(spans[1], 7);
    assert_string_equal(text_of(task_labels(&tasks[1])), "job=a");
    assert_int_equal(run_line("label 4 job=b"), 0); /* the set alone: the span stays */
    assert_int_equal(spans[1], 7);
    assert_int_equal(run_line("label 4 -"), 0);
    assert_int_equal(spans[1], 0);
    assert_null(task_labels(&tasks[1]));
    assert_int_equal(run_line("label 5 span=1"), 1);
    assert_string_equal(output, "label: no task with pid 5\n");
    /* a set never holds the key span: interning refuses it with its reason */
    const char *why = NULL;
    assert_null(label_intern_one("span", "1", &why));
    assert_string_equal(why, "span is the numeric label: span=N sets a task's span, it is never part of a set");
}

/* `label` alone: the pool's figures. */
static void test_label_alone_shows_the_pool(void **state)
{
    (void)state;
    assert_int_equal(run_line("label"), 0);
    struct label_stats s;
    label_stats(&s);
    char expected[256];
    label_stats_format(&s, expected, sizeof expected);
    strcat(expected, "\n");
    assert_string_equal(output, expected);
    assert_non_null(strstr(output, "label sets: "));
    assert_non_null(strstr(output, " of 255 in use ("));
}

static void test_label_unknown_pid(void **state)
{
    (void)state;
    unsigned before = label_sets_used();
    assert_int_equal(run_line("label 5 job=new-set-for-5"), 1);
    assert_string_equal(output, "label: no task with pid 5\n");
    assert_int_equal(run_line("label 4294967295 -"), 1);
    assert_string_equal(output, "label: no task with pid 4294967295\n");
    assert_int_equal(label_sets_used(), before); /* nothing interned for a pid that is not there */
}

/* ---- the pool filling up ------------------------------------------------------------------------------ */

static void test_table_full(void **state)
{
    (void)state;
    static const struct label_set *sets[LABEL_TABLE_SETS];
    static char expected[LABEL_TABLE_SETS][LABEL_SET_TEXT_MAX];
    unsigned start = label_sets_used();
    assert_true(start + 8 < LABEL_TABLE_SETS); /* room for the sets below, sets[5] among them */
    unsigned made = 0;
    char value[16];
    for (unsigned i = start; i < LABEL_TABLE_SETS; i++, made++) {
        snprintf(value, sizeof value, "v%u", i);
        struct label_pair p[] = { pair("fill", value), pair("n", value + 1) };
        sets[made] = label_intern(p, 2, NULL); /* each held by the test */
        assert_non_null(sets[made]);
        snprintf(expected[made], sizeof expected[made], "fill=v%u,n=%u", i, i);
    }
    assert_int_equal(label_sets_used(), LABEL_TABLE_SETS);

    /* one more: NULL and the reason, and counted */
    struct label_stats s;
    label_stats(&s);
    uint64_t dropped = s.dropped;
    const char *why = NULL;
    struct label_pair more = pair("fill", "one-too-many");
    assert_null(label_intern(&more, 1, &why));
    assert_string_equal(why, "label set table full (255 sets in use or waiting to be freed)");
    assert_int_equal(label_sets_used(), LABEL_TABLE_SETS);
    assert_null(label_intern_one("job", "fresh", NULL));
    label_stats(&s);
    assert_int_equal(s.dropped, dropped + 2);

    /* the command says so in one line, with the count, and the task keeps its set */
    task_set_labels(&tasks[0], sets[0]);
    assert_int_equal(run_line("label 3 job=fresh"), 1);
    char line[160];
    snprintf(line, sizeof line, "label: label set table full (255 sets in use or waiting to be freed); %llu dropped "
             "so far\n", (unsigned long long)dropped + 3);
    assert_string_equal(output, line);
    assert_ptr_equal(task_labels(&tasks[0]), sets[0]);

    /* existing sets are still found (no slot needed), and every one is intact */
    snprintf(line, sizeof line, "label 3 n=%u fill=v%u", start + 5, start + 5);
    assert_int_equal(run_line(line), 0);
    assert_ptr_equal(task_labels(&tasks[0]), sets[5]);
    for (unsigned i = 0; i < made; i++) {
        assert_true(label_set_interned(sets[i]));
        assert_string_equal(text_of(sets[i]), expected[i]);
    }

    /* the last reference to sets[7] goes: its slot is free again, and the refused set fits */
    label_release(sets[7]);
    assert_false(label_set_interned(sets[7]));
    assert_int_equal(label_sets_used(), LABEL_TABLE_SETS - 1);
    assert_int_equal(run_line("label 3 job=fresh"), 0);
    assert_string_equal(output, "pid 3 labels job=fresh\n");
    assert_ptr_equal(task_labels(&tasks[0]), sets[7]); /* the freed slot, reused */

    /* everything given back: the pool is as it was before the test */
    task_set_labels(&tasks[0], NULL);
    for (unsigned i = 0; i < made; i++)
        if (i != 7)
            label_release(sets[i]);
    assert_int_equal(label_sets_used(), start);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_keys),
        cmocka_unit_test(test_values),
        cmocka_unit_test(test_parse_pair),
        cmocka_unit_test(test_same_pairs_same_set_in_any_order),
        cmocka_unit_test(test_refusals_change_nothing),
        cmocka_unit_test(test_format),
        cmocka_unit_test(test_has),
        cmocka_unit_test(test_task_pointer),
        cmocka_unit_test_setup(test_label_command, setup_tasks),
        cmocka_unit_test_setup(test_label_bad_forms, setup_tasks),
        cmocka_unit_test_setup(test_label_unknown_pid, setup_tasks),
        cmocka_unit_test_setup(test_label_span, setup_tasks),
        cmocka_unit_test_setup(test_label_alone_shows_the_pool, setup_tasks),
        cmocka_unit_test_setup(test_table_full, setup_tasks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
