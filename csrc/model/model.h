/*
 * model.h - a MAV transformer loaded from the safetensors files of mavgame/model/export.py.
 *
 * The configuration (mavgame/model/config.py MAVConfig) comes from the file's metadata and is
 * validated like MAVConfig.validate; the weights (float32, float16 or bfloat16 in the file) are
 * converted once to float32.  Linear layers are stored transposed ([in][out]) and packed in
 * 16-column panels, the layout the matmul kernels read (matmul.h: mg_pack_at).  The model is read-only after loading: any number
 * of engines (engine.h) may share one.
 *
 * Tensor shapes in the file (PyTorch [out, in] convention):
 *   embed [V, d], pos_embed [max_seq_len, d] (abs_pos), line_embed [line_pos, d] (line_pos > 0),
 *   blocks.i.attn_norm/mlp_norm [d], attn.wq [H*hd, d], attn.wk / attn.wv [KV*hd, d],
 *   attn.wo [d, H*hd], mlp.gate / mlp.up [ff, d], mlp.down [d, ff], norm [d],
 *   lm_head [V, d] (unless tie_embeddings).
 */
#ifndef MG_MODEL_MODEL_H
#define MG_MODEL_MODEL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MG_MODEL_FORMAT "mavgame-mav"
#define MG_MODEL_FORMAT_VERSION "1"
#define MG_MODEL_MAX_SEQ 65536  /* the engine's limit on max_seq_len (KV cache and rotary tables) */

typedef struct mg_model_config {
    int vocab_size, d_model, n_layers, n_heads, n_kv_heads, d_ff, max_seq_len;
    double rope_theta, norm_eps, init_std;
    int geglu;            /* mlp == "geglu" (else "swiglu") */
    int tie_embeddings;
    int abs_pos;
    int line_pos;
    int newline_id;
    int head_dim;         /* d_model / n_heads */
} mg_model_config;

typedef struct mg_layer_weights {
    const float *attn_norm;  /* [d] */
    const float *wq;         /* [d][H*hd]   (transposed and packed: matmul.h) */
    const float *wk;         /* [d][KV*hd] */
    const float *wv;         /* [d][KV*hd] */
    const float *wo;         /* [H*hd][d] */
    const float *mlp_norm;   /* [d] */
    const float *gate;       /* [d][ff] */
    const float *up;         /* [d][ff] */
    const float *down;       /* [ff][d] */
} mg_layer_weights;

typedef struct mg_model {
    mg_model_config cfg;
    const float *embed;      /* [V][d] */
    const float *pos_embed;  /* [max_seq_len][d] or NULL */
    const float *line_embed; /* [line_pos][d] or NULL */
    const float *norm;       /* [d] */
    const float *out;        /* [d][V]: the output layer transposed and packed (embed^T when tied) */
    mg_layer_weights *layers;
    float *arena;            /* every weight, float32 */
    size_t n_params;         /* parameters of the model (MAVConfig.num_parameters) */
    int file_dtype;          /* enum mg_st_dtype of the weights in the file (F32, F16 or BF16) */
    int vocab;               /* the MAV vocabulary version of vocab_version (1, 2), 0 when the file declares
                                none; a declared version is known and its size is cfg.vocab_size
                                (format/tokenizer.h mg_tok_check_model), else the load fails */
    char *vocab_version;     /* metadata strings ("" if absent) */
    char *info;              /* JSON text */
    char *config_json;
} mg_model;

/* Parse and validate a MAVConfig JSON object into *c.  MG_OK or MG_ERR naming the field. */
int mg_model_config_parse(const char *json, size_t n, mg_model_config *c, char *err, size_t errlen);

/* Load a model from a file's bytes (the buffer may be freed afterwards) / from a path.  *m is
 * zeroed first; MG_OK, or MG_ERR with a message (nothing to free then).  A regular file is
 * memory-mapped read-only for the load (validated and converted from the mapped bytes, no copy
 * of the file), and unmapped before returning: the model owns every weight it keeps, packed
 * float32, so it does not depend on the file afterwards.  Other files (pipes) are read. */
int mg_model_load_buffer(mg_model *m, const uint8_t *buf, size_t len, char *err, size_t errlen);
int mg_model_load_file(mg_model *m, const char *path, char *err, size_t errlen);

void mg_model_free(mg_model *m);

#ifdef __cplusplus
}
#endif
#endif
