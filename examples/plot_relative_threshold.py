"""
===================================================
A margin on the scale of the data: ``beta="auto"``
===================================================

The beta-perceptron updates on every example whose margin is below a
threshold ``beta``, which buys a margin of ``beta eps* / (2 beta + R^2)``
for at most ``(2 beta + R^2) / eps*^2`` updates. A constant ``beta`` is in
the units of the data squared: the same number asks for a wide margin on
data of small norms and for none on data of large ones.
:class:`~skperc.schedules.RelativeThreshold` ``(b)`` sets the threshold to
``b rho^2``, ``rho`` the largest norm seen so far: Theorem 1 then holds with
``beta = b R^2``, so at most ``(2 b + 1) (R / eps*)^2`` updates and a margin
of at least ``b eps* / (2 b + 1)``, and the classifier does not change when
the data is scaled. It is what ``beta="auto"``, the default of
:class:`~skperc.KernelPerceptron`, means: ``b = 0.25``, or ``b = 1`` in a
fit that a ``budget`` binds.
"""

# %%
# The same margin at every scale
# ------------------------------
# A separable sample of radius 1 and optimal margin 0.05, multiplied by
# factors from 0.01 to 100. On the small scales the constant threshold 0.25
# is large next to the squared norms: the run approaches the optimal margin,
# for many updates (at 0.01 it does not separate within 5,000 epochs, and
# no margin is drawn). On the large ones it is small next to them, and the
# run is nearly the plain perceptron. The relative threshold makes the same
# updates, to the same classifier, at every scale.
import time
import warnings

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import make_classification
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

from skperc import KernelPerceptron, MarginPerceptron
from skperc.datasets import make_margin_classification
from skperc.schedules import ConstantThreshold, RelativeThreshold

EPS = 0.05
X, y = make_margin_classification(300, 10, margin=EPS, random_state=0)
scales = np.logspace(-2, 2, 9)
schedules = {
    "beta=0.25": ConstantThreshold(0.25),
    'beta="auto": RelativeThreshold(0.25)': RelativeThreshold(0.25),
}
updates = {name: [] for name in schedules}
margins = {name: [] for name in schedules}
for name, schedule in schedules.items():
    for scale in scales:
        clf = MarginPerceptron(
            beta=schedule, fit_intercept=False, max_iter=5000, random_state=0
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            clf.fit(scale * X, y)
        updates[name].append(clf.n_updates_.sum())
        # the margin on the scale of the sample of radius 1
        margins[name].append(clf.margin_[0] / scale if clf.converged_ else np.nan)

fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
for name in schedules:
    left.loglog(scales, updates[name], "o-", label=name)
    right.semilogx(scales, margins[name], "o-", label=name)
right.axhline(EPS, color="gray", linestyle=":", label="optimal margin eps*")
right.axhline(
    0.25 * EPS / 1.5, color="gray", linestyle="--", label="guarantee of b = 0.25"
)
left.set(xlabel="scale of the data", ylabel="updates")
right.set(xlabel="scale of the data", ylabel="margin / scale")
left.legend()
right.legend(fontsize="small", loc="center right")
fig.tight_layout()

# %%
# The margin on noisy data
# ------------------------
# On data that is not separable, the margin is what keeps the function off
# the noise: the examples inside it keep updating while the run lasts, so
# that the function settles between the classes instead of on the last
# mistakes. Here the relative threshold's ``b`` against the test accuracy
# and the fit time of the kernel perceptron (with its other defaults,
# early stopping among them), on 10% flipped labels, next to SVC, averaged
# over five splits. On this sample ``b = 1`` is about two thirds of a point
# more accurate than ``b = 0.25``, for about 1.3 times the fit time (with
# the second fit that ``refit="auto"`` makes on these 3,000 training
# examples; a point without it): more examples update, and each update is
# a kernel column over the sample. ``"auto"`` keeps
# ``b = 0.25`` for that cost, which grows with the sample (at 10,000
# examples, ``b = 0.5`` took 2.4 times as long); pass
# ``beta=RelativeThreshold(1.0)`` where accuracy matters more than time.
X, y = make_classification(4000, 20, n_informative=10, flip_y=0.1, random_state=0)
X = StandardScaler().fit_transform(X)
splits = [train_test_split(X, y, random_state=seed) for seed in range(5)]

margins_b = [0.0, 0.1, 0.25, 0.5, 1.0, 2.0]
accuracy, seconds = [], []
for b in margins_b:
    scores, times = [], []
    for X_train, X_test, y_train, y_test in splits:
        clf = KernelPerceptron(beta=RelativeThreshold(b), random_state=0)
        start = time.perf_counter()
        clf.fit(X_train, y_train)
        times.append(time.perf_counter() - start)
        scores.append(clf.score(X_test, y_test))
    accuracy.append(np.mean(scores))
    seconds.append(np.median(times))
svc = np.mean(
    [
        SVC().fit(X_train, y_train).score(X_test, y_test)
        for X_train, X_test, y_train, y_test in splits
    ]
)

fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
left.plot(margins_b, accuracy, "o-", label="KernelPerceptron")
left.axhline(svc, color="gray", linestyle=":", label="SVC()")
left.axvline(0.25, color="gray", linestyle="--", label='"auto"')
right.plot(margins_b, seconds, "o-")
right.axvline(0.25, color="gray", linestyle="--")
left.set(xlabel="b of RelativeThreshold(b)", ylabel="mean test accuracy")
right.set(xlabel="b of RelativeThreshold(b)", ylabel="median fit seconds")
left.legend()
fig.tight_layout()
plt.show()
