"""
=====================================
Parameter mixing: one model on shards
=====================================

:class:`~skperc.distributed.ParameterMixingClassifier` trains one
:class:`~skperc.MarginPerceptron` on shards of the sample at once: each
epoch every shard runs one perceptron epoch from the same mixed weights,
and the new mixed weights average the shards', weighted by their updates
(McDonald, Hall and Mann, 2010). One shard is the single-machine run, to
the last bit. Here the training error after each epoch, for 1, 2, 4 and 8
shards, on a separable sample and on a noisy one.
"""

# %%
# A run with ``max_iter=e`` is the first ``e`` epochs of a longer run with
# the same seed, so fitting with ``max_iter = 1, 2, ...`` traces the
# training error epoch by epoch. ``tol=None`` keeps the stopping rule out:
# the runs stop only when the sample is separated.
import warnings

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import make_classification
from sklearn.exceptions import ConvergenceWarning

from skperc import MarginPerceptron
from skperc.datasets import make_margin_classification
from skperc.distributed import ParameterMixingClassifier

samples = {
    "separable (margin 0.02 R)": make_margin_classification(
        2000, 10, margin=0.02, random_state=0
    ),
    "noisy (5% of the labels flipped)": make_classification(
        2000, 20, n_informative=10, flip_y=0.05, random_state=0
    ),
}
epochs = np.arange(1, 31)
shard_counts = [1, 2, 4, 8]


def training_errors(X, y, n_shards):
    errors = []
    for max_iter in epochs:
        clf = ParameterMixingClassifier(
            MarginPerceptron(tol=None, max_iter=max_iter, random_state=0),
            n_shards=n_shards,
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            clf.fit(X, y)
        errors.append(1 - clf.score(X, y))
    return errors


fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharex=True)
for ax, (name, (X, y)) in zip(axes, samples.items(), strict=True):
    for n_shards in shard_counts:
        label = "1 (single machine)" if n_shards == 1 else str(n_shards)
        ax.plot(epochs, training_errors(X, y, n_shards), label=label)
    ax.set(title=name, xlabel="epochs", ylabel="training error")
axes[0].legend(title="shards")
fig.tight_layout()

# %%
# On the separable sample every run ends separated: the mixture's updates
# stay within Novikoff's :math:`(R/\varepsilon^*)^2`, whatever the number
# of shards. The shards pay in epochs, since a shard sees the others'
# updates only at the next mixing; each epoch, though, takes a fraction
# of the time when the shards run in parallel. On the noisy sample the
# mixed weights move less from epoch to epoch than the single run's last
# weights: mixing averages the shards' weights, as the averaged perceptron
# averages its own.
for n_shards in shard_counts:
    X, y = samples["separable (margin 0.02 R)"]
    clf = ParameterMixingClassifier(
        MarginPerceptron(tol=None, random_state=0), n_shards=n_shards
    ).fit(X, y)
    print(
        f"{n_shards} shard(s): separated after {clf.n_iter_} epochs, "
        f"{clf.mixed_updates_[0]:.0f} mixed updates "
        f"(bound {(1 / 0.02) ** 2:.0f}), {clf.n_updates_[0]} in all the shards"
    )
