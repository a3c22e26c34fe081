"""
=============================================
Probabilities from the margin perceptrons
=============================================

The perceptrons have no ``predict_proba``: their decision values are
margins, whose scale the algorithm does not fix. scikit-learn's
:class:`~sklearn.calibration.CalibratedClassifierCV` turns them into
probabilities, as it does for :class:`~sklearn.linear_model.Perceptron` and
:class:`~sklearn.svm.LinearSVC`: it fits the perceptron on part of the
data and a sigmoid from its decision values to probabilities on the rest.

This example calibrates the margin variants (``beta`` 0, 1, ``"scale"``
and ``"power"``) on a noisy sample, draws their reliability diagrams with
:class:`~sklearn.calibration.CalibrationDisplay` and scores their
probabilities on held-out data.
"""

# %%
# A noisy sample
# --------------
# Two overlapping classes: no hyperplane separates them, so each perceptron
# runs its ``max_iter`` epochs and would warn; the warnings are silenced
# here. The averaged perceptron (``average=True``) gives steady weights on
# such data.
import warnings

import matplotlib.pyplot as plt
from sklearn.calibration import CalibratedClassifierCV, CalibrationDisplay
from sklearn.datasets import make_classification
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics import brier_score_loss, log_loss, roc_auc_score
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from skperc import MarginPerceptron

warnings.filterwarnings("ignore", category=ConvergenceWarning)

X, y = make_classification(
    n_samples=4000,
    n_features=20,
    n_informative=5,
    n_redundant=5,
    flip_y=0.05,
    class_sep=0.8,
    random_state=0,
)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.5, random_state=0)

# %%
# Calibrate each variant
# ----------------------
# Five folds: five perceptrons, each with a sigmoid fitted on the fold it
# did not see; ``predict_proba`` averages their probabilities.
variants = {
    "beta=0": 0.0,
    "beta=1": 1.0,
    'beta="scale"': "scale",
    'beta="power"': "power",
}
calibrated = {}
for name, beta in variants.items():
    perceptron = MarginPerceptron(beta=beta, average=True, max_iter=20, random_state=0)
    calibrated[name] = CalibratedClassifierCV(
        make_pipeline(StandardScaler(), perceptron), method="sigmoid", cv=5
    ).fit(X_train, y_train)

# %%
# Reliability diagrams
# --------------------
# A calibrated classifier puts its points on the diagonal: of the samples
# given a probability near ``p``, a fraction ``p`` are positive.
fig, ax = plt.subplots(figsize=(6, 6))
for name, clf in calibrated.items():
    CalibrationDisplay.from_estimator(clf, X_test, y_test, n_bins=10, name=name, ax=ax)
ax.set_title("Reliability of the calibrated perceptrons")
plt.show()

# %%
# Scores on held-out data
# -----------------------
# The log-loss and the Brier score measure the probabilities (lower is
# better); the ROC AUC measures how the decision values rank the samples,
# which calibration does not change. On this sample the four variants come
# out nearly alike: averaged over the epochs, their weights point in nearly
# the same direction, and the sigmoid absorbs the scale of their margins.
for name, clf in calibrated.items():
    proba = clf.predict_proba(X_test)[:, 1]
    print(
        f"{name:>14}: log-loss {log_loss(y_test, proba):.3f}, "
        f"Brier {brier_score_loss(y_test, proba):.3f}, "
        f"ROC AUC {roc_auc_score(y_test, proba):.3f}"
    )
