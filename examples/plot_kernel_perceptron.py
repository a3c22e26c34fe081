"""
=========================================
The kernel perceptron and its compression
=========================================

No line separates a disc from the ring around it, but the polynomial kernel
``(1 + x . x')^2`` of R. Livni's "Lecture 5: Linear Classification"
(Tel Aviv University) makes the circle ``x1^2 + x2^2 = r^2`` a
hyperplane of its feature space. :class:`~skperc.KernelPerceptron` runs the
perceptron there, and its output is a sum over the examples that made
updates: the support vectors, circled below.

The margin thresholds of :class:`~skperc.MarginPerceptron` apply in feature
space too: ``beta="scale"`` is guaranteed a third of the optimal margin, and
pushes the boundary away from both classes, for more support vectors.
"""

# %%
# A disc inside a ring
# --------------------
import warnings

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_iris
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics.pairwise import polynomial_kernel
from sklearn.preprocessing import StandardScaler

from skperc import KernelPerceptron, MarginPerceptron

rng = np.random.RandomState(0)
X = rng.uniform(-1.3, 1.3, size=(1200, 2))
radius = np.linalg.norm(X, axis=1)
X = X[(radius < 0.6) | (radius > 0.9)][:300]
y = np.where(np.linalg.norm(X, axis=1) < 0.6, 1, -1)

# The perceptron on the plane itself never stops: no line separates them.
line = MarginPerceptron(max_iter=100, random_state=0)
with warnings.catch_warnings():
    warnings.simplefilter("ignore", ConvergenceWarning)
    line.fit(X, y)
print(f"a line: converged={line.converged_}, accuracy {line.score(X, y):.2f}")

# %%
# The plain kernel perceptron and the R-independent one
# -----------------------------------------------------
kernel = dict(kernel="poly", degree=2, gamma=1.0, coef0=1.0, max_iter=10_000)
models = {
    "beta=0 (Rosenblatt)": KernelPerceptron(beta=0.0, random_state=0, **kernel),
    'beta="scale" (margin >= eps*/3)': KernelPerceptron(
        beta="scale", random_state=0, **kernel
    ),
}
grid = np.linspace(-1.4, 1.4, 300)
xx, yy = np.meshgrid(grid, grid)
points = np.column_stack([xx.ravel(), yy.ravel()])

fig, axes = plt.subplots(1, 2, figsize=(10, 4.8), sharey=True)
for ax, (name, model) in zip(axes, models.items(), strict=True):
    model.fit(X, y)
    scores = model.decision_function(points).reshape(xx.shape)
    ax.contourf(xx, yy, scores > 0, levels=1, colors=["#f4d6d6", "#d6e4f4"])
    ax.contour(xx, yy, scores, levels=[0], colors="k")
    ax.scatter(*X.T, c=y, cmap="coolwarm_r", s=10)
    ax.scatter(
        *model.support_vectors_.T, s=60, facecolors="none", edgecolors="k", lw=0.8
    )
    ax.set_title(
        f"{name}\n{len(model.support_)} support vectors, margin {model.margin_[0]:.4f}"
    )
    ax.set_aspect("equal")
    print(
        f"{name}: converged={model.converged_}, updates={model.n_updates_[0]}, "
        f"support vectors={len(model.support_)}, margin={model.margin_[0]:.4f}"
    )
plt.tight_layout()
plt.show()

# %%
# The support reconstructs the classifier
# ---------------------------------------
# The decision function is ``sum_j dual_coef_j k(x_j, x)`` over the support
# vectors alone: keeping them and their coefficients keeps the classifier.
model = models['beta="scale" (margin >= eps*/3)']
K = polynomial_kernel(points, model.support_vectors_, degree=2, gamma=1.0, coef0=1.0)
difference = K @ model.dual_coef_[0] - model.decision_function(points)
print(f"sum over the support minus decision_function: {np.abs(difference).max()}")

# %%
# How many epochs a small sample takes
# ------------------------------------
# On at most 2,000 examples a run goes on until an epoch makes no update, or
# until the stopping rule ends it, for at most ``max_iter`` epochs: 1000 by
# default, as for :class:`~skperc.MarginPerceptron` and scikit-learn's
# ``Perceptron``. Some small samples separate slowly: under the default RBF
# kernel the standardized iris takes some 350 to 390 epochs, a few
# milliseconds.
X_iris, y_iris = load_iris(return_X_y=True)
iris = KernelPerceptron(random_state=0).fit(
    StandardScaler().fit_transform(X_iris), y_iris
)
print(
    f"iris: {iris.stop_reason_} after {iris.n_iter_} of {iris.max_iter} epochs, "
    f"{len(iris.support_)} support vectors"
)
