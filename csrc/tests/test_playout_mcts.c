/* test_playout_mcts.c - UCT with random playouts: bookkeeping on every game, tactics in
 * tic-tac-toe, and agreement with the exact Hex solver on small boards. */
#include <math.h>
#include <string.h>

#include "../game.h"
#include "../games/hex/hex.h"
#include "../games/hex/hex_solver.h"
#include "../search/playout_mcts.h"
#include "mgtest.h"

static mg_pmcts_result R1, R2;

/* Invariants of any result: moves = legal moves, visits add up, value = visit-weighted q. */
static void check_result(mg_test_counts *t, const mg_game *g, const void *st, const mg_pmcts_config *cfg,
                         const mg_pmcts_result *r)
{
    int32_t moves[MG_MAX_MOVES];
    int k = g->legal_actions(st, moves);
    MG_CHECK_T(t, r->nmoves == k);
    uint64_t total = 0;
    double wsum = 0.0;
    for (int i = 0; i < k && i < r->nmoves; i++) {
        MG_CHECK_T(t, r->actions[i] == moves[i]);
        total += r->visits[i];
        if (r->visits[i]) {
            MG_CHECK_T(t, r->q[i] >= 0.0 && r->q[i] <= 1.0);
            wsum += r->q[i] * r->visits[i];
        } else {
            MG_CHECK_T(t, isnan(r->q[i]));
        }
    }
    MG_CHECK_EQ_U64_T(t, total, cfg->simulations);
    MG_CHECK_T(t, fabs(wsum / cfg->simulations - r->value) < 1e-9);
    MG_CHECK_T(t, r->nodes >= 1 && r->nodes <= (uint32_t)cfg->simulations + 1);
    MG_CHECK_T(t, r->best >= 0 && r->best < k);
    for (int i = 0; i < k; i++)
        MG_CHECK_T(t, r->visits[i] <= r->visits[r->best]);
}

static int32_t best_action(const mg_pmcts_result *r) { return r->actions[r->best]; }

static void test_every_game(mg_test_counts *t)
{
    char err[MG_ERRLEN];
    unsigned char st[MG_MAX_STATE];
    for (int i = 0; i < mg_game_count(); i++) {
        const mg_game *g = mg_game_at(i);
        MG_CHECK_T(t, g->init(st, NULL, err, sizeof err) == MG_OK);
        mg_pmcts_config cfg;
        mg_pmcts_config_default(&cfg);
        cfg.simulations = 60;
        cfg.max_playout_plies = 300;
        cfg.seed = 11;
        unsigned char copy[MG_MAX_STATE];
        memcpy(copy, st, g->state_size);
        int ok = mg_playout_mcts(g, st, &cfg, &R1, err, sizeof err) == MG_OK;
        MG_CHECK_T(t, ok);
        if (!ok) {
            fprintf(stderr, "  %s: %s\n", g->name, err);
            continue;
        }
        MG_CHECK_T(t, memcmp(copy, st, g->state_size) == 0); /* root untouched */
        check_result(t, g, st, &cfg, &R1);
        /* reproducible */
        MG_CHECK_T(t, mg_playout_mcts(g, st, &cfg, &R2, err, sizeof err) == MG_OK);
        MG_CHECK_T(t, memcmp(R1.visits, R2.visits, sizeof R1.visits) == 0 && R1.value == R2.value);
    }
}

static void test_tictactoe(mg_test_counts *t)
{
    const mg_game *g = mg_game_by_name("tictactoe");
    char err[MG_ERRLEN];
    unsigned char st[MG_MAX_STATE];
    mg_pmcts_config cfg;
    mg_pmcts_config_default(&cfg);
    cfg.simulations = 3000;
    /* x wins at c3 (action 8) */
    MG_CHECK_T(t, g->from_text(st, NULL, "xx./oo./... x", err, sizeof err) == MG_OK);
    MG_CHECK_T(t, mg_playout_mcts(g, st, &cfg, &R1, err, sizeof err) == MG_OK);
    check_result(t, g, st, &cfg, &R1);
    MG_CHECK_T(t, best_action(&R1) == 8 && R1.q[R1.best] == 1.0);
    /* o must block at c3 */
    MG_CHECK_T(t, g->from_text(st, NULL, "xx./o../... o", err, sizeof err) == MG_OK);
    MG_CHECK_T(t, mg_playout_mcts(g, st, &cfg, &R1, err, sizeof err) == MG_OK);
    check_result(t, g, st, &cfg, &R1);
    MG_CHECK_T(t, best_action(&R1) == 8);
    /* different seeds give different (valid) searches */
    cfg.simulations = 500;
    cfg.seed = 1;
    MG_CHECK_T(t, g->init(st, NULL, err, sizeof err) == MG_OK);
    MG_CHECK_T(t, mg_playout_mcts(g, st, &cfg, &R1, err, sizeof err) == MG_OK);
    cfg.seed = 2;
    MG_CHECK_T(t, mg_playout_mcts(g, st, &cfg, &R2, err, sizeof err) == MG_OK);
    check_result(t, g, st, &cfg, &R2);
    MG_CHECK_T(t, memcmp(R1.visits, R2.visits, sizeof R1.visits) != 0);
    /* bad inputs */
    cfg.simulations = 0;
    err[0] = '\0';
    MG_CHECK_T(t, mg_playout_mcts(g, st, &cfg, &R1, err, sizeof err) == MG_ERR && strstr(err, "simulations"));
    cfg.simulations = 10;
    cfg.c = -1.0;
    MG_CHECK_T(t, mg_playout_mcts(g, st, &cfg, &R1, err, sizeof err) == MG_ERR && strstr(err, "exploration"));
    cfg.c = NAN;
    MG_CHECK_T(t, mg_playout_mcts(g, st, &cfg, &R1, err, sizeof err) == MG_ERR);
    cfg.c = 1.0;
    cfg.max_playout_plies = -1;
    MG_CHECK_T(t, mg_playout_mcts(g, st, &cfg, &R1, err, sizeof err) == MG_ERR);
    cfg.max_playout_plies = 0;
    MG_CHECK_T(t, g->from_text(st, NULL, "xxx/oo./... o", err, sizeof err) == MG_OK);
    MG_CHECK_T(t, mg_playout_mcts(g, st, &cfg, &R1, err, sizeof err) == MG_ERR && strstr(err, "over"));
}

/* Exhaustive tic-tac-toe value (+1 / 0 / -1 for the player to move). */
static int ttt_value(const mg_game *g, void *st)
{
    int r = g->outcome(st, NULL);
    if (r == MG_DRAW)
        return 0;
    if (r != MG_ONGOING)
        return -1;
    int32_t moves[MG_MAX_MOVES];
    unsigned char undo[MG_MAX_UNDO];
    int k = g->legal_actions(st, moves), best = -2;
    for (int i = 0; i < k; i++) {
        g->make(st, moves[i], undo);
        int v = -ttt_value(g, st);
        g->unmake(st, moves[i], undo);
        if (v > best)
            best = v;
    }
    return best;
}

/* In these positions UCT's chosen move keeps the exact game value. */
static void test_tictactoe_exact(mg_test_counts *t)
{
    const mg_game *g = mg_game_by_name("tictactoe");
    char err[MG_ERRLEN];
    unsigned char st[MG_MAX_STATE], undo[MG_MAX_UNDO];
    const char *pos[] = {"o../.x./x.o x", "x../.o./... x", "x.o/.../... x", ".../.x./... o", "xo./.../... x"};
    mg_pmcts_config cfg;
    mg_pmcts_config_default(&cfg);
    cfg.simulations = 20000;
    for (size_t i = 0; i < sizeof pos / sizeof pos[0]; i++) {
        MG_CHECK_T(t, g->from_text(st, NULL, pos[i], err, sizeof err) == MG_OK);
        int v = ttt_value(g, st);
        MG_CHECK_T(t, mg_playout_mcts(g, st, &cfg, &R1, err, sizeof err) == MG_OK);
        g->make(st, best_action(&R1), undo);
        int vb = -ttt_value(g, st);
        MG_CHECK_T(t, vb == v);
        if (vb != v)
            fprintf(stderr, "  %s: value %d, UCT's move %d has %d\n", pos[i], v, best_action(&R1), vb);
    }
}

/* Hex: UCT against the exact solver (with the move-by-move and the fill playout). */
static void test_hex_vs_solver(mg_test_counts *t, int fill)
{
    const mg_game *g = &mg_hex;
    char err[MG_ERRLEN];
    mg_hex_state s;
    static mg_hex_solution sol;
    struct {
        const char *text;
        int sims;
    } pos[] = {
        {".../.../... x", 3000},
        {"..../..../..../.... x", 20000},
        {"x.../.o../..../.... x", 20000},
        {"...../...../..x../...o./..... x", 40000},
    };
    int wins_best = 0;
    for (size_t i = 0; i < sizeof pos / sizeof pos[0]; i++) {
        MG_CHECK_T(t, g->from_text(&s, NULL, pos[i].text, err, sizeof err) == MG_OK);
        MG_CHECK_T(t, mg_hex_solve(&s, 0, NULL, &sol, err, sizeof err) == MG_OK && sol.complete);
        mg_pmcts_config cfg;
        mg_pmcts_config_default(&cfg);
        cfg.simulations = pos[i].sims;
        cfg.seed = 3;
        cfg.playout = fill ? mg_hex_fill_playout : NULL;
        MG_CHECK_T(t, mg_playout_mcts(g, &s, &cfg, &R1, err, sizeof err) == MG_OK);
        check_result(t, g, &s, &cfg, &R1);
        double qw = 0, ql = 0;
        int nw = 0, nl = 0;
        for (int k = 0; k < R1.nmoves; k++) {
            int v = sol.move_value[R1.actions[k]];
            if (v > 0) {
                qw += R1.q[k];
                nw++;
            } else {
                ql += R1.q[k];
                nl++;
            }
        }
        int best_wins = sol.move_value[best_action(&R1)] == 1;
        wins_best += best_wins;
        MG_CHECK_T(t, sol.value == 1 && best_wins);
        if (nw && nl)
            MG_CHECK_T(t, qw / nw > ql / nl);
        if (!best_wins)
            fprintf(stderr, "  %s (fill %d): UCT's best move %d loses\n", pos[i].text, fill, best_action(&R1));
    }
    MG_CHECK_T(t, wins_best == (int)(sizeof pos / sizeof pos[0]));
}

int main(void)
{
    mg_test_counts T = {0, 0};
    mg_games_init();
    test_every_game(&T);
    test_tictactoe(&T);
    test_tictactoe_exact(&T);
    test_hex_vs_solver(&T, 0);
    test_hex_vs_solver(&T, 1);
    MG_TEST_MAIN_END("test_playout_mcts");
}
