# cython: language_level=3
"""The kinds of compiled schedules and radius rules (_thresholds.pxd), for
skperc.schedules to name."""
