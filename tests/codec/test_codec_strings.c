/* tests/codec/test_codec_strings.c — "UTF-8, no NUL" in both formats' strings means an embedded NUL
 * is refused (docs/FORMAT-flrep.md §1, docs/FORMAT-rply.md §1): by the .flrep reader (naming the
 * string and the NUL's position), by the .flrep writer before it writes a table string or an event
 * text, and by the RPLY writer's string table. It was accepted, and a C consumer of the callsign
 * would see only the part before the NUL. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "detgate/rply.h"
#include "flrep_handfile.h"
#include "flrep_testlib.h"

static void test_reader_refuses_a_nul_in_a_string(void **state)
{
    (void)state;
    hf_bytes f = {0};
    hf_preamble_named(&f, 60, 15, "Ice\0man", 7);
    hf_trailer(&f, NULL, 0);
    dg_flrep_reader *r = NULL;
    dg_error err;
    dg_error_clear(&err);
    assert_int_equal(dg_flrep_reader_open_mem(&r, f.b, f.n, NULL, &err), DG_E_UTF8);
    assert_null(r);
    assert_non_null(strstr(err.msg, "string callsign without NUL bytes"));
    assert_non_null(strstr(err.msg, "a NUL at byte 3"));
    assert_non_null(strstr(err.where, "0x0003"));
    hf_free(&f);
    hf_preamble_named(&f, 60, 15, "Iceman", 6);   /* the same file without the NUL opens */
    hf_trailer(&f, NULL, 0);
    assert_int_equal(dg_flrep_reader_open_mem(&r, f.b, f.n, NULL, &err), DG_OK);
    dg_flrep_reader_close(r);
    hf_free(&f);
}

static void test_flrep_writer_refuses_a_nul_it_would_write(void **state)
{
    (void)state;
    char path[256];
    tl_temp_path(path, sizeof path, ".flrep");
    dg_flrep_header h = tl_header(60, 15);
    dg_flrep_participant p[2];
    memcpy(p, h.participants, sizeof p);
    p[1].callsign = (dg_flrep_str){"Mav\0erick", 9};
    h.participants = p;
    dg_flrep_writer *w = NULL;
    dg_error err;
    dg_error_clear(&err);
    assert_int_equal(dg_flrep_writer_open(&w, path, &h, NULL, &err), DG_E_UTF8);
    assert_null(w);
    assert_non_null(strstr(err.msg, "entry 1: expected callsign as UTF-8 without NUL bytes, found a NUL"));
    p[1].callsign = (dg_flrep_str){"Mav\xC3", 4};   /* cut UTF-8: refused as such */
    dg_error_clear(&err);
    assert_int_equal(dg_flrep_writer_open(&w, path, &h, NULL, &err), DG_E_UTF8);
    if (!strstr(err.msg, "invalid UTF-8"))
        fail_msg("%s: %s", err.where, err.msg);
    /* an event text */
    h = tl_header(60, 15);
    dg_error_clear(&err);
    assert_int_equal(dg_flrep_writer_open(&w, path, &h, NULL, &err), DG_OK);
    dg_event chat = {.kind = DG_EV_CHAT, .tick = 0, .a = 1, .text = "a\0b", .text_len = 3};
    dg_status st = dg_flrep_writer_tick_q(w, 0, NULL, 0, &chat, 1, &err);
    if (st != DG_E_UTF8)
        fail_msg("expected DG_E_UTF8, found %d: %s", st, err.msg);
    dg_flrep_writer_abort(w);
    remove(path);
}

static void test_rply_writer_refuses_a_nul_in_its_string_table(void **state)
{
    (void)state;
    dg_error err;
    dg_error_clear(&err);
    dg_rply_writer_config cfg;
    dg_rply_writer_config_default(&cfg);
    dg_rply_writer *w = dg_rply_writer_new(&cfg, &err);
    assert_non_null(w);
    uint16_t id;
    assert_int_equal(dg_rply_writer_string(w, "ab", 2, &id, &err), DG_OK);
    assert_int_equal(dg_rply_writer_string(w, "a\0b", 3, &id, &err), DG_E_USAGE);
    assert_non_null(strstr(err.msg, "UTF-8"));
    dg_rply_writer_free(w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reader_refuses_a_nul_in_a_string),
        cmocka_unit_test(test_flrep_writer_refuses_a_nul_it_would_write),
        cmocka_unit_test(test_rply_writer_refuses_a_nul_in_its_string_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
