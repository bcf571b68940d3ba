/* detgate — the deterministic simulation stub and its scripted sessions (prefix dg_sim_).
 *
 * A scenario (.scn text, see docs/SCENARIOS.md) is parsed once into an immutable dg_sim_scenario.
 * A dg_sim world is created from it and stepped tick by tick; after each step the caller reads the
 * tick's entity states (sorted by id) and match events. The module knows nothing of files other
 * than the scenario text, nothing of codecs and nothing of hashes.
 *
 * Determinism contract: the same scenario (and the same injection set, none by default) gives
 * bit-identical entity states and events on every run, with gcc and clang at -O0..-O3 on x86-64.
 * The step uses only + - * / sqrt (IEEE correctly rounded) and the module's own sin/cos/atan2,
 * processes entities in id order, draws randomness only from a seeded PRNG, and never reads
 * uninitialised memory (every struct handed out is fully zeroed, padding included, so it may be
 * compared with memcmp). The switches in dg_sim_inject break each of these on purpose. */
#ifndef DETGATE_SIM_H
#define DETGATE_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "detgate/error.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DG_SIM_ID_MAX 32      /* type / faction / object id strings: at most 31 bytes */
#define DG_SIM_NAME_MAX 64    /* display names, callsigns, mission id: at most 63 bytes */
#define DG_SIM_TEXT_MAX 256   /* chat / admin text: at most 255 bytes */
#define DG_SIM_WEAPON_NONE 0xFFFFu /* kill event weapon when nobody fired (crash, admin slay) */
#define DG_SIM_STUD_M 0.28    /* one stud in metres (scenario unit suffix "stud") */

/* ---- scenario (what the recording's manifest, faction and roster sections need) ---- */

typedef enum dg_sim_category {
    DG_SIM_CAT_AIRCRAFT = 0,
    DG_SIM_CAT_MISSILE = 1,
    DG_SIM_CAT_GROUND = 2,
    DG_SIM_CAT_STATIC = 3,
    DG_SIM_CAT_CHARACTER = 4,
    DG_SIM_CAT_OTHER = 5,
} dg_sim_category;

typedef enum dg_sim_projectile {
    DG_SIM_PROJ_NONE = 0,
    DG_SIM_PROJ_GUIDED = 1,
    DG_SIM_PROJ_BALLISTIC = 2,
} dg_sim_projectile;

typedef struct dg_sim_session {
    char name[DG_SIM_NAME_MAX];       /* from the `scenario` line */
    uint32_t tick_rate_hz;            /* 1..1000 */
    uint64_t duration_ticks;          /* ticks 0 .. duration_ticks-1 exist; >= 1 */
    uint64_t seed;
    double planet_radius_m;           /* 1 km .. 30,000 km */
    double gravity_mps2;              /* g0 at the surface (default 9.81) */
    double air_density;               /* kg/m^3 at the surface (default 1.225) */
    double scale_height_m;            /* density scale height (default 8500) */
    double origin_lat_deg, origin_lon_deg; /* where the local tangent frame (ENU) touches */
    char mission_id[DG_SIM_NAME_MAX]; /* may be empty */
    uint32_t keyframe_interval;       /* 15..3600, default 120 */
    uint64_t start_unix;              /* default 0 */
} dg_sim_session;

typedef struct dg_sim_type {
    uint16_t index;                   /* position in declaration order */
    uint8_t category;                 /* dg_sim_category */
    uint8_t projectile;               /* dg_sim_projectile */
    char id[DG_SIM_ID_MAX];
    char name[DG_SIM_NAME_MAX];
} dg_sim_type;

typedef struct dg_sim_faction {
    uint16_t index;
    char id[DG_SIM_ID_MAX];
    char name[DG_SIM_NAME_MAX];
} dg_sim_faction;

typedef struct dg_sim_roster_entry {
    uint32_t participant_id;          /* >= 1, unique */
    uint32_t entity_id;
    char callsign[DG_SIM_NAME_MAX];
} dg_sim_roster_entry;

typedef struct dg_sim_object {
    char id[DG_SIM_ID_MAX];           /* mission-object id, unique */
    uint32_t entity_id;
} dg_sim_object;

typedef struct dg_sim_scenario dg_sim_scenario; /* opaque, immutable once parsed */

/* Parses scenario text. On error returns DG_E_SYNTAX (or DG_E_NOMEM / DG_E_IO), sets *out to NULL
 * and fills err: where = "<name>:<line>:<column>" (1-based, column of the offending token),
 * msg = "expected X, found Y". Never reads past len; any byte sequence is accepted as input. */
dg_status dg_sim_scenario_parse_mem(const char *text, size_t len, const char *name,
                                    dg_sim_scenario **out, dg_error *err);
/* Same, reading the file at path (at most 16 MiB). */
dg_status dg_sim_scenario_parse_file(const char *path, dg_sim_scenario **out, dg_error *err);
void dg_sim_scenario_free(dg_sim_scenario *scn);

const dg_sim_session *dg_sim_scenario_session(const dg_sim_scenario *scn);
const dg_sim_type *dg_sim_scenario_types(const dg_sim_scenario *scn, size_t *count);
const dg_sim_faction *dg_sim_scenario_factions(const dg_sim_scenario *scn, size_t *count);
/* Sorted by participant id. */
const dg_sim_roster_entry *dg_sim_scenario_roster(const dg_sim_scenario *scn, size_t *count);
/* In declaration order. */
const dg_sim_object *dg_sim_scenario_objects(const dg_sim_scenario *scn, size_t *count);

/* The local tangent frame at the session origin, in the planet-centred world frame: origin point
 * on the surface and unit east, north, up vectors. Characters and ground vehicles move in this
 * plane, so relative to it a character's orientation is a pure yaw (flag DG_SIM_FLAG_TILTED clear). */
void dg_sim_scenario_local_frame(const dg_sim_scenario *scn, double origin[3], double east[3],
                                 double north[3], double up[3]);

/* ---- breaking determinism on purpose (all off by default; see docs/SCENARIOS.md) ---- */

enum {
    DG_SIM_INJ_BITFLIP = 1u << 0,       /* flip one bit of one field of one entity at one tick */
    DG_SIM_INJ_FMA = 1u << 1,           /* fused multiply-add (fma()) in the integrator */
    DG_SIM_INJ_LIBM_TRIG = 1u << 2,     /* libm sin/cos/atan2 instead of the module's own */
    DG_SIM_INJ_POINTER_ORDER = 1u << 3, /* damage resolution in record-address order, not id order */
    DG_SIM_INJ_CLOCK_SEED = 1u << 4,    /* PRNG seeded from the clock instead of the scenario */
    DG_SIM_INJ_RACY_THREADS = 1u << 5,  /* two unsynchronised threads step the two halves */
};

typedef enum dg_sim_field {
    DG_SIM_FIELD_POS_X = 0, DG_SIM_FIELD_POS_Y, DG_SIM_FIELD_POS_Z,
    DG_SIM_FIELD_VEL_X, DG_SIM_FIELD_VEL_Y, DG_SIM_FIELD_VEL_Z,
    DG_SIM_FIELD_ROT_W, DG_SIM_FIELD_ROT_X, DG_SIM_FIELD_ROT_Y, DG_SIM_FIELD_ROT_Z,
    DG_SIM_FIELD_HEALTH, DG_SIM_FIELD_FLAGS,
    DG_SIM_FIELD_COUNT_
} dg_sim_field;

typedef struct dg_sim_inject {
    uint32_t flags;          /* DG_SIM_INJ_* */
    uint64_t bitflip_tick;   /* the flip is applied after the step that produces this tick */
    uint32_t bitflip_entity; /* entity id; if it is not alive at that tick nothing is flipped */
    uint8_t bitflip_field;   /* dg_sim_field */
    uint8_t bitflip_bit;     /* 0..63 for doubles, 0..15 for flags */
} dg_sim_inject;

/* Parses "bitflip:tick=300,entity=7,field=pos.x,bit=3;fma;libm-trig;pointer-order;clock-seed;
 * racy-threads" (items separated by ';' or ','; bitflip parameters follow ':' and are separated by
 * ','). Empty string or "none" = no injection. Errors: DG_E_SYNTAX, where = "inject:<column>". */
dg_status dg_sim_inject_parse(const char *spec, dg_sim_inject *out, dg_error *err);
/* Canonical text of an injection set (the form the parser accepts). Returns the length it needed. */
size_t dg_sim_inject_format(const dg_sim_inject *inj, char *buf, size_t cap);
/* Field name as used by the parser ("pos.x", ..., "health", "flags"); NULL if out of range. */
const char *dg_sim_field_name(dg_sim_field field);

/* ---- the world ---- */

/* Entity state flags (the u16 `flags` the codec stores verbatim). */
#define DG_SIM_FLAG_AIRBORNE 0x0001u     /* aircraft/missile above the ground */
#define DG_SIM_FLAG_MOVING 0x0002u       /* speed > 0 this tick */
#define DG_SIM_FLAG_AFTERBURNER 0x0004u  /* aircraft throttle > 0.9 */
#define DG_SIM_FLAG_TILTED 0x0008u       /* ground vehicle pitched/rolled by terrain (not yaw-only) */
#define DG_SIM_FLAG_LAST_STEPPED 0x0010u /* the entity the step finished with (kept in state on
                                            purpose: the racy-threads injection races on it) */
#define DG_SIM_FLAG_KILLS_SHIFT 8        /* bits 8..15: kills credited, saturating at 255 */

typedef struct dg_sim_entity {
    uint32_t id;             /* >= 1 */
    uint16_t type_index;
    uint16_t faction_index;
    double pos[3];           /* metres, planet-centred Cartesian frame (planet centre at origin) */
    double vel[3];           /* metres/second */
    double rot[4];           /* unit quaternion w, x, y, z; body frame x forward, y left, z up */
    double health;           /* 0..1 */
    uint16_t flags;          /* DG_SIM_FLAG_* */
    uint16_t pad0_;          /* always 0 */
    uint32_t pad1_;          /* always 0 */
} dg_sim_entity;

/* An entity's pose in the session's local frame (what a flat-world format such as RPLY or a
 * local ACMI track wants): position in metres east, north, up from the frame origin, and the
 * orientation as a quaternion w, x, y, z relative to the east/north/up axes. For an upright
 * character the result is a pure rotation about up (x and y components 0 up to rounding); its yaw
 * is atan2(2(w z), 1 - 2 z^2) measured counter-clockwise from east. */
void dg_sim_local_pose(const dg_sim_scenario *scn, const dg_sim_entity *e, double pos_enu[3],
                       double rot_enu[4]);

/* Event kinds mirror dg_event_kind in detgate/quant.h exactly. */
typedef enum dg_sim_event_kind {
    DG_SIM_EV_KILL = 1,  /* a killer entity id (0 = none), b victim id, c weapon type index */
    DG_SIM_EV_SPAWN = 2, /* a entity id, c type index, d faction index */
    DG_SIM_EV_CHAT = 3,  /* a sender participant id (0 = server), c channel, text */
    DG_SIM_EV_ADMIN = 4, /* a actor participant id (0 = console), b target entity id, c action, text */
    DG_SIM_EV_ALERT = 5, /* c faction index, d level 0..255 */
} dg_sim_event_kind;

typedef enum dg_sim_admin_action {
    DG_SIM_ADMIN_KICK = 1, /* target despawned */
    DG_SIM_ADMIN_BAN = 2,  /* target despawned */
    DG_SIM_ADMIN_MUTE = 3,
    DG_SIM_ADMIN_WARN = 4,
    DG_SIM_ADMIN_HEAL = 5, /* target health = 1 */
    DG_SIM_ADMIN_SLAY = 6, /* target health = 0, kill event (killer 0, weapon NONE), despawned */
} dg_sim_admin_action;

typedef struct dg_sim_event {
    uint8_t kind;            /* dg_sim_event_kind */
    uint8_t pad0_[3];        /* always 0 */
    uint32_t a, b;
    uint16_t c, d;
    uint16_t text_len;       /* bytes of text, 0 when none */
    uint16_t pad1_;          /* always 0 */
    uint32_t pad2_;          /* always 0 (keeps the struct free of implicit padding on LP64) */
    const char *text;        /* UTF-8, not NUL-terminated; points into the scenario (stable for the
                                scenario's lifetime); NULL when text_len == 0 */
} dg_sim_event;

typedef struct dg_sim dg_sim;

/* Creates the world at tick 0: entities spawning at tick 0 exist and their spawn events (and any
 * scripted event at tick 0) are the events of tick 0. inj may be NULL (no injection). The scenario
 * must outlive the world. */
dg_status dg_sim_new(const dg_sim_scenario *scn, const dg_sim_inject *inj, dg_sim **out,
                        dg_error *err);
void dg_sim_free(dg_sim *sim);

/* Advances one tick. DG_E_STATE when the last tick (duration_ticks-1) has already been produced;
 * DG_E_NOMEM if the world had to grow and could not. No allocation once the world has reached its
 * peak entity/event count. */
dg_status dg_sim_step(dg_sim *sim, dg_error *err);
uint64_t dg_sim_tick(const dg_sim *sim);
/* True when the current tick is the last one of the session. */
bool dg_sim_done(const dg_sim *sim);

/* The current tick's live entities, sorted by id (valid until the next step). */
const dg_sim_entity *dg_sim_entities(const dg_sim *sim, size_t *count);
/* The current tick's events, in the order they happened (valid until the next step). */
const dg_sim_event *dg_sim_events(const dg_sim *sim, size_t *count);
/* The seed the PRNG actually used (differs from the scenario's only with clock-seed). */
uint64_t dg_sim_seed_used(const dg_sim *sim);
/* True once the bit-flip injection has been applied. */
bool dg_sim_bitflip_applied(const dg_sim *sim);

#ifdef __cplusplus
}
#endif
#endif
