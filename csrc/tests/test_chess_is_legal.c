/* test_chess_is_legal.c - chess and Chess960: the descriptors' is_legal (mg_chess_is_legal, which decides
 * one action without generating the others) against membership in mg_chess_legal_actions, for every
 * action of the action space (and out-of-range ids), on the reference perft positions, the positions
 * of random games (standard and Chess960 starts) and hand-made castling, en passant, promotion, pin and
 * check positions; and the legal_outcome hook against legal_actions and outcome called apart. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../game.h"
#include "../games/chess/chess.h"
#include "../rng.h"
#include "mgtest.h"

static mg_test_counts T;

/* What the checked positions covered: legal actions by kind, and illegal actions that are pseudo-legal
 * in the sense that the piece could make the move if the king's safety did not matter. */
typedef struct coverage {
    long positions, actions, legal, castles, ep, promos, in_check;
} coverage;

static coverage C;

static int load(mg_chess_state *s, int c960, const char *fen)
{
    char err[MG_ERRLEN] = "";
    if (mg_chess_from_fen(s, c960, fen, err, sizeof err) != MG_OK) {
        fprintf(stderr, "unexpected FEN error: %s (%s)\n", err, fen);
        return 0;
    }
    return 1;
}

/* The copy hook: a copy into a buffer of garbage answers as the original does, in the position and after each of
 * its moves (the repetition counts and draw claims read the copied history; make writes the new entries). */
static void check_copy(const mg_chess_state *s)
{
    const mg_game *g = s->chess960 ? &mg_chess960 : &mg_chess;
    static mg_chess_state d;
    static unsigned char fill = 0x5a;
    MG_CHECK(g->copy != NULL);
    memset(&d, fill, sizeof d);
    fill = (unsigned char)(fill * 29 + 7);
    mg_state_copy(g, &d, s);
    mg_chess_state orig = *s;
    int32_t moves[MG_CHESS_MAX_MOVES], moves2[MG_CHESS_MAX_MOVES];
    int n = mg_chess_legal_actions(&orig, moves);
    for (int i = -1; i < n && i < 8; i++) {
        mg_chess_undo u1, u2;
        if (i >= 0) {
            mg_chess_make(&orig, moves[i], &u1);
            mg_chess_make(&d, moves[i], &u2);
        }
        char t1[MG_MAX_TEXT], t2[MG_MAX_TEXT];
        g->to_text(&orig, t1, sizeof t1);
        g->to_text(&d, t2, sizeof t2);
        int w1 = -1, w2 = -2, f1, f2, r1, r2;
        MG_CHECK(strcmp(t1, t2) == 0 && g->hash(&orig) == g->hash(&d));
        MG_CHECK(g->outcome(&orig, &w1) == g->outcome(&d, &w2) && w1 == w2);
        MG_CHECK(mg_chess_repetitions(&orig) == mg_chess_repetitions(&d));
        mg_chess_draw_claims(&orig, &f1, &r1);
        mg_chess_draw_claims(&d, &f2, &r2);
        MG_CHECK(f1 == f2 && r1 == r2);
        int n1 = mg_chess_legal_actions(&orig, moves2), n2 = mg_chess_legal_actions(&d, moves2);
        MG_CHECK(n1 == n2);
        if (i >= 0) {
            mg_chess_unmake(&orig, moves[i], &u1);
            mg_chess_unmake(&d, moves[i], &u2);
        }
    }
}

/* is_legal(a) == (a in legal_actions) for all a in [0, num_actions) and a few ids outside it; the
 * state is not changed; legal_outcome agrees with legal_actions and outcome. */
static void check_position(const mg_chess_state *s)
{
    const mg_game *g = s->chess960 ? &mg_chess960 : &mg_chess;
    static unsigned char member[MG_CHESS_NUM_ACTIONS];
    int32_t moves[MG_CHESS_MAX_MOVES], moves2[MG_CHESS_MAX_MOVES];
    mg_chess_state before = *s;
    check_copy(s);
    int n = mg_chess_legal_actions(s, moves);
    memset(member, 0, sizeof member);
    for (int i = 0; i < n; i++) {
        MG_CHECK(moves[i] >= 0 && moves[i] < MG_CHESS_NUM_ACTIONS);
        member[moves[i]] = 1;
        int from = moves[i] & 63, to = (moves[i] >> 6) & 63;
        if (s->board[to] && (s->board[to] >> 3) == s->stm)
            C.castles++;
        else if ((s->board[from] & 7) == MG_CH_PAWN && to == s->ep)
            C.ep++;
        if (moves[i] >> 12)
            C.promos++;
    }
    long bad = 0;
    for (int32_t a = 0; a < MG_CHESS_NUM_ACTIONS; a++) {
        int got = g->is_legal(s, a);
        if ((got != 0) != member[a] || got != mg_chess_is_legal(s, a)) {
            if (bad++ < 5) {
                char fen[MG_MAX_TEXT], mv[16] = "?";
                mg_chess_to_fen(s, fen, sizeof fen);
                g->action_to_str(s, a, mv, sizeof mv);
                fprintf(stderr, "is_legal(%d = %s) = %d, in legal_actions: %d, in %s%s\n", (int)a, mv, got,
                        member[a], fen, s->chess960 ? " (chess960)" : "");
            }
        }
    }
    MG_CHECK(bad == 0);
    static const int32_t outside[] = {-1, -4096, INT32_MIN, MG_CHESS_NUM_ACTIONS, MG_CHESS_NUM_ACTIONS + 1,
                                      INT32_MAX, 8 << 12, 7 << 12 | 12 | 28 << 6};
    for (size_t i = 0; i < sizeof outside / sizeof outside[0]; i++)
        MG_CHECK(!g->is_legal(s, outside[i]));
    /* legal_outcome: the same moves in the same order, the same result and reason. */
    int r1, why1 = -1, why2 = -1, r2 = g->outcome(s, &why2);
    int n2 = g->legal_outcome(s, moves2, &r1, &why1);
    MG_CHECK(n2 == n && !memcmp(moves, moves2, (size_t)n * sizeof *moves) && r1 == r2 && why1 == why2);
    int r3 = -1, n3 = mg_legal_outcome(g, s, moves2, &r3, NULL);
    MG_CHECK(n3 == n && r3 == r2);
    MG_CHECK(!memcmp(s, &before, sizeof before));
    C.positions++;
    C.actions += MG_CHESS_NUM_ACTIONS;
    C.legal += n;
    C.in_check += mg_chess_in_check(s);
}

/* The position and every position reached by `plies` random moves from it. */
static void check_walk(mg_chess_state s, mg_rng *rng, int plies)
{
    for (int p = 0;; p++) {
        check_position(&s);
        int32_t moves[MG_CHESS_MAX_MOVES];
        int n = mg_chess_legal_actions(&s, moves);
        if (p == plies || n == 0)
            return;
        mg_chess_undo u;
        mg_chess_make(&s, moves[mg_rng_below(rng, (uint32_t)n)], &u);
    }
}

/* Every position of the EPD+perft file (each `every`-th), in both variants where its castling rights
 * allow, with a short random walk from each. */
static int check_perft_file(const char *path, int every, mg_rng *rng)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        printf("skip: %s not found\n", path);
        return 0;
    }
    char line[512];
    int index = -1, positions = 0;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = '\0';
        if (strncmp(line, "epd ", 4) != 0 || ++index % every != 0)
            continue;
        mg_chess_state s;
        char err[MG_ERRLEN];
        MG_CHECK(load(&s, 1, line + 4));
        check_walk(s, rng, 3);
        if (mg_chess_from_fen(&s, 0, line + 4, err, sizeof err) == MG_OK)
            check_walk(s, rng, 3);
        positions++;
    }
    fclose(f);
    printf("%s: %d positions\n", path, positions);
    return positions;
}

static void test_reference_positions(void)
{
    const char *dir = mg_test_data_dir();
    if (!dir) {
        printf("skip: reference data directory not found (set MG_SHARED_DATA)\n");
        return;
    }
    mg_rng rng;
    mg_rng_seed(&rng, 52);
    char path[1024];
    snprintf(path, sizeof path, "%s/perft/tricky.perft", dir);
    MG_CHECK(check_perft_file(path, 1, &rng) > 10);
    snprintf(path, sizeof path, "%s/perft/chess960.perft", dir);
    MG_CHECK(check_perft_file(path, 9, &rng) > 100);
}

/* Random games from the standard start and from random Chess960 starts, every `every`-th ply checked. */
static void test_random_games(int c960, int games, int every)
{
    mg_rng rng;
    mg_rng_seed(&rng, 5252 + (uint64_t)c960);
    for (int game = 0; game < games; game++) {
        char fen[128] = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
        if (c960)
            mg_chess960_start_fen((int)mg_rng_below(&rng, 960), fen, sizeof fen);
        mg_chess_state s;
        if (!load(&s, c960, fen)) {
            MG_CHECK(0);
            continue;
        }
        for (int ply = 0; ply < 400; ply++) {
            if (ply % every == 0 || mg_chess_in_check(&s) || s.ep != MG_CH_NO_SQ)
                check_position(&s);
            int32_t moves[MG_CHESS_MAX_MOVES];
            int n = mg_chess_legal_actions(&s, moves);
            if (n == 0 || mg_chess_outcome(&s, NULL) != MG_ONGOING)
                break;
            mg_chess_undo u;
            mg_chess_make(&s, moves[mg_rng_below(&rng, (uint32_t)n)], &u);
        }
    }
}

/* Hand-made positions: castling (through, into and out of check, blocked paths, Chess960 kings and rooks
 * on unusual squares), en passant (legal, pinned along a diagonal, along the rank, giving or resolving
 * check), promotions (pushes and captures, pinned, in check), pins, double checks, draws and mates. */
static void test_special_positions(void)
{
    static const struct {
        int c960;
        const char *fen;
    } P[] = {
        {0, "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1"},
        {0, "r3k2r/8/8/8/8/8/8/R3K2R b KQkq - 0 1"},
        {0, "r3k2r/8/8/8/8/8/5r2/R3K2R w KQkq - 0 1"},          /* f2 rook: O-O through f1 attacked? no: f1 */
        {0, "r3k2r/8/8/8/8/5r2/8/R3K2R w KQkq - 0 1"},          /* f1 not attacked, f3 rook on f-file */
        {0, "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1"},
        {0, "r3k2r/8/8/8/4r3/8/8/R3K2R w KQkq - 0 1"},          /* in check: no castling */
        {0, "r3k2r/8/8/8/8/8/8/RN2K1NR w KQkq - 0 1"},          /* blocked */
        {0, "r3k2r/8/8/8/8/8/8/1R2K2R w Kkq - 0 1"},            /* b1 attacked matters not for O-O-O... */
        {0, "r3k2r/8/8/8/8/8/6p1/R3K2R w KQkq - 0 1"},          /* pawn g2 attacks f1, h1 */
        {0, "r3k2r/8/8/8/8/8/1p6/R3K2R w KQkq - 0 1"},          /* pawn b2 attacks a1, c1 */
        {0, "1r2k2r/8/8/8/8/8/8/R3K2R w KQk - 0 1"},            /* b-file rook: b1 attacked, O-O-O still legal */
        {1, "1r2k1r1/8/8/8/8/8/8/1R2K1R1 w GBgb - 0 1"},
        {1, "rk5r/8/8/8/8/8/8/RK5R w HAha - 0 1"},              /* king b1: O-O-O keeps the king near */
        {1, "r5kr/8/8/8/8/8/8/R5KR w HAha - 0 1"},              /* king g1: O-O with the king in place */
        {1, "5rkr/8/8/8/8/8/8/5RKR w HFhf - 0 1"},
        {1, "rkr5/8/8/8/8/8/8/RKR5 w CAca - 0 1"},
        {1, "2r1k2r/8/8/8/8/8/8/2R1K2R w HChc - 0 1"},
        {1, "bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9"},
        {1, "2r1kr2/8/8/8/8/8/8/1R2K1R1 w GBfc - 0 1"},
        {1, "1rk2r2/8/8/8/8/8/8/1RK2R2 w FBfb - 0 1"},
        {1, "r1k1r3/8/8/8/8/8/8/R1K1R3 w EAea - 0 1"},
        {1, "qr1k3r/8/8/8/8/8/8/QR1K3R w HBhb - 0 1"},           /* a queen x-rays the rook on b1 */
        {0, "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3"},
        {0, "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq d6 0 3"},
        {0, "2r4k/8/8/2PpP3/8/8/8/2K5 w - d6 0 2"},              /* e.p. by the pinned c5 pawn: illegal */
        {0, "2k5/8/8/8/2pPp3/8/8/2R4K b - d3 0 2"},
        {0, "8/8/8/KPp4r/8/8/8/7k w - c6 0 1"},                  /* e.p. along the rank: illegal */
        {0, "8/8/8/KPp4r/8/8/8/7k w - - 0 1"},
        {0, "8/8/3k4/2pP4/8/8/8/6BK w - c6 0 1"},                /* pawn pinned? d5 on the diagonal g1-d4 no */
        {0, "8/8/8/1k6/2pP4/8/8/5B1K b - d3 0 1"},               /* e.p. captured pawn unpins the bishop */
        {0, "8/8/8/8/k2Pp2Q/8/8/3K4 b - d3 0 1"},                /* e.p. exposes the king along the rank */
        {0, "8/8/8/8/1k1Pp3/8/8/3K4 b - d3 0 1"},
        {0, "8/8/8/2k5/3Pp3/8/8/3K4 b - d3 0 1"},                /* the pawn gives check: e.p. resolves it */
        {0, "4k3/8/8/8/8/8/8/4K3 w - - 0 1"},
        {0, "r3k3/1P6/8/8/8/8/8/4K3 w q - 0 1"},                 /* promotions by push and capture */
        {0, "r1n1k3/1P6/8/8/8/8/8/4K3 w - - 0 1"},
        {0, "4k3/8/8/8/8/8/1p6/R1N1K3 b Q - 0 1"},
        {0, "4k3/8/8/8/8/8/3p4/4K3 w - - 0 1"},                  /* the pawn checks the king */
        {0, "k7/2P5/8/8/8/8/8/K6q w - - 0 1"},                   /* in check: no promotion helps */
        {0, "k3r3/3P4/8/8/8/8/8/4K3 w - - 0 1"},                 /* a promotion captures the checker */
        {0, "6k1/8/8/8/8/8/1K4P1/6rq w - - 0 1"},
        {0, "k7/8/8/8/8/8/6PK/5q1r w - - 0 1"},
        {0, "7k/K1P3r1/8/8/8/8/8/8 w - - 0 1"},                   /* a pinned pawn cannot promote */
        {0, "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1"},
        {0, "4k3/8/8/8/8/8/4q3/4K3 w - - 0 1"},                  /* check by an adjacent queen */
        {0, "4k3/8/8/8/1b6/8/3N4/4K2r w - - 0 1"},               /* double check: only king moves */
        {0, "4k3/4r3/8/8/8/8/4N3/4K3 w - - 0 1"},                /* pinned knight */
        {0, "4k3/4r3/8/8/8/8/4B3/4K3 w - - 0 1"},                /* pinned bishop */
        {0, "4k3/8/8/b7/8/8/3R4/4K3 w - - 0 1"},                 /* pinned rook */
        {0, "4k3/8/8/b7/8/8/3Q4/4K3 w - - 0 1"},                 /* pinned queen, along the pin */
        {0, "4k3/4r3/8/8/8/8/4P3/4K3 w - - 0 1"},                /* pinned pawn pushes along the pin */
        {0, "4k3/8/8/8/8/5p2/4P3/3K4 w - - 0 1"},
        {0, "4k3/8/8/b7/8/2p5/3P4/4K3 w - - 0 1"},               /* pinned pawn captures the pinner? no */
        {0, "4k3/8/8/8/8/2b5/3P4/4K3 w - - 0 1"},                /* it captures the pinner */
        {0, "7k/5Q2/6K1/8/8/8/8/8 b - - 0 1"},                   /* stalemate */
        {0, "7k/6Q1/6K1/8/8/8/8/8 b - - 0 1"},                   /* mate */
        {0, "7k/8/6K1/8/8/8/8/2B5 b - - 0 1"},                   /* insufficient material */
        {0, "7k/8/6K1/8/8/8/8/R7 b - - 100 80"},                 /* fifty moves */
        {0, "7k/8/6K1/8/8/8/8/R7 b - - 150 120"},                /* seventy-five moves */
        {0, "2Q1Q1rk/Q5pp/3Q4/1Q1Q2QQ/3Q4/Q6Q/2Q4Q/K3QQ2 w - - 0 1"}, /* 224 moves */
        {0, "R6R/3Q4/1Q4Q1/4Q3/2Q4Q/Q4Q2/pp1Q4/kBNN1KB1 w - - 0 1"},  /* 218 moves */
        {0, "n1n5/PPPk4/8/8/8/8/4Kppp/5N1N b - - 0 1"},
        {0, "8/Pk6/8/8/8/8/6Kp/8 b - - 0 1"},
        {0, "rnbqkb1r/pp1p1ppp/2p5/4P3/2B5/8/PPP1NnPP/RNBQK2R w KQkq - 0 6"},
        {0, "r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10"},
    };
    int ok = 0;
    mg_rng rng;
    mg_rng_seed(&rng, 960052);
    for (size_t i = 0; i < sizeof P / sizeof P[0]; i++) {
        mg_chess_state s;
        if (!load(&s, P[i].c960, P[i].fen)) {
            MG_CHECK(0);
            continue;
        }
        ok++;
        check_walk(s, &rng, 6);
        check_walk(s, &rng, 6);
    }
    MG_CHECK(ok == (int)(sizeof P / sizeof P[0]));
    /* Repetitions: the knights' shuffle reaches threefold (8 plies) and fivefold (16) repetition. */
    mg_chess_state s;
    MG_CHECK(load(&s, 0, "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"));
    static const int32_t shuffle[4] = {6 | 21 << 6, 62 | 45 << 6, 21 | 6 << 6, 45 | 62 << 6};
    int reasons_seen = 0;
    for (int p = 0; p < 16; p++) {
        mg_chess_undo u;
        MG_CHECK(mg_chess.is_legal(&s, shuffle[p % 4]));
        mg_chess_make(&s, shuffle[p % 4], &u);
        check_position(&s);
        int why;
        mg_chess_outcome(&s, &why);
        reasons_seen |= 1 << why;
    }
    MG_CHECK(reasons_seen & (1 << MG_TERM_THREEFOLD_REPETITION));
    MG_CHECK(reasons_seen & (1 << MG_TERM_FIVEFOLD_REPETITION));
}

int main(void)
{
    mg_games_init();
    MG_CHECK(mg_chess.legal_outcome != NULL && mg_chess960.legal_outcome != NULL);
    test_special_positions();
    test_reference_positions();
    test_random_games(0, 30, 3);
    test_random_games(1, 30, 3);
    printf("positions %ld, actions %ld, legal %ld (castlings %ld, en passant %ld, promotions %ld), in check %ld\n",
           C.positions, C.actions, C.legal, C.castles, C.ep, C.promos, C.in_check);
    /* The positions covered every kind of move. */
    MG_CHECK(C.positions > 1000 && C.castles > 100 && C.ep > 10 && C.promos > 100 && C.in_check > 50);
    MG_TEST_MAIN_END("test_chess_is_legal");
}
