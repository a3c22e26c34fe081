"""
===========================================================
A margin that grows with time, in a neural network's loss
===========================================================

Section 3 of "On the Perceptron's Compression" trains a network with one
hidden layer of rectified linear units and one output unit per class, each
output unit with the loss ``ReLU(beta - y o(x))``: ``beta = 0`` is the
perceptron's rule, ``beta = 1`` the hinge loss, and the paper's proposal,
after its analysis of the infinity-perceptron, is a margin that grows with
the number of updates as ``t^(1 - c)``. On MNIST it reports a lower test
error for the growing margin than for a fixed one, and than for the same
network trained with cross-entropy.

Here is the same comparison on scikit-learn's digits, with
:class:`~skperc.MarginMLPClassifier` and
:class:`~sklearn.neural_network.MLPClassifier` of the same size (300 hidden
units), the same solver (Adam, learning rate 0.001) and the same batches of
128, on the raw pixel values (0 to 16), as the paper used MNIST with no
preprocessing. ``benchmarks/bench_margin_mlp.py`` runs it over more epochs
and seeds, with fit times, and on MNIST when it is available.
"""

# %%
# Test error after each epoch
# ---------------------------
# Each model is trained one epoch at a time with ``partial_fit``, from the
# same seeds, and scored on a fixed held-out quarter of the digits after
# every epoch.
import warnings

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_digits
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import train_test_split
from sklearn.neural_network import MLPClassifier

from skperc import MarginMLPClassifier

X, y = load_digits(return_X_y=True)
X_train, X_test, y_train, y_test = train_test_split(
    X, y, test_size=0.25, stratify=y, random_state=0
)
classes = np.unique(y)
n_epochs, seeds = 60, [0, 1]


def make_models(seed):
    common = dict(
        hidden_layer_sizes=(300,),
        batch_size=128,
        learning_rate_init=0.001,
        # a RandomState instance: each epoch shuffles anew
        random_state=np.random.RandomState(seed),
    )
    return {
        "beta = 0": MarginMLPClassifier(beta=0.0, **common),
        "beta = 1": MarginMLPClassifier(beta=1.0, **common),
        "beta = t^(1-c), c = 0.5": MarginMLPClassifier(
            beta="sublinear", c=0.5, **common
        ),
        "beta = t^(1-c), c = 0.75": MarginMLPClassifier(
            beta="sublinear", c=0.75, **common
        ),
        "MLPClassifier (cross-entropy)": MLPClassifier(**common),
    }


errors = {}
for seed in seeds:
    for name, model in make_models(seed).items():
        curve = []
        for _ in range(n_epochs):
            model.partial_fit(X_train, y_train, classes=classes)
            curve.append(1 - model.score(X_test, y_test))
        errors.setdefault(name, []).append(curve)
errors = {name: 100 * np.array(curves) for name, curves in errors.items()}

fig, ax = plt.subplots(figsize=(7, 4.5))
epochs = np.arange(1, n_epochs + 1)
for name, curves in errors.items():
    style = "--" if name.startswith("MLP") else "-"
    ax.plot(epochs, curves.mean(axis=0), style, label=name)
ax.set_yscale("log")
ax.set_xlabel("epoch")
ax.set_ylabel(f"test error (%), mean of {len(seeds)} seeds")
ax.set_title("digits, one hidden layer of 300 ReLUs")
ax.legend()
fig.tight_layout()

# %%
# The table
# ---------
# The test error after the last epoch, mean and standard deviation over the
# seeds.
print(f"{'model':32} {'test error %':>13} {'std':>6}")
for name, curves in errors.items():
    final = curves[:, -1]
    print(f"{name:32} {final.mean():13.2f} {final.std():6.2f}")

# %%
# What the figure shows
# ---------------------
# On these raw pixels the initial outputs are large, and cross-entropy gets
# to a low error in fewer epochs than any margin loss. The fixed margins lag
# throughout: the outputs soon exceed 1, so ``beta = 1`` asks little more
# than ``beta = 0`` does, and both stop pushing the examples away from the
# decision boundary. A margin that keeps growing keeps every output unit
# learning, and the growing margins end the run level with cross-entropy or
# below it. The paper's ordering (the smaller ``c``, the smaller the error)
# need not hold: a margin that grows faster than the network can follow
# leaves every unit on the linear part of its loss. The benchmark
# ``benchmarks/bench_margin_mlp.py`` runs 100 epochs over five seeds, with
# ``c = 0.25`` as well, and prints the spread of each figure and the fit
# times.

# %%
# A penalty for noisy labels
# --------------------------
# The paper's network has no penalty on its weights (``alpha=0``, the
# default). On labels with noise it learns the noise; ``alpha``, the L2
# penalty with the meaning it has in ``MLPClassifier``, keeps it from that.
# Here 30% of the training labels are redrawn at random, and the network of
# 100 hidden units is scored on the clean test labels.
rng = np.random.RandomState(0)
noisy = y_train.copy()
redrawn = rng.rand(len(noisy)) < 0.3
noisy[redrawn] = rng.randint(len(classes), size=redrawn.sum())
for alpha in [0.0, 1.0, 10.0, 100.0]:
    network = MarginMLPClassifier((100,), alpha=alpha, random_state=0)
    with warnings.catch_warnings():
        # the runs use their 200 epochs on these labels: a known warning
        warnings.simplefilter("ignore", ConvergenceWarning)
        network.fit(X_train, noisy)
    print(f"alpha = {alpha:5g}: test accuracy {network.score(X_test, y_test):.3f}")

# %%
# A penalty too weak leaves the noise learned, one too strong shrinks the
# weights past what the clean labels need: choose ``alpha`` by
# cross-validation, as for ``MLPClassifier`` (see "A penalty for noisy data"
# in the user guide).

# %%
# The solvers of ``MLPClassifier``
# --------------------------------
# The network runs scikit-learn's own solvers, with ``MLPClassifier``'s
# parameters: ``beta_1``, ``beta_2`` and ``epsilon`` for Adam, and for
# stochastic gradient descent ``momentum``, ``nesterovs_momentum`` and the
# step schedule ``learning_rate``. A grid written for ``MLPClassifier``
# searches this network unchanged. ``"invscaling"`` divides the step by the
# square root of the examples seen after each epoch: 30 times smaller after
# one epoch of a fold's 898 examples, too small for 30 epochs.
from sklearn.model_selection import GridSearchCV  # noqa: E402

grid = {
    "solver": ["sgd"],
    "learning_rate": ["constant", "invscaling", "adaptive"],
    "nesterovs_momentum": [True, False],
}
with warnings.catch_warnings():
    warnings.simplefilter("ignore", ConvergenceWarning)
    search = GridSearchCV(
        MarginMLPClassifier(
            (32,), learning_rate_init=0.001, max_iter=30, random_state=0
        ),
        grid,
        cv=3,
    ).fit(X_train, y_train)
for params, score in zip(
    search.cv_results_["params"], search.cv_results_["mean_test_score"], strict=True
):
    print(f"{params}: {score:.3f}")
print(f"test accuracy of the best: {search.score(X_test, y_test):.3f}")
