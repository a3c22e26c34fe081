"""LinearProgramClassifier: a consistent halfspace found by linear programming."""

import warnings
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linprog
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.extmath import safe_sparse_dot
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import (
    validate_data,
)

from ._atomic import atomic_fit
from ._base import LinearPredictMixin, check_class_count, check_sparse_structure
from ._compat import Interval, StrOptions, _check_sample_weight, _fit_context
from ._doc_link import DocLinkMixin
from ._nonfinite import raise_non_finite
from ._norms import power_of_two_exponents

# The programs are solved in float64, on X scaled by powers of 2 that
# float32 may not hold.
_VALIDATION = dict(accept_sparse="csr", dtype=np.float64)

# scipy.optimize.linprog's status codes
_OPTIMAL, _LIMIT_REACHED, _INFEASIBLE = 0, 1, 2
_NEGLIGIBLE_COST = 1e-9
# A row whose largest entry exceeds the median row's by more than this
# power of 2 is scaled down to the median row's.
_DOMINANT_ROW_EXPONENT = 10


def _largest_magnitudes(X, axis):
    """max |x| along ``axis``, without a copy of X."""
    if sp.issparse(X):
        largest = np.maximum(X.max(axis=axis).toarray(), -X.min(axis=axis).toarray())
        return largest.ravel()
    return np.maximum(X.max(axis=axis), -X.min(axis=axis))


def _row_exponents(X):
    """The power of 2 that divides each row of X: the rows whose largest
    entry dominates the median row's are brought down to it, so that the
    entries of the other rows in their columns stay within the precision
    of HiGHS once the columns are scaled."""
    largest = _largest_magnitudes(X, axis=1)
    exponents = np.frexp(largest)[1]
    nonzero = largest > 0
    if not nonzero.any():
        return np.zeros(len(largest), dtype=int)
    excess = exponents - int(np.median(exponents[nonzero]))
    return np.where(nonzero & (excess > _DOMINANT_ROW_EXPONENT), excess, 0)


def _scaled_rows(X, row_factors):
    """The CSR matrix of ``row_factors[i] * X[i]``, and the row of each
    stored entry."""
    block = sp.csr_array(X, copy=sp.issparse(X))
    rows = np.repeat(
        np.arange(X.shape[0], dtype=block.indices.dtype), np.diff(block.indptr)
    )
    if (row_factors != 1).any():
        block.data *= row_factors[rows]
    return block, rows


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

    The empirical risk minimizer over halfspaces of [1]_ (section 5.1):
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

    max_iter : int, default=None
        The most iterations HiGHS may make on each program (its simplex and
        interior-point iteration limits); ``None`` for HiGHS's default,
        which does not bound them in practice.

    time_limit : float, default=None
        The most seconds HiGHS may spend on each program, ``> 0``; ``None``
        for no limit. Building the program and handing it over, in time
        proportional to the non-zeros of ``X``, come on top.

        When either limit stops the solver, :meth:`fit` warns with a
        :class:`~sklearn.exceptions.ConvergenceWarning` and leaves the
        estimator as it was before the call (unfitted after a first fit):
        the point where HiGHS stopped is in general not a solution of the
        program.

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
        0, the solver found the optimum (a fit that does not reach it
        publishes no model).

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

    The tolerances of HiGHS are absolute, and it drops the entries of the
    constraint matrix below ``1e-9``: the programs are solved with each
    column of ``X`` multiplied by the power of 2 that brings its largest
    entry near 1, after the rows whose largest entry exceeds the median
    row's by more than ``2**10`` have been divided by the power of 2 that
    brings them to it. These scalings are exact, the classifier does not
    change, and the weights are scaled back; features of very different
    magnitudes, or a few huge examples, are separated as well as
    standardized ones. Weights that overflow then, on inputs so small that
    the separating weights exceed the largest float, raise a
    ``ValueError``. The costs of a program are divided by the largest of
    them, which changes no solution and keeps a ``C`` far from 1 (and, for
    ``"l1_margin"``, the scale) within the range of HiGHS; costs below
    ``1e-9`` of the largest, which its tolerances cannot resolve, count as
    0. A decision value beyond the float range (inf, or NaN from
    ``inf - inf``) on huge input makes :meth:`decision_function` and
    :meth:`predict` raise the same error rather than return it or a class
    from it.

    The constraint matrix holds one entry per non-zero of ``X``, plus one
    per example for the intercept and for the slacks (and ``4`` per
    feature for ``"l1_margin"``). :func:`scipy.optimize.linprog` and HiGHS
    keep several copies of it: a fit on a dense ``X`` peaks at 25 to 30
    times the memory of ``X``, most of it theirs
    (``benchmarks/bench_linear_program.py`` measures it), and its time
    grows faster than the size of ``X``; ``max_iter`` and ``time_limit``
    bound a fit. ``KeyboardInterrupt`` stops a fit when HiGHS returns,
    which ``time_limit`` bounds. A fit runs on a copy of
    the model, which it replaces only when it completes: a fit that
    raises, or that ``KeyboardInterrupt`` or a limit stops, leaves the
    previous model, and one in another thread reads the old model or the
    new one.

    The decision values are margins, not probabilities, and the classifier
    has no ``predict_proba``: for probabilities, wrap it in
    :class:`~sklearn.calibration.CalibratedClassifierCV`, as for
    :class:`~sklearn.svm.LinearSVC` (see :ref:`probabilities`).

    References
    ----------
    .. [1] R. Livni, "Lecture 5: Linear Classification", lecture notes on
       computational learning theory, Tel Aviv University, section 5.1.
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
        "max_iter": [
            Interval(Integral, 1, np.iinfo(np.int32).max, closed="both"),
            None,
        ],
        "time_limit": [Interval(Real, 0, None, closed="neither"), None],
    }

    def __init__(
        self,
        *,
        objective="feasibility",
        fit_intercept=True,
        C=None,
        max_iter=None,
        time_limit=None,
    ):
        self.objective = objective
        self.fit_intercept = fit_intercept
        self.C = C
        self.max_iter = max_iter
        self.time_limit = time_limit

    @_fit_context(prefer_skip_nested_validation=True)
    @atomic_fit
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
            The fitted estimator, or, when ``max_iter`` or ``time_limit``
            stopped the solver, the estimator as it was before the call.
        """
        previous = dict(self.__dict__)
        X, y = validate_data(self, X, y, **_VALIDATION)
        check_sparse_structure(X)
        check_classification_targets(y)
        sample_weight = _check_sample_weight(
            sample_weight, X, dtype=np.float64, ensure_non_negative=True
        )
        classes = np.unique(y)
        check_class_count(self, classes)
        kept = sample_weight > 0
        if not kept.all():
            X, y, sample_weight = X[kept], y[kept], sample_weight[kept]
        targets = classes[1:] if len(classes) == 2 else classes

        # HiGHS's tolerances are absolute and it drops matrix entries below
        # 1e-9: far from 1 it declares separable samples infeasible. The
        # programs are solved with every row that dominates the others and
        # then every column scaled by a power of 2 (exactly), and
        # y (w . x + b) >= 1 is unchanged by w_j <- w_j * column_factor_j.
        row_factors = np.ldexp(1.0, -_row_exponents(X))
        block, rows = _scaled_rows(X, row_factors)
        column_factors = np.ldexp(
            1.0, -power_of_two_exponents(_largest_magnitudes(block, axis=0))
        )
        block.data *= column_factors[block.indices]

        n_features = X.shape[1]
        coef = np.zeros((len(targets), n_features))
        intercept = np.zeros(len(targets))
        n_iter = np.zeros(len(targets), dtype=int)
        for k, target in enumerate(targets):
            signs = np.where(y == target, 1.0, -1.0)
            result = self._solve(
                block, rows, signs, row_factors, column_factors, sample_weight
            )
            if result.status == _LIMIT_REACHED:
                # The point where HiGHS stopped solves nothing in general:
                # it may violate the constraints, or be absent.
                warnings.warn(
                    f"scipy.optimize.linprog stopped at a limit (max_iter="
                    f"{self.max_iter}, time_limit={self.time_limit}): "
                    f"{result.message} The model is left as it was before "
                    "this call to fit.",
                    ConvergenceWarning,
                    stacklevel=4,
                )
                self.__dict__ = previous
                return self
            if result.status == _INFEASIBLE:
                which = (
                    "" if len(targets) == 1 else f" (class {target} against the rest)"
                )
                raise ValueError(
                    f"The training sample is not linearly separable{which}: no "
                    "halfspace classifies every example correctly. Set C to a "
                    "float to minimize the slacks instead."
                )
            if result.status != _OPTIMAL:
                raise ValueError(
                    f"scipy.optimize.linprog failed on the training data: "
                    f"{result.message}"
                )
            with np.errstate(over="ignore"):
                weights = result.x[:n_features] * column_factors
            if not np.isfinite(weights).all():
                raise_non_finite(
                    "the weights",
                    "when scaled back to the input's units",
                    "so that the sample's norms are nearer 1",
                )
            coef[k] = weights
            if self.fit_intercept:
                intercept[k] = result.x[self._n_weights(n_features)]
            n_iter[k] = result.nit
            if self.C is None:
                _check_separated(X, signs, coef[k], intercept[k])
        self.classes_ = classes
        self.coef_ = coef
        self.intercept_ = intercept
        self.status_ = np.full(len(targets), _OPTIMAL)
        self.n_iter_ = n_iter
        return self

    def _n_weights(self, n_features):
        # "l1_margin" bounds |w_j| by t_j >= 0, so that ||w||_1 is linear.
        return 2 * n_features if self.objective == "l1_margin" else n_features

    def _solve(self, block, rows, signs, row_factors, column_factors, sample_weight):
        """linprog on y_i (w . x_i + b) >= 1 (- xi_i), each row multiplied by
        its row factor and written as A x <= b, for X scaled in ``block``
        (its entries in ``rows``)."""
        n_samples, n_features = block.shape
        n_weights = self._n_weights(n_features)
        # One coordinate list, built once: linprog copies it to CSC for HiGHS.
        entries = [(block.data * -signs[rows], rows, block.indices)]
        bounds = [(None, None)] * n_features
        cost = [np.zeros(n_features)]
        n_rows = n_samples
        if self.objective == "l1_margin":
            # -t_j <= w_j <= t_j, in rows n_samples .. n_samples + 2 n_features
            j = np.arange(n_features, dtype=rows.dtype)
            n_rows += 2 * n_features
            entries.append(
                (
                    np.tile([1.0, -1.0, -1.0, -1.0], n_features),
                    n_samples
                    + np.repeat(np.arange(2 * n_features, dtype=rows.dtype), 2),
                    np.stack([j, n_features + j, j, n_features + j], 1).ravel(),
                )
            )
            bounds += [(0, None)] * n_features
            # ||w||_1 = sum_j column_factor_j t_j in the scaled program
            cost.append(column_factors)
        i = np.arange(n_samples, dtype=rows.dtype)
        if self.fit_intercept:
            entries.append(
                (-signs * row_factors, i, np.full(n_samples, n_weights, dtype=i.dtype))
            )
            bounds.append((None, None))
            cost.append(np.zeros(1))
        if self.C is not None:
            first_slack = n_weights + self.fit_intercept
            entries.append((-row_factors, i, first_slack + i))
            bounds += [(0, None)] * n_samples
            cost.append(self.C * sample_weight)
        data, row, column = (
            np.concatenate(part) for part in zip(*entries, strict=True)
        )
        del entries
        A = sp.coo_array((data, (row, column)), shape=(n_rows, len(bounds)))
        del data, row, column
        if self.C is None and self.objective == "feasibility":
            # Without costs any separator will do: asking every scaled row
            # for a functional margin of 1 asks each unscaled one for at
            # least 1 / row_factor >= 1, and keeps a dominant row's
            # constraint within HiGHS's absolute tolerance.
            rhs = np.ones(n_samples)
        else:
            rhs = row_factors.copy()
        b_ub = np.concatenate([-rhs, np.zeros(n_rows - n_samples)])
        # Only the ratios of the costs matter; HiGHS reads costs above 1e20
        # as infinite, and a C far from 1 would be there.
        cost = np.concatenate(cost)
        if cost.max() > 0:
            cost /= cost.max()
            # Below HiGHS's tolerances a cost cannot tell solutions apart,
            # and its presolve fails on them.
            cost[cost < _NEGLIGIBLE_COST] = 0.0
        options = {"maxiter": self.max_iter, "time_limit": self.time_limit}
        return linprog(
            cost,
            A_ub=A,
            b_ub=b_ub,
            bounds=bounds,
            method="highs",
            options={key: value for key, value in options.items() if value is not None},
        )

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags
