/* fuzz/flrep_schema.c — target: the entity schema section of format 2.0 (docs/FORMAT-flrep.md
 * §12.2) through dg_flrep__parse_schema. Whatever it accepts must pass dg_schema_check, carry its
 * widths, and survive encode then parse unchanged. */
#include "fuzz_common.h"

#include <string.h>

static void assert_same(const flrep_schema2 *a, const flrep_schema2 *b)
{
    FUZZ_ASSERT(a->s.std_mask == b->s.std_mask && a->s.field_count == b->s.field_count && a->pred_num == b->pred_num &&
                    a->pred_den == b->pred_den,
                "%s", "the schema changed through encode and parse");
    FUZZ_ASSERT(memcmp(&a->s.pos_quantum_m, &b->s.pos_quantum_m, 8) == 0 &&
                    memcmp(&a->s.vel_quantum_mps, &b->s.vel_quantum_mps, 8) == 0,
                "%s", "a quantum changed through encode and parse");
    for (size_t f = 0; f < a->s.field_count; f++) {
        const dg_field_def *x = &a->fields[f], *y = &b->fields[f];
        FUZZ_ASSERT(strcmp(x->name, y->name) == 0 && strcmp(x->unit, y->unit) == 0 && x->type == y->type &&
                        x->bits == y->bits && x->enum_count == y->enum_count && a->width[f] == b->width[f],
                    "field %zu changed through encode and parse", f);
        for (size_t k = 0; k < x->enum_count; k++)
            FUZZ_ASSERT(strcmp(x->enum_names[k], y->enum_names[k]) == 0, "field %zu enum name %zu changed", f, k);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    flrep_schema2 s;
    dg_error err;
    dg_error_clear(&err);
    dg_status st = dg_flrep__parse_schema(data, size, 0, &s, &err);
    if (st != DG_OK) {
        dg_fuzz_check_error(st, &err, size);
        return 0;
    }
    FUZZ_ASSERT(dg_schema_check(&s.s, NULL) == DG_OK, "%s", "a parsed schema fails dg_schema_check");
    FUZZ_ASSERT(s.s.field_count <= DG_SCHEMA_MAX_FIELDS && s.pred_den >= 1, "%s", "schema bounds");
    for (size_t f = 0; f < s.s.field_count; f++)
        FUZZ_ASSERT(s.width[f] >= 1 && s.width[f] <= 64, "field %zu width %u", f, s.width[f]);
    dg_buf b;
    dg_buf_init(&b);
    dg_flrep__schema2_encode(&b, &s);
    FUZZ_ASSERT(b.ok, "%s", "encode failed");
    flrep_schema2 t;
    st = dg_flrep__parse_schema(b.p, b.len, 0, &t, &err);
    FUZZ_ASSERT(st == DG_OK, "the encoded schema does not parse: %s", err.msg);
    assert_same(&s, &t);
    dg_flrep__schema2_free(&t);
    dg_flrep__schema2_free(&s);
    dg_buf_free(&b);
    return 0;
}
