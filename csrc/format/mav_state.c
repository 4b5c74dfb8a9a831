/*
 * mav_state.c - the per-game %state text of the MAV format and the move tokens of each game.
 *
 * %state is the game's position with one token per board field, every field at a constant
 * relative position: groups separated by single spaces, each group of fixed width (see
 * docs/format.md):
 *
 *   chess, chess960  <side> <64 squares a1..h1,a2..h8> <4 castling> <ep> <3-digit halfmove> <4-digit fullmove>
 *   gardner          <side> <25 squares a1..e5> <3-digit halfmove> <4-digit fullmove>
 *   connect_four     <side> <42 cells a1..g1, a2..g2, ..., a6..g6 (row 1 at the bottom)>
 *   hex              <side> <n*n cells a1..n1, a2..n2, ... (row 1 at the top, as the game names cells)>
 *   tictactoe        <side> <9 cells a1..c3>
 *
 * Squares hold a piece letter (PNBRQK white, pnbrqk black) or '.', side is 'w'/'b' in the
 * chess family.  The conversions here are text to text (game text <-> %state); the game's
 * own from_text() validates positions.
 */
#include "mav.h"

#include <stdlib.h>

#include "../games/chess/chess.h"
#include "../games/gardner/gardner.h"
#include "mav_util.h"

/* ---- generic %state layout reader ------------------------------------------------------ */

enum { G_CHARS = 0, G_EP, G_DIGITS };

typedef struct grp {
    uint8_t kind;
    uint16_t width;       /* characters (G_CHARS, G_DIGITS) */
    uint8_t files;        /* board groups: files per rank (for square names); 0 otherwise */
    const char *allowed;  /* G_CHARS */
    const char *name;
} grp;

static void square_name(int idx, int files, char out[16])
{
    int f = idx % files, r = idx / files + 1;
    snprintf(out, 16, "%c%d", 'a' + f, r);
}

/* Split s[0..n) into groups; pos[i] = offset of group i, len[i] its length. */
static int read_groups(const char *s, size_t n, const grp *g, int ng, size_t *pos, size_t *len, char *err,
                       size_t errlen)
{
    char q[48];
    size_t off = 0;
    for (int i = 0; i < ng; i++) {
        if (i > 0) {
            if (off >= n) {
                mg_errf(err, errlen, "%%state ends after %d of %d fields groups: missing the %s", i, ng, g[i].name);
                return MG_ERR;
            }
            if (s[off] != ' ') {
                mg_errf(err, errlen, "%%state: expected a space before the %s at character %zu, got %s", g[i].name,
                        off + 1, mg_quote(s + off, 1, q, sizeof q, 1));
                return MG_ERR;
            }
            off++;
        }
        pos[i] = off;
        if (g[i].kind == G_EP) {
            if (off < n && s[off] == '.') {
                len[i] = 1;
            } else if (off + 1 < n && s[off] >= 'a' && s[off] <= 'h' && s[off + 1] >= '1' && s[off + 1] <= '8') {
                len[i] = 2;
            } else {
                size_t k = 0;
                while (off + k < n && s[off + k] != ' ')
                    k++;
                mg_errf(err, errlen, "%%state: the %s at character %zu must be '.' or a square a1..h8, got %s",
                        g[i].name, off + 1, mg_quote(s + off, k, q, sizeof q, 8));
                return MG_ERR;
            }
            off += len[i];
            continue;
        }
        for (size_t k = 0; k < g[i].width; k++, off++) {
            char c = off < n ? s[off] : '\0';
            int okc = off < n && (g[i].kind == G_DIGITS ? (c >= '0' && c <= '9') : (c && strchr(g[i].allowed, c)));
            if (okc)
                continue;
            if (off >= n || c == ' ') {
                mg_errf(err, errlen, "%%state: the %s has %zu characters, expected %u", g[i].name, k,
                        (unsigned)g[i].width);
                return MG_ERR;
            }
            char where[40] = "";
            if (g[i].files) {
                char sq[16];
                square_name((int)k, g[i].files, sq);
                snprintf(where, sizeof where, " (square %s)", sq);
            }
            mg_errf(err, errlen, "%%state: character %zu%s in the %s is %s, expected %s%s", off + 1, where,
                    g[i].name, mg_quote(s + off, 1, q, sizeof q, 1), g[i].kind == G_DIGITS ? "a digit" : "one of ",
                    g[i].kind == G_DIGITS ? "" : g[i].allowed);
            return MG_ERR;
        }
        len[i] = g[i].width;
    }
    if (off != n) {
        mg_errf(err, errlen, "%%state: unexpected text after the last field at character %zu: %s", off + 1,
                mg_quote(s + off, n - off, q, sizeof q, 16));
        return MG_ERR;
    }
    return MG_OK;
}

/* Finish a %state output buffer; 0 with an error message if it was too small. */
static size_t sb_done(mg_sbuf *b, size_t outlen, char *err, size_t errlen)
{
    size_t len = mg_sb_finish(b);
    if (!len)
        mg_errf(err, errlen, "%%state: output buffer too small (%zu bytes)", outlen);
    return len;
}

/* Start a %state output buffer with the side-to-move group and its separating space. */
static void sb_begin(mg_sbuf *b, char *out, size_t outlen, char side)
{
    mg_sb_init(b, out, outlen);
    mg_sb_putc(b, side);
    mg_sb_putc(b, ' ');
}

/* Game text of a row grid: `rows` rows of `cols` cells, '/' separated (row 0 first when top_first,
 * else the last row first), then a space and the side to move. */
static size_t grid_text(const char *cells, int rows, int cols, int top_first, char side, char *out, size_t outlen,
                        char *err, size_t errlen)
{
    mg_sbuf b;
    mg_sb_init(&b, out, outlen);
    for (int i = 0; i < rows; i++) {
        int r = top_first ? i : rows - 1 - i;
        mg_sb_put(&b, cells + (size_t)(cols * r), (size_t)cols);
        if (i < rows - 1)
            mg_sb_putc(&b, '/');
    }
    mg_sb_putc(&b, ' ');
    mg_sb_putc(&b, side);
    return sb_done(&b, outlen, err, errlen);
}

/* Game text from a row-grid %state (side group, then rows x cols cells from the bottom row up):
 * the rows top row first, separated by '/', then a space and the side to move. */
static size_t grid_from_state(const grp *groups, int rows, int cols, const char *s, size_t n, char *out,
                              size_t outlen, char *err, size_t errlen)
{
    size_t pos[2], len[2];
    if (read_groups(s, n, groups, 2, pos, len, err, errlen) != MG_OK)
        return 0;
    return grid_text(s + pos[1], rows, cols, 0, s[pos[0]], out, outlen, err, errlen);
}

/* Fixed-width decimal with leading zeros; 0 if it does not fit. */
static int put_fixed(mg_sbuf *b, unsigned long v, int width)
{
    char tmp[16];
    for (int i = width - 1; i >= 0; i--) {
        tmp[i] = (char)('0' + v % 10);
        v /= 10;
    }
    if (v)
        return 0;
    mg_sb_put(b, tmp, (size_t)width);
    return 1;
}

static unsigned long read_fixed(const char *s, size_t n)
{
    unsigned long v = 0;
    for (size_t i = 0; i < n; i++)
        v = v * 10 + (unsigned long)(s[i] - '0');
    return v;
}

/* ---- FEN pieces shared by the chess family ---------------------------------------------- */

#define PIECES "PNBRQKpnbrqk"

static int is_piece(char c)
{
    switch (c) {
    case 'P': case 'N': case 'B': case 'R': case 'Q': case 'K':
    case 'p': case 'n': case 'b': case 'r': case 'q': case 'k':
        return 1;
    default:
        return 0;
    }
}

/* Parse a FEN board of files x ranks (ranks from the top, '/' separated, digit runs) into
 * board[file + files * rank] ('.' empty).  *p advances past the board. */
static int fen_board(const char **pp, int files, int ranks, char *board, char *err, size_t errlen)
{
    const char *p = *pp;
    char q[48];
    for (int r = ranks - 1; r >= 0; r--) {
        int f = 0;
        while (*p && *p != '/' && *p != ' ') {
            char c = *p++;
            if (c >= '1' && c <= '9') {
                int k = c - '0';
                if (*p >= '0' && *p <= '9') /* two-digit runs (boards wider than 9) */
                    k = k * 10 + (*p++ - '0');
                if (f + k > files)
                    break;
                for (int i = 0; i < k; i++)
                    board[f++ + files * r] = '.';
            } else if (is_piece(c)) {
                if (f >= files) {
                    f++;
                    break;
                }
                board[f++ + files * r] = c;
            } else {
                mg_errf(err, errlen, "FEN board: bad character %s in rank %d", mg_quote(&c, 1, q, sizeof q, 1),
                        r + 1);
                return MG_ERR;
            }
        }
        if (f != files) {
            mg_errf(err, errlen, "FEN board: rank %d does not describe exactly %d squares", r + 1, files);
            return MG_ERR;
        }
        if (r > 0) {
            if (*p != '/') {
                mg_errf(err, errlen, "FEN board: expected %d ranks separated by '/'", ranks);
                return MG_ERR;
            }
            p++;
        }
    }
    *pp = p;
    return MG_OK;
}

static void fen_put_board(mg_sbuf *b, const char *board, int files, int ranks)
{
    for (int r = ranks - 1; r >= 0; r--) {
        int empty = 0;
        for (int f = 0; f < files; f++) {
            char c = board[f + files * r];
            if (c == '.') {
                empty++;
                continue;
            }
            if (empty)
                mg_sb_putu(b, (unsigned long)empty);
            empty = 0;
            mg_sb_putc(b, c);
        }
        if (empty)
            mg_sb_putu(b, (unsigned long)empty);
        if (r)
            mg_sb_putc(b, '/');
    }
}

/* Next space-separated FEN field: returns its length (0 at the end). */
static size_t fen_field(const char **pp, const char **start)
{
    const char *p = *pp;
    while (*p == ' ')
        p++;
    *start = p;
    while (*p && *p != ' ')
        p++;
    *pp = p;
    return (size_t)(p - *start);
}

/* Clock field; -1 if not a number. */
static long fen_number(const char *s, size_t n)
{
    if (n == 0 || n > 9)
        return -1;
    long v = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        v = v * 10 + (s[i] - '0');
    }
    return v;
}

/* The leading FEN fields of the chess family: a files x ranks board and the side to move ('w'/'b').
 * `what` names the text in error messages ("FEN", "Gardner FEN").  *pp advances past them. */
static int fen_board_side(const char **pp, int files, int ranks, char *board, char *side, const char *what,
                          char *err, size_t errlen)
{
    const char *p = *pp, *f;
    char q[48];
    while (*p == ' ')
        p++;
    if (fen_board(&p, files, ranks, board, err, errlen) != MG_OK)
        return MG_ERR;
    size_t n = fen_field(&p, &f);
    if (n != 1 || (f[0] != 'w' && f[0] != 'b')) {
        mg_errf(err, errlen, "%s: side to move must be 'w' or 'b', got %s", what, mg_quote(f, n, q, sizeof q, 8));
        return MG_ERR;
    }
    *side = f[0];
    *pp = p;
    return MG_OK;
}

/* The trailing FEN clock fields (optional: halfmove 0, fullmove 1 when absent), then the end of the text. */
static int fen_clocks(const char *p, long clocks[2], const char *what, char *err, size_t errlen)
{
    const char *f;
    char q[48];
    clocks[0] = 0;
    clocks[1] = 1;
    for (int i = 0; i < 2; i++) {
        size_t n = fen_field(&p, &f);
        if (n == 0)
            break;
        clocks[i] = fen_number(f, n);
        if (clocks[i] < 0) {
            mg_errf(err, errlen, "%s: bad %s %s", what, i ? "fullmove number" : "halfmove clock",
                    mg_quote(f, n, q, sizeof q, 12));
            return MG_ERR;
        }
    }
    if (fen_field(&p, &f)) {
        mg_errf(err, errlen, "%s: unexpected text %s at the end", what, mg_quote(f, strlen(f), q, sizeof q, 12));
        return MG_ERR;
    }
    return MG_OK;
}

/* The %state clock groups (3 and 4 digits), then finish the buffer. */
static size_t state_clocks_done(mg_sbuf *b, const long clocks[2], size_t outlen, char *err, size_t errlen)
{
    if (!put_fixed(b, (unsigned long)clocks[0], 3) || (mg_sb_putc(b, ' '), !put_fixed(b, (unsigned long)clocks[1], 4))) {
        mg_errf(err, errlen, "%%state: clocks %ld %ld do not fit the fixed-width fields (3 and 4 digits)", clocks[0],
                clocks[1]);
        return 0;
    }
    return sb_done(b, outlen, err, errlen);
}

/* The FEN clock fields from the %state clock groups, then finish the buffer. */
static size_t fen_clocks_done(mg_sbuf *b, const char *halfmove, const char *fullmove, size_t outlen, char *err,
                              size_t errlen)
{
    mg_sb_putu(b, read_fixed(halfmove, 3));
    mg_sb_putc(b, ' ');
    mg_sb_putu(b, read_fixed(fullmove, 4));
    return sb_done(b, outlen, err, errlen);
}

/* ---- chess and chess960 ---------------------------------------------------------------- */

static const grp CHESS_GROUPS[] = {
    {G_CHARS, 1, 0, "wb", "side to move"},
    {G_CHARS, 64, 8, PIECES ".", "board"},
    {G_CHARS, 4, 0, "KQkqABCDEFGHabcdefgh.", "castling rights"},
    {G_EP, 0, 0, NULL, "en passant square"},
    {G_DIGITS, 3, 0, NULL, "halfmove clock"},
    {G_DIGITS, 4, 0, NULL, "fullmove number"},
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
    const char *p = text, *f;
    char q[48];
    if (fen_board_side(&p, 8, 8, board, &side, "FEN", err, errlen) != MG_OK)
        return 0;
    char castle[4] = {'.', '.', '.', '.'};
    size_t n = fen_field(&p, &f);
    if (n == 0) {
        mg_errf(err, errlen, "FEN: missing castling field");
        return 0;
    }
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
    n = fen_field(&p, &f);
    const char *ep = f;
    size_t epn = n;
    if (!((n == 1 && f[0] == '-') || (n == 2 && f[0] >= 'a' && f[0] <= 'h' && f[1] >= '1' && f[1] <= '8'))) {
        mg_errf(err, errlen, "FEN: en passant field must be '-' or a square, got %s", mg_quote(f, n, q, sizeof q, 8));
        return 0;
    }
    long clocks[2];
    if (fen_clocks(p, clocks, "FEN", err, errlen) != MG_OK)
        return 0;
    mg_sbuf b;
    sb_begin(&b, out, outlen, side);
    mg_sb_put(&b, board, 64);
    mg_sb_putc(&b, ' ');
    mg_sb_put(&b, castle, 4);
    mg_sb_putc(&b, ' ');
    if (epn == 2)
        mg_sb_put(&b, ep, 2);
    else
        mg_sb_putc(&b, '.');
    mg_sb_putc(&b, ' ');
    return state_clocks_done(&b, clocks, outlen, err, errlen);
}

static size_t chess_from_state(int c960, const char *s, size_t n, char *out, size_t outlen, char *err, size_t errlen)
{
    size_t pos[6], len[6];
    if (read_groups(s, n, CHESS_GROUPS, 6, pos, len, err, errlen) != MG_OK)
        return 0;
    const char *board = s + pos[1], *castle = s + pos[2];
    char q[48];
    /* Castling fields: white king side, white queen side, black king side, black queen side. */
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
    fen_put_board(&b, board, 8, 8);
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
    return fen_clocks_done(&b, s + pos[4], s + pos[5], outlen, err, errlen);
}

static size_t chess_to_state_std(const mg_config *cfg, const char *t, char *o, size_t ol, char *e, size_t el)
{
    (void)cfg;
    return chess_to_state(0, t, o, ol, e, el);
}
static size_t chess_to_state_960(const mg_config *cfg, const char *t, char *o, size_t ol, char *e, size_t el)
{
    (void)cfg;
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

/* ---- Gardner ----------------------------------------------------------------------------- */

static const grp GARDNER_GROUPS[] = {
    {G_CHARS, 1, 0, "wb", "side to move"},
    {G_CHARS, 25, 5, PIECES ".", "board"},
    {G_DIGITS, 3, 0, NULL, "halfmove clock"},
    {G_DIGITS, 4, 0, NULL, "fullmove number"},
};

static size_t gardner_to_state(const mg_config *cfg, const char *text, char *out, size_t outlen, char *err,
                               size_t errlen)
{
    (void)cfg;
    char board[25], side;
    const char *p = text, *f;
    char q[48];
    if (fen_board_side(&p, 5, 5, board, &side, "Gardner FEN", err, errlen) != MG_OK)
        return 0;
    for (int i = 0; i < 2; i++) {
        size_t n = fen_field(&p, &f);
        if (n == 0)
            break;
        if (n != 1 || f[0] != '-') {
            mg_errf(err, errlen, "Gardner FEN: %s field must be '-', got %s", i ? "en passant" : "castling",
                    mg_quote(f, n, q, sizeof q, 8));
            return 0;
        }
    }
    long clocks[2];
    if (fen_clocks(p, clocks, "Gardner FEN", err, errlen) != MG_OK)
        return 0;
    mg_sbuf b;
    sb_begin(&b, out, outlen, side);
    mg_sb_put(&b, board, 25);
    mg_sb_putc(&b, ' ');
    return state_clocks_done(&b, clocks, outlen, err, errlen);
}

static size_t gardner_from_state(const mg_config *cfg, const char *s, size_t n, char *out, size_t outlen, char *err,
                                 size_t errlen)
{
    (void)cfg;
    size_t pos[4], len[4];
    if (read_groups(s, n, GARDNER_GROUPS, 4, pos, len, err, errlen) != MG_OK)
        return 0;
    mg_sbuf b;
    mg_sb_init(&b, out, outlen);
    fen_put_board(&b, s + pos[1], 5, 5);
    mg_sb_putc(&b, ' ');
    mg_sb_putc(&b, s[pos[0]]);
    mg_sb_puts(&b, " - - ");
    return fen_clocks_done(&b, s + pos[2], s + pos[3], outlen, err, errlen);
}

/* ---- tic-tac-toe ------------------------------------------------------------------------- */

static const grp TTT_GROUPS[] = {
    {G_CHARS, 1, 0, "xo", "side to move"},
    {G_CHARS, 9, 3, "xo.", "board"},
};

static size_t ttt_to_state(const mg_config *cfg, const char *text, char *out, size_t outlen, char *err,
                           size_t errlen)
{
    (void)cfg;
    /* "x.o/.x./..o x": rows from rank 3 down. */
    char q[48];
    size_t n = strlen(text);
    if (n != 13 || text[3] != '/' || text[7] != '/' || text[11] != ' ' || (text[12] != 'x' && text[12] != 'o')) {
        mg_errf(err, errlen, "tic-tac-toe text %s: expected 'ccc/ccc/ccc s'", mg_quote(text, n, q, sizeof q, 20));
        return 0;
    }
    mg_sbuf b;
    sb_begin(&b, out, outlen, text[12]);
    for (int r = 0; r < 3; r++)
        for (int f = 0; f < 3; f++) {
            char c = text[(2 - r) * 4 + f];
            if (c != 'x' && c != 'o' && c != '.') {
                char qc[16];
                mg_errf(err, errlen, "tic-tac-toe text %s: bad cell %s", mg_quote(text, n, q, sizeof q, 20),
                        mg_quote(&text[(2 - r) * 4 + f], 1, qc, sizeof qc, 1));
                return 0;
            }
            mg_sb_putc(&b, c);
        }
    return sb_done(&b, outlen, err, errlen);
}

static size_t ttt_from_state(const mg_config *cfg, const char *s, size_t n, char *out, size_t outlen, char *err,
                             size_t errlen)
{
    (void)cfg;
    return grid_from_state(TTT_GROUPS, 3, 3, s, n, out, outlen, err, errlen);
}

/* ---- Connect Four ------------------------------------------------------------------------- */

static const grp C4_GROUPS[] = {
    {G_CHARS, 1, 0, "xo", "side to move"},
    {G_CHARS, 42, 7, "xo.", "board"},
};

static size_t c4_to_state(const mg_config *cfg, const char *text, char *out, size_t outlen, char *err,
                          size_t errlen)
{
    (void)cfg;
    /* six rows of seven from the top down, '/' separated, then " x" or " o" */
    char q[48];
    size_t n = strlen(text);
    if (n != 6 * 8 + 1) {
        mg_errf(err, errlen, "Connect Four text %s: expected 6 rows of 7 cells and the side to move",
                mg_quote(text, n, q, sizeof q, 24));
        return 0;
    }
    char side = text[48];
    if (text[47] != ' ' || (side != 'x' && side != 'o')) {
        mg_errf(err, errlen, "Connect Four text %s: expected ' x' or ' o' at the end", mg_quote(text, n, q, sizeof q, 24));
        return 0;
    }
    mg_sbuf b;
    sb_begin(&b, out, outlen, side);
    for (int r = 0; r < 6; r++)
        for (int f = 0; f < 7; f++) {
            int at = (5 - r) * 8 + f;
            char c = text[at];
            if ((c != 'x' && c != 'o' && c != '.') || (f == 6 && r > 0 && text[at + 1] != '/')) {
                mg_errf(err, errlen, "Connect Four text %s: bad row %d", mg_quote(text, n, q, sizeof q, 24), r + 1);
                return 0;
            }
            mg_sb_putc(&b, c);
        }
    return sb_done(&b, outlen, err, errlen);
}

static size_t c4_from_state(const mg_config *cfg, const char *s, size_t n, char *out, size_t outlen, char *err,
                            size_t errlen)
{
    (void)cfg;
    return grid_from_state(C4_GROUPS, 6, 7, s, n, out, outlen, err, errlen);
}

/* ---- Hex ------------------------------------------------------------------------------------ */

#define HEX_MAX_N 19

static int hex_cfg_size(const mg_config *cfg) { return cfg && cfg->board_size > 0 ? cfg->board_size : 0; }

static size_t hex_to_state(const mg_config *cfg, const char *text, char *out, size_t outlen, char *err,
                           size_t errlen)
{
    (void)cfg;
    /* rows 1..n from the top, '/' separated, then " x" or " o" */
    char q[48];
    size_t len = strlen(text);
    int n = 0;
    while ((size_t)n < len && text[n] != '/' && text[n] != ' ')
        n++;
    if (n < 1 || n > HEX_MAX_N || len != (size_t)(n * (n + 1) + 1)) {
        mg_errf(err, errlen, "Hex text %s: expected n rows of n cells (n <= 19) and the side to move",
                mg_quote(text, len, q, sizeof q, 24));
        return 0;
    }
    char side = text[len - 1];
    if (text[len - 2] != ' ' || (side != 'x' && side != 'o')) {
        mg_errf(err, errlen, "Hex text %s: expected ' x' or ' o' at the end", mg_quote(text, len, q, sizeof q, 24));
        return 0;
    }
    mg_sbuf b;
    sb_begin(&b, out, outlen, side);
    for (int r = 0; r < n; r++) {
        for (int c = 0; c < n; c++) {
            char ch = text[r * (n + 1) + c];
            if (ch == 'X' || ch == 'O')
                ch = (char)(ch + 32);
            if (ch != 'x' && ch != 'o' && ch != '.') {
                mg_errf(err, errlen, "Hex text %s: bad cell in row %d", mg_quote(text, len, q, sizeof q, 24), r + 1);
                return 0;
            }
            mg_sb_putc(&b, ch);
        }
        if (r < n - 1 && text[r * (n + 1) + n] != '/') {
            mg_errf(err, errlen, "Hex text %s: expected '/' after row %d", mg_quote(text, len, q, sizeof q, 24), r + 1);
            return 0;
        }
    }
    return sb_done(&b, outlen, err, errlen);
}

static size_t hex_from_state(const mg_config *cfg, const char *s, size_t n, char *out, size_t outlen, char *err,
                             size_t errlen)
{
    char q[48];
    if (n < 1 || (s[0] != 'x' && s[0] != 'o')) {
        mg_errf(err, errlen, "%%state: the side to move is %s, expected one of xo", mg_quote(s, n ? 1 : 0, q, sizeof q, 1));
        return 0;
    }
    if (n < 2 || s[1] != ' ') {
        mg_errf(err, errlen, "%%state: expected a space before the board at character 2");
        return 0;
    }
    size_t cells = 0;
    while (2 + cells < n && s[2 + cells] != ' ')
        cells++;
    if (2 + cells != n) {
        mg_errf(err, errlen, "%%state: unexpected text after the board at character %zu: %s", 3 + cells,
                mg_quote(s + 2 + cells, n - 2 - cells, q, sizeof q, 16));
        return 0;
    }
    int want = hex_cfg_size(cfg);
    int size = 0;
    while (size < HEX_MAX_N && (size_t)((size + 1) * (size + 1)) <= cells)
        size++;
    if ((size_t)(size * size) != cells || size == 0 || (want && size != want)) {
        if (want)
            mg_errf(err, errlen, "%%state: the board has %zu cells, expected %d for a %dx%d board", cells, want * want,
                    want, want);
        else
            mg_errf(err, errlen, "%%state: the board has %zu cells, not n*n for a board size n in 1..19", cells);
        return 0;
    }
    for (size_t i = 0; i < cells; i++) {
        char c = s[2 + i];
        if (c != 'x' && c != 'o' && c != '.') {
            char sq[16];
            square_name((int)i, size, sq);
            mg_errf(err, errlen, "%%state: character %zu (cell %s) in the board is %s, expected one of xo.", 3 + i, sq,
                    mg_quote(&s[2 + i], 1, q, sizeof q, 1));
            return 0;
        }
    }
    return grid_text(s + 2, size, size, 1, s[0], out, outlen, err, errlen);
}

/* ---- direct writers from the state bytes (fast paths; tests check them against the text path) ---- */

static const char BOARD_CHARS[16] = {'.', 'P', 'N', 'B', 'R', 'Q', 'K', '?', '.', 'p', 'n', 'b', 'r', 'q', 'k', '?'};

static size_t put_fixed_raw(char *o, unsigned long v, int width)
{
    for (int i = width - 1; i >= 0; i--) {
        o[i] = (char)('0' + v % 10);
        v /= 10;
    }
    return v ? 0 : (size_t)width;
}

/* Side and board groups of a chess-family %state from the piece codes, with the space after each;
 * NULL (with an error message) if out cannot hold `need` bytes.  Returns the end of what it wrote. */
static char *direct_side_board(int black, const uint8_t *board, int squares, size_t need, char *out, size_t outlen,
                               char *err, size_t errlen)
{
    if (outlen < need) {
        mg_errf(err, errlen, "%%state: output buffer too small (%zu bytes)", outlen);
        return NULL;
    }
    char *o = out;
    *o++ = black ? 'b' : 'w';
    *o++ = ' ';
    for (int i = 0; i < squares; i++)
        o[i] = BOARD_CHARS[board[i] & 15];
    o += squares;
    *o++ = ' ';
    return o;
}

/* The clock groups at o and the terminating NUL; returns the length of the %state text from out. */
static size_t clocks_direct(char *out, char *o, unsigned long hm, unsigned long fm, char *err, size_t errlen)
{
    if (!put_fixed_raw(o, hm, 3) || !put_fixed_raw(o + 4, fm, 4)) {
        mg_errf(err, errlen, "%%state: clocks %lu %lu do not fit the fixed-width fields (3 and 4 digits)", hm, fm);
        return 0;
    }
    o[3] = ' ';
    o[8] = '\0';
    return (size_t)(o + 8 - out);
}

static size_t chess_direct(const void *st, char *out, size_t outlen, char *err, size_t errlen)
{
    const mg_chess_state *s = st;
    char *o = direct_side_board(s->stm, s->board, 64, 88, out, outlen, err, errlen);
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
    return clocks_direct(out, o, s->halfmove, s->fullmove, err, errlen);
}

/* Under game=chess, a chess state built with the Chess960 flag is written with the standard
 * letters KQkq when its castling rights mean the same as standard ones (the king on its e-file
 * square, the rook of each right in its standard corner), as the parser reads them; other Chess960
 * castling rights have no spelling under game=chess and are refused (the text would not read
 * back): such a position is a chess960 position. */
static int chess_std_expressible(const mg_chess_state *s, char *err, size_t errlen)
{
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

static size_t gardner_direct(const void *st, char *out, size_t outlen, char *err, size_t errlen)
{
    const mg_gardner_state *s = st;
    char *o = direct_side_board(s->side, s->board, 25, 48, out, outlen, err, errlen);
    return o ? clocks_direct(out, o, s->halfmove, s->fullmove, err, errlen) : 0;
}

/* ---- move tokens ------------------------------------------------------------------------- */

typedef char tok8[MG_MAV_MOVE_TOKEN_LEN];

static void add_tok(tok8 *out, int cap, int *n, const char *s)
{
    if (*n < cap) {
        size_t l = strlen(s);
        if (l >= MG_MAV_MOVE_TOKEN_LEN)
            l = MG_MAV_MOVE_TOKEN_LEN - 1;
        memcpy(out[*n], s, l);
        out[*n][l] = '\0';
    }
    (*n)++;
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

static int chess_like_tokens(int files, int ranks, tok8 *out, int cap)
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
                add_tok(out, cap, &n, s);
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

static int chess_like_syntax(int files, int ranks, const char *s, size_t n)
{
    if (n != 4 && n != 5)
        return 0;
    int ff, fr, tf, tr;
    if (parse_sq9(s, files, ranks, &ff, &fr) < 0 || parse_sq9(s + 2, files, ranks, &tf, &tr) < 0)
        return 0;
    return chess_like(files, ranks, ff, fr, tf, tr, n == 5 ? s[4] : 0) && (n == 4 || s[4] != 0);
}

static int chess_tokens(tok8 *out, int cap) { return chess_like_tokens(8, 8, out, cap); }
static int gardner_tokens(tok8 *out, int cap) { return chess_like_tokens(5, 5, out, cap); }
static int chess_syntax(const mg_config *cfg, const char *s, size_t n)
{
    (void)cfg;
    return chess_like_syntax(8, 8, s, n);
}
static int gardner_syntax(const mg_config *cfg, const char *s, size_t n)
{
    (void)cfg;
    return chess_like_syntax(5, 5, s, n);
}

static int ttt_tokens(tok8 *out, int cap)
{
    int n = 0;
    for (int i = 0; i < 9; i++) {
        char s[3] = {(char)('a' + i % 3), (char)('1' + i / 3), 0};
        add_tok(out, cap, &n, s);
    }
    return n;
}
static int ttt_syntax(const mg_config *cfg, const char *s, size_t n)
{
    (void)cfg;
    return n == 2 && s[0] >= 'a' && s[0] <= 'c' && s[1] >= '1' && s[1] <= '3';
}

static int c4_tokens(tok8 *out, int cap)
{
    int n = 0;
    for (int c = 0; c < 7; c++) {
        char s[2] = {(char)('1' + c), 0};
        add_tok(out, cap, &n, s);
    }
    return n;
}
static int c4_syntax(const mg_config *cfg, const char *s, size_t n)
{
    (void)cfg;
    return n == 1 && s[0] >= '1' && s[0] <= '7';
}

static int hex_tokens(tok8 *out, int cap)
{
    int n = 0;
    for (int r = 1; r <= HEX_MAX_N; r++)
        for (int c = 0; c < HEX_MAX_N; c++) {
            char s[32];
            snprintf(s, sizeof s, "%c%d", 'a' + c, r);
            add_tok(out, cap, &n, s);
        }
    add_tok(out, cap, &n, "swap");
    return n;
}
static int hex_syntax(const mg_config *cfg, const char *s, size_t n)
{
    int size = hex_cfg_size(cfg) ? hex_cfg_size(cfg) : HEX_MAX_N;
    if (n == 4 && memcmp(s, "swap", 4) == 0)
        return 1;
    if (n < 2 || n > 3 || s[0] < 'a' || s[0] >= 'a' + size || s[1] < '1' || s[1] > '9')
        return 0;
    int row = s[1] - '0';
    if (n == 3) {
        if (s[2] < '0' || s[2] > '9')
            return 0;
        row = row * 10 + (s[2] - '0');
    }
    return row >= 1 && row <= size;
}

/* ---- the table of games ------------------------------------------------------------------ */

typedef struct mav_fmt {
    const char *name;
    int has_fen;
    size_t (*to_state)(const mg_config *cfg, const char *text, char *out, size_t outlen, char *err, size_t errlen);
    size_t (*from_state)(const mg_config *cfg, const char *s, size_t n, char *out, size_t outlen, char *err,
                         size_t errlen);
    int (*tokens)(tok8 *out, int cap);
    int (*syntax)(const mg_config *cfg, const char *s, size_t n);
    /* optional: %state straight from the state bytes (must equal to_state(to_text(st))) */
    size_t (*direct)(const void *st, char *out, size_t outlen, char *err, size_t errlen);
} mav_fmt;

static const mav_fmt FORMATS[] = {
    {"chess", 1, chess_to_state_std, chess_from_state_std, chess_tokens, chess_syntax, chess_direct_std},
    {"chess960", 1, chess_to_state_960, chess_from_state_960, chess_tokens, chess_syntax, chess_direct},
    {"gardner", 1, gardner_to_state, gardner_from_state, gardner_tokens, gardner_syntax, gardner_direct},
    {"connect_four", 0, c4_to_state, c4_from_state, c4_tokens, c4_syntax, NULL},
    {"hex", 0, hex_to_state, hex_from_state, hex_tokens, hex_syntax, NULL},
    {"tictactoe", 0, ttt_to_state, ttt_from_state, ttt_tokens, ttt_syntax, NULL},
};
#define NFORMATS ((int)(sizeof FORMATS / sizeof FORMATS[0]))

static const mav_fmt *fmt_by_name(const char *name)
{
    /* called on every write: compare the first character before the names */
    for (int i = 0; i < NFORMATS; i++)
        if (FORMATS[i].name[0] == name[0] && strcmp(FORMATS[i].name, name) == 0)
            return &FORMATS[i];
    return NULL;
}

/* The format of game g, or NULL with an error message. */
static const mav_fmt *fmt_for_state(const mg_game *g, char *err, size_t errlen)
{
    const mav_fmt *f = fmt_by_name(g->name);
    if (!f)
        mg_errf(err, errlen, "the MAV format has no %%state text for game '%s'", g->name);
    return f;
}

int mg_mav_game_supported(const mg_game *g, int *has_fen)
{
    const mav_fmt *f = g ? fmt_by_name(g->name) : NULL;
    if (has_fen)
        *has_fen = f ? f->has_fen : 0;
    return f != NULL;
}

size_t mg_mav_state_from_game_text(const mg_game *g, const char *text, char *out, size_t outlen, char *err,
                                   size_t errlen)
{
    const mav_fmt *f = fmt_for_state(g, err, errlen);
    if (!f)
        return 0;
    return f->to_state(NULL, text, out, outlen, err, errlen);
}

size_t mg_mav_state_to_game_text(const mg_game *g, const mg_config *cfg, const char *st, size_t len, char *out,
                                 size_t outlen, char *err, size_t errlen)
{
    const mav_fmt *f = fmt_for_state(g, err, errlen);
    if (!f)
        return 0;
    return f->from_state(cfg, st, len, out, outlen, err, errlen);
}

size_t mg_mav_state_write(const mg_game *g, const void *state, char *out, size_t outlen, char *err, size_t errlen)
{
    const mav_fmt *f = fmt_by_name(g->name);
    if (f && f->direct)
        return f->direct(state, out, outlen, err, errlen);
    return mg_mav_state_write_via_text(g, state, out, outlen, err, errlen);
}

size_t mg_mav_state_write_via_text(const mg_game *g, const void *state, char *out, size_t outlen, char *err,
                                   size_t errlen)
{
    char text[MG_MAX_TEXT];
    g->to_text(state, text, sizeof text);
    return mg_mav_state_from_game_text(g, text, out, outlen, err, errlen);
}

int mg_mav_state_check(const mg_game *g, const void *state, char *err, size_t errlen)
{
    if (strcmp(g->name, "chess") == 0)
        return chess_std_expressible(state, err, errlen);
    return MG_OK;
}

int mg_mav_has_direct_state(const mg_game *g)
{
    const mav_fmt *f = fmt_by_name(g->name);
    return f && f->direct;
}

int mg_mav_state_read(const mg_game *g, const mg_config *cfg, const char *st, size_t len, void *state, char *err,
                      size_t errlen)
{
    char text[MG_MAX_TEXT];
    if (!mg_mav_state_to_game_text(g, cfg, st, len, text, sizeof text, err, errlen))
        return MG_ERR;
    return g->from_text(state, cfg, text, err, errlen);
}

int mg_mav_move_tokens(const char *game_name, char (*out)[MG_MAV_MOVE_TOKEN_LEN], int cap)
{
    const mav_fmt *f = fmt_by_name(game_name);
    return f ? f->tokens(out, cap) : 0;
}

int mg_mav_move_syntax(const mg_game *g, const mg_config *cfg, const char *s, size_t n)
{
    const mav_fmt *f = fmt_by_name(g->name);
    return f ? f->syntax(cfg, s, n) : 0;
}
