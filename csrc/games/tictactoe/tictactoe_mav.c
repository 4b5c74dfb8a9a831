/*
 * tictactoe_mav.c - the MAV %state codec of tic-tac-toe (format/mav_codec.h, docs/format.md):
 *
 *   <side> <9 cells a1..c3>
 */
#include <string.h>

#include "../../format/mav_codec.h"
#include "tictactoe.h"

static const mg_mav_group TTT_GROUPS[] = {
    {MG_MAV_G_CHARS, 1, 0, "xo", "side to move"},
    {MG_MAV_G_CHARS, 9, 3, "xo.", "board"},
};

static size_t ttt_to_state(const char *text, char *out, size_t outlen, char *err, size_t errlen)
{
    /* "x.o/.x./..o x": rows from rank 3 down. */
    char q[48];
    size_t n = strlen(text);
    if (n != 13 || text[3] != '/' || text[7] != '/' || text[11] != ' ' || (text[12] != 'x' && text[12] != 'o')) {
        mg_errf(err, errlen, "tic-tac-toe text %s: expected 'ccc/ccc/ccc s'", mg_quote(text, n, q, sizeof q, 20));
        return 0;
    }
    mg_sbuf b;
    mg_mav_sb_begin(&b, out, outlen, text[12]);
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
    return mg_mav_sb_done(&b, outlen, err, errlen);
}

static size_t ttt_from_state(const mg_config *cfg, const char *s, size_t n, char *out, size_t outlen, char *err,
                             size_t errlen)
{
    (void)cfg;
    return mg_mav_grid_from_state(TTT_GROUPS, 3, 3, s, n, out, outlen, err, errlen);
}

static int ttt_tokens(mg_mav_token *out, int cap)
{
    int n = 0;
    for (int i = 0; i < 9; i++) {
        char s[3] = {(char)('a' + i % 3), (char)('1' + i / 3), 0};
        mg_mav_add_token(out, cap, &n, s);
    }
    return n;
}

static int ttt_syntax(const mg_config *cfg, const char *s, size_t n)
{
    (void)cfg;
    return n == 2 && s[0] >= 'a' && s[0] <= 'c' && s[1] >= '1' && s[1] <= '3';
}

const mg_mav_codec mg_tictactoe_mav = {
    .to_state = ttt_to_state,
    .from_state = ttt_from_state,
    .tokens = ttt_tokens,
    .syntax = ttt_syntax,
};
