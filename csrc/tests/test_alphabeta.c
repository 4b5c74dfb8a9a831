/* test_alphabeta.c - the baseline and probability-threshold alpha-beta: mates, a fork, equal results
 * with and without the transposition table, the guided search with a uniform policy equal to the
 * baseline at the same depth, budgets, cancellation and policy errors. */
#include <stdio.h>
#include <string.h>

#include "../game.h"
#include "../games/chess/chess_alphabeta.h"
#include "../games/chess/chess_pst.h"
#include "mgtest.h"

static mg_test_counts T;

static mg_chess_state load(const char *fen)
{
    mg_chess_state s;
    char err[MG_ERRLEN] = "";
    if (mg_chess_from_fen(&s, 0, fen, err, sizeof err) != MG_OK)
        fprintf(stderr, "FEN error: %s\n", err);
    return s;
}

static int32_t action(const mg_chess_state *s, const char *uci)
{
    int32_t a = -1;
    char err[MG_ERRLEN];
    if (mg_chess.action_from_str(s, uci, &a, err, sizeof err) != MG_OK)
        fprintf(stderr, "move error: %s\n", err);
    return a;
}

static mg_ab_result run(const char *fen, const mg_ab_params *p, mg_ab_workspace *ws, mg_cancel *c)
{
    mg_chess_state s = load(fen);
    mg_ab_result r;
    char err[MG_ERRLEN] = "";
    if (mg_ab_search(&s, NULL, NULL, p, ws, c, &r, err, sizeof err) != 0)
        fprintf(stderr, "search error: %s\n", err);
    return r;
}

static mg_ab_params base(int depth, int tt)
{
    mg_ab_params p = {.depth = depth, .use_tt = tt, .batch = 1};
    return p;
}

static mg_ab_params guided(int depth, double threshold, mg_ab_policy_fn fn, void *ctx, int batch)
{
    mg_ab_params p = {.depth = depth, .threshold = threshold, .policy = fn, .policy_ctx = ctx, .batch = batch};
    return p;
}

static const char *MATE1 = "6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1";
static const char *MATE2 = "r1bq2r1/b4pk1/p1pp1p2/1p2pP2/1P2P1PB/3P4/1PPQ2P1/R3K2R w - - 0 1";
static const char *FORK = "6k1/3q4/8/8/4N3/8/P7/4K3 w - - 0 1";
static const char *POSITIONS[] = {
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3",
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
    "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
    "6k1/3q4/8/8/4N3/8/P7/4K3 w - - 0 1",
};

/* A callback policy: captures 10, other legal moves 1 (with uniform = 1: every move 1). */
typedef struct counting_policy {
    int calls, positions, fail_after, uniform;
} counting_policy;

static int test_policy(void *ctx, const mg_ab_query *q, int n, float *out)
{
    counting_policy *c = ctx;
    if (c->fail_after >= 0 && c->calls >= c->fail_after)
        return -1;
    c->calls++;
    c->positions += n;
    for (int i = 0; i < n; i++) {
        float *o = out + (size_t)i * MG_POLICY_MOVES;
        int32_t acts[MG_CHESS_MAX_MOVES];
        int16_t idx[MG_CHESS_MAX_MOVES];
        int k = mg_policy_legal(q[i].state, acts, idx);
        for (int m = 0; m < MG_POLICY_MOVES; m++)
            o[m] = 0.0f;
        /* captures get 10x the weight of other moves (a crude but not uniform policy) */
        for (int m = 0; m < k; m++) {
            int to = (acts[m] >> 6) & 63, victim = q[i].state->board[to];
            o[idx[m]] = (!c->uniform && victim && (victim >> 3) != q[i].state->stm) ? 10.0f : 1.0f;
        }
        if (q[i].prev1 == NULL || q[i].prev2 == NULL)
            return -1;
    }
    return 0;
}

static void test_mates_and_tactics(mg_ab_workspace *ws)
{
    mg_chess_state s1 = load(MATE1), s2 = load(MATE2), sf = load(FORK);
    for (int tt = 0; tt <= 1; tt++) {
        mg_ab_params p = base(4, tt);
        mg_ab_result r = run(MATE1, &p, ws, NULL);
        MG_CHECK(r.best == action(&s1, "a1a8") && r.score == MG_AB_MATE - 1 && r.complete && r.pv_len >= 1);
        r = run(MATE2, &p, ws, NULL);
        MG_CHECK(r.best == action(&s2, "d2h6") && r.score == MG_AB_MATE - 3 && r.pv_len == 3);
        r = run(FORK, &p, ws, NULL);
        MG_CHECK(r.best == action(&sf, "e4f6") && r.score > 300);
        MG_CHECK(r.iterations == 4 && r.nodes > 100);
    }
    counting_policy cp = {0, 0, -1, 0};
    mg_ab_params g = guided(8, 0.001, test_policy, &cp, 8);
    mg_ab_result r = run(MATE1, &g, ws, NULL);
    MG_CHECK(r.best == action(&s1, "a1a8") && r.score == MG_AB_MATE - 1 && r.complete);
    MG_CHECK(cp.calls > 1 && r.policy_calls == (uint64_t)cp.calls && r.policy_positions == (uint64_t)cp.positions);
    r = run(MATE2, &g, ws, NULL);
    MG_CHECK(r.best == action(&s2, "d2h6") && r.score == MG_AB_MATE - 3);
    mg_ab_params u = guided(8, 0.001, NULL, NULL, 1); /* the uniform policy */
    r = run(FORK, &u, ws, NULL);
    MG_CHECK(r.best == action(&sf, "e4f6") && r.score > 300 && r.policy_calls == 0);
}

static void test_tt_equal_and_uniform_equals_baseline(mg_ab_workspace *ws)
{
    for (size_t i = 0; i < sizeof POSITIONS / sizeof *POSITIONS; i++) {
        mg_ab_params p0 = base(4, 0), p1 = base(4, 1), p3 = base(3, 0);
        mg_ab_result a = run(POSITIONS[i], &p0, ws, NULL), b = run(POSITIONS[i], &p1, ws, NULL);
        MG_CHECK(a.score == b.score && a.complete && b.complete);
        if (a.score != b.score)
            fprintf(stderr, "  position %zu: %d without the table, %d with\n", i, a.score, b.score);
        /* the uniform policy with a tiny threshold expands every node to max_depth: the full-width search */
        mg_ab_params u = guided(3, 1e-12, NULL, NULL, 1);
        mg_ab_result c = run(POSITIONS[i], &p3, ws, NULL), d = run(POSITIONS[i], &u, ws, NULL);
        MG_CHECK(c.score == d.score);
        /* and a callback policy that is uniform gives the same as well (batching changes nothing) */
        counting_policy cp = {0, 0, -1, 1};
        mg_ab_params g = guided(2, 1e-12, test_policy, &cp, 64);
        mg_ab_params p2 = base(2, 0);
        mg_ab_result e = run(POSITIONS[i], &g, ws, NULL), f = run(POSITIONS[i], &p2, ws, NULL);
        MG_CHECK(e.score == f.score && e.policy_calls >= 1);
    }
}

static int stop_after(void *ctx)
{
    int *left = ctx;
    return --*left <= 0;
}

static void test_budgets(mg_ab_workspace *ws)
{
    mg_ab_params p = base(6, 1);
    p.max_nodes = 2000;
    mg_ab_result r = run(POSITIONS[2], &p, ws, NULL);
    mg_chess_state s = load(POSITIONS[2]);
    MG_CHECK(r.stop == MG_AB_STOP_NODES && !r.complete && r.nodes <= 2001 && mg_chess.is_legal(&s, r.best));
    MG_CHECK(r.iterations >= 1 && r.iterations < 6);
    int left = 5;
    mg_cancel c;
    mg_cancel_init(&c, stop_after, &left);
    mg_ab_params q = base(8, 0);
    r = run(POSITIONS[2], &q, ws, &c);
    MG_CHECK(r.stop == MG_AB_STOP_CANCEL && !r.complete && mg_chess.is_legal(&s, r.best));
    counting_policy cp = {0, 0, 3, 0};
    mg_ab_params g = guided(8, 0.001, test_policy, &cp, 4);
    r = run(POSITIONS[1], &g, ws, NULL);
    MG_CHECK(r.stop == MG_AB_STOP_POLICY && !r.complete && cp.calls == 3);
    /* bad parameters */
    char err[MG_ERRLEN] = "";
    mg_ab_params bad = base(0, 0);
    MG_CHECK(mg_ab_search(&s, NULL, NULL, &bad, ws, NULL, &r, err, sizeof err) == -1 && strstr(err, "depth"));
    bad = guided(8, 1.5, NULL, NULL, 1);
    MG_CHECK(mg_ab_params_check(&bad, err, sizeof err) == -1 && strstr(err, "threshold"));
    bad = guided(8, 0.01, NULL, NULL, 0);
    MG_CHECK(mg_ab_params_check(&bad, err, sizeof err) == -1 && strstr(err, "batch"));
    /* terminal roots: mated, stalemated */
    mg_ab_params p2 = base(2, 0);
    r = run("R5k1/5ppp/8/8/8/8/8/6K1 b - - 0 1", &p2, ws, NULL);
    MG_CHECK(r.best == -1 && r.score == -MG_AB_MATE && r.complete);
    r = run("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1", &p2, ws, NULL);
    MG_CHECK(r.best == -1 && r.score == 0);
}

static void test_eval(void)
{
    mg_chess_state s = load(POSITIONS[0]);
    MG_CHECK(mg_pst_eval(&s) == 0); /* symmetric start */
    s = load("4k3/8/8/8/8/8/8/Q3K3 w - - 0 1");
    int w = mg_pst_eval(&s);
    s = load("4k3/8/8/8/8/8/8/Q3K3 b - - 0 1");
    MG_CHECK(w > 800 && mg_pst_eval(&s) == -w);
    MG_CHECK(mg_pst_square(MG_CH_PAWN, 12) == 100 - 20 && mg_pst_square(8 | MG_CH_PAWN, 52) == 100 - 20);
}

int main(void)
{
    mg_games_init();
    mg_ab_workspace *ws = mg_ab_workspace_new(16);
    MG_CHECK(ws != NULL);
    MG_CHECK(mg_ab_workspace_new(40) == NULL);
    test_eval();
    test_mates_and_tactics(ws);
    test_tt_equal_and_uniform_equals_baseline(ws);
    test_budgets(ws);
    mg_ab_workspace_free(ws);
    MG_TEST_MAIN_END("test_alphabeta");
}
