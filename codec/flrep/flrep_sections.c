/* codec/flrep/flrep_sections.c — the header and the three required sections, both directions
 * (docs/FORMAT-flrep.md §3–4). Each parser reads one piece from its own byte range, so a fuzz target
 * can call it alone. */
#include "flrep_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *dg_flrep__section_name(uint16_t id)
{
    switch (id) {
    case FLREP_SEC_END: return "end of sections";
    case FLREP_SEC_TYPES: return "entity-type manifest";
    case FLREP_SEC_FACTIONS: return "faction table";
    case FLREP_SEC_ROSTER: return "roster";
    case FLREP_SEC_CAMERA: return "camera track";
    case FLREP_SEC_SCHEMA: return "entity schema";
    default: return "unknown section";
    }
}

static dg_flrep_str to_str(dg_strview v) { return (dg_flrep_str){v.s, v.len}; }

static void put_str(dg_buf *b, dg_flrep_str s) { dg_buf_str16(b, s.s ? s.s : "", s.s ? s.len : 0); }

/* ---- writing ----------------------------------------------------------------------------- */

static void encode_types(dg_buf *b, const dg_flrep_header *h)
{
    dg_buf_u16(b, (uint16_t)h->type_count);
    for (size_t i = 0; i < h->type_count; i++) {
        const dg_flrep_type *t = &h->types[i];
        dg_buf_u16(b, t->index);
        put_str(b, t->id);
        put_str(b, t->name);
        dg_buf_u8(b, t->category);
        dg_buf_u8(b, t->projectile_kind);
    }
}

static void encode_factions(dg_buf *b, const dg_flrep_header *h)
{
    dg_buf_u16(b, (uint16_t)h->faction_count);
    for (size_t i = 0; i < h->faction_count; i++) {
        dg_buf_u16(b, h->factions[i].index);
        put_str(b, h->factions[i].id);
        put_str(b, h->factions[i].name);
    }
}

static void encode_roster(dg_buf *b, const dg_flrep_header *h)
{
    dg_buf_u16(b, (uint16_t)h->participant_count);
    for (size_t i = 0; i < h->participant_count; i++) {
        dg_buf_u32(b, h->participants[i].participant_id);
        dg_buf_u32(b, h->participants[i].entity_id);
        put_str(b, h->participants[i].callsign);
    }
    dg_buf_u16(b, (uint16_t)h->mission_object_count);
    for (size_t i = 0; i < h->mission_object_count; i++) {
        put_str(b, h->mission_objects[i].object_id);
        dg_buf_u32(b, h->mission_objects[i].entity_id);
    }
}

/* Writes [u16 id][u32 len][payload] with the payload produced by fn. */
static void encode_section(dg_buf *b, uint16_t id, const dg_flrep_header *h,
                           void (*fn)(dg_buf *, const dg_flrep_header *))
{
    dg_buf_u16(b, id);
    size_t len_at = b->len;
    dg_buf_u32(b, 0);
    size_t start = b->len;
    fn(b, h);
    if (b->ok)
        dg_put_le32(b->p + len_at, (uint32_t)(b->len - start));
}

static void encode_header(dg_buf *out, const dg_flrep_header *h, uint16_t major)
{
    dg_buf_put(out, "FLRP", 4);
    dg_buf_u16(out, major);
    dg_buf_u16(out, DG_FLREP_MINOR);
    put_str(out, h->engine_version);
    size_t len_at = out->len;
    dg_buf_u32(out, 0);
    size_t start = out->len;
    dg_buf_u32(out, h->tick_rate_hz);
    dg_buf_f64(out, h->planet_radius_m);
    dg_buf_u64(out, h->start_unix_seconds);
    put_str(out, h->mission_id);
    dg_buf_u32(out, h->session_flags);
    dg_buf_u32(out, h->keyframe_interval_ticks);
    if (out->ok)
        dg_put_le32(out->p + len_at, (uint32_t)(out->len - start));
}

dg_status dg_flrep__encode_preamble(dg_buf *out, const dg_flrep_header *h, dg_error *err)
{
    encode_header(out, h, DG_FLREP_MAJOR);
    encode_section(out, FLREP_SEC_TYPES, h, encode_types);
    encode_section(out, FLREP_SEC_FACTIONS, h, encode_factions);
    encode_section(out, FLREP_SEC_ROSTER, h, encode_roster);
    dg_buf_u16(out, FLREP_SEC_END);
    dg_buf_u32(out, 0);
    if (!out->ok)
        return dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, "header", "out of memory encoding the header");
    return DG_OK;
}

dg_status dg_flrep__encode_preamble2(dg_buf *out, const dg_flrep_header *h, const flrep_schema2 *schema, dg_error *err)
{
    encode_header(out, h, DG_FLREP_MAJOR_SCHEMA);
    dg_buf_u16(out, FLREP_SEC_SCHEMA);
    size_t len_at = out->len;
    dg_buf_u32(out, 0);
    size_t start = out->len;
    dg_flrep__schema2_encode(out, schema);
    if (out->ok)
        dg_put_le32(out->p + len_at, (uint32_t)(out->len - start));
    /* §12.1: a table is written where the schema has its field or the caller gave entries */
    if ((schema->s.std_mask & DG_STD_TYPE) || h->type_count)
        encode_section(out, FLREP_SEC_TYPES, h, encode_types);
    if ((schema->s.std_mask & DG_STD_FACTION) || h->faction_count)
        encode_section(out, FLREP_SEC_FACTIONS, h, encode_factions);
    if (h->participant_count || h->mission_object_count)
        encode_section(out, FLREP_SEC_ROSTER, h, encode_roster);
    dg_buf_u16(out, FLREP_SEC_END);
    dg_buf_u32(out, 0);
    if (!out->ok)
        return dg_error_set(err, DG_E_NOMEM, DG_OFFSET_NONE, "header", "out of memory encoding the header");
    return DG_OK;
}

static dg_status check_count(size_t n, const char *what, dg_error *err)
{
    if (n > UINT16_MAX)
        return dg_error_set(err, DG_E_RANGE, DG_OFFSET_NONE, what, "expected at most 65535 entries, found %zu", n);
    return DG_OK;
}

/* A table string the reader would refuse (§1: UTF-8, no NUL) is refused by the writer first. */
static dg_status check_str(dg_flrep_str s, const char *table, size_t i, const char *field, dg_error *err)
{
    if (s.len && !s.s)
        return dg_error_set(err, DG_E_USAGE, DG_OFFSET_NONE, table, "entry %zu: %s has length %u but no bytes", i, field,
                            s.len);
    if (s.len && !dg_utf8_valid((const uint8_t *)s.s, s.len))
        return dg_error_set(err, DG_E_UTF8, DG_OFFSET_NONE, table,
                            "entry %zu: expected %s as UTF-8 without NUL bytes, found %s", i, field,
                            memchr(s.s, 0, s.len) ? "a NUL" : "invalid UTF-8");
    return DG_OK;
}

static dg_status check_strings(const dg_flrep_header *h, dg_error *err)
{
    dg_status st = check_str(h->engine_version, "header", 0, "engineVersion", err);
    if (st == DG_OK)
        st = check_str(h->mission_id, "header", 0, "missionId", err);
    for (size_t i = 0; st == DG_OK && i < h->type_count; i++)
        if ((st = check_str(h->types[i].id, "entity-type manifest", i, "id", err)) == DG_OK)
            st = check_str(h->types[i].name, "entity-type manifest", i, "displayName", err);
    for (size_t i = 0; st == DG_OK && i < h->faction_count; i++)
        if ((st = check_str(h->factions[i].id, "faction table", i, "id", err)) == DG_OK)
            st = check_str(h->factions[i].name, "faction table", i, "displayName", err);
    for (size_t i = 0; st == DG_OK && i < h->participant_count; i++)
        st = check_str(h->participants[i].callsign, "roster", i, "callsign", err);
    for (size_t i = 0; st == DG_OK && i < h->mission_object_count; i++)
        st = check_str(h->mission_objects[i].object_id, "roster", i, "missionObjectId", err);
    return st;
}

dg_status dg_flrep__check_tables(const dg_flrep_header *h, flrep_index_set *types, flrep_index_set *factions,
                             dg_error *err)
{
    if (h->tick_rate_hz < 1 || h->tick_rate_hz > FLREP_TICK_RATE_MAX)
        return dg_error_set(err, DG_E_RANGE, DG_OFFSET_NONE, "header", "expected tickRateHz in 1..%u, found %u",
                            FLREP_TICK_RATE_MAX, h->tick_rate_hz);
    bool v2 = !dg_schema_is_legacy(h->schema);
    if (v2 ? !(h->planet_radius_m == 0 || (isfinite(h->planet_radius_m) && h->planet_radius_m > 0))
           : (!isfinite(h->planet_radius_m) || !(h->planet_radius_m > 0)))
        return dg_error_set(err, DG_E_RANGE, DG_OFFSET_NONE, "header", "expected a finite planetRadiusM > 0%s, found %g",
                            v2 ? " or 0 (none)" : "", h->planet_radius_m);
    if (h->keyframe_interval_ticks < DG_FLREP_KEYFRAME_MIN || h->keyframe_interval_ticks > DG_FLREP_KEYFRAME_MAX)
        return dg_error_set(err, DG_E_RANGE, DG_OFFSET_NONE, "header",
                            "expected keyframeIntervalTicks in %u..%u, found %u", DG_FLREP_KEYFRAME_MIN,
                            DG_FLREP_KEYFRAME_MAX, h->keyframe_interval_ticks);
    if (check_count(h->type_count, "entity-type manifest", err) ||
        check_count(h->faction_count, "faction table", err) ||
        check_count(h->participant_count, "roster", err) ||
        check_count(h->mission_object_count, "roster", err))
        return err ? err->code : DG_E_RANGE;
    if (check_strings(h, err) != DG_OK)
        return err ? err->code : DG_E_UTF8;
    memset(types, 0, sizeof *types);
    memset(factions, 0, sizeof *factions);
    for (size_t i = 0; i < h->type_count; i++) {
        if (flrep_set_has(types, h->types[i].index))
            return dg_error_set(err, DG_E_MALFORMED, DG_OFFSET_NONE, "entity-type manifest",
                                "expected unique type indices, found %u twice", h->types[i].index);
        flrep_set_add(types, h->types[i].index);
    }
    for (size_t i = 0; i < h->faction_count; i++) {
        if (flrep_set_has(factions, h->factions[i].index))
            return dg_error_set(err, DG_E_MALFORMED, DG_OFFSET_NONE, "faction table",
                                "expected unique faction indices, found %u twice", h->factions[i].index);
        flrep_set_add(factions, h->factions[i].index);
    }
    return DG_OK;
}

/* ---- reading ----------------------------------------------------------------------------- */

void dg_flrep__tables_free(flrep_tables *t)
{
    if (t->schema2) {
        dg_flrep__schema2_free(t->schema2);
        free(t->schema2);
    }
    free(t->types);
    free(t->factions);
    free(t->participants);
    free(t->mission_objects);
    for (size_t i = 0; i < t->keep_count; i++)
        free(t->keep[i]);
    memset(t, 0, sizeof *t);
}

dg_status dg_flrep__parse_prefix(const uint8_t *buf, size_t len, uint64_t base, dg_flrep_header *hdr,
                             size_t *consumed, dg_error *err)
{
    dg_cur c;
    dg_cur_init(&c, buf, len, base, "header", err);
    const uint8_t *magic = dg_cur_bytes(&c, 4, "magic \"FLRP\"");
    if (magic && memcmp(magic, "FLRP", 4) != 0) {
        c.pos = 0;
        dg_cur_fail(&c, DG_E_MAGIC, "expected magic \"FLRP\", found %02X %02X %02X %02X", magic[0], magic[1],
                    magic[2], magic[3]);
    }
    hdr->major = dg_cur_u16(&c, "u16 formatMajor");
    hdr->minor = dg_cur_u16(&c, "u16 formatMinor");
    hdr->engine_version = to_str(dg_cur_str16(&c, "string engineVersion"));
    if (!c.ok)
        return err ? err->code : DG_E_MALFORMED;
    if (hdr->major < DG_FLREP_MAJOR || hdr->major > DG_FLREP_MAJOR_MAX) {
        const char *tail = hdr->major == 0 ? "; format 0.x is not supported, this build reads format 1.x and 2.x"
                                           : "; this build reads format 1.x and 2.x";
        return dg_error_set(err, DG_E_VERSION, base + 4, "header",
                            "this replay was recorded by %.*s (format %u.%u)%s", (int)hdr->engine_version.len,
                            hdr->engine_version.s ? hdr->engine_version.s : "", hdr->major, hdr->minor, tail);
    }
    *consumed = c.pos;
    return DG_OK;
}

dg_status dg_flrep__parse_header_body(const uint8_t *buf, size_t len, uint64_t base, dg_flrep_header *hdr,
                                  dg_error *err)
{
    dg_cur c;
    dg_cur_init(&c, buf, len, base, "header body", err);
    hdr->tick_rate_hz = dg_cur_u32(&c, "u32 tickRateHz");
    hdr->planet_radius_m = dg_cur_f64(&c, "f64 planetRadiusM");
    hdr->start_unix_seconds = dg_cur_u64(&c, "u64 startUnixSeconds");
    hdr->mission_id = to_str(dg_cur_str16(&c, "string missionId"));
    hdr->session_flags = dg_cur_u32(&c, "u32 sessionFlags");
    uint64_t kf_at = dg_cur_offset(&c);
    hdr->keyframe_interval_ticks = dg_cur_u32(&c, "u32 keyframeIntervalTicks");
    if (!c.ok)
        return err ? err->code : DG_E_TRUNCATED;
    if (hdr->tick_rate_hz < 1 || hdr->tick_rate_hz > FLREP_TICK_RATE_MAX)
        return dg_error_set(err, DG_E_RANGE, base, "header body", "expected tickRateHz in 1..%u, found %u",
                            FLREP_TICK_RATE_MAX, hdr->tick_rate_hz);
    bool v2 = hdr->major == DG_FLREP_MAJOR_SCHEMA;   /* §12.1: 0 = no planet */
    if (!(isfinite(hdr->planet_radius_m) && (hdr->planet_radius_m > 0 || (v2 && hdr->planet_radius_m == 0))))
        return dg_error_set(err, DG_E_RANGE, base + 4, "header body", "expected a finite planetRadiusM > 0%s, found %g",
                            v2 ? " or 0 (none, format 2.0)" : "", hdr->planet_radius_m);
    if (hdr->keyframe_interval_ticks < DG_FLREP_KEYFRAME_MIN || hdr->keyframe_interval_ticks > DG_FLREP_KEYFRAME_MAX)
        return dg_error_set(err, DG_E_RANGE, kf_at, "header body",
                            "expected keyframeIntervalTicks in %u..%u, found %u", DG_FLREP_KEYFRAME_MIN,
                            DG_FLREP_KEYFRAME_MAX, hdr->keyframe_interval_ticks);
    return DG_OK; /* a longer body is a newer minor's appended fields: skipped */
}

/* A declared count must fit in the bytes left at `min_size` bytes per entry before anything is
 * allocated for it. */
static void *alloc_entries(dg_cur *c, uint16_t count, size_t min_size, size_t elem, const char *what)
{
    if (!c->ok)
        return NULL;
    if ((uint64_t)count * min_size > dg_cur_left(c)) {
        dg_cur_fail(c, DG_E_TRUNCATED, "expected %u %s (at least %zu bytes each), found %zu bytes left", count,
                    what, min_size, dg_cur_left(c));
        return NULL;
    }
    void *p = calloc(count ? count : 1, elem);
    if (!p)
        dg_cur_fail(c, DG_E_NOMEM, "out of memory for %u %s", count, what);
    return p;
}

dg_status dg_flrep__parse_types(const uint8_t *buf, size_t len, uint64_t base, flrep_tables *t, dg_error *err)
{
    dg_cur c;
    dg_cur_init(&c, buf, len, base, "section 0x0001 (entity-type manifest)", err);
    uint16_t n = dg_cur_u16(&c, "u16 count");
    dg_flrep_type *v = alloc_entries(&c, n, 8, sizeof *v, "entity types");
    memset(&t->type_set, 0, sizeof t->type_set);
    for (uint16_t i = 0; c.ok && i < n; i++) {
        uint64_t at = dg_cur_offset(&c);
        v[i].index = dg_cur_u16(&c, "u16 typeIndex");
        v[i].id = to_str(dg_cur_str16(&c, "string id"));
        v[i].name = to_str(dg_cur_str16(&c, "string displayName"));
        v[i].category = dg_cur_u8(&c, "u8 category");
        v[i].projectile_kind = dg_cur_u8(&c, "u8 projectileKind");
        if (c.ok && flrep_set_has(&t->type_set, v[i].index)) {
            c.pos = (size_t)(at - base);
            dg_cur_fail(&c, DG_E_MALFORMED, "expected unique typeIndex, found %u again (entry %u)", v[i].index, i);
        }
        if (c.ok)
            flrep_set_add(&t->type_set, v[i].index);
    }
    if (!c.ok) {
        free(v);
        return err ? err->code : DG_E_MALFORMED;
    }
    free(t->types);
    t->types = v;
    t->hdr.types = v;
    t->hdr.type_count = n;
    return DG_OK;
}

dg_status dg_flrep__parse_factions(const uint8_t *buf, size_t len, uint64_t base, flrep_tables *t, dg_error *err)
{
    dg_cur c;
    dg_cur_init(&c, buf, len, base, "section 0x0002 (faction table)", err);
    uint16_t n = dg_cur_u16(&c, "u16 count");
    dg_flrep_faction *v = alloc_entries(&c, n, 6, sizeof *v, "factions");
    memset(&t->faction_set, 0, sizeof t->faction_set);
    for (uint16_t i = 0; c.ok && i < n; i++) {
        uint64_t at = dg_cur_offset(&c);
        v[i].index = dg_cur_u16(&c, "u16 factionIndex");
        v[i].id = to_str(dg_cur_str16(&c, "string id"));
        v[i].name = to_str(dg_cur_str16(&c, "string displayName"));
        if (c.ok && flrep_set_has(&t->faction_set, v[i].index)) {
            c.pos = (size_t)(at - base);
            dg_cur_fail(&c, DG_E_MALFORMED, "expected unique factionIndex, found %u again (entry %u)", v[i].index,
                        i);
        }
        if (c.ok)
            flrep_set_add(&t->faction_set, v[i].index);
    }
    if (!c.ok) {
        free(v);
        return err ? err->code : DG_E_MALFORMED;
    }
    free(t->factions);
    t->factions = v;
    t->hdr.factions = v;
    t->hdr.faction_count = n;
    return DG_OK;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* Sorting a copy keeps a hostile 65535-entry roster at n log n. */
static bool find_duplicate_participant(const dg_flrep_participant *p, uint16_t n, uint32_t *dup)
{
    uint32_t *ids = malloc((size_t)n * sizeof *ids);
    if (!ids)
        return false;
    for (uint16_t i = 0; i < n; i++)
        ids[i] = p[i].participant_id;
    qsort(ids, n, sizeof *ids, cmp_u32);
    bool found = false;
    for (uint16_t i = 1; i < n && !found; i++)
        if (ids[i] == ids[i - 1]) {
            *dup = ids[i];
            found = true;
        }
    free(ids);
    return found;
}

dg_status dg_flrep__parse_roster(const uint8_t *buf, size_t len, uint64_t base, flrep_tables *t, dg_error *err)
{
    dg_cur c;
    dg_cur_init(&c, buf, len, base, "section 0x0003 (roster)", err);
    uint16_t np = dg_cur_u16(&c, "u16 participantCount");
    dg_flrep_participant *p = alloc_entries(&c, np, 10, sizeof *p, "participants");
    for (uint16_t i = 0; c.ok && i < np; i++) {
        p[i].participant_id = dg_cur_u32(&c, "u32 participantId");
        p[i].entity_id = dg_cur_u32(&c, "u32 entityId");
        p[i].callsign = to_str(dg_cur_str16(&c, "string callsign"));
    }
    uint32_t dup;
    if (c.ok && np > 1 && find_duplicate_participant(p, np, &dup))
        dg_cur_fail(&c, DG_E_MALFORMED, "expected unique participantId, found %u twice", dup);
    uint16_t nm = dg_cur_u16(&c, "u16 missionObjectCount");
    dg_flrep_mission_object *m = alloc_entries(&c, nm, 6, sizeof *m, "mission objects");
    for (uint16_t i = 0; c.ok && i < nm; i++) {
        m[i].object_id = to_str(dg_cur_str16(&c, "string missionObjectId"));
        m[i].entity_id = dg_cur_u32(&c, "u32 entityId");
    }
    if (!c.ok) {
        free(p);
        free(m);
        return err ? err->code : DG_E_MALFORMED;
    }
    free(t->participants);
    free(t->mission_objects);
    t->participants = p;
    t->mission_objects = m;
    t->hdr.participants = p;
    t->hdr.participant_count = np;
    t->hdr.mission_objects = m;
    t->hdr.mission_object_count = nm;
    return DG_OK;
}
