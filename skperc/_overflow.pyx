# cython: language_level=3
"""The quantities a compiled loop reports overflowing (_overflow.pxd), for
skperc._nonfinite to name."""
