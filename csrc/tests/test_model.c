/*
 * test_model.c - the native inference engine (csrc/model): the JSON and safetensors readers and
 * their errors, model files in float32/float16/bfloat16 and malformed ones, the matmul kernels,
 * and generation invariants on random models of every configuration variant: greedy tokens
 * equal the argmax of a fresh prefill (the KV cache is consistent), identical results for 1, 2
 * and 3 threads, with prefix sharing on and off, and for a prompt alone or inside a batch.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../model/engine.h"
#include "../model/json.h"
#include "../model/matmul.h"
#include "../model/model.h"
#include "../model/safetensors.h"
#include "../format/tokenizer.h"
#include "../format/values.h"
#include "../game.h"
#include "../search/mcts.h"
#include "../search/mcts_eval_model.h"
#include "mgtest.h"

static mg_test_counts T;

/* ---- building model files ------------------------------------------------------------------ */

typedef struct tcfg {
    int V, d, L, H, KV, ff, S, geglu, tied, abs_pos, line_pos, newline;
} tcfg;

typedef struct tensor_spec {
    char name[64];
    int ndim;
    int64_t shape[2];
} tensor_spec;

static int specs_of(const tcfg *c, tensor_spec *s)
{
    int n = 0, hd = c->d / c->H;
#define ADD(nm, a, b)                                                  \
    do {                                                               \
        snprintf(s[n].name, sizeof s[n].name, "%s", nm);               \
        s[n].ndim = (b) ? 2 : 1;                                       \
        s[n].shape[0] = (a);                                           \
        s[n].shape[1] = (b);                                           \
        n++;                                                           \
    } while (0)
    ADD("embed.weight", c->V, c->d);
    ADD("norm.weight", c->d, 0);
    if (!c->tied)
        ADD("lm_head.weight", c->V, c->d);
    if (c->abs_pos)
        ADD("pos_embed.weight", c->S, c->d);
    if (c->line_pos)
        ADD("line_embed.weight", c->line_pos, c->d);
    for (int i = 0; i < c->L; i++) {
        char nm[64];
        const char *names[9] = {"attn_norm", "attn.wq", "attn.wk", "attn.wv", "attn.wo", "mlp_norm", "mlp.gate",
                                "mlp.up", "mlp.down"};
        int64_t r[9] = {c->d, c->H * hd, c->KV * hd, c->KV * hd, c->d, c->d, c->ff, c->ff, c->d};
        int64_t k[9] = {0, c->d, c->d, c->d, c->H * hd, 0, c->d, c->d, c->ff};
        for (int j = 0; j < 9; j++) {
            snprintf(nm, sizeof nm, "blocks.%d.%s.weight", i, names[j]);
            ADD(nm, r[j], k[j]);
        }
    }
#undef ADD
    return n;
}

static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static float rng_normalish(uint64_t *s)
{
    double u = 0;
    for (int i = 0; i < 4; i++)
        u += (double)(rng_next(s) >> 11) / 9007199254740992.0;
    return (float)((u - 2.0) * 0.6);
}

static uint16_t f2h(float f) /* float to half, round to nearest (normal range only is enough here) */
{
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000;
    int exp = (int)((x >> 23) & 0xFF) - 127 + 15;
    uint32_t man = x & 0x7FFFFF;
    if (exp <= 0)
        return (uint16_t)sign;
    uint32_t h = sign | ((uint32_t)exp << 10) | (man >> 13);
    if (man & 0x1000)
        h++;
    return (uint16_t)h;
}

enum { MUT_NONE, MUT_MISSING, MUT_EXTRA, MUT_SHAPE, MUT_DTYPE_I32, MUT_OVERLAP, MUT_VOCAB_V1, MUT_VOCAB_V7,
       MUT_VOCAB_NONE, MUT_NAN, MUT_NEG_INF };

/* A model file for c: dtype "F32", "F16" or "BF16"; config_json overrides the config text;
 * mutation breaks it in one way.  The file declares the MAV vocabulary of its size (v1, v2, else
 * none) unless a MUT_VOCAB mutation says otherwise.  The caller frees *buf. */
static size_t build_file(const tcfg *c, const char *dtype, const char *config_json, const char *format, int mutation,
                         uint64_t seed, uint8_t **buf)
{
    tensor_spec s[128];
    int n = specs_of(c, s);
    if (mutation == MUT_EXTRA) {
        snprintf(s[n].name, sizeof s[n].name, "bogus.weight");
        s[n].ndim = 1;
        s[n].shape[0] = 4;
        n++;
    }
    if (mutation == MUT_SHAPE)
        s[n - 1].shape[0] += 1;
    int start = mutation == MUT_MISSING ? 1 : 0;
    size_t es = strcmp(dtype, "F32") == 0 ? 4 : 2;
    char cfg[1024];
    if (config_json)
        snprintf(cfg, sizeof cfg, "%s", config_json);
    else
        snprintf(cfg, sizeof cfg,
                 "{\\\"vocab_size\\\": %d, \\\"d_model\\\": %d, \\\"n_layers\\\": %d, \\\"n_heads\\\": %d, "
                 "\\\"n_kv_heads\\\": %d, \\\"d_ff\\\": %d, \\\"max_seq_len\\\": %d, \\\"mlp\\\": \\\"%s\\\", "
                 "\\\"tie_embeddings\\\": %s, \\\"abs_pos\\\": %s, \\\"line_pos\\\": %d, \\\"newline_id\\\": %d, "
                 "\\\"rope_theta\\\": 10000.0, \\\"norm_eps\\\": 1e-06, \\\"init_std\\\": 0.02}",
                 c->V, c->d, c->L, c->H, c->KV, c->ff, c->S, c->geglu ? "geglu" : "swiglu", c->tied ? "true" : "false",
                 c->abs_pos ? "true" : "false", c->line_pos, c->newline);
    const char *vv = c->V == MG_TOK_SIZE_V1 ? "1" : c->V == MG_TOK_SIZE_V2 ? "2" : "";
    if (mutation == MUT_VOCAB_V1)
        vv = "1";
    else if (mutation == MUT_VOCAB_V7)
        vv = "7";
    else if (mutation == MUT_VOCAB_NONE)
        vv = "";
    size_t hcap = 4096 + 160 * (size_t)n, hl = 0;
    char *h = malloc(hcap);
    hl += (size_t)snprintf(h + hl, hcap - hl,
                           "{\"__metadata__\":{\"format\":\"%s\",\"format_version\":\"1\",\"config\":\"%s\","
                           "\"vocab_version\":\"%s\",\"info\":\"{}\"}",
                           format, cfg, vv);
    size_t off = 0;
    for (int i = start; i < n; i++) {
        int64_t numel = s[i].shape[0] * (s[i].ndim == 2 ? s[i].shape[1] : 1);
        const char *dt = mutation == MUT_DTYPE_I32 && i == n - 1 ? "I32" : dtype;
        size_t nb = (size_t)numel * (strcmp(dt, "I32") == 0 ? 4 : es);
        size_t b = off;
        if (mutation == MUT_OVERLAP && i == n - 1 && off >= 4)
            b = off - 4;
        if (s[i].ndim == 2)
            hl += (size_t)snprintf(h + hl, hcap - hl, ",\"%s\":{\"dtype\":\"%s\",\"shape\":[%lld,%lld],"
                                   "\"data_offsets\":[%zu,%zu]}", s[i].name, dt, (long long)s[i].shape[0],
                                   (long long)s[i].shape[1], b, b + nb);
        else
            hl += (size_t)snprintf(h + hl, hcap - hl, ",\"%s\":{\"dtype\":\"%s\",\"shape\":[%lld],"
                                   "\"data_offsets\":[%zu,%zu]}", s[i].name, dt, (long long)s[i].shape[0], b, b + nb);
        off = b + nb;
    }
    hl += (size_t)snprintf(h + hl, hcap - hl, "}");
    while (hl % 8)
        h[hl++] = ' ';
    size_t total = 8 + hl + off;
    uint8_t *out = calloc(1, total);
    for (int i = 0; i < 8; i++)
        out[i] = (uint8_t)((uint64_t)hl >> (8 * i));
    memcpy(out + 8, h, hl);
    free(h);
    uint8_t *data = out + 8 + hl;
    size_t at = 0;
    for (int i = start; i < n; i++) {
        int64_t numel = s[i].shape[0] * (s[i].ndim == 2 ? s[i].shape[1] : 1);
        int is_norm = strstr(s[i].name, "norm") != NULL;
        if (mutation == MUT_OVERLAP && i == n - 1 && at >= 4)
            at -= 4;
        for (int64_t k = 0; k < numel; k++) {
            float v = is_norm ? 1.0f + 0.1f * rng_normalish(&seed) : 0.5f * rng_normalish(&seed);
            if (i == n - 1 && k == 3 && (mutation == MUT_NAN || mutation == MUT_NEG_INF))
                v = mutation == MUT_NAN ? NAN : -INFINITY; /* (F32 and BF16 only: f2h is not for them) */
            if (mutation == MUT_DTYPE_I32 && i == n - 1) {
                memset(data + at, 0, 4);
                at += 4;
            } else if (es == 4) {
                memcpy(data + at, &v, 4);
                at += 4;
            } else {
                uint16_t hv;
                if (strcmp(dtype, "F16") == 0) {
                    hv = f2h(v);
                } else {
                    uint32_t x;
                    memcpy(&x, &v, 4);
                    hv = (uint16_t)(x >> 16);
                }
                data[at] = (uint8_t)hv;
                data[at + 1] = (uint8_t)(hv >> 8);
                at += 2;
            }
        }
    }
    *buf = out;
    return total;
}

static const tcfg BASE = {97, 16, 2, 4, 2, 24, 64, 0, 1, 0, 0, -1};

/* ---- readers ------------------------------------------------------------------------------ */

static void test_json(void)
{
    char err[MG_ERRLEN];
    mg_json_tok t[32];
    const char *s = "{\"a\": [1, 2.5, -3e2], \"b\\u00e9\": \"x\\ny\", \"c\": {\"d\": null, \"e\": true}}";
    int n = mg_json_parse(s, strlen(s), t, 32, err, sizeof err);
    MG_CHECK(n == 14);
    int a = mg_json_find(s, t, 0, "a");
    MG_CHECK(a > 0 && t[a].type == MG_JSON_ARRAY && t[a].size == 3);
    int64_t v;
    double dv;
    MG_CHECK(mg_json_int(s, &t[a + 1], &v) == 0 && v == 1);
    MG_CHECK(mg_json_int(s, &t[a + 2], &v) < 0);
    MG_CHECK(mg_json_double(s, &t[a + 3], &dv) == 0 && dv == -300.0);
    int b = mg_json_find(s, t, 0, "b\xc3\xa9");
    char buf[16];
    MG_CHECK(b > 0 && mg_json_str_copy(s, &t[b], buf, sizeof buf) == 3 && strcmp(buf, "x\ny") == 0);
    int c = mg_json_find(s, t, 0, "c");
    MG_CHECK(c > 0 && mg_json_find(s, t, c, "e") > 0 && mg_json_find(s, t, 0, "e") < 0);
    const char *bad[] = {"", "{", "[1,]", "{\"a\" 1}", "01", "1.", "\"\\x\"", "[1] 2", "\"a", "tru", "{\"a\":1,}",
                         "\"\x01\""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = '\0';
        MG_CHECK(mg_json_parse(bad[i], strlen(bad[i]), NULL, 0, err, sizeof err) < 0);
        MG_CHECK(strstr(err, "invalid JSON at byte") != NULL);
    }
    char deep[100];
    memset(deep, '[', sizeof deep);
    MG_CHECK(mg_json_parse(deep, sizeof deep, NULL, 0, err, sizeof err) < 0 && strstr(err, "deeply"));
}

static void test_half(void)
{
    MG_CHECK(mg_half_to_float(0x3C00) == 1.0f);
    MG_CHECK(mg_half_to_float(0xC000) == -2.0f);
    MG_CHECK(mg_half_to_float(0x0001) == ldexpf(1.0f, -24)); /* smallest subnormal */
    MG_CHECK(mg_half_to_float(0x7BFF) == 65504.0f);
    MG_CHECK(isinf(mg_half_to_float(0x7C00)) && isnan(mg_half_to_float(0x7E00)));
    MG_CHECK(mg_bf16_to_float(0x3F80) == 1.0f && mg_bf16_to_float(0xC040) == -3.0f);
}

static int load_err(const uint8_t *buf, size_t len, const char *want)
{
    mg_model m;
    char err[MG_ERRLEN] = "";
    int rc = mg_model_load_buffer(&m, buf, len, err, sizeof err);
    if (rc == MG_OK) {
        mg_model_free(&m);
        fprintf(stderr, "expected an error containing '%s', the file loaded\n", want);
        return 0;
    }
    if (!strstr(err, want)) {
        fprintf(stderr, "expected an error containing '%s', got '%s'\n", want, err);
        return 0;
    }
    return 1;
}

static void test_model_files(void)
{
    uint8_t *buf;
    mg_model m;
    char err[MG_ERRLEN];
    const char *dts[3] = {"F32", "F16", "BF16"};
    float first[3] = {0};
    for (int i = 0; i < 3; i++) {
        size_t len = build_file(&BASE, dts[i], NULL, "mavgame-mav", MUT_NONE, 7, &buf);
        int rc = mg_model_load_buffer(&m, buf, len, err, sizeof err);
        MG_CHECK(rc == MG_OK);
        if (rc != MG_OK) {
            fprintf(stderr, "%s\n", err);
            free(buf);
            continue;
        }
        MG_CHECK(m.cfg.vocab_size == 97 && m.cfg.head_dim == 4 && m.cfg.tie_embeddings && !m.cfg.geglu);
        /* embed + norm + per layer (attention 16*16*2 + 16*8*2, MLP 3*16*24, 2 norms) */
        MG_CHECK_EQ_U64(m.n_params, 97 * 16 + 16 + 2 * (512 + 256 + 3 * 16 * 24 + 32));
        MG_CHECK(strcmp(m.vocab_version, "") == 0 && m.vocab == 0 && strcmp(m.info, "{}") == 0);
        first[i] = m.embed[5];
        MG_CHECK(m.out[mg_pack_at(16, 5, 0)] == m.embed[0 * 16 + 5]); /* tied output layer, transposed */
        MG_CHECK(m.out[mg_pack_at(16, 3, 96)] == m.embed[96 * 16 + 3]);
        mg_model_free(&m);
        free(buf);
    }
    MG_CHECK(fabsf(first[0] - first[1]) < 2e-3f && fabsf(first[0] - first[2]) < 1e-2f);

    size_t len = build_file(&BASE, "F32", NULL, "mavgame-mav", MUT_NONE, 7, &buf);
    MG_CHECK(load_err(buf, 5, "only 5 bytes"));
    MG_CHECK(load_err(buf, len - 3, "outside the"));
    uint8_t *cp = malloc(len);
    memcpy(cp, buf, len);
    cp[7] = 0x40;
    MG_CHECK(load_err(cp, len, "header length"));
    memcpy(cp, buf, len);
    cp[8] = '[';
    MG_CHECK(load_err(cp, len, "invalid safetensors header"));
    free(cp);
    free(buf);
    struct {
        int mut;
        const char *fmt, *cfg, *want;
    } cases[] = {
        {MUT_MISSING, "mavgame-mav", NULL, "'embed.weight' is missing"},
        {MUT_EXTRA, "mavgame-mav", NULL, "unexpected tensor 'bogus.weight'"},
        {MUT_SHAPE, "mavgame-mav", NULL, "blocks.1.mlp.down.weight' has shape (17, 24)"},
        {MUT_DTYPE_I32, "mavgame-mav", NULL, "dtype I32"},
        {MUT_OVERLAP, "mavgame-mav", NULL, "overlap"},
        {MUT_VOCAB_V1, "mavgame-mav", NULL, "vocabulary size 97 does not match MAV vocabulary v1 (2723 tokens)"},
        {MUT_VOCAB_V7, "mavgame-mav", NULL, "unknown MAV vocabulary v7 (vocab_version '7'"},
        {MUT_NONE, "other", NULL, "not a mavgame MAV model"},
        {MUT_NONE, "mavgame-mav", "{\\\"vocab_size\\\": 97, \\\"colour\\\": 1}", "unknown MAVConfig field 'colour'"},
        {MUT_NONE, "mavgame-mav", "{\\\"d_model\\\": 16}", "needs vocab_size"},
        {MUT_NONE, "mavgame-mav", "{\\\"vocab_size\\\": 97, \\\"n_heads\\\": 3}", "multiple of n_heads"},
        {MUT_NONE, "mavgame-mav", "{\\\"vocab_size\\\": 97, \\\"n_kv_heads\\\": 3}", "multiple of n_kv_heads"},
        {MUT_NONE, "mavgame-mav", "{\\\"vocab_size\\\": 97, \\\"mlp\\\": \\\"relu\\\"}", "MAVConfig.mlp"},
        {MUT_NONE, "mavgame-mav", "{\\\"vocab_size\\\": 97, \\\"d_ff\\\": 2.5}", "MAVConfig.d_ff must be an int"},
        {MUT_NONE, "mavgame-mav", "{\\\"vocab_size\\\": 97, \\\"line_pos\\\": 4}", "newline_id"},
        {MUT_NONE, "mavgame-mav", "{\\\"vocab_size\\\": 97, \\\"max_seq_len\\\": 1000000}", "max_seq_len"},
        {MUT_NONE, "mavgame-mav", "[1]", "must be a JSON object"},
        {MUT_NONE, "mavgame-mav", "{\\\"vocab_size\\\": 97", "configuration JSON"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        len = build_file(&BASE, "F32", cases[i].cfg, cases[i].fmt, cases[i].mut, 7, &buf);
        MG_CHECK(load_err(buf, len, cases[i].want));
        free(buf);
    }
    /* a non-finite weight is refused, naming the tensor, the element and the value */
    for (int i = 0; i < 2; i++) {
        len = build_file(&BASE, i ? "BF16" : "F32", NULL, "mavgame-mav", MUT_NAN, 7, &buf);
        MG_CHECK(load_err(buf, len, "weight 'blocks.1.mlp.down.weight' holds nan at element 3"));
        free(buf);
        len = build_file(&BASE, i ? "BF16" : "F32", NULL, "mavgame-mav", MUT_NEG_INF, 7, &buf);
        MG_CHECK(load_err(buf, len, "weight 'blocks.1.mlp.down.weight' holds -inf at element 3"));
        free(buf);
    }
    MG_CHECK(mg_model_load_file(&m, "/nonexistent/model.safetensors", err, sizeof err) == MG_ERR &&
             strstr(err, "/nonexistent/model.safetensors"));
}

/* ---- kernels ------------------------------------------------------------------------------ */

/* n rows: 7 = a 6-row tile and a one-row, four-panel tile; 10 = 6 + 4 rows; 11 = 6 + 4 + 1; 8 and 9:
 * 6 + a two- or three-row, two-panel tile; out 85: a last group of one full and one partial panel;
 * in 400 x 200 rows: several row blocks (78 rows each), the last with two leftover rows */
static void test_matmul(int n, int in, int out)
{
    float *x = malloc(sizeof(float) * (size_t)n * in), *w = malloc(sizeof(float) * (size_t)in * out);
    float *wp = calloc(mg_matmul_packed_floats(in, out), sizeof(float));
    float *y1 = malloc(sizeof(float) * (size_t)n * out), *y2 = malloc(sizeof(float) * (size_t)n * out);
    float *y3 = malloc(sizeof(float) * (size_t)n * out);
    uint64_t s = 3;
    for (int i = 0; i < n * in; i++)
        x[i] = rng_normalish(&s);
    for (int k = 0; k < in; k++)
        for (int j = 0; j < out; j++)
            wp[mg_pack_at(in, k, j)] = w[k * out + j] = rng_normalish(&s);
    mg_matmul_fn fast = mg_matmul_select(1);
    if (n == 7 && out == 133)
        printf("test_model: matmul kernel %s\n", mg_matmul_name(fast));
    mg_matmul_portable(y1, x, wp, n, in, out, 0, out, 0);
    fast(y2, x, wp, n, in, out, 0, out, 0);
    double maxd = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < out; j++) {
            double ref = 0;
            for (int k = 0; k < in; k++)
                ref += (double)x[i * in + k] * w[k * out + j];
            double d1 = fabs(y1[i * out + j] - ref), d2 = fabs(y2[i * out + j] - ref);
            maxd = d1 > maxd ? d1 : maxd;
            maxd = d2 > maxd ? d2 : maxd;
        }
    MG_CHECK(maxd < 3e-6 * in); /* float rounding grows with the length of the sums */
    /* row by row and column block by column block gives the same bits as all at once */
    for (int i = 0; i < n; i++) {
        fast(y3 + i * out, x + i * in, wp, 1, in, out, 0, 16, 0);
        fast(y3 + i * out, x + i * in, wp, 1, in, out, 16, out, 0);
    }
    MG_CHECK(memcmp(y2, y3, sizeof(float) * (size_t)n * out) == 0);
    /* accumulate */
    fast(y3, x, wp, n, in, out, 0, out, 1);
    int ok = 1;
    for (int i = 0; i < n * out; i++)
        ok &= y3[i] == y2[i] + y2[i];
    MG_CHECK(ok);
    free(x);
    free(w);
    free(wp);
    free(y1);
    free(y2);
    free(y3);
}

/* ---- generation ----------------------------------------------------------------------------- */

#define NP 5
#define CAP 24

typedef struct gen_out {
    int32_t ids[NP][CAP], steps[NP][CAP];
    float probs[NP][CAP * 8];
    mg_gen_result r[NP];
} gen_out;

static int run_gen(const mg_model *m, int threads, int max_batch, int sharing, unsigned flags, int grouped,
                   const int32_t *const *pr, const int32_t *lens, int n, gen_out *o, mg_engine_stats *st)
{
    mg_engine *e;
    char err[MG_ERRLEN];
    if (mg_engine_create(&e, m, max_batch, threads, flags, err, sizeof err) != MG_OK) {
        fprintf(stderr, "engine: %s\n", err);
        return -1;
    }
    int32_t stop[1] = {2}, group[4] = {10, 11, 12, 13}, buckets[8] = {3, 4, 5, 6, 7, 8, 9, 10};
    mg_gen_request q = {n, pr, lens, CAP, stop, 1, group, grouped ? 4 : 0, buckets, 8, sharing};
    memset(o, 0, sizeof *o);
    for (int i = 0; i < n; i++) {
        o->r[i].ids = o->ids[i];
        o->r[i].value_steps = o->steps[i];
        o->r[i].value_probs = o->probs[i];
    }
    int budget = mg_engine_budget(e, &q, err, sizeof err);
    int rc = budget > 0 && budget <= CAP ? mg_engine_generate(e, &q, o->r, err, sizeof err) : MG_ERR;
    if (rc != MG_OK)
        fprintf(stderr, "generate: %s\n", err);
    if (st)
        mg_engine_get_stats(e, st);
    mg_engine_free(e);
    return rc == MG_OK ? 0 : -1;
}

static int same_out(const gen_out *a, const gen_out *b, int n)
{
    for (int i = 0; i < n; i++) {
        if (a->r[i].n_ids != b->r[i].n_ids || a->r[i].n_values != b->r[i].n_values ||
            a->r[i].finished != b->r[i].finished)
            return 0;
        if (memcmp(a->ids[i], b->ids[i], sizeof(int32_t) * (size_t)a->r[i].n_ids) ||
            memcmp(a->steps[i], b->steps[i], sizeof(int32_t) * (size_t)a->r[i].n_values) ||
            memcmp(a->probs[i], b->probs[i], sizeof(float) * 8 * (size_t)a->r[i].n_values))
            return 0;
    }
    return 1;
}

static void test_generation(const tcfg *c, const char *what)
{
    uint8_t *buf;
    size_t len = build_file(c, "F16", NULL, "mavgame-mav", MUT_NONE, 11, &buf);
    mg_model m;
    char err[MG_ERRLEN];
    if (mg_model_load_buffer(&m, buf, len, err, sizeof err) != MG_OK) {
        fprintf(stderr, "%s: %s\n", what, err);
        MG_CHECK(0);
        free(buf);
        return;
    }
    free(buf);
    /* prompts sharing a 6-token header, of different lengths, with newlines (id 40) */
    int32_t p[NP][20];
    int32_t lens[NP] = {9, 14, 7, 12, 8};
    uint64_t s = 99;
    const int32_t *pr[NP];
    for (int i = 0; i < NP; i++) {
        for (int t = 0; t < lens[i]; t++)
            p[i][t] = t < 6 ? (int32_t)(20 + t) : (int32_t)(rng_next(&s) % 60 + 11);
        p[i][3] = 40;
        p[i][lens[i] - 2] = 40;
        pr[i] = p[i];
    }
    static gen_out a, b;
    mg_engine_stats st;
    for (int grouped = 0; grouped < 2; grouped++) {
        MG_CHECK(run_gen(&m, 1, 8, 0, 0, grouped, pr, lens, NP, &a, &st) == 0);
        MG_CHECK(st.shared_saved == 0 && st.prompt_tokens == 50 && st.prefill_tokens == 50);
        int ok = 1;
        for (int i = 0; i < NP; i++)
            ok &= a.r[i].n_ids >= 1 && a.r[i].n_ids <= CAP;
        MG_CHECK(ok);
        MG_CHECK(run_gen(&m, 2, 8, 0, 0, grouped, pr, lens, NP, &b, NULL) == 0);
        MG_CHECK(same_out(&a, &b, NP));
        MG_CHECK(run_gen(&m, 3, 8, 1, 0, grouped, pr, lens, NP, &b, &st) == 0);
        MG_CHECK(same_out(&a, &b, NP));
        /* a prefix tree: the common prefix of all five is 5 tokens (the 7-token prompt has a newline
         * at index 5), the other four share 6: three of them copy 6, the 7-token one copies 5 */
        MG_CHECK(st.shared_saved == 3 * 6 + 5 && st.prefill_tokens == 50 - 23);
        MG_CHECK(run_gen(&m, 2, 2, 1, 0, grouped, pr, lens, NP, &b, NULL) == 0); /* in batches of 2 */
        MG_CHECK(same_out(&a, &b, NP));
    }
    /* a prompt alone gives what it gives in the batch (the budget is the same: CAP < room) */
    MG_CHECK(run_gen(&m, 1, 8, 0, 0, 0, pr, lens, NP, &a, NULL) == 0);
    MG_CHECK(run_gen(&m, 1, 8, 0, 0, 0, pr + 1, lens + 1, 1, &b, NULL) == 0);
    MG_CHECK(a.r[1].n_ids == b.r[0].n_ids && memcmp(a.ids[1], b.ids[0], sizeof(int32_t) * (size_t)b.r[0].n_ids) == 0);
    /* the KV cache is consistent: each greedy token is the argmax of a fresh prefill of the text so far */
    mg_engine *e;
    MG_CHECK(mg_engine_create(&e, &m, 2, 1, 0, err, sizeof err) == MG_OK);
    float *lg = malloc(sizeof(float) * (size_t)c->V);
    int32_t seq[64];
    int n0 = lens[0], steps = a.r[0].n_ids, agree = 0;
    memcpy(seq, p[0], sizeof(int32_t) * (size_t)n0);
    for (int k = 0; k < steps; k++) {
        mg_engine_logits(e, seq, n0 + k, lg, err, sizeof err);
        int best = 0;
        for (int i = 1; i < c->V; i++)
            best = lg[i] > lg[best] ? i : best;
        agree += best == a.ids[0][k];
        seq[n0 + k] = a.ids[0][k];
    }
    MG_CHECK(agree == steps);
    /* the portable kernel gives the same tokens (values within float rounding) */
    MG_CHECK(run_gen(&m, 1, 8, 0, MG_ENGINE_NO_SIMD, 0, pr, lens, NP, &b, NULL) == 0);
    int same = 1;
    for (int i = 0; i < NP; i++)
        same &= a.r[i].n_ids == b.r[i].n_ids && !memcmp(a.ids[i], b.ids[i], sizeof(int32_t) * (size_t)a.r[i].n_ids);
    MG_CHECK(same);
    /* the cross-batch prefix cache: three 40-token prompts (two 16-token blocks each; 0 and 1 share 35
     * tokens, 2 shares 20 with them, newlines inside) in batches of 2 with a 3-block cache (blocks are
     * replaced), twice over: the outputs of a run without any sharing, tokens copied from the cache */
    {
        int32_t lp3[3][40];
        for (int i = 0; i < 3; i++)
            for (int t = 0; t < 40; t++)
                lp3[i][t] = t < (i == 2 ? 20 : 35) ? (int32_t)(20 + t % 30) : (int32_t)(rng_next(&s) % 60 + 11);
        lp3[0][12] = lp3[1][12] = lp3[2][12] = 40;
        const int32_t *lpr[3] = {lp3[0], lp3[1], lp3[2]};
        int32_t l3[3] = {40, 40, 40};
        static gen_out ref, got;
        MG_CHECK(run_gen(&m, 1, 8, 0, 0, 1, lpr, l3, 3, &ref, NULL) == 0);
        mg_engine *pe;
        MG_CHECK(mg_engine_create(&pe, &m, 2, 1, 0, err, sizeof err) == MG_OK);
        MG_CHECK(mg_engine_set_prefix_cache(pe, 50, err, sizeof err) == MG_OK && mg_engine_prefix_cache(pe) == 48);
        int32_t stop[1] = {2}, group[4] = {10, 11, 12, 13}, buckets[8] = {3, 4, 5, 6, 7, 8, 9, 10};
        mg_gen_request pq = {3, lpr, l3, CAP, stop, 1, group, 4, buckets, 8, 1};
        for (int round = 0; round < 2; round++) {
            memset(&got, 0, sizeof got);
            for (int i = 0; i < 3; i++) {
                got.r[i].ids = got.ids[i];
                got.r[i].value_steps = got.steps[i];
                got.r[i].value_probs = got.probs[i];
            }
            MG_CHECK(mg_engine_generate(pe, &pq, got.r, err, sizeof err) == MG_OK);
            MG_CHECK(same_out(&ref, &got, 3));
        }
        mg_engine_stats ps;
        mg_engine_get_stats(pe, &ps);
        MG_CHECK(ps.cache_saved > 0 && ps.prefill_tokens + ps.shared_saved == ps.prompt_tokens);
        MG_CHECK(mg_engine_set_prefix_cache(pe, -1, err, sizeof err) == MG_ERR && strstr(err, "got -1"));
        mg_engine_free(pe);
    }
    /* bad requests */
    int32_t badp[2] = {5, 500};
    const int32_t *bp[1] = {badp};
    int32_t bl[1] = {2}, zl[1] = {0};
    mg_gen_request q = {1, bp, bl, 4, NULL, 0, NULL, 0, NULL, 0, 0};
    MG_CHECK(mg_engine_budget(e, &q, err, sizeof err) < 0 && strstr(err, "token id 500"));
    q.lens = zl;
    MG_CHECK(mg_engine_budget(e, &q, err, sizeof err) < 0 && strstr(err, "prompt 0 is empty"));
    int32_t lp[64] = {0};
    int32_t ll[1] = {64};
    const int32_t *lpp[1] = {lp};
    mg_gen_request q2 = {1, lpp, ll, 4, NULL, 0, NULL, 0, NULL, 0, 0};
    MG_CHECK(mg_engine_budget(e, &q2, err, sizeof err) < 0 && strstr(err, "max_seq_len"));
    ll[0] = 60;
    MG_CHECK(mg_engine_budget(e, &q2, err, sizeof err) == 4);
    q2.max_new_tokens = 10;
    MG_CHECK(mg_engine_budget(e, &q2, err, sizeof err) == 4); /* limited by max_seq_len */
    free(lg);
    mg_engine_free(e);
    mg_model_free(&m);
    printf("test_model: generation checks on %s done\n", what);
}

/* MCTS with the native evaluator over a random model of the real vocabulary: the whole pipeline
 * (prompts, tokenizer, engine, reading answers) runs; a random model's answers are mostly unusable,
 * which the search must survive (invalid leaves), and the tree stays consistent. */
static void test_native_evaluator(int version)
{
    mg_tokenizer *tok = malloc(sizeof *tok);
    char err[MG_ERRLEN];
    MG_CHECK(mg_tok_init(tok, version, err, sizeof err) == MG_OK);
    tcfg c = {tok->n, 16, 1, 2, 1, 16, 160, 0, 1, 0, 0, -1};
    uint8_t *buf;
    size_t len = build_file(&c, "F32", NULL, "mavgame-mav", MUT_NONE, 5, &buf);
    mg_model m;
    MG_CHECK(mg_model_load_buffer(&m, buf, len, err, sizeof err) == MG_OK);
    MG_CHECK(m.vocab == version);
    free(buf);
    if (version == 1) { /* a model of the same size that declares no vocabulary: the evaluator refuses it */
        mg_model none;
        len = build_file(&c, "F32", NULL, "mavgame-mav", MUT_VOCAB_NONE, 5, &buf);
        MG_CHECK(mg_model_load_buffer(&none, buf, len, err, sizeof err) == MG_OK && none.vocab == 0);
        free(buf);
        mg_eval_model_params p0 = {2, 4, NULL, MG_MAV_SCORE_MEAN, NULL, 0, 1, 0, 64, 256, 0};
        mg_evaluator ev0;
        mg_config cfg0;
        memset(&cfg0, 0, sizeof cfg0);
        MG_CHECK(mg_eval_model_create(&ev0, &none, mg_game_by_name("connect_four"), &cfg0, &p0, err, sizeof err) ==
                     MG_ERR &&
                 strstr(err, "declares no MAV vocabulary"));
        mg_model_free(&none);
    }
    const mg_game *g = mg_game_by_name("connect_four");
    mg_config cfg;
    memset(&cfg, 0, sizeof cfg);
    int32_t group[7];
    for (int i = 0; i < 7; i++) {
        char mv[2] = {(char)('1' + i), 0};
        group[i] = (int32_t)mg_tok_lookup(tok, mv, 1);
    }
    mg_eval_model_params p = {2, 4, NULL, MG_MAV_SCORE_MEAN, group, 7, 1, 0, 64, 256, 0};
    mg_evaluator ev;
    int rc = mg_eval_model_create(&ev, &m, g, &cfg, &p, err, sizeof err);
    MG_CHECK(rc == MG_OK);
    if (rc == MG_OK) {
        mg_mcts_config mc;
        mg_mcts_config_default(&mc);
        mc.batch_size = 4;
        mg_mcts *t = mg_mcts_create(g, &mc, err, sizeof err);
        _Alignas(16) unsigned char st[MG_MAX_STATE];
        MG_CHECK(t && g->init(st, &cfg, err, sizeof err) == MG_OK);
        MG_CHECK(mg_mcts_set_root(t, st, 0, err, sizeof err) == MG_OK);
        rc = mg_mcts_search(t, &ev, 12, err, sizeof err);
        if (rc != MG_OK)
            fprintf(stderr, "search: %s\n", err);
        MG_CHECK(rc == MG_OK);
        MG_CHECK(mg_mcts_check(t, err, sizeof err) == MG_OK);
        mg_eval_model_stats s;
        MG_CHECK(mg_eval_model_stats_get(&ev, &s) == MG_OK && s.requests > 0 && s.calls > 0);
        MG_CHECK(s.shared_saved > 0 || s.requests == s.calls);
        /* a second search of the same root: the cached answers give the same tree */
        int32_t a1[8] = {0}, a2[8] = {0};
        uint32_t v1[8] = {0}, v2[8] = {0};
        double q1[8], q2[8];
        float p1[8], p2[8], w1[8] = {0}, w2[8] = {0};
        uint8_t h1[8] = {0}, h2[8] = {0};
        int ne = mg_mcts_num_root_edges(t);
        MG_CHECK(ne >= 0 && ne <= 7);
        mg_mcts_root_edges(t, a1, v1, q1, p1, w1, h1);
        mg_mcts_free(t);
        t = mg_mcts_create(g, &mc, err, sizeof err); /* a fresh tree: the same random choices */
        MG_CHECK(t && mg_mcts_set_root(t, st, 0, err, sizeof err) == MG_OK);
        MG_CHECK(mg_mcts_search(t, &ev, 12, err, sizeof err) == MG_OK);
        MG_CHECK(mg_mcts_num_root_edges(t) == ne);
        mg_mcts_root_edges(t, a2, v2, q2, p2, w2, h2);
        mg_eval_model_stats s2;
        mg_eval_model_stats_get(&ev, &s2);
        MG_CHECK(s2.cache_hits > 0);
        MG_CHECK(memcmp(v1, v2, sizeof(uint32_t) * 7) == 0 && memcmp(h1, h2, 7) == 0);
        int same_vals = 1;
        for (int i = 0; i < 7; i++)
            same_vals &= (isnan(w1[i]) && isnan(w2[i])) || w1[i] == w2[i];
        MG_CHECK(same_vals);

        mg_mcts_free(t);
        mg_evaluator_free(&ev);
    }
    /* state tracking: the model as the world model from the start position's text */
    p.state_tracking = 1;
    rc = mg_eval_model_create(&ev, &m, g, &cfg, &p, err, sizeof err);
    MG_CHECK(rc == MG_OK);
    if (rc == MG_OK) {
        mg_mcts_config mc;
        mg_mcts_config_default(&mc);
        mc.batch_size = 4;
        mc.mode = MG_EVAL_STATE_TRACKING;
        mg_mcts *t = mg_mcts_create(g, &mc, err, sizeof err);
        _Alignas(16) unsigned char st[MG_MAX_STATE];
        char text[MG_MAX_TEXT];
        MG_CHECK(t && g->init(st, &cfg, err, sizeof err) == MG_OK);
        g->to_text(st, text, sizeof text);
        MG_CHECK(mg_mcts_set_root_text(t, text, 0, 0, err, sizeof err) == MG_OK);
        rc = mg_mcts_search(t, &ev, 12, err, sizeof err);
        if (rc != MG_OK)
            fprintf(stderr, "search: %s\n", err);
        MG_CHECK(rc == MG_OK);
        MG_CHECK(mg_mcts_check(t, err, sizeof err) == MG_OK);
        mg_mcts_free(t);
        mg_evaluator_free(&ev);
    }
    p.state_tracking = 0;
    /* refusals */
    MG_CHECK(mg_eval_model_create(&ev, &m, NULL, &cfg, &p, err, sizeof err) == MG_ERR && strstr(err, "MAV format"));
    p.scoring = 7;
    MG_CHECK(mg_eval_model_create(&ev, &m, g, &cfg, &p, err, sizeof err) == MG_ERR && strstr(err, "scoring"));
    mg_model_free(&m);
    free(tok);
}

int main(void)
{
    mg_games_init();
    test_json();
    test_half();
    test_model_files();
    int mm_rows[] = {1, 2, 3, 7, 8, 9, 10, 11};
    for (size_t i = 0; i < sizeof mm_rows / sizeof mm_rows[0]; i++) {
        test_matmul(mm_rows[i], 37, 133);
        test_matmul(mm_rows[i], 37, 85);
    }
    test_matmul(200, 400, 85);
    tcfg c = BASE;
    test_generation(&c, "GQA swiglu tied");
    c.KV = 1;
    c.geglu = 1;
    c.tied = 0;
    test_generation(&c, "MQA geglu untied");
    c.KV = 4;
    c.abs_pos = 1;
    c.line_pos = 5;
    c.newline = 40;
    test_generation(&c, "MHA abs_pos line_pos");
    test_native_evaluator(1);
    test_native_evaluator(2);
    MG_TEST_MAIN_END("test_model");
}
