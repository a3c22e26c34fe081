"""What the classifiers share: labels, predictions from decision values, the
linear decision function, and the fit sequence of the two perceptrons."""

import functools
import warnings
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn import config_context
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state, compute_class_weight, gen_batches
from sklearn.utils.extmath import safe_sparse_dot
from sklearn.utils.multiclass import check_classification_targets, unique_labels
from sklearn.utils.validation import check_is_fitted, validate_data

from ._atomic import atomic_fit, consistent_read
from ._compat import (
    Interval,
    StrOptions,
    _check_sample_weight,
    _fit_context,
    get_chunk_n_rows,
    with_unique,
)
from ._doc_link import DocLinkMixin
from ._docs import fill_doc
from ._margin_perceptron_fast import (
    SUM_LANES,
    check_rows,
    row_moments,
    scaled_norms,
    smallest_margins,
    used_columns,
)
from ._nonfinite import raise_non_finite
from .schedules import PowerThreshold, ThresholdSchedule, checked_schedule

# ----------------------------------------------------------------------------
# Labels


def check_class_count(estimator, classes):
    if len(classes) < 2:
        raise ValueError(
            f"{type(estimator).__name__} needs samples of at least 2 classes; "
            f"got 1 class: {classes.tolist()}."
        )


def checked_classes(y, distinct=np.unique):
    """The sorted classes of ``y``, after scikit-learn's check that ``y``
    holds class labels (``check_classification_targets``), with ``y``
    sorted once for both: ``distinct(y)`` gives its sorted distinct
    labels."""
    if y.dtype == object:
        # the check first: its error names labels of mixed types, which
        # np.unique would fail to sort
        check_classification_targets(y)
        return np.unique(y)
    classes = distinct(y)
    check_classification_targets(with_unique(y, classes))
    return classes


def label_codes(classes, y):
    """The index of each label of ``y`` in the sorted ``classes``, which
    hold them all, as int32."""
    return np.searchsorted(classes, y).astype(np.int32)


def encode_labels(y):
    """The sorted classes of ``y``, checked as by ``checked_classes``, and
    the index of each label in them, as int32."""
    # np.unique's inverse would hold five arrays of len(y) at once.
    classes = checked_classes(y)
    return classes, label_codes(classes, y)


# dtype kinds by what their labels compare with; objects compare with both
_LABEL_KINDS = dict.fromkeys("US", "string") | dict.fromkeys("biuf", "number")


def equal_labels(a, b):
    """``a == b`` for two arrays of labels, False throughout where one holds
    strings and the other numbers, which NumPy before 1.25 compared with a
    FutureWarning ("elementwise comparison failed") and a scalar."""
    kinds = {_LABEL_KINDS.get(a.dtype.kind), _LABEL_KINDS.get(b.dtype.kind)}
    if kinds == {"string", "number"}:
        return np.zeros(np.broadcast_shapes(a.shape, b.shape), dtype=bool)
    return a == b


def same_classes(a, b):
    """Whether two arrays of classes are the same, label for label."""
    a, b = np.asarray(a), np.asarray(b)
    return a.shape == b.shape and bool(equal_labels(a, b).all())


def check_continued_classes(estimator, classes):
    """A run that warm_start continues takes the classes of the previous
    one."""
    if not same_classes(classes, estimator.classes_):
        raise ValueError(
            "warm_start=True continues the previous run, which needs the "
            f"same classes {estimator.classes_.tolist()}; got {classes.tolist()}."
        )


def fit_labels(estimator, y, continuing):
    """The classes of a fit and the index of each label in them, as
    encode_labels gives them: at least two, the previous run's when
    warm_start continues it."""
    classes, codes = encode_labels(y)
    if continuing:
        check_continued_classes(estimator, classes)
    check_class_count(estimator, classes)
    return classes, codes


def class_codes(classes, y, named):
    """The index in the sorted ``classes`` of each label of ``y``, which must
    all be among them; ``named`` names the classes in the error."""
    codes = np.searchsorted(classes, y)
    known = codes < len(classes)
    known[known] = equal_labels(classes[codes[known]], y[known])
    if not known.all():
        raise ValueError(
            f"y holds labels {np.unique(y[~known]).tolist()} that are not in {named}."
        )
    return codes.astype(np.int32)


def partial_fit_codes(estimator, y, classes, first_call):
    """The classes of a partial_fit run and the index of each y in them.

    ``classes`` is required on the first call and must not change after it;
    every label of ``y`` must be one of them.
    """
    run_classes = partial_fit_classes(estimator, classes, first_call)
    codes = class_codes(
        run_classes,
        y,
        f"classes {run_classes.tolist()}, given on the first call to partial_fit",
    )
    return run_classes, codes


def checked_partial_fit_codes(estimator, y, classes, first_call):
    """partial_fit_codes, after scikit-learn's check that y holds class
    labels where it is needed."""
    if first_call or y.dtype == object:
        # Later calls take the labels of the first call's classes alone,
        # which unique_labels checked there; the check's fixed cost was a
        # fifth of a call on 100 examples. Labels of Python objects are still
        # checked: class_codes sorts them, which fails on types without an
        # order.
        check_classification_targets(y)
    return partial_fit_codes(estimator, y, classes, first_call)


def partial_fit_classes(estimator, classes, first_call):
    """The classes of a partial_fit run: ``classes``, required on the first
    call and the same on every later one."""
    if first_call:
        if classes is None:
            raise ValueError("classes must be passed on the first call to partial_fit.")
        run_classes = unique_labels(classes)
        check_class_count(estimator, run_classes)
    else:
        run_classes = estimator.classes_
        # the classes of the first call, as a stream passes them at every
        # call, need no check of their labels
        if classes is not None and not (
            same_classes(classes, run_classes)
            or same_classes(unique_labels(classes), run_classes)
        ):
            raise ValueError(
                f"classes={unique_labels(classes).tolist()} is not the same "
                f"as on the first call to partial_fit, {run_classes.tolist()}."
            )
    return run_classes


def problem_count(classes):
    """One binary problem for two classes, else one per class."""
    return 1 if len(classes) == 2 else len(classes)


def first_class(classes):
    """The code of the positive class of problem 0: classes_[1] of a binary
    problem is +1."""
    return 1 if len(classes) == 2 else 0


def _draw_seed(rng):
    """A seed of the compiled loop's shuffling, drawn from ``rng``."""
    return int(rng.randint(np.iinfo(np.int64).max, dtype=np.int64))


@functools.lru_cache(maxsize=256)
def _first_draw(seed):
    """_draw_seed of a new RandomState(seed), the same at every call: building
    one took 90 us of a 720 us partial_fit of MarginPerceptron on 100 rows."""
    return _draw_seed(np.random.RandomState(seed))


def check_sparse_structure(X):
    """Return X; raise ValueError first if it is a CSR matrix whose arrays
    do not describe its shape or whose indices lie outside it: SciPy builds
    such a matrix without complaint, and reading it as it is sends a loop,
    compiled or SciPy's own, out of bounds. O(nnz), on the caller's arrays
    as they are (SciPy's check_format converts them in place, in some
    versions even without its full check). A CSR X whose index arrays are
    not two native int32 or two native int64 arrays (of two types,
    big-endian, strided), or whose arrays run past its last row, comes
    back as a new matrix of its values, with both index arrays in one
    type, which the loops take."""
    if not sp.issparse(X):
        return X
    data, indices, indptr = X.data, X.indices, X.indptr
    if data.ndim != 1 or indices.ndim != 1 or indptr.ndim != 1 or not len(indptr):
        raise ValueError(
            "X is a malformed CSR matrix: its data, indices and indptr are not "
            "all 1-D, or indptr is empty."
        )
    if 0 <= indptr[-1] < len(indices):
        # values past the last row belong to no row
        data, indices = data[: indptr[-1]], indices[: indptr[-1]]
    narrow = indices.dtype == np.int32 and indptr.dtype == np.int32
    index = np.int32 if narrow else np.int64
    data = np.ascontiguousarray(data)
    indices = np.ascontiguousarray(indices, dtype=index)
    indptr = np.ascontiguousarray(indptr, dtype=index)
    # the loops' own check: the sizes of the arrays, every index in range
    check_rows(data, indices, indptr, *X.shape)
    if data is X.data and indices is X.indices and indptr is X.indptr:
        return X
    return type(X)((data, indices, indptr), shape=X.shape)


# Below this magnitude every product of two floats is subnormal or 0.
_UNDERFLOW = float(np.sqrt(np.finfo(np.float64).tiny))


def check_no_underflow(X, products):
    """Raise ValueError, before any work, when the largest absolute value of
    X is so small (below about 1.5e-154) that every product of two of its
    values underflows: ``products`` (the quantities made of them) would
    lose their digits or vanish, and training fail without a sign. O(nnz)."""
    values = X.data if sp.issparse(X) else X
    if values.size == 0:
        return X
    # a value of normal scale among the first ones settles it without a
    # pass over X, which would be serial work in a parallel fit
    if np.abs(values.flat[:1024]).max() >= _UNDERFLOW:
        return X
    largest = max(float(values.max()), -float(values.min()))
    if 0 < largest < _UNDERFLOW:
        exponent = -int(np.frexp(largest)[1])
        raise ValueError(
            f"The largest absolute value of X is {largest:.3g}, below "
            f"{_UNDERFLOW:.3g}: every product of two of its values underflows, "
            f"so that {products} would lose their digits or vanish and "
            "training would fail. Multiply X by a power of 2 first, such as "
            f"2.0**{exponent}: with beta=0, 'scale' or 'power' (and "
            "intercept_scaling='auto') the classifier learned does not change "
            "with the scale of X. StandardScaler works too."
        )
    return X


# ----------------------------------------------------------------------------
# Decision values


def batches(n, batch_size, min_batch_size=0):
    """The slices of scikit-learn's ``gen_batches(n, batch_size,
    min_batch_size=min_batch_size)``, as a list, without the validation of
    its parameters, which the callers' sizes pass: it takes some 20 us a
    call, a sixth of a one-row prediction (benchmarks/bench_latency.py).
    A single batch, a prediction's usual case, is returned without
    entering the configuration context, which takes 4 us."""
    if n <= batch_size:
        return [slice(0, n)] if n > 0 else []
    with config_context(skip_parameter_validation=True):
        return list(gen_batches(n, batch_size, min_batch_size=min_batch_size))


# Dense rows converted to float64 are converted about this many bytes at a
# time: blocks that stay in the processor's cache. Against blocks of 16,384
# rows, blocks of 1 MiB converted and scored 200,000 x 500 and 100,000 x
# 5,000 float32 rows 2.7 and 3.1 times faster, and 1,000,000 x 100 as fast
# (0.06 s); a block of all of them would hold as much as working_memory
# allows (771 MB of the last at the default 1 GB; benchmarks/bench_memory.py
# times and traces the decision function). CSR rows, whose slices cost
# scipy 0.13 ms each, are converted in blocks within working_memory.
CONVERTED_BYTES = 2**20


def converted_block_rows(X):
    """The most rows of X to convert to float64 at once (None: no bound
    but working_memory)."""
    return None if sp.issparse(X) else max(1, CONVERTED_BYTES // (8 * X.shape[1]))


def blocks_in_working_memory(n_rows, row_bytes, *, max_rows=None, min_rows=1):
    """The slices of ``n_rows`` rows in blocks of as many rows of
    ``row_bytes`` bytes of temporary memory each as fit in scikit-learn's
    ``working_memory`` (at most ``max_rows``); no block has fewer than
    ``min_rows`` rows unless all of them do."""
    block_rows = get_chunk_n_rows(row_bytes=row_bytes, max_n_rows=max_rows)
    return batches(n_rows, max(block_rows, min_rows), min_batch_size=min_rows)


def check_finite_scores(scores):
    """``scores``, checked: a decision value beyond the float range (or NaN,
    from inf - inf in a sum on huge input) raises rather than predict a
    class from it."""
    if not np.isfinite(scores).all():
        raise_non_finite(
            "a decision value",
            "on this input",
            "to the range the model was trained on",
        )
    return scores


def classes_from_scores(classes, scores):
    """The predicted classes: ``classes[1]`` where a binary decision value is
    ``>= 0`` (``sign(0) = +1``), else the class of the largest value."""
    if scores.ndim == 1:
        return classes[(scores >= 0).astype(np.intp)]
    return classes[scores.argmax(axis=1)]


class DecisionPredictMixin:
    """``predict`` from ``decision_function``, with ``sign(0) = +1``."""

    @consistent_read
    def predict(self, X):
        """Predict a class for each sample.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The data.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            ``classes_[1]`` where the binary decision value is ``>= 0``,
            else ``classes_[0]``; with several classes, the class of the
            largest decision value.
        """
        # decision_function first: it raises NotFittedError before fit
        scores = self.decision_function(X)
        return classes_from_scores(self.classes_, scores)


def linear_margins(
    X, codes, first, weight, coef, intercept, features=None, compact=None
):
    """min y f(x) / ||coef|| of each problem over the examples of positive
    weight, f summed as in training; 0 where coef is 0 or no example counts.

    ``codes`` are the indices of the labels in the classes, and example
    ``i`` is positive for problem ``c`` when ``codes[i] == first + c``.
    ``features``, where given, is a bitset (see ``scaled_norms``) that holds
    every feature whose weight may be non-zero, so that the norms read
    those weights only, and without a copy. Each row of weights
    is divided by the power of 2 of its largest weight first, which changes
    no margin and keeps the decision values and the norm finite and
    non-zero. The norm is summed in feature order (``scaled_norms``), which
    gives it the same bits whatever ``features`` is. ``compact`` is
    ``compact_rows(X)`` where the caller has it already.
    """
    coef = np.atleast_2d(np.asarray(coef, dtype=np.float64))
    scale, norms = scaled_norms(coef, features)
    rows, columns = compact_rows(X) if compact is None else compact
    used = coef if columns is None else coef[:, columns]
    smallest = smallest_margins(
        *rows,
        X.shape[1] if columns is None else len(columns),
        codes,
        (first + np.arange(len(coef))).astype(np.int32),
        weight,
        np.ascontiguousarray((used * scale[:, None]).T),
        np.ascontiguousarray(np.asarray(intercept, dtype=np.float64) * scale),
    )
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        margins = np.where(norms > 0, smallest / norms, 0.0)
    return np.where(np.isfinite(margins), margins, 0.0)


def toward_mean(products, last_margins, mean_margins, threshold):
    """How far a problem that separated answers toward the mean of its run.

    The largest ``t`` in [0, 1] (to within 2^-30) whose function
    ``f_t = (1 - t) f + t m``, scaled to the norm of the last function
    ``f``, keeps every margin ``y f(x)`` at least ``threshold``, the
    threshold that the last epoch passed; and that scale. ``products`` are
    ``<f, f>``, ``<f, m>`` and ``<m, m>``, the margins ``y f(x)`` and
    ``y m(x)`` on the examples of positive weight, on any common scale of
    the functions that ``threshold`` is on too.

    The theorems bound the margin of the last function by that threshold
    over its norm, and its norm by the run's updates: the function found
    keeps both facts, so it keeps their margin. The slack
    ``min y f_t(x) - threshold ||f_t|| / ||f||`` is concave in ``t`` (a
    minimum of linear functions less a norm), so its feasible ``t`` form
    an interval from 0, found by bisection.
    """
    last_norm = _segment_norm(products, 0.0)
    if not last_norm > 0:
        return 0.0, 1.0
    bound = threshold / last_norm
    binds = np.minimum(last_margins, mean_margins) <= binding_margin(
        products, threshold
    )
    last_margins, mean_margins = last_margins[binds], mean_margins[binds]
    rise = mean_margins - last_margins

    def feasible(t):
        return (last_margins + t * rise).min(initial=np.inf) >= bound * _segment_norm(
            products, t
        )

    if not feasible(0.0):
        return 0.0, 1.0
    low, high = 0.0, 1.0
    if feasible(high):
        low = high
    else:
        for _ in range(30):
            middle = 0.5 * (low + high)
            low, high = (middle, high) if feasible(middle) else (low, middle)
    return low, last_norm / _segment_norm(products, low)


def _segment_norm(products, t):
    """||f_t|| of toward_mean, from the products <f, f>, <f, m>, <m, m>."""
    ff, fm, mm = products
    return np.sqrt(max((1 - t) ** 2 * ff + 2 * t * (1 - t) * fm + t**2 * mm, 0.0))


def binding_margin(products, threshold):
    """The margin above which an example, at both ends of the segment of
    toward_mean, binds nowhere on it: ``||f_t||`` is convex in ``t``, so at
    most its larger end, and ``y f_t(x)`` is linear in ``t``."""
    last_norm = _segment_norm(products, 0.0)
    if not last_norm > 0:
        return -np.inf
    return threshold / last_norm * max(last_norm, _segment_norm(products, 1.0))


def compact_rows(X):
    """The rows of X for the compiled loops (see rows_of) on the columns
    they use, and those columns.

    For CSR X the columns are the sorted indices of the columns with a
    stored value, renumbered 0, 1, ... in the rows: the renumbering keeps
    the order of each row's entries, so that sums over them run in the
    same order and give the same bits, while the weights a loop reads are
    those of the columns alone; at least column 0, so that the loops have
    weights to point at. float32 sums add column j into partial sum
    j % SUM_LANES (8): for float32 X the columns come in whole runs of
    SUM_LANES from column 0, every column of each run that holds one, so
    that a column keeps its partial sum, and the bits of the dense rows
    (the runs' other columns keep their weights). The columns are None
    (all) for dense X and for CSR X that uses every column, which keeps
    its rows as they are.
    """
    data, indices, indptr = rows_of(X)
    if not sp.issparse(X):
        return (data, indices, indptr), None
    lanes = X.dtype == np.float32
    if X.shape[1] <= len(indices):
        # a mask of the columns costs less than sorting the entries
        used, n_used = used_columns(indices, X.shape[1])
        if lanes and n_used < X.shape[1]:
            used = _whole_lanes(used)
            n_used = np.count_nonzero(used)
        if n_used == X.shape[1]:
            return (data, indices, indptr), None
        columns = np.flatnonzero(used)
        # indexing keeps the indices' dtype: np.take would copy them to intp
        # first (on 11,000,000 int32 indices, 126 MB at its peak and 0.08 s,
        # against the 42 MB of the result and 0.025 s)
        renumbered = (np.cumsum(used, dtype=indices.dtype) - 1)[indices]
        return (data, renumbered, indptr), columns
    columns = np.unique(indices) if len(indices) else np.zeros(1, indices.dtype)
    if lanes:
        runs = np.unique(columns // SUM_LANES)
        columns = (runs[:, None] * SUM_LANES + np.arange(SUM_LANES)).ravel()
        columns = columns[columns < X.shape[1]].astype(indices.dtype)
    renumbered = np.searchsorted(columns, indices).astype(indices.dtype)
    return (data, renumbered, indptr), columns


def _whole_lanes(used):
    """The mask ``used`` of columns with every column of each run of
    SUM_LANES (from column 0) that holds a column it marks."""
    runs = np.zeros(-(-len(used) // SUM_LANES) * SUM_LANES, dtype=bool)
    runs[: len(used)] = used
    held = runs.reshape(-1, SUM_LANES).any(axis=1)
    return np.repeat(held, SUM_LANES)[: len(used)]


def canonical(X):
    """Sparse X with sorted, unique indices: X itself when it has them,
    else a copy, since scipy sorts and sums them in place (its max and min
    included), which would change the caller's matrix."""
    if sp.issparse(X) and not X.has_canonical_format:
        X = X.copy()
        X.sum_duplicates()
    return X


def rows_of(X):
    """data, indices, indptr of the rows of X for the compiled loops.

    Dense rows come as the flat C-ordered array and empty index arrays.
    CSR rows come with sorted, unique indices (copied only when X's are
    not), so that sums run in feature order as they do for dense rows.
    """
    if not sp.issparse(X):
        empty = np.empty(0, dtype=np.int32)
        return X.reshape(-1), empty, empty
    X = canonical(X)
    index_dtype = np.result_type(X.indices.dtype, X.indptr.dtype)
    return (
        X.data,
        X.indices.astype(index_dtype, copy=False),
        X.indptr.astype(index_dtype, copy=False),
    )


def mean_moments(X):
    """The mean squared norm of the rows of X and the mean of their sums
    of entries, summed as the compiled loops sum (so dense and CSR input
    agree to the last bit), without a copy of dense X."""
    return row_moments(*rows_of(X), X.shape[0], X.shape[1])


class LinearPredictMixin(DecisionPredictMixin):
    """``decision_function`` and ``predict`` of a fitted ``coef_`` and
    ``intercept_``, one row per one-vs-rest problem, with ``sign(0) = +1``."""

    @consistent_read
    def decision_function(self, X):
        """The signed value of each one-vs-rest problem, ``coef_ x + intercept_``.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            The data.

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
            For a binary problem, positive values favour ``classes_[1]``.
        """
        check_is_fitted(self)
        X = validate_data(
            self, X, reset=False, accept_sparse="csr", dtype=[np.float64, np.float32]
        )
        X = check_sparse_structure(X)
        # an overflow raises below, naming its cause
        with np.errstate(over="ignore", invalid="ignore"):
            if X.dtype == np.float64:
                # read where they lie: a slice of CSR rows would copy them
                scores = safe_sparse_dot(X, self.coef_.T, dense_output=True)
            else:
                # float32 rows are converted a block at a time, never all of
                # X at once (see CONVERTED_BYTES), and by astype: numpy's
                # product of float32 rows and a float64 column, which gives
                # the same bits, converts 1,000,000 x 100 rows 36 times slower
                scores = np.empty((X.shape[0], self.coef_.shape[0]))
                for batch in blocks_in_working_memory(
                    X.shape[0], 8 * X.shape[1], max_rows=converted_block_rows(X)
                ):
                    scores[batch] = safe_sparse_dot(
                        X[batch].astype(np.float64), self.coef_.T, dense_output=True
                    )
            scores += self.intercept_
        check_finite_scores(scores)
        return scores.ravel() if scores.shape[1] == 1 else scores

    def _geometric_margins(self, X, codes, weight):
        """The geometric margin of each one-vs-rest problem on the rows of X
        of positive ``weight``, labelled by ``codes`` (indices in
        ``classes_``); used by :func:`skperc.metrics.margin`."""
        return linear_margins(
            X,
            codes,
            first_class(self.classes_),
            weight,
            self.coef_,
            np.broadcast_to(self.intercept_, len(self.coef_)),
        )


# ----------------------------------------------------------------------------
# The perceptrons


def warn_not_converged(estimator, schedule):
    """The ConvergenceWarning of a fit that used up max_iter epochs under
    the threshold ``schedule`` (as checked_schedule resolved it)."""
    if estimator.tol is None:
        remedy = (
            "Consider increasing max_iter, or tol=0.01 to stop a run that "
            "cannot separate the data with a margin above 1% of its radius."
        )
    elif isinstance(schedule, PowerThreshold):
        # The stopping rule's proof needs updates that cancel; under a
        # threshold that grows with the update count every example keeps
        # updating and the weights keep growing. In 5-fold cross-validation
        # on breast cancer, digits, iris and make_classification(1000,
        # flip_y=0.05) the rule ended none of the 1000-epoch runs of alpha
        # 1.5 or 1.9, where it ended every run of beta=0.
        remedy = (
            "beta='power' raises the threshold with every update: on data "
            "that no hyperplane separates, every epoch makes updates and the "
            "stopping rule seldom ends the run. Choose a constant beta for "
            "such data, or increase max_iter if it is separable."
        )
    else:
        remedy = "Consider increasing max_iter."
    warnings.warn(
        f"{type(estimator).__name__} reached max_iter={estimator.max_iter} "
        "epochs with updates in the last one: the training data may not be "
        f"separable with the margin the threshold asks for. {remedy}",
        ConvergenceWarning,
        # point at the caller of fit, past fit and its two wrappers
        stacklevel=5,
    )


class ScheduleParamsMixin:
    """``set_params`` that names the remedy when ``beta__<name>`` is set
    while ``beta`` is a number or a string, not a schedule object."""

    def set_params(self, **params):
        """Set the parameters of this estimator.

        Parameters
        ----------
        **params : dict
            Estimator parameters, and ``beta__<name>`` for a parameter of
            a schedule object given as ``beta``.

        Returns
        -------
        self : estimator instance
            Estimator instance.
        """
        for key in params:
            parent, _, name = key.partition("__")
            if name and parent == "beta" and not hasattr(self.beta, "set_params"):
                raise ValueError(
                    f"Cannot set {key!r}: beta is {self.beta!r}, not a schedule "
                    "object. Pass a schedule of skperc.schedules as beta instead "
                    "(such as PowerThreshold(alpha=1.5) or "
                    "SublinearThreshold(c=0.3)) and then set its parameters."
                )
        return super().set_params(**params)


@fill_doc
class BasePerceptron(
    DocLinkMixin,
    ScheduleParamsMixin,
    DecisionPredictMixin,
    ClassifierMixin,
    BaseEstimator,
):
    """The fit sequence of the margin perceptrons, written once.

    A subclass implements ``_validation`` (the keyword arguments of
    ``validate_data``), ``_start_run`` (a new run for the classes),
    ``_train`` (epochs of the run on a batch, setting the fitted
    attributes) and may check its input in ``_check_input``.
    """

    _parameter_constraints: dict = {
        "beta": [
            Interval(Real, 0, None, closed="left"),
            StrOptions({"scale", "power"}),
            ThresholdSchedule,
        ],
        "alpha": [Interval(Real, 1, 2, closed="neither")],
        "max_iter": [Interval(Integral, 1, np.iinfo(np.intp).max, closed="both")],
        "tol": [Interval(Real, 0, None, closed="left"), None],
        "n_iter_no_change": [
            Interval(Integral, 1, np.iinfo(np.intp).max, closed="both")
        ],
        "shuffle": ["boolean"],
        "random_state": ["random_state"],
        "average": ["boolean", StrOptions({"auto"})],
        "class_weight": [StrOptions({"balanced"}), dict, None],
        "warm_start": ["boolean"],
        "n_jobs": [Integral, None],
        "verbose": ["verbose"],
        "record_updates": ["boolean"],
    }

    @_fit_context(prefer_skip_nested_validation=True)
    @atomic_fit
    def fit(self, X, y, sample_weight=None):
        """Train until an epoch makes no update, or for ``max_iter`` epochs.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data (the Gram matrix of the training samples for a
            precomputed kernel). float32 and C-ordered float64 arrays and
            CSR matrices are used without a copy where the estimator's
            loop reads them.

        y : array-like of shape (n_samples,)
            Target values.

        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights of the examples; each multiplies the
            update its example makes.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        schedule = checked_schedule(self.beta, self.alpha)
        warm = self.warm_start and hasattr(self, "classes_")
        # A warm start keeps the features of the run it continues.
        X, y = validate_data(self, X, y, reset=not warm, **self._validation())
        X = check_sparse_structure(X)
        X = self._check_input(X, warm)
        classes, codes = fit_labels(self, y, warm)
        weight = self._example_weights(X, y, codes, classes, sample_weight)
        refit = self._refit_start(warm, X.shape[0])
        if not warm:
            self._start_run(classes, X)
        self._train(X, codes, weight, schedule, self.max_iter, stop_when_separated=True)
        self._refit(refit, X, y, sample_weight)
        if self.verbose > 0:
            print(f"-- Stopped: {self.stop_reason_}")
        if self.stop_reason_ == "max_iter":
            warn_not_converged(self, schedule)
        return self

    @_fit_context(prefer_skip_nested_validation=True)
    @atomic_fit
    def partial_fit(self, X, y, classes=None, sample_weight=None):
        """Make one pass over a batch, continuing the same run.

        The update counts, the radius, the averages and the function
        carry over from call to call, so calls on consecutive chunks of
        the data make the model of :meth:`fit` with ``max_iter=1`` on the
        whole, both with ``shuffle=False`` (a call shuffles its batch
        otherwise). A parameter that a fit resolves from its data is
        resolved from the first call's batch: KernelPerceptron's
        ``gamma="scale"`` and ``"auto"``.

        Parameters
        ----------
        {{partial_fit_batch}}

        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights of the examples of the batch.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        if self.class_weight == "balanced":
            raise ValueError(
                "class_weight='balanced' is not supported by partial_fit: the "
                "class frequencies of a stream are not known in advance. Pass "
                "weights computed with sklearn.utils.compute_class_weight."
            )
        schedule = checked_schedule(self.beta, self.alpha)
        first_call = not hasattr(self, "classes_")
        X, y = validate_data(self, X, y, reset=first_call, **self._validation())
        X = check_sparse_structure(X)
        X = self._check_input(X, not first_call)
        run_classes, codes = checked_partial_fit_codes(self, y, classes, first_call)
        weight = self._example_weights(X, y, codes, run_classes, sample_weight)
        if first_call:
            self._start_run(run_classes, X)
        return self._train(X, codes, weight, schedule, 1, stop_when_separated=False)

    def _check_input(self, X, warm):
        """X as the subclass trains on it, or an error for input it cannot
        train on (X as it is, by default)."""
        return X

    def _refit_start(self, warm, n_samples):
        """Where a subclass fits again after the run of :meth:`fit` on
        ``n_samples`` examples (see ``_refit``), the estimator as it stands
        before that run (``warm``: the run continues the previous one); None
        by default."""
        return None

    def _refit(self, start, X, y, sample_weight):
        """After the run of :meth:`fit` on the validated batch ``X``, fit
        ``start`` (from ``_refit_start``) and answer with it, where the
        subclass does so (not by default)."""

    def _example_weights(self, X, y, codes, classes, sample_weight):
        """The weight of each example: its sample weight times its class's."""
        weight = _check_sample_weight(
            sample_weight, X, dtype=np.float64, ensure_non_negative=True
        )
        if self.class_weight is not None:
            weight = self._class_weights(classes, y=y)[codes] * weight
        return weight

    def _class_weights(self, classes, y=None, counts=None):
        """The weight of each of ``classes`` that ``class_weight`` gives:
        "balanced" from the labels ``y`` or, without them, from the
        ``counts`` of each class (compute_class_weight's formula), checked
        finite and ``>= 0``."""
        if self.class_weight == "balanced" and y is None:
            class_weight = counts.sum() / (len(classes) * counts.astype(np.float64))
        else:
            class_weight = compute_class_weight(
                self.class_weight, classes=classes, y=classes if y is None else y
            )
        if (class_weight < 0).any() or not np.isfinite(class_weight).all():
            raise ValueError(
                "class_weight must hold finite weights >= 0, as sample "
                f"weights do; got {class_weight.tolist()} for the classes "
                f"{classes.tolist()}."
            )
        return class_weight

    def _run_seed(self):
        """The seed of the compiled loop's shuffling for this call: the
        first draw of check_random_state(random_state)."""
        if isinstance(self.random_state, Integral):
            return _first_draw(int(self.random_state))
        return _draw_seed(check_random_state(self.random_state))

    def _control(
        self, max_iter, stop_when_separated, seed=None, first_epoch=0, rule=True
    ):
        """The control of the compiled loop's epochs, as its struct; the
        stopping rule runs in fit only, and not with ``rule=False`` (early
        stopping's validation score replaces it). ``seed`` continues a
        run's shuffling (a new one by default)."""
        rule = rule and stop_when_separated and self.tol is not None
        return dict(
            max_iter=max_iter,
            shuffle=self.shuffle,
            seed=self._run_seed() if seed is None else seed,
            stop_when_separated=stop_when_separated,
            verbose=self.verbose,
            tol=float(self.tol or 0.0),
            n_iter_no_change=self._patience() if rule else 0,
            record_updates=self.record_updates,
            first_epoch=first_epoch,
        )

    def _patience(self):
        """The epochs without fewer sign mistakes that the stopping rule
        waits for."""
        return self.n_iter_no_change

    def _averaged(self, stopped):
        """Which problems answer with their averaged function: every one
        with ``average=True``; with ``"auto"``, those that the stopping
        rule ended, whose last function is one guess among many."""
        if self.average == "auto":
            return stopped
        return np.full(len(stopped), bool(self.average))

    def _separated_thresholds(self, schedule, converged, averaged, scale=1.0):
        """The threshold that the next update of each problem would have had
        to pass (``scale`` times the schedule's), for the problems of a fit
        that separated and answer under ``average="auto"`` toward their
        mean (see toward_mean); NaN for the others, and for all without a
        ``schedule`` (partial_fit) or with ``tol=None`` (the papers'
        algorithms, which answer with the last function)."""
        thresholds = np.full(len(converged), np.nan)
        if schedule is None or self.average != "auto" or self.tol is None:
            return thresholds
        run = self._run
        for k in np.flatnonzero(converged & ~averaged):
            t = int(run.n_updates[k]) + 1
            radius = np.sqrt(run.radius[1])
            thresholds[k] = scale * schedule._checked_threshold(t, radius)
        return thresholds

    def _set_progress(self, n_epochs, converged, stopped):
        """n_iter_, converged_ and stop_reason_ of a call."""
        self.n_iter_ = int(n_epochs.max())
        self.converged_ = bool(converged.all())
        if self.converged_:
            self.stop_reason_ = "separated"
        elif (converged | stopped).all():
            self.stop_reason_ = "no_improvement"
        else:
            self.stop_reason_ = "max_iter"
