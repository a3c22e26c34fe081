"""A pure-numpy reference implementation of the margin-loss network.

Plain mini-batch gradient descent on the network of Section 3 of "On the
Perceptron's Compression", written one example at a time: the forward pass,
the loss ``sum_k ReLU(beta_t - y_k o_k(x))`` and the chain rule of its
gradient are spelled out per example, and the batch gradient is their
weighted mean. Nothing is shared with the estimator, which works on whole
batches with matrix products and scikit-learn's optimizers.
"""

import numpy as np


def he_init(layer_units, seed):
    """The estimator's initial weights: N(0, 2 / fan_in), zero intercepts."""
    rng = np.random.RandomState(seed)
    coefs = [
        rng.normal(0.0, np.sqrt(2.0 / fan_in), (fan_in, fan_out))
        for fan_in, fan_out in zip(layer_units[:-1], layer_units[1:], strict=True)
    ]
    return coefs, [np.zeros(fan_out) for fan_out in layer_units[1:]]


def reference_threshold(beta, c, t, rho):
    """beta for the step made after t earlier steps, radius rho."""
    if beta == "power":
        return float(t) ** (1.0 - c)
    if beta == "scale":
        return rho**2
    return beta


def example_gradient(coefs, intercepts, x, y, beta):
    """Loss of one example and its gradients, by the chain rule."""
    pre, post = [], [x]
    for i, (W, b) in enumerate(zip(coefs, intercepts, strict=True)):
        z = np.array([post[-1] @ W[:, j] + b[j] for j in range(W.shape[1])])
        pre.append(z)
        post.append(z if i == len(coefs) - 1 else np.where(z > 0, z, 0.0))
    out = post[-1]
    loss = sum(max(beta - y_k * o_k, 0.0) for y_k, o_k in zip(y, out, strict=True))
    # ReLU(beta - y o) has slope -y in o where y o <= beta, else 0
    delta = np.array(
        [-y_k if y_k * o_k <= beta else 0.0 for y_k, o_k in zip(y, out, strict=True)]
    )
    coef_grads, intercept_grads = [None] * len(coefs), [None] * len(coefs)
    for layer in range(len(coefs) - 1, -1, -1):
        coef_grads[layer] = np.outer(post[layer], delta)
        intercept_grads[layer] = delta.copy()
        if layer > 0:
            back = coefs[layer] @ delta
            delta = np.where(pre[layer - 1] > 0, back, 0.0)
    return loss, coef_grads, intercept_grads, post[-2]


def reference_fit(
    X,
    Y,
    weight,
    coefs,
    intercepts,
    *,
    beta,
    c,
    learning_rate,
    batch_size,
    epochs,
    alpha=0.0,
):
    """Train in place with plain gradient descent, batches in order.

    ``learning_rate`` is the step, or a function of the number of examples
    seen before an epoch that gives the epoch's step.

    ``Y`` holds the +-1 targets of the output units. ``beta`` is a number,
    ``"power"`` (``t^(1 - c)``) or ``"scale"`` (``rho^2`` with the doubling
    radius of Algorithm 3 over the norms of the last hidden layer). The
    loss of a batch adds ``alpha / 2`` times the sum of the squared weights
    (of every coefs, at the start of the step) divided by the batch's total
    weight, as in scikit-learn's MLPClassifier. Returns the mean loss of
    each epoch and the number of steps.
    """
    t, rho, curve = 0, 0.0, []
    for epoch in range(epochs):
        eta = (
            learning_rate(epoch * X.shape[0])
            if callable(learning_rate)
            else learning_rate
        )
        epoch_loss = 0.0
        for start in range(0, X.shape[0], batch_size):
            rows = range(start, min(start + batch_size, X.shape[0]))
            results = [
                example_gradient(coefs, intercepts, X[i], Y[i], 0.0) for i in rows
            ]
            if beta == "scale":
                for *_, hidden in results:
                    norm = np.sqrt(sum(h * h for h in hidden))
                    if norm > rho:
                        rho = 2.0 * norm
            beta_t = reference_threshold(beta, c, t, rho)
            results = [
                example_gradient(coefs, intercepts, X[i], Y[i], beta_t) for i in rows
            ]
            total = sum(weight[i] for i in rows)
            squares = sum(float(np.sum(W * W)) for W in coefs)
            for params, which in ((coefs, 1), (intercepts, 2)):
                for layer, param in enumerate(params):
                    step = sum(
                        weight[i] * r[which][layer]
                        for i, r in zip(rows, results, strict=True)
                    )
                    if which == 1:
                        step = step + alpha * param
                    param -= eta * step / total
            epoch_loss += sum(
                weight[i] * r[0] for i, r in zip(rows, results, strict=True)
            )
            epoch_loss += 0.5 * alpha * squares
            t += 1
        curve.append(epoch_loss / weight.sum())
    return curve, t
