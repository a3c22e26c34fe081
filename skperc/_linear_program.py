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
from ._base import (
    LinearPredictMixin,
    canonical,
    check_class_count,
    check_sparse_structure,
)
from ._compat import Interval, StrOptions, _check_sample_weight, _fit_context
from ._doc_link import DocLinkMixin
from ._nonfinite import raise_non_finite
from ._norms import power_of_two_exponents

# The programs are solved in float64, on X scaled by powers of 2 that
# float32 may not hold.
_VALIDATION = dict(accept_sparse="csr", dtype=np.float64)

# scipy.optimize.linprog's status codes
_OPTIMAL, _LIMIT_REACHED, _UNBOUNDED = 0, 1, 3
_NEGLIGIBLE_COST = 1e-9
# linprog's (method, presolve), in the order tried until one is trusted
_ATTEMPTS = [("highs", False), ("highs", True), ("highs-ipm", True)]
# The gap allowed between the costs of a solution and of its dual, relative
# to the dual's, beyond HiGHS's tolerance of 1e-7 on each slack.
_DUALITY_GAP = 1e-6
# A row whose largest entry exceeds the median row's by more than this
# power of 2 is scaled down to the median row's.
_DOMINANT_ROW_EXPONENT = 10
# The largest power of 2 a row is divided by: 2**-1022 is the smallest
# normal one; a smaller factor loses bits and below 2**-1074 is 0, which
# would take the row out of the program.
_LARGEST_ROW_EXPONENT = -np.finfo(np.float64).minexp


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
    return np.where(
        nonzero & (excess > _DOMINANT_ROW_EXPONENT),
        np.minimum(excess, _LARGEST_ROW_EXPONENT),
        0,
    )


def _scaled_columns(X, row_factors, fit_intercept):
    """The rows of the dual program: ``Z = [R X F, r]^T`` as a CSC array,
    where ``R = diag(row_factors)``, ``F`` scales every column of ``R X``
    by the power of 2 that brings its largest entry into [0.5, 1), and the
    last row, for the intercept, is ``r``, the row factors; and the
    diagonal of ``F``. Column ``i`` of ``Z`` is example ``i``: a dense X is
    copied once, in its own order, and a CSR one keeps its non-zeros."""
    n_samples, n_features = X.shape
    width = n_features + fit_intercept
    if sp.issparse(X):
        data, indices, indptr = _interleaved(X, fit_intercept)
        if fit_intercept:
            data[indptr[1:] - 1] = 1.0
        if (row_factors != 1).any():
            data *= np.repeat(row_factors, np.diff(indptr))
        largest = np.zeros(width)
        np.maximum.at(largest, indices, np.abs(data))
        column_factors = _factors(largest[:n_features])
        data *= np.append(column_factors, 1.0)[indices]
    else:
        values = np.empty((n_samples, width))
        values[:, :n_features] = X
        values[:, n_features:] = 1.0
        values *= row_factors[:, None]
        column_factors = _factors(_largest_magnitudes(values[:, :n_features], 0))
        values[:, :n_features] *= column_factors
        data = values.ravel()
        # int32 where it holds the positions: scipy would copy a mix of both
        index = np.int32 if data.size + n_features < 2**31 else np.int64
        indices = np.tile(np.arange(width, dtype=index), n_samples)
        indptr = np.arange(0, data.size + 1, width, dtype=index)
    return sp.csc_array((data, indices, indptr), shape=(width, n_samples)), (
        column_factors
    )


def _with_identity(Z, n_features):
    """``[Z, -I]``: one more column per weight, ``-1`` in its row, for the
    terms of ``||w||_1``."""
    index = Z.indices.dtype
    return sp.csc_array(
        (
            np.concatenate([Z.data, np.full(n_features, -1.0)]),
            np.concatenate([Z.indices, np.arange(n_features, dtype=index)]),
            np.concatenate(
                [Z.indptr, Z.indptr[-1] + np.arange(1, n_features + 1, dtype=index)]
            ),
        ),
        shape=(Z.shape[0], Z.shape[1] + n_features),
    )


def _negligible_to_zero(costs):
    """Costs below HiGHS's tolerances, which cannot tell solutions apart,
    set to 0 (its solvers fail on them)."""
    return np.where(costs < _NEGLIGIBLE_COST, 0.0, costs)


def _factors(largest):
    """The powers of 2 that bring each ``largest`` into [0.5, 1)."""
    return np.ldexp(1.0, -power_of_two_exponents(largest))


def _interleaved(X, fit_intercept):
    """The CSR arrays of X with, when ``fit_intercept``, one more entry at
    the end of each row, in the column after the last (its value unset)."""
    if not fit_intercept:
        return X.data.copy(), X.indices.copy(), X.indptr.copy()
    n_samples, n_features = X.shape
    indptr = X.indptr + np.arange(n_samples + 1, dtype=X.indptr.dtype)
    data = np.empty(indptr[-1])
    indices = np.empty(indptr[-1], dtype=X.indices.dtype)
    last = np.zeros(indptr[-1], dtype=bool)
    last[indptr[1:] - 1] = True
    data[~last] = X.data
    indices[~last] = X.indices
    indices[last] = n_features
    return data, indices, indptr


def _primal(result, column_factors, fit_intercept):
    """The weights and the intercept that solve the program, in the units
    of X, from the dual's result: the multipliers of its equality rows."""
    solution = -result.eqlin.marginals
    n_features = len(column_factors)
    with np.errstate(over="ignore", invalid="ignore"):
        weights = solution[:n_features] * column_factors
    return weights, solution[n_features] if fit_intercept else 0.0


def _functional_margins(X, signs, coef, intercept):
    """``y_i (w . x_i + b)``, inf or NaN where it overflows."""
    with np.errstate(over="ignore", invalid="ignore"):
        return signs * (safe_sparse_dot(X, coef) + intercept)


def _separates(functional):
    """Whether the functional margins are near the 1 the program asks; far
    below it, the solver's answer is wrong."""
    return np.nan_to_num(functional, nan=-np.inf).min() >= 0.5


def _check_separated(X, signs, coef, intercept):
    """The program asks y (w . x + b) >= 1; far below it, the solver's
    answer is wrong, which happens when the weights of a solution span more
    orders of magnitude than double precision holds."""
    functional = _functional_margins(X, signs, coef, intercept)
    if not _separates(functional):
        smallest = functional.min()
        raise ValueError(
            "The solution of scipy.optimize.linprog does not separate the "
            f"training sample (smallest y (w . x + b) = {smallest:.3g}, "
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
        The most iterations HiGHS may make on each program, at each attempt
        (see the Notes; its simplex and interior-point iteration limits);
        ``None`` for HiGHS's default,
        which does not bound them in practice.

    time_limit : float, default=None
        The most seconds HiGHS may spend on each program, at each attempt,
        ``> 0``; ``None``
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
        The number of iterations of the solver on the dual of each problem
        (see the Notes).

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

    HiGHS solves the dual of each program, which has one row per feature
    (and one for the intercept) and one column per example: its matrix is
    the scaled ``X`` itself, with one more entry per example for the
    intercept and one per feature for ``"l1_margin"``, built once for all
    classes (a dense ``X`` copied once, a sparse one keeping its
    non-zeros). The slacks and ``||w||_1`` become bounds on its variables,
    and ``w`` and ``b`` are the multipliers of its rows. HiGHS's dual
    simplex solves it without presolve, which keeps fewer copies of it; a
    result that does not stand (a sample called not separable, weights
    that do not separate it, or a cost above the dual's) is solved again
    with presolve, then with the interior-point method. linprog and HiGHS
    still keep several copies of the matrix: a fit on a dense float64 ``X``
    (float32 is converted first) peaks at 16 to 18 times the memory of
    ``X``, the most for a narrow one (40,000 x 20;
    ``benchmarks/bench_linear_program.py`` measures it), and its time
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
        X = check_sparse_structure(X)
        X = canonical(X)
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
        scaled, unscaled = self._program(X, row_factors), []

        def programs():
            yield scaled
            if (row_factors != 1.0).any():
                # Rows scaled over many orders of magnitude can leave HiGHS
                # with no optimum it can confirm; the rows unscaled are the
                # same program, built when first needed.
                if not unscaled:
                    unscaled.append(self._program(X, np.ones_like(row_factors)))
                yield unscaled[0]

        n_features = X.shape[1]
        coef = np.zeros((len(targets), n_features))
        intercept = np.zeros(len(targets))
        n_iter = np.zeros(len(targets), dtype=int)
        for k, target in enumerate(targets):
            signs = np.where(y == target, 1.0, -1.0)
            # Without presolve HiGHS keeps fewer copies of the program, but
            # can misjudge an ill-conditioned one (call the dual of a
            # separable sample unbounded, or stop short of its optimum);
            # presolve, then the interior point method, solve those, and
            # presolve confirms a sample that is not separable.
            for Z, factors, column_factors in programs():
                program = (signs, factors, column_factors, sample_weight)
                for method, presolve in _ATTEMPTS:
                    result = self._solve(Z, *program, method, presolve)
                    trusted = self._trusted(result, X, *program) or (
                        presolve and result.status == _UNBOUNDED
                    )
                    if trusted:
                        break
                if trusted:
                    break
            if result.status == _LIMIT_REACHED:
                # The point where HiGHS stopped solves nothing in general:
                # it may violate the constraints, or be absent.
                left = (
                    "the previous model"
                    if "coef_" in previous
                    else "an unfitted estimator, whose predict raises NotFittedError"
                )
                warnings.warn(
                    f"scipy.optimize.linprog stopped at a limit (max_iter="
                    f"{self.max_iter}, time_limit={self.time_limit}): "
                    f"{result.message} The model is left as it was before "
                    f"this call to fit: {left}. Raise max_iter or time_limit "
                    "to solve the program.",
                    ConvergenceWarning,
                    stacklevel=4,
                )
                self.__dict__ = previous
                return self
            if result.status == _UNBOUNDED:
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
            weights, intercept[k] = _primal(result, column_factors, self.fit_intercept)
            if not np.isfinite(weights).all():
                raise_non_finite(
                    "the weights",
                    "when scaled back to the input's units",
                    "so that the sample's norms are nearer 1",
                )
            coef[k] = weights
            n_iter[k] = result.nit
            if self.C is None:
                _check_separated(X, signs, coef[k], intercept[k])
        self.classes_ = classes
        self.coef_ = coef
        self.intercept_ = intercept
        self.status_ = np.full(len(targets), _OPTIMAL)
        self.n_iter_ = n_iter
        return self

    def _program(self, X, row_factors):
        """The constraint matrix of the dual program of X with its rows
        scaled by row_factors, and the factors of its rows and columns."""
        Z, column_factors = _scaled_columns(X, row_factors, self.fit_intercept)
        if self.objective == "l1_margin":
            Z = _with_identity(Z, X.shape[1])
        return Z, row_factors, column_factors

    def _trusted(self, result, X, signs, row_factors, column_factors, sample_weight):
        """Whether a result of linprog may stand: a limit reached, or an
        optimum that separates X (without slacks) or whose cost is that of
        the dual (with them)."""
        if result.status != _OPTIMAL:
            return result.status == _LIMIT_REACHED
        weights, intercept = _primal(result, column_factors, self.fit_intercept)
        functional = _functional_margins(X, signs, weights, intercept)
        if self.C is None:
            return _separates(functional)
        weight_cost, slack_cost = self._costs(column_factors, sample_weight)
        with np.errstate(over="ignore", invalid="ignore"):
            slacks = np.maximum(self._rhs(row_factors) - row_factors * functional, 0)
            cost = slack_cost @ (slacks / row_factors)
            if weight_cost is not None:
                cost += weight_cost @ np.abs(weights / column_factors)
        dual_cost = -result.fun
        allowed = _DUALITY_GAP * (1 + abs(dual_cost)) + 1e-7 * slack_cost.sum()
        return bool(cost - dual_cost <= allowed)

    def _costs(self, column_factors, sample_weight):
        """The costs of the terms of ``||w||_1`` and of the slacks (None
        where the program has none), divided by the largest of them: only
        their ratios matter, and HiGHS reads costs above 1e20 as infinite,
        where a C far from 1 would put them."""
        weight_cost = column_factors if self.objective == "l1_margin" else None
        slack_cost = None if self.C is None else self.C * sample_weight
        present = [cost for cost in (weight_cost, slack_cost) if cost is not None]
        largest = max([cost.max() for cost in present], default=1.0)
        return tuple(
            None if cost is None else _negligible_to_zero(cost / largest)
            for cost in (weight_cost, slack_cost)
        )

    def _rhs(self, row_factors):
        """The least functional margin asked of each scaled example."""
        if self.C is None and self.objective == "feasibility":
            # Without costs any separator will do: asking every scaled row
            # for a functional margin of 1 asks each unscaled one for at
            # least 1 / row_factor >= 1, and keeps a dominant row's
            # constraint within HiGHS's absolute tolerance.
            return np.ones(len(row_factors))
        return row_factors

    def _solve(
        self,
        Z,
        signs,
        row_factors,
        column_factors,
        sample_weight,
        method,
        presolve,
    ):
        """linprog on the dual of the program: ``min c^T z`` over the
        weights ``w``, ``b`` and the slacks, subject to
        ``r_i y_i (w . x_i + b) (+ r_i xi_i) >= h_i``, on X scaled as in
        ``Z`` (see ``_scaled_columns``; ``r_i`` the row factors).

        The dual has one equality row per weight and one per intercept,
        and one column per example: ``Z nu = 0`` (plus ``- mu`` for
        ``"l1_margin"``), maximizing ``sum_i h_i y_i nu_i``, where
        ``nu_i = y_i lambda_i`` carries the sign of the label, so that
        ``Z`` serves every class. The primal's costs become the dual's
        bounds: ``lambda_i <= C s_i / r_i`` for the slacks (no bound
        without them) and ``|mu_j| <= column_factor_j`` for the terms of
        ``||w||_1``. Without slacks, the dual is unbounded exactly when the
        sample is not separable. The multipliers of the equality rows are
        ``-(w, b)``."""
        n_samples = len(signs)
        weight_cost, slack_cost = self._costs(column_factors, sample_weight)
        upper = np.inf if slack_cost is None else slack_cost / row_factors
        bounds = np.empty((Z.shape[1], 2))
        # nu_i = y_i lambda_i, with 0 <= lambda_i <= upper_i
        bounds[:n_samples, 0] = np.where(signs > 0, 0.0, -upper)
        bounds[:n_samples, 1] = np.where(signs > 0, upper, 0.0)
        if weight_cost is not None:
            bounds[n_samples:, 0] = -weight_cost
            bounds[n_samples:, 1] = weight_cost
        cost = np.zeros(Z.shape[1])
        cost[:n_samples] = -self._rhs(row_factors) * signs
        options = {"maxiter": self.max_iter, "time_limit": self.time_limit}
        return linprog(
            cost,
            A_eq=Z,
            b_eq=np.zeros(Z.shape[0]),
            bounds=bounds,
            method=method,
            options={
                "presolve": presolve,
                **{key: value for key, value in options.items() if value is not None},
            },
        )

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags
