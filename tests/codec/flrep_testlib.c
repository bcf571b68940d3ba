/* tests/codec/flrep_testlib.c — see flrep_testlib.h. */
#include "flrep_testlib.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

uint64_t tl_next(tl_rng *r)
{
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

double tl_unit(tl_rng *r) { return (double)(tl_next(r) >> 11) * (1.0 / 9007199254740992.0); }

static const dg_flrep_type k_types[] = {
    {0, {"f16c", 4}, {"F-16C", 5}, 1, 0},
    {1, {"aim120", 6}, {"AIM-120", 7}, 2, 1},
    {2, {"tank", 4}, {"Tank", 4}, 3, 0},
    {7, {"hangar", 6}, {"Hangar", 6}, 4, 0},
};
static const dg_flrep_faction k_factions[] = {
    {0, {"blue", 4}, {"Blue", 4}}, {1, {"red", 3}, {"Red", 3}}, {5, {"neutral", 7}, {"Neutral", 7}}};
static const dg_flrep_participant k_roster[] = {{100, 1, {"Maverick", 8}}, {101, 2, {"Goose", 5}}};
static const dg_flrep_mission_object k_objects[] = {{{"target-a", 8}, 3}};

dg_flrep_header tl_header(uint32_t tick_rate, uint32_t keyframe)
{
    dg_flrep_header h = {0};
    h.engine_version = dg_flrep_cstr("detgate-test 1.0");
    h.tick_rate_hz = tick_rate ? tick_rate : 60;
    h.planet_radius_m = 6371000.0;
    h.start_unix_seconds = 1764460800;
    h.mission_id = dg_flrep_cstr("test-mission");
    h.session_flags = 1;
    h.keyframe_interval_ticks = keyframe;
    h.types = k_types;
    h.type_count = 4;
    h.factions = k_factions;
    h.faction_count = 3;
    h.participants = k_roster;
    h.participant_count = 2;
    h.mission_objects = k_objects;
    h.mission_object_count = 1;
    return h;
}

typedef struct tl_body {
    dg_entity_in e;
    double turn, climb;   /* rad/s heading change, m/s^2 vertical */
    bool alive;
} tl_body;

static void init_body(tl_rng *r, tl_body *b, uint32_t id)
{
    static const uint16_t types[] = {0, 1, 2, 7};
    static const uint16_t factions[] = {0, 1, 5};
    memset(b, 0, sizeof *b);
    b->alive = true;
    b->e.id = id;
    b->e.type_index = types[tl_next(r) % 4];
    b->e.faction_index = factions[tl_next(r) % 3];
    double speed = 150 + 150 * tl_unit(r), hdg = 6.283185307 * tl_unit(r);
    b->e.pos[0] = (tl_unit(r) - 0.5) * 200000;
    b->e.pos[1] = (tl_unit(r) - 0.5) * 200000;
    b->e.pos[2] = 6371000.0 + 1000 + 9000 * tl_unit(r);
    b->e.vel[0] = speed * cos(hdg);
    b->e.vel[1] = speed * sin(hdg);
    b->e.vel[2] = 0;
    b->e.rot[0] = cos(hdg / 2);
    b->e.rot[3] = sin(hdg / 2);
    b->e.health = 1.0;
    b->turn = (tl_unit(r) - 0.5) * 0.3;
    b->climb = (tl_unit(r) - 0.5) * 4;
    if (b->e.type_index == 7) { /* static object */
        b->e.vel[0] = b->e.vel[1] = 0;
        b->turn = b->climb = 0;
    }
}

static void move_body(tl_rng *r, tl_body *b, double dt)
{
    double c = cos(b->turn * dt), s = sin(b->turn * dt);
    double vx = b->e.vel[0] * c - b->e.vel[1] * s, vy = b->e.vel[0] * s + b->e.vel[1] * c;
    b->e.vel[0] = vx;
    b->e.vel[1] = vy;
    b->e.vel[2] += b->climb * dt;
    for (int i = 0; i < 3; i++)
        b->e.pos[i] += b->e.vel[i] * dt;
    /* rotate the attitude quaternion about z by turn*dt, plus a slow roll */
    double half = b->turn * dt / 2, w = b->e.rot[0], x = b->e.rot[1], y = b->e.rot[2], z = b->e.rot[3];
    double qw = cos(half), qz = sin(half);
    b->e.rot[0] = qw * w - qz * z;
    b->e.rot[1] = qw * x - qz * y;
    b->e.rot[2] = qw * y + qz * x;
    b->e.rot[3] = qw * z + qz * w;
    if (tl_unit(r) < 0.01)
        b->turn = (tl_unit(r) - 0.5) * 0.3;
    if (tl_unit(r) < 0.002)
        b->e.health = tl_unit(r);
    if (tl_unit(r) < 0.002)
        b->e.flags ^= (uint16_t)(1u << (tl_next(r) % 16));
}

static char *dup_text(const char *s, uint16_t *len)
{
    size_t n = strlen(s);
    char *d = malloc(n + 1);
    memcpy(d, s, n + 1);
    *len = (uint16_t)n;
    return d;
}

static size_t make_events(tl_rng *r, uint64_t tick, const tl_body *bodies, size_t nb, dg_event *ev)
{
    size_t n = 0;
    size_t count = tl_next(r) % 4 == 0 ? 1 + tl_next(r) % 3 : 0;
    static const char *lines[] = {"fox three", "splash one, \xC3\xA9l\xC3\xA8ve", "RTB", ""};
    for (size_t i = 0; i < count; i++) {
        dg_event *e = &ev[n++];
        memset(e, 0, sizeof *e);
        e->kind = (uint8_t)(1 + tl_next(r) % 5);
        e->tick = tick;
        e->a = nb ? bodies[tl_next(r) % nb].e.id : 0;
        e->b = (uint32_t)(tl_next(r) % 50);
        e->c = (uint16_t)(tl_next(r) % 4);
        e->d = (uint16_t)(tl_next(r) % 6);
        /* only the fields FORMAT-flrep.md §7 stores for the kind */
        if (e->kind == DG_EV_KILL || e->kind == DG_EV_CHAT || e->kind == DG_EV_ADMIN)
            e->d = 0;
        if (e->kind == DG_EV_SPAWN || e->kind == DG_EV_CHAT || e->kind == DG_EV_ALERT)
            e->b = 0;
        if (e->kind == DG_EV_ALERT)
            e->a = 0;
        if (e->kind == DG_EV_CHAT || e->kind == DG_EV_ADMIN)
            e->text = dup_text(lines[tl_next(r) % 4], &e->text_len);
    }
    return n;
}

void tl_record(const char *path, const tl_params *p, tl_session *out)
{
    tl_rng r = {p->seed};
    uint32_t rate = p->tick_rate ? p->tick_rate : 60;
    dg_flrep_header h = tl_header(rate, p->keyframe);
    dg_flrep_writer_opts o = {.max_file_mb = p->max_file_mb, .max_files = 1000};
    dg_flrep_writer *w = NULL;
    dg_error err;
    dg_error_clear(&err);
    assert_int_equal(dg_flrep_writer_open(&w, path, &h, &o, &err), DG_OK);
    if (p->on_chunk)
        dg_flrep_writer_on_chunk(w, p->on_chunk, p->on_chunk_user);
    size_t cap = p->entities * 2 + 16, nb = 0;
    tl_body *bodies = calloc(cap, sizeof *bodies);
    uint32_t next_id = 1;
    for (size_t i = 0; i < p->entities; i++) {
        next_id += 1 + (uint32_t)(tl_next(&r) % 3);
        init_body(&r, &bodies[nb++], next_id);
    }
    dg_entity_in *in = calloc(cap, sizeof *in);
    out->ticks = calloc(p->ticks, sizeof *out->ticks);
    out->count = p->ticks;
    uint64_t tick = 1000;
    for (size_t t = 0; t < p->ticks; t++) {
        tick += p->tick_step ? p->tick_step : 1;
        for (size_t i = 0; i < nb; i++)
            move_body(&r, &bodies[i], 1.0 / rate);
        if (p->churn && tl_unit(&r) < 0.05 && nb > 0) { /* despawn one */
            size_t k = tl_next(&r) % nb;
            memmove(&bodies[k], &bodies[k + 1], (nb - k - 1) * sizeof *bodies);
            nb--;
        }
        if (p->churn && tl_unit(&r) < 0.05 && nb < cap) { /* spawn one (ids keep increasing) */
            next_id += 1 + (uint32_t)(tl_next(&r) % 5);
            init_body(&r, &bodies[nb++], next_id);
        }
        for (size_t i = 0; i < nb; i++)
            in[i] = bodies[i].e;
        /* hand them over in reverse order: the writer must sort */
        for (size_t i = 0; i < nb / 2; i++) {
            dg_entity_in tmp = in[i];
            in[i] = in[nb - 1 - i];
            in[nb - 1 - i] = tmp;
        }
        tl_tick *tt = &out->ticks[t];
        tt->tick = tick;
        tt->ents = calloc(nb + 1, sizeof *tt->ents);
        tt->n = nb;
        tt->events = calloc(4, sizeof *tt->events);
        tt->nev = p->events ? make_events(&r, tick, bodies, nb, tt->events) : 0;
        dg_status st = dg_flrep_writer_tick(w, tick, in, nb, tt->events, tt->nev, tt->ents, &err);
        if (st != DG_OK)
            fail_msg("writer_tick: %s / %s", err.where, err.msg);
    }
    if (dg_flrep_writer_close(w, &err) != DG_OK)
        fail_msg("writer_close: %s / %s", err.where, err.msg);
    free(bodies);
    free(in);
}

void tl_session_free(tl_session *s)
{
    for (size_t i = 0; i < s->count; i++) {
        for (size_t k = 0; k < s->ticks[i].nev; k++)
            free((void *)s->ticks[i].events[k].text);
        free(s->ticks[i].ents);
        free(s->ticks[i].events);
    }
    free(s->ticks);
    memset(s, 0, sizeof *s);
}

void tl_assert_tick_equal(const tl_tick *want, const dg_flrep_tick *got)
{
    assert_int_equal(got->tick, want->tick);
    assert_int_equal(got->ent_count, want->n);
    for (size_t i = 0; i < want->n; i++) {
        const dg_qentity *a = &want->ents[i], *b = &got->ents[i];
        assert_int_equal(b->id, a->id);
        assert_int_equal(b->type_index, a->type_index);
        assert_int_equal(b->faction_index, a->faction_index);
        for (int k = 0; k < 3; k++) {
            assert_int_equal(b->pos[k], a->pos[k]);
            assert_int_equal(b->vel[k], a->vel[k]);
            assert_int_equal(b->rot[k], a->rot[k]);
        }
        assert_int_equal(b->rot_largest, a->rot_largest);
        assert_int_equal(b->health, a->health);
        assert_int_equal(b->flags, a->flags);
    }
    assert_int_equal(got->event_count, want->nev);
    for (size_t i = 0; i < want->nev; i++) {
        const dg_event *a = &want->events[i], *b = &got->events[i];
        assert_int_equal(b->kind, a->kind);
        assert_int_equal(b->tick, a->tick);
        assert_int_equal(b->a, a->a);
        assert_int_equal(b->b, a->b);
        assert_int_equal(b->c, a->c);
        assert_int_equal(b->d, a->d);
        assert_int_equal(b->text_len, a->text_len);
        if (a->text_len)
            assert_memory_equal(b->text, a->text, a->text_len);
    }
}

void tl_seek_and_check(dg_flrep_reader *r, const tl_session *s, size_t i)
{
    dg_error err;
    dg_error_clear(&err);
    if (dg_flrep_reader_seek(r, s->ticks[i].tick, &err) != DG_OK)
        fail_msg("seek %llu: %s: %s", (unsigned long long)s->ticks[i].tick, err.where, err.msg);
    dg_flrep_tick t;
    assert_int_equal(dg_flrep_reader_next(r, &t, &err), 1);
    tl_assert_tick_equal(&s->ticks[i], &t);
}

void tl_record_mem(const tl_params *p, tl_recording *out)
{
    memset(out, 0, sizeof *out);
    char path[256];
    tl_temp_path(path, sizeof path, ".flrep");
    tl_record(path, p, &out->s);
    out->buf = tl_slurp(path, &out->len);
    remove(path);
    dg_flrep_reader *r = NULL;
    dg_error err;
    dg_error_clear(&err);
    if (dg_flrep_reader_open_mem(&r, out->buf, out->len, NULL, &err) != DG_OK)
        fail_msg("open: %s: %s", err.where, err.msg);
    const dg_flrep_file_info *info = dg_flrep_reader_info(r);
    out->data_start = info->data_start;
    out->nchunks = info->chunk_count;
    assert_true(out->nchunks <= sizeof out->chunks / sizeof out->chunks[0]);
    memcpy(out->chunks, info->chunks, out->nchunks * sizeof *out->chunks);
    dg_flrep_reader_close(r);
}

void tl_recording_free(tl_recording *rec)
{
    tl_session_free(&rec->s);
    free(rec->buf);
    memset(rec, 0, sizeof *rec);
}

uint8_t *tl_slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *b = malloc((size_t)n + 1);
    assert_int_equal(fread(b, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *len = (size_t)n;
    return b;
}

void tl_write_file(const char *path, const uint8_t *buf, size_t len)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(buf, 1, len, f), len);
    fclose(f);
}

static char tl_dir[512];

static void tl_remove_dir(void)
{
    rmdir(tl_dir);   /* empty when every test removed its files; a failed test's files stay for a look */
}

/* Paths live in a directory of this process's own (mkdtemp), so a file left by an earlier run that
 * happened to have the same pid (a rotation test's .001.flrep, say) can never be taken for ours. */
void tl_temp_path(char *buf, size_t cap, const char *suffix)
{
    static unsigned counter;
    if (!tl_dir[0]) {
        const char *dir = getenv("TMPDIR");
        snprintf(tl_dir, sizeof tl_dir, "%s/detgate-test-XXXXXX", dir && *dir ? dir : "/tmp");
        assert_non_null(mkdtemp(tl_dir));
        atexit(tl_remove_dir);
    }
    snprintf(buf, cap, "%s/%u%s", tl_dir, counter++, suffix);
}
