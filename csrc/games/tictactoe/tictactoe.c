/* tictactoe.c - tic-tac-toe (see tictactoe.h for encodings). */
#include "tictactoe.h"

#include <stdio.h>
#include <string.h>

#include "../../rng.h"

static const uint8_t LINES[8][3] = {
    {0, 1, 2}, {3, 4, 5}, {6, 7, 8}, {0, 3, 6}, {1, 4, 7}, {2, 5, 8}, {0, 4, 8}, {2, 4, 6},
};

/* 1 or 2 if that mark has a line, else 0. */
static int ttt_winner(const mg_ttt_state *s)
{
    for (int i = 0; i < 8; i++) {
        uint8_t c = s->cell[LINES[i][0]];
        if (c && c == s->cell[LINES[i][1]] && c == s->cell[LINES[i][2]])
            return c;
    }
    return 0;
}

static int ttt_init(void *st, const mg_config *cfg, char *err, size_t errlen)
{
    (void)cfg;
    (void)err;
    (void)errlen;
    memset(st, 0, sizeof(mg_ttt_state));
    return MG_OK;
}

static int ttt_from_text(void *st, const mg_config *cfg, const char *text, char *err, size_t errlen)
{
    (void)cfg;
    mg_ttt_state s;
    memset(&s, 0, sizeof s);
    const char *p = text;
    int nx = 0, no = 0;
    for (int row = 2; row >= 0; row--) {
        for (int col = 0; col < 3; col++, p++) {
            char c = *p;
            if (c == 'x' || c == 'X') {
                s.cell[row * 3 + col] = 1;
                nx++;
            } else if (c == 'o' || c == 'O') {
                s.cell[row * 3 + col] = 2;
                no++;
            } else if (c != '.') {
                snprintf(err, errlen, "tic-tac-toe text %s: expected 'x', 'o' or '.' at offset %d",
                         MG_QUOTE(text, 40), (int)(p - text));
                return MG_ERR;
            }
        }
        if (row > 0 && *p++ != '/') {
            snprintf(err, errlen, "tic-tac-toe text %s: expected '/' after row %d", MG_QUOTE(text, 40), 3 - row);
            return MG_ERR;
        }
    }
    if (*p != ' ' || (p[1] != 'x' && p[1] != 'o') || p[2] != '\0') {
        snprintf(err, errlen, "tic-tac-toe text %s: expected ' x' or ' o' (side to move) after the board",
                 MG_QUOTE(text, 40));
        return MG_ERR;
    }
    s.to_move = p[1] == 'o';
    if (!(nx == no || nx == no + 1)) {
        snprintf(err, errlen, "tic-tac-toe text %s: impossible counts (%d x, %d o)", MG_QUOTE(text, 40), nx, no);
        return MG_ERR;
    }
    if ((nx == no) != (s.to_move == 0)) {
        snprintf(err, errlen, "tic-tac-toe text %s: side to move '%c' does not match %d x and %d o", MG_QUOTE(text, 40),
                 p[1], nx, no);
        return MG_ERR;
    }
    s.nmoves = (uint8_t)(nx + no);
    /* Both having lines, or the winner not being the last mover, cannot happen in play. */
    int x_line = 0, o_line = 0;
    for (int i = 0; i < 8; i++) {
        uint8_t c = s.cell[LINES[i][0]];
        if (c && c == s.cell[LINES[i][1]] && c == s.cell[LINES[i][2]]) {
            x_line |= c == 1;
            o_line |= c == 2;
        }
    }
    if ((x_line && o_line) || (x_line && s.to_move != 1) || (o_line && s.to_move != 0)) {
        snprintf(err, errlen, "tic-tac-toe text %s: impossible position (play continued after a win)",
                 MG_QUOTE(text, 40));
        return MG_ERR;
    }
    memcpy(st, &s, sizeof s);
    return MG_OK;
}

static size_t ttt_to_text(const void *st, char *buf, size_t buflen)
{
    const mg_ttt_state *s = st;
    char tmp[16];
    size_t k = 0;
    for (int row = 2; row >= 0; row--) {
        for (int col = 0; col < 3; col++)
            tmp[k++] = ".xo"[s->cell[row * 3 + col]];
        if (row > 0)
            tmp[k++] = '/';
    }
    tmp[k++] = ' ';
    tmp[k++] = s->to_move ? 'o' : 'x';
    tmp[k] = '\0';
    return mg_text_out(buf, buflen, tmp, k);
}

static int ttt_legal_actions(const void *st, int32_t *out)
{
    const mg_ttt_state *s = st;
    if (ttt_winner(s))
        return 0;
    int n = 0;
    for (int i = 0; i < 9; i++)
        if (!s->cell[i])
            out[n++] = i;
    return n;
}

static int ttt_is_legal(const void *st, int32_t a)
{
    const mg_ttt_state *s = st;
    return a >= 0 && a < 9 && !s->cell[a] && !ttt_winner(s);
}

static void ttt_make(void *st, int32_t a, void *undo)
{
    (void)undo;
    mg_ttt_state *s = st;
    s->cell[a] = (uint8_t)(1 + s->to_move);
    s->to_move ^= 1;
    s->nmoves++;
}

static void ttt_unmake(void *st, int32_t a, const void *undo)
{
    (void)undo;
    mg_ttt_state *s = st;
    s->cell[a] = 0;
    s->to_move ^= 1;
    s->nmoves--;
}

static int ttt_to_move(const void *st) { return ((const mg_ttt_state *)st)->to_move; }

static int ttt_outcome(const void *st, int *reason)
{
    const mg_ttt_state *s = st;
    int w = ttt_winner(s);
    int r = MG_ONGOING, why = MG_TERM_NONE;
    if (w) {
        r = w == 1 ? MG_P0_WINS : MG_P1_WINS;
        why = MG_TERM_CONNECTED;
    } else if (s->nmoves == 9) {
        r = MG_DRAW;
        why = MG_TERM_BOARD_FULL;
    }
    if (reason)
        *reason = why;
    return r;
}

static uint64_t ttt_hash(const void *st)
{
    const mg_ttt_state *s = st;
    uint64_t x = s->to_move;
    for (int i = 0; i < 9; i++)
        x = x * 3 + s->cell[i];
    return mg_mix64(x);
}

static size_t ttt_action_to_str(const void *st, int32_t a, char *buf, size_t buflen)
{
    (void)st;
    if (a < 0 || a >= 9 || buflen < 3)
        return 0;
    buf[0] = (char)('a' + a % 3);
    buf[1] = (char)('1' + a / 3);
    buf[2] = '\0';
    return 2;
}

static int ttt_action_from_str(const void *st, const char *s, int32_t *a, char *err, size_t errlen)
{
    if (!(s[0] >= 'a' && s[0] <= 'c' && s[1] >= '1' && s[1] <= '3' && s[2] == '\0')) {
        snprintf(err, errlen, "invalid tic-tac-toe move %s: expected a cell a1..c3",
                 MG_QUOTE(s, MG_QUOTE_MAX));
        return MG_ERR;
    }
    int32_t m = (s[1] - '1') * 3 + (s[0] - 'a');
    if (!ttt_is_legal(st, m)) {
        snprintf(err, errlen, "illegal tic-tac-toe move '%s': %s", s,
                 ttt_winner(st) ? "the game is over" : "the cell is occupied");
        return MG_ERR;
    }
    *a = m;
    return MG_OK;
}

/* Planes (4 x 3 x 3): x, o, empty, side to move (all 1 when o is to move).  Row 0 is rank 3. */
static void ttt_obs_shape(const void *st, int shape[3])
{
    (void)st;
    shape[0] = 4;
    shape[1] = 3;
    shape[2] = 3;
}

static void ttt_observation(const void *st, float *out)
{
    const mg_ttt_state *s = st;
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++) {
            int i = r * 3 + c, v = s->cell[(2 - r) * 3 + c];
            out[i] = v == 1 ? 1.0f : 0.0f;
            out[9 + i] = v == 2 ? 1.0f : 0.0f;
            out[18 + i] = v == 0 ? 1.0f : 0.0f;
            out[27 + i] = (float)s->to_move;
        }
}

const mg_game mg_tictactoe = {
    .name = "tictactoe",
    .state_size = sizeof(mg_ttt_state),
    .undo_size = 0,
    .max_moves = 9,
    .num_actions = 9,
    .init = ttt_init,
    .from_text = ttt_from_text,
    .to_text = ttt_to_text,
    .legal_actions = ttt_legal_actions,
    .is_legal = ttt_is_legal,
    .make = ttt_make,
    .unmake = ttt_unmake,
    .to_move = ttt_to_move,
    .outcome = ttt_outcome,
    .hash = ttt_hash,
    .action_to_str = ttt_action_to_str,
    .action_from_str = ttt_action_from_str,
    .perft = NULL,
    .obs_shape = ttt_obs_shape,
    .observation = ttt_observation,
    .mav = &mg_tictactoe_mav,
};
