/* harness/source_scenario.c — the harness's scenario source: a .scn script run through sim_stub,
 * tick by tick, turned into the float-domain entity states and events the codec takes, with the raw
 * float hash of exactly those floats (so a sub-quantum drift is seen by the record side). */
#include "harness_internal.h"

#include <stdlib.h>
#include <string.h>

#include "detgate/sim.h"
#include "builtin_inject.h"

typedef struct scn_source {
    dg_sim_scenario *scn;
    dg_sim *sim;
    dg_sim_inject inj;
    bool started;
    dg_entity_in *ents;
    size_t cap_ents;
    dg_event *events;
    size_t cap_events;
    dg_flrep_type *types;
    dg_flrep_faction *factions;
    dg_flrep_participant *roster;
    dg_flrep_mission_object *objects;
} scn_source;

/* sim_stub and .flrep number categories differently; .flrep's numbering is the file's contract. */
static uint8_t flrep_category(uint8_t sim_cat)
{
    switch (sim_cat) {
    case DG_SIM_CAT_AIRCRAFT: return 1;
    case DG_SIM_CAT_MISSILE: return 2;
    case DG_SIM_CAT_GROUND: return 3;
    case DG_SIM_CAT_STATIC: return 4;
    case DG_SIM_CAT_CHARACTER: return 5;
    default: return 0;
    }
}

static uint8_t flrep_projectile(uint8_t sim_proj)
{
    /* sim_stub's ballistic projectiles are unguided rockets in the .flrep vocabulary. */
    return sim_proj == DG_SIM_PROJ_GUIDED ? 1 : sim_proj == DG_SIM_PROJ_BALLISTIC ? 2 : 0;
}

static dg_status build_tables(harness__source *s, scn_source *p, uint32_t keyframe, dg_error *err)
{
    size_t nt = 0, nf = 0, nr = 0, no = 0;
    const dg_sim_type *t = dg_sim_scenario_types(p->scn, &nt);
    const dg_sim_faction *f = dg_sim_scenario_factions(p->scn, &nf);
    const dg_sim_roster_entry *r = dg_sim_scenario_roster(p->scn, &nr);
    const dg_sim_object *o = dg_sim_scenario_objects(p->scn, &no);
    p->types = calloc(nt ? nt : 1, sizeof *p->types);
    p->factions = calloc(nf ? nf : 1, sizeof *p->factions);
    p->roster = calloc(nr ? nr : 1, sizeof *p->roster);
    p->objects = calloc(no ? no : 1, sizeof *p->objects);
    if (!p->types || !p->factions || !p->roster || !p->objects)
        return dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, s->name, "out of memory (scenario tables)");
    for (size_t i = 0; i < nt; i++)
        p->types[i] = (dg_flrep_type){t[i].index, dg_flrep_cstr(t[i].id), dg_flrep_cstr(t[i].name),
                                      flrep_category(t[i].category), flrep_projectile(t[i].projectile)};
    for (size_t i = 0; i < nf; i++)
        p->factions[i] = (dg_flrep_faction){f[i].index, dg_flrep_cstr(f[i].id), dg_flrep_cstr(f[i].name)};
    for (size_t i = 0; i < nr; i++)
        p->roster[i] = (dg_flrep_participant){r[i].participant_id, r[i].entity_id, dg_flrep_cstr(r[i].callsign)};
    for (size_t i = 0; i < no; i++)
        p->objects[i] = (dg_flrep_mission_object){dg_flrep_cstr(o[i].id), o[i].entity_id};

    const dg_sim_session *ss = dg_sim_scenario_session(p->scn);
    dg_flrep_header *h = &s->hdr;
    memset(h, 0, sizeof *h);
    h->major = DG_FLREP_MAJOR;
    h->minor = DG_FLREP_MINOR;
    h->engine_version = dg_flrep_cstr(HARNESS_VERSION " sim_stub");
    h->tick_rate_hz = ss->tick_rate_hz;
    h->planet_radius_m = ss->planet_radius_m;
    h->start_unix_seconds = ss->start_unix;
    h->mission_id = dg_flrep_cstr(ss->mission_id);
    h->session_flags = ss->mission_id[0] ? 1u : 0u;
    h->keyframe_interval_ticks = keyframe ? keyframe : ss->keyframe_interval;
    h->types = p->types;
    h->type_count = nt;
    h->factions = p->factions;
    h->faction_count = nf;
    h->participants = p->roster;
    h->participant_count = nr;
    h->mission_objects = p->objects;
    h->mission_object_count = no;
    s->expected_ticks = ss->duration_ticks;
    s->has_frame = true;
    dg_sim_scenario_local_frame(p->scn, s->frame_origin, s->frame_east, s->frame_north, s->frame_up);
    return DG_OK;
}

static dg_status grow(void **arr, size_t *cap, size_t need, size_t elem, dg_error *err)
{
    return dg_grow(arr, cap, need, elem)
               ? DG_OK
               : dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, "scenario source", "out of memory");
}

static dg_status fill_frame(scn_source *p, harness__frame *f, bool raw_later, dg_error *err)
{
    size_t n = 0, nev = 0;
    const dg_sim_entity *se = dg_sim_entities(p->sim, &n);
    const dg_sim_event *sv = dg_sim_events(p->sim, &nev);
    if (grow((void **)&p->ents, &p->cap_ents, n, sizeof *p->ents, err) != DG_OK ||
        grow((void **)&p->events, &p->cap_events, nev, sizeof *p->events, err) != DG_OK)
        return err->code;
    uint64_t tick = dg_sim_tick(p->sim);
    for (size_t i = 0; i < n; i++) {
        dg_entity_in *e = &p->ents[i];
        e->id = se[i].id;
        e->type_index = se[i].type_index;
        e->faction_index = se[i].faction_index;
        memcpy(e->pos, se[i].pos, sizeof e->pos);
        memcpy(e->vel, se[i].vel, sizeof e->vel);
        memcpy(e->rot, se[i].rot, sizeof e->rot);
        e->health = se[i].health;
        e->flags = se[i].flags;
    }
    for (size_t i = 0; i < nev; i++) {
        dg_event *v = &p->events[i];
        memset(v, 0, sizeof *v);
        v->kind = sv[i].kind;
        v->tick = tick;
        v->a = sv[i].a;
        v->b = sv[i].b;
        v->c = sv[i].c;
        v->d = sv[i].d;
        v->text = sv[i].text;
        v->text_len = sv[i].text_len;
    }
    f->tick = tick;
    f->ents = p->ents;
    f->n = n;
    f->events = p->events;
    f->nev = nev;
    f->has_raw = true;
    f->raw_later = raw_later;
    f->raw = raw_later ? 0 : dg_harness__raw_hash(tick, p->ents, n);
    return DG_OK;
}

static int scn_next(harness__source *s, harness__frame *f, dg_error *err)
{
    scn_source *p = s->impl;
    if (p->started) {
        if (dg_sim_done(p->sim))
            return 0;
        if (dg_sim_step(p->sim, err) != DG_OK)
            return -1;
    }
    p->started = true;
    return fill_frame(p, f, s->raw_later_ok, err) == DG_OK ? 1 : -1;
}

static dg_status scn_rewind(harness__source *s, dg_error *err)
{
    scn_source *p = s->impl;
    dg_sim_free(p->sim);
    p->sim = NULL;
    p->started = false;
    return dg_sim_new(p->scn, &p->inj, &p->sim, err);
}

static void scn_destroy(harness__source *s)
{
    scn_source *p = s->impl;
    if (!p)
        return;
    dg_sim_free(p->sim);
    dg_sim_scenario_free(p->scn);
    free(p->ents);
    free(p->events);
    free(p->types);
    free(p->factions);
    free(p->roster);
    free(p->objects);
    free(p);
}

dg_status dg_harness__source_scenario(harness__source **out, const char *path, const char *inject,
                                   uint32_t keyframe, dg_error *err)
{
    *out = NULL;
    harness__source *s = calloc(1, sizeof *s);
    scn_source *p = calloc(1, sizeof *p);
    if (!s || !p) {
        free(s);
        free(p);
        return dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, path, "out of memory");
    }
    s->impl = p;
    s->next = scn_next;
    s->rewind = scn_rewind;
    s->destroy = scn_destroy;
    dg_harness__scenario_name(path, s->name, sizeof s->name);
    /* A build may carry a compiled-in injection (builtin_inject.h): the bisect test breaks one
     * commit this way. An explicit --inject replaces it. */
    const char *spec = (inject && inject[0]) ? inject : DG_HARNESS_BUILTIN_INJECT;
    dg_status st = dg_sim_inject_parse(spec, &p->inj, err);
    if (st == DG_OK)
        st = dg_sim_scenario_parse_file(path, &p->scn, err);
    if (st == DG_OK)
        st = build_tables(s, p, keyframe, err);
    if (st == DG_OK)
        st = dg_sim_new(p->scn, &p->inj, &p->sim, err);
    if (st != DG_OK) {
        dg_harness__source_free(s);
        return st;
    }
    *out = s;
    return DG_OK;
}


void dg_harness__source_free(harness__source *s)
{
    if (!s)
        return;
    if (s->destroy)
        s->destroy(s);
    dg_harness__decl_free(&s->decl);
    free(s);
}
