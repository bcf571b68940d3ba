/* tests/sim/sim_test_util.c — lockstep runner and bitwise state comparison for the sim tests. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "sim_test_util.h"
#include "sim_stub/tools/state_digest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

dg_sim_scenario *sim_load_bundled(const char *name)
{
    const char *root = getenv("DETGATE_SOURCE_DIR");
    char path[1024];
    snprintf(path, sizeof path, "%s/corpus/scenarios/%s.scn", root ? root : ".", name);
    dg_error err;
    dg_error_clear(&err);
    dg_sim_scenario *scn = NULL;
    dg_status st = dg_sim_scenario_parse_file(path, &scn, &err);
    if (st != DG_OK) {
        char msg[512];
        dg_error_format(&err, msg, sizeof msg);
        print_error("%s\n", msg);
    }
    assert_int_equal(st, DG_OK);
    return scn;
}

dg_sim_scenario *sim_parse_text(const char *text)
{
    dg_error err;
    dg_error_clear(&err);
    dg_sim_scenario *scn = NULL;
    dg_status st = dg_sim_scenario_parse_mem(text, strlen(text), "inline.scn", &scn, &err);
    if (st != DG_OK) {
        char msg[512];
        dg_error_format(&err, msg, sizeof msg);
        print_error("%s\n", msg);
    }
    assert_int_equal(st, DG_OK);
    return scn;
}

dg_sim *sim_make(const dg_sim_scenario *scn, const dg_sim_inject *inj)
{
    dg_error err;
    dg_error_clear(&err);
    dg_sim *sim = NULL;
    assert_int_equal(dg_sim_new(scn, inj, &sim, &err), DG_OK);
    return sim;
}

static int events_equal(const dg_sim_event *a, const dg_sim_event *b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (a[i].kind != b[i].kind || a[i].a != b[i].a || a[i].b != b[i].b || a[i].c != b[i].c ||
            a[i].d != b[i].d || a[i].text_len != b[i].text_len)
            return 0;
        if (a[i].text_len && memcmp(a[i].text, b[i].text, a[i].text_len) != 0)
            return 0;
    }
    return 1;
}

int sim_states_equal(const dg_sim *a, const dg_sim *b)
{
    size_t na, nb, ea, eb;
    const dg_sim_entity *xa = dg_sim_entities(a, &na), *xb = dg_sim_entities(b, &nb);
    const dg_sim_event *va = dg_sim_events(a, &ea), *vb = dg_sim_events(b, &eb);
    if (dg_sim_tick(a) != dg_sim_tick(b) || na != nb || ea != eb)
        return 0;
    if (na && memcmp(xa, xb, na * sizeof *xa) != 0)
        return 0;
    return events_equal(va, vb, ea);
}

uint64_t sim_first_diff(const dg_sim_scenario *scn, const dg_sim_inject *ia, const dg_sim_inject *ib,
                        uint64_t max_ticks)
{
    dg_sim *a = sim_make(scn, ia), *b = sim_make(scn, ib);
    uint64_t diff = SIM_NO_DIFF;
    for (;;) {
        sim_assert_padding_zero(a);
        sim_assert_padding_zero(b);
        if (!sim_states_equal(a, b)) {
            diff = dg_sim_tick(a);
            break;
        }
        if (dg_sim_done(a) || dg_sim_tick(a) + 1 >= max_ticks)
            break;
        assert_int_equal(dg_sim_step(a, NULL), DG_OK);
        assert_int_equal(dg_sim_step(b, NULL), DG_OK);
    }
    dg_sim_free(a);
    dg_sim_free(b);
    return diff;
}

uint64_t sim_run_digest(const dg_sim_scenario *scn, const dg_sim_inject *inj, uint64_t max_ticks)
{
    dg_sim *s = sim_make(scn, inj);
    uint64_t h = DG_SIM_FNV_OFFSET;
    for (;;) {
        size_t n, ne;
        const dg_sim_entity *e = dg_sim_entities(s, &n);
        const dg_sim_event *v = dg_sim_events(s, &ne);
        h = dg_sim_digest_tick(h, dg_sim_tick(s), e, n, v, ne);
        if (dg_sim_done(s) || dg_sim_tick(s) + 1 >= max_ticks)
            break;
        assert_int_equal(dg_sim_step(s, NULL), DG_OK);
    }
    dg_sim_free(s);
    return h;
}

void sim_assert_padding_zero(const dg_sim *sim)
{
    size_t n, ne;
    const dg_sim_entity *e = dg_sim_entities(sim, &n);
    const dg_sim_event *v = dg_sim_events(sim, &ne);
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(e[i].pad0_, 0);
        assert_int_equal(e[i].pad1_, 0);
        if (i)
            assert_true(e[i - 1].id < e[i].id); /* sorted by id, unique */
        assert_true(e[i].id >= 1);
    }
    for (size_t i = 0; i < ne; i++) {
        assert_int_equal(v[i].pad0_[0] | v[i].pad0_[1] | v[i].pad0_[2], 0);
        assert_int_equal(v[i].pad1_, 0);
        assert_int_equal(v[i].pad2_, 0);
        assert_true(v[i].kind >= DG_SIM_EV_KILL && v[i].kind <= DG_SIM_EV_ALERT);
    }
}
