/* az_selfplay.c - AlphaZero self-play with batched network evaluation (see az_selfplay.h). */
#include "az_selfplay.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../rng.h"

typedef struct az_game {
    unsigned char *state;
    mg_mcts *m;
    mg_rng rng;
    int64_t number;         /* order of start */
    int ply;
    int active, searching;
    int npend;              /* requests of the batch out */
    int *rows;              /* [batch_size]: each request's row in the network batch, -1: from the cache */
    const mg_eval_request *req;
    mg_eval_result *res;
    /* This game's moves so far (obs has a row more: the position after the last move). */
    int nmoves, cap;
    float *obs, *pi;
    int8_t *mover;
} az_game;

struct mg_az_selfplay {
    const mg_game *g;
    mg_az_config cfg;
    unsigned char *start;
    int obs_size, shape[3];
    int32_t A;
    az_game *games;
    /* Evaluation cache (direct-mapped, 2^cache_log2 entries): position hash -> value and priors over
     * the legal actions in legal_actions() order. */
    uint64_t *ckey;
    int32_t *cn;            /* number of legal actions, 0: empty */
    float *cval, *cpol;     /* cpol: entries x max_moves */
    uint64_t cmask;
    /* Finished games' examples. */
    int64_t nex, excap;
    float *ex_obs, *ex_after, *ex_pi, *ex_z;
    int64_t *ex_game;
    int32_t *ex_ply;
    mg_az_stats stats;
    /* Rows of the last gather: game number, latent and root-to-leaf intrinsic reward ([max_batch]). */
    int64_t *row_game;
    int32_t *row_latent;
    float *row_reward;
    int8_t *row_own;
    /* AZdb team (mg_az_set_team): each side's latent per game, reward weights per latent (or NULL),
     * scratch for replaying a leaf's path. */
    int num_latents;
    int32_t *team;
    float *rweights;
    unsigned char *tmp_state, *tmp_undo;
    float *tmp_obs;
};

void mg_az_config_default(mg_az_config *c)
{
    memset(c, 0, sizeof *c);
    mg_mcts_config_default(&c->mcts);
    c->mcts.prior = MG_MCTS_PRIOR_POLICY;
    c->mcts.eps = 0.0;
    c->mcts.fpu = 0.0;
    c->mcts.c_base = 19652.0;
    c->mcts.c_init = 1.25;
    c->mcts.batch_size = 1;
    c->mcts.dirichlet_alpha = 0.3;
    c->mcts.dirichlet_frac = 0.25;
    c->parallel_games = 16;
    c->num_games_total = 64;
    c->num_simulations = 100;
    c->temperature_plies = 30;
    c->temperature = 1.0;
    c->max_plies = 0;
    c->seed = 0;
}

int mg_az_config_check(const mg_az_config *c, char *err, size_t errlen)
{
    if (mg_mcts_config_check(&c->mcts, err, errlen) != MG_OK)
        return MG_ERR;
    if (c->mcts.mode != MG_EVAL_ENGINE || c->mcts.prior != MG_MCTS_PRIOR_POLICY) {
        snprintf(err, errlen, "az: the search must be in engine mode with the policy prior (mode %d, prior %d)",
                 c->mcts.mode, c->mcts.prior);
        return MG_ERR;
    }
    if (c->parallel_games < 1 || c->parallel_games > 1 << 20) {
        snprintf(err, errlen, "az: parallel_games %d is not in [1, %d]", c->parallel_games, 1 << 20);
        return MG_ERR;
    }
    if (c->num_games_total < 1) {
        snprintf(err, errlen, "az: num_games_total %lld must be >= 1", (long long)c->num_games_total);
        return MG_ERR;
    }
    if (c->num_simulations < 2) {
        snprintf(err, errlen, "az: num_simulations %d must be >= 2 (the root's evaluation and a visit)",
                 c->num_simulations);
        return MG_ERR;
    }
    if (c->temperature_plies < 0) {
        snprintf(err, errlen, "az: temperature_plies %d is negative", c->temperature_plies);
        return MG_ERR;
    }
    if (!(c->temperature > 0) || !isfinite(c->temperature)) {
        snprintf(err, errlen, "az: temperature %g must be a positive number", c->temperature);
        return MG_ERR;
    }
    if (c->cache_log2 < 0 || c->cache_log2 > 26) {
        snprintf(err, errlen, "az: cache_log2 %d is not in [0, 26] (0: no cache)", c->cache_log2);
        return MG_ERR;
    }
    if (c->max_plies < 0) {
        snprintf(err, errlen, "az: max_plies %d is negative (0: no limit)", c->max_plies);
        return MG_ERR;
    }
    return MG_OK;
}

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void mg_az_free(mg_az_selfplay *sp)
{
    if (!sp)
        return;
    for (int i = 0; sp->games && i < sp->cfg.parallel_games; i++) {
        az_game *gm = &sp->games[i];
        mg_mcts_free(gm->m);
        free(gm->state);
        free(gm->obs);
        free(gm->pi);
        free(gm->mover);
        free(gm->rows);
    }
    free(sp->ckey);
    free(sp->cn);
    free(sp->cval);
    free(sp->cpol);
    free(sp->games);
    free(sp->start);
    free(sp->ex_obs);
    free(sp->ex_after);
    free(sp->ex_pi);
    free(sp->ex_z);
    free(sp->ex_game);
    free(sp->ex_ply);
    free(sp->row_game);
    free(sp->row_latent);
    free(sp->row_reward);
    free(sp->row_own);
    free(sp->team);
    free(sp->rweights);
    free(sp->tmp_state);
    free(sp->tmp_undo);
    free(sp->tmp_obs);
    free(sp);
}

/* The next game in slot gm: its move sampling and its trees' noise and tie-breaks are seeded by
 * (seed, game number), so a game does not depend on which slot plays it or when. */
static int start_game(mg_az_selfplay *sp, az_game *gm, char *err, size_t errlen)
{
    memcpy(gm->state, sp->start, sp->g->state_size);
    gm->number = sp->stats.games_started++;
    gm->ply = 0;
    gm->nmoves = 0;
    gm->active = 1;
    gm->searching = 0;
    mg_rng_seed(&gm->rng, mg_mix64(sp->cfg.seed) ^ mg_mix64((uint64_t)gm->number));
    mg_mcts_config mc = sp->cfg.mcts;
    mc.seed = mg_mix64(sp->cfg.seed + 0x51ed27a3u) ^ mg_mix64((uint64_t)gm->number + 1);
    mg_mcts_free(gm->m);
    gm->m = mg_mcts_create(sp->g, &mc, err, errlen);
    if (!gm->m) {
        gm->active = 0;
        return MG_ERR;
    }
    return MG_OK;
}

mg_az_selfplay *mg_az_create(const mg_game *g, const void *start, const mg_az_config *cfg, char *err,
                             size_t errlen)
{
    if (mg_az_config_check(cfg, err, errlen) != MG_OK)
        return NULL;
    if (!g->observation || !g->obs_shape) {
        snprintf(err, errlen, "az: game %s has no observation tensor", g->name);
        return NULL;
    }
    if (g->outcome(start, NULL) != MG_ONGOING) {
        snprintf(err, errlen, "az: the start position is already over");
        return NULL;
    }
    mg_az_selfplay *sp = calloc(1, sizeof *sp);
    if (!sp) {
        snprintf(err, errlen, "az: out of memory");
        return NULL;
    }
    sp->g = g;
    sp->cfg = *cfg;
    sp->A = g->num_actions;
    g->obs_shape(start, sp->shape);
    sp->obs_size = sp->shape[0] * sp->shape[1] * sp->shape[2];
    sp->start = malloc(g->state_size);
    sp->games = calloc((size_t)cfg->parallel_games, sizeof *sp->games);
    if (!sp->start || !sp->games) {
        mg_az_free(sp);
        snprintf(err, errlen, "az: out of memory");
        return NULL;
    }
    memcpy(sp->start, start, g->state_size);
    {
        size_t mb = (size_t)mg_az_max_batch(sp);
        sp->row_game = calloc(mb, sizeof *sp->row_game);
        sp->row_latent = calloc(mb, sizeof *sp->row_latent);
        sp->row_reward = calloc(mb, sizeof *sp->row_reward);
        sp->row_own = calloc(mb, sizeof *sp->row_own);
        if (!sp->row_game || !sp->row_latent || !sp->row_reward || !sp->row_own) {
            mg_az_free(sp);
            snprintf(err, errlen, "az: out of memory");
            return NULL;
        }
    }
    if (cfg->cache_log2 > 0) {
        size_t ne = (size_t)1 << cfg->cache_log2;
        sp->cmask = ne - 1;
        sp->ckey = malloc(ne * sizeof *sp->ckey);
        sp->cn = calloc(ne, sizeof *sp->cn);
        sp->cval = malloc(ne * sizeof *sp->cval);
        sp->cpol = malloc(ne * (size_t)g->max_moves * sizeof *sp->cpol);
        if (!sp->ckey || !sp->cn || !sp->cval || !sp->cpol) {
            mg_az_free(sp);
            snprintf(err, errlen, "az: out of memory for a cache of 2^%d positions", cfg->cache_log2);
            return NULL;
        }
    }
    for (int i = 0; i < cfg->parallel_games; i++) {
        az_game *gm = &sp->games[i];
        gm->state = malloc(g->state_size);
        gm->rows = malloc((size_t)cfg->mcts.batch_size * sizeof *gm->rows);
        if (!gm->state || !gm->rows) {
            snprintf(err, errlen, "az: out of memory");
            mg_az_free(sp);
            return NULL;
        }
        if (sp->stats.games_started < cfg->num_games_total && start_game(sp, gm, err, errlen) != MG_OK) {
            mg_az_free(sp);
            return NULL;
        }
    }
    return sp;
}

int mg_az_obs_size(const mg_az_selfplay *sp) { return sp->obs_size; }

void mg_az_obs_shape(const mg_az_selfplay *sp, int shape[3]) { memcpy(shape, sp->shape, sizeof sp->shape); }

int mg_az_max_batch(const mg_az_selfplay *sp)
{
    int b = sp->cfg.mcts.batch_size < sp->cfg.num_simulations ? sp->cfg.mcts.batch_size : sp->cfg.num_simulations;
    return sp->cfg.parallel_games * b;
}

static int reserve_moves(mg_az_selfplay *sp, az_game *gm)
{
    if (gm->nmoves < gm->cap)
        return MG_OK;
    int cap = gm->cap ? 2 * gm->cap : 64;
    float *obs = realloc(gm->obs, (size_t)(cap + 1) * (size_t)sp->obs_size * sizeof *obs);
    if (!obs)
        return MG_ERR;
    gm->obs = obs;
    float *pi = realloc(gm->pi, (size_t)cap * (size_t)sp->A * sizeof *pi);
    if (!pi)
        return MG_ERR;
    gm->pi = pi;
    int8_t *mover = realloc(gm->mover, (size_t)cap * sizeof *mover);
    if (!mover)
        return MG_ERR;
    gm->mover = mover;
    gm->cap = cap;
    return MG_OK;
}

/* Moves the game's examples into the finished set with z from each mover's view. */
static int finish_game(mg_az_selfplay *sp, az_game *gm, int result)
{
    int64_t need = sp->nex + gm->nmoves;
    if (need > sp->excap) {
        int64_t cap = sp->excap ? sp->excap : 256;
        while (cap < need)
            cap *= 2;
        float *o = realloc(sp->ex_obs, (size_t)cap * (size_t)sp->obs_size * sizeof *o);
        if (!o)
            return MG_ERR;
        sp->ex_obs = o;
        float *af = realloc(sp->ex_after, (size_t)cap * (size_t)sp->obs_size * sizeof *af);
        if (!af)
            return MG_ERR;
        sp->ex_after = af;
        float *p = realloc(sp->ex_pi, (size_t)cap * (size_t)sp->A * sizeof *p);
        if (!p)
            return MG_ERR;
        sp->ex_pi = p;
        float *z = realloc(sp->ex_z, (size_t)cap * sizeof *z);
        if (!z)
            return MG_ERR;
        sp->ex_z = z;
        int64_t *gn = realloc(sp->ex_game, (size_t)cap * sizeof *gn);
        if (!gn)
            return MG_ERR;
        sp->ex_game = gn;
        int32_t *pl = realloc(sp->ex_ply, (size_t)cap * sizeof *pl);
        if (!pl)
            return MG_ERR;
        sp->ex_ply = pl;
        sp->excap = cap;
    }
    /* the position after the last move, so that row i + 1 follows move i */
    sp->g->observation(gm->state, gm->obs + (size_t)gm->nmoves * (size_t)sp->obs_size);
    memcpy(sp->ex_obs + (size_t)sp->nex * (size_t)sp->obs_size, gm->obs,
           (size_t)gm->nmoves * (size_t)sp->obs_size * sizeof(float));
    memcpy(sp->ex_after + (size_t)sp->nex * (size_t)sp->obs_size, gm->obs + sp->obs_size,
           (size_t)gm->nmoves * (size_t)sp->obs_size * sizeof(float));
    memcpy(sp->ex_pi + (size_t)sp->nex * (size_t)sp->A, gm->pi, (size_t)gm->nmoves * (size_t)sp->A * sizeof(float));
    for (int i = 0; i < gm->nmoves; i++) {
        float z = 0.0f;
        if (result == MG_P0_WINS)
            z = gm->mover[i] == MG_P0 ? 1.0f : -1.0f;
        else if (result == MG_P1_WINS)
            z = gm->mover[i] == MG_P1 ? 1.0f : -1.0f;
        sp->ex_z[sp->nex + i] = z;
        sp->ex_game[sp->nex + i] = gm->number;
        sp->ex_ply[sp->nex + i] = i;
    }
    sp->nex = need;
    sp->stats.games_finished++;
    if (result == MG_P0_WINS)
        sp->stats.p0_wins++;
    else if (result == MG_P1_WINS)
        sp->stats.p1_wins++;
    else
        sp->stats.draws++;
    gm->nmoves = 0;
    return MG_OK;
}

/* After a finished search: store the example, choose and play the move, end the game if over. */
static int play_move(mg_az_selfplay *sp, az_game *gm, char *err, size_t errlen)
{
    const mg_game *g = sp->g;
    int32_t actions[MG_MAX_MOVES];
    uint32_t visits[MG_MAX_MOVES];
    int n = mg_mcts_num_root_edges(gm->m);
    if (n < 1) {
        snprintf(err, errlen, "az: game %lld ply %d: the search expanded no root", (long long)gm->number, gm->ply);
        return MG_ERR;
    }
    mg_mcts_root_edges(gm->m, actions, visits, NULL, NULL, NULL, NULL);
    uint64_t sum = 0;
    uint32_t vmax = 0;
    for (int i = 0; i < n; i++) {
        sum += visits[i];
        vmax = visits[i] > vmax ? visits[i] : vmax;
    }
    if (sum == 0) {
        snprintf(err, errlen, "az: game %lld ply %d: no root action was visited", (long long)gm->number, gm->ply);
        return MG_ERR;
    }
    if (reserve_moves(sp, gm) != MG_OK) {
        snprintf(err, errlen, "az: out of memory for game records");
        return MG_ERR;
    }
    g->observation(gm->state, gm->obs + (size_t)gm->nmoves * (size_t)sp->obs_size);
    float *pi = gm->pi + (size_t)gm->nmoves * (size_t)sp->A;
    memset(pi, 0, (size_t)sp->A * sizeof *pi);
    for (int i = 0; i < n; i++)
        pi[actions[i]] = (float)((double)visits[i] / (double)sum);
    gm->mover[gm->nmoves] = (int8_t)g->to_move(gm->state);
    gm->nmoves++;
    sp->stats.moves++;
    int32_t a;
    if (gm->ply < sp->cfg.temperature_plies) {
        /* weights (N / N_max)^(1 / T): no overflow for small T */
        double w[MG_MAX_MOVES], tot = 0.0, inv = 1.0 / sp->cfg.temperature;
        for (int i = 0; i < n; i++) {
            w[i] = visits[i] ? pow((double)visits[i] / (double)vmax, inv) : 0.0;
            tot += w[i];
        }
        double u = mg_rng_double(&gm->rng) * tot;
        int k = 0;
        while (k < n - 1 && (u >= w[k] || w[k] == 0.0)) {
            u -= w[k];
            k++;
        }
        while (visits[k] == 0) /* rounding at the end of the range */
            k--;
        a = actions[k];
    } else {
        a = mg_mcts_best_action(gm->m);
    }
    _Alignas(16) unsigned char undo[MG_MAX_UNDO];
    g->make(gm->state, a, undo);
    gm->ply++;
    int r = g->outcome(gm->state, NULL);
    if (r == MG_ONGOING && sp->cfg.max_plies > 0 && gm->ply >= sp->cfg.max_plies) {
        r = MG_DRAW;
        sp->stats.cut_draws++;
    }
    if (r != MG_ONGOING) {
        if (finish_game(sp, gm, r) != MG_OK) {
            snprintf(err, errlen, "az: out of memory for examples");
            return MG_ERR;
        }
        if (sp->stats.games_started < sp->cfg.num_games_total)
            return start_game(sp, gm, err, errlen);
        gm->active = 0;
    }
    return MG_OK;
}

/* The cached answer for the request's position, if any: fills the result (status OK). */
static int cache_answer(mg_az_selfplay *sp, const mg_eval_request *q, mg_eval_result *r)
{
    if (!sp->ckey)
        return 0;
    uint64_t h = sp->g->hash(q->state);
    size_t e = (size_t)(mg_mix64(h) & sp->cmask);
    if (sp->cn[e] != q->num_legal || sp->ckey[e] != h)
        return 0;
    memcpy(r->policy, sp->cpol + e * (size_t)sp->g->max_moves, (size_t)q->num_legal * sizeof *r->policy);
    r->value = sp->cval[e];
    r->status = MG_EVAL_OK;
    r->seq = q->index;
    sp->stats.cache_hits++;
    return 1;
}

static void cache_store(mg_az_selfplay *sp, const mg_eval_request *q, const mg_eval_result *r)
{
    if (!sp->ckey)
        return;
    uint64_t h = sp->g->hash(q->state);
    size_t e = (size_t)(mg_mix64(h) & sp->cmask);
    sp->ckey[e] = h;
    sp->cn[e] = q->num_legal;
    sp->cval[e] = (float)r->value;
    memcpy(sp->cpol + e * (size_t)sp->g->max_moves, r->policy, (size_t)q->num_legal * sizeof *r->policy);
}

int mg_az_set_team(mg_az_selfplay *sp, int num_latents, const int32_t *latents, const float *weights, char *err,
                   size_t errlen)
{
    if (sp->stats.batches > 0 || sp->stats.moves > 0) {
        snprintf(err, errlen, "az: set_team after self-play started");
        return MG_ERR;
    }
    if (num_latents < 1) {
        snprintf(err, errlen, "az: num_latents %d must be >= 1", num_latents);
        return MG_ERR;
    }
    if (sp->ckey) {
        snprintf(err, errlen, "az: a team needs cache_log2 0 (the cache keys positions, not latents and paths)");
        return MG_ERR;
    }
    size_t nl = (size_t)sp->cfg.num_games_total * 2;
    for (size_t i = 0; i < nl; i++)
        if (latents[i] < 0 || latents[i] >= num_latents) {
            snprintf(err, errlen, "az: latent %d of game %zu side %zu is not in [0, %d)", (int)latents[i], i / 2,
                     i % 2, num_latents);
            return MG_ERR;
        }
    int32_t *team = malloc(nl * sizeof *team);
    float *w = weights ? malloc((size_t)num_latents * (size_t)sp->obs_size * sizeof *w) : NULL;
    unsigned char *ts = malloc(sp->g->state_size), *tu = malloc(sp->g->undo_size ? sp->g->undo_size : 1);
    float *to = malloc((size_t)sp->obs_size * sizeof *to);
    if (!team || (weights && !w) || !ts || !tu || !to) {
        free(team), free(w), free(ts), free(tu), free(to);
        snprintf(err, errlen, "az: out of memory");
        return MG_ERR;
    }
    for (size_t i = 0; weights && i < (size_t)num_latents * (size_t)sp->obs_size; i++)
        if (!isfinite(weights[i])) {
            snprintf(err, errlen, "az: reward weight %g (latent %zu, entry %zu) is not finite", (double)weights[i],
                     i / (size_t)sp->obs_size, i % (size_t)sp->obs_size);
            free(team), free(w), free(ts), free(tu), free(to);
            return MG_ERR;
        }
    memcpy(team, latents, nl * sizeof *team);
    if (w)
        memcpy(w, weights, (size_t)num_latents * (size_t)sp->obs_size * sizeof *w);
    free(sp->team), free(sp->rweights), free(sp->tmp_state), free(sp->tmp_undo), free(sp->tmp_obs);
    sp->team = team;
    sp->rweights = w;
    sp->tmp_state = ts;
    sp->tmp_undo = tu;
    sp->tmp_obs = to;
    sp->num_latents = num_latents;
    return MG_OK;
}

void mg_az_row_info(const mg_az_selfplay *sp, int n, int64_t *game, int32_t *latent, float *reward, int8_t *own)
{
    if (own)
        memcpy(own, sp->row_own, (size_t)n * sizeof *own);
    if (game)
        memcpy(game, sp->row_game, (size_t)n * sizeof *game);
    if (latent)
        memcpy(latent, sp->row_latent, (size_t)n * sizeof *latent);
    if (reward)
        memcpy(reward, sp->row_reward, (size_t)n * sizeof *reward);
}

int mg_az_path_reward(const mg_game *g, const void *root, const int32_t *path, int depth, const float *w,
                      int obs_size, void *tmp_state, void *tmp_undo, float *tmp_obs, double *sum, char *err,
                      size_t errlen)
{
    memcpy(tmp_state, root, g->state_size);
    int root_mover = g->to_move(root);
    double r = 0.0;
    for (int d = 0; d < depth; d++) {
        if (err && (g->outcome(tmp_state, NULL) != MG_ONGOING || !g->is_legal(tmp_state, path[d]))) {
            snprintf(err, errlen, "az: action %d (path entry %d) is not legal in that position", (int)path[d], d);
            return MG_ERR;
        }
        int mover = g->to_move(tmp_state);
        g->make(tmp_state, path[d], tmp_undo);
        if (mover != root_mover)
            continue;
        g->observation(tmp_state, tmp_obs);
        for (int k = 0; k < obs_size; k++)
            r += (double)w[k] * (double)tmp_obs[k];
    }
    *sum = r;
    return MG_OK;
}

/* Row `row` of a gather: the game, the latent of the root's mover (the searching player: AZdb's search
 * uses the root player's latent throughout) and the sum of w_latent . observation(after the move) over
 * the root mover's moves on the path from the root to the leaf (AZdb's intrinsic rewards summed from
 * root to leaf, zero on the opponent's turns). */
static void row_info(mg_az_selfplay *sp, const az_game *gm, const mg_eval_request *q, int row)
{
    const mg_game *g = sp->g;
    sp->row_game[row] = gm->number;
    sp->row_latent[row] = 0;
    sp->row_reward[row] = 0.0f;
    int root_mover = g->to_move(gm->state);
    sp->row_own[row] = (int8_t)(g->to_move(q->state) == root_mover);
    if (!sp->team)
        return;
    int lat = sp->team[2 * gm->number + (root_mover ? 1 : 0)];
    sp->row_latent[row] = lat;
    if (!sp->rweights || q->depth <= 0)
        return;
    double r = 0.0;
    mg_az_path_reward(g, gm->state, q->path, q->depth, sp->rweights + (size_t)lat * (size_t)sp->obs_size,
                      sp->obs_size, sp->tmp_state, sp->tmp_undo, sp->tmp_obs, &r, NULL, 0);
    sp->row_reward[row] = (float)r;
}

int mg_az_gather(mg_az_selfplay *sp, float *obs, char *err, size_t errlen)
{
    double t0 = now_seconds();
    const mg_game *g = sp->g;
    int n = 0, rc = MG_OK;
    for (int i = 0; i < sp->cfg.parallel_games && rc == MG_OK; i++) {
        az_game *gm = &sp->games[i];
        gm->npend = 0;
        while (gm->active) {
            if (!gm->searching) {
                if (mg_mcts_set_root(gm->m, gm->state, gm->ply, err, errlen) != MG_OK ||
                    mg_mcts_begin(gm->m, NULL, sp->cfg.num_simulations, err, errlen) != MG_OK) {
                    rc = MG_ERR;
                    break;
                }
                gm->searching = 1;
            }
            int k = mg_mcts_gather(gm->m, &gm->req, &gm->res);
            if (k > 0) {
                int misses = 0;
                for (int j = 0; j < k; j++) {
                    if (cache_answer(sp, &gm->req[j], &gm->res[j])) {
                        gm->rows[j] = -1;
                        continue;
                    }
                    gm->rows[j] = n + misses;
                    g->observation(gm->req[j].state, obs + (size_t)(n + misses) * (size_t)sp->obs_size);
                    row_info(sp, gm, &gm->req[j], n + misses);
                    misses++;
                }
                if (misses == 0) { /* all answered by the cache: back up and go on */
                    if (mg_mcts_scatter(gm->m, err, errlen) != MG_OK) {
                        rc = MG_ERR;
                        break;
                    }
                    continue;
                }
                gm->npend = k;
                n += misses;
                break;
            }
            mg_mcts_finish(gm->m);
            gm->searching = 0;
            if (play_move(sp, gm, err, errlen) != MG_OK) {
                rc = MG_ERR;
                break;
            }
        }
    }
    if (rc != MG_OK) {
        for (int i = 0; i < sp->cfg.parallel_games; i++)
            if (sp->games[i].npend) {
                mg_mcts_abort(sp->games[i].m);
                sp->games[i].npend = 0;
            }
    } else if (n > 0) {
        sp->stats.batches++;
        sp->stats.evaluations += n;
    }
    sp->stats.search_seconds += now_seconds() - t0;
    return rc == MG_OK ? n : MG_ERR;
}

int mg_az_scatter(mg_az_selfplay *sp, const float *logits, const float *values, char *err, size_t errlen)
{
    double t0 = now_seconds();
    const int32_t A = sp->A;
    int rc = MG_OK;
    /* Check everything first, so that a bad answer leaves every tree as it was. */
    for (int i = 0; i < sp->cfg.parallel_games && rc == MG_OK; i++) {
        const az_game *gm = &sp->games[i];
        for (int j = 0; j < gm->npend && rc == MG_OK; j++) {
            int row = gm->rows[j];
            if (row < 0)
                continue;
            const float *lg = logits + (size_t)row * (size_t)A;
            if (!(values[row] >= -1.0f && values[row] <= 1.0f)) {
                snprintf(err, errlen, "az: value %g of batch row %d is not in [-1, 1]", (double)values[row], row);
                rc = MG_ERR;
            }
            for (int l = 0; l < gm->req[j].num_legal && rc == MG_OK; l++)
                if (!isfinite(lg[gm->req[j].legal[l]])) {
                    snprintf(err, errlen, "az: logit %g of action %d in batch row %d is not finite",
                             (double)lg[gm->req[j].legal[l]], (int)gm->req[j].legal[l], row);
                    rc = MG_ERR;
                }
        }
    }
    for (int i = 0; i < sp->cfg.parallel_games; i++) {
        az_game *gm = &sp->games[i];
        if (!gm->npend)
            continue;
        if (rc != MG_OK) {
            mg_mcts_abort(gm->m);
            gm->npend = 0;
            gm->searching = 0;
            gm->active = 0;
            continue;
        }
        for (int j = 0; j < gm->npend; j++) {
            int row = gm->rows[j];
            if (row < 0)
                continue; /* answered by the cache in gather */
            const mg_eval_request *q = &gm->req[j];
            mg_eval_result *r = &gm->res[j];
            const float *lg = logits + (size_t)row * (size_t)A;
            float mx = -INFINITY;
            for (int l = 0; l < q->num_legal; l++)
                mx = lg[q->legal[l]] > mx ? lg[q->legal[l]] : mx;
            double z = 0.0;
            for (int l = 0; l < q->num_legal; l++) {
                double e = exp((double)(lg[q->legal[l]] - mx));
                r->policy[l] = (float)e;
                z += e;
            }
            for (int l = 0; l < q->num_legal; l++)
                r->policy[l] = (float)(r->policy[l] / z);
            double v = 0.5 * ((double)values[row] + 1.0);
            r->value = v < 0.0 ? 0.0 : v > 1.0 ? 1.0 : v;
            r->status = MG_EVAL_OK;
            r->seq = j;
            cache_store(sp, q, r);
        }
        gm->npend = 0;
        if (mg_mcts_scatter(gm->m, err, errlen) != MG_OK) {
            rc = MG_ERR;
            gm->active = 0;
        }
    }
    sp->stats.search_seconds += now_seconds() - t0;
    return rc;
}

int64_t mg_az_num_examples(const mg_az_selfplay *sp) { return sp->nex; }

void mg_az_take_examples(mg_az_selfplay *sp, float *obs, float *pi, float *z, int64_t *game, int32_t *ply,
                         float *obs_after)
{
    size_t n = (size_t)sp->nex;
    if (obs && n)
        memcpy(obs, sp->ex_obs, n * (size_t)sp->obs_size * sizeof *obs);
    if (obs_after && n)
        memcpy(obs_after, sp->ex_after, n * (size_t)sp->obs_size * sizeof *obs_after);
    if (pi && n)
        memcpy(pi, sp->ex_pi, n * (size_t)sp->A * sizeof *pi);
    if (z && n)
        memcpy(z, sp->ex_z, n * sizeof *z);
    if (game && n)
        memcpy(game, sp->ex_game, n * sizeof *game);
    if (ply && n)
        memcpy(ply, sp->ex_ply, n * sizeof *ply);
    sp->nex = 0;
}

void mg_az_get_stats(const mg_az_selfplay *sp, mg_az_stats *s) { *s = sp->stats; }
