/*
 * test_connect_four.c - Connect Four rules and the perfect solver.
 *
 * The rules are checked against a plain array implementation written here (no
 * bitboards): perft, outcomes along random games, text round trips, bad inputs.
 * The solver is checked against a brute-force minimax on that array board (no
 * pruning, no table) on random late positions, for self-consistency
 * (score = max over the moves, each move = -score of the child) on middle-game
 * positions, and for its budget stop.  Env MG_C4_SLOW=1 also solves the empty board.
 */
#include <stdlib.h>
#include <string.h>

#include "../game.h"
#include "../games/connect_four/connect_four.h"
#include "../rng.h"
#include "../games/connect_four/c4_solver.h"
#include "mgtest.h"

/* ---- reference rules on a plain array ------------------------------------------------ */

typedef struct ref_board {
    int8_t cell[7][6]; /* [col][row from the bottom]: 0 empty, 1 first player, 2 second */
    int height[7];
    int n;             /* stones */
    int won;           /* the last move made four */
} ref_board;

static int ref_count(const ref_board *b, int col, int row, int dc, int dr, int who)
{
    int k = 0;
    for (int c = col + dc, r = row + dr; c >= 0 && c < 7 && r >= 0 && r < 6 && b->cell[c][r] == who;
         c += dc, r += dr)
        k++;
    return k;
}

/* Non-zero if the stone at (col, row) is part of four in a row. */
static int ref_four_at(const ref_board *b, int col, int row)
{
    static const int D[4][2] = {{1, 0}, {0, 1}, {1, 1}, {1, -1}};
    int who = b->cell[col][row];
    for (int d = 0; d < 4; d++)
        if (1 + ref_count(b, col, row, D[d][0], D[d][1], who) + ref_count(b, col, row, -D[d][0], -D[d][1], who) >= 4)
            return 1;
    return 0;
}

static void ref_play(ref_board *b, int col)
{
    int row = b->height[col]++;
    b->cell[col][row] = (int8_t)(1 + (b->n & 1));
    b->n++;
    b->won = ref_four_at(b, col, row);
}

static void ref_undo(ref_board *b, int col, int won_before)
{
    b->cell[col][--b->height[col]] = 0;
    b->n--;
    b->won = won_before;
}

static uint64_t ref_perft(ref_board *b, int depth)
{
    if (b->won || b->n == 42)
        return 0;
    uint64_t total = 0;
    for (int c = 0; c < 7; c++) {
        if (b->height[c] == 6)
            continue;
        if (depth == 1) {
            total++;
            continue;
        }
        int w = b->won;
        ref_play(b, c);
        total += ref_perft(b, depth - 1);
        ref_undo(b, c, w);
    }
    return total;
}

/* Plain minimax with the solver's score convention: a win on the move that brings
 * the board to n stones scores (44 - n) / 2.  No pruning, no table. */
static int ref_minimax(ref_board *b, uint64_t *nodes)
{
    (*nodes)++;
    int best = -100;
    for (int c = 0; c < 7; c++) {
        if (b->height[c] == 6)
            continue;
        int w = b->won;
        ref_play(b, c);
        int v;
        if (b->won)
            v = (44 - b->n) / 2;
        else if (b->n == 42)
            v = 0;
        else
            v = -ref_minimax(b, nodes);
        ref_undo(b, c, w);
        if (v > best)
            best = v;
    }
    return best;
}

/* Text of the reference board in the game's format. */
static void ref_text(const ref_board *b, char *buf)
{
    int k = 0;
    for (int r = 5; r >= 0; r--) {
        for (int c = 0; c < 7; c++)
            buf[k++] = ".xo"[b->cell[c][r]];
        if (r)
            buf[k++] = '/';
    }
    buf[k++] = ' ';
    buf[k++] = (b->n & 1) ? 'o' : 'x';
    buf[k] = '\0';
}

/* A random game (both boards in step) stopped after `stones` stones, avoiding moves that
 * win (so the position is not over).  Returns 0 if it got stuck (every move wins). */
static int random_position(mg_rng *rng, int stones, ref_board *rb, mg_c4_state *s, char *moves)
{
    memset(rb, 0, sizeof *rb);
    mg_c4_init(s);
    for (int i = 0; i < stones; i++) {
        int cand[7], nc = 0;
        for (int c = 0; c < 7; c++) {
            if (rb->height[c] == 6)
                continue;
            ref_play(rb, c);
            if (!rb->won)
                cand[nc++] = c;
            ref_undo(rb, c, 0);
        }
        if (!nc)
            return 0;
        int c = cand[mg_rng_below(rng, (uint32_t)nc)];
        ref_play(rb, c);
        mg_c4_play(s, c);
        if (moves)
            moves[i] = (char)('1' + c);
    }
    if (moves)
        moves[stones] = '\0';
    return 1;
}

/* ---- rules ------------------------------------------------------------------------- */

static void test_rules(mg_test_counts *t, const mg_game *g)
{
    unsigned char st[MG_MAX_STATE], st2[MG_MAX_STATE];
    char err[MG_ERRLEN], buf[MG_MAX_TEXT], rtext[64];
    MG_CHECK_T(t, g->init(st, NULL, err, sizeof err) == MG_OK);
    g->to_text(st, buf, sizeof buf);
    MG_CHECK_T(t, strcmp(buf, "......./......./......./......./......./....... x") == 0);
    MG_CHECK_T(t, g->max_moves == 7 && g->num_actions == 7);

    /* perft: bitboard fast path, generic path and the array reference agree. */
    ref_board rb;
    memset(&rb, 0, sizeof rb);
    for (int d = 1; d <= 7; d++) {
        uint64_t ref = ref_perft(&rb, d);
        MG_CHECK_EQ_U64_T(t, mg_perft(g, st, d), ref);
        MG_CHECK_EQ_U64_T(t, mg_perft_generic(g, st, d, NULL), ref);
    }
    /* No four can exist before the 7th stone, so the first 6 plies are 7^d; at ply 7 the
     * 7 sequences that filled one column have 6 moves: 7^7 - 7. */
    MG_CHECK_EQ_U64_T(t, mg_perft(g, st, 6), 117649);
    MG_CHECK_EQ_U64_T(t, mg_perft(g, st, 7), 823536);
    /* From a middle-game position too. */
    MG_CHECK_T(t, g->from_text(st, NULL, "4453123", err, sizeof err) == MG_OK);
    MG_CHECK_T(t, mg_c4_from_moves((mg_c4_state *)st2, "4453123", err, sizeof err) == MG_OK);
    MG_CHECK_T(t, memcmp(st, st2, sizeof(mg_c4_state)) == 0);
    memset(&rb, 0, sizeof rb);
    for (const char *p = "4453123"; *p; p++)
        ref_play(&rb, *p - '1');
    MG_CHECK_EQ_U64_T(t, mg_perft(g, st, 6), ref_perft(&rb, 6));

    /* Random games: outcome, legal moves, text and hash against the reference. */
    mg_rng rng;
    mg_rng_seed(&rng, 12345);
    int wins = 0, draws = 0;
    for (int game = 0; game < 400; game++) {
        memset(&rb, 0, sizeof rb);
        g->init(st, NULL, err, sizeof err);
        char moves[64];
        int nm = 0;
        for (;;) {
            int32_t acts[MG_MAX_MOVES];
            int n = g->legal_actions(st, acts);
            int reason = -1;
            int res = g->outcome(st, &reason);
            ref_text(&rb, rtext);
            g->to_text(st, buf, sizeof buf);
            MG_CHECK_T(t, strcmp(buf, rtext) == 0);
            MG_CHECK_T(t, g->to_move(st) == (rb.n & 1));
            /* text round trip gives the same bytes, and the move sequence too */
            MG_CHECK_T(t, g->from_text(st2, NULL, buf, err, sizeof err) == MG_OK);
            MG_CHECK_T(t, memcmp(st, st2, sizeof(mg_c4_state)) == 0);
            moves[nm] = '\0';
            if (nm) {
                MG_CHECK_T(t, g->from_text(st2, NULL, moves, err, sizeof err) == MG_OK);
                MG_CHECK_T(t, memcmp(st, st2, sizeof(mg_c4_state)) == 0);
            }
            if (rb.won) {
                MG_CHECK_T(t, res == ((rb.n & 1) ? MG_P0_WINS : MG_P1_WINS) && reason == MG_TERM_CONNECTED);
                MG_CHECK_T(t, n == 0);
                wins++;
                break;
            }
            if (rb.n == 42) {
                MG_CHECK_T(t, res == MG_DRAW && reason == MG_TERM_BOARD_FULL && n == 0);
                draws++;
                break;
            }
            MG_CHECK_T(t, res == MG_ONGOING && reason == MG_TERM_NONE);
            int nref = 0;
            for (int c = 0; c < 7; c++) {
                int legal = rb.height[c] < 6;
                nref += legal;
                MG_CHECK_T(t, !!g->is_legal(st, c) == legal);
            }
            MG_CHECK_T(t, n == nref);
            int32_t a = acts[mg_rng_below(&rng, (uint32_t)n)];
            char ms[MG_MAX_MOVE_STR];
            int32_t back = -1;
            MG_CHECK_T(t, g->action_to_str(st, a, ms, sizeof ms) == 1 && ms[0] == '1' + a);
            MG_CHECK_T(t, g->action_from_str(st, ms, &back, err, sizeof err) == MG_OK && back == a);
            memcpy(st2, st, sizeof(mg_c4_state));
            g->make(st, a, NULL);
            g->unmake(st, a, NULL);
            MG_CHECK_T(t, memcmp(st, st2, sizeof(mg_c4_state)) == 0);
            g->make(st, a, NULL);
            ref_play(&rb, a);
            moves[nm++] = (char)('1' + a);
        }
    }
    MG_CHECK_T(t, wins > 0 && draws >= 0);

    /* Hash: distinct positions, distinct hashes (it is a bijection of a unique key). */
    {
        enum { N = 4096 };
        static uint64_t hs[N];
        static char seen[N][64];
        int k = 0;
        mg_rng_seed(&rng, 99);
        mg_c4_state s;
        while (k < N) {
            int stones = (int)mg_rng_below(&rng, 20);
            if (!random_position(&rng, stones, &rb, &s, NULL))
                continue;
            hs[k] = g->hash(&s);
            g->to_text(&s, seen[k], 64);
            k++;
        }
        int bad = 0;
        for (int i = 0; i < N && !bad; i++)
            for (int j = i + 1; j < N; j++)
                if ((hs[i] == hs[j]) != (strcmp(seen[i], seen[j]) == 0)) {
                    bad = 1;
                    break;
                }
        MG_CHECK_T(t, !bad);
    }

    /* The specialised random playout: valid end states, the ply limit, and the outcome
     * distribution of move-by-move play (win/draw frequencies within 6 standard errors). */
    {
        int ok = 1;
        const char *starts[] = {"", "4453", "1122"};
        for (int k = 0; k < 3; k++) {
            enum { N = 100000 };
            long cnt[2][4] = {{0}};
            double plies[2] = {0, 0};
            mg_rng r1, r2;
            mg_rng_seed(&r1, 100 + (uint64_t)k);
            mg_rng_seed(&r2, 200 + (uint64_t)k);
            g->from_text(st2, NULL, k ? starts[k] : "......./......./......./......./......./....... x", err,
                         sizeof err);
            for (int i = 0; i < N; i++) {
                int p1 = 0, p2 = 0;
                memcpy(st, st2, sizeof(mg_c4_state));
                int a = mg_random_playout(g, st, &r1, 1000, &p1);
                cnt[0][a]++;
                plies[0] += p1;
                if (i < 200) { /* the end state is a consistent finished game */
                    unsigned char back[MG_MAX_STATE];
                    g->to_text(st, buf, sizeof buf);
                    ok &= g->from_text(back, NULL, buf, err, sizeof err) == MG_OK;
                    ok &= memcmp(back, st, sizeof(mg_c4_state)) == 0 && g->outcome(st, NULL) == a;
                    ok &= a != MG_ONGOING && (int)((mg_c4_state *)st)->nmoves == (int)((mg_c4_state *)st2)->nmoves + p1;
                }
                memcpy(st, st2, sizeof(mg_c4_state));
                int b = mg_random_playout_moves(g, st, &r2, 1000, &p2);
                cnt[1][b]++;
                plies[1] += p2;
            }
            for (int res = 1; res <= 3; res++) {
                double f1 = (double)cnt[0][res] / N, f2 = (double)cnt[1][res] / N;
                double p = (f1 + f2) / 2, se = 1.4143 * (p * (1 - p) / N > 0 ? __builtin_sqrt(p * (1 - p) / N) : 0);
                ok &= (f1 > f2 ? f1 - f2 : f2 - f1) <= 6 * se + 1e-9;
            }
            ok &= cnt[0][0] == 0 && (plies[0] - plies[1]) / N < 0.3 && (plies[1] - plies[0]) / N < 0.3;
            /* a ply limit stops the playout */
            memcpy(st, st2, sizeof(mg_c4_state));
            int p = -1;
            int a = mg_random_playout(g, st, &r1, 3, &p);
            ok &= p <= 3 && (a == MG_ONGOING) == (p == 3 && g->outcome(st, NULL) == MG_ONGOING);
        }
        MG_CHECK_T(t, ok);
    }

    /* Bad inputs: each fails with a message and leaves the state unchanged. */
    const char *bad[] = {
        "",                                                     /* empty */
        "......./......./......./......./......./.......",      /* no side to move */
        "......./......./......./......./......./....... y",    /* bad side */
        "......./......./......./......./......./...x... x",    /* side does not match counts */
        "......./......./......./......./......./...xx.. o",    /* counts */
        "......./......./......./......./...x.../....... o",    /* floating stone */
        "......./......./......./......./......../....... x",   /* row too long */
        "......./......./......./......./....../....... x",     /* row too short */
        "......./......./......./......./......./...q... o",    /* bad character */
        "......./......./......./......./......./.......  x",   /* extra space */
        "......./......./......./......./......./.......x x",   /* missing space */
        "......./......./......./......./......./....... x junk",
        "......./......./......./o....../o....../oxxxx.. o",    /* (valid: x has just won) */
        "......./......./o....../o....../o....../oxxxx.. x",    /* both have four */
        "......./......./......./......./xxx..../oooo.xx o",    /* the side to move has four */
        "......./......./x.....x/xoo...x/xoo...x/xoo.o.x o",    /* two fours, no single last move */
        "448",                                                  /* bad column */
        "4444444",                                              /* full column */
        "11223344",                                             /* move after a win */
        "4a",
    };
    /* "......./......./......./o....../o....../oxxxx.. o": x 4, o 3 with x's four on the
     * bottom row: a legal finished game (x just won).  Keep it out of the bad list. */
    g->init(st, NULL, err, sizeof err);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        if (i == 12) {
            MG_CHECK_T(t, g->from_text(st2, NULL, bad[i], err, sizeof err) == MG_OK);
            MG_CHECK_T(t, g->outcome(st2, NULL) == MG_P0_WINS);
            continue;
        }
        err[0] = '\0';
        memcpy(st2, st, sizeof(mg_c4_state));
        int rc = g->from_text(st2, NULL, bad[i], err, sizeof err);
        MG_CHECK_T(t, rc == MG_ERR);
        MG_CHECK_T(t, err[0] != '\0');
        MG_CHECK_T(t, memcmp(st, st2, sizeof(mg_c4_state)) == 0);
        if (rc != MG_ERR)
            fprintf(stderr, "accepted bad text '%s'\n", bad[i]);
    }
    /* A legal move sequence that ends with a win is accepted and is over. */
    MG_CHECK_T(t, g->from_text(st2, NULL, "11223344", err, sizeof err) == MG_ERR && strstr(err, "won"));
    MG_CHECK_T(t, g->from_text(st2, NULL, "1122334", err, sizeof err) == MG_OK);
    MG_CHECK_T(t, g->outcome(st2, NULL) == MG_P0_WINS);
    int32_t acts[MG_MAX_MOVES];
    MG_CHECK_T(t, g->legal_actions(st2, acts) == 0);
    /* Move strings. */
    int32_t a;
    g->init(st, NULL, err, sizeof err);
    MG_CHECK_T(t, g->action_from_str(st, "4", &a, err, sizeof err) == MG_OK && a == 3);
    MG_CHECK_T(t, g->action_from_str(st, "8", &a, err, sizeof err) == MG_ERR);
    MG_CHECK_T(t, g->action_from_str(st, "0", &a, err, sizeof err) == MG_ERR);
    MG_CHECK_T(t, g->action_from_str(st, "44", &a, err, sizeof err) == MG_ERR);
    MG_CHECK_T(t, g->action_from_str(st, "", &a, err, sizeof err) == MG_ERR);
    MG_CHECK_T(t, g->from_text(st, NULL, "444444", err, sizeof err) == MG_OK);
    MG_CHECK_T(t, g->action_from_str(st, "4", &a, err, sizeof err) == MG_ERR && strstr(err, "full"));
    MG_CHECK_T(t, !g->is_legal(st, 3) && !g->is_legal(st, -1) && !g->is_legal(st, 7) && g->is_legal(st, 0));
    MG_CHECK_T(t, g->action_to_str(st, 7, err, sizeof err) == 0);
}

/* ---- solver ------------------------------------------------------------------------ */

/* mg_c4_solve_moves_wdl on `s` (with `sv`, whatever its table holds) against the exact per-column scores
 * `exact` (of mg_c4_solve_moves or a reference): the sign of every column, the exact score, and the column
 * of the highest score with ties to the most central (computed here from the scores, centre first). */
static int wdl_agrees(mg_c4_solver *sv, const mg_c4_state *s, const mg_c4_solution *exact)
{
    static const int centre_first[7] = {3, 2, 4, 1, 5, 0, 6};
    mg_c4_solution w;
    int ok = mg_c4_solve_moves_wdl(sv, s, NULL, &w) == MG_OK && w.complete && w.score == exact->score;
    int best = -1;
    for (int i = 0; i < 7; i++) {
        int c = centre_first[i], v = exact->move_score[c];
        ok &= v == MG_C4_NO_SCORE ? w.move_score[c] == MG_C4_NO_SCORE : w.move_score[c] == (v > 0) - (v < 0);
        if (v != MG_C4_NO_SCORE && (best < 0 || v > exact->move_score[best]))
            best = c;
    }
    return ok && w.best_col == best && exact->best_col == best;
}

static void test_solver(mg_test_counts *t)
{
    char err[MG_ERRLEN];
    mg_c4_solver *sv = mg_c4_solver_new(20, err, sizeof err);
    mg_c4_solver *sv2 = mg_c4_solver_new(18, err, sizeof err);
    MG_CHECK_T(t, sv && sv2);
    if (!sv || !sv2)
        return;
    MG_CHECK_T(t, mg_c4_solver_new(5, err, sizeof err) == NULL && strstr(err, "2^5"));
    mg_rng rng;
    mg_rng_seed(&rng, 2024);
    ref_board rb;
    mg_c4_state s;
    mg_c4_solution res;

    /* Against plain minimax on late positions (<= 12 empty cells). */
    int checked = 0, nonzero = 0;
    for (int i = 0; i < 300; i++) {
        int empty = 4 + (int)mg_rng_below(&rng, i < 260 ? 7 : 9); /* 4..10, a few up to 12 */
        if (!random_position(&rng, 42 - empty, &rb, &s, NULL))
            continue;
        uint64_t nodes = 0;
        int ref = ref_minimax(&rb, &nodes);
        MG_CHECK_T(t, mg_c4_solve(sv, &s, NULL, &res) == MG_OK && res.complete);
        MG_CHECK_T(t, res.score == ref);
        /* every move against the reference, too */
        mg_c4_solve_moves(sv2, &s, NULL, &res);
        MG_CHECK_T(t, res.complete && res.score == ref);
        for (int c = 0; c < 7; c++) {
            if (rb.height[c] == 6) {
                MG_CHECK_T(t, res.move_score[c] == MG_C4_NO_SCORE);
                continue;
            }
            ref_play(&rb, c);
            uint64_t nn = 0;
            int v = rb.won ? (44 - rb.n) / 2 : rb.n == 42 ? 0 : -ref_minimax(&rb, &nn);
            ref_undo(&rb, c, 0);
            MG_CHECK_T(t, res.move_score[c] == v);
            if (res.move_score[c] != v)
                fprintf(stderr, "column %d: solver %d, minimax %d\n", c + 1, res.move_score[c], v);
        }
        /* win/draw/loss columns with perfect play's column: the same answer (the tables warm or cold) */
        if (i % 2)
            mg_c4_solver_clear(sv);
        MG_CHECK_T(t, wdl_agrees(sv, &s, &res));
        checked++;
        nonzero += ref != 0;
    }
    MG_CHECK_T(t, checked > 200 && nonzero > 50);

    /* Consistency on middle-game positions, with a second solver (a separate table). */
    int consistent = 0;
    for (int i = 0; i < 340; i++) {
        char moves[64];
        /* 40 middle-game positions (16..27 stones), then 300 later ones (24..35) */
        int stones = i < 40 ? 16 + (int)mg_rng_below(&rng, 12) : 24 + (int)mg_rng_below(&rng, 12);
        if (!random_position(&rng, stones, &rb, &s, moves))
            continue;
        mg_c4_solve_moves(sv, &s, NULL, &res);
        MG_CHECK_T(t, res.complete);
        int best = -1000, ok = 1;
        for (int c = 0; c < 7; c++) {
            if (res.move_score[c] == MG_C4_NO_SCORE)
                continue;
            if (res.move_score[c] > best)
                best = res.move_score[c];
            mg_c4_state child = s;
            mg_c4_play(&child, c);
            mg_c4_solution cr;
            mg_c4_solve(sv2, &child, NULL, &cr);
            int expect = mg_c4_has_four(child.cur ^ child.mask) ? (44 - (int)child.nmoves) / 2 : -cr.score;
            ok &= cr.complete && res.move_score[c] == expect;
        }
        mg_c4_solution r2;
        mg_c4_solve(sv2, &s, NULL, &r2);
        ok &= r2.score == best && res.score == best;
        /* weak solve agrees in sign */
        mg_c4_limits weak = {0, 0.0, 1, NULL};
        mg_c4_solve(sv2, &s, &weak, &r2);
        ok &= r2.complete && r2.score == (best > 0) - (best < 0);
        /* win/draw/loss columns with perfect play's column agree (a cold table every other time) */
        if (i % 2)
            mg_c4_solver_clear(sv2);
        ok &= wdl_agrees(sv2, &s, &res);
        /* the distance to the end fits the board */
        int left = mg_c4_moves_to_end(stones, best);
        ok &= left >= 1 && left <= 42 - stones;
        MG_CHECK_T(t, ok);
        if (!ok)
            fprintf(stderr, "inconsistent solve of %s\n", moves);
        consistent += ok;
    }
    MG_CHECK_T(t, consistent > 250);

    /* Terminal states and immediate wins. */
    mg_c4_from_moves(&s, "1122334", err, sizeof err); /* x won with its 4th stone */
    mg_c4_solve(sv, &s, NULL, &res);
    MG_CHECK_T(t, res.complete && res.score == -(44 - 7) / 2);
    mg_c4_solve_moves_wdl(sv, &s, NULL, &res);
    MG_CHECK_T(t, res.complete && res.score == -(44 - 7) / 2 && res.best_col == -1 &&
                  res.move_score[3] == MG_C4_NO_SCORE);
    mg_c4_from_moves(&s, "112233", err, sizeof err); /* x to move wins with its 4th stone */
    mg_c4_solve_moves(sv, &s, NULL, &res);
    MG_CHECK_T(t, res.score == 18 && res.move_score[3] == 18 && res.move_score[0] < 18 && res.best_col == 3);
    MG_CHECK_T(t, wdl_agrees(sv, &s, &res));
    MG_CHECK_EQ_U64_T(t, mg_c4_moves_to_end(6, 18), 1);

    /* The two examples of the public test protocol's score definition. */
    mg_c4_from_moves(&s, "4455", err, sizeof err);
    mg_c4_solve(sv, &s, NULL, &res);
    MG_CHECK_T(t, res.complete && res.score == 18);
    mg_c4_from_moves(&s, "44455554221", err, sizeof err);
    mg_c4_solve_moves(sv, &s, NULL, &res);
    MG_CHECK_T(t, res.complete && res.score == -15);

    /* Mirror images have the same scores, column for column (the table shares their entries
     * below 12 stones: solve both with one table, each move from the other side first). */
    mg_c4_solver_clear(sv);
    for (int i = 0, done = 0; i < 50 && done < 2; i++) {
        char moves[64], mirrored[64];
        int stones = 9 + (int)mg_rng_below(&rng, 3);
        if (!random_position(&rng, stones, &rb, &s, moves))
            continue;
        for (int k = 0; k < stones; k++)
            mirrored[k] = (char)('1' + '7' - moves[k]);
        mirrored[stones] = '\0';
        mg_c4_state ms;
        MG_CHECK_T(t, mg_c4_from_moves(&ms, mirrored, err, sizeof err) == MG_OK);
        mg_c4_solution a, b;
        mg_c4_limits lim = {20000000, 0.0, 0, NULL};
        mg_c4_solve_moves(sv, &s, &lim, &a);
        if (!a.complete)
            continue;
        mg_c4_solve_moves(sv, &ms, NULL, &b);
        MG_CHECK_T(t, b.complete && a.score == b.score);
        for (int c = 0; c < 7; c++)
            MG_CHECK_T(t, a.move_score[c] == b.move_score[6 - c]);
        done++;
    }

    /* Budget: a hard early position stops and says so. */
    mg_c4_solver_clear(sv);
    mg_c4_from_moves(&s, "44", err, sizeof err);
    mg_c4_limits lim = {5000, 0.0, 0, NULL};
    mg_c4_solve_moves(sv, &s, &lim, &res);
    MG_CHECK_T(t, !res.complete && res.nodes >= 5000 && res.nodes < 5100);
    lim.max_nodes = 0;
    lim.max_seconds = 0.01;
    mg_c4_solve(sv, &s, &lim, &res);
    MG_CHECK_T(t, !res.complete);
    lim.max_seconds = 0.0;
    lim.max_nodes = 5000;
    mg_c4_solve_moves_wdl(sv, &s, &lim, &res);
    MG_CHECK_T(t, !res.complete && res.best_col == -1 && res.nodes >= 5000 && res.nodes < 5100);

    if (getenv("MG_C4_SLOW")) {
        /* The empty board is a first-player win, and only the centre column wins. */
        mg_c4_solver *big = mg_c4_solver_new(24, err, sizeof err);
        mg_c4_init(&s);
        mg_c4_limits weak = {0, 0.0, 1, NULL};
        mg_c4_solve_moves(big, &s, &weak, &res);
        MG_CHECK_T(t, res.complete && res.score == 1);
        for (int c = 0; c < 7; c++)
            MG_CHECK_T(t, (res.move_score[c] > 0) == (c == 3));
        mg_c4_solver_free(big);
    }
    mg_c4_solver_free(sv);
    mg_c4_solver_free(sv2);
}

static void put64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* A book of random 26-stone positions (built here with the solver): lookups find exactly them,
 * the solver with the book answers like the one without, and the reader refuses defects. */
static void test_book(mg_test_counts *t)
{
    enum { N = 64, STONES = 26 };
    char err[MG_ERRLEN];
    mg_c4_solver *sv = mg_c4_solver_new(18, err, sizeof err), *bsv = mg_c4_solver_new(18, err, sizeof err);
    MG_CHECK_T(t, sv && bsv);
    if (!sv || !bsv)
        return;
    static unsigned char buf[MG_C4_BOOK_HEADER + 8 * N];
    uint64_t ent[N];
    mg_c4_state pos[N];
    mg_rng rng;
    mg_rng_seed(&rng, 7);
    ref_board rb;
    int n = 0, lost = 0;
    while (n < N) {
        mg_c4_state s;
        if (!random_position(&rng, STONES, &rb, &s, NULL))
            continue;
        uint64_t k = mg_c4_book_key(&s);
        int dup = 0;
        for (int i = 0; i < n; i++)
            dup |= (ent[i] >> 8) == k;
        if (dup)
            continue;
        mg_c4_solution so;
        mg_c4_solve(sv, &s, NULL, &so);
        pos[n] = s;
        ent[n++] = k << 8 | (uint64_t)(so.score + 64);
    }
    qsort(ent, N, sizeof ent[0], cmp_u64);
    memcpy(buf, MG_C4_BOOK_MAGIC, 8);
    buf[8] = MG_C4_BOOK_VERSION, buf[9] = buf[10] = buf[11] = 0;
    buf[12] = STONES, buf[13] = 0, buf[14] = STONES, buf[15] = 0;
    put64(buf + 16, N);
    for (int i = 0; i < N; i++)
        put64(buf + MG_C4_BOOK_HEADER + 8 * i, ent[i]);
    mg_c4_book b;
    MG_CHECK_T(t, mg_c4_book_open(&b, buf, sizeof buf, err, sizeof err) == MG_OK);
    MG_CHECK_T(t, b.count == N && b.min_ply == STONES && b.max_ply == STONES);
    mg_c4_solver_set_book(bsv, &b);
    for (int i = 0; i < N; i++) {
        int sc = 99;
        mg_c4_solution a, c;
        MG_CHECK_T(t, mg_c4_book_probe(&b, &pos[i], &sc) == 1);
        mg_c4_solve(sv, &pos[i], NULL, &a);
        MG_CHECK_T(t, sc == a.score);
        /* the solver with the book gives the same score and move scores, searching no more */
        mg_c4_solve_moves(bsv, &pos[i], NULL, &c);
        mg_c4_solve_moves(sv, &pos[i], NULL, &a);
        MG_CHECK_T(t, a.score == c.score && memcmp(a.move_score, c.move_score, sizeof a.move_score) == 0);
        /* win/draw/loss columns with perfect play's column, the book bounding the columns: the same */
        MG_CHECK_T(t, wdl_agrees(bsv, &pos[i], &a) && wdl_agrees(sv, &pos[i], &a));
        lost += a.score < 0;
        mg_c4_solve(bsv, &pos[i], NULL, &c); /* answered by the book: a few probes, no search */
        MG_CHECK_T(t, c.score == sc && c.complete && c.nodes <= 8);
    }
    MG_CHECK_T(t, lost >= 5); /* the lost shortcut was exercised (drawn ones: tests/test_c4_book.py) */
    mg_c4_state e;
    mg_c4_init(&e);
    int sc;
    MG_CHECK_T(t, mg_c4_book_probe(&b, &e, &sc) == 0);
    /* defects */
    MG_CHECK_T(t, mg_c4_book_open(&b, buf, sizeof buf - 1, err, sizeof err) == MG_ERR && strstr(err, "need"));
    MG_CHECK_T(t, mg_c4_book_open(&b, buf, 10, err, sizeof err) == MG_ERR && strstr(err, "header"));
    uint64_t save = ent[1];
    put64(buf + MG_C4_BOOK_HEADER + 8, ent[0]);
    MG_CHECK_T(t, mg_c4_book_open(&b, buf, sizeof buf, err, sizeof err) == MG_ERR && strstr(err, "entry 1"));
    put64(buf + MG_C4_BOOK_HEADER + 8, (save & ~0xffULL) | (uint64_t)(64 + 30));
    MG_CHECK_T(t, mg_c4_book_open(&b, buf, sizeof buf, err, sizeof err) == MG_ERR && strstr(err, "score 30"));
    /* a score no 26-stone position has: the fastest win scores (43 - 26) / 2 = 8 */
    put64(buf + MG_C4_BOOK_HEADER + 8, (save & ~0xffULL) | (uint64_t)(64 + 9));
    MG_CHECK_T(t, mg_c4_book_open(&b, buf, sizeof buf, err, sizeof err) == MG_ERR && strstr(err, "score 9, outside [-8, 8]"));
    put64(buf + MG_C4_BOOK_HEADER + 8, save);
    /* a header whose plies leave the entries out */
    buf[12] = STONES + 1, buf[14] = STONES + 1;
    MG_CHECK_T(t, mg_c4_book_open(&b, buf, sizeof buf, err, sizeof err) == MG_ERR && strstr(err, "26 stones, outside"));
    buf[12] = STONES, buf[14] = STONES;
    MG_CHECK_T(t, mg_c4_book_open(&b, buf, sizeof buf, err, sizeof err) == MG_OK);
    buf[0] = 'X';
    MG_CHECK_T(t, mg_c4_book_open(&b, buf, sizeof buf, err, sizeof err) == MG_ERR && strstr(err, "magic"));
    mg_c4_solver_free(sv);
    mg_c4_solver_free(bsv);
}

int main(void)
{
    mg_test_counts T = {0, 0};
    mg_games_init();
    const mg_game *g = mg_game_by_name("connect_four");
    MG_CHECK(g != NULL);
    if (!g)
        MG_TEST_MAIN_END("test_connect_four");
    test_rules(&T, g);
    test_solver(&T);
    test_book(&T);
    MG_TEST_MAIN_END("test_connect_four");
}
