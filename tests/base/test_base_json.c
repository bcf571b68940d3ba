/* tests/base/test_base_json.c — the one UTF-8 decoder (code points, ill-formed input) and the one
 * JSON string escaper every JSON writer uses: each escape class, and U+FFFD per bad byte. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cursor.h"
#include "json.h"

static void test_decode_gives_code_points(void **state)
{
    (void)state;
    uint32_t cp = 0;
    assert_int_equal(dg_utf8_decode((const uint8_t *)"A", 1, &cp), 1);
    assert_int_equal(cp, 'A');
    assert_int_equal(dg_utf8_decode((const uint8_t *)"\xC3\xA9", 2, &cp), 2);
    assert_int_equal(cp, 0xE9);
    assert_int_equal(dg_utf8_decode((const uint8_t *)"\xE2\x80\xA8", 3, &cp), 3);
    assert_int_equal(cp, 0x2028);
    assert_int_equal(dg_utf8_decode((const uint8_t *)"\xF0\x9F\x98\x80", 4, &cp), 4);
    assert_int_equal(cp, 0x1F600);
}

static void test_decode_refuses_ill_formed(void **state)
{
    (void)state;
    static const char *const bad[] = {"\x80", "\xC0\xAF", "\xC3", "\xED\xA0\x80", "\xF4\x90\x80\x80",
                                      "\xF8\x88\x80\x80\x80", "\xE2\x28\xA1"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        uint32_t cp = 77;
        assert_int_equal(dg_utf8_decode((const uint8_t *)bad[i], strlen(bad[i]), &cp), 0);
        assert_int_equal(cp, 77);
        assert_int_equal(dg_utf8_char((const uint8_t *)bad[i], strlen(bad[i])), 0);
    }
    uint32_t cp;
    assert_int_equal(dg_utf8_decode((const uint8_t *)"", 0, &cp), 0);
}

static void test_escape_classes(void **state)
{
    (void)state;
    char b[8];
    assert_string_equal(dg_json_escape_cp('"', b), "\\\"");
    assert_string_equal(dg_json_escape_cp('\\', b), "\\\\");
    assert_string_equal(dg_json_escape_cp('\n', b), "\\n");
    assert_string_equal(dg_json_escape_cp('\t', b), "\\t");
    assert_string_equal(dg_json_escape_cp('\b', b), "\\b");
    assert_string_equal(dg_json_escape_cp('\f', b), "\\f");
    assert_string_equal(dg_json_escape_cp('\r', b), "\\r");
    assert_string_equal(dg_json_escape_cp(0x01, b), "\\u0001");
    assert_string_equal(dg_json_escape_cp(0x1F, b), "\\u001f");
    assert_string_equal(dg_json_escape_cp(0x7F, b), "\\u007f");
    assert_string_equal(dg_json_escape_cp(0x2028, b), "\\u2028");
    assert_string_equal(dg_json_escape_cp(0x2029, b), "\\u2029");
    assert_null(dg_json_escape_cp('a', b));
    assert_null(dg_json_escape_cp(0xE9, b));
    assert_null(dg_json_escape_cp(0x1F600, b));
}

static char *fput(const char *s, size_t n)
{
    char *out = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&out, &len);
    assert_non_null(f);
    dg_json_fput_str(f, s, n);
    fclose(f);
    return out;
}

static void test_fput_str_quotes_escapes_and_replaces(void **state)
{
    (void)state;
    char *o = fput("a\"b\\c\nd\x01\xC3\xA9\xE2\x80\xA9", 13);
    assert_string_equal(o, "\"a\\\"b\\\\c\\nd\\u0001\xC3\xA9\\u2029\"");
    free(o);
    /* one U+FFFD per ill-formed byte; the good characters around them survive */
    o = fput("x\xFF\xC3y", 4);
    assert_string_equal(o, "\"x\xEF\xBF\xBD\xEF\xBF\xBDy\"");
    free(o);
    /* an embedded NUL is a control character like any other */
    o = fput("a\0b", 3);
    assert_string_equal(o, "\"a\\u0000b\"");
    free(o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_decode_gives_code_points),
        cmocka_unit_test(test_decode_refuses_ill_formed),
        cmocka_unit_test(test_escape_classes),
        cmocka_unit_test(test_fput_str_quotes_escapes_and_replaces),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
