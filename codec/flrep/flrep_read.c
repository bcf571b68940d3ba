/* codec/flrep/flrep_read.c — the .flrep reader: open (header, sections, trailer or recovery scan),
 * linear playback, seek. The file is hostile: nothing is allocated on a declared size before it is
 * checked against the bytes present, and a call that fails leaves the position and the world it
 * reported before untouched (docs/FORMAT-flrep.md §5, §8, §10). Only one chunk is held in memory
 * (two while a recovery scan checks the chunks after the first). */
#include "flrep_internal.h"

#define XXH_INLINE_ALL
#include <xxhash.h>
#include <zstd.h>

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

struct dg_flrep_reader {
    const uint8_t *mem;         /* memory source, or NULL */
    FILE *f;                    /* file source, or NULL */
    char *path;
    uint64_t size;
    uint32_t cap;
    bool require_trailer;     /* opts: no recovery scan */
    flrep_tables tables;
    dg_flrep_file_info info;
    dg_flrep_section_info *sections;
    size_t nsections, sections_cap;
    dg_flrep_chunk_info *chunks;
    size_t nchunks;
    flrep_tick_ctx ctx;
    ZSTD_DCtx *dctx;
    dg_buf comp;                /* compressed bytes of the loaded chunk (file source) */
    uint8_t *content;           /* decompressed bytes of the loaded chunk */
    size_t content_cap;
    long loaded;                /* chunk whose content is in `content`, -1 = none */
    size_t pos_chunk;           /* chunk of the next tick */
    uint32_t seq;               /* index within pos_chunk of the next tick */
    size_t content_pos;         /* byte offset of the next tick in the content */
    flrep_world world, seek_world;
    flrep_tick_scratch scratch;
    uint64_t fault_seek_drop_tick; /* test hook (dg_flrep__reader_set_fault_seek_drop_delta), when */
    bool fault_seek_drop;          /* this is set (every u64 is a tick: no value can mean off) */
    flrep_world fault_world;       /* where that hook decodes the tick it drops */
    char where[128];
    long where_chunk;           /* chunk `where` names, -1 = none */
    bool growing;               /* dg_flrep_reader_open_growing: no trailer, the index grows by refresh */
    uint64_t scan_pos;          /* growing: where the next chunk's framing starts */
    size_t chunks_cap;          /* growing: capacity of chunks */
    flrep_world scan_world;     /* growing: the world refresh decodes the new chunks in */
    dg_error grow_err;          /* growing: the complete chunk that did not decode (sticky) */
    bool grow_failed;
};

/* ---- byte source ------------------------------------------------------------------------- */

static const char *src_name(const dg_flrep_reader *r) { return r->path ? r->path : "<memory>"; }

static dg_status src_read(dg_flrep_reader *r, uint64_t off, size_t len, void *dst, const char *what, dg_error *err)
{
    if (off > r->size || len > r->size - off)
        return dg_error_set(err, DG_E_TRUNCATED, off, what, "expected %zu bytes, found %llu", len,
                            (unsigned long long)(off > r->size ? 0 : r->size - off));
    if (r->mem) {
        memcpy(dst, r->mem + off, len);
        return DG_OK;
    }
    if (fseeko(r->f, (off_t)off, SEEK_SET) != 0 || fread(dst, 1, len, r->f) != len)
        return dg_error_set(err, DG_E_IO, off, src_name(r), "read of %zu bytes failed: %s", len,
                            ferror(r->f) ? strerror(errno) : "unexpected end of file");
    return DG_OK;
}

/* Bytes [off, off+len) as a stable pointer: into the caller's buffer for a memory source, else a
 * copy the tables keep (header and section payloads only). */
static const uint8_t *src_keep(dg_flrep_reader *r, uint64_t off, size_t len, const char *what, dg_error *err)
{
    if (off > r->size || len > r->size - off) {
        dg_error_set(err, DG_E_TRUNCATED, off, what, "expected %zu bytes, found %llu", len,
                     (unsigned long long)(off > r->size ? 0 : r->size - off));
        return NULL;
    }
    if (r->mem)
        return r->mem + off;
    flrep_tables *t = &r->tables;
    if (t->keep_count == sizeof t->keep / sizeof t->keep[0]) {
        dg_error_set(err, DG_E_MALFORMED, off, what, "too many kept buffers");
        return NULL;
    }
    uint8_t *p = malloc(len ? len : 1);
    if (!p) {
        dg_error_set(err, DG_E_NOMEM, off, what, "out of memory for %zu bytes", len);
        return NULL;
    }
    if (src_read(r, off, len, p, what, err) != DG_OK) {
        free(p);
        return NULL;
    }
    t->keep[t->keep_count++] = p;
    return p;
}

/* ---- header and sections ----------------------------------------------------------------- */

static dg_status read_header(dg_flrep_reader *r, uint64_t *pos, dg_error *err)
{
    dg_flrep_header *h = &r->tables.hdr;
    uint8_t fixed[10];
    size_t have = r->size < sizeof fixed ? (size_t)r->size : sizeof fixed;
    if (src_read(r, 0, have, fixed, "header", err))
        return err->code;
    size_t used = 0;
    if (have < sizeof fixed)  /* let the prefix parser name the missing field */
        return dg_flrep__parse_prefix(fixed, have, 0, h, &used, err);
    size_t plen = sizeof fixed + dg_le16(fixed + 8);
    const uint8_t *prefix = src_keep(r, 0, plen <= r->size ? plen : (size_t)r->size, "header", err);
    if (!prefix)
        return err->code;
    dg_status st = dg_flrep__parse_prefix(prefix, plen <= r->size ? plen : (size_t)r->size, 0, h, &used, err);
    if (st != DG_OK)
        return st;
    uint8_t lb[4];
    if (src_read(r, used, 4, lb, "header: u32 headerBodyLength", err))
        return err->code;
    uint32_t blen = dg_le32(lb);
    const uint8_t *body = src_keep(r, used + 4, blen, "header body", err);
    if (!body)
        return err->code;
    st = dg_flrep__parse_header_body(body, blen, used + 4, h, err);
    *pos = used + 4 + blen;
    return st;
}

static dg_status add_section_info(dg_flrep_reader *r, uint16_t id, uint32_t len, uint64_t off, dg_error *err)
{
    /* at most one entry per 6 bytes of file: growth is bounded by what is really there; a usual
     * file (types, factions, roster, camera) allocates once */
    if (!dg_grow((void **)&r->sections, &r->sections_cap, r->nsections + 1, sizeof *r->sections))
        return dg_error_set(err, DG_E_NOMEM, off, "sections", "out of memory");
    r->sections[r->nsections++] = (dg_flrep_section_info){id, len, off};
    return DG_OK;
}

static dg_status parse_schema_section(dg_flrep_reader *r, const uint8_t *p, uint32_t len, uint64_t off, dg_error *err)
{
    flrep_schema2 *s = calloc(1, sizeof *s);
    if (!s)
        return dg_error_set(err, DG_E_NOMEM, off, "section 0x0005 (entity schema)", "out of memory");
    dg_status st = dg_flrep__parse_schema(p, len, off, s, err);
    if (st != DG_OK) {
        free(s);
        return st;
    }
    r->tables.schema2 = s;
    return DG_OK;
}

static dg_status parse_known_section(dg_flrep_reader *r, uint16_t id, const uint8_t *p, uint32_t len, uint64_t off,
                                     dg_error *err)
{
    switch (id) {
    case FLREP_SEC_SCHEMA: return parse_schema_section(r, p, len, off, err);
    case FLREP_SEC_TYPES: return dg_flrep__parse_types(p, len, off, &r->tables, err);
    case FLREP_SEC_FACTIONS: return dg_flrep__parse_factions(p, len, off, &r->tables, err);
    default: return dg_flrep__parse_roster(p, len, off, &r->tables, err);
    }
}

/* "section 0x0001 (types)", formatted only for an error that names it: a file with no error in
 * its sections formats none (five per open were 1 % of the recovery fuzzer's time). */
static const char *section_where(char *buf, size_t cap, uint16_t id)
{
    snprintf(buf, cap, "section 0x%04X (%s)", id, dg_flrep__section_name(id));
    return buf;
}

/* Format 2.0's required sections (§12.1): the schema always, the type and faction tables when the
 * schema has those fields. */
static dg_status check_sections2(dg_flrep_reader *r, const bool seen[6], dg_error *err)
{
    const flrep_schema2 *s = r->tables.schema2;
    uint16_t missing = 0;
    if (!seen[FLREP_SEC_SCHEMA] || !s)
        missing = FLREP_SEC_SCHEMA;
    else if ((s->s.std_mask & DG_STD_TYPE) && !seen[FLREP_SEC_TYPES])
        missing = FLREP_SEC_TYPES;
    else if ((s->s.std_mask & DG_STD_FACTION) && !seen[FLREP_SEC_FACTIONS])
        missing = FLREP_SEC_FACTIONS;
    if (missing)
        return dg_error_set(err, DG_E_MALFORMED, r->info.data_start - 6, "sections",
                            "expected required section 0x%04X (%s) of a format 2.0 file%s, found none", missing,
                            dg_flrep__section_name(missing),
                            missing == FLREP_SEC_SCHEMA ? "" : " whose schema has that field");
    r->tables.hdr.schema = &s->s;
    return DG_OK;
}

static dg_status read_sections(dg_flrep_reader *r, uint64_t pos, dg_error *err)
{
    bool seen[6] = {false};
    bool v2 = r->tables.hdr.major == DG_FLREP_MAJOR_SCHEMA;   /* §12.1: 0x0005 is known in 2.x only */
    uint16_t last_known = v2 ? FLREP_SEC_SCHEMA : FLREP_SEC_CAMERA;
    char where[64];
    for (;;) {
        uint8_t sh[6];
        if (src_read(r, pos, 6, sh, "sections: expected a section header or the end marker", err))
            return err->code;
        uint16_t id = dg_le16(sh);
        uint32_t len = dg_le32(sh + 2);
        if (id == FLREP_SEC_END) {
            if (len != 0)
                return dg_error_set(err, DG_E_MALFORMED, pos + 2, section_where(where, sizeof where, id),
                                    "expected byteLength 0, found %u", len);
            r->info.data_start = pos + 6;
            break;
        }
        if ((uint64_t)len > r->size - pos - 6)
            return dg_error_set(err, DG_E_TRUNCATED, pos + 2, section_where(where, sizeof where, id),
                                "expected byteLength <= %llu (the bytes left), found %u",
                                (unsigned long long)(r->size - pos - 6), len);
        if (id <= last_known && seen[id])
            return dg_error_set(err, DG_E_MALFORMED, pos, section_where(where, sizeof where, id),
                                "expected at most one such section, found a second");
        if (add_section_info(r, id, len, pos + 6, err))
            return err->code;
        if ((id >= FLREP_SEC_TYPES && id <= FLREP_SEC_ROSTER) || (v2 && id == FLREP_SEC_SCHEMA)) {
            /* a memory source cannot fail here (the length was checked against the bytes present);
             * a file source names the section in a failed read */
            const char *what = r->mem ? "section" : section_where(where, sizeof where, id);
            const uint8_t *p = src_keep(r, pos + 6, len, what, err);
            if (!p || parse_known_section(r, id, p, len, pos + 6, err))
                return err->code;
        }
        if (id <= last_known)
            seen[id] = true;
        pos += 6 + (uint64_t)len;
    }
    if (v2)
        return check_sections2(r, seen, err);
    for (uint16_t id = FLREP_SEC_TYPES; id <= FLREP_SEC_ROSTER; id++)
        if (!seen[id])
            return dg_error_set(err, DG_E_MALFORMED, r->info.data_start - 6, "sections",
                                "expected required section 0x%04X (%s), found none", id, dg_flrep__section_name(id));
    r->tables.hdr.schema = dg_schema_legacy();
    return DG_OK;
}

/* ---- index: trailer or recovery ---------------------------------------------------------- */

static dg_status read_chunk_hdr(dg_flrep_reader *r, uint64_t off, flrep_chunk_hdr *h, dg_error *err)
{
    uint8_t b[FLREP_CHUNK_HDR_SIZE];
    if (src_read(r, off, sizeof b, b, "chunk framing", err))
        return err->code;
    return dg_flrep__chunk_hdr_parse(b, off, r->size - off - sizeof b, r->tables.hdr.keyframe_interval_ticks, r->cap, h,
                                 err);
}

static dg_status push_chunk(dg_flrep_reader *r, uint64_t off, const flrep_chunk_hdr *h, size_t *cap, dg_error *err)
{
    if (!dg_grow((void **)&r->chunks, cap, r->nchunks + 1, sizeof *r->chunks))
        return dg_error_set(err, DG_E_NOMEM, off, "index", "out of memory");
    r->chunks[r->nchunks++] = (dg_flrep_chunk_info){off, h->first_tick, h->last_tick, h->tick_count,
                                                    h->compressed_size, h->decompressed_size};
    return DG_OK;
}

/* The trailer's own bytes (FORMAT-flrep.md §8): size, tableOffset, magic, entryCount, indexCheck.
 * DG_OK with *out (tlen bytes, caller frees) when they are intact; otherwise the trailer is missing
 * or corrupt, err says why, and the caller recovers. */
static dg_status read_trailer_bytes(dg_flrep_reader *r, uint8_t **out, size_t *out_len, dg_error *err)
{
    uint64_t ds = r->info.data_start;
    *out = NULL;
    if (r->size < ds + FLREP_TRAILER_FIXED)
        return dg_error_set(err, DG_E_TRUNCATED, r->size, "trailer", "expected at least %u trailer bytes, found %llu",
                            FLREP_TRAILER_FIXED, (unsigned long long)(r->size - ds));
    uint8_t b8[8];
    if (src_read(r, r->size - 8, 8, b8, "trailer", err))
        return err->code;
    uint64_t toff = dg_le64(b8);
    if (toff < ds || toff > r->size - FLREP_TRAILER_FIXED || (r->size - FLREP_TRAILER_FIXED - toff) % 16 != 0)
        return dg_error_set(err, DG_E_MALFORMED, r->size - 8, "trailer",
                            "expected tableOffset in %llu..%llu leaving room for whole entries, found %llu",
                            (unsigned long long)ds, (unsigned long long)(r->size - FLREP_TRAILER_FIXED),
                            (unsigned long long)toff);
    size_t tlen = (size_t)(r->size - toff);
    uint8_t *t = malloc(tlen);
    if (!t)
        return dg_error_set(err, DG_E_NOMEM, toff, "trailer", "out of memory");
    dg_status st = src_read(r, toff, tlen, t, "trailer", err);
    uint32_t n = st == DG_OK ? dg_le32(t + 4) : 0;
    uint64_t body = tlen - 16;
    if (st == DG_OK && memcmp(t, "FLIX", 4) != 0)
        st = dg_error_set(err, DG_E_MAGIC, toff, "trailer", "expected magic \"FLIX\", found %02X %02X %02X %02X", t[0],
                          t[1], t[2], t[3]);
    if (st == DG_OK && (uint64_t)n * 16 + 32 != body)
        st = dg_error_set(err, DG_E_MALFORMED, toff + 4, "trailer", "expected entryCount %llu to fill the trailer, found %u",
                          (unsigned long long)((body - 32) / 16), n);
#ifndef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
    if (st == DG_OK && XXH3_64bits(t, (size_t)body) != dg_le64(t + body))
        st = dg_error_set(err, DG_E_CHECKSUM, toff + body, "trailer", "expected indexCheck %016llX, found %016llX",
                          (unsigned long long)XXH3_64bits(t, (size_t)body), (unsigned long long)dg_le64(t + body));
#endif
    if (st != DG_OK) {
        free(t);
        return st;
    }
    *out = t;
    *out_len = tlen;
    return DG_OK;
}

/* Prefixes err->where with "trailer entry I, chunk I at byte B": a chunk framing error found
 * through an intact trailer names the entry that points at it. */
static void name_entry_in_error(dg_error *err, uint32_t i, uint64_t off)
{
    char w2[sizeof err->where + 64];
    snprintf(w2, sizeof w2, "trailer entry %u, chunk %u at byte %llu: %s", i, i, (unsigned long long)off, err->where);
    memcpy(err->where, w2, sizeof err->where - 1);  /* deliberately cut to fit */
    err->where[sizeof err->where - 1] = '\0';
}

/* An intact trailer's promises against the chunks it names (§8): every framing valid, keyframe
 * ticks, offsets back to back from dataStart to tableOffset, ticks increasing, the totals. A
 * broken promise is an error of the file, not a reason to recover: the checksummed index says
 * where the data is, so a chunk that does not match it is damage, never a cut-off recording. */
static dg_status check_trailer_chunks(dg_flrep_reader *r, const uint8_t *t, size_t tlen, dg_error *err)
{
    uint64_t toff = r->size - tlen;
    uint32_t n = dg_le32(t + 4);
    size_t cap = 0;
    uint64_t expect = r->info.data_start, ticks = 0;
    dg_status st = DG_OK;
    for (uint32_t i = 0; st == DG_OK && i < n; i++) {
        uint64_t kt = dg_le64(t + 32 + 16 * (size_t)i), off = dg_le64(t + 40 + 16 * (size_t)i);
        flrep_chunk_hdr h;
        if (off != expect) {
            st = dg_error_set(err, DG_E_MALFORMED, toff + 40 + 16 * (uint64_t)i, "trailer",
                              "entry %u: expected chunk offset %llu (where the previous chunk ends), found %llu", i,
                              (unsigned long long)expect, (unsigned long long)off);
        } else if (read_chunk_hdr(r, off, &h, err) != DG_OK) {
            name_entry_in_error(err, i, off);
            st = err->code;
        } else if (h.first_tick != kt) {
            st = dg_error_set(err, DG_E_MALFORMED, off + 8, "trailer",
                              "entry %u, chunk %u at byte %llu: expected firstTick %llu (the entry's keyframe tick), "
                              "found %llu", i, i, (unsigned long long)off, (unsigned long long)kt,
                              (unsigned long long)h.first_tick);
        } else if (i > 0 && h.first_tick <= r->chunks[i - 1].last_tick) {
            st = dg_error_set(err, DG_E_MALFORMED, off + 8, "trailer",
                              "entry %u, chunk %u at byte %llu: expected firstTick > %llu (the previous chunk's "
                              "lastTick), found %llu", i, i, (unsigned long long)off,
                              (unsigned long long)r->chunks[i - 1].last_tick, (unsigned long long)h.first_tick);
        } else {
            st = push_chunk(r, off, &h, &cap, err);
        }
        expect = off + FLREP_CHUNK_HDR_SIZE + (st == DG_OK ? h.compressed_size : 0);
        ticks += st == DG_OK ? h.tick_count : 0;
    }
    if (st == DG_OK && expect != toff)
        st = dg_error_set(err, DG_E_MALFORMED, toff, "trailer", "expected the last chunk to end at %llu, found %llu",
                          (unsigned long long)toff, (unsigned long long)expect);
    if (st == DG_OK) {
        uint64_t ft = dg_le64(t + 8), lt = dg_le64(t + 16), tc = dg_le64(t + 24);
        uint64_t eft = n ? r->chunks[0].first_tick : 0, elt = n ? r->chunks[n - 1].last_tick : 0;
        if (ft != eft || lt != elt || tc != ticks)
            st = dg_error_set(err, DG_E_MALFORMED, toff + 8, "trailer",
                              "expected first/last tick %llu/%llu and %llu ticks, found %llu/%llu and %llu",
                              (unsigned long long)eft, (unsigned long long)elt, (unsigned long long)ticks,
                              (unsigned long long)ft, (unsigned long long)lt, (unsigned long long)tc);
    }
    if (st != DG_OK)
        r->nchunks = 0;
    return st;
}

static dg_status load_chunk(dg_flrep_reader *r, size_t k, dg_error *err);

/* Where and why the recovery scan stopped, for dg_flrep_file_info.recovery_stop. */
static void note_scan_stop(dg_flrep_reader *r, uint64_t pos, const dg_error *why)
{
    char detail[160];
    dg_error_format(why, detail, sizeof detail);
    snprintf(r->info.recovery_stop, sizeof r->info.recovery_stop, "scan stopped at byte %llu: %s",
             (unsigned long long)pos, detail);
}

/* What one step of the recovery scan found at a chunk edge. */
typedef enum scan_result {
    SCAN_ADDED,   /* a complete chunk, every tick decoded: pushed */
    SCAN_END,     /* no chunk, or one cut short by the end of the bytes (why says which, if any) */
    SCAN_STOP,    /* a chunk whose bytes are all there but wrong (why says what) */
    SCAN_FATAL,   /* a chunk over the cap, or out of memory (err set) */
} scan_result;

/* One step of the forward scan (§8) at pos: the framing, the tick order against the previous
 * chunk, then every tick decoded in `world`. A framing that asks for more bytes than there are is
 * SCAN_END (a cut-off recording, or one still being written); its headerCheck held, so the size is
 * the writer's, not damage. */
static scan_result scan_chunk(dg_flrep_reader *r, uint64_t pos, size_t *cap, flrep_world *world,
                              void (*before_decode)(dg_flrep_reader *, void *), void *user, dg_error *why,
                              dg_error *err)
{
    flrep_chunk_hdr h;
    if (r->size - pos < FLREP_CHUNK_HDR_SIZE) {
        if (r->size != pos)
            dg_error_set(why, DG_E_TRUNCATED, pos, "chunk framing", "expected %u bytes, found %llu",
                         FLREP_CHUNK_HDR_SIZE, (unsigned long long)(r->size - pos));
        return SCAN_END;
    }
    if (read_chunk_hdr(r, pos, &h, why) != DG_OK) {
        if (why->code == DG_E_LIMIT) {
            dg_error_set(err, why->code, why->offset, why->where, "%s", why->msg);
            return SCAN_FATAL;
        }
        return why->code == DG_E_TRUNCATED ? SCAN_END : SCAN_STOP;
    }
    if (r->nchunks && h.first_tick <= r->chunks[r->nchunks - 1].last_tick) {
        dg_error_set(why, DG_E_MALFORMED, pos + 8, "chunk framing",
                     "expected firstTick > %llu (the previous chunk's lastTick), found %llu",
                     (unsigned long long)r->chunks[r->nchunks - 1].last_tick, (unsigned long long)h.first_tick);
        return SCAN_STOP;
    }
    if (push_chunk(r, pos, &h, cap, err) != DG_OK)
        return SCAN_FATAL;
    if (before_decode)
        before_decode(r, user);
    r->loaded = -1;
    size_t k = r->nchunks - 1;
    if (load_chunk(r, k, why) != DG_OK ||
        dg_flrep__chunk_validate(r->content, &h, pos, k, &r->ctx, world, &r->scratch, why) != DG_OK) {
        r->nchunks--;
        return SCAN_STOP;
    }
    return SCAN_ADDED;
}

/* recover_index keeps chunk 0's content aside while the later chunks are checked. */
typedef struct first_aside {
    uint8_t *p;
    size_t cap;
} first_aside;

static void set_first_aside(dg_flrep_reader *r, void *user)
{
    first_aside *a = user;
    if (r->nchunks != 2)
        return;
    a->p = r->content;
    a->cap = r->content_cap;
    r->content = NULL;
    r->content_cap = 0;
}

/* Keeps every complete chunk from data_start on; stops at the first that is not (noting where and
 * why), except at a chunk whose intact framing declares more than the cap: a file this reader cannot
 * hold is refused, never cut short to what fits (FORMAT-flrep.md §8, "Faults"). Every
 * tick of a kept chunk is decoded here, so playback (which starts at chunk 0) would decompress and
 * walk chunk 0 a second time: instead chunk 0 stays loaded. While the later chunks are checked it
 * waits in a buffer of its own, freed before returning, so the reader still holds one chunk. */
static dg_status recover_index(dg_flrep_reader *r, dg_error *err)
{
    size_t cap = 0;
    uint64_t pos = r->info.data_start;
    first_aside first = {NULL, 0};
    r->where_chunk = -1;        /* a rejected trailer's chunk list is gone */
    dg_status st = DG_OK;
    for (;;) {
        dg_error why;
        dg_error_clear(&why);
        scan_result sr = scan_chunk(r, pos, &cap, &r->world, set_first_aside, &first, &why, err);
        if (sr == SCAN_FATAL)
            st = err->code;
        else if (sr == SCAN_STOP || (sr == SCAN_END && why.code != DG_OK))
            note_scan_stop(r, pos, &why);
        if (sr != SCAN_ADDED)
            break;
        pos += FLREP_CHUNK_HDR_SIZE + r->chunks[r->nchunks - 1].compressed_size;
    }
    if (first.p) {
        free(r->content);
        r->content = first.p;
        r->content_cap = first.cap;
    }
    r->world.n = 0;  /* playback starts from an empty world */
    r->loaded = st == DG_OK && r->nchunks ? 0 : -1;
    return st;
}

static void fill_info(dg_flrep_reader *r)
{
    dg_flrep_file_info *i = &r->info;
    i->file_size = r->size;
    i->chunks = r->chunks;
    i->chunk_count = r->nchunks;
    i->sections = r->sections;
    i->section_count = r->nsections;
    i->tick_count = 0;
    for (size_t k = 0; k < r->nchunks; k++)
        i->tick_count += r->chunks[k].tick_count;
    i->first_tick = r->nchunks ? r->chunks[0].first_tick : 0;
    i->last_tick = r->nchunks ? r->chunks[r->nchunks - 1].last_tick : 0;
}

/* ---- chunks and ticks -------------------------------------------------------------------- */

/* "chunk K at byte B (ticks F..L), content": what errors inside chunk k's content are located by,
 * formatted once per chunk (the structure walk and every tick of it share it). */
static const char *content_where(dg_flrep_reader *r, size_t k)
{
    if (r->where_chunk != (long)k) {
        const dg_flrep_chunk_info *ci = &r->chunks[k];
        snprintf(r->where, sizeof r->where, "chunk %zu at byte %llu (ticks %llu..%llu), content", k,
                 (unsigned long long)ci->offset, (unsigned long long)ci->first_tick,
                 (unsigned long long)ci->last_tick);
        r->where_chunk = (long)k;
    }
    return r->where;
}

/* Checks what the framing promised about the ticks (count, order, exact fill) by walking only the
 * tick and event headers, so no tick of a chunk whose structure is broken is ever delivered. */
static dg_status check_chunk_structure(const uint8_t *content, const dg_flrep_chunk_info *ci, const char *where,
                                       dg_error *err)
{
    dg_cur c;
    dg_cur_init(&c, content, ci->decompressed_size, 0, where, err);
    uint64_t prev = 0;
    for (uint32_t i = 0; i < ci->tick_count && c.ok; i++) {
        uint64_t at = dg_cur_offset(&c);
        uint64_t tick = dg_cur_u64(&c, "u64 tickIndex");
        dg_cur_skip(&c, 2, "u16 flags");
        dg_cur_skip(&c, 2, "u16 recordCount");
        uint16_t nev = dg_cur_u16(&c, "u16 eventCount");
        uint32_t rb = dg_cur_u32(&c, "u32 recordBytes");
        dg_cur_skip(&c, rb, "record block");
        for (uint16_t e = 0; e < nev && c.ok; e++) {
            dg_cur_skip(&c, 9, "event kind and tick");
            dg_cur_skip(&c, dg_cur_u16(&c, "u16 payloadLength"), "event payload");
        }
        bool order = i == 0 ? tick == ci->first_tick : tick > prev;
        if (c.ok && (!order || tick > ci->last_tick || (i + 1 == ci->tick_count && tick != ci->last_tick))) {
            c.pos = (size_t)at;
            dg_cur_fail(&c, DG_E_MALFORMED, "tick %u of %u: expected an increasing tick index from %llu to %llu, found %llu",
                        i + 1, ci->tick_count, (unsigned long long)ci->first_tick, (unsigned long long)ci->last_tick,
                        (unsigned long long)tick);
        }
        prev = tick;
    }
    dg_cur_expect_end(&c, "the chunk content after its last tick");
    return c.ok ? DG_OK : err->code;
}

/* The decompression context is made when the first chunk is loaded: it is the reader's largest
 * allocation (~100 KB, zeroed), and a file that fails in its header or sections, or a caller that
 * only reads the header and index, never needs it. A closed reader leaves its context as the
 * process's one spare for the next reader (a gate opens each recording several times: replay,
 * seeks, the recovery check), taken and given back with an atomic exchange. */
static _Atomic(ZSTD_DCtx *) spare_dctx;

static dg_status open_dctx(dg_flrep_reader *r, uint64_t at, dg_error *err)
{
    r->dctx = atomic_exchange(&spare_dctx, NULL);
    if (r->dctx)
        return DG_OK;
    r->dctx = ZSTD_createDCtx();
    if (!r->dctx)
        return dg_error_set(err, DG_E_NOMEM, at, "chunk", "out of memory for a decompression context");
#ifdef FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION
    ZSTD_DCtx_setParameter(r->dctx, ZSTD_d_experimentalParam3 /* forceIgnoreChecksum */, 1);
#endif
    return DG_OK;
}

/* Parameters stay (the same for every reader of the process); only the session is reset. */
static void release_dctx(ZSTD_DCtx *d)
{
    if (!d)
        return;
    ZSTD_DCtx_reset(d, ZSTD_reset_session_only);
    ZSTD_freeDCtx(atomic_exchange(&spare_dctx, d));
}

static dg_status load_chunk(dg_flrep_reader *r, size_t k, dg_error *err)
{
    if (r->loaded == (long)k)
        return DG_OK;
    const dg_flrep_chunk_info *ci = &r->chunks[k];
    flrep_chunk_hdr h = {ci->tick_count, ci->first_tick, ci->last_tick, ci->compressed_size, ci->decompressed_size};
    const uint8_t *src;
    uint64_t frame = ci->offset + FLREP_CHUNK_HDR_SIZE;
    if (r->mem) {
        src = r->mem + frame;
    } else {
        dg_buf_reset(&r->comp);
        if (!dg_buf_reserve(&r->comp, ci->compressed_size))
            return dg_error_set(err, DG_E_NOMEM, ci->offset, "chunk", "out of memory");
        if (src_read(r, frame, ci->compressed_size, r->comp.p, "chunk frame", err))
            return err->code;
        src = r->comp.p;
    }
    if (ci->decompressed_size > r->content_cap) {
        uint8_t *c = realloc(r->content, ci->decompressed_size);
        if (!c)
            return dg_error_set(err, DG_E_NOMEM, ci->offset, "chunk", "out of memory for %u bytes", ci->decompressed_size);
        r->content = c;
        r->content_cap = ci->decompressed_size;
    }
    r->loaded = -1;
    if (!r->dctx && open_dctx(r, ci->offset, err))
        return err->code;
    dg_status st = dg_flrep__chunk_decompress(r->dctx, src, &h, r->content, ci->offset, err);
    if (st == DG_OK)
        st = check_chunk_structure(r->content, ci, content_where(r, k), err);
    if (st != DG_OK) {
        char where[96];
        dg_flrep__chunk_where(where, sizeof where, k, &h);
        if (err && strncmp(err->where, "chunk ", 6) != 0) {
            char w2[sizeof err->where + sizeof where + 2];
            snprintf(w2, sizeof w2, "%s: %s", where, err->where);
            memcpy(err->where, w2, sizeof err->where - 1);  /* deliberately cut to fit */
            err->where[sizeof err->where - 1] = '\0';
        }
        return st;
    }
    r->loaded = (long)k;
    return DG_OK;
}

/* Decodes the next tick into `world` (only on success) and advances the position. */
static int step(dg_flrep_reader *r, flrep_world *world, uint64_t *tick, bool *kf, const dg_event **ev, size_t *nev,
                dg_error *err)
{
    while (r->pos_chunk < r->nchunks && r->seq >= r->chunks[r->pos_chunk].tick_count) {
        r->pos_chunk++;
        r->seq = 0;
        r->content_pos = 0;
    }
    if (r->pos_chunk >= r->nchunks)
        return 0;
    if (load_chunk(r, r->pos_chunk, err) != DG_OK)
        return -1;
    const dg_flrep_chunk_info *ci = &r->chunks[r->pos_chunk];
    dg_cur c;
    dg_cur_init(&c, r->content, ci->decompressed_size, 0, content_where(r, r->pos_chunk), err);
    c.pos = r->content_pos;
    if (dg_flrep__decode_tick(&c, r->seq, &r->ctx, world, &r->scratch, tick, kf, ev, nev, err) != DG_OK)
        return -1;
    r->content_pos = c.pos;
    r->seq++;
    return 1;
}

int dg_flrep_reader_next(dg_flrep_reader *r, dg_flrep_tick *out, dg_error *err)
{
    dg_error local;
    err = flrep_err(err, &local);
    size_t pc = r->pos_chunk, cp = r->content_pos;
    uint32_t seq = r->seq;
    uint64_t tick;
    bool kf;
    const dg_event *ev;
    size_t nev;
    int rc = step(r, &r->world, &tick, &kf, &ev, &nev, err);
    if (rc < 0) {
        r->pos_chunk = pc;
        r->content_pos = cp;
        r->seq = seq;
        return -1;
    }
    if (rc == 0)
        return 0;
    out->tick = tick;
    out->keyframe = kf;
    out->ents = r->world.ents;
    out->ent_count = r->world.n;
    out->extras = r->world.nx ? r->world.extras : NULL;
    out->events = ev;
    out->event_count = nev;
    return 1;
}

/* Index of the chunk holding the first tick >= tick (binary search over first ticks). */
static size_t chunk_for_tick(const dg_flrep_reader *r, uint64_t tick)
{
    size_t lo = 0, hi = r->nchunks;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (r->chunks[mid].first_tick <= tick)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0)
        return 0;
    size_t k = lo - 1;
    return tick > r->chunks[k].last_tick ? k + 1 : k;
}

/* *dst becomes a copy of *src (entities, prediction contexts, extra fields); false when there is no
 * memory for it. */
static bool world_copy(flrep_world *dst, const flrep_world *src)
{
    if (!dg_flrep__world_reserve(dst, src->n))
        return false;
    if (src->n) {
        memcpy(dst->ents, src->ents, src->n * sizeof *src->ents);
        memcpy(dst->pred, src->pred, src->n * sizeof *src->pred);
        if (src->nx)
            memcpy(dst->extras, src->extras, src->n * src->nx * sizeof *src->extras);
    }
    dst->n = src->n;
    return true;
}

/* The seek fault hook: decodes the tick before the target into a copy of the roll-forward world
 * and throws it away, so the seek hands over a world one delta stale. Returns false when it cannot
 * make the copy (the fault then does not fire: a test sees no divergence, never a wrong one). */
static bool fault_copy_world(dg_flrep_reader *r)
{
    return world_copy(&r->fault_world, &r->seek_world);
}

/* Whether a seek to `tick` (in chunk k) can go on from where the reader stands instead of from the
 * chunk's keyframe: the chunk is loaded, the reader is inside it (past its keyframe) and the target
 * is not behind it. Its world is then the one a roll-forward from the keyframe reaches at this
 * position (every call leaves the position and the world together, or restores both), so going on
 * from here decodes the same ticks from the same world and lands on the same state — without the
 * ticks before it. Not when the seek fault hook targets this tick: its drop must fire as on a fresh
 * seek (whose roll-forward decodes the tick before the target even when the reader stands on it). */
static bool seek_continues(const dg_flrep_reader *r, size_t k, uint64_t tick)
{
    if (r->pos_chunk != k || r->loaded != (long)k || r->seq == 0 || r->seq >= r->chunks[k].tick_count)
        return false;
    if (r->fault_seek_drop && tick == r->fault_seek_drop_tick)
        return false;
    return dg_le64(r->content + r->content_pos) <= tick;
}

dg_status dg_flrep_reader_seek(dg_flrep_reader *r, uint64_t tick, dg_error *err)
{
    dg_error local;
    err = flrep_err(err, &local);
    if (r->nchunks == 0 || tick > r->chunks[r->nchunks - 1].last_tick)
        return dg_error_set(err, DG_E_NOT_FOUND, DG_OFFSET_NONE, src_name(r),
                            "expected a tick <= %llu (the last tick), found %llu",
                            (unsigned long long)(r->nchunks ? r->chunks[r->nchunks - 1].last_tick : 0),
                            (unsigned long long)tick);
    size_t k = chunk_for_tick(r, tick);
    size_t pc = r->pos_chunk, cp = r->content_pos;
    uint32_t seq = r->seq;
    /* going on from here starts from a copy of the world, so a seek that fails leaves it untouched */
    if (!seek_continues(r, k, tick) || !world_copy(&r->seek_world, &r->world)) {
        r->pos_chunk = k;
        r->seq = 0;
        r->content_pos = 0;
        r->seek_world.n = 0;
    }
    dg_status st = DG_OK;
    /* roll forward (from the keyframe, or from here) to the tick before the target, in a world of
     * its own */
    while (r->seq < r->chunks[k].tick_count) {
        if (load_chunk(r, k, err) != DG_OK) {
            st = err->code;
            break;
        }
        uint64_t next_tick = dg_le64(r->content + r->content_pos);
        if (next_tick >= tick)
            break;
        uint64_t t;
        bool kf;
        const dg_event *ev;
        size_t nev;
        flrep_world *into = &r->seek_world;
        if (r->fault_seek_drop && tick == r->fault_seek_drop_tick && next_tick + 1 == tick && fault_copy_world(r))
            into = &r->fault_world;
        if (step(r, into, &t, &kf, &ev, &nev, err) < 0) {
            st = err->code;
            break;
        }
    }
    if (st != DG_OK) {
        r->pos_chunk = pc;
        r->content_pos = cp;
        r->seq = seq;
        return st;
    }
    dg_flrep__world_swap(&r->world, &r->seek_world);
    return DG_OK;
}

static void rewind_reader(dg_flrep_reader *r)
{
    r->pos_chunk = 0;
    r->seq = 0;
    r->content_pos = 0;
    r->world.n = 0;
}

dg_status dg_flrep_reader_validate(dg_flrep_reader *r, dg_error *err)
{
    dg_error local;
    err = flrep_err(err, &local);
    rewind_reader(r);
    dg_flrep_tick t;
    int rc;
    while ((rc = dg_flrep_reader_next(r, &t, err)) > 0)
        ;
    rewind_reader(r);
    return rc < 0 ? err->code : DG_OK;
}

void dg_flrep__reader_set_general_only(dg_flrep_reader *r, bool on)
{
    r->ctx.general_only = on;
}

void dg_flrep__reader_set_fault_double_delta(dg_flrep_reader *r, uint64_t tick)
{
    r->ctx.fault_double_delta_tick = tick;
    r->ctx.fault_double_delta = true;
}

void dg_flrep__reader_set_fault_seek_drop_delta(dg_flrep_reader *r, uint64_t tick)
{
    r->fault_seek_drop_tick = tick;
    r->fault_seek_drop = true;
}

/* ---- open / close ------------------------------------------------------------------------ */

static dg_status open_common(dg_flrep_reader *r, const dg_flrep_reader_opts *opts, dg_error *err)
{
    r->cap = opts && opts->max_decompressed ? opts->max_decompressed : DG_FLREP_DECOMP_CAP_DEFAULT;
    r->require_trailer = opts && opts->require_trailer;
    r->loaded = -1;
    r->where_chunk = -1;
    dg_buf_init(&r->comp);
    uint64_t pos = 0;
    dg_status st = read_header(r, &pos, err);
    if (st == DG_OK)
        st = read_sections(r, pos, err);
    if (st != DG_OK)
        return st;
    dg_flrep__tick_ctx_init(&r->ctx, r->tables.hdr.tick_rate_hz, &r->tables.type_set, &r->tables.faction_set);
    if (r->tables.schema2) {
        dg_flrep__tick_ctx_set_schema(&r->ctx, r->tables.schema2);
        size_t nx = r->tables.schema2->s.field_count;
        r->world.nx = r->seek_world.nx = r->fault_world.nx = r->scan_world.nx = r->scratch.next.nx = nx;
    }
    if (r->growing) {   /* no trailer yet: the index grows by dg_flrep_reader_refresh */
        r->scan_world.nx = r->world.nx;
        r->scan_pos = r->info.data_start;
        r->info.recovered = true;
        snprintf(r->info.recovery_reason, sizeof r->info.recovery_reason,
                 "a growing file: the index is built by refresh, no trailer is read");
        fill_info(r);
        return DG_OK;
    }
    dg_error why;
    dg_error_clear(&why);
    uint8_t *t = NULL;
    size_t tlen = 0;
    dg_status tst = read_trailer_bytes(r, &t, &tlen, &why);
    if (tst == DG_OK) {   /* an intact trailer: the chunks must be what it says (§8, "Faults") */
        st = check_trailer_chunks(r, t, tlen, err);
        free(t);
        if (st != DG_OK)
            return st;
    } else if (r->require_trailer) {
        return dg_error_set(err, why.code, why.offset, why.where, "%s", why.msg);
    } else {
        r->info.recovered = true;
        dg_error_format(&why, r->info.recovery_reason, sizeof r->info.recovery_reason);
        st = recover_index(r, err);
    }
    fill_info(r);
    return st;
}

static dg_status finish_open(dg_flrep_reader *r, dg_flrep_reader **out, const dg_flrep_reader_opts *opts,
                             dg_error *err)
{
    dg_status st = open_common(r, opts, err);
    if (st != DG_OK) {
        dg_flrep_reader_close(r);
        return st;
    }
    *out = r;
    return DG_OK;
}

static dg_status open_mem(dg_flrep_reader **out, const uint8_t *buf, size_t len, const dg_flrep_reader_opts *opts,
                          bool growing, dg_error *err)
{
    dg_error local;
    err = flrep_err(err, &local);
    *out = NULL;
    dg_flrep_reader *r = calloc(1, sizeof *r);
    if (!r)
        return dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, "<memory>", "out of memory");
    static const uint8_t empty[1] = {0};
    r->mem = buf ? buf : empty;
    r->size = buf ? len : 0;
    r->growing = growing;
    return finish_open(r, out, opts, err);
}

dg_status dg_flrep_reader_open_mem(dg_flrep_reader **out, const uint8_t *buf, size_t len,
                                   const dg_flrep_reader_opts *opts, dg_error *err)
{
    return open_mem(out, buf, len, opts, false, err);
}

dg_status dg_flrep__reader_open_growing_mem(dg_flrep_reader **out, const uint8_t *buf, size_t len,
                                           const dg_flrep_reader_opts *opts, dg_error *err)
{
    return open_mem(out, buf, len, opts, true, err);
}

static dg_status open_file(dg_flrep_reader **out, const char *path, const dg_flrep_reader_opts *opts, bool growing,
                           dg_error *err)
{
    dg_error local;
    err = flrep_err(err, &local);
    *out = NULL;
    dg_flrep_reader *r = calloc(1, sizeof *r);
    if (!r)
        return dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, path, "out of memory");
    r->growing = growing;
    size_t n = strlen(path) + 1;
    r->path = malloc(n);
    if (!r->path) {
        dg_flrep_reader_close(r);
        return dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, path, "out of memory");
    }
    memcpy(r->path, path, n);
    r->f = fopen(path, "rb");
    if (!r->f || fseeko(r->f, 0, SEEK_END) != 0) {
        dg_error_set(err, DG_E_IO, DG_OFFSET_NONE, path, "cannot open: %s", strerror(errno));
        dg_flrep_reader_close(r);
        return DG_E_IO;
    }
    off_t size = ftello(r->f);
    r->size = size < 0 ? 0 : (uint64_t)size;
    return finish_open(r, out, opts, err);
}

dg_status dg_flrep_reader_open_file(dg_flrep_reader **out, const char *path, const dg_flrep_reader_opts *opts,
                                    dg_error *err)
{
    return open_file(out, path, opts, false, err);
}

dg_status dg_flrep_reader_open_growing(dg_flrep_reader **out, const char *path, const dg_flrep_reader_opts *opts,
                                       dg_error *err)
{
    return open_file(out, path, opts, true, err);
}

/* The bytes a refresh may scan: `size`, or the file's length now (a memory source: its length). */
static dg_status growing_size(dg_flrep_reader *r, uint64_t size, uint64_t *out, dg_error *err)
{
    uint64_t have = r->size;
    if (r->f) {
        if (fseeko(r->f, 0, SEEK_END) != 0)
            return dg_error_set(err, DG_E_IO, DG_OFFSET_NONE, src_name(r), "cannot find the end: %s", strerror(errno));
        off_t end = ftello(r->f);
        have = end < 0 ? 0 : (uint64_t)end;
    } else if (size > r->size) {
        return dg_error_set(err, DG_E_USAGE, DG_OFFSET_NONE, src_name(r),
                            "expected a size <= %llu (the buffer's), found %llu", (unsigned long long)r->size,
                            (unsigned long long)size);
    }
    if (size == 0)
        size = have;
    if (size < r->scan_pos)
        return dg_error_set(err, DG_E_USAGE, DG_OFFSET_NONE, src_name(r),
                            "expected a size >= %llu (the bytes already scanned), found %llu",
                            (unsigned long long)r->scan_pos, (unsigned long long)size);
    if (size > have)
        return dg_error_set(err, DG_E_TRUNCATED, have, src_name(r),
                            "expected at least %llu bytes (the size asked for), found %llu", (unsigned long long)size,
                            (unsigned long long)have);
    *out = size;
    return DG_OK;
}

/* "chunk K at byte B: chunk frame": the scan's errors of the framing and the zstd frame name no
 * chunk number (a tick's error does: "chunk K at byte B (ticks ..), content"). */
static void name_growing_chunk(const dg_flrep_reader *r, dg_error *why)
{
    if (strncmp(why->where, "chunk ", 6) == 0 && why->where[6] >= '0' && why->where[6] <= '9')
        return;
    char w2[sizeof why->where + 64];
    snprintf(w2, sizeof w2, "chunk %zu at byte %llu: %s", r->nchunks, (unsigned long long)r->scan_pos, why->where);
    memcpy(why->where, w2, sizeof why->where - 1);   /* deliberately cut to fit */
    why->where[sizeof why->where - 1] = '\0';
}

dg_status dg_flrep_reader_refresh(dg_flrep_reader *r, uint64_t size, size_t *added, dg_error *err)
{
    dg_error local;
    err = flrep_err(err, &local);
    size_t before = r->nchunks;
    if (added)
        *added = 0;
    if (!r->growing)
        return dg_error_set(err, DG_E_USAGE, DG_OFFSET_NONE, src_name(r),
                            "expected a reader opened with dg_flrep_reader_open_growing");
    if (r->grow_failed) {
        *err = r->grow_err;
        return err->code;
    }
    uint64_t end = 0;
    dg_status st = growing_size(r, size, &end, err);
    if (st != DG_OK)
        return st;
    uint64_t whole = r->size;   /* a memory source keeps its buffer's length for playback */
    r->size = end;
    r->info.recovery_stop[0] = '\0';
    for (;;) {
        dg_error why;
        dg_error_clear(&why);
        scan_result sr = scan_chunk(r, r->scan_pos, &r->chunks_cap, &r->scan_world, NULL, NULL, &why, err);
        if (sr == SCAN_ADDED) {
            r->scan_pos += FLREP_CHUNK_HDR_SIZE + r->chunks[r->nchunks - 1].compressed_size;
            continue;
        }
        if (sr == SCAN_FATAL || sr == SCAN_STOP) {
            if (sr == SCAN_STOP) {
                note_scan_stop(r, r->scan_pos, &why);
                name_growing_chunk(r, &why);
                dg_error_set(err, why.code, why.offset, why.where, "%s", why.msg);
            }
            r->grow_failed = err->code != DG_E_NOMEM;   /* the bytes stay what they are; memory may come back */
            r->grow_err = *err;
            st = err->code;
        } else if (why.code != DG_OK) {
            note_scan_stop(r, r->scan_pos, &why);   /* the writer's next chunk, not finished yet */
        }
        break;
    }
    if (r->mem)
        r->size = whole;
    fill_info(r);
    r->info.file_size = end;
    if (added)
        *added = r->nchunks - before;
    return st;
}

void dg_flrep_reader_close(dg_flrep_reader *r)
{
    if (!r)
        return;
    if (r->f)
        fclose(r->f);
    free(r->path);
    dg_flrep__tables_free(&r->tables);
    free(r->sections);
    free(r->chunks);
    release_dctx(r->dctx);
    dg_buf_free(&r->comp);
    free(r->content);
    dg_flrep__world_free(&r->world);
    dg_flrep__world_free(&r->seek_world);
    dg_flrep__world_free(&r->fault_world);
    dg_flrep__world_free(&r->scan_world);
    dg_flrep__tick_scratch_free(&r->scratch);
    free(r);
}

const dg_flrep_header *dg_flrep_reader_header(const dg_flrep_reader *r) { return &r->tables.hdr; }
const dg_flrep_file_info *dg_flrep_reader_info(const dg_flrep_reader *r) { return &r->info; }
