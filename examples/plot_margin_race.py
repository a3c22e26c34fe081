"""
=========================================
The margin race: perceptrons against SVC
=========================================

Section 2 of "On the Perceptron's Compression" offers perceptrons whose
margin approaches the optimum ``eps*``: the R-independent perceptron
(``beta="scale"``, at least ``eps* / 3``) and the infinity-perceptron
(``beta="power"``, at least ``alpha eps* / 2`` minus a term that vanishes
with ``eps*``), and places them against the hard-margin SVM, which finds
``eps*`` itself. Here the race is run epoch by epoch on a separable sample
whose examples are not normalised (norms spread over ``[eps*, R]``): the
margin each perceptron's hyperplane has on the sample, as a fraction of
``eps*``, against the number of updates it has made.

``benchmarks/bench_margin_race.py`` runs the full race, with ALMA (Gentile
2001) in its original form and in river's, over margins ``eps* / R`` from
0.3 to 0.01, and times it.
"""

# %%
# The race, one epoch at a time
# -----------------------------
import warnings

import matplotlib.pyplot as plt
import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import SVC

from skperc import MarginPerceptron
from skperc.datasets import make_margin_classification
from skperc.metrics import margin

radius, ratio = 10.0, 0.1
eps = ratio * radius
X, y = make_margin_classification(200, 10, eps, radius, random_state=0)

runners = {
    "beta=1": dict(beta=1.0),
    'beta="scale"': dict(beta="scale"),
    'beta="power", alpha=1.3': dict(beta="power", alpha=1.3),
    'beta="power", alpha=1.5': dict(beta="power", alpha=1.5),
}
curves = {}
for name, params in runners.items():
    clf = MarginPerceptron(fit_intercept=False, random_state=0, **params)
    updates, fractions = [], []
    for _ in range(1000):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            clf.partial_fit(X, y, classes=[-1, 1])
        if updates and clf.n_updates_[0] == updates[-1]:
            break  # an epoch without update: the run has stopped
        updates.append(clf.n_updates_[0])
        fractions.append(margin(clf.coef_[0], X, y) / eps)
    curves[name] = (updates, fractions)
    print(f"{name:26} margin {fractions[-1]:6.3f} eps* after {updates[-1]} updates")

svc = SVC(kernel="linear", C=1e10).fit(X, y)
svc_fraction = margin(svc, X, y)[0] / eps
print(f"{'SVC(linear, C=1e10)':26} margin {svc_fraction:6.3f} eps*")

# %%
# Plot: margin against updates
# ----------------------------
# The SVM has an intercept, so its margin may exceed ``eps*``, the optimum
# through the origin. ``beta="scale"`` stops first, past ``eps* / 3``; the
# infinity-perceptron goes on, the closer to ``eps*`` the larger ``alpha``,
# at a price in updates that grows steeply with ``alpha`` (``alpha=1.7``
# takes beyond this example's budget; the benchmark runs it).
fig, ax = plt.subplots(figsize=(7, 4.5))
for name, (updates, fractions) in curves.items():
    ax.plot(updates, np.maximum(fractions, 0), label=name)
ax.axhline(svc_fraction, color="black", label="SVC (hard margin)")
ax.axhline(1 / 3, color="gray", linestyle=":", label="eps* / 3")
ax.set(
    xscale="log",
    ylim=(0, 1.1),
    xlabel="updates",
    ylabel="margin / eps* (negative shown as 0)",
    title=f"eps* / R = {ratio}, R = {radius}",
)
ax.legend(fontsize=8, loc="lower right")
fig.tight_layout()
plt.show()
