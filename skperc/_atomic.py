"""Fits that publish their model in one step, and reads of one model.

A fit (``fit``, ``partial_fit``) runs on a shallow copy of the estimator
and, once it has completed, replaces the estimator's attributes with the
copy's in one assignment of ``__dict__``: a fit that raises, or is
interrupted, leaves the previous model as it was (an unfitted estimator
stays unfitted), and a thread that reads the model sees the old one or the
new one, never a mixture. The fits of one estimator run one at a time, so
that two threads calling ``partial_fit`` both count.

A fit on the copy writes into the arrays it shares with the estimator
only through :func:`write_in_place`, which keeps what it overwrites: the
writes are undone if the fit does not complete, and no read of the model
runs from the first of them until the new model is published. So a fit of
a large model can write only the part of it that its batch changes.
"""

import contextlib
import functools
import threading
import weakref

_LOCKS = weakref.WeakKeyDictionary()
_PUBLISH_LOCKS = weakref.WeakKeyDictionary()
_LOCKS_GUARD = threading.Lock()
# The fit running in this thread: its publish lock and its undo records;
# the snapshot that the read running in this thread reads (consistent_read).
_CURRENT = threading.local()


class _PublishLock:
    """Reads of a model share it; the in-place writes of a fit and its
    publication hold it alone."""

    def __init__(self):
        self._condition = threading.Condition(threading.Lock())
        self._readers = 0
        self._writing = False

    @contextlib.contextmanager
    def reading(self):
        with self._condition:
            while self._writing:
                self._condition.wait()
            self._readers += 1
        try:
            yield
        finally:
            with self._condition:
                self._readers -= 1
                self._condition.notify_all()

    def acquire_writing(self):
        with self._condition:
            # new reads wait from here, so that a stream of them cannot
            # keep the writer out
            self._writing = True
            while self._readers:
                self._condition.wait()

    def release_writing(self):
        with self._condition:
            self._writing = False
            self._condition.notify_all()


def _fit_lock(estimator):
    """The lock that serialises the fits of ``estimator`` (not of its
    clones or pickled copies, which are other models)."""
    with _LOCKS_GUARD:
        lock = _LOCKS.get(estimator)
        if lock is None:
            lock = _LOCKS[estimator] = threading.RLock()
        return lock


def snapshot(estimator):
    """A shallow copy of ``estimator``, taken in one step: the model as it
    is at this instant, which a concurrent fit does not change."""
    view = object.__new__(type(estimator))
    # one C call under the GIL: no fit publishes in the middle of it
    view.__dict__.update(estimator.__dict__)
    return view


def _publish_lock(estimator):
    """The lock between the reads of ``estimator``'s model and the fits
    that publish a new one."""
    with _LOCKS_GUARD:
        lock = _PUBLISH_LOCKS.get(estimator)
        if lock is None:
            lock = _PUBLISH_LOCKS[estimator] = _PublishLock()
        return lock


def write_in_place(array, rows, values):
    """``array[rows] = values`` within the fit running in this thread (a
    method decorated by :func:`atomic_fit`), on an array that the published
    model may share: reads of the model wait from here until the fit
    publishes, and the rows are restored if the fit does not complete."""
    fit = _CURRENT.fit
    if not fit["writing"]:
        fit["lock"].acquire_writing()
        fit["writing"] = True
    kept = array[rows]
    array[rows] = values
    fit["undo"].append((array, rows, kept))


def atomic_fit(method):
    """Decorate a fit method so that it publishes its model in one step.

    The method runs on a snapshot of the estimator, under the estimator's
    lock, and its result's attributes replace the estimator's only when it
    returns; the writes it made with :func:`write_in_place` are undone if
    it raises.
    """

    @functools.wraps(method)
    def fit(self, *args, **kwargs):
        with _fit_lock(self):
            lock = _publish_lock(self)
            outer = getattr(_CURRENT, "fit", None)
            _CURRENT.fit = record = {"lock": lock, "writing": False, "undo": []}
            try:
                work = snapshot(self)
                method(work, *args, **kwargs)
                if not record["writing"]:
                    lock.acquire_writing()
                    record["writing"] = True
                self.__dict__ = work.__dict__
                record["undo"].clear()
            finally:
                for array, rows, values in reversed(record["undo"]):
                    array[rows] = values
                if record["writing"]:
                    lock.release_writing()
                _CURRENT.fit = outer
        return self

    return fit


def reading_model(estimator):
    """A context in which no fit of ``estimator`` writes its model."""
    return _publish_lock(estimator).reading()


def consistent_read(method):
    """Decorate a method that reads the fitted model (``predict``,
    ``decision_function``, ...) so that it reads one model throughout,
    even while another thread fits."""

    @functools.wraps(method)
    def read(self, *args, **kwargs):
        outer = getattr(_CURRENT, "read", None)
        if outer is self:
            # a read within a read (predict's decision_function) reads the
            # snapshot that the outer one holds, which no fit can change: a
            # lock and a snapshot of its own took 12 us of a one-row predict
            return method(self, *args, **kwargs)
        with reading_model(self):
            _CURRENT.read = view = snapshot(self)
            try:
                return method(view, *args, **kwargs)
            finally:
                _CURRENT.read = outer

    return read
