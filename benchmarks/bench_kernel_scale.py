"""KernelPerceptron with and without a budget against SVC and Nystroem + SGD
as the training set grows: fit time, test accuracy, support vectors, memory.

The data (``--data``), with 20,000 held-out test points, and the RBF kernel
with a gamma fixed for each data set, near scikit-learn's ``"scale"`` on it
(``1 / n_features`` on standardized data):

- ``clusters`` (the default): ``make_classification(n_features=20,
  n_informative=10, n_clusters_per_class=4, class_sep=1.0, flip_y=0.01)``.
- ``wide``: ``make_classification(n_features=100, n_informative=20,
  n_redundant=20, n_clusters_per_class=4, class_sep=1.5, flip_y=0.05)``.
  Five times the features, so that a kernel value costs five times as much
  and the rows pass 2 MiB from 10,000 examples on (the loop then holds
  updates back, where ``clusters`` reads feature-major panels up to
  13,000); and 5% label noise, the noise of ``benchmarks/bench_defaults.py``,
  which the stopping rule has to tell from a slow separation. A linear
  model is far from enough on it (SGDClassifier: 0.76 at 10,000 examples,
  SVC: 0.92).
- ``classes``: ``clusters`` with ten classes of two clusters each
  (``n_classes=10, n_clusters_per_class=2``), which KernelPerceptron
  learns one against the rest, a problem each over the whole sample, where
  SVC solves a problem for each pair of classes, on their examples alone.
- ``text``: the CSR word counts of ``benchmarks/bench_defaults.py``'s
  sparse text-like set (3,000 columns, about 29 stored a row, 5% label
  noise), scaled by ``MaxAbsScaler``, which keeps them sparse; gamma 0.1
  (``"scale"`` is 0.094 on 30,000 rows, 0.103 on 60,000). Sparse input,
  where a product costs the stored entries of an example, not the columns:
  the path of text and one-hot data.
- ``hashed``: ``text`` with its 3,000 columns spread among 2**20, the
  width of ``HashingVectorizer``'s default, the others empty (the columns
  keep their order, so that every fit is ``text``'s to the bit): what the
  empty columns cost.
- ``vocabulary``: the same kind of word counts with a vocabulary of 100,000
  words, labelled by topic words drawn by their frequency
  (``sparse_text(n_features=100_000, topics_by_frequency=True)``; some
  41,000 words in use in 10,000 rows, 78,000 in 40,000): a budget holds
  its support vectors as rows over the features in use, and merges make
  them dense.

The kernel (``--kernel``): RBF, or the polynomial kernel of degree 3 and
``coef0=1`` (KernelPerceptron's defaults, given to SVC and Nystroem, whose
``coef0`` is 0) with the same gamma, or the cosine kernel (SVC's through
``cosine_similarity`` as a callable, which it calls on the whole sample).
A sum of cosine kernels is a linear function of ``x / ||x||``: with the
cosine kernel, ``Normalizer()`` + ``MarginPerceptron`` (with the margin of
KernelPerceptron's default, ``beta=RelativeThreshold(0.25)``) learns
functions of the same kind, in the space of the features.
Merging two support vectors is defined for the RBF kernel alone: the
budgets of the others project or remove.
``--dtype float32`` gives every estimator the same data as float32 values
(the default: float64).

Compared: KernelPerceptron with its defaults, the same with
``budget=--budget`` for each budget strategy of the kernel, ``Nystroem(n_components=
--budget)`` + ``SGDClassifier``, and ``SVC(C=10)``, each up to the size
whose fit it finishes within ``--limit`` seconds (10 minutes by default): a
fit still running then is stopped, with the estimator's other fits of that
size, and the estimator is skipped at the larger sizes, so that one command
gives the whole table (at 1,000,000 examples the unbudgeted fit, each of
whose updates computes a kernel column over them, takes longer). Each fit
runs in a fresh process, so that its peak resident memory (which includes
the interpreter and the data) is its own; times are medians over
``--repeat`` fits, and the ratios are to SVC's median in the same run.
``--seeds N`` fits each estimator but SVC (which draws no random numbers)
with ``random_state`` 0 to N - 1 (the default: 0 alone), each ``--repeat``
times: the table then gives the medians over all of them (the largest peak
memory), and a line after each its median time and accuracy for each seed.
The order in which a KernelPerceptron visits the examples, and its
validation split, follow its seed, and with them the epochs that early
stopping runs: on the clusters, 7 to 11 at 10,000 examples. The
KernelPerceptrons fit with each of ``--n-jobs`` (the repeats of the
different numbers of jobs interleaved, so that a change in the machine's
load falls on all of them), and "x 1 job" is the time with one job over the
time with these: the speed-up of the threads. ``--only`` keeps the
estimators whose name holds one of its words. ``--margins M ...`` adds the
unbudgeted KernelPerceptron with ``beta=RelativeThreshold(M)`` for each M
(the default's margin is 0.25): a larger margin keeps a run on noisy data
further from the noise, at the price of more updates. ``--refit`` adds
the unbudgeted KernelPerceptron with ``refit=False`` and with
``refit=True``, which fits again on the whole sample, the part that early
stopping held out included, for the epochs of its best validation score
(the default, ``"auto"``, does so on at most 5,000 examples). ``--busy N`` keeps N
other processes computing meanwhile, as on a machine whose cores other work
keeps busy (where the loop runs an epoch on one thread once its threads lose
time waiting for each other).

Then the budgeted KernelPerceptron (merge, or project with the polynomial
kernel), or with ``--predict-with unbudgeted`` the one without a budget,
fitted on the smallest size predicts ``--predict-rows`` rows (the test
points over and over) with each of ``--n-jobs``, within scikit-learn's
``working_memory`` (``--working-memory`` MB): the time, and the peak of the
memory that numpy allocates meanwhile (tracemalloc; the rows themselves not
included). ``--predict-rows 0`` skips it.

Run from the repository root::

    python benchmarks/bench_kernel_scale.py --sizes 10000 40000 [--repeat 3] \
        [--seeds 5] [--n-jobs 1 2] [--only KernelPerceptron] \
        [--predict-rows 1000000] [--data wide|classes|text|hashed|vocabulary] \
        [--busy 2] [--margins 1.0] [--refit] [--predict-with unbudgeted] \
        [--limit 600] \
        [--kernel poly|cosine] [--dtype float32]
"""

import argparse
import multiprocessing
import resource
import time
import tracemalloc
import warnings
from itertools import product
from queue import Empty

import numpy as np
import scipy.sparse as sp
from bench_defaults import sparse_text
from sklearn import config_context, get_config
from sklearn.datasets import make_classification
from sklearn.exceptions import ConvergenceWarning
from sklearn.kernel_approximation import Nystroem
from sklearn.linear_model import SGDClassifier
from sklearn.metrics.pairwise import cosine_similarity
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import MaxAbsScaler, Normalizer, StandardScaler
from sklearn.svm import SVC

from skperc import KernelPerceptron, MarginPerceptron
from skperc.schedules import RelativeThreshold

N_TEST = 20_000
HASHED_COLUMNS = 2**20
# the word counts by name: sparse_text's arguments
WORD_COUNTS = {
    "text": {},
    "hashed": {},
    "vocabulary": dict(n_features=100_000, topics_by_frequency=True),
}

# the kernels by name: their parameters but gamma
KERNELS = {
    "rbf": dict(kernel="rbf"),
    "poly": dict(kernel="poly", degree=3, coef0=1.0),
    "cosine": dict(kernel="cosine"),
}
# the budget strategies of each kernel, the one a budgeted prediction uses first
STRATEGIES = {
    "rbf": ("merge", "project", "remove"),
    "poly": ("project", "remove"),
    "cosine": ("project", "remove"),
}

DATASETS = {
    "clusters": dict(
        n_features=20,
        n_informative=10,
        n_clusters_per_class=4,
        class_sep=1.0,
        flip_y=0.01,
        random_state=0,
    ),
    "wide": dict(
        n_features=100,
        n_informative=20,
        n_redundant=20,
        n_clusters_per_class=4,
        class_sep=1.5,
        flip_y=0.05,
        random_state=1,
    ),
}
DATASETS["classes"] = dict(DATASETS["clusters"], n_classes=10, n_clusters_per_class=2)


def data(n_train, name="clusters", dtype="float64"):
    if name in WORD_COUNTS:
        X, y = sparse_text(n_samples=n_train + N_TEST, **WORD_COUNTS[name])
        X = MaxAbsScaler().fit_transform(X).tocsr()
        if name == "hashed":
            rng = np.random.default_rng(0)
            at = np.sort(rng.choice(HASHED_COLUMNS, X.shape[1], replace=False))
            X = sp.csr_matrix(
                (X.data, at[X.indices], X.indptr), shape=(X.shape[0], HASHED_COLUMNS)
            )
    else:
        X, y = make_classification(n_samples=n_train + N_TEST, **DATASETS[name])
        X = StandardScaler().fit_transform(X)
    X = X.astype(dtype, copy=False)
    return X[:n_train], y[:n_train], X[n_train:], y[n_train:]


def gamma(name):
    """The kernel's gamma on data set name, fixed for every fit: 1 /
    n_features, "scale" on standardized data; 0.1 on the word counts."""
    if name in WORD_COUNTS:
        return 0.1
    return 1.0 / DATASETS[name]["n_features"]


def estimators(budget, kernel_gamma, margins=(), kernel="rbf", refit=False):
    """The estimators by name, made by make(n_jobs, seed) for a
    KernelPerceptron, make(seed) for the others (seed: their random_state;
    SVC has none), with the kernel of KERNELS[kernel] and gamma
    kernel_gamma. margins: those of the unbudgeted KernelPerceptrons of a
    RelativeThreshold beside the default; refit: whether the default with
    refit=False and with refit=True are among them."""
    params = dict(gamma=kernel_gamma, **KERNELS[kernel])
    return {
        "KernelPerceptron": lambda n_jobs=None, seed=0: KernelPerceptron(
            **params, random_state=seed, n_jobs=n_jobs
        ),
        **{
            f"KernelPerceptron refit={choice}": (
                lambda n_jobs=None, seed=0, choice=choice: KernelPerceptron(
                    **params, refit=choice, random_state=seed, n_jobs=n_jobs
                )
            )
            for choice in ((False, True) if refit else ())
        },
        **{
            f"KernelPerceptron margin {margin:g}": (
                lambda n_jobs=None, seed=0, margin=margin: KernelPerceptron(
                    **params,
                    beta=RelativeThreshold(margin),
                    random_state=seed,
                    n_jobs=n_jobs,
                )
            )
            for margin in margins
        },
        **{
            f"KP budget={budget} {strategy}": (
                lambda n_jobs=None, seed=0, strategy=strategy: KernelPerceptron(
                    **params,
                    budget=budget,
                    budget_strategy=strategy,
                    random_state=seed,
                    n_jobs=n_jobs,
                )
            )
            for strategy in STRATEGIES[kernel]
        },
        **(
            {
                "Normalizer+MarginPerceptron": lambda seed=0: make_pipeline(
                    Normalizer(),
                    MarginPerceptron(beta=RelativeThreshold(0.25), random_state=seed),
                )
            }
            if kernel == "cosine"
            else {}
        ),
        f"Nystroem({budget})+SGD": lambda seed=0: make_pipeline(
            Nystroem(**params, n_components=budget, random_state=seed),
            SGDClassifier(random_state=seed),
        ),
        "SVC(C=10)": lambda seed=0: (
            SVC(C=10, kernel=cosine_similarity)
            if kernel == "cosine"
            else SVC(C=10, **params)
        ),
    }


def threaded(name):
    return name.startswith(("KernelPerceptron", "KP"))


def seeded(name):
    """Whether the estimator called name draws from its random_state."""
    return not name.startswith("SVC")


def fit_once(
    name, n_train, budget, margins, refit, kernel, n_jobs, dataset, dtype, seed, queue
):
    """Fit one estimator in this (child) process; report through queue."""
    X, y, X_test, y_test = data(n_train, dataset, dtype)
    make = estimators(budget, gamma(dataset), margins, kernel, refit)[name]
    estimator = make(n_jobs, seed) if threaded(name) else make(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        queue.put("fitting")
        start = time.perf_counter()
        estimator.fit(X, y)
        seconds = time.perf_counter() - start
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    last = estimator[-1] if hasattr(estimator, "steps") else estimator
    # Nystroem's centres count as support vectors; a linear model has none
    if hasattr(last, "support_"):
        n_support = len(last.support_)
    else:
        n_support = budget if name.startswith("Nystroem") else 0
    queue.put((seconds, estimator.score(X_test, y_test), n_support, peak_mb))


def predict_once(
    n_train, budget, n_rows, n_jobs, working_memory, dataset, dtype, kernel, name, queue
):
    """Fit the KernelPerceptron called name, then time its prediction of
    n_rows rows and trace the memory that takes; report through queue."""
    X, y, X_test, _ = data(n_train, dataset, dtype)
    estimator = estimators(budget, gamma(dataset), kernel=kernel)[name](n_jobs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        estimator.fit(X, y)
    rows = X_test[np.arange(n_rows) % X_test.shape[0]]
    queue.put("predicting")
    tracemalloc.start()
    with config_context(working_memory=working_memory):
        start = time.perf_counter()
        estimator.predict(rows)
        seconds = time.perf_counter() - start
    peak_mb = tracemalloc.get_traced_memory()[1] / 2**20
    queue.put((seconds, peak_mb, len(estimator.support_)))


def spin():
    """Compute until terminated: other work on a core."""
    while True:
        pass


def measure(target, *args, limit=None):
    """What target(*args, queue) reports from a fresh process, or None if
    it has not reported within limit seconds of the start of the part it
    times (its first report), when the process is stopped."""
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=target, args=(*args, queue))
    child.start()
    queue.get()
    try:
        result = queue.get(timeout=limit)
    except Empty:
        child.terminate()
        result = None
    child.join()
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 40_000])
    parser.add_argument(
        "--data", choices=sorted([*DATASETS, *WORD_COUNTS]), default="clusters"
    )
    parser.add_argument("--budget", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--seeds", type=int, default=1)
    parser.add_argument("--limit", type=float, default=600.0)
    parser.add_argument("--n-jobs", type=int, nargs="+", default=[1])
    parser.add_argument("--only", nargs="+", default=None)
    parser.add_argument("--predict-rows", type=int, default=1_000_000)
    parser.add_argument(
        "--predict-with", choices=["budget", "unbudgeted"], default="budget"
    )
    parser.add_argument(
        "--working-memory", type=float, default=get_config()["working_memory"]
    )
    parser.add_argument("--busy", type=int, default=0)
    parser.add_argument("--margins", type=float, nargs="+", default=[])
    parser.add_argument("--refit", action="store_true")
    parser.add_argument("--kernel", choices=sorted(KERNELS), default="rbf")
    parser.add_argument("--dtype", choices=["float64", "float32"], default="float64")
    args = parser.parse_args()
    context = multiprocessing.get_context("fork")
    others = [context.Process(target=spin, daemon=True) for _ in range(args.busy)]
    for other in others:
        other.start()
    try:
        run(args)
    finally:
        for other in others:
            other.terminate()


def run(args):
    """The fits, then the prediction rows."""
    names = [
        name
        for name in estimators(
            args.budget, gamma(args.data), args.margins, args.kernel, args.refit
        )
        if args.only is None or any(word in name for word in args.only)
    ]
    print(
        f"{'n_train':>8} {'estimator':<28} {'jobs':>4} {'fit s':>8} {'x SVC':>6} "
        f"{'x 1 job':>7} {'accuracy':>8} {'- SVC':>6} {'SVs':>6} "
        f"{'peak RSS MB':>11}"
    )
    unfinished = {}  # by estimator: the size of its fit that passed the limit
    for n_train in sorted(args.sizes):
        rows, by_seed = {}, {}
        for name in names:
            if name in unfinished:
                print(
                    f"{n_train:>8} {name:<28} skipped: did not finish within "
                    f"{args.limit:g} s at {unfinished[name]:,}",
                    flush=True,
                )
                continue
            jobs = args.n_jobs if threaded(name) else [None]
            seeds = range(args.seeds if seeded(name) else 1)
            runs = {n_jobs: [] for n_jobs in jobs}
            for _, seed, n_jobs in product(range(args.repeat), seeds, jobs):
                result = measure(
                    fit_once,
                    name,
                    n_train,
                    args.budget,
                    args.margins,
                    args.refit,
                    args.kernel,
                    n_jobs,
                    args.data,
                    args.dtype,
                    seed,
                    limit=args.limit,
                )
                if result is None:
                    unfinished[name] = n_train
                    print(
                        f"{n_train:>8} {name:<28} {n_jobs or '-':>4} stopped: not "
                        f"finished within {args.limit:g} s",
                        flush=True,
                    )
                    break
                runs[n_jobs].append(result)
            if result is None:
                continue
            for n_jobs, done in runs.items():
                rows[name, n_jobs] = summary(done)
                if len(seeds) > 1:
                    by_seed[name, n_jobs] = [
                        summary(done[seed :: len(seeds)])[:2] for seed in seeds
                    ]
        svc = rows.get(("SVC(C=10)", None))
        for (name, n_jobs), (seconds, accuracy, n_support, peak) in rows.items():
            ratio = f"{seconds / svc[0]:6.2f}" if svc else f"{'-':>6}"
            gap = f"{accuracy - svc[1]:+6.3f}" if svc else f"{'-':>6}"
            one = rows.get((name, 1))
            speedup = f"{one[0] / seconds:7.2f}" if one and n_jobs else f"{'-':>7}"
            print(
                f"{n_train:>8} {name:<28} {n_jobs or '-':>4} {seconds:8.2f} {ratio} "
                f"{speedup} {accuracy:8.4f} {gap} {n_support or '-':>6} {peak:11.0f}",
                flush=True,
            )
            if (name, n_jobs) in by_seed:
                print(
                    f"{'':>8} {'by seed (s, accuracy):':<28} "
                    + ", ".join(f"{s:.2f} {a:.4f}" for s, a in by_seed[name, n_jobs]),
                    flush=True,
                )

    if args.predict_rows:
        predict(args)


def summary(done):
    """The medians of the fits done: seconds, accuracy and support vectors;
    and their largest peak memory."""
    seconds, accuracy, n_support, peak = np.array(done).T
    return (
        float(np.median(seconds)),
        float(np.median(accuracy)),
        int(np.median(n_support)),
        float(peak.max()),
    )


def predict(args):
    """The prediction rows: median time over --repeat runs, ratio to one
    job, and the largest traced peak."""
    n_train = min(args.sizes)
    name = (
        "KernelPerceptron"
        if args.predict_with == "unbudgeted"
        else f"KP budget={args.budget} {STRATEGIES[args.kernel][0]}"
    )
    print(
        f"\npredicting {args.predict_rows:,} rows with {name} fitted on "
        f"{n_train:,}, working_memory={args.working_memory:g} MB"
    )
    print(f"{'jobs':>4} {'predict s':>9} {'x 1 job':>7} {'SVs':>6} {'peak MB':>8}")
    runs = {n_jobs: [] for n_jobs in args.n_jobs}
    for _ in range(args.repeat):
        for n_jobs in args.n_jobs:
            runs[n_jobs].append(
                measure(
                    predict_once,
                    n_train,
                    args.budget,
                    args.predict_rows,
                    n_jobs,
                    args.working_memory,
                    args.data,
                    args.dtype,
                    args.kernel,
                    name,
                )
            )
    seconds = {
        n_jobs: float(np.median([r[0] for r in done])) for n_jobs, done in runs.items()
    }
    for n_jobs, done in runs.items():
        speedup = (
            f"{seconds[1] / seconds[n_jobs]:7.2f}" if 1 in seconds else f"{'-':>7}"
        )
        peak = max(r[1] for r in done)
        print(
            f"{n_jobs:>4} {seconds[n_jobs]:9.2f} {speedup} {done[0][2]:>6} {peak:8.0f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
