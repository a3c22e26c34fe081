# cython: language_level=3
"""Rows of C-ordered dense or CSR data, float32 or float64, and the sums the
loops make over them.

Every sum runs in double precision in an order fixed by the feature indices
alone, so that dense and CSR rows give the same bits: the bit-for-bit
promise of the loops rests on it (and on compiling without contraction of
a * b + c into fused multiply-adds: see pyproject.toml).
"""

from libc.stdint cimport int32_t, int64_t

from ._overflow cimport finite

cdef extern from "lanes.h":
    void SKPERC_PREFETCH(const void* address) noexcept nogil
    void skperc_lanes_f32_i32(const float*, const int32_t*, Py_ssize_t,
                              const double*, Py_ssize_t, double*) noexcept nogil
    void skperc_lanes_f32_i64(const float*, const int64_t*, Py_ssize_t,
                              const double*, Py_ssize_t, double*) noexcept nogil
    void skperc_lanes_f64_i32(const double*, const int32_t*, Py_ssize_t,
                              const double*, Py_ssize_t, double*) noexcept nogil
    void skperc_lanes_f64_i64(const double*, const int64_t*, Py_ssize_t,
                              const double*, Py_ssize_t, double*) noexcept nogil

ctypedef fused floating:
    float
    double

ctypedef fused index_t:
    int32_t
    int64_t

# Each sum is a chain of dependent additions, so its latency, not memory,
# bounds a dot product; the kernels below run independent sums side by side.
# A multiclass block scores LANES problems at a time, each lane the
# sequential sum of one problem. A binary problem on float64 rows keeps the
# sequential sum (the rows stream from memory about as fast as it runs);
# on float32 rows it adds feature j into partial sum j % LANES and adds the
# partial sums in a fixed tree.
cdef enum:
    LANES = 8


cdef inline Py_ssize_t width_of(Py_ssize_t n_problems) noexcept nogil:
    """Columns of the weights: one problem alone, else whole lanes."""
    if n_problems == 1:
        return 1
    return (n_problems + LANES - 1) // LANES * LANES


cdef inline void row(const floating* data, const index_t* indices,
                     const index_t* indptr, Py_ssize_t i,
                     Py_ssize_t n_features, const floating** x,
                     const index_t** ind, Py_ssize_t* nnz) noexcept nogil:
    """The entries of row i (``ind`` NULL for dense rows)."""
    if indices == NULL:
        x[0] = data + i * n_features
        ind[0] = NULL
        nnz[0] = n_features
    else:
        x[0] = data + indptr[i]
        ind[0] = indices + indptr[i]
        nnz[0] = indptr[i + 1] - indptr[i]


cdef inline double dot(const floating* x, const index_t* ind, Py_ssize_t nnz,
                       const double* w) noexcept nogil:
    """w . x over the stored entries of x (``ind`` is NULL for dense x)."""
    cdef Py_ssize_t j, end
    cdef double s = 0.0
    cdef double part[LANES]
    if floating is double:
        if ind == NULL:
            for j in range(nnz):
                s += w[j] * x[j]
        else:
            for j in range(nnz):
                s += w[ind[j]] * x[j]
    else:
        for j in range(LANES):
            part[j] = 0.0
        if ind == NULL:
            end = nnz - nnz % LANES
            j = 0
            while j < end:
                part[0] += w[j] * <double>x[j]
                part[1] += w[j + 1] * <double>x[j + 1]
                part[2] += w[j + 2] * <double>x[j + 2]
                part[3] += w[j + 3] * <double>x[j + 3]
                part[4] += w[j + 4] * <double>x[j + 4]
                part[5] += w[j + 5] * <double>x[j + 5]
                part[6] += w[j + 6] * <double>x[j + 6]
                part[7] += w[j + 7] * <double>x[j + 7]
                j += LANES
            for j in range(end, nnz):
                part[j % LANES] += w[j] * <double>x[j]
        else:
            # the lane of a feature index, which is never negative, by its
            # low bits: C's signed % costs a sign correction an entry
            for j in range(nnz):
                part[<size_t>ind[j] & (LANES - 1)] += w[ind[j]] * <double>x[j]
        s = (((part[0] + part[1]) + (part[2] + part[3]))
             + ((part[4] + part[5]) + (part[6] + part[7])))
    return s


cdef inline double squared_norm(const floating* x,
                                Py_ssize_t nnz) noexcept nogil:
    """||x||^2, summed in order."""
    cdef Py_ssize_t j
    cdef double s = 0.0
    for j in range(nnz):
        s += <double>x[j] * <double>x[j]
    return s


cdef inline void scores_lanes(const floating* x, const index_t* ind,
                              Py_ssize_t nnz, const double* coef,
                              Py_ssize_t width, double* out) noexcept nogil:
    """out[c] = sum_j coef[j, c] x_j for the width (a multiple of LANES)
    columns of coef, each in feature order (src/lanes.h)."""
    if floating is float:
        if index_t is int32_t:
            skperc_lanes_f32_i32(x, ind, nnz, coef, width, out)
        else:
            skperc_lanes_f32_i64(x, ind, nnz, coef, width, out)
    else:
        if index_t is int32_t:
            skperc_lanes_f64_i32(x, ind, nnz, coef, width, out)
        else:
            skperc_lanes_f64_i64(x, ind, nnz, coef, width, out)


cdef inline void scores(const floating* x, const index_t* ind, Py_ssize_t nnz,
                        const double* coef, Py_ssize_t width,
                        double* out) noexcept nogil:
    """The decision values without intercept of the problems whose weights
    are the width columns of coef (width_of)."""
    if width == 1:
        out[0] = dot(x, ind, nnz, coef)
    else:
        scores_lanes(x, ind, nnz, coef, width, out)


cdef inline bint axpy(const floating* x, const index_t* ind, Py_ssize_t nnz,
                      double a, double* w, Py_ssize_t stride) noexcept nogil:
    """w[j * stride] += a x_j over the stored entries of x; False when a
    weight it wrote on a sparse row is not finite.

    A dense row is not checked here, which would slow the update: every
    weight enters the next decision value, where inf or NaN shows (inf
    times 0 is NaN), and the run's end checks the last weights."""
    cdef Py_ssize_t j
    cdef double v
    cdef int all_finite = 1
    if ind == NULL:
        for j in range(nnz):
            w[j * stride] += a * <double>x[j]
    else:
        for j in range(nnz):
            v = w[ind[j] * stride] + a * <double>x[j]
            w[ind[j] * stride] = v
            all_finite &= finite(v)
    return all_finite
