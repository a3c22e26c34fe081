"""Export skperc's classifiers to ONNX with skl2onnx.

Importing this module registers a converter for each classifier of skperc
with :func:`skl2onnx.update_registered_converter`, with skl2onnx's shape
calculator and parser of classifiers, so that :func:`skl2onnx.to_onnx`
converts them alone or as a step of a pipeline::

    import skperc.onnx  # noqa: F401  (registers the converters)
    from skl2onnx import to_onnx

    onx = to_onnx(pipeline, X[:1])

It needs the extra ``onnx`` (``pip install "skperc[onnx]"``: skl2onnx and
onnxruntime); ``import skperc`` does not import this module.

The graph has the two outputs of skl2onnx's classifiers, ``label`` and the
decision values, named ``probabilities`` as for scikit-learn's classifiers
without ``predict_proba`` (:class:`~sklearn.svm.SVC` with
``probability=False``): the columns ``[-f, f]`` of a binary problem, one
column per class otherwise. They are not probabilities, so no ZipMap is
added (the option ``zipmap`` is accepted and has no effect); the option
``nocl=True`` gives the labels ``0, ..., n_classes - 1``. For
probabilities, calibrate first (see :ref:`probabilities`).

What is converted:

- :class:`~skperc.MarginPerceptron`,
  :class:`~skperc.LinearProgramClassifier` and
  :class:`~skperc.distributed.ParameterMixingClassifier`: ``coef_`` and
  ``intercept_``;
- :class:`~skperc.KernelPerceptron`: the sum over ``support_vectors_``
  weighted by ``dual_coef_``, for every kernel given by name (``"linear"``,
  ``"poly"``, ``"rbf"``, ``"sigmoid"``, ``"laplacian"``, ``"chi2"``,
  ``"additive_chi2"``, ``"cosine"`` and ``"inverse_dot"``); a callable
  kernel or ``"precomputed"`` raises a ``ValueError``. A support of CSR
  rows (a fit on CSR input) is held on the columns where it stores values,
  which the graph gathers from its input, for every kernel but
  ``"laplacian"`` (and the chi2 kernels, which take no CSR input): on
  ``HashingVectorizer``'s 2**20 columns, a support on a few thousand of
  them;
- :class:`~skperc.MarginMLPClassifier`: the ReLU layers (with
  ``hidden_beta``, each unit's input translated by ``hidden_thresholds_``)
  and the output units;
- :class:`~skperc.HalvingClassifier` over
  :class:`~skperc.concepts.DecisionStumps` with ``randomized=False``: the
  vote of each version space; other concept classes (a subclass of
  ``DecisionStumps`` with its own ``_predict_concepts`` among them) and
  randomized halving raise a ``ValueError``.

A binary classifier converts from ``target_opset`` 12 on (its labels take
the operator GreaterOrEqual); an earlier opset raises a ``ValueError``.

The graph computes as the estimator does: in float64 (float32 input is
cast to it, as the estimators' input validation does), except a
:class:`~skperc.MarginMLPClassifier` trained in float32 on float32 input.
The labels are those of ``predict``, ``sign(0) = +1`` included: a binary
decision value of exactly 0 gives ``classes_[1]`` (skl2onnx's own linear
converters give ``classes_[0]``). The decision values are returned in the
floating type of the input, so on float32 input they are those of
``decision_function`` rounded to float32. The labels are strings, or
int64 for integer, boolean and float labels (which a classifier accepts
with integer values only).

In a pipeline, convert a float32 ``StandardScaler`` or ``MaxAbsScaler``
with skl2onnx's option ``{"div": "div"}``: by default its graph multiplies
by ``1 / scale`` where scikit-learn divides, and a value one float32 step
off can cross a threshold of :class:`~skperc.HalvingClassifier`'s stumps
or a decision value of 0 (see "Deployment" in the user guide).

Two differences from the estimators remain: ONNX cannot raise, so input
on which an estimator raises (decision values that overflow, negative
values under the ``"chi2"`` kernels, ``nu <x, y> >= 1`` under
``"inverse_dot"``) gives infinite or NaN decision values instead, and
sparse input must be densified first, as ONNX tensors are dense.

A model whose weights would take 2 GiB or more in the graph raises a
``ValueError`` before any copy: protobuf, which holds an ONNX model,
serializes less.
"""

import numpy as np
import scipy.sparse as sp
from onnx.numpy_helper import from_array
from skl2onnx import get_model_alias, update_registered_converter
from skl2onnx.algebra.onnx_ops import (
    OnnxAbs,
    OnnxAdd,
    OnnxArgMax,
    OnnxCast,
    OnnxConcat,
    OnnxDiv,
    OnnxEqual,
    OnnxExp,
    OnnxGather,
    OnnxGreaterOrEqual,
    OnnxIdentity,
    OnnxLess,
    OnnxMatMul,
    OnnxMax,
    OnnxMul,
    OnnxNeg,
    OnnxPow,
    OnnxReciprocal,
    OnnxReduceSumApi11,
    OnnxRelu,
    OnnxReshapeApi13,
    OnnxSqrt,
    OnnxSub,
    OnnxTanh,
    OnnxUnsqueezeApi11,
    OnnxWhere,
)
from skl2onnx.common.data_types import (
    Int64TensorType,
    guess_numpy_type,
    guess_tensor_type,
)
from skl2onnx.common.shape_calculator import (
    calculate_linear_classifier_output_shapes,
)
from skl2onnx.common.utils_classifier import get_label_classes
from skl2onnx.proto import onnx_proto
from sklearn.utils.validation import check_is_fitted

from ._halving import HalvingClassifier
from ._kernel_perceptron import KernelPerceptron
from ._kernel_perceptron_fast import squared_norms
from ._linear_program import LinearProgramClassifier
from ._margin_mlp import MarginMLPClassifier
from ._margin_perceptron import MarginPerceptron
from ._onnx_halving import stump_vote_margins
from .distributed import ParameterMixingClassifier

# skl2onnx's options of classifiers: "nocl" gives the labels 0, ...,
# n_classes - 1; "zipmap", which skl2onnx's parser of pipelines sets on
# every classifier, is accepted and has no effect (see _parse_classifier).
_CLASSIFIER_OPTIONS = {"zipmap": [True, False, "columns"], "nocl": [False, True]}

# protobuf serializes a message of less than 2 GiB, and skl2onnx writes every
# weight into the model: a graph past it failed in serialization with
# "Failed to serialize proto", after 66 s and 23 GB of memory, for a
# KernelPerceptron of 2,972 support vectors over 100,000 columns (2.4 GB
# dense)
_PROTOBUF_LIMIT = 2**31

# the kernels that KernelPerceptron's graph computes from X @ support.T (and
# norms), which read the input on the columns the support uses alone
_PRODUCT_KERNELS = {
    "linear",
    "poly",
    "polynomial",
    "sigmoid",
    "rbf",
    "cosine",
    "inverse_dot",
}

_PROTO_TYPES = {
    np.dtype(np.float32): onnx_proto.TensorProto.FLOAT,
    np.dtype(np.float64): onnx_proto.TensorProto.DOUBLE,
}


def _cast(node, node_dtype, dtype, opv):
    """``node``, of ``node_dtype``, cast to ``dtype`` unless it already is."""
    if np.dtype(node_dtype) == np.dtype(dtype):
        return node
    return OnnxCast(node, to=_PROTO_TYPES[np.dtype(dtype)], op_version=opv)


def _input(operator, dtype, opv):
    """The input of ``operator`` cast to ``dtype``."""
    X = operator.inputs[0]
    return _cast(X, guess_numpy_type(X.type), dtype, opv)


def _class_labels(classes):
    """classes_ as the values of the label output: strings, or int64 (the
    float labels of a classifier have integer values)."""
    if classes.dtype.kind in "OUS":
        return np.array([str(label) for label in classes], dtype=object)
    return classes.astype(np.int64)


def _write_classifier_outputs(scope, operator, container, scores, dtype):
    """The label and decision value outputs of ``operator`` from the node
    ``scores`` of ``dtype``, of shape (n_samples, n_problems), as
    ``predict`` and ``decision_function`` give them (``sign(0) = +1``)."""
    opv = container.target_opset
    estimator = operator.raw_operator
    labels = _class_labels(get_label_classes(scope, estimator))
    label_out, scores_out = operator.outputs[:2]
    out_dtype = guess_numpy_type(scores_out.type)
    if len(labels) == 2:
        # classes_[1] where f >= 0: ArgMax over [-f, f] would pick
        # classes_[0] on a tie
        if opv < 12:
            raise ValueError(
                f"A binary {type(estimator).__name__} converts to ONNX from "
                "target_opset 12 on: its labels take GreaterOrEqual, an "
                f"operator of opset 12; got target_opset={opv}."
            )
        index = OnnxCast(
            OnnxGreaterOrEqual(scores, np.zeros(1, dtype=dtype), op_version=opv),
            to=onnx_proto.TensorProto.INT64,
            op_version=opv,
        )
        index = OnnxReshapeApi13(index, np.array([-1], dtype=np.int64), op_version=opv)
        columns = OnnxConcat(
            OnnxNeg(scores, op_version=opv), scores, axis=1, op_version=opv
        )
    else:
        index = OnnxArgMax(scores, axis=1, keepdims=0, op_version=opv)
        columns = scores
    OnnxGather(labels, index, axis=0, op_version=opv, output_names=[label_out]).add_to(
        scope, container
    )
    OnnxIdentity(
        _cast(columns, dtype, out_dtype, opv),
        op_version=opv,
        output_names=[scores_out],
    ).add_to(scope, container)


def _check_size(estimator, nbytes, weights, remedy=""):
    """Refuse, before any copy, a model whose weights take nbytes in the
    graph, past what protobuf serializes."""
    if nbytes >= _PROTOBUF_LIMIT:
        raise ValueError(
            f"This {type(estimator).__name__} cannot be converted to ONNX: "
            f"{weights} take {nbytes / 1e9:.1f} GB in the graph, and protobuf "
            "serializes an ONNX model of less than 2 GiB. "
            f"{remedy}Pickle, joblib and skops save the model as it is."
        )


def _initializer(values, scope, container):
    """The name of an initializer of the graph that holds ``values``,
    written from their bytes."""
    # skl2onnx writes an array that an operator takes as input value by
    # value, into a list of protobuf's: of the 13 s that converting 471 MB
    # of support vectors took, 6.5 s.
    name = scope.get_unique_variable_name("weights")
    container.add_initializer(
        name, None, None, from_array(np.ascontiguousarray(values))
    )
    return name


def _linear_scores(X, weights, intercept, opv):
    """X @ weights + intercept, ``weights`` the name of an initializer
    (_initializer) of the dtype of ``intercept``."""
    return OnnxAdd(OnnxMatMul(X, weights, op_version=opv), intercept, op_version=opv)


def _convert_linear_classifier(scope, operator, container):
    """The converter of the classifiers of a fitted coef_ and intercept_."""
    estimator = operator.raw_operator
    opv = container.target_opset
    _check_size(estimator, 8 * np.size(estimator.coef_), "its weights")
    X = _input(operator, np.float64, opv)
    scores = _linear_scores(
        X,
        _initializer(np.asarray(estimator.coef_, dtype=np.float64).T, scope, container),
        np.asarray(estimator.intercept_, dtype=np.float64),
        opv,
    )
    _write_classifier_outputs(scope, operator, container, scores, np.float64)


def _row_sums(X, opv):
    """The sum of each row of X, of shape (n_samples, 1)."""
    return OnnxReduceSumApi11(X, axes=[1], keepdims=1, op_version=opv)


def _dense(matrix):
    """A float64 array of a dense or CSR/CSC matrix."""
    if sp.issparse(matrix):
        matrix = matrix.toarray()
    return np.asarray(matrix, dtype=np.float64)


def _support_squared_norms(vectors):
    """||v||^2 of each support vector, as KernelPerceptron sums them,
    without a dense copy."""
    return squared_norms(
        vectors.tocsr()
        if sp.issparse(vectors)
        else np.ascontiguousarray(vectors, dtype=np.float64)
    )


def _pairwise_terms(X, Y, opv, scope, container):
    """x_k and y_k of every pair of samples, of shapes (n_X, 1, n_features)
    and (1, n_Y, n_features), which broadcast together."""
    return (
        OnnxUnsqueezeApi11(X, axes=[1], op_version=opv),
        _initializer(_dense(Y)[None, :, :], scope, container),
    )


def _chi2_sums(X, Y, opv, scope, container):
    """sum_k (x_k - y_k)^2 / (x_k + y_k) of every pair, terms of x_k + y_k
    = 0 counted as 0, as scikit-learn's additive_chi2_kernel does."""
    x, y = _pairwise_terms(X, Y, opv, scope, container)
    difference = OnnxSub(x, y, op_version=opv)
    total = OnnxAdd(x, y, op_version=opv)
    ratio = OnnxWhere(
        OnnxEqual(total, np.zeros(1), op_version=opv),
        np.zeros(1),
        OnnxDiv(OnnxMul(difference, difference, op_version=opv), total, op_version=opv),
        op_version=opv,
    )
    return OnnxReduceSumApi11(ratio, axes=[2], keepdims=0, op_version=opv)


def _kernel_matrix(estimator, X, opv, scope, container):
    """The kernel between X (float64) and the support vectors, the kernel
    that KernelPerceptron computes (to rounding)."""
    kernel = estimator.kernel
    if callable(kernel) or kernel == "precomputed":
        name = "a Python callable" if callable(kernel) else "'precomputed'"
        raise ValueError(
            f"A KernelPerceptron with kernel={name} cannot be converted to "
            "ONNX: the graph computes the kernel itself, by name. Use a named "
            "kernel (linear, poly, rbf, sigmoid, laplacian, chi2, "
            "additive_chi2, cosine, inverse_dot)."
        )
    vectors = estimator.support_vectors_
    # A CSR support (of a fit on CSR input) is written on the columns where
    # it stores values, which the graph gathers from its input, where a
    # dense copy of every column can pass what a model holds: the 6,198
    # support vectors of the hashed text of benchmarks/bench_kernel_scale.py
    # take 149 MB on their 3,000 columns, 52 GB on all 2**20.
    products_of = X
    if sp.issparse(vectors) and kernel in _PRODUCT_KERNELS:
        columns = np.unique(vectors.tocsr().indices)
        if len(columns) < vectors.shape[1]:
            products_of = OnnxGather(
                X, columns.astype(np.int64), axis=1, op_version=opv
            )
            vectors = vectors.tocsc()[:, columns]
    _check_size(
        estimator,
        8 * vectors.shape[0] * vectors.shape[1],
        f"its {vectors.shape[0]} support vectors over {vectors.shape[1]} columns",
        "A budget bounds them. ",
    )
    # the coefficient the fitted run used ("scale" and "auto" resolved), nu
    # of inverse_dot too
    gamma = estimator._gamma()

    def scalar(value):
        return np.array([value], dtype=np.float64)

    def products():
        # the support transposed, the one dense copy of it (from CSR too)
        return OnnxMatMul(
            products_of,
            _initializer(_dense(vectors.T), scope, container),
            op_version=opv,
        )

    if kernel == "linear":
        return products()
    if kernel in ("poly", "polynomial"):
        base = OnnxAdd(
            OnnxMul(products(), scalar(gamma), op_version=opv),
            scalar(estimator.coef0),
            op_version=opv,
        )
        return OnnxPow(base, scalar(estimator.degree), op_version=opv)
    if kernel == "sigmoid":
        return OnnxTanh(
            OnnxAdd(
                OnnxMul(products(), scalar(gamma), op_version=opv),
                scalar(estimator.coef0),
                op_version=opv,
            ),
            op_version=opv,
        )
    if kernel == "rbf":
        # scikit-learn's euclidean_distances: -2 x.y + ||x||^2 + ||y||^2, >= 0
        squared = OnnxMax(
            OnnxAdd(
                OnnxAdd(
                    OnnxMul(products(), scalar(-2.0), op_version=opv),
                    _row_sums(OnnxMul(X, X, op_version=opv), opv),
                    op_version=opv,
                ),
                _initializer(
                    _support_squared_norms(vectors)[None, :], scope, container
                ),
                op_version=opv,
            ),
            scalar(0.0),
            op_version=opv,
        )
        exponent = OnnxMul(squared, scalar(-gamma), op_version=opv)
        # KernelPerceptron's exponential is 0 below -707 (src/rbf.h), where
        # onnxruntime's gives subnormal numbers: a row far from every
        # support vector has the decision value 0, and its label, there too
        return OnnxWhere(
            OnnxLess(exponent, scalar(-707.0), op_version=opv),
            scalar(0.0),
            OnnxExp(exponent, op_version=opv),
            op_version=opv,
        )
    if kernel == "laplacian":
        x, y = _pairwise_terms(X, vectors, opv, scope, container)
        distances = OnnxReduceSumApi11(
            OnnxAbs(OnnxSub(x, y, op_version=opv), op_version=opv),
            axes=[2],
            keepdims=0,
            op_version=opv,
        )
        return OnnxExp(
            OnnxMul(distances, scalar(-gamma), op_version=opv), op_version=opv
        )
    if kernel == "chi2":
        return OnnxExp(
            OnnxMul(
                _chi2_sums(X, vectors, opv, scope, container),
                scalar(-gamma),
                op_version=opv,
            ),
            op_version=opv,
        )
    if kernel == "additive_chi2":
        return OnnxNeg(_chi2_sums(X, vectors, opv, scope, container), op_version=opv)
    if kernel == "cosine":
        # A row or support vector of norm 0 (of zeros, or whose squares all
        # underflow) has the value 0 with every other, any other is divided
        # by its norm, however small, as KernelPerceptron's kernel does
        # (scikit-learn's normalize leaves a row of norm below 10 machine
        # epsilons as it is); a row divided by an infinite norm is 0.
        sv_norms = np.sqrt(_support_squared_norms(vectors))
        units = _dense(vectors) / np.where(sv_norms > 0, sv_norms, np.inf)[:, None]
        norms = OnnxSqrt(_row_sums(OnnxMul(X, X, op_version=opv), opv), op_version=opv)
        safe_norms = OnnxWhere(
            OnnxEqual(norms, scalar(0.0), op_version=opv),
            scalar(np.inf),
            norms,
            op_version=opv,
        )
        return OnnxMatMul(
            OnnxDiv(products_of, safe_norms, op_version=opv),
            _initializer(units.T, scope, container),
            op_version=opv,
        )
    if kernel == "inverse_dot":
        return OnnxReciprocal(
            OnnxSub(
                scalar(1.0),
                OnnxMul(products(), scalar(gamma), op_version=opv),
                op_version=opv,
            ),
            op_version=opv,
        )
    raise ValueError(
        f"No ONNX converter for the kernel {kernel!r} of KernelPerceptron."
    )


def _convert_kernel_perceptron(scope, operator, container):
    """The converter of KernelPerceptron."""
    estimator = operator.raw_operator
    opv = container.target_opset
    X = _input(operator, np.float64, opv)
    dual_coef = np.asarray(estimator.dual_coef_, dtype=np.float64)
    if dual_coef.shape[1] == 0:
        # no support vector: f = 0 everywhere
        scores = _linear_scores(
            X,
            _initializer(
                np.zeros((estimator.n_features_in_, len(dual_coef))), scope, container
            ),
            np.asarray(estimator.intercept_, dtype=np.float64),
            opv,
        )
    else:
        scores = _linear_scores(
            _kernel_matrix(estimator, X, opv, scope, container),
            _initializer(dual_coef.T, scope, container),
            np.asarray(estimator.intercept_, dtype=np.float64),
            opv,
        )
    _write_classifier_outputs(scope, operator, container, scores, np.float64)


def _convert_margin_mlp(scope, operator, container):
    """The converter of MarginMLPClassifier."""
    estimator = operator.raw_operator
    opv = container.target_opset
    # float64 unless both the weights and the input are float32, as the
    # estimator's products promote
    float32_input = guess_numpy_type(operator.inputs[0].type) == np.float32
    if float32_input and estimator.coefs_[0].dtype == np.float32:
        dtype = np.float32
    else:
        dtype = np.float64
    _check_size(
        estimator,
        sum(coef.size for coef in estimator.coefs_) * np.dtype(dtype).itemsize,
        "its weights",
    )
    activation = _input(operator, dtype, opv)
    n_layers = len(estimator.coefs_)
    thresholds = estimator.hidden_thresholds_
    for layer, (coef, intercept) in enumerate(
        zip(estimator.coefs_, estimator.intercepts_, strict=True)
    ):
        activation = _linear_scores(
            activation,
            _initializer(coef.astype(dtype), scope, container),
            intercept.astype(dtype),
            opv,
        )
        if layer < n_layers - 1:
            if thresholds is not None:
                # a hidden_beta's translation, after the intercept as in
                # the estimator's forward pass (not folded into it, which
                # would round otherwise)
                activation = OnnxSub(
                    activation, thresholds[layer].astype(dtype), op_version=opv
                )
            activation = OnnxRelu(activation, op_version=opv)
    _write_classifier_outputs(scope, operator, container, activation, dtype)


def _convert_halving(scope, operator, container):
    """The converter of HalvingClassifier over decision stumps."""
    estimator = operator.raw_operator
    opv = container.target_opset
    X = _input(operator, np.float64, opv)
    scores = stump_vote_margins(estimator, X, opv)
    _write_classifier_outputs(scope, operator, container, scores, np.float64)


def _parse_classifier(scope, model, inputs, custom_parsers=None):
    """The operator of ``model`` with skl2onnx's two outputs of a classifier,
    the label and the scores, without ZipMap: the scores are decision
    values, as for SVC without probabilities."""
    # before skl2onnx's shape calculator reads classes_
    check_is_fitted(model)
    operator = scope.declare_local_operator(get_model_alias(type(model)), model)
    operator.inputs = inputs
    operator.outputs.append(scope.declare_local_variable("label", Int64TensorType()))
    operator.outputs.append(
        scope.declare_local_variable("probabilities", guess_tensor_type(inputs[0].type))
    )
    return operator.outputs


def _register():
    converters = {
        MarginPerceptron: _convert_linear_classifier,
        LinearProgramClassifier: _convert_linear_classifier,
        ParameterMixingClassifier: _convert_linear_classifier,
        KernelPerceptron: _convert_kernel_perceptron,
        MarginMLPClassifier: _convert_margin_mlp,
        HalvingClassifier: _convert_halving,
    }
    for estimator, converter in converters.items():
        update_registered_converter(
            estimator,
            f"Skperc{estimator.__name__}",
            calculate_linear_classifier_output_shapes,
            converter,
            parser=_parse_classifier,
            options=_CLASSIFIER_OPTIONS,
        )


_register()
