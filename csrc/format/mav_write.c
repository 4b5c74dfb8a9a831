/*
 * mav_write.c - MAV command lists (specs), header lines, prompts and targets.
 */
#include "mav.h"

#include <math.h>
#include <stdlib.h>

#include "mav_util.h"
#include "values.h"

static const char *const CMD_NAMES[MG_MAV_NCMD] = {
    "%prev_state", "%prev_fen", "%prev_action", "%state", "%fen", "%top_", "%best_action",
};

const char *mg_mav_cmd_name(int cmd) { return (cmd >= 0 && cmd < MG_MAV_NCMD) ? CMD_NAMES[cmd] : "?"; }

static int is_state_cmd(int c) { return c == MG_MAV_STATE || c == MG_MAV_FEN; }
static int is_prev_state_cmd(int c) { return c == MG_MAV_PREV_STATE || c == MG_MAV_PREV_FEN; }

static void spec_cmd_text(const mg_mav_spec *spec, int i, char *buf, size_t buflen)
{
    int c = spec->cmd[i];
    if (c == MG_MAV_TOP) {
        if (spec->top_k > 0)
            snprintf(buf, buflen, "%%top_%d", spec->top_k);
        else
            snprintf(buf, buflen, "%%top_all");
    } else {
        snprintf(buf, buflen, "%s", mg_mav_cmd_name(c));
    }
}

int mg_mav_spec_check(const mg_game *g, mg_mav_spec *spec, char *err, size_t errlen)
{
    int has_fen = 0;
    if (!mg_mav_game_supported(g, &has_fen)) {
        mg_errf(err, errlen, "the MAV format does not support game '%s'", g ? g->name : "(null)");
        return MG_ERR;
    }
    if (spec->n <= 0 || spec->n > MG_MAV_MAX_CMDS) {
        mg_errf(err, errlen, "a MAV command list needs 1..%d commands, got %d", MG_MAV_MAX_CMDS, spec->n);
        return MG_ERR;
    }
    for (int i = 0; i < spec->n; i++) {
        int c = spec->cmd[i];
        if (c >= MG_MAV_NCMD) {
            mg_errf(err, errlen, "unknown MAV command code %d at position %d", c, i + 1);
            return MG_ERR;
        }
        if ((c == MG_MAV_FEN || c == MG_MAV_PREV_FEN) && !has_fen) {
            mg_errf(err, errlen, "%s is only for games with a FEN (chess, chess960, gardner), not '%s'",
                    mg_mav_cmd_name(c), g->name);
            return MG_ERR;
        }
    }
    if (spec->top_k < 0 || spec->top_k > MG_MAV_MAX_K) {
        mg_errf(err, errlen, "%%top_k needs 1 <= k <= %d, got %d", MG_MAV_MAX_K, spec->top_k);
        return MG_ERR;
    }
    int i = 0, n = spec->n;
    char name[24];
    /* [ {%prev_state,%prev_fen}+ %prev_action ] */
    int seen = 0;
    spec->transition = 0;
    while (i < n && is_prev_state_cmd(spec->cmd[i])) {
        int bit = 1 << spec->cmd[i];
        if (seen & bit) {
            mg_errf(err, errlen, "%s appears twice in the command list", mg_mav_cmd_name(spec->cmd[i]));
            return MG_ERR;
        }
        seen |= bit;
        i++;
    }
    if (seen) {
        if (i >= n || spec->cmd[i] != MG_MAV_PREV_ACTION) {
            mg_errf(err, errlen, "the previous state (%%prev_state/%%prev_fen) must be followed by %%prev_action");
            return MG_ERR;
        }
        i++;
        spec->transition = 1;
    } else if (i < n && spec->cmd[i] == MG_MAV_PREV_ACTION) {
        mg_errf(err, errlen, "%%prev_action needs a previous state (%%prev_state or %%prev_fen) before it");
        return MG_ERR;
    }
    if (spec->transition)
        spec->n_inputs = i;
    /* {%state,%fen}+ */
    seen = 0;
    while (i < n && is_state_cmd(spec->cmd[i])) {
        int bit = 1 << spec->cmd[i];
        if (seen & bit) {
            mg_errf(err, errlen, "%s appears twice in a row of state commands", mg_mav_cmd_name(spec->cmd[i]));
            return MG_ERR;
        }
        seen |= bit;
        i++;
    }
    if (!seen) {
        spec_cmd_text(spec, i < n ? i : n - 1, name, sizeof name);
        mg_errf(err, errlen, "the command list needs the current state (%%state or %%fen)%s, got %s",
                spec->transition ? " after %prev_action" : " first", i < n ? name : "the end");
        return MG_ERR;
    }
    if (!spec->transition)
        spec->n_inputs = i;
    spec->top_pos = spec->best_pos = -1;
    if (i < n && spec->cmd[i] == MG_MAV_TOP)
        spec->top_pos = i++;
    if (i < n && spec->cmd[i] == MG_MAV_BEST_ACTION) {
        spec->best_pos = i++;
        seen = 0;
        while (i < n && is_state_cmd(spec->cmd[i])) {
            int bit = 1 << spec->cmd[i];
            if (seen & bit) {
                mg_errf(err, errlen, "%s appears twice after %%best_action", mg_mav_cmd_name(spec->cmd[i]));
                return MG_ERR;
            }
            seen |= bit;
            i++;
        }
    }
    if (i < n) {
        spec_cmd_text(spec, i, name, sizeof name);
        mg_errf(err, errlen, "command %s at position %d is out of order (expected: [prev states %%prev_action] "
                "states [%%top_k] [%%best_action [states]])", name, i + 1);
        return MG_ERR;
    }
    if (spec->n_inputs == n) {
        mg_errf(err, errlen, "the command list has no output command (add %%top_k, %%top_all or %%best_action)");
        return MG_ERR;
    }
    return MG_OK;
}

/* Match a command name at s; returns its length and the command (and k for %top_). */
size_t mg_mav_match_cmd(const char *s, size_t n, int *cmd, int *k)
{
    for (int c = 0; c < MG_MAV_NCMD; c++) {
        const char *name = CMD_NAMES[c];
        size_t l = strlen(name);
        if (n < l || memcmp(s, name, l) != 0)
            continue;
        if (c == MG_MAV_TOP) {
            if (n >= l + 3 && memcmp(s + l, "all", 3) == 0) {
                *cmd = c;
                *k = 0;
                return l + 3;
            }
            size_t d = 0;
            long v = 0;
            while (l + d < n && s[l + d] >= '0' && s[l + d] <= '9' && d < 6) {
                v = v * 10 + (s[l + d] - '0');
                d++;
            }
            if (d == 0 || s[l] == '0' || v > MG_MAV_MAX_K)
                return 0;
            *cmd = c;
            *k = (int)v;
            return l + d;
        }
        /* "%prev_state" vs "%prev_action": names are not prefixes of each other except %state/%fen. */
        *cmd = c;
        *k = 0;
        return l;
    }
    return 0;
}

int mg_mav_spec_parse(const mg_game *g, const char *cmds, mg_mav_spec *spec, char *err, size_t errlen)
{
    memset(spec, 0, sizeof *spec);
    const char *p = cmds;
    char q[48];
    int top_seen = 0;
    while (*p) {
        while (*p == ' ')
            p++;
        if (!*p)
            break;
        size_t wl = 0;
        while (p[wl] && p[wl] != ' ')
            wl++;
        int c, k;
        size_t l = mg_mav_match_cmd(p, wl, &c, &k);
        if (l == 0 || l != wl) {
            mg_errf(err, errlen, "unknown MAV command %s (expected %%prev_state, %%prev_fen, %%prev_action, %%state, "
                    "%%fen, %%top_<k>, %%top_all or %%best_action)", mg_quote(p, wl, q, sizeof q, 24));
            return MG_ERR;
        }
        if (spec->n >= MG_MAV_MAX_CMDS) {
            mg_errf(err, errlen, "too many MAV commands (at most %d)", MG_MAV_MAX_CMDS);
            return MG_ERR;
        }
        if (c == MG_MAV_TOP) {
            if (top_seen++) {
                mg_errf(err, errlen, "%%top appears twice in the command list");
                return MG_ERR;
            }
            spec->top_k = k;
        }
        spec->cmd[spec->n++] = (uint8_t)c;
        p += wl;
    }
    return mg_mav_spec_check(g, spec, err, errlen);
}

static void put_header(mg_sbuf *b, const mg_game *g, const mg_mav_spec *spec)
{
    mg_sb_puts(b, "<mav game=");
    mg_sb_puts(b, g->name);
    mg_sb_putc(b, '>');
    for (int i = 0; i < spec->n; i++) {
        int c = spec->cmd[i];
        mg_sb_putc(b, ' ');
        mg_sb_puts(b, mg_mav_cmd_name(c));
        if (c == MG_MAV_TOP) {
            if (spec->top_k > 0)
                mg_sb_putu(b, (unsigned long)spec->top_k);
            else
                mg_sb_puts(b, "all");
        }
    }
    mg_sb_puts(b, " </mav>\n");
}

size_t mg_mav_header(const mg_game *g, const mg_mav_spec *spec, char *buf, size_t buflen)
{
    mg_sbuf b;
    mg_sb_init(&b, buf, buflen);
    put_header(&b, g, spec);
    return mg_sb_finish(&b);
}

int mg_mav_top_count(const mg_mav_spec *spec, int n_legal)
{
    if (spec->top_k == 0 || spec->top_k > n_legal)
        return n_legal;
    return spec->top_k;
}

/* ---- writing ------------------------------------------------------------------------------ */

/* The game text of a state, computed once per state and written by both %fen and %state. */
typedef struct text_cache {
    int direct;       /* the game writes %state straight from the state bytes */
    const void *st;
    size_t len;
    char text[MG_MAX_TEXT];
} text_cache;

static const char *cached_text(text_cache *c, const mg_game *g, const void *st, size_t *len)
{
    if (c->st != st) {
        c->len = g->to_text(st, c->text, sizeof c->text);
        c->st = st;
    }
    *len = c->len;
    return c->text;
}

static int put_state_line(mg_sbuf *b, const mg_game *g, int cmd, const void *st, text_cache *tc, char *err,
                          size_t errlen)
{
    size_t tl;
    mg_sb_putc(b, '[');
    mg_sb_puts(b, mg_mav_cmd_name(cmd));
    mg_sb_putc(b, ' ');
    if (cmd == MG_MAV_FEN || cmd == MG_MAV_PREV_FEN) {
        const char *text = cached_text(tc, g, st, &tl);
        mg_sb_put(b, text, tl);
    } else {
        char out[MG_MAV_MAX_STATE_TEXT];
        size_t n = tc->direct ? mg_mav_state_write(g, st, out, sizeof out, err, errlen)
                              : mg_mav_state_from_game_text(g, cached_text(tc, g, st, &tl), out, sizeof out, err,
                                                            errlen);
        if (!n)
            return MG_ERR;
        mg_sb_put(b, out, n);
    }
    mg_sb_puts(b, "]\n");
    return MG_OK;
}

static int put_move(mg_sbuf *b, const mg_game *g, const void *st, int32_t a, char *err, size_t errlen)
{
    char m[MG_MAX_MOVE_STR];
    size_t n = g->action_to_str(st, a, m, sizeof m);
    if (!n) {
        mg_errf(err, errlen, "%d is not a valid %s action", (int)a, g->name);
        return MG_ERR;
    }
    mg_sb_put(b, m, n);
    return MG_OK;
}

typedef struct ranked {
    double v;
    int best;  /* 1 for the best action */
    int idx;
} ranked;

static int ranked_cmp(const void *pa, const void *pb)
{
    const ranked *a = pa, *b = pb;
    if (a->v != b->v)
        return a->v > b->v ? -1 : 1;
    if (a->best != b->best)
        return a->best ? -1 : 1;
    return (a->idx > b->idx) - (a->idx < b->idx);
}

/* The %top line and %best_action line need the annotation: check it and rank it. */
static int rank_annotation(const mg_game *g, const mg_mav_input *in, const int32_t *legal, int n_legal,
                           ranked *r, int32_t *best, char *err, size_t errlen)
{
    if (in->n < 0 || in->n > MG_MAX_MOVES || (in->n > 0 && (!in->actions || !in->values))) {
        mg_errf(err, errlen, "bad annotation: %d moves", in->n);
        return MG_ERR;
    }
    if (in->n == 0) {
        mg_errf(err, errlen, "no annotation: %%top/%%best_action need the values of the legal moves");
        return MG_ERR;
    }
    unsigned char seen[MG_MAX_MOVES];
    memset(seen, 0, sizeof seen);
    for (int i = 0; i < in->n; i++) {
        int32_t a = in->actions[i];
        int j = 0;
        while (j < n_legal && legal[j] != a)
            j++;
        if (j == n_legal) {
            mg_errf(err, errlen, "annotated action %d is not legal in the %s position", (int)a, g->name);
            return MG_ERR;
        }
        if (seen[j]) {
            mg_errf(err, errlen, "annotated action %d appears twice", (int)a);
            return MG_ERR;
        }
        seen[j] = 1;
        double v = in->values[i];
        if (!(v >= 0.0 && v <= 1.0)) {
            mg_errf(err, errlen, "value %g of annotated action %d is not a win probability in [0, 1]", v, (int)a);
            return MG_ERR;
        }
    }
    int32_t b = in->best;
    if (b >= 0) {
        int j = 0;
        while (j < in->n && in->actions[j] != b)
            j++;
        if (j == in->n) {
            mg_errf(err, errlen, "best action %d is not among the annotated moves", (int)b);
            return MG_ERR;
        }
    }
    for (int i = 0; i < in->n; i++) {
        r[i].v = in->values[i];
        r[i].best = in->actions[i] == b;
        r[i].idx = i;
    }
    qsort(r, (size_t)in->n, sizeof *r, ranked_cmp);
    *best = b >= 0 ? b : in->actions[r[0].idx];
    return MG_OK;
}

int mg_mav_reference_order(const mg_game *g, const mg_mav_input *in, int32_t *idx, char *err, size_t errlen)
{
    if (!in || !in->state) {
        mg_errf(err, errlen, "MAV reference order: no state");
        return -1;
    }
    int32_t legal[MG_MAX_MOVES];
    int n_legal = g->legal_actions(in->state, legal);
    ranked r[MG_MAX_MOVES];
    int32_t best;
    if (rank_annotation(g, in, legal, n_legal, r, &best, err, errlen) != MG_OK)
        return -1;
    for (int i = 0; i < in->n; i++)
        idx[i] = r[i].idx;
    return in->n;
}

long mg_mav_write(const mg_game *g, const mg_mav_spec *spec, const mg_mav_input *in, int parts, char *buf,
                  size_t buflen, char *err, size_t errlen)
{
    mg_sbuf b;
    mg_sb_init(&b, buf, buflen);
    if (!in || !in->state) {
        mg_errf(err, errlen, "MAV write: no current state");
        return -1;
    }
    const void *cur = in->state;
    if (mg_mav_state_check(g, cur, err, errlen) != MG_OK ||
        (in->prev && mg_mav_state_check(g, in->prev, err, errlen) != MG_OK))
        return -1;
    if (spec->transition) {
        if (!in->prev) {
            mg_errf(err, errlen, "MAV write: the command list starts with a previous state, but none was given");
            return -1;
        }
        /* prev + prev_action must give the current state. */
        char t1[MG_MAX_TEXT], t2[MG_MAX_TEXT];
        if (in->prev_action < 0 || in->prev_action >= g->num_actions || !g->is_legal(in->prev, in->prev_action)) {
            g->to_text(in->prev, t1, sizeof t1);
            mg_errf(err, errlen, "previous action %d is not legal in the previous position '%.120s'",
                    (int)in->prev_action, t1);
            return -1;
        }
        _Alignas(16) unsigned char nxt[MG_MAX_STATE];
        unsigned char undo[MG_MAX_UNDO];
        memcpy(nxt, in->prev, g->state_size);
        g->make(nxt, in->prev_action, undo);
        g->to_text(nxt, t1, sizeof t1);
        g->to_text(cur, t2, sizeof t2);
        if (strcmp(t1, t2) != 0) {
            mg_errf(err, errlen, "the previous position and action lead to '%.100s', not to the current position '%.100s'",
                    t1, t2);
            return -1;
        }
    }
    text_cache tc;
    tc.st = NULL;
    tc.direct = mg_mav_has_direct_state(g);
    _Alignas(16) unsigned char after[MG_MAX_STATE];
    int after_ready = 0;
    if (parts & MG_MAV_PART_PROMPT) {
        put_header(&b, g, spec);
        for (int i = 0; i < spec->n_inputs; i++) {
            int c = spec->cmd[i];
            if (c == MG_MAV_PREV_ACTION) {
                mg_sb_puts(&b, "[%prev_action ");
                if (put_move(&b, g, in->prev, in->prev_action, err, errlen) != MG_OK)
                    return -1;
                mg_sb_puts(&b, "]\n");
            } else {
                int sc = c == MG_MAV_PREV_STATE ? MG_MAV_PREV_STATE : c == MG_MAV_PREV_FEN ? MG_MAV_PREV_FEN : c;
                if (put_state_line(&b, g, sc, spec->transition ? in->prev : cur, &tc, err, errlen) != MG_OK)
                    return -1;
            }
        }
    }
    if (parts & MG_MAV_PART_TARGET) {
        int reason = 0;
        int res = g->outcome(cur, &reason);
        int32_t legal[MG_MAX_MOVES];
        int n_legal = 0;
        ranked r[MG_MAX_MOVES];
        int32_t best = -1;
        int need_ann = res == MG_ONGOING && (spec->top_pos >= 0 || spec->best_pos >= 0);
        if (need_ann) {
            n_legal = g->legal_actions(cur, legal);
            if (rank_annotation(g, in, legal, n_legal, r, &best, err, errlen) != MG_OK)
                return -1;
        }
        for (int i = spec->n_inputs; i < spec->n; i++) {
            int c = spec->cmd[i];
            if (i == spec->top_pos) {
                char name[24];
                spec_cmd_text(spec, i, name, sizeof name);
                mg_sb_putc(&b, '[');
                mg_sb_puts(&b, name);
                if (res != MG_ONGOING) {
                    mg_sb_puts(&b, " invalid : \"");
                    mg_sb_puts(&b, mg_result_string(res));
                    mg_sb_puts(&b, "\"]\n");
                    continue;
                }
                int m = mg_mav_top_count(spec, n_legal);
                if (m > in->n) {
                    mg_errf(err, errlen, "the annotation has %d of the %d legal moves; %s needs %d", in->n, n_legal,
                            name, m);
                    return -1;
                }
                if (in->order && in->norder != m) {
                    mg_errf(err, errlen, "display order has %d entries for %d moves", in->norder, m);
                    return -1;
                }
                if (in->order) {
                    unsigned char used[MG_MAX_MOVES];
                    memset(used, 0, (size_t)m);
                    for (int j = 0; j < m; j++) {
                        int32_t o = in->order[j];
                        if (o < 0 || o >= m || used[o]) {
                            mg_errf(err, errlen, "display order is not a permutation of 0..%d (entry %d is %d)",
                                    m - 1, j, (int)o);
                            return -1;
                        }
                        used[o] = 1;
                    }
                }
                for (int j = 0; j < m; j++) {
                    const ranked *e = &r[in->order ? in->order[j] : j];
                    mg_sb_putc(&b, ' ');
                    if (put_move(&b, g, cur, in->actions[e->idx], err, errlen) != MG_OK)
                        return -1;
                    mg_sb_puts(&b, ":<ctrl");
                    mg_sb_putu(&b, (unsigned long)mg_mav_bucket(e->v));
                    mg_sb_putc(&b, '>');
                }
                mg_sb_puts(&b, "]\n");
            } else if (i == spec->best_pos) {
                mg_sb_puts(&b, "[%best_action ");
                if (res != MG_ONGOING) {
                    mg_sb_puts(&b, "invalid");
                } else if (put_move(&b, g, cur, best, err, errlen) != MG_OK) {
                    return -1;
                }
                mg_sb_puts(&b, "]\n");
            } else if (spec->best_pos >= 0 && i > spec->best_pos) {
                /* the position after the best action */
                if (res != MG_ONGOING) {
                    mg_errf(err, errlen, "the position is terminal: no state after the best action");
                    return -1;
                }
                if (!after_ready) {
                    unsigned char undo[MG_MAX_UNDO];
                    memcpy(after, cur, g->state_size);
                    g->make(after, best, undo);
                    after_ready = 1;
                }
                if (put_state_line(&b, g, c, after, &tc, err, errlen) != MG_OK)
                    return -1;
            } else {
                if (put_state_line(&b, g, c, cur, &tc, err, errlen) != MG_OK)
                    return -1;
            }
        }
    }
    mg_sb_finish(&b);
    if (b.over) {
        mg_errf(err, errlen, "MAV write: output buffer of %zu bytes is too small", buflen);
        return -1;
    }
    return (long)b.len;
}
