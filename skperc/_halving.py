"""HalvingClassifier: the halving algorithm over a finite concept class."""

import math
from numbers import Integral

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted, validate_data

from ._atomic import atomic_fit, consistent_read
from ._base import (
    DecisionPredictMixin,
    blocks_in_working_memory,
    canonical,
    check_class_count,
    check_sparse_structure,
    checked_partial_fit_codes,
    converted_block_rows,
    encode_labels,
    first_class,
)
from ._compat import StrOptions, _fit_context
from ._doc_link import DocLinkMixin
from ._docs import fill_doc
from ._threads import thread_count
from .concepts import (
    ConceptClass,
    Conjunctions,
    DecisionStumps,
    IntegerHalfspaces,
    _sparse_format,
)

_NAMED_CONCEPTS = {
    "stumps": DecisionStumps,
    "conjunctions": Conjunctions,
    "halfspaces": IntegerHalfspaces,
}


@fill_doc
class HalvingClassifier(
    DocLinkMixin, DecisionPredictMixin, ClassifierMixin, BaseEstimator
):
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
        finite set (the thresholds of the stumps, for example; see
        ``value_range`` of :class:`~skperc.concepts.DecisionStumps` for
        a class fixed in advance). The concept class chooses how the
        version spaces are kept: decision stumps in a compiled structure,
        any other class as sets of live concepts.

    randomized : bool, default=False
        Whether to predict with a concept drawn uniformly at random from
        the version space (randomized halving) instead of the majority
        vote (halving, ties predicting +1). During training a new concept
        is drawn for each example; :meth:`predict` uses one concept drawn
        after the last training call, ``drawn_concept_``: the one that the
        next example of the run would be predicted with.

    random_state : int, RandomState instance or None, default=None
        The seed of the draws of ``randomized=True``. Pass an int for
        reproducible output across multiple function calls.

    n_jobs : int, default=None
        The number of threads running the one-vs-rest problems of a
        multiclass run, each thread a block of problems in its own pass
        over the data.
        {{n_jobs_count}}
        The result does not depend on ``n_jobs``.

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
    sample's own values, one threshold per feature), unless they are
    fixed in advance with ``DecisionStumps(value_range=(low, high))``.

    **Sparse input.** Decision stumps, conjunctions and integer halfspaces
    take sparse input (as CSR) and give the run of its dense array; the
    compiled stumps read the stored values only. ExplicitConcepts refuses
    it.

    **Memory.** The concept classes read C-ordered float64 rows: a fit
    copies other input (float32, a DataFrame's columns) into them, while
    :meth:`decision_function` and :meth:`predict` convert such rows, and
    count the votes of dense rows, a block of rows at a time, within
    scikit-learn's ``working_memory``; float64 CSR rows are read where
    they lie.

    **Threads.** A fit works on a copy of the model and publishes the new
    one in one step: a concurrent :meth:`predict` answers with the old
    model or the new one, and a fit that raises leaves the previous model
    (or an unfitted estimator) as it was. The fits of one estimator take a
    lock, so that concurrent :meth:`partial_fit` calls run one at a time.
    ``KeyboardInterrupt`` (Ctrl-C) stops a pass within milliseconds, in
    every thread, and leaves the previous model as well.

    The vote margins are not probabilities, and the classifier has no
    ``predict_proba``: for probabilities, wrap it in
    :class:`~sklearn.calibration.CalibratedClassifierCV` (see
    :ref:`probabilities`); with ``randomized=True`` the decision values are
    -1 and +1, and the calibration maps each to one probability.

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
    @atomic_fit
    def fit(self, X, y):
        """Run halving over the sample once, in order.

        Each example is predicted from the version space of the examples
        before it, then its label is learned: ``n_mistakes_`` counts the
        online mistakes.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training data.

        y : array-like of shape (n_samples,)
            Target values.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        X, y = self._validate(X, y, reset=True)
        classes, codes = encode_labels(y)
        check_class_count(self, classes)
        self._start_run(X, classes)
        return self._learn(X, codes)

    @_fit_context(prefer_skip_nested_validation=True)
    @atomic_fit
    def partial_fit(self, X, y, classes=None):
        """Continue the same run over a batch, in order.

        The first call fits the concept class on its batch (see the Notes).

        Parameters
        ----------
        {{partial_fit_batch}}

        Returns
        -------
        self : object
            The fitted estimator.
        """
        first_call = not hasattr(self, "classes_")
        X, y = self._validate(X, y, reset=first_call)
        run_classes, codes = checked_partial_fit_codes(self, y, classes, first_call)
        if first_call:
            self._start_run(X, run_classes)
            return self._learn(X, codes)
        # The pass writes into copies: the model this call continues stays
        # whole (and may be read-only, memory-mapped by joblib.load) until
        # the call publishes its own. Its random stream, which no read
        # uses, is wound back if the call fails, cheaper than a copy.
        self._spaces = self._spaces.copy()
        stream = self._rng.get_state()
        try:
            return self._learn(X, codes)
        except BaseException:
            self._rng.set_state(stream)
            raise

    @consistent_read
    def decision_function(self, X):
        """The vote margin of each one-vs-rest problem.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
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
        X = self._validate(X, reset=False, dtype=[np.float64, np.float32], order=None)
        scores = np.empty((X.shape[0], len(self.n_mistakes_)))
        # The concepts read C-ordered float64 rows: float32 rows, and dense
        # rows in another order (a DataFrame's, a slice of columns), are
        # converted a block at a time, and the votes of a block of rows are
        # counted in arrays of its size, within working_memory. CSR float64
        # rows are read where they lie: a slice of them would copy them.
        converts = X.dtype != np.float64 or not (sp.issparse(X) or X.flags.c_contiguous)
        if sp.issparse(X) and not converts:
            blocks = [slice(None)]
        else:
            row_bytes = 8 * X.shape[1] * converts + 32 * scores.shape[1]
            blocks = blocks_in_working_memory(
                X.shape[0],
                row_bytes,
                max_rows=converted_block_rows(X) if converts else None,
            )
        for block in blocks:
            rows = X if len(blocks) == 1 else X[block]
            if converts:
                rows = canonical(
                    rows.astype(np.float64)
                    if sp.issparse(rows)
                    else np.ascontiguousarray(rows, dtype=np.float64)
                )
            self._scores(rows, scores[block])
        return scores.ravel() if scores.shape[1] == 1 else scores

    def _scores(self, X, out):
        """decision_function's scores on validated float64 rows, in out."""
        if self.randomized:
            for problem, concept in enumerate(self.drawn_concept_):
                out[:, problem] = self.concepts_.predict(X, [concept])[:, 0]
            return
        # (2 |K+| - |K|) / |K|, in the array of the votes
        votes = self._spaces.positive_votes(X)
        votes *= 2
        votes -= self.version_space_size_
        np.divide(votes, self.version_space_size_, out=out)

    @consistent_read
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
        return self._spaces.members(problem)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = _sparse_format(self._concept_class()) == "csr"
        return tags

    def _concept_class(self):
        """The concept class the parameter names, unfitted or as given."""
        concepts = self.concepts
        return _NAMED_CONCEPTS[concepts]() if isinstance(concepts, str) else concepts

    def _validate(self, X, y="no_validation", reset=False, dtype=np.float64, order="C"):
        """validate_data, of rows of ``dtype`` in ``order``; a CSR X (where
        the class reads it) in canonical form, checked to index within its
        shape."""
        accept_sparse = _sparse_format(self._concept_class())
        validated = validate_data(
            self,
            X,
            y,
            reset=reset,
            accept_sparse=accept_sparse,
            dtype=dtype,
            order=order,
        )
        X = validated[0] if isinstance(validated, tuple) else validated
        if sp.issparse(X):
            # duplicate entries add up; the loops read each entry once
            X = canonical(check_sparse_structure(X))
            validated = (X, validated[1]) if isinstance(validated, tuple) else X
        return validated

    def _start_run(self, X, classes):
        """Fit the concept class and fill every version space."""
        # Only some runs set these: none of a previous run's may remain.
        for name in ("concept_mistakes_", "drawn_concept_"):
            self.__dict__.pop(name, None)
        self.classes_ = classes
        concepts = clone(self._concept_class())
        name = type(concepts).__name__
        fitted = concepts.fit(X)
        if fitted is not concepts:
            raise TypeError(f"{name}.fit must return self; it returned {fitted!r}.")
        self.concepts_ = concepts
        n_concepts = concepts.n_concepts
        if (
            isinstance(n_concepts, bool)
            or not isinstance(n_concepts, Integral)
            or n_concepts < 1
        ):
            raise ValueError(
                f"{name}.n_concepts must be a positive int; got {n_concepts!r}."
            )
        if getattr(self.concepts_, "n_features_in_", None) != X.shape[1]:
            raise ValueError(
                f"{name}.fit must record the number of features of its "
                f"samples, {X.shape[1]}, in n_features_in_ (validate_data "
                f"does); it has {getattr(self.concepts_, 'n_features_in_', None)}."
            )
        self.n_concepts_ = n_concepts
        self.mistake_bound_ = (
            math.log(n_concepts) + 1 if self.randomized else math.log2(n_concepts)
        )
        n_problems = 1 if len(classes) == 2 else len(classes)
        self._rng = check_random_state(self.random_state)
        self._next_draws = None
        self._spaces = self.concepts_._version_spaces(n_problems)

    def _learn(self, X, codes):
        """One online pass over a batch; codes index classes_."""
        spaces, rng = self._spaces, self._rng
        n_problems = len(spaces.n_mistakes)
        # Drawn in full even for the deterministic algorithm, so that the
        # random stream does not depend on the path taken. The first row is
        # the one the call before drew for drawn_concept_, if any: the stream
        # of the run's examples is then the same in any chunks.
        if self._next_draws is None:
            draws = rng.random_sample((X.shape[0], n_problems))
        else:
            draws = np.vstack(
                [self._next_draws, rng.random_sample((X.shape[0] - 1, n_problems))]
            )
        n_jobs = min(thread_count(self.n_jobs), n_problems)
        spaces.learn(
            X, codes, first_class(self.classes_), draws, self.randomized, n_jobs
        )
        concept_mistakes = spaces.concept_mistakes()
        if concept_mistakes is not None:
            self.concept_mistakes_ = concept_mistakes
        self.n_mistakes_ = spaces.n_mistakes.copy()
        self.fewest_mistakes_ = spaces.level.copy()
        self.version_space_size_ = spaces.sizes()
        if self.randomized:
            # The concepts that the next example would be predicted with: of
            # the draws it will take, kept for the next call.
            self._next_draws = rng.random_sample((1, n_problems))
            self.drawn_concept_ = np.array(
                [spaces.member(p, draw) for p, draw in enumerate(self._next_draws[0])],
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
