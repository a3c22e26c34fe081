"""The class checks and warnings that the perceptrons share."""

import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.multiclass import unique_labels

from ._nonfinite import raise_non_finite


def check_class_count(estimator, classes):
    if len(classes) < 2:
        raise ValueError(
            f"{type(estimator).__name__} needs samples of at least 2 classes; "
            f"got 1 class: {classes.tolist()}."
        )


def partial_fit_codes(estimator, y, classes, first_call):
    """The classes of a partial_fit run and the index of each y in them.

    ``classes`` is required on the first call and must not change after it;
    every label of ``y`` must be one of them.
    """
    if first_call:
        if classes is None:
            raise ValueError("classes must be passed on the first call to partial_fit.")
        run_classes = unique_labels(classes)
        check_class_count(estimator, run_classes)
    else:
        run_classes = estimator.classes_
        if classes is not None and not np.array_equal(
            unique_labels(classes), run_classes
        ):
            raise ValueError(
                f"classes={unique_labels(classes).tolist()} is not the same "
                f"as on the first call to partial_fit, {run_classes.tolist()}."
            )
    codes = class_codes(
        run_classes,
        y,
        f"classes {run_classes.tolist()}, given on the first call to partial_fit",
    )
    return run_classes, codes


def class_codes(classes, y, named):
    """The index in the sorted ``classes`` of each label of ``y``, which must
    all be among them; ``named`` names the classes in the error."""
    codes = np.searchsorted(classes, y)
    known = codes < len(classes)
    known[known] = classes[codes[known]] == y[known]
    if not known.all():
        raise ValueError(
            f"y holds labels {np.unique(y[~known]).tolist()} that are not in {named}."
        )
    return codes


def warn_not_converged(estimator):
    """The ConvergenceWarning of a fit that used up max_iter epochs."""
    warnings.warn(
        f"{type(estimator).__name__} reached max_iter={estimator.max_iter} "
        "epochs with updates in the last one: the training data may not be "
        "separable with the margin the threshold asks for. Consider "
        "increasing max_iter.",
        ConvergenceWarning,
        # point at the caller of fit, past fit and its _fit_context wrapper
        stacklevel=4,
    )


def check_finite_scores(scores):
    """``scores``, checked: a decision value beyond the float range (or NaN,
    from inf - inf in a sum on huge input) raises rather than predict a
    class from it."""
    if not np.isfinite(scores).all():
        raise_non_finite(
            "a decision value",
            "on this input",
            "to the range the model was trained on",
        )
    return scores


def classes_from_scores(classes, scores):
    """The predicted classes: ``classes[1]`` where a binary decision value is
    ``>= 0`` (``sign(0) = +1``), else the class of the largest value."""
    if scores.ndim == 1:
        return classes[(scores >= 0).astype(np.intp)]
    return classes[scores.argmax(axis=1)]
