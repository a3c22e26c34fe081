"""A pure-NumPy reference implementation of the kernel perceptrons.

One binary problem, one example at a time, from the Gram matrix: the
decision value of each example is recomputed from the dual coefficients,
``f(x_i) = sum_j a_j K[j, i]``, where the estimator keeps it up to date;
the average is the explicit mean of the coefficient vectors after every
step, where the estimator averages lazily; the budget removes the oldest
support vector from a list. With ``averaging_epoch`` (the estimator's RBF
kernel), an averaged run that ends on a full budget then makes one more
epoch on its support, an example that is no support vector updating with
the projection of its kernel function onto the span of its 8 nearest
support vectors, and answers with the mean of that epoch.
"""

import numpy as np
from reference_perceptron import reference_threshold


def reference_kernel_fit(
    K,
    y,
    *,
    beta=0.0,
    alpha=1.3,
    max_iter=10,
    sample_weight=None,
    average=False,
    budget=None,
    averaging_epoch=False,
):
    """The kernel perceptron on the Gram matrix K with labels y in {-1, +1},
    visiting the examples in order.

    ``y`` of shape (n_samples, n_problems) gives one-vs-rest problems that
    share the support, as the estimator's classes do: an example that some
    problem updates on enters the support once, and the budget removes the
    oldest support vector from every problem. Each problem trains in every
    epoch, where the estimator stops training a problem once an epoch
    leaves it unchanged: compare them on samples that no problem separates
    within ``max_iter`` epochs (``epoch_updates``).

    Returns the dual coefficients (averaged with ``average=True``), the
    number of updates (of each problem, with 2-D ``y``) and of epochs,
    whether the last epoch made no update, the updates of each epoch, and
    the support in order of entry.
    """
    Y = np.asarray(y, dtype=float)
    one_problem = Y.ndim == 1
    Y = Y.reshape(len(Y), -1)
    n, k = Y.shape
    weights = np.ones(n) if sample_weight is None else np.asarray(sample_weight)
    rule = "none" if not isinstance(beta, str) else beta
    a = np.zeros((k, n))
    a_sum = np.zeros((k, n))
    support = []
    steps = n_epochs = 0
    n_updates = np.zeros(k, dtype=int)
    epoch_updates = []
    rho2 = 0.0
    converged = False

    def threshold(c):
        return reference_threshold(beta, alpha, n_updates[c] + 1, rho2)

    for _ in range(max_iter):
        n_epochs += 1
        updates = np.zeros(k, dtype=int)
        radius_changed = False
        for i in range(n):
            if weights[i] == 0.0:
                continue
            # rho follows k(x, x): doubled for "scale", the largest for "power"
            if rule != "none" and K[i, i] > rho2:
                rho2 = 4.0 * K[i, i] if rule == "scale" else K[i, i]
                radius_changed = True
            f = a @ K[:, i]
            steps += 1
            update = [c for c in range(k) if Y[i, c] * f[c] <= threshold(c)]
            if update and i not in support:
                while budget is not None and len(support) >= budget:
                    oldest = support.pop(0)
                    a[:, oldest] = 0.0
                    a_sum[:, oldest] = 0.0
                support.append(i)
            for c in update:
                a[c, i] += Y[i, c] * weights[i]
                n_updates[c] += 1
                updates[c] += 1
            a_sum += a
        epoch_updates.append(updates)
        if not updates.any() and not radius_changed:
            converged = True
            break
    if average and averaging_epoch and budget is not None and len(support) >= budget:
        held = np.array(support)
        a_sum = np.zeros((k, n))
        steps = 0
        for i in range(n):
            if weights[i] == 0.0:
                continue
            f = a @ K[:, i]
            steps += 1
            for c in range(k):
                if Y[i, c] * f[c] > threshold(c):
                    continue
                if i in support:
                    a[c, i] += Y[i, c] * weights[i]
                else:
                    near = held[np.argsort(-K[held, i], kind="stable")[:8]]
                    gram = K[np.ix_(near, near)]
                    gram = gram + 1e-8 * gram.diagonal().max() * np.eye(len(near))
                    a[c, near] += (
                        Y[i, c] * weights[i] * np.linalg.solve(gram, K[near, i])
                    )
                n_updates[c] += 1
            a_sum += a
    dual_coef = a_sum / max(steps, 1) if average else a
    return {
        "dual_coef": dual_coef[0] if one_problem else dual_coef,
        "n_updates": n_updates[0] if one_problem else n_updates,
        "n_epochs": n_epochs,
        "converged": converged,
        "epoch_updates": np.array(epoch_updates),
        "support": support,
    }
