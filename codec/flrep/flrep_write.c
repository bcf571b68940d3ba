/* codec/flrep/flrep_write.c — the incremental .flrep writer: ticks go into the current chunk, a
 * chunk is compressed and written when the next keyframe is due, the trailer on close, rotation at
 * chunk boundaries (docs/FORMAT-flrep.md §5, §8, §9). The encoder rebuilds each DELTA with the
 * decoder's own arithmetic and checks it against the state given, so what the writer hands back is
 * what a reader will rebuild. */
#include "flrep_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

struct dg_flrep_writer {
    char *path;                 /* final name of the first file of the series */
    char *tmp_path;             /* the file being written now */
    char *cur_path;             /* the name it gets when finished */
    FILE *f;
    uint64_t file_pos;
    dg_buf preamble;            /* header + sections, repeated at the start of every rotated file */
    uint64_t data_start;
    flrep_index_set types, factions;
    uint32_t types_dense, factions_dense;   /* indices 0 .. this - 1 are all in types / factions */
    flrep_tick_ctx ctx;
    uint32_t rate, kf_interval;
    dg_flrep_writer_opts opts;
    ZSTD_CCtx *cctx;
    flrep_world world;
    flrep_tick_scratch scratch;
    dg_buf content, bits, comp;
    uint32_t seq;               /* ticks in the current chunk */
    uint64_t chunk_first, chunk_last;
    bool have_tick;
    uint64_t last_tick;
    dg_flrep_chunk_info *chunks;
    size_t nchunks, chunk_cap;
    dg_qentity *qbuf;
    size_t qcap;
    bool v2;                    /* format 2.0: the schema is not the legacy one (§12) */
    flrep_schema2 schema2;      /* its copy (v2 only) */
    int64_t *xbuf;              /* dg_flrep_writer_tick_x: extras sorted with qbuf */
    size_t xcap;
    struct flrep_perm *perm;    /* ... through this permutation (id, index in the caller's array) */
    char **series;              /* finished files of the series, oldest first */
    size_t nseries, files_total;
    bool failed;
    bool debug_chunks;          /* DETGATE_DEBUG_FLREP_CHUNKS set: each chunk that reached the kernel is said on stderr */
    uint64_t file_ticks;        /* ticks in the complete chunks of the current file */
    dg_flrep_chunk_fn on_chunk; /* dg_flrep_writer_on_chunk */
    void *on_chunk_user;
};

/* ---- file handling ----------------------------------------------------------------------- */

static char *dup_str(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

/* rec.flrep -> rec.001.flrep (sequence inserted before the extension of the last path segment). */
static char *series_name(const char *path, size_t index)
{
    if (index == 0)
        return dup_str(path);
    const char *slash = strrchr(path, '/');
    const char *dot = strrchr(path, '.');
    if (!dot || (slash && dot < slash) || dot == (slash ? slash + 1 : path))
        dot = path + strlen(path);
    size_t stem = (size_t)(dot - path);
    size_t n = strlen(path) + 16;
    char *out = malloc(n);
    if (out)
        snprintf(out, n, "%.*s.%03zu%s", (int)stem, path, index, dot);
    return out;
}

static dg_status io_fail(dg_flrep_writer *w, const char *what, dg_error *err)
{
    w->failed = true;
    return dg_error_set(err, DG_E_IO, w->file_pos, w->tmp_path ? w->tmp_path : w->path, "%s: %s", what,
                        strerror(errno));
}

static dg_status write_bytes(dg_flrep_writer *w, const void *p, size_t n, dg_error *err)
{
    if (n && fwrite(p, 1, n, w->f) != n)
        return io_fail(w, "write failed", err);
    w->file_pos += n;
    return DG_OK;
}

static dg_status open_next_file(dg_flrep_writer *w, dg_error *err)
{
    size_t index = w->files_total;
    w->cur_path = series_name(w->path, index);
    size_t n = strlen(w->path) + 40;
    w->tmp_path = malloc(n + 16);
    if (!w->cur_path || !w->tmp_path)
        return dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, w->path, "out of memory");
    snprintf(w->tmp_path, n + 16, "%s.tmp-%ld", w->cur_path, (long)getpid());
    w->f = fopen(w->tmp_path, "wb");
    if (!w->f)
        return io_fail(w, "cannot create", err);
    w->file_pos = 0;
    w->file_ticks = 0;
    w->nchunks = 0;
    return write_bytes(w, w->preamble.p, w->preamble.len, err);
}

/* Deletes the oldest files of the series so that, with the one about to be finished, at most
 * max_files remain. */
static void enforce_max_files(dg_flrep_writer *w)
{
    size_t max = w->opts.max_files ? w->opts.max_files : DG_FLREP_MAX_FILES_DEFAULT;
    while (w->nseries + 1 > max && w->nseries > 0) {
        remove(w->series[0]);
        free(w->series[0]);
        memmove(w->series, w->series + 1, (w->nseries - 1) * sizeof *w->series);
        w->nseries--;
    }
}

static dg_status finish_file(dg_flrep_writer *w, dg_error *err)
{
    dg_buf t;
    dg_buf_init(&t);
    dg_flrep__trailer_encode(&t, w->chunks, w->nchunks, w->file_pos);
    dg_status st = t.ok ? write_bytes(w, t.p, t.len, err)
                        : dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, w->path, "out of memory for the trailer");
    dg_buf_free(&t);
    if (st != DG_OK)
        return st;
    if (fflush(w->f) != 0 || (w->opts.fsync != DG_FLREP_FSYNC_NONE && fsync(fileno(w->f)) != 0))
        return io_fail(w, "flush failed", err);
    FILE *f = w->f;
    w->f = NULL;
    if (fclose(f) != 0)
        return io_fail(w, "close failed", err);
    if (w->opts.max_file_mb)
        enforce_max_files(w);
    /* the series' slot before the rename: a writer that reports a failure leaves no file under
     * the final name (free_writer removes the temp file) */
    char **ns = realloc(w->series, (w->nseries + 1) * sizeof *ns);
    if (!ns)
        return dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, w->path, "out of memory");
    w->series = ns;
    if (rename(w->tmp_path, w->cur_path) != 0)
        return io_fail(w, "rename failed", err);
    w->series[w->nseries++] = w->cur_path;
    w->cur_path = NULL;
    free(w->tmp_path);
    w->tmp_path = NULL;
    w->files_total++;
    return DG_OK;
}

/* ---- chunks ------------------------------------------------------------------------------ */

/* A complete chunk leaves the stdio buffer at once (a SIGKILL then loses only the chunk in
 * progress), and with DG_FLREP_FSYNC_CHUNK reaches the disk. The debug line is written after
 * that, so a test that kills the recorder knows what the file must hold. */
static dg_status chunk_to_kernel(dg_flrep_writer *w, const flrep_chunk_hdr *h, dg_error *err)
{
    if (fflush(w->f) != 0 || (w->opts.fsync == DG_FLREP_FSYNC_CHUNK && fsync(fileno(w->f)) != 0))
        return io_fail(w, "flush failed", err);
    w->file_ticks += h->tick_count;
    if (w->debug_chunks)
        fprintf(stderr, "flrep-debug: chunk %llu..%llu complete in %s (%llu ticks in the file)\n",
                (unsigned long long)h->first_tick, (unsigned long long)h->last_tick, w->tmp_path,
                (unsigned long long)w->file_ticks);
    if (w->on_chunk) {
        dg_flrep_chunk_done d = {w->tmp_path, w->files_total, w->file_pos, &w->chunks[w->nchunks - 1]};
        w->on_chunk(w->on_chunk_user, &d);
    }
    return DG_OK;
}

static dg_status flush_chunk(dg_flrep_writer *w, dg_error *err)
{
    if (w->seq == 0)
        return DG_OK;
    size_t bound = ZSTD_compressBound(w->content.len);
    dg_buf_reset(&w->comp);
    if (!dg_buf_reserve(&w->comp, bound))
        return dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, w->path, "out of memory compressing a chunk");
    size_t csize = ZSTD_compress2(w->cctx, w->comp.p, bound, w->content.p, w->content.len);
    if (ZSTD_isError(csize)) {
        w->failed = true;
        return dg_error_set(err, DG_E_COMPRESS, DG_OFFSET_NONE, w->path, "zstd: %s", ZSTD_getErrorName(csize));
    }
    if (w->content.len > UINT32_MAX || csize > UINT32_MAX) {
        w->failed = true;
        return dg_error_set(err, DG_E_LIMIT, DG_OFFSET_NONE, w->path, "chunk of %zu bytes exceeds 4 GiB",
                            w->content.len);
    }
    flrep_chunk_hdr h = {w->seq, w->chunk_first, w->chunk_last, (uint32_t)csize, (uint32_t)w->content.len};
    uint8_t fr[FLREP_CHUNK_HDR_SIZE];
    dg_flrep__chunk_hdr_encode(fr, &h);
    if (!dg_grow((void **)&w->chunks, &w->chunk_cap, w->nchunks + 1, sizeof *w->chunks))
        return dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, w->path, "out of memory");
    w->chunks[w->nchunks++] = (dg_flrep_chunk_info){w->file_pos, h.first_tick, h.last_tick, h.tick_count,
                                                    h.compressed_size, h.decompressed_size};
    dg_status st = write_bytes(w, fr, sizeof fr, err);
    if (st == DG_OK)
        st = write_bytes(w, w->comp.p, csize, err);
    dg_buf_reset(&w->content);
    w->seq = 0;
    if (st == DG_OK)
        st = chunk_to_kernel(w, &h, err);
    if (st != DG_OK)
        return st;
    uint64_t limit = (uint64_t)w->opts.max_file_mb << 20;
    if (w->opts.max_file_mb && w->file_pos >= limit)
        st = finish_file(w, err);   /* the next file opens with the next tick: none is left empty */
    return st;
}

/* ---- open / tick / close ----------------------------------------------------------------- */

/* How many indices from 0 on are all in s (check_input's fast test). */
static uint32_t dense_prefix(const flrep_index_set *s)
{
    uint32_t k = 0;
    while (k < 65536 && flrep_set_has(s, (uint16_t)k))
        k++;
    return k;
}

dg_status dg_flrep_writer_open(dg_flrep_writer **out, const char *path, const dg_flrep_header *hdr,
                               const dg_flrep_writer_opts *opts, dg_error *err)
{
    dg_error local;
    err = flrep_err(err, &local);
    *out = NULL;
    dg_flrep_writer *w = calloc(1, sizeof *w);
    if (!w)
        return dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, path, "out of memory");
    if (opts)
        w->opts = *opts;
    w->debug_chunks = getenv("DETGATE_DEBUG_FLREP_CHUNKS") != NULL;
    if (w->opts.fsync > DG_FLREP_FSYNC_CHUNK) {
        dg_error_set(err, DG_E_USAGE, DG_OFFSET_NONE, path, "expected an fsync policy 0..2, found %d", (int)w->opts.fsync);
        free(w);
        return DG_E_USAGE;
    }
    dg_flrep_header h = *hdr;
    if (h.keyframe_interval_ticks == 0)
        h.keyframe_interval_ticks = DG_FLREP_KEYFRAME_DEFAULT;
    dg_buf_init(&w->preamble);
    dg_buf_init(&w->content);
    dg_buf_init(&w->bits);
    dg_buf_init(&w->comp);
    dg_status st = dg_flrep__check_tables(&h, &w->types, &w->factions, err);
    w->types_dense = dense_prefix(&w->types);
    w->factions_dense = dense_prefix(&w->factions);
    w->v2 = !dg_schema_is_legacy(h.schema);
    if (st == DG_OK && w->v2)
        st = dg_flrep__schema2_from(&w->schema2, h.schema, err);
    if (st == DG_OK)
        st = w->v2 ? dg_flrep__encode_preamble2(&w->preamble, &h, &w->schema2, err)
                   : dg_flrep__encode_preamble(&w->preamble, &h, err);
    w->path = dup_str(path);
    w->cctx = ZSTD_createCCtx();
    if (st == DG_OK && (!w->path || !w->cctx))
        st = dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, path, "out of memory");
    if (st == DG_OK) {
        int level = w->opts.zstd_level ? w->opts.zstd_level : DG_FLREP_ZSTD_LEVEL_DEFAULT;
        ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_compressionLevel, level);
        ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_checksumFlag, 1);
        ZSTD_CCtx_setParameter(w->cctx, ZSTD_c_contentSizeFlag, 1);
        w->rate = h.tick_rate_hz;
        w->kf_interval = h.keyframe_interval_ticks;
        dg_flrep__tick_ctx_init(&w->ctx, w->rate, &w->types, &w->factions);
        if (w->v2) {
            dg_flrep__tick_ctx_set_schema(&w->ctx, &w->schema2);
            w->world.nx = w->scratch.next.nx = w->schema2.s.field_count;
        }
        w->data_start = w->preamble.len;
        st = open_next_file(w, err);
    }
    if (st != DG_OK) {
        dg_flrep_writer_abort(w);
        return st;
    }
    *out = w;
    return DG_OK;
}

/* Names the first entity check_input refused (the slow path of an error). */
__attribute__((cold, noinline)) static dg_status input_error(const dg_flrep_writer *w, uint64_t tick,
                                                             const dg_qentity *e, size_t n, dg_error *err)
{
    for (size_t i = 0; i < n; i++) {
        const dg_qentity *q = &e[i];
        if (q->id == 0 || (i && q->id <= e[i - 1].id))
            return dg_error_set(err, DG_E_USAGE, DG_OFFSET_NONE, "writer",
                                "tick %llu: expected distinct ids >= 1 sorted ascending, found %u after %u",
                                (unsigned long long)tick, q->id, i ? e[i - 1].id : 0);
        if (!flrep_set_has(&w->types, q->type_index) || !flrep_set_has(&w->factions, q->faction_index))
            return dg_error_set(err, DG_E_RANGE, DG_OFFSET_NONE, "writer",
                                "tick %llu entity %u: expected type and faction from the tables, found type %u faction %u",
                                (unsigned long long)tick, q->id, q->type_index, q->faction_index);
        if (q->health > DG_QHEALTH_FULL || !dg_quant_rot_valid(q->rot, q->rot_largest) || q->pad_ != 0)
            return dg_error_set(err, DG_E_RANGE, DG_OFFSET_NONE, "writer",
                                "tick %llu entity %u: expected a valid quantized state (health <= 10000, unit rotation)",
                                (unsigned long long)tick, q->id);
    }
    return dg_error_set(err, DG_E_STATE, DG_OFFSET_NONE, "writer", "tick %llu: an entity was refused without a rule "
                        "found broken (a writer bug)", (unsigned long long)tick);
}

/* What check_input learns of a tick's ids and indices in one walk: whether the ids rise strictly
 * from 1 on, and the OR of the type and of the faction indices (a bound on the largest: exact when
 * it is below a power of two, as a dense table of 2^k entries is). */
typedef struct input_scan {
    bool ascending;
    uint16_t or_type, or_faction;
} input_scan;

static input_scan scan_input(const dg_qentity *e, size_t n)
{
    bool bad = false;
    uint32_t prev = 0;
    uint16_t or_type = 0, or_faction = 0;
    for (size_t i = 0; i < n; i++) {
        const dg_qentity *q = &e[i];
        bad |= q->id <= prev;   /* also id 0 first */
        prev = q->id;
        or_type |= q->type_index;
        or_faction |= q->faction_index;
    }
    return (input_scan){!bad, or_type, or_faction};
}

/* Whether some entity's type or faction index is at or above the tables' dense prefixes (then each
 * is looked up in the sets). The ORs decide when they are below both; else the largest indices do. */
static bool beyond_dense(const dg_flrep_writer *w, const dg_qentity *e, size_t n, const input_scan *sc)
{
    if (sc->or_type < w->types_dense && sc->or_faction < w->factions_dense)
        return false;
    uint16_t max_type = 0, max_faction = 0;
    for (size_t i = 0; i < n; i++) {
        max_type = e[i].type_index > max_type ? e[i].type_index : max_type;
        max_faction = e[i].faction_index > max_faction ? e[i].faction_index : max_faction;
    }
    return max_type >= w->types_dense || max_faction >= w->factions_dense;
}

/* The rules a tick's entities must keep. `quantized`: they come from dg_quant_entities, which
 * only makes states with health <= 10000, a unit rotation and pad_ 0, so those are not checked
 * again. `scan`: scan_input(e, n) when the caller has made it (dg_flrep_writer_tick, which walks
 * the ids to see whether they need sorting), else NULL. The rules are folded with | over the whole
 * tick, one branch at the end; input_error finds and names the entity when one is broken. */
static dg_status check_input(const dg_flrep_writer *w, uint64_t tick, const dg_qentity *e, size_t n, bool quantized,
                             const input_scan *scan, dg_error *err)
{
    if (w->have_tick && tick <= w->last_tick)
        return dg_error_set(err, DG_E_STATE, DG_OFFSET_NONE, "writer",
                            "expected a tick after %llu, found %llu", (unsigned long long)w->last_tick,
                            (unsigned long long)tick);
    if (n > DG_FLREP_MAX_LIVE)
        return dg_error_set(err, DG_E_RANGE, DG_OFFSET_NONE, "writer", "tick %llu: expected at most 65535 entities, found %zu",
                            (unsigned long long)tick, n);
    input_scan sc = scan ? *scan : scan_input(e, n);
    bool bad = !sc.ascending;
    /* every index below the tables' dense prefixes is declared (the common case: tables 0..k-1);
     * else each entity's indices are looked up in the sets */
    if (n && beyond_dense(w, e, n, &sc))
        for (size_t i = 0; i < n; i++) {
            bool type_ok = flrep_set_has(&w->types, e[i].type_index);
            bool faction_ok = flrep_set_has(&w->factions, e[i].faction_index);
            bad |= !type_ok | !faction_ok;
        }
    if (!quantized)
        for (size_t i = 0; i < n; i++) {
            bool rot_ok = dg_quant_rot_valid(e[i].rot, e[i].rot_largest);
            bad |= (e[i].health > DG_QHEALTH_FULL) | !rot_ok | (e[i].pad_ != 0);
        }
    return bad ? input_error(w, tick, e, n, err) : DG_OK;
}

__attribute__((cold)) static dg_status extras_missing(const dg_flrep_writer *w, dg_error *err)
{
    return dg_error_set(err, DG_E_USAGE, DG_OFFSET_NONE, "writer",
                        "expected the values of the schema's %zu extra fields (dg_flrep_writer_tick_qx or _x), found none",
                        w->schema2.s.field_count);
}

__attribute__((cold)) static dg_status absent_set(uint64_t tick, uint32_t id, const char *field, dg_error *err)
{
    return dg_error_set(err, DG_E_RANGE, DG_OFFSET_NONE, "writer",
                        "tick %llu entity %u: expected %s = 0 (the schema has no such field), found another value",
                        (unsigned long long)tick, id, field);
}

/* The standard fields of one entity under a 2.0 schema (§12.2): present ones by 1.0's rules,
 * absent ones 0 (rotation: identity). */
static dg_status check_std2(const dg_flrep_writer *w, uint64_t tick, const dg_qentity *q, dg_error *err)
{
    uint32_t m = w->schema2.s.std_mask;
    if ((m & DG_STD_TYPE) ? !flrep_set_has(&w->types, q->type_index) : q->type_index != 0)
        return (m & DG_STD_TYPE) ? dg_error_set(err, DG_E_RANGE, DG_OFFSET_NONE, "writer",
                                                "tick %llu entity %u: expected a type from the manifest, found %u",
                                                (unsigned long long)tick, q->id, q->type_index)
                                 : absent_set(tick, q->id, "type_index", err);
    if ((m & DG_STD_FACTION) ? !flrep_set_has(&w->factions, q->faction_index) : q->faction_index != 0)
        return (m & DG_STD_FACTION) ? dg_error_set(err, DG_E_RANGE, DG_OFFSET_NONE, "writer",
                                                   "tick %llu entity %u: expected a faction from the table, found %u",
                                                   (unsigned long long)tick, q->id, q->faction_index)
                                    : absent_set(tick, q->id, "faction_index", err);
    if (!(m & DG_STD_HEALTH) && q->health != 0)
        return absent_set(tick, q->id, "health", err);
    if (!(m & DG_STD_FLAGS) && q->flags != 0)
        return absent_set(tick, q->id, "flags", err);
    for (int i = 0; i < 3; i++) {
        if (!(m & DG_STD_POS) && q->pos[i] != 0)
            return absent_set(tick, q->id, "pos", err);
        if (!(m & DG_STD_VEL) && q->vel[i] != 0)
            return absent_set(tick, q->id, "vel", err);
        if (!(m & DG_STD_ROT) && q->rot[i] != 0)
            return absent_set(tick, q->id, "rot", err);
    }
    if (!(m & DG_STD_ROT) && q->rot_largest != 0)
        return absent_set(tick, q->id, "rot_largest", err);
    if (q->health > DG_QHEALTH_FULL || !dg_quant_rot_valid(q->rot, q->rot_largest) || q->pad_ != 0)
        return dg_error_set(err, DG_E_RANGE, DG_OFFSET_NONE, "writer",
                            "tick %llu entity %u: expected a valid quantized state (health <= 10000, unit rotation)",
                            (unsigned long long)tick, q->id);
    return DG_OK;
}

/* The standard fields DG_STD_* of q that are not zero (rotation: not the identity). */
static inline uint32_t std_nonzero(const dg_qentity *q)
{
    uint32_t pos = (uint32_t)q->pos[0] | (uint32_t)q->pos[1] | (uint32_t)q->pos[2];
    uint32_t vel = (uint32_t)q->vel[0] | (uint32_t)q->vel[1] | (uint32_t)q->vel[2];
    uint32_t rot = (uint32_t)(uint16_t)(q->rot[0] | q->rot[1] | q->rot[2]) | q->rot_largest;
    return (q->type_index != 0 ? DG_STD_TYPE : 0u) | (q->faction_index != 0 ? DG_STD_FACTION : 0u) |
           (pos != 0 ? DG_STD_POS : 0u) | (vel != 0 ? DG_STD_VEL : 0u) | (rot != 0 ? DG_STD_ROT : 0u) |
           (q->health != 0 ? DG_STD_HEALTH : 0u) | (q->flags != 0 ? DG_STD_FLAGS : 0u);
}

/* check_std2's rules as one bool, without a branch per rule; `quantized` as check_input's (the
 * quantizer makes health <= 10000, a unit rotation, pad_ 0 and absent fields 0 itself). */
static inline bool std2_ok(const dg_flrep_writer *w, const dg_qentity *q, bool quantized)
{
    uint32_t m = w->schema2.s.std_mask;
    bool ok = (std_nonzero(q) & ~m) == 0;   /* absent fields 0 */
    ok &= !(m & DG_STD_TYPE) || flrep_set_has(&w->types, q->type_index);
    ok &= !(m & DG_STD_FACTION) || flrep_set_has(&w->factions, q->faction_index);
    if (!quantized)
        ok &= (q->health <= DG_QHEALTH_FULL) & (q->pad_ == 0) && dg_quant_rot_valid(q->rot, q->rot_largest);
    return ok;
}

/* Names the first entity or extra value check_input2 refused (the slow path of an error): the rules
 * one by one, with dg_schema_check_value's message for a value. */
__attribute__((cold, noinline)) static dg_status input2_error(const dg_flrep_writer *w, uint64_t tick,
                                                              const dg_qentity *e, const int64_t *x, size_t n,
                                                              dg_error *err)
{
    size_t nf = w->schema2.s.field_count;
    for (size_t i = 0; i < n; i++) {
        if (e[i].id == 0 || (i && e[i].id <= e[i - 1].id))
            return dg_error_set(err, DG_E_USAGE, DG_OFFSET_NONE, "writer",
                                "tick %llu: expected distinct ids >= 1 sorted ascending, found %u after %u",
                                (unsigned long long)tick, e[i].id, i ? e[i - 1].id : 0);
        dg_status st = check_std2(w, tick, &e[i], err);
        if (st != DG_OK)
            return st;
        for (size_t f = 0; f < nf; f++) {
            dg_error fe;
            dg_error_clear(&fe);
            if (dg_schema_check_value(&w->schema2.fields[f], x[i * nf + f], &fe) != DG_OK)
                return dg_error_set(err, DG_E_RANGE, DG_OFFSET_NONE, "writer", "tick %llu entity %u field \"%s\": %s",
                                    (unsigned long long)tick, e[i].id, w->schema2.fields[f].name, fe.msg);
        }
    }
    return dg_error_set(err, DG_E_STATE, DG_OFFSET_NONE, "writer", "tick %llu: an entity was refused without a rule "
                        "found broken (a writer bug)", (unsigned long long)tick);
}

/* check_input for a 2.0 writer: the same tick and id rules, the schema's field rules, every extra
 * value a value of its field (the bounds flrep_schema2 derived, which are dg_schema_check_value's).
 * Folded with | over the tick, one branch at the end; input2_error names what broke. */
static dg_status check_input2(const dg_flrep_writer *w, uint64_t tick, const dg_qentity *e, const int64_t *x, size_t n,
                              bool quantized, dg_error *err)
{
    if (w->have_tick && tick <= w->last_tick)
        return dg_error_set(err, DG_E_STATE, DG_OFFSET_NONE, "writer", "expected a tick after %llu, found %llu",
                            (unsigned long long)w->last_tick, (unsigned long long)tick);
    if (n > DG_FLREP_MAX_LIVE)
        return dg_error_set(err, DG_E_RANGE, DG_OFFSET_NONE, "writer", "tick %llu: expected at most 65535 entities, found %zu",
                            (unsigned long long)tick, n);
    const flrep_schema2 *s = &w->schema2;
    size_t nf = s->s.field_count;
    bool ok = true;
    uint32_t prev = 0;
    for (size_t i = 0; i < n; i++) {
        ok &= e[i].id > prev;   /* also id 0 first */
        prev = e[i].id;
        ok &= std2_ok(w, &e[i], quantized);
    }
    uint64_t outside = 0;   /* non-zero when some value is not one of its field's */
    for (size_t f = 0; f < nf; f++) {
        uint64_t lo = s->vlo[f], span = s->vspan[f];
        for (size_t i = 0; i < n; i++)
            outside |= (uint64_t)((uint64_t)x[i * nf + f] - lo > span);
    }
    return ok && !outside ? DG_OK : input2_error(w, tick, e, x, n, err);
}

/* Encodes the tick into the chunk; the encoder tracks the world a reader will rebuild. */
static dg_status append_tick(dg_flrep_writer *w, uint64_t tick, const dg_qentity *e, const int64_t *x, size_t n,
                             const dg_event *ev, size_t nev, dg_error *err)
{
    size_t mark = w->content.len;
    bool keyframe = w->seq == 0;
    dg_status st = w->v2 ? dg_flrep__encode_tick2(&w->content, tick, keyframe, &w->ctx, &w->world, &w->scratch.next, e, x,
                                              n, ev, nev, &w->bits, err)
                         : dg_flrep__encode_tick(&w->content, tick, keyframe, &w->ctx, &w->world, &w->scratch.next, e, n,
                                             ev, nev, &w->bits, err);
    if (st != DG_OK) {
        w->content.len = mark;
        w->failed = true;
        return st;
    }
    if (keyframe)
        w->chunk_first = tick;
    w->chunk_last = tick;
    w->seq++;
    w->have_tick = true;
    w->last_tick = tick;
    return DG_OK;
}

/* dg_flrep_writer_tick_q; `quantized` as check_input's. */
static dg_status write_tick(dg_flrep_writer *w, uint64_t tick, const dg_qentity *e, const int64_t *x, size_t n,
                            const dg_event *ev, size_t nev, bool quantized, const input_scan *scan, dg_error *err)
{
    if (w->failed)
        return dg_error_set(err, DG_E_STATE, DG_OFFSET_NONE, "writer", "the writer failed earlier; close or abort it");
    dg_status st = w->v2 ? check_input2(w, tick, e, x, n, quantized, err) : check_input(w, tick, e, n, quantized, scan, err);
    if (st != DG_OK)
        return st;
    if (w->seq > 0 && tick - w->chunk_first >= w->kf_interval) {
        st = flush_chunk(w, err);
        if (st != DG_OK)
            return st;
    }
    if (!w->f) {
        st = open_next_file(w, err);
        if (st != DG_OK)
            return st;
    }
    return append_tick(w, tick, e, x, n, ev, nev, err);
}

dg_status dg_flrep_writer_tick_q(dg_flrep_writer *w, uint64_t tick, const dg_qentity *e, size_t n,
                                 const dg_event *ev, size_t nev, dg_error *err)
{
    dg_error local;
    err = flrep_err(err, &local);
    if (w->v2 && w->schema2.s.field_count)
        return extras_missing(w, err);
    return write_tick(w, tick, e, NULL, n, ev, nev, false, NULL, err);
}

dg_status dg_flrep_writer_tick_qx(dg_flrep_writer *w, uint64_t tick, const dg_qentity *e, const int64_t *extras,
                                  size_t n, const dg_event *ev, size_t nev, dg_error *err)
{
    dg_error local;
    err = flrep_err(err, &local);
    size_t nf = w->v2 ? w->schema2.s.field_count : 0;
    if (nf && n && !extras)
        return extras_missing(w, err);
    return write_tick(w, tick, e, nf ? extras : NULL, n, ev, nev, false, NULL, err);
}

static int cmp_qentity_id(const void *a, const void *b)
{
    uint32_t x = ((const dg_qentity *)a)->id, y = ((const dg_qentity *)b)->id;
    return (x > y) - (x < y);
}

dg_status dg_flrep_writer_tick(dg_flrep_writer *w, uint64_t tick, const dg_entity_in *ents, size_t n,
                               const dg_event *events, size_t nev, dg_qentity *qout, dg_error *err)
{
    dg_error local;
    err = flrep_err(err, &local);
    if (n > w->qcap) {
        dg_qentity *q = realloc(w->qbuf, n * sizeof *q);
        if (!q)
            return dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, "writer", "out of memory");
        w->qbuf = q;
        w->qcap = n;
    }
    if (w->v2)
        return dg_flrep_writer_tick_x(w, tick, ents, NULL, n, events, nev, qout, NULL, err);
    /* quantized straight into the caller's array when there is one: no copy of the tick after it */
    dg_qentity *q = qout ? qout : w->qbuf;
    dg_status qst = dg_quant_entities(ents, q, n, NULL, err);
    if (qst != DG_OK)
        return qst;
    /* the one walk over the ids: whether to sort, and check_input's */
    input_scan sc = scan_input(q, n);
    if (!sc.ascending) {
        qsort(q, n, sizeof *q, cmp_qentity_id);
        sc = scan_input(q, n);
    }
    return write_tick(w, tick, q, NULL, n, events, nev, true, &sc, err);
}

struct flrep_perm {
    uint32_t id;
    size_t k;
};

static int cmp_perm_id(const void *a, const void *b)
{
    uint32_t x = ((const struct flrep_perm *)a)->id, y = ((const struct flrep_perm *)b)->id;
    return (x > y) - (x < y);
}

static bool reserve_x(dg_flrep_writer *w, size_t n, size_t nf)
{
    if (n > w->qcap) {
        dg_qentity *q = realloc(w->qbuf, n * sizeof *q);
        if (!q)
            return false;
        w->qbuf = q;
        w->qcap = n;
    }
    if (n * (nf ? nf : 1) > w->xcap || !w->perm) {
        size_t cap = n * (nf ? nf : 1) + 1;
        int64_t *x = realloc(w->xbuf, cap * sizeof *x);
        if (!x)
            return false;
        w->xbuf = x;
        struct flrep_perm *p = realloc(w->perm, (n + 1) * sizeof *p);
        if (!p)
            return false;
        w->perm = p;
        w->xcap = cap;
    }
    return true;
}

dg_status dg_flrep_writer_tick_x(dg_flrep_writer *w, uint64_t tick, const dg_entity_in *ents, const int64_t *extras,
                                 size_t n, const dg_event *events, size_t nev, dg_qentity *qout, int64_t *xout,
                                 dg_error *err)
{
    dg_error local;
    err = flrep_err(err, &local);
    size_t nf = w->v2 ? w->schema2.s.field_count : 0;
    if (nf && n && !extras)
        return extras_missing(w, err);
    if (!reserve_x(w, n, nf))
        return dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, "writer", "out of memory");
    const dg_schema *sc = w->v2 ? &w->schema2.s : NULL;
    bool sorted = true;
    for (size_t i = 0; i < n; i++) {
        w->perm[i] = (struct flrep_perm){ents[i].id, i};
        sorted &= i == 0 || ents[i].id > ents[i - 1].id;
    }
    if (!sorted)
        qsort(w->perm, n, sizeof *w->perm, cmp_perm_id);
    /* straight into the caller's arrays when it gives them, as dg_flrep_writer_tick: no copy after */
    dg_qentity *q = qout ? qout : w->qbuf;
    int64_t *x = xout ? xout : w->xbuf;
    if (sorted) {   /* in id order already: the batch (dg_quant_entities_schema), extras in one copy */
        size_t done = 0;
        dg_status qst = dg_quant_entities_schema(sc, ents, q, n, &done, err);
        if (nf && done)
            memcpy(x, extras, done * nf * sizeof *extras);
        if (qst != DG_OK)
            return qst;
        return write_tick(w, tick, q, nf ? x : NULL, n, events, nev, true, NULL, err);
    }
    for (size_t i = 0; i < n; i++) {
        size_t k = w->perm[i].k;
        dg_status qst = dg_quant_entity_schema(sc, &ents[k], &q[i], err);
        if (qst != DG_OK)
            return qst;
        if (nf)
            memcpy(x + i * nf, extras + k * nf, nf * sizeof *extras);
    }
    return write_tick(w, tick, q, nf ? x : NULL, n, events, nev, true, NULL, err);
}

static void free_writer(dg_flrep_writer *w)
{
    if (w->f)
        fclose(w->f);
    if (w->tmp_path)
        remove(w->tmp_path);
    free(w->tmp_path);
    free(w->cur_path);
    free(w->path);
    for (size_t i = 0; i < w->nseries; i++)
        free(w->series[i]);
    free(w->series);
    dg_buf_free(&w->preamble);
    dg_buf_free(&w->content);
    dg_buf_free(&w->bits);
    dg_buf_free(&w->comp);
    ZSTD_freeCCtx(w->cctx);
    dg_flrep__world_free(&w->world);
    dg_flrep__tick_scratch_free(&w->scratch);
    free(w->chunks);
    free(w->qbuf);
    free(w->xbuf);
    free(w->perm);
    dg_flrep__schema2_free(&w->schema2);
    free(w);
}

dg_status dg_flrep_writer_close(dg_flrep_writer *w, dg_error *err)
{
    dg_error local;
    err = flrep_err(err, &local);
    if (!w)
        return DG_OK;
    dg_status st = w->failed ? dg_error_set(err, DG_E_STATE, DG_OFFSET_NONE, "writer",
                                            "the writer failed earlier; nothing was finished")
                             : flush_chunk(w, err);
    if (st == DG_OK && w->f)
        st = finish_file(w, err);
    free_writer(w);
    return st;
}

void dg_flrep_writer_abort(dg_flrep_writer *w)
{
    if (w)
        free_writer(w);
}

size_t dg_flrep_writer_file_count(const dg_flrep_writer *w) { return w->files_total + (w->f ? 1 : 0); }

void dg_flrep_writer_on_chunk(dg_flrep_writer *w, dg_flrep_chunk_fn fn, void *user)
{
    w->on_chunk = fn;
    w->on_chunk_user = user;
}
void dg_flrep__writer_set_fault_self_check(dg_flrep_writer *w, uint64_t tick)
{
    w->ctx.fault_double_delta_tick = tick;
    w->ctx.fault_double_delta = true;
}

void dg_flrep__writer_set_general_only(dg_flrep_writer *w, bool on) { w->ctx.general_only = on; }

bool dg_flrep_fsync_parse(const char *s, dg_flrep_fsync *out)
{
    static const char *const names[] = {"close", "none", "chunk"};
    for (int i = 0; i < 3; i++)
        if (strcmp(s, names[i]) == 0) {
            *out = (dg_flrep_fsync)i;
            return true;
        }
    return false;
}
