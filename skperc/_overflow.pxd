# cython: language_level=3
"""The record of a compiled loop stopped by a value that overflowed.

A loop that meets a value that is not finite writes what it was, and where,
into a ``failure`` array of 4 int64 and returns; the estimator then raises
the error of skperc._nonfinite, which names each Quantity.
"""

from libc.float cimport DBL_MAX
from libc.math cimport fabs
from libc.stdint cimport int64_t

cpdef enum Quantity:
    SQUARED_RADIUS = 1
    THRESHOLD = 2
    DECISION_VALUE = 3
    WEIGHTS = 4
    AVERAGED_WEIGHTS = 5
    KERNEL_VALUE = 6
    # not an overflow: a kernel undefined on the input (set by the kernel
    # loop in place of KERNEL_VALUE when a value is NaN)
    KERNEL_NAN = 7


cdef inline bint finite(double value) noexcept nogil:
    """False for inf and NaN, in one comparison."""
    return fabs(value) <= DBL_MAX


cdef inline void fail(int64_t* failure, int quantity, Py_ssize_t epoch,
                      int64_t n_updates, Py_ssize_t problem) noexcept nogil:
    """Record the overflow of ``quantity`` in ``epoch`` (from 0), after
    ``n_updates`` updates of ``problem``."""
    failure[0] = quantity
    failure[1] = epoch + 1
    failure[2] = n_updates
    failure[3] = problem
