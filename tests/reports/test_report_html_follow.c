/* tests/reports/test_report_html_follow.c — the HTML report follows the entity the harness picked
 * and says why, lets the reader switch to the other divergent entities (a <select> over pictures
 * already in the page), draws the spread of the divergence, keeps metres equal on both axes with
 * the plot box sized from the data, shows both orientations on rotation rows and which bits
 * changed on flag rows, and puts failing scenarios first in the summary. The builder side: the
 * trajectory cap, the spread series' order and cap, and the JSON against its schema. */
#include <math.h>
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

/* ---- helpers ---------------------------------------------------------------------------------- */

__attribute__((noinline)) static char *render(const dg_report *r, dg_report_kind kind, size_t *len)
{
    char *out = NULL;
    size_t n = 0;
    dg_error err;
    dg_error_clear(&err);
    assert_int_equal(dg_report_render(r, kind, NULL, &out, &n, &err), DG_OK);
    assert_non_null(out);
    if (len)
        *len = n;
    return out;
}

static xmlDocPtr parse_html(const char *text, size_t n)
{
    xmlDocPtr doc = xmlReadMemory(text, (int)n, "follow.html", "UTF-8", XML_PARSE_NONET);
    if (!doc)
        fail_msg("the HTML report is not well-formed XML");
    return doc;
}

static xmlXPathObjectPtr xp(xmlDocPtr doc, const char *expr)
{
    xmlXPathContextPtr ctx = xmlXPathNewContext(doc);
    xmlXPathObjectPtr o = xmlXPathEvalExpression((const xmlChar *)expr, ctx);
    xmlXPathFreeContext(ctx);
    if (!o)
        fail_msg("bad xpath %s", expr);
    return o;
}

static int xp_count(xmlDocPtr doc, const char *expr)
{
    xmlXPathObjectPtr o = xp(doc, expr);
    int n = o->nodesetval ? o->nodesetval->nodeNr : 0;
    xmlXPathFreeObject(o);
    return n;
}

/* The text of the first node matching expr, copied into buf ("" when none). */
static const char *xp_text(xmlDocPtr doc, const char *expr, char *buf, size_t cap)
{
    xmlXPathObjectPtr o = xp(doc, expr);
    buf[0] = '\0';
    if (o->nodesetval && o->nodesetval->nodeNr > 0) {
        xmlChar *s = xmlNodeGetContent(o->nodesetval->nodeTab[0]);
        snprintf(buf, cap, "%s", (const char *)s);
        xmlFree(s);
    }
    xmlXPathFreeObject(o);
    return buf;
}

static double xp_num(xmlDocPtr doc, const char *expr)
{
    char b[64];
    xp_text(doc, expr, b, sizeof b);
    if (!b[0])
        fail_msg("nothing at %s", expr);
    return strtod(b, NULL);
}

static dg_report *new_report(const dg_report_limits *l)
{
    dg_error err;
    dg_error_clear(&err);
    dg_report *r = dg_report_new("gate", "test", l, &err);
    assert_non_null(r);
    return r;
}

static dg_qentity qent(uint32_t id, double x, double rot_x, uint16_t flags)
{
    double n = sqrt(1 + rot_x * rot_x);
    dg_entity_in in = {.id = id, .pos = {x, 0, 6.4e6}, .vel = {10, 0, 0}, .rot = {1 / n, rot_x / n, 0, 0},
                       .health = 1, .flags = flags};
    dg_qentity q;
    dg_error err;
    dg_error_clear(&err);
    assert_int_equal(dg_quant_entity(&in, &q, &err), DG_OK);
    return q;
}

/* A path of n points from (x0, y0) to (x1, y1) at z = 5 on one side. */
static void line(dg_report_check *c, char side, double x0, double y0, double x1, double y1, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        double f = n > 1 ? (double)i / (n - 1) : 0;
        assert_int_equal(dg_report_check_add_point(c, side, 290 + i, x0 + (x1 - x0) * f, y0 + (y1 - y0) * f, 5),
                         DG_OK);
    }
}

/* A passing scenario, then a failing one with three followed entities, then one that errored. */
static dg_report *follow_report(void)
{
    dg_report *r = new_report(NULL);
    dg_report_scenario *pass = dg_report_add_scenario(r, "alpha", "flrep");
    dg_report_add_check(pass, "record-vs-replay", DG_REPORT_PASS);
    dg_report_add_check(pass, "seek", DG_REPORT_PASS);
    dg_report_scenario *sc = dg_report_add_scenario(r, "bravo", "flrep");
    sc->ticks = 1000;
    sc->entity_ticks = 40000;
    dg_report_add_check(sc, "seek", DG_REPORT_PASS);
    dg_report_check *c = dg_report_add_check(sc, "golden", DG_REPORT_PASS);
    assert_int_equal(dg_report_check_add_divergent(c, 300, 2), DG_OK);
    assert_int_equal(dg_report_check_add_divergent(c, 420, 5), DG_OK);
    assert_int_equal(dg_report_check_add_spread(c, 300, 2), DG_OK);
    assert_int_equal(dg_report_check_add_spread(c, 420, 5), DG_OK);
    dg_report_tick *t = dg_report_add_tick(c, 300);
    assert_non_null(t);
    t->changed = 2;
    dg_qentity a3 = qent(3, 100, 0, 0x0012), b3 = qent(3, 100, 0.01, 0x0016);
    dg_report_entity_diff_qentity(dg_report_tick_add_entity(t, 3, NULL, DG_REPORT_ENTITY_CHANGED), &a3, &b3);
    dg_qentity a7 = qent(7, 100, 0, 0), b7 = qent(7, 100.53125, 0, 0);
    dg_report_entity_diff_qentity(dg_report_tick_add_entity(t, 7, "Viper 7", DG_REPORT_ENTITY_CHANGED), &a7, &b7);
    assert_int_equal(dg_report_check_set_trajectory(c, 7, "Viper 7"), DG_OK);
    assert_int_equal(dg_report_check_set_trajectory_reason(c, 300, "pos", "m", 0.53125), DG_OK);
    line(c, 'A', 0, 0, 100, 50, 21); /* 100 m across, 50 m up: a 2:1 box */
    line(c, 'B', 0, 0, 100, 48, 21);
    assert_int_equal(dg_report_check_add_trajectory(c, 3, NULL), DG_OK);
    assert_int_equal(dg_report_check_set_trajectory_reason(c, 300, "rot", "deg", 1.14), DG_OK);
    line(c, 'A', 0, 0, 30, 20, 5);
    line(c, 'B', 0, 0, 30, 20, 5);
    assert_int_equal(dg_report_check_add_trajectory(c, 12, "Viper 12"), DG_OK);
    assert_int_equal(dg_report_check_set_trajectory_reason(c, 420, "vel", "m/s", 1.5), DG_OK);
    line(c, 'A', 0, 0, 1000, 1, 11); /* a straight run: the flat side is clamped */
    line(c, 'B', 0, 0, 1000, 2, 11);
    dg_report_scenario *err = dg_report_add_scenario(r, "charlie", "flrep");
    dg_report_check *e = dg_report_add_check(err, "golden", DG_REPORT_ERROR);
    dg_report_check_set_message(e, "no golden");
    return r;
}

/* ---- HTML ------------------------------------------------------------------------------------- */

static void test_html_says_why_and_offers_every_followed_entity(void **state)
{
    (void)state;
    dg_report *r = follow_report();
    size_t n;
    char *html = render(r, DG_REPORT_HTML, &n);
    xmlDocPtr doc = parse_html(html, n);
    char b[512];
    assert_string_equal(xp_text(doc, "(//p[@class='why'])[1]", b, sizeof b),
                        "entity 7 (Viper 7): first to diverge, at tick 300 (with 1 other; it differs most), largest "
                        "Δ pos 0.53125 m");
    assert_string_equal(xp_text(doc, "(//p[@class='why'])[3]", b, sizeof b),
                        "entity 12 (Viper 12): diverged, at tick 420, Δ vel 1.5 m/s");
    /* a plain <select>, one option per entity, the pictures already in the page, two hidden */
    assert_int_equal(xp_count(doc, "//select[@class='traj-pick']/option"), 3);
    assert_string_equal(xp_text(doc, "//select[@class='traj-pick']/option[@selected]", b, sizeof b),
                        "entity 7 (Viper 7) — tick 300, Δ pos 0.53125 m");
    assert_int_equal(xp_count(doc, "//div[@class='traj']"), 3);
    assert_int_equal(xp_count(doc, "//div[@class='traj'][@hidden]"), 2);
    assert_int_equal(xp_count(doc, "//div[@class='traj'][1][@data-entity='7'][not(@hidden)]"), 1);
    assert_int_equal(xp_count(doc, "//div[@class='traj']//svg[starts-with(@aria-label,'trajectory')]"), 3);
    /* the switch: one small inline script, nothing fetched */
    assert_int_equal(xp_count(doc, "//script"), 1);
    assert_int_equal(xp_count(doc, "//script[@src]"), 0);
    assert_non_null(strstr(xp_text(doc, "//script", b, sizeof b), "function dgPick("));
    assert_string_equal(xp_text(doc, "//select/@onchange", b, sizeof b), "dgPick(this)");
    assert_null(strstr(html, "http"));
    assert_int_equal(xp_count(doc, "//link"), 0);
    /* the first divergence marker, once */
    assert_int_equal(xp_count(doc, "//*[@id='first-divergence']"), 1);
    assert_int_equal(xp_count(doc, "//*[@id='first-divergence'][@data-tick='300']"), 1);
    xmlFreeDoc(doc);
    free(html);
    dg_report_free(r);
}

static void test_html_trajectory_box_has_the_data_aspect_and_one_scale(void **state)
{
    (void)state;
    dg_report *r = follow_report();
    size_t n;
    char *html = render(r, DG_REPORT_HTML, &n);
    xmlDocPtr doc = parse_html(html, n);
    /* entity 7: 100 m across, 50 m up → the box is twice as wide as high, and it shows exactly the data */
    double w = xp_num(doc, "//div[@data-entity='7']//rect[@class='plot']/@width");
    double h = xp_num(doc, "//div[@data-entity='7']//rect[@class='plot']/@height");
    double mpp = xp_num(doc, "//div[@data-entity='7']//rect[@class='plot']/@data-m-per-px");
    assert_true(fabs(w / h - 2.0) < 0.01);
    assert_true(fabs(w * mpp - 100.0) < 0.05);
    assert_true(fabs(h * mpp - 50.0) < 0.05);
    /* the grid: the same number of pixels between lines across and up */
    double x1 = xp_num(doc, "(//div[@data-entity='7']//line[@class='grid'][@y1=@y2 or @x1=@x2][@x1=@x2])[1]/@x1");
    double x2 = xp_num(doc, "(//div[@data-entity='7']//line[@class='grid'][@x1=@x2])[2]/@x1");
    double y1 = xp_num(doc, "(//div[@data-entity='7']//line[@class='grid'][@y1=@y2])[1]/@y1");
    double y2 = xp_num(doc, "(//div[@data-entity='7']//line[@class='grid'][@y1=@y2])[2]/@y1");
    assert_true(fabs(fabs(x2 - x1) - fabs(y2 - y1)) < 0.02);
    /* entity 12: 1000 m by 2 m → the box keeps one scale and is clamped to its minimum height */
    double w12 = xp_num(doc, "//div[@data-entity='12']//rect[@class='plot']/@width");
    double h12 = xp_num(doc, "//div[@data-entity='12']//rect[@class='plot']/@height");
    double mpp12 = xp_num(doc, "//div[@data-entity='12']//rect[@class='plot']/@data-m-per-px");
    assert_true(fabs(w12 * mpp12 - 1000.0) < 0.5);
    assert_true(fabs(h12 - 120.0) < 0.01);
    xmlFreeDoc(doc);
    free(html);
    dg_report_free(r);
}

static void test_html_rotation_shows_both_sides_and_flags_their_bits(void **state)
{
    (void)state;
    dg_report *r = follow_report();
    size_t n;
    char *html = render(r, DG_REPORT_HTML, &n);
    xmlDocPtr doc = parse_html(html, n);
    char b[256];
    /* entity 3's rows: rot with both quaternions, flags 0x0012 → 0x0016 (+bit 2) */
    const char *rot = "//tr[td/code='rot']";
    assert_int_equal(xp_count(doc, rot), 1);
    assert_string_equal(xp_text(doc, "//tr[td/code='rot']/td[@class='q'][1]", b, sizeof b),
                        "1.000000 0.000000 0.000000 0.000000");
    xp_text(doc, "//tr[td/code='rot']/td[@class='q'][2]", b, sizeof b);
    assert_true(strncmp(b, "0.99995", 7) == 0); /* turned 1.15 deg about x */
    assert_non_null(strstr(b, " 0.0099"));
    assert_string_equal(xp_text(doc, "//tr[td/code='flags']/td[@class='num'][1]", b, sizeof b), "0x0012");
    assert_string_equal(xp_text(doc, "//tr[td/code='flags']/td[@class='num'][2]", b, sizeof b), "0x0016");
    assert_string_equal(xp_text(doc, "//tr[td/code='flags']/td[@class='num'][3]", b, sizeof b), "+bit 2");
    xmlFreeDoc(doc);
    free(html);
    dg_report_free(r);
}

static void test_html_spread_and_failures_first_summary(void **state)
{
    (void)state;
    dg_report *r = follow_report();
    size_t n;
    char *html = render(r, DG_REPORT_HTML, &n);
    xmlDocPtr doc = parse_html(html, n);
    char b[256];
    assert_string_equal(xp_text(doc, "//p[@class='spread-line']", b, sizeof b),
                        "2 entities at tick 300; 5 by tick 420 (about 40 live at a time): it spread.");
    assert_int_equal(xp_count(doc, "//svg[starts-with(@aria-label,'spread')]/polyline[@class='spread']"), 1);
    /* the step line: up at each step (x repeats), ending at the last divergent tick */
    xp_text(doc, "//polyline[@class='spread']/@points", b, sizeof b);
    double xa, ya, xb, yb;
    assert_int_equal(sscanf(b, "%lf,%lf %lf,%lf", &xa, &ya, &xb, &yb), 4);
    assert_true(xa == xb && ya > yb);
    /* summary: bravo (fail: its golden row, then its passing seek folded), charlie (error), then
     * alpha (pass: one row for its two checks) */
    const char *rows = "//table[@class='summary']/tbody/tr";
    assert_int_equal(xp_count(doc, rows), 4);
    assert_string_equal(xp_text(doc, "//table[@class='summary']/tbody/tr[1]/td[1]", b, sizeof b), "bravo");
    assert_string_equal(xp_text(doc, "//table[@class='summary']/tbody/tr[1]/td[1]/@rowspan", b, sizeof b), "2");
    assert_string_equal(xp_text(doc, "//table[@class='summary']/tbody/tr[1]/td[5]", b, sizeof b), "golden");
    assert_string_equal(xp_text(doc, "//table[@class='summary']/tbody/tr[2]/td[1]", b, sizeof b),
                        "1 more check passes: seek");
    assert_string_equal(xp_text(doc, "//table[@class='summary']/tbody/tr[3]/td[1]", b, sizeof b), "charlie");
    assert_string_equal(xp_text(doc, "//table[@class='summary']/tbody/tr[4]/td[1]", b, sizeof b), "alpha");
    assert_string_equal(xp_text(doc, "//table[@class='summary']/tbody/tr[4]/td[5]", b, sizeof b),
                        "2 checks pass: record-vs-replay, seek");
    /* the failing check links to its section (N counts checks in report order: alpha's two, seek) */
    assert_string_equal(xp_text(doc, "//table[@class='summary']//a/@href", b, sizeof b), "#check-3");
    assert_int_equal(xp_count(doc, "//section[@id='check-3']"), 1);
    xmlFreeDoc(doc);
    free(html);
    dg_report_free(r);
}

static void test_text_and_markdown_rows_show_both_orientations_and_flag_bits(void **state)
{
    (void)state;
    dg_report *r = follow_report();
    char *txt = render(r, DG_REPORT_TEXT, NULL);
    char *md = render(r, DG_REPORT_MARKDOWN, NULL);
    assert_non_null(strstr(txt, " rot   1.000000 0.000000 0.000000 0.000000 0.99995"));
    assert_non_null(strstr(txt, "0x0012"));
    assert_non_null(strstr(txt, "0x0016"));
    assert_non_null(strstr(txt, "+bit 2"));
    assert_non_null(strstr(md, "| rot | 1.000000 0.000000 0.000000 0.000000 | 0.99995"));
    assert_non_null(strstr(md, "| flags | 0x0012 | 0x0016 | +bit 2 |"));
    free(txt);
    free(md);
    dg_report_free(r);
}

/* ---- model and JSON ------------------------------------------------------------------------------ */

static void test_trajectory_cap_and_spread_order(void **state)
{
    (void)state;
    dg_report_limits l = {.trajectory_entities = 2, .spread_points = 2};
    dg_report *r = new_report(&l);
    dg_report_check *c = dg_report_add_check(dg_report_add_scenario(r, "s", NULL), "golden", DG_REPORT_PASS);
    assert_int_equal(dg_report_check_add_point(c, 'A', 1, 0, 0, 0), DG_E_USAGE); /* nothing started */
    assert_int_equal(dg_report_check_add_trajectory(c, 5, "five"), DG_OK); /* none yet: the main one */
    assert_int_equal(c->trajectory.entity_id, 5);
    assert_int_equal(dg_report_check_add_trajectory(c, 6, NULL), DG_OK);
    assert_int_equal(dg_report_check_add_point(c, 'B', 1, 1, 2, 3), DG_OK);
    assert_int_equal(dg_report_check_add_trajectory(c, 8, NULL), DG_OK); /* beyond the cap of 2 */
    assert_int_equal(dg_report_check_add_point(c, 'A', 1, 1, 2, 3), DG_OK);
    assert_int_equal(dg_report_check_set_trajectory_reason(c, 9, "pos", "m", 1), DG_OK);
    assert_int_equal(c->n_more_trajectories, 1);
    assert_int_equal(c->trajectories_cut, 1);
    assert_int_equal(c->more_trajectories[0].n_b, 1);
    assert_int_equal(c->more_trajectories[0].n_a, 0);
    assert_int_equal(c->trajectory.n_a + c->trajectory.n_b, 0);
    assert_string_equal(c->more_trajectories[0].why_field, "");
    assert_int_equal(c->more_trajectories[0].first_tick, DG_REPORT_TICK_NONE);
    assert_int_equal(dg_report_check_set_trajectory(c, 9, NULL), DG_OK); /* resets the further ones too */
    assert_int_equal(c->n_more_trajectories + c->trajectories_cut, 0);
    /* spread: ticks strictly increasing, counts never falling; past the cap the last step moves */
    assert_int_equal(dg_report_check_add_spread(c, 10, 1), DG_OK);
    assert_int_equal(dg_report_check_add_spread(c, 10, 2), DG_E_USAGE);
    assert_int_equal(dg_report_check_add_spread(c, 11, 0), DG_E_USAGE);
    assert_int_equal(dg_report_check_add_spread(c, 12, 3), DG_OK);
    assert_int_equal(dg_report_check_add_spread(c, 20, 7), DG_OK);
    assert_int_equal(c->n_spread, 2);
    assert_int_equal(c->spread_cut, 1);
    assert_int_equal(c->spread[1].tick, 20);
    assert_int_equal(c->spread[1].entities, 7);
    dg_report_free(r);
}

static void test_json_carries_the_new_fields_and_validates(void **state)
{
    (void)state;
    dg_report *r = follow_report();
    size_t n;
    char *text = render(r, DG_REPORT_JSON, &n);
    json_error_t je;
    json_t *doc = json_loadb(text, n, 0, &je);
    assert_non_null(doc);
    const char *root = getenv("DETGATE_SOURCE_DIR");
    assert_non_null(root);
    char path[4096], msg[512];
    snprintf(path, sizeof path, "%s/docs/report-schema.json", root);
    json_t *schema = json_load_file(path, 0, &je);
    assert_non_null(schema);
    if (!sc_validate(schema, doc, msg, sizeof msg))
        fail_msg("schema: %s", msg);
    json_t *c = json_array_get(json_object_get(json_array_get(json_object_get(doc, "scenarios"), 1), "checks"), 1);
    json_t *t = json_object_get(c, "trajectory");
    assert_int_equal(json_integer_value(json_object_get(t, "firstTick")), 300);
    assert_string_equal(json_string_value(json_object_get(json_object_get(t, "largest"), "field")), "pos");
    assert_int_equal(json_array_size(json_object_get(c, "moreTrajectories")), 2);
    assert_int_equal(json_array_size(json_object_get(json_object_get(c, "spread"), "steps")), 2);
    assert_non_null(strstr(text, "\"quatA\": [1, 0, 0, 0]"));
    assert_int_equal(json_integer_value(json_object_get(json_object_get(doc, "limits"), "trajectoryEntities")), 16);
    json_decref(schema);
    json_decref(doc);
    free(text);
    dg_report_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_html_says_why_and_offers_every_followed_entity),
        cmocka_unit_test(test_html_trajectory_box_has_the_data_aspect_and_one_scale),
        cmocka_unit_test(test_html_rotation_shows_both_sides_and_flags_their_bits),
        cmocka_unit_test(test_html_spread_and_failures_first_summary),
        cmocka_unit_test(test_text_and_markdown_rows_show_both_orientations_and_flag_bits),
        cmocka_unit_test(test_trajectory_cap_and_spread_order),
        cmocka_unit_test(test_json_carries_the_new_fields_and_validates),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
