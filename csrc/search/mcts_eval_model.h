/*
 * mcts_eval_model.h - the native MAV model evaluator of the MCTS (evaluator.h): MAV-MCTS with
 * no Python in the loop.  Per batch of leaves it writes each leaf's MAV prompt (mav_eval_io.h),
 * tokenizes it (format/tokenizer.h), generates with the inference engine (model/engine.h, its
 * own engine and thread pool over a shared read-only model) by grouped greedy decoding, and
 * reads the answer as mavgame.agents.mav.MAVEvaluator does: the legal moves' values from
 * their 64-way bucket distributions (mean or max scoring, format/values.h) at the well-formed
 * %top entries (format/mav_tokens.h); an answer without such values is parsed as text
 * (mg_eval_read_output), which marks the leaf invalid when it has no usable value.
 *
 * Engine mode (the C game engine gives transitions and legal moves) or state-tracking mode (the
 * model is the world model: prompts in the transition form, the answer parsed with its prompt
 * gives the predicted state, its moves with their values, or a predicted game result).
 */
#ifndef MG_SEARCH_MCTS_EVAL_MODEL_H
#define MG_SEARCH_MCTS_EVAL_MODEL_H

#include <stdint.h>

#include "../game.h"
#include "../model/model.h"
#include "evaluator.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mg_eval_model_params {
    int threads;              /* engine threads */
    int max_batch;            /* leaves generated at once (larger batches run in chunks) */
    const char *spec;         /* MAV prompt form (NULL: "%state %top_all %best_action") */
    int scoring;              /* MG_MAV_SCORE_MEAN or MG_MAV_SCORE_MAX */
    const int32_t *group_ids; /* grouped greedy decoding over these tokens (the game's move tokens) */
    int n_group;
    int prefix_sharing;
    int state_tracking;       /* state-tracking mode (else engine mode) */
    int cache_size;           /* engine mode: answers kept by prompt (rounded up to a power of 2; 0: none) */
    int prefix_cache;         /* the engine's cross-batch prefix cache, in tokens (0: none) */
    unsigned engine_flags;    /* the engine's flags (engine.h: MG_ENGINE_CUDA runs it on the GPU) */
} mg_eval_model_params;

/* An evaluator over `model` (which must outlive it) for game g (a MAV game).  MG_OK and *ev, or
 * MG_ERR with a message. */
int mg_eval_model_create(mg_evaluator *ev, const mg_model *model, const mg_game *g, const mg_config *cfg,
                         const mg_eval_model_params *p, char *err, size_t errlen);

/* Token counters of its engine (model/engine.h) and its evaluation counts.  `late`: requests left
 * MG_EVAL_DROPPED by the search's timeout (generated after the deadline, or not generated since
 * the deadline had passed; see mcts_eval_model.c); `requests` counts those generated. */
typedef struct mg_eval_model_stats {
    int64_t calls, requests, invalid, text_fallbacks, cache_hits, late;
    int64_t prompt_tokens, shared_saved, cache_saved, generated;
} mg_eval_model_stats;
int mg_eval_model_stats_get(const mg_evaluator *ev, mg_eval_model_stats *s);

#ifdef __cplusplus
}
#endif
#endif
