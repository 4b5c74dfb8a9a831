/* test_gardner.c - Gardner minichess: perft, make/unmake, hashing, text, outcomes, bad input. */
#include <string.h>

#include "../game.h"
#include "../games/gardner/gardner.h"
#include "../games/san.h"
#include "../rng.h"
#include "mgtest.h"

static const char *START = "rnbqk/ppppp/5/PPPPP/RNBQK w - - 0 1";

static int load(const mg_game *g, mg_gardner_state *s, const char *fen, uint32_t flags)
{
    char err[MG_ERRLEN];
    mg_config cfg = {0, flags};
    int rc = g->from_text(s, &cfg, fen, err, sizeof err);
    if (rc != MG_OK)
        fprintf(stderr, "unexpected FEN error: %s\n", err);
    return rc;
}

static int32_t action(const mg_game *g, const mg_gardner_state *s, const char *move)
{
    char err[MG_ERRLEN];
    int32_t a = -1;
    if (g->action_from_str(s, move, &a, err, sizeof err) != MG_OK) {
        fprintf(stderr, "unexpected move error: %s\n", err);
        return -1;
    }
    return a;
}

/* Play space-separated moves; returns the number played before any failure. */
static int play(const mg_game *g, mg_gardner_state *s, const char *moves)
{
    char buf[16];
    int n = 0;
    mg_gardner_undo u;
    while (*moves) {
        while (*moves == ' ')
            moves++;
        size_t k = 0;
        while (moves[k] && moves[k] != ' ' && k < sizeof buf - 1)
            k++;
        if (!k)
            break;
        memcpy(buf, moves, k);
        buf[k] = '\0';
        moves += k;
        int32_t a = action(g, s, buf);
        if (a < 0)
            return n;
        g->make(s, a, &u);
        n++;
    }
    return n;
}

static int outcome_of(const mg_game *g, const mg_gardner_state *s, int *reason)
{
    return g->outcome(s, reason);
}

/* Positional fields only (the repetition ring depends on the path). */
static int same_position(const mg_gardner_state *a, const mg_gardner_state *b)
{
    return a->hash == b->hash && memcmp(a->board, b->board, sizeof a->board) == 0 && a->side == b->side &&
           memcmp(a->bb_type, b->bb_type, sizeof a->bb_type) == 0 &&
           memcmp(a->bb_color, b->bb_color, sizeof a->bb_color) == 0 && a->halfmove == b->halfmove &&
           a->fullmove == b->fullmove;
}

/* Bitboards agree with the mailbox. */
static int consistent(const mg_gardner_state *s)
{
    uint32_t type[7] = {0}, color[2] = {0};
    for (int i = 0; i < MG_GARDNER_SQUARES; i++) {
        uint8_t pc = s->board[i];
        if (!pc)
            continue;
        if ((pc & 7) < 1 || (pc & 7) > 6 || pc > 14)
            return 0;
        type[pc & 7] |= 1u << i;
        color[pc >> 3] |= 1u << i;
    }
    return memcmp(type + 1, s->bb_type + 1, 6 * sizeof(uint32_t)) == 0 && color[0] == s->bb_color[0] &&
           color[1] == s->bb_color[1] && !(color[0] & color[1]);
}

/* Checks at every position of a random game: make/unmake restore every byte, the
 * incremental hash matches a recomputation, is_legal and the move strings agree with
 * the generator, the FEN round-trips. */
static void random_games(mg_test_counts *t, const mg_game *g, uint32_t flags, int ngames, uint64_t seed)
{
    mg_rng rng;
    mg_rng_seed(&rng, seed);
    long positions = 0, terminal = 0;
    for (int gi = 0; gi < ngames; gi++) {
        mg_gardner_state s, before, back;
        if (load(g, &s, START, flags) != MG_OK) {
            t->failed++;
            return;
        }
        for (int ply = 0; ply < 300; ply++) {
            int32_t moves[MG_GARDNER_MAX_MOVES];
            char err[MG_ERRLEN], text[MG_MAX_TEXT], ms[MG_MAX_MOVE_STR];
            positions++;
            int n = g->legal_actions(&s, moves);
            MG_CHECK_T(t, n >= 0 && n <= g->max_moves);
            MG_CHECK_T(t, consistent(&s));
            MG_CHECK_T(t, s.hash == mg_gardner_compute_hash(&s));
            MG_CHECK_T(t, g->hash(&s) == s.hash);
            /* FEN round trip. */
            g->to_text(&s, text, sizeof text);
            mg_config cfg = {0, flags};
            MG_CHECK_T(t, g->from_text(&back, &cfg, text, err, sizeof err) == MG_OK && same_position(&s, &back));
            /* Every generated action: unique, legal, string round trip, make/unmake. */
            memcpy(&before, &s, sizeof s);
            for (int i = 0; i < n; i++) {
                for (int j = 0; j < i; j++)
                    if (moves[j] == moves[i])
                        t->failed++;
                MG_CHECK_T(t, g->is_legal(&s, moves[i]));
                size_t k = g->action_to_str(&s, moves[i], ms, sizeof ms);
                int32_t a2 = -1;
                MG_CHECK_T(t, k >= 4 && g->action_from_str(&s, ms, &a2, err, sizeof err) == MG_OK &&
                                  a2 == moves[i]);
                mg_gardner_undo u;
                g->make(&s, moves[i], &u);
                MG_CHECK_T(t, s.hash == mg_gardner_compute_hash(&s));
                /* The mover's king is never left attacked. */
                mg_gardner_state flip = s;
                flip.side ^= 1;
                MG_CHECK_T(t, !mg_gardner_in_check(&flip));
                g->unmake(&s, moves[i], &u);
                if (memcmp(&s, &before, sizeof s) != 0) {
                    t->failed++;
                    fprintf(stderr, "make/unmake of %s changed the state\n", ms);
                    memcpy(&s, &before, sizeof s);
                }
            }
            /* is_legal agrees with the list on random action ids. */
            for (int r = 0; r < 8; r++) {
                int32_t a = (int32_t)mg_rng_below(&rng, MG_GARDNER_NUM_ACTIONS);
                int in = 0;
                for (int i = 0; i < n; i++)
                    in |= moves[i] == a;
                MG_CHECK_T(t, !!g->is_legal(&s, a) == in);
            }
            int reason;
            int res = g->outcome(&s, &reason);
            MG_CHECK_T(t, (n == 0) == (reason == MG_TERM_CHECKMATE || reason == MG_TERM_STALEMATE));
            if (res != MG_ONGOING) {
                terminal++;
                break;
            }
            mg_gardner_undo u;
            g->make(&s, moves[mg_rng_below(&rng, (uint32_t)n)], &u);
        }
    }
    MG_CHECK_T(t, terminal > ngames / 2);
    printf("  random games: %d games, %ld positions, %ld ended by the rules\n", ngames, positions, terminal);
}

/* A long reversible walk (kings and knights) past the repetition ring, then unwound. */
static void long_walk(mg_test_counts *t, const mg_game *g)
{
    enum { N = 400 };
    static mg_gardner_state saved[N + 1];
    static mg_gardner_undo undo[N];
    static int32_t played[N];
    mg_gardner_state s;
    mg_rng rng;
    mg_rng_seed(&rng, 7);
    if (load(g, &s, "n3k/5/5/5/N3K w - - 0 1", 0) != MG_OK) {
        t->failed++;
        return;
    }
    int n_played = 0, threefold = 0;
    for (int i = 0; i < N; i++) {
        int32_t moves[MG_GARDNER_MAX_MOVES], rev[MG_GARDNER_MAX_MOVES];
        int n = g->legal_actions(&s, moves), nr = 0;
        for (int j = 0; j < n; j++) {   /* keep the walk reversible: no captures */
            int to = (moves[j] / 25) % 25;
            if (!s.board[to])
                rev[nr++] = moves[j];
        }
        if (!nr)
            break;
        memcpy(&saved[i], &s, sizeof s);
        played[i] = rev[mg_rng_below(&rng, (uint32_t)nr)];
        if (i >= 2 && mg_rng_below(&rng, 2)) {   /* often step back: repetitions */
            int32_t back = (played[i - 2] / 25) % 25 + 25 * (played[i - 2] % 25);
            for (int j = 0; j < nr; j++)
                if (rev[j] == back)
                    played[i] = back;
        }
        g->make(&s, played[i], &undo[i]);
        n_played++;
        /* The threefold count seen by outcome() must agree with a count over the saved
         * states since the start (all moves are reversible): same position 3 times. */
        int count = 1;
        for (int j = i - 1; j >= 0 && i + 1 - j < MG_GARDNER_HIST; j -= 2)
            count += saved[j].hash == s.hash;
        int reason, nl = g->legal_actions(&s, moves);
        g->outcome(&s, &reason);
        if (nl == 0)
            MG_CHECK_T(t, reason == MG_TERM_CHECKMATE || reason == MG_TERM_STALEMATE);
        else if (s.halfmove < 100)
            MG_CHECK_T(t, (reason == MG_TERM_THREEFOLD_REPETITION) == (count >= 3));
        else
            MG_CHECK_T(t, reason == MG_TERM_FIFTY_MOVES);
        threefold += reason == MG_TERM_THREEFOLD_REPETITION;
    }
    printf("  long walk: %d plies, %d threefold positions\n", n_played, threefold);
    MG_CHECK_T(t, n_played > 300 && threefold > 0);
    MG_CHECK_T(t, s.hist_len == MG_GARDNER_HIST);
    for (int i = n_played - 1; i >= 0; i--) {
        g->unmake(&s, played[i], &undo[i]);
        if (memcmp(&s, &saved[i], sizeof s) != 0) {
            t->failed++;
            fprintf(stderr, "long walk: unmake at ply %d did not restore the state\n", i);
            break;
        }
    }
}

static void check_outcome(mg_test_counts *t, const mg_game *g, const char *fen, int result, int reason)
{
    mg_gardner_state s;
    if (load(g, &s, fen, 0) != MG_OK) {
        t->failed++;
        return;
    }
    int why = -1;
    int r = outcome_of(g, &s, &why);
    if (r != result || why != reason) {
        t->failed++;
        fprintf(stderr, "outcome of %s: got %d (%s), want %d (%s)\n", fen, r, mg_termination_name(why), result,
                mg_termination_name(reason));
    } else {
        t->passed++;
    }
}

static void check_bad_fen(mg_test_counts *t, const mg_game *g, const char *fen, const char *want)
{
    mg_gardner_state s;
    memset(&s, 0x5a, sizeof s);
    mg_gardner_state before = s;
    char err[MG_ERRLEN] = "";
    int rc = g->from_text(&s, NULL, fen, err, sizeof err);
    if (rc != MG_ERR || !strstr(err, want)) {
        t->failed++;
        fprintf(stderr, "bad FEN '%s': rc %d, message '%s' (want '%s')\n", fen, rc, err, want);
    } else {
        t->passed++;
    }
    MG_CHECK_T(t, memcmp(&s, &before, sizeof s) == 0);
}

static void check_bad_move(mg_test_counts *t, const mg_game *g, const char *fen, uint32_t flags, const char *move,
                           const char *want)
{
    mg_gardner_state s;
    if (load(g, &s, fen, flags) != MG_OK) {
        t->failed++;
        return;
    }
    char err[MG_ERRLEN] = "";
    int32_t a = 12345;
    int rc = g->action_from_str(&s, move, &a, err, sizeof err);
    if (rc != MG_ERR || !strstr(err, want) || a != 12345) {
        t->failed++;
        fprintf(stderr, "bad move '%s' in %s: rc %d, message '%s' (want '%s')\n", move, fen, rc, err, want);
    } else {
        t->passed++;
    }
}

int main(void)
{
    mg_test_counts T = {0, 0};
    mg_games_init();
    const mg_game *g = mg_game_by_name("gardner");
    MG_CHECK(g == &mg_gardner);
    if (!g)
        MG_TEST_MAIN_END("test_gardner");
    MG_CHECK(g->state_size == sizeof(mg_gardner_state) && g->state_size <= MG_MAX_STATE);
    MG_CHECK(g->undo_size <= MG_MAX_UNDO && g->max_moves <= MG_MAX_MOVES);

    mg_gardner_state s;
    char err[MG_ERRLEN], buf[MG_MAX_TEXT];
    MG_CHECK(g->init(&s, NULL, err, sizeof err) == MG_OK);
    g->to_text(&s, buf, sizeof buf);
    MG_CHECK(strcmp(buf, START) == 0);

    /* Zobrist keys are the documented splitmix64 stream: key i = output i + 1 from the seed. */
    {
        uint64_t keys[301], x = 0x6761726478346d67ULL;
        for (int i = 0; i < 301; i++)
            keys[i] = mg_splitmix64(&x);
        /* Piece index (colour * 6 + type - 1) * 25 + square; 300 = Black to move. */
        uint64_t h = 0;
        for (int sq = 0; sq < 25; sq++) {
            uint8_t pc = s.board[sq];
            if (pc)
                h ^= keys[((pc >> 3) * 6 + (pc & 7) - 1) * 25 + sq];
        }
        MG_CHECK(h == s.hash);
        /* The letters of the start position at their squares. */
        MG_CHECK(s.board[0] == 4 && s.board[3] == 5 && s.board[4] == 6 && s.board[24] == 14 && s.board[20] == 12);
        mg_gardner_state b;
        MG_CHECK(load(g, &b, "rnbqk/ppppp/5/PPPPP/RNBQK b - - 0 1", 0) == MG_OK);
        MG_CHECK(b.hash == (h ^ keys[300]));
    }

    /* Perft from the start position: cross-checked against tests/gardner_reference.py
     * (an independent pure-Python generator) to depth 7; see tests/test_gardner.py. */
    static const uint64_t PERFT[] = {1, 7, 53, 506, 4775, 52184, 564565, 6762386};
    for (int d = 0; d <= 6; d++)
        MG_CHECK_EQ_U64(mg_perft(g, &s, d), PERFT[d]);
    /* The generic perft (make/unmake at every leaf) agrees with the fast one. */
    MG_CHECK_EQ_U64(mg_perft_generic(g, &s, 5, NULL), PERFT[5]);
    {
        int32_t mv[MG_MAX_MOVES];
        uint64_t cnt[MG_MAX_MOVES], sum = 0;
        int n = mg_perft_divide(g, &s, 5, mv, cnt, NULL);
        MG_CHECK(n == 7);
        for (int i = 0; i < n; i++)
            sum += cnt[i];
        MG_CHECK_EQ_U64(sum, PERFT[5]);
    }
    g->to_text(&s, buf, sizeof buf);
    MG_CHECK(strcmp(buf, START) == 0);

    /* Promotion choices: 3 per pawn move to the last rank, 4 with the bishop option. */
    {
        const char *fen = "k4/2P2/5/5/4K w - - 0 1";   /* c4c5 */
        mg_gardner_state p;
        MG_CHECK(load(g, &p, fen, 0) == MG_OK);
        MG_CHECK_EQ_U64(mg_perft(g, &p, 1), 3 + 3);
        MG_CHECK(g->action_from_str(&p, "c4c5q", &(int32_t){0}, err, sizeof err) == MG_OK);
        MG_CHECK(action(g, &p, "c4c5n") == 17 + 25 * 22 + 625 * 1);
        MG_CHECK(action(g, &p, "c4c5Q") == 17 + 25 * 22 + 625 * 4);
        MG_CHECK(!g->is_legal(&p, 17 + 25 * 22 + 625 * 2));
        MG_CHECK(load(g, &p, fen, MG_FLAG_GARDNER_BISHOP) == MG_OK);
        MG_CHECK_EQ_U64(mg_perft(g, &p, 1), 4 + 3);
        MG_CHECK(g->is_legal(&p, 17 + 25 * 22 + 625 * 2));
        g->action_to_str(&p, 17 + 25 * 22 + 625 * 2, buf, sizeof buf);
        MG_CHECK(strcmp(buf, "c4c5b") == 0);
        /* Black promotes on rank 1, capturing. */
        MG_CHECK(load(g, &p, "4k/5/5/3p1/K1R2 b - - 3 20", 0) == MG_OK);
        int32_t a = action(g, &p, "d2c1r");
        MG_CHECK(a == 8 + 25 * 2 + 625 * 3);
        mg_gardner_undo u;
        g->make(&p, a, &u);
        g->to_text(&p, buf, sizeof buf);
        MG_CHECK(strcmp(buf, "4k/5/5/5/K1r2 w - - 0 21") == 0);
        MG_CHECK(p.hash == mg_gardner_compute_hash(&p));
        g->unmake(&p, a, &u);
        g->to_text(&p, buf, sizeof buf);
        MG_CHECK(strcmp(buf, "4k/5/5/3p1/K1R2 b - - 3 20") == 0);
        /* The start position has no promotions before ply 5; the option changes perft only there. */
        mg_gardner_state q;
        MG_CHECK(load(g, &q, START, MG_FLAG_GARDNER_BISHOP) == MG_OK);
        MG_CHECK_EQ_U64(mg_perft(g, &q, 4), PERFT[4]);
        MG_CHECK(mg_perft(g, &q, 6) > PERFT[6]);
    }

    /* Pins and checks. */
    {
        mg_gardner_state p;
        /* The d2 rook is pinned on the d-file by the d5 rook: it may move along the file only. */
        MG_CHECK(load(g, &p, "3rk/5/5/3R1/3K1 w - - 0 1", 0) == MG_OK);
        MG_CHECK(g->is_legal(&p, action(g, &p, "d2d5")));
        MG_CHECK(g->is_legal(&p, action(g, &p, "d2d4")));
        char e2[MG_ERRLEN];
        int32_t a;
        MG_CHECK(g->action_from_str(&p, "d2a2", &a, e2, sizeof e2) == MG_ERR);
        /* Double check: only king moves. */
        MG_CHECK(load(g, &p, "4k/5/2n2/5/R2Kr w - - 0 1", 0) == MG_OK);
        int32_t mv[MG_GARDNER_MAX_MOVES];
        int n = g->legal_actions(&p, mv);
        MG_CHECK(n > 0);
        for (int i = 0; i < n; i++)
            MG_CHECK(mv[i] % 25 == 3);
        /* A king may not step back along the checking ray. */
        MG_CHECK(load(g, &p, "4k/5/5/5/r2K1 w - - 0 1", 0) == MG_OK);
        MG_CHECK(!g->is_legal(&p, 3 + 25 * 4));
        MG_CHECK(mg_gardner_in_check(&p));
    }

    /* Outcomes. */
    check_outcome(&T, g, START, MG_ONGOING, MG_TERM_NONE);
    check_outcome(&T, g, "k4/1Q3/1K3/5/5 b - - 0 1", MG_P0_WINS, MG_TERM_CHECKMATE);
    check_outcome(&T, g, "K4/1q3/1k3/5/5 w - - 0 1", MG_P1_WINS, MG_TERM_CHECKMATE);
    check_outcome(&T, g, "k4/2Q2/1K3/5/5 b - - 0 1", MG_DRAW, MG_TERM_STALEMATE);
    check_outcome(&T, g, "k4/5/2K2/5/5 b - - 0 1", MG_DRAW, MG_TERM_INSUFFICIENT_MATERIAL);
    check_outcome(&T, g, "k4/5/2KN1/5/5 b - - 0 1", MG_DRAW, MG_TERM_INSUFFICIENT_MATERIAL);
    check_outcome(&T, g, "k4/5/2K2/5/b4 w - - 0 1", MG_DRAW, MG_TERM_INSUFFICIENT_MATERIAL);
    check_outcome(&T, g, "k4/5/b1K2/5/B4 w - - 0 1", MG_DRAW, MG_TERM_INSUFFICIENT_MATERIAL); /* same colour */
    check_outcome(&T, g, "k4/5/2Kb1/5/B4 w - - 0 1", MG_ONGOING, MG_TERM_NONE);             /* opposite */
    check_outcome(&T, g, "k4/5/1nK2/5/B4 w - - 0 1", MG_ONGOING, MG_TERM_NONE);
    check_outcome(&T, g, "k4/5/2K2/5/NN3 w - - 0 1", MG_ONGOING, MG_TERM_NONE);
    check_outcome(&T, g, "k4/5/2K2/4P/5 w - - 0 1", MG_ONGOING, MG_TERM_NONE);
    check_outcome(&T, g, "k4/5/2K2/4R/5 w - - 99 80", MG_ONGOING, MG_TERM_NONE);
    check_outcome(&T, g, "k4/5/2K2/4R/5 w - - 100 80", MG_DRAW, MG_TERM_FIFTY_MOVES);
    check_outcome(&T, g, "k4/1Q3/1K3/5/5 b - - 100 80", MG_P0_WINS, MG_TERM_CHECKMATE);
    {
        /* Fifty moves reached by a move; mate on the hundredth ply beats the rule. */
        mg_gardner_state p;
        MG_CHECK(load(g, &p, "k4/5/2K2/4R/5 w - - 99 80", 0) == MG_OK);
        MG_CHECK(play(g, &p, "e2e3") == 1);
        int why;
        MG_CHECK(g->outcome(&p, &why) == MG_DRAW && why == MG_TERM_FIFTY_MOVES);
        MG_CHECK(load(g, &p, "k4/5/1K3/4Q/5 w - - 99 80", 0) == MG_OK);
        MG_CHECK(play(g, &p, "e2e5") == 1);
        MG_CHECK(g->outcome(&p, &why) == MG_P0_WINS && why == MG_TERM_CHECKMATE);
        MG_CHECK(p.halfmove == 100);
    }
    {
        /* Threefold repetition by knight shuffles; a capture resets the count. */
        mg_gardner_state p;
        int why;
        MG_CHECK(g->init(&p, NULL, err, sizeof err) == MG_OK);
        MG_CHECK(play(g, &p, "b1c3 b5a3 c3b1 a3b5 b1c3 b5a3 c3b1") == 7);
        MG_CHECK(g->outcome(&p, &why) == MG_ONGOING && why == MG_TERM_NONE);
        MG_CHECK(play(g, &p, "a3b5") == 1);
        MG_CHECK(g->outcome(&p, &why) == MG_DRAW && why == MG_TERM_THREEFOLD_REPETITION);
        g->to_text(&p, buf, sizeof buf);
        MG_CHECK(strcmp(buf, "rnbqk/ppppp/5/PPPPP/RNBQK w - - 8 5") == 0);
        /* A position set from text knows no history. */
        mg_gardner_state q;
        MG_CHECK(load(g, &q, buf, 0) == MG_OK);
        MG_CHECK(g->outcome(&q, &why) == MG_ONGOING);
    }

    /* Partial FEN, as chess reads it: the fields left out default to "w - - 0 1". */
    {
        static const char *const partial[][2] = {
            {"rnbqk/ppppp/5/PPPPP/RNBQK", "rnbqk/ppppp/5/PPPPP/RNBQK w - - 0 1"},
            {"  rnbqk/ppppp/5/PPPPP/RNBQK\t", "rnbqk/ppppp/5/PPPPP/RNBQK w - - 0 1"},
            {"k4/5/5/4r/K4 b", "k4/5/5/4r/K4 b - - 0 1"},
            {"k4/5/5/4r/K4 b -", "k4/5/5/4r/K4 b - - 0 1"},
            {"k4/5/5/4r/K4 b - -", "k4/5/5/4r/K4 b - - 0 1"},
            {"k4/5/5/4r/K4 b - - 17", "k4/5/5/4r/K4 b - - 17 1"},
            {"k4/5/5/4r/K4\tb  -\n- 17 9", "k4/5/5/4r/K4 b - - 17 9"},
        };
        for (size_t i = 0; i < sizeof partial / sizeof partial[0]; i++) {
            mg_gardner_state p, q;
            MG_CHECK(load(g, &p, partial[i][0], 0) == MG_OK && load(g, &q, partial[i][1], 0) == MG_OK);
            g->to_text(&p, buf, sizeof buf);
            MG_CHECK(strcmp(buf, partial[i][1]) == 0 && memcmp(&p, &q, sizeof p) == 0);
        }
    }

    /* Bad text: each message names the problem. */
    check_bad_fen(&T, g, "", "empty");
    check_bad_fen(&T, g, " \t ", "empty");
    check_bad_fen(&T, g, "rnbqk/ppppp/5/PPPPP w - - 0 1", "has 4 ranks, expected 5");
    check_bad_fen(&T, g, "rnbqk/ppppp/5/PPPPP/RNBQK/5 w - - 0 1", "more than 5 ranks");
    check_bad_fen(&T, g, "rnbqk/ppppp/6/PPPPP/RNBQK w - - 0 1", "bad empty-square count '6' in rank 3");
    check_bad_fen(&T, g, "rnbqk/ppppp/0/PPPPP/RNBQK w - - 0 1", "bad empty-square count '0'");
    check_bad_fen(&T, g, "rnbqk/ppppp/4/PPPPP/RNBQK w - - 0 1", "rank 3 '4'");
    check_bad_fen(&T, g, "rnbqkr/ppppp/5/PPPPP/RNBQK w - - 0 1", "rank 5 'rnbqkr'");
    check_bad_fen(&T, g, "rnbqk/ppppp/23/PPPPP/RNBQK w - - 0 1", "two digits");
    check_bad_fen(&T, g, "rnbqk/ppxpp/5/PPPPP/RNBQK w - - 0 1", "bad piece letter 'x' in rank 4 'ppxpp'");
    check_bad_fen(&T, g, "rnbqk/pp\x01pp/5/PPPPP/RNBQK w - - 0 1", "bad piece letter byte 0x01");
    check_bad_fen(&T, g, "rnbqk/ppppp/5/PPPPP/RNBQK x - - 0 1", "side to move");
    check_bad_fen(&T, g, "rnbqk/ppppp/5/PPPPP/RNBQK w KQkq - 0 1", "castling field 'KQkq'");
    check_bad_fen(&T, g, "rnbqk/ppppp/5/PPPPP/RNBQK w - c3 0 1", "en passant field 'c3'");
    check_bad_fen(&T, g, "rnbqk/ppppp/5/PPPPP/RNBQK w - - x 1", "halfmove clock 'x'");
    check_bad_fen(&T, g, "rnbqk/ppppp/5/PPPPP/RNBQK w - - 0 0", "fullmove number '0'");
    check_bad_fen(&T, g, "rnbqk/ppppp/5/PPPPP/RNBQK w - - -1 1", "halfmove clock '-1'");
    check_bad_fen(&T, g, "rnbqk/ppppp/5/PPPPP/RNBQK w - - 0 1 extra", "more than 6 fields (extra 'extra')");
    check_bad_fen(&T, g, "rnbqk/ppppp/5/PPPPP/RNBQK -", "side to move '-'");
    check_bad_fen(&T, g, "rnbqk/ppppp/5/PPPPP/RNBQK w K", "castling field 'K'");
    check_bad_fen(&T, g, "rnbqk/ppppp/5/PPPPP/RNBQK w - e3", "en passant field 'e3'");
    check_bad_fen(&T, g, "rnbqk/ppppp/5/PPPPP/RNBQK w - - 5 x", "fullmove number 'x'");
    check_bad_fen(&T, g, "rnbqk/ppppp/5/PPPPP/RNBQ1 w - - 0 1", "White has 0 kings");
    check_bad_fen(&T, g, "rnbkk/ppppp/5/PPPPP/RNBQK w - - 0 1", "Black has 2 kings");
    check_bad_fen(&T, g, "Pnbqk/1pppp/5/PPPPP/RNBQK w - - 0 1", "pawn on the first or last rank (a5)");
    check_bad_fen(&T, g, "rnbqk/ppppp/5/PPPPP/pNBQK w - - 0 1", "pawn on the first or last rank (a1)");
    check_bad_fen(&T, g, "4k/4R/5/5/K4 w - - 0 1", "side not to move (Black) is in check");
    check_bad_fen(&T, g, "4k/5/5/5/K3r b - - 0 1", "side not to move (White) is in check");
    check_bad_fen(&T, g, "5/5/2kK1/5/5 w - - 0 1", "is in check");

    /* Bad and illegal moves. */
    check_bad_move(&T, g, START, 0, "", "invalid Gardner move ''");
    check_bad_move(&T, g, START, 0, "e2", "invalid Gardner move 'e2'");
    check_bad_move(&T, g, START, 0, "f2f3", "invalid Gardner move 'f2f3'");
    check_bad_move(&T, g, START, 0, "a2a6", "invalid Gardner move");
    check_bad_move(&T, g, START, 0, "a2a3x", "invalid Gardner move");
    check_bad_move(&T, g, START, 0, "a2a3qq", "invalid Gardner move");
    check_bad_move(&T, g, START, 0, "a2a4", "not a legal move");
    check_bad_move(&T, g, START, 0, "c3c4", "no piece on the from square");
    check_bad_move(&T, g, START, 0, "a4a3", "belongs to the side not to move");
    check_bad_move(&T, g, START, 0, "a2a3q", "not a promotion");
    check_bad_move(&T, g, START, 0, "b1a3q", "only a pawn can promote");
    check_bad_move(&T, g, "k4/2P2/5/5/4K w - - 0 1", 0, "c4c5", "must name its promotion piece");
    check_bad_move(&T, g, "k4/2P2/5/5/4K w - - 0 1", 0, "c4c5b", "promotion to a bishop is not allowed");
    check_bad_move(&T, g, "k4/1Q3/1K3/5/5 b - - 0 1", 0, "a5b4", "not a legal move");
    {
        int32_t a;
        MG_CHECK(g->init(&s, NULL, err, sizeof err) == MG_OK);
        MG_CHECK(g->action_to_str(&s, -1, buf, sizeof buf) == 0);
        MG_CHECK(g->action_to_str(&s, MG_GARDNER_NUM_ACTIONS, buf, sizeof buf) == 0);
        MG_CHECK(!g->is_legal(&s, -1) && !g->is_legal(&s, MG_GARDNER_NUM_ACTIONS) && !g->is_legal(&s, 1 << 30));
        MG_CHECK(g->action_from_str(&s, "b1c3", &a, err, sizeof err) == MG_OK && a == 1 + 25 * 12);
    }

    /* SAN through the generic san.c and the Gardner hooks. */
    {
        const mg_san_ops *ops = &mg_gardner_san_ops;
        MG_CHECK(ops->game == g && ops->files == 5 && ops->ranks == 5);
        MG_CHECK(mg_san_ops_for("gardner") == ops);
        mg_gardner_state p;
        int32_t a;
        MG_CHECK(g->init(&p, NULL, err, sizeof err) == MG_OK);
        MG_CHECK(mg_san_write(ops, &p, action(g, &p, "b1c3"), buf, sizeof buf) == 3 && !strcmp(buf, "Nc3"));
        MG_CHECK(mg_san_write(ops, &p, action(g, &p, "e2e3"), buf, sizeof buf) == 2 && !strcmp(buf, "e3"));
        MG_CHECK(mg_san_parse(ops, &p, "Na3", &a, err, sizeof err) == MG_OK && a == 1 + 25 * 10);
        MG_CHECK(mg_san_parse(ops, &p, "Nf3", &a, err, sizeof err) == MG_ERR && strstr(err, "Nf3"));
        MG_CHECK(mg_san_parse(ops, &p, "O-O", &a, err, sizeof err) == MG_ERR);
        MG_CHECK(play(g, &p, "b1c3") == 1);
        MG_CHECK(mg_san_write(ops, &p, action(g, &p, "d4c3"), buf, sizeof buf) && !strcmp(buf, "dxc3"));
        MG_CHECK(load(g, &p, "k4/2P2/5/5/4K w - - 0 1", 0) == MG_OK);
        MG_CHECK(mg_san_write(ops, &p, action(g, &p, "c4c5q"), buf, sizeof buf) && !strcmp(buf, "c5=Q+"));
        MG_CHECK(mg_san_parse(ops, &p, "c5=N", &a, err, sizeof err) == MG_OK && a == 17 + 25 * 22 + 625);
        MG_CHECK(mg_san_parse(ops, &p, "c5=B", &a, err, sizeof err) == MG_ERR);
        MG_CHECK(load(g, &p, "k4/5/1K3/4Q/5 w - - 0 1", 0) == MG_OK);
        MG_CHECK(mg_san_write(ops, &p, action(g, &p, "e2e5"), buf, sizeof buf) && !strcmp(buf, "Qe5#"));
        /* Round trip over the moves of random positions. */
        mg_rng rng;
        mg_rng_seed(&rng, 5);
        long checked = 0;
        for (int gi = 0; gi < 20; gi++) {
            MG_CHECK(load(g, &p, START, gi & 1 ? MG_FLAG_GARDNER_BISHOP : 0) == MG_OK);
            while (g->outcome(&p, NULL) == MG_ONGOING) {
                int32_t mv[MG_GARDNER_MAX_MOVES];
                int n = g->legal_actions(&p, mv);
                for (int i = 0; i < n; i++) {
                    size_t k = mg_san_write(ops, &p, mv[i], buf, sizeof buf);
                    MG_CHECK(k > 1 && mg_san_parse(ops, &p, buf, &a, err, sizeof err) == MG_OK && a == mv[i]);
                    checked++;
                }
                mg_gardner_undo u;
                g->make(&p, mv[mg_rng_below(&rng, (uint32_t)n)], &u);
            }
        }
        MG_CHECK(checked > 5000);
    }

    /* Random games (both rule sets) and a long walk past the repetition ring. */
    random_games(&T, g, 0, 200, 1);
    random_games(&T, g, MG_FLAG_GARDNER_BISHOP, 100, 2);
    long_walk(&T, g);

    MG_TEST_MAIN_END("test_gardner");
}
