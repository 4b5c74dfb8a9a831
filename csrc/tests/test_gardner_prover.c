/* test_gardner_prover.c - the Gardner mate prover: known mates (distances cross-checked with
 * Fairy-Stockfish's mate scores), refutations, "cannot lose", budgets, cancel, bad queries. */
#include <string.h>

#include "../game.h"
#include "../games/gardner/gardner.h"
#include "../games/gardner/gardner_prover.h"
#include "gardner_test_util.h"
#include "mgtest.h"

static mg_gprove_result R;   /* big (the line): one static result, tests run one at a time */

static int prove(mg_gprover *p, const char *fen, int goal, int side, int n, uint64_t max_nodes)
{
    mg_gardner_state s;
    char err[MG_ERRLEN];
    if (load(&s, fen) != MG_OK)
        return -1;
    mg_gprove_query q = {goal, side, n, max_nodes, 0.0, NULL};
    if (mg_gprove(p, &s, &q, &R, err, sizeof err) != MG_OK) {
        fprintf(stderr, "unexpected query error: %s\n", err);
        return -1;
    }
    return R.status;
}

static int stop_now(void *ctx)
{
    (void)ctx;
    return 1;
}

int main(void)
{
    mg_test_counts T = {0, 0};
    mg_games_init();
    char err[MG_ERRLEN];
    mg_gprover *p = mg_gprover_new(16, err, sizeof err);
    MG_CHECK(p != NULL);
    if (!p)
        MG_TEST_MAIN_END("test_gardner_prover");
    MG_CHECK(mg_gprover_tt_bytes(p) == ((size_t)1 << 16) * 16);

    /* Mates whose distance Fairy-Stockfish reports (go depth 14: "mate N"): proven at exactly
     * 2N - 1 plies, and the mate in N - 1 refuted. */
    const mg_known_mate *mates = MG_KNOWN_MATES;
    for (size_t i = 0; i < MG_N_KNOWN_MATES; i++) {
        MG_CHECK(prove(p, mates[i].fen, MG_GPROVE_MATE, mates[i].side, mates[i].moves, 0) == MG_GPROVE_PROVEN);
        MG_CHECK(R.mate_plies == 2 * mates[i].moves - 1 && R.stop == MG_GPROVE_DONE);
        MG_CHECK(R.pv_len == R.mate_plies && line_mates(&R, mates[i].fen, mates[i].side));
        MG_CHECK(R.depth_done == R.mate_plies - 1 && R.rule50_safe == 1 && R.nodes > 0);
        if (mates[i].moves > 1) {
            MG_CHECK(prove(p, mates[i].fen, MG_GPROVE_MATE, mates[i].side, mates[i].moves - 1, 0) == MG_GPROVE_REFUTED);
            MG_CHECK(R.mate_plies == -1 && R.pv_len == 0 && R.depth_done == 2 * mates[i].moves - 3);
        }
        /* the other side has no mate of its own here */
        MG_CHECK(prove(p, mates[i].fen, MG_GPROVE_MATE, 1 - mates[i].side, 1, 0) == MG_GPROVE_REFUTED);
    }
    /* The mate in 1 is the one move a4e4. */
    MG_CHECK(prove(p, mates[0].fen, MG_GPROVE_MATE, 0, 1, 0) == MG_GPROVE_PROVEN);
    MG_CHECK(R.pv_len == 1 && R.pv[0] == 15 + 25 * 19);   /* a4 = 0 + 5 * 3, e4 = 4 + 5 * 3 */

    /* The side to move is mated in 2 of the opponent's moves ("mate -2" for Fairy-Stockfish):
     * the opponent mates within 4 plies, so Black cannot lose within 3 plies but can within 4. */
    const char *lost = "2B1k/2P1p/3PP/p2QK/5 b - - 0 14";
    MG_CHECK(prove(p, lost, MG_GPROVE_MATE, 0, 2, 0) == MG_GPROVE_PROVEN && R.mate_plies == 4);
    MG_CHECK(line_mates(&R, lost, 0) && R.pv_len == 4);
    MG_CHECK(prove(p, lost, MG_GPROVE_MATE, 0, 1, 0) == MG_GPROVE_REFUTED);
    MG_CHECK(prove(p, lost, MG_GPROVE_NO_LOSS, 1, 3, 0) == MG_GPROVE_PROVEN && R.pv_len == 0);
    MG_CHECK(prove(p, lost, MG_GPROVE_NO_LOSS, 1, 4, 0) == MG_GPROVE_REFUTED && R.mate_plies == 4);
    MG_CHECK(line_mates(&R, lost, 0));

    /* The start position: no mate for either side within 9 plies. */
    const char *start = "rnbqk/ppppp/5/PPPPP/RNBQK w - - 0 1";
    MG_CHECK(prove(p, start, MG_GPROVE_MATE, 0, 5, 0) == MG_GPROVE_REFUTED && R.depth_done == 9);
    MG_CHECK(prove(p, start, MG_GPROVE_NO_LOSS, 0, 8, 0) == MG_GPROVE_PROVEN && R.depth_done == 8);

    /* Stalemate is not mate; nor is anything with a lone knight. */
    MG_CHECK(prove(p, "k4/2Q2/1K3/5/5 b - - 0 1", MG_GPROVE_MATE, 0, 3, 0) == MG_GPROVE_REFUTED);
    MG_CHECK(prove(p, "k4/2Q2/1K3/5/5 b - - 0 1", MG_GPROVE_NO_LOSS, 1, 20, 0) == MG_GPROVE_PROVEN);
    MG_CHECK(prove(p, "k4/5/1KN2/5/5 w - - 0 1", MG_GPROVE_MATE, 0, 10, 0) == MG_GPROVE_REFUTED);
    /* K + Q: Qd5 mates at once; after it, Black is mated at the root ("mate within 0 plies"). */
    MG_CHECK(prove(p, "k4/5/1K3/5/3Q1 w - - 0 1", MG_GPROVE_MATE, 0, 1, 0) == MG_GPROVE_PROVEN);
    MG_CHECK(R.mate_plies == 1 && R.pv_len == 1 && R.pv[0] == 3 + 25 * 23);
    MG_CHECK(prove(p, "k2Q1/5/1K3/5/5 b - - 1 1", MG_GPROVE_NO_LOSS, 1, 0, 0) == MG_GPROVE_REFUTED);
    MG_CHECK(R.mate_plies == 0 && R.pv_len == 0);
    MG_CHECK(prove(p, "k2Q1/5/1K3/5/5 b - - 1 1", MG_GPROVE_MATE, 0, 1, 0) == MG_GPROVE_PROVEN && R.mate_plies == 0);

    /* The fifty-move rule flag: a mate in 2 with the clock at 97 may be cut by it. */
    MG_CHECK(prove(p, "r1bkq/2N1p/1Q1p1/PP3/R1BK1 w - - 97 60", MG_GPROVE_MATE, 0, 2, 0) == MG_GPROVE_PROVEN);
    MG_CHECK(R.rule50_safe == 0);

    /* Budgets and cancel leave the answer unknown. */
    mg_gprover_clear(p);
    MG_CHECK(prove(p, mates[5].fen, MG_GPROVE_MATE, 0, 6, 100) == MG_GPROVE_UNKNOWN);
    MG_CHECK(R.stop == MG_GPROVE_NODE_LIMIT && R.nodes <= 101 && R.pv_len == 0);
    {
        mg_gardner_state s;
        load(&s, start);
        mg_gardner_state copy = s;
        mg_cancel cancel;
        mg_cancel_init(&cancel, stop_now, NULL);
        mg_gprove_query q = {MG_GPROVE_MATE, 0, 8, 0, 0.0, &cancel};
        MG_CHECK(mg_gprove(p, &s, &q, &R, err, sizeof err) == MG_OK);
        MG_CHECK(R.status == MG_GPROVE_UNKNOWN && R.stop == MG_GPROVE_CANCELLED);
        mg_gprove_query qt = {MG_GPROVE_MATE, 0, 12, 0, 1e-6, NULL};
        MG_CHECK(mg_gprove(p, &s, &qt, &R, err, sizeof err) == MG_OK);
        MG_CHECK(R.status == MG_GPROVE_UNKNOWN && R.stop == MG_GPROVE_TIME_LIMIT);
        MG_CHECK(memcmp(&s, &copy, sizeof s) == 0);   /* the root is never changed */

        /* The table carries over: a repeated query costs fewer nodes. */
        mg_gprover_clear(p);
        mg_gprove_query q5 = {MG_GPROVE_MATE, 0, 5, 0, 0.0, NULL};
        MG_CHECK(mg_gprove(p, &s, &q5, &R, err, sizeof err) == MG_OK);
        uint64_t cold = R.nodes;
        MG_CHECK(mg_gprove(p, &s, &q5, &R, err, sizeof err) == MG_OK);
        MG_CHECK(R.status == MG_GPROVE_REFUTED && R.nodes < cold / 10);

        /* Bad queries are refused with a message naming the value. */
        mg_gprove_query bad[] = {
            {MG_GPROVE_MATE, 2, 3, 0, 0.0, NULL},
            {MG_GPROVE_MATE, 0, 0, 0, 0.0, NULL},
            {MG_GPROVE_MATE, 0, 61, 0, 0.0, NULL},
            {MG_GPROVE_NO_LOSS, 0, -1, 0, 0.0, NULL},
            {7, 0, 3, 0, 0.0, NULL},
            {MG_GPROVE_MATE, 0, 3, 0, -1.0, NULL},
        };
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            err[0] = 0;
            MG_CHECK(mg_gprove(p, &s, &bad[i], &R, err, sizeof err) == MG_ERR && err[0] != 0);
        }
        MG_CHECK(strstr((mg_gprove(p, &s, &bad[0], &R, err, sizeof err), err), "not 2") != NULL);
    }
    MG_CHECK(mg_gprover_new(5, err, sizeof err) == NULL && strstr(err, "2^5") != NULL);
    mg_gprover_free(p);
    MG_TEST_MAIN_END("test_gardner_prover");
}
