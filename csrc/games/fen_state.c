/* fen_state.c - the MAV %state pieces the chess family shares (see fen_state.h). */
#include "fen_state.h"

#include <stdlib.h>
#include <string.h>

#include "../game.h"

int mg_fen_state_board_side(const char *text, int files, int ranks, char *board, char *side, const char **field,
                            size_t *flen, const char *what, char *err, size_t errlen)
{
    uint8_t codes[MG_FEN_MAX_FILES * MG_FEN_MAX_RANKS];
    char why[192], q[48];
    int nf = mg_fen_read_board(text, files, ranks, MG_FEN_LETTERS, codes, field, flen, why, sizeof why);
    if (nf < 0) {
        const char *t = text ? text : "";
        mg_errf(err, errlen, "invalid %s %s: %s", what, mg_quote(t, strlen(t), q, sizeof q, 40), why);
        return -1;
    }
    for (int i = 0; i < files * ranks; i++)
        board[i] = codes[i] ? MG_FEN_LETTERS[codes[i]] : '.';
    size_t n = nf > 1 ? flen[1] : 0;
    if (n != 1 || (field[1][0] != 'w' && field[1][0] != 'b')) {
        mg_errf(err, errlen, "%s: side to move must be 'w' or 'b', got %s", what,
                mg_quote(n ? field[1] : "", n, q, sizeof q, 8));
        return -1;
    }
    *side = field[1][0];
    return nf;
}

int mg_fen_state_clocks(const char *const *field, const size_t *flen, int nf, int first, unsigned long clocks[2],
                        const char *what, char *err, size_t errlen)
{
    char q[48];
    clocks[0] = 0;
    clocks[1] = 1;
    for (int i = 0; i < 2 && first + i < nf; i++) {
        uint32_t v;
        if (!mg_fen_uint(field[first + i], flen[first + i], &v)) {
            mg_errf(err, errlen, "%s: bad %s %s", what, i ? "fullmove number" : "halfmove clock",
                    mg_quote(field[first + i], flen[first + i], q, sizeof q, 12));
            return MG_ERR;
        }
        clocks[i] = v;
    }
    return MG_OK;
}

size_t mg_fen_state_clocks_done(mg_sbuf *b, const unsigned long clocks[2], size_t outlen, char *err, size_t errlen)
{
    if (!mg_mav_put_fixed(b, clocks[0], 3) || (mg_sb_putc(b, ' '), !mg_mav_put_fixed(b, clocks[1], 4))) {
        mg_errf(err, errlen, "%%state: clocks %lu %lu do not fit the fixed-width fields (3 and 4 digits)", clocks[0],
                clocks[1]);
        return 0;
    }
    return mg_mav_sb_done(b, outlen, err, errlen);
}

/* Piece code of each %state square character (MG_FEN_LETTERS read backwards; 0: empty). */
static const uint8_t SQUARE_CODE[128] = {
    ['P'] = 1, ['N'] = 2, ['B'] = 3, ['R'] = 4, ['Q'] = 5, ['K'] = 6,
    ['p'] = 9, ['n'] = 10, ['b'] = 11, ['r'] = 12, ['q'] = 13, ['k'] = 14,
};

void mg_fen_state_put_board(mg_sbuf *b, const char *board, int files, int ranks)
{
    uint8_t codes[MG_FEN_MAX_FILES * MG_FEN_MAX_RANKS];
    char text[MG_FEN_MAX_FILES * MG_FEN_MAX_RANKS + MG_FEN_MAX_RANKS];
    for (int i = 0; i < files * ranks; i++)
        codes[i] = SQUARE_CODE[board[i] & 127];
    mg_sb_put(b, text, mg_fen_board_write(codes, files, ranks, MG_FEN_LETTERS, text));
}

size_t mg_fen_state_fen_clocks_done(mg_sbuf *b, const char *halfmove, const char *fullmove, size_t outlen,
                                    char *err, size_t errlen)
{
    mg_sb_putu(b, mg_mav_read_fixed(halfmove, 3));
    mg_sb_putc(b, ' ');
    mg_sb_putu(b, mg_mav_read_fixed(fullmove, 4));
    return mg_mav_sb_done(b, outlen, err, errlen);
}

/* A from-to(-promotion) move on a files x ranks board that some chess piece could make:
 * queen-like or knight-like; promotions one rank forward onto the last rank (either colour),
 * straight or diagonal. */
static int chess_like(int files, int ranks, int ff, int fr, int tf, int tr, char promo)
{
    if (ff < 0 || ff >= files || tf < 0 || tf >= files || fr < 0 || fr >= ranks || tr < 0 || tr >= ranks)
        return 0;
    if (ff == tf && fr == tr)
        return 0;
    int df = abs(tf - ff), dr = abs(tr - fr);
    if (promo) {
        if (!strchr("nbrq", promo))
            return 0;
        return df <= 1 && ((fr == ranks - 2 && tr == ranks - 1) || (fr == 1 && tr == 0));
    }
    return df == 0 || dr == 0 || df == dr || (df == 1 && dr == 2) || (df == 2 && dr == 1);
}

int mg_fen_state_tokens(int files, int ranks, mg_mav_token *out, int cap)
{
    static const char promos[5] = {0, 'n', 'b', 'r', 'q'};
    int n = 0;
    for (int from = 0; from < files * ranks; from++)
        for (int to = 0; to < files * ranks; to++)
            for (int p = 0; p < 5; p++) {
                int ff = from % files, fr = from / files, tf = to % files, tr = to / files;
                if (!chess_like(files, ranks, ff, fr, tf, tr, promos[p]))
                    continue;
                char s[64];
                snprintf(s, sizeof s, "%c%d%c%d", 'a' + ff, fr + 1, 'a' + tf, tr + 1);
                if (promos[p]) {
                    size_t l = strlen(s);
                    s[l] = promos[p];
                    s[l + 1] = '\0';
                }
                mg_mav_add_token(out, cap, &n, s);
            }
    return n;
}

/* Square "a1".."i9" on a board of at most 9 ranks; -1 if not. */
static int parse_sq9(const char *s, int files, int ranks, int *f, int *r)
{
    *f = s[0] - 'a';
    *r = s[1] - '1';
    return (*f >= 0 && *f < files && *r >= 0 && *r < ranks) ? 0 : -1;
}

int mg_fen_state_syntax(int files, int ranks, const char *s, size_t n)
{
    if (n != 4 && n != 5)
        return 0;
    int ff, fr, tf, tr;
    if (parse_sq9(s, files, ranks, &ff, &fr) < 0 || parse_sq9(s + 2, files, ranks, &tf, &tr) < 0)
        return 0;
    return chess_like(files, ranks, ff, fr, tf, tr, n == 5 ? s[4] : 0) && (n == 4 || s[4] != 0);
}
