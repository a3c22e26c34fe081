"""KernelPerceptron against the reference implementation, pairwise_kernels,
MarginPerceptron and itself."""

import math
import pickle
import tracemalloc
import warnings
from fractions import Fraction

import numpy as np
import pytest
import scipy.sparse as sp
from estimators import _cosine_kernel
from numpy.testing import assert_allclose, assert_array_equal
from reference_kernel_perceptron import reference_kernel_fit
from sklearn.datasets import load_iris, make_circles, make_classification
from sklearn.exceptions import ConvergenceWarning
from sklearn.metrics.pairwise import pairwise_kernels
from sklearn.preprocessing import StandardScaler, normalize
from sparse_data import spread_columns, word_rows

from skperc import KernelPerceptron, MarginPerceptron
from skperc._kernel_budget_fast import support_block_rows
from skperc._kernel_perceptron import (
    _COMPILED_KERNELS,
    _FEATURE_KERNELS,
    _class_order,
    _on_columns,
    _support_reading,
)
from skperc._kernel_perceptron_fast import (
    held_kernel_values,
    kernel_column,
    kernel_diagonal,
    kernel_products,
    read_by_feature,
    squared_norms,
)
from skperc.kernels import inverse_dot_kernel
from skperc.schedules import PowerThreshold


@pytest.fixture(autouse=True)
def _quiet_convergence():
    # Short runs on data that is not separable are the point of most tests.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        yield


def noisy_sample(n_samples=40, n_features=3, n_classes=2, random_state=0):
    return make_classification(
        n_samples=n_samples,
        n_features=n_features,
        n_informative=n_features,
        n_redundant=0,
        n_classes=n_classes,
        n_clusters_per_class=1,
        flip_y=0.1,
        random_state=random_state,
    )


def dual_vector(estimator, n_samples, problem=0):
    """The dual coefficient of every training example in one problem."""
    coef = np.zeros(n_samples)
    coef[estimator.support_] = estimator.dual_coef_[problem]
    return coef


# the kernels that the compiled loops compute on the features
FEATURE_KERNELS = sorted(_FEATURE_KERNELS - {"polynomial"})

KERNELS = [
    dict(kernel="rbf", gamma=0.4),
    dict(kernel="poly", degree=2, gamma=0.5, coef0=1.0),
    dict(kernel="laplacian", gamma=0.3),
]


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("beta", [0.0, 0.3, "scale", "power"])
@pytest.mark.parametrize("average", [False, True])
@pytest.mark.parametrize("budget", [None, 7])
def test_matches_reference(kernel, beta, average, budget):
    X, y = noisy_sample(random_state=len(str(beta)))
    weight = np.random.RandomState(1).choice([0.0, 0.5, 1.0, 2.0], size=len(y))
    estimator = KernelPerceptron(
        **kernel,
        beta=beta,
        average=average,
        budget=budget,
        budget_strategy="remove",
        shuffle=False,
        max_iter=8,
        tol=None,
        early_stopping=False,
    ).fit(X, y, sample_weight=weight)
    K = pairwise_kernels(X, metric=kernel["kernel"], **_params(kernel))
    expected = reference_kernel_fit(
        K,
        np.where(y == 1, 1.0, -1.0),
        beta=beta,
        max_iter=8,
        sample_weight=weight,
        average=average,
        budget=budget,
        averaging_epoch=kernel["kernel"] == "rbf",
    )
    assert estimator.n_updates_[0] == expected["n_updates"]
    assert estimator.n_iter_ == expected["n_epochs"]
    assert estimator.converged_ == expected["converged"]
    assert_array_equal(np.sort(estimator.support_), np.sort(expected["support"]))
    assert_allclose(
        dual_vector(estimator, len(y)), expected["dual_coef"], rtol=1e-12, atol=1e-12
    )
    if budget is not None:
        assert len(estimator.support_) <= budget


@pytest.mark.parametrize(
    "kernel",
    [
        dict(kernel="laplacian", gamma=0.3),
        dict(kernel=_cosine_kernel, kernel_params=dict(shift=0.0)),
    ],
    ids=["laplacian", "callable"],
)
@pytest.mark.parametrize("beta", [0.0, "scale"])
@pytest.mark.parametrize("average", [False, True])
@pytest.mark.parametrize("seed", range(8))
def test_classes_sharing_a_budget_match_reference(kernel, beta, average, seed):
    """Under a kernel that the budget does not bind, the loop of kernel
    columns removes the oldest support vector from the function of every
    class. A class whose last support vector leaves has the zero function,
    on which beta=0 updates at every example: the values that the removals
    leave must be that 0, not the rounding of the columns added and taken
    away, whose sign decided those updates at random."""
    n_classes, max_iter = 4, 4
    X, y = noisy_sample(n_samples=80, n_classes=n_classes, random_state=seed)
    weight = np.random.RandomState(seed).choice([0.5, 1.0, 2.0], size=len(y))
    estimator = KernelPerceptron(
        **kernel,
        beta=beta,
        average=average,
        budget=5,
        budget_strategy="remove",
        shuffle=False,
        max_iter=max_iter,
        tol=None,
        early_stopping=False,
    ).fit(X, y, sample_weight=weight)
    params = kernel.get("kernel_params", _params(kernel))
    K = pairwise_kernels(X, metric=kernel["kernel"], **params)
    expected = reference_kernel_fit(
        K,
        np.where(y[:, None] == np.arange(n_classes), 1.0, -1.0),
        beta=beta,
        max_iter=max_iter,
        sample_weight=weight,
        average=average,
        budget=5,
    )
    # every class trains in every epoch, as the reference's do
    assert (expected["epoch_updates"] > 0).all()
    assert_array_equal(estimator.n_updates_, expected["n_updates"])
    assert_array_equal(np.sort(estimator.support_), np.sort(expected["support"]))
    for c in range(n_classes):
        assert_allclose(
            dual_vector(estimator, len(y), c), expected["dual_coef"][c], atol=1e-12
        )


def _params(kernel):
    return {key: value for key, value in kernel.items() if key != "kernel"}


def test_multiclass_is_one_vs_rest_in_one_pass():
    X, y = noisy_sample(n_samples=60, n_classes=3, random_state=2)
    estimator = KernelPerceptron(gamma=0.5, beta=0.0, shuffle=False, max_iter=6).fit(
        X, y
    )
    K = pairwise_kernels(X, metric="rbf", gamma=0.5)
    assert estimator.dual_coef_.shape == (3, len(estimator.support_))
    for c in range(3):
        expected = reference_kernel_fit(K, np.where(y == c, 1.0, -1.0), max_iter=6)
        assert estimator.n_updates_[c] == expected["n_updates"]
        assert_allclose(
            dual_vector(estimator, len(y), c), expected["dual_coef"], atol=1e-12
        )
    # The support is grouped by class, then sorted, as in SVC.
    codes = y[estimator.support_]
    assert_array_equal(codes, np.sort(codes))
    assert_array_equal(estimator.n_support_, np.bincount(codes, minlength=3))


@pytest.mark.parametrize("beta", [0.0, "scale"])
@pytest.mark.parametrize("multiclass", [False, True])
def test_linear_kernel_is_margin_perceptron(beta, multiclass):
    if multiclass:
        X, y = load_iris(return_X_y=True)
    else:
        X, y = noisy_sample(n_samples=200, n_features=5, random_state=3)
    kernel = KernelPerceptron(kernel="linear", beta=beta, shuffle=False, max_iter=30)
    linear = MarginPerceptron(
        beta=beta, fit_intercept=False, shuffle=False, max_iter=30
    )
    kernel.fit(X, y)
    linear.fit(X, y)
    assert_array_equal(kernel.n_updates_, linear.n_updates_)
    assert_allclose(
        kernel.decision_function(X), linear.decision_function(X), rtol=1e-9, atol=1e-9
    )
    assert_allclose(kernel.margin_, linear.margin_, rtol=1e-9)


@pytest.mark.parametrize("kernel", FEATURE_KERNELS)
@pytest.mark.parametrize(
    "gamma, coef0, degree", [(0.1, 1.0, 3), (0.7, 0.5, 2.5), (0.05, -2.0, 2)]
)
def test_compiled_columns_are_pairwise_kernels(kernel, gamma, coef0, degree):
    X = np.abs(np.random.RandomState(0).randn(50, 7))
    sq_norms = (X**2).sum(axis=1)
    spec = dict(kind=_COMPILED_KERNELS[kernel], gamma=gamma, coef0=coef0, degree=degree)
    expected = pairwise_kernels(
        X, metric=kernel, filter_params=True, gamma=gamma, coef0=coef0, degree=degree
    )
    for j in [0, 13, 49]:
        column = kernel_column(X, sq_norms, spec, j)
        assert_allclose(column, expected[:, j], rtol=1e-13, atol=1e-15)
    diagonal = kernel_diagonal(sq_norms, spec)
    assert_allclose(diagonal, np.diagonal(expected), rtol=1e-13)


def test_compiled_cosine_kernel_is_the_cosine_at_any_scale_and_0_at_rows_of_zeros():
    """A row of zeros has the value 0 with every row, itself included, as in
    pairwise_kernels' "cosine"; the others are within rounding of the cosine
    at any scale of the rows (where pairwise_kernels leaves a row of norm
    below 10 machine epsilons as it is, its cosines scaled by its norm); the
    diagonal is 1, and k(x, z) has the bits of k(z, x)."""
    rng = np.random.RandomState(3)
    X = rng.randn(60, 9)
    X[[0, 17, 40]] = 0.0
    X[5] *= 1e-100
    X[6] *= 1e100
    sq_norms = squared_norms(X)
    spec = dict(kind=_COMPILED_KERNELS["cosine"], gamma=0.0, coef0=0.0, degree=3)
    columns = np.array([kernel_column(X, sq_norms, spec, j) for j in range(60)])
    assert columns.tobytes() == columns.T.tobytes()
    norms = np.linalg.norm(X, axis=1)
    units = X / np.where(norms > 0, norms, 1.0)[:, None]
    assert_allclose(columns, units @ units.T, rtol=1e-13, atol=1e-15)
    assert (columns[[0, 17, 40]] == 0).all()
    normal = np.delete(np.arange(60), 5)
    assert_allclose(
        columns[np.ix_(normal, normal)],
        pairwise_kernels(X[normal], metric="cosine"),
        rtol=1e-13,
        atol=1e-15,
    )
    diagonal = kernel_diagonal(sq_norms, spec)
    assert_array_equal(diagonal, (norms > 0).astype(float))


@pytest.mark.parametrize("seed", range(10))
def test_cosine_kernel_fits_the_linear_kernel_of_the_normalized_rows(seed):
    """A sum of cosine kernels is a linear function of x / ||x|| (the user
    guide's *Kernels*): the default fit with the cosine kernel makes the
    updates of the fit with the linear kernel on the normalized rows, and
    its decision values are theirs within rounding, on data that no linear
    function of the raw rows separates."""
    rng = np.random.RandomState(seed)
    X = rng.randn(300, 5) + rng.randn(5)
    y = (X[:, 0] * X[:, 1] + 0.3 * rng.randn(300) > 0).astype(int)
    cosine = KernelPerceptron(kernel="cosine", random_state=seed).fit(X, y)
    linear = KernelPerceptron(kernel="linear", random_state=seed)
    linear.fit(normalize(X), y)
    assert_array_equal(cosine.n_updates_, linear.n_updates_)
    assert_array_equal(cosine.support_, linear.support_)
    assert_allclose(
        cosine.decision_function(X),
        linear.decision_function(normalize(X)),
        rtol=1e-10,
        atol=1e-10,
    )


@pytest.mark.parametrize("degree", [2, 3, 4])
def test_compiled_poly_values_of_degree_2_to_4_are_within_their_roundings(degree):
    """Degrees 2 to 4 raise the base by multiplications (pow keeps the
    others): each value of a column and of the diagonal within (degree - 1)
    2**-53 of the exact power of its base, relatively, negative bases
    included."""
    rng = np.random.RandomState(degree)
    # small integers: every product of two rows is exact, so the base is
    # the one numpy computes below
    X = rng.randint(-9, 10, size=(400, 6)).astype(np.float64)
    sq_norms = squared_norms(X)
    gamma = 0.37
    bound = Fraction(degree - 1, 2**53) * Fraction(1_000_001, 1_000_000)
    negative = 0
    for coef0 in [1.3, -40.0]:
        spec = dict(
            kind=_COMPILED_KERNELS["poly"], gamma=gamma, coef0=coef0, degree=degree
        )
        columns = [
            (kernel_column(X, sq_norms, spec, j), gamma * (X @ X[j]) + coef0)
            for j in [0, 7, 399]
        ]
        diagonal = (kernel_diagonal(sq_norms, spec), gamma * sq_norms + coef0)
        for values, bases in [*columns, diagonal]:
            negative += (bases < 0).sum()
            for value, base in zip(values, bases, strict=True):
                exact = Fraction(base) ** degree
                assert abs(Fraction(value) - exact) <= bound * abs(exact)
    assert negative > 100


@pytest.mark.parametrize("kernel", FEATURE_KERNELS)
def test_csr_columns_read_by_feature_are_the_bits_of_rows(kernel):
    """The training loop reads CSR rows by feature: at each feature of
    point j, the rows stored there. Each row's sum still runs in feature
    order, without the products with a 0 of point j: the bits of the row
    at a time and of dense rows, with stored zeros of either sign, an
    empty row and float32 values."""
    rng = np.random.RandomState(2)
    X = rng.randn(300, 40).astype(np.float32).astype(np.float64)
    X[rng.rand(*X.shape) < 0.7] = 0.0
    X[5] = 0.0
    csr = sp.csr_matrix(X)
    # stored zeros, of both signs, at some features of every other row
    stored = np.zeros_like(X)
    stored[::2, ::3] = -0.0
    stored[1::4, 1::5] = 0.0
    at = (X == 0) & (rng.rand(*X.shape) < 0.5)
    with_zeros = sp.csr_matrix(
        (
            np.where(at, stored, X)[(X != 0) | at],
            np.nonzero((X != 0) | at)[1],
            np.concatenate([[0], np.cumsum(((X != 0) | at).sum(axis=1))]),
        ),
        shape=X.shape,
    )
    assert with_zeros.nnz > csr.nnz and np.signbit(with_zeros.data).any()
    spec = dict(kind=_COMPILED_KERNELS[kernel], gamma=0.3, coef0=0.5, degree=3)
    sq_norms = squared_norms(X)
    for j in [0, 5, 77, 299]:
        column = kernel_column(X, sq_norms, spec, j)
        for rows in (csr, with_zeros, csr.astype(np.float32)):
            posted = kernel_column(rows, sq_norms, spec, j, by_feature=True)
            assert posted.tobytes() == column.tobytes()


@pytest.mark.parametrize("kernel", FEATURE_KERNELS)
def test_compiled_columns_of_csr_and_float32_rows_are_the_dense_bits(kernel):
    """The column of CSR rows sums the stored products in feature order,
    which is the dense sum but for zero products: the same bits, float32
    rows read as their float64 values."""
    rng = np.random.RandomState(1)
    X = rng.randn(37, 11).astype(np.float32).astype(np.float64)
    X[rng.rand(*X.shape) < 0.6] = 0.0
    X[3] = 0.0  # a row without stored entries
    spec = dict(kind=_COMPILED_KERNELS[kernel], gamma=0.3, coef0=0.5, degree=3)
    sq_norms = squared_norms(X)
    assert_allclose(sq_norms, (X**2).sum(axis=1), rtol=1e-15)
    forms = [sp.csr_matrix(X), X.astype(np.float32), sp.csr_matrix(X, dtype=np.float32)]
    for other in forms:
        assert squared_norms(other).tobytes() == sq_norms.tobytes()
    for j in [0, 3, 20, 36]:
        column = kernel_column(X, sq_norms, spec, j)
        for other in forms:
            assert kernel_column(other, sq_norms, spec, j).tobytes() == column.tobytes()
    coef = rng.randn(2, 9)
    products = kernel_products(X, sq_norms, X[:9], sq_norms[:9], spec, coef)
    expected = coef @ np.array([kernel_column(X, sq_norms, spec, j) for j in range(9)])
    assert_allclose(products, expected, rtol=1e-12, atol=1e-12)
    for other in forms:
        assert (
            kernel_products(
                other, sq_norms, other[:9], sq_norms[:9], spec, coef
            ).tobytes()
            == products.tobytes()
        )


@pytest.mark.parametrize("kernel", FEATURE_KERNELS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_held_kernel_values_have_the_bits_of_the_columns(kernel, dtype):
    """The kernel values of a visited example with the held updates' points,
    computed at once in vector lanes, are the values that the points' columns
    give its row, bit for bit: the decisions that they make are those of the
    updates added one at a time. From 1 to 32 points (the most that are
    held), on both sides of the edges of the vector lanes, on 3 to 67
    features."""
    rng = np.random.RandomState(2)
    spec = dict(kind=_COMPILED_KERNELS[kernel], gamma=0.05, coef0=0.5, degree=3)
    for n_features in (3, 20, 67):
        X = rng.randn(120, n_features).astype(np.float32).astype(dtype)
        sq_norms = squared_norms(X)
        columns = np.array([kernel_column(X, sq_norms, spec, j) for j in range(120)])
        for count in (1, 7, 8, 9, 31, 32):
            points = rng.choice(120, size=count, replace=False).astype(np.intp)
            for i in rng.choice(120, size=10, replace=False):
                values = held_kernel_values(X, sq_norms, spec, points, i)
                assert values.tobytes() == columns[points, i].tobytes()


@pytest.mark.parametrize("kernel", ["poly", "rbf"])
def test_products_in_tiles_of_rows_have_the_bits_of_a_column_at_a_time(kernel):
    """kernel_products reads each thread's rows a tile at a time (here 800
    rows of 40 features), all the support against each tile, 4 support
    vectors at a time from panels (of float64 values, float32 rows' made
    doubles, the last panel padded) and the 29th alone: every value is
    still the sum over the support, in its order, of the columns the loop
    computes, bit for bit, dense or CSR (a row at a time, test below),
    float64 or float32, on one thread or two (whose blocks meet at row
    4,480, the first panel's bound under half the rows, off the tiles'
    bounds)."""
    rng = np.random.RandomState(3)
    X = rng.randn(9000, 40).astype(np.float32).astype(np.float64)
    X[rng.rand(*X.shape) < 0.3] = 0.0
    sq_norms = squared_norms(X)
    spec = dict(kind=_COMPILED_KERNELS[kernel], gamma=0.02, coef0=0.5, degree=2)
    support = np.arange(5, 9000, 317)
    coef = rng.randn(2, len(support))
    expected = np.zeros((2, len(X)))
    for s, j in enumerate(support):
        expected += coef[:, [s]] * kernel_column(X, sq_norms, spec, j)
    forms = [X, X.astype(np.float32), sp.csr_matrix(X)]
    forms.append(sp.csr_matrix(X, dtype=np.float32))
    for rows in forms:
        for n_threads in [1, 2]:
            products = kernel_products(
                rows,
                sq_norms,
                rows[support],
                sq_norms[support],
                spec,
                coef,
                n_threads,
            )
            assert products.tobytes() == expected.tobytes()


@pytest.mark.parametrize("kernel", FEATURE_KERNELS)
def test_products_of_few_rows_a_row_at_a_time_have_the_bits_of_columns(kernel):
    """Fewer than 6 rows go a row at a time against the support as it
    lies: a dense support with its vectors in the lanes of a register, two
    registers side by side (here 45 support vectors: 32 in pairs of
    registers of 8 lanes, then 8 in one, then 5 alone, or 40 in pairs of 4
    lanes, 4, then 1; on 37 features: 4 squares of 8 and 5 alone, or 9 of
    4 and 1; the AVX2 lanes in tests/test_simd_levels.py), a CSR support by
    its vectors' stored values. Every value is still the sum over the
    support, in its order, of the columns the loop computes, bit for bit:
    dense or CSR rows and support (half their values 0), float64 or
    float32, coefficients of 0 among the others, for 1 to 5 rows and for 6
    and 7 (the columns)."""
    rng = np.random.RandomState(13)
    X = rng.randn(300, 37).astype(np.float32).astype(np.float64)
    X[rng.rand(*X.shape) < 0.5] = 0.0
    sq_norms = squared_norms(X)
    spec = dict(kind=_COMPILED_KERNELS[kernel], gamma=0.02, coef0=0.5, degree=3)
    support = rng.choice(300, 45, replace=False)
    coef = rng.randn(3, len(support))
    coef[:, ::5] = 0.0
    expected = np.zeros((3, len(X)))
    for s, j in enumerate(support):
        expected += coef[:, [s]] * kernel_column(X, sq_norms, spec, j)
    forms = [
        lambda rows: rows,
        lambda rows: rows.astype(np.float32),
        sp.csr_matrix,
        lambda rows: sp.csr_matrix(rows, dtype=np.float32),
    ]
    for n in range(1, 8):
        rows = rng.choice(300, n, replace=False)
        for form in forms:
            for support_form in forms:
                products = kernel_products(
                    form(X[rows]),
                    sq_norms[rows],
                    support_form(X[support]),
                    sq_norms[support],
                    spec,
                    coef,
                )
                assert products.tobytes() == expected[:, rows].tobytes()


@pytest.mark.parametrize("kernel", ["poly", "rbf"])
@pytest.mark.parametrize("wide", [False, True])
def test_products_of_a_few_rows_have_the_bits_of_one_thread(kernel, wide):
    """Two threads share the rows of kernel_products once each has 4,096
    kernel values (rows times support vectors) and a panel of 32 rows to
    compute: here 33 to 200 rows against 3,000 support vectors, in blocks
    of unequal sizes from 64 rows on. Each value has the bits of one
    thread, for dense and CSR rows, float64 or float32, against a dense or
    CSR support, on 20 features or on 4,200 (where a CSR support is read
    by feature)."""
    rng = np.random.RandomState(11)
    if wide:
        X = sp.random(3200, 4200, density=0.005, format="csr", random_state=rng)
        X.data = (X.data - 0.5).astype(np.float32).astype(np.float64)
        forms = [lambda rows: rows, lambda rows: rows.astype(np.float32)]
        supports = [sp.csr_matrix]
    else:
        X = rng.randn(3200, 20).astype(np.float32).astype(np.float64)
        X[rng.rand(*X.shape) < 0.3] = 0.0
        forms = [
            lambda rows: rows,
            lambda rows: rows.astype(np.float32),
            sp.csr_matrix,
            lambda rows: sp.csr_matrix(rows, dtype=np.float32),
        ]
        supports = [np.asarray, sp.csr_matrix]
    sq_norms = squared_norms(X)
    spec = dict(kind=_COMPILED_KERNELS[kernel], gamma=0.05, coef0=0.5, degree=2)
    coef = rng.randn(2, 3000)
    for n in (33, 64, 97, 200):
        for form in forms:
            rows = form(X[:n])
            for support in supports:
                vectors = support(X[200:])
                assert read_by_feature(vectors) == (wide and sp.issparse(rows))
                products = [
                    kernel_products(
                        rows, sq_norms[:n], vectors, sq_norms[200:], spec, coef, t
                    )
                    for t in (1, 2)
                ]
                assert products[0].shape == (2, n)
                assert products[1].tobytes() == products[0].tobytes()


def assert_csr_products_have_the_bits_of_dense_rows(X, support, kernel, rng, supports):
    """kernel_products of the CSR rows of X, float64 or float32, with each
    support that supports(rows, dense support) gives (coefficients of 0
    among the others), on one thread or two: the bits of the dense rows'."""
    sq_norms = squared_norms(X)
    spec = dict(kind=_COMPILED_KERNELS[kernel], gamma=0.05, coef0=0.5, degree=2)
    coef = rng.randn(3, len(support))
    coef[:, ::7] = 0.0
    expected = kernel_products(X, sq_norms, X[support], sq_norms[support], spec, coef)
    for rows in [sp.csr_matrix(X), sp.csr_matrix(X, dtype=np.float32)]:
        for vectors in supports(rows[support], X[support]):
            for n_threads in [1, 2]:
                products = kernel_products(
                    rows, sq_norms, vectors, sq_norms[support], spec, coef, n_threads
                )
                assert products.tobytes() == expected.tobytes()


@pytest.mark.parametrize("kernel", FEATURE_KERNELS)
def test_csr_products_a_row_at_a_time_have_the_bits_of_dense_rows(kernel):
    """kernel_products computes the products of a CSR row with the support
    all at once, from panels of the support read at the row's stored
    features, the support 1 MiB of panels at a time (here 96 vectors of
    1,100 features, then 54): each value has the bits of dense rows (the
    test above ties those to the loop's columns), float64 or float32 rows,
    a dense or CSR support, coefficients of 0 among the others, on one
    thread or two (8,200 rows make two blocks)."""
    rng = np.random.RandomState(8)
    X = rng.randn(8200, 1100).astype(np.float32).astype(np.float64)
    X[rng.rand(*X.shape) < 0.98] = 0.0
    support = rng.choice(len(X), 150, replace=False)
    assert_csr_products_have_the_bits_of_dense_rows(
        X, support, kernel, rng, lambda csr, dense: [dense, csr]
    )


@pytest.mark.parametrize("budget", [None, 40])
@pytest.mark.parametrize("form", ["dense", "csr"])
def test_the_support_reading_a_fit_keeps_stays_that_of_its_support(budget, form):
    """decision_function reads the squared norms of the support vectors and,
    of a CSR support, the features that CSR rows meet them on and its
    indices renumbered on them, as the fit kept them: after fit and after
    each partial_fit, what support_vectors_ as they stand give, and
    decision values of the bits of products that compute them afresh, for
    dense and CSR rows, from the model and from its pickle, which leaves the
    reading out and rebuilds it (in place of one that a pickle holds, as an
    earlier version's did). On word counts spread among 20 times their
    columns, which the support meets on a few of them."""
    X, y, _ = word_rows(600, 300, 8)
    X, _ = spread_columns(X, 6000)
    if form == "dense":
        X = X.toarray()
    model = KernelPerceptron(budget=budget, gamma=0.5, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(X[:200], y[:200])
        for call in range(2):
            if call:
                model.partial_fit(X[200 * call : 200 * (call + 1)], y[:200])
            assert "_support_reading" not in model.__getstate__()
            loaded = pickle.loads(pickle.dumps(model))
            # a pickle that holds a reading in another form
            state = {**model.__getstate__(), "_support_reading": ("old", None)}
            earlier = KernelPerceptron.__new__(KernelPerceptron)
            earlier.__setstate__(state)
            norms, columns, indices = _support_reading(model.support_vectors_)
            for kept in (model, loaded, earlier):
                kept_norms, kept_columns, kept_indices = kept._support_reading
                assert kept_norms.tobytes() == norms.tobytes()
                if form == "dense":
                    # a dense support is read whole
                    assert kept_columns is columns is kept_indices is indices is None
                else:
                    assert_array_equal(kept_columns, columns)
                    assert_array_equal(kept_indices, indices)
                    assert len(columns) < X.shape[1] // 10
                    support = kept.support_vectors_
                    assert_array_equal(columns[indices], support.indices)
            for rows in (X[400:], sp.csr_matrix(X[400:])):
                fresh = model._products(rows, model.support_vectors_, model.dual_coef_)
                assert model.decision_function(rows).tobytes() == fresh.tobytes()
                for kept in (loaded, earlier):
                    assert kept.decision_function(rows).tobytes() == fresh.tobytes()


@pytest.mark.parametrize("n_rows", [1, 3, 40, 400])
def test_csr_rows_on_columns_are_their_values_there(n_rows):
    """_on_columns keeps each row's values at the features ``columns``,
    renumbered in order, sorted, and leaves out the others: by bisection
    among the columns for a few rows, by a map of the features for many;
    of two rows or more, the last stores nothing, and the first only
    values left out."""
    rng = np.random.RandomState(n_rows)
    X = sp.random(n_rows, 5000, density=0.01, format="csr", random_state=rng)
    X = X.toarray()
    columns = np.flatnonzero(rng.rand(5000) < 0.3)
    if n_rows > 1:
        X[-1] = 0
        X[0, columns] = 0
    X = sp.csr_matrix(X)
    few = X.nnz * len(columns).bit_length() < X.shape[1]
    assert few == (n_rows < 40)
    on_columns = _on_columns(X, columns)
    assert on_columns.shape == (n_rows, len(columns))
    assert on_columns.has_sorted_indices
    assert_array_equal(on_columns.toarray(), X.toarray()[:, columns])


@pytest.mark.parametrize("kernel", FEATURE_KERNELS)
def test_few_csr_rows_read_the_support_by_feature_with_the_bits_of_dense_rows(
    kernel,
):
    """CSR rows that store few values against a CSR support (here 200 rows
    of 1,100 features, 2% stored, against 150 of them) read it by feature
    even on few features, where its panels would copy more of its values
    than the rows read: each value has the bits of dense rows, float64 or
    float32 rows, on one thread or two. 41 times the rows go in panels."""
    rng = np.random.RandomState(12)
    X = rng.randn(200, 1100).astype(np.float32).astype(np.float64)
    X[rng.rand(*X.shape) < 0.98] = 0.0
    support = rng.choice(len(X), 150, replace=False)
    rows = sp.csr_matrix(X)
    assert not read_by_feature(rows[support])
    assert read_by_feature(rows[support], rows)
    assert not read_by_feature(rows[support], sp.vstack([rows] * 41))
    assert_csr_products_have_the_bits_of_dense_rows(
        X, support, kernel, rng, lambda csr, dense: [csr]
    )


@pytest.mark.parametrize("kernel", FEATURE_KERNELS)
def test_csr_products_read_by_feature_have_the_bits_of_dense_rows(kernel):
    """Over more than 4,096 features (here 5,000), kernel_products reads a
    CSR support by feature, its values at each stored feature of a row: each
    value still has the bits of dense rows, though the sums skip the
    support's zeros (-0.0 stored among them), float64 or float32 rows and
    support, a row without entries, coefficients of 0 among the others, on
    one thread or two."""
    rng = np.random.RandomState(9)
    X = rng.randn(3000, 5000).astype(np.float32).astype(np.float64)
    X[rng.rand(*X.shape) < 0.995] = 0.0
    X[7] = 0.0
    support = rng.choice(len(X), 120, replace=False)
    dense = X[support]
    stored, zeros = (
        np.nonzero(dense),
        np.nonzero((dense == 0) & (rng.rand(*dense.shape) < 0.01)),
    )
    with_zeros = sp.csr_matrix(
        (
            np.concatenate([dense[stored], np.full(len(zeros[0]), -0.0)]),
            tuple(np.concatenate(pair) for pair in zip(stored, zeros, strict=True)),
        ),
        shape=dense.shape,
    )
    assert (with_zeros.data == 0).sum() == len(zeros[0]) > 0

    def supports(csr, _):
        assert read_by_feature(csr) and read_by_feature(with_zeros)
        return [csr, with_zeros]

    assert_csr_products_have_the_bits_of_dense_rows(X, support, kernel, rng, supports)


@pytest.mark.parametrize("kernel", ["poly", "rbf"])
def test_block_rows_of_the_budget_have_the_bits_of_a_column_at_a_time(kernel):
    """The budgeted loop reads the support's panels once for several
    examples of a block: each kernel row is still, bit for bit, what the
    columns the loop computes give, one point at a time from rows in C
    order, dense or CSR, float64 or float32, on one thread or two. 150
    examples make two blocks of 64 and one of 22 (groups of 4 and a group
    of 2); 70 support vectors end within a stretch of a panel."""
    rng = np.random.RandomState(4)
    X = rng.randn(150, 40).astype(np.float32).astype(np.float64)
    X[rng.rand(*X.shape) < 0.3] = 0.0
    support = rng.randn(70, 40)
    both = np.vstack([support, X])
    sq_norms = squared_norms(both)
    spec = dict(kind=_COMPILED_KERNELS[kernel], gamma=0.02, coef0=0.5, degree=2)
    expected = np.array(
        [kernel_column(both, sq_norms, spec, 70 + i)[:70] for i in range(150)]
    )
    forms = [X, X.astype(np.float32), sp.csr_matrix(X)]
    forms.append(sp.csr_matrix(X, dtype=np.float32))
    for rows in forms:
        for n_threads in [1, 2]:
            block_rows = support_block_rows(rows, support, spec, n_threads)
            assert block_rows.tobytes() == expected.tobytes()


@pytest.mark.parametrize("kernel", FEATURE_KERNELS)
@pytest.mark.parametrize("budget", [None, 10])
def test_csr_and_float32_training_computes_no_kernel_in_python(
    kernel, budget, monkeypatch
):
    """Training on CSR or float32 rows with a compiled kernel computes its
    kernel values in the compiled loop, never by pairwise_kernels (the
    Python column callback of other kernels)."""
    X, y = noisy_sample(n_samples=60, n_features=4, n_classes=3, random_state=2)
    X[np.abs(X) < 0.7] = 0.0

    def refuse(*args, **kwargs):
        raise AssertionError("pairwise_kernels called during training")

    monkeypatch.setattr("skperc._kernel_perceptron.pairwise_kernels", refuse)
    strategy = {"rbf": "merge", "sigmoid": "remove"}.get(kernel, "project")
    for X_form in (
        sp.csr_matrix(X),
        X.astype(np.float32),
        sp.csr_matrix(X, dtype=np.float32),
    ):
        model = KernelPerceptron(kernel=kernel, budget=budget, budget_strategy=strategy)
        model.fit(X_form, y)
        model.partial_fit(X_form[:20], y[:20])
        assert model.support_.size > 0
        assert model.support_vectors_.dtype == np.float64
    monkeypatch.undo()
    with pytest.raises(AssertionError, match="during training"):
        monkeypatch.setattr("skperc._kernel_perceptron.pairwise_kernels", refuse)
        KernelPerceptron(kernel="laplacian").fit(sp.csr_matrix(X), y)


def test_compiled_rbf_exponential_within_an_ulp():
    """The compiled RBF column computes exp itself, within 1 ulp of the C
    library's exp over the whole range of arguments; below exp(-707) it
    gives 0. (np.exp is not the reference: its own rounding differs between
    NumPy versions.)"""
    t = np.concatenate([np.linspace(0, 750, 200_001), [1e-300, 1e-12, 0.5]])
    X = np.sqrt(t)[:, None]
    spec = dict(kind=_COMPILED_KERNELS["rbf"], gamma=1.0, coef0=0.0, degree=0.0)
    column = kernel_column(X, t, spec, 0)
    expected = np.array([math.exp(-v) for v in t])
    normal = t <= 707
    assert_allclose(column[normal], expected[normal], rtol=2.3e-16, atol=0)
    assert (column[~normal] == 0).all() and (expected[~normal] < 1e-307).all()
    assert column[0] == 1.0


def test_precomputed_is_the_kernel():
    X, y = noisy_sample(n_samples=80, random_state=4)
    X_test = np.random.RandomState(5).randn(20, 3)
    rbf = KernelPerceptron(gamma=0.2, beta="scale", shuffle=False).fit(X, y)
    gram = KernelPerceptron(kernel="precomputed", beta="scale", shuffle=False)
    gram.fit(pairwise_kernels(X, metric="rbf", gamma=0.2), y)
    assert_array_equal(gram.support_, rbf.support_)
    assert_allclose(gram.dual_coef_, rbf.dual_coef_)
    assert gram.support_vectors_.shape == (0, 0)
    assert_allclose(
        gram.decision_function(pairwise_kernels(X_test, X, metric="rbf", gamma=0.2)),
        rbf.decision_function(X_test),
    )
    assert not hasattr(gram, "partial_fit")
    with pytest.raises(ValueError, match="square Gram matrix"):
        gram.fit(pairwise_kernels(X[:10], X, metric="rbf"), y[:10])


def test_callable_and_sparse_inputs_give_the_same_function():
    X, y = noisy_sample(n_samples=60, random_state=6)
    params = dict(beta=0.5, shuffle=False, max_iter=5)
    compiled = KernelPerceptron(kernel="poly", degree=2, gamma=0.5, **params)
    compiled.fit(X, y)
    sparse = KernelPerceptron(kernel="poly", degree=2, gamma=0.5, **params)
    sparse.fit(sp.csr_matrix(X), y)
    python = KernelPerceptron(
        kernel=lambda x, z: (0.5 * x @ z + 1.0) ** 2, **params
    ).fit(X, y)
    for other in (sparse, python):
        assert_array_equal(other.support_, compiled.support_)
        assert_allclose(other.dual_coef_, compiled.dual_coef_)
        assert_allclose(other.decision_function(X), compiled.decision_function(X))


def test_small_cache_gives_the_same_bits():
    X, y = noisy_sample(n_samples=300, random_state=7)
    params = dict(gamma=0.5, beta=0.2, average=True, random_state=0, max_iter=20)
    large = KernelPerceptron(**params).fit(X, y)
    # 300 points: a column is 2,400 bytes, so this cache holds 4 of them.
    small = KernelPerceptron(cache_size=0.01, **params).fit(X, y)
    assert_array_equal(small.dual_coef_, large.dual_coef_)
    assert_array_equal(small.margin_, large.margin_)


def test_early_stopping_computes_each_column_once(monkeypatch):
    """Under early stopping each epoch is a call of the compiled loop; the
    cache of columns lasts over them, so that a column computed in one
    epoch is read in the next, not computed again."""
    X, y = noisy_sample(n_samples=200, random_state=3)
    # labels of no pattern: most points update in epoch after epoch
    y = np.random.RandomState(0).permutation(y)
    computed = []
    kernel = KernelPerceptron._kernel

    def counting_kernel(self, A, B):
        if B.shape[0] == 1 and A.shape[0] == X.shape[0]:
            computed.append(B.tobytes())
        return kernel(self, A, B)

    monkeypatch.setattr(KernelPerceptron, "_kernel", counting_kernel)
    estimator = KernelPerceptron(
        kernel=lambda x, z: np.exp(-0.5 * np.sum((x - z) ** 2)),
        early_stopping=True,
        n_iter_no_change=8,
        refit=False,
        random_state=0,
    ).fit(X, y)
    assert estimator.n_iter_ >= 9
    # the training part is 180 points: far fewer than their updates
    assert 0 < len(computed) == len(set(computed)) <= 180


def test_callable_kernel_of_two_matrices_is_named_with_the_remedy():
    """A kernel written for SVC (two matrices in, their Gram matrix out)
    fails on the 1-D rows that pairwise_kernels gives a callable: the error
    names the kernel and the way such a kernel is used, and keeps the
    callable's own error as its cause."""
    X, y = load_iris(return_X_y=True)

    def gram_of_matrices(A, B):
        return pairwise_kernels(A, B, metric="rbf", gamma=0.1)

    with pytest.raises(ValueError, match="(?s)gram_of_matrices.*'precomputed'") as info:
        KernelPerceptron(kernel=gram_of_matrices).fit(X, y)
    assert isinstance(info.value.__cause__, ValueError)
    assert "Expected 2D array" in str(info.value.__cause__)
    # the same kernel on the Gram matrices is a fit
    gram = gram_of_matrices(X, X)
    model = KernelPerceptron(kernel="precomputed").fit(gram, y)
    assert model.score(gram, y) > 0.9


@pytest.mark.parametrize("average", [False, True])
@pytest.mark.parametrize("budget", [None, 9])
def test_margin_and_norm_contract(average, budget):
    """margin_ is min y f(x) / ||w|| with f = decision_function and
    ||w||^2 = a^T K a over the support vectors."""
    X, y = noisy_sample(n_samples=120, n_classes=3, random_state=8)
    estimator = KernelPerceptron(
        gamma=0.3, average=average, budget=budget, random_state=0, max_iter=10
    ).fit(X, y)
    S = estimator.support_vectors_
    K = pairwise_kernels(S, metric="rbf", gamma=0.3)
    a = estimator.dual_coef_
    norms = np.sqrt(np.einsum("ci,ij,cj->c", a, K, a))
    assert_allclose(estimator._coef_norm, norms, rtol=1e-10)
    scores = estimator.decision_function(X)
    signs = np.where(y[:, None] == estimator.classes_[None, :], 1, -1)
    assert_allclose(
        estimator.margin_, (signs * scores).min(axis=0) / norms, rtol=1e-9, atol=1e-12
    )


def test_support_reconstructs_the_decision_function():
    X, y = noisy_sample(n_samples=200, random_state=9)
    X_test = np.random.RandomState(10).randn(50, 3)
    estimator = KernelPerceptron(gamma=0.5, random_state=0, max_iter=20).fit(X, y)
    assert len(estimator.support_) < len(X)
    assert_array_equal(estimator.support_vectors_, X[estimator.support_])
    kernel = pairwise_kernels(X_test, X[estimator.support_], metric="rbf", gamma=0.5)
    assert_allclose(
        estimator.decision_function(X_test),
        kernel @ estimator.dual_coef_[0],
        rtol=1e-12,
        atol=1e-12,
    )


def test_compression_one_epoch_on_the_support_alone():
    """An epoch of the perceptron on its own mistakes, in their order, makes
    the same updates: the support is a compression of the sample."""
    X, y = noisy_sample(n_samples=150, random_state=11)
    # beta=0: a threshold that follows the longest example seen would see
    # other examples on the support alone
    params = dict(
        kernel="poly", degree=3, gamma=0.3, beta=0.0, shuffle=False, max_iter=1
    )
    full = KernelPerceptron(**params).fit(X, y)
    kept = np.sort(full.support_)
    compressed = KernelPerceptron(**params).fit(X[kept], y[kept])
    assert len(compressed.support_) == len(kept)
    assert_allclose(dual_vector(compressed, len(kept)), dual_vector(full, len(X))[kept])
    assert_array_equal(compressed.predict(X), full.predict(X))


@pytest.mark.parametrize("budget", [None, 15])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_partial_fit_is_one_epoch_of_fit(budget, n_classes):
    X, y = noisy_sample(n_samples=90, n_classes=n_classes, random_state=12)
    # a fit that ends on a full budget adds an averaging epoch (see
    # test_kernel_budget), which partial_fit has not
    average = budget is None
    params = dict(gamma=0.5, beta="scale", average=average, budget=budget)
    full = KernelPerceptron(
        shuffle=False, max_iter=1, early_stopping=False, **params
    ).fit(X, y)
    stream = KernelPerceptron(shuffle=False, **params)
    for chunk in np.array_split(np.arange(len(y)), 4):
        stream.partial_fit(X[chunk], y[chunk], classes=np.unique(y))
    assert_array_equal(stream.support_, full.support_)
    assert_array_equal(stream.n_updates_, full.n_updates_)
    assert_allclose(stream.dual_coef_, full.dual_coef_, rtol=1e-12)
    assert_allclose(stream.decision_function(X), full.decision_function(X))


def test_budget_bounds_the_support_and_warns_on_no_convergence():
    X, y = noisy_sample(n_samples=200, random_state=13)
    # a patience that max_iter ends first
    estimator = KernelPerceptron(
        budget=10, max_iter=5, n_iter_no_change=5, random_state=0
    )
    with pytest.warns(ConvergenceWarning, match="max_iter=5"):
        estimator.fit(X, y)
    assert len(estimator.support_) == 10
    assert not estimator.converged_


def test_pickle_and_refit_are_reproducible():
    X, y = noisy_sample(n_samples=100, n_classes=3, random_state=14)
    estimator = KernelPerceptron(random_state=3, max_iter=10).fit(X, y)
    again = pickle.loads(pickle.dumps(estimator))
    assert_array_equal(again.decision_function(X), estimator.decision_function(X))
    refit = KernelPerceptron(random_state=3, max_iter=10).fit(X, y)
    assert_array_equal(refit.dual_coef_, estimator.dual_coef_)


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("budget", [None, 25])
def test_a_fitted_model_holds_its_support_vectors_once(sparse, budget):
    """The run continues from the support vectors oldest first, and
    support_vectors_ holds the same rows grouped by class: between calls,
    and in a pickle, the model holds them once, and the next call takes the
    run's from there, to the bits of a run that never left them (three
    classes, so that the two orders differ; with a budget, merged vectors
    among them, scaled by the loop)."""
    X, y = noisy_sample(n_samples=300, n_features=40, n_classes=3, random_state=5)
    X = sp.csr_matrix(np.where(np.abs(X) > 0.5, X, 0.0)) if sparse else X
    params = dict(random_state=0, budget=budget, gamma=0.02, shuffle=False)
    first = KernelPerceptron(**params)
    first.partial_fit(X[:200], y[:200], classes=np.unique(y))
    order = _class_order(first._run)
    assert not np.array_equal(order, np.arange(len(order)))
    assert first._run.rows is None
    assert (first._run.scaled is not None) == (budget is not None)
    dumped = pickle.dumps(first)
    # the support's rows and the values kept beside them (the run's
    # coefficients, averaging sums, function and accumulators, 4 x 3 values
    # a vector, dual_coef_, and after merges the scales and squared norms
    # of the rows, which the pickle holds unscaled) are well under two copies
    assert len(dumped) < 2 * len(pickle.dumps(first.support_vectors_))
    loaded = pickle.loads(dumped)
    vectors = [m.support_vectors_ for m in (first, loaded)]
    if sparse:
        assert_array_equal(vectors[0].indptr, vectors[1].indptr)
        assert_array_equal(vectors[0].indices, vectors[1].indices)
        vectors = [v.data for v in vectors]
    assert_array_equal(vectors[0].view(np.uint64), vectors[1].view(np.uint64))
    for model in (first, loaded):
        model.partial_fit(X[200:], y[200:])
    # one pass in one call: the run's rows never left it
    whole = KernelPerceptron(**params, max_iter=1, early_stopping=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        whole.fit(X, y)
    for model in (first, loaded):
        assert_array_equal(model.support_, whole.support_)
        assert_array_equal(model.dual_coef_, whole.dual_coef_)
        assert_array_equal(model.decision_function(X), whole.decision_function(X))


def test_inverse_dot_kernel():
    X = np.random.RandomState(15).uniform(-0.5, 0.5, size=(30, 3))
    K = inverse_dot_kernel(X, nu=0.9)
    assert_allclose(K, 1.0 / (1.0 - 0.9 * X @ X.T))
    assert_allclose(inverse_dot_kernel(X, X[:5]), 1.0 / (1.0 - X @ X[:5].T / 3))
    assert inverse_dot_kernel(X[0], X[1], nu=0.9) == pytest.approx(K[0, 1])
    # pairwise_kernels calls it as a callable on pairs of samples.
    assert_allclose(pairwise_kernels(X, metric=inverse_dot_kernel, nu=0.9), K)
    with pytest.raises(ValueError, match="undefined where nu <x, y> >= 1"):
        inverse_dot_kernel(X, nu=1 / (X**2).sum(axis=1).max())
    with pytest.raises(ValueError, match="nu"):
        inverse_dot_kernel(X, nu=-1.0)


def test_inverse_dot_kernel_in_the_perceptron():
    X, y = noisy_sample(n_samples=60, random_state=16)
    X = X / (2 * np.linalg.norm(X, axis=1).max())
    estimator = KernelPerceptron(kernel="inverse_dot", gamma=1.0, shuffle=False)
    estimator.fit(X, y)
    gram = KernelPerceptron(kernel="precomputed", shuffle=False)
    gram.fit(inverse_dot_kernel(X, nu=1.0), y)
    assert_allclose(estimator.dual_coef_, gram.dual_coef_)
    # With nu = 8 the sample leaves the ball of radius 1 / sqrt(nu): the
    # kernel is undefined at the longest example, found before training.
    with pytest.raises(ValueError, match="undefined"):
        KernelPerceptron(kernel="inverse_dot", gamma=8.0).fit(X, y)


def test_partial_fit_takes_dense_and_sparse_batches_in_any_order():
    X, y = make_classification(n_samples=120, n_features=5, random_state=0)
    # gamma="scale" would come from the first batch, 60 rows or 120
    whole = KernelPerceptron(shuffle=False, gamma="auto")
    whole.partial_fit(X, y, classes=[0, 1])
    for first, second in [(sp.csr_matrix, np.asarray), (np.asarray, sp.csr_matrix)]:
        mixed = KernelPerceptron(shuffle=False, gamma="auto")
        mixed.partial_fit(first(X[:60]), y[:60], classes=[0, 1])
        mixed.partial_fit(second(X[60:]), y[60:])
        assert_allclose(mixed.decision_function(X), whole.decision_function(X))


def test_tracemalloc_counts_the_column_cache():
    """The cache comes from malloc, not numpy: it must still be counted in
    the memory figures of the benchmark."""
    X, y = make_classification(n_samples=400, n_features=5, random_state=0)
    tracemalloc.start()
    try:
        KernelPerceptron(max_iter=3).fit(X, y)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak >= 400 * 400 * 8  # one column of 400 points for each point


@pytest.mark.parametrize("n_classes", [2, 3])
def test_class_weight_multiplies_the_updates_of_its_class(n_classes):
    X, y = noisy_sample(n_samples=90, n_classes=n_classes, random_state=21)
    class_weight = {0: 3.0, 1: 0.25, 2: 1.5}
    params = dict(gamma=0.5, beta="scale", random_state=0, max_iter=10)
    weighted = KernelPerceptron(class_weight=class_weight, **params).fit(X, y)
    explicit = KernelPerceptron(**params).fit(
        X, y, sample_weight=np.array([class_weight[label] for label in y])
    )
    assert_array_equal(weighted.dual_coef_, explicit.dual_coef_)
    assert_array_equal(weighted.support_, explicit.support_)
    plain = KernelPerceptron(**params).fit(X, y)
    assert not np.array_equal(plain.dual_coef_, weighted.dual_coef_)


def test_warm_start_continues_the_run():
    X, y = noisy_sample(n_samples=90, random_state=22)
    params = dict(gamma=0.5, beta="power", average=True, shuffle=False)
    once = KernelPerceptron(max_iter=4, **params).fit(X, y)
    twice = KernelPerceptron(max_iter=2, warm_start=True, **params).fit(X, y)
    twice.fit(X, y)
    # the second call's points are the support so far followed by X
    assert_array_equal(twice.n_updates_, once.n_updates_)
    assert_allclose(twice.decision_function(X), once.decision_function(X))
    with pytest.raises(ValueError, match="precomputed"):
        gram = X @ X.T
        clf = KernelPerceptron(kernel="precomputed", warm_start=True).fit(gram, y)
        clf.fit(gram, y)


def test_set_params_of_a_schedule_given_by_name():
    clf = KernelPerceptron(beta="power")
    with pytest.raises(ValueError, match="not a schedule object"):
        clf.set_params(beta__alpha=1.5)
    clf.set_params(beta=PowerThreshold(alpha=1.3)).set_params(beta__alpha=1.5)
    assert clf.beta.alpha == 1.5


@pytest.mark.parametrize("seed", range(5))
def test_the_defaults_end_slow_small_runs_by_a_rule(seed):
    # With the RBF kernel the standardized iris separates after some 350
    # to 400 epochs, and make_circles separates or the stopping rule ends
    # the run: the default max_iter lets both end so, as Perceptron's
    # does, without a ConvergenceWarning.
    X_iris, y_iris = load_iris(return_X_y=True)
    samples = {
        "separated": (StandardScaler().fit_transform(X_iris), y_iris),
        "any rule": make_circles(1000, noise=0.1, factor=0.5, random_state=seed),
    }
    for ending, (X, y) in samples.items():
        with warnings.catch_warnings():
            warnings.simplefilter("error", ConvergenceWarning)
            clf = KernelPerceptron(random_state=seed).fit(X, y)
        assert clf.stop_reason_ in ("separated", "no_improvement")
        if ending == "separated":
            assert clf.stop_reason_ == "separated"
            assert clf.n_iter_ > 100
            assert clf.score(X, y) == 1.0
