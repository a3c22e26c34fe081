"""
==========================================================
Random projections keep the margin (robust concepts)
==========================================================

Section 6 of "On the Perceptron's Compression" follows Arriaga and Vempala:
a sample separated with margin ``eps`` (at radius 1) is a *robust concept*,
and a random Gaussian map ``x -> A x`` to ``k`` dimensions keeps it
separated. Because the perceptron compresses every such partition into at
most ``1 / eps^2`` examples, there are few of them (Theorem 7), and so one
map keeps all of them at once: with ``k`` of the order of
``log(n / delta) / eps^4``, every ``eps``-partition of the sample becomes an
``eps / 2``-partition of its image (Theorem 8).

Here scikit-learn's :class:`~sklearn.random_projection.GaussianRandomProjection`
plays ``A`` in a :class:`~sklearn.pipeline.Pipeline` before
:class:`~skperc.MarginPerceptron`, and :func:`skperc.metrics.margin` and
:func:`skperc.metrics.optimal_margin` measure what is kept as ``k`` shrinks.
Then :func:`skperc.geometry.projection_dimension` gives the ``k`` the
theorem asks for, and :func:`skperc.geometry.projection_margin_loss`
measures, for one projection, the worst margin over many
``eps``-partitions at once, on Example 1 of the paper
(:func:`skperc.datasets.make_basis_subsets`).
"""

# %%
# Margins after a projection to k dimensions
# -------------------------------------------
# Margins are relative to the radius of the projected sample, the scale
# the theorem speaks of.
import warnings
from math import comb, sqrt

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_digits
from sklearn.exceptions import DataDimensionalityWarning
from sklearn.pipeline import make_pipeline
from sklearn.random_projection import GaussianRandomProjection

from skperc import MarginPerceptron
from skperc.datasets import make_basis_subsets, make_margin_classification
from skperc.geometry import (
    projection_dimension,
    projection_margin_loss,
    robust_partitions_bound,
)
from skperc.metrics import margin, optimal_margin


def margins_after_projection(X, y, dimensions, n_draws=3):
    """Optimal and perceptron margins of the projected sample, relative to
    its radius, for each k: medians over several random maps, counting an
    image that is no longer separable as margin 0."""
    optimal, found = np.zeros((2, len(dimensions), n_draws))
    for i, k in enumerate(dimensions):
        for seed in range(n_draws):
            pipe = make_pipeline(
                GaussianRandomProjection(n_components=k, random_state=seed),
                MarginPerceptron(
                    beta="scale", fit_intercept=False, max_iter=50_000, tol=None
                ),
            )
            projected = pipe[0].fit_transform(X)
            radius = np.linalg.norm(projected, axis=1).max()
            try:
                optimal[i, seed] = optimal_margin(projected, y)[0] / radius
            except ValueError:
                continue
            pipe.fit(X, y)
            found[i, seed] = margin(pipe, X, y)[0] / radius
    return np.median(optimal, axis=1), np.median(found, axis=1)


X, y = make_margin_classification(200, 1000, margin=0.2, random_state=0)
digits = load_digits(n_class=2)
X_digits = digits.data / np.linalg.norm(digits.data, axis=1).max()
y_digits = digits.target
samples = {
    "make_margin_classification (d=1000)": (X, y, [1000, 300, 100, 30, 10]),
    "digits 0 against 1 (d=64)": (X_digits, y_digits, [64, 48, 32, 16]),
}
results = {}
for name, (data, labels, dimensions) in samples.items():
    eps = optimal_margin(data, labels)[0]
    optimal, found = margins_after_projection(data, labels, dimensions)
    results[name] = (eps, dimensions, optimal, found)
    print(f"{name}: eps* = {eps:.4f}")
    for k, best, got in zip(dimensions, optimal, found, strict=True):
        print(f"  k = {k:5d}  optimal {best:.4f}  perceptron {got:.4f}")

# %%
# Plot: the margin is kept down to small k
# ----------------------------------------
# The dashed line is ``eps* / 2``, what Theorem 8 promises for ``k`` large
# enough; the theorem's ``k`` is far larger than what the data needs here.
fig, axes = plt.subplots(1, 2, figsize=(11, 4))
for axis, (name, (eps, dimensions, optimal, found)) in zip(
    axes, results.items(), strict=True
):
    axis.plot(dimensions, optimal, "o-", label="optimal margin of the image")
    axis.plot(dimensions, found, "s-", label='MarginPerceptron(beta="scale")')
    axis.axhline(eps, color="gray", label="eps* before projection")
    axis.axhline(eps / 2, color="gray", linestyle="--", label="eps* / 2")
    axis.set(xscale="log", xlabel="k (projected dimension)", ylabel="margin / R")
    axis.set_title(name, fontsize=10)
    axis.legend(fontsize=8)
fig.tight_layout()
plt.show()

# %%
# Theorem 8 as a check: many partitions, one projection
# -----------------------------------------------------
# Example 1: the standard basis of R^n (lifted to norm 1), where every
# subset of ``size`` vectors is an ``eps``-partition with
# ``eps = 1 / sqrt(2 (4 size + 1))``; there are C(n, size) of them, close to
# the count that Theorem 7 allows. Each projection is measured on 300 random
# subsets at once: the smallest margin that the image ``A w`` of each
# subset's separator ``w`` keeps on the image of the sample (the quantity the
# theorem's proof bounds; the image's optimal margin can only be larger).
# The theorem's ``k`` does not depend on the dimension, and here exceeds it:
# the map then does not reduce the dimension, but still keeps the margins.
n, size, delta = 100, 2, 0.05
eps = 1 / sqrt(2 * (4 * size + 1))
X_basis = make_basis_subsets(n, size, random_state=0)[0]
subsets = np.array(
    [
        make_basis_subsets(n, size, random_state=seed, return_coef=True)[2]
        for seed in range(300)
    ]
)
required = projection_dimension(n, eps, delta)
print(
    f"eps = {eps:.4f}: C({n}, {size}) = {comb(n, size)} partitions, Theorem 7 "
    f"allows {float(robust_partitions_bound(n, eps)):.3g}; Theorem 8 asks for "
    f"k >= {required} (delta = {delta})"
)
dimensions = [10, 30, 100, 300, 1000, 3000, 10000]
worst = []
for k in dimensions:
    with warnings.catch_warnings():
        # k above the dimension: the regime of this check
        warnings.simplefilter("ignore", DataDimensionalityWarning)
        A = GaussianRandomProjection(n_components=k, random_state=0).fit(X_basis)
    # eps a hair lower: the subsets' margins are eps up to rounding
    measured = projection_margin_loss(A, X_basis, eps * (1 - 1e-9), directions=subsets)
    worst.append(measured.worst_margin)
    print(
        f"  k = {k:4d}: worst margin {measured.worst_margin / eps:6.3f} eps over "
        f"{measured.n_partitions} partitions, kept eps / 2: {measured.kept}"
    )

fig, ax = plt.subplots(figsize=(6, 4))
ax.plot(dimensions, np.array(worst) / eps, "o-", label="worst margin of the images")
ax.axhline(0.5, color="gray", linestyle="--", label="eps / 2 (Theorem 8)")
ax.set(
    xscale="log",
    xlabel="k (projected dimension)",
    ylabel="margin / eps",
    title=f"Example 1, n = {n}; the theorem's k is {required}",
)
ax.legend(fontsize=8)
fig.tight_layout()
plt.show()
