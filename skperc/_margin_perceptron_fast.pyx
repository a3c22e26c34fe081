# cython: language_level=3, boundscheck=False, wraparound=False
# cython: cdivision=True, initializedcheck=False
"""Compiled epoch loop of the margin perceptrons.

One call runs up to ``max_iter`` epochs of a block of one-vs-rest problems
over C-ordered dense rows or CSR rows, with float32 or float64 values.
Decision values are summed in double precision in an order fixed by the
feature indices alone (see _dot and _scores_lanes), so dense and CSR rows
give the same bits; with float64 values every sum runs in feature order,
the arithmetic of scikit-learn's Perceptron, and a problem trained alone or
inside a block gives the same bits too.
"""

from cpython.ref cimport PyObject
from libc.math cimport sqrt
from libc.stdint cimport int32_t, int64_t, uint64_t

import numpy as np

from ._overflow cimport (
    AVERAGED_WEIGHTS, DECISION_VALUE, SQUARED_RADIUS, THRESHOLD, WEIGHTS,
    fail, finite,
)
from ._shuffle cimport shuffle_order
from ._thresholds cimport POWER, PYTHON, Threshold, follow_radius, threshold

cdef extern from *:
    """
    #if defined(__GNUC__) || defined(__clang__)
    #define SKPERC_PREFETCH(address) __builtin_prefetch(address)
    #else
    #define SKPERC_PREFETCH(address) ((void)0)
    #endif

    /* out[c] = sum_j coef[j, c] x_j over the entries of x (indices ind, or
       0..nnz-1 when ind is NULL), for the width columns of coef, 8 at a
       time: each sum in feature order in a register of its own, the row of
       coef read once per 8 columns. GCC would vectorize the loop over j
       instead, interleaving two rows of coef at the cost of a shuffle per
       product and running at half the speed, so that is turned off here. */
    #if defined(__GNUC__) && !defined(__clang__)
    #define SKPERC_LANES_ATTRIBUTES __attribute__((optimize("no-tree-loop-vectorize")))
    #else
    #define SKPERC_LANES_ATTRIBUTES
    #endif
    #define SKPERC_LANES_ROW                                                \\
        a0 += row[0] * xj; a1 += row[1] * xj; a2 += row[2] * xj;           \\
        a3 += row[3] * xj; a4 += row[4] * xj; a5 += row[5] * xj;           \\
        a6 += row[6] * xj; a7 += row[7] * xj;
    #define SKPERC_LANES_KERNEL(name, value_t, index_t)                      \\
    static SKPERC_LANES_ATTRIBUTES void name(                                \\
            const value_t *x, const index_t *ind, Py_ssize_t nnz,            \\
            const double *coef, Py_ssize_t width, double *out) {             \\
        for (Py_ssize_t chunk = 0; chunk < width; chunk += 8) {              \\
            double a0 = 0, a1 = 0, a2 = 0, a3 = 0;                           \\
            double a4 = 0, a5 = 0, a6 = 0, a7 = 0;                           \\
            for (Py_ssize_t j = 0; j < nnz; j++) {                           \\
                const double xj = (double)x[j];                              \\
                const double *row = coef                                     \\
                    + (ind == NULL ? j : (Py_ssize_t)ind[j]) * width + chunk;\\
                SKPERC_LANES_ROW                                             \\
            }                                                                \\
            out[chunk] = a0; out[chunk + 1] = a1; out[chunk + 2] = a2;       \\
            out[chunk + 3] = a3; out[chunk + 4] = a4; out[chunk + 5] = a5;   \\
            out[chunk + 6] = a6; out[chunk + 7] = a7;                        \\
        }                                                                    \\
    }
    SKPERC_LANES_KERNEL(skperc_lanes_f32_i32, float, int32_t)
    SKPERC_LANES_KERNEL(skperc_lanes_f32_i64, float, int64_t)
    SKPERC_LANES_KERNEL(skperc_lanes_f64_i32, double, int32_t)
    SKPERC_LANES_KERNEL(skperc_lanes_f64_i64, double, int64_t)
    """
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

# The lifted coordinate s of the intercept.
cdef enum:
    NO_LIFT = 0
    FIXED_LIFT = 1
    AUTO_LIFT = 2


cdef struct Rule:
    Threshold threshold
    double eta0
    int lift_mode
    double lift_value


cdef struct Problems:
    Py_ssize_t n_problems
    int32_t first_class
    double* coef          # (n_features, width), C order; see _width
    double* lift_coef     # (n_problems,): the weights of the lifted coordinate
    double* avg_coef      # like coef, or NULL without averaging
    double* avg_lift      # like lift_coef
    int64_t* n_updates
    int64_t* n_steps
    int64_t* n_epochs
    unsigned char* converged


cdef inline double _threshold(const Rule* rule, int64_t t,
                              double rho2) except -1.0 nogil:
    """eta0 * beta_t for the t-th update (t = 1, 2, ...)."""
    return rule.eta0 * threshold(&rule.threshold, t, rho2)


# Each sum is a chain of dependent additions, so its latency, not memory,
# bounds a dot product; the kernels below run independent sums side by side.
# A multiclass block scores LANES problems at a time, each lane the
# sequential sum of one problem. A binary problem on float64 rows keeps the
# sequential sum (the rows stream from memory about as fast as it runs);
# on float32 rows it adds feature j into partial sum j % LANES and adds the
# partial sums in a fixed tree.
cdef enum:
    LANES = 8


cdef inline Py_ssize_t _width(Py_ssize_t n_problems) noexcept nogil:
    """Columns of the weights: one problem alone, else whole lanes."""
    if n_problems == 1:
        return 1
    return (n_problems + LANES - 1) // LANES * LANES


cdef inline double _dot(const floating* x, const index_t* ind, Py_ssize_t nnz,
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
            for j in range(nnz):
                part[ind[j] % LANES] += w[ind[j]] * <double>x[j]
        s = (((part[0] + part[1]) + (part[2] + part[3]))
             + ((part[4] + part[5]) + (part[6] + part[7])))
    return s


cdef inline double _squared_norm(const floating* x,
                                 Py_ssize_t nnz) noexcept nogil:
    """||x||^2, summed in order."""
    cdef Py_ssize_t j
    cdef double s = 0.0
    for j in range(nnz):
        s += <double>x[j] * <double>x[j]
    return s


cdef inline void _scores_lanes(const floating* x, const index_t* ind,
                               Py_ssize_t nnz, const double* coef,
                               Py_ssize_t width, double* out) noexcept nogil:
    """out[c] = sum_j coef[j, c] x_j for the width (a multiple of LANES)
    columns of coef, each in feature order (the C kernel above)."""
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


cdef inline bint _axpy(const floating* x, const index_t* ind, Py_ssize_t nnz,
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


cdef inline void _row(const floating* data, const index_t* indices,
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


cdef Py_ssize_t _run_epochs(
    const floating* data,
    const index_t* indices,
    const index_t* indptr,
    Py_ssize_t n_samples,
    Py_ssize_t n_features,
    const int32_t* y,
    const double* weight,
    Problems* p,
    Py_ssize_t width,
    double* radius,
    const Rule* rule,
    Py_ssize_t max_iter,
    bint shuffle,
    uint64_t seed,
    bint stop_when_separated,
    int verbose,
    Py_ssize_t* order,
    double* scores,
    double* thresholds,
    int64_t* epoch_updates,
    int64_t* failure,
) except -1 nogil:
    """The epochs of one call; ``width`` is 1 for a binary problem, else the
    column count of p.coef (n_problems rounded up to LANES). A value that is
    not finite stops the call where it appears, recorded in ``failure``."""
    cdef Py_ssize_t k = p.n_problems
    cdef Py_ssize_t epoch, ii, i, j, c, nnz, n_active, n_epochs = 0
    cdef const floating* x
    cdef const index_t* ind
    cdef double max_norm2 = radius[0]
    cdef double rho2 = radius[1]
    cdef double lift = 0.0
    cdef double nrm2, f, a, yc
    cdef bint radius_changed
    cdef int64_t total_updates
    cdef uint64_t rng = seed

    if rule.lift_mode == FIXED_LIFT:
        lift = rule.lift_value
    elif rule.lift_mode == AUTO_LIFT:
        lift = sqrt(max_norm2)
    for c in range(k):
        p.converged[c] = 0
        thresholds[c] = _threshold(rule, p.n_updates[c] + 1, rho2)
        if not finite(thresholds[c]):
            fail(failure, THRESHOLD, 0, p.n_updates[c], c)
            return n_epochs

    for epoch in range(max_iter):
        n_active = 0
        for c in range(k):
            epoch_updates[c] = 0
            if not (stop_when_separated and p.converged[c]):
                n_active += 1
        if n_active == 0:
            break
        if shuffle:
            shuffle_order(order, n_samples, &rng)
        radius_changed = False

        for ii in range(n_samples):
            i = order[ii]
            if shuffle and ii + 2 < n_samples:
                # Shuffled rows are not in storage order, so the hardware
                # does not foresee them: ask for the row after next. (Not
                # in a function of its own: GCC deems a function that only
                # prefetches free of effects and drops its calls.)
                _row(data, indices, indptr, order[ii + 2], n_features,
                     &x, &ind, &nnz)
                # One prefetch per 8 values: a 64-byte cache line.
                for j in range(0, nnz, 8):
                    SKPERC_PREFETCH(x + j)
                    if ind != NULL:
                        SKPERC_PREFETCH(ind + j)
                SKPERC_PREFETCH(weight + order[ii + 2])
                SKPERC_PREFETCH(y + order[ii + 2])
            if weight[i] == 0.0:
                continue
            _row(data, indices, indptr, i, n_features, &x, &ind, &nnz)

            # The radius is updated before the example is examined. The
            # first epoch sees every norm; after it neither the largest norm
            # nor the radius of the schedule can change (the lifted norms
            # are largest for the longest example, whose lift was already
            # its own norm), so later epochs skip the work.
            if epoch == 0:
                nrm2 = _squared_norm(x, nnz)
                if not finite(nrm2):
                    fail(failure, SQUARED_RADIUS, epoch, p.n_updates[0], 0)
                    return n_epochs
                if nrm2 > max_norm2:
                    max_norm2 = nrm2
                    if rule.lift_mode == AUTO_LIFT:
                        lift = sqrt(max_norm2)
                if follow_radius(&rule.threshold, nrm2 + lift * lift, &rho2):
                    radius_changed = True
                    if not finite(rho2):
                        fail(failure, SQUARED_RADIUS, epoch, p.n_updates[0], 0)
                        return n_epochs
                    for c in range(k):
                        thresholds[c] = _threshold(
                            rule, p.n_updates[c] + 1, rho2)
                        if not finite(thresholds[c]):
                            fail(failure, THRESHOLD, epoch, p.n_updates[c], c)
                            return n_epochs

            if width == 1:
                scores[0] = _dot(x, ind, nnz, p.coef)
            else:
                _scores_lanes(x, ind, nnz, p.coef, width, scores)

            for c in range(k):
                if stop_when_separated and p.converged[c]:
                    continue
                yc = 1.0 if y[i] == p.first_class + c else -1.0
                f = scores[c]
                if rule.lift_mode != NO_LIFT:
                    f = f + p.lift_coef[c] * lift
                if not finite(f):
                    fail(failure, DECISION_VALUE, epoch, p.n_updates[c], c)
                    return n_epochs
                p.n_steps[c] += 1
                if yc * f <= thresholds[c]:
                    p.n_updates[c] += 1
                    epoch_updates[c] += 1
                    a = (rule.eta0 * yc) * weight[i]
                    p.lift_coef[c] += a * lift
                    # The intercept is lift_coef * lift: it must stay finite
                    # too.
                    if not (_axpy(x, ind, nnz, a, p.coef + c, width)
                            and finite(p.lift_coef[c] * lift)):
                        fail(failure, WEIGHTS, epoch, p.n_updates[c], c)
                        return n_epochs
                    if p.avg_coef != NULL:
                        # Lazy averaging: the update made at step s counts
                        # in the mean of w over steps s..N, so the mean is
                        # coef - avg_coef / N.
                        a = a * <double>(p.n_steps[c] - 1)
                        p.avg_lift[c] += a * lift
                        if not (_axpy(x, ind, nnz, a, p.avg_coef + c, width)
                                and finite(p.avg_lift[c] * lift)):
                            fail(failure, AVERAGED_WEIGHTS, epoch,
                                 p.n_updates[c], c)
                            return n_epochs
                    if rule.threshold.kind == POWER or rule.threshold.kind == PYTHON:
                        thresholds[c] = _threshold(
                            rule, p.n_updates[c] + 1, rho2)
                        if not finite(thresholds[c]):
                            fail(failure, THRESHOLD, epoch, p.n_updates[c], c)
                            return n_epochs

        n_epochs += 1
        total_updates = 0
        for c in range(k):
            if stop_when_separated and p.converged[c]:
                continue
            p.n_epochs[c] += 1
            total_updates += epoch_updates[c]
            # An epoch without updates separates the sample with the
            # final thresholds only if the radius held still during it.
            p.converged[c] = epoch_updates[c] == 0 and not radius_changed
        if verbose > 0:
            with gil:
                print(f"-- Epoch {epoch + 1}: {total_updates} updates, "
                      f"{n_active} problem(s) still updating, "
                      f"radius {sqrt(max_norm2):.6g}")

    radius[0] = max_norm2
    radius[1] = rho2
    return n_epochs


def run_epochs(
    const floating[::1] data,
    const index_t[::1] indices,
    const index_t[::1] indptr,
    Py_ssize_t n_features,
    const int32_t[::1] y,
    int32_t first_class,
    const double[::1] weight,
    double[:, ::1] coef,
    double[::1] lift_coef,
    double[:, ::1] avg_coef,
    double[::1] avg_lift,
    int64_t[::1] n_updates,
    int64_t[::1] n_steps,
    int64_t[::1] n_epochs,
    unsigned char[::1] converged,
    double[::1] radius,
    int kind,
    double beta,
    double alpha,
    object schedule,
    int radius_rule,
    double eta0,
    int lift_mode,
    double lift_value,
    Py_ssize_t max_iter,
    bint shuffle,
    uint64_t seed,
    bint stop_when_separated,
    int verbose,
    int64_t[::1] failure,
):
    """Run up to max_iter epochs over the rows; update the state in place.

    The rows are CSR when ``indptr`` is not empty, else ``data`` holds a
    C-ordered dense matrix with ``n_features`` columns. Example ``i`` is
    positive for problem ``c`` when ``y[i] == first_class + c``. The state
    arrays (``coef`` to ``radius``) carry a run across calls; ``avg_coef``
    with no rows turns averaging off. ``radius`` holds the largest squared
    norm seen and the schedule's squared radius. Returns the number of
    epochs run. A value that is not finite stops the run and is recorded in
    ``failure`` (see _overflow.pxd), the state then being unusable.
    """
    cdef Py_ssize_t n_samples = y.shape[0]
    cdef Py_ssize_t k = coef.shape[1]
    cdef Py_ssize_t width = _width(k)
    cdef bint average = avg_coef.shape[0] > 0
    cdef Py_ssize_t n_run
    cdef Rule rule
    cdef Problems problems

    if n_samples == 0:
        return 0
    rule.threshold.kind = kind
    rule.threshold.beta = beta
    rule.threshold.alpha = alpha
    rule.threshold.schedule = <PyObject*>schedule
    rule.threshold.radius_rule = radius_rule
    rule.eta0 = eta0
    rule.lift_mode = lift_mode
    rule.lift_value = lift_value

    # Several problems are trained on weights padded to whole lanes.
    work_coef = np.asarray(coef)
    work_avg = np.asarray(avg_coef)
    if width > k:
        work_coef = np.zeros((n_features, width))
        work_coef[:, :k] = coef
        if average:
            work_avg = np.zeros((n_features, width))
            work_avg[:, :k] = avg_coef
    cdef double[:, ::1] padded_coef = work_coef
    cdef double[:, ::1] padded_avg = work_avg

    problems.n_problems = k
    problems.first_class = first_class
    problems.coef = &padded_coef[0, 0]
    problems.lift_coef = &lift_coef[0]
    problems.avg_coef = &padded_avg[0, 0] if average else NULL
    problems.avg_lift = &avg_lift[0]
    problems.n_updates = &n_updates[0]
    problems.n_steps = &n_steps[0]
    problems.n_epochs = &n_epochs[0]
    problems.converged = &converged[0]

    cdef Py_ssize_t[::1] order = np.arange(n_samples, dtype=np.intp)
    cdef double[::1] scores = np.empty(width)
    cdef double[::1] thresholds = np.empty(k)
    cdef int64_t[::1] epoch_updates = np.zeros(k, dtype=np.int64)
    cdef const index_t* ind_ptr = NULL
    cdef const index_t* indptr_ptr = NULL
    if indptr.shape[0] > 0:
        indptr_ptr = &indptr[0]
        # A matrix with no stored entries still needs a non-NULL pointer.
        ind_ptr = &indices[0] if indices.shape[0] > 0 else indptr_ptr

    with nogil:
        n_run = _run_epochs(
            &data[0] if data.shape[0] > 0 else NULL,
            ind_ptr, indptr_ptr, n_samples, n_features,
            &y[0], &weight[0], &problems, width, &radius[0],
            &rule, max_iter, shuffle, seed, stop_when_separated, verbose,
            &order[0], &scores[0], &thresholds[0], &epoch_updates[0],
            &failure[0],
        )
    if width > k:
        coef[:, :] = padded_coef[:, :k]
        if average:
            avg_coef[:, :] = padded_avg[:, :k]
    return n_run


def smallest_margins(
    const floating[::1] data,
    const index_t[::1] indices,
    const index_t[::1] indptr,
    Py_ssize_t n_features,
    const int32_t[::1] y,
    int32_t first_class,
    const double[::1] weight,
    const double[:, ::1] coef,
    const double[::1] intercept,
):
    """The smallest y f(x) of each problem over the rows of positive weight.

    ``f(x) = x . coef[:, c] + intercept[c]`` is summed as in training; the
    rows are laid out as for run_epochs. Problems with no such row get inf.
    """
    cdef Py_ssize_t n_samples = y.shape[0]
    cdef Py_ssize_t k = coef.shape[1]
    cdef Py_ssize_t width = _width(k)
    cdef Py_ssize_t i, c, nnz
    cdef const floating* x
    cdef const index_t* ind
    cdef double yf

    padded = np.zeros((n_features, width))
    padded[:, :k] = coef
    cdef const double[:, ::1] w = padded
    cdef double[::1] scores = np.empty(width)
    cdef double[::1] smallest = np.full(k, np.inf)
    cdef const index_t* ind_ptr = NULL
    cdef const index_t* indptr_ptr = NULL
    if indptr.shape[0] > 0:
        indptr_ptr = &indptr[0]
        ind_ptr = &indices[0] if indices.shape[0] > 0 else indptr_ptr
    if n_samples == 0:
        return smallest.base

    with nogil:
        for i in range(n_samples):
            if weight[i] == 0.0:
                continue
            _row(&data[0] if data.shape[0] > 0 else NULL,
                 ind_ptr, indptr_ptr, i, n_features, &x, &ind, &nnz)
            if width == 1:
                scores[0] = _dot(x, ind, nnz, &w[0, 0])
            else:
                _scores_lanes(x, ind, nnz, &w[0, 0], width, &scores[0])
            for c in range(k):
                yf = scores[c] + intercept[c]
                if y[i] != first_class + c:
                    yf = -yf
                if yf < smallest[c]:
                    smallest[c] = yf
    return smallest.base
