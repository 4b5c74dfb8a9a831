/*
 * chess_mav.c - the MAV %state codec of chess and Chess960 (format/mav_codec.h, docs/format.md):
 *
 *   <side> <64 squares a1..h1,a2..h8> <4 castling> <ep> <3-digit halfmove> <4-digit fullmove>
 *
 * Castling fields: white king side, white queen side, black king side, black queen side, each
 * the right's letter (KQkq; Chess960: the file letter of its rook, A-H white, a-h black) or '.'.
 */
#include <string.h>

#include "../fen_state.h"
#include "chess.h"

static const mg_mav_group CHESS_GROUPS[] = {
    {MG_MAV_G_CHARS, 1, 0, "wb", "side to move"},
    {MG_MAV_G_CHARS, 64, 8, MG_FEN_STATE_SQUARES, "board"},
    {MG_MAV_G_CHARS, 4, 0, "KQkqABCDEFGHabcdefgh.", "castling rights"},
    {MG_MAV_G_EP, 0, 0, NULL, "en passant square"},
    {MG_MAV_G_DIGITS, 3, 0, NULL, "halfmove clock"},
    {MG_MAV_G_DIGITS, 4, 0, NULL, "fullmove number"},
};

static int king_file(const char *board, int white)
{
    int rank = white ? 0 : 7;
    char k = white ? 'K' : 'k';
    for (int f = 0; f < 8; f++)
        if (board[f + 8 * rank] == k)
            return f;
    return -1;
}

/* Rook file for castling right `c` (K/Q/k/q or a file letter); -1 if there is no such rook. */
static int castle_rook_file(const char *board, char c, int *white, int *kingside)
{
    *white = (c >= 'A' && c <= 'Z');
    int rank = *white ? 0 : 7;
    char rook = *white ? 'R' : 'r';
    int kf = king_file(board, *white);
    if (kf < 0)
        return -1;
    char u = (char)(*white ? c : c - 32);
    if (u == 'K' || u == 'Q') {
        *kingside = u == 'K';
        if (*kingside) {
            for (int f = 7; f > kf; f--)
                if (board[f + 8 * rank] == rook)
                    return f;
        } else {
            for (int f = 0; f < kf; f++)
                if (board[f + 8 * rank] == rook)
                    return f;
        }
        return -1;
    }
    int f = u - 'A';
    if (f < 0 || f > 7 || f == kf || board[f + 8 * rank] != rook)
        return -1;
    *kingside = f > kf;
    return f;
}

static size_t chess_to_state(int c960, const char *text, char *out, size_t outlen, char *err, size_t errlen)
{
    char board[64], side;
    const char *field[MG_FEN_FIELDS];
    size_t flen[MG_FEN_FIELDS];
    char q[48];
    int nf = mg_fen_state_board_side(text, 8, 8, board, &side, field, flen, "FEN", err, errlen);
    if (nf < 0)
        return 0;
    char castle[4] = {'.', '.', '.', '.'};
    if (nf < 3) {
        mg_errf(err, errlen, "FEN: missing castling field");
        return 0;
    }
    const char *f = field[2];
    size_t n = flen[2];
    if (!(n == 1 && f[0] == '-')) {
        for (size_t i = 0; i < n; i++) {
            int white, kingside;
            int rf = castle_rook_file(board, f[i], &white, &kingside);
            if (rf < 0) {
                mg_errf(err, errlen, "FEN: castling right %s has no rook to castle with",
                        mg_quote(f + i, 1, q, sizeof q, 1));
                return 0;
            }
            int slot = (white ? 0 : 2) + (kingside ? 0 : 1);
            castle[slot] = c960 ? (char)((white ? 'A' : 'a') + rf) : "KQkq"[slot];
        }
    }
    const char *ep = nf > 3 ? field[3] : "";
    size_t epn = nf > 3 ? flen[3] : 0;
    if (!((epn == 1 && ep[0] == '-') || (epn == 2 && ep[0] >= 'a' && ep[0] <= 'h' && ep[1] >= '1' && ep[1] <= '8'))) {
        mg_errf(err, errlen, "FEN: en passant field must be '-' or a square, got %s", mg_quote(ep, epn, q, sizeof q, 8));
        return 0;
    }
    unsigned long clocks[2];
    if (mg_fen_state_clocks(field, flen, nf, 4, clocks, "FEN", err, errlen) != MG_OK)
        return 0;
    mg_sbuf b;
    mg_mav_sb_begin(&b, out, outlen, side);
    mg_sb_put(&b, board, 64);
    mg_sb_putc(&b, ' ');
    mg_sb_put(&b, castle, 4);
    mg_sb_putc(&b, ' ');
    if (epn == 2)
        mg_sb_put(&b, ep, 2);
    else
        mg_sb_putc(&b, '.');
    mg_sb_putc(&b, ' ');
    return mg_fen_state_clocks_done(&b, clocks, outlen, err, errlen);
}

static size_t chess_from_state(int c960, const char *s, size_t n, char *out, size_t outlen, char *err, size_t errlen)
{
    size_t pos[6], len[6];
    if (mg_mav_read_groups(s, n, CHESS_GROUPS, 6, pos, len, err, errlen) != MG_OK)
        return 0;
    const char *board = s + pos[1], *castle = s + pos[2];
    char q[48];
    static const char *const slot_name[4] = {"white king side", "white queen side", "black king side",
                                             "black queen side"};
    char cast_out[8];
    int nc = 0;
    for (int i = 0; i < 4; i++) {
        char c = castle[i];
        if (c == '.')
            continue;
        int white = i < 2, ok;
        if (!c960) {
            ok = c == "KQkq"[i];
        } else {
            int is_upper = c >= 'A' && c <= 'H', is_lower = c >= 'a' && c <= 'h';
            ok = white ? is_upper : is_lower;
            if (ok) {
                int w, ks;
                int rf = castle_rook_file(board, c, &w, &ks);
                ok = rf >= 0 && ks == (i % 2 == 0);
            }
        }
        if (!ok) {
            mg_errf(err, errlen, "%%state: castling field %d (%s) is %s, expected %s or '.'", i + 1, slot_name[i],
                    mg_quote(&castle[i], 1, q, sizeof q, 1),
                    c960 ? (white ? "the file letter A-H of a white rook on that side of the king"
                                  : "the file letter a-h of a black rook on that side of the king")
                         : (const char *[]){"'K'", "'Q'", "'k'", "'q'"}[i]);
            return 0;
        }
        if (c960) {
            /* X-FEN, as the chess game writes it: K/Q (k/q) for the outermost rook on its side */
            int w, ks, outer = 1;
            int rf = castle_rook_file(board, c, &w, &ks);
            int rank = white ? 0 : 7;
            char rook = white ? 'R' : 'r';
            for (int f = ks ? rf + 1 : 0; f < (ks ? 8 : rf); f++)
                if (board[f + 8 * rank] == rook)
                    outer = 0;
            if (outer)
                c = (char)(white ? "KQ"[i % 2] : "kq"[i % 2]);
        }
        cast_out[nc++] = c;
    }
    mg_sbuf b;
    mg_sb_init(&b, out, outlen);
    mg_fen_state_put_board(&b, board, 8, 8);
    mg_sb_putc(&b, ' ');
    mg_sb_putc(&b, s[pos[0]]);
    mg_sb_putc(&b, ' ');
    if (nc)
        mg_sb_put(&b, cast_out, (size_t)nc);
    else
        mg_sb_putc(&b, '-');
    mg_sb_putc(&b, ' ');
    if (len[3] == 2)
        mg_sb_put(&b, s + pos[3], 2);
    else
        mg_sb_putc(&b, '-');
    mg_sb_putc(&b, ' ');
    return mg_fen_state_fen_clocks_done(&b, s + pos[4], s + pos[5], outlen, err, errlen);
}

static size_t chess_to_state_std(const char *t, char *o, size_t ol, char *e, size_t el)
{
    return chess_to_state(0, t, o, ol, e, el);
}
static size_t chess_to_state_960(const char *t, char *o, size_t ol, char *e, size_t el)
{
    return chess_to_state(1, t, o, ol, e, el);
}
static size_t chess_from_state_std(const mg_config *cfg, const char *s, size_t n, char *o, size_t ol, char *e,
                                   size_t el)
{
    (void)cfg;
    return chess_from_state(0, s, n, o, ol, e, el);
}
static size_t chess_from_state_960(const mg_config *cfg, const char *s, size_t n, char *o, size_t ol, char *e,
                                   size_t el)
{
    (void)cfg;
    return chess_from_state(1, s, n, o, ol, e, el);
}

/* ---- straight from the state bytes ---- */

static size_t chess_direct(const void *st, char *out, size_t outlen, char *err, size_t errlen)
{
    const mg_chess_state *s = st;
    char *o = mg_fen_state_direct_side_board(s->stm, s->board, 64, 88, out, outlen, err, errlen);
    if (!o)
        return 0;
    for (int i = 0; i < 4; i++) {
        char c = '.';
        if (s->castling & (1u << i))
            c = s->chess960 ? (char)((i < 2 ? 'A' : 'a') + (s->castle_rook[i] & 7)) : "KQkq"[i];
        *o++ = c;
    }
    *o++ = ' ';
    if (s->ep != MG_CH_NO_SQ) {
        *o++ = (char)('a' + (s->ep & 7));
        *o++ = (char)('1' + (s->ep >> 3));
    } else {
        *o++ = '.';
    }
    *o++ = ' ';
    return mg_fen_state_direct_clocks(out, o, s->halfmove, s->fullmove, err, errlen);
}

/* Under game=chess, a chess state built with the Chess960 flag is written with the standard
 * letters KQkq when its castling rights mean the same as standard ones (the king on its e-file
 * square, the rook of each right in its standard corner), as the parser reads them; other Chess960
 * castling rights have no spelling under game=chess and are refused (the text would not read
 * back): such a position is a chess960 position. */
static int chess_std_expressible(const void *st, char *err, size_t errlen)
{
    const mg_chess_state *s = st;
    if (!s->chess960)
        return MG_OK;
    for (int i = 0; i < 4; i++) {
        if (!(s->castling & (1u << i)))
            continue;
        int color = i >> 1, home = color ? 56 : 0;
        int king_ok = s->board[home + 4] == (uint8_t)(color << 3 | MG_CH_KING);
        int rook_ok = s->castle_rook[i] == home + ((i & 1) ? 0 : 7);
        if (!king_ok || !rook_ok) {
            char letters[5];
            for (int j = 0; j < 4; j++)
                letters[j] =
                    (s->castling & (1u << j)) ? (char)((j < 2 ? 'A' : 'a') + (s->castle_rook[j] & 7)) : '.';
            letters[4] = '\0';
            mg_errf(err, errlen,
                    "a state with Chess960 castling rights %s (right '%c': %s) cannot be written under "
                    "<mav game=chess>; write it as a chess960 state",
                    letters, "KQkq"[i],
                    king_ok ? "the rook is not in its standard corner" : "the king is not on its e-file square");
            return MG_ERR;
        }
    }
    return MG_OK;
}

static size_t chess_direct_std(const void *st, char *out, size_t outlen, char *err, size_t errlen)
{
    const mg_chess_state *s = st;
    if (s->chess960) {
        if (chess_std_expressible(s, err, errlen) != MG_OK)
            return 0;
        mg_chess_state tmp = *s; /* standard-equivalent: the same text as a standard state */
        tmp.chess960 = 0;
        return chess_direct(&tmp, out, outlen, err, errlen);
    }
    return chess_direct(st, out, outlen, err, errlen);
}

/* ---- move tokens ---- */

static int chess_tokens(mg_mav_token *out, int cap) { return mg_fen_state_tokens(8, 8, out, cap); }
static int chess_syntax(const mg_config *cfg, const char *s, size_t n)
{
    (void)cfg;
    return mg_fen_state_syntax(8, 8, s, n);
}

const mg_mav_codec mg_chess_mav = {
    .has_fen = 1,
    .to_state = chess_to_state_std,
    .from_state = chess_from_state_std,
    .tokens = chess_tokens,
    .syntax = chess_syntax,
    .direct = chess_direct_std,
    .check = chess_std_expressible,
};

const mg_mav_codec mg_chess960_mav = {
    .has_fen = 1,
    .to_state = chess_to_state_960,
    .from_state = chess_from_state_960,
    .tokens = chess_tokens,
    .syntax = chess_syntax,
    .direct = chess_direct,
};
