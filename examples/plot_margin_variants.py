"""
======================================
The margins of the perceptron variants
======================================

Rosenblatt's perceptron stops at the first hyperplane that separates the
sample, however close it passes to the examples. The variants of "On the
Perceptron's Compression" keep updating while an example's margin is below a
threshold, and so stop further from the examples: the R-independent
perceptron (``beta="scale"``) is guaranteed a third of the optimal margin,
and the infinity-perceptron (``beta="power"``) approaches the optimum as
``alpha`` approaches 2, for more updates.

On a sample in the plane the optimal margin ``eps*`` can be found by trying
every direction, which lets us put each fitted margin next to its guarantee.
The price is in updates: the plain perceptron stops after a handful, the
infinity-perceptron with ``alpha=1.5`` after tens of thousands (and with
``alpha=1.7`` it does not stop within 100,000 epochs on this sample).
"""

# %%
# A separable sample, and its optimal margin
# ------------------------------------------
import matplotlib.pyplot as plt
import numpy as np

from skperc import MarginPerceptron

rng = np.random.RandomState(0)
direction = np.array([np.cos(0.4), np.sin(0.4)])
X = rng.uniform(-4, 4, size=(600, 2))
X = X[np.abs(X @ direction) > 0.25][:150]
y = np.where(X @ direction > 0, 1, -1)

angles = np.linspace(0, 2 * np.pi, 200_001)
units = np.column_stack([np.cos(angles), np.sin(angles)])
margins = (y[:, None] * (X @ units.T)).min(axis=0)
eps = margins.max()
R = np.linalg.norm(X, axis=1).max()
print(f"R = {R:.3f}, optimal margin eps* = {eps:.4f}")

# %%
# Fit each variant through the origin
# -----------------------------------
variants = {
    "beta=0": dict(beta=0.0),
    "beta=R^2": dict(beta=R**2),
    'beta="scale"': dict(beta="scale"),
    'beta="power", alpha=1.3': dict(beta="power", alpha=1.3),
    'beta="power", alpha=1.5': dict(beta="power", alpha=1.5),
}
guarantees = {
    "beta=0": 0.0,
    "beta=R^2": R**2 * eps / (2 * R**2 + R**2),
    'beta="scale"': eps / 3,
    'beta="power", alpha=1.3': 1.3 * eps / 2 - R * (eps / R) ** (1.3 / 0.7),
    'beta="power", alpha=1.5': 1.5 * eps / 2 - R * (eps / R) ** (1.5 / 0.5),
}
fitted = {}
for name, params in variants.items():
    clf = MarginPerceptron(
        **params, fit_intercept=False, max_iter=100_000, random_state=0
    )
    fitted[name] = clf.fit(X, y)
    print(
        f"{name:24} updates {clf.n_updates_[0]:6d}  margin {clf.margin_[0]:.4f}"
        f"  = {clf.margin_[0] / eps:.2f} eps*  (guaranteed >= "
        f"{max(guarantees[name], 0) / eps:.2f} eps*)"
    )

# %%
# The hyperplanes, and the margins against their guarantees
# ----------------------------------------------------------
fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.5))
left.scatter(*X.T, c=y, cmap="coolwarm", s=12, edgecolor="k", linewidth=0.3)
line = np.linspace(-R, R, 2)
for name, clf in fitted.items():
    w = clf.coef_[0] / np.linalg.norm(clf.coef_[0])
    left.plot(-w[1] * line, w[0] * line, label=name)
left.set(xlim=(-4, 4), ylim=(-4, 4), aspect="equal", title="Hyperplanes found")
left.legend(fontsize=8, loc="lower left")

names = list(fitted)
positions = np.arange(len(names))
right.bar(positions, [fitted[n].margin_[0] / eps for n in names], label="margin_")
right.scatter(
    positions,
    [max(guarantees[n], 0) / eps for n in names],
    color="k",
    marker="_",
    s=400,
    label="guarantee",
    zorder=3,
)
right.axhline(1, color="gray", linestyle="--", label="eps*")
right.set_xticks(positions, names, rotation=20, fontsize=8)
right.set(ylabel="margin / eps*", title="Margin of the output")
right.legend(fontsize=8)
fig.tight_layout()
plt.show()
