"""The ONNX graphs of skperc.onnx, run in onnxruntime, give the labels of
predict and the decision values of decision_function."""

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.base import clone
from sklearn.datasets import load_breast_cancer, load_digits, load_iris, load_wine
from sklearn.exceptions import ConvergenceWarning, NotFittedError
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import MaxAbsScaler, StandardScaler

from skperc import (
    HalvingClassifier,
    KernelPerceptron,
    LinearProgramClassifier,
    MarginMLPClassifier,
    MarginPerceptron,
)
from skperc.concepts import DecisionStumps
from skperc.distributed import ParameterMixingClassifier
from skperc.schedules import ConstantThreshold, RelativeThreshold

REASON = "the ONNX export needs the extra onnx: pip install -e '.[onnx]'"
skl2onnx = pytest.importorskip("skl2onnx", reason=REASON)
onnxruntime = pytest.importorskip("onnxruntime", reason=REASON)
import skperc.onnx  # noqa: E402, F401  (registers the converters)

DTYPES = [np.float64, np.float32]


def _binary():
    X, y = load_breast_cancer(return_X_y=True)
    return X[::2], y[::2]


def _multiclass():
    return load_wine(return_X_y=True)


def _iris_strings():
    X, y = load_iris(return_X_y=True)
    return X, np.array(["setosa", "versicolor", "virginica"])[y]


def _binary_strings():
    X, y = _binary()
    return X, np.array(["benign", "malignant"], dtype=object)[1 - y]


def _signed_labels():
    X, y = _multiclass()
    return X, np.array([-5, 3, 7])[y]


# (estimator, data, scaler): every configuration runs in a pipeline
# after the scaler. The chi2 kernels and inverse_dot need non-negative or
# small inputs: MaxAbsScaler on the non-negative data gives both.
CASES = [
    (MarginPerceptron(random_state=0), _binary, StandardScaler),
    (MarginPerceptron(beta="scale", average=True, random_state=0), _multiclass, None),
    (MarginPerceptron(beta="power", random_state=0), _iris_strings, None),
    (
        MarginPerceptron(beta=1.0, fit_intercept=False, shuffle=False),
        _signed_labels,
        None,
    ),
    (MarginPerceptron(beta=0.5, average=True, random_state=0), _binary_strings, None),
    (ParameterMixingClassifier(MarginPerceptron(random_state=0)), _binary, None),
    (
        ParameterMixingClassifier(
            MarginPerceptron(beta="scale", average=True, random_state=0), n_shards=3
        ),
        _iris_strings,
        None,
    ),
    (LinearProgramClassifier(C=1.0), _binary, None),
    (LinearProgramClassifier(objective="l1_margin", C=10.0), _iris_strings, None),
    (LinearProgramClassifier(C=0.5, fit_intercept=False), _multiclass, None),
    (KernelPerceptron(random_state=0, max_iter=10), _binary, None),
    (
        KernelPerceptron(kernel="linear", average=True, random_state=0),
        _multiclass,
        None,
    ),
    (
        KernelPerceptron(kernel="poly", degree=2, gamma=0.5, random_state=0),
        _iris_strings,
        None,
    ),
    (KernelPerceptron(kernel="poly", beta="scale", max_iter=10), _binary_strings, None),
    (KernelPerceptron(kernel="sigmoid", gamma=0.01, max_iter=5), _binary, None),
    (KernelPerceptron(kernel="rbf", budget=15, max_iter=5), _signed_labels, None),
    (
        KernelPerceptron(kernel="rbf", budget=10, average=True, max_iter=5),
        _binary,
        None,
    ),
    (KernelPerceptron(kernel="laplacian", beta="power", max_iter=5), _multiclass, None),
    (KernelPerceptron(kernel="cosine", random_state=0, max_iter=10), _binary, None),
    (KernelPerceptron(kernel="chi2", max_iter=5), _multiclass, MaxAbsScaler),
    (KernelPerceptron(kernel="additive_chi2", max_iter=5), _iris_strings, MaxAbsScaler),
    (
        KernelPerceptron(kernel="inverse_dot", gamma=0.01, max_iter=5),
        _binary,
        MaxAbsScaler,
    ),
    (MarginMLPClassifier((8,), max_iter=30, random_state=0), _binary, None),
    (
        MarginMLPClassifier((8, 4), beta="power", max_iter=30, random_state=0),
        _iris_strings,
        None,
    ),
    (
        MarginMLPClassifier((16,), beta=0.0, max_iter=30, random_state=0),
        _multiclass,
        None,
    ),
    (
        MarginMLPClassifier(
            (8,), hidden_beta=ConstantThreshold(1.0), max_iter=30, random_state=0
        ),
        _binary,
        None,
    ),
    (
        MarginMLPClassifier(
            (8, 4),
            hidden_beta=RelativeThreshold(0.5),
            max_iter=30,
            random_state=0,
        ),
        _iris_strings,
        None,
    ),
    (HalvingClassifier(), _binary, None),
    (HalvingClassifier(), _iris_strings, None),
    (HalvingClassifier(), _signed_labels, None),
]


def _case_id(case):
    estimator, data, _ = case
    return f"{estimator!r}-{data.__name__}".replace(" ", "").replace("\n", "")


def _session(model, X, options=None):
    onx = skl2onnx.to_onnx(model, X[:1], options=options)
    return onnxruntime.InferenceSession(
        onx.SerializeToString(), providers=["CPUExecutionProvider"]
    )


def _run(model, X, options=None):
    """The label and decision value outputs of model's graph on X (converted
    with skl2onnx's options)."""
    session = _session(model, X, options)
    labels, scores = session.run(None, {session.get_inputs()[0].name: X})
    return labels, scores


def _expected_scores(model, X):
    """decision_function as the graph gives it: [-f, f] for a binary problem."""
    scores = model.decision_function(X)
    return np.column_stack([-scores, scores]) if scores.ndim == 1 else scores


def _assert_same_as_estimator(model, X, options=None):
    labels, scores = _run(model, X, options)
    assert_array_equal(labels, model.predict(X))
    expected = _expected_scores(model, X)
    assert scores.dtype == X.dtype
    assert scores.shape == expected.shape
    # float32 output is decision_function rounded to float32 (after a float32
    # scaler, which skl2onnx rounds in its own way); float64 output differs
    # by the order of the graph's sums, relative to the largest value (the
    # kernel sums cancel)
    relative = 4 * np.finfo(np.float32).eps if X.dtype == np.float32 else 1e-11
    tolerance = relative * max(np.abs(expected).max(), 1e-300)
    assert_allclose(scores, expected, rtol=0, atol=tolerance)


def _fitted_pipeline(estimator, data, scaler, dtype):
    X, y = data()
    model = make_pipeline((scaler or StandardScaler)(), clone(estimator))
    with warnings.catch_warnings():
        # a few epochs keep the tests fast; the graph needs no convergence
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(X.astype(dtype), y)
    return model, X.astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", CASES, ids=_case_id)
def test_pipeline_in_onnxruntime_gives_predict_and_decision_function(case, dtype):
    model, X = _fitted_pipeline(*case, dtype)
    _assert_same_as_estimator(model, X)
    # data the model was not fitted on: spread beyond the training range
    rng = np.random.RandomState(0)
    X_new = (X.mean(axis=0) + 2 * X.std(axis=0) * rng.randn(50, X.shape[1])).astype(
        dtype
    )
    if case[2] is MaxAbsScaler:
        X_new = np.abs(X_new)
    _assert_same_as_estimator(model, X_new)


# one of each estimator of weights, by its defaults (a few epochs of the
# network)
WEIGHTED = [
    MarginPerceptron(random_state=0),
    KernelPerceptron(random_state=0),
    LinearProgramClassifier(C=1.0),
    MarginMLPClassifier((16,), max_iter=30, random_state=0),
]


@pytest.mark.parametrize("scaler", [StandardScaler, MaxAbsScaler])
@pytest.mark.parametrize(
    "estimator",
    WEIGHTED + [HalvingClassifier()],
    ids=lambda estimator: type(estimator).__name__,
)
def test_float32_pipeline_divides_as_scikit_learn_with_the_div_option(
    estimator, scaler
):
    # Integer features (pixel values 0 to 16): the stump thresholds lie on
    # values of the data, and a scaled value one float32 step off crosses
    # them. skl2onnx's float32 scaler multiplies by 1 / scale by default
    # (9 of these 599 labels of HalvingClassifier after StandardScaler
    # differ then); with {"div": "div"} it divides, as scikit-learn does.
    X, y = load_digits(return_X_y=True)
    X, y = X[::3].astype(np.float32), y[::3]
    model = make_pipeline(scaler(), clone(estimator))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(X, y)
    options = {scaler: {"div": "div"}}
    session = _session(model[0], X, options)
    scaled = session.run(None, {session.get_inputs()[0].name: X})[0]
    assert_array_equal(scaled, model[0].transform(X))
    _assert_same_as_estimator(model, X, options)


@pytest.mark.parametrize("dtype", DTYPES)
def test_mlp_trained_in_float32(dtype):
    X, y = _multiclass()
    model = make_pipeline(
        StandardScaler(), MarginMLPClassifier((8,), max_iter=30, random_state=0)
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(X.astype(np.float32), y)
    assert model[-1].coefs_[0].dtype == np.float32
    _assert_same_as_estimator(model, X.astype(dtype))


def _zero_decision_models():
    """Fitted binary models with a sample whose decision value is exactly 0."""
    X, y = _binary()
    X = StandardScaler().fit_transform(X)
    origin = np.zeros((1, X.shape[1]))
    models = [
        (MarginPerceptron(fit_intercept=False, random_state=0).fit(X, y), origin),
        (LinearProgramClassifier(fit_intercept=False, C=1.0).fit(X, y), origin),
        (KernelPerceptron(kernel="linear", random_state=0).fit(X, y), origin),
    ]
    # an output layer of zero weights: every output is 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        mlp = MarginMLPClassifier((4,), max_iter=5, random_state=0).fit(X, y)
    mlp.coefs_[-1][:] = 0.0
    mlp.intercepts_[-1][:] = 0.0
    models.append((mlp, X[:5]))
    # two features, each separating the two examples: on (1, 0) the two
    # stumps of the version space disagree, a tied vote
    halving = HalvingClassifier().fit([[0.0, 0.0], [1.0, 1.0]], ["no", "yes"])
    models.append((halving, np.array([[1.0, 0.0], [0.0, 1.0]])))
    return models


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "model, X", _zero_decision_models(), ids=lambda value: type(value).__name__
)
def test_zero_decision_value_gives_the_second_class(model, X, dtype):
    X = X.astype(dtype)
    assert_array_equal(model.decision_function(X), 0.0)
    labels, scores = _run(model, X)
    assert_array_equal(scores, 0.0)
    assert_array_equal(labels, model.classes_[1])
    assert_array_equal(labels, model.predict(X))


def _scattered_counts(n_samples, n_features, seed):
    """CSR counts in [0, 1], 8 a row, on 240 of n_features columns, and
    labels that depend on them."""
    rng = np.random.RandomState(seed)
    in_use = rng.choice(n_features, 240, replace=False)
    columns = in_use[rng.randint(240, size=(n_samples, 8))]
    values = rng.randint(1, 5, size=(n_samples, 8)) / 4.0
    X = sp.csr_matrix(
        (values.ravel(), columns.ravel(), np.arange(0, 8 * n_samples + 1, 8)),
        shape=(n_samples, n_features),
    )
    X.sum_duplicates()
    y = (X[:, in_use[:120]].sum(axis=1).A1 > X[:, in_use[120:]].sum(axis=1).A1).astype(
        int
    )
    return X, y


# the named kernels that take CSR input (scikit-learn's chi2 kernels take
# dense arrays alone)
KERNEL_PARAMS = {
    "linear": {},
    "poly": {},
    "rbf": {},
    "sigmoid": {"gamma": 0.01},
    "cosine": {},
    "inverse_dot": {"gamma": 0.01},
    "laplacian": {},
}


@pytest.mark.parametrize(
    "kernel, budget",
    [(kernel, None) for kernel in KERNEL_PARAMS] + [("rbf", 25), ("linear", 25)],
)
def test_csr_support_converts_on_the_columns_it_uses(kernel, budget):
    # 4,000 columns of which the support uses at most 240: the kernels of
    # products read the input there alone, and the graph holds the support
    # on those columns; the others compare every column. A budget merges
    # (rbf) or projects (linear) the rows of its support.
    X, y = _scattered_counts(150, 4_000, 0)
    model = KernelPerceptron(
        kernel=kernel,
        budget=budget,
        max_iter=5,
        random_state=0,
        **KERNEL_PARAMS[kernel],
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(X, y)
    n_support = len(model.support_)
    assert sp.issparse(model.support_vectors_) and n_support > 20
    for rows in (X, _scattered_counts(50, 4_000, 1)[0]):
        _assert_same_as_estimator(model, rows.toarray())
    size = skl2onnx.to_onnx(model, X[:1].toarray()).ByteSize()
    dense_support = 8 * n_support * X.shape[1]
    if kernel in skperc.onnx._PRODUCT_KERNELS:
        assert size < min(8 * n_support * 240 + 10_000, dense_support / 10)
    else:
        assert size > dense_support


def test_cosine_support_vector_of_tiny_norm_converts_to_its_direction():
    """The cosine kernel divides a row by its norm however small (0 at a
    row of zeros): the graph holds the support so, not as scikit-learn's
    normalize, which leaves a row of norm below 10 machine epsilons as it
    is."""
    X, y = _binary()
    X = X.copy()
    X[0] *= 1e-20
    model = KernelPerceptron(kernel="cosine", shuffle=False, max_iter=5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(X, y)
    # the first example visited updates the zero function
    assert 0 in model.support_
    _assert_same_as_estimator(model, X)


def test_cosine_rows_and_support_vectors_whose_squares_underflow_have_value_0():
    """A norm whose squares all underflow is 0, and the cosine kernel is 0
    at a row or support vector of norm 0: the graph gives those values 0,
    not the products over a norm replaced by 1, which would decide the
    labels of rows where every other value is 0."""
    X = np.array([[1e-170, 0.0], [0.0, 1.0]])
    model = KernelPerceptron(kernel="cosine", shuffle=False, max_iter=5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(X, [0, 1])
    # the first support vector's norm is 0; [1, 0] is orthogonal to the
    # second, and [2e-170, -1e-170] a row of norm 0
    assert_array_equal(model.support_, [0, 1])
    rows = np.array([[1.0, 0.0], [2e-170, -1e-170], [2.0, 1.0]])
    assert_array_equal(model.decision_function(rows)[:2], 0.0)
    assert_array_equal(model.predict(rows)[:2], 1)
    _assert_same_as_estimator(model, rows)


def test_rbf_rows_far_from_every_support_vector_have_value_0():
    """KernelPerceptron's exponential is 0 below -707: a row that far from
    every support vector has the decision value 0 and the label
    classes_[1], in the graph too (onnxruntime's exponential is a
    subnormal number there, of either sign once weighted)."""
    X = np.array([[0.0], [1.0]])
    model = KernelPerceptron(gamma=1.0, shuffle=False).fit(X, [0, 1])
    rows = np.array([[-np.sqrt(720.0)], [np.sqrt(720.0) + 1.0], [0.25]])
    assert_array_equal(model.decision_function(rows)[:2], 0.0)
    assert_array_equal(model.predict(rows)[:2], 1)
    _assert_same_as_estimator(model, rows)


@pytest.mark.parametrize(
    "estimator", [MarginPerceptron(), KernelPerceptron(max_iter=5)]
)
def test_binary_models_need_opset_12(estimator):
    """A binary model's labels take GreaterOrEqual (opset 12): an earlier
    target_opset is refused in words; a multiclass model converts there."""
    X, y = _binary()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        binary = clone(estimator).fit(X, y)
        multiclass = clone(estimator).fit(*_multiclass())
    with pytest.raises(ValueError, match="from target_opset 12 on"):
        skl2onnx.to_onnx(binary, X[:1], target_opset=11)
    skl2onnx.to_onnx(binary, X[:1], target_opset=12)
    skl2onnx.to_onnx(multiclass, _multiclass()[0][:1], target_opset=11)


def _fitted_on_the_digits(estimator):
    X, y = load_digits(return_X_y=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return clone(estimator).fit(X[::4] / 16.0, y[::4])


def _weight_count(model):
    """The number of values of the weights that the model's graph holds:
    its support vectors, linear weights or layers."""
    if isinstance(model, KernelPerceptron):
        return model.support_vectors_.size
    if isinstance(model, MarginMLPClassifier):
        return sum(coef.size for coef in model.coefs_)
    return model.coef_.size


@pytest.mark.parametrize(
    "estimator",
    WEIGHTED + [ParameterMixingClassifier()],
    ids=lambda estimator: type(estimator).__name__,
)
def test_weights_are_written_from_their_bytes(estimator):
    # skl2onnx writes an array that an operator takes as input value by
    # value, which made converting large models three times slower
    model = _fitted_on_the_digits(estimator)
    graph = skl2onnx.to_onnx(model, np.zeros((1, 64))).graph
    written = {True: 0, False: 0}
    for tensor in graph.initializer:
        written[bool(tensor.raw_data)] += int(np.prod(tensor.dims))
    assert written[True] >= _weight_count(model)
    assert written[False] < 64


@pytest.mark.parametrize(
    "estimator",
    WEIGHTED + [ParameterMixingClassifier()],
    ids=lambda estimator: type(estimator).__name__,
)
def test_a_model_past_what_protobuf_serializes_is_refused(estimator, monkeypatch):
    # the limit lowered to the bytes of the model's weights refuses it; one
    # byte more converts it
    model = _fitted_on_the_digits(estimator)
    X = np.zeros((1, 64))
    weights = _weight_count(model)
    monkeypatch.setattr(skperc.onnx, "_PROTOBUF_LIMIT", 8 * weights + 1)
    skl2onnx.to_onnx(model, X)
    monkeypatch.setattr(skperc.onnx, "_PROTOBUF_LIMIT", 8 * weights)
    with pytest.raises(ValueError, match="less than 2 GiB.*Pickle"):
        skl2onnx.to_onnx(model, X)


class _StrictStumps(DecisionStumps):
    """Stumps of strict inequalities, x > theta: a vote of them is no vote
    of DecisionStumps' x >= theta."""

    def _predict_concepts(self, X, indices):
        feature, sign, threshold = self.stump_parameters(indices)
        values = X[:, feature]
        positive = np.where(sign > 0, values > threshold, values < threshold)
        return np.where(positive, 1, -1).astype(np.int8)


class _OppositeStumps(DecisionStumps):
    """Stumps whose parameters say the other sign: no vote of the stumps
    that DecisionStumps' thresholds give."""

    def stump_parameters(self, indices=None):
        feature, sign, threshold = super().stump_parameters(indices)
        return feature, -sign, threshold


@pytest.mark.parametrize(
    "estimator, message",
    [
        (KernelPerceptron(kernel=lambda x, y: float(x @ y)), "a Python callable"),
        (KernelPerceptron(kernel="precomputed"), "'precomputed'"),
        (HalvingClassifier(randomized=True, random_state=0), "randomized=True"),
        (HalvingClassifier(concepts="conjunctions"), "Conjunctions"),
        (HalvingClassifier(concepts=_StrictStumps()), "_StrictStumps"),
        (HalvingClassifier(concepts=_OppositeStumps()), "_OppositeStumps"),
    ],
    ids=[
        "callable",
        "precomputed",
        "randomized",
        "conjunctions",
        "stump subclass",
        "stump parameters",
    ],
)
def test_unconvertible_models_raise(estimator, message):
    rng = np.random.RandomState(0)
    X = rng.randint(2, size=(30, 3)).astype(np.float64)
    y = X[:, 0].astype(int)
    if estimator.get_params().get("kernel") == "precomputed":
        X = X @ X.T
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        estimator.fit(X, y)
    with pytest.raises(ValueError, match=message):
        skl2onnx.to_onnx(estimator, X[:1])


@pytest.mark.parametrize(
    "estimator",
    [
        MarginPerceptron(),
        LinearProgramClassifier(),
        KernelPerceptron(),
        MarginMLPClassifier(),
        HalvingClassifier(),
        ParameterMixingClassifier(),
    ],
    ids=lambda estimator: type(estimator).__name__,
)
def test_unfitted_models_raise_not_fitted(estimator):
    with pytest.raises(NotFittedError):
        skl2onnx.to_onnx(estimator, np.zeros((1, 3)))


def test_integral_float_and_boolean_labels_become_int64():
    X, y = _binary()
    X = StandardScaler().fit_transform(X)
    for labels in (y.astype(np.float64), y.astype(bool)):
        clf = MarginPerceptron(random_state=0).fit(X, labels)
        onnx_labels, _ = _run(clf, X)
        assert onnx_labels.dtype == np.int64
        assert_array_equal(onnx_labels, clf.predict(X).astype(np.int64))


def test_nocl_gives_class_indices():
    X, y = _iris_strings()
    clf = make_pipeline(StandardScaler(), HalvingClassifier()).fit(X, y)
    onx = skl2onnx.to_onnx(clf, X[:1], options={id(clf[-1]): {"nocl": True}})
    session = onnxruntime.InferenceSession(
        onx.SerializeToString(), providers=["CPUExecutionProvider"]
    )
    labels, _ = session.run(None, {session.get_inputs()[0].name: X})
    assert_array_equal(labels, np.searchsorted(clf.classes_, clf.predict(X)))
