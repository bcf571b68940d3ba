/* detgate — the .flrep replay codec (prefix dg_flrep_). Byte layout: docs/FORMAT-flrep.md.
 *
 * Writer: append tick by tick; it quantizes what it is given and hands the quantized state back so
 * the caller hashes exactly what went to disk. Reader: the file comes from a stranger — every
 * length is checked before allocation, every failure is a dg_error naming where and what, and a
 * failing call leaves the caller's view (the last good tick) untouched. Neither prints. */
#ifndef DETGATE_FLREP_H
#define DETGATE_FLREP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "detgate/error.h"
#include "detgate/quant.h"
#include "detgate/schema.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DG_FLREP_MAJOR 1
#define DG_FLREP_MINOR 0
/* A recording whose schema is not the legacy one is written as format 2.0 (FORMAT-flrep.md §12);
 * this build reads majors 1 and 2. */
#define DG_FLREP_MAJOR_SCHEMA 2
#define DG_FLREP_MAJOR_MAX 2
#define DG_FLREP_KEYFRAME_DEFAULT 120
#define DG_FLREP_KEYFRAME_MIN 15
#define DG_FLREP_KEYFRAME_MAX 3600
#define DG_FLREP_MAX_FILE_MB_DEFAULT 256
#define DG_FLREP_MAX_FILES_DEFAULT 20
#define DG_FLREP_DECOMP_CAP_DEFAULT (64u << 20)
/* Live entities after any tick: the writer refuses more, the reader too (FORMAT-flrep.md §5.2). */
#define DG_FLREP_MAX_LIVE 65535u
/* zstd level when dg_flrep_writer_opts.zstd_level is 0. The chunk content is bit-packed
 * Exp-Golomb residuals, close to incompressible: level 3 saves 6 % (Huffman-coded literals), a
 * negative level 1.7 % (matches only), but level 3 costs ~11 ns of compression per entity-tick and
 * ~4 ns of decompression, level -1 ~2 ns and ~0.5 ns (docs/PERFORMANCE.md ".flrep codec"). */
#define DG_FLREP_ZSTD_LEVEL_DEFAULT (-1)

/* ---- tables (header + sections) ---------------------------------------------------------- */
typedef struct dg_flrep_str {
    const char *s;   /* UTF-8, not NUL-terminated by the reader (it is by dg_flrep_info copies) */
    uint16_t len;
} dg_flrep_str;

typedef struct dg_flrep_type {
    uint16_t index;
    dg_flrep_str id, name;
    uint8_t category;        /* 0 other, 1 aircraft, 2 missile, 3 ground, 4 static, 5 character */
    uint8_t projectile_kind; /* 0 none, 1 guided missile, 2 rocket, 3 bullet, 4 bomb */
} dg_flrep_type;

typedef struct dg_flrep_faction {
    uint16_t index;
    dg_flrep_str id, name;
} dg_flrep_faction;

typedef struct dg_flrep_participant {
    uint32_t participant_id, entity_id;
    dg_flrep_str callsign;
} dg_flrep_participant;

typedef struct dg_flrep_mission_object {
    dg_flrep_str object_id;
    uint32_t entity_id;
} dg_flrep_mission_object;

/* Everything before the first chunk. The writer reads it; the reader fills it (strings point into
 * reader-owned memory, valid until dg_flrep_reader_close). */
typedef struct dg_flrep_header {
    uint16_t major, minor;
    dg_flrep_str engine_version;
    uint32_t tick_rate_hz;
    double planet_radius_m;
    uint64_t start_unix_seconds;
    dg_flrep_str mission_id;
    uint32_t session_flags;
    uint32_t keyframe_interval_ticks;
    const dg_flrep_type *types; size_t type_count;
    const dg_flrep_faction *factions; size_t faction_count;
    const dg_flrep_participant *participants; size_t participant_count;
    const dg_flrep_mission_object *mission_objects; size_t mission_object_count;
    /* The entity schema. Writer: NULL or legacy = format 1.0 byte for byte, anything else = format
     * 2.0 (checked with dg_schema_check; planet_radius_m may then be 0 = none, and the type and
     * faction tables are written only when the schema has those fields). Reader: always set (the
     * legacy schema for a 1.x file), owned by the reader. */
    const dg_schema *schema;
} dg_flrep_header;

/* Convenience for writers holding NUL-terminated strings. */
static inline dg_flrep_str dg_flrep_cstr(const char *s)
{
    dg_flrep_str v = {s, 0};
    size_t n = 0;
    while (s && s[n])
        n++;
    v.len = (uint16_t)(n > 65535 ? 65535 : n);
    return v;
}

/* ---- writer ------------------------------------------------------------------------------ */
typedef struct dg_flrep_writer dg_flrep_writer;

/* When the writer asks the kernel to put a file on the disk (docs/FORMAT-flrep.md §9.1). Every
 * finished chunk reaches the kernel at once whatever the policy (a killed process loses no complete
 * chunk); fsync decides what survives a power loss or a kernel crash. */
typedef enum dg_flrep_fsync {
    DG_FLREP_FSYNC_CLOSE = 0,   /* default: fsync once, when a file is finished (before its rename) */
    DG_FLREP_FSYNC_NONE = 1,    /* never: the kernel writes back when it likes */
    DG_FLREP_FSYNC_CHUNK = 2,   /* after every chunk, and at close */
} dg_flrep_fsync;

typedef struct dg_flrep_writer_opts {
    uint32_t max_file_mb;   /* 0 = no rotation (one file); rotation at a chunk boundary */
    uint32_t max_files;     /* series bound when rotating; 0 = default 20 */
    int zstd_level;         /* 0 = DG_FLREP_ZSTD_LEVEL_DEFAULT (-1); any level zstd accepts, negative
                             * ones included (3: ~4 % smaller files, a slower write and read) */
    dg_flrep_fsync fsync;   /* 0 = DG_FLREP_FSYNC_CLOSE */
} dg_flrep_writer_opts;

/* "none", "chunk" or "close" to the policy; false for anything else. */
bool dg_flrep_fsync_parse(const char *s, dg_flrep_fsync *out);

/* Opens path for writing (a temp file renamed into place on close, so an interrupted run leaves no
 * half-written file under the final name). hdr->keyframe_interval_ticks 0 = default 120. The
 * tables are copied. */
dg_status dg_flrep_writer_open(dg_flrep_writer **out, const char *path, const dg_flrep_header *hdr,
                               const dg_flrep_writer_opts *opts, dg_error *err);

/* Writes one tick: ents (any order, distinct ids) is the whole live world at that tick; entities
 * absent from it that were live are despawned. Ticks must increase strictly. If qout is non-NULL it
 * receives the n quantized entities as written, sorted by id (caller-owned, capacity >= n; after a
 * failure its contents are unspecified). */
dg_status dg_flrep_writer_tick(dg_flrep_writer *w, uint64_t tick, const dg_entity_in *ents, size_t n,
                               const dg_event *events, size_t nev, dg_qentity *qout, dg_error *err);

/* Same, from already-quantized state (sorted by id, distinct): the path an engine that quantizes
 * itself, or a re-writer of a file that was read, takes. */
dg_status dg_flrep_writer_tick_q(dg_flrep_writer *w, uint64_t tick, const dg_qentity *ents, size_t n,
                                 const dg_event *events, size_t nev, dg_error *err);

/* The same with the schema's extra fields: extras[i * field_count + f] is field f of ents[i]
 * (field_count = hdr->schema->field_count; extras may be NULL when it is 0). Each value must pass
 * dg_schema_check_value, and the standard fields the schema lacks must be 0 (rotation: identity);
 * otherwise DG_E_RANGE naming tick, entity and field. The writer's self-check rebuilds the extras
 * too. dg_flrep_writer_tick_q is this with extras NULL (it refuses a schema with extra fields). */
dg_status dg_flrep_writer_tick_qx(dg_flrep_writer *w, uint64_t tick, const dg_qentity *ents, const int64_t *extras,
                                  size_t n, const dg_event *events, size_t nev, dg_error *err);

/* Float-domain form: quantizes ents with dg_quant_entity_schema (the writer's schema), sorts by id
 * carrying each entity's extras along (already slots: dg_schema_quant_float for a float field), and
 * writes. qout (capacity n) and xout (capacity n * field_count) get what was written, sorted by id,
 * when non-NULL (after a failure their contents are unspecified). */
dg_status dg_flrep_writer_tick_x(dg_flrep_writer *w, uint64_t tick, const dg_entity_in *ents, const int64_t *extras,
                                 size_t n, const dg_event *events, size_t nev, dg_qentity *qout, int64_t *xout,
                                 dg_error *err);

/* Flushes the last chunk, writes the trailer, renames into place, frees w (always, even on error). */
dg_status dg_flrep_writer_close(dg_flrep_writer *w, dg_error *err);

/* Abandons the recording: removes the temp file, frees w. */
void dg_flrep_writer_abort(dg_flrep_writer *w);

/* Number of files written so far (rotation) and the path of file i. */
size_t dg_flrep_writer_file_count(const dg_flrep_writer *w);

/* ---- following a recording as it is written (FORMAT-flrep.md §9.2) ----------------------- */

typedef struct dg_flrep_chunk_info dg_flrep_chunk_info;

/* What the writer says about a chunk once its bytes have reached the kernel (fflush, and fsync
 * under DG_FLREP_FSYNC_CHUNK): a reader of `path` may now scan every byte before `end`. */
typedef struct dg_flrep_chunk_done {
    const char *path;            /* the file being written: its temporary name until close renames it
                                    (valid during the call only; the name, not the file, moves) */
    size_t file_index;           /* in the rotation series, 0 for the first file */
    uint64_t end;                /* the byte after this chunk: the file's complete prefix */
    const dg_flrep_chunk_info *chunk;   /* as the trailer will index it (valid during the call only) */
} dg_flrep_chunk_done;

/* Called on the thread that called dg_flrep_writer_tick* or _close, after each chunk is written and
 * before the next byte is (a rotation's rename included). It must not call the writer. */
typedef void (*dg_flrep_chunk_fn)(void *user, const dg_flrep_chunk_done *done);

/* Sets (fn non-NULL) or clears the chunk notification; set it before the first tick. */
void dg_flrep_writer_on_chunk(dg_flrep_writer *w, dg_flrep_chunk_fn fn, void *user);

/* ---- reader ------------------------------------------------------------------------------ */
typedef struct dg_flrep_reader dg_flrep_reader;

typedef struct dg_flrep_reader_opts {
    uint32_t max_decompressed;   /* per chunk; 0 = 64 MiB */
    bool require_trailer;        /* refuse a file whose index trailer is missing or corrupt (the error
                                    names what is wrong) instead of recovering by a forward scan */
} dg_flrep_reader_opts;

struct dg_flrep_chunk_info {
    uint64_t offset;             /* of the FLCK framing */
    uint64_t first_tick, last_tick;
    uint32_t tick_count;
    uint32_t compressed_size, decompressed_size;
};

typedef struct dg_flrep_section_info {
    uint16_t id;
    uint32_t length;
    uint64_t offset;             /* of the payload */
} dg_flrep_section_info;

typedef struct dg_flrep_file_info {
    uint64_t file_size;
    uint64_t data_start;         /* first chunk */
    uint64_t tick_count;
    uint64_t first_tick, last_tick;
    const dg_flrep_chunk_info *chunks; size_t chunk_count;
    const dg_flrep_section_info *sections; size_t section_count;
    bool recovered;              /* trailer missing/corrupt: index rebuilt by a forward scan */
    char recovery_reason[200];   /* why the trailer was rejected (empty unless recovered) */
    char recovery_stop[200];     /* recovered: where the scan stopped before the end of the data and
                                    why (empty when every byte up to the end was a complete chunk) */
} dg_flrep_file_info;

/* One rebuilt tick. Arrays are reader-owned and valid until the next call on the reader. */
typedef struct dg_flrep_tick {
    uint64_t tick;
    bool keyframe;
    const dg_qentity *ents; size_t ent_count;   /* the whole world, sorted by id */
    const dg_event *events; size_t event_count;
    /* extras[i * field_count + f]: extra field f of ents[i] (field_count from the header's schema);
     * NULL when the schema has no extra field. */
    const int64_t *extras;
} dg_flrep_tick;

/* Opens a file (read fully into memory; mmap-free so it works on pipes too) or a caller buffer (not
 * copied: it must outlive the reader). Validates header, sections and index (or recovers: a
 * forward scan that decodes every tick of each chunk it keeps; the first kept chunk stays
 * decompressed from the scan, so playback from the start does not decompress it again). */
dg_status dg_flrep_reader_open_file(dg_flrep_reader **out, const char *path,
                                    const dg_flrep_reader_opts *opts, dg_error *err);
dg_status dg_flrep_reader_open_mem(dg_flrep_reader **out, const uint8_t *buf, size_t len,
                                   const dg_flrep_reader_opts *opts, dg_error *err);
void dg_flrep_reader_close(dg_flrep_reader *r);

const dg_flrep_header *dg_flrep_reader_header(const dg_flrep_reader *r);
const dg_flrep_file_info *dg_flrep_reader_info(const dg_flrep_reader *r);

/* Next tick in linear order: returns 1 with *out filled, 0 at the end, or -1 with err set (and
 * *out, the reader's position and its world state unchanged). */
int dg_flrep_reader_next(dg_flrep_reader *r, dg_flrep_tick *out, dg_error *err);

/* Positions the reader so that the next dg_flrep_reader_next returns the first tick >= tick
 * (forwards or backwards; decompresses at most one chunk; a tick ahead of the reader in the chunk it
 * stands in is reached from there, not from the keyframe: the same state, fewer ticks decoded).
 * DG_E_NOT_FOUND if tick is past the end. */
dg_status dg_flrep_reader_seek(dg_flrep_reader *r, uint64_t tick, dg_error *err);

/* Walks every tick once from the start, validating everything; leaves the reader at the start. */
dg_status dg_flrep_reader_validate(dg_flrep_reader *r, dg_error *err);

/* Opens a file that is still being written (FORMAT-flrep.md §9.2): its header and sections must be
 * complete (they are once the writer has reported its first chunk); no trailer is looked for and
 * the index starts empty. info->recovered is true: the index is the recovery scan's (§8), built a
 * piece at a time by dg_flrep_reader_refresh. Playback and seek reach the chunks scanned so far;
 * dg_flrep_reader_next returns 0 at the last of them and continues after a refresh that added more. */
dg_status dg_flrep_reader_open_growing(dg_flrep_reader **out, const char *path, const dg_flrep_reader_opts *opts,
                                       dg_error *err);

/* Extends a growing reader's index with the chunks complete within the file's first `size` bytes
 * (0 = its length now): the recovery scan from where the last refresh stopped, every tick of each
 * new chunk decoded. *added (may be NULL) gets the number of chunks added. A chunk that `size` cuts
 * short is no error — the writer has not finished it: DG_OK, and info->recovery_stop says where the
 * scan waits. A chunk whose bytes are all there but do not decode is: its error (chunk, byte
 * offset, what), the index keeps the chunks before it, and every later refresh returns the same
 * error. DG_E_USAGE for a reader not opened growing or a size below the bytes already scanned,
 * DG_E_TRUNCATED for a size past the file's end. info (dg_flrep_reader_info) and its chunk array
 * may move: read them again after the call. */
dg_status dg_flrep_reader_refresh(dg_flrep_reader *r, uint64_t size, size_t *added, dg_error *err);

#ifdef __cplusplus
}
#endif
#endif
