/* tests/reports/test_report_render.c — the report room's renderers under test: the JSON validates
 * against docs/report-schema.json (and the validator can say no), JUnit and HTML parse as XML with
 * libxml2 and say the right things, Markdown keeps its size cap, text keeps control characters
 * out of the terminal, files are replaced atomically. */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>
#include <libxml/parser.h>
#include <libxml/xpath.h>

#include "report_fixture.h"
#include "schema_check.h"

/* ---- helpers ---------------------------------------------------------------------------------- */

/* noinline: gcc -O2's dangling-pointer analysis otherwise mistakes the returned buffer for the
 * address of the local that received it. */
__attribute__((noinline)) static char *render(const dg_report *r, dg_report_kind kind, const dg_report_opts *o,
                                              size_t *len)
{
    char *out = NULL;
    size_t n = 0;
    dg_error err;
    dg_error_clear(&err);
    assert_int_equal(dg_report_render(r, kind, o, &out, &n, &err), DG_OK);
    assert_non_null(out);
    assert_int_equal(strlen(out), n); /* no embedded NUL */
    if (len)
        *len = n;
    return out;
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

static json_t *render_json(const dg_report *r)
{
    size_t n;
    char *text = render(r, DG_REPORT_JSON, NULL, &n);
    json_error_t je;
    json_t *doc = json_loadb(text, n, 0, &je); /* jansson also rejects ill-formed UTF-8 */
    if (!doc)
        fail_msg("report JSON does not parse: line %d col %d: %s", je.line, je.column, je.text);
    free(text);
    return doc;
}

static char xml_errors[2048];

static void xml_collect_error(void *ctx, const char *fmt, ...)
{
    (void)ctx;
    size_t used = strlen(xml_errors);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(xml_errors + used, sizeof xml_errors - used, fmt, ap);
    va_end(ap);
}

/* Strict XML parse: no recovery, no network, no entity expansion from outside. */
static xmlDocPtr parse_xml(const char *text, size_t n, const char *name)
{
    xml_errors[0] = '\0';
    xmlSetGenericErrorFunc(NULL, xml_collect_error);
    xmlDocPtr doc = xmlReadMemory(text, (int)n, name, "UTF-8", XML_PARSE_NONET);
    xmlSetGenericErrorFunc(NULL, NULL);
    if (!doc)
        fail_msg("%s is not well-formed XML: %s", name, xml_errors);
    assert_string_equal(xml_errors, ""); /* not even a warning */
    return doc;
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

/* The string value of the first node matching expr (caller frees with xmlFree), or NULL. */
static xmlChar *xpath_string(xmlDocPtr doc, const char *expr)
{
    xmlXPathContextPtr ctx = xmlXPathNewContext(doc);
    xmlXPathObjectPtr o = xmlXPathEvalExpression((const xmlChar *)expr, ctx);
    xmlChar *s = NULL;
    if (o && o->nodesetval && o->nodesetval->nodeNr > 0)
        s = xmlNodeGetContent(o->nodesetval->nodeTab[0]);
    xmlXPathFreeObject(o);
    xmlXPathFreeContext(ctx);
    return s;
}

/* Every in-page link points at exactly one element with that id (ids gathered once: a query per
 * link is quadratic on a big page). */
static void assert_links_resolve(xmlDocPtr doc)
{
    xmlXPathContextPtr ctx = xmlXPathNewContext(doc);
    xmlXPathObjectPtr ids = xmlXPathEvalExpression((const xmlChar *)"//@id", ctx);
    xmlXPathObjectPtr hrefs = xmlXPathEvalExpression((const xmlChar *)"//a/@href", ctx);
    int n_ids = ids->nodesetval ? ids->nodesetval->nodeNr : 0;
    for (int i = 0; hrefs->nodesetval && i < hrefs->nodesetval->nodeNr; i++) {
        xmlChar *href = xmlNodeGetContent(hrefs->nodesetval->nodeTab[i]);
        assert_int_equal(href[0], '#');
        int found = 0;
        for (int j = 0; j < n_ids; j++) {
            xmlChar *id = xmlNodeGetContent(ids->nodesetval->nodeTab[j]);
            found += strcmp((const char *)id, (const char *)href + 1) == 0;
            xmlFree(id);
        }
        if (found != 1)
            fail_msg("link %s has %d targets", (const char *)href, found);
        xmlFree(href);
    }
    xmlXPathFreeObject(hrefs);
    xmlXPathFreeObject(ids);
    xmlXPathFreeContext(ctx);
}

static double xpath_number(xmlDocPtr doc, const char *expr)
{
    xmlXPathContextPtr ctx = xmlXPathNewContext(doc);
    xmlXPathObjectPtr o = xmlXPathEvalExpression((const xmlChar *)expr, ctx);
    assert_non_null(o);
    assert_int_equal(o->type, XPATH_NUMBER);
    double v = o->floatval;
    xmlXPathFreeObject(o);
    xmlXPathFreeContext(ctx);
    return v;
}

static uint32_t total_checks(const dg_report *r)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < r->n_scenarios; i++)
        n += r->scenarios[i]->n_checks;
    return n;
}

/* ---- JSON ------------------------------------------------------------------------------------- */

static void test_json_validates_against_the_schema(void **state)
{
    (void)state;
    dg_report *r = fx_rich_report(NULL);
    json_t *doc = render_json(r), *schema = load_schema();
    char msg[512];
    if (!sc_validate(schema, doc, msg, sizeof msg))
        fail_msg("report JSON violates docs/report-schema.json: %s", msg);
    json_decref(doc);
    json_decref(schema);
    dg_report_free(r);
}

static void test_json_of_an_empty_report_validates(void **state)
{
    (void)state;
    dg_report *r = dg_report_new(NULL, NULL, NULL, NULL);
    json_t *doc = render_json(r), *schema = load_schema();
    char msg[512];
    if (!sc_validate(schema, doc, msg, sizeof msg))
        fail_msg("empty report JSON violates the schema: %s", msg);
    assert_true(json_is_null(json_object_get(doc, "bisect")));
    json_decref(doc);
    json_decref(schema);
    dg_report_free(r);
}

/* Each mutation breaks one rule of the schema; the validator must notice every one. */
static void test_schema_validator_rejects_broken_documents(void **state)
{
    (void)state;
    dg_report *r = fx_rich_report(NULL);
    json_t *schema = load_schema();
    char msg[512];
    static const char *const mutations[] = {
        "drop schemaVersion", "next schemaVersion", "bad status", "negative tick", "string tick",
        "unknown key", "missing check field", "bad entity kind", "float in integer", "bad verdict",
    };
    for (size_t m = 0; m < sizeof mutations / sizeof mutations[0]; m++) {
        json_t *doc = render_json(r);
        json_t *sc1 = json_array_get(json_object_get(doc, "scenarios"), 1);
        json_t *check = json_array_get(json_object_get(sc1, "checks"), 1);
        json_t *tick0 = json_array_get(json_object_get(check, "ticks"), 0);
        json_t *ent0 = json_array_get(json_object_get(tick0, "entities"), 0);
        assert_non_null(ent0);
        switch (m) {
        case 0: json_object_del(doc, "schemaVersion"); break;
        case 1: json_object_set_new(doc, "schemaVersion", json_integer(DG_REPORT_SCHEMA_VERSION + 1)); break;
        case 2: json_object_set_new(check, "status", json_string("flaky")); break;
        case 3: json_object_set_new(check, "firstDivergentTick", json_integer(-1)); break;
        case 4: json_object_set_new(tick0, "tick", json_string("4312")); break;
        case 5: json_object_set_new(ent0, "colour", json_string("red")); break;
        case 6: json_object_del(check, "ranges"); break;
        case 7: json_object_set_new(ent0, "kind", json_string("moved")); break;
        case 8: json_object_set_new(check, "divergentTicks", json_real(1.5)); break;
        case 9:
            json_object_set_new(json_array_get(json_object_get(json_object_get(doc, "bisect"), "steps"), 0), "verdict",
                                json_string("maybe"));
            break;
        }
        if (sc_validate(schema, doc, msg, sizeof msg))
            fail_msg("validator accepted a document with mutation '%s'", mutations[m]);
        assert_true(msg[0] != '\0');
        json_decref(doc);
    }
    /* and a schema keyword the validator does not implement is refused, not ignored */
    json_t *doc = render_json(r);
    json_object_set_new(schema, "pattern", json_string("x"));
    assert_false(sc_validate(schema, doc, msg, sizeof msg));
    assert_non_null(strstr(msg, "unsupported keyword"));
    json_decref(doc);
    json_decref(schema);
    dg_report_free(r);
}

static void test_json_carries_the_model_exactly(void **state)
{
    (void)state;
    dg_report *r = fx_rich_report(NULL);
    json_t *doc = render_json(r);
    assert_int_equal(json_integer_value(json_object_get(doc, "schemaVersion")), DG_REPORT_SCHEMA_VERSION);
    assert_string_equal(json_string_value(json_object_get(doc, "status")), "error");
    json_t *sc1 = json_array_get(json_object_get(doc, "scenarios"), 1);
    /* the scenario name survives escaping byte for byte (it is valid UTF-8) */
    assert_string_equal(json_string_value(json_object_get(sc1, "name")), FX_EVIL_SCENARIO);
    json_t *check = json_array_get(json_object_get(sc1, "checks"), 1);
    const dg_report_check *c = r->scenarios[1]->checks[1];
    assert_int_equal(json_integer_value(json_object_get(check, "firstDivergentTick")), FX_FIRST_TICK);
    assert_int_equal(json_integer_value(json_object_get(check, "divergentTicks")), FX_DIVERGENT);
    assert_int_equal(json_integer_value(json_object_get(check, "ticksCut")), FX_DIVERGENT - r->limits.ticks_per_check);
    assert_int_equal(json_array_size(json_object_get(check, "ticks")), r->limits.ticks_per_check);
    assert_int_equal(json_array_size(json_object_get(check, "ranges")), r->limits.ranges_per_check);
    assert_true(json_is_true(json_object_get(check, "rangesCoalesced")));
    json_t *range0 = json_array_get(json_object_get(check, "ranges"), 0);
    assert_int_equal(json_integer_value(json_object_get(range0, "first")), FX_FIRST_TICK);
    assert_int_equal(json_integer_value(json_object_get(range0, "count")), FX_RUN1_LEN);
    /* range counts add up to every divergent tick */
    uint64_t sum = 0;
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(check, "ranges"), i, v) sum += (uint64_t)json_integer_value(json_object_get(v, "count"));
    assert_int_equal(sum, FX_DIVERGENT);
    json_t *tick0 = json_array_get(json_object_get(check, "ticks"), 0);
    assert_int_equal(json_integer_value(json_object_get(tick0, "entitiesCut")),
                     FX_ENTITIES_PER_TICK - r->limits.entities_per_tick);
    assert_true(json_is_true(json_object_get(json_object_get(tick0, "events"), "differ")));
    json_t *ent0 = json_array_get(json_object_get(tick0, "entities"), 0);
    assert_string_equal(json_string_value(json_object_get(ent0, "name")), FX_CTRL_NAME); /* \u0001 \u001b back */
    json_t *ent2 = json_array_get(json_object_get(tick0, "entities"), 2);
    assert_string_equal(json_string_value(json_object_get(ent2, "name")), "bad\xEF\xBF\xBD\xEF\xBF\xBDname");
    /* every field value reads back as the same double / integer */
    json_t *f0 = json_array_get(json_object_get(ent0, "fields"), 0);
    const dg_report_field *mf = &c->ticks[0]->entities[0].fields[0];
    assert_string_equal(json_string_value(json_object_get(f0, "field")), mf->name);
    assert_int_equal(json_integer_value(json_object_get(f0, "aQ")), mf->a_q);
    assert_true(json_number_value(json_object_get(f0, "a")) == mf->a);
    assert_true(json_number_value(json_object_get(f0, "delta")) == mf->delta);
    assert_true(json_is_object(json_object_get(check, "trajectory")));
    assert_int_equal(json_array_size(json_object_get(json_object_get(check, "trajectory"), "a")), c->trajectory.n_a);
    /* sub-quantum on the passing golden check of dogfight-40 */
    json_t *golden0 = json_array_get(json_object_get(json_array_get(json_object_get(doc, "scenarios"), 0), "checks"), 2);
    assert_true(json_is_true(json_object_get(golden0, "subQuantum")));
    assert_true(json_is_null(json_object_get(golden0, "firstDivergentTick")));
    assert_int_equal(json_integer_value(json_object_get(golden0, "firstRawDivergentTick")), FX_RAW_TICK);
    json_decref(doc);
    dg_report_free(r);
}

static void test_json_doubles_round_trip_and_nan_is_null(void **state)
{
    (void)state;
    static const double values[] = {0.1, 1.0 / 3.0, 1e-300, -2.5e300, 12.015625, 5e-324, 123456789.125};
    dg_report *r = dg_report_new("diff", "t", NULL, NULL);
    dg_report_check *c = dg_report_add_check(dg_report_add_scenario(r, "s", NULL), "diff", DG_REPORT_FAIL);
    dg_report_check_add_divergent(c, 1, 1);
    dg_report_entity *e = dg_report_tick_add_entity(dg_report_add_tick(c, 1), 1, NULL, DG_REPORT_ENTITY_CHANGED);
    size_t nv = sizeof values / sizeof values[0];
    for (size_t i = 0; i < nv; i++)
        dg_report_entity_add_field(e, "v", "", (int64_t)i, (int64_t)i + 1, values[i], -values[i]);
    dg_report_entity_add_field_real(e, "nan", "", true, NAN, INFINITY, NAN);
    json_t *doc = render_json(r);
    json_t *fields = json_object_get(json_array_get(json_object_get(json_array_get(json_object_get(
        json_array_get(json_object_get(json_array_get(json_object_get(doc, "scenarios"), 0), "checks"), 0), "ticks"), 0),
        "entities"), 0), "fields");
    assert_int_equal(json_array_size(fields), nv + 1);
    for (size_t i = 0; i < nv; i++) {
        json_t *f = json_array_get(fields, i);
        assert_true(json_number_value(json_object_get(f, "a")) == values[i]);
        assert_true(json_number_value(json_object_get(f, "b")) == -values[i]);
    }
    json_t *fnan = json_array_get(fields, nv);
    assert_true(json_is_null(json_object_get(fnan, "a")));
    assert_true(json_is_null(json_object_get(fnan, "b")));
    assert_true(json_is_null(json_object_get(fnan, "delta")));
    assert_true(json_is_null(json_object_get(fnan, "aQ")));
    json_t *schema = load_schema();
    char msg[512];
    if (!sc_validate(schema, doc, msg, sizeof msg))
        fail_msg("schema: %s", msg);
    json_decref(schema);
    json_decref(doc);
    dg_report_free(r);
}

/* ---- JUnit ------------------------------------------------------------------------------------ */

static void test_junit_parses_and_names_the_first_divergent_tick(void **state)
{
    (void)state;
    dg_report *r = fx_rich_report(NULL);
    size_t n;
    char *xml = render(r, DG_REPORT_JUNIT, NULL, &n);
    xmlDocPtr doc = parse_xml(xml, n, "junit.xml");
    assert_int_equal(xpath_count(doc, "/testsuites/testsuite"), (int)r->n_scenarios + 1); /* + bisect */
    assert_int_equal(xpath_count(doc, "//testcase"), (int)total_checks(r) + 1);
    assert_int_equal(xpath_count(doc, "//testcase/failure"), 3); /* golden, diff, bisect */
    assert_int_equal(xpath_count(doc, "//testcase/error"), 1);
    xmlChar *msg = xpath_string(doc, "//testcase[@name='golden']/failure/@message");
    assert_non_null(msg);
    /* the golden check's first detailed tick kept 32 entities: 7 and 101.. listed, rest counted */
    char want[128];
    snprintf(want, sizeof want, "first divergent tick %u: entities %u, 101, 102", FX_FIRST_TICK, FX_TRAJ_ENTITY);
    assert_non_null(strstr((const char *)msg, want));
    assert_non_null(strstr((const char *)msg, "more differ"));
    xmlFree(msg);
    /* the classname carries the scenario name, escaped on the way in and unescaped by the parser */
    xmlChar *cls = xpath_string(doc, "//testcase[@name='golden'][failure]/@classname");
    assert_string_equal((const char *)cls, "detgate." FX_EVIL_SCENARIO);
    xmlFree(cls);
    xmlChar *diffmsg = xpath_string(doc, "//testcase[@name='diff']/failure/@message");
    assert_string_equal((const char *)diffmsg, "first divergent tick 299: state differs");
    xmlFree(diffmsg);
    xmlChar *sys = xpath_string(doc, "//testcase[@classname='detgate.dogfight-40'][@name='golden']/system-out");
    assert_non_null(strstr((const char *)sys, "sub-quantum"));
    xmlFree(sys);
    assert_null(strstr(xml, "\x1b")); /* the control characters in names were dropped */
    xmlFreeDoc(doc);
    free(xml);
    dg_report_free(r);
}

/* ---- HTML ------------------------------------------------------------------------------------- */

static void test_html_is_well_formed_and_self_contained(void **state)
{
    (void)state;
    dg_report *r = fx_rich_report(NULL);
    size_t n;
    char *html = render(r, DG_REPORT_HTML, NULL, &n);
    xmlDocPtr doc = parse_xml(html, n, "report.html");
    /* failing checks with a divergence: golden (timeline, trajectory, separation), diff (timeline) */
    assert_int_equal(xpath_count(doc, "//section[@class='check']"), 3); /* + bisect */
    assert_int_equal(xpath_count(doc, "//svg"), 4);
    assert_int_equal(xpath_count(doc, "//svg[starts-with(@aria-label,'timeline')]"), 2);
    assert_int_equal(xpath_count(doc, "//svg[starts-with(@aria-label,'trajectory')]//polyline"), 2); /* A and B */
    /* the separation curve has one vertex per tick present on both sides */
    xmlChar *pts = xpath_string(doc, "//svg[starts-with(@aria-label,'distance')]/polyline/@points");
    assert_non_null(pts);
    size_t vertices = 1;
    for (const xmlChar *p = pts; *p; p++)
        vertices += *p == ' ';
    assert_int_equal(vertices, r->scenarios[1]->checks[1]->trajectory.n_a);
    xmlFree(pts);
    assert_true(xpath_count(doc, "//svg//rect") >= 2);
    /* the first divergence is marked with its label */
    char want[64];
    snprintf(want, sizeof want, "//svg//text[.='first divergent tick %u']", FX_FIRST_TICK);
    assert_int_equal(xpath_count(doc, want), 1);
    /* the first tick's table: entity cells span exactly the rows of their fields */
    snprintf(want, sizeof want, "//h3[.='Tick %u']/following-sibling::table[1]/tbody/tr", FX_FIRST_TICK);
    int rows = xpath_count(doc, want);
    assert_true(rows > 32); /* 32 kept entities, most with several fields */
    char sum[160];
    snprintf(sum, sizeof sum, "sum(%s/td[1][@rowspan]/@rowspan)", want);
    assert_int_equal((int)xpath_number(doc, sum), rows);
    /* and when the row cap cuts an entity's fields short (entity 102 after 1 of its 2 rows) */
    dg_report_opts six = {.rows_per_check = 6};
    size_t n6;
    char *html6 = render(r, DG_REPORT_HTML, &six, &n6);
    xmlDocPtr doc6 = parse_xml(html6, n6, "report6.html");
    assert_int_equal(xpath_count(doc6, want), 6);
    assert_int_equal((int)xpath_number(doc6, sum), 6);
    xmlFreeDoc(doc6);
    free(html6);
    /* one summary row per check that did not pass, plus one per scenario for its passing checks */
    uint32_t rows_want = 0;
    for (uint32_t i = 0; i < r->n_scenarios; i++) {
        uint32_t n_pass = 0;
        for (uint32_t j = 0; j < r->scenarios[i]->n_checks; j++)
            n_pass += r->scenarios[i]->checks[j]->status == DG_REPORT_PASS;
        rows_want += r->scenarios[i]->n_checks ? r->scenarios[i]->n_checks - n_pass + (n_pass > 0) : 1;
    }
    assert_true(rows_want < total_checks(r)); /* the fixture has a passing scenario with several checks */
    assert_int_equal(xpath_count(doc, "(//table)[1]/tbody/tr"), (int)rows_want);
    assert_links_resolve(doc);
    /* no script, no network: nothing fetched, nothing executed */
    assert_int_equal(xpath_count(doc, "//script"), 0);
    assert_int_equal(xpath_count(doc, "//*[@src]"), 0);
    assert_int_equal(xpath_count(doc, "//link"), 0);
    assert_null(strstr(html, "http:"));
    assert_null(strstr(html, "https:"));
    assert_null(strstr(html, "<script"));
    assert_null(strstr(html, "url("));
    assert_non_null(strstr(html, "&lt;script&gt;"));
    assert_null(strstr(html, "\x1b"));
    xmlFreeDoc(doc);
    free(html);
    dg_report_free(r);
}

static void test_html_and_text_cap_detail_sections_for_huge_results(void **state)
{
    (void)state;
    dg_report *r = fx_many_failures(150);
    size_t n;
    char *html = render(r, DG_REPORT_HTML, NULL, &n);
    xmlDocPtr doc = parse_xml(html, n, "many.html");
    assert_int_equal(xpath_count(doc, "//section[@class='check']"), 100);
    assert_int_equal(xpath_count(doc, "//a[@href]"), 100);
    assert_links_resolve(doc);
    assert_non_null(strstr(html, "50 more failing checks are not drawn"));
    xmlFreeDoc(doc);
    free(html);
    dg_report_opts o = {.max_sections = 3};
    char *txt = render(r, DG_REPORT_TEXT, &o, NULL);
    assert_non_null(strstr(txt, "147 more failing checks not shown in detail"));
    assert_non_null(strstr(txt, "scenario-00002 / golden"));
    assert_null(strstr(txt, "scenario-00003 / golden"));
    assert_non_null(strstr(txt, "FAIL scenario-00149")); /* every summary line is still there */
    free(txt);
    dg_report_free(r);
}

static void test_html_without_divergence_still_parses(void **state)
{
    (void)state;
    dg_report *r = dg_report_new("verify", NULL, NULL, NULL);
    dg_report_scenario *s = dg_report_add_scenario(r, "idle", "flrep");
    dg_report_add_check(s, "record-vs-replay", DG_REPORT_PASS);
    dg_report_add_scenario(r, "no checks", NULL);
    size_t n;
    char *html = render(r, DG_REPORT_HTML, NULL, &n);
    xmlDocPtr doc = parse_xml(html, n, "empty.html");
    assert_int_equal(xpath_count(doc, "//svg"), 0);
    xmlFreeDoc(doc);
    free(html);
    dg_report_free(r);
}

/* ---- Markdown --------------------------------------------------------------------------------- */

static void test_markdown_summary_and_first_tick_table(void **state)
{
    (void)state;
    dg_report *r = fx_rich_report(NULL);
    char *md = render(r, DG_REPORT_MARKDOWN, NULL, NULL);
    assert_non_null(strstr(md, "| Scenario | Check | Result | First divergent tick |"));
    char want[128];
    snprintf(want, sizeof want, "| ❌ fail | %u |", FX_FIRST_TICK);
    assert_non_null(strstr(md, want));
    snprintf(want, sizeof want, "| dogfight-40 | golden | ✅ pass | — (sub-quantum from %u) |", FX_RAW_TICK);
    assert_non_null(strstr(md, want));
    /* rows capped at 20 per check: 32 kept entities produce more rows than that */
    assert_non_null(strstr(md, "more rows"));
    /* the dangerous name is neutralised: no raw tag, no raw pipe breaking the table */
    assert_null(strstr(md, "<script>"));
    assert_non_null(strstr(md, "&lt;script&gt;"));
    assert_null(strstr(md, "\x1b"));
    /* failing rows come before passing ones */
    char *fail_row = strstr(md, "❌ fail"), *pass_row = strstr(md, "✅ pass");
    assert_true(fail_row && pass_row && fail_row < pass_row);
    assert_null(strstr(md, "size cap"));
    free(md);
    dg_report_free(r);
}

static void test_markdown_stays_under_the_cap_for_huge_results(void **state)
{
    (void)state;
    dg_report *r = fx_many_failures(3000);
    size_t n;
    char *md = render(r, DG_REPORT_MARKDOWN, NULL, &n);
    assert_true(n <= 60000);
    assert_true(n > 50000); /* it used the room it had */
    assert_non_null(strstr(md, "more summary rows"));
    assert_non_null(strstr(md, "size cap 60000 bytes"));
    free(md);
    dg_report_opts o = {.markdown_max_bytes = 4000};
    md = render(r, DG_REPORT_MARKDOWN, &o, &n);
    assert_true(n <= 4000);
    assert_non_null(strstr(md, "size cap 4000 bytes"));
    free(md);
    dg_report_free(r);
}

static void test_markdown_cap_holds_against_huge_strings(void **state)
{
    (void)state;
    size_t big = 100000;
    char *huge = malloc(big + 1);
    memset(huge, 'v', big);
    huge[big] = '\0';
    dg_report *r = dg_report_new("gate", huge, NULL, NULL);
    dg_report_scenario *s = dg_report_add_scenario(r, huge, "flrep");
    dg_report_check *c = dg_report_add_check(s, "golden", DG_REPORT_FAIL);
    dg_report_check_add_divergent(c, 7, 1);
    dg_report_scenario *s2 = dg_report_add_scenario(r, "small", "flrep");
    dg_report_add_check(s2, "golden", DG_REPORT_FAIL);
    size_t n;
    char *md = render(r, DG_REPORT_MARKDOWN, NULL, &n);
    assert_true(n <= 60000);
    assert_non_null(strstr(md, "| [small](#-small) | golden |")); /* the row that fits is still there */
    assert_non_null(strstr(md, "1 more summary rows"));
    free(md);
    free(huge);
    dg_report_free(r);
}

/* ---- text ------------------------------------------------------------------------------------- */

static void test_text_summary_lines_and_colour_only_when_asked(void **state)
{
    (void)state;
    dg_report *r = fx_rich_report(NULL);
    char *plain = render(r, DG_REPORT_TEXT, NULL, NULL);
    assert_null(strchr(plain, '\x1b')); /* neither our colour nor the ESC inside a name */
    assert_non_null(strstr(plain, "\nPASS dogfight-40 (flrep, 1500 ticks, 60000 entity-ticks)"));
    char want[160];
    snprintf(want, sizeof want, "golden: first divergent tick %u: 38 entities changed, 1 added, 1 lost, events differ (A 3, B 4)",
             FX_FIRST_TICK);
    assert_non_null(strstr(plain, want));
    snprintf(want, sizeof want, "sub-quantum: raw float hashes differed from tick %u while quantized state equal", FX_RAW_TICK);
    assert_non_null(strstr(plain, want));
    assert_non_null(strstr(plain, "ERROR broken-1"));
    assert_non_null(strstr(plain, "Viper??[31m")); /* \x01 and ESC shown as '?' */
    assert_non_null(strstr(plain, "first bad commit a1b2c3d4e5f6"));
    /* the table header is aligned with its rows: 'field' starts in the same column */
    const char *hdr = strstr(plain, " entity ");
    assert_non_null(hdr);
    const char *hdr_line = hdr;
    while (hdr_line > plain && hdr_line[-1] != '\n')
        hdr_line--;
    const char *row = strchr(hdr, '\n') + 1;
    size_t col_hdr = (size_t)(strstr(hdr_line, "field") - hdr_line);
    assert_non_null(strstr(row, "pos.x"));
    assert_int_equal((size_t)(strstr(row, "pos.x") - row), col_hdr);
    free(plain);

    /* wide characters take two columns: a CJK name must not shift the columns after it */
    dg_report *w = dg_report_new("diff", NULL, NULL, NULL);
    dg_report_check *wc = dg_report_add_check(dg_report_add_scenario(w, "w", "flrep"), "diff", DG_REPORT_FAIL);
    dg_report_check_add_divergent(wc, 1, 2);
    dg_report_tick *wt = dg_report_add_tick(wc, 1);
    dg_report_entity_add_field(dg_report_tick_add_entity(wt, 1, "\xE9\x9B\xB7\xE9\x9C\x86", DG_REPORT_ENTITY_CHANGED),
                               "pos.x", "m", 0, 1, 0, 1);                       /* 2 wide chars: 4 columns */
    dg_report_entity_add_field(dg_report_tick_add_entity(wt, 2, "abcd", DG_REPORT_ENTITY_CHANGED), "pos.y", "m", 0, 1,
                               0, 1);
    char *wtxt = render(w, DG_REPORT_TEXT, NULL, NULL);
    const char *l1 = strstr(wtxt, "1 \xE9\x9B\xB7"), *l2 = strstr(wtxt, "2 abcd");
    assert_non_null(l1);
    assert_non_null(l2);
    /* same column for "changed" on both rows: bytes before it differ by the 2 extra bytes per wide char */
    assert_int_equal((strstr(l1, "changed") - l1) - 2, strstr(l2, "changed") - l2);
    free(wtxt);
    dg_report_free(w);

    dg_report_opts all = {.rows_per_check = UINT32_MAX}; /* "no cap" must not mean a huge allocation */
    char *full = render(r, DG_REPORT_TEXT, &all, NULL);
    assert_null(strstr(full, "more rows"));
    free(full);

    dg_report_opts o = {.colour = true};
    char *col = render(r, DG_REPORT_TEXT, &o, NULL);
    assert_non_null(strstr(col, "\x1b[1;31mFAIL\x1b[0m"));
    assert_non_null(strstr(col, "\x1b[32mPASS\x1b[0m dogfight-40"));
    assert_null(strstr(col, "\x1b[31m\x1b")); /* the name's own escape never got through */
    free(col);
    dg_report_free(r);
}

/* ---- hostile and extreme values ---------------------------------------------------------------- */

/* Values at the edges of every type, missing strings, names made only of control characters, a
 * trajectory with no spread and non-finite points: every kind must still render, and the
 * machine-readable ones must still parse and validate. */
static dg_report *extreme_report(void)
{
    dg_report *r = dg_report_new(NULL, NULL, NULL, NULL);
    assert_non_null(r);
    r->started_unix = INT64_MIN;
    r->duration_s = NAN;
    dg_report_scenario *s = dg_report_add_scenario(r, "\x01\x02\x1b\x7f", NULL);
    s->ticks = 0; /* the divergent tick lies beyond the scenario's tick count */
    dg_report_check *c = dg_report_add_check(s, "", DG_REPORT_FAIL);
    c->duration_s = -INFINITY;
    const uint64_t big = (1ull << 53) + 1; /* not representable as a double: must stay exact */
    assert_int_equal(dg_report_check_add_divergent(c, big, UINT32_MAX), DG_OK);
    dg_report_tick *t = dg_report_add_tick(c, big);
    t->changed = UINT32_MAX;
    dg_report_entity *e = dg_report_tick_add_entity(t, UINT32_MAX, "", DG_REPORT_ENTITY_CHANGED);
    dg_report_entity_add_field(e, "pos.x", "m", INT64_MIN, INT64_MAX, -DBL_MAX, DBL_MAX);
    dg_report_entity_add_field(e, "vel.y", "m/s", 0, 0, -0.0, DBL_MIN);
    dg_report_entity_add_field_real(e, "rot", "deg", false, 0, 0, NAN);
    dg_report_tick_add_entity(t, 1, NULL, DG_REPORT_ENTITY_ADDED); /* no fields */
    dg_report_check_set_trajectory(c, 1, NULL);
    dg_report_check_add_point(c, 'A', big, 5, 5, 5);
    dg_report_check_add_point(c, 'A', big + 1, 5, 5, 5);
    dg_report_check_add_point(c, 'B', big, NAN, INFINITY, 5);
    dg_report_check_add_point(c, 'B', big + 1, 5, 5, 5);
    dg_report_add_scenario(r, "", "");
    dg_report_set_bisect(r, NULL, NULL, NULL, NULL, NULL, DG_REPORT_TICK_NONE);
    return r;
}

static void test_extreme_values_render_and_parse(void **state)
{
    (void)state;
    dg_report *r = extreme_report();
    for (int k = 0; k < 5; k++) {
        size_t n;
        char *out = render(r, (dg_report_kind)k, NULL, &n);
        assert_true(n > 0);
        assert_null(strstr(out, "nan"));
        assert_null(strstr(out, "inf"));
        if (k == DG_REPORT_JUNIT || k == DG_REPORT_HTML)
            xmlFreeDoc(parse_xml(out, n, dg_report_kind_name((dg_report_kind)k)));
        assert_null(strchr(out, '\x1b')); /* no kind lets a name's ESC through */
        free(out);
    }
    json_t *doc = render_json(r), *schema = load_schema();
    char msg[512];
    if (!sc_validate(schema, doc, msg, sizeof msg))
        fail_msg("extreme report JSON violates the schema: %s", msg);
    json_t *check = json_array_get(json_object_get(json_array_get(json_object_get(doc, "scenarios"), 0), "checks"), 0);
    assert_true(json_integer_value(json_object_get(check, "firstDivergentTick")) == (json_int_t)((1ull << 53) + 1));
    json_t *f0 = json_array_get(json_object_get(json_array_get(json_object_get(json_array_get(json_object_get(check, "ticks"), 0),
                                                                               "entities"), 0), "fields"), 0);
    assert_true(json_integer_value(json_object_get(f0, "aQ")) == INT64_MIN);
    assert_true(json_integer_value(json_object_get(f0, "deltaQ")) == INT64_MAX);
    assert_true(json_number_value(json_object_get(f0, "b")) == DBL_MAX);
    assert_true(json_is_null(json_object_get(json_array_get(json_object_get(doc, "scenarios"), 0), "format")));
    assert_true(json_is_null(json_object_get(doc, "durationSeconds")));
    json_decref(schema);
    json_decref(doc);
    dg_report_free(r);
}

/* Random bytes (a fixed xorshift stream, so a failure reproduces) as every kind of name: whatever
 * an engine hands over, JSON stays valid UTF-8, XML stays well-formed, the terminal gets no
 * control character and Markdown no raw tag. */
static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

static uint32_t rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state >> 11);
}

static void random_name(char *buf, size_t cap)
{
    static const char *const nasty[] = {"<", ">", "&", "\"", "'", "\\", "|", "`", "]]>", "-->", "\xED\xA0\x80",
                                        "\xC0\xAF", "\xF4\x90\x80\x80", "\xEF\xBF\xBE", "\xE2\x80\xA8", "\x1b[2J",
                                        "\xC2\x85", "\xF0\x9F\x9A", "&#0;", "\r\n", "@here"};
    size_t n = 0, want = rng() % (cap - 1);
    while (n < want) {
        const char *piece;
        char one[2] = {0, 0};
        if (rng() % 3 == 0) {
            piece = nasty[rng() % (sizeof nasty / sizeof nasty[0])];
        } else {
            one[0] = (char)(1 + rng() % 255); /* any byte but NUL */
            piece = one;
        }
        size_t k = strlen(piece);
        if (n + k >= cap)
            break;
        memcpy(buf + n, piece, k);
        n += k;
    }
    buf[n] = '\0';
}

static void test_random_bytes_in_names_never_break_a_format(void **state)
{
    (void)state;
    for (int round = 0; round < 40; round++) {
        char a[80], b[80], c[80], d[80];
        random_name(a, sizeof a);
        random_name(b, sizeof b);
        random_name(c, sizeof c);
        random_name(d, sizeof d);
        dg_report *r = dg_report_new(a, b, NULL, NULL);
        dg_report_scenario *sc = dg_report_add_scenario(r, c, d);
        dg_report_check *ck = dg_report_add_check(sc, a, DG_REPORT_FAIL);
        dg_report_check_set_message(ck, "%s", b);
        dg_report_check_add_divergent(ck, 5, 1);
        dg_report_entity *e = dg_report_tick_add_entity(dg_report_add_tick(ck, 5), 9, d, DG_REPORT_ENTITY_CHANGED);
        dg_report_entity_add_field(e, c, a, 1, 2, 0.5, 1.0);
        dg_report_check_set_trajectory(ck, 9, c);
        dg_report_check_add_point(ck, 'A', 5, 1, 2, 3);
        dg_report_set_bisect(r, a, b, c, d, a, 5);
        dg_report_bisect_add_step(r, d, DG_REPORT_BAD, 5);
        dg_report_add_check(sc, c, DG_REPORT_ERROR);
        for (int k = 0; k < 5; k++) {
            size_t n;
            char *out = render(r, (dg_report_kind)k, NULL, &n);
            if (k == DG_REPORT_JSON) {
                json_error_t je;
                json_t *doc = json_loadb(out, n, 0, &je);
                if (!doc)
                    fail_msg("round %d: JSON does not parse: %s", round, je.text);
                json_decref(doc);
            } else if (k == DG_REPORT_JUNIT || k == DG_REPORT_HTML) {
                xmlFreeDoc(parse_xml(out, n, dg_report_kind_name((dg_report_kind)k)));
            } else {
                for (size_t i = 0; i < n; i++)
                    if ((unsigned char)out[i] < 0x20 && out[i] != '\n')
                        fail_msg("round %d: %s output has control byte 0x%02x at %zu", round,
                                 dg_report_kind_name((dg_report_kind)k), (unsigned)(unsigned char)out[i], i);
                if (k == DG_REPORT_MARKDOWN)
                    assert_null(strchr(out, '<'));
            }
            free(out);
        }
        dg_report_free(r);
    }
}

/* ---- files ------------------------------------------------------------------------------------ */

static int count_entries(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
            n++;
    closedir(d);
    return n;
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *p = malloc((size_t)n + 1);
    assert_int_equal(fread(p, 1, (size_t)n, f), (size_t)n);
    p[n] = '\0';
    fclose(f);
    *len = (size_t)n;
    return p;
}

static void test_write_file_replaces_atomically_and_cleans_up(void **state)
{
    (void)state;
    dg_report *r = fx_rich_report(NULL);
    char dir[] = "/tmp/dg_report_test_XXXXXX";
    assert_non_null(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof path, "%s/report.json", dir);
    FILE *old = fopen(path, "w");
    fputs("old content", old);
    fclose(old);
    dg_error err;
    dg_error_clear(&err);
    for (int k = 0; k < 5; k++) {
        assert_int_equal(dg_report_write_file(r, (dg_report_kind)k, path, NULL, &err), DG_OK);
        size_t n, m;
        char *disk = slurp(path, &n);
        char *mem = render(r, (dg_report_kind)k, NULL, &m);
        assert_int_equal(n, m);
        assert_memory_equal(disk, mem, n);
        free(disk);
        free(mem);
        assert_int_equal(count_entries(dir), 1); /* no temporary left behind */
    }
    /* a folder that does not exist: an I/O error naming the path, nothing created */
    char bad[300];
    snprintf(bad, sizeof bad, "%s/missing/report.html", dir);
    assert_int_equal(dg_report_write_file(r, DG_REPORT_HTML, bad, NULL, &err), DG_E_IO);
    assert_non_null(strstr(err.where, "missing/report.html"));
    assert_int_equal(count_entries(dir), 1);
    unlink(path);
    rmdir(dir);
    dg_report_free(r);
}

static void test_write_to_stream_reports_io_errors(void **state)
{
    (void)state;
    dg_report *r = fx_rich_report(NULL);
    FILE *f = fopen("/dev/full", "w");
    if (!f)
        fail_msg("/dev/full is needed to provoke a write error");
    dg_error err;
    dg_error_clear(&err);
    assert_int_equal(dg_report_write_html(r, f, NULL, &err), DG_E_IO);
    assert_int_equal(err.code, DG_E_IO);
    fclose(f);
    dg_error_clear(&err);
    assert_int_equal(dg_report_write(r, (dg_report_kind)99, stdout, NULL, &err), DG_E_USAGE);
    dg_report_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_validates_against_the_schema),
        cmocka_unit_test(test_json_of_an_empty_report_validates),
        cmocka_unit_test(test_schema_validator_rejects_broken_documents),
        cmocka_unit_test(test_json_carries_the_model_exactly),
        cmocka_unit_test(test_json_doubles_round_trip_and_nan_is_null),
        cmocka_unit_test(test_junit_parses_and_names_the_first_divergent_tick),
        cmocka_unit_test(test_html_is_well_formed_and_self_contained),
        cmocka_unit_test(test_html_and_text_cap_detail_sections_for_huge_results),
        cmocka_unit_test(test_html_without_divergence_still_parses),
        cmocka_unit_test(test_markdown_summary_and_first_tick_table),
        cmocka_unit_test(test_markdown_stays_under_the_cap_for_huge_results),
        cmocka_unit_test(test_markdown_cap_holds_against_huge_strings),
        cmocka_unit_test(test_text_summary_lines_and_colour_only_when_asked),
        cmocka_unit_test(test_extreme_values_render_and_parse),
        cmocka_unit_test(test_random_bytes_in_names_never_break_a_format),
        cmocka_unit_test(test_write_file_replaces_atomically_and_cleans_up),
        cmocka_unit_test(test_write_to_stream_reports_io_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
