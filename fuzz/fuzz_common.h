/* fuzz/fuzz_common.h — what every fuzz target shares: the libFuzzer entry points, an assertion that
 * stays on in every build, a deterministic synthetic recording (the fixture the per-piece targets
 * wrap their input in, and the seed generator's source), and small file helpers. */
#ifndef DETGATE_FUZZ_COMMON_H
#define DETGATE_FUZZ_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "detgate/flrep.h"
#include "flrep_internal.h"

/* libFuzzer's interface (also driven by regress_main.c without libFuzzer). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);
size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed);

/* An invariant the code under test promised: a violation is a bug, reported as a crash in every
 * build (NDEBUG does not switch it off — zstd's FUZZ_ASSERT habit). */
#define FUZZ_ASSERT(cond, ...)                                                   \
    do {                                                                         \
        if (!(cond))                                                             \
            dg_fuzz_fail(__FILE__, __LINE__, #cond, __VA_ARGS__);                \
    } while (0)

void dg_fuzz_fail(const char *file, int line, const char *cond, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((noreturn, format(printf, 4, 5)))
#endif
    ;

/* Harness code that runs outside the code under test (the custom mutators): no SanitizerCoverage.
 * Its edge counters are reset before every run anyway, and each of its comparison hooks costs
 * libFuzzer a table insert (the mutator's byte scan for chunks was an eighth of flrep_recovery's
 * time) and puts the mutator's own loop bounds into the table of recent comparisons that
 * libFuzzer's CMP mutations draw from. ASan and UBSan still check it. */
#if defined(__clang__)
#define DG_FUZZ_NO_COVERAGE __attribute__((no_sanitize("coverage")))
#else
#define DG_FUZZ_NO_COVERAGE
#endif

/* Per-chunk decompression cap the targets open readers with: large enough for every seed, small
 * enough that a hostile declared size cannot exhaust the fuzzer's memory limit. */
#define DG_FUZZ_DECOMP_CAP (4u << 20)

/* ---- synthetic recordings ------------------------------------------------------------------ */
typedef struct dg_fuzz_rec_params {
    uint64_t seed;
    uint32_t ticks;         /* ticks recorded */
    uint32_t entities;      /* initial live entities */
    uint32_t keyframe;      /* keyframe interval (0 = the format's default) */
    uint32_t tick_rate;     /* Hz (0 = 60) */
    uint32_t tick_step;     /* gap between tick indices (0 = 1) */
    bool churn;             /* spawns and despawns */
    bool events;            /* all five event kinds */
} dg_fuzz_rec_params;

/* The parameters of the fixture recording the trailer / recovery / sections targets wrap inputs in.
 * Seeds meant for those targets must be cut from recordings with the same tables, rate and interval. */
dg_fuzz_rec_params dg_fuzz_fixture_params(void);

/* The tables every synthetic recording uses (types 0,1,2,7; factions 0,1,5; a small roster). */
dg_flrep_header dg_fuzz_header(uint32_t tick_rate, uint32_t keyframe);

/* Records a synthetic session through the public writer and returns the file's bytes (malloc'd).
 * Returns NULL (and prints why) on failure. */
uint8_t *dg_fuzz_record(const dg_fuzz_rec_params *p, size_t *len);

/* The pieces of a well-formed file, as offsets into it. */
typedef struct dg_fuzz_layout {
    size_t header_end;      /* end of the header body */
    size_t data_start;      /* after the end-of-sections marker */
    size_t table_offset;    /* trailer start */
    size_t nsections;
    struct { uint16_t id; size_t offset, length; } sections[8];     /* payload ranges */
    size_t nchunks;
    struct { size_t offset, length; } chunks[256];                  /* framing + frame */
} dg_fuzz_layout;

/* Cuts a file the writer produced into its pieces (false when it is not well-formed). */
bool dg_fuzz_layout_of(const uint8_t *buf, size_t len, dg_fuzz_layout *out);

/* The fixture recording, built once per process (its preamble, chunks and trailer). */
typedef struct dg_fuzz_fixture {
    uint8_t *file;
    size_t len;
    dg_fuzz_layout layout;
} dg_fuzz_fixture;
const dg_fuzz_fixture *dg_fuzz_fixture_get(void);

/* ---- small helpers --------------------------------------------------------------------------- */
/* FNV-1a over the fields of a world (explicit field order, not the struct's bytes). */
uint64_t dg_fuzz_world_hash(const dg_qentity *e, size_t n, const dg_event *ev, size_t nev);

/* A per-process scratch path (tmpfs when there is one) with the given suffix. */
void dg_fuzz_temp_path(char *buf, size_t cap, const char *suffix);

uint8_t *dg_fuzz_slurp(const char *path, size_t *len);
bool dg_fuzz_write_file(const char *path, const uint8_t *buf, size_t len);

/* Checks what every reader that opened successfully promises about its index and header. */
void dg_fuzz_check_reader_info(const dg_flrep_reader *r, size_t input_len);

/* The first `prefix` bytes of the fixture recording followed by the fuzz input, opened through the
 * public reader (the per-piece targets reach sections, trailer and recovery this way). *file is
 * malloc'd (the reader points into it: free it after closing *r); returns the open status.
 * require_trailer is the reader option: a bad trailer is an error instead of a recovery scan. */
dg_status dg_fuzz_open_behind_prefix(size_t prefix, const uint8_t *data, size_t size, bool require_trailer,
                                     uint8_t **file, size_t *len, dg_flrep_reader **r, dg_error *err);

/* Checks a rebuilt world: ids >= 1 strictly increasing, a valid rotation, health <= 10000. */
void dg_fuzz_check_world(const dg_qentity *e, size_t n);

/* A failing call must report what it returned, with a message; `max_offset` bounds the byte offset
 * it names (UINT64_MAX: not checked). */
void dg_fuzz_check_error(dg_status st, const dg_error *err, uint64_t max_offset);

/* Type / faction presence sets and a tick context matching dg_fuzz_header(rate, ...). */
void dg_fuzz_tick_ctx(uint32_t rate, flrep_index_set *types, flrep_index_set *factions, flrep_tick_ctx *ctx);

#endif
