/*
 * connect_four_mav.c - the MAV %state codec of Connect Four (format/mav_codec.h, docs/format.md):
 *
 *   <side> <42 cells a1..g1, a2..g2, ..., a6..g6 (row 1 at the bottom)>
 */
#include <string.h>

#include "../../format/mav_codec.h"
#include "connect_four.h"

static const mg_mav_group C4_GROUPS[] = {
    {MG_MAV_G_CHARS, 1, 0, "xo", "side to move"},
    {MG_MAV_G_CHARS, 42, 7, "xo.", "board"},
};

static size_t c4_to_state(const char *text, char *out, size_t outlen, char *err, size_t errlen)
{
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
    mg_mav_sb_begin(&b, out, outlen, side);
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
    return mg_mav_sb_done(&b, outlen, err, errlen);
}

static size_t c4_from_state(const mg_config *cfg, const char *s, size_t n, char *out, size_t outlen, char *err,
                            size_t errlen)
{
    (void)cfg;
    return mg_mav_grid_from_state(C4_GROUPS, 6, 7, s, n, out, outlen, err, errlen);
}

static int c4_tokens(mg_mav_token *out, int cap)
{
    int n = 0;
    for (int c = 0; c < 7; c++) {
        char s[2] = {(char)('1' + c), 0};
        mg_mav_add_token(out, cap, &n, s);
    }
    return n;
}

static int c4_syntax(const mg_config *cfg, const char *s, size_t n)
{
    (void)cfg;
    return n == 1 && s[0] >= '1' && s[0] <= '7';
}

const mg_mav_codec mg_connect_four_mav = {
    .to_state = c4_to_state,
    .from_state = c4_from_state,
    .tokens = c4_tokens,
    .syntax = c4_syntax,
};
