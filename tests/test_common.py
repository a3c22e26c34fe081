"""scikit-learn's estimator checks, in several configurations of each
estimator, with every expected failure declared and explained.

scikit-learn itself skips check_array_api_input unless SCIPY_ARRAY_API is
set; the estimators here take NumPy and SciPy input only.
"""

from sklearn.utils.estimator_checks import parametrize_with_checks

from skperc import LinearProgramClassifier, MarginPerceptron
from skperc.schedules import PowerThreshold

ESTIMATORS = [
    MarginPerceptron(),
    MarginPerceptron(beta="scale"),
    MarginPerceptron(beta="power", average=True),
    MarginPerceptron(beta=1.0, fit_intercept=False, shuffle=False),
    MarginPerceptron(beta=PowerThreshold(alpha=1.6), intercept_scaling=1.0, n_jobs=2),
    # Without C the sample must be separable, and the checks' random samples
    # are not: the hard version is tested in test_linear_program.py.
    LinearProgramClassifier(C=1.0),
    LinearProgramClassifier(objective="l1_margin", C=10.0),
    LinearProgramClassifier(objective="l1_margin", fit_intercept=False, C=0.5),
]

SAMPLE_WEIGHT_REASON = (
    "A sample weight multiplies the update its example makes, as in "
    "scikit-learn's Perceptron. An example repeated k times is another run: "
    "each copy sees the weights the copies before it made."
)


def expected_failed_checks(estimator):
    if isinstance(estimator, LinearProgramClassifier):
        if estimator.objective == "l1_margin":
            return {}
        reason = (
            "The feasibility program has many solutions, all of the same "
            "(weighted) total slack; the vertex HiGHS returns depends on the "
            "rows, so repeated rows can give another one."
        )
        return {
            "check_sample_weight_equivalence_on_dense_data": reason,
            "check_sample_weight_equivalence_on_sparse_data": reason,
        }
    failures = {
        "check_sample_weight_equivalence_on_dense_data": SAMPLE_WEIGHT_REASON,
        "check_sample_weight_equivalence_on_sparse_data": SAMPLE_WEIGHT_REASON,
    }
    if not estimator.fit_intercept:
        failures["check_class_weight_classifiers"] = (
            "Without an intercept the hyperplane passes through the origin; "
            "the check needs it moved onto blobs away from the origin, which "
            "no class weight can do."
        )
    return failures


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=expected_failed_checks)
def test_sklearn_compatible(estimator, check):
    check(estimator)
