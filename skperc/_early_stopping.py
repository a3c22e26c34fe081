"""Early stopping on a stratified validation split, for the estimators
that offer ``early_stopping``."""

import numpy as np
from sklearn.model_selection import train_test_split

# early_stopping="auto" splits samples larger than this: a validation part
# of at least 200 examples, whose score resolves half a point of accuracy
AUTO_SPLIT_SAMPLES = 2_000


def check_validation_split(codes, validation_fraction):
    """Raise if the stratified validation split of early stopping cannot be
    made: it needs every class on both sides."""
    validation_split(codes, validation_fraction, random_state=0)


def may_split(early_stopping, auto_splits):
    """Whether a fit with ``early_stopping`` splits its sample, where the
    split can be made: True always, "auto" where ``auto_splits`` holds."""
    return bool(early_stopping) and (early_stopping != "auto" or auto_splits)


def early_stopping_split(
    early_stopping, auto_splits, codes, validation_fraction, random_state
):
    """The training and validation parts (validation_split) on which a fit
    with ``early_stopping`` stops, or None for the stopping rule on the
    training data. True splits, or raises if the stratified split cannot be
    made; "auto" splits where ``auto_splits`` holds and the split can be
    made (not with a class of one example, say); False does not split."""
    if not may_split(early_stopping, auto_splits):
        return None
    try:
        return validation_split(codes, validation_fraction, random_state)
    except ValueError:
        if early_stopping == "auto":
            return None
        raise


def validation_split(codes, validation_fraction, random_state):
    """The training and validation parts of a sample labelled by ``codes``,
    as sorted indices; a ValueError that says why if the split cannot be
    made."""
    try:
        parts = train_test_split(
            np.arange(len(codes)),
            test_size=validation_fraction,
            stratify=codes,
            random_state=random_state,
        )
    except ValueError as error:
        raise ValueError(
            "early_stopping=True sets aside a stratified "
            f"validation_fraction={validation_fraction} of the training data, "
            f"with every class on both sides, which this sample cannot give: {error}"
        ) from error
    return tuple(np.sort(part) for part in parts)


# An epoch that changes the class the answer gives to at most this share of
# the training part ends a run (``changed`` of epochs_until_stalled): the
# answer has settled. On the clusters of benchmarks/bench_kernel_scale.py
# (medians of five seeds, one thread) a KernelPerceptron's runs then end
# after 7 to 11 epochs instead of 8 to 20 at 10,000 examples, in 0.32
# instead of 0.45 s for 0.9008 instead of 0.9025 test accuracy, and in 4.4
# instead of 7.5 s for 0.9226 instead of 0.9231 at 40,000; a share of 0.5%
# cost 0.35 point at 40,000 (three seeds).
SETTLED_SHARE = 0.0025


def epochs_until_stalled(
    estimator,
    one_epoch,
    score,
    snapshot,
    patience,
    may_separate=True,
    changed=None,
    n_scored=None,
):
    """The epochs of a fit with early stopping: ``one_epoch(epoch)`` trains
    an epoch on the training part and says whether it separated it; after
    one that did not, ``score()`` is the validation score, and
    ``snapshot()`` is taken when it is the best so far. Ends at an epoch
    that separates, ``patience`` epochs after the best score, at an
    epoch after which ``changed()``, if given, the share of the training
    part whose predicted class the epoch changed (None after the first), is
    at most SETTLED_SHARE, or after ``max_iter`` epochs. With ``n_scored``,
    the effective number of validation examples, a score starts the
    patience again only if it beats the best by more than the standard
    error of the best (standard_error), though the best is still taken. A
    best score of 1 (no validation example wrong) is no sign of noise to
    stop on: neither rule ends a run while it ``may_separate`` its training
    part (not under a full budget, which keeps the function moving). Sets
    ``validation_scores_`` and
    ``best_validation_score_``; returns (the epochs run, whether the last
    separated, whether the score stalled or the answer settled, the
    snapshot of the best score or None)."""
    estimator.validation_scores_, estimator.best_validation_score_ = [], -np.inf
    best, since_best = None, 0
    for epoch in range(estimator.max_iter):
        if one_epoch(epoch):
            return epoch + 1, True, False, best
        value = score()
        estimator.validation_scores_.append(value)
        if estimator.verbose > 0:
            print(f"-- Validation score: {value:.6g}")
        best_score = estimator.best_validation_score_
        gain = 0.0 if n_scored is None else standard_error(best_score, n_scored)
        since_best = 0 if value > best_score + gain else since_best + 1
        if value > best_score:
            estimator.best_validation_score_ = value
            best = snapshot()
        if may_separate and estimator.best_validation_score_ == 1.0:
            since_best = 0
            continue
        share = None if changed is None else changed()
        if share is not None and estimator.verbose > 0:
            print(f"-- Classes changed: {share:.2%} of the training part")
        settled = share is not None and share <= SETTLED_SHARE
        if settled or since_best >= patience:
            return epoch + 1, False, True, best
    return estimator.max_iter, False, False, best


def standard_error(accuracy, n_scored):
    """The standard error of an accuracy measured on ``n_scored`` examples,
    sqrt(p (1 - p) / n), with p = 1/2 before any score: an accuracy that
    falls within it of another is no evidence of a better function."""
    p = accuracy if np.isfinite(accuracy) else 0.5
    return float(np.sqrt(p * (1.0 - p) / n_scored))


def effective_size(weight):
    """The number of equally weighted examples whose weighted mean is as
    precise as a mean with ``weight``, (sum w)^2 / sum w^2 (Kish); the
    count of examples when every weight is 0, as weighted_share counts them."""
    squares = float(np.dot(weight, weight))
    if squares == 0:
        return float(len(weight))
    return float(weight.sum()) ** 2 / squares


def predicted_codes(scores):
    """The class indices that predict gives for the one-vs-rest decision
    values (or a network's outputs) ``scores``, of shape (n_samples,
    n_problems): a binary problem's value >= 0 is the second class; else the
    largest wins."""
    if scores.shape[1] == 1:
        return (scores[:, 0] >= 0).astype(np.intp)
    return scores.argmax(axis=1)


def weighted_share(mask, weight):
    """The share of the examples that ``mask`` marks, weighted by ``weight``
    unless every weight is 0."""
    return float(np.average(mask, weights=weight if weight.sum() > 0 else None))


def weighted_accuracy(scores, codes, weight):
    """The accuracy of the one-vs-rest decision values ``scores``, of shape
    (n_samples, n_problems), on examples of class indices ``codes``,
    weighted by ``weight`` unless every weight is 0."""
    return weighted_share(predicted_codes(scores) == codes, weight)
