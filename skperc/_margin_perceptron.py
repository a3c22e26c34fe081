"""MarginPerceptron: Rosenblatt's perceptron and its margin variants."""

from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from joblib import Parallel, delayed, effective_n_jobs
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.utils import check_random_state, compute_class_weight
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import (
    _check_sample_weight,
    validate_data,
)

from ._classes import (
    check_class_count,
    partial_fit_codes,
    warn_not_converged,
)
from ._linear import LinearPredictMixin
from ._margin_perceptron_fast import run_epochs, smallest_margins
from ._nonfinite import check_failure, new_failure, raise_non_finite
from .schedules import ThresholdSchedule, _compiled_threshold

# The codes of _margin_perceptron_fast.pyx.
_NO_LIFT, _FIXED_LIFT, _AUTO_LIFT = 0, 1, 2

_VALIDATION = dict(accept_sparse="csr", dtype=[np.float64, np.float32], order="C")

_REMEDY = "or lower eta0"

# The state of a run that the compiled loop updates: the attribute of the
# estimator and the name of the loop's argument.
_RUN_STATE = {
    "_coef": "coef",
    "_lift_coef": "lift_coef",
    "_avg_coef": "avg_coef",
    "_avg_lift": "avg_lift",
    "n_updates_": "n_updates",
    "_n_steps": "n_steps",
}


class MarginPerceptron(LinearPredictMixin, ClassifierMixin, BaseEstimator):
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

    alpha : float, default=1.3
        The exponent of ``beta="power"``, in the open interval (1, 2); it
        is not used by the other thresholds. Values near 2 give margins
        near the optimum but need many more epochs.

    eta0 : float, default=1.0
        The learning rate: an update adds ``eta0 * y * x``. Every threshold
        is multiplied by ``eta0`` as well, so ``eta0`` scales ``coef_`` and
        ``intercept_`` but not the learned classifier.

    fit_intercept : bool, default=True
        Whether to learn an intercept. The examples are lifted to
        ``(x, s)`` with ``s = intercept_scaling`` and the perceptron runs
        on the lifted examples (footnote 1 of the paper); the weight of the
        lifted coordinate times ``s`` is ``intercept_``.

    intercept_scaling : float or "auto", default="auto"
        The lifted coordinate ``s``, ``> 0``. ``"auto"`` uses the largest
        norm ``||x||`` seen so far, so that after the first epoch
        ``s = R``, the paper's advice: a lift much smaller than ``R`` can
        shrink the margin of the lifted sample, and the theorems' update
        bounds grow as its inverse square. ``"auto"`` also keeps
        ``beta="scale"`` and ``beta="power"`` independent of the scale of
        the inputs. Each update moves the intercept by ``eta0 * s**2``: on
        data that is not separable the last weights keep moving, and
        ``average=True``, or ``intercept_scaling=1.0`` (the intercept step
        of scikit-learn's Perceptron), steadies them.

    max_iter : int, default=1000
        The largest number of epochs (passes over the training data) of
        :meth:`fit`. Reaching it without an epoch free of updates raises a
        :class:`~sklearn.exceptions.ConvergenceWarning`.

    shuffle : bool, default=True
        Whether to shuffle the training data before each epoch.

    random_state : int, RandomState instance or None, default=None
        The seed of the shuffling, when ``shuffle=True``. Pass an int for
        reproducible output across multiple function calls.

    average : bool, default=False
        Whether ``coef_`` and ``intercept_`` are the averaged perceptron of
        Freund and Schapire: the mean of the weights after every example
        visited, kept with the lazy-averaging trick (no work beyond the
        updates themselves). The updates, and so ``n_updates_`` and the
        stopping rule, follow the plain weights.

    class_weight : dict, "balanced" or None, default=None
        Weights of the classes, ``{class_label: weight}``, which multiply
        the update of every example of that class, in each one-vs-rest
        problem. ``"balanced"`` uses ``n_samples / (n_classes *
        np.bincount(y))``; it is not supported by :meth:`partial_fit`.

    warm_start : bool, default=False
        Whether :meth:`fit` continues the previous run (weights, update
        counts, radius and averages) instead of starting from zero weights.
        The classes and the number of features must not change.

    n_jobs : int, default=None
        The number of threads training the one-vs-rest problems of a
        multiclass fit, each thread a block of problems in its own pass
        over the data. ``None`` means 1 unless in a
        :obj:`joblib.parallel_backend` context; ``-1`` means all
        processors. The result does not depend on ``n_jobs``.

    verbose : int, default=0
        Print a line per epoch when ``> 0``.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The class labels.

    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
        The weights of the decision function, in float64.

    intercept_ : ndarray of shape (1,) or (n_classes,)
        The intercepts of the decision function (zeros when
        ``fit_intercept=False``).

    n_iter_ : int
        The number of epochs of the last call to :meth:`fit` or
        :meth:`partial_fit`, the largest over the one-vs-rest problems.

    n_updates_ : ndarray of shape (1,) or (n_classes,)
        The number of updates made by each binary problem since the run
        began (the number of mistakes, with ``beta=0``).

    margin_ : ndarray of shape (1,) or (n_classes,)
        The geometric margin of each binary problem on the training data of
        the last call: the smallest ``y * f(x) / ||coef||`` over the
        examples of positive weight. It is negative when that sample is not
        separated, and 0 when ``coef`` is zero.

    radius_ : float
        The largest norm ``||x||`` of a training example seen so far,
        without the intercept coordinate.

    converged_ : bool
        Whether the last epoch of every binary problem made no update: the
        training data of the last call is then separated with every margin
        above its threshold.

    n_features_in_ : int
        Number of features seen during :meth:`fit`.

    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during :meth:`fit`. Defined only when `X`
        has feature names that are all strings.

    See Also
    --------
    sklearn.linear_model.Perceptron : Rosenblatt's perceptron, trained one
        pass per class.
    sklearn.linear_model.SGDClassifier : Linear models trained by stochastic
        gradient descent; ``loss="hinge"`` is close to ``beta=1``.
    skperc.schedules : The thresholds, and the base class for new ones.

    Notes
    -----
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
    the last bit. float32 input is used without a copy and gives the
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
    A :meth:`partial_fit` call stopped so leaves the model as it was. A
    decision value beyond the float range (inf, or NaN from ``inf - inf``)
    on huge input makes :meth:`decision_function` and :meth:`predict`
    raise the same error rather than return it or a class from it.

    References
    ----------
    .. [1] F. Rosenblatt, "The perceptron: a probabilistic model for
       information storage and organization in the brain", Psychological
       Review 65(6), 1958.
    .. [2] A. B. J. Novikoff, "On convergence proofs for perceptrons",
       Symposium on the Mathematical Theory of Automata, 1962.
    .. [3] S. Moran, I. Nachum, I. Panasoff and A. Yehudayoff, "On the
       Perceptron's Compression", CiE 2020, Section 2.
    .. [4] Y. Freund and R. E. Schapire, "Large margin classification using
       the perceptron algorithm", Machine Learning 37, 1999.

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
        "beta": [
            Interval(Real, 0, None, closed="left"),
            StrOptions({"scale", "power"}),
            ThresholdSchedule,
        ],
        "alpha": [Interval(Real, 1, 2, closed="neither")],
        "eta0": [Interval(Real, 0, None, closed="neither")],
        "fit_intercept": ["boolean"],
        "intercept_scaling": [
            Interval(Real, 0, None, closed="neither"),
            StrOptions({"auto"}),
        ],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "shuffle": ["boolean"],
        "random_state": ["random_state"],
        "average": ["boolean"],
        "class_weight": [StrOptions({"balanced"}), dict, None],
        "warm_start": ["boolean"],
        "n_jobs": [Integral, None],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        *,
        beta=0.0,
        alpha=1.3,
        eta0=1.0,
        fit_intercept=True,
        intercept_scaling="auto",
        max_iter=1000,
        shuffle=True,
        random_state=None,
        average=False,
        class_weight=None,
        warm_start=False,
        n_jobs=None,
        verbose=0,
    ):
        self.beta = beta
        self.alpha = alpha
        self.eta0 = eta0
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.max_iter = max_iter
        self.shuffle = shuffle
        self.random_state = random_state
        self.average = average
        self.class_weight = class_weight
        self.warm_start = warm_start
        self.n_jobs = n_jobs
        self.verbose = verbose

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Train until an epoch makes no update, or for ``max_iter`` epochs.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data. float32 and C-ordered float64 arrays and CSR
            matrices are used without a copy.

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
        threshold = _compiled_threshold(self.beta, self.alpha)
        warm = self.warm_start and hasattr(self, "coef_")
        # A warm start keeps the features of the run it continues.
        X, y = validate_data(self, X, y, reset=not warm, **_VALIDATION)
        check_classification_targets(y)
        # np.unique's inverse would hold five arrays of len(y) at once.
        classes = np.unique(y)
        codes = np.searchsorted(classes, y).astype(np.int32)
        if warm and not np.array_equal(classes, self.classes_):
            raise ValueError(
                "warm_start=True continues the previous run, which needs the "
                f"same classes {self.classes_.tolist()}; got {classes.tolist()}."
            )
        check_class_count(self, classes)
        weight = self._example_weights(X, y, codes, classes, sample_weight)
        if not warm:
            self._start_run(classes, X.shape[1])
        self._train(
            X, codes, weight, threshold, self.max_iter, stop_when_separated=True
        )
        if not self.converged_:
            warn_not_converged(self)
        return self

    @_fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X, y, classes=None, sample_weight=None):
        """Make one pass over a batch, continuing the same run.

        The update counts, the radius, the averages and the weights carry
        over from call to call, so calls on consecutive chunks of the data
        make the same model as :meth:`fit` with ``max_iter=1`` and
        ``shuffle=False`` on the whole.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            A batch of training data.

        y : array-like of shape (n_samples,)
            Target values of the batch.

        classes : array-like of shape (n_classes,), default=None
            All the classes of the run. Required on the first call, and
            then equal to it if given again.

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
        threshold = _compiled_threshold(self.beta, self.alpha)
        first_call = not hasattr(self, "classes_")
        X, y = validate_data(self, X, y, reset=first_call, **_VALIDATION)
        check_classification_targets(y)
        run_classes, codes = partial_fit_codes(self, y, classes, first_call)
        weight = self._example_weights(X, y, codes, run_classes, sample_weight)
        if first_call:
            self._start_run(run_classes, X.shape[1])
        return self._train(X, codes, weight, threshold, 1, stop_when_separated=False)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    def _start_run(self, classes, n_features):
        """Zero weights and counters for a new run."""
        self.classes_ = classes
        n_problems = 1 if len(classes) == 2 else len(classes)
        n_average = n_features if self.average else 0
        # The weights are kept feature-major so that one example updates
        # and scores every class from contiguous memory.
        self._coef = np.zeros((n_features, n_problems))
        self._lift_coef = np.zeros(n_problems)
        self._avg_coef = np.zeros((n_average, n_problems))
        self._avg_lift = np.zeros(n_problems)
        self._n_steps = np.zeros(n_problems, dtype=np.int64)
        self._radius_state = np.zeros(2)
        self.n_updates_ = np.zeros(n_problems, dtype=np.int64)

    def _lift_mode(self):
        if not self.fit_intercept:
            return _NO_LIFT
        return _AUTO_LIFT if self.intercept_scaling == "auto" else _FIXED_LIFT

    def _lift_value(self, radius_state):
        """The lifted coordinate s of a run of state radius_state (0 without
        intercept)."""
        mode = self._lift_mode()
        if mode == _AUTO_LIFT:
            return float(np.sqrt(radius_state[0]))
        return float(self.intercept_scaling) if mode == _FIXED_LIFT else 0.0

    def _example_weights(self, X, y, codes, classes, sample_weight):
        """The weight of each example: its sample weight times its class's."""
        weight = _check_sample_weight(
            sample_weight, X, dtype=np.float64, ensure_non_negative=True
        )
        if self.class_weight is not None:
            class_weight = compute_class_weight(self.class_weight, classes=classes, y=y)
            weight = class_weight[codes] * weight
        return weight

    def _train(self, X, codes, weight, threshold, max_iter, stop_when_separated):
        """Run the compiled loop; codes are the indices of y in classes_, and
        threshold the keyword arguments of _compiled_threshold."""
        codes = codes.astype(np.int32, copy=False)
        data, indices, indptr = _rows(X)

        rule = dict(
            **threshold,
            eta0=float(self.eta0),
            # the compiled loop reads lift_value with a fixed lift only
            lift_mode=self._lift_mode(),
            lift_value=self._lift_value(self._radius_state),
        )
        seed = check_random_state(self.random_state).randint(
            np.iinfo(np.int64).max, dtype=np.int64
        )

        n_problems = self._coef.shape[1]
        n_blocks = min(effective_n_jobs(self.n_jobs), n_problems)
        first_class = 1 if len(self.classes_) == 2 else 0

        def train_block(columns):
            state = dict(
                coef=np.ascontiguousarray(self._coef[:, columns]),
                lift_coef=self._lift_coef[columns],
                avg_coef=np.ascontiguousarray(self._avg_coef[:, columns]),
                avg_lift=self._avg_lift[columns],
                n_updates=self.n_updates_[columns],
                n_steps=self._n_steps[columns],
                n_epochs=np.zeros(len(columns), dtype=np.int64),
                converged=np.zeros(len(columns), dtype=np.uint8),
                radius=self._radius_state.copy(),
            )
            failure = new_failure()
            run_epochs(
                data,
                indices,
                indptr,
                X.shape[1],
                codes,
                first_class + columns[0],
                weight,
                **state,
                **rule,
                max_iter=max_iter,
                shuffle=self.shuffle,
                seed=seed,
                stop_when_separated=stop_when_separated,
                verbose=self.verbose,
                failure=failure,
            )
            return columns, state, failure

        # Threads share X; a process backend set by the caller (loky, dask)
        # would send each block its own copy.
        results = Parallel(n_jobs=n_blocks, require="sharedmem")(
            delayed(train_block)(columns)
            for columns in np.array_split(np.arange(n_problems), n_blocks)
        )
        # The blocks trained copies of the state: a run stopped by an
        # overflow leaves the estimator as it was before the call.
        for _, _, failure in results:
            check_failure(failure, _REMEDY)
        run = {attribute: getattr(self, attribute).copy() for attribute in _RUN_STATE}
        n_epochs = np.zeros(n_problems, dtype=np.int64)
        converged = np.zeros(n_problems, dtype=bool)
        for columns, state, _ in results:
            for attribute, name in _RUN_STATE.items():
                run[attribute][..., columns] = state[name]
            n_epochs[columns] = state["n_epochs"]
            converged[columns] = state["converged"]
        # Every block follows the same radius through the same examples.
        run["_radius_state"] = results[0][1]["radius"]
        self.coef_, self.intercept_ = self._model(run)
        for attribute, value in run.items():
            setattr(self, attribute, value)
        self.n_iter_ = int(n_epochs.max())
        self.converged_ = bool(converged.all())
        self.radius_ = float(np.sqrt(self._radius_state[0]))
        self.margin_ = _geometric_margins(
            (data, indices, indptr, X.shape[1]),
            codes,
            first_class,
            weight,
            self.coef_,
            self.intercept_,
        )
        return self

    def _model(self, run):
        """coef_ and intercept_ from the state ``run`` (attribute: value)."""
        coef = run["_coef"].T.copy()
        lift_coef = run["_lift_coef"].copy()
        with np.errstate(over="ignore", invalid="ignore"):
            if self.average:
                steps = np.maximum(run["_n_steps"], 1)
                coef -= run["_avg_coef"].T / steps[:, None]
                lift_coef -= run["_avg_lift"] / steps
            intercept = lift_coef * self._lift_value(run["_radius_state"])
        if not (np.isfinite(coef).all() and np.isfinite(intercept).all()):
            raise_non_finite(
                "the averaged weights" if self.average else "the weights",
                "at the end of the run",
                _REMEDY,
            )
        return coef, intercept


def _geometric_margins(rows, codes, first_class, weight, coef, intercept):
    """min y f(x) / ||coef|| of each problem over the examples of positive
    weight, f summed as in training; 0 where coef is 0 or no example counts."""
    smallest = smallest_margins(
        *rows, codes, first_class, weight, np.ascontiguousarray(coef.T), intercept
    )
    norms = np.linalg.norm(coef, axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        margins = np.where(norms > 0, smallest / norms, 0.0)
    return np.where(np.isfinite(margins), margins, 0.0)


def _rows(X):
    """data, indices, indptr of the rows of X for the compiled loop.

    Dense rows come as the flat C-ordered array and empty index arrays.
    CSR rows come with sorted, unique indices (copied only when X's are
    not), so that sums run in feature order as they do for dense rows.
    """
    if not sp.issparse(X):
        empty = np.empty(0, dtype=np.int32)
        return X.reshape(-1), empty, empty
    if not X.has_canonical_format:
        X = X.copy()
        X.sum_duplicates()
    index_dtype = np.result_type(X.indices.dtype, X.indptr.dtype)
    return (
        X.data,
        X.indices.astype(index_dtype, copy=False),
        X.indptr.astype(index_dtype, copy=False),
    )
