/* tests/base/test_base_grow.c — dg_grow, the one growth rule of detgate's arrays and buffers: the
 * capacity it reaches, what it keeps, and the sizes it refuses without touching the array. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cursor.h"

static void test_grows_by_doubling_from_16(void **state)
{
    (void)state;
    uint32_t *a = NULL;
    size_t cap = 0;
    assert_true(dg_grow((void **)&a, &cap, 1, sizeof *a));
    assert_int_equal(cap, 16);
    assert_true(dg_grow((void **)&a, &cap, 17, sizeof *a));
    assert_int_equal(cap, 32);
    assert_true(dg_grow((void **)&a, &cap, 1000, sizeof *a));
    assert_int_equal(cap, 1024);
    for (uint32_t i = 0; i < 1000; i++)
        a[i] = i * 7u;
    uint32_t *was = a;
    assert_true(dg_grow((void **)&a, &cap, 1024, sizeof *a)); /* fits: nothing moves */
    assert_ptr_equal(a, was);
    assert_int_equal(cap, 1024);
    assert_true(dg_grow((void **)&a, &cap, 5000, sizeof *a)); /* moved or not, the items are kept */
    assert_int_equal(cap, 8192);
    for (uint32_t i = 0; i < 1000; i++)
        assert_int_equal(a[i], i * 7u);
    free(a);
}

static void test_refuses_what_size_t_cannot_hold(void **state)
{
    (void)state;
    uint64_t *a = NULL;
    size_t cap = 0;
    assert_true(dg_grow((void **)&a, &cap, 3, sizeof *a));
    uint64_t *was = a;
    assert_false(dg_grow((void **)&a, &cap, SIZE_MAX / 8 + 1, sizeof *a)); /* the bytes overflow */
    assert_false(dg_grow((void **)&a, &cap, SIZE_MAX, 1));                 /* the doubling overflows */
    assert_ptr_equal(a, was);
    assert_int_equal(cap, 16);
    free(a);
}

static void test_buffer_grows_through_it(void **state)
{
    (void)state;
    dg_buf b;
    dg_buf_init(&b);
    for (unsigned i = 0; i < 3000; i++)
        dg_buf_u32(&b, i);
    assert_true(b.ok);
    assert_int_equal(b.len, 12000);
    assert_int_equal(b.cap, 16384);
    assert_int_equal(dg_le32(b.p + 4 * 2999), 2999);
    assert_false(dg_buf_reserve(&b, SIZE_MAX - 100)); /* refused: the buffer fails, sticky, as it was */
    assert_false(b.ok);
    assert_int_equal(b.len, 12000);
    dg_buf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_grows_by_doubling_from_16),
        cmocka_unit_test(test_refuses_what_size_t_cannot_hold),
        cmocka_unit_test(test_buffer_grows_through_it),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
