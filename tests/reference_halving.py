"""A plain numpy reference implementation of halving and randomized halving.

Every concept is evaluated on every example and its mistakes counted; the
version space is recomputed from the counts before each prediction as the
concepts with the fewest mistakes. The random stream is used as the
estimator uses it: one draw per example and problem, in order, whatever the
batches; with randomized halving, the concept predict uses is drawn with
the draws that the next example would take.
"""

import numpy as np


def reference_halving(predictions, codes, batch_sizes, n_problems, randomized, seed):
    """Run halving over the rows of predictions, in batches.

    predictions[i, c] is concept c's +1/-1 on example i; codes[i] the index
    of its class. Problem p labels class p (class 1 for a binary run) +1.
    """
    draws = np.random.RandomState(seed).random_sample(
        (sum(batch_sizes) + 1, n_problems)
    )
    first_class = 1 if n_problems == 1 else 0
    counts = np.zeros((n_problems, predictions.shape[1]), dtype=np.int64)
    mistakes = np.zeros(n_problems, dtype=np.int64)
    drawn = None
    start = 0
    for size in batch_sizes:
        for i in range(start, start + size):
            for p in range(n_problems):
                label = 1 if codes[i] == first_class + p else -1
                live = np.flatnonzero(counts[p] == counts[p].min())
                if randomized:
                    rank = min(int(draws[i, p] * len(live)), len(live) - 1)
                    guess = predictions[i, live[rank]]
                else:
                    n_positive = np.count_nonzero(predictions[i, live] > 0)
                    guess = 1 if 2 * n_positive >= len(live) else -1
                mistakes[p] += guess != label
                counts[p] += predictions[i] != label
        start += size
        if randomized:
            drawn = []
            for p, draw in enumerate(draws[start]):
                live = version_space(counts[p])
                drawn.append(live[min(int(draw * len(live)), len(live) - 1)])
    return {
        "mistakes": mistakes,
        "counts": counts,
        "version_spaces": [version_space(row) for row in counts],
        "drawn": drawn,
    }


def version_space(counts):
    return np.flatnonzero(counts == counts.min())


def vote_margins(predictions, version_spaces):
    """(|K+| - |K-|) / |K| of each version space on each row."""
    return np.column_stack(
        [predictions[:, live].sum(axis=1) / len(live) for live in version_spaces]
    )
