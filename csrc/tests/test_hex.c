/* test_hex.c - Hex rules (against a plain flood-fill reference), text, swap, and the exact solver
 * (against a brute-force negamax over the game interface). */
#include <math.h>
#include <string.h>

#include "../game.h"
#include "../games/hex/hex.h"
#include "../rng.h"
#include "../games/hex/hex_solver.h"
#include "mgtest.h"

/* ---- an independent reference: a board as a plain 2-D array ---- */

typedef struct ref_board {
    int n;
    int cell[MG_HEX_MAX_N][MG_HEX_MAX_N]; /* 0 empty, 1 black, 2 white */
} ref_board;

/* 1 if `colour` connects its edges (black: row 0 to row n-1, white: column 0 to column n-1). */
static int ref_connected(const ref_board *b, int colour)
{
    int n = b->n, seen[MG_HEX_MAX_N][MG_HEX_MAX_N] = {{0}}, stack[MG_HEX_MAX_N * MG_HEX_MAX_N][2], top = 0;
    static const int dr[6] = {0, 0, -1, -1, 1, 1}, dc[6] = {-1, 1, 0, 1, -1, 0};
    for (int i = 0; i < n; i++) {
        int r = colour == 1 ? 0 : i, c = colour == 1 ? i : 0;
        if (b->cell[r][c] == colour) {
            seen[r][c] = 1;
            stack[top][0] = r;
            stack[top++][1] = c;
        }
    }
    while (top > 0) {
        top--;
        int r = stack[top][0], c = stack[top][1];
        if ((colour == 1 ? r : c) == n - 1)
            return 1;
        for (int k = 0; k < 6; k++) {
            int rr = r + dr[k], cc = c + dc[k];
            if (rr >= 0 && rr < n && cc >= 0 && cc < n && !seen[rr][cc] && b->cell[rr][cc] == colour) {
                seen[rr][cc] = 1;
                stack[top][0] = rr;
                stack[top++][1] = cc;
            }
        }
    }
    return 0;
}

static void ref_from_state(const mg_hex_state *s, ref_board *b)
{
    b->n = s->n;
    for (int r = 0; r < s->n; r++)
        for (int c = 0; c < s->n; c++)
            b->cell[r][c] = mg_hex_cell(s, r, c);
}

/* The union-find behind win detection: every stone's root holds its colour, the group's edge
 * bits and a rank with 2^rank <= group size and find depth <= rank, so a find takes at most
 * log2(n * n) < 9 steps however full the board is (win detection stays fast as it fills);
 * empty cells are their own roots with rank 0 and no edge bits. */
static void check_union_find(mg_test_counts *t, const mg_hex_state *s)
{
    static int size[MG_HEX_PADDED];
    static uint8_t bits[MG_HEX_PADDED];
    memset(size, 0, sizeof size);
    memset(bits, 0, sizeof bits);
    int ok = 1, n = s->n, S = MG_HEX_STRIDE;
    for (int p = 0; p < MG_HEX_PADDED; p++) {
        int colour = s->cell[p];
        if (colour == MG_HEX_OFF)
            continue;
        if (colour == MG_HEX_EMPTY) {
            ok &= s->parent[p] == p && s->rank[p] == 0 && s->edges[p] == 0;
            continue;
        }
        int q = p, d = 0;
        while (s->parent[q] != q && d <= MG_HEX_PADDED) {
            q = s->parent[q];
            d++;
        }
        ok &= s->cell[q] == colour && d <= s->rank[q];
        int r = p / S - 1, c = p % S - 1, x = colour == MG_HEX_BLACK ? r : c;
        size[q]++;
        bits[q] |= (uint8_t)((x == 0) | ((x == n - 1) << 1));
    }
    for (int q = 0; q < MG_HEX_PADDED; q++)
        if (size[q])
            ok &= (1 << s->rank[q]) <= size[q] && s->edges[q] == bits[q];
    MG_CHECK_T(t, ok);
}

/* Checks that hold in every state: moves, outcome and hash against the reference and the text. */
static void check_state(mg_test_counts *t, const mg_game *g, const mg_hex_state *s)
{
    ref_board b;
    ref_from_state(s, &b);
    check_union_find(t, s);
    int bw = ref_connected(&b, 1), ww = ref_connected(&b, 2);
    int res = g->outcome(s, NULL);
    MG_CHECK_T(t, !(bw && ww));
    MG_CHECK_T(t, res == (bw ? MG_P0_WINS : ww ? MG_P1_WINS : MG_ONGOING));
    int32_t moves[MG_MAX_MOVES];
    int k = g->legal_actions(s, moves);
    int empties = 0;
    for (int r = 0; r < s->n; r++)
        for (int c = 0; c < s->n; c++)
            empties += b.cell[r][c] == 0;
    if (res != MG_ONGOING) {
        MG_CHECK_T(t, k == 0);
    } else {
        MG_CHECK_T(t, empties > 0); /* no draws: a full board has a winner */
        MG_CHECK_T(t, k == empties + mg_hex_swap_available(s));
        for (int i = 0; i < k; i++) {
            MG_CHECK_T(t, g->is_legal(s, moves[i]));
            if (moves[i] < s->n * s->n)
                MG_CHECK_T(t, b.cell[moves[i] / s->n][moves[i] % s->n] == 0);
        }
    }
    /* text round trip gives the same hash, text and outcome */
    char text[MG_MAX_TEXT], text2[MG_MAX_TEXT], err[MG_ERRLEN];
    mg_config cfg = {s->n, s->swap_rule ? MG_FLAG_HEX_SWAP : 0};
    g->to_text(s, text, sizeof text);
    mg_hex_state s2;
    int ok = g->from_text(&s2, &cfg, text, err, sizeof err) == MG_OK;
    MG_CHECK_T(t, ok);
    if (!ok) {
        fprintf(stderr, "  from_text(%s): %s\n", text, err);
        return;
    }
    g->to_text(&s2, text2, sizeof text2);
    MG_CHECK_T(t, strcmp(text, text2) == 0);
    MG_CHECK_T(t, g->hash(&s2) == g->hash(s));
    MG_CHECK_T(t, g->outcome(&s2, NULL) == res);
    MG_CHECK_T(t, mg_hex_swap_available(&s2) == mg_hex_swap_available(s));
}

/* Random games: every state checked, make/unmake restore the bytes. */
static void random_games(mg_test_counts *t, int n, int swap, int games, uint64_t seed)
{
    const mg_game *g = &mg_hex;
    mg_rng rng;
    mg_rng_seed(&rng, seed);
    char err[MG_ERRLEN];
    mg_config cfg = {n, swap ? MG_FLAG_HEX_SWAP : 0};
    static mg_hex_state hist[MG_HEX_MAX_N * MG_HEX_MAX_N + 2];
    static unsigned char undo[MG_HEX_MAX_N * MG_HEX_MAX_N + 2][MG_MAX_UNDO];
    int32_t played[MG_HEX_MAX_N * MG_HEX_MAX_N + 2];
    for (int gi = 0; gi < games; gi++) {
        mg_hex_state s;
        MG_CHECK_T(t, g->init(&s, &cfg, err, sizeof err) == MG_OK);
        int ply = 0;
        for (;;) {
            check_state(t, g, &s);
            int32_t moves[MG_MAX_MOVES];
            int k = g->legal_actions(&s, moves);
            if (k == 0)
                break;
            /* with the swap rule, take the swap half of the time when it is legal */
            int32_t a = moves[mg_rng_below(&rng, (uint32_t)k)];
            if (mg_hex_swap_available(&s) && (mg_rng_next(&rng) & 1))
                a = n * n;
            hist[ply] = s;
            played[ply] = a;
            int before_side = g->to_move(&s);
            g->make(&s, a, undo[ply]);
            MG_CHECK_T(t, g->to_move(&s) == !before_side);
            ply++;
        }
        MG_CHECK_T(t, ply <= n * n + 1);
        while (ply > 0) {
            ply--;
            g->unmake(&s, played[ply], undo[ply]);
            MG_CHECK_T(t, memcmp(&s, &hist[ply], sizeof s) == 0);
        }
    }
}

static void test_text_and_moves(mg_test_counts *t)
{
    const mg_game *g = &mg_hex;
    char err[MG_ERRLEN], buf[MG_MAX_TEXT];
    mg_hex_state s;
    MG_CHECK_T(t, g->init(&s, NULL, err, sizeof err) == MG_OK && s.n == 11);
    g->to_text(&s, buf, sizeof buf);
    MG_CHECK_T(t, strlen(buf) == 11 * 12 + 1 && strncmp(buf, ".........../", 12) == 0 &&
                      strcmp(buf + strlen(buf) - 2, " x") == 0);
    mg_config bad_sizes[] = {{20, 0}, {-1, 0}, {100, 0}};
    for (int i = 0; i < 3; i++) {
        err[0] = '\0';
        MG_CHECK_T(t, g->init(&s, &bad_sizes[i], err, sizeof err) == MG_ERR && strstr(err, "out of range"));
    }
    for (int n = 1; n <= MG_HEX_MAX_N; n++) {
        mg_config cfg = {n, 0};
        MG_CHECK_T(t, g->init(&s, &cfg, err, sizeof err) == MG_OK);
        int32_t moves[MG_MAX_MOVES];
        MG_CHECK_T(t, g->legal_actions(&s, moves) == n * n);
        MG_CHECK_T(t, mg_perft(g, &s, 2) == (uint64_t)(n * n) * (uint64_t)(n * n - 1) || n == 1);
    }
    /* names: column letter, row number; action = row * n + column */
    mg_config c4 = {4, 0};
    MG_CHECK_T(t, g->init(&s, &c4, err, sizeof err) == MG_OK);
    int32_t a = -1;
    MG_CHECK_T(t, g->action_from_str(&s, "a1", &a, err, sizeof err) == MG_OK && a == 0);
    MG_CHECK_T(t, g->action_from_str(&s, "b1", &a, err, sizeof err) == MG_OK && a == 1);
    MG_CHECK_T(t, g->action_from_str(&s, "a2", &a, err, sizeof err) == MG_OK && a == 4);
    MG_CHECK_T(t, g->action_from_str(&s, "D4", &a, err, sizeof err) == MG_OK && a == 15);
    g->action_to_str(&s, 6, buf, sizeof buf);
    MG_CHECK_T(t, strcmp(buf, "c2") == 0);
    MG_CHECK_T(t, g->action_to_str(&s, 16, buf, sizeof buf) == 0); /* swap: rule off */
    MG_CHECK_T(t, g->action_to_str(&s, -1, buf, sizeof buf) == 0);
    const char *badmoves[] = {"e1", "a5", "a0", "a01", "", "a", "1a", "swap", "aa1", "a1x", "a123456789"};
    for (size_t i = 0; i < sizeof badmoves / sizeof badmoves[0]; i++) {
        err[0] = '\0';
        MG_CHECK_T(t, g->action_from_str(&s, badmoves[i], &a, err, sizeof err) == MG_ERR && err[0]);
    }
    mg_config c19 = {19, 0};
    MG_CHECK_T(t, g->init(&s, &c19, err, sizeof err) == MG_OK);
    MG_CHECK_T(t, g->action_from_str(&s, "s19", &a, err, sizeof err) == MG_OK && a == 360);
    g->action_to_str(&s, 360, buf, sizeof buf);
    MG_CHECK_T(t, strcmp(buf, "s19") == 0);
    MG_CHECK_T(t, g->action_from_str(&s, "t1", &a, err, sizeof err) == MG_ERR);
    MG_CHECK_T(t, g->action_from_str(&s, "a20", &a, err, sizeof err) == MG_ERR);

    /* text: good positions round-trip; the size follows the text */
    const char *good[] = {".../.../... x", "x../.o./... x", "x../.../... o", "x o", ". x", "xo/.. x",
                          "x.../oo../x.x./...o x"};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        int ok = g->from_text(&s, NULL, good[i], err, sizeof err) == MG_OK;
        MG_CHECK_T(t, ok);
        if (!ok) {
            fprintf(stderr, "  %s: %s\n", good[i], err);
            continue;
        }
        g->to_text(&s, buf, sizeof buf);
        MG_CHECK_T(t, strcmp(buf, good[i]) == 0);
    }
    MG_CHECK_T(t, g->from_text(&s, NULL, "x o", err, sizeof err) == MG_OK && g->outcome(&s, NULL) == MG_P0_WINS);
    MG_CHECK_T(t, g->from_text(&s, NULL, "X../.O./... X", err, sizeof err) == MG_ERR); /* side must be lower case */
    MG_CHECK_T(t, g->from_text(&s, NULL, "X../.O./... x", err, sizeof err) == MG_OK);
    g->to_text(&s, buf, sizeof buf);
    MG_CHECK_T(t, strcmp(buf, "x../.o./... x") == 0);
    const char *bad[] = {
        "",                    /* nothing */
        ".../.../...",         /* no side */
        ".../.../... y",       /* bad side */
        ".../.../... xx",      /* trailing */
        "../.../... x",        /* short row */
        "..../.../... x",      /* long row */
        ".../.../..# x",       /* bad char */
        ".../.../... o",       /* o to move on an empty board */
        "xx./.../... o",       /* too many x */
        "x../o../... o",       /* x = o with o to move: only after a swap */
        "o../.../... x",       /* swap position without the swap rule */
        "xxx/oo./... x",       /* impossible counts */
        "xo./xo./xo. x",       /* black connected but black to move */
        "xoox/xoox/xoox/xo.x o", /* black connected twice over: play went on after the win */
        "x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x/x x", /* 20 rows */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = '\0';
        int r = g->from_text(&s, NULL, bad[i], err, sizeof err);
        MG_CHECK_T(t, r == MG_ERR && err[0]);
        if (r != MG_ERR)
            fprintf(stderr, "  accepted bad text '%s'\n", bad[i]);
    }
    mg_config c3 = {3, 0};
    MG_CHECK_T(t, g->from_text(&s, &c3, "../.. x", err, sizeof err) == MG_ERR && strstr(err, "board size is 3"));
    MG_CHECK_T(t, g->from_text(&s, &c3, ".../.../... x", err, sizeof err) == MG_OK);
    /* distinct positions hash differently (sizes and side to move included) */
    mg_hex_state s1, s2;
    MG_CHECK_T(t, g->from_text(&s1, NULL, ".../.../... x", err, sizeof err) == MG_OK);
    MG_CHECK_T(t, g->from_text(&s2, NULL, "..../..../..../.... x", err, sizeof err) == MG_OK);
    MG_CHECK_T(t, g->hash(&s1) != g->hash(&s2));
    MG_CHECK_T(t, g->from_text(&s2, NULL, "x../.../... o", err, sizeof err) == MG_OK);
    MG_CHECK_T(t, g->hash(&s1) != g->hash(&s2));
}

static void test_swap(mg_test_counts *t)
{
    const mg_game *g = &mg_hex;
    char err[MG_ERRLEN], buf[MG_MAX_TEXT];
    mg_config cfg = {3, MG_FLAG_HEX_SWAP};
    mg_hex_state s, before;
    unsigned char u1[MG_MAX_UNDO], u2[MG_MAX_UNDO];
    MG_CHECK_T(t, g->init(&s, &cfg, err, sizeof err) == MG_OK);
    int32_t moves[MG_MAX_MOVES], a;
    MG_CHECK_T(t, g->legal_actions(&s, moves) == 9 && !g->is_legal(&s, 9));
    MG_CHECK_T(t, g->action_from_str(&s, "swap", &a, err, sizeof err) == MG_ERR && strstr(err, "first move"));
    g->make(&s, 1, u1); /* x b1 */
    MG_CHECK_T(t, g->legal_actions(&s, moves) == 9 && moves[8] == 9 && g->is_legal(&s, 9));
    MG_CHECK_T(t, g->action_to_str(&s, 9, buf, sizeof buf) == 4 && strcmp(buf, "swap") == 0);
    MG_CHECK_T(t, g->action_from_str(&s, "swap", &a, err, sizeof err) == MG_OK && a == 9);
    before = s;
    g->make(&s, 9, u2);
    /* b1 = row 0, column 1 becomes white on row 1, column 0 = a2; x to move */
    g->to_text(&s, buf, sizeof buf);
    MG_CHECK_T(t, strcmp(buf, ".../o../... x") == 0);
    MG_CHECK_T(t, g->to_move(&s) == 0 && !g->is_legal(&s, 9));
    MG_CHECK_T(t, g->legal_actions(&s, moves) == 8);
    check_state(t, g, &s);
    mg_hex_state parsed;
    MG_CHECK_T(t, g->from_text(&parsed, &cfg, buf, err, sizeof err) == MG_OK && g->hash(&parsed) == g->hash(&s));
    g->make(&s, 4, u1); /* x b2: white can no longer swap */
    MG_CHECK_T(t, g->action_from_str(&s, "swap", &a, err, sizeof err) == MG_ERR);
    g->unmake(&s, 4, u1);
    g->unmake(&s, 9, u2);
    MG_CHECK_T(t, memcmp(&s, &before, sizeof s) == 0);
    /* without the rule "swap" is rejected */
    mg_config plain = {3, 0};
    MG_CHECK_T(t, g->init(&s, &plain, err, sizeof err) == MG_OK);
    g->make(&s, 1, u1);
    MG_CHECK_T(t, !g->is_legal(&s, 9) &&
                      g->action_from_str(&s, "swap", &a, err, sizeof err) == MG_ERR && strstr(err, "rule is off"));
}

/* ---- solver vs brute force ---- */

/* Plain negamax over the game interface: +1 if the player to move wins. */
static int brute(const mg_game *g, void *st)
{
    int r = g->outcome(st, NULL);
    if (r != MG_ONGOING)
        return -1; /* the previous player connected */
    int32_t moves[MG_MAX_MOVES];
    unsigned char undo[MG_MAX_UNDO];
    int k = g->legal_actions(st, moves), best = -1;
    for (int i = 0; i < k && best < 0; i++) {
        g->make(st, moves[i], undo);
        int v = -brute(g, st);
        g->unmake(st, moves[i], undo);
        if (v > best)
            best = v;
    }
    return best;
}

static int brute_move(const mg_game *g, mg_hex_state *s, int32_t a)
{
    unsigned char undo[MG_MAX_UNDO];
    g->make(s, a, undo);
    int v = -brute(g, s);
    g->unmake(s, a, undo);
    return v;
}

static void check_solver_vs_brute(mg_test_counts *t, mg_hex_state *s)
{
    const mg_game *g = &mg_hex;
    static mg_hex_solution sol;
    char err[MG_ERRLEN];
    MG_CHECK_T(t, mg_hex_solve(s, 0, NULL, &sol, err, sizeof err) == MG_OK);
    MG_CHECK_T(t, sol.complete == 1);
    MG_CHECK_T(t, sol.value == brute(g, s));
    int32_t moves[MG_MAX_MOVES];
    int k = g->legal_actions(s, moves), nonzero = 0;
    for (int i = 0; i < k; i++)
        MG_CHECK_T(t, sol.move_value[moves[i]] == brute_move(g, s, moves[i]));
    for (int a = 0; a < MG_HEX_NUM_ACTIONS; a++)
        nonzero += sol.move_value[a] != 0;
    MG_CHECK_T(t, nonzero == k);
}

static void test_solver(mg_test_counts *t)
{
    const mg_game *g = &mg_hex;
    char err[MG_ERRLEN];
    static mg_hex_solution sol;
    mg_hex_state s;
    /* every position of the 2x2 and 3x3 boards reached by random play, with and without swap */
    mg_rng rng;
    mg_rng_seed(&rng, 7);
    for (int n = 1; n <= 3; n++)
        for (int swap = 0; swap < 2; swap++)
            for (int gi = 0; gi < 30; gi++) {
                mg_config cfg = {n, swap ? MG_FLAG_HEX_SWAP : 0};
                g->init(&s, &cfg, err, sizeof err);
                for (;;) {
                    check_solver_vs_brute(t, &s);
                    int32_t moves[MG_MAX_MOVES];
                    unsigned char undo[MG_MAX_UNDO];
                    int k = g->legal_actions(&s, moves);
                    if (!k)
                        break;
                    g->make(&s, moves[mg_rng_below(&rng, (uint32_t)k)], undo);
                }
            }
    /* 4x4 positions with 6..9 stones (brute force stays small) */
    for (int gi = 0; gi < 12; gi++) {
        mg_config cfg = {4, (gi & 1) ? MG_FLAG_HEX_SWAP : 0};
        g->init(&s, &cfg, err, sizeof err);
        int stones = 6 + gi % 4;
        for (int i = 0; i < stones && g->outcome(&s, NULL) == MG_ONGOING; i++) {
            int32_t moves[MG_MAX_MOVES];
            unsigned char undo[MG_MAX_UNDO];
            int k = g->legal_actions(&s, moves);
            g->make(&s, moves[mg_rng_below(&rng, (uint32_t)k)], undo);
        }
        check_solver_vs_brute(t, &s);
    }
    /* Known facts: the first player wins every n x n board; on 4x4 the winning openings are
     * exactly the short diagonal d1, c2, b3, a4; values are symmetric under the 180-degree
     * rotation; with the swap rule the first player loses (n >= 2), and swapping after an
     * opening is worth what the opening is worth to the first player without the rule. */
    for (int n = 1; n <= 4; n++) {
        mg_config cfg = {n, 0}, cfgs = {n, MG_FLAG_HEX_SWAP};
        static mg_hex_solution plain, swp, after;
        g->init(&s, &cfg, err, sizeof err);
        MG_CHECK_T(t, mg_hex_solve(&s, 0, NULL, &plain, err, sizeof err) == MG_OK && plain.complete);
        MG_CHECK_T(t, plain.value == 1);
        for (int a = 0; a < n * n; a++)
            MG_CHECK_T(t, plain.move_value[a] == plain.move_value[n * n - 1 - a]);
        if (n == 4)
            for (int a = 0; a < 16; a++)
                MG_CHECK_T(t, plain.move_value[a] == ((a % 4) + (a / 4) == 3 ? 1 : -1));
        g->init(&s, &cfgs, err, sizeof err);
        MG_CHECK_T(t, mg_hex_solve(&s, 0, NULL, &swp, err, sizeof err) == MG_OK && swp.complete);
        MG_CHECK_T(t, swp.value == (n == 1 ? 1 : -1));
        for (int a = 0; a < n * n && n > 1; a++) {
            unsigned char undo[MG_MAX_UNDO];
            g->make(&s, a, undo);
            MG_CHECK_T(t, mg_hex_solve(&s, 0, NULL, &after, err, sizeof err) == MG_OK && after.complete);
            MG_CHECK_T(t, after.move_value[n * n] == plain.move_value[a]);
            g->unmake(&s, a, undo);
        }
    }
    /* a 5x5 position with stones: the solver agrees with itself under rotation */
    {
        mg_hex_state r;
        static mg_hex_solution s1, s2;
        MG_CHECK_T(t, g->from_text(&s, NULL, "...../.x.../..o../...../..x.. o", err, sizeof err) == MG_OK);
        MG_CHECK_T(t, g->from_text(&r, NULL, "..x../...../..o../...x./..... o", err, sizeof err) == MG_OK);
        MG_CHECK_T(t, mg_hex_solve(&s, 0, NULL, &s1, err, sizeof err) == MG_OK && s1.complete);
        MG_CHECK_T(t, mg_hex_solve(&r, 0, NULL, &s2, err, sizeof err) == MG_OK && s2.complete);
        MG_CHECK_T(t, s1.value == s2.value);
        for (int a = 0; a < 25; a++)
            MG_CHECK_T(t, s1.move_value[a] == s2.move_value[24 - a]);
    }
    /* budget: partial results agree with the full solve */
    {
        mg_config cfg = {4, 0};
        static mg_hex_solution full, part;
        g->init(&s, &cfg, err, sizeof err);
        mg_hex_solve(&s, 0, NULL, &full, err, sizeof err);
        MG_CHECK_T(t, mg_hex_solve(&s, 50, NULL, &part, err, sizeof err) == MG_OK);
        MG_CHECK_T(t, part.complete == 0 && part.nodes <= 50 + 16);
        for (int a = 0; a < 16; a++)
            MG_CHECK_T(t, part.move_value[a] == 0 || part.move_value[a] == full.move_value[a]);
    }
    /* terminal and too large */
    MG_CHECK_T(t, g->from_text(&s, NULL, "x o", err, sizeof err) == MG_OK);
    MG_CHECK_T(t, mg_hex_solve(&s, 0, NULL, &sol, err, sizeof err) == MG_OK && sol.value == -1 && sol.complete);
    mg_config big = {8, 0};
    g->init(&s, &big, err, sizeof err);
    err[0] = '\0';
    MG_CHECK_T(t, mg_hex_solve(&s, 0, NULL, &sol, err, sizeof err) == MG_ERR && strstr(err, "too large"));
}

/* Exact probability that the first player wins under uniformly random play. */
static double random_play_value(const mg_game *g, void *st)
{
    int r = g->outcome(st, NULL);
    if (r != MG_ONGOING)
        return r == MG_P0_WINS ? 1.0 : 0.0;
    int32_t moves[MG_MAX_MOVES];
    unsigned char undo[MG_MAX_UNDO];
    int k = g->legal_actions(st, moves);
    double sum = 0.0;
    for (int i = 0; i < k; i++) {
        g->make(st, moves[i], undo);
        sum += random_play_value(g, st);
        g->unmake(st, moves[i], undo);
    }
    return sum / k;
}

/* The fill playout has the exact outcome distribution of the move-by-move random playout. */
static void test_fill_playout(mg_test_counts *t)
{
    const mg_game *g = &mg_hex;
    char err[MG_ERRLEN];
    struct {
        const char *text;
        int swap;
    } pos[] = {
        {".../.../... x", 0}, {".../.../... x", 1}, {".x./.../... o", 1}, {"x../.../.o. x", 0},
        {"xo../.xo./o.x./.x.. o", 0}, {"../.. x", 1}, {". x", 1},
    };
    mg_rng rng;
    mg_rng_seed(&rng, 99);
    for (size_t i = 0; i < sizeof pos / sizeof pos[0]; i++) {
        mg_config cfg = {0, pos[i].swap ? MG_FLAG_HEX_SWAP : 0};
        mg_hex_state s, copy, w;
        MG_CHECK_T(t, g->from_text(&s, &cfg, pos[i].text, err, sizeof err) == MG_OK);
        double exact = random_play_value(g, &s);
        const int N = 100000;
        long fill_wins = 0, move_wins = 0;
        copy = s;
        for (int k = 0; k < N; k++) {
            int plies = -1;
            int r = mg_hex_fill_playout(g, &s, &rng, 1 << 30, &plies);
            MG_CHECK_T(t, (r == MG_P0_WINS || r == MG_P1_WINS) && plies >= 0);
            fill_wins += r == MG_P0_WINS;
            w = s;
            move_wins += mg_random_playout_moves(g, &w, &rng, 1 << 30, NULL) == MG_P0_WINS;
        }
        MG_CHECK_T(t, memcmp(&copy, &s, sizeof s) == 0); /* not modified */
        double tol = 4.5 * sqrt(exact * (1 - exact) / N) + 1e-12;
        double pf = (double)fill_wins / N, pm = (double)move_wins / N;
        MG_CHECK_T(t, fabs(pf - exact) <= tol && fabs(pm - exact) <= tol);
        if (!(fabs(pf - exact) <= tol && fabs(pm - exact) <= tol))
            fprintf(stderr, "  %s: exact %.4f, fill %.4f, move-by-move %.4f\n", pos[i].text, exact, pf, pm);
    }
    /* a cut-off below the cells left falls back to the move-by-move playout */
    mg_hex_state s;
    mg_config cfg = {5, 0};
    g->init(&s, &cfg, err, sizeof err);
    int plies = -1;
    MG_CHECK_T(t, mg_hex_fill_playout(g, &s, &rng, 3, &plies) == MG_ONGOING && plies == 3);
    MG_CHECK_T(t, g->from_text(&s, NULL, "x o", err, sizeof err) == MG_OK);
    MG_CHECK_T(t, mg_hex_fill_playout(g, &s, &rng, 100, &plies) == MG_P0_WINS && plies == 0);
}

int main(void)
{
    mg_test_counts T = {0, 0};
    mg_games_init();
    MG_CHECK(mg_game_by_name("hex") == &mg_hex);
    MG_CHECK(mg_hex.state_size <= MG_MAX_STATE && mg_hex.undo_size <= MG_MAX_UNDO &&
             mg_hex.max_moves <= MG_MAX_MOVES);
    test_text_and_moves(&T);
    test_swap(&T);
    random_games(&T, 1, 0, 3, 1);
    random_games(&T, 2, 1, 20, 2);
    random_games(&T, 3, 1, 50, 3);
    random_games(&T, 5, 0, 20, 4);
    random_games(&T, 7, 1, 20, 5);
    random_games(&T, 11, 0, 10, 6);
    random_games(&T, 13, 1, 5, 7);
    random_games(&T, 19, 0, 3, 8);
    test_solver(&T);
    test_fill_playout(&T);
    MG_TEST_MAIN_END("test_hex");
}
