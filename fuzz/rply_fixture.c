/* fuzz/rply_fixture.c — see rply_fixture.h. Plain arithmetic only (the quaternions are rational). */
#include "rply_fixture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RS(lit) ((dg_rply_str){(lit), (uint16_t)(sizeof(lit) - 1)})

typedef struct snap_parts {
    dg_rply_snapshot s;
    dg_rply_str unions[2], meshes[1];
    dg_rply_char_mesh cmesh[2];
    dg_rply_part parts[6];
    dg_rply_decal decals[2];
    dg_rply_effect effects[11];
    dg_rply_effect_prop props[11];
    dg_rply_numkey numseq[2];
    dg_rply_colorkey colorseq[2];
    dg_rply_joint joints[4];
} snap_parts;

static void snapshot_parts(snap_parts *x)
{
    memset(x, 0, sizeof *x);
    dg_rply_snapshot *s = &x->s;
    s->version = DG_RPLY_SNAPSHOT_VERSION;
    s->is_model = 1;
    s->name = RS("Player1");
    s->source_key = RS("Workspace/Player1");
    s->root_path = RS("HumanoidRootPart");
    x->unions[0] = RS("Workspace/Car/Body#2");
    x->unions[1] = RS("Workspace/Car/Fender");
    s->union_count = 2;
    s->union_keys = x->unions;
    x->meshes[0] = RS("rbxassetid://1234");
    s->mesh_count = 1;
    s->mesh_ids = x->meshes;
    s->rig.has_humanoid = 1;
    s->rig.rig_type = 1;
    s->rig.shirt = RS("rbxassetid://11");
    s->rig.pants = RS("rbxassetid://12");
    s->rig.has_body_colors = 1;
    for (int i = 0; i < 6; i++)
        for (int k = 0; k < 3; k++)
            s->rig.body_colors[i][k] = (uint8_t)(i * 40 + k);
    x->cmesh[0] = (dg_rply_char_mesh){1, 48112070.0, 0.0, 1.5};
    x->cmesh[1] = (dg_rply_char_mesh){5, 27111894.0, 2.0, 0.0};
    s->rig.mesh_count = 2;
    s->rig.meshes = x->cmesh;
    for (int i = 0; i < 6; i++) {
        dg_rply_part *p = &x->parts[i];
        p->kind = (uint8_t)i;
        p->name = i == 0 ? RS("HumanoidRootPart") : RS("Part");
        p->parent_path = i < 2 ? RS("") : RS("Folder/Sub#2");
        for (int k = 0; k < 3; k++) {
            p->offset[k] = 0.5f * (float)(i + k) - 1.25f;
            p->rotation[k] = (int16_t)(1000 * i - 3000 * k);
            p->size[k] = 1.0f + (float)k;
            p->color[k] = (uint8_t)(10 * i + k);
        }
        p->material = (uint16_t)(256 + i);
        p->transparency = (uint8_t)(i * 20);
        p->shape = (uint8_t)(i % 3);
        for (int k = 0; k < 6; k++)
            p->surfaces[k] = (uint8_t)(k + i);
    }
    x->parts[5].union_key_index = 1;
    x->parts[1].mesh_id = RS("rbxassetid://1234");
    x->parts[1].texture_id = RS("rbxassetid://5678");
    x->parts[1].mesh_size[0] = 2.0f;
    x->parts[2].has_special_mesh = 1;
    x->parts[2].special_mesh = (dg_rply_special_mesh){2, RS("rbxassetid://9"), RS("rbxassetid://10"),
                                                      {1, 2, 3}, {0.25f, 0, -0.25f}};
    x->parts[3].has_surface_appearance = 1;
    x->parts[3].surface_appearance = (dg_rply_surface_appearance){RS("c"), RS("n"), RS("m"), RS("r\xc3\xa9"), 2};
    x->decals[0] = (dg_rply_decal){0, 5, RS("rbxassetid://20"), {1, 2, 3}, 128, {0, 0}};
    x->decals[1] = (dg_rply_decal){1, 0, RS("rbxassetid://21"), {4, 5, 6}, 0, {2.0f, 4.0f}};
    x->parts[0].decal_count = 2;
    x->parts[0].decals = x->decals;
    x->numseq[0] = (dg_rply_numkey){0.0f, 1.0f, 0.0f};
    x->numseq[1] = (dg_rply_numkey){1.0f, 0.5f, 0.1f};
    x->colorseq[0] = (dg_rply_colorkey){0.0f, {255, 0, 0}};
    x->colorseq[1] = (dg_rply_colorkey){1.0f, {0, 0, 255}};
    for (int t = 0; t < 11; t++) {
        dg_rply_effect_prop *p = &x->props[t];
        p->index = (uint8_t)(t * 3);
        p->tag = (uint8_t)t;
        p->b = 1;
        p->f[0] = 1.5f;
        p->f[1] = -2.0f;
        p->rgb[0] = 9;
        p->s = t == 10 ? RS("Att0") : RS("Enum.Thing");
        if (t == 7) {
            p->n = 2;
            p->numseq = x->numseq;
        }
        if (t == 8) {
            p->n = 2;
            p->colorseq = x->colorseq;
        }
    }
    for (int c = 0; c < 11; c++) {
        dg_rply_effect *e = &x->effects[c];
        e->class_id = (uint8_t)(c + 1);
        e->parent_index = c == 0 ? 0 : 1;
        e->name = c == 0 ? RS("Att0") : RS("Effect");
        e->prop_count = 1;
        e->props = &x->props[c];
    }
    x->parts[0].effect_count = 11;
    x->parts[0].effects = x->effects;
    s->part_count = 6;
    s->parts = x->parts;
    for (int j = 0; j < 4; j++) {
        dg_rply_joint *jt = &x->joints[j];
        jt->kind = (uint8_t)(j + 1);
        jt->name = RS("Joint");
        jt->holder = (uint16_t)(j + 1);
        jt->part0 = 1;
        jt->part1 = (uint16_t)(j + 2);
        if (j < 2) {
            jt->c0 = (dg_rply_cframe){{0, 1, 2}, {100, -100, 32767}};
            jt->c1 = (dg_rply_cframe){{-1, 0.5f, 0}, {-32767, 0, 7}};
        } else {
            jt->attachment0 = RS("Att0");
            jt->attachment1 = RS("Att1");
        }
    }
    s->joint_count = 4;
    s->joints = x->joints;
}

uint8_t *dg_fuzz_rply_snapshot_bytes(size_t *len)
{
    snap_parts x;
    snapshot_parts(&x);
    dg_error err;
    dg_error_clear(&err);
    size_t n = 0;
    if (dg_rply_snapshot_encode(&x.s, NULL, 0, &n, &err) != DG_OK)
        goto fail;
    uint8_t *b = malloc(n);
    if (!b || dg_rply_snapshot_encode(&x.s, b, n, &n, &err) != DG_OK) {
        free(b);
        goto fail;
    }
    *len = n;
    return b;
fail:
    fprintf(stderr, "rply fixture: snapshot encode: %s: %s\n", err.where, err.msg);
    return NULL;
}

#define CHECK(call)                                                                  \
    do {                                                                             \
        if ((call) != DG_OK) {                                                       \
            fprintf(stderr, "rply fixture: %s: %s: %s\n", #call, err.where, err.msg); \
            dg_rply_writer_free(w);                                                  \
            return NULL;                                                             \
        }                                                                            \
    } while (0)

/* Rational unit quaternions (w, x, y, z): identity, yaw-only, tilted. */
static const double k_quats[4][4] = {{1, 0, 0, 0}, {0.8, 0, 0.6, 0}, {0.6, 0.8, 0, 0}, {0.6, 0, 0.8, 0}};

uint8_t *dg_fuzz_rply_record(int variant, size_t *len)
{
    dg_error err;
    dg_error_clear(&err);
    dg_rply_writer_config cfg;
    dg_rply_writer_config_default(&cfg);
    cfg.place_version = 1234;
    cfg.start_unix = 1764460800.25;
    cfg.keyframe_every = variant == 1 ? 0 : 4;
    cfg.use_deltas = variant != 1;
    cfg.use_thresholds = variant == 0;
    uint32_t ticks = variant == 3 ? 1 : variant == 2 ? 60 : 12;
    dg_rply_writer *w = dg_rply_writer_new(&cfg, &err);
    if (!w) {
        fprintf(stderr, "rply fixture: writer_new: %s\n", err.msg);
        return NULL;
    }
    uint16_t next_id = 1;
    uint16_t live[32];
    size_t nlive = 0;
    for (uint32_t t = 0; t < ticks; t++) {
        if (t)
            CHECK(dg_rply_writer_tick(w, t, &err));
        if (nlive < 32 && (t == 0 || (variant == 2 && t % 5 == 0))) {
            uint16_t id = next_id == 3 ? 300 : next_id;  /* 300: an id in the long form */
            next_id++;
            CHECK(dg_rply_writer_spawn(w, id, t % 2 ? "model:Prototypes.Car" : "char:123",
                                       nlive ? live[0] : 0, &err));
            live[nlive++] = id;
        }
        if (variant == 2 && t % 7 == 6 && nlive > 1) {
            CHECK(dg_rply_writer_despawn(w, live[nlive - 1], &err));
            nlive--;
        }
        for (size_t i = 0; i < nlive; i++) {
            double pos[3] = {1.5 + 0.25 * t * (double)(i + 1), 2.0 - 0.5 * t, -3.25 + (double)i};
            CHECK(dg_rply_writer_transform(w, live[i], pos, k_quats[(t / 3 + i) % 4], &err));
        }
        if (variant == 0 || (variant == 2 && t % 9 == 0)) {
            dg_rply_value v;
            memset(&v, 0, sizeof v);
            v.tag = (uint8_t)(t % 5 == DG_RPLY_PROP_STRING ? DG_RPLY_PROP_NUMBER : t % 5);  /* strings: prop_str */
            if (v.tag == DG_RPLY_PROP_BOOL)
                v.u.b = 1;
            else if (v.tag == DG_RPLY_PROP_NUMBER)
                v.u.num = 0.5 * t;
            else if (v.tag == DG_RPLY_PROP_COLOR3)
                v.u.rgb[0] = 200;
            else
                v.u.vec[1] = 1.25f;
            CHECK(dg_rply_writer_prop(w, live[0], t % 2 ? "Health" : "Body/Exhaust/Enabled", &v, &err));
            CHECK(dg_rply_writer_prop_str(w, live[0], "@Team", t % 2 ? DG_RPLY_PROP_STRING : DG_RPLY_PROP_ENUM,
                                          t % 2 ? "Red \"Team\"" : "Enum.Team.Red", &err));
        }
        if (variant == 0) {
            switch (t % 4) {
            case 0: CHECK(dg_rply_writer_anim_play(w, live[0], "Run", (uint8_t)(t % 3), 10, 256, &err)); break;
            case 1: CHECK(dg_rply_writer_anim_speed(w, live[0], (uint8_t)((t - 1) % 3), -128, &err)); break;
            case 2: CHECK(dg_rply_writer_event(w, "Goal", "{\"team\":\"red\",\"n\":1}", &err)); break;
            default: {
                uint8_t data[5] = {1, 2, 3, 0, 255};
                CHECK(dg_rply_writer_custom(w, "Telemetry", data, sizeof data, &err));
            }
            }
            if (t == 5)
                CHECK(dg_rply_writer_anim_stop(w, live[0], 0, 5, &err));
            if (t == 2) {
                snap_parts x;
                snapshot_parts(&x);
                CHECK(dg_rply_writer_snapshot(w, live[0], &x.s, &err));
            }
            if (t == 3) {
                int16_t rot[3] = {100, -200, 300};
                float p[3] = {1.0f, 2.0f, 3.0f};
                CHECK(dg_rply_writer_xform_raw(w, live[0], DG_RPLY_XF_POS | DG_RPLY_XF_ROT, p, rot, 0, &err));
                int16_t dp[3] = {-300, 5, 1000};
                int8_t dr[3] = {1, -1, 2};
                CHECK(dg_rply_writer_xform_d_raw(w, live[0], DG_RPLY_XD_POS16 | DG_RPLY_XD_ROT, dp, 0, dr, &err));
            }
        }
    }
    uint8_t *out = NULL;
    CHECK(dg_rply_writer_finish(w, 0, &out, len, &err));
    dg_rply_writer_free(w);
    return out;
}
