"""Docstring text that several estimators share, written once.

``fill_doc`` replaces each line ``{{name}}`` of the docstrings of a class
and of the methods it defines with the text of ``name`` here, indented as
the placeholder was.
"""

import re
import textwrap

SHARED = {
    "alpha": """
alpha : float, default=1.3
    The exponent of ``beta="power"``, in the open interval (1, 2); it is
    not used by the other thresholds. Values near 2 give margins near the
    optimum but need many more epochs.
""",
    "tol": """
tol : float or None, default=0.01
    The stopping rule for data that is not separable: :meth:`fit` ends a
    one-vs-rest problem whose sign mistakes (``y f(x) <= 0`` when visited)
    have not fallen below their fewest for ``n_iter_no_change`` epochs and
    whose function drifts less than ``tol`` per unit of update: no
    separator of margin ``tol * R`` exists then, ``R`` the radius of the
    (lifted) data. It never ends a run on a sample that has such a
    separator; see the Notes. ``None`` turns the rule off: the papers'
    algorithms, which stop only after an epoch without an update, or
    after ``max_iter`` epochs (with ``early_stopping=False`` on a sample
    that ``early_stopping="auto"`` splits, more than 2,000 examples).
""",
    "n_iter_no_change": """
n_iter_no_change : int, default=5
    The number of epochs without fewer sign mistakes that the stopping
    rule waits for.
""",
    "average_auto": """
average : bool or "auto", default="auto"
    Whether the model is the averaged perceptron of Freund and Schapire:
    the mean of the functions after every example visited, kept with the
    lazy-averaging trick (no work beyond the updates themselves). The
    updates, and so ``n_updates_`` and the stopping rules, follow the plain
    function. ``"auto"`` averages the problems that the stopping rule
    ended (on noisy data the last function is one guess among many, and
    the average of all of them predicts better). A problem that
    :meth:`fit` separated, with the rule on (``tol`` not None), answers
    with the point of the segment from its last function to the mean that
    lies furthest toward the mean while, scaled to the last function's
    norm, it keeps every training example at or above the threshold the
    last epoch passed: the two facts the theorems' margin rests on, so it
    keeps the theorem's margin, and it scored at or above the last
    function on every small data set measured (see "Which function a run
    answers with" in the user guide).
    The others, every problem of :meth:`partial_fit`, and the papers'
    algorithms (``tol=None``) keep the last function. The averaging sums take
    as much memory as the weights: ``average=False`` halves what a fit on
    very wide data holds.
""",
    "stop_reason_": """
stop_reason_ : {"separated", "no_improvement", "max_iter"}
    Why the last call stopped: every problem converged; the others were
    ended by the stopping rule (``tol``, or, with early stopping where the
    estimator has it, the validation score or the settled answer of
    :class:`~skperc.KernelPerceptron`); or some problem used up its
    epochs (``max_iter``, or the one epoch of :meth:`partial_fit`). Only
    ``"max_iter"`` in :meth:`fit` warns.
""",
    "stopping_notes": """
Real data is rarely separable, and then no epoch is free of updates. The
stopping rule (``tol``, ``n_iter_no_change``) ends such a run, and
``average="auto"`` answers with its averaged function. Each update moves
the function by ``a y x`` (``a`` the update's size), which advances it by
at least ``a eps*`` along any separator of margin ``eps*``: a function
that has moved less than ``tol * R`` per unit of update since the first
epoch, or since its last fewest sign mistakes, proves that the (lifted)
sample has no separator of margin ``tol * R``. So on a sample separable
with a margin above ``tol * R`` the run ends separated, with the
guarantees of its theorem; below it, the run may be ended with
``converged_=False`` and ``stop_reason_="no_improvement"``, and
``tol=None`` runs the papers' algorithm to separation. On a sample of more
than 2,000 examples the default stops on the score of a held-out part in
place of the rule (``early_stopping="auto"``): a run that separates its
training part has its theorem's guarantees there, and
``early_stopping=False`` trains on the whole sample.
""",
    "validation_fraction": """
validation_fraction : float, default=0.1
    The share of the training data set aside for early stopping, in the
    open interval (0, 1).
""",
    "validation_scores_": """
validation_scores_ : list of float or None
    With early stopping, the accuracy on the validation part after each
    epoch of the last :meth:`fit` (weighted by the sample and class
    weights); ``None`` without.

best_validation_score_ : float or None
    The best of ``validation_scores_``, which the fitted model scores;
    ``None`` without early stopping.
""",
    "shuffle": """
shuffle : bool, default=True
    Whether to shuffle the training data before each epoch.
""",
    "random_state": """
random_state : int, RandomState instance or None, default=None
    The seed of the shuffling, when ``shuffle=True``. Pass an int for
    reproducible output across multiple function calls.
""",
    "class_weight": """
class_weight : dict, "balanced" or None, default=None
    Weights of the classes, ``{class_label: weight}`` (finite, ``>= 0``),
    which multiply the update of every example of that class, in each
    one-vs-rest problem. ``"balanced"`` uses ``n_samples / (n_classes *
    np.bincount(y))``; it is not supported by :meth:`partial_fit`.
""",
    "warm_start": """
warm_start : bool, default=False
    Whether :meth:`fit` continues the previous run (its function, update
    counts, radius and averages) instead of starting a new one. The
    classes and the number of features must not change.
""",
    "verbose": """
verbose : int, default=0
    Print a line per epoch when ``> 0``.
""",
    "record_updates": """
record_updates : bool, default=False
    Record every update of each call to :meth:`fit` or :meth:`partial_fit`
    in ``updates_``: a diagnostic, such as the per-update trace of
    :func:`skperc.geometry.novikoff_trace`. Off by default, as the record
    grows with the number of updates.
""",
    "updates_": """
updates_ : ndarray of shape (n_updates, 4), dtype=int64
    With ``record_updates=True``, the updates of the last call in order,
    one row each: the index of the example in that call's ``X``, its sign
    (``+1`` or ``-1``, the example's label in the problem), the problem
    (the index in ``classes_`` for more than two classes, else 0) and the
    epoch (from 0). ``updates_[:, :2]`` of a binary run is what
    :func:`skperc.geometry.novikoff_trace` reads. ``None`` when not
    recorded. The updates of the averaging epoch that ends a fit of
    KernelPerceptron on a full budget are not recorded, though
    ``n_updates_`` counts them.
""",
    "partial_fit_batch": """
X : {array-like, sparse matrix} of shape (n_samples, n_features)
    A batch of training data.

y : array-like of shape (n_samples,)
    Target values of the batch.

classes : array-like of shape (n_classes,), default=None
    All the classes of the run. Required on the first call, and then equal
    to it if given again.
""",
    "classes_": """
classes_ : ndarray of shape (n_classes,)
    The class labels.
""",
    "n_updates_": """
n_updates_ : ndarray of shape (1,) or (n_classes,)
    The number of updates made by each one-vs-rest problem since the run
    began (the number of mistakes, with ``beta=0``).
""",
    "converged_": """
converged_ : bool
    Whether the last epoch of every one-vs-rest problem changed nothing:
    the training data of the last call is then separated with every
    margin above its threshold.
""",
    "n_features_in_": """
n_features_in_ : int
    Number of features seen during :meth:`fit`.

feature_names_in_ : ndarray of shape (`n_features_in_`,)
    Names of features seen during :meth:`fit`. Defined only when `X` has
    feature names that are all strings.
""",
    "n_jobs_count": """
``None`` means 1 unless in a :obj:`joblib.parallel_backend` context;
``-1`` means all processors, ``-2`` all but one. Both count at most the
threads that the OpenMP runtime offers: ``OMP_NUM_THREADS``, a limit of
threadpoolctl, or a share of the processors in each of joblib's process
workers (``GridSearchCV(n_jobs=-1)`` around an estimator of ``n_jobs=-1``
runs one thread in each worker when there are as many workers as
processors). A positive ``n_jobs`` is used as given.
""",
}

_PLACEHOLDER = re.compile(r"^( *)\{\{(\w+)\}\}$", re.MULTILINE)


def _filled(doc):
    def text(match):
        indent, name = match.groups()
        return textwrap.indent(SHARED[name].strip("\n"), indent)

    return _PLACEHOLDER.sub(text, doc)


def fill_doc(cls):
    """Fill the ``{{name}}`` lines of the docstrings of ``cls`` and of its
    methods with the shared text."""
    cls.__doc__ = _filled(cls.__doc__)
    for member in vars(cls).values():
        # methods, static or class methods, and available_if descriptors
        function = getattr(member, "__func__", getattr(member, "fn", member))
        if callable(function) and function.__doc__:
            function.__doc__ = _filled(function.__doc__)
    return cls
