/* tests/codec/flrep_testlib.h — shared fixtures for the .flrep tests: a deterministic random world
 * generator with aircraft-like motion, spawns, despawns and events, and a recorder that keeps the
 * quantized state the writer handed back for every tick. */
#ifndef DETGATE_TESTS_FLREP_TESTLIB_H
#define DETGATE_TESTS_FLREP_TESTLIB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "detgate/flrep.h"

typedef struct tl_rng {
    uint64_t s;
} tl_rng;

uint64_t tl_next(tl_rng *r);
double tl_unit(tl_rng *r); /* [0, 1) */

/* One recorded tick: the quantized world and the events as written. */
typedef struct tl_tick {
    uint64_t tick;
    dg_qentity *ents;
    size_t n;
    dg_event *events;
    size_t nev;
} tl_tick;

typedef struct tl_session {
    tl_tick *ticks;
    size_t count;
} tl_session;

typedef struct tl_params {
    uint64_t seed;
    size_t ticks;
    size_t entities;        /* initial entity count */
    bool churn;             /* spawns and despawns */
    bool events;
    uint32_t keyframe;      /* 0 = default */
    uint32_t tick_rate;     /* 0 = 60 */
    uint32_t tick_step;     /* gap between tick indices; 0 = 1 */
    uint32_t max_file_mb;   /* rotation */
    dg_flrep_chunk_fn on_chunk;   /* the writer's chunk notification (NULL = none) */
    void *on_chunk_user;
} tl_params;

/* The header every test file uses (types 0..3, factions 0..2, a roster). */
dg_flrep_header tl_header(uint32_t tick_rate, uint32_t keyframe);

/* Records a random session to path; fills *out with what the writer handed back. */
void tl_record(const char *path, const tl_params *p, tl_session *out);
void tl_session_free(tl_session *s);

/* Asserts (cmocka) that a reader tick equals the recorded one, entity by entity, field by field. */
void tl_assert_tick_equal(const tl_tick *want, const dg_flrep_tick *got);

/* Seeks r to the tick of s->ticks[i] and asserts the next tick is that recorded one. */
void tl_seek_and_check(dg_flrep_reader *r, const tl_session *s, size_t i);

/* A recording in memory with the index its trailer gives (what the hostile-file tests cut and
 * spoil). */
typedef struct tl_recording {
    tl_session s;
    uint8_t *buf;
    size_t len;
    uint64_t data_start;
    dg_flrep_chunk_info chunks[16];
    size_t nchunks;
} tl_recording;

/* Records p through a temp file (removed again) into *out; at most 16 chunks. */
void tl_record_mem(const tl_params *p, tl_recording *out);
void tl_recording_free(tl_recording *rec);

/* Whole file into memory. */
uint8_t *tl_slurp(const char *path, size_t *len);
void tl_write_file(const char *path, const uint8_t *buf, size_t len);
/* A fresh temp path (under $TMPDIR or /tmp) with the given suffix. */
void tl_temp_path(char *buf, size_t cap, const char *suffix);

#endif
