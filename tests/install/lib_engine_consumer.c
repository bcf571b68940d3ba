/* tests/install/lib_engine_consumer.c — a library engine built against the installed header only
 * (detgate/engine.h: nothing to link), then gated by the installed detgate through a project file
 * with [engine] kind = library: one body falling for 60 ticks. */
#include <detgate/engine.h>

#include <stdlib.h>

typedef struct ball {
    uint64_t t;
    dg_entity_in e;
} ball;

static void *ball_open(const char *scenario, char *err, size_t cap)
{
    (void)scenario, (void)err, (void)cap;
    ball *b = calloc(1, sizeof *b);
    if (b)
        b->e = (dg_entity_in){.id = 1, .pos = {0, 100, 0}, .rot = {1, 0, 0, 0}, .health = 1};
    return b;
}

static int ball_step(void *p, dg_engine_tick *out, char *err, size_t cap)
{
    (void)err, (void)cap;
    ball *b = p;
    if (b->t == 60)
        return 0;
    b->e.vel[1] -= 9.81 / 60;
    b->e.pos[1] += b->e.vel[1] / 60;
    *out = (dg_engine_tick){b->t++, &b->e, 1};
    return 1;
}

static void ball_close(void *p)
{
    free(p);
}

DG_ENGINE_EXPORT const dg_engine_api detgate_engine = {DG_ENGINE_ABI_VERSION, sizeof(dg_engine_api), "ball 1", 60,
                                                       ball_open, ball_step, ball_close};
