/*
 * driver.h - the shared part of the kernel files' drivers (llm.c dev/cuda style): each kernels/X.cu
 * compiled with -DMGK_MAIN has a main() that runs every variant on random, ragged and edge shapes,
 * compares it with the C reference (the CPU engine's own function) and, on a GPU only, times it.
 *
 *   nvcc -O3 -DMGK_MAIN -Ikernels -Icsrc kernels/X.cu <its C reference sources> -o X && ./X
 *   g++ -x c++ -std=c++17 -pthread -DMGK_MAIN ... (the same source on the CPU harness: check only)
 * tests/test_kernels.py builds and runs every driver on the CPU harness.
 */
#ifndef MGK_DRIVER_H
#define MGK_DRIVER_H

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace drv {

struct Rng {
    uint64_t s;
    explicit Rng(uint64_t seed) : s(seed * 0x9E3779B97F4A7C15ull + 1) {}
    uint32_t next()
    {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        return (uint32_t)(s >> 11);
    }
    int below(int n) { return (int)(next() % (uint32_t)n); }
    float uniform(float lo, float hi) { return lo + (hi - lo) * (float)(next() & 0xffffff) / 16777216.0f; }
};

inline std::vector<float> randv(Rng &r, size_t n, float lo = -1.0f, float hi = 1.0f)
{
    std::vector<float> v(n);
    for (auto &x : v)
        x = r.uniform(lo, hi);
    return v;
}

inline void cuda_ok(cudaError_t e, const char *what)
{
    if (e != cudaSuccess) {
        std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
        std::exit(2);
    }
}

template <class T> T *to_dev(const std::vector<T> &h)
{
    T *d = nullptr;
    cuda_ok(cudaMalloc(&d, h.size() * sizeof(T) + 1), "cudaMalloc");
    cuda_ok(cudaMemcpy(d, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice), "cudaMemcpy");
    return d;
}
template <class T> T *dev_alloc(size_t n)
{
    T *d = nullptr;
    cuda_ok(cudaMalloc(&d, n * sizeof(T) + 1), "cudaMalloc");
    return d;
}
template <class T> std::vector<T> to_host(const T *d, size_t n)
{
    std::vector<T> h(n);
    cuda_ok(cudaMemcpy(h.data(), d, n * sizeof(T), cudaMemcpyDeviceToHost), "cudaMemcpy");
    return h;
}

/* |got - ref| <= atol + rtol * |ref| everywhere (a NaN fails); prints the first mismatch */
inline bool close(const char *what, const float *got, const float *ref, size_t n, float atol, float rtol)
{
    double worst = 0.0;
    for (size_t i = 0; i < n; i++) {
        double e = std::fabs((double)got[i] - ref[i]);
        if (!(e <= atol + rtol * std::fabs(ref[i]))) {
            std::printf("MISMATCH %s at %zu: got %.9g, reference %.9g\n", what, i, got[i], ref[i]);
            return false;
        }
        if (e > worst)
            worst = e;
    }
    std::printf("ok %s (%zu values, max abs error %.3g)\n", what, n, worst);
    return true;
}

inline uint64_t seed_arg(int argc, char **argv)
{
    for (int i = 1; i + 1 < argc; i++)
        if (std::string(argv[i]) == "--seed")
            return std::strtoull(argv[i + 1], nullptr, 10);
    return 1;
}

/* --bench: add the benchmark shapes (a 1-2B-parameter model's) to the test shapes; GPU only, they
 * would take minutes on the harness */
inline bool bench_arg(int argc, char **argv)
{
    for (int i = 1; i < argc; i++)
        if (std::string(argv[i]) == "--bench")
            return true;
    return false;
}

/* Time fn() on a GPU (median-free: mean over reps after a warm-up) in microseconds; on the CPU
 * harness nothing is timed (its timings say nothing about a GPU) and -1 is returned. */
template <class F> double time_us(F fn, int reps = 50)
{
#if MGK_ON_GPU
    fn();
    cudaEvent_t a, b;
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    cudaEventRecord(a);
    for (int i = 0; i < reps; i++)
        fn();
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    float ms = 0;
    cudaEventElapsedTime(&ms, a, b);
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    return 1000.0 * ms / reps;
#else
    (void)fn;
    (void)reps;
    return -1.0;
#endif
}

inline void report_time(const char *what, double us)
{
    if (us < 0)
        std::printf("time %s: not measured (CPU harness, no GPU)\n", what);
    else
        std::printf("time %s: %.2f us\n", what, us);
}

/* the driver's exit: 0 if every check passed */
inline int finish(int fails)
{
    std::printf(fails ? "FAILED: %d check(s)\n" : "ALL CHECKS PASSED\n", fails);
    return fails ? 1 : 0;
}

} // namespace drv
#endif
