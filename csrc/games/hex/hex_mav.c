/*
 * hex_mav.c - the MAV %state codec of Hex (format/mav_codec.h, docs/format.md):
 *
 *   <side> <n*n cells a1..n1, a2..n2, ... (row 1 at the top, as the game names cells)>
 *
 * The board size is the number of cells (n*n for n in 1..19); under a configuration with a
 * board size, the %state must have that size.
 */
#include <string.h>

#include "../../format/mav_codec.h"
#include "hex.h"

static int hex_cfg_size(const mg_config *cfg) { return cfg && cfg->board_size > 0 ? cfg->board_size : 0; }

static size_t hex_to_state(const char *text, char *out, size_t outlen, char *err, size_t errlen)
{
    /* rows 1..n from the top, '/' separated, then " x" or " o" */
    char q[48];
    size_t len = strlen(text);
    int n = 0;
    while ((size_t)n < len && text[n] != '/' && text[n] != ' ')
        n++;
    if (n < 1 || n > MG_HEX_MAX_N || len != (size_t)(n * (n + 1) + 1)) {
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
    mg_mav_sb_begin(&b, out, outlen, side);
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
    return mg_mav_sb_done(&b, outlen, err, errlen);
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
    while (size < MG_HEX_MAX_N && (size_t)((size + 1) * (size + 1)) <= cells)
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
            mg_mav_square_name((int)i, size, sq);
            mg_errf(err, errlen, "%%state: character %zu (cell %s) in the board is %s, expected one of xo.", 3 + i, sq,
                    mg_quote(&s[2 + i], 1, q, sizeof q, 1));
            return 0;
        }
    }
    return mg_mav_grid_text(s + 2, size, size, 1, s[0], out, outlen, err, errlen);
}

static int hex_tokens(mg_mav_token *out, int cap)
{
    int n = 0;
    for (int r = 1; r <= MG_HEX_MAX_N; r++)
        for (int c = 0; c < MG_HEX_MAX_N; c++) {
            char s[32];
            snprintf(s, sizeof s, "%c%d", 'a' + c, r);
            mg_mav_add_token(out, cap, &n, s);
        }
    mg_mav_add_token(out, cap, &n, "swap");
    return n;
}
static int hex_syntax(const mg_config *cfg, const char *s, size_t n)
{
    int size = hex_cfg_size(cfg) ? hex_cfg_size(cfg) : MG_HEX_MAX_N;
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

const mg_mav_codec mg_hex_mav = {
    .to_state = hex_to_state,
    .from_state = hex_from_state,
    .tokens = hex_tokens,
    .syntax = hex_syntax,
};
