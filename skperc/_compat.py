"""The private parts of scikit-learn that skperc uses, imported in one place.

scikit-learn may move or change its private modules in any release; a
release that does breaks this file only. Each name here is used as
scikit-learn's own estimators use it.
"""

import numpy as np
from sklearn.base import _fit_context
from sklearn.neural_network._stochastic_optimizers import AdamOptimizer, SGDOptimizer
from sklearn.utils._chunking import get_chunk_n_rows
from sklearn.utils._param_validation import (
    Interval,
    Options,
    StrOptions,
    validate_params,
)
from sklearn.utils.validation import _check_feature_names, _check_sample_weight

__all__ = [
    "AdamOptimizer",
    "Interval",
    "Options",
    "SGDOptimizer",
    "StrOptions",
    "_check_feature_names",
    "_check_sample_weight",
    "_fit_context",
    "get_chunk_n_rows",
    "validate_params",
    "with_unique",
]


def with_unique(y, unique):
    """A view of the array ``y`` that carries its sorted distinct values
    ``unique``, where scikit-learn's ``attach_unique`` leaves them: its
    label checks (``type_of_target``) then read them rather than sort
    ``y`` again. A release that does not read them sorts ``y`` itself."""
    return y.view(np.dtype(y.dtype, metadata={"unique": unique}))
