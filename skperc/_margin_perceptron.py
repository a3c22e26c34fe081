"""MarginPerceptron: Rosenblatt's perceptron and its margin variants."""

from dataclasses import dataclass, fields, replace
from numbers import Real

import numpy as np
import scipy.sparse as sp
from joblib import Parallel, delayed
from sklearn.utils.extmath import safe_sparse_dot

from ._atomic import reading_model, write_in_place
from ._base import (
    BasePerceptron,
    LinearPredictMixin,
    check_no_underflow,
    compact_rows,
    first_class,
    linear_margins,
    problem_count,
    toward_mean,
)
from ._compat import Interval, StrOptions
from ._docs import fill_doc
from ._early_stopping import (
    AUTO_SPLIT_SAMPLES,
    early_stopping_split,
    epochs_until_stalled,
    weighted_accuracy,
)
from ._margin_perceptron_fast import (
    LiftMode,
    padded_width,
    run_epochs,
    smallest_margins,
)
from ._nonfinite import check_failure, new_failure, raise_non_finite
from ._threads import thread_count

_REMEDY = "or lower eta0"
# early stopping scores its held-out rows this many at a time
_SCORED_ROWS = 1024


def held_out_scores(X, coef, intercept):
    """The decision values of the linear model ``coef``, ``intercept`` on
    the held-out rows X of early stopping: dense rows _SCORED_ROWS at a time
    (float32 rows converted a chunk at a time by astype: numpy's product of
    float32 rows and float64 weights gives the same bits 14 times slower),
    CSR rows at once, their stored values as float64 (a copy of float32
    ones, as the product would make of each chunk: 8 bytes a held-out
    value), since a slice of CSR rows costs scipy about 0.13 ms: in chunks,
    13% of a fit on the sparse text-like data of
    benchmarks/bench_defaults.py (2,100 held-out rows in 3 slices an
    epoch). Each row's value is its own: the same bits either way."""
    if sp.issparse(X):
        return safe_sparse_dot(X.astype(np.float64, copy=False), coef.T) + intercept
    scores = np.empty((X.shape[0], len(intercept)))
    # none in a shard of ParameterMixingClassifier that holds no held-out
    # row, which gen_batches refuses
    for start in range(0, X.shape[0], _SCORED_ROWS):
        chunk = slice(start, start + _SCORED_ROWS)
        scores[chunk] = (
            safe_sparse_dot(X[chunk].astype(np.float64, copy=False), coef.T) + intercept
        )
    return scores


@dataclass
class SegmentEnds:
    """The problems of a fit that separated and answer toward their mean
    (see toward_mean), with the ends of their segments on the ``features``
    whose weights may be non-zero (sorted indices among ``n_features``;
    every other weight is 0 at both ends): ``weights``, the last and
    averaged weights (coef, lift_coef, mean_coef, mean_lift, one row
    each); ``both`` and ``both_lift``, the last ones (rows ``i``) and the
    means (rows ``m + i``) each pair divided by the power of 2 of its
    largest weight, with their ``products`` and ``thresholds`` on that
    scale; ``lift`` the intercept's lift."""

    problems: np.ndarray
    lift: float
    features: np.ndarray
    n_features: int
    weights: tuple
    both: np.ndarray
    both_lift: np.ndarray
    products: list
    thresholds: np.ndarray

    def on_columns(self, columns=None):
        """``both`` on the sorted ``columns`` (None: every feature)."""
        if columns is None:
            if len(self.features) == self.n_features:
                return self.both
            full = np.zeros((len(self.both), self.n_features))
            full[:, self.features] = self.both
            return full
        at = np.minimum(np.searchsorted(self.features, columns), len(self.features) - 1)
        return np.where(self.features[at] == columns, self.both[:, at], 0.0)


def segment_products(last, mean):
    """<f, f>, <f, m> and <m, m> of two weight vectors, over the
    coordinates where either is non-zero: the same sums, to the bit,
    whichever zeros the vectors hold (a dense sample's empty columns, which
    a CSR sample's weights leave out)."""
    held = (last != 0) | (mean != 0)
    last, mean = last[held], mean[held]
    return last @ last, last @ mean, mean @ mean


def segment_margins(ends, rows, n_columns, codes, first, weight, columns=None):
    """The margins ``y f(x)`` (column ``i``) and ``y m(x)`` (column ``m + i``)
    of the ends of the segments of ``ends`` on the rows (rows_of, on the
    ``columns`` of the weights that they use) of positive weight, summed as
    in training; ``first`` is the class of problem 0."""
    both = ends.on_columns(columns)
    margins = np.empty((len(codes), 2 * len(ends.problems)))
    smallest_margins(
        *rows,
        n_columns,
        codes,
        np.tile(first + ends.problems, 2).astype(np.int32),
        weight,
        np.ascontiguousarray(both.T),
        ends.both_lift * ends.lift,
        margins,
    )
    return margins[weight > 0]


@dataclass
class LinearRun:
    """The state of a run that the compiled loop carries from call to call:
    the weights kept feature-major (so that one example updates and scores
    every class from contiguous memory) and padded to the columns the loop
    trains in place, the lazy-averaging sums, the update and step counts,
    the largest squared norm seen with the schedule's squared radius, the
    mean squared norm with its count, and the features whose weights may
    be non-zero."""

    coef: np.ndarray  # (n_features, padded_width(n_problems))
    lift_coef: np.ndarray  # (n_problems,): the weights of the lifted coordinate
    avg_coef: np.ndarray  # like coef, or no rows
    avg_lift: np.ndarray  # (n_problems,)
    n_updates: np.ndarray  # (n_problems,) int64
    n_steps: np.ndarray  # (n_problems,) int64
    radius: np.ndarray  # (4,): max ||x||^2, rho^2, mean ||x||^2, its count
    # the features of the CSR batches so far, a bitset (feature j is bit
    # j % 8 of byte j // 8) that calls mark in place (a superset stays
    # true of a model that a failed call restores); None once a dense
    # batch came (every feature)
    features: object = None

    @classmethod
    def start(cls, n_features, n_problems, average):
        width = padded_width(n_problems)
        return cls(
            coef=np.zeros((n_features, width)),
            lift_coef=np.zeros(n_problems),
            avg_coef=np.zeros((n_features if average else 0, width)),
            avg_lift=np.zeros(n_problems),
            n_updates=np.zeros(n_problems, dtype=np.int64),
            n_steps=np.zeros(n_problems, dtype=np.int64),
            radius=np.zeros(4),
            features=np.zeros((n_features + 7) // 8, dtype=np.uint8),
        )

    def copy(self):
        """A copy of every array of the state."""
        return LinearRun(
            **{
                name: None if value is None else value.copy()
                for name, value in vars(self).items()
            }
        )

    def last_weights(self):
        """The weights of each problem, a row each: a view of the run's,
        which the next call writes in place."""
        return self.coef[:, : len(self.lift_coef)].T

    def on(self, columns):
        """A copy of the state on the features ``columns`` (None: all), which
        the loop trains while the run stays as it was."""

        def rows(name):
            array = getattr(self, name)
            if columns is None or name not in _WEIGHTS or not len(array):
                return array.copy()
            return array[columns]

        return LinearRun(**{field.name: rows(field.name) for field in _ARRAYS})

    def block(self, columns):
        """A copy of the state of the problems ``columns`` (a range)."""
        return LinearRun(
            **{
                field.name: np.array(getattr(self, field.name)[..., columns], order="C")
                for field in _ARRAYS
                if field.name != "radius"
            },
            radius=self.radius.copy(),
        )

    @classmethod
    def join(cls, blocks):
        """The state of blocks of consecutive problems, each trained over
        the same examples (every block followed the same radius), with
        its weights padded for the loop."""
        run = cls(
            **{
                field.name: np.concatenate(
                    [getattr(block, field.name) for block in blocks], axis=-1
                )
                for field in _ARRAYS
                if field.name != "radius"
            },
            radius=blocks[0].radius,
        )
        n_problems = len(run.lift_coef)
        padding = ((0, 0), (0, padded_width(n_problems) - n_problems))
        run.coef = np.pad(run.coef, padding)
        run.avg_coef = np.pad(run.avg_coef, padding)
        return run


_ARRAYS = [field for field in fields(LinearRun) if field.name != "features"]
# the arrays of a row per feature
_WEIGHTS = ("coef", "avg_coef")


def _mark(features, columns, write):
    """Add the sorted ``columns`` to the bitset ``features`` with
    ``write(array, rows, values)``, which costs what the columns hold."""
    places, which = np.unique(columns >> 3, return_inverse=True)
    bits = np.zeros(len(places), dtype=np.uint8)
    np.bitwise_or.at(bits, which, (1 << (columns & 7)).astype(np.uint8))
    write(features, places, features[places] | bits)


def _averaging_shift(run, features, problems):
    """How far the averaged weights of the ``problems`` of ``run`` lie below
    their last ones on ``features`` (the lazy-averaging sums over the
    steps), one row each, and on the lifted coordinate: the caller
    subtracts it from the last weights it has gathered already."""
    steps = np.maximum(run.n_steps[problems], 1)
    sums = run.avg_coef[features][:, problems].T
    return sums / steps[:, None], run.avg_lift[problems] / steps


def _feature_indices(features, n_features):
    """The sorted indices of the bitset ``features`` (None: all)."""
    if features is None:
        return np.arange(n_features)
    places = np.flatnonzero(features)
    if len(places) > len(features) // 8:
        return np.flatnonzero(
            np.unpackbits(features, count=n_features, bitorder="little")
        )
    # the bits of the non-zero bytes alone, where most are zeros, as in a
    # hashed vocabulary's bitset (100,000 columns of 2**26: 19 ms against
    # 0.14 s unpacking every byte)
    bits = np.unpackbits(features[places, None], axis=1, bitorder="little")
    indices = (places[:, None] * 8 + np.arange(8))[bits.astype(bool)]
    return indices[indices < n_features]


@fill_doc
class MarginPerceptron(LinearPredictMixin, BasePerceptron):
    """Rosenblatt's perceptron and the margin perceptrons.

    The perceptron visits the examples in order, one pass per epoch, and on
    an example ``(x, y)`` with ``y * f(x) <= eta0 * beta_t`` adds
    ``eta0 * y * x`` to its weights. ``beta`` selects the threshold
    ``beta_t``: ``0`` for Rosenblatt's perceptron, a constant ``> 0`` for
    the beta-perceptron, ``"scale"`` for the R-independent perceptron and
    ``"power"`` for the infinity-perceptron of "On the Perceptron's
    Compression". Training stops after the first epoch without an update,
    when the sample is separated with every margin above its threshold.

    Read more in the :ref:`User Guide <margin_perceptron>`.

    Parameters
    ----------
    beta : float, {"scale", "power"} or ThresholdSchedule, default=0.0
        The update threshold.

        - a float ``>= 0``: a constant threshold (Algorithm 2). ``0`` is
          Rosenblatt's perceptron, at most ``(R / eps*)^2`` updates;
          ``beta > 0`` makes at most ``(2 beta + R^2) / eps*^2`` updates
          and reaches a margin of at least ``beta eps* / (2 beta + R^2)``.
        - ``"scale"``: the R-independent perceptron (Algorithm 3),
          ``beta = rho^2`` with a radius ``rho`` that doubles to ``2 ||x||``
          whenever an example is longer than ``rho``. Margin at least
          ``eps* / 3`` in at most ``9 R^2 / eps*^2`` updates; the classifier
          does not change when the inputs are scaled.
        - ``"power"``: the infinity-perceptron (Algorithm 4 with Remark 2),
          ``beta_t = rho^2 (t^alpha - (t-1)^alpha - 1) / 2`` for the
          ``t``-th update, with ``rho`` the largest norm seen. At most
          ``(R / eps*)^(2 / (2 - alpha))`` updates for a margin that
          approaches ``eps*`` as ``alpha`` approaches 2.
        - a :class:`~skperc.schedules.ThresholdSchedule`: any schedule of
          :mod:`skperc.schedules`, or a subclass of its base class.

        Here ``R`` is the largest norm of an example (with the intercept
        coordinate, see ``intercept_scaling``) and ``eps*`` the largest
        margin of a separating hyperplane through the origin.
        On a large noisy sample a margin keeps the run off the noise:
        :class:`~skperc.schedules.RelativeThreshold` ``(0.5)`` gains 2
        points of accuracy on 500,000 rows of word counts, but costs
        epochs on a small sample (see "When the data is not separable" in
        the user guide).

    {{alpha}}

    eta0 : float, default=1.0
        The learning rate: an update adds ``eta0 * y * x``. Every threshold
        is multiplied by ``eta0`` as well, so ``eta0`` scales ``coef_`` and
        ``intercept_`` but not the learned classifier.

    fit_intercept : bool, default=True
        Whether to learn an intercept. The examples are lifted to
        ``(x, s)`` with ``s = intercept_scaling`` and the perceptron runs
        on the lifted examples (footnote 1 of the paper); the weight of the
        lifted coordinate times ``s`` is ``intercept_``.

    intercept_scaling : float, "rms" or "auto", default="rms"
        The lifted coordinate ``s``, ``> 0``. ``"rms"`` is the root mean
        square of the norms ``||x||`` seen so far, ``"auto"`` the largest
        norm seen so far: either is fixed after the first epoch of
        :meth:`fit`, and a pass of :meth:`partial_fit` over chunks follows
        it as that epoch does. Both keep ``beta="scale"`` and
        ``beta="power"`` independent of the scale of the inputs. Each
        update moves the intercept by ``eta0 * s**2``, against
        ``eta0 * ||x||^2`` for the weights: with ``"rms"`` the intercept
        learns at the pace of a typical example, while with ``"auto"`` it
        takes the longest example's steps and, on data that is not
        separable, keeps swinging, which costs accuracy and epochs (see the
        user guide). ``"auto"`` follows the paper's advice for the
        theorems: a lift below ``R`` can shrink the margin of the lifted
        sample, whose inverse square the update bounds follow. Every
        theorem holds for the lifted sample whatever ``s``.
        ``intercept_scaling=1.0`` is the intercept step of scikit-learn's
        Perceptron.

    max_iter : int, default=1000
        The largest number of epochs (passes over the training data) of
        :meth:`fit`. Reaching it without an epoch free of updates, unless
        the stopping rule ended the run, raises a
        :class:`~sklearn.exceptions.ConvergenceWarning`.

    {{tol}}

    {{n_iter_no_change}}

    early_stopping : bool or "auto", default="auto"
        Whether :meth:`fit` sets aside a stratified ``validation_fraction``
        of the training data and trains on the rest, scoring after each
        epoch the weights it would answer with (see ``average``) on the
        part set aside. The run stops ``n_iter_no_change`` epochs after
        its best score (never while that score is 1: a held-out part
        classified without a mistake is no sign of noise), or at an epoch
        without updates, and answers as it
        stood at the best score; the score replaces the stopping rule on
        the training data (``tol``). A run that it ends has not separated
        its training data (``converged_=False``,
        ``stop_reason_="no_improvement"``), and the theorems of its
        threshold do not apply to it.
        ``"auto"`` turns it on for samples of more than 2,000 examples (a
        held-out part of more than 200) whose split can be made: where the
        features are many, as in word counts, a large sample is nearly
        separable, and the rule on the training data lets the run go on
        until it has nearly learned the noise, for many epochs and a worse
        answer (see :ref:`not_separable`: on 350,000 rows of 100,000 word
        counts, 0.814 test accuracy after 117 epochs, against 0.901 after
        6 with early stopping); on fewer features it changed the accuracy
        by less than a point. ``early_stopping=False`` runs such a
        sample to separation, with its theorem. Used by :meth:`fit` only;
        with ``True``, a sample too small to put every class on both sides
        of the split raises a ``ValueError`` before any training, where
        ``"auto"`` keeps the rule on the training data.

    {{validation_fraction}}

    {{shuffle}}

    {{random_state}}

    {{average_auto}}

    {{class_weight}}

    {{warm_start}}

    n_jobs : int, default=None
        The number of threads training the one-vs-rest problems of a
        multiclass fit, each thread a block of problems in its own pass
        over the data.
        {{n_jobs_count}}
        The result does not depend on ``n_jobs``.

    {{verbose}}

    {{record_updates}}

    Attributes
    ----------
    {{classes_}}

    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
        The weights of the decision function, in float64. Where every
        problem answers with its last weights (see ``average``), a view of
        the weights of the run. The next :meth:`partial_fit` or
        warm-started :meth:`fit` on a sparse batch that holds some of the
        features only updates it in place, on those features: such a call
        costs what its batch holds, not ``n_features * n_classes`` (copy
        ``coef_`` to keep it). A call on a dense batch, or on one that holds
        every feature, trains a copy, which becomes the new ``coef_``.

    intercept_ : ndarray of shape (1,) or (n_classes,)
        The intercepts of the decision function (zeros when
        ``fit_intercept=False``).

    n_iter_ : int
        The number of epochs of the last call to :meth:`fit` or
        :meth:`partial_fit`, the largest over the one-vs-rest problems.

    {{n_updates_}}

    margin_ : ndarray of shape (1,) or (n_classes,)
        The geometric margin of each binary problem on the training data of
        the last call: the smallest ``y * f(x) / ||coef||`` over the
        examples of positive weight. It is negative when that sample is not
        separated, and 0 when ``coef`` is zero.

    radius_ : float
        The largest norm ``||x||`` of a training example seen so far,
        without the intercept coordinate.

    {{converged_}}

    {{stop_reason_}}

    {{validation_scores_}}

    {{updates_}}

    {{n_features_in_}}

    See Also
    --------
    sklearn.linear_model.Perceptron : Rosenblatt's perceptron, trained one
        pass per class.
    sklearn.linear_model.SGDClassifier : Linear models trained by stochastic
        gradient descent; ``loss="hinge"`` is close to ``beta=1``.
    skperc.schedules : The thresholds, and the base class for new ones.

    Notes
    -----
    {{stopping_notes}}

    Binary problems label ``classes_[1]`` as ``+1``; a multiclass problem is
    one-vs-rest, with every class trained in the same pass over the data:
    each example is read once per epoch and updates every class whose
    threshold it meets. A class stops once it has an epoch without updates,
    so its weights are those it would reach trained alone.

    Each decision value is summed in double precision in an order fixed by
    the feature indices, so dense and sparse input, and every ``n_jobs``,
    give the same weights to the last bit. On float64 input the sums run in
    feature order: with ``beta=0``, ``eta0=1``, ``shuffle=False`` and either
    ``fit_intercept=False`` or ``intercept_scaling=1.0``, the weights and
    intercepts are those of :class:`sklearn.linear_model.Perceptron` with
    ``penalty=None``, ``tol=None`` and the same options on dense input, to
    the last bit: sample weights too, and class weights on two classes.
    (With more classes, scikit-learn's class weights weigh only the
    positives of each one-vs-rest problem, its negatives weighing 1, where
    here an example has its class's weight in every problem, as a sample
    weight would.) float32 input is used without a copy and gives the
    float64 result to rounding.

    A sample weight multiplies the update of its example; an example of
    weight 0 is skipped. :meth:`predict` gives ``classes_[1]`` on a decision
    value of exactly 0 (``sign(0) = +1``, as in the papers).

    Inputs of huge norm or a large ``eta0`` can overflow the weights, the
    decision values, the squared radius or the threshold (``beta="power"``
    grows with every update). The compiled loop checks each value where it
    changes and stops at the first that is not finite with a
    ``ValueError`` naming it and the remedy: scale the input (for example
    with :class:`~sklearn.preprocessing.StandardScaler`) or lower ``eta0``.
    A :meth:`partial_fit` call stopped so leaves the model as it was.
    Input whose largest absolute value is below about ``1.5e-154``, whose
    every product underflows, is refused before any work, with the remedy:
    multiply it by a power of 2, which changes no classifier of the
    scale-free thresholds. A decision value beyond the float range (inf,
    or NaN from ``inf - inf``) on huge input makes
    :meth:`decision_function` and :meth:`predict` raise the same error
    rather than return it or a class from it.

    The decision values are margins, not probabilities, and the perceptron
    has no ``predict_proba``: for probabilities, wrap it in
    :class:`~sklearn.calibration.CalibratedClassifierCV`, as for
    :class:`~sklearn.linear_model.Perceptron` (see :ref:`probabilities`).

    References
    ----------
    .. [1] F. Rosenblatt, "The perceptron: a probabilistic model for
       information storage and organization in the brain", Psychological
       Review 65(6), 1958.
    .. [2] A. B. J. Novikoff, "On convergence proofs for perceptrons",
       Symposium on the Mathematical Theory of Automata, 1962.
    .. [3] S. Moran, I. Nachum, I. Panasoff and A. Yehudayoff, "On the
       Perceptron's Compression", Computing with Foresight and Industry
       (CiE 2020), Lecture Notes in Computer Science 12098, Springer, 2020,
       Section 2.
    .. [4] Y. Freund and R. E. Schapire, "Large margin classification using
       the perceptron algorithm", Machine Learning 37(3), 277-296, 1999.

    Examples
    --------
    On a separable sample, the R-independent perceptron stops with a margin
    at least a third of the best one, well above the plain perceptron's:

    >>> from sklearn.datasets import make_blobs
    >>> from skperc import MarginPerceptron
    >>> X, y = make_blobs(n_samples=100, centers=[[0, 4], [4, 0]], random_state=0)
    >>> clf = MarginPerceptron(beta="scale", random_state=0).fit(X, y)
    >>> clf.converged_, clf.score(X, y)
    (True, 1.0)
    >>> plain = MarginPerceptron(beta=0.0, random_state=0).fit(X, y)
    >>> bool(clf.margin_[0] > plain.margin_[0])
    True
    """

    _parameter_constraints: dict = {
        **BasePerceptron._parameter_constraints,
        "eta0": [Interval(Real, 0, None, closed="neither")],
        "fit_intercept": ["boolean"],
        "intercept_scaling": [
            Interval(Real, 0, None, closed="neither"),
            StrOptions({"auto", "rms"}),
        ],
        "early_stopping": ["boolean", StrOptions({"auto"})],
        "validation_fraction": [Interval(Real, 0, 1, closed="neither")],
    }

    def __init__(
        self,
        *,
        beta=0.0,
        alpha=1.3,
        eta0=1.0,
        fit_intercept=True,
        intercept_scaling="rms",
        max_iter=1000,
        tol=0.01,
        n_iter_no_change=5,
        early_stopping="auto",
        validation_fraction=0.1,
        shuffle=True,
        random_state=None,
        average="auto",
        class_weight=None,
        warm_start=False,
        n_jobs=None,
        verbose=0,
        record_updates=False,
    ):
        self.beta = beta
        self.alpha = alpha
        self.eta0 = eta0
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.max_iter = max_iter
        self.tol = tol
        self.n_iter_no_change = n_iter_no_change
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.shuffle = shuffle
        self.random_state = random_state
        self.average = average
        self.class_weight = class_weight
        self.warm_start = warm_start
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.record_updates = record_updates

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    def _validation(self):
        return dict(accept_sparse="csr", dtype=[np.float64, np.float32], order="C")

    def _check_input(self, X, warm):
        # tiny values continue a run of normal scale without harm: their
        # products with its weights do not underflow
        if warm and self._run.radius[0] > 0:
            return X
        return check_no_underflow(X, "the squared norms and decision values")

    def _start_run(self, classes, X):
        """Zero weights and counters for a new run."""
        self.classes_ = classes
        self._run = LinearRun.start(
            X.shape[1], problem_count(classes), bool(self.average)
        )
        self.n_updates_ = self._run.n_updates

    def _lift(self, radius):
        """The lifted coordinate's mode and value s for a run whose state
        has ``radius`` (s = 0 without intercept)."""
        if not self.fit_intercept:
            return LiftMode.NO_LIFT, 0.0
        if self.intercept_scaling == "auto":
            return LiftMode.AUTO_LIFT, float(np.sqrt(radius[0]))
        if self.intercept_scaling == "rms":
            return LiftMode.RMS_LIFT, float(np.sqrt(radius[2]))
        return LiftMode.FIXED_LIFT, float(self.intercept_scaling)

    def __getstate__(self):
        # pickle writes the arrays after this returns, while a partial_fit
        # in another thread may write the run's weights in place: a pickle
        # holds a copy of the run, made under the read lock, so that it
        # holds one model. The state is a dict of its own: object's
        # __getstate__ gives the estimator's __dict__ itself, into which the
        # copy would go as the run that the next partial_fit writes.
        with reading_model(self):
            state = dict(super().__getstate__())
            if "_run" in state:
                run, coef = state["_run"], state.get("coef_")
                # last weights are a view of the run's: __setstate__ makes
                # the same view of the copy, whose layout gives the same
                # decision values to the last bit (a C-ordered copy of it
                # sums in another order in BLAS)
                if coef is not None and np.may_share_memory(coef, run.coef):
                    del state["coef_"]
                state["_run"] = run.copy()
        return state

    def __setstate__(self, state):
        super().__setstate__(state)
        if "_run" in state and "coef_" not in state:
            self.coef_ = self._run.last_weights()

    def _train(self, X, codes, weight, schedule, max_iter, stop_when_separated):
        """Run the compiled loop on a batch (codes: the indices of y in
        classes_) and set the fitted attributes."""
        self.validation_scores_ = self.best_validation_score_ = None
        validation = self._validation_part(codes) if stop_when_separated else None
        if validation is not None:
            return self._train_validated(X, codes, weight, schedule, validation)
        rows, columns = compact_rows(X)
        progress = self._epochs(
            rows,
            X.shape[1],
            columns,
            codes,
            weight,
            schedule,
            self._control(max_iter, stop_when_separated),
            follow_norms=not (stop_when_separated and self._run.n_steps.any()),
        )
        self.updates_ = progress[3]
        return self._set_fitted(
            X,
            (rows, columns),
            codes,
            weight,
            progress[:3],
            self._averaged(progress[2]),
            schedule if stop_when_separated else None,
        )

    def _epochs(
        self,
        rows,
        n_features,
        columns,
        codes,
        weight,
        schedule,
        control,
        follow_norms,
        order=None,
        seen=False,
        settled=False,
    ):
        """Epochs of the compiled loop on the compact rows of a batch (codes:
        the indices of y in classes_), which then become the run's; (epochs
        of each problem, whether each converged, whether the stopping rule
        ended each, the recorded updates or None) and, with ``order`` (the
        order of the visits, which the shuffle continues from), the
        shuffle's state after the call.

        The loop trains a copy of the weights of the features the batch
        holds (all of them for dense X) and its renumbered rows, so that a
        call costs what its batch holds, not n_features x n_classes; the
        copy then replaces those weights in the run, through
        write_in_place, and a call that fails leaves the model as it was.
        A run that fit continues (warm_start, or the epochs of early
        stopping) revisits examples the lift has seen (``follow_norms``
        False); a new run and each partial_fit add theirs. ``seen``: every
        row has been seen by an earlier call of the run, whose radius holds;
        ``settled``: the call before followed the norms, so that the lift
        of "rms" moved since the radius saw the rows (see run_epochs).
        """
        n_columns = n_features if columns is None else len(columns)
        mode, value = self._lift(self._run.radius)
        work = self._run.on(columns)
        problems = np.arange(len(work.lift_coef))
        blocks = np.array_split(problems, min(thread_count(self.n_jobs), len(problems)))
        stop = np.zeros(1, dtype=np.uint8)
        # Every block visits the examples in the same order; the first
        # continues the caller's in place.
        orders = [order] + [None if order is None else order.copy() for _ in blocks]

        def train_block(i, columns):
            # one block trains the work copy itself, several a copy each
            block = (
                work
                if len(blocks) == 1
                else work.block(slice(columns[0], columns[-1] + 1))
            )
            failure = new_failure()
            progress = run_epochs(
                *rows,
                n_columns,
                codes,
                first_class(self.classes_) + columns[0],
                weight,
                block,
                schedule,
                float(self.eta0),
                dict(
                    mode=mode,
                    value=value,
                    follow=follow_norms,
                    seen=seen,
                    settled=settled,
                ),
                control,
                stop,
                failure,
                order=orders[i],
            )
            return block, progress, failure

        try:
            if len(blocks) == 1:
                # joblib took 28 us of a partial_fit on 100 rows for no thread
                results = [train_block(0, blocks[0])]
            else:
                # Threads share X; a process backend set by the caller (loky,
                # dask) would send each block its own copy.
                results = Parallel(n_jobs=len(blocks), require="sharedmem")(
                    delayed(train_block)(i, columns) for i, columns in enumerate(blocks)
                )
        finally:
            # an interrupt ends every block still running
            stop[0] = 1
        for _, _, failure in results:
            check_failure(failure, _REMEDY)
        if len(blocks) > 1:
            work = LinearRun.join([block for block, _, _ in results])
        self._commit(work, columns)
        progress = tuple(
            np.concatenate([progress[i] for _, progress, _ in results])
            for i in range(3)
        ) + (
            self._recorded(
                [
                    (progress[3], block[0])
                    for (_, progress, _), block in zip(results, blocks, strict=True)
                ]
            ),
        )
        if order is None:
            return progress
        return progress + (results[0][1][4]["seed"],)

    def _validation_part(self, codes):
        """The validation part of a fit with early stopping on examples of
        class indices ``codes`` (sorted indices), or None for the rule on
        the training data."""
        split = early_stopping_split(
            self.early_stopping,
            len(codes) > AUTO_SPLIT_SAMPLES,
            codes,
            self.validation_fraction,
            self.random_state,
        )
        return None if split is None else split[1]

    def _train_validated(self, X, codes, weight, schedule, validation):
        """fit with early stopping: the epochs on a stratified training part
        of X, one call of the loop each, scored on the validation part
        after each; the run as it stood at the best score unless the last
        epoch separated the training part. The loop runs on the whole of X,
        the held-out examples of weight 0, which it skips (they change no
        norm, visit or update), so that the training part is not copied:
        the run is, bit for bit, the plain run of as many epochs with those
        weights."""
        trained = weight.copy()
        trained[validation] = 0.0
        seed = self._run_seed()
        # the held-out tenth of X, scored after every epoch (the training
        # part is not copied)
        X_val = X[validation]
        rows, columns = compact_rows(X)
        order = np.arange(X.shape[0], dtype=np.intp)
        k = len(self._run.lift_coef)
        follow_norms = not self._run.n_steps.any()
        recorded = []

        def one_epoch(epoch):
            nonlocal seed
            control = self._control(1, True, seed=seed, first_epoch=epoch, rule=False)
            *progress, seed = self._epochs(
                rows,
                X.shape[1],
                columns,
                codes,
                trained,
                schedule,
                control,
                follow_norms=follow_norms and epoch == 0,
                order=order,
                seen=epoch > 0,
                settled=follow_norms and epoch == 1,
            )
            recorded.append(progress[3])
            return progress[1].all()

        def answered(stopped=True):
            return self._averaged(np.full(k, stopped))

        def score():
            scores = held_out_scores(X_val, *self._model(answered()))
            return weighted_accuracy(scores, codes[validation], weight[validation])

        n_epochs, converged, stalled, best = epochs_until_stalled(
            self,
            one_epoch,
            score,
            lambda: (self._run.copy(), len(recorded)),
            self._patience(),
        )
        if converged:
            # not averaged: the last weights separate the training part (and
            # _set_fitted moves them toward the mean as far as keeps its margin)
            averaged = answered(stopped=False)
        else:
            self._run, n_recorded = best
            recorded = recorded[:n_recorded]
            averaged = answered()
        self.updates_ = None
        if self.record_updates:
            # in the order of a run of these epochs in one call
            updates = np.concatenate(recorded)
            self.updates_ = updates[np.argsort(updates[:, 2], kind="stable")]
        return self._set_fitted(
            X,
            (rows, columns),
            codes,
            trained,
            (np.full(k, n_epochs), np.full(k, converged), np.full(k, stalled)),
            averaged,
            schedule,
        )

    def _set_fitted(self, X, compact, codes, weight, progress, averaged, schedule=None):
        """The fitted attributes after a call on the batch X (``compact``:
        its compact rows), whose (epochs, converged, stopped) of each
        problem are ``progress``, answering with the averaged weights for
        the problems ``averaged``; with the ``schedule`` of a fit, the
        problems that separated answer as toward_mean says under
        ``"auto"``."""
        self.coef_, self.intercept_ = self._model(averaged, compact[1])
        thresholds = self._separated_thresholds(
            schedule, progress[1], averaged, float(self.eta0)
        )
        if np.isfinite(thresholds).any():
            self._toward_mean(X, compact, codes, weight, thresholds)
        self.n_updates_ = self._run.n_updates
        self._set_progress(*progress)
        self.radius_ = float(np.sqrt(self._run.radius[0]))
        self.margin_ = linear_margins(
            X,
            codes,
            first_class(self.classes_),
            weight,
            self.coef_,
            self.intercept_,
            features=self._run.features,
            compact=compact,
        )
        return self

    def _toward_mean(self, X, compact, codes, weight, thresholds):
        """coef_ and intercept_ of the problems of a finite threshold moved
        toward their averaged weights as toward_mean says, in the lifted
        space of the theorems: the weights ``(w, l)`` of the examples
        ``(x, s)``, whose intercept is ``l s``."""
        ends = self._segment_ends(thresholds)
        rows, columns = compact
        margins = segment_margins(
            ends,
            rows,
            X.shape[1] if columns is None else len(columns),
            codes,
            first_class(self.classes_),
            weight,
            columns,
        )
        m = len(ends.problems)
        self._move_toward_mean(
            ends, [(margins[:, i], margins[:, m + i]) for i in range(m)]
        )

    def _segment_ends(self, thresholds):
        """The last and the averaged weights of the problems of a finite
        threshold, the ends of their segments (see SegmentEnds), on the
        features of the run: no array of every feature is made, where a
        hashed vocabulary has millions of them."""
        problems = np.flatnonzero(np.isfinite(thresholds))
        run = self._run
        features = _feature_indices(run.features, len(run.coef))
        lift = self._lift(run.radius)[1]
        coef = run.coef[features][:, problems].T
        lift_coef = run.lift_coef[problems]
        with np.errstate(over="ignore", invalid="ignore"):
            shift, lift_shift = _averaging_shift(run, features, problems)
            mean_coef, mean_lift = coef - shift, lift_coef - lift_shift
        if not np.isfinite(coef).all():
            raise_non_finite("the weights", "at the end of the run", _REMEDY)
        if not (np.isfinite(mean_coef).all() and np.isfinite(mean_lift).all()):
            raise_non_finite("the averaged weights", "at the end of the run", _REMEDY)
        # Each pair divided by the power of 2 of its largest weight: an exact
        # scaling, which keeps the margins and the squared norms finite.
        largest = np.maximum(
            np.abs(np.column_stack([coef, lift_coef])).max(axis=1, initial=0.0),
            np.abs(np.column_stack([mean_coef, mean_lift])).max(axis=1, initial=0.0),
        )
        size = np.ldexp(1.0, -np.frexp(np.where(largest > 0, largest, 1.0))[1])
        both = np.vstack([coef, mean_coef]) * np.tile(size, 2)[:, None]
        both_lift = np.concatenate([lift_coef, mean_lift]) * np.tile(size, 2)
        m = len(problems)
        products = [
            segment_products(*(np.append(both[j], both_lift[j]) for j in (i, m + i)))
            for i in range(m)
        ]
        return SegmentEnds(
            problems,
            lift,
            features,
            len(run.coef),
            (coef, lift_coef, mean_coef, mean_lift),
            both,
            both_lift,
            products,
            thresholds[problems] * size,
        )

    def _move_toward_mean(self, ends, margins):
        """coef_ and intercept_ of the problems of ``ends`` moved toward
        their averaged weights, given the margins ``(y f(x), y m(x))`` of
        each on the examples of positive weight (at least all of those
        within its binding_margin)."""
        coef_, intercept = self.coef_, self.intercept_.copy()
        # the last weights are a view of the run, which goes on: the moved
        # ones go to an array of their own, written on the features alone
        # (on millions of hashed columns, a copy of every weight cost more
        # than the fit)
        shared = np.may_share_memory(coef_, self._run.coef)
        coef, lift_coef, mean_coef, mean_lift = ends.weights
        for i, k in enumerate(ends.problems):
            step, scale = toward_mean(ends.products[i], *margins[i], ends.thresholds[i])
            if self.verbose > 0:
                print(
                    f"-- Problem {k}: the answer is {step:.3g} of the way from "
                    "its last weights to their mean"
                )
            if step > 0:
                if shared:
                    last = coef_
                    coef_ = np.zeros(last.shape)
                    coef_[:, ends.features] = last[:, ends.features]
                    shared = False
                # 0 at both ends off the features, so 0 in coef_ already
                coef_[k, ends.features] = scale * (
                    (1 - step) * coef[i] + step * mean_coef[i]
                )
                intercept[k] = ends.lift * (
                    scale * ((1 - step) * lift_coef[i] + step * mean_lift[i])
                )
        self.coef_, self.intercept_ = coef_, intercept

    @staticmethod
    def _recorded(blocks):
        """updates_ from the records of the blocks of problems, each with
        its first problem: the problems one after another, each in the
        order of its updates, whatever the number of blocks."""
        if blocks[0][0] is None:
            return None
        updates = []
        for record, first in blocks:
            record[:, 2] += first
            updates.append(record)
        updates = np.concatenate(updates)
        return updates[np.argsort(updates[:, 2], kind="stable")]

    def _commit(self, work, columns):
        """Make the trained copy ``work`` of the run on the features
        ``columns`` (None: all) the run."""
        run = self._run
        if columns is None:
            # a copy of every weight: it becomes the run
            self._run = replace(work, features=None)
            return
        coef, avg_coef, features = run.coef, run.avg_coef, run.features
        write = write_in_place
        if not all(a is None or a.flags.writeable for a in (coef, avg_coef, features)):
            # a model loaded read-only (joblib's mmap_mode="r") goes on in
            # a copy of its own, which no published model shares
            coef, avg_coef = coef.copy(), avg_coef.copy()
            features = None if features is None else features.copy()
            write = np.ndarray.__setitem__
        write(coef, columns, work.coef)
        if len(avg_coef):
            write(avg_coef, columns, work.avg_coef)
        if features is not None:
            _mark(features, columns, write)
        self._run = replace(
            work,
            coef=coef,
            avg_coef=avg_coef,
            features=features,
        )

    def _model(self, averaged, columns=None):
        """coef_ and intercept_ of the run: the averaged weights for the
        problems ``averaged``, the last ones for the others.

        Without averaging coef_ is a view of the run's weights, which the
        next call updates in place; only the features ``columns`` that the
        call trained (None: all) are checked then, the others being as an
        earlier call left them."""
        run = self._run
        n_problems = len(run.lift_coef)
        coef = run.last_weights()
        lift_coef = run.lift_coef.copy()
        with np.errstate(over="ignore", invalid="ignore"):
            if averaged.any():
                features = _feature_indices(run.features, len(run.coef))
                # zero outside the features of the run
                coef = np.zeros(coef.shape)
                coef[:, features] = run.coef[features, :n_problems].T
                problems = np.flatnonzero(averaged)
                shift, lift_shift = _averaging_shift(run, features, problems)
                coef[np.ix_(problems, features)] -= shift
                lift_coef[problems] -= lift_shift
            intercept = lift_coef * self._lift(run.radius)[1]
        checked = (
            coef
            if averaged.any() or columns is None
            else run.coef[columns, :n_problems]
        )
        if not (np.isfinite(checked).all() and np.isfinite(intercept).all()):
            raise_non_finite(
                "the averaged weights" if averaged.any() else "the weights",
                "at the end of the run",
                _REMEDY,
            )
        return coef, intercept
