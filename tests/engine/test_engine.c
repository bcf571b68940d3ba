/* tests/engine/test_engine.c — a test engine for the process contract: `detgate_test_engine SCENARIO`
 * writes a JSON Lines (or CSV) state stream (docs/STATES-STREAM.md) of N bouncing bodies on stdout.
 * The scenario is a small text file of "key value" lines: bodies N, ticks T, format jsonl|csv,
 * mode M, at K (format bin: the binary stream). Modes (DG_TEST_ENGINE_MODE / DG_TEST_ENGINE_AT override the file) misbehave at tick K:
 * ok, exit3, segv, hang, garbage, cut (a tick line cut short, exit 0), flood (4 MiB of stderr first,
 * then a good stream), invalid (a position out of the quantizer's range), nondet (a clock-seeded
 * value: another run records another state), nondet-raw (the same, 1e-15..1e-9 m: another run has
 * other raw floats, the same quantized state), orphan (exits 0 at tick K, a child it started still
 * holding stdout). DG_TEST_ENGINE_PIDFILE: where hang (or orphan's child) writes its pid.
 * Declared fields (issue 14): "fields 1" (or DG_TEST_ENGINE_FIELDS=1) declares a schema (pos, vel,
 * rot at 1 mm) with angvel (float, rad/s, quantum 1/4096), rng (uint 64, an xorshift state) and awake
 * (bool) in the stream's own form; modes change-angvel / change-rng / change-awake change that
 * field of body 1 at tick K only (drift-angvel: by an eighth of its quantum; nondet-rng: a clock-seeded change, another run records another state). Format bin2: the binary stream version 2 (a type table and a spawn
 * event per body at tick 0; the declared schema with fields 1, the legacy one without). */
#define _POSIX_C_SOURCE 200809L
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct scenario {
    int bodies, fields;
    long ticks, at;
    char format[32], mode[32];
} scenario;

static int read_scenario(const char *path, scenario *s)
{
    *s = (scenario){.bodies = 4, .ticks = 120, .at = 30, .format = "jsonl", .mode = "ok"};
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "test engine: cannot open scenario %s\n", path);
        return -1;
    }
    char key[32], val[24];
    while (fscanf(f, "%31s %23s", key, val) == 2) {
        if (strcmp(key, "bodies") == 0)
            s->bodies = atoi(val);
        else if (strcmp(key, "ticks") == 0)
            s->ticks = atol(val);
        else if (strcmp(key, "at") == 0)
            s->at = atol(val);
        else if (strcmp(key, "format") == 0)
            snprintf(s->format, sizeof s->format, "%s", val);
        else if (strcmp(key, "mode") == 0)
            snprintf(s->mode, sizeof s->mode, "%s", val);
        else if (strcmp(key, "fields") == 0)
            s->fields = atoi(val);
    }
    const char *fl = getenv("DG_TEST_ENGINE_FIELDS");
    if (fl && *fl)
        s->fields = atoi(fl);
    fclose(f);
    const char *m = getenv("DG_TEST_ENGINE_MODE"), *at = getenv("DG_TEST_ENGINE_AT");
    if (m && *m)
        snprintf(s->mode, sizeof s->mode, "%s", m);
    if (at && *at)
        s->at = atol(at);
    if (s->bodies < 1 || s->bodies > 100000 || s->ticks < 1) {
        fprintf(stderr, "test engine: bad scenario %s\n", path);
        return -1;
    }
    return 0;
}

typedef struct body {
    double p[3], v[3];
    uint64_t rng; /* declared field "rng" */
} body;

/* The declared fields' values of body i at tick t (the change-* modes alter body 1 at tick K). */
typedef struct extras {
    double angvel;
    uint64_t rng;
    int awake;
} extras;

static extras extras_of(const scenario *s, const body *b, int i, long t)
{
    extras x = {(double)(t % 8) * 0.125 - 0.25 * i, b[i].rng, (int)((t / 10 + i) % 2 == 0)};
    if (i == 0 && t == s->at && strcmp(s->mode, "change-angvel") == 0)
        x.angvel += 1.0 / 4096; /* one quantum */
    if (i == 0 && t == s->at && strcmp(s->mode, "change-rng") == 0)
        x.rng ^= 1;
    if (i == 0 && t == s->at && strcmp(s->mode, "change-awake") == 0)
        x.awake = !x.awake;
    if (i == 0 && t == s->at && strcmp(s->mode, "drift-angvel") == 0)
        x.angvel += 1.0 / 32768; /* an eighth of a quantum: the same stored value, other raw bits */
    if (i == 0 && t == s->at && strcmp(s->mode, "nondet-rng") == 0) { /* another run, another rng state */
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        x.rng ^= (uint64_t)ts.tv_nsec << 1 | 1;
    }
    return x;
}

static void step(body *b, int n)
{
    const double dt = 1.0 / 60.0;
    for (int i = 0; i < n; i++) {
        b[i].v[1] -= 9.81 * dt;
        for (int k = 0; k < 3; k++)
            b[i].p[k] += b[i].v[k] * dt;
        if (b[i].p[1] < 0) {
            b[i].p[1] = -b[i].p[1];
            b[i].v[1] = -b[i].v[1] * 0.9;
        }
        b[i].rng ^= b[i].rng << 13; /* xorshift64 */
        b[i].rng ^= b[i].rng >> 7;
        b[i].rng ^= b[i].rng << 17;
    }
}

static void put_le(unsigned char *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static void put_f64(unsigned char *p, double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    put_le(p, u, 8);
}

/* docs/STATES-STREAM.md "Binary": kind 0x01, u64 tick, u32 count, count x 98-byte entities */
static void emit_binary(const scenario *s, const body *b, long t, double jitter)
{
    unsigned char h[13], e[98];
    h[0] = 0x01;
    put_le(h + 1, (uint64_t)t, 8);
    put_le(h + 9, (uint64_t)s->bodies, 4);
    fwrite(h, 1, sizeof h, stdout);
    for (int i = 0; i < s->bodies; i++) {
        memset(e, 0, sizeof e);
        put_le(e, (uint64_t)(i + 1), 4);
        double v[11] = {b[i].p[0] + (i == 0 ? jitter : 0), b[i].p[1], b[i].p[2], b[i].v[0], b[i].v[1], b[i].v[2],
                        1, 0, 0, 0, 1};
        for (int k = 0; k < 11; k++)
            put_f64(e + 10 + 8 * k, v[k]);
        fwrite(e, 1, sizeof e, stdout);
    }
}

/* docs/STATES-STREAM.md "Binary (version 2)": u64 tick, u32 count, u32 events, entities of 98 bytes
 * plus 8 per declared field, then the events (a spawn per body at tick 0). */
static void emit_binary2(const scenario *s, const body *b, long t, double jitter)
{
    unsigned char h[17], e[98 + 24];
    size_t eb = 98 + (s->fields ? 24 : 0);
    h[0] = 0x01;
    put_le(h + 1, (uint64_t)t, 8);
    put_le(h + 9, (uint64_t)s->bodies, 4);
    put_le(h + 13, t == 0 && !s->fields ? (uint64_t)s->bodies : 0, 4);
    fwrite(h, 1, sizeof h, stdout);
    for (int i = 0; i < s->bodies; i++) {
        memset(e, 0, sizeof e);
        put_le(e, (uint64_t)(i + 1), 4);
        double v[11] = {b[i].p[0] + (i == 0 ? jitter : 0), b[i].p[1], b[i].p[2], b[i].v[0], b[i].v[1], b[i].v[2],
                        1, 0, 0, 0, 1};
        for (int k = 0; k < 11; k++)
            put_f64(e + 10 + 8 * k, v[k]);
        if (s->fields) {
            extras x = extras_of(s, b, i, t);
            put_f64(e + 98, x.angvel);
            put_le(e + 106, x.rng, 8);
            put_le(e + 114, (uint64_t)x.awake, 8);
        }
        fwrite(e, 1, eb, stdout);
    }
    for (int i = 0; t == 0 && !s->fields && i < s->bodies; i++) { /* kind spawn, a = the entity, no text */
        unsigned char ev[15] = {2};
        put_le(ev + 1, (uint64_t)(i + 1), 4);
        fwrite(ev, 1, sizeof ev, stdout);
    }
}

/* The version 2 header: magic, version 2, flags 0, 60 Hz, the header block. */
static void header_binary2(const scenario *s)
{
    fwrite("\x89" "DGS\x02\x00\x00\x00\x3c\x00\x00\x00", 1, 12, stdout);
    /* the block: planet 0, std mask, quanta, fields, one type, no faction, no participant */
    unsigned char blk[512];
    size_t n = 0;
    put_f64(blk + n, 0), n += 8;
    blk[n++] = s->fields ? 0x1c : 0x7f; /* pos|vel|rot, or every standard field */
    put_f64(blk + n, s->fields ? 0.001 : 1.0 / 64), n += 8;
    put_f64(blk + n, s->fields ? 0.001 : 1.0 / 32), n += 8;
    blk[n++] = s->fields ? 3 : 0;
    static const struct { unsigned char type, bits; double q; const char *name, *unit; } f[3] = {
        {3, 0, 1.0 / 4096, "angvel", "rad/s"}, {2, 64, 0, "rng", ""}, {4, 0, 0, "awake", ""}};
    for (int k = 0; s->fields && k < 3; k++) {
        blk[n++] = f[k].type;
        blk[n++] = f[k].bits;
        put_f64(blk + n, f[k].q), n += 8;
        blk[n++] = (unsigned char)strlen(f[k].name), memcpy(blk + n, f[k].name, strlen(f[k].name)), n += strlen(f[k].name);
        blk[n++] = (unsigned char)strlen(f[k].unit), memcpy(blk + n, f[k].unit, strlen(f[k].unit)), n += strlen(f[k].unit);
        put_le(blk + n, 0, 2), n += 2;
    }
    /* one type: index 0, category 4 (static), "ball" "Ball"; with fields, the tables a text stream of
     * the same bodies gets (type0, faction0: the recordings of every form are then the same bytes) */
    const char *tn = s->fields ? "type0" : "ball", *tname = s->fields ? "type0" : "Ball";
    put_le(blk + n, 1, 2), n += 2;
    put_le(blk + n, 0, 2), n += 2;
    blk[n++] = s->fields ? 0 : 4;
    blk[n++] = 0;
    blk[n++] = (unsigned char)strlen(tn), memcpy(blk + n, tn, strlen(tn)), n += strlen(tn);
    blk[n++] = (unsigned char)strlen(tname), memcpy(blk + n, tname, strlen(tname)), n += strlen(tname);
    put_le(blk + n, s->fields ? 1 : 0, 2), n += 2; /* factions */
    if (s->fields) {
        put_le(blk + n, 0, 2), n += 2;
        blk[n++] = 8, memcpy(blk + n, "faction0", 8), n += 8;
        blk[n++] = 8, memcpy(blk + n, "faction0", 8), n += 8;
    }
    put_le(blk + n, 0, 2), n += 2; /* participants */
    unsigned char len[4];
    put_le(len, n, 4);
    fwrite(len, 1, 4, stdout);
    fwrite(blk, 1, n, stdout);
}

static void emit(const scenario *s, const body *b, long t, double jitter)
{
    if (strcmp(s->format, "bin") == 0) {
        emit_binary(s, b, t, jitter);
        return;
    }
    if (strcmp(s->format, "bin2") == 0) {
        emit_binary2(s, b, t, jitter);
        return;
    }
    int csv = strcmp(s->format, "csv") == 0;
    if (!csv)
        printf("{\"tick\":%ld,\"entities\":[", t);
    for (int i = 0; i < s->bodies; i++) {
        double x = b[i].p[0] + (i == 0 ? jitter : 0);
        extras xf = extras_of(s, b, i, t);
        if (csv && s->fields)
            printf("%ld,%d,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g,%llu,%s\n", t, i + 1, x, b[i].p[1], b[i].p[2],
                   b[i].v[0], b[i].v[1], b[i].v[2], xf.angvel, (unsigned long long)xf.rng, xf.awake ? "true" : "false");
        else if (csv)
            printf("%ld,%d,%.17g,%.17g,%.17g,%.17g,%.17g,%.17g\n", t, i + 1, x, b[i].p[1], b[i].p[2], b[i].v[0],
                   b[i].v[1], b[i].v[2]);
        else if (s->fields) /* a u64 above 2^63 does not fit a JSON integer: the stream writes it as hex text */
            printf("%s{\"id\":%d,\"pos\":[%.17g,%.17g,%.17g],\"vel\":[%.17g,%.17g,%.17g],\"angvel\":%.17g,"
                   "\"rng\":\"0x%016llx\",\"awake\":%s}", i ? "," : "", i + 1, x, b[i].p[1], b[i].p[2], b[i].v[0],
                   b[i].v[1], b[i].v[2], xf.angvel, (unsigned long long)xf.rng, xf.awake ? "true" : "false");
        else
            printf("%s{\"id\":%d,\"pos\":[%.17g,%.17g,%.17g],\"vel\":[%.17g,%.17g,%.17g]}", i ? "," : "", i + 1, x,
                   b[i].p[1], b[i].p[2], b[i].v[0], b[i].v[1], b[i].v[2]);
    }
    if (!csv)
        printf("]}\n");
}

int main(int argc, char **argv)
{
    scenario s;
    if (argc != 2 || read_scenario(argv[1], &s) != 0)
        return 2;
    body *b = calloc((size_t)s.bodies, sizeof *b);
    if (!b)
        return 2;
    for (int i = 0; i < s.bodies; i++)
        b[i] = (body){{i * 3.0, 10.0 + i, 0}, {1.0, 0, 0.5 * i}, 0x9E3779B97F4A7C15ull * (uint64_t)(i + 1)};
    if (strcmp(s.mode, "flood") == 0)
        for (int k = 0; k < 65536; k++)
            fprintf(stderr, "flood line %d: %s\n", k, "................................................");
    if (strcmp(s.format, "bin") == 0) /* magic, version 1, flags 0, 60 Hz */
        fwrite("\x89" "DGS\x01\x00\x00\x00\x3c\x00\x00\x00", 1, 12, stdout);
    else if (strcmp(s.format, "bin2") == 0)
        header_binary2(&s);
    else if (strcmp(s.format, "csv") == 0 && s.fields)
        printf("#! schema standard=pos,vel,rot position_quantum=0.001 velocity_quantum=0.001\n"
               "#! field angvel type=float unit=rad/s quantum=0.000244140625\n"
               "#! field rng type=uint bits=64\n"
               "#! field awake type=bool\n"
               "tick,id,px,py,pz,vx,vy,vz,angvel,rng,awake\n");
    else if (strcmp(s.format, "csv") == 0)
        printf("tick,id,px,py,pz,vx,vy,vz\n");
    else if (s.fields)
        printf("{\"detgate_states\":1,\"tick_rate_hz\":60,\"schema\":{\"standard\":[\"pos\",\"vel\",\"rot\"],"
               "\"position_quantum\":0.001,\"velocity_quantum\":0.001,\"fields\":["
               "{\"name\":\"angvel\",\"type\":\"float\",\"unit\":\"rad/s\",\"quantum\":0.000244140625},"
               "{\"name\":\"rng\",\"type\":\"uint\",\"bits\":64},{\"name\":\"awake\",\"type\":\"bool\"}]}}\n");
    else
        printf("{\"detgate_states\":1,\"tick_rate_hz\":60,\"types\":[{\"index\":0,\"id\":\"ball\",\"name\":\"Ball\","
               "\"category\":4}]}\n");
    for (long t = 0; t < s.ticks; t++) {
        if (t == s.at) {
            fflush(stdout);
            if (strcmp(s.mode, "exit3") == 0) {
                fprintf(stderr, "engine: loading\nengine: step failed at tick %ld\n\x1b[31mgiving up\x1b[0m\n", t);
                return 3;
            }
            if (strcmp(s.mode, "segv") == 0) {
                if (strcmp(s.format, "bin") == 0)
                    fwrite("\x01\x1e\x00\x00", 1, 4, stdout); /* a tick record cut in its header */
                else
                    printf("{\"tick\":%ld,\"entities\":[{\"id\":1,", t);
                fflush(stdout);
                raise(SIGSEGV);
            }
            if (strcmp(s.mode, "orphan") == 0 && fork() > 0)
                return 0; /* the child, stdout inherited, hangs as below */
            if (strcmp(s.mode, "hang") == 0 || strcmp(s.mode, "orphan") == 0) {
                const char *pf = getenv("DG_TEST_ENGINE_PIDFILE"); /* so a test can see it was ended */
                FILE *f = pf ? fopen(pf, "w") : NULL;
                if (f)
                    fprintf(f, "%ld\n", (long)getpid()), fclose(f);
                for (;;)
                    pause();
            }
            if (strcmp(s.mode, "garbage") == 0) {
                printf("\x01\xff garbage {not json\n");
                return 0;
            }
            if (strcmp(s.mode, "cut") == 0) {
                printf("{\"tick\":%ld,\"entities\":[{\"id\":1,\"pos\":[1.5,", t);
                return 0;
            }
        }
        double jitter = 0;
        if (t == s.at && strcmp(s.mode, "nondet") == 0) {
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            jitter = (double)(ts.tv_nsec % 1000 + getpid() % 1000 + 1) * 0.01;
        }
        if (t == s.at && strcmp(s.mode, "nondet-raw") == 0) { /* clock-seeded, far below any quantum */
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            jitter = (double)(1 + ts.tv_nsec % 1000000) * 1e-15;
        }
        if (t == s.at && strcmp(s.mode, "invalid") == 0)
            jitter = 1e12; /* beyond the quantizer's +-33,554 km */
        emit(&s, b, t, jitter);
        step(b, s.bodies);
    }
    if (strcmp(s.format, "bin") == 0 || strcmp(s.format, "bin2") == 0)
        putchar(0x00); /* the end record: the stream is complete */
    free(b);
    return 0;
}
