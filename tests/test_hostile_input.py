"""Hostile and odd input, for the estimators of tests/estimators.py.

Every input scikit-learn users send (dense and sparse containers, pandas
DataFrames, every dtype and memory layout, string and integer labels, two
classes and many, repeated points with conflicting labels, constant
features, magnitudes from 1e-300 to 1e150, one sample, no sample) either
gives the documented result or a clear ValueError or TypeError. Never a
crash, a hang, a NaN or inf in a fitted attribute or an output, or a change
to the caller's X and y.

The inputs are drawn by hypothesis; conftest.py sets how many.
"""

import faulthandler
import warnings

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from estimators import ESTIMATORS
from hypothesis import example, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.base import clone
from sklearn.utils import get_tags

# Non-separable samples (repeated points with conflicting labels) use up
# max_iter: that warning is the documented result.
pytestmark = pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")


def _configurations(first_and_last):
    """The configurations of ESTIMATORS, or the first and the last of each
    class, seeded, so that two fits on the same values make the same model."""
    by_class = {}
    for index, estimator in enumerate(ESTIMATORS):
        # A precomputed kernel takes a Gram matrix, not samples.
        if not get_tags(estimator).input_tags.pairwise:
            by_class.setdefault(type(estimator), []).append(index)
    chosen = []
    for indices in by_class.values():
        if first_and_last:
            indices = dict.fromkeys([indices[0], indices[-1]])
        for index in indices:
            estimator = clone(ESTIMATORS[index])
            if "random_state" in estimator.get_params():
                estimator.set_params(random_state=0)
            chosen.append(
                pytest.param(estimator, id=f"{type(estimator).__name__}[{index}]")
            )
    return chosen


CONFIGURATIONS = _configurations(first_and_last=True)
# Whether weights overflow depends on the threshold and the kernel: every
# configuration meets the magnitudes.
ALL_CONFIGURATIONS = _configurations(first_and_last=False)
ONLINE_CONFIGURATIONS = [
    param for param in CONFIGURATIONS if hasattr(param.values[0], "partial_fit")
]

# A test running this long per example has hung, likely inside a compiled
# loop, where Python's signals cannot stop it: faulthandler ends the run
# with a failing exit status (and the stacks, shown under pytest -s).
SECONDS_PER_EXAMPLE = 20


@pytest.fixture(autouse=True)
def exit_on_hang():
    faulthandler.dump_traceback_later(
        SECONDS_PER_EXAMPLE * (settings.default.max_examples + 1), exit=True
    )
    yield
    faulthandler.cancel_dump_traceback_later()


# --- The inputs -------------------------------------------------------------

# The values of each dtype; the floats include -0.0 and subnormals.
# Subnormal values can need weights beyond the float range, which the
# magnitudes test covers with the refusal it allows; these samples are
# ordinary in size.
ELEMENTS = {
    # Values whose products all underflow are refused, as documented
    # (test_huge_and_tiny_magnitudes): here they are 0.
    np.float64: st.floats(-1e3, 1e3, allow_subnormal=False).map(
        lambda value: value if abs(value) >= 1e-100 else 0.0
    ),
    np.float32: st.floats(-1e3, 1e3, width=32, allow_subnormal=False),
    np.int64: st.integers(-1000, 1000),
    np.uint8: st.integers(0, 255),
    np.bool_: st.booleans(),
}

LABELS = {
    "int": np.array([3, -1, 0, 7, 100]),
    "float": np.array([1.0, -2.0, 0.0, 7.0, 3.0]),
    "str": np.array(["spam", "eggs", "ham", "a", "Z"]),
    "object": np.array(["spam", "eggs", "ham", "a", "Z"], dtype=object),
}


@st.composite
def samples(draw, dtypes=tuple(ELEMENTS), min_classes=2, max_classes=4):
    """X of one dtype and y with every class at least twice (a class of one
    example has its own test); sometimes a repeated point with a conflicting
    label, sometimes a constant feature."""
    dtype = draw(st.sampled_from(dtypes))
    n_classes = draw(st.integers(min_classes, max_classes))
    n_samples = draw(st.integers(2 * n_classes, 16))
    n_features = draw(st.integers(1, 5))
    X = draw(arrays(dtype, (n_samples, n_features), elements=ELEMENTS[dtype]))
    codes = draw(arrays(np.intp, n_samples, elements=st.integers(0, n_classes - 1)))
    codes[: 2 * n_classes] = np.arange(2 * n_classes) % n_classes
    if draw(st.booleans()):
        X = np.vstack([X, X[:1]])
        codes = np.append(codes, (codes[0] + 1) % n_classes)
    if draw(st.booleans()):
        feature = draw(st.integers(0, n_features - 1))
        X[:, feature] = X[0, feature]
    order = np.array(draw(st.permutations(range(len(X)))))
    labels = LABELS[draw(st.sampled_from(list(LABELS)))][:n_classes]
    return X[order], labels[codes[order]]


def _strided_view(X):
    """X as a view of every other row and column of a larger array."""
    base = np.ones((2 * X.shape[0], 2 * X.shape[1]), dtype=X.dtype)
    base[::2, ::2] = X
    return base[::2, ::2]


def _data_frame(X):
    return pd.DataFrame(X, columns=[f"größe {j}" for j in range(X.shape[1])])


def _noncanonical_csr(X):
    """CSR storing every entry, zeros included, columns in reverse order."""
    n_samples, n_features = X.shape
    return sp.csr_matrix(
        (
            X[:, ::-1].ravel(),
            np.tile(np.arange(n_features)[::-1], n_samples),
            np.arange(0, X.size + 1, n_features),
        ),
        shape=X.shape,
    )


def _read_only(X):
    """X, or the arrays of a sparse X, read-only, as joblib's memory maps are."""
    for array in _arrays_of(X):
        array.flags.writeable = False
    return X


def _wide_index_csr(X):
    X = sp.csr_matrix(X)
    X.indices, X.indptr = X.indices.astype(np.int64), X.indptr.astype(np.int64)
    return X


def _odd_index_csr(X):
    """CSR whose index arrays are of two types: big-endian 32-bit column
    indices, a strided view, and native 64-bit row pointers."""
    X = sp.csr_matrix(X)
    indices = np.empty(2 * X.nnz, dtype=">i4")
    indices[::2] = X.indices
    X.indices, X.indptr = indices[::2], X.indptr.astype(np.int64)
    return X


DENSE_FORMATS = {
    "C": np.ascontiguousarray,
    "Fortran": np.asfortranarray,
    "strided view": _strided_view,
    "read-only": lambda X: _read_only(X.copy()),
    "DataFrame": _data_frame,
    "DataFrame, nullable dtypes": lambda X: _data_frame(X).convert_dtypes(),
}
SPARSE_FORMATS = {
    "CSR": sp.csr_matrix,
    "CSC array": sp.csc_array,
    "COO": sp.coo_matrix,
    "CSR, not canonical": _noncanonical_csr,
    "CSR, read-only": lambda X: _read_only(sp.csr_matrix(X)),
    "CSR, 64-bit indices": _wide_index_csr,
    "CSR, odd index arrays": _odd_index_csr,
}
FORMATS = {**DENSE_FORMATS, **SPARSE_FORMATS}

TARGETS = {
    "ndarray": np.asarray,
    "list": list,
    "Series": pd.Series,
    "Series, categorical": lambda y: pd.Series(y, dtype="category"),
}


def _refusal(estimator, X_format):
    """The error and message of scikit-learn's validation when the estimator
    does not take this format, or None when it does."""
    if X_format in SPARSE_FORMATS and not get_tags(estimator).input_tags.sparse:
        return TypeError, "dense data is required"
    return None


def _formats(estimator):
    """The formats the estimator takes."""
    return [f for f in FORMATS if _refusal(estimator, f) is None]


def _reference(X):
    """The C-ordered float64 array of X's values (float32 stays float32, as
    the estimators take it)."""
    dtype = np.float32 if X.dtype == np.float32 else np.float64
    return np.ascontiguousarray(X, dtype=dtype)


# --- The checks -------------------------------------------------------------


def _arrays_of(container):
    """The arrays that hold a container's values, and its names and index."""
    if isinstance(container, pd.DataFrame):
        return [
            container.columns.to_numpy(),
            container.index.to_numpy(),
            *(container.iloc[:, j].to_numpy() for j in range(container.shape[1])),
        ]
    if isinstance(container, pd.Series):
        return [container.index.to_numpy(), container.to_numpy()]
    if sp.issparse(container):
        if container.format == "coo":
            return [container.data, container.row, container.col]
        return [container.data, container.indices, container.indptr]
    if isinstance(container, np.ndarray):
        # a view's base holds the values around it
        return [container] if container.base is None else [container, container.base]
    return [np.array(container, dtype=object)]


def _snapshot(container):
    return [np.array(array, copy=True) for array in _arrays_of(container)]


def _assert_untouched(container, snapshot):
    """Every array of the container is bitwise what it was (object arrays,
    the labels: the same values of the same types)."""
    for now, before in zip(_arrays_of(container), snapshot, strict=True):
        assert now.dtype == before.dtype and now.shape == before.shape
        if now.dtype.kind == "O":
            assert [(type(v), v) for v in now.ravel()] == [
                (type(v), v) for v in before.ravel()
            ]
        else:
            assert now.tobytes() == before.tobytes()


def _assert_finite_model(estimator):
    """No NaN or inf in a fitted attribute (arrays, lists of arrays, floats)."""
    for name, value in vars(estimator).items():
        if not name.endswith("_") or name.startswith("_"):
            continue
        for item in value if isinstance(value, list) else [value]:
            if sp.issparse(item):
                item = item.data
            if isinstance(item, float | np.floating) or (
                isinstance(item, np.ndarray) and item.dtype.kind in "fc"
            ):
                assert np.isfinite(item).all(), f"{name} is not finite: {value}"


def _outputs(estimator, X):
    """predict and the score methods present, checked: classes from
    classes_, one row per sample, finite scores."""
    n_samples = X.shape[0]
    outputs = {"predict": estimator.predict(X)}
    assert outputs["predict"].shape == (n_samples,)
    assert np.isin(outputs["predict"], estimator.classes_).all()
    for method in ("decision_function", "predict_proba"):
        if hasattr(estimator, method):
            scores = getattr(estimator, method)(X)
            assert scores.shape[0] == n_samples
            assert np.isfinite(scores).all(), f"{method} is not finite: {scores}"
            outputs[method] = scores
    return outputs


def _tolerance(scores):
    """Rounding, in the scores' precision (float32 for a float32 network)."""
    return np.sqrt(np.finfo(scores.dtype).eps) * (1 + np.abs(scores).max(initial=0))


def _decided(scores):
    """The samples whose class the decision values settle beyond rounding."""
    tolerance = _tolerance(scores)
    if scores.ndim == 1:
        return np.abs(scores) > tolerance
    best_two = np.sort(scores, axis=1)[:, -2:]
    return best_two[:, 1] - best_two[:, 0] > tolerance


def _assert_same_outputs(got, expected):
    """Scores equal to rounding (the order of a sum depends on the memory
    layout), and the same classes where the scores are not tied to it."""
    decided = np.ones(len(expected["predict"]), dtype=bool)
    for method in set(expected) - {"predict"}:
        assert_allclose(got[method], expected[method], atol=_tolerance(got[method]))
        decided &= _decided(expected[method])
    assert_array_equal(got["predict"][decided], expected["predict"][decided])


def _fit(estimator, X, y):
    """Fit a clone of estimator, checking that X and y are left untouched."""
    saved = _snapshot(X), _snapshot(y)
    try:
        return clone(estimator).fit(X, y)
    finally:
        _assert_untouched(X, saved[0])
        _assert_untouched(y, saved[1])


# --- Containers, dtypes, layouts and labels ---------------------------------


@pytest.mark.parametrize("estimator", CONFIGURATIONS)
@given(data=st.data())
def test_any_container_fits_the_model_of_its_values(estimator, data):
    X, y = data.draw(samples(), label="sample")
    X_format = data.draw(st.sampled_from(list(FORMATS)), label="X format")
    y_format = data.draw(st.sampled_from(list(TARGETS)), label="y format")
    X_fit, y_fit = FORMATS[X_format](X), TARGETS[y_format](y)

    refusal = _refusal(estimator, X_format)
    if refusal is not None:
        error, match = refusal
        with pytest.raises(error, match=match):
            _fit(estimator, X_fit, y_fit)
        return
    model = _fit(estimator, X_fit, y_fit)
    _assert_finite_model(model)
    assert_array_equal(model.classes_, np.unique(y))
    if isinstance(X_fit, pd.DataFrame):
        assert_array_equal(model.feature_names_in_, X_fit.columns)
    else:
        assert not hasattr(model, "feature_names_in_")
    _outputs(model, X_fit)

    # Converting a dense container (or int, uint8, bool values) to the
    # C-ordered float array is exact: the same run, the same model, which
    # gives the same outputs, to the last bit, on the same array.
    if X_format in DENSE_FORMATS:
        if X_format == "DataFrame, nullable dtypes":
            # scikit-learn converts pandas' Float32 to float64
            X = X.astype(np.float64)
        reference = _fit(estimator, _reference(X), y)
        expected = _outputs(reference, _reference(X))
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", "X does not have valid feature names")
            outputs = _outputs(model, _reference(X))
        for method in expected:
            assert_array_equal(outputs[method], expected[method])


@pytest.mark.parametrize("estimator", CONFIGURATIONS)
@given(data=st.data())
def test_predictions_do_not_depend_on_the_container(estimator, data):
    X, y = data.draw(samples(), label="sample")
    model = _fit(estimator, _reference(X), y)
    expected = _outputs(model, _reference(X))
    # a model fitted without feature names is given no DataFrame
    X_format = data.draw(
        st.sampled_from([f for f in _formats(estimator) if "DataFrame" not in f]),
        label="X format",
    )
    X_predict = FORMATS[X_format](X)
    saved = _snapshot(X_predict)
    outputs = _outputs(model, X_predict)
    _assert_untouched(X_predict, saved)
    _assert_same_outputs(outputs, expected)


# --- Magnitudes -------------------------------------------------------------


@st.composite
def magnitudes(draw):
    """A sample whose values span 1e-300 to 1e150: values of at most 1 in
    magnitude, times one scale for the whole matrix or a scale for each
    entry."""
    X, y = draw(samples(dtypes=(np.float64,)))
    exponents = st.integers(-300, 150)
    if draw(st.booleans()):
        scale = 10.0 ** draw(exponents)
    else:
        scale = 10.0 ** draw(arrays(np.float64, X.shape, elements=exponents))
    return X / 1e3 * scale, y


@pytest.mark.parametrize("estimator", ALL_CONFIGURATIONS)
@given(sample=magnitudes())
# HiGHS read 1e15 as infinite, and called this sample not separable
@example(sample=(np.array([[1e15], [0.0], [2e15], [1.0]]), np.array([3, -1, 3, -1])))
# HiGHS's presolve failed on l1_margin costs spanning 10 orders of magnitude
@example(
    sample=(
        np.r_[[[-2.5e6, 4.3e9, 1e7]], np.full((4, 3), 1e7)],
        np.array([3, -1, 3, -1, 3]),
    )
)
# a degree-2 kernel's decision values near the largest double: finite in
# training, -inf when decision_function sums them in another order
@example(
    sample=(
        np.r_[[1.04e76, 3.67e76], np.full(13, 1.04e76)][:, None],
        np.array([3, -1, 3, -1] + [3] * 11),
    )
)
# a network's outputs overflowed after its last update
@example(sample=(np.array([[8e77], [8e-77], [8e-77], [8e-77]]), np.array([3, -1] * 2)))
# a network's training loss overflowed in one epoch and recovered
@example(
    sample=(
        np.r_[[[1e31, 0, 0, 0], [-1e31, 0, 0, 0]], np.zeros((7, 4))],
        np.array([3, -1, 0, 3, -1, 0, 3, 3, 3]),
    )
)
def test_huge_and_tiny_magnitudes(estimator, sample):
    X, y = sample
    try:
        model = _fit(estimator, X, y)
    except ValueError as error:
        # The documented refusals of weights that overflow and of inputs
        # whose products underflow: they name the cause and the remedy.
        assert "non-finite" in str(error) or "underflows" in str(error)
        return
    _assert_finite_model(model)
    try:
        _outputs(model, X)
    except ValueError as error:
        # Decision values beyond the float range, summed in another order
        # than in training, are refused as documented rather than returned.
        assert "non-finite" in str(error)


# --- partial_fit -------------------------------------------------------------


# Batches in a DataFrame mixed with arrays: scikit-learn warns, as it should.
@pytest.mark.filterwarnings("ignore:X has feature names")
@pytest.mark.filterwarnings("ignore:X does not have valid feature names")
@pytest.mark.parametrize("estimator", ONLINE_CONFIGURATIONS)
@given(data=st.data())
def test_partial_fit_batches_without_some_classes(estimator, data):
    """The first batch lacks a class; every batch comes in its own format."""
    X, y = data.draw(samples(min_classes=3, max_classes=5), label="sample")
    classes = np.unique(y)
    # the first batch: some of the examples not of the last class
    first = data.draw(
        st.sets(st.sampled_from(np.flatnonzero(y != classes[-1]).tolist()), min_size=1),
        label="first batch",
    )
    rest = np.setdiff1d(np.arange(len(y)), sorted(first))
    cut_after = data.draw(
        arrays(np.bool_, len(rest) - 1, elements=st.booleans()), label="cuts"
    )
    batches = [np.array(sorted(first)), *np.split(rest, 1 + np.flatnonzero(cut_after))]

    model = clone(estimator)
    for batch in batches:
        X_format = data.draw(st.sampled_from(_formats(estimator)), label="X format")
        y_format = data.draw(st.sampled_from(list(TARGETS)), label="y format")
        X_batch = FORMATS[X_format](X[batch])
        y_batch = TARGETS[y_format](y[batch])
        saved = _snapshot(X_batch), _snapshot(y_batch)
        try:
            model.partial_fit(X_batch, y_batch, classes=classes)
        except ValueError as error:
            # the documented refusal of a run's first values whose every
            # product underflows
            assert "underflows" in str(error)
            assert np.abs(X[batch]).max() < 1.5e-154
            return
        _assert_untouched(X_batch, saved[0])
        _assert_untouched(y_batch, saved[1])
        assert_array_equal(model.classes_, classes)
        _assert_finite_model(model)
        outputs = _outputs(model, _reference(X))
        assert outputs["decision_function"].shape == (len(y), len(classes))


# --- Edge cases a strategy adds nothing to ----------------------------------

RNG = np.random.RandomState(0)
X_TRAIN = RNG.uniform(-1, 1, (12, 3))
Y_TRAIN = np.array(["a", "b", "c"] * 4)


def _with(row, column, value):
    X = X_TRAIN.copy()
    X[row, column] = value
    return X


BAD_SAMPLES = {
    "no sample": (np.empty((0, 3)), Y_TRAIN[:0], "0 sample"),
    "no feature": (np.empty((12, 0)), Y_TRAIN, "0 feature"),
    "one sample": (X_TRAIN[:1], Y_TRAIN[:1], "at least 2 classes"),
    "one class": (X_TRAIN, np.full(12, "a"), "at least 2 classes"),
    "NaN": (_with(3, 1, np.nan), Y_TRAIN, "NaN"),
    "inf": (_with(0, 0, -np.inf), Y_TRAIN, "infinity"),
    "NaN label": (X_TRAIN, np.r_[np.nan, np.arange(11.0) % 3], "NaN"),
    "continuous labels": (X_TRAIN, np.linspace(0, 1, 12), "Unknown label type"),
    "labels of mixed types": (
        X_TRAIN,
        np.array([1, "a", 2] * 4, dtype=object),
        "Mix of label input types|Unknown label type",
    ),
    "2-D y": (X_TRAIN, np.c_[Y_TRAIN, Y_TRAIN], "1d array"),
    "1-D X": (X_TRAIN[:, 0], Y_TRAIN, "Expected 2D array"),
    "3-D X": (X_TRAIN[:, :, None], Y_TRAIN, "dim 3"),
    "complex X": (X_TRAIN + 1j, Y_TRAIN, "Complex data not supported"),
    "string X": (np.full((12, 3), "x", dtype=object), Y_TRAIN, "convert"),
    "too few labels": (X_TRAIN, Y_TRAIN[:-1], "inconsistent numbers of samples"),
}


@pytest.mark.parametrize("estimator", CONFIGURATIONS)
@pytest.mark.parametrize("case", list(BAD_SAMPLES))
def test_bad_sample_raises_a_clear_error(estimator, case):
    X, y, match = BAD_SAMPLES[case]
    with pytest.raises(ValueError, match=match):
        _fit(estimator, X, y)
    # one example, or examples of one class, make a batch like any other
    if hasattr(estimator, "partial_fit") and case not in ("one sample", "one class"):
        with pytest.raises(ValueError, match=match):
            clone(estimator).partial_fit(X, y, classes=np.unique(Y_TRAIN))


BAD_LATER_LABELS = {
    "continuous labels": (np.linspace(0, 1, 12), "not in classes|Unknown label type"),
    "integer labels": (np.arange(12) % 3, "not in classes"),
    "a new label": (np.array(["a", "b", "d"] * 4), r"labels \['d'\] that are not"),
    "None labels": (np.array([None] * 12, dtype=object), "Unknown label type"),
    "labels of mixed types": (
        np.array([1, "a", 2] * 4, dtype=object),
        "Mix of label input types|Unknown label type",
    ),
}


@pytest.mark.parametrize("estimator", ONLINE_CONFIGURATIONS)
@pytest.mark.parametrize("case", list(BAD_LATER_LABELS))
def test_later_partial_fit_refuses_labels_of_no_class_before_any_work(estimator, case):
    # later calls check labels against the first call's classes, not their
    # type; object labels, which need a check to be sorted, get it
    y, match = BAD_LATER_LABELS[case]
    model = clone(estimator).partial_fit(X_TRAIN, Y_TRAIN, classes=["a", "b", "c"])
    before = _outputs(model, X_TRAIN)
    # NumPy before 1.25 warns on comparing string classes with numbers
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)
        with pytest.raises(ValueError, match=match):
            model.partial_fit(X_TRAIN, y)
        with pytest.raises(ValueError, match=match):
            model.partial_fit(
                X_TRAIN, y, classes=np.array(["a", "b", "c"], dtype=object)
            )
        with pytest.raises(ValueError, match="is not the same as on the first"):
            model.partial_fit(X_TRAIN, Y_TRAIN, classes=[0, 1, 2])
    after = _outputs(model, X_TRAIN)
    for method, values in before.items():
        assert_array_equal(after[method], values)


WARM_CONFIGURATIONS = [
    param for param in CONFIGURATIONS if "warm_start" in param.values[0].get_params()
]


@pytest.mark.parametrize("estimator", WARM_CONFIGURATIONS)
@pytest.mark.parametrize("labels", [np.arange(12) % 3, np.array(["a", "b", "d"] * 4)])
def test_warm_start_refuses_other_classes_before_any_work(estimator, labels):
    model = _fit(clone(estimator).set_params(warm_start=True), X_TRAIN, Y_TRAIN)
    before = _outputs(model, X_TRAIN)
    # NumPy before 1.25 warns on comparing string classes with numbers
    with warnings.catch_warnings():
        warnings.simplefilter("error", FutureWarning)
        with pytest.raises(ValueError, match="needs the same classes"):
            model.fit(X_TRAIN, labels)
    after = _outputs(model, X_TRAIN)
    for method, values in before.items():
        assert_array_equal(after[method], values)


@pytest.mark.parametrize("estimator", CONFIGURATIONS)
def test_a_class_of_one_example(estimator):
    y = Y_TRAIN.copy()
    y[5] = "d"
    model = clone(estimator)
    if estimator.get_params().get("early_stopping") is True:
        # the stratified validation split needs two examples of each class
        with pytest.raises(ValueError, match="early_stopping=True"):
            model.fit(X_TRAIN, y)
        assert not hasattr(model, "classes_")
        return
    model.fit(X_TRAIN, y)
    _assert_finite_model(model)
    assert_array_equal(model.classes_, ["a", "b", "c", "d"])
    _outputs(model, X_TRAIN)


@pytest.mark.parametrize("estimator", CONFIGURATIONS)
def test_predict_on_one_sample_and_on_none(estimator):
    model = _fit(estimator, X_TRAIN, Y_TRAIN)
    one = _outputs(model, X_TRAIN[4:5])
    assert_array_equal(one["predict"], model.predict(X_TRAIN)[4:5])
    for X, match in [
        (np.empty((0, 3)), "0 sample"),
        (X_TRAIN[:, :2], "3 features"),
        (_with(2, 2, np.nan), "NaN"),
    ]:
        with pytest.raises(ValueError, match=match):
            model.predict(X)


@pytest.mark.parametrize("estimator", ONLINE_CONFIGURATIONS)
def test_partial_fit_on_one_sample(estimator):
    """One example of one class is a batch like any other."""
    model = clone(estimator)
    model.partial_fit(X_TRAIN[:1], Y_TRAIN[:1], classes=np.unique(Y_TRAIN))
    _assert_finite_model(model)
    _outputs(model, X_TRAIN)
    model.partial_fit(X_TRAIN[1:2], Y_TRAIN[1:2])
    _assert_finite_model(model)
    _outputs(model, X_TRAIN)


# --- Features and examples of very different magnitudes ----------------------


@st.composite
def separable_magnitudes(draw):
    """A sample separated through the origin with margin, then each column
    scaled by its own power of 10 in 1e-8..1e8 and some rows by up to 1e12,
    which keeps it separable (by w_j / scale_j)."""
    rng = np.random.RandomState(draw(st.integers(0, 2**32 - 1)))
    n_samples, n_features = draw(st.integers(4, 60)), draw(st.integers(1, 5))
    coef = rng.standard_normal(n_features)
    X = rng.standard_normal((n_samples, n_features))
    # push every example at least 0.1 away from the hyperplane
    along = X @ coef / (coef @ coef)
    X += np.outer(np.sign(along) * 0.1 + (along == 0) * 0.1, coef)
    y = (X @ coef > 0).astype(int)
    y[:2] = [0, 1]
    X[:2] = np.outer([-1.0, 1.0], coef)
    X = X * 10.0 ** draw(arrays(np.float64, n_features, elements=st.integers(-8, 8)))
    rows = draw(st.lists(st.integers(0, n_samples - 1), max_size=3))
    X[rows] *= 10.0 ** draw(st.integers(0, 12))
    return X, y


@pytest.mark.parametrize(
    "params",
    [{}, {"objective": "l1_margin"}, {"C": 1.0}],
    ids=["feasibility", "l1_margin", "C=1.0"],
)
@given(sample=separable_magnitudes())
def test_linear_program_separates_at_any_magnitudes(params, sample):
    """HiGHS drops entries below 1e-9 of the largest: one scale for the
    whole matrix called such samples not separable."""
    from skperc import LinearProgramClassifier

    X, y = sample
    clf = LinearProgramClassifier(**params).fit(X, y)
    assert clf.score(X, y) == 1.0


# --- The metrics at extreme scales -------------------------------------------


@given(
    seed=st.integers(0, 2**32 - 1),
    exponent=st.integers(-200, 200),
    alpha=st.floats(1.01, 1.99),
)
def test_metrics_are_scale_free(seed, exponent, alpha):
    """A separable sample at any scale from 1e-200 to 1e200: its optimal
    margin, its radius and the bounds scale with it, and the margin of any
    scale of the weights is that of their direction."""
    from skperc.datasets import make_margin_classification
    from skperc.metrics import margin, optimal_margin, perceptron_bounds

    rng = np.random.RandomState(seed)
    true_margin = 10 ** rng.uniform(-4, -0.5)
    X, y = make_margin_classification(
        rng.randint(3, 60), rng.randint(2, 6), margin=true_margin, random_state=seed
    )
    scale = 10.0**exponent
    eps, coef = optimal_margin(X * scale, y)
    assert eps == pytest.approx(true_margin * scale, rel=1e-9)
    assert margin(coef * 10.0**-exponent, X * scale, y) == pytest.approx(eps)
    bounds = perceptron_bounds(X * scale, y, beta="power", alpha=alpha)
    reference = perceptron_bounds(X, y, beta="power", alpha=alpha)
    assert bounds.radius == pytest.approx(scale, rel=1e-9)
    assert bounds.max_updates == pytest.approx(reference.max_updates, rel=1e-9)
    assert bounds.min_margin == pytest.approx(reference.min_margin * scale, rel=1e-9)


@given(
    n_samples=st.integers(1, 10**12),
    fraction=st.floats(0, 1),
    delta=st.floats(5e-324, 1, exclude_max=True),
    training_error=st.floats(0, 1),
)
def test_compression_bound_is_a_number(n_samples, fraction, delta, training_error):
    from skperc.metrics import compression_bound

    d = int(fraction * n_samples)
    bound = compression_bound(n_samples, d, delta, training_error=training_error)
    assert np.isfinite(bound) and bound >= training_error


# ----------------------------------------------------------------------------
# Malformed CSR: a column index outside the declared shape. SciPy builds such
# a matrix without complaint; scikit-learn's Perceptron segfaults on it. Every
# estimator refuses it, in fit and in prediction, before reading it.


def _malformed_csr(bad_index):
    return sp.csr_matrix(
        (np.ones(4), np.array([0, bad_index, 1, 2]), np.array([0, 2, 4])),
        shape=(2, 5),
    )


@pytest.mark.parametrize(
    "malformed", [10**7, -1, "decreasing indptr", "short indptr", "indptr past data"]
)
@pytest.mark.parametrize("estimator", ESTIMATORS, ids=repr)
def test_malformed_csr_is_refused(estimator, malformed):
    if not estimator.__sklearn_tags__().input_tags.sparse:
        pytest.skip("the estimator refuses sparse input altogether")
    if malformed == "decreasing indptr":
        X = sp.csr_matrix(
            (np.ones(4), np.array([0, 1, 2, 3]), np.array([0, 3, 1, 4])),
            shape=(3, 5),
        )
    elif malformed == "short indptr":
        X = _malformed_csr(1)
        X.indptr = X.indptr[:-1]
    elif malformed == "indptr past data":
        X = _malformed_csr(1)
        X.indptr = np.array([0, 2, 5])
    else:
        X = _malformed_csr(malformed)
    y = np.arange(X.shape[0]) % 2
    with pytest.raises(ValueError, match="malformed"):
        clone(estimator).fit(X, y)
    good = sp.csr_matrix(np.eye(5)[[0, 1, 2, 3]] + 0.5)
    fitted = clone(estimator).fit(good, [0, 1, 0, 1])
    with pytest.raises(ValueError, match="malformed"):
        fitted.predict(X)


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=repr)
def test_sparse_input_of_64_bit_indices_is_taken(estimator):
    """KernelPerceptron refused it, pointing at scikit-learn, whose sparse
    Manhattan distances take 32-bit indices only."""
    if not estimator.__sklearn_tags__().input_tags.sparse:
        pytest.skip("the estimator refuses sparse input altogether")
    X = np.random.RandomState(0).rand(50, 4)
    y = np.arange(50) % 2
    seeded = clone(estimator)
    if "random_state" in seeded.get_params():
        seeded.set_params(random_state=0)
    wide = clone(seeded).fit(_wide_index_csr(X), y)
    narrow = clone(seeded).fit(sp.csr_matrix(X), y)
    np.testing.assert_array_equal(wide.predict(_wide_index_csr(X)), narrow.predict(X))


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=repr)
def test_csr_input_of_odd_index_arrays_is_taken_as_it_is(estimator):
    """Index arrays of two types, one big-endian and strided, give the model
    and predictions of plain CSR input, and stay as they were: SciPy's
    check of the structure, which the estimators ran before, converted them
    in the caller's matrix, and a strided one was refused."""
    if not estimator.__sklearn_tags__().input_tags.sparse:
        pytest.skip("the estimator refuses sparse input altogether")
    rng = np.random.RandomState(0)
    X = rng.rand(50, 6) * (rng.rand(50, 6) < 0.5)
    y = np.arange(50) % 2
    seeded = clone(estimator)
    if "random_state" in seeded.get_params():
        seeded.set_params(random_state=0)
    odd = _odd_index_csr(X)
    before = _snapshot(odd)
    fitted = clone(seeded).fit(odd, y)
    plain = clone(seeded).fit(sp.csr_matrix(X), y)
    assert_array_equal(fitted.predict(odd), plain.predict(X))
    _assert_untouched(odd, before)
