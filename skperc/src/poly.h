/* The polynomial kernel's values of degree 2, 3 or 4 from the products,
   by multiplications that vectorize (see _poly_values in
   _kernel_perceptron_fast.pyx for the degrees that keep pow): each lane
   computes its value with the same operations in the same order, so the
   level of simd.h changes the time, never a bit. With AVX-512F a fit of
   40,000 examples of benchmarks/bench_kernel_scale.py (degree 3, one
   thread) took 7.2 to 7.4 s, and its prediction of 20,000 rows 0.29 s,
   against 7.7 to 8.1 s and 0.33 to 0.34 s on the two lanes of the
   generic code (three runs each, alternating). */
#ifndef SKPERC_POLY_H
#define SKPERC_POLY_H

#include <Python.h>

#include "simd.h"

/* out[r] = (gamma out[r] + coef0)^degree, degree 2, 3 or 4 */
#define SKPERC_POLY_LOOP(SUFFIX, TARGET)                                \
    TARGET static void skperc_poly_##SUFFIX(                            \
        double *out, Py_ssize_t n, double gamma, double coef0,          \
        int degree) {                                                   \
        if (degree == 2) {                                              \
            for (Py_ssize_t r = 0; r < n; r++) {                        \
                double base = gamma * out[r] + coef0;                   \
                out[r] = base * base;                                   \
            }                                                           \
        } else if (degree == 3) {                                       \
            for (Py_ssize_t r = 0; r < n; r++) {                        \
                double base = gamma * out[r] + coef0;                   \
                out[r] = (base * base) * base;                          \
            }                                                           \
        } else {                                                        \
            for (Py_ssize_t r = 0; r < n; r++) {                        \
                double square = gamma * out[r] + coef0;                 \
                square = square * square;                               \
                out[r] = square * square;                               \
            }                                                           \
        }                                                               \
    }

SKPERC_AT_EACH_SIMD_LEVEL(SKPERC_POLY_LOOP)

static void skperc_poly(double *out, Py_ssize_t n, double gamma,
                        double coef0, int degree) {
    SKPERC_AT_SIMD_LEVEL(skperc_poly, out, n, gamma, coef0, degree);
}

#endif
