/*
 * test_policy_net.c - the native chess policy network (csrc/model/policy_net.h): forward passes of
 * tiny networks whose logits are worked out by hand (the stem, the orientation of a 3x3 kernel, the
 * zero padding, the skip connection, max-pooling, both heads and the dense layer's input order),
 * the masked softmaxes, a batch equal to its positions one by one, the kernels agreeing, the
 * Winograd convolutions against a direct one in double, and the
 * file reader's refusals (each naming the offending field, tensor or shape).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../game.h"
#include "../games/chess/chess_policy.h"
#include "../model/policy_net.h"
#include "mgtest.h"

static mg_test_counts T;

_Static_assert(MG_PNET_PLANES == MG_POLICY_PLANES && MG_PNET_MOVES == MG_POLICY_MOVES, "shapes agree");

/* ---- building files ----------------------------------------------------------------------- */

#define MAXT 16
typedef struct tensor {
    char name[48];
    const char *dtype; /* "F32" (data written as float32) or another name (bytes as float32 anyway) */
    int ndim;
    long shape[4];
    float *data;
} tensor;

typedef struct netspec {
    int n;
    tensor t[MAXT];
    char config[160];
    const char *format;
} netspec;

static long numel(const tensor *t)
{
    long n = 1;
    for (int k = 0; k < t->ndim; k++)
        n *= t->shape[k];
    return n;
}

static tensor *add(netspec *s, const char *name, int ndim, long s0, long s1, long s2, long s3)
{
    tensor *t = &s->t[s->n++];
    snprintf(t->name, sizeof t->name, "%s", name);
    t->dtype = "F32";
    t->ndim = ndim;
    t->shape[0] = s0;
    t->shape[1] = s1;
    t->shape[2] = s2;
    t->shape[3] = s3;
    t->data = calloc((size_t)numel(t), sizeof(float));
    return t;
}

/* A network of `channels`, `blocks`, head "pool" or "conv", every weight zero. */
static void spec_init(netspec *s, int channels, int blocks, const char *head)
{
    memset(s, 0, sizeof *s);
    s->format = MG_PNET_FORMAT;
    snprintf(s->config, sizeof s->config, "{\"channels\": %d, \"blocks\": %d, \"head\": \"%s\"}", channels, blocks, head);
    add(s, "stem.weight", 4, channels, 41, 1, 1);
    add(s, "stem.bias", 1, channels, 0, 0, 0);
    for (int i = 0; i < blocks; i++) {
        char nm[48];
        snprintf(nm, sizeof nm, "tower.%d.a.weight", i);
        add(s, nm, 4, channels, channels, 3, 3);
        snprintf(nm, sizeof nm, "tower.%d.a.bias", i);
        add(s, nm, 1, channels, 0, 0, 0);
        snprintf(nm, sizeof nm, "tower.%d.b.weight", i);
        add(s, nm, 4, channels, channels, 3, 3);
        snprintf(nm, sizeof nm, "tower.%d.b.bias", i);
        add(s, nm, 1, channels, 0, 0, 0);
    }
    int conv = strcmp(head, "conv") == 0;
    if (conv) {
        add(s, "head_conv.weight", 4, 32, channels, 1, 1);
        add(s, "head_conv.bias", 1, 32, 0, 0, 0);
    }
    add(s, "fc.weight", 2, 1968, conv ? 2048 : 16 * channels, 0, 0);
    add(s, "fc.bias", 1, 1968, 0, 0, 0);
}

static float *get(netspec *s, const char *name)
{
    for (int i = 0; i < s->n; i++)
        if (strcmp(s->t[i].name, name) == 0)
            return s->t[i].data;
    abort();
}

static void spec_free(netspec *s)
{
    for (int i = 0; i < s->n; i++)
        free(s->t[i].data);
}

/* The safetensors bytes of s into a new buffer; *len its length. */
static uint8_t *build(const netspec *s, size_t *len)
{
    static char hdr[8192];
    size_t at = 0, off = 0;
    at += (size_t)snprintf(hdr + at, sizeof hdr - at, "{\"__metadata__\":{\"format\":\"%s\",\"format_version\":\"1\",",
                           s->format);
    at += (size_t)snprintf(hdr + at, sizeof hdr - at, "\"config\":\"");
    for (const char *c = s->config; *c; c++)
        at += (size_t)snprintf(hdr + at, sizeof hdr - at, *c == '"' ? "\\\"" : "%c", *c);
    at += (size_t)snprintf(hdr + at, sizeof hdr - at, "\"}");
    for (int i = 0; i < s->n; i++) {
        const tensor *t = &s->t[i];
        size_t nb = (size_t)numel(t) * 4;
        at += (size_t)snprintf(hdr + at, sizeof hdr - at, ",\"%s\":{\"dtype\":\"%s\",\"shape\":[", t->name, t->dtype);
        for (int k = 0; k < t->ndim; k++)
            at += (size_t)snprintf(hdr + at, sizeof hdr - at, "%s%ld", k ? "," : "", t->shape[k]);
        at += (size_t)snprintf(hdr + at, sizeof hdr - at, "],\"data_offsets\":[%zu,%zu]}", off, off + nb);
        off += nb;
    }
    at += (size_t)snprintf(hdr + at, sizeof hdr - at, "}");
    *len = 8 + at + off;
    uint8_t *buf = malloc(*len);
    for (int k = 0; k < 8; k++)
        buf[k] = (uint8_t)((uint64_t)at >> (8 * k));
    memcpy(buf + 8, hdr, at);
    uint8_t *p = buf + 8 + at;
    for (int i = 0; i < s->n; i++) {
        size_t nb = (size_t)numel(&s->t[i]) * 4;
        memcpy(p, s->t[i].data, nb);
        p += nb;
    }
    return buf;
}

static int load_spec(const netspec *s, mg_policy_net *net, int simd, char *err, size_t errlen)
{
    size_t len;
    uint8_t *buf = build(s, &len);
    int rc = mg_policy_net_load_buffer(net, buf, len, simd, err, errlen);
    free(buf);
    return rc;
}

/* logits of one position through net */
static void forward1(const mg_policy_net *net, const float *planes, float *logits)
{
    float *scratch = malloc(mg_policy_net_scratch_floats(net, 1) * sizeof(float));
    mg_policy_net_forward(net, planes, 1, logits, scratch);
    free(scratch);
}

#define CONV(w, C, co, ci, ky, kx) (w)[(((size_t)(co) * (C) + (ci)) * 3 + (ky)) * 3 + (kx)]
#define PLANE(pl, p, r, c) (pl)[((size_t)(p) * 8 + (r)) * 8 + (c)]

/* ---- hand-checked forward passes ---------------------------------------------------------- */

/* One channel, one block.  Input: a white pawn (plane 0) on row 5, column 2 (c3).  Stem: weight 1
 * on plane 0, so x = 1 there.  Block: a = the top-left tap of the 3x3 kernel only (t(r, c) =
 * x(r - 1, c - 1), so t = 1 on row 6, column 3), bias -0.25 (t = 0.75 there, 0 elsewhere after the
 * ReLU); b = the centre tap with weight 2, bias 0: x = ReLU(x + 2 t) = 1 on (5, 2) and 1.5 on (6, 3).
 * Pool: cell (2, 1) = 1, cell (3, 1) = 1.5.  fc: logit j = pooled value j for j < 16 (PyTorch's
 * flattening: channel * 16 + row * 4 + column), plus bias 0.5 on logit 100. */
static void test_pool_block(void)
{
    netspec s;
    spec_init(&s, 1, 1, "pool");
    get(&s, "stem.weight")[0] = 1.0f;
    CONV(get(&s, "tower.0.a.weight"), 1, 0, 0, 0, 0) = 1.0f;
    get(&s, "tower.0.a.bias")[0] = -0.25f;
    CONV(get(&s, "tower.0.b.weight"), 1, 0, 0, 1, 1) = 2.0f;
    float *fc = get(&s, "fc.weight");
    for (int j = 0; j < 16; j++)
        fc[j * 16 + j] = 1.0f;
    get(&s, "fc.bias")[100] = 0.5f;
    mg_policy_net net;
    char err[MG_ERRLEN];
    MG_CHECK(load_spec(&s, &net, 1, err, sizeof err) == MG_OK);
    MG_CHECK(net.channels == 1 && net.blocks == 1 && net.head == MG_PNET_HEAD_POOL && net.fc_in == 16);
    MG_CHECK(net.n_params == 41 + 1 + 2 * (9 + 1) + 16 * 1968 + 1968);
    static float planes[MG_POLICY_INPUT_SIZE], logits[MG_POLICY_MOVES];
    PLANE(planes, 0, 5, 2) = 1.0f;
    forward1(&net, planes, logits);
    int ok = 1;
    for (int j = 0; j < MG_POLICY_MOVES; j++) {
        float want = j == 9 ? 1.0f : j == 13 ? 1.5f : j == 100 ? 0.5f : 0.0f;
        if (fabsf(logits[j] - want) > 1e-6f) {
            fprintf(stderr, "pool block: logit %d = %g, expected %g\n", j, logits[j], want);
            ok = 0;
        }
    }
    MG_CHECK(ok);
    /* zero padding, no wrap-around: a pawn on row 0, column 7 is the top-left neighbour of no square
     * (a flat-index shift would make it the neighbour of row 2, column 0: logit 8) */
    memset(planes, 0, sizeof planes);
    PLANE(planes, 0, 0, 7) = 1.0f;
    forward1(&net, planes, logits);
    ok = 1;
    for (int j = 0; j < MG_POLICY_MOVES; j++)
        ok &= logits[j] == (j == 3 ? 1.0f : j == 100 ? 0.5f : 0.0f);
    MG_CHECK(ok);
    mg_policy_net_free(&net);
    spec_free(&s);
}

/* Two channels, no block: channel 0 = the white pawns, channel 1 = 3 x the colour plane (all 1 with
 * White to move) + bias 0.5; pooled input j = channel * 16 + cell: logits 0..31 the identity. */
static void test_pool_channel_order(void)
{
    netspec s;
    spec_init(&s, 2, 0, "pool");
    float *sw = get(&s, "stem.weight");
    sw[0 * 41 + 0] = 1.0f;
    sw[1 * 41 + 39] = 3.0f;
    get(&s, "stem.bias")[1] = 0.5f;
    float *fc = get(&s, "fc.weight");
    for (int j = 0; j < 32; j++)
        fc[j * 32 + j] = 1.0f;
    mg_policy_net net;
    char err[MG_ERRLEN];
    MG_CHECK(load_spec(&s, &net, 1, err, sizeof err) == MG_OK);
    static float planes[MG_POLICY_INPUT_SIZE], logits[MG_POLICY_MOVES];
    PLANE(planes, 0, 5, 2) = 1.0f;
    for (int i = 0; i < 64; i++)
        planes[39 * 64 + i] = 1.0f;
    forward1(&net, planes, logits);
    int ok = 1;
    for (int j = 0; j < 40; j++)
        ok &= logits[j] == (j == 9 ? 1.0f : j >= 16 && j < 32 ? 3.5f : 0.0f);
    MG_CHECK(ok);
    mg_policy_net_free(&net);
    spec_free(&s);
}

/* The conv head: one channel (the pawn plane), head_conv channel k = (k + 1) x it, bias -0.5 on
 * channel 1 (ReLU: 1.5); fc row 0 reads head channel 2 on square 42 (row 5, column 2): PyTorch's
 * flattening channel * 64 + square; row 1 reads channel 1 there, row 2 channel 0 on square 0. */
static void test_conv_head(void)
{
    netspec s;
    spec_init(&s, 1, 0, "conv");
    get(&s, "stem.weight")[0] = 1.0f;
    float *hw = get(&s, "head_conv.weight");
    for (int k = 0; k < 32; k++)
        hw[k] = (float)(k + 1);
    get(&s, "head_conv.bias")[1] = -0.5f;
    float *fc = get(&s, "fc.weight");
    fc[0 * 2048 + 2 * 64 + 42] = 1.0f;
    fc[1 * 2048 + 1 * 64 + 42] = 1.0f;
    fc[2 * 2048 + 0 * 64 + 0] = 1.0f;
    mg_policy_net net;
    char err[MG_ERRLEN];
    MG_CHECK(load_spec(&s, &net, 1, err, sizeof err) == MG_OK);
    MG_CHECK(net.head == MG_PNET_HEAD_CONV && net.fc_in == 2048);
    static float planes[MG_POLICY_INPUT_SIZE], logits[MG_POLICY_MOVES];
    PLANE(planes, 0, 5, 2) = 1.0f;
    forward1(&net, planes, logits);
    MG_CHECK(logits[0] == 3.0f && logits[1] == 1.5f && logits[2] == 0.0f && logits[3] == 0.0f);
    mg_policy_net_free(&net);
    spec_free(&s);
}

static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static float rnd(uint64_t *s)
{
    return (float)((double)(rng_next(s) >> 11) / 9007199254740992.0 - 0.5);
}

/* Random weights: a batch gives each position's own logits; the AVX2 and portable kernels agree. */
static void test_batch_and_kernels(void)
{
    netspec s;
    spec_init(&s, 24, 2, "pool");
    uint64_t r = 0x9E3779B97F4A7C15ull;
    for (int i = 0; i < s.n; i++)
        for (long k = 0; k < numel(&s.t[i]); k++)
            s.t[i].data[k] = rnd(&r) * 0.4f;
    mg_policy_net a, b;
    char err[MG_ERRLEN];
    MG_CHECK(load_spec(&s, &a, 1, err, sizeof err) == MG_OK);
    MG_CHECK(load_spec(&s, &b, 0, err, sizeof err) == MG_OK);
    MG_CHECK(strcmp(mg_matmul_name(b.matmul), "portable") == 0);
    enum { N = 5 };
    float *planes = malloc(sizeof(float) * N * MG_POLICY_INPUT_SIZE);
    float *batch = malloc(sizeof(float) * N * MG_POLICY_MOVES), *one = malloc(sizeof(float) * MG_POLICY_MOVES);
    float *port = malloc(sizeof(float) * N * MG_POLICY_MOVES);
    for (int i = 0; i < N * MG_POLICY_INPUT_SIZE; i++)
        planes[i] = (rng_next(&r) & 3) == 0 ? 1.0f : 0.0f;
    float *scratch = malloc(mg_policy_net_scratch_floats(&a, N) * sizeof(float));
    mg_policy_net_forward(&a, planes, N, batch, scratch);
    mg_policy_net_forward(&b, planes, N, port, scratch);
    float worst_batch = 0, worst_kernel = 0, biggest = 0;
    for (int i = 0; i < N; i++) {
        mg_policy_net_forward(&a, planes + (size_t)i * MG_POLICY_INPUT_SIZE, 1, one, scratch);
        for (int j = 0; j < MG_POLICY_MOVES; j++) {
            float x = batch[(size_t)i * MG_POLICY_MOVES + j];
            worst_batch = fmaxf(worst_batch, fabsf(one[j] - x));
            worst_kernel = fmaxf(worst_kernel, fabsf(port[(size_t)i * MG_POLICY_MOVES + j] - x));
            biggest = fmaxf(biggest, fabsf(x));
        }
    }
    MG_CHECK(worst_batch == 0.0f);              /* an element depends only on its own row (matmul.h) */
    MG_CHECK(worst_kernel <= 1e-5f * biggest);  /* FMA rounding only */
    MG_CHECK(biggest > 0.1f);
    free(scratch);
    free(planes);
    free(batch);
    free(one);
    free(port);
    mg_policy_net_free(&a);
    mg_policy_net_free(&b);
    spec_free(&s);
}

/* A direct double-precision forward pass of a "pool" network (the definition of policy_net.h),
 * to check the Winograd convolutions against: logits[1968] of one position. */
static void reference_forward(netspec *s, int C, int B, const float *planes, double *logits)
{
    double *x = malloc(sizeof(double) * 64 * (size_t)C), *t = malloc(sizeof(double) * 64 * (size_t)C);
    const float *sw = get(s, "stem.weight"), *sb = get(s, "stem.bias");
    for (int sq = 0; sq < 64; sq++)
        for (int co = 0; co < C; co++) {
            double v = sb[co];
            for (int p = 0; p < 41; p++)
                v += (double)sw[co * 41 + p] * planes[p * 64 + sq];
            x[sq * C + co] = v > 0 ? v : 0;
        }
    for (int i = 0; i < B; i++)
        for (int half = 0; half < 2; half++) {
            char wn[48], bn[48];
            snprintf(wn, sizeof wn, "tower.%d.%c.weight", i, half ? 'b' : 'a');
            snprintf(bn, sizeof bn, "tower.%d.%c.bias", i, half ? 'b' : 'a');
            const float *w = get(s, wn), *bias = get(s, bn);
            const double *src = half ? t : x;
            double *dst = half ? x : t;
            double *out = malloc(sizeof(double) * 64 * (size_t)C);
            for (int r = 0; r < 8; r++)
                for (int c = 0; c < 8; c++)
                    for (int co = 0; co < C; co++) {
                        double v = bias[co];
                        for (int ky = 0; ky < 3; ky++)
                            for (int kx = 0; kx < 3; kx++) {
                                int rr = r + ky - 1, cc = c + kx - 1;
                                if (rr < 0 || rr > 7 || cc < 0 || cc > 7)
                                    continue;
                                for (int ci = 0; ci < C; ci++)
                                    v += (double)CONV(w, C, co, ci, ky, kx) * src[(rr * 8 + cc) * C + ci];
                            }
                        out[(r * 8 + c) * C + co] = v;
                    }
            for (int k = 0; k < 64 * C; k++) {
                double v = out[k] + (half ? x[k] : 0.0);
                dst[k] = v > 0 ? v : 0;
            }
            free(out);
        }
    const float *fw = get(s, "fc.weight"), *fb = get(s, "fc.bias");
    for (int j = 0; j < MG_POLICY_MOVES; j++) {
        double v = fb[j];
        for (int co = 0; co < C; co++)
            for (int cell = 0; cell < 16; cell++) {
                int r = cell / 4 * 2, c = cell % 4 * 2;
                double m = fmax(fmax(x[(r * 8 + c) * C + co], x[(r * 8 + c + 1) * C + co]),
                                fmax(x[((r + 1) * 8 + c) * C + co], x[((r + 1) * 8 + c + 1) * C + co]));
                v += (double)fw[(size_t)j * 16 * (size_t)C + (size_t)co * 16 + (size_t)cell] * m;
            }
        logits[j] = v;
    }
    free(x);
    free(t);
}

/* The Winograd convolutions against a direct convolution in double, with a channel count that is
 * not a multiple of the vector width (the transforms' tails) and large enough that a batch runs in
 * several chunks; both kernels. */
static void test_against_direct_convolution(void)
{
    enum { C = 140, B = 1, N = 3 };
    netspec s;
    spec_init(&s, C, B, "pool");
    uint64_t r = 0x243F6A8885A308D3ull;
    for (int i = 0; i < s.n; i++) {
        float scale = s.t[i].ndim == 4 && s.t[i].shape[2] == 3 ? 0.08f : 0.4f;
        for (long k = 0; k < numel(&s.t[i]); k++)
            s.t[i].data[k] = rnd(&r) * scale;
    }
    float *planes = malloc(sizeof(float) * N * MG_POLICY_INPUT_SIZE);
    for (int i = 0; i < N * MG_POLICY_INPUT_SIZE; i++)
        planes[i] = (rng_next(&r) & 3) == 0 ? 1.0f : 0.0f;
    double *want = malloc(sizeof(double) * N * MG_POLICY_MOVES);
    double biggest = 0;
    for (int i = 0; i < N; i++)
        reference_forward(&s, C, B, planes + (size_t)i * MG_POLICY_INPUT_SIZE, want + (size_t)i * MG_POLICY_MOVES);
    for (int i = 0; i < N * MG_POLICY_MOVES; i++)
        biggest = fmax(biggest, fabs(want[i]));
    MG_CHECK(biggest > 0.1);
    float *got = malloc(sizeof(float) * N * MG_POLICY_MOVES);
    for (int simd = 0; simd < 2; simd++) {
        mg_policy_net net;
        char err[MG_ERRLEN];
        MG_CHECK(load_spec(&s, &net, simd, err, sizeof err) == MG_OK);
        float *scratch = malloc(mg_policy_net_scratch_floats(&net, N) * sizeof(float));
        mg_policy_net_forward(&net, planes, N, got, scratch);
        double worst = 0;
        for (int i = 0; i < N * MG_POLICY_MOVES; i++)
            worst = fmax(worst, fabs(got[i] - want[i]));
        if (worst > 1e-5 * biggest)
            fprintf(stderr, "direct convolution: worst |difference| %g, largest logit %g (%s)\n", worst, biggest,
                    mg_matmul_name(net.matmul));
        MG_CHECK(worst <= 1e-5 * biggest); /* float32 rounding only */
        free(scratch);
        mg_policy_net_free(&net);
    }
    free(got);
    free(want);
    free(planes);
    spec_free(&s);
}

static void test_softmax(void)
{
    static float logits[MG_POLICY_MOVES], probs[MG_POLICY_MOVES];
    static uint8_t legal[MG_POLICY_MOVES];
    logits[3] = 1.0f;
    logits[7] = 1.0f + logf(3.0f);
    logits[9] = 50.0f; /* illegal: must not count */
    legal[3] = legal[7] = 1;
    mg_policy_masked_softmax(logits, legal, probs);
    MG_CHECK(fabsf(probs[3] - 0.25f) < 1e-6f && fabsf(probs[7] - 0.75f) < 1e-6f && probs[9] == 0.0f && probs[0] == 0.0f);
    int16_t idx[2] = {7, 3};
    float p2[2];
    mg_policy_softmax_at(logits, idx, 2, p2);
    MG_CHECK(fabsf(p2[0] - 0.75f) < 1e-6f && fabsf(p2[1] - 0.25f) < 1e-6f);
    /* sampling: index 3 takes u in [0, 0.25), index 7 [0.25, 1); the illegal 9 never */
    MG_CHECK(mg_policy_sample(logits, legal, 0.0) == 3 && mg_policy_sample(logits, legal, 0.24) == 3);
    MG_CHECK(mg_policy_sample(logits, legal, 0.26) == 7 && mg_policy_sample(logits, legal, 0.999999) == 7);
    memset(legal, 0, sizeof legal);
    mg_policy_masked_softmax(logits, legal, probs);
    MG_CHECK(probs[3] == 0.0f && probs[9] == 0.0f); /* no legal move: all zero */
    MG_CHECK(mg_policy_sample(logits, legal, 0.5) == -1);
}

/* ---- refusals ----------------------------------------------------------------------------- */

static int refuses(const netspec *s, const char *want)
{
    mg_policy_net net;
    char err[MG_ERRLEN] = "";
    int rc = load_spec(s, &net, 1, err, sizeof err);
    if (rc == MG_OK) {
        mg_policy_net_free(&net);
        fprintf(stderr, "loaded, expected an error with '%s'\n", want);
        return 0;
    }
    if (!strstr(err, want)) {
        fprintf(stderr, "error '%s' lacks '%s'\n", err, want);
        return 0;
    }
    return 1;
}

static void test_refusals(void)
{
    netspec s;
    spec_init(&s, 4, 1, "pool");
    s.t[2].shape[3] = 2; /* tower.0.a.weight [4, 4, 3, 2] */
    MG_CHECK(refuses(&s, "'tower.0.a.weight' has shape (4, 4, 3, 2), config says (4, 4, 3, 3)"));
    spec_free(&s);

    spec_init(&s, 4, 1, "pool");
    snprintf(s.config, sizeof s.config, "{\"channels\": 4, \"blocks\": 2, \"head\": \"pool\"}");
    MG_CHECK(refuses(&s, "'tower.1.a.weight' is missing"));
    snprintf(s.config, sizeof s.config, "{\"channels\": 4, \"blocks\": 0, \"head\": \"pool\"}");
    MG_CHECK(refuses(&s, "unexpected tensor 'tower.0."));
    snprintf(s.config, sizeof s.config, "{\"channels\": 4, \"blocks\": 1, \"head\": \"attention\"}");
    MG_CHECK(refuses(&s, "'head' must be \"pool\" or \"conv\", got 'attention'"));
    snprintf(s.config, sizeof s.config, "{\"channels\": 0, \"blocks\": 1, \"head\": \"pool\"}");
    MG_CHECK(refuses(&s, "'channels' must be an int in [1, 4096], got '0'"));
    snprintf(s.config, sizeof s.config, "{\"channels\": 4, \"blocks\": 1, \"head\": \"pool\", \"depth\": 3}");
    MG_CHECK(refuses(&s, "unknown policy network configuration field 'depth'"));
    snprintf(s.config, sizeof s.config, "{\"channels\": 4, \"head\": \"pool\"}");
    MG_CHECK(refuses(&s, "lacks 'blocks'"));
    snprintf(s.config, sizeof s.config, "[4, 1]");
    MG_CHECK(refuses(&s, "must be a JSON object"));
    snprintf(s.config, sizeof s.config, "{\"channels\": 4, \"blocks\": 1, \"head\": \"pool\"}");
    s.format = "mavgame-mav";
    MG_CHECK(refuses(&s, "not a mavgame policy network (metadata format 'mavgame-mav'"));
    s.format = MG_PNET_FORMAT;
    s.t[0].dtype = "I32";
    MG_CHECK(refuses(&s, "'stem.weight' has dtype I32"));
    s.t[0].dtype = "F32";
    /* a non-finite weight is refused, naming the tensor, the element and the value */
    char want[128];
    float keep = s.t[1].data[2];
    s.t[1].data[2] = NAN;
    snprintf(want, sizeof want, "policy network weight '%s' holds nan at element 2", s.t[1].name);
    MG_CHECK(refuses(&s, want));
    s.t[1].data[2] = INFINITY;
    snprintf(want, sizeof want, "policy network weight '%s' holds inf at element 2", s.t[1].name);
    MG_CHECK(refuses(&s, want));
    s.t[1].data[2] = keep;
    size_t len;
    uint8_t *buf = build(&s, &len);
    mg_policy_net net;
    char err[MG_ERRLEN] = "";
    MG_CHECK(mg_policy_net_load_buffer(&net, buf, len - 1, 1, err, sizeof err) == MG_ERR && err[0]);
    MG_CHECK(mg_policy_net_load_buffer(&net, buf, 5, 1, err, sizeof err) == MG_ERR && err[0]);
    MG_CHECK(mg_policy_net_load_buffer(&net, buf, len, 1, err, sizeof err) == MG_OK);
    mg_policy_net_free(&net);
    free(buf);
    MG_CHECK(mg_policy_net_load_file(&net, "/nonexistent/policy.safetensors", 1, err, sizeof err) == MG_ERR &&
             strstr(err, "/nonexistent/policy.safetensors"));
    spec_free(&s);
}

int main(void)
{
    test_pool_block();
    test_pool_channel_order();
    test_conv_head();
    test_batch_and_kernels();
    test_against_direct_convolution();
    test_softmax();
    test_refusals();
    MG_TEST_MAIN_END("test_policy_net");
}
