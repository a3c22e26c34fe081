# cython: language_level=3
"""The shuffling of the compiled loops: splitmix64 and Fisher-Yates."""

from libc.stdint cimport uint64_t


cdef inline uint64_t next_random(uint64_t* state) noexcept nogil:
    """splitmix64."""
    cdef uint64_t z
    state[0] += 0x9E3779B97F4A7C15ULL
    z = state[0]
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL
    return z ^ (z >> 31)


cdef inline void shuffle_order(Py_ssize_t* order, Py_ssize_t n,
                               uint64_t* state) noexcept nogil:
    """Fisher-Yates shuffle of order in place."""
    cdef Py_ssize_t i, j, tmp
    for i in range(n - 1, 0, -1):
        j = <Py_ssize_t>(next_random(state) % <uint64_t>(i + 1))
        tmp = order[i]
        order[i] = order[j]
        order[j] = tmp
