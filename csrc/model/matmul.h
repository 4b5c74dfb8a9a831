/*
 * matmul.h - the engine's matrix product: y[n][out] (+)= x[n][in] @ w[in][out], over the output
 * columns [c0, c1) (so threads can split the columns).
 *
 * Two kernels, chosen at run time (mg_matmul_select): AVX2+FMA (compiled with a target
 * attribute, used when the CPU reports both features) and portable C.  Each output element is
 * one sequential sum over k in both (the AVX2 kernel fuses multiply and add), so an element's
 * value depends only on its row of x and column of w: never on n, on the other rows of the
 * batch, on how the columns are split, or on the thread count.
 */
#ifndef MG_MODEL_MATMUL_H
#define MG_MODEL_MATMUL_H

#ifdef __cplusplus
extern "C" {
#endif

/* accumulate: y += x @ w instead of y = x @ w.  Rows of x have stride `in`, rows of y and w
 * have stride `out`. */
typedef void (*mg_matmul_fn)(float *y, const float *x, const float *w, int n, int in, int out, int c0, int c1,
                             int accumulate);

/* The AVX2/FMA kernel if allow_simd and the CPU has AVX2 and FMA, else the portable one. */
mg_matmul_fn mg_matmul_select(int allow_simd);

/* Name of a kernel ("avx2-fma", "portable"). */
const char *mg_matmul_name(mg_matmul_fn fn);

void mg_matmul_portable(float *y, const float *x, const float *w, int n, int in, int out, int c0, int c1,
                        int accumulate);

#ifdef __cplusplus
}
#endif
#endif
