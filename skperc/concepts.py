"""Finite concept classes for :class:`~skperc.HalvingClassifier`.

A concept maps a sample to +1 or -1. A concept class is a finite, indexed
set of concepts that follows a small protocol:

- :meth:`ConceptClass.fit` ``(X)`` fixes the finite set from unlabeled
  samples where the class needs to (the thresholds of the stumps, the
  number of features of the others) and returns the class;
- :attr:`ConceptClass.n_concepts` is the number of concepts, indexed
  ``0, ..., n_concepts - 1``;
- :meth:`ConceptClass.predict` ``(X, indices)`` gives the predictions of a
  chunk of concepts on a chunk of samples, an ``int8`` array of +1 and -1
  of shape ``(n_samples, len(indices))``; an answer of another shape,
  dtype or value is refused with an error naming the class.

A class that reads sparse input says so in its tags
(``input_tags.sparse``) and is then given CSR matrices. A class with a
structure that halving can use brings its own way of keeping version
spaces (``_version_spaces``), as :class:`DecisionStumps` does.

Every class here has ``sign(0) = +1``, as in the papers. A class is a
scikit-learn estimator for its parameters (``get_params``, ``clone``, grid
searches through ``concepts__<parameter>``); the halving classifier fits a
clone of it on the training samples.
"""

import itertools
import math
from numbers import Integral

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, clone
from sklearn.utils import get_tags
from sklearn.utils.validation import check_is_fitted, validate_data

from ._compat import Interval
from ._version_spaces import ListedVersionSpaces, StumpVersionSpaces

__all__ = [
    "ConceptClass",
    "DecisionStumps",
    "Conjunctions",
    "IntegerHalfspaces",
    "ExplicitConcepts",
]

# The largest class that Conjunctions and IntegerHalfspaces write out, a
# few hundred megabytes at most.
MAX_ENUMERATED_CONCEPTS = 2**24


class ConceptClass(BaseEstimator):
    """Base class of the finite concept classes.

    A subclass implements :meth:`fit` (which must call
    ``validate_data(self, X, reset=True)`` or set ``n_features_in_``),
    :attr:`n_concepts` and :meth:`_predict_concepts`; :meth:`predict`
    checks its input, calls the latter and checks its answer.

    See Also
    --------
    DecisionStumps : Axis-aligned thresholds on a grid of quantiles.
    Conjunctions : Conjunctions of literals over boolean features.
    IntegerHalfspaces : Halfspaces with small integer weights.
    ExplicitConcepts : A list of callables or fitted classifiers.

    Examples
    --------
    The parity of two boolean features, as a class of its own:

    >>> import numpy as np
    >>> from skperc.concepts import ConceptClass
    >>> class Parities(ConceptClass):
    ...     def fit(self, X, y=None):
    ...         self.n_features_in_ = np.shape(X)[1]
    ...         return self
    ...     @property
    ...     def n_concepts(self):
    ...         return 2
    ...     def _predict_concepts(self, X, indices):
    ...         odd = X.sum(axis=1) % 2 == 1
    ...         columns = np.where(indices == 0, odd[:, None], ~odd[:, None])
    ...         return np.where(columns, 1, -1).astype(np.int8)
    >>> Parities().fit([[0, 1]]).predict([[0, 1], [1, 1]])
    array([[ 1, -1],
           [-1,  1]], dtype=int8)
    """

    _parameter_constraints: dict = {}

    def fit(self, X, y=None):
        """Fix the finite set of concepts from unlabeled samples.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Unlabeled samples.

        y : None
            Ignored.

        Returns
        -------
        self : object
            The fitted class.
        """
        raise NotImplementedError

    @property
    def n_concepts(self):
        """The number of concepts of the fitted class."""
        raise NotImplementedError

    def predict(self, X, indices=None):
        """The predictions of some concepts on some samples.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The samples.

        indices : array-like of int, default=None
            The indices of the concepts, all of them if None.

        Returns
        -------
        predictions : ndarray of shape (n_samples, n_indices), dtype int8
            ``predictions[i, k]`` is +1 or -1, the prediction of concept
            ``indices[k]`` on sample ``i``.
        """
        check_is_fitted(self, "n_features_in_")
        X = validate_data(
            self, X, reset=False, dtype=np.float64, accept_sparse=_sparse_format(self)
        )
        return self._checked_predictions(X, _concept_indices(indices, self.n_concepts))

    def _predict_concepts(self, X, indices):
        """predict on checked float64 X and checked indices."""
        raise NotImplementedError

    def _checked_predictions(self, X, indices):
        """_predict_concepts, its answer checked against the protocol: a
        wrong answer would count mistakes silently wrong."""
        predictions = self._predict_concepts(X, indices)
        name = f"{type(self).__name__}._predict_concepts"
        expected = (X.shape[0], len(indices))
        # an np.matrix passes for an array of its shape, and indexes as none
        if (
            not isinstance(predictions, np.ndarray)
            or isinstance(predictions, np.matrix)
            or predictions.shape != expected
        ):
            raise ValueError(
                f"{name} returned {type(predictions).__name__} of shape "
                f"{np.shape(predictions)} for {expected[0]} samples and "
                f"{expected[1]} concepts; it must return an array of shape "
                f"{expected}."
            )
        if predictions.dtype.kind != "i":
            raise TypeError(
                f"{name} returned dtype {predictions.dtype}; it must return "
                "signed integers, +1 and -1 (int8)."
            )
        wrong = (predictions != 1) & (predictions != -1)
        if wrong.any():
            raise ValueError(
                f"{name} returned values other than +1 and -1: "
                f"{np.unique(predictions[wrong])[:5].tolist()}."
            )
        return predictions

    def _version_spaces(self, n_problems):
        """The version spaces of a halving run over this fitted class.

        By default, index sets of live concepts evaluated through
        ``_predict_concepts``; a class with a structure that halving can
        use returns its own kind of
        :class:`~skperc._version_spaces.VersionSpaces`.
        """
        return ListedVersionSpaces(self, n_problems)


def _interpolate(positions, values, ranks=None):
    """A sorted sample read at fractional positions by linear interpolation.

    ``values`` are the sample's values of the integer ``ranks`` (from 0;
    every rank if None), which must include the floor and the ceiling of
    each position.

    np.interp's slope b - a overflows between values of opposite signs
    near the largest float; there the weighted sum (1 - t) a + t b, which
    cannot, takes its place.
    """
    if ranks is None:
        ranks = np.arange(len(values))
    with np.errstate(over="ignore", invalid="ignore"):
        read = np.interp(positions, ranks, values)
    overflowed = ~np.isfinite(read)
    if overflowed.any():
        low = np.floor(positions[overflowed]).astype(np.intp)
        at = np.searchsorted(ranks, low)
        high = np.minimum(at + 1, len(values) - 1)
        t = positions[overflowed] - low
        read[overflowed] = (1 - t) * values[at] + t * values[high]
    return read


def _sparse_column_quantiles(stored, n_samples, positions):
    """The quantiles at ``positions`` of a column of ``n_samples`` values,
    ``stored`` (sorted) and zeros for the rest, read off the few order
    statistics they need rather than off the whole column."""
    floor = np.floor(positions).astype(np.intp)
    ranks = np.unique(np.concatenate([floor, np.minimum(floor + 1, n_samples - 1)]))
    n_negative = np.searchsorted(stored, 0.0)
    n_zeros = n_samples - len(stored)
    values = np.zeros(len(ranks))
    below = ranks < n_negative
    values[below] = stored[ranks[below]]
    above = ranks >= n_negative + n_zeros
    values[above] = stored[ranks[above] - n_zeros]
    return _interpolate(positions, values, ranks)


class DecisionStumps(ConceptClass):
    """Decision stumps: ``sign(s (x_j - theta))`` on a grid of thresholds.

    One stump per feature ``j``, sign ``s`` in ``{+1, -1}`` and threshold
    ``theta`` among the distinct quantiles of feature ``j`` at
    ``n_thresholds`` evenly spaced levels from 0 to 1 (the smallest and
    largest values included). So there are ``2 sum_j T_j`` stumps, with
    ``T_j <= n_thresholds`` the number of distinct thresholds of feature
    ``j``.

    With ``value_range``, the thresholds are instead ``n_thresholds``
    evenly spaced values from ``low`` to ``high``, the same whatever the
    samples: a class fixed before any data, for streams.

    :class:`~skperc.HalvingClassifier` runs on stumps with their
    structure: the stumps of one feature and sign that predict +1 on a
    sample are a prefix or a suffix of the sorted thresholds, so a vote
    costs ``O(n_features log n_thresholds)``, not one evaluation per stump.
    Samples may be dense or sparse (CSR, read without densifying).

    Parameters
    ----------
    n_thresholds : int, default=32
        The number of quantile levels (or of grid values) per feature,
        ``>= 1``.

    value_range : tuple (low, high), default=None
        The range of the grid of thresholds of every feature, ``low`` and
        ``high`` each a float or an array-like of shape ``(n_features,)``
        (one range per feature); None takes the thresholds from the
        quantiles of the samples that :meth:`fit` is given.

    Attributes
    ----------
    thresholds_ : ndarray of shape (sum_j T_j,)
        The sorted thresholds of every feature, one after the other.

    threshold_ptr_ : ndarray of shape (n_features + 1,)
        The thresholds of feature ``j`` are
        ``thresholds_[threshold_ptr_[j]:threshold_ptr_[j + 1]]``.

    n_features_in_ : int
        Number of features seen during :meth:`fit`.

    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during :meth:`fit`. Defined only when `X`
        has feature names that are all strings.

    Notes
    -----
    The stumps of feature ``j`` are indexed from ``2 threshold_ptr_[j]``:
    first the ``T_j`` stumps of sign +1 (``+1`` where ``x_j >= theta_k``),
    then the ``T_j`` of sign -1 (``+1`` where ``x_j <= theta_k``), each in
    increasing order of threshold.

    Examples
    --------
    >>> from skperc.concepts import DecisionStumps
    >>> stumps = DecisionStumps(n_thresholds=3).fit([[0.0], [1.0], [2.0]])
    >>> stumps.n_concepts, stumps.thresholds_
    (6, array([0., 1., 2.]))
    >>> stumps.predict([[1.0]])
    array([[ 1,  1, -1, -1,  1,  1]], dtype=int8)

    A grid fixed in advance, whatever the samples:

    >>> grid = DecisionStumps(n_thresholds=5, value_range=(0, 1)).fit([[0.3]])
    >>> grid.thresholds_
    array([0.  , 0.25, 0.5 , 0.75, 1.  ])
    """

    _parameter_constraints: dict = {
        "n_thresholds": [Interval(Integral, 1, None, closed="left")],
        "value_range": [tuple, None],
    }

    def __init__(self, n_thresholds=32, value_range=None):
        self.n_thresholds = n_thresholds
        self.value_range = value_range

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    def fit(self, X, y=None):
        """Take the thresholds from the quantiles of each feature of X, or
        from ``value_range``.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Unlabeled samples.

        y : None
            Ignored.

        Returns
        -------
        self : object
            The fitted class.
        """
        self._validate_params()
        X = validate_data(self, X, reset=True, dtype=np.float64, accept_sparse="csr")
        if self.value_range is not None:
            per_feature = self._grid()
        elif sp.issparse(X):
            per_feature = self._sparse_quantiles(X)
        else:
            # The linear-interpolation quantiles (np.quantile's default) read
            # off each sorted column at once; np.quantile partitions per level.
            positions = np.linspace(0.0, X.shape[0] - 1, self.n_thresholds)
            per_feature = [
                np.unique(_interpolate(positions, np.sort(column))) for column in X.T
            ]
        self.thresholds_ = np.concatenate(per_feature)
        self.threshold_ptr_ = np.zeros(X.shape[1] + 1, dtype=np.int64)
        np.cumsum([len(t) for t in per_feature], out=self.threshold_ptr_[1:])
        return self

    def _grid(self):
        """The thresholds of value_range, per feature."""
        if len(self.value_range) != 2:
            raise ValueError(
                f"value_range must be a pair (low, high); got {self.value_range!r}."
            )
        try:
            low, high = (
                np.broadcast_to(
                    np.asarray(bound, dtype=np.float64), self.n_features_in_
                )
                for bound in self.value_range
            )
        except ValueError as error:
            raise ValueError(
                "value_range must hold floats or arrays of one value per "
                f"feature ({self.n_features_in_}): {error}"
            ) from None
        if (
            not (np.isfinite(low).all() and np.isfinite(high).all())
            or (low > high).any()
        ):
            raise ValueError(
                "value_range must hold finite bounds with low <= high; got "
                f"{self.value_range!r}."
            )
        return [
            np.unique(np.linspace(a, b, self.n_thresholds))
            for a, b in zip(low, high, strict=True)
        ]

    def _sparse_quantiles(self, X):
        """The quantile thresholds of each column of a CSR matrix, the same
        as of its dense array, without making it."""
        n_samples = X.shape[0]
        positions = np.linspace(0.0, n_samples - 1, self.n_thresholds)
        columns = X.tocsc()
        columns.sum_duplicates()
        ptr = columns.indptr
        # a column with no stored value is all zeros: one threshold, 0
        per_feature = [np.zeros(1)] * X.shape[1]
        for j in np.flatnonzero(np.diff(ptr)):
            stored = np.sort(columns.data[ptr[j] : ptr[j + 1]])
            quantiles = _sparse_column_quantiles(stored, n_samples, positions)
            per_feature[j] = np.unique(quantiles)
        return per_feature

    @property
    def n_concepts(self):
        """The number of stumps, ``2 * len(thresholds_)``."""
        check_is_fitted(self, "thresholds_")
        return 2 * len(self.thresholds_)

    def stump_parameters(self, indices=None):
        """The feature, sign and threshold of some stumps.

        Parameters
        ----------
        indices : array-like of int, default=None
            The indices of the stumps, all of them if None.

        Returns
        -------
        feature : ndarray of int
            The feature ``j`` of each stump.

        sign : ndarray of int
            The sign ``s``, +1 or -1.

        threshold : ndarray of float
            The threshold ``theta``.
        """
        check_is_fitted(self, "thresholds_")
        indices = _concept_indices(indices, self.n_concepts)
        ptr = self.threshold_ptr_
        feature = np.searchsorted(2 * ptr, indices, side="right") - 1
        offset = indices - 2 * ptr[feature]
        size = ptr[feature + 1] - ptr[feature]
        negative = offset >= size
        sign = np.where(negative, -1, 1)
        threshold = self.thresholds_[ptr[feature] + offset - negative * size]
        return feature, sign, threshold

    def _version_spaces(self, n_problems):
        if not _plain_stumps(self):
            # A subclass that predicts otherwise is halved through its own
            # predictions, not the structure of plain stumps.
            return super()._version_spaces(n_problems)
        return StumpVersionSpaces(self, n_problems)

    def _predict_concepts(self, X, indices):
        feature, sign, threshold = self.stump_parameters(indices)
        # for a CSR X, only the columns asked for are made dense
        values = X[:, feature].toarray() if sp.issparse(X) else X[:, feature]
        positive = np.where(sign > 0, values >= threshold, values <= threshold)
        return _to_signs(positive)


class Conjunctions(ConceptClass):
    """Conjunctions of literals over boolean features.

    A conjunction is a set of literals ``x_j`` and ``not x_j`` with no
    feature twice; it is +1 on the samples that make every literal true
    (the empty conjunction is +1 everywhere). Over ``n`` features there
    are ``3^n`` of them, or ``sum_{k <= m} C(n, k) 2^k`` with at most
    ``m = max_literals`` literals. The samples must be boolean: 0/1 or
    False/True.

    Parameters
    ----------
    max_literals : int, default=None
        The largest number of literals, ``>= 0``; None for no limit.

    Attributes
    ----------
    positive_literals_ : ndarray of shape (n_concepts, n_features), dtype bool
        ``positive_literals_[c, j]``: conjunction ``c`` holds ``x_j``.

    negative_literals_ : ndarray of shape (n_concepts, n_features), dtype bool
        ``negative_literals_[c, j]``: conjunction ``c`` holds ``not x_j``.

    n_features_in_ : int
        Number of features seen during :meth:`fit`.

    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during :meth:`fit`. Defined only when `X`
        has feature names that are all strings.

    Notes
    -----
    The class is written out, so it may hold at most
    ``MAX_ENUMERATED_CONCEPTS`` (``2**24``) conjunctions; a larger one is
    refused by :meth:`fit` with a ValueError naming ``max_literals``.
    Conjunctions are ordered by number of literals, then by feature.

    Examples
    --------
    >>> from skperc.concepts import Conjunctions
    >>> conjunctions = Conjunctions(max_literals=1).fit([[0, 1], [1, 0]])
    >>> conjunctions.n_concepts
    5
    >>> conjunctions.predict([[1, 0]])
    array([[ 1,  1, -1, -1,  1]], dtype=int8)
    """

    _parameter_constraints: dict = {
        "max_literals": [Interval(Integral, 0, None, closed="left"), None],
    }

    def __init__(self, max_literals=None):
        self.max_literals = max_literals

    def fit(self, X, y=None):
        """Write out the conjunctions over the features of X.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Unlabeled boolean samples.

        y : None
            Ignored.

        Returns
        -------
        self : object
            The fitted class.
        """
        self._validate_params()
        X = validate_data(self, X, reset=True, dtype=np.float64, accept_sparse="csr")
        _check_boolean(X)
        n = X.shape[1]
        largest = n if self.max_literals is None else min(self.max_literals, n)
        sizes = [math.comb(n, k) * 2**k for k in range(largest + 1)]
        _check_size(self, sum(sizes), "max_literals")
        positive = np.zeros((sum(sizes), n), dtype=bool)
        negative = np.zeros((sum(sizes), n), dtype=bool)
        row = 1  # row 0 is the empty conjunction
        for k in range(1, largest + 1):
            for features in itertools.combinations(range(n), k):
                features = list(features)
                for signs in itertools.product((True, False), repeat=k):
                    positive[row, features] = signs
                    negative[row, features] = np.logical_not(signs)
                    row += 1
        self.positive_literals_ = positive
        self.negative_literals_ = negative
        return self

    @property
    def n_concepts(self):
        """The number of conjunctions."""
        check_is_fitted(self, "positive_literals_")
        return len(self.positive_literals_)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    def _predict_concepts(self, X, indices):
        _check_boolean(X)
        positive = self.positive_literals_[indices]
        negative = self.negative_literals_[indices]
        # A literal is violated by x_j = 0 (positive) or x_j = 1 (negative):
        # sum_j P_j (1 - x_j) + N_j x_j, exact in floats, with no dense 1 - X.
        violated = X @ (negative.astype(np.float64) - positive).T
        violated += np.count_nonzero(positive, axis=1)
        return _to_signs(violated == 0)


class IntegerHalfspaces(ConceptClass):
    """Halfspaces ``sign(w @ x - b)`` with small integer weights.

    Every weight ``w_j`` and the threshold ``b`` are integers in
    ``[-max_weight, max_weight]``: ``(2 max_weight + 1)^(n_features + 1)``
    concepts, for boolean or small-integer samples; with boolean samples
    these are the threshold functions with integer weights studied by
    Anthony and Shawe-Taylor.

    Parameters
    ----------
    max_weight : int, default=1
        The largest absolute value of a weight or of the threshold, ``>= 1``.

    Attributes
    ----------
    weights_ : ndarray of shape (n_concepts, n_features), dtype int8
        The weights ``w`` of each halfspace.

    offsets_ : ndarray of shape (n_concepts,), dtype int8
        The threshold ``b`` of each halfspace.

    n_features_in_ : int
        Number of features seen during :meth:`fit`.

    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during :meth:`fit`. Defined only when `X`
        has feature names that are all strings.

    Notes
    -----
    The class is written out, so it may hold at most
    ``MAX_ENUMERATED_CONCEPTS`` (``2**24``) halfspaces; a larger one is
    refused by :meth:`fit` with a ValueError. The halfspaces are ordered
    lexicographically by ``(w_1, ..., w_n, b)``, from ``-max_weight`` up.
    Decision values are exact for integer samples below ``2**45``.

    References
    ----------
    .. [1] M. Anthony and J. Shawe-Taylor, "Using the perceptron algorithm
       to find consistent hypotheses", Combinatorics, Probability and
       Computing 2(4), 1993.

    Examples
    --------
    >>> from skperc.concepts import IntegerHalfspaces
    >>> halfspaces = IntegerHalfspaces().fit([[0, 1]])
    >>> halfspaces.n_concepts
    27
    >>> halfspaces.weights_[17].tolist(), int(halfspaces.offsets_[17])
    ([0, 1], 1)
    >>> halfspaces.predict([[0, 1], [1, 0]], [17])
    array([[ 1],
           [-1]], dtype=int8)
    """

    _parameter_constraints: dict = {
        "max_weight": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(self, max_weight=1):
        self.max_weight = max_weight

    def fit(self, X, y=None):
        """Write out the halfspaces over the features of X.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Unlabeled samples.

        y : None
            Ignored.

        Returns
        -------
        self : object
            The fitted class.
        """
        self._validate_params()
        X = validate_data(self, X, reset=True, dtype=np.float64, accept_sparse="csr")
        k = self.max_weight
        if k > 127:
            raise ValueError(f"max_weight must be at most 127; got {k}.")
        n = X.shape[1]
        _check_size(self, (2 * k + 1) ** (n + 1), "max_weight")
        grid = np.indices((2 * k + 1,) * (n + 1), dtype=np.int8).reshape(n + 1, -1)
        grid -= k
        self.weights_ = np.ascontiguousarray(grid[:n].T)
        self.offsets_ = grid[n].copy()
        return self

    @property
    def n_concepts(self):
        """The number of halfspaces."""
        check_is_fitted(self, "weights_")
        return len(self.offsets_)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags

    def _predict_concepts(self, X, indices):
        values = X @ self.weights_[indices].T.astype(np.float64)
        return _to_signs(values >= self.offsets_[indices])


class ExplicitConcepts(ConceptClass):
    """A concept class given as a list of concepts.

    Parameters
    ----------
    concepts : list of callables or fitted binary classifiers
        Each concept is either a callable mapping ``X`` of shape
        ``(n_samples, n_features)`` to ``n_samples`` values in ``{-1, +1}``
        or booleans (True for +1), or a fitted classifier with two
        ``classes_``, whose ``predict`` gives ``classes_[1]`` for +1.

    Attributes
    ----------
    n_features_in_ : int
        Number of features seen during :meth:`fit`.

    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during :meth:`fit`. Defined only when `X`
        has feature names that are all strings.

    Notes
    -----
    Each concept is called once per chunk of samples it is asked about; a
    callable gets the samples as a float64 array. The concepts are the
    class: a clone (as :class:`~skperc.HalvingClassifier` and grid searches
    make) keeps them as given, so fitted classifiers stay fitted.

    Examples
    --------
    >>> import numpy as np
    >>> from skperc.concepts import ExplicitConcepts
    >>> first_positive = lambda X: X[:, 0] > 0
    >>> sum_above_one = lambda X: X.sum(axis=1) > 1
    >>> concepts = ExplicitConcepts([first_positive, sum_above_one])
    >>> concepts.fit([[0.0, 1.0]]).predict([[1.0, 0.5], [0.0, 0.0]])
    array([[ 1,  1],
           [-1, -1]], dtype=int8)
    """

    _parameter_constraints: dict = {"concepts": [list]}

    def __init__(self, concepts):
        self.concepts = concepts

    def __sklearn_clone__(self):
        # The concepts are the class: a clone keeps them as given, fitted
        # classifiers fitted (frozen), where cloning each would unfit it;
        # the other parameters (of a subclass) are cloned as clone does.
        params = {
            name: clone(value, safe=False)
            for name, value in self.get_params(deep=False).items()
        }
        params["concepts"] = list(self.concepts)
        return type(self)(**params)

    def fit(self, X, y=None):
        """Check the concepts and record the number of features of X.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Unlabeled samples.

        y : None
            Ignored.

        Returns
        -------
        self : object
            The fitted class.
        """
        self._validate_params()
        if not self.concepts:
            raise ValueError("ExplicitConcepts needs at least one concept.")
        for position, concept in enumerate(self.concepts):
            if not callable(concept) and not hasattr(concept, "predict"):
                raise TypeError(
                    "Each concept must be a callable or a fitted classifier; "
                    f"concept {position} is {concept!r}."
                )
        validate_data(self, X, reset=True, dtype=np.float64)
        return self

    @property
    def n_concepts(self):
        """The number of concepts in the list."""
        check_is_fitted(self, "n_features_in_")
        return len(self.concepts)

    def _predict_concepts(self, X, indices):
        predictions = np.empty((X.shape[0], len(indices)), dtype=np.int8)
        for column, index in enumerate(indices):
            predictions[:, column] = _concept_signs(self.concepts[index], X, index)
        return predictions


def _concept_indices(indices, n_concepts):
    """The concept indices asked for, as intp (all if None), refused unless
    integers in [0, n_concepts): a float was truncated to a concept."""
    if indices is None:
        return np.arange(n_concepts)
    array = np.asarray(indices).reshape(-1)
    if not array.size:
        return array.astype(np.intp)
    if array.dtype.kind not in "iu":
        raise TypeError(
            f"Concept indices must be integers; got {array.dtype}: "
            f"{array[:5].tolist()}."
        )
    if array.min() < 0 or array.max() >= n_concepts:
        raise ValueError(
            f"Concept indices must be in [0, {n_concepts}); got "
            f"{array.min()} to {array.max()}."
        )
    return array.astype(np.intp)


def _plain_stumps(concepts):
    """Whether ``concepts`` predicts as the structure of DecisionStumps:
    one whose class overrides neither ``_predict_concepts`` nor
    ``stump_parameters``, which the compiled stumps and the ONNX vote read
    past."""
    return isinstance(concepts, DecisionStumps) and all(
        getattr(type(concepts), name) is getattr(DecisionStumps, name)
        for name in ("_predict_concepts", "stump_parameters")
    )


def _concept_signs(concept, X, index):
    """The +1/-1 predictions of one explicit concept on X."""
    if hasattr(concept, "predict"):
        check_is_fitted(concept)
        classes = getattr(concept, "classes_", None)
        if classes is None or len(classes) != 2:
            raise ValueError(
                f"Concept {index} must be a binary classifier with two classes_."
            )
        values = np.asarray(concept.predict(X)) == classes[1]
    else:
        values = np.asarray(concept(X))
    if values.shape != (X.shape[0],):
        raise ValueError(
            f"Concept {index} returned shape {values.shape} on {X.shape[0]} "
            f"samples; it must return one value per sample."
        )
    if values.dtype == bool:
        return _to_signs(values)
    if not np.isin(values, (-1, 1)).all():
        raise ValueError(
            f"Concept {index} returned values other than -1, +1, True, False: "
            f"{np.setdiff1d(values, (-1, 1))[:5].tolist()}."
        )
    return values.astype(np.int8)


def _sparse_format(concept_class):
    """The sparse format a class reads, "csr", or False if it reads none."""
    return "csr" if get_tags(concept_class).input_tags.sparse else False


def _to_signs(positive):
    return np.where(positive, np.int8(1), np.int8(-1))


def _check_boolean(X):
    if not np.isin(X.data if sp.issparse(X) else X, (0.0, 1.0)).all():
        raise ValueError(
            "Conjunctions need boolean samples: every feature 0 or 1 (or False/True)."
        )


def _check_size(concept_class, n_concepts, parameter):
    if n_concepts > MAX_ENUMERATED_CONCEPTS:
        raise ValueError(
            f"{type(concept_class).__name__}({parameter}="
            f"{getattr(concept_class, parameter)}) over "
            f"{concept_class.n_features_in_} features has {n_concepts} "
            f"concepts, more than the {MAX_ENUMERATED_CONCEPTS} that can be "
            "written out; use fewer features or a smaller "
            f"{parameter}."
        )
