/*
 * multiversion.h - run-time selection of the fast code path for the hottest searches.
 *
 * The extension is built for the portable x86-64-v2 baseline (SSE4.2, POPCNT) so that a wheel
 * runs on any x86-64 machine of the last decade.  The recursive searches whose speed matters
 * (perft, the exact solvers) are marked MG_HOT: GCC compiles them twice, for x86-64-v3 (AVX2,
 * BMI1/2, LZCNT: tzcnt/blsr/shlx for the bit loops) and for the baseline, with every callee
 * inlined into each copy (flatten), and the dynamic loader picks the copy the CPU supports
 * (an ifunc resolver using __builtin_cpu_supports) once, when the module is loaded.  A
 * recursion whose nodes are too cheap for the indirect self-call of an ifunc (Connect Four
 * perft) is instead written once as a macro, instantiated twice (MG_TARGET_V3 and baseline),
 * and chosen with mg_cpu_has_v3().
 *
 * Elsewhere (other compilers or platforms, sanitizer builds, MAVGAME_NATIVE=1 builds that
 * already target the build machine) MG_HOT is empty and the code is compiled once.
 */
#ifndef MG_MULTIVERSION_H
#define MG_MULTIVERSION_H

#if defined(__x86_64__) && defined(__linux__) && defined(__GNUC__) && !defined(__clang__) &&                      \
    !defined(__SANITIZE_ADDRESS__) && !defined(__AVX2__) && !defined(MG_NO_MULTIVERSION)
#define MG_MULTIVERSION 1
#define MG_HOT __attribute__((target_clones("arch=x86-64-v3", "default"), flatten))
/* For a recursion with very cheap nodes, where the indirect call of a target_clones self-call
 * would cost: compile two named copies (one MG_TARGET_V3) and pick one with mg_cpu_has_v3(). */
#define MG_TARGET_V3 __attribute__((target("arch=x86-64-v3")))
static inline int mg_cpu_has_v3(void) { return __builtin_cpu_supports("x86-64-v3") != 0; }
#else
#define MG_MULTIVERSION 0
#define MG_HOT
#define MG_TARGET_V3
static inline int mg_cpu_has_v3(void) { return 0; }
#endif

#endif /* MG_MULTIVERSION_H */
