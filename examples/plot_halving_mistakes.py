"""
====================================
Mistakes of halving and its bounds
====================================

Halving predicts by majority vote over the concepts still consistent with
the labels, and makes at most ``log2 |C|`` mistakes on any stream labeled
by a concept of the class ``C``; randomized halving predicts with one
consistent concept drawn at random, and makes at most ``ln |C| + 1`` in
expectation (sections 3 and 4 of S. O. Chan, "Notes 3: Perceptron and Halving
algorithms", CSCI4230, The Chinese University of Hong Kong, 2019).

The stream here is the hard one of the randomized bound's proof: stumps on
one feature with thresholds ``0, 1, ..., r - 1``, the samples ``0, 1, 2,
...`` in turn, labeled by the stump ``x >= r - 1``. After the first sample
each one refutes one more stump, so randomized halving errs with
probability ``1 / |K|`` each time, about ``ln r`` mistakes in expectation,
while the vote errs only on the first sample and on a tie at the end.
"""

# %%
# Mistakes as the class grows
# ---------------------------
import math

import matplotlib.pyplot as plt
import numpy as np

from skperc import HalvingClassifier
from skperc.concepts import DecisionStumps

sizes = [4, 16, 64, 256, 1024]
vote, mean_random, n_concepts = [], [], []
for r in sizes:
    X = np.arange(r, dtype=float)[:, None]
    y = np.where(X[:, 0] >= r - 1, 1, -1)
    stumps = DecisionStumps(n_thresholds=r)
    vote.append(HalvingClassifier(concepts=stumps).fit(X, y).n_mistakes_[0])
    runs = [
        HalvingClassifier(concepts=stumps, randomized=True, random_state=seed)
        .fit(X, y)
        .n_mistakes_[0]
        for seed in range(200)
    ]
    mean_random.append(np.mean(runs))
    n_concepts.append(2 * r)

for c, v, m in zip(n_concepts, vote, mean_random, strict=True):
    print(f"|C| = {c:5d}: halving {v}, randomized halving {m:.2f} on average")

# %%
# Against the bounds
# ------------------
fig, ax = plt.subplots(figsize=(6, 4))
ax.plot(n_concepts, [math.log2(c) for c in n_concepts], "k--", label="log2 |C|")
ax.plot(n_concepts, [math.log(c) + 1 for c in n_concepts], "k:", label="ln |C| + 1")
ax.plot(n_concepts, vote, "o-", label="halving")
ax.plot(n_concepts, mean_random, "s-", label="randomized halving (mean of 200)")
ax.set_xscale("log")
ax.set_xlabel("number of concepts |C|")
ax.set_ylabel("online mistakes")
ax.legend()
fig.tight_layout()

# %%
# The random draws pay on this stream, and stay within the bound in
# expectation: the mean grows like ``ln |C|``, about 0.69 of ``log2 |C|``.
# On other streams the vote does better; neither exceeds its bound.
