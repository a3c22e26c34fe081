"""scikit-learn's estimator checks, in several configurations of each
estimator, with every expected failure declared and explained.

scikit-learn itself skips check_array_api_input unless SCIPY_ARRAY_API is
set; the estimators here take NumPy and SciPy input only.
"""

from sklearn.utils.estimator_checks import parametrize_with_checks

from skperc import MarginMLPClassifier, MarginPerceptron
from skperc.schedules import PowerThreshold, ScaleThreshold

ESTIMATORS = [
    MarginPerceptron(),
    MarginPerceptron(beta="scale"),
    MarginPerceptron(beta="power", average=True),
    MarginPerceptron(beta=1.0, fit_intercept=False, shuffle=False),
    MarginPerceptron(beta=PowerThreshold(alpha=1.6), intercept_scaling=1.0, n_jobs=2),
    # small networks and few epochs keep the checks fast
    MarginMLPClassifier((16,), learning_rate_init=0.01, max_iter=100, random_state=0),
    MarginMLPClassifier(
        (16, 8), beta="power", c=0.25, solver="sgd", learning_rate_init=0.01
    ),
    MarginMLPClassifier(
        (16,),
        beta=ScaleThreshold(),
        learning_rate_init=0.01,
        batch_size=16,
        early_stopping=True,
        # the checks' smallest samples need a validation set of 3 classes
        validation_fraction=0.5,
    ),
]

SAMPLE_WEIGHT_REASON = (
    "A sample weight multiplies the update its example makes, as in "
    "scikit-learn's Perceptron. An example repeated k times is another run: "
    "each copy sees the weights the copies before it made."
)


def expected_failed_checks(estimator):
    if isinstance(estimator, MarginMLPClassifier):
        if estimator.batch_size >= 100 and not estimator.early_stopping:
            # one batch holds the whole sample: the weighted mean loss is the
            # mean over the repeated examples
            return {}
        reason = (
            "Mini-batches and the validation split draw examples, not weight: "
            "the copies of a repeated example land in different batches, or on "
            "both sides of the split."
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
