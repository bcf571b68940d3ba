/* tests/harness/test_api_fields.c — declared fields through the engine C API (include/detgate/harness.h,
 * issue 14): a session whose header declares angular velocity (float, rad/s, its own quantum), an RNG
 * state (uint 64) and a bool records format 2.0, verifies clean, reads back every slot exactly, and a
 * change in each field is caught by dg_harness_diff_files at its tick, named with its field, unit and
 * both values in the report. */
#define _POSIX_C_SOURCE 200809L /* open_memstream */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "detgate/harness.h"
#include "harness/harness_internal.h"

#define BODIES 4
#define TICKS 40
#define NX 3

static const char *const k_no_enum[] = {NULL};
static const dg_field_def k_fields[NX] = {
    {.name = "angvel", .unit = "rad/s", .type = DG_FIELD_FLOAT, .quantum = 1.0 / 1024, .enum_names = k_no_enum},
    {.name = "rng", .unit = "", .type = DG_FIELD_UINT, .bits = 64, .enum_names = k_no_enum},
    {.name = "awake", .unit = "", .type = DG_FIELD_BOOL, .enum_names = k_no_enum},
};
static const dg_schema k_schema = {.std_mask = DG_STD_POS | DG_STD_VEL | DG_STD_ROT, .pos_quantum_m = 0.001,
                                   .vel_quantum_mps = 0.001, .fields = k_fields, .field_count = NX};

/* Body i at tick t; `change` alters one field of body 2 at tick 17 (0 none, 1 angvel, 2 rng, 3 awake). */
static void world(uint64_t t, int change, dg_entity_in *e, int64_t *x)
{
    for (int i = 0; i < BODIES; i++) {
        memset(&e[i], 0, sizeof e[i]);
        e[i].id = (uint32_t)(BODIES - i); /* handed over in reverse id order: the session sorts */
        e[i].pos[0] = 0.5 * i + 0.01 * (double)t;
        e[i].rot[0] = 1;
        int64_t *s = x + i * NX;
        s[0] = (int64_t)(t % 5) * 128 - 64 * i; /* slots: x 1/1024 rad/s */
        s[1] = (int64_t)(0x9E3779B97F4A7C15ull * (t + 1) * (uint64_t)(i + 1));
        s[2] = (int64_t)((t + (uint64_t)i) % 3 == 0);
        if (t == 17 && e[i].id == 2 && change == 1)
            s[0] += 1;
        if (t == 17 && e[i].id == 2 && change == 2)
            s[1] ^= 1;
        if (t == 17 && e[i].id == 2 && change == 3)
            s[2] = !s[2];
    }
}

static void record(const char *path, int change, dg_harness_result *res)
{
    dg_error err;
    dg_error_clear(&err);
    dg_flrep_header hdr = {.tick_rate_hz = 60, .keyframe_interval_ticks = 15, .schema = &k_schema};
    dg_harness_options o = dg_harness_default_options();
    o.recording_path = path;
    dg_harness_session *s = NULL;
    assert_int_equal(dg_harness_open(&s, &hdr, &o, &err), DG_OK);
    dg_entity_in e[BODIES];
    int64_t x[BODIES * NX];
    for (uint64_t t = 0; t < TICKS; t++) {
        world(t, change, e, x);
        assert_int_equal(dg_harness_tick_x(s, t, e, x, BODIES, NULL, 0, &err), DG_OK);
    }
    assert_int_equal(dg_harness_close(s, NULL, res, &err), DG_OK);
}

static void test_round_trip(void **state)
{
    (void)state;
    char path[512];
    assert_true(dg_harness__temp_path(path, sizeof path, NULL, "api-fields", ".flrep"));
    dg_harness_result res;
    record(path, 0, &res);
    assert_int_equal(res.failed_checks, 0);
    assert_int_equal(res.error_checks, 0);
    assert_int_equal(res.ticks, TICKS);
    dg_error err;
    dg_error_clear(&err);
    dg_flrep_reader *r = NULL;
    assert_int_equal(dg_flrep_reader_open_file(&r, path, NULL, &err), DG_OK);
    const dg_flrep_header *h = dg_flrep_reader_header(r);
    assert_int_equal(h->major, 2);
    assert_non_null(h->schema);
    assert_int_equal(h->schema->field_count, NX);
    dg_flrep_tick t;
    dg_entity_in e[BODIES];
    int64_t x[BODIES * NX];
    uint64_t n = 0;
    while (dg_flrep_reader_next(r, &t, &err) == 1) {
        world(t.tick, 0, e, x);
        assert_int_equal(t.ent_count, BODIES);
        assert_non_null(t.extras);
        for (size_t k = 0; k < BODIES; k++) { /* read back sorted by id: ents[k] has id k + 1 = e[BODIES-1-k] */
            size_t src = BODIES - 1 - k;
            assert_int_equal(t.ents[k].id, e[src].id);
            assert_memory_equal(t.extras + k * NX, x + src * NX, NX * sizeof *x);
        }
        n++;
    }
    assert_int_equal(n, TICKS);
    dg_flrep_reader_close(r);
    remove(path);
}

static void test_change_named(void **state)
{
    (void)state;
    static const char *const names[] = {"", "angvel", "rng", "awake"};
    char a[512], b[512];
    assert_true(dg_harness__temp_path(a, sizeof a, NULL, "api-fields-a", ".flrep"));
    dg_harness_result res;
    record(a, 0, &res);
    for (int change = 1; change <= 3; change++) {
        assert_true(dg_harness__temp_path(b, sizeof b, NULL, "api-fields-b", ".flrep"));
        record(b, change, &res);
        assert_int_equal(res.failed_checks, 0); /* each recording is itself deterministic */
        dg_error err;
        dg_error_clear(&err);
        dg_report *rep = dg_report_new("diff", "test", NULL, &err);
        assert_non_null(rep);
        assert_int_equal(dg_harness_diff_files(a, b, "api", rep, &res, &err), DG_OK);
        assert_int_equal(res.first_divergent_tick, 17);
        const dg_report_check *c = rep->scenarios[0]->checks[0];
        assert_true(c->n_ticks >= 1);
        const dg_report_entity *en = &c->ticks[0]->entities[0];
        assert_int_equal(en->id, 2);
        assert_int_equal(en->n_fields, 1);
        const dg_report_field *f = &en->fields[0];
        assert_string_equal(f->name, names[change]);
        assert_true(f->has_text);
        if (change == 1) { /* one quantum of 1/1024 rad/s: the texts with the unit */
            assert_string_equal(f->unit, "rad/s");
            assert_non_null(strstr(f->a_text, " rad/s"));
            assert_int_equal(f->delta_q, 1);
        } else if (change == 3) {
            assert_true(strcmp(f->a_text, "true") == 0 || strcmp(f->a_text, "false") == 0);
            assert_string_not_equal(f->a_text, f->b_text);
        } else {
            assert_int_equal(f->a_q ^ f->b_q, 1);
        }
        char *json = NULL;
        size_t len = 0;
        FILE *mf = open_memstream(&json, &len);
        assert_non_null(mf);
        assert_int_equal(dg_report_write_json(rep, mf, NULL, &err), DG_OK);
        fclose(mf);
        assert_non_null(strstr(json, "\"aText\""));
        assert_non_null(strstr(json, names[change]));
        free(json);
        dg_report_free(rep);
        remove(b);
    }
    remove(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_round_trip),
        cmocka_unit_test(test_change_named),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
