/* tests/harness/test_shard_plan.c — the shard planner (harness/shard_plan.c): the longest-first rule
 * on hand-worked inputs, its balance on 50 synthetic scenario costs, its guarantee against the best
 * split found by brute force, and the corpus id's byte layout (docs/REPORT-SCHEMA.md). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "harness/shard_plan.h"

/* The rule worked by hand: sorted 5a 5b 4c 3d 3e 3f; a->0 (tie: lowest), b->1, c->0 (5,5: lowest),
 * d->1 (9,5), e->1 (9,8), f->0 (9,11): loads 12 and 11. */
static void test_rule_by_hand(void **state)
{
    (void)state;
    const uint64_t cost[6] = {5, 5, 4, 3, 3, 3};
    uint32_t shard_of[6];
    uint64_t load[2];
    assert_true(dg_harness__shard_plan(cost, 6, 2, shard_of, load));
    const uint32_t want[6] = {0, 1, 0, 1, 1, 0};
    assert_memory_equal(shard_of, want, sizeof want);
    assert_int_equal(load[0], 12);
    assert_int_equal(load[1], 11);
}

/* Equal costs go in name order: b (index 1) before c (index 2), and a, last, to the lowest of two
 * equal shards. */
static void test_ties_by_name_then_lowest_shard(void **state)
{
    (void)state;
    const uint64_t cost[3] = {1, 2, 2};
    uint32_t shard_of[3];
    assert_true(dg_harness__shard_plan(cost, 3, 2, shard_of, NULL));
    assert_int_equal(shard_of[0], 0);
    assert_int_equal(shard_of[1], 0);
    assert_int_equal(shard_of[2], 1);
}

/* 50 costs shaped like a real corpus: mostly short scenarios, a few long ones (deterministic LCG). */
static void synthetic_costs(uint64_t *cost, size_t n)
{
    uint64_t x = 0x9e3779b97f4a7c15u;
    for (size_t i = 0; i < n; i++) {
        x = x * 6364136223846793005u + 1442695040888963407u;
        uint64_t r = x >> 33;
        cost[i] = 1000 + r % 50000 + (i % 9 == 0 ? r % 400000 : 0);
    }
}

static void test_fifty_balanced_and_deterministic(void **state)
{
    (void)state;
    enum { N = 50 };
    uint64_t cost[N], total = 0, largest = 0;
    synthetic_costs(cost, N);
    for (size_t i = 0; i < N; i++) {
        total += cost[i];
        largest = cost[i] > largest ? cost[i] : largest;
    }
    for (uint32_t shards = 1; shards <= 10; shards++) {
        uint32_t a[N], b[N];
        uint64_t load[10], load2[10], sum = 0, longest = 0;
        uint64_t copy[N];
        memcpy(copy, cost, sizeof cost);
        assert_true(dg_harness__shard_plan(cost, N, shards, a, load));
        assert_true(dg_harness__shard_plan(copy, N, shards, b, load2));
        assert_memory_equal(a, b, sizeof a); /* the same corpus gives the same plan */
        uint64_t recount[10] = {0};
        for (size_t i = 0; i < N; i++) {
            assert_true(a[i] < shards);
            recount[a[i]] += cost[i];
        }
        for (uint32_t s = 0; s < shards; s++) {
            assert_int_equal(recount[s], load[s]);
            sum += load[s];
            longest = load[s] > longest ? load[s] : longest;
        }
        assert_int_equal(sum, total);
        double ideal = (double)total / shards, bound = ideal > (double)largest ? ideal : (double)largest;
        if ((double)longest > 1.3 * bound)
            fail_msg("%u shards: longest %llu > 1.3 x %.0f", shards, (unsigned long long)longest, bound);
    }
}

/* Best split of n <= 10 costs over m shards, by trying every assignment. */
static uint64_t best_makespan(const uint64_t *cost, size_t n, uint32_t m)
{
    uint64_t best = UINT64_MAX, combos = 1;
    for (size_t i = 0; i < n; i++)
        combos *= m;
    for (uint64_t c = 0; c < combos; c++) {
        uint64_t load[4] = {0}, v = c, worst = 0;
        for (size_t i = 0; i < n; i++, v /= m)
            load[v % m] += cost[i];
        for (uint32_t s = 0; s < m; s++)
            worst = load[s] > worst ? load[s] : worst;
        best = worst < best ? worst : best;
    }
    return best;
}

/* Longest first is never worse than (4/3 - 1/(3m)) x the best split (Graham 1969); an assignment
 * to the most loaded shard, or in input order, breaks it on these inputs. */
static void test_lpt_guarantee_against_brute_force(void **state)
{
    (void)state;
    const uint64_t classic[7] = {3, 3, 2, 2, 2, 3, 2}; /* 2m+1 jobs, m = 3: LPT 7, best 6 */
    uint64_t cost[10];
    for (int round = 0; round < 6; round++) {
        size_t n = round == 0 ? 7 : 10;
        uint32_t m = round == 0 ? 3 : (uint32_t)(2 + round % 3);
        if (round == 0)
            memcpy(cost, classic, sizeof classic);
        else
            for (size_t i = 0; i < n; i++)
                cost[i] = 1 + (uint64_t)((i * 7919u + (size_t)round * 104729u) % 97u);
        uint32_t shard_of[10];
        uint64_t load[4], longest = 0;
        assert_true(dg_harness__shard_plan(cost, n, m, shard_of, load));
        for (uint32_t s = 0; s < m; s++)
            longest = load[s] > longest ? load[s] : longest;
        uint64_t best = best_makespan(cost, n, m);
        /* longest <= (4/3 - 1/(3m)) best, in integers: 3m longest <= (4m - 1) best */
        assert_true(3u * m * longest <= (4u * m - 1u) * best);
        if (round == 0)
            assert_int_equal(longest, 7);
    }
}

/* The id's bytes as docs/REPORT-SCHEMA.md lays them out, hashed here in one piece. */
static void test_corpus_id_layout(void **state)
{
    (void)state;
    const char *names[2] = {"alpha", "b"};
    const uint64_t cost[2] = {0x0102030405060708u, 9};
    unsigned char buf[64];
    size_t k = 0;
    memcpy(buf + k, "rply", 5), k += 5; /* token and its 0 byte */
    memcpy(buf + k, "alpha", 6), k += 6;
    const unsigned char le1[8] = {8, 7, 6, 5, 4, 3, 2, 1};
    memcpy(buf + k, le1, 8), k += 8;
    memcpy(buf + k, "b", 2), k += 2;
    const unsigned char le2[8] = {9, 0, 0, 0, 0, 0, 0, 0};
    memcpy(buf + k, le2, 8), k += 8;
    char want[17], got[17], other[17];
    snprintf(want, sizeof want, "%016llx", (unsigned long long)XXH3_64bits(buf, k));
    assert_true(dg_harness__corpus_id("rply", names, cost, 2, got));
    assert_string_equal(got, want);
    assert_true(dg_harness__corpus_id("flrep", names, cost, 2, other)); /* the format is part of it */
    assert_string_not_equal(other, want);
    const uint64_t cost2[2] = {0x0102030405060708u, 10}; /* so is every cost */
    assert_true(dg_harness__corpus_id("rply", names, cost2, 2, other));
    assert_string_not_equal(other, want);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rule_by_hand),
        cmocka_unit_test(test_ties_by_name_then_lowest_shard),
        cmocka_unit_test(test_fifty_balanced_and_deterministic),
        cmocka_unit_test(test_lpt_guarantee_against_brute_force),
        cmocka_unit_test(test_corpus_id_layout),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
