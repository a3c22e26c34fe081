"""
=========================
The lift of the intercept
=========================

A perceptron learns an intercept by lifting every example ``x`` to
``(x, s)`` and separating the lifted sample by a hyperplane through the
origin. Footnote 1 of "On the Perceptron's Compression" warns that a lift
of ``s = 1`` can destroy the margin of data far from the origin: the points
999 and 1001, labelled +1 and -1, are 1 apart, but lifted to (999, 1) and
(1001, 1) they are almost on one line through the origin. A lift of the
order of the radius ``R`` of the data avoids the loss.

``MarginPerceptron`` offers two lifts that scale with the data:
``intercept_scaling="rms"``, the default, the root mean square of the norms
of the training examples, and ``"auto"``, the largest norm seen so far,
``R`` from the second epoch on. Both follow data far from the origin. They
differ on data that is not separable, where the intercept moves by
``s**2`` at every update: the last cell shows what that costs.
"""

# %%
# The paper's example
# -------------------
import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

from skperc import MarginPerceptron

X = np.array([[999.0], [1001.0]])
y = np.array([1, -1])
for scaling in [1.0, "rms", "auto"]:
    clf = MarginPerceptron(
        intercept_scaling=scaling, shuffle=False, max_iter=10**7, tol=None
    )
    clf.fit(X, y)
    print(
        f"intercept_scaling={scaling!r:6}: {clf.n_updates_[0]:7d} updates, "
        f"boundary at x = {-clf.intercept_[0] / clf.coef_[0, 0]:.2f}"
    )

# %%
# Two clouds far from the origin
# ------------------------------
# The further the data from the origin, the more updates a lift of 1 costs,
# while the lifts that follow the data do not care.
rng = np.random.RandomState(0)
offsets = [0, 5, 20, 80, 320]
updates = {1.0: [], "rms": [], "auto": []}
for offset in offsets:
    X = np.vstack(
        [
            rng.randn(50, 2) + [offset, offset + 4],
            rng.randn(50, 2) + [offset + 4, offset],
        ]
    )
    y = np.repeat([0, 1], 50)
    for scaling in updates:
        clf = MarginPerceptron(
            intercept_scaling=scaling, random_state=0, max_iter=10**6, tol=None
        ).fit(X, y)
        updates[scaling].append(clf.n_updates_[0])

fig, ax = plt.subplots(figsize=(6, 4))
for scaling, counts in updates.items():
    ax.plot(offsets, counts, "o-", label=f"intercept_scaling={scaling!r}")
ax.set(
    xscale="symlog",
    yscale="log",
    xlabel="distance of the clouds from the origin",
    ylabel="updates until separated",
)
ax.legend()
plt.show()

# %%
# Real data, not separable
# ------------------------
# On digits (one-vs-rest, standardized) no class is separated with a wide
# margin, and the stopping rule ends each run. With the lift ``R`` each
# update moves the intercept by ``R**2``, about 30 times a typical
# example's ``||x||**2`` here: the runs take longer to settle and predict
# worse than with the root mean square lift.
X, y = load_digits(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=0)
scaler = StandardScaler().fit(X_train)
X_train, X_test = scaler.transform(X_train), scaler.transform(X_test)
for scaling in [1.0, "rms", "auto"]:
    clf = MarginPerceptron(intercept_scaling=scaling, random_state=0)
    clf.fit(X_train, y_train)
    print(
        f"intercept_scaling={scaling!r:6}: {clf.n_iter_:3d} epochs, "
        f"test accuracy {clf.score(X_test, y_test):.3f}"
    )
