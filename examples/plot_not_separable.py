"""
==============================
When the data is not separable
==============================

On data that no hyperplane separates, the perceptron's own stopping rule
(an epoch without an update) never fires. :class:`~skperc.MarginPerceptron`
also stops when its sign mistakes have not decreased for
``n_iter_no_change`` epochs *and* its updates prove that no hyperplane
separates the training data with a margin above ``tol`` times the radius; it
then returns its averaged weights. On a sample of more than 2,000 examples
the default (``early_stopping="auto"``) stops on the score of a held-out
tenth of the training data instead. This example shows the epochs and the
test accuracy against ``tol`` and ``n_iter_no_change``, next to
scikit-learn's :class:`~sklearn.linear_model.Perceptron` and
:class:`~sklearn.linear_model.SGDClassifier` with the hinge loss, that
on a separable sample the default run still ends separated, and what a
second fit on the held-out tenth (``refit=True``) gains.
"""

# %%
# 20,000 noisy examples: two informative features, 5% of the labels
# flipped. No hyperplane separates them.
import time
import warnings

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import make_classification
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import Perceptron, SGDClassifier
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

from skperc import KernelPerceptron, MarginPerceptron
from skperc.datasets import make_margin_classification

X, y = make_classification(n_samples=20_000, n_features=50, flip_y=0.0, random_state=0)
flipped = np.random.RandomState(1).choice(len(y), size=len(y) // 20, replace=False)
y[flipped] = 1 - y[flipped]
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.3, random_state=0)
scaler = StandardScaler().fit(X_train)
X_train, X_test = scaler.transform(X_train), scaler.transform(X_test)


def report(estimator):
    start = time.perf_counter()
    estimator.fit(X_train, y_train)
    seconds = time.perf_counter() - start
    return (
        int(np.max(estimator.n_iter_)),
        seconds,
        estimator.score(X_test, y_test),
        getattr(estimator, "stop_reason_", "-"),
    )


# %%
# The rule on the training data alone (``early_stopping=False``), the
# papers' algorithm (``tol=None`` as well), which runs its ``max_iter``
# epochs here and warns, and the defaults, which on a sample of more than
# 2,000 examples stop on a held-out tenth of the training data in place of
# the rule.
rows = {
    "MarginPerceptron(early_stopping=False)": MarginPerceptron(
        early_stopping=False, random_state=0
    ),
    "MarginPerceptron(tol=None, early_stopping=False, max_iter=200)": (
        MarginPerceptron(tol=None, early_stopping=False, max_iter=200, random_state=0)
    ),
    "MarginPerceptron()": MarginPerceptron(random_state=0),
    "Perceptron()": Perceptron(random_state=0),
    'SGDClassifier(loss="hinge")': SGDClassifier(loss="hinge", random_state=0),
}
with warnings.catch_warnings():
    warnings.simplefilter("ignore", ConvergenceWarning)
    for name, estimator in rows.items():
        epochs, seconds, accuracy, reason = report(estimator)
        print(
            f"{name:62} {epochs:4} epochs {seconds:6.3f} s "
            f"accuracy {accuracy:.3f}  {reason}"
        )

# %%
# Epochs and accuracy against the rule's parameters (with
# ``early_stopping=False``, which leaves the rule in charge). A smaller ``tol``
# waits for a stronger proof that the data has no separator of margin
# above ``tol * R``; a larger ``n_iter_no_change`` waits longer for the sign
# mistakes to fall.
tols = [0.05, 0.02, 0.01, 0.005, 0.002]
patiences = [2, 5, 10, 20]
fig, (ax_epochs, ax_accuracy) = plt.subplots(1, 2, figsize=(10, 4))
for n_iter_no_change in patiences:
    results = [
        report(
            MarginPerceptron(
                tol=tol,
                n_iter_no_change=n_iter_no_change,
                early_stopping=False,
                random_state=0,
            )
        )
        for tol in tols
    ]
    label = f"n_iter_no_change={n_iter_no_change}"
    ax_epochs.plot(tols, [r[0] for r in results], "o-", label=label)
    ax_accuracy.plot(tols, [r[2] for r in results], "o-", label=label)
for ax in (ax_epochs, ax_accuracy):
    ax.set_xscale("log")
    ax.set_xlabel("tol")
for name in ["Perceptron()", 'SGDClassifier(loss="hinge")']:
    epochs, _, accuracy, _ = report(rows[name])
    ax_epochs.axhline(epochs, linestyle="--", color="gray")
    ax_accuracy.axhline(accuracy, linestyle="--", label=name, color="gray")
ax_epochs.set_ylabel("epochs")
ax_accuracy.set_ylabel("test accuracy")
ax_accuracy.legend(fontsize="small")
fig.tight_layout()

# %%
# On a separable sample the rule cannot fire before the run separates it
# when the margin is above ``tol`` times the radius: the runs end
# separated, with ``converged_`` True, for every threshold, including the
# infinity-perceptron, whose updates go on for thousands of epochs while it
# climbs towards the optimal margin (more than the default ``max_iter``
# here, so it gets more).
X_sep, y_sep = make_margin_classification(500, 10, margin=0.05, random_state=0)
for beta in [0.0, 1.0, "scale", "power"]:
    clf = MarginPerceptron(beta=beta, max_iter=50_000, random_state=0)
    clf.fit(X_sep, y_sep)
    print(
        f"beta={beta!s:6} {clf.n_iter_:5} epochs, {clf.stop_reason_}, "
        f"converged_={clf.converged_}, margin {clf.margin_[0]:.4f}"
    )

# %%
# Early stopping trains on nine tenths of the sample. Where the accuracy
# still grows with the sample, that tenth is worth a second fit:
# :class:`~skperc.KernelPerceptron` with ``refit=True`` fits again on the
# whole sample, the held-out part included, for the epochs of its best
# validation score. It reads from the first run's cache the kernel columns
# that run kept, so that it takes less time than the first; the default,
# ``refit="auto"``, makes it on samples of at most 5,000 examples, where
# that cache holds a column of every example.
for n in [3_000, 6_000]:
    for refit in [False, True]:
        clf = KernelPerceptron(refit=refit, random_state=0)
        start = time.perf_counter()
        clf.fit(X_train[:n], y_train[:n])
        seconds = time.perf_counter() - start
        print(
            f"{n:,} examples, refit={refit!s:5}: {clf.n_iter_:2} epoch(s), "
            f"{seconds:.2f} s, test accuracy {clf.score(X_test, y_test):.4f}"
        )
