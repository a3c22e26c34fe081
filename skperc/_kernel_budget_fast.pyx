# cython: language_level=3, boundscheck=False, wraparound=False
# cython: cdivision=True, initializedcheck=False
"""Compiled epochs of the kernel perceptron on a budget.

The loop keeps the support vectors themselves, at most ``budget`` rows,
and evaluates the function on each example it examines, f(x) = sum_s
coef[c, s] k(x_s, x): examining an example costs one kernel row over the
support and an update costs O(budget) more, whatever the number of
examples, where the loop of _kernel_perceptron_fast.pyx adds a column over
all points. The kernel, the threads of a step and the examination of an
example are that loop's (_kernel_perceptron_fast.pxd).
"""

from cython.parallel cimport parallel, prange, threadid
from libc.math cimport INFINITY, log, sqrt
from libc.stdint cimport int32_t, int64_t, uintptr_t
from libc.stdlib cimport calloc, free, qsort, realloc
from libc.string cimport memcpy, memmove, memset

# What the budgeted loop asks the processor for before it reads it, in
# the shuffled order of an epoch, which the hardware does not foresee:
# examining, the label, weight and slot of the example PREFETCH_AHEAD
# places on; the rows of a group of examples, up to ROW_PREFETCH_BYTES of
# each row of the next group (the hardware follows a row from there). On
# 1,000,000 examples of benchmarks/bench_kernel_scale.py (budget 500, one
# thread) the loop took 8.6 s against 9.7 s without.
cdef enum:
    PREFETCH_AHEAD = 8
    ROW_PREFETCH_BYTES = 512

import numpy as np
import scipy.sparse as sp

from . import _kernel_perceptron_fast
from ._kernel_perceptron_fast import (
    _line_aligned_zeros, kernel_products, paged_array, squared_norms,
)

from ._epochs cimport (
    CHECK_EVERY, Control, Epochs, active, begin_epoch, close_epochs, end_epoch,
    interrupted, open_epochs, rule_on, start_run,
)
from ._kernel_perceptron_fast cimport (
    KERNEL_PRECOMPUTED, KERNEL_PYTHON, KERNEL_RBF, SKPERC_PANEL, SKPERC_POINTS,
    Kernel, KernelSpec, PyTraceMalloc_Track, PyTraceMalloc_Untrack, Threads,
    _NUMPY_DOMAIN, _any_nan, _apply_kernel, _begin_epoch_threads,
    _dots_over, _end_step, _examine, _free_traced, _keep_threads,
    _n_blocks, _point, _see_norm, _set_kernel, _start_step, _start_threads,
    _threads, _weighted_sum, skperc_add, skperc_all_finite,
    skperc_dots_many_supported,
    skperc_dots_panels, skperc_dots_panels_at, skperc_dots_panels_points,
    skperc_exp_one, skperc_nonzero_features, skperc_set_simd, skperc_wall,
)
from ._overflow cimport KERNEL_NAN, KERNEL_VALUE, fail, finite
from ._rows cimport SKPERC_PREFETCH, squared_norm
from ._thresholds cimport Threshold, read_threshold

# simd.h's level is a static variable of each module that includes it: the
# products here run at the level of the loop of columns
SIMD_LEVEL = skperc_set_simd(_kernel_perceptron_fast.SIMD_LEVEL)

cpdef enum BudgetStrategy:
    BUDGET_REMOVE = 0
    BUDGET_MERGE = 1
    BUDGET_PROJECT = 2
    # the averaging epoch that ends a fit on a full budget (not a
    # budget_strategy): the support is kept, and an example that is no
    # support vector updates with its projection onto the span of its
    # nearest support vectors (_project)
    BUDGET_AVERAGING = 3

# The averaging epoch projects an example onto the span of its
# AVERAGING_NEIGHBOURS nearest support vectors (the largest kernel values),
# at the cost of O(budget) to find them and a system of that size, where a
# projection onto the whole support costs O(budget^2) per update: with a
# budget of 2,000 on the data of benchmarks/bench_kernel_scale.py (40,000
# examples) that made the fit slower than the unbudgeted one. Measured there
# with a budget of 500 (10,000 and 40,000 examples), the answer scored with
# merging 0.888 and 0.899 with 8 neighbours, 0.887 and 0.900 with 32, 0.888
# and 0.902 with the whole support, against the last function's 0.881 and
# 0.897; with removal 0.839 and 0.850, 0.846 and 0.859, 0.859 and 0.868,
# against 0.755 and 0.746; the epoch took 0.015 and 0.06 s with 8, 0.04 and
# 0.14 s with 32, 0.08 and 0.38 s with the whole support. The system is
# K + PROJECTION_RIDGE * max k(x_s, x_s) I: the ridge keeps it solvable
# where neighbours (nearly) coincide. BUDGET_PROJECT projects the vector it
# removes onto as many of the others, by the same system.
cdef enum:
    AVERAGING_NEIGHBOURS = 8
cdef double PROJECTION_RIDGE = 1e-8

# Golden-section steps of the merge: the bracket of h shrinks to
# 0.618^GOLDEN_STEPS = 0.0007 of the segment. On word counts most partners
# lie far from the vector merged into them and weigh far more, so that the
# best point lies a few thousandths of the way: a bracket of 0.008 (10
# steps) moved the partner by up to twice its best step, or not at all,
# and merge after merge the function drifted from the one it replaced. On
# the data of benchmarks/bench_kernel_scale.py (budget 500, one thread,
# medians of random_state 0 to 2) 10, 12, 15, 20 and 30 steps scored
# 0.787, 0.807, 0.814, 0.814 and 0.813 on the text data at 10,000 examples
# (its unbudgeted run: 0.797), and 0.864, 0.875, 0.875, 0.876 and 0.877 on
# the vocabulary (0.868); 10 and 15 steps 0.843 and 0.877 on the text data
# at 40,000 examples (0.874), and 0.879 and 0.904 on the vocabulary
# (0.899). The clusters and the wide data, whose best points lie further
# in, scored within a few tenths (0.886 and 0.886, 0.912 and 0.915 at
# 10,000 examples). With 20 steps the last brackets are narrower than the
# rounding of the loss tells apart: the loop and the reference of the
# tests, whose kernel values differ in their last bits, took different
# halves and ended apart. The steps cost a few exponentials a merge, but a
# partner now moves where it stayed, most of all the merged vectors of
# thousands of words that collect the far vectors: with 15 steps against 10
# the fits took 1.0 to 1.1 s against 0.6 to 0.7 s on the text data at
# 10,000 examples, 3.4 to 4.0 s against 1.3 to 1.5 s at 40,000 (its
# unbudgeted run: 6.8 s), 2.8 to 3.0 s against 0.8 to 1.3 s on the
# vocabulary at 10,000 (0.6 s), 14 to 16 s against 2.2 to 3.0 s at 40,000
# (5.9 s); 0.8 to 1.1 s against 0.6 to 0.7 s on the clusters at 40,000
# examples (in 6 epochs against 4) and 1.7 to 1.8 s against 1.4 to 1.7 s
# on the wide data (random_state=0, one thread, two rounds alternating,
# CPU time), while a merge rewrote and posted again the union of both
# rows. It now writes the smaller one's features alone (see
# Support.scale).
cdef enum:
    GOLDEN_STEPS = 15

# The examples whose kernel rows over the support are computed together,
# split among the threads, before the loop examines them one by one: the
# support vectors that change meanwhile (a merge, a removal, a new one) are
# marked, and only their values are computed again for the examples after
# the change. At 64 examples the threads share rows of 64 x budget values
# and an update marks about three slots of the budget. With more than one
# thread, the rows of the next block are computed while one thread
# examines the block (_examine_and_rows), from the panels or postings as
# the block began: its examples then compute again the slots changed in the
# block before theirs too. A CSR example computes each such value reading
# the changed support vector at its scattered stored features, and the
# examining thread, which computed them all, bounded the loop on two
# threads, in blocks of 32 CSR examples (on the text data of
# benchmarks/bench_kernel_scale.py, 10,000 examples, budget 500, merge, two
# threads: 0.88 to 0.97 s a fit in blocks of 32, 1.15 to 1.29 s in blocks
# of 16, 1.16 to 1.41 s in blocks of 64). The threads now compute those of
# the block before while one of them brings the postings up to date
# (_correct_group), and the examining thread those changed within its
# block alone; blocks of 64 CSR examples then took 0.250 s against 0.267 s
# on the text data at 10,000 examples and 0.289 s against 0.305 s on the
# vocabulary data (two threads), 0.366 s against 0.393 s and 0.421 s
# against 0.420 s on one (medians of 5 rounds alternating). Against the
# build before, in blocks of 32 without the split, two threads, medians of
# 7 rounds: 0.98 s against 1.22 s a fit on the vocabulary data at 40,000
# examples, 0.30 s against 0.31 s at 10,000; 0.78 s against 0.82 s and
# 0.238 s against 0.254 s on the text data; the same bits. Dense examples,
# whose values cost a product over their features, leave them to the
# examining thread: with the same split the clusters at 40,000 examples
# took 0.323 s against 0.311 s, the wide data 0.638 s against 0.625 s
# (medians of 7 rounds). The size of a block changes no bit.
cdef enum:
    BUDGET_BLOCK = 64
# With CSR examples, a support vector listed at up to VALUE_ROOM features
# keeps its values there beside its list (Support.row_values), which the
# loop reads in the order of the list where the dense rows would be read at
# features scattered over the features in use: the values that an example
# computes again, a merge, the postings. A longer list is read from the
# row. On the vocabulary data of benchmarks/bench_kernel_scale.py (10,000
# examples, budget 500, merge, one thread, three fits, alternating) the fits
# took 2.29 and 2.33 s against 2.65 and 2.80 s reading the rows alone; the
# same with a room of 2,048 (2.01 and 2.09 s against 2.04 and 2.11 s in a
# later run) for 9 MB more, and with the room of the lists (a quarter of the
# features in use: 2.29 and 2.35 s) for 37 MB more at the peak.
cdef enum:
    VALUE_ROOM = 512


cdef struct Marks:
    # a set of slots: whether each is in it, and its slots in order
    unsigned char* on         # (capacity,)
    int64_t* slots            # (capacity,): n of them
    Py_ssize_t n


cdef inline void _add_mark(Marks* marks, Py_ssize_t s) noexcept nogil:
    if not marks.on[s]:
        marks.on[s] = 1
        marks.slots[marks.n] = s
        marks.n += 1


cdef inline void _clear_marks(Marks* marks) noexcept nogil:
    cdef Py_ssize_t t
    for t in range(marks.n):
        marks.on[marks.slots[t]] = 0
    marks.n = 0


cdef struct Entry:
    # a slot's value at a feature, and the place of the feature in the
    # slot's list of features posted
    int32_t slot
    int32_t back
    double value


cdef struct Posted:
    # a feature where a slot is posted, and the place of its entry there
    int32_t feature
    int32_t place


cdef struct Postings:
    # a support by feature: at feature f, count[f] entries (room[f]
    # allocated), for the values that are not 0 alone, in no order; the
    # features where slot s is posted, in increasing order (posted[s],
    # posted_n[s] of posted_room[s]): an entry is taken out in O(1).
    # scratch: room for a list of every feature
    Entry** entries
    int32_t* count
    int32_t* room
    Posted** posted
    int32_t* posted_n
    int32_t* posted_room
    Posted* scratch
    # a feature of a DENSE_SHARE-th of capacity entries or more keeps its
    # values in a column over the capacity slots too (dense[f], +0 where a
    # slot has no entry; else NULL), from then to the end of the call
    double** dense
    Py_ssize_t capacity


cdef struct ListedVersions:
    # rows of a support in versions, as lists: slot s of version v lists its
    # features (in increasing order) and its values there from
    # starts[v * (capacity + 1) + s] to the next, in features[v] and
    # values[v] (of room[2 v] and room[2 v + 1] items)
    int64_t* starts
    int32_t** features
    double** values
    int32_t* room


# The most slots whose vector changes while room is made for an example
# (a merge's partner for each slot freed) that are noted, to compute its
# kernel row there again; past them its row is not kept.
cdef enum:
    ENTRY_CHANGES = 8


cdef struct Support:
    Py_ssize_t n_problems
    Py_ssize_t budget
    Py_ssize_t capacity       # rows held: max(budget, support of earlier calls)
    Py_ssize_t n_features
    Py_ssize_t n_support
    int strategy
    int32_t first_class
    double* rows              # (capacity, n_features): the support
    # the support as it stood at the last _refresh_panels: with dense
    # examples, the rows again in feature-major panels (dots.h; NULL with
    # CSR examples or without AVX2); with CSR examples, posted by feature
    # (NULL with dense ones); its squared norms and its size then
    double* panels
    Postings* postings
    double* panel_sq          # (capacity,)
    Py_ssize_t panel_n
    double* sq_norms          # (capacity,): their ||x||^2
    # Slot s holds the vector scale[s] * rows[s], whose squared norm is
    # scale[s]^2 * raw_sq[s] (sq_norms[s]); every product with it is its
    # row's, summed in feature order, times scale[s] (the scales as they
    # stood at the last _refresh_panels in panel_scale, for the rows read
    # from the panels or postings). A merge into slot j scales j and adds
    # the other vector at its own features alone (_merge_rows), where
    # writing the merged point rewrites every feature of j: on word counts
    # most merges go into merged vectors of thousands of words. A new slot
    # has scale 1; a scale below FOLD_BELOW is written into its row
    # (_fold), and nothing else writes one: the support carries its scales
    # and raw_sq from call to call, and the vectors of a run do not depend
    # on where its calls end (one pass of partial_fit over chunks is still
    # fit's epoch, bit for bit). On the data of
    # benchmarks/bench_kernel_scale.py (budget 500, random_state=0, one
    # thread, CPU time, two rounds alternating), where each merge wrote the
    # merged point, posted whole: the vocabulary at 10,000 examples 0.88 to
    # 0.92 s against 2.16 to 2.28 s, at 40,000 3.0 to 3.1 s against 10.3 to
    # 10.6 s; the text data 0.70 to 0.73 s against 0.71 to 0.73 s at 10,000
    # and 2.6 s against 2.5 to 2.7 s at 40,000 (its merged vectors are
    # shorter); the clusters at 40,000, where every merge writes every
    # feature either way, 0.62 to 0.64 s against 0.58 to 0.60 s (the
    # products times the scales). The same accuracy: the same medians of
    # random_state 0 to 2, to the fourth digit, on the vocabulary and the
    # text data at both sizes and the clusters at 40,000.
    double* scale             # (capacity,)
    double* raw_sq            # (capacity,)
    double* panel_scale       # (capacity,)
    # with postings: whether slot s, marked dirty, is posted again whole at
    # the next _refresh_panels (_mark), or only at the features in pending
    # (_mark_features): slot << 32 | feature, pending_n of pending_room
    unsigned char* whole      # (capacity,)
    int64_t* pending
    Py_ssize_t pending_n
    Py_ssize_t pending_room
    double* coef              # (n_problems, capacity)
    double* avg_coef          # like coef, or NULL without averaging
    int64_t* index            # (capacity,): the place of each among all samples
    int32_t* code             # (capacity,): its class
    int64_t* age              # (capacity,): its order of entry
    int64_t clock
    int64_t first_index       # the index of the first point of this call
    int64_t* slot_of          # (n_points,): the slot of a point, or -1
    double* krow              # (capacity,) scratch
    # The kernel row over the support of its newest vector, slot young (-1
    # when none is known), kept from the row that its example was examined
    # with: the values of the slots that making room for it changed are
    # computed again (meanwhile in entry_row, the slots in entry_changed,
    # entry_n of them; -1: more than ENTRY_CHANGES, the row not kept). The
    # next _make_room reads it in place of _support_row's product with
    # every support vector where the newest has the smallest coefficients,
    # as it most often has; no row changes before then. young_row NULL: not
    # kept (but by "merge": see _smallest).
    Py_ssize_t young
    double* young_row         # (capacity,)
    double* entry_row         # (capacity,)
    int64_t entry_changed[ENTRY_CHANGES + 1]
    Py_ssize_t entry_n
    # the projections of BUDGET_PROJECT and BUDGET_AVERAGING: the nearest
    # slots, their kernel matrix and the coefficients on them
    # (AVERAGING_NEIGHBOURS, its square); near also holds the candidates of a
    # merge (MERGE_CANDIDATES)
    Py_ssize_t* near
    double* near_gram
    double* near_coef
    # with BUDGET_AVERAGING, which changes no row, and room for them (else
    # NULL): the values of near_gram computed so far, each computed once,
    # pair_values[a * capacity + c] that of k(x_a, x_c) with a the nearer
    # (as _project computes it), known where it is not 0: the RBF values of
    # that epoch are not negative, and one of 0 is computed again, to 0
    double* pair_values
    # the CSR structure of the examples, NULL for dense ones: an example's
    # products with the support sum over its stored features alone, and a
    # support vector's over its listed features
    const int32_t* example_indices
    const int32_t* example_indptr
    # with CSR examples (else NULL): the features of each slot's row that
    # are not +0, in increasing order (a superset of them: an example's
    # stored ones, or the union of a merge's two lists), list_room of room a
    # slot, the row's values there for a list of at most VALUE_ROOM
    # (row_values: the row read in the order of its list, where the rows
    # scatter its features over n_features), and their count, -1 for a row
    # not listed (more than list_room, or not known), whose features are
    # found when needed; a row is +0 at
    # every feature not listed. nonzeros ((n_features,) scratch) holds the
    # features found, or the union of a merge's two lists, and
    # nonzero_values (the same) the merged row's values there; scattered
    # ((n_features,), +0 between the calls that fill it) an example's values
    int32_t* row_features
    double* row_values
    Py_ssize_t* row_counts
    # with CSR examples (else NULL): whether slot s's row in b.rows holds it
    # (+0 at every feature not listed); where not, b.rows holds anything
    # there, never read, and the row is its list and its values alone
    # (_set_row), its pages never touched. On the vocabulary data of
    # benchmarks/bench_kernel_scale.py (budget 500, 10,000 examples, three
    # fits a process, alternating) the fits took 1.55 to 1.69 s against
    # 1.89 to 2.13 s with every row written, on one thread, and 1.31 to 1.41
    # s against 1.60 to 1.73 s on two; the peak resident memory, 211 MB
    # against 364 MB
    unsigned char* row_written
    int32_t* nonzeros
    double* nonzero_values
    double* scattered
    Py_ssize_t list_room
    # with CSR examples, the most features that an example stores: the room
    # of each one's values in a block
    Py_ssize_t example_room
    # the slots whose row changed since the last _refresh_panels, and since
    # the kernel rows of the block that the loop examines
    Marks dirty
    Marks stale
    # scratch of an example's values on the changed slots (_changed_values):
    # the slots in the support, their values, their squared norms
    int64_t* changed          # (capacity,)
    double* changed_values    # (2 capacity,)
    # with CSR examples (else NULL), the same scratch for each thread that
    # computes the values of the slots changed in the block before
    # (_correct_group): changed_values's (2 capacity each), and
    # scattered's (n_features each, +0 between the calls)
    double* thread_values
    double* thread_scattered
    # the snapshots w_1 and w_r of the stopping rule, of each problem
    # (NULL with it off): coefficients, size, and the version of the rows
    # and their squared norms that they stand on (-1 before the first):
    # one version for all the snapshots of an epoch's end, kept while one
    # of them stands on it (version_refs; see _snapshot_support)
    double* snap_rows         # (n_problems + 1, capacity, n_features)
    double* snap_sq           # (n_problems + 1, capacity)
    double* snap_scale        # (n_problems + 1, capacity)
    double* snap_coef         # (2, n_problems, capacity)
    int64_t* snap_n           # (2, n_problems)
    int64_t* snap_version     # (2, n_problems)
    int64_t* version_refs     # (n_problems + 1,)
    # with CSR examples, the versions as lists instead of snap_rows (NULL
    # with dense ones), and the support itself at an epoch's end as version
    # n_problems + 1 (_list_version)
    ListedVersions* listed


cdef inline double* _coef_at(Support* b, Py_ssize_t c) noexcept nogil:
    return b.coef + c * b.capacity


cdef inline void _mark(Support* b, Py_ssize_t s) noexcept nogil:
    """Mark slot s as changed: since the panels and since the block's
    kernel rows, to be posted again whole."""
    _add_mark(&b.dirty, s)
    _add_mark(&b.stale, s)
    if b.whole != NULL:
        b.whole[s] = 1


cdef void _mark_features(Support* b, Py_ssize_t s, const int32_t* features,
                         Py_ssize_t n) noexcept nogil:
    """Mark slot s as changed (its scale, and its row at the n features
    listed alone): to be posted again at those features, or whole where
    they do not fit in b.pending."""
    cdef Py_ssize_t t
    _add_mark(&b.dirty, s)
    _add_mark(&b.stale, s)
    if b.whole == NULL or b.whole[s]:
        return
    if b.pending_n + n > b.pending_room:
        b.whole[s] = 1
        return
    for t in range(n):
        b.pending[b.pending_n + t] = (<int64_t>s << 32) | features[t]
    b.pending_n += n


cdef inline bint _copied(const Support* b) noexcept nogil:
    """Whether the kernel rows read a copy of the support as it stood at
    the last _refresh_panels (its panels or postings), not its rows."""
    return b.panels != NULL or b.postings != NULL


cdef void* _traced_realloc(void* data, size_t size) noexcept nogil:
    """realloc, the memory reported to tracemalloc as numpy's arrays."""
    cdef void* moved = realloc(data, size)
    if moved != NULL:
        if data != NULL:
            PyTraceMalloc_Untrack(_NUMPY_DOMAIN, <uintptr_t>data)
        PyTraceMalloc_Track(_NUMPY_DOMAIN, <uintptr_t>moved, size)
    return moved


cdef int _make_room_for(void** data, size_t itemsize, int32_t* room,
                        Py_ssize_t needed) except -1 nogil:
    """data (room[0] items of itemsize) grown to needed items or more, by
    doubling."""
    cdef Py_ssize_t size = room[0] if room[0] > 0 else 4
    cdef void* grown
    if needed <= room[0]:
        return 0
    while size < needed:
        size *= 2
    grown = _traced_realloc(data[0], size * itemsize)
    if grown == NULL:
        with gil:
            raise MemoryError(f"cannot allocate {size * itemsize} bytes")
    data[0] = grown
    room[0] = <int32_t>size
    return 0


cdef inline Py_ssize_t _first_at_least(const int32_t* c, Py_ssize_t stride,
                                       Py_ssize_t lo, Py_ssize_t n,
                                       int32_t f) noexcept nogil:
    """The first place q >= lo of n increasing values, the one at place q
    c[q * stride], where the value is f or more, or n: by steps that double
    from lo, then bisection, in O(log(q - lo))."""
    cdef Py_ssize_t step = 1, hi, mid
    if lo >= n or c[lo * stride] >= f:
        return lo
    # the value at lo is below f throughout; at hi it is f or more, or hi
    # is n
    while lo + step < n and c[(lo + step) * stride] < f:
        lo += step
        step *= 2
    hi = min(lo + step, n)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if c[mid * stride] < f:
            lo = mid
        else:
            hi = mid
    return hi


cdef inline Py_ssize_t _first_posted_at_least(const Posted* posted,
                                              Py_ssize_t lo, Py_ssize_t n,
                                              int32_t f) noexcept nogil:
    """_first_at_least over the features of n items of a list of Posted."""
    return _first_at_least(&posted[0].feature,
                           sizeof(Posted) // sizeof(int32_t), lo, n, f)


cdef inline Py_ssize_t _posted_at(const Postings* p, Py_ssize_t s,
                                   Py_ssize_t f, Py_ssize_t hint) noexcept nogil:
    """The place of feature f in slot s's list of features posted: hint
    where it holds f, else found by bisection (features posted at a slot
    since it was posted whole move the places after theirs)."""
    cdef const Posted* posted = p.posted[s]
    if hint < p.posted_n[s] and posted[hint].feature == f:
        return hint
    return _first_posted_at_least(posted, 0, p.posted_n[s], f)


cdef inline void _take_out(Postings* p, Py_ssize_t f,
                           Py_ssize_t e) noexcept nogil:
    """Take entry e out of feature f's: the last one takes its place."""
    cdef Entry* entries = p.entries[f]
    cdef Py_ssize_t last = p.count[f] - 1, at
    if p.dense[f] != NULL:
        p.dense[f][entries[e].slot] = 0.0
    entries[e] = entries[last]
    at = _posted_at(p, entries[e].slot, f, entries[e].back)
    p.posted[entries[e].slot][at].place = <int32_t>e
    entries[e].back = <int32_t>at
    p.count[f] = <int32_t>last


cdef inline int _post(Postings* p, Py_ssize_t s, Py_ssize_t f, Py_ssize_t e,
                      double value, Posted* new,
                      Py_ssize_t m) except -1 nogil:
    """Slot s's entry at feature f (at place e, or -1 for none) set to
    value, or taken out for a value of 0; the feature and its place in
    new[m] for the list of features that s is posted at, the place of f
    there. Returns the items written to new: 1, or 0 for a value of 0."""
    if value == 0.0:
        if e >= 0:
            _take_out(p, f, e)
        return 0
    if e < 0:
        e = p.count[f]
        if e == p.room[f]:
            _make_room_for(<void**>&p.entries[f], sizeof(Entry), &p.room[f],
                           e + 1)
        p.entries[f][e].slot = <int32_t>s
        p.count[f] += 1
    p.entries[f][e].value = value
    p.entries[f][e].back = <int32_t>m
    if p.dense[f] != NULL:
        p.dense[f][s] = value
    elif p.count[f] * DENSE_SHARE >= p.capacity:
        _make_dense(p, f)
    new[m].feature = <int32_t>f
    new[m].place = <int32_t>e
    return 1


cdef int _repost(Support* b, Py_ssize_t s) except -1 nogil:
    """Post slot s as its row stands (nothing past the support): at its
    listed features (_row_features) where it is not 0, its old list and
    the new merged in feature order, an entry of both changed in place:
    O(its features)."""
    cdef Postings* p = b.postings
    cdef Py_ssize_t i = 0, j = 0, k = p.posted_n[s], n = 0, m = 0, f, e
    cdef const int32_t* features
    cdef const double* row = b.rows + s * b.n_features
    # a listed row read in the order of its list: values[j] is row[features[j]]
    cdef const double* values = _row_values(b, s)
    cdef Posted* old = p.posted[s]
    cdef Posted* new = p.scratch
    if s < b.n_support:
        n = _row_features(b, s, &features)
    while i < k or j < n:
        if j == n or (i < k and old[i].feature < features[j]):
            # posted, and +0 now
            _take_out(p, old[i].feature, old[i].place)
            i += 1
            continue
        f = features[j]
        e = -1
        if i < k and old[i].feature == f:
            e = old[i].place
            i += 1
        m += _post(p, s, f, e, values[j] if values != NULL else row[f], new, m)
        j += 1
    _make_room_for(<void**>&p.posted[s], sizeof(Posted), &p.posted_room[s], m)
    memcpy(p.posted[s], new, m * sizeof(Posted))
    p.posted_n[s] = <int32_t>m
    return 0


cdef int _repost_at(Support* b, Py_ssize_t s, const int64_t* keys,
                    Py_ssize_t n) except -1 nogil:
    """Post slot s again at the n features of keys (slot << 32 | feature, in
    increasing order, each once) as its row stands there (read from its
    list where it keeps its values), the features it was posted at
    elsewhere kept: O(those features) entries and a copy of its list of
    features posted."""
    cdef Postings* p = b.postings
    cdef Py_ssize_t i = 0, j = 0, k = p.posted_n[s], m = 0, f, e, q = 0, at
    cdef const double* row = b.rows + s * b.n_features
    cdef const double* values = _row_values(b, s)
    cdef const int32_t* listed = b.row_features + s * b.list_room
    cdef double value
    cdef Posted* old = p.posted[s]
    cdef Posted* new = p.scratch
    while j < n:
        f = keys[j] - (<int64_t>s << 32)
        # the features posted before f, kept: found from the place of the
        # one before (_first_at_least) and copied at once, not read one by
        # one (a merged vector lists thousands)
        if i < k and old[i].feature < f:
            at = _first_posted_at_least(old, i, k, f)
            memcpy(new + m, old + i, (at - i) * sizeof(Posted))
            m += at - i
            i = at
        if values != NULL:
            while q < b.row_counts[s] and listed[q] < f:
                q += 1
            value = (values[q] if q < b.row_counts[s] and listed[q] == f
                     else 0.0)
        else:
            value = row[f]
        j += 1
        e = -1
        if i < k and old[i].feature == f:
            e = old[i].place
            i += 1
        m += _post(p, s, f, e, value, new, m)
    if i < k:
        memcpy(new + m, old + i, (k - i) * sizeof(Posted))
        m += k - i
    _make_room_for(<void**>&p.posted[s], sizeof(Posted), &p.posted_room[s], m)
    memcpy(p.posted[s], new, m * sizeof(Posted))
    p.posted_n[s] = <int32_t>m
    return 0


cdef int _compare_keys(const void* a, const void* c) noexcept nogil:
    cdef int64_t x = (<const int64_t*>a)[0], z = (<const int64_t*>c)[0]
    return (x > z) - (x < z)


cdef int _post_pending(Support* b) except -1 nogil:
    """Post again the slots of b.pending at their features (_repost_at),
    but those to be posted whole and those past the support."""
    cdef Py_ssize_t t = 0, start, n = 0, s
    if b.pending_n == 0:
        return 0
    qsort(b.pending, b.pending_n, sizeof(int64_t), _compare_keys)
    # each key once
    for t in range(b.pending_n):
        if n == 0 or b.pending[t] != b.pending[n - 1]:
            b.pending[n] = b.pending[t]
            n += 1
    t = 0
    while t < n:
        start = t
        s = b.pending[t] >> 32
        while t < n and b.pending[t] >> 32 == s:
            t += 1
        if not b.whole[s] and s < b.n_support:
            _repost_at(b, s, b.pending + start, t - start)
    b.pending_n = 0
    return 0


# A feature that a DENSE_SHARE-th of the capacity or more of the support
# vectors store is read as a column over the slots (Postings.dense), in
# vector lanes (columns.h), where its entries scatter their products over the
# slots one at a time. Each slot's sum takes the products in feature order
# either way, and the +0 of a slot without an entry changes no sum (one that
# starts at +0 is never -0): the same bits. Word counts have a few such
# features: on the text data of benchmarks/bench_kernel_scale.py, budget
# 500, 45 features of 3,000 held 89% of the entries that the examples read
# at the end of a fit.
# Measured there (merge, one thread, medians of 3 fits, 3 processes of each
# alternating) against entries alone: at 10,000 examples 0.40 s against
# 0.48 s a fit, with 16 and 32 0.41 and 0.45 s, with 4 0.40 s; at 40,000
# 0.98 against 1.27 s; the vocabulary data at 10,000, 0.64 against 0.74 s;
# the hashed data, 0.41 against 0.52 s; the same peak memory.
cdef enum:
    DENSE_SHARE = 8


cdef int _make_dense(Postings* p, Py_ssize_t f) except -1 nogil:
    """Give feature f its column over the slots (Postings.dense), from its
    entries."""
    cdef Py_ssize_t e
    cdef double* column = <double*>_traced_realloc(
        NULL, p.capacity * sizeof(double))
    if column == NULL:
        with gil:
            raise MemoryError("cannot allocate a column of the postings")
    memset(column, 0, p.capacity * sizeof(double))
    for e in range(p.count[f]):
        column[p.entries[f][e].slot] = p.entries[f][e].value
    p.dense[f] = column
    return 0


cdef void _posted_dots(const Postings* p, Py_ssize_t n, const double* x,
                       const double* values, const int32_t* features,
                       Py_ssize_t n_features, double* out) noexcept nogil:
    """out[s] = x_s . x for the slots s < n posted, over the features
    listed (in increasing order) where x may not be 0, x's values there
    values[t] (or x[features[t]] for values NULL): each sum in feature
    order, but for products with a 0 of x_s, which change no sum (one that
    starts at +0 is never -0): the bits of _dots_over. O(the entries at
    those features), or O(n) at a feature read as a column (DENSE_SHARE)."""
    cdef Py_ssize_t t, e, f
    cdef double xf
    cdef const Entry* entries
    memset(out, 0, n * sizeof(double))
    for t in range(n_features):
        f = features[t]
        xf = values[t] if values != NULL else x[f]
        if p.dense[f] != NULL:
            skperc_add(xf, p.dense[f], out, n)
            continue
        entries = p.entries[f]
        for e in range(p.count[f]):
            # a slot dropped since the postings were refreshed is past n
            if entries[e].slot < n:
                out[entries[e].slot] += entries[e].value * xf


cdef class _PostedSupport:
    """The memory of the Postings of a support of capacity slots over
    n_features, freed with this object."""
    cdef Postings p
    cdef Py_ssize_t n_features, capacity

    def __cinit__(self, Py_ssize_t n_features, Py_ssize_t capacity):
        self.n_features = n_features
        self.capacity = capacity
        self.p.entries = <Entry**>calloc(n_features, sizeof(Entry*))
        self.p.count = <int32_t*>calloc(n_features, sizeof(int32_t))
        self.p.room = <int32_t*>calloc(n_features, sizeof(int32_t))
        self.p.posted = <Posted**>calloc(capacity, sizeof(Posted*))
        self.p.posted_n = <int32_t*>calloc(capacity, sizeof(int32_t))
        self.p.posted_room = <int32_t*>calloc(capacity, sizeof(int32_t))
        self.p.scratch = <Posted*>calloc(n_features, sizeof(Posted))
        self.p.dense = <double**>calloc(n_features, sizeof(double*))
        self.p.capacity = capacity
        if (self.p.entries == NULL or self.p.count == NULL
                or self.p.room == NULL or self.p.posted == NULL
                or self.p.posted_n == NULL or self.p.posted_room == NULL
                or self.p.scratch == NULL or self.p.dense == NULL):
            raise MemoryError("cannot allocate the postings of a support")

    def __dealloc__(self):
        cdef Py_ssize_t t
        if self.p.entries != NULL:
            for t in range(self.n_features):
                _free_traced(self.p.entries[t])
        if self.p.dense != NULL:
            for t in range(self.n_features):
                _free_traced(self.p.dense[t])
        if self.p.posted != NULL:
            for t in range(self.capacity):
                _free_traced(self.p.posted[t])
        free(self.p.entries)
        free(self.p.count)
        free(self.p.room)
        free(self.p.posted)
        free(self.p.posted_n)
        free(self.p.posted_room)
        free(self.p.scratch)
        free(self.p.dense)


cdef class _ListedSupport:
    """The memory of the ListedVersions of n_versions versions of a support
    of capacity slots, freed with this object."""
    cdef ListedVersions v
    cdef Py_ssize_t n_versions

    def __cinit__(self, Py_ssize_t n_versions, Py_ssize_t capacity):
        self.n_versions = n_versions
        self.v.starts = <int64_t*>calloc(n_versions * (capacity + 1),
                                         sizeof(int64_t))
        self.v.features = <int32_t**>calloc(n_versions, sizeof(int32_t*))
        self.v.values = <double**>calloc(n_versions, sizeof(double*))
        self.v.room = <int32_t*>calloc(2 * n_versions, sizeof(int32_t))
        if (self.v.starts == NULL or self.v.features == NULL
                or self.v.values == NULL or self.v.room == NULL):
            raise MemoryError("cannot allocate the listed versions of a support")

    def __dealloc__(self):
        cdef Py_ssize_t t
        for t in range(self.n_versions):
            if self.v.features != NULL:
                _free_traced(self.v.features[t])
            if self.v.values != NULL:
                _free_traced(self.v.values[t])
        free(self.v.starts)
        free(self.v.features)
        free(self.v.values)
        free(self.v.room)


cdef int _refresh_panels(Support* b) except -1 nogil:
    """Copy the rows changed since the last refresh into their panels, or
    post them again (_repost), with their squared norms and the size of the
    support, and clear their marks."""
    cdef Py_ssize_t t, j, s, d = b.n_features
    cdef double* panel
    cdef const double* row
    if b.postings != NULL:
        _post_pending(b)
    for t in range(b.dirty.n):
        s = b.dirty.slots[t]
        if b.postings != NULL and (b.whole[s] or s >= b.n_support):
            _repost(b, s)
        if b.whole != NULL:
            b.whole[s] = 0
        # a slot past the support holds no vector, and its value is not read
        if s >= b.n_support:
            continue
        b.panel_sq[s] = b.sq_norms[s]
        b.panel_scale[s] = b.scale[s]
        if b.panels == NULL:
            continue
        panel = (b.panels + (s // SKPERC_PANEL) * d * SKPERC_PANEL
                 + s % SKPERC_PANEL)
        row = b.rows + s * d
        for j in range(d):
            panel[j * SKPERC_PANEL] = row[j]
    _clear_marks(&b.dirty)
    b.panel_n = b.n_support
    return 0


cdef object _posted_rows(Support* b):
    """The support's rows as a CSR matrix of their values not 0, in feature
    order, from its postings brought up to date: O(those values), where a
    scan of the rows costs every feature in use of every slot."""
    _refresh_panels(b)
    cdef const Postings* p = b.postings
    cdef Py_ssize_t s, t, at = 0, n = b.n_support
    indptr = np.zeros(n + 1, dtype=np.int64)
    cdef int64_t[::1] starts = indptr
    for s in range(n):
        starts[s + 1] = starts[s] + p.posted_n[s]
    indices = np.empty(starts[n], dtype=np.int32)
    data = np.empty(starts[n])
    cdef int32_t[::1] features = indices
    cdef double[::1] values = data
    cdef const Posted* posted
    for s in range(n):
        posted = p.posted[s]
        for t in range(p.posted_n[s]):
            features[at] = posted[t].feature
            values[at] = p.entries[posted[t].feature][posted[t].place].value
            at += 1
    return sp.csr_matrix((data, indices, indptr), shape=(n, b.n_features))


cdef int _begin_rows(Support* b) except -1 nogil:
    """Before the kernel rows of a block computed from the support as it
    stands: the panels refreshed, no slot stale."""
    _clear_marks(&b.stale)
    return _refresh_panels(b)


cdef inline Py_ssize_t _stored_features(const Support* b, Py_ssize_t i,
                                        const int32_t** features) noexcept nogil:
    """The features that the products of example i sum over: the stored
    ones of a CSR example (in features[0], their count returned), else
    every feature (NULL)."""
    if b.example_indptr == NULL:
        features[0] = NULL
        return 0
    features[0] = b.example_indices + b.example_indptr[i]
    return b.example_indptr[i + 1] - b.example_indptr[i]


cdef Py_ssize_t _row_features(const Support* b, Py_ssize_t s,
                              const int32_t** features) noexcept nogil:
    """The features that the products of support vector s sum over: with
    CSR examples, its list, or for a row not listed those where it is not
    +0 (in b.nonzeros, O(n_features) to find), their count returned; else
    every feature (NULL)."""
    features[0] = NULL
    if b.row_counts == NULL:
        return 0
    if b.row_counts[s] >= 0:
        features[0] = b.row_features + s * b.list_room
        return b.row_counts[s]
    features[0] = b.nonzeros
    return skperc_nonzero_features(b.rows + s * b.n_features, b.n_features,
                                   b.nonzeros)


cdef inline bint _keeps_values(const Support* b, Py_ssize_t n) noexcept nogil:
    """Whether a list of n features keeps the row's values beside it."""
    return n <= b.list_room and n <= VALUE_ROOM


cdef inline const double* _row_values(const Support* b,
                                      Py_ssize_t s) noexcept nogil:
    """The values of slot s's row at its listed features, in their order,
    or NULL for a row not listed, or listed at more than VALUE_ROOM (or
    without lists)."""
    if b.row_counts == NULL or not (b.row_counts[s] >= 0
                                    and _keeps_values(b, b.row_counts[s])):
        return NULL
    return b.row_values + s * VALUE_ROOM


cdef inline void _list_row(Support* b, Py_ssize_t s, const int32_t* features,
                           const double* values, const double* x,
                           Py_ssize_t n) noexcept nogil:
    """The n features (in increasing order) as the list of slot s, with the
    row's values there (values[t], or x[features[t]] for values NULL) up to
    VALUE_ROOM of them, or the row not listed when they do not fit."""
    cdef Py_ssize_t t
    cdef double* listed = b.row_values + s * VALUE_ROOM
    if n > b.list_room:
        b.row_counts[s] = -1
        return
    memcpy(b.row_features + s * b.list_room, features, n * sizeof(int32_t))
    if _keeps_values(b, n):
        for t in range(n):
            listed[t] = values[t] if values != NULL else x[features[t]]
    b.row_counts[s] = n


cdef void _set_row(Support* b, Py_ssize_t s, const int32_t* features,
                   const double* values, const double* x,
                   Py_ssize_t n) noexcept nogil:
    """Slot s's row becomes the one +0 but at the n features listed (in
    increasing order), of values values[t] there (or x[features[t]] for
    values NULL), and its list those; with dense examples (features NULL),
    x. With CSR examples, a list that keeps its values holds the row
    alone, not written into b.rows, where a store at each feature,
    scattered over n_features, costs a cache line and, on a wide
    vocabulary, a page of memory; else the row is written: in O(n) where
    the row it replaces is written and listed (+0 then at its features),
    else in O(n_features)."""
    cdef Py_ssize_t t, d = b.n_features
    cdef double* row = b.rows + s * d
    cdef const int32_t* old
    if features == NULL:
        memcpy(row, x, d * sizeof(double))
        return
    if _keeps_values(b, n):
        b.row_written[s] = 0
        _list_row(b, s, features, values, x, n)
        return
    if b.row_written[s] and b.row_counts[s] >= 0:
        old = b.row_features + s * b.list_room
        for t in range(b.row_counts[s]):
            row[old[t]] = 0.0
    else:
        memset(row, 0, d * sizeof(double))
    for t in range(n):
        row[features[t]] = values[t] if values != NULL else x[features[t]]
    b.row_written[s] = 1
    _list_row(b, s, features, values, x, n)


cdef void _write_listed(Support* b, Py_ssize_t s) noexcept nogil:
    """Slot s's row into b.rows, where only its list holds it."""
    cdef Py_ssize_t t
    cdef double* row = b.rows + s * b.n_features
    cdef const int32_t* features = b.row_features + s * b.list_room
    cdef const double* values = b.row_values + s * VALUE_ROOM
    if b.row_written == NULL or b.row_written[s]:
        return
    memset(row, 0, b.n_features * sizeof(double))
    for t in range(b.row_counts[s]):
        row[features[t]] = values[t]
    b.row_written[s] = 1


cdef void _move_row(Support* b, Py_ssize_t s, Py_ssize_t last) noexcept nogil:
    """Slot s's row becomes slot last's (_set_row), read from its list where
    it keeps its values."""
    cdef const int32_t* features
    cdef Py_ssize_t n = _row_features(b, last, &features)
    _set_row(b, s, features, _row_values(b, last), b.rows + last * b.n_features,
             n)


cdef Py_ssize_t _merged_row(Support* b, Py_ssize_t m, Py_ssize_t j,
                            double g, double* delta) noexcept nogil:
    """Slot j's row plus g times slot m's over the union of their lists, in
    increasing order: its features into b.nonzeros, its values (each
    row_j[f] + g row_m[f], +0 for a row at a feature it does not list, as
    in the rows, read from the lists' values where kept) into
    b.nonzero_values; their count, or -1 where either row is not listed.
    Adds to delta[0] the change of the row's squared norm, the sum in
    feature order of each value's square less the old one's."""
    cdef Py_ssize_t p = 0, q = 0, count = 0
    cdef Py_ssize_t n_m = b.row_counts[m], n_j = b.row_counts[j]
    cdef const int32_t* a = b.row_features + m * b.list_room
    cdef const int32_t* c = b.row_features + j * b.list_room
    cdef const double* va = _row_values(b, m)
    cdef const double* vc = _row_values(b, j)
    cdef const double* row_m = b.rows + m * b.n_features
    cdef const double* row_j = b.rows + j * b.n_features
    cdef double x_m, x_j, z
    if n_m < 0 or n_j < 0:
        return -1
    while p < n_m or q < n_j:
        x_m = x_j = 0.0
        if q == n_j or (p < n_m and a[p] < c[q]):
            b.nonzeros[count] = a[p]
            x_m = va[p] if va != NULL else row_m[a[p]]
            p += 1
        elif p == n_m or c[q] < a[p]:
            b.nonzeros[count] = c[q]
            x_j = vc[q] if vc != NULL else row_j[c[q]]
            q += 1
        else:
            b.nonzeros[count] = a[p]
            x_m = va[p] if va != NULL else row_m[a[p]]
            x_j = vc[q] if vc != NULL else row_j[c[q]]
            p += 1
            q += 1
        z = x_j + g * x_m
        delta[0] += z * z - x_j * x_j
        b.nonzero_values[count] = z
        count += 1
    return count


cdef void _add_in_place(Support* b, Py_ssize_t m, Py_ssize_t j,
                        double g, double* delta) noexcept nogil:
    """Slot j's row, written, plus g times slot m's, listed, as _merged_row,
    written in place at m's features alone (adding the +0 of m's row at
    j's other features changes no product, nor j's squared norm: the bits
    of a pass over the whole row); where j is listed, the union of their
    lists as its list (j not listed where it outgrows its room)."""
    cdef Py_ssize_t p, q = 0, t, n_new = 0, end
    cdef Py_ssize_t n_m = b.row_counts[m], n_j = b.row_counts[j]
    cdef const int32_t* a = b.row_features + m * b.list_room
    cdef int32_t* c = b.row_features + j * b.list_room
    cdef const double* va = _row_values(b, m)
    cdef const double* row_m = b.rows + m * b.n_features
    cdef double* row_j = b.rows + j * b.n_features
    cdef double x_m, x_j, z
    for p in range(n_m):
        x_m = va[p] if va != NULL else row_m[a[p]]
        x_j = row_j[a[p]]
        z = x_j + g * x_m
        delta[0] += z * z - x_j * x_j
        row_j[a[p]] = z
    if n_j < 0:
        return
    # The features of m that j does not list, in b.nonzeros: each looked
    # up in j's list from the place of the one before (_first_at_least), in
    # O(n_m log(n_j / n_m)), not by a merge of the two lists in O(n_j).
    for p in range(n_m):
        q = _first_at_least(c, 1, q, n_j, a[p])
        if q == n_j or c[q] != a[p]:
            b.nonzeros[n_new] = a[p]
            n_new += 1
    if n_new == 0:
        return
    if n_j + n_new > b.list_room:
        b.row_counts[j] = -1
        return
    # into j's list from its end: the stretch after each new feature moves
    # up by the number of new features up to that one
    end = n_j
    for t in range(n_new - 1, -1, -1):
        q = _first_at_least(c, 1, 0, end, b.nonzeros[t])
        memmove(c + q + t + 1, c + q, (end - q) * sizeof(int32_t))
        c[q + t] = b.nonzeros[t]
        end = q
    b.row_counts[j] = n_j + n_new


cdef inline double _dense_dot(const Support* b, Py_ssize_t s, const double* x,
                              const int32_t* features,
                              Py_ssize_t n_features) noexcept nogil:
    """x_s . x for x over every feature, +0 but at the n_features features
    listed (in increasing order; NULL: every feature): for a listed slot
    whose list is not much longer, x read at its list, in its order; else
    its row at those features (_dots_over), each a step where the list
    would take several. Each sum in feature order, but for products with a
    +0 of either, which change no sum (one that starts at +0 is never -0):
    the same bits."""
    cdef Py_ssize_t p, n
    cdef const int32_t* listed
    cdef const double* row = _row_values(b, s)
    cdef double total = 0.0
    if row == NULL or (b.row_written[s]
                       and b.row_counts[s] > 4 * n_features):
        _dots_over(b.rows + s * b.n_features, NULL, 1, b.n_features, x,
                   features, n_features, &total)
        return total
    n = b.row_counts[s]
    listed = b.row_features + s * b.list_room
    for p in range(n):
        total += row[p] * x[listed[p]]
    return total


cdef inline void _scatter(double* scattered, const double* values,
                          const int32_t* features,
                          Py_ssize_t n_features) noexcept nogil:
    """scattered (b.scattered, or a thread's), +0 elsewhere, at the
    n_features features listed: values[t]. One array for every row
    scattered, whose lines at the frequent features stay in the cache,
    where rows over the features in use lie apart. _unscatter clears it."""
    cdef Py_ssize_t t
    for t in range(n_features):
        scattered[features[t]] = values[t]


cdef const double* _scattered(const Support* b, Py_ssize_t s,
                              const int32_t* features,
                              Py_ssize_t n_features) noexcept nogil:
    """Slot s's row over every feature, as x of _dense_dot: a listed row's
    values (at its n_features listed features) in b.scattered (_scatter),
    or the row itself."""
    cdef const double* values = _row_values(b, s)
    if values == NULL:
        return b.rows + s * b.n_features
    _scatter(b.scattered, values, features, n_features)
    return b.scattered


cdef inline void _unscatter(double* scattered, const int32_t* features,
                            Py_ssize_t n_features) noexcept nogil:
    """scattered +0 again at the features that _scatter filled."""
    cdef Py_ssize_t t
    for t in range(n_features):
        scattered[features[t]] = 0.0


cdef void _support_dots(const Support* b, Py_ssize_t n, const double* x,
                        const double* values, const int32_t* features,
                        Py_ssize_t n_features, double* out) noexcept nogil:
    """out[s] = x_s . x for the first n slots as they stood at the last
    _refresh_panels: from the panels or the postings (_posted_dots, which
    reads x's values at the features listed in values where not NULL), or
    without them from the rows; over the features listed (_dots_over)."""
    cdef Py_ssize_t d = b.n_features
    if b.postings != NULL:
        _posted_dots(b.postings, n, x, values, features, n_features, out)
    elif b.panels == NULL:
        _dots_over(b.rows, NULL, n, d, x, features, n_features, out)
    elif features == NULL:
        skperc_dots_panels(b.panels, 0, n, d, x, out)
    else:
        skperc_dots_panels_at(b.panels, n, d, x, features, n_features, out)


cdef inline void _scale_dots(const double* scale, Py_ssize_t n,
                             double* out) noexcept nogil:
    """out[s] times scale[s] for s < n: the products with the vectors of
    the rows whose products out holds."""
    cdef Py_ssize_t s
    for s in range(n):
        out[s] = out[s] * scale[s]


cdef void _support_row(const Support* b, const Kernel* kernel, Py_ssize_t m,
                       double* out) noexcept nogil:
    """out[s] = k(x_s, x_m) over the support, for its vector m: from the
    panels or postings, and the slots changed since they were refreshed
    from their own rows (or lists, x_m scattered: _dense_dot); else from
    the rows in C order. With CSR examples, over the features of x_m
    (_row_features), read from its list where it keeps its values. Each
    product is summed in feature order either way: the same bits."""
    cdef Py_ssize_t t, s, d = b.n_features
    cdef const double* x = b.rows + m * d
    cdef const double* values = _row_values(b, m)
    cdef const int32_t* features
    cdef Py_ssize_t n_features = _row_features(b, m, &features)
    _support_dots(b, b.n_support, x, values, features, n_features, out)
    if _copied(b):
        if values != NULL:
            x = _scattered(b, m, features, n_features)
        for t in range(b.dirty.n):
            s = b.dirty.slots[t]
            if s < b.n_support:
                out[s] = _dense_dot(b, s, x, features, n_features)
        if values != NULL:
            _unscatter(b.scattered, features, n_features)
    # (x_s . x_m, x_m's scale times its row's products)
    _scale_dots(b.scale, b.n_support, out)
    for t in range(b.n_support):
        out[t] = out[t] * b.scale[m]
    _apply_kernel(kernel, b.sq_norms, b.n_support, b.sq_norms[m], out)


cdef bint _slot_values(Support* b, const Kernel* kernel, const double* x,
                       const double* values, const int32_t* features,
                       Py_ssize_t n_features, double sq_norm_x, double scale_x,
                       const int64_t* slots, Py_ssize_t n, double* krow,
                       double* scratch, double* scattered) noexcept nogil:
    """krow[s] = k(x_s, x) for the n slots s listed, each from its own row
    as it stands: x the dense row x, or the values at the features listed
    (scattered into scattered, +0 elsewhere and again after), times
    scale_x, over the rows (_dots_over) or the lists of those that keep
    their values (_dense_dot), as _support_row computes a slot changed
    since the last _refresh_panels, in scratch (2 capacity values); whether
    the new values are all finite."""
    cdef Py_ssize_t t
    cdef double* out = scratch
    cdef double* sq = scratch + b.capacity
    if values != NULL:
        _scatter(scattered, values, features, n_features)
        x = scattered
    if b.row_counts == NULL:
        _dots_over(b.rows, slots, n, b.n_features, x, features, n_features,
                   out)
    else:
        for t in range(n):
            out[t] = _dense_dot(b, slots[t], x, features, n_features)
    if values != NULL:
        _unscatter(scattered, features, n_features)
    for t in range(n):
        # (x_s . x, x_s's scale times its row's products, then x's)
        out[t] = out[t] * b.scale[slots[t]]
        out[t] = out[t] * scale_x
        sq[t] = b.sq_norms[slots[t]]
    _apply_kernel(kernel, sq, n, sq_norm_x, out)
    for t in range(n):
        krow[slots[t]] = out[t]
    return skperc_all_finite(out, n)


cdef Py_ssize_t _list_in_support(Support* b, const Marks* marks) noexcept nogil:
    """The slots of marks in the support into b.changed; their count."""
    cdef Py_ssize_t t, n = 0
    for t in range(marks.n):
        if marks.slots[t] < b.n_support:
            b.changed[n] = marks.slots[t]
            n += 1
    return n


cdef bint _changed_values(Support* b, const Kernel* kernel, const double* x,
                          const double* values, const int32_t* features,
                          Py_ssize_t n_features, double sq_norm_x,
                          double* krow) noexcept nogil:
    """krow[s] = k(x_s, x) again for the slots s of the support that changed
    since the block's kernel rows (the stale ones), of an example (the dense
    row x, or with CSR examples the values at the features listed:
    _slot_values); whether the new values are all finite."""
    return _slot_values(b, kernel, x, values, features, n_features,
                        sq_norm_x, 1.0, b.changed, _list_in_support(b, &b.stale),
                        krow, b.changed_values, b.scattered)


cdef void _drop_slot(Support* b, Py_ssize_t s) noexcept nogil:
    """Take slot s out of the support; the last slot moves into it (and
    into the entry row, where one is kept)."""
    cdef Py_ssize_t c, last = b.n_support - 1
    _mark(b, s)
    if b.entry_n >= 0:
        _entry_moves(b, s, last)
    if b.index[s] >= b.first_index:
        b.slot_of[b.index[s] - b.first_index] = -1
    if s != last:
        _move_row(b, s, last)
        b.sq_norms[s] = b.sq_norms[last]
        b.raw_sq[s] = b.raw_sq[last]
        b.scale[s] = b.scale[last]
        b.index[s] = b.index[last]
        b.code[s] = b.code[last]
        b.age[s] = b.age[last]
        for c in range(b.n_problems):
            b.coef[c * b.capacity + s] = b.coef[c * b.capacity + last]
            if b.avg_coef != NULL:
                b.avg_coef[c * b.capacity + s] = b.avg_coef[c * b.capacity + last]
        if b.index[s] >= b.first_index:
            b.slot_of[b.index[s] - b.first_index] = s
    b.n_support -= 1


cdef void _entry_moves(Support* b, Py_ssize_t s,
                       Py_ssize_t last) noexcept nogil:
    """The entry row as slot s is dropped and slot last moves into it."""
    cdef Py_ssize_t t, kept = 0
    for t in range(b.entry_n):
        if b.entry_changed[t] != s:
            b.entry_changed[kept] = s if b.entry_changed[t] == last \
                else b.entry_changed[t]
            kept += 1
    b.entry_n = kept
    b.entry_row[s] = b.entry_row[last]


cdef inline void _entry_change(Support* b, Py_ssize_t s) noexcept nogil:
    """Slot s's vector changed while an entry row is kept: its value there
    is computed again (_keep_young), or with too many the row is not kept."""
    cdef Py_ssize_t t
    if b.entry_n < 0:
        return
    for t in range(b.entry_n):
        if b.entry_changed[t] == s:
            return
    if b.entry_n == ENTRY_CHANGES:
        b.entry_n = -1
        return
    b.entry_changed[b.entry_n] = s
    b.entry_n += 1


cdef void _keep_young(Support* b, const Kernel* kernel,
                      Py_ssize_t slot) noexcept nogil:
    """The slot just added holds the newest vector: its kernel row over the
    support is the entry row, with the values of the changed slots and its
    own computed (or none is known, past ENTRY_CHANGES)."""
    cdef double* row = b.entry_row
    cdef const int32_t* features
    cdef Py_ssize_t n_features
    b.young = -1
    if b.entry_n < 0:
        return
    b.entry_changed[b.entry_n] = slot
    n_features = _row_features(b, slot, &features)
    _slot_values(b, kernel, b.rows + slot * b.n_features,
                 _row_values(b, slot), features, n_features,
                 b.sq_norms[slot], b.scale[slot], b.entry_changed,
                 b.entry_n + 1, row, b.changed_values, b.scattered)
    b.entry_n = -1
    b.entry_row = b.young_row
    b.young_row = row
    b.young = slot


cdef const double* _kernel_row_of(Support* b, const Kernel* kernel,
                                  Py_ssize_t m) noexcept nogil:
    """k(x_s, x_m) over the support: the newest vector's row kept where m
    is it, else _support_row in b.krow. The support is about to change:
    no row is kept after."""
    if m == b.young:
        b.young = -1
        return b.young_row
    b.young = -1
    _support_row(b, kernel, m, b.krow)
    return b.krow


cdef inline double _merged_norm2(const Support* b, Py_ssize_t m, Py_ssize_t j,
                                 double log_k, double h) noexcept nogil:
    """sum over the problems of a_z^2, the squared coefficient of the point
    z = h x_m + (1 - h) x_j that best replaces a_m phi(x_m) + a_j phi(x_j)
    under the RBF kernel: a_z = a_m k(x_m, z) + a_j k(x_j, z), with
    k(x_m, z) = k(x_m, x_j)^((1-h)^2) and k(x_j, z) = k(x_m, x_j)^(h^2)."""
    cdef double km = skperc_exp_one((1.0 - h) * (1.0 - h) * log_k)
    cdef double kj = skperc_exp_one(h * h * log_k)
    cdef double total = 0.0, a
    cdef Py_ssize_t c
    for c in range(b.n_problems):
        a = b.coef[c * b.capacity + m] * km + b.coef[c * b.capacity + j] * kj
        total += a * a
    return total


cdef double _best_merge(const Support* b, Py_ssize_t m, Py_ssize_t j,
                        double k_mj, double* h_out) noexcept nogil:
    """The loss ||a_m phi(x_m) + a_j phi(x_j) - a_z phi(z)||^2, summed over
    the problems, of the best z on the segment from x_j to x_m, found by
    golden-section search of h in [0, 1] (Wang, Crammer and Vucetic,
    2012), or at its end h = 0 (z = x_j) where the search's last bracket
    holds it and the loss there is no larger; h in h_out."""
    cdef double invphi = 0.6180339887498949
    cdef double lo = 0.0, hi = 1.0, log_k = log(k_mj)
    cdef double h1 = hi - invphi * (hi - lo), h2 = lo + invphi * (hi - lo)
    cdef double v1 = _merged_norm2(b, m, j, log_k, h1)
    cdef double v2 = _merged_norm2(b, m, j, log_k, h2)
    cdef double h
    cdef Py_ssize_t step
    for step in range(GOLDEN_STEPS):
        if v1 >= v2:
            hi = h2
            h2 = h1
            v2 = v1
            h1 = hi - invphi * (hi - lo)
            v1 = _merged_norm2(b, m, j, log_k, h1)
        else:
            lo = h1
            h1 = h2
            v1 = v2
            h2 = lo + invphi * (hi - lo)
            v2 = _merged_norm2(b, m, j, log_k, h2)
    h = 0.5 * (lo + hi)
    v1 = _merged_norm2(b, m, j, log_k, h)
    # The search never evaluates an end of the segment: its point stays
    # 0.618^GOLDEN_STEPS / 2 inside. A partner far from x_m (a small k_mj:
    # k(x_m, z) = k_mj^((1-h)^2) barely grows off h = 0) may have its best
    # z at x_j itself, or nearer to it than that point, and z = x_j keeps
    # the partner's row: none to write, post again, or compute again for
    # the examples of the block. With 10 steps (0.004 inside) the last
    # bracket of 88% of the searches held h = 0 on the vocabulary data of
    # benchmarks/bench_kernel_scale.py (10,000 examples, budget 500), and 61%
    # took it, where the search's point rewrote the union of both rows to
    # move the partner 0.4% of the way: the fit took 0.85 s against 1.21 s.
    # With 15, whose point stays 0.0004 inside, the bracket held it in 22%
    # of the searches and 46 of 30,022 took it (none of 27,517 on the text
    # data): the best points of the others lie further in (see
    # GOLDEN_STEPS).
    # m, of the smallest coefficients, weighs no more than its
    # partner of the same class in a binary problem, so that its best h is
    # at most 1/2: the end h = 1 is not tried.
    if lo == 0.0:
        v2 = _merged_norm2(b, m, j, log_k, 0.0)
        if v2 >= v1:
            h = 0.0
            v1 = v2
    h_out[0] = h
    return _pair_norm2(b, m, j, k_mj) - v1


cdef double _pair_norm2(const Support* b, Py_ssize_t m, Py_ssize_t j,
                        double k_mj) noexcept nogil:
    """||a_m phi(x_m) + a_j phi(x_j)||^2, summed over the problems."""
    cdef double total = 0.0, am, aj
    cdef Py_ssize_t c
    for c in range(b.n_problems):
        am = b.coef[c * b.capacity + m]
        aj = b.coef[c * b.capacity + j]
        total += am * am + aj * aj + 2.0 * am * aj * k_mj
    return total


cdef double _merge_at_mean(const Support* b, Py_ssize_t m, Py_ssize_t j,
                           double k_mj) noexcept nogil:
    """The loss of _best_merge at h = |a_m| / (|a_m| + |a_j|) (the norms of
    the coefficients over the problems): the point of the segment that
    weighs the two by their coefficients."""
    cdef double am2 = 0.0, aj2 = 0.0, h
    cdef Py_ssize_t c
    for c in range(b.n_problems):
        am2 += b.coef[c * b.capacity + m] * b.coef[c * b.capacity + m]
        aj2 += b.coef[c * b.capacity + j] * b.coef[c * b.capacity + j]
    h = sqrt(am2) / (sqrt(am2) + sqrt(aj2))
    return _pair_norm2(b, m, j, k_mj) - _merged_norm2(b, m, j, log(k_mj), h)


cdef inline bint _nearer(const double* krow, const int64_t* age, Py_ssize_t j,
                         Py_ssize_t other) noexcept nogil:
    """Whether slot j is nearer than slot other: the larger kernel value
    in krow; of equal values, the older (age)."""
    return krow[j] > krow[other] or (
        krow[j] == krow[other] and age[j] < age[other])


cdef inline Py_ssize_t _keep_nearest(Py_ssize_t* near, Py_ssize_t count,
                                     Py_ssize_t limit, Py_ssize_t j,
                                     const double* krow,
                                     const int64_t* age) noexcept nogil:
    """Slot j into near, the count nearest slots so far, nearest first (see
    _nearer), keeping at most limit of them, by insertion; the new count.
    Inline: its callers scan the whole support, and most slots fail its
    first test."""
    cdef Py_ssize_t p
    if count == limit and not _nearer(krow, age, j, near[count - 1]):
        return count
    p = count if count < limit else limit - 1
    while p > 0 and _nearer(krow, age, j, near[p - 1]):
        near[p] = near[p - 1]
        p -= 1
    near[p] = j
    return count + 1 if count < limit else count


cdef Py_ssize_t _project(Support* b, const Kernel* kernel,
                         const double* krow, Py_ssize_t excluded) noexcept nogil:
    """The projection of k(x, .), of kernel row krow over the support, onto
    the span of its nearest support vectors but slot excluded (-1: none)
    (the Projectron's update, Orabona, Keshet and Caputo, 2009, on
    AVERAGING_NEIGHBOURS of them): their slots in b.near (the largest values
    of krow, the oldest of ties) and the coefficients
    u = (K + ridge I)^-1 krow[near] in b.near_coef, by Cholesky's
    factorization of their kernel matrix K. Returns their number, 0 where
    every one of them is the zero function."""
    cdef Py_ssize_t m = min(<Py_ssize_t>AVERAGING_NEIGHBOURS,
                            b.n_support - (excluded >= 0))
    cdef Py_ssize_t d = b.n_features, s, p, q, t, count = 0
    cdef Py_ssize_t* near = b.near
    cdef double* g = b.near_gram
    cdef double* u = b.near_coef
    cdef double largest = 0.0, value
    cdef const int32_t* features
    cdef const double* x
    cdef Py_ssize_t n_features, at
    if m <= 0:
        return 0
    # the m largest values, in decreasing order; of equal values (repeated
    # rows, rows of zeros under "poly") the oldest, not the lower slot:
    # removals move the last slot into the one they free
    for s in range(b.n_support):
        if s != excluded:
            count = _keep_nearest(near, count, m, s, krow, b.age)
    for p in range(m):
        n_features = -1
        for q in range(p, m):
            at = near[p] * b.capacity + near[q]
            if b.pair_values != NULL and b.pair_values[at] != 0.0:
                g[p * m + q] = b.pair_values[at]
            else:
                if n_features < 0:
                    n_features = _row_features(b, near[p], &features)
                    x = _scattered(b, near[p], features, n_features)
                g[p * m + q] = (_dense_dot(b, near[q], x, features, n_features)
                                * b.scale[near[q]] * b.scale[near[p]])
                _apply_kernel(kernel, b.sq_norms + near[q], 1,
                              b.sq_norms[near[p]], g + p * m + q)
                if b.pair_values != NULL:
                    b.pair_values[at] = g[p * m + q]
            g[q * m + p] = g[p * m + q]
        if n_features >= 0 and x == b.scattered:
            _unscatter(b.scattered, features, n_features)
        largest = max(largest, g[p * m + p])
    if largest == 0.0:
        # every neighbour is the zero function (k(x_s, x_s) = 0: a row of
        # zeros under the linear kernel), whose span holds 0 alone; the
        # system, ridge included, would be 0, and its solution not finite
        return 0
    # L L^T = K + ridge I in the lower triangle, then L v = krow, L^T u = v
    for p in range(m):
        g[p * m + p] += PROJECTION_RIDGE * largest
    for p in range(m):
        for q in range(p + 1):
            value = g[p * m + q]
            for t in range(q):
                value -= g[p * m + t] * g[q * m + t]
            g[p * m + q] = sqrt(value) if p == q else value / g[q * m + q]
    for p in range(m):
        value = krow[near[p]]
        for t in range(p):
            value -= g[p * m + t] * u[t]
        u[p] = value / g[p * m + p]
    for p in range(m - 1, -1, -1):
        value = u[p]
        for t in range(p + 1, m):
            value -= g[t * m + p] * u[t]
        u[p] = value / g[p * m + p]
    return m


# The partner of a merge is one of the MERGE_CANDIDATES nearest vectors of
# the class: the one whose merge at the point that weighs the two by their
# coefficients (_merge_at_mean) changes the function least; its point is
# then found by golden-section search. Measured
# (benchmarks/bench_kernel_scale.py, budget 500, the default early stopping,
# one fit each), with the nearest vector alone, with a golden-section search
# on each of the 8 nearest, and as here: on the wide data 0.920, 0.934 and
# 0.929 at 40,000 examples (unbudgeted: 0.938) and 0.904, 0.909 and 0.912 at
# 10,000; on the clusters 0.899, 0.899 and 0.897 at 40,000 and 0.888, 0.886
# and 0.888 at 10,000, in epochs of 0.124, 0.172 and 0.129 s at 40,000.
# Budgeted SGD searches every vector of the class: epochs 2.4 times as long as
# with the nearest alone on the clusters.
cdef enum:
    MERGE_CANDIDATES = 8


# Of the support vectors of the smallest coefficients, merging takes the
# newest and projection the oldest. A vector that no merge has reached
# holds the coefficient of its one update, so ties are the rule. The
# newest is most often the vector added at the update before: its kernel
# row over the support is its example's, kept (Support.young_row), where
# another costs a product with every support vector. The oldest took them
# from a queue (after an epoch on the data of
# benchmarks/bench_kernel_scale.py, 10,000 examples and a budget of 500,
# 141 such vectors on the wide data, 471 on the text data), each long
# after it entered. On that data, budget 500, one thread, medians of
# random_state 0 to 5 (0 to 2 for the wide and word-count data at 40,000),
# newest against oldest: the clusters 0.8859 against 0.8871 in 0.145
# against 0.171 s at 10,000 examples, 0.8969 against 0.8967 in 0.74
# against 0.61 s at 40,000 (8 epochs against 5.5, each 12% shorter); the
# wide data 0.9120 against 0.9126 in 0.27 against 0.48 s, 0.9300 against
# 0.9307 in 1.30 against 1.38 s; the text data 0.8121 against 0.8138 in
# 0.65 against 0.84 s, 0.8790 against 0.8768 in 1.96 against 2.20 s; the
# vocabulary 0.8764 against 0.8757 in 0.79 against 0.85 s, 0.9037 against
# 0.9041 in 2.38 against 3.33 s. Without the kept row the newest took 3%
# to 22% longer. A projection of the newest leaves the support as it
# was, the new vector's direction lost: it scored 0.641 against 0.695 on
# the text data and 0.718 against 0.799 on the vocabulary (10,000
# examples, random_state=0).
cdef Py_ssize_t _smallest(const Support* b, double* smallest) noexcept nogil:
    """The slot of the smallest coefficients (the sum of their squares over
    the problems, in smallest): of ties, the newest when merging, the
    oldest when projecting."""
    cdef Py_ssize_t c, s, m = 0
    cdef double size
    cdef bint newest = b.strategy == BUDGET_MERGE
    smallest[0] = INFINITY
    for s in range(b.n_support):
        size = 0.0
        for c in range(b.n_problems):
            size += b.coef[c * b.capacity + s] * b.coef[c * b.capacity + s]
        # ties go by age, whatever the order of the slots
        if size < smallest[0] or (size == smallest[0] and (
                b.age[s] > b.age[m] if newest else b.age[s] < b.age[m])):
            smallest[0] = size
            m = s
    return m


cdef void _add_projection(Support* b, Py_ssize_t n_near, Py_ssize_t c,
                          double step, double step_avg) noexcept nogil:
    """Add step (and step_avg to the averaging sums) times the projection
    of the last _project, on its n_near slots, to problem c."""
    cdef Py_ssize_t t, cap = b.capacity
    for t in range(n_near):
        b.coef[c * cap + b.near[t]] += step * b.near_coef[t]
        if b.avg_coef != NULL:
            b.avg_coef[c * cap + b.near[t]] += step_avg * b.near_coef[t]


cdef void _project_out(Support* b, const Kernel* kernel,
                       Py_ssize_t m) noexcept nogil:
    """Add the coefficients of slot m (and its averaging sums) times the
    projection of k(x_m, .) onto the span of its nearest support vectors
    (_project, m excluded) to theirs, before m is removed."""
    cdef Py_ssize_t c, n_near
    cdef Py_ssize_t cap = b.capacity
    _support_row(b, kernel, m, b.krow)
    n_near = _project(b, kernel, b.krow, m)
    for c in range(b.n_problems):
        _add_projection(b, n_near, c, b.coef[c * cap + m],
                        b.avg_coef[c * cap + m] if b.avg_coef != NULL else 0.0)


# A merged vector's scale that falls below FOLD_BELOW is written into its row
# (_fold) at once: its row's values grow as 1 / scale, and the error of its
# squared norm, updated merge after merge at the features each changes,
# with them. A partner moved a few thousandths of the way (word counts)
# keeps its scale for hundreds of merges; one moved a third (dense data)
# is written every few merges, in O(its features) as the merge itself.
cdef double FOLD_BELOW = 1.0 / 16.0


cdef void _merge_rows(Support* b, Py_ssize_t m, Py_ssize_t j,
                      double h) noexcept nogil:
    """Slot j's vector becomes h x_m + (1 - h) x_j, with its squared norm,
    and is marked as changed: its scale (1 - h) times, and its row plus
    h scale_m / ((1 - h) scale_j) times m's, where m's row is not 0."""
    cdef Py_ssize_t s, d = b.n_features
    cdef double* row_m = b.rows + m * d
    cdef double* row_j = b.rows + j * d
    cdef double scale = (1.0 - h) * b.scale[j]
    cdef double g = h * b.scale[m] / scale
    cdef double delta = 0.0, x_j, z
    cdef Py_ssize_t n_union = -1
    if b.row_counts != NULL and b.row_written[j] and b.row_counts[m] >= 0:
        # a written row (of more than VALUE_ROOM features, listed or not):
        # changed, and posted again, at m's features alone. A partner that
        # outgrew its list was rewritten over every feature in use and
        # posted again whole at each merge into it, and one listed read
        # its whole list (_add_in_place): on the data of
        # benchmarks/bench_kernel_scale.py (budget 500, merge, one thread,
        # medians of 5 seeds, 3 rounds alternating) the text data's fits
        # took 0.52 to 0.58 s at 10,000 examples, against 0.38 to 0.40 s
        # now, 2.0 s at 40,000 against 1.3 s; the vocabulary's 0.52 to
        # 0.66 s against 0.45 to 0.50 s, and 2.5 to 2.7 s against 1.9 s.
        # The same bits.
        _add_in_place(b, m, j, g, &delta)
        _mark_features(b, j, b.row_features + m * b.list_room,
                       b.row_counts[m])
    else:
        # over the union of the two lists where both rows are listed (+0
        # elsewhere in both, and in their sum), from the lists: the same
        # bits
        if b.row_counts != NULL:
            n_union = _merged_row(b, m, j, g, &delta)
        if n_union < 0:
            _write_listed(b, m)
            _write_listed(b, j)
            for s in range(d):
                x_j = row_j[s]
                z = x_j + g * row_m[s]
                delta += z * z - x_j * x_j
                row_j[s] = z
            if b.row_counts != NULL:
                b.row_counts[j] = -1
            _mark(b, j)
        elif not b.row_written[j] and _keeps_values(b, n_union):
            # a row that its list and values hold, and hold still: posted
            # again at m's features alone
            _list_row(b, j, b.nonzeros, b.nonzero_values, NULL, n_union)
            _mark_features(b, j, b.row_features + m * b.list_room,
                           b.row_counts[m])
        else:
            _set_row(b, j, b.nonzeros, b.nonzero_values, NULL, n_union)
            _mark(b, j)
    b.raw_sq[j] += delta
    b.scale[j] = scale
    b.sq_norms[j] = scale * scale * b.raw_sq[j]
    if scale < FOLD_BELOW:
        _fold(b, j)


cdef void _fold(Support* b, Py_ssize_t s) noexcept nogil:
    """Write slot s's scale into its row, with its squared norm (summed in
    feature order, as an example's), and mark it as changed."""
    cdef Py_ssize_t t, n, d = b.n_features
    cdef double c = b.scale[s], total = 0.0
    cdef double* row = b.rows + s * d
    cdef double* values
    cdef const int32_t* features
    if c == 1.0:
        return
    if b.row_counts == NULL:
        for t in range(d):
            row[t] = c * row[t]
        total = squared_norm(row, d)
    else:
        n = _row_features(b, s, &features)
        if _row_values(b, s) != NULL:
            values = b.row_values + s * VALUE_ROOM
            for t in range(n):
                values[t] = c * values[t]
            total = squared_norm(values, n)
        else:
            for t in range(n):
                row[features[t]] = c * row[features[t]]
                total += row[features[t]] * row[features[t]]
    b.raw_sq[s] = total
    b.sq_norms[s] = total
    b.scale[s] = 1.0
    _mark(b, s)


cdef int _make_room(Support* b, const Kernel* kernel, Epochs* e) except -1 nogil:
    """Free a slot: remove the oldest support vector ("remove"); remove the
    support vector of the smallest coefficients after adding them, times
    its projection onto the span of its AVERAGING_NEIGHBOURS nearest, to
    theirs ("project"); or merge the support vector of the smallest
    coefficients with one of the MERGE_CANDIDATES nearest of its class (see
    there), or remove it when that merge changes the function more
    ("merge")."""
    cdef Py_ssize_t c, s, j, m = 0, partner = -1, count, p
    cdef double smallest, best, best_h = 0.0, km, kj, loss, floor
    cdef const double* krow
    if b.strategy == BUDGET_REMOVE:
        for s in range(1, b.n_support):
            if b.age[s] < b.age[m]:
                m = s
    elif b.strategy == BUDGET_PROJECT:
        m = _smallest(b, &smallest)
        _project_out(b, kernel, m)
    else:
        m = _smallest(b, &smallest)
        krow = _kernel_row_of(b, kernel, m)
        # the candidates, nearest first (the largest kernel value, the oldest
        # of ties), in b.near; the nearest of equal losses is the partner
        count = 0
        floor = 0.0
        for j in range(b.n_support):
            # below the last of a full list, left out before the test of the
            # class, a branch that the processor mispredicts half the time
            if krow[j] < floor:
                continue
            # k = 0: the merge is a removal of the smaller, no better
            if j == m or b.code[j] != b.code[m] or not krow[j] > 0.0:
                continue
            count = _keep_nearest(b.near, count, MERGE_CANDIDATES, j, krow,
                                  b.age)
            if count == MERGE_CANDIDATES:
                floor = krow[b.near[count - 1]]
        best = INFINITY
        for p in range(count):
            loss = _merge_at_mean(b, m, b.near[p], krow[b.near[p]])
            if loss < best:
                best = loss
                partner = b.near[p]
        if partner >= 0:
            best = _best_merge(b, m, partner, krow[partner], &best_h)
            if not best < smallest:
                partner = -1
    for c in range(b.n_problems):
        if b.coef[c * b.capacity + m] != 0.0 or (
                partner >= 0 and b.coef[c * b.capacity + partner] != 0.0):
            # The function of problem c changed: it has not converged.
            e.epoch_changes[c] += 1
            e.converged[c] = 0
    if partner >= 0:
        km = skperc_exp_one((1.0 - best_h) * (1.0 - best_h)
                            * log(krow[partner]))
        kj = skperc_exp_one(best_h * best_h * log(krow[partner]))
        # at h = 0, z = x_j: the partner keeps its row, its norm and its
        # postings
        if best_h != 0.0:
            _merge_rows(b, m, partner, best_h)
            _entry_change(b, partner)
        for c in range(b.n_problems):
            b.coef[c * b.capacity + partner] = (
                b.coef[c * b.capacity + m] * km
                + b.coef[c * b.capacity + partner] * kj)
            if b.avg_coef != NULL:
                b.avg_coef[c * b.capacity + partner] = (
                    b.avg_coef[c * b.capacity + m] * km
                    + b.avg_coef[c * b.capacity + partner] * kj)
        # a merged vector is no sample
        if b.index[partner] >= b.first_index:
            b.slot_of[b.index[partner] - b.first_index] = -1
        b.index[partner] = -1
    _drop_slot(b, m)
    return 0


cdef inline Py_ssize_t _version(const Support* b,
                                Py_ssize_t at) noexcept nogil:
    """The version of the rows that snapshot at stands on (the first
    before any: it is empty then, of size 0)."""
    return b.snap_version[at] if b.snap_version[at] >= 0 else 0


cdef int _list_version(Support* b, Py_ssize_t v) except -1 nogil:
    """Version v of b.listed: each row of the support as the features that
    its products sum over (_row_features) and its values there."""
    cdef ListedVersions* listed = b.listed
    cdef int64_t* starts = listed.starts + v * (b.capacity + 1)
    cdef Py_ssize_t s, t, count, total = 0
    cdef const int32_t* features
    cdef const double* values
    cdef const double* row
    starts[0] = 0
    for s in range(b.n_support):
        count = _row_features(b, s, &features)
        _make_room_for(<void**>&listed.features[v], sizeof(int32_t),
                       &listed.room[2 * v], total + count)
        _make_room_for(<void**>&listed.values[v], sizeof(double),
                       &listed.room[2 * v + 1], total + count)
        values = _row_values(b, s)
        row = b.rows + s * b.n_features
        for t in range(count):
            listed.features[v][total + t] = features[t]
            listed.values[v][total + t] = (values[t] if values != NULL
                                           else row[features[t]])
        total += count
        starts[s + 1] = total
    return 0


cdef void _listed_row(const Support* b, Py_ssize_t va, Py_ssize_t r,
                      Py_ssize_t vb, Py_ssize_t n_b, double* krow) noexcept nogil:
    """krow[q] = a_r . b_q for row r of version va of b.listed and the
    n_b rows of version vb: each product over the features that b_q lists,
    in increasing order, a_r scattered (_dots_over's sum: the same bits),
    in O(their values)."""
    cdef const ListedVersions* listed = b.listed
    cdef const int64_t* starts_a = listed.starts + va * (b.capacity + 1)
    cdef const int64_t* starts_b = listed.starts + vb * (b.capacity + 1)
    cdef const int32_t* features_a = listed.features[va] + starts_a[r]
    cdef const int32_t* features_b = listed.features[vb]
    cdef const double* values_b = listed.values[vb]
    cdef Py_ssize_t q, t, n_features = starts_a[r + 1] - starts_a[r]
    cdef double dot
    _scatter(b.scattered, listed.values[va] + starts_a[r], features_a,
             n_features)
    for q in range(n_b):
        dot = 0.0
        for t in range(starts_b[q], starts_b[q + 1]):
            dot += values_b[t] * b.scattered[features_b[t]]
        krow[q] = dot
    _unscatter(b.scattered, features_a, n_features)


cdef double _version_products(const Kernel* kernel, const Support* b,
                              Py_ssize_t va, const double* coef_a,
                              Py_ssize_t n_a, Py_ssize_t vb,
                              const double* coef_b,
                              Py_ssize_t n_b) noexcept nogil:
    """<w_a, w_b> = sum_r sum_q coef_a[r] coef_b[q] k(a_r, b_q) of the rows
    of snapshot versions va and vb (-1: the support itself): from b.listed
    with CSR examples (the support listed as version n_problems + 1), else
    from the rows."""
    cdef Py_ssize_t r, q, cap = b.capacity, d = kernel.n_columns
    cdef const double* sq_a = b.sq_norms if va < 0 else b.snap_sq + va * cap
    cdef const double* sq_b = b.sq_norms if vb < 0 else b.snap_sq + vb * cap
    cdef const double* scale_a = (b.scale if va < 0
                                  else b.snap_scale + va * cap)
    cdef const double* scale_b = (b.scale if vb < 0
                                  else b.snap_scale + vb * cap)
    cdef const double* rows_a = b.rows
    cdef const double* rows_b = b.rows
    cdef double total = 0.0, inner
    if b.listed != NULL:
        va = b.n_problems + 1 if va < 0 else va
        vb = b.n_problems + 1 if vb < 0 else vb
    else:
        rows_a = b.rows if va < 0 else b.snap_rows + va * cap * d
        rows_b = b.rows if vb < 0 else b.snap_rows + vb * cap * d
    for r in range(n_a):
        if coef_a[r] == 0.0 or n_b == 0:
            continue
        if b.listed != NULL:
            _listed_row(b, va, r, vb, n_b, b.krow)
        else:
            _dots_over(rows_b, NULL, n_b, d, rows_a + r * d, NULL, 0, b.krow)
        # (as _support_row scales the products of two support vectors)
        _scale_dots(scale_b, n_b, b.krow)
        for q in range(n_b):
            b.krow[q] = b.krow[q] * scale_a[r]
        _apply_kernel(kernel, sq_b, n_b, sq_a[r], b.krow)
        inner = 0.0
        for q in range(n_b):
            inner += coef_b[q] * b.krow[q]
        total += coef_a[r] * inner
    return total


cdef int _support_moves(Support* b, const Kernel* kernel,
                        Epochs* e) except -1 nogil:
    """e.moved, ||w - w_s|| of each problem to its snapshots, for the
    problems whose stopping rule may read it at this epoch's end (it reads
    it after n_iter_no_change epochs without improvement); and e.radius2."""
    cdef Py_ssize_t c, s, at, v
    cdef Py_ssize_t cap = b.capacity
    cdef bint support_listed = False
    cdef double own, total
    e.radius2 = e.max_norm2
    for c in range(b.n_problems):
        e.moved[2 * c] = e.moved[2 * c + 1] = 0.0
        if not active(e, c) or (
                e.no_improvement[c] + 1 < e.control.n_iter_no_change):
            continue
        if b.listed != NULL and not support_listed:
            _list_version(b, b.n_problems + 1)
            support_listed = True
        own = _version_products(kernel, b, -1, _coef_at(b, c), b.n_support,
                                -1, _coef_at(b, c), b.n_support)
        for s in range(2):
            at = s * b.n_problems + c
            v = _version(b, at)
            total = own - 2.0 * _version_products(
                kernel, b, -1, _coef_at(b, c), b.n_support,
                v, b.snap_coef + at * cap, b.snap_n[at])
            total += _version_products(
                kernel, b, v, b.snap_coef + at * cap, b.snap_n[at],
                v, b.snap_coef + at * cap, b.snap_n[at])
            e.moved[2 * c + s] = sqrt(total) if total > 0.0 else 0.0
    return 0


cdef int _snapshot_support(Support* b, Epochs* e) except -1 nogil:
    """The snapshots that end_epoch asked for: w_r, and w_1 after the
    first epoch. The problems share the support's rows: the snapshots of an
    epoch's end stand on one copy of them, a version, in the first one
    that no snapshot stands on once those that they replace are let go.
    Every w_1 stands on the first epoch's, and each problem's w_r on one
    more at most: n_problems + 1 versions are enough, and as the first
    free one is taken, no more are ever touched than are used at once.
    (With a copy of the rows for each snapshot, two a problem, a fit of 10
    classes on the word rows of tests/test_memory.py grew the resident
    memory by 23 times its support's rows; with versions, by 6.3, its
    loop's own arrays 3 of them.) With CSR examples a version lists the
    rows (_list_version), in O(their values), and _support_moves reads the
    lists: on the vocabulary data of benchmarks/bench_kernel_scale.py
    (a budget of 500, early_stopping=False, one thread), copies of the rows
    over the words in use, and their products over every word, took 17.5 s
    and 720 MB at 10,000 examples against 1.1 s and 249 MB, and 32.9 s and
    1.19 GB at 40,000 against 2.8 s and 303 MB (the unbudgeted fit: 1.2 and
    15.1 s)."""
    cdef Py_ssize_t c, s, at, v = -1
    cdef Py_ssize_t d = b.n_features, cap = b.capacity, n = b.n_support
    for c in range(b.n_problems):
        for s in range(2 - e.snapshot[c], 2):
            at = s * b.n_problems + c
            if b.snap_version[at] >= 0:
                b.version_refs[b.snap_version[at]] -= 1
    for c in range(b.n_problems):
        for s in range(2 - e.snapshot[c], 2):
            if v < 0:
                v = 0
                while b.version_refs[v] > 0:
                    v += 1
                if b.listed != NULL:
                    _list_version(b, v)
                else:
                    memcpy(b.snap_rows + v * cap * d, b.rows,
                           n * d * sizeof(double))
                memcpy(b.snap_sq + v * cap, b.sq_norms, n * sizeof(double))
                memcpy(b.snap_scale + v * cap, b.scale, n * sizeof(double))
            at = s * b.n_problems + c
            b.snap_version[at] = v
            b.version_refs[v] += 1
            memcpy(b.snap_coef + at * cap, _coef_at(b, c), n * sizeof(double))
            b.snap_n[at] = n
    return 0


cdef struct Block:
    # examples that the loop examines together: their places in the visit
    # order, their rows as float64 (dense examples; else NULL), or the
    # values that they store as float64, example_room apart (CSR examples;
    # else NULL), squared norms, kernel rows over the support (capacity
    # values each) and whether each row is all finite
    const Py_ssize_t* visit
    Py_ssize_t n
    double* x
    double* values
    double* sq
    double* krows
    unsigned char* finite


cdef void _block_rows(Support* b, const Kernel* kernel,
                      const Kernel* examples, const Block* block,
                      Threads* threads, Py_ssize_t n_threads) noexcept nogil:
    """The rows, squared norms and kernel rows of the examples of block,
    SKPERC_POINTS examples at a time, split among n_threads: over the
    support as it stood at the last _refresh_panels (the panels, or without
    them the rows, which nothing changes meanwhile). Each row is
    computed as _kernel_row computes one example's, whichever thread runs
    it; every squared norm of an example is squared_norm of a float64 row,
    and the support's are carried from call to call, so that a call that
    resumes a run computes the kernel of the support to the same bits. A
    step of threads when n_threads > 1."""
    cdef Py_ssize_t g, n_groups = (block.n + SKPERC_POINTS - 1) // SKPERC_POINTS
    cdef double start
    if n_threads > 1:
        _start_step(threads, n_threads)
        for g in prange(n_groups, num_threads=n_threads, schedule="static"):
            start = skperc_wall()
            _group_rows(b, kernel, examples, block, g * SKPERC_POINTS)
            threads.busy[threadid()] += skperc_wall() - start
        _end_step(threads, n_threads)
    else:
        for g in range(n_groups):
            _group_rows(b, kernel, examples, block, g * SKPERC_POINTS)


cdef void _group_rows(const Support* b, const Kernel* kernel,
                      const Kernel* examples, const Block* block,
                      Py_ssize_t first) noexcept nogil:
    """_block_rows for the examples first <= q < first + SKPERC_POINTS (and
    < block.n): a whole group of dense examples reads the panels once for
    all of them; a CSR example reads the postings at its stored features,
    from the values it stores alone (_stored_values). It reads no field of
    b that examining changes."""
    cdef Py_ssize_t q, i, line, row_bytes, n_features
    cdef Py_ssize_t last = min(first + SKPERC_POINTS, block.n)
    cdef const char* address
    cdef Py_ssize_t d = b.n_features, cap = b.capacity, size = b.panel_n
    cdef double* x = block.x
    cdef double* values
    cdef double* krows = block.krows
    cdef const int32_t* features
    cdef bint grouped = (b.panels != NULL and b.example_indptr == NULL
                         and last - first == SKPERC_POINTS)
    # the rows of this group and the next, a cache line each 64 bytes (not
    # in a function of its own: GCC drops the calls of a function that only
    # prefetches)
    for q in range(first, min(last + SKPERC_POINTS, block.n)):
        i = block.visit[q]
        if examples.indptr != NULL:
            SKPERC_PREFETCH(examples.indptr + i)
            continue
        if examples.rows32 != NULL:
            address = <const char*>(examples.rows32 + i * examples.n_columns)
            row_bytes = examples.n_columns * sizeof(float)
        else:
            address = <const char*>(examples.rows + i * examples.n_columns)
            row_bytes = examples.n_columns * sizeof(double)
        for line in range(0, min(row_bytes + 63, ROW_PREFETCH_BYTES), 64):
            SKPERC_PREFETCH(address + line)
    for q in range(first, last):
        n_features = _stored_features(b, block.visit[q], &features)
        if features != NULL:
            values = block.values + q * b.example_room
            _stored_values(examples, block.visit[q], values)
            # (a sum in feature order: the bits of the row's over them)
            block.sq[q] = squared_norm(values, n_features)
            _support_dots(b, size, NULL, values, features, n_features,
                          krows + q * cap)
            continue
        _point(examples, block.visit[q], x + q * d)
        block.sq[q] = squared_norm(x + q * d, d)
        if not grouped:
            _support_dots(b, size, x + q * d, NULL, NULL, 0, krows + q * cap)
    if grouped:
        skperc_dots_panels_points(b.panels, size, d, x + first * d, d,
                                  krows + first * cap, cap)
    for q in range(first, last):
        _scale_dots(b.panel_scale, size, krows + q * cap)
        _apply_kernel(kernel, b.panel_sq, size, block.sq[q], krows + q * cap)
        block.finite[q] = skperc_all_finite(krows + q * cap, size)


cdef void _stored_values(const Kernel* examples, Py_ssize_t i,
                         double* out) noexcept nogil:
    """out: the values that CSR example i stores, as float64, in the order
    of its stored features."""
    cdef Py_ssize_t p, start = examples.indptr[i]
    if examples.values32 != NULL:
        for p in range(start, examples.indptr[i + 1]):
            out[p - start] = examples.values32[p]
    elif examples.values != NULL:
        for p in range(start, examples.indptr[i + 1]):
            out[p - start] = examples.values[p]


cdef int _examine_block(Support* b, const Kernel* kernel, Epochs* e,
                        const Block* block, const double* diag,
                        const int32_t* y, const double* weight,
                        bint first_epoch, double* delta,
                        double* delta_avg) except -1 nogil:
    """Examine the examples of block in turn (_examine_budget); 0 on a
    value that is not finite."""
    cdef Py_ssize_t q, i, d = b.n_features, cap = b.capacity, ahead
    for q in range(block.n):
        if q + PREFETCH_AHEAD < block.n:
            # what examining reads of an example, by its index
            ahead = block.visit[q + PREFETCH_AHEAD]
            SKPERC_PREFETCH(&weight[ahead])
            SKPERC_PREFETCH(&y[ahead])
            SKPERC_PREFETCH(&b.slot_of[ahead])
            if first_epoch:
                SKPERC_PREFETCH(&diag[ahead])
        i = block.visit[q]
        if weight[i] == 0.0:
            continue
        if first_epoch and not _see_norm(e, diag[i]):
            return 0
        if not _examine_budget(b, kernel, e, i,
                               block.x + q * d if block.x != NULL else NULL,
                               block.values + q * b.example_room
                               if block.values != NULL else NULL, block.sq[q],
                               block.krows + q * cap, block.finite[q], y[i],
                               weight[i], delta, delta_avg):
            return 0
    return 1


cdef void _correct_group(Support* b, const Kernel* kernel, const Block* block,
                         Py_ssize_t n_changed, Py_ssize_t first,
                         Py_ssize_t thread) noexcept nogil:
    """The values of the n_changed slots of b.changed in the kernel rows of
    the CSR examples first <= q < first + SKPERC_POINTS (and < block.n) of
    block, from their rows as they stand (_slot_values, in the scratch of
    thread); a row whose new values are not all finite is marked so. It
    reads no field of b that _refresh_panels writes."""
    cdef Py_ssize_t q, n_features, d = b.n_features, cap = b.capacity
    cdef const int32_t* features
    cdef double* scattered = b.thread_scattered + thread * d
    for q in range(first, min(first + SKPERC_POINTS, block.n)):
        n_features = _stored_features(b, block.visit[q], &features)
        if not _slot_values(b, kernel, NULL,
                            block.values + q * b.example_room,
                            features, n_features, block.sq[q], 1.0,
                            b.changed, n_changed, block.krows + q * cap,
                            b.thread_values + thread * 2 * cap, scattered):
            block.finite[q] = 0


cdef int _examine_and_rows(Support* b, const Kernel* kernel,
                           const Kernel* examples, Epochs* e,
                           const Block* block, const Block* next,
                           const double* diag, const int32_t* y,
                           const double* weight, bint first_epoch,
                           double* delta, double* delta_avg,
                           Py_ssize_t n_threads, double* busy) except -1 nogil:
    """A block examined while the next block's rows are computed, in one
    region of n_threads threads. The block's rows came from the panels or
    postings as they stood at the last refresh: with CSR examples the
    threads first compute again the values of the slots changed since
    (_correct_group) while one of them refreshes the postings
    (_refresh_panels), and no slot is stale then; with dense ones the
    panels are refreshed first, and those slots are stale. Then
    _examine_block on block in one thread while the others compute the
    rows of next (_group_rows) from the panels or postings, which the
    examining does not write; the thread that examines takes the groups
    left when it is done. Adds the seconds that each thread works to
    busy[thread]. 0 on a value that is not finite."""
    cdef Py_ssize_t g, t, n_changed = 0
    cdef Py_ssize_t n_block = (block.n + SKPERC_POINTS - 1) // SKPERC_POINTS
    cdef Py_ssize_t n_next = (next.n + SKPERC_POINTS - 1) // SKPERC_POINTS
    cdef bint correct = b.example_indptr != NULL
    cdef double start
    cdef int[1] examined
    _clear_marks(&b.stale)
    if correct:
        n_changed = _list_in_support(b, &b.dirty)
    else:
        for t in range(b.dirty.n):
            _add_mark(&b.stale, b.dirty.slots[t])
    if n_changed == 0:
        start = skperc_wall()
        _refresh_panels(b)
        busy[0] += skperc_wall() - start
        correct = False
    examined[0] = 1
    with parallel(num_threads=n_threads):
        if correct:
            # dynamic: the iterations go out in order, the refresh first
            for g in prange(n_block + 1, schedule="dynamic", chunksize=1):
                start = skperc_wall()
                if g == 0:
                    _refresh_panels(b)
                else:
                    _correct_group(b, kernel, block, n_changed,
                                   (g - 1) * SKPERC_POINTS, threadid())
                busy[threadid()] += skperc_wall() - start
        # the examining first
        for g in prange(n_next + 1, schedule="dynamic", chunksize=1):
            start = skperc_wall()
            if g == 0:
                examined[0] = _examine_block(b, kernel, e, block, diag, y,
                                             weight, first_epoch, delta,
                                             delta_avg)
            else:
                _group_rows(b, kernel, examples, next,
                            (g - 1) * SKPERC_POINTS)
            busy[threadid()] += skperc_wall() - start
    return examined[0]


cdef int _run_budget_epochs(
    Support* b,
    const Kernel* kernel,
    const Kernel* examples,
    const double* diag,
    const int32_t* y,
    const double* weight,
    Py_ssize_t* visit,
    Py_ssize_t n_visit,
    Epochs* e,
    double* delta,
    double* delta_avg,
    Block* blocks,
    Threads* threads,
) except -1 nogil:
    """The epochs of one budgeted call over the examples of visit, the
    points of ``examples``, BUDGET_BLOCK at a time, in the two blocks. A
    kernel value, radius, threshold or decision value that is not finite
    stops the call, recorded in e.failure."""
    cdef Py_ssize_t epoch, n_threads, s
    cdef Py_ssize_t countdown = CHECK_EVERY
    cdef int examined
    cdef Block* block
    cdef Block* next
    cdef Block* swap

    if not start_run(e):
        return 0
    for epoch in range(e.control.max_iter):
        if begin_epoch(e, epoch, visit, n_visit) == 0:
            break
        block = &blocks[0]
        next = &blocks[1]
        _begin_epoch_threads(threads)
        block.visit = visit
        block.n = min(BUDGET_BLOCK, n_visit)
        _begin_rows(b)
        # (the fewest kernel values a thread takes as for the columns)
        _block_rows(b, kernel, examples, block, threads,
                    _n_blocks(_threads(threads), block.n * b.n_support))
        while block.n > 0:
            next.visit = block.visit + block.n
            next.n = min(BUDGET_BLOCK, n_visit - (next.visit - visit))
            # a block costs a kernel row over the support per example
            countdown -= block.n * (1 + b.n_support // 64)
            if countdown <= 0:
                countdown = CHECK_EVERY
                interrupted(e)
            n_threads = _n_blocks(_threads(threads), next.n * b.n_support)
            if n_threads > 1 and _copied(b):
                _start_step(threads, n_threads)
                examined = _examine_and_rows(b, kernel, examples, e, block,
                                             next, diag, y, weight, epoch == 0,
                                             delta, delta_avg, n_threads,
                                             threads.busy)
                _end_step(threads, n_threads)
                if not examined:
                    return 0
            else:
                if not _examine_block(b, kernel, e, block, diag, y, weight,
                                      epoch == 0, delta, delta_avg):
                    return 0
                if next.n > 0:
                    _begin_rows(b)
                    _block_rows(b, kernel, examples, next, threads, n_threads)
            swap = block
            block = next
            next = swap
        if rule_on(e):
            _support_moves(b, kernel, e)
        end_epoch(e, b.n_support)
        if rule_on(e):
            _snapshot_support(b, e)
    return 1


cdef int _examine_budget(Support* b, const Kernel* kernel, Epochs* e,
                         Py_ssize_t i, const double* x, const double* values,
                         double sq_norm, double* krow, bint finite_row,
                         int32_t label, double weight, double* delta,
                         double* delta_avg) except -1 nogil:
    """Examine example i (dense row x, or the values of a CSR example at its
    stored features, its squared norm, its kernel row over the
    support as the block began, and whether that row was all finite):
    correct the values of the slots changed since, then update each problem that it makes a mistake on, making room
    first when it is not a support vector (or, with BUDGET_AVERAGING, adding
    the update times its projection (_project) to the coefficients of its
    nearest support vectors). 0 on a value that is not finite."""
    cdef Py_ssize_t k = b.n_problems, cap = b.capacity, d = b.n_features
    cdef Py_ssize_t c, slot, n_near
    cdef double yc, value
    cdef bint updated = False
    cdef const int32_t* features
    cdef Py_ssize_t n_features = _stored_features(b, i, &features)
    # a row found finite in the threads can only have lost that in the
    # changed slots; one that was not may have lost its non-finite values
    if not (_changed_values(b, kernel, x, values, features, n_features,
                            sq_norm, krow)
            and finite_row
            or skperc_all_finite(krow, b.n_support)):
        fail(e.failure, KERNEL_NAN if _any_nan(krow, b.n_support)
             else KERNEL_VALUE, e.epoch, e.n_updates[0], 0)
        return 0
    for c in range(k):
        delta[c] = 0.0
        if not active(e, c):
            continue
        yc = 1.0 if label == b.first_class + c else -1.0
        value = _weighted_sum(b.coef + c * cap, krow, b.n_support)
        if not _examine(e, c, i, yc, value, weight, delta, delta_avg):
            return 0
        updated = updated or delta[c] != 0.0
    if not updated:
        return 1

    slot = b.slot_of[i]
    if slot < 0 and b.strategy == BUDGET_AVERAGING:
        n_near = _project(b, kernel, krow, -1)
        for c in range(k):
            if delta[c] != 0.0:
                _add_projection(b, n_near, c, delta[c], delta_avg[c])
        return 1
    if slot < 0:
        if b.young_row != NULL:
            # krow: the example's row over the support as it stands
            memcpy(b.entry_row, krow, b.n_support * sizeof(double))
            b.entry_n = 0
        while b.n_support >= b.budget:
            _make_room(b, kernel, e)
        slot = b.n_support
        b.n_support += 1
        _mark(b, slot)
        _set_row(b, slot, features, values, x, n_features)
        b.sq_norms[slot] = sq_norm
        b.raw_sq[slot] = sq_norm
        b.scale[slot] = 1.0
        b.index[slot] = b.first_index + i
        b.code[slot] = label
        b.age[slot] = b.clock
        b.clock += 1
        b.slot_of[i] = slot
        for c in range(k):
            b.coef[c * cap + slot] = 0.0
            if b.avg_coef != NULL:
                b.avg_coef[c * cap + slot] = 0.0
        if b.young_row != NULL:
            _keep_young(b, kernel, slot)
    for c in range(k):
        if delta[c] == 0.0:
            continue
        b.coef[c * cap + slot] += delta[c]
        if b.avg_coef != NULL:
            b.avg_coef[c * cap + slot] += delta_avg[c]
    return 1


cdef void _set_examples(Support* b, const Kernel* examples) noexcept:
    """The CSR structure of the examples in b (NULL for dense ones)."""
    b.example_indptr = examples.indptr
    b.example_indices = examples.indices if examples.indptr != NULL else NULL


cdef object _hold_blocks(Support* b, Block* blocks, Py_ssize_t n_blocks,
                         tuple kept=None, compact=None,
                         Py_ssize_t example_room=0):
    """Point the marks, panels or postings and panel norms of b (its
    capacity, n_features and examples set, its support in b.rows and
    b.sq_norms), the lists of its rows and their values, its scratch of
    features, and the
    buffers of n_blocks blocks (with CSR examples, example_room values an
    example) to arrays: new panels or postings, and the
    others new or ``kept``, those that a call before on these rows left (its
    slots marked stale: cleared). New ones take the support's rows from
    ``compact``, a CSR matrix of them (_list_compact), where given, else
    from b.rows. List the rows of the support not listed (_list_rows) and
    fill the panels or postings from them. Returns (panels or postings,
    the others), which must outlive their use."""
    cdef Py_ssize_t t, cap = b.capacity, d = b.n_features
    cdef bint sparse = b.example_indptr != NULL
    # The kernel rows over the support (of the blocks' examples, and of the
    # vector to merge) read it from panels, and the validation score of
    # early stopping its rows, or after CSR examples the CSR rows that the
    # loop gives (kernel_products). Measured against C-ordered
    # rows, alternating (budget 500, 100 features, 40,000 examples): a fit
    # took 0.7 times as long, on one thread and on two; with 20 features,
    # where these products take a smaller part, 0.9. CSR examples read it
    # from postings, its values that are not 0 by feature, where panels
    # hold every slot at every feature in use: on the vocabulary data of
    # benchmarks/bench_kernel_scale.py (budget 500, merge, medians of 3,
    # alternating) the panels took 166 MB at 10,000 examples and were
    # set up anew at every epoch of early stopping, and a fit took 3.26 s
    # and 534 MB against 2.37 s and 371 MB with postings, 9.33 s and
    # 895 MB against 6.45 s and 575 MB at 40,000; on its text data (3,000
    # columns) 0.80 s against 0.78 s at 10,000 examples.
    cdef Py_ssize_t n_panels = (cap + SKPERC_PANEL - 1) // SKPERC_PANEL
    # Postings filled anew at each call hold each feature's entries in the
    # order of the slots, in memory taken feature after feature. Kept
    # from the call before, they hold them where merges left them: on the
    # vocabulary data of benchmarks/bench_kernel_scale.py, 100,000
    # examples, the products of the examples with the support took 17%
    # longer, and the fit 4%.
    cdef double[::1] panels = _line_aligned_zeros(
        n_panels * SKPERC_PANEL * d
        if skperc_dots_many_supported() and not sparse else 0)
    cdef _PostedSupport posted = _PostedSupport(d, cap) if sparse else None
    if kept is None:
        kept = (
            np.zeros(cap),
            np.zeros(2 * cap, dtype=np.uint8),
            np.zeros(2 * cap, dtype=np.int64),
            # the blocks of BUDGET_BLOCK examples: their rows, or the values
            # that CSR examples store (where rows over every feature in use
            # took 10.5 MB a block over a vocabulary of 41,000 words, and the
            # pages of 410 MB over 1,600,000)
            np.zeros(
                n_blocks * BUDGET_BLOCK * (example_room if sparse else d)),
            np.zeros(n_blocks * BUDGET_BLOCK),
            np.zeros(n_blocks * BUDGET_BLOCK * cap),
            np.zeros(n_blocks * BUDGET_BLOCK, dtype=np.uint8),
            np.zeros(d, dtype=np.int32),
            # the lists of the rows: room for a quarter of the features a
            # slot, an eighth of the memory of the rows, and VALUE_ROOM
            # values. Their pages are touched as the lists are written (a
            # slot's room spans many pages, of which its list takes the
            # first few): a numpy array of them, on huge pages, grew a fit
            # of 400 support vectors over 725,000 words in use by 290 MB
            paged_array(1, cap * (d // 4) + 1 if sparse else 1, zeroed=True,
                        int32=True)[0],
            np.full(cap, -1, dtype=np.intp),
            np.zeros(cap * VALUE_ROOM if sparse else 1),
            np.zeros(d if sparse else 1),
            np.zeros(d if sparse else 1),
            # every row written in b.rows, unless compact holds them
            np.full(cap if sparse else 1, compact is None, dtype=np.uint8),
        )
    cdef double[::1] panel_sq = kept[0]
    cdef unsigned char[::1] marks = kept[1]
    cdef int64_t[::1] lists = kept[2]
    cdef double[::1] x = kept[3]
    cdef double[::1] sq = kept[4]
    cdef double[::1] krows = kept[5]
    cdef unsigned char[::1] finite_rows = kept[6]
    cdef int32_t[::1] nonzeros = kept[7]
    cdef int32_t[::1] row_features = kept[8]
    cdef Py_ssize_t[::1] row_counts = kept[9]
    cdef double[::1] row_values = kept[10]
    cdef double[::1] nonzero_values = kept[11]
    cdef double[::1] scattered = kept[12]
    cdef unsigned char[::1] written = kept[13]
    b.nonzeros = &nonzeros[0]
    b.nonzero_values = &nonzero_values[0]
    b.scattered = &scattered[0]
    b.row_features = &row_features[0] if sparse else NULL
    b.row_values = &row_values[0] if sparse else NULL
    b.row_counts = &row_counts[0] if sparse else NULL
    b.row_written = &written[0] if sparse else NULL
    b.list_room = d // 4
    b.example_room = example_room
    b.panels = &panels[0] if panels.shape[0] > 0 else NULL
    b.postings = &posted.p if sparse else NULL
    b.panel_sq = &panel_sq[0]
    b.dirty.on = &marks[0]
    b.stale.on = &marks[cap]
    b.dirty.slots = &lists[0]
    b.stale.slots = &lists[cap]
    marks[:] = 0
    b.dirty.n = b.stale.n = 0
    for t in range(n_blocks):
        blocks[t].x = NULL if sparse else &x[t * BUDGET_BLOCK * d]
        blocks[t].values = (&x[t * BUDGET_BLOCK * example_room] if sparse
                            else NULL)
        blocks[t].sq = &sq[t * BUDGET_BLOCK]
        blocks[t].krows = &krows[t * BUDGET_BLOCK * cap]
        blocks[t].finite = &finite_rows[t * BUDGET_BLOCK]
    if sparse and compact is not None:
        _list_compact(b, compact)
    _list_rows(b)
    for t in range(b.n_support):
        _mark(b, t)
    _refresh_panels(b)
    return (panels, posted), kept


cdef tuple _hold_scales(Support* b, X, double[::1] scale,
                        double[::1] raw_sq):
    """Point the scales of b (its capacity set) and its rows' squared norms
    to scale and raw_sq (capacity each), and its panels' scales to a new
    array; with CSR examples, its marks of slots to post whole and room
    for the features of the merges of two blocks to post again, each of
    one example's features or fewer (else the slot is posted whole).
    Returns the new arrays, which must outlive their use."""
    cdef Py_ssize_t cap = b.capacity
    cdef bint sparse = sp.issparse(X)
    if scale.shape[0] != cap or raw_sq.shape[0] != cap:
        raise ValueError("run_budget_epochs: the arrays do not fit.")
    cdef double[::1] panel_scale = np.ones(cap)
    cdef unsigned char[::1] whole = np.zeros(cap, dtype=np.uint8)
    cdef int64_t[::1] pending = np.zeros(
        2 * BUDGET_BLOCK * _example_room(X) if sparse else 1,
        dtype=np.int64)
    b.scale = &scale[0]
    b.raw_sq = &raw_sq[0]
    b.panel_scale = &panel_scale[0]
    b.whole = &whole[0] if sparse else NULL
    b.pending = &pending[0]
    b.pending_n = 0
    b.pending_room = pending.shape[0] if sparse else 0
    return panel_scale.base, whole.base, pending.base


cdef Py_ssize_t _example_room(X):
    """The most features that a row of X stores, at least 1, for CSR X; 0
    for dense X."""
    if not sp.issparse(X):
        return 0
    return max(1, int(np.diff(X.indptr).max(initial=0)))


cdef int _list_compact(Support* b, compact) except -1:
    """The rows of the support from compact, a CSR matrix of them (sorted
    indices; a 0 of either sign may be left out, a 0 of every product and
    merge): each listed with its values where the list keeps them, else
    written into b.rows (_set_row)."""
    cdef const int64_t[::1] indptr = np.asarray(compact.indptr, dtype=np.int64)
    cdef const int32_t[::1] indices = np.asarray(compact.indices,
                                                 dtype=np.int32)
    cdef const double[::1] data = np.asarray(compact.data, dtype=np.float64)
    cdef Py_ssize_t s, start
    if compact.shape != (b.n_support, b.n_features):
        raise ValueError("run_budget_epochs: the compact rows do not fit.")
    for s in range(b.n_support):
        start = indptr[s]
        if start == indptr[s + 1]:
            # (no value: any list will do)
            _set_row(b, s, b.nonzeros, b.nonzero_values, NULL, 0)
        else:
            _set_row(b, s, &indices[start], &data[start], NULL,
                     indptr[s + 1] - start)
    return 0


cdef void _list_rows(Support* b) noexcept nogil:
    """With CSR examples, list the features of each row held that has no
    list (none yet, or a merge's union that outgrew its room), found in
    O(n_features): a row that fits its room again is read in O(its
    features) from then on."""
    cdef Py_ssize_t t, n_features
    cdef const int32_t* features
    if b.row_counts == NULL:
        return
    for t in range(b.n_support):
        if b.row_counts[t] < 0:
            n_features = _row_features(b, t, &features)
            _list_row(b, t, features, NULL, b.rows + t * b.n_features,
                      n_features)


def run_budget_epochs(
    X,
    KernelSpec spec,
    const double[::1] diag,
    const int32_t[::1] y,
    int32_t first_class,
    const double[::1] weight,
    Py_ssize_t[::1] visit,
    support,
    run,
    Py_ssize_t budget,
    int strategy,
    object schedule,
    Control control,
    const unsigned char[::1] stop,
    int64_t[::1] failure,
    bint continued=False,
    Py_ssize_t n_threads=1,
    thread_state=None,
    double cache_bytes=0.0,
):
    """Run up to ``control.max_iter`` budgeted epochs over the examples in
    visit, the rows of ``X``: a C-ordered float64 or float32 array or a
    CSR matrix with int32 indices (the same bits either way); update
    ``support`` in place. The kernel rows of a block of examples split
    among ``n_threads``, the same bits for any number.

    ``support`` holds the support vectors in slots: ``rows`` (capacity
    rows; with CSR examples, the loop writes there only the rows whose
    lists do not keep their values, and a call with ``support.held`` None
    reads them from ``support.compact``, a CSR matrix of the rows in use),
    ``sq_norms`` (capacity: the squared norms of the vectors held, kept
    here as a row is written), ``scale`` and ``raw_sq`` (capacity: slot s
    holds the vector ``scale[s] * rows[s]``, and ``raw_sq[s]`` is the
    squared norm of its row, as squared_norms sums it, or for a scaled row
    as merges updated it at the features that each changed; the scales are
    1 but after merges), ``coef`` and
    ``avg_coef`` (one row per problem, ``avg_coef`` with no rows turns
    averaging off), ``index``, ``code``, ``age`` (capacity), and ``state``,
    (number held, clock of entries, index of the first example of this
    call). ``budget`` <= capacity support vectors are kept by ``strategy``
    (a BudgetStrategy; BUDGET_MERGE and BUDGET_AVERAGING need KERNEL_RBF,
    and BUDGET_AVERAGING a support to project onto). With CSR examples it
    sets ``support.compact`` to the rows in use as a CSR matrix of their
    values not 0, in feature order, and after a call that finishes
    ``support.held`` to its working arrays, which the next call takes up
    (None: set up anew, from ``support.compact`` after CSR examples, as for
    rows changed outside the loop). The other
    arguments (``thread_state`` too) are those of run_epochs, for the
    examples of this call.
    BUDGET_AVERAGING
    keeps the kernel values among the support that it computes when
    capacity^2 of them and their marks take at most ``cache_bytes``.
    Returns (epochs of each problem, whether each converged, whether the
    stopping rule ended each).
    """
    cdef double[:, ::1] rows = support.rows
    cdef double[::1] sv_sq = support.sq_norms
    cdef double[:, ::1] coef = support.coef
    cdef double[:, ::1] avg_coef = support.avg_coef
    cdef int64_t[::1] index = support.index
    cdef int32_t[::1] code = support.code
    cdef int64_t[::1] age = support.age
    cdef int64_t[::1] state = support.state
    cdef Py_ssize_t k = coef.shape[0], cap = coef.shape[1]
    cdef Py_ssize_t n = y.shape[0], d = rows.shape[1], ii
    cdef bint average = avg_coef.shape[0] > 0
    cdef Threshold rule = read_threshold(schedule, 1.0)
    cdef Kernel kernel
    cdef Support b
    cdef Epochs e

    opened = open_epochs(&e, run, &rule, &control, failure, stop)
    if not (e.n_problems == k and 0 < budget <= cap
            and rows.shape[0] == cap and sv_sq.shape[0] == cap
            and index.shape[0] == cap and code.shape[0] == cap
            and age.shape[0] == cap and state.shape[0] == 3
            and 0 <= state[0] <= cap
            and (not average or (avg_coef.shape[0] == k
                                 and avg_coef.shape[1] == cap))
            and diag.shape[0] == n
            and weight.shape[0] == n
            and X.shape == (n, d)):
        raise ValueError("run_budget_epochs: the arrays do not fit.")
    if spec.kind in (KERNEL_PYTHON, KERNEL_PRECOMPUTED) or (
            strategy in (BUDGET_MERGE, BUDGET_AVERAGING)
            and spec.kind != KERNEL_RBF):
        raise ValueError("run_budget_epochs: a kernel on the features "
                         "(the RBF kernel to merge, or for the averaging "
                         "epoch).")
    if strategy == BUDGET_AVERAGING and state[0] == 0:
        raise ValueError("run_budget_epochs: no support to project onto.")
    for ii in range(visit.shape[0]):
        if not 0 <= visit[ii] < n:
            raise ValueError("run_budget_epochs: a visited point is out of range.")
    if visit.shape[0] == 0:
        if sp.issparse(X):
            support.compact = sp.csr_matrix(support.rows[: state[0]])
        closed = close_epochs(&e, run, opened)
        return closed + (e.rng,) if continued else closed

    cdef double[::1] krow = np.zeros(cap)
    cdef bint young = strategy == BUDGET_MERGE
    cdef double[:, ::1] young_rows = np.zeros((2 if young else 0, cap))
    cdef int64_t[::1] changed = np.zeros(cap, dtype=np.int64)
    cdef double[::1] changed_values = np.zeros(2 * cap)
    # (the threads' scratch of _correct_group, which runs on CSR examples)
    cdef double[::1] thread_values = np.zeros(
        max(1, n_threads) * 2 * cap if sp.issparse(X) else 1)
    cdef double[::1] thread_scattered = np.zeros(
        max(1, n_threads) * d if sp.issparse(X) else 1)
    cdef Py_ssize_t[::1] near = np.zeros(
        max(<Py_ssize_t>AVERAGING_NEIGHBOURS, <Py_ssize_t>MERGE_CANDIDATES),
        dtype=np.intp)
    cdef double[::1] near_gram = np.zeros(
        AVERAGING_NEIGHBOURS * AVERAGING_NEIGHBOURS)
    cdef double[::1] near_coef = np.zeros(AVERAGING_NEIGHBOURS)
    # (of the table, only the pages of the values used are touched: on
    # numpy's huge pages, zeroing them took 9% of a fit with a budget of
    # 4,000 on 10,000 examples)
    cdef bint pairs = (strategy == BUDGET_AVERAGING
                       and cap * cap * sizeof(double) <= cache_bytes)
    cdef double[::1] pair_values = paged_array(
        1, cap * cap if pairs else 1, zeroed=True)[0]
    cdef int64_t[::1] slot_of = np.full(n, -1, dtype=np.int64)
    # (of the versions, only the pages of those used are touched)
    # (with CSR examples, the versions of the rows are listed instead)
    cdef Py_ssize_t snap_d = 0 if sp.issparse(X) else d
    snapshots = np.zeros((k + 1) * cap * (snap_d + 2) + 2 * k * cap
                         if control.n_iter_no_change else 0)
    cdef double[::1] snap = snapshots
    cdef _ListedSupport listed = (
        _ListedSupport(k + 2, cap)
        if sp.issparse(X) and control.n_iter_no_change else None)
    cdef int64_t[::1] snap_n = np.zeros(2 * k, dtype=np.int64)
    cdef int64_t[::1] snap_version = np.full(2 * k, -1, dtype=np.int64)
    cdef int64_t[::1] version_refs = np.zeros(k + 1, dtype=np.int64)
    cdef double[::1] delta = np.zeros(k)
    cdef double[::1] delta_avg = np.zeros(k)
    cdef Block[2] blocks
    cdef Threads threads
    cdef double[::1] busy = np.zeros(max(1, n_threads))
    cdef int finished

    # the kernel on the support, and the examples' rows
    cdef Kernel examples
    _set_kernel(&kernel, support.rows, sv_sq, spec, None, np.empty(0))
    _set_kernel(&examples, X, np.empty(0), spec, None, np.empty(0))

    b.n_problems = k
    b.budget = budget
    b.capacity = cap
    b.n_features = d
    b.n_support = state[0]
    for ii in range(b.n_support):
        # a run continued over calls on one batch (early stopping) finds
        # the slots of the batch's examples again
        if 0 <= index[ii] - state[2] < n:
            slot_of[index[ii] - state[2]] = ii
    b.strategy = strategy
    b.first_class = first_class
    b.rows = &rows[0, 0]
    b.sq_norms = &sv_sq[0]
    scales = _hold_scales(&b, X, support.scale, support.raw_sq)
    b.coef = &coef[0, 0]
    b.avg_coef = &avg_coef[0, 0] if average else NULL
    b.index = &index[0]
    b.code = &code[0]
    b.age = &age[0]
    b.clock = state[1]
    b.first_index = state[2]
    b.slot_of = &slot_of[0]
    b.krow = &krow[0]
    b.young = -1
    b.young_row = &young_rows[0, 0] if young else NULL
    b.entry_row = &young_rows[1, 0] if young else NULL
    b.entry_n = -1
    b.changed = &changed[0]
    b.changed_values = &changed_values[0]
    b.thread_values = &thread_values[0] if sp.issparse(X) else NULL
    b.thread_scattered = &thread_scattered[0] if sp.issparse(X) else NULL
    b.near = &near[0]
    b.near_gram = &near_gram[0]
    b.near_coef = &near_coef[0]
    b.pair_values = &pair_values[0] if pairs else NULL
    _set_examples(&b, &examples)
    b.snap_rows = &snap[0] if snap.shape[0] > 0 and snap_d > 0 else NULL
    b.snap_sq = &snap[(k + 1) * cap * snap_d] if snap.shape[0] > 0 else NULL
    b.snap_coef = (&snap[(k + 1) * cap * (snap_d + 1)] if snap.shape[0] > 0
                   else NULL)
    b.snap_scale = (&snap[(k + 1) * cap * (snap_d + 1) + 2 * k * cap]
                    if snap.shape[0] > 0 else NULL)
    b.listed = &listed.v if listed is not None else NULL
    b.snap_n = &snap_n[0]
    b.snap_version = &snap_version[0]
    b.version_refs = &version_refs[0]
    # On CSR examples, the working arrays that the last call on this
    # support left, when nothing but the loop changed its rows since: the
    # lists of the rows' features and their values, the blocks' buffers
    # (the postings are filled anew). Set up anew, the lists cost a scan of
    # every row at each epoch of early stopping (and the blocks, then rows
    # over every feature in use, the first touches of their pages): on the
    # vocabulary data of benchmarks/bench_kernel_scale.py (budget 500,
    # merge, alternating)
    # a fit of 10,000 examples took 1.34 to 1.43 s on one thread and 1.39
    # to 1.44 s on two, against 1.17 to 1.30 s and 1.22 to 1.24 s with
    # them kept (and the rows' squared norms kept, not summed again at each
    # call); of 40,000, 4.73 to 4.90 s against 4.17 to 4.24 s (one thread).
    kept, support.held = support.held, None
    held = _hold_blocks(&b, blocks, 2,
                        kept if b.example_indptr != NULL else None,
                        support.compact if kept is None else None,
                        _example_room(X))
    thread_state = _start_threads(&threads, busy, thread_state)

    with nogil:
        finished = _run_budget_epochs(
            &b, &kernel, &examples, &diag[0], &y[0], &weight[0], &visit[0],
            visit.shape[0], &e, &delta[0], &delta_avg[0], blocks, &threads,
        )
    _keep_threads(&threads, thread_state)
    state[0] = b.n_support
    state[1] = b.clock
    if finished and b.example_indptr != NULL:
        # (a call that stopped on a failure leaves them to be set up anew)
        support.held = held[1]
    if b.postings != NULL:
        support.compact = _posted_rows(&b)
    closed = close_epochs(&e, run, opened)
    return closed + (e.rng,) if continued else closed


def support_block_rows(X, vectors, KernelSpec spec,
                       Py_ssize_t n_threads=1):
    """``k(vectors, X[i])`` for each row of X (dense or CSR, float64 or
    float32), of shape (len(X), len(vectors)), computed as the budgeted loop
    computes the kernel rows of a block of examples (_block_rows)."""
    cdef Support b
    cdef Block block
    cdef Threads threads
    cdef Kernel kernel, examples
    # a copy: the rows of a Support are writable (the loop merges into them)
    cdef double[:, ::1] support = np.array(vectors, dtype=np.float64, order="C")
    cdef Py_ssize_t n = X.shape[0], n_support = support.shape[0]
    cdef Py_ssize_t d = support.shape[1], start
    if spec.kind in (KERNEL_PYTHON, KERNEL_PRECOMPUTED) or not (
            X.shape[1] == d and n_support > 0 and n_threads >= 1):
        raise ValueError("support_block_rows: a kernel on the features, "
                         "arrays that fit, and n_threads >= 1.")
    cdef double[::1] sq = squared_norms(support.base)
    cdef Py_ssize_t[::1] visit = np.arange(n, dtype=np.intp)
    out = np.zeros((n, n_support))
    _set_kernel(&kernel, support.base, sq, spec, None, np.empty(0))
    _set_kernel(&examples, X, np.empty(0), spec, None, np.empty(0))
    memset(&b, 0, sizeof(Support))
    b.capacity = b.n_support = n_support
    b.n_features = d
    b.rows = &support[0, 0]
    b.sq_norms = &sq[0]
    scale, raw_sq = np.ones(n_support), np.array(sq)
    scales = _hold_scales(&b, X, scale, raw_sq)
    _set_examples(&b, &examples)
    held = _hold_blocks(&b, &block, 1, None, None, _example_room(X))
    cdef double[::1] busy = np.zeros(n_threads)
    _start_threads(&threads, busy, None)
    # the block's rows, in the arrays held (capacity = n_support)
    krows = np.asarray(
        <double[:BUDGET_BLOCK * n_support]> block.krows
    ).reshape(BUDGET_BLOCK, n_support)
    for start in range(0, n, BUDGET_BLOCK):
        block.visit = &visit[start]
        block.n = min(BUDGET_BLOCK, n - start)
        with nogil:
            _block_rows(&b, &kernel, &examples, &block, &threads, n_threads)
        out[start : start + block.n] = krows[: block.n]
    return out
