/* test_mav.c - the MAV text format: values, command lists, %state round trips, prompts and
 * targets, the parser (round trips, hallucination reports, mutated input), the tokenizer and
 * the randomised training examples. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../format/examples.h"
#include "../format/mav.h"
#include "../format/tokenizer.h"
#include "../format/mav_codec.h"
#include "../format/values.h"
#include "../game.h"
#include "../games/chess/chess.h"
#include "../games/san.h"
#include "../rng.h"
#include "mgtest.h"

static mg_test_counts T;
static mg_tokenizer TOK; /* test-local; filled once in main */

#define CHECK_MSG(cond, ...)                                                                   \
    do {                                                                                       \
        MG_CHECK(cond);                                                                        \
        if (!(cond)) {                                                                         \
            fprintf(stderr, "    ");                                                           \
            fprintf(stderr, __VA_ARGS__);                                                      \
            fprintf(stderr, "\n");                                                             \
        }                                                                                      \
    } while (0)

static int close_to(double a, double b) { return fabs(a - b) < 1e-12; }

static void test_values(void)
{
    MG_CHECK(close_to(mg_mav_win_prob_cp(0), 0.5));
    /* lichess: Win% = 50 + 50 * (2 / (1 + exp(-0.00368208 * cp)) - 1) */
    double w = 50 + 50 * (2 / (1 + exp(-0.00368208 * 300)) - 1);
    MG_CHECK(close_to(mg_mav_win_prob_cp(300), w / 100));
    MG_CHECK(close_to(mg_mav_win_prob_cp(-300) + mg_mav_win_prob_cp(300), 1.0));
    MG_CHECK(mg_mav_win_prob_cp(100000) <= 1.0 && mg_mav_win_prob_cp(-100000) >= 0.0);
    MG_CHECK(mg_mav_win_prob_mate(3) == 1.0 && mg_mav_win_prob_mate(-2) == 0.0 && mg_mav_win_prob_mate(0) == 0.0);
    MG_CHECK(mg_mav_bucket(0.0) == 0 && mg_mav_bucket(1.0) == 63 && mg_mav_bucket(0.5) == 32);
    MG_CHECK(mg_mav_bucket(1.0 / 64) == 1 && mg_mav_bucket(1.0 / 64 - 1e-12) == 0);
    MG_CHECK(mg_mav_bucket(-3) == 0 && mg_mav_bucket(7) == 63 && mg_mav_bucket(NAN) == -1);
    for (int b = 0; b < 64; b++) {
        MG_CHECK(mg_mav_bucket(mg_mav_bucket_value(b)) == b);
        MG_CHECK(close_to(mg_mav_bucket_value(b), (b + 0.5) / 64));
    }
    MG_CHECK(isnan(mg_mav_bucket_value(64)) && isnan(mg_mav_bucket_value(-1)));
    /* scoring: a two-peak distribution */
    double d[2][64];
    memset(d, 0, sizeof d);
    d[0][10] = 0.6;
    d[0][50] = 0.4;
    d[1][3] = 2.0; /* unnormalised weights are fine */
    double out[2];
    char err[MG_ERRLEN];
    MG_CHECK(mg_mav_score(&d[0][0], 2, 64, MG_MAV_SCORE_MAX, 0, out, err, sizeof err) == 0);
    MG_CHECK(close_to(out[0], 10.5 / 64) && close_to(out[1], 3.5 / 64));
    MG_CHECK(mg_mav_score(&d[0][0], 2, 64, MG_MAV_SCORE_MEAN, 0, out, err, sizeof err) == 0);
    MG_CHECK(close_to(out[0], (0.6 * 10.5 + 0.4 * 50.5) / 64) && close_to(out[1], 3.5 / 64));
    /* logits: equal logits = uniform = mean 0.5 */
    double lg[64];
    for (int i = 0; i < 64; i++)
        lg[i] = 1.5;
    MG_CHECK(mg_mav_score(lg, 1, 64, MG_MAV_SCORE_MEAN, 1, out, err, sizeof err) == 0 && close_to(out[0], 0.5));
    lg[5] = -INFINITY;
    MG_CHECK(mg_mav_score(lg, 1, 64, MG_MAV_SCORE_MEAN, 1, out, err, sizeof err) == 0);
    d[1][7] = -1;
    MG_CHECK(mg_mav_score(&d[0][0], 2, 64, MG_MAV_SCORE_MEAN, 0, out, err, sizeof err) == -2);
    MG_CHECK(strstr(err, "row 1") != NULL);
    memset(d, 0, sizeof d);
    MG_CHECK(mg_mav_score(&d[0][0], 1, 64, MG_MAV_SCORE_MAX, 0, out, err, sizeof err) == -1);
    /* huge finite weights: their sum overflows, the score (normalised by the largest) does not */
    for (int i = 0; i < 64; i++)
        d[0][i] = 1e308;
    MG_CHECK(mg_mav_score(&d[0][0], 1, 64, MG_MAV_SCORE_MEAN, 0, out, err, sizeof err) == 0 && close_to(out[0], 0.5));
    d[0][0] = 5e-324;    /* and one subnormal weight alone is all of a distribution (no underflow to 0) */
    for (int i = 1; i < 64; i++)
        d[0][i] = 0;
    MG_CHECK(mg_mav_score(&d[0][0], 1, 64, MG_MAV_SCORE_MEAN, 0, out, err, sizeof err) == 0 &&
             close_to(out[0], 0.5 / 64));
}

static void test_specs(void)
{
    const mg_game *chess = mg_game_by_name("chess"), *ttt = mg_game_by_name("tictactoe");
    mg_mav_spec s;
    char err[MG_ERRLEN], buf[256];
    MG_CHECK(mg_mav_spec_parse(chess, "%prev_fen %prev_action %fen %state %top_all %best_action", &s, err,
                               sizeof err) == MG_OK);
    MG_CHECK(s.n == 6 && s.transition && s.n_inputs == 2 && s.top_pos == 4 && s.best_pos == 5 && s.top_k == 0);
    mg_mav_header(chess, &s, buf, sizeof buf);
    MG_CHECK(strcmp(buf, "<mav game=chess> %prev_fen %prev_action %fen %state %top_all %best_action </mav>\n") == 0);
    MG_CHECK(mg_mav_spec_parse(chess, "%state %top_12", &s, err, sizeof err) == MG_OK);
    MG_CHECK(s.top_k == 12 && s.n_inputs == 1 && !s.transition && s.best_pos == -1);
    MG_CHECK(mg_mav_spec_parse(chess, "%state %best_action %fen %state", &s, err, sizeof err) == MG_OK);
    MG_CHECK(mg_mav_spec_parse(ttt, "%prev_state %prev_action %state", &s, err, sizeof err) == MG_OK);
    MG_CHECK(s.n_inputs == 2);
    static const char *const bad[] = {
        "",                                   /* empty */
        "%state",                             /* no output */
        "%top_all",                           /* no state */
        "%prev_action %state %top_1",         /* action without previous state */
        "%prev_state %state %top_1",          /* previous state without action */
        "%state %state %top_1",               /* twice */
        "%state %top_0",                      /* k = 0 */
        "%state %top_05",                     /* leading zero */
        "%state %top_10000",                  /* too big */
        "%state %top_1 %top_2",               /* twice */
        "%state %best_action %top_1",         /* order */
        "%state %top_x",                      /* bad k */
        "%state %bogus",                      /* unknown */
        "%state %top_3 %fen",                 /* state after top without best */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = '\0';
        CHECK_MSG(mg_mav_spec_parse(chess, bad[i], &s, err, sizeof err) == MG_ERR && err[0], "spec '%s' accepted",
                  bad[i]);
    }
    MG_CHECK(mg_mav_spec_parse(ttt, "%fen %top_all", &s, err, sizeof err) == MG_ERR);
    MG_CHECK(strstr(err, "%fen") != NULL);
}

/* ---- %state --------------------------------------------------------------------------------- */

static const mg_game *game_and_init(const char *name, void *st)
{
    const mg_game *g = mg_game_by_name(name);
    char err[MG_ERRLEN];
    if (!g || g->init(st, NULL, err, sizeof err) != MG_OK)
        return NULL;
    return g;
}

static void test_state_text(void)
{
    _Alignas(16) unsigned char st[MG_MAX_STATE], st2[MG_MAX_STATE];
    char out[MG_MAX_TEXT], err[MG_ERRLEN], text[MG_MAX_TEXT];
    const mg_game *g = game_and_init("chess", st);
    MG_CHECK(g != NULL);
    if (!g)
        return;
    MG_CHECK(mg_mav_state_write(g, st, out, sizeof out, err, sizeof err) > 0);
    MG_CHECK(strcmp(out, "w RNBQKBNRPPPPPPPP................................pppppppprnbqkbnr KQkq . 000 0001") == 0);
    MG_CHECK(g->from_text(st, NULL, "rnbqkbnr/pppp1ppp/8/3Pp3/8/8/PPP1PPPP/RNBQKBNR w Kq e6 0 3", err, sizeof err) ==
             MG_OK);
    MG_CHECK(mg_mav_state_write(g, st, out, sizeof out, err, sizeof err) > 0);
    MG_CHECK(strcmp(out, "w RNBQKBNRPPP.PPPP...................Pp...........pppp.ppprnbqkbnr K..q e6 000 0003") ==
             0);
    MG_CHECK(mg_mav_state_read(g, NULL, out, strlen(out), st2, err, sizeof err) == MG_OK);
    g->to_text(st2, text, sizeof text);
    MG_CHECK(strcmp(text, "rnbqkbnr/pppp1ppp/8/3Pp3/8/8/PPP1PPPP/RNBQKBNR w Kq e6 0 3") == 0);

    /* Chess960: castling fields are rook files; output X-FEN as the game writes it. */
    const mg_game *g960 = mg_game_by_name("chess960");
    const char *fen960 = "bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9";
    MG_CHECK(g960->from_text(st, NULL, fen960, err, sizeof err) == MG_OK);
    MG_CHECK(mg_mav_state_write(g960, st, out, sizeof out, err, sizeof err) > 0);
    MG_CHECK(strstr(out, " HFhf . 002 0009") != NULL);
    MG_CHECK(mg_mav_state_read(g960, NULL, out, strlen(out), st2, err, sizeof err) == MG_OK);
    char t1[MG_MAX_TEXT], t2[MG_MAX_TEXT];
    g960->to_text(st, t1, sizeof t1);
    g960->to_text(st2, t2, sizeof t2);
    MG_CHECK(strcmp(t1, t2) == 0);
    /* A castling field naming a file without a rook (e8 is empty) is an error, not the f8 rook. */
    {
        char bad960[MG_MAX_TEXT];
        snprintf(bad960, sizeof bad960, "%s", out);
        char *cf = strstr(bad960, " HFhf ");
        MG_CHECK(cf != NULL);
        if (cf) {
            cf[4] = 'e';
            err[0] = '\0';
            MG_CHECK(mg_mav_state_read(g960, NULL, bad960, strlen(bad960), st2, err, sizeof err) == MG_ERR);
            CHECK_MSG(strstr(err, "castling field 4 (black queen side) is 'e'") != NULL, "got '%s'", err);
        }
    }

    /* Bad %state texts name the field. */
    g->init(st, NULL, err, sizeof err);
    mg_mav_state_write(g, st, out, sizeof out, err, sizeof err);
    struct {
        const char *text, *needle;
    } bad[] = {
        {"x RNBQKBNRPPPPPPPP................................pppppppprnbqkbnr KQkq . 000 0001", "side to move"},
        {"w RNBQKBNRPPPPPPPP.....x..........................pppppppprnbqkbnr KQkq . 000 0001", "square f3"},
        {"w RNBQKBNRPPPPPPPP...............................pppppppprnbqkbnr KQkq . 000 0001", "board"},
        {"w RNBQKBNRPPPPPPPP................................pppppppprnbqkbnr QKkq . 000 0001", "castling"},
        {"w RNBQKBNRPPPPPPPP................................pppppppprnbqkbnr KQkq z9 000 0001", "en passant"},
        {"w RNBQKBNRPPPPPPPP................................pppppppprnbqkbnr KQkq . 00 0001", "halfmove"},
        {"w RNBQKBNRPPPPPPPP................................pppppppprnbqkbnr KQkq . 000 0001 x", "after the last"},
        {"w RNBQKBNRPPPPPPPP................................pppppppprnbqkbnr KQkq .", "missing"},
        {"w  RNBQKBNRPPPPPPPP................................pppppppprnbqkbnr KQkq . 000 0001", "board"},
        {"", "side"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = '\0';
        int rc = mg_mav_state_read(g, NULL, bad[i].text, strlen(bad[i].text), st2, err, sizeof err);
        CHECK_MSG(rc == MG_ERR && strstr(err, bad[i].needle), "bad %%state %zu: rc %d err '%s'", i, rc, err);
    }
    /* Kings missing: the text is well formed, the game rejects the position. */
    const char *nokings = "w RNBQ.BNRPPPPPPPP................................pppppppprnbq.bnr .... . 000 0001";
    MG_CHECK(mg_mav_state_read(g, NULL, nokings, strlen(nokings), st2, err, sizeof err) == MG_ERR);

    /* tic-tac-toe and Gardner */
    const mg_game *tt = game_and_init("tictactoe", st);
    MG_CHECK(tt->from_text(st, NULL, "x.o/.x./..o x", err, sizeof err) == MG_OK);
    MG_CHECK(mg_mav_state_write(tt, st, out, sizeof out, err, sizeof err) > 0 && strcmp(out, "x ..o.x.x.o") == 0);
    /* the message quotes the text and the bad cell (separate buffers) */
    MG_CHECK(mg_mav_state_from_game_text(tt, "\x01\x01\x01/\x01\x01\x01/\x01\x01\x01 x", out, sizeof out, err,
                                         sizeof err) == 0);
    CHECK_MSG(!strcmp(err, "tic-tac-toe text '\\x01\\x01\\x01/\\x01\\x01\\x01/\\x01\\x01\\x01 '...: bad cell '\\x01'"),
              "got '%s'", err);
    const mg_game *ga = game_and_init("gardner", st);
    MG_CHECK(mg_mav_state_write(ga, st, out, sizeof out, err, sizeof err) > 0);
    MG_CHECK(strcmp(out, "w RNBQKPPPPP.....ppppprnbqk 000 0001") == 0);
}

/* Random playouts: %state and FEN round trips in every supported game. */
static void test_state_roundtrips(void)
{
    mg_rng rng;
    mg_rng_seed(&rng, 7);
    for (int gi = 0; gi < mg_game_count(); gi++) {
        const mg_game *g = mg_game_at(gi);
        if (!mg_mav_game_supported(g, NULL))
            continue;
        long checked = 0;
        for (int game = 0; game < 30; game++) {
            _Alignas(16) unsigned char st[MG_MAX_STATE], st2[MG_MAX_STATE];
            char err[MG_ERRLEN], out[MG_MAX_TEXT], t1[MG_MAX_TEXT], t2[MG_MAX_TEXT];
            g->init(st, NULL, err, sizeof err);
            for (int ply = 0; ply < 200; ply++) {
                size_t n = mg_mav_state_write(g, st, out, sizeof out, err, sizeof err);
                CHECK_MSG(n > 0, "%s: %%state write failed: %s", g->name, err);
                {
                    char via[MG_MAX_TEXT];
                    size_t n2 = mg_mav_state_write_via_text(g, st, via, sizeof via, err, sizeof err);
                    CHECK_MSG(n2 == n && strcmp(via, out) == 0, "%s: direct %%state '%s' != via text '%s'", g->name,
                              out, via);
                }
                if (n == 0)
                    break;
                int rc = mg_mav_state_read(g, NULL, out, n, st2, err, sizeof err);
                CHECK_MSG(rc == MG_OK, "%s: %%state read '%s' failed: %s", g->name, out, err);
                g->to_text(st, t1, sizeof t1);
                if (rc == MG_OK) {
                    g->to_text(st2, t2, sizeof t2);
                    CHECK_MSG(strcmp(t1, t2) == 0, "%s: %s -> %s -> %s", g->name, t1, out, t2);
                }
                checked++;
                if (g->outcome(st, NULL) != MG_ONGOING)
                    break;
                int32_t moves[MG_MAX_MOVES];
                int nm = g->legal_actions(st, moves);
                if (nm == 0)
                    break;
                /* every legal move string is a move token of the game */
                for (int i = 0; i < nm; i++) {
                    char m[MG_MAX_MOVE_STR];
                    size_t ml = g->action_to_str(st, moves[i], m, sizeof m);
                    CHECK_MSG(mg_mav_move_syntax(g, NULL, m, ml), "%s: move %s fails the syntax check", g->name, m);
                    int id = mg_tok_lookup(&TOK, m, ml);
                    CHECK_MSG(id >= 0, "%s: move %s has no token", g->name, m);
                }
                unsigned char undo[MG_MAX_UNDO];
                g->make(st, moves[mg_rng_below(&rng, (uint32_t)nm)], undo);
            }
        }
        MG_CHECK(checked > 30);
    }
}

/* Chess960 from many start positions: direct and text %state agree and round-trip. */
static void test_chess960_positions(void)
{
    const mg_game *g = mg_game_by_name("chess960");
    mg_rng rng;
    mg_rng_seed(&rng, 960);
    long checked = 0;
    for (int n = 0; n < 960; n += 7) {
        char fen[128], err[MG_ERRLEN], a[MG_MAX_TEXT], b[MG_MAX_TEXT], t1[MG_MAX_TEXT], t2[MG_MAX_TEXT];
        _Alignas(16) unsigned char st[MG_MAX_STATE], st2[MG_MAX_STATE];
        MG_CHECK(mg_chess960_start_fen(n, fen, sizeof fen) > 0);
        MG_CHECK(g->from_text(st, NULL, fen, err, sizeof err) == MG_OK);
        for (int ply = 0; ply < 60 && g->outcome(st, NULL) == MG_ONGOING; ply++) {
            size_t na = mg_mav_state_write(g, st, a, sizeof a, err, sizeof err);
            size_t nb = mg_mav_state_write_via_text(g, st, b, sizeof b, err, sizeof err);
            CHECK_MSG(na > 0 && na == nb && strcmp(a, b) == 0, "chess960 %d: '%s' vs '%s'", n, a, b);
            MG_CHECK(mg_mav_state_read(g, NULL, a, na, st2, err, sizeof err) == MG_OK);
            g->to_text(st, t1, sizeof t1);
            g->to_text(st2, t2, sizeof t2);
            CHECK_MSG(strcmp(t1, t2) == 0, "chess960: %s -> %s -> %s", t1, a, t2);
            checked++;
            int32_t moves[MG_MAX_MOVES];
            int nm = g->legal_actions(st, moves);
            int32_t pick = moves[mg_rng_below(&rng, (uint32_t)nm)];
            unsigned char undo[MG_MAX_UNDO];
            g->make(st, pick, undo);
        }
    }
    MG_CHECK(checked > 5000);
}

/* Hex on every board size, with the swap rule: %state round trips with the config. */
static void test_hex_sizes(void)
{
    const mg_game *g = mg_game_by_name("hex");
    if (!g)
        return;
    mg_rng rng;
    mg_rng_seed(&rng, 19);
    static mg_mav_result r;
    static char text[65536];
    long checked = 0, swaps = 0;
    for (int n = 1; n <= 19; n++) {
        for (int game = 0; game < 4; game++) {
            mg_config cfg = {n, (game & 1) ? MG_FLAG_HEX_SWAP : 0};
            _Alignas(16) unsigned char st[MG_MAX_STATE], st2[MG_MAX_STATE];
            char err[MG_ERRLEN], out[MG_MAX_TEXT], t1[MG_MAX_TEXT], t2[MG_MAX_TEXT];
            MG_CHECK(g->init(st, &cfg, err, sizeof err) == MG_OK);
            for (int ply = 0; ply < 3 * n && g->outcome(st, NULL) == MG_ONGOING; ply++) {
                size_t k = mg_mav_state_write(g, st, out, sizeof out, err, sizeof err);
                MG_CHECK(k == 2 + (size_t)(n * n));
                int rc = mg_mav_state_read(g, &cfg, out, k, st2, err, sizeof err);
                CHECK_MSG(rc == MG_OK, "hex %d: %s: %s", n, out, err);
                g->to_text(st, t1, sizeof t1);
                g->to_text(st2, t2, sizeof t2);
                MG_CHECK(rc != MG_OK || strcmp(t1, t2) == 0);
                /* a wrong size is named */
                if (n > 1) {
                    mg_config other = {n - 1, cfg.flags};
                    MG_CHECK(mg_mav_state_read(g, &other, out, k, st2, err, sizeof err) == MG_ERR &&
                             strstr(err, "cells"));
                }
                int32_t moves[MG_MAX_MOVES];
                int nm = g->legal_actions(st, moves);
                /* write and parse a full example with the config */
                double vals[MG_MAX_MOVES];
                for (int i = 0; i < nm; i++)
                    vals[i] = mg_rng_double(&rng);
                mg_mav_spec spec;
                MG_CHECK(mg_mav_spec_parse(g, "%state %top_all %best_action", &spec, err, sizeof err) == MG_OK);
                mg_mav_input in = {st, NULL, -1, nm, moves, vals, -1, NULL, 0};
                long len = mg_mav_write(g, &spec, &in, MG_MAV_PART_ALL, text, sizeof text, err, sizeof err);
                MG_CHECK(len > 0);
                mg_mav_parse(g, &cfg, text, (size_t)len, NULL, &r);
                CHECK_MSG(r.ok && r.n_correct == nm && r.n_missing == 0, "hex %d: %s\n%s", n,
                          r.n_issues ? r.issues[0].msg : "", text);
                checked++;
                int32_t pick = moves[mg_rng_below(&rng, (uint32_t)nm)];
                for (int i = 0; i < nm; i++)
                    if (moves[i] == n * n) /* play the swap whenever it is legal */
                        pick = moves[i], swaps++;
                unsigned char undo[MG_MAX_UNDO];
                g->make(st, pick, undo);
            }
        }
    }
    MG_CHECK(checked > 300 && swaps > 10);
    /* cell names and the swap move are move tokens; cells beyond the board are not moves */
    mg_config c5 = {5, MG_FLAG_HEX_SWAP};
    MG_CHECK(mg_mav_move_syntax(g, &c5, "e5", 2) && mg_mav_move_syntax(g, &c5, "swap", 4));
    MG_CHECK(!mg_mav_move_syntax(g, &c5, "f1", 2) && !mg_mav_move_syntax(g, &c5, "a6", 2));
    MG_CHECK(mg_tok_lookup(&TOK, "s19", 3) >= 0 && mg_tok_lookup(&TOK, "swap", 4) >= 0);
}

/* ---- writing and parsing ------------------------------------------------------------------------ */

/* A random annotation of all legal moves (values in [0, 1]). */
static int random_annotation(const mg_game *g, const void *st, mg_rng *rng, int32_t *acts, double *vals)
{
    int n = g->legal_actions(st, acts);
    for (int i = 0; i < n; i++)
        vals[i] = mg_rng_double(rng);
    return n;
}

static void test_write_parse_roundtrip(void)
{
    mg_rng rng;
    mg_rng_seed(&rng, 11);
    mg_mav_example_opts o;
    mg_mav_example_opts_default(&o);
    o.p_after = 0.3;
    o.p_best = 0.8;
    static mg_mav_result res;
    static char text[65536];
    long all_terminal = 0;
    for (int gi = 0; gi < mg_game_count(); gi++) {
        const mg_game *g = mg_game_at(gi);
        if (!mg_mav_game_supported(g, NULL))
            continue;
        long n_ex = 0, n_terminal = 0;
        for (int game = 0; game < 12; game++) {
            _Alignas(16) unsigned char st[MG_MAX_STATE], prev[MG_MAX_STATE];
            char err[MG_ERRLEN];
            g->init(st, NULL, err, sizeof err);
            int32_t prev_action = -1;
            for (int ply = 0; ply < 120; ply++) {
                int32_t acts[MG_MAX_MOVES];
                double vals[MG_MAX_MOVES];
                int terminal = g->outcome(st, NULL) != MG_ONGOING;
                int n = terminal ? 0 : random_annotation(g, st, &rng, acts, vals);
                mg_mav_spec spec;
                int rc = mg_mav_example_spec(g, &o, &rng, n, n, prev_action >= 0, terminal, &spec, err, sizeof err);
                CHECK_MSG(rc == MG_OK, "%s: spec: %s", g->name, err);
                mg_mav_input in = {st, prev_action >= 0 ? prev : NULL, prev_action, n, acts, vals, -1, NULL, 0};
                long len = mg_mav_write(g, &spec, &in, MG_MAV_PART_ALL, text, sizeof text, err, sizeof err);
                CHECK_MSG(len > 0, "%s: write: %s", g->name, err);
                if (len <= 0)
                    break;
                n_ex++;
                n_terminal += terminal;
                for (int with_ref = 0; with_ref < 2; with_ref++) {
                    mg_mav_parse(g, NULL, text, (size_t)len, with_ref ? st : NULL, &res);
                    CHECK_MSG(res.ok && res.complete && res.n_issues == 0, "%s: parse issues (%d) for:\n%s\n  first: line %d col %d: %s",
                              g->name, res.n_issues, text, res.issues[0].line, res.issues[0].col, res.issues[0].msg);
                    MG_CHECK(res.has_ref);
                    MG_CHECK(res.n_illegal == 0 && res.n_malformed == 0 && res.n_duplicate == 0);
                    if (spec.top_pos >= 0) {
                        MG_CHECK(res.top_present);
                        MG_CHECK(res.top_outcome == terminal);
                        MG_CHECK(res.outcome_correct == 1);
                        int m = terminal ? 0 : mg_mav_top_count(&spec, n);
                        MG_CHECK(res.n_moves == m && res.n_correct == m && res.n_missing == 0);
                        for (int i = 0; i < res.n_moves; i++) {
                            int j = 0;
                            while (j < n && acts[j] != res.moves[i].action)
                                j++;
                            MG_CHECK(j < n && res.moves[i].bucket == mg_mav_bucket(vals[j]));
                        }
                    }
                    if (spec.best_pos >= 0) {
                        MG_CHECK(res.best_present && res.best_invalid == terminal);
                        if (!terminal) {
                            /* the best action is the highest value (first on ties) */
                            int bi = 0;
                            for (int i = 1; i < n; i++)
                                if (vals[i] > vals[bi])
                                    bi = i;
                            MG_CHECK(res.best_id == acts[bi]);
                        }
                    }
                    if (spec.transition)
                        MG_CHECK(res.slot[MG_MAV_SLOT_CUR].correct == 1);
                    if (res.slot[MG_MAV_SLOT_AFTER].present)
                        MG_CHECK(res.slot[MG_MAV_SLOT_AFTER].correct == 1);
                }
                if (terminal || n == 0)
                    break;
                memcpy(prev, st, g->state_size);
                unsigned char undo[MG_MAX_UNDO];
                prev_action = acts[mg_rng_below(&rng, (uint32_t)n)];
                g->make(st, prev_action, undo);
            }
        }
        CHECK_MSG(n_ex > 50, "%s: only %ld examples", g->name, n_ex);
        all_terminal += n_terminal;
    }
    MG_CHECK(all_terminal > 0); /* finished games were written and parsed too */
}

/* Specific hallucinations are reported precisely. */
static void test_hallucinations(void)
{
    const mg_game *g = mg_game_by_name("chess");
    static mg_mav_result r;
    _Alignas(16) unsigned char st[MG_MAX_STATE];
    char err[MG_ERRLEN];
    g->init(st, NULL, err, sizeof err);
    const char *head = "<mav game=chess> %state %top_all %best_action </mav>\n"
                       "[%state w RNBQKBNRPPPPPPPP................................pppppppprnbqkbnr KQkq . 000 0001]\n";
    char text[4096];
    /* 20 legal moves; we list 3 legal ones, one illegal (e2e5), one duplicate, one malformed */
    snprintf(text, sizeof text,
             "%s[%%top_all e2e4:<ctrl40> d2d4:<ctrl39> e2e5:<ctrl30> e2e4:<ctrl12> z9z9:<ctrl1> g1f3:<ctrl64>]\n"
             "[%%best_action e7e5]\n",
             head);
    mg_mav_parse(g, NULL, text, strlen(text), NULL, &r);
    MG_CHECK(r.header_ok && r.has_ref && r.ref_n_legal == 20);
    MG_CHECK(r.n_moves == 6);
    MG_CHECK(r.moves[0].status == MG_MAV_MOVE_LEGAL && r.moves[0].bucket == 40 && !r.moves[0].duplicate);
    MG_CHECK(r.moves[2].status == MG_MAV_MOVE_ILLEGAL && r.moves[2].action == -1);
    MG_CHECK(r.moves[3].status == MG_MAV_MOVE_LEGAL && r.moves[3].duplicate);
    MG_CHECK(r.moves[4].status == MG_MAV_MOVE_MALFORMED);
    MG_CHECK(r.moves[5].status == MG_MAV_MOVE_LEGAL && r.moves[5].bucket == -1);
    MG_CHECK(r.n_illegal == 1 && r.n_duplicate == 1 && r.n_malformed == 1 && r.n_correct == 3);
    MG_CHECK(r.n_missing == 17);
    MG_CHECK(r.best_present && r.best_id == -1 && r.best_status == MG_MAV_MOVE_ILLEGAL);
    MG_CHECK(!r.ok && r.n_issues == 2); /* the malformed move and the bad value token */
    int found_ctrl = 0;
    for (int i = 0; i < r.n_issues && i < MG_MAV_MAX_ISSUES; i++)
        if (strstr(r.issues[i].msg, "<ctrl64>") && r.issues[i].line == 3)
            found_ctrl = 1;
    MG_CHECK(found_ctrl);
    mg_mav_metrics m;
    memset(&m, 0, sizeof m);
    mg_mav_metrics_add(&m, &r);
    MG_CHECK(m.best_total == 1 && m.best_legal == 0 && m.top_all_examples == 1 && m.top_listed == 6 &&
             m.top_correct == 3 && m.top_legal == 20);

    /* Transition form with a wrong next state. */
    snprintf(text, sizeof text,
             "<mav game=chess> %%prev_fen %%prev_action %%fen %%top_1 </mav>\n"
             "[%%prev_fen rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1]\n"
             "[%%prev_action e2e4]\n"
             "[%%fen rnbqkbnr/pppppppp/8/8/3P4/8/PPP1PPPP/RNBQKBNR b KQkq - 0 1]\n"
             "[%%top_1 e7e5:<ctrl31>]\n");
    mg_mav_parse(g, NULL, text, strlen(text), NULL, &r);
    MG_CHECK(r.ok && r.has_ref && r.slot[MG_MAV_SLOT_CUR].valid && r.slot[MG_MAV_SLOT_CUR].correct == 0);
    MG_CHECK(strcmp(r.slot[MG_MAV_SLOT_CUR].ref_text, "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1") ==
             0);
    MG_CHECK(r.n_correct == 1 && r.count_expected == 1 && r.n_missing == 0);
    memset(&m, 0, sizeof m);
    mg_mav_metrics_add(&m, &r);
    MG_CHECK(m.state_total == 1 && m.state_correct == 0);

    /* Terminal: fool's mate. */
    snprintf(text, sizeof text,
             "<mav game=chess> %%fen %%top_5 %%best_action </mav>\n"
             "[%%fen rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3]\n"
             "[%%top_5 invalid : \"0-1\"]\n[%%best_action invalid]\n");
    mg_mav_parse(g, NULL, text, strlen(text), NULL, &r);
    MG_CHECK(r.ok && r.top_outcome && r.outcome == MG_P1_WINS && r.outcome_correct == 1 && r.best_invalid);
    snprintf(text, sizeof text,
             "<mav game=chess> %%fen %%top_5 </mav>\n"
             "[%%fen rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3]\n"
             "[%%top_5 invalid : \"1-0\"]\n");
    mg_mav_parse(g, NULL, text, strlen(text), NULL, &r);
    MG_CHECK(r.ok && r.top_outcome && r.outcome == MG_P0_WINS && r.outcome_correct == 0);

    /* Structural errors: wrong game, missing lines, unknown command, missing bracket. */
    struct {
        const char *text;
        int line;
        const char *needle;
    } bad[] = {
        {"<mav game=hex> %state %top_1 </mav>\n", 1, "expected 'chess'"},
        {"<mav game=chess> %state %top_1\n", 1, "</mav>"},
        {"<mav game=chess> %state %top_1 %wat </mav>\n", 1, "unknown command"},
        {"<mav game=chess> %top_1 </mav>\n", 1, "current state"},
        {"hello", 1, "header"},
        {"<mav game=chess> %fen %top_1 %best_action </mav>\n[%fen 8/8/8/8/8/8/8/8 w - - 0 1]\n", 2, "king"},
        {"<mav game=chess> %fen %top_1 %best_action </mav>\n"
         "[%fen rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1]\n[%best_action e2e4]\n",
         3, "missing the [%top_1"},
        {"<mav game=chess> %fen %top_1 %best_action </mav>\n"
         "[%fen rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1]\n[%top_1 e2e4:<ctrl3>\n",
         3, "does not end with ']'"},
        {"<mav game=chess> %fen %top_1 </mav>\n"
         "[%fen rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1]\n[%top_1 e2e4:<ctrl3>]\nextra\n",
         4, "after the last command"},
        {"<mav game=chess> %fen %top_1 </mav>\n"
         "[%fen rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1]\n[%top_1 e2e4 <ctrl3>]\n",
         3, "no ':<ctrlN>'"},
        {"<mav game=chess> %fen %top_1 </mav>\n"
         "[%fen rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1]\n[%top_1 invalid : \"2-0\"]\n",
         3, "expected a result"},
        {"<mav game=chess> %fen %top_1 </mav>\n"
         "[%fen rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1]\n",
         3, "missing the [%top_1 ...] line at the end"},
        {"<mav game=chess> %fen %top_2 </mav>\n"
         "[%fen rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1]\n"
         "[%top_2 e2e4:<ctrl3> d2d4:<ctrl3> g1f3:<ctrl2> b1c3:<ctrl1>]\n",
         3, "the %top_2 line lists more than 2 moves (from entry 3 on)"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        mg_mav_parse(g, NULL, bad[i].text, strlen(bad[i].text), NULL, &r);
        int hit = 0;
        for (int j = 0; j < r.n_issues && j < MG_MAV_MAX_ISSUES; j++)
            if (r.issues[j].line == bad[i].line && strstr(r.issues[j].msg, bad[i].needle))
                hit = 1;
        CHECK_MSG(!r.ok && hit, "bad text %zu: %d issues, first: line %d: %s", i, r.n_issues, r.issues[0].line,
                  r.n_issues ? r.issues[0].msg : "");
    }
    /* a NUL byte in the game name is not the game "chess" */
    {
        static const char nul[] = "<mav game=chess\0x> %state %top_1 </mav>\n";
        mg_mav_parse(g, NULL, nul, sizeof nul - 1, NULL, &r);
        MG_CHECK(!r.header_ok && r.n_issues == 1 && strstr(r.issues[0].msg, "bad game name"));
    }
}

/* Mutated texts never crash the parser (run under ASan/UBSan by make SAN=1). */
static void test_parse_mutations(void)
{
    mg_rng rng;
    mg_rng_seed(&rng, 99);
    static mg_mav_result r;
    static char text[65536], mut[65536 + 64];
    mg_mav_example_opts o;
    mg_mav_example_opts_default(&o);
    o.p_after = 0.5;
    long parsed = 0;
    for (int gi = 0; gi < mg_game_count(); gi++) {
        const mg_game *g = mg_game_at(gi);
        if (!mg_mav_game_supported(g, NULL))
            continue;
        _Alignas(16) unsigned char st[MG_MAX_STATE];
        char err[MG_ERRLEN];
        g->init(st, NULL, err, sizeof err);
        for (int ply = 0; ply < 40; ply++) {
            if (g->outcome(st, NULL) != MG_ONGOING)
                break;
            int32_t acts[MG_MAX_MOVES];
            double vals[MG_MAX_MOVES];
            int n = random_annotation(g, st, &rng, acts, vals);
            mg_mav_spec spec;
            if (mg_mav_example_spec(g, &o, &rng, n, n, 0, 0, &spec, err, sizeof err) != MG_OK)
                break;
            mg_mav_input in = {st, NULL, -1, n, acts, vals, -1, NULL, 0};
            long len = mg_mav_write(g, &spec, &in, MG_MAV_PART_ALL, text, sizeof text, err, sizeof err);
            MG_CHECK(len > 0);
            for (int k = 0; k < 60 && len > 0; k++) {
                size_t ml = (size_t)len;
                memcpy(mut, text, ml);
                int nmut = 1 + (int)mg_rng_below(&rng, 4);
                for (int q = 0; q < nmut; q++) {
                    uint32_t op = mg_rng_below(&rng, 4);
                    size_t at = ml ? mg_rng_below(&rng, (uint32_t)ml) : 0;
                    if (op == 0 && ml) {
                        mut[at] = (char)mg_rng_below(&rng, 256);
                    } else if (op == 1 && ml) {
                        memmove(mut + at, mut + at + 1, ml - at - 1);
                        ml--;
                    } else if (op == 2 && ml < sizeof mut - 1) {
                        memmove(mut + at + 1, mut + at, ml - at);
                        mut[at] = "[]%:<> \n\"x0"[mg_rng_below(&rng, 11)];
                        ml++;
                    } else {
                        ml = at;
                    }
                }
                mg_mav_parse(g, NULL, mut, ml, (k & 1) ? st : NULL, &r);
                MG_CHECK(r.n_moves >= 0 && r.n_moves <= MG_MAV_MAX_TOP && r.n_issues >= 0);
                parsed++;
            }
            unsigned char undo[MG_MAX_UNDO];
            g->make(st, acts[mg_rng_below(&rng, (uint32_t)n)], undo);
        }
    }
    MG_CHECK(parsed > 1000);
}

/* ---- tokenizer -------------------------------------------------------------------------------- */

/* Vocabulary v2: v1's tokens with the same ids, then the trace phrases; the model-file check. */
static void test_tokenizer_v2(void)
{
    static mg_tokenizer t2;
    char err[MG_ERRLEN];
    MG_CHECK(mg_tok_init(&t2, 2, err, sizeof err) == MG_OK);
    MG_CHECK(t2.version == 2 && t2.n == MG_TOK_SIZE_V2 && mg_tok_size(2) == t2.n && mg_tok_size(1) == TOK.n);
    MG_CHECK(mg_tok_size(3) == -1 && mg_tok_size(0) == -1);
    for (int i = 0; i < TOK.n; i++) {
        size_t l1, l2;
        const char *a = mg_tok_text(&TOK, i, &l1), *b = mg_tok_text(&t2, i, &l2);
        CHECK_MSG(l1 == l2 && memcmp(a, b, l1) == 0 && TOK.kind[i] == t2.kind[i], "v2 token %d differs from v1", i);
    }
    static const char *const phrases[] = {"Minimax breadth=", " depth=", "Evaluation for node: ", "Expand from node ",
                                          "Decision for node: ", "Selecting ", "Playing ", "<root>", "<root "};
    for (int i = 0; i < 9; i++) {
        int id = mg_tok_lookup(&t2, phrases[i], strlen(phrases[i]));
        CHECK_MSG(id == TOK.n + i && t2.kind[id] == MG_TOK_PHRASE && !strchr(phrases[i], '\n'), "phrase %d", i);
        MG_CHECK(mg_tok_lookup(&TOK, phrases[i], strlen(phrases[i])) < 0);
    }
    MG_CHECK(strcmp(mg_tok_kind_name(MG_TOK_PHRASE), "phrase") == 0);
    /* longest match: "<root>" over "<root ", a phrase inside a word run is not a phrase */
    int32_t ids[64];
    char back[256];
    static const char *const texts[] = {"Evaluation for node: <root 4 3>\n", "Expand from node <root>: <root 1>",
                                        "xPlaying 4!", "<root<root><ctrl3><mav", " depth=2 depth= depth",
                                        "Selecting Selecting"};
    static const size_t counts[] = {7, 7, 11, 8, 9, 10};
    for (int i = 0; i < 6; i++) {
        size_t n = strlen(texts[i]);
        size_t k = mg_tok_encode(&t2, texts[i], n, ids, 64);
        CHECK_MSG(k == counts[i], "text %d: %zu tokens", i, k);
        long m = mg_tok_decode(&t2, ids, k, back, sizeof back);
        MG_CHECK(m == (long)n && memcmp(back, texts[i], n) == 0);
    }
    MG_CHECK(mg_tok_encode(&t2, "<root>", 6, ids, 64) == 1 && ids[0] == TOK.n + 7);
    /* what a model file may declare */
    int v = -1;
    MG_CHECK(mg_tok_check_model("", 97, &v, err, sizeof err) == MG_OK && v == 0);
    MG_CHECK(mg_tok_check_model("1", MG_TOK_SIZE_V1, &v, err, sizeof err) == MG_OK && v == 1);
    MG_CHECK(mg_tok_check_model("2", MG_TOK_SIZE_V2, &v, err, sizeof err) == MG_OK && v == 2);
    MG_CHECK(mg_tok_check_model("2", MG_TOK_SIZE_V1, &v, err, sizeof err) == MG_ERR &&
             strstr(err, "vocabulary size 2723 does not match MAV vocabulary v2 (2732 tokens)"));
    MG_CHECK(mg_tok_check_model("1", 97, &v, err, sizeof err) == MG_ERR && strstr(err, "size 97"));
    static const char *const bad[] = {"3", "0", "01", "toy", "1 ", "-1", "99999999999", "2x"};
    for (int i = 0; i < 8; i++) {
        MG_CHECK(mg_tok_check_model(bad[i], MG_TOK_SIZE_V1, &v, err, sizeof err) == MG_ERR);
        char want[64];
        snprintf(want, sizeof want, "vocab_version '%s'", bad[i]);
        CHECK_MSG(strstr(err, "unknown MAV vocabulary") && strstr(err, want), "bad version %d: %s", i, err);
    }
}

static void test_tokenizer(void)
{
    const mg_tokenizer *t = &TOK;
    MG_CHECK(t->n > 2200 && t->n < MG_TOK_MAX_TOKENS);
    size_t l = 0;
    const char *c28 = mg_tok_text(t, MG_TOK_CTRL0 + 28, &l);
    MG_CHECK(l == 8 && memcmp(c28, "<ctrl28>", 8) == 0);
    MG_CHECK(mg_tok_lookup(t, "e2e4", 4) >= 0 && mg_tok_lookup(t, "e7e8q", 5) >= 0);
    MG_CHECK(mg_tok_lookup(t, "e1h1", 4) >= 0 && mg_tok_lookup(t, "b1h1", 4) >= 0); /* Chess960 castling */
    MG_CHECK(mg_tok_lookup(t, "a1h8", 4) >= 0 && mg_tok_lookup(t, "a1b3", 4) >= 0);
    MG_CHECK(mg_tok_lookup(t, "a1c4", 4) < 0); /* no piece moves like that */
    MG_CHECK(mg_tok_lookup(t, "a4a5q", 5) >= 0); /* Gardner promotion */
    /* 1968 chess UCI moves */
    char (*mv)[MG_MAV_MOVE_TOKEN_LEN] = malloc(4000 * sizeof *mv);
    MG_CHECK(mg_mav_move_tokens("chess", mv, 4000) == 1968);
    free(mv);
    /* exact round trips */
    static const char *const texts[] = {
        "<mav game=chess> %prev_fen %prev_action %state %top_all %best_action </mav>\n",
        "[%top_5 d7b6:<ctrl28> f6f5:<ctrl33> d7c5:<ctrl28>]\n[%best_action f6f5]\n",
        "[%state w RNBQKBNRPPPPPPPP................................pppppppprnbqkbnr KQkq e3 000 0001]\n",
        "<ctrl<ctrl64><ctrl7 %top_ %top_all7 %%state <<mav", "\x01\xff\x80 \t\r\n", "", "abc_def e2e4e2e4 a1",
    };
    int32_t ids[1024];
    char back[4096];
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        size_t n = strlen(texts[i]);
        size_t k = mg_tok_encode(t, texts[i], n, ids, 1024);
        long m = mg_tok_decode(t, ids, k, back, sizeof back);
        CHECK_MSG(m == (long)n && memcmp(back, texts[i], n) == 0, "round trip of text %zu", i);
    }
    /* one token per %state field: "w" " " 64 squares " " 4 castling " " ep " " 3 " " 4 */
    const char *st = "w RNBQKBNRPPPPPPPP................................pppppppprnbqkbnr KQkq e3 000 0001";
    MG_CHECK(mg_tok_encode(t, st, strlen(st), ids, 1024) == 1 + 1 + 64 + 1 + 4 + 1 + 1 + 1 + 3 + 1 + 4);
    const char *top = "[%top_12 e2e4:<ctrl40>]";
    MG_CHECK(mg_tok_encode(t, top, strlen(top), ids, 1024) == 9);
    MG_CHECK(ids[1] == mg_tok_lookup(t, "%top_", 5) && ids[6] == mg_tok_lookup(t, ":", 1) &&
             ids[7] == MG_TOK_CTRL0 + 40);
    /* random bytes */
    mg_rng rng;
    mg_rng_seed(&rng, 5);
    for (int it = 0; it < 2000; it++) {
        char s[200];
        size_t n = mg_rng_below(&rng, 200);
        for (size_t i = 0; i < n; i++)
            s[i] = (char)"<ctrl>%top_all e2e4 a1 x9\x01\xfe"[mg_rng_below(&rng, 26)];
        size_t k = mg_tok_encode(t, s, n, ids, 1024);
        MG_CHECK(k <= n);
        long m = mg_tok_decode(t, ids, k, back, sizeof back);
        MG_CHECK(m == (long)n && memcmp(back, s, n) == 0);
    }
    int32_t badid[2] = {5, t->n};
    MG_CHECK(mg_tok_decode(t, badid, 2, back, sizeof back) == -2);
    /* control tokens decode to nothing */
    int32_t ctl[3] = {MG_TOK_BOS, MG_TOK_PAD, MG_TOK_EOS};
    MG_CHECK(mg_tok_decode(t, ctl, 3, back, sizeof back) == 0);
}

/* ---- the format's promises (regressions) --------------------------------------------------------- */

static void test_format_promises(void)
{
    const mg_tokenizer *t = &TOK;
    int32_t ids[64];
    char back[256];
    char err[MG_ERRLEN];
    /* value tokens: only <ctrl0>..<ctrl63> without leading zeros are tokens; every other spelling
     * is plain bytes, so text round-trips (<ctrl049> used to decode as <ctrl49>) */
    static const char *const spell[] = {"<ctrl049>", "<ctrl00>", "<ctrl007>", "<ctrl063>", "<ctrl64>", "<ctrl0>",
                                        "<ctrl63>", "<ctrl4>", "<ctrl0049>", "<ctrl>"};
    for (size_t i = 0; i < sizeof spell / sizeof spell[0]; i++) {
        size_t n = strlen(spell[i]), vl = 0;
        size_t k = mg_tok_encode(t, spell[i], n, ids, 64);
        long m = mg_tok_decode(t, ids, k, back, sizeof back);
        CHECK_MSG(m == (long)n && memcmp(back, spell[i], n) == 0, "round trip of %s", spell[i]);
        int v = mg_mav_value_token(spell[i], n, &vl);
        int is_token = i >= 5 && i <= 7;
        CHECK_MSG((k == 1) == is_token && (v >= 0) == is_token, "%s: %zu tokens, value %d", spell[i], k, v);
        if (is_token)
            MG_CHECK(ids[0] == MG_TOK_CTRL0 + v && vl == n);
    }
    /* the parser reads value tokens as the tokenizer does */
    static mg_mav_result res;
    const mg_game *chess = mg_game_by_name("chess");
    const char *hdr = "<mav game=chess> %state %top_all </mav>\n"
                      "[%state w RNBQKBNRPPPPPPPP................................pppppppprnbqkbnr KQkq . 000 0001]\n";
    char text[1024];
    int tl = snprintf(text, sizeof text, "%s[%%top_all e2e4:<ctrl049> d2d4:<ctrl49>]\n", hdr);
    mg_mav_parse(chess, NULL, text, (size_t)tl, NULL, &res);
    MG_CHECK(res.n_moves == 2 && res.moves[0].bucket == -1 && res.moves[1].bucket == 49);
    /* a move with a NUL byte is kept whole (it used to be cut to the legal "e2e4") */
    tl = snprintf(text, sizeof text, "%s[%%top_all e2e4", hdr);
    memcpy(text + tl, "\0zz:<ctrl40> e2e4:<ctrl33>]\n", 27);
    tl += 27;
    mg_mav_parse(chess, NULL, text, (size_t)tl, NULL, &res);
    MG_CHECK(res.n_moves == 2 && res.moves[0].len == 7 && memcmp(res.moves[0].move, "e2e4\0zz", 7) == 0);
    MG_CHECK(res.moves[0].status == MG_MAV_MOVE_MALFORMED && !res.moves[1].duplicate);
    MG_CHECK(res.moves[1].len == 4 && res.moves[1].status != MG_MAV_MOVE_MALFORMED);
    /* a chess state with the Chess960 flag: written with the standard letters where they mean the
     * same (it used to write HAha under game=chess, which the parser refused), refused where not */
    mg_config c960 = {0, MG_FLAG_CHESS960};
    _Alignas(16) unsigned char st[MG_MAX_STATE];
    MG_CHECK(chess->init(st, &c960, err, sizeof err) == MG_OK);
    mg_mav_spec spec;
    MG_CHECK(mg_mav_spec_parse(chess, "%fen %state %top_all", &spec, err, sizeof err) == MG_OK);
    int32_t acts[MG_MAX_MOVES];
    double vals[MG_MAX_MOVES];
    int n = chess->legal_actions(st, acts);
    for (int i = 0; i < n; i++)
        vals[i] = 0.5;
    mg_mav_input in = {st, NULL, -1, n, acts, vals, -1, NULL, 0};
    static char out[65536];
    long len = mg_mav_write(chess, &spec, &in, MG_MAV_PART_ALL, out, sizeof out, err, sizeof err);
    CHECK_MSG(len > 0, "write: %s", err);
    if (len > 0) {
        MG_CHECK(strstr(out, " KQkq . 000 0001]") != NULL && strstr(out, "HAha") == NULL);
        mg_mav_parse(chess, &c960, out, (size_t)len, st, &res);
        CHECK_MSG(res.ok && res.n_issues == 0, "parse: %s", res.n_issues ? res.issues[0].msg : "");
    }
    char fen[128];
    mg_chess960_start_fen(100, fen, sizeof fen);
    MG_CHECK(chess->from_text(st, &c960, fen, err, sizeof err) == MG_OK);
    n = chess->legal_actions(st, acts);
    in.n = n;
    err[0] = '\0';
    MG_CHECK(mg_mav_write(chess, &spec, &in, MG_MAV_PART_ALL, out, sizeof out, err, sizeof err) < 0);
    CHECK_MSG(strstr(err, "cannot be written under <mav game=chess>") != NULL, "error: %s", err);
    /* the same position as a chess960 state writes and parses back */
    const mg_game *c9 = mg_game_by_name("chess960");
    MG_CHECK(c9->from_text(st, NULL, fen, err, sizeof err) == MG_OK);
    MG_CHECK(mg_mav_spec_parse(c9, "%fen %state %top_all", &spec, err, sizeof err) == MG_OK);
    len = mg_mav_write(c9, &spec, &in, MG_MAV_PART_ALL, out, sizeof out, err, sizeof err);
    MG_CHECK(len > 0);
    if (len > 0) {
        mg_mav_parse(c9, NULL, out, (size_t)len, st, &res);
        MG_CHECK(res.ok && res.n_issues == 0);
    }
}

/* ---- training examples ---------------------------------------------------------------------------- */

static void test_examples(void)
{
    const mg_game *g = mg_game_by_name("chess");
    _Alignas(16) unsigned char st[MG_MAX_STATE], prev[MG_MAX_STATE];
    char err[MG_ERRLEN];
    g->init(prev, NULL, err, sizeof err);
    memcpy(st, prev, g->state_size);
    int32_t e2e4 = 12 | 28 << 6;
    unsigned char undo[MG_MAX_UNDO];
    g->make(st, e2e4, undo);
    int32_t acts[MG_MAX_MOVES];
    double vals[MG_MAX_MOVES];
    int n = g->legal_actions(st, acts);
    for (int i = 0; i < n; i++)
        vals[i] = (i * 7 % 13) / 13.0;
    mg_mav_input in = {st, prev, e2e4, n, acts, vals, -1, NULL, 0};
    mg_mav_example_opts o;
    mg_mav_example_opts_default(&o);
    MG_CHECK(mg_mav_example_opts_check(&o, err, sizeof err) == MG_OK);
    o.k_terminal_prev = 2; /* a flag: 0 or 1 */
    MG_CHECK(mg_mav_example_opts_check(&o, err, sizeof err) == MG_ERR && strstr(err, "k_terminal_prev"));
    o.k_terminal_prev = 1;
    MG_CHECK(mg_mav_example_opts_check(&o, err, sizeof err) == MG_OK);
    o.k_terminal_prev = 0;
    o.p_after = 0.2;
    static int32_t ids1[8192], ids2[8192];
    static uint8_t m1[8192], m2[8192];
    static char text[65536], back[65536];
    static mg_mav_result r;
    long seen_transition = 0, seen_all = 0, seen_k_over = 0, seen_fen_first = 0, seen_state_only = 0;
    mg_rng a, b;
    mg_rng_seed(&a, 42);
    mg_rng_seed(&b, 42);
    for (int it = 0; it < 400; it++) {
        size_t pl;
        mg_mav_spec spec;
        long k1 = mg_mav_example_build(&TOK, g, &in, &o, &a, ids1, m1, 8192, text, sizeof text, &pl, &spec, err,
                                       sizeof err);
        long k2 = mg_mav_example_build(&TOK, g, &in, &o, &b, ids2, m2, 8192, back, sizeof back, NULL, NULL, err,
                                       sizeof err);
        CHECK_MSG(k1 > 0 && k1 == k2, "example %d: %ld %ld %s", it, k1, k2, err);
        if (k1 <= 0)
            break;
        MG_CHECK(memcmp(ids1, ids2, (size_t)k1 * 4) == 0 && memcmp(m1, m2, (size_t)k1) == 0);
        MG_CHECK(ids1[0] == MG_TOK_BOS && m1[0] == 0 && ids1[k1 - 1] == MG_TOK_EOS && m1[k1 - 1] == 1);
        /* the mask is 0 on the prompt, then 1: decoding the masked part gives the prompt */
        long np = 0;
        while (np < k1 && m1[np] == 0)
            np++;
        for (long i = np; i < k1; i++)
            MG_CHECK(m1[i] == 1);
        long dl = mg_tok_decode(&TOK, ids1, (size_t)np, back, sizeof back);
        MG_CHECK(dl == (long)pl && memcmp(back, text, pl) == 0);
        /* the whole example parses cleanly and is right */
        dl = mg_tok_decode(&TOK, ids1, (size_t)k1, back, sizeof back);
        mg_mav_parse(g, NULL, back, (size_t)dl, NULL, &r);
        CHECK_MSG(r.ok && r.complete && r.n_illegal == 0 && r.n_missing == 0, "example %d:\n%.*s", it, (int)dl, back);
        seen_transition += spec.transition;
        seen_all += spec.top_pos >= 0 && spec.top_k == 0;
        seen_k_over += spec.top_pos >= 0 && spec.top_k > n;
        seen_fen_first += spec.cmd[spec.n_inputs - (spec.transition ? 2 : 1)] == MG_MAV_FEN ||
                          spec.cmd[0] == MG_MAV_PREV_FEN;
        seen_state_only += spec.n == 3 && spec.cmd[0] == MG_MAV_STATE;
        /* shuffled order: not always value-descending */
    }
    MG_CHECK(seen_transition > 100 && seen_transition < 300);
    MG_CHECK(seen_all > 50 && seen_k_over > 5 && seen_fen_first > 50 && seen_state_only > 0);
    /* a different seed gives different examples */
    mg_rng_seed(&a, 43);
    mg_rng_seed(&b, 42);
    int differ = 0;
    for (int it = 0; it < 10; it++) {
        long k1 = mg_mav_example_build(&TOK, g, &in, &o, &a, ids1, m1, 8192, text, sizeof text, NULL, NULL, err,
                                       sizeof err);
        long k2 = mg_mav_example_build(&TOK, g, &in, &o, &b, ids2, m2, 8192, back, sizeof back, NULL, NULL, err,
                                       sizeof err);
        differ |= k1 != k2 || memcmp(ids1, ids2, (size_t)k1 * 4) != 0;
    }
    MG_CHECK(differ);
    /* too little room is an error, not a truncation */
    MG_CHECK(mg_mav_example_build(&TOK, g, &in, &o, &a, ids1, m1, 20, text, sizeof text, NULL, NULL, err,
                                  sizeof err) == -1);
    MG_CHECK(strstr(err, "tokens") != NULL);
    /* bad annotation: an illegal action */
    int32_t bad_acts[2] = {acts[0], 12 | 28 << 6};
    double bad_vals[2] = {0.5, 0.5};
    mg_mav_input bad = {st, NULL, -1, 2, bad_acts, bad_vals, -1, NULL, 0};
    mg_mav_spec spec;
    MG_CHECK(mg_mav_spec_parse(g, "%state %top_1", &spec, err, sizeof err) == MG_OK);
    MG_CHECK(mg_mav_write(g, &spec, &bad, MG_MAV_PART_ALL, text, sizeof text, err, sizeof err) == -1);
    MG_CHECK(strstr(err, "not legal") != NULL);
    bad_acts[1] = acts[1];
    bad_vals[1] = 1.5;
    MG_CHECK(mg_mav_write(g, &spec, &bad, MG_MAV_PART_ALL, text, sizeof text, err, sizeof err) == -1);
    MG_CHECK(strstr(err, "1.5") != NULL);
    /* partial annotation: %top_all needs all moves */
    bad_vals[1] = 0.25;
    MG_CHECK(mg_mav_spec_parse(g, "%state %top_all", &spec, err, sizeof err) == MG_OK);
    MG_CHECK(mg_mav_write(g, &spec, &bad, MG_MAV_PART_ALL, text, sizeof text, err, sizeof err) == -1);
    MG_CHECK(mg_mav_spec_parse(g, "%state %top_2 %best_action", &spec, err, sizeof err) == MG_OK);
    MG_CHECK(mg_mav_write(g, &spec, &bad, MG_MAV_PART_ALL, text, sizeof text, err, sizeof err) > 0);
    /* buffer too small */
    MG_CHECK(mg_mav_write(g, &spec, &bad, MG_MAV_PART_ALL, text, 30, err, sizeof err) == -1);
    MG_CHECK(strstr(err, "too small") != NULL);
}

/* Every registered game reaches its MAV codec and SAN hooks through its descriptor: the codec
 * is complete, the chess family (and only it) has SAN hooks that point back at the game, and the
 * by-name lookups answer through the same pointers. */
static void test_game_hooks(void)
{
    int san_games = 0;
    for (int i = 0; i < mg_game_count(); i++) {
        const mg_game *g = mg_game_at(i);
        const mg_mav_codec *c = g->mav;
        CHECK_MSG(c && c->to_state && c->from_state && c->tokens && c->syntax, "%s: incomplete MAV codec", g->name);
        int has_fen = -1;
        MG_CHECK(mg_mav_game_supported(g, &has_fen) && has_fen == c->has_fen);
        MG_CHECK(mg_mav_has_direct_state(g) == (c->direct != NULL));
        char (*mv)[MG_MAV_MOVE_TOKEN_LEN] = malloc(4096 * sizeof *mv);
        MG_CHECK(mv && mg_mav_move_tokens(g->name, mv, 4096) == c->tokens(mv, 4096));
        free(mv);
        MG_CHECK(mg_san_ops_for(g->name) == g->san);
        if (g->san) {
            san_games++;
            CHECK_MSG(g->san->game == g && c->has_fen, "%s: SAN hooks of another game", g->name);
        }
    }
    MG_CHECK(san_games == 3); /* chess, chess960, gardner */
    MG_CHECK(mg_san_ops_for("hex") == NULL && mg_san_ops_for("no such game") == NULL && mg_san_ops_for(NULL) == NULL);
    MG_CHECK(mg_mav_move_tokens("no such game", NULL, 0) == 0);
}

int main(void)
{
    mg_games_init();
    char err[MG_ERRLEN];
    if (mg_tok_init(&TOK, 1, err, sizeof err) != MG_OK) {
        fprintf(stderr, "tokenizer: %s\n", err);
        return 1;
    }
    MG_CHECK(mg_tok_init(&TOK, 3, err, sizeof err) == MG_ERR && strstr(err, "version 3"));
    MG_CHECK(mg_tok_init(&TOK, 0, err, sizeof err) == MG_ERR && strstr(err, "version 0"));
    MG_CHECK(TOK.n == MG_TOK_SIZE_V1 && TOK.version == 1); /* a refused version leaves the tokenizer alone */
    test_game_hooks();
    test_values();
    test_specs();
    test_state_text();
    test_state_roundtrips();
    test_chess960_positions();
    test_hex_sizes();
    test_write_parse_roundtrip();
    test_hallucinations();
    test_parse_mutations();
    test_tokenizer();
    test_tokenizer_v2();
    test_format_promises();
    test_examples();
    MG_TEST_MAIN_END("test_mav");
}
