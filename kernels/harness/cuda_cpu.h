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
 * atomicMin, atomicExch, atomicCAS), bfloat16 (__nv_bfloat16 and its conversions), the tensor-core
 * warp matrix API of <mma.h> that matmul.cu uses (nvcuda::wmma: m16n16k16 bf16 fragments, float
 * accumulators), and the host calls the drivers use (cudaMalloc, cudaMemcpy, cudaMemset, cudaFree,
 * cudaDeviceSynchronize, cudaGetLastError, cudaDeviceGetAttribute, cudaFuncGetAttributes), and stream capture
 * into CUDA graphs on the per-thread default stream (cudaStreamBeginCapture, cudaStreamEndCapture,
 * cudaStreamIsCapturing, cudaMemcpyAsync, cudaGraphInstantiate, cudaGraphLaunch, cudaGraphExecDestroy,
 * cudaGraphDestroy; see "stream capture" below).
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
 *    the others overtake it (a barrier that completed while it slept is not a divergence);
 *  - a wmma operation (load_matrix_sync, mma_sync, store_matrix_sync) is a warp collective: every
 *    lane of a whole warp of 32 must call it with the same arguments and fragments, or it aborts
 *    (a lane that returned, a partial warp, lanes passing different pointers or holding different
 *    fragments); a misaligned pointer or an ldm that is not a multiple of 16 bytes aborts too; and
 *    one wmma call in 32 pauses the whole warp for a few milliseconds, so that the warps of a block
 *    drift apart between barriers (a missing __syncthreads around a shared tile shows).
 *  - a kernel launched while its stream is capturing does not run: its grid, block and arguments are recorded,
 *    each argument converted to its parameter's type and copied at the launch (as CUDA copies a launch's
 *    arguments into the graph node), and replayed by every cudaGraphLaunch of the instantiated graph; so an
 *    argument that changed between capture and replay without a new capture shows up as a wrong result.
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
#include <chrono>
#include <mutex>
#include <random>
#include <functional>
#include <thread>
#include <tuple>
#include <type_traits>
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
    unsigned char *shared_base = nullptr; /* arena's first 256-byte aligned byte (wmma needs 32-byte alignment) */
    size_t dyn_bytes = 0;
    Barrier sync;                 /* __syncthreads */
    std::vector<Warp> warps;
    unsigned long seed = 1;       /* MGK_SEED */
};

struct ThreadCtx {
    Launch *L = nullptr;
    uint3 tid{0, 0, 0};
    int linear = 0;
    unsigned xparity = 0; /* which warp slot buffer this thread's next exchange uses */
    unsigned wmma_calls = 0; /* wmma collectives of this thread in this block (alike in every lane of a warp) */
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

/* `align`: the array's alignment in bytes (at least 16, as the GPU's __shared__ arrays of the kernels) */
template <class T> T *shared_alloc(size_t count, size_t align = 16)
{
    size_t a = alignof(T) < align ? align : alignof(T);
    size_t off = (tls.shared_off + a - 1) / a * a;
    if (off + count * sizeof(T) > kStaticShared)
        fail("static shared memory over 48 KiB");
    tls.shared_off = off + count * sizeof(T);
    return reinterpret_cast<T *>(tls.L->shared_base + off);
}

template <class T> T *shared_dyn()
{
    return reinterpret_cast<T *>(tls.L->dyn.data());
}

/* ---- stream capture (CUDA graphs) ----
 * One stream can be captured: the per-thread default stream (cudaStreamPerThread), which every kernel launch
 * (MGK_LAUNCH) goes to; being per host thread, so is its capture state.  While it captures, a launch records a
 * node instead of running (see launch), cudaMemcpyAsync on it records a copy node (of the bytes at the source
 * address at replay time, as CUDA's memcpy node), and what CUDA refuses during a capture in
 * cudaStreamCaptureModeGlobal / ThreadLocal from the capturing thread is refused and invalidates the capture
 * (cudaStreamEndCapture then fails, as on a GPU): synchronous cudaMemcpy / cudaMemset (legacy stream: an
 * implicit synchronisation with the capturing stream), cudaMalloc, cudaFree, cudaDeviceSynchronize,
 * cudaStreamSynchronize of the capturing stream, cudaMemcpyAsync on the legacy stream, a nested capture. */
struct GraphNode {
    dim3 grid, block;
    size_t dyn_bytes = 0;
    std::function<void()> body; /* a kernel: its body with the arguments copied at capture, run per thread */
    std::function<void()> copy; /* a memcpy node */
};
struct Capture {
    bool active = false, invalid = false;
    std::vector<GraphNode> nodes;
};
inline thread_local Capture capture;
inline thread_local int last_error = 0; /* cudaGetLastError's (0: cudaSuccess) */
enum { kErrInvalidValue = 1, kErrIllegalState = 401, kErrCaptureUnsupported = 900, kErrCaptureInvalidated = 901,
       kErrCaptureImplicit = 906 };
/* a call this thread may not make while it captures: the capture is invalidated, err returned (else 0) */
inline int refuse_in_capture(int err)
{
    if (!capture.active)
        return 0;
    capture.invalid = true;
    last_error = err;
    return err;
}

inline void check_config(dim3 block, size_t dyn_bytes)
{
    long nt = (long)block.x * block.y * block.z;
    if (nt < 1 || nt > 1024)
        fail("a block must have 1..1024 threads");
    if (dyn_bytes > kStaticShared)
        fail("dynamic shared memory over 48 KiB (needs cudaFuncSetAttribute on a GPU)");
}

template <class F> void run_grid(dim3 grid, dim3 block, size_t dyn_bytes, F f);

/* A launch on the per-thread default stream: run now, or recorded into the capture (see the header comment) */
template <class F> void launch(dim3 grid, dim3 block, size_t dyn_bytes, F f)
{
    check_config(block, dyn_bytes);
    if (!capture.active) {
        run_grid(grid, block, dyn_bytes, f);
        return;
    }
    if (capture.invalid) { /* a launch into an invalidated capture fails */
        last_error = kErrCaptureInvalidated;
        return;
    }
    GraphNode n;
    n.grid = grid;
    n.block = block;
    n.dyn_bytes = dyn_bytes;
    n.body = f;
    capture.nodes.push_back(std::move(n));
}

/* MGK_LAUNCH: kernel k's arguments converted to its parameters' types and copied here, at the launch, as
 * CUDA does (a recorded launch replays these values) */
template <class... P, class... A> void launch_kernel(dim3 grid, dim3 block, size_t dyn_bytes, void (*k)(P...), A &&...a)
{
    static_assert(sizeof...(P) == sizeof...(A), "a kernel launched with the wrong number of arguments");
    std::tuple<std::decay_t<P>...> args(std::forward<A>(a)...);
    launch(grid, block, dyn_bytes, [k, args] { std::apply(k, args); });
}

/* Run kernel body f() on grid x block threads (see the header comment). */
template <class F> void run_grid(dim3 grid, dim3 block, size_t dyn_bytes, F f)
{
    Launch L;
    L.grid = grid;
    L.block = block;
    long nt = (long)block.x * block.y * block.z;
    L.nthreads = (int)nt;
    L.arena.resize(kStaticShared + 256);
    L.shared_base = L.arena.data() + (256 - reinterpret_cast<uintptr_t>(L.arena.data()) % 256) % 256;
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
    L.seed = seed;
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
                tls.wmma_calls = 0;
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

/* ---- bfloat16 (the cuda_bf16.h subset the kernels use) ---- */
/* The upper 16 bits of a float32; only through the functions below, as on a GPU (the field is the harness's) */
struct __nv_bfloat16 {
    unsigned short bits;
};
inline float __bfloat162float(__nv_bfloat16 b)
{
    uint32_t u = (uint32_t)b.bits << 16;
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
}
inline __nv_bfloat16 __ushort_as_bfloat16(unsigned short u) { return __nv_bfloat16{u}; }
inline unsigned short __bfloat16_as_ushort(__nv_bfloat16 b) { return b.bits; }
/* round to nearest, ties to even (a NaN stays a NaN, quiet) */
inline __nv_bfloat16 __float2bfloat16_rn(float f)
{
    uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return __nv_bfloat16{(unsigned short)((u >> 16) | 0x40u)};
    return __nv_bfloat16{(unsigned short)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16)};
}
/* round toward zero (truncation) */
inline __nv_bfloat16 __float2bfloat16_rz(float f)
{
    uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return __nv_bfloat16{(unsigned short)((u >> 16) | 0x40u)};
    return __nv_bfloat16{(unsigned short)(u >> 16)};
}

/* ---- tensor cores: the nvcuda::wmma subset matmul.cu uses (<mma.h>, sm_80+) ----
 * On a GPU a fragment is spread over the 32 lanes of a warp (8 of a 16x16 tile's elements per lane, in an
 * unspecified order) and every wmma call is a warp collective.  Here every lane holds the whole tile and
 * computes all of it; each load, mma and store first synchronises the warp and checks that all 32 lanes
 * called the same operation with the same arguments (pointer, ldm, layout) and, for mma_sync and
 * store_matrix_sync, the same fragments: what the GPU requires and cannot check.  A lane that returned
 * instead aborts (as for a shuffle).  mma_sync adds each element's 16 products (exact: bf16 x bf16 fits a
 * float) and c in double and rounds once to float, a model of the tensor cores' fused accumulation (the
 * hardware's own rounding of that sum is not reproduced: the drivers' tolerances cover the order of
 * additions).  store_matrix_sync is written by lane 0 alone, after a random pause: the other lanes see it
 * only after a __syncwarp / __syncthreads, as on a GPU where each lane stores its own elements.
 * Fragments have no x[] / num_elements (their per-lane mapping is unspecified; the kernels do not index
 * them).  Only m16n16k16, bf16 matrix_a / matrix_b and float accumulators. */
namespace nvcuda {
namespace wmma {
struct matrix_a {};
struct matrix_b {};
struct accumulator {};
struct row_major {};
struct col_major {};
enum layout_t { mem_row_major, mem_col_major };

template <class Use, int M, int N, int K, class T, class Layout = void> struct fragment {
    static_assert(M == 16 && N == 16 && K == 16, "the harness implements the m16n16k16 wmma shape only");
    static_assert(std::is_same_v<Use, accumulator>
                      ? std::is_same_v<T, float> && std::is_void_v<Layout>
                      : (std::is_same_v<Use, matrix_a> || std::is_same_v<Use, matrix_b>) &&
                            std::is_same_v<T, __nv_bfloat16> &&
                            (std::is_same_v<Layout, row_major> || std::is_same_v<Layout, col_major>),
                  "the harness implements bf16 matrix_a/matrix_b (row_major or col_major) and float accumulators");
    float v[16][16]; /* matrix_a [m][k], matrix_b [k][n], accumulator [m][n] */
};
template <class L> using frag_a = fragment<matrix_a, 16, 16, 16, __nv_bfloat16, L>;
template <class L> using frag_b = fragment<matrix_b, 16, 16, 16, __nv_bfloat16, L>;
using frag_c = fragment<accumulator, 16, 16, 16, float>;
} // namespace wmma
} // namespace nvcuda

namespace mgk {
inline uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = static_cast<const unsigned char *>(p);
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

/* the warp collective of a wmma call: every lane of a whole warp arrives with the same digest of its
 * operation, arguments and fragments */
inline void wmma_collective(uint64_t digest, const char *op)
{
    Warp &w = my_warp();
    if (w.size != 32)
        fail("wmma: a warp matrix operation needs a whole warp of 32 lanes (a partial last warp)");
    uint64_t *slot = w.slot[tls.xparity];
    tls.xparity ^= 1u;
    slot[lane_id()] = digest;
    w.bar.wait("wmma: a lane of the warp returned before a warp matrix operation");
    for (int i = 0; i < 32; i++)
        if (slot[i] != digest) {
            char msg[160];
            std::snprintf(msg, sizeof msg, "wmma %s: the lanes of a warp passed different arguments or fragments "
                                           "(lanes %d and %d)", op, i, lane_id());
            fail(msg);
        }
    /* One call in 32 (decided alike by the lanes of the warp: seed, block, warp, call count) the whole warp
     * pauses for 2-6 ms, long enough for the other warps of the block to finish a tile's fragment loads and
     * products: so warps drift apart between barriers, and a missing __syncthreads between a shared tile's
     * readers and the next tile's writers gives a wrong result (test_kernels.py removes matmul.cu kernel 4's). */
    const Launch &L = *tls.L;
    uint64_t r = ((uint64_t)L.seed * 0x9E3779B97F4A7C15ull) ^
                 (((uint64_t)L.bid.z * L.grid.y + L.bid.y) * L.grid.x + L.bid.x) * 0xBF58476D1CE4E5B9ull ^
                 ((uint64_t)(tls.linear / 32) << 40) ^ (uint64_t)tls.wmma_calls++ * 0x94D049BB133111EBull;
    r ^= r >> 31;
    r *= 0xD6E8FEB86659FD93ull;
    r ^= r >> 32;
    if (r % 32u == 0)
        std::this_thread::sleep_for(std::chrono::microseconds(2000 + (long)(r >> 40) % 4000));
}

inline uint64_t wmma_digest(int op, const void *p, unsigned ldm, int layout, size_t elem, const char *what)
{
    if (reinterpret_cast<uintptr_t>(p) % 32u) {
        char msg[160];
        std::snprintf(msg, sizeof msg, "wmma %s: the pointer is not 32-byte (256-bit) aligned", what);
        fail(msg);
    }
    if ((ldm * elem) % 16u || ldm < 16) {
        char msg[160];
        std::snprintf(msg, sizeof msg, "wmma %s: ldm %u is not a multiple of 16 bytes of at least 16 elements", what, ldm);
        fail(msg);
    }
    uint64_t h = 0xcbf29ce484222325ull;
    h = fnv(h, &op, sizeof op);
    h = fnv(h, &p, sizeof p);
    h = fnv(h, &ldm, sizeof ldm);
    return fnv(h, &layout, sizeof layout);
}
} // namespace mgk

namespace nvcuda {
namespace wmma {
template <class Use, class T, class L> inline void fill_fragment(fragment<Use, 16, 16, 16, T, L> &f, float v)
{
    float x = std::is_same_v<T, __nv_bfloat16> ? __bfloat162float(__float2bfloat16_rn(v)) : v;
    for (auto &row : f.v)
        for (float &e : row)
            e = x;
}

/* element (r, c) of a stored 16x16 matrix: row-major p[r * ldm + c], column-major p[c * ldm + r] */
template <class L> inline void load_matrix_sync(frag_a<L> &f, const __nv_bfloat16 *p, unsigned ldm)
{
    constexpr bool row = std::is_same_v<L, row_major>;
    mgk::wmma_collective(mgk::wmma_digest(1, p, ldm, row, 2, "load_matrix_sync(matrix_a)"), "load_matrix_sync");
    for (int m = 0; m < 16; m++)
        for (int k = 0; k < 16; k++)
            f.v[m][k] = __bfloat162float(row ? p[m * ldm + k] : p[k * ldm + m]);
}
template <class L> inline void load_matrix_sync(frag_b<L> &f, const __nv_bfloat16 *p, unsigned ldm)
{
    constexpr bool row = std::is_same_v<L, row_major>;
    mgk::wmma_collective(mgk::wmma_digest(2, p, ldm, row, 2, "load_matrix_sync(matrix_b)"), "load_matrix_sync");
    for (int k = 0; k < 16; k++)
        for (int n = 0; n < 16; n++)
            f.v[k][n] = __bfloat162float(row ? p[k * ldm + n] : p[n * ldm + k]);
}
inline void load_matrix_sync(frag_c &f, const float *p, unsigned ldm, layout_t layout)
{
    bool row = layout == mem_row_major;
    mgk::wmma_collective(mgk::wmma_digest(3, p, ldm, row, 4, "load_matrix_sync(accumulator)"), "load_matrix_sync");
    for (int m = 0; m < 16; m++)
        for (int n = 0; n < 16; n++)
            f.v[m][n] = row ? p[m * ldm + n] : p[n * ldm + m];
}

/* d = a b + c (d may be c) */
template <class LA, class LB> inline void mma_sync(frag_c &d, const frag_a<LA> &a, const frag_b<LB> &b, const frag_c &c)
{
    uint64_t h = mgk::fnv(0xcbf29ce484222325ull, "mma", 3);
    h = mgk::fnv(mgk::fnv(mgk::fnv(h, a.v, sizeof a.v), b.v, sizeof b.v), c.v, sizeof c.v);
    mgk::wmma_collective(h, "mma_sync");
    float r[16][16];
    for (int m = 0; m < 16; m++)
        for (int n = 0; n < 16; n++) {
            double s = c.v[m][n];
            for (int k = 0; k < 16; k++)
                s += (double)a.v[m][k] * (double)b.v[k][n];
            r[m][n] = (float)s;
        }
    std::memcpy(d.v, r, sizeof r);
}

inline void store_matrix_sync(float *p, const frag_c &f, unsigned ldm, layout_t layout)
{
    bool row = layout == mem_row_major;
    uint64_t h = mgk::wmma_digest(4, p, ldm, row, 4, "store_matrix_sync");
    mgk::wmma_collective(mgk::fnv(h, f.v, sizeof f.v), "store_matrix_sync");
    mgk::jitter();
    if (mgk::lane_id() != 0)
        return;
    for (int m = 0; m < 16; m++)
        for (int n = 0; n < 16; n++)
            (row ? p[m * ldm + n] : p[n * ldm + m]) = f.v[m][n];
}
} // namespace wmma
} // namespace nvcuda

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
    if (int e = mgk::refuse_in_capture(mgk::kErrCaptureUnsupported)) {
        *p = nullptr;
        return e;
    }
    *p = std::malloc(n ? n : 1);
    if (!*p)
        return 2;
    std::memset(*p, 0xff, n); /* uninitialised device memory reads as NaN */
    return cudaSuccess;
}
template <class T> cudaError_t cudaMalloc(T **p, size_t n) { return cudaMalloc(reinterpret_cast<void **>(p), n); }
/* the synchronous copies run on the legacy default stream: refused while this thread captures */
inline cudaError_t cudaMemcpy(void *d, const void *s, size_t n, cudaMemcpyKind)
{
    if (int e = mgk::refuse_in_capture(mgk::kErrCaptureImplicit))
        return e;
    std::memcpy(d, s, n);
    return cudaSuccess;
}
inline cudaError_t cudaMemset(void *d, int v, size_t n)
{
    if (int e = mgk::refuse_in_capture(mgk::kErrCaptureImplicit))
        return e;
    std::memset(d, v, n);
    return cudaSuccess;
}
inline cudaError_t cudaFree(void *p)
{
    if (int e = mgk::refuse_in_capture(mgk::kErrCaptureUnsupported))
        return e;
    std::free(p);
    return cudaSuccess;
}
inline cudaError_t cudaDeviceSynchronize() { return mgk::refuse_in_capture(mgk::kErrCaptureUnsupported); }
inline cudaError_t cudaGetLastError()
{
    cudaError_t e = mgk::last_error;
    mgk::last_error = cudaSuccess;
    return e;
}

/* ---- streams and graphs (see "stream capture" above): the legacy and the per-thread default stream ---- */
struct CUstream_st;
typedef CUstream_st *cudaStream_t;
#define cudaStreamLegacy ((cudaStream_t)0x1)
#define cudaStreamPerThread ((cudaStream_t)0x2)
enum { cudaErrorInvalidValue = mgk::kErrInvalidValue, cudaErrorIllegalState = mgk::kErrIllegalState,
       cudaErrorStreamCaptureUnsupported = mgk::kErrCaptureUnsupported,
       cudaErrorStreamCaptureInvalidated = mgk::kErrCaptureInvalidated,
       cudaErrorStreamCaptureImplicit = mgk::kErrCaptureImplicit };
enum cudaStreamCaptureMode { cudaStreamCaptureModeGlobal = 0, cudaStreamCaptureModeThreadLocal = 1,
                             cudaStreamCaptureModeRelaxed = 2 };
enum cudaStreamCaptureStatus { cudaStreamCaptureStatusNone = 0, cudaStreamCaptureStatusActive = 1,
                               cudaStreamCaptureStatusInvalidated = 2 };
struct CUgraph_st {
    std::vector<mgk::GraphNode> nodes;
};
struct CUgraphExec_st {
    std::vector<mgk::GraphNode> nodes;
};
typedef CUgraph_st *cudaGraph_t;
typedef CUgraphExec_st *cudaGraphExec_t;

namespace mgk {
inline bool legacy_stream(cudaStream_t s) { return s == nullptr || s == cudaStreamLegacy; }
inline int set_error(int e)
{
    last_error = e;
    return e;
}
} // namespace mgk

inline cudaError_t cudaMemcpyAsync(void *d, const void *s, size_t n, cudaMemcpyKind, cudaStream_t stream = nullptr)
{
    if (!mgk::legacy_stream(stream) && stream != cudaStreamPerThread)
        return mgk::set_error(cudaErrorInvalidValue);
    if (mgk::legacy_stream(stream)) {
        if (int e = mgk::refuse_in_capture(mgk::kErrCaptureImplicit))
            return e;
    } else if (mgk::capture.active) {
        if (mgk::capture.invalid)
            return mgk::set_error(cudaErrorStreamCaptureInvalidated);
        mgk::GraphNode node;
        node.copy = [d, s, n] { std::memcpy(d, s, n); };
        mgk::capture.nodes.push_back(std::move(node));
        return cudaSuccess;
    }
    std::memcpy(d, s, n);
    return cudaSuccess;
}
inline cudaError_t cudaStreamSynchronize(cudaStream_t stream)
{
    if (!mgk::legacy_stream(stream) && stream != cudaStreamPerThread)
        return mgk::set_error(cudaErrorInvalidValue);
    return mgk::refuse_in_capture(mgk::kErrCaptureUnsupported);
}
inline cudaError_t cudaStreamBeginCapture(cudaStream_t stream, cudaStreamCaptureMode mode)
{
    if (mgk::legacy_stream(stream))
        return mgk::set_error(cudaErrorStreamCaptureUnsupported); /* the legacy stream cannot be captured */
    if (stream != cudaStreamPerThread || mode == cudaStreamCaptureModeRelaxed)
        return mgk::set_error(cudaErrorInvalidValue); /* the harness emulates Global / ThreadLocal only */
    if (mgk::capture.active)
        return mgk::set_error(cudaErrorIllegalState);
    mgk::capture.active = true;
    mgk::capture.invalid = false;
    mgk::capture.nodes.clear();
    return cudaSuccess;
}
inline cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t *graph)
{
    *graph = nullptr;
    if (stream != cudaStreamPerThread || !mgk::capture.active)
        return mgk::set_error(cudaErrorIllegalState);
    mgk::capture.active = false;
    if (mgk::capture.invalid) {
        mgk::capture.nodes.clear();
        return mgk::set_error(cudaErrorStreamCaptureInvalidated);
    }
    *graph = new CUgraph_st{std::move(mgk::capture.nodes)};
    mgk::capture.nodes.clear();
    return cudaSuccess;
}
inline cudaError_t cudaStreamIsCapturing(cudaStream_t stream, cudaStreamCaptureStatus *status)
{
    *status = cudaStreamCaptureStatusNone;
    if (stream == cudaStreamPerThread && mgk::capture.active)
        *status = mgk::capture.invalid ? cudaStreamCaptureStatusInvalidated : cudaStreamCaptureStatusActive;
    else if (mgk::legacy_stream(stream) && mgk::capture.active)
        return mgk::set_error(cudaErrorStreamCaptureImplicit);
    return cudaSuccess;
}
/* the graph's nodes copied: the graph may be destroyed while its instantiation lives on */
inline cudaError_t cudaGraphInstantiate(cudaGraphExec_t *exec, cudaGraph_t graph, unsigned long long flags = 0)
{
    *exec = nullptr;
    if (!graph || flags)
        return mgk::set_error(cudaErrorInvalidValue);
    *exec = new CUgraphExec_st{graph->nodes};
    return cudaSuccess;
}
/* the recorded launches and copies, in capture order (the harness runs a stream's work at once) */
inline cudaError_t cudaGraphLaunch(cudaGraphExec_t exec, cudaStream_t stream)
{
    if (!exec || (!mgk::legacy_stream(stream) && stream != cudaStreamPerThread))
        return mgk::set_error(cudaErrorInvalidValue);
    if (int e = mgk::refuse_in_capture(mgk::kErrCaptureUnsupported)) /* no child graphs here */
        return e;
    for (const mgk::GraphNode &n : exec->nodes) {
        if (n.copy)
            n.copy();
        else
            mgk::run_grid(n.grid, n.block, n.dyn_bytes, n.body);
    }
    return cudaSuccess;
}
inline cudaError_t cudaGraphExecDestroy(cudaGraphExec_t exec)
{
    delete exec;
    return cudaSuccess;
}
inline cudaError_t cudaGraphDestroy(cudaGraph_t graph)
{
    delete graph;
    return cudaSuccess;
}
enum { cudaErrorNoDevice = 100 };
enum cudaDeviceAttr { cudaDevAttrMultiProcessorCount = 16, cudaDevAttrComputeCapabilityMajor = 75,
                      cudaDevAttrComputeCapabilityMinor = 76 };
/* the harness's "GPU" has one multiprocessor: where the engine chooses a kernel by the blocks a launch
 * makes (mgk_matmul_pick), the forward pass's checks on the harness take the kernel meant for large
 * launches, whose small-launch alternative has its own driver.  It is an sm_80 (compute capability 8.0,
 * an A100's): the tensor-core kernels (matmul.cu 4) run, through the wmma emulation above. */
inline cudaError_t cudaDeviceGetAttribute(int *v, cudaDeviceAttr a, int)
{
    *v = a == cudaDevAttrComputeCapabilityMajor ? 8 : a == cudaDevAttrComputeCapabilityMinor ? 0 : 1;
    return cudaSuccess;
}
inline cudaError_t cudaGetDevice(int *d)
{
    *d = 0;
    return cudaSuccess;
}
/* binaryVersion: the architecture of the code a kernel runs as (major * 10 + minor): the harness's sm_80 */
struct cudaFuncAttributes {
    int binaryVersion, ptxVersion;
};
template <class F> cudaError_t cudaFuncGetAttributes(cudaFuncAttributes *a, F)
{
    a->binaryVersion = a->ptxVersion = 80;
    return cudaSuccess;
}
inline cudaError_t cudaGetDeviceCount(int *n)
{
    *n = 0;
    return cudaErrorNoDevice;
}
inline const char *cudaGetErrorString(cudaError_t e)
{
    return e == cudaErrorNoDevice                   ? "CPU harness: no CUDA-capable device"
           : e == cudaErrorStreamCaptureUnsupported ? "operation not permitted when stream is capturing"
           : e == cudaErrorStreamCaptureInvalidated ? "operation failed due to a previous error during capture"
           : e == cudaErrorStreamCaptureImplicit    ? "operation would make the legacy stream depend on a capturing stream"
           : e == cudaErrorIllegalState             ? "illegal state (no capture under way, or one already)"
           : e == cudaErrorInvalidValue             ? "invalid argument"
           : e                                      ? "harness allocation failed"
                                                    : "no error";
}

#endif
