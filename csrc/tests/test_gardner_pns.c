/* test_gardner_pns.c - the depth-bounded proof-number search against the exhaustive prover:
 * the same answers on mates in 1 to 6 and their refutations, sound lines, budgets, bad queries. */
#include <string.h>

#include "../game.h"
#include "../games/gardner/gardner.h"
#include "../games/gardner/gardner_pns.h"
#include "../games/gardner/gardner_prover.h"
#include "gardner_test_util.h"
#include "mgtest.h"

static mg_gprove_result R, A;   /* big (the line): static results, tests run one at a time */

/* Runs the same query with PNS (into R) and, if ab != NULL, the exhaustive prover (into A). */
static int both(mg_gpns *p, mg_gprover *ab, const char *fen, int goal, int side, int n, uint64_t max_nodes)
{
    mg_gardner_state s;
    char err[MG_ERRLEN];
    if (load(&s, fen) != MG_OK)
        return -1;
    mg_gprove_query q = {goal, side, n, max_nodes, 0.0, NULL};
    if (mg_gpns_prove(p, &s, &q, &R, err, sizeof err) != MG_OK) {
        fprintf(stderr, "unexpected query error: %s\n", err);
        return -1;
    }
    if (ab && mg_gprove(ab, &s, &q, &A, err, sizeof err) != MG_OK)
        return -1;
    return R.status;
}

int main(void)
{
    mg_test_counts T = {0, 0};
    mg_games_init();
    char err[MG_ERRLEN];
    mg_gpns *p = mg_gpns_new(16, err, sizeof err);
    mg_gprover *ab = mg_gprover_new(16, err, sizeof err);
    MG_CHECK(p != NULL && ab != NULL);
    if (!p || !ab)
        MG_TEST_MAIN_END("test_gardner_pns");
    MG_CHECK(mg_gpns_tt_bytes(p) == ((size_t)1 << 16) * 24);

    /* Mates whose exact distance the exhaustive prover (and Fairy-Stockfish) gives: PNS proves
     * the same claim with a proof tree of exactly that depth, and refutes the mate one move shorter. */
    const mg_known_mate *mates = MG_KNOWN_MATES;
    for (size_t i = 0; i < MG_N_KNOWN_MATES; i++) {
        const int m = mates[i].moves;
        MG_CHECK(both(p, ab, mates[i].fen, MG_GPROVE_MATE, mates[i].side, m, 0) == MG_GPROVE_PROVEN);
        MG_CHECK(A.status == MG_GPROVE_PROVEN && R.mate_plies == A.mate_plies && R.stop == MG_GPROVE_DONE);
        MG_CHECK(R.pv_len == R.mate_plies && line_mates(&R, mates[i].fen, mates[i].side));
        MG_CHECK(R.depth_done == -1 && R.rule50_safe == 1 && R.nodes > 0);
        /* a looser bound: still proven, the proof no deeper than the bound */
        MG_CHECK(both(p, NULL, mates[i].fen, MG_GPROVE_MATE, mates[i].side, m + 2, 0) == MG_GPROVE_PROVEN);
        MG_CHECK(R.mate_plies >= A.mate_plies && R.mate_plies <= 2 * (m + 2) - 1 && R.pv_len == R.mate_plies);
        MG_CHECK(line_mates(&R, mates[i].fen, mates[i].side));
        if (m > 1) {
            MG_CHECK(both(p, ab, mates[i].fen, MG_GPROVE_MATE, mates[i].side, m - 1, 0) == MG_GPROVE_REFUTED);
            MG_CHECK(A.status == MG_GPROVE_REFUTED && R.mate_plies == -1 && R.pv_len == 0);
            MG_CHECK(R.depth_done == 2 * m - 3);
        }
        MG_CHECK(both(p, ab, mates[i].fen, MG_GPROVE_MATE, 1 - mates[i].side, 1, 0) == MG_GPROVE_REFUTED);
        MG_CHECK(A.status == MG_GPROVE_REFUTED);
    }

    /* The side to move is mated in 2: "cannot lose" within 3 plies proven, within 4 refuted. */
    const char *lost = "2B1k/2P1p/3PP/p2QK/5 b - - 0 14";
    MG_CHECK(both(p, ab, lost, MG_GPROVE_NO_LOSS, 1, 3, 0) == MG_GPROVE_PROVEN && A.status == MG_GPROVE_PROVEN);
    MG_CHECK(R.depth_done == 3 && R.pv_len == 0);
    MG_CHECK(both(p, ab, lost, MG_GPROVE_NO_LOSS, 1, 4, 0) == MG_GPROVE_REFUTED && A.status == MG_GPROVE_REFUTED);
    MG_CHECK(R.mate_plies == 4 && line_mates(&R, lost, 0));

    /* The start position: no mate within 7 plies for White (both agree). */
    const char *start = "rnbqk/ppppp/5/PPPPP/RNBQK w - - 0 1";
    MG_CHECK(both(p, ab, start, MG_GPROVE_MATE, 0, 4, 0) == MG_GPROVE_REFUTED && A.status == MG_GPROVE_REFUTED);
    MG_CHECK(R.depth_done == 7);
    /* Stalemate is not mate; a lone knight never mates; the mated root is "mate within 0 plies". */
    MG_CHECK(both(p, NULL, "k4/2Q2/1K3/5/5 b - - 0 1", MG_GPROVE_MATE, 0, 3, 0) == MG_GPROVE_REFUTED);
    MG_CHECK(both(p, NULL, "k4/5/1KN2/5/5 w - - 0 1", MG_GPROVE_MATE, 0, 10, 0) == MG_GPROVE_REFUTED);
    MG_CHECK(both(p, NULL, "k2Q1/5/1K3/5/5 b - - 1 1", MG_GPROVE_MATE, 0, 1, 0) == MG_GPROVE_PROVEN);
    MG_CHECK(R.mate_plies == 0 && R.pv_len == 0);
    /* The fifty-move flag follows the proof's depth. */
    MG_CHECK(both(p, NULL, "r1bkq/2N1p/1Q1p1/PP3/R1BK1 w - - 97 60", MG_GPROVE_MATE, 0, 2, 0) == MG_GPROVE_PROVEN);
    MG_CHECK(R.rule50_safe == 0);

    /* Budgets leave the answer unknown and the root unchanged. */
    mg_gpns_clear(p);
    MG_CHECK(both(p, NULL, mates[5].fen, MG_GPROVE_MATE, 0, 6, 50) == MG_GPROVE_UNKNOWN);
    MG_CHECK(R.stop == MG_GPROVE_NODE_LIMIT && R.pv_len == 0 && R.mate_plies == -1);
    {
        mg_gardner_state s;
        load(&s, start);
        mg_gardner_state copy = s;
        mg_gprove_query qt = {MG_GPROVE_MATE, 0, 12, 0, 1e-6, NULL};
        MG_CHECK(mg_gpns_prove(p, &s, &qt, &R, err, sizeof err) == MG_OK);
        MG_CHECK(R.status == MG_GPROVE_UNKNOWN && R.stop == MG_GPROVE_TIME_LIMIT);
        MG_CHECK(memcmp(&s, &copy, sizeof s) == 0);
        mg_gprove_query bad = {MG_GPROVE_MATE, 0, 61, 0, 0.0, NULL};
        err[0] = 0;
        MG_CHECK(mg_gpns_prove(p, &s, &bad, &R, err, sizeof err) == MG_ERR && strstr(err, "not 61") != NULL);
    }
    MG_CHECK(mg_gpns_new(31, err, sizeof err) == NULL && strstr(err, "2^31") != NULL);
    mg_gpns_free(p);
    mg_gprover_free(ab);
    MG_TEST_MAIN_END("test_gardner_pns");
}
