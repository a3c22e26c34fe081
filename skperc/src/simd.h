/* The vector instructions that the kernel perceptron's products (dots.h),
   RBF columns (rbf.h), polynomial and cosine kernel values (poly.h,
   cosine.h) and the checks and additions of its columns (columns.h) run
   on, chosen at run time: the processor's best, or a lower level that
   skperc_set_simd is given. Every kernel computes each value lane by lane
   with the same operations in the same order, so the level changes the
   time, never a bit. (The AVX2 and AVX-512F targets offer fused
   multiply-adds; -ffp-contract=off, in pyproject.toml, keeps every
   multiplication and addition rounded apart, and the same bits rest on
   it. The one fused step, the exponential's (rbf.h), is an explicit fma,
   rounded once at every level: the AVX2 level asks for the FMA
   instructions too, which every processor with AVX2 has.) */
#ifndef SKPERC_SIMD_H
#define SKPERC_SIMD_H

#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
#define SKPERC_HAVE_LANES 1
typedef double skperc_v4 __attribute__((vector_size(32)));
typedef double skperc_v8 __attribute__((vector_size(64)));
typedef float skperc_f4 __attribute__((vector_size(16)));
typedef float skperc_f8 __attribute__((vector_size(32)));
#endif

/* No lanes (the loop reads rows in C order, one column at a time), AVX2
   with FMA (4 doubles a register), AVX-512F (8). */
enum { SKPERC_SIMD_NONE = 0, SKPERC_SIMD_AVX2 = 1, SKPERC_SIMD_AVX512 = 2 };

static int skperc_simd = SKPERC_SIMD_NONE;

/* NAME##_avx512, NAME##_avx2 or NAME##_generic on the arguments, by the
   level in force: the call of a function compiled at each level (rbf.h,
   poly.h, cosine.h, columns.h). Without lanes there is only
   NAME##_generic. */
#ifdef SKPERC_HAVE_LANES
#define SKPERC_AT_SIMD_LEVEL(NAME, ...)                                 \
    (skperc_simd == SKPERC_SIMD_AVX512 ? NAME##_avx512(__VA_ARGS__)     \
     : skperc_simd == SKPERC_SIMD_AVX2 ? NAME##_avx2(__VA_ARGS__)       \
                                       : NAME##_generic(__VA_ARGS__))
#else
#define SKPERC_AT_SIMD_LEVEL(NAME, ...) NAME##_generic(__VA_ARGS__)
#endif

/* LOOP(SUFFIX, TARGET) at each level, SUFFIX generic, avx2 and avx512
   with the target attribute of that level: the functions of each level
   that SKPERC_AT_SIMD_LEVEL calls (poly.h, cosine.h, columns.h). */
#ifdef SKPERC_HAVE_LANES
#define SKPERC_AT_EACH_SIMD_LEVEL(LOOP)                                 \
    LOOP(generic, )                                                     \
    LOOP(avx2, __attribute__((target("avx2"))))                         \
    LOOP(avx512, __attribute__((target("avx512f"))))
#else
#define SKPERC_AT_EACH_SIMD_LEVEL(LOOP) LOOP(generic, )
#endif

/* Run on the processor's best level up to highest; returns the level. */
static int skperc_set_simd(int highest) {
    int level = SKPERC_SIMD_NONE;
#ifdef SKPERC_HAVE_LANES
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
        level = SKPERC_SIMD_AVX2;
        if (__builtin_cpu_supports("avx512f"))
            level = SKPERC_SIMD_AVX512;
    }
#endif
    skperc_simd = level < highest ? level : highest;
    return skperc_simd;
}

#endif
