"""Fits that publish their model in one step, and reads of one model.

A fit (``fit``, ``partial_fit``) runs on a shallow copy of the estimator
and, once it has completed, replaces the estimator's attributes with the
copy's in one assignment of ``__dict__``: a fit that raises, or is
interrupted, leaves the previous model as it was (an unfitted estimator
stays unfitted), and a thread that reads the model sees the old one or the
new one, never a mixture. The fits of one estimator run one at a time, so
that two threads calling ``partial_fit`` both count.

A fit on the copy must not write into the arrays it shares with the
estimator: it replaces them, or writes into copies.
"""

import functools
import threading
import weakref

_LOCKS = weakref.WeakKeyDictionary()
_LOCKS_GUARD = threading.Lock()


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


def atomic_fit(method):
    """Decorate a fit method so that it publishes its model in one step.

    The method runs on a snapshot of the estimator, under the estimator's
    lock, and its result's attributes replace the estimator's only when it
    returns.
    """

    @functools.wraps(method)
    def fit(self, *args, **kwargs):
        with _fit_lock(self):
            work = snapshot(self)
            method(work, *args, **kwargs)
            self.__dict__ = work.__dict__
        return self

    return fit


def consistent_read(method):
    """Decorate a method that reads the fitted model (``predict``,
    ``decision_function``, ...) so that it reads one model throughout,
    even while another thread fits."""

    @functools.wraps(method)
    def read(self, *args, **kwargs):
        return method(snapshot(self), *args, **kwargs)

    return read
