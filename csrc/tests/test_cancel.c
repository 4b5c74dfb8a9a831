/* test_cancel.c - cooperative cancellation (cancel.h) in perft, the solvers and both MCTS. */
#include <stdlib.h>
#include <string.h>

#include "../cancel.h"
#include "../game.h"
#include "../games/chess/chess.h"
#include "../games/connect_four/connect_four.h"
#include "../games/hex/hex.h"
#include "../games/connect_four/c4_solver.h"
#include "../games/hex/hex_solver.h"
#include "../search/mcts.h"
#include "../search/playout_mcts.h"
#include "mgtest.h"

static mg_test_counts T;

/* Asks to stop at its `stop_at`-th poll (0: never); counts the polls. */
typedef struct countdown {
    int polls, stop_at;
} countdown;

static int poll_countdown(void *ctx)
{
    countdown *c = ctx;
    c->polls++;
    return c->stop_at && c->polls >= c->stop_at;
}

static void test_mechanism(void)
{
    MG_CHECK(mg_cancel_tick(NULL) == 0 && mg_cancel_check(NULL) == 0);
    countdown cd = {0, 2};
    mg_cancel c;
    mg_cancel_init(&c, poll_countdown, &cd);
    int ticks = 0;
    while (!mg_cancel_tick(&c))
        ticks++;
    MG_CHECK(cd.polls == 2 && c.stopped == 1);
    MG_CHECK(ticks == 2 * MG_CANCEL_EVERY + 1); /* polls at ticks EVERY+1 and 2*EVERY+2 */
    int polls = cd.polls;
    MG_CHECK(mg_cancel_tick(&c) && mg_cancel_check(&c) && cd.polls == polls); /* sticky, no more polls */
    mg_cancel none;
    mg_cancel_init(&none, NULL, NULL);
    for (int i = 0; i < 10 * MG_CANCEL_EVERY; i++)
        MG_CHECK(!mg_cancel_tick(&none));
}

static void test_perft(void)
{
    const mg_game *games[] = {&mg_chess, &mg_connect_four, &mg_hex, mg_game_by_name("gardner"),
                              mg_game_by_name("tictactoe")};
    const int depth[] = {6, 10, 4, 6, 9};
    for (size_t i = 0; i < sizeof games / sizeof games[0]; i++) {
        const mg_game *g = games[i];
        _Alignas(16) unsigned char st[MG_MAX_STATE], before[MG_MAX_STATE];
        mg_config cfg = {5, 0};
        char err[MG_ERRLEN];
        MG_CHECK(g->init(st, g == &mg_hex ? &cfg : NULL, err, sizeof err) == MG_OK);
        memcpy(before, st, g->state_size);
        countdown never = {0, 0};
        mg_cancel c;
        mg_cancel_init(&c, poll_countdown, &never);
        uint64_t full = mg_perft_cancel(g, st, depth[i], &c);
        MG_CHECK(!c.stopped && full == mg_perft(g, st, depth[i]));
        if (g != mg_game_by_name("tictactoe"))
            MG_CHECK(never.polls > 3); /* the deep searches do poll */
        countdown cd = {0, 3};
        mg_cancel_init(&c, poll_countdown, &cd);
        uint64_t part = mg_perft_cancel(g, st, depth[i], &c);
        if (never.polls >= 3) {
            MG_CHECK(c.stopped && part < full && cd.polls == 3);
        }
        MG_CHECK(memcmp(st, before, g->state_size) == 0); /* the state is restored */
        int32_t moves[MG_MAX_MOVES];
        uint64_t counts[MG_MAX_MOVES];
        cd.polls = 0;
        mg_cancel_init(&c, poll_countdown, &cd);
        mg_perft_divide(g, st, depth[i], moves, counts, &c);
        MG_CHECK(memcmp(st, before, g->state_size) == 0);
        if (never.polls >= 3)
            MG_CHECK(c.stopped);
    }
}

/* A Connect Four perft deeper than the empty cells counts 0 at once: it used to walk every game to its
 * end in the recursion above the lean subtrees, where no node ticked, so nothing could stop it. */
static void test_c4_perft_past_the_end(void)
{
    char err[MG_ERRLEN];
    mg_c4_state s;
    MG_CHECK(mg_c4_from_moves(&s, "", err, sizeof err) == MG_OK);
    countdown cd = {0, 3};
    mg_cancel c;
    mg_cancel_init(&c, poll_countdown, &cd);
    MG_CHECK(mg_perft_cancel(&mg_connect_four, &s, 43, &c) == 0 && mg_perft(&mg_connect_four, &s, 64) == 0);
    MG_CHECK(mg_c4_from_moves(&s, "4125166471521345675467154146577722", err, sizeof err) == MG_OK); /* 8 empty */
    MG_CHECK(mg_perft(&mg_connect_four, &s, 8) == mg_perft_generic(&mg_connect_four, &s, 8, NULL));
    MG_CHECK(mg_perft(&mg_connect_four, &s, 8) > 0 && mg_perft(&mg_connect_four, &s, 9) == 0);
    MG_CHECK(mg_perft_generic(&mg_connect_four, &s, 9, NULL) == 0);
}

static void test_solvers(void)
{
    char err[MG_ERRLEN];
    mg_c4_solver *sv = mg_c4_solver_new(16, err, sizeof err);
    MG_CHECK(sv != NULL);
    mg_c4_state s;
    MG_CHECK(mg_c4_from_moves(&s, "", err, sizeof err) == MG_OK);
    countdown cd = {0, 2};
    mg_cancel c;
    mg_cancel_init(&c, poll_countdown, &cd);
    mg_c4_limits lim = {0, 0.0, 0, &c};
    mg_c4_solution sol;
    MG_CHECK(mg_c4_solve_moves(sv, &s, &lim, &sol) == MG_OK);
    MG_CHECK(!sol.complete && c.stopped && cd.polls == 2 && sol.nodes < 3 * 4096 + 100);
    mg_c4_solver_free(sv);

    mg_hex_state h;
    mg_config cfg = {6, 0};
    MG_CHECK(mg_hex.init(&h, &cfg, err, sizeof err) == MG_OK);
    cd.polls = 0;
    mg_cancel_init(&c, poll_countdown, &cd);
    mg_hex_solution hs;
    MG_CHECK(mg_hex_solve(&h, 0, &c, &hs, err, sizeof err) == MG_OK);
    MG_CHECK(!hs.complete && c.stopped && hs.nodes <= 2 * (MG_CANCEL_EVERY + 1) + 64);
}

static void test_searches(void)
{
    char err[MG_ERRLEN];
    _Alignas(16) unsigned char st[MG_MAX_STATE];
    MG_CHECK(mg_chess.init(st, NULL, err, sizeof err) == MG_OK);
    mg_pmcts_config pc;
    mg_pmcts_config_default(&pc);
    pc.simulations = 1000000;
    countdown cd = {0, 3};
    mg_cancel c;
    mg_cancel_init(&c, poll_countdown, &cd);
    pc.cancel = &c;
    mg_pmcts_result *r = malloc(sizeof *r);
    MG_CHECK(mg_playout_mcts(&mg_chess, st, &pc, r, err, sizeof err) == MG_OK);
    MG_CHECK(c.stopped && cd.polls == 3); /* the tree is freed (ASan's leak check) */
    /* the simulations done so far: two polls passed, the third stopped it */
    MG_CHECK(r->stopped && r->simulations > 2 * MG_CANCEL_EVERY && r->simulations <= 3 * (MG_CANCEL_EVERY + 1));
    {
        uint64_t vsum = 0;
        for (int i = 0; i < r->nmoves; i++)
            vsum += r->visits[i];
        MG_CHECK(vsum == (uint64_t)r->simulations && r->value >= 0.0 && r->value <= 1.0);
    }
    /* a stop before the first simulation has nothing to report */
    cd.polls = 0;
    cd.stop_at = 1;
    mg_cancel_init(&c, poll_countdown, &cd);
    c.left = 0;
    MG_CHECK(mg_playout_mcts(&mg_chess, st, &pc, r, err, sizeof err) == MG_ERR && strstr(err, "interrupted"));
    free(r);

    mg_mcts_config mc;
    mg_mcts_config_default(&mc);
    mg_mcts *m = mg_mcts_create(&mg_chess, &mc, err, sizeof err);
    MG_CHECK(m != NULL);
    mg_evaluator ev;
    MG_CHECK(mg_eval_playout_create(&ev, 1, 0, 7, err, sizeof err) == MG_OK);
    MG_CHECK(mg_mcts_set_root(m, st, 0, err, sizeof err) == MG_OK);
    cd.polls = 0;
    cd.stop_at = 40;
    mg_cancel_init(&c, poll_countdown, &cd);
    MG_CHECK(mg_mcts_search_cancel(m, &ev, 100000000, &c, err, sizeof err) == MG_ERR && strstr(err, "interrupted"));
    MG_CHECK(c.stopped && mg_mcts_check(m, err, sizeof err) == MG_OK);
    uint32_t visits = mg_mcts_root_visits(m);
    MG_CHECK(visits > 0 && visits < 100000000u);
    MG_CHECK(mg_mcts_search_cancel(m, &ev, 20, NULL, err, sizeof err) == MG_OK); /* goes on */
    MG_CHECK(mg_mcts_root_visits(m) >= visits + 20 && mg_mcts_check(m, err, sizeof err) == MG_OK);
    mg_evaluator_free(&ev);
    mg_mcts_free(m);
}

int main(void)
{
    mg_games_init();
    test_mechanism();
    test_perft();
    test_c4_perft_past_the_end();
    test_solvers();
    test_searches();
    MG_TEST_MAIN_END("test_cancel");
}
