# cython: language_level=3, boundscheck=False, wraparound=False
# cython: cdivision=True, initializedcheck=False
"""Compiled halving over decision stumps.

The stumps of feature j are ``sign(s (x_j - theta_k))`` for the sorted
thresholds ``theta_0 < ... < theta_{T-1}`` of j and the signs s = +1, -1,
each (feature, sign) pair a block of T consecutive concept indices. On
an example, the stumps of a block that predict +1 are a prefix (s = +1:
``theta_k <= x_j``) or a suffix (s = -1: ``theta_k >= x_j``) of the block,
found by one binary search, and so are the stumps one label refutes. So:

- the mistake counts of all stumps are kept exactly as a difference array,
  two entries per block and example;
- the version space is the set of stumps that had the fewest mistakes at
  the last restart (a membership prefix sum over the concept indices) cut
  down to one interval ``[lo, hi)`` per block by the examples since;
- a vote, a version space size or the r-th member of the version space
  costs a binary search per block, whatever the number of thresholds.

When a label empties the version space, the counts are summed up, the
stumps with the fewest mistakes become the version space and the
intervals are reset: O(n_concepts), once per increase of the fewest count.
"""

from cpython.exc cimport PyErr_CheckSignals
from libc.stdint cimport int32_t, int64_t

import numpy as np

# Units of work (a block visited for one problem and example, or a concept
# summed up by a restart) between two looks for an interrupt: some
# milliseconds, so that Ctrl-C ends a long pass at once.
cdef enum:
    CHECK_EVERY = 1 << 20


cdef inline Py_ssize_t _count_at_most(const double[::1] thresholds,
                                      Py_ssize_t start, Py_ssize_t stop,
                                      double x) noexcept nogil:
    """How many of thresholds[start:stop] are <= x."""
    cdef Py_ssize_t low = start, high = stop, middle
    while low < high:
        middle = (low + high) >> 1
        if thresholds[middle] <= x:
            low = middle + 1
        else:
            high = middle
    return low - start


cdef inline Py_ssize_t _count_below(const double[::1] thresholds,
                                    Py_ssize_t start, Py_ssize_t stop,
                                    double x) noexcept nogil:
    """How many of thresholds[start:stop] are < x."""
    cdef Py_ssize_t low = start, high = stop, middle
    while low < high:
        middle = (low + high) >> 1
        if thresholds[middle] < x:
            low = middle + 1
        else:
            high = middle
    return low - start


cdef inline Py_ssize_t _clip(Py_ssize_t value, Py_ssize_t low,
                             Py_ssize_t high) noexcept nogil:
    return low if value < low else (high if value > high else value)


cdef inline void _split_at(double x, Py_ssize_t j,
                           const double[::1] thresholds,
                           const int64_t[::1] threshold_ptr,
                           Py_ssize_t* split) noexcept nogil:
    """split[2j] stumps of feature j and sign +1 predict +1 on x_j = x (a
    prefix of the block); the stumps of sign -1 from split[2j + 1] on
    predict +1."""
    cdef Py_ssize_t start = threshold_ptr[j], stop = threshold_ptr[j + 1]
    split[2 * j] = _count_at_most(thresholds, start, stop, x)
    split[2 * j + 1] = _count_below(thresholds, start, stop, x)


cdef struct Rows:
    # a C-contiguous float64 array, or the arrays of a CSR matrix, read
    # where they lie: its indices are int32 (indices32, indptr32) or int64
    bint sparse
    bint wide_indices
    Py_ssize_t n_features
    const double* dense
    const double* data
    const int32_t* indices32
    const int32_t* indptr32
    const int64_t* indices
    const int64_t* indptr
    # the split points of every block on a row of zeros
    const Py_ssize_t* zero_split


cdef inline void _split_row(const Rows* rows, Py_ssize_t i,
                            const double[::1] thresholds,
                            const int64_t[::1] threshold_ptr,
                            Py_ssize_t* split) noexcept nogil:
    """The split points of every block on row i."""
    cdef Py_ssize_t j, k
    cdef const double* row
    if rows.sparse:
        for j in range(2 * rows.n_features):
            split[j] = rows.zero_split[j]
        if rows.wide_indices:
            for k in range(rows.indptr[i], rows.indptr[i + 1]):
                _split_at(rows.data[k], rows.indices[k], thresholds,
                          threshold_ptr, split)
        else:
            for k in range(rows.indptr32[i], rows.indptr32[i + 1]):
                _split_at(rows.data[k], rows.indices32[k], thresholds,
                          threshold_ptr, split)
    else:
        row = rows.dense + i * rows.n_features
        for j in range(rows.n_features):
            _split_at(row[j], j, thresholds, threshold_ptr, split)


cdef class _CheckedRows:
    """The rows of X, a C-contiguous float64 array or a CSR matrix, checked
    against the stumps, and held while ``rows`` points into them."""

    cdef Rows rows
    cdef readonly Py_ssize_t n_rows
    cdef object arrays

    def __init__(self, X, const double[::1] thresholds,
                 const int64_t[::1] threshold_ptr):
        cdef const double[:, ::1] dense
        cdef const double[::1] data
        cdef const int32_t[::1] indices32, indptr32
        cdef const int64_t[::1] indices, indptr
        cdef Py_ssize_t[::1] zero_split
        cdef Py_ssize_t j, n_features
        cdef object index_arrays
        self.rows.sparse = not isinstance(X, np.ndarray)
        if self.rows.sparse:
            self.n_rows, n_features = X.shape
            data = X.data
            # scipy's indices are int32, or int64 for large matrices: both
            # are read where they lie, where a copy would take 4 or 8 bytes
            # a value; indices of other forms are copied to int64
            self.rows.wide_indices = not (
                X.indices.dtype == np.int32 and X.indptr.dtype == np.int32
            )
            index_dtype = np.int64 if self.rows.wide_indices else np.int32
            index_arrays = (
                np.ascontiguousarray(X.indices, dtype=index_dtype),
                np.ascontiguousarray(X.indptr, dtype=index_dtype),
            )
            if self.rows.wide_indices:
                indices, indptr = index_arrays
                _check_csr(data, indices, indptr, self.n_rows, n_features)
                self.rows.indices = &indices[0] if indices.shape[0] else NULL
                self.rows.indptr = &indptr[0]
            else:
                indices32, indptr32 = index_arrays
                _check_csr(data, indices32, indptr32, self.n_rows, n_features)
                self.rows.indices32 = (
                    &indices32[0] if indices32.shape[0] else NULL
                )
                self.rows.indptr32 = &indptr32[0]
            _check_thresholds(thresholds, threshold_ptr, n_features)
            zero_split = np.empty(2 * n_features, dtype=np.intp)
            for j in range(n_features):
                _split_at(0.0, j, thresholds, threshold_ptr, &zero_split[0])
            self.arrays = (data, index_arrays, zero_split)
            self.rows.data = &data[0] if data.shape[0] else NULL
            self.rows.zero_split = &zero_split[0]
        else:
            dense = X
            self.n_rows, n_features = dense.shape[0], dense.shape[1]
            _check_thresholds(thresholds, threshold_ptr, n_features)
            self.arrays = dense
            self.rows.dense = &dense[0, 0] if dense.shape[0] else NULL
        self.rows.n_features = n_features


ctypedef fused index_t:
    int32_t
    int64_t


def _check_csr(const double[::1] data, const index_t[::1] indices,
               const index_t[::1] indptr, Py_ssize_t n_rows,
               Py_ssize_t n_features):
    """Raise unless the CSR arrays index within their declared shape."""
    cdef Py_ssize_t i, k
    if indptr.shape[0] != n_rows + 1 or indices.shape[0] != data.shape[0]:
        raise ValueError(
            f"A CSR matrix of {n_rows} rows needs {n_rows + 1} row pointers "
            f"and as many column indices as values; got {indptr.shape[0]} "
            f"pointers, {indices.shape[0]} indices and {data.shape[0]} values."
        )
    if indptr[0] != 0 or indptr[n_rows] != data.shape[0]:
        raise ValueError("The row pointers of the CSR matrix do not span its values.")
    for i in range(n_rows):
        if indptr[i + 1] < indptr[i]:
            raise ValueError("The row pointers of the CSR matrix decrease.")
    for k in range(indices.shape[0]):
        if not 0 <= indices[k] < n_features:
            raise ValueError(
                f"The CSR matrix has column index {indices[k]} outside its "
                f"{n_features} columns."
            )


def _check_thresholds(const double[::1] thresholds,
                      const int64_t[::1] threshold_ptr, Py_ssize_t n_features):
    """Raise unless threshold_ptr splits thresholds into n_features runs."""
    cdef Py_ssize_t j
    if threshold_ptr.shape[0] != n_features + 1:
        raise ValueError(
            f"threshold_ptr has {threshold_ptr.shape[0]} entries for "
            f"{n_features} features; it needs {n_features + 1}."
        )
    if threshold_ptr[0] != 0 or threshold_ptr[n_features] != thresholds.shape[0]:
        raise ValueError(
            f"threshold_ptr must run from 0 to the {thresholds.shape[0]} "
            f"thresholds; it runs from {threshold_ptr[0]} to "
            f"{threshold_ptr[n_features]}."
        )
    for j in range(n_features):
        if threshold_ptr[j + 1] < threshold_ptr[j]:
            raise ValueError("threshold_ptr must not decrease.")


def _check_spaces(const int64_t[::1] threshold_ptr, prefix, lo, hi,
                  Py_ssize_t n_problems):
    """Raise unless the version space arrays (2-D, one row per problem)
    fit the stumps of threshold_ptr."""
    cdef Py_ssize_t n_blocks = 2 * (threshold_ptr.shape[0] - 1)
    cdef Py_ssize_t n_concepts = 2 * threshold_ptr[threshold_ptr.shape[0] - 1]
    _check_shape("prefix", prefix, (n_problems, n_concepts + 1))
    _check_shape("lo", lo, (n_problems, n_blocks))
    _check_shape("hi", hi, (n_problems, n_blocks))
    cdef const int64_t[:, ::1] low = lo, high = hi
    cdef Py_ssize_t p, b, size
    for p in range(n_problems):
        for b in range(n_blocks):
            size = _block_size(threshold_ptr, b)
            if not (0 <= low[p, b] <= size and 0 <= high[p, b] <= size):
                raise ValueError(
                    f"The interval [{low[p, b]}, {high[p, b]}) of block {b} "
                    f"does not lie in its {size} thresholds."
                )


def _check_shape(name, array, shape):
    if tuple(array.shape) != shape:
        raise ValueError(
            f"{name} has shape {tuple(array.shape)} where the stumps need {shape}."
        )


cdef inline Py_ssize_t _block_size(const int64_t[::1] threshold_ptr,
                                   Py_ssize_t b) noexcept nogil:
    return threshold_ptr[(b >> 1) + 1] - threshold_ptr[b >> 1]


cdef inline int64_t _rank(double draw, int64_t size) noexcept nogil:
    """floor(draw * size) for a draw in [0, 1), kept below size against
    the rounding of the product."""
    cdef int64_t rank = <int64_t>(draw * size)
    return rank if rank < size else size - 1


cdef inline Py_ssize_t _block_start(const int64_t[::1] threshold_ptr,
                                    Py_ssize_t b) noexcept nogil:
    """The first concept index of block b (feature b // 2, sign by parity)."""
    cdef Py_ssize_t j = b >> 1
    return 2 * threshold_ptr[j] + (b & 1) * _block_size(threshold_ptr, b)


cdef inline Py_ssize_t _block_of(const int64_t[::1] threshold_ptr,
                                 Py_ssize_t concept) noexcept nogil:
    """The block holding a concept index: binary search over the features."""
    cdef Py_ssize_t low = 0, high = threshold_ptr.shape[0] - 2, middle
    while low < high:
        middle = (low + high + 1) >> 1
        if 2 * threshold_ptr[middle] <= concept:
            low = middle
        else:
            high = middle - 1
    return 2 * low + (concept >= 2 * threshold_ptr[low]
                      + threshold_ptr[low + 1] - threshold_ptr[low])


cdef void _votes(const int64_t[::1] threshold_ptr, const int64_t[::1] prefix,
                 const int64_t[::1] lo, const int64_t[::1] hi,
                 const Py_ssize_t* split, int64_t* positive,
                 int64_t* size) noexcept nogil:
    """Members of the version space, and those of them predicting +1."""
    cdef Py_ssize_t b, start, first, last, cut
    positive[0] = 0
    size[0] = 0
    for b in range(lo.shape[0]):
        start = _block_start(threshold_ptr, b)
        first = start + lo[b]
        last = start + hi[b]
        if first >= last:
            continue
        cut = start + _clip(split[b], lo[b], hi[b])
        size[0] += prefix[last] - prefix[first]
        if b & 1:
            positive[0] += prefix[last] - prefix[cut]
        else:
            positive[0] += prefix[cut] - prefix[first]


cdef int64_t _size(const int64_t[::1] threshold_ptr, const int64_t[::1] prefix,
                   const int64_t[::1] lo, const int64_t[::1] hi) noexcept nogil:
    """The number of members of the version space."""
    cdef Py_ssize_t b, start
    cdef int64_t size = 0
    for b in range(lo.shape[0]):
        start = _block_start(threshold_ptr, b)
        if hi[b] > lo[b]:
            size += prefix[start + hi[b]] - prefix[start + lo[b]]
    return size


cdef Py_ssize_t _member(const int64_t[::1] threshold_ptr,
                        const int64_t[::1] prefix, const int64_t[::1] lo,
                        const int64_t[::1] hi, int64_t rank) noexcept nogil:
    """The concept index of the rank-th member (from 0, in index order)."""
    cdef Py_ssize_t b, start, first, last, low, high, middle
    cdef int64_t inside
    for b in range(lo.shape[0]):
        start = _block_start(threshold_ptr, b)
        first = start + lo[b]
        last = start + hi[b]
        if first >= last:
            continue
        inside = prefix[last] - prefix[first]
        if rank >= inside:
            rank -= inside
            continue
        # the smallest index c in [first, last) with prefix[c + 1] - prefix[first] > rank
        low = first
        high = last - 1
        while low < high:
            middle = (low + high) >> 1
            if prefix[middle + 1] - prefix[first] > rank:
                high = middle
            else:
                low = middle + 1
        return low
    return -1


cdef void _restart(const int64_t[::1] threshold_ptr, const int64_t[::1] diff,
                   int64_t[::1] prefix, int64_t[::1] lo, int64_t[::1] hi,
                   int64_t* level) noexcept nogil:
    """Make the stumps with the fewest mistakes the version space."""
    cdef Py_ssize_t c, b, n_concepts = prefix.shape[0] - 1
    cdef int64_t count = 0, fewest = -1
    for c in range(n_concepts):
        count += diff[c]
        if fewest < 0 or count < fewest:
            fewest = count
    count = 0
    prefix[0] = 0
    for c in range(n_concepts):
        count += diff[c]
        prefix[c + 1] = prefix[c] + (count == fewest)
    for b in range(lo.shape[0]):
        lo[b] = 0
        hi[b] = _block_size(threshold_ptr, b)
    level[0] = fewest


cdef int _interrupted(const unsigned char* stop) except -1 nogil:
    """-1 with KeyboardInterrupt set after Ctrl-C (in the main thread) or
    once ``stop`` is set, when another block of the pass was interrupted."""
    with gil:
        if stop[0]:
            raise KeyboardInterrupt
        PyErr_CheckSignals()
    return 0


def run_stumps(
    X,
    const int32_t[::1] codes,
    Py_ssize_t first_class,
    const double[::1] thresholds,
    const int64_t[::1] threshold_ptr,
    int64_t[:, ::1] diff,
    int64_t[:, ::1] prefix,
    int64_t[:, ::1] lo,
    int64_t[:, ::1] hi,
    int64_t[::1] level,
    int64_t[::1] n_mistakes,
    const double[:, ::1] draws,
    bint randomized,
    const unsigned char[::1] stop,
):
    """One online pass of (randomized) halving for a block of problems.

    X is a C-contiguous float64 array or a CSR matrix (float64 values).
    Problem p labels the examples of class ``first_class + p`` as +1. Each
    example is predicted (majority vote, ties +1; or the member of rank
    ``floor(draws[i, p] * size)``), counted as a mistake when wrong, then
    used to update the counts and the version space.

    Raises KeyboardInterrupt, within milliseconds, after Ctrl-C or once
    ``stop[0]`` is set (by the caller, when another block was interrupted),
    with the arrays partly updated.
    """
    cdef _CheckedRows checked = _CheckedRows(X, thresholds, threshold_ptr)
    cdef const Rows* rows = &checked.rows
    cdef Py_ssize_t n_rows = checked.n_rows
    cdef Py_ssize_t n_blocks = lo.shape[1], n_problems = lo.shape[0]
    _check_spaces(threshold_ptr, prefix, lo, hi, n_problems)
    _check_shape("diff", diff, (prefix.shape[0], prefix.shape[1]))
    _check_shape("level", level, (n_problems,))
    _check_shape("n_mistakes", n_mistakes, (n_problems,))
    _check_shape("codes", codes, (n_rows,))
    _check_shape("draws", draws, (n_rows, n_problems))
    _check_shape("stop", stop, (1,))
    cdef Py_ssize_t i, p, b, start, end, cut, member
    cdef Py_ssize_t n_concepts = prefix.shape[1] - 1
    cdef int64_t positive, size, label, work = 0
    cdef bint predict_positive
    cdef Py_ssize_t[::1] split = np.empty(n_blocks, dtype=np.intp)
    with nogil:
        for i in range(n_rows):
            _split_row(rows, i, thresholds, threshold_ptr, &split[0])
            for p in range(n_problems):
                label = 1 if codes[i] == first_class + p else -1
                _votes(threshold_ptr, prefix[p], lo[p], hi[p], &split[0],
                       &positive, &size)
                if randomized:
                    member = _member(threshold_ptr, prefix[p], lo[p], hi[p],
                                     _rank(draws[i, p], size))
                    b = _block_of(threshold_ptr, member)
                    start = _block_start(threshold_ptr, b)
                    cut = start + split[b]
                    predict_positive = (member >= cut) if b & 1 else (member < cut)
                else:
                    predict_positive = 2 * positive >= size
                if predict_positive != (label > 0):
                    n_mistakes[p] += 1
                for b in range(n_blocks):
                    start = _block_start(threshold_ptr, b)
                    end = start + _block_size(threshold_ptr, b)
                    cut = start + split[b]
                    # the stumps of the block that predict -label err
                    if (label > 0) == ((b & 1) == 0):
                        diff[p, cut] += 1
                        diff[p, end] -= 1
                        hi[p, b] = min(hi[p, b], split[b])
                    else:
                        diff[p, start] += 1
                        diff[p, cut] -= 1
                        lo[p, b] = max(lo[p, b], split[b])
                work += n_blocks
                if _size(threshold_ptr, prefix[p], lo[p], hi[p]) == 0:
                    _restart(threshold_ptr, diff[p], prefix[p], lo[p], hi[p],
                             &level[p])
                    work += n_concepts
            if work >= CHECK_EVERY:
                work = 0
                _interrupted(&stop[0])


def stump_votes(
    X,
    const double[::1] thresholds,
    const int64_t[::1] threshold_ptr,
    const int64_t[:, ::1] prefix,
    const int64_t[:, ::1] lo,
    const int64_t[:, ::1] hi,
    int64_t[:, ::1] positive,
    int64_t[::1] size,
):
    """The members of each problem's version space voting +1 on each row
    of X (a C-contiguous float64 array or a CSR matrix), and the size of
    each version space."""
    cdef _CheckedRows checked = _CheckedRows(X, thresholds, threshold_ptr)
    cdef const Rows* rows = &checked.rows
    cdef Py_ssize_t n_rows = checked.n_rows
    cdef Py_ssize_t i, p, n_problems = lo.shape[0]
    _check_spaces(threshold_ptr, prefix, lo, hi, n_problems)
    _check_shape("positive", positive, (n_rows, n_problems))
    _check_shape("size", size, (n_problems,))
    cdef int64_t ignored
    cdef Py_ssize_t[::1] split = np.empty(lo.shape[1], dtype=np.intp)
    with nogil:
        for p in range(n_problems):
            size[p] = _size(threshold_ptr, prefix[p], lo[p], hi[p])
        for i in range(n_rows):
            _split_row(rows, i, thresholds, threshold_ptr, &split[0])
            for p in range(n_problems):
                _votes(threshold_ptr, prefix[p], lo[p], hi[p], &split[0],
                       &positive[i, p], &ignored)


def stump_member(
    const int64_t[::1] threshold_ptr,
    const int64_t[::1] prefix,
    const int64_t[::1] lo,
    const int64_t[::1] hi,
    double draw,
):
    """The member of rank floor(draw * size) of a version space."""
    _check_spaces(threshold_ptr, np.asarray(prefix)[None], np.asarray(lo)[None],
                  np.asarray(hi)[None], 1)
    cdef int64_t size = _size(threshold_ptr, prefix, lo, hi)
    return _member(threshold_ptr, prefix, lo, hi, _rank(draw, size))
