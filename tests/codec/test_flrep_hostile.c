/* tests/codec/test_flrep_hostile.c — the file comes from a stranger: every truncation, every single
 * bit flip, a newer major, a newer minor with appended fields and unknown sections, broken section
 * lists and an over-cap chunk. Never a crash (CI runs this under ASan+UBSan); a clean error, or
 * recovered playback of exactly the complete chunks, or (outside the checksummed bytes) a state
 * that still decodes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#include "flrep_testlib.h"

typedef tl_recording fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    tl_params p = {.seed = 31, .ticks = 40, .entities = 3, .churn = true, .events = true, .keyframe = 15};
    tl_record_mem(&p, f);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    tl_recording_free(*state);
    free(*state);
    return 0;
}

/* Plays everything; returns ticks played that matched the recording, or -1 on a clean error. */
static long play(dg_flrep_reader *r, const tl_session *s, bool *all_equal)
{
    dg_error err;
    dg_error_clear(&err);
    dg_flrep_tick t;
    long n = 0;
    int rc;
    *all_equal = true;
    while ((rc = dg_flrep_reader_next(r, &t, &err)) == 1) {
        if ((size_t)n >= s->count || t.tick != s->ticks[n].tick || t.ent_count != s->ticks[n].n ||
            (t.ent_count && memcmp(t.ents, s->ticks[n].ents, t.ent_count * sizeof *t.ents) != 0) ||
            t.event_count != s->ticks[n].nev)
            *all_equal = false;
        n++;
    }
    if (rc < 0) {
        assert_int_not_equal(err.code, DG_OK);
        assert_true(err.msg[0] != '\0');
        return -1;
    }
    return n;
}

static void test_truncation_at_every_offset(void **state)
{
    fixture *f = *state;
    assert_true(f->nchunks >= 3);
    for (size_t cut = 0; cut < f->len; cut++) {
        uint8_t *copy = malloc(cut ? cut : 1);
        memcpy(copy, f->buf, cut);
        dg_flrep_reader *r = NULL;
        dg_error err;
        dg_error_clear(&err);
        dg_status st = dg_flrep_reader_open_mem(&r, copy, cut, NULL, &err);
        if (cut < f->data_start) {
            assert_int_not_equal(st, DG_OK); /* header or sections cut: a clean error */
            assert_true(err.msg[0] != '\0');
            free(copy);
            continue;
        }
        assert_int_equal(st, DG_OK);
        const dg_flrep_file_info *info = dg_flrep_reader_info(r);
        assert_true(info->recovered);
        size_t complete = 0, ticks = 0;
        for (size_t k = 0; k < f->nchunks; k++)
            if (f->chunks[k].offset + 36 + f->chunks[k].compressed_size <= cut) {
                complete++;
                ticks += f->chunks[k].tick_count;
            }
        assert_int_equal(info->chunk_count, complete);
        bool eq;
        long played = play(r, &f->s, &eq);
        assert_int_equal(played, (long)ticks);
        assert_true(eq);
        dg_flrep_reader_close(r);
        free(copy);
    }
}

static void test_every_bit_flip(void **state)
{
    fixture *f = *state;
    uint8_t *copy = malloc(f->len);
    size_t errors = 0, recovered = 0, decoded_same = 0, decoded_header_change = 0;
    for (size_t bit = 0; bit < f->len * 8; bit++) {
        memcpy(copy, f->buf, f->len);
        copy[bit / 8] ^= (uint8_t)(1u << (bit % 8));
        dg_flrep_reader *r = NULL;
        dg_error err;
        dg_error_clear(&err);
        if (dg_flrep_reader_open_mem(&r, copy, f->len, NULL, &err) != DG_OK) {
            assert_true(err.msg[0] != '\0');
            errors++;
            continue;
        }
        bool eq;
        long played = play(r, &f->s, &eq);
        bool rec = dg_flrep_reader_info(r)->recovered;
        dg_flrep_reader_close(r);
        if (played < 0) {
            errors++;
        } else if (bit / 8 >= f->data_start) {
            /* chunks and trailer are covered by checks: a flip there is an error, a recovery of the
             * chunks that are intact, or lands in a spot (like the trailer's copy of the table offset
             * checked another way) that changes nothing — never a silently different state */
            assert_true(eq);
            if (rec)
                recovered++;
            else
                decoded_same++;
        } else {
            decoded_header_change++; /* header/section bytes carry no checksum: it may still decode */
        }
    }
    free(copy);
    assert_true(errors > 0);
    assert_true(recovered > 0);
    print_message("bit flips: %zu errors, %zu recovered, %zu unchanged, %zu header-only changes\n", errors, recovered,
                  decoded_same, decoded_header_change);
}

static void test_newer_major_refused_with_versions_and_engine(void **state)
{
    fixture *f = *state;
    uint8_t *copy = malloc(f->len);
    memcpy(copy, f->buf, f->len);
    copy[4] = 3; /* formatMajor = 3 */
    copy[6] = 5; /* formatMinor = 5 */
    dg_flrep_reader *r = NULL;
    dg_error err;
    dg_error_clear(&err);
    assert_int_equal(dg_flrep_reader_open_mem(&r, copy, f->len, NULL, &err), DG_E_VERSION);
    assert_null(r);
    assert_string_equal(err.msg,
                        "this replay was recorded by detgate-test 1.0 (format 3.5); this build reads format 1.x and 2.x");
    /* major 2 is read, by FORMAT-flrep.md §12: a 1.0 body under it lacks the entity schema */
    copy[4] = 2;
    dg_error_clear(&err);
    assert_int_equal(dg_flrep_reader_open_mem(&r, copy, f->len, NULL, &err), DG_E_MALFORMED);
    assert_null(r);
    assert_non_null(strstr(err.msg, "expected required section 0x0005 (entity schema) of a format 2.0 file"));
    copy[4] = 0;
    dg_error_clear(&err);
    assert_int_equal(dg_flrep_reader_open_mem(&r, copy, f->len, NULL, &err), DG_E_VERSION);
    assert_non_null(strstr(err.msg, "format 0.5"));
    free(copy);
}

/* ---- a newer minor, built by hand from FORMAT-flrep.md (an independent writer) ------------- */

static void put16(uint8_t **p, uint16_t v) { (*p)[0] = (uint8_t)v; (*p)[1] = (uint8_t)(v >> 8); *p += 2; }
static void put32(uint8_t **p, uint32_t v) { put16(p, (uint16_t)v); put16(p, (uint16_t)(v >> 16)); }
static void put64(uint8_t **p, uint64_t v) { put32(p, (uint32_t)v); put32(p, (uint32_t)(v >> 32)); }
static void putstr(uint8_t **p, const char *s) { size_t n = strlen(s); put16(p, (uint16_t)n); memcpy(*p, s, n); *p += n; }
static void putsec(uint8_t **p, uint16_t id, const uint8_t *payload, size_t n)
{
    put16(p, id);
    put32(p, (uint32_t)n);
    memcpy(*p, payload, n);
    *p += n;
}

/* Header 1.3 with appended fields, sections with tails, an unknown section, the camera track, then
 * the fixture's chunks and a trailer computed here. */
static size_t build_newer_minor(const fixture *f, uint8_t *out)
{
    uint8_t *p = out, tmp[512], *q;
    memcpy(p, "FLRP", 4);
    p += 4;
    put16(&p, 1);
    put16(&p, 3);
    putstr(&p, "detgate-test 1.0");
    q = tmp;
    put32(&q, 60);
    double radius = 6371000.0;
    uint64_t bits;
    memcpy(&bits, &radius, 8);
    put64(&q, bits);
    put64(&q, 1764460800);
    putstr(&q, "test-mission");
    put32(&q, 1);
    put32(&q, 15);
    put32(&q, 0xABCDEF01); /* a field from minor 3 */
    putstr(&q, "appended");
    put32(&p, (uint32_t)(q - tmp));
    memcpy(p, tmp, (size_t)(q - tmp));
    p += q - tmp;
    q = tmp; /* types, with a tail */
    put16(&q, 4);
    const char *ids[] = {"f16c", "aim120", "tank", "hangar"};
    const uint16_t idx[] = {0, 1, 2, 7};
    for (int i = 0; i < 4; i++) {
        put16(&q, idx[i]);
        putstr(&q, ids[i]);
        putstr(&q, ids[i]);
        *q++ = 1;
        *q++ = 0;
    }
    put32(&q, 0xDEADBEEF);
    putsec(&p, 0x0001, tmp, (size_t)(q - tmp));
    q = tmp; /* unknown section between known ones */
    putstr(&q, "from the future");
    putsec(&p, 0x0077, tmp, (size_t)(q - tmp));
    q = tmp; /* factions with a tail */
    put16(&q, 3);
    const uint16_t fidx[] = {0, 1, 5};
    for (int i = 0; i < 3; i++) {
        put16(&q, fidx[i]);
        putstr(&q, "f");
        putstr(&q, "F");
    }
    *q++ = 9;
    putsec(&p, 0x0002, tmp, (size_t)(q - tmp));
    q = tmp;
    put16(&q, 0);
    put16(&q, 0);
    put16(&q, 42); /* roster tail */
    putsec(&p, 0x0003, tmp, (size_t)(q - tmp));
    putsec(&p, 0x0004, (const uint8_t *)"\x01\x02\x03", 3); /* camera track: reserved, skipped */
    put16(&p, 0);
    put32(&p, 0);
    uint64_t ds = (uint64_t)(p - out);
    size_t body = f->chunks[f->nchunks - 1].offset + 36 + f->chunks[f->nchunks - 1].compressed_size - f->data_start;
    memcpy(p, f->buf + f->data_start, body);
    p += body;
    uint8_t *t = p;
    memcpy(p, "FLIX", 4);
    p += 4;
    put32(&p, (uint32_t)f->nchunks);
    uint64_t ticks = 0;
    for (size_t k = 0; k < f->nchunks; k++)
        ticks += f->chunks[k].tick_count;
    put64(&p, f->chunks[0].first_tick);
    put64(&p, f->chunks[f->nchunks - 1].last_tick);
    put64(&p, ticks);
    for (size_t k = 0; k < f->nchunks; k++) {
        put64(&p, f->chunks[k].first_tick);
        put64(&p, f->chunks[k].offset - f->data_start + ds);
    }
    put64(&p, XXH3_64bits(t, (size_t)(p - t)));
    put64(&p, (uint64_t)(t - out));
    return (size_t)(p - out);
}

static void test_newer_minor_with_appended_fields_and_unknown_section_is_read(void **state)
{
    fixture *f = *state;
    uint8_t *file = malloc(f->len + 4096);
    size_t n = build_newer_minor(f, file);
    dg_flrep_reader *r = NULL;
    dg_error err;
    dg_error_clear(&err);
    if (dg_flrep_reader_open_mem(&r, file, n, NULL, &err) != DG_OK)
        fail_msg("%s: %s", err.where, err.msg);
    const dg_flrep_header *h = dg_flrep_reader_header(r);
    assert_int_equal(h->minor, 3);
    assert_int_equal(h->keyframe_interval_ticks, 15);
    assert_int_equal(h->type_count, 4);
    assert_int_equal(h->types[3].index, 7);
    assert_false(dg_flrep_reader_info(r)->recovered);
    assert_int_equal(dg_flrep_reader_info(r)->section_count, 5);
    bool eq;
    assert_int_equal(play(r, &f->s, &eq), (long)f->s.count);
    assert_true(eq);
    dg_flrep_reader_close(r);
    free(file);
}

static void expect_open_error(const uint8_t *buf, size_t n, dg_status code, const char *needle)
{
    dg_flrep_reader *r = NULL;
    dg_error err;
    dg_error_clear(&err);
    dg_status st = dg_flrep_reader_open_mem(&r, buf, n, NULL, &err);
    if (st != code || !strstr(err.msg, needle))
        fail_msg("expected status %d with \"%s\", got %d: %s: %s", code, needle, st, err.where, err.msg);
    assert_null(r);
}

static void test_broken_section_lists(void **state)
{
    fixture *f = *state;
    uint8_t *file = malloc(f->len + 4096);
    size_t n = build_newer_minor(f, file);
    /* find the types section (first after the header body) and retag it as unknown: required missing */
    size_t at = 8 + 2 + strlen("detgate-test 1.0");
    uint32_t blen = (uint32_t)(file[at] | file[at + 1] << 8 | file[at + 2] << 16 | (uint32_t)file[at + 3] << 24);
    size_t sec = at + 4 + blen;
    assert_int_equal(file[sec], 1);
    file[sec] = 0x55;
    expect_open_error(file, n, DG_E_MALFORMED, "required section 0x0001");
    file[sec] = 0x01;
    uint32_t tlen = (uint32_t)(file[sec + 2] | file[sec + 3] << 8 | file[sec + 4] << 16 | (uint32_t)file[sec + 5] << 24);
    size_t unknown = sec + 6 + tlen;
    assert_int_equal(file[unknown], 0x77);
    file[unknown] = 0x04; /* a second camera track */
    expect_open_error(file, n, DG_E_MALFORMED, "at most one");
    file[unknown] = 0x77;
    file[sec + 2] ^= 0x80; /* section length beyond the file */
    file[sec + 5] = 0x7F;
    expect_open_error(file, n, DG_E_TRUNCATED, "byteLength");
    free(file);
}

static void test_chunk_over_cap_is_refused_before_allocation(void **state)
{
    fixture *f = *state;
    dg_flrep_reader_opts o = {.max_decompressed = 64};
    dg_flrep_reader *r = NULL;
    dg_error err;
    dg_error_clear(&err);
    assert_int_equal(dg_flrep_reader_open_mem(&r, f->buf, f->len, &o, &err), DG_E_LIMIT);
    assert_non_null(strstr(err.msg, "cap"));
}

/* require_trailer: a whole file opens as usual; a cut or corrupt trailer is the trailer's error,
 * not a recovery. */
static void test_require_trailer_refuses_instead_of_recovering(void **state)
{
    fixture *f = *state;
    dg_flrep_reader_opts o = {.require_trailer = true};
    dg_flrep_reader *r = NULL;
    dg_error err;
    dg_error_clear(&err);
    assert_int_equal(dg_flrep_reader_open_mem(&r, f->buf, f->len, &o, &err), DG_OK);
    assert_false(dg_flrep_reader_info(r)->recovered);
    assert_int_equal(dg_flrep_reader_info(r)->chunk_count, f->nchunks);
    dg_flrep_reader_close(r);
    r = NULL;
    assert_int_not_equal(dg_flrep_reader_open_mem(&r, f->buf, f->len - 1, &o, &err), DG_OK);
    assert_null(r);
    assert_string_equal(err.where, "trailer");
    uint8_t *copy = malloc(f->len);
    memcpy(copy, f->buf, f->len);
    copy[f->len - 20] ^= 0x01; /* inside the index table: indexCheck no longer matches */
    dg_error_clear(&err);
    assert_int_not_equal(dg_flrep_reader_open_mem(&r, copy, f->len, &o, &err), DG_OK);
    assert_null(r);
    assert_string_equal(err.where, "trailer");
    assert_int_equal(dg_flrep_reader_open_mem(&r, copy, f->len, NULL, &err), DG_OK); /* default: recovers */
    assert_true(dg_flrep_reader_info(r)->recovered);
    dg_flrep_reader_close(r);
    free(copy);
}

static void test_null_error_pointer_is_allowed(void **state)
{
    fixture *f = *state;
    dg_flrep_reader *r = NULL;
    assert_int_equal(dg_flrep_reader_open_mem(&r, f->buf, 7, NULL, NULL), DG_E_TRUNCATED);
    uint8_t *copy = malloc(f->len);
    memcpy(copy, f->buf, f->len);
    copy[f->chunks[1].offset + 36 + f->chunks[1].compressed_size - 1] ^= 0x10; /* chunk 1 checksum: fails in playback */
    assert_int_equal(dg_flrep_reader_open_mem(&r, copy, f->len, NULL, NULL), DG_OK);
    dg_flrep_tick t;
    int rc;
    while ((rc = dg_flrep_reader_next(r, &t, NULL)) == 1)
        ;
    assert_int_equal(rc, -1);
    assert_int_not_equal(dg_flrep_reader_validate(r, NULL), DG_OK);
    dg_flrep_reader_close(r);
    free(copy);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_truncation_at_every_offset),
        cmocka_unit_test(test_every_bit_flip),
        cmocka_unit_test(test_newer_major_refused_with_versions_and_engine),
        cmocka_unit_test(test_newer_minor_with_appended_fields_and_unknown_section_is_read),
        cmocka_unit_test(test_broken_section_lists),
        cmocka_unit_test(test_chunk_over_cap_is_refused_before_allocation),
        cmocka_unit_test(test_require_trailer_refuses_instead_of_recovering),
        cmocka_unit_test(test_null_error_pointer_is_allowed),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
