"""The ONNX graph of HalvingClassifier's vote over decision stumps."""

import numpy as np
from skl2onnx.algebra.onnx_ops import (
    OnnxCast,
    OnnxDiv,
    OnnxGather,
    OnnxGreaterOrEqual,
    OnnxMatMul,
    OnnxMul,
    OnnxSub,
)
from skl2onnx.proto import onnx_proto

from .concepts import _plain_stumps


def stump_vote_margins(estimator, X, opv):
    """The node of ``estimator.decision_function`` on the float64 node X, of
    shape (n_samples, n_problems): ``(2 |K+| - |K|) / |K|`` per version
    space ``K``, ``K+`` its stumps voting +1."""
    concepts = estimator.concepts_
    # a subclass of DecisionStumps that predicts otherwise is no vote of
    # plain stumps (DecisionStumps._version_spaces halves it through its
    # own predictions)
    if estimator.randomized or not _plain_stumps(concepts):
        raise ValueError(
            "Only HalvingClassifier(randomized=False) over DecisionStumps "
            "(not a subclass with its own _predict_concepts or "
            "stump_parameters) converts to ONNX, as a vote of stumps; got "
            f"randomized={estimator.randomized} over {type(concepts).__name__}."
        )
    spaces = [
        estimator.version_space(problem)
        for problem in range(len(estimator.version_space_size_))
    ]
    # each stump once, with the version spaces it belongs to
    stumps, where = np.unique(np.concatenate(spaces), return_inverse=True)
    membership = np.zeros((len(stumps), len(spaces)))
    starts = np.cumsum([0] + [len(space) for space in spaces])
    for problem, (start, stop) in enumerate(zip(starts[:-1], starts[1:], strict=True)):
        membership[where[start:stop], problem] = 1.0
    feature, sign, threshold = estimator.concepts_.stump_parameters(stumps)
    # s x_j >= s theta is x_j >= theta for s = +1 and x_j <= theta for
    # s = -1, exactly: negation is exact
    votes = OnnxCast(
        OnnxGreaterOrEqual(
            OnnxMul(
                OnnxGather(X, feature.astype(np.int64), axis=1, op_version=opv),
                sign.astype(np.float64),
                op_version=opv,
            ),
            (sign * threshold).astype(np.float64),
            op_version=opv,
        ),
        to=onnx_proto.TensorProto.DOUBLE,
        op_version=opv,
    )
    positive = OnnxMatMul(votes, membership, op_version=opv)
    size = membership.sum(axis=0)
    return OnnxDiv(
        OnnxSub(
            OnnxMul(positive, np.array([2.0]), op_version=opv), size, op_version=opv
        ),
        size,
        op_version=opv,
    )
