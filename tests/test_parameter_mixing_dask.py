"""Parameter mixing on a dask.distributed cluster of two worker processes:
the same weights as on threads, the theorems, the accuracy of the
single-machine run, where the shards lie, and a worker lost in the middle
of a fit."""

import os
import warnings

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.exceptions import ConvergenceWarning, DataConversionWarning
from sklearn.utils.multiclass import check_classification_targets

from skperc import MarginPerceptron
from skperc.datasets import make_margin_classification
from skperc.distributed import ParameterMixingClassifier
from skperc.schedules import ThresholdSchedule

distributed = pytest.importorskip(
    "distributed",
    reason="dask.distributed is the optional extra 'distributed': "
    'pip install -e ".[tests,distributed]"',
)
da = pytest.importorskip("dask.array")


def local_cluster():
    return distributed.LocalCluster(
        n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None
    )


@pytest.fixture(scope="module")
def client():
    """A cluster of two worker processes on this machine."""
    with local_cluster() as cluster, distributed.Client(cluster) as client:
        yield client


def chunked(X, y, n_shards, weight=None):
    """X, y (and the weights) as dask arrays cut where the threads engine
    cuts n_shards shards."""
    bounds = np.linspace(0, len(y), n_shards + 1).astype(np.intp)
    rows = tuple(np.diff(bounds))
    parts = [da.from_array(X, chunks=(rows, X.shape[1])), da.from_array(y, chunks=rows)]
    if weight is not None:
        parts.append(da.from_array(weight, chunks=rows))
    return parts


def same_weights(a, b):
    return (
        np.array_equal(a.coef_, b.coef_)
        and np.array_equal(a.intercept_, b.intercept_)
        and np.array_equal(a.n_updates_, b.n_updates_)
        and a.n_iter_ == b.n_iter_
    )


@pytest.mark.parametrize(
    "n_samples, n_classes, options, dtype",
    [
        (900, 2, {}, np.float64),
        (900, 3, {"average": True, "beta": "scale"}, np.float64),
        (900, 3, {"beta": "power", "class_weight": "balanced"}, np.float32),
        (900, 2, {"tol": None, "max_iter": 20, "intercept_scaling": 1.0}, np.float32),
        # early stopping: the validation part of the whole sample, drawn on
        # the client from the labels of every partition
        (2400, 2, {}, np.float64),
        (2400, 3, {"average": True, "class_weight": "balanced"}, np.float32),
        (900, 2, {"early_stopping": True, "beta": "scale"}, np.float32),
    ],
)
def test_dask_gives_the_weights_of_the_threads(
    client, n_samples, n_classes, options, dtype
):
    X, y = make_classification(
        n_samples=n_samples,
        n_features=7,
        n_informative=5,
        n_classes=n_classes,
        flip_y=0.1,
        random_state=n_classes,
    )
    X = X.astype(dtype)
    weight = np.random.RandomState(0).uniform(0, 2, len(y))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        threads = ParameterMixingClassifier(
            MarginPerceptron(random_state=0, **options), n_shards=3
        ).fit(X, y, weight)
        on_dask = ParameterMixingClassifier(
            MarginPerceptron(random_state=0, **options)
        ).fit(*chunked(X, y, 3, weight))
        # n_shards rechunks the collection into the threads' shards
        rechunked = ParameterMixingClassifier(
            MarginPerceptron(random_state=0, **options), n_shards=3
        ).fit(da.from_array(X, chunks=(100, 7)), da.from_array(y, chunks=100), weight)
    assert on_dask.n_shards_ == rechunked.n_shards_ == 3
    assert same_weights(threads, on_dask)
    assert same_weights(threads, rechunked)
    assert np.array_equal(threads.margin_, on_dask.margin_)
    assert np.array_equal(threads.mixed_updates_, on_dask.mixed_updates_)
    validated = n_samples > 2000 or options.get("early_stopping", False)
    assert (threads.validation_scores_ is not None) == validated
    assert on_dask.validation_scores_ == threads.validation_scores_
    assert rechunked.validation_scores_ == threads.validation_scores_


@pytest.mark.parametrize(
    "n_classes, options",
    [(2, {}), (3, {"average": True, "beta": "power", "class_weight": {0: 2.0}})],
)
def test_partial_fit_on_dask_mixes_once_per_call_as_the_threads(
    client, n_classes, options
):
    """Each call on a dask collection is one mixed epoch of its partitions,
    the same as the threads' on the same shards, call after call."""
    X, y = make_classification(
        n_samples=1200,
        n_features=6,
        n_informative=4,
        n_classes=n_classes,
        flip_y=0.1,
        random_state=0,
    )
    weight = np.random.RandomState(0).uniform(0, 2, len(y))
    classes = np.unique(y)
    threads = ParameterMixingClassifier(
        MarginPerceptron(random_state=0, **options), n_shards=3
    )
    on_dask = ParameterMixingClassifier(MarginPerceptron(random_state=0, **options))
    for batch in np.array_split(np.arange(len(y)), 3):
        Xb, yb, wb = X[batch], y[batch], weight[batch]
        threads.partial_fit(Xb, yb, classes=classes, sample_weight=wb)
        Xd, yd, wd = chunked(Xb, yb, 3, wb)
        on_dask.partial_fit(Xd, yd, classes=classes, sample_weight=wd)
        assert on_dask.n_shards_ == 3 and on_dask.n_iter_ == 1
        assert same_weights(threads, on_dask)
        assert np.array_equal(threads.mixed_updates_, on_dask.mixed_updates_)
        assert np.array_equal(threads.margin_, on_dask.margin_)


def test_warm_start_on_dask_continues_as_the_threads(client):
    X, y = make_classification(n_samples=900, n_features=6, flip_y=0.1, random_state=1)
    estimator = MarginPerceptron(warm_start=True, max_iter=3, random_state=0)
    threads = ParameterMixingClassifier(estimator, n_shards=3)
    on_dask = ParameterMixingClassifier(estimator)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        for _ in range(3):
            threads.fit(X, y)
            on_dask.fit(*chunked(X, y, 3))
            assert same_weights(threads, on_dask)
            assert np.array_equal(threads.mixed_updates_, on_dask.mixed_updates_)
    with pytest.raises(ValueError, match="features"):
        on_dask.fit(*chunked(X[:, :4], y, 3))


def test_labels_seen_in_one_shard_only_as_the_threads(client):
    """The threads find the classes from those of each shard, the cluster
    from those of each partition: the same classes and weights, with the
    first class (of string labels) in the last shard only."""
    X, y = make_classification(
        n_samples=900, n_features=6, n_informative=4, n_classes=3, random_state=2
    )
    order = np.r_[np.flatnonzero(y != 0), np.flatnonzero(y == 0)[:50]]
    X, y = X[order], np.array(["ant", "bee", "cow"])[y[order]]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        threads = ParameterMixingClassifier(
            MarginPerceptron(max_iter=5, random_state=0), n_shards=3
        ).fit(X, y)
        on_dask = ParameterMixingClassifier(
            MarginPerceptron(max_iter=5, random_state=0)
        ).fit(*chunked(X, y, 3))
    assert (
        threads.classes_.tolist() == on_dask.classes_.tolist() == ["ant", "bee", "cow"]
    )
    assert same_weights(threads, on_dask)


@pytest.mark.parametrize("n_samples", [300, 40])
def test_many_classes_warn_as_on_the_threads(client, n_samples):
    """scikit-learn warns that y may be a regression target when it holds
    more distinct labels than half its length: the cluster, which pools the
    labels of each partition, warns exactly when the threads do."""
    rng = np.random.RandomState(0)
    y = np.r_[np.arange(25), rng.randint(0, 25, n_samples - 25)]
    X = rng.normal(size=(n_samples, 3))

    def warned(fit):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            fit()
        return any("unique classes" in str(w.message) for w in caught)

    def make():
        return ParameterMixingClassifier(MarginPerceptron(max_iter=2), n_shards=2)

    # scikit-learn's own verdict on the whole y: a warning for 40 rows, none
    # for 300 (none for either from the versions that predate the warning)
    expected = warned(lambda: check_classification_targets(y))
    assert warned(lambda: make().fit(X, y)) == expected
    assert warned(lambda: make().fit(*chunked(X, y, 2))) == expected


def test_partial_fit_on_dask_refuses_what_it_cannot_continue(client):
    X, y = make_classification(n_samples=300, n_features=5, random_state=0)
    clf = ParameterMixingClassifier(MarginPerceptron(random_state=0))
    with pytest.raises(ValueError, match="classes must be passed"):
        clf.partial_fit(*chunked(X, y, 2))
    clf.partial_fit(*chunked(X, y, 2), classes=[0, 1])
    with pytest.raises(ValueError, match=r"labels \[2\]"):
        clf.partial_fit(*chunked(X, np.where(y == 1, 2, y), 2))
    with pytest.raises(ValueError, match="features"):
        clf.partial_fit(*chunked(X[:, :3], y, 2))


def test_input_whose_products_underflow_is_refused_as_on_the_threads(client):
    """The largest value of the whole sample decides, as on the threads:
    tiny values everywhere are refused before any work, tiny values in
    one shard only train (the first row is tiny either way)."""
    X, y = make_margin_classification(600, 3, margin=0.2, random_state=0)
    tiny = X * 1e-170
    with pytest.raises(ValueError, match="underflows"):
        ParameterMixingClassifier().fit(*chunked(tiny, y, 2))
    with pytest.raises(ValueError, match="underflows"):
        ParameterMixingClassifier().partial_fit(
            *chunked(tiny, y, 2), classes=np.unique(y)
        )
    for tiny_rows in (slice(0, 300), slice(0, 600, 2)):
        mixed = X.copy()
        mixed[tiny_rows] *= 1e-170
        threads = ParameterMixingClassifier(
            MarginPerceptron(random_state=0), n_shards=2
        ).fit(mixed, y)
        on_dask = ParameterMixingClassifier(MarginPerceptron(random_state=0)).fit(
            *chunked(mixed, y, 2)
        )
        assert same_weights(threads, on_dask)


def outcome(clf, *data):
    """The weights of clf fitted on data, or the type and message of the
    error of the fit."""
    try:
        clf.fit(*data)
    except (ValueError, TypeError) as error:
        return type(error), str(error)
    return clf.coef_.tolist(), clf.intercept_.tolist(), clf.n_iter_


def test_partitions_without_held_out_rows_stop_early_as_the_threads(client):
    """Early stopping on partitions of 5 rows, most of which hold no
    held-out row: the scoring of an empty part raised from gen_batches,
    with every default at 2,100 rows on 64 shards too."""
    X, y = make_classification(n_samples=300, n_features=6, random_state=1)
    estimator = MarginPerceptron(random_state=0, early_stopping=True)
    threads = ParameterMixingClassifier(estimator, n_shards=60).fit(X, y)
    on_dask = ParameterMixingClassifier(estimator).fit(*chunked(X, y, 60))
    assert same_weights(threads, on_dask)
    assert threads.validation_scores_ == on_dask.validation_scores_


def test_partitions_of_no_rows_and_more_shards_than_rows(client):
    """Partitions of 0 rows (the user's, or n_shards above the number of
    rows) failed in the validation of each block: they are no shards, as
    the threads cap n_shards at the rows."""
    X, y = make_classification(n_samples=600, n_features=5, random_state=0)
    estimator = MarginPerceptron(random_state=0, max_iter=5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        threads = ParameterMixingClassifier(estimator, n_shards=2).fit(X, y)
        gapped = ParameterMixingClassifier(estimator).fit(
            da.from_array(X, chunks=((300, 0, 300), 5)),
            da.from_array(y, chunks=((300, 0, 300),)),
        )
        assert same_weights(threads, gapped)
        assert gapped.n_shards_ == 2
        few = ParameterMixingClassifier(estimator, n_shards=8)
        assert few.fit(*chunked(X[:5], y[:5], 1)).n_shards_ == 5
        assert same_weights(few, few.fit(X[:5], y[:5]))


def test_weights_are_checked_as_on_the_threads(client):
    """Class weights that the threads refuse (negative, infinite, a key
    that is no class) trained on dask, or failed in training; sample
    weights all 0 trained a model of zeros: each now gives the threads'
    outcome (scikit-learn's refusal of weights all 0 where its version
    makes one)."""
    X, y = make_classification(n_samples=600, n_features=5, random_state=0)
    cases = [
        ({0: -1.0}, None),
        ({0: np.inf}, None),
        ({0: 1.0, 5: 2.0}, None),
        ({0: 2.0}, None),
        (None, np.zeros(len(y))),
    ]
    for class_weight, weight in cases:
        estimator = MarginPerceptron(class_weight=class_weight, random_state=0)
        on_threads = outcome(
            ParameterMixingClassifier(estimator, n_shards=2), X, y, weight
        )
        on_dask = outcome(
            ParameterMixingClassifier(estimator), *chunked(X, y, 2, weight)
        )
        assert on_dask == on_threads, (class_weight, weight)
        if class_weight != {0: 2.0} and weight is None:
            assert on_threads[0] is ValueError


@pytest.mark.parametrize("kind", ["numpy strings", "string", "category", "column"])
def test_labels_that_are_no_dask_array_as_on_the_threads(client, kind):
    """Labels of pandas' extension dtypes, and numpy strings, with a dask X
    failed in dask's rechunking ("Cannot interpret ..." or "Can not use
    auto rechunking with object dtype"); a column vector in dask's shapes."""
    X, y = make_classification(n_samples=600, n_features=5, random_state=0)
    labels = np.array(["no", "yes"])[y]
    if kind in ("string", "category"):
        pd = pytest.importorskip("pandas")
        labels = pd.Series(labels, dtype=kind)
    elif kind == "column":
        labels = labels[:, None]
    estimator = MarginPerceptron(random_state=0, max_iter=5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        warnings.simplefilter("ignore", DataConversionWarning)
        threads = ParameterMixingClassifier(estimator, n_shards=2).fit(X, labels)
        on_dask = ParameterMixingClassifier(estimator).fit(chunked(X, y, 2)[0], labels)
    assert on_dask.classes_.tolist() == threads.classes_.tolist() == ["no", "yes"]
    assert same_weights(threads, on_dask)


def test_mixed_label_types_are_refused_as_on_the_threads(client):
    """Labels of mixed types, in one partition or across two: a TypeError
    from np.unique on a worker or on the client, where the threads give
    scikit-learn's ValueError (each partition here starts with a number,
    as y does, which decides scikit-learn's error)."""
    X, _ = make_classification(n_samples=600, n_features=5, random_state=0)
    for labels in (
        np.array([0, "one"] * 300, dtype=object),
        np.array([0] * 300 + ["one"] * 300, dtype=object),
    ):
        on_threads = outcome(ParameterMixingClassifier(n_shards=2), X, labels)
        assert on_threads[0] is ValueError
        assert outcome(ParameterMixingClassifier(), *chunked(X, labels, 2)) == (
            on_threads
        )


def test_unclear_collections_are_named_before_any_work(client):
    X, y = make_classification(n_samples=600, n_features=5, random_state=0)
    dX, dy, dw = chunked(X, y, 2, np.ones(len(y)))
    clf = ParameterMixingClassifier()
    with pytest.raises(ValueError, match="X has 600 rows and y 500"):
        clf.fit(dX, dy[:500])
    with pytest.raises(ValueError, match="X has 600 rows and sample_weight 500"):
        clf.fit(dX, dy, dw[:500])
    kept = dy == 1
    with pytest.raises(ValueError, match="unknown chunk sizes.*compute_chunk_sizes"):
        clf.fit(dX[kept], dy[kept])


def test_a_fit_on_a_dask_array_keeps_no_column_names(client):
    """A fit on a DataFrame, then on a dask array: the names stayed, and
    the model refused the new columns' names."""
    pd = pytest.importorskip("pandas")
    X, y = make_classification(n_samples=600, n_features=5, random_state=0)
    clf = ParameterMixingClassifier(MarginPerceptron(random_state=0), n_shards=2)
    clf.fit(pd.DataFrame(X, columns=[f"f{i}" for i in range(5)]), y)
    assert clf.feature_names_in_.tolist() == [f"f{i}" for i in range(5)]
    clf.fit(*chunked(X[:, :4], y, 2))
    assert not hasattr(clf, "feature_names_in_")
    assert not hasattr(clf.estimator_, "feature_names_in_")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        clf.predict(X[:, :4])
    # scikit-learn's warning, where the old names raised an error
    named = pd.DataFrame(X[:, :4], columns=[f"g{i}" for i in range(4)])
    with pytest.warns(UserWarning, match="fitted without feature names"):
        clf.predict(named)


def test_a_cluster_without_workers_is_named():
    """An adaptive cluster, or one whose workers are starting: "min() arg
    is an empty sequence"."""
    X, y = make_classification(n_samples=60, n_features=5, random_state=0)
    with (
        distributed.LocalCluster(
            n_workers=0, processes=False, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster),
    ):
        with pytest.raises(ValueError, match="no workers yet"):
            ParameterMixingClassifier().fit(*chunked(X, y, 2))


def test_dask_dataframe(client):
    # dask's dataframes need pyarrow, which the 'distributed' extra leaves out
    dd = pytest.importorskip("dask.dataframe")
    pd = pytest.importorskip("pandas")
    X, y = make_classification(n_samples=600, n_features=5, random_state=0)
    frame = dd.from_pandas(
        pd.DataFrame(X, columns=[f"f{i}" for i in range(5)]), npartitions=2
    )
    labels = dd.from_pandas(pd.Series(y), npartitions=2)
    on_dask = ParameterMixingClassifier(MarginPerceptron(random_state=0)).fit(
        frame, labels
    )
    threads = ParameterMixingClassifier(
        MarginPerceptron(random_state=0), n_shards=2
    ).fit(X, y)
    assert same_weights(threads, on_dask)


def test_separable_data_ends_separated_within_the_bound(client):
    for seed in range(4):
        X, y = make_margin_classification(
            200, 5, margin=0.05, radius=2.0, random_state=seed
        )
        clf = ParameterMixingClassifier(
            MarginPerceptron(fit_intercept=False, tol=None, random_state=seed),
            n_shards=2,
        ).fit(*chunked(X, y, 2))
        assert clf.converged_ and clf.score(X, y) == 1.0
        assert clf.mixed_updates_[0] <= (2.0 / 0.05) ** 2


def test_a_separated_run_answers_toward_its_mean_as_on_the_threads(client):
    """A run that separates answers toward its mean (away from its last
    weights, which tol=None answers with after the same run) from the
    margins of every partition, of which only those that may bind travel:
    the threads' model, to the last bit."""
    for seed in range(3):
        X, y = make_margin_classification(
            600, 5, margin=0.05, radius=2.0, random_state=seed
        )
        estimator = MarginPerceptron(random_state=seed)
        threads = ParameterMixingClassifier(estimator, n_shards=3).fit(X, y)
        on_dask = ParameterMixingClassifier(estimator).fit(*chunked(X, y, 3))
        last = ParameterMixingClassifier(
            MarginPerceptron(tol=None, random_state=seed), n_shards=3
        ).fit(X, y)
        assert threads.converged_
        assert np.array_equal(threads.n_updates_, last.n_updates_)
        assert not np.array_equal(threads.coef_, last.coef_)
        assert same_weights(threads, on_dask)
        assert np.array_equal(threads.margin_, on_dask.margin_)


def test_noisy_data_reaches_the_single_machine_accuracy(client):
    X, y = make_classification(
        n_samples=6000, n_features=20, flip_y=0.05, random_state=0
    )
    train, test = slice(0, 4000), slice(4000, None)
    single = MarginPerceptron(random_state=0).fit(X[train], y[train])
    mixed = ParameterMixingClassifier(MarginPerceptron(random_state=0)).fit(
        *chunked(X[train], y[train], 2)
    )
    assert mixed.score(X[test], y[test]) >= single.score(X[test], y[test]) - 0.005


def loaded_by_tasks(X, y, n_shards):
    """X and y as dask arrays whose blocks tasks of the cluster make, as
    reading files does: left to itself the scheduler may make all of them
    on one worker."""
    dask = pytest.importorskip("dask")
    bounds = np.linspace(0, len(y), n_shards + 1).astype(np.intp)
    parts = [
        da.concatenate(
            [
                da.from_delayed(
                    dask.delayed(np.copy)(v[a:b]),
                    shape=(b - a, *v.shape[1:]),
                    dtype=v.dtype,
                )
                for a, b in zip(bounds[:-1], bounds[1:], strict=True)
            ]
        )
        for v in (X, y)
    ]
    return parts


def epochs_by_worker(stream):
    """The workers that ran the shards' epochs, and whether a shard had to
    fetch its rows or labels, or an epoch its shard or state, or early
    stopping a shard to hold out or score, from another worker."""
    epochs = [t for t in stream if str(t["key"]).startswith("_shard_epoch")]
    shards = [
        t
        for t in stream
        if str(t["key"]).startswith(("_load_block", "_hold_out", "_shard_score"))
    ]
    return (
        {t["worker"] for t in epochs},
        any(
            s["action"] == "transfer" for t in epochs + shards for s in t["startstops"]
        ),
    )


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_each_worker_trains_its_own_shard_where_it_was_loaded(client):
    """The shards are loaded one per worker, each from rows and labels made
    on its worker, and never move: every epoch runs on both workers at
    once, and early stopping (the default on 4,000 examples) holds out and
    scores each shard's examples where they lie."""
    X, y = make_classification(n_samples=4000, n_features=8, flip_y=0.1, random_state=0)
    for seed in range(3):
        with distributed.get_task_stream(client=client) as stream:
            clf = ParameterMixingClassifier(
                MarginPerceptron(tol=None, max_iter=8, random_state=seed)
            ).fit(*loaded_by_tasks(X, y, 2))
        assert clf.validation_scores_ is not None
        workers, moved = epochs_by_worker(stream.data)
        assert workers == set(client.nthreads()) and not moved


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
def test_shards_already_in_memory_stay_where_they_are(client):
    """Blocks that the cluster holds are trained where they are, not moved
    to spread the shards."""
    X, y = make_classification(n_samples=4000, n_features=8, random_state=0)
    worker = sorted(client.nthreads())[0]
    X, y = client.persist(chunked(X, y, 2), workers=[worker])
    distributed.wait([X, y])
    with distributed.get_task_stream(client=client) as stream:
        ParameterMixingClassifier(MarginPerceptron(max_iter=5, random_state=0)).fit(
            X, y
        )
    workers, moved = epochs_by_worker(stream.data)
    assert workers == {worker} and not moved


class KillOneWorker(ThresholdSchedule):
    """Rosenblatt's threshold, run from Python; on a dask worker, the
    ``t``-th update of the first shard to reach it ends that worker's
    process, once (``marker`` records that it happened)."""

    radius_rule = "none"

    def __init__(self, marker="", t=40):
        self.marker = marker
        self.t = t

    def threshold(self, t, radius):
        if t == self.t and distributed.worker.thread_state.__dict__.get("key"):
            try:
                os.close(os.open(self.marker, os.O_CREAT | os.O_EXCL))
            except FileExistsError:
                return 0.0
            os._exit(1)
        return 0.0


@pytest.mark.parametrize("early_stopping", [False, True])
def test_a_lost_worker_is_recomputed(tmp_path, early_stopping):
    """A worker process killed in the middle of an epoch: the cluster runs
    its shards again from the data and the mixed weights of each epoch
    (with early stopping, its held-out part too), and the fit ends with the
    model of an undisturbed run."""
    X, y = make_classification(n_samples=2000, n_features=8, flip_y=0.1, random_state=0)
    schedule = KillOneWorker(marker=str(tmp_path / "killed"))
    estimator = MarginPerceptron(
        beta=schedule,
        tol=None,
        max_iter=15,
        early_stopping=early_stopping,
        random_state=0,
    )
    with local_cluster() as cluster, distributed.Client(cluster):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            on_dask = ParameterMixingClassifier(estimator).fit(*chunked(X, y, 2))
    assert os.path.exists(schedule.marker), "no worker was killed"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        threads = ParameterMixingClassifier(estimator, n_shards=2).fit(X, y)
    assert same_weights(threads, on_dask)
    assert on_dask.validation_scores_ == threads.validation_scores_
