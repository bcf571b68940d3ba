/* harness/engines.h — the engines table: one row per kind of tick source (sim_stub running a
 * scenario, a process engine's command, a library engine, a state stream file) with what opens it, how
 * its failures count and what a project file (`[engine] kind = NAME`) needs for it, so the CLI opens a
 * source, judges its errors and reads a project through a row, not by which options were given. A third
 * engine is one row here (and its source file). Each source is then a harness__source
 * (harness_internal.h): next, rewind, destroy. */
#ifndef DETGATE_HARNESS_ENGINES_H
#define DETGATE_HARNESS_ENGINES_H

#include <stdbool.h>
#include <stddef.h>
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
    const char *name; /* "sim_stub", "process", "library", "stream": also a project's `[engine] kind` */
    /* What goes wrong opening or reading it is the engine's (exit 125), never the user's input (2). */
    bool own_failures;
    bool inject; /* --inject (sim_stub's fault switches) reaches it */
    dg_status (*open)(harness__source **out, const harness__engine_args *a, dg_error *err);

    /* ---- as a project's `[engine] kind` (harness/project.c) ---- */
    bool project_kind;        /* a project may name it (a stream is given with --states, never declared) */
    const char *project_key;  /* the [engine] key it needs ("run", "library"), NULL = none; the others are
                               * refused for it */
    bool kind_from_key;       /* with no `kind`, giving project_key makes the engine this one */
    bool fixed_fields;        /* its fields are its own: a project's [schema] / [field NAME] is refused */
    const char *scenario_ext; /* only files ending so are its scenarios (".scn"); NULL = every regular file */
    const char *scenarios_default; /* [project] scenarios when not given; NULL = required */
    const char *golden_default;    /* [project] golden when not given */
    bool project_build; /* bisect and matrix build it with the project's [build] command (else they build
                         * the detgate tree itself with cmake: the bundled engine) */
    /* The command its sources run from project_key's value (value: as written), into run (cap bytes);
     * NULL = the value is the command. DG_E_IO with err filled when it cannot be made. */
    dg_status (*project_run)(char *run, size_t cap, const char *value, const char *where, dg_error *err);
} harness__engine;

extern const harness__engine dg_harness__engine_sim_stub, dg_harness__engine_process, dg_harness__engine_library,
    dg_harness__engine_stream;
/* Every engine, sim_stub (the default) first, NULL-terminated. */
extern const harness__engine *const dg_harness__engines[];
/* The engine a project may name `name`, or NULL. */
const harness__engine *dg_harness__engine_find(const char *name);
/* Every engine a project may name, for a message: "sim_stub, process or library". */
const char *dg_harness__engine_kinds(void);

#endif
