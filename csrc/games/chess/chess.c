/* chess.c - chess and Chess960: move generation, make/unmake, perft, outcome (see chess.h); the game
 * interface over them (text, moves, observation, the descriptors) is chess_game.c. */
#include "chess.h"

#include <stdio.h>
#include <string.h>

#include "../../rng.h"
#include "bitboard.h"
#include "../../cancel.h"
#include "../../multiversion.h"

#define INLINE MG_BB_INLINE
#define NO_SQ MG_CH_NO_SQ
#define PAWN MG_CH_PAWN
#define KNIGHT MG_CH_KNIGHT
#define BISHOP MG_CH_BISHOP
#define ROOK MG_CH_ROOK
#define QUEEN MG_CH_QUEEN
#define KING MG_CH_KING

typedef mg_chess_state S;
typedef mg_chess_undo U;

mg_chess_zobrist mg_chess_zob;

/* Castling with the king on ksq and the rook on rsq of a home rank (where they stand while a right is held; the
 * squares fix the right: colour by rank, side by the rook's): `empty`, the squares both paths cross, which must be
 * empty (king and rook excluded); `kpath`, the squares from the king's (excluded, unless it is the destination)
 * to its destination (included), which must not be attacked with king and rook lifted.  Filled once by
 * mg_chess_init_tables, read-only afterwards. */
typedef struct castle_path {
    uint64_t empty;
    uint64_t kpath;
} castle_path;
static castle_path castle_paths[64][64]; /* [ksq][rsq]: indexed like mg_bb.between */

enum { UNDO_NORMAL = 0, UNDO_CASTLE = 1, UNDO_EP = 2 };

/* Static inline copies of the small helpers below that the hot paths (perft, make) use: an exported function of
 * the shared library may be interposed, so the compiler calls it instead of inlining it (and from the x86-64-v3
 * copy of perft it would run the baseline code). */
INLINE int castle_king_to(int right) { return (right >> 1) * 56 + ((right & 1) ? 2 : 6); }
INLINE int castle_rook_to(int right) { return (right >> 1) * 56 + ((right & 1) ? 3 : 5); }
int mg_chess_castle_king_to(int right) { return castle_king_to(right); }
int mg_chess_castle_rook_to(int right) { return castle_rook_to(right); }

void mg_chess_init_tables(void)
{
    mg_bb_init();
    uint64_t seed = 0x6d61766368657373ULL; /* fixed: hashes are reproducible across runs */
    memset(&mg_chess_zob, 0, sizeof mg_chess_zob);
    for (int c = 0; c < 2; c++)
        for (int t = PAWN; t <= KING; t++)
            for (int sq = 0; sq < 64; sq++)
                mg_chess_zob.piece[c << 3 | t][sq] = mg_splitmix64(&seed);
    for (int i = 0; i < 4; i++)
        for (int sq = 0; sq < 64; sq++)
            mg_chess_zob.castle[i][sq] = mg_splitmix64(&seed);
    for (int f = 0; f < 8; f++)
        mg_chess_zob.ep[f] = mg_splitmix64(&seed);
    mg_chess_zob.side = mg_splitmix64(&seed);
    for (int right = 0; right < 4; right++) {
        int home = (right >> 1) * 56;
        int kto = castle_king_to(right), rto = castle_rook_to(right);
        for (int kf = 0; kf < 8; kf++)
            for (int rf = 0; rf < 8; rf++) {
                int ksq = home + kf, rsq = home + rf;
                uint64_t kbit = mg_bb_sq(ksq), rbit = mg_bb_sq(rsq);
                uint64_t kpath = mg_bb.between[ksq][kto] | mg_bb_sq(kto);
                if (kf == rf || (rf < kf) != (right & 1))
                    continue;
                castle_paths[ksq][rsq].kpath = kpath;
                castle_paths[ksq][rsq].empty = (kpath | mg_bb.between[rsq][rto] | mg_bb_sq(rto)) & ~(kbit | rbit);
            }
    }
}

INLINE uint64_t rq_of(const S *s, int c) { return (s->bb[ROOK] | s->bb[QUEEN]) & s->occ[c]; }
INLINE uint64_t bq_of(const S *s, int c) { return (s->bb[BISHOP] | s->bb[QUEEN]) & s->occ[c]; }

/* Pieces of colour `c` attacking `sq` given occupancy `occ`.  `px`, here and below: slider lookups by PEXT
 * (1: x86-64-v3 code only) or by the magic tables (0; bitboard.h). */
INLINE uint64_t attackers_px(const S *s, int sq, int c, uint64_t occ, const int px)
{
    return ((mg_bb.pawn[c ^ 1][sq] & s->bb[PAWN]) | (mg_bb.knight[sq] & s->bb[KNIGHT]) |
            (mg_bb.king[sq] & s->bb[KING]) | (mg_bb_rook_px(sq, occ, px) & (s->bb[ROOK] | s->bb[QUEEN])) |
            (mg_bb_bishop_px(sq, occ, px) & (s->bb[BISHOP] | s->bb[QUEEN]))) &
           s->occ[c];
}

INLINE uint64_t attackers(const S *s, int sq, int c, uint64_t occ) { return attackers_px(s, sq, c, occ, 0); }

int mg_chess_attacked(const S *s, int sq, int color, uint64_t occ) { return attackers(s, sq, color, occ) != 0; }

INLINE int king_sq(const S *s, int c) { return mg_bb_lsb(s->bb[KING] & s->occ[c]); }

int mg_chess_in_check(const S *s)
{
    return attackers(s, king_sq(s, s->stm), s->stm ^ 1, s->bb[0]) != 0;
}

/* Non-zero if the pawn of colour `c` on `from` may capture en passant on `ep`
 * without leaving its king attacked (the pinned-pawn cases included). */
INLINE int ep_capture_legal_px(const S *s, int c, int from, int ep, const int px)
{
    int victim = ep ^ 8;
    int ksq = king_sq(s, c);
    int them = c ^ 1;
    uint64_t occ = (s->bb[0] ^ mg_bb_sq(from) ^ mg_bb_sq(victim)) | mg_bb_sq(ep);
    uint64_t att = ((mg_bb_rook_px(ksq, occ, px) & rq_of(s, them)) | (mg_bb_bishop_px(ksq, occ, px) & bq_of(s, them)) |
                    (mg_bb.knight[ksq] & s->bb[KNIGHT] & s->occ[them]) |
                    (mg_bb.pawn[c][ksq] & s->bb[PAWN] & s->occ[them] & ~mg_bb_sq(victim)));
    return att == 0;
}

INLINE int ep_capture_legal(const S *s, int c, int from, int ep) { return ep_capture_legal_px(s, c, from, ep, 0); }

INLINE void set_ep_px(S *s, int pushed, const int px)
{
    int ep = pushed ^ 8; /* the square the pawn passed over */
    int c = s->stm;
    s->ep = NO_SQ;
    uint64_t cands = mg_bb.pawn[c ^ 1][ep] & s->bb[PAWN] & s->occ[c];
    while (cands) {
        int from = mg_bb_pop(&cands);
        if (ep_capture_legal_px(s, c, from, ep, px)) {
            s->ep = (uint8_t)ep;
            return;
        }
    }
}

void mg_chess_set_ep(S *s, int pushed) { set_ep_px(s, pushed, 0); }

/* The squares the pawns `p` of colour `c` attack. */
INLINE uint64_t pawn_attacks(uint64_t p, const int c)
{
    return c ? (((p & ~MG_BB_FILE_A) >> 9) | ((p & ~MG_BB_FILE_H) >> 7))
             : (((p & ~MG_BB_FILE_A) << 7) | ((p & ~MG_BB_FILE_H) << 9));
}

/* The squares the pieces of colour `c` attack with occupancy `occ` (perft's leaf count, when castling is possible:
 * one lookup per piece answers every king step and both castling paths). */
INLINE uint64_t attacked_by(const S *s, const int c, uint64_t occ, const int px)
{
    const uint64_t mine = s->occ[c];
    uint64_t a = pawn_attacks(s->bb[PAWN] & mine, c);
    a |= mg_bb.king[mg_bb_lsb(s->bb[KING] & mine)];
    uint64_t b = s->bb[KNIGHT] & mine;
    while (b)
        a |= mg_bb.knight[mg_bb_pop(&b)];
    b = (s->bb[BISHOP] | s->bb[QUEEN]) & mine;
    while (b)
        a |= mg_bb_bishop_px(mg_bb_pop(&b), occ, px);
    b = (s->bb[ROOK] | s->bb[QUEEN]) & mine;
    while (b)
        a |= mg_bb_rook_px(mg_bb_pop(&b), occ, px);
    return a;
}

/* ---------------------------------------------------------------------------------
 * Legal move generation.  With out == NULL (a compile-time constant after inlining)
 * the generator only counts, with popcounts instead of move lists (perft leaves).
 */

#define EMIT(m)                                  \
    do {                                         \
        if (out)                                 \
            out[n] = (int32_t)(m);               \
        n++;                                     \
    } while (0)

INLINE int emit_all(int32_t *out, int n, uint64_t targets, int from)
{
    if (!out)
        return n + mg_bb_count(targets);
    while (targets)
        out[n++] = (int32_t)(from | mg_bb_pop(&targets) << 6);
    return n;
}

/* Pawn moves to `targets` from `to - delta`; promotions when `promo` is set. */
INLINE int emit_pawns(int32_t *out, int n, uint64_t targets, int delta, int promo)
{
    if (!out)
        return n + mg_bb_count(targets) * (promo ? 4 : 1);
    while (targets) {
        int to = mg_bb_pop(&targets);
        int32_t m = (int32_t)((to - delta) | to << 6);
        if (promo) {
            out[n++] = m | 4 << 12;
            out[n++] = m | 1 << 12;
            out[n++] = m | 3 << 12;
            out[n++] = m | 2 << 12;
        } else {
            out[n++] = m;
        }
    }
    return n;
}

INLINE int generate(const S *s, int32_t *out, const int us, const int px)
{
    const int them = us ^ 1;
    const uint64_t occ = s->bb[0], own = s->occ[us], opp = s->occ[them];
    const uint64_t kbit = s->bb[KING] & own;
    const int ksq = mg_bb_lsb(kbit);
    const uint64_t opp_rq = rq_of(s, them), opp_bq = bq_of(s, them);
    /* Enemy sliders on the king's lines (snipers): with nothing between, a checker; with one piece of ours between,
     * that piece is pinned.  No slider lookup: most positions have few snipers, often none. */
    uint64_t checkers = ((mg_bb.pawn[us][ksq] & s->bb[PAWN]) | (mg_bb.knight[ksq] & s->bb[KNIGHT])) & opp;
    uint64_t pinned = 0;
    {
        uint64_t snipers = (mg_bb.rook_empty[ksq] & opp_rq) | (mg_bb.bishop_empty[ksq] & opp_bq);
        while (snipers) {
            int sq = mg_bb_pop(&snipers);
            uint64_t b = mg_bb.between[ksq][sq] & occ;
            if (!b)
                checkers |= mg_bb_sq(sq);
            else if (!mg_bb_many(b))
                pinned |= b & own;
        }
    }
    int n = 0;

    /* King steps: the target must not be attacked once the king has left ksq (ksafe: those that are not). */
    uint64_t ksafe = 0;
    const unsigned rights = checkers ? 0 : (s->castling >> (2 * us)) & 3;
    int castled = 0; /* castling counted already */
    {
        uint64_t t = mg_bb.king[ksq] & ~own;
        const uint64_t occ_nk = occ ^ kbit;
        if (!out && rights && !s->chess960) {
            /* Counting, standard chess, a right held: when a castling path is empty, the king steps and the castling
             * squares are tested against the opponent's attacks at once (king lifted: it covers the squares behind
             * the king on a checking line; the corner rook's lifting opens no line to f1, g1, c1 or d1), which the
             * Kiwipete count measures 4-5 % faster than a test per square; otherwise no castling is possible. */
            const int base = us ? 56 : 0;
            const int ck = (rights & 1) && !(occ & (0x60ULL << base));
            const int cq = (rights & 2) && !(occ & (0x0EULL << base));
            castled = 1;
            if (ck | cq) {
                const uint64_t ban = attacked_by(s, them, occ_nk, px);
                n += mg_bb_count(t & ~ban);
                n += ck && !(ban & (0x60ULL << base));
                n += cq && !(ban & (0x0CULL << base));
                t = 0;
            }
        }
        while (t) {
            int to = mg_bb_pop(&t);
            if (!attackers_px(s, to, them, occ_nk, px)) {
                ksafe |= mg_bb_sq(to);
                EMIT(ksq | to << 6);
            }
        }
    }
    if (mg_bb_many(checkers))
        return n;

    const uint64_t target = checkers ? (mg_bb.between[ksq][mg_bb_lsb(checkers)] | checkers) : ~own;

    /* Pawns. */
    {
        const uint64_t pawns = s->bb[PAWN] & own;
        const uint64_t free = pawns & ~pinned;
        const uint64_t empty = ~occ;
        const uint64_t last = us ? MG_BB_RANK_1 : MG_BB_RANK_8;
        const uint64_t third = us ? (MG_BB_RANK_1 << 40) : (MG_BB_RANK_1 << 16);
        const int up = us ? -8 : 8;
        uint64_t push1 = mg_bb_forward(free, us) & empty;
        uint64_t push2 = mg_bb_forward(push1 & third, us) & empty & target;
        push1 &= target;
        uint64_t capw, cape; /* towards the a-file / towards the h-file */
        if (us == 0) {
            capw = ((free & ~MG_BB_FILE_A) << 7) & opp & target;
            cape = ((free & ~MG_BB_FILE_H) << 9) & opp & target;
        } else {
            capw = ((free & ~MG_BB_FILE_A) >> 9) & opp & target;
            cape = ((free & ~MG_BB_FILE_H) >> 7) & opp & target;
        }
        const int dw = us ? -9 : 7, de = us ? -7 : 9;
        n = emit_pawns(out, n, push1 & ~last, up, 0);
        n = emit_pawns(out, n, push2, 2 * up, 0);
        n = emit_pawns(out, n, capw & ~last, dw, 0);
        n = emit_pawns(out, n, cape & ~last, de, 0);
        if ((push1 | capw | cape) & last) {
            n = emit_pawns(out, n, push1 & last, up, 1);
            n = emit_pawns(out, n, capw & last, dw, 1);
            n = emit_pawns(out, n, cape & last, de, 1);
        }
        /* Pinned pawns move only along their pin line (never when in check). */
        uint64_t pp = checkers ? 0 : pawns & pinned;
        while (pp) {
            int from = mg_bb_pop(&pp);
            uint64_t fb = mg_bb_sq(from);
            uint64_t one = mg_bb_forward(fb, us) & empty;
            uint64_t t = one | (mg_bb_forward(one & third, us) & empty) | (mg_bb.pawn[us][from] & opp);
            t &= mg_bb.line[ksq][from];
            if (t & last) {
                while (t) {
                    int to = mg_bb_pop(&t);
                    n = emit_pawns(out, n, mg_bb_sq(to), to - from, 1);
                }
            } else {
                n = emit_all(out, n, t, from);
            }
        }
        if (s->ep != NO_SQ) {
            uint64_t cands = mg_bb.pawn[them][s->ep] & pawns;
            while (cands) {
                int from = mg_bb_pop(&cands);
                if (ep_capture_legal_px(s, us, from, s->ep, px))
                    EMIT(from | s->ep << 6);
            }
        }
    }

    /* Knights (a pinned knight never moves). */
    {
        uint64_t b = s->bb[KNIGHT] & own & ~pinned;
        while (b) {
            int from = mg_bb_pop(&b);
            n = emit_all(out, n, mg_bb.knight[from] & target, from);
        }
    }
    /* Sliders. */
    {
        uint64_t b = (s->bb[BISHOP] | s->bb[QUEEN]) & own & ~pinned;
        while (b) {
            int from = mg_bb_pop(&b);
            n = emit_all(out, n, mg_bb_bishop_px(from, occ, px) & target, from);
        }
        b = (s->bb[ROOK] | s->bb[QUEEN]) & own & ~pinned;
        while (b) {
            int from = mg_bb_pop(&b);
            n = emit_all(out, n, mg_bb_rook_px(from, occ, px) & target, from);
        }
        if (pinned && !checkers) {
            b = (s->bb[BISHOP] | s->bb[QUEEN]) & own & pinned;
            while (b) {
                int from = mg_bb_pop(&b);
                n = emit_all(out, n, mg_bb_bishop_px(from, occ, px) & target & mg_bb.line[ksq][from], from);
            }
            b = (s->bb[ROOK] | s->bb[QUEEN]) & own & pinned;
            while (b) {
                int from = mg_bb_pop(&b);
                n = emit_all(out, n, mg_bb_rook_px(from, occ, px) & target & mg_bb.line[ksq][from], from);
            }
        }
    }

    /* Castling: king takes own rook; both paths empty, the king's path (from its square to its destination) not
     * attacked with king and rook lifted (castle_legal below is the same test for one right; written out here,
     * which perft measures faster).  Move lists and Chess960 only, when counting standard chess the king steps
     * above counted castling too. */
    if (rights && !castled) {
        if (!s->chess960) {
            /* Standard chess: a right means king on e1/e8 and rook in its corner (the FEN reader checks it, moves
             * drop it), so every square is a constant.  The squares next to the king (f1, d1) were tested by the
             * king steps above (lifting a corner rook opens no line to them): only g1 / c1 are left. */
            const int base = us ? 56 : 0;
            if ((rights & 1) && !(occ & (0x60ULL << base)) && (ksafe & (0x20ULL << base)) &&
                !attackers_px(s, base + 6, them, occ ^ kbit ^ (0x80ULL << base), px))
                EMIT(ksq | (base + 7) << 6);
            if ((rights & 2) && !(occ & (0x0EULL << base)) && (ksafe & (0x08ULL << base)) &&
                !attackers_px(s, base + 2, them, occ ^ kbit ^ (0x01ULL << base), px))
                EMIT(ksq | base << 6);
        } else {
            for (int side = 0; side < 2; side++) {
                if (!(rights & (1u << side)))
                    continue;
                int rsq = s->castle_rook[2 * us + side];
                const castle_path *cp = &castle_paths[ksq][rsq];
                if (cp->empty & occ)
                    continue;
                uint64_t kpath = cp->kpath;
                uint64_t occ2 = occ ^ kbit ^ mg_bb_sq(rsq);
                int ok = 1;
                while (kpath && ok) {
                    int sq = mg_bb_pop(&kpath);
                    ok = !attackers_px(s, sq, them, occ2, px);
                }
                if (ok)
                    EMIT(ksq | rsq << 6);
            }
        }
    }
    return n;
}

static int gen_white(const S *s, int32_t *out) { return generate(s, out, 0, 0); }
static int gen_black(const S *s, int32_t *out) { return generate(s, out, 1, 0); }
static int count_white(const S *s) { return generate(s, NULL, 0, 0); }
static int count_black(const S *s) { return generate(s, NULL, 1, 0); }

INLINE int legal_actions(const S *s, int32_t *out) { return s->stm ? gen_black(s, out) : gen_white(s, out); }
INLINE int count_legal(const S *s) { return s->stm ? count_black(s) : count_white(s); }
int mg_chess_legal_actions(const S *s, int32_t *out) { return legal_actions(s, out); }
int mg_chess_count_legal(const S *s) { return count_legal(s); }

/* ---------------------------------------------------------------------------------
 * Legality of one action, without generating the others: the action is decoded, checked to be a move
 * of the piece on its from-square (castling as king takes own rook of a held right, pawn pushes,
 * double pushes, captures, en passant and promotions as the encoding has them), and then made on the
 * bitboards: legal if no enemy piece attacks the king afterwards.  The same answer as membership in
 * mg_chess_legal_actions for every int32 value (csrc/tests/test_chess_is_legal.c checks the whole
 * action space on many positions).
 */

/* Castling right `right` (held, king on ksq = kbit, not in check; `them` the opponent, occ all pieces), king takes
 * own rook: generate's test for one right: both paths empty, the king's path (from its square to its destination)
 * not attacked with king and rook lifted. */
INLINE int castle_legal(const S *s, int them, int right, int ksq, uint64_t kbit, uint64_t occ)
{
    int rsq = s->castle_rook[right];
    int kto = castle_king_to(right), rto = castle_rook_to(right);
    uint64_t rbit = mg_bb_sq(rsq);
    uint64_t kpath = mg_bb.between[ksq][kto] | mg_bb_sq(kto);
    uint64_t path = (kpath | mg_bb.between[rsq][rto] | mg_bb_sq(rto)) & ~(kbit | rbit);
    if (path & occ)
        return 0;
    uint64_t occ2 = occ ^ kbit ^ rbit;
    int ok = 1;
    while (kpath && ok) {
        int sq = mg_bb_pop(&kpath);
        ok = !attackers(s, sq, them, occ2);
    }
    return ok;
}

/* Non-zero if the move of the (non-king) piece on `from` to `to` (a capture if `to` holds an enemy
 * piece; no en passant) leaves the king of `us` unattacked. */
INLINE int king_safe_after(const S *s, int us, int from, int to)
{
    const uint64_t tbit = mg_bb_sq(to);
    const uint64_t occ2 = (s->bb[0] ^ mg_bb_sq(from)) | tbit;
    return !(attackers(s, king_sq(s, us), us ^ 1, occ2) & ~tbit);
}

int mg_chess_is_legal(const S *s, int32_t a)
{
    if (a < 0 || a >= MG_CHESS_NUM_ACTIONS)
        return 0;
    const int from = a & 63, to = (a >> 6) & 63, promo = a >> 12;
    const int us = s->stm, them = us ^ 1;
    const int pc = s->board[from];
    if (!pc || (pc >> 3) != us)
        return 0;
    const uint64_t occ = s->bb[0], own = s->occ[us], tbit = mg_bb_sq(to);
    switch (pc & 7) {
    case KING:
        if (promo)
            return 0;
        if (own & tbit) {
            /* Castling: `to` holds the rook of a held right (not in check). */
            for (int side = 0; side < 2; side++) {
                int right = 2 * us + side;
                if ((s->castling & (1 << right)) && s->castle_rook[right] == to)
                    return !attackers(s, from, them, occ) && castle_legal(s, them, right, from, mg_bb_sq(from), occ);
            }
            return 0;
        }
        return (mg_bb.king[from] & tbit) && !attackers(s, to, them, occ ^ mg_bb_sq(from));
    case PAWN: {
        const uint64_t last = us ? MG_BB_RANK_1 : MG_BB_RANK_8;
        const uint64_t third = us ? (MG_BB_RANK_1 << 40) : (MG_BB_RANK_1 << 16);
        const uint64_t one = mg_bb_forward(mg_bb_sq(from), us) & ~occ;
        if (!(tbit & last) != !promo)
            return 0; /* a promotion piece exactly on the last rank */
        if (tbit & one) {
            /* a push */
        } else if (tbit & mg_bb_forward(one & third, us) & ~occ) {
            /* a double push */
        } else if (mg_bb.pawn[us][from] & tbit) {
            if (to == s->ep)
                return ep_capture_legal(s, us, from, to);
            if (!(s->occ[them] & tbit))
                return 0;
        } else {
            return 0;
        }
        return king_safe_after(s, us, from, to);
    }
    case KNIGHT:
        if (promo || !(mg_bb.knight[from] & tbit & ~own))
            return 0;
        return king_safe_after(s, us, from, to);
    case BISHOP:
        if (promo || !(mg_bb_bishop(from, occ) & tbit & ~own))
            return 0;
        return king_safe_after(s, us, from, to);
    case ROOK:
        if (promo || !(mg_bb_rook(from, occ) & tbit & ~own))
            return 0;
        return king_safe_after(s, us, from, to);
    case QUEEN:
        if (promo || !((mg_bb_rook(from, occ) | mg_bb_bishop(from, occ)) & tbit & ~own))
            return 0;
        return king_safe_after(s, us, from, to);
    default:
        return 0;
    }
}

/* ---------------------------------------------------------------------------------
 * Make / unmake.
 */

INLINE uint64_t castle_hash(const S *s, unsigned rights)
{
    uint64_t h = 0;
    for (int i = 0; i < 4; i++)
        if (rights & (1u << i))
            h ^= mg_chess_zob.castle[i][s->castle_rook[i]];
    return h;
}

uint64_t mg_chess_compute_hash(const S *s)
{
    uint64_t h = 0;
    for (int sq = 0; sq < 64; sq++)
        if (s->board[sq])
            h ^= mg_chess_zob.piece[s->board[sq]][sq];
    if (s->stm)
        h ^= mg_chess_zob.side;
    h ^= castle_hash(s, s->castling);
    if (s->ep != NO_SQ)
        h ^= mg_chess_zob.ep[s->ep & 7];
    return h;
}

INLINE void put(S *s, int pc, int sq)
{
    uint64_t b = mg_bb_sq(sq);
    s->board[sq] = (uint8_t)pc;
    s->bb[0] |= b;
    s->bb[pc & 7] |= b;
    s->occ[pc >> 3] |= b;
}

INLINE void lift(S *s, int pc, int sq)
{
    uint64_t b = ~mg_bb_sq(sq);
    s->board[sq] = 0;
    s->bb[0] &= b;
    s->bb[pc & 7] &= b;
    s->occ[pc >> 3] &= b;
}

INLINE void shift_piece(S *s, int pc, int from, int to)
{
    uint64_t b = mg_bb_sq(from) | mg_bb_sq(to);
    s->board[from] = 0;
    s->board[to] = (uint8_t)pc;
    s->bb[0] ^= b;
    s->bb[pc & 7] ^= b;
    s->occ[pc >> 3] ^= b;
}

/* Make and unmake.  `full` (a compile-time constant after inlining) keeps the whole state: the Zobrist hash, the
 * clocks and the repetition history.  Perft calls them with full = 0: the placement, side, castling rights and
 * en passant square only (what move generation reads), and its unmake restores what its make changed. */
INLINE void make_impl(S *s, int32_t a, U *u, const int full, const int px)
{
    const int from = a & 63, to = (a >> 6) & 63, promo = a >> 12;
    const int us = s->stm;
    const int pc = s->board[from];
    const int cap = s->board[to];
    uint64_t h = s->hash;
    int irreversible = s->ep != NO_SQ;
    int zeroing = 0;

    if (full) {
        u->hash = h;
        u->halfmove = s->halfmove;
        u->rep_len = s->rep_len;
    }
    u->castling = s->castling;
    u->ep = s->ep;
    u->captured = (uint8_t)cap;
    u->kind = UNDO_NORMAL;

    if (s->ep != NO_SQ) {
        if (full)
            h ^= mg_chess_zob.ep[s->ep & 7];
        s->ep = NO_SQ;
    }
    if (cap && (cap >> 3) == us) {
        /* Castling: the king "takes" its own rook. */
        int right = 2 * us + (to < from);
        int kto = castle_king_to(right), rto = castle_rook_to(right);
        lift(s, pc, from);
        lift(s, cap, to);
        put(s, pc, kto);
        put(s, cap, rto);
        if (full)
            h ^= mg_chess_zob.piece[pc][from] ^ mg_chess_zob.piece[pc][kto] ^ mg_chess_zob.piece[cap][to] ^
                 mg_chess_zob.piece[cap][rto];
        u->kind = UNDO_CASTLE;
        u->captured = 0;
    } else {
        if (cap) {
            lift(s, cap, to);
            if (full)
                h ^= mg_chess_zob.piece[cap][to];
            zeroing = 1;
        }
        shift_piece(s, pc, from, to);
        if (full)
            h ^= mg_chess_zob.piece[pc][from] ^ mg_chess_zob.piece[pc][to];
        if ((pc & 7) == PAWN) {
            zeroing = 1;
            if (to == u->ep) {
                int victim = to ^ 8;
                int vp = s->board[victim];
                lift(s, vp, victim);
                if (full)
                    h ^= mg_chess_zob.piece[vp][victim];
                u->captured = (uint8_t)vp;
                u->kind = UNDO_EP;
            } else if (promo) {
                static const int PROMO_TYPE[5] = {0, KNIGHT, BISHOP, ROOK, QUEEN};
                int np = us << 3 | PROMO_TYPE[promo];
                lift(s, pc, to);
                put(s, np, to);
                if (full)
                    h ^= mg_chess_zob.piece[pc][to] ^ mg_chess_zob.piece[np][to];
            }
        }
    }
    if (s->castling) {
        unsigned nc = s->castling & ~(s->cmask[from] | s->cmask[to]);
        if (nc != s->castling) {
            if (full)
                h ^= castle_hash(s, s->castling ^ nc);
            s->castling = (uint8_t)nc;
            irreversible = 1;
        }
    }
    s->stm = (uint8_t)(us ^ 1);
    if ((pc & 7) == PAWN && (from ^ to) == 16) {
        set_ep_px(s, to, px);
        if (full && s->ep != NO_SQ)
            h ^= mg_chess_zob.ep[s->ep & 7];
    }
    if (!full)
        return;
    h ^= mg_chess_zob.side;
    s->hash = h;
    s->halfmove = zeroing ? 0 : s->halfmove + 1;
    s->fullmove += (uint32_t)us;
    s->ply++;
    uint64_t *slot = &s->hist[s->ply & (MG_CHESS_HIST - 1)];
    u->hist_slot = *slot;
    *slot = h;
    s->rep_len = (irreversible || zeroing) ? 0 : s->rep_len + 1;
}

INLINE void unmake_impl(S *s, int32_t a, const U *u, const int full)
{
    const int from = a & 63, to = (a >> 6) & 63, promo = a >> 12;
    const int us = s->stm ^ 1;
    if (full) {
        s->hist[s->ply & (MG_CHESS_HIST - 1)] = u->hist_slot;
        s->ply--;
        s->fullmove -= (uint32_t)us;
        s->hash = u->hash;
        s->halfmove = u->halfmove;
        s->rep_len = u->rep_len;
    }
    s->stm = (uint8_t)us;
    s->castling = u->castling;
    s->ep = u->ep;
    if (u->kind == UNDO_CASTLE) {
        int right = 2 * us + (to < from);
        int kto = castle_king_to(right), rto = castle_rook_to(right);
        int k = us << 3 | KING, r = us << 3 | ROOK;
        lift(s, k, kto);
        lift(s, r, rto);
        put(s, k, from);
        put(s, r, to);
        return;
    }
    int pc = s->board[to];
    if (promo) {
        lift(s, pc, to);
        pc = us << 3 | PAWN;
        put(s, pc, from);
    } else {
        shift_piece(s, pc, to, from);
    }
    if (u->kind == UNDO_EP)
        put(s, u->captured, to ^ 8);
    else if (u->captured)
        put(s, u->captured, to);
}

/* Static, so that the draw claims inline them (an exported function of the shared library could be interposed,
 * so the compiler would call it); mg_chess_make below is the descriptors'. */
static void chess_make(void *st, int32_t a, void *undo) { make_impl(st, a, undo, 1, 0); }
static void chess_unmake(void *st, int32_t a, const void *undo) { unmake_impl(st, a, undo, 1); }

void mg_chess_make(void *st, int32_t a, void *undo) { chess_make(st, a, undo); }
void mg_chess_unmake(void *st, int32_t a, const void *undo) { chess_unmake(st, a, undo); }

/* ---------------------------------------------------------------------------------
 * Perft with bulk counting at the last ply.
 */

/* Perft's last make, before the leaves are counted: the child `c` of `s` after action `a` of side `us` (a constant),
 * with only what move generation reads (bitboards, side, castling rights and rooks, en passant square, variant);
 * the side, the castling rooks and the variant are set once by perft_bulk, the rest of `c`, the board array
 * included, is left unset.  Copy-make: nothing to undo.  `rare`: the pawns of `us` whose moves may be special
 * (perft_bulk). */
INLINE void make_child(const S *s, S *c, int32_t a, const int us, const uint64_t rare, const int px)
{
    static const int PROMO_TYPE[5] = {0, KNIGHT, BISHOP, ROOK, QUEEN};
    const int from = a & 63, to = (a >> 6) & 63;
    const int them = us ^ 1;
    const int pc = s->board[from];
    const uint64_t fb = mg_bb_sq(from), tb = mg_bb_sq(to);
    c->ep = NO_SQ;
    c->castling = (uint8_t)(s->castling & ~(s->cmask[from] | s->cmask[to]));
    if (__builtin_expect((tb & s->occ[us]) != 0, 0)) {
        memcpy(c->bb, s->bb, sizeof c->bb);
        memcpy(c->occ, s->occ, sizeof c->occ);
        /* Castling (the only move to a square of our own: king takes own rook); the xors hold when a destination is
         * the other piece's square. */
        int right = 2 * us + (to < from);
        uint64_t km = fb ^ mg_bb_sq(castle_king_to(right)), rm = tb ^ mg_bb_sq(castle_rook_to(right));
        c->bb[KING] ^= km;
        c->bb[ROOK] ^= rm;
        c->occ[us] ^= km ^ rm;
        c->bb[0] ^= km ^ rm;
        return;
    }
    /* Few branches (the kind of a child is hard to predict): a capture is taken by clearing the target square from
     * every type (it held at most one piece; the mover's type then gets it back), the special pawn moves (en passant,
     * promotion, a double push past an enemy pawn's attack) come only from the `rare` squares.  Each type's bitboard
     * is written whole, at a fixed address: an xor into bb[pc & 7] (an index loaded from the board) is a store whose
     * address is known late, and the count's loads of the child that follow it waited for it or were replayed
     * (11-12 % of perft's time). */
    const uint64_t cm = tb & s->occ[them], mv = fb | tb;
    const int pt = pc & 7;
    for (int t = 1; t < 7; t++)
        c->bb[t] = (s->bb[t] & ~tb) ^ (t == pt ? mv : 0);
    c->occ[them] = s->occ[them] ^ cm;
    c->occ[us] = s->occ[us] ^ mv;
    c->bb[0] = (s->bb[0] ^ fb) | tb;
    if (__builtin_expect((fb & rare) != 0, 0)) {
        const int promo = a >> 12;
        if (to == s->ep) {
            uint64_t vb = mg_bb_sq(to ^ 8);
            c->bb[PAWN] ^= vb;
            c->occ[them] ^= vb;
            c->bb[0] ^= vb;
        } else if (promo) {
            c->bb[PAWN] ^= tb;
            c->bb[PROMO_TYPE[promo]] ^= tb;
        } else if ((from ^ to) == 16) {
            set_ep_px(c, to, px);
        }
    }
}

/* The last two plies for side `us` (a constant): its moves made by copy-make, the replies counted by popcounts. */
INLINE uint64_t perft_bulk(const S *s, const int us, const int px)
{
    int32_t moves[MG_CHESS_MAX_MOVES];
    const int them = us ^ 1;
    const int n = generate(s, moves, us, px);
    /* The pawns whose moves may be special: on the last rank but one (promotions), next to the en passant square
     * (the capture), on the home rank with the square they would pass attacked by an enemy pawn (the double push may
     * give the opponent an en passant capture). */
    const uint64_t own_p = s->bb[PAWN] & s->occ[us], opp_p = s->bb[PAWN] & s->occ[them];
    const uint64_t opp_patt = pawn_attacks(opp_p, them);
    const uint64_t home = us ? MG_BB_RANK_1 << 48 : MG_BB_RANK_1 << 8;
    const uint64_t seventh = us ? MG_BB_RANK_1 << 8 : MG_BB_RANK_1 << 48;
    uint64_t rare = (own_p & seventh) | (own_p & home & mg_bb_forward(opp_patt, them));
    if (s->ep != NO_SQ)
        rare |= mg_bb.pawn[them][s->ep] & own_p;
    uint64_t total = 0;
    S c;
    memcpy(c.castle_rook, s->castle_rook, sizeof c.castle_rook);
    c.chess960 = s->chess960;
    c.stm = (uint8_t)them;
    for (int i = 0; i < n; i++) {
        make_child(s, &c, moves[i], us, rare, px);
        total += (uint64_t)generate(&c, NULL, them, px);
    }
    return total;
}

/* The recursion, written once (px: slider lookups by PEXT or by the magic tables) and compiled as perft_rec (MG_HOT:
 * a baseline and an x86-64-v3 copy picked at load time, both with the magic tables) and, where the x86-64-v3 copies
 * exist, as perft_rec_pext_v3 (x86-64-v3 with PEXT lookups), picked at run time on CPUs with a fast PEXT. */
#define CHESS_PERFT_REC(NAME, PX)                                                                                     \
    static uint64_t NAME(S *s, int depth, mg_cancel *cancel)                                                         \
    {                                                                                                                 \
        int32_t moves[MG_CHESS_MAX_MOVES];                                                                            \
        U u;                                                                                                          \
        if (depth == 2)                                                                                               \
            return s->stm ? perft_bulk(s, 1, PX) : perft_bulk(s, 0, PX);                                              \
        int n = s->stm ? generate(s, moves, 1, PX) : generate(s, moves, 0, PX);                                       \
        uint64_t total = 0;                                                                                           \
        /* Ticked above the bulk-counted plies only: a tick per ~1000 leaves costs nothing. */                        \
        if (mg_cancel_tick(cancel))                                                                                   \
            return 0;                                                                                                 \
        for (int i = 0; i < n; i++) {                                                                                 \
            make_impl(s, moves[i], &u, 0, PX);                                                                        \
            total += NAME(s, depth - 1, cancel);                                                                      \
            unmake_impl(s, moves[i], &u, 0);                                                                          \
        }                                                                                                             \
        return total;                                                                                                 \
    }
MG_HOT CHESS_PERFT_REC(perft_rec, 0)
#if MG_MULTIVERSION && MG_BB_HAVE_PEXT
MG_TARGET_V3 __attribute__((flatten)) CHESS_PERFT_REC(perft_rec_pext_v3, 1)

/* PEXT is one fast instruction on Intel since Haswell and on AMD since Zen 3; AMD's Zen 1 and Zen 2 microcode it
 * (tens of cycles, depending on the mask), so there the magic tables stay faster. */
static int fast_pext(void)
{
    return mg_cpu_has_v3() && !__builtin_cpu_is("znver1") && !__builtin_cpu_is("znver2");
}
#elif MG_BB_HAVE_PEXT && defined(__BMI2__) && !defined(MG_NO_MULTIVERSION)
/* Built for a BMI2 CPU (MAVGAME_NATIVE=1): the one copy uses PEXT. */
CHESS_PERFT_REC(perft_rec_pext_v3, 1)
static int fast_pext(void) { return !__builtin_cpu_is("znver1") && !__builtin_cpu_is("znver2"); }
#else
#define perft_rec_pext_v3 perft_rec
static int fast_pext(void) { return 0; }
#endif

uint64_t mg_chess_perft(void *st, int depth, mg_cancel *cancel)
{
    S *s = st;
    if (depth <= 0)
        return 1;
    if (depth == 1)
        return (uint64_t)count_legal(s);
    return fast_pext() ? perft_rec_pext_v3(s, depth, cancel) : perft_rec(s, depth, cancel);
}

/* ---------------------------------------------------------------------------------
 * Outcome.
 */

int mg_chess_insufficient_material(const S *s)
{
    const uint64_t dark = 0xAA55AA55AA55AA55ULL;
    for (int c = 0; c < 2; c++) {
        uint64_t mine = s->occ[c];
        if (mine & (s->bb[PAWN] | s->bb[ROOK] | s->bb[QUEEN]))
            return 0;
        if (mine & s->bb[KNIGHT]) {
            if (!(mg_bb_count(mine) <= 2 && !(s->occ[c ^ 1] & ~s->bb[KING] & ~s->bb[QUEEN])))
                return 0;
        } else if (mine & s->bb[BISHOP]) {
            int same_color = !(s->bb[BISHOP] & dark) || !(s->bb[BISHOP] & ~dark);
            if (!(same_color && !s->bb[PAWN] && !s->bb[KNIGHT]))
                return 0;
        }
    }
    return 1;
}

int mg_chess_repetitions(const S *s)
{
    int count = 1;
    for (uint32_t k = 2; k <= s->rep_len && k < MG_CHESS_HIST; k += 2)
        if (s->hist[(s->ply - k) & (MG_CHESS_HIST - 1)] == s->hash)
            count++;
    return count;
}

/* Occurrences of hash h among the window of `s` (the current position and the positions since the
 * last irreversible move): python-chess's transposition counter of can_claim_threefold_repetition. */
static int window_count(const S *s, uint64_t h)
{
    int count = 0;
    for (uint32_t k = 0; k <= s->rep_len && k < MG_CHESS_HIST; k++)
        count += s->hist[(s->ply - k) & (MG_CHESS_HIST - 1)] == h;
    return count;
}

void mg_chess_draw_claims(const S *s, int *fifty, int *threefold)
{
    int32_t moves[MG_CHESS_MAX_MOVES];
    int n = legal_actions(s, moves);
    int f = n > 0 && s->halfmove >= 100;
    int t = window_count(s, s->hash) >= 3;
    int look_fifty = fifty && !f && s->halfmove >= 99, look_three = threefold && !t;
    if (look_fifty || look_three) {
        /* One legal move ahead, on a copy: the fifty-move clock reaching 100 by a move that is no
         * capture or pawn move (to a position with legal moves), or a move to a position that occurred
         * twice already (the position after an irreversible move cannot have: its material, pawns or
         * castling rights differ from all of the window's). */
        S c = *s;
        U u;
        for (int i = 0; i < n && (look_fifty || look_three); i++) {
            chess_make(&c, moves[i], &u);
            if (look_fifty && c.halfmove >= 100 && count_legal(&c) > 0)
                f = 1, look_fifty = 0;
            if (look_three && window_count(s, c.hash) >= 2)
                t = 1, look_three = 0;
            chess_unmake(&c, moves[i], &u);
        }
    }
    if (fifty)
        *fifty = f;
    if (threefold)
        *threefold = t;
}

/* The outcome of `s`, which has n legal moves (see mg_chess_outcome). */
INLINE int outcome_with(const S *s, int n, int *reason)
{
    int r = MG_ONGOING, why = MG_TERM_NONE;
    if (n == 0 && mg_chess_in_check(s)) {
        r = s->stm ? MG_P0_WINS : MG_P1_WINS;
        why = MG_TERM_CHECKMATE;
    } else if (mg_chess_insufficient_material(s)) {
        r = MG_DRAW;
        why = MG_TERM_INSUFFICIENT_MATERIAL;
    } else if (n == 0) {
        r = MG_DRAW;
        why = MG_TERM_STALEMATE;
    } else if (s->halfmove >= 100 || s->rep_len >= 4) {
        /* The automatic draws first (python-chess's order), then those a player may claim. */
        int reps = s->rep_len >= 4 ? mg_chess_repetitions(s) : 1;
        r = MG_DRAW;
        why = s->halfmove >= 150 ? MG_TERM_SEVENTYFIVE_MOVES
              : reps >= 5        ? MG_TERM_FIVEFOLD_REPETITION
              : s->halfmove >= 100 ? MG_TERM_FIFTY_MOVES
              : reps >= 3          ? MG_TERM_THREEFOLD_REPETITION
                                   : MG_TERM_NONE;
        if (why == MG_TERM_NONE)
            r = MG_ONGOING;
    }
    if (reason)
        *reason = why;
    return r;
}

int mg_chess_outcome(const void *st, int *reason) { return outcome_with(st, count_legal(st), reason); }

int mg_chess_legal_outcome(const void *st, int32_t *out, int *result, int *reason)
{
    int n = legal_actions(st, out);
    *result = outcome_with(st, n, reason);
    return n;
}
