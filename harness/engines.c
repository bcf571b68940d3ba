/* harness/engines.c — the engines table's rows: sim_stub (source_scenario.c), a process engine's
 * command (source_process.c) and a state stream file (source_states.c, source_binary.c,
 * source_zstd.c; the kind is told by its name and first bytes). */
#include "engines.h"

#include <stdio.h>
#include <string.h>

#include "project.h"

static dg_status sim_stub_open(harness__source **out, const harness__engine_args *a, dg_error *err)
{
    return dg_harness__source_scenario(out, a->scenario, a->inject, a->keyframe, err);
}

static dg_status process_open(harness__source **out, const harness__engine_args *a, dg_error *err)
{
    return dg_harness__source_process(out, a->run, a->run_dir, a->scenario, a->time_limit, a->keyframe, err);
}

/* "-" is standard input, read once; a .zst file is decompressed on the fly; else binary or text by
 * its first bytes. */
static dg_status stream_open(harness__source **out, const harness__engine_args *a, dg_error *err)
{
    if (strcmp(a->states, "-") == 0)
        return dg_harness__source_stream(out, stdin, "stdin", NULL, a->keyframe, err);
    size_t n = strlen(a->states);
    if (n > 4 && strcmp(a->states + n - 4, ".zst") == 0)
        return dg_harness__source_states_zst(out, a->states, a->keyframe, err);
    if (dg_harness__is_binary_stream(a->states))
        return dg_harness__source_binary_file(out, a->states, a->keyframe, err);
    return dg_harness__source_states(out, a->states, a->keyframe, err);
}

const harness__engine dg_harness__engine_sim_stub = {.name = "sim_stub", .own_failures = false, .open = sim_stub_open};
const harness__engine dg_harness__engine_process = {.name = "process", .own_failures = true, .open = process_open};
const harness__engine dg_harness__engine_stream = {.name = "stream", .own_failures = false, .open = stream_open};

const harness__engine *const dg_harness__engines[] = {&dg_harness__engine_sim_stub, &dg_harness__engine_process,
                                                       &dg_harness__engine_stream, NULL};
