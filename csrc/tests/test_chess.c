/* test_chess.c - chess and Chess960: perft against reference data, make/unmake and hash
 * invariants over random games, FEN validation and round trips, SAN, outcomes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../game.h"
#include "../games/chess/bitboard.h"
#include "../games/chess/chess.h"
#include "../games/san.h"
#include "../rng.h"
#include "mgtest.h"

static mg_test_counts T;

static int load(mg_chess_state *s, int c960, const char *fen)
{
    char err[MG_ERRLEN] = "";
    if (mg_chess_from_fen(s, c960, fen, err, sizeof err) != MG_OK) {
        fprintf(stderr, "unexpected FEN error: %s\n", err);
        return 0;
    }
    return 1;
}

/* Every internal redundancy of a state agrees with the board array. */
static int consistent(const mg_chess_state *s)
{
    uint64_t bb[7] = {0}, occ[2] = {0};
    for (int sq = 0; sq < 64; sq++) {
        int pc = s->board[sq];
        if (!pc)
            continue;
        if ((pc & 7) < MG_CH_PAWN || (pc & 7) > MG_CH_KING || (pc >> 3) > 1)
            return 0;
        bb[0] |= 1ULL << sq;
        bb[pc & 7] |= 1ULL << sq;
        occ[pc >> 3] |= 1ULL << sq;
    }
    return !memcmp(bb, s->bb, sizeof bb) && !memcmp(occ, s->occ, sizeof occ) &&
           s->hash == mg_chess_compute_hash(s);
}

static void test_startpos(void)
{
    static const uint64_t expect[] = {1, 20, 400, 8902, 197281, 4865609};
    mg_chess_state s;
    MG_CHECK(load(&s, 0, "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"));
    for (int d = 0; d <= 5; d++)
        MG_CHECK_EQ_U64(mg_chess.perft(&s, d, NULL), expect[d]);
    /* The generic perft (full move lists, make/unmake at every ply) agrees. */
    MG_CHECK_EQ_U64(mg_perft_generic(&mg_chess, &s, 4, NULL), expect[4]);
    mg_chess_state s2;
    char err[MG_ERRLEN];
    MG_CHECK(mg_chess.init(&s2, NULL, err, sizeof err) == MG_OK);
    MG_CHECK(!memcmp(&s, &s2, sizeof s));
}

/* Runs the perft lines of an EPD+perft file ("id", "epd", "perft D N" lines). Positions whose
 * castling rights only make sense in Chess960 are run as Chess960; others in both variants. */
static void run_perft_file(const char *path, int max_depth, uint64_t max_nodes, int every)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        printf("skip: %s not found\n", path);
        return;
    }
    char line[512], fen[512] = "";
    int have = 0, index = -1, positions = 0;
    mg_chess_state s960, sstd;
    int std_ok = 0;
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\r\n")] = '\0';
        if (!strncmp(line, "epd ", 4)) {
            index++;
            snprintf(fen, sizeof fen, "%s", line + 4);
            have = (index % every == 0) && load(&s960, 1, fen);
            char err[MG_ERRLEN];
            std_ok = have && mg_chess_from_fen(&sstd, 0, fen, err, sizeof err) == MG_OK;
            positions += have;
            MG_CHECK(index % every != 0 || have);
        } else if (have && !strncmp(line, "perft ", 6)) {
            int d = 0;
            unsigned long long n = 0;
            if (sscanf(line + 6, "%d %llu", &d, &n) != 2 || d > max_depth || n > max_nodes)
                continue;
            uint64_t got = mg_chess960.perft(&s960, d, NULL);
            if (got != n)
                fprintf(stderr, "perft mismatch (chess960) %s depth %d: %llu != %llu\n", fen, d,
                        (unsigned long long)got, n);
            MG_CHECK_EQ_U64(got, n);
            if (std_ok)
                MG_CHECK_EQ_U64(mg_chess.perft(&sstd, d, NULL), n);
        }
    }
    fclose(f);
    printf("%s: %d positions\n", path, positions);
}

static void test_reference_perft(void)
{
    const char *dir = mg_test_data_dir();
    if (!dir) {
        printf("skip: reference data directory not found (set MG_SHARED_DATA)\n");
        return;
    }
    char path[1024];
    snprintf(path, sizeof path, "%s/perft/tricky.perft", dir);
    run_perft_file(path, 5, 2000000, 1);
    snprintf(path, sizeof path, "%s/perft/chess960.perft", dir);
    run_perft_file(path, 3, 200000, 1);
    run_perft_file(path, 4, 2000000, 61);
}

/* Random games: at every ply every legal move is made and unmade; the state must come back
 * byte for byte, the incremental hash must equal the recomputed one, the counting generator
 * must agree with the list generator, and SAN / UCI must round-trip. */
static void test_random_games(int c960, int games)
{
    const mg_game *g = c960 ? &mg_chess960 : &mg_chess;
    const mg_san_ops *ops = c960 ? &mg_chess960_san_ops : &mg_chess_san_ops;
    mg_rng rng;
    mg_rng_seed(&rng, 12345 + (uint64_t)c960);
    long checked = 0;
    for (int game = 0; game < games; game++) {
        mg_chess_state s;
        char fen[128];
        if (c960)
            mg_chess960_start_fen((int)mg_rng_below(&rng, 960), fen, sizeof fen);
        else
            snprintf(fen, sizeof fen, "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1");
        if (!load(&s, c960, fen)) {
            MG_CHECK(0);
            continue;
        }
        mg_chess_undo undo[400];
        int32_t played[400];
        mg_chess_state start = s;
        int ply = 0;
        for (; ply < 300; ply++) {
            int32_t moves[MG_CHESS_MAX_MOVES];
            int n = mg_chess_legal_actions(&s, moves);
            if (n != mg_chess_count_legal(&s)) {
                MG_CHECK(n == mg_chess_count_legal(&s));
                break;
            }
            if (n == 0 || g->outcome(&s, NULL) != MG_ONGOING)
                break;
            for (int i = 0; i < n; i++) {
                mg_chess_state before = s;
                mg_chess_undo u;
                char buf[32], err[MG_ERRLEN];
                int32_t back = -1;
                int ok = g->is_legal(&s, moves[i]);
                ok = ok && g->action_to_str(&s, moves[i], buf, sizeof buf) > 0 &&
                     g->action_from_str(&s, buf, &back, err, sizeof err) == MG_OK && back == moves[i];
                ok = ok && mg_san_write(ops, &s, moves[i], buf, sizeof buf) > 0 &&
                     mg_san_parse(ops, &s, buf, &back, err, sizeof err) == MG_OK && back == moves[i];
                g->make(&s, moves[i], &u);
                ok = ok && consistent(&s);
                g->unmake(&s, moves[i], &u);
                ok = ok && !memcmp(&s, &before, sizeof s);
                if (!ok) {
                    char f2[128];
                    mg_chess_to_fen(&before, f2, sizeof f2);
                    fprintf(stderr, "move %d failed in %s\n", moves[i], f2);
                    s = before;
                }
                MG_CHECK(ok);
                checked++;
            }
            played[ply] = moves[mg_rng_below(&rng, (uint32_t)n)];
            g->make(&s, played[ply], &undo[ply]);
        }
        /* Unwind the whole game. */
        while (ply-- > 0)
            g->unmake(&s, played[ply], &undo[ply]);
        MG_CHECK(!memcmp(&s, &start, sizeof s));
    }
    printf("random %s games: %ld moves checked\n", g->name, checked);
}

static void expect_bad(int c960, const char *fen, const char *needle)
{
    mg_chess_state s;
    memset(&s, 0x5a, sizeof s);
    mg_chess_state copy = s;
    char err[MG_ERRLEN] = "";
    int rc = mg_chess_from_fen(&s, c960, fen, err, sizeof err);
    int ok = rc == MG_ERR && strstr(err, needle) != NULL && !memcmp(&s, &copy, sizeof s);
    if (!ok)
        fprintf(stderr, "bad FEN '%s': rc %d, message '%s' (wanted '%s')\n", fen, rc, err, needle);
    MG_CHECK(ok);
}

static void test_bad_fens(void)
{
    expect_bad(0, "", "empty");
    expect_bad(0, "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 extra", "more than 6 fields");
    expect_bad(0, "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP w KQkq - 0 1", "has 7 ranks");
    expect_bad(0, "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR/8 w KQkq - 0 1", "more than 8 ranks");
    expect_bad(0, "rnbqkbnr/ppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "'ppppppp' has 7 squares");
    expect_bad(0, "rnbqkbnr/ppppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "has 9 squares");
    expect_bad(0, "rnbqkbnr/pppppppp/44/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "two digits in a row");
    expect_bad(0, "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNX w KQkq - 0 1", "bad piece letter 'X'");
    expect_bad(0, "rnbq1bnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQ - 0 1", "no black king");
    expect_bad(0, "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKKNR w kq - 0 1", "more than one white king");
    expect_bad(0, "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/PNBQKBNR w Kkq - 0 1", "pawn on its back rank at a1");
    expect_bad(0, "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR x KQkq - 0 1", "side to move 'x'");
    expect_bad(0, "4k3/8/8/8/8/8/8/4R1K1 w - - 0 1", "the side not to move (black) is in check");
    expect_bad(0, "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBN1 w KQkq - 0 1", "no white rook on h1");
    expect_bad(0, "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQ1BNR w KQkq - 0 1", "no white king");
    expect_bad(0, "rnbq1bnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1", "no black king");
    expect_bad(0, "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkqZ - 0 1", "bad castling character 'Z'");
    expect_bad(1, "rk2r2r/8/8/8/8/8/8/RK2R2R w HE - 0 1", "gives the white h-side right twice");
    expect_bad(0, "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq e9 0 1", "bad en passant square 'e9'");
    expect_bad(0, "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq e3 0 1", "not on rank 6");
    expect_bad(0, "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq e6 0 1", "without a black pawn");
    expect_bad(0, "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - x 1", "bad halfmove clock 'x'");
    expect_bad(0, "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - -1 1", "bad halfmove clock '-1'");
    expect_bad(0, "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1x", "bad fullmove number '1x'");
    expect_bad(0, "1r2k3/8/8/8/8/8/8/R3K3 w Bq - 0 1", "names a file other than a or h");
    expect_bad(0, "r3k2r/8/8/8/8/8/8/R3K2R w kqKQ - 0 1", "castling field 'kqKQ' is not");
    expect_bad(0, "r3k2r/8/8/8/8/8/8/R3K2R w KQQkq - 0 1", "castling field 'KQQkq' is not");
    expect_bad(1, "1r2k3/8/8/8/8/8/8/R3K3 w Bq - 0 1", "no white rook on b1");
    expect_bad(1, "1r2k3/8/8/8/8/8/8/R3K3 w K - 0 1", "no white rook on the king's h-side");
    expect_bad(1, "4k3/8/8/8/8/8/8/R3K3 w Qq - 0 1", "no black rook on the king's a-side");
    expect_bad(1, "4k3/8/8/8/8/8/4K3/R7 w Q - 0 1", "white king is not on its back rank");
    /* Any number and kind of pieces a side (random placements: the MAV paper's out-of-distribution
     * set), the moves within MG_CHESS_MAX_MOVES whatever they are. */
    {
        mg_chess_state st;
        char err[MG_ERRLEN];
        int32_t mv[MG_CHESS_MAX_MOVES];
        MG_CHECK(mg_chess_from_fen(&st, 1, "rnbqkbnr/pppppppp/8/8/8/p7/PPPPPPPP/RNBQKBNR w - - 0 1", err,
                                   sizeof err) == MG_OK); /* black: 17 pieces, 9 pawns */
        MG_CHECK(mg_chess_from_fen(&st, 0, "4k3/8/8/8/8/P7/PPPPPPPP/4K3 w - - 0 1", err, sizeof err) == MG_OK);
        /* 31 queens and a king (python-chess: 259 legal moves) */
        MG_CHECK(mg_chess_from_fen(&st, 0, "QQQQQQrk/5Qpp/Q5QQ/Q6Q/Q6Q/Q6Q/Q6Q/KQQQQQQQ w - - 0 1", err,
                                   sizeof err) == MG_OK);
        MG_CHECK(mg_chess_legal_actions(&st, mv) == 259);
        /* 16 pawns a side (python-chess: 31 legal moves) */
        MG_CHECK(mg_chess_from_fen(&st, 0, "7k/8/pppppppp/PPPPPPPP/pppppppp/PPPPPPPP/8/K7 w - - 0 1", err,
                                   sizeof err) == MG_OK);
        MG_CHECK(mg_chess_legal_actions(&st, mv) == 31);
    }

    /* Accepted inputs, normalised output. */
    const char *pairs[][3] = {
        /* in, variant, expected FEN() */
        {"rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 1", "0",
         "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"},
        {"rnbqkbnr/ppp1pppp/8/8/3pP3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 3", "0",
         "rnbqkbnr/ppp1pppp/8/8/3pP3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 3"},
        {"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w HAha - 0 1", "1",
         "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"},
        {"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w HAha - 0 1", "0",
         "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"},
        {"4k3/8/8/8/8/8/8/4K3 w - - 250 0", "0", "4k3/8/8/8/8/8/8/4K3 w - - 250 1"},
        {"  4k3/8/8/8/8/8/8/4K3  b  ", "0", "4k3/8/8/8/8/8/8/4K3 b - - 0 1"},
        {"rk2r3/8/8/8/8/8/8/RK2R3 w KQkq - 0 1", "1", "rk2r3/8/8/8/8/8/8/RK2R3 w KQkq - 0 1"},
        {"rk2r2r/8/8/8/8/8/8/RK2R2R w EAea - 0 1", "1", "rk2r2r/8/8/8/8/8/8/RK2R2R w EQeq - 0 1"},
        {"rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KHkh - 0 1", "0",
         "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w Kk - 0 1"},
    };
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        mg_chess_state s;
        char out[128];
        int ok = load(&s, pairs[i][1][0] == '1', pairs[i][0]);
        ok = ok && mg_chess_to_fen(&s, out, sizeof out) > 0 && !strcmp(out, pairs[i][2]);
        if (!ok)
            fprintf(stderr, "FEN '%s' -> '%s', wanted '%s'\n", pairs[i][0], ok ? out : "(error)", pairs[i][2]);
        MG_CHECK(ok);
    }
}

static void test_chess960_start(void)
{
    char fen[128];
    MG_CHECK(mg_chess960_start_fen(518, fen, sizeof fen) > 0);
    MG_CHECK(!strcmp(fen, "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"));
    MG_CHECK(mg_chess960_start_fen(0, fen, sizeof fen) > 0 && !strncmp(fen, "bbqnnrkr/", 9));
    MG_CHECK(mg_chess960_start_fen(959, fen, sizeof fen) > 0 && !strncmp(fen, "rkrnnqbb/", 9));
    MG_CHECK(mg_chess960_start_fen(960, fen, sizeof fen) == 0);
    MG_CHECK(mg_chess960_start_fen(-1, fen, sizeof fen) == 0);
    /* All 960 are distinct legal positions with both castling rights and 20 moves... except
     * where a castling move is not yet possible (always: pieces stand between king and rooks). */
    uint64_t seen[960];
    int distinct = 1;
    for (int n = 0; n < 960; n++) {
        mg_chess_state s;
        char out[128];
        mg_chess960_start_fen(n, fen, sizeof fen);
        if (!load(&s, 1, fen)) {
            MG_CHECK(0);
            continue;
        }
        mg_chess_to_fen(&s, out, sizeof out);
        MG_CHECK(!strcmp(out, fen));
        MG_CHECK(s.castling == 15);
        seen[n] = s.hash;
        for (int k = 0; k < n; k++)
            distinct &= seen[k] != s.hash;
    }
    MG_CHECK(distinct);
}

static void test_moves_and_san(void)
{
    mg_chess_state s;
    char buf[32], err[MG_ERRLEN];
    int32_t a;
    const mg_san_ops *ops = &mg_chess_san_ops;
    /* Standard castling strings. */
    MG_CHECK(load(&s, 0, "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1"));
    MG_CHECK(mg_chess.action_from_str(&s, "e1g1", &a, err, sizeof err) == MG_OK && a == (4 | 7 << 6));
    MG_CHECK(mg_chess.action_from_str(&s, "e1h1", &a, err, sizeof err) == MG_OK && a == (4 | 7 << 6));
    MG_CHECK(mg_chess.action_to_str(&s, 4 | 7 << 6, buf, sizeof buf) == 4 && !strcmp(buf, "e1g1"));
    MG_CHECK(mg_chess.action_to_str(&s, 4 | 0 << 6, buf, sizeof buf) == 4 && !strcmp(buf, "e1c1"));
    MG_CHECK(mg_san_write(ops, &s, 4 | 7 << 6, buf, sizeof buf) && !strcmp(buf, "O-O"));
    MG_CHECK(mg_san_write(ops, &s, 4 | 0 << 6, buf, sizeof buf) && !strcmp(buf, "O-O-O"));
    MG_CHECK(mg_san_write(ops, &s, 7 | 63 << 6, buf, sizeof buf) && !strcmp(buf, "Rxh8+"));
    MG_CHECK(mg_chess.action_from_str(&s, "e1e3", &a, err, sizeof err) == MG_ERR &&
             strstr(err, "illegal move 'e1e3' in r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1"));
    MG_CHECK(mg_chess.action_from_str(&s, "e1", &a, err, sizeof err) == MG_ERR && strstr(err, "'e1'"));
    MG_CHECK(mg_chess.action_from_str(&s, "e1e2x", &a, err, sizeof err) == MG_ERR && strstr(err, "'e1e2x'"));
    MG_CHECK(mg_chess.action_from_str(&s, "i1e2", &a, err, sizeof err) == MG_ERR);
    MG_CHECK(mg_san_parse(ops, &s, "O-O-O", &a, err, sizeof err) == MG_OK && a == (4 | 0 << 6));
    MG_CHECK(mg_san_parse(ops, &s, "0-0", &a, err, sizeof err) == MG_OK && a == (4 | 7 << 6));
    MG_CHECK(!mg_chess.is_legal(&s, -1) && !mg_chess.is_legal(&s, MG_CHESS_NUM_ACTIONS) && !mg_chess.is_legal(&s, 4 | 4 << 6) &&
             mg_chess.is_legal(&s, 4));
    /* Chess960 writes king-takes-rook, and b1c1 stays a king step. */
    MG_CHECK(load(&s, 1, "1r4kr/8/8/8/8/8/8/1R4KR w KQkq - 0 1"));
    MG_CHECK(mg_chess960.action_to_str(&s, 6 | 7 << 6, buf, sizeof buf) == 4 && !strcmp(buf, "g1h1"));
    MG_CHECK(mg_san_write(&mg_chess960_san_ops, &s, 6 | 1 << 6, buf, sizeof buf) && !strcmp(buf, "O-O-O"));
    MG_CHECK(mg_chess960.action_from_str(&s, "g1f1", &a, err, sizeof err) == MG_OK && a == (6 | 5 << 6));
    /* Disambiguation: file, rank, both. */
    MG_CHECK(load(&s, 0, "4k3/8/8/8/8/8/8/N3K1N1 w - - 0 1"));
    MG_CHECK(mg_san_parse(ops, &s, "Ne2", &a, err, sizeof err) == MG_OK && a == (6 | 12 << 6));
    MG_CHECK(load(&s, 0, "4k3/8/8/1N6/8/8/8/1N2K3 w - - 0 1"));
    MG_CHECK(mg_san_write(ops, &s, 1 | 18 << 6, buf, sizeof buf) && !strcmp(buf, "N1c3"));
    MG_CHECK(mg_san_parse(ops, &s, "Nc3", &a, err, sizeof err) == MG_ERR && strstr(err, "ambiguous SAN 'Nc3'"));
    MG_CHECK(mg_san_parse(ops, &s, "N5c3", &a, err, sizeof err) == MG_OK && a == (33 | 18 << 6));
    MG_CHECK(load(&s, 0, "8/7k/8/8/8/Q1Q5/8/Q3K3 w - - 0 1"));
    MG_CHECK(mg_san_write(ops, &s, 16 | 9 << 6, buf, sizeof buf) && !strcmp(buf, "Qa3b2"));
    MG_CHECK(mg_san_write(ops, &s, 0 | 9 << 6, buf, sizeof buf) && !strcmp(buf, "Q1b2"));
    MG_CHECK(mg_san_write(ops, &s, 18 | 9 << 6, buf, sizeof buf) && !strcmp(buf, "Qcb2"));
    MG_CHECK(mg_san_parse(ops, &s, "Qa3xb2", &a, err, sizeof err) == MG_OK && a == (16 | 9 << 6));
    MG_CHECK(mg_san_parse(ops, &s, "Qab2", &a, err, sizeof err) == MG_ERR && strstr(err, "ambiguous"));
    /* Promotions, en passant, mate. */
    MG_CHECK(load(&s, 0, "3qk3/2P5/8/3pP3/8/8/8/4K3 w - d6 0 1"));
    MG_CHECK(mg_san_write(ops, &s, 50 | 59 << 6 | 4 << 12, buf, sizeof buf) && !strcmp(buf, "cxd8=Q+"));
    MG_CHECK(mg_san_parse(ops, &s, "cxd8=N", &a, err, sizeof err) == MG_OK && a == (50 | 59 << 6 | 1 << 12));
    MG_CHECK(mg_san_parse(ops, &s, "c8Q", &a, err, sizeof err) == MG_OK && a == (50 | 58 << 6 | 4 << 12));
    MG_CHECK(mg_san_parse(ops, &s, "c8", &a, err, sizeof err) == MG_ERR && strstr(err, "illegal SAN 'c8'"));
    MG_CHECK(mg_san_write(ops, &s, 36 | 43 << 6, buf, sizeof buf) && !strcmp(buf, "exd6"));
    MG_CHECK(mg_san_parse(ops, &s, "exd6", &a, err, sizeof err) == MG_OK && a == (36 | 43 << 6));
    MG_CHECK(mg_san_parse(ops, &s, "Kxe9", &a, err, sizeof err) == MG_ERR && strstr(err, "invalid SAN 'Kxe9'"));
    MG_CHECK(mg_san_parse(ops, &s, "", &a, err, sizeof err) == MG_ERR);
    MG_CHECK(mg_san_parse(ops, &s, "O-O", &a, err, sizeof err) == MG_ERR && strstr(err, "castling is not legal"));
    MG_CHECK(load(&s, 0, "6k1/5ppp/8/8/8/8/8/R3K3 w - - 0 1"));
    MG_CHECK(mg_san_write(ops, &s, 0 | 56 << 6, buf, sizeof buf) && !strcmp(buf, "Ra8#"));
}

static int outcome_of(const char *fen, const char *const *moves, int *reason)
{
    mg_chess_state s;
    if (!load(&s, 0, fen))
        return -1;
    mg_chess_undo u;
    for (int i = 0; moves && moves[i]; i++) {
        int32_t a;
        char err[MG_ERRLEN];
        if (mg_chess.action_from_str(&s, moves[i], &a, err, sizeof err) != MG_OK)
            return -1;
        mg_chess.make(&s, a, &u);
    }
    return mg_chess.outcome(&s, reason);
}

static void test_outcomes(void)
{
    const char *start = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
    int why;
    const char *fools[] = {"f2f3", "e7e5", "g2g4", "d8h4", NULL};
    MG_CHECK(outcome_of(start, fools, &why) == MG_P1_WINS && why == MG_TERM_CHECKMATE);
    MG_CHECK(outcome_of(start, NULL, &why) == MG_ONGOING && why == MG_TERM_NONE);
    MG_CHECK(outcome_of("7k/5Q2/6K1/8/8/8/8/8 b - - 0 1", NULL, &why) == MG_DRAW && why == MG_TERM_STALEMATE);
    MG_CHECK(outcome_of("7k/8/6K1/8/8/8/8/2B5 b - - 0 1", NULL, &why) == MG_DRAW &&
             why == MG_TERM_INSUFFICIENT_MATERIAL);
    MG_CHECK(outcome_of("7k/8/6K1/8/8/8/8/1NB5 b - - 0 1", NULL, &why) == MG_ONGOING);
    MG_CHECK(outcome_of("7k/b7/6K1/8/8/8/8/2B5 b - - 0 1", NULL, &why) == MG_DRAW); /* same-coloured */
    MG_CHECK(outcome_of("7k/1b6/6K1/8/8/8/8/2B5 b - - 0 1", NULL, &why) == MG_ONGOING);
    MG_CHECK(outcome_of("7k/8/6K1/8/8/8/8/R7 b - - 99 80", NULL, &why) == MG_ONGOING);
    MG_CHECK(outcome_of("7k/8/6K1/8/8/8/8/R7 b - - 100 80", NULL, &why) == MG_DRAW && why == MG_TERM_FIFTY_MOVES);
    MG_CHECK(outcome_of("7k/8/6K1/8/8/8/8/R7 b - - 1000 80", NULL, &why) == MG_DRAW);
    /* Mate on the 100th halfmove is still mate. */
    MG_CHECK(outcome_of("7k/8/6K1/8/8/8/8/R7 w - - 99 80", (const char *[]){"a1a8", NULL}, &why) == MG_P0_WINS &&
             why == MG_TERM_CHECKMATE);
    /* Threefold: the start position occurs for the third time after 8 plies. */
    const char *shuffle[] = {"g1f3", "g8f6", "f3g1", "f6g8", "g1f3", "g8f6", "f3g1", "f6g8", NULL};
    MG_CHECK(outcome_of(start, shuffle, &why) == MG_DRAW && why == MG_TERM_THREEFOLD_REPETITION);
    const char *seven[] = {"g1f3", "g8f6", "f3g1", "f6g8", "g1f3", "g8f6", "f3g1", NULL};
    MG_CHECK(outcome_of(start, seven, &why) == MG_ONGOING);
    /* A loss of castling rights in between breaks the repetition chain. */
    const char *rook[] = {"h2h4", "h7h5", "h1h2", "h8h7", "h2h1", "h7h8", "h1h2", "h8h7",
                          "h2h1", "h7h8", "h1h2", "h8h7", NULL};
    MG_CHECK(outcome_of(start, rook, &why) == MG_DRAW && why == MG_TERM_THREEFOLD_REPETITION);
    const char *rook2[] = {"h2h4", "h7h5", "h1h2", "h8h7", "h2h1", "h7h8", "h1h2", "h8h7", "h2h1", "h7h8", NULL};
    MG_CHECK(outcome_of(start, rook2, &why) == MG_ONGOING);
}

static void test_long_games(void)
{
    /* Shuffle far past the history window: hashes, repetition and unmake stay right. */
    mg_chess_state s, start;
    MG_CHECK(load(&s, 0, "4k3/8/8/8/8/8/8/R3K3 w - - 0 1"));
    start = s;
    static mg_chess_undo undo[1000];
    static int32_t acts[1000];
    const char *cycle[] = {"a1a2", "e8d8", "a2a1", "d8e8"};
    int ok = 1;
    for (int i = 0; i < 1000; i++) {
        char err[MG_ERRLEN];
        ok &= mg_chess.action_from_str(&s, cycle[i % 4], &acts[i], err, sizeof err) == MG_OK;
        mg_chess.make(&s, acts[i], &undo[i]);
        int why;
        int r = mg_chess.outcome(&s, &why);
        /* python-chess's precedence: the automatic draws (75 moves, fivefold) before the claimable ones. */
        if (i < 7)
            ok &= r == MG_ONGOING;
        else if (i < 15)
            ok &= r == MG_DRAW && why == MG_TERM_THREEFOLD_REPETITION;
        else if (i < 149)
            ok &= r == MG_DRAW && why == MG_TERM_FIVEFOLD_REPETITION;
        else
            ok &= r == MG_DRAW && why == MG_TERM_SEVENTYFIVE_MOVES;
        ok &= mg_chess_repetitions(&s) == (i + 1) / 4 + 1 || i + 1 >= MG_CHESS_HIST;
        ok &= consistent(&s);
    }
    for (int i = 999; i >= 0; i--)
        mg_chess.unmake(&s, acts[i], &undo[i]);
    MG_CHECK(ok);
    MG_CHECK(!memcmp(&s, &start, sizeof s));
}

/* A side with the most pieces allowed (king and 15 queens): 224 legal moves (python-chess agrees),
 * within MG_CHESS_MAX_MOVES; counts by both perfts (under ASan in the sanitizer run). */
static void test_many_moves(void)
{
    mg_chess_state s;
    MG_CHECK(load(&s, 0, "2Q1Q1rk/Q5pp/3Q4/1Q1Q2QQ/3Q4/Q6Q/2Q4Q/K3QQ2 w - - 0 1"));
    int32_t moves[MG_CHESS_MAX_MOVES];
    MG_CHECK(mg_chess_legal_actions(&s, moves) == 224 && mg_chess_count_legal(&s) == 224);
    MG_CHECK(mg_chess.perft(&s, 2, NULL) == 692 && mg_perft_generic(&mg_chess, &s, 2, NULL) == 692);
}

int main(void)
{
    mg_games_init();
    mg_chess_init_tables();
    MG_CHECK(mg_game_by_name("chess") == &mg_chess);
    MG_CHECK(mg_game_by_name("chess960") == &mg_chess960);
    MG_CHECK(sizeof(mg_chess_state) <= MG_MAX_STATE && sizeof(mg_chess_undo) <= MG_MAX_UNDO);
    MG_CHECK(MG_CHESS_MAX_MOVES <= MG_MAX_MOVES);
    test_startpos();
    test_bad_fens();
    test_chess960_start();
    test_moves_and_san();
    test_outcomes();
    test_long_games();
    test_many_moves();
    test_random_games(0, 30);
    test_random_games(1, 30);
    test_reference_perft();
    MG_TEST_MAIN_END("test_chess");
}
