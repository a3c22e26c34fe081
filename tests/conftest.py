"""Settings shared by the test modules.

The property-based tests (hypothesis) run under the profile "skperc":
derandomized, so that every run, in CI and on a laptop, draws the same
examples; no deadline, since a first call may compile or warm caches; and
few examples per test, so that the suite stays fast. Set the environment
variable SKPERC_HYPOTHESIS_EXAMPLES to draw more, for example::

    SKPERC_HYPOTHESIS_EXAMPLES=500 python -m pytest tests/test_hostile_input.py

Hypothesis's example database is off: a derandomized run finds the same
failing example again without it, and the test run writes no files.
"""

import os

from hypothesis import settings

settings.register_profile(
    "skperc",
    deadline=None,
    derandomize=True,
    database=None,
    max_examples=int(os.environ.get("SKPERC_HYPOTHESIS_EXAMPLES", "50")),
)
settings.load_profile("skperc")
