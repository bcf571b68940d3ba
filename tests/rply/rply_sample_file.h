/* tests/rply/rply_sample_file.h — one small RPLY file with every op, every PROP tag, both XFORM
 * rotation kinds, every XFORM_D mask bit, a long-form id, keyframes and a full snapshot; shared by
 * the robustness and dump suites. */
#ifndef RPLY_SAMPLE_FILE_H
#define RPLY_SAMPLE_FILE_H

#include <math.h>

#include "rply_test_util.h"

static inline void sample_ok(dg_status st, const dg_error *err)
{
    if (st != DG_OK) {
        char t[600];
        dg_error_format(err, t, sizeof t);
        fprintf(stderr, "sample file: %s\n", t);
        fail();
    }
}

/* with_snapshot: include the (large) full snapshot; the bit-flip suite keeps the file small. */
static inline uint8_t *sample_file(size_t *len, bool with_snapshot)
{
    dg_error err;
    dg_error_clear(&err);
    dg_rply_writer_config cfg;
    dg_rply_writer_config_default(&cfg);
    cfg.keyframe_every = 4;
    cfg.place_version = 1234;
    cfg.start_unix = 1764460800.25;
    dg_rply_writer *w = dg_rply_writer_new(&cfg, &err);
    assert_non_null(w);
    double q[4] = {1, 0, 0, 0};
    double pos[3] = {1.5, 2.0, -3.25};
    sample_ok(dg_rply_writer_spawn(w, 1, "char:123", 0, &err), &err);
    sample_ok(dg_rply_writer_spawn(w, 300, "model:Prototypes.Car", 1, &err), &err);
    sample_ok(dg_rply_writer_transform(w, 1, pos, q, &err), &err);
    double tilt[4] = {cos(0.2), sin(0.2), 0, 0};
    sample_ok(dg_rply_writer_transform(w, 300, pos, tilt, &err), &err);
    sample_ok(dg_rply_writer_tick(w, 1, &err), &err);
    pos[0] += 1.0;
    q[0] = cos(0.1);
    q[2] = sin(0.1);
    sample_ok(dg_rply_writer_transform(w, 1, pos, q, &err), &err);           /* XFORM_D 1|4 */
    tilt[0] = cos(0.25);
    tilt[1] = sin(0.25);
    sample_ok(dg_rply_writer_transform(w, 300, pos, tilt, &err), &err);      /* XFORM_D 1|8, long id */
    dg_rply_value v;
    memset(&v, 0, sizeof v);
    v.tag = 0;
    v.u.b = 1;
    sample_ok(dg_rply_writer_prop(w, 1, "Body/Exhaust/Enabled", &v, &err), &err);
    v.tag = 1;
    v.u.num = INFINITY;
    sample_ok(dg_rply_writer_prop(w, 1, "Health", &v, &err), &err);
    sample_ok(dg_rply_writer_prop_str(w, 1, "@Team", 2, "Red \"Team\"\t", &err), &err);
    v.tag = 3;
    v.u.rgb[0] = 255;
    v.u.rgb[1] = 128;
    v.u.rgb[2] = 0;
    sample_ok(dg_rply_writer_prop(w, 1, "Color", &v, &err), &err);
    v.tag = 4;
    v.u.vec[0] = 0.1f;
    v.u.vec[1] = NAN;
    v.u.vec[2] = -INFINITY;
    sample_ok(dg_rply_writer_prop(w, 300, "Size", &v, &err), &err);
    sample_ok(dg_rply_writer_prop_str(w, 300, "Material", 5, "Enum.Material.Neon", &err), &err);
    sample_ok(dg_rply_writer_tick(w, 2, &err), &err);
    sample_ok(dg_rply_writer_anim_play(w, 1, "rbxassetid://507777826", 3, 10, -384, &err), &err);
    sample_ok(dg_rply_writer_anim_speed(w, 1, 3, 512, &err), &err);
    sample_ok(dg_rply_writer_event(w, "Goal", "{\"team\":\"red\"}", &err), &err);
    const uint8_t data[5] = {0x00, 0xAB, 0x10, 0xFF, 0x7E};
    sample_ok(dg_rply_writer_custom(w, "Telemetry", data, 5, &err), &err);
    pos[1] += 100.0;
    sample_ok(dg_rply_writer_transform(w, 1, pos, q, &err), &err);          /* XFORM_D 2 (i16) */
    sample_ok(dg_rply_writer_tick(w, 3, &err), &err);
    sample_ok(dg_rply_writer_anim_stop(w, 1, 3, 25, &err), &err);
    if (with_snapshot) {
        sample_snapshot s;
        sample_snapshot_init(&s);
        sample_ok(dg_rply_writer_snapshot(w, 1, &s.s, &err), &err);
    } else {
        static const uint8_t tiny[] = {10, 0, 1, 0, 'n', 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
        sample_ok(dg_rply_writer_snapshot_raw(w, 1, tiny, sizeof tiny, &err), &err);
    }
    sample_ok(dg_rply_writer_tick(w, 4, &err), &err); /* keyframe: TICK 4 + full XFORMs of both */
    sample_ok(dg_rply_writer_tick(w, 5, &err), &err);
    sample_ok(dg_rply_writer_despawn(w, 300, &err), &err);
    uint8_t *buf;
    sample_ok(dg_rply_writer_finish(w, 8, &buf, len, &err), &err);
    dg_rply_writer_free(w);
    return buf;
}

#endif
