/*
 * mav_eval_io.c - prompts and output reading of MAV model evaluators (mav_eval_io.h).
 */
#include "mav_eval_io.h"

#include <stdio.h>
#include <string.h>

#include "../format/values.h"

int mg_eval_format_init(mg_eval_format *f, const mg_game *g, const mg_config *cfg, int st, const char *spec,
                        char *err, size_t errlen)
{
    memset(f, 0, sizeof *f);
    f->g = g;
    if (cfg)
        f->cfg = *cfg;
    if (!g || !mg_mav_game_supported(g, NULL)) {
        if (spec) {
            snprintf(err, errlen, "MAV spec '%s' given, but %s has no MAV format", spec,
                     g ? g->name : "a tree without a game");
            return MG_ERR;
        }
        return MG_OK;
    }
    char e2[MG_ERRLEN];
    if (!spec)
        spec = st ? "%prev_state %prev_action %state %top_all %best_action" : "%state %top_all %best_action";
    if (mg_mav_spec_parse(g, spec, &f->spec, e2, sizeof e2) != MG_OK) {
        snprintf(err, errlen, "bad MAV spec '%s': %s", spec, e2);
        return MG_ERR;
    }
    if (!st && f->spec.transition) {
        snprintf(err, errlen, "MAV spec '%s': engine mode prompts give the current state, not a previous "
                 "state and action (use %%state/%%fen inputs)", spec);
        return MG_ERR;
    }
    if (st) {
        if (!f->spec.transition) {
            snprintf(err, errlen, "MAV spec '%s': state tracking needs the transition form "
                     "(%%prev_state/%%prev_fen %%prev_action first)", spec);
            return MG_ERR;
        }
        /* The root is asked in the state form: drop the previous-state inputs. */
        mg_mav_spec r;
        memset(&r, 0, sizeof r);
        int first = 0;
        while (first < f->spec.n && f->spec.cmd[first] != MG_MAV_STATE && f->spec.cmd[first] != MG_MAV_FEN)
            first++;
        for (int i = first; i < f->spec.n; i++)
            r.cmd[r.n++] = f->spec.cmd[i];
        r.top_k = f->spec.top_k;
        if (mg_mav_spec_check(g, &r, e2, sizeof e2) != MG_OK) {
            snprintf(err, errlen, "MAV spec '%s' has no usable state form for the root: %s", spec, e2);
            return MG_ERR;
        }
        f->root_spec = r;
    }
    f->fmt = 1;
    return MG_OK;
}

/* Append "[%cmd value]\n"; 0 if it does not fit. */
static size_t put_line(char *out, size_t cap, size_t at, int cmd, const char *val, size_t vlen)
{
    const char *name = mg_mav_cmd_name(cmd);
    size_t nl = strlen(name);
    if (at + nl + vlen + 4 >= cap)
        return 0;
    out[at++] = '[';
    memcpy(out + at, name, nl);
    at += nl;
    out[at++] = ' ';
    memcpy(out + at, val, vlen);
    at += vlen;
    out[at++] = ']';
    out[at++] = '\n';
    out[at] = '\0';
    return at;
}

size_t mg_eval_prompt(const mg_eval_format *f, const mg_eval_request *q, char *out, size_t cap)
{
    char err[MG_ERRLEN];
    if (!f->fmt)
        return 0;
    if (q->mode == MG_EVAL_ENGINE) {
        mg_mav_input in;
        memset(&in, 0, sizeof in);
        in.state = q->state;
        in.best = -1;
        long n = mg_mav_write(f->g, &f->spec, &in, MG_MAV_PART_PROMPT, out, cap, err, sizeof err);
        return n > 0 ? (size_t)n : 0;
    }
    const mg_mav_spec *sp = q->text ? &f->root_spec : &f->spec;
    size_t at = mg_mav_header(f->g, sp, out, cap);
    if (!at)
        return 0;
    for (int i = 0; i < sp->n_inputs && at; i++) {
        int cmd = sp->cmd[i];
        const char *txt = q->text ? q->text : q->parent_text;
        char st[MG_MAX_TEXT];
        if (cmd == MG_MAV_PREV_ACTION) {
            at = put_line(out, cap, at, cmd, q->move, strlen(q->move));
        } else if (cmd == MG_MAV_PREV_FEN || cmd == MG_MAV_FEN) {
            at = put_line(out, cap, at, cmd, txt, strlen(txt));
        } else {
            size_t n = mg_mav_state_from_game_text(f->g, txt, st, sizeof st, err, sizeof err);
            at = n ? put_line(out, cap, at, cmd, st, n) : 0;
        }
    }
    return at;
}

int mg_eval_read_output(const mg_eval_format *f, const mg_eval_request *q, const char *os, size_t olen,
                        mg_eval_result *r, char *buf, mg_mav_result *p)
{
    if (!f->fmt || olen > MG_EVAL_OUTPUT_CAP)
        return -1;
    size_t at = 0;
    if (!(olen >= 4 && memcmp(os, "<mav", 4) == 0)) {
        at = mg_eval_prompt(f, q, buf, MG_EVAL_PROMPT_CAP);
        if (!at)
            return -1;
    }
    memcpy(buf + at, os, olen);
    at += olen;
    mg_mav_parse(f->g, &f->cfg, buf, at, q->mode == MG_EVAL_ENGINE ? q->state : NULL, p);
    if (!p->header_ok)
        return -1;
    if (q->mode == MG_EVAL_ENGINE) {
        if (p->top_outcome)
            return -1; /* claims a finished game where the engine says it goes on */
        int got = 0;
        for (int i = 0; i < p->n_moves && i < MG_MAV_MAX_TOP; i++) {
            const mg_mav_move *mv = &p->moves[i];
            if (mv->status != MG_MAV_MOVE_LEGAL || mv->action < 0 || mv->duplicate || mv->bucket < 0)
                continue;
            for (int j = 0; j < q->num_legal; j++)
                if (q->legal[j] == mv->action) {
                    r->values[j] = (float)mg_mav_bucket_value(mv->bucket);
                    got++;
                    break;
                }
        }
        return got > 0 ? 0 : -1;
    }
    /* State tracking: the predicted state (an output in transition form, the input at the root). */
    const mg_mav_slot *cur = &p->slot[MG_MAV_SLOT_CUR];
    if (!cur->present || !cur->valid)
        return -1;
    size_t tl = strlen(cur->text);
    if (tl == 0 || tl >= r->text_cap)
        return -1;
    memcpy(r->text, cur->text, tl + 1);
    if (p->top_outcome) {
        if (p->outcome == MG_ONGOING)
            return -1;
        r->result = p->outcome;
        r->num_moves = 0;
        return 0;
    }
    int nm = 0;
    for (int i = 0; i < p->n_moves && i < MG_MAV_MAX_TOP && nm < MG_MAX_MOVES; i++) {
        const mg_mav_move *mv = &p->moves[i];
        if (mv->status == MG_MAV_MOVE_MALFORMED || mv->duplicate || mv->bucket < 0 || !mv->move[0])
            continue;
        memcpy(r->moves[nm], mv->move, MG_MAX_MOVE_STR);
        r->moves[nm][MG_MAX_MOVE_STR - 1] = '\0';
        r->values[nm] = (float)mg_mav_bucket_value(mv->bucket);
        nm++;
    }
    r->num_moves = nm;
    return nm > 0 ? 0 : -1;
}

void mg_eval_set_seq(mg_eval_result *r, long long seq)
{
    r->seq = seq < -1000000000LL ? -1000000000 : seq > 1000000000LL ? 1000000000 : (int)seq;
}

void mg_eval_set_result(mg_eval_result *r, long long result)
{
    r->result = result < -1000 || result > 1000 ? 99 : (int)result;
}
