"""A pure-NumPy reference of the budgeted kernel perceptron's merging and
projecting.

One binary problem, one example at a time, on the rows themselves (merged
vectors are no samples): the decision value of each example is the sum over
the support vectors, the average is the explicit mean of the function after
every step, kept as coefficients on the support vectors. A full budget
frees a slot from the support vector of the smallest coefficient (the
newest of those when merging, the oldest when projecting). Merging (RBF
kernel) merges it with one of the 8 nearest vectors of its class (the one
whose merge at the point that weighs the two by their coefficients changes
the function least), at the point and with the coefficient that change the
function least, as in budgeted SGD (Wang, Crammer and Vucetic, 2012), or
removes it when that merge changes the function more than the removal.
Projecting (any kernel) adds its coefficient times the projection of its
kernel function onto the span of its 8 nearest other support vectors (the
largest kernel values) to theirs, then removes it. With averaging and the
RBF kernel, a run that ends on a full budget then makes one more epoch on
its support as it stands, an example that is no support vector updating
with the projection of its kernel function onto the span of its 8 nearest
support vectors (the Projectron's update, Orabona, Keshet and Caputo,
2009), and answers with the mean of that epoch's functions.
"""

import numpy as np

GOLDEN_STEPS = 15


def merged_norm2(a_m, a_j, log_k, h):
    """a_z^2 of z = h x_m + (1 - h) x_j replacing a_m x_m + a_j x_j."""
    a_z = a_m * np.exp((1 - h) ** 2 * log_k) + a_j * np.exp(h**2 * log_k)
    return a_z**2


def merge_at_mean(a_m, a_j, k_mj):
    """The loss of the merge at h = |a_m| / (|a_m| + |a_j|)."""
    h = abs(a_m) / (abs(a_m) + abs(a_j))
    before = a_m**2 + a_j**2 + 2 * a_m * a_j * k_mj
    return before - merged_norm2(a_m, a_j, np.log(k_mj), h)


def best_merge(a_m, a_j, k_mj):
    """The loss and position h of the best merge, by golden-section search,
    or at h = 0 (the partner itself) where the search's last bracket holds
    it and the loss there is no larger."""
    invphi = (np.sqrt(5) - 1) / 2
    lo, hi, log_k = 0.0, 1.0, np.log(k_mj)
    h1, h2 = hi - invphi * (hi - lo), lo + invphi * (hi - lo)
    v1, v2 = merged_norm2(a_m, a_j, log_k, h1), merged_norm2(a_m, a_j, log_k, h2)
    for _ in range(GOLDEN_STEPS):
        if v1 >= v2:
            hi, h2, v2 = h2, h1, v1
            h1 = hi - invphi * (hi - lo)
            v1 = merged_norm2(a_m, a_j, log_k, h1)
        else:
            lo, h1, v1 = h1, h2, v2
            h2 = lo + invphi * (hi - lo)
            v2 = merged_norm2(a_m, a_j, log_k, h2)
    h = (lo + hi) / 2
    after = merged_norm2(a_m, a_j, log_k, h)
    at_partner = merged_norm2(a_m, a_j, log_k, 0.0)
    if lo == 0.0 and at_partner >= after:
        h, after = 0.0, at_partner
    before = a_m**2 + a_j**2 + 2 * a_m * a_j * k_mj
    return before - after, h


def reference_budget_fit(
    X,
    y,
    *,
    gamma,
    budget,
    strategy="merge",
    kernel=None,
    max_iter=5,
    average=False,
    sample_weight=None,
):
    """The budgeted kernel perceptron (beta = 0) with labels y in {-1, +1},
    visiting the examples in order, under the RBF kernel of ``gamma``, or
    ``kernel(A, x)`` (the values between the rows of A and x) with
    ``strategy="project"``; an update adds ``y`` times the example's
    ``sample_weight``.

    Returns the support vectors, their coefficients (averaged with
    ``average=True``: over the run, or, under the RBF kernel, over the
    averaging epoch after it when the budget is full) and the number of
    updates.
    """
    rbf = kernel is None
    if rbf:

        def kernel(A, x):
            return np.exp(-gamma * ((A - x) ** 2).sum(axis=1))

    make_room = {"merge": _merge, "project": _project_out}[strategy]
    step = y if sample_weight is None else y * sample_weight

    rows, coef, mean, owner, age = [], [], [], [], []
    steps = n_updates = clock = 0
    for _ in range(max_iter):
        for i in range(len(y)):
            f = float(np.dot(coef, kernel(np.array(rows), X[i]))) if rows else 0.0
            steps += 1
            if y[i] * f <= 0.0:
                n_updates += 1
                if i not in owner:
                    if len(rows) >= budget:
                        make_room(rows, coef, mean, owner, age, kernel)
                    rows.append(X[i].copy())
                    coef.append(0.0)
                    mean.append(0.0)
                    owner.append(i)
                    age.append(clock)
                    clock += 1
                coef[owner.index(i)] += step[i]
            # the sum of the functions after every step
            mean = [s + a for s, a in zip(mean, coef, strict=True)]
    if average and rbf and len(rows) >= budget:
        mean, epoch_updates = _averaging_epoch(
            X, y, step, np.array(rows), coef, owner, kernel
        )
        return np.array(rows), mean, n_updates + epoch_updates
    kept = np.array(mean) / steps if average else np.array(coef)
    return np.array(rows), kept, n_updates


def _averaging_epoch(X, y, step, rows, coef, owner, kernel):
    """One epoch on the support ``rows``, kept as it is: the mean of the
    function after every step, and the number of updates (each adding
    ``step``)."""
    coef = np.array(coef, dtype=float)
    total = np.zeros_like(coef)
    n_updates = 0
    for i in range(len(y)):
        k = kernel(rows, X[i])
        if y[i] * float(np.dot(coef, k)) <= 0.0:
            n_updates += 1
            if i in owner:
                coef[owner.index(i)] += step[i]
            else:
                near = nearest(k)
                coef[near] += step[i] * projection(rows[near], k[near], kernel)
        total += coef
    return total / len(y), n_updates


def _smallest(coef, age, newest):
    """The support vector of the smallest coefficient, of ties the newest
    or the oldest."""
    sizes = [(a * a, -t if newest else t) for a, t in zip(coef, age, strict=True)]
    return min(range(len(coef)), key=lambda s: sizes[s])


def _project_out(rows, coef, mean, owner, age, kernel):
    """Project one support vector onto its nearest others, and remove it,
    in place."""
    m = _smallest(coef, age, newest=False)
    k_m = kernel(np.array(rows), rows[m])
    others = np.delete(np.arange(len(rows)), m)
    near = others[nearest(k_m[others])]
    u = projection(np.array(rows)[near], k_m[near], kernel)
    for p, s in enumerate(near):
        coef[s] += coef[m] * u[p]
        mean[s] += mean[m] * u[p]
    for values in (rows, coef, mean, owner, age):
        del values[m]


def _merge(rows, coef, mean, owner, age, kernel):
    """Merge (or remove) one support vector, in place."""
    m = _smallest(coef, age, newest=True)
    k_m = kernel(np.array(rows), rows[m])
    # the partner: of the 8 nearest vectors of its class (the oldest of
    # ties), the one whose merge at the point that weighs the two by their
    # coefficients changes the function least, the nearest of equal losses
    same_class = np.sign(coef) == np.sign(coef[m])
    candidates = [
        j for j in range(len(rows)) if j != m and same_class[j] and k_m[j] > 0
    ]
    partner, best_h = None, 0.0
    if candidates:
        nearest_8 = sorted(candidates, key=lambda s: (-k_m[s], age[s]))[:8]
        j = min(nearest_8, key=lambda s: merge_at_mean(coef[m], coef[s], k_m[s]))
        loss, h = best_merge(coef[m], coef[j], k_m[j])
        if loss < coef[m] ** 2:
            partner, best_h = j, h
    if partner is not None:
        log_k = np.log(k_m[partner])
        k_z = np.exp((1 - best_h) ** 2 * log_k), np.exp(best_h**2 * log_k)
        rows[partner] = best_h * rows[m] + (1 - best_h) * rows[partner]
        coef[partner] = coef[m] * k_z[0] + coef[partner] * k_z[1]
        mean[partner] = mean[m] * k_z[0] + mean[partner] * k_z[1]
        owner[partner] = -1
    for values in (rows, coef, mean, owner, age):
        del values[m]


def nearest(k, count=8):
    """The indices of the ``count`` largest kernel values, the first of
    equal ones: the oldest, as the lists keep the order of entry."""
    return np.argsort(-k, kind="stable")[:count]


def projection(rows, k, kernel):
    """The coefficients over ``rows`` of the projection onto their span of a
    function of kernel values ``k`` at them, with the ridge of 1e-8 times
    the largest k(x, x); none where every k(x, x) is 0 (zero functions,
    whose span holds 0 alone)."""
    gram = np.array([kernel(rows, r) for r in rows])
    largest = gram.diagonal().max()
    if largest == 0:
        return np.zeros(len(rows))
    gram += 1e-8 * largest * np.eye(len(rows))
    return np.linalg.solve(gram, k)
