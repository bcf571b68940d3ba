/* chipmunk_adapter.c — runs a Chipmunk2D scenario file at a fixed step and writes detgate's state stream
 * (JSON Lines, CSV or binary v2, docs/STATES-STREAM.md) once per tick, one entity per body with the scenario's id. */
#include <chipmunk/chipmunk.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CA_MAX_BODIES 4096

/* the declared schema (docs/STATES-STREAM.md, "Declared fields"; the same as detgate.ini's [schema]):
 * the standard pos, vel, rot and Chipmunk's own angular velocity, sleep state, body type (named as
 * cpBodyType orders them) and arbiter count; 1/1024 m and m/s, 1/4096 rad/s (docs/ENGINES-examples.md) */
#define CA_POS_Q "0.0009765625"
#define CA_VEL_Q "0.0009765625"
#define CA_ANGVEL_Q "0.000244140625"
static const char *const ca_kind_name[] = {"dynamic", "kinematic", "static"}; /* CP_BODY_TYPE_* */

enum ca_shape { CA_BOX = 0, CA_CIRCLE = 1, CA_LINK = 2, CA_PROJECTILE = 3 };

typedef struct {
    unsigned id;
    int shape;
    double pos[2], size[2], vel[2], mass;
    long spawn_tick;   /* -1: present from tick 0 */
    long remove_tick;  /* -1: never removed */
    unsigned joint_to; /* chain: pivot joint to this id (0 none, ~0u the static body) */
    double anchor[2];
    int line; /* where it was declared, for errors */
} ca_body_spec;

typedef struct {
    double hz;
    long ticks;
    unsigned long seed;
    double gravity[2];
    int ground, iterations;
    char name[64];
    size_t n;
    ca_body_spec b[CA_MAX_BODIES];
} ca_scenario;

typedef struct {
    cpSpace *space;
    cpShape *ground;
    cpBody *body[CA_MAX_BODIES];
    cpShape *shape[CA_MAX_BODIES];
    cpConstraint *joint[CA_MAX_BODIES];
} ca_world;

typedef struct {
    int csv, bin, hash_index, reverse;
} ca_options;

static int ca_fail(const char *file, int line, const char *what) {
    fprintf(stderr, "chipmunk_adapter: %s:%d: %s\n", file, line, what);
    return -1;
}

/* deterministic LCG for the scenario's own scatter */
static double ca_rand01(unsigned long *s) {
    *s = (*s * 6364136223846793005ul + 1442695040888963407ul);
    return (double)((*s >> 11) & ((1ul << 53) - 1)) / (double)(1ul << 53);
}

static ca_body_spec *ca_add(ca_scenario *sc, const char *file, int line, unsigned id, int shape, long at) {
    if (sc->n >= CA_MAX_BODIES) {
        ca_fail(file, line, "too many bodies (limit 4096)");
        return NULL;
    }
    ca_body_spec *b = &sc->b[sc->n++];
    memset(b, 0, sizeof *b);
    b->line = line;
    b->id = id; b->shape = shape; b->spawn_tick = at; b->remove_tick = -1; b->mass = 1.0;
    return b;
}

/* pyramid BASE N X Y SIZE: N layers of boxes, ids BASE.. */
static int ca_pyramid(ca_scenario *sc, const char *f, int ln, const double *v, long at) {
    unsigned id = (unsigned)v[0];
    int n = (int)v[1];
    double s = v[4];
    for (int layer = 0; layer < n; layer++)
        for (int k = 0; k < n - layer; k++) {
            ca_body_spec *b = ca_add(sc, f, ln, id++, CA_BOX, at);
            if (!b) return -1;
            b->pos[0] = v[2] + (k - (n - layer - 1) * 0.5) * s * 1.02;
            b->pos[1] = v[3] + s * 0.5 + layer * s;
            b->size[0] = b->size[1] = s;
        }
    return 0;
}

/* chain BASE N X Y LINK: N links along +x pinned to the static body at (X,Y) */
static int ca_chain(ca_scenario *sc, const char *f, int ln, const double *v, long at) {
    unsigned id = (unsigned)v[0];
    double link = v[4];
    for (int k = 0; k < (int)v[1]; k++) {
        ca_body_spec *b = ca_add(sc, f, ln, id + (unsigned)k, CA_LINK, at);
        if (!b) return -1;
        b->mass = 0.5;
        b->pos[0] = v[2] + (k + 0.5) * link; b->pos[1] = v[3];
        b->size[0] = link * 0.9; b->size[1] = link * 0.2;
        b->joint_to = k == 0 ? ~0u : id + (unsigned)k - 1;
        b->anchor[0] = v[2] + k * link; b->anchor[1] = v[3];
    }
    return 0;
}

/* scatter BASE N X0 Y0 X1 Y1 R: N circles at seeded positions in the rectangle */
static int ca_scatter(ca_scenario *sc, const char *f, int ln, const double *v, long at) {
    unsigned long s = sc->seed ^ (unsigned long)v[0];
    for (int k = 0; k < (int)v[1]; k++) {
        ca_body_spec *b = ca_add(sc, f, ln, (unsigned)v[0] + (unsigned)k, CA_CIRCLE, at);
        if (!b) return -1;
        for (int a = 0; a < 2; a++) b->pos[a] = v[2 + a] + (v[4 + a] - v[2 + a]) * ca_rand01(&s);
        b->size[0] = v[6] * (0.6 + 0.4 * ca_rand01(&s));
    }
    return 0;
}

static ca_body_spec *ca_find(ca_scenario *sc, unsigned id) {
    for (size_t i = 0; i < sc->n; i++)
        if (sc->b[i].id == id) return &sc->b[i];
    return NULL;
}

static int ca_set(ca_scenario *sc, const char *file, int ln, const char *kw, const double *v, long at) {
    if (!strcmp(kw, "hz")) sc->hz = v[0];
    else if (!strcmp(kw, "ticks")) sc->ticks = (long)v[0];
    else if (!strcmp(kw, "seed")) sc->seed = (unsigned long)v[0];
    else if (!strcmp(kw, "gravity")) { sc->gravity[0] = v[0]; sc->gravity[1] = v[1]; }
    else if (!strcmp(kw, "ground")) sc->ground = 1;
    else if (!strcmp(kw, "iterations")) sc->iterations = (int)v[0];
    else if (!strcmp(kw, "pyramid")) return ca_pyramid(sc, file, ln, v, at);
    else if (!strcmp(kw, "chain")) return ca_chain(sc, file, ln, v, at);
    else if (!strcmp(kw, "scatter")) return ca_scatter(sc, file, ln, v, at);
    else if (!strcmp(kw, "remove")) {
        ca_body_spec *b = ca_find(sc, (unsigned)v[0]);
        if (!b) return ca_fail(file, ln, "remove: no body with that id declared above");
        b->remove_tick = (long)v[1];
    } else if (!strcmp(kw, "box")) { /* box ID X Y W H MASS */
        ca_body_spec *b = ca_add(sc, file, ln, (unsigned)v[0], CA_BOX, at);
        if (!b) return -1;
        b->pos[0] = v[1]; b->pos[1] = v[2]; b->size[0] = v[3]; b->size[1] = v[4]; b->mass = v[5];
    } else { /* circle ID X Y R MASS / projectile ID X Y R VX VY */
        int proj = !strcmp(kw, "projectile");
        ca_body_spec *b = ca_add(sc, file, ln, (unsigned)v[0], proj ? CA_PROJECTILE : CA_CIRCLE, at);
        if (!b) return -1;
        b->pos[0] = v[1]; b->pos[1] = v[2]; b->size[0] = v[3];
        if (proj) { b->mass = 0.2; b->vel[0] = v[4]; b->vel[1] = v[5]; }
        else b->mass = v[4];
    }
    return 0;
}

/* one scenario line; numbers after the keyword go to v[] */
static int ca_parse_line(ca_scenario *sc, const char *file, int ln, char *line) {
    char *save = NULL, *kw = strtok_r(line, " \t\r\n", &save);
    long at = -1;
    if (!kw || kw[0] == '#') return 0;
    if (!strcmp(kw, "at")) { /* at TICK <body line>: spawned mid-run */
        char *t = strtok_r(NULL, " \t\r\n", &save), *end = NULL;
        at = t ? strtol(t, &end, 10) : -1;
        if (!t || *end || at < 0) return ca_fail(file, ln, "at: expected a tick >= 0");
        kw = strtok_r(NULL, " \t\r\n", &save);
        if (!kw) return ca_fail(file, ln, "at: expected a body line after the tick");
    }
    double v[16];
    int nv = 0;
    char *tok, *sval = NULL;
    while ((tok = strtok_r(NULL, " \t\r\n", &save)) && nv < 16) {
        char *end = NULL;
        errno = 0;
        v[nv] = strtod(tok, &end);
        if (*end || errno) { sval = tok; break; }
        nv++;
    }
    static const struct { const char *kw; int n; } arity[] = {
        {"hz", 1}, {"ticks", 1}, {"seed", 1}, {"gravity", 2}, {"ground", 0}, {"iterations", 1},
        {"box", 6}, {"circle", 5}, {"projectile", 6}, {"pyramid", 5}, {"chain", 5}, {"scatter", 7},
        {"remove", 2}, {"name", 0}};
    int want = -1;
    for (size_t i = 0; i < sizeof arity / sizeof arity[0]; i++)
        if (!strcmp(kw, arity[i].kw)) want = arity[i].n;
    if (want < 0) return ca_fail(file, ln, "unknown keyword (expected hz, ticks, seed, gravity, ground, "
                                           "iterations, name, box, circle, projectile, pyramid, chain, "
                                           "scatter, remove, at)");
    if (!strcmp(kw, "name")) {
        static const char word[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_+-";
        if (!sval || nv || strspn(sval, word) != strlen(sval))
            return ca_fail(file, ln, "name: expected one word of A-Z a-z 0-9 _ + - (it names the report)");
        snprintf(sc->name, sizeof sc->name, "%s", sval);
        return 0;
    }
    if (sval || nv != want) {
        char msg[128];
        if (sval) snprintf(msg, sizeof msg, "%s: expected %d numbers, found \"%.40s\"", kw, want, sval);
        else snprintf(msg, sizeof msg, "%s: expected %d numbers, found %d", kw, want, nv);
        return ca_fail(file, ln, msg);
    }
    return ca_set(sc, file, ln, kw, v, at);
}

/* ids >= 1 and distinct; a removed body is never a joint partner (its joint would outlive it) */
static int ca_check(const ca_scenario *sc, const char *file) {
    char msg[128];
    for (size_t i = 0; i < sc->n; i++) {
        const ca_body_spec *b = &sc->b[i];
        if (b->id == 0) return ca_fail(file, b->line, "body id 0 (ids are >= 1)");
        for (size_t j = 0; j < i; j++) {
            if (sc->b[j].id == b->id) {
                snprintf(msg, sizeof msg, "body id %u declared twice (first on line %d)", b->id, sc->b[j].line);
                return ca_fail(file, b->line, msg);
            }
        }
        for (size_t j = 0; b->remove_tick >= 0 && j < sc->n; j++)
            if (sc->b[j].joint_to == b->id) {
                snprintf(msg, sizeof msg, "remove: body %u is a joint partner of body %u", b->id, sc->b[j].id);
                return ca_fail(file, b->line, msg);
            }
        if (b->remove_tick >= 0 && b->remove_tick < b->spawn_tick) {
            snprintf(msg, sizeof msg, "remove: body %u removed at tick %ld, before it spawns at %ld", b->id,
                     b->remove_tick, b->spawn_tick);
            return ca_fail(file, b->line, msg);
        }
    }
    if (sc->hz < 1 || sc->hz > 100000 || sc->hz != floor(sc->hz) || sc->ticks <= 0) {
        fprintf(stderr, "chipmunk_adapter: %s: expected an integer hz in 1..100000 (the stream's tick rate) "
                        "and ticks > 0, found hz %g, ticks %ld\n", file, sc->hz,
                sc->ticks);
        return -1;
    }
    return 0;
}

static int ca_load(ca_scenario *sc, const char *file) {
    FILE *f = fopen(file, "r");
    if (!f) {
        fprintf(stderr, "chipmunk_adapter: %s: %s\n", file, strerror(errno));
        return -1;
    }
    memset(sc, 0, sizeof *sc);
    sc->hz = 60; sc->ticks = 600; sc->gravity[1] = -9.81; sc->iterations = 10; /* cpSpaceNew's default */
    snprintf(sc->name, sizeof sc->name, "chipmunk");
    char line[1024];
    int ln = 0, rc = 0;
    while (!rc && fgets(line, sizeof line, f)) rc = ca_parse_line(sc, file, ++ln, line);
    fclose(f);
    return rc ? rc : ca_check(sc, file);
}

static void ca_spawn(ca_world *w, const ca_scenario *sc, size_t i) {
    const ca_body_spec *s = &sc->b[i];
    cpBody *b;
    cpShape *sh;
    if (s->shape == CA_BOX || s->shape == CA_LINK) {
        b = cpBodyNew(s->mass, cpMomentForBox(s->mass, s->size[0], s->size[1]));
        sh = cpBoxShapeNew(b, s->size[0], s->size[1], 0.0);
    } else {
        b = cpBodyNew(s->mass, cpMomentForCircle(s->mass, 0, s->size[0], cpvzero));
        sh = cpCircleShapeNew(b, s->size[0], cpvzero);
    }
    cpBodySetPosition(b, cpv(s->pos[0], s->pos[1]));
    cpBodySetVelocity(b, cpv(s->vel[0], s->vel[1]));
    cpShapeSetFriction(sh, 0.8);
    if (s->shape == CA_LINK) cpShapeSetFilter(sh, cpShapeFilterNew(1, CP_ALL_CATEGORIES, CP_ALL_CATEGORIES));
    cpSpaceAddBody(w->space, b);
    cpSpaceAddShape(w->space, sh);
    w->body[i] = b;
    w->shape[i] = sh;
    if (s->joint_to) {
        cpBody *other = cpSpaceGetStaticBody(w->space);
        for (size_t k = 0; k < sc->n; k++)
            if (s->joint_to != ~0u && sc->b[k].id == s->joint_to && w->body[k]) other = w->body[k];
        w->joint[i] = cpSpaceAddConstraint(w->space, cpPivotJointNew(b, other, cpv(s->anchor[0], s->anchor[1])));
    }
}

static void ca_despawn(ca_world *w, size_t i) {
    if (w->joint[i]) {
        cpSpaceRemoveConstraint(w->space, w->joint[i]);
        cpConstraintFree(w->joint[i]);
    }
    cpSpaceRemoveShape(w->space, w->shape[i]);
    cpSpaceRemoveBody(w->space, w->body[i]);
    cpShapeFree(w->shape[i]);
    cpBodyFree(w->body[i]);
    w->body[i] = NULL; w->shape[i] = NULL; w->joint[i] = NULL;
}

static void ca_header(FILE *out, const ca_scenario *sc, int csv) {
    if (csv) { /* CSV has no header object: tick rate 60 Hz is detgate's default (checked in main) */
        fputs("#! schema standard=pos,vel,rot position_quantum=" CA_POS_Q " velocity_quantum=" CA_VEL_Q "\n"
              "#! field angvel type=float unit=rad/s quantum=" CA_ANGVEL_Q "\n"
              "#! field awake type=bool\n"
              "#! field kind type=enum values=dynamic,kinematic,static\n"
              "#! field contacts type=uint bits=16\n"
              "tick,id,px,py,pz,vx,vy,vz,qw,qx,qy,qz,angvel,awake,kind,contacts\n",
              out);
        return;
    }
    fprintf(out, "{\"detgate_states\":1,\"scenario\":\"%s\",\"tick_rate_hz\":%.0f,"
                 "\"schema\":{\"standard\":\"pos,vel,rot\",\"position_quantum\":" CA_POS_Q
                 ",\"velocity_quantum\":" CA_VEL_Q ",\"fields\":["
                 "{\"name\":\"angvel\",\"type\":\"float\",\"unit\":\"rad/s\",\"quantum\":" CA_ANGVEL_Q "},"
                 "{\"name\":\"awake\",\"type\":\"bool\"},"
                 "{\"name\":\"kind\",\"type\":\"enum\",\"values\":\"dynamic,kinematic,static\"},"
                 "{\"name\":\"contacts\",\"type\":\"uint\",\"bits\":16}]}}\n",
            sc->name, sc->hz);
}

static void ca_count_arbiter(cpBody *b, cpArbiter *arb, void *n) {
    (void)b; (void)arb;
    ++*(unsigned *)n;
}

/* the 2-D world in the x-y plane: z = 0, the angle a rotation about z (w = cos a/2, z = sin a/2);
 * %.17g keeps every double bit-exact through strtod */
static void ca_write_tick(FILE *out, const ca_world *w, const ca_scenario *sc, long tick, int csv) {
    if (!csv) fprintf(out, "{\"tick\":%ld,\"entities\":[", tick);
    int first = 1;
    for (size_t i = 0; i < sc->n; i++) {
        cpBody *b = w->body[i];
        if (!b) continue;
        cpVect p = cpBodyGetPosition(b), v = cpBodyGetVelocity(b);
        double a = cpBodyGetAngle(b), qw = cos(a / 2), qz = sin(a / 2);
        double av = cpBodyGetAngularVelocity(b);
        const char *awake = cpBodyIsSleeping(b) ? "false" : "true";
        const char *kind = ca_kind_name[cpBodyGetType(b)];
        unsigned contacts = 0;
        cpBodyEachArbiter(b, ca_count_arbiter, &contacts);
        if (contacts > 65535u) contacts = 65535u; /* the declared 16 bits; a body never has that many */
        if (csv)
            fprintf(out, "%ld,%u,%.17g,%.17g,0,%.17g,%.17g,0,%.17g,0,0,%.17g,%.17g,%s,%s,%u\n", tick,
                    sc->b[i].id, p.x, p.y, v.x, v.y, qw, qz, av, awake, kind, contacts);
        else
            fprintf(out, "%s{\"id\":%u,\"pos\":[%.17g,%.17g,0],\"vel\":[%.17g,%.17g,0],"
                         "\"rot\":[%.17g,0,0,%.17g],\"angvel\":%.17g,\"awake\":%s,\"kind\":\"%s\","
                         "\"contacts\":%u}",
                    first ? "" : ",", sc->b[i].id, p.x, p.y, v.x, v.y, qw, qz, av, awake, kind, contacts);
        first = 0;
    }
    if (!csv) fputs("]}\n", out);
}

/* binary stream v2 (docs/STATES-STREAM.md, "Binary (version 2)"): little-endian, byte by byte */
static unsigned char *ca_le(unsigned char *p, uint64_t x, int n) {
    for (int i = 0; i < n; i++) *p++ = (unsigned char)(x >> (8 * i));
    return p;
}
static unsigned char *ca_f64(unsigned char *p, double d) {
    uint64_t bits;
    memcpy(&bits, &d, sizeof bits);
    return ca_le(p, bits, 8);
}
static unsigned char *ca_str8(unsigned char *p, const char *s) {
    size_t n = strlen(s);
    *p++ = (unsigned char)n;
    memcpy(p, s, n);
    return p + n;
}
/* one declared field: type (3 float, 4 bool, 5 enum, 2 uint), bits, quantum, name, unit, enum names */
static unsigned char *ca_bin_field(unsigned char *p, int type, int bits, double q, const char *name, const char *unit,
                                   int nvalues) {
    p = ca_le(p, (uint64_t)type, 1);
    p = ca_le(p, (uint64_t)bits, 1);
    p = ca_f64(p, q);
    p = ca_str8(ca_str8(p, name), unit);
    p = ca_le(p, (uint64_t)nvalues, 2);
    for (int i = 0; i < nvalues; i++) p = ca_str8(p, ca_kind_name[i]);
    return p;
}

/* the same schema as ca_header's, as the v2 header block */
static void ca_header_bin(FILE *out, const ca_scenario *sc) {
    unsigned char h[512], *p = h + 16;
    p = ca_f64(p, 0);                 /* planetRadiusM: none */
    p = ca_le(p, 0x1c, 1);            /* stdMask: pos, vel, rot */
    p = ca_f64(p, atof(CA_POS_Q));
    p = ca_f64(p, atof(CA_VEL_Q));
    p = ca_le(p, 4, 1);               /* fieldCount */
    p = ca_bin_field(p, 3, 0, atof(CA_ANGVEL_Q), "angvel", "rad/s", 0);
    p = ca_bin_field(p, 4, 0, 0, "awake", "", 0);
    p = ca_bin_field(p, 5, 0, 0, "kind", "", 3);
    p = ca_bin_field(p, 2, 16, 0, "contacts", "", 0);
    p = ca_le(p, 0, 6);               /* no type, faction or participant table */
    unsigned char *q = ca_le(h, 0x53474489u, 4); /* \x89DGS */
    q = ca_le(q, 2, 2);
    q = ca_le(q, 0, 2);
    q = ca_le(q, (uint64_t)sc->hz, 4);
    ca_le(q, (uint64_t)(p - h - 16), 4);
    fwrite(h, 1, (size_t)(p - h), out);
}

static void ca_write_tick_bin(FILE *out, const ca_world *w, const ca_scenario *sc, long tick) {
    unsigned char rec[98 + 4 * 8], *p = rec;
    uint32_t count = 0;
    for (size_t i = 0; i < sc->n; i++) count += w->body[i] != NULL;
    p = ca_le(ca_le(ca_le(ca_le(rec, 1, 1), (uint64_t)tick, 8), count, 4), 0, 4); /* tick, count, no events */
    fwrite(rec, 1, (size_t)(p - rec), out);
    for (size_t i = 0; i < sc->n; i++) {
        cpBody *b = w->body[i];
        if (!b) continue;
        cpVect pos = cpBodyGetPosition(b), v = cpBodyGetVelocity(b);
        double a = cpBodyGetAngle(b);
        unsigned contacts = 0;
        cpBodyEachArbiter(b, ca_count_arbiter, &contacts);
        if (contacts > 65535u) contacts = 65535u;
        p = ca_le(ca_le(rec, sc->b[i].id, 4), 0, 6); /* type, faction, flags: absent */
        const double f[11] = {pos.x, pos.y, 0, v.x, v.y, 0, cos(a / 2), 0, 0, sin(a / 2), 0};
        for (int k = 0; k < 11; k++) p = ca_f64(p, f[k]);
        p = ca_f64(p, cpBodyGetAngularVelocity(b));
        p = ca_le(p, !cpBodyIsSleeping(b), 8);
        p = ca_le(p, (uint64_t)cpBodyGetType(b), 8);
        p = ca_le(p, contacts, 8);
        fwrite(rec, 1, sizeof rec, out);
    }
}

/* spawns and removals due at this tick happen before it is written; --reverse-insert adds a tick's
 * new bodies to the space last-declared first (what an unordered container does to insertion order) */
static void ca_apply_schedule(ca_world *w, const ca_scenario *sc, long tick, int reverse) {
    for (size_t k = 0; k < sc->n; k++) {
        size_t i = reverse ? sc->n - 1 - k : k;
        int due = sc->b[i].spawn_tick == tick || (tick == 0 && sc->b[i].spawn_tick < 0);
        if (due && !(reverse && sc->b[i].joint_to)) ca_spawn(w, sc, i);
    }
    for (size_t i = 0; i < sc->n; i++) { /* jointed bodies in declared order: a joint needs its partner */
        int due = sc->b[i].spawn_tick == tick || (tick == 0 && sc->b[i].spawn_tick < 0);
        if (due && reverse && sc->b[i].joint_to) ca_spawn(w, sc, i);
        if (sc->b[i].remove_tick == tick && w->body[i]) ca_despawn(w, i);
    }
}

static int ca_run(const ca_scenario *sc, FILE *out, const ca_options *o) {
    static ca_world w;
    memset(&w, 0, sizeof w);
    w.space = cpSpaceNew();
    cpSpaceSetGravity(w.space, cpv(sc->gravity[0], sc->gravity[1]));
    cpSpaceSetIterations(w.space, sc->iterations);
    cpSpaceSetSleepTimeThreshold(w.space, 0.5);
    if (o->hash_index) cpSpaceUseSpatialHash(w.space, 1.0, 4096);
    if (sc->ground) {
        w.ground = cpSegmentShapeNew(cpSpaceGetStaticBody(w.space), cpv(-1000, 0), cpv(1000, 0), 0);
        cpShapeSetFriction(w.ground, 0.8);
        cpSpaceAddShape(w.space, w.ground);
    }
    if (o->bin) ca_header_bin(out, sc);
    else ca_header(out, sc, o->csv);
    for (long t = 0; t < sc->ticks; t++) {
        if (t > 0) cpSpaceStep(w.space, 1.0 / sc->hz);
        ca_apply_schedule(&w, sc, t, o->reverse);
        if (o->bin) ca_write_tick_bin(out, &w, sc, t);
        else ca_write_tick(out, &w, sc, t, o->csv);
    }
    if (o->bin) fputc(0x00, out); /* the end record: the stream is complete */
    for (size_t i = 0; i < sc->n; i++)
        if (w.body[i]) ca_despawn(&w, i);
    if (w.ground) {
        cpSpaceRemoveShape(w.space, w.ground);
        cpShapeFree(w.ground);
    }
    cpSpaceFree(w.space);
    return ferror(out) ? -1 : 0;
}

/* A Chipmunk built without NDEBUG (Debian's 7.0.3 is) printf()s a two-line banner to stdout at the
 * first cpSpaceNew of a process (cpSpaceInit, src/cpSpace.c): it would be read as the first lines of a
 * stream on stdout. Create and free one space with stdout pointed at stderr, so the banner goes there. */
static int ca_banner_to_stderr(void) {
    fflush(stdout);
    int saved = dup(STDOUT_FILENO);
    if (saved < 0 || dup2(STDERR_FILENO, STDOUT_FILENO) < 0) return -1;
    cpSpaceFree(cpSpaceNew());
    fflush(stdout);
    int rc = dup2(saved, STDOUT_FILENO) < 0 ? -1 : 0;
    close(saved);
    return rc;
}

static int ca_usage(void) {
    fputs("usage: chipmunk_adapter SCENARIO [--csv|--bin] [--index bbtree|hash] [--reverse-insert] [-o FILE]\n"
          "  writes the state stream (JSON Lines, CSV with --csv, binary v2 with --bin) to FILE (stdout without -o);\n"
          "  --index hash calls cpSpaceUseSpatialHash (the default index is the BB tree);\n"
          "  --reverse-insert adds each tick's new bodies in reverse declaration order\n",
          stderr);
    return 2;
}

/* The state stream's buffer: stdio's default for a pipe is 4 KiB, one write(2) per 4 KiB of the
 * ~31 KB a tick of the long scenario takes, each waking the reader (detgate) and taking the pipe's
 * lock against it; 256 KiB (a quarter of the 1 MiB pipe detgate asks for) is ~330 writes instead of
 * ~20,700 for the long scenario and 6-7 % of the adapter's CPU under `detgate verify`. */
static char ca_outbuf[1 << 18];

int main(int argc, char **argv) {
    const char *scn = NULL, *outp = NULL;
    ca_options o = {0, 0, 0, 0};
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--csv")) o.csv = 1;
        else if (!strcmp(argv[i], "--bin")) o.bin = 1;
        else if (!strcmp(argv[i], "--reverse-insert")) o.reverse = 1;
        else if (!strcmp(argv[i], "--index") && i + 1 < argc) {
            const char *v = argv[++i];
            if (strcmp(v, "bbtree") && strcmp(v, "hash")) return ca_usage();
            o.hash_index = !strcmp(v, "hash");
        } else if (!strcmp(argv[i], "-o") && i + 1 < argc && !outp) outp = argv[++i];
        else if (argv[i][0] != '-' && !scn) scn = argv[i];
        else return ca_usage();
    }
    if (!scn) return ca_usage();
    static ca_scenario sc;
    if (ca_load(&sc, scn)) return 2;
    if (o.csv && sc.hz != 60) {
        fprintf(stderr, "chipmunk_adapter: %s: --csv needs hz 60 (CSV carries no tick rate; detgate reads it "
                        "as 60 Hz), found hz %g: use JSON Lines\n", scn, sc.hz);
        return 2;
    }
    if (!outp) setvbuf(stdout, ca_outbuf, _IOFBF, sizeof ca_outbuf); /* before any output, the banner's too */
    if (ca_banner_to_stderr()) {
        fprintf(stderr, "chipmunk_adapter: could not redirect stdout: %s\n", strerror(errno));
        return 125;
    }
    FILE *out = outp ? fopen(outp, "w") : stdout;
    if (!out) {
        fprintf(stderr, "chipmunk_adapter: %s: %s\n", outp, strerror(errno));
        return 2;
    }
    if (outp) setvbuf(out, ca_outbuf, _IOFBF, sizeof ca_outbuf);
    int rc = ca_run(&sc, out, &o) ? 125 : 0;
    if (out != stdout && fclose(out)) rc = 125;
    return rc;
}
