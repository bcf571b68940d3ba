/* sim_stub/sim_internal.h — the parsed scenario as the world builder sees it (private to sim_stub). */
#ifndef DG_SIM_INTERNAL_H
#define DG_SIM_INTERNAL_H

#include "detgate/sim.h"

#define DG_SIM_TICK_NONE UINT64_MAX

enum scn_pilot_mode {
    SCN_MODE_CRUISE = 1, /* hold heading, altitude band, speed */
    SCN_MODE_WEAVE,      /* bank left and right every half period */
    SCN_MODE_ORBIT,      /* constant bank turn */
    SCN_MODE_CHASE,      /* turn toward a target (an id or the nearest enemy) */
    SCN_MODE_RANDOM,     /* seeded schedule of heading/altitude/speed changes */
    SCN_MODE_WALK,       /* character: stand / walk / run schedule on the tangent plane */
    SCN_MODE_DRIVE,      /* ground vehicle: like walk, tilted by terrain */
    SCN_MODE_HOLD,       /* stand still */
};

enum scn_event_kind {
    SCN_EV_DESPAWN = 1,
    SCN_EV_FIRE,
    SCN_EV_SALVO,
    SCN_EV_WAVE,
    SCN_EV_CHAT,
    SCN_EV_ADMIN,
    SCN_EV_ALERT,
};

enum scn_place { SCN_PLACE_LOCAL = 0, SCN_PLACE_GEO = 1, SCN_PLACE_AREA = 2 };

typedef struct scn_type {
    dg_sim_type pub;
    /* aircraft */
    double mass, wing_area, thrust, cl0, cla, cd0, k_induced, cyb, max_roll, max_pitch, max_yaw;
    /* missile */
    double speed, accel, turn_g, lifetime_s, damage, hit_radius;
    /* character / ground */
    double walk, run, turn;
} scn_type;

typedef struct scn_place_spec {
    uint8_t kind;                 /* scn_place */
    double a, b, c;               /* local e,n,u (m) or lat,lon (deg), alt (m) */
    double radius;                /* area: circle around (a, b) */
    double alt_lo, alt_hi;        /* area: height range */
    double heading_deg;
    uint8_t heading_random;
    double speed_lo, speed_hi;
} scn_place_spec;

typedef struct scn_entity {
    uint32_t id;
    uint16_t type, faction;
    scn_place_spec place;
    uint64_t spawn_lo, spawn_hi;  /* spawn tick drawn in [lo, hi] by the seeded PRNG */
    uint64_t despawn;             /* DG_SIM_TICK_NONE when never */
    double health;
} scn_entity;

typedef struct scn_pilot {
    uint32_t id_lo, id_hi;
    uint64_t from, until;
    uint8_t mode;
    uint32_t target;              /* chase: 0 = nearest enemy */
    double bank_deg, period_ticks, alt_lo, alt_hi, speed, move, walk, run, turn_dps;
} scn_pilot;

#define SCN_AXIS_THROTTLE 1u
#define SCN_AXIS_PITCH 2u
#define SCN_AXIS_ROLL 4u
#define SCN_AXIS_YAW 8u

typedef struct scn_input {
    uint32_t id_lo, id_hi;
    uint64_t from, to;            /* first window [from, to] */
    uint64_t every;               /* 0 = once; else windows repeat with this period */
    uint64_t until;               /* last tick any window may cover */
    uint8_t axes;                 /* SCN_AXIS_* given */
    double throttle, pitch, roll, yaw;
} scn_input;

typedef struct scn_event {
    uint8_t kind;                 /* scn_event_kind */
    uint64_t at, every, until;    /* first tick, repeat period (0 = once), last tick */
    uint32_t a, b;                /* ids (meaning per kind) */
    uint16_t c, d;                /* type/faction/channel/action/level */
    uint32_t count;
    uint16_t type2;               /* wave: type; salvo/fire: weapon type */
    uint16_t faction2;            /* salvo: target faction; wave: faction */
    uint64_t lifetime_ticks;      /* wave */
    scn_place_spec place;         /* wave */
    uint32_t text_off;            /* into scn->text */
    uint16_t text_len;
} scn_event;

struct dg_sim_scenario {
    dg_sim_session session;
    scn_type *types;
    size_t ntypes;
    dg_sim_type *pub_types;
    dg_sim_faction *factions;
    size_t nfactions;
    scn_entity *entities;         /* sorted by id after parsing */
    size_t nentities;
    dg_sim_roster_entry *roster;
    size_t nroster;
    dg_sim_object *objects;
    size_t nobjects;
    scn_pilot *pilots;
    size_t npilots;
    scn_input *inputs;
    size_t ninputs;
    scn_event *events;
    size_t nevents;
    char *text;                   /* chat/admin texts, back to back */
    size_t text_len;
    uint32_t max_declared_id;
    double frame_origin[3], frame_east[3], frame_north[3], frame_up[3];
};

/* Geodetic (spherical) latitude/longitude/altitude to the planet-centred frame. */
void dg_sim__geo_to_world(double radius, double lat_deg, double lon_deg, double alt, double out[3]);
/* The ENU basis at a point given by latitude/longitude. */
void dg_sim__enu_at(double lat_deg, double lon_deg, double e[3], double n[3], double u[3]);

#endif
