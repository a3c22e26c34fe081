"""``n_jobs=None`` and negative ``n_jobs`` count at most the threads that the
OpenMP runtime offers: ``OMP_NUM_THREADS``, threadpoolctl's limit, a joblib
process worker's share; a positive ``n_jobs`` is used as given."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from joblib import Parallel, delayed, effective_n_jobs, parallel_backend
from threadpoolctl import threadpool_limits

import skperc._kernel_perceptron
from skperc import KernelPerceptron
from skperc._kernel_perceptron_fast import openmp_thread_limit
from skperc._threads import thread_count

# Without OpenMP the compiled loops run in one thread whatever the count, and
# there is no runtime limit to read: thread_count is joblib's count there.
pytestmark = pytest.mark.skipif(
    openmp_thread_limit() == 0, reason="skperc was built without OpenMP"
)


def _counts_under(omp_num_threads):
    """thread_count of -1, -2, None, 1 and 3 in a fresh interpreter with
    OMP_NUM_THREADS set, which the runtime reads as it loads; and joblib's
    effective_n_jobs of -1 and -2 there."""
    code = textwrap.dedent(
        """
        from joblib import effective_n_jobs
        from skperc._threads import thread_count
        print(*[thread_count(n) for n in (-1, -2, None, 1, 3)],
              effective_n_jobs(-1), effective_n_jobs(-2))
        """
    )
    env = {**os.environ, "OMP_NUM_THREADS": str(omp_num_threads)}
    run = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True
    )
    assert run.returncode == 0, run.stderr
    return [int(value) for value in run.stdout.split()]


@pytest.mark.parametrize("omp_num_threads", [1, 2, 3, 64])
def test_negative_n_jobs_count_from_omp_num_threads(omp_num_threads):
    minus_1, minus_2, none, one, three, every, all_but_one = _counts_under(
        omp_num_threads
    )
    assert minus_1 == min(every, omp_num_threads)
    assert minus_2 == max(1, min(all_but_one, omp_num_threads - 1))
    assert (none, one, three) == (1, 1, 3)


def test_negative_n_jobs_follow_the_limit_of_threadpoolctl():
    with threadpool_limits(limits=1, user_api="openmp"):
        assert thread_count(-1) == 1
        assert thread_count(2) == 2
        with parallel_backend("threading", n_jobs=-1):
            assert thread_count(None) == 1
    assert thread_count(-1) == min(effective_n_jobs(-1), openmp_thread_limit())


def _worker_counts():
    return int(os.environ["OMP_NUM_THREADS"]), thread_count(-1)


def test_negative_n_jobs_take_a_process_workers_share():
    """joblib's process workers set OMP_NUM_THREADS to their share of the
    processors (1 on a machine of 2 for 2 workers); effective_n_jobs(-1)
    there still counts every processor."""
    for share, count in Parallel(n_jobs=2, backend="loky")(
        delayed(_worker_counts)() for _ in range(2)
    ):
        assert count == min(share, effective_n_jobs(-1))


@pytest.mark.parametrize("budget", [None, 50])
def test_kernel_perceptron_runs_its_loop_on_the_threads_offered(budget, monkeypatch):
    loop = "run_epochs" if budget is None else "run_budget_epochs"
    compiled = getattr(skperc._kernel_perceptron, loop)
    asked = []

    def recording(*args, n_threads, **kwargs):
        asked.append(n_threads)
        return compiled(*args, n_threads=n_threads, **kwargs)

    monkeypatch.setattr(skperc._kernel_perceptron, loop, recording)
    rng = np.random.default_rng(0)
    X = rng.standard_normal((300, 4))
    X = X[np.abs(X[:, 0]) > 0.5]
    y = (X[:, 0] > 0).astype(int)
    clf = KernelPerceptron(budget=budget, n_jobs=-1, random_state=0)
    with threadpool_limits(limits=1, user_api="openmp"):
        clf.fit(X, y)
    assert asked and set(asked) == {1}
    asked.clear()
    clf.set_params(n_jobs=2).fit(X, y)
    assert asked and set(asked) == {2}
