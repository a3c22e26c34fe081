# cython: language_level=3, boundscheck=False, wraparound=False
# cython: cdivision=True, initializedcheck=False
"""Compiled epochs of the kernel perceptron.

The loop keeps the decision value of every point it holds, ``f[c, r]`` for
each one-vs-rest problem ``c``, and the dual coefficients ``coef[c, r]``.
Examining an example reads its decision values only; an update adds the
kernel column of the updated example, ``k(x_r, x_i)`` over the points
``r``, into them: one column serves every problem the example updates, and
no kernel value is computed for an example that makes no update. Columns
are kept in a cache of ``n_slots`` columns, so that an example that updates
again costs an addition only; once it is full, the cache keeps the columns
it holds, and the column of another example is computed where it is added,
a part at a time, and not kept (see ColumnCache).

The points are the examples visited (in ``visit``) and the support vectors
of earlier calls, which are not visited but whose decision values must
follow the function, for the norm ``||w||^2 = sum_r coef[c, r] f[c, r]``.

The budgeted loop, which keeps the support vectors themselves, is
_kernel_budget_fast.pyx; what the two share is declared in
_kernel_perceptron_fast.pxd.
"""

from cpython.ref cimport PyObject
from cython.parallel cimport prange, threadid
from cython.view cimport array as c_array
from libc.math cimport pow, sqrt, tanh
from libc.stdint cimport int32_t, int64_t, uintptr_t
from libc.stdlib cimport calloc, free, malloc
from libc.string cimport memcpy, memset

import os
import warnings

import numpy as np

from ._margin_perceptron_fast import check_rows

from ._epochs cimport (
    CHECK_EVERY, Control, Epochs, active, after_update, begin_epoch,
    close_epochs, count_update, end_epoch, interrupted, observe, open_epochs,
    rule_on, see_radius, start_run,
)
from ._overflow cimport (
    DECISION_VALUE, KERNEL_NAN, KERNEL_VALUE, fail, finite,
)
from ._rows cimport floating, row, squared_norm
from ._thresholds cimport Threshold, read_threshold

# The vector instructions of the products (src/simd.h): the processor's
# best, less those named in SKPERC_DISABLE_CPU_FEATURES at import, as numpy
# reads NPY_DISABLE_CPU_FEATURES. Every level gives the same bits, so that
# one machine can test them all.
_SIMD_NAMES = {SKPERC_SIMD_NONE: "none", SKPERC_SIMD_AVX2: "AVX2",
               SKPERC_SIMD_AVX512: "AVX512F"}


def _highest_simd(disabled):
    """The highest level that the names in ``disabled`` leave."""
    names = set(disabled.replace(",", " ").upper().split())
    unknown = names - {"AVX2", "AVX512F"}
    if unknown:
        warnings.warn(
            f"SKPERC_DISABLE_CPU_FEATURES: {', '.join(sorted(unknown))} "
            "unknown; the features that can be disabled are AVX2 and "
            "AVX512F.", RuntimeWarning, stacklevel=2)
    if "AVX2" in names:
        return SKPERC_SIMD_NONE
    if "AVX512F" in names:
        return SKPERC_SIMD_AVX2
    return SKPERC_SIMD_AVX512


# The level that the products run on, which the budgeted loop sets in its
# own copy of simd.h; SIMD names it: "none", "AVX2" or "AVX512F".
SIMD_LEVEL = skperc_set_simd(
    _highest_simd(os.environ.get("SKPERC_DISABLE_CPU_FEATURES", "")))
SIMD = _SIMD_NAMES[SIMD_LEVEL]


def openmp_thread_limit():
    """The threads that the OpenMP runtime gives a parallel region by
    default: omp_get_max_threads, which OMP_NUM_THREADS and threadpoolctl
    set (joblib's process workers set OMP_NUM_THREADS to their share of the
    processors); 0 in a build without OpenMP."""
    return skperc_thread_limit()


cdef struct Cache:
    double* columns           # (n_slots, n_points)
    double* scratch           # (n_points,): a column that the cache does not keep
    bint finite_columns       # whether every column computed was finite
    bint nan_column           # whether a column that was not held NaN
    Py_ssize_t n_points
    Py_ssize_t n_slots
    Py_ssize_t n_used
    int64_t* slot_of          # (n_points,): the slot of a point's column, or -1
    Threads* threads          # that compute and add a column (_add_column)
    unsigned char* flags      # (2 threads.n,) scratch of _add_column


cdef struct Model:
    Py_ssize_t n_problems
    Py_ssize_t n_points
    int32_t first_class
    double* f                 # (n_problems, n_points)
    double* g                 # like f, the lazy-average accumulators, or NULL
    double* coef              # (n_problems, n_points)
    double* avg_coef          # like coef, or NULL without averaging
    int64_t* queue            # (n_points,): a ring of the support, oldest first
    Py_ssize_t queue_start
    Py_ssize_t n_support
    unsigned char* in_support
    Py_ssize_t budget         # 0: no budget
    Py_ssize_t cap            # 0: none; else the support stays below it
    double* removal           # (2, n_problems) scratch of _forget_oldest
    # the snapshots w_1 and w_r of the stopping rule (NULL with it off),
    # as their coefficients and decision values on the points:
    double* snap_coef         # (2, n_problems, n_points)
    double* snap_f            # (2, n_problems, n_points)


cdef void _dots(const floating* rows, Py_ssize_t n, Py_ssize_t m,
                const double* x, double* out) noexcept nogil:
    """out[r] = rows[r] . x for the n dense rows of length m (_dots_at)."""
    _dots_at(rows, NULL, n, m, x, out)


cdef void _sparse_dots(const floating* values, const int32_t* indices,
                       const int32_t* indptr, Py_ssize_t n, const double* x,
                       double* out) noexcept nogil:
    """out[r] = rows[r] . x for the n CSR rows (sorted, unique indices),
    each summed over its stored entries in feature order: the sum of the
    dense rows but for the zero products, which change no sum (but the sign
    of a zero one)."""
    cdef Py_ssize_t r, p
    cdef double total
    for r in range(n):
        total = 0.0
        for p in range(indptr[r], indptr[r + 1]):
            total += <double>values[p] * x[indices[p]]
        out[r] = total


cdef inline void _load_point(const floating* data, const int32_t* indices,
                             const int32_t* indptr, Py_ssize_t i,
                             Py_ssize_t d, double* out,
                             bint on_zeros) noexcept nogil:
    """out: row i of dense or CSR rows (indices NULL for dense rows) as d
    float64 values; a CSR row writes its stored entries alone if out holds
    zeros already (``on_zeros``)."""
    cdef const floating* x
    cdef const int32_t* ind
    cdef Py_ssize_t j, nnz
    row(data, indices, indptr, i, d, &x, &ind, &nnz)
    if ind == NULL:
        for j in range(nnz):
            out[j] = <double>x[j]
    else:
        if not on_zeros:
            memset(out, 0, d * sizeof(double))
        for j in range(nnz):
            # duplicate entries add up, as in scipy
            out[ind[j]] += <double>x[j]


cdef void _point(const Kernel* kernel, Py_ssize_t j, double* x,
                 bint on_zeros=False) noexcept nogil:
    """x: point j of the kernel's rows as n_columns float64 values. With
    ``on_zeros`` (x holds zeros) a CSR point costs its stored entries, not
    n_columns; _clear_point zeros them again."""
    cdef Py_ssize_t m = kernel.n_columns
    if kernel.values32 != NULL:
        _load_point(kernel.values32, kernel.indices, kernel.indptr, j, m, x,
                    on_zeros)
    elif kernel.indptr != NULL:
        _load_point(kernel.values, kernel.indices, kernel.indptr, j, m, x,
                    on_zeros)
    elif kernel.rows32 != NULL:
        _load_point(kernel.rows32, <const int32_t*>NULL,
                    <const int32_t*>NULL, j, m, x, False)
    else:
        memcpy(x, kernel.rows + j * m, m * sizeof(double))


cdef void _row_dots(const Kernel* kernel, Py_ssize_t lo, Py_ssize_t hi,
                    const double* x, double* out) noexcept nogil:
    """out[r] = x_r . x for the points lo <= r < hi: O(n_features) per
    dense row, O(its stored entries) per CSR row, the same bits either way
    and whatever the range (each row is a sum of its own)."""
    cdef Py_ssize_t m = kernel.n_columns
    if kernel.panels != NULL:
        skperc_dots_panels(kernel.panels, lo, hi, m, x, out + lo)
    elif kernel.values32 != NULL:
        _sparse_dots(kernel.values32, kernel.indices, kernel.indptr + lo,
                     hi - lo, x, out + lo)
    elif kernel.indptr != NULL:
        _sparse_dots(kernel.values, kernel.indices, kernel.indptr + lo,
                     hi - lo, x, out + lo)
    elif kernel.rows32 != NULL and skperc_dots_many_supported():
        skperc_dots_rows32(kernel.rows32 + lo * m, hi - lo, m, x, out + lo)
    elif kernel.rows32 != NULL:
        _dots(kernel.rows32 + lo * m, hi - lo, m, x, out + lo)
    elif skperc_dots_many_supported():
        skperc_dots_rows(kernel.rows + lo * m, hi - lo, m, x, out + lo)
    else:
        _dots(kernel.rows + lo * m, hi - lo, m, x, out + lo)


cdef const double* _column_point(const Kernel* kernel,
                                Py_ssize_t j) noexcept nogil:
    """Point j as float64 values, for the products of its kernel column (a
    kernel computed on the features): its own row of dense float64 rows,
    else a copy in kernel.x; NULL for CSR rows read by feature, whose
    column reads point j's stored entries (_posted_column)."""
    if kernel.rows != NULL:
        return kernel.rows + j * kernel.n_columns
    if kernel.by_feature_starts != NULL:
        return NULL
    _point(kernel, j, kernel.x)
    return kernel.x


cdef inline Py_ssize_t _first_row_from(const int32_t* rows, Py_ssize_t start,
                                       Py_ssize_t end,
                                       Py_ssize_t lo) noexcept nogil:
    """The first place p in start <= p < end of increasing rows where
    rows[p] >= lo (end if none)."""
    cdef Py_ssize_t middle
    while start < end:
        middle = (start + end) // 2
        if rows[middle] < lo:
            start = middle + 1
        else:
            end = middle
    return start


cdef inline void _add_feature(const floating* values, const int32_t* rows,
                              Py_ssize_t start, Py_ssize_t end, Py_ssize_t hi,
                              double xf, double* out) noexcept nogil:
    """out[r] += x_r[f] xf for the rows (or slots) r < hi stored at a
    feature f, at rows[start:end] (increasing) with their values."""
    cdef Py_ssize_t e
    for e in range(start, end):
        if rows[e] >= hi:
            break
        out[rows[e]] += <double>values[e] * xf


cdef void _posted_column(const Kernel* kernel, Py_ssize_t j, double* out,
                         Py_ssize_t lo, Py_ssize_t hi) noexcept nogil:
    """out[r] = x_r . x_j for the CSR points lo <= r < hi, read by feature:
    at each feature f of point j, in order, the rows stored at f. It costs
    the entries of the rows at point j's features, where _sparse_dots costs
    every entry of the rows. The sums of _sparse_dots, in feature order but
    for the products with a 0 of point j, which change no sum (one that
    starts at +0 is never -0): the same bits."""
    cdef Py_ssize_t t, f, start, end
    cdef double xf
    cdef const int32_t* rows = kernel.by_feature_rows
    memset(out + lo, 0, (hi - lo) * sizeof(double))
    for t in range(kernel.indptr[j], kernel.indptr[j + 1]):
        f = kernel.indices[t]
        start = kernel.by_feature_starts[f]
        end = kernel.by_feature_starts[f + 1]
        if lo > 0:
            start = _first_row_from(rows, start, end, lo)
        if kernel.values32 != NULL:
            _add_feature(kernel.by_feature_values32, rows, start, end, hi,
                         <double>kernel.values32[t], out)
        else:
            _add_feature(kernel.by_feature_values, rows, start, end, hi,
                         kernel.values[t], out)


cdef object _set_by_feature(Kernel* kernel, object rows):
    """Give the kernel a copy of its CSR rows by feature (CSC, values in
    their own type), returned to be kept alive while the kernel reads
    it."""
    cdef const int64_t[::1] starts
    cdef const int32_t[::1] at
    cdef const double[::1] values
    cdef const float[::1] values32
    by_feature = rows.tocsc()
    # one past the entries: rows of no entries have an address
    copy = (
        by_feature.indptr.astype(np.int64),
        np.append(by_feature.indices, 0).astype(np.int32, copy=False),
        np.append(by_feature.data, 0).astype(rows.dtype, copy=False),
    )
    starts = copy[0]
    at = copy[1]
    kernel.by_feature_starts = &starts[0]
    kernel.by_feature_rows = &at[0]
    if rows.dtype == np.float32:
        values32 = copy[2]
        kernel.by_feature_values32 = &values32[0]
    else:
        values = copy[2]
        kernel.by_feature_values = &values[0]
    return copy


cdef void _column_rows(const Kernel* kernel, Py_ssize_t j, const double* x,
                       double* out, Py_ssize_t lo, Py_ssize_t hi) noexcept nogil:
    """out[r] = k(x_r, x_j) for the points lo <= r < hi, x being point j
    from _column_point (not read by feature), with a kernel that the loop
    computes (not KERNEL_PYTHON)."""
    cdef Py_ssize_t r
    cdef Py_ssize_t m = kernel.n_columns
    if kernel.kind == KERNEL_PRECOMPUTED:
        for r in range(lo, hi):
            out[r] = kernel.rows[r * m + j]
        return
    if kernel.by_feature_starts != NULL:
        _posted_column(kernel, j, out, lo, hi)
    else:
        _row_dots(kernel, lo, hi, x, out)
    _apply_kernel(kernel, kernel.sq_norms + lo, hi - lo, kernel.sq_norms[j],
                  out + lo)


cdef void _kernel_row(const Kernel* kernel, const double* rows,
                      const double* sq_norms, Py_ssize_t n, const double* x,
                      double sq_norm_x, double* out) noexcept nogil:
    """out[r] = k(rows[r], x) for n dense float64 rows of kernel.n_columns
    features, with a kernel computed on the features (not
    KERNEL_PRECOMPUTED)."""
    _dots(rows, n, kernel.n_columns, x, out)
    _apply_kernel(kernel, sq_norms, n, sq_norm_x, out)


# The polynomial kernel of degree 2, 3 or 4 (3 is the default) raises its
# base by multiplications, which vectorize (src/poly.h), where the C
# library's pow is a call for each value: pow took 54% of the samples of a
# fit of 10,000 examples of benchmarks/bench_kernel_scale.py (degree 3,
# coef0 1, one thread), which took 2.2 s, against 0.56 s with these. Each
# value is within (degree - 1) 2^-53 of the power of its base, relatively:
# b * b is the correctly rounded square, (b * b) * b carries two roundings,
# and (b * b)^2 three (the first one twice). Higher degrees add up the errors
# of their squarings (5 units in the last place at degree 8, 48 at 64, where
# pow's stay below 1), so that those keep pow.
cdef void _poly_values(double* out, Py_ssize_t n, double gamma, double coef0,
                       double degree) noexcept nogil:
    """out[r] = (gamma out[r] + coef0)^degree."""
    cdef Py_ssize_t r
    if degree == 2.0 or degree == 3.0 or degree == 4.0:
        skperc_poly(out, n, gamma, coef0, <int>degree)
    else:
        for r in range(n):
            out[r] = pow(gamma * out[r] + coef0, degree)


cdef void _apply_kernel(const Kernel* kernel, const double* sq_norms,
                        Py_ssize_t n, double sq_norm_x,
                        double* out) noexcept nogil:
    """out[r] = k(x_r, x) from the products out[r] = x_r . x."""
    cdef Py_ssize_t r
    if kernel.kind == KERNEL_POLY:
        _poly_values(out, n, kernel.gamma, kernel.coef0, kernel.degree)
    elif kernel.kind == KERNEL_RBF:
        skperc_rbf(out, sq_norms, sq_norm_x, kernel.gamma, n)
    elif kernel.kind == KERNEL_SIGMOID:
        for r in range(n):
            out[r] = tanh(kernel.gamma * out[r] + kernel.coef0)
    elif kernel.kind == KERNEL_COSINE:
        skperc_cosine(out, sq_norms, sq_norm_x, n)


cdef void _apply_kernel_row(const Kernel* kernel, double sq_norm_r,
                            const double* sq_norms, Py_ssize_t n,
                            double* out) noexcept nogil:
    """out[j] = k(x_r, x_j) from the products out[j] = x_r . x_j of a row
    r over n points: the values of _apply_kernel's columns, bit for bit."""
    if kernel.kind == KERNEL_RBF:
        skperc_rbf_row(out, sq_norms, sq_norm_r, kernel.gamma, n)
    else:
        _apply_kernel(kernel, sq_norms, n, sq_norm_r, out)


# What _take_slot finds for a column
cdef enum:
    COLUMN_CACHED = 0      # in its slot
    COLUMN_STORED = 1      # to compute into a free slot, given to it
    COLUMN_TRANSIENT = 2   # to compute and not keep: the cache is full


cdef int _take_slot(Cache* cache, Py_ssize_t j,
                    int64_t* slot_out) noexcept nogil:
    """Point j's kernel column: COLUMN_CACHED, with its slot in slot_out;
    else COLUMN_STORED, with a free slot that is now j's; else
    COLUMN_TRANSIENT (slot -1)."""
    cdef int64_t slot = cache.slot_of[j]
    if slot >= 0:
        slot_out[0] = slot
        return COLUMN_CACHED
    if cache.n_used < cache.n_slots:
        slot = cache.n_used
        cache.n_used += 1
        cache.slot_of[j] = slot
        slot_out[0] = slot
        return COLUMN_STORED
    slot_out[0] = -1
    return COLUMN_TRANSIENT


# The parallel steps of an epoch (a column's rows, a budgeted block and the
# next one's rows) are timed: once they have taken CONTENTION_WAIT seconds
# longer, since the epoch began (or its threads were last tried again), than
# the seconds their threads worked, which one thread would have taken, the
# threads have lost more time waiting for each other than they saved, and the
# epoch runs on one thread for ALONE_FOR times the seconds lost, then tries its
# threads again, twice as long after each loss in the epoch. That time runs on
# into the next epoch, and into the next call of the loop in the same fit
# (thread_state), which early stopping makes for each epoch. A thread that the
# system does not run, on cores busy with other work, holds up every step for a
# time slice of the scheduler, milliseconds, where a step takes a fraction of
# one: on 2 cores busy with 2 other processes, a budgeted fit of 10,000
# examples (benchmarks/bench_kernel_scale.py --busy 2, budget 500) lost 24 ms
# every 2 steps, and took 25 s on 2 threads without this, against 0.7 s on one.
# On the idle machine a step rarely loses a millisecond (4 of 11,000 pairs of
# steps of 3 fits of 40,000 examples), and what the steps before it saved
# outweighs it. A rule on the last 2 steps alone took such a step for a busy
# machine: in a budgeted fit of a million examples on 2 threads, 2 of its 7
# epochs ran their last 44% and 34% on one thread, after a pair of steps that
# lost 5.5 and 1.0 ms; the fit took 15.6 s with that rule and 13.9 s with this
# one (medians of 3, alternating). A loss that does not last meets a fit at its
# start above all, where the threads of a BLAS call just made (the scaling of
# the data) still spin: the first step of an unbudgeted fit of 40,000 examples
# on 2 threads lost 2 to 6 ms in 4 runs of 4 (none with
# OPENBLAS_NUM_THREADS=1); where the rule kept one thread to the epoch's end,
# the fit's first epoch, a fifth of it, then ran on one thread; with the retry,
# it goes back to its threads after 20 to 60 ms: 2 threads took 0.55 of one
# thread's time with the retry, 0.61 without (benchmarks/bench_kernel_scale.py
# --sizes 40000 --only KernelPerceptron --repeat 3 and 5, medians of 9 runs
# alternating). On 2 cores busy with 2 other processes (--busy 2, 10,000
# examples) the fits took as long with the retry as without. Where each epoch
# went back to its threads, on 2 cores and one other busy process, the first
# step of each epoch lost 10 to 17 ms waiting for the second thread to be run,
# and 2 threads took 1.3 times as long as one; see the docstring of n_jobs.
cdef double CONTENTION_WAIT = 1e-3
cdef double ALONE_FOR = 10.0


cdef void _begin_epoch_threads(Threads* threads) noexcept nogil:
    """An epoch counts anew the seconds that its threads lose (or save),
    and the losses that double the time on one thread."""
    threads.waited = 0.0
    threads.alone_for = ALONE_FOR


def new_thread_state():
    """The state of a fit's threads that its calls of run_epochs or
    run_budget_epochs carry from one to the next (``thread_state``): the
    time (skperc_wall) until which its steps run on one thread."""
    return np.zeros(1)


cdef object _start_threads(Threads* threads, double[::1] busy, state):
    """Threads on busy.shape[0] at most, in the state (new_thread_state)
    given, or a new one if None; returns that state, which _keep_threads
    writes back to."""
    if state is None:
        state = new_thread_state()
    cdef double[::1] retry_at = state
    threads.n = busy.shape[0]
    threads.busy = &busy[0]
    threads.retry_at = retry_at[0]
    threads.alone = skperc_wall() < threads.retry_at
    _begin_epoch_threads(threads)
    return state


cdef void _keep_threads(const Threads* threads, double[::1] state) noexcept:
    state[0] = threads.retry_at if threads.alone else 0.0


cdef void _end_step(Threads* threads, Py_ssize_t n) noexcept nogil:
    """After a step on n threads (_start_step): the steps run on one thread
    for a while once those since the count began lost CONTENTION_WAIT."""
    cdef Py_ssize_t t
    cdef double now = skperc_wall()
    threads.waited += now - threads.started
    for t in range(n):
        threads.waited -= threads.busy[t]
    if threads.waited > CONTENTION_WAIT:
        threads.alone = True
        threads.retry_at = now + threads.alone_for * threads.waited
        threads.alone_for *= 2.0


# A step of threads cuts its rows into PIECES pieces per thread, and each
# thread takes the next piece when it is done with one, rather than one
# equal block each: a thread that the machine runs more slowly for a while
# takes fewer. In a profile of unbudgeted fits of 40,000 examples on 2
# threads, one thread waited at the end of the steps for a quarter of a
# 1.2 s stretch while the other worked. Each row is computed by the same
# arithmetic whichever thread runs it: the same bits. Those fits
# (benchmarks/bench_kernel_scale.py's clusters, 9 processes of 3 fits,
# alternating) took a median of 1.74 s against 1.79 s with one block per
# thread; 10,000 examples, and the wide data at 40,000, took as long.
cdef enum:
    PIECES = 4


cdef void _update_rows(Model* m, const Kernel* kernel, Py_ssize_t j,
                       const double* x, double* column, bint compute,
                       const double* a, const double* b, Py_ssize_t lo,
                       Py_ssize_t hi, unsigned char* flags) noexcept nogil:
    """Rows lo <= r < hi of the update by point j's kernel column: when
    ``compute``, compute them first (but a KERNEL_PYTHON column, computed
    already) and set flags[0] to whether they are finite, flags[1] to
    whether one is NaN; then f[c] += a[c] column, and g[c] += b[c] column
    with averaging, for each problem c of a[c] != 0. Each row by the same
    arithmetic, whichever thread runs it."""
    cdef Py_ssize_t c, n = m.n_points
    if compute:
        if kernel.kind != KERNEL_PYTHON:
            _column_rows(kernel, j, x, column, lo, hi)
        flags[0] = skperc_all_finite(column + lo, hi - lo)
        flags[1] = not flags[0] and _any_nan(column + lo, hi - lo)
    for c in range(m.n_problems):
        if a[c] == 0.0:
            continue
        if m.g != NULL:
            skperc_add_two(a[c], b[c], column + lo, m.f + c * n + lo,
                           m.g + c * n + lo, hi - lo)
        else:
            skperc_add(a[c], column + lo, m.f + c * n + lo, hi - lo)


cdef int _add_column(Model* m, Cache* cache, const Kernel* kernel,
                     Py_ssize_t j, const double* a,
                     const double* b) except -1 nogil:
    """f[c] += a[c] k(., x_j) at every point, and g[c] += b[c] k(., x_j)
    with averaging, for the problems of a[c] != 0, with point j's column
    from the cache or computed into it; the rows split among the cache's
    threads. A column that is not finite turns cache.finite_columns
    False."""
    cdef Py_ssize_t n = cache.n_points, t
    cdef Py_ssize_t n_blocks = _n_blocks(_threads(cache.threads), n)
    cdef int64_t slot
    cdef double start
    cdef int found = _take_slot(cache, j, &slot)
    cdef bint compute = found != COLUMN_CACHED
    cdef double* column = (cache.scratch if found == COLUMN_TRANSIENT
                           else cache.columns + slot * n)
    cdef const double* x = NULL
    if compute:
        if kernel.kind == KERNEL_PYTHON:
            with gil:
                (<object>kernel.compute)(j, slot)
        else:
            x = _column_point(kernel, j)
    cdef Py_ssize_t n_pieces = 1 if n_blocks == 1 else n_blocks * PIECES
    if n_blocks == 1:
        _update_rows(m, kernel, j, x, column, compute, a, b, 0, n, cache.flags)
    else:
        _start_step(cache.threads, n_blocks)
        for t in prange(n_pieces, num_threads=n_blocks, schedule="dynamic"):
            start = skperc_wall()
            _update_rows(m, kernel, j, x, column, compute, a, b,
                         _block_start(n, n_pieces, t),
                         _block_start(n, n_pieces, t + 1),
                         cache.flags + 2 * t)
            cache.threads.busy[threadid()] += skperc_wall() - start
        _end_step(cache.threads, n_blocks)
    if compute:
        for t in range(n_pieces):
            if not cache.flags[2 * t]:
                cache.finite_columns = False
                # a kernel undefined on the input is not one that overflowed
                cache.nan_column = cache.nan_column or cache.flags[2 * t + 1]
    return 0


# Held updates: on dense rows with a kernel of the features, the loop holds
# back up to HELD_MAX updates and then adds their columns together, each
# block of CHUNK_ROWS rows read once for all of them (dots.h); an example
# visited meanwhile adds the held updates to its decision value one kernel
# value at a time, the same values in the same order as their columns
# would have added them.
#
# Measured on two cores (RBF, 50 features, 10 epochs), against adding each
# column at once from rows in C order: with rows of 1.6 MB, which the
# processor's caches hold, holding cost as much as it saved; with 2.4, 3.2
# and 4 MB, a fit took 0.80, 0.68 and 0.55 times as long. Against columns
# from rows in panels (below), on one thread (default fits, RBF, medians of
# 3 to 5 fits, AVX-512): with rows of 1.5 to 2 MiB, holding took 0.76 times
# the time on 10,000 rows of 20 features, 0.63 on 6,000 of 40, 0.68 on
# 4,000 of 60, 0.75 on 3,000 of 80 and 0.92 on 2,500 of 80, but 1.38 on
# 2,000 of 100; with fewer bytes, 1.1 on 2,500 to 4,000 rows of 20 features,
# 0.95 to 1.04 on 6,000 to 20,000 rows of 5 to 20, and 1.9 on digits. Hence
# rows of HELD_MIN_BYTES, or of HELD_FEW_BYTES with HELD_MIN_POINTS rows.
cdef enum:
    # a multiple of 8: the points of the columns to compute are padded to
    # one (Held.xt)
    HELD_MAX = 32
    CHUNK_ROWS = 128
    HELD_MIN_BYTES = 2 * 1024 * 1024
    HELD_FEW_BYTES = 3 * 512 * 1024
    HELD_MIN_POINTS = 2500


cdef struct Held:
    Py_ssize_t count
    Py_ssize_t point[HELD_MAX]
    int64_t n_updates[HELD_MAX]   # the update count after each, for a failure
    double* delta                 # (HELD_MAX, n_problems)
    double* delta_avg             # (HELD_MAX, n_problems)
    # the points, feature-major (x[j * HELD_MAX + u] = x_u[j]), their
    # squared norms, and the kernel values of a visited example with them
    double* x                     # (n_features, HELD_MAX)
    double sq_norm[HELD_MAX]
    double values[HELD_MAX]
    # each update's column in the cache, or NULL for a column that the
    # cache does not keep, computed (in computed[q] with q in its_computed)
    # a chunk of rows at a time into scratch
    double* column[HELD_MAX]
    Py_ssize_t its_computed[HELD_MAX]
    # the columns to compute, in order: their points, feature-major and
    # padded with zeros to a multiple of 8 (xt[j * SKPERC_LANES8(n_computed)
    # + q], see dots.h), where they go, and per thread whether each is
    # finite and whether it holds a NaN
    Py_ssize_t n_computed
    Py_ssize_t computed_point[HELD_MAX]
    Py_ssize_t computed_update[HELD_MAX]
    double* xt                    # (n_features, HELD_MAX)
    double* computed[HELD_MAX]    # in the cache, or NULL (see column)
    unsigned char* flags          # (n_threads, HELD_MAX, 2)
    double* scratch               # (n_threads, HELD_MAX, CHUNK_ROWS)
    # float32 rows made doubles for their products (dots.h), else NULL
    double* widened               # (n_threads, SKPERC_WIDENED_ROWS, n_features)


cdef Py_ssize_t _lane_bytes(const Kernel* kernel,
                            Py_ssize_t n_points) noexcept nogil:
    """The bytes of the kernel's rows as float64 values if the loop may
    compute its columns in vector lanes (dense rows, a kernel of the
    features, a processor that runs dots.h), else 0. float32 rows, whose
    products run on their values made doubles (dots.h), take the path of
    float64 rows of their shape: on 10,000 examples of 20 features (the
    clusters of benchmarks/bench_kernel_scale.py, 0.8 MB as float32), an
    unbudgeted fit on one thread took 0.40 s with held updates, as float64
    rows do, against 0.455 s from panels, which their bytes alone chose."""
    if (kernel.indptr != NULL or kernel.kind == KERNEL_PYTHON
            or kernel.kind == KERNEL_PRECOMPUTED
            or not skperc_dots_many_supported()
            or (kernel.rows32 == NULL and kernel.rows == NULL)):
        return 0
    return n_points * kernel.n_columns * sizeof(double)


cdef bint _holds_rows(const Kernel* kernel, Py_ssize_t n_points) noexcept nogil:
    """Whether n_points rows are enough for held updates (see Held): in
    vector lanes, of HELD_MIN_BYTES, or of HELD_FEW_BYTES and at least
    HELD_MIN_POINTS rows."""
    cdef Py_ssize_t size = _lane_bytes(kernel, n_points)
    return size >= HELD_MIN_BYTES or (
        size >= HELD_FEW_BYTES and n_points >= HELD_MIN_POINTS)


cdef bint _holds_updates(const Kernel* kernel, const Model* m,
                         const Cache* cache) noexcept nogil:
    """Whether the loop holds updates back (see Held): rows that _holds_rows
    takes, no budget, and a cache with room for the held columns."""
    return (m.budget == 0 and _holds_rows(kernel, m.n_points)
            and cache.n_slots >= 2 * HELD_MAX)


# Rows under HELD_MIN_BYTES that do not hold updates are read from a copy in
# feature-major panels instead, made once per call, so that the products of
# one point with many rows run in vector lanes (dots.h). Measured against
# rows in C order, alternating (RBF, one thread): a fit took 0.84 times as
# long on digits (1,257 rows of 64 features) and 0.88 on 10,000 rows of 20
# features. Larger rows hold updates, whose lanes need no copy (it would
# double the memory of the largest fits).
cdef bint _reads_panels(const Kernel* kernel,
                        Py_ssize_t n_points) noexcept nogil:
    """Whether a loop that does not hold updates reads the kernel's rows
    from panels: rows in vector lanes, under HELD_MIN_BYTES."""
    return 0 < _lane_bytes(kernel, n_points) < HELD_MIN_BYTES


def _line_aligned_zeros(Py_ssize_t n, dtype=np.float64):
    """n zeros from an address that is a multiple of 64 bytes. The panels
    are read in whole cache lines (dots.h), and an AVX-512 load that
    straddles two lines takes twice as long: with panels from numpy's
    16-byte alignment, their products ran at half the speed."""
    itemsize = np.dtype(dtype).itemsize
    buffer = np.zeros(n + 64 // itemsize, dtype=dtype)
    start = (-buffer.ctypes.data % 64) // itemsize
    return buffer[start : start + n]


cdef object _set_panels(Kernel* kernel, object rows):
    """Give the kernel a copy of its dense rows in feature-major panels
    (see dots.h), returned to be kept alive while the kernel reads it. The
    copy holds float64 values, float32 rows' made doubles once (exactly:
    the same sums), where converting them in the products cost each
    stretch of a panel a conversion per support vector, or per group of 4
    in kernel_products (float32 predictions on the clusters of
    benchmarks/bench_kernel_scale.py took 1.16 to 1.18 times the time of
    float64 rows, one thread, 500,000 rows against 500 support vectors and
    100,000 against 3,736)."""
    cdef const double[::1] panels
    cdef Py_ssize_t n = rows.shape[0], m = rows.shape[1]
    cdef Py_ssize_t full = n // SKPERC_PANEL, rest = n % SKPERC_PANEL
    copy = _line_aligned_zeros(
        (full + (rest > 0)) * m * SKPERC_PANEL, np.float64)
    blocks = copy.reshape(full + (rest > 0), m, SKPERC_PANEL)
    blocks[:full] = rows[: full * SKPERC_PANEL].reshape(
        full, SKPERC_PANEL, m).transpose(0, 2, 1)
    if rest:
        blocks[full, :, :rest] = rows[full * SKPERC_PANEL :].T
    panels = copy
    kernel.panels = &panels[0]
    return copy


cdef void _held_kernel_values(const Kernel* kernel, Held* h,
                              Py_ssize_t i) noexcept nogil:
    """h.values[u] = k(x_i, x_u) for the held points u, computed at once in
    vector lanes: the bits of row i of their columns (dots.h,
    _apply_kernel_row)."""
    cdef Py_ssize_t d = kernel.n_columns
    if kernel.rows32 != NULL:
        skperc_dots_row32(kernel.rows32 + i * d, d, h.x, HELD_MAX, h.count,
                          h.values)
    else:
        skperc_dots_row(kernel.rows + i * d, d, h.x, HELD_MAX, h.count,
                        h.values)
    _apply_kernel_row(kernel, kernel.sq_norms[i], h.sq_norm, h.count,
                      h.values)


cdef bint _held_values(const Model* m, const Kernel* kernel, Held* h,
                       Py_ssize_t i, double* value) noexcept nogil:
    """value[c]: point i's decision value for each problem with the held
    updates added (_held_kernel_values); False at a kernel value that is
    not finite."""
    cdef Py_ssize_t c, u, k = m.n_problems, n = m.n_points
    cdef double v, a
    for c in range(k):
        value[c] = m.f[c * n + i]
    if h.count == 0:
        return True
    _held_kernel_values(kernel, h, i)
    for u in range(h.count):
        v = h.values[u]
        if not finite(v):
            return False
        for c in range(k):
            a = h.delta[u * k + c]
            if a != 0.0:
                value[c] += a * v
    return True


cdef void _hold(Held* h, const Kernel* kernel, Py_ssize_t i, Py_ssize_t k,
                const double* delta, const double* delta_avg,
                int64_t n_updates) noexcept nogil:
    """Hold the update of point i (dense rows: see _lane_bytes)."""
    cdef Py_ssize_t j, u = h.count, d = kernel.n_columns
    h.point[u] = i
    h.n_updates[u] = n_updates
    memcpy(h.delta + u * k, delta, k * sizeof(double))
    memcpy(h.delta_avg + u * k, delta_avg, k * sizeof(double))
    if kernel.rows32 != NULL:
        for j in range(d):
            h.x[j * HELD_MAX + u] = <double>kernel.rows32[i * d + j]
    else:
        for j in range(d):
            h.x[j * HELD_MAX + u] = kernel.rows[i * d + j]
    h.sq_norm[u] = kernel.sq_norms[i]
    h.count += 1


cdef inline double* _widened(const Held* h, const Kernel* kernel,
                            Py_ssize_t thread) noexcept nogil:
    """The thread's part of Held.widened (NULL for float64 rows)."""
    if h.widened == NULL:
        return NULL
    return h.widened + thread * SKPERC_WIDENED_ROWS * kernel.n_columns


cdef void _held_rows(Model* m, const Kernel* kernel, Held* h, Py_ssize_t lo,
                     Py_ssize_t hi, unsigned char* flags, double* scratch,
                     double* widened) noexcept nogil:
    """Rows lo <= r < hi of the held updates: their columns to compute,
    computed, then each update added in order, as _update_rows adds one;
    scratch (HELD_MAX chunks of rows) holds the chunk of the columns that
    the cache does not keep, widened the thread's Held.widened."""
    cdef Py_ssize_t r0, r1, q, u, c, k = m.n_problems, n = m.n_points
    cdef Py_ssize_t d = kernel.n_columns
    cdef double* out[HELD_MAX]
    cdef double* column
    for q in range(h.n_computed):
        flags[2 * q] = 1
        flags[2 * q + 1] = 0
    r0 = lo
    while r0 < hi:
        r1 = min(r0 + CHUNK_ROWS, hi)
        for q in range(h.n_computed):
            out[q] = (h.computed[q] + r0 if h.computed[q] != NULL
                      else scratch + q * CHUNK_ROWS)
        if h.n_computed:
            if kernel.rows32 != NULL:
                skperc_dots_many32(kernel.rows32 + r0 * d, r1 - r0, d, h.xt,
                                   h.n_computed, out, 0, widened)
            else:
                skperc_dots_many(kernel.rows + r0 * d, r1 - r0, d, h.xt,
                                 h.n_computed, out, 0)
        for q in range(h.n_computed):
            _apply_kernel(kernel, kernel.sq_norms + r0, r1 - r0,
                          kernel.sq_norms[h.computed_point[q]], out[q])
            if not skperc_all_finite(out[q], r1 - r0):
                flags[2 * q] = 0
                flags[2 * q + 1] |= _any_nan(out[q], r1 - r0)
        for u in range(h.count):
            column = (h.column[u] + r0 if h.column[u] != NULL
                      else out[h.its_computed[u]])
            for c in range(k):
                if h.delta[u * k + c] == 0.0:
                    continue
                if m.g != NULL:
                    skperc_add_two(h.delta[u * k + c],
                                   h.delta_avg[u * k + c], column,
                                   m.f + c * n + r0, m.g + c * n + r0,
                                   r1 - r0)
                else:
                    skperc_add(h.delta[u * k + c], column, m.f + c * n + r0,
                               r1 - r0)
        r0 = r1


cdef int _add_held(Model* m, Cache* cache, const Kernel* kernel, Held* h,
                   Epochs* e) except -1 nogil:
    """Add the held updates' columns, in order, each taken from the cache or
    computed into it: the decision values, cache and failure that the
    updates one at a time (_add_column) leave. 0 after recording a column
    that is not finite."""
    cdef Py_ssize_t n = cache.n_points, d = kernel.n_columns
    cdef Py_ssize_t u, q, j, t, lanes
    cdef Py_ssize_t n_blocks = _n_blocks(_threads(cache.threads), n)
    cdef int64_t slot
    cdef int found
    cdef double start
    cdef bint finite_column, nan_column
    if h.count == 0:
        return 1
    h.n_computed = 0
    for u in range(h.count):
        found = _take_slot(cache, h.point[u], &slot)
        h.column[u] = (NULL if found == COLUMN_TRANSIENT
                       else cache.columns + slot * n)
        if found != COLUMN_CACHED:
            h.computed_point[h.n_computed] = h.point[u]
            h.computed_update[h.n_computed] = u
            h.computed[h.n_computed] = h.column[u]
            h.its_computed[u] = h.n_computed
            h.n_computed += 1
    lanes = SKPERC_LANES8(h.n_computed)
    for q in range(lanes):
        u = h.computed_update[q] if q < h.n_computed else -1
        for j in range(d):
            h.xt[j * lanes + q] = h.x[j * HELD_MAX + u] if u >= 0 else 0.0
    cdef Py_ssize_t n_pieces = 1 if n_blocks == 1 else n_blocks * PIECES
    if n_blocks == 1:
        _held_rows(m, kernel, h, 0, n, h.flags, h.scratch, h.widened)
    else:
        _start_step(cache.threads, n_blocks)
        for t in prange(n_pieces, num_threads=n_blocks, schedule="dynamic"):
            start = skperc_wall()
            _held_rows(m, kernel, h, _block_start(n, n_pieces, t),
                       _block_start(n, n_pieces, t + 1),
                       h.flags + 2 * HELD_MAX * t,
                       h.scratch + HELD_MAX * CHUNK_ROWS * threadid(),
                       _widened(h, kernel, threadid()))
            cache.threads.busy[threadid()] += skperc_wall() - start
        _end_step(cache.threads, n_blocks)
    h.count = 0
    for q in range(h.n_computed):
        finite_column = True
        nan_column = False
        for t in range(n_pieces):
            finite_column = finite_column and h.flags[2 * HELD_MAX * t + 2 * q]
            nan_column = nan_column or h.flags[2 * HELD_MAX * t + 2 * q + 1]
        if not finite_column:
            cache.finite_columns = False
            # a kernel undefined on the input is not one that overflowed
            cache.nan_column = cache.nan_column or nan_column
            fail(e.failure, KERNEL_VALUE, e.epoch,
                 h.n_updates[h.computed_update[q]], 0)
            return 0
    return 1


cdef void _measure_moves(Model* m, Epochs* e) noexcept nogil:
    """e.moved: the distance in feature space of each problem's function
    to its snapshots, ||w - w_s||^2 = (c - c_s) . (f - f_s) with f = K c,
    and e.radius2, for the stopping rule."""
    cdef Py_ssize_t c, r, s, row
    cdef Py_ssize_t n = m.n_points
    cdef double total
    e.radius2 = e.max_norm2
    for c in range(m.n_problems):
        for s in range(2):
            row = (s * m.n_problems + c) * n
            total = 0.0
            for r in range(n):
                total += ((m.coef[c * n + r] - m.snap_coef[row + r])
                          * (m.f[c * n + r] - m.snap_f[row + r]))
            e.moved[2 * c + s] = sqrt(total) if total > 0.0 else 0.0


cdef void _take_snapshots(Model* m, Epochs* e) noexcept nogil:
    """The snapshots that end_epoch asked for: w_r, and w_1 after the
    first epoch."""
    cdef Py_ssize_t c, r, s, row
    cdef Py_ssize_t n = m.n_points
    for c in range(m.n_problems):
        for s in range(2 - e.snapshot[c], 2):
            row = (s * m.n_problems + c) * n
            for r in range(n):
                m.snap_coef[row + r] = m.coef[c * n + r]
                m.snap_f[row + r] = m.f[c * n + r]


cdef int _see_norm(Epochs* e, double norm2) except -1 nogil:
    """Follow k(x, x), the squared norm in feature space of an example of
    the first epoch, with the radius; 0 after recording one that is not
    finite."""
    if not finite(norm2):
        fail(e.failure, KERNEL_VALUE, e.epoch, e.n_updates[0], 0)
        return 0
    if norm2 > e.max_norm2:
        e.max_norm2 = norm2
    return see_radius(e, norm2)


cdef int _examine(Epochs* e, Py_ssize_t c, Py_ssize_t i, double yc,
                  double value, double weight, double* delta,
                  double* delta_avg) except -1 nogil:
    """Problem c examines example i, of label yc, weight ``weight`` and
    decision value ``value``: delta[c] and delta_avg[c] are its update (0
    without one). 0 after recording a value that is not finite."""
    if not finite(value):
        fail(e.failure, DECISION_VALUE, e.epoch, e.n_updates[c], c)
        return 0
    e.n_steps[c] += 1
    observe(e, c, yc * value, weight)
    if yc * value <= e.thresholds[c]:
        delta[c] = yc * weight
        # Lazy averaging: the update made at step s counts in the mean of
        # the function over steps s..N.
        delta_avg[c] = delta[c] * <double>(e.n_steps[c] - 1)
        count_update(e, c, i, yc, weight)
        return after_update(e, c)
    return 1


cdef enum:
    # what _run_epochs returns when its support would reach m.cap
    CAP_REACHED = 2


class CapReached(Exception):
    """Raised by run_epochs when an update would bring the support to its
    ``cap``: the caller's state is then unusable."""


cdef bint _has_support(const Model* m, Py_ssize_t c) noexcept nogil:
    """Whether a support vector has a coefficient other than 0 in problem
    c."""
    cdef Py_ssize_t s, n = m.n_points
    for s in range(m.n_support):
        if m.coef[c * n + m.queue[(m.queue_start + s) % n]] != 0.0:
            return True
    return False


cdef int _forget_oldest(Model* m, Cache* cache, const Kernel* kernel,
                        Epochs* e) except -1 nogil:
    """Remove the oldest support vector from the function. A problem left
    without a support vector has the zero function, whose values are set
    to 0: the columns added and taken away leave their rounding in them,
    whose sign would decide the updates of a threshold of 0."""
    cdef Py_ssize_t n = m.n_points
    cdef Py_ssize_t c, k = m.n_problems
    cdef int64_t j = m.queue[m.queue_start]
    for c in range(k):
        m.removal[c] = -m.coef[c * n + j]
        m.removal[k + c] = -m.avg_coef[c * n + j] if m.g != NULL else 0.0
    _add_column(m, cache, kernel, j, m.removal, m.removal + k)
    m.queue_start = (m.queue_start + 1) % n
    m.n_support -= 1
    m.in_support[j] = 0
    for c in range(k):
        if m.coef[c * n + j] == 0.0:
            continue
        if m.g != NULL:
            m.avg_coef[c * n + j] = 0.0
        m.coef[c * n + j] = 0.0
        # The function of problem c changed: it has not converged.
        e.epoch_changes[c] += 1
        e.converged[c] = 0
        if not _has_support(m, c):
            memset(m.f + c * n, 0, n * sizeof(double))
            if m.g != NULL:
                memset(m.g + c * n, 0, n * sizeof(double))
    return 0


cdef int _run_epochs(
    Model* m,
    Cache* cache,
    const Kernel* kernel,
    const double* diag,
    const int32_t* y,
    const double* weight,
    Py_ssize_t* visit,
    Py_ssize_t n_visit,
    Epochs* e,
    double* delta,
    double* delta_avg,
    Held* held,
    double* value,
) except -1 nogil:
    """The epochs of one call, holding updates back in ``held`` (see Held;
    NULL: each update adds its column at once); value holds n_problems
    decision values. A kernel value, radius, threshold or decision value
    that is not finite stops the call, recorded in e.failure; an update
    that would bring the support to ``m.cap`` vectors stops it with
    CAP_REACHED, the state then being unusable."""
    cdef Py_ssize_t n = m.n_points
    cdef Py_ssize_t k = m.n_problems
    cdef Py_ssize_t epoch, ii, i, c
    cdef Py_ssize_t countdown = CHECK_EVERY
    cdef double yc
    cdef bint updated

    if not start_run(e):
        return 0
    for epoch in range(e.control.max_iter):
        if begin_epoch(e, epoch, visit, n_visit) == 0:
            break
        _begin_epoch_threads(cache.threads)
        for ii in range(n_visit):
            countdown -= 1
            if countdown <= 0:
                countdown = CHECK_EVERY
                interrupted(e)
            i = visit[ii]
            if weight[i] == 0.0:
                continue
            if epoch == 0 and not _see_norm(e, diag[i]):
                return 0

            if held == NULL:
                for c in range(k):
                    value[c] = m.f[c * n + i]
            elif not _held_values(m, kernel, held, i, value):
                # the column of a held update is not finite: found and
                # recorded as adding it at once would have
                if not _add_held(m, cache, kernel, held, e):
                    return 0
                for c in range(k):
                    value[c] = m.f[c * n + i]
            updated = False
            for c in range(k):
                delta[c] = 0.0
                if not active(e, c):
                    continue
                yc = 1.0 if y[i] == m.first_class + c else -1.0
                if not _examine(e, c, i, yc, value[c], weight[i], delta,
                                delta_avg):
                    return 0
                updated = updated or delta[c] != 0.0
            if not updated:
                continue

            if not m.in_support[i]:
                if m.cap > 0 and m.n_support + 1 >= m.cap:
                    return CAP_REACHED
                while m.budget > 0 and m.n_support >= m.budget:
                    _forget_oldest(m, cache, kernel, e)
                    if not cache.finite_columns:
                        fail(e.failure, KERNEL_VALUE, e.epoch, e.n_updates[0], 0)
                        return 0
                m.queue[(m.queue_start + m.n_support) % n] = i
                m.n_support += 1
                m.in_support[i] = 1
            # an update touches every point: it counts as many examples
            countdown -= n // 64
            if held != NULL:
                _hold(held, kernel, i, k, delta, delta_avg, e.n_updates[0])
                if held.count == HELD_MAX and not _add_held(m, cache, kernel,
                                                            held, e):
                    return 0
            else:
                _add_column(m, cache, kernel, i, delta, delta_avg)
                if not cache.finite_columns:
                    fail(e.failure, KERNEL_VALUE, e.epoch, e.n_updates[0], 0)
                    return 0
            for c in range(k):
                if delta[c] == 0.0:
                    continue
                m.coef[c * n + i] += delta[c]
                if m.g != NULL:
                    m.avg_coef[c * n + i] += delta_avg[c]
        if held != NULL and not _add_held(m, cache, kernel, held, e):
            return 0
        if rule_on(e):
            _measure_moves(m, e)
        end_epoch(e, m.n_support)
        if rule_on(e):
            _take_snapshots(m, e)

    # The decision values of points not visited since their last change.
    if not skperc_all_finite(m.f, k * n) or (
            m.g != NULL and not skperc_all_finite(m.g, k * n)):
        fail(e.failure, DECISION_VALUE, e.n_run - 1, e.n_updates[0], 0)
        return 0
    return 1


cdef object _set_kernel(Kernel* kernel, object rows,
                        const double[::1] sq_norms, KernelSpec spec,
                        object compute, double[::1] scratch):
    """Point kernel at rows (see run_epochs), checked to fit: the compiled
    kernels read them unchecked. scratch holds n_features values."""
    cdef const double[:, ::1] dense
    cdef const float[:, ::1] dense32
    cdef const double[::1] values
    cdef const float[::1] values32
    cdef const int32_t[::1] indices
    cdef const int32_t[::1] indptr
    kernel.kind = spec.kind
    kernel.gamma = spec.gamma
    kernel.coef0 = spec.coef0
    kernel.degree = spec.degree
    kernel.rows = NULL
    kernel.rows32 = NULL
    kernel.values = NULL
    kernel.values32 = NULL
    kernel.indices = NULL
    kernel.indptr = NULL
    kernel.panels = NULL
    kernel.by_feature_starts = NULL
    kernel.by_feature_rows = NULL
    kernel.by_feature_values = NULL
    kernel.by_feature_values32 = NULL
    kernel.sq_norms = NULL
    kernel.x = NULL
    kernel.n_columns = <int>rows.shape[1]
    kernel.compute = <PyObject*>compute
    if sq_norms.shape[0] > 0:
        kernel.sq_norms = &sq_norms[0]
    if scratch.shape[0] > 0:
        kernel.x = &scratch[0]
    if isinstance(rows, np.ndarray):
        if rows.dtype == np.float32:
            dense32 = rows
            kernel.rows32 = &dense32[0, 0] if rows.shape[0] > 0 else NULL
        else:
            dense = rows
            kernel.rows = &dense[0, 0] if rows.shape[0] > 0 else NULL
        return
    check_rows(rows.data, rows.indices, rows.indptr, rows.shape[0],
               rows.shape[1])
    if spec.kind in (KERNEL_PYTHON, KERNEL_PRECOMPUTED):
        raise ValueError("CSR rows take a kernel computed on the features.")
    indices = rows.indices
    indptr = rows.indptr
    kernel.indptr = &indptr[0]
    if rows.nnz == 0:
        # indices NULL would mean dense rows; none is read through indptr
        kernel.indices = &indptr[0]
    elif rows.data.dtype == np.float32:
        values32 = rows.data
        kernel.values32 = &values32[0]
        kernel.indices = &indices[0]
    else:
        values = rows.data
        kernel.values = &values[0]
        kernel.indices = &indices[0]


def squared_norms(rows):
    """||x_r||^2 of the rows (a C-ordered float64 or float32 array, or a
    CSR matrix of int32 indices with sorted, unique indices), summed as
    the compiled kernels sum them: dense and CSR rows of one matrix, float32
    or float64, give the same bits."""
    if isinstance(rows, np.ndarray):
        empty = np.empty(0, dtype=np.int32)
        return _squared_norms(rows.reshape(-1), empty, empty, rows.shape[0],
                              rows.shape[1])
    return _squared_norms(rows.data, rows.indices, rows.indptr, rows.shape[0],
                          rows.shape[1])


def _squared_norms(const floating[::1] data, const int32_t[::1] indices,
                   const int32_t[::1] indptr, Py_ssize_t n, Py_ssize_t d):
    cdef double[::1] out = np.empty(n)
    cdef const floating* x
    cdef const int32_t* ind
    cdef Py_ssize_t i, nnz
    check_rows(data, indices, indptr, n, d)
    if n == 0 or data.shape[0] == 0:
        return np.zeros(n)
    cdef const int32_t* ind_ptr = NULL
    cdef const int32_t* ptr = NULL
    if indptr.shape[0] > 0:
        ptr = &indptr[0]
        ind_ptr = &indices[0]
    with nogil:
        for i in range(n):
            row(&data[0], ind_ptr, ptr, i, d, &x, &ind, &nnz)
            out[i] = squared_norm(x, nnz)
    return out.base


cdef void _free_traced(void* data) noexcept nogil:
    PyTraceMalloc_Untrack(_NUMPY_DOMAIN, <uintptr_t>data)
    free(data)


cdef class ColumnCache:
    """The cache of kernel columns of one run: ``columns``, one column a
    row, which point's column each row holds, and ``scratch``, where a
    column goes that it has no room for. Once full it keeps its columns:
    an epoch visits the examples in turn, so that evicting the least
    recently used column evicts each just before its next use when an
    epoch's updates outnumber the slots. Computed where it is added and not
    kept, a column costs no writes to memory. Measured alternating (RBF,
    default fits, 40,000 examples of 20 features, 655 slots, one fit each):
    evicting, 13.1, 13.1 and 13.4 s on one thread and 10.1, 6.9 and 7.8 s
    on two; keeping, 11.1, 11.7 and 13.6 s, and 7.7, 6.5 and 6.3 s; no
    difference at 10,000 examples (2,621 slots). It lasts as long as the run's points, over
    the calls of run_epochs that continue the run (an epoch each, under
    early stopping), and into the second fit of ``refit``, which runs on
    the same points, so that a column computed in one epoch is read, not
    computed, in the next: the same values (a column has one way to be
    computed).
    """
    cdef readonly object columns
    cdef readonly object scratch
    cdef int64_t[::1] slot_of
    cdef Py_ssize_t n_used

    def __init__(self, Py_ssize_t n_slots, Py_ssize_t n_points):
        self.columns = paged_array(n_slots, n_points)
        self.scratch = np.zeros(n_points)
        self.slot_of = np.full(n_points, -1, dtype=np.int64)
        self.n_used = 0


def paged_array(Py_ssize_t n_rows, Py_ssize_t n_columns, bint zeroed=False,
                bint int32=False):
    """An n_rows x n_columns float64 array (int32 with ``int32``), of zeros
    if ``zeroed``, else uninitialized: the cache of kernel columns, the
    rows of a budgeted support and the lists of their features, and the
    kernel values among the support that the averaging epoch keeps.

    numpy advises the kernel to back large arrays with transparent huge
    pages, and where the kernel then compacts memory on the first touch of a
    page, some fits took twice as long as others, and 166 MB of zeros took
    0.32 s to touch against 0.07 s. Memory from malloc (calloc, whose large
    blocks the system gives as pages of zeros) is touched page by page as it
    is written, at an even cost; it is reported to tracemalloc as numpy
    reports its arrays.
    """
    cdef size_t itemsize = sizeof(int32_t) if int32 else sizeof(double)
    cdef size_t size = n_rows * n_columns * itemsize
    cdef c_array array = c_array(
        shape=(n_rows, n_columns), itemsize=itemsize,
        format="i" if int32 else "d", allocate_buffer=False,
    )
    array.data = <char*>(calloc(size, 1) if zeroed else malloc(size))
    if array.data == NULL:
        raise MemoryError(f"cannot allocate an array of {size} bytes")
    array.callback_free_data = _free_traced
    PyTraceMalloc_Track(_NUMPY_DOMAIN, <uintptr_t>array.data, size)
    return np.asarray(array)


def run_epochs(
    rows,
    const double[::1] sq_norms,
    KernelSpec spec,
    object compute_column,
    ColumnCache column_cache,
    const double[::1] diag,
    const int32_t[::1] y,
    int32_t first_class,
    const double[::1] weight,
    Py_ssize_t[::1] visit,
    points,
    run,
    Py_ssize_t budget,
    object schedule,
    Control control,
    const unsigned char[::1] stop,
    int64_t[::1] failure,
    bint continued=False,
    Py_ssize_t n_threads=1,
    thread_state=None,
    Py_ssize_t cap=0,
):
    """Run up to ``control.max_iter`` epochs over the points in visit;
    update the state in place; each kernel column computed and added by
    up to ``n_threads`` threads (the same bits for any number).

    The kernel is ``spec`` on ``rows``, or, for KERNEL_PYTHON,
    ``compute_column(j, slot)``, which writes the column of point j into
    ``column_cache.columns[slot]`` (``column_cache.scratch`` for a slot of -1:
    a column that the cache does not keep). ``rows`` are the points, a C-ordered
    float64 or float32 array or a CSR matrix with int32, sorted and unique
    indices (the same bits either way), or the Gram matrix (float64);
    ``sq_norms`` their squared_norms. ``column_cache`` is the run's cache
    of columns, kept from call to call. Point ``r`` is positive for problem
    ``c`` when ``y[r] == first_class + c``; ``diag`` holds ``k(x_r, x_r)``.
    ``points`` holds the function on the points (``f``, ``g``, ``coef``,
    ``avg_coef``; ``g`` and ``avg_coef`` with no rows turn averaging off)
    and the support, oldest first, as a ring ``queue`` of
    ``support_state = (start, count)`` with ``in_support``; ``run`` the
    counters of the run (``n_updates``, ``n_steps``) and ``radius``, the
    largest k(x, x) seen and the schedule's rho^2. ``schedule`` is a
    validated ThresholdSchedule. ``stop[0]`` set by another thread ends the
    call with KeyboardInterrupt. Returns (epochs of each problem, whether
    each converged, whether the stopping rule ended each, the updates
    recorded with ``control.record_updates`` or None: see count_update in
    _epochs.pxd). A value that is not finite stops the run and is recorded
    in ``failure`` (see _overflow.pxd), the state then being unusable.

    A caller that continues one run over calls (early stopping) passes
    ``continued``: the shuffle then goes on from the order that ``visit``
    was left in, with ``control.seed`` the shuffle's state, and the call
    returns a fifth item, the shuffle's state after it; it passes the
    run's ``thread_state`` (new_thread_state) too, so that a call starts
    on one thread where the last one left its threads (None: on its
    threads).

    With ``cap`` > 0, an update that would bring the support to ``cap``
    vectors raises CapReached, the state then being unusable (a budget
    that the support reaches is the budgeted loop's).
    """
    cdef double[:, ::1] columns = column_cache.columns
    cdef double[:, ::1] f = points.f
    cdef double[:, ::1] g = points.g
    cdef double[:, ::1] coef = points.coef
    cdef double[:, ::1] avg_coef = points.avg_coef
    cdef int64_t[::1] queue = points.queue
    cdef int64_t[::1] support_state = points.support_state
    cdef unsigned char[::1] in_support = points.in_support
    cdef Py_ssize_t n_points = f.shape[1]
    cdef Py_ssize_t n_slots = columns.shape[0]
    cdef Py_ssize_t k = f.shape[0]
    cdef Py_ssize_t ii
    cdef bint average = g.shape[0] > 0
    cdef Threshold rule = read_threshold(schedule, 1.0)
    cdef Kernel kernel
    cdef Cache cache
    cdef Model model
    cdef Epochs e

    opened = open_epochs(&e, run, &rule, &control, failure, stop)
    if not (e.n_problems == k and n_slots > 0 and columns.shape[1] == n_points
            and diag.shape[0] == n_points and y.shape[0] == n_points
            and weight.shape[0] == n_points and coef.shape[0] == k
            and coef.shape[1] == n_points and queue.shape[0] == n_points
            and in_support.shape[0] == n_points
            and support_state.shape[0] == 2
            and (not average or (g.shape[1] == n_points
                                 and avg_coef.shape[0] == k
                                 and avg_coef.shape[1] == n_points))):
        raise ValueError("run_epochs: the state's arrays do not fit the points.")
    if n_threads < 1 or cap < 0:
        raise ValueError("run_epochs: n_threads >= 1 and cap >= 0.")
    _check_kernel_rows(rows, sq_norms, spec.kind, n_points)
    for ii in range(visit.shape[0]):
        if not 0 <= visit[ii] < n_points:
            raise ValueError("run_epochs: a visited point is out of range.")
    if visit.shape[0] == 0:
        closed = close_epochs(&e, run, opened)
        return closed + (e.rng,) if continued else closed
    cdef double[::1] scratch = np.zeros(rows.shape[1])
    _set_kernel(&kernel, rows, sq_norms, spec, compute_column, scratch)

    cache.columns = &columns[0, 0]
    cache.finite_columns = True
    cache.nan_column = False
    cache.n_points = n_points
    cache.n_slots = n_slots
    cache.n_used = column_cache.n_used
    cache.slot_of = &column_cache.slot_of[0]
    cdef double[::1] transient = column_cache.scratch
    cache.scratch = &transient[0]
    cdef unsigned char[::1] flags = np.zeros(2 * n_threads * PIECES,
                                             dtype=np.uint8)
    cdef Threads threads
    cdef double[::1] busy = np.zeros(n_threads)
    thread_state = _start_threads(&threads, busy, thread_state)
    cache.threads = &threads
    cache.flags = &flags[0]

    model.n_problems = k
    model.n_points = n_points
    model.first_class = first_class
    model.f = &f[0, 0]
    model.g = &g[0, 0] if average else NULL
    model.coef = &coef[0, 0]
    model.avg_coef = &avg_coef[0, 0] if average else NULL
    model.queue = &queue[0]
    model.queue_start = support_state[0]
    model.n_support = support_state[1]
    model.in_support = &in_support[0]
    model.budget = budget
    model.cap = cap
    cdef double[::1] removal = np.zeros(2 * k)
    model.removal = &removal[0]
    snapshots = np.zeros(4 * k * n_points if control.n_iter_no_change else 0)
    cdef double[::1] snap = snapshots
    model.snap_coef = &snap[0] if snap.shape[0] > 0 else NULL
    model.snap_f = &snap[2 * k * n_points] if snap.shape[0] > 0 else NULL

    cdef double[::1] delta = np.zeros(k)
    cdef double[::1] delta_avg = np.zeros(k)
    cdef double[::1] value = np.zeros(k)
    cdef Held held
    cdef Held* holding = NULL
    cdef double[::1] held_values
    cdef unsigned char[::1] held_flags
    cdef Py_ssize_t d = kernel.n_columns
    cdef Py_ssize_t widened = 0
    if _holds_updates(&kernel, &model, &cache):
        if kernel.rows32 != NULL:
            widened = n_threads * SKPERC_WIDENED_ROWS * d
        held_values = np.zeros(
            HELD_MAX * (2 * k + 2 * d + CHUNK_ROWS * n_threads) + widened)
        held_flags = np.zeros(2 * HELD_MAX * n_threads * PIECES,
                              dtype=np.uint8)
        held.count = 0
        held.delta = &held_values[0]
        held.delta_avg = held.delta + HELD_MAX * k
        held.x = held.delta_avg + HELD_MAX * k
        held.xt = held.x + HELD_MAX * d
        held.scratch = held.xt + HELD_MAX * d
        held.widened = (held.scratch + HELD_MAX * CHUNK_ROWS * n_threads
                        if widened else NULL)
        held.flags = &held_flags[0]
        holding = &held
    elif _reads_panels(&kernel, n_points):
        panels = _set_panels(&kernel, rows)
    elif kernel.indptr != NULL:
        by_feature = _set_by_feature(&kernel, rows)

    cdef int status
    with nogil:
        status = _run_epochs(
            &model, &cache, &kernel, &diag[0], &y[0], &weight[0],
            &visit[0], visit.shape[0], &e, &delta[0], &delta_avg[0],
            holding, &value[0],
        )
    _keep_threads(&threads, thread_state)
    if status == CAP_REACHED:
        raise CapReached
    support_state[0] = model.queue_start
    support_state[1] = model.n_support
    column_cache.n_used = cache.n_used
    if failure[0] == KERNEL_VALUE and (cache.nan_column
                                       or np.isnan(np.asarray(diag)).any()):
        failure[0] = KERNEL_NAN
    closed = close_epochs(&e, run, opened)
    return closed + (e.rng,) if continued else closed


cdef _check_kernel_rows(rows, const double[::1] sq_norms, int kind,
                        Py_ssize_t n_points):
    """Raise ValueError unless the rows fit the kind of kernel: the compiled
    kernels read them unchecked."""
    if kind == KERNEL_PYTHON:
        return
    if rows.shape[0] != n_points or (
            kind == KERNEL_PRECOMPUTED and (rows.shape[1] != n_points
                                            or rows.dtype != np.float64)) or (
            kind != KERNEL_PRECOMPUTED and sq_norms.shape[0] != n_points):
        raise ValueError("The kernel's rows do not fit the points.")


def kernel_column(rows, const double[::1] sq_norms, KernelSpec spec,
                  Py_ssize_t j, bint by_feature=False):
    """The compiled kernel column ``k(x_r, x_j)`` over the rows (as in
    run_epochs), as the training loop computes it; CSR rows read by
    feature (as the training loop reads them) with ``by_feature``, else a
    row at a time."""
    cdef Kernel kernel
    cdef Py_ssize_t n = rows.shape[0]
    cdef double[::1] out = np.empty(n)
    cdef double[::1] scratch = np.zeros(rows.shape[1])
    _check_kernel_rows(rows, sq_norms, spec.kind, n)
    if spec.kind == KERNEL_PYTHON or not 0 <= j < n:
        raise ValueError("kernel_column: a compiled kernel and a row of rows.")
    _set_kernel(&kernel, rows, sq_norms, spec, None, scratch)
    if by_feature and kernel.indptr != NULL:
        copy = _set_by_feature(&kernel, rows)
    with nogil:
        _column_rows(&kernel, j, _column_point(&kernel, j), &out[0], 0, n)
    return out.base


def held_kernel_values(rows, const double[::1] sq_norms, KernelSpec spec,
                       const Py_ssize_t[::1] points, Py_ssize_t i):
    """The compiled kernel values ``k(x_i, x_u)`` of row i with the points
    u of ``points`` (at most HELD_MAX rows of dense rows, float64 or
    float32), as the training loop computes them for an example that it
    visits while it holds the updates of those points (see Held)."""
    cdef Kernel kernel
    cdef Held h
    cdef Py_ssize_t u, n = rows.shape[0]
    cdef double delta = 1.0
    cdef double[::1] scratch = np.zeros(rows.shape[1])
    _check_kernel_rows(rows, sq_norms, spec.kind, n)
    if (spec.kind in (KERNEL_PYTHON, KERNEL_PRECOMPUTED) or not 0 <= i < n
            or points.shape[0] > HELD_MAX
            or not all(0 <= p < n for p in points)):
        raise ValueError("held_kernel_values: a kernel of the features, and "
                         "at most HELD_MAX points among the rows.")
    _set_kernel(&kernel, rows, sq_norms, spec, None, scratch)
    if kernel.indptr != NULL:
        raise ValueError("held_kernel_values: dense rows.")
    cdef double[::1] x = np.zeros(HELD_MAX * rows.shape[1])
    cdef double[::1] deltas = np.zeros(2 * HELD_MAX)
    h.count = 0
    h.x = &x[0]
    h.delta = &deltas[0]
    h.delta_avg = &deltas[HELD_MAX]
    for u in range(points.shape[0]):
        _hold(&h, &kernel, points[u], 1, &delta, &delta, 0)
    with nogil:
        _held_kernel_values(&kernel, &h, i)
    return np.array(<double[:h.count]> h.values) if h.count else np.empty(0)


# kernel_products takes the rows a tile at a time, all the support against
# each tile: a tile of TILE_BYTES of rows stays in the processor's cache for
# all the support, where all the rows of a thread (tens of MB) would be read
# from memory once per support vector. Each row's sum still runs over the
# support in its order: the same bits for any tile. Measured alternating
# against all the rows at once (RBF, 500 support vectors, 180,000 float64
# rows): 0.49 times the time with 100 features on two threads, 0.39 on one,
# 0.70 with 20 features and 0.32 with 300 (100,000 rows); from 64 KB to
# 1 MB the tile made no difference. CSR rows (30,000 of 3,000 columns, 40
# stored values each, 2,000 support vectors): 0.61 times; 10,000 rows of
# 100,000 columns: 0.71 times.
cdef enum:
    TILE_BYTES = 256 * 1024


cdef Py_ssize_t _tile_rows(const Kernel* kernel) noexcept nogil:
    """The rows of a tile of kernel_products: a whole number of panels
    (dots.h, of float64 values) of TILE_BYTES, at least one."""
    cdef Py_ssize_t row_bytes = kernel.n_columns * sizeof(double)
    cdef Py_ssize_t panels = TILE_BYTES // (SKPERC_PANEL * max(row_bytes, 1))
    return SKPERC_PANEL * max(panels, 1)


cdef void _clear_point(const Kernel* kernel, Py_ssize_t j,
                       double* x) noexcept nogil:
    """x of zeros again after _point(..., on_zeros=True) of a CSR point."""
    cdef Py_ssize_t p
    if kernel.indptr != NULL:
        for p in range(kernel.indptr[j], kernel.indptr[j + 1]):
            x[kernel.indices[p]] = 0.0


cdef void _add_products(const Kernel* kernel, Py_ssize_t n,
                        Py_ssize_t first, Py_ssize_t last, double sq_norm,
                        const double* coef, Py_ssize_t k,
                        Py_ssize_t n_support, double* column,
                        double* out) noexcept nogil:
    """out[c, r] += coef[c] k(x_r, v) for first <= r < last, from the
    products column[r] = x_r . v of a vector v of squared norm sq_norm
    (coef: its coefficient of each problem, n_support apart)."""
    cdef Py_ssize_t c
    cdef double a
    _apply_kernel(kernel, kernel.sq_norms + first, last - first, sq_norm,
                  column + first)
    for c in range(k):
        a = coef[c * n_support]
        if a != 0.0:
            skperc_add(a, column + first, out + c * n + first, last - first)


cdef void _product_rows(const Kernel* kernel, Py_ssize_t n,
                        const Kernel* vectors, Py_ssize_t n_support,
                        const double* coef, Py_ssize_t k, double* column,
                        double* out, Py_ssize_t lo, Py_ssize_t hi,
                        double* x) noexcept nogil:
    """out[c, r] = sum_s coef[c, s] k(x_r, v_s) for the rows lo <= r < hi
    of the kernel's n rows and the n_support vectors, summed in the order
    of s, a tile of rows at a time (tiles end on multiples of _tile_rows,
    the panels' bounds; lo is a multiple of SKPERC_PANEL). From panels,
    SKPERC_POINTS vectors at a time read each stretch of the tile once
    (dots.h: the same sums as one vector's). column
    (SKPERC_POINTS * n values) and x (SKPERC_POINTS vectors, all zeros on
    entry and on return) are scratch."""
    cdef Py_ssize_t g, s, q, first, last, grouped
    cdef Py_ssize_t tile = _tile_rows(kernel), d = vectors.n_columns
    # the groups of SKPERC_POINTS vectors, then the vectors left one by one
    grouped = 0
    if kernel.panels != NULL:
        grouped = n_support // SKPERC_POINTS
    first = lo
    while first < hi:
        last = min((first // tile + 1) * tile, hi)
        for g in range(grouped):
            s = g * SKPERC_POINTS
            for q in range(SKPERC_POINTS):
                _point(vectors, s + q, x + q * d, True)
            skperc_dots_panels_points(
                kernel.panels + first // SKPERC_PANEL * d * SKPERC_PANEL,
                last - first, d, x, d, column + first, n)
            for q in range(SKPERC_POINTS):
                _clear_point(vectors, s + q, x + q * d)
                _add_products(kernel, n, first, last, vectors.sq_norms[s + q],
                              coef + s + q, k, n_support, column + q * n, out)
        for s in range(grouped * SKPERC_POINTS, n_support):
            # once per tile and support vector: a CSR vector must not cost
            # n_columns each time
            _point(vectors, s, x, True)
            _row_dots(kernel, first, last, x, column)
            _clear_point(vectors, s, x)
            _add_products(kernel, n, first, last, vectors.sq_norms[s],
                          coef + s, k, n_support, column, out)
        first = last


cdef void _products_by_row(const Kernel* kernel, Py_ssize_t n,
                           const Kernel* vectors, Py_ssize_t n_support,
                           const double* coef, Py_ssize_t k, double* row,
                           double* out, double* x) noexcept nogil:
    """out[c, r] = sum_s coef[c, s] k(x_r, v_s) for the kernel's n rows,
    dense or CSR, a row at a time against the vectors as they lie
    (_row_dots: dense ones in vector lanes, CSR ones by their stored
    values). The bits of _product_rows and of the CSR rows'
    paths: each product summed in feature order (the zero products that the
    others skip change no sum), _apply_kernel_row the values of
    _apply_kernel, each sum over s in its order from +0, skipping the zero
    coefficients. row (n_support values) and x (a row's n_columns values)
    are scratch; out holds zeros on entry."""
    cdef Py_ssize_t r, c, s
    cdef double a
    for r in range(n):
        _point(kernel, r, x)
        _row_dots(vectors, 0, n_support, x, row)
        _apply_kernel_row(kernel, kernel.sq_norms[r], vectors.sq_norms,
                          n_support, row)
        # the problems' sums side by side, which do not wait for one another
        for s in range(n_support):
            for c in range(k):
                a = coef[c * n_support + s]
                if a != 0.0:
                    out[c * n + r] += a * row[s]


# The support vectors that kernel_products holds in panels at once for CSR
# rows: SUPPORT_CHUNK_BYTES of float64 values (at least a panel), which stay
# in a core's cache while each of its rows reads them at its features. On
# 200,000 rows of the text data of benchmarks/bench_kernel_scale.py (3,000
# columns) against 6,198 support vectors, one thread: 7.7 s, against 12.2 s
# with 16 MiB, and 21.6 s a vector at a time.
cdef enum:
    SUPPORT_CHUNK_BYTES = 1024 * 1024

# A value of the support that a CSR row's products read by feature (a
# posting, added to its vector's sum at a place that changes from value to
# value) costs about 3 of the values that the panels copy. On the text data
# of benchmarks/bench_kernel_scale.py (3,000 features), decision_function
# with the 6,198 support vectors of the unbudgeted fit on 10,000 examples
# took 20 ms for 1 row in panels against 1.8 to 3.2 ms by feature (three
# runs), 52 against 42 ms for 1,000 rows and 367 against 380 ms for 10,000,
# one thread; with the 500 of a budget (96 values each, where an example
# stores 29), 2.5 against 0.8 ms, 5.6 against 5.4 ms and 32 against 37 ms.
# The rule changes over to panels at about 3,600 and 1,100 rows.
cdef enum:
    BY_FEATURE_READ_COST = 3


cdef inline void _add_kernel_row(const Kernel* kernel, Py_ssize_t n,
                                 Py_ssize_t r, const double* sq_norms,
                                 Py_ssize_t n_vectors, const double* coef,
                                 Py_ssize_t stride, Py_ssize_t k, double* out,
                                 double* krow) noexcept nogil:
    """out[c, r] += sum_s coef[c, s] k(x_r, v_s), summed in the order of s,
    from the products of row r of the kernel's n rows with the n_vectors
    vectors in krow (their kernel values on return); coef: a problem every
    stride."""
    cdef Py_ssize_t c, s
    cdef double total, a
    _apply_kernel_row(kernel, kernel.sq_norms[r], sq_norms, n_vectors, krow)
    for c in range(k):
        total = out[c * n + r]
        for s in range(n_vectors):
            a = coef[c * stride + s]
            if a != 0.0:
                total += a * krow[s]
        out[c * n + r] = total


cdef void _row_products(const Kernel* kernel, Py_ssize_t n,
                        const Kernel* vectors, Py_ssize_t n_vectors,
                        const double* coef, Py_ssize_t stride, Py_ssize_t k,
                        double* out, Py_ssize_t lo, Py_ssize_t hi,
                        double* x, double* krow) noexcept nogil:
    """out[c, r] += sum_s coef[c, s] k(x_r, v_s) for the CSR rows lo <= r
    < hi of the kernel's n rows and the n_vectors vectors in the panels of
    vectors (coef: their coefficients, a problem every stride), summed in
    the order of s: a row's products with every vector at once, from the
    panels at the row's stored features (dots.h), in the lanes of the
    vectors, where a vector at a time gathers its values at each row's
    features. The bits of _product_rows. x (n_columns zeros on entry and on
    return) and krow (n_vectors) are scratch."""
    cdef Py_ssize_t r, d = kernel.n_columns
    for r in range(lo, hi):
        _point(kernel, r, x, True)
        skperc_dots_panels_at(vectors.panels, n_vectors, d, x,
                              kernel.indices + kernel.indptr[r],
                              kernel.indptr[r + 1] - kernel.indptr[r], krow)
        _clear_point(kernel, r, x)
        _add_kernel_row(kernel, n, r, vectors.sq_norms, n_vectors, coef,
                        stride, k, out, krow)


cdef object _csr_products(Kernel* kernel, Py_ssize_t n, support,
                          const double[::1] sq_norms,
                          const double[:, ::1] coef, Py_ssize_t n_blocks,
                          double[:, ::1] out):
    """kernel_products of CSR rows (_row_products), over the support
    SUPPORT_CHUNK_BYTES at a time, in order, copied into panels as float64
    values."""
    cdef Kernel vectors
    memset(&vectors, 0, sizeof(Kernel))
    cdef Py_ssize_t n_support = support.shape[0], k = coef.shape[0]
    cdef Py_ssize_t d = kernel.n_columns, start, size, t
    cdef Py_ssize_t chunk = SKPERC_PANEL * max(
        1, SUPPORT_CHUNK_BYTES // (sizeof(double) * d * SKPERC_PANEL))
    cdef Py_ssize_t width = min(chunk, n_support)
    cdef double[::1] x = np.zeros(n_blocks * d)
    cdef double[::1] krow = np.empty(n_blocks * width)
    for start in range(0, n_support, chunk):
        size = min(chunk, n_support - start)
        part = support[start : start + size]
        part = part.toarray() if hasattr(part, "toarray") else part
        panels = _set_panels(&vectors, np.asarray(part, dtype=np.float64))
        vectors.sq_norms = &sq_norms[start]
        with nogil:
            if n_blocks == 1:
                _row_products(kernel, n, &vectors, size, &coef[0, start],
                              n_support, k, &out[0, 0], 0, n, &x[0], &krow[0])
            else:
                for t in prange(n_blocks, num_threads=n_blocks,
                                schedule="static"):
                    _row_products(kernel, n, &vectors, size, &coef[0, start],
                                  n_support, k, &out[0, 0],
                                  _block_start(n, n_blocks, t),
                                  _block_start(n, n_blocks, t + 1),
                                  &x[t * d], &krow[t * width])


cdef void _posted_row_products(const Kernel* kernel, Py_ssize_t n,
                               const int64_t* starts, const int32_t* slots,
                               const double* values, const double* sq_norms,
                               Py_ssize_t n_support, const double* coef,
                               Py_ssize_t k, double* out, Py_ssize_t lo,
                               Py_ssize_t hi, double* x,
                               double* krow) noexcept nogil:
    """_row_products of the CSR rows lo <= r < hi against a support read by
    feature: at feature f, the slots[starts[f]:starts[f + 1]] where it is
    stored and their values. A row's kernel row costs the support's entries
    at the row's features, where panels cost every vector at each. The sums
    of _posted_dots (_kernel_budget_fast.pyx): in feature order, but for
    the products with a 0 of a vector, which change no sum (one that starts
    at +0 is never -0): the bits of _row_products."""
    cdef Py_ssize_t r, t, f
    for r in range(lo, hi):
        _point(kernel, r, x, True)
        memset(krow, 0, n_support * sizeof(double))
        for t in range(kernel.indptr[r], kernel.indptr[r + 1]):
            f = kernel.indices[t]
            _add_feature(values, slots, starts[f], starts[f + 1], n_support,
                         x[f], krow)
        _clear_point(kernel, r, x)
        _add_kernel_row(kernel, n, r, sq_norms, n_support, coef, n_support, k,
                        out, krow)


cdef object _posted_products(Kernel* kernel, Py_ssize_t n, support,
                             const double[::1] sq_norms,
                             const double[:, ::1] coef, Py_ssize_t n_blocks,
                             double[:, ::1] out):
    """kernel_products of CSR rows and a CSR support, read by feature
    (_posted_row_products): its CSC copy, as float64 values."""
    cdef Py_ssize_t n_support = support.shape[0], k = coef.shape[0]
    cdef Py_ssize_t d = kernel.n_columns, t
    by_feature = support.tocsc()
    # one past the entries: a support of no entries has an address
    cdef int64_t[::1] starts = by_feature.indptr.astype(np.int64)
    cdef int32_t[::1] slots = np.append(by_feature.indices, 0).astype(np.int32)
    cdef double[::1] values = np.append(by_feature.data, 0).astype(np.float64)
    cdef double[::1] x = np.zeros(n_blocks * d)
    cdef double[::1] krow = np.empty(n_blocks * n_support)
    with nogil:
        if n_blocks == 1:
            _posted_row_products(kernel, n, &starts[0], &slots[0], &values[0],
                                 &sq_norms[0], n_support, &coef[0, 0], k,
                                 &out[0, 0], 0, n, &x[0], &krow[0])
        else:
            for t in prange(n_blocks, num_threads=n_blocks, schedule="static"):
                _posted_row_products(kernel, n, &starts[0], &slots[0],
                                     &values[0], &sq_norms[0], n_support,
                                     &coef[0, 0], k, &out[0, 0],
                                     _block_start(n, n_blocks, t),
                                     _block_start(n, n_blocks, t + 1),
                                     &x[t * d], &krow[t * n_support])


def read_by_feature(support, rows=None):
    """Whether kernel_products reads a support of CSR vectors by feature
    (_posted_products) rather than in panels (_csr_products) for CSR rows:
    where a panel takes more than SUPPORT_CHUNK_BYTES (over more than 4,096
    features), which the reads of a row at its features then take from
    beyond a core's cache. Predicting 100,000 rows of the vocabulary data
    of benchmarks/bench_kernel_scale.py (31,000 features in use, its
    --predict-rows 100000 --predict-with unbudgeted, and merge): 2.0 s
    against 5.3 s in panels with the 5,823 support vectors of the fit on
    10,000 examples, 0.25 against 0.55 to 0.60 s with a budget of 500. On
    its text data (3,000 features) read by feature, panels take 2.3 against
    2.4 s, 0.20 against 0.24 s. Given the CSR ``rows``, also where the
    panels would copy more of the support's values than
    BY_FEATURE_READ_COST times the postings that the rows read by feature
    (their stored values times the support's, over the features: as if
    every feature were as frequent): few rows, for which the copy of the
    whole support would cost more than their products."""
    if not hasattr(support, "tocsc"):
        return False
    n_vectors, d = support.shape
    return SKPERC_PANEL * 8 * d > SUPPORT_CHUNK_BYTES or (
        rows is not None
        and BY_FEATURE_READ_COST * rows.nnz * support.nnz < n_vectors * d * d)


# Fewer rows than this go a row at a time against the support as it lies
# (_products_by_row), where the columns would compute a panel of
# SKPERC_PANEL rows for each support vector, mostly padding, and CSR rows
# would copy the whole support first, into panels or by feature. Dense rows,
# kernel_products alone on standard normal values: against 500 support
# vectors of 64 features (10 problems), one row took 12 us against 53 us
# and 5 rows 44 against 65 us; against 3,000 of 20 features, 30 against
# 130 us and 131 to 136 against 157 us; of 100 features, 76 against 361 us
# and 360 against 391 us, and 6 rows 431 against 414 us. CSR rows,
# decision_function with the 6,198 support vectors of the text data of
# benchmarks/bench_kernel_scale.py (fit on 10,000 examples): one row took
# 475 to 522 us against 927 to 974 us, 5 rows 1,088 to 1,118 against 1,084
# to 1,121 us (medians of 5 x 300 or x 50 calls, one thread, AVX-512).
cdef enum:
    BY_ROW_ROWS = 6


def kernel_products(rows, const double[::1] sq_norms, support,
                    const double[::1] support_sq_norms, KernelSpec spec,
                    const double[:, ::1] coef, Py_ssize_t n_threads=1):
    """``coef @ k(support, rows)``, of shape (len(coef), len(rows)), for a
    compiled kernel on the features: the rows and the support as in
    run_epochs (dense or CSR, float64 or float32, the same bits either
    way), with their squared_norms; summed over the support in its order,
    one kernel column at a time (for CSR rows, with vector instructions,
    one row at a time: _csr_products, or by feature: _posted_products; for
    fewer than BY_ROW_ROWS rows, a row at a time against the support as it
    lies: _products_by_row), the rows split among up to
    ``n_threads`` threads, each with ROWS_PER_THREAD kernel values and
    SKPERC_PANEL rows at least (the same bits for any number)."""
    cdef Kernel kernel, vectors
    cdef Py_ssize_t n = rows.shape[0], n_support = support.shape[0]
    cdef Py_ssize_t k = coef.shape[0], d = rows.shape[1], t
    # a thread takes ROWS_PER_THREAD kernel values at least, as for the
    # columns (a row costs n_support of them), and a panel of rows (the
    # bounds of its block)
    cdef Py_ssize_t n_blocks = min(_n_blocks(n_threads, n * n_support),
                                   max(1, n // SKPERC_PANEL))
    cdef double[:, ::1] out = np.zeros((k, n))
    cdef double[::1] column
    cdef double[::1] x
    if spec.kind in (KERNEL_PYTHON, KERNEL_PRECOMPUTED) or not (
            support.shape[1] == d and sq_norms.shape[0] == n
            and support_sq_norms.shape[0] == n_support
            and coef.shape[1] == n_support and n_threads >= 1):
        raise ValueError("kernel_products: a kernel on the features, arrays "
                         "that fit, and n_threads >= 1.")
    if n == 0 or n_support == 0 or k == 0:
        return out.base
    _set_kernel(&kernel, rows, sq_norms, spec, None, np.empty(0))
    _set_kernel(&vectors, support, support_sq_norms, spec, None, np.empty(0))
    if n < BY_ROW_ROWS and (_lane_bytes(&vectors, n_support) > 0
                            or vectors.indptr != NULL):
        column = np.empty(n_support)
        x = np.empty(d + 1)
        with nogil:
            _products_by_row(&kernel, n, &vectors, n_support, &coef[0, 0], k,
                             &column[0], &out[0, 0], &x[0])
        return out.base
    if kernel.indptr != NULL and read_by_feature(support, rows):
        _posted_products(&kernel, n, support, support_sq_norms, coef,
                         n_blocks, out)
        return out.base
    if kernel.indptr != NULL and skperc_dots_many_supported():
        _csr_products(&kernel, n, support, support_sq_norms, coef, n_blocks,
                      out)
        return out.base
    # the rows are read once per support vector: in panels, for a copy of
    # them (the validation part of early stopping, a batch of partial_fit)
    if _lane_bytes(&kernel, n) > 0:
        panels = _set_panels(&kernel, rows)
    column = np.empty(SKPERC_POINTS * n)
    # the vectors of each thread, as float64 values
    x = np.zeros(n_blocks * SKPERC_POINTS * d + 1)
    cdef const double* weights = &coef[0, 0]
    cdef double* values = &out[0, 0]
    cdef double* scratch = &column[0]
    cdef double* xs = &x[0]
    with nogil:
        if n_blocks == 1:
            _product_rows(&kernel, n, &vectors, n_support, weights, k, scratch,
                          values, 0, n, xs)
        else:
            for t in prange(n_blocks, num_threads=n_blocks, schedule="static"):
                _product_rows(&kernel, n, &vectors, n_support, weights, k,
                              scratch, values,
                              _block_start(n, n_blocks, t, SKPERC_PANEL),
                              _block_start(n, n_blocks, t + 1, SKPERC_PANEL),
                              xs + t * SKPERC_POINTS * d)
    return out.base


def weighted_rows(const double[:, ::1] kernel, const double[:, ::1] coef):
    """``kernel @ coef.T``, each value summed in the order of the columns
    of ``kernel``: the sum of a row does not depend on the other rows, as
    it can in a BLAS product (whose kernels treat the last rows of a block
    otherwise, and may split the rows among threads)."""
    cdef Py_ssize_t n = kernel.shape[0], m = kernel.shape[1], k = coef.shape[0]
    cdef Py_ssize_t c
    if coef.shape[1] != m:
        raise ValueError("weighted_rows: coef has a column per column of kernel.")
    out = np.zeros((k, n))
    cdef double[:, ::1] sums = out
    if n == 0 or m == 0:
        return out.T
    with nogil:
        for c in range(k):
            _dots(&kernel[0, 0], n, m, &coef[c, 0], &sums[c, 0])
    return out.T


def kernel_diagonal(const double[::1] sq_norms, KernelSpec spec,
                    const double[:, ::1] gram=None):
    """``k(x_r, x_r)`` of the rows of a compiled kernel, from their squared
    norms, or the diagonal of the Gram matrix for KERNEL_PRECOMPUTED."""
    cdef Py_ssize_t r, n = sq_norms.shape[0]
    if spec.kind == KERNEL_PRECOMPUTED:
        if gram is None or gram.shape[0] != gram.shape[1]:
            raise ValueError("kernel_diagonal: the Gram matrix.")
        n = gram.shape[0]
    cdef double[::1] out = np.empty(n)
    if spec.kind == KERNEL_PYTHON:
        raise ValueError("kernel_diagonal: a compiled kernel.")
    with nogil:
        for r in range(n):
            if spec.kind == KERNEL_PRECOMPUTED:
                out[r] = gram[r, r]
            elif spec.kind == KERNEL_LINEAR or spec.kind == KERNEL_POLY:
                out[r] = sq_norms[r]
            elif spec.kind == KERNEL_RBF:
                out[r] = 1.0
            elif spec.kind == KERNEL_COSINE:
                out[r] = 1.0 if sq_norms[r] > 0.0 else 0.0
            else:
                out[r] = tanh(spec.gamma * sq_norms[r] + spec.coef0)
        if spec.kind == KERNEL_POLY and n > 0:
            _poly_values(&out[0], n, spec.gamma, spec.coef0, spec.degree)
    return out.base

