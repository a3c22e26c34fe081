"""The number of threads that an estimator's ``n_jobs`` asks for."""

from joblib import effective_n_jobs

from ._kernel_perceptron_fast import openmp_thread_limit


def thread_count(n_jobs):
    """joblib's ``effective_n_jobs(n_jobs)``, where ``None`` and negative
    values, which count from the processors, count from the threads that
    the OpenMP runtime offers where that is fewer (``-1``: all of them,
    ``-2``: all but one): the limit that ``OMP_NUM_THREADS`` or
    threadpoolctl set, and that joblib's process workers set to their
    share of the processors, as scikit-learn's own OpenMP loops read it.
    Without it, ``GridSearchCV(n_jobs=-1)`` around an estimator of
    ``n_jobs=-1`` would run as many threads in each worker as there are
    processors. A positive ``n_jobs`` is used as given."""
    count = effective_n_jobs(n_jobs)
    limit = openmp_thread_limit()
    if limit == 0 or (n_jobs is not None and n_jobs > 0):
        return count
    if n_jobs is not None:
        limit = max(1, limit + 1 + n_jobs)
    return min(count, limit)
