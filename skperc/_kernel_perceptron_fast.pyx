# cython: language_level=3, boundscheck=False, wraparound=False
# cython: cdivision=True, initializedcheck=False
"""Compiled epochs of the kernel perceptron.

The loop keeps the decision value of every point it holds, ``f[c, r]`` for
each one-vs-rest problem ``c``, and the dual coefficients ``coef[c, r]``.
Examining an example reads its decision values only; an update adds the
kernel column of the updated example, ``k(x_r, x_i)`` over the points
``r``, into them: one column serves every problem the example updates, and
no kernel value is computed for an example that makes no update. Columns
are kept in a cache of ``n_slots`` columns that evicts the least recently
used one, so that an example that updates again costs an addition only.

The points are the examples visited (in ``visit``) and the support vectors
of earlier calls, which are not visited but whose decision values must
follow the function, for the norm ``||w||^2 = sum_r coef[c, r] f[c, r]``.
"""

from cpython.ref cimport PyObject
from cython.view cimport array as c_array
from libc.math cimport pow, sqrt, tanh
from libc.stdint cimport int32_t, int64_t, uintptr_t
from libc.stdlib cimport free, malloc

import numpy as np

from ._epochs cimport (
    CHECK_EVERY, Control, Epochs, active, after_update, begin_epoch,
    close_epochs, count_update, end_epoch, interrupted, observe, open_epochs,
    rule_on, see_radius, start_run,
)
from ._overflow cimport (
    DECISION_VALUE, KERNEL_NAN, KERNEL_VALUE, fail, finite,
)
from ._thresholds cimport Threshold, read_threshold

cdef extern from "rbf.h":
    void skperc_rbf(double* out, const double* sq_norms, double sq_norm_j,
                    double gamma, Py_ssize_t n) noexcept nogil

# The kernels the loop computes itself; KERNEL_PYTHON calls back to Python.
cpdef enum KernelKind:
    KERNEL_PYTHON = 0
    KERNEL_LINEAR = 1
    KERNEL_POLY = 2
    KERNEL_RBF = 3
    KERNEL_SIGMOID = 4
    KERNEL_PRECOMPUTED = 5


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
    const double* rows        # (n_points, n_columns), C order: the points,
    int n_columns             # or the Gram matrix for KERNEL_PRECOMPUTED
    const double* sq_norms    # ||x_r||^2, for KERNEL_RBF
    PyObject* compute         # compute(j, slot), for KERNEL_PYTHON


cdef struct Cache:
    double* columns           # (n_slots, n_points)
    bint finite_columns       # whether every column computed was finite
    bint nan_column           # whether a column that was not held NaN
    Py_ssize_t n_points
    Py_ssize_t n_slots
    Py_ssize_t n_used
    int64_t* slot_of          # (n_points,): the slot of a point's column, or -1
    int64_t* owner            # (n_slots,): the point whose column a slot holds
    int64_t* last_used        # (n_slots,)
    int64_t clock


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
    # the snapshots w_1 and w_r of the stopping rule (NULL with it off),
    # as their coefficients and decision values on the points:
    double* snap_coef         # (2, n_problems, n_points)
    double* snap_f            # (2, n_problems, n_points)


cdef void _dots(const double* rows, Py_ssize_t n, Py_ssize_t m,
                const double* x, double* out) noexcept nogil:
    """out[r] = rows[r] . x for the n rows of length m, each summed in
    feature order; 8 rows at a time, as 8 independent sums. (A BLAS gemv
    does the same work, but hands it to threads whose start and wait cost
    more than the sums on rows this short.)"""
    cdef Py_ssize_t r, j, end = n - n % 8
    cdef const double* row
    cdef double a0, a1, a2, a3, a4, a5, a6, a7, xj
    for r in range(0, end, 8):
        row = rows + r * m
        a0 = a1 = a2 = a3 = a4 = a5 = a6 = a7 = 0.0
        for j in range(m):
            xj = x[j]
            a0 += row[j] * xj
            a1 += row[m + j] * xj
            a2 += row[2 * m + j] * xj
            a3 += row[3 * m + j] * xj
            a4 += row[4 * m + j] * xj
            a5 += row[5 * m + j] * xj
            a6 += row[6 * m + j] * xj
            a7 += row[7 * m + j] * xj
        out[r] = a0
        out[r + 1] = a1
        out[r + 2] = a2
        out[r + 3] = a3
        out[r + 4] = a4
        out[r + 5] = a5
        out[r + 6] = a6
        out[r + 7] = a7
    for r in range(end, n):
        row = rows + r * m
        a0 = 0.0
        for j in range(m):
            a0 += row[j] * x[j]
        out[r] = a0


cdef int _compute_column(const Kernel* kernel, Py_ssize_t j, Py_ssize_t slot,
                         double* out, Py_ssize_t n) except -1 nogil:
    """out[r] = k(x_r, x_j) for the n points."""
    cdef Py_ssize_t r
    cdef Py_ssize_t m = kernel.n_columns
    if kernel.kind == KERNEL_PYTHON:
        with gil:
            (<object>kernel.compute)(j, slot)
        return 0
    if kernel.kind == KERNEL_PRECOMPUTED:
        for r in range(n):
            out[r] = kernel.rows[r * m + j]
        return 0
    _dots(kernel.rows, n, m, kernel.rows + j * m, out)
    if kernel.kind == KERNEL_POLY:
        for r in range(n):
            out[r] = pow(kernel.gamma * out[r] + kernel.coef0, kernel.degree)
    elif kernel.kind == KERNEL_RBF:
        skperc_rbf(out, kernel.sq_norms, kernel.sq_norms[j], kernel.gamma, n)
    elif kernel.kind == KERNEL_SIGMOID:
        for r in range(n):
            out[r] = tanh(kernel.gamma * out[r] + kernel.coef0)
    return 0


cdef double* _column(Cache* cache, const Kernel* kernel,
                     Py_ssize_t j) except NULL nogil:
    """The kernel column of point j, from the cache or computed into it."""
    cdef int64_t slot = cache.slot_of[j]
    cdef Py_ssize_t s
    cache.clock += 1
    if slot < 0:
        if cache.n_used < cache.n_slots:
            slot = cache.n_used
            cache.n_used += 1
        else:
            # A scan of the slots costs little next to a column of kernels.
            slot = 0
            for s in range(1, cache.n_slots):
                if cache.last_used[s] < cache.last_used[slot]:
                    slot = s
            cache.slot_of[cache.owner[slot]] = -1
        cache.owner[slot] = j
        _compute_column(kernel, j, slot, cache.columns + slot * cache.n_points,
                        cache.n_points)
        if not _all_finite(cache.columns + slot * cache.n_points,
                           cache.n_points):
            cache.finite_columns = False
            # a kernel undefined on the input is not one that overflowed
            cache.nan_column = _any_nan(cache.columns + slot * cache.n_points,
                                        cache.n_points)
        cache.slot_of[j] = slot
    cache.last_used[slot] = cache.clock
    return cache.columns + slot * cache.n_points


cdef inline bint _all_finite(const double* values,
                            Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t r
    cdef int all_finite = 1
    for r in range(n):
        all_finite &= finite(values[r])
    return all_finite


cdef inline bint _any_nan(const double* values, Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t r
    for r in range(n):
        if values[r] != values[r]:
            return True
    return False


cdef inline void _add(double a, const double* column, double* f,
                      Py_ssize_t n) noexcept nogil:
    cdef Py_ssize_t r
    for r in range(n):
        f[r] += a * column[r]


cdef inline void _add_two(double a, double b, const double* column, double* f,
                          double* g, Py_ssize_t n) noexcept nogil:
    """f += a column and g += b column, in one pass over the column."""
    cdef Py_ssize_t r
    for r in range(n):
        f[r] += a * column[r]
        g[r] += b * column[r]


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


cdef int _forget_oldest(Model* m, Cache* cache, const Kernel* kernel,
                        Epochs* e) except -1 nogil:
    """Remove the oldest support vector from the function."""
    cdef Py_ssize_t n = m.n_points
    cdef Py_ssize_t c
    cdef int64_t j = m.queue[m.queue_start]
    cdef double* column = _column(cache, kernel, j)
    m.queue_start = (m.queue_start + 1) % n
    m.n_support -= 1
    m.in_support[j] = 0
    for c in range(m.n_problems):
        if m.coef[c * n + j] == 0.0:
            continue
        if m.g != NULL:
            _add_two(-m.coef[c * n + j], -m.avg_coef[c * n + j], column,
                     m.f + c * n, m.g + c * n, n)
            m.avg_coef[c * n + j] = 0.0
        else:
            _add(-m.coef[c * n + j], column, m.f + c * n, n)
        m.coef[c * n + j] = 0.0
        # The function of problem c changed: it has not converged.
        e.epoch_changes[c] += 1
        e.converged[c] = 0
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
) except -1 nogil:
    """The epochs of one call. A kernel value, radius, threshold or decision
    value that is not finite stops the call, recorded in e.failure."""
    cdef Py_ssize_t n = m.n_points
    cdef Py_ssize_t k = m.n_problems
    cdef Py_ssize_t epoch, ii, i, c
    cdef Py_ssize_t countdown = CHECK_EVERY
    cdef double yc
    cdef double* column
    cdef bint updated

    if not start_run(e):
        return 0
    for epoch in range(e.control.max_iter):
        if begin_epoch(e, epoch, visit, n_visit) == 0:
            break
        for ii in range(n_visit):
            countdown -= 1
            if countdown <= 0:
                countdown = CHECK_EVERY
                interrupted(e)
            i = visit[ii]
            if weight[i] == 0.0:
                continue
            # The radius follows k(x, x), the squared norm in feature space.
            if epoch == 0:
                if not finite(diag[i]):
                    fail(e.failure, KERNEL_VALUE, epoch, e.n_updates[0], 0)
                    return 0
                if diag[i] > e.max_norm2:
                    e.max_norm2 = diag[i]
                if not see_radius(e, diag[i]):
                    return 0

            updated = False
            for c in range(k):
                delta[c] = 0.0
                if not active(e, c):
                    continue
                yc = 1.0 if y[i] == m.first_class + c else -1.0
                if not finite(m.f[c * n + i]):
                    fail(e.failure, DECISION_VALUE, epoch, e.n_updates[c], c)
                    return 0
                e.n_steps[c] += 1
                observe(e, c, yc * m.f[c * n + i], weight[i])
                if yc * m.f[c * n + i] <= e.thresholds[c]:
                    delta[c] = yc * weight[i]
                    # Lazy averaging: the update made at step s counts in
                    # the mean of the function over steps s..N.
                    delta_avg[c] = delta[c] * <double>(e.n_steps[c] - 1)
                    count_update(e, c, weight[i])
                    updated = True
                    if not after_update(e, c):
                        return 0
            if not updated:
                continue

            if not m.in_support[i]:
                while m.budget > 0 and m.n_support >= m.budget:
                    _forget_oldest(m, cache, kernel, e)
                    if not cache.finite_columns:
                        fail(e.failure, KERNEL_VALUE, epoch, e.n_updates[0], 0)
                        return 0
                m.queue[(m.queue_start + m.n_support) % n] = i
                m.n_support += 1
                m.in_support[i] = 1
            # an update touches every point: it counts as many examples
            countdown -= n // 64
            column = _column(cache, kernel, i)
            if not cache.finite_columns:
                fail(e.failure, KERNEL_VALUE, epoch, e.n_updates[0], 0)
                return 0
            for c in range(k):
                if delta[c] == 0.0:
                    continue
                m.coef[c * n + i] += delta[c]
                if m.g != NULL:
                    m.avg_coef[c * n + i] += delta_avg[c]
                    _add_two(delta[c], delta_avg[c], column, m.f + c * n,
                             m.g + c * n, n)
                else:
                    _add(delta[c], column, m.f + c * n, n)
        if rule_on(e):
            _measure_moves(m, e)
        end_epoch(e, m.n_support)
        if rule_on(e):
            _take_snapshots(m, e)

    # The decision values of points not visited since their last change.
    if not _all_finite(m.f, k * n) or (m.g != NULL and not _all_finite(m.g, k * n)):
        fail(e.failure, DECISION_VALUE, e.n_run - 1, e.n_updates[0], 0)
        return 0
    return 1


cdef void _set_kernel(Kernel* kernel, const double[:, ::1] rows,
                      const double[::1] sq_norms, KernelSpec spec,
                      object compute):
    kernel.kind = spec.kind
    kernel.gamma = spec.gamma
    kernel.coef0 = spec.coef0
    kernel.degree = spec.degree
    kernel.rows = &rows[0, 0] if rows.shape[0] > 0 else NULL
    kernel.n_columns = <int>rows.shape[1]
    kernel.sq_norms = &sq_norms[0] if sq_norms.shape[0] > 0 else NULL
    kernel.compute = <PyObject*>compute


cdef extern from "Python.h":
    int PyTraceMalloc_Track(unsigned int domain, uintptr_t ptr, size_t size)
    int PyTraceMalloc_Untrack(unsigned int domain, uintptr_t ptr)


# numpy's tracemalloc domain: the cache is counted like numpy's own arrays.
cdef unsigned int _NUMPY_DOMAIN = 389047


cdef void _free_traced(void* data) noexcept:
    PyTraceMalloc_Untrack(_NUMPY_DOMAIN, <uintptr_t>data)
    free(data)


def column_cache(Py_ssize_t n_slots, Py_ssize_t n_points):
    """Uninitialized memory for ``n_slots`` kernel columns of ``n_points``.

    numpy advises the kernel to back large arrays with transparent huge
    pages, and where the kernel then compacts memory on the first touch of a
    page, some fits took twice as long as others. Memory from malloc is
    touched page by page as the cache fills, at an even cost; it is reported
    to tracemalloc as numpy reports its arrays.
    """
    cdef size_t size = n_slots * n_points * sizeof(double)
    cdef c_array cache = c_array(
        shape=(n_slots, n_points), itemsize=sizeof(double), format="d",
        allocate_buffer=False,
    )
    cache.data = <char*>malloc(size)
    if cache.data == NULL:
        raise MemoryError(f"cannot allocate a cache of {size} bytes")
    cache.callback_free_data = _free_traced
    PyTraceMalloc_Track(_NUMPY_DOMAIN, <uintptr_t>cache.data, size)
    return np.asarray(cache)


def run_epochs(
    const double[:, ::1] rows,
    const double[::1] sq_norms,
    KernelSpec spec,
    object compute_column,
    double[:, ::1] columns,
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
):
    """Run up to ``control.max_iter`` epochs over the points in visit;
    update the state in place.

    The kernel is ``spec`` on ``rows`` (the points, or the Gram matrix), or,
    for KERNEL_PYTHON, ``compute_column(j, slot)``, which writes the column
    of point j into ``columns[slot]``. ``columns`` is the cache, one column
    a row. Point ``r`` is positive for problem ``c`` when
    ``y[r] == first_class + c``; ``diag`` holds ``k(x_r, x_r)``.
    ``points`` holds the function on the points (``f``, ``g``, ``coef``,
    ``avg_coef``; ``g`` and ``avg_coef`` with no rows turn averaging off)
    and the support, oldest first, as a ring ``queue`` of
    ``support_state = (start, count)`` with ``in_support``; ``run`` the
    counters of the run (``n_updates``, ``n_steps``) and ``radius``, the
    largest k(x, x) seen and the schedule's rho^2. ``schedule`` is a
    validated ThresholdSchedule. ``stop[0]`` set by another thread ends the
    call with KeyboardInterrupt. Returns (epochs of each problem, whether
    each converged, whether the stopping rule ended each). A value that is
    not finite stops the run and is recorded in ``failure`` (see
    _overflow.pxd), the state then being unusable.
    """
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
    _check_kernel_rows(rows, sq_norms, spec.kind, n_points)
    for ii in range(visit.shape[0]):
        if not 0 <= visit[ii] < n_points:
            raise ValueError("run_epochs: a visited point is out of range.")
    if visit.shape[0] == 0:
        return close_epochs(&e, run, opened)
    _set_kernel(&kernel, rows, sq_norms, spec, compute_column)

    cdef int64_t[::1] slot_of = np.full(n_points, -1, dtype=np.int64)
    cdef int64_t[::1] owner = np.zeros(n_slots, dtype=np.int64)
    cdef int64_t[::1] last_used = np.zeros(n_slots, dtype=np.int64)
    cache.columns = &columns[0, 0]
    cache.finite_columns = True
    cache.nan_column = False
    cache.n_points = n_points
    cache.n_slots = n_slots
    cache.n_used = 0
    cache.slot_of = &slot_of[0]
    cache.owner = &owner[0]
    cache.last_used = &last_used[0]
    cache.clock = 0

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
    snapshots = np.zeros(4 * k * n_points if control.n_iter_no_change else 0)
    cdef double[::1] snap = snapshots
    model.snap_coef = &snap[0] if snap.shape[0] > 0 else NULL
    model.snap_f = &snap[2 * k * n_points] if snap.shape[0] > 0 else NULL

    cdef double[::1] delta = np.zeros(k)
    cdef double[::1] delta_avg = np.zeros(k)

    with nogil:
        _run_epochs(
            &model, &cache, &kernel, &diag[0], &y[0], &weight[0],
            &visit[0], visit.shape[0], &e, &delta[0], &delta_avg[0],
        )
    support_state[0] = model.queue_start
    support_state[1] = model.n_support
    if failure[0] == KERNEL_VALUE and (cache.nan_column
                                       or np.isnan(np.asarray(diag)).any()):
        failure[0] = KERNEL_NAN
    return close_epochs(&e, run, opened)


cdef _check_kernel_rows(const double[:, ::1] rows, const double[::1] sq_norms,
                        int kind, Py_ssize_t n_points):
    """Raise ValueError unless the rows fit the kind of kernel: the compiled
    kernels read them unchecked."""
    if kind == KERNEL_PYTHON:
        return
    if rows.shape[0] != n_points or (
            kind == KERNEL_PRECOMPUTED and rows.shape[1] != n_points) or (
            kind != KERNEL_PRECOMPUTED and sq_norms.shape[0] != n_points):
        raise ValueError("The kernel's rows do not fit the points.")


def kernel_column(
    const double[:, ::1] rows,
    const double[::1] sq_norms,
    KernelSpec spec,
    Py_ssize_t j,
):
    """The compiled kernel column ``k(x_r, x_j)`` over the rows, as the
    training loop computes it."""
    cdef Kernel kernel
    cdef double[::1] out = np.empty(rows.shape[0])
    _check_kernel_rows(rows, sq_norms, spec.kind, rows.shape[0])
    if spec.kind == KERNEL_PYTHON or not 0 <= j < rows.shape[0]:
        raise ValueError("kernel_column: a compiled kernel and a row of rows.")
    _set_kernel(&kernel, rows, sq_norms, spec, None)
    with nogil:
        _compute_column(&kernel, j, 0, &out[0], rows.shape[0])
    return out.base


def kernel_diagonal(
    const double[:, ::1] rows,
    const double[::1] sq_norms,
    KernelSpec spec,
):
    """``k(x_r, x_r)`` of the rows of a compiled kernel, from the squared
    norms (the diagonal of the Gram matrix for KERNEL_PRECOMPUTED)."""
    cdef Py_ssize_t r, n = rows.shape[0]
    cdef double[::1] out = np.empty(n)
    _check_kernel_rows(rows, sq_norms, spec.kind, n)
    if spec.kind == KERNEL_PYTHON:
        raise ValueError("kernel_diagonal: a compiled kernel.")
    with nogil:
        for r in range(n):
            if spec.kind == KERNEL_PRECOMPUTED:
                out[r] = rows[r, r]
            elif spec.kind == KERNEL_LINEAR:
                out[r] = sq_norms[r]
            elif spec.kind == KERNEL_POLY:
                out[r] = pow(spec.gamma * sq_norms[r] + spec.coef0, spec.degree)
            elif spec.kind == KERNEL_RBF:
                out[r] = 1.0
            else:
                out[r] = tanh(spec.gamma * sq_norms[r] + spec.coef0)
    return out.base
