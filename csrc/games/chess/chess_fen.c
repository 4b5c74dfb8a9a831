/* chess_fen.c - FEN / X-FEN / Shredder-FEN reading and writing, Chess960 start positions (see chess.h). */
#include <stdio.h>
#include <string.h>

#include "bitboard.h"
#include "chess.h"
#include "../fen.h"

typedef mg_chess_state S;

#define FEN_ERR(...) MG_FEN_ERR("FEN", fen, __VA_ARGS__)

/* FEN letter of each piece code (fen.h). */
static const char LETTERS[] = " PNBRQK  pnbrqk";

/* Add castling right for `color` with its rook on `rsq`; the king is on `ksq`. */
static void add_right(S *s, int color, int ksq, int rsq)
{
    int right = 2 * color + (rsq < ksq);
    s->castling |= (uint8_t)(1u << right);
    s->castle_rook[right] = (uint8_t)rsq;
    s->cmask[rsq] |= (uint8_t)(1u << right);
    s->cmask[ksq] |= (uint8_t)(1u << right);
}

static int parse_castling(S *s, const char *fen, const char *f, size_t len, char *err, size_t errlen)
{
    if (len == 1 && f[0] == '-')
        return MG_OK;
    /* Shape: up to two white rights, then up to two black ones (as python-chess reads it). */
    size_t nw = 0, nb = 0;
    while (nw < len && f[nw] >= 'A' && f[nw] <= 'Z')
        nw++;
    while (nw + nb < len && f[nw + nb] >= 'a' && f[nw + nb] <= 'z')
        nb++;
    if (len == 0 || nw > 2 || nb > 2 || nw + nb != len) {
        for (size_t i = 0; i < len; i++) {
            char lc = (char)(f[i] | 0x20);
            if (!(lc == 'k' || lc == 'q' || (lc >= 'a' && lc <= 'h')))
                FEN_ERR("bad castling character '%c' in '%.*s'", f[i], (int)len, f);
        }
        FEN_ERR("castling field '%.*s' is not '-' or up to two white rights followed by up to two black ones",
                (int)len, f);
    }
    for (size_t i = 0; i < len; i++) {
        char c = f[i];
        int color = (c >= 'a' && c <= 'z');
        char lc = (char)(c | 0x20);
        if (!(lc == 'k' || lc == 'q' || (lc >= 'a' && lc <= 'h')))
            FEN_ERR("bad castling character '%c' in '%.*s'", c, (int)len, f);
        const char *cname = color ? "black" : "white";
        int back = color ? 56 : 0;
        uint64_t kings = s->bb[MG_CH_KING] & s->occ[color];
        uint64_t rooks = s->bb[MG_CH_ROOK] & s->occ[color] & (MG_BB_RANK_1 << back);
        if (!(kings & (MG_BB_RANK_1 << back)))
            FEN_ERR("castling right '%c' but the %s king is not on its back rank", c, cname);
        int ksq = mg_bb_lsb(kings), kfile = ksq & 7;
        int rsq = -1;
        if (!s->chess960) {
            int hside = lc == 'k' || lc == 'h';
            if (!(hside || lc == 'q' || lc == 'a'))
                FEN_ERR("castling right '%c' names a file other than a or h (Chess960 only)", c);
            if (kfile != 4)
                FEN_ERR("castling right '%c' but the %s king is not on e%c", c, cname, color ? '8' : '1');
            rsq = back + (hside ? 7 : 0);
            if (!(rooks & mg_bb_sq(rsq)))
                FEN_ERR("castling right '%c' but there is no %s rook on %c%c", c, cname, hside ? 'h' : 'a',
                        color ? '8' : '1');
        } else if (lc == 'k') {
            uint64_t r = rooks & ~((2ULL << ksq) - 1); /* rooks right of the king */
            if (!r)
                FEN_ERR("castling right '%c' but there is no %s rook on the king's h-side", c, cname);
            rsq = mg_bb_msb(r);
        } else if (lc == 'q') {
            uint64_t r = rooks & (mg_bb_sq(ksq) - 1);
            if (!r)
                FEN_ERR("castling right '%c' but there is no %s rook on the king's a-side", c, cname);
            rsq = mg_bb_lsb(r);
        } else {
            rsq = back + (lc - 'a');
            if (!(rooks & mg_bb_sq(rsq)))
                FEN_ERR("castling right '%c' but there is no %s rook on %c%c", c, cname, lc, color ? '8' : '1');
        }
        int right = 2 * color + (rsq < ksq);
        if ((s->castling & (1u << right)) && s->castle_rook[right] == rsq)
            continue; /* the same right twice (e.g. "Kh"): harmless */
        if (s->castling & (1u << right))
            FEN_ERR("castling field '%.*s' gives the %s %s-side right twice", (int)len, f, cname,
                    rsq < ksq ? "a" : "h");
        add_right(s, color, ksq, rsq);
    }
    return MG_OK;
}

int mg_chess_from_fen(S *out, int chess960, const char *fen, char *err, size_t errlen)
{
    S s;
    memset(&s, 0, sizeof s);
    for (int i = 0; i < 4; i++)
        s.castle_rook[i] = MG_CH_NO_SQ;
    s.ep = MG_CH_NO_SQ;
    s.chess960 = (uint8_t)(chess960 != 0);
    s.fullmove = 1;
    if (!fen)
        fen = "";

    /* 1. Fields, and the placement, rank 8 first. */
    const char *field[MG_FEN_FIELDS];
    size_t flen[MG_FEN_FIELDS];
    int nf;
    {
        char why[160];
        nf = mg_fen_read_board(fen, 8, 8, LETTERS, s.board, field, flen, why, sizeof why);
        if (nf < 0)
            FEN_ERR("%s", why);
    }
    for (int sq = 0; sq < 64; sq++) {
        int pc = s.board[sq];
        if (pc) {
            s.bb[0] |= mg_bb_sq(sq);
            s.bb[pc & 7] |= mg_bb_sq(sq);
            s.occ[pc >> 3] |= mg_bb_sq(sq);
        }
    }
    for (int c = 0; c < 2; c++) {
        int nk = mg_bb_count(s.bb[MG_CH_KING] & s.occ[c]);
        if (nk != 1)
            FEN_ERR("%s %s king%s", nk ? "more than one" : "no", c ? "black" : "white", nk ? "s" : "");
    }
    if (s.bb[MG_CH_PAWN] & (MG_BB_RANK_1 | MG_BB_RANK_8)) {
        int sq = mg_bb_lsb(s.bb[MG_CH_PAWN] & (MG_BB_RANK_1 | MG_BB_RANK_8));
        FEN_ERR("pawn on its back rank at %c%c", 'a' + (sq & 7), '1' + (sq >> 3));
    }
    /* Any number and kind of other pieces: MG_CHESS_MAX_MOVES bounds the moves of every placement. */

    /* 2. Side to move. */
    if (nf > 1) {
        if (flen[1] != 1 || (field[1][0] != 'w' && field[1][0] != 'b'))
            FEN_ERR("side to move '%.*s' is not 'w' or 'b'", (int)flen[1], field[1]);
        s.stm = field[1][0] == 'b';
    }
    {
        int other = s.stm ^ 1;
        int ksq = mg_bb_lsb(s.bb[MG_CH_KING] & s.occ[other]);
        if (mg_chess_attacked(&s, ksq, s.stm, s.bb[0]))
            FEN_ERR("the side not to move (%s) is in check", other ? "black" : "white");
    }

    /* 3. Castling. */
    if (nf > 2 && parse_castling(&s, fen, field[2], flen[2], err, errlen) != MG_OK)
        return MG_ERR;

    /* 4. En passant. */
    if (nf > 3 && !(flen[3] == 1 && field[3][0] == '-')) {
        const char *f = field[3];
        if (flen[3] != 2 || f[0] < 'a' || f[0] > 'h' || f[1] < '1' || f[1] > '8')
            FEN_ERR("bad en passant square '%.*s'", (int)flen[3], f);
        int ep = (f[0] - 'a') + 8 * (f[1] - '1');
        int want_rank = s.stm ? 2 : 5;
        if ((ep >> 3) != want_rank)
            FEN_ERR("en passant square '%.2s' is not on rank %d", f, want_rank + 1);
        int pushed = ep ^ 8;
        int origin = s.stm ? ep - 8 : ep + 8;
        int them = s.stm ^ 1;
        if (s.board[pushed] != (them << 3 | MG_CH_PAWN))
            FEN_ERR("en passant square '%.2s' without a %s pawn in front of it", f, them ? "black" : "white");
        if (s.board[ep] || s.board[origin])
            FEN_ERR("en passant square '%.2s' but the pawn's path is not empty", f);
        mg_chess_set_ep(&s, pushed);
    }

    /* 5, 6. Clocks. */
    if (nf > 4 && !mg_fen_uint(field[4], flen[4], &s.halfmove))
        FEN_ERR("bad halfmove clock '%.*s'", (int)flen[4], field[4]);
    if (nf > 5) {
        if (!mg_fen_uint(field[5], flen[5], &s.fullmove))
            FEN_ERR("bad fullmove number '%.*s'", (int)flen[5], field[5]);
        if (s.fullmove == 0)
            s.fullmove = 1;
    }

    s.hash = mg_chess_compute_hash(&s);
    s.hist[0] = s.hash;
    memcpy(out, &s, sizeof s);
    return MG_OK;
}

/* Castling field as python-chess's castling_xfen() writes it. */
static size_t castling_text(const S *s, char *buf)
{
    size_t k = 0;
    for (int color = 0; color < 2; color++) {
        int back = color ? 56 : 0;
        uint64_t rooks = s->bb[MG_CH_ROOK] & s->occ[color] & (MG_BB_RANK_1 << back);
        for (int side = 0; side < 2; side++) { /* h-side first */
            int right = 2 * color + side;
            if (!(s->castling & (1u << right)))
                continue;
            int rsq = s->castle_rook[right], rfile = rsq & 7;
            uint64_t outer = side ? (rooks & (mg_bb_sq(rsq) - 1)) : (rooks & ~((2ULL << rsq) - 1));
            char ch = outer ? (char)('a' + rfile) : (side ? 'q' : 'k');
            buf[k++] = color ? ch : (char)(ch - 32);
        }
    }
    if (!k)
        buf[k++] = '-';
    buf[k] = '\0';
    return k;
}

size_t mg_chess_to_fen(const S *s, char *buf, size_t buflen)
{
    char tmp[128];
    size_t k = mg_fen_board_write(s->board, 8, 8, LETTERS, tmp);
    tmp[k++] = ' ';
    tmp[k++] = s->stm ? 'b' : 'w';
    tmp[k++] = ' ';
    k += castling_text(s, tmp + k);
    tmp[k++] = ' ';
    if (s->ep != MG_CH_NO_SQ) {
        tmp[k++] = (char)('a' + (s->ep & 7));
        tmp[k++] = (char)('1' + (s->ep >> 3));
    } else {
        tmp[k++] = '-';
    }
    k += (size_t)snprintf(tmp + k, sizeof tmp - k, " %u %u", (unsigned)s->halfmove, (unsigned)s->fullmove);
    return mg_text_out(buf, buflen, tmp, k);
}

size_t mg_chess960_start_fen(int n, char *buf, size_t buflen)
{
    static const char KNIGHTS[10][2] = {{0, 1}, {0, 2}, {0, 3}, {0, 4}, {1, 2},
                                        {1, 3}, {1, 4}, {2, 3}, {2, 4}, {3, 4}};
    if (n < 0 || n > 959 || buflen < 64)
        return 0;
    char r[9] = {0};
    r[2 * (n % 4) + 1] = 'B';
    n /= 4;
    r[2 * (n % 4)] = 'B';
    n /= 4;
    int q = n % 6, kn = n / 6;
    int e = 0;
    for (int f = 0; f < 8; f++)
        if (!r[f] && e++ == q)
            r[f] = 'Q';
    e = 0;
    for (int f = 0; f < 8; f++)
        if (!r[f]) {
            if (e == KNIGHTS[kn][0] || e == KNIGHTS[kn][1])
                r[f] = 'N';
            e++;
        }
    const char *rest = "RKR";
    for (int f = 0; f < 8; f++)
        if (!r[f])
            r[f] = *rest++;
    char lower[9];
    for (int f = 0; f < 9; f++)
        lower[f] = r[f] ? (char)(r[f] | 0x20) : 0;
    int len = snprintf(buf, buflen, "%s/pppppppp/8/8/8/8/PPPPPPPP/%s w KQkq - 0 1", lower, r);
    return len > 0 ? (size_t)len : 0;
}
