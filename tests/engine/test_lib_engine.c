/* tests/engine/test_lib_engine.c — a test engine for the library contract (include/detgate/engine.h):
 * N bouncing bodies, exported as `detgate_engine`. The scenario is the process test engine's small
 * "key value" file: bodies N, ticks T, mode M, at K (DG_TEST_ENGINE_MODE / DG_TEST_ENGINE_AT override
 * it). Modes misbehave at tick K: ok, openfail (open returns NULL), error (step returns -1), segv,
 * hang, nondet (a clock-seeded value: another run records another state), stdout (prints on standard
 * output at every tick: detgate must keep it out of the stream), invalid (a position the quantizer
 * refuses), backwards (a tick number that does not increase). DG_TEST_ENGINE_PIDFILE: where hang
 * writes its pid. Built four times: as is, with TEST_LIB_ABI=99 (a wrong ABI version) and with
 * TEST_LIB_NO_SYMBOL (the API object under another name), TEST_LIB_NO_STEP (step NULL); TEST_LIB_PERTURB moves body 1 from tick 50. */
#define _POSIX_C_SOURCE 200809L
#include "detgate/engine.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifndef TEST_LIB_ABI
#define TEST_LIB_ABI DG_ENGINE_ABI_VERSION
#endif

typedef struct lib_engine {
    int bodies;
    long ticks, at, t;
    char mode[32];
    dg_entity_in *ents;
} lib_engine;

static void *lib_open(const char *scenario, char *err, size_t cap)
{
    lib_engine *e = calloc(1, sizeof *e);
    FILE *f = fopen(scenario, "r");
    if (!e || !f) {
        snprintf(err, cap, "cannot open scenario %s", scenario);
        free(e);
        if (f)
            fclose(f);
        return NULL;
    }
    *e = (lib_engine){.bodies = 4, .ticks = 120, .at = 30, .mode = "ok"};
    char key[32], val[24];
    while (fscanf(f, "%31s %23s", key, val) == 2) {
        if (strcmp(key, "bodies") == 0)
            e->bodies = atoi(val);
        else if (strcmp(key, "ticks") == 0)
            e->ticks = atol(val);
        else if (strcmp(key, "at") == 0)
            e->at = atol(val);
        else if (strcmp(key, "mode") == 0)
            snprintf(e->mode, sizeof e->mode, "%s", val);
    }
    fclose(f);
    const char *m = getenv("DG_TEST_ENGINE_MODE"), *at = getenv("DG_TEST_ENGINE_AT");
    if (m && *m)
        snprintf(e->mode, sizeof e->mode, "%s", m);
    if (at && *at)
        e->at = atol(at);
    if (strcmp(e->mode, "openfail") == 0 || e->bodies < 1 || e->bodies > 100000 || e->ticks < 1) {
        snprintf(err, cap, "%s", e->bodies < 1 ? "bad body count" : "scenario refused on purpose");
        free(e);
        return NULL;
    }
    e->ents = calloc((size_t)e->bodies, sizeof *e->ents);
    if (!e->ents) {
        free(e);
        snprintf(err, cap, "out of memory");
        return NULL;
    }
    for (int i = 0; i < e->bodies; i++)
        e->ents[i] = (dg_entity_in){.id = (uint32_t)(i + 1), .pos = {i * 3.0, 10.0 + i, 0}, .vel = {1.0, 0, 0.5 * i},
                                    .rot = {1, 0, 0, 0}, .health = 1};
    return e;
}

static void advance(lib_engine *e)
{
    const double dt = 1.0 / 60.0;
    for (int i = 0; i < e->bodies; i++) {
        dg_entity_in *b = &e->ents[i];
        b->vel[1] -= 9.81 * dt;
        for (int k = 0; k < 3; k++)
            b->pos[k] += b->vel[k] * dt;
        if (b->pos[1] < 0) {
            b->pos[1] = -b->pos[1];
            b->vel[1] = -b->vel[1] * 0.9;
        }
    }
}

/* What a mode does at tick `at`: 0 nothing, -1 an error (err filled). */
static int misbehave(lib_engine *e, char *err, size_t cap)
{
    if (strcmp(e->mode, "error") == 0) {
        snprintf(err, cap, "step failed at tick %ld: \x1b[31msolver diverged\x1b[0m", e->t);
        return -1;
    }
    if (strcmp(e->mode, "segv") == 0)
        raise(SIGSEGV);
    if (strcmp(e->mode, "hang") == 0) {
        const char *pf = getenv("DG_TEST_ENGINE_PIDFILE");
        FILE *f = pf ? fopen(pf, "w") : NULL;
        if (f)
            fprintf(f, "%ld\n", (long)getpid()), fclose(f);
        for (;;)
            pause();
    }
    if (strcmp(e->mode, "nondet") == 0) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        e->ents[0].pos[0] += (double)(ts.tv_nsec % 1000 + getpid() % 1000 + 1) * 0.01;
    }
    if (strcmp(e->mode, "invalid") == 0)
        e->ents[0].pos[0] = 1e12; /* beyond the quantizer's +-33,554 km */
    return 0;
}

#if defined(TEST_LIB_NO_STEP) && defined(__GNUC__)
__attribute__((unused)) /* the build without it */
#endif
static int lib_step(void *engine, dg_engine_tick *out, char *err, size_t cap)
{
    lib_engine *e = engine;
    if (e->t >= e->ticks)
        return 0;
    if (e->t > 0)
        advance(e);
    if (e->t == e->at && misbehave(e, err, cap) < 0)
        return -1;
#ifdef TEST_LIB_PERTURB /* a build flag that changes the state from tick 50 on (matrix) */
    if (e->t >= 50)
        e->ents[0].pos[0] += 0.25;
#endif
    if (strcmp(e->mode, "stdout") == 0)
        printf("engine log: tick %ld\n", e->t); /* on stdout on purpose */
    out->tick = strcmp(e->mode, "backwards") == 0 && e->t == e->at ? 0 : (uint64_t)e->t;
    out->entities = e->ents;
    out->count = (size_t)e->bodies;
    e->t++;
    return 1;
}

static void lib_close(void *engine)
{
    lib_engine *e = engine;
    if (e)
        free(e->ents);
    free(e);
}

#ifdef TEST_LIB_NO_SYMBOL
#define TEST_LIB_NAME detgate_engine_v0 /* not the well-known name */
#else
#define TEST_LIB_NAME detgate_engine
#endif

#ifdef TEST_LIB_NO_STEP /* an API object without its step function */
#define TEST_LIB_STEP NULL
#else
#define TEST_LIB_STEP lib_step
#endif

DG_ENGINE_EXPORT const dg_engine_api TEST_LIB_NAME = {TEST_LIB_ABI, sizeof(dg_engine_api), "test-lib-engine 1",
                                                      60, lib_open, TEST_LIB_STEP, lib_close};
