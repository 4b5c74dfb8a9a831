/*
 * fen.h - the parts of FEN text that the chess family shares (chess_fen.c for chess and
 * Chess960, gardner.c for Gardner's 5x5 minichess): splitting the text into fields, the
 * piece-placement field on a board of any size up to 9 x 9, and the clock counters.
 *
 * A board is an array of `files * ranks` piece codes, square = file + files * rank (a1 = 0,
 * rank 1 is rank index 0), 0 = empty.  `letters` gives the FEN letter of each piece code:
 * letters[code] is the letter, ' ' marks codes that are no piece; the string is at most 32
 * characters long.  Chess and Gardner both use " PNBRQK  pnbrqk" (code = colour * 8 + type).
 */
#ifndef MG_FEN_H
#define MG_FEN_H
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "../game.h"   /* MG_QUOTE */

#define MG_FEN_MAX_FILES 9   /* empty runs are written as one digit */
#define MG_FEN_MAX_RANKS 9

/* In a FEN reader with `char *err, size_t errlen` parameters: write "invalid <what> '<text>':
 * <reason>" (the reason printf-formatted; the text quoted by mg_quote_str, game.h, cut after 80
 * bytes) and return MG_ERR. */
#define MG_FEN_ERR(what, text, ...)                                                        \
    do {                                                                                   \
        char why_[160];                                                                    \
        snprintf(why_, sizeof why_, __VA_ARGS__);                                          \
        snprintf(err, errlen, "invalid %s %s: %s", (what), MG_QUOTE((text), 80), why_);   \
        return MG_ERR;                                                                     \
    } while (0)

#define MG_FEN_FIELDS 6       /* board, side, castling, en passant, halfmove, fullmove */

/* The start of reading a FEN: split `text` (NULL reads as "") at white space (space, tab, CR,
 * LF) into 1 to MG_FEN_FIELDS fields (field[i] points into `text`, len[i] is its length; the
 * fields left out are the caller's defaults) and read the piece placement, field 0: `ranks`
 * ranks from the top one down, separated by '/', each of piece letters and digits 1..files
 * for runs of empty squares (never two digits in a row), exactly `files` squares a rank.
 * Fills `board` (files * ranks codes) and returns the number of fields, or returns -1 with
 * the reason, naming the offending field, rank or character, in `why` (the FEN itself is not
 * repeated there). */
int mg_fen_read_board(const char *text, int files, int ranks, const char *letters, uint8_t *board,
                      const char **field, size_t *len, char *why, size_t whylen);

/* Write the piece-placement field of `board` to `out` (room for files * ranks + ranks - 1
 * characters; no NUL is written); returns its length. */
size_t mg_fen_board_write(const uint8_t *board, int files, int ranks, const char *letters, char *out);

/* A counter field (halfmove clock, fullmove number): 1 to 9 decimal digits.  Returns 1 and
 * sets *v, or 0 if the field is anything else. */
int mg_fen_uint(const char *f, size_t len, uint32_t *v);

#endif
