/*
 * multiversion.h - run-time selection of the fast code path for the hottest searches.
 *
 * The extension is built for the portable x86-64-v2 baseline (SSE4.2, POPCNT) so that a wheel
 * runs on any x86-64 machine of the last decade.  The recursive searches whose speed matters
 * (perft, the exact solvers) are marked MG_HOT: GCC compiles them twice, for x86-64-v3 (AVX2,
 * BMI1/2, LZCNT: tzcnt/blsr/shlx for the bit loops) and for the baseline, with every callee
 * inlined into each copy (flatten), and the dynamic loader picks the copy the CPU supports
 * (an ifunc resolver using __builtin_cpu_supports) once, when the module is loaded.
 *
 * Elsewhere (other compilers or platforms, sanitizer builds, MAVGAME_NATIVE=1 builds that
 * already target the build machine) MG_HOT is empty and the code is compiled once.
 */
#ifndef MG_MULTIVERSION_H
#define MG_MULTIVERSION_H

#if defined(__x86_64__) && defined(__linux__) && defined(__GNUC__) && !defined(__clang__) &&                      \
    !defined(__SANITIZE_ADDRESS__) && !defined(__AVX2__) && !defined(MG_NO_MULTIVERSION)
#define MG_HOT __attribute__((target_clones("arch=x86-64-v3", "default"), flatten))
#else
#define MG_HOT
#endif

#endif /* MG_MULTIVERSION_H */
