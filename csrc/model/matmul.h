/*
 * matmul.h - the engine's matrix product: y[n][out] (+)= x[n][in] @ W over the output columns
 * [c0, c1) (so threads can split the columns; c0 a multiple of MG_PANEL).
 *
 * W (in x out, the transpose of a PyTorch [out, in] weight) is stored packed in panels of
 * MG_PANEL = 16 columns: panel p holds columns 16p .. 16p+15 as a contiguous [in][16] block (the
 * last panel zero-padded), so the kernel streams each panel from memory in order.
 * mg_matmul_packed_floats gives the size, mg_pack_at the position of W[k][j].
 *
 * Three kernels, chosen at run time (mg_matmul_select): AVX-512 (512-bit FMAs, one panel row
 * per register; used when the CPU reports avx512f, avx512vl, AVX2 and FMA), AVX2+FMA (used when
 * the CPU reports both features), both compiled with target attributes, and portable C.  Each
 * output element is one sequential sum over k in all three (the SIMD kernels fuse multiply and
 * add, in the same order, so the AVX-512 and AVX2 kernels give bit-identical results), so an
 * element's value depends only on its row of x and column of W: never on n, on the other rows
 * of the batch, on how the columns are split, or on the thread count.
 */
#ifndef MG_MODEL_MATMUL_H
#define MG_MODEL_MATMUL_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MG_PANEL 16

static inline size_t mg_matmul_packed_floats(int in, int out)
{
    return (size_t)((out + MG_PANEL - 1) / MG_PANEL) * MG_PANEL * (size_t)in;
}

/* Index of W[k][j] (input k, output column j) in the packed layout. */
static inline size_t mg_pack_at(int in, int k, int j)
{
    return (size_t)(j / MG_PANEL) * (size_t)in * MG_PANEL + (size_t)k * MG_PANEL + (size_t)(j % MG_PANEL);
}

/* accumulate: y += x @ W instead of y = x @ W.  Rows of x have stride `in`, rows of y `out`. */
typedef void (*mg_matmul_fn)(float *y, const float *x, const float *w, int n, int in, int out, int c0, int c1,
                             int accumulate);

/* If allow_simd: the AVX-512 kernel where the CPU has it, else the AVX2/FMA one where the CPU has
 * AVX2 and FMA; else (or without allow_simd) the portable one. */
mg_matmul_fn mg_matmul_select(int allow_simd);

/* The kernel named `name`: "avx512", "avx2" (or "avx2-fma"), "portable", or "auto" / "" / NULL
 * (mg_matmul_select(1)).  0 and *fn set; -1 for an unknown name; -2 when this CPU cannot run
 * that kernel (*fn untouched). */
int mg_matmul_find(const char *name, mg_matmul_fn *fn);

/* Name of a kernel ("avx512", "avx2-fma", "portable"). */
const char *mg_matmul_name(mg_matmul_fn fn);

void mg_matmul_portable(float *y, const float *x, const float *w, int n, int in, int out, int c0, int c1,
                        int accumulate);

#ifdef __cplusplus
}
#endif
#endif
