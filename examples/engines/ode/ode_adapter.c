/* ode_adapter.c — runs an ODE scenario file at a fixed step and writes detgate's state stream
 * (JSON Lines, docs/STATES-STREAM.md) once per tick, one entity per body with the scenario's id. */
#include <errno.h>
#include <math.h>
#include <ode/ode.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OA_MAX_BODIES 4096
#define OA_MAX_CONTACTS 8

/* the declared schema (docs/STATES-STREAM.md, "Declared fields"; the same as detgate.ini's [schema]):
 * the standard pos, vel, rot and ODE's own angular velocity per axis, enabled state (auto-disable) and
 * body kind (ODE's bodies are dynamic or kinematic; static geometry has no body); 1/1024 m and m/s,
 * 1/4096 rad/s (docs/ENGINES-examples.md) */
#define OA_POS_Q "0.0009765625"
#define OA_VEL_Q "0.0009765625"
#define OA_ANGVEL_Q "0.000244140625"

enum oa_shape { OA_BOX = 0, OA_SPHERE = 1, OA_CAPSULE = 2, OA_PROJECTILE = 3 };

typedef struct {
    unsigned id;
    int shape;
    double pos[3], size[3], vel[3], mass;
    long spawn_tick;   /* -1: present from tick 0 */
    long remove_tick;  /* -1: never removed */
    unsigned joint_to; /* chain: ball joint to this id (0 none, ~0u the world) */
    double anchor[3];
    int line; /* where it was declared, for errors */
} oa_body_spec;

typedef struct {
    double hz;
    long ticks;
    unsigned long seed;
    double gravity[3];
    int ground;
    int iterations;
    char name[64];
    size_t n;
    oa_body_spec b[OA_MAX_BODIES];
} oa_scenario;

typedef struct {
    dWorldID world;
    dSpaceID space;
    dJointGroupID contacts;
    dBodyID body[OA_MAX_BODIES];
    dGeomID geom[OA_MAX_BODIES];
    dJointID joint[OA_MAX_BODIES];
} oa_world;

static int oa_fail(const char *file, int line, const char *what) {
    fprintf(stderr, "ode_adapter: %s:%d: %s\n", file, line, what);
    return -1;
}

/* deterministic LCG for the scenario's own scatter (independent of ODE's dRand) */
static double oa_rand01(unsigned long *s) {
    *s = (*s * 6364136223846793005ul + 1442695040888963407ul);
    return (double)((*s >> 11) & ((1ul << 53) - 1)) / (double)(1ul << 53);
}

static oa_body_spec *oa_add(oa_scenario *sc, const char *file, int line) {
    if (sc->n >= OA_MAX_BODIES) {
        oa_fail(file, line, "too many bodies (limit 4096)");
        return NULL;
    }
    oa_body_spec *b = &sc->b[sc->n++];
    memset(b, 0, sizeof *b);
    b->line = line;
    b->spawn_tick = -1;
    b->remove_tick = -1;
    return b;
}

static oa_body_spec *oa_find(oa_scenario *sc, unsigned id) {
    for (size_t i = 0; i < sc->n; i++)
        if (sc->b[i].id == id) return &sc->b[i];
    return NULL;
}

static int oa_box(oa_scenario *sc, const char *f, int ln, unsigned id, double x, double y, double z, double s,
                  double mass, long at) {
    oa_body_spec *b = oa_add(sc, f, ln);
    if (!b) return -1;
    b->id = id; b->shape = OA_BOX; b->mass = mass; b->spawn_tick = at;
    b->pos[0] = x; b->pos[1] = y; b->pos[2] = z;
    b->size[0] = b->size[1] = b->size[2] = s;
    return 0;
}

/* pyramid BASE N X Y Z SIZE: N layers of boxes in the x-z plane, ids BASE.. */
static int oa_pyramid(oa_scenario *sc, const char *f, int ln, const double *v, long at) {
    unsigned id = (unsigned)v[0];
    int n = (int)v[1];
    double s = v[5];
    for (int layer = 0; layer < n; layer++)
        for (int k = 0; k < n - layer; k++)
            if (oa_box(sc, f, ln, id++, v[2] + (k - (n - layer - 1) * 0.5) * s * 1.02, v[3],
                       v[4] + s * 0.5 + layer * s, s, 1.0, at))
                return -1;
    return 0;
}

/* chain BASE N X Y Z LINK: N capsules hanging along -x from a world anchor at (X,Y,Z) */
static int oa_chain(oa_scenario *sc, const char *f, int ln, const double *v, long at) {
    unsigned id = (unsigned)v[0];
    int n = (int)v[1];
    double link = v[5];
    for (int k = 0; k < n; k++) {
        oa_body_spec *b = oa_add(sc, f, ln);
        if (!b) return -1;
        b->id = id + (unsigned)k; b->shape = OA_CAPSULE; b->mass = 0.5; b->spawn_tick = at;
        b->pos[0] = v[2] + (k + 0.5) * link; b->pos[1] = v[3]; b->pos[2] = v[4];
        b->size[0] = link * 0.15; b->size[1] = link * 0.7;
        b->joint_to = k == 0 ? ~0u : id + (unsigned)k - 1;
        b->anchor[0] = v[2] + k * link; b->anchor[1] = v[3]; b->anchor[2] = v[4];
    }
    return 0;
}

/* scatter BASE N X0 Y0 Z0 X1 Y1 Z1 SIZE: N spheres at seeded positions in the box */
static int oa_scatter(oa_scenario *sc, const char *f, int ln, const double *v, long at) {
    unsigned long s = sc->seed ^ (unsigned long)v[0];
    for (int k = 0; k < (int)v[1]; k++) {
        oa_body_spec *b = oa_add(sc, f, ln);
        if (!b) return -1;
        b->id = (unsigned)v[0] + (unsigned)k; b->shape = OA_SPHERE; b->mass = 1.0; b->spawn_tick = at;
        for (int a = 0; a < 3; a++) b->pos[a] = v[2 + a] + (v[5 + a] - v[2 + a]) * oa_rand01(&s);
        b->size[0] = v[8] * (0.6 + 0.4 * oa_rand01(&s));
    }
    return 0;
}

/* one scenario line; numbers after the keyword go to v[] */
static int oa_parse_line(oa_scenario *sc, const char *file, int ln, char *line) {
    char *save = NULL, *kw = strtok_r(line, " \t\r\n", &save);
    long at = -1;
    if (!kw || kw[0] == '#') return 0;
    if (!strcmp(kw, "at")) { /* at TICK <body line>: spawned mid-run */
        char *t = strtok_r(NULL, " \t\r\n", &save), *end = NULL;
        at = t ? strtol(t, &end, 10) : -1;
        if (!t || *end || at < 0) return oa_fail(file, ln, "at: expected a tick >= 0");
        kw = strtok_r(NULL, " \t\r\n", &save);
        if (!kw) return oa_fail(file, ln, "at: expected a body line after the tick");
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
    struct { const char *kw; int n; } arity[] = {
        {"hz", 1}, {"ticks", 1}, {"seed", 1}, {"gravity", 3}, {"ground", 0}, {"iterations", 1},
        {"box", 6}, {"sphere", 6}, {"projectile", 8}, {"pyramid", 6}, {"chain", 6}, {"scatter", 9},
        {"remove", 2}, {"name", 0}};
    int want = -1;
    for (size_t i = 0; i < sizeof arity / sizeof arity[0]; i++)
        if (!strcmp(kw, arity[i].kw)) want = arity[i].n;
    if (want < 0) return oa_fail(file, ln, "unknown keyword (expected hz, ticks, seed, gravity, ground, "
                                           "iterations, name, box, sphere, projectile, pyramid, chain, "
                                           "scatter, remove, at)");
    if (!strcmp(kw, "name")) {
        static const char word[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_+-";
        if (!sval || nv || strspn(sval, word) != strlen(sval))
            return oa_fail(file, ln, "name: expected one word of A-Z a-z 0-9 _ + - (it names the report)");
        snprintf(sc->name, sizeof sc->name, "%s", sval);
        return 0;
    }
    if (sval || nv != want) {
        char msg[128];
        if (sval) snprintf(msg, sizeof msg, "%s: expected %d numbers, found \"%.40s\"", kw, want, sval);
        else snprintf(msg, sizeof msg, "%s: expected %d numbers, found %d", kw, want, nv);
        return oa_fail(file, ln, msg);
    }
    if (!strcmp(kw, "hz")) sc->hz = v[0];
    else if (!strcmp(kw, "ticks")) sc->ticks = (long)v[0];
    else if (!strcmp(kw, "seed")) sc->seed = (unsigned long)v[0];
    else if (!strcmp(kw, "gravity")) memcpy(sc->gravity, v, sizeof sc->gravity);
    else if (!strcmp(kw, "ground")) sc->ground = 1;
    else if (!strcmp(kw, "iterations")) sc->iterations = (int)v[0];
    else if (!strcmp(kw, "box")) return oa_box(sc, file, ln, (unsigned)v[0], v[1], v[2], v[3], v[4], v[5], at);
    else if (!strcmp(kw, "pyramid")) return oa_pyramid(sc, file, ln, v, at);
    else if (!strcmp(kw, "chain")) return oa_chain(sc, file, ln, v, at);
    else if (!strcmp(kw, "scatter")) return oa_scatter(sc, file, ln, v, at);
    else if (!strcmp(kw, "remove")) {
        oa_body_spec *b = oa_find(sc, (unsigned)v[0]);
        if (!b) return oa_fail(file, ln, "remove: no body with that id declared above");
        b->remove_tick = (long)v[1];
    } else { /* sphere ID X Y Z R MASS / projectile ID X Y Z R MASS VX VY VZ... (8: ID X Y Z R VX VY VZ) */
        oa_body_spec *b = oa_add(sc, file, ln);
        if (!b) return -1;
        b->id = (unsigned)v[0]; b->spawn_tick = at;
        memcpy(b->pos, v + 1, sizeof b->pos);
        b->size[0] = v[4];
        if (!strcmp(kw, "sphere")) { b->shape = OA_SPHERE; b->mass = v[5]; }
        else { b->shape = OA_PROJECTILE; b->mass = 0.2; memcpy(b->vel, v + 5, sizeof b->vel); }
    }
    return 0;
}

/* ids >= 1 and distinct; a removed body is never a joint partner (its joint would outlive it) */
static int oa_check_ids(const oa_scenario *sc, const char *file) {
    char msg[128];
    for (size_t i = 0; i < sc->n; i++) {
        const oa_body_spec *b = &sc->b[i];
        if (b->id == 0) return oa_fail(file, b->line, "body id 0 (ids are >= 1)");
        for (size_t j = 0; j < i; j++) {
            if (sc->b[j].id == b->id) {
                snprintf(msg, sizeof msg, "body id %u declared twice (first on line %d)", b->id, sc->b[j].line);
                return oa_fail(file, b->line, msg);
            }
        }
        for (size_t j = 0; b->remove_tick >= 0 && j < sc->n; j++)
            if (sc->b[j].joint_to == b->id) {
                snprintf(msg, sizeof msg, "remove: body %u is a joint partner of body %u", b->id, sc->b[j].id);
                return oa_fail(file, b->line, msg);
            }
        if (b->remove_tick >= 0 && b->remove_tick < b->spawn_tick) {
            snprintf(msg, sizeof msg, "remove: body %u removed at tick %ld, before it spawns at %ld", b->id,
                     b->remove_tick, b->spawn_tick);
            return oa_fail(file, b->line, msg);
        }
    }
    if (sc->hz < 1 || sc->hz > 100000 || sc->hz != floor(sc->hz) || sc->ticks <= 0) {
        fprintf(stderr, "ode_adapter: %s: expected an integer hz in 1..100000 (the stream's tick rate) "
                        "and ticks > 0, found hz %g, ticks %ld\n", file, sc->hz,
                sc->ticks);
        return -1;
    }
    return 0;
}

static int oa_load(oa_scenario *sc, const char *file) {
    FILE *f = fopen(file, "r");
    if (!f) {
        fprintf(stderr, "ode_adapter: %s: %s\n", file, strerror(errno));
        return -1;
    }
    memset(sc, 0, sizeof *sc);
    sc->hz = 60; sc->ticks = 600; sc->gravity[2] = -9.81; sc->iterations = 20;
    snprintf(sc->name, sizeof sc->name, "ode");
    char line[1024];
    int ln = 0, rc = 0;
    while (!rc && fgets(line, sizeof line, f)) rc = oa_parse_line(sc, file, ++ln, line);
    fclose(f);
    return rc ? rc : oa_check_ids(sc, file);
}

static void oa_near(void *data, dGeomID g1, dGeomID g2) {
    oa_world *w = data;
    dBodyID b1 = dGeomGetBody(g1), b2 = dGeomGetBody(g2);
    if (b1 && b2 && dAreConnectedExcluding(b1, b2, dJointTypeContact)) return;
    dContact c[OA_MAX_CONTACTS];
    int n = dCollide(g1, g2, OA_MAX_CONTACTS, &c[0].geom, sizeof c[0]);
    for (int i = 0; i < n; i++) {
        c[i].surface.mode = dContactApprox1;
        c[i].surface.mu = 0.8;
        dJointID j = dJointCreateContact(w->world, w->contacts, &c[i]);
        dJointAttach(j, b1, b2);
    }
}

static void oa_spawn(oa_world *w, const oa_scenario *sc, size_t i) {
    const oa_body_spec *s = &sc->b[i];
    dMass m;
    dBodyID b = dBodyCreate(w->world);
    dGeomID g;
    if (s->shape == OA_BOX) {
        dMassSetBoxTotal(&m, s->mass, s->size[0], s->size[1], s->size[2]);
        g = dCreateBox(w->space, s->size[0], s->size[1], s->size[2]);
    } else if (s->shape == OA_CAPSULE) { /* along x */
        dMatrix3 r;
        dMassSetCapsuleTotal(&m, s->mass, 1, s->size[0], s->size[1]);
        g = dCreateCapsule(w->space, s->size[0], s->size[1]);
        dRFromAxisAndAngle(r, 0, 1, 0, M_PI / 2);
        dBodySetRotation(b, r);
    } else {
        dMassSetSphereTotal(&m, s->mass, s->size[0]);
        g = dCreateSphere(w->space, s->size[0]);
    }
    dBodySetMass(b, &m);
    dGeomSetBody(g, b);
    dBodySetPosition(b, s->pos[0], s->pos[1], s->pos[2]);
    dBodySetLinearVel(b, s->vel[0], s->vel[1], s->vel[2]);
    w->body[i] = b;
    w->geom[i] = g;
    if (s->joint_to) {
        dBodyID other = 0;
        for (size_t k = 0; k < sc->n; k++)
            if (s->joint_to != ~0u && sc->b[k].id == s->joint_to) other = w->body[k];
        w->joint[i] = dJointCreateBall(w->world, 0);
        dJointAttach(w->joint[i], b, other);
        dJointSetBallAnchor(w->joint[i], s->anchor[0], s->anchor[1], s->anchor[2]);
    }
}

static void oa_despawn(oa_world *w, size_t i) {
    if (w->joint[i]) dJointDestroy(w->joint[i]);
    dGeomDestroy(w->geom[i]);
    dBodyDestroy(w->body[i]);
    w->body[i] = 0; w->geom[i] = 0; w->joint[i] = 0;
}

static void oa_header(FILE *out, const oa_scenario *sc, int csv) {
    if (csv) { /* CSV has no header object: tick rate 60 Hz is detgate's default (checked in main) */
        fputs("#! schema standard=pos,vel,rot position_quantum=" OA_POS_Q " velocity_quantum=" OA_VEL_Q "\n"
              "#! field angvel.x type=float unit=rad/s quantum=" OA_ANGVEL_Q "\n"
              "#! field angvel.y type=float unit=rad/s quantum=" OA_ANGVEL_Q "\n"
              "#! field angvel.z type=float unit=rad/s quantum=" OA_ANGVEL_Q "\n"
              "#! field awake type=bool\n"
              "#! field kind type=enum values=dynamic,kinematic\n"
              "tick,id,px,py,pz,vx,vy,vz,qw,qx,qy,qz,angvel.x,angvel.y,angvel.z,awake,kind\n",
              out);
        return;
    }
    fprintf(out, "{\"detgate_states\":1,\"scenario\":\"%s\",\"tick_rate_hz\":%.0f,"
                 "\"schema\":{\"standard\":\"pos,vel,rot\",\"position_quantum\":" OA_POS_Q
                 ",\"velocity_quantum\":" OA_VEL_Q ",\"fields\":["
                 "{\"name\":\"angvel.x\",\"type\":\"float\",\"unit\":\"rad/s\",\"quantum\":" OA_ANGVEL_Q "},"
                 "{\"name\":\"angvel.y\",\"type\":\"float\",\"unit\":\"rad/s\",\"quantum\":" OA_ANGVEL_Q "},"
                 "{\"name\":\"angvel.z\",\"type\":\"float\",\"unit\":\"rad/s\",\"quantum\":" OA_ANGVEL_Q "},"
                 "{\"name\":\"awake\",\"type\":\"bool\"},"
                 "{\"name\":\"kind\",\"type\":\"enum\",\"values\":\"dynamic,kinematic\"}]}}\n",
            sc->name, sc->hz);
}

/* %.17g keeps every double bit-exact through strtod (docs/STATES-STREAM.md) */
static void oa_write_tick(FILE *out, const oa_world *w, const oa_scenario *sc, long tick, int csv) {
    if (!csv) fprintf(out, "{\"tick\":%ld,\"entities\":[", tick);
    int first = 1;
    for (size_t i = 0; i < sc->n; i++) {
        dBodyID b = w->body[i];
        if (!b) continue;
        const dReal *p = dBodyGetPosition(b), *q = dBodyGetQuaternion(b), *v = dBodyGetLinearVel(b);
        const dReal *av = dBodyGetAngularVel(b);
        const char *awake = dBodyIsEnabled(b) ? "true" : "false";
        const char *kind = dBodyIsKinematic(b) ? "kinematic" : "dynamic";
        if (csv) {
            fprintf(out, "%ld,%u,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%s,%s\n",
                    tick, sc->b[i].id, p[0], p[1], p[2], v[0], v[1], v[2], q[0], q[1], q[2], q[3], av[0], av[1],
                    av[2], awake, kind);
            continue;
        }
        fprintf(out, "%s{\"id\":%u,\"pos\":[%.17g,%.17g,%.17g],\"vel\":[%.17g,%.17g,%.17g],"
                     "\"rot\":[%.17g,%.17g,%.17g,%.17g],\"angvel.x\":%.17g,\"angvel.y\":%.17g,"
                     "\"angvel.z\":%.17g,\"awake\":%s,\"kind\":\"%s\"}",
                first ? "" : ",", sc->b[i].id, p[0], p[1], p[2], v[0], v[1], v[2], q[0], q[1], q[2], q[3], av[0],
                av[1], av[2], awake, kind);
        first = 0;
    }
    if (!csv) fputs("]}\n", out);
}

/* spawns and removals due at this tick happen before it is written: a body spawned "at T" is in tick T */
static void oa_apply_schedule(oa_world *w, const oa_scenario *sc, long tick) {
    for (size_t i = 0; i < sc->n; i++) {
        if (sc->b[i].spawn_tick == tick || (tick == 0 && sc->b[i].spawn_tick < 0)) oa_spawn(w, sc, i);
        if (sc->b[i].remove_tick == tick && w->body[i]) oa_despawn(w, i);
    }
}

/* binary stream v2 (docs/STATES-STREAM.md, "Binary (version 2)"): little-endian, byte by byte */
static unsigned char *oa_le(unsigned char *p, uint64_t x, int n) {
    for (int i = 0; i < n; i++) *p++ = (unsigned char)(x >> (8 * i));
    return p;
}
static unsigned char *oa_f64(unsigned char *p, double d) {
    uint64_t bits;
    memcpy(&bits, &d, sizeof bits);
    return oa_le(p, bits, 8);
}
static unsigned char *oa_str8(unsigned char *p, const char *s) {
    size_t n = strlen(s);
    *p++ = (unsigned char)n;
    memcpy(p, s, n);
    return p + n;
}
/* one declared field: type (3 float, 4 bool, 5 enum), quantum, name, unit, enum value names */
static unsigned char *oa_bin_field(unsigned char *p, int type, double q, const char *name, const char *unit,
                                   const char *const *values, int nvalues) {
    p = oa_le(oa_le(p, (uint64_t)type, 1), 0, 1);
    p = oa_str8(oa_str8(oa_f64(p, q), name), unit);
    p = oa_le(p, (uint64_t)nvalues, 2);
    for (int i = 0; i < nvalues; i++) p = oa_str8(p, values[i]);
    return p;
}

/* the same schema as oa_header's, as the v2 header block */
static void oa_header_bin(FILE *out, const oa_scenario *sc) {
    static const char *const kinds[] = {"dynamic", "kinematic"};
    unsigned char h[512], *p = h + 16;
    p = oa_le(oa_f64(p, 0), 0x1c, 1); /* planetRadiusM none; stdMask pos, vel, rot */
    p = oa_f64(oa_f64(p, atof(OA_POS_Q)), atof(OA_VEL_Q));
    p = oa_le(p, 5, 1); /* fieldCount */
    p = oa_bin_field(p, 3, atof(OA_ANGVEL_Q), "angvel.x", "rad/s", NULL, 0);
    p = oa_bin_field(p, 3, atof(OA_ANGVEL_Q), "angvel.y", "rad/s", NULL, 0);
    p = oa_bin_field(p, 3, atof(OA_ANGVEL_Q), "angvel.z", "rad/s", NULL, 0);
    p = oa_bin_field(p, 4, 0, "awake", "", NULL, 0);
    p = oa_bin_field(p, 5, 0, "kind", "", kinds, 2);
    p = oa_le(p, 0, 6); /* no type, faction or participant table */
    unsigned char *q = oa_le(oa_le(oa_le(h, 0x53474489u, 4), 2, 2), 0, 2); /* \x89DGS, version 2, flags */
    oa_le(oa_le(q, (uint64_t)sc->hz, 4), (uint64_t)(p - h - 16), 4);
    fwrite(h, 1, (size_t)(p - h), out);
}

static void oa_write_tick_bin(FILE *out, const oa_world *w, const oa_scenario *sc, long tick) {
    unsigned char rec[98 + 5 * 8], *p;
    uint32_t count = 0;
    for (size_t i = 0; i < sc->n; i++) count += w->body[i] != 0;
    p = oa_le(oa_le(oa_le(oa_le(rec, 1, 1), (uint64_t)tick, 8), count, 4), 0, 4); /* tick, count, no events */
    fwrite(rec, 1, (size_t)(p - rec), out);
    for (size_t i = 0; i < sc->n; i++) {
        dBodyID b = w->body[i];
        if (!b) continue;
        const dReal *ps = dBodyGetPosition(b), *q = dBodyGetQuaternion(b), *v = dBodyGetLinearVel(b);
        const dReal *av = dBodyGetAngularVel(b);
        p = oa_le(oa_le(rec, sc->b[i].id, 4), 0, 6); /* type, faction, flags: absent */
        const double f[14] = {ps[0], ps[1], ps[2], v[0], v[1], v[2], q[0], q[1], q[2], q[3], 0, av[0], av[1], av[2]};
        for (int k = 0; k < 14; k++) p = oa_f64(p, f[k]);
        p = oa_le(p, dBodyIsEnabled(b) ? 1 : 0, 8);
        oa_le(p, dBodyIsKinematic(b) ? 1 : 0, 8);
        fwrite(rec, 1, sizeof rec, out);
    }
}

/* fmt: 0 JSON Lines, 1 CSV, 2 binary stream v2 */
static int oa_run(const oa_scenario *sc, FILE *out, int fmt) {
    static oa_world w;
    memset(&w, 0, sizeof w);
    w.world = dWorldCreate();
    w.space = dHashSpaceCreate(0);
    w.contacts = dJointGroupCreate(0);
    dWorldSetGravity(w.world, sc->gravity[0], sc->gravity[1], sc->gravity[2]);
    dWorldSetQuickStepNumIterations(w.world, sc->iterations);
    dWorldSetAutoDisableFlag(w.world, 1);
    dGeomID ground = sc->ground ? dCreatePlane(w.space, 0, 0, 1, 0) : 0;
    if (fmt == 2) oa_header_bin(out, sc);
    else oa_header(out, sc, fmt);
    for (long t = 0; t < sc->ticks; t++) {
        if (t > 0) {
            dSpaceCollide(w.space, &w, oa_near);
            dWorldQuickStep(w.world, 1.0 / sc->hz);
            dJointGroupEmpty(w.contacts);
        }
        oa_apply_schedule(&w, sc, t);
        if (fmt == 2) oa_write_tick_bin(out, &w, sc, t);
        else oa_write_tick(out, &w, sc, t, fmt);
    }
    if (fmt == 2) fputc(0x00, out); /* the end record: the stream is complete */
    for (size_t i = 0; i < sc->n; i++)
        if (w.body[i]) oa_despawn(&w, i);
    if (ground) dGeomDestroy(ground);
    dJointGroupDestroy(w.contacts);
    dSpaceDestroy(w.space);
    dWorldDestroy(w.world);
    return ferror(out) ? -1 : 0;
}

static int oa_usage(void) {
    fputs("usage: ode_adapter SCENARIO [--csv|--bin] [--runs N] [--reset-seed] [-o FILE]...\n"
          "  writes the state stream (JSON Lines, CSV with --csv, binary v2 with --bin) of each run to the next -o FILE (stdout when none);\n"
          "  --runs N runs the scenario N times in this process; --reset-seed calls dRandSetSeed(seed)\n"
          "  before each run (the fix for dWorldQuickStep's constraint reordering)\n",
          stderr);
    return 2;
}

/* The state stream's buffer: stdio's default for a pipe is 4 KiB, one write(2) per 4 KiB of the
 * ~30 KB a tick of the long scenario takes, each waking the reader (detgate) and taking the pipe's
 * lock against it; 256 KiB (a quarter of the 1 MiB pipe detgate asks for) is ~280 writes instead of
 * ~18,000 for the long scenario. One run's stream at a time uses it (each -o file is closed first). */
static char oa_outbuf[1 << 18];

int main(int argc, char **argv) {
    const char *scn = NULL, *outs[8] = {0};
    int runs = 1, reset = 0, nout = 0, csv = 0; /* the format: 0 JSON Lines, 1 CSV, 2 binary v2 */
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--runs") && i + 1 < argc) runs = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--reset-seed")) reset = 1;
        else if (!strcmp(argv[i], "--csv")) csv = 1;
        else if (!strcmp(argv[i], "--bin")) csv = 2;
        else if (!strcmp(argv[i], "-o") && i + 1 < argc && nout < 8) outs[nout++] = argv[++i];
        else if (argv[i][0] != '-' && !scn) scn = argv[i];
        else return oa_usage();
    }
    if (!scn || runs < 1 || runs > 8 || (nout && nout != runs) || (!nout && runs > 1)) return oa_usage();
    static oa_scenario sc;
    if (oa_load(&sc, scn)) return 2;
    if (csv == 1 && sc.hz != 60) {
        fprintf(stderr, "ode_adapter: %s: --csv needs hz 60 (CSV carries no tick rate; detgate reads it as 60 Hz), "
                        "found hz %g: use JSON Lines\n", scn, sc.hz);
        return 2;
    }
    dInitODE2(0);
    int rc = 0;
    for (int r = 0; r < runs && !rc; r++) {
        FILE *out = nout ? fopen(outs[r], "w") : stdout;
        if (!out) {
            fprintf(stderr, "ode_adapter: %s: %s\n", outs[r], strerror(errno));
            rc = 2;
            break;
        }
        if (r == 0 || nout) setvbuf(out, oa_outbuf, _IOFBF, sizeof oa_outbuf); /* before its first output */
        if (reset) dRandSetSeed(sc.seed);
        if (oa_run(&sc, out, csv)) rc = 125;
        if (out != stdout && fclose(out)) rc = 125;
    }
    dCloseODE();
    return rc;
}
