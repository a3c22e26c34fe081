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
        function = getattr(member, "__func__", member)
        if callable(function) and function.__doc__:
            function.__doc__ = _filled(function.__doc__)
    return cls
