/* test_chess_policy.c - the 1968-move index (bijection, legal moves inside it) and the input planes. */
#include <stdio.h>
#include <string.h>

#include "../game.h"
#include "../games/chess/bitboard.h"
#include "../games/chess/chess_policy.h"
#include "../rng.h"
#include "mgtest.h"

static mg_test_counts T;

static void test_bijection(void)
{
    int count = 0, bad = 0;
    for (int i = 0; i < MG_POLICY_MOVES; i++) {
        int f, t, p;
        char u[8];
        if (mg_policy_decode(i, &f, &t, &p) != 0 || mg_policy_index(f, t, p) != i || mg_policy_uci(i, u) < 4 ||
            mg_policy_from_uci(u) != i)
            bad++;
        count++;
    }
    MG_CHECK(bad == 0);
    MG_CHECK(count == 1968);
    /* every (from, to, promo) maps to -1 or a distinct index, and exactly 1968 are mapped */
    static unsigned char seen[MG_POLICY_MOVES];
    int mapped = 0, dup = 0;
    for (int f = 0; f < 64; f++)
        for (int t = 0; t < 64; t++)
            for (int p = 0; p <= 4; p++) {
                int i = mg_policy_index(f, t, p);
                if (i < 0)
                    continue;
                dup += seen[i]++;
                mapped++;
            }
    MG_CHECK(mapped == MG_POLICY_MOVES && dup == 0);
    MG_CHECK(mg_policy_from_uci("a1c4") == -1 && mg_policy_from_uci("e2e4q") == -1 && mg_policy_from_uci("e7e8k") == -1);
    MG_CHECK(mg_policy_from_uci("h7g8n") >= MG_POLICY_QUEEN_KNIGHT && mg_policy_index(1, 8, 1) < 0);
    int f, t, p;
    MG_CHECK(mg_policy_decode(-1, &f, &t, &p) == -1 && mg_policy_decode(1968, &f, &t, &p) == -1);
}

static void test_random_games(void)
{
    const mg_game *g = mg_game_by_name("chess");
    mg_rng rng;
    mg_rng_seed(&rng, 20);
    int bad = 0, positions = 0;
    for (int game = 0; game < 200; game++) {
        mg_chess_state s;
        g->init(&s, NULL, NULL, 0);
        unsigned char undo[MG_MAX_UNDO];
        for (int ply = 0; ply < 200; ply++) {
            int32_t acts[MG_CHESS_MAX_MOVES];
            int16_t idx[MG_CHESS_MAX_MOVES];
            int n = mg_policy_legal(&s, acts, idx);
            if (n == 0 || g->outcome(&s, NULL) != MG_ONGOING)
                break;
            positions++;
            for (int i = 0; i < n; i++) {
                char a[8], b[8];
                if (idx[i] < 0 || mg_policy_uci(idx[i], a) == 0 || g->action_to_str(&s, acts[i], b, sizeof b) == 0 ||
                    strcmp(a, b) != 0)
                    bad++;
                for (int j = 0; j < i; j++)
                    bad += idx[j] == idx[i];
            }
            g->make(&s, acts[mg_rng_below(&rng, (uint32_t)n)], undo);
        }
    }
    MG_CHECK(bad == 0);
    MG_CHECK(positions > 5000);
}

static void test_planes(void)
{
    const mg_game *g = mg_game_by_name("chess");
    mg_chess_state s;
    g->init(&s, NULL, NULL, 0);
    static float out[MG_POLICY_INPUT_SIZE];
    mg_policy_planes(s.board, s.board, s.board, s.stm, s.fullmove, out);
    double total = 0;
    for (int i = 0; i < MG_POLICY_INPUT_SIZE; i++)
        total += out[i];
    /* 3 x (32 pieces + 32 empty) + colour 64 + move number 64 * 0.01 */
    MG_CHECK(total > 3 * 64 + 64 + 0.63 && total < 3 * 64 + 64 + 0.65);
    MG_CHECK(out[0 * 64 + 6 * 8 + 4] == 1.0f);        /* white pawn e2: row 6 */
    MG_CHECK(out[5 * 64 + 7 * 8 + 4] == 1.0f);        /* white king e1: row 7 */
    MG_CHECK(out[(6 + 4) * 64 + 0 * 8 + 3] == 1.0f);  /* black queen d8: row 0 */
    MG_CHECK(out[12 * 64 + 4 * 8 + 4] == 1.0f);       /* e4 empty */
    MG_CHECK(out[39 * 64] == 1.0f && out[40 * 64 + 63] == 0.01f);
    float w[MG_POLICY_MOVES];
    for (int i = 0; i < MG_POLICY_MOVES; i++)
        w[i] = (float)(i % 3);
    int32_t acts[MG_CHESS_MAX_MOVES];
    int16_t idx[MG_CHESS_MAX_MOVES];
    float pr[MG_CHESS_MAX_MOVES];
    int n = mg_policy_legal(&s, acts, idx);
    mg_policy_mask_normalise(w, idx, n, pr);
    double sum = 0;
    for (int i = 0; i < n; i++)
        sum += pr[i];
    MG_CHECK(n == 20 && sum > 0.9999 && sum < 1.0001);
    for (int i = 0; i < MG_POLICY_MOVES; i++)
        w[i] = -1.0f;
    mg_policy_mask_normalise(w, idx, n, pr);
    MG_CHECK(pr[0] == 1.0f / 20 && pr[19] == 1.0f / 20);
}

int main(void)
{
    mg_games_init();
    test_bijection();
    test_random_games();
    test_planes();
    MG_TEST_MAIN_END("test_chess_policy");
}
