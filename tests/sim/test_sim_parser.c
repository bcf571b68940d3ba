/* tests/sim/test_sim_parser.c — the .scn parser: every kind of bad line gives its own error naming
 * file:line:column and what was expected; random bytes and random mutations of the bundled
 * scenarios never crash and always end in success or one clean syntax error. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "sim_test_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HEAD                                                                                          \
    "scenario t\n"                                                                                    \
    "session tick_rate=60 duration=10s seed=1 planet_radius=6371km\n"                                 \
    "type jet category=aircraft name=\"Jet\"\n"                                                       \
    "type mis category=missile name=\"Missile\"\n"                                                    \
    "type man category=character name=\"Man\"\n"                                                      \
    "faction a name=\"A\"\n"                                                                          \
    "faction b name=\"B\"\n"                                                                          \
    "entity 1 type=jet faction=a local=0,0,3000 callsign=\"One\" participant=1\n"                     \
    "entity 2 type=man faction=b local=10,0,0\n"
/* HEAD is 9 lines: a bad line appended to it is line 10 */

typedef struct bad_case {
    const char *text;
    const char *where;  /* "inline.scn:line:col" */
    const char *needle; /* part of the message */
} bad_case;

static const bad_case cases[] = {
    /* structure */
    {"session tick_rate=60\n", "inline.scn:1:1", "'scenario <name>' as the first statement"},
    {"scenario t\nscenario u\n", "inline.scn:2:1", "one 'scenario' line only"},
    {"scenario 'x'\n", "inline.scn:1:10", "the scenario name"},
    {HEAD "frobnicate 1\n", "inline.scn:10:1", "expected a statement keyword (scenario, session"},
    {HEAD "tick_rate=60\n", "inline.scn:10:1", "a statement keyword before any key=value"},
    {"scenario t\nentity 1 type=jet\n", "inline.scn:2:1", "session tick_rate= and duration= before 'entity'"},
    /* numbers, ranges, units */
    {"scenario t\nsession tick_rate=6x0\n", "inline.scn:2:19", "tick_rate (Hz) (an unsigned integer)"},
    {"scenario t\nsession tick_rate=5000\n", "inline.scn:2:19", "tick_rate (Hz) in 1..1000"},
    {"scenario t\nsession tick_rate=60 duration=0\n", "inline.scn:2:31", "a positive duration"},
    {"scenario t\nsession duration=10s\n", "inline.scn:2:18", "tick_rate= before duration="},
    {"scenario t\nsession tick_rate=60 duration=10parsecs\n", "inline.scn:2:33", "a time unit (s, min, h) for duration"},
    {"scenario t\nsession planet_radius=6371parsecs\n", "inline.scn:2:27", "a unit for planet_radius"},
    {"scenario t\nsession planet_radius=10m\n", "inline.scn:2:23", "planet_radius in 1000..3e+07"},
    {"scenario t\nsession seed=99999999999999999999\n", "inline.scn:2:14", "seed that fits in 64 bits"},
    {"scenario t\nsession keyframe_interval=5\n", "inline.scn:2:27", "keyframe_interval (ticks) in 15..3600"},
    {"scenario t\nsession origin=91,0\n", "inline.scn:2:16", "origin (lat,lon in degrees) in -90..90"},
    {"scenario t\nsession origin=1,2,3\n", "inline.scn:2:19", "end of origin (lat,lon in degrees) after 2 numbers"},
    {"scenario t\nsession colour=red\n", "inline.scn:2:9", "a session key=value (tick_rate, duration"},
    {"scenario t\nsession seed=1 seed=2\n", "inline.scn:2:16", "each key once per line"},
    {"scenario t\nsession seed=1\nsession seed=2\n", "inline.scn:3:9", "each session key once per scenario"},
    {"scenario t\nsession mission=plain\n", "inline.scn:2:17", "mission as a \"quoted string\""},
    /* strings */
    {HEAD "faction c name=\"unterminated\n", "inline.scn:10:16", "a closing '\"'"},
    {HEAD "faction c name=\"bad \\q escape\"\n", "inline.scn:10:21", "an escape"},
    {HEAD "faction c name=\"" "0123456789012345678901234567890123456789012345678901234567890123456789" "\"\n",
     "inline.scn:10:16", "name of at most 63 bytes"},
    {HEAD "faction c name=\"\xc3\x28\"\n", "inline.scn:10:16", "valid UTF-8 in name"},
    {HEAD "faction c\xff name=\"C\"\n", "inline.scn:10:10", "a keyword, a value or key=value"},
    {HEAD "faction c name=\"C\"x\n", "inline.scn:10:19", "whitespace after a value"},
    {HEAD "faction c name=\n", "inline.scn:10:16", "a value after '='"},
    /* declarations */
    {HEAD "type jet category=aircraft name=\"Again\"\n", "inline.scn:10:6", "a new type id"},
    {HEAD "faction a name=\"Again\"\n", "inline.scn:10:9", "a new faction id"},
    {HEAD "type t2 category=spaceship name=\"X\"\n", "inline.scn:10:18", "a category (aircraft, missile"},
    {HEAD "type t2 name=\"X\"\n", "inline.scn:10:17", "key 'category=' in a type statement, found end of line"},
    {HEAD "type t2 category=aircraft name=\"X\" mass=-5\n", "inline.scn:10:41", "mass in 1..1e+07"},
    {HEAD "type t2 category=aircraft name=\"X\" colour=red\n", "inline.scn:10:36", "one of the type keys"},
    {HEAD "type t2 category=aircraft projectile=guided name=\"X\"\n", "inline.scn:10:38", "projectile=none for a non-missile"},
    {HEAD "faction c d name=\"C\"\n", "inline.scn:10:11", "key=value (a faction statement has no more positional values)"},
    /* entities */
    {HEAD "entity 1 type=jet faction=a local=0,0,0\n", "inline.scn:10:8", "ids above 2"},
    {HEAD "entity 3 faction=a local=0,0,0\n", "inline.scn:10:31", "key 'type=' in a entity statement"},
    {HEAD "entity 3 type=f17 faction=a local=0,0,0\n", "inline.scn:10:15", "a declared entity type id"},
    {HEAD "entity 3 type=jet faction=green local=0,0,0\n", "inline.scn:10:27", "a declared faction id"},
    {HEAD "entity 3 type=jet faction=a\n", "inline.scn:10:28", "a placement: at=lat,lon,alt or local=e,n,u"},
    {HEAD "entity 3 type=jet faction=a local=0,0,0 at=1,2,3\n", "inline.scn:10:41", "only one of"},
    {HEAD "entity 3 type=jet faction=a at=95,0,0\n", "inline.scn:10:32", "at (lat,lon,alt) in -90..90"},
    {HEAD "entity 3 type=jet faction=a local=0,0\n", "inline.scn:10:35", "local (east,north,up) as 3 comma-separated numbers"},
    {HEAD "entity 3 type=jet faction=a local=0,0,0 callsign=\"X\"\n", "inline.scn:10:41", "callsign= and participant= together"},
    {HEAD "entity 3 type=jet faction=a local=0,0,0 callsign=\"X\" participant=1\n", "inline.scn:10:66", "a participant id not used before"},
    {HEAD "entity 3 type=jet faction=a local=0,0,0 object=\"o\"\nentity 4 type=jet faction=a local=0,0,0 object=\"o\"\n",
     "inline.scn:11:48", "a mission-object id not used before"},
    {HEAD "entity 3 type=jet faction=a local=0,0,0 spawn=20s\n", "inline.scn:10:47", "before the end of the session (tick < 600)"},
    {HEAD "entity 3 type=jet faction=a local=0,0,0 spawn=5s despawn=2s\n", "inline.scn:10:58", "a despawn tick after the spawn tick"},
    {HEAD "entity 3 type=jet faction=a local=0,0,0 spawn=10..5\n", "inline.scn:10:47", "a tick range a..b with a <= b"},
    {HEAD "entity 3 type=jet faction=a local=0,0,0 spawn=3fortnights\n", "inline.scn:10:48", "a time unit (ms, s, min, h) for spawn"},
    {HEAD "entity 3..5 type=jet faction=a local=0,0,0\n", "inline.scn:10:8", "a single entity id"},
    {HEAD "group 3 type=jet faction=a area=0,0,10 alt=0..1\n", "inline.scn:10:7", "an id range lo..hi"},
    {HEAD "group 3..5 type=jet faction=a area=0,0,10\n", "inline.scn:10:42", "key 'alt=' in a placement with area="},
    {HEAD "group 3..5 type=jet faction=a,zz area=0,0,10 alt=0..1\n", "inline.scn:10:31", "a declared faction id"},
    {HEAD "group 5..3 type=jet faction=a area=0,0,10 alt=0..1\n", "inline.scn:10:7", "an id range lo..hi with lo <= hi"},
    {HEAD "entity 3 type=jet faction=a local=0,0,0 health=0\n", "inline.scn:10:48", "health (0..1] in 0.0001..1"},
    /* timeline */
    {HEAD "pilot 99 mode=cruise\n", "inline.scn:10:7", "ids of entities declared above"},
    {HEAD "pilot 1 mode=loop\n", "inline.scn:10:14", "a pilot mode (cruise, weave"},
    {HEAD "pilot 2 mode=cruise\n", "inline.scn:10:14", "a flight mode only for aircraft entities"},
    {HEAD "pilot 1 mode=walk\n", "inline.scn:10:14", "walk/drive/hold only for character or ground"},
    {HEAD "pilot 1 mode=weave target=2\n", "inline.scn:10:20", "target= only with mode=chase"},
    {HEAD "input 2 ticks=0..10 roll=1\n", "inline.scn:10:7", "aircraft entities (pilot inputs fly aircraft)"},
    {HEAD "input 1 ticks=0..10\n", "inline.scn:10:20", "at least one of throttle=, pitch=, roll=, yaw="},
    {HEAD "input 1 ticks=0..10 roll=2\n", "inline.scn:10:26", "roll in -1..1"},
    {HEAD "input 1 ticks=0..10 every=5 roll=1\n", "inline.scn:10:27", "a repeat period longer than the ticks= window"},
    {HEAD "input 1 ticks=0..10 until=20 roll=1\n", "inline.scn:10:21", "until= only with every="},
    {HEAD "despawn 99 at=1s\n", "inline.scn:10:9", "the id of an entity declared above"},
    {HEAD "despawn 1 at=100s\n", "inline.scn:10:14", "at before the end of the session"},
    {HEAD "despawn 1 at=1s every=2s\n", "inline.scn:10:17", "no every= on this statement"},
    {HEAD "fire 1 at=1s weapon=jet target=2\n", "inline.scn:10:21", "a missile type for weapon="},
    {HEAD "fire 1 at=1s weapon=mis target=1\n", "inline.scn:10:32", "a target other than the shooter"},
    {HEAD "fire 1 at=1s weapon=mis target=7\n", "inline.scn:10:32", "the id of an entity declared above"},
    {HEAD "salvo at=1s weapon=mis from=a to=c\n", "inline.scn:10:34", "a declared faction id"},
    {HEAD "salvo at=1s weapon=mis from=a to=b count=65\n", "inline.scn:10:42", "count in 1..64"},
    {HEAD "wave at=1s type=mis faction=a count=1 lifetime=1s area=0,0,1 alt=0..0\n", "inline.scn:10:17", "a non-missile type"},
    {HEAD "wave at=1s type=jet faction=a count=1 area=0,0,1 alt=0..0\n", "inline.scn:10:58", "key 'lifetime=' in a wave statement"},
    {HEAD "chat at=1s from=5 text=\"hi\"\n", "inline.scn:10:17", "0 or a participant id from the roster above"},
    {HEAD "chat at=1s from=1\n", "inline.scn:10:18", "key 'text=' in a chat statement"},
    {HEAD "chat at=1s from=1 text=hi\n", "inline.scn:10:24", "text as a \"quoted string\""},
    {HEAD "admin at=1s actor=0 target=2 action=nuke\n", "inline.scn:10:37", "an admin action (kick, ban"},
    {HEAD "alert at=1s faction=a level=300\n", "inline.scn:10:29", "level in 0..255"},
    {HEAD "alert at=5s every=2s until=1s faction=a level=1\n", "inline.scn:10:28", "until >= at"},
    /* end of file */
    {"scenario t\nsession tick_rate=60 duration=10s planet_radius=1000km\ntype a category=static name=\"A\"\n",
     "inline.scn:4:1", "session key 'seed=' somewhere in the file"},
    {"scenario t\nsession tick_rate=60 duration=10s seed=1 planet_radius=1000km\n", "inline.scn:3:1",
     "at least one 'type' statement"},
    {"", "inline.scn:1:1", "'scenario <name>' as the first statement"},
};

/* Returns 1 when the text fails exactly as described; prints what happened otherwise. */
static int error_matches(const char *text, size_t len, const char *where, const char *needle)
{
    dg_error err;
    dg_error_clear(&err);
    dg_sim_scenario *scn = (dg_sim_scenario *)1;
    dg_status st = dg_sim_scenario_parse_mem(text, len, "inline.scn", &scn, &err);
    if (st != DG_E_SYNTAX || strcmp(err.where, where) != 0 || !strstr(err.msg, needle) ||
        strncmp(err.msg, "expected ", 9) != 0)
    {
        print_error("text:\n%s\n-> status %d where '%s' msg '%s'\n   wanted where '%s' needle '%s'\n", text, st,
                    err.where, err.msg, where, needle);
        return 0;
    }
    return scn == NULL && strstr(err.msg, ", found ") != NULL;
}

static void expect_error(const char *text, size_t len, const char *where, const char *needle)
{
    assert_true(error_matches(text, len, where, needle));
}

static void test_every_bad_line(void **st)
{
    (void)st;
    size_t bad = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        bad += !error_matches(cases[i].text, strlen(cases[i].text), cases[i].where, cases[i].needle);
    assert_int_equal(bad, 0);
}

static void test_nul_and_long_lines(void **st)
{
    (void)st;
    static const char nul[] = "scenario t\nsession se\0ed=1\n";
    expect_error(nul, sizeof nul - 1, "inline.scn:2:11", "text (no NUL bytes)");
    size_t n = 5000;
    char *big = malloc(n + 32);
    assert_non_null(big);
    memcpy(big, "scenario t\n# ", 13);
    memset(big + 13, 'x', n);
    big[13 + n] = '\n';
    expect_error(big, 14 + n, "inline.scn:2:4097", "a line of at most 4096 bytes");
    free(big);
}

/* Hostile sizes are refused with a clean error instead of quadratic work. */
static void test_limits(void **st)
{
    (void)st;
    static const char many[] =
        HEAD "group 3..70000 type=man faction=a area=0,0,10 alt=0..0 callsign=\"M%d\" participant=10\n";
    expect_error(many, strlen(many), "inline.scn:10:71", "at most 65536 roster entries");
    static const char overlap[] =
        HEAD "group 3..5 type=man faction=a area=0,0,10 alt=0..0 callsign=\"M%d\" participant=0x10\n"
             "group 6..9 type=man faction=a area=0,0,10 alt=0..0 callsign=\"N%d\" participant=14\n";
    expect_error(overlap, strlen(overlap), "inline.scn:11:79", "a participant id not used before (16 is taken by entity 3)");
    /* 300 pilot lines over 60,000 entities: more than 2^24 selections */
    size_t cap = 64 * 1024, n = 0;
    char *big = malloc(cap);
    assert_non_null(big);
    n += (size_t)snprintf(big + n, cap - n, "%sgroup 3..60002 type=jet faction=a area=0,0,10 alt=0..0\n", HEAD);
    for (int i = 0; i < 300; i++)
        n += (size_t)snprintf(big + n, cap - n, "pilot 3..60002 mode=cruise\n");
    char where[64];
    snprintf(where, sizeof where, "inline.scn:%d:7", 10 + 280); /* the 280th pilot line crosses 2^24 */
    expect_error(big, n, where, "at most 16777216 pilot/input entity selections in total");
    free(big);
}

static void test_head_is_valid_and_tables(void **st)
{
    (void)st;
    dg_sim_scenario *scn = sim_parse_text(HEAD "entity 3 type=man faction=a local=0,0,0 object=\"hq\"\n"
                                               "entity 7 type=jet faction=b at=10,20,3000 callsign=\"Zed\" participant=0x10\n");
    const dg_sim_session *ss = dg_sim_scenario_session(scn);
    assert_string_equal(ss->name, "t");
    assert_int_equal(ss->tick_rate_hz, 60);
    assert_int_equal(ss->duration_ticks, 600);
    assert_true(ss->planet_radius_m == 6371000.0);
    assert_int_equal(ss->keyframe_interval, 120);
    assert_true(ss->gravity_mps2 == 9.81);
    size_t n;
    const dg_sim_type *ty = dg_sim_scenario_types(scn, &n);
    assert_int_equal(n, 3);
    assert_string_equal(ty[1].id, "mis");
    assert_int_equal(ty[1].category, DG_SIM_CAT_MISSILE);
    assert_int_equal(ty[1].projectile, DG_SIM_PROJ_GUIDED);
    assert_int_equal(ty[2].index, 2);
    const dg_sim_faction *f = dg_sim_scenario_factions(scn, &n);
    assert_int_equal(n, 2);
    assert_string_equal(f[1].name, "B");
    const dg_sim_roster_entry *r = dg_sim_scenario_roster(scn, &n);
    assert_int_equal(n, 2);
    assert_int_equal(r[0].participant_id, 1);
    assert_string_equal(r[0].callsign, "One");
    assert_int_equal(r[1].participant_id, 16);
    assert_int_equal(r[1].entity_id, 7);
    const dg_sim_object *o = dg_sim_scenario_objects(scn, &n);
    assert_int_equal(n, 1);
    assert_string_equal(o[0].id, "hq");
    assert_int_equal(o[0].entity_id, 3);
    dg_sim_scenario_free(scn);
}

static void test_missing_file(void **st)
{
    (void)st;
    dg_error err;
    dg_error_clear(&err);
    dg_sim_scenario *scn = NULL;
    assert_int_equal(dg_sim_scenario_parse_file("/nonexistent/dir/x.scn", &scn, &err), DG_E_IO);
    assert_null(scn);
    assert_string_equal(err.where, "/nonexistent/dir/x.scn");
}

/* ---- fuzz-style robustness (deterministic seeds, so never flaky) ---- */

static uint64_t rng_state;
static uint64_t rnd(void)
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Everything the codec will quantize must be a finite number, and health stays in 0..1. */
static int state_is_finite(const dg_sim *sim)
{
    size_t n;
    const dg_sim_entity *e = dg_sim_entities(sim, &n);
    for (size_t i = 0; i < n; i++) {
        for (int k = 0; k < 3; k++)
            if (!isfinite(e[i].pos[k]) || !isfinite(e[i].vel[k]))
                return 0;
        for (int k = 0; k < 4; k++)
            if (!isfinite(e[i].rot[k]))
                return 0;
        if (!(e[i].health >= 0.0 && e[i].health <= 1.0))
            return 0;
    }
    return 1;
}

static int clean_outcome(const char *buf, size_t len, size_t *ok_count)
{
    dg_error err;
    dg_error_clear(&err);
    dg_sim_scenario *scn = NULL;
    dg_status st = dg_sim_scenario_parse_mem(buf, len, "fuzz.scn", &scn, &err);
    if (st == DG_OK) {
        assert_non_null(scn);
        (*ok_count)++;
        size_t nt;
        dg_sim_scenario_types(scn, &nt);
        /* a scenario that parses must also run: create it and take a few steps */
        size_t nr;
        dg_sim_scenario_roster(scn, &nr);
        if (nr < 3000) {
            dg_sim *sim = NULL;
            assert_int_equal(dg_sim_new(scn, NULL, &sim, &err), DG_OK);
            for (int i = 0; i < 20 && !dg_sim_done(sim); i++) {
                assert_int_equal(dg_sim_step(sim, &err), DG_OK);
                assert_true(state_is_finite(sim));
            }
            dg_sim_free(sim);
        }
        dg_sim_scenario_free(scn);
        return 1;
    }
    assert_null(scn);
    unsigned line, col;
    char tail;
    if (st != DG_E_SYNTAX || sscanf(err.where, "fuzz.scn:%u:%u%c", &line, &col, &tail) != 2 || line == 0 ||
        col == 0 || strncmp(err.msg, "expected ", 9) != 0 || !strstr(err.msg, ", found ")) {
        print_error("unclean outcome: status %d where '%s' msg '%s'\n", st, err.where, err.msg);
        return 0;
    }
    return 1;
}

static void test_fuzz_random_bytes(void **st)
{
    (void)st;
    rng_state = 12345;
    char buf[600];
    size_t ok = 0;
    for (int it = 0; it < 4000; it++) {
        size_t len = rnd() % sizeof buf;
        int printable = it % 2;
        for (size_t i = 0; i < len; i++) {
            unsigned v = (unsigned)rnd();
            buf[i] = printable ? (char)(" \n=\".#,0123456789abcdefghijklmnopqrstuvwxyz_-"[v % 45]) : (char)v;
        }
        assert_true(clean_outcome(buf, len, &ok));
    }
}

static const char *const bundled[] = {"dogfight-40", "walkers-20", "churn",  "static-500",
                                      "stress-1000", "long-1h",    "events", "mars"};

static char *read_bundled(const char *name, size_t *len)
{
    const char *root = getenv("DETGATE_SOURCE_DIR");
    char path[1024];
    snprintf(path, sizeof path, "%s/corpus/scenarios/%s.scn", root ? root : ".", name);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    char *b = malloc(1 << 16);
    assert_non_null(b);
    *len = fread(b, 1, 1 << 16, f);
    fclose(f);
    return b;
}

static void test_fuzz_mutated_scenarios(void **st)
{
    (void)st;
    rng_state = 777;
    static const char *const tokens[] = {"..", "=", "\"", "#", ",", "-1", "99999999999999999999", "1e308",
                                         "0x", "end", "s", "\n", " ", "nan", "inf", "%d", "\\", "\xff", "km"};
    size_t ok = 0, total = 0;
    for (size_t s = 0; s < sizeof bundled / sizeof bundled[0]; s++) {
        size_t len;
        char *orig = read_bundled(bundled[s], &len);
        assert_true(clean_outcome(orig, len, &ok)); /* the original parses */
        char *buf = malloc(len + 256);
        assert_non_null(buf);
        for (int it = 0; it < 250; it++) {
            size_t n = len;
            memcpy(buf, orig, len);
            int edits = 1 + (int)(rnd() % 3);
            for (int e = 0; e < edits && n > 0; e++) {
                size_t pos = rnd() % n;
                switch (rnd() % 5) {
                case 0: /* flip a bit */
                    buf[pos] = (char)(buf[pos] ^ (1u << (rnd() % 8)));
                    break;
                case 1: { /* delete a run */
                    size_t k = 1 + rnd() % 8;
                    if (pos + k > n)
                        k = n - pos;
                    memmove(buf + pos, buf + pos + k, n - pos - k);
                    n -= k;
                    break;
                }
                case 2: { /* insert a token */
                    const char *t = tokens[rnd() % (sizeof tokens / sizeof tokens[0])];
                    size_t k = strlen(t);
                    if (n + k <= len + 200) {
                        memmove(buf + pos + k, buf + pos, n - pos);
                        memcpy(buf + pos, t, k);
                        n += k;
                    }
                    break;
                }
                case 3: /* replace a digit with another */
                    if (buf[pos] >= '0' && buf[pos] <= '9')
                        buf[pos] = (char)('0' + rnd() % 10);
                    else
                        buf[pos] = (char)('0' + rnd() % 10);
                    break;
                default: /* truncate */
                    n = pos;
                    break;
                }
            }
            assert_true(clean_outcome(buf, n, &ok));
            total++;
        }
        free(buf);
        free(orig);
    }
    print_message("mutations: %zu parsed (and ran) of %zu\n", ok, total + 8);
    assert_true(ok > 8); /* some mutations stay valid and are exercised through the sim */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_bad_line),         cmocka_unit_test(test_nul_and_long_lines),
        cmocka_unit_test(test_head_is_valid_and_tables), cmocka_unit_test(test_missing_file),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_fuzz_random_bytes),      cmocka_unit_test(test_fuzz_mutated_scenarios),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
