/* What the kernel perceptron's loops do with each kernel column once it is
   computed, in the lanes of simd.h: check that its values are finite, and
   add it into the decision values (f += a column, and g += b column for
   the average). Each value of f and g takes one multiplication and one
   addition, rounded apart (-ffp-contract=off), so the level changes the
   time, never a bit. With AVX-512F, against the loops they replace,
   compiled for the two lanes of every x86-64 processor, fits of
   benchmarks/bench_kernel_scale.py's clusters on one thread (alternating
   runs) took 0.29 against 0.32 s at 10,000 examples, 0.38 against 0.42 s
   with beta=RelativeThreshold(1.0), and 3.3 and 4.0 against 4.2 and 4.6 s
   at 40,000. */
#ifndef SKPERC_COLUMNS_H
#define SKPERC_COLUMNS_H

#include <Python.h>

#include "simd.h"

/* x - x is 0 for a finite x and NaN for inf and NaN: the comparison
   vectorizes, where a test that ends the loop at the first failure does
   not */
#define SKPERC_COLUMNS_LOOPS(SUFFIX, TARGET)                            \
    TARGET static int skperc_all_finite_##SUFFIX(const double *values,  \
                                                 Py_ssize_t n) {        \
        int bad = 0;                                                    \
        for (Py_ssize_t r = 0; r < n; r++)                              \
            bad |= !(values[r] - values[r] == 0.0);                     \
        return !bad;                                                    \
    }                                                                   \
    TARGET static void skperc_add_##SUFFIX(double a, const double *column, \
                                           double *f, Py_ssize_t n) {   \
        for (Py_ssize_t r = 0; r < n; r++)                              \
            f[r] += a * column[r];                                      \
    }                                                                   \
    TARGET static void skperc_add_two_##SUFFIX(                         \
        double a, double b, const double *column, double *f, double *g, \
        Py_ssize_t n) {                                                 \
        for (Py_ssize_t r = 0; r < n; r++) {                            \
            f[r] += a * column[r];                                      \
            g[r] += b * column[r];                                      \
        }                                                               \
    }

SKPERC_AT_EACH_SIMD_LEVEL(SKPERC_COLUMNS_LOOPS)

/* whether the n values are all finite */
static int skperc_all_finite(const double *values, Py_ssize_t n) {
    return SKPERC_AT_SIMD_LEVEL(skperc_all_finite, values, n);
}

/* f += a column */
static void skperc_add(double a, const double *column, double *f,
                       Py_ssize_t n) {
    SKPERC_AT_SIMD_LEVEL(skperc_add, a, column, f, n);
}

/* f += a column and g += b column, in one pass over the column */
static void skperc_add_two(double a, double b, const double *column,
                           double *f, double *g, Py_ssize_t n) {
    SKPERC_AT_SIMD_LEVEL(skperc_add_two, a, b, column, f, g, n);
}

#endif
