"""LinearProgramClassifier: a consistent halfspace found by linear programming."""

import warnings
from numbers import Real

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linprog
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.extmath import safe_sparse_dot
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import (
    _check_sample_weight,
    validate_data,
)

from ._classes import check_class_count
from ._doc_link import DocLinkMixin
from ._linear import LinearPredictMixin
from ._nonfinite import raise_non_finite

# The programs are solved in float64, on X scaled by a power of 2 that
# float32 may not hold.
_VALIDATION = dict(accept_sparse="csr", dtype=np.float64)

# scipy.optimize.linprog's status codes
_OPTIMAL, _ITERATION_LIMIT, _INFEASIBLE = 0, 1, 2
_NEGLIGIBLE_COST = 1e-9


def _power_of_two_scale(X):
    """The power of 2 that brings the largest |x_ij| into [0.5, 1) (as near
    as a finite scale can for subnormal values), or 1."""
    largest = abs(X).max() if X.size else 0.0
    if largest == 0:
        return 1.0
    exponent = max(int(np.frexp(largest)[1]), np.finfo(np.float64).minexp + 1)
    return float(np.ldexp(1.0, -exponent))


def _check_separated(X, signs, coef, intercept):
    """The program asks y (w . x + b) >= 1; far below it, the solver's
    answer is wrong, which happens when the weights of a solution span more
    orders of magnitude than double precision holds."""
    functional = signs * (safe_sparse_dot(X, coef) + intercept)
    if functional.min() < 0.5:
        raise ValueError(
            "The solution of scipy.optimize.linprog does not separate the "
            f"training sample (smallest y (w . x + b) = {functional.min():.3g}, "
            "asked >= 1): the separating weights need more precision than "
            "float64 holds."
        )


class LinearProgramClassifier(
    DocLinkMixin, LinearPredictMixin, ClassifierMixin, BaseEstimator
):
    """A halfspace consistent with the sample, found by linear programming.

    The empirical risk minimizer over halfspaces of lecture 5 (section 5.1):
    on a linearly separable sample, any ``w, b`` with
    ``y_i (w . x_i + b) >= 1`` for all ``i`` classifies every example
    correctly, and a linear program finds one in polynomial time, where the
    perceptron can need exponentially many updates (Anthony and
    Shawe-Taylor). The programs are solved by :func:`scipy.optimize.linprog`
    with the HiGHS solvers.

    Read more in the :ref:`User Guide <theory>`.

    Parameters
    ----------
    objective : {"feasibility", "l1_margin"}, default="feasibility"
        The linear program.

        - ``"feasibility"``: any ``w, b`` with ``y_i (w . x_i + b) >= 1``, a
          consistent hypothesis, with no preference among them.
        - ``"l1_margin"``: the smallest ``||w||_1`` with
          ``y_i (w . x_i + b) >= 1``, which is the largest margin
          ``min_i y_i (w . x_i + b)`` under ``||w||_1 <= 1`` after dividing
          by ``||w||_1`` (the margin in the infinity norm). The solution is
          sparse: at most as many non-zero weights as examples on the
          margin.

    fit_intercept : bool, default=True
        Whether to learn the intercept ``b``; it is not counted in
        ``||w||_1``. Without it, the halfspace passes through the origin.

    C : float, default=None
        The penalty on the slacks of the soft version, ``> 0``. With
        ``None`` the sample must be separable, and a sample that is not
        raises a ``ValueError``. With a float, each example gets a slack
        ``xi_i >= 0`` in ``y_i (w . x_i + b) >= 1 - xi_i``, and the program
        minimizes ``C * sum_i s_i xi_i`` (``s_i`` the sample weights) plus
        ``||w||_1`` for ``"l1_margin"`` (the 1-norm SVM). It always has a
        solution. For ``"feasibility"`` there is no other term, so every
        ``C`` gives the same hypothesis: the smallest total hinge loss,
        which is 0, a consistent hypothesis, on a separable sample.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The class labels.

    coef_ : ndarray of shape (1, n_features) or (n_classes, n_features)
        The weights ``w`` of each one-vs-rest problem.

    intercept_ : ndarray of shape (1,) or (n_classes,)
        The intercepts ``b`` (zeros when ``fit_intercept=False``).

    status_ : ndarray of shape (1,) or (n_classes,)
        The status code of :func:`scipy.optimize.linprog` for each problem:
        0 when the solver found the optimum, 1 when it stopped at its
        iteration limit (with a :class:`~sklearn.exceptions.ConvergenceWarning`).

    n_iter_ : ndarray of shape (1,) or (n_classes,)
        The number of iterations of the solver for each problem.

    n_features_in_ : int
        Number of features seen during :meth:`fit`.

    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during :meth:`fit`. Defined only when `X`
        has feature names that are all strings.

    See Also
    --------
    skperc.MarginPerceptron : The perceptron, which finds a consistent
        halfspace by updates, and its margin variants.
    sklearn.svm.LinearSVC : The 2-norm soft-margin SVM; with
        ``penalty="l1"`` it also gives sparse weights.

    Notes
    -----
    Binary problems label ``classes_[1]`` as ``+1``; several classes are
    learned one-vs-rest, one program per class. :meth:`predict` gives
    ``classes_[1]`` on a decision value of exactly 0.

    An example of sample weight 0 adds no constraint. Each constraint holds
    to the feasibility tolerance of HiGHS (about ``1e-7``), so the
    functional margins on the training data are at least about ``1 - 1e-7``.

    The tolerances of HiGHS are absolute, so the programs are solved on
    ``X`` multiplied by the power of 2 that brings its largest entry near 1
    (exactly, and the classifier does not change) and the weights scaled
    back. Weights that overflow then, on inputs so small that the
    separating weights exceed the largest float, raise a ``ValueError``.
    The costs of a program are divided by the largest of them, which
    changes no solution and keeps a ``C`` far from 1 (and, for
    ``"l1_margin"``, the scale) within the range of HiGHS; costs below
    ``1e-9`` of the largest, which its tolerances cannot resolve, count as
    0. A
    decision value beyond the float range (inf, or NaN from ``inf - inf``)
    on huge input makes :meth:`decision_function` and :meth:`predict`
    raise the same error rather than return it or a class from it.

    The decision values are margins, not probabilities, and the classifier
    has no ``predict_proba``: for probabilities, wrap it in
    :class:`~sklearn.calibration.CalibratedClassifierCV`, as for
    :class:`~sklearn.svm.LinearSVC` (see :ref:`probabilities`).

    References
    ----------
    .. [1] R. Livni, Lecture 5: Linear Classification, section 5.1.
    .. [2] M. Anthony and J. Shawe-Taylor, "Using the perceptron algorithm
       to find consistent hypotheses", Combinatorics, Probability and
       Computing 2(4), 1993.
    .. [3] P. S. Bradley and O. L. Mangasarian, "Feature selection via
       concave minimization and support vector machines", ICML 1998.

    Examples
    --------
    The sample on which the perceptron needs exponentially many updates is
    separated by the linear program at once:

    >>> from skperc import LinearProgramClassifier
    >>> from skperc.datasets import make_nested_boolean
    >>> X, y = make_nested_boolean(10)
    >>> clf = LinearProgramClassifier().fit(X, y)
    >>> clf.score(X, y), clf.status_
    (1.0, array([0]))
    """

    _parameter_constraints: dict = {
        "objective": [StrOptions({"feasibility", "l1_margin"})],
        "fit_intercept": ["boolean"],
        "C": [Interval(Real, 0, None, closed="neither"), None],
    }

    def __init__(self, *, objective="feasibility", fit_intercept=True, C=None):
        self.objective = objective
        self.fit_intercept = fit_intercept
        self.C = C

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Solve one linear program per one-vs-rest problem.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data.

        y : array-like of shape (n_samples,)
            Target values.

        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative weights of the examples. An example of weight 0
            adds no constraint; with ``C`` set, the weights multiply the
            penalties of the slacks.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        X, y = validate_data(self, X, y, **_VALIDATION)
        check_classification_targets(y)
        sample_weight = _check_sample_weight(
            sample_weight, X, dtype=np.float64, ensure_non_negative=True
        )
        self.classes_ = np.unique(y)
        check_class_count(self, self.classes_)
        kept = sample_weight > 0
        X, y, sample_weight = X[kept], y[kept], sample_weight[kept]
        targets = self.classes_[1:] if len(self.classes_) == 2 else self.classes_

        n_problems, n_features = len(targets), X.shape[1]
        self.coef_ = np.zeros((n_problems, n_features))
        self.intercept_ = np.zeros(n_problems)
        self.status_ = np.zeros(n_problems, dtype=int)
        self.n_iter_ = np.zeros(n_problems, dtype=int)
        # HiGHS's tolerances are absolute: far from 1 it declares separable
        # samples infeasible. The programs are solved on X scaled by a power
        # of 2 (exactly), and y (w . x + b) is unchanged by w <- w * scale.
        scale = _power_of_two_scale(X)
        slack_costs = self._slack_costs(sample_weight, scale)
        scaled = X * scale
        for k, target in enumerate(targets):
            signs = np.where(y == target, 1.0, -1.0)
            result = self._solve(scaled, signs, slack_costs)
            if result.status == _INFEASIBLE:
                which = "" if n_problems == 1 else f" (class {target} against the rest)"
                raise ValueError(
                    f"The training sample is not linearly separable{which}: no "
                    "halfspace classifies every example correctly. Set C to a "
                    "float to minimize the slacks instead."
                )
            # At its iteration limit HiGHS may return a point, or none.
            if result.status != _OPTIMAL and result.x is None:
                raise ValueError(
                    f"scipy.optimize.linprog failed on the training data: "
                    f"{result.message}"
                )
            if result.status == _ITERATION_LIMIT:
                warnings.warn(
                    f"scipy.optimize.linprog stopped at its iteration limit: "
                    f"{result.message}",
                    ConvergenceWarning,
                    stacklevel=3,
                )
            elif result.status != _OPTIMAL:
                raise ValueError(
                    f"scipy.optimize.linprog failed on the training data: "
                    f"{result.message}"
                )
            weights = result.x[:n_features]
            if self.objective == "l1_margin":
                weights = weights - result.x[n_features : 2 * n_features]
            with np.errstate(over="ignore"):
                weights = weights * scale
            if not np.isfinite(weights).all():
                raise_non_finite(
                    "the weights",
                    "when scaled back to the input's units",
                    "so that the sample's norms are nearer 1",
                )
            self.coef_[k] = weights
            if self.fit_intercept:
                self.intercept_[k] = result.x[self._n_weights(n_features)]
            self.status_[k] = result.status
            self.n_iter_[k] = result.nit
            if self.C is None:
                _check_separated(X, signs, self.coef_[k], self.intercept_[k])
        return self

    def _n_weights(self, n_features):
        # "l1_margin" splits w = u - v with u, v >= 0, so that ||w||_1 is linear.
        return 2 * n_features if self.objective == "l1_margin" else n_features

    def _slack_costs(self, sample_weight, scale):
        """The cost of each example's slack in the program on X multiplied by
        ``scale`` (None without C)."""
        if self.C is None:
            return None
        # ||w||_1 of the unscaled weights is ||w||_1 / scale in the program.
        penalty = self.C / scale if self.objective == "l1_margin" else self.C
        return penalty * sample_weight

    def _solve(self, X, signs, slack_costs):
        """linprog on y_i (w . x_i + b) >= 1 (- xi_i), written as A x <= -1,
        for X multiplied by ``scale``."""
        n_samples, n_features = X.shape
        signed = sp.csr_matrix(X).multiply(-signs[:, None]).tocsr()
        blocks = [signed]
        bounds = [(None, None)] * n_features
        cost = [np.zeros(n_features)]
        if self.objective == "l1_margin":
            blocks.append(-signed)
            bounds = [(0, None)] * (2 * n_features)
            cost = [np.ones(2 * n_features)]
        if self.fit_intercept:
            blocks.append(sp.csr_matrix(-signs[:, None]))
            bounds.append((None, None))
            cost.append(np.zeros(1))
        if slack_costs is not None:
            blocks.append(-sp.identity(n_samples, format="csr"))
            bounds += [(0, None)] * n_samples
            cost.append(slack_costs)
        # Only the ratios of the costs matter; HiGHS reads costs above 1e20
        # as infinite, and a C far from 1 on scaled data would be there.
        cost = np.concatenate(cost)
        if cost.max() > 0:
            cost /= cost.max()
            # Below HiGHS's tolerances a cost cannot tell solutions apart,
            # and its presolve fails on them.
            cost[cost < _NEGLIGIBLE_COST] = 0.0
        return linprog(
            cost,
            A_ub=sp.hstack(blocks, format="csr"),
            b_ub=-np.ones(n_samples),
            bounds=bounds,
            method="highs",
        )

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags
