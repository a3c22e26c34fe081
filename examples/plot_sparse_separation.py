"""
=================================================
Sparse separation of convex hulls (Lemma 1)
=================================================

Lemma 1 of "On the Perceptron's Compression": for two convex bodies ``K``
and ``L`` (scaled so that the largest distance between a point of ``K``
and a point of ``L`` is 1) and any ``eps > 0``, either the bodies are closer
than ``eps``, or a hyperplane separates them with margin ``eps / 30`` on
both sides whose normal is a signed sum of at most ``(10 / eps)^2`` of
their points. The proof is a run of the beta-perceptron on the points
lifted to ``(x, 1)``: it stops, and its weights are the hyperplane, or it
runs on, and the averages of the points it added on each side are two
close points.

:func:`skperc.geometry.sparse_separation` returns the certificate of that
run. Below, two pairs of point clouds in the plane, one pair apart and one
overlapping, with each certificate drawn; then the section's other
argument, the alternative proof of Novikoff's theorem, along a recorded
run.
"""

# %%
# Two pairs of clouds
# -------------------
import matplotlib.pyplot as plt
import numpy as np
from scipy.spatial import ConvexHull

from skperc import MarginPerceptron
from skperc.datasets import make_margin_classification
from skperc.geometry import novikoff_trace, sparse_separation

rng = np.random.default_rng(0)
cloud = rng.normal(size=(25, 2)) * [1.0, 0.5]
pairs = {
    "apart": (cloud, cloud @ [[0.8, 0.3], [-0.3, 0.8]] + [4.5, 1.0]),
    "overlapping": (cloud, cloud @ [[0.5, 0.6], [-0.6, 0.5]] + [0.9, 0.4]),
}
eps = 0.2
results = {name: sparse_separation(P, Q, eps) for name, (P, Q) in pairs.items()}
for name, result in results.items():
    print(
        f"{name}: {result.outcome} after {result.n_updates} updates "
        f"(the proof's bound {result.max_updates}), "
        f"{np.count_nonzero(result.counts_P) + np.count_nonzero(result.counts_Q)} "
        "distinct points used"
    )
    if result.outcome == "hyperplane":
        bound = eps * result.unit / 30
        print(f"  margin {result.margin:.4f} > eps * unit / 30 = {bound:.4f}")
    else:
        print(
            f"  distance {result.distance:.4f} < eps * unit = {eps * result.unit:.4f}"
        )

# %%
# Plot: the two certificates
# --------------------------
# Left, the separating line with its margin on both sides; the points whose
# signed sum is its normal are ringed, the ring's size growing with how
# many times the run added them. Right, the two close points, each drawn
# with the points it is the weighted average of.
fig, axes = plt.subplots(1, 2, figsize=(11, 4.5))
for ax, (P, Q), result in zip(axes, pairs.values(), results.values(), strict=True):
    for points, counts, color in [
        (P, result.counts_P, "tab:blue"),
        (Q, result.counts_Q, "tab:orange"),
    ]:
        hull = ConvexHull(points)
        ax.fill(*points[hull.vertices].T, color=color, alpha=0.2)
        ax.plot(*points.T, ".", color=color)
        used = counts > 0
        ax.scatter(
            *points[used].T,
            s=30 + 40 * counts[used] / counts.max(),
            facecolors="none",
            edgecolors=color,
        )
    if result.outcome == "hyperplane":
        w, b = result.coef, result.offset
        direction = np.array([-w[1], w[0]]) / np.linalg.norm(w)
        normal = w / np.linalg.norm(w)
        foot = normal * b / np.linalg.norm(w)
        line = foot + np.outer(np.linspace(-6, 6, 2), direction)
        ax.plot(*line.T, "k-", label="separating line")
        for side in (-1, 1):
            band = line + side * result.margin * normal
            ax.plot(*band.T, "k:", lw=1)
        ax.set_title(f"apart: a line, margin {result.margin:.3f}")
    else:
        ax.plot(*np.array([result.point_P, result.point_Q]).T, "k-o", ms=4)
        ax.set_title(f"overlapping: two points at distance {result.distance:.3f}")
    ax.set_aspect("equal")
    ax.set_xlim(-3.5, 8)
    ax.set_ylim(-3, 4)
fig.tight_layout()
plt.show()

# %%
# Novikoff's theorem without the optimal hyperplane
# --------------------------------------------------
# The same section proves Novikoff's bound again: after ``t`` updates,
# ``v_t = w_t / (t R)`` is a point of the convex hull of the signed
# examples ``y_i x_i / R`` of norm at most ``1 / sqrt(t)``. A perceptron
# fitted with ``record_updates=True`` keeps the sequence of its updates
# in ``updates_``, and :func:`skperc.geometry.novikoff_trace` follows
# ``||v_t||`` along it. The run below stays under the bound, and
# ``R min_t ||v_t||`` bounds the sample's optimal margin from above.
X, y = make_margin_classification(300, 5, margin=0.05, random_state=0)
clf = MarginPerceptron(fit_intercept=False, record_updates=True, random_state=0)
clf.fit(X, y)
trace = novikoff_trace(X, clf.updates_[:, :2])
t = np.arange(1, len(trace.norms) + 1)

fig, ax = plt.subplots(figsize=(6, 4))
ax.loglog(t, trace.norms, label=r"$\|v_t\|$ of the run")
ax.loglog(t, trace.bounds, "k--", label=r"bound $1/\sqrt{t}$")
ax.axhline(0.05 / trace.radius, color="gray", lw=1, label=r"$\varepsilon^*/R$")
ax.set_xlabel("update t")
ax.set_title(
    f"{clf.n_updates_[0]} updates; margin at most {trace.margin_upper_bound:.3f}"
)
ax.legend()
fig.tight_layout()
plt.show()
