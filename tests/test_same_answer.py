"""Every estimator gives the same answer however it is run: the same seed
gives the same model, bit for bit, and so do dense and CSR input, one job
and many, a pickle round-trip and concurrent predictions; a clone forgets
the fit.

The estimators are the configurations of tests/estimators.py.
"""

import functools
import pickle
import subprocess
import sys
import warnings
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
import scipy.sparse as sp
from estimators import ESTIMATORS
from joblib import effective_n_jobs
from numpy.testing import assert_allclose, assert_array_equal
from sklearn import config_context
from sklearn.base import clone
from sklearn.datasets import load_iris, make_classification
from sklearn.exceptions import ConvergenceWarning, NotFittedError
from sklearn.preprocessing import StandardScaler
from sklearn.utils import check_random_state, get_tags
from sklearn.utils.validation import check_is_fitted

from skperc import KernelPerceptron, MarginMLPClassifier, MarginPerceptron
from skperc import _atomic as atomic
from skperc import _kernel_perceptron as kernel_perceptron
from skperc._base import compact_rows
from skperc._kernel_perceptron import (
    _COMPILED_KERNELS,
    _FEATURE_KERNELS,
    _product_row_bytes,
)

OUTPUT_METHODS = ("predict", "decision_function", "predict_proba")


def _ids(estimators):
    """The class and the index in ESTIMATORS of each configuration (a repr
    would hold the address of a callable kernel)."""
    return [f"{type(e).__name__}-{ESTIMATORS.index(e)}" for e in estimators]


def _data():
    """Standardized iris (three classes, not all separable one-vs-rest), in
    a fixed random order, with the small values set to zero so that its CSR
    form has rows of different lengths."""
    X, y = load_iris(return_X_y=True)
    order = np.random.RandomState(0).permutation(len(y))
    X = StandardScaler().fit_transform(X[order])
    X[np.abs(X) < 0.5] = 0.0
    return X, y[order]


X_IRIS, Y_IRIS = _data()


def _inputs(estimator):
    """Training and test data for the estimator: the samples, or their
    linear kernel matrices for a precomputed kernel."""
    X_train, X_test = X_IRIS[:120], X_IRIS[120:]
    if get_tags(estimator).input_tags.pairwise:
        return X_train @ X_train.T, X_test @ X_train.T, Y_IRIS[:120]
    return X_train, X_test, Y_IRIS[:120]


def _fit(estimator, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return estimator.fit(X, y)


def _partial_fit(estimator, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return estimator.partial_fit(X, y, classes=np.unique(Y_IRIS))


def fitted_attributes(estimator):
    """The attributes a fit sets: those of vars() ending in an underscore."""
    return {
        name: value
        for name, value in vars(estimator).items()
        if name.endswith("_") and not name.startswith("__")
    }


def assert_same(a, b, where="model", rtol=None):
    """a and b are equal bit for bit: arrays of the same dtype, shape and
    values, sparse matrices of the same format and arrays, and containers
    and objects (concept classes, schedules, random states) equal member by
    member. With rtol, floating-point values need only be that close."""
    assert type(a) is type(b), f"{where}: {type(a)} != {type(b)}"
    if isinstance(a, np.ndarray):
        if rtol is None or not np.issubdtype(a.dtype, np.floating):
            assert (a.dtype, a.shape) == (b.dtype, b.shape), where
            assert_array_equal(a, b, err_msg=where)
            # bit for bit: 0.0 and -0.0 differ
            assert a.dtype == object or a.tobytes() == b.tobytes(), where
        else:
            assert a.dtype == b.dtype, f"{where}: {a.dtype} != {b.dtype}"
            scale = np.max(np.abs(a), initial=0.0)
            assert_allclose(a, b, rtol=rtol, atol=rtol * scale, err_msg=where)
    elif sp.issparse(a):
        assert a.format == b.format and a.shape == b.shape, where
        for part in ("data", "indices", "indptr"):
            assert_same(getattr(a, part), getattr(b, part), f"{where}.{part}", rtol)
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b), where
        for i, (u, v) in enumerate(zip(a, b, strict=True)):
            assert_same(u, v, f"{where}[{i}]", rtol)
    elif isinstance(a, dict):
        # the same keys, in any order: a refit may set them in another
        assert a.keys() == b.keys(), f"{where}: keys {list(a)} != {list(b)}"
        for key in a:
            assert_same(a[key], b[key], f"{where}[{key!r}]", rtol)
    elif isinstance(a, np.random.RandomState):
        assert_same(a.get_state(), b.get_state(), f"{where}.get_state()")
    elif isinstance(a, functools.partial):
        assert_same((a.func, a.args, a.keywords), (b.func, b.args, b.keywords), where)
    elif isinstance(a, (float, np.floating)):
        # as a 0-d array: bit for bit unless rtol is given
        assert_same(np.asarray(a), np.asarray(b), where, rtol)
    elif hasattr(a, "__dict__") and not callable(a):
        assert_same(vars(a), vars(b), f"{where}.__dict__", rtol)
    else:
        assert a == b, f"{where}: {a!r} != {b!r}"


def assert_same_outputs(a, b, X, rtol=None):
    """Two fitted estimators predict the same on X, and their other outputs
    are equal bit for bit (or, with rtol, that close)."""
    for method in OUTPUT_METHODS:
        if hasattr(a, method):
            tolerance = None if method == "predict" else rtol
            assert_same(getattr(a, method)(X), getattr(b, method)(X), method, tolerance)


def assert_same_model(a, b, X):
    """Two fitted estimators: every fitted attribute and every output on X
    equal bit for bit."""
    assert_same(fitted_attributes(a), fitted_attributes(b))
    assert_same_outputs(a, b, X)


def _models_differ(a, b, X):
    try:
        assert_same_model(a, b, X)
    except AssertionError:
        return True
    return False


def _is_random(estimator):
    """Whether, when it shuffles, another seed gives another run: every
    seeded estimator but deterministic halving, whose seed draws concepts
    it does not use."""
    return estimator.get_params().get("randomized", True)


SEEDED = [e for e in ESTIMATORS if "random_state" in e.get_params()]


@pytest.mark.parametrize("estimator", SEEDED, ids=_ids(SEEDED))
def test_same_seed_same_model(estimator):
    X, X_test, y = _inputs(estimator)
    # As listed, and shuffling where the estimator can, so that its seed
    # matters.
    shuffled = estimator
    if estimator.get_params().get("shuffle") is False:
        shuffled = clone(estimator).set_params(shuffle=True)
    # The second fit refits an estimator fitted before on a binary sample,
    # so that a state the refit kept would show.
    binary = np.flatnonzero(y != 2)[:50]
    X_binary = X[np.ix_(binary, binary)] if X.shape[0] == X.shape[1] else X[binary]
    for variant in {id(e): e for e in (estimator, shuffled)}.values():
        first = _fit(clone(variant).set_params(random_state=7), X, y)
        second = _fit(clone(variant).set_params(random_state=7), X_binary, y[binary])
        assert_same_model(first, _fit(second, X, y), X_test)
    if _is_random(shuffled):
        first = _fit(clone(shuffled).set_params(random_state=7), X, y)
        other = _fit(clone(shuffled).set_params(random_state=8), X, y)
        assert _models_differ(first, other, X_test)


@pytest.mark.parametrize("random_state", [0, 7, np.int64(7), 2**32 - 1])
def test_an_int_seed_shuffles_as_a_new_random_state_of_it(random_state):
    """The shuffling seed of a call with an int random_state is the first
    draw of check_random_state(random_state), as scikit-learn makes it, at
    every call (kept, not drawn again); an instance gives its next draws."""
    first_draw = int(
        check_random_state(random_state).randint(np.iinfo(np.int64).max, dtype=np.int64)
    )
    for estimator in (MarginPerceptron(), KernelPerceptron()):
        estimator.set_params(random_state=random_state)
        assert estimator._run_seed() == estimator._run_seed() == first_draw
        instance = np.random.RandomState(random_state)
        estimator.set_params(random_state=instance)
        twin = np.random.RandomState(random_state)
        for _ in range(2):
            draw = int(twin.randint(np.iinfo(np.int64).max, dtype=np.int64))
            assert estimator._run_seed() == draw


SPARSE = [e for e in ESTIMATORS if get_tags(e).input_tags.sparse]


def _csr_tolerance(estimator):
    """None where dense and CSR input give the same sums in the same order;
    else the relative tolerance of the floating-point attributes."""
    if isinstance(estimator, MarginMLPClassifier):
        # Dense products run through BLAS, CSR products through
        # scipy.sparse, which sum the same terms in another order.
        return 1e-9
    return None


def _densified(attributes):
    """The attributes with the sparse ones (the support vectors of a CSR
    sample) made dense."""
    return {
        name: value.toarray() if sp.issparse(value) else value
        for name, value in attributes.items()
    }


@pytest.mark.parametrize("estimator", SPARSE, ids=_ids(SPARSE))
def test_dense_and_csr_give_the_same_model(estimator):
    X, X_test, y = _inputs(estimator)
    if "random_state" in estimator.get_params():
        estimator = clone(estimator).set_params(random_state=0)
    dense = _fit(clone(estimator), X, y)
    sparse = _fit(clone(estimator), sp.csr_matrix(X), y)
    rtol = _csr_tolerance(estimator)
    assert_same(
        fitted_attributes(dense), _densified(fitted_attributes(sparse)), rtol=rtol
    )
    for X_eval in (X_test, sp.csr_matrix(X_test)):
        assert_same_outputs(dense, sparse, X_eval, _csr_tolerance(estimator))


@pytest.mark.parametrize("pattern", ["all at once", "last entry", "one unused"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_csr_columns_in_use_give_the_model_of_the_dense_rows(pattern, dtype):
    # The linear loop reads the columns of a CSR sample that hold a value
    # (for float32, whole runs of 8, which keep each column's partial sum),
    # found in one pass that ends once every column is marked: a column
    # first met in the sample's last entry, columns never met, and a
    # sample whose first row marks every column must all give the dense
    # model, its margin_ included.
    rng = np.random.RandomState(0)
    X = rng.randn(60, 40) * (rng.rand(60, 40) < 0.3)
    y = (X[:, 0] + X[:, 1] - X[:, 2] > 0).astype(int)
    # columns 16 to 23, a whole run of 8, and 11 to 15 and 24 to 29 empty
    X[:, 11:30] = 0.0
    if pattern == "all at once":
        X[0] = rng.randn(40)
    elif pattern == "last entry":
        X[-1, 20] = 2.0
    X = X.astype(dtype)
    csr = sp.csr_matrix(X)
    rows, columns = compact_rows(csr)
    used = np.unique(csr.indices)
    if dtype == np.float32:
        used = np.flatnonzero(np.isin(np.arange(40) // 8, used // 8))
    assert_array_equal(np.arange(40) if columns is None else columns, used)
    if columns is not None:
        assert_array_equal(columns[rows[1]], csr.indices)
    if dtype == np.float32:
        assert_array_equal(rows[1] % 8, csr.indices % 8)
    params = dict(max_iter=5, tol=None, early_stopping=False, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        dense = MarginPerceptron(**params).fit(X, y)
        sparse = MarginPerceptron(**params).fit(csr, y)
    assert_array_equal(dense.coef_, sparse.coef_)
    assert_array_equal(dense.intercept_, sparse.intercept_)
    assert dense.margin_ == sparse.margin_


# the kernels that the compiled loops compute on the features
FEATURE_KERNELS = sorted(_FEATURE_KERNELS - {"polynomial"})


def _input_forms(X):
    """X as float64 and float32, dense and CSR; X holds float32 values."""
    X32 = X.astype(np.float32)
    return {
        "dense64": X,
        "csr64": sp.csr_matrix(X),
        "dense32": X32,
        "csr32": sp.csr_matrix(X32),
    }


@pytest.mark.parametrize("kernel", FEATURE_KERNELS)
@pytest.mark.parametrize("budget", [None, 20])
@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("online", [False, True])
def test_compiled_kernels_take_dense_csr_float32_to_the_same_bits(
    kernel, budget, n_classes, online
):
    """The compiled loops read float64 and float32, dense and CSR rows as
    the same float64 values summed in the same order: the fitted model is
    the same bit for bit, and so are the outputs on the same rows, in any
    of the four forms."""
    X = X_IRIS[:120].astype(np.float32).astype(np.float64)
    y = Y_IRIS[:120] if n_classes == 3 else (Y_IRIS[:120] == 1).astype(int)
    X_test = X_IRIS[120:].astype(np.float32).astype(np.float64)
    params = dict(kernel=kernel, budget=budget, average=True, random_state=0)
    if kernel != "rbf":
        # the sigmoid kernel cannot project (its kernel matrices are not
        # positive semi-definite)
        params["budget_strategy"] = "remove" if kernel == "sigmoid" else "project"
    models = {}
    for name, X_form in _input_forms(X).items():
        model = KernelPerceptron(**params, max_iter=5)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            if online:
                # a batch smaller than the budget, then one that exceeds it
                model.partial_fit(X_form[:15], y[:15], classes=np.unique(y))
                model.partial_fit(X_form[15:], y[15:])
            else:
                model.fit(X_form, y)
        models[name] = model
    reference = models["dense64"]
    assert reference.support_.size > 0 and len(reference.classes_) == n_classes
    for name, model in models.items():
        assert_same(
            _densified(fitted_attributes(model)),
            _densified(fitted_attributes(reference)),
            name,
        )
    outputs = {
        method: getattr(reference, method)(X_test)
        for method in OUTPUT_METHODS
        if hasattr(reference, method)
    }
    for form, X_eval in _input_forms(X_test).items():
        for name, model in models.items():
            for method, expected in outputs.items():
                assert_same(getattr(model, method)(X_eval), expected, (name, form))


@pytest.mark.parametrize("form", ["dense64", "csr64", "dense32"])
@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("seed", range(3))
def test_a_budget_the_support_stays_below_gives_the_fit_without_it(
    form, n_classes, seed
):
    """A budget of at least half the points runs the fit as without it
    first: a support that stays below the budget keeps that run, the same
    bits as no budget; one that reaches it leaves it to the budgeted loop,
    whose merges give vectors that are no samples. On labels half noise,
    which need support vectors of more than half the points; without
    early stopping the support only grows, so the last is the largest."""
    X, y = make_classification(
        n_samples=300,
        n_features=4,
        n_informative=4,
        n_redundant=0,
        n_classes=n_classes,
        flip_y=0.5,
        random_state=seed,
    )
    X = _input_forms(X.astype(np.float32).astype(np.float64))[form]
    params = dict(gamma=2.0, max_iter=4, early_stopping=False, random_state=seed)
    free = _fit(KernelPerceptron(**params), X, y)
    largest = len(free.support_)
    assert 2 * largest >= len(y), "the budgets below must run the fit without one"
    below = _fit(KernelPerceptron(**params, budget=largest + 1), X, y)
    assert_same_model(below, free, X)
    reached = _fit(KernelPerceptron(**params, budget=largest), X, y)
    assert len(reached.support_) <= largest
    assert (reached.support_ == -1).any()
    # early stopping keeps a point of each class out of the training part,
    # and so out of the support: a budget of all but one point binds but is
    # never reached
    params["early_stopping"] = True
    free = _fit(KernelPerceptron(**params), X, y)
    roomy = _fit(KernelPerceptron(**params, budget=len(y) - 1), X, y)
    assert_same_model(roomy, free, X)


def test_non_canonical_csr_gives_the_bits_of_canonical_csr():
    """CSR rows with unsorted and duplicate indices are summed as their
    canonical form, without a change to the caller's matrix."""
    X = sp.csr_matrix(X_IRIS[:120])
    y = Y_IRIS[:120]
    # each value v stored as v/2 twice, the row's entries reversed
    rows = [X.indices[X.indptr[i] : X.indptr[i + 1]] for i in range(X.shape[0])]
    values = [X.data[X.indptr[i] : X.indptr[i + 1]] for i in range(X.shape[0])]
    indices = np.concatenate([np.r_[r[::-1], r[::-1]] for r in rows])
    data = np.concatenate([np.r_[v[::-1], v[::-1]] / 2 for v in values])
    indptr = np.r_[0, np.cumsum([2 * len(r) for r in rows])]
    messy = sp.csr_matrix((data, indices, indptr), shape=X.shape)
    assert not messy.has_canonical_format
    kept = messy.indices.copy()
    for kernel in FEATURE_KERNELS:
        canonical = _fit(KernelPerceptron(kernel=kernel, random_state=0), X, y)
        other = _fit(KernelPerceptron(kernel=kernel, random_state=0), messy, y)
        assert_same(
            _densified(fitted_attributes(other)),
            _densified(fitted_attributes(canonical)),
        )
    assert_array_equal(messy.indices, kept)


PARALLEL = [e for e in ESTIMATORS if "n_jobs" in e.get_params()]


@pytest.mark.parametrize("estimator", PARALLEL, ids=_ids(PARALLEL))
def test_one_job_and_all_jobs_give_the_same_model(estimator):
    X, X_test, y = _inputs(estimator)
    if "random_state" in estimator.get_params():
        estimator = clone(estimator).set_params(random_state=0)
    one = _fit(clone(estimator).set_params(n_jobs=1), X, y)
    every = _fit(clone(estimator).set_params(n_jobs=-1), X, y)
    assert len(one.classes_) > 2
    assert_same_model(one, every, X_test)
    if hasattr(estimator, "partial_fit"):
        # a continued run evaluates the function so far on the new batch
        _partial_fit(one, X[:40], y[:40])
        _partial_fit(every, X[:40], y[:40])
        assert_same_model(one, every, X_test)


# Enough points that the compiled loop splits its kernel columns between
# two threads (each takes 4,096 rows at least: ROWS_PER_THREAD in
# skperc/_kernel_perceptron_fast.pxd), in blocks of unequal sizes.
N_THREADED = 2 * 4096 + 13


def _threaded_data(n_classes):
    """N_THREADED noisy samples of a disc against a ring (n_classes=3 cuts
    the ring in two), with zeros, so that CSR rows differ in length."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((N_THREADED, 6))
    y = (np.linalg.norm(X[:, :2], axis=1) > 1.2).astype(int)
    if n_classes == 3:
        y[(y == 1) & (X[:, 0] > 0)] = 2
    flip = rng.random(len(y)) < 0.05
    y[flip] = rng.integers(n_classes, size=flip.sum())
    X[np.abs(X) < 0.3] = 0.0
    return X.astype(np.float32).astype(np.float64), y


THREAD_COUNTS = (2, -1)


@pytest.mark.parametrize(
    "form, n_classes, average",
    [
        ("dense64", 2, False),
        ("dense64", 3, True),
        ("csr64", 2, True),
        ("csr64", 3, False),
        ("dense32", 2, True),
        ("dense32", 3, False),
    ],
)
def test_kernel_perceptron_threads_give_the_same_bits(form, n_classes, average):
    """Each thread computes and adds its rows of a kernel column by the
    arithmetic of one thread: the model, and its outputs, are the same bit
    for bit for every n_jobs."""
    X, y = _threaded_data(n_classes)
    X = _input_forms(X)[form]
    params = dict(max_iter=1, average=average, random_state=0)
    one = _fit(KernelPerceptron(**params, n_jobs=1), X, y)
    # many updates, each a column over all the points
    assert one.n_updates_.sum() > 1000 and len(one.classes_) == n_classes
    for n_jobs in THREAD_COUNTS:
        many = _fit(KernelPerceptron(**params, n_jobs=n_jobs), X, y)
        assert_same_model(one, many, X[:500])


@pytest.mark.parametrize("form", ["dense64", "csr64"])
@pytest.mark.parametrize("strategy", ["merge", "remove", "project"])
def test_kernel_perceptron_threads_give_the_same_bits_with_a_budget(strategy, form):
    # the budgeted loop (the kernel rows of a block of examples split among
    # the threads, and with CSR examples the values of the support vectors
    # changed in the block before, computed again in the threads), and the
    # function on the batch at the end of a call
    X, y = _threaded_data(3)
    X = _input_forms(X)[form]
    models = {}
    for n_jobs in (1, *THREAD_COUNTS):
        model = KernelPerceptron(
            budget=200,
            budget_strategy=strategy,
            max_iter=1,
            random_state=0,
            n_jobs=n_jobs,
        )
        # a first batch, then the function so far on a second one
        _partial_fit(model, X[:300], y[:300])
        _partial_fit(model, X[300:], y[300:])
        models[n_jobs] = model
    assert models[1].n_updates_.sum() > 1000
    for n_jobs in THREAD_COUNTS:
        assert_same_model(models[1], models[n_jobs], X[:500])


@pytest.mark.parametrize("early_stopping", [False, True])
@pytest.mark.parametrize("budget", [None, 1000])
def test_kernel_perceptron_threads_give_the_same_bits_on_a_busy_machine(
    budget, early_stopping
):
    """On cores that other processes keep busy, the loop's steps lose time
    waiting for a thread that the system does not run: it then runs on one
    thread for 10 times the time lost, milliseconds, and tries its threads
    again, several times in an epoch of tenths of a second; with early
    stopping, which runs the loop once for each epoch, a call starts on one
    thread where the last one left its threads. The bits do not change."""
    X, y = _threaded_data(3)
    params = dict(
        budget=budget,
        max_iter=4,
        early_stopping=early_stopping,
        n_iter_no_change=4,
        average=True,
        random_state=0,
    )
    one = _fit(KernelPerceptron(**params, n_jobs=1), X, y)
    assert one.n_iter_ == 4
    if budget is not None:
        assert one.n_support_.sum() == budget
    # two processes that compute until killed: other work on both cores
    others = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)
    ]
    try:
        busy = _fit(KernelPerceptron(**params, n_jobs=2), X, y)
    finally:
        for other in others:
            other.kill()
            other.wait()
    assert_same_model(one, busy, X[:500])


@pytest.mark.parametrize("kernel", ["rbf", "poly", "cosine", "laplacian"])
def test_kernel_perceptron_scores_in_any_chunks_and_threads(kernel):
    """decision_function gives the same bits whatever the chunks of rows
    that working_memory makes (one row, some, all) and the threads that
    score them, on the compiled kernels and on pairwise_kernels'."""
    X, y = _threaded_data(3)
    model = _fit(KernelPerceptron(kernel=kernel, max_iter=1, random_state=0), X, y)
    # all the rows in one chunk, which two threads share
    whole = model.decision_function(X)
    model.set_params(n_jobs=2)
    assert_same(model.decision_function(X), whole, "2 threads")
    rows = X[:2001]
    whole = whole[:2001]
    # the kernel matrix of all the rows and the support vectors
    assert 8 * len(model.support_) * len(rows) < 2**20 * 1024
    for chunk_rows in (1, 7, 500):
        for n_jobs in (1, 2, -1):
            if kernel in _COMPILED_KERNELS:
                # a compiled chunk's rows, with their copies and products
                row_bytes = _product_row_bytes(rows, len(model.dual_coef_))
            else:
                # the threads' kernel matrices together
                row_bytes = 8 * len(model.support_) * effective_n_jobs(n_jobs)
            model.set_params(n_jobs=n_jobs)
            with config_context(working_memory=(chunk_rows + 0.5) * row_bytes / 2**20):
                assert_same(model.decision_function(rows), whole, (chunk_rows, n_jobs))


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=_ids(ESTIMATORS))
def test_pickle_round_trip_is_the_same_model(estimator):
    """The model loaded from a pickle gives the bits of the model that was
    pickled, which pickling leaves as the fit left it."""
    X, X_test, y = _inputs(estimator)
    fitted = _fit(clone(estimator), X, y)
    held = dict(vars(fitted))
    loaded = pickle.loads(pickle.dumps(fitted))
    assert vars(fitted).keys() == held.keys()
    for name, value in held.items():
        assert vars(fitted)[name] is value, name
    assert_same_model(loaded, fitted, X_test)


ONLINE = [e for e in ESTIMATORS if hasattr(e, "partial_fit")]


@pytest.mark.parametrize("estimator", ONLINE, ids=_ids(ONLINE))
def test_pickled_partial_fit_continues_the_same_run(estimator):
    X, X_test, y = _inputs(estimator)
    first_batch, second_batch = X[:60], X[60:]
    if "random_state" in estimator.get_params():
        estimator = clone(estimator).set_params(random_state=0)
    original = _partial_fit(clone(estimator), first_batch, y[:60])
    copy = pickle.loads(pickle.dumps(original))
    assert_same_model(copy, original, X_test)
    _partial_fit(original, second_batch, y[60:])
    _partial_fit(copy, second_batch, y[60:])
    assert_same_model(copy, original, X_test)


# A precomputed kernel refuses warm_start (test_kernel_perceptron.py).
WARM = [
    e
    for e in ESTIMATORS
    if "warm_start" in e.get_params() and not get_tags(e).input_tags.pairwise
]


@pytest.mark.parametrize("start", ["fit", "partial_fit"])
@pytest.mark.parametrize("estimator", WARM, ids=_ids(WARM))
def test_a_pickled_warm_fit_continues_the_same_run(estimator, start):
    # a warm fit continues the run of a fit or of a partial_fit call (made
    # without refit's second fit, with averaging sums only where its own
    # average asks for them)
    if not hasattr(estimator, start):
        pytest.skip(f"{type(estimator).__name__} has no {start}")
    X, X_test, y = _inputs(estimator)
    estimator = clone(estimator).set_params(warm_start=True)
    if "random_state" in estimator.get_params():
        estimator.set_params(random_state=0)
    original = {"fit": _fit, "partial_fit": _partial_fit}[start](
        estimator, X[:60], y[:60]
    )
    copy = pickle.loads(pickle.dumps(original))
    _fit(original, X, y)
    _fit(copy, X, y)
    assert_same_model(copy, original, X_test)


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=_ids(ESTIMATORS))
def test_clone_of_a_fitted_estimator_is_unfitted(estimator):
    X, _, y = _inputs(estimator)
    fitted = _fit(clone(estimator), X, y)
    copy = clone(fitted)
    with pytest.raises(NotFittedError):
        check_is_fitted(copy)
    assert_same(copy.get_params(), fitted.get_params())


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=_ids(ESTIMATORS))
def test_concurrent_predictions_equal_sequential_ones(estimator):
    X, X_test, y = _inputs(estimator)
    fitted = _fit(clone(estimator), X, y)
    # Enough rows that the calls overlap; a Python kernel holds the GIL
    # for each pair, so more of its rows would only be slower.
    if not callable(getattr(estimator, "kernel", None)):
        X_test = np.tile(X_test, (20, 1))
    methods = [m for m in OUTPUT_METHODS if hasattr(fitted, m)]
    sequential = {m: getattr(fitted, m)(X_test) for m in methods}
    # 8 threads, 4 calls each of every method, interleaved
    calls = [m for _ in range(8 * 4) for m in methods]
    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(lambda m: getattr(fitted, m)(X_test), calls))
    for method, result in zip(calls, results, strict=True):
        assert_same(result, sequential[method], method)


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=_ids(ESTIMATORS))
def test_each_output_method_reads_one_snapshot_of_the_model(estimator, monkeypatch):
    """A method that reads the model through another (predict through
    decision_function) takes one snapshot of it, under one lock: the inner
    read runs on the outer one's snapshot, which no fit can change."""
    X, X_test, y = _inputs(estimator)
    fitted = _fit(clone(estimator), X, y)
    taken = []
    take = atomic.snapshot
    monkeypatch.setattr(
        atomic, "snapshot", lambda model: taken.append(model) or take(model)
    )
    for method in [m for m in OUTPUT_METHODS if hasattr(fitted, m)]:
        taken.clear()
        getattr(fitted, method)(X_test)
        assert taken == [fitted], method


def _wide_data(n_classes, dtype, n_features):
    """Rows that KernelPerceptron's loop reads once for a block of held-back
    updates: more than 2 MiB as float64 values (9,005 x 64: 4.4 MB), or more
    than 1.5 MiB in 2,500 rows or more (9,005 x 24: 1.65 MiB); float32 rows
    of these shapes too, as doubles in the products (9,005 x 24 take 0.82
    MiB). The last 5 rows, past a multiple of 8, are the products' rows
    taken one at a time (dots.h)."""
    X, y = make_classification(
        n_samples=9_005,
        n_features=n_features,
        n_informative=10,
        n_classes=n_classes,
        flip_y=0.1,
        random_state=n_classes,
    )
    return (X / np.abs(X).max(axis=0)).astype(dtype), y


@pytest.mark.parametrize(
    "dtype, n_classes, n_features, params",
    [
        (np.float64, 2, 64, dict()),
        (np.float64, 3, 64, dict(average=True)),
        (np.float32, 2, 64, dict(average=True, n_jobs=2)),
        (np.float32, 3, 64, dict(kernel="poly", degree=2)),
        (np.float64, 2, 64, dict(kernel="linear", beta="power", n_jobs=2)),
        (np.float64, 3, 64, dict(kernel="sigmoid", gamma=0.01, early_stopping=True)),
        (np.float64, 2, 24, dict()),
        (np.float64, 3, 24, dict(average=True, n_jobs=2)),
        (np.float32, 2, 24, dict(n_jobs=2)),
    ],
)
def test_kernel_perceptron_held_updates_give_the_same_bits(
    dtype, n_classes, n_features, params
):
    """On many rows, or rows too large for the processor's caches, the loop
    holds updates back and adds a block of columns at once; with a cache of
    columns too small for a block it adds each at once (from rows in panels
    under 2 MiB); a full cache keeps its columns and computes the others
    where they are added, and not into it: the same model, bit for bit."""
    X, y = _wide_data(n_classes, dtype, n_features)
    params = dict(max_iter=2, tol=None, random_state=0, **params)
    held = _fit(KernelPerceptron(**params), X, y)
    assert held.n_updates_.sum() > 1000
    # cache_size=1 (MB) holds 14 columns of 9,000 rows: fewer than a block
    one_at_a_time = _fit(KernelPerceptron(cache_size=1, **params), X, y)
    assert_same_model(held, one_at_a_time, X[:500])
    # cache_size=5 holds 72 columns, two blocks' worth, of far more
    # support vectors
    full_cache = _fit(KernelPerceptron(cache_size=5, **params), X, y)
    assert full_cache.support_.size > 500
    assert_same_model(held, full_cache, X[:500])


def test_kernel_perceptron_held_updates_fail_as_one_at_a_time():
    """A kernel column that is not finite stops the run with the same error,
    epoch and update count whether its update was held back or not: here
    (x . x')^2.5, NaN where x . x' < 0, while k(x, x) is finite."""
    X, y = _wide_data(2, np.float64, 64)
    params = dict(kernel="poly", degree=2.5, gamma=1.0, coef0=0.0, random_state=0)
    errors = []
    for cache_size in (200, 5, 1):
        with pytest.raises(ValueError, match="in epoch 1") as error:
            KernelPerceptron(cache_size=cache_size, **params).fit(X, y)
        errors.append(str(error.value))
    assert errors[0] == errors[1] == errors[2]


@pytest.mark.parametrize(
    "n_rows, n_features, dtype",
    [
        # blocks of 32 rows, then of 4, then single rows
        (101, 45, np.float64),
        (613, 64, np.float32),
        # two threads from 8,192 rows, each starting within a block (4,150)
        (8_300, 20, np.float64),
    ],
)
def test_kernel_perceptron_feature_major_rows_give_the_bits_of_csr(
    n_rows, n_features, dtype
):
    """Dense rows that do not hold updates (under 1.5 MiB, or under 2 MiB
    in fewer than 2,500 rows) are read feature-major, many rows at once in
    vector lanes; CSR rows one row at a time, in the order of the features:
    the model is the same bit for bit, in one thread and in two."""
    rng = np.random.default_rng(n_rows)
    X = rng.normal(size=(n_rows, n_features)).astype(dtype)
    y = (X[:, 0] + rng.normal(size=n_rows) > 0).astype(int)
    params = dict(max_iter=2, tol=None, early_stopping=False, random_state=0)
    for n_jobs in (1, 2):
        dense = _fit(KernelPerceptron(**params, n_jobs=n_jobs), X, y)
        assert dense.n_updates_.sum() > n_rows / 10
        sparse = _fit(KernelPerceptron(**params, n_jobs=n_jobs), sp.csr_matrix(X), y)
        assert_same(
            _densified(fitted_attributes(dense)),
            _densified(fitted_attributes(sparse)),
            f"n_jobs={n_jobs}",
        )


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_kernel_perceptron_sparse_csr_rows_give_the_bits_of_dense_rows(dtype):
    """CSR rows mostly 0, whose columns read the rows stored at each
    feature (on two threads, the second thread's first row at each feature
    found by binary search): the model of their dense rows, bit for bit, on
    one thread and two, with three classes. Some features are stored only
    in the first half of the rows, where the second thread finds none, and
    some only in the second half."""
    rng = np.random.default_rng(7)
    n_rows = 9_000
    X = rng.normal(size=(n_rows, 40))
    X[rng.random(X.shape) < 0.6] = 0.0
    X[n_rows // 2 :, :4] = 0.0
    X[: n_rows // 2, 4:8] = 0.0
    X = X.astype(dtype)
    y = np.digitize(X[:, :10].sum(axis=1) + rng.normal(size=n_rows), [-1.0, 1.0])
    params = dict(max_iter=3, tol=None, early_stopping=False, random_state=0)
    reference = _fit(KernelPerceptron(**params, n_jobs=1), X, y)
    assert reference.n_updates_.sum() > n_rows / 5 and len(reference.classes_) == 3
    for n_jobs in (1, 2):
        for form in (X, sp.csr_matrix(X)):
            model = _fit(KernelPerceptron(**params, n_jobs=n_jobs), form, y)
            assert_same(
                _densified(fitted_attributes(model)),
                _densified(fitted_attributes(reference)),
                (n_jobs, sp.issparse(form)),
            )


@pytest.mark.parametrize("early_stopping", [False, True])
def test_the_function_on_a_batch_in_chunks_has_the_bits_of_one_piece(
    monkeypatch, early_stopping
):
    """A budgeted call ends with the function on the rows it trained on,
    computed a chunk of rows at a time: chunks of 37 rows per thread, which
    cut the panels of 32 rows, give the model of one chunk larger than the
    batch (with early stopping, the rows of its training part)."""
    rng = np.random.default_rng(3)
    X = rng.normal(size=(700, 12)).astype(np.float32)
    y = (X[:, 0] + rng.normal(size=700) > 0).astype(int)
    params = dict(budget=40, max_iter=3, early_stopping=early_stopping, random_state=0)
    for n_jobs in (1, 2):
        whole = _fit(KernelPerceptron(**params, n_jobs=n_jobs), X, y)
        monkeypatch.setattr(kernel_perceptron, "_PRODUCT_CHUNK_ROWS", 37)
        chunked = _fit(KernelPerceptron(**params, n_jobs=n_jobs), X, y)
        monkeypatch.undo()
        assert_same(
            fitted_attributes(whole), fitted_attributes(chunked), f"n_jobs={n_jobs}"
        )
