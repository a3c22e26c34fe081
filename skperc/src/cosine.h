/* The cosine kernel's values from the products: x_r . x / (||x_r|| ||x||),
   0 where a point is 0, as pairwise_kernels' "cosine", and NaN where a
   squared norm overflowed, which the loop reports as an overflow (where
   pairwise_kernels gives 0). The product of the two norms, not a quotient
   by each in turn, gives k(x_r, x) and k(x, x_r) the same bits.

   In a loop that vectorizes: each lane computes its value with the same
   operations in the same order, so the level of simd.h changes the time,
   never a bit. The square root vectorizes only when the compiler need not
   set errno (-fno-math-errno, in pyproject.toml). A fit of 10,000 examples
   of benchmarks/bench_kernel_scale.py (one thread) took 1.07 s on its word
   counts and 1.75 s on its clusters, against 1.49 s and 3.10 s with a
   value at a time and a branch for each case (medians of three runs,
   alternating). */
#ifndef SKPERC_COSINE_H
#define SKPERC_COSINE_H

#include <math.h>
#include <Python.h>

#include "simd.h"

/* out[r] = out[r] / (sqrt(sq_norms[r]) sqrt(sq_norm_x)), 0 where that
   product is 0 and NaN where it is infinite: the quotient computed in
   every lane and then replaced, so that the loop has no branch. */
#define SKPERC_COSINE_LOOP(SUFFIX, TARGET)                              \
    TARGET static void skperc_cosine_##SUFFIX(                          \
        double *out, const double *sq_norms, double sq_norm_x,          \
        Py_ssize_t n) {                                                 \
        double norm_x = sqrt(sq_norm_x);                                \
        for (Py_ssize_t r = 0; r < n; r++) {                            \
            double norms = sqrt(sq_norms[r]) * norm_x;                  \
            double value = out[r] / norms;                              \
            value = norms == 0.0 ? 0.0 : value;                         \
            out[r] = norms == INFINITY ? NAN : value;                   \
        }                                                               \
    }

SKPERC_AT_EACH_SIMD_LEVEL(SKPERC_COSINE_LOOP)

static void skperc_cosine(double *out, const double *sq_norms,
                          double sq_norm_x, Py_ssize_t n) {
    SKPERC_AT_SIMD_LEVEL(skperc_cosine, out, sq_norms, sq_norm_x, n);
}

#endif
