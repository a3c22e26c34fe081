# cython: language_level=3, boundscheck=False, wraparound=False
# cython: cdivision=True, initializedcheck=False
"""Compiled epoch loop of the margin perceptrons.

One call runs up to ``max_iter`` epochs of a block of one-vs-rest problems
over C-ordered dense rows or CSR rows, with float32 or float64 values.
Decision values are summed in double precision in an order fixed by the
feature indices alone (_rows.pxd), so dense and CSR rows give the same
bits; with float64 values every sum runs in feature order, the arithmetic
of scikit-learn's Perceptron, and a problem trained alone or inside a block
gives the same bits too.
"""

from libc.float cimport DBL_MIN_EXP
from libc.math cimport INFINITY, fabs, frexp, ldexp, sqrt
from libc.stdint cimport int32_t, int64_t, uint8_t

import numpy as np

from ._epochs cimport (
    CHECK_EVERY, Control, Epochs, active, after_update, begin_epoch,
    close_epochs, count_update, end_epoch, interrupted, observe, open_epochs,
    rule_on, see_radius, start_run,
)
from ._overflow cimport (
    AVERAGED_WEIGHTS, DECISION_VALUE, SQUARED_RADIUS, WEIGHTS, fail, finite,
)
from ._rows cimport (
    LANES, SKPERC_PREFETCH, axpy, floating, index_t, row, scores,
    squared_norm, width_of,
)
from ._thresholds cimport RADIUS_NONE, Threshold, read_threshold


# The lifted coordinate s of the intercept.
cpdef enum LiftMode:
    NO_LIFT = 0
    FIXED_LIFT = 1
    AUTO_LIFT = 2     # the largest norm seen
    RMS_LIFT = 3      # the root mean square of the norms seen


cdef struct Lift:
    int mode
    double value        # s, read with FIXED_LIFT only
    # With RMS_LIFT, the run's mean squared norm and the count of the
    # examples it is over (of positive weight, each seen once, in the
    # first epoch of the calls that follow the norms), kept as a running
    # mean.
    double* mean_norm2
    double* n_norms
    bint follow
    # the run has seen every row: the largest norm cannot change, nor the
    # radius but in the epoch that ``settled`` names, and the first epoch
    # skips the norms as later ones do
    bint seen
    # With RMS_LIFT, the lift settled at the end of the call before, which
    # followed the norms: this call's first epoch sees the lifted norms again
    bint settled


cdef struct Problems:
    int32_t first_class
    double* coef          # (n_features, width), C order; see width_of
    double* lift_coef     # (n_problems,): the weights of the lifted coordinate
    double* avg_coef      # like coef, or NULL without averaging
    double* avg_lift      # like lift_coef
    double eta0
    # the snapshots w_1 and w_r of the stopping rule (NULL with it off):
    double* snap_coef     # (2, n_features, width)
    double* snap_lift     # (2, n_problems)


cdef void _measure_moves(Problems* p, Epochs* e, Py_ssize_t n_features,
                         Py_ssize_t width, double lift) noexcept nogil:
    """e.moved: the distance of each problem's weights to its snapshots,
    and e.radius2, for the stopping rule."""
    cdef Py_ssize_t c, j, s
    cdef double d, total
    cdef Py_ssize_t size = n_features * width
    e.radius2 = e.max_norm2 + lift * lift
    for c in range(e.n_problems):
        for s in range(2):
            d = p.lift_coef[c] - p.snap_lift[s * e.n_problems + c]
            total = d * d
            for j in range(n_features):
                d = p.coef[j * width + c] - p.snap_coef[s * size + j * width + c]
                total += d * d
            e.moved[2 * c + s] = sqrt(total)


cdef void _take_snapshots(Problems* p, Epochs* e, Py_ssize_t n_features,
                          Py_ssize_t width) noexcept nogil:
    """The snapshots that end_epoch asked for: w_r, and w_1 after the
    first epoch."""
    cdef Py_ssize_t c, j, s
    cdef Py_ssize_t size = n_features * width
    for c in range(e.n_problems):
        for s in range(2 - e.snapshot[c], 2):
            p.snap_lift[s * e.n_problems + c] = p.lift_coef[c]
            for j in range(n_features):
                p.snap_coef[s * size + j * width + c] = p.coef[j * width + c]


cdef int _run_epochs(
    const floating* data,
    const index_t* indices,
    const index_t* indptr,
    Py_ssize_t n_samples,
    Py_ssize_t n_features,
    const int32_t* y,
    const double* weight,
    Problems* p,
    Py_ssize_t width,
    const Lift* lift_rule,
    Epochs* e,
    Py_ssize_t* order,
    double* score,
) except -1 nogil:
    """The epochs of one call; ``width`` is 1 for a binary problem, else the
    column count of p.coef (n_problems rounded up to LANES). A value that is
    not finite stops the call where it appears, recorded in e.failure."""
    cdef Py_ssize_t k = e.n_problems
    cdef Py_ssize_t epoch, ii, i, j, c, nnz
    cdef Py_ssize_t countdown = CHECK_EVERY
    cdef const floating* x
    cdef const index_t* ind
    cdef double lift = 0.0
    cdef double nrm2, f, a, yc
    # Under RMS_LIFT the lift moves while an epoch follows the norms, which
    # changes the lifted norm of every row seen before the last: the epoch
    # after it (the second of this call, or the first of the call that goes
    # on from it) sees each lifted norm again as it examines the row, so
    # that rho follows the lifted rows examined, as Algorithms 3 and 4 ask.
    # The lift does not move after it: later epochs skip the norms.
    cdef Py_ssize_t settled_epoch = -1
    if lift_rule.mode == RMS_LIFT and e.rule.radius_rule != RADIUS_NONE:
        if lift_rule.settled:
            settled_epoch = 0
        elif lift_rule.follow and not lift_rule.seen:
            settled_epoch = 1

    if lift_rule.mode == FIXED_LIFT:
        lift = lift_rule.value
    elif lift_rule.mode == AUTO_LIFT:
        lift = sqrt(e.max_norm2)
    elif lift_rule.mode == RMS_LIFT:
        lift = sqrt(lift_rule.mean_norm2[0])
    if not start_run(e):
        return 0

    for epoch in range(e.control.max_iter):
        if begin_epoch(e, epoch, order, n_samples) == 0:
            break
        for ii in range(n_samples):
            countdown -= 1
            if countdown == 0:
                countdown = CHECK_EVERY
                interrupted(e)
            i = order[ii]
            if e.control.shuffle and ii + 2 < n_samples:
                # Shuffled rows are not in storage order, so the hardware
                # does not foresee them: ask for the row after next. (Not
                # in a function of its own: GCC deems a function that only
                # prefetches free of effects and drops its calls.)
                row(data, indices, indptr, order[ii + 2], n_features,
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
            row(data, indices, indptr, i, n_features, &x, &ind, &nnz)

            if epoch == 0 and not lift_rule.seen:
                nrm2 = squared_norm(x, nnz)
                if not finite(nrm2):
                    fail(e.failure, SQUARED_RADIUS, epoch, e.n_updates[0], 0)
                    return 0
                if nrm2 > e.max_norm2:
                    e.max_norm2 = nrm2
                    if lift_rule.mode == AUTO_LIFT:
                        lift = sqrt(e.max_norm2)
                if lift_rule.mode == RMS_LIFT and lift_rule.follow:
                    # a running mean: a sum of squared norms could overflow
                    lift_rule.n_norms[0] += 1.0
                    lift_rule.mean_norm2[0] += (
                        (nrm2 - lift_rule.mean_norm2[0]) / lift_rule.n_norms[0])
                    lift = sqrt(lift_rule.mean_norm2[0])
                # with AUTO_LIFT the lifted norms are largest for the
                # longest example, whose lift was already its own norm
                if not see_radius(e, nrm2 + lift * lift):
                    return 0
            elif epoch == settled_epoch:
                if not see_radius(e, squared_norm(x, nnz) + lift * lift):
                    return 0

            scores(x, ind, nnz, p.coef, width, score)

            for c in range(k):
                if not active(e, c):
                    continue
                yc = 1.0 if y[i] == p.first_class + c else -1.0
                f = score[c]
                if lift_rule.mode != NO_LIFT:
                    f = f + p.lift_coef[c] * lift
                if not finite(f):
                    fail(e.failure, DECISION_VALUE, epoch, e.n_updates[c], c)
                    return 0
                e.n_steps[c] += 1
                observe(e, c, yc * f, weight[i])
                if yc * f <= e.thresholds[c]:
                    a = (p.eta0 * yc) * weight[i]
                    count_update(e, c, i, yc, p.eta0 * weight[i])
                    p.lift_coef[c] += a * lift
                    # The intercept is lift_coef * lift: it must stay finite
                    # too.
                    if not (axpy(x, ind, nnz, a, p.coef + c, width)
                            and finite(p.lift_coef[c] * lift)):
                        fail(e.failure, WEIGHTS, epoch, e.n_updates[c], c)
                        return 0
                    if p.avg_coef != NULL:
                        # Lazy averaging: the update made at step s counts
                        # in the mean of w over steps s..N, so the mean is
                        # coef - avg_coef / N.
                        a = a * <double>(e.n_steps[c] - 1)
                        p.avg_lift[c] += a * lift
                        if not (axpy(x, ind, nnz, a, p.avg_coef + c, width)
                                and finite(p.avg_lift[c] * lift)):
                            fail(e.failure, AVERAGED_WEIGHTS, epoch,
                                 e.n_updates[c], c)
                            return 0
                    if not after_update(e, c):
                        return 0
        if rule_on(e):
            _measure_moves(p, e, n_features, width, lift)
        end_epoch(e, -1)
        if rule_on(e):
            _take_snapshots(p, e, n_features, width)
    return 1


cdef const index_t* _indices_or_null(const index_t[::1] indices,
                                     const index_t[::1] indptr) noexcept:
    """The column indices of CSR rows, NULL for dense rows; a matrix with no
    stored entries still needs a non-NULL pointer."""
    if indptr.shape[0] == 0:
        return NULL
    return &indices[0] if indices.shape[0] > 0 else &indptr[0]


def check_rows(const floating[::1] data, const index_t[::1] indices,
               const index_t[::1] indptr, Py_ssize_t n_samples,
               Py_ssize_t n_features):
    """Raise ValueError unless the rows are ``n_samples`` rows of
    ``n_features`` values, dense or CSR with every index in range: the
    loops read them unchecked."""
    if indptr.shape[0] == 0:
        if data.shape[0] != n_samples * n_features:
            raise ValueError(
                f"dense rows hold {data.shape[0]} values, not "
                f"{n_samples} x {n_features}.")
        return
    if indptr.shape[0] != n_samples + 1 or indptr[0] != 0 \
            or indptr[n_samples] != indices.shape[0] \
            or data.shape[0] != indices.shape[0]:
        raise ValueError(
            "X is a malformed CSR matrix: its indptr does not describe "
            f"{n_samples} rows of its {data.shape[0]} stored values.")
    _check_indices(indices, indptr, n_features)


cdef int _check_indices(const index_t[::1] indices, const index_t[::1] indptr,
                        Py_ssize_t n_features) except -1:
    """Raise ValueError unless the CSR rows that ``indptr`` delimits in
    ``indices`` have every column index in [0, n_features) and indptr does
    not decrease: the loops, and SciPy's products, read them unchecked.
    One pass over the indices, without the GIL: SciPy's full check_format
    took 14 us of a one-row predict."""
    cdef Py_ssize_t i, nnz = indices.shape[0]
    cdef Py_ssize_t decreasing = -1
    cdef index_t lowest = 0, highest = -1
    with nogil:
        for i in range(indptr.shape[0] - 1):
            if indptr[i + 1] < indptr[i]:
                decreasing = i
                break
        for i in range(nnz):
            if indices[i] < lowest:
                lowest = indices[i]
            if indices[i] > highest:
                highest = indices[i]
    if decreasing >= 0:
        raise ValueError(
            f"X is a malformed CSR matrix: its indptr decreases at row "
            f"{decreasing}. Rebuild it, e.g. with scipy.sparse.csr_matrix("
            "(data, indices, indptr), shape=...) and check_format().")
    if lowest < 0 or highest >= n_features:
        raise ValueError(
            "X is a malformed CSR matrix: it holds a column index outside "
            f"[0, {n_features}) (from {lowest} to {highest}). Rebuild it, "
            "e.g. with scipy.sparse.csr_matrix((data, indices, indptr), "
            "shape=...) and check_format().")
    return 0


def run_epochs(
    const floating[::1] data,
    const index_t[::1] indices,
    const index_t[::1] indptr,
    Py_ssize_t n_features,
    const int32_t[::1] y,
    int32_t first_class,
    const double[::1] weight,
    run,
    object schedule,
    double eta0,
    object lift,
    Control control,
    const unsigned char[::1] stop,
    int64_t[::1] failure,
    order=None,
):
    """Run up to ``control.max_iter`` epochs over the rows; update ``run``.

    The rows are CSR when ``indptr`` is not empty, else ``data`` holds a
    C-ordered dense matrix with ``n_features`` columns; either way checked
    by check_rows first. Example ``i`` is positive for problem ``c`` when
    ``y[i] == first_class + c``. ``run`` (a LinearRun of
    skperc._margin_perceptron) carries the state across calls; its arrays
    are updated in place, its weights of ``padded_width`` columns without a
    copy, and of one column per problem through a padded copy.
    ``schedule`` is a validated ThresholdSchedule, every threshold times
    ``eta0``. ``lift`` is a dict: ``mode`` (a LiftMode), ``value`` (the
    lift of FIXED_LIFT), ``follow`` (whether RMS_LIFT adds this call's
    examples to its mean, kept in ``run.radius[2:4]``) and, optionally,
    ``seen`` (the run has seen every row and its radius holds: the call
    computes no norm) and ``settled`` (with RMS_LIFT, the call before
    followed the norms, whose lift has moved since it saw the rows: the
    first epoch sees their lifted norms again).
    ``stop[0]`` set by another thread ends the call with
    KeyboardInterrupt. Returns (epochs of each problem, whether each
    converged, whether the stopping rule ended each, the updates recorded
    with ``control.record_updates`` or None: see count_update in
    _epochs.pxd). A value that is not finite stops the run and is recorded
    in ``failure`` (see _overflow.pxd), the state then being unusable.

    A caller that continues one run over calls of one epoch each (parameter
    mixing) passes ``order``, the order of the visits (an intp permutation
    of the rows), which the shuffle continues from in place, with
    ``control.seed`` the state of the shuffle; the call then returns a
    fifth item, a dict of what the next call and the stopping rule need:
    ``seed`` (the shuffle's state after the call), ``mistakes`` (the
    weight of the examples with ``y f(x) <= 0`` in the last epoch) and
    ``update_sum`` (the sum of the update sizes of the call), per problem.
    """
    cdef Py_ssize_t n_samples = y.shape[0]
    cdef double[:, ::1] coef = run.coef
    cdef double[::1] lift_coef = run.lift_coef
    cdef double[:, ::1] avg_coef = run.avg_coef
    cdef double[::1] avg_lift = run.avg_lift
    cdef Py_ssize_t k = lift_coef.shape[0]
    cdef Py_ssize_t width = width_of(k)
    # weights already padded to whole lanes are trained in place
    cdef bint padded = coef.shape[1] == width
    cdef bint average = avg_coef.shape[0] > 0
    cdef Threshold rule = read_threshold(schedule, eta0)
    cdef double[::1] radius = run.radius
    cdef Problems problems
    cdef Epochs e
    cdef Lift lift_rule

    check_rows(data, indices, indptr, n_samples, n_features)
    opened = open_epochs(&e, run, &rule, &control, failure, stop)
    if not (weight.shape[0] == n_samples and coef.shape[0] == n_features
            and radius.shape[0] == 4
            and (padded or coef.shape[1] == k) and avg_lift.shape[0] == k
            and e.n_problems == k
            and (not average or (avg_coef.shape[0] == n_features
                                 and avg_coef.shape[1] == coef.shape[1]))):
        raise ValueError("run_epochs: the run's arrays do not fit the rows.")
    if order is not None and len(order) != n_samples:
        raise ValueError("run_epochs: the order does not fit the rows.")
    lift_rule.mode = lift["mode"]
    lift_rule.value = lift["value"]
    lift_rule.follow = lift["follow"]
    lift_rule.seen = lift.get("seen", False)
    lift_rule.settled = lift.get("settled", False)
    lift_rule.mean_norm2 = &radius[2]
    lift_rule.n_norms = &radius[3]
    if n_samples == 0:
        return _closed(&e, run, opened, order)

    # Several problems are trained on weights padded to whole lanes.
    work_coef = np.asarray(coef)
    work_avg = np.asarray(avg_coef)
    if not padded:
        work_coef = np.zeros((n_features, width))
        work_coef[:, :k] = coef
        if average:
            work_avg = np.zeros((n_features, width))
            work_avg[:, :k] = avg_coef
    cdef double[:, ::1] padded_coef = work_coef
    cdef double[:, ::1] padded_avg = work_avg

    problems.first_class = first_class
    problems.coef = &padded_coef[0, 0]
    problems.lift_coef = &lift_coef[0]
    problems.avg_coef = &padded_avg[0, 0] if average else NULL
    problems.avg_lift = &avg_lift[0]
    problems.eta0 = eta0
    snapshots = np.zeros(2 * n_features * width if control.n_iter_no_change else 0)
    snapshot_lifts = np.zeros(2 * k)
    cdef double[::1] snap_coef = snapshots
    cdef double[::1] snap_lift = snapshot_lifts
    problems.snap_coef = &snap_coef[0] if snap_coef.shape[0] > 0 else NULL
    problems.snap_lift = &snap_lift[0]

    cdef Py_ssize_t[::1] visits = (
        np.arange(n_samples, dtype=np.intp) if order is None else order)
    cdef double[::1] score = np.empty(width)
    cdef const index_t* ind_ptr = _indices_or_null(indices, indptr)
    with nogil:
        _run_epochs(
            &data[0] if data.shape[0] > 0 else NULL,
            ind_ptr,
            &indptr[0] if indptr.shape[0] > 0 else NULL,
            n_samples, n_features, &y[0], &weight[0], &problems, width,
            &lift_rule, &e, &visits[0], &score[0],
        )
    if not padded:
        coef[:, :] = padded_coef[:, :k]
        if average:
            avg_coef[:, :] = padded_avg[:, :k]
    return _closed(&e, run, opened, order)


cdef tuple _closed(const Epochs* e, run, tuple opened, order):
    """close_epochs, with the dict of a call given ``order``."""
    closed = close_epochs(e, run, opened)
    if order is None:
        return closed
    cdef Py_ssize_t k = e.n_problems
    values = opened[3][1]
    return closed + (dict(seed=e.rng, mistakes=values[k:2 * k].copy(),
                          update_sum=values[3 * k:4 * k].copy()),)


def row_moments(const floating[::1] data, const index_t[::1] indices,
                const index_t[::1] indptr, Py_ssize_t n_samples,
                Py_ssize_t n_features):
    """(the mean over the rows of ||x||^2, the mean of the rows' sums of
    entries), each row summed in the order of its stored entries, as the
    loops sum it, and the means kept as running means (no sum of all the
    rows to overflow): the dense rows and the canonical CSR rows of one
    matrix give the same two numbers, bit for bit. (0, 0) without rows."""
    cdef Py_ssize_t i, j, nnz
    cdef const floating* x
    cdef const index_t* ind
    cdef double squares = 0.0, sums = 0.0, total
    check_rows(data, indices, indptr, n_samples, n_features)
    if n_samples == 0 or data.shape[0] == 0:
        return 0.0, 0.0
    cdef const index_t* ind_ptr = _indices_or_null(indices, indptr)
    with nogil:
        for i in range(n_samples):
            row(&data[0], ind_ptr,
                &indptr[0] if indptr.shape[0] > 0 else NULL,
                i, n_features, &x, &ind, &nnz)
            total = 0.0
            for j in range(nnz):
                total += <double>x[j]
            squares += (squared_norm(x, nnz) - squares) / <double>(i + 1)
            sums += (total - sums) / <double>(i + 1)
    return squares, sums


def used_columns(const index_t[::1] indices, Py_ssize_t n_features):
    """A mask (uint8) of the columns among ``indices``, which must lie in
    [0, n_features), and how many columns it marks: one pass, where
    numpy's scattered assignment costs several times an epoch's reading of
    the same indices. The pass ends once every column is marked, since the
    indices after can mark none (on 4,000,000 indices over 50,000 columns,
    after some 550,000: 0.8 ms instead of 4); it checks the range of those
    it reads, by which it writes, and the loops check all of them."""
    cdef Py_ssize_t t, n_used = 0
    cdef size_t column
    cdef bint outside = False
    cdef uint8_t[::1] used = np.zeros(n_features, dtype=np.uint8)
    with nogil:
        for t in range(indices.shape[0]):
            # unsigned, so that a negative index lies outside too
            column = <size_t>indices[t]
            if column >= <size_t>n_features:
                outside = True
                break
            if not used[column]:
                used[column] = 1
                n_used += 1
                if n_used == n_features:
                    break
    if outside:
        raise ValueError("used_columns: an index lies outside the columns.")
    return used.base, n_used


# The partial sums of a float32 sum (_rows.pxd), for the Python side that
# must keep each column on its own.
SUM_LANES = LANES


def padded_width(Py_ssize_t n_problems):
    """The columns of the weights of ``n_problems`` problems that run_epochs
    trains in place: 1 for one problem, else whole lanes."""
    return width_of(n_problems)


def smallest_margins(
    const floating[::1] data,
    const index_t[::1] indices,
    const index_t[::1] indptr,
    Py_ssize_t n_features,
    const int32_t[::1] y,
    const int32_t[::1] positive,
    const double[::1] weight,
    const double[:, ::1] coef,
    const double[::1] intercept,
    double[:, ::1] margins=None,
):
    """The smallest y f(x) of each column of weights over the rows of
    positive weight.

    ``f(x) = x . coef[:, c] + intercept[c]`` is summed as in training, and
    ``y`` is 1 on the rows of class ``positive[c]``, -1 on the others; the
    rows are laid out and checked as for run_epochs. Columns with no such
    row get inf. ``margins``, of a row per example and a column per column
    of weights, receives each y f(x) too (inf on the rows of weight 0).
    """
    cdef Py_ssize_t n_samples = y.shape[0]
    cdef Py_ssize_t k = coef.shape[1]
    cdef Py_ssize_t width = width_of(k)
    cdef Py_ssize_t i, c, nnz
    cdef const floating* x
    cdef const index_t* ind
    cdef double yf
    cdef bint keep = margins is not None

    check_rows(data, indices, indptr, n_samples, n_features)
    if not (weight.shape[0] == n_samples and coef.shape[0] == n_features
            and intercept.shape[0] == k and positive.shape[0] == k
            and (not keep or (margins.shape[0] == n_samples
                              and margins.shape[1] == k))):
        raise ValueError("smallest_margins: the weights do not fit the rows.")
    padded = np.zeros((n_features, width))
    padded[:, :k] = coef
    cdef const double[:, ::1] w = padded
    cdef double[::1] score = np.empty(width)
    cdef double[::1] smallest = np.full(k, np.inf)
    cdef const index_t* ind_ptr = _indices_or_null(indices, indptr)
    cdef const index_t* indptr_ptr = &indptr[0] if indptr.shape[0] > 0 else NULL
    if n_samples == 0 or k == 0:
        return smallest.base

    with nogil:
        for i in range(n_samples):
            if weight[i] == 0.0:
                if keep:
                    for c in range(k):
                        margins[i, c] = INFINITY
                continue
            row(&data[0] if data.shape[0] > 0 else NULL,
                ind_ptr, indptr_ptr, i, n_features, &x, &ind, &nnz)
            scores(x, ind, nnz, &w[0, 0], width, &score[0])
            for c in range(k):
                yf = score[c] + intercept[c]
                if y[i] != positive[c]:
                    yf = -yf
                if keep:
                    margins[i, c] = yf
                if yf < smallest[c]:
                    smallest[c] = yf
    return smallest.base


cdef inline Py_ssize_t _next_marked(const uint8_t* bits, Py_ssize_t n,
                                    Py_ssize_t j) noexcept nogil:
    """The first column from j on whose bit is set (bit j % 8 of byte
    j // 8; every column for NULL), or n; a byte of zeros is passed whole."""
    if bits == NULL:
        return j
    while j < n:
        if bits[j >> 3] == 0:
            j = (j | 7) + 1
        elif bits[j >> 3] >> (j & 7) & 1:
            return j
        else:
            j += 1
    return n


def scaled_norms(const double[:, :] coef, const uint8_t[::1] features=None):
    """The power of 2 that brings each row's largest ``|coef|`` into
    [0.5, 1) (1 for a row of zeros), and the norm of the row times it.

    Only the columns in the bitset ``features`` (column j is bit j % 8 of
    byte j // 8; None: all) are read, without a copy, so that a run that
    touched few features pays a bit per feature, not a weight per feature
    and problem. The squares are summed in column order: a skipped zero
    changes no sum, so the norm has the same bits for any ``features``
    that holds every non-zero weight.
    """
    cdef Py_ssize_t k = coef.shape[0]
    cdef Py_ssize_t n = coef.shape[1]
    cdef Py_ssize_t c, j
    cdef int exponent
    cdef double v
    cdef const uint8_t* bits = NULL
    cdef double[::1] largest = np.zeros(k)
    cdef double[::1] scale = np.ones(k)
    cdef double[::1] sums = np.zeros(k)
    if features is not None:
        if features.shape[0] != (n + 7) // 8:
            raise ValueError("scaled_norms: the bitset does not fit the weights.")
        if n > 0:
            bits = &features[0]
    with nogil:
        j = _next_marked(bits, n, 0)
        while j < n:
            for c in range(k):
                v = fabs(coef[c, j])
                if v > largest[c]:
                    largest[c] = v
            j = _next_marked(bits, n, j + 1)
        for c in range(k):
            if largest[c] > 0:
                frexp(largest[c], &exponent)
                # 2**-exponent must stay finite for subnormal rows
                scale[c] = ldexp(1.0, -max(exponent, <int>DBL_MIN_EXP))
        j = _next_marked(bits, n, 0)
        while j < n:
            for c in range(k):
                v = coef[c, j] * scale[c]
                sums[c] += v * v
            j = _next_marked(bits, n, j + 1)
        for c in range(k):
            sums[c] = sqrt(sums[c])
    return scale.base, sums.base
