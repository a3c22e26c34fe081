/* Products of rows and points in the lanes of AVX2 registers, for the
   kernel perceptron's columns: a block of rows with several points at once,
   each row read once for all of them; or one point with rows stored in
   feature-major panels, a panel's rows at once. Each product is summed in
   feature order, one rounding per multiplication and per addition, as the
   loop's one-column sums are: the same bits. */
#ifndef SKPERC_DOTS_H
#define SKPERC_DOTS_H

#include <string.h>
#include <Python.h>

/* out[u][r0 + r] = rows[r] . x_u for the n rows of length m and the nu
   points, the points given feature-major: xt[j * nu + u] = x_u[j]. */
#define SKPERC_DOTS_MANY_BODY(ROW_T)                                        \
    for (Py_ssize_t r = 0; r < n; r++) {                                    \
        const ROW_T *row = rows + r * m;                                    \
        Py_ssize_t u = 0;                                                   \
        for (; u + 8 <= nu; u += 8) {                                       \
            skperc_v4 a0 = {0.0, 0.0, 0.0, 0.0}, a1 = a0;                  \
            for (Py_ssize_t j = 0; j < m; j++) {                            \
                double v = (double)row[j];                                  \
                skperc_v4 vv = {v, v, v, v}, x0, x1;                        \
                memcpy(&x0, xt + j * nu + u, sizeof x0);                    \
                memcpy(&x1, xt + j * nu + u + 4, sizeof x1);                \
                a0 += vv * x0;                                              \
                a1 += vv * x1;                                              \
            }                                                               \
            for (int t = 0; t < 4; t++) {                                   \
                out[u + t][r0 + r] = a0[t];                                 \
                out[u + 4 + t][r0 + r] = a1[t];                             \
            }                                                               \
        }                                                                   \
        for (; u < nu; u++) {                                               \
            double a = 0.0;                                                 \
            for (Py_ssize_t j = 0; j < m; j++)                              \
                a += (double)row[j] * xt[j * nu + u];                       \
            out[u][r0 + r] = a;                                             \
        }                                                                   \
    }

#if (defined(__GNUC__) || defined(__clang__)) && defined(__x86_64__)
#define SKPERC_HAVE_DOTS_MANY 1
typedef double skperc_v4 __attribute__((vector_size(32)));

__attribute__((target("avx2")))
static void skperc_dots_many_avx2(const double *rows, Py_ssize_t n,
                                  Py_ssize_t m, const double *xt,
                                  Py_ssize_t nu, double **out,
                                  Py_ssize_t r0) {
    SKPERC_DOTS_MANY_BODY(double)
}

__attribute__((target("avx2")))
static void skperc_dots_many_avx2_32(const float *rows, Py_ssize_t n,
                                     Py_ssize_t m, const double *xt,
                                     Py_ssize_t nu, double **out,
                                     Py_ssize_t r0) {
    SKPERC_DOTS_MANY_BODY(float)
}
#endif

/* out[r - lo] = x_r . x for the rows lo <= r < hi, stored in panels of
   SKPERC_PANEL rows, each panel feature-major (panels[(p * m + j) *
   SKPERC_PANEL + t] = x_{p * SKPERC_PANEL + t}[j], the last panel padded
   with zeros): a panel's rows in the lanes of eight AVX2 registers, read
   in the order of memory. Each product is summed in feature order, one
   rounding per multiplication and per addition, as the loop's row-major
   sums are: the same bits. */
#define SKPERC_PANEL 32

#define SKPERC_DOTS_PANELS_BODY(COL_T)                                      \
    for (Py_ssize_t p = lo / SKPERC_PANEL; p * SKPERC_PANEL < hi; p++) {    \
        const COL_T *panel = panels + p * m * SKPERC_PANEL;                 \
        skperc_v4 a[SKPERC_PANEL / 4];                                      \
        double sums[SKPERC_PANEL];                                          \
        for (int t = 0; t < SKPERC_PANEL / 4; t++)                          \
            a[t] = (skperc_v4){0.0, 0.0, 0.0, 0.0};                         \
        for (Py_ssize_t j = 0; j < m; j++) {                                \
            const COL_T *c = panel + j * SKPERC_PANEL;                      \
            double v = x[j];                                                \
            skperc_v4 xv = {v, v, v, v};                                    \
            for (int t = 0; t < SKPERC_PANEL / 4; t++)                      \
                a[t] += SKPERC_LOAD4_##COL_T(c + 4 * t) * xv;               \
        }                                                                   \
        memcpy(sums, a, sizeof sums);                                       \
        Py_ssize_t first = p * SKPERC_PANEL > lo ? p * SKPERC_PANEL : lo;   \
        Py_ssize_t last = (p + 1) * SKPERC_PANEL < hi                       \
                              ? (p + 1) * SKPERC_PANEL : hi;                \
        memcpy(out + (first - lo), sums + (first - p * SKPERC_PANEL),       \
               (last - first) * sizeof(double));                            \
    }

#ifdef SKPERC_HAVE_DOTS_MANY
typedef float skperc_f4 __attribute__((vector_size(16)));

static inline __attribute__((target("avx2"), always_inline))
skperc_v4 SKPERC_LOAD4_double(const double *p) {
    skperc_v4 v;
    memcpy(&v, p, sizeof v);
    return v;
}

static inline __attribute__((target("avx2"), always_inline))
skperc_v4 SKPERC_LOAD4_float(const float *p) {
    skperc_f4 v;
    memcpy(&v, p, sizeof v);
    return __builtin_convertvector(v, skperc_v4);
}

__attribute__((target("avx2")))
static void skperc_dots_panels_avx2(const double *panels, Py_ssize_t lo,
                                    Py_ssize_t hi, Py_ssize_t m,
                                    const double *x, double *out) {
    SKPERC_DOTS_PANELS_BODY(double)
}

__attribute__((target("avx2")))
static void skperc_dots_panels_avx2_32(const float *panels, Py_ssize_t lo,
                                       Py_ssize_t hi, Py_ssize_t m,
                                       const double *x, double *out) {
    SKPERC_DOTS_PANELS_BODY(float)
}
#endif

/* Whether the processor runs the products above (else the loop computes
   one column at a time, from rows in C order). */
static int skperc_dots_many_supported(void) {
#ifdef SKPERC_HAVE_DOTS_MANY
    return __builtin_cpu_supports("avx2");
#else
    return 0;
#endif
}

static void skperc_dots_many(const double *rows, Py_ssize_t n, Py_ssize_t m,
                             const double *xt, Py_ssize_t nu, double **out,
                             Py_ssize_t r0) {
#ifdef SKPERC_HAVE_DOTS_MANY
    skperc_dots_many_avx2(rows, n, m, xt, nu, out, r0);
#endif
}

static void skperc_dots_many32(const float *rows, Py_ssize_t n, Py_ssize_t m,
                               const double *xt, Py_ssize_t nu, double **out,
                               Py_ssize_t r0) {
#ifdef SKPERC_HAVE_DOTS_MANY
    skperc_dots_many_avx2_32(rows, n, m, xt, nu, out, r0);
#endif
}

static void skperc_dots_panels(const double *panels, Py_ssize_t lo,
                               Py_ssize_t hi, Py_ssize_t m, const double *x,
                               double *out) {
#ifdef SKPERC_HAVE_DOTS_MANY
    skperc_dots_panels_avx2(panels, lo, hi, m, x, out);
#endif
}

static void skperc_dots_panels32(const float *panels, Py_ssize_t lo,
                                 Py_ssize_t hi, Py_ssize_t m, const double *x,
                                 double *out) {
#ifdef SKPERC_HAVE_DOTS_MANY
    skperc_dots_panels_avx2_32(panels, lo, hi, m, x, out);
#endif
}

#endif
