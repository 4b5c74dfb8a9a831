/*
 * fen_state.h - the MAV %state pieces the chess family shares (chess and Chess960 in
 * chess/chess_mav.c, Gardner in gardner/gardner_mav.c): FEN text to and from the %state board,
 * side and clock groups (read with the family's one FEN reader, fen.h), the writers straight from
 * a state's piece codes, and the move tokens of a chess-like board.
 *
 * %state boards hold a piece letter (PNBRQK white, pnbrqk black) or '.' a square, a1 first
 * (square = file + files * rank); the side group is 'w' or 'b'; clocks are 3 and 4 digits.
 */
#ifndef MG_FEN_STATE_H
#define MG_FEN_STATE_H

#include <stddef.h>
#include <stdint.h>

#include "../format/mav_codec.h"
#include "fen.h"

/* FEN letter of each piece code (code = colour * 8 + type), as chess and Gardner number them. */
#define MG_FEN_LETTERS " PNBRQK  pnbrqk"
/* The characters of a %state board group. */
#define MG_FEN_STATE_SQUARES "PNBRQKpnbrqk."

/* The leading FEN fields: the piece placement of a files x ranks board into board[] (%state
 * characters) and the side to move ('w'/'b').  field[]/flen[] receive every field (fen.h);
 * returns their number, or -1 with a message naming `what` ("FEN", "Gardner FEN") and the
 * offending part. */
int mg_fen_state_board_side(const char *text, int files, int ranks, char *board, char *side, const char **field,
                            size_t *flen, const char *what, char *err, size_t errlen);
/* The clock fields field[first], field[first + 1] (each optional: halfmove 0, fullmove 1 when
 * absent) of nf fields.  MG_OK or MG_ERR with a message. */
int mg_fen_state_clocks(const char *const *field, const size_t *flen, int nf, int first, unsigned long clocks[2],
                        const char *what, char *err, size_t errlen);
/* The %state clock groups (3 and 4 digits), then finish the buffer; its length or 0 with err. */
size_t mg_fen_state_clocks_done(mg_sbuf *b, const unsigned long clocks[2], size_t outlen, char *err, size_t errlen);
/* The FEN piece placement of a %state board group (characters of MG_FEN_STATE_SQUARES, checked by the caller). */
void mg_fen_state_put_board(mg_sbuf *b, const char *board, int files, int ranks);
/* The FEN clock fields from the %state clock groups, then finish the buffer. */
size_t mg_fen_state_fen_clocks_done(mg_sbuf *b, const char *halfmove, const char *fullmove, size_t outlen,
                                    char *err, size_t errlen);
/* Every from-to(-promotion) move some chess piece could make on a files x ranks board, as tokens;
 * returns the count (which may exceed cap). */
int mg_fen_state_tokens(int files, int ranks, mg_mav_token *out, int cap);
/* Non-zero if s[0..n) is such a move. */
int mg_fen_state_syntax(int files, int ranks, const char *s, size_t n);

/* ---- writers straight from the piece codes (the fast path of mg_mav_state_write) ---- */

static const char MG_FEN_STATE_CHARS[16] = {'.', 'P', 'N', 'B', 'R', 'Q', 'K', '?',
                                            '.', 'p', 'n', 'b', 'r', 'q', 'k', '?'};

/* Side and board groups from the piece codes, with the space after each; NULL (with an error
 * message) if out cannot hold `need` bytes.  Returns the end of what it wrote. */
static inline char *mg_fen_state_direct_side_board(int black, const uint8_t *board, int squares, size_t need,
                                                   char *out, size_t outlen, char *err, size_t errlen)
{
    if (outlen < need) {
        mg_errf(err, errlen, "%%state: output buffer too small (%zu bytes)", outlen);
        return NULL;
    }
    char *o = out;
    *o++ = black ? 'b' : 'w';
    *o++ = ' ';
    for (int i = 0; i < squares; i++)
        o[i] = MG_FEN_STATE_CHARS[board[i] & 15];
    o += squares;
    *o++ = ' ';
    return o;
}

/* The clock groups at o and the terminating NUL; returns the length of the %state text from out. */
static inline size_t mg_fen_state_direct_clocks(char *out, char *o, unsigned long hm, unsigned long fm, char *err,
                                                size_t errlen)
{
    if (!mg_mav_put_fixed_raw(o, hm, 3) || !mg_mav_put_fixed_raw(o + 4, fm, 4)) {
        mg_errf(err, errlen, "%%state: clocks %lu %lu do not fit the fixed-width fields (3 and 4 digits)", hm, fm);
        return 0;
    }
    o[3] = ' ';
    o[8] = '\0';
    return (size_t)(o + 8 - out);
}

#endif /* MG_FEN_STATE_H */
