/* tests/reports/test_report_events.c — the event diff of a detailed tick and the error excerpt: events
 * aligned by index, only differing positions kept (the rest counted beyond the cap), texts copied and
 * cut on a character boundary with an embedded NUL kept visible, the first differing byte found; the
 * one-line wording every human format shares; and dg_escape_bytes / dg_error_format never letting a
 * control byte or ill-formed UTF-8 through. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "detgate/error.h"
#include "detgate/report.h"
#include "reports/report_internal.h"

static dg_report_tick *new_tick(dg_report **r, const dg_report_limits *l)
{
    dg_error err;
    dg_error_clear(&err);
    *r = dg_report_new("diff", "test", l, &err);
    assert_non_null(*r);
    dg_report_scenario *sc = dg_report_add_scenario(*r, "s", "flrep");
    dg_report_check *c = dg_report_add_check(sc, "diff", DG_REPORT_PASS);
    dg_report_tick *t = dg_report_add_tick(c, 10);
    assert_non_null(t);
    return t;
}

static dg_event ev(uint8_t kind, uint32_t a, uint32_t b, uint16_t c, uint16_t d, const char *text, uint16_t len)
{
    dg_event e = {kind, 10, a, b, c, d, text, len};
    return e;
}

static void test_equal_positions_are_skipped_and_differing_ones_kept(void **state)
{
    (void)state;
    dg_report *r;
    dg_report_tick *t = new_tick(&r, NULL);
    dg_event a[3] = {ev(DG_EV_SPAWN, 1, 0, 0, 0, NULL, 0), ev(DG_EV_KILL, 1, 2, 3, 0, NULL, 0),
                     ev(DG_EV_CHAT, 1, 0, 0, 0, "hello", 5)};
    dg_event b[2] = {a[0], ev(DG_EV_KILL, 1, 2, 4, 0, NULL, 0)};
    assert_int_equal(dg_report_tick_diff_events(t, a, 3, b, 2), 2);
    assert_true(t->events_differ);
    assert_int_equal(t->events_a, 3);
    assert_int_equal(t->events_b, 2);
    assert_int_equal(t->n_event_diffs, 2);
    const dg_report_event_diff *d = &t->event_diffs[0];
    assert_int_equal(d->index, 1);
    assert_true(d->in_a && d->in_b);
    assert_int_equal(d->a.c, 3);
    assert_int_equal(d->b.c, 4);
    assert_int_equal(d->text_diff_at, UINT32_MAX);
    d = &t->event_diffs[1];
    assert_int_equal(d->index, 2);
    assert_true(d->in_a && !d->in_b);
    assert_string_equal(d->a.text, "hello");

    dg_rsink s;
    dg_rep__sink_init(&s);
    dg_rep__event_diff_line(&s, &t->event_diffs[0], t, dg_rep__sink_puts);
    assert_string_equal(s.p, "event 1: kill: weapon (c) A 3, B 4");
    dg_rep__sink_truncate(&s, 0);
    dg_rep__event_diff_line(&s, &t->event_diffs[1], t, dg_rep__sink_puts);
    assert_string_equal(s.p, "event 2: A only: chat {sender (a) 1, channel (c) 0, text \"hello\" (5 bytes)} "
                             "(A has 3 events at this tick, B 2)");
    dg_rep__sink_free(&s);
    dg_report_free(r);
}

static void test_texts_one_byte_short_and_kinds_that_differ(void **state)
{
    (void)state;
    dg_report *r;
    dg_report_tick *t = new_tick(&r, NULL);
    dg_event a[2] = {ev(DG_EV_CHAT, 5, 0, 1, 0, "gg wp", 5), ev(DG_EV_ALERT, 0, 0, 1, 3, NULL, 0)};
    dg_event b[2] = {ev(DG_EV_CHAT, 5, 0, 1, 0, "gg w", 4), ev(DG_EV_ADMIN, 7, 9, 2, 0, "kick", 4)};
    assert_int_equal(dg_report_tick_diff_events(t, a, 2, b, 2), 2);
    assert_int_equal(t->event_diffs[0].text_diff_at, 4);
    dg_rsink s;
    dg_rep__sink_init(&s);
    dg_rep__event_diff_line(&s, &t->event_diffs[0], t, dg_rep__sink_puts);
    assert_string_equal(s.p, "event 0: chat: text A \"gg wp\" (5 bytes), B \"gg w\" (4 bytes), first difference at byte 4");
    dg_rep__sink_truncate(&s, 0);
    dg_rep__event_diff_line(&s, &t->event_diffs[1], t, dg_rep__sink_puts);
    assert_string_equal(s.p, "event 1: A alert {faction (c) 1, level (d) 3}, B admin {actor (a) 7, target (b) 9, "
                             "action (c) 2, text \"kick\" (4 bytes)}");
    dg_rep__sink_free(&s);
    dg_report_free(r);
}

static void test_long_text_is_cut_on_a_character_boundary_and_nul_stays_visible(void **state)
{
    (void)state;
    dg_report *r;
    dg_report_tick *t = new_tick(&r, NULL);
    char text[300];
    for (size_t i = 0; i < 100; i++)
        memcpy(text + 2 * i, "\xC3\xA9", 2); /* 100 x U+00E9, 200 bytes */
    text[0] = '\0';                           /* an embedded NUL first, then a lone continuation byte */
    dg_event a = ev(DG_EV_CHAT, 1, 0, 0, 0, text, 200), b = ev(DG_EV_CHAT, 1, 0, 0, 0, text, 199);
    assert_int_equal(dg_report_tick_diff_events(t, &a, 1, &b, 1), 1);
    const dg_report_event *e = &t->event_diffs[0].a;
    assert_int_equal(e->text_len, 200);
    assert_memory_equal(e->text, "\xEF\xBF\xBD", 3);
    size_t n = strlen(e->text);
    assert_true(n < DG_REPORT_EVENT_TEXT_CAP);
    assert_int_equal(n % 2, 0); /* 3 + 1 lone byte + whole two-byte characters: never half of one */
    assert_int_equal(t->event_diffs[0].text_diff_at, 199);
    dg_report_free(r);
}

static void test_positions_beyond_the_cap_are_counted(void **state)
{
    (void)state;
    dg_report_limits l = {0};
    l.events_per_tick = 2;
    dg_report *r;
    dg_report_tick *t = new_tick(&r, &l);
    dg_event a[5], b[5];
    for (int i = 0; i < 5; i++) {
        a[i] = ev(DG_EV_KILL, 1, 2, (uint16_t)i, 0, NULL, 0);
        b[i] = ev(DG_EV_KILL, 1, 2, (uint16_t)(i + 1), 0, NULL, 0);
    }
    assert_int_equal(dg_report_tick_diff_events(t, a, 5, b, 5), 5);
    assert_int_equal(t->n_event_diffs, 2);
    assert_int_equal(t->event_diffs_cut, 3);
    dg_report_check *c = r->scenarios[0]->checks[0];
    assert_int_equal(dg_report_check_add_divergent(c, 10, 0), DG_OK);
    dg_rsink s;
    dg_rep__sink_init(&s);
    dg_rep__check_headline(&s, c, dg_rep__sink_puts);
    assert_string_equal(s.p, "first divergent tick 10: 5 events differ");
    dg_rep__sink_free(&s);
    dg_report_free(r);
}

static void test_event_field_names_follow_the_kinds(void **state)
{
    (void)state;
    assert_string_equal(dg_report_event_field_name(DG_EV_KILL, 'c'), "weapon");
    assert_string_equal(dg_report_event_field_name(DG_EV_SPAWN, 'd'), "faction");
    assert_null(dg_report_event_field_name(DG_EV_CHAT, 'b'));
    assert_null(dg_report_event_field_name(9, 'a'));
    assert_null(dg_report_event_kind_name(0));
    assert_string_equal(dg_report_event_kind_name(DG_EV_ALERT), "alert");
}

/* Every byte value once: what comes out is well-formed UTF-8 with no control character. */
static void assert_clean(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        assert_true(*p >= 0x20 && *p != 0x7F);
        if (*p < 0x80) {
            p++;
            continue;
        }
        int n = (*p & 0xE0) == 0xC0 ? 2 : (*p & 0xF0) == 0xE0 ? 3 : 4;
        assert_true(*p >= 0xC2 && *p <= 0xF4);
        assert_false(*p == 0xC2 && p[1] < 0xA0); /* no C1 control */
        for (int k = 1; k < n; k++)
            assert_int_equal(p[k] & 0xC0, 0x80);
        p += n;
    }
}

static void test_escape_bytes_and_error_format_let_no_raw_byte_through(void **state)
{
    (void)state;
    unsigned char all[256];
    for (int i = 0; i < 256; i++)
        all[i] = (unsigned char)i;
    char out[64];
    size_t n = dg_escape_bytes(out, sizeof out, all, sizeof all);
    assert_int_equal(n, strlen(out));
    assert_true(n < sizeof out);
    assert_clean(out);
    assert_memory_equal(out, "\\x00\\x01", 8);
    assert_string_equal(out + n - 3, "\xE2\x80\xA6"); /* cut, and says so */
    assert_int_equal(dg_escape_bytes(out, sizeof out, "a\"b\\c \xC3\xA9", 8), 10);
    assert_string_equal(out, "a\\\"b\\\\c \xC3\xA9");

    dg_error err;
    dg_error_clear(&err);
    char msg[300];
    memcpy(msg, "found \"", 7);
    memcpy(msg + 7, all + 1, 255); /* every byte but NUL, raw, as a careless message would */
    msg[262] = '\0';
    dg_error_set(&err, DG_E_SYNTAX, 12, "r.bin", "%s", msg);
    char line[400];
    dg_error_format(&err, line, sizeof line);
    assert_clean(line);
    static const char want[] = "r.bin at byte 12: syntax error: found \"\\x01\\x02";
    assert_memory_equal(line, want, sizeof want - 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_equal_positions_are_skipped_and_differing_ones_kept),
        cmocka_unit_test(test_texts_one_byte_short_and_kinds_that_differ),
        cmocka_unit_test(test_long_text_is_cut_on_a_character_boundary_and_nul_stays_visible),
        cmocka_unit_test(test_positions_beyond_the_cap_are_counted),
        cmocka_unit_test(test_event_field_names_follow_the_kinds),
        cmocka_unit_test(test_escape_bytes_and_error_format_let_no_raw_byte_through),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
