/*
 * mav_state.c - the %state text of the MAV format and the move tokens, over each game's codec.
 *
 * %state is the game's position with one token per board field, every field at a constant
 * relative position: groups separated by single spaces, each group of fixed width (docs/format.md
 * lists every game's layout).  Each game writes its codec (format/mav_codec.h) in its own folder,
 * games/<game>/<game>_mav.c, and points mg_game.mav at it; this file holds the generic layout
 * helpers the codecs share and the public functions of mav.h, which reach a game's codec only
 * through g->mav.
 */
#include "mav_codec.h"

#include <stdlib.h>

/* ---- the %state layout (mav_codec.h) ---------------------------------------------------- */

void mg_mav_square_name(int idx, int files, char out[16])
{
    int f = idx % files, r = idx / files + 1;
    snprintf(out, 16, "%c%d", 'a' + f, r);
}

int mg_mav_read_groups(const char *s, size_t n, const mg_mav_group *g, int ng, size_t *pos, size_t *len, char *err,
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
        if (g[i].kind == MG_MAV_G_EP) {
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
            int okc = off < n && (g[i].kind == MG_MAV_G_DIGITS ? (c >= '0' && c <= '9') : (c && strchr(g[i].allowed, c)));
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
                mg_mav_square_name((int)k, g[i].files, sq);
                snprintf(where, sizeof where, " (square %s)", sq);
            }
            mg_errf(err, errlen, "%%state: character %zu%s in the %s is %s, expected %s%s", off + 1, where,
                    g[i].name, mg_quote(s + off, 1, q, sizeof q, 1), g[i].kind == MG_MAV_G_DIGITS ? "a digit" : "one of ",
                    g[i].kind == MG_MAV_G_DIGITS ? "" : g[i].allowed);
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

size_t mg_mav_sb_done(mg_sbuf *b, size_t outlen, char *err, size_t errlen)
{
    size_t len = mg_sb_finish(b);
    if (!len)
        mg_errf(err, errlen, "%%state: output buffer too small (%zu bytes)", outlen);
    return len;
}

void mg_mav_sb_begin(mg_sbuf *b, char *out, size_t outlen, char side)
{
    mg_sb_init(b, out, outlen);
    mg_sb_putc(b, side);
    mg_sb_putc(b, ' ');
}

size_t mg_mav_grid_text(const char *cells, int rows, int cols, int top_first, char side, char *out, size_t outlen,
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
    return mg_mav_sb_done(&b, outlen, err, errlen);
}

size_t mg_mav_grid_from_state(const mg_mav_group *groups, int rows, int cols, const char *s, size_t n, char *out,
                              size_t outlen, char *err, size_t errlen)
{
    size_t pos[2], len[2];
    if (mg_mav_read_groups(s, n, groups, 2, pos, len, err, errlen) != MG_OK)
        return 0;
    return mg_mav_grid_text(s + pos[1], rows, cols, 0, s[pos[0]], out, outlen, err, errlen);
}

int mg_mav_put_fixed(mg_sbuf *b, unsigned long v, int width)
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

unsigned long mg_mav_read_fixed(const char *s, size_t n)
{
    unsigned long v = 0;
    for (size_t i = 0; i < n; i++)
        v = v * 10 + (unsigned long)(s[i] - '0');
    return v;
}

void mg_mav_add_token(mg_mav_token *out, int cap, int *n, const char *s)
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

/* ---- the public functions (mav.h) ------------------------------------------------------------ */

/* The codec of game g, or NULL with an error message. */
static const mg_mav_codec *codec_for_state(const mg_game *g, char *err, size_t errlen)
{
    const mg_mav_codec *c = g->mav;
    if (!c)
        mg_errf(err, errlen, "the MAV format has no %%state text for game '%s'", g->name);
    return c;
}

int mg_mav_game_supported(const mg_game *g, int *has_fen)
{
    const mg_mav_codec *c = g ? g->mav : NULL;
    if (has_fen)
        *has_fen = c ? c->has_fen : 0;
    return c != NULL;
}

size_t mg_mav_state_from_game_text(const mg_game *g, const char *text, char *out, size_t outlen, char *err,
                                   size_t errlen)
{
    const mg_mav_codec *c = codec_for_state(g, err, errlen);
    if (!c)
        return 0;
    return c->to_state(text, out, outlen, err, errlen);
}

size_t mg_mav_state_to_game_text(const mg_game *g, const mg_config *cfg, const char *st, size_t len, char *out,
                                 size_t outlen, char *err, size_t errlen)
{
    const mg_mav_codec *c = codec_for_state(g, err, errlen);
    if (!c)
        return 0;
    return c->from_state(cfg, st, len, out, outlen, err, errlen);
}

size_t mg_mav_state_write(const mg_game *g, const void *state, char *out, size_t outlen, char *err, size_t errlen)
{
    const mg_mav_codec *c = g->mav;
    if (c && c->direct)
        return c->direct(state, out, outlen, err, errlen);
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
    const mg_mav_codec *c = g->mav;
    return c && c->check ? c->check(state, err, errlen) : MG_OK;
}

int mg_mav_has_direct_state(const mg_game *g)
{
    return g->mav && g->mav->direct;
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
    const mg_game *g = game_name ? mg_game_by_name(game_name) : NULL;
    return g && g->mav ? g->mav->tokens(out, cap) : 0;
}

int mg_mav_move_syntax(const mg_game *g, const mg_config *cfg, const char *s, size_t n)
{
    return g->mav ? g->mav->syntax(cfg, s, n) : 0;
}
