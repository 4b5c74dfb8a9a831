/* fen.c - FEN fields, piece placement and counters shared by the chess family (see fen.h). */
#include "fen.h"

#include <stdio.h>
#include <string.h>

#include "../game.h"

static int is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

/* The character as a message shows it: 'x', or its byte value when it is not printable
 * ASCII (a byte of a UTF-8 sequence cut out alone would not be valid text). */
static const char *show_char(char c, char buf[16])
{
    unsigned char u = (unsigned char)c;
    if (u >= 0x20 && u < 0x7f)
        snprintf(buf, 16, "'%c'", c);
    else
        snprintf(buf, 16, "byte 0x%02x", u);
    return buf;
}

/* Position of piece letter c in `letters` (its code), 0 if c is no piece letter. */
static int letter_code(const char *letters, char c)
{
    if (c == ' ' || c == '\0')
        return 0;
    const char *l = strchr(letters, c);
    return l ? (int)(l - letters) : 0;
}

#define WHY(...)                                 \
    do {                                         \
        snprintf(why, whylen, __VA_ARGS__);      \
        return MG_ERR;                           \
    } while (0)

static int read_placement(const char *f, size_t len, int files, int ranks, const char *letters, uint8_t *board,
                          char *why, size_t whylen)
{
    const char *p = f, *end = f + len;
    char cb[16];
    memset(board, 0, (size_t)(files * ranks));
    for (int rank = ranks - 1; rank >= 0; rank--) {
        const char *rs = p;
        while (p < end && *p != '/')
            p++;
#define RANK MG_QUOTE_SPAN(rs, (size_t)(p - rs), 40)   /* the rank named in messages (cut after 40 bytes) */
        int file = 0, prev_digit = 0;
        for (const char *q = rs; q < p; q++) {
            char c = *q;
            if (c >= '0' && c <= '9') {
                if (c == '0' || c - '0' > files)
                    WHY("bad empty-square count '%c' in rank %d %s (expected 1..%d)", c, rank + 1, RANK, files);
                if (prev_digit)
                    WHY("two digits in a row in rank %d %s", rank + 1, RANK);
                file += c - '0';
                prev_digit = 1;
            } else {
                int code = letter_code(letters, c);
                if (!code)
                    WHY("bad piece letter %s in rank %d %s", show_char(c, cb), rank + 1, RANK);
                if (file < files)
                    board[rank * files + file] = (uint8_t)code;
                file++;
                prev_digit = 0;
            }
        }
        if (file != files)
            WHY("rank %d %s has %d squares, expected %d", rank + 1, RANK, file, files);
        if (rank > 0) {
            if (p >= end)
                WHY("board %s has %d ranks, expected %d", MG_QUOTE_SPAN(f, len, 40), ranks - rank, ranks);
            p++;
        }
    }
    if (p != end)
        WHY("board %s has more than %d ranks", MG_QUOTE_SPAN(f, len, 40), ranks);
#undef RANK
    return MG_OK;
}

int mg_fen_read_board(const char *text, int files, int ranks, const char *letters, uint8_t *board,
                      const char **field, size_t *len, char *why, size_t whylen)
{
    int n = 0;
    for (const char *p = text ? text : ""; *p;) {
        while (is_space(*p))
            p++;
        if (!*p)
            break;
        if (n == MG_FEN_FIELDS) {
            snprintf(why, whylen, "more than %d fields (extra %s)", MG_FEN_FIELDS, MG_QUOTE(p, 20));
            return -1;
        }
        field[n] = p;
        while (*p && !is_space(*p))
            p++;
        len[n] = (size_t)(p - field[n]);
        n++;
    }
    if (n == 0) {
        snprintf(why, whylen, "empty");
        return -1;
    }
    return read_placement(field[0], len[0], files, ranks, letters, board, why, whylen) == MG_OK ? n : -1;
}

size_t mg_fen_board_write(const uint8_t *board, int files, int ranks, const char *letters, char *out)
{
    size_t k = 0;
    for (int rank = ranks - 1; rank >= 0; rank--) {
        int empty = 0;
        for (int file = 0; file < files; file++) {
            uint8_t pc = board[rank * files + file];
            if (!pc) {
                empty++;
                continue;
            }
            if (empty)
                out[k++] = (char)('0' + empty);
            empty = 0;
            out[k++] = letters[pc];
        }
        if (empty)
            out[k++] = (char)('0' + empty);
        if (rank)
            out[k++] = '/';
    }
    return k;
}

int mg_fen_uint(const char *f, size_t len, uint32_t *v)
{
    if (len == 0 || len > 9)
        return 0;
    uint32_t x = 0;
    for (size_t i = 0; i < len; i++) {
        if (f[i] < '0' || f[i] > '9')
            return 0;
        x = x * 10 + (uint32_t)(f[i] - '0');
    }
    *v = x;
    return 1;
}
