/* tests/reports/test_report_warn.c — the third result, WARN (quantized state equal, raw floats
 * drifted): its rank in every worst-of, its counts, and how each of the five formats shows it with
 * the first drifting tick (JSON against docs/report-schema.json, JUnit parsed as XML). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>
#include <libxml/parser.h>
#include <libxml/xpath.h>

#include "detgate/report.h"
#include "schema_check.h"

#define RAW_TICK 17u

/* A report of two scenarios: "drift" (one golden check that warned at RAW_TICK) and "clean". */
static dg_report *warn_report(void)
{
    dg_report *r = dg_report_new("gate", "0.1.0", NULL, NULL);
    assert_non_null(r);
    r->started_unix = 1700000000;
    dg_report_scenario *s = dg_report_add_scenario(r, "drift", "flrep");
    assert_non_null(s);
    dg_report_check *c = dg_report_add_check(s, "record-vs-replay", DG_REPORT_PASS);
    assert_non_null(c);
    c = dg_report_add_check(s, "golden", DG_REPORT_PASS);
    assert_non_null(c);
    dg_report_check_set_raw_divergence(c, RAW_TICK);
    c->status = DG_REPORT_WARN;
    dg_report_check_set_message(c, "quantized state identical to the golden; raw floats differ from tick %u", RAW_TICK);
    s = dg_report_add_scenario(r, "clean", "flrep");
    assert_non_null(dg_report_add_check(s, "golden", DG_REPORT_PASS));
    return r;
}

__attribute__((noinline)) static char *render(const dg_report *r, dg_report_kind kind)
{
    char *out = NULL;
    size_t n = 0;
    dg_error err;
    dg_error_clear(&err);
    assert_int_equal(dg_report_render(r, kind, NULL, &out, &n, &err), DG_OK);
    assert_non_null(out);
    return out;
}

static void assert_contains(const char *hay, const char *needle)
{
    if (!strstr(hay, needle))
        fail_msg("expected \"%s\" in:\n%s", needle, hay);
}

/* ---- the model ------------------------------------------------------------------------------------ */

static void test_warn_ranks_between_pass_and_fail(void **state)
{
    (void)state;
    assert_int_equal(dg_report_status_worse(DG_REPORT_PASS, DG_REPORT_WARN), DG_REPORT_WARN);
    assert_int_equal(dg_report_status_worse(DG_REPORT_WARN, DG_REPORT_PASS), DG_REPORT_WARN);
    assert_int_equal(dg_report_status_worse(DG_REPORT_WARN, DG_REPORT_FAIL), DG_REPORT_FAIL);
    assert_int_equal(dg_report_status_worse(DG_REPORT_FAIL, DG_REPORT_WARN), DG_REPORT_FAIL);
    assert_int_equal(dg_report_status_worse(DG_REPORT_WARN, DG_REPORT_ERROR), DG_REPORT_ERROR);
    assert_int_equal(dg_report_status_worse(DG_REPORT_WARN, (dg_report_status)9), DG_REPORT_ERROR);
    assert_string_equal(dg_report_status_name(DG_REPORT_WARN), "warn");

    dg_report *r = warn_report();
    assert_int_equal(dg_report_scenario_status(r->scenarios[0]), DG_REPORT_WARN);
    assert_int_equal(dg_report_scenario_status(r->scenarios[1]), DG_REPORT_PASS);
    assert_int_equal(dg_report_overall_status(r), DG_REPORT_WARN);
    /* a failing check elsewhere outranks the warning */
    dg_report_check *f = dg_report_add_check(r->scenarios[1], "seek", DG_REPORT_FAIL);
    assert_non_null(f);
    assert_int_equal(dg_report_overall_status(r), DG_REPORT_FAIL);
    dg_report_free(r);
}

static void test_a_divergent_tick_turns_warn_into_fail(void **state)
{
    (void)state;
    dg_report *r = warn_report();
    dg_report_check *c = r->scenarios[0]->checks[1];
    assert_int_equal(dg_report_check_add_divergent(c, RAW_TICK + 5, 1), DG_OK);
    assert_int_equal(c->status, DG_REPORT_FAIL);
    assert_false(c->sub_quantum);
    dg_report_free(r);
    r = warn_report();
    c = r->scenarios[0]->checks[1];
    assert_int_equal(dg_report_check_add_value(c, "keyframe interval", "120", "60"), DG_OK);
    assert_int_equal(c->status, DG_REPORT_FAIL);
    dg_report_free(r);
}

/* ---- the five formats --------------------------------------------------------------------------- */

static void test_text_shows_warn_and_the_tick(void **state)
{
    (void)state;
    dg_report *r = warn_report();
    char *t = render(r, DG_REPORT_TEXT);
    assert_contains(t, "detgate gate 0.1.0: WARN — 2 scenarios (1 passed, 1 warned, 0 failed, 0 could not be tested)");
    assert_contains(t, "WARN drift (flrep");
    assert_contains(t, "raw float hashes differed from tick 17");
    free(t);
    dg_report_free(r);
}

static void test_text_tally_without_warn_reads_as_before(void **state)
{
    (void)state;
    dg_report *r = warn_report();
    r->scenarios[0]->checks[1]->status = DG_REPORT_PASS;
    char *t = render(r, DG_REPORT_TEXT);
    assert_contains(t, "PASS — 2 scenarios (2 passed, 0 failed, 0 could not be tested)");
    assert_null(strstr(t, "warned"));
    free(t);
    dg_report_free(r);
}

static json_t *load_schema(void)
{
    const char *root = getenv("DETGATE_SOURCE_DIR");
    assert_non_null(root);
    char path[4096];
    snprintf(path, sizeof path, "%s/docs/report-schema.json", root);
    json_error_t je;
    json_t *schema = json_load_file(path, 0, &je);
    if (!schema)
        fail_msg("cannot load %s: line %d: %s", path, je.line, je.text);
    return schema;
}

static void test_json_carries_warn_and_validates(void **state)
{
    (void)state;
    dg_report *r = warn_report();
    char *text = render(r, DG_REPORT_JSON);
    json_error_t je;
    json_t *doc = json_loads(text, 0, &je), *schema = load_schema();
    assert_non_null(doc);
    char msg[512];
    if (!sc_validate(schema, doc, msg, sizeof msg))
        fail_msg("a WARN report violates docs/report-schema.json: %s", msg);
    assert_string_equal(json_string_value(json_object_get(doc, "status")), "warn");
    json_t *sum = json_object_get(doc, "summary");
    assert_int_equal(json_integer_value(json_object_get(sum, "scenariosWarned")), 1);
    assert_int_equal(json_integer_value(json_object_get(sum, "scenariosPassed")), 1);
    assert_int_equal(json_integer_value(json_object_get(sum, "checksWarned")), 1);
    assert_int_equal(json_integer_value(json_object_get(sum, "checksPassed")), 2);
    json_t *sc = json_array_get(json_object_get(doc, "scenarios"), 0);
    assert_string_equal(json_string_value(json_object_get(sc, "status")), "warn");
    json_t *ck = json_array_get(json_object_get(sc, "checks"), 1);
    assert_string_equal(json_string_value(json_object_get(ck, "status")), "warn");
    assert_int_equal(json_integer_value(json_object_get(ck, "firstRawDivergentTick")), RAW_TICK);
    assert_true(json_is_true(json_object_get(ck, "subQuantum")));
    assert_true(json_is_null(json_object_get(ck, "firstDivergentTick")));
    /* a status the schema does not know is refused: the enum is really checked */
    json_object_set_new(ck, "status", json_string("amber"));
    assert_false(sc_validate(schema, doc, msg, sizeof msg));
    json_decref(doc);
    json_decref(schema);
    free(text);
    dg_report_free(r);
}

static int xpath_count(xmlDocPtr doc, const char *expr)
{
    xmlXPathContextPtr ctx = xmlXPathNewContext(doc);
    xmlXPathObjectPtr o = xmlXPathEvalExpression((const xmlChar *)expr, ctx);
    assert_non_null(o);
    int n = o->nodesetval ? o->nodesetval->nodeNr : 0;
    xmlXPathFreeObject(o);
    xmlXPathFreeContext(ctx);
    return n;
}

static void test_junit_warn_is_a_passing_testcase_with_a_property(void **state)
{
    (void)state;
    dg_report *r = warn_report();
    char *x = render(r, DG_REPORT_JUNIT);
    xmlDocPtr doc = xmlReadMemory(x, (int)strlen(x), "warn.xml", "UTF-8", XML_PARSE_NONET);
    if (!doc)
        fail_msg("JUnit is not well-formed XML:\n%s", x);
    assert_int_equal(xpath_count(doc, "//testsuite[@name='drift'][@failures='0'][@errors='0']"), 1);
    assert_int_equal(xpath_count(doc, "//testcase[@name='golden']/failure | //testcase[@name='golden']/error"), 0);
    assert_int_equal(xpath_count(doc, "//testsuite[@name='drift']/testcase[@name='golden']/properties/"
                                      "property[@name='detgate.warn'][@value='raw floats differ from tick 17']"),
                     1);
    assert_int_equal(xpath_count(doc, "//testsuite[@name='drift']/testcase[@name='golden']/system-out["
                                      "starts-with(., 'WARN: sub-quantum drift: quantized state equal, raw floats "
                                      "differ from tick 17')]"),
                     1);
    assert_int_equal(xpath_count(doc, "//property[@name='detgate.warn']"), 1); /* only the warned check */
    xmlFreeDoc(doc);
    free(x);
    dg_report_free(r);
}

static void test_markdown_and_html_show_warn(void **state)
{
    (void)state;
    dg_report *r = warn_report();
    char *md = render(r, DG_REPORT_MARKDOWN);
    assert_contains(md, "## detgate gate: ⚠️ warn");
    assert_contains(md, "| drift | golden | ⚠️ warn | — (sub-quantum from 17) |");
    /* the warned row comes before the passing ones */
    assert_true(strstr(md, "| drift | golden |") < strstr(md, "| clean | golden |"));
    char *h = render(r, DG_REPORT_HTML);
    assert_contains(h, "<span class=\"badge warn\">WARN</span>");
    assert_contains(h, ".warn{background:#ffb300");
    assert_contains(h, "raw float hashes differed from tick 17");
    assert_contains(h, " — WARN</title>");
    free(md);
    free(h);
    dg_report_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_warn_ranks_between_pass_and_fail),
        cmocka_unit_test(test_a_divergent_tick_turns_warn_into_fail),
        cmocka_unit_test(test_text_shows_warn_and_the_tick),
        cmocka_unit_test(test_text_tally_without_warn_reads_as_before),
        cmocka_unit_test(test_json_carries_warn_and_validates),
        cmocka_unit_test(test_junit_warn_is_a_passing_testcase_with_a_property),
        cmocka_unit_test(test_markdown_and_html_show_warn),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
