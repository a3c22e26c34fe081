"""
========================================
Out-of-core training from a memmap file
========================================

Data that does not fit in memory can stay on disk: a :class:`numpy.memmap`
maps the file, each slice of it reads only its own rows, and
``partial_fit`` continues one run over the slices in order. A pass of
chunks is an epoch: several passes make the same model as ``fit`` with
``shuffle=False`` and as many epochs on the whole array, to the last bit
(with ``intercept_scaling="auto"`` or a number: see below), while the
memory in use is that of one chunk.
"""

# %%
# The data is written to the file block by block, so that it is never
# whole in memory either. Ten percent of the labels are flipped: no epoch
# is free of updates, and ``fit`` runs all its epochs.
import tempfile
import tracemalloc
import warnings
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import gen_batches

from skperc import MarginPerceptron

n_samples, n_features, chunk_size = 200_000, 20, 10_000
rng = np.random.default_rng(0)
direction = rng.standard_normal(n_features)

workdir = tempfile.TemporaryDirectory()
path = Path(workdir.name) / "X.float32"
X = np.memmap(path, dtype=np.float32, mode="w+", shape=(n_samples, n_features))
y = np.empty(n_samples, dtype=np.int64)
for rows in gen_batches(n_samples, chunk_size):
    block = rng.standard_normal((rows.stop - rows.start, n_features))
    X[rows] = block
    y[rows] = (block @ direction > 0) ^ (rng.random(len(block)) < 0.1)
X.flush()
del X
X = np.memmap(path, dtype=np.float32, mode="r", shape=(n_samples, n_features))
print(f"{path.stat().st_size / 2**20:.1f} MiB on disk, chunks of {chunk_size:,} rows")

# %%
# Stream the file through ``partial_fit``: three passes of chunks, in
# order, with the averaged perceptron (the last weights of a perceptron
# swing on data it cannot separate). tracemalloc counts numpy's arrays, so
# its peak is the memory the stream used at most beyond the labels.
# ``intercept_scaling="auto"``: the default, ``"rms"``, scales the intercept
# by the mean norm of the examples seen, to which each call of
# ``partial_fit`` adds its rows as new examples, so that a second pass adds
# them again and moves that mean in its last bits, where the later epochs
# of ``fit`` add nothing: the same models but for those bits.
streamed = MarginPerceptron(shuffle=False, average=True, intercept_scaling="auto")
n_passes = 3
accuracy = []
tracemalloc.start()
for _ in range(n_passes):
    for rows in gen_batches(n_samples, chunk_size):
        streamed.partial_fit(X[rows], y[rows], classes=[0, 1])
    accuracy.append(streamed.score(X[-chunk_size:], y[-chunk_size:]))
peak = tracemalloc.get_traced_memory()[1]
tracemalloc.stop()
print(f"streaming peak: {peak / 2**20:.1f} MiB for {X.nbytes / 2**20:.1f} MiB of X")

# %%
# The same epochs on the whole array, for comparison (without the held-out
# part that early stopping would set aside from so large a sample).
with warnings.catch_warnings():
    warnings.simplefilter("ignore", ConvergenceWarning)
    whole = MarginPerceptron(
        shuffle=False,
        average=True,
        intercept_scaling="auto",
        max_iter=n_passes,
        early_stopping=False,
    )
    whole.fit(np.asarray(X), y)
print("epochs of fit:", whole.n_iter_)
print("same coef_:", np.array_equal(streamed.coef_, whole.coef_))
print("same intercept_:", np.array_equal(streamed.intercept_, whole.intercept_))

fig, ax = plt.subplots(figsize=(6, 3.5), layout="constrained")
ax.plot(range(1, n_passes + 1), accuracy, marker="o")
ax.set(
    xlabel="passes of chunks (epochs)",
    ylabel="training accuracy, last chunk",
    xticks=range(1, n_passes + 1),
)
plt.show()

# %%
# The memmap must be released before its directory is removed.
del X
workdir.cleanup()
