"""Early stopping on a stratified validation split, for the estimators
that offer ``early_stopping``."""

import numpy as np
from sklearn.model_selection import train_test_split


def check_validation_split(codes, validation_fraction):
    """Raise if the stratified validation split of early stopping cannot be
    made: it needs every class on both sides."""
    try:
        train_test_split(
            codes, test_size=validation_fraction, stratify=codes, random_state=0
        )
    except ValueError as error:
        raise ValueError(
            "early_stopping=True sets aside a stratified "
            f"validation_fraction={validation_fraction} of the training data, "
            f"with every class on both sides, which this sample cannot give: {error}"
        ) from error


def validation_split(codes, validation_fraction, random_state):
    """The training and validation parts of a sample labelled by ``codes``,
    as sorted indices."""
    check_validation_split(codes, validation_fraction)
    return tuple(
        np.sort(part)
        for part in train_test_split(
            np.arange(len(codes)),
            test_size=validation_fraction,
            stratify=codes,
            random_state=random_state,
        )
    )


def epochs_until_stalled(estimator, one_epoch, score, snapshot, may_separate=True):
    """The epochs of a fit with early stopping: ``one_epoch(epoch)`` trains
    an epoch on the training part and says whether it separated it; after
    one that did not, ``score()`` is the validation score, and
    ``snapshot()`` is taken when it is the best so far. Ends at an epoch
    that separates, ``n_iter_no_change`` epochs after the best score, or
    after ``max_iter`` epochs. A best score of 1 (no validation example
    wrong) is no sign of noise to stop on: it does not count down while
    the run ``may_separate`` its training part (not under a full budget,
    which keeps the function moving). Sets
    ``validation_scores_`` and
    ``best_validation_score_``; returns (the epochs run, whether the last
    separated, whether the score stalled, the snapshot of the best score or
    None)."""
    estimator.validation_scores_, estimator.best_validation_score_ = [], -np.inf
    best, since_best = None, 0
    for epoch in range(estimator.max_iter):
        if one_epoch(epoch):
            return epoch + 1, True, False, best
        value = score()
        estimator.validation_scores_.append(value)
        if estimator.verbose > 0:
            print(f"-- Validation score: {value:.6g}")
        if value > estimator.best_validation_score_:
            estimator.best_validation_score_, since_best = value, 0
            best = snapshot()
            continue
        since_best += not may_separate or estimator.best_validation_score_ < 1.0
        if since_best >= estimator.n_iter_no_change:
            return epoch + 1, False, True, best
    return estimator.max_iter, False, False, best


def weighted_accuracy(scores, codes, weight):
    """The accuracy of the one-vs-rest decision values ``scores``, of shape
    (n_samples, n_problems), on examples of class indices ``codes``,
    weighted by ``weight`` unless every weight is 0. As predict: a binary
    problem's value >= 0 is the second class; else the largest wins."""
    if scores.shape[1] == 1:
        predicted = (scores[:, 0] >= 0).astype(np.intp)
    else:
        predicted = scores.argmax(axis=1)
    return float(
        np.average(predicted == codes, weights=weight if weight.sum() > 0 else None)
    )
