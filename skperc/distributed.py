"""Iterative parameter mixing: one perceptron trained on shards of the data.

:class:`ParameterMixingClassifier` trains a :class:`~skperc.MarginPerceptron`
on several shards of the sample at once, on threads of this machine or on
the workers of a `dask.distributed <https://distributed.dask.org>`_ cluster,
by the iterative parameter mixing of McDonald, Hall and Mann (2010). dask
is imported only when a fit is given a dask collection.
"""

import copy
import math
import sys
import warnings
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from functools import partial
from numbers import Integral

import numpy as np
import scipy.sparse as sp
from sklearn import get_config
from sklearn.base import BaseEstimator, ClassifierMixin, MetaEstimatorMixin, clone
from sklearn.exceptions import DataConversionWarning
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import (
    assert_all_finite,
    check_array,
    column_or_1d,
    validate_data,
)

from ._atomic import atomic_fit
from ._base import (
    _UNDERFLOW,
    LinearPredictMixin,
    binding_margin,
    check_class_count,
    check_continued_classes,
    check_sparse_structure,
    checked_classes,
    class_codes,
    first_class,
    label_codes,
    linear_margins,
    partial_fit_classes,
    partial_fit_codes,
    problem_count,
    rows_of,
    warn_not_converged,
)
from ._compat import (
    Interval,
    _check_feature_names,
    _check_sample_weight,
    _fit_context,
)
from ._early_stopping import epochs_until_stalled, predicted_codes
from ._margin_perceptron import (
    _REMEDY,
    LinearRun,
    MarginPerceptron,
    held_out_scores,
    segment_margins,
)
from ._margin_perceptron_fast import LiftMode, run_epochs
from ._nonfinite import check_failure, new_failure
from .schedules import checked_schedule

__all__ = ["ParameterMixingClassifier"]


# ----------------------------------------------------------------------------
# One shard: the function that every engine runs, unchanged


@dataclass
class _HeldOut:
    """The examples of a shard that early stopping scores the mixed model
    on: their rows, labels (as codes) and weights."""

    X: object  # ndarray or csr_array
    codes: np.ndarray
    weight: np.ndarray

    def __sizeof__(self):
        X = self.X
        parts = (X.data, X.indices, X.indptr) if sp.issparse(X) else (X,)
        return object.__sizeof__(self) + _nbytes(*parts, self.codes, self.weight)


@dataclass
class _Shard:
    """The rows of one shard, as the compiled loop reads them."""

    rows: tuple  # data, indices, indptr (rows_of)
    codes: np.ndarray  # int32, the index of each label in classes_
    weight: np.ndarray  # float64, the weight of each example
    # with early stopping, the examples set aside (of weight 0 above)
    held_out: _HeldOut = None

    def __sizeof__(self):
        # what dask.distributed counts (through sys.getsizeof) to place the
        # epochs next to the shard and never move it to balance the work
        held_out = 0 if self.held_out is None else sys.getsizeof(self.held_out)
        return (
            object.__sizeof__(self)
            + _nbytes(*self.rows, self.codes, self.weight)
            + held_out
        )


@dataclass
class _ShardRun:
    """What one shard carries from epoch to epoch: its run (weights,
    averaging sums, update and step counts, radius), the order of its
    visits and the state of its shuffle, and the tally of its last epoch."""

    run: LinearRun
    order: np.ndarray
    seed: int
    updates: np.ndarray  # of each problem in the last epoch
    converged: np.ndarray  # whether each problem's function held still
    mistakes: np.ndarray  # weight of the examples with y f(x) <= 0
    update_sum: np.ndarray  # sum of the update sizes of the last epoch

    def __sizeof__(self):
        return object.__sizeof__(self) + _nbytes(
            *vars(self.run).values(), *vars(self).values()
        )


def _nbytes(*values):
    """The bytes of the arrays among ``values``."""
    return sum(value.nbytes for value in values if isinstance(value, np.ndarray))


@dataclass
class _Settings:
    """What every shard needs to know of the estimator, picklable."""

    n_features: int
    first: int
    schedule: object
    eta0: float
    lift_mode: int
    lift_value: float
    shuffle: bool
    # whether the root mean square lift adds the examples of the first
    # epoch: not in a warm-started fit, whose run has seen them
    follow_norms: bool


@dataclass
class _Block:
    """The rows, labels and sample weights of a block of a dask collection,
    validated, before its labels are encoded."""

    rows: tuple  # data, indices, indptr (rows_of)
    y: np.ndarray
    weight: np.ndarray  # float64

    def __sizeof__(self):
        return object.__sizeof__(self) + _nbytes(*self.rows, self.y, self.weight)


def _load_block(X, y, sample_weight, validation):
    """A block of a dask collection, validated on its worker."""
    X = check_sparse_structure(check_array(X, **validation))
    y = np.asarray(y).ravel()
    if y.dtype == object:
        _check_label_types(y)
    weight = (
        np.ones(len(y))
        if sample_weight is None
        else np.asarray(sample_weight, dtype=np.float64).ravel()
    )
    if len(weight) != len(y) or X.shape[0] != len(y):
        raise ValueError("X, y and sample_weight have partitions of other lengths.")
    if not (np.isfinite(weight).all() and (weight >= 0).all()):
        raise ValueError("sample_weight must hold finite weights >= 0.")
    return _Block(rows_of(X), y, weight)


def _check_label_types(labels):
    """scikit-learn's error for object labels of mixed types, which
    np.unique would fail to sort; its warning of too many classes is the
    whole sample's to give (see _labels_like), not a part's."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        check_classification_targets(labels)


def _weighs_any(block):
    """Whether a block holds an example of weight other than 0."""
    return bool(block.weight.any())


def _block_summary(block):
    """What the client needs of a block before the run: its labels with
    their counts, and values of it whose largest absolute value is the
    block's (or one of normal scale), from which ``check_no_underflow``
    decides on the whole sample: its first values, and its extremes unless
    one of those has normal scale."""
    values = block.rows[0]
    head = values[:1024]
    if head.size and np.abs(head).max() < _UNDERFLOW:
        head = np.concatenate((head, [values.min(), values.max()]))
    return (*np.unique(block.y, return_counts=True), head)


def _pooled_labels(summaries):
    """The labels of every block, sorted, and how many examples hold each."""
    labels = np.concatenate([labels for labels, _, _ in summaries])
    if labels.dtype == object:
        # blocks of labels of different types
        _check_label_types(labels)
    labels, inverse = np.unique(labels, return_inverse=True)
    counts = np.zeros(len(labels), dtype=np.int64)
    np.add.at(counts, inverse, np.concatenate([counts for _, counts, _ in summaries]))
    return labels, counts


def _labels_like(labels, counts):
    """Labels that scikit-learn's check of the targets judges as the whole
    ``y`` whose distinct ``labels`` occur ``counts`` times: the same values,
    and a warning that ``y`` has too many classes for its size exactly when
    ``y`` would get one. That warning needs more than 20 labels and more
    distinct ones than half of them, so ``y`` itself is built only when it
    is small; otherwise each label twice is never too many."""
    if counts.sum() <= 2 * len(labels) + 20:
        return np.repeat(labels, counts)
    return np.repeat(labels, 2)


def _shard_of(block, classes, class_weight):
    """The shard of a block: its labels as indices in ``classes``; the class
    weights ``class_weight`` (one per class, or None) multiply the sample
    weights."""
    codes = class_codes(classes, block.y, f"classes {classes.tolist()}")
    weight = block.weight
    if class_weight is not None:
        weight = class_weight[codes] * weight
    return _Shard(block.rows, codes, weight)


def _new_run(n_features, n_problems, average):
    run = LinearRun.start(n_features, n_problems, average)
    # every shard reads every feature, with one column per problem
    run.coef = np.ascontiguousarray(run.coef[:, :n_problems])
    run.avg_coef = np.ascontiguousarray(run.avg_coef[:, :n_problems])
    run.features = None
    return run


def _start_shard(shard, seed, *, n_features, n_problems, average):
    return _continue_shard(shard, seed, run=_new_run(n_features, n_problems, average))


def _continue_shard(shard, seed, *, run):
    """A shard that continues the mixed run ``run``: its weights, counts,
    averaging sums and radius."""
    return _ShardRun(
        run=run.copy(),
        order=np.arange(len(shard.codes), dtype=np.intp),
        seed=seed,
        updates=np.zeros(len(run.lift_coef), dtype=np.int64),
        converged=np.zeros(len(run.lift_coef), dtype=bool),
        mistakes=np.zeros(len(run.lift_coef)),
        update_sum=np.zeros(len(run.lift_coef)),
    )


def _take_mixed(run, mixed):
    """Set the shard's weights to the mixed ones. The lazy average keeps
    ``sum over steps of w = n_steps * coef - avg_coef``: the jump of the
    weights counts in every later step, as an update would."""
    coef, lift_coef, radius, _ = mixed
    if run.avg_coef.shape[0]:
        for own, new, avg in (
            (run.coef, coef, run.avg_coef),
            (run.lift_coef, lift_coef, run.avg_lift),
        ):
            jump = new - own
            # where the weights are unchanged avg stays as it is, to the
            # sign of its zeros
            np.add(avg, run.n_steps * jump, out=avg, where=jump != 0)
    run.coef[...] = coef
    run.lift_coef[...] = lift_coef
    if radius is not None:
        run.radius[...] = radius


def _shard_epoch(shard, state, mixed, active, settings):
    """One epoch of a shard from the mixed weights: the shard's next state.

    ``mixed`` is (coef, lift_coef, radius, settled) of the mixed run (see
    _start_weights), radius None in the first epoch (each shard then
    follows its own); ``active`` the problems still training. The input
    state is not changed.
    """
    run = state.run.copy()
    order = state.order.copy()
    radius, settled = mixed[2:]
    _take_mixed(run, mixed)
    k = run.coef.shape[1]
    columns = np.flatnonzero(active)
    codes = shard.codes
    if len(columns) < k:
        # the problems still training, numbered 0, 1, ... in the block
        sub = run.block(columns)
        number = np.full(k + settings.first, -1, dtype=np.int32)
        number[columns + settings.first] = np.arange(len(columns)) + settings.first
        codes = number[codes]
    else:
        sub = run
    before = sub.n_updates.copy()
    failure = new_failure()
    _, converged, _, _, tally = run_epochs(
        *shard.rows,
        settings.n_features,
        codes,
        settings.first,
        shard.weight,
        sub,
        settings.schedule,
        settings.eta0,
        # the root mean square lift follows the norms in the first epoch
        dict(
            mode=settings.lift_mode,
            value=settings.lift_value,
            follow=settings.follow_norms and radius is None,
            # after the first epoch the pooled radius holds every norm
            seen=radius is not None,
            settled=settled,
        ),
        dict(
            max_iter=1,
            shuffle=settings.shuffle,
            seed=state.seed,
            stop_when_separated=True,
            verbose=0,
            tol=0.0,
            n_iter_no_change=0,
            record_updates=False,
            first_epoch=0,
        ),
        np.zeros(1, dtype=np.uint8),
        failure,
        order=order,
    )
    check_failure(failure, _REMEDY)
    if sub is not run:
        for name, value in vars(sub).items():
            if name not in ("radius", "features"):
                getattr(run, name)[..., columns] = value
        run.radius[...] = sub.radius
    return _ShardRun(
        run=run,
        order=order,
        seed=tally["seed"],
        updates=_scatter(sub.n_updates - before, columns, k),
        converged=_scatter(converged, columns, k),
        mistakes=_scatter(tally["mistakes"], columns, k),
        update_sum=_scatter(tally["update_sum"], columns, k),
    )


def _scatter(values, columns, k):
    """The values of the problems ``columns``, zero for the others."""
    out = np.zeros(k, dtype=values.dtype)
    out[columns] = values
    return out


def _report(state):
    """What a shard sends back each epoch: its weights and tallies, not its
    order of visits."""
    return replace(state, order=None)


def _finish_shard(state, mixed):
    """The shard's run from the final mixed weights: its averaging sums,
    step and update counts."""
    return _at_mixed(state.run, mixed)


def _row_span(rows, start, stop, n_features):
    """The rows start to stop of a sample's ``rows`` (rows_of), as views of
    its arrays: a CSR shard reads the sample's values and indices where
    they are, with an indptr of its own that starts at 0, where X[start:stop]
    would copy them (on 350,000 rows of word counts, 0.11 s of a 0.57 s
    fit on two shards)."""
    data, indices, indptr = rows
    if not len(indptr):
        return data[start * n_features : stop * n_features], indices, indptr
    first, last = indptr[start], indptr[stop]
    return data[first:last], indices[first:last], indptr[start : stop + 1] - first


def _matrix(shard, n_features):
    """The rows of a shard as an array or CSR array (no copy)."""
    data, indices, indptr = shard.rows
    n = len(shard.codes)
    if len(indptr):
        # Set on an empty array: scipy's constructor prunes arrays that are
        # views of larger ones, which the shard's rows are, into copies
        # (the whole of X once a fit's shards are all read).
        matrix = sp.csr_array((n, n_features), dtype=data.dtype)
        matrix.data, matrix.indices, matrix.indptr = data, indices, indptr
        return matrix
    return data.reshape(n, n_features)


def _shard_margins(shard, coef, intercept, settings):
    """The geometric margin of each problem on the shard's examples of
    positive weight, or None without any: the model's margin on the sample
    is the smallest over the shards (every shard divides by the same
    norm)."""
    if not (shard.weight > 0).any():
        return None
    X = _matrix(shard, settings.n_features)
    return linear_margins(X, shard.codes, settings.first, shard.weight, coef, intercept)


def _shard_segment_margins(shard, ends, cutoffs, settings):
    """The margins ``(y f(x), y m(x))`` of the ends of each segment of
    ``ends`` on the shard's examples of positive weight that may bind on it
    (within its cutoff, binding_margin): those that toward_mean reads."""
    margins = segment_margins(
        ends,
        shard.rows,
        settings.n_features,
        shard.codes,
        settings.first,
        shard.weight,
    )
    m = len(cutoffs)
    binding = []
    for i, cutoff in enumerate(cutoffs):
        last, mean = margins[:, i], margins[:, m + i]
        binds = np.minimum(last, mean) <= cutoff
        binding.append((last[binds], mean[binds]))
    return binding


def _shard_codes(shard):
    return shard.codes


def _hold_out(shard, held, n_features):
    """The shard with its examples ``held`` (a mask of its rows) set aside
    for early stopping: of weight 0 in its epochs, which skip them, and
    kept with their weights to score the mixed model on."""
    weight = shard.weight.copy()
    weight[held] = 0.0
    held_out = _HeldOut(
        _matrix(shard, n_features)[held], shard.codes[held], shard.weight[held]
    )
    return replace(shard, weight=weight, held_out=held_out)


def _shard_score(shard, coef, intercept):
    """What the held-out examples of a shard say of the model: the weight
    of those it classifies right, their total weight, and the same two as
    counts (see _validation_score)."""
    held_out = shard.held_out
    right = predicted_codes(held_out_scores(held_out.X, coef, intercept))
    right = right == held_out.codes
    return (
        np.multiply(right, held_out.weight).sum(),
        held_out.weight.sum(),
        int(right.sum()),
        len(right),
    )


def _validation_score(parts):
    """The weighted accuracy on every shard's held-out examples, from their
    _shard_score in shard order: for one shard, that of the estimator's own
    early stopping (weighted_accuracy), to the last bit."""
    right, weight, n_right, n = (sum(values) for values in zip(*parts, strict=True))
    if weight > 0:
        return float(right / weight)
    return n_right / n


def _at_mixed(run, mixed):
    """A copy of ``run`` at the mixed weights."""
    run = run.copy()
    _take_mixed(run, mixed)
    return run


# ----------------------------------------------------------------------------
# The engines: where the shards' epochs run


class _Threads:
    """The shards as slices of one array, each epoch of each shard on a
    thread of this process (the compiled loop releases the GIL)."""

    def __init__(self, shards, starts):
        self.shards = shards
        self.states = starts
        # One pool for all the epochs. joblib's Parallel polls for its
        # results every 10 ms, which would outlast the epoch of a small shard.
        self.pool = ThreadPoolExecutor(len(shards))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.pool.shutdown()

    def epoch(self, mixed, active, settings):
        epoch = partial(_shard_epoch, mixed=mixed, active=active, settings=settings)
        self.states = list(self.pool.map(epoch, self.shards, self.states))
        return [_report(state) for state in self.states]

    def finish(self, mixed):
        return [_finish_shard(state, mixed) for state in self.states]

    def on_shards(self, function, **kwargs):
        """``function(shard, **kwargs)`` of every shard, in shard order."""
        return list(self.pool.map(partial(function, **kwargs), self.shards))


class _Dask:
    """The shards as partitions on the workers of a dask.distributed
    cluster: each epoch sends the mixed weights to every shard and brings
    back its weights and tallies; the data and the order of the visits
    stay where they are. Each state is a task of the one before it, so
    the cluster recomputes a shard lost with its worker."""

    def __init__(self, client, shards, starts):
        self.client = client
        self.shards = shards
        self.states = starts

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        # the last references: the shards' data and states leave the
        # workers' memory
        self.shards = self.states = None

    def epoch(self, mixed, active, settings):
        self.states = [
            self.client.submit(_shard_epoch, shard, state, mixed, active, settings)
            for shard, state in zip(self.shards, self.states, strict=True)
        ]
        return self.client.gather(
            [self.client.submit(_report, state) for state in self.states]
        )

    def finish(self, mixed):
        return self.client.gather(
            [self.client.submit(_finish_shard, state, mixed) for state in self.states]
        )

    def on_shards(self, function, **kwargs):
        """``function(shard, **kwargs)`` of every shard, computed where the
        shard lies, in shard order."""
        return self.client.gather(
            [self.client.submit(function, shard, **kwargs) for shard in self.shards]
        )


def _spread(client, keys):
    """The worker to load and keep each shard on, given the keys of its
    blocks of X: None (wherever the cluster holds it) for a block already
    in the cluster's memory, else the worker with the fewest shards per
    thread so far. Left to itself the scheduler may load every block of a
    few on one worker (it gives a worker about 1.1 tasks per thread at
    once), whose epochs would then run one after the other."""
    threads = client.nthreads()
    # Client.who_has takes futures, which a persisted collection no longer
    # holds: ask the scheduler about the keys
    held = client.sync(client.scheduler.who_has, keys=keys)
    shards = dict.fromkeys(threads, 0)
    for key in keys:
        for worker in held.get(key, ())[:1]:
            shards[worker] = shards.get(worker, 0) + 1
    places = []
    for key in keys:
        if held.get(key):
            places.append(None)
            continue
        worker = min(threads, key=lambda w: shards[w] / threads[w])
        shards[worker] += 1
        places.append(worker)
    return places


def _is_dask_collection(X):
    # dask is imported only for a collection that came from it
    if "dask" not in sys.modules:
        return False
    from dask import is_dask_collection

    return is_dask_collection(X)


def _cut(values, rows):
    """The dask array of ``values`` (one, or an array) in chunks of ``rows``:
    an array is cut by from_array, as dask cannot size the chunks of
    strings itself."""
    import dask.array as da

    if _is_dask_collection(values):
        return values.rechunk((rows,))
    return da.from_array(np.asarray(values), chunks=(rows,))


def _check_finite(pool, n_pieces, estimator, X):
    """scikit-learn's ValueError for X holding NaN or infinity, as its
    validation raises it, the values checked in ``n_pieces`` pieces on the
    threads of ``pool`` (numpy's reductions release the GIL)."""
    # the configuration is that of the caller's thread: the pool's threads
    # have their own
    if get_config()["assume_finite"]:
        return
    values = X.data if sp.issparse(X) else X.reshape(-1)
    name = type(estimator).__name__

    def finite(piece):
        try:
            assert_all_finite(piece, input_name="X", estimator_name=name)
        except ValueError:
            return False
        return True

    if not all(pool.map(finite, np.array_split(values, n_pieces))):
        # the message of the whole, which names NaN wherever X holds one
        assert_all_finite(X, input_name="X", estimator_name=name)


def _distinct(pool, spans, y):
    """The sorted distinct labels of ``y``, from those of each span of its
    rows, found on the threads of ``pool``."""
    found = pool.map(lambda span: np.unique(y[span[0] : span[1]]), spans)
    return np.unique(np.concatenate(list(found)))


def _codes(pool, spans, codes_of, y):
    """``codes_of(y)``, computed for each span of the rows on the threads of
    ``pool``. An error is that of the whole ``y``, which names the faulty
    labels of every span."""
    codes = np.empty(len(y), dtype=np.int32)

    def encode(span):
        start, stop = span
        codes[start:stop] = codes_of(y[start:stop])

    try:
        list(pool.map(encode, spans))
    except ValueError:
        codes_of(y)
        raise
    return codes


# ----------------------------------------------------------------------------
# The stopping rule of the mixed run


class _MixedStoppingRule:
    """The stopping rule of :class:`~skperc.MarginPerceptron` (``end_epoch``
    of the compiled loops), applied to the mixed run after each mixing:
    the mistakes of an epoch are those of every shard, the drift that of
    the mixed weights along the mixture's update sizes. Each sum runs in
    the order of the compiled loop's, so that one shard decides as the
    single-machine run does."""

    def __init__(self, n_problems, n_features, tol, n_iter_no_change, on):
        k = n_problems
        self.on = on
        self.tol = tol
        self.n_iter_no_change = n_iter_no_change
        self.n_run = 0
        self.best = np.full(k, np.inf)
        self.no_improvement = np.zeros(k, dtype=np.int64)
        self.update_sum = np.zeros(k)
        self.base_sum = np.zeros((2, k))
        self.snap_coef = np.zeros((2, n_features, k))
        self.snap_lift = np.zeros((2, k))

    def end_epoch(self, active, converged, mistakes, coef, lift_coef, radius2):
        """Whether the rule ends each problem (all False with it off)."""
        self.n_run += 1
        stopped = np.zeros(len(active), dtype=bool)
        if not self.on:
            return stopped
        for c in np.flatnonzero(active & ~converged):
            moved = [
                # the loop's sum: the lifted coordinate, then feature order
                math.sqrt(
                    np.cumsum(
                        np.concatenate(
                            (
                                [lift_coef[c] - self.snap_lift[s, c]],
                                coef[:, c] - self.snap_coef[s, :, c],
                            )
                        )
                        ** 2
                    )[-1]
                )
                for s in range(2)
            ]
            if self.n_run == 1:
                snapshot = 2
            elif mistakes[c] == 0.0 or mistakes[c] < self.best[c]:
                snapshot = 1
            else:
                snapshot = 0
                self.no_improvement[c] += 1
            if snapshot:
                self.no_improvement[c] = 0
                self.best[c] = min(self.best[c], mistakes[c])
                for s in range(2 - snapshot, 2):
                    self.base_sum[s, c] = self.update_sum[c]
                    self.snap_coef[s, :, c] = coef[:, c]
                    self.snap_lift[s, c] = lift_coef[c]
                continue
            if self.no_improvement[c] < self.n_iter_no_change:
                continue
            drift = math.inf
            for s in range(2):
                along = self.update_sum[c] - self.base_sum[s, c]
                if along > 0.0:
                    drift = min(drift, moved[s] / along)
            stopped[c] = drift < self.tol * (1.0 - 1e-9) * math.sqrt(radius2)
        return stopped


# ----------------------------------------------------------------------------
# Mixing


def _mixture(reports, values, start):
    """sum over shards of share * value, in shard order, over the shards
    that updated: a shard's share of a problem is its part of the epoch's
    updates of that problem. Where no shard updated, ``start``."""
    updates = np.array([report.updates for report in reports])
    share = updates / np.maximum(updates.sum(axis=0), 1)
    mixed = np.array(start, dtype=np.float64, copy=True)
    started = np.zeros(updates.shape[1], dtype=bool)
    for part, mu, value in zip(updates, share, values, strict=True):
        term = mu * value
        first, later = (part > 0) & ~started, (part > 0) & started
        mixed[..., first] = term[..., first]
        mixed[..., later] += term[..., later]
        started |= part > 0
    return mixed


def _mix(reports, coef, lift_coef):
    """The mixed weights of an epoch; a problem that no shard updated keeps
    its weights, which every shard still has."""
    return (
        _mixture(reports, [report.run.coef for report in reports], coef),
        _mixture(reports, [report.run.lift_coef for report in reports], lift_coef),
    )


def _lift_norm2(settings, radius):
    """R^2 of the lifted examples, as the compiled loop computes it from
    the run's ``radius`` (see LinearRun)."""
    if settings.lift_mode == LiftMode.AUTO_LIFT:
        lift = math.sqrt(radius[0])
    elif settings.lift_mode == LiftMode.RMS_LIFT:
        lift = math.sqrt(radius[2])
    elif settings.lift_mode == LiftMode.FIXED_LIFT:
        lift = settings.lift_value
    else:
        lift = 0.0
    return radius[0] + lift * lift


_SUMS = ("avg_coef", "avg_lift", "n_steps", "n_updates")


def _mixed_run(runs, prior=None):
    """The run of the mixed model from the shards' runs, each brought to
    the mixed weights (``_finish_shard``): its averaging sums and step and
    update counts are the sums of the shards', so that its average is that
    of the weights of every step of every shard.

    Shards that each continued the run ``prior`` (brought to the mixed
    weights too) each hold its sums: they count once. One shard's run is
    the mixed run, to the last bit."""
    run = runs[0].copy()
    for other in runs[1:]:
        for name in _SUMS:
            getattr(run, name)[...] += getattr(other, name)
    if prior is not None and len(runs) > 1:
        for name in _SUMS:
            getattr(run, name)[...] -= (len(runs) - 1) * getattr(prior, name)
    return run


def _pooled_radius(reports, prior=None):
    """The radius of the whole sample from the shards' (see LinearRun): the
    largest norm and rho^2, and the mean squared norm over all the shards'
    examples, those of the radius ``prior`` that each shard continued
    counted once; one shard's own radius, to the last bit."""
    radii = np.array([report.run.radius for report in reports])
    if len(radii) == 1:
        return radii[0].copy()
    moments = radii[:, 2] * radii[:, 3]
    count, total = radii[:, 3].sum(), moments.sum()
    if prior is not None:
        count -= (len(radii) - 1) * prior[3]
        total -= (len(radii) - 1) * prior[2] * prior[3]
    mean = total / count if count else 0.0
    return np.array([radii[:, 0].max(), radii[:, 1].max(), mean, count])


class ParameterMixingClassifier(
    MetaEstimatorMixin, LinearPredictMixin, ClassifierMixin, BaseEstimator
):
    """A margin perceptron trained on shards of the data by iterative
    parameter mixing.

    The sample is split into shards. Each epoch, every shard runs one
    epoch of ``estimator`` (a :class:`~skperc.MarginPerceptron`) over its
    own examples, all starting from the same mixed weights; the new mixed
    weights are the average of the shards' weights, each weighted by its
    share of the epoch's updates (McDonald, Hall and Mann's mixing by
    errors). The shards run on threads of this machine, over slices of one
    array, or on the workers of a dask.distributed cluster when ``X`` is a
    dask array or dataframe, whose partitions are then the shards: only
    the weights and the update counts travel, once per epoch each way.
    The two engines run the same function on each shard and mix in the
    same order, so on the same shards they give the same weights to the
    last bit; with one shard the run is ``estimator``'s own ``fit``, to
    the last bit.

    Read more in the :ref:`User Guide <parameter_mixing>`.

    Parameters
    ----------
    estimator : MarginPerceptron, default=None
        The perceptron to train, with all its options (threshold schedule,
        averaging, intercept, class weights, stopping rule, early stopping,
        ``max_iter``, ``shuffle`` and ``random_state``); ``None`` means
        ``MarginPerceptron()``. Its ``warm_start=True`` makes :meth:`fit`
        continue the mixed run of the previous call; its ``verbose`` prints
        each mixed epoch; its ``n_jobs`` is not used (the shards are the
        parallelism).

    n_shards : int, default=None
        The number of shards of an array or sparse matrix: consecutive
        blocks of rows of equal size (to one row), one thread each. ``None``
        means 2, and no more shards than rows are made. A dask collection
        keeps its own partitions as shards (but those of no rows), and
        ``n_shards``, when given, rechunks its rows into that many equal
        blocks first.

    Attributes
    ----------
    estimator_ : MarginPerceptron
        The fitted perceptron, whose weights are the last mixed weights,
        their average over every step of every shard, or a point between
        the two, as ``average`` says.

    classes_ : ndarray of shape (n_classes,)
        The class labels.

    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
        The weights of the decision function.

    intercept_ : ndarray of shape (1,) or (n_classes,)
        The intercepts of the decision function.

    n_iter_ : int
        The number of mixed epochs of the last call (1 for
        :meth:`partial_fit`).

    n_updates_ : ndarray of shape (1,) or (n_classes,)
        The updates made by all the shards, for each one-vs-rest problem.

    mixed_updates_ : ndarray of shape (1,) or (n_classes,)
        The mixture's updates: the sum over epochs and shards of each
        shard's share times its updates, the quantity that the theorem of
        the Notes bounds.

    margin_ : ndarray of shape (1,) or (n_classes,)
        The geometric margin of each binary problem on the training data of
        the last call, as for :class:`~skperc.MarginPerceptron`: the
        smallest ``y * f(x) / ||coef||`` over the examples of positive
        weight of every shard, computed where each shard lies.

    converged_ : bool
        Whether every problem ended with an epoch in which no shard
        updated (the training sample is then separated, every margin above
        its threshold).

    stop_reason_ : {"separated", "no_improvement", "max_iter"}
        Why the run ended, as for :class:`~skperc.MarginPerceptron`.

    validation_scores_ : list of float or None
        With early stopping, the accuracy of the model that would answer
        on the validation part of the whole sample after each mixed epoch
        of the last :meth:`fit` (weighted by the sample and class weights);
        ``None`` without.

    best_validation_score_ : float or None
        The best of ``validation_scores_``, which the fitted model scores;
        ``None`` without early stopping.

    n_shards_ : int
        The number of shards trained.

    n_features_in_ : int
        Number of features seen during ``fit``.

    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during ``fit``. Defined only when `X`
        has feature names that are all strings.

    See Also
    --------
    skperc.MarginPerceptron : The perceptron trained on one core.
    sklearn.model_selection.GridSearchCV : Spreads the fits of a search over
        a cluster through joblib's dask backend, each fit on one worker.

    Notes
    -----
    Why a meta-estimator: the mixing is a way to train one estimator, as
    bagging and one-vs-rest are, and it takes a dask collection that must
    not be gathered into one array, which ``MarginPerceptron``'s
    validation would do. In a pipeline or a grid search its options read
    ``parametermixingclassifier__n_shards`` and, once a perceptron is given
    (``estimator=MarginPerceptron()``: the default ``None`` has no options
    to set, as in scikit-learn's meta-estimators),
    ``parametermixingclassifier__estimator__beta``.

    **The mixed run.** Each shard keeps its own run: its update count ``t``
    (the ``t`` of ``beta="power"``), its step count, its averaging sums and
    the state of its shuffle, which continues from epoch to epoch as the
    single-machine run's does. In the first epoch each shard follows its own
    radius (the largest norm it has seen, the mean squared norm of its
    examples, and the schedule's ``rho``); from the second on every shard
    uses the largest of them and the mean over all the shards' examples, the
    radius and mean of the whole sample, so that the lifted intercept
    coordinate (``intercept_scaling="rms"`` or ``"auto"``) and the
    thresholds of ``beta="scale"`` are the same on every shard, as mixing
    weights of one problem requires. With ``"rms"``, whose lift moved in the
    first epoch, each shard's ``rho`` then sees the lifted norms of its
    examples again in the second epoch, as the single-machine run does, and
    the largest ``rho`` holds from the third. A problem has converged after
    an epoch in which no shard updated it; the stopping rule (``tol``,
    ``n_iter_no_change``) is the estimator's, applied to the mixed run: an
    epoch's sign mistakes are those of all the shards, and its drift is that
    of the mixed weights along the mixture's update sizes, which keeps its
    certificate (every update of size ``a`` moves the mixture by at least
    ``share * a * eps*`` along a separator of margin ``eps*``). The averaged
    model is the average of the weights used at every step of every shard:
    the sum of the shards' averaging sums over the sum of their steps, each
    shard's weights jumping to the mixed ones at each mixing. As on one
    core, it is the model of a run that the stopping rule ends
    (``average="auto"``, the default) and of every run with
    ``average=True``; on noisy data the last mixed weights are one guess
    among many, as one core's are. A problem that separates trains no more
    while the others go on, and answers, under ``average="auto"``, toward
    its mean as on one core (see its ``average``), from the margins
    of every shard, of which only those that may bind travel.

    **Early stopping.** Where ``estimator``'s own fit would stop on a
    validation part (``early_stopping=True``, or ``"auto"``, the default, on
    more than 2,000 examples), the mixed run sets aside the same part of the
    whole sample, drawn on the client from the labels of every shard (of a
    dask collection, their class indices, 4 bytes an example, travel once).
    Each shard keeps its examples of it where it lies, with weight 0 in its
    epochs, which skip them; after each mixed epoch the model that would
    answer (the averaged weights of the mixed run so far) is scored on every
    shard's held-out examples, and each sends back four numbers. The run
    ends and answers as ``estimator``'s own does: at the best score, unless
    an epoch separates the training part; a perfect score stops no run that
    may still separate it, so that on a separable sample the bounds below
    hold for the training part. ``partial_fit`` does not hold out.

    **What the theorems keep.** Let ``u`` be a unit separator of margin
    ``gamma`` and ``R`` the radius (with the lift). In an epoch a shard
    starting from the mixed ``w`` with ``k`` updates of threshold at most
    ``beta`` ends with ``w_i . u >= w . u + k gamma`` and
    ``||w_i||^2 <= ||w||^2 + k (2 beta + R^2)``; both pass through a
    convex combination (the second by convexity of the squared norm), so
    after any number of epochs the mixture's updates ``M`` (``mixed_updates_``)
    satisfy ``M gamma <= ||w|| <= sqrt(M (2 beta + R^2))``:

    - ``beta >= 0`` constant: ``M <= (2 beta + R^2) / gamma^2``, Novikoff's
      ``(R / gamma)^2`` for ``beta = 0`` (Theorem 3 of McDonald et al.,
      for any mixing weights), and at convergence the margin is at least
      ``beta gamma / (2 beta + R^2)`` (Theorem 2 of the compression
      paper, with the same proof). With mixing by errors each epoch with
      an update adds at least 1 to ``M`` (``sum k_i^2 / sum k_i >= 1``), so
      at most that many epochs update: the run ends separated.
    - ``beta="scale"``: every threshold is at most ``rho^2 <= 4 R^2``, so
      ``M <= 9 R^2 / gamma^2``; at convergence every example clears the
      common ``rho^2 >= R^2`` and the margin is at least ``gamma / 3``
      (Theorem 1's guarantees, unchanged).
    - ``beta="power"``: each shard's own count keeps
      ``||w_i||^2 - ||w||^2 <= rho^2 (t_end^alpha - t_start^alpha)``, but a
      mixture of weights reached with different counts no longer satisfies
      ``||w||^2 <= rho^2 t^alpha`` for every shard's ``t``: the update bound
      and the margin of Theorem 3 are not proved for the mixed run. A run
      that converges has still separated the sample, every example above
      its shard's threshold.

    The price of mixing is in epochs: ``M`` counts each epoch's updates
    once in total, not once per shard, and a shard does not see the
    updates of the others until the next mixing.

    **Continuing a run.** A warm-started :meth:`fit` and each
    :meth:`partial_fit` start every shard from the mixed run so far: its
    weights, update count, averaging sums and radius; the mixed run then
    counts the steps and updates that each shard added, once. The
    invariants of the proof above hold for the mixed weights at every
    mixing, so the bounds hold for ``mixed_updates_`` summed over the calls.
    A warm-started fit does not add its examples to the radius' mean
    squared norm again, as :class:`~skperc.MarginPerceptron` does not; a
    :meth:`partial_fit` adds those of its batch. Each call works on a copy
    of the model and publishes the new one in one step, as the
    perceptron's own fits do: a call that raises, or is interrupted, leaves
    the previous model (or an unfitted estimator) as it was.

    References
    ----------
    .. [1] R. McDonald, K. Hall and G. Mann, "Distributed Training
       Strategies for the Structured Perceptron", Human Language
       Technologies: The 2010 Annual Conference of the North American
       Chapter of the ACL (NAACL HLT 2010), 456-464, 2010.
    .. [2] S. Moran, I. Nachum, I. Panasoff and A. Yehudayoff, "On the
       Perceptron's Compression", Computing with Foresight and Industry
       (CiE 2020), Lecture Notes in Computer Science 12098, Springer, 2020,
       Section 2.

    Examples
    --------
    >>> from skperc import MarginPerceptron
    >>> from skperc.datasets import make_margin_classification
    >>> from skperc.distributed import ParameterMixingClassifier
    >>> X, y = make_margin_classification(
    ...     n_samples=400, n_features=5, margin=0.1, random_state=0)
    >>> clf = ParameterMixingClassifier(
    ...     MarginPerceptron(random_state=0), n_shards=4).fit(X, y)
    >>> clf.converged_, clf.score(X, y)
    (True, 1.0)
    """

    _parameter_constraints: dict = {
        "estimator": [MarginPerceptron, None],
        "n_shards": [Interval(Integral, 1, None, closed="left"), None],
    }

    def __init__(self, estimator=None, *, n_shards=None):
        self.estimator = estimator
        self.n_shards = n_shards

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    @_fit_context(prefer_skip_nested_validation=False)
    @atomic_fit
    def fit(self, X, y, sample_weight=None):
        """Train the perceptron on the shards of ``X`` by parameter mixing.

        Parameters
        ----------
        X : {array-like, sparse matrix, dask array, dask dataframe} of \
                shape (n_samples, n_features)
            Training data. A dask collection is trained on the workers of
            the current dask.distributed client, its partitions of rows as
            the shards.

        y : array-like or dask array/series of shape (n_samples,)
            Target values, partitioned as ``X`` when ``X`` is a dask
            collection.

        sample_weight : array-like or dask array of shape (n_samples,), \
                default=None
            Non-negative weights of the examples.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        estimator = clone(
            MarginPerceptron() if self.estimator is None else self.estimator
        )
        estimator._validate_params()
        warm = estimator.warm_start and hasattr(self, "estimator_")
        classes, n_features, engine_of, validated = self._shards(
            estimator, X, y, sample_weight, reset=not warm
        )
        if warm:
            check_continued_classes(self, classes)
            prior = self.estimator_._run
            start = partial(_continue_shard, run=prior)
        else:
            prior = None
            self.mixed_updates_ = np.zeros(problem_count(classes))
            start = partial(
                _start_shard,
                n_features=n_features,
                n_problems=problem_count(classes),
                average=bool(estimator.average),
            )
        settings, seeds = self._settings(estimator, classes, n_features, not warm)
        train = self._train_validated if validated else self._train
        estimator.validation_scores_ = estimator.best_validation_score_ = None
        with engine_of(start, seeds) as engine:
            converged, averaged = train(
                estimator, engine, settings, problem_count(classes), prior
            )
            thresholds = estimator._separated_thresholds(
                settings.schedule, converged, averaged, settings.eta0
            )
            if np.isfinite(thresholds).any():
                self._toward_mean(estimator, engine, settings, thresholds)
            self._set_margins(estimator, engine, settings)
        self._set_fitted(estimator, classes)
        if self.stop_reason_ == "max_iter":
            warn_not_converged(estimator, settings.schedule)
        return self

    @_fit_context(prefer_skip_nested_validation=False)
    @atomic_fit
    def partial_fit(self, X, y, classes=None, sample_weight=None):
        """One mixed epoch over the shards of a batch, continuing the run.

        Every shard of ``X`` (its partitions for a dask collection, else
        ``n_shards`` blocks of rows) runs one epoch from the mixed weights
        of the run so far, and their weights are mixed once, as an epoch
        of :meth:`fit` mixes them. Each shard continues the run's update
        count, radius and averaging sums; the run then counts every
        shard's steps and updates once. With one shard a call is
        ``estimator``'s own ``partial_fit``, to the last bit. The stopping
        rule does not apply: a stream decides its own epochs.

        The first call trains a clone of ``estimator``, ``estimator_``,
        and later calls continue it, as the ``partial_fit`` of
        scikit-learn's meta-estimators (``OneVsRestClassifier``,
        ``MultiOutputClassifier``) continues the clones of its first call:
        ``set_params(estimator__eta0=...)`` takes effect at the next
        :meth:`fit`, while ``estimator_.set_params(eta0=...)`` changes the
        run from the next call on, as ``set_params`` between the calls of
        a perceptron's own ``partial_fit`` does.

        Parameters
        ----------
        X : {array-like, sparse matrix, dask array, dask dataframe} of \
                shape (n_samples, n_features)
            A batch of training data. A dask collection is trained on the
            workers of the current dask.distributed client, its partitions
            of rows as the shards.

        y : array-like or dask array/series of shape (n_samples,)
            Target values of the batch, partitioned as ``X`` when ``X`` is
            a dask collection.

        classes : array-like of shape (n_classes,), default=None
            Every class of the run: required on the first call, the same
            on later calls.

        sample_weight : array-like or dask array of shape (n_samples,), \
                default=None
            Non-negative weights of the examples of the batch.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        first_call = not hasattr(self, "estimator_")
        if first_call:
            estimator = clone(
                MarginPerceptron() if self.estimator is None else self.estimator
            )
        else:
            # the call sets the new run on a copy: the published estimator_
            # keeps its own until the call completes (see atomic_fit)
            estimator = copy.copy(self.estimator_)
        # the run's own parameters may have been set since the last call, as
        # a perceptron's may between its partial_fit calls
        estimator._validate_params()
        if estimator.class_weight == "balanced":
            raise ValueError(
                "class_weight='balanced' is not supported by partial_fit: the "
                "class frequencies of a stream are not known in advance. Pass "
                "weights computed with sklearn.utils.compute_class_weight."
            )
        classes, n_features, engine_of, _ = self._shards(
            estimator,
            X,
            y,
            sample_weight,
            partial=(classes, first_call),
            reset=first_call,
        )
        if first_call:
            run = _new_run(n_features, problem_count(classes), bool(estimator.average))
            self.mixed_updates_ = np.zeros(len(run.lift_coef))
        else:
            run = estimator._run
        settings, seeds = self._settings(estimator, classes, n_features, True)
        estimator.validation_scores_ = estimator.best_validation_score_ = None
        with engine_of(partial(_continue_shard, run=run), seeds) as engine:
            self._mix_once(estimator, engine, settings, run)
            self._set_margins(estimator, engine, settings)
        self._set_fitted(estimator, classes)
        return self

    def _shards(self, estimator, X, y, sample_weight, partial=None, reset=True):
        """The classes, the number of features and the engine of the shards
        of X (``engine(start, seeds)`` runs ``start(shard, seed)`` for each
        shard), and whether the shards hold out the validation part of early
        stopping (never in partial_fit). ``partial`` is (classes,
        first_call) in partial_fit; X has the features of the run it
        continues unless ``reset``."""
        if _is_dask_collection(X):
            return self._dask_shards(estimator, X, y, sample_weight, partial, reset)
        return self._array_shards(estimator, X, y, sample_weight, partial, reset)

    def _toward_mean(self, estimator, engine, settings, thresholds):
        """As the estimator's own fit: the problems of a finite threshold
        (that separated, under ``average="auto"``) answer toward their mean
        as toward_mean says, from the margins of their segments' ends on
        every shard's examples, of which those that may bind travel."""
        ends = estimator._segment_ends(thresholds)
        cutoffs = [
            binding_margin(products, threshold)
            for products, threshold in zip(ends.products, ends.thresholds, strict=True)
        ]
        parts = engine.on_shards(
            _shard_segment_margins, ends=ends, cutoffs=cutoffs, settings=settings
        )
        margins = [
            tuple(np.concatenate([part[i][end] for part in parts]) for end in (0, 1))
            for i in range(len(cutoffs))
        ]
        estimator._move_toward_mean(ends, margins)

    def _set_margins(self, estimator, engine, settings):
        """margin_ of the model on the training data of the call: the
        smallest over the shards."""
        margins = [
            margins
            for margins in engine.on_shards(
                _shard_margins,
                coef=estimator.coef_,
                intercept=estimator.intercept_,
                settings=settings,
            )
            if margins is not None
        ]
        estimator.margin_ = (
            np.min(margins, axis=0) if margins else np.zeros(len(estimator.intercept_))
        )

    def _settings(self, estimator, classes, n_features, follow_norms):
        """What every shard needs of the estimator, and each shard's seed:
        the first shard shuffles as the single-machine run would."""
        seed = estimator._run_seed()
        seeds = [seed] + [
            int(s)
            for s in np.random.default_rng(seed).integers(
                0, np.iinfo(np.int64).max, self.n_shards_ - 1
            )
        ]
        mode, value = estimator._lift(np.zeros(4))
        settings = _Settings(
            n_features=n_features,
            first=first_class(classes),
            schedule=checked_schedule(estimator.beta, estimator.alpha),
            eta0=float(estimator.eta0),
            lift_mode=int(mode),
            lift_value=value,
            shuffle=bool(estimator.shuffle),
            follow_norms=follow_norms,
        )
        return settings, seeds

    def _set_fitted(self, estimator, classes):
        estimator.classes_ = self.classes_ = classes
        estimator.n_features_in_ = self.n_features_in_
        estimator.__dict__.pop("feature_names_in_", None)
        if hasattr(self, "feature_names_in_"):
            estimator.feature_names_in_ = self.feature_names_in_
        self.estimator_ = estimator
        for name in (
            "coef_",
            "intercept_",
            "n_iter_",
            "n_updates_",
            "converged_",
            "margin_",
            "stop_reason_",
            "validation_scores_",
            "best_validation_score_",
        ):
            setattr(self, name, getattr(estimator, name))

    def _array_shards(self, estimator, X, y, sample_weight, partial, reset):
        validation = estimator._validation()
        try:
            # X's values are checked below, on the shards' threads
            X, y = validate_data(
                self, X, y, reset=reset, ensure_all_finite=False, **validation
            )
        except (ValueError, TypeError):
            # the error of the full validation, which checks X's values
            # before y
            validate_data(self, X, y, reset=reset, **validation)
            raise
        n_shards = min(self.n_shards or 2, X.shape[0])
        bounds = np.linspace(0, X.shape[0], n_shards + 1).astype(np.intp)
        spans = list(zip(bounds[:-1], bounds[1:], strict=True))
        with ThreadPoolExecutor(n_shards) as pool:
            _check_finite(pool, n_shards, self, X)
            X = check_sparse_structure(X)
            if reset:
                # a new run refuses input whose products underflow, as the
                # estimator's own fit does
                estimator._check_input(X, warm=False)
            # the classes of a fit; those of partial_fit are given
            found = checked_classes(y, lambda y: _distinct(pool, spans, y))
            if partial is None:
                classes = found
                check_class_count(estimator, classes)

                def codes_of(labels):
                    return label_codes(classes, labels)

            else:
                classes = partial_fit_classes(self, *partial)

                def codes_of(labels):
                    return partial_fit_codes(self, labels, *partial)[1]

            codes = _codes(pool, spans, codes_of, y)
        weight = estimator._example_weights(X, y, codes, classes, sample_weight)
        self.n_shards_ = n_shards
        rows = rows_of(X)
        shards = [
            _Shard(
                _row_span(rows, start, stop, X.shape[1]),
                codes[start:stop],
                weight[start:stop],
            )
            for start, stop in spans
        ]
        held = None if partial is not None else self._held_out(estimator, codes)
        if held is not None:
            shards = [
                _hold_out(shard, held[start:stop], X.shape[1])
                for shard, (start, stop) in zip(shards, spans, strict=True)
            ]

        def engine(start, seeds):
            starts = [
                start(shard, seed) for shard, seed in zip(shards, seeds, strict=True)
            ]
            return _Threads(shards, starts)

        return classes, X.shape[1], engine, held is not None

    def _dask_shards(self, estimator, X, y, sample_weight, partial, reset):
        import dask
        from distributed import get_client

        try:
            client = get_client()
        except ValueError:
            raise ValueError(
                "A dask collection is trained on a dask.distributed cluster: "
                "connect a Client first (distributed.Client(...))."
            ) from None
        if not client.nthreads():
            raise ValueError(
                "The dask cluster has no workers yet: wait for them "
                "(Client.wait_for_workers) before fitting."
            )
        # the column names of a dask dataframe, which its array drops; a new
        # run on a dask array has none
        _check_feature_names(self, X, reset=reset)
        X, y, sample_weight = (
            v.to_dask_array(lengths=True) if hasattr(v, "to_dask_array") else v
            for v in (X, y, sample_weight)
        )
        if X.ndim != 2:
            raise ValueError(f"X must be 2-dimensional; got {X.ndim} dimensions.")
        if _is_dask_collection(y):
            if y.ndim == 2 and y.shape[1] == 1:
                warnings.warn(
                    "A column-vector y was passed when a 1d array was expected: "
                    "it is read as its only column.",
                    DataConversionWarning,
                    stacklevel=4,
                )
                y = y[:, 0]
        else:
            # labels of pandas' extension dtypes (strings, categories) as
            # numpy reads them, and a column vector as the threads read it
            y = column_or_1d(y, warn=True)
        for name, values in (("X", X), ("y", y), ("sample_weight", sample_weight)):
            if values is not None and math.isnan(values.shape[0]):
                raise ValueError(
                    f"{name} is a dask collection of unknown chunk sizes (as a "
                    "boolean mask leaves it): compute them first, with its "
                    "compute_chunk_sizes()."
                )
            if values is not None and values.shape[0] != X.shape[0]:
                raise ValueError(
                    f"X has {X.shape[0]} rows and {name} {values.shape[0]}; they "
                    "must be as many."
                )
        X = X.rechunk({1: -1})
        if self.n_shards is not None:
            n_shards = min(self.n_shards, X.shape[0])
            bounds = np.linspace(0, X.shape[0], n_shards + 1).astype(np.intp)
            X = X.rechunk({0: tuple(np.diff(bounds))})
        if X.shape[0] and 0 in X.chunks[0]:
            # a partition of no rows (of the user's chunks) is no shard
            X = X.rechunk({0: tuple(size for size in X.chunks[0] if size)})
        rows = X.chunks[0]
        y = _cut(y, rows)
        if sample_weight is not None:
            sample_weight = _cut(sample_weight, rows)
        if partial is not None:
            # the labels are checked against the classes on the workers
            classes = partial_fit_classes(self, *partial)
        if not reset and X.shape[1] != self.n_features_in_:
            raise ValueError(
                f"X has {X.shape[1]} features, but {type(self).__name__} "
                f"is expecting {self.n_features_in_} features as input."
            )
        blocks = [
            X.to_delayed().ravel(),
            y.to_delayed().ravel(),
            [None] * len(rows)
            if sample_weight is None
            else sample_weight.to_delayed().ravel(),
        ]
        validation = estimator._validation()
        loaded = [
            client.compute(
                dask.delayed(_load_block)(xb, yb, wb, validation),
                workers=worker,
                allow_other_workers=True,
            )
            for xb, yb, wb, worker in zip(
                *blocks, _spread(client, [xb.key for xb in blocks[0]]), strict=True
            )
        ]
        if partial is None or reset:
            summaries = client.gather(client.map(_block_summary, loaded))
        if partial is None:
            classes, counts = _pooled_labels(summaries)
            check_classification_targets(_labels_like(classes, counts))
            check_class_count(estimator, classes)
        if reset:
            # a new run refuses input whose products underflow, as the
            # threads do: the check of the whole sample, from values of
            # every shard that hold its largest
            estimator._check_input(
                np.concatenate([values for _, _, values in summaries]), warm=False
            )
        if sample_weight is not None and not any(
            client.gather(client.map(_weighs_any, loaded))
        ):
            # scikit-learn's check of weights that are all 0, where its
            # version makes one, as the threads' _check_sample_weight
            _check_sample_weight(np.zeros(1), np.zeros((1, 1)))
        class_weight = None
        if estimator.class_weight is not None:
            # "balanced" from the counts of the labels (partial_fit refuses it)
            class_weight = estimator._class_weights(
                classes, counts=counts if partial is None else None
            )
        self.n_features_in_ = X.shape[1]
        self.n_shards_ = len(rows)
        shards = client.map(
            _shard_of, loaded, classes=classes, class_weight=class_weight
        )
        held = None
        if partial is None and estimator.early_stopping:
            # the split is drawn from every label, as one machine draws it
            codes = np.concatenate(client.gather(client.map(_shard_codes, shards)))
            held = self._held_out(estimator, codes)
        if held is not None:
            bounds = np.cumsum((0, *rows))
            shards = [
                client.submit(_hold_out, shard, held[start:stop], X.shape[1])
                for shard, start, stop in zip(
                    shards, bounds[:-1], bounds[1:], strict=True
                )
            ]

        def engine(start, seeds):
            starts = [
                client.submit(start, shard, seed)
                for shard, seed in zip(shards, seeds, strict=True)
            ]
            return _Dask(client, shards, starts)

        return classes, X.shape[1], engine, held is not None

    def _held_out(self, estimator, codes):
        """Which examples of a fit labelled by ``codes`` early stopping sets
        aside (a mask), as ``estimator``'s own fit would, or None for the
        rule on the training data."""
        validation = estimator._validation_part(codes)
        if validation is None:
            return None
        held = np.zeros(len(codes), dtype=bool)
        held[validation] = True
        return held

    def _train(self, estimator, engine, settings, k, prior):
        """The mixed epochs of a new run, or of one that continues the run
        ``prior``; sets the estimator's run and fitted attributes."""
        mixed = _start_weights(prior, settings.n_features, k)
        tol = estimator.tol
        rule = _MixedStoppingRule(
            k,
            settings.n_features,
            float(tol or 0.0),
            estimator.n_iter_no_change,
            on=tol is not None,
        )
        n_epochs = np.zeros(k, dtype=np.int64)
        converged = np.zeros(k, dtype=bool)
        stopped = np.zeros(k, dtype=bool)
        mixed_updates = self.mixed_updates_.copy()
        for _ in range(estimator.max_iter):
            active = ~(converged | stopped)
            if not active.any():
                break
            reports, mixed = _mixed_epoch(
                engine, mixed, active, settings, prior, mixed_updates
            )
            coef, lift_coef, radius, _ = mixed
            rule.update_sum += _mixture(
                reports, [r.update_sum for r in reports], np.zeros(k)
            )
            n_epochs += active
            # a problem that separated stays so, out of the later epochs
            converged |= active & np.all([r.converged for r in reports], axis=0)
            mistakes = np.zeros(k)
            for report in reports:
                mistakes += report.mistakes
            stopped |= rule.end_epoch(
                active,
                converged,
                mistakes,
                coef,
                lift_coef,
                _lift_norm2(settings, radius),
            )
            if estimator.verbose > 0:
                print(
                    f"-- Epoch {int(n_epochs.max())}: "
                    f"{int(sum(r.updates.sum() for r in reports))} updates, "
                    f"{int((~(converged | stopped)).sum())} problem(s) still updating"
                )
        self.mixed_updates_ = mixed_updates
        averaged = estimator._averaged(stopped)
        _set_run(
            estimator,
            _mixed_run(
                engine.finish(mixed),
                prior=None if prior is None else _at_mixed(prior, mixed),
            ),
            averaged,
            n_epochs,
            converged,
            stopped,
        )
        return converged, averaged

    def _train_validated(self, estimator, engine, settings, k, prior):
        """The mixed epochs of a fit with early stopping, as ``estimator``'s
        own (see MarginPerceptron's _train_validated): each epoch trains
        every problem on the shards' training parts, and the model that
        would answer, from the mixed run so far, is scored on their held-out
        examples; the run as it stood at the best score unless the last
        epoch separated the training part. Sets the estimator's run and
        fitted attributes."""
        mixed = _start_weights(prior, settings.n_features, k)
        active = np.ones(k, dtype=bool)
        mixed_updates = self.mixed_updates_.copy()

        def one_epoch(epoch):
            nonlocal mixed
            reports, mixed = _mixed_epoch(
                engine, mixed, active, settings, prior, mixed_updates
            )
            # the run that the shards' runs make at the mixed weights, as
            # _finish_shard would bring each of them there
            estimator._run = _mixed_run(
                [_at_mixed(report.run, mixed) for report in reports],
                prior=None if prior is None else _at_mixed(prior, mixed),
            )
            separated = np.all([r.converged for r in reports])
            if estimator.verbose > 0:
                print(
                    f"-- Epoch {epoch + 1}: "
                    f"{int(sum(r.updates.sum() for r in reports))} updates"
                )
            return separated

        def score():
            model = estimator._model(estimator._averaged(np.ones(k, dtype=bool)))
            return _validation_score(
                engine.on_shards(_shard_score, coef=model[0], intercept=model[1])
            )

        n_epochs, converged, stalled, best = epochs_until_stalled(
            estimator,
            one_epoch,
            score,
            lambda: (estimator._run.copy(), mixed_updates.copy()),
            estimator._patience(),
        )
        if not converged:
            estimator._run, mixed_updates = best
        self.mixed_updates_ = mixed_updates
        # not averaged where the last weights separate the training part
        averaged = estimator._averaged(np.full(k, not converged))
        _set_run(
            estimator,
            estimator._run,
            averaged,
            np.full(k, n_epochs),
            np.full(k, converged),
            np.full(k, stalled),
        )
        return np.full(k, converged), averaged

    def _mix_once(self, estimator, engine, settings, run):
        """One epoch of every shard from the run ``run``, mixed; sets the
        estimator's run and fitted attributes."""
        k = len(run.lift_coef)
        mixed_updates = self.mixed_updates_.copy()
        # each shard follows the norms of its examples from the run's radius
        reports, mixed = _mixed_epoch(
            engine,
            _start_weights(run, settings.n_features, k),
            np.ones(k, dtype=bool),
            settings,
            run,
            mixed_updates,
        )
        self.mixed_updates_ = mixed_updates
        converged = np.all([r.converged for r in reports], axis=0)
        stopped = np.zeros(k, dtype=bool)
        _set_run(
            estimator,
            _mixed_run(engine.finish(mixed), prior=_at_mixed(run, mixed)),
            estimator._averaged(stopped),
            np.ones(k, dtype=np.int64),
            converged,
            stopped,
        )


def _start_weights(prior, n_features, k):
    """The mixed weights (coef, lift_coef, radius, settled) that a fit
    starts from: those of the run ``prior`` it continues, or zeros; no
    radius before the first epoch, in which each shard follows its own.
    ``settled``: the epoch sees the lifted norms again, the lift of "rms"
    having moved in the epoch before (see run_epochs)."""
    if prior is None:
        return np.zeros((n_features, k)), np.zeros(k), None, False
    return prior.coef, prior.lift_coef, None, False


def _mixed_epoch(engine, mixed, active, settings, prior, mixed_updates):
    """One epoch of every shard from the mixed weights ``mixed`` (see
    _start_weights) for the problems ``active``: the shards' reports and
    the new mixed weights. Adds the mixture's updates to ``mixed_updates``,
    in place."""
    coef, lift_coef, radius, settled = mixed
    reports = engine.epoch(mixed, active, settings)
    coef, lift_coef = _mix(reports, coef, lift_coef)
    mixed_updates += _mixture(
        reports,
        [r.updates.astype(np.float64) for r in reports],
        np.zeros(len(lift_coef)),
    )
    if radius is None:
        # after the first epoch every shard has seen its examples: the radius
        # of the whole sample holds from then on, but for the rho that the
        # next epoch follows where the lift moved in this one
        radius = _pooled_radius(reports, None if prior is None else prior.radius)
        settled = settings.follow_norms
    elif settled:
        radius = radius.copy()
        radius[1] = max(report.run.radius[1] for report in reports)
        settled = False
    return reports, (coef, lift_coef, radius, settled)


def _set_run(estimator, run, averaged, n_epochs, converged, stopped):
    """Set the mixed run ``run`` and the fitted attributes of the
    perceptron, whose problems ``averaged`` answer with their averaged
    weights."""
    estimator._run = run
    estimator.coef_, estimator.intercept_ = estimator._model(averaged)
    estimator.n_updates_ = run.n_updates
    estimator._set_progress(n_epochs, converged, stopped)
    estimator.radius_ = float(np.sqrt(run.radius[0]))
