/* chess_alphabeta.c - the IDP report's baseline and probability-threshold alpha-beta (see chess_alphabeta.h). */
#include "chess_alphabeta.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../clock.h"
#include "chess_pst.h"

#define MAXPLY (MG_AB_MAX_DEPTH + 1)
#define ARENA_PER_PLY (MG_CHESS_MAX_MOVES * MG_CHESS_MAX_MOVES)
#define NOT_FETCHED (-2)
#define NOT_EXPANDED (-1)

typedef struct tt_entry {
    uint64_t key;
    int32_t move;
    int16_t score;
    int8_t depth;
    uint8_t flag; /* 0 empty, 1 exact, 2 lower bound, 3 upper bound */
} tt_entry;

struct mg_ab_workspace {
    mg_chess_state st;
    uint8_t boards[MAXPLY + 2][64]; /* boards[ply + 2]: the board at ply; [0], [1]: the root's prev2, prev1 */
    int32_t moves[MAXPLY][MG_CHESS_MAX_MOVES];
    int16_t idx[MAXPLY][MG_CHESS_MAX_MOVES];
    int16_t order[MAXPLY][MG_CHESS_MAX_MOVES];
    float key[MAXPLY][MG_CHESS_MAX_MOVES];
    float root_probs[MG_CHESS_MAX_MOVES];
    int32_t child_off[MAXPLY][MG_CHESS_MAX_MOVES]; /* arena[ply + 1] offset of child i's move probabilities */
    int32_t arena_used[MAXPLY + 1];
    float *arena;                                  /* MAXPLY + 1 blocks of ARENA_PER_PLY */
    mg_chess_state qstates[MG_AB_MAX_BATCH];
    mg_ab_query q[MG_AB_MAX_BATCH];
    int16_t qidx[MG_CHESS_MAX_MOVES];
    int32_t qmoves[MG_CHESS_MAX_MOVES];
    float *qout;                                   /* MG_AB_MAX_BATCH * MG_POLICY_MOVES */
    int32_t pv[MAXPLY][MAXPLY];
    int pv_len[MAXPLY];
    tt_entry *tt;
    uint64_t tt_mask;
    /* the current search */
    const mg_ab_params *p;
    mg_cancel *cancel;
    mg_ab_result *res;
    int guided, max_depth, use_tt;
    double threshold;
    int32_t prev_best;
    int32_t root_best;
    int root_score;
};

mg_ab_workspace *mg_ab_workspace_new(int tt_bits)
{
    if (tt_bits < 0 || tt_bits > 26)
        return NULL;
    mg_ab_workspace *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    /* malloc, not calloc: the arena's pages are touched only as deep as searches go */
    w->arena = malloc((size_t)(MAXPLY + 1) * ARENA_PER_PLY * sizeof(float));
    w->qout = malloc((size_t)MG_AB_MAX_BATCH * MG_POLICY_MOVES * sizeof(float));
    if (tt_bits) {
        w->tt = calloc((size_t)1 << tt_bits, sizeof(tt_entry));
        w->tt_mask = ((uint64_t)1 << tt_bits) - 1;
    }
    if (!w->arena || !w->qout || (tt_bits && !w->tt)) {
        mg_ab_workspace_free(w);
        return NULL;
    }
    return w;
}

void mg_ab_workspace_free(mg_ab_workspace *w)
{
    if (!w)
        return;
    free(w->arena);
    free(w->qout);
    free(w->tt);
    free(w);
}

int mg_ab_params_check(const mg_ab_params *p, char *err, size_t errlen)
{
    if (p->depth < 1 || p->depth > MG_AB_MAX_DEPTH) {
        snprintf(err, errlen, "depth must be in 1..%d, got %d", MG_AB_MAX_DEPTH, p->depth);
        return -1;
    }
    if (!(p->threshold >= 0.0 && p->threshold < 1.0)) {
        snprintf(err, errlen, "threshold must be in [0, 1) (0: the plain search), got %g", p->threshold);
        return -1;
    }
    if (p->threshold > 0.0 && (p->batch < 1 || p->batch > MG_AB_MAX_BATCH)) {
        snprintf(err, errlen, "batch must be in 1..%d, got %d", MG_AB_MAX_BATCH, p->batch);
        return -1;
    }
    return 0;
}

static int stopped(mg_ab_workspace *w) { return w->res->stop != MG_AB_STOP_NONE; }

/* Drawn by rule (the caller has found legal moves). */
static int drawn(const mg_chess_state *s)
{
    if (s->rep_len >= 4 || s->halfmove >= 100)
        return mg_chess.outcome(s, NULL) == MG_DRAW;
    return mg_chess_insufficient_material(s);
}

static float order_key(const mg_chess_state *s, int32_t a)
{
    int from = a & 63, to = (a >> 6) & 63, promo = (a >> 12) & 7;
    int pc = s->board[from], victim = s->board[to];
    float k = 0.0f;
    if (victim && (victim >> 3) != (pc >> 3))
        k = 1e6f + 10.0f * (float)mg_pst_piece_value(victim & 7) - (float)(pc & 7);
    else if ((pc & 7) == MG_CH_PAWN && ((from ^ to) & 7))
        k = 1e6f + 1000.0f - 1.0f; /* en passant */
    if (promo)
        k += 1e5f + (float)mg_pst_piece_value(promo + 1);
    if (victim && (victim >> 3) == (pc >> 3))
        return k; /* castling */
    return k + (float)(mg_pst_square(pc, to) - mg_pst_square(pc, from));
}

/* order[0..n) sorted by key descending (stable insertion sort: n is small). */
static void sort_order(const float *key, int16_t *order, int n)
{
    for (int i = 0; i < n; i++) {
        int16_t v = (int16_t)i;
        int j = i;
        while (j > 0 && key[order[j - 1]] < key[v]) {
            order[j] = order[j - 1];
            j--;
        }
        order[j] = v;
    }
}

static int tt_to(int score, int ply)
{
    return score > MG_AB_MATE - 1000 ? score + ply : score < -MG_AB_MATE + 1000 ? score - ply : score;
}
static int tt_from(int score, int ply)
{
    return score > MG_AB_MATE - 1000 ? score - ply : score < -MG_AB_MATE + 1000 ? score + ply : score;
}

/* Fetch the policies of the children of the node at `ply` from order position j on (the next
 * `batch` children that will be expanded and lack one). */
static void fetch_children(mg_ab_workspace *w, int ply, int j, int n, const float *probs, double prob)
{
    int16_t *order = w->order[ply];
    int32_t *moves = w->moves[ply];
    int b = 0, picked[MG_AB_MAX_BATCH];
    unsigned char undo[MG_MAX_UNDO];
    for (; j < n && b < w->p->batch; j++) {
        int i = order[j];
        if (w->child_off[ply][i] != NOT_FETCHED)
            continue;
        if (prob * (probs ? probs[i] : 1.0 / n) < w->threshold || ply + 1 >= w->max_depth) {
            w->child_off[ply][i] = NOT_EXPANDED;
            continue;
        }
        memcpy(&w->qstates[b], &w->st, sizeof w->st);
        mg_chess.make(&w->qstates[b], moves[i], undo);
        w->q[b].state = &w->qstates[b];
        w->q[b].prev1 = w->boards[ply + 2];
        w->q[b].prev2 = w->boards[ply + 1];
        picked[b++] = i;
    }
    if (b == 0)
        return;
    double t0 = mg_now_seconds();
    int rc = w->p->policy(w->p->policy_ctx, w->q, b, w->qout);
    w->res->policy_seconds += mg_now_seconds() - t0;
    w->res->policy_calls++;
    w->res->policy_positions += (uint64_t)b;
    if (rc != 0) {
        w->res->stop = MG_AB_STOP_POLICY;
        for (int k = 0; k < b; k++)
            w->child_off[ply][picked[k]] = NOT_EXPANDED;
        return;
    }
    float *arena = w->arena + (size_t)(ply + 1) * ARENA_PER_PLY;
    for (int k = 0; k < b; k++) {
        int cn = mg_policy_legal(&w->qstates[k], w->qmoves, w->qidx);
        int32_t off = w->arena_used[ply + 1];
        if (cn > 0)
            mg_policy_mask_normalise(w->qout + (size_t)k * MG_POLICY_MOVES, w->qidx, cn, arena + off);
        w->arena_used[ply + 1] = off + cn;
        w->child_off[ply][picked[k]] = off;
    }
}

static int search(mg_ab_workspace *w, int ply, int depth_left, double prob, int alpha, int beta, const float *probs)
{
    mg_ab_result *res = w->res;
    mg_chess_state *s = &w->st;
    res->nodes++;
    w->pv_len[ply] = 0;
    if (w->p->max_nodes && res->nodes > w->p->max_nodes) {
        res->stop = MG_AB_STOP_NODES;
        return 0;
    }
    if (mg_cancel_tick(w->cancel)) {
        res->stop = MG_AB_STOP_CANCEL;
        return 0;
    }
    memcpy(w->boards[ply + 2], s->board, 64);
    int leaf = ply > 0 && (w->guided ? (ply >= w->max_depth || prob < w->threshold) : depth_left <= 0);
    if (leaf) {
        if (mg_chess_count_legal(s) == 0)
            return mg_chess_in_check(s) ? -(MG_AB_MATE - ply) : 0;
        return drawn(s) ? 0 : mg_pst_eval(s);
    }
    int32_t *moves = w->moves[ply];
    int n = mg_policy_legal(s, moves, w->idx[ply]);
    if (n == 0)
        return mg_chess_in_check(s) ? -(MG_AB_MATE - ply) : 0;
    if (ply > 0 && drawn(s))
        return 0;

    int alpha0 = alpha;
    int32_t tt_move = -1;
    tt_entry *te = NULL;
    if (w->use_tt) {
        te = &w->tt[s->hash & w->tt_mask];
        if (te->flag && te->key == s->hash) {
            tt_move = te->move;
            if (ply > 0 && te->depth == depth_left) {
                int sc = tt_from(te->score, ply);
                if (te->flag == 1 || (te->flag == 2 && sc >= beta) || (te->flag == 3 && sc <= alpha))
                    return sc;
            }
        }
    }
    float *key = w->key[ply];
    int16_t *order = w->order[ply];
    float uniform = 1.0f / (float)n;
    for (int i = 0; i < n; i++) {
        if (w->guided)
            key[i] = probs ? probs[i] : uniform;
        else
            key[i] = order_key(s, moves[i]);
        if (moves[i] == tt_move || (ply == 0 && moves[i] == w->prev_best))
            key[i] = 1e30f;
        w->child_off[ply][i] = NOT_FETCHED;
    }
    sort_order(key, order, n);
    w->arena_used[ply + 1] = 0;

    int best = -MG_AB_INF;
    int32_t best_move = moves[order[0]];
    unsigned char undo[MG_MAX_UNDO];
    for (int j = 0; j < n; j++) {
        int i = order[j];
        double q = 1.0;
        const float *child_probs = NULL;
        if (w->guided) {
            q = probs ? probs[i] : uniform;
            if (w->p->policy && w->child_off[ply][i] == NOT_FETCHED)
                fetch_children(w, ply, j, n, probs, prob);
            if (stopped(w))
                return 0;
            if (w->p->policy && w->child_off[ply][i] >= 0)
                child_probs = w->arena + (size_t)(ply + 1) * ARENA_PER_PLY + w->child_off[ply][i];
        }
        mg_chess.make(s, moves[i], undo);
        int sc = -search(w, ply + 1, depth_left - 1, prob * q, -beta, -alpha, child_probs);
        mg_chess.unmake(s, moves[i], undo);
        if (stopped(w))
            return 0;
        if (sc > best) {
            best = sc;
            best_move = moves[i];
            w->pv[ply][0] = moves[i];
            memcpy(&w->pv[ply][1], w->pv[ply + 1], (size_t)w->pv_len[ply + 1] * sizeof(int32_t));
            w->pv_len[ply] = 1 + w->pv_len[ply + 1];
            if (ply == 0) {
                w->root_best = best_move;
                w->root_score = best;
            }
        }
        if (sc > alpha)
            alpha = sc;
        if (alpha >= beta)
            break;
    }
    if (te) {
        te->key = s->hash;
        te->move = best_move;
        te->score = (int16_t)tt_to(best, ply);
        te->depth = (int8_t)depth_left;
        te->flag = best <= alpha0 ? 3 : best >= beta ? 2 : 1;
    }
    return best;
}

/* The root's own policy (guided search with a callback): a batch of one. */
static int root_policy(mg_ab_workspace *w)
{
    int n = mg_policy_legal(&w->st, w->qmoves, w->qidx);
    if (!w->p->policy || n == 0)
        return 0;
    w->q[0].state = &w->st;
    w->q[0].prev1 = w->boards[1];
    w->q[0].prev2 = w->boards[0];
    double t0 = mg_now_seconds();
    int rc = w->p->policy(w->p->policy_ctx, w->q, 1, w->qout);
    w->res->policy_seconds += mg_now_seconds() - t0;
    w->res->policy_calls++;
    w->res->policy_positions++;
    if (rc != 0) {
        w->res->stop = MG_AB_STOP_POLICY;
        return -1;
    }
    mg_policy_mask_normalise(w->qout, w->qidx, n, w->root_probs);
    return 0;
}

int mg_ab_search(const mg_chess_state *root, const uint8_t *prev1, const uint8_t *prev2, const mg_ab_params *p,
                 mg_ab_workspace *w, mg_cancel *cancel, mg_ab_result *out, char *err, size_t errlen)
{
    if (mg_ab_params_check(p, err, errlen) != 0)
        return -1;
    double t0 = mg_now_seconds();
    memset(out, 0, sizeof *out);
    out->best = -1;
    memcpy(&w->st, root, sizeof w->st);
    memcpy(w->boards[0], prev2 ? prev2 : root->board, 64);
    memcpy(w->boards[1], prev1 ? prev1 : root->board, 64);
    w->p = p;
    w->cancel = cancel;
    w->res = out;
    w->guided = p->threshold > 0.0;
    w->max_depth = p->depth;
    w->use_tt = !w->guided && p->use_tt && w->tt;
    w->prev_best = -1;
    if (w->use_tt)
        memset(w->tt, 0, (size_t)(w->tt_mask + 1) * sizeof(tt_entry));
    int have_probs = 0;
    if (w->guided && p->policy)
        have_probs = root_policy(w) == 0;
    /* iterations: depths 1..depth, or thresholds 0.1, 0.01, ... then `threshold` */
    int iters = w->guided ? 1 : p->depth;
    if (w->guided)
        for (double t = 0.1; t > p->threshold * 1.0000001; t *= 0.1)
            iters++;
    for (int it = 0; it < iters && !stopped(w); it++) {
        w->threshold = w->guided ? (it + 1 < iters ? pow(10.0, -(it + 1)) : p->threshold) : 0.0;
        w->root_best = -1;
        int sc = search(w, 0, w->guided ? p->depth : it + 1, 1.0, -MG_AB_INF, MG_AB_INF,
                        have_probs ? w->root_probs : NULL);
        if (!stopped(w)) {
            out->best = w->pv_len[0] ? w->pv[0][0] : -1;
            out->score = sc;
            out->pv_len = w->pv_len[0];
            memcpy(out->pv, w->pv[0], (size_t)w->pv_len[0] * sizeof(int32_t));
            out->iterations = it + 1;
            w->prev_best = out->best;
        } else if (out->iterations == 0 && w->root_best >= 0) {
            out->best = w->root_best; /* the best of the root moves searched before the stop */
            out->score = w->root_score;
            out->pv_len = 1;
            out->pv[0] = w->root_best;
        }
    }
    if (out->best < 0) { /* stopped before any root move was searched: the first legal move */
        int32_t m[MG_CHESS_MAX_MOVES];
        if (mg_chess_legal_actions(root, m) > 0 && out->iterations == 0 && stopped(w))
            out->best = m[0];
    }
    out->complete = !stopped(w);
    out->seconds = mg_now_seconds() - t0;
    return 0;
}
