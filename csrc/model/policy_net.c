/*
 * policy_net.c - loading and running the chess policy network of policy_net.h.
 */
#include "policy_net.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../game.h"
#include "json.h"
#include "safetensors.h"

#if defined(__x86_64__) || defined(__i386__)
#define MG_PNET_X86 1
#include <immintrin.h>
#endif

/* ---- configuration ------------------------------------------------------------------------ */

/* Parse the config JSON ({"channels": C, "blocks": B, "head": "pool" | "conv"}) into net. */
static int parse_config(const char *json, mg_policy_net *net, char *err, size_t errlen)
{
    mg_json_tok toks[16];
    if (mg_json_parse_object(json, strlen(json), toks, (int)(sizeof toks / sizeof toks[0]),
                             "policy network configuration", err, errlen) < 0)
        return MG_ERR;
    int have = 0, k = 1;
    for (int e = 0; e < toks[0].size; e++) {
        const mg_json_tok *key = &toks[k], *v = &toks[k + 1];
        char name[32];
        if (mg_json_str_copy(json, key, name, sizeof name) < 0) {
            snprintf(err, errlen, "unknown policy network configuration field (a key of %zu bytes)",
                     key->end - key->start);
            return MG_ERR;
        }
        if (strcmp(name, "channels") == 0 || strcmp(name, "blocks") == 0) {
            int64_t x;
            int is_c = name[0] == 'c';
            int64_t hi = is_c ? MG_PNET_MAX_CHANNELS : MG_PNET_MAX_BLOCKS, lo = is_c ? 1 : 0;
            if (mg_json_int(json, v, &x) < 0 || x < lo || x > hi) {
                snprintf(err, errlen, "policy network config '%s' must be an int in [%lld, %lld], got '%.*s'", name,
                         (long long)lo, (long long)hi, (int)(v->end - v->start > 40 ? 40 : v->end - v->start),
                         json + v->start);
                return MG_ERR;
            }
            *(is_c ? &net->channels : &net->blocks) = (int)x;
            have |= is_c ? 1 : 2;
        } else if (strcmp(name, "head") == 0) {
            if (mg_json_str_eq(json, v, "pool"))
                net->head = MG_PNET_HEAD_POOL;
            else if (mg_json_str_eq(json, v, "conv"))
                net->head = MG_PNET_HEAD_CONV;
            else {
                snprintf(err, errlen, "policy network config 'head' must be \"pool\" or \"conv\", got '%.*s'",
                         (int)(v->end - v->start > 40 ? 40 : v->end - v->start), json + v->start);
                return MG_ERR;
            }
            have |= 4;
        } else {
            snprintf(err, errlen, "unknown policy network configuration field '%s'", name);
            return MG_ERR;
        }
        k = v->next;
    }
    if (have != 7) {
        snprintf(err, errlen, "policy network configuration lacks '%s'",
                 !(have & 1) ? "channels" : !(have & 2) ? "blocks" : "head");
        return MG_ERR;
    }
    net->fc_in = net->head == MG_PNET_HEAD_POOL ? 16 * net->channels : 64 * MG_PNET_CONV_HEAD;
    return MG_OK;
}

/* ---- weights ------------------------------------------------------------------------------ */

void mg_policy_net_free(mg_policy_net *net)
{
    free(net->arena);
    free(net->tower);
    memset(net, 0, sizeof *net);
}

static const mg_st_format PNET_FORMAT = {MG_PNET_FORMAT, MG_PNET_FORMAT_VERSION, "policy network",
                                         "policy network weights"};

enum { K_VEC, K_STEM, K_CONV3, K_HEAD, K_FC };

/* Convert tensor t (checked) into dst: packed for the matmul kernel, or copied (a bias). */
static void convert(void *vnet, const mg_st_want *w, const mg_st_tensor *t, float *dst)
{
    const mg_policy_net *net = vnet;
    int C = net->channels;
    switch (w->kind) {
    case K_VEC:
        for (int64_t i = 0; i < t->numel; i++)
            dst[i] = mg_st_float(t, (size_t)i);
        break;
    case K_STEM: /* [C][41][1][1] -> W[ci][co] */
        for (int co = 0; co < C; co++)
            for (int ci = 0; ci < MG_PNET_PLANES; ci++)
                dst[mg_pack_at(MG_PNET_PLANES, ci, co)] = mg_st_float(t, (size_t)co * MG_PNET_PLANES + (size_t)ci);
        break;
    case K_CONV3: { /* [co][ci][ky][kx] -> the 16 Winograd matrices U_xi = (G g G^T)[xi] [ci][co] */
        static const double G[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
        size_t per = mg_matmul_packed_floats(C, C);
        for (int co = 0; co < C; co++)
            for (int ci = 0; ci < C; ci++) {
                double g[3][3], gg[4][3];
                for (int q = 0; q < 9; q++)
                    g[q / 3][q % 3] = mg_st_float(t, ((size_t)co * (size_t)C + (size_t)ci) * 9 + (size_t)q);
                for (int i = 0; i < 4; i++)
                    for (int k = 0; k < 3; k++)
                        gg[i][k] = G[i][0] * g[0][k] + G[i][1] * g[1][k] + G[i][2] * g[2][k];
                for (int i = 0; i < 4; i++)
                    for (int j = 0; j < 4; j++)
                        dst[(size_t)(i * 4 + j) * per + mg_pack_at(C, ci, co)] =
                            (float)(gg[i][0] * G[j][0] + gg[i][1] * G[j][1] + gg[i][2] * G[j][2]);
            }
        break;
    }
    case K_HEAD: /* [32][C][1][1] -> W[ci][co] */
        for (int co = 0; co < MG_PNET_CONV_HEAD; co++)
            for (int ci = 0; ci < C; ci++)
                dst[mg_pack_at(C, ci, co)] = mg_st_float(t, (size_t)co * (size_t)C + (size_t)ci);
        break;
    case K_FC: { /* [1968][fc_in], PyTorch's input order (channel, square) -> ours (square, channel) */
        int per = net->head == MG_PNET_HEAD_POOL ? 16 : 64, ch = net->fc_in / per;
        for (int j = 0; j < MG_PNET_MOVES; j++)
            for (int c = 0; c < ch; c++)
                for (int s = 0; s < per; s++)
                    dst[mg_pack_at(net->fc_in, s * ch + c, j)] =
                        mg_st_float(t, (size_t)j * (size_t)net->fc_in + (size_t)c * (size_t)per + (size_t)s);
        break;
    }
    }
}

/* The tensor `name` of the given shape (ndim <= 4), converted as `kind` into the arena floats it takes. */
static void want(const mg_policy_net *net, mg_st_want *w, const char *name, int kind, int ndim, int64_t s0,
                 int64_t s1, int64_t s2, int64_t s3, const float **dst)
{
    const int64_t shape[4] = {s0, s1, s2, s3};
    int C = net->channels;
    size_t floats = kind == K_STEM    ? mg_matmul_packed_floats(MG_PNET_PLANES, C)
                    : kind == K_CONV3 ? MG_PNET_WINO * mg_matmul_packed_floats(C, C)
                    : kind == K_HEAD  ? mg_matmul_packed_floats(C, MG_PNET_CONV_HEAD)
                    : kind == K_FC    ? mg_matmul_packed_floats(net->fc_in, MG_PNET_MOVES)
                                      : (size_t)s0;
    mg_st_want_set(w, name, kind, ndim, shape, floats, dst);
}

typedef struct load_ctx {
    mg_policy_net *net;
    int allow_simd;
} load_ctx;

static int load(void *vctx, const uint8_t *buf, size_t len, int mapped, char *err, size_t errlen)
{
    load_ctx *ctx = vctx;
    mg_policy_net *net = ctx->net;
    memset(net, 0, sizeof *net);
    mg_st_file f;
    mg_st_want *w = NULL;
    int rc = MG_ERR;
    if (mg_st_open(buf, len, &PNET_FORMAT, &f, err, errlen) != MG_OK)
        return MG_ERR;
    const char *cj = mg_st_meta(&f, "config");
    if (!cj) {
        snprintf(err, errlen, "policy network file has no 'config' metadata");
        goto done;
    }
    if (parse_config(cj, net, err, errlen) != MG_OK)
        goto done;
    int C = net->channels, B = net->blocks, nw = 4 + 4 * B + 2;
    net->tower = calloc((size_t)(B ? B : 1), sizeof *net->tower);
    w = calloc((size_t)nw, sizeof *w);
    if (!net->tower || !w) {
        snprintf(err, errlen, "out of memory");
        goto done;
    }
    int n = 0;
    want(net, &w[n++], "stem.weight", K_STEM, 4, C, MG_PNET_PLANES, 1, 1, &net->stem_w);
    want(net, &w[n++], "stem.bias", K_VEC, 1, C, 0, 0, 0, &net->stem_b);
    for (int i = 0; i < B; i++) {
        char nm[MG_ST_WANT_NAME];
        snprintf(nm, sizeof nm, "tower.%d.a.weight", i);
        want(net, &w[n++], nm, K_CONV3, 4, C, C, 3, 3, &net->tower[i].a_w);
        snprintf(nm, sizeof nm, "tower.%d.a.bias", i);
        want(net, &w[n++], nm, K_VEC, 1, C, 0, 0, 0, &net->tower[i].a_b);
        snprintf(nm, sizeof nm, "tower.%d.b.weight", i);
        want(net, &w[n++], nm, K_CONV3, 4, C, C, 3, 3, &net->tower[i].b_w);
        snprintf(nm, sizeof nm, "tower.%d.b.bias", i);
        want(net, &w[n++], nm, K_VEC, 1, C, 0, 0, 0, &net->tower[i].b_b);
    }
    if (net->head == MG_PNET_HEAD_CONV) {
        want(net, &w[n++], "head_conv.weight", K_HEAD, 4, MG_PNET_CONV_HEAD, C, 1, 1, &net->head_w);
        want(net, &w[n++], "head_conv.bias", K_VEC, 1, MG_PNET_CONV_HEAD, 0, 0, 0, &net->head_b);
    }
    want(net, &w[n++], "fc.weight", K_FC, 2, MG_PNET_MOVES, net->fc_in, 0, 0, &net->fc_w);
    want(net, &w[n++], "fc.bias", K_VEC, 1, MG_PNET_MOVES, 0, 0, 0, &net->fc_b);
    mg_st_weights got;
    if (mg_st_load_weights(&f, w, n, 0, mapped, &PNET_FORMAT, convert, net, &got, err, errlen) != MG_OK)
        goto done;
    net->arena = got.arena;
    net->n_params = got.n_params;
    net->file_dtype = got.dtype;
    net->matmul = mg_matmul_select(ctx->allow_simd);
    rc = MG_OK;
done:
    free(w);
    mg_st_free(&f);
    if (rc != MG_OK)
        mg_policy_net_free(net);
    return rc;
}

int mg_policy_net_load_buffer(mg_policy_net *net, const uint8_t *buf, size_t len, int allow_simd, char *err,
                              size_t errlen)
{
    load_ctx ctx = {net, allow_simd};
    return load(&ctx, buf, len, 0, err, errlen);
}

int mg_policy_net_load_file(mg_policy_net *net, const char *path, int allow_simd, char *err, size_t errlen)
{
    memset(net, 0, sizeof *net);
    load_ctx ctx = {net, allow_simd};
    return mg_st_with_file(path, load, &ctx, err, errlen);
}

/* ---- forward pass ------------------------------------------------------------------------- */

/* Tiles per chunk of a convolution: the Winograd inputs and products of a chunk (2 x 16 x tiles
 * x C floats) stay within about 512 KB, so they do not leave the core's L2 cache between the
 * transforms and the products; at least one position (16 tiles), a whole number of positions. */
static int wino_chunk_tiles(int C, int n)
{
    int pos = (512 * 1024 / (int)sizeof(float)) / (2 * MG_PNET_WINO * 16 * C);
    pos = pos < 1 ? 1 : pos > n ? n : pos;
    return 16 * pos;
}

/* Per position: the transposed planes [64][41], two activations [64][C], the dense layer's input
 * [fc_in]; the Winograd inputs and products of one chunk, [16][chunk tiles][C] each; and one zero
 * vector [C] (the squares off the board). */
size_t mg_policy_net_scratch_floats(const mg_policy_net *net, int max_n)
{
    size_t C = (size_t)net->channels, n = (size_t)(max_n > 0 ? max_n : 1);
    size_t tiles = (size_t)wino_chunk_tiles(net->channels, (int)n);
    return n * (64 * (MG_PNET_PLANES + 2 * C) + (size_t)net->fc_in) + 2 * MG_PNET_WINO * tiles * C + C;
}

/* y[rows][c] += bias, then ReLU if relu. */
static void bias_act(float *y, const float *bias, size_t rows, int c, int relu)
{
    for (size_t r = 0; r < rows; r++) {
        float *yr = y + r * (size_t)c;
        for (int j = 0; j < c; j++) {
            float v = yr[j] + bias[j];
            yr[j] = relu && v < 0.0f ? 0.0f : v;
        }
    }
}

/* Channels per step of the transforms: a fixed width the compiler turns into vector code. */
#define WINO_LANES 8

/* The input transform B^T d B of one tile for channels [c, c + w) (w <= WINO_LANES): d[16] point
 * at the 4 x 4 input squares (row-major; the zero vector off the board), v[16] at the outputs. */
static inline void wino_in(float *const *v, const float *const *d, int c, int w)
{
    float s[16][WINO_LANES], u[16][WINO_LANES];
    for (int q = 0; q < 16; q++)
        for (int l = 0; l < w; l++)
            s[q][l] = d[q][c + l];
    for (int j = 0; j < 4; j++) /* B^T d: rows */
        for (int l = 0; l < w; l++) {
            float d0 = s[j][l], d1 = s[4 + j][l], d2 = s[8 + j][l], d3 = s[12 + j][l];
            u[j][l] = d0 - d2;
            u[4 + j][l] = d1 + d2;
            u[8 + j][l] = d2 - d1;
            u[12 + j][l] = d1 - d3;
        }
    for (int i = 0; i < 4; i++) /* (B^T d) B: columns */
        for (int l = 0; l < w; l++) {
            float t0 = u[4 * i][l], t1 = u[4 * i + 1][l], t2 = u[4 * i + 2][l], t3 = u[4 * i + 3][l];
            v[4 * i][c + l] = t0 - t2;
            v[4 * i + 1][c + l] = t1 + t2;
            v[4 * i + 2][c + l] = t2 - t1;
            v[4 * i + 3][c + l] = t1 - t3;
        }
}

/* The output transform A^T m A of one tile for channels [c, c + w), plus the bias, plus (if
 * residual: the skip connection) the 2 x 2 output squares' old values, then ReLU: m[16] the
 * products, y[4] the 2 x 2 output squares (row-major). */
static inline void wino_out(float *const *y, const float *const *m, const float *bias, int residual, int c, int w)
{
    float s[16][WINO_LANES], u[8][WINO_LANES];
    for (int q = 0; q < 16; q++)
        for (int l = 0; l < w; l++)
            s[q][l] = m[q][c + l];
    for (int j = 0; j < 4; j++) /* A^T m: rows */
        for (int l = 0; l < w; l++) {
            float m1 = s[4 + j][l], m2 = s[8 + j][l];
            u[j][l] = s[j][l] + m1 + m2;
            u[4 + j][l] = m1 - m2 - s[12 + j][l];
        }
    for (int i = 0; i < 2; i++) /* (A^T m) A: columns */
        for (int l = 0; l < w; l++) {
            float t1 = u[4 * i + 1][l], t2 = u[4 * i + 2][l], b = bias[c + l];
            float o0 = (u[4 * i][l] + t1 + t2) + b, o1 = (t1 - t2 - u[4 * i + 3][l]) + b;
            if (residual) {
                o0 += y[2 * i][c + l];
                o1 += y[2 * i + 1][c + l];
            }
            y[2 * i][c + l] = o0 > 0.0f ? o0 : 0.0f;
            y[2 * i + 1][c + l] = o1 > 0.0f ? o1 : 0.0f;
        }
}

#ifdef MG_PNET_X86
/* wino_in and wino_out for channels [0, 8 * (C / 8)) in 8-float AVX vectors (the same operations
 * in the same order, so the same results); they return the first channel left to the portable
 * code.  Used where the AVX2/FMA matrix kernel was chosen (the CPU has AVX2). */
__attribute__((target("avx2"))) static int wino_in_avx2(float *const *v, const float *const *d, int C)
{
    int c = 0;
    for (; c + 8 <= C; c += 8) {
        __m256 u[16];
        for (int j = 0; j < 4; j++) {
            __m256 d0 = _mm256_loadu_ps(d[j] + c), d1 = _mm256_loadu_ps(d[4 + j] + c);
            __m256 d2 = _mm256_loadu_ps(d[8 + j] + c), d3 = _mm256_loadu_ps(d[12 + j] + c);
            u[j] = _mm256_sub_ps(d0, d2);
            u[4 + j] = _mm256_add_ps(d1, d2);
            u[8 + j] = _mm256_sub_ps(d2, d1);
            u[12 + j] = _mm256_sub_ps(d1, d3);
        }
        for (int i = 0; i < 4; i++) {
            __m256 t0 = u[4 * i], t1 = u[4 * i + 1], t2 = u[4 * i + 2], t3 = u[4 * i + 3];
            _mm256_storeu_ps(v[4 * i] + c, _mm256_sub_ps(t0, t2));
            _mm256_storeu_ps(v[4 * i + 1] + c, _mm256_add_ps(t1, t2));
            _mm256_storeu_ps(v[4 * i + 2] + c, _mm256_sub_ps(t2, t1));
            _mm256_storeu_ps(v[4 * i + 3] + c, _mm256_sub_ps(t1, t3));
        }
    }
    return c;
}

__attribute__((target("avx2"))) static int wino_out_avx2(float *const *y, const float *const *m, const float *bias,
                                                         int residual, int C)
{
    int c = 0;
    const __m256 zero = _mm256_setzero_ps();
    for (; c + 8 <= C; c += 8) {
        __m256 u[8];
        for (int j = 0; j < 4; j++) {
            __m256 m1 = _mm256_loadu_ps(m[4 + j] + c), m2 = _mm256_loadu_ps(m[8 + j] + c);
            u[j] = _mm256_add_ps(_mm256_add_ps(_mm256_loadu_ps(m[j] + c), m1), m2);
            u[4 + j] = _mm256_sub_ps(_mm256_sub_ps(m1, m2), _mm256_loadu_ps(m[12 + j] + c));
        }
        __m256 b = _mm256_loadu_ps(bias + c);
        for (int i = 0; i < 2; i++) {
            __m256 t1 = u[4 * i + 1], t2 = u[4 * i + 2];
            __m256 o0 = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(u[4 * i], t1), t2), b);
            __m256 o1 = _mm256_add_ps(_mm256_sub_ps(_mm256_sub_ps(t1, t2), u[4 * i + 3]), b);
            if (residual) {
                o0 = _mm256_add_ps(o0, _mm256_loadu_ps(y[2 * i] + c));
                o1 = _mm256_add_ps(o1, _mm256_loadu_ps(y[2 * i + 1] + c));
            }
            _mm256_storeu_ps(y[2 * i] + c, _mm256_max_ps(o0, zero));
            _mm256_storeu_ps(y[2 * i + 1] + c, _mm256_max_ps(o1, zero));
        }
    }
    return c;
}
#endif

/* y = ReLU(conv3x3(x) + bias (+ y if residual)) over n positions of [64][C] activations, by
 * Winograd's F(2 x 2, 3 x 3): each 2 x 2 block of output squares (a tile; 16 per board) is
 * A^T [U (.) B^T d B] A of its 4 x 4 input neighbourhood d (zeros off the board); the products
 * with the transformed weights U are 16 matrix products [tiles][C] x [C][C], run over chunks of
 * wino_chunk_tiles tiles (vin, prod: [16][chunk][C]). */
static void conv3x3(const mg_policy_net *net, float *y, const float *x, const float *u, const float *bias, int n,
                    int residual, float *vin, float *prod, const float *zero)
{
    const int C = net->channels, chunk = wino_chunk_tiles(C, n);
    const size_t per = mg_matmul_packed_floats(C, C);
    mg_matmul_fn mm = net->matmul ? net->matmul : mg_matmul_portable;
    const int simd = mm != mg_matmul_portable; /* the AVX2 kernel was chosen: the CPU has AVX2 */
    (void)simd;
    for (int first = 0; first < n * 16; first += chunk) {
        const int rows = n * 16 - first < chunk ? n * 16 - first : chunk;
        const size_t plane = (size_t)rows * (size_t)C;
        for (int k = 0; k < rows; k++) {
            const int b = (first + k) / 16, tile = (first + k) % 16;
            const int r0 = (tile / 4) * 2 - 1, c0 = (tile % 4) * 2 - 1;
            const float *d[16];
            float *v[16];
            for (int q = 0; q < 16; q++) {
                int r = r0 + q / 4, c = c0 + q % 4;
                d[q] = r < 0 || r > 7 || c < 0 || c > 7 ? zero : x + ((size_t)b * 64 + (size_t)(r * 8 + c)) * (size_t)C;
                v[q] = vin + (size_t)q * plane + (size_t)k * (size_t)C;
            }
            int c = 0;
#ifdef MG_PNET_X86
            if (simd)
                c = wino_in_avx2(v, d, C);
#endif
            for (; c + WINO_LANES <= C; c += WINO_LANES)
                wino_in(v, d, c, WINO_LANES);
            if (c < C)
                wino_in(v, d, c, C - c);
        }
        for (int q = 0; q < MG_PNET_WINO; q++)
            mm(prod + (size_t)q * plane, vin + (size_t)q * plane, u + (size_t)q * per, rows, C, C, 0, C, 0);
        for (int k = 0; k < rows; k++) {
            const int b = (first + k) / 16, tile = (first + k) % 16;
            const int r0 = (tile / 4) * 2, c0 = (tile % 4) * 2;
            const float *m[16];
            float *o[4];
            for (int q = 0; q < 16; q++)
                m[q] = prod + (size_t)q * plane + (size_t)k * (size_t)C;
            for (int q = 0; q < 4; q++)
                o[q] = y + ((size_t)b * 64 + (size_t)((r0 + q / 2) * 8 + c0 + q % 2)) * (size_t)C;
            int c = 0;
#ifdef MG_PNET_X86
            if (simd)
                c = wino_out_avx2(o, m, bias, residual, C);
#endif
            for (; c + WINO_LANES <= C; c += WINO_LANES)
                wino_out(o, m, bias, residual, c, WINO_LANES);
            if (c < C)
                wino_out(o, m, bias, residual, c, C - c);
        }
    }
}

void mg_policy_net_forward(const mg_policy_net *net, const float *planes, int n, float *logits, float *scratch)
{
    if (n <= 0)
        return;
    const int C = net->channels, rows = n * 64;
    float *in = scratch, *x = in + (size_t)rows * MG_PNET_PLANES, *t = x + (size_t)rows * (size_t)C;
    const size_t wino = (size_t)MG_PNET_WINO * (size_t)wino_chunk_tiles(C, n) * (size_t)C;
    float *hv = t + (size_t)rows * (size_t)C, *vin = hv + (size_t)n * (size_t)net->fc_in, *prod = vin + wino;
    float *zero = prod + wino;
    mg_matmul_fn mm = net->matmul ? net->matmul : mg_matmul_portable;
    memset(zero, 0, (size_t)C * sizeof(float));
    for (int b = 0; b < n; b++)
        for (int p = 0; p < MG_PNET_PLANES; p++)
            for (int s = 0; s < 64; s++)
                in[((size_t)b * 64 + (size_t)s) * MG_PNET_PLANES + (size_t)p] = planes[((size_t)b * MG_PNET_PLANES + (size_t)p) * 64 + (size_t)s];
    mm(x, in, net->stem_w, rows, MG_PNET_PLANES, C, 0, C, 0);
    bias_act(x, net->stem_b, (size_t)rows, C, 1);
    for (int i = 0; i < net->blocks; i++) {
        const mg_pnet_block *L = &net->tower[i];
        conv3x3(net, t, x, L->a_w, L->a_b, n, 0, vin, prod, zero);
        conv3x3(net, x, t, L->b_w, L->b_b, n, 1, vin, prod, zero); /* x = ReLU(x + conv_b(t)) */
    }
    if (net->head == MG_PNET_HEAD_POOL) {
        for (int b = 0; b < n; b++)
            for (int pr = 0; pr < 4; pr++)
                for (int pc = 0; pc < 4; pc++) {
                    float *dst = hv + (size_t)b * (size_t)net->fc_in + (size_t)(pr * 4 + pc) * (size_t)C;
                    const float *s0 = x + ((size_t)b * 64 + (size_t)(2 * pr * 8 + 2 * pc)) * (size_t)C;
                    const float *s1 = s0 + C, *s2 = s0 + 8 * (size_t)C, *s3 = s2 + C;
                    for (int c = 0; c < C; c++) {
                        float m = s0[c];
                        m = s1[c] > m ? s1[c] : m;
                        m = s2[c] > m ? s2[c] : m;
                        dst[c] = s3[c] > m ? s3[c] : m;
                    }
                }
    } else {
        mm(hv, x, net->head_w, rows, C, MG_PNET_CONV_HEAD, 0, MG_PNET_CONV_HEAD, 0);
        bias_act(hv, net->head_b, (size_t)rows, MG_PNET_CONV_HEAD, 1);
    }
    mm(logits, hv, net->fc_w, n, net->fc_in, MG_PNET_MOVES, 0, MG_PNET_MOVES, 0);
    bias_act(logits, net->fc_b, (size_t)n, MG_PNET_MOVES, 0);
}

void mg_policy_masked_softmax(const float *logits, const uint8_t *legal, float *probs)
{
    float mx = -INFINITY;
    for (int i = 0; i < MG_PNET_MOVES; i++)
        if (legal[i] && logits[i] > mx)
            mx = logits[i];
    double sum = 0.0;
    for (int i = 0; i < MG_PNET_MOVES; i++) {
        float e = legal[i] ? expf(logits[i] - mx) : 0.0f;
        probs[i] = e;
        sum += e;
    }
    float inv = sum > 0.0 ? (float)(1.0 / sum) : 0.0f;
    for (int i = 0; i < MG_PNET_MOVES; i++)
        probs[i] *= inv;
}

void mg_policy_softmax_at(const float *logits, const int16_t *idx, int k, float *probs)
{
    float mx = -INFINITY;
    for (int j = 0; j < k; j++)
        if (logits[idx[j]] > mx)
            mx = logits[idx[j]];
    double sum = 0.0;
    for (int j = 0; j < k; j++) {
        probs[j] = expf(logits[idx[j]] - mx);
        sum += probs[j];
    }
    float inv = sum > 0.0 ? (float)(1.0 / sum) : 0.0f;
    for (int j = 0; j < k; j++)
        probs[j] *= inv;
}

int mg_policy_sample(const float *logits, const uint8_t *legal, double u)
{
    float mx = -INFINITY;
    int last = -1;
    for (int i = 0; i < MG_PNET_MOVES; i++)
        if (legal[i]) {
            last = i;
            if (logits[i] > mx)
                mx = logits[i];
        }
    if (last < 0)
        return -1;
    double sum = 0.0;
    for (int i = 0; i < MG_PNET_MOVES; i++)
        if (legal[i])
            sum += exp((double)logits[i] - (double)mx);
    double target = u * sum, acc = 0.0;
    for (int i = 0; i < MG_PNET_MOVES; i++)
        if (legal[i]) {
            acc += exp((double)logits[i] - (double)mx);
            if (acc > target)
                return i;
        }
    return last;
}
