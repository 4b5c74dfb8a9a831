/* test_az.c - AlphaZero pieces: Dirichlet samples, root-only noise, the MCTS step API against
 * mg_mcts_search, the PUCT U term, and batched self-play on tic-tac-toe (visit-count targets,
 * z from the mover's view, reproducibility, bad network answers). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../game.h"
#include "../games/tictactoe/tictactoe.h"
#include "../rng.h"
#include "../search/az_selfplay.h"
#include "../search/dirichlet.h"
#include "../search/evaluator.h"
#include "../search/mcts.h"
#include "mgtest.h"

static mg_test_counts T;
static char err[MG_ERRLEN];
static const mg_game *G = &mg_tictactoe;

/* A fixed, uneven policy: p(a) proportional to 1 + (3a mod 5); value 0.5. */
static double pol_weight(int32_t a) { return 1.0 + (double)((3 * a) % 5); }

static int policy_eval(void *ctx, const mg_game *g, const mg_eval_request *req, mg_eval_result *res, int n,
                       double timeout, char *e, size_t el)
{
    (void)ctx, (void)g, (void)timeout, (void)e, (void)el;
    for (int i = 0; i < n; i++) {
        for (int l = 0; l < req[i].num_legal; l++)
            res[i].policy[l] = (float)pol_weight(req[i].legal[l]);
        res[i].value = 0.5;
        res[i].status = MG_EVAL_OK;
        res[i].seq = i;
    }
    return MG_OK;
}

static mg_evaluator policy_ev(void)
{
    mg_evaluator ev;
    memset(&ev, 0, sizeof ev);
    ev.name = "policy";
    ev.modes = 1u << MG_EVAL_ENGINE;
    ev.evaluate = policy_eval;
    return ev;
}

static mg_mcts_config az_mcts(void)
{
    mg_mcts_config c;
    mg_mcts_config_default(&c);
    c.prior = MG_MCTS_PRIOR_POLICY;
    c.eps = 0.0;
    c.fpu = 0.0;
    return c;
}

static void test_dirichlet(void)
{
    mg_rng r;
    mg_rng_seed(&r, 7);
    const double alphas[] = {0.03, 0.3, 1.0, 2.5};
    for (int k = 0; k < 4; k++) {
        double a = alphas[k], s = 0, s2 = 0;
        const int N = 40000;
        for (int i = 0; i < N; i++) {
            double x = mg_gamma_sample(&r, a);
            MG_CHECK(x >= 0 && isfinite(x));
            s += x;
            s2 += x * x;
        }
        double mean = s / N, var = s2 / N - mean * mean;
        /* Gamma(a, 1): mean a, variance a */
        MG_CHECK(fabs(mean - a) < 0.05 * a + 0.01);
        MG_CHECK(fabs(var - a) < 0.15 * a + 0.01);
    }
    double eta[9], mean[9] = {0};
    for (int i = 0; i < 20000; i++) {
        mg_dirichlet_sample(&r, 0.3, 9, eta);
        double sum = 0;
        for (int j = 0; j < 9; j++) {
            MG_CHECK(eta[j] >= 0);
            sum += eta[j];
            mean[j] += eta[j] / 20000;
        }
        MG_CHECK(fabs(sum - 1) < 1e-9);
    }
    for (int j = 0; j < 9; j++)
        MG_CHECK(fabs(mean[j] - 1.0 / 9) < 0.01);
}

/* The evaluator's normalised policy for the node after `path`. */
static void clean_priors(const int32_t *path, int len, float *out, int *n)
{
    mg_ttt_state s;
    unsigned char undo[MG_MAX_UNDO];
    G->init(&s, NULL, err, sizeof err);
    for (int i = 0; i < len; i++)
        G->make(&s, path[i], undo);
    int32_t legal[MG_MAX_MOVES];
    *n = G->legal_actions(&s, legal);
    double z = 0;
    for (int i = 0; i < *n; i++)
        z += pol_weight(legal[i]);
    for (int i = 0; i < *n; i++)
        out[i] = (float)(pol_weight(legal[i]) / z);
}

static int priors_equal(const float *a, const float *b, int n)
{
    for (int i = 0; i < n; i++)
        if (fabsf(a[i] - b[i]) > 1e-6f)
            return 0;
    return 1;
}

static void test_root_noise(void)
{
    mg_mcts_config c = az_mcts();
    c.dirichlet_alpha = 0.3;
    c.dirichlet_frac = 0.25;
    mg_mcts *m = mg_mcts_create(G, &c, err, sizeof err);
    MG_CHECK(m != NULL);
    mg_ttt_state s;
    G->init(&s, NULL, err, sizeof err);
    MG_CHECK(mg_mcts_set_root(m, &s, 0, err, sizeof err) == MG_OK);
    mg_evaluator ev = policy_ev();
    MG_CHECK(mg_mcts_search(m, &ev, 300, err, sizeof err) == MG_OK);
    float got[MG_MAX_MOVES], want[MG_MAX_MOVES];
    int n;
    clean_priors(NULL, 0, want, &n);
    MG_CHECK(mg_mcts_path_priors(m, NULL, 0, got, MG_MAX_MOVES) == n);
    double sum = 0;
    for (int i = 0; i < n; i++)
        sum += got[i];
    MG_CHECK(fabs(sum - 1) < 1e-5);
    MG_CHECK(!priors_equal(got, want, n)); /* noise at the root */
    /* every expanded child and grandchild keeps the evaluator's prior */
    int32_t actions[9];
    mg_mcts_root_edges(m, actions, NULL, NULL, NULL, NULL, NULL);
    int children = 0;
    for (int i = 0; i < n; i++) {
        int32_t path[2] = {actions[i], 0};
        int k = mg_mcts_path_priors(m, path, 1, got, MG_MAX_MOVES);
        if (k <= 0)
            continue;
        int kk;
        clean_priors(path, 1, want, &kk);
        MG_CHECK(k == kk && priors_equal(got, want, k));
        children++;
        for (int j = 0; j < kk; j++) {
            int32_t legal[MG_MAX_MOVES];
            mg_ttt_state t = s;
            unsigned char undo[MG_MAX_UNDO];
            G->make(&t, path[0], undo);
            G->legal_actions(&t, legal);
            path[1] = legal[j];
            int k2 = mg_mcts_path_priors(m, path, 2, got, MG_MAX_MOVES);
            if (k2 > 0) {
                clean_priors(path, 2, want, &kk);
                MG_CHECK(k2 == kk && priors_equal(got, want, k2));
            }
        }
    }
    MG_CHECK(children == n);
    /* U = c(s) P sqrt(N) / (1 + N(a)) at the root */
    double u[9], q[9];
    uint32_t vis[9];
    float pr[9];
    mg_mcts_root_edges(m, NULL, vis, q, pr, NULL, NULL);
    mg_mcts_root_u(m, u);
    double N = mg_mcts_root_visits(m);
    double cs = log((1 + N + c.c_base) / c.c_base) + c.c_init;
    for (int i = 0; i < n; i++)
        MG_CHECK(fabs(u[i] - cs * pr[i] * sqrt(N) / (1.0 + vis[i])) < 1e-9);
    /* re-rooting at an expanded child mixes fresh noise into its (clean) priors */
    int32_t a0 = actions[0];
    MG_CHECK(mg_mcts_advance(m, a0, err, sizeof err) == MG_OK);
    int k = mg_mcts_path_priors(m, NULL, 0, got, MG_MAX_MOVES);
    int32_t p1[1] = {a0};
    clean_priors(p1, 1, want, &n);
    MG_CHECK(k == n && !priors_equal(got, want, n));
    mg_mcts_free(m);
    /* without noise the root keeps the evaluator's prior */
    c.dirichlet_alpha = 0.0;
    m = mg_mcts_create(G, &c, err, sizeof err);
    mg_mcts_set_root(m, &s, 0, err, sizeof err);
    MG_CHECK(mg_mcts_search(m, &ev, 50, err, sizeof err) == MG_OK);
    clean_priors(NULL, 0, want, &n);
    MG_CHECK(mg_mcts_path_priors(m, NULL, 0, got, MG_MAX_MOVES) == n && priors_equal(got, want, n));
    mg_mcts_free(m);
    /* bad settings are refused with the value */
    c.dirichlet_frac = 1.5;
    MG_CHECK(mg_mcts_config_check(&c, err, sizeof err) == MG_ERR && strstr(err, "1.5"));
    c.dirichlet_frac = 0.25;
    c.dirichlet_alpha = -1;
    MG_CHECK(mg_mcts_config_check(&c, err, sizeof err) == MG_ERR && strstr(err, "dirichlet_alpha"));
}

/* begin / gather / evaluate / scatter / finish is mg_mcts_search. */
static void test_step_api(void)
{
    mg_mcts_config c = az_mcts();
    c.batch_size = 4;
    c.dirichlet_alpha = 0.5;
    c.dirichlet_frac = 0.25;
    c.seed = 11;
    mg_mcts *a = mg_mcts_create(G, &c, err, sizeof err), *b = mg_mcts_create(G, &c, err, sizeof err);
    mg_ttt_state s;
    G->init(&s, NULL, err, sizeof err);
    mg_evaluator ev = policy_ev();
    mg_mcts_set_root(a, &s, 0, err, sizeof err);
    mg_mcts_set_root(b, &s, 0, err, sizeof err);
    MG_CHECK(mg_mcts_search(a, &ev, 157, err, sizeof err) == MG_OK);
    MG_CHECK(mg_mcts_begin(b, NULL, 157, err, sizeof err) == MG_OK);
    const mg_eval_request *req;
    mg_eval_result *res;
    int n, batches = 0;
    while ((n = mg_mcts_gather(b, &req, &res)) > 0) {
        MG_CHECK(n <= 4);
        policy_eval(NULL, G, req, res, n, 0, err, sizeof err);
        MG_CHECK(mg_mcts_scatter(b, err, sizeof err) == MG_OK);
        batches++;
    }
    mg_mcts_finish(b);
    mg_mcts_stats sa, sb;
    mg_mcts_get_stats(a, &sa);
    mg_mcts_get_stats(b, &sb);
    MG_CHECK(sa.simulations == 157 && sb.simulations == 157);
    MG_CHECK(sa.batches == batches && sb.batches == batches && sa.nodes == sb.nodes);
    uint32_t va[9], vb[9];
    float pa[9], pb[9];
    mg_mcts_root_edges(a, NULL, va, NULL, pa, NULL, NULL);
    mg_mcts_root_edges(b, NULL, vb, NULL, pb, NULL, NULL);
    MG_CHECK(memcmp(va, vb, sizeof va) == 0 && memcmp(pa, pb, sizeof pa) == 0);
    MG_CHECK(mg_mcts_check(b, err, sizeof err) == MG_OK);
    /* an aborted batch leaves no virtual counts */
    mg_mcts_set_root(b, &s, 0, err, sizeof err);
    MG_CHECK(mg_mcts_begin(b, NULL, 20, err, sizeof err) == MG_OK);
    MG_CHECK(mg_mcts_gather(b, &req, &res) == 1); /* the root alone */
    policy_eval(NULL, G, req, res, 1, 0, err, sizeof err);
    mg_mcts_scatter(b, err, sizeof err);
    MG_CHECK(mg_mcts_gather(b, &req, &res) == 4);
    mg_mcts_abort(b);
    MG_CHECK(mg_mcts_gather(b, &req, &res) == 0); /* over */
    mg_mcts_finish(b);
    MG_CHECK(mg_mcts_check(b, err, sizeof err) == MG_OK);
    mg_mcts_free(a);
    mg_mcts_free(b);
}

typedef struct sp_run {
    int64_t n;
    float *obs, *pi, *z, *after;
    int64_t *game;
    int32_t *ply;
    mg_az_stats st;
} sp_run;

/* Self-play with a uniform "network" (zero logits) whose value is `value`. */
static int run_selfplay(const mg_az_config *cfg, float value, sp_run *out)
{
    mg_ttt_state s;
    G->init(&s, NULL, err, sizeof err);
    mg_az_selfplay *sp = mg_az_create(G, &s, cfg, err, sizeof err);
    if (!sp)
        return MG_ERR;
    int os = mg_az_obs_size(sp), mb = mg_az_max_batch(sp);
    float *obs = malloc((size_t)mb * (size_t)os * sizeof *obs);
    float *logits = calloc((size_t)mb * 9, sizeof *logits), *vals = malloc((size_t)mb * sizeof *vals);
    for (int i = 0; i < mb; i++)
        vals[i] = value;
    int n, rc = MG_OK;
    while ((n = mg_az_gather(sp, obs, err, sizeof err)) > 0) {
        if (n > mb || mg_az_scatter(sp, logits, vals, err, sizeof err) != MG_OK) {
            rc = MG_ERR;
            break;
        }
    }
    if (n < 0)
        rc = MG_ERR;
    out->n = mg_az_num_examples(sp);
    out->obs = malloc((size_t)(out->n + 1) * (size_t)os * sizeof(float));
    out->pi = malloc((size_t)(out->n + 1) * 9 * sizeof(float));
    out->z = malloc((size_t)(out->n + 1) * sizeof(float));
    out->game = malloc((size_t)(out->n + 1) * sizeof(int64_t));
    out->ply = malloc((size_t)(out->n + 1) * sizeof(int32_t));
    out->after = malloc((size_t)(out->n + 1) * (size_t)os * sizeof(float));
    mg_az_take_examples(sp, out->obs, out->pi, out->z, out->game, out->ply, out->after);
    MG_CHECK(mg_az_num_examples(sp) == 0);
    mg_az_get_stats(sp, &out->st);
    free(obs), free(logits), free(vals);
    mg_az_free(sp);
    return rc;
}

static void free_run(sp_run *r) { free(r->obs), free(r->pi), free(r->z), free(r->game), free(r->ply), free(r->after); }

/* The same examples, maybe in another order (games finish in another order when some leaves are
 * answered without the network). */
static int same_examples(const sp_run *a, const sp_run *b)
{
    for (int64_t i = 0; i < a->n; i++) {
        int64_t j = 0;
        while (j < b->n && !(b->game[j] == a->game[i] && b->ply[j] == a->ply[i]))
            j++;
        if (j == b->n || a->z[i] != b->z[j] || memcmp(a->pi + i * 9, b->pi + j * 9, 9 * sizeof(float)) ||
            memcmp(a->obs + i * 36, b->obs + j * 36, 36 * sizeof(float)))
            return 0;
    }
    return 1;
}

static void test_selfplay(void)
{
    mg_az_config cfg;
    mg_az_config_default(&cfg);
    cfg.parallel_games = 6;
    cfg.num_games_total = 20;
    cfg.num_simulations = 24;
    cfg.temperature_plies = 4;
    cfg.seed = 3;
    sp_run r;
    MG_CHECK(run_selfplay(&cfg, 0.0f, &r) == MG_OK);
    MG_CHECK(r.st.games_finished == 20 && r.st.games_started == 20);
    MG_CHECK(r.st.p0_wins + r.st.p1_wins + r.st.draws == 20);
    MG_CHECK(r.n == r.st.moves && r.n >= 20 * 5);
    MG_CHECK(r.st.evaluations > 0 && r.st.batches > 0 && r.st.evaluations <= r.st.batches * 6);
    int decisive = 0;
    for (int64_t i = 0; i < r.n; i++) {
        const float *o = r.obs + i * 36, *pi = r.pi + i * 9;
        double sum = 0;
        for (int rr = 0; rr < 3; rr++)
            for (int cc = 0; cc < 3; cc++) {
                int a = (2 - rr) * 3 + cc, empty = o[18 + rr * 3 + cc] == 1.0f;
                MG_CHECK(pi[a] >= 0 && (empty || pi[a] == 0)); /* mass only on legal moves */
                sum += pi[a];
            }
        MG_CHECK(fabs(sum - 1) < 1e-5);
        /* z from the mover's view: the side-to-move plane says who moved; signs alternate */
        MG_CHECK(o[27] == (float)(r.ply[i] & 1));
        int last = i + 1 == r.n || r.game[i + 1] != r.game[i];
        if (i > 0 && r.game[i - 1] == r.game[i]) {
            MG_CHECK(r.ply[i] == r.ply[i - 1] + 1);
            MG_CHECK(r.z[i] == -r.z[i - 1]);
        } else {
            MG_CHECK(r.ply[i] == 0);
        }
        /* the position after the move: the next example's, one more stone, the other side to move */
        const float *af = r.after + i * 36;
        if (!last)
            MG_CHECK(memcmp(af, r.obs + (i + 1) * 36, 36 * sizeof(float)) == 0);
        int stones = 0, stones_after = 0;
        for (int c = 0; c < 18; c++)
            stones += o[c] == 1.0f, stones_after += af[c] == 1.0f;
        MG_CHECK(stones_after == stones + 1 && af[27] != o[27]);
        /* the mass of pi on the cell the move filled is positive */
        int moved = -1;
        for (int c = 0; c < 9; c++)
            if (o[18 + c] == 1.0f && af[18 + c] == 0.0f)
                moved = (2 - c / 3) * 3 + c % 3;
        MG_CHECK(moved >= 0 && pi[moved] > 0);
        /* in tic-tac-toe the last mover wins or draws */
        if (last) {
            MG_CHECK(r.z[i] == 1.0f || r.z[i] == 0.0f);
            decisive += r.z[i] == 1.0f;
        }
    }
    MG_CHECK(decisive == r.st.p0_wins + r.st.p1_wins);
    /* the same seed gives the same games */
    sp_run r2;
    MG_CHECK(run_selfplay(&cfg, 0.0f, &r2) == MG_OK);
    MG_CHECK(r2.n == r.n && memcmp(r.pi, r2.pi, (size_t)r.n * 9 * sizeof(float)) == 0 &&
             memcmp(r.z, r2.z, (size_t)r.n * sizeof(float)) == 0);
    free_run(&r2);
    /* the evaluation cache: the same games (the uniform network answers every position alike), fewer
     * network evaluations, the difference answered by the cache */
    cfg.cache_log2 = 12;
    MG_CHECK(run_selfplay(&cfg, 0.0f, &r2) == MG_OK);
    MG_CHECK(r2.n == r.n && same_examples(&r, &r2));
    MG_CHECK(r2.st.cache_hits > 0 && r2.st.evaluations + r2.st.cache_hits == r.st.evaluations);
    free_run(&r2);
    cfg.cache_log2 = 0;
    /* max_plies cuts games into draws */
    cfg.max_plies = 3;
    MG_CHECK(run_selfplay(&cfg, 0.0f, &r2) == MG_OK);
    MG_CHECK(r2.st.cut_draws == 20 && r2.st.draws == 20 && r2.n == 60);
    for (int64_t i = 0; i < r2.n; i++)
        MG_CHECK(r2.z[i] == 0.0f);
    free_run(&r2);
    /* a value outside [-1, 1] is refused with its row */
    cfg.max_plies = 0;
    MG_CHECK(run_selfplay(&cfg, 1.5f, &r2) == MG_ERR && strstr(err, "1.5") && strstr(err, "row"));
    free_run(&r2);
    free_run(&r);
    /* bad configs */
    mg_az_config_default(&cfg);
    cfg.num_simulations = 1;
    MG_CHECK(mg_az_config_check(&cfg, err, sizeof err) == MG_ERR && strstr(err, "num_simulations 1"));
    mg_az_config_default(&cfg);
    cfg.mcts.prior = MG_MCTS_PRIOR_MAV;
    MG_CHECK(mg_az_config_check(&cfg, err, sizeof err) == MG_ERR && strstr(err, "policy prior"));
    mg_az_config_default(&cfg);
    cfg.temperature = 0;
    MG_CHECK(mg_az_config_check(&cfg, err, sizeof err) == MG_ERR && strstr(err, "temperature 0"));
    mg_az_config_default(&cfg);
    cfg.cache_log2 = 27;
    MG_CHECK(mg_az_config_check(&cfg, err, sizeof err) == MG_ERR && strstr(err, "cache_log2 27"));
}

/* AZdb team: each row's latent is the root mover's, its reward the sum of w[latent] . observation after
 * each of the root mover's moves on the path (recomputed here by replaying the leaf's path); bad
 * latents and the cache are refused. */
static void test_team(void)
{
    mg_az_config cfg;
    mg_az_config_default(&cfg);
    cfg.parallel_games = 3;
    cfg.num_games_total = 3;
    cfg.num_simulations = 12;
    cfg.seed = 5;
    mg_ttt_state s;
    G->init(&s, NULL, err, sizeof err);
    mg_az_selfplay *sp = mg_az_create(G, &s, &cfg, err, sizeof err);
    MG_CHECK(sp != NULL);
    if (!sp)
        return;
    int os = mg_az_obs_size(sp), mb = mg_az_max_batch(sp);
    int32_t lat[6] = {0, 1, 2, 2, 1, 0};
    float *w = malloc((size_t)3 * (size_t)os * sizeof *w);
    for (int i = 0; i < 3 * os; i++)
        w[i] = (float)((i * 7) % 11) * 0.1f - 0.5f;
    int32_t bad[6] = {0, 1, 3, 0, 0, 0};
    MG_CHECK(mg_az_set_team(sp, 3, bad, w, err, sizeof err) == MG_ERR && strstr(err, "latent 3"));
    MG_CHECK(mg_az_set_team(sp, 3, lat, w, err, sizeof err) == MG_OK);
    float *obs = malloc((size_t)mb * (size_t)os * sizeof *obs), *logits = calloc((size_t)mb * 9, sizeof *logits);
    float *vals = calloc((size_t)mb, sizeof *vals), *rew = malloc((size_t)mb * sizeof *rew);
    float *tmp = malloc((size_t)os * sizeof *tmp);
    int64_t *game = malloc((size_t)mb * sizeof *game);
    int32_t *latent = malloc((size_t)mb * sizeof *latent);
    int8_t *own = malloc((size_t)mb * sizeof *own);
    int n, rounds = 0, checked = 0, nonzero = 0;
    while ((n = mg_az_gather(sp, obs, err, sizeof err)) > 0 && rounds++ < 200) {
        mg_az_row_info(sp, n, game, latent, rew, own);
        for (int k = 0; k < n; k++) {
            MG_CHECK(game[k] >= 0 && game[k] < 3);
            /* the latent is one of the game's two players */
            MG_CHECK(latent[k] == lat[2 * game[k]] || latent[k] == lat[2 * game[k] + 1]);
            /* the side to move at the leaf (plane 3 of tic-tac-toe: o to move) and own give the root side */
            int leaf_side = obs[(size_t)k * (size_t)os + 3 * 9] > 0.5f;
            int root_side = own[k] ? leaf_side : 1 - leaf_side;
            MG_CHECK(latent[k] == lat[2 * game[k] + root_side]);
            if (rew[k] != 0.0f)
                nonzero++;
            checked++;
        }
        MG_CHECK(mg_az_scatter(sp, logits, vals, err, sizeof err) == MG_OK);
    }
    MG_CHECK(n == 0 && checked > 0 && nonzero > 0);
    mg_az_free(sp);
    /* the reward of a one-move path: w[latent] . observation after that move, by hand */
    cfg.num_games_total = 1;
    cfg.parallel_games = 1;
    cfg.num_simulations = 3;
    sp = mg_az_create(G, &s, &cfg, err, sizeof err);
    int32_t lat1[2] = {1, 0};
    MG_CHECK(sp && mg_az_set_team(sp, 3, lat1, w, err, sizeof err) == MG_OK);
    n = mg_az_gather(sp, obs, err, sizeof err); /* the root */
    MG_CHECK(n == 1);
    mg_az_row_info(sp, n, game, latent, rew, own);
    MG_CHECK(latent[0] == 1 && own[0] == 1 && rew[0] == 0.0f);
    MG_CHECK(mg_az_scatter(sp, logits, vals, err, sizeof err) == MG_OK);
    n = mg_az_gather(sp, obs, err, sizeof err); /* a child: one move of x (latent 1) */
    MG_CHECK(n == 1);
    mg_az_row_info(sp, n, game, latent, rew, own);
    double dot = 0.0;
    for (int i = 0; i < os; i++)
        dot += (double)w[os + i] * (double)obs[i];
    MG_CHECK(latent[0] == 1 && own[0] == 0 && fabs(dot - (double)rew[0]) < 1e-5);
    mg_az_free(sp);
    cfg.cache_log2 = 4;
    sp = mg_az_create(G, &s, &cfg, err, sizeof err);
    MG_CHECK(sp && mg_az_set_team(sp, 3, lat1, NULL, err, sizeof err) == MG_ERR && strstr(err, "cache"));
    mg_az_free(sp);
    free(w), free(obs), free(logits), free(vals), free(rew), free(tmp), free(game), free(latent), free(own);
}

int main(void)
{
    mg_games_init();
    test_dirichlet();
    test_root_noise();
    test_step_api();
    test_selfplay();
    test_team();
    MG_TEST_MAIN_END("test_az");
}
