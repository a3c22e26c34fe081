"""GridSearchCV on a dask.distributed cluster, through joblib's dask backend,
finds the same parameters and scores as on this process alone."""

import warnings

import joblib
import numpy as np
import pytest
from estimators import ESTIMATORS
from sklearn.base import clone
from sklearn.datasets import make_classification
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import GridSearchCV

from skperc import HalvingClassifier, LinearProgramClassifier, MarginMLPClassifier

distributed = pytest.importorskip(
    "distributed",
    reason="dask.distributed is the optional extra 'distributed': "
    'pip install -e ".[tests,distributed]"',
)

# The first configuration of each estimator class.
ONE_PER_CLASS = list({type(e): e for e in reversed(ESTIMATORS)}.values())

# The threshold beta, for every estimator that has one: two fixed ones and
# the growing schedule of each ("power" in the perceptrons; in
# MarginMLPClassifier it is "sublinear", "power" there being deprecated).
BETA_GRID = {"beta": [0.0, 1.0, "power"]}
MLP_BETA_GRID = {"beta": [0.0, 1.0, "sublinear"]}
# The estimators without beta are searched over their main hyperparameter:
# the objective of the linear program and the concept class of halving.
MAIN_HYPERPARAMETER = {
    LinearProgramClassifier: {"objective": ["feasibility", "l1_margin"]},
    HalvingClassifier: {"concepts": ["stumps", "halfspaces"]},
}


def param_grid(estimator):
    if isinstance(estimator, MarginMLPClassifier):
        return MLP_BETA_GRID
    if "beta" in estimator.get_params():
        return BETA_GRID
    return MAIN_HYPERPARAMETER[type(estimator)]


@pytest.fixture(scope="module")
def client():
    """A cluster of two worker processes on this machine."""
    with (
        distributed.LocalCluster(
            n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        yield client


def search(estimator):
    # A fixed seed where there is one: the search must not depend on where
    # each fit runs.
    if "random_state" in estimator.get_params():
        estimator = clone(estimator).set_params(random_state=0)
    return GridSearchCV(estimator, param_grid(estimator), cv=3, n_jobs=-1)


@pytest.mark.parametrize("estimator", ONE_PER_CLASS, ids=lambda e: type(e).__name__)
def test_grid_search_on_a_cluster_equals_local(estimator, client):
    X, y = make_classification(
        n_samples=120, n_features=4, n_informative=3, n_redundant=0, random_state=0
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        local = search(estimator).set_params(n_jobs=1).fit(X, y)
        with (
            distributed.get_task_stream(client) as tasks,
            joblib.parallel_backend("dask"),
        ):
            remote = search(estimator).fit(X, y)
    # the fits ran on the cluster's workers
    assert {task["worker"] for task in tasks.data} <= set(
        client.scheduler_info()["workers"]
    )
    assert len(tasks.data) > 0
    assert remote.best_params_ == local.best_params_
    assert remote.best_score_ == local.best_score_
    np.testing.assert_array_equal(
        remote.cv_results_["mean_test_score"], local.cv_results_["mean_test_score"]
    )
