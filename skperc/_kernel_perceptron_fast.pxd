# cython: language_level=3
"""What the compiled loops of the kernel perceptron share: the kernel and
its values over rows, the threads of a step, the examination of an example.

The loop of kernel columns (_kernel_perceptron_fast.pyx) defines the
functions declared here; the budgeted loop (_kernel_budget_fast.pyx)
cimports them. The headers' SIMD level is a static variable of each module
that includes simd.h: each sets its own, to the same level (SIMD_LEVEL).
"""

from cpython.ref cimport PyObject
from libc.stdint cimport int32_t, int64_t, uintptr_t

from ._epochs cimport Epochs
from ._rows cimport floating

cdef extern from "simd.h":
    enum:
        SKPERC_SIMD_NONE
        SKPERC_SIMD_AVX2
        SKPERC_SIMD_AVX512
    int skperc_set_simd(int highest) noexcept nogil

cdef extern from "openmp_runtime.h":
    double skperc_wall() noexcept nogil
    int skperc_thread_limit() noexcept nogil

cdef extern from "rbf.h":
    void skperc_rbf(double* out, const double* sq_norms, double sq_norm_j,
                    double gamma, Py_ssize_t n) noexcept nogil
    void skperc_rbf_row(double* out, const double* sq_norms, double sq_norm_r,
                        double gamma, Py_ssize_t n) noexcept nogil
    double skperc_exp_one(double x) noexcept nogil

cdef extern from "poly.h":
    void skperc_poly(double* out, Py_ssize_t n, double gamma, double coef0,
                     int degree) noexcept nogil

cdef extern from "cosine.h":
    void skperc_cosine(double* out, const double* sq_norms, double sq_norm_x,
                       Py_ssize_t n) noexcept nogil

cdef extern from "columns.h":
    bint skperc_all_finite(const double* values, Py_ssize_t n) noexcept nogil
    void skperc_add(double a, const double* column, double* f,
                    Py_ssize_t n) noexcept nogil
    void skperc_add_two(double a, double b, const double* column, double* f,
                        double* g, Py_ssize_t n) noexcept nogil

cdef extern from "dots.h":
    int skperc_dots_many_supported() noexcept nogil
    Py_ssize_t SKPERC_LANES8(Py_ssize_t nu) noexcept nogil
    void skperc_dots_many(const double* rows, Py_ssize_t n, Py_ssize_t m,
                          const double* xt, Py_ssize_t nu, double** out,
                          Py_ssize_t r0) noexcept nogil
    enum: SKPERC_WIDENED_ROWS
    void skperc_dots_many32(const float* rows, Py_ssize_t n, Py_ssize_t m,
                            const double* xt, Py_ssize_t nu, double** out,
                            Py_ssize_t r0, double* widened) noexcept nogil
    void skperc_dots_row(const double* row, Py_ssize_t m, const double* xt,
                         Py_ssize_t stride, Py_ssize_t nu,
                         double* out) noexcept nogil
    void skperc_dots_row32(const float* row, Py_ssize_t m, const double* xt,
                           Py_ssize_t stride, Py_ssize_t nu,
                           double* out) noexcept nogil
    void skperc_dots_rows(const double* rows, Py_ssize_t n, Py_ssize_t m,
                          const double* x, double* out) noexcept nogil
    void skperc_dots_rows32(const float* rows, Py_ssize_t n, Py_ssize_t m,
                            const double* x, double* out) noexcept nogil
    enum: SKPERC_PANEL
    void skperc_dots_panels(const double* panels, Py_ssize_t lo,
                            Py_ssize_t hi, Py_ssize_t m, const double* x,
                            double* out) noexcept nogil
    void skperc_dots_panels_at(const double* panels, Py_ssize_t hi,
                               Py_ssize_t m, const double* x,
                               const int32_t* features, Py_ssize_t n_features,
                               double* out) noexcept nogil
    Py_ssize_t skperc_nonzero_features(const double* x, Py_ssize_t m,
                                       int32_t* features) noexcept nogil
    enum: SKPERC_POINTS
    void skperc_dots_panels_points(const double* panels, Py_ssize_t hi,
                                   Py_ssize_t m, const double* x,
                                   Py_ssize_t x_stride, double* out,
                                   Py_ssize_t out_stride) noexcept nogil


# The fewest rows of a kernel column that a thread takes: below, starting
# and waiting for the threads costs more than it saves. Measured on two
# cores, per update of a binary fit: a column of 4,096 rows split in two
# took 0.92 times the time of one thread when held in the cache (5
# features: an addition per row), 1.5 times when computed; from 8,192 rows
# up, 1.3 to 2 times. Kernel rows over a support (the budgeted blocks,
# kernel_products) count their kernel values, rows times support vectors,
# the same way.
cdef enum:
    ROWS_PER_THREAD = 4096

# The kernels the loop computes itself; KERNEL_PYTHON calls back to Python.
cpdef enum KernelKind:
    KERNEL_PYTHON = 0
    KERNEL_LINEAR = 1
    KERNEL_POLY = 2
    KERNEL_RBF = 3
    KERNEL_SIGMOID = 4
    KERNEL_PRECOMPUTED = 5
    KERNEL_COSINE = 6


# The parameters of a kernel.
cdef struct KernelSpec:
    int kind
    double gamma
    double coef0
    double degree


cdef struct Kernel:
    int kind
    double gamma
    double coef0
    double degree
    # The points: dense float64 or float32 rows in C order (rows, rows32),
    # or CSR rows (indptr, indices and values or values32, NULL without
    # stored values); the Gram matrix in rows for KERNEL_PRECOMPUTED. The
    # pointers not used are NULL.
    const double* rows
    const float* rows32
    const double* values
    const float* values32
    const int32_t* indices
    const int32_t* indptr
    int n_columns             # features, or points for KERNEL_PRECOMPUTED
    # The dense rows again, in feature-major panels of SKPERC_PANEL rows,
    # for the products of one point with many rows in vector lanes
    # (dots.h); NULL unless the training loop set them (_set_panels).
    const double* panels
    # The CSR rows again, by feature (CSC, values in their own type): at
    # feature f, the rows by_feature_rows[by_feature_starts[f]:
    # by_feature_starts[f + 1]] (increasing) and their values, for the
    # columns of the training loop (_posted_column); NULL unless it set
    # them (_set_by_feature).
    const int64_t* by_feature_starts
    const int32_t* by_feature_rows
    const double* by_feature_values
    const float* by_feature_values32
    double* x                 # (n_columns,) scratch: a point as float64
    const double* sq_norms    # ||x_r||^2, for KERNEL_RBF and KERNEL_COSINE
    PyObject* compute         # compute(j, slot), for KERNEL_PYTHON


# The threads of the parallel steps of an epoch, which go on one thread
# while they lose time waiting for each other (see CONTENTION_WAIT in
# _kernel_perceptron_fast.pyx).
cdef struct Threads:
    Py_ssize_t n              # the most that a step of the loop runs on
    # whether the steps run on one until retry_at: kept, not read off the
    # clock at each step, so that a fit on one thread reads no clock
    bint alone
    double* busy              # (n,): the seconds each worked in this step
    double started            # when this step started
    double waited             # the seconds lost (saved: < 0) in the count
    double retry_at           # when the threads are tried again
    double alone_for          # a loss's seconds on one thread, per s lost


cdef inline Py_ssize_t _threads(Threads* threads) noexcept nogil:
    """The threads that the next step may run on."""
    if threads.alone and skperc_wall() >= threads.retry_at:
        threads.alone = False
        threads.waited = 0.0
    return 1 if threads.alone else threads.n


cdef inline void _start_step(Threads* threads, Py_ssize_t n) noexcept nogil:
    """Before a step on n > 1 threads, which add their working seconds to
    threads.busy[threadid()]."""
    cdef Py_ssize_t t
    for t in range(n):
        threads.busy[t] = 0.0
    threads.started = skperc_wall()


cdef inline Py_ssize_t _n_blocks(Py_ssize_t n_threads,
                                 Py_ssize_t n) noexcept nogil:
    """The threads that share n kernel values (a column of n rows, or
    kernel rows over a support of n values in all): n_threads at most, and
    no more than give each ROWS_PER_THREAD of them."""
    return max(1, min(n_threads, n // ROWS_PER_THREAD))


cdef inline Py_ssize_t _block_start(Py_ssize_t n, Py_ssize_t n_blocks,
                                    Py_ssize_t t,
                                    Py_ssize_t multiple=8) noexcept nogil:
    """The first row of block t of n rows cut in n_blocks (n for t =
    n_blocks): a multiple of ``multiple`` rows, 8 so that no two threads
    write to one cache line of float64 values (SKPERC_PANEL for blocks that
    begin on a panel)."""
    if t >= n_blocks:
        return n
    return n * t // n_blocks // multiple * multiple


cdef inline bint _any_nan(const double* values, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t r
    for r in range(n):
        if values[r] != values[r]:
            return True
    return False


cdef extern from "Python.h":
    # both take the locks they need, the GIL too (CPython's tracemalloc):
    # callable from a loop that released it
    int PyTraceMalloc_Track(unsigned int domain, uintptr_t ptr,
                            size_t size) noexcept nogil
    int PyTraceMalloc_Untrack(unsigned int domain,
                              uintptr_t ptr) noexcept nogil


# numpy's tracemalloc domain: the cache is counted like numpy's own arrays.
cdef enum:
    _NUMPY_DOMAIN = 389047


# The sums of products, inlined where the loops call them.
cdef inline void _dots_at(const floating* rows, const int64_t* at,
                          Py_ssize_t n, Py_ssize_t m, const double* x,
                          double* out) noexcept nogil:
    """out[r] = rows[at[r]] . x for n dense rows of length m (rows[r] for
    ``at`` NULL), each summed in feature order in double precision; 8 rows at
    a time, as 8 independent sums, where one sum waits on each of its
    additions. (A BLAS gemv does the same work, but hands it to threads
    whose start and wait cost more than the sums on rows this short.)"""
    cdef Py_ssize_t r, j, k, end = n - n % 8
    cdef const floating* row[8]
    cdef double a0, a1, a2, a3, a4, a5, a6, a7, xj
    for r in range(0, end, 8):
        for k in range(8):
            row[k] = rows + (at[r + k] if at != NULL else r + k) * m
        a0 = a1 = a2 = a3 = a4 = a5 = a6 = a7 = 0.0
        for j in range(m):
            xj = x[j]
            a0 += <double>row[0][j] * xj
            a1 += <double>row[1][j] * xj
            a2 += <double>row[2][j] * xj
            a3 += <double>row[3][j] * xj
            a4 += <double>row[4][j] * xj
            a5 += <double>row[5][j] * xj
            a6 += <double>row[6][j] * xj
            a7 += <double>row[7][j] * xj
        out[r] = a0
        out[r + 1] = a1
        out[r + 2] = a2
        out[r + 3] = a3
        out[r + 4] = a4
        out[r + 5] = a5
        out[r + 6] = a6
        out[r + 7] = a7
    for r in range(end, n):
        row[0] = rows + (at[r] if at != NULL else r) * m
        a0 = 0.0
        for j in range(m):
            a0 += <double>row[0][j] * x[j]
        out[r] = a0


cdef inline void _dots_over(const double* rows, const int64_t* at,
                            Py_ssize_t n, Py_ssize_t m, const double* x,
                            const int32_t* features, Py_ssize_t n_features,
                            double* out) noexcept nogil:
    """_dots_at over the features listed (in increasing order) where x may
    not be 0, or every feature for ``features`` NULL: each row's sum in
    feature order but for products with a 0 of x, which change no sum of
    finite rows (one that starts at +0 is never -0): the same bits in
    O(n_features) per row."""
    cdef Py_ssize_t r, t
    cdef const double* row
    cdef double total
    if features == NULL:
        _dots_at(rows, at, n, m, x, out)
        return
    for r in range(n):
        row = rows + (at[r] if at != NULL else r) * m
        total = 0.0
        for t in range(n_features):
            total += row[features[t]] * x[features[t]]
        out[r] = total


cdef inline double _weighted_sum(const double* a, const double* v,
                                 Py_ssize_t n) noexcept nogil:
    """sum_s a[s] v[s] as 8 independent sums, of the slots s = l (mod 8)
    each in order, added pairwise ((0+1)+(2+3))+((4+5)+(6+7)), and the last
    n % 8 in order: the same bits on every machine, where one sum in order
    waits on each of its additions (the budgeted loop's decision value, a
    sum over the support for each example it examines)."""
    cdef Py_ssize_t s, end = n - n % 8
    cdef double a0 = 0.0, a1 = 0.0, a2 = 0.0, a3 = 0.0
    cdef double a4 = 0.0, a5 = 0.0, a6 = 0.0, a7 = 0.0, total
    for s in range(0, end, 8):
        a0 += a[s] * v[s]
        a1 += a[s + 1] * v[s + 1]
        a2 += a[s + 2] * v[s + 2]
        a3 += a[s + 3] * v[s + 3]
        a4 += a[s + 4] * v[s + 4]
        a5 += a[s + 5] * v[s + 5]
        a6 += a[s + 6] * v[s + 6]
        a7 += a[s + 7] * v[s + 7]
    total = ((a0 + a1) + (a2 + a3)) + ((a4 + a5) + (a6 + a7))
    for s in range(end, n):
        total += a[s] * v[s]
    return total


# The functions of the loop of columns that the budgeted loop calls.

# kernel values
cdef void _point(const Kernel* kernel, Py_ssize_t j, double* x,
                 bint on_zeros=*) noexcept nogil
cdef void _kernel_row(const Kernel* kernel, const double* rows,
                      const double* sq_norms, Py_ssize_t n, const double* x,
                      double sq_norm_x, double* out) noexcept nogil
cdef void _apply_kernel(const Kernel* kernel, const double* sq_norms,
                        Py_ssize_t n, double sq_norm_x,
                        double* out) noexcept nogil
cdef object _set_kernel(Kernel* kernel, object rows,
                        const double[::1] sq_norms, KernelSpec spec,
                        object compute, double[::1] scratch)

# the threads of a step
cdef void _begin_epoch_threads(Threads* threads) noexcept nogil
cdef object _start_threads(Threads* threads, double[::1] busy, state)
cdef void _keep_threads(const Threads* threads, double[::1] state) noexcept
cdef void _end_step(Threads* threads, Py_ssize_t n) noexcept nogil

# an example's examination, and the memory of the loops
cdef int _see_norm(Epochs* e, double norm2) except -1 nogil
cdef int _examine(Epochs* e, Py_ssize_t c, Py_ssize_t i, double yc,
                  double value, double weight, double* delta,
                  double* delta_avg) except -1 nogil
cdef void _free_traced(void* data) noexcept nogil
