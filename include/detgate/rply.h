/* detgate — the RPLY v3 codec (prefix dg_rply_): reader, state rebuilder, writer, snapshot v10.
 *
 * The normative byte layout is shared/specs/rply.md (seed: shared/seeds/000_*.txt); every decision
 * this code adds on top is written in docs/FORMAT-rply.md.
 *
 * Layers, lowest first:
 *   dg_rply_file      header, string table and keyframe index of a buffer the caller keeps alive
 *   dg_rply_iter      decodes one op at a time into a dg_rply_op (zero-copy views into the buffer),
 *                     checking every syntax rule, tick order and keyframe landing
 *   dg_rply_state     the rebuilt world: live entities, quantized transforms, properties, animation
 *                     handles, last snapshot; dg_rply_state_apply() applies one op with the state rules
 *   dg_rply_player    file + iterator + state, tick-atomic (a failing call leaves the state as it
 *                     was), seekable through the keyframe index
 *   dg_rply_writer    the recorder side: transform policy (XFORM / XFORM_D / nothing), keyframes,
 *                     string interning, whole file in memory or written to a path atomically
 *   dg_rply_snapshot  SNAPSHOT version 10 decoded to structs and encoded back
 * The library never prints; every failure fills a dg_error (first error wins). */
#ifndef DETGATE_RPLY_H
#define DETGATE_RPLY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "detgate/error.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DG_RPLY_VERSION 3
#define DG_RPLY_HEADER_SIZE 30
#define DG_RPLY_SNAPSHOT_VERSION 10
#define DG_RPLY_MAX_ID 65535u
/* Ticks without ops cost nothing in a file but a tick each in a replay: tickCount is bounded by
 * what the file holds, 2^20 ticks plus 256 per byte of OpStream (docs/FORMAT-rply.md §2.1). The
 * reader refuses a larger tickCount (DG_E_LIMIT), the writer does not write one. */
#define DG_RPLY_TICKS_FREE (1u << 20)
#define DG_RPLY_TICKS_PER_OP_BYTE 256u
static inline uint64_t dg_rply_max_tick_count(uint32_t op_bytes)
{
    return (uint64_t)DG_RPLY_TICKS_FREE + (uint64_t)DG_RPLY_TICKS_PER_OP_BYTE * op_bytes;
}

/* The op table: name, opcode, bytes that always follow the opcode (the fixed head a reader can
 * bounds-check in one compare; variable parts are checked again). One list generates the enum, the
 * names the dump prints, the reader's dispatch checks and the writer's head sizes. */
#define DG_RPLY_OP_LIST(X)   \
    X(TICK, 0, 4)            \
    X(SPAWN, 1, 6)           \
    X(DESPAWN, 2, 2)         \
    X(XFORM, 3, 3)           \
    X(PROP, 4, 5)            \
    X(ANIM_PLAY, 5, 8)       \
    X(ANIM_STOP, 6, 4)       \
    X(ANIM_SPEED, 7, 5)      \
    X(EVENT, 8, 4)           \
    X(CUSTOM, 9, 4)          \
    X(TICK_NEXT, 10, 0)      \
    X(XFORM_D, 11, 2)        \
    X(SNAPSHOT, 14, 6)

typedef enum dg_rply_opcode {
#define DG_RPLY_OP_ENUM(name, code, head) DG_RPLY_OP_##name = code,
    DG_RPLY_OP_LIST(DG_RPLY_OP_ENUM)
#undef DG_RPLY_OP_ENUM
} dg_rply_opcode;

/* "TICK", "XFORM_D", ...; NULL for an opcode the format does not define. */
const char *dg_rply_op_name(unsigned opcode);
/* Bytes after the opcode that every op of this code carries (-1 for an undefined opcode). */
int dg_rply_op_head_size(unsigned opcode);

/* XFORM / XFORM_D mask bits. */
enum {
    DG_RPLY_XF_POS = 1, DG_RPLY_XF_ROT = 2, DG_RPLY_XF_YAW = 4,
    DG_RPLY_XD_POS8 = 1, DG_RPLY_XD_POS16 = 2, DG_RPLY_XD_YAW = 4, DG_RPLY_XD_ROT = 8
};

/* PROP type tags. */
enum {
    DG_RPLY_PROP_BOOL = 0, DG_RPLY_PROP_NUMBER = 1, DG_RPLY_PROP_STRING = 2, DG_RPLY_PROP_COLOR3 = 3,
    DG_RPLY_PROP_VECTOR3 = 4, DG_RPLY_PROP_ENUM = 5
};

/* A string view (not NUL-terminated), pointing into the file buffer or the caller's memory. */
typedef struct dg_rply_str {
    const char *s;
    uint16_t len;
} dg_rply_str;

typedef struct dg_rply_header {
    uint8_t version;
    uint8_t tick_rate;
    uint32_t place_version;
    double start_unix;
    uint32_t tick_count;
    uint16_t string_count;
    uint16_t keyframe_count;
    uint32_t op_bytes;
} dg_rply_header;

typedef struct dg_rply_keyframe {
    uint32_t tick;
    uint32_t offset;    /* from the first byte of the OpStream */
} dg_rply_keyframe;

/* A PROP value. Floats are kept as read (bit-exact). */
typedef struct dg_rply_value {
    uint8_t tag;        /* DG_RPLY_PROP_* */
    union {
        uint8_t b;      /* bool: 0 or 1 */
        double num;     /* number */
        uint16_t str;   /* string and enum: string id */
        uint8_t rgb[3]; /* Color3 */
        float vec[3];   /* Vector3 */
    } u;
} dg_rply_value;

/* One decoded op. Every field is the raw stored value; views point into the file buffer. */
typedef struct dg_rply_op {
    uint8_t code;       /* dg_rply_opcode */
    uint8_t mask;       /* XFORM / XFORM_D */
    uint16_t entity;    /* 0 for TICK, TICK_NEXT, EVENT, CUSTOM */
    uint32_t offset;    /* opcode's offset from the start of the OpStream */
    uint32_t tick;      /* tick the op belongs to (TICK/TICK_NEXT: the tick they open) */
    uint32_t size;      /* bytes of the op, opcode included */
    union {
        struct { uint16_t descriptor, parent; } spawn;
        struct { float pos[3]; int16_t rot[3]; int16_t yaw; } xform;
        struct { int16_t dpos[3]; int8_t dyaw; int8_t drot[3]; } xform_d; /* dpos from i8 or i16 */
        struct { uint16_t name; dg_rply_value value; } prop;
        struct { uint16_t anim; uint8_t handle, fade; int16_t speed; } anim;
        struct { uint16_t name, payload; } event;
        struct { uint16_t channel, len; const uint8_t *data; } custom;
        struct { uint32_t len; const uint8_t *data; } snapshot;
    } u;
} dg_rply_op;

/* ---- file layout --------------------------------------------------------------------------- */
typedef struct dg_rply_file {
    const uint8_t *buf;          /* the caller's buffer (kept alive while the file is used) */
    size_t len;
    dg_rply_header hdr;
    dg_rply_str *strings;        /* hdr.string_count views (allocated) */
    uint32_t strings_read;       /* how many were read before a failure (for --partial dumps) */
    uint32_t keyframes_read;     /* likewise for index entries */
    uint64_t index_at;           /* file offset of the KeyframeIndex */
    uint64_t ops_at;             /* file offset of the OpStream */
    const uint8_t *ops;          /* = buf + ops_at */
} dg_rply_file;

/* Reads only the 30-byte header. expected_place_version 0 accepts any. */
dg_status dg_rply_read_header(const uint8_t *buf, size_t len, uint32_t expected_place_version,
                              dg_rply_header *out, dg_error *err);

/* Reads the header, string table (UTF-8 checked) and keyframe index (strictly increasing, offsets
 * inside the OpStream), and checks the file ends exactly at the OpStream's end. It does not walk the
 * op stream: the keyframe landings and op rules are checked by the iterator (dg_rply_validate walks
 * it all). On failure *f holds what was read so far (strings_read, keyframes_read); call
 * dg_rply_file_close either way. */
dg_status dg_rply_file_open(dg_rply_file *f, const uint8_t *buf, size_t len,
                            uint32_t expected_place_version, dg_error *err);
void dg_rply_file_close(dg_rply_file *f);
dg_rply_keyframe dg_rply_file_keyframe(const dg_rply_file *f, uint32_t index);

/* ---- op iterator --------------------------------------------------------------------------- */
typedef struct dg_rply_iter {
    const dg_rply_file *f;
    uint32_t pos;        /* stream offset of the next op */
    uint32_t tick;       /* current tick */
    uint32_t count;      /* ops decoded so far */
    uint32_t next_kf;    /* next keyframe index entry the stream must land on */
    uint32_t kf_offset;  /* its offset (UINT32_MAX when none is left) */
    uint32_t kf_tick;    /* its tick */
    bool opened;         /* tick 0 is in use (an op or opener was read) */
} dg_rply_iter;

void dg_rply_iter_init(dg_rply_iter *it, const dg_rply_file *f);
/* Decodes the next op. Returns 1 with *op filled, 0 at the clean end of the stream (all keyframes
 * matched), -1 on error (err names the op, its stream offset and the absolute byte offset). The
 * iterator does not move on error. */
int dg_rply_iter_next(dg_rply_iter *it, dg_rply_op *op, dg_error *err);

/* ---- rebuilt state ------------------------------------------------------------------------- */
/* Transform modes (dg_rply_entity.xf bits). */
enum { DG_RPLY_HAS_POS = 1, DG_RPLY_HAS_ROT = 2, DG_RPLY_HAS_YAW = 4 };

/* The quantized transform both sides of the gate hash: exactly the spec's reconstruction. */
typedef struct dg_rply_xstate {
    uint32_t pos_bits[3]; /* f32 bits of the last XFORM position */
    int32_t dpos[3];      /* accumulated 1/32 stud since that XFORM */
    int16_t rot[3];       /* last XFORM rotation: axis-angle, or rot[0] = yaw (others 0) */
    int16_t pad_;         /* always 0 */
    int32_t drot[3];      /* accumulated delta units: yaw in drot[0] (1/64 rad), axis 1/128 rad */
    uint8_t xf;           /* DG_RPLY_HAS_*: position known, tilted rotation, yaw-only rotation */
    uint8_t pad2_[3];
} dg_rply_xstate;

/* A live entity as the state holds it (read-only to callers: dg_rply_state_find). */
typedef struct dg_rply_entity {
    uint16_t id;
    uint16_t parent;       /* 0 = none (kept as written even if the parent despawns) */
    uint16_t descriptor;   /* string id */
    uint16_t pad_;         /* always 0 */
    uint32_t spawn_tick;
    dg_rply_xstate x;
    uint32_t snap_offset;  /* last SNAPSHOT payload: stream offset of its bytes (0 with snap_len 0 = none) */
    uint32_t snap_len;
    uint8_t has_snapshot;
    uint8_t pad2_[3];      /* always 0 */
} dg_rply_entity;

typedef struct dg_rply_prop {
    uint16_t name;         /* string id */
    dg_rply_value value;
} dg_rply_prop;

typedef struct dg_rply_anim {
    uint8_t handle;
    uint8_t fade;          /* seconds x 100 */
    uint16_t anim;         /* string id */
    int16_t speed;         /* x 256 */
} dg_rply_anim;

/* The rebuilt world, an opaque handle: entities by id, their properties and animation handles. */
typedef struct dg_rply_state dg_rply_state;

/* A new empty state (NULL on out of memory, err filled). Free with dg_rply_state_free. */
dg_rply_state *dg_rply_state_new(dg_error *err);
void dg_rply_state_free(dg_rply_state *s);  /* s may be NULL */
void dg_rply_state_clear(dg_rply_state *s);             /* empty, keeps allocations */
/* The tick the state is complete through (0 before any); false before tick 0 was applied; live ids. */
uint32_t dg_rply_state_tick(const dg_rply_state *s);
bool dg_rply_state_started(const dg_rply_state *s);
uint32_t dg_rply_state_live_count(const dg_rply_state *s);
/* dst becomes an equal copy of src (both from dg_rply_state_new). */
dg_status dg_rply_state_copy(dg_rply_state *dst, const dg_rply_state *src, dg_error *err);
/* Applies one decoded op with the state rules (live ids, parents, XFORM_D preconditions). A failure
 * names the op; the state may then be half-changed (dg_rply_player is the tick-atomic layer). */
dg_status dg_rply_state_apply(dg_rply_state *s, const dg_rply_file *f, const dg_rply_op *op,
                              dg_error *err);

const dg_rply_entity *dg_rply_state_find(const dg_rply_state *s, uint16_t id);
/* Next live id greater than `after` (pass 0 to start); 0 when there is none. */
uint16_t dg_rply_state_next_id(const dg_rply_state *s, uint16_t after);
/* Properties of an entity in increasing name id; NULL at the end. */
const dg_rply_prop *dg_rply_state_prop_first(const dg_rply_state *s, const dg_rply_entity *e);
const dg_rply_prop *dg_rply_state_prop_next(const dg_rply_state *s, const dg_rply_prop *p);
const dg_rply_prop *dg_rply_state_prop_get(const dg_rply_state *s, const dg_rply_entity *e,
                                           uint16_t name);
/* Animation handles of an entity in increasing handle; NULL at the end. */
const dg_rply_anim *dg_rply_state_anim_first(const dg_rply_state *s, const dg_rply_entity *e);
const dg_rply_anim *dg_rply_state_anim_next(const dg_rply_state *s, const dg_rply_anim *a);
/* Same tick, same live ids, and for each: every field, property (bit-exact) and handle. */
bool dg_rply_state_equal(const dg_rply_state *a, const dg_rply_state *b);
bool dg_rply_xstate_equal(const dg_rply_xstate *a, const dg_rply_xstate *b);
/* Display only (never compared): position in studs, yaw in radians, axis-angle in radians. */
void dg_rply_xstate_position(const dg_rply_xstate *x, double out[3]);
void dg_rply_xstate_rotation(const dg_rply_xstate *x, double out[3]);

/* ---- player -------------------------------------------------------------------------------- */
/* File + iterator + state, an opaque handle. */
typedef struct dg_rply_player dg_rply_player;

/* A player at the start of f (f must outlive it). cp_budget: bytes of keyframe checkpoints to keep
 * (0 = 64 MiB). NULL on out of memory (err filled). Free with dg_rply_player_free. */
dg_rply_player *dg_rply_player_new(const dg_rply_file *f, size_t cp_budget, dg_error *err);
void dg_rply_player_free(dg_rply_player *p); /* p may be NULL */
/* Applies every op whose tick is <= tick (tick < tickCount). Tick-atomic: on failure the state is
 * exactly what it was before the call. Going backwards is dg_rply_player_seek. */
dg_status dg_rply_player_advance(dg_rply_player *p, uint32_t tick, dg_error *err);
/* State at `tick`: nearest keyframe checkpoint at or before it (or the start), then forward. */
dg_status dg_rply_player_seek(dg_rply_player *p, uint32_t tick, dg_error *err);
/* Plays the whole stream once (checking every rule and keeping a checkpoint at every keyframe within
 * the budget), then goes back to the start: later seeks anywhere cost at most one keyframe interval.
 * On failure the player is back at the start and the error names the op. */
dg_status dg_rply_player_prepare(dg_rply_player *p, dg_error *err);
/* The player's state (owned by the player, valid until dg_rply_player_free). */
const dg_rply_state *dg_rply_player_state(const dg_rply_player *p);
/* Ops applied so far (a replay's work count). */
uint64_t dg_rply_player_ops_applied(const dg_rply_player *p);

/* Walks the whole op stream through the state rules (every error of the spec page). */
dg_status dg_rply_validate(const dg_rply_file *f, dg_error *err);

/* ---- snapshot v10 -------------------------------------------------------------------------- */
typedef struct dg_rply_cframe { float pos[3]; int16_t rot[3]; } dg_rply_cframe;
typedef struct dg_rply_char_mesh {
    uint8_t body_part;
    double mesh_id, base_texture_id, overlay_texture_id;
} dg_rply_char_mesh;
typedef struct dg_rply_rig {
    uint8_t has_humanoid;
    uint8_t rig_type;
    dg_rply_str shirt, pants, shirt_graphic;
    uint8_t has_body_colors;
    uint8_t body_colors[6][3];
    uint8_t mesh_count;
    dg_rply_char_mesh *meshes;
} dg_rply_rig;
typedef struct dg_rply_special_mesh {
    uint8_t mesh_type;
    dg_rply_str mesh_id, texture_id;
    float scale[3], offset[3];
} dg_rply_special_mesh;
typedef struct dg_rply_surface_appearance {
    dg_rply_str color_map, normal_map, metalness_map, roughness_map;
    uint8_t alpha_mode;
} dg_rply_surface_appearance;
typedef struct dg_rply_decal {
    uint8_t kind;          /* 0 Decal, 1 Texture */
    uint8_t face;          /* 0..5 */
    dg_rply_str texture_id;
    uint8_t color[3];
    uint8_t transparency;
    float studs_per_tile[2]; /* Texture only */
} dg_rply_decal;
enum {
    DG_RPLY_EV_BOOL = 0, DG_RPLY_EV_F32 = 1, DG_RPLY_EV_STR = 2, DG_RPLY_EV_COLOR3 = 3,
    DG_RPLY_EV_VECTOR3 = 4, DG_RPLY_EV_VECTOR2 = 5, DG_RPLY_EV_RANGE = 6, DG_RPLY_EV_NUMSEQ = 7,
    DG_RPLY_EV_COLORSEQ = 8, DG_RPLY_EV_ENUM = 9, DG_RPLY_EV_ATTACHMENT = 10
};
typedef struct dg_rply_numkey { float time, value, envelope; } dg_rply_numkey;
typedef struct dg_rply_colorkey { float time; uint8_t rgb[3]; } dg_rply_colorkey;
typedef struct dg_rply_effect_prop {
    uint8_t index;         /* into the class's property list */
    uint8_t tag;           /* DG_RPLY_EV_* */
    uint8_t b;             /* bool */
    uint8_t rgb[3];        /* Color3 */
    float f[3];            /* f32 (f[0]), Vector3, Vector2 / NumberRange (f[0], f[1]) */
    dg_rply_str s;         /* str16, enum name, attachment name */
    uint8_t n;             /* sequence keypoints */
    dg_rply_numkey *numseq;
    dg_rply_colorkey *colorseq;
} dg_rply_effect_prop;
typedef struct dg_rply_effect {
    uint8_t class_id;      /* 1 Attachment .. 11 SurfaceLight */
    uint8_t parent_index;  /* 0 = the part, else 1-based index of an earlier Attachment in the list */
    dg_rply_str name;
    uint8_t prop_count;
    dg_rply_effect_prop *props;
} dg_rply_effect;
typedef struct dg_rply_part {
    uint8_t kind;          /* 0 Part, 1 MeshPart, 2 Wedge, 3 CornerWedge, 4 other, 5 Union */
    uint16_t union_key_index; /* kind 5: 0-based into union_keys */
    dg_rply_str name, parent_path;
    float offset[3];
    int16_t rotation[3];
    float size[3];
    uint8_t color[3];
    uint16_t material;
    uint8_t transparency, reflectance, shape;
    uint8_t surfaces[6];
    dg_rply_str mesh_id, texture_id; /* kind 1 */
    float mesh_size[3];              /* kind 1 */
    uint8_t has_special_mesh;
    dg_rply_special_mesh special_mesh;
    uint8_t has_surface_appearance;
    dg_rply_surface_appearance surface_appearance;
    uint8_t decal_count;
    dg_rply_decal *decals;
    uint8_t effect_count;
    dg_rply_effect *effects;
} dg_rply_part;
typedef struct dg_rply_joint {
    uint8_t kind;          /* 1 Weld, 2 Motor6D, 3 AnimationConstraint, 4 RigidConstraint */
    dg_rply_str name;
    uint16_t holder, part0, part1;   /* 1-based into parts */
    dg_rply_cframe c0, c1;           /* kinds 1, 2 */
    dg_rply_str attachment0, attachment1; /* kinds 3, 4 */
} dg_rply_joint;
typedef struct dg_rply_snapshot {
    uint8_t version;       /* 10 */
    uint8_t is_model;
    dg_rply_str name, source_key, root_path;
    uint16_t union_count;
    dg_rply_str *union_keys;
    uint16_t mesh_count;
    dg_rply_str *mesh_ids;
    dg_rply_rig rig;       /* is_model only */
    uint16_t part_count;
    dg_rply_part *parts;
    uint16_t joint_count;
    dg_rply_joint *joints;
} dg_rply_snapshot;

/* Checks a snapshot payload without allocating. base = absolute file offset of bytes[0]. */
dg_status dg_rply_snapshot_check(const uint8_t *bytes, size_t len, uint64_t base, dg_error *err);
/* Decodes into a new *out: one allocation holds the struct and every array (views point into
 * bytes, which must outlive it). *out is NULL on failure. Free with dg_rply_snapshot_free. A
 * snapshot the caller fills for dg_rply_snapshot_encode is the caller's own memory. */
dg_status dg_rply_snapshot_decode(const uint8_t *bytes, size_t len, uint64_t base,
                                  dg_rply_snapshot **out, dg_error *err);
void dg_rply_snapshot_free(dg_rply_snapshot *s); /* a decoded snapshot; s may be NULL */
/* Encodes *s (version forced to 10). Size query: out NULL returns the size in *out_len. Fails on a
 * value the format cannot carry (a count too large, an index out of range, a bad kind). */
dg_status dg_rply_snapshot_encode(const dg_rply_snapshot *s, uint8_t *out, size_t cap,
                                  size_t *out_len, dg_error *err);

/* ---- writer -------------------------------------------------------------------------------- */
typedef struct dg_rply_writer_config {
    uint8_t tick_rate;           /* 1..255 */
    uint32_t place_version;
    double start_unix;
    uint32_t keyframe_every;     /* keyframe cadence in ticks (0 = no keyframes) */
    bool use_deltas;             /* XFORM_D when it fits (else always a full XFORM) */
    bool use_thresholds;         /* skip changes below the thresholds */
    bool skip_unchanged;         /* without deltas: skip a full XFORM equal to the last (else every sample) */
    double pos_threshold;        /* studs (default 0.05) */
    double rot_threshold_deg;    /* degrees (default 0.5) */
} dg_rply_writer_config;

/* Defaults: 15 Hz, keyframe every 150 ticks, deltas and thresholds on (0.05 studs, 0.5 deg). */
void dg_rply_writer_config_default(dg_rply_writer_config *cfg);

typedef struct dg_rply_writer dg_rply_writer;

dg_rply_writer *dg_rply_writer_new(const dg_rply_writer_config *cfg, dg_error *err);
void dg_rply_writer_free(dg_rply_writer *w);

/* Starts tick `tick` (strictly greater than the previous one; the first may be 0). Nothing is
 * written for a tick until it has an op, except keyframe ticks (absolute TICK + index entry). When a
 * keyframe tick closes, every live entity sampled through dg_rply_writer_transform that got no full
 * XFORM in it is written from its last sample. */
dg_status dg_rply_writer_tick(dg_rply_writer *w, uint32_t tick, dg_error *err);
/* Interns a string; returns its id through *id. */
dg_status dg_rply_writer_string(dg_rply_writer *w, const char *s, size_t len, uint16_t *id,
                                dg_error *err);
dg_status dg_rply_writer_spawn(dg_rply_writer *w, uint16_t id, const char *descriptor,
                               uint16_t parent, dg_error *err);
dg_status dg_rply_writer_despawn(dg_rply_writer *w, uint16_t id, dg_error *err);
/* The recorder's transform sample: position (studs) and rotation quaternion (w, x, y, z). The
 * policy picks a full XFORM, an XFORM_D or nothing (docs/FORMAT-rply.md, "Writer policy"). */
dg_status dg_rply_writer_transform(dg_rply_writer *w, uint16_t id, const double pos[3],
                                   const double quat_wxyz[4], dg_error *err);
/* Raw ops, written as given (the state rules are still checked). */
dg_status dg_rply_writer_xform_raw(dg_rply_writer *w, uint16_t id, uint8_t mask, const float pos[3],
                                   const int16_t rot[3], int16_t yaw, dg_error *err);
dg_status dg_rply_writer_xform_d_raw(dg_rply_writer *w, uint16_t id, uint8_t mask,
                                     const int16_t dpos[3], int8_t dyaw, const int8_t drot[3],
                                     dg_error *err);
dg_status dg_rply_writer_prop(dg_rply_writer *w, uint16_t id, const char *name,
                              const dg_rply_value *v, dg_error *err);
/* String and enum PROP values by text (interned). */
dg_status dg_rply_writer_prop_str(dg_rply_writer *w, uint16_t id, const char *name, uint8_t tag,
                                  const char *text, dg_error *err);
dg_status dg_rply_writer_anim_play(dg_rply_writer *w, uint16_t id, const char *anim, uint8_t handle,
                                   uint8_t fade, int16_t speed, dg_error *err);
dg_status dg_rply_writer_anim_stop(dg_rply_writer *w, uint16_t id, uint8_t handle, uint8_t fade,
                                   dg_error *err);
dg_status dg_rply_writer_anim_speed(dg_rply_writer *w, uint16_t id, uint8_t handle, int16_t speed,
                                    dg_error *err);
dg_status dg_rply_writer_event(dg_rply_writer *w, const char *name, const char *payload_json,
                               dg_error *err);
dg_status dg_rply_writer_custom(dg_rply_writer *w, const char *channel, const void *data,
                                uint16_t len, dg_error *err);
dg_status dg_rply_writer_snapshot(dg_rply_writer *w, uint16_t id, const dg_rply_snapshot *snap,
                                  dg_error *err);
dg_status dg_rply_writer_snapshot_raw(dg_rply_writer *w, uint16_t id, const uint8_t *bytes,
                                      uint32_t len, dg_error *err);
/* The writer's tracked quantized transform of a live entity (equals the reader's), or NULL. */
const dg_rply_xstate *dg_rply_writer_xstate(const dg_rply_writer *w, uint16_t id);
/* Bytes of op stream written so far. */
size_t dg_rply_writer_op_bytes(const dg_rply_writer *w);

/* Closes the stream and lays out the file. tick_count 0 = last started tick + 1. The result is
 * malloc'd; the caller frees it. The writer can keep going afterwards (a later finish rewrites). */
dg_status dg_rply_writer_finish(dg_rply_writer *w, uint32_t tick_count, uint8_t **out,
                                size_t *out_len, dg_error *err);
/* finish, then write to path through "<path>.tmp" + rename (no half-written file at path). */
dg_status dg_rply_writer_save(dg_rply_writer *w, uint32_t tick_count, const char *path,
                              dg_error *err);

/* ---- quantization helpers the writer uses (float side; never compared by the gate) -------- */
/* Axis-angle (axis * angle, angle in [0, pi]) of a unit quaternion, in radians. */
void dg_rply_quat_to_axis_angle(const double q_wxyz[4], double out[3]);
/* Yaw about world +Y from the look vector (-Z of the body): atan2(-look.x, -look.z). */
double dg_rply_quat_yaw(const double q_wxyz[4]);
/* y component of the body's up vector (+Y rotated by q). */
double dg_rply_quat_up_y(const double q_wxyz[4]);
/* Radians to the i16 rotation scale (+-pi <-> +-32767), rounded half away from zero, clamped. */
int16_t dg_rply_rad_to_i16(double rad);

#ifdef __cplusplus
}
#endif
#endif
