/* tests/harness/test_raw_policy.c — the raw-float drift policy in one place (harness/cli_raw.c):
 * parsing, --raw / --strict-raw, the status each policy gives a raw-only drift, the default a
 * project file sets, and that a quantized divergence or an error is never softened. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "harness/cli.h"

/* cli_raw.c reports a bad --raw value through the CLI's usage printer: counted here instead. */
static int usage_errors;
int cli_usage_error(const char *cmd, const char *fmt, ...)
{
    (void)cmd;
    (void)fmt;
    usage_errors++;
    return CLI_USAGE;
}

static void test_parse_and_names(void **state)
{
    (void)state;
    cli_raw_policy p = CLI_RAW_IGNORE;
    assert_true(cli_raw_policy_parse("fail", &p) && p == CLI_RAW_FAIL);
    assert_true(cli_raw_policy_parse("warn", &p) && p == CLI_RAW_WARN);
    assert_true(cli_raw_policy_parse("ignore", &p) && p == CLI_RAW_IGNORE);
    assert_false(cli_raw_policy_parse("FAIL", &p));
    assert_false(cli_raw_policy_parse("", &p));
    assert_false(cli_raw_policy_parse(NULL, &p));
    assert_int_equal(p, CLI_RAW_IGNORE); /* untouched by a refusal */
    assert_string_equal(cli_raw_policy_name(CLI_RAW_FAIL), "fail");
    assert_string_equal(cli_raw_policy_name(CLI_RAW_WARN), "warn");
    assert_string_equal(cli_raw_policy_name(CLI_RAW_IGNORE), "ignore");
}

static void test_options(void **state)
{
    (void)state;
    cli_raw_policy p = CLI_RAW_WARN;
    assert_int_equal(cli_raw_opt("gate", CLI_OPT_STRICT_RAW, NULL, &p), 0);
    assert_int_equal(p, CLI_RAW_FAIL);
    assert_int_equal(cli_raw_opt("gate", CLI_OPT_RAW, "ignore", &p), 0);
    assert_int_equal(p, CLI_RAW_IGNORE);
    usage_errors = 0;
    assert_int_equal(cli_raw_opt("gate", CLI_OPT_RAW, "amber", &p), CLI_USAGE);
    assert_int_equal(usage_errors, 1);
    assert_int_equal(p, CLI_RAW_IGNORE);
    assert_int_equal(cli_raw_opt("gate", 'q', NULL, &p), -1); /* not a raw option */
}

static void test_status_by_policy(void **state)
{
    (void)state;
    const uint64_t none = DG_REPORT_TICK_NONE;
    /* raw-only drift */
    assert_int_equal(cli_raw_status(CLI_RAW_WARN, none, 5), DG_REPORT_WARN);
    assert_int_equal(cli_raw_status(CLI_RAW_FAIL, none, 5), DG_REPORT_FAIL);
    assert_int_equal(cli_raw_status(CLI_RAW_IGNORE, none, 5), DG_REPORT_PASS);
    /* no drift at all, and a quantized divergence, whatever the policy */
    for (int p = 0; p < 3; p++) {
        assert_int_equal(cli_raw_status((cli_raw_policy)p, none, none), DG_REPORT_PASS);
        assert_int_equal(cli_raw_status((cli_raw_policy)p, 40, 5), DG_REPORT_FAIL);
        assert_int_equal(cli_raw_status((cli_raw_policy)p, 40, none), DG_REPORT_FAIL);
    }
}

static void test_apply_leaves_fail_and_error_alone(void **state)
{
    (void)state;
    dg_report *r = dg_report_new("diff", "t", NULL, NULL);
    assert_non_null(r);
    dg_report_scenario *s = dg_report_add_scenario(r, "s", "hashlog");
    dg_report_check *c = dg_report_add_check(s, "a", DG_REPORT_PASS);
    dg_report_check_set_raw_divergence(c, 3);
    c = dg_report_add_check(s, "b", DG_REPORT_ERROR);
    dg_report_check_set_raw_divergence(c, 3);
    c = dg_report_add_check(s, "c", DG_REPORT_PASS);
    assert_int_equal(dg_report_check_add_divergent(c, 9, 1), DG_OK);
    dg_report_check_set_raw_divergence(c, 3);
    dg_report_add_check(s, "d", DG_REPORT_PASS);
    cli_raw_apply_report(r, CLI_RAW_FAIL);
    assert_int_equal(s->checks[0]->status, DG_REPORT_FAIL);
    assert_int_equal(s->checks[1]->status, DG_REPORT_ERROR);
    assert_int_equal(s->checks[2]->status, DG_REPORT_FAIL);
    assert_int_equal(s->checks[3]->status, DG_REPORT_PASS);
    s->checks[0]->status = DG_REPORT_PASS;
    cli_raw_apply(s->checks[0], CLI_RAW_WARN);
    assert_int_equal(s->checks[0]->status, DG_REPORT_WARN);
    dg_report_free(r);
}

static void test_default_is_warn_until_set(void **state)
{
    (void)state;
    assert_int_equal(cli_raw_policy_default(), CLI_RAW_WARN);
    cli_raw_policy_set_default(CLI_RAW_FAIL); /* what a project file's raw = fail does */
    assert_int_equal(cli_raw_policy_default(), CLI_RAW_FAIL);
    cli_raw_policy_set_default((cli_raw_policy)7); /* not a policy: ignored */
    assert_int_equal(cli_raw_policy_default(), CLI_RAW_FAIL);
    cli_raw_policy_set_default(CLI_RAW_WARN);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse_and_names),
        cmocka_unit_test(test_options),
        cmocka_unit_test(test_status_by_policy),
        cmocka_unit_test(test_apply_leaves_fail_and_error_alone),
        cmocka_unit_test(test_default_is_warn_until_set),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
