/* tests/reports/test_report_model.c — the report room's filing cabinet under test: range folding,
 * timeline downsampling, caps with counted cuts, field diffs from quantized states, statuses. */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "detgate/report.h"

static dg_report *new_report(const dg_report_limits *l)
{
    dg_report *r = dg_report_new("diff", "t", l, NULL);
    assert_non_null(r);
    return r;
}

static dg_report_check *new_check(dg_report *r)
{
    dg_report_scenario *s = dg_report_add_scenario(r, "s", "flrep");
    assert_non_null(s);
    dg_report_check *c = dg_report_add_check(s, "diff", DG_REPORT_FAIL);
    assert_non_null(c);
    return c;
}

static void test_ranges_fold_consecutive_ticks(void **state)
{
    (void)state;
    dg_report *r = new_report(NULL);
    dg_report_scenario *s = dg_report_add_scenario(r, "s", "flrep");
    dg_report_check *c = dg_report_add_check(s, "diff", DG_REPORT_PASS);
    dg_report_check *e = dg_report_add_check(s, "seek", DG_REPORT_ERROR);
    assert_true(c->first_tick == DG_REPORT_TICK_NONE);
    assert_int_equal(dg_report_check_add_divergent(e, 4, 1), DG_OK);
    assert_int_equal(e->status, DG_REPORT_ERROR); /* could not finish: stays an error */
    c = s->checks[0];
    const uint64_t ticks[] = {1, 2, 3, 5, 7, 8};
    for (size_t i = 0; i < 6; i++)
        assert_int_equal(dg_report_check_add_divergent(c, ticks[i], 1), DG_OK);
    assert_int_equal(c->first_tick, 1);
    assert_int_equal(c->status, DG_REPORT_FAIL); /* a divergent tick fails a passing check */
    assert_int_equal(c->divergent_ticks, 6);
    assert_int_equal(c->n_ranges, 3);
    assert_int_equal(c->ranges[0].first, 1);
    assert_int_equal(c->ranges[0].last, 3);
    assert_int_equal(c->ranges[0].count, 3);
    assert_int_equal(c->ranges[1].first, 5);
    assert_int_equal(c->ranges[1].count, 1);
    assert_int_equal(c->ranges[2].first, 7);
    assert_int_equal(c->ranges[2].last, 8);
    assert_false(c->ranges_coalesced);
    dg_report_free(r);
}

static void test_out_of_order_tick_is_refused_and_changes_nothing(void **state)
{
    (void)state;
    dg_report *r = new_report(NULL);
    dg_report_check *c = new_check(r);
    assert_int_equal(dg_report_check_add_divergent(c, 10, 2), DG_OK);
    assert_int_equal(dg_report_check_add_divergent(c, 10, 2), DG_E_USAGE);
    assert_int_equal(dg_report_check_add_divergent(c, 9, 2), DG_E_USAGE);
    assert_int_equal(dg_report_check_add_divergent(c, DG_REPORT_TICK_NONE, 2), DG_E_USAGE);
    assert_int_equal(c->divergent_ticks, 1);
    assert_int_equal(c->n_ranges, 1);
    assert_int_equal(c->n_buckets, 1);
    assert_int_equal(c->buckets[0].ticks, 1);
    dg_report_free(r);
}

static void test_range_cap_coalesces_into_last_range(void **state)
{
    (void)state;
    dg_report_limits l = {.ranges_per_check = 2};
    dg_report *r = new_report(&l);
    dg_report_check *c = new_check(r);
    const uint64_t ticks[] = {1, 3, 5, 6, 9};
    for (size_t i = 0; i < 5; i++)
        assert_int_equal(dg_report_check_add_divergent(c, ticks[i], 1), DG_OK);
    assert_int_equal(c->n_ranges, 2);
    assert_int_equal(c->ranges[1].first, 3);
    assert_int_equal(c->ranges[1].last, 9);
    assert_int_equal(c->ranges[1].count, 4); /* 3, 5, 6, 9 */
    assert_true(c->ranges_coalesced);
    assert_int_equal(c->divergent_ticks, 5);
    dg_report_free(r);
}

/* Whatever the downsampling, the buckets must partition the divergent ticks, stay aligned to the
 * bucket width, and keep the largest entity count of the run. */
static void test_timeline_downsamples_without_losing_ticks_or_peaks(void **state)
{
    (void)state;
    dg_report_limits l = {.timeline_buckets = 4};
    dg_report *r = new_report(&l);
    assert_int_equal(r->limits.timeline_buckets, 4);
    dg_report_check *c = new_check(r);
    uint32_t peak = 0;
    for (uint64_t t = 0; t < 100; t++) {
        uint32_t n = (uint32_t)((t * 7) % 13);
        if (n > peak)
            peak = n;
        assert_int_equal(dg_report_check_add_divergent(c, t * 2, n), DG_OK);
    }
    assert_true(c->n_buckets <= 4);
    assert_true(c->bucket_width > 1);
    assert_int_equal(c->bucket_width & (c->bucket_width - 1), 0); /* power of two */
    uint64_t total = 0;
    uint32_t seen_peak = 0;
    for (uint32_t i = 0; i < c->n_buckets; i++) {
        const dg_report_bucket *b = &c->buckets[i];
        assert_true(b->first <= b->last);
        assert_int_equal(b->first / c->bucket_width, b->last / c->bucket_width);
        if (i)
            assert_true(b->first > c->buckets[i - 1].last);
        total += b->ticks;
        if (b->entities > seen_peak)
            seen_peak = b->entities;
    }
    assert_int_equal(total, 100);
    assert_int_equal(seen_peak, peak);
    assert_int_equal(c->buckets[0].first, 0);
    assert_int_equal(c->buckets[c->n_buckets - 1].last, 198);
    dg_report_free(r);
}

static void test_odd_timeline_cap_is_rounded_to_power_of_two(void **state)
{
    (void)state;
    dg_report_limits l = {.timeline_buckets = 5};
    dg_report *r = new_report(&l);
    assert_int_equal(r->limits.timeline_buckets, 8);
    dg_report_free(r);
}

static void test_detail_caps_count_what_they_cut(void **state)
{
    (void)state;
    dg_report_limits l = {.ticks_per_check = 2, .entities_per_tick = 3};
    dg_report *r = new_report(&l);
    dg_report_check *c = new_check(r);
    dg_report_tick *t = dg_report_add_tick(c, 5);
    assert_non_null(t);
    for (uint32_t i = 1; i <= 5; i++) {
        dg_report_entity *e = dg_report_tick_add_entity(t, i, NULL, DG_REPORT_ENTITY_CHANGED);
        if (i <= 3)
            assert_non_null(e);
        else
            assert_null(e);
    }
    assert_int_equal(t->n_entities, 3);
    assert_int_equal(t->entities_cut, 2);
    assert_non_null(dg_report_add_tick(c, 6));
    assert_null(dg_report_add_tick(c, 7));
    assert_null(dg_report_add_tick(c, 8));
    assert_int_equal(c->n_ticks, 2);
    assert_int_equal(c->ticks_cut, 2);
    assert_false(r->nomem);
    dg_report_free(r);
}

static void test_fields_beyond_the_fixed_array_are_counted(void **state)
{
    (void)state;
    dg_report *r = new_report(NULL);
    dg_report_tick *t = dg_report_add_tick(new_check(r), 1);
    dg_report_entity *e = dg_report_tick_add_entity(t, 1, "x", DG_REPORT_ENTITY_CHANGED);
    for (int i = 0; i < DG_REPORT_FIELDS_MAX + 3; i++)
        assert_int_equal(dg_report_entity_add_field(e, "flags", "", i, i + 1, i, i + 1), i < DG_REPORT_FIELDS_MAX);
    assert_int_equal(e->n_fields, DG_REPORT_FIELDS_MAX);
    assert_int_equal(e->fields_cut, 3);
    dg_report_free(r);
}

static void test_qentity_diff_names_fields_in_real_units(void **state)
{
    (void)state;
    dg_report *r = new_report(NULL);
    dg_report_tick *t = dg_report_add_tick(new_check(r), 1);
    dg_report_entity *e = dg_report_tick_add_entity(t, 42, NULL, DG_REPORT_ENTITY_CHANGED);
    dg_qentity a = {.id = 42, .pos = {640, -64, 0}, .vel = {32, 0, 0}, .health = 10000, .flags = 1};
    dg_qentity b = a;
    b.pos[0] = 641;   /* +1 quantum = +1/64 m */
    b.vel[2] = -16;   /* -0.5 m/s */
    b.health = 7500;  /* 75 % */
    b.rot[1] = 2000;  /* a turn */
    b.faction_index = 3;
    assert_int_equal(dg_report_entity_diff_qentity(e, &a, &b), 5);
    assert_string_equal(e->fields[0].name, "pos.x");
    assert_string_equal(e->fields[0].unit, "m");
    assert_int_equal(e->fields[0].a_q, 640);
    assert_int_equal(e->fields[0].b_q, 641);
    assert_int_equal(e->fields[0].delta_q, 1);
    assert_true(e->fields[0].a == 10.0);
    assert_true(e->fields[0].delta == 1.0 / 64.0);
    assert_string_equal(e->fields[1].name, "vel.z");
    assert_true(e->fields[1].b == -0.5);
    assert_string_equal(e->fields[2].name, "rot");
    assert_false(e->fields[2].has_quanta);
    assert_false(e->fields[2].has_values);
    assert_true(e->fields[2].delta > 0 && e->fields[2].delta < 180);
    assert_true(e->fields[2].delta == dg_quant_rot_angle_deg(&a, &b));
    assert_string_equal(e->fields[3].name, "health");
    assert_string_equal(e->fields[3].unit, "%");
    assert_true(e->fields[3].a == dg_quant_health_pct(&a));
    assert_true(e->fields[3].b == dg_quant_health_pct(&b));
    assert_string_equal(e->fields[4].name, "faction");
    assert_int_equal(e->fields[4].delta_q, 3);
    /* equal states add nothing */
    assert_int_equal(dg_report_entity_diff_qentity(e, &a, &a), 0);
    dg_report_free(r);
}

static void test_delta_quanta_saturate_instead_of_overflowing(void **state)
{
    (void)state;
    dg_report *r = new_report(NULL);
    dg_report_entity *e = dg_report_tick_add_entity(dg_report_add_tick(new_check(r), 1), 1, NULL, DG_REPORT_ENTITY_CHANGED);
    assert_true(dg_report_entity_add_field(e, "a", "", INT64_MIN, INT64_MAX, 0, 0));
    assert_true(dg_report_entity_add_field(e, "b", "", INT64_MAX, INT64_MIN, 0, 0));
    assert_true(dg_report_entity_add_field(e, "c", "", -5, 7, 0, 0));
    assert_true(e->fields[0].delta_q == INT64_MAX);
    assert_true(e->fields[1].delta_q == INT64_MIN);
    assert_int_equal(e->fields[2].delta_q, 12);
    dg_report_free(r);
}

static bool utf8_ok(const char *s)
{
    /* the renderer-side decoder is private; check structure by hand for 1..4-byte sequences */
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        int n = *p < 0x80 ? 1 : (*p >> 5) == 6 ? 2 : (*p >> 4) == 14 ? 3 : (*p >> 3) == 30 ? 4 : 0;
        if (!n)
            return false;
        for (int i = 1; i < n; i++)
            if ((p[i] & 0xC0) != 0x80)
                return false;
        p += n;
    }
    return true;
}

static void test_long_names_are_cut_on_a_character_boundary(void **state)
{
    (void)state;
    dg_report *r = new_report(NULL);
    dg_report_tick *t = dg_report_add_tick(new_check(r), 1);
    char name[200] = "";
    for (int i = 0; i < 30; i++)
        strcat(name, "\xCE\xA9"); /* 60 bytes of 2-byte characters after a 1-byte lead */
    char shifted[210] = "x";
    strcat(shifted, name);
    dg_report_entity *e = dg_report_tick_add_entity(t, 1, shifted, DG_REPORT_ENTITY_CHANGED);
    assert_true(strlen(e->name) < DG_REPORT_NAME_CAP);
    assert_int_equal(strlen(e->name), 47); /* "x" + 23 whole characters */
    assert_true(utf8_ok(e->name));
    assert_int_equal(strncmp(e->name, shifted, strlen(e->name)), 0);
    dg_report_free(r);
}

static void test_sub_quantum_only_without_quantized_divergence(void **state)
{
    (void)state;
    dg_report *r = new_report(NULL);
    dg_report_check *c = new_check(r);
    dg_report_check_set_raw_divergence(c, 40);
    assert_true(c->sub_quantum);
    assert_int_equal(c->first_raw_tick, 40);
    assert_int_equal(dg_report_check_add_divergent(c, 55, 1), DG_OK);
    assert_false(c->sub_quantum); /* the quantized state diverged too: not sub-quantum */
    dg_report_check *d = new_check(r);
    assert_int_equal(dg_report_check_add_divergent(d, 55, 1), DG_OK);
    dg_report_check_set_raw_divergence(d, 50);
    assert_false(d->sub_quantum);
    assert_int_equal(d->first_raw_tick, 50);
    dg_report_free(r);
}

static void test_statuses_rank_error_over_fail_over_pass(void **state)
{
    (void)state;
    dg_report *r = new_report(NULL);
    dg_report_scenario *s = dg_report_add_scenario(r, "a", NULL);
    assert_int_equal(dg_report_scenario_status(s), DG_REPORT_PASS);
    dg_report_add_check(s, "x", DG_REPORT_PASS);
    assert_int_equal(dg_report_overall_status(r), DG_REPORT_PASS);
    dg_report_add_check(s, "y", DG_REPORT_FAIL);
    assert_int_equal(dg_report_scenario_status(r->scenarios[0]), DG_REPORT_FAIL);
    dg_report_scenario *s2 = dg_report_add_scenario(r, "b", NULL);
    dg_report_add_check(s2, "z", DG_REPORT_ERROR);
    assert_int_equal(dg_report_overall_status(r), DG_REPORT_ERROR);
    dg_report_free(r);

    /* the struct is public: a status value outside the enum counts as error, never as pass */
    r = new_report(NULL);
    dg_report_add_check(dg_report_add_scenario(r, "odd", NULL), "x", (dg_report_status)7);
    assert_int_equal(dg_report_overall_status(r), DG_REPORT_ERROR);
    dg_report_free(r);

    r = new_report(NULL);
    assert_int_equal(dg_report_set_bisect(r, NULL, NULL, NULL, "good", "bad", DG_REPORT_TICK_NONE), DG_OK);
    assert_int_equal(dg_report_overall_status(r), DG_REPORT_PASS);
    assert_int_equal(dg_report_set_bisect(r, NULL, "abc", NULL, "good", "bad", 3), DG_OK);
    assert_int_equal(dg_report_overall_status(r), DG_REPORT_FAIL);
    dg_report_free(r);
}

static void test_kind_names_round_trip(void **state)
{
    (void)state;
    for (int k = 0; k < 5; k++) {
        dg_report_kind out = DG_REPORT_TEXT;
        assert_int_equal(dg_report_kind_from_name(dg_report_kind_name((dg_report_kind)k), &out), DG_OK);
        assert_int_equal(out, k);
    }
    dg_report_kind out;
    assert_int_equal(dg_report_kind_from_name("md", &out), DG_OK);
    assert_int_equal(out, DG_REPORT_MARKDOWN);
    assert_int_equal(dg_report_kind_from_name("pdf", &out), DG_E_USAGE);
    assert_string_equal(dg_report_status_name(DG_REPORT_ERROR), "error");
    assert_string_equal(dg_report_entity_kind_name(DG_REPORT_ENTITY_LOST), "lost");
}

static void test_trajectory_caps_points_per_side(void **state)
{
    (void)state;
    dg_report_limits l = {.trajectory_points = 3};
    dg_report *r = new_report(&l);
    dg_report_check *c = new_check(r);
    assert_int_equal(dg_report_check_add_point(c, 'A', 1, 0, 0, 0), DG_E_USAGE); /* not started */
    assert_int_equal(dg_report_check_set_trajectory(c, 9, "nine"), DG_OK);
    assert_int_equal(dg_report_check_add_point(c, 'C', 1, 0, 0, 0), DG_E_USAGE);
    for (int i = 0; i < 5; i++)
        assert_int_equal(dg_report_check_add_point(c, 'A', (uint64_t)i, i, 0, 0), DG_OK);
    assert_int_equal(dg_report_check_add_point(c, 'B', 0, 0, 1, 0), DG_OK);
    assert_int_equal(c->trajectory.n_a, 3);
    assert_int_equal(c->trajectory.cut_a, 2);
    assert_int_equal(c->trajectory.n_b, 1);
    assert_int_equal(c->trajectory.cut_b, 0);
    assert_true(c->trajectory.a[2].x == 2.0);
    dg_report_free(r);
}

static const char *name_of(void *ctx, uint32_t id)
{
    (void)ctx;
    return id == 2 ? "Two" : NULL;
}

static void test_add_states_diffs_a_whole_tick(void **state)
{
    (void)state;
    dg_report *r = new_report(NULL);
    dg_report_check *c = new_check(r);
    /* A: 1 2 3 5   B: 2 3 4 5 — 1 lost, 4 added, 2 changed (pos), 3 and 5 equal */
    dg_qentity a[4] = {{.id = 1}, {.id = 2, .pos = {64, 0, 0}}, {.id = 3}, {.id = 5, .health = 10}};
    dg_qentity b[4] = {{.id = 2, .pos = {65, 0, 0}}, {.id = 3}, {.id = 4}, {.id = 5, .health = 10}};
    dg_report_tick_states st = {.tick = 30, .a = a, .n_a = 4, .b = b, .n_b = 4, .name_of = name_of};
    uint32_t n = 99;
    assert_int_equal(dg_report_check_add_states(c, &st, &n), DG_OK);
    assert_int_equal(n, 3);
    assert_int_equal(c->first_tick, 30);
    assert_int_equal(c->divergent_ticks, 1);
    assert_int_equal(c->buckets[0].entities, 3);
    assert_int_equal(c->n_ticks, 1);
    const dg_report_tick *t = c->ticks[0];
    assert_int_equal(t->lost, 1);
    assert_int_equal(t->added, 1);
    assert_int_equal(t->changed, 1);
    assert_int_equal(t->n_entities, 3);
    /* in id order: 1 lost, 2 changed (named), 4 added */
    assert_int_equal(t->entities[0].id, 1);
    assert_int_equal(t->entities[0].kind, DG_REPORT_ENTITY_LOST);
    assert_int_equal(t->entities[0].n_fields, 0);
    assert_int_equal(t->entities[1].id, 2);
    assert_string_equal(t->entities[1].name, "Two");
    assert_int_equal(t->entities[1].n_fields, 1);
    assert_string_equal(t->entities[1].fields[0].name, "pos.x");
    assert_int_equal(t->entities[2].id, 4);
    assert_int_equal(t->entities[2].kind, DG_REPORT_ENTITY_ADDED);

    /* equal states record nothing */
    dg_report_tick_states same = {.tick = 31, .a = a, .n_a = 4, .b = a, .n_b = 4};
    assert_int_equal(dg_report_check_add_states(c, &same, &n), DG_OK);
    assert_int_equal(n, 0);
    assert_int_equal(c->divergent_ticks, 1);
    /* events alone make a divergent tick with no entity diffs */
    same.events_differ = true;
    same.events_a = 1;
    assert_int_equal(dg_report_check_add_states(c, &same, &n), DG_OK);
    assert_int_equal(c->divergent_ticks, 2);
    assert_int_equal(c->ticks[1]->n_entities, 0);
    assert_true(c->ticks[1]->events_differ);
    dg_report_free(r);
}

static void test_add_states_refuses_unsorted_input_and_changes_nothing(void **state)
{
    (void)state;
    dg_report *r = new_report(NULL);
    dg_report_check *c = new_check(r);
    dg_qentity a[2] = {{.id = 5}, {.id = 3}};
    dg_qentity b[2] = {{.id = 3}, {.id = 3}};
    dg_report_tick_states st = {.tick = 1, .a = a, .n_a = 2, .b = b, .n_b = 0};
    assert_int_equal(dg_report_check_add_states(c, &st, NULL), DG_E_USAGE);
    st.a = b; /* duplicate ids are not ascending either */
    assert_int_equal(dg_report_check_add_states(c, &st, NULL), DG_E_USAGE);
    st.n_a = 0;
    st.a = NULL;
    st.b = a;
    st.n_b = 1;
    assert_int_equal(dg_report_check_add_states(c, &st, NULL), DG_OK); /* one added entity */
    assert_int_equal(dg_report_check_add_states(c, &st, NULL), DG_E_USAGE); /* same tick again */
    assert_int_equal(c->divergent_ticks, 1);
    assert_int_equal(c->n_ticks, 1);
    dg_report_free(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ranges_fold_consecutive_ticks),
        cmocka_unit_test(test_out_of_order_tick_is_refused_and_changes_nothing),
        cmocka_unit_test(test_range_cap_coalesces_into_last_range),
        cmocka_unit_test(test_timeline_downsamples_without_losing_ticks_or_peaks),
        cmocka_unit_test(test_odd_timeline_cap_is_rounded_to_power_of_two),
        cmocka_unit_test(test_detail_caps_count_what_they_cut),
        cmocka_unit_test(test_fields_beyond_the_fixed_array_are_counted),
        cmocka_unit_test(test_qentity_diff_names_fields_in_real_units),
        cmocka_unit_test(test_delta_quanta_saturate_instead_of_overflowing),
        cmocka_unit_test(test_long_names_are_cut_on_a_character_boundary),
        cmocka_unit_test(test_sub_quantum_only_without_quantized_divergence),
        cmocka_unit_test(test_statuses_rank_error_over_fail_over_pass),
        cmocka_unit_test(test_kind_names_round_trip),
        cmocka_unit_test(test_trajectory_caps_points_per_side),
        cmocka_unit_test(test_add_states_diffs_a_whole_tick),
        cmocka_unit_test(test_add_states_refuses_unsorted_input_and_changes_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
