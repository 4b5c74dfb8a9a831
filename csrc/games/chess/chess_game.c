/* chess_game.c - chess and Chess960 on the game interface (see chess.h): the two descriptors and their
 * SAN hooks over the rules (chess.c) and the FEN code (chess_fen.c): text, moves as UCI strings,
 * legality, observation.  Above both; neither calls it. */
#include "chess.h"

#include <stdio.h>
#include <string.h>

#include "bitboard.h"

#define INLINE MG_BB_INLINE
#define PAWN MG_CH_PAWN
#define KING MG_CH_KING
#define ROOK MG_CH_ROOK

typedef mg_chess_state S;
typedef mg_chess_undo U;

/* ---------------------------------------------------------------------------------
 * Interface glue: text, moves.
 */

static const char *const START_FEN = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

static int chess_init(void *st, const mg_config *cfg, char *err, size_t errlen)
{
    int c960 = cfg && (cfg->flags & MG_FLAG_CHESS960);
    return mg_chess_from_fen(st, c960, START_FEN, err, errlen);
}

static int chess960_init(void *st, const mg_config *cfg, char *err, size_t errlen)
{
    (void)cfg;
    return mg_chess_from_fen(st, 1, START_FEN, err, errlen);
}

static int chess_from_text(void *st, const mg_config *cfg, const char *text, char *err, size_t errlen)
{
    int c960 = cfg && (cfg->flags & MG_FLAG_CHESS960);
    return mg_chess_from_fen(st, c960, text, err, errlen);
}

static int chess960_from_text(void *st, const mg_config *cfg, const char *text, char *err, size_t errlen)
{
    (void)cfg;
    return mg_chess_from_fen(st, 1, text, err, errlen);
}

static size_t chess_to_text(const void *st, char *buf, size_t buflen) { return mg_chess_to_fen(st, buf, buflen); }

static int chess_legal_actions(const void *st, int32_t *out) { return mg_chess_legal_actions(st, out); }

static int chess_is_legal(const void *st, int32_t a) { return mg_chess_is_legal(st, a); }

static int chess_to_move(const void *st) { return ((const S *)st)->stm; }

static uint64_t chess_hash(const void *st) { return ((const S *)st)->hash; }

INLINE int is_castle(const S *s, int from, int to)
{
    int pc = s->board[from], t = s->board[to];
    return (pc & 7) == KING && t && (t >> 3) == (pc >> 3) && (t & 7) == ROOK;
}

static size_t chess_action_to_str(const void *st, int32_t a, char *buf, size_t buflen)
{
    const S *s = st;
    if (a < 0 || a >= MG_CHESS_NUM_ACTIONS || buflen < 6)
        return 0;
    int from = a & 63, to = (a >> 6) & 63, promo = a >> 12;
    if (!s->chess960 && is_castle(s, from, to))
        to = (to & 56) | (to < from ? 2 : 6);
    return (size_t)mg_chess_uci_write(from, to, promo, buf);
}

static int chess_action_from_str(const void *st, const char *str, int32_t *a, char *err, size_t errlen)
{
    const S *s = st;
    size_t len = 0;
    while (len < 8 && str[len])
        len++;
    int promo = 0;
    if (len == 5) {
        const char *p = strchr("nbrq", str[4] | 0x20);
        promo = (p && str[4]) ? (int)(p - "nbrq") + 1 : -1;
    }
    if ((len != 4 && len != 5) || promo < 0 || str[0] < 'a' || str[0] > 'h' || str[1] < '1' || str[1] > '8' ||
        str[2] < 'a' || str[2] > 'h' || str[3] < '1' || str[3] > '8') {
        char fen[MG_MAX_TEXT];
        mg_chess_to_fen(s, fen, sizeof fen);
        snprintf(err, errlen, "invalid UCI move %s (expected e.g. e2e4 or e7e8q) in %s",
                 MG_QUOTE(str, MG_QUOTE_MAX), fen);
        return MG_ERR;
    }
    int from = (str[0] - 'a') + 8 * (str[1] - '1');
    int to = (str[2] - 'a') + 8 * (str[3] - '1');
    /* Standard chess: e1g1 / e1c1 (and black's) mean castling. */
    if (!s->chess960 && !promo && (s->board[from] & 7) == KING && (s->board[from] >> 3) == s->stm &&
        from == 4 + 56 * s->stm && (to == from + 2 || to == from - 2)) {
        int right = 2 * s->stm + (to < from);
        if (s->castling & (1 << right))
            to = s->castle_rook[right];
    }
    int32_t m = from | to << 6 | promo << 12;
    if (!chess_is_legal(s, m)) {
        char fen[MG_MAX_TEXT];
        mg_chess_to_fen(s, fen, sizeof fen);
        snprintf(err, errlen, "illegal move '%s' in %s", str, fen);
        return MG_ERR;
    }
    *a = m;
    return MG_OK;
}

/* ---------------------------------------------------------------------------------
 * SAN hooks.
 */

static void chess_move_info(const void *st, int32_t a, mg_move_info *out)
{
    const S *s = st;
    int from = a & 63, to = (a >> 6) & 63, promo = a >> 12;
    int pc = s->board[from];
    memset(out, 0, sizeof *out);
    out->from = from;
    out->to = to;
    out->piece = " PNBRQK"[pc & 7];
    if (is_castle(s, from, to)) {
        out->castle = to < from ? 2 : 1;
        return;
    }
    out->capture = s->board[to] != 0 || ((pc & 7) == PAWN && to == s->ep);
    out->promotion = promo ? " NBRQ"[promo] : 0;
}

static int chess_in_check_hook(const void *st) { return mg_chess_in_check(st); }

/* Planes (18 x 8 x 8): White P N B R Q K, Black p n b r q k, side to move (all 1 when Black is
 * to move), the castling rights White O-O, White O-O-O, Black O-O, Black O-O-O (all 1 when
 * held), the en passant target square (only when a capture there is legal).  Row 0 is rank 8,
 * column 0 is file a. */
static void chess_obs_shape(const void *st, int shape[3])
{
    (void)st;
    shape[0] = 18;
    shape[1] = 8;
    shape[2] = 8;
}

static void chess_observation(const void *st, float *out)
{
    const S *s = st;
    memset(out, 0, 18 * 64 * sizeof *out);
    for (int sq = 0; sq < 64; sq++) {
        int pc = s->board[sq];
        int i = (7 - sq / 8) * 8 + sq % 8;
        if (pc)
            out[((pc >> 3) * 6 + (pc & 7) - 1) * 64 + i] = 1.0f;
        out[12 * 64 + i] = (float)s->stm;
        for (int right = 0; right < 4; right++)
            out[(13 + right) * 64 + i] = (s->castling >> right & 1) ? 1.0f : 0.0f;
    }
    if (s->ep != MG_CH_NO_SQ)
        out[17 * 64 + (7 - s->ep / 8) * 8 + s->ep % 8] = 1.0f;
}

/* The copy hook: everything but the history, then only the history entries that repetition tests can read
 * (mg_chess_repetitions, the draw claims: the plies since the last irreversible move, at most MG_CHESS_HIST).
 * make() writes each new entry before anything reads it, so the skipped entries are never read; the MCTS tree
 * copies its root state this way at every simulation (2,280 bytes a memcpy, ~250 bytes here in most games). */
static void chess_copy(void *dst, const void *src)
{
    const S *s = src;
    S *d = dst;
    memcpy(d, s, offsetof(S, hist));
    const uint32_t mask = MG_CHESS_HIST - 1;
    const uint32_t n = (s->rep_len < mask ? s->rep_len : mask) + 1; /* entries ply - n + 1 .. ply */
    const uint32_t lo = (s->ply - (n - 1)) & mask;
    if (lo + n <= MG_CHESS_HIST) {
        memcpy(d->hist + lo, s->hist + lo, n * sizeof s->hist[0]);
    } else {
        memcpy(d->hist + lo, s->hist + lo, (MG_CHESS_HIST - lo) * sizeof s->hist[0]);
        memcpy(d->hist, s->hist, (lo + n - MG_CHESS_HIST) * sizeof s->hist[0]);
    }
}

#define CHESS_VTABLE(NAME, INIT, FROM_TEXT, MAV, SAN)                                                  \
    {                                                                                                  \
        .name = NAME, .state_size = sizeof(S), .undo_size = sizeof(U), .max_moves = MG_CHESS_MAX_MOVES, \
        .num_actions = MG_CHESS_NUM_ACTIONS, .init = INIT, .from_text = FROM_TEXT,                    \
        .to_text = chess_to_text, .legal_actions = chess_legal_actions, .is_legal = chess_is_legal,    \
        .make = mg_chess_make, .unmake = mg_chess_unmake, .to_move = chess_to_move,                          \
        .outcome = mg_chess_outcome, .legal_outcome = mg_chess_legal_outcome, .copy = chess_copy,          \
        .hash = chess_hash,                                                                            \
        .action_to_str = chess_action_to_str, .action_from_str = chess_action_from_str,                 \
        .perft = mg_chess_perft,                                                                       \
        .rule_flags = MG_FLAG_CHESS960, .obs_shape = chess_obs_shape, .observation = chess_observation, \
        .mav = MAV, .san = SAN,                                                                        \
    }

const mg_game mg_chess = CHESS_VTABLE("chess", chess_init, chess_from_text, &mg_chess_mav, &mg_chess_san_ops);
const mg_game mg_chess960 =
    CHESS_VTABLE("chess960", chess960_init, chess960_from_text, &mg_chess960_mav, &mg_chess960_san_ops);

const mg_san_ops mg_chess_san_ops = {
    .game = &mg_chess, .files = 8, .ranks = 8, .move_info = chess_move_info, .in_check = chess_in_check_hook};
const mg_san_ops mg_chess960_san_ops = {
    .game = &mg_chess960, .files = 8, .ranks = 8, .move_info = chess_move_info, .in_check = chess_in_check_hook};
