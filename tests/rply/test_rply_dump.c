/* tests/rply/test_rply_dump.c — the canonical JSON dump checked structurally: every line parsed
 * with jansson and compared with what the reader decoded (and the writer was given), key order as
 * the spec lists it, floats that round-trip, NaN/Infinity strings, --partial behaviour, info. */
#define _POSIX_C_SOURCE 200809L
#include <jansson.h>
#include <stdio.h>

#include "harness/rply_dump.h"
#include "rply_sample_file.h"

typedef struct lines {
    json_t **v;
    size_t n;
} lines;

static lines parse_lines(FILE *fp)
{
    lines L = {NULL, 0};
    rewind(fp);
    char *line = NULL;
    size_t cap = 0;
    ssize_t got;
    while ((got = getline(&line, &cap, fp)) > 0) {
        json_error_t je;
        json_t *j = json_loads(line, 0, &je);
        if (!j) {
            fprintf(stderr, "not JSON: %s (%s)\n", line, je.text);
            fail();
        }
        L.v = realloc(L.v, (L.n + 1) * sizeof *L.v);
        L.v[L.n++] = j;
    }
    free(line);
    return L;
}

static void free_lines(lines *L)
{
    for (size_t i = 0; i < L->n; i++)
        json_decref(L->v[i]);
    free(L->v);
}

/* The object's keys in order, joined by commas. */
static void keys_of(json_t *o, char *out, size_t cap)
{
    out[0] = '\0';
    for (void *it = json_object_iter(o); it; it = json_object_iter_next(o, it)) {
        if (out[0])
            strncat(out, ",", cap - strlen(out) - 1);
        strncat(out, json_object_iter_key(it), cap - strlen(out) - 1);
    }
}

static void expect_keys(json_t *o, const char *want)
{
    char got[512];
    keys_of(o, got, sizeof got);
    if (strcmp(got, want) != 0) {
        fprintf(stderr, "keys: got %s, want %s\n", got, want);
        fail();
    }
}

static long long ival(json_t *o, const char *k)
{
    json_t *v = json_object_get(o, k);
    if (!json_is_integer(v)) {
        fprintf(stderr, "%s is not an integer\n", k);
        fail();
    }
    return json_integer_value(v);
}

/* A JSON number or NaN/Infinity string, as the f32 the dump printed. */
static void expect_f32(json_t *v, float want)
{
    if (isnan(want)) {
        assert_string_equal(json_string_value(v), "NaN");
    } else if (isinf(want)) {
        assert_string_equal(json_string_value(v), want > 0 ? "Infinity" : "-Infinity");
    } else {
        assert_true(json_is_number(v));
        float got = (float)json_number_value(v);
        if (want == 0.0f) /* %.9g prints -0 as "-0", which JSON readers take as the integer 0 */
            assert_true(got == 0.0f);
        else
            assert_memory_equal(&got, &want, 4);
    }
}
static void expect_f32s(json_t *a, const float *want, size_t n)
{
    assert_int_equal(json_array_size(a), n);
    for (size_t i = 0; i < n; i++)
        expect_f32(json_array_get(a, i), want[i]);
}
static void expect_ints(json_t *a, const long *want, size_t n)
{
    assert_int_equal(json_array_size(a), n);
    for (size_t i = 0; i < n; i++)
        assert_int_equal(json_integer_value(json_array_get(a, i)), want[i]);
}
static void expect_str(json_t *v, dg_rply_str s)
{
    assert_true(json_is_string(v));
    assert_int_equal(json_string_length(v), s.len);
    assert_memory_equal(json_string_value(v), s.s, s.len);
}

static void check_op(json_t *o, const dg_rply_op *op, const dg_rply_file *f)
{
    assert_string_equal(json_string_value(json_object_get(o, "type")), "op");
    assert_int_equal(ival(o, "offset"), op->offset);
    assert_int_equal(ival(o, "tick"), op->tick);
    assert_string_equal(json_string_value(json_object_get(o, "op")), dg_rply_op_name(op->code));
    const char *head = "type,offset,tick,op";
    char want[256];
    switch (op->code) {
    case DG_RPLY_OP_TICK:
    case DG_RPLY_OP_TICK_NEXT:
        expect_keys(o, head);
        break;
    case DG_RPLY_OP_SPAWN:
        expect_keys(o, "type,offset,tick,op,entity,descriptor,parent");
        assert_int_equal(ival(o, "entity"), op->entity);
        assert_int_equal(ival(o, "descriptor"), op->u.spawn.descriptor);
        assert_int_equal(ival(o, "parent"), op->u.spawn.parent);
        break;
    case DG_RPLY_OP_DESPAWN:
        expect_keys(o, "type,offset,tick,op,entity");
        assert_int_equal(ival(o, "entity"), op->entity);
        break;
    case DG_RPLY_OP_XFORM:
        snprintf(want, sizeof want, "%s,entity,mask%s%s%s", head, (op->mask & 1) ? ",pos" : "",
                 (op->mask & 2) ? ",rot" : "", (op->mask & 4) ? ",yaw" : "");
        expect_keys(o, want);
        assert_int_equal(ival(o, "mask"), op->mask);
        if (op->mask & 1)
            expect_f32s(json_object_get(o, "pos"), op->u.xform.pos, 3);
        if (op->mask & 2) {
            long r[3] = {op->u.xform.rot[0], op->u.xform.rot[1], op->u.xform.rot[2]};
            expect_ints(json_object_get(o, "rot"), r, 3);
        }
        if (op->mask & 4)
            assert_int_equal(ival(o, "yaw"), op->u.xform.yaw);
        break;
    case DG_RPLY_OP_XFORM_D:
        snprintf(want, sizeof want, "%s,entity,mask%s%s%s", head, (op->mask & 3) ? ",dpos" : "",
                 (op->mask & 4) ? ",dyaw" : "", (op->mask & 8) ? ",drot" : "");
        expect_keys(o, want);
        assert_int_equal(ival(o, "entity"), op->entity);
        if (op->mask & 3) {
            long d[3] = {op->u.xform_d.dpos[0], op->u.xform_d.dpos[1], op->u.xform_d.dpos[2]};
            expect_ints(json_object_get(o, "dpos"), d, 3);
        }
        if (op->mask & 4)
            assert_int_equal(ival(o, "dyaw"), op->u.xform_d.dyaw);
        if (op->mask & 8) {
            long d[3] = {op->u.xform_d.drot[0], op->u.xform_d.drot[1], op->u.xform_d.drot[2]};
            expect_ints(json_object_get(o, "drot"), d, 3);
        }
        break;
    case DG_RPLY_OP_PROP: {
        expect_keys(o, "type,offset,tick,op,entity,name,typeTag,value");
        assert_int_equal(ival(o, "name"), op->u.prop.name);
        const dg_rply_value *v = &op->u.prop.value;
        assert_int_equal(ival(o, "typeTag"), v->tag);
        json_t *jv = json_object_get(o, "value");
        switch (v->tag) {
        case 0: assert_true(json_is_boolean(jv) && json_boolean_value(jv) == v->u.b); break;
        case 1:
            if (isinf(v->u.num))
                assert_string_equal(json_string_value(jv), v->u.num > 0 ? "Infinity" : "-Infinity");
            else
                assert_true(json_number_value(jv) == v->u.num);
            break;
        case 2: case 5: assert_int_equal(json_integer_value(jv), v->u.str); break;
        case 3: {
            long c[3] = {v->u.rgb[0], v->u.rgb[1], v->u.rgb[2]};
            expect_ints(jv, c, 3);
            break;
        }
        case 4: expect_f32s(jv, v->u.vec, 3); break;
        }
        break;
    }
    case DG_RPLY_OP_ANIM_PLAY:
        expect_keys(o, "type,offset,tick,op,entity,anim,handle,fade,speed");
        assert_int_equal(ival(o, "anim"), op->u.anim.anim);
        assert_int_equal(ival(o, "handle"), op->u.anim.handle);
        assert_int_equal(ival(o, "fade"), op->u.anim.fade);
        assert_int_equal(ival(o, "speed"), op->u.anim.speed);
        break;
    case DG_RPLY_OP_ANIM_STOP:
        expect_keys(o, "type,offset,tick,op,entity,handle,fade");
        assert_int_equal(ival(o, "fade"), op->u.anim.fade);
        break;
    case DG_RPLY_OP_ANIM_SPEED:
        expect_keys(o, "type,offset,tick,op,entity,handle,speed");
        assert_int_equal(ival(o, "speed"), op->u.anim.speed);
        break;
    case DG_RPLY_OP_EVENT:
        expect_keys(o, "type,offset,tick,op,name,payload");
        assert_int_equal(ival(o, "name"), op->u.event.name);
        assert_int_equal(ival(o, "payload"), op->u.event.payload);
        break;
    case DG_RPLY_OP_CUSTOM: {
        expect_keys(o, "type,offset,tick,op,channel,data");
        assert_int_equal(ival(o, "channel"), op->u.custom.channel);
        char hex[2 * 65536 + 1];
        for (uint32_t i = 0; i < op->u.custom.len; i++)
            snprintf(hex + 2 * i, 3, "%02x", op->u.custom.data[i]);
        hex[2 * op->u.custom.len] = '\0';
        assert_string_equal(json_string_value(json_object_get(o, "data")), hex);
        break;
    }
    case DG_RPLY_OP_SNAPSHOT:
        expect_keys(o, "type,offset,tick,op,entity,byteLen,snapshot");
        assert_int_equal(ival(o, "byteLen"), op->u.snapshot.len);
        break;
    }
    (void)f;
}

static void check_snapshot_json(json_t *js)
{
    sample_snapshot x;
    sample_snapshot_init(&x);
    const dg_rply_snapshot *s = &x.s;
    expect_keys(js, "version,isModel,name,sourceKey,rootPath,unionKeys,meshIds,rig,parts,joints");
    assert_int_equal(ival(js, "version"), 10);
    assert_int_equal(ival(js, "isModel"), 1);
    expect_str(json_object_get(js, "name"), s->name);
    expect_str(json_object_get(js, "sourceKey"), s->source_key);
    expect_str(json_object_get(js, "rootPath"), s->root_path);
    json_t *uk = json_object_get(js, "unionKeys");
    assert_int_equal(json_array_size(uk), 2);
    expect_str(json_array_get(uk, 0), s->union_keys[0]);
    expect_str(json_array_get(json_object_get(js, "meshIds"), 0), s->mesh_ids[0]);
    json_t *rig = json_object_get(js, "rig");
    expect_keys(rig, "hasHumanoid,rigType,shirt,pants,shirtGraphic,hasBodyColors,bodyColors,characterMeshes");
    json_t *bc = json_object_get(rig, "bodyColors");
    assert_int_equal(json_array_size(bc), 6);
    assert_int_equal(json_integer_value(json_array_get(json_array_get(bc, 5), 2)), s->rig.body_colors[5][2]);
    json_t *cm = json_array_get(json_object_get(rig, "characterMeshes"), 0);
    expect_keys(cm, "bodyPart,meshId,baseTextureId,overlayTextureId");
    assert_true(json_number_value(json_object_get(cm, "meshId")) == s->rig.meshes[0].mesh_id);
    assert_true(json_number_value(json_object_get(cm, "overlayTextureId")) == 1.5);
    json_t *parts = json_object_get(js, "parts");
    assert_int_equal(json_array_size(parts), 6);
    const char *base = "kind,name,parentPath,offset,rotation,size,color,material,transparency,"
                       "reflectance,shape,surfaces";
    for (size_t i = 0; i < 6; i++) {
        json_t *p = json_array_get(parts, i);
        const dg_rply_part *q = &s->parts[i];
        char want[512];
        snprintf(want, sizeof want, "%s%s%s,specialMesh,surfaceAppearance,decals,effects", base,
                 q->kind == 5 ? ",unionKeyIndex" : "", q->kind == 1 ? ",meshId,textureId,meshSize" : "");
        expect_keys(p, want);
        assert_int_equal(ival(p, "kind"), q->kind);
        expect_str(json_object_get(p, "name"), q->name);
        expect_str(json_object_get(p, "parentPath"), q->parent_path);
        expect_f32s(json_object_get(p, "offset"), q->offset, 3);
        long rot[3] = {q->rotation[0], q->rotation[1], q->rotation[2]};
        expect_ints(json_object_get(p, "rotation"), rot, 3);
        expect_f32s(json_object_get(p, "size"), q->size, 3);
        assert_int_equal(ival(p, "material"), q->material);
        assert_int_equal(ival(p, "transparency"), q->transparency);
        assert_int_equal(ival(p, "reflectance"), q->reflectance);
        assert_int_equal(ival(p, "shape"), q->shape);
        long surf[6];
        for (int k = 0; k < 6; k++)
            surf[k] = q->surfaces[k];
        expect_ints(json_object_get(p, "surfaces"), surf, 6);
        assert_int_equal(json_is_null(json_object_get(p, "specialMesh")), !q->has_special_mesh);
        assert_int_equal(json_is_null(json_object_get(p, "surfaceAppearance")), !q->has_surface_appearance);
    }
    assert_int_equal(ival(json_array_get(parts, 5), "unionKeyIndex"), 1);
    expect_f32s(json_object_get(json_array_get(parts, 1), "meshSize"), s->parts[1].mesh_size, 3);
    json_t *sm = json_object_get(json_array_get(parts, 2), "specialMesh");
    expect_keys(sm, "meshType,meshId,textureId,scale,offset");
    expect_f32s(json_object_get(sm, "offset"), s->parts[2].special_mesh.offset, 3);
    json_t *sa = json_object_get(json_array_get(parts, 3), "surfaceAppearance");
    expect_keys(sa, "colorMap,normalMap,metalnessMap,roughnessMap,alphaMode");
    expect_str(json_object_get(sa, "roughnessMap"), s->parts[3].surface_appearance.roughness_map);
    json_t *decals = json_object_get(json_array_get(parts, 0), "decals");
    expect_keys(json_array_get(decals, 0), "kind,face,textureId,color,transparency");
    expect_keys(json_array_get(decals, 1), "kind,face,textureId,color,transparency,studsPerTile");
    expect_f32s(json_object_get(json_array_get(decals, 1), "studsPerTile"), s->parts[0].decals[1].studs_per_tile, 2);
    json_t *effects = json_object_get(json_array_get(parts, 0), "effects");
    assert_int_equal(json_array_size(effects), 11);
    for (size_t c = 0; c < 11; c++) {
        json_t *e = json_array_get(effects, c);
        expect_keys(e, "class,parentIndex,name,props");
        assert_int_equal(ival(e, "class"), c + 1);
        json_t *pr = json_array_get(json_object_get(e, "props"), 0);
        expect_keys(pr, "index,tag,value");
        assert_int_equal(ival(pr, "tag"), c);
        json_t *v = json_object_get(pr, "value");
        const dg_rply_effect_prop *xp = &x.props[c];
        switch (c) {
        case 0: assert_true(json_is_true(v)); break;
        case 1: expect_f32(v, xp->f[0]); break;
        case 2: case 9: case 10: expect_str(v, xp->s); break;
        case 3: assert_int_equal(json_integer_value(json_array_get(v, 0)), 9); break;
        case 4: expect_f32s(v, xp->f, 3); break;
        case 5: case 6: expect_f32s(v, xp->f, 2); break;
        case 7:
            expect_keys(json_array_get(v, 1), "time,value,envelope");
            expect_f32(json_object_get(json_array_get(v, 1), "envelope"), 0.1f);
            break;
        case 8:
            expect_keys(json_array_get(v, 1), "time,color");
            assert_int_equal(json_integer_value(json_array_get(json_object_get(json_array_get(v, 1), "color"), 2)), 255);
            break;
        }
    }
    json_t *joints = json_object_get(js, "joints");
    assert_int_equal(json_array_size(joints), 4);
    for (size_t j = 0; j < 4; j++) {
        json_t *jt = json_array_get(joints, j);
        expect_keys(jt, j < 2 ? "kind,name,holder,part0,part1,c0,c1"
                              : "kind,name,holder,part0,part1,attachment0,attachment1");
        assert_int_equal(ival(jt, "holder"), s->joints[j].holder);
        assert_int_equal(ival(jt, "part1"), s->joints[j].part1);
    }
    json_t *c1 = json_object_get(json_array_get(joints, 1), "c1");
    expect_keys(c1, "pos,rot");
    expect_f32s(json_object_get(c1, "pos"), s->joints[1].c1.pos, 3);
    expect_str(json_object_get(json_array_get(joints, 3), "attachment1"), RS("Att1"));
}

static void dump_matches_reader(void **state)
{
    (void)state;
    size_t len;
    uint8_t *buf = sample_file(&len, true);
    FILE *fp = tmpfile();
    dg_error err;
    dg_error_clear(&err);
    assert_int_equal(dg_rply_dump_json(buf, len, fp, false, 1234, &err), 0);
    lines L = parse_lines(fp);
    dg_rply_file f;
    assert_int_equal(dg_rply_file_open(&f, buf, len, 0, &err), DG_OK);
    const dg_rply_header *h = &f.hdr;

    json_t *hd = L.v[0];
    expect_keys(hd, "type,magic,version,tickRate,placeVersion,startUnix,tickCount,stringCount,"
                    "keyframeCount,opBytes");
    assert_string_equal(json_string_value(json_object_get(hd, "magic")), "RPLY");
    assert_int_equal(ival(hd, "version"), 3);
    assert_int_equal(ival(hd, "tickRate"), 15);
    assert_int_equal(ival(hd, "placeVersion"), 1234);
    assert_true(json_real_value(json_object_get(hd, "startUnix")) == 1764460800.25);
    assert_int_equal(ival(hd, "tickCount"), 8);
    assert_int_equal(ival(hd, "stringCount"), h->string_count);
    assert_int_equal(ival(hd, "keyframeCount"), 2);
    assert_int_equal(ival(hd, "opBytes"), h->op_bytes);
    size_t at = 1;
    for (uint32_t i = 0; i < h->string_count; i++, at++) {
        expect_keys(L.v[at], "type,id,value");
        assert_int_equal(ival(L.v[at], "id"), i);
        expect_str(json_object_get(L.v[at], "value"), f.strings[i]);
    }
    for (uint32_t i = 0; i < h->keyframe_count; i++, at++) {
        expect_keys(L.v[at], "type,tick,offset");
        dg_rply_keyframe k = dg_rply_file_keyframe(&f, i);
        assert_int_equal(ival(L.v[at], "tick"), k.tick);
        assert_int_equal(ival(L.v[at], "offset"), k.offset);
    }
    dg_rply_iter it;
    dg_rply_iter_init(&it, &f);
    dg_rply_op op;
    int seen[16] = {0};
    while (dg_rply_iter_next(&it, &op, &err) > 0) {
        assert_true(at < L.n);
        check_op(L.v[at], &op, &f);
        if (op.code == DG_RPLY_OP_SNAPSHOT)
            check_snapshot_json(json_object_get(L.v[at], "snapshot"));
        seen[op.code]++;
        at++;
    }
    assert_int_equal(at, L.n);
    for (int c = 0; c <= 14; c++)
        if (c != 12 && c != 13)
            assert_true(seen[c] > 0); /* every op kind was dumped and checked */
    /* the string the writer was given comes back escaped and intact */
    bool found = false;
    for (size_t i = 1; i <= h->string_count; i++)
        found |= strcmp(json_string_value(json_object_get(L.v[i], "value")), "Red \"Team\"\t") == 0;
    assert_true(found);
    free_lines(&L);
    dg_rply_file_close(&f);
    fclose(fp);
    free(buf);
}

static void dump_partial_and_refusals(void **state)
{
    (void)state;
    size_t len;
    uint8_t *buf = sample_file(&len, false);
    dg_rply_file f;
    dg_error err;
    assert_int_equal(dg_rply_file_open(&f, buf, len, 0, &err), DG_OK);
    /* find the ANIM_STOP and turn it into opcode 13 */
    dg_rply_iter it;
    dg_rply_iter_init(&it, &f);
    dg_rply_op op;
    size_t before = 0, at = 0;
    while (dg_rply_iter_next(&it, &op, &err) > 0) {
        if (op.code == DG_RPLY_OP_ANIM_STOP) {
            at = (size_t)f.ops_at + op.offset;
            break;
        }
        before++;
    }
    uint32_t nstr = f.hdr.string_count, nkf = f.hdr.keyframe_count;
    dg_rply_file_close(&f);
    assert_true(at > 0);
    buf[at] = 13;
    FILE *fp = tmpfile();
    dg_error_clear(&err);
    assert_int_equal(dg_rply_dump_json(buf, len, fp, false, 0, &err), DG_E_MALFORMED);
    assert_int_equal(ftell(fp), 0);
    assert_int_equal(err.offset, at);
    dg_error_clear(&err);
    assert_int_equal(dg_rply_dump_json(buf, len, fp, true, 0, &err), DG_E_MALFORMED);
    lines L = parse_lines(fp);
    assert_int_equal(L.n, 1 + nstr + nkf + before);
    free_lines(&L);
    fclose(fp);
    /* a stream cut short: the complete ops before the cut are printed with --partial */
    buf[at] = DG_RPLY_OP_ANIM_STOP;
    fp = tmpfile();
    dg_error_clear(&err);
    assert_int_equal(dg_rply_dump_json(buf, at + 2, fp, false, 0, &err), DG_E_TRUNCATED);
    assert_int_equal(ftell(fp), 0);
    dg_error_clear(&err);
    assert_int_equal(dg_rply_dump_json(buf, at + 2, fp, true, 0, &err), DG_E_TRUNCATED);
    assert_non_null(strstr(err.msg, "opBytes"));
    L = parse_lines(fp);
    assert_int_equal(L.n, 1 + nstr + nkf + before);
    free_lines(&L);
    fclose(fp);
    /* a placeVersion mismatch prints nothing, even with --partial */
    buf[at] = DG_RPLY_OP_ANIM_STOP;
    fp = tmpfile();
    dg_error_clear(&err);
    assert_int_equal(dg_rply_dump_json(buf, len, fp, true, 999, &err), DG_E_VERSION);
    assert_int_equal(ftell(fp), 0);
    assert_non_null(strstr(err.msg, "999"));
    /* info */
    rewind(fp);
    dg_error_clear(&err);
    assert_int_equal(dg_rply_print_info(buf, len, fp, &err), 0);
    long n = ftell(fp);
    rewind(fp);
    char *text = calloc(1, (size_t)n + 1);
    assert_int_equal(fread(text, 1, (size_t)n, fp), (size_t)n);
    assert_non_null(strstr(text, "tickRate:        15 Hz"));
    assert_non_null(strstr(text, "keyframes:       2 (ticks 0..4)"));
    assert_non_null(strstr(text, "ANIM_STOP      1"));
    assert_non_null(strstr(text, "duration:        0.533 s"));
    assert_non_null(strstr(text, "bytes per second"));
    free(text);
    fclose(fp);
    free(buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(dump_matches_reader),
        cmocka_unit_test(dump_partial_and_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
