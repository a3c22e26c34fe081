"""A pure-Python reference implementation of the margin perceptrons.

Each binary problem runs alone, one example at a time, with the rules of
Section 2 of "On the Perceptron's Compression" written out directly: no
lanes, no lazy bookkeeping shared between problems. Every dot product is a
sequential sum in feature order in Python floats (IEEE doubles), the
arithmetic the compiled loop promises for float64 rows, so the two can be
compared bit for bit.
"""

import math

import numpy as np


def sequential_dot(w, x):
    total = 0.0
    for w_j, x_j in zip(w, x, strict=True):
        total += w_j * x_j
    return total


def reference_threshold(beta, alpha, t, rho2):
    """beta_t for the t-th update, from the formulas of the paper."""
    if beta == "scale":
        return rho2
    if beta == "power":
        # The textbook formula; the estimator computes it without
        # cancellation, which only matters for huge t.
        return rho2 * (0.5 * (t**alpha - (t - 1) ** alpha - 1.0))
    return float(beta)


def lift_value(lift, max_norm2, mean_norm2=0.0):
    """The lifted coordinate s: none, fixed, the largest norm seen or the
    root mean square of the norms seen."""
    if lift is None:
        return 0.0
    if lift == "auto":
        return math.sqrt(max_norm2)
    if lift == "rms":
        return math.sqrt(mean_norm2)
    return float(lift)


def reference_fit(
    X,
    y,
    *,
    beta=0.0,
    alpha=1.3,
    eta0=1.0,
    lift=None,
    max_iter=10,
    sample_weight=None,
    average=False,
    stop_when_separated=True,
):
    """One binary margin perceptron on X with labels y in {-1, +1}.

    ``lift`` is None (no intercept), a float (the lifted coordinate),
    "auto" (the largest norm seen so far) or "rms" (the root mean square of
    the norms seen so far, over the first epoch, as a running mean).
    Examples are visited in order.
    Returns coef, intercept, the number of updates, the number of epochs,
    whether the last epoch made no update, the explicit mean of the weights
    over all steps (for averaging) and the largest norm seen.
    """
    X = [list(map(float, row)) for row in np.asarray(X)]
    n_features = len(X[0])
    weights = [1.0] * len(X) if sample_weight is None else list(sample_weight)
    rule = (
        "none"
        if not isinstance(beta, str)
        else ("double" if beta == "scale" else "max")
    )

    w = [0.0] * n_features
    b = 0.0  # weight of the lifted coordinate
    w_sum = [0.0] * n_features  # explicit sum of the iterates
    w_lazy = [0.0] * n_features  # the lazy-averaging accumulators
    b_lazy = 0.0
    steps = 0
    n_updates = 0
    max_norm2 = 0.0
    mean_norm2, n_norms = 0.0, 0.0
    rho2 = 0.0
    n_epochs = 0
    converged = False

    for _ in range(max_iter):
        n_epochs += 1
        updates = 0
        radius_changed = False
        for x, label, weight in zip(X, y, weights, strict=True):
            if weight == 0.0:
                continue
            norm2 = sequential_dot(x, x)
            max_norm2 = max(max_norm2, norm2)
            if n_epochs == 1:
                n_norms += 1.0
                mean_norm2 += (norm2 - mean_norm2) / n_norms
            s = lift_value(lift, max_norm2, mean_norm2)
            lifted2 = norm2 + s * s
            if rule != "none" and lifted2 > rho2:
                rho2 = 4.0 * lifted2 if rule == "double" else lifted2
                radius_changed = True

            f = sequential_dot(w, x)
            if lift is not None:
                f = f + b * s
            steps += 1
            threshold = eta0 * reference_threshold(beta, alpha, n_updates + 1, rho2)
            if label * f <= threshold:
                a = (eta0 * label) * weight
                for j in range(n_features):
                    w[j] += a * x[j]
                b += a * s
                lazy = a * (steps - 1)
                for j in range(n_features):
                    w_lazy[j] += lazy * x[j]
                b_lazy += lazy * s
                n_updates += 1
                updates += 1
            for j in range(n_features):
                w_sum[j] += w[j]
        if updates == 0 and not radius_changed:
            converged = True
            if stop_when_separated:
                break

    s = lift_value(lift, max_norm2, mean_norm2)
    if average:
        coef = [w[j] - w_lazy[j] / steps for j in range(n_features)]
        intercept = (b - b_lazy / steps) * s
    else:
        coef = list(w)
        intercept = b * s
    return {
        "coef": np.array(coef),
        "intercept": intercept,
        "n_updates": n_updates,
        "n_epochs": n_epochs,
        "converged": converged,
        "mean_coef": np.array(w_sum) / max(steps, 1),
        "radius": math.sqrt(max_norm2),
    }
