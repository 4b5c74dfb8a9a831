/* chess_policy.c - planes and the 1968-move index of a chess policy network (see chess_policy.h). */
#include "chess_policy.h"

#include <math.h>
#include <string.h>

/* Squares a queen or a knight reaches from each square on an empty board. */
static const uint64_t REACH[64] = {
    0x81412111090707feULL, 0x02824222120f0ffdULL, 0x04048444241f1ffbULL, 0x08080888493e3ef7ULL,
    0x10101011927c7cefULL, 0x2020212224f8f8dfULL, 0x4041424448f0f0bfULL, 0x8182848890e0e07fULL,
    0x412111090707fe07ULL, 0x824222120f0ffd0fULL, 0x048444241f1ffb1fULL, 0x080888493e3ef73eULL,
    0x101011927c7cef7cULL, 0x20212224f8f8dff8ULL, 0x41424448f0f0bff0ULL, 0x82848890e0e07fe0ULL,
    0x2111090707fe0707ULL, 0x4222120f0ffd0f0fULL, 0x8444241f1ffb1f1fULL, 0x0888493e3ef73e3eULL,
    0x1011927c7cef7c7cULL, 0x212224f8f8dff8f8ULL, 0x424448f0f0bff0f0ULL, 0x848890e0e07fe0e0ULL,
    0x11090707fe070709ULL, 0x22120f0ffd0f0f12ULL, 0x44241f1ffb1f1f24ULL, 0x88493e3ef73e3e49ULL,
    0x11927c7cef7c7c92ULL, 0x2224f8f8dff8f824ULL, 0x4448f0f0bff0f048ULL, 0x8890e0e07fe0e090ULL,
    0x090707fe07070911ULL, 0x120f0ffd0f0f1222ULL, 0x241f1ffb1f1f2444ULL, 0x493e3ef73e3e4988ULL,
    0x927c7cef7c7c9211ULL, 0x24f8f8dff8f82422ULL, 0x48f0f0bff0f04844ULL, 0x90e0e07fe0e09088ULL,
    0x0707fe0707091121ULL, 0x0f0ffd0f0f122242ULL, 0x1f1ffb1f1f244484ULL, 0x3e3ef73e3e498808ULL,
    0x7c7cef7c7c921110ULL, 0xf8f8dff8f8242221ULL, 0xf0f0bff0f0484442ULL, 0xe0e07fe0e0908884ULL,
    0x07fe070709112141ULL, 0x0ffd0f0f12224282ULL, 0x1ffb1f1f24448404ULL, 0x3ef73e3e49880808ULL,
    0x7cef7c7c92111010ULL, 0xf8dff8f824222120ULL, 0xf0bff0f048444241ULL, 0xe07fe0e090888482ULL,
    0xfe07070911214181ULL, 0xfd0f0f1222428202ULL, 0xfb1f1f2444840404ULL, 0xf73e3e4988080808ULL,
    0xef7c7c9211101010ULL, 0xdff8f82422212020ULL, 0xbff0f04844424140ULL, 0x7fe0e09088848281ULL,
};
/* OFFSET[sq]: the index of the first queen/knight move from sq (sum of popcounts below). */
static const uint16_t OFFSET[65] = {
    0, 23, 47, 72, 97, 122, 147, 171, 194, 218, 245, 274, 303,
    332, 361, 388, 412, 437, 466, 499, 532, 565, 598, 627, 652, 677,
    706, 739, 774, 809, 842, 871, 896, 921, 950, 983, 1018, 1053, 1086,
    1115, 1140, 1165, 1194, 1227, 1260, 1293, 1326, 1355, 1380, 1404, 1431, 1460,
    1489, 1518, 1547, 1574, 1598, 1621, 1645, 1670, 1695, 1720, 1745, 1769, 1792,
};

/* Promotions: 22 (from file, to file) slots a side; slot of file f is 3f - 1 (a: 0), + to - from + (f > 0). */
static int promo_slot(int ffile, int tfile) { return (ffile ? 3 * ffile - 1 : 0) + tfile - ffile + (ffile ? 1 : 0); }

int mg_policy_index(int from, int to, int promo)
{
    if (from < 0 || from > 63 || to < 0 || to > 63 || promo < 0 || promo > 4)
        return -1;
    if (!promo)
        return (REACH[from] >> to & 1) ? OFFSET[from] + __builtin_popcountll(REACH[from] & ((1ULL << to) - 1)) : -1;
    int fr = from >> 3, tr = to >> 3, ff = from & 7, tf = to & 7, side;
    if (fr == 6 && tr == 7)
        side = 0;
    else if (fr == 1 && tr == 0)
        side = 1;
    else
        return -1;
    if (tf - ff > 1 || ff - tf > 1)
        return -1;
    return MG_POLICY_QUEEN_KNIGHT + side * 88 + promo_slot(ff, tf) * 4 + (promo - 1);
}

int mg_policy_decode(int idx, int *from, int *to, int *promo)
{
    if (idx < 0 || idx >= MG_POLICY_MOVES)
        return -1;
    if (idx < MG_POLICY_QUEEN_KNIGHT) {
        int lo = 0, hi = 63; /* the last sq with OFFSET[sq] <= idx */
        while (lo < hi) {
            int mid = (lo + hi + 1) / 2;
            if (OFFSET[mid] <= idx)
                lo = mid;
            else
                hi = mid - 1;
        }
        uint64_t m = REACH[lo];
        for (int k = idx - OFFSET[lo]; k > 0; k--)
            m &= m - 1;
        *from = lo;
        *to = __builtin_ctzll(m);
        *promo = 0;
        return 0;
    }
    int r = idx - MG_POLICY_QUEEN_KNIGHT, side = r / 88, slot = (r % 88) / 4;
    *promo = r % 4 + 1;
    int ff = slot < 2 ? 0 : (slot + 1) / 3; /* inverse of promo_slot */
    int tf = slot - (ff ? 3 * ff - 1 : 0) + ff - (ff ? 1 : 0);
    *from = (side ? 8 : 48) + ff;
    *to = (side ? 0 : 56) + tf;
    return 0;
}

int mg_policy_uci(int idx, char *buf)
{
    int from, to, promo;
    if (mg_policy_decode(idx, &from, &to, &promo) < 0)
        return 0;
    return mg_chess_uci_write(from, to, promo, buf);
}

int mg_policy_from_uci(const char *u)
{
    size_t n = strlen(u);
    if (n != 4 && n != 5)
        return -1;
    if (u[0] < 'a' || u[0] > 'h' || u[1] < '1' || u[1] > '8' || u[2] < 'a' || u[2] > 'h' || u[3] < '1' || u[3] > '8')
        return -1;
    int promo = 0;
    if (n == 5) {
        const char *p = strchr("nbrq", u[4]);
        if (!p || !u[4])
            return -1;
        promo = (int)(p - "nbrq") + 1;
    }
    return mg_policy_index((u[0] - 'a') + 8 * (u[1] - '1'), (u[2] - 'a') + 8 * (u[3] - '1'), promo);
}

int mg_policy_action_index(const mg_chess_state *s, int32_t a)
{
    int from = a & 63, to = (a >> 6) & 63, promo = (a >> 12) & 7;
    int pc = s->board[from], t = s->board[to];
    /* Standard chess writes castling (king takes own rook in the action) as the king's two-square move. */
    if (!s->chess960 && (pc & 7) == MG_CH_KING && t && (t >> 3) == (pc >> 3) && (t & 7) == MG_CH_ROOK)
        to = (to & 56) | (to < from ? 2 : 6);
    return mg_policy_index(from, to, promo);
}

int mg_policy_legal(const mg_chess_state *s, int32_t *actions, int16_t *idx)
{
    int n = mg_chess_legal_actions(s, actions);
    for (int i = 0; i < n; i++)
        idx[i] = (int16_t)mg_policy_action_index(s, actions[i]);
    return n;
}

static void piece_planes(const uint8_t *board, float *out)
{
    memset(out, 0, 13 * 64 * sizeof(float));
    for (int sq = 0; sq < 64; sq++) {
        int pc = board[sq], cell = (7 - (sq >> 3)) * 8 + (sq & 7);
        int plane = pc ? (pc >> 3) * 6 + (pc & 7) - 1 : 12;
        out[plane * 64 + cell] = 1.0f;
    }
}

void mg_policy_planes(const uint8_t *now, const uint8_t *prev1, const uint8_t *prev2, int stm, uint32_t fullmove,
                      float *out)
{
    piece_planes(now, out);
    piece_planes(prev1, out + 13 * 64);
    piece_planes(prev2, out + 26 * 64);
    float colour = stm ? 0.0f : 1.0f, num = (float)fullmove / MG_POLICY_MOVENUM_SCALE;
    for (int i = 0; i < 64; i++) {
        out[39 * 64 + i] = colour;
        out[40 * 64 + i] = num;
    }
}

void mg_policy_mask_normalise(const float *w, const int16_t *idx, int n, float *probs)
{
    double sum = 0.0;
    for (int i = 0; i < n; i++) {
        float v = idx[i] >= 0 ? w[idx[i]] : 0.0f;
        probs[i] = (v > 0.0f && isfinite(v)) ? v : 0.0f; /* NaN fails v > 0 */
        sum += probs[i];
    }
    if (!(sum > 0.0) || !isfinite(sum)) {
        for (int i = 0; i < n; i++)
            probs[i] = 1.0f / (float)n;
        return;
    }
    for (int i = 0; i < n; i++)
        probs[i] = (float)(probs[i] / sum);
}
