/* harness/engines.h — the engines table: one row per kind of tick source (sim_stub running a
 * scenario, a process engine's command, a state stream file) with what opens it and how its failures
 * count, so the CLI opens a source and judges its errors through a row, not by which options were
 * given. A library engine runs as a process (its engine-host command). Each source is then a
 * harness__source (harness_internal.h): next, rewind, destroy. */
#ifndef DETGATE_HARNESS_ENGINES_H
#define DETGATE_HARNESS_ENGINES_H

#include <stdbool.h>
#include <stdint.h>

#include "harness_internal.h"

/* What reaches an engine when its source is opened (NULL / 0: not given). */
typedef struct harness__engine_args {
    const char *scenario;      /* the scenario file (sim_stub, process) */
    const char *states;        /* the state stream file, "-" = standard input (stream) */
    const char *inject;        /* sim_stub's fault switches */
    const char *run, *run_dir; /* a process engine's command template and the folder it starts in */
    double time_limit;         /* its seconds per scenario, 0 = none */
    uint32_t keyframe;         /* 0 = the source's own interval */
} harness__engine_args;

typedef struct harness__engine {
    const char *name; /* "sim_stub", "process", "stream" */
    /* What goes wrong opening or reading it is the engine's (exit 125), never the user's input (2). */
    bool own_failures;
    dg_status (*open)(harness__source **out, const harness__engine_args *a, dg_error *err);
} harness__engine;

extern const harness__engine dg_harness__engine_sim_stub, dg_harness__engine_process, dg_harness__engine_stream;
/* Every engine, sim_stub (the default) first, NULL-terminated. */
extern const harness__engine *const dg_harness__engines[];

#endif
