/* Products of rows and points in the lanes of AVX2 or AVX-512 registers
   (simd.h), for the kernel perceptron's columns: a block of rows with
   several points at once, each row read once for all of them (or one row,
   an example's values with the held updates); or one point with rows
   stored in feature-major panels, a panel's rows at once. Each
   product is summed in feature order, one rounding per multiplication and
   per addition, as the loop's one-column sums are: the same bits. */
#ifndef SKPERC_DOTS_H
#define SKPERC_DOTS_H

#include <stdint.h>
#include <string.h>
#include <Python.h>

#include "simd.h"

#ifdef SKPERC_HAVE_LANES
#define SKPERC_AVX2 __attribute__((target("avx2")))
#define SKPERC_AVX512 __attribute__((target("avx512f")))

/* W values of a row type as doubles, and a double in W lanes */
#define SKPERC_LOAD(W, T, STORED, TARGET)                                   \
    static inline TARGET __attribute__((always_inline))                     \
    skperc_v##W skperc_load##W##_##T(const T *p) {                          \
        STORED v;                                                           \
        memcpy(&v, p, sizeof v);                                            \
        return __builtin_convertvector(v, skperc_v##W);                     \
    }

SKPERC_LOAD(4, double, skperc_v4, SKPERC_AVX2)
SKPERC_LOAD(4, float, skperc_f4, SKPERC_AVX2)
SKPERC_LOAD(8, double, skperc_v8, SKPERC_AVX512)
SKPERC_LOAD(8, float, skperc_f8, SKPERC_AVX512)

#define SKPERC_SPLAT4(v) ((skperc_v4){(v), (v), (v), (v)})
#define SKPERC_SPLAT8(v) ((skperc_v8){(v), (v), (v), (v), (v), (v), (v), (v)})

/* out[u][r0 + r] = rows[r] . x_u for the n rows of length m and the nu
   points, the points given feature-major with a stride of a multiple of 8
   that pads them with zeros: xt[j * SKPERC_LANES8(nu) + u] = x_u[j]; a
   row's dot with one point is a sum of its own, in feature order. The
   points are taken 8 at a time, the last 8 padded: the sums of the padding
   are not stored. Without it, the last nu % 8 points (all of them where
   fewer than 8 columns are computed, as in most of a fit's held updates)
   took a scalar sum each, whose additions wait for one another. */
#define SKPERC_LANES8(nu) (((nu) + 7) / 8 * 8)

/* out[u] = row . x_u for one row of length m and the nu points, given
   feature-major at a stride that is a multiple of 8 and at least
   SKPERC_LANES8(nu): xt[j * stride + u] = x_u[j] (the lanes past nu are
   read, not stored). Each sum is the row's own, in feature order, as in
   the columns of skperc_dots_many (whose last rows are its calls): the
   same bits. Up to SKPERC_ROW_GROUPS groups of 8 points are summed side
   by side, whose additions do not wait for one another. */
#define SKPERC_ROW_GROUPS 4

#define SKPERC_DOTS_ROW_KERNEL(NAME, TARGET, ROW_T, W)                      \
    TARGET static void NAME(const ROW_T *row, Py_ssize_t m,                 \
                            const double *xt, Py_ssize_t stride,            \
                            Py_ssize_t nu, double *out) {                   \
        for (Py_ssize_t u = 0; u < nu; u += 8 * SKPERC_ROW_GROUPS) {        \
            Py_ssize_t count = nu - u < 8 * SKPERC_ROW_GROUPS               \
                                   ? nu - u : 8 * SKPERC_ROW_GROUPS;        \
            Py_ssize_t groups = (count + 7) / 8;                            \
            skperc_v##W a[SKPERC_ROW_GROUPS][8 / W];                        \
            double sums[SKPERC_ROW_GROUPS * 8];                             \
            for (Py_ssize_t g = 0; g < groups; g++)                         \
                for (int h = 0; h < 8 / W; h++)                             \
                    a[g][h] = SKPERC_SPLAT##W(0.0);                         \
            for (Py_ssize_t j = 0; j < m; j++) {                            \
                skperc_v##W vv = SKPERC_SPLAT##W((double)row[j]);           \
                const double *x = xt + j * stride + u;                      \
                for (Py_ssize_t g = 0; g < groups; g++)                     \
                    for (int h = 0; h < 8 / W; h++)                         \
                        a[g][h] += vv * skperc_load##W##_double(            \
                            x + 8 * g + W * h);                             \
            }                                                               \
            for (Py_ssize_t g = 0; g < groups; g++)                         \
                memcpy(sums + 8 * g, a[g], 8 * sizeof(double));             \
            memcpy(out + u, sums, count * sizeof(double));                  \
        }                                                                   \
    }

SKPERC_DOTS_ROW_KERNEL(skperc_dots_row_avx2, SKPERC_AVX2, double, 4)
SKPERC_DOTS_ROW_KERNEL(skperc_dots_row32_avx2, SKPERC_AVX2, float, 4)
SKPERC_DOTS_ROW_KERNEL(skperc_dots_row_avx512, SKPERC_AVX512, double, 8)
SKPERC_DOTS_ROW_KERNEL(skperc_dots_row32_avx512, SKPERC_AVX512, float, 8)

/* The lanes of two vectors of W doubles picked by the W indices given (a
   lane of the first, or W plus a lane of the second): clang's builtin, or
   GCC's with the indices in a vector of integers of the same size. */
#ifdef __clang__
#define SKPERC_SHUFFLE4(a, b, ...) __builtin_shufflevector(a, b, __VA_ARGS__)
#define SKPERC_SHUFFLE8(a, b, ...) __builtin_shufflevector(a, b, __VA_ARGS__)
#else
typedef int64_t skperc_i4 __attribute__((vector_size(32)));
typedef int64_t skperc_i8 __attribute__((vector_size(64)));
#define SKPERC_SHUFFLE4(a, b, ...)                                          \
    __builtin_shuffle(a, b, (skperc_i4){__VA_ARGS__})
#define SKPERC_SHUFFLE8(a, b, ...)                                          \
    __builtin_shuffle(a, b, (skperc_i8){__VA_ARGS__})
#endif

/* v[t][k] becomes v[k][t]: the square of W vectors of W lanes transposed
   in registers, the lanes of two vectors interleaved one by one, then two
   by two (and of 8 lanes, four by four). */
static inline SKPERC_AVX2 __attribute__((always_inline)) void
skperc_transpose4(skperc_v4 v[4]) {
    skperc_v4 t0 = SKPERC_SHUFFLE4(v[0], v[1], 0, 4, 2, 6);
    skperc_v4 t1 = SKPERC_SHUFFLE4(v[0], v[1], 1, 5, 3, 7);
    skperc_v4 t2 = SKPERC_SHUFFLE4(v[2], v[3], 0, 4, 2, 6);
    skperc_v4 t3 = SKPERC_SHUFFLE4(v[2], v[3], 1, 5, 3, 7);
    v[0] = SKPERC_SHUFFLE4(t0, t2, 0, 1, 4, 5);
    v[1] = SKPERC_SHUFFLE4(t1, t3, 0, 1, 4, 5);
    v[2] = SKPERC_SHUFFLE4(t0, t2, 2, 3, 6, 7);
    v[3] = SKPERC_SHUFFLE4(t1, t3, 2, 3, 6, 7);
}

static inline SKPERC_AVX512 __attribute__((always_inline)) void
skperc_transpose8(skperc_v8 v[8]) {
    skperc_v8 t[8], s[8];
    for (int p = 0; p < 8; p += 2) {
        t[p] = SKPERC_SHUFFLE8(v[p], v[p + 1], 0, 8, 2, 10, 4, 12, 6, 14);
        t[p + 1] = SKPERC_SHUFFLE8(v[p], v[p + 1], 1, 9, 3, 11, 5, 13, 7, 15);
    }
    for (int p = 0; p < 8; p += 4)
        for (int q = 0; q < 2; q++) {
            s[p + q] = SKPERC_SHUFFLE8(t[p + q], t[p + q + 2], 0, 1, 8, 9, 4,
                                       5, 12, 13);
            s[p + q + 2] = SKPERC_SHUFFLE8(t[p + q], t[p + q + 2], 2, 3, 10,
                                           11, 6, 7, 14, 15);
        }
    for (int q = 0; q < 4; q++) {
        v[q] = SKPERC_SHUFFLE8(s[q], s[q + 4], 0, 1, 2, 3, 8, 9, 10, 11);
        v[q + 4] = SKPERC_SHUFFLE8(s[q], s[q + 4], 4, 5, 6, 7, 12, 13, 14,
                                   15);
    }
}

/* W rows at a time against 8 points, in 8 / W registers of W lanes per
   row: 8 independent sums hide the latency of the additions, which bounds
   a single row's; the n % W rows left one at a time (ROW). Each square of
   W rows by W points is transposed in registers, and each point's W rows
   stored at once. Stored a value at a time, the squares took a quarter of
   the time of these products in a profile of unbudgeted fits of 40,000
   examples of 20 features (benchmarks/bench_kernel_scale.py); stored by
   points, those fits took 0.83 times as long on one thread and 0.82 on two
   (medians of 6 alternating pairs of processes), 10,000 examples 0.93 and
   the 100 features of its wide data at 40,000 examples 0.97 (of 3). */
#define SKPERC_DOTS_MANY_BODY(W, ROW, BLOCK)                                \
    const Py_ssize_t stride = SKPERC_LANES8(nu);                            \
    Py_ssize_t r = 0;                                                       \
    for (; r + W <= n; r += W) {                                            \
        const double *block = BLOCK;                                        \
        for (Py_ssize_t u = 0; u < nu; u += 8) {                            \
            skperc_v##W a[W][8 / W];                                        \
            for (int k = 0; k < W; k++)                                     \
                for (int h = 0; h < 8 / W; h++)                             \
                    a[k][h] = SKPERC_SPLAT##W(0.0);                         \
            for (Py_ssize_t j = 0; j < m; j++) {                            \
                skperc_v##W xv[8 / W];                                      \
                for (int h = 0; h < 8 / W; h++)                             \
                    xv[h] = skperc_load##W##_double(xt + j * stride + u + W * h); \
                for (int k = 0; k < W; k++) {                               \
                    skperc_v##W vv = SKPERC_SPLAT##W(block[k * m + j]);  \
                    for (int h = 0; h < 8 / W; h++)                         \
                        a[k][h] += vv * xv[h];                              \
                }                                                           \
            }                                                               \
            for (int h = 0; h < 8 / W; h++) {                               \
                skperc_v##W square[W];                                      \
                for (int k = 0; k < W; k++)                                 \
                    square[k] = a[k][h];                                    \
                skperc_transpose##W(square);                                \
                for (int t = 0; t < W && u + W * h + t < nu; t++)           \
                    memcpy(out[u + W * h + t] + r0 + r, &square[t],         \
                           sizeof square[t]);                               \
            }                                                               \
        }                                                                   \
    }                                                                       \
    for (; r < n; r++) {                                                    \
        double sums[8 * SKPERC_ROW_GROUPS];                                 \
        for (Py_ssize_t u = 0; u < nu; u += 8 * SKPERC_ROW_GROUPS) {        \
            Py_ssize_t count = nu - u < 8 * SKPERC_ROW_GROUPS               \
                                   ? nu - u : 8 * SKPERC_ROW_GROUPS;        \
            ROW(rows + r * m, m, xt + u, stride, count, sums);              \
            for (Py_ssize_t t = 0; t < count; t++)                          \
                out[u + t][r0 + r] = sums[t];                               \
        }                                                                   \
    }

#define SKPERC_DOTS_MANY_KERNEL(NAME, TARGET, W, ROW)                       \
    TARGET static void NAME(const double *rows, Py_ssize_t n, Py_ssize_t m, \
                            const double *xt, Py_ssize_t nu, double **out,  \
                            Py_ssize_t r0) {                                \
        SKPERC_DOTS_MANY_BODY(W, ROW, rows + r * m)                         \
    }

/* float32 rows: each square's W rows are first made doubles in widened
   (SKPERC_WIDENED_ROWS rows of m values), read from there by all the
   points. Converted where they are read, each value took a conversion and
   a broadcast per group of 8 points, where a double takes one broadcast
   load: in an unbudgeted fit of 20,000 examples of 20 features (the
   clusters of benchmarks/bench_kernel_scale.py, one thread) these products
   took 1.6 times the time of float64 rows', and the fit 1.78 s against
   1.45 s; widened, 1.44 s. The conversion is exact: the same sums. */
#define SKPERC_WIDENED_ROWS 8

static inline __attribute__((always_inline)) const double *
skperc_widen(const float *from, Py_ssize_t count, double *widened) {
    for (Py_ssize_t j = 0; j < count; j++)
        widened[j] = (double)from[j];
    return widened;
}

#define SKPERC_DOTS_MANY32_KERNEL(NAME, TARGET, W, ROW)                     \
    TARGET static void NAME(const float *rows, Py_ssize_t n, Py_ssize_t m,  \
                            const double *xt, Py_ssize_t nu, double **out,  \
                            Py_ssize_t r0, double *widened) {               \
        SKPERC_DOTS_MANY_BODY(W, ROW,                                       \
                              skperc_widen(rows + r * m, W * m, widened))   \
    }

SKPERC_DOTS_MANY_KERNEL(skperc_dots_many_avx2, SKPERC_AVX2, 4,
                        skperc_dots_row_avx2)
SKPERC_DOTS_MANY32_KERNEL(skperc_dots_many32_avx2, SKPERC_AVX2, 4,
                          skperc_dots_row32_avx2)
SKPERC_DOTS_MANY_KERNEL(skperc_dots_many_avx512, SKPERC_AVX512, 8,
                        skperc_dots_row_avx512)
SKPERC_DOTS_MANY32_KERNEL(skperc_dots_many32_avx512, SKPERC_AVX512, 8,
                          skperc_dots_row32_avx512)
#endif

/* out[r - lo] = x_r . x for the rows lo <= r < hi, stored in panels of
   SKPERC_PANEL rows, each panel feature-major (panels[(p * m + j) *
   SKPERC_PANEL + t] = x_{p * SKPERC_PANEL + t}[j], the last panel padded
   with zeros): a panel's rows in the lanes of eight AVX2 registers or four
   AVX-512 ones, read in the order of memory. Each product is summed in
   feature order, one rounding per multiplication and per addition, as the
   loop's row-major sums are: the same bits. The body sums over the
   features FEATURE(e), 0 <= e < N_SUMMED, in this order: every feature, or
   the listed ones of a point that is 0 on the others (a CSR row's stored
   features), whose products change no sum: a sum that starts at +0 is never
   -0, and x + 0 is x. */
#define SKPERC_PANEL 32
#define SKPERC_EVERY(e) (e)
#define SKPERC_LISTED(e) (features[e])

#define SKPERC_DOTS_PANELS_BODY(W, N_SUMMED, FEATURE)                       \
    for (Py_ssize_t p = lo / SKPERC_PANEL; p * SKPERC_PANEL < hi; p++) {    \
        const double *panel = panels + p * m * SKPERC_PANEL;                \
        skperc_v##W a[SKPERC_PANEL / W];                                    \
        double sums[SKPERC_PANEL];                                          \
        for (int t = 0; t < SKPERC_PANEL / W; t++)                          \
            a[t] = SKPERC_SPLAT##W(0.0);                                    \
        for (Py_ssize_t e = 0; e < (N_SUMMED); e++) {                       \
            Py_ssize_t j = FEATURE(e);                                      \
            const double *c = panel + j * SKPERC_PANEL;                     \
            skperc_v##W xv = SKPERC_SPLAT##W(x[j]);                         \
            for (int t = 0; t < SKPERC_PANEL / W; t++)                      \
                a[t] += skperc_load##W##_double(c + W * t) * xv;            \
        }                                                                   \
        memcpy(sums, a, sizeof sums);                                       \
        Py_ssize_t first = p * SKPERC_PANEL > lo ? p * SKPERC_PANEL : lo;   \
        Py_ssize_t last = (p + 1) * SKPERC_PANEL < hi                       \
                              ? (p + 1) * SKPERC_PANEL : hi;                \
        memcpy(out + (first - lo), sums + (first - p * SKPERC_PANEL),       \
               (last - first) * sizeof(double));                            \
    }

#ifdef SKPERC_HAVE_LANES
#define SKPERC_DOTS_PANELS_KERNEL(NAME, TARGET, W)                          \
    TARGET static void NAME(const double *panels, Py_ssize_t lo,            \
                            Py_ssize_t hi, Py_ssize_t m, const double *x,   \
                            double *out) {                                  \
        SKPERC_DOTS_PANELS_BODY(W, m, SKPERC_EVERY)                         \
    }

SKPERC_DOTS_PANELS_KERNEL(skperc_dots_panels_avx2, SKPERC_AVX2, 4)
SKPERC_DOTS_PANELS_KERNEL(skperc_dots_panels_avx512, SKPERC_AVX512, 8)

/* out[r] = x_r . x for the rows 0 <= r < hi in panels, over the n_features
   features listed, in increasing order, where x may not be 0: O(n_features)
   per row, not O(m), for a sparse point. */
#define SKPERC_DOTS_PANELS_AT_KERNEL(NAME, TARGET, W)                       \
    TARGET static void NAME(const double *panels, Py_ssize_t hi,            \
                            Py_ssize_t m, const double *x,                  \
                            const int32_t *features, Py_ssize_t n_features, \
                            double *out) {                                  \
        const Py_ssize_t lo = 0;                                            \
        SKPERC_DOTS_PANELS_BODY(W, n_features, SKPERC_LISTED)               \
    }

SKPERC_DOTS_PANELS_AT_KERNEL(skperc_dots_panels_at_avx2, SKPERC_AVX2, 4)
SKPERC_DOTS_PANELS_AT_KERNEL(skperc_dots_panels_at_avx512, SKPERC_AVX512, 8)

/* out[q * out_stride + r] = x_r . x_q for the rows 0 <= r < hi in panels
   and the SKPERC_POINTS points x_q = x + q * x_stride: each stretch of 2 W
   rows of a panel is read once for all of them, into 8 registers (two per
   point), where one point at a time reads the panel from the cache again
   for each. The same sums, in feature order, as one point's. */
#define SKPERC_POINTS 4

#define SKPERC_DOTS_PANELS_POINTS_BODY(W)                                   \
    for (Py_ssize_t first = 0; first < hi; first += 2 * W) {                \
        const double *stretch = panels                                      \
            + (first / SKPERC_PANEL) * m * SKPERC_PANEL                     \
            + first % SKPERC_PANEL;                                         \
        skperc_v##W a[SKPERC_POINTS][2];                                    \
        double sums[2 * W];                                                 \
        for (int q = 0; q < SKPERC_POINTS; q++)                             \
            a[q][0] = a[q][1] = SKPERC_SPLAT##W(0.0);                       \
        for (Py_ssize_t j = 0; j < m; j++) {                                \
            const double *c = stretch + j * SKPERC_PANEL;                   \
            skperc_v##W c0 = skperc_load##W##_double(c);                    \
            skperc_v##W c1 = skperc_load##W##_double(c + W);                \
            for (int q = 0; q < SKPERC_POINTS; q++) {                       \
                skperc_v##W xv = SKPERC_SPLAT##W(x[q * x_stride + j]);      \
                a[q][0] += c0 * xv;                                         \
                a[q][1] += c1 * xv;                                         \
            }                                                               \
        }                                                                   \
        Py_ssize_t count = hi - first < 2 * W ? hi - first : 2 * W;         \
        for (int q = 0; q < SKPERC_POINTS; q++) {                           \
            memcpy(sums, a[q], sizeof sums);                                \
            memcpy(out + q * out_stride + first, sums,                      \
                   count * sizeof(double));                                 \
        }                                                                   \
    }

#define SKPERC_DOTS_PANELS_POINTS_KERNEL(NAME, TARGET, W)                   \
    TARGET static void NAME(const double *panels, Py_ssize_t hi,            \
                            Py_ssize_t m, const double *x,                  \
                            Py_ssize_t x_stride, double *out,               \
                            Py_ssize_t out_stride) {                        \
        SKPERC_DOTS_PANELS_POINTS_BODY(W)                                   \
    }

SKPERC_DOTS_PANELS_POINTS_KERNEL(skperc_dots_panels_points_avx2, SKPERC_AVX2, 4)
SKPERC_DOTS_PANELS_POINTS_KERNEL(skperc_dots_panels_points_avx512, SKPERC_AVX512, 8)
#endif

/* out[r] = rows[r] . x for the n rows of length m in C order, where
   panels would copy them first (the support against the few rows of a
   prediction): W rows in the lanes of a register, two registers side by
   side, each square of W rows by W features transposed in registers; the
   features past a multiple of W one at a time, and the rows past a
   multiple of W one at a time. Each sum is its row's own, in feature
   order, one rounding per multiplication and per addition: the bits of
   the products from panels. */
#define SKPERC_DOTS_ROWS_BODY(ROW_T, W)                                     \
    Py_ssize_t r = 0;                                                       \
    while (r + W <= n) {                                                    \
        const int groups = r + 2 * W <= n ? 2 : 1;                          \
        skperc_v##W a[2] = {SKPERC_SPLAT##W(0.0), SKPERC_SPLAT##W(0.0)};    \
        Py_ssize_t j = 0;                                                   \
        for (; j + W <= m; j += W)                                          \
            for (int g = 0; g < groups; g++) {                              \
                skperc_v##W v[W];                                           \
                for (int k = 0; k < W; k++)                                 \
                    v[k] = skperc_load##W##_##ROW_T(                        \
                        rows + (r + g * W + k) * m + j);                    \
                skperc_transpose##W(v);                                     \
                for (int f = 0; f < W; f++)                                 \
                    a[g] += v[f] * SKPERC_SPLAT##W(x[j + f]);               \
            }                                                               \
        for (; j < m; j++)                                                  \
            for (int g = 0; g < groups; g++) {                              \
                skperc_v##W c;                                              \
                for (int k = 0; k < W; k++)                                 \
                    c[k] = (double)rows[(r + g * W + k) * m + j];           \
                a[g] += c * SKPERC_SPLAT##W(x[j]);                          \
            }                                                               \
        memcpy(out + r, a, groups * sizeof a[0]);                           \
        r += groups * W;                                                    \
    }                                                                       \
    for (; r < n; r++) {                                                    \
        double sum = 0.0;                                                   \
        for (Py_ssize_t j = 0; j < m; j++)                                  \
            sum += (double)rows[r * m + j] * x[j];                          \
        out[r] = sum;                                                       \
    }

#ifdef SKPERC_HAVE_LANES
#define SKPERC_DOTS_ROWS_KERNEL(NAME, TARGET, ROW_T, W)                     \
    TARGET static void NAME(const ROW_T *rows, Py_ssize_t n, Py_ssize_t m,  \
                            const double *x, double *out) {                 \
        SKPERC_DOTS_ROWS_BODY(ROW_T, W)                                     \
    }

SKPERC_DOTS_ROWS_KERNEL(skperc_dots_rows_avx2, SKPERC_AVX2, double, 4)
SKPERC_DOTS_ROWS_KERNEL(skperc_dots_rows32_avx2, SKPERC_AVX2, float, 4)
SKPERC_DOTS_ROWS_KERNEL(skperc_dots_rows_avx512, SKPERC_AVX512, double, 8)
SKPERC_DOTS_ROWS_KERNEL(skperc_dots_rows32_avx512, SKPERC_AVX512, float, 8)
#endif

/* The features j < m where x[j] is not +0 (a value that is not 0, or -0),
   in increasing order, into features; returns their count. A product with
   -0 changes no sum, as one with +0; listing it too leaves +0 at every
   feature not listed, the row that a list of the budgeted loop describes.
   Eight values at a time are tested at once, the OR of their bits, as most
   of a sparse vector's are +0; the eight of a nonzero OR are listed without
   a branch, each feature written at the end of the list and counted if it
   is not +0 (the end is never past the values read: features needs room
   for m), where a branch on each is taken at random on a vector nonzero at
   about half its features: the merged vectors that the budgeted loop posts
   again on the text data of benchmarks/bench_kernel_scale.py (1,700 of
   3,000). Budgeted fits there (500, merge, one thread, alternating) took
   0.35 against 0.40 s at 10,000 examples and 0.89 against 0.96 s at
   40,000; 0.35 and 0.39 against 0.39 and 0.43 s on the hashed data. */
static Py_ssize_t skperc_nonzero_features(const double *x, Py_ssize_t m,
                                          int32_t *features) {
    Py_ssize_t count = 0, j = 0;
    for (; j + 8 <= m; j += 8) {
        uint64_t bits[8], any = 0;
        memcpy(bits, x + j, sizeof bits);
        for (int t = 0; t < 8; t++)
            any |= bits[t];
        if (any == 0)
            continue;
        for (int t = 0; t < 8; t++) {
            features[count] = (int32_t)(j + t);
            count += bits[t] != 0;
        }
    }
    for (; j < m; j++) {
        uint64_t bits;
        memcpy(&bits, x + j, sizeof bits);
        if (bits != 0)
            features[count++] = (int32_t)j;
    }
    return count;
}

/* Whether the products above run (else the loop computes one column at a
   time, from rows in C order). */
static int skperc_dots_many_supported(void) {
    return skperc_simd >= SKPERC_SIMD_AVX2;
}

/* Each function below runs at the level of simd.h, called only when
   skperc_dots_many_supported: NAME_avx512 or NAME_avx2 on ARGS. */
#ifdef SKPERC_HAVE_LANES
#define SKPERC_AT_LEVEL(NAME, ARGS)                                         \
    if (skperc_simd == SKPERC_SIMD_AVX512)                                  \
        NAME##_avx512 ARGS;                                                 \
    else                                                                    \
        NAME##_avx2 ARGS;
#else
#define SKPERC_AT_LEVEL(NAME, ARGS)
#endif

static void skperc_dots_many(const double *rows, Py_ssize_t n, Py_ssize_t m,
                             const double *xt, Py_ssize_t nu, double **out,
                             Py_ssize_t r0) {
    SKPERC_AT_LEVEL(skperc_dots_many, (rows, n, m, xt, nu, out, r0))
}

static void skperc_dots_many32(const float *rows, Py_ssize_t n, Py_ssize_t m,
                               const double *xt, Py_ssize_t nu, double **out,
                               Py_ssize_t r0, double *widened) {
    SKPERC_AT_LEVEL(skperc_dots_many32,
                    (rows, n, m, xt, nu, out, r0, widened))
}

static void skperc_dots_row(const double *row, Py_ssize_t m, const double *xt,
                            Py_ssize_t stride, Py_ssize_t nu, double *out) {
    SKPERC_AT_LEVEL(skperc_dots_row, (row, m, xt, stride, nu, out))
}

static void skperc_dots_row32(const float *row, Py_ssize_t m,
                              const double *xt, Py_ssize_t stride,
                              Py_ssize_t nu, double *out) {
    SKPERC_AT_LEVEL(skperc_dots_row32, (row, m, xt, stride, nu, out))
}

static void skperc_dots_rows(const double *rows, Py_ssize_t n, Py_ssize_t m,
                             const double *x, double *out) {
    SKPERC_AT_LEVEL(skperc_dots_rows, (rows, n, m, x, out))
}

static void skperc_dots_rows32(const float *rows, Py_ssize_t n, Py_ssize_t m,
                               const double *x, double *out) {
    SKPERC_AT_LEVEL(skperc_dots_rows32, (rows, n, m, x, out))
}

static void skperc_dots_panels(const double *panels, Py_ssize_t lo,
                               Py_ssize_t hi, Py_ssize_t m, const double *x,
                               double *out) {
    SKPERC_AT_LEVEL(skperc_dots_panels, (panels, lo, hi, m, x, out))
}

static void skperc_dots_panels_at(const double *panels, Py_ssize_t hi,
                                  Py_ssize_t m, const double *x,
                                  const int32_t *features,
                                  Py_ssize_t n_features, double *out) {
    SKPERC_AT_LEVEL(skperc_dots_panels_at,
                    (panels, hi, m, x, features, n_features, out))
}

static void skperc_dots_panels_points(const double *panels, Py_ssize_t hi,
                                      Py_ssize_t m, const double *x,
                                      Py_ssize_t x_stride, double *out,
                                      Py_ssize_t out_stride) {
    SKPERC_AT_LEVEL(skperc_dots_panels_points,
                    (panels, hi, m, x, x_stride, out, out_stride))
}

#endif
