/* The scoring kernel of the linear perceptron's multiclass blocks.

   skperc_lanes_*(x, ind, nnz, coef, width, out):
   out[c] = sum_j coef[j, c] x_j over the entries of x (indices ind, or
   0..nnz-1 when ind is NULL), for the width columns of coef, 8 at a time:
   each sum in feature order in a register of its own, the row of coef read
   once per 8 columns. GCC would vectorize the loop over j instead,
   interleaving two rows of coef at the cost of a shuffle per product and
   running at half the speed, so that is turned off here. */
#ifndef SKPERC_LANES_H
#define SKPERC_LANES_H

#include <stdint.h>
#include <Python.h>

#if defined(__GNUC__) || defined(__clang__)
#define SKPERC_PREFETCH(address) __builtin_prefetch(address)
#else
#define SKPERC_PREFETCH(address) ((void)0)
#endif

#if defined(__GNUC__) && !defined(__clang__)
#define SKPERC_LANES_ATTRIBUTES __attribute__((optimize("no-tree-loop-vectorize")))
#else
#define SKPERC_LANES_ATTRIBUTES
#endif

#define SKPERC_LANES_ROW                                                \
    a0 += row[0] * xj; a1 += row[1] * xj; a2 += row[2] * xj;           \
    a3 += row[3] * xj; a4 += row[4] * xj; a5 += row[5] * xj;           \
    a6 += row[6] * xj; a7 += row[7] * xj;

#define SKPERC_LANES_KERNEL(name, value_t, index_t)                      \
static SKPERC_LANES_ATTRIBUTES void name(                                \
        const value_t *x, const index_t *ind, Py_ssize_t nnz,            \
        const double *coef, Py_ssize_t width, double *out) {             \
    for (Py_ssize_t chunk = 0; chunk < width; chunk += 8) {              \
        double a0 = 0, a1 = 0, a2 = 0, a3 = 0;                           \
        double a4 = 0, a5 = 0, a6 = 0, a7 = 0;                           \
        for (Py_ssize_t j = 0; j < nnz; j++) {                           \
            const double xj = (double)x[j];                              \
            const double *row = coef                                     \
                + (ind == NULL ? j : (Py_ssize_t)ind[j]) * width + chunk;\
            SKPERC_LANES_ROW                                             \
        }                                                                \
        out[chunk] = a0; out[chunk + 1] = a1; out[chunk + 2] = a2;       \
        out[chunk + 3] = a3; out[chunk + 4] = a4; out[chunk + 5] = a5;   \
        out[chunk + 6] = a6; out[chunk + 7] = a7;                        \
    }                                                                    \
}

SKPERC_LANES_KERNEL(skperc_lanes_f32_i32, float, int32_t)
SKPERC_LANES_KERNEL(skperc_lanes_f32_i64, float, int64_t)
SKPERC_LANES_KERNEL(skperc_lanes_f64_i32, double, int32_t)
SKPERC_LANES_KERNEL(skperc_lanes_f64_i64, double, int64_t)

#endif
