/* The RBF kernel column of the kernel perceptron, with an exponential that
   vectorizes. */
#ifndef SKPERC_RBF_H
#define SKPERC_RBF_H

#include <math.h>
#include <stdint.h>
#include <string.h>
#include <Python.h>

#include "simd.h"

/* exp(x) for x <= 0, in arithmetic that a compiler can vectorize (the
   libm call cannot be): x = k ln2 + r with |r| <= ln2 / 2, the Taylor
   polynomial of exp(r) to degree 13 (its remainder is below 2^-60) by
   Horner's rule in fused multiply-adds, and 2^k added to the exponent
   bits. Within 1 ulp of the correctly rounded value on [-707, 0]; below
   -707 the value, under 1e-307, is 0. The rounding to k adds and
   subtracts 1.5 2^52. fma rounds once, on every processor and at every
   level of simd.h: the same bits everywhere. Against a multiplication and
   an addition rounded apart, the fused steps took 0.83 times the time of
   a fit of 40,000 examples (RBF, 20 features, one thread) and 0.88 times
   that of 10,000; where the processor has no FMA instruction (x86-64
   before AVX2, at the level "none"), the C library computes each step in
   software, far slower. */
static inline double skperc_exp_nonpositive(double x) {
    const double shifter = 0x1.8p52;
    double xc = x < -707.0 ? -707.0 : x;
    double t = xc * 0x1.71547652b82fep0 + shifter;
    double k = t - shifter;
    /* ln2 split in two: k times the first part is exact */
    double r = xc - k * 0x1.62e42fefa3800p-1;
    r = r - k * 0x1.ef35793c76730p-45;
    double p = 1.0 / 6227020800.0;
    p = fma(p, r, 1.0 / 479001600.0);
    p = fma(p, r, 1.0 / 39916800.0);
    p = fma(p, r, 1.0 / 3628800.0);
    p = fma(p, r, 1.0 / 362880.0);
    p = fma(p, r, 1.0 / 40320.0);
    p = fma(p, r, 1.0 / 5040.0);
    p = fma(p, r, 1.0 / 720.0);
    p = fma(p, r, 1.0 / 120.0);
    p = fma(p, r, 1.0 / 24.0);
    p = fma(p, r, 1.0 / 6.0);
    p = fma(p, r, 0.5);
    p = fma(p, r, 1.0);
    p = fma(p, r, 1.0);
    int64_t t_bits, p_bits, shifter_bits;
    memcpy(&t_bits, &t, 8);
    memcpy(&p_bits, &p, 8);
    memcpy(&shifter_bits, &shifter, 8);
    p_bits += (t_bits - shifter_bits) * ((int64_t)1 << 52);
    memcpy(&p, &p_bits, 8);
    return x < -707.0 ? 0.0 : p;
}

/* The same exponential of one value, outside the vector loops (the merges
   of the budgeted loop): where the processor has FMA, compiled for it, so
   that each fused step is one instruction rather than a call to the C
   library's fma: the merges of a budgeted fit (10,000 examples of
   benchmarks/bench_kernel_scale.py, budget 500, one thread) took 0.130 s
   against 0.153 s. The same bits: fma rounds once either way. */
#ifdef SKPERC_HAVE_LANES
__attribute__((target("fma")))
static double skperc_exp_nonpositive_fma(double x) {
    return skperc_exp_nonpositive(x);
}
#endif
static double skperc_exp_one(double x) {
#ifdef SKPERC_HAVE_LANES
    if (skperc_simd != SKPERC_SIMD_NONE)
        return skperc_exp_nonpositive_fma(x);
#endif
    return skperc_exp_nonpositive(x);
}

/* out[r] = exp(-gamma ||x_r - x_j||^2) from out[r] = x_r . x_j and the
   squared norms, the distance expanded and clipped at 0 as scikit-learn
   does: the squared norm of x_r (SQ_R) added before that of x_j (SQ_J),
   in a column of point j (skperc_rbf) as in a row of point r
   (skperc_rbf_row, out[j] over the points j): the same bits. */
#define SKPERC_RBF_BODY(SQ_R, SQ_J)                                     \
    for (Py_ssize_t r = 0; r < n; r++) {                                \
        double d2 = (-2.0 * out[r] + (SQ_R)) + (SQ_J);                  \
        d2 = d2 < 0.0 ? 0.0 : d2;                                       \
        out[r] = skperc_exp_nonpositive(-gamma * d2);                   \
    }

/* NAME: the loop at the level of simd.h; for processors with AVX2 or
   AVX-512F, 4 or 8 lanes wide, with their FMA instructions. */
#define SKPERC_RBF_LOOP(NAME, TARGET, SQ_R, SQ_J)                       \
    TARGET static void NAME(double *out, const double *sq_norms,        \
                            double sq_norm, double gamma,               \
                            Py_ssize_t n) {                             \
        SKPERC_RBF_BODY(SQ_R, SQ_J)                                     \
    }
#ifdef SKPERC_HAVE_LANES
#define SKPERC_RBF_TARGETS(NAME, SQ_R, SQ_J)                            \
    SKPERC_RBF_LOOP(NAME##_avx2, __attribute__((target("avx2,fma"))),   \
                    SQ_R, SQ_J)                                         \
    SKPERC_RBF_LOOP(NAME##_avx512,                                      \
                    __attribute__((target("avx512f,fma"))), SQ_R, SQ_J)
#else
#define SKPERC_RBF_TARGETS(NAME, SQ_R, SQ_J)
#endif
#define SKPERC_RBF_LEVELS(NAME, SQ_R, SQ_J)                             \
    SKPERC_RBF_LOOP(NAME##_generic, , SQ_R, SQ_J)                       \
    SKPERC_RBF_TARGETS(NAME, SQ_R, SQ_J)                                \
    static void NAME(double *out, const double *sq_norms,               \
                     double sq_norm, double gamma, Py_ssize_t n) {      \
        SKPERC_AT_SIMD_LEVEL(NAME, out, sq_norms, sq_norm, gamma, n);   \
    }

/* The column of point j: sq_norms of the points r, sq_norm of x_j. */
SKPERC_RBF_LEVELS(skperc_rbf, sq_norms[r], sq_norm)
/* The row of point r: sq_norm of x_r, sq_norms of the points j. */
SKPERC_RBF_LEVELS(skperc_rbf_row, sq_norm, sq_norms[r])

#endif
