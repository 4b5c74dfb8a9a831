/*
 * mav_search.c - internal search traces (MAV-IS): the writer from an annotated tree and the
 * robust parser of model output.  The node evaluations are MAV texts: the writer produces them
 * with mg_mav_write and the parser reads them with mg_mav_parse (one reader of the format).
 */
#include "mav_search.h"

#include <stdlib.h>

#include "mav_util.h"
#include "values.h"

#define PATH_LEN (8 + MG_TRACE_MAX_DEPTH * MG_MAX_MOVE_STR)

/* The bucket of a finished game for the player to move in it (win 63, draw 32, loss 0). */
static int terminal_bucket(const mg_game *g, const void *st, int outcome)
{
    if (outcome == MG_DRAW)
        return mg_mav_bucket(0.5);
    if (!st)
        return 0; /* the side to move in a decided game has lost (every supported game) */
    int p = g->to_move(st);
    int won = (outcome == MG_P0_WINS && p == MG_P0) || (outcome == MG_P1_WINS && p == MG_P1);
    return won ? MG_MAV_BUCKETS - 1 : 0;
}

static void put_value(mg_sbuf *b, int bucket)
{
    mg_sb_puts(b, "<ctrl");
    mg_sb_putu(b, (unsigned long)bucket);
    mg_sb_putc(b, '>');
}

/* ---- writer -------------------------------------------------------------------------------- */

typedef struct wctx {
    const mg_game *g;
    const mg_trace_tree_node *nodes;
    int n_nodes, breadth, depth, form;
    mg_sbuf b;
    mg_mav_spec root_spec, child_spec;
    char *err;
    size_t errlen;
} wctx;

static void path_child(char *out, const char *parent, const char *move)
{
    size_t l = strlen(parent);
    memcpy(out, parent, l - 1); /* without '>' */
    out[l - 1] = ' ';
    size_t m = strlen(move);
    memcpy(out + l, move, m);
    out[l + m] = '>';
    out[l + m + 1] = '\0';
}

/* Write node `idx` (state st, reached from prev by action a; prev NULL at the root) and its
 * subtree; returns its value for its mover (bucket) or -1 with err. */
static int write_node(wctx *c, int idx, const void *st, const void *prev, int32_t a, int depth, const char *path,
                      mg_trace_choice *choice)
{
    const mg_game *g = c->g;
    const mg_trace_tree_node *nd = &c->nodes[idx];
    mg_mav_input in = {st, prev, a, nd->n, nd->actions, nd->values, nd->best, NULL, 0};
    mg_sb_puts(&c->b, MG_TRACE_EVAL);
    mg_sb_puts(&c->b, path);
    mg_sb_putc(&c->b, '\n');
    char *dst = c->b.p + c->b.len;
    size_t room = c->b.cap > c->b.len ? c->b.cap - c->b.len : 0;
    int full = prev && c->form == MG_TRACE_FORM_FULL;
    long w = mg_mav_write(g, prev ? &c->child_spec : &c->root_spec, &in, full ? MG_MAV_PART_ALL : MG_MAV_PART_TARGET,
                          dst, room, c->err, c->errlen);
    if (w > 0 && full) {
        /* the full form: the transition form's input lines, without its header line */
        const char *nl = memchr(dst, '\n', (size_t)w);
        size_t h = nl ? (size_t)(nl - dst) + 1 : 0;
        memmove(dst, dst + h, (size_t)w - h + 1);
        w -= (long)h;
    }
    if (w < 0) {
        if (strstr(c->err, "too small")) {
            c->b.over = 1;
            return 0;
        }
        char e[MG_ERRLEN];
        snprintf(e, sizeof e, "node %s: %s", path, c->err);
        mg_errf(c->err, c->errlen, "%s", e);
        return -1;
    }
    c->b.len += (size_t)w;
    int res = g->outcome(st, NULL);
    if (res != MG_ONGOING) {
        if (!prev) {
            mg_errf(c->err, c->errlen, "the root position is finished: no search trace");
            return -1;
        }
        return terminal_bucket(g, st, res);
    }
    int32_t order[MG_MAX_MOVES];
    if (mg_mav_reference_order(g, &in, order, c->err, c->errlen) < 0)
        return -1;
    int32_t legal[MG_MAX_MOVES];
    int n_legal = g->legal_actions(st, legal);
    char mv[MG_MAX_MOVE_STR];
    if (depth >= c->depth) {
        /* a leaf: its value is the best of its own evaluation */
        int32_t best = nd->actions[order[0]];
        int v = mg_mav_bucket(nd->values[order[0]]);
        g->action_to_str(st, best, mv, sizeof mv);
        mg_sb_puts(&c->b, MG_TRACE_DECISION);
        mg_sb_puts(&c->b, path);
        mg_sb_puts(&c->b, "\n" MG_TRACE_SELECT);
        mg_sb_puts(&c->b, mv);
        mg_sb_puts(&c->b, " : \"");
        put_value(&c->b, v);
        mg_sb_puts(&c->b, "\"\n");
        return v;
    }
    int k = n_legal < c->breadth ? n_legal : c->breadth;
    if (nd->n < k) {
        mg_errf(c->err, c->errlen, "node %s: the annotation has %d of the %d legal moves", path, nd->n, n_legal);
        return -1;
    }
    int kids[MG_TRACE_MAX_BREADTH];
    char kpath[MG_TRACE_MAX_BREADTH][PATH_LEN];
    char kmove[MG_TRACE_MAX_BREADTH][MG_MAX_MOVE_STR];
    mg_sb_puts(&c->b, MG_TRACE_EXPAND);
    mg_sb_puts(&c->b, path);
    mg_sb_putc(&c->b, ':');
    for (int i = 0; i < k; i++) {
        int32_t m = nd->actions[order[i]];
        int j = 1;
        while (j < c->n_nodes && !(c->nodes[j].parent == idx && c->nodes[j].action == m))
            j++;
        g->action_to_str(st, m, kmove[i], MG_MAX_MOVE_STR);
        if (j == c->n_nodes) {
            mg_errf(c->err, c->errlen, "node %s: the tree has no child for its move %s (one of its top %d)", path,
                    kmove[i], k);
            return -1;
        }
        kids[i] = j;
        path_child(kpath[i], path, kmove[i]);
        mg_sb_putc(&c->b, ' ');
        mg_sb_puts(&c->b, kpath[i]);
    }
    mg_sb_putc(&c->b, '\n');
    int vals[MG_TRACE_MAX_BREADTH];
    _Alignas(16) unsigned char child[MG_MAX_STATE];
    unsigned char undo[MG_MAX_UNDO];
    for (int i = 0; i < k; i++) {
        int32_t m = c->nodes[kids[i]].action;
        memcpy(child, st, g->state_size);
        g->make(child, m, undo);
        int v = write_node(c, kids[i], child, st, m, depth + 1, kpath[i], NULL);
        if (v < 0)
            return -1;
        vals[i] = MG_MAV_BUCKETS - 1 - v;
    }
    int sel = 0;
    for (int i = 1; i < k; i++)
        if (vals[i] > vals[sel])
            sel = i;
    mg_sb_puts(&c->b, MG_TRACE_DECISION);
    mg_sb_puts(&c->b, path);
    mg_sb_putc(&c->b, '\n');
    for (int i = 0; i < k; i++) {
        if (i)
            mg_sb_putc(&c->b, ' ');
        mg_sb_puts(&c->b, kmove[i]);
        mg_sb_putc(&c->b, ':');
        put_value(&c->b, vals[i]);
    }
    mg_sb_puts(&c->b, "\n" MG_TRACE_SELECT);
    mg_sb_puts(&c->b, kmove[sel]);
    mg_sb_puts(&c->b, " : \"");
    put_value(&c->b, vals[sel]);
    mg_sb_puts(&c->b, "\"\n");
    if (choice) {
        choice->value = vals[sel];
        choice->n = 0;
        for (int i = 0; i < k; i++)
            if (vals[i] == vals[sel])
                choice->actions[choice->n++] = c->nodes[kids[i]].action;
    }
    if (!prev) {
        mg_sb_puts(&c->b, MG_TRACE_PLAY);
        mg_sb_puts(&c->b, kmove[sel]);
        mg_sb_puts(&c->b, "!\n");
    }
    return vals[sel];
}

long mg_trace_write(const mg_game *g, const void *root, const mg_trace_tree_node *nodes, int n_nodes, int breadth,
                    int depth, int form, int parts, char *buf, size_t buflen, mg_trace_choice *choice, char *err,
                    size_t errlen)
{
    wctx c;
    memset(&c, 0, sizeof c);
    c.g = g;
    c.nodes = nodes;
    c.n_nodes = n_nodes;
    c.breadth = breadth;
    c.depth = depth;
    c.form = form;
    c.err = err;
    c.errlen = errlen;
    mg_sb_init(&c.b, buf, buflen);
    if (breadth < 1 || breadth > MG_TRACE_MAX_BREADTH || depth < 1 || depth > MG_TRACE_MAX_DEPTH) {
        mg_errf(err, errlen, "a search trace needs breadth 1..%d and depth 1..%d, got breadth=%d depth=%d",
                MG_TRACE_MAX_BREADTH, MG_TRACE_MAX_DEPTH, breadth, depth);
        return -1;
    }
    if (form != MG_TRACE_FORM_SHORT && form != MG_TRACE_FORM_FULL) {
        mg_errf(err, errlen, "unknown trace child form %d (0 short, 1 full)", form);
        return -1;
    }
    if (!root || !nodes || n_nodes < 1 || nodes[0].parent != -1) {
        mg_errf(err, errlen, "a search tree needs its root as node 0 (parent -1)");
        return -1;
    }
    for (int i = 1; i < n_nodes; i++)
        if (nodes[i].parent < 0 || nodes[i].parent >= i) {
            mg_errf(err, errlen, "tree node %d: parent %d is not an earlier node", i, nodes[i].parent);
            return -1;
        }
    if (mg_mav_spec_parse(g, MG_TRACE_ROOT_COMMANDS, &c.root_spec, err, errlen) != MG_OK ||
        mg_mav_spec_parse(g, MG_TRACE_CHILD_COMMANDS, &c.child_spec, err, errlen) != MG_OK)
        return -1;
    if (parts & MG_MAV_PART_PROMPT) {
        mg_sb_puts(&c.b, MG_TRACE_PREAMBLE);
        mg_sb_putu(&c.b, (unsigned long)breadth);
        mg_sb_puts(&c.b, MG_TRACE_DEPTH);
        mg_sb_putu(&c.b, (unsigned long)depth);
        mg_sb_putc(&c.b, '\n');
        mg_mav_input in = {root, NULL, -1, 0, NULL, NULL, -1, NULL, 0};
        char *dst = c.b.p + c.b.len;
        size_t room = c.b.cap > c.b.len ? c.b.cap - c.b.len : 0;
        long w = mg_mav_write(g, &c.root_spec, &in, MG_MAV_PART_PROMPT, dst, room, err, errlen);
        if (w < 0 && !strstr(err, "too small"))
            return -1;
        if (w < 0)
            c.b.over = 1;
        else
            c.b.len += (size_t)w;
    }
    mg_trace_choice local;
    if (parts & MG_MAV_PART_TARGET) {
        if (write_node(&c, 0, root, NULL, -1, 0, MG_TRACE_ROOT, choice ? choice : &local) < 0)
            return -1;
    } else if (choice) {
        choice->n = 0;
    }
    mg_sb_finish(&c.b);
    if (c.b.over) {
        mg_errf(err, errlen, "search trace: output buffer of %zu bytes is too small", buflen);
        return -1;
    }
    return (long)c.b.len;
}

/* ---- parser ------------------------------------------------------------------------------- */

typedef struct line {
    const char *p;
    size_t n;
    int no; /* 1-based */
} line;

typedef struct pctx {
    const mg_game *g;
    mg_trace_result *r;
    const char *text;
    size_t len, pos;
    int line_no;
    int stop; /* a structural error: the rest is not read */
    mg_mav_spec root_spec, child_spec;
    char header[256];
    line header_line, state_line;
} pctx;

static void issue(mg_trace_result *r, int line, int col, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
static void issue(mg_trace_result *r, int line, int col, const char *fmt, ...)
{
    r->ok = 0;
    va_list ap;
    va_start(ap, fmt);
    mg_issue_vadd(r->issues, MG_TRACE_MAX_ISSUES, &r->n_issues, line, col, fmt, ap);
    va_end(ap);
}

/* The next line (without '\n'); 0 at the end of the text. */
static int peek(const pctx *c, line *l)
{
    if (c->pos >= c->len)
        return 0;
    const char *s = c->text + c->pos;
    const char *e = memchr(s, '\n', c->len - c->pos);
    l->p = s;
    l->n = e ? (size_t)(e - s) : c->len - c->pos;
    l->no = c->line_no + 1;
    return 1;
}

static void advance(pctx *c, const line *l)
{
    c->pos += l->n + (c->pos + l->n < c->len);
    c->line_no++;
}

static int starts(const line *l, const char *s)
{
    size_t n = strlen(s);
    return l->n >= n && memcmp(l->p, s, n) == 0;
}

/* Read a non-negative decimal number at p[*i..n) (at most 4 digits); -1 if none. */
static int read_num(const char *p, size_t n, size_t *i)
{
    int v = 0, d = 0;
    while (*i < n && p[*i] >= '0' && p[*i] <= '9' && d < 4) {
        v = v * 10 + (p[*i] - '0');
        (*i)++;
        d++;
    }
    return d ? v : -1;
}

/* Expect "<prefix><path>" + rest at line l; returns the offset after the path or 0. */
static size_t match_path_line(const line *l, const char *prefix, const char *path)
{
    size_t a = strlen(prefix), b = strlen(path);
    if (l->n < a + b || memcmp(l->p, prefix, a) != 0 || memcmp(l->p + a, path, b) != 0)
        return 0;
    return a + b;
}

/* Copy a move text of at most MG_MAX_MOVE_STR - 1 bytes; 0 if too long or empty. */
static int copy_move(char *dst, const char *s, size_t n)
{
    if (n == 0 || n >= MG_MAX_MOVE_STR || memchr(s, '\0', n))
        return 0;
    memcpy(dst, s, n);
    dst[n] = '\0';
    return 1;
}

/* The action of a move text in state st (NULL: unknown), -1 if not legal. */
static int32_t legal_action(const mg_game *g, const void *st, const char *mv)
{
    if (!st || !mv[0])
        return -1;
    int32_t a;
    char err[8];
    if (g->action_from_str(st, mv, &a, err, sizeof err) != MG_OK || !g->is_legal(st, a))
        return -1;
    return a;
}

/* "move : "<ctrlN>"" after "Selecting "; fills node->selected and selected_bucket. */
static int parse_selecting(pctx *c, mg_trace_node *nd)
{
    line l;
    if (!peek(c, &l) || !starts(&l, MG_TRACE_SELECT)) {
        issue(c->r, c->line_no + 1, 1, "expected 'Selecting <move> : \"<ctrlN>\"' for node line %d", nd->line);
        return 0;
    }
    advance(c, &l);
    size_t i = 10, s = i;
    while (i < l.n && l.p[i] != ' ')
        i++;
    size_t vl = 0;
    int b = -1;
    if (!copy_move(nd->selected, l.p + s, i - s) || l.n < i + 5 || memcmp(l.p + i, " : \"", 4) != 0 ||
        (b = mg_mav_value_token(l.p + i + 4, l.n - i - 4, &vl)) < 0 || i + 4 + vl + 1 != l.n ||
        l.p[l.n - 1] != '"') {
        issue(c->r, l.no, (int)s + 1, "malformed Selecting line (expected 'Selecting <move> : \"<ctrlN>\"')");
        nd->selected_bucket = -1;
        return 0;
    }
    nd->selected_bucket = b;
    return 1;
}

/* Parse one node's MAV lines with mg_mav_parse (prompt synthesised from the true states). */
static void parse_mav_lines(pctx *c, mg_trace_node *nd, const void *st, const void *prev, int32_t a, int root)
{
    const mg_game *g = c->g;
    mg_trace_result *r = c->r;
    mg_mav_result *m = &r->scratch;
    size_t cap = sizeof r->scratch_text;
    long w = 0;
    int synth_lines = 0;
    char err[MG_ERRLEN];
    if (root) {
        /* the prompt's own header and state lines */
        size_t need = c->header_line.n + c->state_line.n + 2;
        if (need < cap) {
            memcpy(r->scratch_text, c->header_line.p, c->header_line.n);
            r->scratch_text[c->header_line.n] = '\n';
            memcpy(r->scratch_text + c->header_line.n + 1, c->state_line.p, c->state_line.n);
            r->scratch_text[need - 1] = '\n';
            w = (long)need;
        }
        synth_lines = 2;
    } else if (r->form == MG_TRACE_FORM_FULL) {
        /* the node writes its own %prev_state and %prev_action: only the header is synthesised */
        size_t hl = mg_mav_header(g, &c->child_spec, r->scratch_text, cap);
        w = (long)hl;
        synth_lines = 1;
    } else if (st && prev) {
        mg_mav_input in = {st, prev, a, 0, NULL, NULL, -1, NULL, 0};
        w = mg_mav_write(g, &c->child_spec, &in, MG_MAV_PART_PROMPT, r->scratch_text, cap, err, sizeof err);
        synth_lines = 3;
    } else {
        /* no true state: the node's own %state line is the input */
        size_t hl = mg_mav_header(g, &c->root_spec, r->scratch_text, cap);
        w = (long)hl;
        synth_lines = 1;
    }
    if (w <= 0) {
        w = 0;
        synth_lines = 0;
    }
    size_t used = (size_t)w;
    int first_line = c->line_no + 1;
    line l;
    int n_lines = 0;
    while (peek(c, &l) && l.n > 0 && l.p[0] == '[') {
        if (used + l.n + 1 < cap) {
            memcpy(r->scratch_text + used, l.p, l.n);
            used += l.n;
            r->scratch_text[used++] = '\n';
        }
        advance(c, &l);
        n_lines++;
    }
    if (n_lines == 0) {
        issue(r, first_line, 1, "node %d: expected its MAV lines ('[%%...]')", (int)(nd - r->nodes));
        nd->mav_ok = 0;
        return;
    }
    mg_mav_parse(g, &r->cfg, r->scratch_text, used, st, m);
    for (int i = 0; i < m->n_issues && i < MG_MAV_MAX_ISSUES && i < 2; i++) {
        int ln = m->issues[i].line > synth_lines ? m->issues[i].line - synth_lines - 1 + first_line
                                                 : m->issues[i].line;
        issue(r, ln, m->issues[i].col, "%s", m->issues[i].msg);
    }
    if (m->n_issues > 2) /* one line for the rest: bumping the count here would leave unwritten entries in the list */
        issue(r, first_line, 1, "node %d: %d more issue(s) in its MAV lines", (int)(nd - r->nodes), m->n_issues - 2);
    const mg_mav_slot *cur = &m->slot[MG_MAV_SLOT_CUR];
    nd->state_valid = cur->valid;
    nd->state_correct = root ? (st != NULL) : (st ? cur->correct == 1 : -1);
    if (cur->valid)
        snprintf(nd->state_text, sizeof nd->state_text, "%s", cur->text);
    nd->n_legal = m->has_ref ? m->ref_n_legal : 0;
    nd->true_terminal = m->has_ref && m->ref_outcome != MG_ONGOING;
    nd->terminal = m->top_outcome && m->outcome != MG_ONGOING;
    nd->outcome = m->outcome;
    nd->top_off = r->n_entries;
    nd->n_top = 0;
    for (int i = 0; i < m->n_moves && i < MG_MAV_MAX_TOP && r->n_entries < MG_TRACE_MAX_ENTRIES; i++) {
        mg_trace_entry *e = &r->entries[r->n_entries++];
        copy_move(e->move, m->moves[i].move, m->moves[i].len);
        e->action = m->moves[i].action;
        e->bucket = m->moves[i].bucket;
        e->status = m->moves[i].status;
        nd->n_top++;
    }
    if (m->n_moves > nd->n_top)
        issue(r, first_line, 0, "too many %%top_all entries in the trace (at most %d kept)", MG_TRACE_MAX_ENTRIES);
    snprintf(nd->best, sizeof nd->best, "%s", m->best_present && !m->best_invalid ? m->best : "");
    nd->mav_ok = m->ok && m->complete && m->n_illegal == 0 && m->n_malformed == 0 && m->n_duplicate == 0 &&
                 (!m->best_present || m->best_invalid || m->best_status == MG_MAV_MOVE_LEGAL ||
                  m->best_status == MG_MAV_MOVE_UNCHECKED) &&
                 (m->has_ref ? m->top_k == 0 && (nd->terminal ? m->outcome_correct == 1 : m->n_missing == 0) : 1);
    /* without a true state the parse derived its reference from the node's own state */
    if (!root && !st && !cur->valid)
        nd->n_legal = 0;
    if (!root && r->form == MG_TRACE_FORM_FULL) {
        /* the repeated inputs must be the parent's %state and the last move of the name */
        const mg_trace_node *pn = &r->nodes[nd->parent];
        const mg_mav_slot *pv = &m->slot[MG_MAV_SLOT_PREV];
        int st_ok = pv->valid && pn->state_valid && strcmp(pv->text, pn->state_text) == 0;
        int mv_ok = strcmp(m->prev_action, nd->move) == 0;
        nd->prev_agrees = st_ok && mv_ok;
        if (!st_ok)
            issue(r, first_line, 1, "node %d: its %%prev_state is not its parent's %%state", (int)(nd - r->nodes));
        if (!mv_ok)
            issue(r, first_line, 1, "node %d: its %%prev_action '%.40s' is not the move '%s' of its name",
                  (int)(nd - r->nodes), m->prev_action, nd->move);
    }
}

/* Parse node `idx` and its subtree: "Evaluation for node: <path>", its MAV lines, then an
 * expansion with the children and a decision, a leaf decision, or nothing (finished game). */
static void parse_node(pctx *c, int idx, const void *st, const void *prev, int32_t a, const char *path)
{
    const mg_game *g = c->g;
    mg_trace_result *r = c->r;
    mg_trace_node *nd = &r->nodes[idx];
    line l;
    if (!peek(c, &l) || match_path_line(&l, MG_TRACE_EVAL, path) != l.n) {
        issue(r, c->line_no + 1, 1, "expected 'Evaluation for node: %.80s'", path);
        c->stop = 1;
        return;
    }
    nd->line = l.no;
    advance(c, &l);
    parse_mav_lines(c, nd, st, prev, a, idx == 0);
    _Alignas(16) unsigned char own[MG_MAX_STATE];
    const void *ref = st;
    if (!ref && nd->state_valid) {
        /* the state the model wrote: its children are checked against it */
        char err[MG_ERRLEN];
        if (g->from_text(own, &r->cfg, nd->state_text, err, sizeof err) == MG_OK)
            ref = own;
    }
    if (nd->terminal || nd->true_terminal) {
        nd->value = nd->terminal ? terminal_bucket(g, ref, nd->outcome) : -1;
        nd->consistent = nd->terminal;
        return;
    }
    if (!peek(c, &l)) {
        issue(r, c->line_no + 1, 1, "the trace ends after node %.80s", path);
        c->stop = 1;
        return;
    }
    size_t off = match_path_line(&l, MG_TRACE_EXPAND, path);
    if (!off) {
        /* a leaf: Decision for node: <path> / Selecting move : "<ctrlN>" */
        if (match_path_line(&l, MG_TRACE_DECISION, path) != l.n) {
            issue(r, l.no, 1, "expected 'Expand from node %.80s' or 'Decision for node: %.80s'", path, path);
            c->stop = 1;
            return;
        }
        advance(c, &l);
        nd->has_decision = 1;
        if (!parse_selecting(c, nd)) {
            c->stop = 1;
            return;
        }
        int maxb = -1, found = 0;
        for (int i = 0; i < nd->n_top; i++) {
            const mg_trace_entry *e = &r->entries[nd->top_off + i];
            if (e->bucket > maxb)
                maxb = e->bucket;
        }
        for (int i = 0; i < nd->n_top; i++) {
            const mg_trace_entry *e = &r->entries[nd->top_off + i];
            if (strcmp(e->move, nd->selected) == 0 && e->bucket == maxb)
                found = 1;
        }
        nd->value = nd->selected_bucket;
        nd->consistent = found && maxb == nd->selected_bucket;
        return;
    }
    /* ": <path m1> <path m2> ..." */
    size_t pl = strlen(path);
    char mv[MG_TRACE_MAX_BREADTH][MG_MAX_MOVE_STR];
    int k = 0;
    size_t i = off;
    if (i >= l.n || l.p[i] != ':') {
        issue(r, l.no, (int)i + 1, "expected ':' after the node name");
        c->stop = 1;
        return;
    }
    i++;
    while (i < l.n) {
        if (l.n - i < pl + 2 || l.p[i] != ' ' || memcmp(l.p + i + 1, path, pl - 1) != 0 || l.p[i + pl] != ' ') {
            issue(r, l.no, (int)i + 1, "expected ' %.*s <move>>' in the expansion", (int)(pl - 1), path);
            c->stop = 1;
            return;
        }
        i += pl + 1;
        size_t s = i;
        while (i < l.n && l.p[i] != '>')
            i++;
        if (i >= l.n || k >= MG_TRACE_MAX_BREADTH || !copy_move(mv[k], l.p + s, i - s)) {
            issue(r, l.no, (int)s + 1, k >= MG_TRACE_MAX_BREADTH ? "more than %d children"
                                                                  : "malformed child name (at most %d children)",
                  MG_TRACE_MAX_BREADTH);
            c->stop = 1;
            return;
        }
        i++;
        k++;
    }
    advance(c, &l);
    int depth = nd->depth;
    if (depth + 1 > MG_TRACE_MAX_DEPTH) {
        issue(r, l.no, 1, "the trace is deeper than %d", MG_TRACE_MAX_DEPTH);
        c->stop = 1;
        return;
    }
    _Alignas(16) unsigned char child[MG_MAX_STATE];
    unsigned char undo[MG_MAX_UNDO];
    for (int j = 0; j < k && !c->stop; j++) {
        for (int q = 0; q < j; q++)
            if (strcmp(mv[q], mv[j]) == 0) {
                issue(r, l.no, 0, "node %.80s expands %s twice", path, mv[j]);
                c->stop = 1;
                return;
            }
        if (r->n_nodes >= MG_TRACE_MAX_NODES) {
            issue(r, l.no, 0, "more than %d nodes", MG_TRACE_MAX_NODES);
            c->stop = 1;
            return;
        }
        int ci = r->n_nodes++;
        mg_trace_node *cn = &r->nodes[ci];
        memset(cn, 0, sizeof *cn);
        cn->parent = idx;
        cn->depth = depth + 1;
        cn->value = cn->selected_bucket = -1;
        cn->state_correct = -1;
        cn->prev_agrees = r->form == MG_TRACE_FORM_FULL ? 0 : -1;
        memcpy(cn->move, mv[j], sizeof cn->move);
        nd = &r->nodes[idx];
        nd->child[nd->n_children++] = ci;
        int32_t ca = legal_action(g, ref, mv[j]);
        cn->action = st ? legal_action(g, st, mv[j]) : -1;
        char cpath[PATH_LEN];
        path_child(cpath, path, mv[j]);
        const void *cst = NULL;
        if (ca >= 0 && st) {
            memcpy(child, st, g->state_size);
            g->make(child, ca, undo);
            cst = child;
        }
        cn->has_true = cst != NULL;
        parse_node(c, ci, cst, cst ? st : NULL, ca, cpath);
    }
    if (c->stop)
        return;
    nd = &r->nodes[idx];
    /* Decision for node: <path> / m1:<ctrlA> m2:<ctrlB> / Selecting m : "<ctrlN>" */
    if (!peek(c, &l) || match_path_line(&l, MG_TRACE_DECISION, path) != l.n) {
        issue(r, c->line_no + 1, 1, "expected 'Decision for node: %.80s'", path);
        c->stop = 1;
        return;
    }
    advance(c, &l);
    nd->has_decision = 1;
    if (!peek(c, &l)) {
        issue(r, c->line_no + 1, 1, "expected the children's values of node %.80s", path);
        c->stop = 1;
        return;
    }
    advance(c, &l);
    i = 0;
    nd->dec_n = 0;
    int dec_ok = 1;
    while (i < l.n) {
        size_t s = i;
        while (i < l.n && l.p[i] != ':' && l.p[i] != ' ')
            i++;
        size_t vl = 0;
        int b = -1;
        if (nd->dec_n >= MG_TRACE_MAX_BREADTH || i >= l.n || l.p[i] != ':' ||
            !copy_move(nd->dec_move[nd->dec_n], l.p + s, i - s) ||
            (b = mg_mav_value_token(l.p + i + 1, l.n - i - 1, &vl)) < 0) {
            issue(r, l.no, (int)s + 1, "malformed child value (expected '<move>:<ctrlN>' separated by spaces)");
            dec_ok = 0;
            break;
        }
        nd->dec_bucket[nd->dec_n++] = b;
        i += 1 + vl;
        if (i < l.n) {
            if (l.p[i] != ' ' || i + 1 == l.n) {
                issue(r, l.no, (int)i + 1, "expected a single space between child values");
                dec_ok = 0;
                break;
            }
            i++;
        }
    }
    if (!parse_selecting(c, nd)) {
        c->stop = 1;
        return;
    }
    /* the model's own minimax: values 63 - child value, the selection their maximum */
    int cons = dec_ok && nd->dec_n == nd->n_children;
    int maxb = -1, sel_found = 0;
    for (int j = 0; cons && j < nd->dec_n; j++) {
        const mg_trace_node *cn = &r->nodes[nd->child[j]];
        if (strcmp(nd->dec_move[j], cn->move) != 0 || cn->value < 0 ||
            nd->dec_bucket[j] != MG_MAV_BUCKETS - 1 - cn->value)
            cons = 0;
        if (nd->dec_bucket[j] > maxb)
            maxb = nd->dec_bucket[j];
    }
    for (int j = 0; j < nd->dec_n; j++)
        if (strcmp(nd->dec_move[j], nd->selected) == 0 && nd->dec_bucket[j] == nd->selected_bucket)
            sel_found = 1;
    nd->consistent = cons && sel_found && nd->selected_bucket == maxb;
    nd->value = nd->selected_bucket;
}

void mg_trace_parse(const mg_game *g, const mg_config *cfg, int form, const char *text, size_t len,
                    const void *root, const mg_trace_choice *choice, mg_trace_result *out)
{
    mg_trace_result *r = out;
    r->game = g;
    r->form = form == MG_TRACE_FORM_FULL ? MG_TRACE_FORM_FULL : MG_TRACE_FORM_SHORT;
    r->cfg = cfg ? *cfg : (mg_config){0, 0};
    r->ok = 1;
    r->breadth = r->depth = 0;
    r->complete = 0;
    r->n_nodes = 0;
    r->n_entries = 0;
    r->final_move[0] = '\0';
    r->final_action = -1;
    r->shape_ok = r->moves_legal = r->states_correct = r->values_consistent = r->expand_consistent = 0;
    r->final_legal = 0;
    r->final_minimax = choice ? 0 : -1;
    r->n_issues = 0;
    if (!text)
        len = 0;
    pctx c;
    memset(&c, 0, sizeof c);
    c.g = g;
    c.r = r;
    c.text = text;
    c.len = len;
    char err[MG_ERRLEN];
    if (!g || mg_mav_spec_parse(g, MG_TRACE_ROOT_COMMANDS, &c.root_spec, err, sizeof err) != MG_OK ||
        mg_mav_spec_parse(g, MG_TRACE_CHILD_COMMANDS, &c.child_spec, err, sizeof err) != MG_OK) {
        issue(r, 0, 0, "search traces need a game of the MAV format");
        return;
    }
    /* prompt: preamble, header, state */
    line l;
    if (!peek(&c, &l) || !starts(&l, MG_TRACE_PREAMBLE)) {
        issue(r, 1, 1, "expected the preamble 'Minimax breadth=<B> depth=<D>'");
        return;
    }
    size_t i = sizeof MG_TRACE_PREAMBLE - 1;
    int b = read_num(l.p, l.n, &i);
    int d = -1;
    if (l.n >= i + sizeof MG_TRACE_DEPTH - 1 && memcmp(l.p + i, MG_TRACE_DEPTH, sizeof MG_TRACE_DEPTH - 1) == 0) {
        i += sizeof MG_TRACE_DEPTH - 1;
        d = read_num(l.p, l.n, &i);
    }
    if (b < 1 || b > MG_TRACE_MAX_BREADTH || d < 1 || d > MG_TRACE_MAX_DEPTH || i != l.n) {
        issue(r, 1, 1, "malformed preamble (expected 'Minimax breadth=<1..%d> depth=<1..%d>')", MG_TRACE_MAX_BREADTH,
              MG_TRACE_MAX_DEPTH);
        return;
    }
    r->breadth = b;
    r->depth = d;
    advance(&c, &l);
    size_t hl = mg_mav_header(g, &c.root_spec, c.header, sizeof c.header);
    if (!peek(&c, &l) || l.n + 1 != hl || memcmp(l.p, c.header, l.n) != 0) {
        issue(r, 2, 1, "expected the MAV header '%.*s'", (int)(hl ? hl - 1 : 0), c.header);
        return;
    }
    c.header_line = l;
    advance(&c, &l);
    if (!peek(&c, &l) || !starts(&l, "[%state ")) {
        issue(r, 3, 1, "expected the root's '[%%state ...]' line");
        return;
    }
    c.state_line = l;
    advance(&c, &l);
    _Alignas(16) unsigned char rootst[MG_MAX_STATE];
    const void *rst = root;
    if (!rst) {
        /* the prompt's state is the truth */
        char st[MG_MAX_TEXT];
        const char *v = c.state_line.p + 8;
        size_t vn = c.state_line.n - 8;
        if (vn && v[vn - 1] == ']' && mg_mav_state_read(g, &r->cfg, v, vn - 1, rootst, st, sizeof st) == MG_OK)
            rst = rootst;
        else
            issue(r, 3, 9, "the root's %%state is not readable");
    }
    mg_trace_node *rn = &r->nodes[0];
    memset(rn, 0, sizeof *rn);
    rn->parent = -1;
    rn->action = -1;
    rn->value = rn->selected_bucket = -1;
    rn->prev_agrees = -1;
    rn->has_true = rst != NULL;
    r->n_nodes = 1;
    parse_node(&c, 0, rst, NULL, -1, MG_TRACE_ROOT);
    if (!c.stop) {
        if (!peek(&c, &l) || !starts(&l, MG_TRACE_PLAY) || l.n < 10 || l.p[l.n - 1] != '!' ||
            !copy_move(r->final_move, l.p + sizeof MG_TRACE_PLAY - 1, l.n - sizeof MG_TRACE_PLAY)) {
            issue(r, c.line_no + 1, 1, "expected 'Playing <move>!'");
        } else {
            advance(&c, &l);
            r->complete = 1;
            if (peek(&c, &l))
                issue(r, l.no, 1, "text after the 'Playing' line");
        }
    }
    /* metrics */
    int shape = r->complete, legal = r->complete, states = r->complete, cons = r->complete, exp = r->complete;
    for (int n = 0; n < r->n_nodes; n++) {
        const mg_trace_node *nd = &r->nodes[n];
        int term = nd->true_terminal || (!nd->has_true && nd->terminal);
        int want = term || nd->depth >= d ? 0 : (nd->n_legal < b ? nd->n_legal : b);
        if (nd->n_children != want || (!term && !nd->has_decision))
            shape = 0;
        if (!nd->mav_ok || (n > 0 && nd->action < 0))
            legal = 0;
        if (n > 0 && nd->state_correct != 1)
            states = 0;
        if (!nd->consistent)
            cons = 0;
        /* expansion: no unexpanded %top_all entry valued above an expanded one */
        if (nd->n_children) {
            int minexp = 64, maxrest = -1;
            for (int e = 0; e < nd->n_top; e++) {
                const mg_trace_entry *en = &r->entries[nd->top_off + e];
                int expanded = 0;
                for (int q = 0; q < nd->n_children; q++)
                    if (strcmp(r->nodes[nd->child[q]].move, en->move) == 0)
                        expanded = 1;
                if (expanded && en->bucket < minexp)
                    minexp = en->bucket;
                if (!expanded && en->bucket > maxrest)
                    maxrest = en->bucket;
            }
            if (maxrest > minexp)
                exp = 0;
        }
    }
    r->shape_ok = shape;
    r->states_correct = states;
    r->expand_consistent = exp;
    r->final_action = r->complete ? legal_action(g, rst, r->final_move) : -1;
    r->final_legal = r->final_action >= 0;
    r->values_consistent = cons && r->complete && strcmp(r->final_move, r->nodes[0].selected) == 0;
    r->moves_legal = legal && r->final_legal;
    if (choice && r->final_legal)
        for (int q = 0; q < choice->n && q < MG_TRACE_MAX_BREADTH; q++)
            if (choice->actions[q] == r->final_action)
                r->final_minimax = 1;
}
