/* Tests for the bounds-checking msgpack walker (vocabulary.md, "Decoding
 * untrusted bytes"): counts checked against bytes left, depth counted
 * without recursion, no read past the input. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "vocab/mp.h"

static void test_scalars(void **state)
{
    (void)state;
    const uint8_t in[] = {0x7f, 0xe0, 0xd0, 0x80, 0xcf, 0x80, 0, 0, 0, 0, 0, 0, 0,
                          0xc3, 0xc0, 0xd3, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
    dls_mp_item it;
    assert_int_equal(dls_mp_read(in, sizeof in, 0, &it), 0);
    assert_int_equal(it.type, DLS_MP_UINT);
    assert_true(it.v.u == 127);
    assert_int_equal(dls_mp_read(in, sizeof in, 1, &it), 0);
    assert_int_equal(it.type, DLS_MP_INT);
    assert_true(it.v.i == -32);
    assert_int_equal(dls_mp_read(in, sizeof in, 2, &it), 0);
    assert_true(it.type == DLS_MP_INT && it.v.i == -128);
    assert_int_equal(dls_mp_read(in, sizeof in, 4, &it), 0);
    assert_true(it.type == DLS_MP_UINT && it.v.u == 0x8000000000000000ull);
    assert_int_equal(it.end, 13);
    assert_int_equal(dls_mp_read(in, sizeof in, 13, &it), 0);
    assert_true(it.type == DLS_MP_BOOL && it.v.b == 1);
    assert_int_equal(dls_mp_read(in, sizeof in, 14, &it), 0);
    assert_int_equal(it.type, DLS_MP_NIL);
    assert_int_equal(dls_mp_read(in, sizeof in, 15, &it), 0);
    assert_true(it.type == DLS_MP_INT && it.v.i == -1);
    /* int 8 holding a non-negative value is a UINT by value */
    const uint8_t pos[] = {0xd0, 0x05};
    assert_int_equal(dls_mp_read(pos, 2, 0, &it), 0);
    assert_true(it.type == DLS_MP_UINT && it.v.u == 5);
}

static void test_truncated_payloads(void **state)
{
    (void)state;
    dls_mp_item it;
    const uint8_t str[] = {0xa5, 'a', 'b'};
    assert_int_equal(dls_mp_read(str, sizeof str, 0, &it), DLS_ERR_MSGPACK);
    const uint8_t bin32[] = {0xc6, 0xff, 0xff, 0xff, 0xff, 0};
    assert_int_equal(dls_mp_read(bin32, sizeof bin32, 0, &it), DLS_ERR_MSGPACK);
    const uint8_t u64[] = {0xcf, 1, 2};
    assert_int_equal(dls_mp_read(u64, sizeof u64, 0, &it), DLS_ERR_MSGPACK);
    const uint8_t never = 0xc1;
    assert_int_equal(dls_mp_read(&never, 1, 0, &it), DLS_ERR_MSGPACK);
    assert_int_equal(dls_mp_read(str, sizeof str, 3, &it), DLS_ERR_MSGPACK);
}

/* 5 bytes announcing 2^32−1 elements must be refused without allocating. */
static void test_huge_counts(void **state)
{
    (void)state;
    dls_mp_item it;
    const uint8_t arr[] = {0xdd, 0xff, 0xff, 0xff, 0xff};
    assert_int_equal(dls_mp_read(arr, sizeof arr, 0, &it), DLS_ERR_MSGPACK);
    const uint8_t map[] = {0x82, 0x01, 0x02, 0x03}; /* 2 pairs need 4 bytes */
    assert_int_equal(dls_mp_read(map, sizeof map, 0, &it), DLS_ERR_MSGPACK);
    const uint8_t ok[] = {0x81, 0x01, 0x02};
    assert_int_equal(dls_mp_read(ok, sizeof ok, 0, &it), 0);
    assert_int_equal(it.len, 1);
}

static void test_skip_depth(void **state)
{
    (void)state;
    uint8_t buf[80];
    size_t end;
    unsigned depth;
    /* n nested empty-terminated arrays: 0x91 ... 0x90 */
    for (unsigned n = 1; n <= 70; n++) {
        memset(buf, 0x91, n - 1);
        buf[n - 1] = 0x90;
        int rc = dls_mp_skip(buf, n, 0, DLS_MP_MAX_DEPTH, &end, &depth);
        if (n <= DLS_MP_MAX_DEPTH) {
            assert_int_equal(rc, 0);
            assert_int_equal(depth, n);
            assert_int_equal(end, n);
        } else {
            assert_int_equal(rc, DLS_ERR_DEPTH);
        }
    }
    memset(buf, 0x91, 8);
    buf[8] = 0x90;
    assert_int_equal(dls_mp_skip(buf, 9, 0, 8, &end, &depth), DLS_ERR_DEPTH);
    assert_int_equal(end, 8); /* on an error, *end is where it was met */
    assert_int_equal(dls_mp_skip(buf, 9, 0, 9, &end, &depth), 0);
    assert_int_equal(dls_mp_skip(buf, 8, 0, 9, &end, &depth), DLS_ERR_MSGPACK);
    assert_int_equal(end, 7); /* the header announcing more than is left */
    const uint8_t scalar[] = {0x05};
    assert_int_equal(dls_mp_skip(scalar, 1, 0, 1, &end, &depth), 0);
    assert_int_equal(depth, 0);
}

static void test_skip_map_and_truncation(void **state)
{
    (void)state;
    /* {"a": [1, {"b": nil}], "c": bin(2)} then a trailing byte */
    const uint8_t in[] = {0x82, 0xa1, 'a', 0x92, 0x01, 0x81, 0xa1, 'b', 0xc0,
                          0xa1, 'c', 0xc4, 0x02, 0xaa, 0xbb, 0x07};
    size_t end;
    unsigned depth;
    assert_int_equal(dls_mp_skip(in, sizeof in, 0, 8, &end, &depth), 0);
    assert_int_equal(end, sizeof in - 1);
    assert_int_equal(depth, 3);
    for (size_t n = 0; n < sizeof in - 1; n++)
        assert_int_equal(dls_mp_skip(in, n, 0, 8, &end, &depth), DLS_ERR_MSGPACK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_scalars),
        cmocka_unit_test(test_truncated_payloads),
        cmocka_unit_test(test_huge_counts),
        cmocka_unit_test(test_skip_depth),
        cmocka_unit_test(test_skip_map_and_truncation),
    };
    return cmocka_run_group_tests_name("mp", tests, NULL, NULL);
}
