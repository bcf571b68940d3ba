/* sim_stub/sim.c — the world: spawns, scripted timeline, flight model, missiles, walkers, damage.
 *
 * Deterministic by construction: entities live in a dense array sorted by id and are processed
 * in that order; the only randomness is splitmix64 seeded from the scenario (per entity, seeded by
 * seed and id, so one entity's draws never depend on another's); arithmetic is + - * / sqrt and
 * the module's own trig; all memory handed out is zeroed. Each dg_sim_inject switch replaces one of
 * those guarantees with the common mistake it guards against. */
#include "sim_internal.h"
#include "dmath.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define POOL_CHUNK 256

typedef struct rec rec;
struct rec {
    uint32_t id;
    uint16_t type;
    uint8_t cat;
    uint8_t dead;
    uint8_t moving;          /* walker/driver: in a moving segment */
    uint8_t pilot_changed;
    uint16_t kills;
    const scn_type *ty;
    uint64_t born;           /* spawn tick: not stepped on that tick */
    uint64_t despawn_at;     /* DG_SIM_TICK_NONE when never */
    uint64_t rng;            /* this entity's own PRNG state */
    double prev_pos[3];
    double home[3];          /* spawn position (walkers stay near it) */
    double base_up;          /* ground vehicles: height of the ground plane above the frame */
    double throttle;
    /* pilot */
    const uint32_t *pilots;  /* scenario pilot indices that select this entity */
    const uint32_t *inputs;  /* scenario input indices that select this entity */
    uint16_t npilots, ninputs;
    int32_t pilot_idx;       /* effective pilot line, -1 = default */
    const scn_pilot *fresh_pilot; /* fresh entities (waves): a default pilot */
    double hdg_dir[3];       /* desired horizontal direction (world) */
    double alt_target, spd_target;
    uint64_t next_decision;
    uint32_t chase_target;
    /* walker / driver */
    double heading, move_speed, turn_rate;
    uint64_t seg_end, sub_end;
    /* missile */
    uint32_t shooter, target;
    uint64_t age;
    rec *next_free;
};

typedef struct hit {
    rec *missile;
    rec *victim;
} hit;

typedef struct pool_chunk {
    struct pool_chunk *next;
    rec recs[POOL_CHUNK];
} pool_chunk;

struct dg_sim {
    const dg_sim_scenario *scn;
    dg_sim_inject inj;
    uint64_t tick;
    uint64_t seed;
    uint64_t rng;
    double dt;
    double (*sin_fn)(double);
    double (*cos_fn)(double);
    double (*atan2_fn)(double, double);
    /* dense state sorted by id */
    dg_sim_entity *ents;
    rec **recs;
    size_t n, cap;
    /* record pool (LIFO free list, like an engine's object pool) */
    pool_chunk *chunks;
    size_t chunk_used;
    rec *free_list;
    /* events of the current tick */
    dg_sim_event *evs;
    size_t nev, cap_ev;
    /* declared entities: spawn ticks and their order */
    uint64_t *spawn_tick;
    size_t *spawn_order;
    size_t spawn_next;
    uint32_t *sched;          /* flat per-entity pilot/input index lists */
    size_t *sched_pil, *sched_inp; /* offsets into sched per declared entity */
    uint16_t *cnt_pil, *cnt_inp;
    uint32_t next_fresh_id;
    hit *hits;
    size_t nhits, cap_hits;
    uint32_t *cand;           /* salvo candidates */
    size_t cap_cand;
    double frame_o[3], frame_e[3], frame_n[3], frame_u[3];
    /* the step's shared accumulators (the racy-threads injection races on them) */
    double wake;
    double wake_next;
    uint32_t last_stepped;
    int bitflip_done;
    int oom;
};

/* ---------- PRNG ---------- */

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static double rand01(uint64_t *s) { return (double)(splitmix(s) >> 11) * (1.0 / 9007199254740992.0); }

static double rand_range(uint64_t *s, double lo, double hi) { return lo + (hi - lo) * rand01(s); }

static uint64_t entity_seed(uint64_t seed, uint32_t id)
{
    uint64_t s = seed ^ ((uint64_t)id * 0xD1B54A32D192ED03ull);
    splitmix(&s);
    return s;
}

/* ---------- integrator (the FMA injection lives here) ---------- */

static void integrate(const dg_sim *sim, double v[3], double p[3], const double a[3])
{
    const double dt = sim->dt;
    if (sim->inj.flags & DG_SIM_INJ_FMA) {
        for (int i = 0; i < 3; i++) {
            v[i] = fma(a[i], dt, v[i]);
            p[i] = fma(v[i], dt, p[i]);
        }
        return;
    }
    for (int i = 0; i < 3; i++) {
        v[i] = v[i] + a[i] * dt;
        p[i] = p[i] + v[i] * dt;
    }
}

static void advance_position(const dg_sim *sim, const double v[3], double p[3])
{
    const double dt = sim->dt;
    for (int i = 0; i < 3; i++)
        p[i] = (sim->inj.flags & DG_SIM_INJ_FMA) ? fma(v[i], dt, p[i]) : p[i] + v[i] * dt;
}

/* ---------- pool and dense array ---------- */

static rec *rec_alloc(dg_sim *sim)
{
    rec *r = sim->free_list;
    if (r) {
        sim->free_list = r->next_free;
    } else {
        if (!sim->chunks || sim->chunk_used == POOL_CHUNK) {
            pool_chunk *c = calloc(1, sizeof *c);
            if (!c)
                return NULL;
            c->next = sim->chunks;
            sim->chunks = c;
            sim->chunk_used = 0;
        }
        r = &sim->chunks->recs[sim->chunk_used++];
    }
    memset(r, 0, sizeof *r);
    return r;
}

static void rec_free(dg_sim *sim, rec *r)
{
    memset(r, 0, sizeof *r);
    r->next_free = sim->free_list;
    sim->free_list = r;
}

static long find_index(const dg_sim *sim, uint32_t id)
{
    size_t lo = 0, hi = sim->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (sim->ents[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < sim->n && sim->ents[lo].id == id ? (long)lo : -1;
}

static long find_alive(const dg_sim *sim, uint32_t id)
{
    long i = find_index(sim, id);
    return i >= 0 && !sim->recs[i]->dead ? i : -1;
}

static int reserve_entities(dg_sim *sim, size_t need)
{
    if (need <= sim->cap)
        return 1;
    size_t nc = sim->cap ? sim->cap * 2 : 64;
    while (nc < need)
        nc *= 2;
    dg_sim_entity *e = realloc(sim->ents, nc * sizeof *e);
    if (!e)
        return 0;
    sim->ents = e;
    rec **r = realloc(sim->recs, nc * sizeof *r);
    if (!r)
        return 0;
    sim->recs = r;
    memset(sim->ents + sim->cap, 0, (nc - sim->cap) * sizeof *e);
    memset(sim->recs + sim->cap, 0, (nc - sim->cap) * sizeof *r);
    sim->cap = nc;
    return 1;
}

/* Inserts a zeroed entity with this id at its sorted place; returns its index or -1. */
static long insert_entity(dg_sim *sim, uint32_t id)
{
    if (!reserve_entities(sim, sim->n + 1))
        return -1;
    rec *r = rec_alloc(sim);
    if (!r)
        return -1;
    size_t lo = 0, hi = sim->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (sim->ents[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    memmove(sim->ents + lo + 1, sim->ents + lo, (sim->n - lo) * sizeof *sim->ents);
    memmove(sim->recs + lo + 1, sim->recs + lo, (sim->n - lo) * sizeof *sim->recs);
    memset(&sim->ents[lo], 0, sizeof sim->ents[lo]);
    sim->ents[lo].id = id;
    r->id = id;
    sim->recs[lo] = r;
    sim->n++;
    return (long)lo;
}

static void compact(dg_sim *sim)
{
    size_t w = 0;
    for (size_t i = 0; i < sim->n; i++) {
        if (sim->recs[i]->dead) {
            rec_free(sim, sim->recs[i]);
            continue;
        }
        if (w != i) {
            sim->ents[w] = sim->ents[i];
            sim->recs[w] = sim->recs[i];
        }
        w++;
    }
    if (w < sim->n)
        memset(sim->ents + w, 0, (sim->n - w) * sizeof *sim->ents);
    sim->n = w;
}

/* ---------- events ---------- */

static void push_event(dg_sim *sim, uint8_t kind, uint32_t a, uint32_t b, uint16_t c, uint16_t d,
                       const char *text, uint16_t text_len)
{
    if (sim->nev == sim->cap_ev) {
        size_t nc = sim->cap_ev ? sim->cap_ev * 2 : 64;
        dg_sim_event *e = realloc(sim->evs, nc * sizeof *e);
        if (!e) {
            sim->oom = 1;
            return;
        }
        sim->evs = e;
        sim->cap_ev = nc;
    }
    dg_sim_event *ev = &sim->evs[sim->nev++];
    memset(ev, 0, sizeof *ev);
    ev->kind = kind;
    ev->a = a, ev->b = b, ev->c = c, ev->d = d;
    ev->text = text_len ? text : NULL;
    ev->text_len = text_len;
}

/* ---------- frames ---------- */

/* East/north/up at a point of the planet-centred frame (the radial frame, for aircraft). */
static void radial_basis(const double p[3], double e[3], double n[3], double u[3])
{
    dgv_copy(u, p);
    dgv_normalize(u);
    static const double zhat[3] = {0.0, 0.0, 1.0}, xhat[3] = {1.0, 0.0, 0.0};
    dgv_cross(zhat, u, e);
    if (dgv_normalize(e) < 1e-9) {
        dgv_cross(xhat, u, e);
        dgv_normalize(e);
    }
    dgv_cross(u, e, n);
}

static void heading_basis(const dg_sim *sim, double psi, const double e[3], const double n[3], const double u[3],
                          double q[4], double fwd[3])
{
    double s = sim->sin_fn(psi), c = sim->cos_fn(psi), left[3];
    for (int i = 0; i < 3; i++)
        fwd[i] = n[i] * c + e[i] * s;
    dgv_cross(u, fwd, left);
    dg_sim__q_from_basis(fwd, left, u, q);
}

static void frame_point(const dg_sim *sim, double e, double n, double u, double out[3])
{
    for (int i = 0; i < 3; i++)
        out[i] = sim->frame_o[i] + sim->frame_e[i] * e + sim->frame_n[i] * n + sim->frame_u[i] * u;
}

/* ---------- spawning ---------- */

static int is_surface(uint8_t cat)
{
    return cat == DG_SIM_CAT_CHARACTER || cat == DG_SIM_CAT_GROUND || cat == DG_SIM_CAT_STATIC ||
           cat == DG_SIM_CAT_OTHER;
}

static double terrain_height(const dg_sim *sim, double e, double n, double *de, double *dn)
{
    /* gentle hills for ground vehicles: amplitude 4 m, wavelength 2*pi*25 m */
    const double A = 4.0, L = 25.0;
    double se = sim->sin_fn(e / L), ce = sim->cos_fn(e / L), sn = sim->sin_fn(n / L), cn = sim->cos_fn(n / L);
    *de = A / L * ce * cn;
    *dn = -A / L * se * sn;
    return A * se * cn;
}

static void ground_pose(dg_sim *sim, rec *r, dg_sim_entity *e, int set_height)
{
    double rel[3] = {e->pos[0] - sim->frame_o[0], e->pos[1] - sim->frame_o[1], e->pos[2] - sim->frame_o[2]};
    double ee = dgv_dot(rel, sim->frame_e), nn = dgv_dot(rel, sim->frame_n);
    double de, dn, h = terrain_height(sim, ee, nn, &de, &dn);
    if (set_height)
        frame_point(sim, ee, nn, r->base_up + h, e->pos);
    double nrm[3], fwd[3], left[3], q[4];
    for (int i = 0; i < 3; i++)
        nrm[i] = sim->frame_u[i] - sim->frame_e[i] * de - sim->frame_n[i] * dn;
    dgv_normalize(nrm);
    double s = sim->sin_fn(r->heading), c = sim->cos_fn(r->heading);
    for (int i = 0; i < 3; i++)
        fwd[i] = sim->frame_n[i] * c + sim->frame_e[i] * s;
    double k = dgv_dot(fwd, nrm);
    for (int i = 0; i < 3; i++)
        fwd[i] -= nrm[i] * k;
    dgv_normalize(fwd);
    dgv_cross(nrm, fwd, left);
    dg_sim__q_from_basis(fwd, left, nrm, q);
    memcpy(e->rot, q, sizeof q);
}

static void place_entity(dg_sim *sim, rec *r, dg_sim_entity *e, const scn_place_spec *pl)
{
    const dg_sim_session *ss = &sim->scn->session;
    double eo = pl->a, no = pl->b, uo = pl->c;
    if (pl->kind == SCN_PLACE_AREA) {
        double rad = pl->radius * sqrt(rand01(&r->rng));
        double th = 2.0 * DG_SIM_PI * rand01(&r->rng);
        eo = pl->a + rad * sim->cos_fn(th);
        no = pl->b + rad * sim->sin_fn(th);
        uo = rand_range(&r->rng, pl->alt_lo, pl->alt_hi);
    }
    if (pl->kind == SCN_PLACE_GEO)
        dg_sim__geo_to_world(ss->planet_radius_m, pl->a, pl->b, pl->c, e->pos);
    else
        frame_point(sim, eo, no, uo, e->pos);
    double psi = pl->heading_random ? rand_range(&r->rng, 0.0, 2.0 * DG_SIM_PI) : pl->heading_deg * DG_SIM_DEG;
    double speed = rand_range(&r->rng, pl->speed_lo, pl->speed_hi);
    double be[3], bn[3], bu[3], fwd[3];
    if (is_surface(r->cat)) {
        dgv_copy(be, sim->frame_e), dgv_copy(bn, sim->frame_n), dgv_copy(bu, sim->frame_u);
        speed = 0.0;
    } else {
        radial_basis(e->pos, be, bn, bu);
        if (speed <= 0.0)
            speed = r->cat == DG_SIM_CAT_AIRCRAFT ? 220.0 : 0.0;
    }
    r->heading = psi;
    heading_basis(sim, psi, be, bn, bu, e->rot, fwd);
    for (int i = 0; i < 3; i++)
        e->vel[i] = fwd[i] * speed;
    double rel[3] = {e->pos[0] - sim->frame_o[0], e->pos[1] - sim->frame_o[1], e->pos[2] - sim->frame_o[2]};
    r->base_up = dgv_dot(rel, sim->frame_u);
    if (r->cat == DG_SIM_CAT_GROUND)
        ground_pose(sim, r, e, 1);
    dgv_copy(r->home, e->pos);
    r->alt_target = dgv_len(e->pos) - ss->planet_radius_m;
    r->spd_target = speed;
    dgv_copy(r->hdg_dir, fwd);
}

static rec *spawn_common(dg_sim *sim, uint32_t id, uint16_t type, uint16_t faction, double health, long *idx)
{
    long i = insert_entity(sim, id);
    if (i < 0) {
        sim->oom = 1;
        return NULL;
    }
    rec *r = sim->recs[i];
    dg_sim_entity *e = &sim->ents[i];
    const scn_type *ty = &sim->scn->types[type];
    e->type_index = type;
    e->faction_index = faction;
    e->health = health;
    e->rot[0] = 1.0;
    r->type = type;
    r->ty = ty;
    r->cat = ty->pub.category;
    r->born = sim->tick;
    r->despawn_at = DG_SIM_TICK_NONE;
    r->rng = entity_seed(sim->seed, id);
    r->pilot_idx = -1;
    r->throttle = 0.6;
    push_event(sim, DG_SIM_EV_SPAWN, id, 0, type, faction, NULL, 0);
    *idx = i;
    return r;
}

static void spawn_declared(dg_sim *sim, size_t k)
{
    const scn_entity *se = &sim->scn->entities[k];
    long i;
    rec *r = spawn_common(sim, se->id, se->type, se->faction, se->health, &i);
    if (!r)
        return;
    r->despawn_at = se->despawn;
    r->pilots = sim->sched + sim->sched_pil[k];
    r->npilots = sim->cnt_pil[k];
    r->inputs = sim->sched + sim->sched_inp[k];
    r->ninputs = sim->cnt_inp[k];
    place_entity(sim, r, &sim->ents[i], &se->place);
    dgv_copy(r->prev_pos, sim->ents[i].pos);
}

static const scn_pilot default_random_pilot = {0, 0, 0, DG_SIM_TICK_NONE - 1, SCN_MODE_RANDOM, 0, 45.0, 480.0,
                                               1000.0, 6000.0, 0.0, 0.6, 0.0, 0.0, 0.0};
static const scn_pilot default_walk_pilot = {0, 0, 0, DG_SIM_TICK_NONE - 1, SCN_MODE_WALK, 0, 0.0, 0.0,
                                             0.0, 0.0, 0.0, 0.6, 0.0, 0.0, 0.0};
static const scn_pilot default_drive_pilot = {0, 0, 0, DG_SIM_TICK_NONE - 1, SCN_MODE_DRIVE, 0, 0.0, 0.0,
                                              0.0, 0.0, 0.0, 0.6, 0.0, 0.0, 0.0};

static void spawn_wave(dg_sim *sim, const scn_event *ev)
{
    for (uint32_t k = 0; k < ev->count; k++) {
        long i;
        uint32_t id = sim->next_fresh_id++;
        rec *r = spawn_common(sim, id, ev->type2, ev->faction2, 1.0, &i);
        if (!r)
            return;
        r->despawn_at = sim->tick + ev->lifetime_ticks;
        r->fresh_pilot = r->cat == DG_SIM_CAT_AIRCRAFT ? &default_random_pilot
                       : r->cat == DG_SIM_CAT_CHARACTER ? &default_walk_pilot
                       : r->cat == DG_SIM_CAT_GROUND ? &default_drive_pilot : NULL;
        place_entity(sim, r, &sim->ents[i], &ev->place);
        dgv_copy(r->prev_pos, sim->ents[i].pos);
    }
}

static void launch_missile(dg_sim *sim, uint32_t shooter, uint32_t target, uint16_t weapon)
{
    long si = find_alive(sim, shooter), ti = find_alive(sim, target);
    if (si < 0 || ti < 0)
        return;
    uint16_t faction = sim->ents[si].faction_index;
    double spos[3], svel[3], srot[4];
    memcpy(spos, sim->ents[si].pos, sizeof spos);
    memcpy(svel, sim->ents[si].vel, sizeof svel);
    memcpy(srot, sim->ents[si].rot, sizeof srot);
    long i;
    uint32_t id = sim->next_fresh_id++;
    rec *r = spawn_common(sim, id, weapon, faction, 1.0, &i);
    if (!r)
        return;
    dg_sim_entity *e = &sim->ents[i];
    static const double xb[3] = {1.0, 0.0, 0.0};
    double fwd[3];
    dg_sim__q_rotate(srot, xb, fwd);
    for (int k = 0; k < 3; k++) {
        e->pos[k] = spos[k] + fwd[k] * 20.0;
        e->vel[k] = svel[k] + fwd[k] * 50.0;
    }
    memcpy(e->rot, srot, sizeof srot);
    r->shooter = shooter;
    r->target = target;
    dgv_copy(r->prev_pos, e->pos);
}

/* ---------- timeline ---------- */

static int event_due(const scn_event *ev, uint64_t t)
{
    if (t < ev->at || t > ev->until)
        return 0;
    return ev->every ? (t - ev->at) % ev->every == 0 : t == ev->at;
}

static int cand_reserve(dg_sim *sim, size_t need)
{
    if (need <= sim->cap_cand)
        return 1;
    size_t nc = sim->cap_cand ? sim->cap_cand * 2 : 64;
    while (nc < need)
        nc *= 2;
    uint32_t *c = realloc(sim->cand, nc * sizeof *c);
    if (!c)
        return 0;
    sim->cand = c;
    sim->cap_cand = nc;
    return 1;
}

/* Collects live, non-missile entities of a faction; returns how many. */
static size_t collect_faction(dg_sim *sim, uint16_t faction, size_t offset)
{
    size_t k = offset;
    for (size_t i = 0; i < sim->n; i++) {
        if (sim->recs[i]->dead || sim->ents[i].faction_index != faction || sim->recs[i]->cat == DG_SIM_CAT_MISSILE)
            continue;
        sim->cand[k++] = sim->ents[i].id;
    }
    return k - offset;
}

static void do_salvo(dg_sim *sim, const scn_event *ev)
{
    if (!cand_reserve(sim, 2 * sim->n + 2)) {
        sim->oom = 1;
        return;
    }
    for (uint32_t k = 0; k < ev->count; k++) {
        size_t ns = collect_faction(sim, ev->c, 0);
        size_t nt = collect_faction(sim, ev->faction2, ns);
        if (ns == 0 || nt == 0)
            return;
        uint32_t shooter = sim->cand[splitmix(&sim->rng) % ns];
        uint32_t target = sim->cand[ns + splitmix(&sim->rng) % nt];
        if (shooter != target)
            launch_missile(sim, shooter, target, ev->type2);
    }
}

static void kill_entity(dg_sim *sim, long i, uint32_t killer, uint16_t weapon)
{
    sim->ents[i].health = 0.0;
    sim->recs[i]->dead = 1;
    push_event(sim, DG_SIM_EV_KILL, killer, sim->ents[i].id, weapon, 0, NULL, 0);
}

static void do_admin(dg_sim *sim, const scn_event *ev, const char *text)
{
    push_event(sim, DG_SIM_EV_ADMIN, ev->a, ev->b, ev->c, 0, text, ev->text_len);
    long i = find_alive(sim, ev->b);
    if (i < 0)
        return;
    switch (ev->c) {
    case DG_SIM_ADMIN_KICK:
    case DG_SIM_ADMIN_BAN:
        sim->recs[i]->dead = 1;
        break;
    case DG_SIM_ADMIN_HEAL:
        sim->ents[i].health = 1.0;
        break;
    case DG_SIM_ADMIN_SLAY:
        kill_entity(sim, i, 0, DG_SIM_WEAPON_NONE);
        break;
    default:
        break;
    }
}

static void run_timeline(dg_sim *sim)
{
    const dg_sim_scenario *s = sim->scn;
    const uint64_t t = sim->tick;
    while (sim->spawn_next < s->nentities && sim->spawn_tick[sim->spawn_order[sim->spawn_next]] == t)
        spawn_declared(sim, sim->spawn_order[sim->spawn_next++]);
    for (size_t k = 0; k < s->nevents; k++) {
        const scn_event *ev = &s->events[k];
        if (!event_due(ev, t))
            continue;
        const char *text = s->text ? s->text + ev->text_off : NULL;
        long i;
        switch (ev->kind) {
        case SCN_EV_DESPAWN:
            if ((i = find_alive(sim, ev->a)) >= 0)
                sim->recs[i]->dead = 1;
            break;
        case SCN_EV_FIRE:
            launch_missile(sim, ev->a, ev->b, ev->type2);
            break;
        case SCN_EV_SALVO:
            do_salvo(sim, ev);
            break;
        case SCN_EV_WAVE:
            spawn_wave(sim, ev);
            break;
        case SCN_EV_CHAT:
            push_event(sim, DG_SIM_EV_CHAT, ev->a, 0, ev->c, 0, text, ev->text_len);
            break;
        case SCN_EV_ADMIN:
            do_admin(sim, ev, text);
            break;
        case SCN_EV_ALERT:
            push_event(sim, DG_SIM_EV_ALERT, 0, 0, ev->c, ev->d, NULL, 0);
            break;
        default:
            break;
        }
    }
}

/* ---------- pilots ---------- */

static const scn_pilot *effective_pilot(const dg_sim *sim, rec *r, uint64_t t)
{
    int32_t best = -1;
    for (uint16_t k = 0; k < r->npilots; k++) {
        const scn_pilot *pl = &sim->scn->pilots[r->pilots[k]];
        if (t >= pl->from && t <= pl->until)
            best = (int32_t)r->pilots[k];
    }
    if (best != r->pilot_idx) {
        r->pilot_idx = best;
        r->pilot_changed = 1;
    }
    if (best >= 0)
        return &sim->scn->pilots[best];
    return r->fresh_pilot;
}

static int input_active(const scn_input *in, uint64_t t)
{
    if (t < in->from || t > in->until)
        return 0;
    if (!in->every)
        return t <= in->to;
    return (t - in->from) % in->every <= in->to - in->from;
}

typedef struct controls {
    double throttle, pitch, roll, yaw;
} controls;

static void apply_inputs(const dg_sim *sim, const rec *r, uint64_t t, controls *c)
{
    for (uint16_t k = 0; k < r->ninputs; k++) {
        const scn_input *in = &sim->scn->inputs[r->inputs[k]];
        if (!input_active(in, t))
            continue;
        if (in->axes & SCN_AXIS_THROTTLE)
            c->throttle = in->throttle;
        if (in->axes & SCN_AXIS_PITCH)
            c->pitch = in->pitch;
        if (in->axes & SCN_AXIS_ROLL)
            c->roll = in->roll;
        if (in->axes & SCN_AXIS_YAW)
            c->yaw = in->yaw;
    }
}

static double wrap_pi(double a)
{
    while (a > DG_SIM_PI)
        a -= 2.0 * DG_SIM_PI;
    while (a < -DG_SIM_PI)
        a += 2.0 * DG_SIM_PI;
    return a;
}

/* Rotates a horizontal direction by angle about up (own trig). */
static void rotate_about(const dg_sim *sim, const double v[3], const double axis[3], double ang, double out[3])
{
    double c = sim->cos_fn(ang), s = sim->sin_fn(ang), kxv[3];
    dgv_cross(axis, v, kxv);
    double kd = dgv_dot(axis, v) * (1.0 - c);
    for (int i = 0; i < 3; i++)
        out[i] = v[i] * c + kxv[i] * s + axis[i] * kd;
}

typedef struct aero {
    double U[3], f[3], l[3], u[3];
    double V, alt, g, qd, alpha, beta;
} aero;

/* Chase: the target's index (re-picking the nearest aircraft of another faction every 2 s when no
 * target id was given), or -1 when there is none. */
static long chase_target(dg_sim *sim, rec *r, const dg_sim_entity *e, const scn_pilot *pl)
{
    const uint64_t t = sim->tick;
    const double rate = (double)sim->scn->session.tick_rate_hz;
    long ti = r->chase_target ? find_alive(sim, r->chase_target) : -1;
    if (pl->target != 0 || (ti >= 0 && (t + e->id) % (uint64_t)(2.0 * rate) != 0))
        return ti;
    double best = 1e300;
    ti = -1;
    for (size_t i = 0; i < sim->n; i++) {
        const dg_sim_entity *o = &sim->ents[i];
        if (o->faction_index == e->faction_index || sim->recs[i]->dead || sim->recs[i]->cat != DG_SIM_CAT_AIRCRAFT)
            continue;
        double d[3] = {o->pos[0] - e->pos[0], o->pos[1] - e->pos[1], o->pos[2] - e->pos[2]};
        double dd = dgv_dot(d, d);
        if (dd < best)
            best = dd, ti = (long)i;
    }
    r->chase_target = ti >= 0 ? sim->ents[ti].id : 0;
    return ti;
}

/* Random: every 3..12 s a new heading (within +-120 deg), altitude and speed from the entity's PRNG. */
static void random_decision(dg_sim *sim, rec *r, const dg_sim_entity *e, const scn_pilot *pl, const aero *ae)
{
    const double rate = (double)sim->scn->session.tick_rate_hz;
    if (sim->tick < r->next_decision)
        return;
    r->next_decision = sim->tick + (uint64_t)(rand_range(&r->rng, 3.0, 12.0) * rate);
    double turn = rand_range(&r->rng, -2.1, 2.1);
    rotate_about(sim, ae->f, ae->U, turn, r->hdg_dir);
    r->alt_target = rand_range(&r->rng, pl->alt_lo, pl->alt_hi);
    r->spd_target = pl->speed > 0.0 ? pl->speed : rand_range(&r->rng, 180.0, 300.0);
    double rel[3] = {r->home[0] - e->pos[0], r->home[1] - e->pos[1], r->home[2] - e->pos[2]};
    if (dgv_len(rel) > 40000.0)
        dgv_copy(r->hdg_dir, rel); /* wandered too far: head home */
}

/* Bank (rad, > 0 = right) that turns the nose toward a direction, limited to +-bank. */
static double bank_toward(const dg_sim *sim, const aero *ae, const double want_dir[3], double bank)
{
    double fh[3], dh[3], c[3];
    double kf = dgv_dot(ae->f, ae->U), kd = dgv_dot(want_dir, ae->U);
    for (int i = 0; i < 3; i++) {
        fh[i] = ae->f[i] - ae->U[i] * kf;
        dh[i] = want_dir[i] - ae->U[i] * kd;
    }
    dgv_cross(fh, dh, c);
    double err = sim->atan2_fn(dgv_dot(c, ae->U), dgv_dot(fh, dh)); /* > 0: direction to the left */
    return dg_clamp(-2.0 * err, -bank, bank);
}

/* Chooses bank, altitude and speed targets for this tick; returns the desired bank (rad). */
static double flight_plan(dg_sim *sim, rec *r, const dg_sim_entity *e, const scn_pilot *pl, const aero *ae)
{
    if (!pl)
        return 0.0;
    if (r->pilot_changed) {
        r->pilot_changed = 0;
        r->next_decision = sim->tick;
        r->chase_target = pl->mode == SCN_MODE_CHASE ? pl->target : 0;
        if (pl->speed > 0.0)
            r->spd_target = pl->speed;
    }
    double bank = pl->bank_deg * DG_SIM_DEG;
    switch (pl->mode) {
    case SCN_MODE_WEAVE: {
        uint64_t half = (uint64_t)(pl->period_ticks * 0.5) + 1;
        uint64_t phase = (uint64_t)e->id * 7919u;
        return ((sim->tick + phase) / half) % 2 ? bank : -bank;
    }
    case SCN_MODE_ORBIT:
        return (e->id & 1u) ? bank : -bank;
    case SCN_MODE_CHASE: {
        long ti = chase_target(sim, r, e, pl);
        if (ti < 0)
            return 0.0;
        const dg_sim_entity *o = &sim->ents[ti];
        double want[3] = {o->pos[0] - e->pos[0], o->pos[1] - e->pos[1], o->pos[2] - e->pos[2]};
        r->alt_target = dg_clamp(dgv_len(o->pos) - sim->scn->session.planet_radius_m, pl->alt_lo, pl->alt_hi);
        return bank_toward(sim, ae, want, bank);
    }
    case SCN_MODE_RANDOM:
        random_decision(sim, r, e, pl, ae);
        return bank_toward(sim, ae, r->hdg_dir, bank);
    default: /* cruise: wings level, hold altitude band */
        r->alt_target = dg_clamp(r->alt_target, pl->alt_lo, pl->alt_hi);
        return 0.0;
    }
}

static void autopilot(dg_sim *sim, rec *r, const dg_sim_entity *e, const scn_pilot *pl, const aero *ae,
                      controls *c)
{
    const scn_type *ty = r->ty;
    double bank_want = flight_plan(sim, r, e, pl, ae);
    if (ae->alt < 400.0)
        bank_want = 0.0, r->alt_target = r->alt_target < 1500.0 ? 1500.0 : r->alt_target;
    double bank = sim->atan2_fn(dgv_dot(ae->l, ae->U), dgv_dot(ae->u, ae->U));
    c->roll = dg_clamp(3.0 * wrap_pi(bank_want - bank) / (ty->max_roll > 0 ? ty->max_roll : 1.0), -1.0, 1.0);
    double vs = dgv_dot(e->vel, ae->U);
    double vs_want = dg_clamp(0.1 * (r->alt_target - ae->alt), -40.0, 40.0);
    double az = dg_clamp(0.5 * (vs_want - vs), -5.0, 5.0);
    double cosb = dg_clamp(dgv_dot(ae->u, ae->U), 0.25, 1.0);
    double qs = ae->qd * ty->wing_area;
    double cl_want = qs > 1.0 ? ty->mass * (ae->g + az) / (cosb * qs) : 1.0;
    double alpha_want = dg_clamp((cl_want - ty->cl0) / ty->cla, -0.15, 0.3);
    double cl_now = ty->cl0 + ty->cla * dg_clamp(ae->alpha, -0.35, 0.35);
    double ff = ae->V > 1.0 ? (qs * cl_now / ty->mass - ae->g * dgv_dot(ae->u, ae->U)) / ae->V : 0.0;
    double q_cmd = ff + 4.0 * (alpha_want - ae->alpha);
    c->pitch = dg_clamp(q_cmd / (ty->max_pitch > 0 ? ty->max_pitch : 1.0), -1.0, 1.0);
    c->yaw = dg_clamp(-3.0 * ae->beta / (ty->max_yaw > 0 ? ty->max_yaw : 1.0), -1.0, 1.0);
    c->throttle = dg_clamp(0.55 + 0.02 * (r->spd_target - ae->V), 0.0, 1.0);
}

/* ---------- per-category steps ---------- */

/* Body rotation by angular velocity w (rad/s, body axes) over one tick: q = q * exp(w dt / 2). */
static void rotate_body(const dg_sim *sim, double q[4], const double w[3])
{
    double wl = sqrt(w[0] * w[0] + w[1] * w[1] + w[2] * w[2]);
    if (wl <= 0.0)
        return;
    double half = 0.5 * wl * sim->dt, s = sim->sin_fn(half) / wl;
    double dq[4] = {sim->cos_fn(half), w[0] * s, w[1] * s, w[2] * s}, o[4];
    dg_sim__q_mul(q, dq, o);
    dg_sim__q_normalize(o);
    memcpy(q, o, sizeof o);
}

static void step_aircraft(dg_sim *sim, rec *r, dg_sim_entity *e, double wake)
{
    static const double xb[3] = {1, 0, 0}, yb[3] = {0, 1, 0}, zb[3] = {0, 0, 1};
    const scn_type *ty = r->ty;
    const dg_sim_session *ss = &sim->scn->session;
    aero ae;
    double rr = dgv_len(e->pos);
    dgv_copy(ae.U, e->pos);
    dgv_scale(ae.U, 1.0 / rr);
    dg_sim__q_rotate(e->rot, xb, ae.f);
    dg_sim__q_rotate(e->rot, yb, ae.l);
    dg_sim__q_rotate(e->rot, zb, ae.u);
    ae.alt = rr - ss->planet_radius_m;
    double ratio = ss->planet_radius_m / rr;
    ae.g = ss->gravity_mps2 * ratio * ratio;
    double x = (ae.alt > 0.0 ? ae.alt : 0.0) / ss->scale_height_m;
    double rho = ss->air_density / (1.0 + x + x * x * 0.5 + x * x * x * (1.0 / 6.0)); /* ~exp(-x), no libm */
    ae.V = dgv_len(e->vel);
    ae.qd = 0.5 * rho * ae.V * ae.V;
    double vf = dgv_dot(e->vel, ae.f), vl = dgv_dot(e->vel, ae.l), vu = dgv_dot(e->vel, ae.u);
    ae.alpha = sim->atan2_fn(-vu, vf);
    ae.beta = sim->atan2_fn(vl, vf);

    controls c = {r->throttle, 0.0, 0.0, 0.0};
    autopilot(sim, r, e, effective_pilot(sim, r, sim->tick), &ae, &c);
    apply_inputs(sim, r, sim->tick, &c);
    r->throttle = c.throttle;

    double a[3] = {-ae.U[0] * ae.g, -ae.U[1] * ae.g, -ae.U[2] * ae.g};
    double thrust = c.throttle * ty->thrust / ty->mass;
    dgv_madd(a, ae.f, thrust, a);
    if (ae.V > 1e-6) {
        double vh[3] = {e->vel[0] / ae.V, e->vel[1] / ae.V, e->vel[2] / ae.V};
        double cl = ty->cl0 + ty->cla * dg_clamp(ae.alpha, -0.35, 0.35);
        double qs = ae.qd * ty->wing_area / ty->mass;
        double gust = 1.0 + 1e-3 * wake / (1.0 + wake); /* ambient turbulence from last tick's wake */
        double lift_dir[3], side_dir[3];
        double ku = dgv_dot(ae.u, vh), kl = dgv_dot(ae.l, vh);
        for (int i = 0; i < 3; i++) {
            lift_dir[i] = ae.u[i] - vh[i] * ku;
            side_dir[i] = ae.l[i] - vh[i] * kl;
        }
        dgv_normalize(lift_dir);
        dgv_normalize(side_dir);
        dgv_madd(a, lift_dir, qs * cl, a);
        dgv_madd(a, side_dir, -qs * ty->cyb * ae.beta, a);
        dgv_madd(a, vh, -qs * (ty->cd0 + ty->k_induced * cl * cl) * gust, a);
    }
    integrate(sim, e->vel, e->pos, a);
    double w[3] = {c.roll * ty->max_roll, -c.pitch * ty->max_pitch, -c.yaw * ty->max_yaw};
    rotate_body(sim, e->rot, w);
}

static void step_missile(dg_sim *sim, rec *r, dg_sim_entity *e)
{
    const scn_type *ty = r->ty;
    const dg_sim_session *ss = &sim->scn->session;
    double V = dgv_len(e->vel);
    double dir[3];
    dgv_copy(dir, e->vel);
    if (dgv_normalize(dir) <= 0.0)
        dgv_set(dir, 1.0, 0.0, 0.0);
    long ti = find_alive(sim, r->target);
    if (ti >= 0) {
        const dg_sim_entity *t = &sim->ents[ti];
        double rel[3] = {t->pos[0] - e->pos[0], t->pos[1] - e->pos[1], t->pos[2] - e->pos[2]};
        double tgo = dgv_len(rel) / (V > 100.0 ? V : 100.0);
        double aim[3];
        dgv_madd(rel, t->vel, tgo, aim);
        dgv_normalize(aim);
        double cr[3];
        dgv_cross(dir, aim, cr);
        double sn = dgv_len(cr), cs = dgv_dot(dir, aim);
        double ang = sim->atan2_fn(sn, cs);
        double max_ang = ty->turn_g * ss->gravity_mps2 / (V > 50.0 ? V : 50.0) * sim->dt;
        if (ang <= max_ang) {
            dgv_copy(dir, aim);
        } else if (sn > 1e-12) {
            dgv_scale(cr, 1.0 / sn);
            rotate_about(sim, dir, cr, max_ang, dir);
            dgv_normalize(dir);
        }
    }
    double Vn = V + ty->accel * sim->dt;
    if (Vn > ty->speed)
        Vn = ty->speed;
    for (int i = 0; i < 3; i++)
        e->vel[i] = dir[i] * Vn;
    advance_position(sim, e->vel, e->pos);
    double E[3], N[3], U[3], left[3], up[3];
    radial_basis(e->pos, E, N, U);
    dgv_cross(U, dir, left);
    if (dgv_normalize(left) < 1e-9)
        dgv_copy(left, N);
    dgv_cross(dir, left, up);
    dg_sim__q_from_basis(dir, left, up, e->rot);
    r->age++;
    if ((double)r->age > ty->lifetime_s * (double)ss->tick_rate_hz)
        r->dead = 1; /* self-destruct after its lifetime: gone, no kill */
}

/* Characters and ground vehicles: stand / move schedule on the tangent plane. */
static void step_surface(dg_sim *sim, rec *r, dg_sim_entity *e)
{
    const scn_pilot *pl = effective_pilot(sim, r, sim->tick);
    const uint64_t t = sim->tick;
    const double rate = (double)sim->scn->session.tick_rate_hz;
    int walks = pl && (pl->mode == SCN_MODE_WALK || pl->mode == SCN_MODE_DRIVE);
    if (walks && t >= r->seg_end) {
        r->moving = rand01(&r->rng) < pl->move;
        r->seg_end = t + (uint64_t)(rand_range(&r->rng, 2.0, 8.0) * rate);
        double walk = pl->walk > 0.0 ? pl->walk : r->ty->walk, run = pl->run > 0.0 ? pl->run : r->ty->run;
        r->move_speed = rand01(&r->rng) < 0.5 ? walk : run;
        r->sub_end = t;
    }
    if (!walks)
        r->moving = 0;
    if (r->moving && t >= r->sub_end) {
        double tmax = pl->turn_dps > 0.0 ? pl->turn_dps * DG_SIM_DEG : r->ty->turn;
        double u = rand_range(&r->rng, -1.0, 1.0);
        r->turn_rate = tmax * u * (u < 0 ? -u : u); /* mostly gentle, sometimes up to the maximum */
        r->sub_end = t + (uint64_t)rate;
        double rel[3] = {r->home[0] - e->pos[0], r->home[1] - e->pos[1], r->home[2] - e->pos[2]};
        if (dgv_len(rel) > 150.0) { /* strayed: turn back toward home */
            double want = sim->atan2_fn(dgv_dot(rel, sim->frame_e), dgv_dot(rel, sim->frame_n));
            r->turn_rate = dg_clamp(wrap_pi(want - r->heading), -tmax, tmax);
        }
    }
    if (!r->moving) {
        dgv_set(e->vel, 0.0, 0.0, 0.0);
        return; /* standing: position and orientation stay bit-identical */
    }
    r->heading = wrap_pi(r->heading + r->turn_rate * sim->dt);
    double q[4], fwd[3];
    heading_basis(sim, r->heading, sim->frame_e, sim->frame_n, sim->frame_u, q, fwd);
    for (int i = 0; i < 3; i++)
        e->vel[i] = fwd[i] * r->move_speed;
    advance_position(sim, e->vel, e->pos);
    if (r->cat == DG_SIM_CAT_GROUND)
        ground_pose(sim, r, e, 1);
    else
        memcpy(e->rot, q, sizeof q);
}

static void step_one(dg_sim *sim, size_t i, double wake)
{
    rec *r = sim->recs[i];
    dg_sim_entity *e = &sim->ents[i];
    switch (r->cat) {
    case DG_SIM_CAT_AIRCRAFT:
        step_aircraft(sim, r, e, wake);
        break;
    case DG_SIM_CAT_MISSILE:
        step_missile(sim, r, e);
        break;
    case DG_SIM_CAT_CHARACTER:
    case DG_SIM_CAT_GROUND:
        step_surface(sim, r, e);
        break;
    default:
        break; /* static and other: never move */
    }
}

static int steppable(const dg_sim *sim, size_t i)
{
    return !sim->recs[i]->dead && sim->recs[i]->born != sim->tick;
}

static double wake_of(const dg_sim_entity *e)
{
    return 1e-9 * (e->vel[0] * e->vel[0] + e->vel[1] * e->vel[1] + e->vel[2] * e->vel[2]);
}

/* ---------- the racy two-thread step (injection) ---------- */

typedef struct racy_half {
    dg_sim *sim;
    size_t lo, hi;
    int descending;
    double wake;
} racy_half;

static void *racy_worker(void *arg)
{
    racy_half *h = arg;
    dg_sim *sim = h->sim;
    for (size_t k = h->lo; k < h->hi; k++) {
        size_t i = h->descending ? h->hi - 1 - (k - h->lo) : k;
        if (!steppable(sim, i))
            continue;
        step_one(sim, i, h->wake);
        /* the bug on purpose: unsynchronised read-modify-write of shared accumulators */
        sim->wake_next += wake_of(&sim->ents[i]);
        sim->last_stepped = sim->ents[i].id;
    }
    return NULL;
}

static void step_all(dg_sim *sim)
{
    double wake = sim->wake;
    sim->wake_next = 0.0;
    if (sim->inj.flags & DG_SIM_INJ_RACY_THREADS) {
        size_t mid = sim->n / 2;
        racy_half a = {sim, 0, mid, 0, wake}, b = {sim, mid, sim->n, 1, wake};
        pthread_t th;
        if (pthread_create(&th, NULL, racy_worker, &b) == 0) {
            racy_worker(&a);
            pthread_join(th, NULL);
        } else {
            racy_worker(&a);
            racy_worker(&b);
        }
    } else {
        for (size_t i = 0; i < sim->n; i++) {
            if (!steppable(sim, i))
                continue;
            step_one(sim, i, wake);
            sim->wake_next += wake_of(&sim->ents[i]);
            sim->last_stepped = sim->ents[i].id;
        }
    }
    sim->wake = sim->wake_next;
}

/* ---------- hits and damage ---------- */

static int hit_reserve(dg_sim *sim)
{
    if (sim->nhits < sim->cap_hits)
        return 1;
    size_t nc = sim->cap_hits ? sim->cap_hits * 2 : 32;
    hit *h = realloc(sim->hits, nc * sizeof *h);
    if (!h)
        return 0;
    sim->hits = h;
    sim->cap_hits = nc;
    return 1;
}

/* Closest approach of missile and target during the tick (relative motion taken as linear). */
static int passes_within(const double mp0[3], const double mp1[3], const double tp0[3], const double tp1[3],
                         double radius)
{
    double d0[3], d1[3], dd[3];
    for (int i = 0; i < 3; i++) {
        d0[i] = mp0[i] - tp0[i];
        d1[i] = mp1[i] - tp1[i];
        dd[i] = d1[i] - d0[i];
    }
    double den = dgv_dot(dd, dd), s = 0.0;
    if (den > 0.0)
        s = dg_clamp(-dgv_dot(d0, dd) / den, 0.0, 1.0);
    double c[3];
    dgv_madd(d0, dd, s, c);
    return dgv_dot(c, c) <= radius * radius;
}

static int cmp_hit_address(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t)((const hit *)a)->missile, y = (uintptr_t)((const hit *)b)->missile;
    return x < y ? -1 : x > y;
}

static void resolve_hits(dg_sim *sim)
{
    sim->nhits = 0;
    for (size_t i = 0; i < sim->n; i++) {
        rec *m = sim->recs[i];
        if (m->cat != DG_SIM_CAT_MISSILE || m->dead || m->born == sim->tick)
            continue;
        long ti = find_alive(sim, m->target);
        if (ti < 0)
            continue;
        if (!passes_within(m->prev_pos, sim->ents[i].pos, sim->recs[ti]->prev_pos, sim->ents[ti].pos,
                           m->ty->hit_radius))
            continue;
        if (!hit_reserve(sim)) {
            sim->oom = 1;
            return;
        }
        sim->hits[sim->nhits].missile = m;
        sim->hits[sim->nhits].victim = sim->recs[ti];
        sim->nhits++;
    }
    /* Hits were collected in missile-id order; the injection re-orders them by record address, the
     * way a loop over a pointer-keyed set would. Order matters: it decides who gets the kill. */
    if ((sim->inj.flags & DG_SIM_INJ_POINTER_ORDER) && sim->nhits > 1)
        qsort(sim->hits, sim->nhits, sizeof *sim->hits, cmp_hit_address);
    for (size_t k = 0; k < sim->nhits; k++) {
        rec *m = sim->hits[k].missile, *v = sim->hits[k].victim;
        m->dead = 1;
        if (v->dead)
            continue;
        long vi = find_index(sim, v->id);
        dg_sim_entity *ve = &sim->ents[vi];
        ve->health -= m->ty->damage;
        if (ve->health > 1e-9)
            continue;
        kill_entity(sim, vi, m->shooter, m->type);
        long si = find_alive(sim, m->shooter);
        if (si >= 0 && sim->recs[si]->kills < 255)
            sim->recs[si]->kills++;
    }
}

static void expire_and_crash(dg_sim *sim)
{
    const double R = sim->scn->session.planet_radius_m;
    for (size_t i = 0; i < sim->n; i++) {
        rec *r = sim->recs[i];
        if (r->dead)
            continue;
        if (r->despawn_at != DG_SIM_TICK_NONE && sim->tick >= r->despawn_at) {
            r->dead = 1;
            continue;
        }
        if (r->cat == DG_SIM_CAT_MISSILE && dgv_len(sim->ents[i].pos) < R)
            r->dead = 1; /* a missile that reaches the ground is simply gone */
        else if (r->cat == DG_SIM_CAT_AIRCRAFT && dgv_len(sim->ents[i].pos) < R)
            kill_entity(sim, (long)i, 0, DG_SIM_WEAPON_NONE); /* flew into the ground */
    }
}

static void compose_flags(dg_sim *sim)
{
    const double R = sim->scn->session.planet_radius_m;
    for (size_t i = 0; i < sim->n; i++) {
        const rec *r = sim->recs[i];
        dg_sim_entity *e = &sim->ents[i];
        uint16_t f = (uint16_t)(r->kills << DG_SIM_FLAG_KILLS_SHIFT);
        if ((r->cat == DG_SIM_CAT_AIRCRAFT || r->cat == DG_SIM_CAT_MISSILE) && dgv_len(e->pos) > R + 1.0)
            f |= DG_SIM_FLAG_AIRBORNE;
        if (e->vel[0] != 0.0 || e->vel[1] != 0.0 || e->vel[2] != 0.0)
            f |= DG_SIM_FLAG_MOVING;
        if (r->cat == DG_SIM_CAT_AIRCRAFT && r->throttle > 0.9)
            f |= DG_SIM_FLAG_AFTERBURNER;
        if (r->cat == DG_SIM_CAT_GROUND)
            f |= DG_SIM_FLAG_TILTED;
        if (e->id == sim->last_stepped)
            f |= DG_SIM_FLAG_LAST_STEPPED;
        e->flags = f;
    }
}

static void apply_bitflip(dg_sim *sim)
{
    const dg_sim_inject *in = &sim->inj;
    if (!(in->flags & DG_SIM_INJ_BITFLIP) || sim->tick != in->bitflip_tick || sim->bitflip_done)
        return;
    long i = find_index(sim, in->bitflip_entity);
    if (i < 0)
        return;
    dg_sim_entity *e = &sim->ents[i];
    if (in->bitflip_field == DG_SIM_FIELD_FLAGS) {
        e->flags ^= (uint16_t)(1u << (in->bitflip_bit & 15u));
    } else {
        double *f = in->bitflip_field <= DG_SIM_FIELD_POS_Z ? &e->pos[in->bitflip_field]
                  : in->bitflip_field <= DG_SIM_FIELD_VEL_Z ? &e->vel[in->bitflip_field - DG_SIM_FIELD_VEL_X]
                  : in->bitflip_field <= DG_SIM_FIELD_ROT_Z ? &e->rot[in->bitflip_field - DG_SIM_FIELD_ROT_W]
                                                            : &e->health;
        uint64_t bits;
        memcpy(&bits, f, sizeof bits);
        bits ^= 1ull << (in->bitflip_bit & 63u);
        memcpy(f, &bits, sizeof bits);
    }
    sim->bitflip_done = 1;
}

static void end_of_tick(dg_sim *sim)
{
    compact(sim);
    compose_flags(sim);
    apply_bitflip(sim);
}

/* ---------- public ---------- */

static uint64_t clock_seed(uint64_t scenario_seed)
{
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    uint64_t s = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
    s ^= (uint64_t)(uintptr_t)&ts;
    splitmix(&s);
    return s == scenario_seed ? s ^ 1u : s;
}

static double libm_sin(double x) { return sin(x); }
static double libm_cos(double x) { return cos(x); }
static double libm_atan2(double y, double x) { return atan2(y, x); }

/* Index of the first declared entity with id >= id (declared entities are sorted by id). */
static size_t declared_lower_bound(const dg_sim_scenario *s, uint32_t id)
{
    size_t lo = 0, hi = s->nentities;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->entities[mid].id < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Calls fn for every (line, declared entity) pair a pilot (kind 0) or input (kind 1) line selects. */
typedef int (*sched_fn)(dg_sim *sim, size_t entity, uint32_t line, int kind);

static int for_each_selection(dg_sim *sim, sched_fn fn)
{
    const dg_sim_scenario *s = sim->scn;
    for (int kind = 0; kind < 2; kind++) {
        size_t nlines = kind ? s->ninputs : s->npilots;
        for (size_t p = 0; p < nlines; p++) {
            uint32_t lo = kind ? s->inputs[p].id_lo : s->pilots[p].id_lo;
            uint32_t hi = kind ? s->inputs[p].id_hi : s->pilots[p].id_hi;
            for (size_t k = declared_lower_bound(s, lo); k < s->nentities && s->entities[k].id <= hi; k++)
                if (!fn(sim, k, (uint32_t)p, kind))
                    return 0;
        }
    }
    return 1;
}

static int count_selection(dg_sim *sim, size_t k, uint32_t line, int kind)
{
    (void)line;
    uint16_t *c = kind ? &sim->cnt_inp[k] : &sim->cnt_pil[k];
    if (*c == UINT16_MAX)
        return 0;
    (*c)++;
    return 1;
}

static int store_selection(dg_sim *sim, size_t k, uint32_t line, int kind)
{
    if (kind)
        sim->sched[sim->sched_inp[k] + sim->cnt_inp[k]++] = line;
    else
        sim->sched[sim->sched_pil[k] + sim->cnt_pil[k]++] = line;
    return 1;
}

/* Per declared entity: the pilot and input lines that select it, in file order (flat array). */
static int build_schedule(dg_sim *sim)
{
    size_t ne = sim->scn->nentities, off = 0;
    sim->cnt_pil = calloc(ne + 1, sizeof *sim->cnt_pil);
    sim->cnt_inp = calloc(ne + 1, sizeof *sim->cnt_inp);
    sim->sched_pil = calloc(ne + 1, sizeof *sim->sched_pil);
    sim->sched_inp = calloc(ne + 1, sizeof *sim->sched_inp);
    if (!sim->cnt_pil || !sim->cnt_inp || !sim->sched_pil || !sim->sched_inp || !for_each_selection(sim, count_selection))
        return 0;
    for (size_t k = 0; k < ne; k++) {
        sim->sched_pil[k] = off;
        off += sim->cnt_pil[k];
        sim->sched_inp[k] = off;
        off += sim->cnt_inp[k];
        sim->cnt_pil[k] = sim->cnt_inp[k] = 0;
    }
    sim->sched = calloc(off + 1, sizeof *sim->sched);
    return sim->sched && for_each_selection(sim, store_selection);
}

static int build_spawn_order(dg_sim *sim)
{
    const dg_sim_scenario *s = sim->scn;
    size_t ne = s->nentities;
    sim->spawn_tick = calloc(ne + 1, sizeof *sim->spawn_tick);
    sim->spawn_order = calloc(ne + 1, sizeof *sim->spawn_order);
    if (!sim->spawn_tick || !sim->spawn_order)
        return 0;
    for (size_t k = 0; k < ne; k++) {
        const scn_entity *e = &s->entities[k];
        uint64_t t = e->spawn_lo;
        if (e->spawn_hi > e->spawn_lo) {
            uint64_t rs = entity_seed(sim->seed ^ 0x5350415748ull, e->id);
            t += splitmix(&rs) % (e->spawn_hi - e->spawn_lo + 1);
        }
        sim->spawn_tick[k] = t;
        sim->spawn_order[k] = k;
    }
    /* stable merge-free insertion sort by (tick, id): ids are already ascending */
    for (size_t i = 1; i < ne; i++) {
        size_t v = sim->spawn_order[i], j = i;
        while (j > 0 && sim->spawn_tick[sim->spawn_order[j - 1]] > sim->spawn_tick[v]) {
            sim->spawn_order[j] = sim->spawn_order[j - 1];
            j--;
        }
        sim->spawn_order[j] = v;
    }
    return 1;
}

dg_status dg_sim_new(const dg_sim_scenario *scn, const dg_sim_inject *inj, dg_sim **out, dg_error *err)
{
    if (out)
        *out = NULL;
    if (!scn || !out)
        return dg_error_set(err, DG_E_USAGE, DG_OFFSET_NONE, "dg_sim_new", "NULL argument");
    dg_sim *sim = calloc(1, sizeof *sim);
    if (!sim)
        return dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, "dg_sim_new", "out of memory");
    sim->scn = scn;
    if (inj)
        sim->inj = *inj;
    const dg_sim_session *ss = &scn->session;
    sim->dt = 1.0 / (double)ss->tick_rate_hz;
    sim->seed = (sim->inj.flags & DG_SIM_INJ_CLOCK_SEED) ? clock_seed(ss->seed) : ss->seed;
    sim->rng = sim->seed;
    int libm = (sim->inj.flags & DG_SIM_INJ_LIBM_TRIG) != 0;
    sim->sin_fn = libm ? libm_sin : dg_sim__sin;
    sim->cos_fn = libm ? libm_cos : dg_sim__cos;
    sim->atan2_fn = libm ? libm_atan2 : dg_sim__atan2;
    dg_sim_scenario_local_frame(scn, sim->frame_o, sim->frame_e, sim->frame_n, sim->frame_u);
    sim->next_fresh_id = scn->max_declared_id + 1;
    if (!build_schedule(sim) || !build_spawn_order(sim) || !reserve_entities(sim, scn->nentities + 1)) {
        dg_sim_free(sim);
        return dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, "dg_sim_new", "out of memory");
    }
    run_timeline(sim);
    end_of_tick(sim);
    if (sim->oom) {
        dg_sim_free(sim);
        return dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, "dg_sim_new", "out of memory at tick 0");
    }
    *out = sim;
    return DG_OK;
}

void dg_sim_free(dg_sim *sim)
{
    if (!sim)
        return;
    while (sim->chunks) {
        pool_chunk *n = sim->chunks->next;
        free(sim->chunks);
        sim->chunks = n;
    }
    free(sim->ents);
    free(sim->recs);
    free(sim->evs);
    free(sim->spawn_tick);
    free(sim->spawn_order);
    free(sim->sched);
    free(sim->sched_pil);
    free(sim->sched_inp);
    free(sim->cnt_pil);
    free(sim->cnt_inp);
    free(sim->hits);
    free(sim->cand);
    free(sim);
}

dg_status dg_sim_step(dg_sim *sim, dg_error *err)
{
    if (!sim)
        return dg_error_set(err, DG_E_USAGE, DG_OFFSET_NONE, "dg_sim_step", "NULL sim");
    if (sim->oom)
        return dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, "dg_sim_step", "out of memory earlier");
    if (dg_sim_done(sim))
        return dg_error_set(err, DG_E_STATE, DG_OFFSET_NONE, "dg_sim_step",
                            "expected a tick before the end (%llu), found the session already finished",
                            (unsigned long long)sim->scn->session.duration_ticks);
    sim->tick++;
    sim->nev = 0;
    for (size_t i = 0; i < sim->n; i++)
        dgv_copy(sim->recs[i]->prev_pos, sim->ents[i].pos);
    run_timeline(sim);
    step_all(sim);
    resolve_hits(sim);
    expire_and_crash(sim);
    end_of_tick(sim);
    if (sim->oom)
        return dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, "dg_sim_step", "out of memory at tick %llu",
                            (unsigned long long)sim->tick);
    return DG_OK;
}

uint64_t dg_sim_tick(const dg_sim *sim) { return sim->tick; }

bool dg_sim_done(const dg_sim *sim) { return sim->tick + 1 >= sim->scn->session.duration_ticks; }

const dg_sim_entity *dg_sim_entities(const dg_sim *sim, size_t *count)
{
    if (count)
        *count = sim->n;
    return sim->ents;
}

const dg_sim_event *dg_sim_events(const dg_sim *sim, size_t *count)
{
    if (count)
        *count = sim->nev;
    return sim->evs;
}

uint64_t dg_sim_seed_used(const dg_sim *sim) { return sim->seed; }

bool dg_sim_bitflip_applied(const dg_sim *sim) { return sim->bitflip_done != 0; }
