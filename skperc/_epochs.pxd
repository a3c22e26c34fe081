# cython: language_level=3
"""The epoch skeleton that the compiled loops of the perceptrons share.

A loop keeps an Epochs record of its one-vs-rest problems (open_epochs and
close_epochs around the run) and calls, in order: start_run; then per epoch
begin_epoch (0 active problems ends the run), for each example see_radius
in the first epoch, observe for each decision, count_update and
after_update around each update; at the epoch's end, with the stopping
rule on (rule_on), it sets e.moved and e.radius2, calls end_epoch, and
takes the snapshots of its function that e.snapshot asks for. Each returns
0 after recording a value that is not finite in ``failure`` (the loop then returns
at once) and -1 with a Python exception set (an interrupt, or an error of a
schedule written in Python).
"""

from cpython.exc cimport PyErr_CheckSignals
from cpython.ref cimport PyObject
from libc.math cimport INFINITY, sqrt
from libc.stdint cimport int64_t, uint64_t

import numpy as np

from ._overflow cimport SQUARED_RADIUS, THRESHOLD, fail, finite
from ._shuffle cimport shuffle_order
from ._thresholds cimport POWER, PYTHON, Threshold, follow_radius, threshold


cdef struct Control:
    Py_ssize_t max_iter
    bint shuffle
    uint64_t seed
    bint stop_when_separated
    int verbose
    # The stopping rule for data that is not separable (see end_epoch):
    # off when n_iter_no_change is 0.
    double tol
    Py_ssize_t n_iter_no_change
    # Whether the call records its updates (see count_update).
    bint record_updates
    # The number of the call's first epoch in its run: a run driven one
    # epoch a call (early stopping) numbers its epochs on.
    Py_ssize_t first_epoch


cdef struct Epochs:
    Py_ssize_t n_problems
    const Threshold* rule
    const Control* control
    int64_t* n_updates        # of each problem since the run began
    int64_t* n_steps          # examples examined by each problem, ditto
    int64_t* n_epochs         # epochs of each problem in this call
    unsigned char* converged
    double* thresholds        # of each problem's next update
    int64_t* epoch_updates
    int64_t* epoch_changes    # changes of the function: updates, removals
    # The stopping rule, per problem:
    double* epoch_mistakes    # weight of the examples with y f(x) <= 0
    double* best_mistakes     # the fewest of an epoch
    int64_t* no_improvement   # epochs since the last improvement on it
    double* update_sum        # sum of the update sizes a (w += a y x)
    double* base_sum          # update_sum at the snapshots w_1 and w_r
    double* moved             # ||w - w_1|| and ||w - w_r||, from the loop
    unsigned char* snapshot   # after end_epoch: 2 take w_1 and w_r, 1 w_r
    unsigned char* stopped    # whether the stopping rule ended the problem
    double radius2            # R^2 of the (lifted) examples, from the loop
    int64_t* failure
    const unsigned char* stop  # set by another thread to end the run
    double max_norm2          # the largest squared norm seen
    double rho2               # the squared radius of the schedule
    uint64_t rng
    Py_ssize_t epoch
    Py_ssize_t n_run          # epochs run by this call
    Py_ssize_t n_active
    bint radius_changed
    # The updates of the call, RECORD_WIDTH values each, when recorded:
    # ``recorded`` points into the array that ``record_owner`` (a list)
    # holds, which count_update replaces by a larger one when it is full.
    int64_t* recorded
    Py_ssize_t n_recorded
    Py_ssize_t record_capacity
    PyObject* record_owner


# An update is recorded as (example, sign, problem, epoch).
cdef enum:
    RECORD_WIDTH = 4


cdef inline tuple open_epochs(Epochs* e, run, const Threshold* rule,
                              const Control* control, int64_t[::1] failure,
                              const unsigned char[::1] stop):
    """Point ``e`` at the counters of ``run`` (its arrays ``n_updates`` and
    ``n_steps``, of one value per problem, and ``radius``: the largest
    squared norm seen and rho^2, then what the loop keeps there) and at new arrays of this call, returned
    as (epochs of each problem, whether each converged, scratch): the
    caller holds them while ``e`` is in use."""
    cdef int64_t[::1] n_updates = run.n_updates
    cdef int64_t[::1] n_steps = run.n_steps
    cdef const double[::1] radius = run.radius
    cdef Py_ssize_t k = n_updates.shape[0]
    if not (k > 0 and n_steps.shape[0] == k and radius.shape[0] >= 2
            and failure.shape[0] == 4 and stop.shape[0] == 1):
        raise ValueError("The run's counters do not fit its problems.")
    n_epochs = np.zeros(k, dtype=np.int64)
    converged = np.zeros(k, dtype=np.uint8)
    stopped = np.zeros(k, dtype=np.uint8)
    flags = np.zeros(k, dtype=np.uint8)
    scratch = np.zeros(3 * k, dtype=np.int64)
    cdef int64_t[::1] epochs_view = n_epochs
    cdef unsigned char[::1] converged_view = converged
    cdef unsigned char[::1] stopped_view = stopped
    cdef unsigned char[::1] flags_view = flags
    cdef int64_t[::1] scratch_view = scratch
    record_owner = [np.empty((1024 if control.record_updates else 0,
                              RECORD_WIDTH), dtype=np.int64)]
    cdef int64_t[:, ::1] recorded = record_owner[0]
    values = np.zeros(9 * k)
    values[2 * k:3 * k] = np.inf
    cdef double[::1] values_view = values
    e.n_problems = k
    e.rule = rule
    e.control = control
    e.n_updates = &n_updates[0]
    e.n_steps = &n_steps[0]
    e.n_epochs = &epochs_view[0]
    e.converged = &converged_view[0]
    e.thresholds = &values_view[0]
    e.epoch_mistakes = &values_view[k]
    e.best_mistakes = &values_view[2 * k]
    e.update_sum = &values_view[3 * k]
    e.base_sum = &values_view[4 * k]
    e.moved = &values_view[6 * k]
    e.epoch_updates = &scratch_view[0]
    e.epoch_changes = &scratch_view[k]
    e.no_improvement = &scratch_view[2 * k]
    e.snapshot = &flags_view[0]
    e.stopped = &stopped_view[0]
    e.radius2 = 0.0
    e.failure = &failure[0]
    e.stop = &stop[0]
    e.max_norm2 = radius[0]
    e.rho2 = radius[1]
    e.recorded = &recorded[0, 0] if control.record_updates else NULL
    e.n_recorded = 0
    e.record_capacity = recorded.shape[0]
    e.record_owner = <PyObject*>record_owner
    return n_epochs, converged, stopped, (scratch, values, flags, record_owner)


cdef inline tuple close_epochs(const Epochs* e, run, tuple opened):
    """Write the radius back into ``run``; (epochs of each problem, whether
    each converged, whether the stopping rule ended each, the recorded
    updates or None) of the call ``opened`` by open_epochs."""
    cdef double[::1] radius = run.radius
    radius[0] = e.max_norm2
    radius[1] = e.rho2
    recorded = None
    if e.recorded != NULL:
        recorded = opened[3][3][0][:e.n_recorded].copy()
    return (opened[0], opened[1].astype(bool), opened[2].astype(bool),
            recorded)


# Examples between two looks for an interrupt within an epoch (a loop
# counts an update that touches every point as many examples): some
# milliseconds of work, so that Ctrl-C ends a long epoch.
cdef enum:
    CHECK_EVERY = 65536


cdef inline int interrupted(const Epochs* e) except -1 nogil:
    """-1 with KeyboardInterrupt set after Ctrl-C (in the main thread) or
    when another block of the run was interrupted."""
    if e.stop != NULL and e.stop[0]:
        with gil:
            raise KeyboardInterrupt
    with gil:
        PyErr_CheckSignals()
    return 0


cdef inline bint active(const Epochs* e, Py_ssize_t c) noexcept nogil:
    """Whether problem c still trains in this call."""
    return not ((e.control.stop_when_separated and e.converged[c])
                or e.stopped[c])


cdef inline void observe(Epochs* e, Py_ssize_t c, double margin,
                         double weight) noexcept nogil:
    """Count a sign mistake of problem c, y f(x) = margin <= 0, on an
    example of weight ``weight``, for the stopping rule."""
    if margin <= 0.0:
        e.epoch_mistakes[c] += weight


cdef inline int next_threshold(Epochs* e, Py_ssize_t c) except -1 nogil:
    """The threshold of problem c's next update."""
    e.thresholds[c] = threshold(e.rule, e.n_updates[c] + 1, e.rho2)
    if not finite(e.thresholds[c]):
        fail(e.failure, THRESHOLD, e.epoch, e.n_updates[c], c)
        return 0
    return 1


cdef inline int start_run(Epochs* e) except -1 nogil:
    """The first thresholds of a call."""
    cdef Py_ssize_t c
    e.epoch = 0
    e.n_run = 0
    e.rng = e.control.seed
    for c in range(e.n_problems):
        e.converged[c] = 0
        if not next_threshold(e, c):
            return 0
    return 1


cdef inline Py_ssize_t begin_epoch(Epochs* e, Py_ssize_t epoch,
                                   Py_ssize_t* order,
                                   Py_ssize_t n) except -1 nogil:
    """Start epoch ``epoch`` over the n examples of ``order`` (shuffled in
    place): the number of problems still training, 0 when none is."""
    cdef Py_ssize_t c
    interrupted(e)
    e.epoch = e.control.first_epoch + epoch
    e.n_active = 0
    for c in range(e.n_problems):
        e.epoch_updates[c] = 0
        e.epoch_changes[c] = 0
        e.epoch_mistakes[c] = 0.0
        if active(e, c):
            e.n_active += 1
    if e.n_active > 0 and e.control.shuffle:
        shuffle_order(order, n, &e.rng)
    e.radius_changed = False
    return e.n_active


cdef inline int see_radius(Epochs* e, double norm2) except -1 nogil:
    """Follow the schedule's radius with an example of squared norm norm2
    (lifted, where the loop lifts), before it is examined; every threshold
    follows a change. The first epoch sees every norm; after it the
    largest norm cannot change, nor the radius but where the lift moved in
    it (see the linear loop), so later epochs skip it."""
    cdef Py_ssize_t c
    if follow_radius(e.rule, norm2, &e.rho2):
        e.radius_changed = True
        if not finite(e.rho2):
            fail(e.failure, SQUARED_RADIUS, e.epoch, e.n_updates[0], 0)
            return 0
        for c in range(e.n_problems):
            if not next_threshold(e, c):
                return 0
    return 1


cdef inline bint rule_on(const Epochs* e) noexcept nogil:
    return e.control.n_iter_no_change > 0


cdef inline int _grow_record(Epochs* e) except -1 nogil:
    """Double the record's capacity (a MemoryError when it cannot)."""
    cdef int64_t[:, ::1] larger
    with gil:
        owner = <list>e.record_owner
        larger_array = np.empty((2 * e.record_capacity, RECORD_WIDTH),
                                dtype=np.int64)
        larger_array[:e.n_recorded] = owner[0][:e.n_recorded]
        owner[0] = larger_array
        larger = larger_array
        e.recorded = &larger[0, 0]
        e.record_capacity = larger.shape[0]
    return 1


cdef inline int count_update(Epochs* e, Py_ssize_t c, Py_ssize_t i,
                             double sign, double size) except -1 nogil:
    """Count an update of problem c on example i, of sign y = sign and size
    a (the function moves by a y x, |a| = size); record it when the call
    records."""
    e.n_updates[c] += 1
    e.epoch_updates[c] += 1
    e.epoch_changes[c] += 1
    e.update_sum[c] += size
    if e.recorded == NULL:
        return 1
    if e.n_recorded == e.record_capacity:
        _grow_record(e)
    cdef int64_t* entry = e.recorded + RECORD_WIDTH * e.n_recorded
    entry[0] = i
    entry[1] = 1 if sign > 0.0 else -1
    entry[2] = c
    entry[3] = e.epoch
    e.n_recorded += 1
    return 1


cdef inline int after_update(Epochs* e, Py_ssize_t c) except -1 nogil:
    """The next threshold of problem c, for the schedules that follow the
    update count."""
    if e.rule.kind == POWER or e.rule.kind == PYTHON:
        return next_threshold(e, c)
    return 1


cdef inline int end_epoch(Epochs* e, Py_ssize_t n_support) except -1 nogil:
    """Close the epoch: a problem has converged when its function did not
    change in it, with a radius that held still (only then is the sample
    separated with the final thresholds). ``n_support`` (< 0: none) joins
    the verbose line.

    The stopping rule, with the loop's distances e.moved and radius
    e.radius2 of this epoch's end, ends a problem that has not converged
    when both hold:

    - for n_iter_no_change epochs in a row its sign mistakes have not
      fallen below their fewest (an epoch without one starts the count
      again);
    - its drift, min over s in {w_1, w_r} of ||w - w_s|| / (A - A_s) / R,
      is below tol; w_1 is the function after the call's first epoch, w_r
      after the last improvement, A the sum of the update sizes.

    Every update of size a moves w by at least a eps* along a separator of
    margin eps*, so a drift below tol proves that no separator of margin
    tol R exists: the rule never ends a run on a sample that has one,
    whatever the schedule. The loop takes the snapshots e.snapshot asks
    for after this call."""
    cdef Py_ssize_t c, s
    cdef int64_t total_updates = 0
    cdef double drift, along
    e.n_run += 1
    for c in range(e.n_problems):
        e.snapshot[c] = 0
        if not active(e, c):
            continue
        e.n_epochs[c] += 1
        total_updates += e.epoch_updates[c]
        e.converged[c] = e.epoch_changes[c] == 0 and not e.radius_changed
        if e.converged[c] or not rule_on(e):
            continue
        if e.n_run == 1:
            e.snapshot[c] = 2
        elif (e.epoch_mistakes[c] == 0.0
              or e.epoch_mistakes[c] < e.best_mistakes[c]):
            e.snapshot[c] = 1
        else:
            e.no_improvement[c] += 1
        if e.snapshot[c]:
            e.no_improvement[c] = 0
            e.best_mistakes[c] = min(e.best_mistakes[c], e.epoch_mistakes[c])
            e.base_sum[2 * c + 1] = e.update_sum[c]
            if e.snapshot[c] == 2:
                e.base_sum[2 * c] = e.update_sum[c]
            continue
        if e.no_improvement[c] < e.control.n_iter_no_change:
            continue
        drift = INFINITY
        for s in range(2):
            along = e.update_sum[c] - e.base_sum[2 * c + s]
            if along > 0.0:
                drift = min(drift, e.moved[2 * c + s] / along)
        # a drift equal to tol (a margin of exactly tol R) does not stop
        e.stopped[c] = drift < e.control.tol * (1.0 - 1e-9) * sqrt(e.radius2)
    if e.control.verbose > 0:
        with gil:
            print(f"-- Epoch {e.epoch + 1}: {total_updates} updates, "
                  f"{e.n_active} problem(s) still updating, "
                  + (f"{n_support} support vectors, " if n_support >= 0 else "")
                  + f"radius {sqrt(e.max_norm2):.6g}")
    return 1
