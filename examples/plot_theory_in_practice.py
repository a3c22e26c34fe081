"""
=====================================================
The theorems, measured: hard instances and guarantees
=====================================================

Two theorems of the papers, put next to what the estimators do.

* Anthony and Shawe-Taylor: on the specifying sample ``S_n`` of the nested
  boolean function ``f_2n``, the perceptron with a learned threshold makes
  at least ``sqrt(3)^(n-1)`` updates before it is consistent, while a linear
  program finds a consistent halfspace at once.
* "On the Perceptron's Compression", Theorems 1 to 3: each margin variant
  stops with a margin at least its guarantee, computed by
  :func:`skperc.metrics.perceptron_bounds` from ``R`` and ``eps*``.
"""

# %%
# Updates on the nested boolean sample
# ------------------------------------
import math

import matplotlib.pyplot as plt
import numpy as np

from skperc import LinearProgramClassifier, MarginPerceptron
from skperc.datasets import make_margin_classification, make_nested_boolean
from skperc.metrics import perceptron_bounds

sizes = np.arange(1, 8)
updates, lp_iterations = [], []
for n in sizes:
    X, y = make_nested_boolean(n)
    # tol=None: the perceptron of the theorem, which runs until consistent
    perceptron = MarginPerceptron(
        intercept_scaling=1.0, shuffle=False, max_iter=10_000_000, tol=None
    ).fit(X, y)
    program = LinearProgramClassifier().fit(X, y)
    assert perceptron.score(X, y) == program.score(X, y) == 1.0
    updates.append(perceptron.n_updates_[0])
    lp_iterations.append(program.n_iter_[0])
    print(
        f"n = {n}: perceptron {updates[-1]:8d} updates "
        f"(>= sqrt(3)^(n-1) = {math.sqrt(3) ** (n - 1):5.1f}), "
        f"linear program: consistent, {lp_iterations[-1]} simplex iterations "
        "after presolve"
    )

# %%
# Margins against their guarantees
# ---------------------------------
X, y = make_margin_classification(300, 5, margin=0.05, random_state=0)
variants = {
    "beta=0": dict(beta=0.0),
    "beta=R^2": dict(beta=1.0),
    '"scale"': dict(beta="scale"),
    '"power", alpha=1.3': dict(beta="power", alpha=1.3),
    '"power", alpha=1.5': dict(beta="power", alpha=1.5),
}
achieved, guaranteed = [], []
for name, params in variants.items():
    clf = MarginPerceptron(
        **params, fit_intercept=False, max_iter=1_000_000, random_state=0, tol=None
    ).fit(X, y)
    bounds = perceptron_bounds(X, y, **params)
    achieved.append(clf.margin_[0] / bounds.optimal_margin)
    guaranteed.append(max(bounds.min_margin, 0) / bounds.optimal_margin)
    print(
        f"{name:20} updates {clf.n_updates_[0]:7d} <= {bounds.max_updates:9.0f}"
        f"   margin {achieved[-1]:.2f} eps* >= {guaranteed[-1]:.2f} eps*"
    )

# %%
# Plots
# -----
fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
left.semilogy(sizes, updates, "o-", label="perceptron updates")
left.semilogy(sizes, math.sqrt(3) ** (sizes - 1), "k--", label="sqrt(3)^(n-1)")
left.set(xlabel="n (sample size 2n + 1)", title="Consistent hypothesis on S_n")
left.legend(fontsize=8)
positions = np.arange(len(variants))
right.bar(positions, achieved, label="margin_ / eps*")
right.scatter(
    positions, guaranteed, color="k", marker="_", s=400, label="guarantee", zorder=3
)
right.set_xticks(positions, list(variants), rotation=20, fontsize=8)
right.set(ylabel="margin / eps*", title="Margin of the output")
right.legend(fontsize=8)
fig.tight_layout()
plt.show()
