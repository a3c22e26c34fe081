"""scikit-learn's estimator checks, in several configurations of each
estimator, with every expected failure declared and explained.

scikit-learn itself skips check_array_api_input unless SCIPY_ARRAY_API is
set; the estimators here take NumPy and SciPy input only.
"""

import numpy as np
import scipy.sparse as sp
from sklearn.utils.estimator_checks import parametrize_with_checks

from skperc import KernelPerceptron, MarginPerceptron
from skperc.schedules import PowerThreshold


def _cosine_kernel(x, z, shift):
    """A callable kernel: the shifted cosine similarity of two samples, given
    as 1-D arrays or as CSR rows."""
    x, z = (np.ravel(v.toarray()) if sp.issparse(v) else v for v in (x, z))
    return shift + x @ z / (np.linalg.norm(x) * np.linalg.norm(z) + 1e-12)


ESTIMATORS = [
    MarginPerceptron(),
    MarginPerceptron(beta="scale"),
    MarginPerceptron(beta="power", average=True),
    MarginPerceptron(beta=1.0, fit_intercept=False, shuffle=False),
    MarginPerceptron(beta=PowerThreshold(alpha=1.6), intercept_scaling=1.0, n_jobs=2),
    KernelPerceptron(),
    KernelPerceptron(kernel="poly", degree=2, beta="power"),
    KernelPerceptron(kernel="linear", beta="scale", shuffle=False),
    KernelPerceptron(kernel="precomputed"),
    KernelPerceptron(kernel=_cosine_kernel, kernel_params={"shift": 1.0}),
    KernelPerceptron(kernel="laplacian", average=True),
    KernelPerceptron(budget=20, max_iter=5),
]

SAMPLE_WEIGHT_REASON = (
    "A sample weight multiplies the update its example makes, as in "
    "scikit-learn's Perceptron. An example repeated k times is another run: "
    "each copy sees the weights the copies before it made."
)


def expected_failed_checks(estimator):
    failures = {
        "check_sample_weight_equivalence_on_dense_data": SAMPLE_WEIGHT_REASON,
        "check_sample_weight_equivalence_on_sparse_data": SAMPLE_WEIGHT_REASON,
    }
    if not getattr(estimator, "fit_intercept", True):
        failures["check_class_weight_classifiers"] = (
            "Without an intercept the hyperplane passes through the origin; "
            "the check needs it moved onto blobs away from the origin, which "
            "no class weight can do."
        )
    return failures


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=expected_failed_checks)
def test_sklearn_compatible(estimator, check):
    check(estimator)
