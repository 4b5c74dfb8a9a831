/* test_mcts.c - the MAV-guided MCTS on tic-tac-toe: forced wins, the prior of equation 1,
 * batches and virtual counts, dropped and invalid results, state tracking with garbage
 * evaluators, tree reuse, reproducibility; tree invariants after every search. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../game.h"
#include "../games/connect_four/connect_four.h"
#include "../games/tictactoe/tictactoe.h"
#include "../games/connect_four/c4_solver.h"
#include "../rng.h"
#include "../search/evaluator.h"
#include "../games/connect_four/c4_evaluator.h"
#include "../search/mcts.h"
#include "mgtest.h"

static mg_test_counts T;
static char err[MG_ERRLEN];

static const mg_game *G = &mg_tictactoe;

static void from_text(mg_ttt_state *s, const char *text)
{
    if (G->from_text(s, NULL, text, err, sizeof err) != MG_OK) {
        fprintf(stderr, "bad test position %s: %s\n", text, err);
        exit(2);
    }
}

/* Negamax value of `s` for the player to move: +1 win, 0 draw, -1 loss. */
static int negamax(mg_ttt_state *s)
{
    int r = G->outcome(s, NULL);
    if (r != MG_ONGOING) {
        if (r == MG_DRAW)
            return 0;
        int winner = r == MG_P0_WINS ? 0 : 1;
        return winner == G->to_move(s) ? 1 : -1;
    }
    int32_t moves[9];
    int n = G->legal_actions(s, moves), best = -2;
    for (int i = 0; i < n; i++) {
        G->make(s, moves[i], NULL);
        int v = -negamax(s);
        G->unmake(s, moves[i], NULL);
        if (v > best)
            best = v;
    }
    return best;
}

/* Negamax with a 0.9 discount per ply: faster wins (slower losses) score higher. */
static double discounted(mg_ttt_state *s)
{
    int r = G->outcome(s, NULL);
    if (r != MG_ONGOING)
        return r == MG_DRAW ? 0.0 : -1.0; /* the side to move has lost */
    int32_t moves[9];
    int n = G->legal_actions(s, moves);
    double best = -2;
    for (int i = 0; i < n; i++) {
        G->make(s, moves[i], NULL);
        double v = -0.9 * discounted(s);
        G->unmake(s, moves[i], NULL);
        if (v > best)
            best = v;
    }
    return best;
}

static double action_value_discounted(const mg_ttt_state *s0, int32_t a)
{
    mg_ttt_state s = *s0;
    G->make(&s, a, NULL);
    return -0.9 * discounted(&s);
}

static int action_value(const mg_ttt_state *s0, int32_t a)
{
    mg_ttt_state s = *s0;
    G->make(&s, a, NULL);
    return -negamax(&s);
}

static void check_tree(mg_mcts *m, const char *what)
{
    int rc = mg_mcts_check(m, err, sizeof err);
    if (rc != MG_OK)
        fprintf(stderr, "%s: %s\n", what, err);
    MG_CHECK(rc == MG_OK);
}

/* ---- Test evaluators ---- */

/* Perfect oracle: every legal action valued by discounted negamax. */
static int oracle_eval(void *ctx, const mg_game *g, const mg_eval_request *req, mg_eval_result *res, int n,
                       double timeout, char *e, size_t el)
{
    (void)ctx, (void)g, (void)timeout, (void)e, (void)el;
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < req[i].num_legal; j++)
            res[i].values[j] = (float)(0.5 + 0.5 * action_value_discounted(req[i].state, req[i].legal[j]));
        res[i].status = MG_EVAL_OK;
    }
    return MG_OK;
}

/* Fixed values by action id (NaN where absent), for checking the prior. */
static float FIXED[9];
static double FIXED_VALUE = NAN; /* explicit leaf value (NaN: the maximum action value) */
static int fixed_eval(void *ctx, const mg_game *g, const mg_eval_request *req, mg_eval_result *res, int n,
                      double timeout, char *e, size_t el)
{
    (void)ctx, (void)g, (void)timeout, (void)e, (void)el;
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < req[i].num_legal; j++)
            res[i].values[j] = FIXED[req[i].legal[j]];
        res[i].policy[0] = 1.0f; /* used only with the policy prior */
        res[i].value = FIXED_VALUE;
        res[i].status = MG_EVAL_OK;
    }
    return MG_OK;
}

/* Wraps the oracle; drops, invalidates, reorders and corrupts results at random. */
typedef struct chaos_ctx {
    mg_rng rng;
    int batches;
    int max_batch;
} chaos_ctx;

static int chaos_eval(void *vctx, const mg_game *g, const mg_eval_request *req, mg_eval_result *res, int n,
                      double timeout, char *e, size_t el)
{
    chaos_ctx *c = vctx;
    c->batches++;
    if (n > c->max_batch)
        c->max_batch = n;
    if (oracle_eval(NULL, g, req, res, n, timeout, e, el) != MG_OK)
        return MG_ERR;
    for (int i = 0; i < n; i++) {
        res[i].seq = (int)mg_rng_below(&c->rng, 1000);
        switch (mg_rng_below(&c->rng, 8)) {
        case 0: res[i].status = MG_EVAL_DROPPED; break;
        case 1: res[i].status = MG_EVAL_INVALID; break;
        case 2: res[i].values[0] = 7.0f; break;               /* out of [0, 1]: invalid */
        case 3: res[i].value = -3.0; break;                   /* invalid */
        case 4: for (int j = 0; j < req[i].num_legal; j++) res[i].values[j] = NAN; break; /* no value */
        default: break;
        }
    }
    return MG_OK;
}

static int failing_eval(void *ctx, const mg_game *g, const mg_eval_request *req, mg_eval_result *res, int n,
                        double timeout, char *e, size_t el)
{
    int *calls = ctx;
    if (++*calls >= 3) {
        snprintf(e, el, "evaluator exploded on purpose");
        return MG_ERR;
    }
    return oracle_eval(NULL, g, req, res, n, timeout, e, el);
}

static mg_evaluator make_ev(const char *name, int (*fn)(void *, const mg_game *, const mg_eval_request *,
                                                        mg_eval_result *, int, double, char *, size_t),
                            void *ctx, unsigned modes)
{
    mg_evaluator ev;
    memset(&ev, 0, sizeof ev);
    ev.name = name;
    ev.ctx = ctx;
    ev.modes = modes;
    ev.evaluate = fn;
    return ev;
}

/* ---- Tests ---- */

static void test_config(void)
{
    mg_mcts_config c;
    mg_mcts_config_default(&c);
    MG_CHECK(mg_mcts_config_check(&c, err, sizeof err) == MG_OK);
    c.batch_size = 0;
    MG_CHECK(mg_mcts_config_check(&c, err, sizeof err) == MG_ERR && strstr(err, "batch_size 0"));
    mg_mcts_config_default(&c);
    c.n_min = 9;
    MG_CHECK(mg_mcts_config_check(&c, err, sizeof err) == MG_ERR && strstr(err, "n_min 9"));
    mg_mcts_config_default(&c);
    c.eps = 1.5;
    MG_CHECK(mg_mcts_config_check(&c, err, sizeof err) == MG_ERR && strstr(err, "eps 1.5"));
    mg_mcts_config_default(&c);
    c.tau[0] = 0;
    MG_CHECK(mg_mcts_config_check(&c, err, sizeof err) == MG_ERR && strstr(err, "tau[0]"));
    mg_mcts_config_default(&c);
    MG_CHECK(c.invalid == MG_MCTS_INVALID_EXCLUDE); /* the paper's minus infinity (issue 13) */
    c.invalid = 2;
    MG_CHECK(mg_mcts_config_check(&c, err, sizeof err) == MG_ERR && strstr(err, "invalid 2"));
    mg_mcts_config_default(&c);
    c.k = 0;
    MG_CHECK(mg_mcts_create(G, &c, err, sizeof err) == NULL && strstr(err, "k 0"));
    mg_mcts_config_default(&c);
    MG_CHECK(mg_mcts_create(NULL, &c, err, sizeof err) == NULL && strstr(err, "needs a game"));
    /* c(s)'s log: the quotient's log where it is finite, finite where the quotient overflows */
    MG_CHECK(mg_mcts_c_base_log(19652.0, 100.0) == log((1.0 + 100.0 + 19652.0) / 19652.0));
    MG_CHECK(isinf((1.0 + 8.0 + 5e-324) / 5e-324));
    MG_CHECK(isfinite(mg_mcts_c_base_log(5e-324, 8.0)) && fabs(mg_mcts_c_base_log(5e-324, 8.0) - (log(9.0) -
                                                                   log(5e-324))) < 1e-12);
    MG_CHECK(isfinite(mg_mcts_c_base_log(1e-310, 1e9)) && mg_mcts_c_base_log(1e-310, 0.0) > 700);

    mg_mcts *m = mg_mcts_create(G, NULL, err, sizeof err);
    MG_CHECK(m != NULL);
    mg_evaluator ev;
    MG_CHECK(mg_eval_playout_create(&ev, 1, 0, 1, err, sizeof err) == MG_OK);
    MG_CHECK(mg_mcts_search(m, &ev, 10, err, sizeof err) == MG_ERR && strstr(err, "no root"));
    MG_CHECK(mg_mcts_set_root_text(m, "x", 0, 0, err, sizeof err) == MG_ERR);
    mg_evaluator_free(&ev);
    MG_CHECK(mg_eval_playout_create(&ev, 0, 0, 1, err, sizeof err) == MG_ERR && strstr(err, "playouts 0"));
    MG_CHECK(mg_eval_constant_create(&ev, 2.0, err, sizeof err) == MG_ERR && strstr(err, "value 2"));
    mg_mcts_free(m);
}

/* Positions with a forced win for the side to move: the search must pick a winning move. */
static void test_playout_forced_wins(void)
{
    static const char *const positions[] = {
        "xx./oo./... x",  /* immediate win (c3) or lose the race */
        "x../.o./..x o",  /* o must not play a corner? o to move: draws only; skipped by value check */
        "x.o/.../x.o x",  /* x wins with a2 (double threat... a2 completes a-file) */
        "o../.x./... x",  /* any reasonable move; value check only */
        "x../.../..o x",  /* x has a forced win (take a corner: fork) */
        "oo./xx./x.. o",  /* o wins at c3 */
        "x.o/.o./x.. x",  /* x must win at a2 */
    };
    for (size_t p = 0; p < sizeof positions / sizeof positions[0]; p++) {
        mg_ttt_state s;
        from_text(&s, positions[p]);
        int best_val = negamax(&s);
        for (int vc = 0; vc < 3; vc++) {
            for (int bs = 1; bs <= 8; bs *= 8) {
                mg_mcts_config c;
                mg_mcts_config_default(&c);
                c.batch_size = bs;
                c.virtual_count = vc;
                c.seed = 11 + p;
                c.c_base = 0;
                c.c_puct = 2.0;
                mg_mcts *m = mg_mcts_create(G, &c, err, sizeof err);
                mg_evaluator ev;
                mg_eval_playout_create(&ev, 4, 0, 5 + p, err, sizeof err);
                MG_CHECK(mg_mcts_set_root(m, &s, s.nmoves, err, sizeof err) == MG_OK);
                MG_CHECK(mg_mcts_search(m, &ev, 3000, err, sizeof err) == MG_OK);
                check_tree(m, positions[p]);
                int32_t a = mg_mcts_best_action(m);
                MG_CHECK(a >= 0 && G->is_legal(&s, a));
                int v = action_value(&s, a);
                if (v != best_val)
                    fprintf(stderr, "%s (vc %d, batch %d): played %d worth %d, best %d\n", positions[p], vc, bs,
                            a, v, best_val);
                MG_CHECK(v == best_val);
                mg_mcts_stats st;
                mg_mcts_get_stats(m, &st);
                MG_CHECK(st.simulations == 3000);
                MG_CHECK(mg_mcts_root_visits(m) == (uint32_t)st.completed);
                MG_CHECK(st.completed == st.simulations); /* nothing dropped here */
                mg_evaluator_free(&ev);
                mg_mcts_free(m);
            }
        }
    }
}

/* With a perfect oracle the search keeps to optimal moves through a whole game (self-play). */
static void test_oracle_selfplay(void)
{
    for (int seed = 0; seed < 4; seed++) {
        mg_mcts_config c;
        mg_mcts_config_default(&c);
        c.seed = (uint64_t)seed;
        c.batch_size = 1 + seed;
        mg_mcts *m = mg_mcts_create(G, &c, err, sizeof err);
        mg_evaluator ev = make_ev("oracle", oracle_eval, NULL, 1u << MG_EVAL_ENGINE);
        mg_ttt_state s;
        from_text(&s, ".../.../... x");
        MG_CHECK(mg_mcts_set_root(m, &s, 0, err, sizeof err) == MG_OK);
        while (G->outcome(&s, NULL) == MG_ONGOING) {
            int before = negamax(&s);
            MG_CHECK(mg_mcts_search(m, &ev, 60, err, sizeof err) == MG_OK);
            check_tree(m, "oracle self-play");
            int32_t a = mg_mcts_best_action(m);
            MG_CHECK(action_value(&s, a) == before);
            G->make(&s, a, NULL);
            uint32_t kept = 0;
            int nr = mg_mcts_num_root_edges(m);
            int32_t acts[9];
            uint32_t vis[9];
            mg_mcts_root_edges(m, acts, vis, NULL, NULL, NULL, NULL);
            for (int i = 0; i < nr; i++)
                if (acts[i] == a)
                    kept = vis[i];
            MG_CHECK(mg_mcts_advance(m, a, err, sizeof err) == MG_OK);
            if (G->outcome(&s, NULL) == MG_ONGOING) {
                MG_CHECK(mg_mcts_root_visits(m) == kept); /* the subtree came along */
                check_tree(m, "after advance");
            }
        }
        MG_CHECK(G->outcome(&s, NULL) == MG_DRAW);
        /* Searching a finished game does nothing. */
        MG_CHECK(mg_mcts_search(m, &ev, 10, err, sizeof err) == MG_OK);
        MG_CHECK(mg_mcts_best_action(m) == -1);
        mg_mcts_free(m);
    }
}

/* Equation 1: P = (1 - eps) * softmax_top_k(q / tau) + eps / |legal|. */
static void test_prior(void)
{
    for (int i = 0; i < 9; i++)
        FIXED[i] = NAN;
    FIXED[0] = 0.9f, FIXED[4] = 0.8f, FIXED[8] = 0.6f, FIXED[2] = 0.1f;
    mg_mcts_config c;
    mg_mcts_config_default(&c);
    c.k = 2;
    c.eps = 0.2;
    c.num_tau = 2;
    c.tau[0] = 0.1;
    c.tau_from_ply[1] = 4;
    c.tau[1] = 0.5;
    mg_evaluator ev = make_ev("fixed", fixed_eval, NULL, 1u << MG_EVAL_ENGINE);
    for (int late = 0; late < 2; late++) {
        mg_mcts *m = mg_mcts_create(G, &c, err, sizeof err);
        mg_ttt_state s;
        from_text(&s, ".../.../... x");
        MG_CHECK(mg_mcts_set_root(m, &s, late ? 6 : 0, err, sizeof err) == MG_OK);
        MG_CHECK(mg_mcts_search(m, &ev, 1, err, sizeof err) == MG_OK);
        MG_CHECK(mg_mcts_num_root_edges(m) == 9);
        int32_t acts[9];
        float prior[9], vals[9];
        mg_mcts_root_edges(m, acts, NULL, NULL, prior, vals, NULL);
        double tau = late ? 0.5 : 0.1;
        double z = exp(0.9 / tau) + exp(0.8 / tau);
        for (int i = 0; i < 9; i++) {
            double want = 0.2 / 9;
            if (acts[i] == 0)
                want += 0.8 * exp(0.9 / tau) / z;
            if (acts[i] == 4)
                want += 0.8 * exp(0.8 / tau) / z;
            MG_CHECK(fabs(prior[i] - want) < 1e-5);
            MG_CHECK(isnan(FIXED[acts[i]]) ? isnan(vals[i]) : vals[i] == FIXED[acts[i]]);
        }
        /* Root value = the maximum action value (0.9 -> 0.8 in [-1, 1]). */
        MG_CHECK(fabs(mg_mcts_root_value(m) - 0.8) < 1e-6);
        check_tree(m, "prior");
        mg_mcts_free(m);
    }
    /* Policy prior: all mass on the first legal action, mixed with eps. */
    c.prior = MG_MCTS_PRIOR_POLICY;
    FIXED_VALUE = 0.5;
    mg_mcts *m = mg_mcts_create(G, &c, err, sizeof err);
    mg_ttt_state s;
    from_text(&s, ".../.../... x");
    mg_mcts_set_root(m, &s, 0, err, sizeof err);
    MG_CHECK(mg_mcts_search(m, &ev, 1, err, sizeof err) == MG_OK);
    float prior[9];
    mg_mcts_root_edges(m, NULL, NULL, NULL, prior, NULL, NULL);
    MG_CHECK(fabs(prior[0] - (0.8 + 0.2 / 9)) < 1e-5 && fabs(prior[1] - 0.2 / 9) < 1e-5);
    /* Explicit leaf value 0.5 -> 0. */
    MG_CHECK(fabs(mg_mcts_root_value(m)) < 1e-9);
    mg_mcts_free(m);
}

/* Virtual counts spread a batch over distinct leaves; without them it collides. */
static void test_virtual_counts(void)
{
    for (int vc = 0; vc < 3; vc++) {
        mg_mcts_config c;
        mg_mcts_config_default(&c);
        c.batch_size = 8;
        c.virtual_count = vc;
        c.n_max = 64;
        c.n_min = 4;
        c.virtual_loss = 4;
        mg_mcts *m = mg_mcts_create(G, &c, err, sizeof err);
        mg_ttt_state s;
        from_text(&s, ".../.../... x");
        mg_mcts_set_root(m, &s, 0, err, sizeof err);
        mg_evaluator orc = make_ev("oracle", oracle_eval, NULL, 1u << MG_EVAL_ENGINE);
        MG_CHECK(mg_mcts_search(m, &orc, 200, err, sizeof err) == MG_OK);
        check_tree(m, "virtual counts");
        mg_mcts_stats st;
        mg_mcts_get_stats(m, &st);
        if (vc == MG_MCTS_VC_NONE)
            MG_CHECK(st.collisions > 0);
        else
            MG_CHECK(st.collisions < st.evaluations / 4);
        MG_CHECK(st.simulations == 200);
        mg_mcts_free(m);
    }
}

/* Dropped, invalid and malformed results in random order: invariants hold, budget is spent. */
static void test_chaos(void)
{
    for (int seed = 0; seed < 20; seed++) {
        mg_mcts_config c;
        mg_mcts_config_default(&c);
        c.batch_size = 1 + seed % 7;
        c.virtual_count = seed % 3;
        c.invalid = seed % 2 ? MG_MCTS_INVALID_LOSS : MG_MCTS_INVALID_EXCLUDE; /* both answers to an invalid leaf */
        c.seed = (uint64_t)seed;
        chaos_ctx cc;
        memset(&cc, 0, sizeof cc);
        mg_rng_seed(&cc.rng, (uint64_t)seed * 7 + 1);
        mg_evaluator ev = make_ev("chaos", chaos_eval, &cc, 1u << MG_EVAL_ENGINE);
        mg_mcts *m = mg_mcts_create(G, &c, err, sizeof err);
        mg_ttt_state s;
        from_text(&s, ".../.x./... o");
        mg_mcts_set_root(m, &s, 1, err, sizeof err);
        for (int round = 0; round < 3; round++) {
            MG_CHECK(mg_mcts_search(m, &ev, 150, err, sizeof err) == MG_OK);
            check_tree(m, "chaos");
            mg_mcts_stats st;
            mg_mcts_get_stats(m, &st);
            MG_CHECK(st.simulations <= 150);
            if (round == 0)
                MG_CHECK(st.dropped > 0 && st.invalid > 0);
            MG_CHECK(st.completed + st.dropped == st.simulations);
            MG_CHECK(cc.max_batch <= c.batch_size);
        }
        mg_mcts_free(m);
    }
}

static void test_evaluator_error(void)
{
    int calls = 0;
    mg_evaluator ev = make_ev("failing", failing_eval, &calls, 1u << MG_EVAL_ENGINE);
    mg_mcts_config c;
    mg_mcts_config_default(&c);
    c.batch_size = 4;
    mg_mcts *m = mg_mcts_create(G, &c, err, sizeof err);
    mg_ttt_state s;
    from_text(&s, ".../.../... x");
    mg_mcts_set_root(m, &s, 0, err, sizeof err);
    MG_CHECK(mg_mcts_search(m, &ev, 100, err, sizeof err) == MG_ERR && strstr(err, "exploded"));
    check_tree(m, "after evaluator error");
    mg_evaluator st_only = make_ev("st", oracle_eval, NULL, 1u << MG_EVAL_STATE_TRACKING);
    MG_CHECK(mg_mcts_search(m, &st_only, 10, err, sizeof err) == MG_ERR && strstr(err, "engine mode"));
    mg_mcts_free(m);
}

/* ---- Dynamic virtual counts, seen from inside the evaluator while the batch is out ---- */

typedef struct vc_ctx {
    mg_mcts *m;
    int64_t collisions;  /* stats.collisions at the previous batch */
    int batches, exact;  /* batches checked, of which without collisions (exact sums) */
} vc_ctx;

static uint32_t vc_expected(const mg_mcts_config *c, int d)
{
    if (c->virtual_count == MG_MCTS_VC_STATIC)
        return (uint32_t)c->virtual_loss;
    if (c->virtual_count == MG_MCTS_VC_NONE)
        return 0;
    uint32_t x = d >= 31 ? 0u : (uint32_t)c->n_max >> d; /* floor(n_max / 2^d) */
    return x < (uint32_t)c->n_min ? (uint32_t)c->n_min : x;
}

static int vc_eval(void *vctx, const mg_game *g, const mg_eval_request *req, mg_eval_result *res, int n,
                   double timeout, char *e, size_t el)
{
    vc_ctx *c = vctx;
    const mg_mcts_config *cfg = mg_mcts_get_config(c->m);
    mg_mcts_stats st;
    mg_mcts_get_stats(c->m, &st);
    int clean = st.collisions == c->collisions;
    c->collisions = st.collisions;
    c->batches++;
    c->exact += clean;
    for (int i = 0; i < n; i++) {
        uint32_t seen[MG_MCTS_MAX_DEPTH + 1];
        int L = req[i].depth;
        MG_CHECK(mg_mcts_path_virtual(c->m, req[i].path, L, seen) == L);
        for (int s = 0; s <= L; s++) {
            /* s = 0: the root; s > 0: the pair of step s - 1, i.e. at depth L - s above the leaf.
             * Every request of the batch whose path shares these s steps adds its own count. */
            uint64_t want = 0;
            for (int j = 0; j < n; j++) {
                int Lj = req[j].depth;
                if (Lj < s || memcmp(req[j].path, req[i].path, (size_t)s * sizeof(int32_t)) != 0)
                    continue;
                want += vc_expected(cfg, Lj - s);
            }
            if (clean ? seen[s] != want : seen[s] < want) {
                fprintf(stderr, "virtual counts: request %d/%d depth %d step %d: %u in flight, expected %s%llu\n", i,
                        n, L, s, seen[s], clean ? "" : ">= ", (unsigned long long)want);
                T.failed++;
                return oracle_eval(NULL, g, req, res, n, timeout, e, el);
            }
        }
        T.passed++;
    }
    return oracle_eval(NULL, g, req, res, n, timeout, e, el);
}

static void test_virtual_count_formula(void)
{
    static const int setups[][5] = {
        /* virtual_count, n_max, n_min, virtual_loss, batch */
        {MG_MCTS_VC_DYNAMIC, 64, 4, 3, 1}, {MG_MCTS_VC_DYNAMIC, 64, 4, 3, 6}, {MG_MCTS_VC_DYNAMIC, 8, 2, 3, 4},
        {MG_MCTS_VC_DYNAMIC, 5, 0, 3, 3},  {MG_MCTS_VC_STATIC, 8, 2, 3, 5},
    };
    for (size_t k = 0; k < sizeof setups / sizeof setups[0]; k++) {
        mg_mcts_config c;
        mg_mcts_config_default(&c);
        c.virtual_count = setups[k][0];
        c.n_max = setups[k][1];
        c.n_min = setups[k][2];
        c.virtual_loss = setups[k][3];
        c.batch_size = setups[k][4];
        c.seed = k;
        mg_mcts *m = mg_mcts_create(G, &c, err, sizeof err);
        vc_ctx vc = {m, 0, 0, 0};
        mg_evaluator ev = make_ev("vc", vc_eval, &vc, 1u << MG_EVAL_ENGINE);
        mg_ttt_state s;
        from_text(&s, ".../.../... x");
        mg_mcts_set_root(m, &s, 0, err, sizeof err);
        MG_CHECK(mg_mcts_search(m, &ev, 400, err, sizeof err) == MG_OK);
        check_tree(m, "virtual count formula"); /* all removed on backup */
        mg_mcts_stats st;
        mg_mcts_get_stats(m, &st);
        MG_CHECK(vc.batches > 10 && vc.exact > 0 && st.max_depth >= 5);
        uint32_t root[1];
        MG_CHECK(mg_mcts_path_virtual(m, NULL, 0, root) == 0 && root[0] == 0);
        mg_mcts_free(m);
    }
}

/* Robust child: most visits, then the larger total value W (not the prior, not the order). */
static int tie_eval(void *ctx, const mg_game *g, const mg_eval_request *req, mg_eval_result *res, int n,
                    double timeout, char *e, size_t el)
{
    (void)ctx, (void)g, (void)timeout, (void)e, (void)el;
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < req[i].num_legal; j++) {
            float v = NAN;
            if (req[i].depth == 0)
                v = req[i].legal[j] == 0 ? 0.6f : req[i].legal[j] == 4 ? 0.4f : NAN; /* a1, b2 */
            else
                v = req[i].path[0] == 0 ? 0.75f : 0.6f; /* after a1: W -0.5; after b2: W -0.2 */
            res[i].values[j] = v;
        }
        res[i].status = MG_EVAL_OK;
    }
    return MG_OK;
}

static void test_robust_child_tie_break(void)
{
    mg_mcts_config c;
    mg_mcts_config_default(&c);
    c.c_base = 0;
    c.c_puct = 0; /* selection by Q alone: root, then a1 (Q 0.2), then b2 (-0.2 > -0.5) */
    c.eps = 0;
    c.fpu = -1;
    mg_mcts *m = mg_mcts_create(G, &c, err, sizeof err);
    mg_evaluator ev = make_ev("tie", tie_eval, NULL, 1u << MG_EVAL_ENGINE);
    mg_ttt_state s;
    from_text(&s, ".../.../... x");
    mg_mcts_set_root(m, &s, 0, err, sizeof err);
    MG_CHECK(mg_mcts_search(m, &ev, 3, err, sizeof err) == MG_OK);
    check_tree(m, "tie break");
    int32_t acts[9];
    uint32_t vis[9];
    double q[9];
    float prior[9];
    int n = mg_mcts_num_root_edges(m);
    MG_CHECK(n == 9);
    mg_mcts_root_edges(m, acts, vis, q, prior, NULL, NULL);
    int ia = -1, ib = -1;
    for (int i = 0; i < n; i++) {
        if (acts[i] == 0)
            ia = i;
        if (acts[i] == 4)
            ib = i;
    }
    MG_CHECK(ia >= 0 && ib >= 0 && vis[ia] == 1 && vis[ib] == 1);
    MG_CHECK(fabs(q[ia] + 0.5) < 1e-6 && fabs(q[ib] + 0.2) < 1e-6 && prior[ia] > prior[ib]);
    MG_CHECK(mg_mcts_best_action(m) == 4);
    int32_t pv[4];
    MG_CHECK(mg_mcts_pv(m, pv, NULL, 4) >= 1 && pv[0] == 4);
    mg_mcts_free(m);
}

/* Engine mode: an answer whose value count differs from the request's legal actions is invalid
 * (its values cannot be matched to actions), never read past the legal list. */
static int miscount_eval(void *ctx, const mg_game *g, const mg_eval_request *req, mg_eval_result *res, int n,
                         double timeout, char *e, size_t el)
{
    int *calls = ctx;
    if (oracle_eval(NULL, g, req, res, n, timeout, e, el) != MG_OK)
        return MG_ERR;
    for (int i = 0; i < n; i++) {
        if (req[i].depth == 0)
            continue;
        ++*calls;
        int k = req[i].num_legal + ((*calls & 1) ? 3 : -1);
        for (int j = req[i].num_legal; j < k; j++)
            res[i].values[j] = 0.99f;
        res[i].num_moves = k;
    }
    return MG_OK;
}

static void test_engine_value_count_mismatch(void)
{
    int calls = 0;
    mg_mcts_config c;
    mg_mcts_config_default(&c);
    c.batch_size = 3;
    mg_mcts *m = mg_mcts_create(G, &c, err, sizeof err);
    mg_evaluator ev = make_ev("miscount", miscount_eval, &calls, 1u << MG_EVAL_ENGINE);
    mg_ttt_state s;
    from_text(&s, ".../.x./... o");
    mg_mcts_set_root(m, &s, 1, err, sizeof err);
    MG_CHECK(mg_mcts_search(m, &ev, 60, err, sizeof err) == MG_OK);
    check_tree(m, "value count mismatch");
    mg_mcts_stats st;
    mg_mcts_get_stats(m, &st);
    uint8_t hal[9];
    int n = mg_mcts_num_root_edges(m);
    MG_CHECK(n == 8 && st.invalid == calls && calls >= 8);
    mg_mcts_root_edges(m, NULL, NULL, NULL, NULL, NULL, hal);
    for (int i = 0; i < n; i++)
        MG_CHECK(hal[i] == 1);
    mg_mcts_free(m);
}

static void test_reproducible(void)
{
    uint32_t vis[2][9];
    for (int rep = 0; rep < 2; rep++) {
        mg_mcts_config c;
        mg_mcts_config_default(&c);
        c.batch_size = 3;
        c.seed = 42;
        mg_mcts *m = mg_mcts_create(G, &c, err, sizeof err);
        mg_evaluator ev;
        mg_eval_playout_create(&ev, 1, 0, 42, err, sizeof err);
        mg_ttt_state s;
        from_text(&s, ".../.../... x");
        mg_mcts_set_root(m, &s, 0, err, sizeof err);
        mg_mcts_search(m, &ev, 500, err, sizeof err);
        mg_mcts_root_edges(m, NULL, vis[rep], NULL, NULL, NULL, NULL);
        mg_evaluator_free(&ev);
        mg_mcts_free(m);
    }
    MG_CHECK(memcmp(vis[0], vis[1], sizeof vis[0]) == 0);
}

/* ---- State tracking ---- */

/* Plays the true transition with the engine, then corrupts the answer at random. */
typedef struct st_ctx {
    mg_rng rng;
    int garbage;   /* corrupt with probability garbage / 16 */
    int calls;
} st_ctx;

static int st_eval(void *vctx, const mg_game *g, const mg_eval_request *req, mg_eval_result *res, int n,
                   double timeout, char *e, size_t el)
{
    (void)timeout, (void)e, (void)el, (void)g;
    st_ctx *c = vctx;
    c->calls++;
    for (int i = 0; i < n; i++) {
        mg_ttt_state s;
        char terr[MG_ERRLEN];
        mg_eval_result *r = &res[i];
        const char *base = req[i].text ? req[i].text : req[i].parent_text;
        if (G->from_text(&s, NULL, base, terr, sizeof terr) != MG_OK) {
            r->status = MG_EVAL_INVALID; /* a wrong state we cannot follow: say so */
            continue;
        }
        if (!req[i].text) {
            int32_t a;
            if (G->action_from_str(&s, req[i].move, &a, terr, sizeof terr) != MG_OK) {
                r->status = MG_EVAL_INVALID;
                continue;
            }
            G->make(&s, a, NULL);
        }
        G->to_text(&s, r->text, r->text_cap);
        int res_ = G->outcome(&s, NULL);
        r->result = res_;
        int32_t moves[9];
        int k = res_ == MG_ONGOING ? G->legal_actions(&s, moves) : 0;
        r->num_moves = k;
        for (int j = 0; j < k; j++) {
            G->action_to_str(&s, moves[j], r->moves[j], MG_MAX_MOVE_STR);
            r->values[j] = (float)(0.5 + 0.5 * action_value_discounted(&s, moves[j]));
        }
        r->status = MG_EVAL_OK;
        if ((int)mg_rng_below(&c->rng, 16) >= c->garbage)
            continue;
        switch (mg_rng_below(&c->rng, 12)) {
        case 0: /* garbage text with control characters */
            for (size_t j = 0; j + 1 < r->text_cap && j < 40; j++)
                r->text[j] = (char)mg_rng_below(&c->rng, 256);
            r->text[40] = '\0';
            break;
        case 1: /* not NUL-terminated */
            memset(r->text, 'x', r->text_cap);
            break;
        case 2: /* a wrong but well-formed state */
            strcpy(r->text, "xxx/ooo/... x");
            break;
        case 3: /* illegal moves */
            if (k > 0)
                strcpy(r->moves[0], "z9");
            break;
        case 4: /* move without NUL */
            if (k > 0)
                memset(r->moves[0], 'q', MG_MAX_MOVE_STR);
            break;
        case 5: r->num_moves = -3; break;
        case 6: r->num_moves = 100000; break;
        case 7: r->result = 17; break;
        case 8: /* duplicated moves */
            if (k > 1)
                strcpy(r->moves[1], r->moves[0]);
            break;
        case 9: r->values[0] = NAN; r->value = INFINITY; break;
        case 10: r->status = mg_rng_below(&c->rng, 2) ? MG_EVAL_DROPPED : MG_EVAL_INVALID; break;
        default: r->text[0] = '\0'; break;
        }
    }
    return MG_OK;
}

static void test_state_tracking(void)
{
    /* Clean model: same decisions as the engine. */
    {
        mg_mcts_config c;
        mg_mcts_config_default(&c);
        c.mode = MG_EVAL_STATE_TRACKING;
        c.batch_size = 2;
        st_ctx sc;
        memset(&sc, 0, sizeof sc);
        mg_evaluator ev = make_ev("st", st_eval, &sc, 1u << MG_EVAL_STATE_TRACKING);
        mg_mcts *m = mg_mcts_create(NULL, &c, err, sizeof err);
        MG_CHECK(m != NULL);
        MG_CHECK(mg_mcts_set_root(m, "x", 0, err, sizeof err) == MG_ERR);
        MG_CHECK(mg_mcts_set_root_text(m, "x.o/.o./x.. x", 0, 4, err, sizeof err) == MG_OK);
        MG_CHECK(mg_mcts_search(m, &ev, 200, err, sizeof err) == MG_OK);
        check_tree(m, "state tracking");
        int b = mg_mcts_best_edge(m);
        MG_CHECK(b >= 0 && strcmp(mg_mcts_root_move(m, b), "a2") == 0);
        int32_t pv_e[8];
        int len = mg_mcts_pv(m, NULL, pv_e, 8);
        MG_CHECK(len >= 1 && strcmp(mg_mcts_pv_move(m, pv_e, len, 0), "a2") == 0);
        /* Terminal child: the tree learnt the result from the model. */
        MG_CHECK(mg_mcts_advance_move(m, "a2", err, sizeof err) == MG_OK);
        MG_CHECK(strcmp(mg_mcts_root_text(m), "x.o/xo./x.. o") == 0);
        MG_CHECK(mg_mcts_root_result(m) == MG_P0_WINS);
        MG_CHECK(mg_mcts_advance_move(m, "c1", err, sizeof err) == MG_ERR);
        mg_mcts_free(m);
    }
    /* Garbage at random: never a crash (ASan/UBSan run), invariants hold. */
    for (int seed = 0; seed < 30; seed++) {
        mg_mcts_config c;
        mg_mcts_config_default(&c);
        c.mode = MG_EVAL_STATE_TRACKING;
        c.batch_size = 1 + seed % 5;
        c.virtual_count = seed % 3;
        c.seed = (uint64_t)seed;
        st_ctx sc;
        memset(&sc, 0, sizeof sc);
        mg_rng_seed(&sc.rng, (uint64_t)seed + 100);
        sc.garbage = 2 + seed % 12;
        mg_evaluator ev = make_ev("st", st_eval, &sc, 1u << MG_EVAL_STATE_TRACKING);
        mg_mcts *m = mg_mcts_create(G, &c, err, sizeof err);
        MG_CHECK(mg_mcts_set_root_text(m, ".../.../... x", 0, 0, err, sizeof err) == MG_OK);
        MG_CHECK(mg_mcts_search(m, &ev, 300, err, sizeof err) == MG_OK);
        check_tree(m, "state tracking with garbage");
        mg_mcts_stats st;
        mg_mcts_get_stats(m, &st);
        MG_CHECK(st.simulations <= 300);
        if (mg_mcts_num_root_edges(m) > 0) {
            int b = mg_mcts_best_edge(m);
            const char *mv = b >= 0 ? mg_mcts_root_move(m, b) : NULL;
            MG_CHECK(b < 0 || (mv && strlen(mv) > 0 && strlen(mv) < MG_MAX_MOVE_STR));
            /* Reuse whatever subtree the best move has. */
            if (b >= 0 && mg_mcts_advance_move(m, mv, err, sizeof err) == MG_OK) {
                MG_CHECK(mg_mcts_search(m, &ev, 50, err, sizeof err) == MG_OK);
                check_tree(m, "state tracking after advance");
            }
        }
        mg_mcts_free(m);
    }
}

/* A model that answers at random, often invalid: the search spends its whole budget unless
 * every root move is hallucinated (marking nodes whose children all died is progress, not
 * a reason to stop). */
typedef struct rnd_ctx {
    mg_rng rng;
    int pinv;
} rnd_ctx;

static int rnd_eval(void *vctx, const mg_game *g, const mg_eval_request *req, mg_eval_result *res, int n,
                    double timeout, char *e, size_t el)
{
    (void)g, (void)timeout, (void)e, (void)el;
    rnd_ctx *c = vctx;
    for (int i = 0; i < n; i++) {
        mg_eval_result *r = &res[i];
        const char *base = req[i].text ? req[i].text : req[i].parent_text;
        snprintf(r->text, r->text_cap, "%.900s%s%s", base, req[i].move ? "/" : "", req[i].move ? req[i].move : "");
        if (req[i].depth > 0 && (int)mg_rng_below(&c->rng, 100) < c->pinv) {
            r->status = MG_EVAL_INVALID;
            continue;
        }
        int k = 1 + (int)mg_rng_below(&c->rng, 2);
        r->num_moves = k;
        for (int j = 0; j < k; j++) {
            snprintf(r->moves[j], MG_MAX_MOVE_STR, "m%d", j);
            r->values[j] = (float)mg_rng_below(&c->rng, 100) / 100.0f;
        }
        r->status = MG_EVAL_OK;
    }
    return MG_OK;
}

static void test_state_tracking_spends_budget(void)
{
    int full = 0;
    for (int seed = 0; seed < 200; seed++) {
        mg_mcts_config c;
        mg_mcts_config_default(&c);
        c.mode = MG_EVAL_STATE_TRACKING;
        c.batch_size = 1 + seed % 2;
        c.seed = (uint64_t)seed;
        rnd_ctx rc;
        mg_rng_seed(&rc.rng, (uint64_t)seed + 1);
        rc.pinv = 20 + seed % 60;
        mg_evaluator ev = make_ev("rnd", rnd_eval, &rc, 1u << MG_EVAL_STATE_TRACKING);
        mg_mcts *m = mg_mcts_create(NULL, &c, err, sizeof err);
        MG_CHECK(mg_mcts_set_root_text(m, "R", 0, 0, err, sizeof err) == MG_OK);
        MG_CHECK(mg_mcts_search(m, &ev, 200, err, sizeof err) == MG_OK);
        check_tree(m, "random model");
        mg_mcts_stats st;
        mg_mcts_get_stats(m, &st);
        MG_CHECK(st.simulations == 200 || mg_mcts_best_edge(m) < 0);
        full += st.simulations == 200;
        MG_CHECK(strcmp(mg_mcts_root_text(m), "R") == 0);
        mg_mcts_free(m);
    }
    MG_CHECK(full >= 20);
}

/* The root keeps the real game's text even if the model predicts another one for it (or none);
 * its children are asked from the real text. */
typedef struct root_ctx {
    int bad;                 /* depth-1 requests whose parent text is not the root's */
    const char *root_answer; /* the text the model gives for the root */
} root_ctx;

static int wrong_root_eval(void *vctx, const mg_game *g, const mg_eval_request *req, mg_eval_result *res, int n,
                           double timeout, char *e, size_t el)
{
    root_ctx *c = vctx;
    for (int i = 0; i < n; i++)
        if (req[i].depth == 1 && strcmp(req[i].parent_text, "x.o/.o./x.. x") != 0)
            c->bad++;
    st_ctx clean; /* garbage 0: exact answers */
    memset(&clean, 0, sizeof clean);
    int rc = st_eval(&clean, g, req, res, n, timeout, e, el);
    for (int i = 0; i < n; i++)
        if (req[i].depth == 0)
            snprintf(res[i].text, res[i].text_cap, "%s", c->root_answer);
    return rc;
}

static void test_state_tracking_root_text_kept(void)
{
    static const char *const answers[] = {"ooo/.../... x", "", "\x01\x02"}; /* wrong, none, garbage */
    for (int k = 0; k < 3; k++) {
        root_ctx rc = {0, answers[k]};
        mg_mcts_config c;
        mg_mcts_config_default(&c);
        c.mode = MG_EVAL_STATE_TRACKING;
        mg_mcts *m = mg_mcts_create(NULL, &c, err, sizeof err);
        mg_evaluator ev = make_ev("wrong root", wrong_root_eval, &rc, 1u << MG_EVAL_STATE_TRACKING);
        MG_CHECK(mg_mcts_set_root_text(m, "x.o/.o./x.. x", 0, 4, err, sizeof err) == MG_OK);
        MG_CHECK(mg_mcts_search(m, &ev, 50, err, sizeof err) == MG_OK);
        check_tree(m, "wrong root");
        mg_mcts_stats st;
        mg_mcts_get_stats(m, &st);
        MG_CHECK(rc.bad == 0 && st.invalid == 0 && st.dropped == 0);
        MG_CHECK(strcmp(mg_mcts_root_text(m), "x.o/.o./x.. x") == 0);
        int b = mg_mcts_best_edge(m);
        MG_CHECK(b >= 0 && strcmp(mg_mcts_root_move(m, b), "a2") == 0);
        mg_mcts_free(m);
    }
}

/* With the perfect Connect Four oracle the search plays a move of the best solver score. */
static void test_c4_oracle(void)
{
    /* Mid-game positions (fast to solve) where the columns differ in score. */
    static const char *const seqs[] = {"757744575227546572143", "1576615446656251", "112251743457252",
                                       "411761221446441562", "313314712261115537", "21377531224756511224"};
    mg_c4_solver *sv = mg_c4_solver_new(18, err, sizeof err);
    MG_CHECK(sv != NULL);
    for (size_t i = 0; i < sizeof seqs / sizeof seqs[0]; i++) {
        mg_c4_state s;
        if (mg_connect_four.from_text(&s, NULL, seqs[i], err, sizeof err) != MG_OK) {
            fprintf(stderr, "bad sequence %s: %s\n", seqs[i], err);
            T.failed++;
            continue;
        }
        mg_c4_solution sol;
        mg_c4_solve_moves(sv, &s, NULL, &sol);
        int best = -1000;
        for (int c = 0; c < MG_C4_WIDTH; c++)
            if (mg_connect_four.is_legal(&s, c) && sol.move_score[c] > best)
                best = sol.move_score[c];
        for (int bs = 1; bs <= 4; bs *= 4) {
            mg_mcts_config c;
            mg_mcts_config_default(&c);
            c.batch_size = bs;
            mg_mcts *m = mg_mcts_create(&mg_connect_four, &c, err, sizeof err);
            mg_evaluator ev;
            MG_CHECK(mg_eval_c4_solver_create(&ev, 16, 0, err, sizeof err) == MG_OK);
            mg_mcts_set_root(m, &s, (int)s.nmoves, err, sizeof err);
            MG_CHECK(mg_mcts_search(m, &ev, 100, err, sizeof err) == MG_OK);
            check_tree(m, seqs[i]);
            int32_t a = mg_mcts_best_action(m);
            MG_CHECK(a >= 0 && a < MG_C4_WIDTH && sol.move_score[a] == best);
            mg_evaluator_free(&ev);
            mg_mcts_free(m);
        }
    }
    MG_CHECK(mg_eval_c4_score_value(0) == 0.5 && mg_eval_c4_score_value(18) == 1.0 &&
             mg_eval_c4_score_value(-18) == 0.0 && mg_eval_c4_score_value(1) > 0.75 - 1e-9 &&
             mg_eval_c4_score_value(-1) < 0.25);
    mg_c4_solver_free(sv);
}

/* The generic playout (specialised = 0) plays move by move through the interface with the evaluator's
 * seed, even for a game with a specialised playout (Connect Four): each value equals the one of
 * mg_random_playout_moves replayed with the same seed. */
static void test_playout_generic(void)
{
    char err[MG_ERRLEN];
    _Alignas(16) unsigned char s[MG_MAX_STATE], w[MG_MAX_STATE];
    MG_CHECK(mg_connect_four.from_text(s, NULL, "4453", err, sizeof err) == MG_OK);
    mg_evaluator ev;
    MG_CHECK(mg_eval_playout_create(&ev, 1, 0, 77, err, sizeof err) == MG_OK);
    mg_eval_playout_set_specialised(&ev, 0);
    int32_t legal[MG_MAX_MOVES];
    mg_eval_request req;
    memset(&req, 0, sizeof req);
    req.mode = MG_EVAL_ENGINE;
    req.to_move = mg_connect_four.to_move(s);
    req.state = s;
    req.num_legal = mg_connect_four.legal_actions(s, legal);
    req.legal = legal;
    mg_rng rng;
    mg_rng_seed(&rng, 77);
    for (int k = 0; k < 50; k++) {
        mg_eval_result res;
        memset(&res, 0, sizeof res);
        MG_CHECK(ev.evaluate(ev.ctx, &mg_connect_four, &req, &res, 1, 0.0, err, sizeof err) == MG_OK);
        memcpy(w, s, mg_connect_four.state_size);
        int r = mg_random_playout_moves(&mg_connect_four, w, &rng, INT32_MAX, NULL);
        double want = (r == MG_DRAW || r == MG_ONGOING) ? 0.5 : ((r == MG_P0_WINS) == (req.to_move == MG_P0));
        MG_CHECK(res.value == want);
    }
    mg_evaluator_free(&ev);
}

int main(void)
{
    mg_games_init();
    test_config();
    test_prior();
    test_playout_forced_wins();
    test_oracle_selfplay();
    test_virtual_counts();
    test_virtual_count_formula();
    test_robust_child_tie_break();
    test_engine_value_count_mismatch();
    test_chaos();
    test_evaluator_error();
    test_reproducible();
    test_state_tracking();
    test_state_tracking_spends_budget();
    test_state_tracking_root_text_kept();
    test_c4_oracle();
    test_playout_generic();
    MG_TEST_MAIN_END("test_mcts");
}
