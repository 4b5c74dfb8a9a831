/* gardner.c - Gardner's 5x5 minichess (see gardner.h for the rules and encodings).
 *
 * Bitboards of 25 bits in a uint32 (bit i = square i = file + 5 * rank) plus a mailbox.
 * Legal moves are generated directly: checkers and pinned pieces are found by walking
 * the eight rays out of the king, king moves are tested against the enemy attacks with
 * the king lifted off the board.  All tables are compile-time constants.
 */
#include "gardner.h"

#include <stdio.h>
#include <string.h>

#include "../fen.h"
#include "../../cancel.h"
#include "../../multiversion.h"
#include "../../rng.h"

#define NSQ MG_GARDNER_SQUARES
#define BOARD_MASK 0x1ffffffu
#define WHITE 0
#define BLACK 1
#define PC(color, type) ((uint8_t)((color) * 8 + (type)))
#define PC_COLOR(pc) ((pc) >> 3)
#define PC_TYPE(pc) ((pc) & 7)

/* ---- compile-time tables ------------------------------------------------------------ */

/* Bit of square (f, r), 0 off the board (the shift count is kept in range either way). */
#define SQB(f, r) \
    (((f) >= 0 && (f) < 5 && (r) >= 0 && (r) < 5) ? (1u << ((((r) * 5 + (f)) % 32 + 32) % 32)) : 0u)
#define FI(s) ((s) % 5)
#define RA(s) ((s) / 5)

#define T5(M, i) M(i), M(i + 1), M(i + 2), M(i + 3), M(i + 4)
#define T25(M) T5(M, 0), T5(M, 5), T5(M, 10), T5(M, 15), T5(M, 20)

#define KNIGHT_AT(s)                                                                          \
    (SQB(FI(s) + 1, RA(s) + 2) | SQB(FI(s) + 2, RA(s) + 1) | SQB(FI(s) + 2, RA(s) - 1) |    \
     SQB(FI(s) + 1, RA(s) - 2) | SQB(FI(s) - 1, RA(s) - 2) | SQB(FI(s) - 2, RA(s) - 1) |    \
     SQB(FI(s) - 2, RA(s) + 1) | SQB(FI(s) - 1, RA(s) + 2))
#define KING_AT(s)                                                                            \
    (SQB(FI(s) + 1, RA(s)) | SQB(FI(s) + 1, RA(s) + 1) | SQB(FI(s), RA(s) + 1) |             \
     SQB(FI(s) - 1, RA(s) + 1) | SQB(FI(s) - 1, RA(s)) | SQB(FI(s) - 1, RA(s) - 1) |         \
     SQB(FI(s), RA(s) - 1) | SQB(FI(s) + 1, RA(s) - 1))
#define WPAWN_AT(s) (SQB(FI(s) - 1, RA(s) + 1) | SQB(FI(s) + 1, RA(s) + 1))
#define BPAWN_AT(s) (SQB(FI(s) - 1, RA(s) - 1) | SQB(FI(s) + 1, RA(s) - 1))
#define RAY(s, df, dr)                                                                        \
    (SQB(FI(s) + (df), RA(s) + (dr)) | SQB(FI(s) + 2 * (df), RA(s) + 2 * (dr)) |             \
     SQB(FI(s) + 3 * (df), RA(s) + 3 * (dr)) | SQB(FI(s) + 4 * (df), RA(s) + 4 * (dr)))

static const uint32_t KNIGHT_ATT[NSQ] = {T25(KNIGHT_AT)};
static const uint32_t KING_ATT[NSQ] = {T25(KING_AT)};
/* PAWN_ATT[c][s]: squares a pawn of colour c on s attacks. */
static const uint32_t PAWN_ATT[2][NSQ] = {{T25(WPAWN_AT)}, {T25(BPAWN_AT)}};

/* Directions 0..3 increase the square index (nearest blocker = lowest bit), 4..7 decrease
 * it (nearest blocker = highest bit).  Even = orthogonal, odd = diagonal. */
#define RAY_N(s) RAY(s, 0, 1)
#define RAY_NE(s) RAY(s, 1, 1)
#define RAY_E(s) RAY(s, 1, 0)
#define RAY_NW(s) RAY(s, -1, 1)
#define RAY_S(s) RAY(s, 0, -1)
#define RAY_SW(s) RAY(s, -1, -1)
#define RAY_W(s) RAY(s, -1, 0)
#define RAY_SE(s) RAY(s, 1, -1)
static const uint32_t RAYS[8][NSQ] = {
    {T25(RAY_N)}, {T25(RAY_NE)}, {T25(RAY_E)}, {T25(RAY_NW)},
    {T25(RAY_S)}, {T25(RAY_SW)}, {T25(RAY_W)}, {T25(RAY_SE)},
};
#define DIR_ORTHO(d) (((d) & 1) == 0)

/* Zobrist keys: the i-th key (from 0) is the (i + 1)-th output of splitmix64 seeded with
 * ZSEED (mg_splitmix64 in rng.h), computed at compile time.  Index (colour * 6 + type - 1)
 * * 25 + square for pieces, 300 for Black to move. */
#define ZSEED 0x6761726478346d67ULL
#define ZKEY(i) MG_MIX64_CONST(ZSEED + (uint64_t)(i) * MG_SPLITMIX64_GAMMA)
#define ZROW(i) T5(ZKEY, i), T5(ZKEY, i + 5), T5(ZKEY, i + 10), T5(ZKEY, i + 15), T5(ZKEY, i + 20)
static const uint64_t ZOBRIST[12 * NSQ + 1] = {
    ZROW(0),   ZROW(25),  ZROW(50),  ZROW(75),  ZROW(100), ZROW(125),
    ZROW(150), ZROW(175), ZROW(200), ZROW(225), ZROW(250), ZROW(275), ZKEY(300),
};
#define ZSIDE ZOBRIST[12 * NSQ]
/* Key of piece code pc (non-empty) on square s. */
static inline uint64_t zpiece(int pc, int s) { return ZOBRIST[(PC_COLOR(pc) * 6 + PC_TYPE(pc) - 1) * NSQ + s]; }

static const char PIECE_CHARS[] = " PNBRQK  pnbrqk";  /* indexed by piece code */
static const char PROMO_CHARS[] = " nbrq";             /* indexed by promo */
static const uint8_t PROMO_TYPE[5] = {0, MG_GP_KNIGHT, MG_GP_BISHOP, MG_GP_ROOK, MG_GP_QUEEN};

/* ---- bit helpers -------------------------------------------------------------------- */

static inline int lsb(uint32_t b) { return __builtin_ctz(b); }
static inline int msb(uint32_t b) { return 31 - __builtin_clz(b); }
static inline int popcnt(uint32_t b) { return __builtin_popcount(b); }

/* Attacks along ray d from s with occupancy occ (the first blocker included). */
static inline uint32_t ray_attacks(int d, int s, uint32_t occ)
{
    uint32_t r = RAYS[d][s];
    uint32_t b = r & occ;
    if (b)
        r ^= RAYS[d][d < 4 ? lsb(b) : msb(b)];
    return r;
}

static inline uint32_t rook_attacks(int s, uint32_t occ)
{
    return ray_attacks(0, s, occ) | ray_attacks(2, s, occ) | ray_attacks(4, s, occ) | ray_attacks(6, s, occ);
}

static inline uint32_t bishop_attacks(int s, uint32_t occ)
{
    return ray_attacks(1, s, occ) | ray_attacks(3, s, occ) | ray_attacks(5, s, occ) | ray_attacks(7, s, occ);
}

/* Non-zero if square s is attacked by colour `by` with occupancy occ. */
static inline int attacked(const mg_gardner_state *st, int s, int by, uint32_t occ)
{
    uint32_t them = st->bb_color[by];
    if (KNIGHT_ATT[s] & st->bb_type[MG_GP_KNIGHT] & them)
        return 1;
    if (KING_ATT[s] & st->bb_type[MG_GP_KING] & them)
        return 1;
    if (PAWN_ATT[by ^ 1][s] & st->bb_type[MG_GP_PAWN] & them)
        return 1;
    uint32_t rq = (st->bb_type[MG_GP_ROOK] | st->bb_type[MG_GP_QUEEN]) & them;
    if (rq && (rook_attacks(s, occ) & rq))
        return 1;
    uint32_t bq = (st->bb_type[MG_GP_BISHOP] | st->bb_type[MG_GP_QUEEN]) & them;
    if (bq && (bishop_attacks(s, occ) & bq))
        return 1;
    return 0;
}

static inline int king_square(const mg_gardner_state *st, int c)
{
    return lsb(st->bb_type[MG_GP_KING] & st->bb_color[c]);
}

int mg_gardner_in_check(const mg_gardner_state *s)
{
    int us = s->side;
    return attacked(s, king_square(s, us), us ^ 1, s->bb_color[0] | s->bb_color[1]);
}

/* ---- move generation ---------------------------------------------------------------- */

#define ACTION(from, to, promo) ((int32_t)((from) + NSQ * (to) + NSQ * NSQ * (promo)))
#define A_FROM(a) ((a) % NSQ)
#define A_TO(a) (((a) / NSQ) % NSQ)
#define A_PROMO(a) ((a) / (NSQ * NSQ))

static inline int add_targets(int32_t *out, int n, int from, uint32_t targets)
{
    while (targets) {
        int to = lsb(targets);
        targets &= targets - 1;
        out[n++] = ACTION(from, to, 0);
    }
    return n;
}

static inline int add_pawn_targets(const mg_gardner_state *st, int32_t *out, int n, int from, uint32_t targets)
{
    const uint32_t last = st->side == WHITE ? 0x1f00000u : 0x1fu;
    while (targets) {
        int to = lsb(targets);
        targets &= targets - 1;
        if ((1u << to) & last) {
            out[n++] = ACTION(from, to, 4);
            out[n++] = ACTION(from, to, 3);
            if (st->flags & MG_FLAG_GARDNER_BISHOP)
                out[n++] = ACTION(from, to, 2);
            out[n++] = ACTION(from, to, 1);
        } else {
            out[n++] = ACTION(from, to, 0);
        }
    }
    return n;
}

/* All legal actions of the side to move; returns the count. */
static int gen_legal(const mg_gardner_state *st, int32_t *out)
{
    const int us = st->side, them = us ^ 1;
    const uint32_t own = st->bb_color[us], opp = st->bb_color[them];
    const uint32_t occ = own | opp;
    const int ksq = king_square(st, us);
    int n = 0;

    /* King moves: the destination must not be attacked once the king has left ksq. */
    {
        uint32_t t = KING_ATT[ksq] & ~own;
        const uint32_t occ_nok = occ ^ (1u << ksq);
        while (t) {
            int to = lsb(t);
            t &= t - 1;
            if (!attacked(st, to, them, occ_nok))
                out[n++] = ACTION(ksq, to, 0);
        }
    }

    /* Checkers and pins, walking the eight rays from the king. */
    const uint32_t rq = (st->bb_type[MG_GP_ROOK] | st->bb_type[MG_GP_QUEEN]) & opp;
    const uint32_t bq = (st->bb_type[MG_GP_BISHOP] | st->bb_type[MG_GP_QUEEN]) & opp;
    uint32_t checkers = (KNIGHT_ATT[ksq] & st->bb_type[MG_GP_KNIGHT] & opp) |
                        (PAWN_ATT[us][ksq] & st->bb_type[MG_GP_PAWN] & opp);
    uint32_t block = 0;   /* with one slider check: the squares between it and the king */
    uint32_t pinned = 0;
    uint32_t pin_line[NSQ];
    for (int d = 0; d < 8; d++) {
        const uint32_t sliders = DIR_ORTHO(d) ? rq : bq;
        if (!(RAYS[d][ksq] & sliders))
            continue;
        uint32_t b = RAYS[d][ksq] & occ;
        int s1 = d < 4 ? lsb(b) : msb(b);   /* b != 0: the slider is on the ray */
        if ((1u << s1) & sliders) {
            checkers |= 1u << s1;
            block |= RAYS[d][ksq] & ~RAYS[d][s1] & ~(1u << s1);
            continue;
        }
        if (!((1u << s1) & own))
            continue;
        b &= ~(1u << s1);
        if (!b)
            continue;
        int s2 = d < 4 ? lsb(b) : msb(b);
        if ((1u << s2) & sliders) {
            pinned |= 1u << s1;
            pin_line[s1] = RAYS[d][ksq] & ~RAYS[d][s2];
        }
    }
    if (popcnt(checkers) > 1)
        return n;
    const uint32_t allowed = checkers ? (checkers | block) : (BOARD_MASK & ~own);

    /* Pawns. */
    {
        uint32_t p = st->bb_type[MG_GP_PAWN] & own;
        while (p) {
            int from = lsb(p);
            p &= p - 1;
            uint32_t t = PAWN_ATT[us][from] & opp;
            int to = us == WHITE ? from + 5 : from - 5;
            /* A pawn on the last rank cannot exist, so `to` is on the board. */
            if (!((1u << to) & occ))
                t |= 1u << to;
            t &= allowed;
            if ((1u << from) & pinned)
                t &= pin_line[from];
            n = add_pawn_targets(st, out, n, from, t);
        }
    }
    /* Knights (a pinned knight never moves). */
    {
        uint32_t p = st->bb_type[MG_GP_KNIGHT] & own & ~pinned;
        while (p) {
            int from = lsb(p);
            p &= p - 1;
            n = add_targets(out, n, from, KNIGHT_ATT[from] & allowed);
        }
    }
    /* Sliders. */
    {
        uint32_t p = (st->bb_type[MG_GP_BISHOP] | st->bb_type[MG_GP_QUEEN]) & own;
        while (p) {
            int from = lsb(p);
            p &= p - 1;
            uint32_t t = bishop_attacks(from, occ) & allowed;
            if ((1u << from) & pinned)
                t &= pin_line[from];
            n = add_targets(out, n, from, t);
        }
        p = (st->bb_type[MG_GP_ROOK] | st->bb_type[MG_GP_QUEEN]) & own;
        while (p) {
            int from = lsb(p);
            p &= p - 1;
            uint32_t t = rook_attacks(from, occ) & allowed;
            if ((1u << from) & pinned)
                t &= pin_line[from];
            /* A queen's rook-wise moves are added here, its diagonal ones above. */
            n = add_targets(out, n, from, t);
        }
    }
    return n;
}

/* ---- make / unmake ------------------------------------------------------------------ */

static void g_make(void *vst, int32_t a, void *vundo)
{
    mg_gardner_state *st = vst;
    mg_gardner_undo *u = vundo;
    const int from = A_FROM(a), to = A_TO(a), promo = A_PROMO(a);
    const int us = st->side;
    const uint8_t pc = st->board[from], cap = st->board[to];
    const uint32_t fb = 1u << from, tb = 1u << to;
    uint64_t h = st->hash;

    u->hash = st->hash;
    u->halfmove = st->halfmove;
    u->captured = cap;
    u->hist_len = st->hist_len;
    u->pad[0] = u->pad[1] = 0;

    if (cap) {
        st->bb_type[PC_TYPE(cap)] ^= tb;
        st->bb_color[us ^ 1] ^= tb;
        h ^= zpiece(cap, to);
    }
    const uint8_t npc = promo ? PC(us, PROMO_TYPE[promo]) : pc;
    st->bb_type[PC_TYPE(pc)] ^= fb;
    st->bb_type[PC_TYPE(npc)] ^= tb;
    st->bb_color[us] ^= fb | tb;
    st->board[from] = 0;
    st->board[to] = npc;
    h ^= zpiece(pc, from) ^ zpiece(npc, to) ^ ZSIDE;
    st->hash = h;

    const int irreversible = cap || PC_TYPE(pc) == MG_GP_PAWN;
    st->halfmove = irreversible ? 0 : st->halfmove + 1;
    if (us == BLACK)
        st->fullmove++;
    st->side = (uint8_t)(us ^ 1);

    st->hist_head = (uint8_t)((st->hist_head + 1) % MG_GARDNER_HIST);
    u->hist_old = st->hist[st->hist_head];
    st->hist[st->hist_head] = h;
    st->hist_len = irreversible ? 1 : (uint8_t)(st->hist_len < MG_GARDNER_HIST ? st->hist_len + 1 : MG_GARDNER_HIST);
}

static void g_unmake(void *vst, int32_t a, const void *vundo)
{
    mg_gardner_state *st = vst;
    const mg_gardner_undo *u = vundo;
    const int from = A_FROM(a), to = A_TO(a), promo = A_PROMO(a);
    const int us = st->side ^ 1;   /* the side that made the move */
    const uint8_t npc = st->board[to];
    const uint8_t pc = promo ? PC(us, MG_GP_PAWN) : npc;
    const uint32_t fb = 1u << from, tb = 1u << to;

    st->hist[st->hist_head] = u->hist_old;
    st->hist_head = (uint8_t)((st->hist_head + MG_GARDNER_HIST - 1) % MG_GARDNER_HIST);
    st->hist_len = u->hist_len;

    st->bb_type[PC_TYPE(npc)] ^= tb;
    st->bb_type[PC_TYPE(pc)] ^= fb;
    st->bb_color[us] ^= fb | tb;
    st->board[from] = pc;
    st->board[to] = u->captured;
    if (u->captured) {
        st->bb_type[PC_TYPE(u->captured)] ^= tb;
        st->bb_color[us ^ 1] ^= tb;
    }
    st->side = (uint8_t)us;
    if (us == BLACK)
        st->fullmove--;
    st->halfmove = u->halfmove;
    st->hash = u->hash;
}

/* ---- perft -------------------------------------------------------------------------- */

MG_HOT static uint64_t perft_rec(mg_gardner_state *st, int depth, mg_cancel *cancel)
{
    int32_t moves[MG_GARDNER_MAX_MOVES];
    mg_gardner_undo u;
    int n = gen_legal(st, moves);
    if (depth == 1)
        return (uint64_t)n;
    if (mg_cancel_tick(cancel))
        return 0;
    uint64_t total = 0;
    for (int i = 0; i < n; i++) {
        g_make(st, moves[i], &u);
        total += perft_rec(st, depth - 1, cancel);
        g_unmake(st, moves[i], &u);
    }
    return total;
}

static uint64_t g_perft(void *st, int depth, mg_cancel *cancel)
{
    return depth <= 0 ? 1 : perft_rec(st, depth, cancel);
}

/* ---- the interface ------------------------------------------------------------------ */

uint64_t mg_gardner_compute_hash(const mg_gardner_state *s)
{
    uint64_t h = s->side ? ZSIDE : 0;
    for (int i = 0; i < NSQ; i++)
        if (s->board[i])
            h ^= zpiece(s->board[i], i);
    return h;
}

static void put_piece(mg_gardner_state *s, int sq, uint8_t pc)
{
    s->board[sq] = pc;
    s->bb_type[PC_TYPE(pc)] |= 1u << sq;
    s->bb_color[PC_COLOR(pc)] |= 1u << sq;
}

static void finish_setup(mg_gardner_state *s)
{
    s->hash = mg_gardner_compute_hash(s);
    s->hist_head = 0;
    s->hist_len = 1;
    s->hist[0] = s->hash;
}

static int g_from_text(void *st, const mg_config *cfg, const char *text, char *err, size_t errlen);

static int g_init(void *st, const mg_config *cfg, char *err, size_t errlen)
{
    return g_from_text(st, cfg, "rnbqk/ppppp/5/PPPPP/RNBQK w - - 0 1", err, errlen);
}

#define GFEN_ERR(...) MG_FEN_ERR("Gardner FEN", text, __VA_ARGS__)

/* A FEN field shown in a message (quoted, cut after 20 bytes). */
#define SHOW(i) MG_QUOTE_SPAN(field[i], flen[i], 20)

static int g_from_text(void *vst, const mg_config *cfg, const char *text, char *err, size_t errlen)
{
    mg_gardner_state s;
    memset(&s, 0, sizeof s);
    s.flags = cfg ? (cfg->flags & MG_FLAG_GARDNER_BISHOP) : 0;
    s.fullmove = 1;
    if (!text)
        text = "";

    /* Fields, as chess reads them: the board, then optionally side, castling, en passant,
     * halfmove clock and fullmove number ("w - - 0 1" where left out). */
    const char *field[MG_FEN_FIELDS];
    size_t flen[MG_FEN_FIELDS];
    uint8_t board[NSQ];
    char why[160];
    int nf = mg_fen_read_board(text, 5, 5, PIECE_CHARS, board, field, flen, why, sizeof why);
    if (nf < 0)
        GFEN_ERR("%s", why);
    for (int sq = 0; sq < NSQ; sq++)
        if (board[sq])
            put_piece(&s, sq, board[sq]);
    if (nf > 1) {
        if (flen[1] != 1 || (field[1][0] != 'w' && field[1][0] != 'b'))
            GFEN_ERR("side to move %s must be 'w' or 'b'", SHOW(1));
        s.side = field[1][0] == 'b';
    }
    static const char *const field_name[2] = {"castling", "en passant"};
    for (int f = 2; f < 4 && f < nf; f++)
        if (flen[f] != 1 || field[f][0] != '-')
            GFEN_ERR("%s field %s must be '-' (Gardner has no castling or en passant)", field_name[f - 2],
                     SHOW(f));
    if (nf > 4 && !mg_fen_uint(field[4], flen[4], &s.halfmove))
        GFEN_ERR("halfmove clock %s is not a non-negative integer", SHOW(4));
    if (nf > 5 && (!mg_fen_uint(field[5], flen[5], &s.fullmove) || s.fullmove == 0))
        GFEN_ERR("fullmove number %s is not a positive integer", SHOW(5));

    /* Position checks. */
    for (int c = 0; c < 2; c++) {
        int nk = popcnt(s.bb_type[MG_GP_KING] & s.bb_color[c]);
        if (nk != 1)
            GFEN_ERR("%s has %d kings (exactly 1 required)", c ? "Black" : "White", nk);
    }
    if (s.bb_type[MG_GP_PAWN] & (0x1fu | 0x1f00000u)) {
        int sq = lsb(s.bb_type[MG_GP_PAWN] & (0x1fu | 0x1f00000u));
        GFEN_ERR("pawn on the first or last rank (%c%c)", 'a' + sq % 5, '1' + sq / 5);
    }
    {
        int them = s.side ^ 1;
        uint32_t occ = s.bb_color[0] | s.bb_color[1];
        if (attacked(&s, king_square(&s, them), s.side, occ))
            GFEN_ERR("the side not to move (%s) is in check", them ? "Black" : "White");
    }
    finish_setup(&s);
    memcpy(vst, &s, sizeof s);
    return MG_OK;
}

static size_t g_to_text(const void *vst, char *buf, size_t buflen)
{
    const mg_gardner_state *s = vst;
    char tmp[96];
    size_t k = mg_fen_board_write(s->board, 5, 5, PIECE_CHARS, tmp);
    int m = snprintf(tmp + k, sizeof tmp - k, " %c - - %u %u", s->side ? 'b' : 'w', (unsigned)s->halfmove,
                     (unsigned)s->fullmove);
    k += (size_t)m;
    return mg_text_out(buf, buflen, tmp, k);
}

static int g_legal_actions(const void *st, int32_t *out) { return gen_legal(st, out); }

static int g_is_legal(const void *st, int32_t a)
{
    if (a < 0 || a >= MG_GARDNER_NUM_ACTIONS)
        return 0;
    const mg_gardner_state *s = st;
    /* Quick rejections before generating. */
    uint8_t pc = s->board[A_FROM(a)];
    if (!pc || PC_COLOR(pc) != s->side)
        return 0;
    int32_t moves[MG_GARDNER_MAX_MOVES];
    int n = gen_legal(s, moves);
    for (int i = 0; i < n; i++)
        if (moves[i] == a)
            return 1;
    return 0;
}

static int g_to_move(const void *st) { return ((const mg_gardner_state *)st)->side; }

/* Dead positions by material (see gardner.h). */
static int insufficient_material(const mg_gardner_state *s)
{
    const uint32_t all = s->bb_color[0] | s->bb_color[1];
    const uint32_t kings = s->bb_type[MG_GP_KING];
    const uint32_t others = all & ~kings;
    if (!others)
        return 1;
    if (others & (s->bb_type[MG_GP_PAWN] | s->bb_type[MG_GP_ROOK] | s->bb_type[MG_GP_QUEEN]))
        return 0;
    if (popcnt(others) == 1)
        return 1;   /* king + one knight or bishop against a lone king */
    if (others & s->bb_type[MG_GP_KNIGHT])
        return 0;
    /* Only bishops: dead if all stand on squares of one colour (even squares = a1's colour). */
    const uint32_t dark = 0x1555555u;
    return (others & dark) == others || (others & ~dark) == others;
}

int mg_gardner_insufficient_material(const mg_gardner_state *s) { return insufficient_material(s); }

static int g_outcome(const void *st, int *reason)
{
    const mg_gardner_state *s = st;
    int32_t moves[MG_GARDNER_MAX_MOVES];
    int r = MG_ONGOING, why = MG_TERM_NONE;
    if (gen_legal(s, moves) == 0) {
        if (mg_gardner_in_check(s)) {
            r = s->side == WHITE ? MG_P1_WINS : MG_P0_WINS;
            why = MG_TERM_CHECKMATE;
        } else {
            r = MG_DRAW;
            why = MG_TERM_STALEMATE;
        }
    } else if (insufficient_material(s)) {
        r = MG_DRAW;
        why = MG_TERM_INSUFFICIENT_MATERIAL;
    } else if (s->halfmove >= 100) {
        r = MG_DRAW;
        why = MG_TERM_FIFTY_MOVES;
    } else {
        int count = 1;
        for (int back = 2; back < s->hist_len; back += 2)
            if (s->hist[(s->hist_head + MG_GARDNER_HIST - back) % MG_GARDNER_HIST] == s->hash)
                count++;
        if (count >= 3) {
            r = MG_DRAW;
            why = MG_TERM_THREEFOLD_REPETITION;
        }
    }
    if (reason)
        *reason = why;
    return r;
}

static uint64_t g_hash(const void *st) { return ((const mg_gardner_state *)st)->hash; }

static int valid_action(int32_t a) { return a >= 0 && a < MG_GARDNER_NUM_ACTIONS; }

static size_t g_action_to_str(const void *st, int32_t a, char *buf, size_t buflen)
{
    (void)st;
    if (!valid_action(a) || buflen < 6)
        return 0;
    int from = A_FROM(a), to = A_TO(a), promo = A_PROMO(a);
    size_t k = 0;
    buf[k++] = (char)('a' + from % 5);
    buf[k++] = (char)('1' + from / 5);
    buf[k++] = (char)('a' + to % 5);
    buf[k++] = (char)('1' + to / 5);
    if (promo)
        buf[k++] = PROMO_CHARS[promo];
    buf[k] = '\0';
    return k;
}

static int g_action_from_str(const void *st, const char *str, int32_t *a, char *err, size_t errlen)
{
    const mg_gardner_state *s = st;
    int ok = str[0] >= 'a' && str[0] <= 'e' && str[1] >= '1' && str[1] <= '5' && str[2] >= 'a' &&
             str[2] <= 'e' && str[3] >= '1' && str[3] <= '5';
    int promo = 0;
    if (ok && str[4] != '\0') {
        const char *q = strchr("nbrqNBRQ", str[4]);
        if (q && str[5] == '\0')
            promo = (int)((q - "nbrqNBRQ") % 4) + 1;
        else
            ok = 0;
    }
    if (!ok) {
        snprintf(err, errlen,
                 "invalid Gardner move %s: expected from and to squares a1..e5 and an optional "
                 "promotion letter n, b, r or q (e.g. 'b2b3', 'a4a5q')",
                 MG_QUOTE(str, MG_QUOTE_MAX));
        return MG_ERR;
    }
    int from = (str[0] - 'a') + 5 * (str[1] - '1');
    int to = (str[2] - 'a') + 5 * (str[3] - '1');
    int32_t m = ACTION(from, to, promo);
    if (g_is_legal(s, m)) {
        *a = m;
        return MG_OK;
    }
    /* Say why. */
    const char *why = "not a legal move";
    uint8_t pc = s->board[from];
    if (!pc)
        why = "no piece on the from square";
    else if (PC_COLOR(pc) != s->side)
        why = "the piece on the from square belongs to the side not to move";
    else if (PC_TYPE(pc) == MG_GP_PAWN && promo == 0 && g_is_legal(s, ACTION(from, to, 4)))
        why = "a pawn reaching the last rank must name its promotion piece (n, r, q)";
    else if (promo == 2 && !(s->flags & MG_FLAG_GARDNER_BISHOP) && g_is_legal(s, ACTION(from, to, 4)))
        why = "promotion to a bishop is not allowed (enable it with the bishop-promotion option)";
    else if (promo && PC_TYPE(pc) != MG_GP_PAWN)
        why = "only a pawn can promote";
    else if (promo && g_is_legal(s, ACTION(from, to, 0)))
        why = "this move is not a promotion";
    snprintf(err, errlen, "illegal Gardner move %s: %s", MG_QUOTE(str, MG_QUOTE_MAX), why);
    return MG_ERR;
}

/* ---- SAN hooks ---------------------------------------------------------------------- */

static void g_move_info(const void *st, int32_t a, mg_move_info *out)
{
    const mg_gardner_state *s = st;
    int from = A_FROM(a), to = A_TO(a), promo = A_PROMO(a);
    out->from = from;
    out->to = to;
    out->piece = PIECE_CHARS[PC_TYPE(s->board[from])];
    out->capture = s->board[to] != 0;
    out->promotion = promo ? (char)(PROMO_CHARS[promo] - 'a' + 'A') : 0;
    out->castle = 0;
}

static int g_san_in_check(const void *st) { return mg_gardner_in_check(st); }

/* Planes (13 x 5 x 5): White P N B R Q K, Black p n b r q k, side to move (all 1 when Black is
 * to move).  Row 0 is rank 5, column 0 is file a. */
static void g_obs_shape(const void *st, int shape[3])
{
    (void)st;
    shape[0] = 13;
    shape[1] = 5;
    shape[2] = 5;
}

static void g_observation(const void *st, float *out)
{
    const mg_gardner_state *s = st;
    memset(out, 0, 13 * 25 * sizeof *out);
    for (int sq = 0; sq < MG_GARDNER_SQUARES; sq++) {
        int pc = s->board[sq];
        int i = (4 - sq / 5) * 5 + sq % 5;
        if (pc)
            out[(PC_COLOR(pc) * 6 + PC_TYPE(pc) - 1) * 25 + i] = 1.0f;
        out[12 * 25 + i] = (float)s->side;
    }
}

const mg_game mg_gardner = {
    .name = "gardner",
    .state_size = sizeof(mg_gardner_state),
    .undo_size = sizeof(mg_gardner_undo),
    .max_moves = MG_GARDNER_MAX_MOVES,
    .num_actions = MG_GARDNER_NUM_ACTIONS,
    .init = g_init,
    .from_text = g_from_text,
    .to_text = g_to_text,
    .legal_actions = g_legal_actions,
    .is_legal = g_is_legal,
    .make = g_make,
    .unmake = g_unmake,
    .to_move = g_to_move,
    .outcome = g_outcome,
    .hash = g_hash,
    .action_to_str = g_action_to_str,
    .action_from_str = g_action_from_str,
    .perft = g_perft,
    .rule_flags = MG_FLAG_GARDNER_BISHOP,
    .obs_shape = g_obs_shape,
    .observation = g_observation,
    .mav = &mg_gardner_mav,
    .san = &mg_gardner_san_ops,
};

const mg_san_ops mg_gardner_san_ops = {
    .game = &mg_gardner,
    .files = 5,
    .ranks = 5,
    .move_info = g_move_info,
    .in_check = g_san_in_check,
};
