/* test_mcts_multi.c - many MCTS trees searched together (search/mcts_multi.h): every tree ends exactly
 * as its sequential mg_mcts_search with the same seed (visit counts, values, best move) for a constant,
 * a deterministic per-leaf and per-tree playout evaluators, with different batch sizes and budgets;
 * evaluator groups, argument errors, an evaluator error, cancellation, and the call sizes. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../cancel.h"
#include "../game.h"
#include "../games/connect_four/connect_four.h"
#include "../search/evaluator.h"
#include "../search/mcts.h"
#include "../search/mcts_multi.h"
#include "mgtest.h"

static mg_test_counts T;
static char err[MG_ERRLEN];

static const mg_game *G = &mg_connect_four;

#define K 6

/* Deterministic values that depend on the leaf and the action only (as a model's would): a hash of
 * the state's bytes and the action, in [0.05, 0.95]. */
static int hash_eval(void *ctx, const mg_game *g, const mg_eval_request *req, mg_eval_result *res, int n,
                     double timeout, char *e, size_t el)
{
    int *calls = ctx;
    (void)timeout, (void)e, (void)el;
    if (calls)
        ++*calls;
    for (int i = 0; i < n; i++) {
        uint64_t h = 1469598103934665603ull;
        const unsigned char *s = req[i].state;
        for (size_t b = 0; b < g->state_size; b++)
            h = (h ^ s[b]) * 1099511628211ull;
        for (int j = 0; j < req[i].num_legal; j++) {
            uint64_t x = (h ^ (uint64_t)(req[i].legal[j] + 1) * 0x9E3779B97F4A7C15ull) * 0xBF58476D1CE4E5B9ull;
            x ^= x >> 31;
            res[i].values[j] = (float)(0.05 + 0.9 * (double)(x % 10007) / 10006.0);
        }
        res[i].status = MG_EVAL_OK;
    }
    return MG_OK;
}

static mg_evaluator make_ev(const char *name, int (*fn)(void *, const mg_game *, const mg_eval_request *,
                                                        mg_eval_result *, int, double, char *, size_t),
                            void *ctx)
{
    mg_evaluator ev;
    memset(&ev, 0, sizeof ev);
    ev.name = name;
    ev.ctx = ctx;
    ev.modes = 1u << MG_EVAL_ENGINE;
    ev.evaluate = fn;
    return ev;
}

/* Tree i: a Connect Four position i moves into the game, its own seed, batch size and budget. */
static const int BATCH[K] = {1, 4, 16, 8, 16, 3};
static const int SIMS[K] = {40, 64, 100, 7, 200, 0};

static mg_mcts *make_tree(int i)
{
    mg_mcts_config c;
    mg_mcts_config_default(&c);
    c.batch_size = BATCH[i];
    c.seed = 1000u + (uint64_t)i;
    mg_mcts *m = mg_mcts_create(G, &c, err, sizeof err);
    _Alignas(16) unsigned char st[MG_MAX_STATE], undo[MG_MAX_UNDO];
    mg_config cfg = {0, 0};
    if (!m || G->init(st, &cfg, err, sizeof err) != MG_OK) {
        fprintf(stderr, "make_tree: %s\n", err);
        exit(2);
    }
    for (int p = 0; p < i; p++)
        G->make(st, (int32_t)((3 + 2 * p) % 7), undo);
    mg_mcts_set_root(m, st, i, err, sizeof err);
    return m;
}

typedef struct snapshot {
    int n, best;
    int32_t actions[MG_MAX_MOVES];
    uint32_t visits[MG_MAX_MOVES];
    double q[MG_MAX_MOVES];
    uint32_t root_visits;
    double root_value;
    int64_t simulations, evaluations, batches;
} snapshot;

static void snap(const mg_mcts *m, snapshot *s)
{
    memset(s, 0, sizeof *s);
    s->n = mg_mcts_num_root_edges(m);
    mg_mcts_root_edges(m, s->actions, s->visits, s->q, NULL, NULL, NULL);
    s->best = mg_mcts_best_edge(m);
    s->root_visits = mg_mcts_root_visits(m);
    s->root_value = mg_mcts_root_value(m);
    mg_mcts_stats st;
    mg_mcts_get_stats(m, &st);
    s->simulations = st.simulations;
    s->evaluations = st.evaluations;
    s->batches = st.batches;
}

static int same(const snapshot *a, const snapshot *b)
{
    if (a->n != b->n || a->best != b->best || a->root_visits != b->root_visits || a->simulations != b->simulations ||
        a->evaluations != b->evaluations || a->batches != b->batches)
        return 0;
    if (!(a->root_value == b->root_value || (isnan(a->root_value) && isnan(b->root_value))))
        return 0;
    for (int i = 0; i < a->n; i++)
        if (a->actions[i] != b->actions[i] || a->visits[i] != b->visits[i] ||
            !(a->q[i] == b->q[i] || (isnan(a->q[i]) && isnan(b->q[i]))))
            return 0;
    return 1;
}

/* Sequential searches with evs[i] (fresh trees) against one multi-search with evs2[i] (fresh trees
 * again): the same trees, twice (the second search continues each tree). */
static void check_equivalent(const char *what, const mg_evaluator *const *evs, const mg_evaluator *const *evs2)
{
    mg_mcts *seq[K], *mul[K];
    snapshot a, b;
    int ok = 1;
    for (int i = 0; i < K; i++) {
        seq[i] = make_tree(i);
        mul[i] = make_tree(i);
    }
    mg_mcts_multi *mm = mg_mcts_multi_create(err, sizeof err);
    MG_CHECK(mm != NULL);
    for (int rep = 0; rep < 2; rep++) {
        for (int i = 0; i < K; i++)
            MG_CHECK(mg_mcts_search(seq[i], evs[i], SIMS[i], err, sizeof err) == MG_OK);
        int rcs[K];
        MG_CHECK(mg_mcts_multi_search(mm, mul, evs2, SIMS, K, NULL, rcs, err, sizeof err) == MG_OK);
        for (int i = 0; i < K; i++) {
            MG_CHECK(rcs[i] == MG_OK);
            MG_CHECK(mg_mcts_check(mul[i], err, sizeof err) == MG_OK);
            snap(seq[i], &a);
            snap(mul[i], &b);
            if (!same(&a, &b)) {
                fprintf(stderr, "%s: tree %d (search %d) differs from its sequential search: best %d/%d, "
                                "root visits %u/%u, simulations %lld/%lld\n",
                        what, i, rep, a.best, b.best, a.root_visits, b.root_visits, (long long)a.simulations,
                        (long long)b.simulations);
                ok = 0;
            }
            MG_CHECK(b.simulations == SIMS[i]);
        }
    }
    MG_CHECK(ok);
    mg_mcts_multi_stats ms;
    mg_mcts_multi_get_stats(mm, &ms);
    /* the largest tree needs at least ceil(200 / 16) rounds */
    MG_CHECK(ms.rounds >= 13 && ms.max_call >= 16 && ms.requests > 0);
    if (evs2[0] == evs2[1]) /* one group: the first round's call holds a batch of every searching tree */
        MG_CHECK(ms.max_call > 16 + 7 && ms.calls == ms.rounds);
    for (int i = 0; i < K; i++) {
        mg_mcts_free(seq[i]);
        mg_mcts_free(mul[i]);
    }
    mg_mcts_multi_free(mm);
}

static void test_equivalence(void)
{
    mg_evaluator cst, hsh;
    MG_CHECK(mg_eval_constant_create(&cst, 0.5, err, sizeof err) == MG_OK);
    int calls = 0;
    hsh = make_ev("hash", hash_eval, &calls);
    const mg_evaluator *c6[K], *h6[K], *mixed[K];
    for (int i = 0; i < K; i++) {
        c6[i] = &cst;
        h6[i] = &hsh;
        mixed[i] = i % 2 ? &cst : &hsh;
    }
    check_equivalent("constant", c6, c6);
    check_equivalent("hash", h6, h6);
    check_equivalent("two evaluators", mixed, mixed);
    /* one call per evaluator group per round: the hash evaluator serves every tree in one call */
    mg_mcts *t[K];
    for (int i = 0; i < K; i++)
        t[i] = make_tree(i);
    mg_mcts_multi *mm = mg_mcts_multi_create(err, sizeof err);
    calls = 0;
    MG_CHECK(mg_mcts_multi_search(mm, t, h6, SIMS, K, NULL, NULL, err, sizeof err) == MG_OK);
    mg_mcts_multi_stats ms;
    mg_mcts_multi_get_stats(mm, &ms);
    MG_CHECK(calls == ms.rounds && ms.calls == ms.rounds);
    int64_t evals = 0;
    for (int i = 0; i < K; i++) {
        mg_mcts_stats st;
        mg_mcts_get_stats(t[i], &st);
        evals += st.evaluations;
    }
    MG_CHECK(ms.requests == evals);
    for (int i = 0; i < K; i++)
        mg_mcts_free(t[i]);
    mg_mcts_multi_free(mm);
    mg_evaluator_free(&cst);

    /* playouts: each tree with its own evaluator (its own generator) equals its sequential search */
    mg_evaluator ps[K], pm[K];
    const mg_evaluator *pseq[K], *pmul[K];
    for (int i = 0; i < K; i++) {
        MG_CHECK(mg_eval_playout_create(&ps[i], 2, 0, 77u + (uint64_t)i, err, sizeof err) == MG_OK);
        MG_CHECK(mg_eval_playout_create(&pm[i], 2, 0, 77u + (uint64_t)i, err, sizeof err) == MG_OK);
        pseq[i] = &ps[i];
        pmul[i] = &pm[i];
    }
    check_equivalent("playout (one evaluator per tree)", pseq, pmul);
    for (int i = 0; i < K; i++) {
        mg_evaluator_free(&ps[i]);
        mg_evaluator_free(&pm[i]);
    }
    /* one playout evaluator shared: other draws, but consistent trees with every simulation run */
    mg_evaluator shared;
    MG_CHECK(mg_eval_playout_create(&shared, 1, 0, 5, err, sizeof err) == MG_OK);
    const mg_evaluator *sh[K];
    for (int i = 0; i < K; i++) {
        sh[i] = &shared;
        t[i] = make_tree(i);
    }
    mm = mg_mcts_multi_create(err, sizeof err);
    MG_CHECK(mg_mcts_multi_search(mm, t, sh, SIMS, K, NULL, NULL, err, sizeof err) == MG_OK);
    for (int i = 0; i < K; i++) {
        mg_mcts_stats st;
        mg_mcts_get_stats(t[i], &st);
        MG_CHECK(st.simulations == SIMS[i]);
        MG_CHECK(mg_mcts_check(t[i], err, sizeof err) == MG_OK);
        mg_mcts_free(t[i]);
    }
    mg_mcts_multi_free(mm);
    mg_evaluator_free(&shared);
}

static int failing_eval(void *ctx, const mg_game *g, const mg_eval_request *req, mg_eval_result *res, int n,
                        double timeout, char *e, size_t el)
{
    int *calls = ctx;
    if (++*calls >= 3) {
        snprintf(e, el, "evaluator exploded on purpose");
        return MG_ERR;
    }
    return hash_eval(NULL, g, req, res, n, timeout, e, el);
}

static int stop_after(void *ctx)
{
    int *left = ctx;
    return --*left < 0;
}

static void test_errors_and_cancel(void)
{
    mg_evaluator hsh = make_ev("hash", hash_eval, NULL);
    const mg_evaluator *h[K];
    mg_mcts *t[K];
    for (int i = 0; i < K; i++) {
        h[i] = &hsh;
        t[i] = make_tree(i);
    }
    mg_mcts_multi *mm = mg_mcts_multi_create(err, sizeof err);
    /* bad arguments: nothing runs */
    mg_mcts *dup[2] = {t[0], t[0]};
    MG_CHECK(mg_mcts_multi_search(mm, dup, h, SIMS, 2, NULL, NULL, err, sizeof err) == MG_ERR &&
             strstr(err, "same search object"));
    const mg_evaluator *none[2] = {&hsh, NULL};
    MG_CHECK(mg_mcts_multi_search(mm, t, none, SIMS, 2, NULL, NULL, err, sizeof err) == MG_ERR &&
             strstr(err, "tree 1 has no evaluator"));
    int neg[2] = {5, -1};
    MG_CHECK(mg_mcts_multi_search(mm, t, h, neg, 2, NULL, NULL, err, sizeof err) == MG_ERR &&
             strstr(err, "num_simulations[1] = -1"));
    mg_mcts_config c;
    mg_mcts_config_default(&c);
    mg_mcts *rootless = mg_mcts_create(G, &c, err, sizeof err);
    mg_mcts *two[2] = {t[1], rootless};
    MG_CHECK(mg_mcts_multi_search(mm, two, h, SIMS, 2, NULL, NULL, err, sizeof err) == MG_ERR &&
             strstr(err, "tree 1") && strstr(err, "no root"));
    MG_CHECK(mg_mcts_check(t[1], err, sizeof err) == MG_OK);
    mg_mcts_free(rootless);
    MG_CHECK(mg_mcts_multi_search(mm, t, h, SIMS, 0, NULL, NULL, err, sizeof err) == MG_OK);

    /* an evaluator error in round 3: every search ends, every tree consistent, no virtual counts left */
    int calls = 0;
    mg_evaluator bad = make_ev("failing", failing_eval, &calls);
    const mg_evaluator *b[K];
    int rcs[K];
    for (int i = 0; i < K; i++)
        b[i] = i == 2 ? &bad : &hsh;
    MG_CHECK(mg_mcts_multi_search(mm, t, b, SIMS, K, NULL, rcs, err, sizeof err) == MG_ERR &&
             strstr(err, "exploded"));
    MG_CHECK(rcs[2] == MG_ERR && rcs[1] == MG_OK);
    for (int i = 0; i < K; i++)
        MG_CHECK(mg_mcts_check(t[i], err, sizeof err) == MG_OK);

    /* cancellation after two polls: the searches stop between rounds, keep what they did, and go on later */
    for (int i = 0; i < K; i++) {
        mg_mcts_free(t[i]);
        t[i] = make_tree(i);
    }
    int left = 2;
    mg_cancel cancel;
    mg_cancel_init(&cancel, stop_after, &left);
    MG_CHECK(mg_mcts_multi_search(mm, t, h, SIMS, K, &cancel, rcs, err, sizeof err) == MG_ERR &&
             strstr(err, "interrupted") && cancel.stopped);
    mg_mcts_multi_stats ms;
    mg_mcts_multi_get_stats(mm, &ms);
    MG_CHECK(ms.rounds == 3);
    mg_mcts_stats st;
    mg_mcts_get_stats(t[4], &st);
    MG_CHECK(st.simulations > 3 && st.simulations <= 3 * 16 && st.batches == 3 && rcs[4] == MG_ERR);
    uint32_t before = mg_mcts_root_visits(t[4]);
    for (int i = 0; i < K; i++)
        MG_CHECK(mg_mcts_check(t[i], err, sizeof err) == MG_OK);
    MG_CHECK(mg_mcts_multi_search(mm, t, h, SIMS, K, NULL, NULL, err, sizeof err) == MG_OK);
    MG_CHECK(mg_mcts_root_visits(t[4]) == before + (uint32_t)SIMS[4]);
    for (int i = 0; i < K; i++)
        mg_mcts_free(t[i]);
    mg_mcts_multi_free(mm);
}

int main(void)
{
    mg_games_init();
    test_equivalence();
    test_errors_and_cancel();
    MG_TEST_MAIN_END("test_mcts_multi");
}
