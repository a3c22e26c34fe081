"""scikit-learn's estimator checks, in several configurations of each
estimator, with every expected failure declared and explained.

The configurations are the registry tests/estimators.py; an estimator
whose checks fail by design names them in the function EXPECTED_FAILURES
keeps for it. scikit-learn itself skips check_array_api_input unless
SCIPY_ARRAY_API is set; the estimators here take NumPy and SciPy input only.
"""

import inspect

import pytest
from estimators import ESTIMATORS
from sklearn.base import BaseEstimator
from sklearn.utils.estimator_checks import parametrize_with_checks

import skperc
from skperc import (
    HalvingClassifier,
    KernelPerceptron,
    LinearProgramClassifier,
    MarginMLPClassifier,
    MarginPerceptron,
)


def _sample_weight_equivalence(reason):
    return {
        "check_sample_weight_equivalence_on_dense_data": reason,
        "check_sample_weight_equivalence_on_sparse_data": reason,
    }


# The perceptrons, in the primal and in the dual.
PERCEPTRON_SAMPLE_WEIGHT = _sample_weight_equivalence(
    "A sample weight multiplies the update its example makes, as in "
    "scikit-learn's Perceptron. An example repeated k times is another run: "
    "each copy sees the weights the copies before it made."
)


def _kernel_perceptron_failures(estimator):
    failures = dict(PERCEPTRON_SAMPLE_WEIGHT)
    if estimator.kernel in ("linear", "cosine", "precomputed"):
        # with kernel="precomputed" the checks pass the linear kernel's Gram
        # matrix X X^T
        failures["check_class_weight_classifiers"] = (
            "A sum of linear kernels (or of cosine kernels, the linear kernel "
            "of x / ||x||) without a constant term is a hyperplane "
            "through the origin (see MarginPerceptron without intercept): the "
            "check needs it moved onto blobs away from the origin, which no "
            "class weight can do. test_kernel_perceptron checks that a class "
            "weight multiplies the updates of its class."
        )
    return failures


def _margin_perceptron_failures(estimator):
    failures = dict(PERCEPTRON_SAMPLE_WEIGHT)
    if not estimator.fit_intercept:
        failures["check_class_weight_classifiers"] = (
            "Without an intercept the hyperplane passes through the origin; "
            "the check needs it moved onto blobs away from the origin, which "
            "no class weight can do."
        )
    return failures


def _linear_program_failures(estimator):
    if estimator.objective == "l1_margin":
        return {}
    return _sample_weight_equivalence(
        "The feasibility program has many solutions, all of the same "
        "(weighted) total slack; the vertex HiGHS returns depends on the "
        "rows, so repeated rows can give another one."
    )


def _halving_failures(estimator):
    # The default stumps tie on some training blobs of the check; the
    # explicit class does not, and a randomized classifier's decision values
    # are +1 or -1, never 0.
    if estimator.randomized or not isinstance(estimator.concepts, str):
        return {}
    return {
        "check_classifiers_train": (
            "A tied vote predicts classes_[1] (ties +1, sign(0) = +1 as in "
            "the notes) while the check reads a decision value of 0 as "
            "classes_[0]."
        )
    }


def _margin_mlp_failures(estimator):
    if estimator.batch_size >= 100 and not estimator.early_stopping:
        # one batch holds the whole sample of the check: the weighted mean
        # loss is the mean over the repeated examples
        return {}
    return _sample_weight_equivalence(
        "Mini-batches and the validation split draw examples, not weight: "
        "the copies of a repeated example land in different batches, or on "
        "both sides of the split."
    )


EXPECTED_FAILURES = {
    MarginPerceptron: _margin_perceptron_failures,
    KernelPerceptron: _kernel_perceptron_failures,
    LinearProgramClassifier: _linear_program_failures,
    HalvingClassifier: _halving_failures,
    MarginMLPClassifier: _margin_mlp_failures,
}


def expected_failed_checks(estimator):
    return EXPECTED_FAILURES[type(estimator)](estimator)


def parametrize_with_listed_checks(estimators, **kwargs):
    """scikit-learn's parametrize_with_checks with its checks in a list,
    where scikit-learn 1.6 gives them in a generator, which pytest 9
    deprecates and pytest 10 refuses."""
    mark = parametrize_with_checks(estimators, **kwargs)
    names, checks = mark.args
    return pytest.mark.parametrize(names, list(checks), **mark.kwargs)


@parametrize_with_listed_checks(
    ESTIMATORS, expected_failed_checks=expected_failed_checks
)
def test_sklearn_compatible(estimator, check):
    check(estimator)


def test_every_public_estimator_is_registered():
    public = {
        obj
        for name in skperc.__all__
        if inspect.isclass(obj := getattr(skperc, name))
        and issubclass(obj, BaseEstimator)
    }
    registered = {type(estimator) for estimator in ESTIMATORS}
    assert public <= registered, f"not in tests/estimators.py: {public - registered}"
    assert public <= set(EXPECTED_FAILURES)
    for cls in public:
        configurations = [e for e in ESTIMATORS if type(e) is cls]
        assert len(configurations) >= 2, f"{cls.__name__}: one configuration only"
