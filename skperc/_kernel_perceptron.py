"""KernelPerceptron: the dual perceptron and its margin variants."""

import copy
import warnings
from dataclasses import dataclass, replace
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from joblib import Parallel, delayed
from sklearn.base import clone
from sklearn.metrics.pairwise import PAIRWISE_KERNEL_FUNCTIONS, pairwise_kernels
from sklearn.utils.extmath import row_norms
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted, validate_data

from ._atomic import consistent_read
from ._base import (
    BasePerceptron,
    batches,
    blocks_in_working_memory,
    canonical,
    check_finite_scores,
    check_no_underflow,
    check_sparse_structure,
    first_class,
    mean_moments,
    problem_count,
    toward_mean,
)
from ._compat import Interval, StrOptions
from ._docs import fill_doc
from ._early_stopping import (
    AUTO_SPLIT_SAMPLES,
    early_stopping_split,
    effective_size,
    epochs_until_stalled,
    may_split,
    predicted_codes,
    weighted_accuracy,
    weighted_share,
)
from ._kernel_budget_fast import BudgetStrategy, run_budget_epochs
from ._kernel_perceptron_fast import (
    CapReached,
    ColumnCache,
    KernelKind,
    kernel_diagonal,
    kernel_products,
    new_thread_state,
    paged_array,
    run_epochs,
    squared_norms,
    weighted_rows,
)
from ._nonfinite import check_failure, new_failure, raise_non_finite
from ._overflow import Quantity
from ._threads import thread_count
from .kernels import inverse_dot_kernel
from .schedules import RelativeThreshold, ThresholdSchedule

# The kernels the compiled loop computes itself (on dense or CSR rows, float64
# or float32, but for the Gram matrix); the others are computed by
# pairwise_kernels, on float64 rows.
_COMPILED_KERNELS = {
    "linear": KernelKind.KERNEL_LINEAR,
    "poly": KernelKind.KERNEL_POLY,
    "polynomial": KernelKind.KERNEL_POLY,
    "rbf": KernelKind.KERNEL_RBF,
    "sigmoid": KernelKind.KERNEL_SIGMOID,
    "cosine": KernelKind.KERNEL_COSINE,
    "precomputed": KernelKind.KERNEL_PRECOMPUTED,
}

_REMEDY = "or use a kernel of smaller values"
# beta="auto" under a budget that binds: RelativeThreshold(1.0), not 0.25.
# Each update past a full budget is paid for by a merge or a removal, which
# moves the function away from what the updates made; a larger margin keeps
# the function further from the examples, so fewer of them move it. Budget
# 500 (merge) on the default data of benchmarks/bench_kernel_scale.py, accuracy
# at 0.25 and 1.0: 0.875 and 0.881 at 10,000 examples, 0.879 and 0.897 at
# 40,000 (in 15 epochs against 8), 0.899 and 0.902 at 200,000, 0.904 and
# 0.913 at 1,000,000; 0.5, 2.0 and 4.0 scored 0.874, 0.883 and 0.879 at
# 10,000, and 0.890, 0.892 and 0.893 at 40,000 (the last functions). With the
# averaging epoch that ends such a fit: 0.881 and 0.888 at 10,000, 0.897 and
# 0.899 at 40,000. On the word counts (--data text and vocabulary), 1.0 wins
# with the merges' search of 15 steps (see GOLDEN_STEPS): 0.814 against
# 0.802 on the text data at 10,000 (medians of 5 seeds), 0.877 against 0.859
# at 40,000 (of 3), and 0.875 against 0.872 on the vocabulary at 10,000 and
# 0.904 against 0.894 at 40,000, in 1.0 to 2.7 times the time of 0.25.
# With 10 steps it won on the text data (0.788 against 0.775, 0.843 against
# 0.829) and tied on the vocabulary (0.864 against 0.866, 0.879 against
# 0.880); before a merge could keep the partner itself (see _best_merge),
# 0.25 won at 10,000 (0.781 against 0.775, 0.867 against 0.862) and lost at
# 40,000 (0.832 against 0.835, 0.875 against 0.882).
_BUDGETED_AUTO_BETA = 1.0
# n_iter_no_change="auto": scikit-learn's 5, but 2 for early stopping on a
# fit that the budget binds, unless projections make room. A full budget
# keeps the last function moving, and its validation score wanders from
# epoch to epoch, while the fit answers with the mean of an averaging epoch
# on the support the best score chose (see _train_budget), whose accuracy
# depends little on that epoch. Budget 500 (merge) on
# benchmarks/bench_kernel_scale.py's data, medians of five seeds, 2 against
# 5: the same test accuracy on the clusters at 10,000 and 40,000 examples
# (0.8862, 0.8966), wide (0.9131), text (0.7883 against 0.7870) and
# vocabulary (0.8639), at 10,000 unless said; the fit in 0.42 instead of
# 1.05 s at 40,000, 0.77 of the time on the vocabulary. With the merges'
# search of 15 steps (see GOLDEN_STEPS): text 0.8137 against 0.8139,
# vocabulary 0.8752 against 0.8771, in 0.75 and 0.72 of the time. A
# patience of 1 lost 0.25 to 0.35 point on the clusters at 10,000 and
# wide; on 8 classes (12,000 x 30) a patience of 2 lost 0.2 point (0.7016
# against 0.7038).
# Projection keeps 5: with 2 (medians of three seeds, 10,000 examples unless
# said) it lost 0.8 point on the clusters (0.8676 against 0.8757), 0.2 at
# 40,000, 0.3 on wide and 0.8 on the text data, and with the polynomial
# kernel of degree 3 on the clusters 0.5 and 1.1 point at 10,000 and 40,000
# examples (0.8536 against 0.8649). Removal waits 2: the same accuracy on
# the clusters and wide, 1.3 points less on the text data (0.6110 against
# 0.6238), and up to 8 points more with budgets of 25 to 400 on the 3,000
# examples of examples/plot_kernel_budget.py, where with 5 it picks a
# better-scored epoch that is worse on the test points.
# In a fit that a budget that merges or removes binds, a score starts the
# patience again only if it beats the best by more than the best's standard
# error on the validation part, sqrt(p (1 - p) / n) (n its effective size
# under sample weights): a smaller gain of the wandering last function is no
# evidence of a better one, and waiting for it ran epochs that the answer did
# not need (the best is still taken). Budget 500 (merge) on
# benchmarks/bench_kernel_scale.py's data, test accuracy (means of
# random_state 0 to 9 at 10,000 examples, 0 to 4 at 40,000) and median fit
# time, one thread, without and with the rule: clusters 0.8867 and 0.8862
# (0.19 and 0.14 s), wide 0.9123 and 0.9111 (0.42 and 0.34 s), text 0.8109 and
# 0.8119 (0.82 and 0.69 s), vocabulary 0.8767 and 0.8760 (1.17 and 0.64 s, in
# 4 to 6 epochs instead of 5 to 9); at 40,000 the clusters 0.8968 and 0.8974
# (1.02 and 0.63 s), wide 0.9294 and 0.9304 (1.65 and 1.17 s), text 0.8786 and
# 0.8785 (2.29 and 2.11 s), vocabulary 0.9046 both (3.10 and 2.90 s); on 8
# classes (12,000 x 30, six seeds) 0.7180 and 0.7193 (0.66 and 0.44 s);
# removal ended at the same epochs on the clusters and the text data at
# 10,000. Two standard errors lost 0.1 to 0.2 point on the wide data and the
# vocabulary (0.9107, 0.8749). Projection, whose score creeps up, counts from
# the best: the rule lost 0.6 and 1.0 point with the polynomial kernel of
# degree 3 on the clusters (means of five seeds, 0.8469 against 0.8533 at
# 10,000, 0.8574 against 0.8674 at 40,000), for the same accuracy with the RBF
# kernel (0.8760 against 0.8753 at 10,000, 0.6902 against 0.6910 on the text
# data).
_AUTO_PATIENCE = 5
_BUDGETED_AUTO_PATIENCE = 2
# refit="auto" fits again the samples of at most this many examples that no
# budget binds (a budget that binds makes the second fit a whole budgeted
# fit): there the default cache_size (200 MB) holds a kernel column of every
# example, so the second fit computes only the columns that the first run did
# not. On benchmarks/bench_kernel_scale.py's four data sets (medians of
# random_state 0 to 2, one thread) it gained 0.21 to 0.71 point at 3,000
# examples and 0.12 to 0.22 at 5,000, in 1.2 to 1.6 times the time of the
# run it follows, bringing each within a point of SVC(C=10);
# make_classification(n_features=20) with a tenth or a fifth of the labels
# redrawn, 0.08 to 0.11 point at 3,000 to 5,000 (means of the three seeds).
# At 10,000 it took 1.5 to 1.6 times the time for 0.23 to 0.42 point, 0.32
# times SVC(C=10)'s time on the clusters, and at 40,000 twice the time, for
# 0.06 to 0.36 point.
_AUTO_REFIT_SAMPLES = 5_000
# The rows of each thread in a chunk of the function on a training batch: at
# the end of a budgeted fit of 200,000 x 100 float64 rows, numpy's peak was
# 288 MB with the whole batch in one chunk and 61 MB with these.
_PRODUCT_CHUNK_ROWS = 16_384

# the kernels that read gamma (as nu for inverse_dot)
_KERNELS_WITH_GAMMA = {"rbf", "poly", "sigmoid", "laplacian", "chi2", "inverse_dot"}

# The kernels computed on the features of dense or CSR rows, float64 or
# float32; the budgeted loop keeps the support vectors themselves.
_FEATURE_KERNELS = {"linear", "poly", "polynomial", "rbf", "sigmoid", "cosine"}

# The kernels of budget_strategy="project" (see _projects).
_PROJECTING_KERNELS = (
    "the 'linear', 'rbf' and 'cosine' kernels and the 'poly' kernel of "
    "coef0 >= 0 and an integer degree"
)

_BUDGET_STRATEGIES = {
    "remove": BudgetStrategy.BUDGET_REMOVE,
    "merge": BudgetStrategy.BUDGET_MERGE,
    "project": BudgetStrategy.BUDGET_PROJECT,
}


def _kernel_is_not_precomputed(estimator):
    # The kernel between a batch and the support vectors of earlier batches
    # is not part of a Gram matrix of the batch.
    return estimator.kernel != "precomputed"


@dataclass
class KernelRun:
    """The state of a run that the compiled loop carries from call to call:
    the support vectors and the function on them, which always change
    together, and the run's counters.

    ``coef``, ``avg``, ``f`` and ``g`` have a row per one-vs-rest problem
    and a column per support vector: its coefficient, its lazy-averaging
    sum (no rows without averaging), and the decision value and averaging
    accumulator of the function at it. ``scaled``: after budgeted merges,
    the support as the budgeted loop holds it, for its next call (a
    ScaledSupport); else None."""

    rows: object  # (n_support, n_features), dense or CSR; None between calls
    codes: np.ndarray  # (n_support,) int32: the class of each
    index: np.ndarray  # (n_support,) int64: its place among all samples seen
    coef: np.ndarray
    avg: np.ndarray
    f: np.ndarray
    g: np.ndarray
    n_updates: np.ndarray  # (n_problems,) int64
    n_steps: np.ndarray  # (n_problems,) int64
    radius: np.ndarray  # (2,): the largest k(x, x) seen and rho^2
    n_seen: int  # samples of all calls so far
    scaled: "ScaledSupport" = None

    def counters(self):
        """The run with copies of its counters, for a loop to count in: a
        run that fails leaves the model as it was."""
        return replace(
            self,
            n_updates=self.n_updates.copy(),
            n_steps=self.n_steps.copy(),
            radius=self.radius.copy(),
        )

    @classmethod
    def start(cls, X, n_problems, average):
        averaged = n_problems if average else 0
        return cls(
            rows=X[:0].astype(np.float64),
            codes=np.zeros(0, dtype=np.int32),
            index=np.zeros(0, dtype=np.int64),
            coef=np.zeros((n_problems, 0)),
            avg=np.zeros((averaged, 0)),
            f=np.zeros((n_problems, 0)),
            g=np.zeros((averaged, 0)),
            n_updates=np.zeros(n_problems, dtype=np.int64),
            n_steps=np.zeros(n_problems, dtype=np.int64),
            radius=np.zeros(2),
            n_seen=0,
        )


class _ArrayState:
    """A loop's state of arrays, which the loop changes in place, and its
    snapshots, to go on from later."""

    def snapshot(self, into=None):
        """A copy; written into the arrays of ``into``, a snapshot of the
        same shapes, when given (one that a newer one replaces)."""
        if into is None:
            return replace(
                self, **{name: value.copy() for name, value in vars(self).items()}
            )
        for name, value in vars(self).items():
            np.copyto(getattr(into, name), value)
        return into

    def resumed(self, into):
        """The state that the loop goes on from, of a snapshot, in place of
        ``into``, the state it was taken of: itself."""
        return self


@dataclass
class Points(_ArrayState):
    """The points of one call, the support so far followed by the batch, and
    the function on them, as the compiled loop updates them: the columns of
    ``f``, ``g``, ``coef`` and ``avg_coef`` are the points, and the support
    is the ring ``queue[start:start + count]`` of ``support_state``."""

    f: np.ndarray
    g: np.ndarray
    coef: np.ndarray
    avg_coef: np.ndarray
    queue: np.ndarray
    support_state: np.ndarray
    in_support: np.ndarray

    @property
    def n_support(self):
        return int(self.support_state[1])

    def support(self):
        """The indices of the points in the support, oldest first."""
        start, count = self.support_state
        return self.queue[(start + np.arange(count)) % len(self.queue)]


@dataclass
class ScaledSupport:
    """Support vectors held as ``scale[s] * rows[s]`` (rows over the
    features of the run's, dense or CSR), and ``raw_sq`` the squared norms
    of the rows as the budgeted loop keeps them (see BudgetSupport): the
    vectors' are ``scale * scale * raw_sq``, as the loop computes them."""

    rows: object
    scale: np.ndarray
    raw_sq: np.ndarray


@dataclass
class BudgetSupport(_ArrayState):
    """The support vectors of a budgeted run as its compiled loop keeps them:
    slots of ``rows``, the squared norms of their vectors (as
    ``squared_norms`` sums them but for the scaled ones below, kept by the
    loop as it writes a row, so that its calls do not sum the rows again:
    500 x 41,000 values at each epoch of early stopping on the vocabulary
    data of benchmarks/bench_kernel_scale.py), coefficients (a
    row per problem), averaging sums (no rows without averaging), indices among the
    samples seen (-1 for a merged vector), classes and order of entry; the
    slots hold the vectors ``scale[s] * rows[s]`` (a merge scales its
    partner's row and updates its squared norms at the features that it
    changes, see the compiled loop), and ``raw_sq`` the squared norms of
    the rows;
    ``state`` holds the number of slots in use, the next order of entry and the
    index of the first sample of the call. ``compact``: after a call of the
    loop on CSR examples, the slots in use as a CSR matrix of their values
    not 0 (from the loop's postings, without a scan of the rows), else
    None; before one, its slots, which it lists (it writes into ``rows``
    only the slots whose lists do not keep their values: on a wide
    vocabulary, a dense row of each slot would take budget x the features
    in use). ``held``: after a call on CSR examples, the loop's working arrays
    as it left them (the lists of the rows' features and their values, the
    buffers of its blocks of examples), for its next call while only the loop
    changes the rows;
    None after they are set from outside it."""

    rows: np.ndarray
    sq_norms: np.ndarray
    scale: np.ndarray
    raw_sq: np.ndarray
    coef: np.ndarray
    avg_coef: np.ndarray
    index: np.ndarray
    code: np.ndarray
    age: np.ndarray
    state: np.ndarray
    compact: object = None
    held: object = None

    @classmethod
    def holding(cls, run, budget, columns, sparse):
        """Slots for ``budget`` vectors (or the support of ``run``, if
        larger), the first ones holding that support, oldest first, on the
        features ``columns``: in ``rows``, or for a call on CSR examples
        (``sparse``) in ``compact``, from which the loop lists them."""
        n_old = len(run.index)
        capacity = max(budget, n_old)
        scaled = run.scaled
        old = (run.rows if scaled is None else scaled.rows)[:, columns]
        # pages touched as the loop writes them (paged_array): on CSR
        # examples, the rows whose lists do not keep their values alone
        rows = paged_array(capacity, len(columns), zeroed=True)
        compact = None
        if sparse:
            compact = sp.csr_matrix(old, dtype=np.float64)
            compact.sort_indices()
        else:
            rows[:n_old] = old.toarray() if sp.issparse(old) else old

        def slots(values, dtype=np.float64):
            padded = np.zeros((len(values), capacity), dtype=dtype)
            padded[:, :n_old] = values
            return padded

        if scaled is None:
            scale = np.ones(n_old)
            raw_sq = squared_norms(rows[:n_old] if compact is None else compact)
        else:
            scale, raw_sq = scaled.scale, scaled.raw_sq
        return cls(
            rows=rows,
            sq_norms=slots((scale * scale * raw_sq)[None])[0],
            scale=slots(scale[None])[0],
            raw_sq=slots(raw_sq[None])[0],
            coef=slots(run.coef),
            avg_coef=slots(run.avg),
            index=slots(run.index[None], np.int64)[0],
            code=slots(run.codes[None], np.int32)[0],
            age=slots(np.arange(n_old)[None], np.int64)[0],
            state=np.array([n_old, n_old, run.n_seen], dtype=np.int64),
            compact=compact,
        )

    @property
    def n_support(self):
        return int(self.state[0])

    def vectors(self):
        """The vectors of the slots in use: ``compact`` where given (after
        CSR examples), else the rows, times their scales."""
        rows = self.compact
        if rows is None:
            rows = self.rows[: self.n_support]
        return _scaled_rows(rows, self.scale[: self.n_support])

    def snapshot(self, into=None):
        """A copy whose rows are a CSR matrix of the slots in use: their
        ``compact`` values after CSR examples (a 0 of either sign is a 0
        of every product and merge), else every entry of the rows that is
        not +0 (-0.0 included, which dense input gives back in
        ``support_vectors_``); ``into`` is not used. On a wide vocabulary
        the support holds few of the features in use, and a dense copy of
        its slots would be as large as the loop's largest arrays: at
        10,000 examples of the vocabulary data of
        benchmarks/bench_kernel_scale.py and a budget of 500, 166 MB
        against 1.1 MB."""
        compact = self.compact
        if compact is None:
            rows = self.rows[: self.n_support]
            # the bits of +0 are all 0, those of -0.0 not
            compact = _csr_at(rows, np.flatnonzero(rows.view(np.uint64)))
        others = {
            name: value.copy()
            for name, value in vars(self).items()
            if name not in ("rows", "compact", "held")
        }
        return replace(self, rows=compact, held=None, **others)

    def resumed(self, into):
        """The slots again, from a snapshot, in the rows of ``into``, the
        support it was taken of: the same bits. Their pages are in use,
        where a new array's cost the system to zero them (0.3 s for the
        166 MB of the vocabulary data of benchmarks/bench_kernel_scale.py
        at 10,000 examples and a budget of 500). After a call on CSR
        examples (``compact``), the next call lists them from the
        snapshot's CSR rows instead, and the rows are not written."""
        compact = self.rows
        rows = into.rows
        into.held = None
        if into.compact is not None:
            return replace(self, rows=rows, compact=compact)
        rows.fill(0.0)
        # set, not added (as toarray adds): -0.0 stays -0.0
        at = np.repeat(np.arange(compact.shape[0]), np.diff(compact.indptr))
        rows[at, compact.indices] = compact.data
        return replace(self, rows=rows)

    def kept(self, counters, n_seen, estimator, X, columns, n_features):
        """The run after the call on X (on the features ``columns`` of
        ``n_features``): the support oldest first, with the function on it
        (the rows sparse after sparse input)."""
        # no call of the loop comes after: its arrays go before the products
        self.held = None
        n = self.n_support
        order = np.argsort(self.age[:n], kind="stable")
        # after CSR input, the entries not 0 (as csr_matrix stores a dense
        # array's), which the loop left: on a wide vocabulary the support
        # holds few of the features in use
        held = self.compact[order] if sp.issparse(X) else self.rows[:n][order]
        scale = self.scale[:n][order]
        run_rows = _scaled_rows(held, scale)
        coef, avg = self.coef[:, order], self.avg_coef[:, order]
        # CSR rows sum over their stored features, on either side: the bits
        # of the dense ones, at the cost of those
        products = estimator._products(run_rows, run_rows, np.vstack([coef, avg]))
        if sp.issparse(X):
            held, run_rows = (
                sp.csr_matrix(
                    (rows.data, columns[rows.indices], rows.indptr),
                    shape=(n, n_features),
                )
                for rows in (held, run_rows)
            )
        scaled = None
        if np.any(scale != 1.0):
            scaled = ScaledSupport(held, scale, self.raw_sq[:n][order])
        return KernelRun(
            rows=run_rows,
            codes=self.code[order],
            index=self.index[order],
            coef=coef,
            avg=avg,
            f=products[:, : len(coef)].T,
            g=products[:, len(coef) :].T,
            n_updates=counters.n_updates,
            n_steps=counters.n_steps,
            radius=counters.radius,
            n_seen=n_seen,
            scaled=scaled,
        )


def _class_order(run):
    """The order of ``support_`` among the run's support vectors: grouped
    by class, then by index, as in SVC."""
    return np.lexsort((run.index, run.codes))


def _holds_scaled_support(state):
    """Whether the state of a KernelPerceptron holds a run whose support
    the budgeted loop scaled (KernelRun.scaled)."""
    run = state.get("_run")
    return run is not None and run.scaled is not None


def _scaled_rows(rows, scale):
    """The dense or CSR rows, each times its scale: the products that the
    budgeted loop writes into a row's values (the same bits); the rows
    themselves where every scale is 1."""
    if np.all(scale == 1.0):
        return rows
    if sp.issparse(rows):
        rows = rows.copy()
        rows.data *= np.repeat(scale, np.diff(rows.indptr))
        return rows
    return rows * scale[:, None]


@fill_doc
class KernelPerceptron(BasePerceptron):
    """The kernel perceptron and its margin variants.

    The dual perceptron ([5]_, Algorithm 2; [6]_, section 2) keeps
    its weights in a feature space as a sum over the examples that caused
    updates, ``f(x) = sum_j a_j k(x_j, x)``: on an example ``(x, y)`` with
    ``y f(x) <= beta_t`` it adds ``y k(x, .)`` to ``f``. The thresholds
    ``beta_t`` are those of :class:`MarginPerceptron` measured in the
    feature space of the kernel. Training stops after the first epoch
    without an update.

    The output is a sum over a subset of the sample, the perceptron's
    compression: ``support_`` and ``dual_coef_``, named as in
    :class:`sklearn.svm.SVC`.

    Read more in the :ref:`User Guide <kernel_perceptron>`.

    Parameters
    ----------
    kernel : str or callable, default="rbf"
        The kernel ``k``: a name that
        :func:`sklearn.metrics.pairwise.pairwise_kernels` accepts (``"rbf"``,
        ``"poly"``, ``"linear"``, ``"sigmoid"``, ``"laplacian"``, ``"chi2"``,
        ...), ``"inverse_dot"`` for
        :func:`skperc.kernels.inverse_dot_kernel`, ``"precomputed"``, or a
        callable. With ``"precomputed"``, :meth:`fit` takes the Gram matrix
        of the training samples and :meth:`decision_function` the kernel
        between the test and the training samples, of shape
        ``(n_samples_test, n_samples_train)``. A callable is called by
        ``pairwise_kernels`` on pairs of samples (two 1-D rows) with
        ``kernel_params``, as in :class:`~sklearn.kernel_ridge.KernelRidge`
        and :class:`~sklearn.kernel_approximation.Nystroem`; one written for
        :class:`~sklearn.svm.SVC`, which takes two matrices and returns
        their Gram matrix, gives ``"precomputed"`` its matrices.

    gamma : {"scale", "auto"} or float, default="scale"
        The coefficient of the ``"rbf"``, ``"poly"``, ``"sigmoid"``,
        ``"laplacian"`` and ``"chi2"`` kernels, and ``nu`` of
        ``"inverse_dot"``; ``>= 0``. As in :class:`sklearn.svm.SVC`,
        ``"scale"`` is ``1 / (n_features * X.var())`` and ``"auto"`` is
        ``1 / n_features``, both taken from the run's first batch (the
        training data of :meth:`fit`). ``"scale"`` follows the spread of
        the data: on sparse or unscaled data ``"auto"`` can make the RBF
        kernel nearly constant. ``None`` is ``"auto"``, deprecated.

    degree : float, default=3
        The degree of the ``"poly"`` kernel,
        ``(gamma <x, x'> + coef0)^degree``.

    coef0 : float, default=1.0
        The constant of the ``"poly"`` and ``"sigmoid"`` kernels. With
        ``gamma=1`` and ``coef0=1`` the polynomial kernel is that of [5]_,
        ``(1 + x . x')^q``.

    kernel_params : dict, default=None
        The keyword arguments of a callable kernel; not used by the others.

    beta : float, {"auto", "scale", "power"} or ThresholdSchedule, \
            default="auto"
        The update threshold, as in :class:`MarginPerceptron`: ``0`` for
        the plain kernel perceptron, a constant ``> 0`` for the
        beta-perceptron, ``"scale"`` for the R-independent perceptron and
        ``"power"`` for the infinity-perceptron, in feature space: the norm
        of an example is ``sqrt(k(x, x))``, so ``"power"`` follows
        ``rho^2 = max k(x, x)`` over the examples seen and ``"scale"`` sets
        ``rho^2 = 4 k(x, x)`` whenever an example is longer than ``rho``.
        ``"auto"`` is :class:`~skperc.schedules.RelativeThreshold` ``(0.25)``,
        the beta-perceptron with ``beta = rho^2 / 4`` (``0.25`` for the RBF
        kernel, where ``k(x, x) = 1``): at most ``1.5 (R / eps*)^2``
        updates and a margin of at least ``eps* / 6`` on a separable
        sample, whatever the scale of the kernel. On noisy data the margin
        is what keeps the function off the noise: there ``beta=0`` loses 1
        to 2 points of accuracy to SVC (see "When the data is not
        separable" in the user guide). In a fit (or a call of
        :meth:`partial_fit`) that ``budget`` binds, ``"auto"`` is
        ``RelativeThreshold(1.0)``: there a larger margin lets fewer
        examples move the function, whose every update past a full budget a
        merge or removal pays for (see the Notes).

    {{alpha}}

    max_iter : int, default=1000
        The largest number of epochs of :meth:`fit`, as for
        :class:`MarginPerceptron` and scikit-learn's
        :class:`~sklearn.linear_model.Perceptron`. Reaching it without an
        epoch free of updates, unless the stopping rule ended the run,
        raises a :class:`~sklearn.exceptions.ConvergenceWarning`. A small
        sample may separate slowly: with the RBF kernel the standardized
        iris takes 330 to 400 epochs (in 3 ms); a run on data that is not
        separable ends by the stopping rule or early stopping, most long
        before.

    {{tol}}

    n_iter_no_change : int or "auto", default="auto"
        The number of epochs without fewer sign mistakes that the stopping
        rule waits for, and with early stopping, the number after the best
        validation score. ``"auto"`` is 5, scikit-learn's default, except
        for early stopping in a fit that a ``budget`` that merges or removes
        binds, where it is 2: under a full budget the validation score of
        the last function wanders from epoch to epoch, while the fit answers
        with the mean of one more epoch on the support that the best score
        chose, whose accuracy depends little on the epoch. In such a fit,
        whatever the patience, only a score that beats the best by more than
        the best's standard error on the validation part,
        ``sqrt(p (1 - p) / n)``, starts the wait again, though a smaller gain
        still becomes the best. Projection, whose score creeps up, waits 5
        from the best (see :ref:`kernel_budget_measured`).

    early_stopping : bool or "auto", default="auto"
        Whether :meth:`fit` sets aside a stratified ``validation_fraction``
        of the training data and trains on the rest, scoring after each
        epoch the function it would answer with (see ``average``) on the
        part set aside; the score replaces the stopping rule on the training
        data (``tol``), and the run answers as it stood at its best score
        (``validation_scores_``). The run stops at an epoch without updates,
        ``n_iter_no_change`` epochs after its best score (in a fit that a
        budget that merges or removes binds, after its last clear gain: see
        ``n_iter_no_change``), or, in a fit that no budget binds, at an
        epoch that changes the class its answer gives to at most 0.25% of
        the training part: the answer has settled. In a fit that no budget
        binds, neither of the last two ends a run while its best score is
        1: a held-out part classified without a mistake is no sign of noise.
        ``"auto"`` turns it on for samples of more than 2,000 examples (a
        held-out part of more than 200): with the RBF kernel every sample of
        distinct points is separable, label noise included, so the rule on
        the training data lets a run learn the noise, each epoch at ``n``
        kernel values per update. It also turns it on for a sample that the
        ``budget`` binds, at any size: there the theorems do not hold anyway,
        and under a full budget the last function keeps moving, so that the
        rule on the training data runs many epochs for nothing. A run that
        early stopping ends has not separated its training data
        (``converged_=False``, ``stop_reason_="no_improvement"``) and the
        theorems of its threshold do not apply to it:
        ``early_stopping=False`` runs to separation. Used by :meth:`fit`
        only; with ``True``, a sample too small to put every class on both
        sides of the split raises a ``ValueError`` before any training,
        where ``"auto"`` keeps the rule on the training data. See
        :ref:`kernel_early_stopping`.

    {{validation_fraction}}

    refit : bool or "auto", default="auto"
        Whether :meth:`fit`, once early stopping has ended its run, fits again
        on the whole sample, the held-out part included, and answers with that
        second fit: for as many epochs as the run took to its best validation
        score, answering with the mean of its functions (as ``average=True``;
        with ``average=False``, with the last function), or, where the run
        separated its training part, until the whole sample is separated (as
        ``early_stopping=False``). Where the accuracy still grows with the
        sample, the held-out part is worth the second fit, which reads from
        the first run's cache the kernel columns that run kept. The second
        fit continues the same previous run as the first under
        ``warm_start=True``. ``validation_scores_`` and
        ``best_validation_score_`` stay those of the run that chose the
        epochs, and so does ``stop_reason_`` where the second fit ran them
        all; the other fitted attributes are the second fit's. Not used
        without early stopping, nor by :meth:`partial_fit`. ``"auto"`` fits
        again on samples of at most 5,000 examples that no ``budget`` binds,
        where the default ``cache_size`` holds the column of every example
        and the second fit costs a fraction of the first; on larger samples
        it takes half to all of the first fit's time again (see
        :ref:`kernel_early_stopping` for both, measured).

    {{shuffle}}

    {{random_state}}

    {{average_auto}}

    budget : int, default=None
        The largest number of support vectors. When an example that is not a
        support vector must update and ``budget`` are held, one is made free
        first, by ``budget_strategy``. ``None`` means no limit. A budget of at
        least half the examples that the support stays below changes nothing:
        the fit is the one without it, to the bit. With the ``"linear"``,
        ``"poly"``, ``"rbf"``, ``"sigmoid"`` and ``"cosine"`` kernels any other
        budget binds the fit (or the call of :meth:`partial_fit`): it runs the
        budgeted loop, which holds the support vectors themselves, and the
        defaults of ``beta``, ``early_stopping``, ``n_iter_no_change`` and
        ``refit`` change with it. With the other kernels a budget binds no fit:
        it removes the oldest support vector in the loop of kernel columns,
        each update a column over the sample as without it, and those defaults
        stay those of a fit without a budget. Without a budget each update
        computes a kernel column over the whole sample, and on noisy data the
        support grows with the sample, so that the time of a fit grows faster
        than the sample; a budget that binds bounds the work of each example by
        the budget. See the Notes for its cost and for what it does to the
        guarantees, and :ref:`kernel_budget` for its time and accuracy beside
        SVC and Nystroem as the sample grows.

    budget_strategy : {"auto", "merge", "project", "remove"}, default="auto"
        How a full budget makes room. ``"auto"`` takes the one of the three
        below that keeps the most accuracy with the kernel: ``"merge"`` with
        the RBF kernel, ``"project"`` with the other kernels that project,
        ``"remove"`` with the rest (an explicit strategy that the kernel lacks
        is refused). ``"merge"`` (the RBF kernel only) merges
        the support vector of the smallest coefficients (the newest of those)
        with one of the 8 nearest vectors of its class (the largest kernel
        values): the one whose merge at the point that weighs the two by their
        coefficients changes the function least. The two become one point
        ``z = h x_m + (1 - h) x_j`` on the segment between them, with ``h``
        found by golden-section search (or ``h = 0``, the partner itself,
        where the search ends beside that end and ``h = 0`` changes the
        function no more), and the coefficient that
        best replaces the pair in feature space, as in budgeted SGD [7]_,
        which searches every vector of the class for the partner; ``z`` is
        no training sample, and when that merge changes the function more
        than removing the vector would, the vector is removed. ``"project"``
        (the ``"linear"``, ``"rbf"`` and ``"cosine"`` kernels, and ``"poly"``
        of ``coef0 >= 0`` and an integer ``degree``: kernels whose matrices are
        positive semi-definite) removes the support vector of the smallest
        coefficients (the oldest of those) after adding its coefficients,
        times the projection of its kernel function onto the span of its 8
        nearest other support vectors (the largest kernel values, the oldest
        of equal ones), to theirs, as the Projectron [8]_ projects a new
        vector; every support vector stays a training sample. With the RBF
        kernel, merging scored higher than projecting, in less time, on
        every data set measured (see :ref:`kernel_budget_measured`):
        projection is for the other kernels. ``"remove"`` removes the
        oldest support vector from the function, the forgetting rule of
        budget perceptrons [4]_: cheap, and on data that needs more support
        vectors than the budget it loses much more accuracy than merging or
        projecting. Not used without a budget. With the RBF kernel, a fit
        that ends on a full budget then makes an averaging epoch on the
        support as it stands (see the Notes).

    cache_size : float, default=200
        The size in MB of the cache of kernel columns, ``> 0``. Once full,
        it keeps the columns it holds, and the others are computed again
        at each use (see the user guide). With a ``budget``, the memory that
        the averaging epoch which ends the fit may take for the kernel
        values among the support vectors (8 bytes for each pair of them),
        or it computes them at each use.

    {{class_weight}}

    {{warm_start}}

    n_jobs : int, default=None
        The number of threads that share the work on the rows: in training,
        the computation and the addition of each kernel column, or with a
        ``budget``, the kernel rows over the support of each block of
        examples, which one thread then examines while the others compute
        the rows of the next block; in :meth:`decision_function`, the rows
        of each chunk of ``X``. A small sample, or a small product of rows
        and support vectors, uses fewer threads. A multiclass fit trains its
        one-vs-rest problems in one pass that shares each column among them,
        so they share the same threads: no more than ``n_jobs`` run.
        {{n_jobs_count}}
        The result does not depend on ``n_jobs``, bit for bit. On cores kept
        busy by other work, the loop runs on one thread for a while once its
        threads have lost more time waiting for each other than they gained
        (see *How it runs* in :ref:`kernel_perceptron`).

    {{verbose}}

    {{record_updates}}

    Attributes
    ----------
    {{classes_}}

    support_ : ndarray of shape (n_SV,)
        The indices of the support vectors in the training data, grouped by
        class; after :meth:`partial_fit`, indices in the sequence of all
        the samples of all its calls; -1 for a vector made by merging
        (``budget_strategy="merge"``), which is no training sample.

    support_vectors_ : ndarray or sparse matrix of shape (n_SV, n_features)
        The support vectors, merged ones included; empty with
        ``kernel="precomputed"``.

    dual_coef_ : ndarray of shape (1, n_SV) or (n_classes, n_SV)
        The coefficient of each support vector in the decision function of
        each one-vs-rest problem: ``y_j`` times the number of updates it
        made (times its sample weight), or their average in a problem that
        answers with the mean function (see ``average``); in a problem that
        ``average="auto"`` answers with a point between its last function
        and their mean, that point's coefficients; after the averaging
        epoch of a full budget (see the Notes), the mean over that epoch.
        Zero in a problem the vector never updated.

    intercept_ : ndarray of shape (1,) or (n_classes,)
        Zeros: the decision function is a sum of kernels; an intercept is
        a constant kernel term such as ``coef0``.

    n_support_ : ndarray of shape (n_classes,), dtype=int32
        The number of support vectors of each class.

    n_iter_ : int
        The number of epochs of the last call to :meth:`fit` or
        :meth:`partial_fit`.

    {{n_updates_}}

    margin_ : ndarray of shape (1,) or (n_classes,)
        The geometric margin in feature space of each one-vs-rest problem
        on the training data of the last call: the smallest
        ``y f(x) / ||w||`` over the examples of positive weight, where
        ``||w||^2 = a^T K a`` over the support vectors. Negative when that
        data is not separated, 0 where ``w`` is 0.

    {{converged_}}

    {{stop_reason_}}

    {{validation_scores_}}
        With ``refit=True``, both are the scores of the run that chose the
        epochs of the second fit, which trains on the validation part too.

    {{updates_}}

    {{n_features_in_}}

    See Also
    --------
    MarginPerceptron : The same thresholds on the features themselves.
    sklearn.svm.SVC : The kernel support vector machine.
    skperc.kernels : The kernels of the source texts.

    Notes
    -----
    {{stopping_notes}}
    See :ref:`not_separable`.

    Training never forms the Gram matrix: it keeps the decision values of the
    training examples and adds the kernel column of each updated example into
    them. Memory is ``O(n_samples * n_classes)`` plus the cache of columns
    (``cache_size``; on CSR input, a copy of its stored entries too), and time
    is ``O(n_samples)`` per epoch plus ``O(n_samples * n_features)`` per column
    computed (one per update of an example whose column is not in the cache).
    The ``"linear"``, ``"poly"``, ``"rbf"``, ``"sigmoid"`` and ``"cosine"``
    columns are computed in the compiled loop on dense or CSR, float64 or
    float32 rows, read as they are; each product of two rows sums in feature
    order in double precision, so that these forms of the same values give the
    same model bit for bit. A multiclass problem is one-vs-rest in a single
    pass: one column serves every class that an example updates.
    :meth:`decision_function` evaluates the kernel between the samples and the
    support vectors only, in chunks within scikit-learn's ``working_memory``.
    The user guide's :ref:`kernel_perceptron` says how each step runs, and what
    it costs on the data of ``benchmarks/bench_kernel_scale.py``.

    A ``budget`` that binds (see ``budget``) keeps the support vectors
    themselves, at most ``budget`` rows, and costs ``O(budget *
    n_features)`` for each example examined, whatever the number of
    samples. Once it is full the theorems of :class:`MarginPerceptron` no
    longer hold: a removed, merged or projected support vector takes its
    share of the progress that Novikoff's bound counts, no mistake bound is
    known for the three strategies, and the run may not stop on separable
    data. A fit with the RBF kernel that ends on a full budget and answers
    with a mean makes one more epoch, the averaging epoch, on the support
    as it stands: no vector enters or leaves it, an example that is no
    support vector updates with the projection of its kernel function onto
    the span of its 8 nearest support vectors, and the fit answers with the
    mean of that epoch's functions (with early stopping, only if it scores
    at least ``best_validation_score_``, else with the last function). The
    epoch counts in ``n_updates_``, not in ``n_iter_``; :meth:`partial_fit`
    makes none. See :ref:`kernel_budget`.

    Labels are mapped to ``-1`` and ``+1``; :meth:`predict` gives
    ``classes_[1]`` on a decision value of exactly 0.

    Kernel or decision values beyond the float range, and kernel values
    that are NaN on finite input, stop the compiled loop at once with a
    ``ValueError`` that names the value and the remedy, and
    :meth:`decision_function` and :meth:`predict` raise the same error
    rather than return such a value; a :meth:`partial_fit` call stopped so
    leaves the model as it was.

    The decision values are margins in the feature space, not
    probabilities, and the kernel perceptron has no ``predict_proba``: for
    probabilities, wrap it in
    :class:`~sklearn.calibration.CalibratedClassifierCV`, as scikit-learn
    recommends for :class:`~sklearn.svm.SVC` (see :ref:`probabilities`).

    References
    ----------
    .. [1] M. A. Aizerman, E. M. Braverman and L. I. Rozonoer, "Theoretical
       foundations of the potential function method in pattern recognition
       learning", Automation and Remote Control 25, 1964.
    .. [2] Y. Freund and R. E. Schapire, "Large margin classification using
       the perceptron algorithm", Machine Learning 37(3), 277-296, 1999.
    .. [3] S. Moran, I. Nachum, I. Panasoff and A. Yehudayoff, "On the
       Perceptron's Compression", Computing with Foresight and Industry
       (CiE 2020), Lecture Notes in Computer Science 12098, Springer, 2020.
    .. [4] O. Dekel, S. Shalev-Shwartz and Y. Singer, "The Forgetron: a
       kernel-based perceptron on a budget", SIAM Journal on Computing
       37(5), 2008.
    .. [5] R. Livni, "Lecture 5: Linear Classification", lecture notes on
       computational learning theory, Tel Aviv University.
    .. [6] S. O. Chan, "Notes 3: Perceptron and Halving algorithms", CSCI4230
       Computational Learning Theory, The Chinese University of Hong Kong,
       Spring 2019 (after R. Servedio's notes).
    .. [7] Z. Wang, K. Crammer and S. Vucetic, "Breaking the curse of
       kernelization: budgeted stochastic gradient descent for large-scale
       SVM training", Journal of Machine Learning Research 13, 3103-3131,
       2012.
    .. [8] F. Orabona, J. Keshet and B. Caputo, "Bounded kernel-based
       online learning", Journal of Machine Learning Research 10,
       2643-2666, 2009.

    Examples
    --------
    No line separates the XOR pattern; the polynomial kernel
    ``(1 + x . x')^2`` does:

    >>> import numpy as np
    >>> from skperc import KernelPerceptron
    >>> X = np.array([[1, 1], [-1, -1], [1, -1], [-1, 1]])
    >>> y = np.array([1, 1, 0, 0])
    >>> clf = KernelPerceptron(kernel="poly", degree=2, gamma=1.0, random_state=0)
    >>> clf.fit(X, y).score(X, y), clf.converged_
    (1.0, True)
    >>> clf.predict([[2, 2], [2, -2]])
    array([1, 0])
    """

    _parameter_constraints: dict = {
        **BasePerceptron._parameter_constraints,
        "beta": [
            Interval(Real, 0, None, closed="left"),
            StrOptions({"auto", "scale", "power"}),
            ThresholdSchedule,
        ],
        "kernel": [
            StrOptions(set(PAIRWISE_KERNEL_FUNCTIONS) | {"precomputed", "inverse_dot"}),
            callable,
        ],
        "gamma": [
            Interval(Real, 0, None, closed="left"),
            StrOptions({"scale", "auto"}),
            None,
        ],
        "degree": [Interval(Real, 0, None, closed="left")],
        "coef0": [Interval(Real, None, None, closed="neither")],
        "kernel_params": [dict, None],
        "n_iter_no_change": [
            Interval(Integral, 1, np.iinfo(np.intp).max, closed="both"),
            StrOptions({"auto"}),
        ],
        "budget": [Interval(Integral, 1, np.iinfo(np.intp).max, closed="both"), None],
        "budget_strategy": [StrOptions(set(_BUDGET_STRATEGIES) | {"auto"})],
        "cache_size": [Interval(Real, 0, None, closed="neither")],
        "early_stopping": ["boolean", StrOptions({"auto"})],
        "validation_fraction": [Interval(Real, 0, 1, closed="neither")],
        "refit": ["boolean", StrOptions({"auto"})],
    }

    def __init__(
        self,
        *,
        kernel="rbf",
        gamma="scale",
        degree=3,
        coef0=1.0,
        kernel_params=None,
        beta="auto",
        alpha=1.3,
        max_iter=1000,
        tol=0.01,
        n_iter_no_change="auto",
        early_stopping="auto",
        validation_fraction=0.1,
        refit="auto",
        shuffle=True,
        random_state=None,
        average="auto",
        budget=None,
        budget_strategy="auto",
        cache_size=200,
        class_weight=None,
        warm_start=False,
        n_jobs=None,
        verbose=0,
        record_updates=False,
    ):
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.kernel_params = kernel_params
        self.beta = beta
        self.alpha = alpha
        self.max_iter = max_iter
        self.tol = tol
        self.n_iter_no_change = n_iter_no_change
        self.early_stopping = early_stopping
        self.validation_fraction = validation_fraction
        self.refit = refit
        self.shuffle = shuffle
        self.random_state = random_state
        self.average = average
        self.budget = budget
        self.budget_strategy = budget_strategy
        self.cache_size = cache_size
        self.class_weight = class_weight
        self.warm_start = warm_start
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.record_updates = record_updates

    partial_fit = available_if(_kernel_is_not_precomputed)(BasePerceptron.partial_fit)

    @consistent_read
    def decision_function(self, X):
        """The decision value ``f(x) = sum_j dual_coef_j k(x_j, x)`` of each
        one-vs-rest problem.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features) \
                or (n_samples, n_samples_train)
            The data, or its kernel with the training samples when
            ``kernel="precomputed"``.

        Returns
        -------
        scores : ndarray of shape (n_samples,) or (n_samples, n_classes)
            For a binary problem, positive values favour ``classes_[1]``.
        """
        check_is_fitted(self)
        X = validate_data(self, X, reset=False, **self._validation())
        X = _narrow_indices(check_sparse_structure(X))
        # an overflow raises below, naming its cause
        with np.errstate(over="ignore", invalid="ignore"):
            if self.kernel == "precomputed":
                scores = X[:, self.support_] @ self.dual_coef_.T
            else:
                scores = self._products(
                    X,
                    self.support_vectors_,
                    self.dual_coef_,
                    reading=self._support_reading,
                )
        check_finite_scores(scores)
        return scores.ravel() if scores.shape[1] == 1 else scores

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = self.kernel == "precomputed"
        tags.input_tags.sparse = self.kernel != "precomputed"
        return tags

    def __getstate__(self):
        # A pickle holds no state that the model's arrays give again, which
        # __setstate__ rebuilds: the reading of the support (_read_support),
        # and after merges support_vectors_, the rows that the run keeps
        # unscaled with their scales for its next call (ScaledSupport).
        state = super().__getstate__()
        derived = {"_support_reading"}
        if _holds_scaled_support(state):
            derived.add("support_vectors_")
        return {name: v for name, v in state.items() if name not in derived}

    def __setstate__(self, state):
        super().__setstate__(state)
        if _holds_scaled_support(state) and "support_vectors_" not in state:
            scaled = self._run.scaled
            rows = _scaled_rows(scaled.rows, scaled.scale)
            self.support_vectors_ = rows[_class_order(self._run)]
        if hasattr(self, "support_vectors_"):
            # (also in place of the reading that a pickle of an earlier
            # version held, in the form of that version)
            self._read_support()

    def _read_support(self):
        """Keep what decision_function reads of support_vectors_ besides
        its vectors (_support_reading)."""
        self._support_reading = (
            _support_reading(self.support_vectors_) if self._on_features() else None
        )

    def _validation(self):
        precomputed = self.kernel == "precomputed"
        return dict(
            accept_sparse=False if precomputed else "csr",
            dtype=[np.float64, np.float32] if self._on_features() else np.float64,
            order="C",
        )

    def _on_features(self):
        """Whether the kernel is one the compiled loops compute on the
        features, which read float32 rows without a copy."""
        return isinstance(self.kernel, str) and self.kernel in _FEATURE_KERNELS

    def _check_input(self, X, warm):
        if self.budget is not None:
            # a strategy the kernel lacks is refused; "auto" takes one it has
            if self.budget_strategy == "merge" and self.kernel != "rbf":
                raise ValueError(
                    "budget_strategy='merge' merges support vectors under the "
                    f"RBF kernel only; got kernel={self.kernel!r}. Use "
                    f"budget_strategy='project' ({_PROJECTING_KERNELS}) or "
                    "'remove' with other kernels."
                )
            if self.budget_strategy == "project" and not self._projects():
                raise ValueError(
                    "budget_strategy='project' projects support vectors under "
                    f"{_PROJECTING_KERNELS} only; got kernel={self.kernel!r}, "
                    f"coef0={self.coef0!r}, degree={self.degree!r}. Use "
                    "budget_strategy='remove' with other kernels."
                )
        # Tiny values continue a run of normal scale without harm, but for
        # the cosine kernel's squared norms, 0 where they underflow.
        if self.kernel == "cosine" or (
            self.kernel == "linear" and not (warm and self._run.radius[0] > 0)
        ):
            check_no_underflow(X, "the kernel values and decision values")
        if self.kernel != "precomputed":
            # the compiled kernels sum CSR rows in feature order
            return _narrow_indices(canonical(X))
        if warm:
            raise ValueError(
                "warm_start=True needs the kernel between the new samples and "
                "the support vectors of the previous run, which a Gram matrix "
                "of the new samples does not hold; it is not supported with "
                "kernel='precomputed'."
            )
        if X.shape[0] != X.shape[1]:
            raise ValueError(
                "With kernel='precomputed', X must be the square Gram matrix "
                f"of the training samples; got shape {X.shape}."
            )
        return X

    def _gamma(self):
        """The kernel coefficient: ``gamma`` itself, or the value that
        "scale" or "auto" took at the start of the run."""
        if isinstance(self.gamma, str) or self.gamma is None:
            return self._run_gamma
        return float(self.gamma)

    def _resolved_gamma(self, X):
        """What "scale" and "auto" (and the deprecated None) mean on X."""
        if self.gamma is None:
            warnings.warn(
                "gamma=None is deprecated and means gamma='auto' "
                "(1 / n_features); the default is now gamma='scale', as in "
                "sklearn.svm.SVC. Pass gamma='auto' to keep the old value.",
                FutureWarning,
                stacklevel=6,
            )
        if self.gamma != "scale" or self.kernel not in _KERNELS_WITH_GAMMA:
            return 1.0 / X.shape[1]
        # Where every square underflows, the variance would be 0 (taken for
        # constant data: gamma 1, a kernel of constant values) or a subnormal
        # number without its digits.
        check_no_underflow(X, "the squares in the variance of X (for gamma='scale')")
        # the variance of all the entries, E[x^2] - E[x]^2
        squares, sums = np.float64(mean_moments(X))
        with np.errstate(over="ignore", invalid="ignore"):
            variance = squares / X.shape[1] - (sums / X.shape[1]) ** 2
            gamma = 1.0 / (X.shape[1] * variance) if variance > 0 else 1.0
        if not np.isfinite(variance):
            raise_non_finite(
                "the variance of X (for gamma='scale')", "before the run", _REMEDY
            )
        if not np.isfinite(gamma):
            raise_non_finite(
                "the kernel coefficient of gamma='scale', 1 / (n_features * X.var()),",
                "before the run",
                "or pass a float gamma",
            )
        return gamma

    def _kernel(self, X, Y):
        """The kernel matrix k(X, Y), by pairwise_kernels or inverse_dot."""
        gamma = self._gamma()
        if self.kernel == "inverse_dot":
            return inverse_dot_kernel(X, Y, nu=gamma)
        if not callable(self.kernel):
            params = {"gamma": gamma, "degree": self.degree, "coef0": self.coef0}
            return pairwise_kernels(
                X, Y, metric=self.kernel, filter_params=True, **params
            )
        try:
            return pairwise_kernels(
                X, Y, metric=self.kernel, **(self.kernel_params or {})
            )
        except (AttributeError, IndexError, TypeError, ValueError) as error:
            # A kernel written for SVC, of two matrices, fails on the rows.
            name = getattr(self.kernel, "__name__", repr(self.kernel))
            raise ValueError(
                f"The callable kernel {name} failed on two samples, which "
                "pairwise_kernels passes it as 1-D rows (see kernel): "
                f"{type(error).__name__}: {error} A kernel of two matrices, as "
                "SVC takes, gives kernel='precomputed' its Gram matrices."
            ) from error

    def _kernel_products(self, X, Y, coef):
        """k(X, Y) @ coef.T, of shape (len(X), len(coef)), computed in
        chunks of rows of X, n_jobs at a time in threads, whose kernel
        matrices together fit in working_memory."""
        scores = np.zeros((X.shape[0], coef.shape[0]))
        if Y.shape[0] == 0 or X.shape[0] == 0:
            return scores
        n_jobs = thread_count(self.n_jobs)
        # At least one chunk for each thread, and no chunk of one row, which
        # BLAS multiplies by another kernel than a row among others.
        chunks = blocks_in_working_memory(
            X.shape[0],
            8 * Y.shape[0] * n_jobs,
            max_rows=-(-X.shape[0] // n_jobs),
            min_rows=2,
        )
        coef = np.ascontiguousarray(coef, dtype=np.float64)

        def score(rows):
            kernel = np.ascontiguousarray(self._kernel(X[rows], Y), dtype=np.float64)
            scores[rows] = weighted_rows(kernel, coef)

        # Threads share X and scores (a process backend set by the caller
        # would copy them); the kernels spend their time in BLAS and numpy,
        # which release the GIL.
        Parallel(n_jobs=min(n_jobs, len(chunks)), require="sharedmem")(
            delayed(score)(rows) for rows in chunks
        )
        return scores

    def _kernel_diagonal(self, X):
        """k(x, x) of each row of X, by pairwise_kernels or inverse_dot."""
        diagonal = np.empty(X.shape[0])
        # The diagonal of the kernel matrix of each block of rows; a
        # callable is called once per pair, so its blocks are single rows.
        for batch in batches(X.shape[0], 1 if callable(self.kernel) else 256):
            diagonal[batch] = np.diagonal(self._kernel(X[batch], X[batch]))
        return diagonal

    def _start_run(self, classes, X):
        """An empty function and zero counters for a new run."""
        self.classes_ = classes
        self._run = KernelRun.start(X, problem_count(classes), bool(self.average))
        self.n_updates_ = self._run.n_updates
        self._run_gamma = self._resolved_gamma(X)

    def _refit_start(self, warm, n_samples):
        """Where ``refit`` asks for a second fit, the estimator it starts
        from: a copy of this one, which continues the same run as the first
        fit when ``warm``, else a new one; None where early stopping cannot
        end the run (no second fit would use the copy)."""
        refits = (
            n_samples <= _AUTO_REFIT_SAMPLES if self.refit == "auto" else self.refit
        )
        # a budget that binds splits any sample
        splits = may_split(
            self.early_stopping, self._auto_splits(n_samples, self._budget_may_bind())
        )
        if not (refits and splits):
            return None
        return copy.deepcopy(self) if warm else clone(self)

    def _refit(self, start, X, y, sample_weight):
        """With ``refit`` and a run that early stopping ended (under
        ``"auto"``, one that no budget bound), fit ``start`` on the whole
        sample (see ``refit``) and take its fitted attributes, but the
        validation scores and, after the epochs of the best score, the first
        run's stop_reason_."""
        columns = vars(self).pop("_kept_columns", None)
        if start is None or self.validation_scores_ is None:
            return
        if self.refit == "auto" and columns is None:
            # a budget bound the run: see _AUTO_REFIT_SAMPLES
            return
        scores, best, reason = (
            self.validation_scores_,
            self.best_validation_score_,
            self.stop_reason_,
        )
        # quiet: its own "Stopped" line would give the reason of a run of
        # the epochs it was given
        params = dict(refit=False, early_stopping=False, verbose=0)
        if not self.converged_:
            epochs = int(np.argmax(scores)) + 1
            # the mean, as "auto" answers a run that early stopping ended;
            # average=False keeps the last function (and its run, which
            # warm_start continues, keeps no averaging sums)
            params.update(max_iter=epochs, average=bool(self.average), tol=None)
        with warnings.catch_warnings():
            # the first run, on the same data, has raised the data's
            # warnings, and fit() itself warns if the second fit ends on
            # max_iter
            warnings.simplefilter("ignore")
            start.set_params(**params)._kept_columns = columns
            start.fit(X, y, sample_weight)
        # where the second fit did not run the loop of kernel columns (a
        # budget that binds), it did not take them
        vars(start).pop("_kept_columns", None)
        own = self.get_params(deep=False)
        vars(self).update(
            (name, value) for name, value in vars(start).items() if name not in own
        )
        self.validation_scores_, self.best_validation_score_ = scores, best
        if not self.converged_ and params.get("max_iter") == self.n_iter_:
            self.stop_reason_ = reason
        if self.verbose > 0:
            print(f"-- Fit again on the whole sample: {self.n_iter_} epoch(s)")

    def _resume_run(self):
        """Give the run the rows of its support vectors, oldest first, the
        order in which a call continues it: between calls a model holds them
        as ``support_vectors_`` alone, grouped by class (so does its pickle,
        which after merges holds the run's ScaledSupport instead: see
        __getstate__). A precomputed kernel's run keeps its rows."""
        run = self._run
        if run.rows is None:
            in_run = np.argsort(_class_order(run))
            self._run = replace(run, rows=self.support_vectors_[in_run])

    def _train(self, X, codes, weight, schedule, max_iter, stop_when_separated):
        """Run the compiled loop on the support vectors so far and the batch
        X (codes: the indices of y in classes_); set the fitted attributes."""
        self.validation_scores_ = self.best_validation_score_ = None
        self._resume_run()
        # the loops' calls of one fit, the run without the budget and the
        # budgeted one after it included, go on from where the last one
        # left its threads
        thread_state = new_thread_state()
        call = (X, codes, weight, schedule, max_iter, stop_when_separated)
        if not self._budget_binds(X):
            return self._train_columns(*call, thread_state)
        if self._tries_without_budget(X):
            try:
                return self._train_columns(*call, thread_state, cap=self.budget)
            except CapReached:
                self.validation_scores_ = self.best_validation_score_ = None
                if self.verbose > 0:
                    print(f"-- The support reaches the budget of {self.budget}")
        if isinstance(self.beta, str) and self.beta == "auto":
            schedule = RelativeThreshold(_BUDGETED_AUTO_BETA)
        return self._train_budget(
            X, codes, weight, schedule, max_iter, stop_when_separated, thread_state
        )

    def _train_columns(
        self,
        X,
        codes,
        weight,
        schedule,
        max_iter,
        stop_when_separated,
        thread_state,
        cap=0,
    ):
        """Run the loop of kernel columns, as _train does, on a support that
        stays below ``cap`` vectors (0: any number): an update that would
        bring it to ``cap`` raises CapReached, the model as it was."""
        run = self._run
        points = self._points(X)
        work = self._function_on(points, X)
        rows, sq_norms, spec, diag = self._compiled_kernel(points, X)
        n_slots = int(self.cache_size * 2**20 // (8 * points.shape[0]))
        n_slots = min(max(n_slots, 1), points.shape[0])
        # refit's second fit runs on the points of the first run: it reads
        # the columns that run computed (a column has one way to be
        # computed, so the model is the same bit for bit)
        cache = vars(self).pop("_kept_columns", None)
        if cache is None or cache.columns.shape != (n_slots, points.shape[0]):
            cache = ColumnCache(n_slots, points.shape[0])
        compute_column = None
        if spec["kind"] == KernelKind.KERNEL_PYTHON:

            def compute_column(j, slot):
                column = cache.columns[slot] if slot >= 0 else cache.scratch
                column[:] = self._kernel(points, points[j : j + 1]).ravel()

        n_old = len(run.index)
        counters = run.counters()
        y = np.concatenate([run.codes, codes]).astype(np.int32)
        all_weights = np.concatenate([np.zeros(n_old), weight])
        n_threads = thread_count(self.n_jobs)

        def epochs(visit, work, counters, control, continued=False):
            failure = new_failure()
            result = run_epochs(
                rows,
                sq_norms,
                spec,
                compute_column,
                cache,
                diag,
                y,
                first_class(self.classes_),
                all_weights,
                visit,
                work,
                counters,
                # a budget of the features' kernels binds in the budgeted
                # loop, and the removal of this loop serves the others
                0 if self._on_features() else self.budget or 0,
                schedule,
                control,
                np.zeros(1, dtype=np.uint8),
                failure,
                continued,
                n_threads=n_threads,
                thread_state=thread_state,
                cap=cap,
            )
            self._check_kernel_failure(failure, points)
            return result

        split = (
            self._validation_split(codes, budget_binds=False)
            if stop_when_separated
            else None
        )
        if split is not None:

            def function_on(work, validation):
                columns = n_old + validation
                return work.f[:, columns], work.g[:, columns]

            train = split[0]
            progress, averaged, work, counters = self._validated_epochs(
                split,
                epochs,
                work,
                counters,
                codes,
                weight,
                n_old,
                function_on,
            )
            if self.refit:
                # for the second fit, and the sign that this loop ran to the
                # end: a budget reached (CapReached) hands the fit on
                self._kept_columns = cache
        else:
            train = np.arange(X.shape[0])
            progress = epochs(
                np.arange(n_old, points.shape[0], dtype=np.intp),
                work,
                counters,
                self._control(max_iter, stop_when_separated),
            )
            averaged = None
        n_epochs, converged, stopped, updates = progress
        self._run = self._kept(counters, work, points, X, codes)
        if updates is not None:
            # the loop numbers the points of the run, the old ones first
            updates[:, 0] -= n_old
        return self._finish(
            n_epochs,
            converged,
            stopped,
            updates,
            work.f[:, n_old + train],
            work.g[:, n_old + train],
            codes[train],
            weight[train],
            averaged,
            schedule if stop_when_separated else None,
        )

    def _patience(self, budget_binds=False):
        """The epochs that the stopping rule, or with ``budget_binds`` the
        validation score of early stopping on a fit that the budget binds,
        waits for after the best (``n_iter_no_change``)."""
        if self.n_iter_no_change != "auto":
            return self.n_iter_no_change
        if self._score_wanders(budget_binds):
            return _BUDGETED_AUTO_PATIENCE
        return _AUTO_PATIENCE

    def _score_wanders(self, budget_binds):
        """Whether the validation score of a fit that the budget binds
        (``budget_binds``) wanders from epoch to epoch: that of merging or
        removal, whose full budget keeps the last function moving, where
        projection's creeps up (see _BUDGETED_AUTO_PATIENCE)."""
        return budget_binds and self._budget_strategy() != "project"

    def _validation_split(self, codes, budget_binds):
        """The training and validation parts of a fit with early stopping
        on examples of class indices ``codes`` (sorted indices), or None for
        the rule on the training data, in the budgeted loop
        (``budget_binds``) or the loop of kernel columns."""
        return early_stopping_split(
            self.early_stopping,
            # A full budget voids the theorems that the rule on the training
            # data serves, and keeps the last function moving: each update
            # moves it by a fixed step, which a merge or removal takes back.
            # The tenth is held out even where the accuracy still grows with
            # the sample. Training on the whole sample until an epoch
            # changes the class of at most SETTLED_SHARE of it scored 0.3 to
            # 0.6 point more at 10,000 examples of the four data sets of
            # benchmarks/bench_kernel_scale.py (medians of random_state 0
            # to 2), but no held-out score told it when the later epochs
            # learn the noise: 0.8107 against 0.8285 on 4,000 rows of
            # benchmarks/bench_defaults.py's noisy set and 0.9124 against
            # 0.9179 on make_classification(5000, 20, flip_y=0.1) (means
            # over five 70/30 splits), 0.7786 against 0.7836 on that
            # benchmark's clusters with a fifth of the labels flipped (10,000
            # examples, medians of random_state 0 to 2). refit=True takes
            # the tenth back once the score has chosen the epochs (0.8315
            # and 0.9169 on the two sets).
            self._auto_splits(len(codes), budget_binds),
            codes,
            self.validation_fraction,
            self.random_state,
        )

    @staticmethod
    def _auto_splits(n_samples, budget_binds):
        """Whether early_stopping="auto" splits a sample of ``n_samples``
        examples, in the budgeted loop (``budget_binds``) or the loop of
        kernel columns (see _validation_split)."""
        return n_samples > AUTO_SPLIT_SAMPLES or budget_binds

    def _check_kernel_failure(self, failure, *points):
        """Raise for the value that was not finite in a call of the loop on
        the rows of ``points``, naming a kernel that gave NaN on finite
        input."""
        if failure[0] == Quantity.KERNEL_NAN:
            # NaN from finite squared norms is the kernel's own; from norms
            # that overflow it is inf - inf, an overflow
            with np.errstate(over="ignore"):
                norms = [
                    squared_norms(rows)
                    if self._on_features()
                    else row_norms(rows, squared=True)
                    for rows in points
                ]
            norms_finite = all(np.isfinite(values).all() for values in norms)
            if norms_finite:
                self._raise_nan_kernel(failure[1])
            failure[0] = Quantity.KERNEL_VALUE
        check_failure(failure, _REMEDY)

    def _validated_epochs(
        self,
        split,
        epochs,
        work,
        counters,
        codes,
        weight,
        offset,
        function_on,
        budget_binds=False,
    ):
        """Early stopping: the epochs of a fit on the training part of
        ``split`` (the training and validation parts of the batch), one call
        of ``epochs(visit, work, counters, control, continued)`` each (the
        batch's rows are the loop's from ``offset`` on), scored after each
        on the validation part, which no epoch visits: ``function_on(work,
        validation)`` gives the function and its averaging accumulators
        there. ``budget_binds``: the run is the budgeted loop's, whose full
        budget keeps its function moving, so that it may never separate its
        training part and its classes never settle (see
        epochs_until_stalled), whose patience is
        ``_patience(budget_binds=True)``, and whose score, where it wanders
        (_score_wanders), starts it again only by more than its standard
        error (see _BUDGETED_AUTO_PATIENCE).
        Returns the run as it stood at the best score unless the last epoch
        separated the training part: (the loop's results, the problems that
        answer with their averaged function, the state of the loop, the
        counters)."""
        train, validation = split
        seed = self._run_seed()
        visit = (offset + train).astype(np.intp)
        k = len(counters.n_steps)
        recorded = []

        def one_epoch(epoch):
            nonlocal seed
            control = self._control(1, True, seed=seed, first_epoch=epoch, rule=False)
            _, separated, _, updates, seed = epochs(
                visit, work, counters, control, continued=True
            )
            if updates is not None:
                recorded.append(updates)
            return separated.all()

        def answered(stopped=True):
            return self._averaged(np.full(k, stopped), work.n_support, in_fit=True)

        def answer_on(rows):
            # the decision values of the function that would answer, (n, k)
            f, g = function_on(work, rows)
            return _answer(f, g, counters.n_steps, answered()).T

        def score():
            scores = answer_on(validation)
            return weighted_accuracy(scores, codes[validation], weight[validation])

        last_classes = None

        def changed():
            nonlocal last_classes
            classes = predicted_codes(answer_on(train))
            share = (
                None
                if last_classes is None
                else weighted_share(classes != last_classes, weight[train])
            )
            last_classes = classes
            return share

        best_state = None

        def snapshot():
            # the arrays of the best so far, which this one replaces, are
            # reused where the state's snapshot copies them: fresh ones
            # cost the system their pages at every better score
            nonlocal best_state
            best_state = work.snapshot(into=best_state)
            return best_state, counters.counters(), len(recorded), answered()

        n_epochs, converged, stalled, best = epochs_until_stalled(
            self,
            one_epoch,
            score,
            snapshot,
            self._patience(budget_binds),
            not budget_binds,
            None if budget_binds else changed,
            effective_size(weight[validation])
            if self._score_wanders(budget_binds)
            else None,
        )
        if converged:
            # not averaged: the last function separates the training part (and
            # _finish moves it toward the mean as far as keeps its margin)
            averaged = answered(stopped=False)
        else:
            best_work, counters, n_recorded, averaged = best
            work = best_work.resumed(into=work)
            recorded = recorded[:n_recorded]
        progress = (
            np.full(k, n_epochs),
            np.full(k, converged),
            np.full(k, stalled),
            np.concatenate(recorded) if self.record_updates else None,
        )
        return progress, averaged, work, counters

    def _finish(
        self,
        n_epochs,
        converged,
        stopped,
        updates,
        f,
        g,
        codes,
        weight,
        averaged,
        schedule=None,
    ):
        """The fitted attributes after a call, from the decision values f
        and averaging accumulators g on its batch, its recorded updates
        (examples numbered in the batch) or None, and which problems answer
        with their averaged function (by default, as _averaged says); with
        the ``schedule`` of a fit that no full budget ended, the problems
        that separated answer as toward_mean says under ``"auto"``."""
        self.n_updates_ = self._run.n_updates
        self._set_progress(n_epochs, converged, stopped)
        self.updates_ = updates
        if averaged is None:
            averaged = self._averaged(stopped)
        thresholds = self._separated_thresholds(schedule, converged, averaged)
        self._set_model(f, g, codes, weight, averaged, thresholds)
        return self

    def _averaged(self, stopped, n_support=None, in_fit=False):
        """As in the other perceptrons, except under a full budget (of the
        run, or of ``n_support`` vectors), where the mean of the run's
        functions has lost what each merge or removal took from it, and no
        update gave it back: there ``"auto"`` answers with the last
        function, and so does a fit with the RBF kernel between its epochs
        (``in_fit``: what early stopping scores), since the averaging epoch
        that ends it starts from that function."""
        if n_support is None:
            n_support = len(self._run.index)
        if self.budget is not None and n_support >= self.budget:
            if self.average == "auto" or (in_fit and self._averages_on_support()):
                return np.zeros(len(stopped), dtype=bool)
        return super()._averaged(stopped)

    def _budget_strategy(self):
        """``budget_strategy``, or for ``"auto"`` the strategy that keeps the
        most accuracy with this kernel: merging with the RBF kernel, else
        projection where it projects (_projects), else removal."""
        if self.budget_strategy != "auto":
            return self.budget_strategy
        if self.kernel == "rbf":
            return "merge"
        return "project" if self._projects() else "remove"

    def _projects(self):
        """Whether budget_strategy="project" can project with this kernel:
        one that the budgeted loop computes and whose kernel matrices are
        positive semi-definite (where the sigmoid kernel's are not, and the
        projections onto them grow without bound)."""
        if self.kernel in ("poly", "polynomial"):
            return self.coef0 >= 0 and float(self.degree).is_integer()
        return self.kernel in ("linear", "rbf", "cosine")

    def _averages_on_support(self):
        """Whether a fit that ends on a full budget makes the averaging
        epoch on its support (see the Notes): with the RBF kernel, whose
        kernel matrices of distinct points are positive definite."""
        return self.kernel == "rbf"

    def _budget_binds(self, X):
        """Whether the budgeted loop may run: a budget that the support so
        far and the batch may exceed, with a kernel that it computes (it
        runs unless _tries_without_budget and the support stays below it)."""
        return (
            self._budget_may_bind() and self.budget < len(self._run.index) + X.shape[0]
        )

    def _budget_may_bind(self):
        """Whether ``budget`` may bind a fit, whatever its sample: a budget
        with a kernel of the budgeted loop (see ``budget``)."""
        return self.budget is not None and self._on_features()

    def _tries_without_budget(self, X):
        """Whether a fit on X that the budget may bind runs first as
        without it, and keeps that run if its support stays below the
        budget (see the Notes): a budget of at least half the points of the
        call (the support so far and X)."""
        # An epoch of the budgeted loop costs n x budget kernel values, one of
        # the loop of columns n per update: with such a budget the first is
        # slower unless its support is that large. A smaller budget is often
        # reached, and the columns until then are lost: on the data of
        # benchmarks/bench_kernel_scale.py (10,000 examples, medians of three
        # fits alternating in one process), trying every budget so took 0.16
        # against 0.13 s with a budget of 500, 0.36 against 0.25 s with
        # 2,000, 0.51 against 0.36 s with 3,000 and 0.58 against 0.36 s with
        # 4,000: the run without it, which ends on 3,556 support vectors in
        # 0.26 s, holds 4,000 after its best epoch.
        n_points = len(self._run.index) + X.shape[0]
        return 2 * self.budget >= n_points

    def _train_budget(
        self, X, codes, weight, schedule, max_iter, stop_when_separated, thread_state
    ):
        """Run the budgeted loop on the support so far and the batch X, as
        _train does."""
        run = self._run
        # the support is held on the features in use
        batch, n_features = X, X.shape[1]
        columns = np.arange(n_features)
        if sp.issparse(X):
            columns = _stored_columns(X, run.rows)
            X = _on_columns(X, columns)
        support = BudgetSupport.holding(run, self.budget, columns, sp.issparse(X))
        spec = self._kernel_spec(_COMPILED_KERNELS[self.kernel])
        sq_norms = squared_norms(X)
        diag = kernel_diagonal(sq_norms, spec)
        counters = run.counters()
        n_threads = thread_count(self.n_jobs)

        def epochs(visit, support, counters, control, continued=False, strategy=None):
            failure = new_failure()
            result = run_budget_epochs(
                X,
                spec,
                diag,
                codes.astype(np.int32),
                first_class(self.classes_),
                weight,
                visit,
                support,
                counters,
                self.budget,
                _BUDGET_STRATEGIES[self._budget_strategy()]
                if strategy is None
                else strategy,
                schedule,
                control,
                np.zeros(1, dtype=np.uint8),
                failure,
                continued,
                n_threads=n_threads,
                thread_state=thread_state,
                cache_bytes=self.cache_size * 2**20,
            )
            self._check_kernel_failure(failure, X, support.vectors())
            return result

        split = (
            self._validation_split(codes, budget_binds=True)
            if stop_when_separated
            else None
        )
        if split is not None:

            def function_on(support, validation):
                held = support.state[0]
                # after CSR examples, the support's values not 0, which the
                # products may read by feature (the same bits)
                products = kernel_products(
                    X[validation],
                    sq_norms[validation],
                    support.vectors(),
                    support.sq_norms[:held],
                    spec,
                    np.vstack([support.coef[:, :held], support.avg_coef[:, :held]]),
                    n_threads,
                )
                return products[: len(support.coef)], products[len(support.coef) :]

            train, validation = split
            progress, averaged, support, counters = self._validated_epochs(
                split,
                epochs,
                support,
                counters,
                codes,
                weight,
                0,
                function_on,
                budget_binds=True,
            )
        else:
            train = np.arange(X.shape[0])
            progress = epochs(
                np.arange(X.shape[0], dtype=np.intp),
                support,
                counters,
                self._control(max_iter, stop_when_separated),
            )
            averaged = None
        answers = super()._averaged(progress[2])
        if (
            stop_when_separated
            and self._averages_on_support()
            and support.n_support >= self.budget
            and answers.any()
        ):
            last = support.snapshot(), counters.counters()
            # The mean of the run's functions lost its weight merge after
            # merge (see _averaged); the mean of one more epoch on the
            # support as it stands has none to lose.
            support.avg_coef[:] = 0.0
            counters.n_steps[:] = 0
            if self.verbose > 0:
                print(f"-- Averaging epoch on {support.n_support} support vectors")
            epochs(
                train.astype(np.intp),
                support,
                counters,
                self._control(1, False, first_epoch=int(progress[0].max())),
                strategy=BudgetStrategy.BUDGET_AVERAGING,
            )
            averaged = answers
            if split is not None:
                # the epoch's mean answers if it scores at least as well as
                # the last function it started from
                f, g = function_on(support, validation)
                f = _answer(f, g, counters.n_steps, answers)
                score = weighted_accuracy(f.T, codes[validation], weight[validation])
                kept = score >= self.best_validation_score_
                if self.verbose > 0:
                    answer = (
                        "it answers" if kept else "the last function, above it, answers"
                    )
                    print(f"-- Validation score of its mean: {score:.6g}; {answer}")
                if not kept:
                    support, counters = last[0].resumed(into=support), last[1]
                    averaged = np.zeros_like(answers)
        self._run = support.kept(
            counters, run.n_seen + X.shape[0], self, X, columns, n_features
        )
        products = self._products(
            batch, self._run.rows, np.vstack([self._run.coef, self._run.avg]), train
        )
        n_problems = len(self._run.coef)
        return self._finish(
            *progress,
            products[:, :n_problems].T,
            products[:, n_problems:].T,
            codes[train],
            weight[train],
            averaged,
        )

    def _raise_nan_kernel(self, epoch):
        """The ValueError of a kernel that gave NaN: not an overflow, which
        scaling the input would mend, but a kernel undefined on the input,
        named with its parameters."""
        if callable(self.kernel):
            name = getattr(self.kernel, "__name__", repr(self.kernel))
            kernel = f"the callable kernel {name} (kernel_params={self.kernel_params})"
            hint = "Check what the callable returns on these samples."
        else:
            params = {"gamma": self._gamma()}
            if self.kernel in ("poly", "polynomial", "sigmoid"):
                params["coef0"] = self.coef0
            if self.kernel in ("poly", "polynomial"):
                params["degree"] = self.degree
            listed = ", ".join(f"{key}={value!r}" for key, value in params.items())
            kernel = f"kernel={self.kernel!r} ({listed})"
            hint = (
                "A non-integer degree of a negative base gamma * <x, x'> + coef0 "
                "is NaN: use an integer degree, or a coef0 that keeps the base "
                "positive."
                if self.kernel in ("poly", "polynomial")
                and float(self.degree) != int(self.degree)
                else "The kernel is not defined on these samples."
            )
        raise ValueError(
            f"The kernel values of {kernel} are NaN on the training samples "
            f"(in epoch {epoch}): training stopped there. {hint}"
        )

    def _points(self, X):
        """The support vectors so far followed by the batch."""
        if not len(self._run.index):
            return X
        # batches of a partial_fit run may mix dense and sparse input
        stack = (
            sp.vstack if sp.issparse(X) or sp.issparse(self._run.rows) else np.vstack
        )
        points = stack([self._run.rows, X])
        return (
            _narrow_indices(canonical(points.tocsr()))
            if sp.issparse(points)
            else points
        )

    def _function_on(self, points, X):
        """The function so far on the points: the support's values kept, the
        batch's computed."""
        run = self._run
        n_old, n_points = len(run.index), points.shape[0]
        n_problems, n_averaged = run.coef.shape[0], run.avg.shape[0]
        work = Points(
            f=np.zeros((n_problems, n_points)),
            g=np.zeros((n_averaged, n_points)),
            coef=np.zeros((n_problems, n_points)),
            avg_coef=np.zeros((n_averaged, n_points)),
            queue=np.zeros(n_points, dtype=np.int64),
            support_state=np.array([0, n_old], dtype=np.int64),
            in_support=np.zeros(n_points, dtype=np.uint8),
        )
        work.f[:, :n_old] = run.f
        work.g[:, :n_old] = run.g
        work.coef[:, :n_old] = run.coef
        work.avg_coef[:, :n_old] = run.avg
        work.queue[:n_old] = np.arange(n_old)
        work.in_support[:n_old] = 1
        if n_old:
            products = self._products(X, run.rows, np.vstack([run.coef, run.avg]))
            work.f[:, n_old:] = products[:, :n_problems].T
            work.g[:, n_old:] = products[:, n_problems:].T
        return work

    def _compiled_kernel(self, points, X):
        """What the compiled loop computes the kernel from: the rows and
        their squared norms (none for a kernel computed in Python), the
        kernel's parameters, and k(x, x) of each point."""
        kind = KernelKind.KERNEL_PYTHON
        if isinstance(self.kernel, str):
            kind = _COMPILED_KERNELS.get(self.kernel, kind)
        spec = self._kernel_spec(kind)
        if kind == KernelKind.KERNEL_PYTHON:
            diag = np.zeros(points.shape[0])
            diag[len(self._run.index) :] = self._kernel_diagonal(X)
            return np.empty((0, 0)), np.empty(0), spec, diag
        if kind == KernelKind.KERNEL_PRECOMPUTED:
            # the Gram matrix holds its diagonal
            return points, np.empty(0), spec, kernel_diagonal(np.empty(0), spec, points)
        sq_norms = squared_norms(points)
        if sp.issparse(points):
            points = _on_columns(points, _stored_columns(points))
        return points, sq_norms, spec, kernel_diagonal(sq_norms, spec)

    def _kernel_spec(self, kind):
        """The parameters of the compiled kernel of this kind."""
        return dict(
            kind=kind, gamma=self._gamma(), coef0=self.coef0, degree=self.degree
        )

    def _products(self, X, support, coef, rows=None, reading=None):
        """k(X[rows], support) @ coef.T (all of X for None): with a kernel on
        the features, as the compiled loop computes its columns (so that
        dense and CSR, float64 and float32 input give the same bits), else
        by _kernel_products; ``reading``: _support_reading(support), where
        it is kept."""
        if not self._on_features():
            return self._kernel_products(X if rows is None else X[rows], support, coef)
        # the compiled kernels sum CSR rows in feature order
        X = canonical(X)
        n_threads = thread_count(self.n_jobs)
        spec = self._kernel_spec(_COMPILED_KERNELS[self.kernel])
        if reading is None:
            reading = _support_reading(support)
        support_sq_norms, columns, indices_on_columns = reading
        coef = np.ascontiguousarray(coef)
        products = np.empty((X.shape[0] if rows is None else len(rows), len(coef)))
        # Rows are taken and copied into panels (dense) a chunk at a time,
        # which bounds both copies: one of a batch of 1,000,000 rows of 100
        # features would take 800 MB. Each row's sum is its own: the same
        # bits in any chunks.
        chunks = blocks_in_working_memory(
            len(products),
            _product_row_bytes(X, len(coef)),
            max_rows=_PRODUCT_CHUNK_ROWS * n_threads,
        )
        # CSR rows meet a CSR support on its features alone when those are
        # few (their squared norms taken over all of theirs)
        if not sp.issparse(X):
            columns = None
        if columns is not None:
            support = sp.csr_matrix(
                (support.data, indices_on_columns, support.indptr),
                shape=(support.shape[0], len(columns)),
            )
        for chunk in chunks:
            part = X[chunk] if rows is None else X[rows[chunk]]
            sq_norms = squared_norms(part)
            if columns is not None:
                part = _on_columns(part, columns)
            products[chunk] = kernel_products(
                part,
                sq_norms,
                support,
                support_sq_norms,
                spec,
                coef,
                n_threads,
            ).T
        return products

    def _kept(self, counters, work, points, X, codes):
        """The run after a call: the support the loop left, with the
        function on it."""
        run = self._run
        support = work.support()
        index = np.concatenate([run.index, run.n_seen + np.arange(X.shape[0])])
        return KernelRun(
            # float64, as the support vectors of SVC
            rows=points[support].astype(np.float64, copy=False),
            codes=np.concatenate([run.codes, codes])[support].astype(np.int32),
            index=index[support],
            coef=work.coef[:, support],
            avg=work.avg_coef[:, support],
            f=work.f[:, support],
            g=work.g[:, support],
            n_updates=counters.n_updates,
            n_steps=counters.n_steps,
            radius=counters.radius,
            n_seen=run.n_seen + X.shape[0],
        )

    def _set_model(self, f, g, codes, weight, averaged, thresholds):
        """The public attributes, and the margins on the batch whose decision
        values are f (and averaging accumulators g); the averaged function
        for the problems ``averaged``, the function of _toward_mean for
        those of a finite threshold, the last one for the others."""
        run = self._run
        problems = first_class(self.classes_) + np.arange(len(f))
        signs = np.where(codes[None, :] == problems[:, None], 1, -1)
        dual_coef = _answer(run.coef.copy(), run.avg, run.n_steps, averaged)
        support_f = _answer(run.f.copy(), run.g, run.n_steps, averaged)
        f = _answer(f.copy(), g, run.n_steps, averaged)
        self._toward_mean((dual_coef, support_f, f), g, signs, weight, thresholds)
        if not (np.isfinite(dual_coef).all() and np.isfinite(f).all()):
            raise_non_finite(
                "the averaged decision function", "at the end of the run", _REMEDY
            )
        self._coef_norm = _feature_space_norms(dual_coef, support_f)
        smallest = (signs * f)[:, weight > 0].min(axis=1, initial=np.inf)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            margins = np.where(self._coef_norm > 0, smallest / self._coef_norm, 0.0)
        self.margin_ = np.where(np.isfinite(margins), margins, 0.0)

        order = _class_order(run)
        self.support_ = run.index[order].astype(np.int32)
        if self.kernel == "precomputed":
            self.support_vectors_ = np.empty((0, 0))
        else:
            self.support_vectors_ = run.rows[order]
            # between calls the model holds its support vectors once, as
            # support_vectors_ (see _resume_run)
            self._run = replace(run, rows=None)
        self._read_support()
        self.dual_coef_ = dual_coef[:, order]
        self.n_support_ = np.bincount(run.codes, minlength=len(self.classes_)).astype(
            np.int32
        )
        self.intercept_ = np.zeros(len(dual_coef))

    def _toward_mean(self, answers, g, signs, weight, thresholds):
        """Move the problems of a finite threshold of ``answers`` (their
        dual coefficients, values on the support vectors and values f on
        the batch, in place) toward their mean, as toward_mean says; ``g``:
        the averaging accumulators on the batch."""
        run = self._run
        mixed = np.flatnonzero(np.isfinite(thresholds))
        every = np.ones(len(thresholds), dtype=bool)
        means = [
            _answer(values[mixed], sums[mixed], run.n_steps[mixed], every[mixed])
            for values, sums in zip(answers, (run.avg, run.g, g), strict=True)
        ]
        dual_coef, support_f, f = answers
        for i, k in enumerate(mixed):
            # the support values divided by the largest, whose square may
            # overflow: the products a^T K b = sum_j a_j b(x_j), the margins
            # and the threshold on that scale
            size = (
                max(
                    np.abs(support_f[k]).max(initial=0.0),
                    np.abs(means[1][i]).max(initial=0.0),
                )
                or 1.0
            )
            pairs = (
                (dual_coef[k], support_f[k]),
                (dual_coef[k], means[1][i]),
                (means[0][i], means[1][i]),
            )
            step, scale = toward_mean(
                [float(a @ (b / size)) for a, b in pairs],
                (signs[k] * f[k])[weight > 0] / np.sqrt(size),
                (signs[k] * means[2][i])[weight > 0] / np.sqrt(size),
                thresholds[k] / np.sqrt(size),
            )
            if self.verbose > 0:
                print(
                    f"-- Problem {k}: the answer is {step:.3g} of the way from "
                    "its last function to the mean"
                )
            if step == 0:
                continue
            for values, mean in zip(answers, means, strict=True):
                values[k] = scale * ((1 - step) * values[k] + step * mean[i])

    def _geometric_margins(self, X, codes, weight):
        """The geometric margin in feature space of each one-vs-rest problem
        on the rows of X of positive ``weight``, labelled by ``codes``
        (indices in ``classes_``); used by :func:`skperc.metrics.margin`."""
        scores = self.decision_function(X).reshape(X.shape[0], -1)
        problems = first_class(self.classes_) + np.arange(scores.shape[1])
        signs = np.where(codes[:, None] == problems, 1.0, -1.0)
        smallest = (signs * scores)[weight > 0].min(axis=0, initial=np.inf)
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(self._coef_norm > 0, smallest / self._coef_norm, 0.0)


def _answer(f, g, n_steps, averaged):
    """The decision values ``f`` (a copy) of the function that answers:
    averaged with the accumulators ``g`` for the problems ``averaged``."""
    if averaged.any():
        steps = np.maximum(n_steps[averaged], 1)[:, None]
        f[averaged] -= g[averaged] / steps
    return f


def _product_row_bytes(X, n_problems):
    """The memory a row of X takes in a chunk of the compiled products: at
    most two copies of it (the rows taken by index, in their type, and
    their panels, of float64 values; a CSR copy takes 12 bytes a stored
    value), its squared norm, its kernel value and its n_problems
    products."""
    if sp.issparse(X):
        copy_bytes = 12 * X.nnz // max(X.shape[0], 1)
    else:
        copy_bytes = (X.itemsize + 8) * X.shape[1]
    return copy_bytes + 8 * (n_problems + 2)


def _csr_at(rows, at):
    """The dense rows as a CSR matrix storing their values at the flat
    positions ``at`` (increasing), in one gather: no mask of the rows'
    shape."""
    width = rows.shape[1]
    return sp.csr_matrix(
        (
            rows.ravel()[at],
            at % width,
            np.searchsorted(at, np.arange(len(rows) + 1) * width),
        ),
        shape=rows.shape,
    )


def _stored_columns(*matrices):
    """The features where any of the matrices (CSR or dense, of as many
    columns) stores a value: a CSR matrix's stored ones, a dense one's not
    0; column 0 at least, so that a matrix on them has a column."""
    used = np.zeros(matrices[0].shape[1], dtype=bool)
    used[0] = True
    for matrix in matrices:
        if sp.issparse(matrix):
            used[matrix.indices] = True
        elif len(matrix):
            used |= np.any(matrix != 0, axis=0)
    return np.flatnonzero(used)


def _support_reading(support):
    """What the products of rows with the vectors ``support`` read of it
    besides its vectors, the same at every call, which a fit keeps for
    decision_function: its squared norms and, for a CSR support stored on
    few features (_few_columns), those features and its column indices
    renumbered on them, else None and None. On one row of the text data of
    benchmarks/bench_kernel_scale.py against the 6,198 support vectors of
    a fit on 10,000 examples, the norms and the features took nearly half
    of the call; on the vocabulary data, renumbering the indices half of
    it."""
    columns = _few_columns(support) if sp.issparse(support) else None
    indices = None if columns is None else _on_columns(support, columns).indices
    return squared_norms(support), columns, indices


def _few_columns(matrix):
    """_stored_columns(matrix) when they are at most half of its columns,
    else None: a product of CSR rows restricted to them costs a copy of the
    rows on them, which pays on fewer columns only (on the text data
    of ``benchmarks/bench_kernel_scale.py``, where they are most of them,
    it measured up to 10% slower)."""
    columns = _stored_columns(matrix)
    return columns if len(columns) <= matrix.shape[1] // 2 else None


def _on_columns(X, columns):
    """CSR X (sorted indices) on the features ``columns`` (increasing),
    renumbered in order, its values at the others left out. Where those
    others hold 0 in the rows that X meets (the support vectors, or X
    itself), each product of them, summed in feature order, keeps its bits:
    a 0 term does not change a sum that starts at +0. So the compiled loops
    and products cost the features in use, not every column: on hashed
    text, a few thousand of 2**20."""
    if len(columns) == X.shape[1]:
        return X
    if X.nnz * len(columns).bit_length() < X.shape[1]:
        # few values (a row to predict): each is looked up among the
        # columns by bisection, where a map of the features costs them all
        index = np.searchsorted(columns, X.indices).astype(X.indices.dtype)
        kept = columns.take(index, mode="clip") == X.indices
    else:
        number = np.full(X.shape[1], -1, dtype=X.indices.dtype)
        number[columns] = np.arange(len(columns), dtype=X.indices.dtype)
        index = number[X.indices]
        kept = index >= 0
    # the values kept before each row's start
    indptr = np.concatenate([[0], np.cumsum(kept)])[X.indptr]
    return sp.csr_matrix(
        (X.data[kept], index[kept], indptr.astype(X.indptr.dtype)),
        shape=(X.shape[0], len(columns)),
    )


def _narrow_indices(X):
    """CSR X with 32-bit indices where they fit (a copy of the index arrays
    only): some of scikit-learn's sparse kernels take no other."""
    if not sp.issparse(X) or X.indices.dtype == np.int32:
        return X
    if max(X.nnz, *X.shape) >= np.iinfo(np.int32).max:
        raise ValueError(
            "KernelPerceptron takes CSR input of fewer than 2**31 rows, columns "
            "and stored values, whose indices fit in 32 bits."
        )
    X = X.copy()
    X.indices, X.indptr = X.indices.astype(np.int32), X.indptr.astype(np.int32)
    return X


def _feature_space_norms(dual_coef, support_f):
    """||w|| of each problem: ||w||^2 = a^T K a = sum_j a_j f(x_j) over the
    support vectors, each f divided by the largest |f| first, whose square
    may overflow."""
    size = np.abs(support_f).max(axis=1, initial=0.0)[:, None]
    size[size == 0] = 1.0
    return np.sqrt(
        np.maximum((dual_coef * (support_f / size)).sum(axis=1), 0) * size[:, 0]
    )
