"""Memory, measured with tracemalloc (numpy's arrays are traced):
MarginPerceptron trains on X without copying it, KernelPerceptron's
memory grows linearly with the sample, never holding a Gram matrix, a
budget over a wide vocabulary holds at most one dense copy of its
support, and in the pages it uses little of it, and
it scores many rows within working_memory; the linear models score
float32 X without a float64 copy of it, and CSR X without a copy; and
LinearProgramClassifier's peak, HiGHS's included, in a fresh process."""

import subprocess
import sys
import tracemalloc
import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from estimators import ESTIMATORS
from numpy.testing import assert_allclose
from sklearn import config_context
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics.pairwise import pairwise_kernels
from sklearn.utils import gen_batches
from sparse_data import spread_columns, word_rows

from skperc import (
    HalvingClassifier,
    KernelPerceptron,
    LinearProgramClassifier,
    MarginMLPClassifier,
    MarginPerceptron,
)
from skperc._base import batches
from skperc._kernel_perceptron import BudgetSupport
from skperc._kernel_perceptron_fast import paged_array
from skperc.distributed import ParameterMixingClassifier

# A fit may add at most this fraction of X.nbytes to the memory X takes.
EXTRA_MEMORY = 0.25

MARGIN_PERCEPTRONS = [e for e in ESTIMATORS if isinstance(e, MarginPerceptron)]
KERNEL_PERCEPTRONS = [
    e
    for e in ESTIMATORS
    if isinstance(e, KernelPerceptron)
    and isinstance(e.kernel, str)
    # a Gram matrix is the input of a precomputed kernel
    and e.kernel != "precomputed"
]


def _name(estimator):
    return f"{type(estimator).__name__}[{ESTIMATORS.index(estimator)}]"


def peak_memory(function, *args):
    """The most memory, in bytes, allocated at once while function runs,
    beyond what was allocated before."""
    tracing = tracemalloc.is_tracing()
    if not tracing:
        tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            function(*args)
        return tracemalloc.get_traced_memory()[1] - before
    finally:
        if not tracing:
            tracemalloc.stop()


@pytest.fixture(scope="module")
def float32_data():
    """200,000 x 50 float32 (40 MB), labels from a noisy hyperplane."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((200_000, 50), dtype=np.float32)
    y = (X[:, :5].sum(axis=1) + rng.standard_normal(len(X), dtype=np.float32)) > 0
    return X, y.astype(np.int64)


@pytest.mark.parametrize("estimator", MARGIN_PERCEPTRONS, ids=_name)
def test_margin_perceptron_does_not_copy_X(estimator, float32_data):
    X, y = float32_data
    # the rule on the training data; early stopping below
    estimator = clone(estimator).set_params(max_iter=2, early_stopping=False)
    extra = peak_memory(estimator.fit, X, y)
    assert extra <= EXTRA_MEMORY * X.nbytes, extra / X.nbytes


def test_early_stopping_copies_no_training_rows():
    """MarginPerceptron's early stopping holds its validation part out by
    weight, not by a copy of the training part: what it adds to a fit is
    per example (the stratified split's indices, the weights), as much for
    rows 8 times as wide."""
    rng = np.random.default_rng(0)
    extras = []
    for n_features in (25, 200):
        X = rng.standard_normal((100_000, n_features), dtype=np.float32)
        y = (X[:, :5].sum(axis=1) > 0).astype(np.int64)
        estimator = MarginPerceptron(max_iter=2, early_stopping=True)
        extras.append(peak_memory(estimator.fit, X, y))
    # a copy of the training part of the wider rows would add 72 MB
    assert extras[1] - extras[0] <= 0.05 * X.nbytes, extras


@pytest.mark.parametrize("average", ["auto", True])
def test_a_wide_csr_fit_holds_its_weights_and_few_copies(average):
    """A fit on CSR rows over millions of columns (a hashed vocabulary)
    holds its weights and the averaging sums, of every column, and makes
    at most one more array of that size (coef_, where the answer is not
    the run's own weights): the answer toward the mean is found on the
    columns in use. Rows that separate, so that the answer moves."""
    n_features = 2**22
    rng = np.random.default_rng(0)
    columns = np.sort(rng.choice(n_features, size=(500, 20)), axis=1)
    X = sp.csr_matrix(
        (rng.standard_normal(columns.size), columns.ravel(), np.arange(0, 10_001, 20)),
        shape=(500, n_features),
    )
    X.sum_duplicates()
    w = np.zeros(n_features)
    w[columns.ravel()] = rng.standard_normal(columns.size)
    y = (X @ w > 0).astype(int)
    estimator = MarginPerceptron(average=average, random_state=0)
    extra = peak_memory(estimator.fit, X, y)
    assert estimator.stop_reason_ == "separated"
    weights = 8 * n_features
    # the run's weights and sums, coef_, and what the 10,000 values need
    assert extra <= 3.25 * weights, extra / weights


def test_memory_measure_sees_a_copy_of_X(float32_data):
    # Fortran-ordered X is copied into C order: the same measure must see it.
    X, y = float32_data
    X = np.asfortranarray(X)
    extra = peak_memory(MarginPerceptron(max_iter=2).fit, X, y)
    assert extra >= X.nbytes


def ring(n_samples, seed=0):
    """A disc inside a ring, with three noise features."""
    rng = np.random.default_rng(seed)
    y = rng.integers(2, size=n_samples)
    radius = np.where(
        y == 1, rng.uniform(0, 1, n_samples), rng.uniform(1.1, 3, n_samples)
    )
    angle = rng.uniform(0, 2 * np.pi, n_samples)
    X = rng.normal(scale=0.3, size=(n_samples, 5))
    X[:, 0] = radius * np.cos(angle)
    X[:, 1] = radius * np.sin(angle)
    return X, y


# Peaks at n and 2n samples: linear growth doubles the peak, a Gram matrix
# quadruples it.
LINEAR_GROWTH = 2.5
SIZES = (2_000, 4_000)


@pytest.mark.parametrize("estimator", KERNEL_PERCEPTRONS, ids=_name)
def test_kernel_perceptron_memory_is_linear(estimator):
    # A cache of a few columns, so that the O(n) part dominates the peak.
    estimator = clone(estimator).set_params(cache_size=0.1, max_iter=3)
    small, large = (peak_memory(clone(estimator).fit, *ring(n)) for n in SIZES)
    assert large / small < LINEAR_GROWTH, (small, large)
    # far below the n x n Gram matrix of float64
    assert large < 8 * SIZES[1] ** 2 / 10


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize(
    "estimator",
    [e for e in KERNEL_PERCEPTRONS if e.kernel in ("linear", "poly", "rbf", "sigmoid")],
    ids=_name,
)
def test_kernel_perceptron_does_not_copy_float32_X(estimator, sparse):
    # 500 points of 8,000 features around 9 centres, 3 to a class: X
    # dwarfs the state of the points, O(n_samples * n_classes). The fit
    # on float32 X takes the memory of the same fit on its float64 values,
    # which holds the same model: a float64 copy of X would add twice X.
    rng = np.random.default_rng(0)
    centre = rng.integers(9, size=500)
    X = rng.standard_normal((9, 8_000), dtype=np.float32)[centre]
    X += rng.normal(scale=0.1, size=X.shape).astype(np.float32)
    y = centre % 3
    if sparse:
        X[rng.random(X.shape) < 0.8] = 0.0
        X = sp.csr_matrix(X)
        size = X.data.nbytes
    else:
        size = X.nbytes
    estimator = clone(estimator).set_params(cache_size=0.1, max_iter=2)
    extra = peak_memory(clone(estimator).fit, X, y)
    extra64 = peak_memory(clone(estimator).fit, X.astype(np.float64), y)
    assert extra <= extra64 + EXTRA_MEMORY * size, (extra - extra64) / size


def test_memory_measure_sees_a_gram_matrix():
    small, large = (
        peak_memory(pairwise_kernels, ring(n)[0], None, "rbf") for n in SIZES
    )
    assert large / small > LINEAR_GROWTH


@pytest.mark.parametrize("zeroed", [True, False])
@pytest.mark.parametrize("dtype", [np.float64, np.int32])
def test_memory_measure_sees_the_paged_arrays_of_the_kernel_loops(zeroed, dtype):
    """The cache of kernel columns, the rows of a budgeted support and the
    lists of their features come from malloc, not numpy, and are reported
    to tracemalloc as numpy's arrays are, until they are freed; the rows
    are zeros."""
    shape = (300, 1000)
    size = np.dtype(dtype).itemsize * shape[0] * shape[1]
    tracing = tracemalloc.is_tracing()
    if not tracing:
        tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        array = paged_array(*shape, zeroed=zeroed, int32=dtype == np.int32)
        assert tracemalloc.get_traced_memory()[0] - before >= size
        assert array.shape == shape and array.dtype == dtype
        if zeroed:
            assert not array.any()
        array[...] = 1
        del array
        assert tracemalloc.get_traced_memory()[0] - before < size
    finally:
        if not tracing:
            tracemalloc.stop()


@pytest.mark.parametrize(
    "estimator",
    [MarginPerceptron(max_iter=2), LinearProgramClassifier(C=1.0), HalvingClassifier()],
)
@pytest.mark.parametrize("method", ["decision_function", "predict"])
@pytest.mark.parametrize("working_memory", [4, 1024])
def test_float32_prediction_does_not_copy_X(
    estimator, method, working_memory, float32_data
):
    # float32 rows are scored a block at a time within working_memory, and
    # of CONVERTED_BYTES at the default 1024 MB, which would hold a float64
    # copy of X, twice X's memory.
    X, y = float32_data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        fitted = clone(estimator).fit(X[:500], y[:500])
    with config_context(working_memory=working_memory):
        extra = peak_memory(getattr(fitted, method), X)
    # the scores themselves take n_samples float64 values
    assert extra <= EXTRA_MEMORY * X.nbytes + 8 * len(X), extra / X.nbytes


@pytest.mark.parametrize(
    "estimator",
    [MarginPerceptron(max_iter=2), LinearProgramClassifier(C=1.0), HalvingClassifier()],
)
@pytest.mark.parametrize("method", ["decision_function", "predict"])
def test_csr_prediction_does_not_copy_X(estimator, method, float32_data):
    # float64 CSR rows are scored where they lie: a slice of them, even of
    # all of them, would copy their values and indices.
    X, y = float32_data
    X = sp.csr_matrix(np.where(np.abs(X) > 1.5, X, 0), dtype=np.float64)
    size = X.data.nbytes + X.indices.nbytes + X.indptr.nbytes
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        fitted = clone(estimator).fit(X[:500].toarray(), y[:500])
    extra = peak_memory(getattr(fitted, method), X)
    assert extra <= EXTRA_MEMORY * size + 8 * X.shape[0], extra / size


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_kernel_perceptron_scores_many_rows_within_working_memory(n_jobs):
    # 200,000 rows against some 300 support vectors: a kernel matrix of
    # 480 MB, scored in chunks of rows that take 4 MB together, whatever
    # the threads.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        fitted = KernelPerceptron(max_iter=2, random_state=0).fit(*ring(1_000))
    X, _ = ring(200_000, seed=1)
    n_support = len(fitted.support_)
    assert 8 * n_support * len(X) > 100 * 2**20
    fitted.set_params(n_jobs=n_jobs)
    with config_context(working_memory=4):
        extra = peak_memory(fitted.decision_function, X)
    # the scores themselves take n_samples float64 values
    assert extra <= 3 * 4 * 2**20 + 8 * len(X), extra / 2**20


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_kernel_perceptron_scores_wide_rows_within_working_memory(n_jobs):
    # 60,000 rows of 100 features (48 MB): the compiled kernels copy the
    # rows of each chunk into panels, which working_memory bounds as it
    # bounds the kernel matrices of pairwise_kernels.
    rng = np.random.default_rng(0)
    X = rng.standard_normal((60_000, 100))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        fitted = KernelPerceptron(max_iter=2, random_state=0).fit(
            X[:500], X[:500, 0] > 0
        )
    fitted.set_params(n_jobs=n_jobs)
    with config_context(working_memory=4):
        extra = peak_memory(fitted.decision_function, X)
    # the scores themselves take n_samples float64 values
    assert extra <= 3 * 4 * 2**20 + 8 * len(X), extra / 2**20


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("method", ["decision_function", "predict"])
def test_margin_mlp_scores_many_rows_within_working_memory(dtype, method, float32_data):
    # 200,000 rows through 300 and 100 hidden units: 320 MB of float64
    # activations at once, scored in blocks of rows whose activations take
    # 4 MB, in the order of the rows (BLAS may sum a row in another order
    # in a block of another size: the scores agree to rounding).
    X, y = float32_data
    X = X.astype(dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        fitted = MarginMLPClassifier((300, 100), max_iter=1, random_state=0).fit(
            X[:500], y[:500]
        )
    with config_context(working_memory=4):
        extra = peak_memory(getattr(fitted, method), X)
        blocked = fitted.decision_function(X[:20_000])
    # the scores themselves take n_samples values, and a boolean mask
    assert extra <= 3 * 4 * 2**20 + 16 * len(X), extra / 2**20
    scale = np.abs(blocked).max()
    tolerance = 10 * np.finfo(dtype).eps * scale
    assert_allclose(blocked, fitted.decision_function(X[:20_000]), atol=tolerance)


@pytest.mark.parametrize("budget", [None, 60])
def test_kernel_perceptron_memory_does_not_grow_with_empty_columns(budget):
    # Hashed text: the rows of 30 columns spread among 2**20 columns
    # (HashingVectorizer's default), the others empty. A fit, budgeted or
    # not, and its scores take the memory of the same fit on the 30 columns,
    # up to a few arrays of one value a column (the features in use): not
    # the 500 MB of 60 dense support vectors of 2**20 features.
    rng = np.random.default_rng(0)
    X = rng.standard_normal((1_000, 30))
    X[np.abs(X) < 1.0] = 0.0
    y = X[:, :3].sum(axis=1) > 0
    narrow = sp.csr_matrix(X)
    wide, _ = spread_columns(X, 2**20)
    estimator = KernelPerceptron(
        gamma=1 / 30, budget=budget, max_iter=3, random_state=0
    )
    fitted = [clone(estimator), clone(estimator)]
    extra = [
        peak_memory(model.fit, rows, y)
        for model, rows in zip(fitted, (wide, narrow), strict=True)
    ]
    assert extra[0] <= extra[1] + 32 * 2**20, [e / 2**20 for e in extra]
    extra = [
        peak_memory(model.decision_function, rows)
        for model, rows in zip(fitted, (wide, narrow), strict=True)
    ]
    assert extra[0] <= extra[1] + 32 * 2**20, [e / 2**20 for e in extra]


def test_a_budget_over_a_wide_vocabulary_holds_one_dense_copy_of_its_support():
    # Word counts over 18,000 words in use, a budget of 400: the loop holds
    # the support dense over the words in use (its rows), two blocks of 32
    # examples as dense rows, lists of features of a quarter of the words a
    # slot with the row's values there, and the support's values that are
    # not 0 by feature (panels, a
    # second dense copy, took the peak to 2.22 times the rows beyond the
    # blocks and lists; 1.09 without). Early stopping's snapshots of the
    # best support, and the copy before the averaging epoch, hold its
    # stored entries alone: dense, either would be one more copy.
    budget = 400
    X, y, in_use = word_rows(2_500, 20_000, 20)
    rows = budget * in_use * 8
    blocks = 2 * 32 * in_use * 8
    # int32 features and float64 values
    lists = budget * (in_use // 4) * (4 + 8)
    model = KernelPerceptron(budget=budget, early_stopping=True, random_state=0)
    extra = peak_memory(model.fit, X, y)
    assert model.n_iter_ > 1 and len(model.support_) == budget
    assert extra <= 1.25 * rows + blocks + lists, extra / rows


def test_the_end_of_a_budgeted_fit_copies_no_dense_rows(monkeypatch):
    # After the loop, the support is ordered and kept as the run's CSR rows,
    # and the function computed on it, from its stored entries: a dense copy
    # of the slots, as large as the loop's rows over the words in use, is
    # one copy too many (1.18 times the rows at the peak, against 0.26: the
    # products make 32 support vectors at a time dense, three copies of
    # 32 of the 400 rows).
    budget = 400
    X, y, in_use = word_rows(2_500, 20_000, 20)
    rows = budget * in_use * 8
    peaks = []
    kept = BudgetSupport.kept

    def measured(support, *args):
        run = []
        peaks.append(peak_memory(lambda: run.append(kept(support, *args))))
        return run[0]

    monkeypatch.setattr(BudgetSupport, "kept", measured)
    model = KernelPerceptron(budget=budget, random_state=0).fit(X, y)
    assert len(peaks) == 1 and len(model.support_) == budget
    assert peaks[0] <= 0.5 * rows, peaks[0] / rows


def fresh_process(script, *args):
    """What ``script`` prints, run by a fresh interpreter with ``args`` (its
    sys.argv[1:]), split at white space."""
    return subprocess.run(
        [sys.executable, "-c", script, *args],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()


RULE_FIT = """
import resource, sys, warnings
sys.path.insert(0, sys.argv[1])
from sparse_data import word_rows
from skperc import KernelPerceptron

budget = 100
X, y, in_use = word_rows(3_000, 20_000, 20, n_classes=10)
model = KernelPerceptron(
    budget=budget, early_stopping=False, max_iter=30, random_state=0
)
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    model.fit(X, y)
# ru_maxrss is in kilobytes on Linux
growth = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) * 1024
print(model.n_iter_, growth / (budget * in_use * 8))
"""


@pytest.mark.skipif(sys.platform != "linux", reason="ru_maxrss in kilobytes")
def test_the_stopping_rule_of_a_budget_keeps_lists_of_the_rows():
    # Ten one-vs-rest problems under the stopping rule on the training data
    # (early_stopping=False), each with its snapshots w_1 and w_r: those of
    # an epoch's end stand on one version of the support's rows, kept while
    # one stands on it, and on CSR examples a version lists each row's
    # features and values (the growth of a fresh process's peak resident
    # set sees the pages touched). The fit grows it by about 1.9 times the
    # support's rows over the words in use, the loop's own arrays; versions
    # that copied the rows took it to 6.2, and a copy of them for each
    # snapshot to 23.
    output = fresh_process(RULE_FIT, str(Path(__file__).parent))
    n_iter, growth = int(output[0]), float(output[1])
    # the rule ran: snapshots taken after many epochs
    assert n_iter > 10
    assert growth < 4


WIDE_VOCABULARY_FIT = """
import resource, sys, warnings
sys.path.insert(0, sys.argv[1])
from sparse_data import word_rows
from skperc import KernelPerceptron

budget = 400
X, y, in_use = word_rows(4_000, 200_000, 20)
early_stopping = False if sys.argv[2] == "False" else sys.argv[2]
model = KernelPerceptron(budget=budget, early_stopping=early_stopping, random_state=0)
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    model.fit(X, y)
# ru_maxrss is in kilobytes on Linux
growth = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) * 1024
print(model.n_iter_, len(model.support_), growth / (budget * in_use * 8))
"""


@pytest.mark.skipif(sys.platform != "linux", reason="ru_maxrss in kilobytes")
@pytest.mark.parametrize("early_stopping", ["auto", False])
def test_a_budget_over_a_wide_vocabulary_leaves_its_dense_rows_untouched(
    early_stopping,
):
    # A support vector whose list keeps its values (at most VALUE_ROOM
    # features) is held by its list alone, never written into the rows over
    # the words in use (some 66,000 here), whose pages the system then never
    # gives the process, the blocks of examples hold the values that they
    # store alone, and the lists of the rows' features take their pages as
    # they are written: the peak resident set of a fresh process grows by
    # 0.10 times those rows, where writing each new or merged vector into
    # them took it to 1.33, blocks of rows over the words in use to 0.36,
    # and lists in a numpy array (on huge pages, 2 MB each) to 0.20. The
    # stopping rule on the training data (early_stopping=False) lists the
    # rows of its snapshots too: 0.11, where copies of the rows took 3.3.
    output = fresh_process(
        WIDE_VOCABULARY_FIT, str(Path(__file__).parent), str(early_stopping)
    )
    n_iter, n_support, growth = int(output[0]), int(output[1]), float(output[2])
    assert n_iter > 1 and n_support == 400
    assert growth < 0.15


LINEAR_PROGRAM_FIT = """
import resource, sys
import numpy as np
from skperc import LinearProgramClassifier

rng = np.random.default_rng(0)
X = rng.standard_normal((1000, 200))
y = X @ rng.standard_normal(200) > 0  # separable
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
LinearProgramClassifier(objective=sys.argv[1]).fit(X, y)
# ru_maxrss is in kilobytes on Linux
print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) * 1024 / X.nbytes)
"""


@pytest.mark.skipif(sys.platform != "linux", reason="ru_maxrss in kilobytes")
@pytest.mark.parametrize("objective", ["feasibility", "l1_margin"])
def test_linear_program_memory(objective):
    # HiGHS allocates outside tracemalloc's sight: the growth of the peak
    # resident set of a fresh process sees it. The dual program, one copy
    # of X in it, peaks at about 17 times X here; the primal, built from a
    # coordinate list, at about 31.
    (growth,) = fresh_process(LINEAR_PROGRAM_FIT, objective)
    assert float(growth) < 22


def test_batches_are_the_slices_of_gen_batches():
    """batches, which the predictions take their chunks from, gives the
    slices of scikit-learn's gen_batches, one batch or many, with or
    without a smallest batch, and none for no rows."""
    assert batches(0, 5) == []
    for n in range(1, 30):
        for size in range(1, 12):
            for smallest in range(4):
                expected = list(gen_batches(n, size, min_batch_size=smallest))
                assert batches(n, size, smallest) == expected


@pytest.mark.parametrize("early_stopping", [False, True])
def test_parameter_mixing_reads_csr_shards_where_they_lie(early_stopping):
    # Each shard's rows are views of X's arrays; a CSR array built on them
    # by scipy's constructor would prune them into copies, the whole of X
    # over the shards.
    X, y, _ = word_rows(50_000, 20_000, 20)
    size = X.data.nbytes + X.indices.nbytes + X.indptr.nbytes
    estimator = ParameterMixingClassifier(
        MarginPerceptron(max_iter=3, early_stopping=early_stopping, random_state=0),
        n_shards=2,
    )
    extra = peak_memory(estimator.fit, X, y)
    assert extra <= 0.5 * size, extra / size


def test_halving_scores_fortran_rows_within_working_memory(float32_data):
    # A DataFrame's rows come in Fortran order; the compiled stumps read
    # C-ordered rows, converted a block at a time.
    X, y = float32_data
    X = np.asfortranarray(X, dtype=np.float64)
    fitted = HalvingClassifier().fit(X[:500], y[:500])
    extra = peak_memory(fitted.decision_function, X)
    assert extra <= EXTRA_MEMORY * X.nbytes + 8 * len(X), extra / X.nbytes
