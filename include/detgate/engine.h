/* detgate — the engine adapter API: what a shared library exports to be a project's library engine
 * (`[engine] kind = library`, docs/ENGINES.md "The library contract"). Header only: the library links
 * nothing of detgate.
 *
 * The library defines one object under the well-known symbol DG_ENGINE_SYMBOL:
 *
 *     #include <detgate/engine.h>
 *     static void *my_open(const char *scenario, char *err, size_t cap) { ... }
 *     static int my_step(void *e, dg_engine_tick *out, char *err, size_t cap) { ... }
 *     static void my_close(void *e) { ... }
 *     DG_ENGINE_EXPORT const dg_engine_api detgate_engine = {
 *         DG_ENGINE_ABI_VERSION, sizeof(dg_engine_api), "my-engine 1.2", 60, my_open, my_step, my_close};
 *
 * detgate loads the library in a child process of its own (`detgate engine-host`), checks abi_version
 * and struct_size, calls open once with the scenario's absolute path, step until it returns 0, and
 * close; what the steps give is recorded exactly as a process engine's binary state stream. A crash,
 * a hang or an error in the library ends that child only: detgate reports it (exit 125) and leaves
 * nothing behind. Whatever the library prints on standard output goes to standard error. */
#ifndef DETGATE_ENGINE_H
#define DETGATE_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#include "detgate/quant.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The version of dg_engine_api this header declares. A library built against another version is
 * refused on load (exit 125, both versions named). */
#define DG_ENGINE_ABI_VERSION 1u
/* The name of the exported dg_engine_api object. */
#define DG_ENGINE_SYMBOL "detgate_engine"

#if defined(__GNUC__)
#define DG_ENGINE_EXPORT __attribute__((visibility("default")))
#else
#define DG_ENGINE_EXPORT
#endif

/* One tick as the engine hands it over: the whole live world, float-domain (as a process engine's
 * stream: any id order, distinct ids >= 1, values that quantize; docs/STATES-STREAM.md). entities
 * belongs to the engine and must stay valid until its next step or close. */
typedef struct dg_engine_tick {
    uint64_t tick;                /* strictly increasing from step to step (need not be consecutive) */
    const dg_entity_in *entities; /* count entries; may be NULL when count is 0 (an empty world) */
    size_t count;                 /* at most 16,777,216 */
} dg_engine_tick;

/* Error messages: a function that fails writes one line (at most cap bytes, NUL-terminated) to err;
 * detgate quotes it, escaped, in the run's message. */
typedef struct dg_engine_api {
    uint32_t abi_version; /* DG_ENGINE_ABI_VERSION */
    uint32_t struct_size; /* sizeof(dg_engine_api) */
    const char *name;     /* the engine and its version, for messages (may be NULL) */
    uint32_t tick_rate_hz; /* 1..100000; 0 = 60 */
    /* Opens a scenario (its absolute path; what it holds is the engine's business). Returns the
     * engine's state, NULL on failure (err filled). */
    void *(*open)(const char *scenario, char *err, size_t cap);
    /* Advances one tick and fills *out. 1 a tick was filled, 0 the scenario is over (no tick), -1 an
     * error (err filled). */
    int (*step)(void *engine, dg_engine_tick *out, char *err, size_t cap);
    /* Frees the engine's state (after the last step, or after an error). */
    void (*close)(void *engine);
} dg_engine_api;

#ifdef __cplusplus
}
#endif
#endif
