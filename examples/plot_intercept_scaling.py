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

``MarginPerceptron`` uses ``intercept_scaling="auto"`` by default: the lift
is the largest norm seen so far, ``R`` from the second epoch on.
"""

# %%
# The paper's example
# -------------------
import matplotlib.pyplot as plt
import numpy as np

from skperc import MarginPerceptron

X = np.array([[999.0], [1001.0]])
y = np.array([1, -1])
for scaling in [1.0, "auto"]:
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
# while the automatic lift does not care.
rng = np.random.RandomState(0)
offsets = [0, 5, 20, 80, 320]
updates = {1.0: [], "auto": []}
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
