/*
 * generate.c - batched greedy generation over the engine (engine.h): validation and budget,
 * ragged prefill (with prefix sharing over a prefix tree of the prompts), the decode loop, plain and grouped greedy choice, and
 * the bucket distributions at value tokens.  Nothing is allocated here.  The same logic drives
 * the CPU and the CUDA forward pass (engine.c: mg_engine_forward, mg_engine_choose, ...).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../game.h"
#include "choose.h"
#include "engine_impl.h"

int mg_engine_budget(const mg_engine *e, const mg_gen_request *q, char *err, size_t errlen)
{
    const mg_model_config *c = &e->c;
    if (q->n < 0 || (q->n > 0 && (!q->prompts || !q->lens))) {
        snprintf(err, errlen, "bad request: %d prompts", q->n);
        return -1;
    }
    if (q->max_new_tokens <= 0) {
        snprintf(err, errlen, "max_new_tokens must be positive, got %d", q->max_new_tokens);
        return -1;
    }
    if (q->n_buckets < 0 || q->n_buckets > MG_ENGINE_MAX_BUCKETS || q->n_stop < 0 || q->n_group < 0) {
        snprintf(err, errlen, "bad request: %d bucket ids (at most %d), %d stop ids, %d group ids", q->n_buckets,
                 MG_ENGINE_MAX_BUCKETS, q->n_stop, q->n_group);
        return -1;
    }
    const int32_t *lists[3] = {q->stop_ids, q->group_ids, q->bucket_ids};
    int counts[3] = {q->n_stop, q->n_group, q->n_buckets};
    const char *names[3] = {"stop", "group", "bucket"};
    for (int l = 0; l < 3; l++)
        for (int i = 0; i < counts[l]; i++)
            if (lists[l][i] < 0 || lists[l][i] >= c->vocab_size) {
                snprintf(err, errlen, "%s id %d is outside the vocabulary [0, %d)", names[l], (int)lists[l][i],
                         c->vocab_size);
                return -1;
            }
    int longest = 0;
    for (int i = 0; i < q->n; i++) {
        if (q->lens[i] <= 0) {
            snprintf(err, errlen, "prompt %d is empty", i);
            return -1;
        }
        for (int t = 0; t < q->lens[i]; t++)
            if (q->prompts[i][t] < 0 || q->prompts[i][t] >= c->vocab_size) {
                snprintf(err, errlen, "prompt %d has a token id %d outside [0, %d)", i, (int)q->prompts[i][t],
                         c->vocab_size);
                return -1;
            }
        if (q->lens[i] > longest)
            longest = q->lens[i];
    }
    if (longest >= c->max_seq_len) {
        snprintf(err, errlen, "a prompt of %d tokens does not fit the model's max_seq_len %d", longest,
                 c->max_seq_len);
        return -1;
    }
    int room = c->max_seq_len - longest;
    return q->max_new_tokens < room ? q->max_new_tokens : room;
}

/* Record token t of a prompt chosen from logits row i: the bucket distribution if t is a value token. */
static void record(const mg_engine *e, const mg_gen_request *q, mg_gen_result *r, int i, int t)
{
    int b = e->bucket_of[t];
    if (b >= 0) {
        mg_engine_row_probs(e, i, r->value_probs + (size_t)r->n_values * q->n_buckets, q->bucket_ids, q->n_buckets);
        r->value_steps[r->n_values++] = r->n_ids;
    }
    r->ids[r->n_ids++] = t;
}

/* ---- prefix sharing: a prefix tree of the chunk's prompts ----------------------------------- */

static int common_prefix(const int32_t *a, int la, const int32_t *b, int lb)
{
    int n = la < lb ? la : lb, i = 0;
    while (i < n && a[i] == b[i])
        i++;
    return i;
}

/* Token order of prompts a and b (a prefix first; equal prompts by index, so the sort is stable). */
static int prompt_before(const int32_t *const *pr, const int32_t *lens, int a, int b)
{
    int c = common_prefix(pr[a], lens[a], pr[b], lens[b]);
    if (c < lens[a] && c < lens[b])
        return pr[a][c] != pr[b][c] ? pr[a][c] < pr[b][c] : a < b;
    return lens[a] != lens[b] ? lens[a] < lens[b] : a < b;
}

/* Bottom-up merge sort of e->pf_order[0..n) by prompt (scratch e->pf_tmp). */
static void sort_prompts(mg_engine *e, const int32_t *const *pr, const int32_t *lens, int n)
{
    int32_t *a = e->pf_order, *t = e->pf_tmp;
    for (int w = 1; w < n; w *= 2) {
        for (int lo = 0; lo < n; lo += 2 * w) {
            int mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n, i = lo, j = mid, k = lo;
            while (i < mid && j < hi)
                t[k++] = prompt_before(pr, lens, a[j], a[i]) ? a[j++] : a[i++];
            while (i < mid)
                t[k++] = a[i++];
            while (j < hi)
                t[k++] = a[j++];
        }
        int32_t *x = a;
        a = t;
        t = x;
    }
    if (a != e->pf_order)
        memcpy(e->pf_order, a, (size_t)n * sizeof *a);
}

/* The sharing plan of prompts 0..n-1: e->pf_src[b] the slot whose cached keys and values of
 * positions [0, pf_share[b]) prompt b copies instead of computing them (-1: none).  The prompts
 * sorted, the longest common prefix of b with any other prompt is the one with its neighbour in
 * that order (pf_lcp), leaving b at least one token of its own; its source is the first prompt of
 * the sorted run that shares that prefix (the node of the prefix tree where b's own tokens begin),
 * whose own share is smaller: sources form a tree of depth at most the number of distinct share
 * lengths, and each node of the prefix tree is computed once. */
static void plan_sharing(mg_engine *e, const int32_t *const *pr, const int32_t *lens, int n, int sharing)
{
    int32_t *ord = e->pf_order, *a = e->pf_lcp;
    for (int b = 0; b < n; b++) {
        ord[b] = b;
        e->pf_src[b] = -1;
        e->pf_share[b] = 0;
    }
    if (!sharing || n < 2)
        return;
    sort_prompts(e, pr, lens, n);
    a[0] = 0;
    for (int k = 1; k < n; k++)
        a[k] = common_prefix(pr[ord[k - 1]], lens[ord[k - 1]], pr[ord[k]], lens[ord[k]]);
    for (int k = 1; k < n; k++) {
        int b = ord[k], s = a[k] < lens[b] - 1 ? a[k] : lens[b] - 1;
        if (s <= 0)
            continue;
        int j = k - 1; /* leftmost j with min(a[j+1..k]) >= s */
        while (j > 0 && a[j] >= s)
            j--;
        e->pf_src[b] = ord[j];
        e->pf_share[b] = s;
    }
}

/* Where the current text line begins after positions [0, len) of prompt p (mg_engine_forward's
 * e->line_start as it would be after computing them). */
static int line_start_after(const mg_engine *e, const int32_t *p, int len)
{
    for (int t = len - 1; t >= 0; t--)
        if (p[t] == e->c.newline_id)
            return t + 1;
    return 0;
}

/* Prompts [p0, p0 + n) of q (n <= max_batch) in slots 0..n-1. */
static void generate_chunk(mg_engine *e, const mg_gen_request *q, mg_gen_result *res, int p0, int n, int budget)
{
    const int32_t *const *pr = q->prompts + p0;
    const int32_t *lens = q->lens + p0;
    res += p0;
    int grouped = q->n_group > 0;
    for (int b = 0; b < n; b++) {
        e->line_start[b] = 0;
        e->pf_state[b] = 0;
        res[b].n_ids = res[b].n_values = res[b].finished = 0;
        e->stats.prompt_tokens += lens[b];
    }
    plan_sharing(e, pr, lens, n, q->prefix_sharing);
    /* the cross-batch cache: a cached prefix at least as long as the batch's share replaces it */
    for (int b = 0; b < n; b++) {
        e->pf_cached[b] = 0;
        if (!q->prefix_sharing || e->pc.n_blocks == 0)
            continue;
        int hit = mg_pc_lookup(&e->pc, pr[b], (lens[b] - 1) / MG_PC_BLOCK, NULL, NULL, 0) * MG_PC_BLOCK;
        if (hit > 0 && hit > e->pf_share[b]) { /* equal: copied in the batch (grouped in CUDA decode) */
            mg_engine_pc_fetch(e, b, pr[b], hit / MG_PC_BLOCK);
            e->pf_src[b] = -1;
            e->pf_share[b] = hit;
            e->pf_cached[b] = 1;
        }
    }
    /* prefill in waves: a prompt whose source is prefilled copies its shared prefix and computes
     * the rest (every prompt in the first wave without sharing), in passes of at most rows_cap
     * rows, sequences whole and in sorted order; the last token of each prompt asks for logits,
     * in the order the prompts are prefilled: logits row i is prompt gen_idx[i] */
    int R = e->rows_cap, nr = 0, act = 0;
    while (act < n) {
        for (int k = 0; k < n; k++) {
            int b = e->pf_order[k], src = e->pf_src[b], sh = e->pf_share[b];
            if (e->pf_state[b] || (src >= 0 && e->pf_state[src] != 2))
                continue;
            e->pf_state[b] = 1;
            if (src >= 0)
                mg_engine_copy_prefix(e, src, b, sh);
            if (sh > 0) { /* copied from slot src or from the prefix cache */
                e->line_start[b] = line_start_after(e, pr[b], sh);
                e->stats.shared_saved += sh;
                e->stats.cache_saved += e->pf_cached[b] ? sh : 0;
            }
            for (int t = sh; t < lens[b]; t++) {
                e->r_tok[nr] = pr[b][t];
                e->r_slot[nr] = b;
                e->r_pos[nr] = t;
                e->r_logit[nr] = t == lens[b] - 1 ? act : -1;
                e->stats.prefill_tokens++;
                if (++nr == R) {
                    mg_engine_forward(e, nr);
                    nr = 0;
                }
            }
            e->gen_idx[act] = b;
            e->gen_pos[act] = lens[b];
            act++;
        }
        if (nr) {
            mg_engine_forward(e, nr);
            nr = 0;
        }
        for (int b = 0; b < n; b++)
            if (e->pf_state[b] == 1)
                e->pf_state[b] = 2;
    }
    if (q->prefix_sharing)
        for (int b = 0; b < n; b++)
            mg_engine_pc_store(e, b, pr[b], lens[b] / MG_PC_BLOCK);
    /* decode: logits row i belongs to active prompt gen_idx[i] */
    for (int step = 0; step < budget; step++) {
        int keep = 0;
        mg_engine_choose(e, act, grouped);
        for (int i = 0; i < act; i++) {
            int b = e->gen_idx[i];
            int t = e->c_tok[i];
            record(e, q, &res[b], i, t);
            e->stats.generated++;
            if (e->is_stop[t]) {
                res[b].finished = 1;
                continue;
            }
            e->gen_idx[keep] = b;
            e->gen_pos[keep] = e->gen_pos[i];
            e->gen_last[keep] = t;
            keep++;
        }
        act = keep;
        if (act == 0 || step == budget - 1)
            break;
        for (int i = 0; i < act; i++) {
            e->r_tok[i] = e->gen_last[i];
            e->r_slot[i] = e->gen_idx[i];
            e->r_pos[i] = e->gen_pos[i]++;
            e->r_logit[i] = i;
        }
        e->stats.decode_tokens += act;
        mg_engine_forward(e, act);
    }
}

int mg_engine_generate(mg_engine *e, const mg_gen_request *q, mg_gen_result *res, char *err, size_t errlen)
{
    int budget = mg_engine_budget(e, q, err, errlen);
    if (budget < 0)
        return MG_ERR;
    int V = e->c.vocab_size;
    memset(e->is_stop, 0, (size_t)V);
    memset(e->in_group, 0, (size_t)V);
    for (int i = 0; i < V; i++)
        e->bucket_of[i] = -1;
    for (int i = 0; i < q->n_stop; i++)
        e->is_stop[q->stop_ids[i]] = 1;
    e->n_group = 0;
    for (int i = 0; i < q->n_group; i++)
        if (!e->in_group[q->group_ids[i]]) {
            e->in_group[q->group_ids[i]] = 1;
            e->group[e->n_group++] = q->group_ids[i];
        }
    for (int i = 0; i < q->n_buckets; i++)
        e->bucket_of[q->bucket_ids[i]] = (int16_t)i;
    e->gpu_err = 0;
    mg_engine_set_choice(e, q->bucket_ids, q->n_buckets);
    for (int p0 = 0; p0 < q->n && !e->gpu_err; p0 += e->max_batch) {
        int n = q->n - p0 < e->max_batch ? q->n - p0 : e->max_batch;
        generate_chunk(e, q, res, p0, n, budget);
    }
    if (e->gpu_err) {
        snprintf(err, errlen, "the CUDA forward pass failed (%s)",
                 e->gpu_err == 1 ? "a shape the kernels do not support" : "a kernel launch or copy failed");
        return MG_ERR;
    }
    return MG_OK;
}

int mg_engine_logits(mg_engine *e, const int32_t *prompt, int len, float *logits, char *err, size_t errlen)
{
    const mg_model_config *c = &e->c;
    if (len <= 0 || len > c->max_seq_len) {
        snprintf(err, errlen, "prompt length %d is not in [1, %d]", len, c->max_seq_len);
        return MG_ERR;
    }
    for (int t = 0; t < len; t++)
        if (prompt[t] < 0 || prompt[t] >= c->vocab_size) {
            snprintf(err, errlen, "token id %d at %d is outside [0, %d)", (int)prompt[t], t, c->vocab_size);
            return MG_ERR;
        }
    e->line_start[0] = 0;
    e->gpu_err = 0;
    int R = e->rows_cap, nr = 0;
    for (int t = 0; t < len; t++) {
        e->r_tok[nr] = prompt[t];
        e->r_slot[nr] = 0;
        e->r_pos[nr] = t;
        e->r_logit[nr] = t == len - 1 ? 0 : -1;
        if (++nr == R || t == len - 1) {
            mg_engine_forward(e, nr);
            nr = 0;
        }
    }
    if (mg_engine_read_logits(e, 1, logits) != MG_OK || e->gpu_err) {
        snprintf(err, errlen, "the CUDA forward pass failed");
        return MG_ERR;
    }
    return MG_OK;
}
