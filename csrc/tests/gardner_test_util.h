/* gardner_test_util.h - what the Gardner prover tests share: reading a FEN, replaying a proof's line. */
#ifndef MG_GARDNER_TEST_UTIL_H
#define MG_GARDNER_TEST_UTIL_H
#include <stdio.h>

#include "../game.h"
#include "../games/gardner/gardner.h"
#include "../games/gardner/gardner_prover.h"

static inline int load(mg_gardner_state *s, const char *fen)
{
    char err[MG_ERRLEN];
    int rc = mg_gardner.from_text(s, NULL, fen, err, sizeof err);
    if (rc != MG_OK)
        fprintf(stderr, "unexpected FEN error: %s\n", err);
    return rc;
}

/* Replays r->pv from `fen`: 1 if every move is legal and the last position is checkmate of the side
 * that is not `attacker`. */
static inline int line_mates(const mg_gprove_result *r, const char *fen, int attacker)
{
    mg_gardner_state s;
    if (load(&s, fen) != MG_OK)
        return 0;
    mg_gardner_undo u;
    for (int i = 0; i < r->pv_len; i++) {
        if (!mg_gardner.is_legal(&s, r->pv[i]))
            return 0;
        mg_gardner.make(&s, r->pv[i], &u);
    }
    int why = 0;
    int res = mg_gardner.outcome(&s, &why);
    return why == MG_TERM_CHECKMATE && res == (attacker == 0 ? MG_P0_WINS : MG_P1_WINS);
}
/* Mates in 1 to 6 whose distance Fairy-Stockfish reports (go depth 14: "mate N"): side to mate, N. */
typedef struct mg_known_mate {
    const char *fen;
    int side, moves;
} mg_known_mate;
static const mg_known_mate MG_KNOWN_MATES[] = {
    {"1rbk1/Q3p/BppP1/P1P1P/R2QK w - - 0 8", 0, 1},
    {"r1bkq/2N1p/1Q1p1/PP3/R1BK1 w - - 3 12", 0, 2},
    {"rq2k/1p1bp/N3p/PpPB1/R3K b - - 0 11", 1, 3},
    {"1r1k1/Pppbp/B1P2/P1P1K/RN3 w - - 1 8", 0, 4},
    {"3kb/1p2N/rP1P1/PpP1K/5 b - - 2 20", 1, 5},
    {"2Bk1/Nbpq1/RPPp1/1Qp1P/2K2 w - - 1 13", 0, 6},
};
#define MG_N_KNOWN_MATES (sizeof MG_KNOWN_MATES / sizeof MG_KNOWN_MATES[0])
#endif /* MG_GARDNER_TEST_UTIL_H */
