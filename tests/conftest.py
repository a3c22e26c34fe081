"""Settings shared by the test modules.

The property-based tests (hypothesis) run under the profile "skperc":
derandomized, so that every run, in CI and on a laptop, draws the same
examples; no deadline, since a first call may compile or warm caches; and
few examples per test, so that the suite stays fast. Set the environment
variable SKPERC_HYPOTHESIS_EXAMPLES to draw more, for example::

    SKPERC_HYPOTHESIS_EXAMPLES=500 python -m pytest tests/test_hostile_input.py

Hypothesis's example database is off: a derandomized run finds the same
failing example again without it, and the test run writes no files.

Every test starts with NumPy's global random state (what an estimator with
``random_state=None`` draws from) seeded from the test's own id, so that its
result depends neither on the tests that ran before it nor on luck: an
unseeded estimator that fails one initialisation in a few hundred once
failed CI at random. Set SKPERC_TEST_SEED to an integer to draw other
states, and find the tests whose assertions hold only for some::

    SKPERC_TEST_SEED=1 python -m pytest

Each test module leaves the process's environment as it found it (see
_environment_as_found).
"""

import os
import random
import zlib

import numpy as np
import pytest
from hypothesis import settings

settings.register_profile(
    "skperc",
    deadline=None,
    derandomize=True,
    database=None,
    max_examples=int(os.environ.get("SKPERC_HYPOTHESIS_EXAMPLES", "50")),
)
settings.load_profile("skperc")


_SEED = int(os.environ.get("SKPERC_TEST_SEED", "0"))


@pytest.fixture(autouse=True)
def _seed_global_random_state(request):
    seed = zlib.crc32(request.node.nodeid.encode()) ^ _SEED
    # the legacy global state is what check_random_state(None) returns
    np.random.seed(seed)  # noqa: NPY002
    random.seed(seed)


@pytest.fixture(autouse=True, scope="module")
def _environment_as_found():
    # dask's LocalCluster sets OMP_NUM_THREADS=1 (and more: its nannies'
    # pre-spawn environment) in the process that starts it, and leaves it
    # there: every subprocess that a later test starts would inherit it, and
    # run one thread where n_jobs is None or -1
    found = dict(os.environ)
    yield
    os.environ.clear()
    os.environ.update(found)
