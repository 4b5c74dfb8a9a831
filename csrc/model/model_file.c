/*
 * model_file.c - loading a MAV model file (model.h): metadata and configuration checks, the
 * exact set of tensors and their shapes, conversion of float16/bfloat16 weights to float32.
 * A model file is memory-mapped read-only while it is validated and converted (mg_model_load_file,
 * through mg_st_with_file).
 */
#include "model.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../format/tokenizer.h"
#include "../game.h"
#include "json.h"
#include "matmul.h"
#include "safetensors.h"

/* ---- configuration ------------------------------------------------------------------------ */

static const char *const CFG_INTS[] = {"vocab_size", "d_model", "n_layers", "n_heads", "n_kv_heads", "d_ff",
                                       "max_seq_len", "line_pos", "newline_id"};
static const char *const CFG_FLOATS[] = {"rope_theta", "norm_eps", "init_std"};
static const char *const CFG_BOOLS[] = {"tie_embeddings", "abs_pos"};

static int *cfg_int(mg_model_config *c, int i)
{
    int *f[] = {&c->vocab_size, &c->d_model, &c->n_layers, &c->n_heads, &c->n_kv_heads, &c->d_ff,
                &c->max_seq_len, &c->line_pos, &c->newline_id};
    return f[i];
}

int mg_model_config_parse(const char *json, size_t n, mg_model_config *c, char *err, size_t errlen)
{
    mg_json_tok toks[128];
    if (mg_json_parse_object(json, n, toks, (int)(sizeof toks / sizeof toks[0]), "MAV model configuration", err,
                             errlen) < 0)
        return MG_ERR;
    /* MAVConfig defaults */
    memset(c, 0, sizeof *c);
    c->d_model = 128;
    c->n_layers = 4;
    c->n_heads = 4;
    c->n_kv_heads = 1;
    c->d_ff = 384;
    c->max_seq_len = 512;
    c->rope_theta = 10000.0;
    c->norm_eps = 1e-6;
    c->init_std = 0.02;
    c->tie_embeddings = 1;
    c->newline_id = -1;
    int have_vocab = 0, k = 1;
    for (int e = 0; e < toks[0].size; e++) {
        const mg_json_tok *key = &toks[k], *v = &toks[k + 1];
        char name[64];
        if (mg_json_str_copy(json, key, name, sizeof name) < 0) {
            snprintf(err, errlen, "unknown MAVConfig field (a key of %zu bytes)", key->end - key->start);
            return MG_ERR;
        }
        int known = 0;
        for (int i = 0; i < (int)(sizeof CFG_INTS / sizeof CFG_INTS[0]); i++)
            if (strcmp(name, CFG_INTS[i]) == 0) {
                int64_t x;
                if (mg_json_int(json, v, &x) < 0 || x < -2147483647 || x > 2147483647) {
                    snprintf(err, errlen, "MAVConfig.%s must be an int, got '%.*s'", name,
                             (int)(v->end - v->start > 40 ? 40 : v->end - v->start), json + v->start);
                    return MG_ERR;
                }
                *cfg_int(c, i) = (int)x;
                have_vocab |= i == 0;
                known = 1;
            }
        for (int i = 0; i < 3; i++)
            if (strcmp(name, CFG_FLOATS[i]) == 0) {
                double x;
                if (mg_json_double(json, v, &x) < 0) {
                    snprintf(err, errlen, "MAVConfig.%s must be a number", name);
                    return MG_ERR;
                }
                *(i == 0 ? &c->rope_theta : i == 1 ? &c->norm_eps : &c->init_std) = x;
                known = 1;
            }
        for (int i = 0; i < 2; i++)
            if (strcmp(name, CFG_BOOLS[i]) == 0) {
                if (v->type != MG_JSON_BOOL) {
                    snprintf(err, errlen, "MAVConfig.%s must be true or false", name);
                    return MG_ERR;
                }
                *(i == 0 ? &c->tie_embeddings : &c->abs_pos) = json[v->start] == 't';
                known = 1;
            }
        if (strcmp(name, "mlp") == 0) {
            if (mg_json_str_eq(json, v, "swiglu"))
                c->geglu = 0;
            else if (mg_json_str_eq(json, v, "geglu"))
                c->geglu = 1;
            else {
                snprintf(err, errlen, "MAVConfig.mlp must be 'swiglu' or 'geglu'");
                return MG_ERR;
            }
            known = 1;
        }
        if (!known) {
            snprintf(err, errlen, "unknown MAVConfig field '%s'", name);
            return MG_ERR;
        }
        k = v->next;
    }
    if (!have_vocab) {
        snprintf(err, errlen, "MAVConfig needs vocab_size");
        return MG_ERR;
    }
    for (int i = 0; i < 7; i++)
        if (*cfg_int(c, i) <= 0) {
            snprintf(err, errlen, "MAVConfig.%s must be a positive int, got %d", CFG_INTS[i], *cfg_int(c, i));
            return MG_ERR;
        }
    if (c->d_model % c->n_heads) {
        snprintf(err, errlen, "MAVConfig.d_model (%d) must be a multiple of n_heads (%d)", c->d_model, c->n_heads);
        return MG_ERR;
    }
    c->head_dim = c->d_model / c->n_heads;
    if (c->head_dim % 2) {
        snprintf(err, errlen, "MAVConfig head dimension d_model/n_heads = %d must be even (rotary)", c->head_dim);
        return MG_ERR;
    }
    if (c->n_heads % c->n_kv_heads) {
        snprintf(err, errlen, "MAVConfig.n_heads (%d) must be a multiple of n_kv_heads (%d)", c->n_heads,
                 c->n_kv_heads);
        return MG_ERR;
    }
    if (c->line_pos < 0) {
        snprintf(err, errlen, "MAVConfig.line_pos must be an int >= 0, got %d", c->line_pos);
        return MG_ERR;
    }
    if (c->line_pos && (c->newline_id < 0 || c->newline_id >= c->vocab_size)) {
        snprintf(err, errlen, "MAVConfig.newline_id must be a token id in [0, %d) when line_pos is on, got %d",
                 c->vocab_size, c->newline_id);
        return MG_ERR;
    }
    if (!(c->rope_theta > 0 && c->norm_eps > 0 && c->init_std > 0) || !isfinite(c->rope_theta) ||
        !isfinite(c->norm_eps)) {
        snprintf(err, errlen, "MAVConfig.rope_theta, norm_eps and init_std must be positive");
        return MG_ERR;
    }
    if (c->max_seq_len > MG_MODEL_MAX_SEQ) {
        snprintf(err, errlen, "MAVConfig.max_seq_len %d exceeds the native engine's limit %d", c->max_seq_len,
                 MG_MODEL_MAX_SEQ);
        return MG_ERR;
    }
    return MG_OK;
}

/* ---- weights ------------------------------------------------------------------------------ */

static char *dup_str(const char *s)
{
    size_t n = strlen(s);
    char *d = malloc(n + 1);
    if (d)
        memcpy(d, s, n + 1);
    return d;
}

void mg_model_free(mg_model *m)
{
    free(m->arena);
    free(m->layers);
    free(m->vocab_version);
    free(m->info);
    free(m->config_json);
    memset(m, 0, sizeof *m);
}

static const mg_st_format MODEL_FORMAT = {MG_MODEL_FORMAT, MG_MODEL_FORMAT_VERSION, "MAV model", "weights"};

enum { K_COPY, K_TRANSPOSE };

/* A [rows] vector or [rows][cols] matrix (cols 0: a vector), transposed into the matmul kernel's packed
 * panels (K_TRANSPOSE: [out = rows][in = cols] -> panels of W = its transpose) or copied. */
static void want(mg_st_want *w, const char *name, int64_t rows, int64_t cols, int transpose, const float **dst)
{
    const int64_t shape[2] = {rows, cols};
    mg_st_want_set(w, name, transpose ? K_TRANSPOSE : K_COPY, cols ? 2 : 1, shape,
                   transpose ? mg_matmul_packed_floats((int)cols, (int)rows) : 0, dst);
}

static void convert(void *ctx, const mg_st_want *w, const mg_st_tensor *t, float *at)
{
    (void)ctx;
    size_t rows = (size_t)w->shape[0], cols = w->ndim == 2 ? (size_t)w->shape[1] : 1;
    if (w->kind == K_TRANSPOSE) {
        for (size_t r = 0; r < rows; r++)
            for (size_t k = 0; k < cols; k++)
                at[mg_pack_at((int)cols, (int)k, (int)r)] = mg_st_float(t, r * cols + k);
    } else {
        for (size_t k = 0; k < rows * cols; k++)
            at[k] = mg_st_float(t, k);
    }
}

/* mg_model_load_buffer; `mapped`: buf is a read-only private file mapping whose pages may be
 * released as the weights are converted (so the file and the float32 arena are not both resident). */
static int load(mg_model *m, const uint8_t *buf, size_t len, int mapped, char *err, size_t errlen)
{
    memset(m, 0, sizeof *m);
    mg_st_file f;
    mg_st_want *w = NULL;
    int rc = MG_ERR;
    if (mg_st_open(buf, len, &MODEL_FORMAT, &f, err, errlen) != MG_OK)
        return MG_ERR;
    const char *cj = mg_st_meta(&f, "config");
    if (mg_model_config_parse(cj ? cj : "", cj ? strlen(cj) : 0, &m->cfg, err, errlen) != MG_OK)
        goto done;
    const mg_model_config *c = &m->cfg;
    /* the MAV vocabulary the token ids refer to: a known version of the right size, or none */
    if (mg_tok_check_model(mg_st_meta(&f, "vocab_version"), c->vocab_size, &m->vocab, err, errlen) != MG_OK)
        goto done;
    int64_t d = c->d_model, hd = c->head_dim, V = c->vocab_size;
    if (c->n_layers > 4096) {
        snprintf(err, errlen, "MAVConfig.n_layers %d is more than the native engine supports (4096)", c->n_layers);
        goto done;
    }
    int nw = 6 + 9 * c->n_layers;
    m->layers = calloc((size_t)c->n_layers, sizeof *m->layers);
    w = calloc((size_t)nw, sizeof *w);
    if (!m->layers || !w) {
        snprintf(err, errlen, "out of memory");
        goto done;
    }
    int n = 0;
    want(&w[n++], "embed.weight", V, d, 0, &m->embed);
    want(&w[n++], "norm.weight", d, 0, 0, &m->norm);
    if (!c->tie_embeddings)
        want(&w[n++], "lm_head.weight", V, d, 1, &m->out);
    if (c->abs_pos)
        want(&w[n++], "pos_embed.weight", c->max_seq_len, d, 0, &m->pos_embed);
    if (c->line_pos)
        want(&w[n++], "line_embed.weight", c->line_pos, d, 0, &m->line_embed);
    for (int i = 0; i < c->n_layers; i++) {
        char nm[MG_ST_WANT_NAME];
        mg_layer_weights *L = &m->layers[i];
#define LW(suffix, r, cc, tr, field)                                             \
        snprintf(nm, sizeof nm, "blocks.%d.%s", i, suffix);                      \
        want(&w[n++], nm, r, cc, tr, &L->field)
        LW("attn_norm.weight", d, 0, 0, attn_norm);
        LW("attn.wq.weight", c->n_heads * hd, d, 1, wq);
        LW("attn.wk.weight", c->n_kv_heads * hd, d, 1, wk);
        LW("attn.wv.weight", c->n_kv_heads * hd, d, 1, wv);
        LW("attn.wo.weight", d, c->n_heads * hd, 1, wo);
        LW("mlp_norm.weight", d, 0, 0, mlp_norm);
        LW("mlp.gate.weight", c->d_ff, d, 1, gate);
        LW("mlp.up.weight", c->d_ff, d, 1, up);
        LW("mlp.down.weight", d, c->d_ff, 1, down);
#undef LW
    }
    /* the exact set of tensors, their shapes and dtypes; a tied output layer is packed after them */
    mg_st_weights got;
    size_t tied = c->tie_embeddings ? mg_matmul_packed_floats((int)d, (int)V) : 0;
    if (mg_st_load_weights(&f, w, n, tied, mapped, &MODEL_FORMAT, convert, NULL, &got, err, errlen) != MG_OK)
        goto done;
    m->arena = got.arena;
    if (c->tie_embeddings) {
        float *at = got.extra;
        for (int64_t r = 0; r < V; r++)
            for (int64_t k = 0; k < d; k++)
                at[mg_pack_at((int)d, (int)k, (int)r)] = m->embed[r * d + k];
        m->out = at;
    }
    m->n_params = got.n_params;
    m->file_dtype = got.dtype;
    const char *vv = mg_st_meta(&f, "vocab_version"), *info = mg_st_meta(&f, "info");
    m->vocab_version = dup_str(vv ? vv : "");
    m->info = dup_str(info ? info : "{}");
    m->config_json = dup_str(cj);
    if (!m->vocab_version || !m->info || !m->config_json) {
        snprintf(err, errlen, "out of memory");
        goto done;
    }
    rc = MG_OK;
done:
    free(w);
    mg_st_free(&f);
    if (rc != MG_OK)
        mg_model_free(m);
    return rc;
}

int mg_model_load_buffer(mg_model *m, const uint8_t *buf, size_t len, char *err, size_t errlen)
{
    return load(m, buf, len, 0, err, errlen);
}

static int load_cb(void *ctx, const uint8_t *buf, size_t len, int mapped, char *err, size_t errlen)
{
    return load(ctx, buf, len, mapped, err, errlen);
}

/* A regular file is memory-mapped read-only and validated and converted from the mapped bytes
 * (no copy of the file in memory; mg_st_with_file); each tensor's pages are given back once it is
 * converted, and the mapping is released once the weights are packed: every weight is converted or
 * repacked into the model's own arena anyway, so keeping the mapping (even for float32) saves nothing. */
int mg_model_load_file(mg_model *m, const char *path, char *err, size_t errlen)
{
    memset(m, 0, sizeof *m);
    return mg_st_with_file(path, load_cb, m, err, errlen);
}
