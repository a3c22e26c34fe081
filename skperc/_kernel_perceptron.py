"""KernelPerceptron: the dual perceptron and its margin variants."""

from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.metrics.pairwise import PAIRWISE_KERNEL_FUNCTIONS, pairwise_kernels
from sklearn.utils import check_random_state, gen_batches
from sklearn.utils._chunking import get_chunk_n_rows
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.extmath import row_norms
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import (
    _check_sample_weight,
    check_is_fitted,
    validate_data,
)

from ._classes import (
    check_class_count,
    check_finite_scores,
    classes_from_scores,
    partial_fit_codes,
    warn_not_converged,
)
from ._kernel_perceptron_fast import column_cache, kernel_diagonal, run_epochs
from ._nonfinite import check_failure, new_failure, raise_non_finite
from .kernels import inverse_dot_kernel
from .schedules import ThresholdSchedule, _compiled_threshold

# The kernels the compiled loop computes itself, with their codes in
# _kernel_perceptron_fast.pyx; the others are computed by pairwise_kernels.
_COMPILED_KERNELS = {
    "linear": 1,
    "poly": 2,
    "polynomial": 2,
    "rbf": 3,
    "sigmoid": 4,
    "precomputed": 5,
}
_PYTHON_KERNEL = 0

_REMEDY = "or use a kernel of smaller values"


def _kernel_is_not_precomputed(estimator):
    # The kernel between a batch and the support vectors of earlier batches
    # is not part of a Gram matrix of the batch.
    return estimator.kernel != "precomputed"


class KernelPerceptron(ClassifierMixin, BaseEstimator):
    """The kernel perceptron and its margin variants.

    The dual perceptron (lecture 5, Algorithm 2; notes 3, section 2) keeps
    its weights in a feature space as a sum over the examples that caused
    updates, ``f(x) = sum_j a_j k(x_j, x)``: on an example ``(x, y)`` with
    ``y f(x) <= beta_t`` it adds ``y k(x, .)`` to ``f``. The thresholds
    ``beta_t`` are those of :class:`MarginPerceptron` measured in the
    feature space of the kernel. Training stops after the first epoch
    without an update.

    The output is a sum over a subset of the sample, the perceptron's
    compression: ``support_`` and ``dual_coef_``, named as in
    :class:`sklearn.svm.SVC`.

    Read more in the :ref:`User Guide <kernel_perceptron>`.

    Parameters
    ----------
    kernel : str or callable, default="rbf"
        The kernel ``k``: a name that
        :func:`sklearn.metrics.pairwise.pairwise_kernels` accepts (``"rbf"``,
        ``"poly"``, ``"linear"``, ``"sigmoid"``, ``"laplacian"``, ``"chi2"``,
        ...), ``"inverse_dot"`` for
        :func:`skperc.kernels.inverse_dot_kernel`, ``"precomputed"``, or a
        callable. With ``"precomputed"``, :meth:`fit` takes the Gram matrix
        of the training samples and :meth:`decision_function` the kernel
        between the test and the training samples, of shape
        ``(n_samples_test, n_samples_train)``. A callable is called by
        ``pairwise_kernels`` on pairs of samples with ``kernel_params``.

    gamma : float, default=None
        The coefficient of the ``"rbf"``, ``"poly"``, ``"sigmoid"``,
        ``"laplacian"`` and ``"chi2"`` kernels, and ``nu`` of
        ``"inverse_dot"``; ``>= 0``. ``None`` means ``1 / n_features``.

    degree : float, default=3
        The degree of the ``"poly"`` kernel,
        ``(gamma <x, x'> + coef0)^degree``.

    coef0 : float, default=1.0
        The constant of the ``"poly"`` and ``"sigmoid"`` kernels. With
        ``gamma=1`` and ``coef0=1`` the polynomial kernel is lecture 5's
        ``(1 + x . x')^q``.

    kernel_params : dict, default=None
        The keyword arguments of a callable kernel; not used by the others.

    beta : float, {"scale", "power"} or ThresholdSchedule, default=0.0
        The update threshold, as in :class:`MarginPerceptron`: ``0`` for
        the plain kernel perceptron, a constant ``> 0`` for the
        beta-perceptron, ``"scale"`` for the R-independent perceptron and
        ``"power"`` for the infinity-perceptron, in feature space: the norm
        of an example is ``sqrt(k(x, x))``, so ``"power"`` follows
        ``rho^2 = max k(x, x)`` over the examples seen and ``"scale"`` sets
        ``rho^2 = 4 k(x, x)`` whenever an example is longer than ``rho``.

    alpha : float, default=1.3
        The exponent of ``beta="power"``, in the open interval (1, 2).

    max_iter : int, default=100
        The largest number of epochs of :meth:`fit`. Reaching it without
        an epoch free of updates raises a
        :class:`~sklearn.exceptions.ConvergenceWarning`.

    shuffle : bool, default=True
        Whether to shuffle the training data before each epoch.

    random_state : int, RandomState instance or None, default=None
        The seed of the shuffling, when ``shuffle=True``.

    average : bool, default=False
        Whether the decision function is the averaged perceptron of Freund
        and Schapire: the mean of the functions after every example
        visited. It is still a sum over the support vectors, with averaged
        coefficients; the updates follow the plain function.

    budget : int, default=None
        The largest number of support vectors. When an example that is not
        a support vector must update and ``budget`` are held, the oldest
        support vector is removed from the function first (the forgetting
        rule of budget perceptrons). ``None`` means no limit. See the Notes
        for what this does to the guarantees.

    cache_size : float, default=200
        The size in MB of the cache of kernel columns, ``> 0``.

    n_jobs : int, default=None
        The number of jobs of ``pairwise_kernels`` in
        :meth:`decision_function`. ``None`` means 1 unless in a
        :obj:`joblib.parallel_backend` context; ``-1`` means all processors.

    verbose : int, default=0
        Print a line per epoch when ``> 0``.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The class labels.

    support_ : ndarray of shape (n_SV,)
        The indices of the support vectors in the training data, grouped by
        class; after :meth:`partial_fit`, indices in the sequence of all
        the samples of all its calls.

    support_vectors_ : ndarray or sparse matrix of shape (n_SV, n_features)
        The support vectors; empty with ``kernel="precomputed"``.

    dual_coef_ : ndarray of shape (1, n_SV) or (n_classes, n_SV)
        The coefficient of each support vector in the decision function of
        each one-vs-rest problem: ``y_j`` times the number of updates it
        made (times its sample weight), or their average with
        ``average=True``. Zero in a problem the vector never updated.

    intercept_ : ndarray of shape (1,) or (n_classes,)
        Zeros: the decision function is a sum of kernels; an intercept is
        a constant kernel term such as ``coef0``.

    n_support_ : ndarray of shape (n_classes,), dtype=int32
        The number of support vectors of each class.

    n_iter_ : int
        The number of epochs of the last call to :meth:`fit` or
        :meth:`partial_fit`.

    n_updates_ : ndarray of shape (1,) or (n_classes,)
        The number of updates of each one-vs-rest problem since the run
        began.

    margin_ : ndarray of shape (1,) or (n_classes,)
        The geometric margin in feature space of each one-vs-rest problem
        on the training data of the last call: the smallest
        ``y f(x) / ||w||`` over the examples of positive weight, where
        ``||w||^2 = a^T K a`` over the support vectors. Negative when that
        data is not separated, 0 where ``w`` is 0.

    converged_ : bool
        Whether the last epoch of every problem made no update.

    n_features_in_ : int
        Number of features seen during :meth:`fit`.

    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during :meth:`fit`. Defined only when `X`
        has feature names that are all strings.

    See Also
    --------
    MarginPerceptron : The same thresholds on the features themselves.
    sklearn.svm.SVC : The kernel support vector machine.
    skperc.kernels : The kernels of the source texts.

    Notes
    -----
    Training keeps the decision values ``f`` of the training examples and,
    on each update, adds the kernel column of the updated example into
    them, so it never forms the Gram matrix: memory is
    ``O(n_samples * n_classes)`` plus the cache of columns, and time is
    ``O(n_samples)`` per epoch plus ``O(n_samples * n_features)`` per
    kernel column computed (one per update of an example whose column is
    not in the cache). The ``"linear"``, ``"poly"``, ``"rbf"``,
    ``"sigmoid"`` and ``"precomputed"`` columns are computed in the
    compiled loop on dense input (equal to ``pairwise_kernels`` to
    rounding: the RBF column evaluates its exponential in arithmetic that
    vectorizes, within one ulp of the C library's, and gives 0 below
    ``exp(-707)``), the others by ``pairwise_kernels`` (or by
    :func:`~skperc.kernels.inverse_dot_kernel`). A multiclass problem is
    one-vs-rest in a single pass: one column serves every class that an
    example updates. :meth:`decision_function` evaluates the kernel
    between the samples and the support vectors only, in batches of
    scikit-learn's ``working_memory``.

    On data separable in the feature space with margin ``eps*`` and
    ``R^2 = max k(x, x)``, the theorems of :class:`MarginPerceptron` hold
    with these ``R`` and ``eps*``. With a ``budget`` they no longer do: a
    removed support vector takes its contribution to the progress of the
    proof with it, the run may not stop on separable data, and no mistake
    bound holds; what remains is a function that is a sum over at most
    ``budget`` examples. With ``average=True`` a removed support vector
    leaves the averaged function too.

    Labels are mapped to ``-1`` and ``+1``; :meth:`predict` gives
    ``classes_[1]`` on a decision value of exactly 0.

    Kernel values that overflow (a ``"poly"`` or ``"linear"`` kernel on
    huge inputs, a callable that returns inf or NaN) and decision values
    that overflow stop the compiled loop at once with a ``ValueError``
    that names the value and the remedy (scale the input, for example with
    :class:`~sklearn.preprocessing.StandardScaler`); a :meth:`partial_fit`
    call stopped so leaves the model as it was. A decision value beyond
    the float range (inf, or NaN from ``inf - inf``) on huge input makes
    :meth:`decision_function` and :meth:`predict` raise the same error
    rather than return it or a class from it.

    References
    ----------
    .. [1] M. A. Aizerman, E. M. Braverman and L. I. Rozonoer, "Theoretical
       foundations of the potential function method in pattern recognition
       learning", Automation and Remote Control 25, 1964.
    .. [2] Y. Freund and R. E. Schapire, "Large margin classification using
       the perceptron algorithm", Machine Learning 37, 1999.
    .. [3] S. Moran, I. Nachum, I. Panasoff and A. Yehudayoff, "On the
       Perceptron's Compression", CiE 2020.
    .. [4] O. Dekel, S. Shalev-Shwartz and Y. Singer, "The Forgetron: a
       kernel-based perceptron on a budget", SIAM Journal on Computing
       37(5), 2008.

    Examples
    --------
    No line separates the XOR pattern; the polynomial kernel
    ``(1 + x . x')^2`` does:

    >>> import numpy as np
    >>> from skperc import KernelPerceptron
    >>> X = np.array([[1, 1], [-1, -1], [1, -1], [-1, 1]])
    >>> y = np.array([1, 1, 0, 0])
    >>> clf = KernelPerceptron(kernel="poly", degree=2, gamma=1.0, random_state=0)
    >>> clf.fit(X, y).score(X, y), clf.converged_
    (1.0, True)
    >>> clf.predict([[2, 2], [2, -2]])
    array([1, 0])
    """

    _parameter_constraints: dict = {
        "kernel": [
            StrOptions(set(PAIRWISE_KERNEL_FUNCTIONS) | {"precomputed", "inverse_dot"}),
            callable,
        ],
        "gamma": [Interval(Real, 0, None, closed="left"), None],
        "degree": [Interval(Real, 0, None, closed="left")],
        "coef0": [Real],
        "kernel_params": [dict, None],
        "beta": [
            Interval(Real, 0, None, closed="left"),
            StrOptions({"scale", "power"}),
            ThresholdSchedule,
        ],
        "alpha": [Interval(Real, 1, 2, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "shuffle": ["boolean"],
        "random_state": ["random_state"],
        "average": ["boolean"],
        "budget": [Interval(Integral, 1, None, closed="left"), None],
        "cache_size": [Interval(Real, 0, None, closed="neither")],
        "n_jobs": [Integral, None],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        *,
        kernel="rbf",
        gamma=None,
        degree=3,
        coef0=1.0,
        kernel_params=None,
        beta=0.0,
        alpha=1.3,
        max_iter=100,
        shuffle=True,
        random_state=None,
        average=False,
        budget=None,
        cache_size=200,
        n_jobs=None,
        verbose=0,
    ):
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.kernel_params = kernel_params
        self.beta = beta
        self.alpha = alpha
        self.max_iter = max_iter
        self.shuffle = shuffle
        self.random_state = random_state
        self.average = average
        self.budget = budget
        self.cache_size = cache_size
        self.n_jobs = n_jobs
        self.verbose = verbose

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Train until an epoch makes no update, or for ``max_iter`` epochs.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features) \
                or (n_samples, n_samples)
            Training data, or its Gram matrix with ``kernel="precomputed"``.

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
        rule = _compiled_threshold(self.beta, self.alpha)
        X, y = validate_data(self, X, y, **self._validation())
        if self.kernel == "precomputed" and X.shape[0] != X.shape[1]:
            raise ValueError(
                "With kernel='precomputed', X must be the square Gram matrix "
                f"of the training samples; got shape {X.shape}."
            )
        check_classification_targets(y)
        classes, codes = np.unique(y, return_inverse=True)
        check_class_count(self, classes)
        weight = _check_sample_weight(
            sample_weight, X, dtype=np.float64, ensure_non_negative=True
        )
        self._start_run(classes, X)
        self._train(X, codes, weight, rule, self.max_iter, stop_when_separated=True)
        if not self.converged_:
            warn_not_converged(self)
        return self

    @available_if(_kernel_is_not_precomputed)
    @_fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X, y, classes=None, sample_weight=None):
        """Make one pass over a batch, continuing the same run.

        Not available with ``kernel="precomputed"``. The support vectors,
        their coefficients, the update counts and the radius carry over
        from call to call: calls on consecutive chunks of the data make
        the same function as :meth:`fit` with ``max_iter=1``
        and ``shuffle=False`` on the whole, to rounding.

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
        rule = _compiled_threshold(self.beta, self.alpha)
        first_call = not hasattr(self, "classes_")
        X, y = validate_data(self, X, y, reset=first_call, **self._validation())
        check_classification_targets(y)
        run_classes, codes = partial_fit_codes(self, y, classes, first_call)
        weight = _check_sample_weight(
            sample_weight, X, dtype=np.float64, ensure_non_negative=True
        )
        if first_call:
            self._start_run(run_classes, X)
        return self._train(X, codes, weight, rule, 1, stop_when_separated=False)

    def decision_function(self, X):
        """The decision value ``f(x) = sum_j dual_coef_j k(x_j, x)`` of each
        one-vs-rest problem.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features) \
                or (n_samples, n_samples_train)
            The data, or its kernel with the training samples when
            ``kernel="precomputed"``.

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
            For a binary problem, positive values favour ``classes_[1]``.
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, **self._validation())
        # an overflow raises below, naming its cause
        with np.errstate(over="ignore", invalid="ignore"):
            if self.kernel == "precomputed":
                scores = X[:, self.support_] @ self.dual_coef_.T
            else:
                scores = self._kernel_products(
                    X, self.support_vectors_, self.dual_coef_
                )
        check_finite_scores(scores)
        return scores.ravel() if scores.shape[1] == 1 else scores

    def predict(self, X):
        """Predict a class for each sample.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features) \
                or (n_samples, n_samples_train)
            The data, or its kernel with the training samples when
            ``kernel="precomputed"``.

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

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = self.kernel == "precomputed"
        tags.input_tags.sparse = self.kernel != "precomputed"
        return tags

    def _validation(self):
        precomputed = self.kernel == "precomputed"
        return dict(
            accept_sparse=False if precomputed else "csr",
            accept_large_sparse=False,
            dtype=np.float64,
            order="C",
        )

    def _gamma(self):
        return 1.0 / self.n_features_in_ if self.gamma is None else float(self.gamma)

    def _kernel(self, X, Y, n_jobs=None):
        """The kernel matrix k(X, Y), by pairwise_kernels or inverse_dot."""
        gamma = self._gamma()
        if self.kernel == "inverse_dot":
            return inverse_dot_kernel(X, Y, nu=gamma)
        if callable(self.kernel):
            params = self.kernel_params or {}
        else:
            params = {"gamma": gamma, "degree": self.degree, "coef0": self.coef0}
        return pairwise_kernels(
            X, Y, metric=self.kernel, filter_params=True, n_jobs=n_jobs, **params
        )

    def _kernel_products(self, X, Y, coef):
        """k(X, Y) @ coef.T, of shape (len(X), len(coef)), computed in
        batches of rows of X that keep k within working_memory."""
        scores = np.zeros((X.shape[0], coef.shape[0]))
        if Y.shape[0] == 0:
            return scores
        batch_size = get_chunk_n_rows(row_bytes=8 * Y.shape[0])
        for batch in gen_batches(X.shape[0], batch_size):
            scores[batch] = self._kernel(X[batch], Y, self.n_jobs) @ coef.T
        return scores

    def _kernel_diagonal(self, X):
        """k(x, x) of each row of X, by pairwise_kernels or inverse_dot."""
        diagonal = np.empty(X.shape[0])
        # The diagonal of the kernel matrix of each block of rows; a
        # callable is called once per pair, so its blocks are single rows.
        for batch in gen_batches(X.shape[0], 1 if callable(self.kernel) else 256):
            diagonal[batch] = np.diagonal(self._kernel(X[batch], X[batch]))
        return diagonal

    def _start_run(self, classes, X):
        """An empty function and zero counters for a new run."""
        self.classes_ = classes
        n_problems = 1 if len(classes) == 2 else len(classes)
        self._support_rows = X[:0]
        self._support_codes = np.zeros(0, dtype=np.int32)
        self._support_index = np.zeros(0, dtype=np.int64)
        self._support_coef = np.zeros((n_problems, 0))
        self._support_avg = np.zeros((n_problems, 0))
        self._support_f = np.zeros((n_problems, 0))
        self._support_g = np.zeros((n_problems, 0))
        self._n_steps = np.zeros(n_problems, dtype=np.int64)
        self._radius_state = np.zeros(2)
        self._n_seen = 0
        self.n_updates_ = np.zeros(n_problems, dtype=np.int64)

    def _train(self, X, codes, weight, rule, max_iter, stop_when_separated):
        """Run the compiled loop on the support vectors so far and X."""
        n_old = len(self._support_index)
        n_problems = len(self._n_steps)
        if n_old:
            # batches of a partial_fit run may mix dense and sparse input
            sparse = sp.issparse(X) or sp.issparse(self._support_rows)
            stack = sp.vstack if sparse else np.vstack
            points = stack([self._support_rows, X]).astype(np.float64)
            if sp.issparse(points):
                points = points.tocsr()
        else:
            points = X
        n_points = points.shape[0]
        first_class = 1 if len(self.classes_) == 2 else 0

        f = np.zeros((n_problems, n_points))
        g = np.zeros((n_problems if self.average else 0, n_points))
        coef = np.zeros((n_problems, n_points))
        avg_coef = np.zeros_like(g)
        f[:, :n_old] = self._support_f
        coef[:, :n_old] = self._support_coef
        if self.average:
            g[:, :n_old] = self._support_g
            avg_coef[:, :n_old] = self._support_avg
        if n_old:
            # The batch's decision values under the function so far.
            products = self._kernel_products(
                X, self._support_rows, np.vstack([coef[:, :n_old], avg_coef[:, :n_old]])
            )
            f[:, n_old:] = products[:, :n_problems].T
            g[:, n_old:] = products[:, n_problems:].T
        queue = np.zeros(n_points, dtype=np.int64)
        queue[:n_old] = np.arange(n_old)
        in_support = np.zeros(n_points, dtype=np.uint8)
        in_support[:n_old] = 1
        support_state = np.array([0, n_old], dtype=np.int64)

        n_slots = int(self.cache_size * 2**20 // (8 * n_points))
        columns = column_cache(min(max(n_slots, 1), n_points), n_points)
        kind = _COMPILED_KERNELS.get(self.kernel, _PYTHON_KERNEL)
        if sp.issparse(points) or not isinstance(self.kernel, str):
            kind = _PYTHON_KERNEL
        if kind == _PYTHON_KERNEL:
            rows, sq_norms = np.empty((0, 0)), np.empty(0)
            diag = np.zeros(n_points)
            diag[n_old:] = self._kernel_diagonal(X)
        else:
            rows = points
            # The Gram matrix holds its diagonal; the others need the norms.
            precomputed = kind == _COMPILED_KERNELS["precomputed"]
            sq_norms = np.empty(0) if precomputed else row_norms(rows, squared=True)
            diag = kernel_diagonal(
                rows, sq_norms, kind, self._gamma(), self.coef0, self.degree
            )

        def compute_column(j, slot):
            columns[slot] = self._kernel(points, points[j : j + 1]).ravel()

        n_epochs = np.zeros(n_problems, dtype=np.int64)
        converged = np.zeros(n_problems, dtype=np.uint8)
        # The loop counts in copies: a run stopped by an overflow leaves the
        # estimator as it was before the call.
        n_updates = self.n_updates_.copy()
        n_steps = self._n_steps.copy()
        radius_state = self._radius_state.copy()
        failure = new_failure()
        run_epochs(
            rows,
            sq_norms,
            kind,
            self._gamma(),
            self.coef0,
            self.degree,
            compute_column,
            columns,
            diag,
            np.concatenate([self._support_codes, codes]).astype(np.int32),
            first_class,
            np.concatenate([np.zeros(n_old), weight]),
            np.arange(n_old, n_points, dtype=np.intp),
            f,
            g,
            coef,
            avg_coef,
            queue,
            support_state,
            in_support,
            self.budget or 0,
            n_updates,
            n_steps,
            n_epochs,
            converged,
            radius_state,
            **rule,
            max_iter=max_iter,
            shuffle=self.shuffle,
            seed=check_random_state(self.random_state).randint(
                np.iinfo(np.int64).max, dtype=np.int64
            ),
            stop_when_separated=stop_when_separated,
            verbose=self.verbose,
            failure=failure,
        )
        check_failure(failure, _REMEDY)
        self.n_updates_ = n_updates
        self._n_steps = n_steps
        self._radius_state = radius_state

        start, count = support_state
        support = queue[(start + np.arange(count)) % n_points]
        index = np.concatenate(
            [self._support_index, self._n_seen + np.arange(X.shape[0])]
        )
        self._support_rows = points[support]
        self._support_codes = np.concatenate([self._support_codes, codes])[
            support
        ].astype(np.int32)
        self._support_index = index[support]
        self._support_coef = coef[:, support]
        self._support_f = f[:, support]
        if self.average:
            self._support_avg = avg_coef[:, support]
            self._support_g = g[:, support]
        self._n_seen += X.shape[0]

        self.n_iter_ = int(n_epochs.max())
        self.converged_ = bool(converged.all())
        self._set_model(f[:, n_old:], g[:, n_old:], codes, weight, first_class)
        return self

    def _set_model(self, f, g, codes, weight, first_class):
        """The public attributes, and the margins on the batch whose decision
        values are f (and averaging accumulators g)."""
        dual_coef = self._support_coef
        support_f = self._support_f
        if self.average:
            steps = np.maximum(self._n_steps, 1)[:, None]
            dual_coef = dual_coef - self._support_avg / steps
            support_f = support_f - self._support_g / steps
            f = f - g / steps
        if not (np.isfinite(dual_coef).all() and np.isfinite(f).all()):
            raise_non_finite(
                "the averaged decision function", "at the end of the run", _REMEDY
            )
        # ||w||^2 = a^T K a = sum_j a_j f(x_j) over the support vectors.
        # (divided by the largest |f| first, whose square may overflow)
        size = np.abs(support_f).max(axis=1, initial=0.0)[:, None]
        size[size == 0] = 1.0
        self._coef_norm = np.sqrt(
            np.maximum((dual_coef * (support_f / size)).sum(axis=1), 0) * size[:, 0]
        )
        signs = np.where(
            codes[None, :] == first_class + np.arange(len(f))[:, None], 1, -1
        )
        counted = weight > 0
        smallest = (signs * f)[:, counted].min(axis=1, initial=np.inf)
        with np.errstate(divide="ignore", invalid="ignore"):
            margins = np.where(self._coef_norm > 0, smallest / self._coef_norm, 0.0)
        self.margin_ = np.where(np.isfinite(margins), margins, 0.0)

        # Grouped by class, then by index, as in SVC.
        order = np.lexsort((self._support_index, self._support_codes))
        self.support_ = self._support_index[order].astype(np.int32)
        if self.kernel == "precomputed":
            self.support_vectors_ = np.empty((0, 0))
        else:
            self.support_vectors_ = self._support_rows[order]
        self.dual_coef_ = dual_coef[:, order]
        self.n_support_ = np.bincount(
            self._support_codes, minlength=len(self.classes_)
        ).astype(np.int32)
        self.intercept_ = np.zeros(len(dual_coef))
