"""HalvingClassifier: the halving algorithm over a finite concept class."""

import math
from numbers import Integral

import numpy as np
from joblib import Parallel, delayed, effective_n_jobs
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context, clone
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from ._base import check_class_count, classes_from_scores, partial_fit_codes
from ._halving_fast import run_stumps, stump_member, stump_votes
from .concepts import (
    ConceptClass,
    Conjunctions,
    DecisionStumps,
    IntegerHalfspaces,
)

_NAMED_CONCEPTS = {
    "stumps": DecisionStumps,
    "conjunctions": Conjunctions,
    "halfspaces": IntegerHalfspaces,
}

# Classes of at most this many concepts keep every concept's mistake count
# (concept_mistakes_), paid for by evaluating every concept on every example.
KEPT_MISTAKES_UP_TO = 2**16

# Concepts times samples evaluated at once, to bound the memory of a chunk.
_CHUNK = 2**22

_VALIDATION = dict(dtype=np.float64, order="C")


class HalvingClassifier(ClassifierMixin, BaseEstimator):
    """The halving algorithm and randomized halving over a finite class.

    The version space ``K`` starts as the whole finite concept class ``C``
    and holds the concepts consistent with every labeled example seen so
    far. On each example the algorithm predicts by majority vote over
    ``K`` (halving: at most ``log2 |C|`` mistakes on any sequence labeled
    by a concept of ``C``), or with one concept drawn at random from ``K``
    (randomized halving: at most ``ln |C| + 1`` mistakes in expectation);
    then it learns the label and removes from ``K`` the concepts that
    predicted it wrongly.

    Read more in the :ref:`User Guide <halving>`.

    Parameters
    ----------
    concepts : {"stumps", "conjunctions", "halfspaces"} or ConceptClass, \
            default="stumps"
        The finite concept class: a class of :mod:`skperc.concepts` (or a
        subclass of its base class), or the name of a default one:
        ``"stumps"`` is ``DecisionStumps()``, ``"conjunctions"`` is
        ``Conjunctions()`` and ``"halfspaces"`` is ``IntegerHalfspaces()``.
        A clone of it is fitted on the first training batch to fix its
        finite set (the thresholds of the stumps, for example).

    randomized : bool, default=False
        Whether to predict with a concept drawn uniformly at random from
        the version space (randomized halving) instead of the majority
        vote (halving, ties predicting +1). During training a new concept
        is drawn for each example; :meth:`predict` uses one concept drawn
        after the last training call, ``drawn_concept_``.

    random_state : int, RandomState instance or None, default=None
        The seed of the draws of ``randomized=True``. Pass an int for
        reproducible output across multiple function calls.

    n_jobs : int, default=None
        The number of threads running the one-vs-rest problems of a
        multiclass run, each thread a block of problems in its own pass
        over the data. ``None`` means 1 unless in a
        :obj:`joblib.parallel_backend` context; ``-1`` means all
        processors. The result does not depend on ``n_jobs``.

    verbose : int, default=0
        Print the mistakes and version space sizes after each training
        call when ``> 0``.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The class labels.

    concepts_ : ConceptClass
        The fitted concept class.

    n_concepts_ : int
        The number of concepts ``|C|``.

    version_space_size_ : ndarray of shape (1,) or (n_classes,)
        The size of the version space ``|K|`` of each binary problem.

    n_mistakes_ : ndarray of shape (1,) or (n_classes,)
        The online mistakes of each binary problem since the run began: the
        examples whose prediction, made before their label was learned, was
        wrong.

    mistake_bound_ : float
        The bound on the online mistakes of each binary problem on a
        sequence labeled by a concept of the class: ``log2 |C|``, or
        ``ln |C| + 1`` (in expectation over the draws) when randomized.

    fewest_mistakes_ : ndarray of shape (1,) or (n_classes,)
        The fewest mistakes made by a concept of the class on the examples
        of each binary problem: 0 while they are realizable by the class.

    concept_mistakes_ : ndarray of shape (1, n_concepts) or \
            (n_classes, n_concepts)
        The mistakes of every concept on the examples of each binary
        problem. Kept for decision stumps, and for other classes of at most
        ``KEPT_MISTAKES_UP_TO`` (65,536) concepts; not set otherwise.

    drawn_concept_ : ndarray of shape (1,) or (n_classes,)
        With ``randomized=True``, the index of the concept of each version
        space that :meth:`predict` uses.

    n_features_in_ : int
        Number of features seen during :meth:`fit`.

    feature_names_in_ : ndarray of shape (`n_features_in_`,)
        Names of features seen during :meth:`fit`. Defined only when `X`
        has feature names that are all strings.

    See Also
    --------
    skperc.concepts : The concept classes, and their protocol.
    skperc.MarginPerceptron : The perceptron, for halfspaces with a margin.

    Notes
    -----
    Binary problems label ``classes_[1]`` as ``+1``; a multiclass problem
    is one-vs-rest, every class learned in the same pass over the data.

    **Noisy data.** When no concept is consistent with the examples, the
    version space is the set of concepts with the fewest mistakes. This
    is the halving algorithm itself while some concept is consistent, and
    the version space is never empty. If the best concept of the class
    makes ``k`` mistakes on the sequence, halving makes at most
    ``(k + 1) log2 |C| + k`` mistakes: between two increases of the fewest
    count, each mistake at least halves the version space, and the fewest
    count rises only on a mistake of the whole version space.

    **Cost.** Only the live concepts are evaluated: the cost of a pass
    follows ``sum_t |K_t|``, not ``m |C|``. Decision stumps use their
    structure: the live stumps of a feature and sign form an interval of
    the sorted thresholds, so a vote, an update and a draw cost
    ``O(n_features log n_thresholds)`` per example whatever the size of
    ``K``, and every stump's mistake count is kept in ``O(n_features)`` per
    example. When a label refutes the whole version space, the version
    space restarts from the concepts with the fewest mistakes: ``O(|C|)``
    for stumps; for the other classes, every concept is evaluated on the
    examples since the previous restart, which are kept for that purpose
    (the samples of the run, when it stays realizable and the class is
    larger than ``KEPT_MISTAKES_UP_TO``).

    **partial_fit first.** When :meth:`partial_fit` starts the run, the
    concept class is fitted on its first batch: the thresholds of the
    stumps are the quantiles of that batch (for a single sample, the
    sample's own values, one threshold per feature).

    References
    ----------
    .. [1] N. Littlestone, "Learning quickly when irrelevant attributes
       abound: a new linear-threshold algorithm", Machine Learning 2, 1988.
    .. [2] R. Servedio and S. O. Chan, "Perceptron and Halving
       algorithms", Notes 3 of CSCI4230 Computational Learning Theory,
       sections 3 and 4.

    Examples
    --------
    Boolean data labeled by the conjunction ``x0 and not x2``: halving
    finds it within ``log2 |C| = 5 log2 3`` mistakes.

    >>> import numpy as np
    >>> from skperc import HalvingClassifier
    >>> X = np.random.RandomState(0).randint(2, size=(200, 5))
    >>> y = X[:, 0] & (1 - X[:, 2])
    >>> clf = HalvingClassifier(concepts="conjunctions").fit(X, y)
    >>> int(clf.n_mistakes_[0]) <= clf.mistake_bound_, clf.score(X, y)
    (True, 1.0)
    >>> clf.version_space_size_
    array([1])
    """

    _parameter_constraints: dict = {
        "concepts": [StrOptions(set(_NAMED_CONCEPTS)), ConceptClass],
        "randomized": ["boolean"],
        "random_state": ["random_state"],
        "n_jobs": [Integral, None],
        "verbose": ["verbose"],
    }

    def __init__(
        self,
        *,
        concepts="stumps",
        randomized=False,
        random_state=None,
        n_jobs=None,
        verbose=0,
    ):
        self.concepts = concepts
        self.randomized = randomized
        self.random_state = random_state
        self.n_jobs = n_jobs
        self.verbose = verbose

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Run halving over the sample once, in order.

        Each example is predicted from the version space of the examples
        before it, then its label is learned: ``n_mistakes_`` counts the
        online mistakes.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Training data.

        y : array-like of shape (n_samples,)
            Target values.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        X, y = validate_data(self, X, y, reset=True, **_VALIDATION)
        check_classification_targets(y)
        classes, codes = np.unique(y, return_inverse=True)
        check_class_count(self, classes)
        self._start_run(X, classes)
        return self._learn(X, codes)

    @_fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X, y, classes=None):
        """Continue the same run over a batch, in order.

        The first call fits the concept class on its batch (see the Notes).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            A batch of training data.

        y : array-like of shape (n_samples,)
            Target values of the batch.

        classes : array-like of shape (n_classes,), default=None
            All the classes of the run. Required on the first call, and
            then equal to it if given again.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        first_call = not hasattr(self, "classes_")
        X, y = validate_data(self, X, y, reset=first_call, **_VALIDATION)
        check_classification_targets(y)
        run_classes, codes = partial_fit_codes(self, y, classes, first_call)
        if first_call:
            self._start_run(X, run_classes)
        return self._learn(X, codes)

    def decision_function(self, X):
        """The vote margin of each one-vs-rest problem.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The data.

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
            ``(|K+| - |K-|) / |K|``, where ``K+`` and ``K-`` are the
            concepts of the version space predicting +1 and -1; for a binary
            problem, positive values favour ``classes_[1]``. With
            ``randomized=True``, the prediction (+1 or -1) of the drawn
            concept.
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, **_VALIDATION)
        if self.randomized:
            scores = np.column_stack(
                [
                    self.concepts_.predict(X, [concept])[:, 0]
                    for concept in self.drawn_concept_
                ]
            ).astype(np.float64)
        else:
            positive = self._positive_votes(X)
            size = self.version_space_size_
            scores = (2 * positive - size) / size
        return scores.ravel() if scores.shape[1] == 1 else scores

    def predict(self, X):
        """Predict a class for each sample.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            The data.

        Returns
        -------
        y_pred : ndarray of shape (n_samples,)
            ``classes_[1]`` where the binary vote margin is ``>= 0`` (a tie
            predicts +1), else ``classes_[0]``; with several classes, the
            class of the largest vote margin.
        """
        scores = self.decision_function(X)
        return classes_from_scores(self.classes_, scores)

    def version_space(self, problem=0):
        """The indices of the concepts in a version space.

        Parameters
        ----------
        problem : int, default=0
            The binary problem: 0 for a binary run, the index of the class
            in ``classes_`` for a one-vs-rest run.

        Returns
        -------
        indices : ndarray of shape (version_space_size_[problem],)
            The indices in ``concepts_`` of the concepts of the version
            space, in increasing order.
        """
        check_is_fitted(self)
        if not 0 <= problem < len(self.n_mistakes_):
            raise ValueError(
                f"problem must be in [0, {len(self.n_mistakes_)}); got {problem}."
            )
        if not self._structured:
            return self._live[problem].copy()
        stumps = self.concepts_
        prefix = self._prefix[problem]
        inside = np.zeros(stumps.n_concepts, dtype=bool)
        intervals = zip(self._lo[problem], self._hi[problem], strict=True)
        for block, (low, high) in enumerate(intervals):
            start = _block_start(stumps.threshold_ptr_, block)
            inside[start + low : start + high] = True
        return np.flatnonzero(inside & (np.diff(prefix) == 1))

    def _start_run(self, X, classes):
        """Fit the concept class and fill every version space."""
        # Only some runs set these: none of a previous run's may remain.
        for name in ("concept_mistakes_", "drawn_concept_"):
            self.__dict__.pop(name, None)
        self.classes_ = classes
        concepts = self.concepts
        if isinstance(concepts, str):
            concepts = _NAMED_CONCEPTS[concepts]()
        self.concepts_ = clone(concepts).fit(X)
        n_concepts = self.concepts_.n_concepts
        if n_concepts < 1:
            raise ValueError(f"{type(self.concepts_).__name__} has no concepts.")
        self.n_concepts_ = n_concepts
        self.mistake_bound_ = (
            math.log(n_concepts) + 1 if self.randomized else math.log2(n_concepts)
        )
        n_problems = 1 if len(classes) == 2 else len(classes)
        self._rng = check_random_state(self.random_state)
        self._structured = isinstance(self.concepts_, DecisionStumps)
        self.n_mistakes_ = np.zeros(n_problems, dtype=np.int64)
        self._level = np.zeros(n_problems, dtype=np.int64)
        if self._structured:
            ptr = self.concepts_.threshold_ptr_
            sizes = np.repeat(np.diff(ptr), 2)
            self._diff = np.zeros((n_problems, n_concepts + 1), dtype=np.int64)
            self._prefix = np.tile(np.arange(n_concepts + 1), (n_problems, 1))
            self._lo = np.zeros((n_problems, len(sizes)), dtype=np.int64)
            self._hi = np.tile(sizes, (n_problems, 1))
        else:
            self._live = [np.arange(n_concepts) for _ in range(n_problems)]
            self._counts = np.zeros((n_problems, n_concepts), dtype=np.int64)
            # The examples since the oldest restart, for the next restarts.
            self._history = _History(X.shape[1], n_problems)

    def _learn(self, X, codes):
        """One online pass over a batch; codes index classes_."""
        codes = codes.astype(np.int32, copy=False)
        n_problems = len(self.n_mistakes_)
        # Drawn in full even for the deterministic algorithm, so that the
        # random stream does not depend on the path taken.
        draws = self._rng.random_sample((X.shape[0], n_problems))
        first_class = 1 if len(self.classes_) == 2 else 0
        learn_block = self._learn_stumps if self._structured else self._learn_listed
        if not self._structured:
            self._history.append(X, codes)
        n_blocks = min(effective_n_jobs(self.n_jobs), n_problems)
        # The blocks update this estimator's arrays in place: a process
        # backend set by the caller (loky, dask) must not take them.
        Parallel(n_jobs=n_blocks, require="sharedmem")(
            delayed(learn_block)(X, codes, first_class, problems, draws)
            for problems in _contiguous_blocks(n_problems, n_blocks)
        )
        if self._structured:
            counts = np.cumsum(self._diff[:, :-1], axis=1)
            self.concept_mistakes_ = counts
            self.fewest_mistakes_ = self._level.copy()
            self.version_space_size_ = self._stump_votes(
                np.zeros((0, self.n_features_in_))
            )[1]
        else:
            if self.n_concepts_ <= KEPT_MISTAKES_UP_TO:
                for p in range(n_problems):
                    self._catch_up(p, first_class)
                self.concept_mistakes_ = self._counts.copy()
            self._history.forget_before(self._history.checkpoints.min())
            self.fewest_mistakes_ = self._level.copy()
            self.version_space_size_ = np.array(
                [len(live) for live in self._live], dtype=np.int64
            )
        if self.randomized:
            self.drawn_concept_ = np.array(
                [
                    self._member(p, draw)
                    for p, draw in enumerate(self._rng.random_sample(n_problems))
                ],
                dtype=np.intp,
            )
        if self.verbose:
            for p in range(n_problems):
                print(
                    f"problem {p}: {self.n_mistakes_[p]} mistakes, version "
                    f"space of {self.version_space_size_[p]} concepts with "
                    f"{self.fewest_mistakes_[p]} mistakes each"
                )
        return self

    def _learn_stumps(self, X, codes, first_class, problems, draws):
        stumps = self.concepts_
        run_stumps(
            X,
            codes,
            first_class + problems.start,
            stumps.thresholds_,
            stumps.threshold_ptr_,
            self._diff[problems],
            self._prefix[problems],
            self._lo[problems],
            self._hi[problems],
            self._level[problems],
            self.n_mistakes_[problems],
            np.ascontiguousarray(draws[:, problems]),
            self.randomized,
        )

    def _learn_listed(self, X, codes, first_class, problems, draws):
        """Halving over an index set of live concepts, one example at a time."""
        concepts = self.concepts_
        start = self._history.stop - X.shape[0]
        for p in range(problems.start, problems.stop):
            live = self._live[p]
            labels = np.where(codes == first_class + p, 1, -1)
            for i, label in enumerate(labels):
                predictions = concepts._predict_concepts(X[i : i + 1], live)[0]
                if self.randomized:
                    guess = predictions[_rank(draws[i, p], len(live))]
                else:
                    guess = (
                        1 if 2 * np.count_nonzero(predictions > 0) >= len(live) else -1
                    )
                self.n_mistakes_[p] += guess != label
                live = live[predictions == label]
                if not len(live):
                    self._live[p] = live
                    self._restart(p, first_class, start + i + 1)
                    live = self._live[p]
            self._live[p] = live

    def _restart(self, p, first_class, stop):
        """The concepts with the fewest mistakes on the examples before stop
        become the version space of problem p."""
        self._catch_up(p, first_class, stop)
        self._level[p] = self._counts[p].min()
        self._live[p] = np.flatnonzero(self._counts[p] == self._level[p])

    def _catch_up(self, p, first_class, stop=None):
        """Add to the counts of problem p the mistakes of every concept on
        the kept examples from its last checkpoint to stop."""
        history = self._history
        stop = history.stop if stop is None else stop
        X, codes = history.since(history.checkpoints[p], stop)
        labels = np.where(codes == first_class + p, 1, -1)
        n_concepts = self.n_concepts_
        width = max(1, _CHUNK // max(1, len(labels)))
        for first in range(0, n_concepts, width):
            indices = np.arange(first, min(first + width, n_concepts))
            predictions = self.concepts_._predict_concepts(X, indices)
            self._counts[p, indices] += np.count_nonzero(
                predictions != labels[:, None], axis=0
            )
        history.checkpoints[p] = stop

    def _stump_votes(self, X):
        """The stumps of each version space voting +1 on each sample, and
        the size of each version space."""
        n_problems = len(self.n_mistakes_)
        positive = np.zeros((X.shape[0], n_problems), dtype=np.int64)
        size = np.zeros(n_problems, dtype=np.int64)
        stumps = self.concepts_
        stump_votes(
            X,
            stumps.thresholds_,
            stumps.threshold_ptr_,
            self._prefix,
            self._lo,
            self._hi,
            positive,
            size,
        )
        return positive, size

    def _member(self, p, draw):
        """The version space member of rank floor(draw |K|) of problem p."""
        if self._structured:
            return stump_member(
                self.concepts_.threshold_ptr_,
                self._prefix[p],
                self._lo[p],
                self._hi[p],
                draw,
            )
        live = self._live[p]
        return live[_rank(draw, len(live))]

    def _positive_votes(self, X):
        """The members of each version space predicting +1 on each sample."""
        if self._structured:
            return self._stump_votes(X)[0]
        positive = np.zeros((X.shape[0], len(self.n_mistakes_)), dtype=np.int64)
        for p, live in enumerate(self._live):
            width = max(1, _CHUNK // max(1, X.shape[0]))
            for first in range(0, len(live), width):
                predictions = self.concepts_._predict_concepts(
                    X, live[first : first + width]
                )
                positive[:, p] += np.count_nonzero(predictions > 0, axis=1)
        return positive


class _History:
    """The examples of a run from the oldest checkpoint on, in batches."""

    def __init__(self, n_features, n_problems):
        self.batches = []
        self.start = 0
        self.stop = 0
        # where each problem's counts stand: the examples before are counted
        self.checkpoints = np.zeros(n_problems, dtype=np.int64)
        self.n_features = n_features

    def append(self, X, codes):
        self.batches.append((X, codes))
        self.stop += X.shape[0]

    def since(self, first, stop):
        rows, labels, offset = [], [], self.start
        for X, codes in self.batches:
            low, high = max(first - offset, 0), min(stop - offset, X.shape[0])
            if low < high:
                rows.append(X[low:high])
                labels.append(codes[low:high])
            offset += X.shape[0]
        if not rows:
            return np.zeros((0, self.n_features)), np.zeros(0, dtype=np.int32)
        return np.concatenate(rows), np.concatenate(labels)

    def forget_before(self, first):
        while self.batches and self.start + self.batches[0][0].shape[0] <= first:
            self.start += self.batches.pop(0)[0].shape[0]


def _rank(draw, size):
    """floor(draw * size) for a draw in [0, 1), kept below size."""
    return min(int(draw * size), size - 1)


def _block_start(threshold_ptr, block):
    feature = block // 2
    size = threshold_ptr[feature + 1] - threshold_ptr[feature]
    return 2 * threshold_ptr[feature] + (block % 2) * size


def _contiguous_blocks(n_items, n_blocks):
    bounds = np.linspace(0, n_items, n_blocks + 1).astype(int)
    return [slice(low, high) for low, high in zip(bounds[:-1], bounds[1:], strict=True)]
