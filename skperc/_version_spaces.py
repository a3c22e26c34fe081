"""The version spaces of a halving run, one object per way of keeping them.

A concept class chooses how the version spaces of its binary problems are
kept (:meth:`ConceptClass._version_spaces`): as index sets of live concepts,
each concept evaluated through ``_predict_concepts``, its answers
checked (any class), or in the
compiled interval structure of decision stumps. Every kind has the same
interface, which :class:`~skperc.HalvingClassifier` alone uses.

A version space object is the whole state of a run but the random stream.
A training call works on a :meth:`~VersionSpaces.copy`, so that the model
it started from (which other threads may read, or which may be a read-only
memory map) is never written to.
"""

import numpy as np
import scipy.sparse as sp
from joblib import Parallel, delayed

from ._halving_fast import run_stumps, stump_member, stump_votes

# Classes of at most this many concepts keep every concept's mistake count
# (concept_mistakes_), paid for by evaluating every concept on every example.
KEPT_MISTAKES_UP_TO = 2**16

# Concepts times samples evaluated at once, to bound the memory of a chunk.
_CHUNK = 2**22


class VersionSpaces:
    """The version spaces of the binary problems of one halving run.

    Parameters
    ----------
    concepts : ConceptClass
        The fitted concept class.

    n_problems : int
        The number of binary problems.
    """

    def __init__(self, concepts, n_problems):
        self.concepts = concepts
        self.n_mistakes = np.zeros(n_problems, dtype=np.int64)
        # the fewest mistakes of a concept when the version space last restarted
        self.level = np.zeros(n_problems, dtype=np.int64)

    def copy(self):
        """A copy that a training call may write to: the arrays it writes are
        its own, the concept class (read only) is shared."""
        other = object.__new__(type(self))
        other.__dict__.update(self.__dict__)
        other.n_mistakes = self.n_mistakes.copy()
        other.level = self.level.copy()
        return other

    def learn(self, X, codes, first_class, draws, randomized, n_jobs):
        """One online pass over a batch, every problem learning each example.

        Problem p labels the examples of class ``first_class + p`` as +1.
        Each example is predicted (majority vote, ties +1; or the member of
        rank ``floor(draws[i, p] |K|)``), counted as a mistake when wrong,
        then learned.
        """
        n_problems = len(self.n_mistakes)
        self._record(X, codes)
        stop = np.zeros(1, dtype=np.uint8)
        try:
            # The blocks update this object's arrays in place: a process
            # backend set by the caller (loky, dask) must not take them.
            Parallel(n_jobs=n_jobs, require="sharedmem")(
                delayed(self._learn_block)(
                    X, codes, first_class, problems, draws, randomized, stop
                )
                for problems in _contiguous_blocks(n_problems, n_jobs)
            )
        finally:
            # an interrupt ends every block still running
            stop[0] = 1
        self._settle(first_class)

    def _record(self, X, codes):
        """Keep what the pass over a batch needs besides the batch."""

    def _learn_block(self, X, codes, first_class, problems, draws, randomized, stop):
        """Learn the batch in the problems ``problems``; raise
        KeyboardInterrupt soon after ``stop[0]`` is set."""
        raise NotImplementedError

    def _settle(self, first_class):
        """Bring the kept counts up to date after a batch."""

    def sizes(self):
        """The size of each version space."""
        raise NotImplementedError

    def concept_mistakes(self):
        """The mistakes of every concept in each problem, or None where they
        are not kept."""
        raise NotImplementedError

    def positive_votes(self, X):
        """The members of each version space predicting +1 on each sample,
        of shape (n_samples, n_problems)."""
        raise NotImplementedError

    def member(self, p, draw):
        """The member of rank ``floor(draw |K|)`` of problem p's version space."""
        raise NotImplementedError

    def members(self, p):
        """The concept indices of problem p's version space, in order."""
        raise NotImplementedError


class ListedVersionSpaces(VersionSpaces):
    """Version spaces as index sets of live concepts, for any class.

    When a label refutes the whole version space, it restarts from the
    concepts with the fewest mistakes, counted on the examples kept since
    the previous restart; classes of at most ``KEPT_MISTAKES_UP_TO``
    concepts count every concept on every example instead.
    """

    def __init__(self, concepts, n_problems):
        super().__init__(concepts, n_problems)
        n_concepts = concepts.n_concepts
        self.live = [np.arange(n_concepts) for _ in range(n_problems)]
        self.counts = np.zeros((n_problems, n_concepts), dtype=np.int64)
        # The examples since the oldest restart, for the next restarts.
        self.history = _History(concepts.n_features_in_, n_problems)

    def copy(self):
        other = super().copy()
        # the live index sets are replaced, never written to
        other.live = list(self.live)
        other.counts = self.counts.copy()
        other.history = self.history.copy()
        return other

    def _record(self, X, codes):
        self.history.append(X, codes)

    def _learn_block(self, X, codes, first_class, problems, draws, randomized, stop):
        """Halving over an index set of live concepts, one example at a time."""
        concepts = self.concepts
        start = self.history.stop - X.shape[0]
        for p in range(problems.start, problems.stop):
            live = self.live[p]
            labels = np.where(codes == first_class + p, 1, -1)
            for i, label in enumerate(labels):
                if stop[0]:
                    raise KeyboardInterrupt
                predictions = concepts._checked_predictions(X[i : i + 1], live)[0]
                if randomized:
                    guess = predictions[_rank(draws[i, p], len(live))]
                else:
                    guess = (
                        1 if 2 * np.count_nonzero(predictions > 0) >= len(live) else -1
                    )
                self.n_mistakes[p] += guess != label
                live = live[predictions == label]
                if not len(live):
                    self.live[p] = live
                    self._restart(p, first_class, start + i + 1)
                    live = self.live[p]
            self.live[p] = live

    def _settle(self, first_class):
        if self.concepts.n_concepts <= KEPT_MISTAKES_UP_TO:
            for p in range(len(self.live)):
                self._catch_up(p, first_class)
        self.history.forget_before(self.history.checkpoints.min())

    def _restart(self, p, first_class, stop):
        """The concepts with the fewest mistakes on the examples before stop
        become the version space of problem p."""
        self._catch_up(p, first_class, stop)
        self.level[p] = self.counts[p].min()
        self.live[p] = np.flatnonzero(self.counts[p] == self.level[p])

    def _catch_up(self, p, first_class, stop=None):
        """Add to the counts of problem p the mistakes of every concept on
        the kept examples from its last checkpoint to stop."""
        history = self.history
        stop = history.stop if stop is None else stop
        X, codes = history.since(history.checkpoints[p], stop)
        labels = np.where(codes == first_class + p, 1, -1)
        # none after a restart at the batch's last example: no concept is
        # asked about 0 rows, which a fitted classifier refuses
        n_concepts = self.concepts.n_concepts if len(labels) else 0
        width = max(1, _CHUNK // max(1, len(labels)))
        for first in range(0, n_concepts, width):
            indices = np.arange(first, min(first + width, n_concepts))
            predictions = self.concepts._checked_predictions(X, indices)
            self.counts[p, indices] += np.count_nonzero(
                predictions != labels[:, None], axis=0
            )
        history.checkpoints[p] = stop

    def sizes(self):
        return np.array([len(live) for live in self.live], dtype=np.int64)

    def concept_mistakes(self):
        if self.concepts.n_concepts > KEPT_MISTAKES_UP_TO:
            return None
        return self.counts.copy()

    def positive_votes(self, X):
        positive = np.zeros((X.shape[0], len(self.live)), dtype=np.int64)
        for p, live in enumerate(self.live):
            width = max(1, _CHUNK // max(1, X.shape[0]))
            for first in range(0, len(live), width):
                predictions = self.concepts._checked_predictions(
                    X, live[first : first + width]
                )
                positive[:, p] += np.count_nonzero(predictions > 0, axis=1)
        return positive

    def member(self, p, draw):
        live = self.live[p]
        return live[_rank(draw, len(live))]

    def members(self, p):
        return self.live[p].copy()


class StumpVersionSpaces(VersionSpaces):
    """Version spaces of decision stumps in their interval structure.

    The mistake counts of all stumps are a difference array; a version
    space is the stumps with the fewest mistakes at the last restart (a
    membership prefix sum) cut down to one interval of thresholds per
    feature and sign. See ``skperc/_halving_fast.pyx``.
    """

    def __init__(self, concepts, n_problems):
        _check_sorted_thresholds(concepts)
        super().__init__(concepts, n_problems)
        n_concepts = concepts.n_concepts
        sizes = np.repeat(np.diff(concepts.threshold_ptr_), 2)
        self.diff = np.zeros((n_problems, n_concepts + 1), dtype=np.int64)
        self.prefix = np.tile(np.arange(n_concepts + 1), (n_problems, 1))
        self.lo = np.zeros((n_problems, len(sizes)), dtype=np.int64)
        self.hi = np.tile(sizes, (n_problems, 1))

    def copy(self):
        other = super().copy()
        for name in ("diff", "prefix", "lo", "hi"):
            setattr(other, name, getattr(self, name).copy())
        return other

    def _learn_block(self, X, codes, first_class, problems, draws, randomized, stop):
        stumps = self.concepts
        run_stumps(
            X,
            codes,
            first_class + problems.start,
            stumps.thresholds_,
            stumps.threshold_ptr_,
            self.diff[problems],
            self.prefix[problems],
            self.lo[problems],
            self.hi[problems],
            self.level[problems],
            self.n_mistakes[problems],
            np.ascontiguousarray(draws[:, problems]),
            randomized,
            stop,
        )

    def _votes(self, X):
        n_problems = len(self.n_mistakes)
        positive = np.zeros((X.shape[0], n_problems), dtype=np.int64)
        size = np.zeros(n_problems, dtype=np.int64)
        stumps = self.concepts
        stump_votes(
            X,
            stumps.thresholds_,
            stumps.threshold_ptr_,
            self.prefix,
            self.lo,
            self.hi,
            positive,
            size,
        )
        return positive, size

    def sizes(self):
        return self._votes(np.zeros((0, self.concepts.n_features_in_)))[1]

    def concept_mistakes(self):
        return np.cumsum(self.diff[:, :-1], axis=1)

    def positive_votes(self, X):
        return self._votes(X)[0]

    def member(self, p, draw):
        return stump_member(
            self.concepts.threshold_ptr_,
            self.prefix[p],
            self.lo[p],
            self.hi[p],
            draw,
        )

    def members(self, p):
        ptr = self.concepts.threshold_ptr_
        inside = np.zeros(self.concepts.n_concepts, dtype=bool)
        for block, (low, high) in enumerate(zip(self.lo[p], self.hi[p], strict=True)):
            start = _block_start(ptr, block)
            inside[start + low : start + high] = True
        return np.flatnonzero(inside & (np.diff(self.prefix[p]) == 1))


class _History:
    """The examples of a run from the oldest checkpoint on, in batches."""

    def __init__(self, n_features, n_problems):
        self.batches = []
        self.start = 0
        self.stop = 0
        # where each problem's counts stand: the examples before are counted
        self.checkpoints = np.zeros(n_problems, dtype=np.int64)
        self.n_features = n_features

    def copy(self):
        other = object.__new__(_History)
        other.__dict__.update(self.__dict__)
        # the batches themselves are never written to
        other.batches = list(self.batches)
        other.checkpoints = self.checkpoints.copy()
        return other

    def append(self, X, codes):
        self.batches.append((X, codes))
        self.stop += X.shape[0]

    def since(self, first, stop):
        rows, labels, offset = [], [], self.start
        for X, codes in self.batches:
            low, high = max(first - offset, 0), min(stop - offset, X.shape[0])
            if low < high:
                rows.append(X[low:high])
                labels.append(codes[low:high])
            offset += X.shape[0]
        if not rows:
            return np.zeros((0, self.n_features)), np.zeros(0, dtype=np.int32)
        stack = sp.vstack if sp.issparse(rows[0]) else np.concatenate
        return stack(rows), np.concatenate(labels)

    def forget_before(self, first):
        while self.batches and self.start + self.batches[0][0].shape[0] <= first:
            self.start += self.batches.pop(0)[0].shape[0]


def _check_sorted_thresholds(stumps):
    """Raise unless the thresholds of each feature increase, as the binary
    searches of the compiled stumps need (a subclass may set its own)."""
    thresholds, ptr = stumps.thresholds_, stumps.threshold_ptr_
    rises = np.diff(thresholds) > 0
    # the steps from one feature's last threshold to the next one's first
    rises[ptr[1:-1][(ptr[1:-1] > 0) & (ptr[1:-1] < len(thresholds))] - 1] = True
    if not (np.isfinite(thresholds).all() and rises.all()):
        raise ValueError(
            f"The thresholds_ of {type(stumps).__name__} must be finite and "
            "increase within each feature."
        )


def _rank(draw, size):
    """floor(draw * size) for a draw in [0, 1), kept below size."""
    return min(int(draw * size), size - 1)


def _block_start(threshold_ptr, block):
    feature = block // 2
    size = threshold_ptr[feature + 1] - threshold_ptr[feature]
    return 2 * threshold_ptr[feature] + (block % 2) * size


def _contiguous_blocks(n_items, n_blocks):
    bounds = np.linspace(0, n_items, n_blocks + 1).astype(int)
    return [slice(low, high) for low, high in zip(bounds[:-1], bounds[1:], strict=True)]
