/* tests/sim/test_sim_inject.c — each determinism-breaking switch does break determinism, and only
 * where it says: the bit flip changes tick T and nothing before it; FMA, libm trig, pointer order,
 * clock seed and racy threads each change the state relative to a normal run. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "sim_test_util.h"

#include <string.h>

static dg_sim_inject only(uint32_t flags)
{
    dg_sim_inject inj;
    memset(&inj, 0, sizeof inj);
    inj.flags = flags;
    return inj;
}

static dg_sim_inject bitflip(uint64_t tick, uint32_t entity, dg_sim_field field, unsigned bit)
{
    dg_sim_inject inj = only(DG_SIM_INJ_BITFLIP);
    inj.bitflip_tick = tick;
    inj.bitflip_entity = entity;
    inj.bitflip_field = (uint8_t)field;
    inj.bitflip_bit = (uint8_t)bit;
    return inj;
}

/* The flip at T: ticks 0..T-1 identical, T differs — for several fields, bits and ticks. */
static void test_bitflip_exactly_at_T(void **st)
{
    (void)st;
    dg_sim_scenario *scn = sim_load_bundled("dogfight-40");
    static const struct { uint64_t tick; uint32_t entity; dg_sim_field field; unsigned bit; } cases[] = {
        {300, 7, DG_SIM_FIELD_POS_X, 3},   {0, 1, DG_SIM_FIELD_VEL_Y, 51},   {1, 40, DG_SIM_FIELD_ROT_W, 0},
        {77, 12, DG_SIM_FIELD_HEALTH, 62}, {120, 33, DG_SIM_FIELD_FLAGS, 5}, {1499, 20, DG_SIM_FIELD_POS_Z, 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        dg_sim_inject inj = bitflip(cases[i].tick, cases[i].entity, cases[i].field, cases[i].bit);
        assert_int_equal(sim_first_diff(scn, NULL, &inj, cases[i].tick + 5), cases[i].tick);
    }
    dg_sim_scenario_free(scn);
}

/* The flipped entity is the only thing that differs at T, in the named field, by that one bit. */
static void test_bitflip_is_one_bit(void **st)
{
    (void)st;
    dg_sim_scenario *scn = sim_load_bundled("dogfight-40");
    dg_sim_inject inj = bitflip(50, 9, DG_SIM_FIELD_POS_Y, 17);
    dg_sim *a = sim_make(scn, NULL), *b = sim_make(scn, &inj);
    for (int t = 0; t < 50; t++) {
        assert_false(dg_sim_bitflip_applied(b));
        assert_int_equal(dg_sim_step(a, NULL), DG_OK);
        assert_int_equal(dg_sim_step(b, NULL), DG_OK);
    }
    assert_true(dg_sim_bitflip_applied(b));
    size_t na, nb;
    const dg_sim_entity *ea = dg_sim_entities(a, &na), *eb = dg_sim_entities(b, &nb);
    assert_int_equal(na, nb);
    for (size_t i = 0; i < na; i++) {
        if (ea[i].id != 9) {
            assert_memory_equal(&ea[i], &eb[i], sizeof ea[i]);
            continue;
        }
        uint64_t x, y;
        memcpy(&x, &ea[i].pos[1], 8);
        memcpy(&y, &eb[i].pos[1], 8);
        assert_int_equal(x ^ y, 1ull << 17);
        dg_sim_entity c = eb[i];
        c.pos[1] = ea[i].pos[1];
        assert_memory_equal(&ea[i], &c, sizeof c);
    }
    dg_sim_free(a);
    dg_sim_free(b);
    dg_sim_scenario_free(scn);
}

/* An entity that is not alive at T is not flipped, and nothing changes. */
static void test_bitflip_missing_entity(void **st)
{
    (void)st;
    dg_sim_scenario *scn = sim_load_bundled("dogfight-40");
    dg_sim_inject inj = bitflip(10, 4000, DG_SIM_FIELD_POS_X, 3);
    assert_int_equal(sim_first_diff(scn, NULL, &inj, 30), SIM_NO_DIFF);
    dg_sim_scenario_free(scn);
}

static void test_fma_changes_state(void **st)
{
    (void)st;
    dg_sim_scenario *scn = sim_load_bundled("dogfight-40");
    dg_sim_inject inj = only(DG_SIM_INJ_FMA);
    uint64_t t = sim_first_diff(scn, NULL, &inj, 600);
    assert_int_not_equal(t, SIM_NO_DIFF);
    assert_true(t >= 1); /* tick 0 is the spawn state: nothing integrated yet */
    dg_sim_scenario_free(scn);
}

static void test_libm_trig_changes_state(void **st)
{
    (void)st;
    dg_sim_scenario *scn = sim_load_bundled("dogfight-40");
    dg_sim_inject inj = only(DG_SIM_INJ_LIBM_TRIG);
    assert_int_not_equal(sim_first_diff(scn, NULL, &inj, 600), SIM_NO_DIFF);
    dg_sim_scenario_free(scn);
    /* walkers use trig for heading only: the swap is visible there as well */
    scn = sim_load_bundled("walkers-20");
    assert_int_not_equal(sim_first_diff(scn, NULL, &inj, 3000), SIM_NO_DIFF);
    dg_sim_scenario_free(scn);
}

/* Two missiles hit one target on the same tick. Launchers 1 and 2, target 3 (health 1, each hit
 * takes 0.6). Dummies 4 and 5 are despawned at tick 1, so the record pool's LIFO free list hands
 * dummy 5's (higher) record to missile 6 and dummy 4's (lower) to missile 7: address order is the
 * reverse of id order. Id order: 6 wounds, 7 kills (credit launcher 2). Pointer order: 7 wounds,
 * 6 kills (credit launcher 1). */
static const char pointer_order_scn[] =
    "scenario pointer-order\n"
    "session tick_rate=60 duration=20 seed=1 planet_radius=6371km\n"
    "type post category=static name=\"Launcher\"\n"
    "type mis category=missile name=\"Missile\" speed=300 accel=0 hit_radius=900 damage=0.6\n"
    "faction a name=\"A\"\n"
    "faction b name=\"B\"\n"
    "entity 1 type=post faction=a local=-100,0,0\n"
    "entity 2 type=post faction=a local=100,0,0\n"
    "entity 3 type=post faction=b local=0,300,0\n"
    "entity 4 type=post faction=a local=0,-50,0\n"
    "entity 5 type=post faction=a local=0,-60,0\n"
    "despawn 4 at=1\n"
    "despawn 5 at=1\n"
    "fire 1 at=2 weapon=mis target=3\n"
    "fire 2 at=2 weapon=mis target=3\n";

static uint32_t killer_of_3(const dg_sim_scenario *scn, const dg_sim_inject *inj, uint16_t *flags1,
                            uint16_t *flags2)
{
    dg_sim *sim = sim_make(scn, inj);
    uint32_t killer = 0;
    while (!dg_sim_done(sim) && !killer) {
        assert_int_equal(dg_sim_step(sim, NULL), DG_OK);
        size_t ne, n;
        const dg_sim_event *ev = dg_sim_events(sim, &ne);
        for (size_t i = 0; i < ne; i++)
            if (ev[i].kind == DG_SIM_EV_KILL && ev[i].b == 3)
                killer = ev[i].a;
        const dg_sim_entity *e = dg_sim_entities(sim, &n);
        assert_true(n >= 2);
        *flags1 = e[0].flags;
        *flags2 = e[1].flags;
    }
    dg_sim_free(sim);
    return killer;
}

static void test_pointer_order_changes_kill_credit(void **st)
{
    (void)st;
    dg_sim_scenario *scn = sim_parse_text(pointer_order_scn);
    dg_sim_inject ptr = only(DG_SIM_INJ_POINTER_ORDER);
    uint16_t f1, f2;
    assert_int_equal(killer_of_3(scn, NULL, &f1, &f2), 2);
    assert_int_equal(f1 >> DG_SIM_FLAG_KILLS_SHIFT, 0);
    assert_int_equal(f2 >> DG_SIM_FLAG_KILLS_SHIFT, 1);
    assert_int_equal(killer_of_3(scn, &ptr, &f1, &f2), 1);
    assert_int_equal(f1 >> DG_SIM_FLAG_KILLS_SHIFT, 1);
    assert_int_equal(f2 >> DG_SIM_FLAG_KILLS_SHIFT, 0);
    uint64_t t = sim_first_diff(scn, NULL, &ptr, 20);
    assert_int_not_equal(t, SIM_NO_DIFF);
    assert_true(t >= 3); /* nothing differs before the hits */
    dg_sim_scenario_free(scn);
}

/* The bundled events scenario carries the same double hit: pointer order changes it from tick 62. */
static void test_pointer_order_in_events_scenario(void **st)
{
    (void)st;
    dg_sim_scenario *scn = sim_load_bundled("events");
    dg_sim_inject ptr = only(DG_SIM_INJ_POINTER_ORDER);
    assert_int_equal(sim_first_diff(scn, NULL, &ptr, 200), 62);
    dg_sim_scenario_free(scn);
}

static void test_clock_seed_changes_state(void **st)
{
    (void)st;
    dg_sim_scenario *scn = sim_load_bundled("stress-1000"); /* placement drawn from the seed */
    dg_sim_inject inj = only(DG_SIM_INJ_CLOCK_SEED);
    dg_sim *sim = sim_make(scn, &inj);
    assert_int_not_equal(dg_sim_seed_used(sim), dg_sim_scenario_session(scn)->seed);
    dg_sim_free(sim);
    assert_int_equal(sim_first_diff(scn, NULL, &inj, 3), 0);
    dg_sim_scenario_free(scn);
}

/* Racy threads: thread 1 steps the lower half upward, thread 2 the upper half downward, both
 * writing the shared "last stepped" id and wake accumulator unsynchronised. Whatever the
 * interleaving, the last write comes from id n/2 or n/2+1, never from the highest id as in the
 * sequential step — so the LAST_STEPPED flag moves, every tick. Everything else that differs
 * (the wake sum, hence drag) varies from run to run and is not asserted. */
static void test_racy_threads_change_state(void **st)
{
    (void)st;
    dg_sim_scenario *scn = sim_load_bundled("dogfight-40");
    dg_sim_inject inj = only(DG_SIM_INJ_RACY_THREADS);
    dg_sim *a = sim_make(scn, NULL), *b = sim_make(scn, &inj);
    for (int t = 1; t <= 60; t++) {
        assert_int_equal(dg_sim_step(a, NULL), DG_OK);
        assert_int_equal(dg_sim_step(b, NULL), DG_OK);
        size_t na, nb;
        const dg_sim_entity *ea = dg_sim_entities(a, &na), *eb = dg_sim_entities(b, &nb);
        assert_int_equal(na, 40);
        assert_int_equal(nb, 40);
        uint32_t last_a = 0, last_b = 0;
        int count_b = 0;
        for (size_t i = 0; i < 40; i++) {
            if (ea[i].flags & DG_SIM_FLAG_LAST_STEPPED)
                last_a = ea[i].id;
            if (eb[i].flags & DG_SIM_FLAG_LAST_STEPPED)
                last_b = eb[i].id, count_b++;
        }
        assert_int_equal(last_a, 40);
        assert_int_equal(count_b, 1);
        assert_true(last_b == 20 || last_b == 21);
        assert_false(sim_states_equal(a, b));
    }
    dg_sim_free(a);
    dg_sim_free(b);
    dg_sim_scenario_free(scn);
}

static void test_inject_parse(void **st)
{
    (void)st;
    dg_sim_inject inj;
    dg_error err;
    dg_error_clear(&err);
    assert_int_equal(dg_sim_inject_parse("bitflip:tick=300,entity=7,field=pos.x,bit=3;fma,libm-trig;pointer-order;"
                                         "clock-seed;racy-threads", &inj, &err), DG_OK);
    assert_int_equal(inj.flags, DG_SIM_INJ_BITFLIP | DG_SIM_INJ_FMA | DG_SIM_INJ_LIBM_TRIG |
                                    DG_SIM_INJ_POINTER_ORDER | DG_SIM_INJ_CLOCK_SEED | DG_SIM_INJ_RACY_THREADS);
    assert_int_equal(inj.bitflip_tick, 300);
    assert_int_equal(inj.bitflip_entity, 7);
    assert_int_equal(inj.bitflip_field, DG_SIM_FIELD_POS_X);
    assert_int_equal(inj.bitflip_bit, 3);
    char buf[256];
    dg_sim_inject_format(&inj, buf, sizeof buf);
    assert_string_equal(buf, "bitflip:tick=300,entity=7,field=pos.x,bit=3;fma;libm-trig;pointer-order;clock-seed;"
                             "racy-threads");
    dg_sim_inject back;
    assert_int_equal(dg_sim_inject_parse(buf, &back, &err), DG_OK);
    assert_int_equal(back.flags, inj.flags);
    assert_int_equal(back.bitflip_tick, inj.bitflip_tick);
    assert_int_equal(back.bitflip_entity, inj.bitflip_entity);
    assert_int_equal(back.bitflip_field, inj.bitflip_field);
    assert_int_equal(back.bitflip_bit, inj.bitflip_bit);
    assert_int_equal(dg_sim_inject_parse("", &inj, &err), DG_OK);
    assert_int_equal(inj.flags, 0);
    assert_int_equal(dg_sim_inject_parse("none", &inj, &err), DG_OK);
    assert_int_equal(inj.flags, 0);
    dg_sim_inject_format(&inj, buf, sizeof buf);
    assert_string_equal(buf, "none");
    assert_int_equal(dg_sim_inject_parse("bitflip:field=flags,bit=15,entity=1,tick=0", &inj, &err), DG_OK);
    assert_int_equal(inj.bitflip_field, DG_SIM_FIELD_FLAGS);

    static const struct { const char *spec; const char *where; const char *needle; } bad[] = {
        {"fmx", "inject:1", "expected an injection"},
        {"fma;fma", "inject:5", "each injection once"},
        {"bitflip", "inject:8", "':' and the bitflip parameters"},
        {"bitflip:tick=1,entity=2,field=pos.w,bit=3", "inject:31", "a field"},
        {"bitflip:tick=1,entity=0,field=pos.x,bit=3", "inject:23", "an entity id"},
        {"bitflip:tick=1,entity=2,field=pos.x,bit=64", "inject:41", "a bit number"},
        {"bitflip:tick=1,entity=2,field=flags,bit=16", "inject:9", "a bit 0..15"},
        {"bitflip:tick=1,entity=2", "inject:24", "all of tick="},
        {"bitflip:tick=x,entity=2,field=pos.x,bit=1", "inject:14", "a tick number"},
        {"bitflip:tick=1,tick=2", "inject:16", "each bitflip parameter once"},
        {"fma:x", "inject:4", "only bitflip takes parameters"},
        {"fma;", "inject:5", "an injection after the separator"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        dg_error_clear(&err);
        assert_int_equal(dg_sim_inject_parse(bad[i].spec, &inj, &err), DG_E_SYNTAX);
        if (strcmp(err.where, bad[i].where) != 0 || !strstr(err.msg, bad[i].needle))
            print_error("spec '%s': where '%s' msg '%s'\n", bad[i].spec, err.where, err.msg);
        assert_string_equal(err.where, bad[i].where);
        assert_non_null(strstr(err.msg, bad[i].needle));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bitflip_exactly_at_T),     cmocka_unit_test(test_bitflip_is_one_bit),
        cmocka_unit_test(test_bitflip_missing_entity),   cmocka_unit_test(test_fma_changes_state),
        cmocka_unit_test(test_libm_trig_changes_state),  cmocka_unit_test(test_pointer_order_changes_kill_credit),
        cmocka_unit_test(test_pointer_order_in_events_scenario),
        cmocka_unit_test(test_clock_seed_changes_state), cmocka_unit_test(test_racy_threads_change_state),
        cmocka_unit_test(test_inject_parse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
