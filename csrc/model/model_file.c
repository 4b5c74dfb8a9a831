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

typedef struct want {
    char name[64];
    int64_t rows, cols; /* cols 0: a vector [rows] */
    int transpose;
    const float **dst;
} want;

/* mg_model_load_buffer; `mapped`: buf is a read-only private file mapping whose pages may be
 * released as the weights are converted (so the file and the float32 arena are not both resident). */
static int load(mg_model *m, const uint8_t *buf, size_t len, int mapped, char *err, size_t errlen)
{
    memset(m, 0, sizeof *m);
    mg_st_file f;
    want *w = NULL;
    if (mg_st_parse(buf, len, &f, err, errlen) != MG_OK)
        return MG_ERR;
    const char *fmt = mg_st_meta(&f, "format"), *ver = mg_st_meta(&f, "format_version");
    const char *cj = mg_st_meta(&f, "config");
    if (!fmt || strcmp(fmt, MG_MODEL_FORMAT) != 0) {
        snprintf(err, errlen, "not a mavgame MAV model (metadata format '%.60s')", fmt ? fmt : "(none)");
        goto fail;
    }
    if (!ver || strcmp(ver, MG_MODEL_FORMAT_VERSION) != 0) {
        snprintf(err, errlen, "unsupported MAV model format version '%.60s'", ver ? ver : "(none)");
        goto fail;
    }
    if (mg_model_config_parse(cj ? cj : "", cj ? strlen(cj) : 0, &m->cfg, err, errlen) != MG_OK)
        goto fail;
    const mg_model_config *c = &m->cfg;
    /* the MAV vocabulary the token ids refer to: a known version of the right size, or none */
    if (mg_tok_check_model(mg_st_meta(&f, "vocab_version"), c->vocab_size, &m->vocab, err, errlen) != MG_OK)
        goto fail;
    int64_t d = c->d_model, hd = c->head_dim, V = c->vocab_size;
    if (c->n_layers > 4096) {
        snprintf(err, errlen, "MAVConfig.n_layers %d is more than the native engine supports (4096)", c->n_layers);
        goto fail;
    }
    int nw = 6 + 9 * c->n_layers;
    m->layers = calloc((size_t)c->n_layers, sizeof *m->layers);
    w = calloc((size_t)nw, sizeof *w);
    if (!m->layers || !w) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    int n = 0;
#define WANT(nm, r, cc, tr, dst_)                                                \
    do {                                                                         \
        snprintf(w[n].name, sizeof w[n].name, "%s", nm);                         \
        w[n].rows = (r);                                                         \
        w[n].cols = (cc);                                                        \
        w[n].transpose = (tr);                                                   \
        w[n].dst = (dst_);                                                       \
        n++;                                                                     \
    } while (0)
    WANT("embed.weight", V, d, 0, &m->embed);
    WANT("norm.weight", d, 0, 0, &m->norm);
    if (!c->tie_embeddings)
        WANT("lm_head.weight", V, d, 1, &m->out);
    if (c->abs_pos)
        WANT("pos_embed.weight", c->max_seq_len, d, 0, &m->pos_embed);
    if (c->line_pos)
        WANT("line_embed.weight", c->line_pos, d, 0, &m->line_embed);
    for (int i = 0; i < c->n_layers; i++) {
        char nm[64];
        mg_layer_weights *L = &m->layers[i];
#define LW(suffix, r, cc, tr, field)                                             \
        snprintf(nm, sizeof nm, "blocks.%d.%s", i, suffix);                      \
        WANT(nm, r, cc, tr, &L->field)
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
#undef WANT
    /* the exact set of tensors, their shapes and dtypes */
    size_t total = 0, floats = 0;
    int dtype = -1;
    for (int i = 0; i < n; i++) {
        const mg_st_tensor *t = mg_st_take(&f, w[i].name, "weights", err, errlen);
        if (!t)
            goto fail;
        int nd = w[i].cols ? 2 : 1;
        if (t->ndim != nd || t->shape[0] != w[i].rows || (nd == 2 && t->shape[1] != w[i].cols)) {
            char got[96] = "";
            size_t at = 0;
            for (int k = 0; k < t->ndim && at + 24 < sizeof got; k++)
                at += (size_t)snprintf(got + at, sizeof got - at, "%s%lld", k ? ", " : "", (long long)t->shape[k]);
            if (nd == 2)
                snprintf(err, errlen, "weight '%s' has shape (%s), config says (%lld, %lld)", w[i].name, got,
                         (long long)w[i].rows, (long long)w[i].cols);
            else
                snprintf(err, errlen, "weight '%s' has shape (%s), config says (%lld,)", w[i].name, got,
                         (long long)w[i].rows);
            goto fail;
        }
        if (mg_st_check_weight(t, "weights", &dtype, err, errlen) != MG_OK)
            goto fail;
        total += (size_t)t->numel;
        floats += w[i].transpose ? mg_matmul_packed_floats((int)w[i].cols, (int)w[i].rows) : (size_t)t->numel;
    }
    if (mg_st_all_taken(&f, "weights", err, errlen) != MG_OK)
        goto fail;
    if (c->tie_embeddings)
        floats += mg_matmul_packed_floats((int)d, (int)V);
    m->arena = calloc(floats, sizeof(float)); /* zeros: the padding of the last panels */
    if (!m->arena) {
        snprintf(err, errlen, "out of memory for %zu weights", floats);
        goto fail;
    }
    float *at = m->arena;
    for (int i = 0; i < n; i++) {
        const mg_st_tensor *t = mg_st_find(&f, w[i].name);
        size_t rows = (size_t)w[i].rows, cols = w[i].cols ? (size_t)w[i].cols : 1;
        if (mg_st_check_finite(t, "weights", err, errlen) != MG_OK)
            goto fail;
        *w[i].dst = at;
        if (w[i].transpose) { /* [out = rows][in = cols] -> packed panels of W = its transpose */
            for (size_t r = 0; r < rows; r++)
                for (size_t k = 0; k < cols; k++)
                    at[mg_pack_at((int)cols, (int)k, (int)r)] = mg_st_float(t, r * cols + k);
            at += mg_matmul_packed_floats((int)cols, (int)rows);
        } else {
            for (size_t k = 0; k < rows * cols; k++)
                at[k] = mg_st_float(t, k);
            at += rows * cols;
        }
        if (mapped)
            mg_st_release_mapped(t->data, t->nbytes);
    }
    if (c->tie_embeddings) {
        for (int64_t r = 0; r < V; r++)
            for (int64_t k = 0; k < d; k++)
                at[mg_pack_at((int)d, (int)k, (int)r)] = m->embed[r * d + k];
        m->out = at;
    }
    m->n_params = total;
    m->file_dtype = dtype;
    const char *vv = mg_st_meta(&f, "vocab_version"), *info = mg_st_meta(&f, "info");
    m->vocab_version = dup_str(vv ? vv : "");
    m->info = dup_str(info ? info : "{}");
    m->config_json = dup_str(cj);
    if (!m->vocab_version || !m->info || !m->config_json) {
        snprintf(err, errlen, "out of memory");
        goto fail;
    }
    free(w);
    mg_st_free(&f);
    return MG_OK;
fail:
    free(w);
    mg_st_free(&f);
    mg_model_free(m);
    return MG_ERR;
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
