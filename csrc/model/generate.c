/*
 * generate.c - batched greedy generation over the engine (engine.h): validation and budget,
 * ragged prefill (with prefix sharing), the decode loop, plain and grouped greedy choice, and
 * the bucket distributions at value tokens.  Nothing is allocated here.
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

static int choose(const mg_engine *e, const float *z, int grouped)
{
    return mg_choose_token(z, e->c.vocab_size, e->in_group, e->group, grouped ? e->n_group : 0);
}

/* Record token t of prompt b chosen from logits z: the bucket distribution if t is a value token. */
static void record(const mg_engine *e, const mg_gen_request *q, mg_gen_result *r, const float *z, int t)
{
    int b = e->bucket_of[t];
    if (b >= 0) {
        mg_bucket_probs(r->value_probs + (size_t)r->n_values * q->n_buckets, z, q->bucket_ids, q->n_buckets);
        r->value_steps[r->n_values++] = r->n_ids;
    }
    r->ids[r->n_ids++] = t;
}

/* Prompts [p0, p0 + n) of q (n <= max_batch) in slots 0..n-1. */
static void generate_chunk(mg_engine *e, const mg_gen_request *q, mg_gen_result *res, int p0, int n, int budget)
{
    const int32_t *const *pr = q->prompts + p0;
    const int32_t *lens = q->lens + p0;
    res += p0;
    int V = e->c.vocab_size, grouped = q->n_group > 0;
    for (int b = 0; b < n; b++) {
        e->line_start[b] = 0;
        res[b].n_ids = res[b].n_values = res[b].finished = 0;
        e->stats.prompt_tokens += lens[b];
    }
    /* shared prefix: the longest common prefix, leaving every prompt one token of its own */
    int shared = 0;
    if (q->prefix_sharing && n > 1) {
        int lim = lens[0] - 1;
        for (int b = 1; b < n; b++)
            if (lens[b] - 1 < lim)
                lim = lens[b] - 1;
        while (shared < lim) {
            int32_t t = pr[0][shared];
            int same = 1;
            for (int b = 1; b < n && same; b++)
                same = pr[b][shared] == t;
            if (!same)
                break;
            shared++;
        }
    }
    /* prefill: the shared prefix once (slot 0), then every prompt's own tokens, in passes of at
     * most rows_cap rows; the last token of each prompt asks for logits (row b of e->logits) */
    int R = e->rows_cap, nr = 0;
    for (int t = 0; t < shared; t++) {
        e->r_tok[nr] = pr[0][t];
        e->r_slot[nr] = 0;
        e->r_pos[nr] = t;
        e->r_logit[nr] = -1;
        if (++nr == R) {
            mg_engine_forward(e, nr);
            nr = 0;
        }
    }
    if (nr) {
        mg_engine_forward(e, nr);
        nr = 0;
    }
    for (int b = 1; b < n && shared; b++) {
        mg_engine_copy_prefix(e, 0, b, shared);
        e->line_start[b] = e->line_start[0];
    }
    e->stats.prefill_tokens += shared;
    e->stats.shared_saved += (int64_t)(n - 1) * shared;
    for (int b = 0; b < n; b++)
        for (int t = shared; t < lens[b]; t++) {
            e->r_tok[nr] = pr[b][t];
            e->r_slot[nr] = b;
            e->r_pos[nr] = t;
            e->r_logit[nr] = t == lens[b] - 1 ? b : -1;
            e->stats.prefill_tokens++;
            if (++nr == R) {
                mg_engine_forward(e, nr);
                nr = 0;
            }
        }
    if (nr)
        mg_engine_forward(e, nr);
    /* decode: logits row i belongs to active prompt gen_idx[i] */
    int act = n;
    for (int b = 0; b < n; b++) {
        e->gen_idx[b] = b;
        e->gen_pos[b] = lens[b];
    }
    for (int step = 0; step < budget; step++) {
        int keep = 0;
        for (int i = 0; i < act; i++) {
            int b = e->gen_idx[i];
            const float *z = e->logits + (size_t)i * V;
            int t = choose(e, z, grouped);
            record(e, q, &res[b], z, t);
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
    for (int p0 = 0; p0 < q->n; p0 += e->max_batch) {
        int n = q->n - p0 < e->max_batch ? q->n - p0 : e->max_batch;
        generate_chunk(e, q, res, p0, n, budget);
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
    memcpy(logits, e->logits, (size_t)c->vocab_size * sizeof(float));
    return MG_OK;
}
