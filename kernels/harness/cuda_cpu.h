/*
 * cuda_cpu.h - a CPU execution harness for the CUDA subset mavgame's kernels use, so that a
 * kernel source (kernels/X.cu) compiles as C++ with g++/clang++ and runs without a GPU.
 *
 * Needs C++20 (std::atomic::wait).  A launch runs the blocks of the grid one by one, in a shuffled order; the threads of a block are
 * real, concurrent OS threads (one std::thread per CUDA thread, reused across the blocks of a
 * launch).  Provided: threadIdx / blockIdx / blockDim / gridDim, shared memory (MGK_SHARED,
 * MGK_SHARED_DYN: one arena per block), __syncthreads (a real barrier of the block's threads),
 * __syncwarp, the warp shuffles (__shfl_sync, _up, _down, _xor) and votes (__ballot_sync,
 * __any_sync, __all_sync) over warps of 32 consecutive threads, atomics (atomicAdd, atomicMax,
 * atomicMin, atomicExch, atomicCAS), and the host calls the drivers use (cudaMalloc, cudaMemcpy,
 * cudaMemset, cudaFree, cudaDeviceSynchronize, cudaGetLastError).
 *
 * Stricter than a GPU where it can be:
 *  - shared memory and cudaMalloc'd memory start filled with 0xff bytes (a NaN as a float, -1 as
 *    an int), so a read of something not yet written shows up as a NaN or a garbage index;
 *  - after every barrier (and at the start of a block) each thread yields a random number of
 *    times, so the order of the threads between barriers changes from run to run and from
 *    barrier to barrier: a missing __syncthreads becomes a wrong result (kernels/harness/
 *    selftest.cu proves it), and with -fsanitize=thread a data race is reported;
 *  - a __syncthreads that some thread of the block never reaches (it returned) aborts with a
 *    message instead of hanging; so do a shared-memory overflow, a block of more than 1024
 *    threads, and a warp operation whose mask is not the warp's active lanes;
 *  - a shuffle that reads an inactive lane (past the end of a partial last warp) returns poison;
 *  - a lane waiting at a barrier yields now and then before it checks for returned lanes, so that
 *    the others overtake it (a barrier that completed while it slept is not a divergence).
 * The seed of the shuffling comes from MGK_SEED (environment), default 1.
 */
#ifndef MGK_CUDA_CPU_H
#define MGK_CUDA_CPU_H

#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <atomic>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)

struct uint3 {
    unsigned x, y, z;
};
struct dim3 {
    unsigned x, y, z;
    dim3(unsigned x_ = 1, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};

namespace mgk {

[[noreturn]] inline void fail(const char *what)
{
    std::fprintf(stderr, "mgk harness: %s\n", what);
    std::fflush(stderr);
    std::abort();
}

/* a yield of the calling thread every few calls (a per-thread counter: no shared state) */
inline void yield_sometimes()
{
    static thread_local unsigned k = 0;
    if (++k % 3u == 0)
        std::this_thread::yield();
}

/* A reusable barrier of n threads; `exited` counts the threads of the block that returned, so a
 * barrier nobody else can complete is reported instead of hanging. */
struct Barrier {
    std::atomic<int> count{0}, exited{0};
    std::atomic<unsigned> gen{0};
    int n = 0;
    /* seq_cst increments then loads: of a waiter and an exiting thread racing, one sees the other */
    void wait(const char *what)
    {
        unsigned g = gen.load();
        int c = count.fetch_add(1) + 1;
        if (c == n) {
            count.store(0);
            gen.fetch_add(1);
            gen.notify_all();
            return;
        }
        yield_sometimes(); /* widens the window below, where a lane that arrived first is overtaken */
        /* a lane counted in `exited` has returned; but if the barrier completed meanwhile (gen moved on),
         * the exits are lanes that passed it with this one and finished the kernel: not a divergence */
        int e = exited.load();
        if (e > 0 && c + e == n && gen.load() == g)
            fail(what);
        while (gen.load() == g)
            gen.wait(g);
    }
    void exit_thread(const char *what)
    {
        int e = exited.fetch_add(1) + 1, c = count.load();
        if (c > 0 && c + e == n)
            fail(what);
    }
};

constexpr size_t kStaticShared = 48 * 1024;

struct Warp {
    Barrier bar;
    uint64_t slot[2][32]; /* double-buffered: one barrier per exchange (see exchange) */
    int size = 32;
};

struct Launch {
    dim3 grid, block;
    uint3 bid{0, 0, 0};
    int nthreads = 0;
    std::vector<unsigned char> arena, dyn;
    size_t dyn_bytes = 0;
    Barrier sync;                 /* __syncthreads */
    std::vector<Warp> warps;
};

struct ThreadCtx {
    Launch *L = nullptr;
    uint3 tid{0, 0, 0};
    int linear = 0;
    unsigned xparity = 0; /* which warp slot buffer this thread's next exchange uses */
    size_t shared_off = 0;
    std::minstd_rand rng;
};
inline thread_local ThreadCtx tls;

inline void jitter()
{
    unsigned r = tls.rng();
    if (r % 4u == 0) /* a quarter of the threads step back once or twice */
        for (unsigned i = 0; i <= (r >> 8) % 2u; i++)
            std::this_thread::yield();
}

inline unsigned long seed_from_env()
{
    const char *s = std::getenv("MGK_SEED");
    return s ? std::strtoul(s, nullptr, 10) : 1ul;
}

template <class T> T *shared_alloc(size_t count)
{
    size_t a = alignof(T) < 16 ? 16 : alignof(T);
    size_t off = (tls.shared_off + a - 1) / a * a;
    if (off + count * sizeof(T) > kStaticShared)
        fail("static shared memory over 48 KiB");
    tls.shared_off = off + count * sizeof(T);
    return reinterpret_cast<T *>(tls.L->arena.data() + off);
}

template <class T> T *shared_dyn()
{
    return reinterpret_cast<T *>(tls.L->dyn.data());
}

/* Run kernel body f() on grid x block threads (see the header comment). */
template <class F> void launch(dim3 grid, dim3 block, size_t dyn_bytes, F f)
{
    Launch L;
    L.grid = grid;
    L.block = block;
    long nt = (long)block.x * block.y * block.z;
    if (nt < 1 || nt > 1024)
        fail("a block must have 1..1024 threads");
    if (dyn_bytes > kStaticShared)
        fail("dynamic shared memory over 48 KiB (needs cudaFuncSetAttribute on a GPU)");
    L.nthreads = (int)nt;
    L.arena.resize(kStaticShared);
    L.dyn.resize(dyn_bytes ? dyn_bytes : 1);
    L.dyn_bytes = dyn_bytes;
    L.sync.n = L.nthreads;
    L.warps = std::vector<Warp>((size_t)(L.nthreads + 31) / 32);
    for (size_t w = 0; w < L.warps.size(); w++) {
        int sz = L.nthreads - (int)w * 32;
        L.warps[w].size = sz < 32 ? sz : 32;
        L.warps[w].bar.n = L.warps[w].size;
    }
    long nb = (long)grid.x * grid.y * grid.z;
    std::vector<long> order((size_t)nb);
    for (long i = 0; i < nb; i++)
        order[(size_t)i] = i;
    unsigned long seed = seed_from_env();
    std::minstd_rand g((unsigned)(seed * 2654435761ul + 12345));
    std::shuffle(order.begin(), order.end(), g);
    /* the main thread hands each block to the workers between two barriers of nthreads + 1 */
    Barrier start, done;
    start.n = done.n = L.nthreads + 1;
    bool stop = false;
    std::vector<std::thread> workers;
    workers.reserve((size_t)L.nthreads);
    for (int t = 0; t < L.nthreads; t++)
        workers.emplace_back([&, t] {
            tls.L = &L;
            tls.linear = t;
            tls.tid = uint3{(unsigned)(t % (int)block.x), (unsigned)(t / (int)block.x % (int)block.y),
                            (unsigned)(t / ((int)block.x * (int)block.y))};
            tls.rng.seed((unsigned)(seed * 1000003ul + (unsigned long)t * 7919ul + 1));
            for (;;) {
                start.wait("start");
                if (stop)
                    return;
                tls.shared_off = 0;
                tls.xparity = 0;
                jitter();
                f();
                L.sync.exit_thread("__syncthreads not reached by every thread of the block (some returned)");
                L.warps[(size_t)t / 32].bar.exit_thread("a warp operation not reached by every lane (some returned)");
                done.wait("done");
            }
        });
    for (long b : order) {
        std::fill(L.arena.begin(), L.arena.end(), (unsigned char)0xff);
        std::fill(L.dyn.begin(), L.dyn.end(), (unsigned char)0xff);
        L.bid = uint3{(unsigned)(b % grid.x), (unsigned)(b / grid.x % grid.y), (unsigned)(b / ((long)grid.x * grid.y))};
        L.sync.exited.store(0);
        for (auto &w : L.warps)
            w.bar.exited.store(0);
        start.wait("start");
        done.wait("done");
    }
    stop = true;
    start.wait("start");
    for (auto &w : workers)
        w.join();
}

/* ---- warp operations: 32 consecutive threads (by linear index) form a warp ---- */
inline Warp &my_warp() { return tls.L->warps[(size_t)tls.linear / 32]; }
inline int lane_id() { return tls.linear % 32; }

inline void check_mask(unsigned mask, const Warp &w)
{
    unsigned full = w.size == 32 ? 0xffffffffu : ((1u << w.size) - 1u);
    if (mask != full)
        fail("warp operation with a mask other than the warp's active lanes");
}

/* Each lane publishes its value, waits for the warp, reads its source lane.  Consecutive exchanges
 * alternate between two slot buffers: a lane can only write buffer b again two exchanges later,
 * after a barrier that every lane reaches only once it has read this exchange's values. */
template <class T> T exchange(unsigned mask, T v, int src)
{
    static_assert(sizeof(T) <= 8, "shuffle of a type over 8 bytes");
    Warp &w = my_warp();
    check_mask(mask, w);
    uint64_t bits = 0;
    std::memcpy(&bits, &v, sizeof v);
    uint64_t *slot = w.slot[tls.xparity];
    tls.xparity ^= 1u;
    slot[lane_id()] = bits;
    w.bar.wait("__shfl: a lane of the warp returned");
    uint64_t r = src >= 0 && src < w.size ? slot[src] : ~(uint64_t)0; /* inactive lane: poison */
    T out;
    std::memcpy(&out, &r, sizeof out);
    return out;
}

} // namespace mgk

#define threadIdx (mgk::tls.tid)
#define blockIdx (mgk::tls.L->bid)
#define blockDim (mgk::tls.L->block)
#define gridDim (mgk::tls.L->grid)
#define warpSize 32

inline void __syncthreads()
{
    mgk::tls.L->sync.wait("__syncthreads not reached by every thread of the block (some returned)");
    mgk::jitter();
}
inline void __syncwarp(unsigned mask = 0xffffffffu)
{
    mgk::Warp &w = mgk::my_warp();
    mgk::check_mask(mask, w);
    w.bar.wait("__syncwarp: a lane of the warp returned");
    mgk::jitter();
}

template <class T> T __shfl_sync(unsigned mask, T v, int src, int width = 32)
{
    int lane = mgk::lane_id();
    return mgk::exchange(mask, v, (lane & ~(width - 1)) + (src % width));
}
template <class T> T __shfl_down_sync(unsigned mask, T v, unsigned delta, int width = 32)
{
    int lane = mgk::lane_id(), seg = lane & ~(width - 1);
    int src = lane + (int)delta;
    return mgk::exchange(mask, v, src < seg + width ? src : lane);
}
template <class T> T __shfl_up_sync(unsigned mask, T v, unsigned delta, int width = 32)
{
    int lane = mgk::lane_id(), seg = lane & ~(width - 1);
    int src = lane - (int)delta;
    return mgk::exchange(mask, v, src >= seg ? src : lane);
}
template <class T> T __shfl_xor_sync(unsigned mask, T v, int lane_mask, int width = 32)
{
    int lane = mgk::lane_id(), seg = lane & ~(width - 1);
    int src = lane ^ lane_mask;
    return mgk::exchange(mask, v, src < seg + width ? src : lane);
}
inline unsigned __ballot_sync(unsigned mask, int pred)
{
    unsigned r = 0;
    mgk::Warp &w = mgk::my_warp();
    mgk::check_mask(mask, w);
    uint64_t *slot = w.slot[mgk::tls.xparity];
    mgk::tls.xparity ^= 1u;
    slot[mgk::lane_id()] = pred != 0;
    w.bar.wait("__ballot_sync: a lane of the warp returned");
    for (int i = 0; i < w.size; i++)
        r |= (unsigned)slot[i] << i;
    return r;
}
inline int __any_sync(unsigned mask, int pred) { return __ballot_sync(mask, pred) != 0; }
inline int __all_sync(unsigned mask, int pred) { return __ballot_sync(mask, pred) == mask; }

/* ---- atomics (sequentially consistent; CUDA's are relaxed, which is weaker) ---- */
inline float atomicAdd(float *p, float v)
{
    unsigned *u = reinterpret_cast<unsigned *>(p);
    unsigned old = __atomic_load_n(u, __ATOMIC_SEQ_CST), nw;
    do {
        float f;
        std::memcpy(&f, &old, 4);
        f += v;
        std::memcpy(&nw, &f, 4);
    } while (!__atomic_compare_exchange_n(u, &old, nw, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST));
    float r;
    std::memcpy(&r, &old, 4);
    return r;
}
inline int atomicAdd(int *p, int v) { return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST); }
inline unsigned atomicAdd(unsigned *p, unsigned v) { return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST); }
inline int atomicExch(int *p, int v) { return __atomic_exchange_n(p, v, __ATOMIC_SEQ_CST); }
inline int atomicCAS(int *p, int cmp, int v)
{
    __atomic_compare_exchange_n(p, &cmp, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
    return cmp;
}
inline unsigned atomicCAS(unsigned *p, unsigned cmp, unsigned v)
{
    __atomic_compare_exchange_n(p, &cmp, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
    return cmp;
}
inline int atomicMax(int *p, int v)
{
    int old = __atomic_load_n(p, __ATOMIC_SEQ_CST);
    while (old < v && !__atomic_compare_exchange_n(p, &old, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
    }
    return old;
}
inline int atomicMin(int *p, int v)
{
    int old = __atomic_load_n(p, __ATOMIC_SEQ_CST);
    while (old > v && !__atomic_compare_exchange_n(p, &old, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
    }
    return old;
}

/* ---- device math the kernels use ---- */
inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }
inline float __expf(float x) { return std::exp(x); }
inline float __fdividef(float a, float b) { return a / b; }
using std::max;
using std::min;

/* ---- host API of the drivers ---- */
typedef int cudaError_t;
enum { cudaSuccess = 0 };
enum cudaMemcpyKind { cudaMemcpyHostToDevice, cudaMemcpyDeviceToHost, cudaMemcpyDeviceToDevice };
inline cudaError_t cudaMalloc(void **p, size_t n)
{
    *p = std::malloc(n ? n : 1);
    if (!*p)
        return 2;
    std::memset(*p, 0xff, n); /* uninitialised device memory reads as NaN */
    return cudaSuccess;
}
template <class T> cudaError_t cudaMalloc(T **p, size_t n) { return cudaMalloc(reinterpret_cast<void **>(p), n); }
inline cudaError_t cudaMemcpy(void *d, const void *s, size_t n, cudaMemcpyKind) { std::memcpy(d, s, n); return cudaSuccess; }
inline cudaError_t cudaMemset(void *d, int v, size_t n) { std::memset(d, v, n); return cudaSuccess; }
inline cudaError_t cudaFree(void *p) { std::free(p); return cudaSuccess; }
inline cudaError_t cudaDeviceSynchronize() { return cudaSuccess; }
inline cudaError_t cudaGetLastError() { return cudaSuccess; }
enum { cudaErrorNoDevice = 100 };
enum cudaDeviceAttr { cudaDevAttrMultiProcessorCount = 16 };
/* the harness's "GPU" has one multiprocessor: where the engine chooses a kernel by the blocks a launch
 * makes (mgk_matmul_pick), the forward pass's checks on the harness take the kernel meant for large
 * launches, whose small-launch alternative has its own driver */
inline cudaError_t cudaDeviceGetAttribute(int *v, cudaDeviceAttr, int)
{
    *v = 1;
    return cudaSuccess;
}
inline cudaError_t cudaGetDeviceCount(int *n)
{
    *n = 0;
    return cudaErrorNoDevice;
}
inline const char *cudaGetErrorString(cudaError_t e)
{
    return e == cudaErrorNoDevice ? "CPU harness: no CUDA-capable device" : e ? "harness allocation failed" : "no error";
}

#endif
