/* tests/rply/rply_test_util.h — test-local helpers for the RPLY suites: a tiny byte builder for
 * hand-made files, a file layout helper, and a sample snapshot that uses every v10 feature. */
#ifndef RPLY_TEST_UTIL_H
#define RPLY_TEST_UTIL_H

#include <setjmp.h>
#include <stdio.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "detgate/rply.h"

typedef struct tb {
    uint8_t *p;
    size_t n, cap;
} tb;

static inline void tb_put(tb *b, const void *src, size_t n)
{
    if (b->n + n > b->cap) {
        size_t c = b->cap ? b->cap : 256;
        while (c < b->n + n)
            c *= 2;
        b->p = realloc(b->p, c);
        assert_non_null(b->p);
        b->cap = c;
    }
    if (n)
        memcpy(b->p + b->n, src, n);
    b->n += n;
}
static inline void tb_u8(tb *b, unsigned v)
{
    uint8_t x = (uint8_t)v;
    tb_put(b, &x, 1);
}
static inline void tb_u16(tb *b, unsigned v)
{
    tb_u8(b, v & 0xFF);
    tb_u8(b, (v >> 8) & 0xFF);
}
static inline void tb_u32(tb *b, uint32_t v)
{
    tb_u16(b, v & 0xFFFF);
    tb_u16(b, v >> 16);
}
static inline void tb_u64(tb *b, uint64_t v)
{
    tb_u32(b, (uint32_t)v);
    tb_u32(b, (uint32_t)(v >> 32));
}
static inline void tb_f32(tb *b, float f)
{
    uint32_t v;
    memcpy(&v, &f, 4);
    tb_u32(b, v);
}
static inline void tb_f64(tb *b, double d)
{
    uint64_t v;
    memcpy(&v, &d, 8);
    tb_u64(b, v);
}
static inline void tb_str(tb *b, const char *s)
{
    size_t n = strlen(s);
    tb_u16(b, (unsigned)n);
    tb_put(b, s, n);
}
static inline void tb_free(tb *b)
{
    free(b->p);
    memset(b, 0, sizeof *b);
}

/* A whole file around hand-written ops. nstr strings named s0, s1, ...; keyframes as pairs. */
typedef struct tfile {
    unsigned version, tick_rate;
    uint32_t place_version, tick_count;
    unsigned nstr;
    const char **strings;      /* optional: explicit strings (nstr of them) */
    unsigned nkf;
    const uint32_t *kf;        /* tick, offset, tick, offset... */
    int32_t op_bytes_delta;    /* added to the true opBytes */
} tfile;

static inline tb tfile_build(const tfile *t, const tb *ops)
{
    tb b = {0};
    tb_put(&b, "RPLY", 4);
    tb_u8(&b, t->version ? t->version : 3);
    tb_u8(&b, t->tick_rate);
    tb_u32(&b, t->place_version);
    tb_f64(&b, 1700000000.5);
    tb_u32(&b, t->tick_count);
    tb_u16(&b, t->nstr);
    tb_u16(&b, t->nkf);
    tb_u32(&b, (uint32_t)((int64_t)ops->n + t->op_bytes_delta));
    for (unsigned i = 0; i < t->nstr; i++) {
        char name[32];
        snprintf(name, sizeof name, "s%u", i);
        tb_str(&b, t->strings ? t->strings[i] : name);
    }
    for (unsigned i = 0; i < t->nkf; i++) {
        tb_u32(&b, t->kf[2 * i]);
        tb_u32(&b, t->kf[2 * i + 1]);
    }
    tb_put(&b, ops->p, ops->n);
    return b;
}

/* Default: 15 Hz, 100 ticks, 8 strings, no keyframes. */
static inline tfile tfile_default(void)
{
    tfile t;
    memset(&t, 0, sizeof t);
    t.tick_rate = 15;
    t.tick_count = 100;
    t.nstr = 8;
    return t;
}

/* open + validate; returns the status and leaves the error in *err. */
static inline dg_status rply_check_bytes(const uint8_t *p, size_t n, uint32_t pv, dg_error *err)
{
    dg_error_clear(err);
    dg_rply_file f;
    dg_status st = dg_rply_file_open(&f, p, n, pv, err);
    if (st == DG_OK)
        st = dg_rply_validate(&f, err);
    dg_rply_file_close(&f);
    return st;
}

/* ---- a snapshot with every v10 feature ---------------------------------------------------- */
#define RS(lit) ((dg_rply_str){(lit), (uint16_t)(sizeof(lit) - 1)})

typedef struct sample_snapshot {
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
} sample_snapshot;

static inline void sample_snapshot_init(sample_snapshot *x)
{
    memset(x, 0, sizeof *x);
    dg_rply_snapshot *s = &x->s;
    s->version = 10;
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
    s->rig.shirt_graphic = RS("");
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
        p->name = i == 0 ? RS("HumanoidRootPart") : RS("Part\"with\\escapes\n");
        p->parent_path = i < 2 ? RS("") : RS("Folder/Sub#2");
        for (int k = 0; k < 3; k++) {
            p->offset[k] = 0.5f * (float)(i + k) - 1.25f;
            p->rotation[k] = (int16_t)(1000 * i - 3000 * k);
            p->size[k] = 1.0f + (float)k;
            p->color[k] = (uint8_t)(10 * i + k);
        }
        p->material = (uint16_t)(256 + i);
        p->transparency = (uint8_t)(i * 20);
        p->reflectance = (uint8_t)(255 - i);
        p->shape = (uint8_t)(i % 3);
        for (int k = 0; k < 6; k++)
            p->surfaces[k] = (uint8_t)(k + i);
    }
    x->parts[5].union_key_index = 1;
    x->parts[1].mesh_id = RS("rbxassetid://1234");
    x->parts[1].texture_id = RS("rbxassetid://5678");
    x->parts[1].mesh_size[0] = 2.0f;
    x->parts[1].mesh_size[1] = 3.5f;
    x->parts[1].mesh_size[2] = -0.0f;
    x->parts[2].has_special_mesh = 1;
    x->parts[2].special_mesh = (dg_rply_special_mesh){2, RS("rbxassetid://9"), RS("rbxassetid://10"),
                                                      {1, 2, 3}, {0.25f, 0, -0.25f}};
    x->parts[3].has_surface_appearance = 1;
    x->parts[3].surface_appearance =
        (dg_rply_surface_appearance){RS("c"), RS("n"), RS("m"), RS("r\xc3\xa9"), 2};
    x->decals[0] = (dg_rply_decal){0, 5, RS("rbxassetid://20"), {1, 2, 3}, 128, {0, 0}};
    x->decals[1] = (dg_rply_decal){1, 0, RS("rbxassetid://21"), {4, 5, 6}, 0, {2.0f, 4.0f}};
    x->parts[0].decal_count = 2;
    x->parts[0].decals = x->decals;
    /* Effects: an Attachment first, then one of every other class parented to it, one prop each of
     * the eleven tags spread over them. */
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
        p->f[2] = 1e-7f;
        p->rgb[0] = 9;
        p->rgb[1] = 8;
        p->rgb[2] = 7;
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

#endif
