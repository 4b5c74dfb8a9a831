/* mcts_multi.c - many MCTS trees searched together, one evaluator call per round for the leaves of
 * all the trees that share an evaluator (see mcts_multi.h).  Built on the step API of mcts.h only;
 * it reads a tree's game, config and statistics (mcts_tree.h) to call the evaluator as
 * mg_mcts_search_cancel does. */
#include "mcts_multi.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../cancel.h"
#include "../clock.h"
#include "mcts_tree.h"

struct mg_mcts_multi {
    /* the round's requests and results, concatenated by evaluator group */
    mg_eval_request *reqs;
    mg_eval_result *res;
    int cap;
    /* per tree: the next tree of its group (-1: last), whether it still searches, its batch this round */
    int *next, *leader, *active, *count;
    const mg_eval_request **treq;
    mg_eval_result **tres;
    int tcap;
    mg_mcts_multi_stats stats;
};

mg_mcts_multi *mg_mcts_multi_create(char *err, size_t errlen)
{
    mg_mcts_multi *mm = calloc(1, sizeof *mm);
    if (!mm)
        snprintf(err, errlen, "mcts_multi: out of memory");
    return mm;
}

void mg_mcts_multi_free(mg_mcts_multi *mm)
{
    if (!mm)
        return;
    free(mm->reqs);
    free(mm->res);
    free(mm->next);
    free(mm->leader);
    free(mm->active);
    free(mm->count);
    free(mm->treq);
    free(mm->tres);
    free(mm);
}

void mg_mcts_multi_get_stats(const mg_mcts_multi *mm, mg_mcts_multi_stats *s) { *s = mm->stats; }

/* Per-tree arrays for k trees and request buffers for n requests (grown at the start of a search only). */
static int reserve(mg_mcts_multi *mm, int k, int n)
{
    if (k > mm->tcap) {
        int *next = malloc((size_t)k * sizeof *next), *leader = malloc((size_t)k * sizeof *leader);
        int *active = malloc((size_t)k * sizeof *active), *count = malloc((size_t)k * sizeof *count);
        const mg_eval_request **treq = malloc((size_t)k * sizeof *treq);
        mg_eval_result **tres = malloc((size_t)k * sizeof *tres);
        if (!next || !leader || !active || !count || !treq || !tres) {
            free(next), free(leader), free(active), free(count), free((void *)treq), free(tres);
            return MG_ERR;
        }
        free(mm->next), free(mm->leader), free(mm->active), free(mm->count), free((void *)mm->treq), free(mm->tres);
        mm->next = next, mm->leader = leader, mm->active = active, mm->count = count, mm->treq = treq;
        mm->tres = tres;
        mm->tcap = k;
    }
    if (n > mm->cap) {
        mg_eval_request *reqs = malloc((size_t)n * sizeof *reqs);
        mg_eval_result *res = malloc((size_t)n * sizeof *res);
        if (!reqs || !res) {
            free(reqs), free(res);
            return MG_ERR;
        }
        free(mm->reqs), free(mm->res);
        mm->reqs = reqs, mm->res = res;
        mm->cap = n;
    }
    return MG_OK;
}

/* The arguments, checked before any tree is touched; the request capacity of a round in *cap. */
static int check_args(mg_mcts *const *trees, const mg_evaluator *const *evs, const int *nsims, int k, int64_t *cap,
                      char *err, size_t errlen)
{
    *cap = 0;
    for (int i = 0; i < k; i++) {
        if (!trees[i] || !evs[i] || !evs[i]->evaluate) {
            snprintf(err, errlen, "mcts_multi: tree %d has no %s", i, !trees[i] ? "search object" : "evaluator");
            return MG_ERR;
        }
        if (nsims[i] < 0) {
            snprintf(err, errlen, "mcts_multi: num_simulations[%d] = %d is negative", i, nsims[i]);
            return MG_ERR;
        }
        for (int j = 0; j < i; j++)
            if (trees[j] == trees[i]) {
                snprintf(err, errlen, "mcts_multi: trees %d and %d are the same search object", j, i);
                return MG_ERR;
            }
        int b = trees[i]->cfg.batch_size;
        *cap += b < nsims[i] ? b : (nsims[i] > 0 ? nsims[i] : 1);
    }
    if (*cap > INT_MAX / 2) {
        snprintf(err, errlen, "mcts_multi: a round of %lld requests is too large", (long long)*cap);
        return MG_ERR;
    }
    return MG_OK;
}

/* Group the trees by (evaluator, game, timeout): leader[i] is the first tree of i's group, next[] chains
 * the group in tree order. */
static void make_groups(mg_mcts_multi *mm, mg_mcts *const *trees, const mg_evaluator *const *evs, int k)
{
    for (int i = 0; i < k; i++) {
        mm->leader[i] = i;
        mm->next[i] = -1;
        for (int j = 0; j < i; j++)
            if (mm->leader[j] == j && evs[j] == evs[i] && trees[j]->g == trees[i]->g &&
                trees[j]->cfg.timeout == trees[i]->cfg.timeout) {
                mm->leader[i] = j;
                int t = j;
                while (mm->next[t] >= 0)
                    t = mm->next[t];
                mm->next[t] = i;
                break;
            }
    }
}

/* One evaluator call for the batches of leader's group gathered this round; MG_OK or MG_ERR (err set). */
static int evaluate_group(mg_mcts_multi *mm, mg_mcts *const *trees, const mg_evaluator *ev, int leader, char *err,
                          size_t errlen)
{
    int total = 0;
    for (int i = leader; i >= 0; i = mm->next[i]) {
        int n = mm->count[i];
        for (int j = 0; j < n; j++) {
            mg_eval_request *q = &mm->reqs[total + j];
            mg_eval_result *r = &mm->res[total + j];
            *q = mm->treq[i][j];
            *r = mm->tres[i][j]; /* its value/policy/text buffers stay the tree's */
            q->index = total + j;
            r->seq = total + j;
        }
        total += n;
    }
    if (total == 0)
        return MG_OK;
    const mg_mcts *t0 = trees[leader];
    int timed = !(ev->flags & MG_EVAL_FLAG_CHEAP);
    double te = timed ? mg_now_seconds() : 0;
    int rc = ev->evaluate(ev->ctx, t0->g, mm->reqs, mm->res, total, t0->cfg.timeout, err, errlen);
    double dt = timed ? mg_now_seconds() - te : 0;
    mm->stats.calls++;
    mm->stats.requests += total;
    mm->stats.eval_seconds += dt;
    if (total > mm->stats.max_call)
        mm->stats.max_call = total;
    if (rc != MG_OK)
        return MG_ERR;
    int off = 0;
    for (int i = leader; i >= 0; i = mm->next[i]) {
        int n = mm->count[i];
        for (int j = 0; j < n; j++)
            mm->tres[i][j] = mm->res[off + j];
        off += n;
        if (n)
            trees[i]->stats.eval_seconds += dt; /* each tree waited for the whole call */
    }
    return MG_OK;
}

int mg_mcts_multi_search(mg_mcts_multi *mm, mg_mcts *const *trees, const mg_evaluator *const *evs,
                         const int *num_simulations, int k, struct mg_cancel *cancel, int *rcs, char *err,
                         size_t errlen)
{
    memset(&mm->stats, 0, sizeof mm->stats);
    if (k < 0) {
        snprintf(err, errlen, "mcts_multi: %d trees", k);
        return MG_ERR;
    }
    int64_t cap;
    if (check_args(trees, evs, num_simulations, k, &cap, err, errlen) != MG_OK)
        return MG_ERR;
    if (k == 0)
        return MG_OK;
    if (reserve(mm, k, (int)cap) != MG_OK) {
        snprintf(err, errlen, "mcts_multi: out of memory for %d trees and rounds of %lld requests", k, (long long)cap);
        return MG_ERR;
    }
    int rc = MG_OK;
    char terr[MG_ERRLEN];
    for (int i = 0; i < k; i++) {
        if (rcs)
            rcs[i] = MG_OK;
        if (mg_mcts_begin(trees[i], evs[i], num_simulations[i], terr, sizeof terr) != MG_OK) {
            snprintf(err, errlen, "mcts_multi: tree %d: %s", i, terr);
            if (rcs)
                rcs[i] = MG_ERR;
            for (int j = 0; j < i; j++)
                mg_mcts_finish(trees[j]);
            return MG_ERR;
        }
        mm->active[i] = 1;
    }
    make_groups(mm, trees, evs, k);
    for (int round = 0;; round++) {
        if (round && mg_cancel_check(cancel)) {
            int64_t done = 0;
            for (int i = 0; i < k; i++)
                done += trees[i]->s_done;
            snprintf(err, errlen, "mcts: interrupted after %d rounds (%lld simulations over %d trees)", round,
                     (long long)done, k);
            rc = MG_ERR;
            for (int i = 0; i < k; i++)
                if (mm->active[i] && rcs)
                    rcs[i] = MG_ERR;
            break;
        }
        int any = 0;
        for (int i = 0; i < k; i++) {
            mm->count[i] = 0;
            if (!mm->active[i])
                continue;
            int n = mg_mcts_gather(trees[i], &mm->treq[i], &mm->tres[i]);
            if (n == 0) {
                mg_mcts_finish(trees[i]);
                mm->active[i] = 0;
                continue;
            }
            mm->count[i] = n;
            any = 1;
        }
        if (!any)
            break;
        mm->stats.rounds++;
        for (int g = 0; g < k; g++) {
            if (mm->leader[g] != g || evaluate_group(mm, trees, evs[g], g, terr, sizeof terr) == MG_OK)
                continue;
            /* the evaluator failed: every batch of this round is dropped, every search ends */
            snprintf(err, errlen, "%s", terr);
            for (int i = 0; i < k; i++)
                if (mm->count[i]) {
                    mg_mcts_abort(trees[i]);
                    if (rcs && mm->leader[i] == g)
                        rcs[i] = MG_ERR;
                }
            rc = MG_ERR;
            break;
        }
        if (rc != MG_OK)
            break;
        for (int i = 0; i < k; i++) {
            if (!mm->count[i] || mg_mcts_scatter(trees[i], terr, sizeof terr) == MG_OK)
                continue;
            /* out of memory in this tree: its search ends (its next gather answers 0), the others go on */
            if (rc == MG_OK)
                snprintf(err, errlen, "mcts_multi: tree %d: %s", i, terr);
            rc = MG_ERR;
            if (rcs)
                rcs[i] = MG_ERR;
        }
    }
    for (int i = 0; i < k; i++)
        if (mm->active[i]) {
            mg_mcts_finish(trees[i]);
            mm->active[i] = 0;
        }
    return rc;
}
