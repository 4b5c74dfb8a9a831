/*
 * gardner_mav.c - the MAV %state codec of Gardner's minichess (format/mav_codec.h, docs/format.md):
 *
 *   <side> <25 squares a1..e5> <3-digit halfmove> <4-digit fullmove>
 */
#include "../fen_state.h"
#include "gardner.h"

static const mg_mav_group GARDNER_GROUPS[] = {
    {MG_MAV_G_CHARS, 1, 0, "wb", "side to move"},
    {MG_MAV_G_CHARS, 25, 5, MG_FEN_STATE_SQUARES, "board"},
    {MG_MAV_G_DIGITS, 3, 0, NULL, "halfmove clock"},
    {MG_MAV_G_DIGITS, 4, 0, NULL, "fullmove number"},
};

static size_t gardner_to_state(const char *text, char *out, size_t outlen, char *err, size_t errlen)
{
    char board[25], side;
    const char *field[MG_FEN_FIELDS];
    size_t flen[MG_FEN_FIELDS];
    char q[48];
    int nf = mg_fen_state_board_side(text, 5, 5, board, &side, field, flen, "Gardner FEN", err, errlen);
    if (nf < 0)
        return 0;
    for (int i = 2; i < 4 && i < nf; i++) {
        if (flen[i] != 1 || field[i][0] != '-') {
            mg_errf(err, errlen, "Gardner FEN: %s field must be '-', got %s", i == 3 ? "en passant" : "castling",
                    mg_quote(field[i], flen[i], q, sizeof q, 8));
            return 0;
        }
    }
    unsigned long clocks[2];
    if (mg_fen_state_clocks(field, flen, nf, 4, clocks, "Gardner FEN", err, errlen) != MG_OK)
        return 0;
    mg_sbuf b;
    mg_mav_sb_begin(&b, out, outlen, side);
    mg_sb_put(&b, board, 25);
    mg_sb_putc(&b, ' ');
    return mg_fen_state_clocks_done(&b, clocks, outlen, err, errlen);
}

static size_t gardner_from_state(const mg_config *cfg, const char *s, size_t n, char *out, size_t outlen, char *err,
                                 size_t errlen)
{
    (void)cfg;
    size_t pos[4], len[4];
    if (mg_mav_read_groups(s, n, GARDNER_GROUPS, 4, pos, len, err, errlen) != MG_OK)
        return 0;
    mg_sbuf b;
    mg_sb_init(&b, out, outlen);
    mg_fen_state_put_board(&b, s + pos[1], 5, 5);
    mg_sb_putc(&b, ' ');
    mg_sb_putc(&b, s[pos[0]]);
    mg_sb_puts(&b, " - - ");
    return mg_fen_state_fen_clocks_done(&b, s + pos[2], s + pos[3], outlen, err, errlen);
}

static size_t gardner_direct(const void *st, char *out, size_t outlen, char *err, size_t errlen)
{
    const mg_gardner_state *s = st;
    char *o = mg_fen_state_direct_side_board(s->side, s->board, 25, 48, out, outlen, err, errlen);
    return o ? mg_fen_state_direct_clocks(out, o, s->halfmove, s->fullmove, err, errlen) : 0;
}

static int gardner_tokens(mg_mav_token *out, int cap) { return mg_fen_state_tokens(5, 5, out, cap); }
static int gardner_syntax(const mg_config *cfg, const char *s, size_t n)
{
    (void)cfg;
    return mg_fen_state_syntax(5, 5, s, n);
}

const mg_mav_codec mg_gardner_mav = {
    .has_fen = 1,
    .to_state = gardner_to_state,
    .from_state = gardner_from_state,
    .tokens = gardner_tokens,
    .syntax = gardner_syntax,
    .direct = gardner_direct,
};
