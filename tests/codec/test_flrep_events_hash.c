/* tests/codec/test_flrep_events_hash.c — the events hash of a .flrep tick, derived twice: by the
 * library (reader, then dg_hash_events) and here from the pages alone — FORMAT-flrep.md §7's
 * payload of each kind put into a, b, c, d and text as STATE-HASH.md §3.1 maps them, serialized
 * as §3 says and hashed with XXH3 and the events seed. A field mapped to the wrong slot, a payload
 * tail or an unknown kind hashed, and the two differ. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <string.h>

#include "detgate/flrep.h"
#include "detgate/hash.h"
#include "flrep_handfile.h"

/* One event as the file stores it (§7) and as STATE-HASH.md §3.1 says it is hashed. */
typedef struct ev_case {
    uint8_t kind;
    uint8_t payload[64];
    uint16_t len;
    /* the documented mapping */
    uint32_t a, b;
    uint16_t c, d;
    const char *text;
} ev_case;

#define TICK 77u

static const ev_case cases[] = {
    /* kill: killerId -> a, victimId -> b, weaponTypeIndex -> c; a 2-byte tail, not hashed */
    {1, {0x11, 0, 0, 0, 0x22, 0, 0, 0, 0x33, 0, 0xEE, 0xEE}, 12, 0x11, 0x22, 0x33, 0, ""},
    /* spawn: entityId -> a, typeIndex -> c, factionIndex -> d */
    {2, {0x44, 0x01, 0, 0, 0x03, 0, 0x02, 0}, 8, 0x144, 0, 3, 2, ""},
    /* chat: senderId -> a, channel -> c, text -> text */
    {3, {0x55, 0, 0, 0, 0x07, 0, 2, 0, 'h', 'i'}, 10, 0x55, 0, 7, 0, "hi"},
    /* a newer minor's kind: skipped, neither counted nor hashed */
    {9, {1, 2, 3}, 3, 0, 0, 0, 0, NULL},
    /* admin action: actorId -> a, targetId -> b, action -> c, detail -> text */
    {4, {0x66, 0, 0, 0, 0x77, 0, 0, 0, 0x09, 0, 3, 0, 'b', 'a', 'n'}, 15, 0x66, 0x77, 9, 0, "ban"},
    /* alert-level change: factionIndex -> c, level -> d */
    {5, {0x02, 0, 0x04, 0}, 4, 0, 0, 2, 4, ""},
};
#define NCASES (sizeof cases / sizeof cases[0])

static void put(uint8_t *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* STATE-HASH.md §3: u64 count, then per event u8 kind, u64 tick, u32 a, u32 b, u16 c, u16 d,
 * u16 text_len, text. */
static uint64_t documented_events_hash(void)
{
    uint8_t buf[1024];
    size_t n = 8, count = 0;
    for (size_t i = 0; i < NCASES; i++) {
        const ev_case *e = &cases[i];
        if (e->kind > 5)
            continue;
        size_t tl = strlen(e->text);
        buf[n] = e->kind;
        put(buf + n + 1, TICK, 8);
        put(buf + n + 9, e->a, 4);
        put(buf + n + 13, e->b, 4);
        put(buf + n + 17, e->c, 2);
        put(buf + n + 19, e->d, 2);
        put(buf + n + 21, tl, 2);
        memcpy(buf + n + 23, e->text, tl);
        n += 23 + tl;
        count++;
    }
    put(buf, count, 8);
    return XXH3_64bits_withSeed(buf, n, UINT64_C(0x2e74766531486764));
}

static void test_events_hash_follows_the_documented_mapping(void **state)
{
    (void)state;
    hf_bytes f = {0}, content = {0};
    bits w = {{0}, 0};
    hf_full(&w, 0, 0, 0);
    hf_tick(&content, TICK, 1, 1, (uint16_t)NCASES, &w);
    for (size_t i = 0; i < NCASES; i++) {
        hf_u8(&content, cases[i].kind);
        hf_u64(&content, TICK);
        hf_u16(&content, cases[i].len);
        hf_raw(&content, cases[i].payload, cases[i].len);
    }
    hf_preamble(&f, 60, 15);
    hf_chunk c = hf_append_chunk(&f, &content, TICK, TICK, 1);
    hf_trailer(&f, &c, 1);
    dg_flrep_reader *r = NULL;
    dg_error err;
    dg_error_clear(&err);
    assert_int_equal(dg_flrep_reader_open_mem(&r, f.b, f.n, NULL, &err), DG_OK);
    dg_flrep_tick t;
    assert_int_equal(dg_flrep_reader_next(r, &t, &err), 1);
    assert_int_equal(t.event_count, NCASES - 1);
    uint64_t lib = dg_hash_events(t.events, t.event_count);
    uint64_t want = documented_events_hash();
    if (lib != want)
        fail_msg("events hash: the library gives %016llx, the documented mapping %016llx", (unsigned long long)lib,
                 (unsigned long long)want);
    dg_tick_hash th = dg_hash_tick(t.tick, t.ents, t.ent_count, t.events, t.event_count, NULL);
    assert_true(th.events == want);
    dg_flrep_reader_close(r);
    hf_free(&f);
    hf_free(&content);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_events_hash_follows_the_documented_mapping),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
