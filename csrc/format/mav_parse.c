/*
 * mav_parse.c - the robust parser for MAV text (prompt + model output).
 *
 * Model output is untrusted: every read is bounded by the text length, any byte value is
 * accepted, and every malformed part gives an issue with its line, column and what was
 * expected.  Parsing goes on after an error wherever the structure allows, so that one bad
 * move does not hide the rest of the output.
 */
#include "mav.h"

#include <stdlib.h>

#include "mav_util.h"
#include "values.h"

typedef struct span {
    const char *p;
    size_t n;
    int line, col;   /* of the value's first byte */
} span;

typedef struct pctx {
    const mg_game *g;
    mg_config cfg;
    mg_mav_result *r;
    /* legal moves of the reference state, with a small hash table on their strings */
    int nl;
    int32_t legal[MG_MAX_MOVES];
    char lstr[MG_MAX_MOVES][MG_MAX_MOVE_STR];
    uint8_t llen[MG_MAX_MOVES];
    uint8_t lseen[MG_MAX_MOVES];
    int16_t table[1024];
    int ref_ready;   /* legal list computed */
} pctx;

static void issue(mg_mav_result *r, int line, int col, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
static void issue(mg_mav_result *r, int line, int col, const char *fmt, ...)
{
    r->ok = 0;
    va_list ap;
    va_start(ap, fmt);
    mg_issue_vadd(r->issues, MG_MAV_MAX_ISSUES, &r->n_issues, line, col, fmt, ap);
    va_end(ap);
}

static uint32_t str_hash(const char *s, size_t n)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 16777619u;
    return h;
}

/* Compute the legal moves of the reference state and their strings. */
static void ref_prepare(pctx *c)
{
    if (c->ref_ready)
        return;
    c->ref_ready = 1;
    const mg_game *g = c->g;
    mg_mav_result *r = c->r;
    r->ref_outcome = g->outcome(r->ref, NULL);
    c->nl = r->ref_outcome == MG_ONGOING ? g->legal_actions(r->ref, c->legal) : 0;
    r->ref_n_legal = c->nl;
    for (int i = 0; i < 1024; i++)
        c->table[i] = -1;
    for (int i = 0; i < c->nl; i++) {
        size_t n = g->action_to_str(r->ref, c->legal[i], c->lstr[i], MG_MAX_MOVE_STR);
        c->llen[i] = (uint8_t)n;
        c->lseen[i] = 0;
        uint32_t h = str_hash(c->lstr[i], n) & 1023;
        while (c->table[h] >= 0)
            h = (h + 1) & 1023;
        c->table[h] = (int16_t)i;
    }
}

/* Index of move s[0..n) among the legal moves, -1 if absent. */
static int ref_find(const pctx *c, const char *s, size_t n)
{
    if (n == 0 || n >= MG_MAX_MOVE_STR)
        return -1;
    uint32_t h = str_hash(s, n) & 1023;
    while (c->table[h] >= 0) {
        int i = c->table[h];
        if (c->llen[i] == n && memcmp(c->lstr[i], s, n) == 0)
            return i;
        h = (h + 1) & 1023;
    }
    return -1;
}

/* ---- states ------------------------------------------------------------------------------- */

static void slot_reset(mg_mav_slot *s)
{
    s->present = s->valid = s->is_input = 0;
    s->correct = -1;
    s->text[0] = s->ref_text[0] = '\0';
}

/* Parse a %state / %fen value into the slot (checking agreement with an earlier line). */
static void parse_state_value(pctx *c, int slot, int cmd, const span *v)
{
    const mg_game *g = c->g;
    mg_mav_result *r = c->r;
    mg_mav_slot *s = &r->slot[slot];
    char err[MG_ERRLEN] = "";
    _Alignas(16) unsigned char st[MG_MAX_STATE];
    int ok;
    int first = !s->present;
    s->present = 1;
    if (cmd == MG_MAV_FEN || cmd == MG_MAV_PREV_FEN) {
        char buf[MG_MAX_TEXT];
        if (v->n >= sizeof buf) {
            issue(r, v->line, v->col, "%s value is too long (%zu bytes)", mg_mav_cmd_name(cmd), v->n);
            s->valid = 0;
            return;
        }
        if (memchr(v->p, '\0', v->n)) {
            issue(r, v->line, v->col, "%s value contains a NUL byte", mg_mav_cmd_name(cmd));
            s->valid = 0;
            return;
        }
        memcpy(buf, v->p, v->n);
        buf[v->n] = '\0';
        ok = v->n > 0 && g->from_text(st, &c->cfg, buf, err, sizeof err) == MG_OK;
        if (!ok && v->n == 0)
            snprintf(err, sizeof err, "empty value");
    } else {
        ok = mg_mav_state_read(g, &c->cfg, v->p, v->n, st, err, sizeof err) == MG_OK;
    }
    if (!ok) {
        /* point at the offending character when the reader names it ("character N") */
        const char *msg = err;
        int col = v->col;
        if (strncmp(msg, "%state: ", 8) == 0)
            msg += 8;
        const char *ch = strstr(msg, "character ");
        if (ch) {
            long k = strtol(ch + 10, NULL, 10);
            if (k >= 1 && (size_t)k <= v->n + 1)
                col = v->col + (int)k - 1;
        }
        issue(r, v->line, col, "%s: %s", mg_mav_cmd_name(cmd), msg);
        s->valid = 0;
        return;
    }
    char text[MG_MAX_TEXT];
    g->to_text(st, text, sizeof text);
    if (first) {
        memcpy(s->state, st, g->state_size);
        memcpy(s->text, text, sizeof text);
        s->valid = 1;
    } else if (s->valid && strcmp(s->text, text) != 0) {
        issue(r, v->line, v->col, "%s describes '%.60s', but the line before describes '%.60s'", mg_mav_cmd_name(cmd),
              text, s->text);
        s->valid = 0;
    }
}

/* Classify a move string against the reference; fills status/action and marks duplicates. */
static int classify_move(pctx *c, const char *s, size_t n, int32_t *action, int *dup)
{
    mg_mav_result *r = c->r;
    *action = -1;
    *dup = 0;
    if (r->has_ref) {
        ref_prepare(c);
        int i = ref_find(c, s, n);
        if (i >= 0) {
            *action = c->legal[i];
            *dup = c->lseen[i]++ > 0;
            return MG_MAV_MOVE_LEGAL;
        }
    }
    int syn = n > 0 && n < MG_MAX_MOVE_STR && mg_mav_move_syntax(c->g, &c->cfg, s, n);
    if (!syn)
        return MG_MAV_MOVE_MALFORMED;
    return r->has_ref ? MG_MAV_MOVE_ILLEGAL : MG_MAV_MOVE_UNCHECKED;
}

/* Copies a move text (cut at MG_MAX_MOVE_STR - 1 bytes, NUL bytes kept); returns the length stored. */
static uint8_t copy_move(char *dst, const char *s, size_t n)
{
    if (n >= MG_MAX_MOVE_STR)
        n = MG_MAX_MOVE_STR - 1;
    memcpy(dst, s, n);
    dst[n] = '\0';
    return (uint8_t)n;
}

/* Find the reference state: explicit, or derived from valid input lines. */
static void set_reference(pctx *c, const void *ref)
{
    const mg_game *g = c->g;
    mg_mav_result *r = c->r;
    if (r->has_ref)
        return;
    if (ref) {
        memcpy(r->ref, ref, g->state_size);
        r->has_ref = 1;
        return;
    }
    if (r->spec.transition) {
        if (r->slot[MG_MAV_SLOT_PREV].valid && r->prev_action_id >= 0) {
            unsigned char undo[MG_MAX_UNDO];
            memcpy(r->ref, r->slot[MG_MAV_SLOT_PREV].state, g->state_size);
            g->make(r->ref, r->prev_action_id, undo);
            r->has_ref = 1;
        }
    } else if (r->slot[MG_MAV_SLOT_CUR].valid) {
        memcpy(r->ref, r->slot[MG_MAV_SLOT_CUR].state, g->state_size);
        r->has_ref = 1;
    }
}

/* ---- %top ------------------------------------------------------------------------------- */

static int is_ws(char ch) { return ch == ' ' || ch == '\t' || ch == '\r'; }

static void parse_top(pctx *c, const span *v)
{
    mg_mav_result *r = c->r;
    char q[64];
    const char *p = v->p;
    size_t n = v->n;
    r->top_present = 1;
    if (n >= 7 && memcmp(p, "invalid", 7) == 0 && (n == 7 || is_ws(p[7]) || p[7] == ':')) {
        r->top_outcome = 1;
        /* invalid : "<result>" */
        size_t i = 7;
        static const char *const results[3] = {"1-0", "0-1", "1/2-1/2"};
        static const int codes[3] = {MG_P0_WINS, MG_P1_WINS, MG_DRAW};
        if (n >= 11 && memcmp(p + 7, " : \"", 4) == 0) {
            i = 11;
            for (int k = 0; k < 3; k++) {
                size_t l = strlen(results[k]);
                if (n == i + l + 1 && memcmp(p + i, results[k], l) == 0 && p[i + l] == '"') {
                    r->outcome = codes[k];
                    return;
                }
            }
            issue(r, v->line, v->col + (int)i, "expected a result \"1-0\", \"0-1\" or \"1/2-1/2\" after 'invalid : ', got %s",
                  mg_quote(p + i - 1, n - i + 1, q, sizeof q, 16));
        } else {
            issue(r, v->line, v->col + 7, "expected ' : \"<result>\"' after 'invalid', got %s",
                  mg_quote(p + 7, n - 7, q, sizeof q, 16));
        }
        r->outcome = MG_ONGOING;
        return;
    }
    size_t i = 0;
    while (i < n) {
        while (i < n && is_ws(p[i]))
            i++;
        if (i >= n)
            break;
        size_t s = i;
        while (i < n && !is_ws(p[i]))
            i++;
        /* entry p[s..i): MOVE:<ctrlN> */
        int col = v->col + (int)s;
        if (r->n_moves >= MG_MAV_MAX_TOP) {
            issue(r, v->line, col, "more than %d entries in the %%top line; the rest is ignored", MG_MAV_MAX_TOP);
            break;
        }
        const char *colon = memchr(p + s, ':', i - s);
        size_t mlen = colon ? (size_t)(colon - (p + s)) : i - s;
        mg_mav_move *m = &r->moves[r->n_moves++];
        if (r->top_k > 0 && r->n_moves == r->top_k + 1) /* %top_k lists at most k moves (once per line) */
            issue(r, v->line, col, "the %%top_%d line lists more than %d moves (from entry %d on)", r->top_k, r->top_k,
                  r->n_moves);
        m->len = copy_move(m->move, p + s, mlen);
        m->line = v->line;
        m->col = col;
        m->bucket = -1;
        int dup;
        m->status = (uint8_t)classify_move(c, p + s, mlen, &m->action, &dup);
        m->duplicate = (uint8_t)dup;
        if (m->status == MG_MAV_MOVE_MALFORMED)
            issue(r, v->line, col, "%s is not a %s move", mg_quote(p + s, mlen, q, sizeof q, 16), c->g->name);
        if (!colon) {
            issue(r, v->line, col, "entry %s has no ':<ctrlN>' value", mg_quote(p + s, i - s, q, sizeof q, 16));
            continue;
        }
        const char *t = colon + 1;
        size_t tl = (size_t)(p + i - t);
        size_t vl = 0;
        int b = mg_mav_value_token(t, tl, &vl);
        if (vl != tl)
            b = -1; /* the value token must be the whole rest of the entry */
        if (b < 0) {
            char q2[64];
            issue(r, v->line, col + (int)mlen + 1, "expected a value token <ctrl0>..<ctrl63> after %s, got %s",
                  mg_quote(p + s, mlen + 1, q2, sizeof q2, 16), mg_quote(t, tl, q, sizeof q, 16));
        }
        m->bucket = (int16_t)b;
    }
    /* duplicates among non-legal entries (legal ones were marked by classify_move) */
    for (int a = 0; a < r->n_moves; a++) {
        mg_mav_move *m = &r->moves[a];
        if (m->status == MG_MAV_MOVE_LEGAL)
            continue;
        for (int b2 = 0; b2 < a; b2++)
            if (r->moves[b2].status != MG_MAV_MOVE_LEGAL && r->moves[b2].len == m->len &&
                memcmp(r->moves[b2].move, m->move, m->len) == 0) {
                m->duplicate = 1;
                break;
            }
    }
}

static void parse_best(pctx *c, const span *v)
{
    mg_mav_result *r = c->r;
    char q[64];
    r->best_present = 1;
    size_t n = v->n;
    if (n == 7 && memcmp(v->p, "invalid", 7) == 0) {
        r->best_invalid = 1;
        return;
    }
    copy_move(r->best, v->p, n);
    int dup;
    r->best_status = classify_move(c, v->p, n, &r->best_id, &dup);
    if (r->best_status == MG_MAV_MOVE_MALFORMED)
        issue(r, v->line, v->col, "%%best_action %s is not a %s move", mg_quote(v->p, n, q, sizeof q, 16),
              c->g->name);
}

static void parse_prev_action(pctx *c, const span *v)
{
    mg_mav_result *r = c->r;
    const mg_game *g = c->g;
    char q[64];
    copy_move(r->prev_action, v->p, v->n);
    if (!r->slot[MG_MAV_SLOT_PREV].valid) {
        issue(r, v->line, v->col, "%%prev_action cannot be checked: no valid previous state");
        return;
    }
    char buf[MG_MAX_MOVE_STR];
    char err[MG_ERRLEN] = "";
    int32_t a;
    if (v->n == 0 || v->n >= sizeof buf || memchr(v->p, '\0', v->n)) {
        issue(r, v->line, v->col, "%%prev_action %s is not a %s move", mg_quote(v->p, v->n, q, sizeof q, 16), g->name);
        return;
    }
    memcpy(buf, v->p, v->n);
    buf[v->n] = '\0';
    if (g->action_from_str(r->slot[MG_MAV_SLOT_PREV].state, buf, &a, err, sizeof err) != MG_OK) {
        issue(r, v->line, v->col, "%%prev_action: %s", err);
        return;
    }
    r->prev_action_id = a;
}

/* ---- header ------------------------------------------------------------------------------- */

static int parse_header(pctx *c, const char *p, size_t n)
{
    mg_mav_result *r = c->r;
    char q[64];
    static const char open[] = "<mav game=";
    const size_t ol = sizeof open - 1;
    if (n < ol || memcmp(p, open, ol) != 0) {
        issue(r, 1, 1, "expected the header '<mav game=...>', got %s", mg_quote(p, n, q, sizeof q, 20));
        return MG_ERR;
    }
    size_t i = ol, s = ol;
    while (i < n && p[i] != '>' && !is_ws(p[i]))
        i++;
    if (i >= n || p[i] != '>') {
        issue(r, 1, (int)i + 1, "expected '>' after the game name in the header");
        return MG_ERR;
    }
    char name[32];
    if (i - s == 0 || i - s >= sizeof name || memchr(p + s, '\0', i - s)) {
        issue(r, 1, (int)s + 1, "bad game name %s in the header", mg_quote(p + s, i - s, q, sizeof q, 20));
        return MG_ERR;
    }
    memcpy(name, p + s, i - s);
    name[i - s] = '\0';
    if (c->g) {
        if (strcmp(name, c->g->name) != 0) {
            issue(r, 1, (int)s + 1, "the header names game '%s', expected '%s'", name, c->g->name);
            return MG_ERR;
        }
    } else {
        c->g = mg_game_by_name(name);
        if (!c->g) {
            issue(r, 1, (int)s + 1, "unknown game '%s' in the header", name);
            return MG_ERR;
        }
        r->game = c->g;
    }
    i++;
    mg_mav_spec *spec = &r->spec;
    memset(spec, 0, sizeof *spec);
    int closed = 0, top_seen = 0;
    while (i < n) {
        while (i < n && is_ws(p[i]))
            i++;
        if (i >= n)
            break;
        s = i;
        while (i < n && !is_ws(p[i]))
            i++;
        if (i - s == 6 && memcmp(p + s, "</mav>", 6) == 0) {
            closed = 1;
            while (i < n && is_ws(p[i]))
                i++;
            if (i < n) {
                issue(r, 1, (int)i + 1, "unexpected text %s after '</mav>'", mg_quote(p + i, n - i, q, sizeof q, 20));
                return MG_ERR;
            }
            break;
        }
        int cmd, k;
        size_t l = mg_mav_match_cmd(p + s, i - s, &cmd, &k);
        if (l == 0 || l != i - s) {
            issue(r, 1, (int)s + 1, "unknown command %s in the header", mg_quote(p + s, i - s, q, sizeof q, 20));
            return MG_ERR;
        }
        if (spec->n >= MG_MAV_MAX_CMDS) {
            issue(r, 1, (int)s + 1, "too many commands in the header (at most %d)", MG_MAV_MAX_CMDS);
            return MG_ERR;
        }
        if (cmd == MG_MAV_TOP) {
            if (top_seen++) {
                issue(r, 1, (int)s + 1, "%%top appears twice in the header");
                return MG_ERR;
            }
            spec->top_k = k;
        }
        spec->cmd[spec->n++] = (uint8_t)cmd;
    }
    if (!closed) {
        issue(r, 1, (int)n + 1, "the header does not end with '</mav>'");
        return MG_ERR;
    }
    char err[MG_ERRLEN];
    if (mg_mav_spec_check(c->g, spec, err, sizeof err) != MG_OK) {
        issue(r, 1, 0, "%s", err);
        return MG_ERR;
    }
    return MG_OK;
}

/* ---- the whole text ------------------------------------------------------------------------ */

static void cmd_label(const mg_mav_spec *spec, int i, char *buf, size_t buflen)
{
    int c = spec->cmd[i];
    if (c == MG_MAV_TOP) {
        if (spec->top_k)
            snprintf(buf, buflen, "%%top_%d", spec->top_k);
        else
            snprintf(buf, buflen, "%%top_all");
    } else {
        snprintf(buf, buflen, "%s", mg_mav_cmd_name(c));
    }
}

void mg_mav_parse(const mg_game *g, const mg_config *cfg, const char *text, size_t len, const void *ref,
                  mg_mav_result *r)
{
    /* Reset the scalars (the large arrays are only read up to their counts). */
    r->game = g;
    memset(&r->cfg, 0, sizeof r->cfg);
    if (cfg)
        r->cfg = *cfg;
    r->header_ok = r->complete = 0;
    r->ok = 1;
    memset(&r->spec, 0, sizeof r->spec);
    for (int i = 0; i < MG_MAV_NSLOTS; i++)
        slot_reset(&r->slot[i]);
    r->prev_action[0] = '\0';
    r->prev_action_id = -1;
    r->top_present = r->top_k = r->top_outcome = r->n_moves = 0;
    r->outcome = MG_ONGOING;
    r->best_present = r->best_invalid = 0;
    r->best[0] = '\0';
    r->best_id = -1;
    r->best_status = MG_MAV_MOVE_MALFORMED;
    r->has_ref = 0;
    r->ref_n_legal = 0;
    r->ref_outcome = MG_ONGOING;
    r->n_illegal = r->n_malformed = r->n_duplicate = r->n_missing = r->n_correct = r->count_expected = 0;
    r->n_missing_listed = 0;
    r->outcome_correct = -1;
    r->n_issues = 0;
    if (!text)
        len = 0;

    pctx ctx_storage;
    pctx *c = &ctx_storage;
    c->g = g;
    c->cfg = r->cfg;
    c->r = r;
    c->ref_ready = 0;
    c->nl = 0;

    /* header line */
    size_t eol = 0;
    while (eol < len && text[eol] != '\n')
        eol++;
    if (len == 0) {
        issue(r, 0, 0, "empty text");
        return;
    }
    if (parse_header(c, text, eol) != MG_OK)
        return;
    g = c->g;
    r->header_ok = 1;
    const mg_mav_spec *spec = &r->spec;
    r->top_k = spec->top_k;

    /* body lines -> one span per command */
    span vals[MG_MAV_MAX_CMDS];
    int have[MG_MAV_MAX_CMDS];
    for (int i = 0; i < spec->n; i++)
        have[i] = 0;
    int ci = 0, line = 1;
    char q[64], lab[24], lab2[24];
    size_t pos = eol < len ? eol + 1 : len;
    while (pos < len) {
        line++;
        size_t e = pos;
        while (e < len && text[e] != '\n')
            e++;
        const char *lp = text + pos;
        size_t ln = e - pos;
        pos = e < len ? e + 1 : len;
        /* trailing whitespace ('\r' included) and blank lines are tolerated */
        while (ln > 0 && is_ws(lp[ln - 1]))
            ln--;
        if (ln == 0)
            continue;
        if (ci >= spec->n) {
            issue(r, line, 1, "unexpected text after the last command: %s", mg_quote(lp, ln, q, sizeof q, 24));
            break;
        }
        if (ln < 2 || lp[0] != '[' || lp[1] != '%') {
            cmd_label(spec, ci, lab, sizeof lab);
            issue(r, line, 1, "expected a line '[%s ...]', got %s", lab, mg_quote(lp, ln, q, sizeof q, 24));
            continue;
        }
        int cmd, k;
        size_t l = mg_mav_match_cmd(lp + 1, ln - 1, &cmd, &k);
        int j = -1;
        if (l) {
            for (int t = ci; t < spec->n; t++)
                if (spec->cmd[t] == cmd && (cmd != MG_MAV_TOP || k == spec->top_k)) {
                    j = t;
                    break;
                }
        }
        if (j < 0) {
            cmd_label(spec, ci, lab, sizeof lab);
            size_t w = 1;
            while (w < ln && !is_ws(lp[w]) && lp[w] != ']')
                w++;
            issue(r, line, 2, "expected [%s ...], got the command %s%s", lab, mg_quote(lp + 1, w - 1, q, sizeof q, 20),
                  l ? " (not in the header at this point)" : " (unknown)");
            continue;
        }
        for (int t = ci; t < j; t++) {
            cmd_label(spec, t, lab, sizeof lab);
            cmd_label(spec, j, lab2, sizeof lab2);
            issue(r, line, 1, "missing the [%s ...] line before [%s ...]", lab, lab2);
        }
        ci = j + 1;
        size_t vs = 1 + l;
        if (vs < ln && lp[vs] == ' ') {
            vs++;
        } else if (!(vs < ln && lp[vs] == ']')) {
            issue(r, line, (int)vs + 1, "expected a space after the command, got %s",
                  mg_quote(lp + vs, ln - vs, q, sizeof q, 8));
        }
        size_t ve = ln;
        if (lp[ln - 1] == ']') {
            ve = ln - 1;
        } else {
            issue(r, line, (int)ln + 1, "the line does not end with ']'");
        }
        if (ve < vs)
            ve = vs;
        vals[j].p = lp + vs;
        vals[j].n = ve - vs;
        vals[j].line = line;
        vals[j].col = (int)vs + 1;
        have[j] = 1;
    }
    r->complete = 1;
    for (int t = ci; t < spec->n; t++) {
        cmd_label(spec, t, lab, sizeof lab);
        issue(r, line + 1, 0, "missing the [%s ...] line at the end of the text", lab);
    }
    for (int t = 0; t < spec->n; t++)
        if (!have[t])
            r->complete = 0;

    /* evaluate in command order */
    int after_best = 0;
    for (int t = 0; t < spec->n; t++) {
        int cmd = spec->cmd[t];
        if (t == spec->best_pos)
            after_best = 1;
        int is_input = t < spec->n_inputs;
        if (!is_input)
            set_reference(c, ref);
        if (!have[t])
            continue;
        const span *v = &vals[t];
        switch (cmd) {
        case MG_MAV_PREV_STATE:
        case MG_MAV_PREV_FEN:
            parse_state_value(c, MG_MAV_SLOT_PREV, cmd, v);
            r->slot[MG_MAV_SLOT_PREV].is_input = 1;
            break;
        case MG_MAV_PREV_ACTION:
            parse_prev_action(c, v);
            break;
        case MG_MAV_STATE:
        case MG_MAV_FEN: {
            int slot = after_best ? MG_MAV_SLOT_AFTER : MG_MAV_SLOT_CUR;
            parse_state_value(c, slot, cmd == MG_MAV_STATE ? MG_MAV_STATE : MG_MAV_FEN, v);
            r->slot[slot].is_input = is_input;
            break;
        }
        case MG_MAV_TOP:
            parse_top(c, v);
            break;
        case MG_MAV_BEST_ACTION:
            parse_best(c, v);
            break;
        default:
            break;
        }
    }
    set_reference(c, ref);

    /* hallucination report against the reference */
    if (!r->has_ref)
        return;
    ref_prepare(c);
    char rtext[MG_MAX_TEXT];
    g->to_text(r->ref, rtext, sizeof rtext);
    mg_mav_slot *cur = &r->slot[MG_MAV_SLOT_CUR];
    memcpy(cur->ref_text, rtext, sizeof rtext);
    if (cur->present)
        cur->correct = cur->valid && strcmp(cur->text, rtext) == 0;
    int terminal = r->ref_outcome != MG_ONGOING;
    if (r->top_present) {
        r->count_expected = terminal ? 0 : mg_mav_top_count(spec, c->nl);
        for (int i = 0; i < r->n_moves; i++) {
            const mg_mav_move *m = &r->moves[i];
            r->n_illegal += m->status == MG_MAV_MOVE_ILLEGAL;
            r->n_malformed += m->status == MG_MAV_MOVE_MALFORMED;
            r->n_duplicate += m->duplicate;
            r->n_correct += m->status == MG_MAV_MOVE_LEGAL && !m->duplicate;
        }
        if (!terminal && r->count_expected == c->nl) {
            for (int i = 0; i < c->nl; i++)
                if (!c->lseen[i])
                    r->missing[r->n_missing++] = c->legal[i];
            r->n_missing_listed = r->n_missing;
        } else if (r->count_expected > r->n_correct) {
            r->n_missing = r->count_expected - r->n_correct;
        }
        r->outcome_correct = terminal ? (r->top_outcome && r->outcome == r->ref_outcome) : !r->top_outcome;
    } else if (r->best_present) {
        r->outcome_correct = terminal ? r->best_invalid : !r->best_invalid;
    }
    (void)q;
    /* the state after the best action */
    mg_mav_slot *after = &r->slot[MG_MAV_SLOT_AFTER];
    if (after->present) {
        if (!terminal && r->best_id >= 0) {
            _Alignas(16) unsigned char st[MG_MAX_STATE];
            unsigned char undo[MG_MAX_UNDO];
            memcpy(st, r->ref, g->state_size);
            g->make(st, r->best_id, undo);
            g->to_text(st, after->ref_text, sizeof after->ref_text);
            after->correct = after->valid && strcmp(after->text, after->ref_text) == 0;
        } else {
            after->correct = 0;
        }
    }
}

void mg_mav_metrics_add(mg_mav_metrics *m, const mg_mav_result *r)
{
    m->examples++;
    m->parsed_ok += r->ok;
    if (!r->header_ok || !r->has_ref)
        return;
    int terminal = r->ref_outcome != MG_ONGOING;
    if (r->spec.best_pos >= 0 && !terminal) {
        m->best_total++;
        m->best_legal += r->best_present && r->best_id >= 0;
    }
    if (r->spec.top_pos >= 0 && r->spec.top_k == 0 && !terminal) {
        m->top_all_examples++;
        if (r->top_present && !r->top_outcome) {
            m->top_listed += r->n_moves;
            m->top_correct += r->n_correct;
        }
        m->top_legal += r->ref_n_legal;
    }
    for (int s = MG_MAV_SLOT_CUR; s < MG_MAV_NSLOTS; s++) {
        const mg_mav_slot *sl = &r->slot[s];
        int expected_output = 0;
        if (s == MG_MAV_SLOT_CUR)
            expected_output = r->spec.transition;
        else
            expected_output = r->spec.best_pos >= 0 && r->spec.best_pos < r->spec.n - 1 && !terminal;
        if (!expected_output)
            continue;
        m->state_total++;
        m->state_correct += sl->correct == 1;
    }
    if (r->outcome_correct >= 0 && (terminal || r->top_outcome || r->best_invalid)) {
        m->outcome_total++;
        m->outcome_correct += r->outcome_correct == 1;
    }
}
