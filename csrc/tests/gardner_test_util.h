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
#endif /* MG_GARDNER_TEST_UTIL_H */
