"""The kernel perceptron's products give the same bits on every level of
vector instructions the processor runs (src/simd.h): none (rows in C
order), AVX2 and AVX-512F, each forced by SKPERC_DISABLE_CPU_FEATURES in a
process of its own, where the loop of columns and the budgeted loop run at
that level."""

import os
import subprocess
import sys
import warnings

import pytest

from skperc._kernel_perceptron_fast import SIMD, _highest_simd

LEVELS = ["none", "AVX2", "AVX512F"]
# the value of SKPERC_DISABLE_CPU_FEATURES that keeps each level the highest
DISABLE = {"none": "AVX2", "AVX2": "AVX512F", "AVX512F": ""}

# Every path of the products: rows in panels (under HELD_MIN_BYTES, float64
# and float32), held updates on rows in C order (over it, float64 and
# float32), the budgeted loop and the substitutions of its averaging epoch,
# over dense rows and over the stored features of CSR
# ones, the products of early stopping's validation part and
# of margin_ (more than 2,000 examples), the RBF, polynomial and cosine
# kernels (the cosine's with points of zeros, whose values are replaced).
FITS = r"""
import hashlib
import numpy as np
import scipy.sparse as sp
from sklearn.datasets import make_classification
from skperc import KernelPerceptron
from skperc._kernel_perceptron import _COMPILED_KERNELS
from skperc._kernel_budget_fast import SIMD_LEVEL
from skperc._kernel_perceptron_fast import SIMD, kernel_products, squared_norms

digest = hashlib.sha256()
small, y_small = make_classification(600, 20, flip_y=0.05, random_state=0)
large, y_large = make_classification(6000, 100, flip_y=0.05, random_state=1)
# CSR rows, most of whose features are 0
sparse = sp.csr_matrix(np.where(np.abs(small) < 1.0, 0.0, small))
for X, y, options in [
    (small, y_small, {}),
    (small.astype(np.float32), y_small, {}),
    (small, y_small, {"kernel": "poly", "degree": 2}),
    (small, y_small, {"budget": 40}),
    (small, y_small, {"budget": 40, "average": True, "early_stopping": False}),
    (large[:3000], y_large[:3000], {"max_iter": 3}),
    (large.astype(np.float32), y_large, {"max_iter": 2}),
    (large[:3000], y_large[:3000], {"budget": 100, "max_iter": 3}),
    (sparse, y_small, {"budget": 40}),
    (sparse, y_small, {"budget": 40, "budget_strategy": "project"}),
    (small, y_small, {"kernel": "cosine"}),
    (sparse, y_small, {"kernel": "cosine", "budget": 40}),
]:
    clf = KernelPerceptron(random_state=0, **options).fit(X, y)
    scores = clf.validation_scores_
    # the loop's own decision values and averaging sums at the support
    # vectors: every product of every column added, held or not
    vectors = sp.csr_matrix(clf.support_vectors_).toarray()
    for values in (clf.dual_coef_, vectors, clf.margin_, clf._run.f,
                   clf._run.g, [] if scores is None else scores):
        digest.update(np.ascontiguousarray(values, dtype=np.float64).tobytes())
    digest.update(str(clf.n_updates_).encode())

# every value of the products of early stopping and margin_, bit for bit,
# dense and CSR rows, and of a prediction of a few rows (a row at a time)
rng = np.random.default_rng(0)
rows = rng.standard_normal((700, 30))
rows[::50] = 0.0
support = rows[rng.choice(700, 90, replace=False)]
coef = rng.standard_normal((2, 90))
for kind in ("rbf", "poly", "cosine"):
    spec = dict(kind=_COMPILED_KERNELS[kind], gamma=0.05, coef0=1.0, degree=3)
    sparse_rows = sp.csr_matrix(np.where(np.abs(rows) < 1.0, 0.0, rows))
    for X in (rows, rows.astype(np.float32), rows[:3], sparse_rows,
              sparse_rows[:3]):
        for vectors in (support, support.astype(np.float32),
                        sp.csr_matrix(support)):
            values = kernel_products(X, squared_norms(X), vectors,
                                     squared_norms(support), spec, coef)
            digest.update(values.tobytes())
print(SIMD, SIMD_LEVEL, digest.hexdigest())
"""


def _fits_at(level):
    env = dict(os.environ, SKPERC_DISABLE_CPU_FEATURES=DISABLE[level])
    done = subprocess.run(
        [sys.executable, "-c", FITS], env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    ran, ran_budgeted, digest = done.stdout.split()
    assert ran == LEVELS[int(ran_budgeted)] == level
    return digest


def test_every_level_gives_the_same_bits():
    levels = LEVELS[: LEVELS.index(SIMD) + 1]
    if len(levels) == 1:
        pytest.skip(
            "one level only: the processor has no vector level, or "
            "SKPERC_DISABLE_CPU_FEATURES turned them off"
        )
    digests = {level: _fits_at(level) for level in levels}
    assert len(set(digests.values())) == 1, digests


@pytest.mark.parametrize(
    "disabled, highest",
    [
        ("", "AVX512F"),
        ("avx512f", "AVX2"),
        ("AVX2", "none"),
        ("AVX512F, AVX2", "none"),
    ],
)
def test_disabled_features_cap_the_level(disabled, highest):
    assert LEVELS[_highest_simd(disabled)] == highest


def test_an_unknown_feature_warns():
    with pytest.warns(RuntimeWarning, match="SSE9 unknown"):
        assert LEVELS[_highest_simd("sse9 avx512f")] == "AVX2"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _highest_simd("AVX2")


# One kernel value that is not finite, between row 0 (the first example
# visited, whose column the loop computes first) and row p: at the front of
# the column, in the lanes of a vector and in the tail that no vector holds
# (300 rows), where src/columns.h checks the column at each level.
POSITIONS = [1, 2, 7, 8, 9, 150, 296, 299]
NOT_FINITE = r"""
import numpy as np
from skperc import KernelPerceptron

def kernel(x, z):
    if {x[2], z[2]} == {0.0, P}:
        return VALUE
    return float(x[:2] @ z[:2]) + 1.0

rng = np.random.default_rng(0)
X = np.column_stack([rng.standard_normal((300, 2)), np.arange(300.0)])
y = np.arange(300) % 2
for P in POSITIONS:
    for VALUE in (np.inf, np.nan):
        try:
            KernelPerceptron(kernel=kernel, shuffle=False).fit(X, y)
        except ValueError as error:
            message = str(error)
        else:
            message = "fitted"
        # found in the first column: its first update is the one counted
        if message.startswith("The kernel values overflowed") and (
            "1 updates counted" in message
        ):
            message = "overflow at the first update"
        elif message.startswith("The kernel values") and "are NaN" in message:
            message = "NaN"
        print(P, VALUE, message)
"""


@pytest.mark.parametrize("level", LEVELS)
def test_every_level_finds_a_value_that_is_not_finite_anywhere_in_a_column(level):
    if LEVELS.index(level) > LEVELS.index(SIMD):
        pytest.skip(f"the processor does not run {level}")
    env = dict(os.environ, SKPERC_DISABLE_CPU_FEATURES=DISABLE[level])
    script = NOT_FINITE.replace("POSITIONS", repr(POSITIONS))
    done = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    expected = [
        f"{p} {value} {'overflow at the first update' if value == 'inf' else 'NaN'}"
        for p in POSITIONS
        for value in ("inf", "nan")
    ]
    assert done.stdout.split("\n")[:-1] == expected
