/* san.c - Standard Algebraic Notation for the chess family, over mg_san_ops (see san.h). */
#include "san.h"

#include <stdio.h>
#include <string.h>

const mg_san_ops *mg_san_ops_for(const char *game_name)
{
    const mg_game *g = game_name ? mg_game_by_name(game_name) : NULL;
    return g ? g->san : NULL;
}

static int is_piece_letter(char c) { return c && strchr("NBRQK", c) != NULL; }

static int legal_index(const int32_t *moves, int n, int32_t a)
{
    for (int i = 0; i < n; i++)
        if (moves[i] == a)
            return i;
    return -1;
}

size_t mg_san_write(const mg_san_ops *ops, const void *st, int32_t a, char *buf, size_t buflen)
{
    const mg_game *g = ops->game;
    int32_t moves[MG_MAX_MOVES];
    int n = g->legal_actions(st, moves);
    if (legal_index(moves, n, a) < 0 || buflen == 0)
        return 0;
    mg_move_info mi;
    ops->move_info(st, a, &mi);
    char tmp[32];
    size_t k = 0;
    if (mi.castle) {
        memcpy(tmp, mi.castle == 2 ? "O-O-O" : "O-O", mi.castle == 2 ? 5 : 3);
        k = mi.castle == 2 ? 5 : 3;
    } else {
        int files = ops->files;
        if (mi.piece != 'P') {
            tmp[k++] = mi.piece;
            /* Other pieces of the same kind that can reach the same square. */
            int same_rank = 0, same_file = 0, any = 0;
            for (int i = 0; i < n; i++) {
                if (moves[i] == a)
                    continue;
                mg_move_info o;
                ops->move_info(st, moves[i], &o);
                if (o.castle || o.piece != mi.piece || o.to != mi.to || o.from == mi.from)
                    continue;
                any = 1;
                same_rank |= o.from / files == mi.from / files;
                same_file |= o.from % files == mi.from % files;
            }
            if (any) {
                int column = same_rank || !same_file, row = same_file;
                if (column)
                    tmp[k++] = (char)('a' + mi.from % files);
                if (row)
                    tmp[k++] = (char)('1' + mi.from / files);
            }
        } else if (mi.capture) {
            tmp[k++] = (char)('a' + mi.from % files);
        }
        if (mi.capture)
            tmp[k++] = 'x';
        tmp[k++] = (char)('a' + mi.to % files);
        tmp[k++] = (char)('1' + mi.to / files);
        if (mi.promotion) {
            tmp[k++] = '=';
            tmp[k++] = mi.promotion;
        }
    }
    /* Check and mate marks. */
    _Alignas(16) unsigned char child[MG_MAX_STATE];
    _Alignas(16) unsigned char undo[MG_MAX_UNDO];
    memcpy(child, st, g->state_size);
    g->make(child, a, undo);
    if (ops->in_check(child))
        tmp[k++] = g->legal_actions(child, moves) == 0 ? '#' : '+';
    if (k >= buflen)
        k = buflen - 1;
    memcpy(buf, tmp, k);
    buf[k] = '\0';
    return k;
}

#define SAN_ERR(...)                                  \
    do {                                              \
        snprintf(err, errlen, __VA_ARGS__);           \
        return MG_ERR;                                \
    } while (0)

int mg_san_parse(const mg_san_ops *ops, const void *st, const char *san, int32_t *a, char *err, size_t errlen)
{
    const mg_game *g = ops->game;
    const int files = ops->files, ranks = ops->ranks;
    char pos[MG_MAX_TEXT];
    char s[24];
    size_t len = 0;
    while (len < sizeof s - 1 && san[len])
        len++;
    if (san[len] || len == 0)
        SAN_ERR("invalid SAN %s", MG_QUOTE(san, MG_QUOTE_MAX));
    memcpy(s, san, len + 1);
    /* Check, mate and annotation marks are accepted and ignored. */
    while (len > 0 && strchr("+#!?", s[len - 1]))
        s[--len] = '\0';

    int32_t moves[MG_MAX_MOVES];
    int n = g->legal_actions(st, moves);
    int castle = 0;
    if (!strcmp(s, "O-O") || !strcmp(s, "0-0"))
        castle = 1;
    else if (!strcmp(s, "O-O-O") || !strcmp(s, "0-0-0"))
        castle = 2;
    if (castle) {
        for (int i = 0; i < n; i++) {
            mg_move_info mi;
            ops->move_info(st, moves[i], &mi);
            if (mi.castle == castle) {
                *a = moves[i];
                return MG_OK;
            }
        }
        g->to_text(st, pos, sizeof pos);
        SAN_ERR("illegal SAN '%s': castling is not legal in %s", san, pos);
    }

    /* [piece][file][rank][x|-]square[[=]promotion] */
    size_t i = len;
    char promo = 0;
    if (i >= 3 && strchr("NBRQKnbrqk", s[i - 1]) && (s[i - 2] == '=' || (s[i - 2] >= '1' && s[i - 2] <= '9'))) {
        promo = (char)(s[i - 1] & ~0x20);
        i--;
        if (s[i - 1] == '=')
            i--;
    }
    int ok = i >= 2;
    int to = -1, from_file = -1, from_rank = -1;
    char piece = 0;
    if (ok) {
        int f = s[i - 2] - 'a', r = s[i - 1] - '1';
        ok = f >= 0 && f < files && r >= 0 && r < ranks;
        to = f + r * files;
        i -= 2;
    }
    if (ok && i > 0 && (s[i - 1] == 'x' || s[i - 1] == '-'))
        i--;
    size_t j = 0;
    if (ok && j < i && is_piece_letter(s[j]))
        piece = s[j++];
    if (ok && j < i && s[j] >= 'a' && s[j] < 'a' + files)
        from_file = s[j++] - 'a';
    if (ok && j < i && s[j] >= '1' && s[j] < '1' + ranks)
        from_rank = s[j++] - '1';
    if (!ok || j != i)
        SAN_ERR("invalid SAN '%s': expected e.g. e4, Nf3, exd5, Rad1, e8=Q, O-O", san);

    int found = -1, count = 0;
    for (int m = 0; m < n; m++) {
        mg_move_info mi;
        ops->move_info(st, moves[m], &mi);
        if (mi.castle || mi.to != to || (mi.promotion ? mi.promotion : 0) != promo)
            continue;
        if (from_file >= 0 && mi.from % files != from_file)
            continue;
        if (from_rank >= 0 && mi.from / files != from_rank)
            continue;
        if (piece) {
            if (mi.piece != piece)
                continue;
        } else if (!(from_file >= 0 && from_rank >= 0)) {
            /* A pawn move; without a file it is a push along the file. */
            if (mi.piece != 'P' || (from_file < 0 && mi.from % files != to % files))
                continue;
        }
        if (count++ == 0)
            found = m;
    }
    if (count == 1) {
        *a = moves[found];
        return MG_OK;
    }
    g->to_text(st, pos, sizeof pos);
    if (count == 0)
        SAN_ERR("illegal SAN '%s' in %s", san, pos);
    SAN_ERR("ambiguous SAN '%s' in %s", san, pos);
}
