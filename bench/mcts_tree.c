/*
 * mcts_tree.c - the MCTS tree's own cost (csrc/search/mcts*.c): simulations per second of engine-mode
 * searches from a game's start position with the constant evaluator (every action valued 0.5, so the
 * time is the tree's: selection, expansion, backup, move generation), and a checksum of the searched
 * trees (root visit distribution, nodes, edges, the W and N of every edge) that any change to the
 * search's results changes.  Built like bench/model_load.c:
 *
 *   S=$(find csrc -name "*.c" -not -path "csrc/bind*" -not -path "csrc/tests*")
 *   gcc -std=c11 -O3 -march=x86-64-v2 -fno-strict-aliasing -D_POSIX_C_SOURCE=200809L bench/mcts_tree.c $S \
 *       -lm -lpthread -o /tmp/mcts_tree
 *   /tmp/mcts_tree chess 1000 9        # game, simulations per search, searches (median reported)
 *   valgrind --tool=callgrind --callgrind-out-file=/dev/null /tmp/mcts_tree chess 1000 3
 *
 * Options after the three numbers: `batch=B` (leaves per batch, default 1), `static` (static virtual
 * loss instead of dynamic counts), `uct` (constant c_puct 1.4, no c_base), `noise` (Dirichlet root
 * noise 0.3 / 0.25), `reuse` (advance to the best move after each search, keeping the subtree), `check`
 * (mg_mcts_check after each search, untimed: exit 1 naming the broken invariant), `hash` (instead of the
 * constant evaluator, values and policy from a hash of the position and the action, one in eight NaN,
 * and the leaf value given for one leaf in four: the MAV prior's top-k, NaN and fpu paths that equal
 * values never reach), `policy` (the policy prior instead of the MAV prior).
 * Output: one line `game sims searches median_s sims_per_s checksum`.  For callgrind, instructions per
 * simulation are (Ir of the run - Ir of the same run with 0 searches) / (sims * searches).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../csrc/game.h"
#include "../csrc/rng.h"
#include "../csrc/search/evaluator.h"
#include "../csrc/search/mcts.h"

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The `hash` evaluator: every answer a function of the position's hash and the action, so that the same tree
 * gets the same answers whatever the search's code (values in [0, 1] and policy, some NaN). */
static int hash_evaluate(void *ctx, const mg_game *g, const mg_eval_request *req, mg_eval_result *res, int n,
                         double timeout, char *err, size_t errlen)
{
    (void)ctx, (void)timeout, (void)err, (void)errlen;
    for (int i = 0; i < n; i++) {
        uint64_t h = g->hash(req[i].state);
        for (int j = 0; j < req[i].num_legal; j++) {
            uint64_t x = mg_mix64(h ^ (uint64_t)(uint32_t)req[i].legal[j] * 0x9E3779B97F4A7C15ULL);
            res[i].values[j] = (x & 7) == 0 ? NAN : (float)((x >> 8) & 0xffff) / 65535.0f;
            res[i].policy[j] = ((x >> 24) & 7) == 0 ? NAN : (float)((x >> 32) & 0xff) / 255.0f;
        }
        res[i].value = (h & 3) == 0 ? (double)((h >> 2) & 0xff) / 255.0 : NAN;
        res[i].status = MG_EVAL_OK;
    }
    return MG_OK;
}

/* FNV-1a over the tree's root read-outs and statistics. */
static uint64_t fold(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3ULL;
    return h;
}

static uint64_t tree_checksum(const mg_mcts *m, uint64_t h)
{
    int32_t actions[MG_MAX_MOVES], pv[MG_MCTS_MAX_DEPTH];
    uint32_t visits[MG_MAX_MOVES];
    double q[MG_MAX_MOVES];
    float prior[MG_MAX_MOVES];
    int n = mg_mcts_num_root_edges(m);
    mg_mcts_root_edges(m, actions, visits, q, prior, NULL, NULL);
    h = fold(h, actions, (size_t)n * sizeof *actions);
    h = fold(h, visits, (size_t)n * sizeof *visits);
    h = fold(h, q, (size_t)n * sizeof *q);
    h = fold(h, prior, (size_t)n * sizeof *prior);
    int len = mg_mcts_pv(m, pv, NULL, MG_MCTS_MAX_DEPTH);
    h = fold(h, pv, (size_t)len * sizeof *pv);
    mg_mcts_stats s;
    mg_mcts_get_stats(m, &s);
    int64_t st[6] = {s.simulations, s.completed, s.terminal_visits, s.nodes, s.edges, s.max_depth};
    h = fold(h, st, sizeof st);
    double v = mg_mcts_root_value(m);
    return fold(h, &v, sizeof v);
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: %s GAME SIMS SEARCHES [batch=B] [static] [uct] [noise] [reuse] [check] [hash] [policy]\n", argv[0]);
        return 2;
    }
    mg_games_init(); /* the attack tables and Zobrist keys (without them chess has pawn moves only) */
    const mg_game *g = mg_game_by_name(argv[1]);
    int sims = atoi(argv[2]), reps = atoi(argv[3]);
    if (!g || sims < 1 || reps < 0 || reps > 100000) {
        fprintf(stderr, "bad game %s, sims %s or searches %s\n", argv[1], argv[2], argv[3]);
        return 2;
    }
    mg_mcts_config cfg;
    mg_mcts_config_default(&cfg);
    int reuse = 0, check = 0, hashed = 0;
    for (int i = 4; i < argc; i++) {
        if (strncmp(argv[i], "batch=", 6) == 0)
            cfg.batch_size = atoi(argv[i] + 6);
        else if (strcmp(argv[i], "static") == 0)
            cfg.virtual_count = MG_MCTS_VC_STATIC;
        else if (strcmp(argv[i], "uct") == 0)
            cfg.c_base = 0, cfg.c_puct = 1.4;
        else if (strcmp(argv[i], "noise") == 0)
            cfg.dirichlet_alpha = 0.3, cfg.dirichlet_frac = 0.25;
        else if (strcmp(argv[i], "reuse") == 0)
            reuse = 1;
        else if (strcmp(argv[i], "check") == 0)
            check = 1;
        else if (strcmp(argv[i], "hash") == 0)
            hashed = 1;
        else if (strcmp(argv[i], "policy") == 0)
            cfg.prior = MG_MCTS_PRIOR_POLICY;
        else {
            fprintf(stderr, "unknown option %s\n", argv[i]);
            return 2;
        }
    }
    char err[512];
    mg_mcts *m = mg_mcts_create(g, &cfg, err, sizeof err);
    mg_evaluator ev;
    if (!m || mg_eval_constant_create(&ev, 0.5, err, sizeof err) != MG_OK) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    if (hashed) {
        mg_evaluator_free(&ev);
        ev = (mg_evaluator){.name = "hash", .modes = 1u << MG_EVAL_ENGINE, .flags = MG_EVAL_FLAG_CHEAP,
                            .evaluate = hash_evaluate};
    }
    _Alignas(16) unsigned char st[MG_MAX_STATE];
    if (g->init(st, NULL, err, sizeof err) != MG_OK) {
        fprintf(stderr, "%s\n", err);
        return 1;
    }
    double *t = malloc(((size_t)reps + 1) * sizeof *t);
    uint64_t h = 0xcbf29ce484222325ULL;
    for (int r = 0; r < reps; r++) {
        if (!reuse || r == 0 || mg_mcts_root_result(m) != MG_ONGOING || mg_mcts_num_root_edges(m) == 0)
            mg_mcts_set_root(m, st, 0, err, sizeof err);
        double t0 = now_s();
        if (mg_mcts_search(m, &ev, sims, err, sizeof err) != MG_OK) {
            fprintf(stderr, "%s\n", err);
            return 1;
        }
        t[r] = now_s() - t0;
        if (check && mg_mcts_check(m, err, sizeof err) != MG_OK) {
            fprintf(stderr, "search %d: %s\n", r, err);
            return 1;
        }
        h = tree_checksum(m, h);
        if (reuse && mg_mcts_best_action(m) >= 0 && mg_mcts_advance(m, mg_mcts_best_action(m), err, sizeof err) != MG_OK) {
            fprintf(stderr, "%s\n", err);
            return 1;
        }
    }
    qsort(t, (size_t)reps, sizeof *t, cmp_double);
    double med = reps ? t[reps / 2] : 0;
    printf("%s %d %d %.6f %.0f %016llx\n", g->name, sims, reps, med, med > 0 ? sims / med : 0.0,
           (unsigned long long)h);
    free(t);
    mg_evaluator_free(&ev);
    mg_mcts_free(m);
    return 0;
}
